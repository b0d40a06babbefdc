// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * peer-verbs [--flush] [--no-atomic-write] [--rxe NAME] DEVICE GID_INDEX
 * PEER PEER_GID_INDEX:
 * verbs between two devices, over the wire that joins them, each device
 * in turn the requester and the other the responder: RC QPs, one on each
 * device, connected to each other, in one process.  With softhca on one
 * side and rdma_rxe on the other, both directions of each exchange are
 * those of two implementations.
 * - ATOMIC WRITE (IBA 1.5; --no-atomic-write leaves it out, for a peer
 *   that has none): two in one ibv_wr_* batch store 16 bytes in the
 *   responder's memory, whole, and nothing beside them; the completions
 *   are ATOMIC WRITEs of 8 bytes.  A target not 8-byte aligned is refused
 *   (remote invalid request) and writes nothing.
 * - Memory windows, bound by the responder onto part of its MR: a type 1
 *   window (ibv_bind_mw) takes the requester's WRITE and READ through its
 *   rkey, the data compared, and refuses a WRITE past its end; a type 2
 *   window (ibv_wr_bind_mw) takes a WRITE, then the requester's
 *   SEND_WITH_INV of its rkey invalidates it (the responder's receive
 *   completion says so), and a WRITE through that rkey is refused.
 * - FLUSH (--flush, kernels from 6.2 on), softhca the requester:
 *   rdma-core 44 has no verb to post one, so it goes through softhca's
 *   rings from a bare QP (raw.h) to a QP of the peer allowing it, onto an
 *   MR allowing it: a WRITE, then a FLUSH of its range with global
 *   visibility, complete, and the bytes are there; a persistent FLUSH is
 *   refused (remote access error: neither side has persistent memory).
 * - A process rewriting its send ring under a WQE already on the wire
 *   (softhca the requester, from a bare QP): a three-packet SEND that the
 *   responder, with no receive posted, answers with RNR NAKs; once resent,
 *   its slot is rewritten (into an inline SEND of 0 bytes, into a READ,
 *   its SGE moved, random bytes); then the responder posts a receive, and
 *   the message arrives as first posted, and completes.
 * A refusal ends a pair of QPs: the next check takes a fresh one.
 * rdma_rxe (--rxe names its device) as the responder has two faults
 * these checks show, reported as
 * TAP TODOs, not failures: it checks a window's MR's bounds, not the
 * window's (rxe_resp.c, check_rkey()), and its user CQEs carry the
 * kernel's IB_WC_WITH_INVALIDATE bit, user space's IBV_WC_IP_CSUM_OK.
 * TAP output; exit 0 when every check passed.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "rdma-core-private.h"
#include "raw.h"
#include "tap.h"

#define BUF	8192
#define TARGET	512	/* ATOMIC WRITE's, in the responder's buffer */
#define WIN	4096	/* the windows' MR: the buffer's second half */
#define SRC	1024	/* the requester's bytes to WRITE, and READ into */

#define OPS	(IBV_QP_EX_WITH_RDMA_WRITE | IBV_QP_EX_WITH_RDMA_READ | \
		 IBV_QP_EX_WITH_SEND_WITH_INV | IBV_QP_EX_WITH_BIND_MW |  \
		 IBV_QP_EX_WITH_LOCAL_INV)

struct side {
	const char *name;
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_mr *mr;
	struct ibv_mr *wmr;	/* what windows bind to */
	struct ibv_qp *qp;
	unsigned char *buf;
	union ibv_gid gid;
	int gid_index;
	int rxe;	/* rdma_rxe, with its known faults */
};

static uint64_t send_ops = OPS | IBV_QP_EX_WITH_ATOMIC_WRITE;

static int side_open(struct side *s, struct ibv_device **list,
		     const char *name, const char *gid_index)
{
	s->name = name;
	s->gid_index = atoi(gid_index);
	s->ctx = tap_open(list, name);
	if (!s->ctx || ibv_query_gid(s->ctx, 1, s->gid_index, &s->gid))
		return -1;
	s->pd = ibv_alloc_pd(s->ctx);
	s->cq = ibv_create_cq(s->ctx, 16, NULL, NULL, 0);
	s->buf = aligned_alloc(4096, BUF);
	if (!s->pd || !s->cq || !s->buf)
		return -1;
	s->mr = ibv_reg_mr(s->pd, s->buf, WIN, IBV_ACCESS_LOCAL_WRITE |
			   IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ);
	s->wmr = ibv_reg_mr(s->pd, s->buf + WIN, BUF - WIN,
			    IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_MW_BIND);
	return s->mr && s->wmr ? 0 : -1;
}

