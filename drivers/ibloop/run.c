// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Setting up and tearing down an ibloop run: two RC QPs, of one device
 * and connected through its own GID, or of two devices (peer=) and
 * connected through theirs, e.g. across a wire between two network
 * namespaces; with nothing but ib_core's exported verbs, so that any RoCE
 * or InfiniBand device will do, and any two side by side.
 *
 * Each side has its own CQ, shared by its send and receive queues: a send
 * then completes on one CQ and is received on the other, which exercises
 * the device's routing of completions, while one CQ per QP keeps a single
 * handler and arm per side.
 */
#include <linux/slab.h>
#include <net/ipv6.h>
#include <rdma/ib_cache.h>

#include "ctx.h"

#define IBLOOP_PSN	0x1b100
#define IBLOOP_RD_ATOM	16		/* RDMA reads in flight per QP, at most */

/* Asynchronous events: the completions tell the story; just log them. */
static void ibloop_cq_event(struct ib_event *event, void *cq_context)
{
	ibdev_dbg(event->device, "ibloop: CQ event %s\n",
		  ib_event_msg(event->event));
}

static void ibloop_qp_event(struct ib_event *event, void *qp_context)
{
	ibdev_dbg(event->device, "ibloop: QP event %s\n",
		  ib_event_msg(event->event));
}

/* The other side of a run. */
static struct ibloop_side *ibloop_other(struct ibloop_side *side)
{
	return &side->ctx->side[side == &side->ctx->side[IBLOOP_INI]];
}

/* The path from @side's QP to the other side's. */
static void ibloop_fill_av(struct ibloop_side *side, struct rdma_ah_attr *ah)
{
	struct ibloop_side *to = ibloop_other(side);
	union ib_gid dgid = to->sgid->gid;	/* the setter's is not const */

	ah->type = rdma_ah_find_type(side->dev, IBLOOP_PORT);
	rdma_ah_set_port_num(ah, IBLOOP_PORT);
	rdma_ah_set_sl(ah, 0);
	if (ah->type != RDMA_AH_ATTR_TYPE_ROCE) {
		rdma_ah_set_dlid(ah, to->port.lid);
		return;
	}
	rdma_ah_set_grh(ah, &dgid, 0, side->sgid->index, 64, 0);
	/* ib_core resolves the MAC for user QPs only; this is our own. */
	memcpy(ah->roce.dmac, to->dmac, ETH_ALEN);
}

static int ibloop_to_init(struct ib_qp *qp)
{
	struct ib_qp_attr attr = {
		.qp_state = IB_QPS_INIT,
		.port_num = IBLOOP_PORT,
		.qp_access_flags = IB_ACCESS_LOCAL_WRITE |
				   IB_ACCESS_REMOTE_WRITE |
				   IB_ACCESS_REMOTE_READ,
	};

	return ib_modify_qp(qp, &attr, IB_QP_STATE | IB_QP_PKEY_INDEX |
			    IB_QP_PORT | IB_QP_ACCESS_FLAGS);
}

static int ibloop_to_rtr(struct ibloop_side *side)
{
	struct ibloop_side *to = ibloop_other(side);
	struct ib_qp_attr attr = {
		.qp_state = IB_QPS_RTR,
		.path_mtu = min3(IB_MTU_1024, side->port.active_mtu,
				 to->port.active_mtu),
		.dest_qp_num = to->qp->qp_num,
		.rq_psn = IBLOOP_PSN,
		.max_dest_rd_atomic = side->ctx->rd_atom,
		.min_rnr_timer = 1,
	};

	ibloop_fill_av(side, &attr.ah_attr);
	return ib_modify_qp(side->qp, &attr, IB_QP_STATE | IB_QP_AV |
			    IB_QP_PATH_MTU | IB_QP_DEST_QPN | IB_QP_RQ_PSN |
			    IB_QP_MAX_DEST_RD_ATOMIC | IB_QP_MIN_RNR_TIMER);
}

static int ibloop_to_rts(struct ibloop_side *side)
{
	struct ib_qp_attr attr = {
		.qp_state = IB_QPS_RTS,
		.timeout = 14,
		.retry_cnt = 7,
		.rnr_retry = 7,
		.sq_psn = IBLOOP_PSN,
		.max_rd_atomic = side->ctx->rd_atom,
	};

	return ib_modify_qp(side->qp, &attr, IB_QP_STATE | IB_QP_TIMEOUT |
			    IB_QP_RETRY_CNT | IB_QP_RNR_RETRY | IB_QP_SQ_PSN |
			    IB_QP_MAX_QP_RD_ATOMIC);
}

