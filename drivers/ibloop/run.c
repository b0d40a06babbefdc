// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Setting up and tearing down an ibloop run: two RC QPs of one device,
 * connected to each other through the device's own GID, with nothing but
 * ib_core's exported verbs, so that any RoCE or InfiniBand device will do.
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

static void ibloop_fill_av(struct ibloop_ctx *ctx, struct rdma_ah_attr *ah)
{
	union ib_gid dgid = ctx->sgid->gid;	/* the setter's is not const */

	ah->type = rdma_ah_find_type(ctx->dev, IBLOOP_PORT);
	rdma_ah_set_port_num(ah, IBLOOP_PORT);
	rdma_ah_set_sl(ah, 0);
	if (ah->type != RDMA_AH_ATTR_TYPE_ROCE) {
		rdma_ah_set_dlid(ah, ctx->port.lid);
		return;
	}
	rdma_ah_set_grh(ah, &dgid, 0, ctx->sgid->index, 64, 0);
	/* ib_core resolves the MAC for user QPs only; this is our own. */
	memcpy(ah->roce.dmac, ctx->dmac, ETH_ALEN);
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

static int ibloop_to_rtr(struct ibloop_ctx *ctx, struct ib_qp *qp, u32 dqpn)
{
	struct ib_qp_attr attr = {
		.qp_state = IB_QPS_RTR,
		.path_mtu = min_t(enum ib_mtu, IB_MTU_1024,
				  ctx->port.active_mtu),
		.dest_qp_num = dqpn,
		.rq_psn = IBLOOP_PSN,
		.max_dest_rd_atomic = ctx->rd_atom,
		.min_rnr_timer = 1,
	};

	ibloop_fill_av(ctx, &attr.ah_attr);
	return ib_modify_qp(qp, &attr, IB_QP_STATE | IB_QP_AV |
			    IB_QP_PATH_MTU | IB_QP_DEST_QPN | IB_QP_RQ_PSN |
			    IB_QP_MAX_DEST_RD_ATOMIC | IB_QP_MIN_RNR_TIMER);
}

static int ibloop_to_rts(struct ibloop_ctx *ctx, struct ib_qp *qp)
{
	struct ib_qp_attr attr = {
		.qp_state = IB_QPS_RTS,
		.timeout = 14,
		.retry_cnt = 7,
		.rnr_retry = 7,
		.sq_psn = IBLOOP_PSN,
		.max_rd_atomic = ctx->rd_atom,
	};

	return ib_modify_qp(qp, &attr, IB_QP_STATE | IB_QP_TIMEOUT |
			    IB_QP_RETRY_CNT | IB_QP_RNR_RETRY | IB_QP_SQ_PSN |
			    IB_QP_MAX_QP_RD_ATOMIC);
}

/* RESET to RTS, with the other side's QP as the destination. */
static int ibloop_connect_qp(struct ibloop_ctx *ctx, struct ib_qp *qp,
			     u32 dqpn)
{
	int ret;

	ret = ibloop_to_init(qp);
	if (!ret)
		ret = ibloop_to_rtr(ctx, qp, dqpn);
	if (!ret)
		ret = ibloop_to_rts(ctx, qp);
	if (ret)
		ibdev_dbg(ctx->dev, "ibloop: connect QP %u: %d\n",
			  qp->qp_num, ret);
	return ret;
}

static int ibloop_connect(struct ibloop_ctx *ctx)
{
	struct ib_qp *ini = ctx->side[IBLOOP_INI].qp;
	struct ib_qp *tgt = ctx->side[IBLOOP_TGT].qp;

	return ibloop_connect_qp(ctx, ini, tgt->qp_num) ?:
	       ibloop_connect_qp(ctx, tgt, ini->qp_num);
}

static int ibloop_create_side(struct ibloop_ctx *ctx, struct ibloop_side *side)
{
	struct ib_cq_init_attr cq_attr = { .cqe = 2 * ctx->cfg->depth };
	struct ib_qp_init_attr qp_attr = {
		.event_handler = ibloop_qp_event,
		.qp_context = side,
		.cap = {
			.max_send_wr = ctx->cfg->depth,
			.max_recv_wr = ctx->cfg->depth,
			.max_send_sge = 1,
			.max_recv_sge = 1,
		},
		.sq_sig_type = IB_SIGNAL_ALL_WR,
		.qp_type = IB_QPT_RC,
	};
	int ret;

	side->ctx = ctx;
	side->cq = ib_create_cq(ctx->dev, ibloop_comp, ibloop_cq_event, side,
				&cq_attr);
	if (IS_ERR(side->cq))
		return PTR_ERR(side->cq);
	qp_attr.send_cq = side->cq;
	qp_attr.recv_cq = side->cq;
	side->qp = ib_create_qp(ctx->pd, &qp_attr);
	if (IS_ERR(side->qp)) {
		ret = PTR_ERR(side->qp);
		goto err_destroy_cq;
	}
	return 0;

err_destroy_cq:
	ib_destroy_cq(side->cq);
	return ret;
}

static void ibloop_destroy_side(struct ibloop_ctx *ctx,
				struct ibloop_side *side)
{
	/* Normally done by ibloop_stop(); needed when setup failed. */
	ibloop_keep_off(ctx);
	ib_destroy_qp(side->qp);
	ib_destroy_cq(side->cq);
}

static void ibloop_free_buf(struct ibloop_ctx *ctx, struct ibloop_buf *buf)
{
	u32 i;

	for (i = 0; i < ctx->cfg->depth && buf[i].va; i++) {
		ib_dma_unmap_single(ctx->dev, buf[i].dma, ctx->cfg->size,
				    DMA_BIDIRECTIONAL);
		kfree(buf[i].va);
	}
	kfree(buf);
}

/* One buffer of @depth message slots, each mapped on its own. */
static struct ibloop_buf *ibloop_alloc_buf(struct ibloop_ctx *ctx)
{
	u32 i, size = ctx->cfg->size;
	struct ibloop_buf *buf;

	buf = kcalloc(ctx->cfg->depth, sizeof(*buf), GFP_KERNEL);
	if (!buf)
		return NULL;
	for (i = 0; i < ctx->cfg->depth; i++) {
		buf[i].va = kzalloc(size, GFP_KERNEL);
		if (!buf[i].va)
			goto err_free_buf;
		buf[i].dma = ib_dma_map_single(ctx->dev, buf[i].va, size,
					       DMA_BIDIRECTIONAL);
		if (ib_dma_mapping_error(ctx->dev, buf[i].dma)) {
			kfree(buf[i].va);
			buf[i].va = NULL;
			goto err_free_buf;
		}
	}
	return buf;

err_free_buf:
	ibloop_free_buf(ctx, buf);
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
			ibloop_free_buf(ctx, *ibloop_bufp(ctx, i));
}

/* A source and a destination buffer on each side. */
static int ibloop_alloc_bufs(struct ibloop_ctx *ctx)
{
	int i;

	for (i = 0; i < IBLOOP_SIDES * IBLOOP_BUFS; i++) {
		*ibloop_bufp(ctx, i) = ibloop_alloc_buf(ctx);
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
static const struct ib_gid_attr *ibloop_find_gid(struct ibloop_ctx *ctx)
{
	const struct ib_gid_attr *attr;
	int i;

	for (i = 0; i < ctx->port.gid_tbl_len; i++) {
		attr = rdma_get_gid_attr(ctx->dev, IBLOOP_PORT, i);
		if (IS_ERR(attr))
			continue;
		if (ibloop_gid_wanted(attr))
			return attr;
		rdma_put_gid_attr(attr);
	}
	return rdma_get_gid_attr(ctx->dev, IBLOOP_PORT, 0);
}

static int ibloop_get_gid(struct ibloop_ctx *ctx)
{
	const struct ib_gid_attr *attr;
	int ret;

	if (ctx->cfg->gid >= 0)
		attr = rdma_get_gid_attr(ctx->dev, IBLOOP_PORT, ctx->cfg->gid);
	else
		attr = ibloop_find_gid(ctx);
	if (IS_ERR(attr)) {
		ibdev_dbg(ctx->dev, "ibloop: no GID: %ld\n", PTR_ERR(attr));
		return -EINVAL;
	}
	if (rdma_protocol_roce(ctx->dev, IBLOOP_PORT)) {
		ret = rdma_read_gid_l2_fields(attr, NULL, ctx->dmac);
		if (ret) {
			rdma_put_gid_attr(attr);
			return ret;
		}
	}
	ctx->sgid = attr;
	return 0;
}

/* Port 1 must exist, connect without a CM, and take the queues asked. */
static int ibloop_check_dev(struct ibloop_ctx *ctx)
{
	const struct ib_device_attr *attrs = &ctx->dev->attrs;
	u32 depth = ctx->cfg->depth;
	int ret;

	if (rdma_start_port(ctx->dev) > IBLOOP_PORT ||
	    rdma_end_port(ctx->dev) < IBLOOP_PORT)
		return -ENODEV;
	/* iWARP QPs (siw) reach RTS only through the iw_cm. */
	if (rdma_protocol_iwarp(ctx->dev, IBLOOP_PORT))
		return -EOPNOTSUPP;
	ret = ib_query_port(ctx->dev, IBLOOP_PORT, &ctx->port);
	if (ret)
		return ret;
	if (depth > attrs->max_qp_wr || 2 * depth > attrs->max_cqe)
		return -EINVAL;
	ctx->rd_atom = min3(attrs->max_qp_rd_atom, attrs->max_qp_init_rd_atom,
			    IBLOOP_RD_ATOM);
	if (ctx->cfg->op == IBLOOP_OP_READ && !ctx->rd_atom)
		return -EOPNOTSUPP;
	return 0;
}

static struct ib_pd *ibloop_alloc_pd(struct ibloop_ctx *ctx)
{
	/*
	 * Both QPs share this PD and its DMA MR: writes and reads target
	 * DMA addresses through the global rkey, which is why the flag is
	 * asked for only when an rkey is needed.
	 */
	bool rkey = ctx->cfg->op != IBLOOP_OP_SEND;

	return ib_alloc_pd(ctx->dev, rkey ? IB_PD_UNSAFE_GLOBAL_RKEY : 0);
}

/* Everything but the device and its GID, which the caller holds. */
static int ibloop_run_dev(struct ibloop_ctx *ctx)
{
	int ret;

	ctx->pd = ibloop_alloc_pd(ctx);
	if (IS_ERR(ctx->pd))
		return PTR_ERR(ctx->pd);
	ret = ibloop_alloc_bufs(ctx);
	if (ret)
		goto dealloc_pd;
	ret = ibloop_create_side(ctx, &ctx->side[IBLOOP_INI]);
	if (ret)
		goto free_bufs;
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
free_bufs:
	ibloop_free_bufs(ctx);
dealloc_pd:
	ib_dealloc_pd(ctx->pd);
	return ret;
}

/*
 * The run in progress (ctl.c runs one at a time), for ibloop_remove_one():
 * a kernel client must let go of a device that is being unregistered, as
 * ib_core waits for it to.  A run is published before it looks its device
 * up, and found by the device's name, so that a removal that begins
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
	spin_lock(&ibloop_live_lock);
	if (ibloop_live && !strcmp(ibloop_live->cfg->dev, dev_name(&dev->dev))) {
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
 * ibloop_run() - one loopback run on a device
 * @cfg: what to run
 * @res: where the results go; @res->status is also returned
 *
 * Runs in the caller's context, which must be able to sleep, and returns
 * when the run ended.  The device is held for the run; unregistering it
 * ends the run (ibloop_client), whose teardown (QPs to ERR, the flushes
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
	init_waitqueue_head(&ctx->wq);
	ibloop_init_context(ctx);
	ibloop_set_live(ctx);
	ctx->dev = ib_device_get_by_name(cfg->dev, RDMA_DRIVER_UNKNOWN);
	if (!ctx->dev) {
		ret = -ENODEV;
		goto unpublish;
	}
	ret = ibloop_check_dev(ctx);
	if (ret)
		goto put_dev;
	ret = ibloop_get_gid(ctx);
	if (ret)
		goto put_dev;
	ret = ibloop_run_dev(ctx);
	res->max_handler_depth = atomic_read(&ctx->max_handler_depth);

	rdma_put_gid_attr(ctx->sgid);
put_dev:
	ib_device_put(ctx->dev);
unpublish:
	ibloop_set_live(NULL);
	kfree(ctx);
out:
	res->status = ret;
	return ret;
}