static struct ibv_qp *qp_new(struct side *s)
{
	struct ibv_qp_init_attr_ex a = {
		.qp_type = IBV_QPT_RC,
		.send_cq = s->cq,
		.recv_cq = s->cq,
		.cap = { .max_send_wr = 8, .max_recv_wr = 2,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.comp_mask = IBV_QP_INIT_ATTR_PD |
			     IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
		.pd = s->pd,
		.send_ops_flags = send_ops,
	};

	return ibv_create_qp_ex(s->ctx, &a);
}

static void pair_down(struct side *a, struct side *b)
{
	if (a->qp)
		ibv_destroy_qp(a->qp);
	if (b->qp)
		ibv_destroy_qp(b->qp);
	a->qp = NULL;
	b->qp = NULL;
}

/* A fresh QP on each side, connected to each other; or a failed check. */
static int pair_up(struct side *a, struct side *b)
{
	pair_down(a, b);
	a->qp = qp_new(a);
	b->qp = qp_new(b);
	if (a->qp && b->qp &&
	    !tap_rc_connect(a->qp, b->qp->qp_num, &b->gid, a->gid_index) &&
	    !tap_rc_connect(b->qp, a->qp->qp_num, &a->gid, b->gid_index))
		return 0;
	tap(0, "a fresh pair of connected QPs", strerror(errno));
	return -1;
}

/* @n completions of @s's CQ into @wc, within 10 s. */
static int poll_n(struct side *s, struct ibv_wc *wc, int n)
{
	time_t end = time(NULL) + 10;
	int got = 0, r;

	while (got < n && time(NULL) <= end) {
		r = ibv_poll_cq(s->cq, n - got, wc + got);
		if (r < 0)
			return -1;
		got += r;
	}
	return got == n ? 0 : -1;
}

/* "REQ to RESP: WHAT", for a check's name. */
static const char *named(const struct side *req, const struct side *resp,
			 const char *what)
{
	static char name[192];

	snprintf(name, sizeof(name), "%s to %s: %s", req->name, resp->name,
		 what);
	return name;
}

/* A completion as a check's detail. */
static const char *wc_str(int polled, const struct ibv_wc *wc)
{
	static char detail[96];

	if (!polled)
		return "no completion";
	snprintf(detail, sizeof(detail), "wr_id %llu, %s, opcode %d, %u bytes",
		 (unsigned long long)wc->wr_id, ibv_wc_status_str(wc->status),
		 wc->opcode, wc->byte_len);
	return detail;
}

static void fill(unsigned char *p, size_t len, unsigned int seed)
{
	size_t i;

	for (i = 0; i < len; i++)
		p[i] = (unsigned char)(seed + i * 7);
}

/* --- ATOMIC WRITE ------------------------------------------------------ */

/* Two ATOMIC WRITEs in one batch: 16 bytes at the target. */
static void aw_stores(struct side *req, struct side *resp)
{
	struct ibv_qp_ex *x = ibv_qp_to_qp_ex(req->qp);
	uint64_t raddr = (uintptr_t)resp->buf + TARGET;
	unsigned char want[24], val[2][8];
	struct ibv_wc wc[2];
	int i, ok;

	fill(val[0], 16, 0x10);
	memset(resp->buf + TARGET, 0x5a, 24);
	memcpy(want, val, 16);
	memset(want + 16, 0x5a, 8);
	ibv_wr_start(x);
	x->wr_flags = IBV_SEND_SIGNALED;
	for (i = 0; i < 2; i++) {
		x->wr_id = i + 1;
		ibv_wr_atomic_write(x, resp->mr->rkey, raddr + 8 * i, val[i]);
	}
	ok = !ibv_wr_complete(x) && !poll_n(req, wc, 2);
	for (i = 0; i < 2; i++)
		tap(ok && wc[i].wr_id == (uint64_t)i + 1 &&
		    wc[i].status == IBV_WC_SUCCESS &&
		    wc[i].opcode == IBV_WC_ATOMIC_WRITE && wc[i].byte_len == 8,
		    named(req, resp, i ? "the second ATOMIC WRITE completes" :
				     "the first ATOMIC WRITE completes"),
		    wc_str(ok, &wc[i]));
	tap(!memcmp(resp->buf + TARGET, want, sizeof(want)),
	    named(req, resp, "16 bytes landed, nothing past them"), NULL);
}

/* A target 4 bytes off alignment: refused, nothing written. */
static void aw_misaligned(struct side *req, struct side *resp)
{
	struct ibv_qp_ex *x = ibv_qp_to_qp_ex(req->qp);
	static const unsigned char val[8] = { 1, 2, 3, 4, 5, 6, 7, 8 };
	unsigned char before[16];
	struct ibv_wc wc;
	int ok;

	memcpy(before, resp->buf + TARGET, sizeof(before));
	ibv_wr_start(x);
	x->wr_id = 3;
	x->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_atomic_write(x, resp->mr->rkey,
			    (uintptr_t)resp->buf + TARGET + 4, val);
	ok = !ibv_wr_complete(x) && !poll_n(req, &wc, 1);
	tap(ok && wc.status == IBV_WC_REM_INV_REQ_ERR,
	    named(req, resp, "ATOMIC WRITE not 8-byte aligned: remote invalid request"),
	    wc_str(ok, &wc));
	tap(!memcmp(resp->buf + TARGET, before, sizeof(before)),
	    named(req, resp, "misaligned, nothing written"), NULL);
}

/* --- memory windows ---------------------------------------------------- */

/* One signaled WRITE or READ of @len bytes at @raddr under @rkey. */
static int rdma(struct side *req, enum ibv_wr_opcode op, uint32_t rkey,
		uint64_t raddr, uint32_t len, struct ibv_wc *wc)
{
	struct ibv_qp_ex *x = ibv_qp_to_qp_ex(req->qp);

	ibv_wr_start(x);
	x->wr_id = 10 + op;
	x->wr_flags = IBV_SEND_SIGNALED;
	if (op == IBV_WR_RDMA_READ)
		ibv_wr_rdma_read(x, rkey, raddr);
	else
		ibv_wr_rdma_write(x, rkey, raddr);
	ibv_wr_set_sge(x, req->mr->lkey, (uintptr_t)req->buf + SRC, len);
	return !ibv_wr_complete(x) && !poll_n(req, wc, 1);
}

/* The responder's type 1 window onto 512 bytes of its MR. */
static struct ibv_mw *window1(struct side *resp, uint64_t *addr)
{
	struct ibv_mw_bind bind = {
		.wr_id = 20, .send_flags = IBV_SEND_SIGNALED,
		.bind_info = { .mr = resp->wmr,
			       .addr = (uintptr_t)resp->buf + WIN + 256,
			       .length = 512,
			       .mw_access_flags = IBV_ACCESS_REMOTE_WRITE |
						  IBV_ACCESS_REMOTE_READ },
	};
	struct ibv_mw *mw = ibv_alloc_mw(resp->pd, IBV_MW_TYPE_1);
	struct ibv_wc wc;

