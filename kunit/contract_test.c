// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * softhca_contract: the execution-context contract, end to end.
 *
 * 1. post_send, post_recv, post_srq_recv, poll_cq and req_notify_cq work
 *    from a hard-irq hrtimer, a timer (softirq) and under
 *    spin_lock_irqsave: each post is executed, its data read back and
 *    compared; a full ring refuses with -ENOMEM and loses nothing.  The
 *    debug kernel (PROVE_LOCKING, DEBUG_ATOMIC_SLEEP, KASAN) reports any
 *    sleep or lock misuse, and the harness fails the run on a splat.
 * 2. A consumer whose completion handler polls its CQ, reposts and
 *    re-arms, 100,000 times: the handler is never nested, never entered
 *    while one of this CPU's posts is on the stack, and its stack depth
 *    stays within a few words of what it was in the first 10 cycles.
 */

#include <linux/sched/task_stack.h>
#include <linux/slab.h>
#include <rdma/ib_verbs.h>

#include "context.h"
#include "cq.h"
#include "dp.h"
#include "fixture.h"

SHCA_SUITE_FIXTURE(shca_ctr_fx, "softhca_ktctr");
static struct shca_dp shca_ctr_dp;

#define SHCA_CTR_DEPTH 16
#define SHCA_CTR_LEN 256
#define SHCA_CTR_CYCLES 100000
/*
 * The repost loop may go slowly (a guest on a busy host) but must not
 * stop: this long without a cycle is a stall.
 */
#define SHCA_CTR_STALL_S 30
/* Stack depth the handler's callers may vary by (bytes). */
#define SHCA_CTR_STACK_SLACK 128

/* Set around every post this suite makes, on the posting CPU. */
static DEFINE_PER_CPU(int, shca_ctr_in_post);

static void shca_ctr_exit(struct kunit *test)
{
	shca_dp_teardown(&shca_ctr_dp);
}

/* What the functions run in a context post, and what they got back. */
struct shca_ctr {
	struct shca_dp *dp;
	u8 *src;
	u8 *dst;
	struct ib_sge ssge;
	struct ib_sge rsge;
	struct ib_recv_wr rwr;
	struct ib_rdma_wr write;
	struct ib_send_wr send;
	struct ib_send_wr full[SHCA_CTR_DEPTH + 1];
	struct ib_sge full_sge[SHCA_CTR_DEPTH + 1];
	struct ib_recv_wr full_recv[SHCA_CTR_DEPTH + 1];
	const struct ib_send_wr *bad;
	const struct ib_recv_wr *bad_recv;
	int recv_ret;
	int send_ret;
	int notify_ret;
	int full_ret;
	int full_recv_ret;
	int polled[2];
	struct ib_wc wc[4];
};

static struct shca_ctr *shca_ctr_new(struct kunit *test, struct shca_dp *dp)
{
	struct shca_ctr *c = kunit_kzalloc(test, sizeof(*c), GFP_KERNEL);
	int i;

