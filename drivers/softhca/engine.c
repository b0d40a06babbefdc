// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The engine: executes send queue WQEs.
 *
 * Context.  Each QP has a work item on an engine workqueue, queued by
 * the doorbell (and by state changes and retry timers), and one for the
 * packets it receives from the wire (roce_rx.c).  A run holds the QP's
 * engine_lock, so a QP's send queue has a single consumer and its WQEs
 * execute in order; the two items may wait for each other.  A user QP's
 * doorbell may run the engine in its system call instead
 * (shca_engine_doorbell_user()).
 *
 * A QP's send queue work is unbound, kernel and user QPs alike: its
 * poster goes on posting, and the engine running beside it, on another
 * CPU, takes those WQEs in the same run.  On the poster's CPU it would
 * preempt the poster at every doorbell and leave the send queue empty,
 * and idle, each time (docs/performance.md, "The kernel's ULPs").  A user
 * QP's poster needs no doorbell system call while the engine runs (the
 * doorbell protocol of softhca-abi.h); where the worker has no CPU of its
 * own, its runs show it, and the doorbell runs the engine in the system
 * call (shca_engine_doorbell_here()), or, for a process whose doorbells
 * come as a stream, the worker polls it (uctx.c).  A user QP's doorbell
 * goes to the worker of its process's doorbell (uctx.c), which runs the
 * QPs the process posted to one after another, a short run each
 * (shca_engine_run_user()); a QP with more bytes than that goes on in
 * its own work.  A kernel QP whose consumer busy-polls a CQ of it
 * (shca_cq_spinning()) waits for each completion on its own CPU, and
 * there the engine runs: the per-CPU shca_local_wq has it as soon as the
 * poller yields, with no other CPU to wake.  Received packets go there
 * too, on the CPU whose softirq took them, where they are in cache and
 * no other CPU needs waking (between two guests under ib_send_lat, a
 * packet's completion took 0.33 ms at the median and 4 ms at the 90th
 * percentile from its arrival while the unbound worker woke the other
 * vCPU; on the receiving CPU, 0.13 and 0.31 ms).  Queued on either
 * workqueue, a QP's runs still hold its engine_lock one at a time.
 *
 * A QP whose engine is idle runs what it received in the receive softirq
 * itself (shca_engine_rx()), as rdma_rxe's responder does, and wakes no
 * worker: the packets, and what their answers settled in the window
 * (resends, completions).  Such a run holds run_lock, a spinlock, and
 * starts only while engine_lock is free; whoever takes engine_lock then
 * takes run_lock once (shca_engine_lock()), which waits out a run in the
 * softirq, and none starts until engine_lock is released.  So the QP's
 * engine state has one owner at a time, a sleeping one or the softirq.
 * The softirq's run sleeps nowhere: it takes no new WQE of the send
 * queue (which may execute a whole loopback message), and on a device
 * with an ODP MR, whose pages are faulted in by sleeping, every run is
 * the work's.  A QP with new WQEs posted is run by its receive work, as
 * before, which takes them in the same run as the answers that made
 * room for them: a streaming requester's.
 *
 * WQ_HIGHPRI, because it is latency; WQ_MEM_RECLAIM, because storage
 * ULPs wait on it under memory pressure.  shca_local_wq is also
 * WQ_CPU_INTENSIVE, because a run copies payload for as long as its
 * budget allows and must not hold up other work of the CPU's pool
 * (unbound work holds up nothing).  Being process context, a copy may
 * reschedule; tasklets and BH work (which 6.1 has not) could not.
 *
 * Fairness.  A run executes at most SHCA_ENGINE_BATCH WQEs or
 * SHCA_ENGINE_BUDGET bytes (a WQE is never split), then requeues itself
 * behind the other QPs' work.
 *
 * The window.  A WQE is copied out of the ring when the engine takes it
 * (struct shca_req).  Loopback executes it there and then.  An RC message
 * on the wire stays in the QP's window until its answer comes, and the
 * engine takes the next WQEs meanwhile, as long as the wire requester
 * (roce_req.c) has room for them; each run first acts on what the wire
 * said of the window (resends, an RNR wait, READ responses to place),
 * then completes its answered WQEs in order, from the head of the ring.
 *
 * Completions go to the CQ ring (shca_cq_push()), whose notification is
 * deferred to shca_wq: no consumer handler runs in this context, nor in
 * any post.
 */

#include <kunit/visibility.h>
#include <net/netlink.h>
#include <rdma/rdma_netlink.h>
#include <rdma/restrack.h>

#include "cq.h"
#include "dev.h"
#include "engine.h"
#include "mr.h"
#include "qp.h"
#include "resp.h"
#include "trace.h"
#include "transport.h"
#include "wire.h"

#define SHCA_ENGINE_BATCH 64

/* Messages an RC QP keeps in flight on the wire, at most. */
#define SHCA_ENGINE_WINDOW 32

/* rnr_retry and rnr_left: retry an RNR for ever. */
#define SHCA_RNR_RETRY_FOREVER 7

/* Send queue work; received packets and busy-polling consumers' QPs. */
static struct workqueue_struct *shca_engine_wq;
static struct workqueue_struct *shca_local_wq;

/*
 * The transports, in the order a message tries them: loopback reaches a
 * destination in this host, RoCEv2 any other.
 */
static const struct shca_transport *const shca_transports[] = {
	&shca_loop_transport,
	&shca_roce_transport,
};

#define shca_for_each_transport(t, i)					\
	for ((i) = 0; (i) < ARRAY_SIZE(shca_transports) &&		\
	     ((t) = shca_transports[i]); (i)++)

int shca_engine_init(void)
{
	shca_engine_wq = alloc_workqueue("softhca_engine",
					 WQ_UNBOUND | WQ_HIGHPRI |
					 WQ_MEM_RECLAIM, 0);
	if (!shca_engine_wq)
		return -ENOMEM;
	shca_local_wq = alloc_workqueue("softhca_local",
					WQ_HIGHPRI | WQ_CPU_INTENSIVE |
					WQ_MEM_RECLAIM, 0);
	if (!shca_local_wq)
		goto destroy_engine_wq;
	return 0;

destroy_engine_wq:
	destroy_workqueue(shca_engine_wq);
	return -ENOMEM;
}

void shca_engine_destroy(void)
{
	destroy_workqueue(shca_local_wq);
	destroy_workqueue(shca_engine_wq);
}

/* What the requester makes of one WQE. */
enum shca_step {
	SHCA_STEP_DONE,		/* completed successfully, or in the window */
	SHCA_STEP_WAIT,		/* retry when the timer fires */
	SHCA_STEP_BLOCKED,	/* not taken: wait for answers or room */
	SHCA_STEP_ERROR,	/* completed in error: the QP left RTS */
};

/* The outcome of a message, for the requester's completion. */
struct shca_req_result {
	enum ib_wc_status status;
	u32 byte_len;
	u8 rnr_timer;
};

/* The IBA's RNR NAK timer encodings (table 45), in microseconds. */
static const u32 shca_rnr_usecs[32] = {
	655360, 10, 20, 30, 40, 60, 80, 120, 160, 240, 320, 480, 640, 960,
	1280, 1920, 2560, 3840, 5120, 7680, 10240, 15360, 20480, 30720, 40960,
	61440, 81920, 122880, 163840, 245760, 327680, 491520,
};

#define SHCA_WQE_FLAGS (SOFTHCA_WQE_SIGNALED | SOFTHCA_WQE_SOLICITED | \
			SOFTHCA_WQE_FENCE | SOFTHCA_WQE_INLINE)

static bool shca_op_atomic(u8 opcode)
{
	return opcode == IB_WR_ATOMIC_CMP_AND_SWP ||
	       opcode == IB_WR_ATOMIC_FETCH_AND_ADD;
}

