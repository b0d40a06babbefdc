// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Completion queues.
 *
 * A CQ is a ring of struct softhca_cqe.  Producers (the data path of every
 * QP on the CQ, and flushes) serialise on prod_lock; kernel pollers on
 * poll_lock; producer and poller meet only through the ring's indices.
 * Arming is checked by the producer under prod_lock, so an arm either sees
 * the CQE (and reports it as a missed event) or the CQE sees the arm.
 *
 * The completion handler never runs in the producer's context: it is
 * called from comp_work on shca_wq, outside every softhca lock, and since
 * a work item never runs on two CPUs at once, one handler per CQ at a time.
 * The device has one completion vector per online CPU; comp_work runs on
 * the CPU of the CQ's vector, as an interrupt vector's handler would.
 */

#include <kunit/visibility.h>
#include <linux/cpumask.h>
#include <rdma/softhca.h>
#include <rdma/uverbs_ioctl.h>

#include "cmdq.h"
#include "cq.h"
#include "dev.h"
#include "engine.h"
#include "qp.h"
#include "trace.h"

/* Vector @vector is the @vector-th online CPU. */
static unsigned int shca_vector_cpu(unsigned int vector)
{
	return cpumask_local_spread(vector, NUMA_NO_NODE);
}

/**
 * shca_get_vector_affinity() - the CPUs a completion vector's handlers run on
 * @ibdev: the device
 * @comp_vector: the vector
 *
 * For the ULPs that map their queues to the vectors' CPUs (nvme-rdma on
 * 6.1, through blk_mq_rdma_map_queues()).
 *
 * Return: the vector's one CPU, or NULL for no such vector.
 */
const struct cpumask *shca_get_vector_affinity(struct ib_device *ibdev,
					       int comp_vector)
{
	if (comp_vector < 0 || comp_vector >= ibdev->num_comp_vectors)
		return NULL;
	return cpumask_of(shca_vector_cpu(comp_vector));
}

static void shca_cq_comp_work(struct work_struct *work)
{
	struct shca_cq *cq = container_of(work, struct shca_cq, comp_work);

	/*
	 * With BHs off, as from an interrupt: softirq work the handler raises
	 * (irq_poll, NAPI-style ULPs) runs as soon as it returns.
	 */
	if (!cq->ibcq.comp_handler)
		return;
	local_bh_disable();
	cq->ibcq.comp_handler(&cq->ibcq, cq->ibcq.cq_context);
	local_bh_enable();
}

static void shca_cq_deliver(struct shca_events *ev, enum ib_event_type type)
{
	struct shca_cq *cq = container_of(ev, struct shca_cq, events);
	struct ib_event event = {
		.device = cq->ibcq.device,
		.element.cq = &cq->ibcq,
		.event = type,
	};

	if (cq->ibcq.event_handler)
		cq->ibcq.event_handler(&event, cq->ibcq.cq_context);
}

static int shca_cq_check(struct ib_device *ibdev,
			 const struct ib_cq_init_attr *attr)
{
	if (attr->cqe < 1 || attr->cqe > SHCA_MAX_CQE) {
		ibdev_dbg(ibdev, "create_cq: %u entries (max %u)\n", attr->cqe,
			  SHCA_MAX_CQE);
		return -EINVAL;
	}
	if (attr->comp_vector >= ibdev->num_comp_vectors) {
		ibdev_dbg(ibdev, "create_cq: completion vector %u\n",
			  attr->comp_vector);
		return -EINVAL;
	}
	if (attr->flags) {
		ibdev_dbg(ibdev, "create_cq: flags %#x\n", attr->flags);
		return -EOPNOTSUPP;
	}
	return 0;
}

static int shca_cq_create_cmd(struct shca_cmd *cmd)
{
	const struct ib_cq_init_attr *attr = cmd->args.verb.attr;
	struct shca_cq *cq = cmd->obj;
	struct shca_dev *dev = to_shca_dev(cq->ibcq.device);
	int ret;

	ret = shca_dev_res_get(dev, SHCA_RES_CQ);
	if (ret)
		return ret;
	ret = shca_queue_init(&cq->queue, attr->cqe, sizeof(struct softhca_cqe),
			      cmd->args.verb.udata);
	if (ret)
		goto err_put_res;

	spin_lock_init(&cq->prod_lock);
	spin_lock_init(&cq->poll_lock);
	/* Should that CPU go offline, the workqueue runs comp_work on another. */
	cq->cpu = shca_vector_cpu(attr->comp_vector);
	INIT_WORK(&cq->comp_work, shca_cq_comp_work);
	shca_events_init(&cq->events, shca_cq_deliver);
	cq->ibcq.cqe = cq->queue.num;
	return 0;

err_put_res:
	shca_dev_res_put(dev, SHCA_RES_CQ);
	return ret;
}

