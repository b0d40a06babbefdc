// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Queue pair objects and the IBA QP state machine.
 *
 * create, modify, query and destroy run on the command queue, so they are
 * serialised per device and never race with one another.  The data path
 * finds a QP by QPN through the device's table and holds a reference while
 * it works on it; destroy unpublishes the QP and waits for those
 * references to go.  The table is looked up under its lock rather than
 * RCU, because ib_core frees the (core-allocated) QP as soon as destroy
 * returns, without a grace period.
 *
 * Transitions are checked with ib_modify_qp_is_ok() (which attributes each
 * transition requires and allows) and the attribute table below (which
 * values are in range), both before anything changes: a failed modify
 * leaves the QP as it was.
 */

#include <kunit/visibility.h>
#include <rdma/uverbs_ioctl.h>

#include "cmdq.h"
#include "compat.h"
#include "dev.h"
#include "engine.h"
#include "fault.h"
#include "mcast.h"
#include "qp.h"
#include "trace.h"
#include "uctx.h"

#define SHCA_QPN_MAX 0xffffff
#define SHCA_PSN_MAX 0xffffff

/*
 * The ib_qp a completion names, for struct ib_wc: the pointer is not
 * dereferenced, and a consumer that destroyed the QP gets NULL.
 */
struct ib_qp *shca_qp_ib_lookup(struct shca_dev *dev, u32 qpn)
{
	struct shca_qp *qp = xa_load(&dev->qps, qpn);

	return qp ? &qp->ibqp : NULL;
}

static void shca_qp_deliver(struct shca_events *ev, enum ib_event_type type)
{
	struct shca_qp *qp = container_of(ev, struct shca_qp, events);
	struct ib_event event = {
		.device = qp->ibqp.device,
		.element.qp = &qp->ibqp,
		.event = type,
	};

	if (qp->ibqp.event_handler)
		qp->ibqp.event_handler(&event, qp->ibqp.qp_context);
}

static u32 shca_send_wqe_size(u32 max_sge, u32 max_inline)
{
	return ALIGN(sizeof(struct softhca_send_wqe) +
		     max_t(u32, max_sge * sizeof(struct softhca_sge),
			   max_inline), SMP_CACHE_BYTES);
}

static int shca_qp_check_init(struct ib_device *ibdev,
			      const struct ib_qp_init_attr *init)
{
	const struct ib_qp_cap *cap = &init->cap;

	switch (init->qp_type) {
	case IB_QPT_RC:
	case IB_QPT_UC:
	case IB_QPT_UD:
	case IB_QPT_GSI:
		break;
	default:
		ibdev_dbg(ibdev, "create_qp: type %d\n", init->qp_type);
		return -EOPNOTSUPP;
	}
	if (init->create_flags) {
		ibdev_dbg(ibdev, "create_qp: flags %#x\n", init->create_flags);
		return -EOPNOTSUPP;
	}
	if (!init->send_cq || !init->recv_cq) {
		ibdev_dbg(ibdev, "create_qp: no send or receive CQ\n");
		return -EINVAL;
	}
	if (cap->max_send_wr > SHCA_MAX_QP_WR ||
	    cap->max_recv_wr > SHCA_MAX_QP_WR ||
	    cap->max_send_sge > SHCA_MAX_SGE ||
	    cap->max_recv_sge > SHCA_MAX_SGE ||
	    cap->max_inline_data > SHCA_MAX_INLINE) {
		ibdev_dbg(ibdev, "create_qp: caps %u/%u WRs, %u/%u SGEs, %u inline\n",
			  cap->max_send_wr, cap->max_recv_wr, cap->max_send_sge,
			  cap->max_recv_sge, cap->max_inline_data);
		return -EINVAL;
	}
	return 0;
}

