// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * hostile-ring: a process that corrupts its own rings.  It creates its
 * CQs and RC QPs with the bare uverbs commands, maps their rings itself
 * (softhca-abi.h) and writes into them what no provider would: unknown
 * opcodes, absurd SGE counts, bad keys, producer and consumer indices out
 * of range, random bytes over whole rings and over the process's doorbell
 * page while the engine runs.  Each
 * case checks that the kernel answers as the IBA has it (an error
 * completion, the QP in error, an affiliated async event) and that only
 * this process's objects are hurt: the caller runs another process's
 * traffic meanwhile and checks it too.
 *
 * Usage: RDMAV_DRIVERS=/abs/path/libsofthca hostile-ring DEVICE GID_INDEX
 * Output: one TAP line per check; exit status 0 when every check passed.
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "raw.h"
#include "softhca.h"
#include "tap.h"

static void check(const char *what, int ok)
{
	tap(ok, what, NULL);
}

static int wait_cqe(struct pair *p, uint64_t wr_id)
{
	return pair_wait_cqe(p, wr_id, 5000);
}

/* Waits up to 5 s for an async event of @type on @obj. */
static int wait_event(struct ibv_context *ctx, enum ibv_event_type type,
		      void *obj)
{
	struct pollfd pfd = { .fd = ctx->async_fd, .events = POLLIN };
	struct ibv_async_event ev;
	int found = 0;

	while (!found && poll(&pfd, 1, 5000) > 0) {
		if (ibv_get_async_event(ctx, &ev))
			break;
		found = ev.event_type == type &&
			(ev.element.qp == obj || ev.element.cq == obj);
		ibv_ack_async_event(&ev);
	}
	return found;
}

/* A bad send WQE: its error completion, and the QP in error. */
static void bad_send(struct pair *p, const char *what, uint8_t opcode,
		     uint8_t num_sge, uint32_t lkey, int want)
{
	struct softhca_send_wqe *w = pair_send_wqe(p, 0, opcode);
	char name[128];

	w->num_sge = num_sge;
	((struct softhca_sge *)(w + 1))->lkey = lkey;
	ring_publish(&p->sq[0], 1);
	raw_doorbell(&p->qp[0]);
	snprintf(name, sizeof(name), "%s: completes with %s", what,
		 ibv_wc_status_str(want));
	check(name, wait_cqe(p, 0x100) == want);
	snprintf(name, sizeof(name), "%s: the QP is in error", what);
	check(name, raw_qp_state(&p->qp[0]) == IBV_QPS_ERR);
}

static volatile int chaos_stop;

/*
 * Random bytes over every ring of the pair, control blocks included, and
 * over the process's doorbell page (the provider's mapping of it): its
 * word and its slots' bits, the pair's QPs' among them.
 */