/* RESET to RTS, with the other side's QP as the destination. */
static int ibloop_connect_qp(struct ibloop_side *side)
{
	int ret;

	ret = ibloop_to_init(side->qp);
	if (!ret)
		ret = ibloop_to_rtr(side);
	if (!ret)
		ret = ibloop_to_rts(side);
	if (ret)
		ibdev_dbg(side->dev, "ibloop: connect QP %u: %d\n",
			  side->qp->qp_num, ret);
	return ret;
}

static int ibloop_connect(struct ibloop_ctx *ctx)
{
	return ibloop_connect_qp(&ctx->side[IBLOOP_INI]) ?:
	       ibloop_connect_qp(&ctx->side[IBLOOP_TGT]);
}

/*
 * A QP's queues: the messages in flight, and on ib_core's CQs one more WR
 * on each for ib_drain_qp()'s marker.
 */
static u32 ibloop_qp_depth(const struct ibloop_cfg *cfg)
{
	return cfg->depth + ibloop_core_cq(cfg);
}

/* Each side's CQ: a completion per WR its queues can hold. */
static int ibloop_nr_cqe(const struct ibloop_cfg *cfg)
{
	return 2 * ibloop_qp_depth(cfg);
}

static const enum ib_poll_context ibloop_poll_ctx[] = {
	[IBLOOP_MODE_DIRECT] = IB_POLL_DIRECT,
	[IBLOOP_MODE_SOFTIRQ] = IB_POLL_SOFTIRQ,
	[IBLOOP_MODE_WORKQUEUE] = IB_POLL_WORKQUEUE,
	[IBLOOP_MODE_UNBOUND] = IB_POLL_UNBOUND_WORKQUEUE,
	[IBLOOP_MODE_POOL] = IB_POLL_SOFTIRQ,
};

/*
 * The side's CQ: ibloop's own, or one of ib_core's, the initiator's on
 * completion vector 0 and the target's on 1 where there are two, as a
 * ULP spreads its queues.
 */
static struct ib_cq *ibloop_get_cq(struct ibloop_side *side)
{
	const struct ibloop_cfg *cfg = side->ctx->cfg;
	struct ib_cq_init_attr cq_attr = { .cqe = ibloop_nr_cqe(cfg) };
	int vector = (side - side->ctx->side) % side->dev->num_comp_vectors;

	switch (cfg->mode) {
	case IBLOOP_MODE_HANDLER:
	case IBLOOP_MODE_POLL:
		return ib_create_cq(side->dev, ibloop_comp, ibloop_cq_event,
				    side, &cq_attr);
	case IBLOOP_MODE_POOL:
		return ib_cq_pool_get(side->dev, ibloop_nr_cqe(cfg), vector,
				      ibloop_poll_ctx[cfg->mode]);
	default:
		return ib_alloc_cq(side->dev, side, ibloop_nr_cqe(cfg), vector,
				   ibloop_poll_ctx[cfg->mode]);
	}
}

static void ibloop_put_cq(struct ibloop_side *side)
{
	const struct ibloop_cfg *cfg = side->ctx->cfg;

	switch (cfg->mode) {
	case IBLOOP_MODE_HANDLER:
	case IBLOOP_MODE_POLL:
		ib_destroy_cq(side->cq);
		break;
	case IBLOOP_MODE_POOL:
		ib_cq_pool_put(side->cq, ibloop_nr_cqe(cfg));
		break;
	default:
		ib_free_cq(side->cq);
	}
}

static int ibloop_create_side(struct ibloop_ctx *ctx, struct ibloop_side *side)
{
	struct ib_qp_init_attr qp_attr = {
		.event_handler = ibloop_qp_event,
		.qp_context = side,
		.cap = {
			.max_send_wr = ibloop_qp_depth(ctx->cfg),
			.max_recv_wr = ibloop_qp_depth(ctx->cfg),
			.max_send_sge = 1,
			.max_recv_sge = 1,
		},
		.sq_sig_type = IB_SIGNAL_ALL_WR,
		.qp_type = IB_QPT_RC,
	};
	int ret;

	side->cq = ibloop_get_cq(side);
	if (IS_ERR(side->cq))
		return PTR_ERR(side->cq);
	qp_attr.send_cq = side->cq;
	qp_attr.recv_cq = side->cq;
	side->qp = ib_create_qp(side->pd, &qp_attr);
	if (IS_ERR(side->qp)) {
		ret = PTR_ERR(side->qp);
		goto err_put_cq;
	}
	return 0;

err_put_cq:
	ibloop_put_cq(side);
	return ret;
}