	*addr = bind.bind_info.addr;
	if (mw && !ibv_bind_mw(resp->qp, mw, &bind) && !poll_n(resp, &wc, 1) &&
	    wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_BIND_MW)
		return mw;
	if (mw)
		ibv_dealloc_mw(mw);
	return NULL;
}

/* The responder's type 2 window onto 512 bytes of its MR, via its QP. */
static struct ibv_mw *window2(struct side *resp, uint64_t *addr)
{
	struct ibv_qp_ex *x = ibv_qp_to_qp_ex(resp->qp);
	struct ibv_mw_bind_info info = {
		.mr = resp->wmr, .addr = (uintptr_t)resp->buf + WIN + 1024,
		.length = 512, .mw_access_flags = IBV_ACCESS_REMOTE_WRITE,
	};
	struct ibv_mw *mw = ibv_alloc_mw(resp->pd, IBV_MW_TYPE_2);
	struct ibv_wc wc;

	*addr = info.addr;
	if (!mw)
		return NULL;
	ibv_wr_start(x);
	x->wr_id = 30;
	x->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_bind_mw(x, mw, ibv_inc_rkey(mw->rkey), &info);
	if (!ibv_wr_complete(x) && !poll_n(resp, &wc, 1) &&
	    wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_BIND_MW) {
		mw->rkey = ibv_inc_rkey(mw->rkey);
		return mw;
	}
	ibv_dealloc_mw(mw);
	return NULL;
}

/* A fresh pair, and a window of @type the responder bound, or NULL. */
static struct ibv_mw *window_up(struct side *req, struct side *resp,
				enum ibv_mw_type type, uint64_t *addr)
{
	struct ibv_mw *mw;