/* Reserves the QP's number; the QP is published under it once built. */
static int shca_qpn_reserve(struct shca_dev *dev, struct shca_qp *qp)
{
	u32 qpn = 1;
	int ret;

	if (shca_fault())
		ret = -ENOMEM;
	else if (qp->ibqp.qp_type == IB_QPT_GSI)
		ret = xa_insert_irq(&dev->qps, qpn, NULL, GFP_KERNEL);
	else
		ret = xa_alloc_cyclic_irq(&dev->qps, &qpn, NULL,
					  XA_LIMIT(2, SHCA_QPN_MAX),
					  &dev->next_qpn, GFP_KERNEL);
	if (ret < 0) {
		ibdev_dbg(&dev->ibdev, "create_qp: no QP number: %d\n", ret);
		return ret;
	}
	qp->ibqp.qp_num = qpn;
	return 0;
}

static int shca_qp_queue_init(struct shca_qp_queue *wq, u32 num,
			      u32 max_sge, u32 wqe_size, struct ib_udata *udata)
{
	spin_lock_init(&wq->lock);
	wq->max_sge = max_sge;
	return shca_queue_init(&wq->queue, num, wqe_size, udata);
}

static void shca_qp_init_fields(struct shca_qp *qp,
				const struct ib_qp_init_attr *init)
{
	kref_init(&qp->ref);
	init_completion(&qp->released);
	spin_lock_init(&qp->state_lock);
	shca_events_init(&qp->events, shca_qp_deliver);
	qp->state = IB_QPS_RESET;
	qp->sq_sig_type = init->sq_sig_type;
	qp->max_inline = init->cap.max_inline_data;
	qp->attr.port_num = SHCA_PORT;
	qp->attr.path_mtu = IB_MTU_256;
}

static int shca_qp_create_cmd(struct shca_cmd *cmd)
{
	const struct ib_qp_init_attr *init = cmd->args.verb.attr;
	struct ib_udata *udata = cmd->args.verb.udata;
	struct shca_qp *qp = cmd->obj;
	struct shca_dev *dev = to_shca_dev(qp->ibqp.device);
	const struct ib_qp_cap *cap = &init->cap;
	int ret;

	ret = shca_dev_res_get(dev, SHCA_RES_QP);
	if (ret)
		return ret;
	ret = shca_qpn_reserve(dev, qp);
	if (ret)
		goto err_put_res;
	ret = shca_qp_queue_init(&qp->sq, cap->max_send_wr, cap->max_send_sge,
				 shca_send_wqe_size(cap->max_send_sge,
						    cap->max_inline_data),
				 udata);
	if (ret)
		goto err_release_qpn;
	if (!init->srq) {
		ret = shca_qp_queue_init(&qp->rq, cap->max_recv_wr,
					 cap->max_recv_sge,
					 shca_recv_wqe_size(cap->max_recv_sge),
					 udata);
		if (ret)
			goto err_destroy_sq;
	}
	ret = shca_engine_qp_init(qp, shca_gfp(udata));
	if (ret)
		goto err_destroy_rq;
	shca_qp_init_fields(qp, init);
	ret = shca_uctx_qp_add(qp, udata);
	if (ret)
		goto err_free_engine;

	/* The slot is reserved: storing into it allocates nothing. */
	xa_store_irq(&dev->qps, qp->ibqp.qp_num, qp, GFP_KERNEL);
	return 0;

err_free_engine:
	shca_engine_qp_free(qp);
err_destroy_rq:
	if (!init->srq)
		shca_queue_destroy(&qp->rq.queue);
err_destroy_sq:
	shca_queue_destroy(&qp->sq.queue);
err_release_qpn:
	xa_erase_irq(&dev->qps, qp->ibqp.qp_num);
err_put_res:
	shca_dev_res_put(dev, SHCA_RES_QP);
	return ret;
}

/* Context: any; under the QP's state lock. */
static void shca_qp_set_state(struct shca_qp *qp, enum ib_qp_state state)
{
	unsigned long flags;

	spin_lock_irqsave(&qp->state_lock, flags);
	if (qp->state != state)
		shca_qp_state_locked(qp, state);
	spin_unlock_irqrestore(&qp->state_lock, flags);
}

