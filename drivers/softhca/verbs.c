// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The ib_device_ops table.  Verbs here only check what ib_core hands them
 * and call the object that does the work; no verb builds a packet or walks
 * a ring.
 */

#include <rdma/softhca-abi.h>
#include <rdma/uverbs_ioctl.h>

#include "ah.h"
#include "dev.h"
#include "pd.h"
#include "verbs.h"

/**
 * shca_udata_no_request() - check a verb that defines no driver request
 * @ibdev: the device
 * @udata: the verb's udata, or NULL for a kernel caller
 * @verb: the verb's name, for the debug message
 *
 * A newer provider may send a longer request than this driver knows; that
 * is fine as long as every byte of it is zero.
 *
 * Return: 0, or -EINVAL when the request carries a non-zero byte.
 */
int shca_udata_no_request(struct ib_device *ibdev, struct ib_udata *udata,
			  const char *verb)
{
	if (!udata || !udata->inlen ||
	    ib_is_udata_cleared(udata, 0, udata->inlen))
		return 0;
	ibdev_dbg(ibdev, "%s: non-zero driver request\n", verb);
	return -EINVAL;
}

/*
 * A user context carries no state yet; it exists because ib_uverbs exposes
 * only devices that can allocate one.  The response tells the provider
 * which ABI it talks to.
 */
static int shca_alloc_ucontext(struct ib_ucontext *ibuc,
			       struct ib_udata *udata)
{
	struct softhca_alloc_ucontext_resp resp = {
		.abi_version = SOFTHCA_UVERBS_ABI_VERSION,
	};

	int ret = shca_udata_no_request(ibuc->device, udata, "alloc_ucontext");

	if (ret)
		return ret;
	return ib_copy_to_udata(udata, &resp, min(sizeof(resp), udata->outlen));
}

static void shca_dealloc_ucontext(struct ib_ucontext *ibuc)
{
}

const struct ib_device_ops shca_dev_ops = {
	.owner = THIS_MODULE,
	.driver_id = SOFTHCA_DRIVER_ID,
	.uverbs_abi_ver = SOFTHCA_UVERBS_ABI_VERSION,

	.alloc_pd = shca_alloc_pd,
	.alloc_ucontext = shca_alloc_ucontext,
	.create_ah = shca_create_ah,
	.dealloc_driver = shca_dev_dealloc,
	.dealloc_pd = shca_dealloc_pd,
	.dealloc_ucontext = shca_dealloc_ucontext,
	.destroy_ah = shca_destroy_ah,
	.get_link_layer = shca_get_link_layer,
	.get_port_immutable = shca_get_port_immutable,
	.query_ah = shca_query_ah,
	.query_device = shca_query_device,
	.query_pkey = shca_query_pkey,
	.query_port = shca_query_port,

	INIT_RDMA_OBJ_SIZE(ib_ah, shca_ah, ibah),
	INIT_RDMA_OBJ_SIZE(ib_pd, shca_pd, ibpd),
	INIT_RDMA_OBJ_SIZE(ib_ucontext, shca_ucontext, ibuc),
};
