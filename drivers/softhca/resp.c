// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The responder: what a QP does with a message that reaches it, whichever
 * transport brought it.  Loopback brings whole messages; the wire brings
 * a SEND or a WRITE a packet at a time, each a segment of its message
 * (shca_resp_segment()), in PSN order (roce_resp.c).
 *
 * A message is accepted only by a QP that can receive (RTR, RTS, SQD or
 * SQE), of the same service, connected to the requester (RC, UC) or
 * holding its Q_Key (UD); anything else is dropped, as a packet would be.
 * Remote memory is checked whole (QP access flags, then the rkey's MR:
 * PD, access, range) before a byte moves.
 *
 * Errors follow the IBA's responder classes: on RC, a refused request is
 * NAKed (the requester completes with a REM_* status) and moves the
 * responder to the error state; on UC and UD the message is dropped.  A
 * receive WQE that cannot take a message completes in error whatever the
 * service.  Without a receive WQE, RC answers RNR and the requester
 * retries; UC and UD drop.
 */

#include <linux/ip.h>
#include <net/ip.h>

#include "cq.h"
#include "dev.h"
#include "mr.h"
#include "qp.h"
#include "resp.h"
#include "srq.h"
#include "wire.h"

static bool shca_resp_accepts(const struct shca_qp *qp,
			      const struct shca_msg *msg)
{
	enum ib_qp_state state = READ_ONCE(qp->state);
	enum ib_qp_type type = qp->ibqp.qp_type;

	if (state < IB_QPS_RTR || state > IB_QPS_SQE)
		return false;
	if (type == IB_QPT_GSI)
		type = IB_QPT_UD;
	if (type != msg->qp_type)
		return false;
	if (type == IB_QPT_UD)
		return msg->qkey == READ_ONCE(qp->attr.qkey);
	return msg->src_qpn == READ_ONCE(qp->attr.dest_qp_num);
}

/*
 * A request the responder refuses: NAK on RC, dropped otherwise.  An RC
 * responder goes to the error state; its consumer learns why from a
 * receive completion when one was consumed, else from an affiliated
 * event (@event).
 */
enum shca_tx shca_resp_refuse(struct shca_qp *qp, struct shca_msg *msg,
			      enum ib_wc_status status, bool event)
{
	ibdev_dbg_ratelimited(qp->ibqp.device,
			      "QP %u refuses opcode %u from QP %u: %s\n",
			      qp->ibqp.qp_num, msg->opcode, msg->src_qpn,
			      ib_wc_status_msg(status));
	if (msg->qp_type != IB_QPT_RC)
		return SHCA_TX_LOST;
	shca_qp_error(qp, IB_QPS_ERR);
	if (event)
		shca_event_raise(&qp->events,
				 status == IB_WC_REM_ACCESS_ERR ?
				 IB_EVENT_QP_ACCESS_ERR : IB_EVENT_QP_REQ_ERR);
	msg->status = status;
	return SHCA_TX_DONE;
}

/* No receive WQE: RC asks the requester to retry, the others drop. */
static enum shca_tx shca_resp_rnr(struct shca_qp *qp, struct shca_msg *msg)
{
	if (msg->qp_type != IB_QPT_RC)
		return SHCA_TX_LOST;
	msg->rnr_timer = READ_ONCE(qp->attr.min_rnr_timer);
	return SHCA_TX_RNR;
}

static void shca_resp_cqe_flags(const struct shca_qp *qp,
				const struct shca_msg *msg,
				struct softhca_cqe *cqe)
{
	switch (msg->opcode) {
	case IB_WR_SEND_WITH_IMM:
	case IB_WR_RDMA_WRITE_WITH_IMM:
		cqe->flags |= SOFTHCA_CQE_IMM;
		cqe->ex = msg->ex;
		break;
	case IB_WR_SEND_WITH_INV:
		cqe->flags |= SOFTHCA_CQE_INV;
		cqe->ex = msg->ex;
		break;
	}
	if (msg->qp_type == IB_QPT_UD) {
		cqe->flags |= SOFTHCA_CQE_GRH;
		cqe->network_hdr_type = msg->av->net_type;
		memcpy(cqe->smac, msg->smac, ETH_ALEN);
	}
}

