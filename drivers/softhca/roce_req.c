// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The RC and UC requester on the wire.
 *
 * A message is segmented to the path MTU and numbered from the QP's send
 * PSN: a SEND or WRITE takes a PSN per packet, a READ one per response
 * packet it asks for, an atomic one.  The last packet of an RC message
 * asks for an acknowledgment.  UC sends, and completes.
 *
 * RC keeps the WQE at the head of the send queue until it is answered
 * (one message in flight: a window of several is not kept yet).  Answers
 * are packets for the QP, which its engine executes before it runs the
 * send queue (shca_roce_req_rx()): they record a verdict and end the
 * engine's wait, and the engine's next run of the WQE acts on it
 * (shca_roce_req_send()):
 *  - an ACK of the last PSN, the last READ response or the atomic
 *    acknowledgment completes the WQE; an ACK short of the last PSN
 *    moves the first unacknowledged PSN (una) on;
 *  - a PSN sequence NAK, or a READ response beyond una, resends from
 *    una at once (go-back-N);
 *  - an RNR NAK waits its timer (the engine's RNR wait, with rnr_retry)
 *    and resends from the NAKed PSN;
 *  - the other NAKs complete the WQE with REM_INV_REQ_ERR,
 *    REM_ACCESS_ERR or REM_OP_ERR;
 *  - no answer within the local ACK timeout resends from una.
 * A resend for want of an answer counts against retry_cnt; progress
 * restores the count.  READ responses are placed in PSN order, at their
 * offset in the local SGEs; the rest of a READ is asked for again by a
 * READ request from una, for the remaining bytes.
 */

#include <linux/bitfield.h>

#include "dev.h"
#include "qp.h"
#include "roce.h"

/* A READ response kept for placement, in its skb's control block. */
struct shca_read_cb {
	u32 psn;
	u16 data;	/* the payload's offset from skb->data */
	u16 len;
};

/* READ responses kept before a run of the engine places them. */
#define SHCA_READ_RESPS_MAX 128

static_assert(sizeof(struct shca_read_cb) <=
	      sizeof_field(struct sk_buff, cb));

static struct shca_read_cb *shca_read_cb(struct sk_buff *skb)
{
	return (struct shca_read_cb *)skb->cb;
}

/* The opcode of each packet of a SEND or WRITE, by position. */
static const u8 shca_req_ops[][4] = {
	[IB_WR_SEND] = {
		SHCA_OP_SEND_FIRST, SHCA_OP_SEND_MIDDLE,
		SHCA_OP_SEND_LAST, SHCA_OP_SEND_ONLY,
	},
	[IB_WR_SEND_WITH_IMM] = {
		SHCA_OP_SEND_FIRST, SHCA_OP_SEND_MIDDLE,
		SHCA_OP_SEND_LAST_WITH_IMMEDIATE,
		SHCA_OP_SEND_ONLY_WITH_IMMEDIATE,
	},
	[IB_WR_SEND_WITH_INV] = {
		SHCA_OP_SEND_FIRST, SHCA_OP_SEND_MIDDLE,
		SHCA_OP_SEND_LAST_WITH_INVALIDATE,
		SHCA_OP_SEND_ONLY_WITH_INVALIDATE,
	},
	[IB_WR_RDMA_WRITE] = {
		SHCA_OP_RDMA_WRITE_FIRST, SHCA_OP_RDMA_WRITE_MIDDLE,
		SHCA_OP_RDMA_WRITE_LAST, SHCA_OP_RDMA_WRITE_ONLY,
	},
	[IB_WR_RDMA_WRITE_WITH_IMM] = {
		SHCA_OP_RDMA_WRITE_FIRST, SHCA_OP_RDMA_WRITE_MIDDLE,
		SHCA_OP_RDMA_WRITE_LAST_WITH_IMMEDIATE,
		SHCA_OP_RDMA_WRITE_ONLY_WITH_IMMEDIATE,
	},
};

static bool shca_req_atomic(u8 opcode)
{
	return opcode == IB_WR_ATOMIC_CMP_AND_SWP ||
	       opcode == IB_WR_ATOMIC_FETCH_AND_ADD;
}

/* What is left of a READ, from PSN @first + @i: one request. */
static int shca_req_read(struct shca_qp *qp, struct shca_msg *msg, u32 i)
{
	u32 off = i * shca_qp_pmtu(qp);
	struct shca_pkt pkt = {
		.opcode = SHCA_OPCODE(RC, RDMA_READ_REQUEST),
		.pkey = SHCA_DEFAULT_PKEY,
		.dqpn = msg->dest_qpn,
		.psn = shca_psn_add(qp->req.wire.first, i),
		.va = msg->remote.addr + off,
		.rkey = msg->remote.lkey,
		.dma_len = msg->len - off,
	};

	return shca_roce_xmit(qp, msg->av, &pkt, NULL);
}

static int shca_req_atomic_send(struct shca_qp *qp, struct shca_msg *msg)
{
	bool cas = msg->opcode == IB_WR_ATOMIC_CMP_AND_SWP;
	struct shca_pkt pkt = {
		.opcode = cas ? SHCA_OPCODE(RC, COMPARE_SWAP) :
				SHCA_OPCODE(RC, FETCH_ADD),
		.pkey = SHCA_DEFAULT_PKEY,
		.dqpn = msg->dest_qpn,
		.psn = qp->req.wire.first,
		.va = msg->remote.addr,
		.rkey = msg->remote.lkey,
		.swap_add = cas ? msg->swap : msg->compare_add,
		.compare = cas ? msg->compare_add : 0,
	};

	return shca_roce_xmit(qp, msg->av, &pkt, NULL);
}

/* A SEND or WRITE, from its packet @i on. */
static int shca_req_data(struct shca_qp *qp, struct shca_msg *msg, u32 i)
{
	u8 transport = qp->ibqp.qp_type == IB_QPT_UC ? SHCA_TRANSPORT_UC :
						       SHCA_TRANSPORT_RC;
	struct shca_wire_req *wr = &qp->req.wire;
	u32 pmtu = shca_qp_pmtu(qp), off = i * pmtu;
	struct shca_pkt pkt = {
		.pkey = SHCA_DEFAULT_PKEY,
		.dqpn = msg->dest_qpn,
		.va = msg->remote.addr,
		.rkey = msg->remote.lkey,
		.dma_len = msg->len,
		.imm = be32_to_cpu((__force __be32)msg->ex),
		.inv_rkey = msg->ex,
	};
	enum shca_pos pos;
	bool last;
	int ret;

	if (shca_sgl_skip(msg->payload, off))
		return -EFAULT;
	for (; i < wr->npsn; i++, off += pkt.paylen) {
		pos = shca_pkt_pos(i, wr->npsn);
		last = pos == SHCA_POS_LAST || pos == SHCA_POS_ONLY;
		pkt.opcode = transport | shca_req_ops[msg->opcode][pos];
		pkt.psn = shca_psn_add(wr->first, i);
		pkt.paylen = min(pmtu, msg->len - off);
		pkt.se = last && (msg->flags & SOFTHCA_WQE_SOLICITED);
		pkt.ackreq = last && transport == SHCA_TRANSPORT_RC;
		ret = shca_roce_xmit(qp, msg->av, &pkt, msg->payload);
		if (ret)
			return ret;
	}
	return 0;
}

/*
 * Sends the message from una on.  Return: 0, or -EFAULT when the local
 * memory went away; a packet not sent for want of memory is as lost.
 */
static int shca_req_transmit(struct shca_qp *qp, struct shca_msg *msg)
{
	struct shca_wire_req *wr = &qp->req.wire;
	u32 i = shca_psn_diff(wr->una, wr->first);
	int ret;

	if (msg->opcode == IB_WR_RDMA_READ)
		ret = shca_req_read(qp, msg, i);
	else if (shca_req_atomic(msg->opcode))
		ret = shca_req_atomic_send(qp, msg);
	else
		ret = shca_req_data(qp, msg, i);
	return ret == -EFAULT ? ret : 0;
}

/* The packets a (re)send from una takes. */
static u32 shca_req_npkts(const struct shca_wire_req *wr)
{
	if (wr->wr_opcode == IB_WR_RDMA_READ || shca_req_atomic(wr->wr_opcode))
		return 1;
	return wr->npsn - shca_psn_diff(wr->una, wr->first);
}

/* (Re)sends from una and waits for the answer. */
static enum shca_tx shca_req_resend(struct shca_qp *qp, struct shca_msg *msg)
{
	struct shca_wire_req *wr = &qp->req.wire;

	wr->verdict = SHCA_WIRE_NONE;
	wr->gap = false;
	if (!shca_req_transmit(qp, msg))
		return SHCA_TX_PENDING;
	wr->inflight = false;
	msg->status = IB_WC_LOC_PROT_ERR;
	return SHCA_TX_DONE;
}

static enum shca_tx shca_req_start(struct shca_qp *qp, struct shca_msg *msg)
{
	struct shca_wire_req *wr = &qp->req.wire;

	wr->first = qp->req.psn;
	wr->npsn = shca_msg_npsn(msg, shca_qp_pmtu(qp));
	wr->una = wr->first;
	wr->wr_opcode = msg->opcode;
	wr->len = msg->len;
	qp->req.psn = shca_psn_add(wr->first, wr->npsn);
	if (msg->qp_type == IB_QPT_UC) {
		msg->status = shca_req_transmit(qp, msg) ? IB_WC_LOC_PROT_ERR :
							   IB_WC_SUCCESS;
		return SHCA_TX_DONE;
	}
	wr->inflight = true;
	return shca_req_resend(qp, msg);
}

/* Places the READ responses received since the last run. */
static void shca_req_place(struct shca_qp *qp, struct shca_msg *msg)
{
	struct shca_wire_req *wr = &qp->req.wire;
	u32 pmtu = shca_qp_pmtu(qp), at = 0, off;
	struct shca_read_cb *cb;
	struct shca_sgl src;
	struct sk_buff *skb;

	while ((skb = __skb_dequeue(&wr->resps))) {
		cb = shca_read_cb(skb);
		off = shca_psn_diff(cb->psn, wr->first) * pmtu;
		shca_sgl_init_buf(&src, skb->data + cb->data, cb->len);
		if (shca_sgl_skip(msg->payload, off - at) ||
		    shca_sgl_copy(msg->payload, &src, cb->len)) {
			wr->verdict = SHCA_WIRE_ANSWERED;
			wr->status = IB_WC_LOC_PROT_ERR;
			__skb_queue_purge(&wr->resps);
		}
		at = off + cb->len;
		consume_skb(skb);
	}
}

/**
 * shca_roce_req_send() - send an RC or UC message, or act on its answer
 * @qp: the requester, whose send queue head @msg is
 * @msg: the message, built at each run from the engine's copy of the WQE
 *
 * Context: the engine.
 * Return: SHCA_TX_DONE with @msg->status (UC at once; RC once answered,
 * or out of retries), SHCA_TX_RNR with @msg->rnr_timer, or
 * SHCA_TX_PENDING: sent, the engine waits for the answer or the local
 * ACK timeout.
 */
enum shca_tx shca_roce_req_send(struct shca_qp *qp, struct shca_msg *msg)
{
	struct shca_wire_req *wr = &qp->req.wire;
	enum shca_counter why = SHCA_CNT_RESENT_SEQ;

	if (!wr->inflight)
		return shca_req_start(qp, msg);
	shca_req_place(qp, msg);
	switch (wr->verdict) {
	case SHCA_WIRE_ANSWERED:
		wr->inflight = false;
		msg->status = wr->status;
		msg->atomic_orig = wr->atomic_orig;
		return SHCA_TX_DONE;
	case SHCA_WIRE_RNR:
		wr->verdict = SHCA_WIRE_RNR_WAITED;
		msg->rnr_timer = wr->rnr_timer;
		return SHCA_TX_RNR;
	case SHCA_WIRE_PROGRESS:
		wr->verdict = SHCA_WIRE_NONE;
		return SHCA_TX_PENDING;
	case SHCA_WIRE_RNR_WAITED:
		why = SHCA_CNT_RESENT_RNR;
		break;
	default:
		/* Nothing came within the timeout, or a gap showed. */
		if (wr->verdict == SHCA_WIRE_NONE) {
			shca_count(to_shca_dev(qp->ibqp.device),
				   SHCA_CNT_LOCAL_ACK_TIMEOUT);
			why = SHCA_CNT_RESENT_TIMEOUT;
		}
		if (!qp->req.retry_left) {
			wr->inflight = false;
			msg->status = IB_WC_RETRY_EXC_ERR;
			return SHCA_TX_DONE;
		}
		qp->req.retry_left--;
		break;
	}
	/* The packets resent, counted by the cause. */
	shca_count_add(to_shca_dev(qp->ibqp.device), why, shca_req_npkts(wr));
	return shca_req_resend(qp, msg);
}

/*
 * Records what the wire said, unless something weightier already is,
 * and ends the engine's wait, so that its next run acts on it.
 */
static void shca_req_verdict(struct shca_qp *qp, enum shca_wire_verdict v)
{
	struct shca_wire_req *wr = &qp->req.wire;

	if (v <= wr->verdict)
		return;
	wr->verdict = v;
	if (READ_ONCE(qp->req.waiting)) {
		/* The engine's process context: the callback may run. */
		hrtimer_cancel(&qp->req.timer);
		WRITE_ONCE(qp->req.waiting, false);
	}
}

static void shca_req_answered(struct shca_qp *qp, enum ib_wc_status status)
{
	qp->req.wire.status = status;
	shca_req_verdict(qp, SHCA_WIRE_ANSWERED);
}

/* The first unacknowledged PSN moves on to @una: restore the retries. */
static void shca_req_progress(struct shca_qp *qp, u32 una)
{
	if (una == qp->req.wire.una)
		return;
	qp->req.wire.una = una;
	qp->req.wire.gap = false;
	qp->req.retry_left = READ_ONCE(qp->attr.retry_cnt);
}

static enum ib_wc_status shca_req_nak_status(u8 code)
{
	switch (code) {
	case SHCA_NAK_INV_REQ:
		return IB_WC_REM_INV_REQ_ERR;
	case SHCA_NAK_REM_ACCESS:
		return IB_WC_REM_ACCESS_ERR;
	default:
		return IB_WC_REM_OP_ERR;
	}
}

/* An ACKNOWLEDGE for a PSN of the WQE in flight. */
static void shca_req_aeth(struct shca_qp *qp, const struct shca_pkt *pkt,
			  u32 last)
{
	struct shca_wire_req *wr = &qp->req.wire;
	u8 value = FIELD_GET(SHCA_AETH_VALUE, pkt->syndrome);

	switch (FIELD_GET(SHCA_AETH_TYPE, pkt->syndrome)) {
	case SHCA_AETH_ACK:
		/* A READ or atomic is answered by its responses alone. */
		if (wr->wr_opcode == IB_WR_RDMA_READ ||
		    shca_req_atomic(wr->wr_opcode))
			return;
		if (pkt->psn == last)
			shca_req_answered(qp, IB_WC_SUCCESS);
		else
			shca_req_progress(qp, shca_psn_add(pkt->psn, 1));
		return;
	case SHCA_AETH_RNR_NAK:
		shca_req_progress(qp, pkt->psn);
		wr->rnr_timer = value;
		shca_req_verdict(qp, SHCA_WIRE_RNR);
		return;
	case SHCA_AETH_NAK:
		if (value != SHCA_NAK_PSN_SEQ) {
			shca_req_answered(qp, shca_req_nak_status(value));
			return;
		}
		shca_count(to_shca_dev(qp->ibqp.device), SHCA_CNT_SEQ_NAK_RCVD);
		shca_req_progress(qp, pkt->psn);
		shca_req_verdict(qp, SHCA_WIRE_RESEND);
		return;
	}
}

/* A READ response: kept for placement if it is the next one. */
static bool shca_req_read_resp(struct shca_qp *qp, struct sk_buff *skb,
			       const struct shca_pkt *pkt, const void *data)
{
	struct shca_wire_req *wr = &qp->req.wire;
	u8 pos = shca_opcode_lookup(pkt->opcode)->pos;
	u32 i = shca_psn_diff(pkt->psn, wr->first);
	u32 pmtu = shca_qp_pmtu(qp);
	bool last = i == wr->npsn - 1;
	struct shca_read_cb *cb;

	if (wr->wr_opcode != IB_WR_RDMA_READ)
		return false;
	/* Placed at each run, unless the QP stopped sending (SQD, ERR). */
	if (skb_queue_len(&wr->resps) >= SHCA_READ_RESPS_MAX)
		return false;
	if (pkt->psn != wr->una) {
		/* Those before una were placed; one beyond means a loss. */
		if (shca_psn_diff(pkt->psn, wr->una) > 0 && !wr->gap) {
			wr->gap = true;
			shca_req_verdict(qp, SHCA_WIRE_RESEND);
		}
		return false;
	}
	/* A resent request's responses start anew with FIRST or ONLY. */
	if (last != (pos == SHCA_POS_LAST || pos == SHCA_POS_ONLY) ||
	    pkt->paylen != min(pmtu, wr->len - i * pmtu)) {
		ibdev_dbg_ratelimited(qp->ibqp.device,
				      "QP %u: READ response %u of %u refused\n",
				      qp->ibqp.qp_num, i, wr->npsn);
		return false;
	}
	cb = shca_read_cb(skb);
	cb->psn = pkt->psn;
	cb->data = (const u8 *)data - skb->data;
	cb->len = pkt->paylen;
	__skb_queue_tail(&wr->resps, skb);
	shca_req_progress(qp, shca_psn_add(pkt->psn, 1));
	if (last)
		shca_req_answered(qp, IB_WC_SUCCESS);
	else
		shca_req_verdict(qp, SHCA_WIRE_PROGRESS);
	return true;
}

/**
 * shca_roce_req_rx() - an answer from the responder reached the requester
 * @qp: the requester
 * @skb: the packet, its data at the UDP header; consumed
 * @pkt: its headers, parsed and checked
 * @data: its payload, in @skb
 *
 * An answer for no PSN of the WQE in flight (an old one, a duplicate) is
 * dropped, and counted; so is anything short of the packet the requester
 * waits for.
 *
 * Context: the QP's engine.
 */
void shca_roce_req_rx(struct shca_qp *qp, struct sk_buff *skb,
		      const struct shca_pkt *pkt, const void *data)
{
	struct shca_wire_req *wr = &qp->req.wire;
	u32 last = shca_psn_add(wr->first, wr->npsn - 1);

	if (!wr->inflight || shca_psn_diff(pkt->psn, wr->una) < 0 ||
	    shca_psn_diff(pkt->psn, last) > 0) {
		ibdev_dbg_ratelimited(qp->ibqp.device,
				      "QP %u: answer %#x dropped: %s %#x-%#x, una %#x\n",
				      qp->ibqp.qp_num, pkt->psn,
				      wr->inflight ? "in flight" : "done with",
				      wr->first, last, wr->una);
		shca_count_drop(to_shca_dev(qp->ibqp.device), SHCA_DROP_STALE);
		goto consume;
	}
	switch (pkt->opcode) {
	case SHCA_OPCODE(RC, ACKNOWLEDGE):
		shca_req_aeth(qp, pkt, last);
		break;
	case SHCA_OPCODE(RC, ATOMIC_ACKNOWLEDGE):
		if (!shca_req_atomic(wr->wr_opcode))
			break;
		wr->atomic_orig = pkt->orig;
		shca_req_answered(qp, IB_WC_SUCCESS);
		break;
	default:
		if (shca_req_read_resp(qp, skb, pkt, data))
			return;
		break;
	}
consume:
	consume_skb(skb);
}

/*
 * The WQE in flight is done with (completed, flushed or reset): what was
 * kept for it goes.
 */
void shca_roce_req_reset(struct shca_qp *qp)
{
	qp->req.wire.inflight = false;
	__skb_queue_purge(&qp->req.wire.resps);
}