	KUNIT_ASSERT_NOT_NULL(test, c);
	c->src = kunit_kzalloc(test, SHCA_CTR_LEN, GFP_KERNEL);
	c->dst = kunit_kzalloc(test, (SHCA_CTR_DEPTH + 3) * SHCA_CTR_LEN,
			       GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, c->src);
	KUNIT_ASSERT_NOT_NULL(test, c->dst);
	shca_dp_fill(c->src, SHCA_CTR_LEN, 30);
	c->dp = dp;
	c->ssge = shca_dp_sge(dp, c->src, SHCA_CTR_LEN);
	c->rsge = shca_dp_sge(dp, c->dst, SHCA_CTR_LEN);
	c->rwr = (struct ib_recv_wr){ .wr_id = 1, .sg_list = &c->rsge,
				      .num_sge = 1 };
	/* A WRITE to the second slot, then a SEND to the receive. */
	c->write = (struct ib_rdma_wr){
		.wr = { .wr_id = 2, .opcode = IB_WR_RDMA_WRITE,
			.sg_list = &c->ssge, .num_sge = 1,
			.send_flags = IB_SEND_SIGNALED, .next = &c->send },
		.remote_addr = (uintptr_t)c->dst + SHCA_CTR_LEN,
		.rkey = dp->pd->unsafe_global_rkey,
	};
	c->send = (struct ib_send_wr){
		.wr_id = 3, .opcode = IB_WR_SEND, .sg_list = &c->ssge,
		.num_sge = 1, .send_flags = IB_SEND_SIGNALED,
	};
	/*
	 * One receive more than the receive queue (or SRQ) holds, each into
	 * its own slot, and one SEND more than the send queue holds.
	 */
	for (i = 0; i <= SHCA_CTR_DEPTH; i++) {
		c->full_sge[i] = shca_dp_sge(dp, c->dst +
					     (i + 2) * SHCA_CTR_LEN,
					     SHCA_CTR_LEN);
		c->full_recv[i] = (struct ib_recv_wr){
			.wr_id = 200 + i, .sg_list = &c->full_sge[i],
			.num_sge = 1,
			.next = i < SHCA_CTR_DEPTH ? &c->full_recv[i + 1] :
						     NULL,
		};
		c->full[i] = (struct ib_send_wr){
			.wr_id = 100 + i, .opcode = IB_WR_SEND,
			.sg_list = &c->ssge, .num_sge = 1,
			.send_flags = IB_SEND_SIGNALED,
			.next = i < SHCA_CTR_DEPTH ? &c->full[i + 1] : NULL,
		};
	}
	return c;
}

static void shca_ctr_post(void *arg)
{
	struct shca_ctr *c = arg;
	struct shca_dp *dp = c->dp;

	this_cpu_inc(shca_ctr_in_post);
	if (dp->srq)
		c->recv_ret = ib_post_srq_recv(dp->srq, &c->rwr, &c->bad_recv);
	else
		c->recv_ret = ib_post_recv(dp->qp[1], &c->rwr, &c->bad_recv);
	c->notify_ret = ib_req_notify_cq(dp->cq[1], IB_CQ_NEXT_COMP);
	c->send_ret = ib_post_send(dp->qp[0], &c->write.wr, &c->bad);
	this_cpu_dec(shca_ctr_in_post);
}

static void shca_ctr_poll(void *arg)
{
	struct shca_ctr *c = arg;

	c->polled[0] = ib_poll_cq(c->dp->cq[0], 2, c->wc);
	c->polled[1] = ib_poll_cq(c->dp->cq[1], 2, c->wc + 2);
}

static void shca_ctr_post_full(void *arg)
{
	struct shca_ctr *c = arg;
	struct shca_dp *dp = c->dp;

	this_cpu_inc(shca_ctr_in_post);
	if (dp->srq)
		c->full_recv_ret = ib_post_srq_recv(dp->srq, c->full_recv,
						    &c->bad_recv);
	else
		c->full_recv_ret = ib_post_recv(dp->qp[1], c->full_recv,
						&c->bad_recv);
	c->full_ret = ib_post_send(dp->qp[0], c->full, &c->bad);
	this_cpu_dec(shca_ctr_in_post);
}

/* Waits until a CQ holds @n completions, without consuming them. */
static bool shca_ctr_wait_cqes(struct shca_dp *dp, int i, u32 n)
{
	struct shca_cq *cq = to_shca_cq(dp->cq[i]);
	int tries;

	for (tries = 0; tries < 2000; tries++) {
		if (cq->queue.prod - READ_ONCE(cq->queue.ctrl->consumer) >= n)
			return true;
		usleep_range(1000, 2000);
	}
	return false;
}

static void shca_ctr_expect_posted(struct kunit *test, struct shca_ctr *c)
{
	KUNIT_EXPECT_EQ(test, c->recv_ret, 0);
	KUNIT_EXPECT_EQ(test, c->send_ret, 0);
	KUNIT_EXPECT_EQ(test, c->notify_ret, 0);
	/* The armed CQ called its handler once: not inside the post. */
	KUNIT_EXPECT_TRUE(test, shca_wait_count(&c->dp->wait,
						&c->dp->comps[1], 1));
	KUNIT_ASSERT_TRUE(test, shca_ctr_wait_cqes(c->dp, 0, 2));
	KUNIT_ASSERT_TRUE(test, shca_ctr_wait_cqes(c->dp, 1, 1));
}

