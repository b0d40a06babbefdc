// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * odp-churn DEVICE GID_INDEX: on-demand paging MRs while the process
 * takes their memory back under the transfers.  One RC QP, connected to
 * itself, WRITEs into and READs from an ODP MR over memory it never
 * touched, then:
 * - ibv_advise_mr prefetches (and refuses a range that is not an ODP
 *   MR's);
 * - the bytes a WRITE placed are the bytes the process reads, and what
 *   the process wrote is what a READ returns;
 * - while a thread drops the pages again and again (madvise
 *   MADV_DONTNEED: the mapping stays), once under each transfer, every
 *   transfer completes, each faulting back what it reaches;
 * - while a thread unmaps part of the memory and maps it again, over and
 *   over, every transfer into it completes or fails with a remote access
 *   error, and the QP, reset, goes on; nothing else happens (the kernel
 *   log is the harness's to check); every other time the thread keeps the
 *   memory mapped until a transfer ran whole, so that some complete
 *   however slow the host is;
 * - once the churn ends, the bytes are right again both ways.
 * TAP output; exit 0 when every check passed.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "tap.h"

#define DEPTH		16
#define REGION		(8u << 20)	/* the ODP MR */
#define CHUNK		(256u << 10)	/* one WRITE or READ */
#define HOLE_OFF	(1u << 20)	/* what the unmapping thread takes */
#define HOLE_LEN	(1u << 20)
#define ROUNDS		200

struct env {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_mr *mr;	/* pinned: the other end of each transfer */
	unsigned char *buf;
	struct ibv_mr *odp;
	unsigned char *region;
	union ibv_gid gid;
	int gid_index;
};

static atomic_int churning;
static atomic_int transfers;	/* ended under the churn, whatever their status */

/* RESET, then connected to itself again. */
static int qp_up(struct env *e)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_RESET };

	if (ibv_modify_qp(e->qp, &a, IBV_QP_STATE))
		return -1;
	return tap_rc_connect(e->qp, e->qp->qp_num, &e->gid, e->gid_index);
}

/* One completion's status, -1 after 10 s without one. */
static int poll_one(struct env *e)
{
	struct timespec end, now;
	struct ibv_wc wc;
	int n;

	clock_gettime(CLOCK_MONOTONIC, &end);
	end.tv_sec += 10;
	do {
		n = ibv_poll_cq(e->cq, 1, &wc);
		if (n)
			return n < 0 ? -1 : (int)wc.status;
		clock_gettime(CLOCK_MONOTONIC, &now);
	} while (now.tv_sec < end.tv_sec ||
		 (now.tv_sec == end.tv_sec && now.tv_nsec < end.tv_nsec));
	return -1;
}

/* A WRITE or READ of @len bytes at @off of the buffer and of the region. */
static int rdma(struct env *e, enum ibv_wr_opcode op, uint32_t off,
		uint32_t len)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)e->buf, .length = len, .lkey = e->mr->lkey,
	};
	struct ibv_send_wr wr = {
		.opcode = op, .sg_list = &sge, .num_sge = 1,
		.send_flags = IBV_SEND_SIGNALED,
		.wr.rdma = { .remote_addr = (uintptr_t)e->region + off,
			     .rkey = e->odp->rkey },
	}, *bad;

	if (ibv_post_send(e->qp, &wr, &bad))
		return -1;
	return poll_one(e);
}

static void fill(unsigned char *p, size_t len, unsigned int seed)
{
	size_t i;

	for (i = 0; i < len; i++)
		p[i] = (unsigned char)(seed + i * 7 + (i >> 12));
}

