// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The work queues' data path, below the engine and the transports:
 * taking receive WQEs (of a QP or an SRQ) for the responder, writing
 * CQEs, flushing a QP in an error state, moving a QP to one, finding
 * a QP by number and a multicast group's members by its GID.  The
 * objects (qp.c, cq.c, srq.c, mcast.c) create and destroy what these
 * work on; posting is post.c's.
 *
 * A QP in the error state completes everything posted to it with
 * IB_WC_WR_FLUSH_ERR, from the engine work: never inside the post that
 * asked for it, so a consumer whose completion handler reposts cannot
 * recurse.
 */

#include <kunit/visibility.h>

#include "compat.h"
#include "cq.h"
#include "dev.h"
#include "engine.h"
#include "mcast.h"
#include "qp.h"
#include "srq.h"
#include "trace.h"

/* Work queue entries flushed per run of the engine, before it yields. */
#define SHCA_FLUSH_BATCH 256

/* What each send opcode completes as, and which QP types may post it. */
static const struct {
	u8 wc_opcode;
	u8 qp_types;
} shca_send_ops[] = {
	[IB_WR_RDMA_WRITE] = { IB_WC_RDMA_WRITE, SHCA_QPT_CONNECTED },
	[IB_WR_RDMA_WRITE_WITH_IMM] = { IB_WC_RDMA_WRITE, SHCA_QPT_CONNECTED },
	[IB_WR_SEND] = { IB_WC_SEND, SHCA_QPT_CONNECTED | SHCA_QPT_DATAGRAM },
	[IB_WR_SEND_WITH_IMM] = { IB_WC_SEND,
				  SHCA_QPT_CONNECTED | SHCA_QPT_DATAGRAM },
	[IB_WR_RDMA_READ] = { IB_WC_RDMA_READ, BIT(IB_QPT_RC) },
	[IB_WR_ATOMIC_CMP_AND_SWP] = { IB_WC_COMP_SWAP, BIT(IB_QPT_RC) },
	[IB_WR_ATOMIC_FETCH_AND_ADD] = { IB_WC_FETCH_ADD, BIT(IB_QPT_RC) },
	[SHCA_WR_FLUSH] = { SHCA_WC_FLUSH, BIT(IB_QPT_RC) },
	[SHCA_WR_ATOMIC_WRITE] = { SHCA_WC_ATOMIC_WRITE, BIT(IB_QPT_RC) },
	[IB_WR_LOCAL_INV] = { IB_WC_LOCAL_INV, SHCA_QPT_CONNECTED },
	[IB_WR_BIND_MW] = { IB_WC_BIND_MW, SHCA_QPT_CONNECTED },
	[IB_WR_SEND_WITH_INV] = { IB_WC_SEND, BIT(IB_QPT_RC) },
	[IB_WR_REG_MR] = { IB_WC_REG_MR, SHCA_QPT_CONNECTED },
};

/*
 * May @qp post @opcode?  REG_MR is for kernel consumers only, BIND_MW and
 * FLUSH for user space only (kernel verbs have no memory windows, and no
 * work request that carries a FLUSH's placement, level and length).
 */
bool shca_send_op_ok(const struct shca_qp *qp, unsigned int opcode)
{
	if (opcode == IB_WR_REG_MR && qp->ibqp.uobject)
		return false;
	if ((opcode == IB_WR_BIND_MW || opcode == SHCA_WR_FLUSH) &&
	    !qp->ibqp.uobject)
		return false;
	return opcode < ARRAY_SIZE(shca_send_ops) &&
	       shca_send_ops[opcode].qp_types & BIT(qp->ibqp.qp_type);
}

/* The ib_wc_opcode a send WQE completes with, even a malformed one. */
u8 shca_send_wc_opcode(unsigned int opcode)
{
	return opcode < ARRAY_SIZE(shca_send_ops) ?
	       shca_send_ops[opcode].wc_opcode : IB_WC_SEND;
}

/**
 * shca_rq_pop() - take the next receive WQE of a QP's receive queue
 * @qp: the QP, which has no SRQ
 * @wqe: where to copy the WQE's header
 * @sge: where to copy its SGEs: room for the queue's max_sge
 *
 * Copied out before use: a user QP's ring is writable by the process.
 *
 * Context: any.
 * Return: 0, -ENOENT when the queue is empty, -EINVAL for a malformed WQE
 * (consumed all the same), -EOVERFLOW when the producer index is out of
 * range.
 */
