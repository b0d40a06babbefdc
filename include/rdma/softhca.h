/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * softhca's API for kernel clients stuck in atomic context.
 *
 * ib_core's control verbs may sleep.  A client that must create or
 * release an object from a hard-irq handler, a softirq, or with a spinlock
 * held can instead queue the verb here and be called back once it ran.
 * Served: create/destroy AH, modify/destroy QP, destroy CQ, and
 * registration/deregistration of a fast-registration MR allocated
 * beforehand with ib_alloc_mr() (ib_map_mr_sg() on a softhca MR only
 * fills its page list: it does not sleep and may be called in any context).
 *
 * Context: every softhca_async_*() call may be made from any context,
 * hard-irq included: it neither sleeps nor allocates memory.  It takes one
 * of a fixed number of command slots reserved per device when the device
 * was created, and fails with -EBUSY when none is free; nothing has been
 * queued then, and the callback will not be called.
 *
 * Callbacks run in process context, on the device's command queue worker,
 * once each, after the verb ran.  They may sleep, call ib_core's verbs on
 * the device (those then run at once, inside the callback) and queue
 * further commands, but must not wait for a command they queued (the
 * queue runs one command at a time, so that would deadlock).
 *
 * Ordering: the commands of one device run one at a time in the order they
 * were queued, whether queued here or by ib_core's (sleeping) verbs; in
 * particular the commands on one object run in submission order.
 *
 * Lifetime: a queued command holds no reference on the objects it names,
 * exactly like the verb it stands for: the client must not destroy an
 * object while commands on it are queued.  When the device is removed
 * (rdma link delete, netdev removal, module unload) ib_core first removes
 * its clients; commands still queued after that run, and their callbacks
 * are called, before the device is freed.  Callbacks are code of the
 * client's module: a client must not unload while it has commands queued.
 *
 * These calls are for softhca devices only; on another device they return
 * -EOPNOTSUPP.
 */
#ifndef _RDMA_SOFTHCA_H
#define _RDMA_SOFTHCA_H

#include <rdma/ib_verbs.h>

/**
 * typedef softhca_done_t - completion callback of an asynchronous verb
 * @ctx: the client's context, as passed when queuing
 * @status: the verb's result: 0 or a negative errno
 */
typedef void (*softhca_done_t)(void *ctx, int status);

/**
 * typedef softhca_ah_done_t - completion callback of softhca_async_create_ah()
 * @ctx: the client's context, as passed when queuing
 * @ah: the new address handle, or an ERR_PTR()
 */
typedef void (*softhca_ah_done_t)(void *ctx, struct ib_ah *ah);

int softhca_async_create_ah(struct ib_pd *pd,
			    const struct rdma_ah_attr *ah_attr,
			    softhca_ah_done_t done, void *ctx);
int softhca_async_destroy_ah(struct ib_ah *ah, softhca_done_t done,
			     void *ctx);
int softhca_async_modify_qp(struct ib_qp *qp, const struct ib_qp_attr *attr,
			    int attr_mask, softhca_done_t done, void *ctx);
int softhca_async_destroy_qp(struct ib_qp *qp, softhca_done_t done,
			     void *ctx);
int softhca_async_destroy_cq(struct ib_cq *cq, softhca_done_t done,
			     void *ctx);
int softhca_async_reg_mr(struct ib_mr *mr, u32 key, int access,
			 softhca_done_t done, void *ctx);
int softhca_async_dereg_mr(struct ib_mr *mr, softhca_done_t done, void *ctx);

#endif /* _RDMA_SOFTHCA_H */
