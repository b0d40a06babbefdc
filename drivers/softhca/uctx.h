/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * A process's context on the device, and its doorbell: one worker runs
 * the send queues of all the process's QPs (the protocol is
 * softhca-abi.h's), so that a process posting to many QPs in turn rings
 * once while the worker runs rather than once per QP.
 */
#ifndef SHCA_UCTX_H
#define SHCA_UCTX_H

#include <linux/hrtimer.h>
#include <linux/mutex.h>
#include <linux/workqueue.h>
#include <linux/xarray.h>
#include <rdma/ib_verbs.h>
#include <rdma/softhca-abi.h>

#include "engine.h"

struct shca_qp;

struct shca_ucontext {
	struct ib_ucontext ibuc;
	/* The doorbell page; its mmap entry frees it. */
	struct softhca_ctx_doorbell *db;
	struct rdma_user_mmap_entry *db_entry;
	/* Slots the kernel marked itself: doorbells rung, runs left over. */
	atomic_t *again;
	/* QPs by slot, an allocating xarray; @slots_hi under its lock. */
	struct xarray qps;
	u32 slots_hi;			/* one past the highest slot given */
	/* Held by the worker while it runs QPs, and to take one out. */
	struct mutex run_lock;
	struct work_struct work;
	struct shca_runs runs;
	/* Whether a process streams (shca_uctx_streams()), in ns and counts. */
	u64 asked_ns;			/* the kernel last asked it to ring */
	u32 here_ns;			/* the last doorbell run in its call */
	u8 quick;			/* doorbells in a row soon after */
	/* Polling: SHCA_UCTX_POLL_ASKED; the rest under run_lock. */
	unsigned long flags;
	struct hrtimer poll;		/* runs the worker while it polls */
	bool polling;
	u8 misses;			/* small runs in a row while polling */
};

/* uc->flags: a streaming process's doorbell asked the worker to poll. */
#define SHCA_UCTX_POLL_ASKED 0

static inline struct shca_ucontext *to_shca_uctx(struct ib_ucontext *ibuc)
{
	return container_of(ibuc, struct shca_ucontext, ibuc);
}

int shca_uctx_init(struct shca_ucontext *uc,
		   struct softhca_alloc_ucontext_resp *resp);
void shca_uctx_destroy(struct shca_ucontext *uc);
int shca_uctx_qp_add(struct shca_qp *qp, struct ib_udata *udata);
void shca_uctx_qp_del(struct shca_qp *qp);
struct shca_runs *shca_uctx_runs(struct shca_qp *qp);
bool shca_uctx_ring(struct shca_qp *qp);
bool shca_uctx_streams(struct shca_qp *qp);
void shca_uctx_ran_here(struct shca_qp *qp, u64 start);
void shca_uctx_ring_later(struct shca_qp *qp);

#endif /* SHCA_UCTX_H */
