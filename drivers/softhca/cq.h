/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Completion queues.  The data path produces CQEs with shca_cq_push() from
 * any context; consumers poll them (poll_cq, or user space straight from
 * the shared ring) and are notified through shca_wq, never inline.
 */
#ifndef SHCA_CQ_H
#define SHCA_CQ_H

#include <rdma/ib_verbs.h>

#include "event.h"
#include "queue.h"

struct shca_cq {
	struct ib_cq ibcq;
	/* Producers: every QP's data path and flushes; ring swaps. */
	spinlock_t prod_lock;
	/* Kernel pollers; ring swaps.  Taken before prod_lock. */
	spinlock_t poll_lock;
	struct shca_queue queue;
	/* 0, IB_CQ_SOLICITED or IB_CQ_NEXT_COMP; under prod_lock. */
	u8 notify;
	bool overflow;			/* under prod_lock */
	/*
	 * A kernel poller found it empty and has not armed it since: it
	 * busy-polls (shca_engine_kick()).
	 */
	bool spinning;
	/* The completion vector's CPU, where comp_work runs the handler. */
	int cpu;
	struct work_struct comp_work;	/* calls the completion handler */
	struct shca_events events;
};

static inline struct shca_cq *to_shca_cq(struct ib_cq *ibcq)
{
	return container_of(ibcq, struct shca_cq, ibcq);
}

/* Whether @ibcq's kernel consumer busy-polls it; any context. */
static inline bool shca_cq_spinning(struct ib_cq *ibcq)
{
	return ibcq && READ_ONCE(to_shca_cq(ibcq)->spinning);
}

/* The data path's (wqe.c). */
int shca_cq_push(struct shca_cq *cq, const struct softhca_cqe *cqe,
		 bool solicited);

int shca_create_cq(struct ib_cq *ibcq, const struct ib_cq_init_attr *attr,
		   struct ib_udata *udata);
int shca_destroy_cq(struct ib_cq *ibcq, struct ib_udata *udata);
int shca_resize_cq(struct ib_cq *ibcq, int cqe, struct ib_udata *udata);
int shca_poll_cq(struct ib_cq *ibcq, int num, struct ib_wc *wc);
const struct cpumask *shca_get_vector_affinity(struct ib_device *ibdev,
					       int comp_vector);
int shca_req_notify_cq(struct ib_cq *ibcq, enum ib_cq_notify_flags flags);

#endif /* SHCA_CQ_H */
