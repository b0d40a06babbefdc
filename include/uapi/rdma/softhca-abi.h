/* SPDX-License-Identifier: ((GPL-2.0 WITH Linux-syscall-note) OR BSD-2-Clause) */
/*
 * softhca kernel <-> user-space ABI, shared verbatim by the kernel module
 * and the rdma-core provider.
 *
 * Rules for this file: every structure is a multiple of 8 bytes, 64-bit
 * fields are __aligned_u64, padding is explicit and named reserved*, and
 * the kernel rejects non-zero reserved fields and unknown flags.  A change
 * that is not backward compatible bumps SOFTHCA_UVERBS_ABI_VERSION.
 */
#ifndef SOFTHCA_ABI_USER_H
#define SOFTHCA_ABI_USER_H

#include <linux/types.h>

/* Reported as ib_device_ops.uverbs_abi_ver; the provider matches on it. */
#define SOFTHCA_UVERBS_ABI_VERSION 1

/*
 * ib_device_ops.driver_id, carried in every uverbs ioctl header.  ASCII
 * "SHCA": far above every value of enum rdma_driver_id (0..22 as of 6.12),
 * so it cannot collide with an in-tree driver, now or for years.
 */
#define SOFTHCA_DRIVER_ID 0x53484341u

/* Name of the rdma_link_ops type: rdma link add X type softhca netdev Y */
#define SOFTHCA_LINK_TYPE "softhca"

/* Response to ibv_get_context (alloc_ucontext). */
struct softhca_alloc_ucontext_resp {
	__u32 abi_version;	/* SOFTHCA_UVERBS_ABI_VERSION */
	__u32 reserved;
	/* SOFTHCA_UCTX_CAP_*: optional features; none defined yet */
	__aligned_u64 caps;
};

#endif /* SOFTHCA_ABI_USER_H */
