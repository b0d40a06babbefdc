// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * atomic-write DEVICE GID_INDEX PEER PEER_GID_INDEX: ATOMIC WRITE (IBA
 * 1.5) between two devices, over the wire that joins them, each in turn
 * the requester: an RC QP on each, connected to the other's, in one
 * process.  Two ATOMIC WRITEs in one ibv_wr_* batch, each requester
 * stores 16 bytes in the other's memory: they land whole and nothing
 * beside them changes; the completions are ATOMIC WRITEs of 8 bytes.  Then, each requester on a fresh pair of QPs, a target not
 * 8-byte aligned is refused by the responder (remote invalid request),
 * and writes nothing.  With softhca on one side and rdma_rxe on the
 * other, both directions of the wire format are those of two
 * implementations.  TAP output; exit 0 when every check passed.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

#include "tap.h"

#define BUF	4096
#define TARGET	512	/* in the responder's buffer, 8-byte aligned */

struct side {
	const char *name;
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_mr *mr;
	struct ibv_qp *qp;
	unsigned char *buf;
	union ibv_gid gid;
	int gid_index;
};

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
	s->buf = aligned_alloc(64, BUF);
	if (!s->pd || !s->cq || !s->buf)
		return -1;
	s->mr = ibv_reg_mr(s->pd, s->buf, BUF, IBV_ACCESS_LOCAL_WRITE |
			   IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ);
	return s->mr ? 0 : -1;
}

static struct ibv_qp *qp_new(struct side *s)
{
	struct ibv_qp_init_attr_ex a = {
		.qp_type = IBV_QPT_RC,
		.send_cq = s->cq,
		.recv_cq = s->cq,
		.cap = { .max_send_wr = 8, .max_recv_wr = 1,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.comp_mask = IBV_QP_INIT_ATTR_PD |
			     IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
		.pd = s->pd,
		.send_ops_flags = IBV_QP_EX_WITH_ATOMIC_WRITE,
	};

	return ibv_create_qp_ex(s->ctx, &a);
}

/* @s's QP to RTS, connected to QP @dqpn at @peer's GID. */
static int qp_connect(struct side *s, const struct side *peer, uint32_t dqpn)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT, .port_num = 1,
		.qp_access_flags = IBV_ACCESS_REMOTE_WRITE,
	};

	if (ibv_modify_qp(s->qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			  IBV_QP_PORT | IBV_QP_ACCESS_FLAGS))
		return -1;
	a = (struct ibv_qp_attr){
		.qp_state = IBV_QPS_RTR, .path_mtu = IBV_MTU_1024,
		.dest_qp_num = dqpn, .max_dest_rd_atomic = 4,
		.min_rnr_timer = 1,
		.ah_attr = { .is_global = 1, .port_num = 1,
			     .grh = { .dgid = peer->gid,
				      .sgid_index = s->gid_index,
				      .hop_limit = 64 } },
	};
	if (ibv_modify_qp(s->qp, &a, IBV_QP_STATE | IBV_QP_AV |
			  IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
			  IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER))
		return -1;
	a = (struct ibv_qp_attr){
		.qp_state = IBV_QPS_RTS, .timeout = 14, .retry_cnt = 7,
		.rnr_retry = 7, .max_rd_atomic = 4,
	};
	return ibv_modify_qp(s->qp, &a, IBV_QP_STATE | IBV_QP_TIMEOUT |
			     IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
			     IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC);
}

