// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Posting work requests.
 *
 * A post checks the work request, writes it into the ring as a WQE and
 * rings the doorbell; it never moves payload (but for inline data, at most
 * SHCA_MAX_INLINE bytes) and never completes anything itself.  Posts run in
 * any context, hard-irq included, under the work queue's own spinlock.
 *
 * The doorbell queues the QP's engine work (engine.c), which executes the
 * send queue.  Receive WQEs are taken by responders (resp.c) under the
 * same lock posters use, since several requesters may reach one QP at
 * once.
 *
 * A user QP's provider writes its WQEs into the rings itself; what reaches
 * post_send and post_recv for it is only the doorbell, a system call,
 * which runs the send queue's engine (shca_engine_doorbell_user()) or
 * wakes the worker of its process's doorbell (uctx.c).
 */

#include "ah.h"
#include "compat.h"
#include "dev.h"
#include "engine.h"
#include "qp.h"
#include "trace.h"
#include "uctx.h"

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

/*
 * An ATOMIC WRITE's 8 bytes, from its one SGE, read now like inline data
 * into the WQE's header (softhca_send_wqe.atomic_write), with its target.
 */
static int shca_send_wqe_atomic_write(struct softhca_send_wqe *wqe,
				      const struct ib_send_wr *wr)
{
	if (wr->num_sge != 1 ||
	    wr->sg_list[0].length != sizeof(wqe->atomic_write.data))
		return -EINVAL;
	wqe->atomic_write.remote_addr = rdma_wr(wr)->remote_addr;
	wqe->atomic_write.rkey = rdma_wr(wr)->rkey;
	memcpy(wqe->atomic_write.data, (void *)(uintptr_t)wr->sg_list[0].addr,
	       sizeof(wqe->atomic_write.data));
	wqe->num_sge = 0;
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
	if (wr->opcode == SHCA_WR_ATOMIC_WRITE)
		return shca_send_wqe_atomic_write(wqe, wr);
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
	bool waits, here;
	u64 start;

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
	waits = send && READ_ONCE(q->ctrl->poster_waits);
	if (send && !waits && shca_uctx_streams(qp)) {
		trace_softhca_doorbell(qp->ibqp.device, qp->ibqp.qp_num, send,
				       false);
		shca_uctx_ring_later(qp);
		return 0;
	}
	here = waits || (send && shca_engine_doorbell_here(shca_uctx_runs(qp)));
	trace_softhca_doorbell(qp->ibqp.device, qp->ibqp.qp_num, send, here);
	if (!here) {
		/* Its process's worker runs it, in any state, or its own work. */
		if (!send || !shca_uctx_ring(qp))
			shca_qp_doorbell(qp, send);
		return 0;
	}
	/* As in shca_qp_doorbell(), but the run reads the state. */
	smp_mb();
	if (waits) {
		/* The latency path: it reads no clock. */
		shca_engine_doorbell_user(qp);
		return 0;
	}
	/* A streaming poster's run is timed (shca_uctx_streams()). */
	start = ktime_get_ns();
	shca_engine_doorbell_user(qp);
	shca_uctx_ran_here(qp, start);
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
