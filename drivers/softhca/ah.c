// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Address handles.
 *
 * The one exception to the command queue: ib_core calls create_ah and
 * destroy_ah without RDMA_CREATE_AH_SLEEPABLE / RDMA_DESTROY_AH_SLEEPABLE
 * from atomic context (rdma_cm's UD paths, ib_mad's response paths), and
 * the object is core-allocated, so both are done inline: validate, count
 * against the limit, copy.  Neither allocates, nor sleeps unless the
 * caller says it may: destroy_ah then first lets the sends posted before
 * it leave (shca_ah_drain()).
 */

#include <kunit/visibility.h>
#include <rdma/ib_cache.h>
#include <rdma/softhca-abi.h>
#include <rdma/softhca.h>

#include "ah.h"
#include "cmdq.h"
#include "dev.h"
#include "engine.h"
#include "fault.h"
#include "qp.h"
#include "transport.h"

/**
 * shca_av_check() - check a RoCEv2 address vector from a verb
 * @ibdev: the device
 * @attr: the attributes, as ib_core passes them (sgid_attr resolved)
 *
 * RoCEv2 needs a GRH, whose source GID attribute names the source address.
 *
 * Context: any.
 * Return: 0 or -EINVAL.
 */
int shca_av_check(struct ib_device *ibdev, const struct rdma_ah_attr *attr)
{
	if (attr->type != RDMA_AH_ATTR_TYPE_ROCE) {
		ibdev_dbg(ibdev, "address vector: type %d is not RoCE\n",
			  attr->type);
		return -EINVAL;
	}
	if (!(rdma_ah_get_ah_flags(attr) & IB_AH_GRH) ||
	    !attr->grh.sgid_attr) {
		ibdev_dbg(ibdev, "address vector: no GRH or source GID\n");
		return -EINVAL;
	}
	if (rdma_ah_get_port_num(attr) != SHCA_PORT) {
		ibdev_dbg(ibdev, "address vector: port %u\n",
			  rdma_ah_get_port_num(attr));
		return -EINVAL;
	}
	return 0;
}

/*
 * @av, of @dev's AH or QP, takes @attr.  Context: any; @attr's sgid_attr
 * must be valid for the call.
 */
void shca_av_set(struct shca_av *av, const struct shca_dev *dev,
		 const struct rdma_ah_attr *attr)
{
	struct net_device *ndev;

	av->attr = *attr;
	av->attr.grh.sgid_attr = NULL;
	av->sgid = attr->grh.sgid_attr->gid;
	av->net_type = rdma_gid_attr_network_type(attr->grh.sgid_attr);
	/* The generation first: a device leaving meanwhile invalidates. */
	av->peer_gen = shca_loop_generation();
	rcu_read_lock();
	/* A RoCE GID's netdev is the device's own or a VLAN above it. */
	ndev = rdma_read_gid_attr_ndev_rcu(attr->grh.sgid_attr);
	av->ifindex = IS_ERR(ndev) ? dev->ndev->ifindex : ndev->ifindex;
	av->peer = shca_loop_find_gid(dev, &attr->grh.dgid);
	rcu_read_unlock();
}

static int shca_ah_check_udata(struct ib_device *ibdev,
			       struct ib_udata *udata)
{
	if (!udata)
		return 0;
	if (udata->outlen < sizeof(struct softhca_create_ah_resp)) {
		ibdev_dbg(ibdev, "create_ah: response buffer of %zu bytes\n",
			  udata->outlen);
		return -EINVAL;
	}
	return shca_udata_no_request(ibdev, udata, "create_ah");
}

/*
 * Tells the provider the AH's number, for its UD WQEs.  Only ib_uverbs
 * passes udata, from process context.
 */
static int shca_ah_copy_num(struct shca_ah *ah, struct ib_udata *udata)
{
	struct softhca_create_ah_resp resp = { .ah_num = ah->num };

	return ib_copy_to_udata(udata, &resp, min(sizeof(resp), udata->outlen));
}

int shca_create_ah(struct ib_ah *ibah, struct rdma_ah_init_attr *init_attr,
		   struct ib_udata *udata)
{
	const struct rdma_ah_attr *attr = init_attr->ah_attr;
	struct shca_dev *dev = to_shca_dev(ibah->device);
	struct shca_ah *ah = to_shca_ah(ibah);
	unsigned long flags;
	int ret;

	ret = shca_av_check(ibah->device, attr);
	if (ret)
		return ret;
	ret = shca_ah_check_udata(ibah->device, udata);
	if (ret)
		return ret;
	ret = shca_dev_res_get(dev, SHCA_RES_AH);
	if (ret)
		return ret;

	shca_av_set(&ah->av, dev, attr);
	/* The caller may hold a spinlock with interrupts off. */
	xa_lock_irqsave(&dev->ahs, flags);
	ret = shca_fault() ? -ENOMEM :
	      __xa_alloc(&dev->ahs, &ah->num, ah, XA_LIMIT(1, SHCA_MAX_AH),
			 GFP_ATOMIC);
	xa_unlock_irqrestore(&dev->ahs, flags);
	if (ret) {
		shca_dev_res_put(dev, SHCA_RES_AH);
		return ret;
	}
	if (!udata)
		return 0;
	ret = shca_ah_copy_num(ah, udata);
	if (ret)
		shca_destroy_ah(ibah, 0);
	return ret;
}
EXPORT_SYMBOL_IF_KUNIT(shca_create_ah);