int shca_rq_pop(struct shca_qp *qp, struct softhca_recv_wqe *wqe,
		struct softhca_sge *sge)
{
	struct shca_queue *q = &qp->rq.queue;
	const struct softhca_recv_wqe *slot;
	unsigned long flags;
	int ret = 0;

	spin_lock_irqsave(&qp->rq.lock, flags);
	if (!shca_queue_pending(q)) {
		ret = shca_queue_overrun(q) ? -EOVERFLOW : -ENOENT;
		goto out_unlock;
	}
	slot = shca_queue_entry(q, q->cons);
	memcpy(wqe, slot, sizeof(*wqe));
	if (wqe->num_sge > qp->rq.max_sge)
		ret = -EINVAL;
	else
		memcpy(sge, slot + 1, wqe->num_sge * sizeof(*sge));
	shca_queue_consumed(q, 1);
out_unlock:
	spin_unlock_irqrestore(&qp->rq.lock, flags);
	return ret;
}

/*
 * Completes up to SHCA_FLUSH_BATCH WQEs of @q with IB_WC_WR_FLUSH_ERR,
 * signalled or not, as the IBA has it for a QP in error.  Once the queue
 * is empty, its producer must ring for the flush of what it posts next.
 * Return: true when there may be more.
 */
static bool shca_wq_flush(struct shca_qp *qp, struct shca_queue *q,
			  struct ib_cq *ibcq, bool send)
{
	struct softhca_cqe cqe = {
		.status = IB_WC_WR_FLUSH_ERR,
		.opcode = IB_WC_RECV,
		.qp_num = qp->ibqp.qp_num,
	};
	u32 n, i;

	shca_queue_wake(q);
	n = min(shca_queue_pending(q), SHCA_FLUSH_BATCH);
	for (i = 0; i < n; i++) {
		const struct softhca_send_wqe *wqe =
			shca_queue_entry(q, q->cons);

		/* Both kinds of WQE start with wr_id. */
		cqe.wr_id = READ_ONCE(wqe->wr_id);
		if (send)
			cqe.opcode = shca_send_wc_opcode(READ_ONCE(wqe->opcode));
		/* Free the slot first: the completion may be reposted at once. */
		shca_queue_consumed(q, 1);
		shca_cq_push(to_shca_cq(ibcq), &cqe, true);
	}
	if (n == SHCA_FLUSH_BATCH)
		return true;
	/* What is posted from now on is flushed when the doorbell rings. */
	trace_softhca_doorbell_wanted(qp->ibqp.device, qp->ibqp.qp_num, send);
	return shca_queue_sleep(q, 0);
}

/**
 * shca_qp_flush() - flush a batch of a QP's WQEs
 * @qp: the QP, in SQE or ERR
 * @recv: flush the receive queue too (ERR)
 *
 * Context: the QP's engine work, which owns the send queue's consumer
 * index; the receive queue's is shared with responders, under its lock.
 * Return: true when there may be more.
 */
bool shca_qp_flush(struct shca_qp *qp, bool recv)
{
	unsigned long flags;
	bool more;

	more = shca_wq_flush(qp, &qp->sq.queue, qp->ibqp.send_cq, true);
	if (!recv || qp->ibqp.srq)
		return more;
	spin_lock_irqsave(&qp->rq.lock, flags);
	more |= shca_wq_flush(qp, &qp->rq.queue, qp->ibqp.recv_cq, false);
	spin_unlock_irqrestore(&qp->rq.lock, flags);
	return more;
}

/*
 * The provider arms a user CQ in the ring's control block (softhca-abi.h);
 * the arm fires once, for the first CQE that matches it.
 */
static bool shca_cq_user_armed(struct shca_queue *q, bool solicited)
{
	u32 arm;

	/*
	 * The CQE is released before the arm is read: pairs with the
	 * provider's barrier between arming and polling again.
	 */
	smp_mb();
	arm = READ_ONCE(q->ctrl->arm);
	if (arm != SOFTHCA_CQ_ARM_NEXT &&
	    (arm != SOFTHCA_CQ_ARM_SOLICITED || !solicited))
		return false;
	return cmpxchg(&q->ctrl->arm, arm, 0) == arm;
}

/**
 * shca_cq_push() - add a completion to a CQ
 * @cq: the CQ
 * @cqe: the completion
 * @solicited: it completes a solicited event
 *
 * On overflow the completion is lost and the CQ's consumer gets one
 * IB_EVENT_CQ_ERR; the CQ stays unusable, as the IBA has it.
 *
 * Context: any, hard-irq included.
 * Return: 0, or -ENOSPC when the CQ is full.
 */
