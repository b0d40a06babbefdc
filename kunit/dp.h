/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Data-path test bench, built on ib_core's API: a PD, two QPs of one type
 * connected to each other through loopback (on one device, or on two
 * devices of this host), a CQ per QP, optionally an SRQ, and kernel
 * buffers.  softhca does virtual DMA (ib_uses_virt_dma()), so a buffer's
 * DMA address is its kernel virtual address.  One helper reaches inside
 * softhca: shca_dp_engine_held().
 */
#ifndef SHCA_KUNIT_DP_H
#define SHCA_KUNIT_DP_H

#include <kunit/test.h>
#include <rdma/ib_verbs.h>

#include "fixture.h"

struct shca_dp_opts {
	enum ib_qp_type type;
	int access;			/* both QPs' access flags */
	u8 rnr_retry;
	u8 min_rnr_timer;
	u8 timeout;
	u8 retry_cnt;
	u8 max_rd_atomic;		/* RC requesters; 0: 16 */
	u32 depth;			/* WRs per work queue, CQEs per CQ */
	bool srq;			/* receives through one SRQ */
	enum ib_sig_type sig;
	u32 qkey;			/* UD; 0: 0x1234 */
	/* QP 1 on this device instead of QP 0's (loopback across devices) */
	struct ib_device *peer;
	struct ib_pd *peer_pd;
	void (*comp)(struct ib_cq *cq, void *ctx);
};

struct shca_dp {
	struct kunit *test;
	struct shca_fixture *fx;
	struct ib_pd *pd;
	struct ib_cq *cq[2];
	struct ib_qp *qp[2];
	struct ib_srq *srq;
	struct ib_ah *ah[2];		/* UD: each QP's way to the other */
	void *ctx;			/* the test's, for handlers */
	atomic_t comps[2];		/* completion handler calls per CQ */
	atomic_t events;		/* for the test's event handlers */
	wait_queue_head_t wait;
};

extern const struct shca_dp_opts shca_dp_rc;

void shca_dp_setup(struct kunit *test, struct shca_fixture *fx,
		   struct shca_dp *dp, const struct shca_dp_opts *opts);
void shca_dp_teardown(struct shca_dp *dp);
int shca_dp_modify(struct ib_qp *qp, enum ib_qp_state state);

struct ib_sge shca_dp_sge(struct shca_dp *dp, void *buf, u32 len);
int shca_dp_post_recv(struct shca_dp *dp, int i, u64 wr_id, void *buf,
		      u32 len);
int shca_dp_post_send(struct shca_dp *dp, int i, struct ib_send_wr *wr);
bool shca_dp_poll(struct shca_dp *dp, int i, struct ib_wc *wc);
bool shca_dp_cq_empty(struct shca_dp *dp, int i);
void shca_dp_fill(void *buf, size_t len, u32 seed);

bool shca_dp_engine_held(struct shca_dp *dp, int i,
			 void (*post)(struct shca_dp *dp),
			 void (*verb)(struct shca_dp *dp), unsigned long wait);

struct ib_mr *shca_dp_frwr(struct shca_dp *dp, int i, void *buf, u32 len,
			   int access);

#endif /* SHCA_KUNIT_DP_H */