/*
 * Completes a receive WQE; an error also moves the QP to the error state,
 * which flushes the rest.
 */
static void shca_resp_complete(struct shca_qp *qp,
			       const struct shca_msg *msg,
			       const struct shca_rwqe *rwqe,
			       enum ib_wc_status status, u32 byte_len)
{
	struct softhca_cqe cqe = {
		.wr_id = rwqe->hdr.wr_id,
		.status = status,
		.opcode = msg->opcode == IB_WR_RDMA_WRITE_WITH_IMM ?
			  IB_WC_RECV_RDMA_WITH_IMM : IB_WC_RECV,
		.byte_len = byte_len,
		.qp_num = qp->ibqp.qp_num,
		.src_qp = msg->src_qpn,
	};
	bool ok = status == IB_WC_SUCCESS;

	if (ok)
		shca_resp_cqe_flags(qp, msg, &cqe);
	shca_cq_push(to_shca_cq(qp->ibqp.recv_cq), &cqe,
		     !ok || (msg->flags & SOFTHCA_WQE_SOLICITED));
	if (!ok)
		shca_qp_error(qp, IB_QPS_ERR);
}

/* Why a receive WQE cannot take a message. */
enum shca_resp_fault {
	SHCA_RESP_WQE,		/* the WQE is malformed */
	SHCA_RESP_LEN,		/* the message does not fit its SGEs */
	SHCA_RESP_INV,		/* SEND_WITH_INV's rkey cannot be invalidated */
	SHCA_RESP_PROT,		/* its SGEs' memory refused the bytes */
};

/* The status pairs of a receive WQE that cannot take a message. */
static const struct {
	u8 local;	/* the receive WQE's completion */
	u8 remote;	/* the requester's, on RC */
} shca_resp_faults[] = {
	[SHCA_RESP_WQE] = { IB_WC_LOC_QP_OP_ERR, IB_WC_REM_OP_ERR },
	[SHCA_RESP_LEN] = { IB_WC_LOC_LEN_ERR, IB_WC_REM_INV_REQ_ERR },
	[SHCA_RESP_INV] = { IB_WC_LOC_PROT_ERR, IB_WC_REM_INV_REQ_ERR },
	[SHCA_RESP_PROT] = { IB_WC_LOC_PROT_ERR, IB_WC_REM_OP_ERR },
};

/*
 * The receive WQE @cur holds cannot take @msg (@why): it completes in
 * error, and @msg is refused, each with @why's status.
 */
static enum shca_tx shca_resp_fail(struct shca_qp *qp, struct shca_msg *msg,
				   struct shca_resp_cur *cur,
				   enum shca_resp_fault why)
{
	cur->have_rwqe = false;
	shca_resp_complete(qp, msg, &cur->rwqe, shca_resp_faults[why].local,
			   0);
	return shca_resp_refuse(qp, msg, shca_resp_faults[why].remote, false);
}

/*
 * Takes the receive WQE a SEND or a WRITE with immediate consumes (of
 * the SRQ, if any) into @cur, unless it holds one: UC keeps the WQE of a
 * message it abandoned for the next one.  Return: true; or false with
 * *@tx what became of @msg: SHCA_TX_RNR (RC) or SHCA_TX_LOST for an empty
 * queue, else refused (a broken WQE or ring).
 */
static bool shca_resp_take(struct shca_qp *qp, struct shca_msg *msg,
			   struct shca_resp_cur *cur, enum shca_tx *tx)
{
	struct shca_rwqe *rwqe = &cur->rwqe;
	int ret;

