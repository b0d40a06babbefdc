// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The data path: posting work requests into the send and receive rings
 * and polling the CQ ring, all in the process's own memory.
 *
 * The rings are the kernel's layout (softhca-abi.h), written exactly as
 * the kernel's own post path writes them for kernel consumers.  A producer
 * writes its entries, then releases its new index; a consumer acquires the
 * other side's index, reads, then releases its own.  The kernel copies and
 * checks every entry it takes, so a bad WQE costs only an error completion.
 *
 * Doorbells and arming follow the protocols softhca-abi.h describes: a
 * post makes a system call only when the kernel asked for one in the
 * ring's control block (its engine went idle, or a QP in error has
 * flushed), and arming a CQ is a store the kernel reads when it adds a
 * CQE.  Receive queues need no doorbell but in error: the kernel takes
 * receive WQEs as messages arrive.
 *
 * A send doorbell tells the kernel whether the thread waits on its peer
 * (it polled completions since it last posted): the kernel then executes
 * the WQEs in the system call, at once, rather than in a worker that
 * takes what a streaming thread goes on posting.  That worker serves all
 * the process's QPs: a send queue that asks for a doorbell marks its QP
 * in the process's doorbell, and rings only when the worker has stopped.
 */

#include <errno.h>
#include <string.h>
#include <sys/mman.h>

#include "ring.h"

/*
 * Maps a ring the kernel described in a create response; min_entry is the
 * smallest entry that holds what the provider will write into one.
 * Returns 0 or an errno value.
 */
int softhca_ring_map(struct ibv_context *ibctx, struct softhca_ring *ring,
		     const struct softhca_queue_map *map, uint32_t min_entry)
{
	uint64_t need;
	void *p;

	/* The kernel's word is checked anyway: a bad map must not overrun. */
	if (!map->num_entries || map->num_entries & (map->num_entries - 1) ||
	    map->entry_size < min_entry)
		return EPROTO;
	need = SOFTHCA_QUEUE_ENTRIES_OFFSET +
	       (uint64_t)map->num_entries * map->entry_size;
	if (map->length < need || map->length > SIZE_MAX)
		return EPROTO;

	p = mmap(NULL, map->length, PROT_READ | PROT_WRITE, MAP_SHARED,
		 ibctx->cmd_fd, map->offset);
	if (p == MAP_FAILED)
		return errno;
	*ring = (struct softhca_ring){
		.ctrl = p,
		.entries = (char *)p + SOFTHCA_QUEUE_ENTRIES_OFFSET,
		.map = p,
		.map_len = map->length,
		.num = map->num_entries,
		.entry_size = map->entry_size,
	};
	return 0;
}

void softhca_ring_unmap(struct softhca_ring *ring)
{
	if (ring->map)
		munmap(ring->map, ring->map_len);
	ring->map = NULL;
}

/* Whether the kernel asked to be told of what was just produced. */
static int ring_doorbell_wanted(const struct softhca_ring *ring)
{
	/* The index is published before doorbell is read: see the ABI. */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	return __atomic_load_n(&ring->ctrl->doorbell, __ATOMIC_RELAXED);
}

/* --- CQ --------------------------------------------------------------- */

/* This thread polled completions since it last posted a send. */
static __thread int polled_since_post;

static const struct {
	uint8_t cqe;
	unsigned int wc;
} softhca_wc_flags[] = {
	{ SOFTHCA_CQE_GRH, IBV_WC_GRH },
	{ SOFTHCA_CQE_IMM, IBV_WC_WITH_IMM },
	{ SOFTHCA_CQE_INV, IBV_WC_WITH_INV },
};

void softhca_polled(void)
{
	polled_since_post = 1;
}

unsigned int softhca_cqe_wc_flags(const struct softhca_cqe *cqe)
{
	unsigned int flags = 0;
	size_t i;

	for (i = 0; i < sizeof(softhca_wc_flags) / sizeof(softhca_wc_flags[0]);
	     i++)
		if (cqe->flags & softhca_wc_flags[i].cqe)
			flags |= softhca_wc_flags[i].wc;
	return flags;
}

static void cqe_to_wc(const struct softhca_cqe *cqe, struct ibv_wc *wc)
{
	/* ib_uverbs_wc_status and _opcode are libibverbs' numbers. */
	*wc = (struct ibv_wc){
		.wr_id = cqe->wr_id,
		.status = cqe->status,
		.opcode = cqe->opcode,
		.vendor_err = cqe->vendor_err,
		.byte_len = cqe->byte_len,
		.qp_num = cqe->qp_num,
		.src_qp = cqe->src_qp,
		.pkey_index = cqe->pkey_index,
		.wc_flags = softhca_cqe_wc_flags(cqe),
	};
	if (cqe->flags & SOFTHCA_CQE_INV)
		wc->invalidated_rkey = cqe->ex;
	else
		wc->imm_data = cqe->ex;	/* big endian in the CQE already */
}

