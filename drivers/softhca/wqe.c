// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Posting work requests, and flushing them.
 *
 * A post checks the work request, writes it into the ring as a WQE and
 * rings the doorbell; it never moves payload (but for inline data, at most
 * SHCA_MAX_INLINE bytes) and never completes anything itself.  Posts run in
 * any context, hard-irq included, under the work queue's own spinlock.
 *
 * The doorbell queues the QP's engine work (engine.c), which executes the
 * send queue.  Receive WQEs are taken by responders (resp.c) under the
 * same lock posters use, since several requesters may reach one QP at
 * once.  A QP in the error state completes everything posted to it with
 * IB_WC_WR_FLUSH_ERR, from the engine work: never inside the post that
 * asked for it, so a consumer whose completion handler reposts cannot
 * recurse.
 *
 * A user QP's provider writes its WQEs into the rings itself; what reaches
 * post_send and post_recv for it is only the doorbell, a system call,
 * which may run the send queue's engine (shca_engine_doorbell_user()).
 *
 * The rest is the data path's side of the objects, which the engine and
 * the responder use: taking receive WQEs (of a QP or an SRQ), producing
 * CQEs, and moving a QP to an error state.  The objects (cq.c, srq.c,
 * qp.c) create and destroy what these work on.
 */

#include <kunit/visibility.h>

#include "cq.h"
#include "dev.h"
#include "engine.h"
#include "qp.h"
#include "srq.h"
#include "trace.h"

/* Work queue entries flushed per run of the engine, before it yields. */
#define SHCA_FLUSH_BATCH 256

#define SHCA_QPT_CONNECTED (BIT(IB_QPT_RC) | BIT(IB_QPT_UC))
#define SHCA_QPT_DATAGRAM (BIT(IB_QPT_UD) | BIT(IB_QPT_GSI))

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
	[IB_WR_LOCAL_INV] = { IB_WC_LOCAL_INV, SHCA_QPT_CONNECTED },
	[IB_WR_SEND_WITH_INV] = { IB_WC_SEND, BIT(IB_QPT_RC) },
	[IB_WR_REG_MR] = { IB_WC_REG_MR, SHCA_QPT_CONNECTED },
};