static int shca_qp_destroy_cmd(struct shca_cmd *cmd)
{
	struct shca_qp *qp = cmd->obj;
	struct shca_dev *dev = to_shca_dev(qp->ibqp.device);

	shca_mcast_qp_leave(qp);
	shca_uctx_qp_del(qp);
	/*
	 * What was posted before the verb is taken first, as a hardware
	 * queue would have by now: a sender that destroys its QP right
	 * after posting (rdma-core's mckey) still sends.  Nothing here
	 * waits for a peer's answer.
	 */
	shca_engine_drain_sq(qp);
	xa_erase_irq(&dev->qps, qp->ibqp.qp_num);
	shca_qp_put(qp);
	wait_for_completion(&qp->released);
	/*
	 * Unpublished and unreferenced: no responder reaches it.  In RESET,
	 * its engine stops for good and nothing raises events.
	 */
	shca_qp_set_state(qp, IB_QPS_RESET);
	shca_engine_qp_stop(qp);
	shca_events_stop(&qp->events);
	shca_engine_qp_free(qp);
	if (!qp->ibqp.srq)
		shca_queue_destroy(&qp->rq.queue);
	shca_queue_destroy(&qp->sq.queue);
	shca_dev_res_put(dev, SHCA_RES_QP);
	return 0;
}

/*
 * Attribute values checked, and copied on success, table-driven: the
 * mask bit that carries the attribute, where it is in struct ib_qp_attr,
 * and its range.  Attributes needing more than a range (address vectors,
 * access flags) are checked in shca_qp_check_attr().
 */
struct shca_qp_field {
	int mask;
	const char *name;
	size_t offset;
	size_t size;
	u32 min;
	u32 max;
};

#define SHCA_QP_FIELD(_mask, _field, _min, _max) {			\
	.mask = _mask,							\
	.name = #_field,						\
	.offset = offsetof(struct ib_qp_attr, _field),			\
	.size = sizeof_field(struct ib_qp_attr, _field),		\
	.min = _min,							\
	.max = _max,							\
}

static const struct shca_qp_field shca_qp_fields[] = {
	SHCA_QP_FIELD(IB_QP_PKEY_INDEX, pkey_index, 0, SHCA_PKEY_TBL_LEN - 1),
	SHCA_QP_FIELD(IB_QP_PORT, port_num, SHCA_PORT, SHCA_PORT),
	SHCA_QP_FIELD(IB_QP_QKEY, qkey, 0, U32_MAX),
	SHCA_QP_FIELD(IB_QP_ACCESS_FLAGS, qp_access_flags, 0, U32_MAX),
	SHCA_QP_FIELD(IB_QP_PATH_MTU, path_mtu, IB_MTU_256, IB_MTU_4096),
	SHCA_QP_FIELD(IB_QP_TIMEOUT, timeout, 0, 31),
	SHCA_QP_FIELD(IB_QP_RETRY_CNT, retry_cnt, 0, 7),
	SHCA_QP_FIELD(IB_QP_RNR_RETRY, rnr_retry, 0, 7),
	SHCA_QP_FIELD(IB_QP_RQ_PSN, rq_psn, 0, SHCA_PSN_MAX),
	SHCA_QP_FIELD(IB_QP_MAX_QP_RD_ATOMIC, max_rd_atomic, 0,
		      SHCA_MAX_RD_ATOMIC),
	SHCA_QP_FIELD(IB_QP_MIN_RNR_TIMER, min_rnr_timer, 0, 31),
	SHCA_QP_FIELD(IB_QP_SQ_PSN, sq_psn, 0, SHCA_PSN_MAX),
	SHCA_QP_FIELD(IB_QP_MAX_DEST_RD_ATOMIC, max_dest_rd_atomic, 0,
		      SHCA_MAX_RD_ATOMIC),
	/* No alternate path: the only migration state is "migrated". */
	SHCA_QP_FIELD(IB_QP_PATH_MIG_STATE, path_mig_state, IB_MIG_MIGRATED,
		      IB_MIG_MIGRATED),
	SHCA_QP_FIELD(IB_QP_DEST_QPN, dest_qp_num, 0, SHCA_QPN_MAX),
	SHCA_QP_FIELD(IB_QP_EN_SQD_ASYNC_NOTIFY, en_sqd_async_notify, 0, 1),
};