static void ibloop_destroy_side(struct ibloop_ctx *ctx,
				struct ibloop_side *side)
{
	/* Normally done by ibloop_stop(); needed when setup failed. */
	ibloop_keep_off(ctx);
	ib_destroy_qp(side->qp);
	ibloop_put_cq(side);
}

static void ibloop_free_buf(struct ibloop_side *side, struct ibloop_buf *buf)
{
	const struct ibloop_cfg *cfg = side->ctx->cfg;
	u32 i;

	for (i = 0; i < cfg->depth && buf[i].va; i++) {
		ib_dma_unmap_single(side->dev, buf[i].dma, cfg->size,
				    DMA_BIDIRECTIONAL);
		kfree(buf[i].va);
	}
	kfree(buf);
}

/* One buffer of @depth message slots, each mapped on its own. */
static struct ibloop_buf *ibloop_alloc_buf(struct ibloop_side *side)
{
	const struct ibloop_cfg *cfg = side->ctx->cfg;
	struct ibloop_buf *buf;
	u32 i;

	buf = kcalloc(cfg->depth, sizeof(*buf), GFP_KERNEL);
	if (!buf)
		return NULL;
	for (i = 0; i < cfg->depth; i++) {
		buf[i].va = kzalloc(cfg->size, GFP_KERNEL);
		if (!buf[i].va)
			goto err_free_buf;
		buf[i].dma = ib_dma_map_single(side->dev, buf[i].va, cfg->size,
					       DMA_BIDIRECTIONAL);
		if (ib_dma_mapping_error(side->dev, buf[i].dma)) {
			kfree(buf[i].va);
			buf[i].va = NULL;
			goto err_free_buf;
		}
	}
	return buf;

err_free_buf:
	ibloop_free_buf(side, buf);
	return NULL;
}

/* Buffer @i of the IBLOOP_SIDES * IBLOOP_BUFS buffers of a run. */
static struct ibloop_buf **ibloop_bufp(struct ibloop_ctx *ctx, int i)
{
	return &ctx->side[i / IBLOOP_BUFS].buf[i % IBLOOP_BUFS];
}

static void ibloop_free_bufs(struct ibloop_ctx *ctx)
{
	int i;

	for (i = 0; i < IBLOOP_SIDES * IBLOOP_BUFS; i++)
		if (*ibloop_bufp(ctx, i))
			ibloop_free_buf(&ctx->side[i / IBLOOP_BUFS],
					*ibloop_bufp(ctx, i));
}

/* A source and a destination buffer on each side, mapped for its device. */
static int ibloop_alloc_bufs(struct ibloop_ctx *ctx)
{
	int i;

	for (i = 0; i < IBLOOP_SIDES * IBLOOP_BUFS; i++) {
		*ibloop_bufp(ctx, i) =
			ibloop_alloc_buf(&ctx->side[i / IBLOOP_BUFS]);
		if (!*ibloop_bufp(ctx, i)) {
			ibloop_free_bufs(ctx);
			return -ENOMEM;
		}
	}
	return 0;
}

static bool ibloop_gid_wanted(const struct ib_gid_attr *attr)
{
	return attr->gid_type == IB_GID_TYPE_ROCE_UDP_ENCAP &&
		ipv6_addr_v4mapped((const struct in6_addr *)attr->gid.raw);
}

/* The first RoCE v2 GID with an IPv4 address, else index 0. */
static const struct ib_gid_attr *ibloop_find_gid(struct ibloop_side *side)
{
	const struct ib_gid_attr *attr;
	int i;

	for (i = 0; i < side->port.gid_tbl_len; i++) {
		attr = rdma_get_gid_attr(side->dev, IBLOOP_PORT, i);
		if (IS_ERR(attr))
			continue;
		if (ibloop_gid_wanted(attr))
			return attr;
		rdma_put_gid_attr(attr);
	}
	return rdma_get_gid_attr(side->dev, IBLOOP_PORT, 0);
}

