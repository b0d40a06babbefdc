// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * fuzz-uverbs: random sequences of softhca's uverbs commands.  Each of
 * PROCS worker processes opens the device and runs its share of OPS
 * operations, drawn from a seeded generator, over a small pool of objects:
 * PDs, CQs, QPs (RC, UC, UD), SRQs, MRs and AHs, made through the provider
 * or with the bare commands (raw.h), with edge and random attributes,
 * random state transitions, MRs over unmapped and read-only memory,
 * destroyed in any order (a parent before its children: EBUSY), WRs
 * posted through the provider and written straight into the rings, random
 * words written over the rings, and garbage write() and ioctl() commands;
 * from op table 2 on, on-demand paging MRs, advise_mr over them and over
 * any MR, and QPs attached to and detached from multicast groups (a QP
 * attached is busy until detached; a process that exits leaves its
 * groups through ib_core's cleanup); from table 3 on, memory windows of
 * both types, bound by ibv_bind_mw and by BIND_MW work requests onto
 * parts of MRs (an MR a window may be bound to may be busy), their
 * rkeys used by the WRs and the bare WQEs, deallocated bound or not.
 * Meanwhile, in each worker, a thread runs traffic between two QPs of its
 * own in loopback while another writes random words over their rings;
 * with --peer, in every other worker (the odd ones) the second QP is the
 * peer device's, and their traffic crosses the wire between the two.
 *
 * Every call must be answered with success or an errno of the class the
 * call allows: a valid call succeeds (or finds no memory), a parent with
 * children is busy, a malformed call is refused, and no call gets EFAULT
 * unless it named memory that is not there, nor an errno the kernel keeps
 * for itself (512 and above).  No call may hang (120 s), and at the end
 * each worker makes a fresh QP pair and checks a SEND's data.
 *
 * --fail PCT (root, a kernel with fault injection): while the workers
 * fuzz, softhca's own fault point (debugfs softhca_fail) fails PCT percent
 * of the allocations of every create path, those of the rings and objects
 * of the uverbs paths included, which must then answer ENOMEM and leave
 * nothing behind.  It is turned on once every worker opened the device,
 * and off by the first worker done, before its final check.
 *
 * Each worker logs every operation it made, its arguments and the answer,
 * to DIR/fuzz-uverbs.N.log.  Worker N's operations follow from the seed
 * and the op table (--seed S --table V --worker N replays them), but for
 * what the racing threads change: the log is the record.  --table V
 * draws from the operations of table V only, as they were drawn then: a
 * seed kept in fuzz-uverbs.seeds replays with the table it was found
 * with; the default is the newest (TABLE).
 *
 * Usage: RDMAV_DRIVERS=/abs/path/libsofthca fuzz-uverbs [--dev DEV]
 *        [--gid INDEX] [--seed S] [--ops N] [--procs P] [--seconds T]
 *        [--log DIR] [--worker N] [--fail PCT] [--table V] [--peer DEV]
 * Exit status 0 when every worker found every answer of its class.
 */
#define _GNU_SOURCE	/* strerrorname_np */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <rdma/ib_user_verbs.h>
#include <rdma/rdma_user_ioctl_cmds.h>

#include "raw.h"
#include "softhca.h"
#include "tap.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

enum { K_PD, K_CQ, K_QP, K_SRQ, K_MR, K_AH, K_MW, K_N };
#define NPD 4
#define NCQ 8
#define NQP 16
#define NSRQ 4
#define NMR 8
#define NAH 4
#define NMW 4
static const int nslots[K_N] = { NPD, NCQ, NQP, NSRQ, NMR, NAH, NMW };

/* Sizes past which an object is destroyed as soon as it is made. */
#define BIG 65536u
#define ARENA_PAGES 64
#define STALL_S 120
#define MAX_SGE 64

/* The op table's newest version: what an operation added later adds. */
#define TABLE 4
static int table = TABLE;

/* Answer classes: one bit per errno a call may be answered with. */
enum {
	A_OK = 1 << 0,
	A_EINVAL = 1 << 1,
	A_ENOMEM = 1 << 2,
	A_EBUSY = 1 << 3,
	A_EFAULT = 1 << 4,
	A_OTHER = 1 << 5,	/* any other errno below 512 */
	A_BAD = 1 << 6,		/* an errno the kernel keeps, or none */
};
#define VALID (A_OK | A_ENOMEM)
#define REFUSED (A_OK | A_EINVAL | A_ENOMEM | A_EBUSY | A_OTHER)
#define ANY (REFUSED | A_EFAULT)

struct pd_slot {
	struct ibv_pd *pd;
	int users;
};

struct cq_slot {
	struct ibv_cq *cq;
	struct ibv_cq raw;
	struct ring ring;
	int is_raw, users;
};

struct qp_slot {
	struct ibv_qp *qp;
	struct ibv_qp raw;
	struct ring sq, rq;
	int is_raw, pd, scq, rcq, srq;
	unsigned int mcast;	/* the groups of op_mcast it is attached to */
};

struct srq_slot {
	struct ibv_srq *srq;
	struct ibv_srq raw;
	struct ring ring;
	int is_raw, pd, users;
};

struct mr_slot {
	struct ibv_mr *mr;
	int pd;
};

struct ah_slot {
	struct ibv_ah *ah;
	int pd;
};

struct mw_slot {
	struct ibv_mw *mw;
	int pd;
	unsigned int mrs;	/* the MRs a bind may have put it on */
};

/* One worker process's state. */
static struct {
	int index, log_fd, gid_index, fail;
	uint64_t rng, seed;
	struct ibv_context *ctx;
	struct ibv_device_attr dev;
	union ibv_gid gid;
	struct ibv_pd *tpd;	/* the traffic pair's and the final check's */
	struct ibv_context *peer;	/* the far QP's device, or NULL */
	struct ibv_pd *peer_pd;
	char *arena;
	size_t page;
	unsigned long op, unexpected;
	char what[384];
	int connecting;		/* the QP slot op_connect works on */
	uint32_t live[K_N];
	struct pd_slot pd[NPD];
	struct cq_slot cq[NCQ];
	struct qp_slot qp[NQP];
	struct srq_slot srq[NSRQ];
	struct mr_slot mr[NMR];
	struct ah_slot ah[NAH];
	struct mw_slot mw[NMW];
	/* The traffic pair, and the threads around it. */
	pthread_mutex_t lock;
	struct pair pair;
	int pair_live;
	volatile int stop, stop_events, stop_watchdog;
	unsigned long steps, sends, cqes, pairs, scribbles, events;
} F = { .lock = PTHREAD_MUTEX_INITIALIZER };

/*
 * Shared with the parent: how many workers are set up, whether they may
 * begin (the parent waits for all, to turn the fault point on only once
 * they opened the device; -1: they must not), and each worker's
 * operation count.
 */
static struct shared {
	int ready, go;
	unsigned long ops[];
} *shared;

static uint64_t next(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static uint32_t rnd(uint32_t n)
{
	return n ? next(&F.rng) % n : 0;
}

/* A 32-bit word no handle or user address ever has. */
static uint32_t high32(void)
{
	return 0x10000000u | (uint32_t)next(&F.rng);
}

static void log_line(const char *fmt, ...)
{
	char line[512];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (n >= (int)sizeof(line))
		n = sizeof(line) - 1;
	if (write(F.log_fd, line, n) < 0)
		perror("log");
}

static void begin(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(F.what, sizeof(F.what), fmt, ap);
	va_end(ap);
	F.op++;
	shared->ops[F.index] = F.op;
}

static unsigned int answer_class(int err)
{
	switch (err) {
	case 0:
		return A_OK;
	case EINVAL:
		return A_EINVAL;
	case ENOMEM:
		return A_ENOMEM;
	case EBUSY:
		return A_EBUSY;
	case EFAULT:
		return A_EFAULT;
	}
	return err > 0 && err < 512 ? A_OTHER : A_BAD;
}

static const char *err_name(int err)
{
	const char *name = err > 0 ? strerrorname_np(err) : NULL;

	return err ? name ?: "E?" : "ok";
}

/* Logs the answer @err to the operation begun; is it of class @allowed? */
static int answer(int err, unsigned int allowed)
{
	int bad = !(answer_class(err) & allowed);

	log_line("%lu %s -> %s (%d)%s\n", F.op, F.what, err_name(err), err,
		 bad ? " UNEXPECTED" : "");
	if (bad) {
		__atomic_add_fetch(&F.unexpected, 1, __ATOMIC_RELAXED);
		fprintf(stderr, "worker %d: op %lu: %s -> %s (%d): unexpected\n",
			F.index, F.op, F.what, err_name(err), err);
	}
	return err;
}

/* A random slot of @kind that is (@live) or is not in use, or -1. */
static int pick(int kind, int live)
{
	int n = nslots[kind], start = rnd(n), i, s;

	for (i = 0; i < n; i++) {
		s = (start + i) % n;
		if (!!(F.live[kind] & (1u << s)) == live)
			return s;
	}
	return -1;
}

static void set_live(int kind, int s, int live)
{
	if (live)
		F.live[kind] |= 1u << s;
	else
		F.live[kind] &= ~(1u << s);
}

/* An object of @pd made (@live) or gone: its PD's count follows. */
static void child_live(int kind, int s, int pd, int live)
{
	F.pd[pd].users += live ? 1 : -1;
	set_live(kind, s, live);
}

/* A count for a queue of at most @limit: mostly small, sometimes absurd. */
static uint32_t pick_count(uint32_t limit, int *valid)
{
	static const uint32_t odd[] = { 0, UINT32_MAX, 1u << 31, 1u << 30 };
	uint32_t v;

	switch (rnd(16)) {
	case 0:
		v = odd[rnd(ARRAY_SIZE(odd))];
		break;
	case 1:
		v = limit + 1;
		break;
	case 2:
		v = rnd(64) ? 1 : limit;
		break;
	default:
		v = 1 + rnd(rnd(4) ? 16 : 1024);
	}
	*valid &= v >= 1 && v <= limit;
	return v;
}

static void destroy(int kind, int s);

/* --- PDs, CQs ----------------------------------------------------------- */

static void op_alloc_pd(void)
{
	int s = pick(K_PD, 0);

	if (s < 0)
		return;
	begin("alloc_pd pd%d", s);
	F.pd[s].pd = ibv_alloc_pd(F.ctx);
	answer(F.pd[s].pd ? 0 : errno, VALID);
	F.pd[s].users = 0;
	set_live(K_PD, s, !!F.pd[s].pd);
}

static int pd_dealloc(int s)
{
	int err = ibv_dealloc_pd(F.pd[s].pd);

	if (!err)
		set_live(K_PD, s, 0);
	return err;
}

static int cq_destroy(int s)
{
	struct cq_slot *c = &F.cq[s];
	int err;

	err = c->is_raw ? ibv_cmd_destroy_cq(c->cq) : ibv_destroy_cq(c->cq);
	if (err)
		return err;
	ring_unmap(&c->ring);
	set_live(K_CQ, s, 0);
	return 0;
}

static void op_create_cq(void)
{
	int s = pick(K_CQ, 0), valid = 1, vec, err;
	struct cq_slot *c;
	uint32_t cqe;

	if (s < 0)
		return;
	c = &F.cq[s];
	cqe = pick_count(F.dev.max_cqe, &valid);
	vec = rnd(8) ? 0 : rnd(4);
	valid &= vec < F.ctx->num_comp_vectors;
	c->is_raw = rnd(2);
	begin("create_cq cq%d %s cqe %u vector %d", s,
	      c->is_raw ? "raw" : "provider", cqe, vec);
	if (c->is_raw) {
		memset(&c->raw, 0, sizeof(c->raw));
		err = raw_cq_create(F.ctx, cqe, &c->raw, &c->ring);
		c->cq = err ? NULL : &c->raw;
	} else {
		c->cq = ibv_create_cq(F.ctx, cqe, NULL, NULL, vec);
		err = c->cq ? 0 : errno;
	}
	answer(err, valid ? VALID : REFUSED);
	if (err)
		return;
	c->users = 0;
	set_live(K_CQ, s, 1);
	if (cqe > BIG)
		destroy(K_CQ, s);
}

static void op_resize_cq(void)
{
	int s = pick(K_CQ, 1), valid = 1;
	uint32_t cqe;

	if (s < 0 || F.cq[s].is_raw)
		return;
	cqe = pick_count(BIG, &valid);
	begin("resize_cq cq%d cqe %u", s, cqe);
	answer(ibv_resize_cq(F.cq[s].cq, cqe), REFUSED);
}

/* Takes a CQ's completions, or arms it. */
static void op_poll(void)
{
	struct ibv_wc wc[16];
	int s = pick(K_CQ, 1), n, seen[1];

	if (s < 0)
		return;
	if (F.cq[s].is_raw) {
		begin("poll cq%d raw ring", s);
		n = cq_ring_poll(&F.cq[s].ring, seen, 0);
		log_line("%lu %s -> %d CQEs\n", F.op, F.what, n);
		return;
	}
	if (rnd(4)) {
		begin("poll_cq cq%d", s);
		n = ibv_poll_cq(F.cq[s].cq, ARRAY_SIZE(wc), wc);
		answer(n < 0 ? -n : 0, A_OK);
		return;
	}
	n = rnd(2);
	begin("req_notify_cq cq%d solicited %d", s, n);
	answer(ibv_req_notify_cq(F.cq[s].cq, n), A_OK);
}

/* --- QPs ---------------------------------------------------------------- */

static int qp_modify(int s, struct ibv_qp_attr *attr, int mask)
{
	struct qp_slot *q = &F.qp[s];
	int err;

	err = q->is_raw ? raw_qp_modify(q->qp, attr, mask) :
			  ibv_modify_qp(q->qp, attr, mask);
	/* RESET empties the rings: the kernel zeroed their indices. */
	if (!err && q->is_raw && mask & IBV_QP_STATE &&
	    attr->qp_state == IBV_QPS_RESET)
		q->sq.index = q->rq.index = 0;
	return err;
}

static int qp_destroy(int s)
{
	struct qp_slot *q = &F.qp[s];
	int err;

	err = q->is_raw ? ibv_cmd_destroy_qp(q->qp) : ibv_destroy_qp(q->qp);
	if (err)
		return err;
	ring_unmap(&q->sq);
	ring_unmap(&q->rq);
	F.pd[q->pd].users--;
	F.cq[q->scq].users--;
	F.cq[q->rcq].users--;
	if (q->srq >= 0)
		F.srq[q->srq].users--;
	set_live(K_QP, s, 0);
	return 0;
}

static enum ibv_qp_type pick_qp_type(int *valid)
{
	static const enum ibv_qp_type odd[] = { 0, IBV_QPT_RAW_PACKET, 0x7f };
	uint32_t r = rnd(10);

	if (r < 4)
		return IBV_QPT_RC;
	if (r < 6)
		return IBV_QPT_UC;
	if (r < 9)
		return IBV_QPT_UD;
	*valid = 0;
	return odd[rnd(ARRAY_SIZE(odd))];
}

static void qp_caps(struct ibv_qp_cap *cap, int srq, int *valid)
{
	cap->max_send_wr = pick_count(F.dev.max_qp_wr, valid);
	cap->max_send_sge = pick_count(F.dev.max_sge, valid);
	/* A QP of an SRQ has no RQ: 0, or caps it must check all the same. */
	if (srq && rnd(2)) {
		cap->max_recv_wr = 0;
		cap->max_recv_sge = 0;
	} else {
		cap->max_recv_wr = pick_count(F.dev.max_qp_wr, valid);
		cap->max_recv_sge = pick_count(F.dev.max_sge, valid);
	}
	cap->max_inline_data = rnd(4) ? 0 : pick_count(64, valid);
}

static int qp_make(int s, struct ibv_qp_init_attr *a)
{
	struct qp_slot *q = &F.qp[s];
	int err;

	if (q->is_raw) {
		memset(&q->raw, 0, sizeof(q->raw));
		err = raw_qp_create(F.pd[q->pd].pd, a, &q->raw, &q->sq, &q->rq);
		q->qp = err ? NULL : &q->raw;
		return err;
	}
	q->qp = ibv_create_qp(F.pd[q->pd].pd, a);
	return q->qp ? 0 : errno;
}

static void op_create_qp(void)
{
	struct ibv_qp_init_attr a = {};
	int s = pick(K_QP, 0), valid = 1;
	struct qp_slot *q;

	if (s < 0)
		return;
	q = &F.qp[s];
	*q = (struct qp_slot){
		.is_raw = rnd(2), .pd = pick(K_PD, 1), .scq = pick(K_CQ, 1),
		.rcq = pick(K_CQ, 1), .srq = rnd(3) ? -1 : pick(K_SRQ, 1),
	};
	if (q->pd < 0 || q->scq < 0 || q->rcq < 0)
		return;
	/* The provider's QPs clean their CQs: bare CQs are for bare QPs. */
	q->is_raw |= F.cq[q->scq].is_raw | F.cq[q->rcq].is_raw;
	a.qp_type = pick_qp_type(&valid);
	a.send_cq = F.cq[q->scq].cq;
	a.recv_cq = F.cq[q->rcq].cq;
	a.srq = q->srq >= 0 ? F.srq[q->srq].srq : NULL;
	a.sq_sig_all = rnd(2);
	qp_caps(&a.cap, q->srq >= 0, &valid);
	begin("create_qp qp%d %s type %d pd%d cq%d cq%d srq%d wr %u/%u sge %u/%u inline %u",
	      s, q->is_raw ? "raw" : "provider", a.qp_type, q->pd, q->scq,
	      q->rcq, q->srq, a.cap.max_send_wr, a.cap.max_recv_wr,
	      a.cap.max_send_sge, a.cap.max_recv_sge, a.cap.max_inline_data);
	if (answer(qp_make(s, &a), valid ? VALID : REFUSED))
		return;
	F.pd[q->pd].users++;
	F.cq[q->scq].users++;
	F.cq[q->rcq].users++;
	if (q->srq >= 0)
		F.srq[q->srq].users++;
	set_live(K_QP, s, 1);
	if (a.cap.max_send_wr > BIG || a.cap.max_recv_wr > BIG)
		destroy(K_QP, s);
}

static void op_query_qp(void)
{
	struct ibv_qp_init_attr init;
	struct ibv_qp_attr attr;
	int s = pick(K_QP, 1);

	if (s < 0)
		return;
	begin("query_qp qp%d", s);
	answer(ibv_query_qp(F.qp[s].qp, &attr, (IBV_QP_DEST_QPN << 1) - 1,
			    &init), A_OK);
}

/* An address: mostly ours (valid), or a multicast GID, or noise. */
static void random_ah(struct ibv_ah_attr *ah, int *valid)
{
	*ah = (struct ibv_ah_attr){
		.is_global = rnd(16) != 0, .port_num = rnd(16) ? 1 : rnd(256),
		.sl = rnd(16), .static_rate = rnd(8) ? 0 : rnd(32),
		.dlid = rnd(65536), .src_path_bits = rnd(2) ? 0 : rnd(256),
		.grh = {
			.dgid = F.gid, .flow_label = rnd(1 << 21),
			.sgid_index = rnd(8) ? (uint32_t)F.gid_index : rnd(256),
			.hop_limit = rnd(256), .traffic_class = rnd(256),
		},
	};
	*valid &= ah->is_global && ah->port_num == 1 && !ah->static_rate &&
		  ah->grh.sgid_index == F.gid_index &&
		  ah->grh.flow_label < (1 << 20);
	switch (rnd(16)) {
	case 0:
		ah->grh.dgid.raw[0] = 0xff;
		ah->grh.dgid.raw[1] = 0x0e;
		*valid = 0;
		break;
	case 1:
		ah->grh.dgid.global.subnet_prefix = next(&F.rng);
		ah->grh.dgid.global.interface_id = next(&F.rng);
		*valid = 0;
	}
}

/* Attributes for any transition, some of them out of range. */
static void random_qp_attr(struct ibv_qp_attr *a)
{
	int ignored = 1, s = pick(K_QP, 1);

	*a = (struct ibv_qp_attr){
		.qp_state = rnd(9), .cur_qp_state = rnd(9),
		.path_mtu = rnd(8), .qkey = next(&F.rng),
		.rq_psn = next(&F.rng), .sq_psn = next(&F.rng),
		.dest_qp_num = s >= 0 && rnd(2) ? F.qp[s].qp->qp_num :
			       (uint32_t)next(&F.rng),
		.qp_access_flags = rnd(2) ? rnd(16) : next(&F.rng),
		.pkey_index = rnd(4) ? 0 : rnd(65536),
		.alt_pkey_index = rnd(65536),
		.en_sqd_async_notify = rnd(2), .sq_draining = rnd(2),
		.max_rd_atomic = rnd(2) ? rnd(4) : rnd(256),
		.max_dest_rd_atomic = rnd(2) ? rnd(4) : rnd(256),
		.min_rnr_timer = rnd(256), .port_num = rnd(8) ? 1 : rnd(256),
		.timeout = rnd(256), .retry_cnt = rnd(256),
		.rnr_retry = rnd(256), .alt_port_num = rnd(256),
		.alt_timeout = rnd(256), .rate_limit = rnd(8) ? 0 : rnd(1000),
	};
	random_ah(&a->ah_attr, &ignored);
	random_ah(&a->alt_ah_attr, &ignored);
	qp_caps(&a->cap, 0, &ignored);
}

static void op_modify_qp(void)
{
	struct ibv_qp_attr a;
	int s = pick(K_QP, 1), mask;

	if (s < 0)
		return;
	random_qp_attr(&a);
	mask = rnd(4) ? IBV_QP_STATE | (int)rnd(IBV_QP_RATE_LIMIT << 1) :
			1 << rnd(27);
	begin("modify_qp qp%d state %d mask %#x mtu %d dest %#x port %d access %#x sgid %d",
	      s, a.qp_state, mask, a.path_mtu, a.dest_qp_num, a.port_num,
	      a.qp_access_flags, a.ah_attr.grh.sgid_index);
	answer(qp_modify(s, &a, mask), REFUSED);
}

/* raw_qp_connect's modify: the provider's or the bare command. */
static int modify_fn(struct ibv_qp *qp, struct ibv_qp_attr *attr, int mask)
{
	return qp == F.qp[F.connecting].qp ?
	       qp_modify(F.connecting, attr, mask) : EINVAL;
}

/* A UD QP through INIT and RTR to RTS. */
static int ud_ready(int s)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT, .port_num = 1, .qkey = 0x11111111,
	};
	int err;

	err = qp_modify(s, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
			IBV_QP_QKEY);
	a.qp_state = IBV_QPS_RTR;
	err = err ?: qp_modify(s, &a, IBV_QP_STATE);
	a.qp_state = IBV_QPS_RTS;
	return err ?: qp_modify(s, &a, IBV_QP_STATE | IBV_QP_SQ_PSN);
}