static bool shca_swqe_ok(struct shca_qp *qp, const struct shca_swqe *w)
{
	const struct softhca_send_wqe *hdr = &w->hdr;

	if (!shca_send_op_ok(qp, hdr->opcode) ||
	    hdr->flags & ~SHCA_WQE_FLAGS)
		return false;
	/* Its 8 bytes are in the header. */
	if (hdr->opcode == SHCA_WR_ATOMIC_WRITE)
		return !(hdr->flags & SOFTHCA_WQE_INLINE) && !hdr->num_sge;
	/* A placement type, a level, and no data. */
	if (hdr->opcode == SHCA_WR_FLUSH)
		return !(hdr->flags & SOFTHCA_WQE_INLINE) && !hdr->num_sge &&
		       hdr->flush.type &&
		       !(hdr->flush.type & ~(SHCA_FLUSH_GLOBAL |
					     SHCA_FLUSH_PERSISTENT)) &&
		       hdr->flush.level <= SHCA_FLUSH_MR &&
		       !memchr_inv(hdr->flush.reserved, 0,
				   sizeof(hdr->flush.reserved));
	if (hdr->flags & SOFTHCA_WQE_INLINE)
		return hdr->inline_len <= qp->max_inline;
	return hdr->num_sge <= qp->sq.max_sge;
}

/* BIND_MW: the window and the MR must have the QP's PD. */
static enum ib_wc_status shca_req_bind(struct shca_qp *qp,
				       const struct shca_swqe *w)
{
	struct shca_dev *dev = to_shca_dev(qp->ibqp.device);
	struct shca_mr *win, *mr = NULL;
	int ret = -EINVAL;

	win = shca_mr_get_index(dev, w->hdr.bind.mw_key);
	if (!win)
		return IB_WC_MW_BIND_ERR;
	if (win->kind != SHCA_MR_WINDOW || win->pd != qp->ibqp.pd)
		goto out_put;
	if (w->hdr.bind.length) {
		mr = shca_mr_get(dev, w->hdr.bind.mr_lkey);
		if (!mr)
			goto out_put;
	}
	ret = shca_mw_bind(win, w->hdr.bind.mw_key, mr, qp->ibqp.qp_num,
			   w->hdr.bind.addr, w->hdr.bind.length,
			   w->hdr.bind.access);
	/* Bound, the window keeps the MR's reference. */
	if (ret && mr)
		shca_mr_put(mr);
out_put:
	shca_mr_put(win);
	return ret ? IB_WC_MW_BIND_ERR : IB_WC_SUCCESS;
}

/*
 * REG_MR, BIND_MW and LOCAL_INV: executed by the requester, on its own
 * device.
 */
static enum ib_wc_status shca_req_local(struct shca_qp *qp,
					const struct shca_swqe *w)
{
	struct shca_dev *dev = to_shca_dev(qp->ibqp.device);
	bool reg = w->hdr.opcode == IB_WR_REG_MR;
	enum ib_wc_status status = IB_WC_LOC_PROT_ERR;
	struct shca_mr *mr;

	if (w->hdr.opcode == IB_WR_BIND_MW)
		return shca_req_bind(qp, w);

	mr = reg ? shca_mr_get_index(dev, w->hdr.reg.key) :
		   shca_mr_get(dev, w->hdr.ex);
	if (!mr)
		return status;
	if (mr->pd != qp->ibqp.pd)
		goto out_put;
	if (reg)
		status = shca_mr_fast_reg(mr, w->hdr.reg.key, w->hdr.reg.access) ?
			 IB_WC_MW_BIND_ERR : IB_WC_SUCCESS;
	else
		status = shca_mr_invalidate(mr, w->hdr.ex, qp->ibqp.qp_num) ?
			 IB_WC_LOC_PROT_ERR : IB_WC_SUCCESS;
out_put:
	shca_mr_put(mr);
	return status;
}

/* A UD WQE's AH, copied under the table's lock, which destroy_ah takes. */
static bool shca_req_ud_av(struct shca_qp *qp, u32 num, struct shca_av *av)
{
	struct shca_dev *dev = to_shca_dev(qp->ibqp.device);
	struct shca_ah *ah;
	unsigned long flags;
	bool found;

	xa_lock_irqsave(&dev->ahs, flags);
	ah = xa_load(&dev->ahs, num);
	/* Another process's AH has another PD. */
	found = ah && ah->ibah.pd == qp->ibqp.pd;
	if (found)
		*av = ah->av;
	/* Past the unlock, the AH may be destroyed and freed. */
	xa_unlock_irqrestore(&dev->ahs, flags);
	return found;
}

static u32 shca_req_qkey(struct shca_qp *qp, u32 qkey)
{
	/* A Q_Key with the high bit set means the QP's own (IBA 10.2.5). */
	return qkey & BIT(31) ? READ_ONCE(qp->attr.qkey) : qkey;
}

/* Where the message goes: the QP's path, or a UD WQE's AH. */
static enum ib_wc_status shca_req_dest(struct shca_qp *qp,
				       const struct shca_swqe *w,
				       struct shca_msg *msg, struct shca_av *av)
{
	struct shca_dev *dev = to_shca_dev(qp->ibqp.device);

	if (msg->qp_type != IB_QPT_UD) {
		msg->av = &qp->av;
		msg->dest_qpn = READ_ONCE(qp->attr.dest_qp_num);
		return IB_WC_SUCCESS;
	}
	if (!shca_req_ud_av(qp, w->hdr.ud.ah, av))
		return IB_WC_LOC_QP_OP_ERR;
	if (msg->len > ib_mtu_enum_to_int(shca_active_mtu(dev->ndev)))
		return IB_WC_LOC_LEN_ERR;
	msg->av = av;
	msg->dest_qpn = w->hdr.ud.remote_qpn;
	msg->qkey = shca_req_qkey(qp, w->hdr.ud.remote_qkey);
	return IB_WC_SUCCESS;
}

static void shca_req_msg(struct shca_qp *qp, const struct shca_swqe *w,
			 struct shca_msg *msg, struct shca_sgl *payload)
{
	const struct softhca_send_wqe *hdr = &w->hdr;
	bool atomic = shca_op_atomic(hdr->opcode);

	*msg = (struct shca_msg){
		.qp_type = qp->ibqp.qp_type == IB_QPT_GSI ? IB_QPT_UD :
			   qp->ibqp.qp_type,
		.opcode = hdr->opcode,
		.flags = hdr->flags,
		.ex = hdr->ex,
		.len = atomic ? sizeof(u64) : payload->len,
		.payload = payload,
		.src_qpn = qp->ibqp.qp_num,
		.smac = to_shca_dev(qp->ibqp.device)->ndev->dev_addr,
	};
	if (atomic) {
		msg->remote = (struct softhca_sge){
			.addr = hdr->atomic.remote_addr,
			.length = sizeof(u64),
			.lkey = hdr->atomic.rkey,
		};
		msg->compare_add = hdr->atomic.compare_add;
		msg->swap = hdr->atomic.swap;
	} else if (hdr->opcode == SHCA_WR_FLUSH) {
		msg->remote = (struct softhca_sge){
			.addr = hdr->flush.remote_addr,
			.length = hdr->flush.length,
			.lkey = hdr->flush.rkey,
		};
		msg->plt = hdr->flush.type;
		msg->sel = hdr->flush.level;
	} else {
		msg->remote = (struct softhca_sge){
			.addr = hdr->rdma.remote_addr,
			.length = msg->len,
			.lkey = hdr->rdma.rkey,
		};
	}
}

/*
 * The local SGEs: the source of a SEND or WRITE, the sink of the rest; an
 * ATOMIC WRITE's source, the bytes in its header.
 */
static enum ib_wc_status shca_req_payload(struct shca_qp *qp,
					  struct shca_swqe *w,
					  struct shca_sgl *payload)
{
	u8 op = w->hdr.opcode;
	bool sink = op == IB_WR_RDMA_READ || shca_op_atomic(op);

