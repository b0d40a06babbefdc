// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * hostile-ring: a process that corrupts its own rings.  It creates its
 * CQs and RC QPs with the bare uverbs commands, maps their rings itself
 * (softhca-abi.h) and writes into them what no provider would: unknown
 * opcodes, absurd SGE counts, bad keys, producer and consumer indices out
 * of range, random bytes over whole rings while the engine runs.  Each
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
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <rdma/softhca-abi.h>

#include "rdma-core-private.h"
#include "tap.h"

#define DEPTH 16
#define BUF_LEN 4096

/* Statuses of the CQEs polled, by wr_id (0x100 + i, 0x200 + i). */
static int seen[0x300];

static void check(const char *what, int ok)
{
	tap(ok, what, NULL);
}

struct ring {
	struct softhca_queue_ctrl *ctrl;
	char *entries;
	struct softhca_queue_map map;
	uint32_t index;		/* ours: producer, or the CQ's consumer */
};

struct pair {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_mr *mr;
	char *buf;
	struct ibv_cq cq;
	struct ring cqr;
	struct ibv_qp qp[2];
	struct ring sq[2], rq[2];
};

static int ring_map(struct ibv_context *ctx, struct ring *r,
		    const struct softhca_queue_map *map)
{
	void *p = mmap(NULL, map->length, PROT_READ | PROT_WRITE, MAP_SHARED,
		       ctx->cmd_fd, map->offset);

	if (p == MAP_FAILED)
		return errno;
	*r = (struct ring){
		.ctrl = p, .entries = (char *)p + SOFTHCA_QUEUE_ENTRIES_OFFSET,
		.map = *map,
	};
	return 0;
}

static void *ring_slot(struct ring *r, uint32_t index)
{
	return r->entries + (size_t)(index & (r->map.num_entries - 1)) *
	       r->map.entry_size;
}

static void ring_publish(struct ring *r, uint32_t n)
{
	r->index += n;
	__atomic_store_n(&r->ctrl->producer, r->index, __ATOMIC_SEQ_CST);
}

static int cq_create(struct pair *p)
{
	struct rcp_create_cq_cmd cmd = {};
	struct {
		struct ib_uverbs_create_cq_resp core;
		struct softhca_create_cq_resp drv;
	} resp;
	int err;

	err = ibv_cmd_create_cq(p->ctx, 4 * DEPTH, NULL, 0, &p->cq, &cmd,
				sizeof(cmd), &resp.core, sizeof(resp));
	return err ?: ring_map(p->ctx, &p->cqr, &resp.drv.cq);
}

static int qp_create(struct pair *p, int i)
{
	struct rcp_create_qp_cmd cmd = {};
	struct {
		struct ib_uverbs_create_qp_resp core;
		struct softhca_create_qp_resp drv;
	} resp;
	struct ibv_qp_init_attr attr = {
		.send_cq = &p->cq, .recv_cq = &p->cq, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = DEPTH, .max_recv_wr = DEPTH,
			 .max_send_sge = 2, .max_recv_sge = 2 },
	};
	int err;

	err = ibv_cmd_create_qp(p->pd, &p->qp[i], &attr, &cmd, sizeof(cmd),
				&resp.core, sizeof(resp));
	if (err)
		return err;
	err = ring_map(p->ctx, &p->sq[i], &resp.drv.sq);
	return err ?: ring_map(p->ctx, &p->rq[i], &resp.drv.rq);
}

static int qp_modify(struct ibv_qp *qp, struct ibv_qp_attr *attr, int mask)
{
	struct rcp_modify_qp_cmd cmd = {};

	return ibv_cmd_modify_qp(qp, attr, mask, &cmd, sizeof(cmd));
}