/* A QP in RESET connected, the right way, to one of the same type. */
static void op_connect(void)
{
	int s = pick(K_QP, 1), t, i, state, err;
	struct ibv_qp *qp;

	if (s < 0)
		return;
	qp = F.qp[s].qp;
	if (qp->qp_type != IBV_QPT_RC && qp->qp_type != IBV_QPT_UC &&
	    qp->qp_type != IBV_QPT_UD)
		return;
	for (t = pick(K_QP, 1), i = 0; i < 4; i++, t = pick(K_QP, 1))
		if (F.qp[t].qp->qp_type == qp->qp_type)
			break;
	if (F.qp[t].qp->qp_type != qp->qp_type)
		t = s;
	state = raw_qp_state(qp);
	begin("connect qp%d (type %d, state %d) to qp%d", s, qp->qp_type,
	      state, t);
	F.connecting = s;
	if (qp->qp_type == IBV_QPT_UD)
		err = ud_ready(s);
	else
		err = raw_qp_connect(qp, modify_fn, F.qp[t].qp->qp_num,
				     F.gid_index);
	answer(err, state == IBV_QPS_RESET ? A_OK : REFUSED);
}

/* RESET or ERR: from any state. */
static void op_reset(void)
{
	struct ibv_qp_attr a = { .qp_state = rnd(2) ? IBV_QPS_RESET :
						      IBV_QPS_ERR };
	int s = pick(K_QP, 1);

	if (s < 0)
		return;
	begin("modify_qp qp%d to %s", s, a.qp_state ? "ERR" : "RESET");
	answer(qp_modify(s, &a, IBV_QP_STATE), A_OK);
}