	if (op == SHCA_WR_ATOMIC_WRITE) {
		shca_sgl_init_buf(payload, w->hdr.atomic_write.data,
				  sizeof(w->hdr.atomic_write.data));
		return IB_WC_SUCCESS;
	}
	if (w->hdr.flags & SOFTHCA_WQE_INLINE) {
		if (sink)
			return IB_WC_LOC_QP_OP_ERR;
		shca_sgl_init_buf(payload, w->inline_data, w->hdr.inline_len);
		return IB_WC_SUCCESS;
	}
	if (shca_sgl_init(payload, to_shca_dev(qp->ibqp.device), qp->ibqp.pd,
			  sink ? IB_ACCESS_LOCAL_WRITE : 0, !qp->ibqp.uobject,
			  w->sge, w->hdr.num_sge))
		return IB_WC_LOC_LEN_ERR;
	if (shca_op_atomic(op) && payload->len < sizeof(u64))
		return IB_WC_LOC_LEN_ERR;
	/* Every local key before a byte leaves, as hardware would. */
	return shca_sgl_check(payload) ? IB_WC_LOC_PROT_ERR : IB_WC_SUCCESS;
}

/* Writes an atomic's original value to the local SGEs. */
static enum ib_wc_status shca_req_atomic_result(struct shca_sgl *payload,
						u64 orig)
{
	struct shca_sgl src;

	shca_sgl_init_buf(&src, &orig, sizeof(orig));
	return shca_sgl_copy(payload, &src, sizeof(orig)) ?
	       IB_WC_LOC_PROT_ERR : IB_WC_SUCCESS;
}

/*
 * Builds a WQE's message from the engine's copy: its payload (released
 * by the caller in any case), its fields, its path.
 */
static enum ib_wc_status shca_req_build(struct shca_qp *qp,
					struct shca_swqe *w,
					struct shca_msg *msg,
					struct shca_sgl *payload,
					struct shca_av *av)
{
	enum ib_wc_status status;

	status = shca_req_payload(qp, w, payload);
	if (status != IB_WC_SUCCESS)
		return status;
	shca_req_msg(qp, w, msg, payload);
	return shca_req_dest(qp, w, msg, av);
}

static bool shca_req_local_op(u8 opcode)
{
	return opcode == IB_WR_REG_MR || opcode == IB_WR_BIND_MW ||
	       opcode == IB_WR_LOCAL_INV;
}

/*
 * Will the WQE after the one being sent go on the wire right behind it, in
 * this run or the next?  Yes when the QP is ready to send, the window has
 * a slot for it, and it is posted and a message: a local operation waits
 * for every answer before it.  Its requester then leaves the ACK to the
 * last message of the burst (or to the congestion window's end), and the
 * responder answers a burst, not each message of it: in the receive
 * softirq, which runs each packet as it comes, nothing else coalesces
 * them.  A wire message blocked for room asks for nothing more: the
 * window's end asked already, and READ and atomic responses come anyway.
 *
 * The next WQE's opcode is read here, before its copy is taken, as a
 * hint only: whatever a process writes there, the worst that follows is
 * an ACK that waits for the local ACK timeout, whose resend asks for it.
 */
static bool shca_req_followed(struct shca_qp *qp)
{
	struct shca_queue *q = &qp->sq.queue;
	u32 next = qp->req.taken + 1;
	const struct softhca_send_wqe *hdr;
	u8 opcode;

	if (READ_ONCE(qp->state) != IB_QPS_RTS || next >= qp->req.win ||
	    shca_queue_pending(q) <= next)
		return false;
	hdr = shca_queue_entry(q, q->cons + next);
	opcode = READ_ONCE(hdr->opcode);
	return shca_send_op_ok(qp, opcode) && !shca_req_local_op(opcode);
}

/*
 * Hands @msg to the first transport that reaches its destination.  Behind
 * messages in a window, a message follows them there.
 */
static enum shca_tx shca_req_send(struct shca_qp *qp, struct shca_msg *msg)
{
	const struct shca_transport *t;
	enum shca_tx tx = SHCA_TX_REMOTE;
	unsigned int i;

	if (qp->req.taken)
		return qp->req.tr->send(qp, msg);
	shca_for_each_transport(t, i) {
		tx = t->send(qp, msg);
		if (tx == SHCA_TX_REMOTE)
			continue;
		if (tx == SHCA_TX_PENDING)
			qp->req.tr = t;
		break;
	}
	return tx;
}

/* Builds the message, hands it to the transport, reads the verdict. */
static enum shca_tx shca_req_transport(struct shca_qp *qp,
				       struct shca_swqe *w,
				       struct shca_wire_slot *ws,
				       struct shca_req_result *res)
{
	struct shca_sgl payload;
	struct shca_msg msg;
	struct shca_av av;
	enum shca_tx tx = SHCA_TX_DONE;

	res->status = shca_req_build(qp, w, &msg, &payload, &av);
	if (res->status != IB_WC_SUCCESS)
		goto out_release;
	res->byte_len = msg.len;
	msg.slot = ws;
	msg.followed = msg.qp_type == IB_QPT_RC && shca_req_followed(qp);

	tx = shca_req_send(qp, &msg);
	if (tx == SHCA_TX_PENDING || tx == SHCA_TX_BLOCKED ||
	    tx == SHCA_TX_PAUSED)
		goto out_release;
	/* Unreliable services are not told what became of a message. */
	if (tx != SHCA_TX_DONE && msg.qp_type != IB_QPT_RC) {
		tx = SHCA_TX_DONE;
		msg.status = IB_WC_SUCCESS;
	}
	res->status = msg.status;
	res->rnr_timer = msg.rnr_timer;
	if (tx == SHCA_TX_DONE && res->status == IB_WC_SUCCESS &&
	    shca_op_atomic(msg.opcode))
		res->status = shca_req_atomic_result(&payload, msg.atomic_orig);
out_release:
	shca_sgl_release(&payload);
	return tx;
}

/*
 * The adaptive ACK timer's floor.  A guest's vCPU may not run for tens of
 * milliseconds (two guests on two host CPUs under TCG), and a timer that
 * fires before an answer could come sends the window again and closes
 * the congestion window.
 */
#define SHCA_ACK_MIN_NS (50 * NSEC_PER_MSEC)
/* Timeouts in a row that double it: enough to reach any local timeout. */
#define SHCA_ACK_BACKOFF_MAX 32

/*
 * The ACK timer's period for a QP whose local ACK timeout is @timeout
 * (IBA 9.7.6.1.3: 4.096 us << @timeout).  With the device's adaptive_ack,
 * and once the transport measured the path, it is the path's answer time
 * (SHCA_ACK_MIN_NS at least), doubled by each timeout since the window
 * last moved, and the local ACK timeout at most: a lost tail of a window,
 * or a lost ACK, costs a round trip or so instead of the local timeout,
 * which rdma_cm sets to seconds on RoCE.
 */
static u64 shca_req_ack_ns(struct shca_qp *qp, u8 timeout)
{
	const struct shca_window_ops *win = qp->req.tr->win;
	u64 full = 4096ULL << timeout, ns;

	if (!to_shca_dev(qp->ibqp.device)->adaptive_ack || !win->rto)
		return full;
	ns = win->rto(qp);
	if (!ns)
		return full;
	ns = max_t(u64, ns, SHCA_ACK_MIN_NS);
	/* Doubled @backoff times, it stays within full / ns * ns. */
	if (ns >= full || qp->req.backoff > ilog2(div64_u64(full, ns)))
		return full;
	return ns << qp->req.backoff;
}

/*
 * The window's ACK timer expired: it doubles.  A retry is counted for a
 * timer of the whole local ACK timeout, and for a shorter one once that
 * timeout has passed since the last answer (shca_req_heard()) or the last
 * retry counted, so that an adaptive timer gives up no sooner than
 * retry_cnt local ACK timeouts.  Return: false when the retries ran out.
 */
