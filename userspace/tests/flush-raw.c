// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * flush-raw DEVICE GID_INDEX [--refused]: FLUSH (IBA 1.5) through
 * softhca's own rings.  rdma-core 44 has no verb to post one
 * (ibv_wr_flush came with rdma-core 45), so this test writes the WQEs
 * itself (raw.h), on two RC QPs connected to each other:
 * - a WRITE, then a FLUSH of its range with global visibility completes
 *   (IBV_WC_FLUSH), and so do one of the whole MR and one of no bytes;
 *   the WRITE's bytes are there;
 * - a persistent FLUSH (there is no persistent memory here), one of an MR
 *   that does not allow FLUSH and one past the MR's end fail with a
 *   remote access error; a FLUSH WQE with no placement type, or with
 *   data, is malformed: a local QP operation error.
 * With --refused, for a kernel before 6.2, whose ib_core has no FLUSH
 * access flags: no MR and no QP may allow one, and a FLUSH fails with a
 * remote invalid request error.
 * TAP output; exit 0 when every check passed.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "raw.h"
#include "tap.h"

/* ib_user_ioctl_verbs.h's and ib_user_verbs.h's, since 6.2. */
#define ACCESS_FLUSH_GLOBAL	(1 << 8)
#define ACCESS_FLUSH_PERSISTENT	(1 << 9)
#define WR_FLUSH		14
#define FLUSH_GLOBAL		1
#define FLUSH_PERSISTENT	2
#define FLUSH_RANGE		0
#define FLUSH_MR		1

#define TARGET_LEN		4096

struct env {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	int gid_index;
	char *target;
	struct ibv_mr *flushable;	/* remote write and global FLUSH */
	struct ibv_mr *plain;		/* remote write only */
};

/* The QPs allow both placement types, as rdma_cm would set them. */
static int pair_flushable(struct pair *p)
{
	struct ibv_qp_attr a = {
		.qp_access_flags = IBV_ACCESS_REMOTE_WRITE |
				   IBV_ACCESS_REMOTE_READ |
				   ACCESS_FLUSH_GLOBAL |
				   ACCESS_FLUSH_PERSISTENT,
	};
	int i, err = 0;

	for (i = 0; i < 2 && !err; i++)
		err = raw_qp_modify(&p->qp[i], &a, IBV_QP_ACCESS_FLAGS);
	return err;
}

/* Posts QP 0's next WQE and waits for it: its status, or -1. */
static int run(struct pair *p)
{
	p->seen[0x100] = -1;
	ring_publish(&p->sq[0], 1);
	raw_doorbell(&p->qp[0]);
	return pair_wait_cqe(p, 0x100, 5000);
}

static struct softhca_send_wqe *flush_wqe(struct pair *p, uint64_t addr,
					  uint32_t rkey, uint32_t len,
					  uint8_t type, uint8_t level)
{
	struct softhca_send_wqe *w = pair_send_wqe(p, 0, WR_FLUSH);

	w->num_sge = 0;
	w->flush.remote_addr = addr;
	w->flush.rkey = rkey;
	w->flush.length = len;
	w->flush.type = type;
	w->flush.level = level;
	return w;
}

static const char *status_str(int st)
{
	return st < 0 ? "no completion" : ibv_wc_status_str(st);
}

static void expect(int st, int want, const char *what)
{
	tap(st == want, what, status_str(st));
}

/* The completions that go through, on one pair. */
static void flushes(struct env *e, struct pair *p)
{
	struct softhca_send_wqe *w;
	uint32_t rkey = e->flushable->rkey;
	int i;

	for (i = 0; i < 64; i++)
		p->buf[i] = (char)(0x5a ^ i);
	w = pair_send_wqe(p, 0, IBV_WR_RDMA_WRITE);
	w->rdma.remote_addr = (uintptr_t)e->target + 100;
	w->rdma.rkey = rkey;
	expect(run(p), IBV_WC_SUCCESS, "a WRITE into the flushable MR");
	flush_wqe(p, (uintptr_t)e->target + 100, rkey, 64, FLUSH_GLOBAL,
		  FLUSH_RANGE);
	expect(run(p), IBV_WC_SUCCESS,
	       "a FLUSH of its range, global visibility");
	tap(!memcmp(e->target + 100, p->buf, 64), "the WRITE's bytes are there",
	    NULL);
	flush_wqe(p, 0, rkey, 0, FLUSH_GLOBAL, FLUSH_MR);
	expect(run(p), IBV_WC_SUCCESS,
	       "a FLUSH of the whole MR (address and length ignored)");
	flush_wqe(p, (uintptr_t)e->target, rkey, 0, FLUSH_GLOBAL, FLUSH_RANGE);
	expect(run(p), IBV_WC_SUCCESS, "a FLUSH of no bytes");
}

