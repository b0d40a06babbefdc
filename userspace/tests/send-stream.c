// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * send-stream DEVICE GID_INDEX: SENDs streamed from one thread to a QP
 * whose receiver busy-polls in another, as ib_send_bw does, every message
 * checked.  With both threads busy on a 2-vCPU guest the engine's worker
 * has no CPU of its own, and softhca's doorbells move between the worker,
 * the posting thread's system calls (shca_engine_doorbell_here()) and a
 * worker that polls the stream off a timer (shca_uctx_streams()) as the
 * stream goes: in long bursts, one message at a time with pauses, then
 * in bursts again.  Whoever runs the engine, each message must
 * arrive once, in order, with its length and every byte as sent (1 to
 * 256 bytes, inline up to 64), and every completion must succeed.
 * TAP output; exit 0 when every check passed.
 */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "tap.h"

#define DEPTH		128
#define SLOT		256
#define MAX_INLINE	64
#define SIGNAL_EVERY	16
/* Messages of each phase (multiples of SIGNAL_EVERY), and in all. */
#define STREAMED	20000
#define ONE_BY_ONE	2000
#define TOTAL		(2 * STREAMED + ONE_BY_ONE)

struct stream {
	struct ibv_cq *scq, *rcq;
	struct ibv_qp *tx, *rx;
	struct ibv_mr *mr;
	unsigned char *buf;	/* DEPTH send slots, then DEPTH receive slots */
	/* The receiver's findings. */
	unsigned int received, bad_status, bad_order, bad_data, repost_failed;
	char first_fault[160];
};

static uint32_t msg_len(unsigned int seq)
{
	return 1 + (seq * 37) % SLOT;
}

/* Byte @i of message @seq: its number, mixed with the byte's place. */
static unsigned char msg_byte(unsigned int seq, uint32_t i)
{
	return (unsigned char)(seq >> (8 * (i % 4))) ^ (unsigned char)(i * 7);
}

static void msg_fill(unsigned char *p, unsigned int seq)
{
	uint32_t i, len = msg_len(seq);

	for (i = 0; i < len; i++)
		p[i] = msg_byte(seq, i);
}

static int msg_ok(const unsigned char *p, uint32_t byte_len, unsigned int seq)
{
	uint32_t i;

	if (byte_len != msg_len(seq))
		return 0;
	for (i = 0; i < byte_len; i++)
		if (p[i] != msg_byte(seq, i))
			return 0;
	return 1;
}

static unsigned char *rx_slot(struct stream *s, uint64_t slot)
{
	return s->buf + (DEPTH + slot) * SLOT;
}

static int post_recv(struct stream *s, uint64_t slot)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)rx_slot(s, slot),
		.length = SLOT,
		.lkey = s->mr->lkey,
	};
	struct ibv_recv_wr wr = { .wr_id = slot, .sg_list = &sge,
				  .num_sge = 1 }, *bad;

	return ibv_post_recv(s->rx, &wr, &bad);
}

static void fault(struct stream *s, const char *what, unsigned int seq,
		  const struct ibv_wc *wc)
{
	if (s->first_fault[0])
		return;
	snprintf(s->first_fault, sizeof(s->first_fault),
		 "%s at message %u: status %d, byte_len %u, slot %llu", what,
		 seq, wc->status, wc->byte_len,
		 (unsigned long long)wc->wr_id);
}

/*
 * The receiver: polls without sleeping until every message came, or 60 s
 * passed.  Receives complete in posting order, so slot and message
 * number follow each other.
 */
static void *receiver(void *arg)
{
	struct stream *s = arg;
	time_t end = time(NULL) + 60;
	uint64_t want_slot = 0;
	struct ibv_wc wc[16];
	int i, n;

	while (s->received < TOTAL && time(NULL) < end) {
		n = ibv_poll_cq(s->rcq, 16, wc);
		for (i = 0; i < n; i++) {
			unsigned int seq = s->received;

			/* The sender waits on it in phase 1. */
			__atomic_store_n(&s->received, seq + 1,
					 __ATOMIC_RELEASE);

			if (wc[i].status != IBV_WC_SUCCESS) {
				s->bad_status++;
				fault(s, "receive failed", seq, &wc[i]);
				continue;
			}
			if (wc[i].wr_id != want_slot) {
				s->bad_order++;
				fault(s, "out of order", seq, &wc[i]);
			} else if (!msg_ok(rx_slot(s, wc[i].wr_id),
					   wc[i].byte_len, seq)) {
				s->bad_data++;
				fault(s, "bytes differ", seq, &wc[i]);
			}
			want_slot = (wc[i].wr_id + 1) % DEPTH;
			if (post_recv(s, wc[i].wr_id))
				s->repost_failed++;
		}
		if (n < 0)
			break;
	}
	return NULL;
}

/* Polls the send CQ once; -1 on an error completion. */
static int reap(struct stream *s, unsigned int *done)
{
	struct ibv_wc wc[16];
	int i, n = ibv_poll_cq(s->scq, 16, wc);

	for (i = 0; i < n; i++) {
		if (wc[i].status != IBV_WC_SUCCESS) {
			fprintf(stderr, "send %llu: status %d\n",
				(unsigned long long)wc[i].wr_id, wc[i].status);
			return -1;
		}
		*done += SIGNAL_EVERY;
	}
	return n < 0 ? -1 : 0;
}

/*
 * Message @seq from its send slot, signalled every SIGNAL_EVERY, inline
 * when short.  The slot is free: fewer than DEPTH messages are in flight.
 */
