// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The control path: every verb here is a command to the kernel, through
 * libibverbs' ibv_cmd_* helpers.  What the provider adds is mapping the
 * rings the create responses describe, and unmapping them on destroy.
 *
 * Ops returning a pointer set errno on failure; ops returning int return
 * 0 or an errno value, as libibverbs expects.
 */

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "softhca.h"

/* Response buffers: the core's part, then softhca's, with no padding. */
struct softhca_create_cq_resp_buf {
	struct ib_uverbs_create_cq_resp ibv;
	struct softhca_create_cq_resp drv;
};

struct softhca_create_qp_resp_buf {
	struct ib_uverbs_create_qp_resp ibv;
	struct softhca_create_qp_resp drv;
};

struct softhca_create_ah_resp_buf {
	struct ib_uverbs_create_ah_resp ibv;
	struct softhca_create_ah_resp drv;
};

struct softhca_resize_cq_resp_buf {
	struct ib_uverbs_resize_cq_resp ibv;
	struct softhca_create_cq_resp drv;
};

struct softhca_create_cq_ex_resp_buf {
	struct ib_uverbs_ex_create_cq_resp ibv;
	struct softhca_create_cq_resp drv;
};

struct softhca_create_qp_ex_resp_buf {
	struct ib_uverbs_ex_create_qp_resp ibv;
	struct softhca_create_qp_resp drv;
};

struct softhca_create_srq_resp_buf {
	struct ib_uverbs_create_srq_resp ibv;
	struct softhca_create_srq_resp drv;
};

_Static_assert(offsetof(struct softhca_create_cq_resp_buf, drv) ==
	       sizeof(struct ib_uverbs_create_cq_resp),
	       "no padding between core and softhca create_cq response");
_Static_assert(offsetof(struct softhca_create_qp_resp_buf, drv) ==
	       sizeof(struct ib_uverbs_create_qp_resp),
	       "no padding between core and softhca create_qp response");
_Static_assert(offsetof(struct softhca_create_cq_ex_resp_buf, drv) ==
	       sizeof(struct ib_uverbs_ex_create_cq_resp),
	       "no padding between core and softhca create_cq_ex response");
_Static_assert(offsetof(struct softhca_create_qp_ex_resp_buf, drv) ==
	       sizeof(struct ib_uverbs_ex_create_qp_resp),
	       "no padding between core and softhca create_qp_ex response");
_Static_assert(offsetof(struct softhca_create_ah_resp_buf, drv) ==
	       sizeof(struct ib_uverbs_create_ah_resp),
	       "no padding between core and softhca create_ah response");
_Static_assert(offsetof(struct softhca_resize_cq_resp_buf, drv) ==
	       sizeof(struct ib_uverbs_resize_cq_resp),
	       "no padding between core and softhca resize_cq response");
_Static_assert(offsetof(struct softhca_create_srq_resp_buf, drv) ==
	       sizeof(struct ib_uverbs_create_srq_resp),
	       "no padding between core and softhca create_srq response");

/* --- PD and MR -------------------------------------------------------- */

struct ibv_pd *softhca_alloc_pd(struct ibv_context *ibctx)
{
	struct rcp_alloc_pd_cmd cmd = {};
	struct ib_uverbs_alloc_pd_resp resp = {};
	struct ibv_pd *pd;
	int err;

	pd = calloc(1, sizeof(*pd));
	if (!pd)
		return NULL;
	err = ibv_cmd_alloc_pd(ibctx, pd, &cmd, sizeof(cmd), &resp,
			       sizeof(resp));
	if (err) {
		free(pd);
		errno = err;
		return NULL;
	}
	return pd;
}

int softhca_dealloc_pd(struct ibv_pd *pd)
{
	int err = ibv_cmd_dealloc_pd(pd);

	if (!err)
		free(pd);
	return err;
}

struct ibv_mr *softhca_reg_mr(struct ibv_pd *pd, void *addr, size_t length,
			      uint64_t hca_va, int access)
{
	struct rcp_reg_mr_cmd cmd = {};
	struct ib_uverbs_reg_mr_resp resp = {};
	struct verbs_mr *vmr;
	int err;

	vmr = calloc(1, sizeof(*vmr));
	if (!vmr)
		return NULL;
	err = ibv_cmd_reg_mr(pd, addr, length, hca_va, access, vmr, &cmd,
			     sizeof(cmd), &resp, sizeof(resp));
	if (err) {
		free(vmr);
		errno = err;
		return NULL;
	}
	return &vmr->ibv_mr;
}

