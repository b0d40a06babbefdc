// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Address handles.
 *
 * The one exception to the command queue: ib_core calls create_ah and
 * destroy_ah without RDMA_CREATE_AH_SLEEPABLE / RDMA_DESTROY_AH_SLEEPABLE
 * from atomic context (rdma_cm's UD paths, ib_mad's response paths), and
 * the object is core-allocated, so both are done inline: validate, count
 * against the limit, copy.  Nothing here sleeps or allocates.
 */

#include <kunit/visibility.h>
#include <rdma/softhca.h>

#include "ah.h"
#include "cmdq.h"
#include "dev.h"

/* RoCEv2 needs a GRH, whose GID index names the source address. */
static int shca_ah_check(struct ib_device *ibdev,
			 const struct rdma_ah_attr *attr)
{
	if (attr->type != RDMA_AH_ATTR_TYPE_ROCE) {
		ibdev_dbg(ibdev, "create_ah: type %d is not RoCE\n",
			  attr->type);
		return -EINVAL;
	}
	if (!(rdma_ah_get_ah_flags(attr) & IB_AH_GRH) ||
	    !attr->grh.sgid_attr) {
		ibdev_dbg(ibdev, "create_ah: no GRH or source GID\n");
		return -EINVAL;
	}
	if (rdma_ah_get_port_num(attr) != SHCA_PORT) {
		ibdev_dbg(ibdev, "create_ah: port %u\n",
			  rdma_ah_get_port_num(attr));
		return -EINVAL;
	}
	return 0;
}

int shca_create_ah(struct ib_ah *ibah, struct rdma_ah_init_attr *init_attr,
		   struct ib_udata *udata)
{
	const struct rdma_ah_attr *attr = init_attr->ah_attr;
	struct shca_dev *dev = to_shca_dev(ibah->device);
	struct shca_ah *ah = to_shca_ah(ibah);
	int ret;

	ret = shca_ah_check(ibah->device, attr);
	if (ret)
		return ret;
	ret = shca_dev_res_get(dev, SHCA_RES_AH);
	if (ret)
		return ret;

	ah->attr = *attr;
	ah->attr.grh.sgid_attr = NULL;
	ah->net_type = rdma_gid_attr_network_type(attr->grh.sgid_attr);
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(shca_create_ah);

int shca_query_ah(struct ib_ah *ibah, struct rdma_ah_attr *attr)
{
	*attr = to_shca_ah(ibah)->attr;
	return 0;
}

int shca_destroy_ah(struct ib_ah *ibah, u32 flags)
{
	shca_dev_res_put(to_shca_dev(ibah->device), SHCA_RES_AH);
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
	struct shca_cmd *cmd;

	cmd = shca_cmd_slot_get(ah->device, shca_ah_async_destroy_cmd, done,
				ctx);
	if (IS_ERR(cmd))
		return PTR_ERR(cmd);
	cmd->obj = ah;
	shca_cmd_slot_submit(cmd);
	return 0;
}
EXPORT_SYMBOL(softhca_async_destroy_ah);