static bool shca_req_timed_out(struct shca_qp *qp)
{
	struct shca_req *req = &qp->req;
	u8 timeout = READ_ONCE(qp->attr.timeout);
	u64 full = 4096ULL << timeout, period;
	ktime_t now = ktime_get();

	period = shca_req_ack_ns(qp, timeout);
	if (req->backoff < SHCA_ACK_BACKOFF_MAX)
		req->backoff++;
	if (period < full && ktime_to_ns(ktime_sub(now, req->charged)) < full)
		return true;
	if (!req->retry_left)
		return false;
	req->retry_left--;
	req->charged = now;
	return true;
}

/* A retry wait is over, or the window's local ACK timeout passed. */
static enum hrtimer_restart shca_req_timer(struct hrtimer *timer)
{
	struct shca_qp *qp = container_of(timer, struct shca_qp, req.timer);

	if (READ_ONCE(qp->req.waiting))
		WRITE_ONCE(qp->req.waiting, false);
	else
		WRITE_ONCE(qp->req.expired, true);
	queue_work(qp->engine_wq, &qp->work);
	return HRTIMER_NORESTART;
}

/*
 * The responder answered RNR, or nothing answered: wait and retry, until
 * the QP's retry counts run out.  A local ACK timeout of 0 waits for
 * ever.
 */
static enum shca_step shca_req_wait(struct shca_qp *qp, enum shca_tx tx,
				    struct shca_req_result *res)
{
	struct shca_req *req = &qp->req;
	u8 timeout = READ_ONCE(qp->attr.timeout);
	u64 ns;

	if (tx == SHCA_TX_RNR) {
		res->status = IB_WC_RNR_RETRY_EXC_ERR;
		if (!req->rnr_left)
			return SHCA_STEP_ERROR;
		if (req->rnr_left != SHCA_RNR_RETRY_FOREVER)
			req->rnr_left--;
		ns = (u64)shca_rnr_usecs[res->rnr_timer & 31] * NSEC_PER_USEC;
	} else {
		res->status = IB_WC_RETRY_EXC_ERR;
		if (!req->retry_left)
			return SHCA_STEP_ERROR;
		req->retry_left--;
		ns = 4096ULL << timeout;
	}
	/* The window's ACK timer, which must not end this wait. */
	hrtimer_cancel(&req->timer);
	WRITE_ONCE(req->waiting, true);
	if (tx == SHCA_TX_RNR || timeout)
		hrtimer_start(&req->timer, ns_to_ktime(ns),
			      HRTIMER_MODE_REL_SOFT);
	return SHCA_STEP_WAIT;
}

static void shca_req_complete(struct shca_qp *qp, const struct shca_swqe *w,
			      const struct shca_req_result *res)
{
	struct softhca_cqe cqe = {
		.wr_id = w->hdr.wr_id,
		.status = res->status,
		.opcode = shca_send_wc_opcode(w->hdr.opcode),
		.byte_len = res->byte_len,
		.qp_num = qp->ibqp.qp_num,
	};
	bool ok = res->status == IB_WC_SUCCESS;

	if (ok && !(w->hdr.flags & SOFTHCA_WQE_SIGNALED))
		return;
	shca_cq_push(to_shca_cq(qp->ibqp.send_cq), &cqe, !ok);
}

/*
 * The next WQE of the send queue, after those in the window, copied out
 * of the ring when the engine first takes it (see struct shca_req), its
 * wire slot cleared; its retry counts, unless it joins a window's.
 */
static struct shca_swqe *shca_req_take(struct shca_qp *qp)
{
	struct shca_queue *q = &qp->sq.queue;
	struct shca_req *req = &qp->req;
	struct shca_swqe *w = shca_req_wqe(qp, req->taken);

	if (req->held)
		return w;
	memcpy(w, shca_queue_entry(q, q->cons + req->taken), req->wqe_size);
	*shca_req_ws(qp, req->taken) = (struct shca_wire_slot){};
	if (!req->taken) {
		req->rnr_left = READ_ONCE(qp->attr.rnr_retry);
		req->retry_left = READ_ONCE(qp->attr.retry_cnt);
	}
	req->held = true;
	return w;
}

/*
 * The WQE at the head of the send queue is done with: its slot is freed,
 * and it completes.  What a consumer may do on seeing the completion
 * holds before it is pushed: the slot is free for a repost.
 */
static enum shca_step shca_req_finish(struct shca_qp *qp,
				      const struct shca_swqe *w,
				      const struct shca_req_result *res)
{
	shca_queue_consumed(&qp->sq.queue, 1);
	/* After an error the QP is in its error state before the completion. */
	if (res->status != IB_WC_SUCCESS) {
		ibdev_dbg_ratelimited(qp->ibqp.device, "QP %u: WQE %#llx: %s\n",
				      qp->ibqp.qp_num, w->hdr.wr_id,
				      ib_wc_status_msg(res->status));
		shca_qp_error(qp, qp->ibqp.qp_type == IB_QPT_RC ? IB_QPS_ERR :
				  IB_QPS_SQE);
	}
	shca_req_complete(qp, w, res);
	return res->status == IB_WC_SUCCESS ? SHCA_STEP_DONE : SHCA_STEP_ERROR;
}

/*
 * A WQE that completes at once behind messages on the wire (in error:
 * a bad WQE, or memory that went away) joins the window answered, so
 * that it completes in its turn.
 */
static void shca_req_join(struct shca_qp *qp, const struct shca_swqe *w,
			  const struct shca_req_result *res)
{
	*shca_req_ws(qp, qp->req.taken) = (struct shca_wire_slot){
		.first = qp->req.psn,
		.len = res->byte_len,
		.wr_opcode = w->hdr.opcode,
		.answered = true,
		.status = res->status,
	};
	qp->req.held = false;
	qp->req.taken++;
}

/* Executes the next WQE of the send queue, or sends it into the window. */
static enum shca_step shca_req_one(struct shca_qp *qp, u32 *bytes)
{
	struct shca_req_result res = {};
	enum shca_step step = SHCA_STEP_DONE;
	struct shca_swqe *w;
	enum shca_tx tx;

	/* A full window's next slot is its head's. */
	if (qp->req.taken == qp->req.win)
		return SHCA_STEP_BLOCKED;
	w = shca_req_take(qp);
	if (!shca_swqe_ok(qp, w)) {
		res.status = IB_WC_LOC_QP_OP_ERR;
	} else if (shca_req_local_op(w->hdr.opcode)) {
		/* Executed once the messages before it are answered. */
		if (qp->req.taken) {
			qp->req.held = false;
			return SHCA_STEP_BLOCKED;
		}
		res.status = shca_req_local(qp, w);
	} else {
		tx = shca_req_transport(qp, w, shca_req_ws(qp, qp->req.taken),
					&res);
		*bytes = res.byte_len;
		switch (tx) {
		case SHCA_TX_PENDING:
			qp->req.held = false;
			qp->req.taken++;
			return SHCA_STEP_DONE;
		case SHCA_TX_BLOCKED:
			/* Copied again when there is room: its counts too. */
			qp->req.held = false;
			return SHCA_STEP_BLOCKED;
		case SHCA_TX_PAUSED:
			/* Its rest goes from the same copy. */
			return SHCA_STEP_BLOCKED;
		case SHCA_TX_DONE:
			break;
		default:
			step = shca_req_wait(qp, tx, &res);
			if (step == SHCA_STEP_WAIT)
				return step;
			break;
		}
	}

	if (qp->req.taken) {
		shca_req_join(qp, w, &res);
		return SHCA_STEP_DONE;
	}
	*bytes = res.byte_len;
	qp->req.held = false;
	return shca_req_finish(qp, w, &res);
}