static int ibloop_get_gid(struct ibloop_side *side, int index)
{
	const struct ib_gid_attr *attr;
	int ret;

	if (index >= 0)
		attr = rdma_get_gid_attr(side->dev, IBLOOP_PORT, index);
	else
		attr = ibloop_find_gid(side);
	if (IS_ERR(attr)) {
		ibdev_dbg(side->dev, "ibloop: no GID: %ld\n", PTR_ERR(attr));
		return -EINVAL;
	}
	if (rdma_protocol_roce(side->dev, IBLOOP_PORT)) {
		ret = rdma_read_gid_l2_fields(attr, NULL, side->dmac);
		if (ret) {
			rdma_put_gid_attr(attr);
			return ret;
		}
	}
	side->sgid = attr;
	return 0;
}

/*
 * Port 1 must exist, connect without a CM, and take the queues asked;
 * the run's reads in flight are the fewest either device takes.
 */
static int ibloop_check_dev(struct ibloop_side *side)
{
	const struct ib_device_attr *attrs = &side->dev->attrs;
	struct ibloop_ctx *ctx = side->ctx;
	int ret;

	if (rdma_start_port(side->dev) > IBLOOP_PORT ||
	    rdma_end_port(side->dev) < IBLOOP_PORT)
		return -ENODEV;
	/* iWARP QPs (siw) reach RTS only through the iw_cm. */
	if (rdma_protocol_iwarp(side->dev, IBLOOP_PORT))
		return -EOPNOTSUPP;
	ret = ib_query_port(side->dev, IBLOOP_PORT, &side->port);
	if (ret)
		return ret;
	if (ibloop_qp_depth(ctx->cfg) > attrs->max_qp_wr ||
	    ibloop_nr_cqe(ctx->cfg) > attrs->max_cqe)
		return -EINVAL;
	ctx->rd_atom = min3(attrs->max_qp_rd_atom, attrs->max_qp_init_rd_atom,
			    ctx->rd_atom);
	if (ctx->cfg->op == IBLOOP_OP_READ && !ctx->rd_atom)
		return -EOPNOTSUPP;
	return 0;
}

static struct ib_pd *ibloop_alloc_pd(struct ibloop_side *side)
{
	/*
	 * The side's QP and buffers are in this PD and reached through its
	 * DMA MR: writes and reads target DMA addresses through the global
	 * rkey, which is why the flag is asked for only when an rkey is
	 * needed.
	 */
	bool rkey = side->ctx->cfg->op != IBLOOP_OP_SEND;

	return ib_alloc_pd(side->dev, rkey ? IB_PD_UNSAFE_GLOBAL_RKEY : 0);
}

/* Holds device @name for @side, with its GID @gid (-1: any) and a PD. */
static int ibloop_open_side(struct ibloop_side *side, const char *name,
			    int gid)
{
	int ret;

	side->dev = ib_device_get_by_name(name, RDMA_DRIVER_UNKNOWN);
	if (!side->dev)
		return -ENODEV;
	ret = ibloop_check_dev(side);
	if (ret)
		goto put_dev;
	ret = ibloop_get_gid(side, gid);
	if (ret)
		goto put_dev;
	side->pd = ibloop_alloc_pd(side);
	if (IS_ERR(side->pd)) {
		ret = PTR_ERR(side->pd);
		goto put_gid;
	}
	return 0;

put_gid:
	rdma_put_gid_attr(side->sgid);
put_dev:
	ib_device_put(side->dev);
	return ret;
}

static void ibloop_close_side(struct ibloop_side *side)
{
	ib_dealloc_pd(side->pd);
	rdma_put_gid_attr(side->sgid);
	ib_device_put(side->dev);
}

/* Everything but the devices, their GIDs and PDs, which the caller holds. */
static int ibloop_run_qps(struct ibloop_ctx *ctx)
{
	int ret;

	ret = ibloop_alloc_bufs(ctx);
	if (ret)
		return ret;
	if (ibloop_core_cq(ctx->cfg)) {
		ret = ibloop_alloc_cqes(ctx);
		if (ret)
			goto free_bufs;
	}
	ret = ibloop_create_side(ctx, &ctx->side[IBLOOP_INI]);
	if (ret)
		goto free_cqes;
	ret = ibloop_create_side(ctx, &ctx->side[IBLOOP_TGT]);
	if (ret)
		goto destroy_ini;
	ret = ibloop_connect(ctx);
	if (ret)
		goto destroy_tgt;
	ret = ibloop_traffic(ctx);

destroy_tgt:
	ibloop_destroy_side(ctx, &ctx->side[IBLOOP_TGT]);
destroy_ini:
	ibloop_destroy_side(ctx, &ctx->side[IBLOOP_INI]);
free_cqes:
	ibloop_free_cqes(ctx);
free_bufs:
	ibloop_free_bufs(ctx);
	return ret;
}

