/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The provider's objects, shared by its files: softhca.c (device and
 * context), verbs.c (control path, forwarded to the kernel), queue.c
 * (the data path, on the rings the kernel maps to us) and queue_ex.c (the
 * same data path through the extended API: ibv_wr_* and ibv_start_poll).
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
	/* The process's doorbell (softhca-abi.h); NULL: each QP rings alone */
	struct softhca_ctx_doorbell *db;
	size_t db_len;
	uint32_t db_slots;
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
	/* ibv_start_poll .. ibv_end_poll, under lock */
	const struct softhca_cqe *cur;	/* the CQE the accessors read */
	uint32_t taken;			/* CQEs taken, to free at the end */
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
	uint32_t db_slot;		/* in the context's doorbell, or none */
	int sq_sig_all;
	/* ibv_wr_*: the opcodes allowed (1 << enum ibv_wr_opcode) */
	uint64_t send_ops;
	/* ibv_wr_start .. ibv_wr_complete, under sq_lock */
	struct softhca_send_wqe *wr_cur;	/* NULL: no WQE to add to */
	uint32_t wr_room;
	uint32_t wr_num;
	int wr_err;				/* the first error of the batch */
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

static inline struct softhca_cq *to_scq_ex(struct ibv_cq_ex *ibcq)
{
	return container_of(ibcq, struct softhca_cq, vcq.cq_ex);
}

static inline struct softhca_qp *to_sqp(struct ibv_qp *ibqp)
{
	return container_of(ibqp, struct softhca_qp, vqp.qp);
}

static inline struct softhca_qp *to_sqp_ex(struct ibv_qp_ex *ibqp)
{
	return container_of(ibqp, struct softhca_qp, vqp.qp_ex);
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
int softhca_bind_mw(struct ibv_qp *ibqp, struct ibv_mw *mw,
		    struct ibv_mw_bind *mw_bind);
void softhca_wqe_bind(struct softhca_send_wqe *wqe, uint32_t rkey,
		      const struct ibv_mw_bind_info *info);
void softhca_wqe_atomic_write(struct softhca_send_wqe *wqe, uint32_t rkey,
			      uint64_t remote_addr, const void *data);
void softhca_cq_clean(struct ibv_cq *ibcq, uint32_t qpn);
void softhca_polled(void);
unsigned int softhca_cqe_wc_flags(const struct softhca_cqe *cqe);
int softhca_send_op_ok(enum ibv_qp_type type, enum ibv_wr_opcode op);
void softhca_wqe_begin(const struct softhca_qp *qp,
		       struct softhca_send_wqe *wqe, uint64_t wr_id,
		       enum ibv_wr_opcode op, unsigned int send_flags);
int softhca_wqe_inline_add(const struct softhca_qp *qp,
			   struct softhca_send_wqe *wqe, const void *addr,
			   size_t len);
void softhca_wqe_sges(struct softhca_sge *sge, const struct ibv_sge *sg,
		      size_t num);
int softhca_sq_kick(struct softhca_qp *qp, uint32_t n);

/* queue_ex.c */
#define SOFTHCA_WC_EX_FLAGS						\
	(IBV_WC_EX_WITH_BYTE_LEN | IBV_WC_EX_WITH_IMM |			\
	 IBV_WC_EX_WITH_QP_NUM | IBV_WC_EX_WITH_SRC_QP |		\
	 IBV_WC_EX_WITH_SLID | IBV_WC_EX_WITH_SL |			\
	 IBV_WC_EX_WITH_DLID_PATH_BITS)
void softhca_cq_ex_init(struct softhca_cq *cq);
uint64_t softhca_send_ops(enum ibv_qp_type type);
void softhca_qp_ex_init(struct softhca_qp *qp, uint64_t send_ops);

/* verbs.c */
struct ibv_pd *softhca_alloc_pd(struct ibv_context *ibctx);
int softhca_dealloc_pd(struct ibv_pd *pd);
struct ibv_mr *softhca_reg_mr(struct ibv_pd *pd, void *addr, size_t length,
			      uint64_t hca_va, int access);
int softhca_rereg_mr(struct verbs_mr *vmr, int flags, struct ibv_pd *pd,
		     void *addr, size_t length, int access);
int softhca_dereg_mr(struct verbs_mr *vmr);
struct ibv_mw *softhca_alloc_mw(struct ibv_pd *pd, enum ibv_mw_type type);
int softhca_dealloc_mw(struct ibv_mw *mw);
struct ibv_cq *softhca_create_cq(struct ibv_context *ibctx, int cqe,
				 struct ibv_comp_channel *channel,
				 int comp_vector);
struct ibv_cq_ex *softhca_create_cq_ex(struct ibv_context *ibctx,
				       struct ibv_cq_init_attr_ex *attr);
int softhca_resize_cq(struct ibv_cq *ibcq, int cqe);
int softhca_destroy_cq(struct ibv_cq *ibcq);
struct ibv_qp *softhca_create_qp(struct ibv_pd *pd,
				 struct ibv_qp_init_attr *attr);
struct ibv_qp *softhca_create_qp_ex(struct ibv_context *ibctx,
				    struct ibv_qp_init_attr_ex *attr);
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