static u32 shca_qp_field_get(const struct ib_qp_attr *attr,
			     const struct shca_qp_field *f)
{
	const void *p = (const void *)attr + f->offset;

	switch (f->size) {
	case 1:
		return *(const u8 *)p;
	case 2:
		return *(const u16 *)p;
	default:
		return *(const u32 *)p;
	}
}

/*
 * IB_ACCESS_ON_DEMAND is an MR's; consumers whose MRs page on demand pass
 * it to their QPs too (rdma-core's suite does), which take it and ignore it.
 * FLUSH's placement types since 6.2 (compat.h): rdma_cm allows both to a
 * device that offers either.
 */
#define SHCA_QP_ACCESS (IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE | \
			IB_ACCESS_REMOTE_READ | IB_ACCESS_REMOTE_ATOMIC | \
			IB_ACCESS_ON_DEMAND | SHCA_ACCESS_FLUSH_GLOBAL | \
			SHCA_ACCESS_FLUSH_PERSISTENT)

static int shca_qp_check_attr(struct ib_device *ibdev,
			      const struct ib_qp_attr *attr, int mask)
{
	const struct shca_qp_field *f;
	u32 val;

	for (f = shca_qp_fields; f < shca_qp_fields + ARRAY_SIZE(shca_qp_fields);
	     f++) {
		if (!(mask & f->mask))
			continue;
		val = shca_qp_field_get(attr, f);
		if (val < f->min || val > f->max) {
			ibdev_dbg(ibdev, "modify_qp: %s %u not in [%u, %u]\n",
				  f->name, val, f->min, f->max);
			return -EINVAL;
		}
	}
	if ((mask & IB_QP_ACCESS_FLAGS) &&
	    (attr->qp_access_flags & ~SHCA_QP_ACCESS)) {
		ibdev_dbg(ibdev, "modify_qp: access flags %#x\n",
			  attr->qp_access_flags);
		return -EINVAL;
	}
	if ((mask & IB_QP_AV) && shca_av_check(ibdev, &attr->ah_attr))
		return -EINVAL;
	/* ib_core keeps alternate paths from RoCE devices; so does softhca. */
	if (mask & IB_QP_ALT_PATH) {
		ibdev_dbg(ibdev, "modify_qp: no alternate path on RoCE\n");
		return -EINVAL;
	}
	return 0;
}

static void shca_qp_apply_attr(struct shca_qp *qp,
			       const struct ib_qp_attr *attr, int mask)
{
	const struct shca_qp_field *f;

	for (f = shca_qp_fields; f < shca_qp_fields + ARRAY_SIZE(shca_qp_fields);
	     f++)
		if (mask & f->mask)
			memcpy((void *)&qp->attr + f->offset,
			       (const void *)attr + f->offset, f->size);
	if (mask & IB_QP_AV)
		shca_av_set(&qp->av, to_shca_dev(qp->ibqp.device),
			    &attr->ah_attr);
	if (mask & IB_QP_RQ_PSN)
		shca_engine_qp_epsn(qp, attr->rq_psn);
	if (mask & IB_QP_SQ_PSN)
		qp->req.psn = attr->sq_psn;
}

/*
 * Empties both rings, as the IBA's RESET state has them, once the engine
 * stopped.  A responder may still hold the receive queue's lock.
 */
static void shca_qp_reset_queues(struct shca_qp *qp)
{
	struct shca_qp_queue *wqs[] = { &qp->sq, &qp->rq };
	unsigned long flags;
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(wqs); i++) {
		struct shca_queue *q = &wqs[i]->queue;

		if (!q->ctrl)
			continue;
		spin_lock_irqsave(&wqs[i]->lock, flags);
		q->prod = 0;
		q->cons = 0;
		WRITE_ONCE(q->ctrl->producer, 0);
		WRITE_ONCE(q->ctrl->consumer, 0);
		shca_queue_wake(q);
		spin_unlock_irqrestore(&wqs[i]->lock, flags);
	}
}