/* --- SRQs, MRs, AHs ------------------------------------------------------ */

static int srq_destroy(int s)
{
	struct srq_slot *q = &F.srq[s];
	int err;

	err = q->is_raw ? ibv_cmd_destroy_srq(q->srq) : ibv_destroy_srq(q->srq);
	if (err)
		return err;
	ring_unmap(&q->ring);
	child_live(K_SRQ, s, q->pd, 0);
	return 0;
}

static void op_create_srq(void)
{
	struct ibv_srq_init_attr a = {};
	int s = pick(K_SRQ, 0), valid = 1, err;
	struct srq_slot *q;

	if (s < 0)
		return;
	q = &F.srq[s];
	q->pd = pick(K_PD, 1);
	if (q->pd < 0)
		return;
	q->is_raw = rnd(2);
	a.attr.max_wr = pick_count(F.dev.max_srq_wr, &valid);
	a.attr.max_sge = pick_count(F.dev.max_srq_sge, &valid);
	a.attr.srq_limit = rnd(2) ? 0 : rnd(2) ? rnd(a.attr.max_wr) :
					 (uint32_t)next(&F.rng);
	valid &= a.attr.srq_limit < a.attr.max_wr;
	begin("create_srq srq%d %s pd%d wr %u sge %u limit %u", s,
	      q->is_raw ? "raw" : "provider", q->pd, a.attr.max_wr,
	      a.attr.max_sge, a.attr.srq_limit);
	if (q->is_raw) {
		memset(&q->raw, 0, sizeof(q->raw));
		err = raw_srq_create(F.pd[q->pd].pd, &a, &q->raw, &q->ring);
		q->srq = err ? NULL : &q->raw;
	} else {
		q->srq = ibv_create_srq(F.pd[q->pd].pd, &a);
		err = q->srq ? 0 : errno;
	}
	if (answer(err, valid ? VALID : REFUSED))
		return;
	q->users = 0;
	child_live(K_SRQ, s, q->pd, 1);
	if (a.attr.max_wr > BIG)
		destroy(K_SRQ, s);
}

static void op_modify_srq(void)
{
	struct ibv_srq_attr a = {
		.max_wr = rnd(64), .srq_limit = rnd(2) ? rnd(16) : rnd(65536),
	};
	int s = pick(K_SRQ, 1), mask = rnd(4);

	if (s < 0)
		return;
	begin("modify_srq srq%d mask %#x wr %u limit %u", s, mask, a.max_wr,
	      a.srq_limit);
	answer(ibv_modify_srq(F.srq[s].srq, &a, mask), REFUSED);
}

/*
 * The arena's pages: 0-31 and 48-63 read-write, 32-39 not mapped, 40-43
 * without access, 44-47 read-only.  May @page be pinned for @write?
 */
static int page_ok(long page, int write)
{
	if (page < 0 || page >= ARENA_PAGES)
		return 0;
	if (page < 32 || page >= 48)
		return 1;
	return page >= 44 && !write;
}

