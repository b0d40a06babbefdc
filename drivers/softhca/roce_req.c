// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The RC and UC requester on the wire.
 *
 * A message is segmented to the path MTU and numbered from the QP's send
 * PSN: a SEND or WRITE takes a PSN per packet, a READ one per response
 * packet it asks for, an atomic one.  The last packet of an RC message
 * asks for an acknowledgment, unless the engine sends another message
 * right behind it: a burst is acknowledged at its end (and every
 * SHCA_WIRE_ACK_EVERY PSNs), not per message.  IBA leaves that to the
 * requester; Mellanox's drivers set their HCAs to ask at least every 256
 * packets (mlx4's ack_req_freq).  A READ's or atomic's request asks for
 * nothing: its responses answer it.  UC sends, at the pace the layers
 * below take its packets (shca_roce_tx_hold(): a message may pause
 * between two of them, its WQE's copy kept), and completes once all of
 * it has left.
 *
 * RC keeps a window of messages in flight: the engine's WQEs it took
 * and has not completed (shca_req_ws()), in PSN order.  A message
 * joins it as the engine takes its WQE, while the window has a slot,
 * every message before it has left whole, the congestion window has
 * room, and, for a READ or atomic, fewer than max_rd_atomic are
 * outstanding; a fenced WQE waits for the READs and atomics before it.
 *
 * Packets leave while their PSN is within the congestion window (cwnd)
 * of the first unacknowledged one (una); a message larger than it is
 * sent over several runs, each pause asking for an ACK, as does every
 * SHCA_WIRE_ACK_EVERY-th PSN, so that ACKs clock the rest out.  A READ
 * larger than cwnd is asked for in parts, a request each, the next once
 * the responses to the last are in; a go-back asks for the rest of the
 * part in progress, as the responder remembers it.  cwnd opens by the PSNs
 * acknowledged up to ssthresh, then by one per window acknowledged, to
 * SHCA_WIRE_WINDOW_PSNS; a loss halves it, once per loss event (the
 * PSNs sent when it was seen), and a timeout closes it to
 * SHCA_WIRE_CWND_MIN.  So what go-back-N resends per loss stays about
 * what the path holds, not what the window or the message does.  Nor
 * does anything leave while SHCA_WIRE_TX_QUEUED of the QP's packets wait
 * below it (shca_roce_tx_hold(), roce_tx.c): the netdev paces the window.
 *
 * Answers are packets for the QP, which its engine executes before it
 * runs the send queue (shca_roce_req_rx()).  The responder answers in
 * PSN order, so an answer for a PSN acknowledges every SEND and WRITE
 * before it (coalesced and implied ACKs); READs and atomics are answered
 * only by their responses.  Then:
 *  - an ACK of a message's last PSN, its last READ response or its
 *    atomic acknowledgment answers it; an ACK short of its last PSN
 *    moves una on;
 *  - a PSN sequence NAK, or an answer beyond una (READ responses were
 *    lost), goes back to una and sends again from there (go-back-N); a
 *    NAK of the PSN already gone back to, until what was sent before
 *    the go-back is acknowledged, is the same loss, ignored;
 *  - an RNR NAK waits its timer (the engine's RNR wait, with rnr_retry)
 *    and goes back to the NAKed PSN; the sequence NAK a responder may
 *    send for the packets after the NAKed one can come after that wait
 *    (a short RNR timer), and is ignored as above;
 *  - the other NAKs answer the message with REM_INV_REQ_ERR,
 *    REM_ACCESS_ERR or REM_OP_ERR;
 *  - no progress within the local ACK timeout goes back to una.
 * A PSN sent once is timed until una passes it (one at a time, none sent
 * again: Karn's rule), for a smoothed round trip that the engine bases
 * its ACK timer on (shca_roce_req_rto()).
 * The engine's next run acts on what they said (shca_roce_req_act()),
 * and completes the answered messages in order.  A resend for want of an
 * answer counts against retry_cnt; progress, or an RNR NAK, restores the
 * count.  READ responses are placed in PSN order, at their offset in the
 * local SGEs; the rest of a READ is asked for again by a READ request
 * from una, for the remaining bytes.
 */

#include <linux/bitfield.h>

#include "dev.h"
#include "qp.h"
#include "roce.h"
#include "trace.h"

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

/*
 * The opcode of each packet of a SEND or WRITE, by position; an ATOMIC
 * WRITE's 8 bytes are one packet, its only, and so is a FLUSH, which has
 * none.
 */
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
	[SHCA_WR_FLUSH] = {
		[SHCA_POS_ONLY] = SHCA_OP_FLUSH,
	},
	[SHCA_WR_ATOMIC_WRITE] = {
		[SHCA_POS_ONLY] = SHCA_OP_ATOMIC_WRITE,
	},
};

static bool shca_req_atomic(u8 opcode)
{
	return opcode == IB_WR_ATOMIC_CMP_AND_SWP ||
	       opcode == IB_WR_ATOMIC_FETCH_AND_ADD;
}

/* READs and atomics are answered by responses, the rest by ACKs. */
static bool shca_req_responded_op(u8 opcode)
{
	return opcode == IB_WR_RDMA_READ || shca_req_atomic(opcode);
}

static bool shca_req_responded(const struct shca_wire_slot *ws)
{
	return shca_req_responded_op(ws->wr_opcode);
}

/* ATOMIC WRITE and FLUSH: one packet, answered by an empty READ response. */
static bool shca_req_placement_op(u8 opcode)
{
	return opcode == SHCA_WR_ATOMIC_WRITE || opcode == SHCA_WR_FLUSH;
}

/*
 * Those, READs and atomics take a responder resource each, which the
 * requester counts against max_rd_atomic until they are answered.
 */
static bool shca_req_rd_atomic_op(u8 opcode)
{
	return shca_req_responded_op(opcode) || shca_req_placement_op(opcode);
}

/* The PSN after @ws's last. */
static u32 shca_req_end(const struct shca_wire_slot *ws)
{
	return shca_psn_add(ws->first, ws->npsn);
}

/* A READ's PSNs @i to @ws->asked - 1: one request. */
static int shca_req_read(struct shca_qp *qp, struct shca_wire_slot *ws,
			 struct shca_msg *msg, u32 i)
{
	u32 pmtu = shca_qp_pmtu(qp), off = i * pmtu;
	struct shca_pkt pkt = {
		.opcode = SHCA_OPCODE(RC, RDMA_READ_REQUEST),
		.pkey = SHCA_DEFAULT_PKEY,
		.dqpn = msg->dest_qpn,
		.psn = shca_psn_add(ws->first, i),
		.va = msg->remote.addr + off,
		.rkey = msg->remote.lkey,
		.dma_len = min(msg->len, ws->asked * pmtu) - off,
	};

	return shca_roce_xmit(qp, msg->av, &pkt, NULL);
}

static int shca_req_atomic_send(struct shca_qp *qp, struct shca_wire_slot *ws,
				struct shca_msg *msg)
{
	bool cas = msg->opcode == IB_WR_ATOMIC_CMP_AND_SWP;
	struct shca_pkt pkt = {
		.opcode = cas ? SHCA_OPCODE(RC, COMPARE_SWAP) :
				SHCA_OPCODE(RC, FETCH_ADD),
		.pkey = SHCA_DEFAULT_PKEY,
		.dqpn = msg->dest_qpn,
		.psn = ws->first,
		.va = msg->remote.addr,
		.rkey = msg->remote.lkey,
		.swap_add = cas ? msg->swap : msg->compare_add,
		.compare = cas ? msg->compare_add : 0,
	};

	return shca_roce_xmit(qp, msg->av, &pkt, NULL);
}

/*
 * Does a SEND's or WRITE's packet, the last of its message or not (@last),
 * ask for an ACK?  It does when it is the packet before PSN @next and
 * @next is the congestion window's end (@stop) or a multiple of
 * SHCA_WIRE_ACK_EVERY, and when it ends a message that no other follows
 * right behind (shca_req_followed() in engine.c): a burst's messages are
 * acknowledged together.  ATOMIC WRITE and FLUSH always ask: their
 * answer is a response.
 */
static bool shca_req_ackreq(const struct shca_msg *msg, bool last, u32 next,
			    u32 stop)
{
	return (last && (!msg->followed ||
			 shca_req_placement_op(msg->opcode))) ||
	       next == stop || !(next % SHCA_WIRE_ACK_EVERY);
}

/*
 * A SEND or WRITE, from its packet @i on, before PSN @stop; the packets
 * shca_req_ackreq() names ask for an ACK, among them the last one sent.
 * Return: the packets sent, or -EFAULT.
 */
static int shca_req_data(struct shca_qp *qp, struct shca_wire_slot *ws,
			 struct shca_msg *msg, u32 i, u32 stop)
{
	u8 transport = qp->ibqp.qp_type == IB_QPT_UC ? SHCA_TRANSPORT_UC :
						       SHCA_TRANSPORT_RC;
	u32 pmtu = shca_qp_pmtu(qp), off = i * pmtu;
	struct shca_pkt pkt = {
		.pkey = SHCA_DEFAULT_PKEY,
		.dqpn = msg->dest_qpn,
		.va = msg->remote.addr,
		.rkey = msg->remote.lkey,
		.dma_len = msg->remote.length,
		.imm = be32_to_cpu((__force __be32)msg->ex),
		.inv_rkey = msg->ex,
		.plt = msg->plt,
		.sel = msg->sel,
	};
	u32 from = i;
	enum shca_pos pos;
	bool last;
	int ret;

	if (shca_sgl_skip(msg->payload, off))
		return -EFAULT;
	for (; i < ws->npsn; i++, off += pkt.paylen) {
		pkt.psn = shca_psn_add(ws->first, i);
		if (shca_psn_diff(pkt.psn, stop) >= 0 || shca_roce_tx_hold(qp))
			break;
		pos = shca_pkt_pos(i, ws->npsn);
		last = pos == SHCA_POS_LAST || pos == SHCA_POS_ONLY;
		pkt.opcode = transport | shca_req_ops[msg->opcode][pos];
		pkt.paylen = min(pmtu, msg->len - off);
		pkt.se = last && (msg->flags & SOFTHCA_WQE_SOLICITED);
		pkt.ackreq = transport == SHCA_TRANSPORT_RC &&
			     shca_req_ackreq(msg, last,
					     shca_psn_add(pkt.psn, 1), stop);
		ret = shca_roce_xmit(qp, msg->av, &pkt, msg->payload);
		if (ret == -EFAULT)
			return ret;
	}
	return i - from;
}

/*
 * Sends the message from its PSN @i on, before PSN @stop: a SEND or
 * WRITE its packets, a READ one request (a new part, up to @stop, or the
 * rest of the part asked for last), an atomic its request.  Return: the
 * packets sent, or -EFAULT when the local memory went away; a packet not
 * sent for want of memory is as lost.
 */
static int shca_req_transmit(struct shca_qp *qp, struct shca_wire_slot *ws,
			     struct shca_msg *msg, u32 i, u32 stop)
{
	int ret;

	if (!shca_req_responded(ws))
		return shca_req_data(qp, ws, msg, i, stop);
	if (msg->opcode == IB_WR_RDMA_READ) {
		if (i >= ws->asked)
			ws->asked = i + min_t(u32, ws->npsn - i,
					      shca_psn_diff(stop, ws->first) - i);
		ret = shca_req_read(qp, ws, msg, i);
	} else {
		ret = shca_req_atomic_send(qp, ws, msg);
	}
	return ret == -EFAULT ? ret : 1;
}

/* The PSN the congestion window ends at. */
static u32 shca_req_stop(const struct shca_wire_req *wr)
{
	return shca_psn_add(wr->una, wr->cwnd);
}

/*
 * Sends what the congestion window lets of @ws, from wr->nxt on.
 * Return: the packets sent, or -EFAULT.
 */
static int shca_req_push(struct shca_qp *qp, struct shca_wire_slot *ws,
			 struct shca_msg *msg)
{
	struct shca_wire_req *wr = &qp->roce->req;
	u32 i = shca_psn_diff(wr->nxt, ws->first), from = wr->nxt;
	u32 stop = shca_req_stop(wr), resent;
	bool asked;
	int n;

	n = shca_req_transmit(qp, ws, msg, i, stop);
	if (n <= 0)
		return n;
	if (ws->wr_opcode == IB_WR_RDMA_READ)
		wr->nxt = shca_psn_add(ws->first, ws->asked);
	else if (shca_req_responded(ws))
		wr->nxt = shca_req_end(ws);
	else
		wr->nxt = shca_psn_add(wr->nxt, n);
	/* What went below the highest PSN sent before is a resend. */
	resent = clamp(shca_psn_diff(wr->high, from), 0, n);
	if (shca_psn_diff(wr->nxt, wr->high) > 0)
		wr->high = wr->nxt;
	/*
	 * Sent for the first time: timed, unless a PSN is already.  A
	 * READ's request is answered by its first response, an atomic's by
	 * its acknowledgment, the others' last packet by an ACK, if it asked
	 * for one: else a later one would time the packets between too.
	 */
	asked = shca_req_responded(ws) ||
		shca_req_ackreq(msg, wr->nxt == shca_req_end(ws), wr->nxt,
				stop);
	if (!resent && !wr->timing && asked) {
		wr->timing = true;
		wr->timed_psn = ws->wr_opcode == IB_WR_RDMA_READ ? from :
				shca_psn_add(wr->nxt, SHCA_BTH_PSN);
		wr->timed_at = ktime_get();
	}
	return resent;
}

/* The message a WQE of the window answered: it completes in turn. */
static void shca_req_answer(struct shca_qp *qp, struct shca_wire_slot *ws,
			    enum ib_wc_status status)
{
	if (ws->answered)
		return;
	ws->answered = true;
	ws->status = status;
	if (shca_req_rd_atomic_op(ws->wr_opcode))
		qp->roce->req.rd_atomic--;
}

/*
 * Has the window room for @msg, the next message?  Every message before
 * it left whole, and the congestion window lets its first packet go.
 */
static bool shca_req_room(struct shca_qp *qp, const struct shca_msg *msg)
{
	struct shca_wire_req *wr = &qp->roce->req;
	u32 rd_max = max_t(u32, READ_ONCE(qp->attr.max_rd_atomic), 1);

	if (!qp->req.taken)
		return true;
	if ((msg->flags & SOFTHCA_WQE_FENCE) && wr->rd_atomic)
		return false;
	if (shca_req_rd_atomic_op(msg->opcode) && wr->rd_atomic >= rd_max)
		return false;
	return wr->nxt == qp->req.psn &&
	       shca_psn_diff(wr->nxt, wr->una) < wr->cwnd &&
	       !shca_roce_tx_hold(qp);
}

/*
 * Sends what the layers below take of a UC message @ws, from where the
 * last run paused.  Return: SHCA_TX_PAUSED while some of it is left, or
 * SHCA_TX_DONE with @msg->status once all of it has left.
 */
static enum shca_tx shca_req_uc(struct shca_qp *qp, struct shca_wire_slot *ws,
				struct shca_msg *msg)
{
	int n = shca_req_data(qp, ws, msg, ws->sent, shca_req_end(ws));

	if (n < 0) {
		msg->status = IB_WC_LOC_PROT_ERR;
		return SHCA_TX_DONE;
	}
	ws->sent += n;
	if (ws->sent < ws->npsn)
		return SHCA_TX_PAUSED;
	msg->status = IB_WC_SUCCESS;
	return SHCA_TX_DONE;
}

/**
 * shca_roce_req_send() - send a new RC or UC message
 * @qp: the requester
 * @msg: the message, from the engine's copy of the WQE; @msg->slot keeps
 *	its state: an RC message's in the window, a UC message's while it
 *	is sent
 *
 * Context: the engine.
 * Return: SHCA_TX_DONE with @msg->status (UC once all of it left; RC
 * when the local memory went away), SHCA_TX_PENDING (RC, sent: the
 * message is in the window until answered), SHCA_TX_PAUSED (UC, sent in
 * part: the engine calls again with its slot when the layers below have
 * room), or SHCA_TX_BLOCKED (not sent: the window has no room for it
 * yet, or the layers below hold the QP, shca_roce_tx_hold()).
 */
enum shca_tx shca_roce_req_send(struct shca_qp *qp, struct shca_msg *msg)
{
	struct shca_wire_req *wr = &qp->roce->req;
	struct shca_wire_slot *ws = msg->slot;
	bool uc = msg->qp_type == IB_QPT_UC;

	/* UC has no window: only the layers below hold it back. */
	if (uc && ws->npsn)
		return shca_req_uc(qp, ws, msg);
	if (uc ? shca_roce_tx_hold(qp) : !shca_req_room(qp, msg))
		return SHCA_TX_BLOCKED;
	*ws = (struct shca_wire_slot){
		.first = qp->req.psn,
		.npsn = shca_msg_npsn(msg, shca_qp_pmtu(qp)),
		.len = msg->len,
		.wr_opcode = msg->opcode,
	};
	qp->req.psn = shca_req_end(ws);
	if (uc)
		return shca_req_uc(qp, ws, msg);
	if (!qp->req.taken) {
		/* Everything before it was acknowledged. */
		wr->una = ws->first;
		wr->nxt = ws->first;
		wr->high = ws->first;
		wr->back_high = ws->first;
		wr->recover = ws->first;
	}
	if (shca_req_push(qp, ws, msg) < 0) {
		msg->status = IB_WC_LOC_PROT_ERR;
		return SHCA_TX_DONE;
	}
	if (shca_req_rd_atomic_op(ws->wr_opcode))
		wr->rd_atomic++;
	return SHCA_TX_PENDING;
}

/* Is @skb, a READ response kept for placement, one of @ws's? */
static bool shca_req_resp_of(const struct shca_wire_slot *ws,
			     struct sk_buff *skb)
{
	s32 d = shca_psn_diff(shca_read_cb(skb)->psn, ws->first);

	return d >= 0 && (u32)d < ws->npsn;
}

/* The first message of the window not answered: the one una is in. */
static struct shca_wire_slot *shca_req_una_slot(struct shca_qp *qp)
{
	struct shca_wire_slot *ws;
	u32 i;

	for (i = 0; i < qp->req.taken; i++) {
		ws = shca_req_ws(qp, i);
		if (!ws->answered)
			return ws;
	}
	return NULL;
}

/**
 * shca_roce_req_fail() - give up on a message of the window
 * @qp: the requester
 * @ws: the message; NULL for the first not answered
 * @status: its completion's status
 *
 * Context: the engine.
 */
void shca_roce_req_fail(struct shca_qp *qp, struct shca_wire_slot *ws,
			enum ib_wc_status status)
{
	struct sk_buff *skb, *next;

	if (!ws)
		ws = shca_req_una_slot(qp);
	if (!ws)
		return;
	shca_req_answer(qp, ws, status);
	/* Its READ responses, if any, have nowhere to go. */
	skb_queue_walk_safe(&qp->roce->req.resps, skb, next) {
		if (shca_req_resp_of(ws, skb)) {
			__skb_unlink(skb, &qp->roce->req.resps);
			consume_skb(skb);
		}
	}
}

/* The counter of the packets resent for a go-back's @cause. */
static enum shca_counter shca_req_resent_counter(u8 cause)
{
	switch (cause) {
	case SHCA_WIRE_RNR_WAITED:
		return SHCA_CNT_RESENT_RNR;
	case SHCA_WIRE_RESEND:
		return SHCA_CNT_RESENT_SEQ;
	default:
		return SHCA_CNT_RESENT_TIMEOUT;
	}
}

/*
 * Goes back to una, for @cause (enum shca_wire_verdict; SHCA_WIRE_NONE:
 * a timeout): the window's PSNs from there are sent again, as the
 * congestion window lets them.  A loss, the first since the last one's
 * PSNs were all acknowledged, halves the congestion window; a timeout
 * closes it; an RNR NAK says nothing of the path.  Each go-back is a
 * softhca_retransmit trace event.
 */
static void shca_req_go_back(struct shca_qp *qp, u8 cause)
{
	enum shca_counter resent = shca_req_resent_counter(cause);
	struct shca_wire_req *wr = &qp->roce->req;
	bool timeout = cause == SHCA_WIRE_NONE;
	u32 to = wr->nxt;

	wr->nxt = wr->una;
	wr->cause = cause;
	wr->back = wr->una;
	wr->back_high = wr->high;
	/* What is sent again times no round trip (Karn). */
	wr->timing = false;
	if (cause != SHCA_WIRE_RNR_WAITED) {
		if (timeout || shca_psn_diff(wr->una, wr->recover) >= 0) {
			wr->ssthresh = max_t(u32, wr->cwnd / 2,
					     SHCA_WIRE_CWND_MIN);
			wr->cwnd = timeout ? SHCA_WIRE_CWND_MIN : wr->ssthresh;
			wr->grown = 0;
			wr->recover = wr->high;
		}
	}
	trace_softhca_retransmit(qp->ibqp.device, qp->ibqp.qp_num, wr->una, to,
				 shca_counter_name(resent), wr->cwnd,
				 wr->ssthresh, qp->req.retry_left);
}

/* Opens the congestion window for @acked PSNs newly acknowledged. */
static void shca_req_open(struct shca_wire_req *wr, u32 acked)
{
	if (wr->cwnd < wr->ssthresh) {
		wr->cwnd += acked;
	} else {
		wr->grown += acked;
		if (wr->grown >= wr->cwnd) {
			wr->grown -= wr->cwnd;
			wr->cwnd++;
		}
	}
	wr->cwnd = min_t(u32, wr->cwnd, SHCA_WIRE_WINDOW_PSNS);
}

/**
 * shca_roce_req_act() - what the wire said of the window since the last run
 * @qp: the requester, with messages in its window
 * @expired: the local ACK timeout passed since the last run
 * @rnr_timer: set with SHCA_WIRE_ACT_RNR: the RNR NAK's timer code
 *
 * Context: the engine.
 * Return: SHCA_WIRE_ACT_LOST for a sequence NAK or a gap,
 * SHCA_WIRE_ACT_TIMEOUT for a timeout with a message not answered;
 * SHCA_WIRE_ACT_RNR for an RNR NAK, then
 * SHCA_WIRE_ACT_RESEND once the engine waited; else SHCA_WIRE_ACT_NONE.
 * shca_roce_req_resend() acts on the last of them.
 */
enum shca_wire_act shca_roce_req_act(struct shca_qp *qp, bool expired,
				     u8 *rnr_timer)
{
	struct shca_wire_req *wr = &qp->roce->req;
	u8 verdict = wr->verdict;

	wr->verdict = SHCA_WIRE_NONE;
	switch (verdict) {
	case SHCA_WIRE_RNR:
		wr->verdict = SHCA_WIRE_RNR_WAITED;
		*rnr_timer = wr->rnr_timer;
		return SHCA_WIRE_ACT_RNR;
	case SHCA_WIRE_RNR_WAITED:
		wr->cause = verdict;
		return SHCA_WIRE_ACT_RESEND;
	case SHCA_WIRE_RESEND:
		wr->cause = verdict;
		return SHCA_WIRE_ACT_LOST;
	default:
		/* Nothing came within the timeout. */
		if (!expired || !shca_req_una_slot(qp))
			return SHCA_WIRE_ACT_NONE;
		shca_count(to_shca_dev(qp->ibqp.device),
			   SHCA_CNT_LOCAL_ACK_TIMEOUT);
		wr->cause = SHCA_WIRE_NONE;
		return SHCA_WIRE_ACT_TIMEOUT;
	}
}

/**
 * shca_roce_req_resend() - go back to una, for what shca_roce_req_act() said
 * @qp: the requester
 *
 * The messages send again from there (shca_roce_req_need()).
 *
 * Context: the engine.
 */
void shca_roce_req_resend(struct shca_qp *qp)
{
	shca_req_go_back(qp, qp->roce->req.cause);
}

/**
 * shca_roce_req_need() - what a message of the window needs of this run
 * @qp: the requester
 * @ws: the message
 *
 * Context: the engine, for the window's messages in order.
 * Return: SHCA_WIRE_NEED_* bits: for them the engine builds the message
 * again from its copy of the WQE and calls shca_roce_req_service().
 */
unsigned int shca_roce_req_need(struct shca_qp *qp,
				const struct shca_wire_slot *ws)
{
	struct shca_wire_req *wr = &qp->roce->req;
	struct sk_buff *skb = skb_peek(&wr->resps);
	unsigned int need = 0;

	if (skb && shca_req_resp_of(ws, skb))
		need |= SHCA_WIRE_NEED_PLACE;
	/* The next PSN to send is one of its, and the window lets it go. */
	if (ws->answered || shca_psn_diff(wr->nxt, ws->first) < 0 ||
	    shca_psn_diff(shca_req_end(ws), wr->nxt) <= 0 ||
	    shca_psn_diff(shca_req_stop(wr), wr->nxt) <= 0)
		return need;
	/* A READ's next part once the last one's responses are in. */
	if ((ws->wr_opcode != IB_WR_RDMA_READ || !ws->asked ||
	     wr->nxt == ws->first || wr->nxt == wr->una) &&
	    !shca_roce_tx_hold(qp))
		need |= SHCA_WIRE_NEED_SEND;
	return need;
}

/* Places @ws's READ responses received since the last run. */
static void shca_req_place(struct shca_qp *qp, struct shca_wire_slot *ws,
			   struct shca_msg *msg)
{
	struct shca_wire_req *wr = &qp->roce->req;
	u32 pmtu = shca_qp_pmtu(qp), at = 0, off;
	struct shca_read_cb *cb;
	struct shca_sgl src;
	struct sk_buff *skb;

	while ((skb = skb_peek(&wr->resps)) && shca_req_resp_of(ws, skb)) {
		__skb_unlink(skb, &wr->resps);
		cb = shca_read_cb(skb);
		off = shca_psn_diff(cb->psn, ws->first) * pmtu;
		shca_sgl_init_skb(&src, skb, cb->data, cb->len);
		if (ws->status == IB_WC_SUCCESS &&
		    (shca_sgl_skip(msg->payload, off - at) ||
		     shca_sgl_copy(msg->payload, &src, cb->len))) {
			/* The last response may have answered it already. */
			if (ws->answered)
				ws->status = IB_WC_LOC_PROT_ERR;
			shca_req_answer(qp, ws, IB_WC_LOC_PROT_ERR);
		}
		at = off + cb->len;
		consume_skb(skb);
	}
}

/**
 * shca_roce_req_service() - place a message's READ responses, send it on
 * @qp: the requester
 * @ws: the message
 * @msg: the message, built again from the engine's copy of its WQE
 * @need: what shca_roce_req_need() said
 *
 * Context: the engine.
 */
void shca_roce_req_service(struct shca_qp *qp, struct shca_wire_slot *ws,
			   struct shca_msg *msg, unsigned int need)
{
	struct shca_wire_req *wr = &qp->roce->req;
	int n;

	if (need & SHCA_WIRE_NEED_PLACE)
		shca_req_place(qp, ws, msg);
	if (!(need & SHCA_WIRE_NEED_SEND) || ws->answered)
		return;
	n = shca_req_push(qp, ws, msg);
	if (n < 0) {
		shca_req_answer(qp, ws, IB_WC_LOC_PROT_ERR);
		return;
	}
	/* The packets resent, counted by the cause (shca_roce_req_act()). */
	shca_count_add(to_shca_dev(qp->ibqp.device),
		       shca_req_resent_counter(wr->cause), n);
}

/*
 * A round trip of @us, into the smoothed one and its deviation (RFC 6298,
 * section 2, in integers).
 */
static void shca_req_rtt(struct shca_wire_req *wr, u32 us)
{
	u32 dev;

	if (!wr->srtt_us) {
		wr->srtt_us = max(us, 1U);
		wr->rttvar_us = us / 2;
		return;
	}
	dev = abs((s32)(wr->srtt_us - us));
	wr->rttvar_us = (3 * wr->rttvar_us + dev) / 4;
	wr->srtt_us = max((7 * wr->srtt_us + us) / 8, 1U);
}

/*
 * The first unacknowledged PSN moves on to @una: restore the retries,
 * open the congestion window.  Past what was sent since a go-back (READ
 * responses to the first request), sending resumes from @una.
 */
static void shca_req_progress(struct shca_qp *qp, u32 una)
{
	struct shca_wire_req *wr = &qp->roce->req;

	if (una == wr->una)
		return;
	if (wr->timing && shca_psn_diff(una, wr->timed_psn) > 0) {
		wr->timing = false;
		shca_req_rtt(wr, min_t(s64, ktime_us_delta(ktime_get(),
							   wr->timed_at),
				       U32_MAX / 8));
	}
	shca_req_open(wr, shca_psn_diff(una, wr->una));
	wr->una = una;
	if (shca_psn_diff(una, wr->nxt) > 0)
		wr->nxt = una;
	wr->gap = false;
}

/*
 * The responder executed every PSN before @psn (it answers in order):
 * the SENDs, WRITEs and ATOMIC WRITEs among them are acknowledged (an
 * ATOMIC WRITE's empty response has nothing the requester needs).  Stops
 * at a READ or atomic not answered yet, whose responses must come first.
 */
static void shca_req_implied(struct shca_qp *qp, u32 psn)
{
	struct shca_wire_req *wr = &qp->roce->req;
	struct shca_wire_slot *ws;
	u32 i, end;

	for (i = 0; i < qp->req.taken; i++) {
		if (shca_psn_diff(psn, wr->una) <= 0)
			return;
		ws = shca_req_ws(qp, i);
		end = shca_req_end(ws);
		if (shca_psn_diff(end, wr->una) <= 0)
			continue;
		if (!ws->answered && shca_req_responded(ws))
			return;
		if (shca_psn_diff(psn, end) < 0) {
			shca_req_progress(qp, psn);
			return;
		}
		shca_req_answer(qp, ws, IB_WC_SUCCESS);
		shca_req_progress(qp, end);
	}
}

/* Records what the wire said, unless something weightier already is. */
static void shca_req_verdict(struct shca_qp *qp, enum shca_wire_verdict v)
{
	if (v > qp->roce->req.verdict)
		qp->roce->req.verdict = v;
}

/*
 * An answer beyond una: the responses before it were lost.  One resend
 * per gap: the answers still on their way to the first request show the
 * same gap, and a responder may abandon the replay it was sending for
 * each new duplicate READ, so that one resend each would never let una
 * move.  Until una moves, only the local ACK timeout resends again.
 */
static void shca_req_gap(struct shca_qp *qp)
{
	if (qp->roce->req.gap)
		return;
	qp->roce->req.gap = true;
	shca_req_verdict(qp, SHCA_WIRE_RESEND);
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

/* An ACKNOWLEDGE: an ACK, or a NAK of the PSN the responder expects. */
static void shca_req_aeth(struct shca_qp *qp, const struct shca_pkt *pkt)
{
	u8 value = FIELD_GET(SHCA_AETH_VALUE, pkt->syndrome);
	struct shca_wire_slot *ws;

	switch (FIELD_GET(SHCA_AETH_TYPE, pkt->syndrome)) {
	case SHCA_AETH_ACK:
		shca_req_implied(qp, shca_psn_add(pkt->psn, 1));
		/* Acknowledged past a READ or atomic with no response. */
		if (shca_psn_diff(pkt->psn, qp->roce->req.una) >= 0)
			shca_req_gap(qp);
		return;
	case SHCA_AETH_RNR_NAK:
		trace_softhca_nak(qp->ibqp.device, qp->ibqp.qp_num, pkt->psn,
				  pkt->syndrome);
		shca_req_implied(qp, pkt->psn);
		qp->roce->req.rnr_timer = value;
		shca_req_verdict(qp, SHCA_WIRE_RNR);
		return;
	case SHCA_AETH_NAK:
		trace_softhca_nak(qp->ibqp.device, qp->ibqp.qp_num, pkt->psn,
				  pkt->syndrome);
		shca_req_implied(qp, pkt->psn);
		if (value == SHCA_NAK_PSN_SEQ) {
			shca_count(to_shca_dev(qp->ibqp.device),
				   SHCA_CNT_SEQ_NAK_RCVD);
			/*
			 * The PSN already gone back to: a NAK late or twice,
			 * or one of a packet that followed an RNR NAKed one.
			 */
			if (pkt->psn == qp->roce->req.back &&
			    shca_psn_diff(qp->roce->req.una,
					  qp->roce->req.back_high) < 0)
				return;
			shca_req_verdict(qp, SHCA_WIRE_RESEND);
			return;
		}
		ws = shca_req_una_slot(qp);
		if (ws && pkt->psn == qp->roce->req.una)
			shca_req_answer(qp, ws, shca_req_nak_status(value));
		return;
	}
}

/* The message of the window @psn is one of, if any. */
static struct shca_wire_slot *shca_req_find(struct shca_qp *qp, u32 psn)
{
	struct shca_wire_slot *ws;
	s32 d;
	u32 i;

	for (i = 0; i < qp->req.taken; i++) {
		ws = shca_req_ws(qp, i);
		d = shca_psn_diff(psn, ws->first);
		if (d >= 0 && (u32)d < ws->npsn)
			return ws;
	}
	return NULL;
}

/*
 * An atomic's acknowledgment, with its original value.  One for a PSN
 * of anything but an atomic is no answer at all.
 */
static void shca_req_atomic_ack(struct shca_qp *qp, const struct shca_pkt *pkt)
{
	struct shca_wire_slot *ws = shca_req_find(qp, pkt->psn);

	if (!ws || !shca_req_atomic(ws->wr_opcode))
		return;
	shca_req_implied(qp, pkt->psn);
	if (pkt->psn != qp->roce->req.una) {
		shca_req_gap(qp);
		return;
	}
	ws->atomic_orig = pkt->orig;
	shca_req_answer(qp, ws, IB_WC_SUCCESS);
	shca_req_progress(qp, shca_req_end(ws));
}

/* A READ response: kept for placement if it is the next one. */
static bool shca_req_read_resp(struct shca_qp *qp, struct sk_buff *skb,
			       const struct shca_pkt *pkt, u32 data)
{
	struct shca_wire_req *wr = &qp->roce->req;
	u8 pos = shca_opcode_lookup(pkt->opcode)->pos;
	u32 pmtu = shca_qp_pmtu(qp), i;
	struct shca_wire_slot *ws = shca_req_find(qp, pkt->psn);
	struct shca_read_cb *cb;
	bool last;

	/* An ATOMIC WRITE's or a FLUSH's: an ACK with no data. */
	if (ws && shca_req_placement_op(ws->wr_opcode)) {
		if (pos == SHCA_POS_ONLY && !pkt->paylen)
			shca_req_aeth(qp, pkt);
		return false;
	}
	/* A response for a PSN of anything but a READ is no answer at all. */
	if (!ws || ws->wr_opcode != IB_WR_RDMA_READ || ws->answered)
		return false;
	shca_req_implied(qp, pkt->psn);
	if (pkt->psn != wr->una) {
		/* Those before una were placed; one beyond means a loss. */
		shca_req_gap(qp);
		return false;
	}
	/* Placed at each run, unless the QP stopped sending (SQD, ERR). */
	if (skb_queue_len(&wr->resps) >= SHCA_READ_RESPS_MAX)
		return false;
	i = shca_psn_diff(pkt->psn, ws->first);
	/* The last a request asked for; resent ones start anew with FIRST. */
	last = i == ws->asked - 1;
	if (i >= ws->asked ||
	    last != (pos == SHCA_POS_LAST || pos == SHCA_POS_ONLY) ||
	    pkt->paylen != min(pmtu, ws->len - i * pmtu)) {
		ibdev_dbg_ratelimited(qp->ibqp.device,
				      "QP %u: READ response %u of %u refused\n",
				      qp->ibqp.qp_num, i, ws->npsn);
		return false;
	}
	cb = shca_read_cb(skb);
	cb->psn = pkt->psn;
	cb->data = data;
	cb->len = pkt->paylen;
	__skb_queue_tail(&wr->resps, skb);
	shca_req_progress(qp, shca_psn_add(pkt->psn, 1));
	if (i == ws->npsn - 1)
		shca_req_answer(qp, ws, IB_WC_SUCCESS);
	return true;
}

/**
 * shca_roce_req_rx() - an answer from the responder reached the requester
 * @qp: the requester
 * @skb: the packet, its data at the UDP header; consumed
 * @pkt: its headers, parsed and checked
 * @data: where its payload starts, from @skb->data
 *
 * An answer for no PSN from una to the highest one sent (an old one, a
 * duplicate, a forgery, or one for a PSN the window has not let go yet)
 * is dropped, and counted.
 *
 * Context: the QP's engine.
 */
void shca_roce_req_rx(struct shca_qp *qp, struct sk_buff *skb,
		      const struct shca_pkt *pkt, u32 data)
{
	struct shca_wire_req *wr = &qp->roce->req;

	if (!shca_roce_req_busy(qp) || shca_psn_diff(pkt->psn, wr->una) < 0 ||
	    shca_psn_diff(pkt->psn, wr->high) >= 0) {
		ibdev_dbg_ratelimited(qp->ibqp.device,
				      "QP %u: answer %#x dropped: %u in flight, una %#x, next %#x\n",
				      qp->ibqp.qp_num, pkt->psn,
				      qp->req.taken, wr->una, qp->req.psn);
		shca_count_drop(to_shca_dev(qp->ibqp.device), SHCA_DROP_STALE);
		goto consume;
	}
	switch (pkt->opcode) {
	case SHCA_OPCODE(RC, ACKNOWLEDGE):
		shca_req_aeth(qp, pkt);
		break;
	case SHCA_OPCODE(RC, ATOMIC_ACKNOWLEDGE):
		shca_req_atomic_ack(qp, pkt);
		break;
	default:
		if (shca_req_read_resp(qp, skb, pkt, data))
			return;
		break;
	}
consume:
	consume_skb(skb);
}

/**
 * shca_roce_req_busy() - has the window a message not answered yet?
 * @qp: the requester
 *
 * Context: the engine.
 */
bool shca_roce_req_busy(struct shca_qp *qp)
{
	return shca_req_una_slot(qp);
}

/**
 * shca_roce_req_una() - the window's first PSN not acknowledged
 * @qp: the requester
 *
 * Context: the engine.
 */
u32 shca_roce_req_una(struct shca_qp *qp)
{
	return qp->roce->req.una;
}

/**
 * shca_roce_req_rto() - how long an answer takes on this QP's path
 * @qp: the requester
 *
 * Context: the engine.
 * Return: the smoothed round trip and four of its mean deviations, in
 * ns (RFC 6298's RTO, before its floor), or 0 before the first sample.
 */
u64 shca_roce_req_rto(struct shca_qp *qp)
{
	const struct shca_wire_req *wr = &qp->roce->req;

	if (!wr->srtt_us)
		return 0;
	return ((u64)wr->srtt_us + 4ULL * wr->rttvar_us) * NSEC_PER_USEC;
}

/**
 * shca_roce_req_init() - a requester's window, before its first message
 * @qp: the requester
 *
 * The congestion window starts fully open: a path's first loss closes
 * it to what it holds.
 */
void shca_roce_req_init(struct shca_qp *qp)
{
	struct shca_wire_req *wr = &qp->roce->req;

	__skb_queue_head_init(&wr->resps);
	wr->cwnd = SHCA_WIRE_WINDOW_PSNS;
	wr->ssthresh = SHCA_WIRE_WINDOW_PSNS;
}

/*
 * The window is done with (its messages completed or flushed, or the QP
 * reset): what was kept for it goes.
 */
void shca_roce_req_reset(struct shca_qp *qp)
{
	struct shca_wire_req *wr = &qp->roce->req;

	wr->verdict = SHCA_WIRE_NONE;
	wr->gap = false;
	wr->timing = false;
	wr->rd_atomic = 0;
	__skb_queue_purge(&wr->resps);
}