	if (cur->have_rwqe)
		return true;
	if (qp->ibqp.srq)
		ret = shca_srq_pop(to_shca_srq(qp->ibqp.srq), &rwqe->hdr,
				   rwqe->sge);
	else
		ret = shca_rq_pop(qp, &rwqe->hdr, rwqe->sge);
	switch (ret) {
	case 0:
		cur->have_rwqe = true;
		return true;
	case -ENOENT:
		*tx = shca_resp_rnr(qp, msg);
		break;
	case -EOVERFLOW:
		/* No WQE to complete: the event tells the consumer. */
		shca_qp_fatal(qp);
		*tx = shca_resp_refuse(qp, msg, IB_WC_REM_OP_ERR, false);
		break;
	default:
		*tx = shca_resp_fail(qp, msg, cur, SHCA_RESP_WQE);
		break;
	}
	return false;
}

/* A cursor over @rwqe's SGEs, for the bytes of a SEND. */
static int shca_resp_sink(struct shca_qp *qp, const struct shca_rwqe *rwqe,
			  struct shca_sgl *sink)
{
	return shca_sgl_init(sink, to_shca_dev(qp->ibqp.device), qp->ibqp.pd,
			     IB_ACCESS_LOCAL_WRITE, !qp->ibqp.uobject,
			     rwqe->sge, rwqe->hdr.num_sge);
}

/*
 * The 40 bytes a UD receive buffer starts with: the IPv6 header, or the
 * IPv4 header in the last 20 bytes (RoCEv2 over IPv4), as the packet
 * would have carried it.
 */
static void shca_resp_grh(const struct shca_msg *msg,
			  union rdma_network_hdr *hdr)
{
	const struct shca_av *av = msg->av;
	const struct ib_global_route *grh = &av->attr.grh;
	/* UDP, BTH, DETH and ICRC around the payload. */
	u32 len = sizeof(struct udphdr) + 12 + 8 + msg->len + 4;
	struct iphdr *ip4 = &hdr->roce4grh;

	memset(hdr, 0, sizeof(*hdr));
	if (av->net_type != RDMA_NETWORK_IPV4) {
		hdr->ibgrh.version_tclass_flow =
			cpu_to_be32(6 << 28 | grh->traffic_class << 20 |
				    grh->flow_label);
		hdr->ibgrh.paylen = cpu_to_be16(len);
		hdr->ibgrh.next_hdr = IPPROTO_UDP;
		hdr->ibgrh.hop_limit = grh->hop_limit;
		hdr->ibgrh.sgid = av->sgid;
		hdr->ibgrh.dgid = grh->dgid;
		return;
	}
	ip4->version = 4;
	ip4->ihl = 5;
	ip4->tos = grh->traffic_class;
	ip4->tot_len = cpu_to_be16(sizeof(*ip4) + len);
	ip4->ttl = grh->hop_limit;
	ip4->protocol = IPPROTO_UDP;
	memcpy(&ip4->saddr, av->sgid.raw + 12, sizeof(ip4->saddr));
	memcpy(&ip4->daddr, grh->dgid.raw + 12, sizeof(ip4->daddr));
	ip4->check = ip_fast_csum(ip4, ip4->ihl);
}

/* Places a SEND's payload (after the GRH, for UD) into @sink. */
static int shca_resp_place(struct shca_sgl *sink, struct shca_msg *msg)
{
	union rdma_network_hdr hdr;
	struct shca_sgl grh;
	int ret;

	if (msg->qp_type == IB_QPT_UD) {
		shca_resp_grh(msg, &hdr);
		shca_sgl_init_buf(&grh, &hdr, sizeof(hdr));
		ret = shca_sgl_copy(sink, &grh, sizeof(hdr));
		if (ret)
			return ret;
	}
	return shca_sgl_copy(sink, msg->payload, msg->len);
}

/* SEND_WITH_INV's invalidation of @rkey, in @qp's PD: 0 or -EINVAL. */
static int shca_resp_invalidate(struct shca_qp *qp, u32 rkey)
{
	struct shca_mr *mr;
	int ret = -EINVAL;

	mr = shca_mr_get(to_shca_dev(qp->ibqp.device), rkey);
	if (!mr)
		return ret;
	if (mr->pd == qp->ibqp.pd)
		ret = shca_mr_invalidate(mr, rkey, qp->ibqp.qp_num);
	shca_mr_put(mr);
	return ret;
}

