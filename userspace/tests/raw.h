/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * What the guest programs that bypass the provider share (raw.c): objects
 * created with the bare uverbs commands, their rings mapped by the test
 * itself (softhca-abi.h), WQEs written straight into them, and a pair of
 * RC QPs connected to each other in loopback.  A test that holds such a
 * ring may write anything into it; the provider never sees these objects.
 */
#ifndef SOFTHCA_TEST_RAW_H
#define SOFTHCA_TEST_RAW_H

#include <stddef.h>
#include <stdint.h>

#include <infiniband/verbs.h>
#include <rdma/softhca-abi.h>

/* A ring mapped from a create response; @index is ours. */
struct ring {
	struct softhca_queue_ctrl *ctrl;
	char *entries;
	struct softhca_queue_map map;
	uint32_t index;		/* ours: producer, or the CQ's consumer */
};

int ring_map(struct ibv_context *ctx, struct ring *r,
	     const struct softhca_queue_map *map);
void ring_unmap(struct ring *r);
void *ring_slot(struct ring *r, uint32_t index);
void ring_publish(struct ring *r, uint32_t n);
uint32_t cq_ring_poll(struct ring *r, int *seen, size_t n);

/* Bare commands; each returns 0 or a positive errno value. */
int raw_cq_create(struct ibv_context *ctx, int cqe, struct ibv_cq *cq,
		  struct ring *r);
int raw_qp_create(struct ibv_pd *pd, struct ibv_qp_init_attr *attr,
		  struct ibv_qp *qp, struct ring *sq, struct ring *rq);
int raw_srq_create(struct ibv_pd *pd, struct ibv_srq_init_attr *attr,
		   struct ibv_srq *srq, struct ring *r);
int raw_qp_modify(struct ibv_qp *qp, struct ibv_qp_attr *attr, int mask);
/* ibv_modify_qp for a provider's QP, raw_qp_modify for a bare one. */
typedef int (*qp_modify_fn)(struct ibv_qp *qp, struct ibv_qp_attr *attr,
			    int mask);
int raw_qp_connect(struct ibv_qp *qp, qp_modify_fn modify, uint32_t dest_qpn,
		   int gid_index);
int raw_qp_connect_to(struct ibv_qp *qp, qp_modify_fn modify,
		      uint32_t dest_qpn, int gid_index,
		      const union ibv_gid *dgid, uint8_t rnr_retry);
int raw_qp_state(struct ibv_qp *qp);
int raw_doorbell(struct ibv_qp *qp);

#define PAIR_DEPTH 16
#define PAIR_BUF_LEN 4096

/*
 * Two RC QPs of one CQ, connected to each other, each with its half of a
 * registered buffer; with @srq set in pair_create, both take their
 * receive WQEs from one SRQ (the srqr ring) instead of their RQs.  Made
 * by pair_create_far, QP 1 is another device's, reached over a wire, with
 * its own CQ and MR (far).
 */
struct pair {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_mr *mr;
	char *buf;
	struct ibv_cq cq;
	struct ring cqr;
	struct ibv_srq srq;
	struct ring srqr;
	struct ibv_qp qp[2];
	struct ring sq[2], rq[2];
	struct {
		struct ibv_context *ctx;
		struct ibv_pd *pd;
		struct ibv_mr *mr;
		struct ibv_cq cq;
		struct ring cqr;
	} far;
	/* Statuses of the CQEs polled, by wr_id (0x100 + i, 0x200 + i). */
	int seen[0x300];
};

int pair_create(struct pair *p, struct ibv_context *ctx, struct ibv_pd *pd,
		int gid_index, int srq);
int pair_create_far(struct pair *p, struct ibv_context *ctx,
		    struct ibv_pd *pd, struct ibv_context *far_ctx,
		    struct ibv_pd *far_pd, int gid_index);
void pair_destroy(struct pair *p);
struct softhca_send_wqe *pair_send_wqe(struct pair *p, int i,
				       uint8_t opcode);
void pair_recv_wqe(struct pair *p, int i, uint32_t num_sge);
uint32_t pair_poll(struct pair *p);
int pair_wait_cqe(struct pair *p, uint64_t wr_id, int ms);
int pair_send_checked(struct pair *p);

#endif /* SOFTHCA_TEST_RAW_H */
