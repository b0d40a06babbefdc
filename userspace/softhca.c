// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * softhca rdma-core provider (libsofthca-rdmav34.so).
 *
 * libibverbs dlopen()s this object, our constructor registers the provider,
 * and the core then hands us every uverbs device whose kernel driver id is
 * SOFTHCA_DRIVER_ID.  This file opens contexts and answers the device
 * queries; verbs.c has the control path (PD, MR, CQ, QP, AH: commands to
 * the kernel) and queue.c the data path (posting to and polling the rings
 * shared with the kernel).
 */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>

#include "softhca.h"

/*
 * Provider state sits next to the core's objects; the core only ever sees
 * the embedded members and gives them back to us for container_of().
 */
struct softhca_device {
	struct verbs_device vdev;
};

/*
 * alloc_ucontext response buffer: core part first, softhca udata right
 * after.  The request carries no softhca data, so the bare core command
 * buffer serves as the request.
 */
struct softhca_get_context_resp {
	struct ib_uverbs_get_context_resp ibv;
	struct softhca_alloc_ucontext_resp drv;
};

/*
 * The core hands the kernel 'drv' as the udata response, starting right
 * after the core response; padding between the two would shift it.
 */
_Static_assert(offsetof(struct softhca_get_context_resp, drv) ==
	       sizeof(struct ib_uverbs_get_context_resp),
	       "no padding between core and softhca response");

static int softhca_query_device_ex(struct ibv_context *ibctx,
				   const struct ibv_query_device_ex_input *input,
				   struct ibv_device_attr_ex *attr,
				   size_t attr_size)
{
	/* The kernel sends no driver-specific attributes: nothing to parse. */
	return ibv_cmd_query_device_any(ibctx, input, attr, attr_size,
					NULL, NULL);
}

static int softhca_query_port(struct ibv_context *ibctx, uint8_t port_num,
			      struct ibv_port_attr *port_attr)
{
	/* Scratch space the core needs only on the write() fallback path. */
	struct rcp_query_port_cmd cmd = {};

	return ibv_cmd_query_port(ibctx, port_num, port_attr, &cmd,
				  sizeof(cmd));
}

static void softhca_free_context(struct ibv_context *ibctx)
{
	struct softhca_context *sctx = to_sctx(ibctx);

	if (sctx->db)
		munmap(sctx->db, sctx->db_len);
	/* Closing cmd_fd is what destroys the kernel's ucontext. */
	verbs_uninit_context(&sctx->vctx);
	free(sctx);
}

static const struct verbs_context_ops softhca_ctx_ops = {
	/* On-demand paging MRs are the kernel's: it faults their pages in. */
	.advise_mr = ibv_cmd_advise_mr,
	.alloc_mw = softhca_alloc_mw,
	.alloc_pd = softhca_alloc_pd,
	/* The kernel keeps the groups; nothing of them is the provider's. */
	.attach_mcast = ibv_cmd_attach_mcast,
	.bind_mw = softhca_bind_mw,
	.create_ah = softhca_create_ah,
	.create_cq = softhca_create_cq,
	.create_cq_ex = softhca_create_cq_ex,
	.create_qp = softhca_create_qp,
	.create_qp_ex = softhca_create_qp_ex,
	.create_srq = softhca_create_srq,
	.dealloc_mw = softhca_dealloc_mw,
	.dealloc_pd = softhca_dealloc_pd,
	.dereg_mr = softhca_dereg_mr,
	.destroy_ah = softhca_destroy_ah,
	.destroy_cq = softhca_destroy_cq,
	.destroy_qp = softhca_destroy_qp,
	.destroy_srq = softhca_destroy_srq,
	.detach_mcast = ibv_cmd_detach_mcast,
	.free_context = softhca_free_context,
	.modify_qp = softhca_modify_qp,
	.modify_srq = softhca_modify_srq,
	.poll_cq = softhca_poll_cq,
	.post_recv = softhca_post_recv,
	.post_send = softhca_post_send,
	.post_srq_recv = softhca_post_srq_recv,
	.query_device_ex = softhca_query_device_ex,
	.query_port = softhca_query_port,
	.query_qp = softhca_query_qp,
	.query_srq = softhca_query_srq,
	.reg_mr = softhca_reg_mr,
	.req_notify_cq = softhca_req_notify_cq,
	.rereg_mr = softhca_rereg_mr,
	.resize_cq = softhca_resize_cq,
};

