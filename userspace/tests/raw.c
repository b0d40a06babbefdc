// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Objects made with the bare uverbs commands and rings mapped by the test
 * itself, for the guest programs that write into rings what no provider
 * would (hostile-ring, fuzz-uverbs).  See raw.h.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "rdma-core-private.h"
#include "raw.h"

int ring_map(struct ibv_context *ctx, struct ring *r,
	     const struct softhca_queue_map *map)
{
	void *p;

	memset(r, 0, sizeof(*r));
	/* An SRQ's QP has no RQ: nothing to map. */
	if (!map->length)
		return 0;
	p = mmap(NULL, map->length, PROT_READ | PROT_WRITE, MAP_SHARED,
		 ctx->cmd_fd, map->offset);
	if (p == MAP_FAILED)
		return errno;
	*r = (struct ring){
		.ctrl = p, .entries = (char *)p + SOFTHCA_QUEUE_ENTRIES_OFFSET,
		.map = *map,
	};
	return 0;
}

void ring_unmap(struct ring *r)
{
	if (r->ctrl)
		munmap(r->ctrl, r->map.length);
	memset(r, 0, sizeof(*r));
}

void *ring_slot(struct ring *r, uint32_t index)
{
	return r->entries + (size_t)(index & (r->map.num_entries - 1)) *
	       r->map.entry_size;
}

void ring_publish(struct ring *r, uint32_t n)
{
	r->index += n;
	__atomic_store_n(&r->ctrl->producer, r->index, __ATOMIC_SEQ_CST);
}

int raw_cq_create(struct ibv_context *ctx, int cqe, struct ibv_cq *cq,
		  struct ring *r)
{
	struct rcp_create_cq_cmd cmd = {};
	struct {
		struct ib_uverbs_create_cq_resp core;
		struct softhca_create_cq_resp drv;
	} resp;
	int err;

	err = ibv_cmd_create_cq(ctx, cqe, NULL, 0, cq, &cmd, sizeof(cmd),
				&resp.core, sizeof(resp));
	if (err)
		return err;
	err = ring_map(ctx, r, &resp.drv.cq);
	if (err)
		ibv_cmd_destroy_cq(cq);
	return err;
}

int raw_qp_create(struct ibv_pd *pd, struct ibv_qp_init_attr *attr,
		  struct ibv_qp *qp, struct ring *sq, struct ring *rq)
{
	struct rcp_create_qp_cmd cmd = {};
	struct {
		struct ib_uverbs_create_qp_resp core;
		struct softhca_create_qp_resp drv;
	} resp;
	int err;

	err = ibv_cmd_create_qp(pd, qp, attr, &cmd, sizeof(cmd), &resp.core,
				sizeof(resp));
	if (err)
		return err;
	err = ring_map(pd->context, sq, &resp.drv.sq);
	err = err ?: ring_map(pd->context, rq, &resp.drv.rq);
	if (err) {
		ring_unmap(sq);
		ibv_cmd_destroy_qp(qp);
	}
	return err;
}

int raw_srq_create(struct ibv_pd *pd, struct ibv_srq_init_attr *attr,
		   struct ibv_srq *srq, struct ring *r)
{
	struct rcp_create_srq_cmd cmd = {};
	struct {
		struct ib_uverbs_create_srq_resp core;
		struct softhca_create_srq_resp drv;
	} resp;
	int err;

	err = ibv_cmd_create_srq(pd, srq, attr, &cmd, sizeof(cmd), &resp.core,
				 sizeof(resp));
	if (err)
		return err;
	err = ring_map(pd->context, r, &resp.drv.srq);
	if (err)
		ibv_cmd_destroy_srq(srq);
	return err;
}

int raw_qp_modify(struct ibv_qp *qp, struct ibv_qp_attr *attr, int mask)
{
	struct rcp_modify_qp_cmd cmd = {};

	return ibv_cmd_modify_qp(qp, attr, mask, &cmd, sizeof(cmd));
}