/* What a message places segment by segment, or nothing. */
enum shca_resp_msg shca_resp_class(u8 wr_opcode)
{
	switch (wr_opcode) {
	case IB_WR_SEND:
	case IB_WR_SEND_WITH_IMM:
	case IB_WR_SEND_WITH_INV:
		return SHCA_RESP_MSG_SEND;
	case IB_WR_RDMA_WRITE:
	case IB_WR_RDMA_WRITE_WITH_IMM:
		return SHCA_RESP_MSG_WRITE;
	default:
		return SHCA_RESP_MSG_NONE;
	}
}

/*
 * The end of a segment: on success, the message goes on (@more) or is
 * complete; an RNR keeps the message in progress for the segment again;
 * a drop or a refusal ends it.
 */
static enum shca_tx shca_resp_seg_end(struct shca_qp *qp,
				      struct shca_msg *msg, enum shca_tx tx,
				      bool more)
{
	struct shca_resp *rs = &qp->resp;

	if (tx == SHCA_TX_RNR)
		return tx;
	if (tx == SHCA_TX_DONE && msg->status == IB_WC_SUCCESS && more)
		rs->msg = shca_resp_class(msg->opcode);
	else
		rs->msg = SHCA_RESP_MSG_NONE;
	return tx;
}

/* A segment of a SEND, into the receive WQE the first one took. */
static enum shca_tx shca_resp_seg_send(struct shca_qp *qp,
				       struct shca_msg *msg,
				       struct shca_resp_cur *cur, bool first,
				       bool last)
{
	u32 need = msg->len;
	struct shca_sgl sink;
	enum shca_tx tx;
	int ret;

	if (first) {
		if (!shca_resp_take(qp, msg, cur, &tx))
			return tx;
		cur->off = 0;
	}
	if (msg->qp_type == IB_QPT_UD)
		need += sizeof(union rdma_network_hdr);
	ret = shca_resp_sink(qp, &cur->rwqe, &sink);
	if (ret || need > sink.len - cur->off)
		return shca_resp_fail(qp, msg, cur, SHCA_RESP_LEN);
	shca_sgl_skip(&sink, cur->off);
	ret = shca_resp_place(&sink, msg);
	shca_sgl_release(&sink);
	if (ret && sink.bad)
		return shca_resp_fail(qp, msg, cur, SHCA_RESP_PROT);
	if (ret) {
		/* The requester's memory went away under the copy. */
		cur->have_rwqe = false;
		shca_resp_complete(qp, msg, &cur->rwqe, IB_WC_REM_ABORT_ERR, 0);
		msg->status = IB_WC_LOC_PROT_ERR;
		return SHCA_TX_DONE;
	}
	cur->off += need;
	msg->status = IB_WC_SUCCESS;
	if (!last)
		return SHCA_TX_DONE;
	if (msg->opcode == IB_WR_SEND_WITH_INV &&
	    shca_resp_invalidate(qp, msg->ex))
		return shca_resp_fail(qp, msg, cur, SHCA_RESP_INV);
	cur->have_rwqe = false;
	shca_resp_complete(qp, msg, &cur->rwqe, IB_WC_SUCCESS, cur->off);
	return SHCA_TX_DONE;
}

/* The QP's access flags, then the rkey, for @len bytes at the target. */
int shca_resp_target(struct shca_qp *qp, struct shca_msg *msg,
		     struct shca_sgl *target, int access)
{
	if (!(READ_ONCE(qp->attr.qp_access_flags) & access)) {
		/* Released all the same. */
		shca_sgl_init_buf(target, NULL, 0);
		return -EACCES;
	}
	return shca_sgl_init_remote(target, &msg->remote,
				    to_shca_dev(qp->ibqp.device), qp->ibqp.pd,
				    qp->ibqp.qp_num, access);
}

/*
 * A WRITE's or a READ's copy ended with @ret: a fault on the requester's
 * side fails its WQE (loopback, whose payload is the requester's memory),
 * one on the target's is refused.
 */