/*
 * What entering @state sets going, once the state is visible: the engine
 * resumes (RTS), drains (SQD) or flushes (ERR); RESET stops it.
 */
static void shca_qp_entered(struct shca_qp *qp, enum ib_qp_state state)
{
	/* Pairs with the barrier in shca_qp_doorbell(). */
	smp_mb();
	switch (state) {
	case IB_QPS_RESET:
		shca_engine_qp_stop(qp);
		shca_qp_reset_queues(qp);
		break;
	case IB_QPS_RTS:
	case IB_QPS_ERR:
		shca_engine_kick(qp);
		break;
	case IB_QPS_SQD:
		/* The engine stops at the next WQE; then the SQ is drained. */
		shca_engine_sync(qp);
		if (qp->attr.en_sqd_async_notify)
			shca_event_raise(&qp->events, IB_EVENT_SQ_DRAINED);
		break;
	default:
		break;
	}
}

/*
 * ib_modify_qp_is_ok() has the IBA's table of transitions but for one:
 * the IBA lets a QP go to the error state from any state, RESET included.
 */
static bool shca_qp_transition_ok(enum ib_qp_state cur, enum ib_qp_state next,
				  enum ib_qp_type type, int mask)
{
	if (cur == IB_QPS_RESET && next == IB_QPS_ERR)
		return mask == IB_QP_STATE;
	return ib_modify_qp_is_ok(cur, next, type, mask);
}

/*
 * Checks and applies a modify_qp under the state lock, so that a
 * transition the data path makes meanwhile (to SQE or ERR) is either
 * seen by the checks or comes after.
 */
static int shca_qp_modify_locked(struct shca_qp *qp,
				 const struct ib_qp_attr *attr, int mask,
				 enum ib_qp_state *next)
{
	struct ib_device *ibdev = qp->ibqp.device;
	enum ib_qp_state cur = qp->state;
	int ret;

	*next = mask & IB_QP_STATE ? attr->qp_state : cur;
	if ((mask & IB_QP_CUR_STATE) && attr->cur_qp_state != cur) {
		ibdev_dbg(ibdev, "modify_qp: QP %u is in state %d, not %d\n",
			  qp->ibqp.qp_num, cur, attr->cur_qp_state);
		return -EINVAL;
	}
	if (!shca_qp_transition_ok(cur, *next, qp->ibqp.qp_type, mask)) {
		ibdev_dbg(ibdev, "modify_qp: QP %u: %d -> %d with mask %#x\n",
			  qp->ibqp.qp_num, cur, *next, mask);
		return -EINVAL;
	}
	ret = shca_qp_check_attr(ibdev, attr, mask);
	if (ret)
		return ret;

	shca_qp_apply_attr(qp, attr, mask);
	if (*next != cur)
		shca_qp_state_locked(qp, *next);
	return 0;
}

/**
 * shca_qp_modify() - check and apply a modify_qp
 * @qp: the QP
 * @attr: the attributes, as ib_core passes them
 * @mask: which of them to change (enum ib_qp_attr_mask)
 *
 * Context: the command queue.
 * Return: 0, or -EINVAL for a transition or value the IBA does not allow.
 */