/* INIT, RTR, RTS, connected to the pair's other QP through @gid. */
static int qp_connect(struct pair *p, int i, int gid_index)
{
	struct ibv_qp_attr attr = {
		.qp_state = IBV_QPS_INIT, .port_num = 1,
		.qp_access_flags = IBV_ACCESS_REMOTE_WRITE |
				   IBV_ACCESS_REMOTE_READ,
	};
	int err;

	err = qp_modify(&p->qp[i], &attr, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
	if (err)
		return err;
	attr = (struct ibv_qp_attr){
		.qp_state = IBV_QPS_RTR, .path_mtu = IBV_MTU_1024,
		.dest_qp_num = p->qp[!i].qp_num, .max_dest_rd_atomic = 1,
		.min_rnr_timer = 1,
		.ah_attr = { .is_global = 1, .port_num = 1,
			     .grh = { .sgid_index = gid_index,
				      .hop_limit = 64 } },
	};
	err = ibv_query_gid(p->ctx, 1, gid_index, &attr.ah_attr.grh.dgid);
	err = err ?: qp_modify(&p->qp[i], &attr, IBV_QP_STATE | IBV_QP_AV |
			       IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
			       IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
			       IBV_QP_MIN_RNR_TIMER);
	if (err)
		return err;
	attr = (struct ibv_qp_attr){
		.qp_state = IBV_QPS_RTS, .timeout = 10, .retry_cnt = 1,
		.rnr_retry = 1, .max_rd_atomic = 1,
	};
	return qp_modify(&p->qp[i], &attr, IBV_QP_STATE | IBV_QP_TIMEOUT |
			 IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN |
			 IBV_QP_MAX_QP_RD_ATOMIC);
}

static void pair_destroy(struct pair *p)
{
	int i;

	for (i = 0; i < 2; i++) {
		if (p->qp[i].context)
			ibv_cmd_destroy_qp(&p->qp[i]);
		if (p->sq[i].ctrl)
			munmap(p->sq[i].ctrl, p->sq[i].map.length);
		if (p->rq[i].ctrl)
			munmap(p->rq[i].ctrl, p->rq[i].map.length);
	}
	if (p->cq.context)
		ibv_cmd_destroy_cq(&p->cq);
	if (p->cqr.ctrl)
		munmap(p->cqr.ctrl, p->cqr.map.length);
	if (p->mr)
		ibv_dereg_mr(p->mr);
	free(p->buf);
	memset(p, 0, sizeof(*p));
}

static int pair_create(struct pair *p, struct ibv_context *ctx,
		       struct ibv_pd *pd, int gid_index)
{
	int err;

	memset(p, 0, sizeof(*p));
	memset(seen, 0xff, sizeof(seen));
	p->ctx = ctx;
	p->pd = pd;
	p->buf = calloc(1, 2 * BUF_LEN);
	p->mr = p->buf ? ibv_reg_mr(pd, p->buf, 2 * BUF_LEN,
				    IBV_ACCESS_LOCAL_WRITE) : NULL;
	if (!p->mr)
		return errno;
	err = cq_create(p);
	err = err ?: qp_create(p, 0);
	err = err ?: qp_create(p, 1);
	err = err ?: qp_connect(p, 0, gid_index);
	err = err ?: qp_connect(p, 1, gid_index);
	if (err)
		pair_destroy(p);
	return err;
}

static struct softhca_send_wqe *send_wqe(struct pair *p, int i,
					 uint8_t opcode)
{
	struct softhca_send_wqe *w = ring_slot(&p->sq[i], p->sq[i].index);
	struct softhca_sge *sge = (struct softhca_sge *)(w + 1);

	*w = (struct softhca_send_wqe){
		.wr_id = 0x100 + i, .opcode = opcode, .num_sge = 1,
		.flags = SOFTHCA_WQE_SIGNALED,
	};
	*sge = (struct softhca_sge){
		.addr = (uintptr_t)p->buf + i * BUF_LEN, .length = 64,
		.lkey = p->mr->lkey,
	};
	return w;
}

static void recv_wqe(struct pair *p, int i, uint32_t num_sge)
{
	struct softhca_recv_wqe *w = ring_slot(&p->rq[i], p->rq[i].index);
	struct softhca_sge *sge = (struct softhca_sge *)(w + 1);

	*w = (struct softhca_recv_wqe){ .wr_id = 0x200 + i,
					.num_sge = num_sge };
	*sge = (struct softhca_sge){
		.addr = (uintptr_t)p->buf + i * BUF_LEN, .length = BUF_LEN,
		.lkey = p->mr->lkey,
	};
	ring_publish(&p->rq[i], 1);
}

static void doorbell(struct pair *p, int i)
{
	struct ibv_send_wr *bad;

	ibv_cmd_post_send(&p->qp[i], NULL, &bad);
}

/* Waits up to 5 s for the CQE of @wr_id; returns its status or -1. */
static int wait_cqe(struct pair *p, uint64_t wr_id)
{
	struct ring *r = &p->cqr;
	int tries;

	for (tries = 0; tries < 5000 && seen[wr_id] < 0; tries++) {
		while (__atomic_load_n(&r->ctrl->producer, __ATOMIC_ACQUIRE) !=
		       r->index) {
			struct softhca_cqe *cqe = ring_slot(r, r->index);

			if (cqe->wr_id < sizeof(seen) / sizeof(seen[0]))
				seen[cqe->wr_id] = cqe->status;
			r->index++;
			__atomic_store_n(&r->ctrl->consumer, r->index,
					 __ATOMIC_RELEASE);
		}
		if (seen[wr_id] < 0)
			usleep(1000);
	}
	return seen[wr_id];
}

static int qp_state(struct ibv_qp *qp)
{
	struct rcp_query_qp_cmd cmd = {};
	struct ibv_qp_init_attr init;
	struct ibv_qp_attr attr;

	if (ibv_cmd_query_qp(qp, &attr, IBV_QP_STATE, &init, &cmd,
			     sizeof(cmd)))
		return -1;
	return attr.qp_state;
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
	struct softhca_send_wqe *w = send_wqe(p, 0, opcode);
	char name[128];

	w->num_sge = num_sge;
	((struct softhca_sge *)(w + 1))->lkey = lkey;
	ring_publish(&p->sq[0], 1);
	doorbell(p, 0);
	snprintf(name, sizeof(name), "%s: completes with %s", what,
		 ibv_wc_status_str(want));
	check(name, wait_cqe(p, 0x100) == want);
	snprintf(name, sizeof(name), "%s: the QP is in error", what);
	check(name, qp_state(&p->qp[0]) == IBV_QPS_ERR);
}

static volatile int chaos_stop;

/* Random bytes over every ring of the pair, control blocks included. */
static void *chaos(void *arg)
{
	struct pair *p = arg;
	struct ring *rings[] = { &p->cqr, &p->sq[0], &p->sq[1], &p->rq[0],
				 &p->rq[1] };
	unsigned int seed = 1;

	while (!chaos_stop) {
		struct ring *r = rings[rand_r(&seed) % 5];
		uint32_t *word = (uint32_t *)r->ctrl +
				 rand_r(&seed) % (r->map.length / 4);

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

#define PAIR() check("a fresh QP pair", !pair_create(&p, ctx, pd, gid))
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

	PAIR();
	recv_wqe(&p, 1, 200);
	send_wqe(&p, 0, IBV_WR_SEND);
	ring_publish(&p.sq[0], 1);
	doorbell(&p, 0);
	check("receive WQE with 200 SGEs: the receiver's completion",
	      wait_cqe(&p, 0x201) == IBV_WC_LOC_QP_OP_ERR);
	check("receive WQE with 200 SGEs: the sender gets REM_OP_ERR",
	      wait_cqe(&p, 0x100) == IBV_WC_REM_OP_ERR);
	pair_destroy(&p);

	PAIR();
	p.sq[0].index += 3 * DEPTH;
	ring_publish(&p.sq[0], 0);
	doorbell(&p, 0);
	check("send queue index overrun: QP fatal event",
	      wait_event(ctx, IBV_EVENT_QP_FATAL, &p.qp[0]));
	check("send queue index overrun: the QP is in error",
	      qp_state(&p.qp[0]) == IBV_QPS_ERR);
	check("send queue index overrun: the peer QP is untouched",
	      qp_state(&p.qp[1]) == IBV_QPS_RTS);
	pair_destroy(&p);

	PAIR();
	p.rq[1].index -= 1;
	ring_publish(&p.rq[1], 0);
	send_wqe(&p, 0, IBV_WR_SEND);
	ring_publish(&p.sq[0], 1);
	doorbell(&p, 0);
	check("receive queue index overrun: the sender gets REM_OP_ERR",
	      wait_cqe(&p, 0x100) == IBV_WC_REM_OP_ERR);
	check("receive queue index overrun: QP fatal event",
	      wait_event(ctx, IBV_EVENT_QP_FATAL, &p.qp[1]));
	pair_destroy(&p);

	PAIR();
	__atomic_store_n(&p.cqr.ctrl->consumer, p.cqr.index + 12345,
			 __ATOMIC_SEQ_CST);
	__atomic_store_n(&p.cqr.ctrl->arm, 0x77, __ATOMIC_SEQ_CST);
	recv_wqe(&p, 1, 1);
	send_wqe(&p, 0, IBV_WR_SEND);
	ring_publish(&p.sq[0], 1);
	doorbell(&p, 0);
	check("CQ consumer index overrun: CQ error event",
	      wait_event(ctx, IBV_EVENT_CQ_ERR, &p.cq));
	pair_destroy(&p);

	/* Two seconds of random writes while the engine runs the rings. */
	PAIR();
	chaos_stop = 0;
	ok = !pthread_create(&chaos_thread, NULL, chaos, &p);
	for (end = time(NULL) + 2; ok && time(NULL) < end;) {
		recv_wqe(&p, 1, 1);
		send_wqe(&p, 0, IBV_WR_SEND);
		ring_publish(&p.sq[0], 1);
		doorbell(&p, 0);
		doorbell(&p, 1);
	}
	chaos_stop = 1;
	if (ok)
		pthread_join(chaos_thread, NULL);
	check("random writes over the rings for 2 s", ok);
	pair_destroy(&p);

	/* Still a working context: a clean SEND, its data compared. */
	PAIR();
	memset(p.buf, 0xa5, 64);
	recv_wqe(&p, 1, 1);
	send_wqe(&p, 0, IBV_WR_SEND);
	ring_publish(&p.sq[0], 1);
	doorbell(&p, 0);
	check("afterwards: a SEND completes",
	      wait_cqe(&p, 0x100) == IBV_WC_SUCCESS &&
	      wait_cqe(&p, 0x201) == IBV_WC_SUCCESS);
	check("afterwards: its data arrived",
	      !memcmp(p.buf, p.buf + BUF_LEN, 64));
	pair_destroy(&p);
#undef PAIR

	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	ibv_free_device_list(list);
	return tap_done();
}
