// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * qp-spread DEVICE GID_INDEX: SENDs spread over many QP pairs in turn,
 * one message per pair at a time, as qp-scale spreads its WRITEs, with
 * every message checked; meanwhile pairs are drained, destroyed and made
 * again, so that new QPs take the doorbell slots of old ones.  A process
 * posting this way keeps softhca's worker for its doorbell running
 * (softhca-abi.h, "The process's doorbell"), and its posts find their QPs
 * idle: each marks its QP's slot instead of ringing.  Every message must
 * arrive once, in its pair's order, with its length and every byte as
 * sent, and every completion must succeed.
 * TAP output; exit 0 when every check passed.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tap.h"

#define PAIRS		64
#define DEPTH		16
#define SLOT		128
#define TOTAL		20000
/* Messages between two pairs made again. */
#define CHURN_EVERY	400

struct pair {
	struct ibv_qp *tx, *rx;
	unsigned int gen;		/* the pairs made before in its place */
	unsigned int sent, received, completed;
	int draining;
};

struct spread {
	struct ibv_pd *pd;
	struct ibv_cq *scq, *rcq;
	struct ibv_mr *mr;
	unsigned char *buf;	/* per pair: DEPTH send, then DEPTH receive slots */
	union ibv_gid gid;
	int gid_index;
	struct pair pairs[PAIRS];
	unsigned int sent, received, remade;
	unsigned int bad_status, bad_order, bad_data, stray;
	char first_fault[160];
};

static uint32_t msg_len(unsigned int gen, unsigned int seq)
{
	return 1 + (seq * 37 + gen * 11) % SLOT;
}

static unsigned char msg_byte(unsigned int p, unsigned int gen,
			      unsigned int seq, uint32_t i)
{
	return (unsigned char)(seq >> (8 * (i % 4))) ^ (unsigned char)(i * 7) ^
	       (unsigned char)(p * 13 + gen * 5);
}

static unsigned char *slot_of(struct spread *s, unsigned int p, int rx,
			      unsigned int seq)
{
	return s->buf + ((p * 2 + rx) * DEPTH + seq % DEPTH) * SLOT;
}

static void fault(struct spread *s, const char *what, unsigned int p,
		  const struct ibv_wc *wc)
{
	if (s->first_fault[0])
		return;
	snprintf(s->first_fault, sizeof(s->first_fault),
		 "%s on pair %u (made %u times before): status %d, byte_len %u, wr_id %llu",
		 what, p, s->pairs[p].gen, wc->status, wc->byte_len,
		 (unsigned long long)wc->wr_id);
}

/* wr_id: the pair, and the message's number in it. */
static uint64_t wr_id(unsigned int p, unsigned int seq)
{
	return (uint64_t)p << 32 | seq;
}

static int post_recv(struct spread *s, unsigned int p, unsigned int seq)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)slot_of(s, p, 1, seq),
		.length = SLOT,
		.lkey = s->mr->lkey,
	};
	struct ibv_recv_wr wr = { .wr_id = wr_id(p, seq), .sg_list = &sge,
				  .num_sge = 1 }, *bad;

	return ibv_post_recv(s->pairs[p].rx, &wr, &bad);
}

static int post_send(struct spread *s, unsigned int p)
{
	struct pair *pr = &s->pairs[p];
	unsigned int seq = pr->sent;
	unsigned char *buf = slot_of(s, p, 0, seq);
	struct ibv_sge sge = {
		.addr = (uintptr_t)buf,
		.length = msg_len(pr->gen, seq),
		.lkey = s->mr->lkey,
	};
	struct ibv_send_wr wr = {
		.wr_id = wr_id(p, seq), .sg_list = &sge, .num_sge = 1,
		.opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED,
	}, *bad;
	uint32_t i;

	for (i = 0; i < sge.length; i++)
		buf[i] = msg_byte(p, pr->gen, seq, i);
	if (ibv_post_send(pr->tx, &wr, &bad))
		return -1;
	pr->sent++;
	s->sent++;
	return 0;
}