static int shca_qp_modify(struct shca_qp *qp, const struct ib_qp_attr *attr,
			  int mask)
{
	enum ib_qp_state next;
	unsigned long flags;
	int ret;

	/* The PSNs are the engine's. */
	shca_engine_lock(qp);
	spin_lock_irqsave(&qp->state_lock, flags);
	ret = shca_qp_modify_locked(qp, attr, mask, &next);
	spin_unlock_irqrestore(&qp->state_lock, flags);
	shca_engine_unlock(qp);
	if (ret)
		return ret;
	/* A path off the host: the wire's window (loopback needs none). */
	if ((mask & IB_QP_AV) && qp->ibqp.qp_type == IB_QPT_RC && !qp->av.peer)
		shca_engine_qp_window(qp, qp->ibqp.uobject ?
				      GFP_KERNEL_ACCOUNT : GFP_KERNEL);
	if (mask & IB_QP_STATE)
		shca_qp_entered(qp, next);
	return 0;
}

static int shca_qp_modify_cmd(struct shca_cmd *cmd)
{
	return shca_qp_modify(cmd->obj, cmd->args.verb.attr,
			      cmd->args.verb.mask);
}

static void shca_qp_cap(const struct shca_qp *qp, struct ib_qp_cap *cap)
{
	*cap = (struct ib_qp_cap){
		.max_send_wr = qp->sq.queue.num,
		.max_send_sge = qp->sq.max_sge,
		.max_inline_data = qp->max_inline,
	};
	if (qp->ibqp.srq)
		return;
	cap->max_recv_wr = qp->rq.queue.num;
	cap->max_recv_sge = qp->rq.max_sge;
}

static int shca_qp_query_cmd(struct shca_cmd *cmd)
{
	struct ib_qp_attr *attr = cmd->args.verb.out;
	struct shca_qp *qp = cmd->obj;

	*attr = qp->attr;
	attr->qp_state = READ_ONCE(qp->state);
	attr->cur_qp_state = attr->qp_state;
	attr->ah_attr = qp->av.attr;
	shca_qp_cap(qp, &attr->cap);
	return 0;
}

static int shca_qp_exec(struct shca_qp *qp, shca_cmd_fn fn,
			const struct shca_cmd_verb *args)
{
	return shca_cmd_run(qp->ibqp.device, fn, qp,
			    fn == shca_qp_destroy_cmd, args);
}

static int shca_qp_copy_maps(struct shca_qp *qp, struct ib_udata *udata)
{
	struct softhca_create_qp_resp resp = {};

	shca_queue_export(&qp->sq.queue, &resp.sq);
	if (!qp->ibqp.srq)
		shca_queue_export(&qp->rq.queue, &resp.rq);
	resp.db_slot = qp->db_slot;
	return ib_copy_to_udata(udata, &resp, min(sizeof(resp), udata->outlen));
}

static int shca_qp_check_udata(struct ib_device *ibdev,
			       struct ib_udata *udata)
{
	if (!udata)
		return 0;
	/* A provider before the process's doorbell has no room for its slot. */
	if (udata->outlen < offsetofend(struct softhca_create_qp_resp, rq)) {
		ibdev_dbg(ibdev, "create_qp: response buffer of %zu bytes\n",
			  udata->outlen);
		return -EINVAL;
	}
	return shca_udata_no_request(ibdev, udata, "create_qp");
}

int shca_create_qp(struct ib_qp *ibqp, struct ib_qp_init_attr *init,
		   struct ib_udata *udata)
{
	struct shca_qp *qp = to_shca_qp(ibqp);
	struct shca_cmd_verb args = { .attr = init, .udata = udata };
	int ret;

	ret = shca_qp_check_init(ibqp->device, init);
	if (ret)
		return ret;
	ret = shca_qp_check_udata(ibqp->device, udata);
	if (ret)
		return ret;
	ret = shca_qp_exec(qp, shca_qp_create_cmd, &args);
	if (ret)
		return ret;

	shca_qp_cap(qp, &init->cap);
	if (!udata)
		return 0;
	ret = shca_qp_copy_maps(qp, udata);
	if (ret)
		shca_qp_exec(qp, shca_qp_destroy_cmd, NULL);
	return ret;
}

int shca_modify_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
		   struct ib_udata *udata)
{
	struct shca_cmd_verb args = { .attr = attr, .mask = mask };
	int ret;

