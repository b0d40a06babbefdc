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
 * takes what a streaming thread goes on posting.
 */

#include <errno.h>
#include <string.h>
#include <sys/mman.h>

#include "softhca.h"

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

static void *ring_entry(const struct softhca_ring *ring, uint32_t index)
{
	return (char *)ring->entries +
	       (size_t)(index & (ring->num - 1)) * ring->entry_size;
}

/* Free entries for this side to produce into. */
static uint32_t ring_room(const struct softhca_ring *ring)
{
	/* Acquire: a slot is reused only after the kernel read it. */
	uint32_t used = ring->index -
			__atomic_load_n(&ring->ctrl->consumer, __ATOMIC_ACQUIRE);

	return used <= ring->num ? ring->num - used : 0;
}

static void ring_produced(struct softhca_ring *ring, uint32_t n)
{
	ring->index += n;
	/* Release: the entries are written before the index publishes them. */
	__atomic_store_n(&ring->ctrl->producer, ring->index, __ATOMIC_RELEASE);
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

static void cqe_to_wc(const struct softhca_cqe *cqe, struct ibv_wc *wc)
{
	size_t i;

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
	};
	if (cqe->flags & SOFTHCA_CQE_INV)
		wc->invalidated_rkey = cqe->ex;
	else
		wc->imm_data = cqe->ex;	/* big endian in the CQE already */
	for (i = 0; i < sizeof(softhca_wc_flags) / sizeof(softhca_wc_flags[0]);
	     i++)
		if (cqe->flags & softhca_wc_flags[i].cqe)
			wc->wc_flags |= softhca_wc_flags[i].wc;
}

int softhca_poll_cq(struct ibv_cq *ibcq, int num_entries, struct ibv_wc *wc)
{
	struct softhca_cq *cq = to_scq(ibcq);
	struct softhca_ring *ring = &cq->ring;
	uint32_t avail;
	int n;

	pthread_spin_lock(&cq->lock);
	/* Acquire: the CQEs are read after the index that published them. */
	avail = __atomic_load_n(&ring->ctrl->producer, __ATOMIC_ACQUIRE) -
		ring->index;
	if (avail > ring->num)
		avail = 0;
	for (n = 0; n < num_entries && (uint32_t)n < avail; n++)
		cqe_to_wc(ring_entry(ring, ring->index + n), &wc[n]);
	ring->index += n;
	if (n)
		polled_since_post = 1;
	/* Release: the CQEs are read before their slots are freed. */
	__atomic_store_n(&ring->ctrl->consumer, ring->index, __ATOMIC_RELEASE);
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
	ring->index += dropped;
	__atomic_store_n(&ring->ctrl->consumer, ring->index, __ATOMIC_RELEASE);
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
static int send_op_ok(const struct ibv_qp *ibqp, enum ibv_wr_opcode op)
{
	switch (op) {
	case IBV_WR_SEND:
	case IBV_WR_SEND_WITH_IMM:
		return 1;
	case IBV_WR_RDMA_WRITE:
	case IBV_WR_RDMA_WRITE_WITH_IMM:
	case IBV_WR_LOCAL_INV:
		return ibqp->qp_type == IBV_QPT_RC || ibqp->qp_type == IBV_QPT_UC;
	case IBV_WR_RDMA_READ:
	case IBV_WR_ATOMIC_CMP_AND_SWP:
	case IBV_WR_ATOMIC_FETCH_AND_ADD:
	case IBV_WR_SEND_WITH_INV:
		return ibqp->qp_type == IBV_QPT_RC;
	default:
		return 0;
	}
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
	default:
		break;
	}
}

/* Copies inline data now: the caller may reuse its buffers on return. */
static int send_wqe_inline(struct softhca_qp *qp,
			   struct softhca_send_wqe *wqe,
			   const struct ibv_send_wr *wr)
{
	char *data = (char *)(wqe + 1);
	uint32_t len = 0;
	int i;

	for (i = 0; i < wr->num_sge; i++) {
		if (wr->sg_list[i].length > qp->max_inline - len)
			return EINVAL;
		memcpy(data + len, (void *)(uintptr_t)wr->sg_list[i].addr,
		       wr->sg_list[i].length);
		len += wr->sg_list[i].length;
	}
	wqe->flags |= SOFTHCA_WQE_INLINE;
	wqe->inline_len = len;
	return 0;
}

static void wqe_sges(struct softhca_sge *sge, const struct ibv_sge *sg,
		     int num)
{
	int i;

	for (i = 0; i < num; i++)
		sge[i] = (struct softhca_sge){
			.addr = sg[i].addr,
			.length = sg[i].length,
			.lkey = sg[i].lkey,
		};
}

static int send_wqe_write(struct softhca_qp *qp, struct softhca_send_wqe *wqe,
			  const struct ibv_send_wr *wr)
{
	struct ibv_qp *ibqp = &qp->vqp.qp;

	if (!send_op_ok(ibqp, wr->opcode) || wr->num_sge < 0 ||
	    (uint32_t)wr->num_sge > qp->max_send_sge)
		return EINVAL;
	if (ibqp->qp_type == IBV_QPT_UD && !wr->wr.ud.ah)
		return EINVAL;

	*wqe = (struct softhca_send_wqe){
		.wr_id = wr->wr_id,
		.opcode = wr->opcode,
		.num_sge = wr->num_sge,
		.ex = send_wqe_ex(wr),
	};
	if (wr->send_flags & IBV_SEND_SIGNALED || qp->sq_sig_all)
		wqe->flags |= SOFTHCA_WQE_SIGNALED;
	if (wr->send_flags & IBV_SEND_SOLICITED)
		wqe->flags |= SOFTHCA_WQE_SOLICITED;
	if (wr->send_flags & IBV_SEND_FENCE)
		wqe->flags |= SOFTHCA_WQE_FENCE;
	send_wqe_op(wqe, wr, ibqp->qp_type);
	if (wr->send_flags & IBV_SEND_INLINE)
		return send_wqe_inline(qp, wqe, wr);
	wqe_sges((struct softhca_sge *)(wqe + 1), wr->sg_list, wr->num_sge);
	return 0;
}

int softhca_post_send(struct ibv_qp *ibqp, struct ibv_send_wr *wr,
		      struct ibv_send_wr **bad_wr)
{
	struct softhca_qp *qp = to_sqp(ibqp);
	struct softhca_ring *sq = &qp->sq;
	uint32_t room, n = 0;
	int ret = 0, db, waits;

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
	waits = polled_since_post;
	polled_since_post = 0;
	if (n && ring_doorbell_wanted(sq)) {
		/* The doorbell: an empty WR list kicks the engine. */
		struct ibv_send_wr *none;

		/* Read by the kernel in the system call. */
		__atomic_store_n(&sq->ctrl->poster_waits, waits,
				 __ATOMIC_RELAXED);
		db = ibv_cmd_post_send(ibqp, NULL, &none);
		if (db && !ret)
			ret = db;
	}
	return ret;
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
		wqe_sges((struct softhca_sge *)(wqe + 1), wr->sg_list,
			 wr->num_sge);
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