	if (pair_up(req, resp))
		return NULL;
	mw = type == IBV_MW_TYPE_1 ? window1(resp, addr) : window2(resp, addr);
	tap(mw != NULL, named(req, resp, type == IBV_MW_TYPE_1 ?
			      "the responder binds a type 1 window" :
			      "the responder binds a type 2 window"), NULL);
	return mw;
}

static void window_type1(struct side *req, struct side *resp)
{
	unsigned char *at;
	struct ibv_mw *mw;
	struct ibv_wc wc;
	uint64_t addr;
	int ok;

	mw = window_up(req, resp, IBV_MW_TYPE_1, &addr);
	if (!mw)
		return;
	at = resp->buf + WIN + 256 + 100;
	fill(req->buf + SRC, 64, 3);
	memset(at, 0, 64);
	ok = rdma(req, IBV_WR_RDMA_WRITE, mw->rkey, addr + 100, 64, &wc);
	tap(ok && wc.status == IBV_WC_SUCCESS && !memcmp(at, req->buf + SRC, 64),
	    named(req, resp, "a WRITE through a type 1 window lands, data compared"),
	    wc_str(ok, &wc));
	fill(at, 64, 9);
	ok = rdma(req, IBV_WR_RDMA_READ, mw->rkey, addr + 100, 64, &wc);
	tap(ok && wc.status == IBV_WC_SUCCESS && !memcmp(at, req->buf + SRC, 64),
	    named(req, resp, "a READ through it, data compared"),
	    wc_str(ok, &wc));
	ok = rdma(req, IBV_WR_RDMA_WRITE, mw->rkey, addr + 512 - 32, 64, &wc);
	tap_todo(ok && wc.status == IBV_WC_REM_ACCESS_ERR,
		 named(req, resp, "a WRITE past its end: remote access error"),
		 wc_str(ok, &wc), resp->rxe ?
		 "rdma_rxe checks the MR's bounds, not the window's" : NULL);
	pair_down(req, resp);
	tap(!ibv_dealloc_mw(mw), named(req, resp, "the type 1 window deallocated"),
	    NULL);
}

/* A SEND_WITH_INV of @rkey into a receive the responder posted. */
static void send_inv(struct side *req, struct side *resp, uint32_t rkey)
{
	struct ibv_qp_ex *x = ibv_qp_to_qp_ex(req->qp);
	struct ibv_sge sge = { .addr = (uintptr_t)resp->buf, .length = 64,
			       .lkey = resp->mr->lkey };
	struct ibv_recv_wr rwr = { .wr_id = 40, .sg_list = &sge,
				   .num_sge = 1 }, *bad;
	struct ibv_wc wc, rwc;
	char detail[160];
	int ok;

	ibv_wr_start(x);
	x->wr_id = 41;
	x->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_send_inv(x, rkey);
	ibv_wr_set_sge(x, req->mr->lkey, (uintptr_t)req->buf + SRC, 16);
	ok = !ibv_post_recv(resp->qp, &rwr, &bad) && !ibv_wr_complete(x) &&
	     !poll_n(req, &wc, 1) && !poll_n(resp, &rwc, 1);
	snprintf(detail, sizeof(detail), "%s; wc_flags %#x, rkey %#x of %#x",
		 wc_str(ok, &rwc), ok ? rwc.wc_flags : 0,
		 ok ? rwc.invalidated_rkey : 0, rkey);
	tap(ok && wc.status == IBV_WC_SUCCESS && rwc.status == IBV_WC_SUCCESS,
	    named(req, resp, "SEND_WITH_INV of the window's rkey: received"),
	    detail);
	tap_todo(ok && rwc.wc_flags & IBV_WC_WITH_INV &&
		 rwc.invalidated_rkey == rkey,
		 named(req, resp, "the receive says which rkey it invalidated"),
		 detail, resp->rxe ?
		 "rdma_rxe flags it IBV_WC_IP_CSUM_OK, the kernel's bit" : NULL);
}

static void window_type2(struct side *req, struct side *resp)
{
	struct ibv_mw *mw;
	struct ibv_wc wc;
	uint64_t addr;
	int ok;

	mw = window_up(req, resp, IBV_MW_TYPE_2, &addr);
	if (!mw)
		return;
	fill(req->buf + SRC, 64, 5);
	memset(resp->buf + WIN + 1024, 0, 64);
	ok = rdma(req, IBV_WR_RDMA_WRITE, mw->rkey, addr, 64, &wc);
	tap(ok && wc.status == IBV_WC_SUCCESS &&
	    !memcmp(resp->buf + WIN + 1024, req->buf + SRC, 64),
	    named(req, resp, "a WRITE through a type 2 window lands, data compared"),
	    wc_str(ok, &wc));
	send_inv(req, resp, mw->rkey);
	ok = rdma(req, IBV_WR_RDMA_WRITE, mw->rkey, addr, 64, &wc);
	tap(ok && wc.status == IBV_WC_REM_ACCESS_ERR,
	    named(req, resp, "invalidated, its rkey: remote access error"),
	    wc_str(ok, &wc));
	pair_down(req, resp);
	tap(!ibv_dealloc_mw(mw), named(req, resp, "the type 2 window deallocated"),
	    NULL);
}

/* ib_user_ioctl_verbs.h's and ib_user_verbs.h's, since 6.2. */
#define ACCESS_FLUSH_GLOBAL	(1 << 8)
#define ACCESS_FLUSH_PERSISTENT	(1 << 9)
#define WR_FLUSH		14
#define FLUSH_GLOBAL		1
#define FLUSH_PERSISTENT	2

/* A requester QP of softhca's own, bypassing the provider (raw.h). */
struct raw_req {
	struct ibv_cq cq;
	struct ring cqr;
	struct ibv_qp qp;
	struct ring sq, rq;
	int seen[4];
};

static void raw_req_down(struct raw_req *r)
{
	if (r->qp.context)
		ibv_cmd_destroy_qp(&r->qp);
	ring_unmap(&r->sq);
	ring_unmap(&r->rq);
	if (r->cq.context)
		ibv_cmd_destroy_cq(&r->cq);
	ring_unmap(&r->cqr);
	memset(r, 0, sizeof(*r));
}

/*
 * @r on @req, connected to a fresh QP of @resp; it resends for ever after
 * RNR NAKs.
 */
static int raw_req_up(struct raw_req *r, struct side *req,
		      struct side *resp)
{
	struct ibv_qp_init_attr attr = {
		.send_cq = &r->cq, .recv_cq = &r->cq, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 4, .max_recv_wr = 1,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	int err;