/* Writes a completed atomic's original value to its local SGEs. */
static enum ib_wc_status shca_req_atomic_done(struct shca_qp *qp,
					      struct shca_swqe *w, u64 orig)
{
	enum ib_wc_status status;
	struct shca_sgl payload;

	status = shca_req_payload(qp, w, &payload);
	if (status == IB_WC_SUCCESS)
		status = shca_req_atomic_result(&payload, orig);
	shca_sgl_release(&payload);
	return status;
}

/* A message of the window needs this run: it is built again for it. */
static void shca_req_service(struct shca_qp *qp, u32 i)
{
	const struct shca_window_ops *win = qp->req.tr->win;
	struct shca_wire_slot *ws = shca_req_ws(qp, i);
	unsigned int need = win->need(qp, ws);
	enum ib_wc_status status;
	struct shca_sgl payload;
	struct shca_msg msg;
	struct shca_av av;

	if (!need)
		return;
	status = shca_req_build(qp, shca_req_wqe(qp, i), &msg, &payload, &av);
	if (status == IB_WC_SUCCESS)
		win->service(qp, ws, &msg, need);
	else
		win->fail(qp, ws, status);
	shca_sgl_release(&payload);
}

/* Completes the window's answered messages, in order, from its head. */
static enum shca_step shca_req_retire(struct shca_qp *qp)
{
	struct shca_req_result res;
	struct shca_wire_slot *ws;
	struct shca_swqe *w;

	while (qp->req.taken) {
		ws = shca_req_ws(qp, 0);
		w = shca_req_wqe(qp, 0);
		if (!ws->answered)
			return SHCA_STEP_DONE;
		res = (struct shca_req_result){
			.status = ws->status,
			.byte_len = ws->len,
		};
		if (res.status == IB_WC_SUCCESS && shca_op_atomic(w->hdr.opcode))
			res.status = shca_req_atomic_done(qp, w,
							  ws->atomic_orig);
		qp->req.taken--;
		if (shca_req_finish(qp, w, &res) == SHCA_STEP_ERROR)
			return SHCA_STEP_ERROR;
	}
	qp->req.tr->win->reset(qp);
	return SHCA_STEP_DONE;
}

/*
 * An answer came for the window's first message: progress, or an RNR NAK.
 * retry_cnt counts local ACK timeouts and sequence NAKs in a row, with no
 * answer between them, so it starts again, and so do the adaptive ACK
 * timer and the local ACK timeout it charges by.
 */
static void shca_req_heard(struct shca_qp *qp)
{
	struct shca_req *req = &qp->req;

	req->retry_left = READ_ONCE(qp->attr.retry_cnt);
	req->backoff = 0;
	req->charged = ktime_get();
}

/*
 * The window's messages: acts on what the transport said of them
 * (progress restarts the retry counts, an RNR NAK retry_cnt; a loss
 * resends while retry_cnt lasts, an RNR NAK waits while rnr_retry lasts),
 * places READ responses, completes those answered.
 */
static enum shca_step shca_req_window(struct shca_qp *qp)
{
	struct shca_req *req = &qp->req;
	const struct shca_window_ops *win = req->tr->win;
	bool expired = READ_ONCE(req->expired);
	struct shca_req_result res = {};
	u32 una, i;

	if (expired)
		WRITE_ONCE(req->expired, false);
	/* Progress since the last run: the retry counts start again. */
	una = win->una(qp);
	if (una != req->una) {
		req->una = una;
		shca_req_heard(qp);
		req->rnr_left = READ_ONCE(qp->attr.rnr_retry);
	}
	switch (win->act(qp, expired, &res.rnr_timer)) {
	case SHCA_WIRE_ACT_RNR:
		if (shca_req_wait(qp, SHCA_TX_RNR, &res) == SHCA_STEP_WAIT)
			return SHCA_STEP_WAIT;
		win->fail(qp, NULL, res.status);
		break;
	case SHCA_WIRE_ACT_LOST:
		/* Past retry_cnt, the first message not answered fails. */
		if (!req->retry_left) {
			win->fail(qp, NULL, IB_WC_RETRY_EXC_ERR);
			break;
		}
		req->retry_left--;
		win->resend(qp);
		break;
	case SHCA_WIRE_ACT_TIMEOUT:
		if (!shca_req_timed_out(qp)) {
			win->fail(qp, NULL, IB_WC_RETRY_EXC_ERR);
			break;
		}
		win->resend(qp);
		break;
	case SHCA_WIRE_ACT_RESEND:
		/* The RNR NAK waited for was an answer. */
		shca_req_heard(qp);
		win->resend(qp);
		break;
	case SHCA_WIRE_ACT_NONE:
		break;
	}
	for (i = 0; i < req->taken; i++)
		shca_req_service(qp, i);
	return shca_req_retire(qp);
}

/*
 * A run's first step: acts on what the wire said of the window.  Return:
 * true to go on; else the run ends, and @more says whether to run again.
 */
static bool shca_req_settle(struct shca_qp *qp, bool *more)
{
	enum shca_step step = SHCA_STEP_DONE;

	if (qp->req.taken)
		step = shca_req_window(qp);
	if (step != SHCA_STEP_WAIT && step != SHCA_STEP_ERROR)
		return true;
	*more = step == SHCA_STEP_ERROR;
	return false;
}

/*
 * The local ACK timer runs while the window has a message not answered,
 * from the last progress: a run that moved una restarts it.
 */
static void shca_req_arm(struct shca_qp *qp)
{
	struct shca_req *req = &qp->req;
	u8 timeout = READ_ONCE(qp->attr.timeout);
	u32 una;

	if (READ_ONCE(req->waiting))
		return;
	if (!req->taken || !req->tr->win->busy(qp)) {
		/* Nothing to time: a timeout that fired meanwhile is void. */
		if (hrtimer_active(&req->timer))
			hrtimer_cancel(&req->timer);
		WRITE_ONCE(req->expired, false);
		req->backoff = 0;
		req->charged = 0;
		return;
	}
	una = req->tr->win->una(qp);
	if (!timeout || (hrtimer_active(&req->timer) && req->armed == una))
		return;
	if (!req->charged)
		req->charged = ktime_get();
	req->armed = una;
	hrtimer_start(&req->timer, ns_to_ktime(shca_req_ack_ns(qp, timeout)),
		      HRTIMER_MODE_REL_SOFT);
}

/*
 * The QP went to its error state with WQEs taken (in the window, or held
 * for a retry): they are flushed as the engine took them, not as their
 * ring slots may read now.
 */
static void shca_req_flush_taken(struct shca_qp *qp)
{
	struct shca_req_result res = { .status = IB_WC_WR_FLUSH_ERR };
	struct shca_req *req = &qp->req;
	struct shca_swqe *w;

	hrtimer_try_to_cancel(&req->timer);
	while (req->taken || req->held) {
		w = shca_req_wqe(qp, 0);
		if (req->taken)
			req->taken--;
		else
			req->held = false;
		shca_queue_consumed(&qp->sq.queue, 1);
		shca_req_complete(qp, w, &res);
	}
	if (req->tr)
		req->tr->win->reset(qp);
}

/*
 * Runs the send queue for one batch.  Return: true when the work should
 * run again (more WQEs, or a state change to act on).
 */
