/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Shared receive queues. */
#ifndef SHCA_SRQ_H
#define SHCA_SRQ_H

#include <rdma/ib_verbs.h>

#include "event.h"
#include "queue.h"

struct shca_srq {
	struct ib_srq ibsrq;
	spinlock_t lock;		/* posters and the data path */
	struct shca_queue queue;
	u32 max_sge;
	/* Armed limit: an event when fewer WQEs remain; 0 when disarmed. */
	u32 limit;
	bool broken;			/* its process overran the ring */
	struct shca_events events;
};

static inline struct shca_srq *to_shca_srq(struct ib_srq *ibsrq)
{
	return container_of(ibsrq, struct shca_srq, ibsrq);
}

/* The data path's (wqe.c). */
int shca_srq_pop(struct shca_srq *srq, struct softhca_recv_wqe *wqe,
		 struct softhca_sge *sge);

int shca_create_srq(struct ib_srq *ibsrq, struct ib_srq_init_attr *init,
		    struct ib_udata *udata);
int shca_modify_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr,
		    enum ib_srq_attr_mask mask, struct ib_udata *udata);
int shca_query_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr);
int shca_destroy_srq(struct ib_srq *ibsrq, struct ib_udata *udata);
int shca_post_srq_recv(struct ib_srq *ibsrq, const struct ib_recv_wr *wr,
		       const struct ib_recv_wr **bad_wr);

#endif /* SHCA_SRQ_H */