/* The bytes are right both ways, at @off. */
static void both_ways(struct env *e, uint32_t off, unsigned int seed,
		      const char *when)
{
	char what[128];
	int st;

	fill(e->buf, CHUNK, seed);
	st = rdma(e, IBV_WR_RDMA_WRITE, off, CHUNK);
	snprintf(what, sizeof(what), "%s: a WRITE lands in the ODP MR", when);
	tap(!st && !memcmp(e->region + off, e->buf, CHUNK), what,
	    st ? ibv_wc_status_str(st) : NULL);
	fill(e->region + off, CHUNK, seed + 1);
	memset(e->buf, 0, CHUNK);
	st = rdma(e, IBV_WR_RDMA_READ, off, CHUNK);
	snprintf(what, sizeof(what), "%s: a READ returns what the process wrote",
		 when);
	tap(!st && !memcmp(e->region + off, e->buf, CHUNK), what,
	    st ? ibv_wc_status_str(st) : NULL);
}

static void prefetch(struct env *e)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)e->region, .length = CHUNK,
		.lkey = e->odp->lkey,
	};
	int ret;

	ret = ibv_advise_mr(e->pd, IBV_ADVISE_MR_ADVICE_PREFETCH_WRITE,
			    IBV_ADVISE_MR_FLAG_FLUSH, &sge, 1);
	tap(!ret, "advise_mr: prefetch for writing", ret ? strerror(ret) : NULL);
	ret = ibv_advise_mr(e->pd, IBV_ADVISE_MR_ADVICE_PREFETCH_NO_FAULT, 0,
			    &sge, 1);
	tap(!ret, "advise_mr: map what is there, no fault",
	    ret ? strerror(ret) : NULL);
	sge.lkey = e->mr->lkey;
	sge.addr = (uintptr_t)e->buf;
	ret = ibv_advise_mr(e->pd, IBV_ADVISE_MR_ADVICE_PREFETCH, 0, &sge, 1);
	tap(ret == EINVAL, "advise_mr: a pinned MR's range is refused",
	    strerror(ret));
}

/* Until @n transfers have ended under the churn, or the churn ends. */
static void await_transfers(int n)
{
	while (atomic_load(&churning) && atomic_load(&transfers) < n)
		usleep(100);
}

/*
 * A fault retries while its range is invalidated, for a second at most
 * (ib_umem_odp): pages dropped faster than a slow host faults them back
 * fail the transfer (a guest's, 1 or 2 of 200).  Each transfer has its
 * pages dropped under it, then gets to fault them back.
 */
static void *drop_pages(void *arg)
{
	struct env *e = arg;
	int ended;

	while (atomic_load(&churning)) {
		ended = atomic_load(&transfers);
		madvise(e->region, REGION, MADV_DONTNEED);
		await_transfers(ended + 1);
	}
	return NULL;
}

/*
 * A transfer runs whole while the hole is mapped only if it fits in one
 * mapped window, which a slow host's never does (CI's guest once failed
 * all 200): every other window lasts until a transfer that began in it
 * has ended.
 */