static struct ibv_qp *rc_qp(struct spread *s)
{
	struct ibv_qp_init_attr a = {
		.send_cq = s->scq, .recv_cq = s->rcq, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = DEPTH, .max_recv_wr = DEPTH,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};

	return ibv_create_qp(s->pd, &a);
}

/* Pair @p made (again), connected, its receives posted; 0 or -1. */
static int pair_make(struct spread *s, unsigned int p)
{
	struct pair *pr = &s->pairs[p];
	unsigned int i;

	pr->tx = rc_qp(s);
	pr->rx = rc_qp(s);
	if (!pr->tx || !pr->rx ||
	    tap_rc_connect(pr->tx, pr->rx->qp_num, &s->gid, s->gid_index) ||
	    tap_rc_connect(pr->rx, pr->tx->qp_num, &s->gid, s->gid_index))
		return -1;
	pr->sent = pr->received = pr->completed = 0;
	pr->draining = 0;
	for (i = 0; i < DEPTH; i++)
		if (post_recv(s, p, i))
			return -1;
	return 0;
}

static int pair_unmake(struct pair *pr)
{
	int ret = 0;

	if (pr->tx && ibv_destroy_qp(pr->tx))
		ret = -1;
	if (pr->rx && ibv_destroy_qp(pr->rx))
		ret = -1;
	pr->tx = pr->rx = NULL;
	return ret;
}

/* The pair a completion names, or -1 (a stray one). */
static int pair_of(struct spread *s, const struct ibv_wc *wc, int rx)
{
	unsigned int p = wc->wr_id >> 32;

	if (p >= PAIRS ||
	    (rx ? s->pairs[p].rx : s->pairs[p].tx)->qp_num != wc->qp_num) {
		s->stray++;
		return -1;
	}
	return p;
}

static void reap_recv(struct spread *s)
{
	struct ibv_wc wc[32];
	int i, n = ibv_poll_cq(s->rcq, 32, wc);

	for (i = 0; i < n; i++) {
		int p = pair_of(s, &wc[i], 1);
		struct pair *pr;
		unsigned int seq;
		uint32_t k;

		if (p < 0)
			continue;
		pr = &s->pairs[p];
		seq = pr->received++;
		s->received++;
		if (wc[i].status != IBV_WC_SUCCESS) {
			s->bad_status++;
			fault(s, "receive failed", p, &wc[i]);
			continue;
		}
		if ((uint32_t)wc[i].wr_id != seq) {
			s->bad_order++;
			fault(s, "out of order", p, &wc[i]);
			continue;
		}
		if (wc[i].byte_len != msg_len(pr->gen, seq)) {
			s->bad_data++;
			fault(s, "wrong length", p, &wc[i]);
		} else {
			for (k = 0; k < wc[i].byte_len; k++)
				if (slot_of(s, p, 1, seq)[k] !=
				    msg_byte(p, pr->gen, seq, k))
					break;
			if (k != wc[i].byte_len) {
				s->bad_data++;
				fault(s, "bytes differ", p, &wc[i]);
			}
		}
		if (post_recv(s, p, seq + DEPTH)) {
			s->bad_status++;
			fault(s, "receive not reposted", p, &wc[i]);
		}
	}
}

static void reap_send(struct spread *s)
{
	struct ibv_wc wc[32];
	int i, n = ibv_poll_cq(s->scq, 32, wc);

	for (i = 0; i < n; i++) {
		int p = pair_of(s, &wc[i], 0);

		if (p < 0)
			continue;
		s->pairs[p].completed++;
		if (wc[i].status != IBV_WC_SUCCESS) {
			s->bad_status++;
			fault(s, "send failed", p, &wc[i]);
		}
	}
}

/*
 * The stream: one SEND per pair in turn, to pairs with room; every
 * CHURN_EVERY messages a pair stops taking new ones, and once all its
 * messages are in it is destroyed and made again.  Returns 0, or -1 when a
 * verb failed.
 */