static int arena_init(void)
{
	size_t ps = F.page;

	F.arena = mmap(NULL, ARENA_PAGES * ps, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	if (F.arena == MAP_FAILED)
		return errno;
	memset(F.arena, 0x5a, ARENA_PAGES * ps);
	if (munmap(F.arena + 32 * ps, 8 * ps) ||
	    mprotect(F.arena + 40 * ps, 4 * ps, PROT_NONE) ||
	    mprotect(F.arena + 44 * ps, 4 * ps, PROT_READ))
		return errno;
	return 0;
}

/* A range of the arena, or an address no process has. */
static char *pick_range(size_t *len, int *valid, int write)
{
	static const uintptr_t odd[] = {
		0, 4096, 0xffffffff81000000ull, 0x0000800000000000ull,
	};
	long first, last;
	char *addr;

	if (!rnd(16)) {
		*valid = 0;
		*len = rnd(2) ? F.page : (size_t)next(&F.rng);
		return (char *)odd[rnd(ARRAY_SIZE(odd))];
	}
	addr = F.arena + rnd(ARENA_PAGES) * F.page +
	       (rnd(4) ? 0 : rnd(F.page));
	*len = rnd(32) ? 1 + rnd(rnd(2) ? F.page : 16 * F.page) :
			 (size_t)next(&F.rng);
	*valid &= *len < (1u << 30);
	if (!*valid)
		return addr;
	first = (addr - F.arena) / F.page;
	last = (addr + *len - 1 - F.arena) / F.page;
	for (; first <= last; first++)
		*valid &= page_ok(first, write);
	return addr;
}

static void op_reg_mr(void)
{
	static const int access[] = {
		0, IBV_ACCESS_LOCAL_WRITE,
		IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE,
		IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
		IBV_ACCESS_REMOTE_READ,
		IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_ATOMIC,
		IBV_ACCESS_REMOTE_READ,
	};
	int s = pick(K_MR, 0), pd = pick(K_PD, 1), valid, acc, iova;
	size_t len, i;
	char *addr;

	if (s < 0 || pd < 0)
		return;
	acc = rnd(8) ? access[rnd(ARRAY_SIZE(access))] : (int)next(&F.rng);
	for (i = 0, valid = 0; i < ARRAY_SIZE(access); i++)
		valid |= acc == access[i];
	/*
	 * Windows bind only to an MR that allows it, which makes it writable
	 * (a window may grant remote writes): its pages must be.
	 */
	if (table >= 3 && rnd(2))
		acc |= IBV_ACCESS_MW_BIND;
	addr = pick_range(&len, &valid, acc & ~IBV_ACCESS_REMOTE_READ);
	/* On demand, memory that is not there is found at a fault, later. */
	if (table >= 2 && !rnd(4)) {
		acc |= IBV_ACCESS_ON_DEMAND;
		valid = 0;
	}
	iova = !rnd(4);
	begin("reg_mr mr%d pd%d addr %p (page %ld) len %#zx access %#x%s", s,
	      pd, addr, (long)(addr - F.arena) / (long)F.page, len, acc,
	      iova ? " iova" : "");
	/* An IOVA keeps the address's offset in its page, as it must. */
	F.mr[s].mr = iova ? ibv_reg_mr_iova(F.pd[pd].pd, addr, len,
					    (next(&F.rng) & 0xfffffffff000ull) |
					    ((uintptr_t)addr & 0xfff), acc) :
			    ibv_reg_mr(F.pd[pd].pd, addr, len, acc);
	if (answer(F.mr[s].mr ? 0 : errno, valid ? VALID : ANY))
		return;
	F.mr[s].pd = pd;
	child_live(K_MR, s, pd, 1);
}

/* How many live windows a bind may have put on MR @s. */
static int mr_windows(int s)
{
	int w, n = 0;

	for (w = 0; w < NMW; w++)
		n += (F.live[K_MW] & 1u << w) && (F.mw[w].mrs & 1u << s);
	return n;
}

static int mr_dereg(int s)
{
	int err = ibv_dereg_mr(F.mr[s].mr), w;

	if (err)
		return err;
	/* No window was bound to it, after all. */
	for (w = 0; w < NMW; w++)
		F.mw[w].mrs &= ~(1u << s);
	child_live(K_MR, s, F.mr[s].pd, 0);
	return 0;
}

static void op_create_ah(void)
{
	int s = pick(K_AH, 0), pd = pick(K_PD, 1), valid = 1;
	struct ibv_ah_attr a;

	if (s < 0 || pd < 0)
		return;
	random_ah(&a, &valid);
	begin("create_ah ah%d pd%d global %d port %d sgid %d rate %d dgid %02x%02x..%02x%02x",
	      s, pd, a.is_global, a.port_num, a.grh.sgid_index,
	      a.static_rate, a.grh.dgid.raw[0], a.grh.dgid.raw[1],
	      a.grh.dgid.raw[14], a.grh.dgid.raw[15]);
	F.ah[s].ah = ibv_create_ah(F.pd[pd].pd, &a);
	if (answer(F.ah[s].ah ? 0 : errno, valid ? VALID : REFUSED))
		return;
	F.ah[s].pd = pd;
	child_live(K_AH, s, pd, 1);
}

static int ah_destroy(int s)
{
	int err = ibv_destroy_ah(F.ah[s].ah);

	if (err)
		return err;
	child_live(K_AH, s, F.ah[s].pd, 0);
	return 0;
}

/* --- Destroying, in any order ------------------------------------------- */

/* --- Memory windows --------------------------------------------------- */

static void op_alloc_mw(void)
{
	int s = pick(K_MW, 0), pd = pick(K_PD, 1), type;

	if (s < 0 || pd < 0)
		return;
	type = rnd(8) ? IBV_MW_TYPE_1 + (int)rnd(2) : (int)rnd(256);
	begin("alloc_mw mw%d pd%d type %d", s, pd, type);
	F.mw[s].mw = ibv_alloc_mw(F.pd[pd].pd, type);
	if (answer(F.mw[s].mw ? 0 : errno,
		   type == IBV_MW_TYPE_1 || type == IBV_MW_TYPE_2 ?
		   VALID : REFUSED))
		return;
	F.mw[s].pd = pd;
	F.mw[s].mrs = 0;
	child_live(K_MW, s, pd, 1);
}

/*
 * A live slot of @kind of PD @pd (a provider's RC or UC QP in RTS, for
 * K_QP) from a random start, or -1: where a bind can take.
 */
static int pick_of_pd(int kind, int pd)
{
	int n = nslots[kind], start = rnd(n), i, s;

	for (i = 0; i < n; i++) {
		s = (start + i) % n;
		if (!(F.live[kind] & 1u << s))
			continue;
		if (kind == K_MR && F.mr[s].pd == pd)
			return s;
		if (kind == K_QP && F.qp[s].pd == pd && !F.qp[s].is_raw &&
		    F.qp[s].qp->qp_type != IBV_QPT_UD &&
		    F.qp[s].qp->state == IBV_QPS_RTS)
			return s;
	}
	return -1;
}

/*
 * A window bound onto part of an MR (any MR: of another PD, without
 * MW_BIND, a range past its end) or unbound, by ibv_bind_mw (type 1) or
 * a BIND_MW work request (type 2), on any QP.  The bind itself runs in
 * the engine: what it answers is the completion's, and the MR may or
 * may not hold the window afterwards.
 */
static void op_bind_mw(void)
{
	static const unsigned int access[] = {
		0, IBV_ACCESS_REMOTE_READ, IBV_ACCESS_REMOTE_WRITE,
		IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE |
		IBV_ACCESS_REMOTE_ATOMIC,
		IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_ZERO_BASED,
	};
	struct ibv_mw_bind_info info = {};
	int w = pick(K_MW, 1), q, m, err;
	struct ibv_send_wr wr, *bad;
	struct ibv_mw_bind b;
	struct ibv_mr *mr;
	uint64_t off;

	if (w < 0)
		return;
	/* Mostly where it can take: a QP in RTS and an MR of its PD. */
	q = rnd(4) ? pick_of_pd(K_QP, F.mw[w].pd) : -1;
	q = q < 0 ? pick(K_QP, 1) : q;
	m = rnd(4) ? pick_of_pd(K_MR, F.mw[w].pd) : -1;
	m = m < 0 ? pick(K_MR, 1) : m;
	if (q < 0 || F.qp[q].is_raw)
		return;
	if (m >= 0 && rnd(8)) {
		mr = F.mr[m].mr;
		off = rnd(mr->length + 1);
		info = (struct ibv_mw_bind_info){
			.mr = mr, .addr = (uintptr_t)mr->addr + off,
			.length = rnd(8) ? rnd(mr->length - off + 1) :
					   next(&F.rng),
			.mw_access_flags = rnd(8) ?
				access[rnd(ARRAY_SIZE(access))] :
				(unsigned int)next(&F.rng),
		};
	}
	if (rnd(2)) {
		b = (struct ibv_mw_bind){ .wr_id = next(&F.rng),
					  .send_flags = rnd(4),
					  .bind_info = info };
		begin("bind_mw mw%d qp%d mr%d addr %#" PRIx64 " len %#" PRIx64 " access %#x",
		      w, q, info.mr ? m : -1, info.addr, info.length,
		      info.mw_access_flags);
		err = ibv_bind_mw(F.qp[q].qp, F.mw[w].mw, &b);
	} else {
		wr = (struct ibv_send_wr){
			.wr_id = next(&F.rng), .opcode = IBV_WR_BIND_MW,
			.send_flags = rnd(4),
			.bind_mw = { .mw = F.mw[w].mw,
				     .rkey = ibv_inc_rkey(F.mw[w].mw->rkey),
				     .bind_info = info },
		};
		begin("post_send bind_mw mw%d qp%d mr%d addr %#" PRIx64 " len %#" PRIx64 " access %#x",
		      w, q, info.mr ? m : -1, info.addr, info.length,
		      info.mw_access_flags);
		err = ibv_post_send(F.qp[q].qp, &wr, &bad);
		/* A type 2 window's new rkey is its poster's to keep. */
		if (!err)
			F.mw[w].mw->rkey = wr.bind_mw.rkey;
	}
	if (!answer(err, REFUSED) && info.mr)
		F.mw[w].mrs |= 1u << m;
}

static int mw_dealloc(int s)
{
	int err = ibv_dealloc_mw(F.mw[s].mw);

	if (err)
		return err;
	child_live(K_MW, s, F.mw[s].pd, 0);
	return 0;
}

/* A live window's rkey, mostly, from table 3 on; else @other. */
static uint32_t window_rkey(uint32_t other)
{
	int w;

	if (table < 3 || !rnd(2))
		return other;
	w = pick(K_MW, 1);
	return w >= 0 ? F.mw[w].mw->rkey : other;
}

static int (*const destroyers[K_N])(int s) = {
	[K_PD] = pd_dealloc, [K_CQ] = cq_destroy, [K_QP] = qp_destroy,
	[K_SRQ] = srq_destroy, [K_MR] = mr_dereg, [K_AH] = ah_destroy,
	[K_MW] = mw_dealloc,
};

static const char *const kind_names[K_N] = {
	[K_PD] = "pd", [K_CQ] = "cq", [K_QP] = "qp", [K_SRQ] = "srq",
	[K_MR] = "mr", [K_AH] = "ah", [K_MW] = "mw",
};

/* A parent with children is busy: QPs on a CQ, an SRQ or a PD, ... */
static int users(int kind, int s)
{
	switch (kind) {
	case K_PD:
		return F.pd[s].users;
	case K_CQ:
		return F.cq[s].users;
	case K_SRQ:
		return F.srq[s].users;
	case K_QP:
		return __builtin_popcount(F.qp[s].mcast);
	}
	return 0;
}

static void destroy(int kind, int s)
{
	int n = users(kind, s);
	unsigned int allowed = n ? A_EBUSY : A_OK;

	/* A window holds the MR it is bound to: busy, if the bind took. */
	if (kind == K_MR && mr_windows(s))
		allowed = A_OK | A_EBUSY;
	begin("destroy %s%d (%d users)", kind_names[kind], s, n);
	answer(destroyers[kind](s), allowed);
}

/* Any object, a QP or an MR more often than a PD. */
static void op_destroy(void)
{
	int weight[K_N] = {
		[K_PD] = 2, [K_CQ] = 3, [K_QP] = 4, [K_SRQ] = 2, [K_MR] = 4,
		[K_AH] = 2, [K_MW] = table >= 3 ? 2 : 0,
	};
	int kind, r, s, total = 0;

	for (kind = 0; kind < K_N; kind++)
		total += weight[kind];
	r = rnd(total);
	for (kind = 0; r >= weight[kind]; kind++)
		r -= weight[kind];
	s = pick(kind, 1);
	if (s >= 0)
		destroy(kind, s);
}

/* --- Work requests --------------------------------------------------------- */

/*
 * May user space read @len bytes at @addr?  Only in the arena: an MR that
 * the kernel took past it may cover a ring unmapped since.
 */
static int arena_readable(uint64_t addr, uint64_t len)
{
	uint64_t start = (uintptr_t)F.arena, page;

	if (addr < start || len > ARENA_PAGES * F.page ||
	    addr - start + len > ARENA_PAGES * F.page)
		return 0;
	for (page = (addr - start) / F.page;
	     len && page <= (addr - start + len - 1) / F.page; page++)
		if (!page_ok(page, 0))
			return 0;
	return 1;
}

/*
 * An SGE in a registered MR, or anywhere with any key.  Returns 1 when
 * user space may read what it names.
 */
static int random_sge(struct ibv_sge *sge)
{
	int m = pick(K_MR, 1);
	struct ibv_mr *mr;
	size_t off;

	if (m < 0 || !rnd(8)) {
		*sge = (struct ibv_sge){
			.addr = next(&F.rng), .length = rnd(8192),
			.lkey = next(&F.rng),
		};
		return 0;
	}
	mr = F.mr[m].mr;
	off = rnd(mr->length);
	*sge = (struct ibv_sge){
		.addr = (uintptr_t)mr->addr + off,
		.length = rnd(mr->length - off + 1), .lkey = mr->lkey,
	};
	return arena_readable(sge->addr, sge->length);
}

/*
 * A send WR for a QP of @type.  A UD QP's always carries a live AH or
 * none: the provider takes wr.ud.ah as a pointer, like every provider, and
 * a WR of the other kinds would hand it a random remote_addr in its place
 * (the union), which crashes this process, not the kernel.
 */
static void random_send_wr(struct ibv_send_wr *wr, struct ibv_sge *sge,
			   enum ibv_qp_type type)
{
	static const enum ibv_wr_opcode ops[] = {
		IBV_WR_SEND, IBV_WR_SEND_WITH_IMM, IBV_WR_RDMA_WRITE,
		IBV_WR_RDMA_WRITE_WITH_IMM, IBV_WR_RDMA_READ,
		IBV_WR_ATOMIC_CMP_AND_SWP, IBV_WR_ATOMIC_FETCH_AND_ADD,
		IBV_WR_SEND_WITH_INV,
	};
	int m = pick(K_MR, 1), a = pick(K_AH, 1), q = pick(K_QP, 1), i;
	int readable = 1;

	*wr = (struct ibv_send_wr){
		.wr_id = next(&F.rng),
		.opcode = rnd(8) ? ops[rnd(ARRAY_SIZE(ops))] : rnd(256),
		.num_sge = rnd(8) ? rnd(4) : rnd(MAX_SGE + 1),
		.sg_list = sge, .send_flags = rnd(16),
		.imm_data = next(&F.rng),
	};
	for (i = 0; i < wr->num_sge; i++)
		readable &= random_sge(&sge[i]);
	/* The provider copies inline data itself: only from real memory. */
	if (!readable)
		wr->send_flags &= ~IBV_SEND_INLINE;
	switch (type == IBV_QPT_UD ? 2 : rnd(3)) {
	case 0:
		wr->wr.rdma.remote_addr = m >= 0 && rnd(4) ?
			(uintptr_t)F.mr[m].mr->addr : next(&F.rng);
		wr->wr.rdma.rkey = window_rkey(m >= 0 && rnd(4) ?
					       F.mr[m].mr->rkey :
					       next(&F.rng));
		break;
	case 1:
		wr->wr.atomic.remote_addr = m >= 0 && rnd(4) ?
			(uintptr_t)F.mr[m].mr->addr + rnd(8) * 8 :
			next(&F.rng);
		wr->wr.atomic.rkey = m >= 0 ? F.mr[m].mr->rkey : next(&F.rng);
		wr->wr.atomic.compare_add = next(&F.rng);
		wr->wr.atomic.swap = next(&F.rng);
		break;
	default:
		wr->wr.ud.ah = a >= 0 ? F.ah[a].ah : NULL;
		wr->wr.ud.remote_qpn = q >= 0 ? F.qp[q].qp->qp_num :
						(uint32_t)next(&F.rng);
		wr->wr.ud.remote_qkey = rnd(2) ? 0x11111111 : next(&F.rng);
	}
}

/* WRs through the provider: a chain of 1 to 3 sends, or receives. */
static void op_post(void)
{
	struct ibv_sge sge[3][MAX_SGE];
	struct ibv_send_wr swr[3], *sbad;
	struct ibv_recv_wr rwr[3], *rbad;
	int s = pick(K_QP, 1), n = 1 + rnd(3), i, j;
	struct qp_slot *q;

	if (s < 0 || F.qp[s].is_raw)
		return;
	q = &F.qp[s];
	if (rnd(2)) {
		for (i = 0; i < n; i++) {
			random_send_wr(&swr[i], sge[i], q->qp->qp_type);
			swr[i].next = i + 1 < n ? &swr[i + 1] : NULL;
		}
		begin("post_send qp%d %d WRs opcode %d sges %d flags %#x", s,
		      n, swr[0].opcode, swr[0].num_sge, swr[0].send_flags);
		answer(ibv_post_send(q->qp, swr, &sbad), REFUSED);
		return;
	}
	for (i = 0; i < n; i++) {
		rwr[i] = (struct ibv_recv_wr){
			.wr_id = next(&F.rng), .sg_list = sge[i],
			.num_sge = rnd(8) ? rnd(4) : rnd(MAX_SGE + 1),
			.next = i + 1 < n ? &rwr[i + 1] : NULL,
		};
		for (j = 0; j < rwr[i].num_sge; j++)
			random_sge(&sge[i][j]);
	}
	begin("post_recv qp%d%s %d WRs sges %d", s, q->srq >= 0 ? " srq" : "",
	      n, rwr[0].num_sge);
	if (q->srq >= 0 && !F.srq[q->srq].is_raw)
		answer(ibv_post_srq_recv(F.srq[q->srq].srq, rwr, &rbad),
		       REFUSED);
	else
		answer(ibv_post_recv(q->qp, rwr, &rbad), REFUSED);
}

/*
 * A bare BIND_MW WQE, mostly of a live window onto a live MR: the window
 * may be on the MR afterwards.
 */
static void raw_bind(struct softhca_send_wqe *w)
{
	int mw = pick(K_MW, 1), m = pick(K_MR, 1);
	struct ibv_mr *mr;

	if (mw < 0 || m < 0 || !rnd(4))
		return;
	mr = F.mr[m].mr;
	w->bind.mw_key = ibv_inc_rkey(F.mw[mw].mw->rkey);
	w->bind.mr_lkey = mr->lkey;
	w->bind.addr = (uintptr_t)mr->addr + rnd(mr->length + 1);
	w->bind.length = rnd(mr->length + 1);
	w->bind.access = rnd(2) ? IBV_ACCESS_REMOTE_WRITE |
				  IBV_ACCESS_REMOTE_READ : (uint32_t)next(&F.rng);
	F.mw[mw].mrs |= 1u << m;
}

/* A WQE header and as many SGEs as the entry has room for. */
static void raw_wqe(struct ring *r, int send)
{
	char *e = ring_slot(r, r->index);
	size_t hdr = send ? sizeof(struct softhca_send_wqe) :
			    sizeof(struct softhca_recv_wqe);
	struct softhca_sge *sge = (struct softhca_sge *)(e + hdr);
	struct ibv_sge sg;
	size_t i, room = (r->map.entry_size - hdr) / sizeof(*sge);
	uint64_t *words = (uint64_t *)e;

	for (i = 0; i < hdr / 8; i++)
		words[i] = rnd(4) ? 0 : next(&F.rng);
	if (send) {
		struct softhca_send_wqe *w = (void *)e;

		w->opcode = rnd(8) ? rnd(IBV_WR_SEND_WITH_INV + 1) : rnd(256);
		w->flags = rnd(16);
		w->num_sge = rnd(8) ? rnd(room + 1) : rnd(256);
		if (table >= 3 && w->opcode == IBV_WR_BIND_MW)
			raw_bind(w);
	} else {
		((struct softhca_recv_wqe *)e)->num_sge =
			rnd(8) ? rnd(room + 1) : (uint32_t)next(&F.rng);
	}
	for (i = 0; i < room && i < 4; i++) {
		random_sge(&sg);
		sge[i] = (struct softhca_sge){ .addr = sg.addr,
					       .length = sg.length,
					       .lkey = sg.lkey };
	}
}

/* WQEs written straight into a bare QP's or SRQ's ring, then a doorbell. */
static void op_raw_post(void)
{
	struct ibv_recv_wr *rbad;
	int s = pick(K_QP, 1), n = 1 + rnd(4), i, send = rnd(2);
	struct qp_slot *q;
	struct ring *r;

	if (s < 0 || !F.qp[s].is_raw)
		return;
	q = &F.qp[s];
	r = send ? &q->sq : &q->rq;
	/* A provider's SRQ is the provider's to write. */
	if (!send && q->srq >= 0)
		r = F.srq[q->srq].is_raw ? &F.srq[q->srq].ring : NULL;
	if (!r || !r->ctrl)
		return;
	for (i = 0; i < n; i++) {
		raw_wqe(r, send);
		ring_publish(r, 1);
	}
	begin("raw %s qp%d %d WQEs producer %u", send ? "send" : "recv", s, n,
	      r->index);
	answer(send ? raw_doorbell(q->qp) : ibv_cmd_post_recv(q->qp, NULL,
							      &rbad),
	       REFUSED);
}

/* A random write over a ring: an index, a WQE or CQE header, any word. */
static void scribble(struct ring *r, uint64_t *rng)
{
	uint64_t x = next(rng);
	uint32_t *w = (uint32_t *)r->ctrl;
	int8_t delta = x >> 8;

	switch (x % 6) {
	case 0:
		__atomic_store_n(&r->ctrl->producer, r->index + delta,
				 __ATOMIC_RELEASE);
		break;
	case 1:
		__atomic_store_n(&r->ctrl->consumer, r->index + delta,
				 __ATOMIC_RELEASE);
		break;
	case 2:
		r->ctrl->arm = x >> 32;
		r->ctrl->doorbell = x >> 40;
		break;
	case 3:
		memcpy(ring_slot(r, x >> 16), &x, sizeof(x));
		break;
	default:
		w[(x >> 16) % (r->map.length / 4)] = x >> 32;
	}
}

/* Random writes over a bare object's ring; a doorbell if it is a QP's. */
static void op_scribble(void)
{
	int kind = rnd(3), s = pick(kind == 0 ? K_CQ : kind == 1 ? K_QP :
				     K_SRQ, 1), n = 1 + rnd(8), i, err = 0;
	struct ring *r;

	if (s < 0)
		return;
	if (kind == 0)
		r = F.cq[s].is_raw ? &F.cq[s].ring : NULL;
	else if (kind == 1)
		r = F.qp[s].is_raw ? rnd(2) ? &F.qp[s].sq : &F.qp[s].rq :
				     NULL;
	else
		r = F.srq[s].is_raw ? &F.srq[s].ring : NULL;
	if (!r || !r->ctrl)
		return;
	for (i = 0; i < n; i++)
		scribble(r, &F.rng);
	begin("scribble %s%d %d writes", kind == 0 ? "cq" : kind == 1 ?
	      "qp" : "srq", s, n);
	if (kind == 1)
		err = raw_doorbell(F.qp[s].qp);
	answer(err, REFUSED);
}

/*
 * Random writes over the process's doorbell page (the provider's mapping
 * of it): its word, and the bits of slots with a QP and without; then a
 * bare QP's doorbell, which wakes the worker that reads them.
 */
static void op_scribble_db(void)
{
	const struct softhca_context *sctx = to_sctx(F.ctx);
	uint32_t *w = (uint32_t *)sctx->db;
	int n = 1 + rnd(8), i, s, err = 0;
	uint64_t x;

	if (!w)
		return;
	for (i = 0; i < n; i++) {
		x = next(&F.rng);
		w[(x >> 8) % (sctx->db_len / 4)] = x & 1 ? 0xffffffffu :
							 (uint32_t)(x >> 32);
	}
	s = pick(K_QP, 1);
	begin("scribble the doorbell page, %d writes", n);
	if (s >= 0 && F.qp[s].is_raw)
		err = raw_doorbell(F.qp[s].qp);
	answer(err, REFUSED);
}

/* --- Garbage commands --------------------------------------------------- */

/* A write() command of any number and size; its handles name nothing. */
static void op_garbage_write(void)
{
	struct {
		struct ib_uverbs_cmd_hdr hdr;
		uint32_t words[16];
	} b;
	size_t len = sizeof(b.hdr) + 4 * rnd(17), i;
	ssize_t ret;

	b.hdr.command = rnd(4) ? rnd(64) : (uint32_t)next(&F.rng);
	b.hdr.in_words = rnd(4) ? rnd(18) : rnd(65536);
	b.hdr.out_words = rnd(4) ? rnd(18) : rnd(65536);
	for (i = 0; i < ARRAY_SIZE(b.words); i++)
		b.words[i] = high32();
	begin("write command %#x in %u out %u len %zu", b.hdr.command,
	      b.hdr.in_words, b.hdr.out_words, len);
	ret = write(F.ctx->cmd_fd, &b, len);
	answer(ret < 0 ? errno : 0, ANY);
}

/* An ioctl() method of any object, with attributes of any id and size. */
static void op_garbage_ioctl(void)
{
	static uint32_t garbage[64];
	struct {
		struct ib_uverbs_ioctl_hdr hdr;
		struct ib_uverbs_attr attrs[4];
	} b = {};
	int n = rnd(5), i;

	for (i = 0; i < (int)ARRAY_SIZE(garbage); i++)
		garbage[i] = high32();
	b.hdr = (struct ib_uverbs_ioctl_hdr){
		.length = sizeof(b.hdr) + n * sizeof(b.attrs[0]),
		.object_id = rnd(2) ? rnd(32) : (1 << 12) | rnd(8),
		.method_id = rnd(2) ? rnd(16) : (1 << 12) | rnd(8),
		.num_attrs = rnd(8) ? (uint32_t)n : rnd(65536),
		.driver_id = rnd(8) ? SOFTHCA_DRIVER_ID : next(&F.rng),
	};
	for (i = 0; i < n; i++) {
		b.attrs[i] = (struct ib_uverbs_attr){
			.attr_id = rnd(2) ? rnd(16) : (1 << 12) | rnd(8),
			.len = rnd(4) ? rnd(9) : rnd(sizeof(garbage) + 1),
			.flags = rnd(2),
		};
		b.attrs[i].data = b.attrs[i].len <= 8 || rnd(8) ?
			((uint64_t)high32() << 32 | high32()) :
			(uintptr_t)garbage;
	}
	begin("ioctl object %#x method %#x attrs %u", b.hdr.object_id,
	      b.hdr.method_id, b.hdr.num_attrs);
	answer(ioctl(F.ctx->cmd_fd, RDMA_VERBS_IOCTL, &b) < 0 ? errno : 0,
	       ANY);
}

/* --- The racing threads ------------------------------------------------- */

static void pair_down(void)
{
	pthread_mutex_lock(&F.lock);
	if (F.pair_live)
		pair_destroy(&F.pair);
	F.pair_live = 0;
	pthread_mutex_unlock(&F.lock);
}

/* A fresh pair is a valid call: it must succeed, whatever went before. */
static int pair_up(uint64_t *rng)
{
	int err, srq;

	pthread_mutex_lock(&F.lock);
	srq = next(rng) & 1;
	err = F.peer ? pair_create_far(&F.pair, F.ctx, F.tpd, F.peer,
				       F.peer_pd, F.gid_index) :
		       pair_create(&F.pair, F.ctx, F.tpd, F.gid_index, srq);
	F.pair_live = !err;
	pthread_mutex_unlock(&F.lock);
	F.pairs++;
	if (err && err != ENOMEM) {
		__atomic_add_fetch(&F.unexpected, 1, __ATOMIC_RELAXED);
		log_line("traffic: pair_create -> %s UNEXPECTED\n",
			 err_name(err));
	}
	return err;
}

/* Room for another WQE in @r, as far as its consumer index says. */
static int room(struct ring *r)
{
	return r->ctrl && r->index - __atomic_load_n(&r->ctrl->consumer,
						     __ATOMIC_ACQUIRE) <
	       PAIR_DEPTH / 2;
}

/*
 * Each QP of the pair sends to the other; then the CQ is polled.
 * Return: how many sends it posted.
 */
static int pair_step(uint64_t *rng)
{
	struct pair *p = &F.pair;
	int i, n = 0;

	for (i = 0; i < 2; i++) {
		if (!room(&p->sq[i]) ||
		    !room(p->srqr.ctrl ? &p->srqr : &p->rq[!i]))
			continue;
		pair_recv_wqe(p, !i, 1);
		pair_send_wqe(p, i, next(rng) & 1 ? IBV_WR_SEND :
				    IBV_WR_SEND_WITH_IMM);
		ring_publish(&p->sq[i], 1);
		if (__atomic_load_n(&p->sq[i].ctrl->doorbell,
				    __ATOMIC_SEQ_CST) || !(next(rng) & 7))
			raw_doorbell(&p->qp[i]);
		n++;
	}
	F.sends += n;
	F.cqes += pair_poll(p);
	return n;
}

/*
 * Traffic between the two QPs of a pair, in loopback or over the wire; a
 * pair that the scribbler broke (a QP in error, or no room left in its
 * rings as far as their indices say) or that has had its time is
 * replaced.
 */
static void *traffic(void *arg)
{
	uint64_t rng = F.seed ^ 0x7472616666696321ull;
	unsigned long since = 0, idle = 0;

	(void)arg;
	while (!F.stop) {
		F.steps++;
		if (!F.pair_live) {
			if (pair_up(&rng))
				usleep(10000);
			since = idle = 0;
			continue;
		}
		/*
		 * A pause either way, longer with full queues: the engine's
		 * turn, and the fuzzer's, on a guest of two CPUs.
		 */
		if (pair_step(&rng)) {
			idle = 0;
			usleep(100);
		} else {
			idle++;
			usleep(500);
		}
		if (++since % 64 == 0 &&
		    (idle > 256 || since > 2048 ||
		     raw_qp_state(&F.pair.qp[0]) == IBV_QPS_ERR ||
		     raw_qp_state(&F.pair.qp[1]) == IBV_QPS_ERR))
			pair_down();
	}
	pair_down();
	return NULL;
}

/* Random writes over the pair's rings while the traffic runs. */
static void *scribbler(void *arg)
{
	uint64_t rng = F.seed ^ 0x7363726962626c65ull;
	struct pair *p = &F.pair;
	struct ring *rings[] = { &p->cqr, &p->sq[0], &p->sq[1], &p->rq[0],
				 &p->rq[1], &p->srqr, &p->far.cqr };
	uint64_t x;
	int n;

	(void)arg;
	while (!F.stop) {
		pthread_mutex_lock(&F.lock);
		for (n = 1 + next(&rng) % 4; F.pair_live && n; n--) {
			x = next(&rng);
			if (rings[x % ARRAY_SIZE(rings)]->ctrl) {
				scribble(rings[x % ARRAY_SIZE(rings)], &rng);
				F.scribbles++;
			}
		}
		pthread_mutex_unlock(&F.lock);
		x = next(&rng);
		usleep(x & 1 ? (x >> 8) % 2000 : (x >> 8) % 50000);
	}
	return NULL;
}

/* Takes and acknowledges every async event, so that destroys never wait. */
static void *events(void *arg)
{
	struct pollfd pfd = { .fd = F.ctx->async_fd, .events = POLLIN };
	struct ibv_async_event ev;

	(void)arg;
	while (!F.stop_events) {
		if (poll(&pfd, 1, 100) <= 0 ||
		    ibv_get_async_event(F.ctx, &ev))
			continue;
		F.events++;
		ibv_ack_async_event(&ev);
	}
	return NULL;
}

/* No call may take STALL_S seconds: a hang is logged, and fails the run. */
static void *watchdog(void *arg)
{
	unsigned long op = F.op, steps = F.steps;
	int still = 0;

	(void)arg;
	while (!F.stop_watchdog) {
		sleep(1);
		if (op != F.op || (steps != F.steps && !F.stop)) {
			op = F.op;
			steps = F.steps;
			still = 0;
		} else if (++still >= STALL_S) {
			log_line("HANG: op %lu (%s) or the traffic step %lu took over %d s\n",
				 F.op, F.what, F.steps, STALL_S);
			fprintf(stderr, "worker %d: hang in op %lu: %s\n",
				F.index, F.op, F.what);
			_exit(3);
		}
	}
	return NULL;
}

/*
 * Attaches QP @s to @gid, or detaches it; for op_mcast's group @g (-1:
 * a GID that is none), keeps the QP's groups.
 */
static int mcast_set(int s, const union ibv_gid *gid, int g, int attach)
{
	struct qp_slot *q = &F.qp[s];
	int err;

	err = attach ? ibv_attach_mcast(q->qp, gid, 0) :
		       ibv_detach_mcast(q->qp, gid, 0);
	if (!err && g >= 0)
		q->mcast = attach ? q->mcast | 1u << g : q->mcast & ~(1u << g);
	return err;
}

/*
 * op_mcast's group @g of four (IPv4 239.1.2.g, shared by every QP and
 * worker), or for @g 4 a GID that is no group (not ff.., nor v4-mapped).
 */
static union ibv_gid mcast_gid(int g)
{
	union ibv_gid gid = { .raw = { [10] = 0xff, [11] = 0xff, [12] = 239,
				       [13] = 1, [14] = 2 } };
	size_t i;

	if (g < 4) {
		gid.raw[15] = g;
		return gid;
	}
	for (i = 0; i < sizeof(gid.raw); i++)
		gid.raw[i] = next(&F.rng);
	gid.raw[0] %= 0xff;
	gid.raw[1] |= 1;
	return gid;
}

/* A QP attached or detached.  Only a UD QP joins; attached, it is busy. */
static void op_mcast(void)
{
	int s = pick(K_QP, 1), attach = rnd(2), g = rnd(5);
	union ibv_gid gid;

	if (s < 0)
		return;
	gid = mcast_gid(g);
	begin("%s_mcast qp%d gid %02x%02x..%02x%02x", attach ? "attach" : "detach",
	      s, gid.raw[0], gid.raw[1], gid.raw[14], gid.raw[15]);
	answer(mcast_set(s, &gid, g < 4 ? g : -1, attach), REFUSED);
}

/*
 * advise_mr over an MR (on demand or not) and its PD: prefetches inside
 * and across its bounds, with its key or another, and advice and flags
 * out of range.  Memory that is not there may be named: EFAULT is fair.
 */
static void op_advise_mr(void)
{
	static const uint32_t advice[] = {
		IBV_ADVISE_MR_ADVICE_PREFETCH,
		IBV_ADVISE_MR_ADVICE_PREFETCH_WRITE,
		IBV_ADVISE_MR_ADVICE_PREFETCH_NO_FAULT,
	};
	int s = pick(K_MR, 1), n = 1 + rnd(2), i;
	struct ibv_sge sge[2];
	uint32_t adv, flags;
	struct ibv_mr *mr;
	uint64_t off;

	if (s < 0)
		return;
	mr = F.mr[s].mr;
	adv = rnd(8) ? advice[rnd(ARRAY_SIZE(advice))] : (uint32_t)next(&F.rng);
	flags = rnd(8) ? (rnd(2) ? IBV_ADVISE_MR_FLAG_FLUSH : 0) :
			 (uint32_t)next(&F.rng);
	for (i = 0; i < n; i++) {
		off = rnd(mr->length + 1);
		sge[i] = (struct ibv_sge){
			.addr = (uintptr_t)mr->addr + off,
			.length = rnd(mr->length - off + 1),
			.lkey = rnd(8) ? mr->lkey : (uint32_t)next(&F.rng),
		};
		if (!rnd(8))
			sge[i].length = high32();
	}
	begin("advise_mr mr%d advice %#x flags %#x %d SGEs addr %#" PRIx64 " len %#x lkey %#x",
	      s, adv, flags, n, sge[0].addr, sge[0].length, sge[0].lkey);
	answer(ibv_advise_mr(F.pd[F.mr[s].pd].pd, adv, flags, sge, n), ANY);
}

/* --- A worker ------------------------------------------------------------- */

/*
 * The operations, each with its weight and the table that added it: a
 * later one goes at the end, so that an earlier table draws as it did.
 */
static const struct {
	void (*fn)(void);
	int weight, since;
} ops[] = {
	{ op_alloc_pd, 2, 1 }, { op_create_cq, 4, 1 }, { op_resize_cq, 2, 1 },
	{ op_poll, 8, 1 }, { op_create_qp, 6, 1 }, { op_query_qp, 2, 1 },
	{ op_modify_qp, 8, 1 }, { op_connect, 5, 1 }, { op_reset, 3, 1 },
	{ op_create_srq, 2, 1 }, { op_modify_srq, 1, 1 }, { op_reg_mr, 5, 1 },
	{ op_create_ah, 2, 1 }, { op_destroy, 17, 1 }, { op_post, 10, 1 },
	{ op_raw_post, 8, 1 }, { op_scribble, 4, 1 },
	{ op_garbage_write, 3, 1 }, { op_garbage_ioctl, 3, 1 },
	{ op_mcast, 3, 2 }, { op_advise_mr, 3, 2 },
	{ op_alloc_mw, 2, 3 }, { op_bind_mw, 4, 3 },
	{ op_scribble_db, 3, 4 },
};

static int op_weight(size_t i)
{
	return ops[i].since <= table ? ops[i].weight : 0;
}

static void run_op(void)
{
	int total = 0, r;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(ops); i++)
		total += op_weight(i);
	r = rnd(total);
	for (i = 0; r >= op_weight(i); i++)
		r -= op_weight(i);
	ops[i].fn();
}