int softhca_poll_cq(struct ibv_cq *ibcq, int num_entries, struct ibv_wc *wc)
{
	struct softhca_cq *cq = to_scq(ibcq);
	struct softhca_ring *ring = &cq->ring;
	uint32_t avail;
	int n;

	pthread_spin_lock(&cq->lock);
	avail = ring_avail(ring);
	for (n = 0; n < num_entries && (uint32_t)n < avail; n++)
		cqe_to_wc(ring_entry(ring, ring->index + n), &wc[n]);
	ring_consumed(ring, n);
	if (n)
		polled_since_post = 1;
	pthread_spin_unlock(&cq->lock);
	return n;
}

/*
 * Drops the CQEs of QP @qpn not polled yet, as a QP reset does: the QP
 * starts over, and completions of its past must not be taken for its new
 * work.  The entries between the consumer and producer indices belong to
 * the consumer until it releases them, so the kept ones are moved up to
 * the newest end, in order, and the consumer index skips the dropped.
 */
void softhca_cq_clean(struct ibv_cq *ibcq, uint32_t qpn)
{
	struct softhca_cq *cq = to_scq(ibcq);
	struct softhca_ring *ring = &cq->ring;
	uint32_t prod, i, dropped = 0;
	struct softhca_cqe *cqe;

	pthread_spin_lock(&cq->lock);
	prod = __atomic_load_n(&ring->ctrl->producer, __ATOMIC_ACQUIRE);
	if (prod - ring->index > ring->num)
		prod = ring->index;
	for (i = prod; i-- != ring->index;) {
		cqe = ring_entry(ring, i);
		if (cqe->qp_num == qpn)
			dropped++;
		else if (dropped)
			memcpy(ring_entry(ring, i + dropped), cqe, sizeof(*cqe));
	}
	ring_consumed(ring, dropped);
	pthread_spin_unlock(&cq->lock);
}

/*
 * Arms the CQ where the kernel looks when it adds a CQE.  The caller polls
 * again before it sleeps, as the verbs have it: a CQE added before the arm
 * is found by that poll.
 */
int softhca_req_notify_cq(struct ibv_cq *ibcq, int solicited_only)
{
	uint32_t *arm = &to_scq(ibcq)->ring.ctrl->arm;
	uint32_t none = 0;

	if (solicited_only)
		/* Never weakens a pending arm for the next CQE. */
		__atomic_compare_exchange_n(arm, &none,
					    SOFTHCA_CQ_ARM_SOLICITED, 0,
					    __ATOMIC_SEQ_CST, __ATOMIC_RELAXED);
	else
		__atomic_store_n(arm, SOFTHCA_CQ_ARM_NEXT, __ATOMIC_SEQ_CST);
	/* The arm is visible before the caller's next poll reads the ring. */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	return 0;
}

/* --- send queue ------------------------------------------------------- */

/* Which opcodes each QP type may post; the kernel checks them again. */
int softhca_send_op_ok(enum ibv_qp_type type, enum ibv_wr_opcode op)
{
	switch (op) {
	case IBV_WR_SEND:
	case IBV_WR_SEND_WITH_IMM:
		return 1;
	case IBV_WR_RDMA_WRITE:
	case IBV_WR_RDMA_WRITE_WITH_IMM:
	case IBV_WR_LOCAL_INV:
	case IBV_WR_BIND_MW:
		return type == IBV_QPT_RC || type == IBV_QPT_UC;
	case IBV_WR_RDMA_READ:
	case IBV_WR_ATOMIC_CMP_AND_SWP:
	case IBV_WR_ATOMIC_FETCH_AND_ADD:
	case IBV_WR_SEND_WITH_INV:
	case IBV_WR_ATOMIC_WRITE:
		return type == IBV_QPT_RC;
	default:
		return 0;
	}
}

static const struct {
	unsigned int send;
	uint8_t wqe;
} softhca_wqe_flags[] = {
	{ IBV_SEND_SIGNALED, SOFTHCA_WQE_SIGNALED },
	{ IBV_SEND_SOLICITED, SOFTHCA_WQE_SOLICITED },
	{ IBV_SEND_FENCE, SOFTHCA_WQE_FENCE },
};