/*
 * The run in progress (ctl.c runs one at a time), for ibloop_remove_one():
 * a kernel client must let go of a device that is being unregistered, as
 * ib_core waits for it to.  A run is published before it looks its device
 * up, and found by its devices' names, so that a removal that begins
 * between the lookup and the traffic is not missed.
 */
static DEFINE_SPINLOCK(ibloop_live_lock);
static struct ibloop_ctx *ibloop_live;

static void ibloop_set_live(struct ibloop_ctx *ctx)
{
	spin_lock(&ibloop_live_lock);
	ibloop_live = ctx;
	spin_unlock(&ibloop_live_lock);
}

/* Ends a run on @dev, whose teardown then proceeds as any other's. */
static void ibloop_remove_one(struct ib_device *dev, void *client_data)
{
	const char *name = dev_name(&dev->dev);
	const struct ibloop_cfg *cfg;

	spin_lock(&ibloop_live_lock);
	cfg = ibloop_live ? ibloop_live->cfg : NULL;
	if (cfg && (!strcmp(cfg->dev, name) ||
		    !strcmp(ibloop_peer(cfg), name))) {
		WRITE_ONCE(ibloop_live->removed, true);
		wake_up(&ibloop_live->wq);
	}
	spin_unlock(&ibloop_live_lock);
}

struct ib_client ibloop_client = {
	.name = "ibloop",
	.remove = ibloop_remove_one,
};

/**
 * ibloop_run() - one run, on a device or between two
 * @cfg: what to run
 * @res: where the results go; @res->status is also returned
 *
 * Runs in the caller's context, which must be able to sleep, and returns
 * when the run ended.  The devices are held for the run; unregistering
 * one ends the run (ibloop_client), whose teardown (QPs to ERR, the flushes
 * polled, the objects destroyed) the unregistration waits for.
 *
 * Return: 0, -ENODEV (no such device, or it went away during the run),
 * -EINVAL (a queue or GID the device cannot have), -EOPNOTSUPP (iWARP, or
 * reads on a device without them), -ENOMEM, -EIO (a completion with an
 * error status), -ETIMEDOUT (nothing completed for 10 s), -EINTR (fatal
 * signal) or a verb's error.
 */
int ibloop_run(const struct ibloop_cfg *cfg, struct ibloop_result *res)
{
	struct ibloop_ctx *ctx;
	int ret;

	ctx = kzalloc(struct_size(ctx, msg, cfg->depth), GFP_KERNEL);
	if (!ctx) {
		ret = -ENOMEM;
		goto out;
	}
	ctx->cfg = cfg;
	ctx->res = res;
	ctx->rd_atom = IBLOOP_RD_ATOM;
	ctx->side[IBLOOP_INI].ctx = ctx;
	ctx->side[IBLOOP_TGT].ctx = ctx;
	init_waitqueue_head(&ctx->wq);
	ibloop_init_context(ctx);
	ibloop_set_live(ctx);
	ret = ibloop_open_side(&ctx->side[IBLOOP_INI], cfg->dev, cfg->gid);
	if (ret)
		goto unpublish;
	/* gid= names the initiator's GID, and the target's on its device. */
	ret = ibloop_open_side(&ctx->side[IBLOOP_TGT], ibloop_peer(cfg),
			       cfg->peer[0] ? -1 : cfg->gid);
	if (ret)
		goto close_ini;
	ret = ibloop_run_qps(ctx);
	res->max_handler_depth = atomic_read(&ctx->max_handler_depth);

	ibloop_close_side(&ctx->side[IBLOOP_TGT]);
close_ini:
	ibloop_close_side(&ctx->side[IBLOOP_INI]);
unpublish:
	ibloop_set_live(NULL);
	kfree(ctx);
out:
	res->status = ret;
	return ret;
}