/* Children before parents; every destroy must succeed now. */
static void cleanup(void)
{
	static const int order[] = {
		K_QP, K_AH, K_MW, K_MR, K_SRQ, K_CQ, K_PD,
	};
	union ibv_gid gid;
	size_t i;
	int s, g;

	for (s = 0; s < NQP; s++)
		for (g = 0; g < 4; g++) {
			if (!(F.qp[s].mcast & 1u << g))
				continue;
			gid = mcast_gid(g);
			begin("cleanup: detach_mcast qp%d group %d", s, g);
			answer(mcast_set(s, &gid, g, 0), A_OK);
		}
	for (i = 0; i < ARRAY_SIZE(order); i++)
		for (s = 0; s < nslots[order[i]]; s++)
			if (F.live[order[i]] & (1u << s))
				destroy(order[i], s);
}

/* The process still works: fresh pairs, with and without an SRQ. */
static void final_check(void)
{
	struct pair p;
	int srq, err;

	for (srq = 0; srq < 2; srq++) {
		begin("final: a fresh pair%s, a SEND, its data compared",
		      srq ? " on an SRQ" : "");
		err = pair_create(&p, F.ctx, F.tpd, F.gid_index, srq);
		if (!err && !pair_send_checked(&p))
			err = EIO;
		if (!err)
			pair_destroy(&p);
		answer(err, A_OK);
	}
}

