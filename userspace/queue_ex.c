// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The extended data path: ibv_wr_* posting on a QP made by
 * ibv_create_qp_ex, and ibv_start_poll/ibv_next_poll/ibv_end_poll with the
 * ibv_wc_read_* accessors on a CQ made by ibv_create_cq_ex.
 *
 * Both work on the same rings, with the same WQE and CQE layouts and the
 * same doorbell and arming protocols, as ibv_post_send and ibv_poll_cq in
 * queue.c: the two APIs may be mixed on one QP or CQ.  A batch of ibv_wr_*
 * calls is written in place into the free slots of the send ring, under
 * the send lock taken by ibv_wr_start, and published at once (with at most
 * one doorbell) by ibv_wr_complete; ibv_wr_abort publishes nothing.  The
 * first bad call of a batch (an opcode the QP was not created for, more
 * SGEs or inline bytes than its capabilities, a full ring) makes
 * ibv_wr_complete post nothing and return its error.
 */

#include <errno.h>

#include "ring.h"

/* --- CQ --------------------------------------------------------------- */

/* Takes the next CQE: the caller holds the poll lock and saw one ready. */
static void cq_ex_take(struct softhca_cq *cq)
{
	struct softhca_ring *ring = &cq->ring;

	cq->cur = ring_entry(ring, ring->index + cq->taken++);
	cq->vcq.cq_ex.status = cq->cur->status;
	cq->vcq.cq_ex.wr_id = cq->cur->wr_id;
}

static int cq_ex_start_poll(struct ibv_cq_ex *ibcq,
			    struct ibv_poll_cq_attr *attr)
{
	struct softhca_cq *cq = to_scq_ex(ibcq);

	if (attr->comp_mask)
		return EINVAL;
	pthread_spin_lock(&cq->lock);
	if (!ring_avail(&cq->ring)) {
		/* The caller does not call ibv_end_poll after ENOENT. */
		pthread_spin_unlock(&cq->lock);
		return ENOENT;
	}
	cq->taken = 0;
	cq_ex_take(cq);
	softhca_polled();
	return 0;
}

static int cq_ex_next_poll(struct ibv_cq_ex *ibcq)
{
	struct softhca_cq *cq = to_scq_ex(ibcq);

	if (ring_avail(&cq->ring) <= cq->taken)
		return ENOENT;
	cq_ex_take(cq);
	return 0;
}

/* Frees the slots of every CQE taken since ibv_start_poll, at once. */
static void cq_ex_end_poll(struct ibv_cq_ex *ibcq)
{
	struct softhca_cq *cq = to_scq_ex(ibcq);

	ring_consumed(&cq->ring, cq->taken);
	cq->cur = NULL;
	pthread_spin_unlock(&cq->lock);
}

static enum ibv_wc_opcode cq_ex_read_opcode(struct ibv_cq_ex *ibcq)
{
	return to_scq_ex(ibcq)->cur->opcode;
}

static uint32_t cq_ex_read_vendor_err(struct ibv_cq_ex *ibcq)
{
	return to_scq_ex(ibcq)->cur->vendor_err;
}

static uint32_t cq_ex_read_byte_len(struct ibv_cq_ex *ibcq)
{
	return to_scq_ex(ibcq)->cur->byte_len;
}

/* Also ibv_wc_read_invalidated_rkey: the CQE holds one or the other. */
static __be32 cq_ex_read_imm_data(struct ibv_cq_ex *ibcq)
{
	return to_scq_ex(ibcq)->cur->ex;
}

static uint32_t cq_ex_read_qp_num(struct ibv_cq_ex *ibcq)
{
	return to_scq_ex(ibcq)->cur->qp_num;
}

static uint32_t cq_ex_read_src_qp(struct ibv_cq_ex *ibcq)
{
	return to_scq_ex(ibcq)->cur->src_qp;
}

static unsigned int cq_ex_read_wc_flags(struct ibv_cq_ex *ibcq)
{
	return softhca_cqe_wc_flags(to_scq_ex(ibcq)->cur);
}