/* Starts a send WQE: its header, with no SGE and no operand yet. */
void softhca_wqe_begin(const struct softhca_qp *qp,
		       struct softhca_send_wqe *wqe, uint64_t wr_id,
		       enum ibv_wr_opcode op, unsigned int send_flags)
{
	size_t i;

	*wqe = (struct softhca_send_wqe){
		.wr_id = wr_id,
		.opcode = op,
	};
	if (qp->sq_sig_all)
		wqe->flags |= SOFTHCA_WQE_SIGNALED;
	for (i = 0; i < sizeof(softhca_wqe_flags) / sizeof(softhca_wqe_flags[0]);
	     i++)
		if (send_flags & softhca_wqe_flags[i].send)
			wqe->flags |= softhca_wqe_flags[i].wqe;
}

/*
 * Appends @len bytes at @addr to the WQE's inline data, copied now: the
 * caller may reuse its buffers on return.  Returns 0 or EINVAL when the
 * QP's inline size would be passed.
 */
int softhca_wqe_inline_add(const struct softhca_qp *qp,
			   struct softhca_send_wqe *wqe, const void *addr,
			   size_t len)
{
	if (len > qp->max_inline - wqe->inline_len)
		return EINVAL;
	memcpy((char *)(wqe + 1) + wqe->inline_len, addr, len);
	wqe->flags |= SOFTHCA_WQE_INLINE;
	wqe->inline_len += len;
	return 0;
}

void softhca_wqe_sges(struct softhca_sge *sge, const struct ibv_sge *sg,
		      size_t num)
{
	size_t i;

	for (i = 0; i < num; i++)
		sge[i] = (struct softhca_sge){
			.addr = sg[i].addr,
			.length = sg[i].length,
			.lkey = sg[i].lkey,
		};
}

/* A BIND_MW WQE: the window's new rkey, and what it opens onto. */
void softhca_wqe_bind(struct softhca_send_wqe *wqe, uint32_t rkey,
		      const struct ibv_mw_bind_info *info)
{
	wqe->bind.mw_key = rkey;
	wqe->bind.mr_lkey = info->mr ? info->mr->lkey : 0;
	wqe->bind.addr = info->addr;
	wqe->bind.length = info->length;
	wqe->bind.access = info->mw_access_flags;
}

/* An ATOMIC WRITE: its target, and its 8 bytes copied into the header. */
void softhca_wqe_atomic_write(struct softhca_send_wqe *wqe, uint32_t rkey,
			      uint64_t remote_addr, const void *data)
{
	wqe->atomic_write.remote_addr = remote_addr;
	wqe->atomic_write.rkey = rkey;
	memcpy(wqe->atomic_write.data, data, sizeof(wqe->atomic_write.data));
}

static uint32_t send_wqe_ex(const struct ibv_send_wr *wr)
{
	switch (wr->opcode) {
	case IBV_WR_SEND_WITH_IMM:
	case IBV_WR_RDMA_WRITE_WITH_IMM:
		return wr->imm_data;	/* stays big endian */
	case IBV_WR_SEND_WITH_INV:
	case IBV_WR_LOCAL_INV:
		return wr->invalidate_rkey;
	default:
		return 0;
	}
}

static void send_wqe_op(struct softhca_send_wqe *wqe,
			const struct ibv_send_wr *wr, enum ibv_qp_type type)
{
	if (type == IBV_QPT_UD) {
		wqe->ud.ah = to_sah(wr->wr.ud.ah)->num;
		wqe->ud.remote_qpn = wr->wr.ud.remote_qpn;
		wqe->ud.remote_qkey = wr->wr.ud.remote_qkey;
		return;
	}
	switch (wr->opcode) {
	case IBV_WR_RDMA_WRITE:
	case IBV_WR_RDMA_WRITE_WITH_IMM:
	case IBV_WR_RDMA_READ:
		wqe->rdma.remote_addr = wr->wr.rdma.remote_addr;
		wqe->rdma.rkey = wr->wr.rdma.rkey;
		break;
	case IBV_WR_ATOMIC_CMP_AND_SWP:
	case IBV_WR_ATOMIC_FETCH_AND_ADD:
		wqe->atomic.remote_addr = wr->wr.atomic.remote_addr;
		wqe->atomic.compare_add = wr->wr.atomic.compare_add;
		wqe->atomic.swap = wr->wr.atomic.swap;
		wqe->atomic.rkey = wr->wr.atomic.rkey;
		break;
	case IBV_WR_BIND_MW:
		softhca_wqe_bind(wqe, wr->bind_mw.rkey,
				 &wr->bind_mw.bind_info);
		break;
	default:
		break;
	}
}