static enum shca_tx shca_resp_copied(struct shca_qp *qp, struct shca_msg *msg,
				     int ret)
{
	if (ret && msg->payload->bad) {
		msg->status = IB_WC_LOC_PROT_ERR;
		return SHCA_TX_DONE;
	}
	if (ret)
		return shca_resp_refuse(qp, msg, IB_WC_REM_ACCESS_ERR, true);
	msg->status = IB_WC_SUCCESS;
	return SHCA_TX_DONE;
}

/*
 * A segment of a WRITE: the first names the target, whose length is the
 * message's; the last takes a receive WQE for the immediate.
 */
static enum shca_tx shca_resp_seg_write(struct shca_qp *qp,
					struct shca_msg *msg,
					struct shca_resp_cur *cur, bool first,
					bool last)
{
	struct shca_sgl target;
	enum shca_tx tx;
	u32 end;
	int ret;

	if (first) {
		cur->write = msg->remote;
		cur->off = 0;
	}
	end = cur->off + msg->len;
	if (end < cur->off || end > cur->write.length ||
	    (last && end != cur->write.length))
		return shca_resp_refuse(qp, msg, IB_WC_REM_INV_REQ_ERR, true);
	msg->remote = cur->write;
	ret = shca_resp_target(qp, msg, &target, IB_ACCESS_REMOTE_WRITE);
	if (!ret) {
		shca_sgl_skip(&target, cur->off);
		ret = shca_sgl_copy(&target, msg->payload, msg->len);
	}
	shca_sgl_release(&target);
	tx = shca_resp_copied(qp, msg, ret);
	if (tx != SHCA_TX_DONE || msg->status != IB_WC_SUCCESS)
		return tx;
	if (!last) {
		cur->off = end;
		return SHCA_TX_DONE;
	}
	if (msg->opcode != IB_WR_RDMA_WRITE_WITH_IMM)
		return SHCA_TX_DONE;
	/*
	 * Without a WQE (RNR), the last segment is placed again when it
	 * comes again: the bytes before it stay counted, not its own.
	 */
	if (!shca_resp_take(qp, msg, cur, &tx))
		return tx;
	cur->have_rwqe = false;
	shca_resp_complete(qp, msg, &cur->rwqe, IB_WC_SUCCESS, end);
	return SHCA_TX_DONE;
}

/* A segment of a SEND or a WRITE, placed with @cur. */
static enum shca_tx shca_resp_place_seg(struct shca_qp *qp,
					struct shca_msg *msg,
					struct shca_resp_cur *cur, bool first,
					bool last)
{
	if (shca_resp_class(msg->opcode) == SHCA_RESP_MSG_WRITE)
		return shca_resp_seg_write(qp, msg, cur, first, last);
	return shca_resp_seg_send(qp, msg, cur, first, last);
}

/**
 * shca_resp_segment() - place a segment of a SEND or a WRITE
 * @qp: the responder QP, held by the transport
 * @msg: the message: its opcode, and this segment's bytes (@msg->len of
 *	them at @msg->payload); a WRITE's first segment names the target,
 *	the whole message's length
 * @first: the segment starts the message
 * @last: the segment ends it
 *
 * The wire's segments are its packets, in PSN order; loopback's whole
 * messages go through shca_resp_execute().  What a message keeps between
 * its segments (the receive WQE, the bytes placed, the WRITE's target)
 * is the QP's (struct shca_resp).
 *
 * Context: the QP's engine, under engine_lock.
 * Return: SHCA_TX_DONE with @msg->status set (IB_WC_SUCCESS: placed, and
 * complete if @last), SHCA_TX_RNR with @msg->rnr_timer set, or
 * SHCA_TX_LOST when the message is dropped.
 */
enum shca_tx shca_resp_segment(struct shca_qp *qp, struct shca_msg *msg,
			       bool first, bool last)
{
	enum shca_tx tx;

	tx = shca_resp_place_seg(qp, msg, &qp->resp.cur, first, last);
	return shca_resp_seg_end(qp, msg, tx, !last);
}

/* READ: copy from the target to the requester's memory. */
static enum shca_tx shca_resp_read(struct shca_qp *qp, struct shca_msg *msg)
{
	struct shca_sgl target;
	int ret;