static int shca_cq_destroy_cmd(struct shca_cmd *cmd)
{
	struct shca_cq *cq = cmd->obj;

	/* No QP uses the CQ any more: nothing notifies or raises events. */
	cancel_work_sync(&cq->comp_work);
	shca_events_stop(&cq->events);
	shca_queue_destroy(&cq->queue);
	shca_dev_res_put(to_shca_dev(cq->ibcq.device), SHCA_RES_CQ);
	return 0;
}

static int shca_cq_exec(struct shca_cq *cq, shca_cmd_fn fn,
			const void *attr, struct ib_udata *udata)
{
	struct shca_cmd_verb args = { .attr = attr, .udata = udata };

	return shca_cmd_run(cq->ibcq.device, fn, cq,
			    fn == shca_cq_destroy_cmd, &args);
}

/* Copies the ring's map to user space: in the caller's context, not the queue's. */
static int shca_cq_copy_map(struct shca_cq *cq, struct ib_udata *udata)
{
	struct softhca_create_cq_resp resp = {};

	shca_queue_export(&cq->queue, &resp.cq);
	return ib_copy_to_udata(udata, &resp, min(sizeof(resp), udata->outlen));
}

static int shca_cq_udata_check(struct ib_device *ibdev,
			       struct ib_udata *udata, const char *verb)
{
	if (!udata)
		return 0;
	if (udata->outlen < sizeof(struct softhca_create_cq_resp)) {
		ibdev_dbg(ibdev, "%s: response buffer of %zu bytes\n", verb,
			  udata->outlen);
		return -EINVAL;
	}
	return shca_udata_no_request(ibdev, udata, verb);
}

int shca_create_cq(struct ib_cq *ibcq, const struct ib_cq_init_attr *attr,
		   struct ib_udata *udata)
{
	struct shca_cq *cq = to_shca_cq(ibcq);
	int ret;

	ret = shca_cq_check(ibcq->device, attr);
	if (ret)
		return ret;
	ret = shca_cq_udata_check(ibcq->device, udata, "create_cq");
	if (ret)
		return ret;
	ret = shca_cq_exec(cq, shca_cq_create_cmd, attr, udata);
	if (ret || !udata)
		return ret;

	ret = shca_cq_copy_map(cq, udata);
	if (ret)
		shca_cq_exec(cq, shca_cq_destroy_cmd, NULL, NULL);
	return ret;
}

int shca_destroy_cq(struct ib_cq *ibcq, struct ib_udata *udata)
{
	return shca_cq_exec(to_shca_cq(ibcq), shca_cq_destroy_cmd, NULL,
			    NULL);
}

/*
 * Moves the completions not yet consumed to @to.  For a user CQ the
 * consumer index is the process's, so the count is clamped to the ring.
 */
static int shca_cq_move(struct shca_cq *cq, struct shca_queue *to)
{
	struct shca_queue *from = &cq->queue;
	/* Acquire: what the consumer released is not copied. */
	u32 n = from->prod - smp_load_acquire(&from->ctrl->consumer);
	u32 i;

	n = min(n, from->num);
	if (n > to->num)
		return -EINVAL;
	for (i = 0; i < n; i++)
		memcpy(shca_queue_entry(to, i),
		       shca_queue_entry(from, from->prod - n + i),
		       to->entry_size);
	shca_queue_produced(to, n);
	/* A user CQ stays armed as it was. */
	WRITE_ONCE(to->ctrl->arm, READ_ONCE(from->ctrl->arm));
	swap(*from, *to);
	return 0;
}

static int shca_cq_resize_cmd(struct shca_cmd *cmd)
{
	struct shca_cq *cq = cmd->obj;
	const int *cqe = cmd->args.verb.attr;
	struct shca_queue ring;
	int ret;

	ret = shca_queue_init(&ring, *cqe, sizeof(struct softhca_cqe),
			      cmd->args.verb.udata);
	if (ret)
		return ret;

	spin_lock_irq(&cq->poll_lock);
	spin_lock(&cq->prod_lock);
	ret = shca_cq_move(cq, &ring);
	spin_unlock(&cq->prod_lock);
	spin_unlock_irq(&cq->poll_lock);

	if (ret)
		ibdev_dbg(cq->ibcq.device,
			  "resize_cq: %d entries hold fewer than pending\n",
			  *cqe);
	else
		cq->ibcq.cqe = cq->queue.num;
	/* The old ring on success, the unused new one on failure. */
	shca_queue_destroy(&ring);
	return ret;
}

int shca_resize_cq(struct ib_cq *ibcq, int cqe, struct ib_udata *udata)
{
	struct shca_cq *cq = to_shca_cq(ibcq);
	int ret;

	if (cqe < 1 || cqe > SHCA_MAX_CQE) {
		ibdev_dbg(ibcq->device, "resize_cq: %d entries\n", cqe);
		return -EINVAL;
	}
	ret = shca_cq_udata_check(ibcq->device, udata, "resize_cq");
	if (ret)
		return ret;
	/*
	 * A CQ is not made smaller than the completions it holds: those of
	 * every WR posted before the resize count, as on a hardware HCA,
	 * where they would be there already.
	 */
	shca_engine_flush();
	ret = shca_cq_exec(cq, shca_cq_resize_cmd, &cqe, udata);
	if (ret || !udata)
		return ret;
	return shca_cq_copy_map(cq, udata);
}