/* May @qp post @opcode?  REG_MR is for kernel consumers only. */
bool shca_send_op_ok(const struct shca_qp *qp, unsigned int opcode)
{
	if (opcode == IB_WR_REG_MR && qp->ibqp.uobject)
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

static u32 shca_send_wqe_ex(const struct ib_send_wr *wr)
{
	switch (wr->opcode) {
	case IB_WR_SEND_WITH_IMM:
	case IB_WR_RDMA_WRITE_WITH_IMM:
		return (__force u32)wr->ex.imm_data;
	case IB_WR_SEND_WITH_INV:
	case IB_WR_LOCAL_INV:
		return wr->ex.invalidate_rkey;
	default:
		return 0;
	}
}

static void shca_send_wqe_op(struct softhca_send_wqe *wqe,
			     const struct ib_send_wr *wr)
{
	switch (wr->opcode) {
	case IB_WR_RDMA_WRITE:
	case IB_WR_RDMA_WRITE_WITH_IMM:
	case IB_WR_RDMA_READ:
		wqe->rdma.remote_addr = rdma_wr(wr)->remote_addr;
		wqe->rdma.rkey = rdma_wr(wr)->rkey;
		break;
	case IB_WR_ATOMIC_CMP_AND_SWP:
	case IB_WR_ATOMIC_FETCH_AND_ADD:
		wqe->atomic.remote_addr = atomic_wr(wr)->remote_addr;
		wqe->atomic.compare_add = atomic_wr(wr)->compare_add;
		wqe->atomic.swap = atomic_wr(wr)->swap;
		wqe->atomic.rkey = atomic_wr(wr)->rkey;
		break;
	case IB_WR_REG_MR:
		wqe->reg.key = reg_wr(wr)->key;
		wqe->reg.access = reg_wr(wr)->access;
		break;
	default:
		break;
	}
}

/* Copies inline data now: the caller may reuse its buffers on return. */
static int shca_send_wqe_inline(struct shca_qp *qp,
				struct softhca_send_wqe *wqe,
				const struct ib_send_wr *wr)
{
	void *data = wqe + 1;
	u32 len = 0;
	int i;

	for (i = 0; i < wr->num_sge; i++) {
		if (wr->sg_list[i].length > qp->max_inline - len)
			return -EINVAL;
		memcpy(data + len, (void *)(uintptr_t)wr->sg_list[i].addr,
		       wr->sg_list[i].length);
		len += wr->sg_list[i].length;
	}
	wqe->flags |= SOFTHCA_WQE_INLINE;
	wqe->inline_len = len;
	return 0;
}

static void shca_wqe_sges(struct softhca_sge *sge, const struct ib_sge *sg,
			  int num)
{
	int i;

	for (i = 0; i < num; i++)
		sge[i] = (struct softhca_sge){
			.addr = sg[i].addr,
			.length = sg[i].length,
			.lkey = sg[i].lkey,
		};
}

static int shca_send_wqe_write(struct shca_qp *qp,
			       struct softhca_send_wqe *wqe,
			       const struct ib_send_wr *wr)
{
	if (!shca_send_op_ok(qp, wr->opcode) || wr->num_sge < 0 ||
	    wr->num_sge > qp->sq.max_sge)
		return -EINVAL;

	*wqe = (struct softhca_send_wqe){
		.wr_id = wr->wr_id,
		.opcode = wr->opcode,
		.num_sge = wr->num_sge,
		.ex = shca_send_wqe_ex(wr),
	};
	if (wr->send_flags & IB_SEND_SIGNALED ||
	    qp->sq_sig_type == IB_SIGNAL_ALL_WR)
		wqe->flags |= SOFTHCA_WQE_SIGNALED;
	if (wr->send_flags & IB_SEND_SOLICITED)
		wqe->flags |= SOFTHCA_WQE_SOLICITED;
	if (wr->send_flags & IB_SEND_FENCE)
		wqe->flags |= SOFTHCA_WQE_FENCE;
	if (BIT(qp->ibqp.qp_type) & SHCA_QPT_DATAGRAM) {
		if (!ud_wr(wr)->ah)
			return -EINVAL;
		wqe->ud.ah = to_shca_ah(ud_wr(wr)->ah)->num;
		wqe->ud.remote_qpn = ud_wr(wr)->remote_qpn;
		wqe->ud.remote_qkey = ud_wr(wr)->remote_qkey;
	}
	shca_send_wqe_op(wqe, wr);
	if (wr->send_flags & IB_SEND_INLINE)
		return shca_send_wqe_inline(qp, wqe, wr);
	shca_wqe_sges((struct softhca_sge *)(wqe + 1), wr->sg_list,
		      wr->num_sge);
	return 0;
}

u32 shca_recv_wqe_size(u32 max_sge)
{
	return ALIGN(sizeof(struct softhca_recv_wqe) +
		     max_sge * sizeof(struct softhca_sge), SMP_CACHE_BYTES);
}

static int shca_recv_wqe_write(struct ib_device *ibdev, void *slot,
			       const struct ib_recv_wr *wr, u32 max_sge)
{
	struct softhca_recv_wqe *wqe = slot;

	if (wr->num_sge < 0 || wr->num_sge > max_sge) {
		ibdev_dbg_ratelimited(ibdev, "post_recv: %d SGEs (max %u)\n",
				      wr->num_sge, max_sge);
		return -EINVAL;
	}
	*wqe = (struct softhca_recv_wqe){
		.wr_id = wr->wr_id,
		.num_sge = wr->num_sge,
	};
	shca_wqe_sges((struct softhca_sge *)(wqe + 1), wr->sg_list,
		      wr->num_sge);
	return 0;
}

/*
 * Kicks the engine when it has something to do with the new WQEs: execute
 * them (sends, in RTS) or flush them (in SQE and ERR).
 */
static void shca_qp_doorbell(struct shca_qp *qp, bool send)
{
	enum ib_qp_state state;

	/*
	 * The WQEs are published before the state is read; pairs with the
	 * barrier after every state change, so that a QP changing state
	 * meanwhile handles them either way.
	 */
	smp_mb();
	state = READ_ONCE(qp->state);
	if (state == IB_QPS_ERR ||
	    (send && (state == IB_QPS_RTS || state == IB_QPS_SQE)))
		shca_engine_kick(qp);
}

/* A QP of an SRQ has no receive queue, nor its ring. */
static int shca_qp_rq_check(struct shca_qp *qp)
{
	if (!qp->ibqp.srq)
		return 0;
	ibdev_dbg_ratelimited(qp->ibqp.device,
			      "post_recv: QP %u uses an SRQ\n", qp->ibqp.qp_num);
	return -EINVAL;
}

/* The IBA lets a QP take sends from RTS on and receives from INIT on. */
static int shca_qp_post_check(struct shca_qp *qp, bool send)
{
	enum ib_qp_state state = READ_ONCE(qp->state);
	const char *verb = send ? "post_send" : "post_recv";

	if (send ? state < IB_QPS_RTS : state == IB_QPS_RESET) {
		ibdev_dbg_ratelimited(qp->ibqp.device,
				      "%s: QP %u in state %d\n", verb,
				      qp->ibqp.qp_num, state);
		return -EINVAL;
	}
	return send ? 0 : shca_qp_rq_check(qp);
}

/*
 * A user QP's doorbell: the provider wrote its WQEs into the shared ring
 * and published its producer index, then posted an empty WR list through
 * ib_uverbs (which passes an empty list on as NULL).  The engine copies
 * and checks every WQE it takes from the ring; the doorbell only kicks it,
 * in the states where it has something to do (shca_qp_doorbell()).  A WR
 * that ib_uverbs copied in is refused: it would race with the provider
 * for the ring's slots.  So is a receive doorbell of a QP of an SRQ: it
 * has no receive ring to look at.
 */
static int shca_qp_user_doorbell(struct shca_qp *qp, bool send,
				 bool has_wr)
{
	struct shca_queue *q;

	if (has_wr) {
		ibdev_dbg_ratelimited(qp->ibqp.device,
				      "%s: QP %u belongs to user space\n",
				      send ? "post_send" : "post_recv",
				      qp->ibqp.qp_num);
		return -EINVAL;
	}
	if (!send && shca_qp_rq_check(qp))
		return -EINVAL;
	q = send ? &qp->sq.queue : &qp->rq.queue;
	/*
	 * The engine is as good as running: it looks at the ring in every
	 * state it can reach from here.  Should it run in a worker, the
	 * process posts on meanwhile without ringing again.
	 */
	shca_queue_wake(q);
	if (!send || !READ_ONCE(q->ctrl->poster_waits)) {
		shca_qp_doorbell(qp, send);
		return 0;
	}
	/* As in shca_qp_doorbell(), but the run reads the state. */
	smp_mb();
	shca_engine_doorbell_user(qp);
	return 0;
}

/* Context: any, hard-irq included; bounded by the queue's size. */
int shca_post_send(struct ib_qp *ibqp, const struct ib_send_wr *wr,
		   const struct ib_send_wr **bad_wr)
{
	struct shca_qp *qp = to_shca_qp(ibqp);
	struct shca_queue *q = &qp->sq.queue;
	unsigned long flags;
	u32 room, n = 0;
	int ret;

	if (ibqp->uobject) {
		ret = shca_qp_user_doorbell(qp, true, wr);
		if (ret)
			*bad_wr = wr;
		return ret;
	}
	ret = shca_qp_post_check(qp, true);
	if (ret) {
		*bad_wr = wr;
		return ret;
	}
	spin_lock_irqsave(&qp->sq.lock, flags);
	room = shca_queue_room(q);
	for (; wr; wr = wr->next, n++) {
		if (n == room) {
			ret = -ENOMEM;
			break;
		}
		ret = shca_send_wqe_write(qp, shca_queue_entry(q, q->prod + n),
					  wr);
		if (ret) {
			ibdev_dbg_ratelimited(ibqp->device,
					      "post_send: QP %u: bad WR (opcode %d, %d SGEs)\n",
					      ibqp->qp_num, wr->opcode,
					      wr->num_sge);
			break;
		}
		trace_softhca_post_send(ibqp->device, ibqp->qp_num, wr);
	}
	shca_queue_produced(q, n);
	spin_unlock_irqrestore(&qp->sq.lock, flags);

	if (ret)
		*bad_wr = wr;
	if (n)
		shca_qp_doorbell(qp, true);
	return ret;
}

/**
 * shca_recv_wqes_post() - write receive WRs into a receive queue or SRQ
 * @ibdev: the device, for messages
 * @num: the number of the QP or SRQ, for the trace events
 * @srq: @q is an SRQ's
 * @q: the ring
 * @lock: the ring's posting lock
 * @max_sge: the most SGEs a WQE of @q holds
 * @wr: the chain of work requests
 * @bad_wr: set to the first WR not posted, on failure
 * @posted: set to how many were posted
 *
 * Context: any, hard-irq included; bounded by the ring's size.
 * Return: 0, -ENOMEM when the ring is full, -EINVAL for a bad WR.
 */
int shca_recv_wqes_post(struct ib_device *ibdev, u32 num, bool srq,
			struct shca_queue *q, spinlock_t *lock, u32 max_sge,
			const struct ib_recv_wr *wr,
			const struct ib_recv_wr **bad_wr, u32 *posted)
{
	unsigned long flags;
	u32 room, n = 0;
	int ret = 0;

	spin_lock_irqsave(lock, flags);
	room = shca_queue_room(q);
	for (; wr; wr = wr->next, n++) {
		if (n == room) {
			ret = -ENOMEM;
			break;
		}
		ret = shca_recv_wqe_write(ibdev, shca_queue_entry(q, q->prod + n),
					  wr, max_sge);
		if (ret)
			break;
		trace_softhca_post_recv(ibdev, num, srq, wr);
	}
	shca_queue_produced(q, n);
	spin_unlock_irqrestore(lock, flags);
	if (ret)
		*bad_wr = wr;
	*posted = n;
	return ret;
}

/* Context: any, hard-irq included; bounded by the queue's size. */
int shca_post_recv(struct ib_qp *ibqp, const struct ib_recv_wr *wr,
		   const struct ib_recv_wr **bad_wr)
{
	struct shca_qp *qp = to_shca_qp(ibqp);
	u32 posted;
	int ret;

	if (ibqp->uobject) {
		ret = shca_qp_user_doorbell(qp, false, wr);
		if (ret)
			*bad_wr = wr;
		return ret;
	}
	ret = shca_qp_post_check(qp, false);
	if (ret) {
		*bad_wr = wr;
		return ret;
	}
	ret = shca_recv_wqes_post(ibqp->device, ibqp->qp_num, false,
				  &qp->rq.queue, &qp->rq.lock, qp->rq.max_sge,
				  wr, bad_wr, &posted);
	if (posted)
		shca_qp_doorbell(qp, false);
	return ret;
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
	/* What is posted from now on is flushed when the doorbell rings. */
	return n == SHCA_FLUSH_BATCH || shca_queue_sleep(q, 0);
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
		queue_work(shca_wq, &cq->comp_work);
	} else if (q->mmap_entry && shca_cq_user_armed(q, solicited)) {
		queue_work(shca_wq, &cq->comp_work);
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
