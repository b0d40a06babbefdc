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

#endif /* SHCA_COMPAT_H */