static const u8 shca_cqe_flags[][2] = {
	{ SOFTHCA_CQE_GRH, IB_WC_GRH | IB_WC_WITH_NETWORK_HDR_TYPE |
			   IB_WC_WITH_SMAC },
	{ SOFTHCA_CQE_IMM, IB_WC_WITH_IMM },
	{ SOFTHCA_CQE_INV, IB_WC_WITH_INVALIDATE },
};

static void shca_cqe_to_wc(struct shca_dev *dev, const struct softhca_cqe *cqe,
			   struct ib_wc *wc)
{
	unsigned int i;

	*wc = (struct ib_wc){
		.wr_id = cqe->wr_id,
		.status = cqe->status,
		.opcode = cqe->opcode,
		.vendor_err = cqe->vendor_err,
		.byte_len = cqe->byte_len,
		.qp = shca_qp_ib_lookup(dev, cqe->qp_num),
		.src_qp = cqe->src_qp,
		.pkey_index = cqe->pkey_index,
		.port_num = SHCA_PORT,
		.network_hdr_type = cqe->network_hdr_type,
	};
	if (cqe->flags & SOFTHCA_CQE_INV)
		wc->ex.invalidate_rkey = cqe->ex;
	else
		wc->ex.imm_data = (__force __be32)cqe->ex;
	for (i = 0; i < ARRAY_SIZE(shca_cqe_flags); i++)
		if (cqe->flags & shca_cqe_flags[i][0])
			wc->wc_flags |= shca_cqe_flags[i][1];
	memcpy(wc->smac, cqe->smac, ETH_ALEN);
}

/* Context: any, hard-irq included; bounded by @num. */
int shca_poll_cq(struct ib_cq *ibcq, int num, struct ib_wc *wc)
{
	struct shca_cq *cq = to_shca_cq(ibcq);
	struct shca_dev *dev = to_shca_dev(ibcq->device);
	struct shca_queue *q = &cq->queue;
	unsigned long flags;
	u32 n, i;

	spin_lock_irqsave(&cq->poll_lock, flags);
	n = min_t(u32, max(num, 0), shca_queue_pending(q));
	for (i = 0; i < n; i++)
		shca_cqe_to_wc(dev, shca_queue_entry(q, q->cons + i), &wc[i]);
	shca_queue_consumed(q, n);
	if (!n && !READ_ONCE(cq->spinning))
		WRITE_ONCE(cq->spinning, true);
	spin_unlock_irqrestore(&cq->poll_lock, flags);
	return n;
}

/* Context: any, hard-irq included. */
int shca_req_notify_cq(struct ib_cq *ibcq, enum ib_cq_notify_flags flags)
{
	struct shca_cq *cq = to_shca_cq(ibcq);
	struct shca_queue *q = &cq->queue;
	unsigned long irqflags;
	int missed = 0;

	spin_lock_irqsave(&cq->prod_lock, irqflags);
	/*
	 * Both bits (IB_CQ_SOLICITED_MASK itself, which SMC-R passes) ask
	 * for the next completion, the wider of the two, as mlx5 and rxe
	 * read them; a CQ armed for the next completion stays so.
	 */
	WRITE_ONCE(cq->spinning, false);
	if (flags & IB_CQ_NEXT_COMP)
		cq->notify = IB_CQ_NEXT_COMP;
	else if (cq->notify != IB_CQ_NEXT_COMP)
		cq->notify = flags & IB_CQ_SOLICITED;
	if (flags & IB_CQ_REPORT_MISSED_EVENTS) {
		/* Acquire: pairs with the poller's release of its index. */
		missed = q->prod != smp_load_acquire(&q->ctrl->consumer);
	}
	spin_unlock_irqrestore(&cq->prod_lock, irqflags);
	return missed;
}

static int shca_cq_async_destroy_cmd(struct shca_cmd *cmd)
{
	return ib_destroy_cq_user(cmd->obj, NULL);
}

/**
 * softhca_async_destroy_cq() - destroy a CQ from atomic context
 * @cq: the CQ, from ib_create_cq(); no QP may use it any more
 * @done: called with ib_destroy_cq()'s result, or NULL
 * @ctx: @done's argument
 *
 * See <rdma/softhca.h> for context, ordering and lifetime rules.
 * Return: 0 when queued; -EBUSY, -EIO or -EOPNOTSUPP (then @done is not
 * called and @cq still exists).
 */
int softhca_async_destroy_cq(struct ib_cq *cq, softhca_done_t done,
			     void *ctx)
{
	return shca_cmd_queue(cq->device, shca_cq_async_destroy_cmd, cq, done,
			      ctx);
}
EXPORT_SYMBOL(softhca_async_destroy_cq);
