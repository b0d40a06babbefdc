// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The responder: what a QP does with a message that reaches it, whichever
 * transport brought it.
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

enum shca_tx shca_resp_fail(struct shca_qp *qp, struct shca_msg *msg,
			    const struct shca_rwqe *rwqe,
			    enum shca_resp_fault why)
{
	shca_resp_complete(qp, msg, rwqe, shca_resp_faults[why].local, 0);
	return shca_resp_refuse(qp, msg, shca_resp_faults[why].remote, false);
}

bool shca_resp_take(struct shca_qp *qp, struct shca_msg *msg,
		    struct shca_rwqe *rwqe, enum shca_tx *tx)
{
	int ret;

	if (qp->ibqp.srq)
		ret = shca_srq_pop(to_shca_srq(qp->ibqp.srq), &rwqe->hdr,
				   rwqe->sge);
	else
		ret = shca_rq_pop(qp, &rwqe->hdr, rwqe->sge);
	switch (ret) {
	case 0:
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
		*tx = shca_resp_fail(qp, msg, rwqe, SHCA_RESP_WQE);
		break;
	}
	return false;
}

int shca_resp_sink(struct shca_qp *qp, const struct shca_rwqe *rwqe,
		   struct shca_sgl *sink)
{
	return shca_sgl_init(sink, to_shca_dev(qp->ibqp.device), qp->ibqp.pd,
			     IB_ACCESS_LOCAL_WRITE, !qp->ibqp.uobject,
			     rwqe->sge, rwqe->hdr.num_sge);
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
void shca_resp_complete(struct shca_qp *qp, const struct shca_msg *msg,
			const struct shca_rwqe *rwqe, enum ib_wc_status status,
			u32 byte_len)
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

int shca_resp_invalidate(struct shca_qp *qp, u32 rkey)
{
	struct shca_mr *mr;
	int ret = -EINVAL;

	mr = shca_mr_get(to_shca_dev(qp->ibqp.device), rkey);
	if (!mr)
		return ret;
	if (mr->pd == qp->ibqp.pd)
		ret = shca_mr_invalidate(mr, rkey);
	shca_mr_put(mr);
	return ret;
}

/* Copies a SEND into the next receive WQE. */
static enum shca_tx shca_resp_send(struct shca_qp *qp, struct shca_msg *msg,
				   struct shca_rwqe *rwqe)
{
	u32 need = msg->len;
	struct shca_sgl sink;
	int ret;

	if (msg->qp_type == IB_QPT_UD)
		need += sizeof(union rdma_network_hdr);
	ret = shca_resp_sink(qp, rwqe, &sink);
	if (ret || need > sink.len)
		return shca_resp_fail(qp, msg, rwqe, SHCA_RESP_LEN);
	if (msg->opcode == IB_WR_SEND_WITH_INV &&
	    shca_resp_invalidate(qp, msg->ex))
		return shca_resp_fail(qp, msg, rwqe, SHCA_RESP_INV);
	ret = shca_resp_place(&sink, msg);
	shca_sgl_release(&sink);
	if (ret && sink.bad)
		return shca_resp_fail(qp, msg, rwqe, SHCA_RESP_PROT);
	if (ret) {
		/* The requester's memory went away under the copy. */
		shca_resp_complete(qp, msg, rwqe, IB_WC_REM_ABORT_ERR, 0);
		msg->status = IB_WC_LOC_PROT_ERR;
		return SHCA_TX_DONE;
	}
	shca_resp_complete(qp, msg, rwqe, IB_WC_SUCCESS, need);
	msg->status = IB_WC_SUCCESS;
	return SHCA_TX_DONE;
}

/* Takes a receive WQE for a SEND or a WRITE with immediate. */
static enum shca_tx shca_resp_recv(struct shca_qp *qp, struct shca_msg *msg)
{
	struct shca_rwqe rwqe;
	enum shca_tx tx;

	if (!shca_resp_take(qp, msg, &rwqe, &tx))
		return tx;
	if (msg->opcode != IB_WR_RDMA_WRITE_WITH_IMM)
		return shca_resp_send(qp, msg, &rwqe);
	shca_resp_complete(qp, msg, &rwqe, IB_WC_SUCCESS, msg->len);
	msg->status = IB_WC_SUCCESS;
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
				    access);
}

/* WRITE (+IMM) and READ: copy between the requester and the target. */
static enum shca_tx shca_resp_rdma(struct shca_qp *qp, struct shca_msg *msg,
				   int access)
{
	struct shca_sgl target;
	int ret;

	ret = shca_resp_target(qp, msg, &target, access);
	if (!ret && access == IB_ACCESS_REMOTE_WRITE)
		ret = shca_sgl_copy(&target, msg->payload, msg->len);
	else if (!ret)
		ret = shca_sgl_copy(msg->payload, &target, msg->len);
	shca_sgl_release(&target);
	if (ret && msg->payload->bad) {
		msg->status = IB_WC_LOC_PROT_ERR;
		return SHCA_TX_DONE;
	}
	if (ret)
		return shca_resp_refuse(qp, msg, IB_WC_REM_ACCESS_ERR, true);
	if (msg->opcode == IB_WR_RDMA_WRITE_WITH_IMM)
		return shca_resp_recv(qp, msg);
	msg->status = IB_WC_SUCCESS;
	return SHCA_TX_DONE;
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
	if (!shca_resp_accepts(qp, msg))
		return SHCA_TX_LOST;

	switch (msg->opcode) {
	case IB_WR_SEND:
	case IB_WR_SEND_WITH_IMM:
	case IB_WR_SEND_WITH_INV:
		return shca_resp_recv(qp, msg);
	case IB_WR_RDMA_WRITE:
	case IB_WR_RDMA_WRITE_WITH_IMM:
		return shca_resp_rdma(qp, msg, IB_ACCESS_REMOTE_WRITE);
	case IB_WR_RDMA_READ:
		return shca_resp_rdma(qp, msg, IB_ACCESS_REMOTE_READ);
	case IB_WR_ATOMIC_CMP_AND_SWP:
	case IB_WR_ATOMIC_FETCH_AND_ADD:
		return shca_resp_atomic(qp, msg);
	}
	return shca_resp_refuse(qp, msg, IB_WC_REM_INV_REQ_ERR, true);
}