	memset(r, 0, sizeof(*r));
	memset(r->seen, 0xff, sizeof(r->seen));
	pair_down(req, resp);
	resp->qp = qp_new(resp);
	if (!resp->qp)
		return errno;
	err = raw_cq_create(req->ctx, 8, &r->cq, &r->cqr);
	err = err ?: raw_qp_create(req->pd, &attr, &r->qp, &r->sq, &r->rq);
	err = err ?: raw_qp_connect_to(&r->qp, raw_qp_modify,
				       resp->qp->qp_num, req->gid_index,
				       &resp->gid, 7);
	if (!err && tap_rc_connect(resp->qp, r->qp.qp_num, &req->gid,
				   resp->gid_index))
		err = errno;
	if (err)
		raw_req_down(r);
	return err;
}

/* Waits up to 10 s for the completion of @wr_id; its status or -1. */
static int raw_req_wait(struct raw_req *r, uint64_t wr_id)
{
	int tries;

	for (tries = 0; tries < 10000 && r->seen[wr_id] < 0; tries++) {
		cq_ring_poll(&r->cqr, r->seen, 4);
		if (r->seen[wr_id] < 0)
			usleep(1000);
	}
	return r->seen[wr_id];
}

/* Posts WQE @wr_id, written at the producer index. */
static void raw_req_post(struct raw_req *r, uint64_t wr_id)
{
	r->seen[wr_id] = -1;
	ring_publish(&r->sq, 1);
	raw_doorbell(&r->qp);
}

/* Posts WQE @wr_id and waits for it. */
static int raw_req_run(struct raw_req *r, uint64_t wr_id)
{
	raw_req_post(r, wr_id);
	return raw_req_wait(r, wr_id);
}

static struct softhca_send_wqe *raw_req_wqe(struct raw_req *r,
					    uint64_t wr_id, uint8_t opcode)
{
	struct softhca_send_wqe *w = ring_slot(&r->sq, r->sq.index);

	*w = (struct softhca_send_wqe){
		.wr_id = wr_id, .opcode = opcode,
		.flags = SOFTHCA_WQE_SIGNALED,
	};
	return w;
}

static const char *status_str(int st)
{
	return st < 0 ? "no completion" : ibv_wc_status_str(st);
}

/* @type's FLUSH of the @len bytes at @off of @resp's flushable MR. */
static int raw_flush(struct raw_req *r, struct side *resp,
		     struct ibv_mr *fmr, uint8_t type)
{
	struct softhca_send_wqe *w = raw_req_wqe(r, 2, WR_FLUSH);

