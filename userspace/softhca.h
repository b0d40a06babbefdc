/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The provider's objects, shared by its files: softhca.c (device and
 * context), verbs.c (control path, forwarded to the kernel) and queue.c
 * (the data path, on the rings the kernel maps to us).
 */
#ifndef SOFTHCA_PROVIDER_H
#define SOFTHCA_PROVIDER_H

#include <pthread.h>
#include <stddef.h>

#include <rdma/softhca-abi.h>

#include "rdma-core-private.h"

#define container_of(ptr, type, member)					\
	((type *)((char *)(ptr) - offsetof(type, member)))

struct softhca_context {
	struct verbs_context vctx;
};

/*
 * A ring shared with the kernel (layout: softhca-abi.h).  index is this
 * side's own index, kept privately and published in the control block:
 * the producer index of a work queue, the consumer index of a CQ.
 */
struct softhca_ring {
	struct softhca_queue_ctrl *ctrl;
	void *entries;
	void *map;
	size_t map_len;
	uint32_t num;			/* a power of two */
	uint32_t entry_size;
	uint32_t index;
};

struct softhca_cq {
	struct verbs_cq vcq;
	pthread_spinlock_t lock;	/* pollers */
	struct softhca_ring ring;
};

struct softhca_qp {
	struct verbs_qp vqp;
	pthread_spinlock_t sq_lock;	/* posters of sends */
	pthread_spinlock_t rq_lock;	/* posters of receives */
	struct softhca_ring sq;
	struct softhca_ring rq;		/* not mapped when the QP has an SRQ */
	uint32_t max_send_sge;
	uint32_t max_recv_sge;
	uint32_t max_inline;
	int sq_sig_all;
};

struct softhca_srq {
	struct ibv_srq ibv_srq;
	pthread_spinlock_t lock;	/* posters */
	struct softhca_ring ring;
	uint32_t max_sge;
};

struct softhca_ah {
	struct ibv_ah ibv_ah;
	uint32_t num;			/* the kernel's AH number */
};

static inline struct softhca_context *to_sctx(struct ibv_context *ibctx)
{
	return container_of(ibctx, struct softhca_context, vctx.context);
}

static inline struct softhca_cq *to_scq(struct ibv_cq *ibcq)
{
	return container_of(ibcq, struct softhca_cq, vcq.cq);
}

static inline struct softhca_qp *to_sqp(struct ibv_qp *ibqp)
{
	return container_of(ibqp, struct softhca_qp, vqp.qp);
}

static inline struct softhca_srq *to_ssrq(struct ibv_srq *ibsrq)
{
	return container_of(ibsrq, struct softhca_srq, ibv_srq);
}

static inline struct softhca_ah *to_sah(struct ibv_ah *ibah)
{
	return container_of(ibah, struct softhca_ah, ibv_ah);
}

/* queue.c */
int softhca_ring_map(struct ibv_context *ibctx, struct softhca_ring *ring,
		     const struct softhca_queue_map *map, uint32_t min_entry);
void softhca_ring_unmap(struct softhca_ring *ring);
int softhca_poll_cq(struct ibv_cq *ibcq, int num_entries, struct ibv_wc *wc);
int softhca_post_send(struct ibv_qp *ibqp, struct ibv_send_wr *wr,
		      struct ibv_send_wr **bad_wr);
int softhca_post_recv(struct ibv_qp *ibqp, struct ibv_recv_wr *wr,
		      struct ibv_recv_wr **bad_wr);
int softhca_post_srq_recv(struct ibv_srq *ibsrq, struct ibv_recv_wr *wr,
			  struct ibv_recv_wr **bad_wr);
int softhca_req_notify_cq(struct ibv_cq *ibcq, int solicited_only);
void softhca_cq_clean(struct ibv_cq *ibcq, uint32_t qpn);

/* verbs.c */
struct ibv_pd *softhca_alloc_pd(struct ibv_context *ibctx);
int softhca_dealloc_pd(struct ibv_pd *pd);
struct ibv_mr *softhca_reg_mr(struct ibv_pd *pd, void *addr, size_t length,
			      uint64_t hca_va, int access);
int softhca_rereg_mr(struct verbs_mr *vmr, int flags, struct ibv_pd *pd,
		     void *addr, size_t length, int access);
int softhca_dereg_mr(struct verbs_mr *vmr);
struct ibv_cq *softhca_create_cq(struct ibv_context *ibctx, int cqe,
				 struct ibv_comp_channel *channel,
				 int comp_vector);
int softhca_resize_cq(struct ibv_cq *ibcq, int cqe);
int softhca_destroy_cq(struct ibv_cq *ibcq);
struct ibv_qp *softhca_create_qp(struct ibv_pd *pd,
				 struct ibv_qp_init_attr *attr);
int softhca_modify_qp(struct ibv_qp *ibqp, struct ibv_qp_attr *attr,
		      int attr_mask);
int softhca_query_qp(struct ibv_qp *ibqp, struct ibv_qp_attr *attr,
		     int attr_mask, struct ibv_qp_init_attr *init_attr);
int softhca_destroy_qp(struct ibv_qp *ibqp);
struct ibv_srq *softhca_create_srq(struct ibv_pd *pd,
				   struct ibv_srq_init_attr *attr);
int softhca_modify_srq(struct ibv_srq *ibsrq, struct ibv_srq_attr *attr,
		       int attr_mask);
int softhca_query_srq(struct ibv_srq *ibsrq, struct ibv_srq_attr *attr);
int softhca_destroy_srq(struct ibv_srq *ibsrq);
struct ibv_ah *softhca_create_ah(struct ibv_pd *pd, struct ibv_ah_attr *attr);
int softhca_destroy_ah(struct ibv_ah *ibah);

#endif /* SOFTHCA_PROVIDER_H */