/* An RC or UC QP through INIT and RTR to RTS, towards @dest_qpn here. */
int raw_qp_connect(struct ibv_qp *qp, qp_modify_fn modify, uint32_t dest_qpn,
		   int gid_index)
{
	union ibv_gid gid;
	int err;

	err = ibv_query_gid(qp->context, 1, gid_index, &gid);
	return err ?: raw_qp_connect_to(qp, modify, dest_qpn, gid_index, &gid,
					1);
}

/*
 * The same towards @dest_qpn at @dgid, from GID @gid_index, an RC QP
 * resending @rnr_retry times after RNR NAKs (7: for ever).  Its local ACK
 * timeout (67 ms) and retry count are tap_rc_connect()'s: a guest on a
 * busy host may not run for milliseconds at a time.
 */
int raw_qp_connect_to(struct ibv_qp *qp, qp_modify_fn modify,
		      uint32_t dest_qpn, int gid_index,
		      const union ibv_gid *dgid, uint8_t rnr_retry)
{
	struct ibv_qp_attr attr = {
		.qp_state = IBV_QPS_INIT, .port_num = 1,
		.qp_access_flags = IBV_ACCESS_REMOTE_WRITE |
				   IBV_ACCESS_REMOTE_READ,
	};
	int rc = qp->qp_type == IBV_QPT_RC;
	int err;

	err = modify(qp, &attr, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
		     IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
	if (err)
		return err;
	attr = (struct ibv_qp_attr){
		.qp_state = IBV_QPS_RTR, .path_mtu = IBV_MTU_1024,
		.dest_qp_num = dest_qpn, .max_dest_rd_atomic = 1,
		.min_rnr_timer = 1,
		.ah_attr = { .is_global = 1, .port_num = 1,
			     .grh = { .dgid = *dgid,
				      .sgid_index = gid_index,
				      .hop_limit = 64 } },
	};
	err = modify(qp, &attr, IBV_QP_STATE | IBV_QP_AV |
			    IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
			    (rc ? IBV_QP_MAX_DEST_RD_ATOMIC |
			     IBV_QP_MIN_RNR_TIMER : 0));
	if (err)
		return err;
	attr = (struct ibv_qp_attr){
		.qp_state = IBV_QPS_RTS, .timeout = 14, .retry_cnt = 7,
		.rnr_retry = rnr_retry, .max_rd_atomic = 1,
	};
	return modify(qp, &attr, IBV_QP_STATE | IBV_QP_SQ_PSN | (rc ?
		      IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
		      IBV_QP_MAX_QP_RD_ATOMIC : 0));
}

int raw_qp_state(struct ibv_qp *qp)
{
	struct rcp_query_qp_cmd cmd = {};
	struct ibv_qp_init_attr init;
	struct ibv_qp_attr attr;

	if (ibv_cmd_query_qp(qp, &attr, IBV_QP_STATE, &init, &cmd,
			     sizeof(cmd)))
		return -1;
	return attr.qp_state;
}

/* A send doorbell: ib_uverbs' post_send with no WR (softhca-abi.h). */
int raw_doorbell(struct ibv_qp *qp)
{
	struct ibv_send_wr *bad;

	return ibv_cmd_post_send(qp, NULL, &bad);
}

void pair_destroy(struct pair *p)
{
	int i;

	for (i = 0; i < 2; i++) {
		if (p->qp[i].context)
			ibv_cmd_destroy_qp(&p->qp[i]);
		ring_unmap(&p->sq[i]);
		ring_unmap(&p->rq[i]);
	}
	if (p->srq.context)
		ibv_cmd_destroy_srq(&p->srq);
	ring_unmap(&p->srqr);
	if (p->cq.context)
		ibv_cmd_destroy_cq(&p->cq);
	ring_unmap(&p->cqr);
	if (p->far.cq.context)
		ibv_cmd_destroy_cq(&p->far.cq);
	ring_unmap(&p->far.cqr);
	if (p->mr)
		ibv_dereg_mr(p->mr);
	if (p->far.mr)
		ibv_dereg_mr(p->far.mr);
	free(p->buf);
	memset(p, 0, sizeof(*p));
}

/* QP @i's CQ and MR: the far device's for QP 1 of a far pair. */
static struct ibv_cq *pair_cq(struct pair *p, int i)
{
	return i && p->far.ctx ? &p->far.cq : &p->cq;
}

static struct ibv_mr *pair_mr(struct pair *p, int i)
{
	return i && p->far.ctx ? p->far.mr : p->mr;
}

static int pair_qp_create(struct pair *p, int i)
{
	struct ibv_qp_init_attr attr = {
		.send_cq = pair_cq(p, i), .recv_cq = pair_cq(p, i),
		.qp_type = IBV_QPT_RC,
		.srq = p->srq.context ? &p->srq : NULL,
		.cap = { .max_send_wr = PAIR_DEPTH, .max_recv_wr = PAIR_DEPTH,
			 .max_send_sge = 2, .max_recv_sge = 2 },
	};

	return raw_qp_create(i && p->far.ctx ? p->far.pd : p->pd, &attr,
			     &p->qp[i], &p->sq[i], &p->rq[i]);
}

static int pair_srq_create(struct pair *p)
{
	struct ibv_srq_init_attr attr = {
		.attr = { .max_wr = 2 * PAIR_DEPTH, .max_sge = 2 },
	};

	return raw_srq_create(p->pd, &attr, &p->srq, &p->srqr);
}

/* The buffer, its MR and the CQ on @p's devices; 0 or an errno value. */
static int pair_mem(struct pair *p)
{
	p->buf = calloc(1, 2 * PAIR_BUF_LEN);
	p->mr = p->buf ? ibv_reg_mr(p->pd, p->buf, 2 * PAIR_BUF_LEN,
				    IBV_ACCESS_LOCAL_WRITE) : NULL;
	if (p->far.ctx && p->mr)
		p->far.mr = ibv_reg_mr(p->far.pd, p->buf, 2 * PAIR_BUF_LEN,
				       IBV_ACCESS_LOCAL_WRITE);
	if (!p->mr || (p->far.ctx && !p->far.mr))
		return errno;
	return raw_cq_create(p->ctx, 4 * PAIR_DEPTH, &p->cq, &p->cqr) ?:
	       (p->far.ctx ? raw_cq_create(p->far.ctx, 4 * PAIR_DEPTH,
					   &p->far.cq, &p->far.cqr) : 0);
}

/*
 * QP 0 on @ctx and QP 1 on @far_ctx (@ctx again for a loopback pair),
 * each connected to the other's GID @gid_index.
 */
static int pair_build(struct pair *p, struct ibv_context *ctx,
		      struct ibv_pd *pd, struct ibv_context *far_ctx,
		      struct ibv_pd *far_pd, int gid_index, int srq)
{
	union ibv_gid gid[2];
	int err;

	memset(p, 0, sizeof(*p));
	memset(p->seen, 0xff, sizeof(p->seen));
	p->ctx = ctx;
	p->pd = pd;
	p->far.ctx = far_ctx;
	p->far.pd = far_pd;
	err = ibv_query_gid(ctx, 1, gid_index, &gid[0]) ||
	      ibv_query_gid(far_ctx ?: ctx, 1, gid_index, &gid[1]) ? EINVAL : 0;
	err = err ?: pair_mem(p);
	err = err ?: srq ? pair_srq_create(p) : 0;
	err = err ?: pair_qp_create(p, 0);
	err = err ?: pair_qp_create(p, 1);
	err = err ?: raw_qp_connect_to(&p->qp[0], raw_qp_modify,
				       p->qp[1].qp_num, gid_index, &gid[1], 1);
	err = err ?: raw_qp_connect_to(&p->qp[1], raw_qp_modify,
				       p->qp[0].qp_num, gid_index, &gid[0], 1);
	if (err)
		pair_destroy(p);
	return err;
}

int pair_create(struct pair *p, struct ibv_context *ctx, struct ibv_pd *pd,
		int gid_index, int srq)
{
	return pair_build(p, ctx, pd, NULL, NULL, gid_index, srq);
}

/*
 * A pair whose QP 1 is on @far_ctx, another device, the two connected
 * over the wire between them through their GIDs @gid_index.
 */
int pair_create_far(struct pair *p, struct ibv_context *ctx,
		    struct ibv_pd *pd, struct ibv_context *far_ctx,
		    struct ibv_pd *far_pd, int gid_index)
{
	return pair_build(p, ctx, pd, far_ctx, far_pd, gid_index, 0);
}

/* A send WQE from QP @i's half of the buffer, not yet published. */
struct softhca_send_wqe *pair_send_wqe(struct pair *p, int i,
				       uint8_t opcode)
{
	struct softhca_send_wqe *w = ring_slot(&p->sq[i], p->sq[i].index);
	struct softhca_sge *sge = (struct softhca_sge *)(w + 1);

	*w = (struct softhca_send_wqe){
		.wr_id = 0x100 + i, .opcode = opcode, .num_sge = 1,
		.flags = SOFTHCA_WQE_SIGNALED,
	};
	*sge = (struct softhca_sge){
		.addr = (uintptr_t)p->buf + i * PAIR_BUF_LEN, .length = 64,
		.lkey = pair_mr(p, i)->lkey,
	};
	return w;
}

/* A receive WQE for QP @i (or the SRQ), published. */
void pair_recv_wqe(struct pair *p, int i, uint32_t num_sge)
{
	struct ring *r = p->srqr.ctrl ? &p->srqr : &p->rq[i];
	struct softhca_recv_wqe *w = ring_slot(r, r->index);
	struct softhca_sge *sge = (struct softhca_sge *)(w + 1);

	*w = (struct softhca_recv_wqe){ .wr_id = 0x200 + i,
					.num_sge = num_sge };
	*sge = (struct softhca_sge){
		.addr = (uintptr_t)p->buf + i * PAIR_BUF_LEN,
		.length = PAIR_BUF_LEN, .lkey = pair_mr(p, i)->lkey,
	};
	ring_publish(r, 1);
}

/*
 * Takes the CQEs the kernel produced, at most a ring's worth: the indices
 * may be anything a racing writer left.  Records the status of each wr_id
 * below @n in @seen; returns how many CQEs it took.
 */
uint32_t cq_ring_poll(struct ring *r, int *seen, size_t n)
{
	uint32_t taken;

	for (taken = 0; taken < r->map.num_entries &&
	     __atomic_load_n(&r->ctrl->producer, __ATOMIC_ACQUIRE) != r->index;
	     taken++) {
		struct softhca_cqe *cqe = ring_slot(r, r->index);

		if (cqe->wr_id < n)
			seen[cqe->wr_id] = cqe->status;
		r->index++;
		__atomic_store_n(&r->ctrl->consumer, r->index,
				 __ATOMIC_RELEASE);
	}
	return taken;
}

uint32_t pair_poll(struct pair *p)
{
	size_t n = sizeof(p->seen) / sizeof(p->seen[0]);

	return cq_ring_poll(&p->cqr, p->seen, n) +
	       (p->far.ctx ? cq_ring_poll(&p->far.cqr, p->seen, n) : 0);
}

/* Waits up to @ms for the CQE of @wr_id; returns its status or -1. */
int pair_wait_cqe(struct pair *p, uint64_t wr_id, int ms)
{
	int tries;

	for (tries = 0; tries < ms && p->seen[wr_id] < 0; tries++) {
		pair_poll(p);
		if (p->seen[wr_id] < 0)
			usleep(1000);
	}
	return p->seen[wr_id];
}

/* A clean SEND from QP 0 to QP 1: both complete, and the data arrived. */
int pair_send_checked(struct pair *p)
{
	size_t i;

	for (i = 0; i < 64; i++)
		p->buf[i] = (char)(0xa5 ^ i);
	memset(p->buf + PAIR_BUF_LEN, 0, 64);
	pair_recv_wqe(p, 1, 1);
	pair_send_wqe(p, 0, IBV_WR_SEND);
	ring_publish(&p->sq[0], 1);
	raw_doorbell(&p->qp[0]);
	return pair_wait_cqe(p, 0x100, 5000) == IBV_WC_SUCCESS &&
	       pair_wait_cqe(p, 0x201, 5000) == IBV_WC_SUCCESS &&
	       !memcmp(p->buf, p->buf + PAIR_BUF_LEN, 64);
}