	ret = shca_resp_target(qp, msg, &target, IB_ACCESS_REMOTE_READ);
	if (!ret)
		ret = shca_sgl_copy(msg->payload, &target, msg->len);
	shca_sgl_release(&target);
	return shca_resp_copied(qp, msg, ret);
}

/* 64-bit atomics on the responder's memory, atomic against every CPU. */
static enum shca_tx shca_resp_atomic(struct shca_qp *qp, struct shca_msg *msg)
{
	struct shca_sgl target;
	atomic64_t *p;
	u32 len;
	int ret;

	if (msg->remote.addr & (sizeof(u64) - 1))
		return shca_resp_refuse(qp, msg, IB_WC_REM_INV_REQ_ERR, true);
	ret = shca_resp_target(qp, msg, &target, IB_ACCESS_REMOTE_ATOMIC);
	p = ret ? NULL : shca_sgl_map(&target, &len);
	if (IS_ERR_OR_NULL(p)) {
		shca_sgl_release(&target);
		return shca_resp_refuse(qp, msg, IB_WC_REM_ACCESS_ERR, true);
	}
	if (msg->opcode == IB_WR_ATOMIC_CMP_AND_SWP)
		msg->atomic_orig = atomic64_cmpxchg(p, msg->compare_add,
						    msg->swap);
	else
		msg->atomic_orig = atomic64_fetch_add(msg->compare_add, p);
	shca_sgl_unmap(&target);
	shca_sgl_release(&target);
	msg->status = IB_WC_SUCCESS;
	return SHCA_TX_DONE;
}

/*
 * ATOMIC WRITE: 8 bytes stored in one access, that no CPU sees in part;
 * the target is checked as a WRITE's is.
 */
static enum shca_tx shca_resp_atomic_write(struct shca_qp *qp,
					   struct shca_msg *msg)
{
	struct shca_sgl target, src;
	atomic64_t *p;
	u64 val;
	u32 len;
	int ret;

	if (msg->len != sizeof(val) || msg->remote.length != sizeof(val) ||
	    msg->remote.addr & (sizeof(val) - 1))
		return shca_resp_refuse(qp, msg, IB_WC_REM_INV_REQ_ERR, true);
	shca_sgl_init_buf(&src, &val, sizeof(val));
	ret = shca_sgl_copy(&src, msg->payload, sizeof(val));
	shca_sgl_release(&src);
	if (ret)
		return shca_resp_copied(qp, msg, ret);
	ret = shca_resp_target(qp, msg, &target, IB_ACCESS_REMOTE_WRITE);
	p = ret ? NULL : shca_sgl_map(&target, &len);
	if (IS_ERR_OR_NULL(p)) {
		shca_sgl_release(&target);
		return shca_resp_refuse(qp, msg, IB_WC_REM_ACCESS_ERR, true);
	}
	atomic64_set_release(p, val);
	shca_sgl_unmap(&target);
	shca_sgl_release(&target);
	msg->status = IB_WC_SUCCESS;
	return SHCA_TX_DONE;
}

/*
 * May a FLUSH with placement @msg->plt reach its target: the QP and the
 * MR (or window) must allow each placement type it asks for, over its
 * range (a zero-length one names its first byte) or, at the MR level,
 * over the MR its rkey names, whatever its address and length say.
 */
static enum ib_wc_status shca_resp_flush_check(struct shca_qp *qp,
					       struct shca_msg *msg)
{
	struct shca_dev *dev = to_shca_dev(qp->ibqp.device);
	struct softhca_sge range = msg->remote;
	struct shca_sgl target;
	struct shca_mr *mr;
	int access = 0;
	int ret;