/*
 * A new translation: the kernel puts a new MR, with new keys, in the old
 * one's place, and the core takes its keys from the response.  A new PD
 * or new access flags: the MR and its keys stay.
 */
int softhca_rereg_mr(struct verbs_mr *vmr, int flags, struct ibv_pd *pd,
		     void *addr, size_t length, int access)
{
	struct rcp_rereg_mr_cmd cmd = {};
	struct ib_uverbs_rereg_mr_resp resp = {};

	return ibv_cmd_rereg_mr(vmr, flags, addr, length, (uintptr_t)addr,
				access, pd, &cmd, sizeof(cmd), &resp,
				sizeof(resp));
}

int softhca_dereg_mr(struct verbs_mr *vmr)
{
	int err = ibv_cmd_dereg_mr(vmr);

	if (!err)
		free(vmr);
	return err;
}

/* --- memory windows -------------------------------------------------- */

struct ibv_mw *softhca_alloc_mw(struct ibv_pd *pd, enum ibv_mw_type type)
{
	struct rcp_alloc_mw_cmd cmd = {};
	struct ib_uverbs_alloc_mw_resp resp = {};
	struct ibv_mw *mw;
	int err;

	mw = calloc(1, sizeof(*mw));
	if (!mw)
		return NULL;
	err = ibv_cmd_alloc_mw(pd, type, mw, &cmd, sizeof(cmd), &resp,
			       sizeof(resp));
	if (err) {
		free(mw);
		errno = err;
		return NULL;
	}
	return mw;
}

int softhca_dealloc_mw(struct ibv_mw *mw)
{
	int err = ibv_cmd_dealloc_mw(mw);

	if (!err)
		free(mw);
	return err;
}

/* --- CQ --------------------------------------------------------------- */

static struct softhca_cq *softhca_cq_alloc(void)
{
	struct softhca_cq *cq = calloc(1, sizeof(*cq));
	int err;

	if (!cq)
		return NULL;
	err = pthread_spin_init(&cq->lock, PTHREAD_PROCESS_PRIVATE);
	if (err) {
		free(cq);
		errno = err;
		return NULL;
	}
	return cq;
}

static void softhca_cq_free(struct softhca_cq *cq)
{
	pthread_spin_destroy(&cq->lock);
	free(cq);
}

/*
 * After the create command, which returned @err: maps the ring, or undoes
 * what was done and sets errno.  Returns 0 or the errno value.
 */
static int softhca_cq_created(struct ibv_context *ibctx,
			      struct softhca_cq *cq, int err,
			      const struct softhca_create_cq_resp *resp)
{
	if (!err) {
		err = softhca_ring_map(ibctx, &cq->ring, &resp->cq,
				       sizeof(struct softhca_cqe));
		if (err)
			ibv_cmd_destroy_cq(&cq->vcq.cq);
	}
	if (err) {
		softhca_cq_free(cq);
		errno = err;
	}
	return err;
}

struct ibv_cq *softhca_create_cq(struct ibv_context *ibctx, int cqe,
				 struct ibv_comp_channel *channel,
				 int comp_vector)
{
	struct rcp_create_cq_cmd cmd = {};
	struct softhca_create_cq_resp_buf resp = {};
	struct softhca_cq *cq = softhca_cq_alloc();
	int err;

	if (!cq)
		return NULL;
	err = ibv_cmd_create_cq(ibctx, cqe, channel, comp_vector, &cq->vcq.cq,
				&cmd, sizeof(cmd), &resp.ibv, sizeof(resp));
	if (softhca_cq_created(ibctx, cq, err, &resp.drv))
		return NULL;
	return &cq->vcq.cq;
}

/*
 * The extended CQ is the same ring, read through ibv_start_poll and the
 * ibv_wc_read_* accessors as well as ibv_poll_cq.  Timestamps, VLANs,
 * flow tags and tag matching are not offered: EOPNOTSUPP.
 */
struct ibv_cq_ex *softhca_create_cq_ex(struct ibv_context *ibctx,
				       struct ibv_cq_init_attr_ex *attr)
{
	struct rcp_create_cq_ex_cmd cmd = {};
	struct softhca_create_cq_ex_resp_buf resp = {};
	struct softhca_cq *cq;
	int err;

