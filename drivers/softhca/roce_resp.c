// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The RC and UC responder on the wire: packets in PSN order.
 *
 * A packet with the expected PSN (ePSN) is executed: a packet of a SEND
 * or WRITE is a segment for the responder (resp.c), which keeps what a
 * message needs between its segments (the receive WQE, the WRITE's
 * target, the bytes placed) and places and completes them as it does
 * loopback's whole messages; an atomic is loopback's too.  This file
 * keeps the packets in order and answers them.  On RC:
 *  - a packet beyond ePSN means some were lost: one PSN sequence NAK
 *    asks the requester to resend from ePSN, and the packets until then
 *    are dropped;
 *  - a packet before ePSN is a duplicate: a SEND or WRITE is not done
 *    again but acknowledged again, AckReq or not (the requester resends
 *    for want of an ACK, and the packet that asked may be lost again); a
 *    READ or atomic is answered again only if the responder remembers it
 *    (its responder resources): a READ from the memory again, from the
 *    duplicate's PSN to its end; an atomic with the result it had, never
 *    executed twice;
 *  - a READ is answered across runs of the engine, a budget of bytes per
 *    run (roce_rx.c), so that no run (and no control verb waiting for
 *    engine_lock) waits for 2 GiB of responses, and none reschedules
 *    (a run may be the receive softirq's), and at the netdev's pace, as the
 *    requester sends (roce_tx.c); the packets after it wait their turn;
 *  - a message with no receive WQE for it is RNR NAKed, with ePSN kept;
 *  - a refused request (opcode sequence, length, key, access) is NAKed
 *    and the QP goes to the error state, as resp.c has it;
 *  - acknowledgments the requester asked for are coalesced: one ACK per
 *    run of the engine, for the last PSN executed, sent before anything
 *    else the responder sends (READ responses, atomic acknowledgments
 *    and NAKs acknowledge the PSNs before theirs).
 * UC has no acknowledgments: a gap abandons the message in progress,
 * and anything refused is dropped.
 *
 * Context: the QP's engine (roce_rx.c): its work, under engine_lock, or
 * the receive softirq, under run_lock; nothing here sleeps.
 */

#include <linux/bitfield.h>

#include "dev.h"
#include "qp.h"
#include "roce.h"

/* What became of a packet with the expected PSN. */
enum shca_rr {
	SHCA_RR_DONE,		/* executed: ePSN moved on */
	SHCA_RR_RNR,		/* no receive WQE: RNR NAK, ePSN kept */
	SHCA_RR_ERROR,		/* refused on RC: NAK with the msg's status */
	SHCA_RR_DROP,		/* dropped (UC) */
};

static const u8 shca_read_resp_ops[] = {
	[SHCA_POS_FIRST] = SHCA_OPCODE(RC, RDMA_READ_RESPONSE_FIRST),
	[SHCA_POS_MIDDLE] = SHCA_OPCODE(RC, RDMA_READ_RESPONSE_MIDDLE),
	[SHCA_POS_LAST] = SHCA_OPCODE(RC, RDMA_READ_RESPONSE_LAST),
	[SHCA_POS_ONLY] = SHCA_OPCODE(RC, RDMA_READ_RESPONSE_ONLY),
};

static bool shca_pos_first(enum shca_pos pos)
{
	return pos == SHCA_POS_FIRST || pos == SHCA_POS_ONLY;
}

static bool shca_pos_last(enum shca_pos pos)
{
	return pos == SHCA_POS_LAST || pos == SHCA_POS_ONLY;
}

/* The work request a request opcode carries out. */
static u8 shca_rr_wr_opcode(u8 opcode)
{
	switch (opcode & ~SHCA_OPCODE_TRANSPORT) {
	case SHCA_OP_SEND_LAST_WITH_IMMEDIATE:
	case SHCA_OP_SEND_ONLY_WITH_IMMEDIATE:
		return IB_WR_SEND_WITH_IMM;
	case SHCA_OP_SEND_LAST_WITH_INVALIDATE:
	case SHCA_OP_SEND_ONLY_WITH_INVALIDATE:
		return IB_WR_SEND_WITH_INV;
	case SHCA_OP_RDMA_WRITE_FIRST:
	case SHCA_OP_RDMA_WRITE_MIDDLE:
	case SHCA_OP_RDMA_WRITE_LAST:
	case SHCA_OP_RDMA_WRITE_ONLY:
		return IB_WR_RDMA_WRITE;
	case SHCA_OP_RDMA_WRITE_LAST_WITH_IMMEDIATE:
	case SHCA_OP_RDMA_WRITE_ONLY_WITH_IMMEDIATE:
		return IB_WR_RDMA_WRITE_WITH_IMM;
	case SHCA_OP_RDMA_READ_REQUEST:
		return IB_WR_RDMA_READ;
	case SHCA_OP_COMPARE_SWAP:
		return IB_WR_ATOMIC_CMP_AND_SWP;
	case SHCA_OP_FETCH_ADD:
		return IB_WR_ATOMIC_FETCH_AND_ADD;
	case SHCA_OP_ATOMIC_WRITE:
		return SHCA_WR_ATOMIC_WRITE;
	case SHCA_OP_FLUSH:
		return SHCA_WR_FLUSH;
	default:
		return IB_WR_SEND;
	}
}

/* The packet as a message, for resp.c; its payload is @payload. */
static void shca_rr_msg(struct shca_qp *qp, const struct shca_pkt *pkt,
			struct shca_sgl *payload, struct shca_msg *msg)
{
	u8 op = shca_rr_wr_opcode(pkt->opcode);
	bool atomic = op == IB_WR_ATOMIC_CMP_AND_SWP ||
		      op == IB_WR_ATOMIC_FETCH_AND_ADD;

	*msg = (struct shca_msg){
		.qp_type = qp->ibqp.qp_type,
		.opcode = op,
		.flags = pkt->se ? SOFTHCA_WQE_SOLICITED : 0,
		.ex = op == IB_WR_SEND_WITH_INV ? pkt->inv_rkey :
		      (__force u32)cpu_to_be32(pkt->imm),
		.len = pkt->paylen,
		.payload = payload,
		.remote = {
			.addr = pkt->va,
			.length = atomic ? sizeof(u64) : pkt->dma_len,
			.lkey = pkt->rkey,
		},
		.compare_add = op == IB_WR_ATOMIC_CMP_AND_SWP ? pkt->compare :
			       pkt->swap_add,
		.swap = pkt->swap_add,
		.plt = pkt->plt,
		.sel = pkt->sel,
		.src_qpn = READ_ONCE(qp->attr.dest_qp_num),
		.dest_qpn = qp->ibqp.qp_num,
		.av = &qp->av,
	};
}

static void shca_rr_send_aeth(struct shca_qp *qp, u8 syndrome, u32 psn)
{
	struct shca_pkt pkt = {
		.opcode = SHCA_OPCODE(RC, ACKNOWLEDGE),
		.pkey = SHCA_DEFAULT_PKEY,
		.dqpn = READ_ONCE(qp->attr.dest_qp_num),
		.psn = psn,
		.syndrome = syndrome,
		.msn = qp->roce->resp.msn,
	};

	shca_roce_xmit(qp, &qp->av, &pkt, NULL);
}

/**
 * shca_roce_resp_ack() - send the acknowledgment owed, if any
 * @qp: the responder
 *
 * Context: the QP's engine, at the end of a run of its packets.
 */
void shca_roce_resp_ack(struct shca_qp *qp)
{
	struct shca_wire_resp *rs = &qp->roce->resp;

	if (!rs->ack_due)
		return;
	rs->ack_due = false;
	shca_rr_send_aeth(qp, FIELD_PREP(SHCA_AETH_TYPE, SHCA_AETH_ACK) |
			  SHCA_AETH_NO_CREDIT,
			  shca_psn_add(qp->resp.epsn, SHCA_BTH_PSN));
}

/* A NAK for @psn also acknowledges the PSNs before it. */
static void shca_rr_nak(struct shca_qp *qp, enum shca_aeth_type type,
			u8 value, u32 psn)
{
	qp->roce->resp.ack_due = false;
	shca_rr_send_aeth(qp, FIELD_PREP(SHCA_AETH_TYPE, type) | value, psn);
}

static u8 shca_rr_nak_code(enum ib_wc_status status)
{
	switch (status) {
	case IB_WC_REM_INV_REQ_ERR:
		return SHCA_NAK_INV_REQ;
	case IB_WC_REM_ACCESS_ERR:
		return SHCA_NAK_REM_ACCESS;
	default:
		return SHCA_NAK_REM_OP;
	}
}

/* Moves ePSN past @n PSNs of @pkt; @last: its message is done. */
static enum shca_rr shca_rr_done(struct shca_qp *qp,
				 const struct shca_pkt *pkt, u32 n, bool last)
{
	struct shca_wire_resp *rs = &qp->roce->resp;

	WRITE_ONCE(qp->resp.epsn, shca_psn_add(qp->resp.epsn, n));
	if (last)
		rs->msn = (rs->msn + 1) & SHCA_AETH_MSN;
	if (pkt->ackreq && qp->ibqp.qp_type == IB_QPT_RC)
		rs->ack_due = true;
	return SHCA_RR_DONE;
}

/*
 * What the responder (resp.c) made of a message it did not execute: RNR,
 * refused (RC: NAKed with the message's status), or dropped.
 */
static enum shca_rr shca_rr_tx(enum shca_tx tx)
{
	if (tx == SHCA_TX_RNR)
		return SHCA_RR_RNR;
	return tx == SHCA_TX_DONE ? SHCA_RR_ERROR : SHCA_RR_DROP;
}

/* A refused request ends the message in progress. */
static enum shca_rr shca_rr_refuse(struct shca_qp *qp, struct shca_msg *msg,
				   enum ib_wc_status status, bool event)
{
	qp->resp.msg = SHCA_RESP_MSG_NONE;
	return shca_rr_tx(shca_resp_refuse(qp, msg, status, event));
}

/* A packet of a SEND or a WRITE: a segment for the responder. */
static enum shca_rr shca_rr_segment(struct shca_qp *qp,
				    const struct shca_pkt *pkt,
				    enum shca_pos pos, struct shca_msg *msg)
{
	bool last = shca_pos_last(pos);
	enum shca_tx tx;

	tx = shca_resp_segment(qp, msg, shca_pos_first(pos), last);
	if (tx != SHCA_TX_DONE || msg->status != IB_WC_SUCCESS)
		return shca_rr_tx(tx);
	return shca_rr_done(qp, pkt, 1, last);
}

/* The responder resources kept: the QP's max_dest_rd_atomic, at least one. */
static unsigned int shca_rr_res_count(struct shca_qp *qp)
{
	return clamp_t(unsigned int, READ_ONCE(qp->attr.max_dest_rd_atomic),
		       1, SHCA_MAX_RD_ATOMIC);
}

/* A READ or atomic executed: it takes the oldest resource's place. */
static struct shca_wire_res *shca_rr_res_take(struct shca_qp *qp, u8 kind,
					      u32 psn, u32 npsn)
{
	struct shca_wire_resp *rs = &qp->roce->resp;
	struct shca_wire_res *res;

	res = &rs->res[rs->res_next++ % shca_rr_res_count(qp)];
	*res = (struct shca_wire_res){
		.kind = kind,
		.psn = psn,
		.npsn = npsn,
	};
	return res;
}

/* The remembered READ or atomic one of whose PSNs @psn is, if any. */
static struct shca_wire_res *shca_rr_res_find(struct shca_qp *qp, u8 kind,
					      u32 psn)
{
	struct shca_wire_res *res;
	unsigned int i;
	s32 d;

	for (i = 0; i < shca_rr_res_count(qp); i++) {
		res = &qp->roce->resp.res[i];
		d = shca_psn_diff(psn, res->psn);
		if (res->kind == kind && d >= 0 && (u32)d < res->npsn)
			return res;
	}
	return NULL;
}

/*
 * Starts answering a READ, @n responses of @range from PSN @psn, after
 * the acknowledgment owed: the responses acknowledge the PSNs before.
 */
static void shca_rr_read_start(struct shca_qp *qp, u32 psn, u32 n,
			       const struct softhca_sge *range)
{
	shca_roce_resp_ack(qp);
	qp->roce->resp.read = (struct shca_wire_read){
		.active = true,
		.psn = psn,
		.n = n,
		.range = *range,
	};
}

/*
 * A READ request with the expected PSN: checked, remembered, and answered
 * from the target memory by shca_roce_resp_read().
 */
static enum shca_rr shca_rr_read(struct shca_qp *qp,
				 const struct shca_pkt *pkt,
				 struct shca_msg *msg)
{
	u32 len = pkt->dma_len, n;
	struct shca_wire_res *res;
	struct shca_sgl target;
	int ret;

	/* The IBA's largest message: its PSNs stay within the window. */
	if (len > SZ_2G)
		return shca_rr_refuse(qp, msg, IB_WC_REM_INV_REQ_ERR, true);
	ret = shca_resp_target(qp, msg, &target, IB_ACCESS_REMOTE_READ);
	shca_sgl_release(&target);
	if (ret)
		return shca_rr_refuse(qp, msg, IB_WC_REM_ACCESS_ERR, true);
	n = len ? DIV_ROUND_UP(len, shca_qp_pmtu(qp)) : 1;
	res = shca_rr_res_take(qp, SHCA_WIRE_RES_READ, pkt->psn, n);
	res->read = msg->remote;
	shca_rr_read_start(qp, pkt->psn, n, &msg->remote);
	shca_rr_done(qp, pkt, n, true);
	qp->roce->resp.ack_due = false;
	return SHCA_RR_DONE;
}

/*
 * A duplicate READ is answered again if the responder remembers it, from
 * the duplicate's PSN to its end, as the requester asks for the rest of a
 * READ from the first response it lacks (IBA 9.7.5.1.2).  Anything else
 * (too old to be remembered, or other bytes) would be a new READ beyond
 * max_dest_rd_atomic, of any length: it is dropped, and counted.
 */
static void shca_rr_read_dup(struct shca_qp *qp, const struct shca_pkt *pkt)
{
	struct shca_wire_res *res;
	struct softhca_sge range;
	u32 i, off;

	res = shca_rr_res_find(qp, SHCA_WIRE_RES_READ, pkt->psn);
	if (!res)
		goto drop;
	i = shca_psn_diff(pkt->psn, res->psn);
	off = i * shca_qp_pmtu(qp);
	if (pkt->va != res->read.addr + off || pkt->rkey != res->read.lkey ||
	    pkt->dma_len != res->read.length - off)
		goto drop;
	range = (struct softhca_sge){
		.addr = pkt->va,
		.length = pkt->dma_len,
		.lkey = pkt->rkey,
	};
	shca_rr_read_start(qp, pkt->psn, res->npsn - i, &range);
	qp->roce->resp.ack_due = false;
	return;

drop:
	ibdev_dbg_ratelimited(qp->ibqp.device,
			      "QP %u: duplicate READ %#x not remembered\n",
			      qp->ibqp.qp_num, pkt->psn);
	shca_count_drop(to_shca_dev(qp->ibqp.device), SHCA_DROP_DUP_READ);
}

/*
 * Sends READ responses until the READ is answered, @budget is spent or
 * the netdev's pace holds them back.  Return: what stopped it.
 */
static enum shca_rr_read shca_rr_read_send(struct shca_qp *qp,
					   struct shca_sgl *target,
					   u32 *budget)
{
	struct shca_wire_read *rd = &qp->roce->resp.read;
	u32 pmtu = shca_qp_pmtu(qp);
	struct shca_pkt resp = {
		.pkey = SHCA_DEFAULT_PKEY,
		.dqpn = READ_ONCE(qp->attr.dest_qp_num),
		.syndrome = FIELD_PREP(SHCA_AETH_TYPE, SHCA_AETH_ACK) |
			    SHCA_AETH_NO_CREDIT,
		.msn = qp->roce->resp.msn,
	};

	for (; rd->sent < rd->n; rd->sent++) {
		if (shca_roce_tx_hold(qp))
			return SHCA_RR_READ_HELD;
		if (!*budget)
			return SHCA_RR_READ_MORE;
		resp.opcode = shca_read_resp_ops[shca_pkt_pos(rd->sent, rd->n)];
		resp.psn = shca_psn_add(rd->psn, rd->sent);
		resp.paylen = min(pmtu, rd->range.length - rd->sent * pmtu);
		/* What is not sent, the requester asks for again. */
		if (shca_roce_xmit(qp, &qp->av, &resp, target))
			break;
		*budget -= min(*budget, resp.paylen);
	}
	rd->active = false;
	return SHCA_RR_READ_DONE;
}

/*
 * Answers the READ in progress from its memory, checked again at each
 * run: a key invalidated meanwhile ends the answer.
 */
static enum shca_rr_read shca_rr_read_answer(struct shca_qp *qp,
					     u32 *budget)
{
	struct shca_wire_read *rd = &qp->roce->resp.read;
	struct shca_msg msg = { .remote = rd->range };
	enum shca_rr_read ret = SHCA_RR_READ_DONE;
	struct shca_sgl target;

	if (shca_resp_target(qp, &msg, &target, IB_ACCESS_REMOTE_READ)) {
		rd->active = false;
	} else {
		shca_sgl_skip(&target, rd->sent * shca_qp_pmtu(qp));
		ret = shca_rr_read_send(qp, &target, budget);
	}
	shca_sgl_release(&target);
	return ret;
}

/**
 * shca_roce_resp_read() - go on answering the READ in progress, if any
 * @qp: the responder
 * @budget: the bytes this run of the engine may still send; decreased
 *
 * A QP that left the states that answer (to ERR, or RESET) sends no more
 * of it; the requester's retry is a duplicate, answered if remembered.
 *
 * Context: the QP's engine, under engine_lock.
 * Return: SHCA_RR_READ_DONE when no READ is left to answer: the next
 * packet may run; SHCA_RR_READ_MORE when the budget ran out first;
 * SHCA_RR_READ_HELD when the netdev's pace stopped it, to go on at the
 * kick from the packets' frees.
 */
enum shca_rr_read shca_roce_resp_read(struct shca_qp *qp, u32 *budget)
{
	enum ib_qp_state state = READ_ONCE(qp->state);
	struct shca_wire_read *rd = &qp->roce->resp.read;

	if (!rd->active)
		return SHCA_RR_READ_DONE;
	if (state >= IB_QPS_RTR && state <= IB_QPS_SQE)
		return shca_rr_read_answer(qp, budget);
	rd->active = false;
	return SHCA_RR_READ_DONE;
}

/*
 * An atomic's answer, its original value in an ATOMIC ACKNOWLEDGE; an
 * ATOMIC WRITE's or a FLUSH's, a READ response with no data (IBA 1.5, as
 * rdma_rxe answers them too).
 */
static void shca_rr_atomic_ack(struct shca_qp *qp,
			       const struct shca_wire_res *res)
{
	bool write = res->kind != SHCA_WIRE_RES_ATOMIC;
	struct shca_pkt pkt = {
		.opcode = write ? SHCA_OPCODE(RC, RDMA_READ_RESPONSE_ONLY) :
				  SHCA_OPCODE(RC, ATOMIC_ACKNOWLEDGE),
		.pkey = SHCA_DEFAULT_PKEY,
		.dqpn = READ_ONCE(qp->attr.dest_qp_num),
		.psn = res->psn,
		.syndrome = FIELD_PREP(SHCA_AETH_TYPE, SHCA_AETH_ACK) |
			    SHCA_AETH_NO_CREDIT,
		.msn = qp->roce->resp.msn,
		.orig = res->orig,
	};

	shca_roce_resp_ack(qp);
	shca_roce_xmit(qp, &qp->av, &pkt, NULL);
}

/* The responder resource an atomic, ATOMIC WRITE or FLUSH takes. */
static u8 shca_rr_res_kind(u8 wr_opcode)
{
	switch (wr_opcode) {
	case SHCA_WR_ATOMIC_WRITE:
		return SHCA_WIRE_RES_ATOMIC_WRITE;
	case SHCA_WR_FLUSH:
		return SHCA_WIRE_RES_FLUSH;
	default:
		return SHCA_WIRE_RES_ATOMIC;
	}
}

/*
 * An atomic, an ATOMIC WRITE (its 8 bytes whole) or a FLUSH, executed,
 * takes a responder resource (as rdma_rxe's ATOMIC WRITE and FLUSH do
 * too), so that a duplicate is answered, never executed again.
 */
static enum shca_rr shca_rr_atomic(struct shca_qp *qp,
				   const struct shca_pkt *pkt,
				   struct shca_msg *msg)
{
	struct shca_wire_resp *rs = &qp->roce->resp;
	struct shca_wire_res *res;

	if (shca_resp_execute(qp, msg) != SHCA_TX_DONE)
		return SHCA_RR_DROP;
	if (msg->status != IB_WC_SUCCESS)
		return SHCA_RR_ERROR;
	res = shca_rr_res_take(qp, shca_rr_res_kind(msg->opcode), pkt->psn, 1);
	res->orig = msg->atomic_orig;
	/* What is owed first; then the MSN counts the atomic, as it answers. */
	shca_roce_resp_ack(qp);
	shca_rr_done(qp, pkt, 1, true);
	rs->ack_due = false;
	shca_rr_atomic_ack(qp, res);
	return SHCA_RR_DONE;
}

/* A packet before ePSN, on RC: answered again, never executed again. */
static void shca_rr_duplicate(struct shca_qp *qp, const struct shca_pkt *pkt)
{
	struct shca_wire_res *res;
	u8 kind;

	switch (shca_rr_wr_opcode(pkt->opcode)) {
	case IB_WR_RDMA_READ:
		shca_rr_read_dup(qp, pkt);
		return;
	case IB_WR_ATOMIC_CMP_AND_SWP:
	case IB_WR_ATOMIC_FETCH_AND_ADD:
	case SHCA_WR_ATOMIC_WRITE:
	case SHCA_WR_FLUSH:
		kind = shca_rr_res_kind(shca_rr_wr_opcode(pkt->opcode));
		break;
	default:
		qp->roce->resp.ack_due = true;
		return;
	}
	/* One too old to be remembered is not answered. */
	res = shca_rr_res_find(qp, kind, pkt->psn);
	if (res) {
		shca_rr_atomic_ack(qp, res);
		return;
	}
	ibdev_dbg_ratelimited(qp->ibqp.device,
			      "QP %u: duplicate atomic %#x not remembered\n",
			      qp->ibqp.qp_num, pkt->psn);
	shca_count_drop(to_shca_dev(qp->ibqp.device), SHCA_DROP_DUP_ATOMIC);
}

/* A packet with the expected PSN. */
static enum shca_rr shca_rr_execute(struct shca_qp *qp,
				    const struct shca_pkt *pkt,
				    struct shca_msg *msg)
{
	enum shca_pos pos = shca_opcode_lookup(pkt->opcode)->pos;
	enum shca_resp_msg class = shca_resp_class(msg->opcode);
	struct shca_resp *rs = &qp->resp;
	bool more = !shca_pos_first(pos);
	bool busy = rs->msg != SHCA_RESP_MSG_NONE;
	u32 pmtu = shca_qp_pmtu(qp);

	/* A message in progress goes on; otherwise, one starts. */
	if (more != busy || (more && class != rs->msg)) {
		if (msg->qp_type == IB_QPT_RC || more)
			return shca_rr_refuse(qp, msg, IB_WC_REM_INV_REQ_ERR,
					      true);
		/* UC: the message in progress lost its last packets. */
		rs->msg = SHCA_RESP_MSG_NONE;
	}
	/* All but the last packet of a message are full. */
	if (pkt->paylen > pmtu ||
	    (!shca_pos_last(pos) && pkt->paylen != pmtu) ||
	    (pos == SHCA_POS_LAST && !pkt->paylen))
		return shca_rr_refuse(qp, msg, IB_WC_REM_INV_REQ_ERR, true);

	switch (msg->opcode) {
	case IB_WR_RDMA_READ:
		return shca_rr_read(qp, pkt, msg);
	case IB_WR_ATOMIC_CMP_AND_SWP:
	case IB_WR_ATOMIC_FETCH_AND_ADD:
	case SHCA_WR_ATOMIC_WRITE:
	case SHCA_WR_FLUSH:
		return shca_rr_atomic(qp, pkt, msg);
	}
	return shca_rr_segment(qp, pkt, pos, msg);
}

/**
 * shca_roce_resp_rx() - a request packet reached an RC or UC QP
 * @qp: the responder, connected to the packet's source
 * @pkt: the packet's headers, parsed and checked
 * @payload: a cursor over its payload
 *
 * Context: the QP's engine.
 * Return: false when the QP takes no requests (its state).
 */
bool shca_roce_resp_rx(struct shca_qp *qp, const struct shca_pkt *pkt,
		       struct shca_sgl *payload)
{
	struct shca_dev *dev = to_shca_dev(qp->ibqp.device);
	enum ib_qp_state state = READ_ONCE(qp->state);
	struct shca_wire_resp *rs = &qp->roce->resp;
	bool rc = qp->ibqp.qp_type == IB_QPT_RC;
	struct shca_msg msg;
	s32 d;

	if (state < IB_QPS_RTR || state > IB_QPS_SQE)
		return false;
	d = shca_psn_diff(pkt->psn, qp->resp.epsn);
	if (d < 0) {
		if (rc) {
			shca_count(dev, SHCA_CNT_DUPLICATE_REQUEST);
			shca_rr_duplicate(qp, pkt);
		}
		return true;
	}
	if (d > 0) {
		shca_count(dev, SHCA_CNT_OUT_OF_SEQUENCE);
		if (rc) {
			if (!rs->nak_sent)
				shca_rr_nak(qp, SHCA_AETH_NAK, SHCA_NAK_PSN_SEQ,
					    qp->resp.epsn);
			rs->nak_sent = true;
			return true;
		}
		/* UC: what the lost packets belonged to is lost. */
		qp->resp.msg = SHCA_RESP_MSG_NONE;
		WRITE_ONCE(qp->resp.epsn, pkt->psn);
	}
	rs->nak_sent = false;
	shca_rr_msg(qp, pkt, payload, &msg);
	switch (shca_rr_execute(qp, pkt, &msg)) {
	case SHCA_RR_RNR:
		shca_rr_nak(qp, SHCA_AETH_RNR_NAK,
			    READ_ONCE(qp->attr.min_rnr_timer), pkt->psn);
		break;
	case SHCA_RR_ERROR:
		shca_rr_nak(qp, SHCA_AETH_NAK, shca_rr_nak_code(msg.status),
			    pkt->psn);
		break;
	default:
		break;
	}
	return true;
}

/**
 * shca_roce_resp_reset() - a responder starts afresh
 * @qp: the QP, entering RESET or RTR, its epsn set
 *
 * Context: the QP's engine stopped, or its engine_lock held.
 */
void shca_roce_resp_reset(struct shca_qp *qp)
{
	struct shca_wire_resp *rs = &qp->roce->resp;
	struct shca_wire_res *res = rs->res;

	memset(rs, 0, sizeof(*rs));
	rs->res = res;
	if (res)
		memset(res, 0, SHCA_MAX_RD_ATOMIC * sizeof(*res));
}