/* --- softhca's fault point ------------------------------------------------ */

#define FAIL_DIR "/sys/kernel/debug/softhca_fail/"

static int fail_set(const char *attr, const char *val)
{
	char path[128];
	int fd, err = 0;

	snprintf(path, sizeof(path), FAIL_DIR "%s", attr);
	fd = open(path, O_WRONLY);
	if (fd < 0)
		return errno;
	if (write(fd, val, strlen(val)) < 0)
		err = errno;
	close(fd);
	return err;
}

/* softhca's allocations fail at @pct percent from now on; 0: none do. */
static int fail_arm(int pct)
{
	char val[16];

	snprintf(val, sizeof(val), "%d", pct);
	if (!pct)
		return fail_set("probability", "0");
	return fail_set("verbose", "0") ?: fail_set("interval", "1") ?:
	       fail_set("space", "0") ?: fail_set("times", "-1") ?:
	       fail_set("probability", val);
}

static int setup(const char *dev_name, const char *peer, const char *dir)
{
	struct ibv_device **list;
	char path[4096];
	int err, far;

	snprintf(path, sizeof(path), "%s/fuzz-uverbs.%d.log", dir, F.index);
	F.log_fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND, 0644);
	if (F.log_fd < 0) {
		perror(path);
		return 1;
	}
	log_line("worker %d seed %#" PRIx64 " pid %d\n", F.index, F.seed,
		 getpid());
	F.page = sysconf(_SC_PAGESIZE);
	list = ibv_get_device_list(NULL);
	F.ctx = tap_open(list, dev_name);
	/* An odd worker's traffic goes to the peer, over the wire. */
	far = peer && F.index % 2;
	if (far) {
		F.peer = tap_open(list, peer);
		F.peer_pd = F.peer ? ibv_alloc_pd(F.peer) : NULL;
		log_line("traffic: to %s, over the wire\n", peer);
	}
	ibv_free_device_list(list);
	err = !F.ctx || ibv_query_device(F.ctx, &F.dev) ||
	      ibv_query_gid(F.ctx, 1, F.gid_index, &F.gid) ||
	      arena_init() || !(F.tpd = ibv_alloc_pd(F.ctx)) ||
	      (far && !F.peer_pd);
	if (err)
		fprintf(stderr, "worker %d: setup failed\n", F.index);
	return err;
}