	if (attr->wc_flags & ~(uint64_t)SOFTHCA_WC_EX_FLAGS ||
	    attr->comp_mask & ~(uint32_t)IBV_CQ_INIT_ATTR_MASK_FLAGS) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	cq = softhca_cq_alloc();
	if (!cq)
		return NULL;
	/* The kernel refuses creation flags: it has none to offer. */
	err = ibv_cmd_create_cq_ex(ibctx, attr, &cq->vcq, &cmd, sizeof(cmd),
				   &resp.ibv, sizeof(resp), 0);
	if (softhca_cq_created(ibctx, cq, err, &resp.drv))
		return NULL;
	softhca_cq_ex_init(cq);
	return &cq->vcq.cq_ex;
}

/*
 * The kernel moves the CQEs not yet polled to a new ring and keeps the
 * arm; pollers wait while the ring changes under them.
 */
int softhca_resize_cq(struct ibv_cq *ibcq, int cqe)
{
	struct softhca_cq *cq = to_scq(ibcq);
	struct rcp_resize_cq_cmd cmd = {};
	struct softhca_resize_cq_resp_buf resp = {};
	struct softhca_ring ring;
	int err;

	pthread_spin_lock(&cq->lock);
	err = ibv_cmd_resize_cq(ibcq, cqe, &cmd, sizeof(cmd), &resp.ibv,
				sizeof(resp));
	if (err)
		goto out_unlock;
	err = softhca_ring_map(ibcq->context, &ring, &resp.drv.cq,
			       sizeof(struct softhca_cqe));
	if (err)
		goto out_unlock;
	softhca_ring_unmap(&cq->ring);
	cq->ring = ring;
out_unlock:
	pthread_spin_unlock(&cq->lock);
	return err;
}

int softhca_destroy_cq(struct ibv_cq *ibcq)
{
	struct softhca_cq *cq = to_scq(ibcq);
	int err;

	err = ibv_cmd_destroy_cq(ibcq);
	if (err)
		return err;
	softhca_ring_unmap(&cq->ring);
	softhca_cq_free(cq);
	return 0;
}

/* --- QP --------------------------------------------------------------- */

static uint32_t softhca_send_entry_min(const struct ibv_qp_cap *cap)
{
	uint32_t sges = cap->max_send_sge * sizeof(struct softhca_sge);

	return sizeof(struct softhca_send_wqe) +
	       (sges > cap->max_inline_data ? sges : cap->max_inline_data);
}

static int softhca_qp_locks_init(struct softhca_qp *qp)
{
	int err = pthread_spin_init(&qp->sq_lock, PTHREAD_PROCESS_PRIVATE);

	if (err)
		return err;
	err = pthread_spin_init(&qp->rq_lock, PTHREAD_PROCESS_PRIVATE);
	if (err)
		pthread_spin_destroy(&qp->sq_lock);
	return err;
}

static void softhca_qp_locks_destroy(struct softhca_qp *qp)
{
	pthread_spin_destroy(&qp->rq_lock);
	pthread_spin_destroy(&qp->sq_lock);
}

static struct softhca_qp *softhca_qp_alloc(void)
{
	struct softhca_qp *qp = calloc(1, sizeof(*qp));
	int err;

	if (!qp)
		return NULL;
	err = softhca_qp_locks_init(qp);
	if (err) {
		free(qp);
		errno = err;
		return NULL;
	}
	return qp;
}

static void softhca_qp_free(struct softhca_qp *qp)
{
	softhca_qp_locks_destroy(qp);
	free(qp);
}

/*
 * After the create command, which returned @err: maps the rings the kernel
 * described, sized for the capabilities it gave the QP (in @cap), or
 * undoes what was done and sets errno.  Returns 0 or the errno value.
 */