static int send_wqe_write(struct softhca_qp *qp, struct softhca_send_wqe *wqe,
			  const struct ibv_send_wr *wr)
{
	struct ibv_qp *ibqp = &qp->vqp.qp;
	int i, ret;

	if (!softhca_send_op_ok(ibqp->qp_type, wr->opcode) ||
	    wr->num_sge < 0 || (uint32_t)wr->num_sge > qp->max_send_sge)
		return EINVAL;
	if (ibqp->qp_type == IBV_QPT_UD && !wr->wr.ud.ah)
		return EINVAL;
	/* A type 1 window is bound by ibv_bind_mw, not by a work request. */
	if (wr->opcode == IBV_WR_BIND_MW &&
	    (!wr->bind_mw.mw || wr->bind_mw.mw->type != IBV_MW_TYPE_2))
		return EINVAL;

	softhca_wqe_begin(qp, wqe, wr->wr_id, wr->opcode, wr->send_flags);
	/* Through ibv_post_send, an ATOMIC WRITE's 8 bytes are its one SGE's. */
	if (wr->opcode == IBV_WR_ATOMIC_WRITE) {
		if (wr->num_sge != 1 ||
		    wr->sg_list[0].length != sizeof(wqe->atomic_write.data))
			return EINVAL;
		softhca_wqe_atomic_write(wqe, wr->wr.rdma.rkey,
					 wr->wr.rdma.remote_addr,
					 (void *)(uintptr_t)wr->sg_list[0].addr);
		return 0;
	}
	wqe->ex = send_wqe_ex(wr);
	send_wqe_op(wqe, wr, ibqp->qp_type);
	if (!(wr->send_flags & IBV_SEND_INLINE)) {
		wqe->num_sge = wr->num_sge;
		softhca_wqe_sges((struct softhca_sge *)(wqe + 1), wr->sg_list,
				 wr->num_sge);
		return 0;
	}
	for (i = 0; i < wr->num_sge; i++) {
		ret = softhca_wqe_inline_add(qp, wqe,
				(void *)(uintptr_t)wr->sg_list[i].addr,
				wr->sg_list[i].length);
		if (ret)
			return ret;
	}
	return 0;
}

/*
 * A send queue asked for a doorbell: marks its QP in the process's
 * doorbell.  Returns whether the process's worker runs, and so will find
 * the mark with no system call.
 */
static int ctx_worker_runs(const struct softhca_qp *qp)
{
	struct softhca_ctx_doorbell *db = to_sctx(qp->vqp.qp.context)->db;
	uint32_t slot = qp->db_slot;

	if (slot == SOFTHCA_NO_SLOT)
		return 0;
	__atomic_fetch_or(&db->pending[slot / 32], 1u << (slot % 32),
			  __ATOMIC_RELAXED);
	/* The bit is set before doorbell is read: see the ABI. */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	return !__atomic_load_n(&db->doorbell, __ATOMIC_RELAXED);
}

/*
 * After @n send WQEs were published (and the send lock dropped): rings the
 * doorbell if the kernel asked for one, and its process's worker does not
 * run.  Returns 0 or an errno value.
 */
int softhca_sq_kick(struct softhca_qp *qp, uint32_t n)
{
	struct softhca_ring *sq = &qp->sq;
	struct ibv_send_wr *none;
	int waits = polled_since_post;

	polled_since_post = 0;
	if (!n || !ring_doorbell_wanted(sq) || ctx_worker_runs(qp))
		return 0;
	/* Read by the kernel in the system call. */
	__atomic_store_n(&sq->ctrl->poster_waits, waits, __ATOMIC_RELAXED);
	/* The doorbell: an empty WR list kicks the engine. */
	return ibv_cmd_post_send(&qp->vqp.qp, NULL, &none);
}

int softhca_post_send(struct ibv_qp *ibqp, struct ibv_send_wr *wr,
		      struct ibv_send_wr **bad_wr)
{
	struct softhca_qp *qp = to_sqp(ibqp);
	struct softhca_ring *sq = &qp->sq;
	uint32_t room, n = 0;
	int ret = 0, db;