	if (mask & ~IB_QP_ATTR_STANDARD_BITS) {
		ibdev_dbg(ibqp->device, "modify_qp: mask %#x\n", mask);
		return -EOPNOTSUPP;
	}
	ret = shca_udata_no_request(ibqp->device, udata, "modify_qp");
	if (ret)
		return ret;
	return shca_qp_exec(to_shca_qp(ibqp), shca_qp_modify_cmd, &args);
}

int shca_query_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
		  struct ib_qp_init_attr *init)
{
	struct shca_qp *qp = to_shca_qp(ibqp);
	struct shca_cmd_verb args = { .out = attr };
	int ret;

	ret = shca_qp_exec(qp, shca_qp_query_cmd, &args);
	if (ret)
		return ret;
	*init = (struct ib_qp_init_attr){
		.qp_context = ibqp->qp_context,
		.send_cq = ibqp->send_cq,
		.recv_cq = ibqp->recv_cq,
		.srq = ibqp->srq,
		.cap = attr->cap,
		.sq_sig_type = qp->sq_sig_type,
		.qp_type = ibqp->qp_type,
		.port_num = SHCA_PORT,
	};
	return 0;
}

int shca_destroy_qp(struct ib_qp *ibqp, struct ib_udata *udata)
{
	return shca_qp_exec(to_shca_qp(ibqp), shca_qp_destroy_cmd, NULL);
}

static int shca_qp_async_modify_cmd(struct shca_cmd *cmd)
{
	struct shca_cmd_modify_qp *args = &cmd->args.modify_qp;

	/* ib_core's path: it resolves the destination MAC, and may sleep. */
	return ib_modify_qp(cmd->obj, &args->attr, args->mask);
}

/**
 * softhca_async_modify_qp() - modify a QP from atomic context
 * @qp: the QP
 * @attr: the attributes, copied, so the caller may reuse them at once; an
 *	address vector's source GID is taken from its sgid_index
 * @attr_mask: which attributes to change, as for ib_modify_qp()
 * @done: called with ib_modify_qp()'s result, or NULL
 * @ctx: @done's argument
 *
 * See <rdma/softhca.h> for context, ordering and lifetime rules.
 * Return: 0 when queued; -EBUSY, -EIO or -EOPNOTSUPP (then @done is not
 * called and the QP is unchanged).
 */
int softhca_async_modify_qp(struct ib_qp *qp, const struct ib_qp_attr *attr,
			    int attr_mask, softhca_done_t done, void *ctx)
{
	struct shca_cmd *cmd;

	cmd = shca_cmd_slot_get(qp->device, shca_qp_async_modify_cmd, done,
				ctx);
	if (IS_ERR(cmd))
		return PTR_ERR(cmd);
	cmd->obj = qp;
	cmd->args.modify_qp.attr = *attr;
	cmd->args.modify_qp.attr.ah_attr.grh.sgid_attr = NULL;
	cmd->args.modify_qp.attr.alt_ah_attr.grh.sgid_attr = NULL;
	cmd->args.modify_qp.mask = attr_mask;
	shca_cmd_slot_submit(cmd);
	return 0;
}
EXPORT_SYMBOL(softhca_async_modify_qp);

static int shca_qp_async_destroy_cmd(struct shca_cmd *cmd)
{
	return ib_destroy_qp(cmd->obj);
}

/**
 * softhca_async_destroy_qp() - destroy a QP from atomic context
 * @qp: the QP
 * @done: called with ib_destroy_qp()'s result, or NULL
 * @ctx: @done's argument
 *
 * See <rdma/softhca.h> for context, ordering and lifetime rules.
 * Return: 0 when queued; -EBUSY, -EIO or -EOPNOTSUPP (then @done is not
 * called and @qp still exists).
 */
int softhca_async_destroy_qp(struct ib_qp *qp, softhca_done_t done,
			     void *ctx)
{
	return shca_cmd_queue(qp->device, shca_qp_async_destroy_cmd, qp, done,
			      ctx);
}
EXPORT_SYMBOL(softhca_async_destroy_qp);
