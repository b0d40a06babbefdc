// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Shared receive queues.
 *
 * Posting writes receive WQEs into the ring in any context; the data path
 * takes them with shca_srq_pop(), which also fires the limit event: armed
 * by modify_srq(IB_SRQ_LIMIT), it is raised once, when fewer WQEs than the
 * limit remain, and disarms itself (IBA 10.2.9.5).
 */

#include <kunit/visibility.h>

#include "cmdq.h"
#include "dev.h"
#include "qp.h"
#include "srq.h"

static void shca_srq_deliver(struct shca_events *ev, enum ib_event_type type)
{
	struct shca_srq *srq = container_of(ev, struct shca_srq, events);
	struct ib_event event = {
		.device = srq->ibsrq.device,
		.element.srq = &srq->ibsrq,
		.event = type,
	};

	if (srq->ibsrq.event_handler)
		srq->ibsrq.event_handler(&event, srq->ibsrq.srq_context);
}

static int shca_srq_check_init(struct ib_device *ibdev,
			       const struct ib_srq_init_attr *init,
			       struct ib_udata *udata)
{
	const struct ib_srq_attr *attr = &init->attr;

	if (init->srq_type != IB_SRQT_BASIC) {
		ibdev_dbg(ibdev, "create_srq: type %d\n", init->srq_type);
		return -EOPNOTSUPP;
	}
	if (attr->max_wr < 1 || attr->max_wr > SHCA_MAX_SRQ_WR ||
	    attr->max_sge > SHCA_MAX_SGE || attr->srq_limit > attr->max_wr) {
		ibdev_dbg(ibdev, "create_srq: %u WRs, %u SGEs, limit %u\n",
			  attr->max_wr, attr->max_sge, attr->srq_limit);
		return -EINVAL;
	}
	if (!udata)
		return 0;
	if (udata->outlen < sizeof(struct softhca_create_srq_resp)) {
		ibdev_dbg(ibdev, "create_srq: response buffer of %zu bytes\n",
			  udata->outlen);
		return -EINVAL;
	}
	return shca_udata_no_request(ibdev, udata, "create_srq");
}

static int shca_srq_create_cmd(struct shca_cmd *cmd)
{
	const struct ib_srq_attr *attr = cmd->args.verb.attr;
	struct shca_srq *srq = cmd->obj;
	struct shca_dev *dev = to_shca_dev(srq->ibsrq.device);
	int ret;

	ret = shca_dev_res_get(dev, SHCA_RES_SRQ);
	if (ret)
		return ret;
	ret = shca_queue_init(&srq->queue, attr->max_wr,
			      shca_recv_wqe_size(attr->max_sge),
			      cmd->args.verb.udata);
	if (ret) {
		shca_dev_res_put(dev, SHCA_RES_SRQ);
		return ret;
	}
	spin_lock_init(&srq->lock);
	srq->max_sge = attr->max_sge;
	srq->limit = attr->srq_limit;
	shca_events_init(&srq->events, shca_srq_deliver);
	return 0;
}

static int shca_srq_destroy_cmd(struct shca_cmd *cmd)
{
	struct shca_srq *srq = cmd->obj;

	/* No QP uses the SRQ any more: nothing raises events. */
	shca_events_stop(&srq->events);
	shca_queue_destroy(&srq->queue);
	shca_dev_res_put(to_shca_dev(srq->ibsrq.device), SHCA_RES_SRQ);
	return 0;
}

static void shca_srq_attr(struct shca_srq *srq, struct ib_srq_attr *attr)
{
	*attr = (struct ib_srq_attr){
		.max_wr = srq->queue.num,
		.max_sge = srq->max_sge,
		.srq_limit = READ_ONCE(srq->limit),
	};
}

int shca_create_srq(struct ib_srq *ibsrq, struct ib_srq_init_attr *init,
		    struct ib_udata *udata)
{
	struct shca_srq *srq = to_shca_srq(ibsrq);
	struct shca_cmd_verb args = { .attr = &init->attr, .udata = udata };
	struct softhca_create_srq_resp resp = {};
	int ret;

	ret = shca_srq_check_init(ibsrq->device, init, udata);
	if (ret)
		return ret;
	ret = shca_cmd_run(ibsrq->device, shca_srq_create_cmd, srq, false,
			   &args);
	if (ret)
		return ret;

	shca_srq_attr(srq, &init->attr);
	if (!udata)
		return 0;
	shca_queue_export(&srq->queue, &resp.srq);
	ret = ib_copy_to_udata(udata, &resp, min(sizeof(resp), udata->outlen));
	if (ret)
		shca_cmd_run(ibsrq->device, shca_srq_destroy_cmd, srq, true,
			     NULL);
	return ret;
}

static int shca_srq_modify_cmd(struct shca_cmd *cmd)
{
	const struct ib_srq_attr *attr = cmd->args.verb.attr;
	struct shca_srq *srq = cmd->obj;
	unsigned long flags;

	if (attr->srq_limit > srq->queue.num) {
		ibdev_dbg(srq->ibsrq.device, "modify_srq: limit %u over %u\n",
			  attr->srq_limit, srq->queue.num);
		return -EINVAL;
	}
	spin_lock_irqsave(&srq->lock, flags);
	srq->limit = attr->srq_limit;
	spin_unlock_irqrestore(&srq->lock, flags);
	return 0;
}

int shca_modify_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr,
		    enum ib_srq_attr_mask mask, struct ib_udata *udata)
{
	struct shca_cmd_verb args = { .attr = attr };
	int ret;

	/* Resizing is not offered (no IB_DEVICE_SRQ_RESIZE). */
	if (mask & ~IB_SRQ_LIMIT) {
		ibdev_dbg(ibsrq->device, "modify_srq: mask %#x\n", mask);
		return -EOPNOTSUPP;
	}
	ret = shca_udata_no_request(ibsrq->device, udata, "modify_srq");
	if (ret || !mask)
		return ret;
	return shca_cmd_run(ibsrq->device, shca_srq_modify_cmd,
			    to_shca_srq(ibsrq), false, &args);
}

int shca_query_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr)
{
	shca_srq_attr(to_shca_srq(ibsrq), attr);
	return 0;
}

int shca_destroy_srq(struct ib_srq *ibsrq, struct ib_udata *udata)
{
	return shca_cmd_run(ibsrq->device, shca_srq_destroy_cmd,
			    to_shca_srq(ibsrq), true, NULL);
}

/* Context: any, hard-irq included; bounded by the queue's size. */
int shca_post_srq_recv(struct ib_srq *ibsrq, const struct ib_recv_wr *wr,
		       const struct ib_recv_wr **bad_wr)
{
	struct shca_srq *srq = to_shca_srq(ibsrq);
	u32 posted;

	/* A user SRQ's ring is the provider's to write. */
	if (ibsrq->uobject) {
		ibdev_dbg_ratelimited(ibsrq->device,
				      "post_srq_recv: a user space SRQ\n");
		*bad_wr = wr;
		return -EINVAL;
	}
	return shca_recv_wqes_post(ibsrq->device, ibsrq->res.id, true,
				   &srq->queue, &srq->lock, srq->max_sge, wr,
				   bad_wr, &posted);
}