int shca_cq_push(struct shca_cq *cq, const struct softhca_cqe *cqe,
		 bool solicited)
{
	struct shca_queue *q = &cq->queue;
	unsigned long flags;
	int ret = 0;

	spin_lock_irqsave(&cq->prod_lock, flags);
	if (unlikely(cq->overflow || !shca_queue_room(q))) {
		if (!cq->overflow) {
			ibdev_dbg_ratelimited(cq->ibcq.device,
					      "CQ of %u entries overflows\n",
					      q->num);
			cq->overflow = true;
			shca_event_raise(&cq->events, IB_EVENT_CQ_ERR);
		}
		ret = -ENOSPC;
		goto out_unlock;
	}
	memcpy(shca_queue_entry(q, q->prod), cqe, sizeof(*cqe));
	shca_queue_produced(q, 1);
	if (cq->notify == IB_CQ_NEXT_COMP ||
	    (cq->notify == IB_CQ_SOLICITED && solicited)) {
		cq->notify = 0;
		queue_work_on(cq->cpu, shca_wq, &cq->comp_work);
	} else if (q->mmap_entry && shca_cq_user_armed(q, solicited)) {
		queue_work_on(cq->cpu, shca_wq, &cq->comp_work);
	}
out_unlock:
	spin_unlock_irqrestore(&cq->prod_lock, flags);
	trace_softhca_cqe(cq->ibcq.device, cq->ibcq.res.id, cqe->qp_num,
			  cqe->wr_id, cqe->status, cqe->opcode, cqe->byte_len,
			  ret == -ENOSPC);
	return ret;
}
EXPORT_SYMBOL_IF_KUNIT(shca_cq_push);

/**
 * shca_srq_pop() - take the next receive WQE of an SRQ
 * @srq: the SRQ
 * @wqe: where to copy the WQE's header
 * @sge: where to copy its SGEs: room for the SRQ's max_sge
 *
 * The WQE is copied out before use: a user SRQ's ring is writable by the
 * process at any time.
 *
 * Context: any, hard-irq included.
 * Return: 0, -ENOENT when the SRQ is empty, -EINVAL for a malformed WQE
 * (consumed all the same), -EOVERFLOW when the producer index is out of
 * range: then the SRQ is broken for good, and its consumer gets
 * IB_EVENT_SRQ_ERR once.
 */
int shca_srq_pop(struct shca_srq *srq, struct softhca_recv_wqe *wqe,
		 struct softhca_sge *sge)
{
	struct shca_queue *q = &srq->queue;
	const struct softhca_recv_wqe *slot;
	unsigned long flags;
	u32 left;
	int ret = 0;

	spin_lock_irqsave(&srq->lock, flags);
	left = shca_queue_pending(q);
	if (unlikely(srq->broken || (!left && shca_queue_overrun(q)))) {
		if (!srq->broken)
			shca_event_raise(&srq->events, IB_EVENT_SRQ_ERR);
		srq->broken = true;
		ret = -EOVERFLOW;
		goto out_unlock;
	}
	if (!left) {
		ret = -ENOENT;
		goto out_unlock;
	}
	slot = shca_queue_entry(q, q->cons);
	memcpy(wqe, slot, sizeof(*wqe));
	if (wqe->num_sge > srq->max_sge)
		ret = -EINVAL;
	else
		memcpy(sge, slot + 1, wqe->num_sge * sizeof(*sge));
	shca_queue_consumed(q, 1);
	if (srq->limit && left - 1 < srq->limit) {
		srq->limit = 0;
		shca_event_raise(&srq->events, IB_EVENT_SRQ_LIMIT_REACHED);
	}
out_unlock:
	spin_unlock_irqrestore(&srq->lock, flags);
	return ret;
}
EXPORT_SYMBOL_IF_KUNIT(shca_srq_pop);

/* Sets @qp's state; under its state_lock. */
void shca_qp_state_locked(struct shca_qp *qp, enum ib_qp_state state)
{
	trace_softhca_qp_state(qp->ibqp.device, qp->ibqp.qp_num, qp->state,
			       state);
	WRITE_ONCE(qp->state, state);
}

/**
 * shca_qp_error() - move a QP to an error state from the data path
 * @qp: the QP
 * @state: IB_QPS_ERR, or IB_QPS_SQE for a UC or UD send error
 *
 * The engine then flushes what is left.  A QP already past the state
 * (or never started) stays as it is.
 *
 * Context: any.
 */