	w->flush.remote_addr = (uintptr_t)resp->buf + SRC;
	w->flush.rkey = fmr->rkey;
	w->flush.length = 64;
	w->flush.type = type;
	return raw_req_run(r, 2);
}

static void flush_checks(struct side *req, struct side *resp)
{
	struct ibv_qp_attr a = {
		.qp_access_flags = IBV_ACCESS_REMOTE_WRITE |
				   ACCESS_FLUSH_GLOBAL |
				   ACCESS_FLUSH_PERSISTENT,
	};
	struct softhca_send_wqe *w;
	struct softhca_sge *sge;
	struct raw_req r;
	struct ibv_mr *fmr;
	int err, st;

	fmr = ibv_reg_mr(resp->pd, resp->buf, WIN, IBV_ACCESS_LOCAL_WRITE |
			 IBV_ACCESS_REMOTE_WRITE | ACCESS_FLUSH_GLOBAL);
	err = fmr ? raw_req_up(&r, req, resp) : errno;
	if (!err && ibv_modify_qp(resp->qp, &a, IBV_QP_ACCESS_FLAGS)) {
		err = errno;
		raw_req_down(&r);
	}
	tap(!err, named(req, resp, "an MR and a QP allowing FLUSH"),
	    err ? strerror(err) : NULL);
	if (err)
		goto out;
	fill(req->buf + SRC, 64, 61);
	memset(resp->buf + SRC, 0, 64);
	w = raw_req_wqe(&r, 1, IBV_WR_RDMA_WRITE);
	w->num_sge = 1;
	w->rdma.remote_addr = (uintptr_t)resp->buf + SRC;
	w->rdma.rkey = fmr->rkey;
	sge = (struct softhca_sge *)(w + 1);
	*sge = (struct softhca_sge){ .addr = (uintptr_t)req->buf + SRC,
				     .length = 64, .lkey = req->mr->lkey };
	st = raw_req_run(&r, 1);
	tap(st == IBV_WC_SUCCESS, named(req, resp, "a WRITE"), status_str(st));
	st = raw_flush(&r, resp, fmr, FLUSH_GLOBAL);
	tap(st == IBV_WC_SUCCESS && !memcmp(resp->buf + SRC, req->buf + SRC, 64),
	    named(req, resp, "a FLUSH of its range, global visibility: the bytes are there"),
	    status_str(st));
	st = raw_flush(&r, resp, fmr, FLUSH_PERSISTENT);
	tap(st == IBV_WC_REM_ACCESS_ERR,
	    named(req, resp, "a persistent FLUSH is refused"), status_str(st));
	raw_req_down(&r);
out:
	if (fmr)
		ibv_dereg_mr(fmr);
}

/* --- the ring rewritten under an in-flight WQE ------------------------- */

#define ATTACK_LEN	3072	/* three packets at the path's 1024 */

/* @s's port counter @name (hw_counters), or -1. */
static long long port_counter(const struct side *s, const char *name)
{
	char path[192];
	long long n = -1;
	FILE *f;

	snprintf(path, sizeof(path),
		 "/sys/class/infiniband/%s/ports/1/hw_counters/%s", s->name,
		 name);
	f = fopen(path, "r");
	if (f) {
		if (fscanf(f, "%lld", &n) != 1)
			n = -1;
		fclose(f);
	}
	return n;
}

/* @s's count of packets resent after RNR NAKs, or -1. */
static long long resent_rnr(const struct side *s)
{
	return port_counter(s, "tx_resent_rnr");
}

/*
 * The same, once ib_core holds no older value: it keeps what it read of
 * a port's counters for their lifespan (ms) before it asks the device
 * again.  A count read within that time of a QP's last resends is short
 * of them, and grows later with no WQE of the next check on the wire.
 */
static long long resent_rnr_settled(const struct side *s)
{
	long long ms = port_counter(s, "lifespan");

	if (ms < 0)
		return -1;
	/* A lifespan in jiffies, rounded up, and the jiffy it ends in. */
	usleep((2 * ms + 20) * 1000);
	return resent_rnr(s);
}

/* Waits up to 10 s for @s's RNR resends to pass @n; returns the count. */
static long long resent_past(const struct side *s, long long n)
{
	time_t end = time(NULL) + 10;
	long long now;

	while ((now = resent_rnr(s)) >= 0 && now <= n && time(NULL) <= end)
		usleep(1000);
	return now;
}

/* What a process writes over the slot of a WQE already on the wire. */
enum rewrite {
	REWRITE_INLINE_EMPTY,	/* an inline SEND of 0 bytes */
	REWRITE_READ,		/* a READ of the responder's whole MR */
	REWRITE_SGE,		/* its SGE moved and shortened */
	REWRITE_RANDOM,		/* random bytes over the slot */
	REWRITE_MAX
};

static const char *const rewrite_names[REWRITE_MAX] = {
	[REWRITE_INLINE_EMPTY] = "rewritten into an inline SEND of 0 bytes",
	[REWRITE_READ] = "rewritten into a READ",
	[REWRITE_SGE] = "its SGE moved and shortened",
	[REWRITE_RANDOM] = "random bytes over its slot",
};

static void rewrite_slot(struct softhca_send_wqe *w, struct side *req,
			 struct side *resp, enum rewrite how)
{
	struct softhca_sge *sge = (struct softhca_sge *)(w + 1);
	unsigned int seed = 7, i;