int shca_query_ah(struct ib_ah *ibah, struct rdma_ah_attr *attr)
{
	*attr = to_shca_ah(ibah)->av.attr;
	return 0;
}

/*
 * The sends posted before destroy_ah leave before the AH goes: a UD WQE
 * names its AH by number, and the engine looks it up when it takes the
 * WQE, where a hardware HCA copies the address vector at post time.  Any
 * UD QP of the AH's PD may name it.
 */
static void shca_ah_drain(struct shca_dev *dev, struct ib_pd *pd)
{
	unsigned long qpn = 0;
	struct shca_qp *qp;

	while ((qp = shca_qp_get_next(dev, &qpn))) {
		if (qp->ibqp.pd == pd && qp->ibqp.qp_type == IB_QPT_UD)
			shca_engine_drain_sq(qp);
		shca_qp_put(qp);
		qpn++;
	}
}

/*
 * Context: any.  Sleeps only when @flags has RDMA_DESTROY_AH_SLEEPABLE
 * (ib_uverbs, and kernel callers in process context): then the sends
 * posted before it are taken first (shca_ah_drain()).  A caller that
 * cannot sleep (ib_mad, rdma_cm's UD paths) destroys an AH whose sends
 * have completed.
 */
int shca_destroy_ah(struct ib_ah *ibah, u32 flags)
{
	struct shca_dev *dev = to_shca_dev(ibah->device);
	unsigned long irqflags;

	if (flags & RDMA_DESTROY_AH_SLEEPABLE)
		shca_ah_drain(dev, ibah->pd);
	xa_lock_irqsave(&dev->ahs, irqflags);
	__xa_erase(&dev->ahs, to_shca_ah(ibah)->num);
	xa_unlock_irqrestore(&dev->ahs, irqflags);
	shca_dev_res_put(dev, SHCA_RES_AH);
	return 0;
}

static int shca_ah_async_create_cmd(struct shca_cmd *cmd)
{
	struct shca_cmd_create_ah *args = &cmd->args.create_ah;

	args->ah = rdma_create_ah(args->pd, &args->attr,
				  RDMA_CREATE_AH_SLEEPABLE);
	rdma_destroy_ah_attr(&args->attr);
	return PTR_ERR_OR_ZERO(args->ah);
}

static void shca_ah_async_created(struct shca_cmd *cmd)
{
	cmd->args.create_ah.done(cmd->ctx, cmd->args.create_ah.ah);
}

/**
 * softhca_async_create_ah() - create an address handle from atomic context
 * @pd: the PD of the new AH
 * @ah_attr: its attributes; copied, with a reference on its source GID
 *	attribute, so the caller may reuse them at once
 * @done: called with the new AH or an ERR_PTR()
 * @ctx: @done's argument
 *
 * See <rdma/softhca.h> for context, ordering and lifetime rules.
 * Return: 0 when queued; -EBUSY, -EIO or -EOPNOTSUPP (then @done is not
 * called).
 */
int softhca_async_create_ah(struct ib_pd *pd,
			    const struct rdma_ah_attr *ah_attr,
			    softhca_ah_done_t done, void *ctx)
{
	struct shca_cmd *cmd;

	cmd = shca_cmd_slot_get(pd->device, shca_ah_async_create_cmd, NULL,
				ctx);
	if (IS_ERR(cmd))
		return PTR_ERR(cmd);
	cmd->notify = shca_ah_async_created;
	cmd->args.create_ah.pd = pd;
	cmd->args.create_ah.done = done;
	rdma_copy_ah_attr(&cmd->args.create_ah.attr, ah_attr);
	shca_cmd_slot_submit(cmd);
	return 0;
}
EXPORT_SYMBOL(softhca_async_create_ah);

static int shca_ah_async_destroy_cmd(struct shca_cmd *cmd)
{
	rdma_destroy_ah(cmd->obj, RDMA_DESTROY_AH_SLEEPABLE);
	return 0;
}

/**
 * softhca_async_destroy_ah() - destroy an address handle from atomic context
 * @ah: the address handle
 * @done: called with the result once it is destroyed, or NULL
 * @ctx: @done's argument
 *
 * See <rdma/softhca.h> for context, ordering and lifetime rules.
 * Return: 0 when queued; -EBUSY, -EIO or -EOPNOTSUPP (then @done is not
 * called and @ah still exists).
 */
int softhca_async_destroy_ah(struct ib_ah *ah, softhca_done_t done,
			     void *ctx)
{
	return shca_cmd_queue(ah->device, shca_ah_async_destroy_cmd, ah, done,
			      ctx);
}
EXPORT_SYMBOL(softhca_async_destroy_ah);