void shca_qp_error(struct shca_qp *qp, enum ib_qp_state state)
{
	unsigned long flags;
	enum ib_qp_state cur;
	bool change;

	spin_lock_irqsave(&qp->state_lock, flags);
	cur = qp->state;
	if (state == IB_QPS_ERR)
		change = cur >= IB_QPS_RTR && cur <= IB_QPS_SQE;
	else
		change = cur == IB_QPS_RTS || cur == IB_QPS_SQD;
	if (change)
		shca_qp_state_locked(qp, state);
	spin_unlock_irqrestore(&qp->state_lock, flags);
	if (change) {
		/* Pairs with the barrier in shca_qp_doorbell(). */
		smp_mb();
		shca_engine_kick(qp);
	}
}

/**
 * shca_qp_fatal() - a QP's own process broke one of its rings
 * @qp: the QP
 *
 * Nothing on the ring can be trusted, so nothing more is taken from it:
 * the QP goes to the error state and its consumer gets IB_EVENT_QP_FATAL
 * (the IBA's local work queue catastrophic error).  Nothing outside the
 * QP is affected.
 *
 * Context: any.
 */
void shca_qp_fatal(struct shca_qp *qp)
{
	ibdev_dbg_ratelimited(qp->ibqp.device, "QP %u: ring index overrun\n",
			      qp->ibqp.qp_num);
	shca_qp_error(qp, IB_QPS_ERR);
	shca_event_raise(&qp->events, IB_EVENT_QP_FATAL);
}

static void shca_qp_release(struct kref *ref)
{
	complete(&container_of(ref, struct shca_qp, ref)->released);
}

/**
 * shca_qp_get() - find a QP by number and hold it
 * @dev: the device
 * @qpn: the QP number
 *
 * Context: any, hard-irq included.
 * Return: the QP, to release with shca_qp_put(), or NULL.
 */
struct shca_qp *shca_qp_get(struct shca_dev *dev, u32 qpn)
{
	struct shca_qp *qp;
	unsigned long flags;

	xa_lock_irqsave(&dev->qps, flags);
	qp = xa_load(&dev->qps, qpn);
	if (qp && !kref_get_unless_zero(&qp->ref))
		qp = NULL;
	xa_unlock_irqrestore(&dev->qps, flags);
	return qp;
}
EXPORT_SYMBOL_IF_KUNIT(shca_qp_get);

void shca_qp_put(struct shca_qp *qp)
{
	kref_put(&qp->ref, shca_qp_release);
}
EXPORT_SYMBOL_IF_KUNIT(shca_qp_put);

/**
 * shca_qp_get_next() - walk a device's QPs, holding each in turn
 * @dev: the device
 * @qpn: where to start; set to the number of the QP returned
 *
 * Context: any, hard-irq included.
 * Return: the QP of the lowest number from @qpn on, to release with
 * shca_qp_put(), or NULL past the last.
 */
struct shca_qp *shca_qp_get_next(struct shca_dev *dev, unsigned long *qpn)
{
	struct shca_qp *qp;
	unsigned long flags;

	xa_lock_irqsave(&dev->qps, flags);
	qp = xa_find(&dev->qps, qpn, ULONG_MAX, XA_PRESENT);
	/* One being destroyed is skipped. */
	while (qp && !kref_get_unless_zero(&qp->ref))
		qp = xa_find_after(&dev->qps, qpn, ULONG_MAX, XA_PRESENT);
	xa_unlock_irqrestore(&dev->qps, flags);
	return qp;
}

/**
 * shca_mcg_find() - a device's multicast group, whose members are QPNs
 * @dev: the device
 * @mgid: the group's GID
 *
 * Context: under rcu_read_lock(), or on the command queue (mcast.c).
 * Return: the group, valid until rcu_read_unlock() (on the command
 * queue: until the queue changes it), or NULL when no QP is attached.
 */
struct shca_mcg *shca_mcg_find(struct shca_dev *dev, const union ib_gid *mgid)
{
	u32 bkt = hash_min(shca_mcg_key(mgid), HASH_BITS(dev->mcgs));
	struct shca_mcg *mcg;

	hlist_for_each_entry_rcu(mcg, &dev->mcgs[bkt], node,
				 lockdep_is_held(&dev->cmdq.exec_lock)) {
		if (!memcmp(&mcg->mgid, mgid, sizeof(*mgid)))
			return mcg;
	}
	return NULL;
}