/* A fresh QP on each side, connected to each other. */
static int pair_up(struct side *a, struct side *b)
{
	a->qp = qp_new(a);
	b->qp = qp_new(b);
	return a->qp && b->qp && !qp_connect(a, b, b->qp->qp_num) &&
	       !qp_connect(b, a, a->qp->qp_num) ? 0 : -1;
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

/* One completion's check: @wr_id, success, an ATOMIC WRITE of 8 bytes. */
static void expect_wc(const struct side *req, const struct side *resp,
		      const char *how, int polled, const struct ibv_wc *wc,
		      uint64_t wr_id)
{
	char what[160], detail[96] = "no completion";

	if (polled)
		snprintf(detail, sizeof(detail),
			 "wr_id %llu, %s, opcode %d, %u bytes",
			 (unsigned long long)wc->wr_id,
			 ibv_wc_status_str(wc->status), wc->opcode,
			 wc->byte_len);
	snprintf(what, sizeof(what),
		 "%s to %s: %s completes: an ATOMIC WRITE of 8 bytes",
		 req->name, resp->name, how);
	tap(polled && wc->wr_id == wr_id && wc->status == IBV_WC_SUCCESS &&
	    wc->opcode == IBV_WC_ATOMIC_WRITE && wc->byte_len == 8, what,
	    detail);
}

/*
 * @req stores 8 bytes at the target in @resp's buffer and 8 after them,
 * by two ibv_wr_atomic_write in one batch.  (Not by ibv_post_send:
 * rdma-core 44's ibv_send_wr has no room for the 8 bytes, and rdma_rxe
 * sends its first SGE's address where softhca sends the bytes there.)
 */
static void stores(struct side *req, struct side *resp)
{
	struct ibv_qp_ex *x = ibv_qp_to_qp_ex(req->qp);
	uint64_t raddr = (uintptr_t)resp->buf + TARGET;
	unsigned char want[24], val[2][8];
	char what[160];
	struct ibv_wc wc[2];
	int i, ok;

	for (i = 0; i < 8; i++) {
		val[0][i] = (unsigned char)(0x10 + i);
		val[1][i] = (unsigned char)(0xa0 + i);
	}
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
		expect_wc(req, resp, i ? "the second" : "the first", ok,
			  &wc[i], i + 1);
	snprintf(what, sizeof(what),
		 "%s to %s: 16 bytes landed, nothing past them", req->name,
		 resp->name);
	tap(!memcmp(resp->buf + TARGET, want, sizeof(want)), what, NULL);
}

/* A target 4 bytes off alignment: refused, nothing written. */
static void misaligned(struct side *req, struct side *resp)
{
	struct ibv_qp_ex *x = ibv_qp_to_qp_ex(req->qp);
	static const unsigned char val[8] = { 1, 2, 3, 4, 5, 6, 7, 8 };
	unsigned char before[16];
	char what[160];
	struct ibv_wc wc;
	int ok;

	memcpy(before, resp->buf + TARGET, sizeof(before));
	ibv_wr_start(x);
	x->wr_id = 3;
	x->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_atomic_write(x, resp->mr->rkey,
			    (uintptr_t)resp->buf + TARGET + 4, val);
	ok = !ibv_wr_complete(x) && !poll_n(req, &wc, 1);
	snprintf(what, sizeof(what),
		 "%s to %s: not 8-byte aligned: remote invalid request",
		 req->name, resp->name);
	tap(ok && wc.status == IBV_WC_REM_INV_REQ_ERR, what,
	    ok ? ibv_wc_status_str(wc.status) : "no completion");
	snprintf(what, sizeof(what), "%s to %s: misaligned, nothing written",
		 req->name, resp->name);
	tap(!memcmp(resp->buf + TARGET, before, sizeof(before)), what, NULL);
}

static void side_close(struct side *s)
{
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
	struct side a = {}, b = {};
	struct ibv_device **list;
	struct side *s[2] = { &a, &b };
	int i, up;

	if (argc != 5) {
		fprintf(stderr, "usage: %s DEVICE GID_INDEX PEER PEER_GID_INDEX\n",
			argv[0]);
		return 2;
	}
	list = ibv_get_device_list(NULL);
	up = !side_open(&a, list, argv[1], argv[2]) &&
	     !side_open(&b, list, argv[3], argv[4]) && !pair_up(&a, &b);
	tap(up, "an RC QP on each device for ATOMIC WRITE, connected",
	    up ? NULL : strerror(errno));
	if (up) {
		stores(&a, &b);
		stores(&b, &a);
	}
	pair_down(&a, &b);
	for (i = 0; up && i < 2; i++) {
		if (pair_up(s[i], s[!i])) {
			tap(0, "a fresh pair of QPs", strerror(errno));
			break;
		}
		misaligned(s[i], s[!i]);
		pair_down(s[i], s[!i]);
	}
	side_close(&a);
	side_close(&b);
	ibv_free_device_list(list);
	return tap_done();
}