static int worker(const char *dev_name, const char *peer, const char *dir,
		  unsigned long nops, time_t deadline)
{
	void *(*fns[])(void *) = { traffic, scribbler, events, watchdog };
	pthread_t t[ARRAY_SIZE(fns)];
	int err, go;
	size_t i;

	err = setup(dev_name, peer, dir);
	__atomic_add_fetch(&shared->ready, 1, __ATOMIC_SEQ_CST);
	if (err)
		return 2;
	while (!(go = __atomic_load_n(&shared->go, __ATOMIC_SEQ_CST)))
		usleep(1000);
	if (go < 0)
		return 2;
	for (i = 0; i < ARRAY_SIZE(fns); i++)
		if (pthread_create(&t[i], NULL, fns[i], NULL))
			return 2;
	while (F.op < nops && (!deadline || time(NULL) < deadline))
		run_op();
	F.stop = 1;
	pthread_join(t[0], NULL);
	pthread_join(t[1], NULL);
	if (F.fail && fail_arm(0)) {
		fprintf(stderr, "worker %d: cannot disarm " FAIL_DIR "\n",
			F.index);
		return 2;
	}
	final_check();
	/* Half the workers leave their objects to the closing of the file. */
	if (rnd(2))
		cleanup();
	else
		log_line("leaving the pool to close()\n");
	F.stop_events = F.stop_watchdog = 1;
	pthread_join(t[2], NULL);
	pthread_join(t[3], NULL);
	log_line("worker %d: %lu ops, %lu unexpected; traffic: %lu pairs, %lu sends, %lu CQEs, %lu scribbles, %lu async events\n",
		 F.index, F.op, F.unexpected, F.pairs, F.sends, F.cqes,
		 F.scribbles, F.events);
	printf("worker %d: %lu ops, %lu unexpected; traffic: %lu pairs, %lu sends, %lu CQEs, %lu scribbles, %lu async events\n",
	       F.index, F.op, F.unexpected, F.pairs, F.sends, F.cqes,
	       F.scribbles, F.events);
	ibv_close_device(F.ctx);
	if (F.peer)
		ibv_close_device(F.peer);
	return F.unexpected ? 1 : 0;
}