/* RoCE has no LIDs and carries no SL in what softhca reports: all 0. */
static uint32_t cq_ex_read_slid(struct ibv_cq_ex *ibcq)
{
	(void)ibcq;
	return 0;
}

static uint8_t cq_ex_read_zero_u8(struct ibv_cq_ex *ibcq)
{
	(void)ibcq;
	return 0;
}

void softhca_cq_ex_init(struct softhca_cq *cq)
{
	struct ibv_cq_ex *cqx = &cq->vcq.cq_ex;

	cqx->start_poll = cq_ex_start_poll;
	cqx->next_poll = cq_ex_next_poll;
	cqx->end_poll = cq_ex_end_poll;
	cqx->read_opcode = cq_ex_read_opcode;
	cqx->read_vendor_err = cq_ex_read_vendor_err;
	cqx->read_byte_len = cq_ex_read_byte_len;
	cqx->read_imm_data = cq_ex_read_imm_data;
	cqx->read_qp_num = cq_ex_read_qp_num;
	cqx->read_src_qp = cq_ex_read_src_qp;
	cqx->read_wc_flags = cq_ex_read_wc_flags;
	cqx->read_slid = cq_ex_read_slid;
	cqx->read_sl = cq_ex_read_zero_u8;
	cqx->read_dlid_path_bits = cq_ex_read_zero_u8;
}

/* --- send queue ------------------------------------------------------- */

/*
 * send_ops_flags and opcodes are the same bits for what softhca executes,
 * but ATOMIC WRITE's (send_op_bit).
 */
