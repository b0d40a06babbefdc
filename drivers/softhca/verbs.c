// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The ib_device_ops table.  Verbs here only check what ib_core hands them
 * and call the object that does the work; no verb builds a packet or walks
 * a ring.
 */

#include <kunit/visibility.h>
#include <rdma/softhca-abi.h>
#include <rdma/uverbs_ioctl.h>

#include "ah.h"
#include "compat.h"
#include "cq.h"
#include "dev.h"
#include "engine.h"
#include "mcast.h"
#include "mr.h"
#include "pd.h"
#include "qp.h"
#include "queue.h"
#include "srq.h"
#include "uctx.h"
#include "verbs.h"

/*
 * A user context: the process's doorbell (uctx.c).  The response tells
 * the provider which ABI it talks to, and where the doorbell is.
 */
static int shca_alloc_ucontext(struct ib_ucontext *ibuc,
			       struct ib_udata *udata)
{
	struct softhca_alloc_ucontext_resp resp = {
		.abi_version = SOFTHCA_UVERBS_ABI_VERSION,
	};
	struct shca_ucontext *uc = to_shca_uctx(ibuc);
	int ret = shca_udata_no_request(ibuc->device, udata, "alloc_ucontext");

	if (ret)
		return ret;
	ret = shca_uctx_init(uc, &resp);
	if (ret)
		return ret;
	ret = ib_copy_to_udata(udata, &resp, min(sizeof(resp), udata->outlen));
	if (ret)
		shca_uctx_destroy(uc);
	return ret;
}

static void shca_dealloc_ucontext(struct ib_ucontext *ibuc)
{
	shca_uctx_destroy(to_shca_uctx(ibuc));
}

/*
 * The device goes away while a process holds @ibuc (`rdma link delete`,
 * its netdev's removal, rmmod).  Offering this op is what lets ib_uverbs
 * tear the context down then and there instead of waiting for the
 * process to close its files, and not pin the module meanwhile: it has
 * destroyed every object of the context through the ordinary destroy
 * verbs, which stopped their engines (no run touches a ring after that)
 * and removed their rings' mmap entries, and it sends the process
 * IBV_EVENT_DEVICE_FATAL; its verbs fail with EIO from then on.  Nothing
 * is left to undo here: dealloc_ucontext, which follows, stops the
 * context's doorbell worker and removes its page's entry.  The pages a
 * process still maps stay its own until it unmaps them:
 * remap_vmalloc_range() took a reference on each, so vfree() in
 * mmap_free does not return them meanwhile.
 *
 * Context: process context (device removal).
 */
static void shca_disassociate_ucontext(struct ib_ucontext *ibuc)
{
}

static const struct ib_device_ops shca_dev_ops = {
	.owner = THIS_MODULE,
	.driver_id = SOFTHCA_DRIVER_ID,
	.uverbs_abi_ver = SOFTHCA_UVERBS_ABI_VERSION,

	.advise_mr = shca_advise_mr,
	.alloc_hw_port_stats = shca_alloc_hw_port_stats,
	.alloc_mr = shca_alloc_mr,
	.alloc_mw = shca_alloc_mw,
	.alloc_pd = shca_alloc_pd,
	.alloc_ucontext = shca_alloc_ucontext,
	.attach_mcast = shca_attach_mcast,
	.create_ah = shca_create_ah,
	.create_cq = shca_create_cq_op,
	.create_qp = shca_create_qp,
	.create_srq = shca_create_srq,
	.create_user_ah = shca_create_ah,
	.dealloc_driver = shca_dev_dealloc,
	.dealloc_mw = shca_dealloc_mw,
	.dealloc_pd = shca_dealloc_pd,
	.dealloc_ucontext = shca_dealloc_ucontext,
	.dereg_mr = shca_dereg_mr,
	.disassociate_ucontext = shca_disassociate_ucontext,
	.destroy_ah = shca_destroy_ah,
	.destroy_cq = shca_destroy_cq,
	.destroy_qp = shca_destroy_qp,
	.destroy_srq = shca_destroy_srq,
	.detach_mcast = shca_detach_mcast,
	.fill_res_qp_entry = shca_fill_res_qp_entry,
	.get_dma_mr = shca_get_dma_mr,
	.get_hw_stats = shca_get_hw_stats,
	.get_link_layer = shca_get_link_layer,
	.get_netdev = shca_get_netdev,
	.get_vector_affinity = shca_get_vector_affinity,
	.get_port_immutable = shca_get_port_immutable,
	.map_mr_sg = shca_map_mr_sg,
	.mmap = shca_mmap,
	.mmap_free = shca_mmap_free,
	.modify_qp = shca_modify_qp,
	.modify_srq = shca_modify_srq,
	.poll_cq = shca_poll_cq,
	.post_recv = shca_post_recv,
	.post_send = shca_post_send,
	.post_srq_recv = shca_post_srq_recv,
	.query_ah = shca_query_ah,
	.query_device = shca_query_device,
	.query_pkey = shca_query_pkey,
	.query_port = shca_query_port,
	.query_qp = shca_query_qp,
	.query_srq = shca_query_srq,
	.reg_user_mr = shca_reg_user_mr,
	.rereg_user_mr = shca_rereg_user_mr,
	.req_notify_cq = shca_req_notify_cq,
	.resize_cq = shca_resize_cq,

	INIT_RDMA_OBJ_SIZE(ib_ah, shca_ah, ibah),
	INIT_RDMA_OBJ_SIZE(ib_cq, shca_cq, ibcq),
	INIT_RDMA_OBJ_SIZE(ib_mw, shca_mw, ibmw),
	INIT_RDMA_OBJ_SIZE(ib_pd, shca_pd, ibpd),
	INIT_RDMA_OBJ_SIZE(ib_qp, shca_qp, ibqp),
	INIT_RDMA_OBJ_SIZE(ib_srq, shca_srq, ibsrq),
	INIT_RDMA_OBJ_SIZE(ib_ucontext, shca_ucontext, ibuc),
};

/**
 * shca_dev_add() - the link type's newlink: a device with this ops table
 * @name: ib_device name, e.g. "softhca0"
 * @ndev: the Ethernet netdev the device sends and receives through
 *
 * Context: process context, may sleep; not under RTNL.
 * Return: see shca_dev_create().
 */
int shca_dev_add(const char *name, struct net_device *ndev)
{
	return shca_dev_create(name, ndev, &shca_dev_ops);
}
EXPORT_SYMBOL_IF_KUNIT(shca_dev_add);