static bool shca_req_run(struct shca_qp *qp, u32 budget)
{
	u32 bytes;
	struct shca_queue *q = &qp->sq.queue;
	bool more = true;
	unsigned int n;

	if (READ_ONCE(qp->req.waiting))
		return false;
	shca_queue_wake(q);
	if (!shca_req_settle(qp, &more))
		return more;
	for (n = 0; n < SHCA_ENGINE_BATCH; n++) {
		if (READ_ONCE(qp->state) != IB_QPS_RTS)
			return true;
		if (unlikely(shca_queue_overrun(q))) {
			shca_qp_fatal(qp);
			return true;
		}
		if (shca_queue_pending(q) <= qp->req.taken) {
			trace_softhca_doorbell_wanted(qp->ibqp.device,
						      qp->ibqp.qp_num, true);
			if (!shca_queue_sleep(q, qp->req.taken)) {
				more = false;
				break;
			}
		}
		bytes = 0;
		switch (shca_req_one(qp, &bytes)) {
		case SHCA_STEP_WAIT:
			return false;
		case SHCA_STEP_ERROR:
			return true;
		case SHCA_STEP_BLOCKED:
			/* Its answers, or the net's room, run it again. */
			shca_req_arm(qp);
			return false;
		case SHCA_STEP_DONE:
			break;
		}
		if (bytes >= budget)
			break;
		budget -= bytes;
	}
	shca_req_arm(qp);
	return more;
}

/*
 * One run: a batch of the send queue, of WQEs up to @budget bytes (but
 * for the first), or of a flush.  Return: run again.
 */
static bool shca_engine_run_for(struct shca_qp *qp, u32 budget)
{
	lockdep_assert_held(&qp->engine_lock);
	switch (READ_ONCE(qp->state)) {
	case IB_QPS_RTS:
		return shca_req_run(qp, budget);
	case IB_QPS_SQE:
		return shca_qp_flush(qp, false);
	case IB_QPS_ERR:
		shca_req_flush_taken(qp);
		shca_resp_flush(qp);
		return shca_qp_flush(qp, true);
	default:
		return false;
	}
}

static bool shca_engine_run(struct shca_qp *qp)
{
	return shca_engine_run_for(qp, SHCA_ENGINE_BUDGET);
}

/* What the transports received: true to run again. */
static bool shca_rx_run(struct shca_qp *qp)
{
	const struct shca_transport *t;
	bool more = false;
	unsigned int i;

	shca_for_each_transport(t, i)
		if (t->rx_run && t->rx_run(qp))
			more = true;
	return more;
}

/* Small runs in a row from which a doorbell runs in its system call. */
#define SHCA_SMALL_RUNS_HERE 8
/* One doorbell in this many goes to the worker even so. */
#define SHCA_RING_WORKER_EVERY 64

/**
 * shca_engine_count_run() - count a worker's run of user send queues
 * @runs: the worker's counts
 * @taken: the WQEs the run took
 * @more: the run left work for the next
 *
 * Counts the small runs in a row, up to SHCA_SMALL_RUNS_HERE.
 *
 * Context: the worker.
 */
void shca_engine_count_run(struct shca_runs *runs, u32 taken, bool more)
{
	u8 n = 0;

	if (taken <= SHCA_RUN_SMALL && !more)
		n = min(runs->small + 1, SHCA_SMALL_RUNS_HERE);
	WRITE_ONCE(runs->small, n);
}

/**
 * shca_engine_runs_small() - whether a worker's last runs were all small
 * @runs: the worker's counts
 *
 * Context: any.
 * Return: true after SHCA_SMALL_RUNS_HERE small runs in a row: the
 * worker has no CPU of its own while the process posts.
 */
bool shca_engine_runs_small(const struct shca_runs *runs)
{
	return READ_ONCE(runs->small) >= SHCA_SMALL_RUNS_HERE;
}

/* Waits for a run of the receive softirq (shca_engine_rx()) to end. */
static void shca_engine_wait_rx(struct shca_qp *qp)
{
	spin_lock_bh(&qp->run_lock);
	spin_unlock_bh(&qp->run_lock);
}

/**
 * shca_engine_lock() - take a QP's engine, for a run or a control verb
 * @qp: the QP
 *
 * Holds engine_lock, and waits out a run in the receive softirq: none
 * starts until shca_engine_unlock().
 *
 * Context: process context; sleeps.
 */
void shca_engine_lock(struct shca_qp *qp)
{
	mutex_lock(&qp->engine_lock);
	shca_engine_wait_rx(qp);
}
EXPORT_SYMBOL_IF_KUNIT(shca_engine_lock);

/**
 * shca_engine_unlock() - release what shca_engine_lock() took
 * @qp: the QP
 *
 * Context: process context.
 */
void shca_engine_unlock(struct shca_qp *qp)
{
	mutex_unlock(&qp->engine_lock);
}
EXPORT_SYMBOL_IF_KUNIT(shca_engine_unlock);

static bool shca_engine_trylock(struct shca_qp *qp)
{
	if (!mutex_trylock(&qp->engine_lock))
		return false;
	shca_engine_wait_rx(qp);
	return true;
}

/*
 * The send queue's part of a run in the receive softirq: acts on what the
 * packets said of the window (resends, an RNR wait), and completes its
 * answered WQEs, as shca_req_run() does first.  Return: the QP's work has
 * to run (new WQEs to take, an error state to flush).
 */
static bool shca_req_run_answers(struct shca_qp *qp)
{
	bool more;

	switch (READ_ONCE(qp->state)) {
	case IB_QPS_RTS:
		break;
	case IB_QPS_SQE:
	case IB_QPS_ERR:
		return true;
	default:
		return false;
	}
	if (READ_ONCE(qp->req.waiting))
		return false;
	if (!shca_req_settle(qp, &more))
		return more;
	shca_req_arm(qp);
	return shca_queue_pending(&qp->sq.queue) > qp->req.taken;
}

/**
 * shca_engine_rx() - a QP received packets: run them here, or wake its work
 * @qp: the QP, which its transport queued packets on
 *
 * Runs them in this softirq when no run holds the QP's engine, nothing of
 * the run would sleep and the send queue has no new WQE (see the top of
 * this file), else queues the QP's receive work.  Between two guests,
 * the worker woken for each packet made softhca's 2-byte round trip
 * several times rdma_rxe's (docs/performance.md).  What the run leaves
 * (more packets than a batch, a READ answered in part, WQEs posted
 * meanwhile) goes to the work.
 *
 * Context: softirq (the transport's receive).
 */
void shca_engine_rx(struct shca_qp *qp)
{
	struct shca_dev *dev = to_shca_dev(qp->ibqp.device);
	bool rx_more, sq_more;

	spin_lock(&qp->run_lock);
	if (mutex_is_locked(&qp->engine_lock) || shca_dev_has_odp(dev) ||
	    shca_queue_pending(&qp->sq.queue) > qp->req.taken) {
		spin_unlock(&qp->run_lock);
		shca_engine_kick_rx(qp);
		return;
	}
	rx_more = shca_rx_run(qp);
	sq_more = shca_req_run_answers(qp);
	spin_unlock(&qp->run_lock);
	shca_count(dev, SHCA_CNT_RX_SOFTIRQ_RUNS);
	/* The receive work's run takes the send queue too. */
	if (rx_more)
		shca_engine_kick_rx(qp);
	else if (sq_more)
		shca_engine_kick(qp);
}

/*
 * A run of either work item: the packets received, then the queues, so
 * that what a batch's answers acknowledged completes before the next
 * batch (struct shca_transport's @rx_run).
 * @doorbell: the send queue's item, whose runs a user QP counts.
 */
static void shca_qp_run(struct shca_qp *qp, bool doorbell)
{
	struct shca_queue *q = &qp->sq.queue;
	u32 at;
	bool more;

	shca_engine_lock(qp);
	if (shca_rx_run(qp))
		shca_engine_kick_rx(qp);
	at = q->cons + qp->req.taken;
	more = shca_engine_run(qp);
	/* A QP with a slot in its process's doorbell counts there. */
	if (doorbell && qp->ibqp.uobject && !qp->uctx)
		shca_engine_count_run(&qp->req.runs,
				      q->cons + qp->req.taken - at, more);
	if (more)
		shca_engine_kick(qp);
	shca_engine_unlock(qp);
}

