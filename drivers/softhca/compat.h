/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The differences between the kernels softhca builds for (6.1 and 6.12),
 * and nowhere else.  Each is a feature test on the target kernel's own
 * headers, made by Kbuild (SHCA_HAVE_* below), not a version number.
 */
#ifndef SHCA_COMPAT_H
#define SHCA_COMPAT_H

#include <rdma/ib_verbs.h>
#include <rdma/uverbs_ioctl.h>

#include "cq.h"

#ifdef SHCA_HAVE_CREATE_CQ_ATTRS
/*
 * Since 6.11 create_cq takes the uverbs attribute bundle (NULL for a
 * kernel caller) instead of its udata.
 */
static inline int shca_create_cq_op(struct ib_cq *ibcq,
				    const struct ib_cq_init_attr *attr,
				    struct uverbs_attr_bundle *attrs)
{
	return shca_create_cq(ibcq, attr, attrs ? &attrs->driver_udata : NULL);
}
#else
#define shca_create_cq_op shca_create_cq
#endif

/*
 * ATOMIC WRITE (IBA 1.5): ib_core's verbs have it since 6.2.  Before,
 * user space posts it all the same, through softhca's rings, with the
 * numbers uverbs gave it since (ib_user_verbs.h), and the device says so
 * in the same capability bit.
 */
#ifdef SHCA_HAVE_ATOMIC_WRITE
#define SHCA_WR_ATOMIC_WRITE		IB_WR_ATOMIC_WRITE
#define SHCA_WC_ATOMIC_WRITE		IB_WC_ATOMIC_WRITE
#define SHCA_DEVICE_ATOMIC_WRITE	IB_DEVICE_ATOMIC_WRITE
#else
#define SHCA_WR_ATOMIC_WRITE		15
#define SHCA_WC_ATOMIC_WRITE		9
#define SHCA_DEVICE_ATOMIC_WRITE	BIT_ULL(40)
#endif

/*
 * FLUSH (IBA 1.5): ib_core has it since 6.2, and with it the access flags
 * an MR and a QP need to be flushed (the placement types they allow) and
 * the device's capability of global visibility.  Before, a process posts
 * one all the same, through softhca's rings with uverbs' numbers, to a
 * peer that takes it; no MR here can allow one.
 */
#ifdef SHCA_HAVE_FLUSH
#define SHCA_WR_FLUSH			IB_WR_FLUSH
#define SHCA_WC_FLUSH			IB_WC_FLUSH
#define SHCA_ACCESS_FLUSH_GLOBAL	IB_ACCESS_FLUSH_GLOBAL
#define SHCA_ACCESS_FLUSH_PERSISTENT	IB_ACCESS_FLUSH_PERSISTENT
#define SHCA_DEVICE_FLUSH_GLOBAL	IB_DEVICE_FLUSH_GLOBAL
#else
#define SHCA_WR_FLUSH			14
#define SHCA_WC_FLUSH			8
#define SHCA_ACCESS_FLUSH_GLOBAL	0
#define SHCA_ACCESS_FLUSH_PERSISTENT	0
#define SHCA_DEVICE_FLUSH_GLOBAL	0
#endif

#endif /* SHCA_COMPAT_H */