static void *chaos(void *arg)
{
	struct pair *p = arg;
	struct ring *rings[] = { &p->cqr, &p->sq[0], &p->sq[1], &p->rq[0],
				 &p->rq[1] };
	const struct softhca_context *sctx = to_sctx(p->ctx);
	unsigned int seed = 1, n = sctx->db ? 6 : 5, pick;
	uint32_t *word;

	while (!chaos_stop) {
		pick = rand_r(&seed) % n;
		if (pick == 5)
			word = (uint32_t *)sctx->db +
			       rand_r(&seed) % (sctx->db_len / 4);
		else
			word = (uint32_t *)rings[pick]->ctrl +
			       rand_r(&seed) % (rings[pick]->map.length / 4);
		*word = rand_r(&seed);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	struct ibv_device **list;
	struct ibv_context *ctx;
	pthread_t chaos_thread;
	struct ibv_pd *pd;
	struct pair p;
	int gid, ok;
	time_t end;

	if (argc != 3) {
		fprintf(stderr, "usage: %s DEVICE GID_INDEX\n", argv[0]);
		return 2;
	}
	gid = atoi(argv[2]);
	list = ibv_get_device_list(NULL);
	ctx = tap_open(list, argv[1]);
	pd = ctx ? ibv_alloc_pd(ctx) : NULL;
	if (!pd)
		return 2;

#define PAIR() check("a fresh QP pair", !pair_create(&p, ctx, pd, gid, 0))
	PAIR();
	bad_send(&p, "unknown opcode", 0xee, 1, p.mr->lkey,
		 IBV_WC_LOC_QP_OP_ERR);
	pair_destroy(&p);
	PAIR();
	bad_send(&p, "200 SGEs", IBV_WR_SEND, 200, p.mr->lkey,
		 IBV_WC_LOC_QP_OP_ERR);
	pair_destroy(&p);
	PAIR();
	bad_send(&p, "an lkey it does not own", IBV_WR_SEND, 1, 0x123456,
		 IBV_WC_LOC_PROT_ERR);
	pair_destroy(&p);
	/* Its 8 bytes are in its header: an SGE makes it malformed. */
	PAIR();
	bad_send(&p, "an ATOMIC WRITE with an SGE", IBV_WR_ATOMIC_WRITE, 1,
		 p.mr->lkey, IBV_WC_LOC_QP_OP_ERR);
	pair_destroy(&p);

	PAIR();
	pair_recv_wqe(&p, 1, 200);
	pair_send_wqe(&p, 0, IBV_WR_SEND);
	ring_publish(&p.sq[0], 1);
	raw_doorbell(&p.qp[0]);
	check("receive WQE with 200 SGEs: the receiver's completion",
	      wait_cqe(&p, 0x201) == IBV_WC_LOC_QP_OP_ERR);
	check("receive WQE with 200 SGEs: the sender gets REM_OP_ERR",
	      wait_cqe(&p, 0x100) == IBV_WC_REM_OP_ERR);
	pair_destroy(&p);

	PAIR();
	p.sq[0].index += 3 * PAIR_DEPTH;
	ring_publish(&p.sq[0], 0);
	raw_doorbell(&p.qp[0]);
	check("send queue index overrun: QP fatal event",
	      wait_event(ctx, IBV_EVENT_QP_FATAL, &p.qp[0]));
	check("send queue index overrun: the QP is in error",
	      raw_qp_state(&p.qp[0]) == IBV_QPS_ERR);
	check("send queue index overrun: the peer QP is untouched",
	      raw_qp_state(&p.qp[1]) == IBV_QPS_RTS);
	pair_destroy(&p);

	PAIR();
	p.rq[1].index -= 1;
	ring_publish(&p.rq[1], 0);
	pair_send_wqe(&p, 0, IBV_WR_SEND);
	ring_publish(&p.sq[0], 1);
	raw_doorbell(&p.qp[0]);
	check("receive queue index overrun: the sender gets REM_OP_ERR",
	      wait_cqe(&p, 0x100) == IBV_WC_REM_OP_ERR);
	check("receive queue index overrun: QP fatal event",
	      wait_event(ctx, IBV_EVENT_QP_FATAL, &p.qp[1]));
	pair_destroy(&p);

	PAIR();
	__atomic_store_n(&p.cqr.ctrl->consumer, p.cqr.index + 12345,
			 __ATOMIC_SEQ_CST);
	__atomic_store_n(&p.cqr.ctrl->arm, 0x77, __ATOMIC_SEQ_CST);
	pair_recv_wqe(&p, 1, 1);
	pair_send_wqe(&p, 0, IBV_WR_SEND);
	ring_publish(&p.sq[0], 1);
	raw_doorbell(&p.qp[0]);
	check("CQ consumer index overrun: CQ error event",
	      wait_event(ctx, IBV_EVENT_CQ_ERR, &p.cq));
	pair_destroy(&p);

	/* Two seconds of random writes while the engine runs the rings. */
	PAIR();
	chaos_stop = 0;
	ok = !pthread_create(&chaos_thread, NULL, chaos, &p);
	for (end = time(NULL) + 2; ok && time(NULL) < end;) {
		pair_recv_wqe(&p, 1, 1);
		pair_send_wqe(&p, 0, IBV_WR_SEND);
		ring_publish(&p.sq[0], 1);
		raw_doorbell(&p.qp[0]);
		raw_doorbell(&p.qp[1]);
	}
	chaos_stop = 1;
	if (ok)
		pthread_join(chaos_thread, NULL);
	check("random writes over the rings for 2 s", ok);
	pair_destroy(&p);

	/* Still a working context: a clean SEND, its data compared. */
	PAIR();
	check("afterwards: a SEND completes, its data compared",
	      pair_send_checked(&p));
	pair_destroy(&p);
#undef PAIR

	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	ibv_free_device_list(list);
	return tap_done();
}