static int softhca_qp_created(struct ibv_context *ibctx,
			      struct softhca_qp *qp, int err,
			      const struct softhca_create_qp_resp *maps,
			      const struct ibv_qp_cap *cap, int sq_sig_all)
{
	if (err)
		goto err_free;
	err = softhca_ring_map(ibctx, &qp->sq, &maps->sq,
			       softhca_send_entry_min(cap));
	if (err)
		goto err_destroy;
	if (!qp->vqp.qp.srq) {
		err = softhca_ring_map(ibctx, &qp->rq, &maps->rq,
				       sizeof(struct softhca_recv_wqe) +
				       cap->max_recv_sge *
				       sizeof(struct softhca_sge));
		if (err)
			goto err_unmap_sq;
	}
	/* A kernel without the process's doorbell gave no slot. */
	qp->db_slot = maps->db_slot < to_sctx(ibctx)->db_slots ?
		      maps->db_slot : SOFTHCA_NO_SLOT;
	qp->max_send_sge = cap->max_send_sge;
	qp->max_recv_sge = cap->max_recv_sge;
	qp->max_inline = cap->max_inline_data;
	qp->sq_sig_all = sq_sig_all;
	return 0;

err_unmap_sq:
	softhca_ring_unmap(&qp->sq);
err_destroy:
	ibv_cmd_destroy_qp(&qp->vqp.qp);
err_free:
	softhca_qp_free(qp);
	errno = err;
	return err;
}

struct ibv_qp *softhca_create_qp(struct ibv_pd *pd,
				 struct ibv_qp_init_attr *attr)
{
	struct rcp_create_qp_cmd cmd = {};
	struct softhca_create_qp_resp_buf resp = {};
	struct softhca_qp *qp = softhca_qp_alloc();
	int err;

	if (!qp)
		return NULL;
	/* The kernel answers with the capabilities it gave the QP. */
	err = ibv_cmd_create_qp(pd, &qp->vqp.qp, attr, &cmd, sizeof(cmd),
				&resp.ibv, sizeof(resp));
	if (softhca_qp_created(pd->context, qp, err, &resp.drv, &attr->cap,
			       attr->sq_sig_all))
		return NULL;
	return &qp->vqp.qp;
}

/*
 * The extended QP: the same QP, with the ibv_wr_* post API besides
 * ibv_post_send.  It takes the operations softhca executes on the QP's
 * type; XRC, TSO, RSS and parent domains are not offered: EOPNOTSUPP, as
 * the kernel answers creation flags other than none.
 */
struct ibv_qp *softhca_create_qp_ex(struct ibv_context *ibctx,
				    struct ibv_qp_init_attr_ex *attr)
{
	struct rcp_create_qp_ex_cmd cmd = {};
	struct softhca_create_qp_ex_resp_buf resp = {};
	uint64_t send_ops = 0;
	struct softhca_qp *qp;
	int err;

	if (attr->comp_mask & ~(uint32_t)(IBV_QP_INIT_ATTR_PD |
					  IBV_QP_INIT_ATTR_CREATE_FLAGS |
					  IBV_QP_INIT_ATTR_SEND_OPS_FLAGS)) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	if (attr->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS) {
		send_ops = attr->send_ops_flags;
		if (send_ops & ~softhca_send_ops(attr->qp_type)) {
			errno = EOPNOTSUPP;
			return NULL;
		}
	}
	qp = softhca_qp_alloc();
	if (!qp)
		return NULL;
	err = ibv_cmd_create_qp_ex2(ibctx, &qp->vqp, attr, &cmd, sizeof(cmd),
				    &resp.ibv, sizeof(resp));
	if (softhca_qp_created(ibctx, qp, err, &resp.drv, &attr->cap,
			       attr->sq_sig_all))
		return NULL;
	/* After the command: the core zeroes the QP's comp_mask. */
	softhca_qp_ex_init(qp, send_ops);
	return &qp->vqp.qp;
}

/*
 * RESET empties both rings (the kernel zeroed their indices) and, as on
 * other HCAs, the CQs of the QP's completions not polled yet.
 */
static void softhca_qp_reset(struct softhca_qp *qp)
{
	struct ibv_qp *ibqp = &qp->vqp.qp;

	softhca_cq_clean(ibqp->send_cq, ibqp->qp_num);
	if (ibqp->recv_cq != ibqp->send_cq)
		softhca_cq_clean(ibqp->recv_cq, ibqp->qp_num);
	pthread_spin_lock(&qp->sq_lock);
	qp->sq.index = 0;
	pthread_spin_unlock(&qp->sq_lock);
	pthread_spin_lock(&qp->rq_lock);
	qp->rq.index = 0;
	pthread_spin_unlock(&qp->rq_lock);
}

