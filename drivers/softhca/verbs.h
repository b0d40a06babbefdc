/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The ib_device_ops front end: the table ib_core calls, and the verbs that
 * belong to no other object.
 */
#ifndef SHCA_VERBS_H
#define SHCA_VERBS_H

#include <rdma/ib_verbs.h>

struct shca_ucontext {
	struct ib_ucontext ibuc;
};

extern const struct ib_device_ops shca_dev_ops;

/*
 * What a process makes it pays for: allocations on behalf of a user
 * object are charged to the caller's memory cgroup (the command queue
 * runs its handlers as the caller's, see shca_cmd_exec()).
 */
static inline gfp_t shca_gfp(struct ib_udata *udata)
{
	return udata ? GFP_KERNEL_ACCOUNT : GFP_KERNEL;
}

int shca_udata_no_request(struct ib_device *ibdev, struct ib_udata *udata,
			  const char *verb);

#endif /* SHCA_VERBS_H */