static int stream(struct spread *s)
{
	time_t stop = time(NULL) + 120;
	unsigned int p = 0, next_churn = CHURN_EVERY, churn = 0;
	struct pair *pr;

	while (s->received < TOTAL && time(NULL) < stop) {
		pr = &s->pairs[p];
		if (!pr->draining && s->sent < TOTAL &&
		    pr->sent - pr->completed < DEPTH &&
		    pr->sent - pr->received < DEPTH && post_send(s, p))
			return -1;
		if (pr->draining && pr->received == pr->sent &&
		    pr->completed == pr->sent) {
			pr->gen++;
			if (pair_unmake(pr) || pair_make(s, p))
				return -1;
			s->remade++;
		}
		if (s->sent >= next_churn) {
			next_churn += CHURN_EVERY;
			s->pairs[(churn++ * 7) % PAIRS].draining = 1;
		}
		p = (p + 1) % PAIRS;
		if (!p || s->sent >= TOTAL) {
			reap_send(s);
			reap_recv(s);
		}
	}
	while (time(NULL) < stop && s->sent != s->received)
		reap_recv(s);
	return 0;
}

int main(int argc, char **argv)
{
	struct ibv_device **list;
	struct ibv_context *ctx;
	struct spread s = {};
	char detail[320];
	unsigned int p;
	int ok;

	if (argc != 3) {
		fprintf(stderr, "usage: %s DEVICE GID_INDEX\n", argv[0]);
		return 2;
	}
	s.gid_index = atoi(argv[2]);
	list = ibv_get_device_list(NULL);
	ctx = tap_open(list, argv[1]);
	s.pd = ctx ? ibv_alloc_pd(ctx) : NULL;
	s.buf = calloc(PAIRS * 2 * DEPTH, SLOT);
	if (!s.pd || !s.buf || ibv_query_gid(ctx, 1, s.gid_index, &s.gid))
		return 2;
	s.mr = ibv_reg_mr(s.pd, s.buf, PAIRS * 2 * DEPTH * SLOT,
			  IBV_ACCESS_LOCAL_WRITE);
	s.scq = ibv_create_cq(ctx, PAIRS * DEPTH, NULL, NULL, 0);
	s.rcq = ibv_create_cq(ctx, PAIRS * DEPTH, NULL, NULL, 0);
	ok = s.mr && s.scq && s.rcq;
	for (p = 0; ok && p < PAIRS; p++)
		ok = !pair_make(&s, p);
	tap(ok, "64 RC QP pairs made", NULL);
	if (!ok)
		return tap_done();

	ok = !stream(&s);
	snprintf(detail, sizeof(detail), "sent %u, received %u%s%s", s.sent,
		 s.received, s.first_fault[0] ? "; first fault: " : "",
		 s.first_fault);
	tap(ok && s.received == TOTAL, "20,000 SENDs over 64 pairs in turn",
	    detail);
	tap(!s.bad_status, "every completion succeeded", s.first_fault);
	tap(!s.bad_order, "each pair's messages in order", s.first_fault);
	tap(!s.bad_data, "every message's length and bytes as sent",
	    s.first_fault);
	tap(!s.stray, "no completion of a QP destroyed before", NULL);
	snprintf(detail, sizeof(detail), "%u pairs made again", s.remade);
	tap(s.remade >= TOTAL / CHURN_EVERY / 2,
	    "pairs destroyed and made again meanwhile", detail);

	for (p = 0; p < PAIRS; p++)
		pair_unmake(&s.pairs[p]);
	ibv_destroy_cq(s.scq);
	ibv_destroy_cq(s.rcq);
	ibv_dereg_mr(s.mr);
	ibv_dealloc_pd(s.pd);
	ibv_close_device(ctx);
	ibv_free_device_list(list);
	free(s.buf);
	return tap_done();
}