/* --- The campaign ----------------------------------------------------------- */

static uint64_t worker_seed(uint64_t seed, int i)
{
	uint64_t s = seed + (uint64_t)i * 0x632be59bd9b4e019ull;

	return next(&s);
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

struct options {
	const char *dev, *dir, *peer;
	uint64_t seed;
	unsigned long ops;
	int procs, seconds, gid, only, fail;
};

static int parse(int argc, char **argv, struct options *o)
{
	static const struct option longopts[] = {
		{ "dev", 1, NULL, 'd' }, { "gid", 1, NULL, 'g' },
		{ "seed", 1, NULL, 's' }, { "ops", 1, NULL, 'n' },
		{ "procs", 1, NULL, 'p' }, { "seconds", 1, NULL, 't' },
		{ "log", 1, NULL, 'l' }, { "worker", 1, NULL, 'w' },
		{ "fail", 1, NULL, 'f' }, { "table", 1, NULL, 'v' },
		{ "peer", 1, NULL, 'P' },
		{}
	};
	int c;

	*o = (struct options){
		.dev = "softhca0", .dir = ".", .ops = 100000, .procs = 4,
		.gid = 1, .only = -1,
		.seed = (uint64_t)time(NULL) << 16 ^ getpid(),
	};
	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		switch (c) {
		case 'd': o->dev = optarg; break;
		case 'g': o->gid = atoi(optarg); break;
		case 's': o->seed = strtoull(optarg, NULL, 0); break;
		case 'n': o->ops = strtoul(optarg, NULL, 0); break;
		case 'p': o->procs = atoi(optarg); break;
		case 't': o->seconds = atoi(optarg); break;
		case 'l': o->dir = optarg; break;
		case 'w': o->only = atoi(optarg); break;
		case 'f': o->fail = atoi(optarg); break;
		case 'v': table = atoi(optarg); break;
		case 'P': o->peer = optarg; break;
		default: return 1;
		}
	}
	return optind != argc || o->procs < 1 || o->procs > 64 ||
	       o->only >= o->procs || o->fail < 0 || o->fail > 100 ||
	       table < 1 || table > TABLE;
}

static int run_worker(const struct options *o, int i, time_t deadline)
{
	F.index = i;
	F.seed = worker_seed(o->seed, i);
	F.rng = F.seed;
	F.gid_index = o->gid;
	F.fail = !!o->fail;
	return worker(o->dev, o->peer, o->dir, o->ops / o->procs, deadline);
}

/* Waits for every worker; 0 when all exited with 0. */
static int reap(int procs)
{
	int status, failed = 0, i;
	pid_t pid;

	for (i = 0; i < procs; i++) {
		pid = wait(&status);
		if (pid < 0)
			break;
		if (WIFEXITED(status) && !WEXITSTATUS(status))
			continue;
		failed++;
		if (WIFSIGNALED(status))
			printf("worker pid %d: killed by signal %d\n", pid,
			       WTERMSIG(status));
		else
			printf("worker pid %d: exit %d\n", pid,
			       WEXITSTATUS(status));
	}
	return failed;
}

int main(int argc, char **argv)
{
	time_t deadline = 0;
	unsigned long total = 0;
	int i, started = 0, failed, go;
	struct options o;
	double t0;

	if (parse(argc, argv, &o)) {
		fprintf(stderr, "usage: %s [--dev DEV] [--gid INDEX] [--seed S] [--ops N] [--procs P] [--seconds T] [--log DIR] [--worker N] [--fail PCT] [--table V] [--peer DEV]\n",
			argv[0]);
		return 2;
	}
	printf("fuzz-uverbs: seed %#" PRIx64 " table %d procs %d ops %lu seconds %d fail %d%% log %s\n",
	       o.seed, table, o.procs, o.ops, o.seconds, o.fail, o.dir);
	fflush(stdout);
	shared = mmap(NULL, sizeof(*shared) + o.procs * sizeof(shared->ops[0]),
		      PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (shared == MAP_FAILED)
		return 2;
	if (o.seconds)
		deadline = time(NULL) + o.seconds;
	t0 = now();
	for (i = 0; i < o.procs; i++) {
		if (o.only >= 0 && i != o.only)
			continue;
		started++;
		if (!fork())
			exit(run_worker(&o, i, deadline));
	}
	while (__atomic_load_n(&shared->ready, __ATOMIC_SEQ_CST) < started)
		usleep(1000);
	go = o.fail && fail_arm(o.fail) ? -1 : 1;
	if (go < 0)
		fprintf(stderr, "fuzz-uverbs: --fail: no " FAIL_DIR "\n");
	__atomic_store_n(&shared->go, go, __ATOMIC_SEQ_CST);
	failed = reap(started);
	if (o.fail)
		fail_arm(0);
	for (i = 0; i < o.procs; i++)
		total += shared->ops[i];
	printf("fuzz-uverbs: seed %#" PRIx64 ": %lu ops in %.1f s (%.0f ops/s), %d of %d workers failed\n",
	       o.seed, total, now() - t0, total / (now() - t0), failed,
	       started);
	return failed ? 1 : 0;
}