static void shca_ctr_expect_polled(struct kunit *test, struct shca_ctr *c)
{
	KUNIT_ASSERT_EQ(test, c->polled[0], 2);
	KUNIT_ASSERT_EQ(test, c->polled[1], 1);
	KUNIT_EXPECT_EQ(test, c->wc[0].wr_id, 2);
	KUNIT_EXPECT_EQ(test, c->wc[0].status, IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(test, c->wc[1].wr_id, 3);
	KUNIT_EXPECT_EQ(test, c->wc[1].status, IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(test, c->wc[2].wr_id, 1);
	KUNIT_EXPECT_EQ(test, c->wc[2].status, IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(test, c->wc[2].byte_len, SHCA_CTR_LEN);
	KUNIT_EXPECT_EQ(test, memcmp(c->dst, c->src, SHCA_CTR_LEN), 0);
	KUNIT_EXPECT_EQ(test, memcmp(c->dst + SHCA_CTR_LEN, c->src,
				     SHCA_CTR_LEN), 0);
}

/*
 * Full rings: -ENOMEM at the first WR that does not fit; every one that
 * did is executed, each SEND into its own receive.
 */
static void shca_ctr_expect_full(struct kunit *test, struct shca_ctr *c)
{
	struct ib_wc wc;
	int i;

	KUNIT_EXPECT_EQ(test, c->full_recv_ret, -ENOMEM);
	KUNIT_EXPECT_PTR_EQ(test, c->bad_recv, &c->full_recv[SHCA_CTR_DEPTH]);
	KUNIT_EXPECT_EQ(test, c->full_ret, -ENOMEM);
	KUNIT_EXPECT_PTR_EQ(test, c->bad, &c->full[SHCA_CTR_DEPTH]);
	for (i = 0; i < SHCA_CTR_DEPTH; i++) {
		KUNIT_ASSERT_TRUE(test, shca_dp_poll(c->dp, 0, &wc));
		KUNIT_EXPECT_EQ(test, wc.wr_id, 100 + i);
		KUNIT_EXPECT_EQ(test, wc.status, IB_WC_SUCCESS);
		KUNIT_ASSERT_TRUE(test, shca_dp_poll(c->dp, 1, &wc));
		KUNIT_EXPECT_EQ(test, wc.wr_id, 200 + i);
		KUNIT_EXPECT_EQ(test, wc.status, IB_WC_SUCCESS);
		KUNIT_EXPECT_EQ(test, memcmp(c->dst + (i + 2) * SHCA_CTR_LEN,
					     c->src, SHCA_CTR_LEN), 0);
	}
	KUNIT_EXPECT_TRUE(test, shca_dp_cq_empty(c->dp, 0));
	KUNIT_EXPECT_TRUE(test, shca_dp_cq_empty(c->dp, 1));
}

static void shca_ctr_verbs(struct kunit *test, bool srq)
{
	const enum shca_context *ctx = test->param_value;
	struct shca_dp_opts o = shca_dp_rc;
	struct shca_dp *dp = &shca_ctr_dp;
	struct shca_ctr *c;

	o.depth = SHCA_CTR_DEPTH;
	o.srq = srq;
	shca_dp_setup(test, &shca_ctr_fx, dp, &o);
	c = shca_ctr_new(test, dp);

	shca_run_in(test, *ctx, shca_ctr_post, c);
	shca_ctr_expect_posted(test, c);
	shca_run_in(test, *ctx, shca_ctr_poll, c);
	shca_ctr_expect_polled(test, c);
	shca_run_in(test, *ctx, shca_ctr_post_full, c);
	shca_ctr_expect_full(test, c);
}

/* post_recv, post_send, req_notify_cq and poll_cq in each context. */
static void shca_ctr_qp_verbs(struct kunit *test)
{
	shca_ctr_verbs(test, false);
}

/* The same with post_srq_recv. */
static void shca_ctr_srq_verbs(struct kunit *test)
{
	shca_ctr_verbs(test, true);
}

/* The consumer of the repost test, and what its handler measured. */
struct shca_loop {
	struct kunit *test;
	struct shca_dp *dp;
	u64 *src;
	u64 *dst;
	struct ib_sge ssge;
	struct ib_sge rsge;
	struct ib_send_wr send;
	struct ib_recv_wr recv;
	u32 cycles;
	atomic_t depth;
	int max_depth;
	bool reentered;
	bool failed;
	/* Stack bytes in use at handler entry: lowest and highest. */
	unsigned long used_min;
	unsigned long used_max;
	unsigned long used_min_10;
	unsigned long used_max_10;
	struct completion done;
};

static unsigned long shca_loop_stack_used(void *sp)
{
	return (unsigned long)task_stack_page(current) + THREAD_SIZE -
	       (unsigned long)sp;
}

static void shca_loop_measure(struct shca_loop *l, void *sp)
{
	unsigned long used = shca_loop_stack_used(sp);
	int depth = atomic_inc_return(&l->depth);

	l->max_depth = max(l->max_depth, depth);
	if (this_cpu_read(shca_ctr_in_post))
		l->reentered = true;
	l->used_min = min(l->used_min, used);
	l->used_max = max(l->used_max, used);
	if (l->cycles <= 10) {
		l->used_min_10 = l->used_min;
		l->used_max_10 = l->used_max;
	}
}

/* The next round trip: a receive for it, then the SEND of its number. */
static bool shca_loop_repost(struct shca_loop *l)
{
	const struct ib_recv_wr *bad_recv;
	const struct ib_send_wr *bad;
	bool ok;

	*l->src = l->cycles;
	/* The first post is the test thread's: keep it on this CPU. */
	preempt_disable();
	this_cpu_inc(shca_ctr_in_post);
	ok = !ib_post_recv(l->dp->qp[1], &l->recv, &bad_recv) &&
	     !ib_post_send(l->dp->qp[0], &l->send, &bad);
	this_cpu_dec(shca_ctr_in_post);
	preempt_enable();
	return ok;
}

/* Takes what arrived; false when the loop is over (done or failed). */
static bool shca_loop_reap(struct shca_loop *l, struct ib_cq *cq)
{
	struct ib_wc wc;

	while (ib_poll_cq(cq, 1, &wc) == 1) {
		if (wc.status != IB_WC_SUCCESS || *l->dst != l->cycles) {
			l->failed = true;
			return false;
		}
		WRITE_ONCE(l->cycles, l->cycles + 1);
		if (l->cycles == SHCA_CTR_CYCLES)
			return false;
		if (!shca_loop_repost(l)) {
			l->failed = true;
			return false;
		}
	}
	return true;
}

/* The standard handler: poll, repost, re-arm, poll what was missed. */
static void shca_loop_handler(struct ib_cq *cq, void *ctx)
{
	struct shca_dp *dp = ctx;
	struct shca_loop *l = dp->ctx;
	int mark;
	bool more;

	if (cq != dp->cq[1])
		return;
	shca_loop_measure(l, &mark);
	do {
		more = shca_loop_reap(l, cq);
	} while (more && ib_req_notify_cq(cq, IB_CQ_NEXT_COMP |
					  IB_CQ_REPORT_MISSED_EVENTS) > 0);
	if (!more)
		complete(&l->done);
	atomic_dec(&l->depth);
}

/* Waits for the loop's end; false if it stalled, at cycle @at. */
static bool shca_loop_wait(struct shca_loop *l, u32 *at)
{
	u32 seen = READ_ONCE(l->cycles);

	while (!wait_for_completion_timeout(&l->done,
					    SHCA_CTR_STALL_S * HZ)) {
		*at = READ_ONCE(l->cycles);
		if (*at == seen)
			return false;
		seen = *at;
	}
	return true;
}

/*
 * A consumer that reposts from its completion handler, 100,000 times,
 * runs with bounded stack: no handler nesting, no handler inside a post,
 * and the stack depth of the first 10 cycles, give or take the slack.
 */
static void shca_ctr_repost_from_handler(struct kunit *test)
{
	struct shca_dp_opts o = shca_dp_rc;
	struct shca_dp *dp = &shca_ctr_dp;
	struct shca_loop *l;
	ktime_t start;
	u32 at = 0;

	l = kunit_kzalloc(test, sizeof(*l), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, l);
	l->src = kunit_kzalloc(test, 64, GFP_KERNEL);
	l->dst = kunit_kzalloc(test, 64, GFP_KERNEL);
	KUNIT_ASSERT_TRUE(test, l->src && l->dst);
	l->used_min = ULONG_MAX;
	init_completion(&l->done);
	o.comp = shca_loop_handler;
	o.depth = 4;
	shca_dp_setup(test, &shca_ctr_fx, dp, &o);
	dp->ctx = l;
	l->dp = dp;
	l->ssge = shca_dp_sge(dp, l->src, 64);
	l->rsge = shca_dp_sge(dp, l->dst, 64);
	l->send = (struct ib_send_wr){ .opcode = IB_WR_SEND, .num_sge = 1,
				       .sg_list = &l->ssge };
	l->recv = (struct ib_recv_wr){ .num_sge = 1, .sg_list = &l->rsge };

	KUNIT_ASSERT_EQ(test, ib_req_notify_cq(dp->cq[1], IB_CQ_NEXT_COMP), 0);
	start = ktime_get();
	KUNIT_ASSERT_TRUE(test, shca_loop_repost(l));
	KUNIT_ASSERT_TRUE_MSG(test, shca_loop_wait(l, &at),
			      "no cycle for %d s after cycle %u",
			      SHCA_CTR_STALL_S, at);
	KUNIT_EXPECT_FALSE(test, l->failed);
	KUNIT_EXPECT_EQ(test, l->cycles, SHCA_CTR_CYCLES);
	KUNIT_EXPECT_EQ(test, l->max_depth, 1);
	KUNIT_EXPECT_FALSE(test, l->reentered);
	/*
	 * The handler's stack depth depends only on which worker path called
	 * it; one nested handler would add its own frames, the post's and
	 * the engine's, far more than the slack.
	 */
	KUNIT_EXPECT_LE(test, l->used_max - l->used_min, SHCA_CTR_STACK_SLACK);
	KUNIT_EXPECT_LE(test, l->used_max - l->used_max_10,
			SHCA_CTR_STACK_SLACK);
	KUNIT_EXPECT_LT(test, l->used_max, THREAD_SIZE / 2);
	kunit_info(test, "%u cycles in %lld ms: handler depth %d, stack in use %lu..%lu bytes (%lu..%lu after 10 cycles)\n",
		   l->cycles, ktime_ms_delta(ktime_get(), start), l->max_depth,
		   l->used_min, l->used_max, l->used_min_10, l->used_max_10);
}

KUNIT_ARRAY_PARAM(shca_ctr_ctx, shca_contexts, shca_context_desc);

static struct kunit_case shca_ctr_cases[] = {
	KUNIT_CASE_PARAM(shca_ctr_qp_verbs, shca_ctr_ctx_gen_params),
	KUNIT_CASE_PARAM(shca_ctr_srq_verbs, shca_ctr_ctx_gen_params),
	KUNIT_CASE(shca_ctr_repost_from_handler),
	{}
};

static struct kunit_suite shca_ctr_suite = {
	.name = "softhca_contract",
	.suite_init = shca_ctr_fx_suite_init,
	.suite_exit = shca_ctr_fx_suite_exit,
	.init = shca_ctr_fx_init,
	.exit = shca_ctr_exit,
	.test_cases = shca_ctr_cases,
};

kunit_test_suite(shca_ctr_suite);