/*
 * The bytes a run of a user QP's send queue moves in the worker of its
 * process's doorbell, which runs the process's QPs one after another: a
 * QP with more goes on in its own work, beside the others.
 */
#define SHCA_ENGINE_SHARED_BUDGET SZ_16K

/**
 * shca_engine_run_user() - a short run of a user QP's send queue, for the
 * worker of its process's doorbell
 * @qp: the QP
 * @taken: incremented by the WQEs the run took
 *
 * The run moves up to SHCA_ENGINE_SHARED_BUDGET bytes (and at least one
 * WQE).  A QP that has more after a full batch of small WQEs is the
 * worker's to run again; one with more bytes than that goes on in its own
 * work, so that a process's QPs that stream large messages run in
 * parallel, as each QP's work did before its process had a doorbell.
 * When a run is in progress elsewhere (the QP's own work, a doorbell's
 * system call, its receive work), the QP's work runs after it instead:
 * the other run may have looked at the ring for the last time already,
 * and this worker does not wait for it.
 *
 * Context: process context; sleeps.
 * Return: true when the worker should run the QP again.
 */
bool shca_engine_run_user(struct shca_qp *qp, u32 *taken)
{
	struct shca_queue *q = &qp->sq.queue;
	bool more, again;
	u32 at, n;

	if (!shca_engine_trylock(qp)) {
		shca_engine_kick(qp);
		return false;
	}
	at = q->cons + qp->req.taken;
	more = shca_engine_run_for(qp, SHCA_ENGINE_SHARED_BUDGET);
	n = q->cons + qp->req.taken - at;
	*taken += n;
	again = more && n >= SHCA_ENGINE_BATCH;
	if (more && !again)
		shca_engine_kick(qp);
	shca_engine_unlock(qp);
	return again;
}

/**
 * shca_engine_queue() - queue a worker that runs send queues
 * @work: the worker, a process's doorbell's
 *
 * On the engine's unbound workqueue, as a QP's send queue work.
 *
 * Context: any.
 */
void shca_engine_queue(struct work_struct *work)
{
	queue_work(shca_engine_wq, work);
}

static void shca_qp_work(struct work_struct *work)
{
	shca_qp_run(container_of(work, struct shca_qp, work), true);
}

static void shca_qp_rx_work(struct work_struct *work)
{
	shca_qp_run(container_of(work, struct shca_qp, rx_work), false);
}

/* Copies of @win WQEs of @wqe_size bytes, their wire state first. */
static struct shca_wire_slot *shca_req_alloc(u32 win, u32 wqe_size, gfp_t gfp)
{
	return kcalloc(win, sizeof(struct shca_wire_slot) + wqe_size, gfp);
}

static void shca_req_set(struct shca_req *req, struct shca_wire_slot *msgs,
			 u32 win)
{
	req->msgs = msgs;
	req->wqes = msgs + win;
	req->win = win;
}

/**
 * shca_engine_qp_init() - a new QP's engine
 * @qp: the QP, its send queue made
 * @gfp: for the copy of the WQE it takes
 *
 * The engine takes a QP's WQEs one at a time, until an RC QP's path
 * leaves the host (shca_engine_qp_window()).  A copy is as large as the
 * ring's entries, which the QP's max_send_sge and max_inline_data size.
 * Each transport makes its own state of the QP.
 *
 * Context: process context.
 * Return: 0 or -ENOMEM.
 */
int shca_engine_qp_init(struct shca_qp *qp, gfp_t gfp)
{
	const struct shca_transport *t;
	struct shca_req *req = &qp->req;
	struct shca_wire_slot *msgs;
	unsigned int i;
	int ret;

	req->wqe_size = min_t(u32, qp->sq.queue.entry_size,
			      sizeof(struct shca_swqe));
	msgs = shca_req_alloc(1, req->wqe_size, gfp);
	if (!msgs)
		return -ENOMEM;
	shca_req_set(req, msgs, 1);
	shca_for_each_transport(t, i) {
		if (!t->qp_init)
			continue;
		ret = t->qp_init(qp, gfp);
		if (ret)
			goto err_free_transports;
	}
	qp->engine_wq = shca_engine_wq;
	qp->local_wq = shca_local_wq;
	mutex_init(&qp->engine_lock);
	spin_lock_init(&qp->run_lock);
	INIT_WORK(&qp->work, shca_qp_work);
	INIT_WORK(&qp->rx_work, shca_qp_rx_work);
	hrtimer_init(&qp->req.timer, CLOCK_MONOTONIC, HRTIMER_MODE_REL_SOFT);
	qp->req.timer.function = shca_req_timer;
	return 0;

err_free_transports:
	while (i--)
		if (shca_transports[i]->qp_free)
			shca_transports[i]->qp_free(qp);
	kfree(msgs);
	return ret;
}

/**
 * shca_engine_qp_window() - an RC QP's path leaves the host: a window
 * @qp: the QP, whose path modify_qp just set
 * @gfp: for the copies
 *
 * Loopback executes a QP's messages one at a time, with one copy of a
 * WQE.  An RC QP whose destination is no device of this host keeps up to
 * SHCA_ENGINE_WINDOW messages (its send queue's depth, if less) in
 * flight on the wire, each with its copy: those are made here, once, so
 * that the QPs loopback serves do not pay for them.  Without the memory,
 * the QP sends one message at a time.
 *
 * Context: the command queue; sleeps.
 */
void shca_engine_qp_window(struct shca_qp *qp, gfp_t gfp)
{
	u32 win = min_t(u32, qp->sq.queue.num, SHCA_ENGINE_WINDOW);
	struct shca_req *req = &qp->req;
	struct shca_wire_slot *msgs;

	if (req->win >= win)
		return;
	msgs = shca_req_alloc(win, req->wqe_size, gfp | __GFP_NOWARN);
	if (!msgs)
		return;
	shca_engine_lock(qp);
	/* A path is set before RTS: the engine holds no WQE yet. */
	if (!req->taken && !req->held) {
		swap(req->msgs, msgs);
		shca_req_set(req, req->msgs, win);
	}
	shca_engine_unlock(qp);
	kfree(msgs);
}

/* Frees what shca_engine_qp_init() allocated; its engine is stopped. */
void shca_engine_qp_free(struct shca_qp *qp)
{
	const struct shca_transport *t;
	unsigned int i;

	shca_for_each_transport(t, i)
		if (t->qp_free)
			t->qp_free(qp);
	kfree(qp->req.msgs);
}

/**
 * shca_engine_qp_epsn() - the PSN a QP's responder expects first
 * @qp: the QP, entering RTR (modify_qp's rq_psn)
 * @psn: the PSN
 *
 * Context: the command queue.
 */
void shca_engine_qp_epsn(struct shca_qp *qp, u32 psn)
{
	const struct shca_transport *t;
	unsigned int i;

	shca_resp_reset(qp, psn);
	shca_for_each_transport(t, i)
		if (t->resp_reset)
			t->resp_reset(qp);
}

/**
 * shca_engine_flush() - let the engines finish what they were given
 *
 * Every run queued before the call has ended on return: the completions
 * of WQEs posted and rung before it are in their CQs (but for WQEs
 * waiting on a retry timer).
 *
 * Context: process context; sleeps.
 */
void shca_engine_flush(void)
{
	flush_workqueue(shca_engine_wq);
	flush_workqueue(shca_local_wq);
}

/**
 * shca_engine_sync() - wait for the engine's runs in progress to end
 * @qp: the QP
 *
 * Context: process context; sleeps.
 */
void shca_engine_sync(struct shca_qp *qp)
{
	flush_work(&qp->work);
	flush_work(&qp->rx_work);
	shca_engine_wait_rx(qp);
}