	/* The IBA takes sends from RTS on (and flushes them in errors). */
	if (ibqp->state < IBV_QPS_RTS) {
		*bad_wr = wr;
		return EINVAL;
	}
	pthread_spin_lock(&qp->sq_lock);
	room = ring_room(sq);
	for (; wr; wr = wr->next, n++) {
		if (n == room) {
			ret = ENOMEM;
			break;
		}
		ret = send_wqe_write(qp, ring_entry(sq, sq->index + n), wr);
		if (ret)
			break;
	}
	if (n)
		ring_produced(sq, n);
	pthread_spin_unlock(&qp->sq_lock);
	if (ret)
		*bad_wr = wr;
	db = softhca_sq_kick(qp, n);
	return ret ? ret : db;
}

/*
 * ibv_bind_mw, for type 1 windows: a BIND_MW WQE like the one a type 2
 * window's post_send makes; the window's new rkey is ours to choose, and
 * it is the window's from the post on.
 */
int softhca_bind_mw(struct ibv_qp *ibqp, struct ibv_mw *mw,
		    struct ibv_mw_bind *mw_bind)
{
	struct softhca_qp *qp = to_sqp(ibqp);
	struct softhca_ring *sq = &qp->sq;
	uint32_t rkey = ibv_inc_rkey(mw->rkey);
	struct softhca_send_wqe *wqe;
	uint32_t n = 0;
	int ret = 0;

	if (ibqp->state < IBV_QPS_RTS ||
	    !softhca_send_op_ok(ibqp->qp_type, IBV_WR_BIND_MW))
		return EINVAL;
	pthread_spin_lock(&qp->sq_lock);
	if (ring_room(sq)) {
		wqe = ring_entry(sq, sq->index);
		softhca_wqe_begin(qp, wqe, mw_bind->wr_id, IBV_WR_BIND_MW,
				  mw_bind->send_flags);
		softhca_wqe_bind(wqe, rkey, &mw_bind->bind_info);
		ring_produced(sq, ++n);
	} else {
		ret = ENOMEM;
	}
	pthread_spin_unlock(&qp->sq_lock);
	if (ret)
		return ret;
	mw->rkey = rkey;
	return softhca_sq_kick(qp, n);
}

/* --- receive queue and SRQ ----------------------------------------- */

/*
 * Writes a chain of receive WRs into @ring.  Returns 0 or an errno value,
 * with *bad_wr at the first WR not posted.
 */
static int recv_ring_post(struct softhca_ring *ring, pthread_spinlock_t *lock,
			  uint32_t max_sge, struct ibv_recv_wr *wr,
			  struct ibv_recv_wr **bad_wr)
{
	struct softhca_recv_wqe *wqe;
	uint32_t room, n = 0;
	int ret = 0;

	pthread_spin_lock(lock);
	room = ring_room(ring);
	for (; wr; wr = wr->next, n++) {
		if (n == room) {
			ret = ENOMEM;
			break;
		}
		if (wr->num_sge < 0 || (uint32_t)wr->num_sge > max_sge) {
			ret = EINVAL;
			break;
		}
		wqe = ring_entry(ring, ring->index + n);
		*wqe = (struct softhca_recv_wqe){
			.wr_id = wr->wr_id,
			.num_sge = wr->num_sge,
		};
		softhca_wqe_sges((struct softhca_sge *)(wqe + 1),
				 wr->sg_list, wr->num_sge);
	}
	if (n)
		ring_produced(ring, n);
	pthread_spin_unlock(lock);
	if (ret)
		*bad_wr = wr;
	return ret;
}

int softhca_post_recv(struct ibv_qp *ibqp, struct ibv_recv_wr *wr,
		      struct ibv_recv_wr **bad_wr)
{
	struct softhca_qp *qp = to_sqp(ibqp);
	struct ibv_recv_wr *none;
	int ret, db;

	if (ibqp->state == IBV_QPS_RESET || ibqp->srq || !qp->rq.map) {
		*bad_wr = wr;
		return EINVAL;
	}
	ret = recv_ring_post(&qp->rq, &qp->rq_lock, qp->max_recv_sge, wr,
			     bad_wr);
	/* Set only while a QP in error has flushed its receive queue. */
	if ((!ret || *bad_wr != wr) && ring_doorbell_wanted(&qp->rq)) {
		db = ibv_cmd_post_recv(ibqp, NULL, &none);
		if (db && !ret)
			ret = db;
	}
	return ret;
}

/* An SRQ needs no doorbell: only arriving messages take its WQEs. */
int softhca_post_srq_recv(struct ibv_srq *ibsrq, struct ibv_recv_wr *wr,
			  struct ibv_recv_wr **bad_wr)
{
	struct softhca_srq *srq = to_ssrq(ibsrq);

	return recv_ring_post(&srq->ring, &srq->lock, srq->max_sge, wr,
			      bad_wr);
}