static void *remap_hole(void *arg)
{
	struct env *e = arg;
	unsigned int window = 0;
	int ended;
	void *p;

	while (atomic_load(&churning)) {
		munmap(e->region + HOLE_OFF, HOLE_LEN);
		usleep(200);
		p = mmap(e->region + HOLE_OFF, HOLE_LEN,
			 PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
		if (p == MAP_FAILED)
			break;
		ended = atomic_load(&transfers);
		if (window++ & 1)
			usleep(200);
		else
			await_transfers(ended + 2);
	}
	return NULL;
}

/*
 * @fn churns the region while WRITEs and READs run into it; returns how
 * many completed with each status (success, remote access error, other).
 */
static void churn(struct env *e, void *(*fn)(void *), uint32_t base,
		  uint32_t span, int counts[3])
{
	pthread_t t;
	int i, st;

	atomic_store(&churning, 1);
	if (pthread_create(&t, NULL, fn, e)) {
		counts[2] = ROUNDS;
		return;
	}
	for (i = 0; i < ROUNDS; i++) {
		st = rdma(e, i & 1 ? IBV_WR_RDMA_READ : IBV_WR_RDMA_WRITE,
			  base + (uint32_t)(i * 4096u) % (span - CHUNK + 1),
			  CHUNK);
		if (st == IBV_WC_SUCCESS) {
			counts[0]++;
		} else {
			counts[st == IBV_WC_REM_ACCESS_ERR ? 1 : 2]++;
			/* Its only WR failed: the QP is in error; connect again. */
			if (qp_up(e)) {
				counts[2] += ROUNDS - i;
				break;
			}
		}
		atomic_fetch_add(&transfers, 1);
	}
	atomic_store(&churning, 0);
	pthread_join(t, NULL);
}

static void churns(struct env *e)
{
	int dropped[3] = {}, unmapped[3] = {};
	char detail[96];

	churn(e, drop_pages, 0, REGION, dropped);
	snprintf(detail, sizeof(detail), "%d of %d completed", dropped[0],
		 ROUNDS);
	tap(dropped[0] == ROUNDS,
	    "pages dropped under the transfers: every one completes", detail);
	churn(e, remap_hole, HOLE_OFF - CHUNK / 2, HOLE_LEN + CHUNK, unmapped);
	snprintf(detail, sizeof(detail),
		 "%d completed, %d remote access errors, %d else",
		 unmapped[0], unmapped[1], unmapped[2]);
	tap(!unmapped[2] && unmapped[0],
	    "memory unmapped and mapped again under the transfers: each completes or fails cleanly",
	    detail);
}

static int setup(struct env *e)
{
	struct ibv_qp_init_attr qa = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = DEPTH, .max_recv_wr = 1,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};

	if (ibv_query_gid(e->ctx, 1, e->gid_index, &e->gid))
		return -1;
	e->pd = ibv_alloc_pd(e->ctx);
	e->cq = ibv_create_cq(e->ctx, 2 * DEPTH, NULL, NULL, 0);
	e->buf = calloc(1, CHUNK);
	e->region = mmap(NULL, REGION, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (!e->pd || !e->cq || !e->buf || e->region == MAP_FAILED)
		return -1;
	e->mr = ibv_reg_mr(e->pd, e->buf, CHUNK, IBV_ACCESS_LOCAL_WRITE);
	qa.send_cq = e->cq;
	qa.recv_cq = e->cq;
	e->qp = ibv_create_qp(e->pd, &qa);
	if (!e->mr || !e->qp || qp_up(e))
		return -1;
	e->odp = ibv_reg_mr(e->pd, e->region, REGION,
			    IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			    IBV_ACCESS_REMOTE_READ | IBV_ACCESS_ON_DEMAND);
	tap(e->odp != NULL, "an ODP MR over memory never touched",
	    e->odp ? NULL : strerror(errno));
	return e->odp ? 0 : -1;
}

int main(int argc, char **argv)
{
	struct ibv_device **list;
	struct env e = {};

	if (argc != 3) {
		fprintf(stderr, "usage: %s DEVICE GID_INDEX\n", argv[0]);
		return 2;
	}
	e.gid_index = atoi(argv[2]);
	list = ibv_get_device_list(NULL);
	e.ctx = tap_open(list, argv[1]);
	if (!e.ctx || setup(&e)) {
		tap(0, "setup", strerror(errno));
		return tap_done();
	}
	both_ways(&e, 3 * CHUNK + 100, 1, "untouched memory");
	prefetch(&e);
	churns(&e);
	both_ways(&e, HOLE_OFF, 3, "after the churn");
	tap(!ibv_dereg_mr(e.odp), "dereg_mr of the ODP MR", NULL);
	ibv_destroy_qp(e.qp);
	ibv_dereg_mr(e.mr);
	ibv_destroy_cq(e.cq);
	ibv_dealloc_pd(e.pd);
	ibv_close_device(e.ctx);
	ibv_free_device_list(list);
	munmap(e.region, REGION);
	free(e.buf);
	return tap_done();
}