/* One FLUSH that fails, on a pair of its own. */
static void refused(struct env *e, const char *what, uint64_t addr,
		    uint32_t rkey, uint32_t len, uint8_t type, int sge,
		    int want)
{
	struct softhca_send_wqe *w;
	struct pair p;
	int err;

	err = pair_create(&p, e->ctx, e->pd, e->gid_index, 0);
	err = err ?: pair_flushable(&p);
	if (err) {
		tap(0, what, strerror(err));
		return;
	}
	w = flush_wqe(&p, addr, rkey, len, type, FLUSH_RANGE);
	w->num_sge = sge;
	expect(run(&p), want, what);
	pair_destroy(&p);
}

static void on_a_flush_kernel(struct env *e)
{
	uint64_t t = (uintptr_t)e->target;
	struct pair p;
	int err;

	err = pair_create(&p, e->ctx, e->pd, e->gid_index, 0);
	err = err ?: pair_flushable(&p);
	tap(!err, "two RC QPs that allow FLUSH", err ? strerror(err) : NULL);
	if (err)
		return;
	flushes(e, &p);
	pair_destroy(&p);
	refused(e, "a persistent FLUSH: no persistent memory", t,
		e->flushable->rkey, 64, FLUSH_PERSISTENT, 0,
		IBV_WC_REM_ACCESS_ERR);
	refused(e, "a FLUSH of an MR that does not allow one", t,
		e->plain->rkey, 64, FLUSH_GLOBAL, 0, IBV_WC_REM_ACCESS_ERR);
	refused(e, "a FLUSH past the MR's end", t + TARGET_LEN - 8,
		e->flushable->rkey, 16, FLUSH_GLOBAL, 0,
		IBV_WC_REM_ACCESS_ERR);
	refused(e, "a FLUSH WQE with no placement type", t,
		e->flushable->rkey, 64, 0, 0, IBV_WC_LOC_QP_OP_ERR);
	refused(e, "a FLUSH WQE with an SGE", t, e->flushable->rkey, 64,
		FLUSH_GLOBAL, 1, IBV_WC_LOC_QP_OP_ERR);
}

static void on_an_older_kernel(struct env *e)
{
	struct pair p;
	int err;

	tap(!e->flushable, "reg_mr refuses FLUSH access",
	    e->flushable ? "registered" : strerror(errno));
	err = pair_create(&p, e->ctx, e->pd, e->gid_index, 0);
	if (err) {
		tap(0, "two RC QPs", strerror(err));
		return;
	}
	tap(pair_flushable(&p) != 0, "modify_qp refuses FLUSH access", NULL);
	flush_wqe(&p, (uintptr_t)e->target, e->plain->rkey, 64, FLUSH_GLOBAL,
		  FLUSH_RANGE);
	expect(run(&p), IBV_WC_REM_INV_REQ_ERR,
	       "a FLUSH to a QP that cannot allow one");
	pair_destroy(&p);
}

int main(int argc, char **argv)
{
	struct ibv_device **list;
	struct env e = {};
	int older;

	if (argc < 3 || argc > 4 || (argc == 4 && strcmp(argv[3], "--refused"))) {
		fprintf(stderr, "usage: %s DEVICE GID_INDEX [--refused]\n",
			argv[0]);
		return 2;
	}
	older = argc == 4;
	e.gid_index = atoi(argv[2]);
	list = ibv_get_device_list(NULL);
	e.ctx = tap_open(list, argv[1]);
	e.pd = e.ctx ? ibv_alloc_pd(e.ctx) : NULL;
	e.target = calloc(1, TARGET_LEN);
	if (!e.pd || !e.target) {
		tap(0, "setup", strerror(errno));
		return tap_done();
	}
	e.plain = ibv_reg_mr(e.pd, e.target, TARGET_LEN,
			     IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	e.flushable = ibv_reg_mr(e.pd, e.target, TARGET_LEN,
				 IBV_ACCESS_LOCAL_WRITE |
				 IBV_ACCESS_REMOTE_WRITE | ACCESS_FLUSH_GLOBAL);
	if (!e.plain || (!older && !e.flushable)) {
		tap(0, "the target MRs", strerror(errno));
		return tap_done();
	}
	if (older)
		on_an_older_kernel(&e);
	else
		on_a_flush_kernel(&e);
	if (e.flushable)
		ibv_dereg_mr(e.flushable);
	ibv_dereg_mr(e.plain);
	ibv_dealloc_pd(e.pd);
	ibv_close_device(e.ctx);
	ibv_free_device_list(list);
	free(e.target);
	return tap_done();
}