#define SOFTHCA_SAME_BIT(op)						\
	_Static_assert(IBV_QP_EX_WITH_##op == 1ull << IBV_WR_##op,	\
		       "IBV_QP_EX_WITH_" #op " is 1 << IBV_WR_" #op)
SOFTHCA_SAME_BIT(RDMA_WRITE);
SOFTHCA_SAME_BIT(RDMA_WRITE_WITH_IMM);
SOFTHCA_SAME_BIT(SEND);
SOFTHCA_SAME_BIT(SEND_WITH_IMM);
SOFTHCA_SAME_BIT(RDMA_READ);
SOFTHCA_SAME_BIT(ATOMIC_CMP_AND_SWP);
SOFTHCA_SAME_BIT(ATOMIC_FETCH_AND_ADD);
SOFTHCA_SAME_BIT(LOCAL_INV);
SOFTHCA_SAME_BIT(BIND_MW);
SOFTHCA_SAME_BIT(SEND_WITH_INV);

/* The send_ops_flags bit of opcode @op. */
static uint64_t send_op_bit(enum ibv_wr_opcode op)
{
	return op == IBV_WR_ATOMIC_WRITE ? IBV_QP_EX_WITH_ATOMIC_WRITE :
					   1ull << op;
}

/* The send_ops_flags a QP of @type may be created with. */
uint64_t softhca_send_ops(enum ibv_qp_type type)
{
	uint64_t ops = 0;
	int op;

	for (op = IBV_WR_RDMA_WRITE; op <= IBV_WR_ATOMIC_WRITE; op++)
		if (softhca_send_op_ok(type, op))
			ops |= send_op_bit(op);
	return ops;
}

static void qp_ex_wr_start(struct ibv_qp_ex *ibqp)
{
	struct softhca_qp *qp = to_sqp_ex(ibqp);

	pthread_spin_lock(&qp->sq_lock);
	qp->wr_room = ring_room(&qp->sq);
	qp->wr_num = 0;
	qp->wr_cur = NULL;
	/* The IBA takes sends from RTS on, as ibv_post_send does. */
	qp->wr_err = ibqp->qp_base.state < IBV_QPS_RTS ? EINVAL : 0;
}

/* Begins the batch's next WQE; NULL once the batch has failed. */
static struct softhca_send_wqe *qp_ex_next(struct softhca_qp *qp,
					   enum ibv_wr_opcode op)
{
	struct ibv_qp_ex *qpx = &qp->vqp.qp_ex;

	qp->wr_cur = NULL;
	if (qp->wr_err)
		return NULL;
	if (!(qp->send_ops & send_op_bit(op))) {
		qp->wr_err = EINVAL;
		return NULL;
	}
	if (qp->wr_num == qp->wr_room) {
		qp->wr_err = ENOMEM;
		return NULL;
	}
	qp->wr_cur = ring_entry(&qp->sq, qp->sq.index + qp->wr_num++);
	softhca_wqe_begin(qp, qp->wr_cur, qpx->wr_id, op, qpx->wr_flags);
	return qp->wr_cur;
}

static void qp_ex_fail(struct softhca_qp *qp, int err)
{
	qp->wr_err = err;
	qp->wr_cur = NULL;
}

static void qp_ex_send(struct ibv_qp_ex *ibqp)
{
	qp_ex_next(to_sqp_ex(ibqp), IBV_WR_SEND);
}

static void qp_ex_send_imm(struct ibv_qp_ex *ibqp, __be32 imm_data)
{
	struct softhca_send_wqe *wqe;

	wqe = qp_ex_next(to_sqp_ex(ibqp), IBV_WR_SEND_WITH_IMM);
	if (wqe)
		wqe->ex = imm_data;	/* stays big endian */
}

static void qp_ex_send_inv(struct ibv_qp_ex *ibqp, uint32_t invalidate_rkey)
{
	struct softhca_send_wqe *wqe;

	wqe = qp_ex_next(to_sqp_ex(ibqp), IBV_WR_SEND_WITH_INV);
	if (wqe)
		wqe->ex = invalidate_rkey;
}

static void qp_ex_local_inv(struct ibv_qp_ex *ibqp, uint32_t invalidate_rkey)
{
	struct softhca_send_wqe *wqe;

	wqe = qp_ex_next(to_sqp_ex(ibqp), IBV_WR_LOCAL_INV);
	if (wqe)
		wqe->ex = invalidate_rkey;
}

/* A type 2 window's bind; a type 1 window is ibv_bind_mw's. */
static void qp_ex_bind_mw(struct ibv_qp_ex *ibqp, struct ibv_mw *mw,
			  uint32_t rkey, const struct ibv_mw_bind_info *info)
{
	struct softhca_qp *qp = to_sqp_ex(ibqp);
	struct softhca_send_wqe *wqe = qp_ex_next(qp, IBV_WR_BIND_MW);

	if (!wqe)
		return;
	if (!mw || mw->type != IBV_MW_TYPE_2) {
		qp_ex_fail(qp, EINVAL);
		return;
	}
	softhca_wqe_bind(wqe, rkey, info);
}

static struct softhca_send_wqe *qp_ex_rdma(struct ibv_qp_ex *ibqp,
					   enum ibv_wr_opcode op,
					   uint32_t rkey, uint64_t remote_addr)
{
	struct softhca_send_wqe *wqe = qp_ex_next(to_sqp_ex(ibqp), op);

	if (wqe) {
		wqe->rdma.remote_addr = remote_addr;
		wqe->rdma.rkey = rkey;
	}
	return wqe;
}

static void qp_ex_rdma_write(struct ibv_qp_ex *ibqp, uint32_t rkey,
			     uint64_t remote_addr)
{
	qp_ex_rdma(ibqp, IBV_WR_RDMA_WRITE, rkey, remote_addr);
}

static void qp_ex_rdma_write_imm(struct ibv_qp_ex *ibqp, uint32_t rkey,
				 uint64_t remote_addr, __be32 imm_data)
{
	struct softhca_send_wqe *wqe;

	wqe = qp_ex_rdma(ibqp, IBV_WR_RDMA_WRITE_WITH_IMM, rkey, remote_addr);
	if (wqe)
		wqe->ex = imm_data;
}

static void qp_ex_rdma_read(struct ibv_qp_ex *ibqp, uint32_t rkey,
			    uint64_t remote_addr)
{
	qp_ex_rdma(ibqp, IBV_WR_RDMA_READ, rkey, remote_addr);
}

static void qp_ex_atomic(struct ibv_qp_ex *ibqp, enum ibv_wr_opcode op,
			 uint32_t rkey, uint64_t remote_addr,
			 uint64_t compare_add, uint64_t swap)
{
	struct softhca_send_wqe *wqe = qp_ex_next(to_sqp_ex(ibqp), op);

	if (wqe) {
		wqe->atomic.remote_addr = remote_addr;
		wqe->atomic.compare_add = compare_add;
		wqe->atomic.swap = swap;
		wqe->atomic.rkey = rkey;
	}
}

static void qp_ex_atomic_cmp_swp(struct ibv_qp_ex *ibqp, uint32_t rkey,
				 uint64_t remote_addr, uint64_t compare,
				 uint64_t swap)
{
	qp_ex_atomic(ibqp, IBV_WR_ATOMIC_CMP_AND_SWP, rkey, remote_addr,
		     compare, swap);
}

static void qp_ex_atomic_fetch_add(struct ibv_qp_ex *ibqp, uint32_t rkey,
				   uint64_t remote_addr, uint64_t add)
{
	qp_ex_atomic(ibqp, IBV_WR_ATOMIC_FETCH_AND_ADD, rkey, remote_addr,
		     add, 0);
}

/* Its 8 bytes are copied now, into the WQE: it takes no SGE. */
static void qp_ex_atomic_write(struct ibv_qp_ex *ibqp, uint32_t rkey,
			       uint64_t remote_addr, const void *atomic_wr)
{
	struct softhca_send_wqe *wqe;

	wqe = qp_ex_next(to_sqp_ex(ibqp), IBV_WR_ATOMIC_WRITE);
	if (wqe)
		softhca_wqe_atomic_write(wqe, rkey, remote_addr, atomic_wr);
}

/* The IBA ignores a UD address on connected QPs; so does softhca. */
static void qp_ex_set_ud_addr(struct ibv_qp_ex *ibqp, struct ibv_ah *ah,
			      uint32_t remote_qpn, uint32_t remote_qkey)
{
	struct softhca_qp *qp = to_sqp_ex(ibqp);
	struct softhca_send_wqe *wqe = qp->wr_cur;

	if (!wqe || ibqp->qp_base.qp_type != IBV_QPT_UD)
		return;
	if (!ah) {
		qp_ex_fail(qp, EINVAL);
		return;
	}
	wqe->ud.ah = to_sah(ah)->num;
	wqe->ud.remote_qpn = remote_qpn;
	wqe->ud.remote_qkey = remote_qkey;
}

/*
 * The WQE's data, given again: it replaces what was set before.  An
 * ATOMIC WRITE has its own, and takes none.
 */
static struct softhca_send_wqe *qp_ex_data(struct softhca_qp *qp)
{
	struct softhca_send_wqe *wqe = qp->wr_cur;

	if (wqe && wqe->opcode == IBV_WR_ATOMIC_WRITE) {
		qp_ex_fail(qp, EINVAL);
		return NULL;
	}
	if (wqe) {
		wqe->num_sge = 0;
		wqe->flags &= ~SOFTHCA_WQE_INLINE;
		wqe->inline_len = 0;
	}
	return wqe;
}

static void qp_ex_set_sge_list(struct ibv_qp_ex *ibqp, size_t num_sge,
			       const struct ibv_sge *sg_list)
{
	struct softhca_qp *qp = to_sqp_ex(ibqp);
	struct softhca_send_wqe *wqe = qp_ex_data(qp);

	if (!wqe)
		return;
	if (num_sge > qp->max_send_sge) {
		qp_ex_fail(qp, EINVAL);
		return;
	}
	wqe->num_sge = num_sge;
	softhca_wqe_sges((struct softhca_sge *)(wqe + 1), sg_list, num_sge);
}

static void qp_ex_set_sge(struct ibv_qp_ex *ibqp, uint32_t lkey,
			  uint64_t addr, uint32_t length)
{
	const struct ibv_sge sge = {
		.addr = addr,
		.length = length,
		.lkey = lkey,
	};

	qp_ex_set_sge_list(ibqp, 1, &sge);
}

static void qp_ex_set_inline_data_list(struct ibv_qp_ex *ibqp, size_t num_buf,
				       const struct ibv_data_buf *buf_list)
{
	struct softhca_qp *qp = to_sqp_ex(ibqp);
	struct softhca_send_wqe *wqe = qp_ex_data(qp);
	size_t i;

	for (i = 0; wqe && i < num_buf; i++)
		if (softhca_wqe_inline_add(qp, wqe, buf_list[i].addr,
					   buf_list[i].length)) {
			qp_ex_fail(qp, EINVAL);
			return;
		}
}

static void qp_ex_set_inline_data(struct ibv_qp_ex *ibqp, void *addr,
				  size_t length)
{
	const struct ibv_data_buf buf = {
		.addr = addr,
		.length = length,
	};

	qp_ex_set_inline_data_list(ibqp, 1, &buf);
}

/* Publishes the batch, or nothing if a call in it failed. */
static int qp_ex_wr_complete(struct ibv_qp_ex *ibqp)
{
	struct softhca_qp *qp = to_sqp_ex(ibqp);
	uint32_t n = qp->wr_err ? 0 : qp->wr_num;
	int err = qp->wr_err, db;

	if (n)
		ring_produced(&qp->sq, n);
	qp->wr_cur = NULL;
	pthread_spin_unlock(&qp->sq_lock);
	db = softhca_sq_kick(qp, n);
	return err ? err : db;
}

/* The slots written stay unpublished: the kernel never reads them. */
static void qp_ex_wr_abort(struct ibv_qp_ex *ibqp)
{
	struct softhca_qp *qp = to_sqp_ex(ibqp);

	qp->wr_cur = NULL;
	pthread_spin_unlock(&qp->sq_lock);
}

/*
 * Every opcode of the QP's type is callable, whatever send_ops_flags
 * asked for; one not asked for fails its batch with EINVAL.
 */
void softhca_qp_ex_init(struct softhca_qp *qp, uint64_t send_ops)
{
	struct ibv_qp_ex *qpx = &qp->vqp.qp_ex;

	qp->send_ops = send_ops;
	qpx->wr_start = qp_ex_wr_start;
	qpx->wr_complete = qp_ex_wr_complete;
	qpx->wr_abort = qp_ex_wr_abort;
	qpx->wr_send = qp_ex_send;
	qpx->wr_send_imm = qp_ex_send_imm;
	qpx->wr_send_inv = qp_ex_send_inv;
	qpx->wr_local_inv = qp_ex_local_inv;
	qpx->wr_bind_mw = qp_ex_bind_mw;
	qpx->wr_rdma_write = qp_ex_rdma_write;
	qpx->wr_rdma_write_imm = qp_ex_rdma_write_imm;
	qpx->wr_rdma_read = qp_ex_rdma_read;
	qpx->wr_atomic_cmp_swp = qp_ex_atomic_cmp_swp;
	qpx->wr_atomic_fetch_add = qp_ex_atomic_fetch_add;
	qpx->wr_atomic_write = qp_ex_atomic_write;
	qpx->wr_set_ud_addr = qp_ex_set_ud_addr;
	qpx->wr_set_sge = qp_ex_set_sge;
	qpx->wr_set_sge_list = qp_ex_set_sge_list;
	qpx->wr_set_inline_data = qp_ex_set_inline_data;
	qpx->wr_set_inline_data_list = qp_ex_set_inline_data_list;
	qp->vqp.comp_mask |= RCP_VERBS_QP_EX;
}