int softhca_modify_qp(struct ibv_qp *ibqp, struct ibv_qp_attr *attr,
		      int attr_mask)
{
	struct rcp_modify_qp_cmd cmd = {};
	int err;

	err = ibv_cmd_modify_qp(ibqp, attr, attr_mask, &cmd, sizeof(cmd));
	if (err)
		return err;
	if (attr_mask & IBV_QP_STATE) {
		if (attr->qp_state == IBV_QPS_RESET)
			softhca_qp_reset(to_sqp(ibqp));
		/* The core records it too, but only once this returns. */
		ibqp->state = attr->qp_state;
	}
	return 0;
}

int softhca_query_qp(struct ibv_qp *ibqp, struct ibv_qp_attr *attr,
		     int attr_mask, struct ibv_qp_init_attr *init_attr)
{
	struct rcp_query_qp_cmd cmd = {};

	return ibv_cmd_query_qp(ibqp, attr, attr_mask, init_attr, &cmd,
				sizeof(cmd));
}

int softhca_destroy_qp(struct ibv_qp *ibqp)
{
	struct softhca_qp *qp = to_sqp(ibqp);
	int err;

	err = ibv_cmd_destroy_qp(ibqp);
	if (err)
		return err;
	softhca_ring_unmap(&qp->rq);
	softhca_ring_unmap(&qp->sq);
	softhca_qp_free(qp);
	return 0;
}

/* --- SRQ -------------------------------------------------------------- */

struct ibv_srq *softhca_create_srq(struct ibv_pd *pd,
				   struct ibv_srq_init_attr *attr)
{
	struct rcp_create_srq_cmd cmd = {};
	struct softhca_create_srq_resp_buf resp = {};
	struct softhca_srq *srq;
	int err;

	srq = calloc(1, sizeof(*srq));
	if (!srq)
		return NULL;
	err = pthread_spin_init(&srq->lock, PTHREAD_PROCESS_PRIVATE);
	if (err)
		goto err_free;
	/* The kernel answers with the capabilities it gave the SRQ. */
	err = ibv_cmd_create_srq(pd, &srq->ibv_srq, attr, &cmd, sizeof(cmd),
				 &resp.ibv, sizeof(resp));
	if (err)
		goto err_lock;
	err = softhca_ring_map(pd->context, &srq->ring, &resp.drv.srq,
			       sizeof(struct softhca_recv_wqe) +
			       attr->attr.max_sge * sizeof(struct softhca_sge));
	if (err)
		goto err_destroy;
	srq->max_sge = attr->attr.max_sge;
	return &srq->ibv_srq;

err_destroy:
	ibv_cmd_destroy_srq(&srq->ibv_srq);
err_lock:
	pthread_spin_destroy(&srq->lock);
err_free:
	free(srq);
	errno = err;
	return NULL;
}

int softhca_modify_srq(struct ibv_srq *ibsrq, struct ibv_srq_attr *attr,
		       int attr_mask)
{
	struct rcp_modify_srq_cmd cmd = {};

	return ibv_cmd_modify_srq(ibsrq, attr, attr_mask, &cmd, sizeof(cmd));
}

int softhca_query_srq(struct ibv_srq *ibsrq, struct ibv_srq_attr *attr)
{
	struct rcp_query_srq_cmd cmd = {};

	return ibv_cmd_query_srq(ibsrq, attr, &cmd, sizeof(cmd));
}

int softhca_destroy_srq(struct ibv_srq *ibsrq)
{
	struct softhca_srq *srq = to_ssrq(ibsrq);
	int err;

	err = ibv_cmd_destroy_srq(ibsrq);
	if (err)
		return err;
	softhca_ring_unmap(&srq->ring);
	pthread_spin_destroy(&srq->lock);
	free(srq);
	return 0;
}

/* --- AH --------------------------------------------------------------- */

struct ibv_ah *softhca_create_ah(struct ibv_pd *pd, struct ibv_ah_attr *attr)
{
	struct softhca_create_ah_resp_buf resp = {};
	struct softhca_ah *ah;
	int err;

	ah = calloc(1, sizeof(*ah));
	if (!ah)
		return NULL;
	err = ibv_cmd_create_ah(pd, &ah->ibv_ah, attr, &resp.ibv, sizeof(resp));
	if (err) {
		free(ah);
		errno = err;
		return NULL;
	}
	/* UD WQEs name the AH by the kernel's number. */
	ah->num = resp.drv.ah_num;
	return &ah->ibv_ah;
}

int softhca_destroy_ah(struct ibv_ah *ibah)
{
	int err = ibv_cmd_destroy_ah(ibah);

	if (!err)
		free(to_sah(ibah));
	return err;
}