/**
 * shca_engine_doorbell_here() - whether a streaming poster's doorbell runs
 * in its system call
 * @runs: the counts of the worker the doorbell would wake
 *
 * A streaming poster's doorbell wakes the worker, which takes what the
 * process posts meanwhile, with no further doorbell, while it has a CPU
 * of its own.  When it has none (the process's peer polls on the other
 * CPU, as ib_send_bw's receiver does), the worker preempts one of the
 * two, takes a WQE or two, and leaves the ring empty: every post rings
 * again, and each ring costs a wakeup and two context switches on top of
 * the system call.  After SHCA_SMALL_RUNS_HERE such runs in a row, the
 * doorbell runs the engine in its system call instead, as for a waiting
 * poster, and one doorbell in SHCA_RING_WORKER_EVERY still goes to the
 * worker: a run that takes more (it found a CPU meanwhile) ends it.
 *
 * Context: process context (ib_uverbs' post_send).
 * Return: true to run the engine here (shca_engine_doorbell_user()).
 */
bool shca_engine_doorbell_here(struct shca_runs *runs)
{
	if (!shca_engine_runs_small(runs))
		return false;
	return atomic_inc_return(&runs->rung_here) % SHCA_RING_WORKER_EVERY;
}

/**
 * shca_engine_doorbell_user() - a waiting poster's doorbell: run it here
 * @qp: the QP, whose WQEs were published before the call
 *
 * The provider rang because the engine was idle, and says its process
 * polled completions since it last posted: it waits on its peer, WR by WR
 * (a ping-pong, a request and its reply), and waits in this system call
 * anyway.  One run executes here, instead of waking a worker that would
 * have to get a CPU first, as rxe and siw execute in the poster's system
 * call.  What the run leaves goes to the worker, so the call takes
 * bounded time.  A streaming poster is told apart by not polling between
 * its posts: its doorbell goes to the worker, which takes what it posts
 * meanwhile with no further doorbell.  No completion handler runs here:
 * the CQ defers its notification, as ever.
 *
 * Context: process context (ib_uverbs' post_send); sleeps.
 */
void shca_engine_doorbell_user(struct shca_qp *qp)
{
	/* A run in progress looks at the ring before it goes idle. */
	if (!shca_engine_trylock(qp)) {
		shca_engine_kick(qp);
		return;
	}
	if (shca_engine_run(qp))
		shca_engine_kick(qp);
	shca_engine_unlock(qp);
}

/**
 * shca_engine_drain_sq() - take, here, what a send queue holds
 * @qp: the QP
 *
 * The WQEs published before the call are taken before it returns
 * (executed, or sent into the RC window), as a hardware queue would have
 * fetched them by then, unless the engine must wait first (an RNR or
 * retry timer, a full window) or the QP leaves RTS.  A verb that ends
 * what WQEs name calls it first: destroy_ah, whose address vector a UD
 * WQE names by number (rdma-core's mckey destroys its AH, then its QP,
 * right after posting, waiting for no completion), and destroy_qp.  What
 * is posted meanwhile is left to the worker.
 *
 * Context: process context; sleeps.  Bounded by the ring's size: a run
 * that takes nothing ends the drain.
 */
void shca_engine_drain_sq(struct shca_qp *qp)
{
	struct shca_queue *q = &qp->sq.queue;
	bool more = false;
	u32 end, at;

	shca_engine_lock(qp);
	end = q->cons + shca_queue_pending(q);
	at = q->cons + qp->req.taken;
	while ((s32)(end - at) > 0) {
		more = shca_engine_run(qp);
		if (!more || q->cons + qp->req.taken == at)
			break;
		at = q->cons + qp->req.taken;
		cond_resched();
	}
	if (more)
		shca_engine_kick(qp);
	shca_engine_unlock(qp);
}

/**
 * shca_engine_qp_stop() - stop a QP's engine for good
 * @qp: the QP, in RESET: a run of its work does nothing, and arms no timer
 *
 * Context: process context; sleeps.
 */
void shca_engine_qp_stop(struct shca_qp *qp)
{
	const struct shca_transport *t;
	unsigned int i;

	/* Waits for a doorbell's run, which may queue the work. */
	shca_engine_lock(qp);
	shca_engine_unlock(qp);
	cancel_work_sync(&qp->work);
	/* A run before RESET may have armed it, and it may queue the work. */
	hrtimer_cancel(&qp->req.timer);
	cancel_work_sync(&qp->work);
	/*
	 * Last: a run of the work may queue rx_work for packets it left; a
	 * run of rx_work in RESET queues nothing else.
	 */
	cancel_work_sync(&qp->rx_work);
	/*
	 * A QP in RESET takes no more packets (see the transports' stop op).
	 * But a receive that queued one just before may kick rx_work after
	 * the cancel, and a modify_qp to RESET leaves the QP published: that
	 * run takes engine_lock, and so do the resets (it finds nothing to
	 * execute, or runs before them).
	 */
	shca_engine_lock(qp);
	qp->req.waiting = false;
	qp->req.expired = false;
	qp->req.held = false;
	qp->req.taken = 0;
	qp->req.backoff = 0;
	qp->req.charged = 0;
	shca_resp_reset(qp, 0);
	shca_for_each_transport(t, i)
		if (t->stop)
			t->stop(qp);
	shca_engine_unlock(qp);
}

/* The engine's driver attributes of a QP: its requester's state. */
static int shca_fill_res_req(struct sk_buff *msg, struct shca_qp *qp)
{
	const struct shca_req *req = &qp->req;
	u64 ack_us;

	if (rdma_nl_put_driver_u32(msg, "waiting", req->waiting) ||
	    rdma_nl_put_driver_u32_hex(msg, "sq_psn", req->psn) ||
	    rdma_nl_put_driver_u32(msg, "inflight", req->taken) ||
	    rdma_nl_put_driver_u32(msg, "retry_left", req->retry_left) ||
	    rdma_nl_put_driver_u32(msg, "rnr_left", req->rnr_left))
		return -EMSGSIZE;
	if (!req->tr || !req->tr->win)
		return 0;
	/* The ACK timer's period now, and the timeouts that doubled it. */
	ack_us = div_u64(shca_req_ack_ns(qp, READ_ONCE(qp->attr.timeout)),
			 NSEC_PER_USEC);
	if (rdma_nl_put_driver_u32(msg, "ack_backoff", req->backoff) ||
	    rdma_nl_put_driver_u64(msg, "ack_timer_us", ack_us))
		return -EMSGSIZE;
	return 0;
}

/**
 * shca_fill_res_qp_entry() - a QP's engine state, for `rdma res show qp -dd`
 * @msg: the netlink message
 * @ibqp: the QP
 *
 * A snapshot under engine_lock, between two runs: the requester's (a
 * retry wait, its next PSN, the messages in its window, the retries
 * left), then each transport's (RoCEv2's: the packets queued and, for RC
 * and UC, the window on the wire, the READs and atomics outstanding, the
 * verdict the engine will act on, and the responder's expected PSN).
 * What to look at first when traffic stalls.
 *
 * Context: process context (netlink); sleeps.
 */
int shca_fill_res_qp_entry(struct sk_buff *msg, struct ib_qp *ibqp)
{
	struct shca_qp *qp = to_shca_qp(ibqp);
	const struct shca_transport *t;
	struct nlattr *table;
	unsigned int i;
	int ret;

	table = nla_nest_start(msg, RDMA_NLDEV_ATTR_DRIVER);
	if (!table)
		return -EMSGSIZE;
	if (mutex_lock_killable(&qp->engine_lock)) {
		ret = -EINTR;
		goto cancel_table;
	}
	shca_engine_wait_rx(qp);
	ret = shca_fill_res_req(msg, qp);
	shca_for_each_transport(t, i)
		if (!ret && t->fill_res)
			ret = t->fill_res(msg, qp);
	shca_engine_unlock(qp);
	if (ret)
		goto cancel_table;
	nla_nest_end(msg, table);
	return 0;

cancel_table:
	nla_nest_cancel(msg, table);
	return ret;
}