	switch (how) {
	case REWRITE_INLINE_EMPTY:
		w->flags |= SOFTHCA_WQE_INLINE;
		w->num_sge = 0;
		w->inline_len = 0;
		break;
	case REWRITE_READ:
		w->opcode = IBV_WR_RDMA_READ;
		w->rdma.remote_addr = (uintptr_t)resp->buf;
		w->rdma.rkey = resp->mr->rkey;
		sge->length = WIN;
		break;
	case REWRITE_SGE:
		sge->addr = (uintptr_t)req->buf + 8;
		sge->length = 100;
		break;
	case REWRITE_RANDOM:
		for (i = 0; i < sizeof(*w) + sizeof(*sge); i++)
			((unsigned char *)w)[i] = rand_r(&seed);
		break;
	default:
		break;
	}
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
}

/*
 * A three-packet SEND from a bare QP of softhca's, to a responder with no
 * receive posted: it answers with RNR NAKs, and the requester resends from
 * the first packet.  Once it has resent, the process rewrites the WQE's
 * slot in its ring (@how); the requester must go on with the WQE it took,
 * never reading the slot again.  The responder, given a receive, gets the
 * message as first posted, every byte compared and nothing past it, and
 * the requester completes it.  (softhca before its WQE snapshot read the
 * slot again on each resend: kernel stack and beyond went out on the
 * wire.)
 */
static void ring_attack(struct side *req, struct side *resp, enum rewrite how)
{
	struct ibv_recv_wr rwr = { .wr_id = 30, .num_sge = 1 }, *bad;
	struct ibv_sge rsge = { .addr = (uintptr_t)resp->buf,
				.length = WIN, .lkey = resp->mr->lkey };
	unsigned char canary[WIN - ATTACK_LEN];
	struct softhca_send_wqe *w;
	struct softhca_sge *sge;
	long long n0, n1, n2;
	struct raw_req r;
	struct ibv_wc wc;
	char what[160], detail[128];
	int err, st, ok;

	snprintf(what, sizeof(what),
		 "a SEND on the wire, %s: delivered as posted",
		 rewrite_names[how]);
	err = raw_req_up(&r, req, resp);
	if (err) {
		tap(0, named(req, resp, what), strerror(err));
		return;
	}
	fill(req->buf, ATTACK_LEN, 40 + how);
	memset(resp->buf, 0xee, WIN);
	memset(canary, 0xee, sizeof(canary));
	/* Before the post, after the last check's resends. */
	n0 = resent_rnr_settled(req);
	w = raw_req_wqe(&r, 1, IBV_WR_SEND);
	w->num_sge = 1;
	sge = (struct softhca_sge *)(w + 1);
	*sge = (struct softhca_sge){ .addr = (uintptr_t)req->buf,
				     .length = ATTACK_LEN,
				     .lkey = req->mr->lkey };
	raw_req_post(&r, 1);
	n1 = resent_past(req, n0);
	if (n0 >= 0 && n1 > n0)
		rewrite_slot(w, req, resp, how);
	/* It resends after the rewrite too, before the receive comes. */
	n2 = resent_past(req, n1);
	rwr.sg_list = &rsge;
	ok = n0 >= 0 && n1 > n0 && n2 > n1 &&
	     !ibv_post_recv(resp->qp, &rwr, &bad) && !poll_n(resp, &wc, 1);
	if (!ok) {
		snprintf(detail, sizeof(detail),
			 "no receive completion; packets resent after RNR NAKs: %lld, %lld, %lld",
			 n0, n1, n2);
		tap(0, named(req, resp, what), detail);
		raw_req_down(&r);
		return;
	}
	st = raw_req_wait(&r, 1);
	snprintf(detail, sizeof(detail), "%s; the requester: %s",
		 wc_str(1, &wc), status_str(st));
	tap(wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_RECV &&
	    wc.byte_len == ATTACK_LEN && st == IBV_WC_SUCCESS &&
	    !memcmp(resp->buf, req->buf, ATTACK_LEN) &&
	    !memcmp(resp->buf + ATTACK_LEN, canary, sizeof(canary)),
	    named(req, resp, what), detail);
	raw_req_down(&r);
}

static void side_close(struct side *s)
{
	if (s->wmr)
		ibv_dereg_mr(s->wmr);
	if (s->mr)
		ibv_dereg_mr(s->mr);
	if (s->cq)
		ibv_destroy_cq(s->cq);
	if (s->pd)
		ibv_dealloc_pd(s->pd);
	if (s->ctx)
		ibv_close_device(s->ctx);
	free(s->buf);
}

int main(int argc, char **argv)
{
	struct side sides[2] = {}, *req, *resp;
	const char *rxe = NULL;
	int aw = 1, flush = 0, i, up;
	enum rewrite how;
	struct ibv_device **list;

	for (; argc > 5 && !strncmp(argv[1], "--", 2); argc--, argv++) {
		if (!strcmp(argv[1], "--flush")) {
			flush = 1;
		} else if (!strcmp(argv[1], "--no-atomic-write")) {
			aw = 0;
			send_ops = OPS;
		} else if (!strcmp(argv[1], "--rxe")) {
			rxe = argv[2];
			argc--;
			argv++;
		} else {
			break;
		}
	}
	if (argc != 5) {
		fprintf(stderr, "usage: %s [--flush] [--no-atomic-write] [--rxe NAME] DEVICE GID_INDEX PEER PEER_GID_INDEX\n",
			argv[0]);
		return 2;
	}
	for (i = 0; i < 2; i++)
		sides[i].rxe = rxe && !strcmp(rxe, argv[1 + 2 * i]);
	list = ibv_get_device_list(NULL);
	up = !side_open(&sides[0], list, argv[1], argv[2]) &&
	     !side_open(&sides[1], list, argv[3], argv[4]);
	tap(up, "both devices open, each with its PD, CQ and MRs",
	    up ? NULL : strerror(errno));
	for (i = 0; up && i < 2; i++) {
		req = &sides[i];
		resp = &sides[!i];
		if (aw && !pair_up(req, resp)) {
			aw_stores(req, resp);
			if (!pair_up(req, resp))
				aw_misaligned(req, resp);
		}
		window_type1(req, resp);
		window_type2(req, resp);
		if (flush && !req->rxe)
			flush_checks(req, resp);
		for (how = 0; !req->rxe && how < REWRITE_MAX; how++)
			ring_attack(req, resp, how);
	}
	pair_down(&sides[0], &sides[1]);
	side_close(&sides[0]);
	side_close(&sides[1]);
	ibv_free_device_list(list);
	return tap_done();
}