/*
 * Decide whether we can drive a context the kernel just created.  The
 * sysfs/netlink ABI version was already matched before the device was
 * offered to us, but only this response says what this particular kernel
 * object speaks.  A kernel too old to fill the response leaves it zeroed,
 * which fails the version test as well.  Capability bits announce optional
 * features; the ones this provider does not know are simply not used.
 */
static int softhca_check_uctx(const struct ibv_device *ibdev,
			      const struct softhca_alloc_ucontext_resp *resp)
{
	if (resp->abi_version != SOFTHCA_UVERBS_ABI_VERSION) {
		fprintf(stderr,
			"softhca: %s: kernel context ABI %u, provider speaks %u; install matching kernel module and provider\n",
			ibdev->name, resp->abi_version,
			SOFTHCA_UVERBS_ABI_VERSION);
		return EPROTO;
	}
	return 0;
}

/*
 * Maps the process's doorbell when the kernel offers one, as large as its
 * slots need; without it, each QP rings for itself.
 */
static void softhca_db_map(struct softhca_context *sctx, int cmd_fd,
			   const struct softhca_alloc_ucontext_resp *resp)
{
	uint64_t need = sizeof(struct softhca_ctx_doorbell) +
			((uint64_t)resp->db_slots + 31) / 32 * sizeof(uint32_t);
	void *p;

	if (!(resp->caps & SOFTHCA_UCTX_CAP_DOORBELL) || !resp->db_slots ||
	    resp->db_length < need)
		return;
	p = mmap(NULL, resp->db_length, PROT_READ | PROT_WRITE, MAP_SHARED,
		 cmd_fd, resp->db_offset);
	if (p == MAP_FAILED)
		return;
	sctx->db = p;
	sctx->db_len = resp->db_length;
	sctx->db_slots = resp->db_slots;
}

/* Called by ibv_open_device(); owns cmd_fd from here on. */
static struct verbs_context *softhca_alloc_context(struct ibv_device *ibdev,
						   int cmd_fd,
						   void *private_data)
{
	struct rcp_get_context_cmd cmd = {};
	struct softhca_get_context_resp resp = {};
	struct softhca_context *sctx;
	int err;

	/* Only mlx5dv_open_device() passes attributes; we take none. */
	(void)private_data;

	sctx = RCP_ALLOC_CONTEXT(struct softhca_context, vctx, ibdev, cmd_fd,
				 SOFTHCA_DRIVER_ID);
	if (!sctx)
		return NULL;

	err = ibv_cmd_get_context(&sctx->vctx, &cmd, sizeof(cmd),
				  &resp.ibv, sizeof(resp));
	if (err)
		goto err_uninit;

	err = softhca_check_uctx(ibdev, &resp.drv);
	if (err)
		goto err_uninit;
	softhca_db_map(sctx, cmd_fd, &resp.drv);

	verbs_set_ops(&sctx->vctx, &softhca_ctx_ops);
	return &sctx->vctx;

err_uninit:
	verbs_uninit_context(&sctx->vctx);
	free(sctx);
	errno = err;
	return NULL;
}

static struct verbs_device *softhca_alloc_device(struct verbs_sysfs_dev *sdev)
{
	struct softhca_device *sdevice;

	/* Everything we need is matched by the core already. */
	(void)sdev;

	sdevice = calloc(1, sizeof(*sdevice));
	if (!sdevice)
		return NULL;
	return &sdevice->vdev;
}

static void softhca_uninit_device(struct verbs_device *vdev)
{
	free(container_of(vdev, struct softhca_device, vdev));
}

/*
 * Match on the kernel driver id only: device names can be changed by the
 * user, and softhca has no bus device with a modalias to match on.
 */
static const struct verbs_match_ent softhca_match_table[] = {
	{ .u.driver_id = SOFTHCA_DRIVER_ID, .kind = VERBS_MATCH_DRIVER_ID },
	{ .kind = VERBS_MATCH_SENTINEL },
};

static const struct verbs_device_ops softhca_dev_ops = {
	.name = "softhca",
	.match_min_abi_version = SOFTHCA_UVERBS_ABI_VERSION,
	.match_max_abi_version = SOFTHCA_UVERBS_ABI_VERSION,
	.match_table = softhca_match_table,
	.alloc_device = softhca_alloc_device,
	.uninit_device = softhca_uninit_device,
	.alloc_context = softhca_alloc_context,
};

RCP_PROVIDER(softhca_dev_ops)