	if (!msg->plt || msg->plt & ~(SHCA_FLUSH_GLOBAL | SHCA_FLUSH_PERSISTENT) ||
	    msg->sel > SHCA_FLUSH_MR)
		return IB_WC_REM_INV_REQ_ERR;
	if (msg->plt & SHCA_FLUSH_GLOBAL)
		access |= SHCA_ACCESS_FLUSH_GLOBAL;
	if (msg->plt & SHCA_FLUSH_PERSISTENT)
		access |= SHCA_ACCESS_FLUSH_PERSISTENT;
	/* Before 6.2 no QP or MR allows one. */
	if (!access ||
	    (READ_ONCE(qp->attr.qp_access_flags) & access) != access)
		return IB_WC_REM_INV_REQ_ERR;
	if (msg->sel == SHCA_FLUSH_MR) {
		mr = shca_mr_get(dev, range.lkey);
		if (!mr)
			return IB_WC_REM_ACCESS_ERR;
		range.addr = READ_ONCE(mr->iova);
		shca_mr_put(mr);
	}
	if (msg->sel == SHCA_FLUSH_MR || !range.length)
		range.length = 1;
	ret = shca_sgl_init_remote(&target, &range, dev, qp->ibqp.pd,
				   qp->ibqp.qp_num, access);
	shca_sgl_release(&target);
	return ret ? IB_WC_REM_ACCESS_ERR : IB_WC_SUCCESS;
}

/*
 * FLUSH (IBA 1.5): what earlier WRITEs and atomics of the QP placed in the
 * range, or the MR, made visible.  They executed before it, in order; a
 * full barrier makes their stores visible to every CPU.  A persistent one
 * never gets this far: there is no persistent memory here, the device
 * does not offer it, and no MR can allow it.
 */
static enum shca_tx shca_resp_flush_req(struct shca_qp *qp,
					struct shca_msg *msg)
{
	enum ib_wc_status status = shca_resp_flush_check(qp, msg);

	if (status != IB_WC_SUCCESS)
		return shca_resp_refuse(qp, msg, status, true);
	/* The earlier requests' stores, before the answer says they are seen. */
	smp_mb();
	msg->status = IB_WC_SUCCESS;
	return SHCA_TX_DONE;
}

/**
 * shca_resp_execute() - execute a message on the QP it reached
 * @qp: the responder QP, held by the transport
 * @msg: the message; its payload cursor is the requester's memory
 *
 * Context: the engine: process context, no lock held.
 * Return: SHCA_TX_DONE with @msg->status set, SHCA_TX_RNR with
 * @msg->rnr_timer set, or SHCA_TX_LOST when the message is dropped.
 */
enum shca_tx shca_resp_execute(struct shca_qp *qp, struct shca_msg *msg)
{
	struct shca_resp_cur cur;

	if (!shca_resp_accepts(qp, msg))
		return SHCA_TX_LOST;

	switch (msg->opcode) {
	case IB_WR_SEND:
	case IB_WR_SEND_WITH_IMM:
	case IB_WR_SEND_WITH_INV:
	case IB_WR_RDMA_WRITE:
	case IB_WR_RDMA_WRITE_WITH_IMM:
		cur.have_rwqe = false;
		return shca_resp_place_seg(qp, msg, &cur, true, true);
	case IB_WR_RDMA_READ:
		return shca_resp_read(qp, msg);
	case IB_WR_ATOMIC_CMP_AND_SWP:
	case IB_WR_ATOMIC_FETCH_AND_ADD:
		return shca_resp_atomic(qp, msg);
	case SHCA_WR_ATOMIC_WRITE:
		return shca_resp_atomic_write(qp, msg);
	case SHCA_WR_FLUSH:
		return shca_resp_flush_req(qp, msg);
	}
	return shca_resp_refuse(qp, msg, IB_WC_REM_INV_REQ_ERR, true);
}

void shca_resp_flush(struct shca_qp *qp)
{
	struct shca_msg msg = {
		.qp_type = qp->ibqp.qp_type,
		.opcode = IB_WR_SEND,
		.src_qpn = READ_ONCE(qp->attr.dest_qp_num),
	};

	if (!qp->resp.cur.have_rwqe)
		return;
	qp->resp.cur.have_rwqe = false;
	shca_resp_complete(qp, &msg, &qp->resp.cur.rwqe, IB_WC_WR_FLUSH_ERR,
			   0);
}

void shca_resp_reset(struct shca_qp *qp, u32 epsn)
{
	memset(&qp->resp, 0, sizeof(qp->resp));
	WRITE_ONCE(qp->resp.epsn, epsn);
}