static int post_send(struct stream *s, unsigned int seq)
{
	unsigned char *p = s->buf + (seq % DEPTH) * SLOT;
	struct ibv_sge sge = {
		.addr = (uintptr_t)p,
		.length = msg_len(seq),
		.lkey = s->mr->lkey,
	};
	struct ibv_send_wr wr = {
		.wr_id = seq, .sg_list = &sge, .num_sge = 1,
		.opcode = IBV_WR_SEND,
	}, *bad;

	msg_fill(p, seq);
	if ((seq + 1) % SIGNAL_EVERY == 0)
		wr.send_flags |= IBV_SEND_SIGNALED;
	if (sge.length <= MAX_INLINE)
		wr.send_flags |= IBV_SEND_INLINE;
	return ibv_post_send(s->tx, &wr, &bad);
}

/*
 * The sender: phases 0 and 2 stream STREAMED messages each (post while
 * the send queue has room, then poll); phase 1 posts ONE_BY_ONE, one at a
 * time, each time waiting for the receiver to take it and pausing 50 us.
 * Returns the messages whose completions came, or -1.
 */
static int sender(struct stream *s)
{
	static const unsigned int ends[] = {
		STREAMED, STREAMED + ONE_BY_ONE, TOTAL,
	};
	unsigned int seq = 0, done = 0, end;
	time_t stop = time(NULL) + 60;
	int phase;

	for (phase = 0; phase < 3; phase++) {
		end = ends[phase];
		while (seq < end && time(NULL) < stop) {
			while (seq < end && seq - done < DEPTH - SIGNAL_EVERY) {
				if (post_send(s, seq++))
					return -1;
				if (phase == 1)
					break;
			}
			if (reap(s, &done))
				return -1;
			if (phase != 1)
				continue;
			while (__atomic_load_n(&s->received,
					       __ATOMIC_ACQUIRE) < seq &&
			       time(NULL) < stop)
				;
			usleep(50);
		}
	}
	while (done < seq && time(NULL) < stop)
		if (reap(s, &done))
			return -1;
	return done;
}

static struct ibv_qp *rc_qp(struct ibv_pd *pd, struct ibv_cq *scq,
			    struct ibv_cq *rcq)
{
	struct ibv_qp_init_attr a = {
		.send_cq = scq, .recv_cq = rcq, .qp_type = IBV_QPT_RC,
		.sq_sig_all = 0,
		.cap = { .max_send_wr = DEPTH, .max_recv_wr = DEPTH,
			 .max_send_sge = 1, .max_recv_sge = 1,
			 .max_inline_data = MAX_INLINE },
	};

	return ibv_create_qp(pd, &a);
}

int main(int argc, char **argv)
{
	struct ibv_device **list;
	struct ibv_context *ctx;
	struct stream s = {};
	struct ibv_pd *pd;
	union ibv_gid gid;
	char detail[320];
	pthread_t thread;
	int gid_index, sent, ok;
	uint64_t slot;

	if (argc != 3) {
		fprintf(stderr, "usage: %s DEVICE GID_INDEX\n", argv[0]);
		return 2;
	}
	gid_index = atoi(argv[2]);
	list = ibv_get_device_list(NULL);
	ctx = tap_open(list, argv[1]);
	if (!ctx || ibv_query_gid(ctx, 1, gid_index, &gid))
		return 1;
	pd = ibv_alloc_pd(ctx);
	s.buf = calloc(2 * DEPTH, SLOT);
	s.mr = pd && s.buf ? ibv_reg_mr(pd, s.buf, 2 * DEPTH * SLOT,
					IBV_ACCESS_LOCAL_WRITE) : NULL;
	s.scq = ibv_create_cq(ctx, DEPTH, NULL, NULL, 0);
	s.rcq = ibv_create_cq(ctx, DEPTH, NULL, NULL, 0);
	if (s.mr && s.scq && s.rcq) {
		s.tx = rc_qp(pd, s.scq, s.scq);
		s.rx = rc_qp(pd, s.rcq, s.rcq);
	}
	ok = s.tx && s.rx &&
	     !tap_rc_connect(s.tx, s.rx->qp_num, &gid, gid_index) &&
	     !tap_rc_connect(s.rx, s.tx->qp_num, &gid, gid_index);
	for (slot = 0; ok && slot < DEPTH; slot++)
		ok = !post_recv(&s, slot);
	tap(ok, "two RC QPs connected to each other, receives posted",
	    ok ? NULL : strerror(errno));
	if (!ok)
		return tap_done();
	if (pthread_create(&thread, NULL, receiver, &s)) {
		tap(0, "receiver thread", strerror(errno));
		return tap_done();
	}
	sent = sender(&s);
	pthread_join(thread, NULL);

	snprintf(detail, sizeof(detail), "%d of %d", sent, TOTAL);
	tap(sent == TOTAL, "every SEND completed successfully", detail);
	snprintf(detail, sizeof(detail), "%u of %d received; %u failed, "
		 "%u out of order, %u with other bytes, %u reposts failed%s%s",
		 s.received, TOTAL, s.bad_status, s.bad_order, s.bad_data,
		 s.repost_failed, s.first_fault[0] ? "; first: " : "",
		 s.first_fault);
	tap(s.received == TOTAL && !s.bad_status && !s.bad_order &&
	    !s.bad_data && !s.repost_failed,
	    "every message arrived once, in order, as sent", detail);

	ibv_destroy_qp(s.tx);
	ibv_destroy_qp(s.rx);
	ibv_destroy_cq(s.scq);
	ibv_destroy_cq(s.rcq);
	ibv_dereg_mr(s.mr);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	ibv_free_device_list(list);
	free(s.buf);
	return tap_done();
}
