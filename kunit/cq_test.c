// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * softhca_cq: completion queues hold what the data path pushes, in order,
 * until polled; poll and arm work in any context; the completion handler
 * runs later, in task context, never inside the push that armed it, once
 * per arm; a poller that found it empty busy-polls until it arms it;
 * overflow raises one CQ error event; a resize keeps what is not polled
 * yet; limits are enforced; the asynchronous destroy works from atomic
 * context.
 */

#include <rdma/softhca.h>

#include "context.h"
#include "cq.h"
#include "dev.h"
#include "fixture.h"

SHCA_SUITE_FIXTURE(shca_cq_fx, "softhca_ktcq");

/* What a CQ's handlers saw. */
struct shca_cq_probe {
	struct ib_cq *cq;
	atomic_t comps;
	atomic_t events;
	enum ib_event_type event;
	int push_cpu;			/* a push under way (its CPU), or -1 */
	bool reentered;			/* the handler ran inside it */
	bool handler_not_task;		/* the handler ran outside a task */
	int handler_cpu;		/* where the handler last ran */
	wait_queue_head_t wait;
	struct softhca_cqe cqe;		/* what shca_cq_push_fn() pushes */
	bool solicited;
	int ret;
	int status;			/* an asynchronous destroy's */
	struct completion done;
};

static void shca_cq_comp(struct ib_cq *cq, void *ctx)
{
	struct shca_cq_probe *p = ctx;

	/*
	 * A push runs with preemption off (shca_run_in()'s contexts, an IPI):
	 * a handler on its CPU while it is under way runs inside it, where
	 * one on another CPU merely runs beside it.
	 */
	if (READ_ONCE(p->push_cpu) == raw_smp_processor_id())
		p->reentered = true;
	if (!in_task() || in_hardirq())
		p->handler_not_task = true;
	p->handler_cpu = raw_smp_processor_id();
	atomic_inc(&p->comps);
	wake_up(&p->wait);
}

static void shca_cq_event(struct ib_event *event, void *ctx)
{
	struct shca_cq_probe *p = ctx;

	p->event = event->event;
	atomic_inc(&p->events);
	wake_up(&p->wait);
}

static struct shca_cq_probe *shca_cq_probe_vector(struct kunit *test,
						  int cqe, u32 vector)
{
	struct ib_cq_init_attr attr = { .cqe = cqe, .comp_vector = vector };
	struct shca_cq_probe *p;

	p = kunit_kzalloc(test, sizeof(*p), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, p);
	init_waitqueue_head(&p->wait);
	init_completion(&p->done);
	p->push_cpu = -1;
	p->cq = ib_create_cq(shca_cq_fx.ibdev, shca_cq_comp, shca_cq_event, p,
			     &attr);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, p->cq);
	return p;
}

static struct shca_cq_probe *shca_cq_probe_new(struct kunit *test, int cqe)
{
	return shca_cq_probe_vector(test, cqe, 0);
}

/* CQs counted against the limit, beyond ib_mad's own. */
static int shca_cq_res(void)
{
	return atomic_read(&to_shca_dev(shca_cq_fx.ibdev)->res[SHCA_RES_CQ]) -
	       1;
}

static struct softhca_cqe shca_test_cqe(u64 wr_id)
{
	return (struct softhca_cqe){
		.wr_id = wr_id,
		.status = IB_WC_SUCCESS,
		.opcode = IB_WC_RECV,
		.flags = SOFTHCA_CQE_IMM,
		.byte_len = 100 + wr_id,
		.ex = (__force u32)cpu_to_be32(0xabc0 + wr_id),
		.qp_num = 0xfffffe,
		.src_qp = 7,
	};
}

static int shca_push(struct shca_cq_probe *p, u64 wr_id, bool solicited)
{
	struct softhca_cqe cqe = shca_test_cqe(wr_id);

	return shca_cq_push(to_shca_cq(p->cq), &cqe, solicited);
}

/* Let a handler already queued run, so that its absence means something. */
static void shca_cq_settle(struct shca_cq_probe *p)
{
	flush_work(&to_shca_cq(p->cq)->comp_work);
	flush_work(&to_shca_cq(p->cq)->events.work);
}

static void shca_cq_create_limits(struct kunit *test)
{
	struct ib_device *ibdev = shca_cq_fx.ibdev;
	const int sizes[] = { 1, 100, 65536 };
	struct ib_cq_init_attr attr = {};
	struct ib_cq *cq;
	int i;

	for (i = 0; i < ARRAY_SIZE(sizes); i++) {
		attr.cqe = sizes[i];
		cq = ib_create_cq(ibdev, NULL, NULL, NULL, &attr);
		KUNIT_ASSERT_NOT_ERR_OR_NULL(test, cq);
		KUNIT_EXPECT_GE(test, cq->cqe, sizes[i]);
		KUNIT_EXPECT_TRUE(test, is_power_of_2(cq->cqe));
		KUNIT_EXPECT_EQ(test, shca_cq_res(), 1);
		KUNIT_EXPECT_EQ(test, ib_destroy_cq_user(cq, NULL), 0);
	}
	attr.cqe = SHCA_MAX_CQE + 1;
	cq = ib_create_cq(ibdev, NULL, NULL, NULL, &attr);
	KUNIT_EXPECT_EQ(test, PTR_ERR_OR_ZERO(cq), -EINVAL);
	attr.cqe = 1;
	attr.comp_vector = ibdev->num_comp_vectors;
	cq = ib_create_cq(ibdev, NULL, NULL, NULL, &attr);
	KUNIT_EXPECT_EQ(test, PTR_ERR_OR_ZERO(cq), -EINVAL);
	attr.comp_vector = 0;
	attr.flags = IB_UVERBS_CQ_FLAGS_TIMESTAMP_COMPLETION;
	cq = ib_create_cq(ibdev, NULL, NULL, NULL, &attr);
	KUNIT_EXPECT_EQ(test, PTR_ERR_OR_ZERO(cq), -EOPNOTSUPP);
	KUNIT_EXPECT_EQ(test, shca_cq_res(), 0);
}

static void shca_expect_wc(struct kunit *test, const struct ib_wc *wc,
			   u64 wr_id)
{
	KUNIT_EXPECT_EQ(test, wc->wr_id, wr_id);
	KUNIT_EXPECT_EQ(test, wc->status, IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(test, wc->opcode, IB_WC_RECV);
	KUNIT_EXPECT_EQ(test, wc->byte_len, 100 + wr_id);
	KUNIT_EXPECT_EQ(test, be32_to_cpu(wc->ex.imm_data), 0xabc0 + wr_id);
	KUNIT_EXPECT_TRUE(test, wc->wc_flags & IB_WC_WITH_IMM);
	KUNIT_EXPECT_EQ(test, wc->src_qp, 7);
	KUNIT_EXPECT_EQ(test, wc->port_num, SHCA_PORT);
	/* No QP has that number. */
	KUNIT_EXPECT_NULL(test, wc->qp);
}

/* Completions come back in order, with what was pushed, once each. */
static void shca_cq_poll_order(struct kunit *test)
{
	struct shca_cq_probe *p = shca_cq_probe_new(test, 16);
	struct ib_wc wc[16];
	int i, n;

	KUNIT_EXPECT_EQ(test, ib_poll_cq(p->cq, 16, wc), 0);
	for (i = 0; i < 10; i++)
		KUNIT_ASSERT_EQ(test, shca_push(p, i, false), 0);
	KUNIT_ASSERT_EQ(test, ib_poll_cq(p->cq, 4, wc), 4);
	n = ib_poll_cq(p->cq, 16, wc + 4);
	KUNIT_ASSERT_EQ(test, n, 6);
	for (i = 0; i < 10; i++)
		shca_expect_wc(test, &wc[i], i);
	KUNIT_EXPECT_EQ(test, ib_poll_cq(p->cq, 16, wc), 0);
	KUNIT_EXPECT_EQ(test, ib_destroy_cq_user(p->cq, NULL), 0);
}

/*
 * A kernel poller that finds the CQ empty busy-polls it until it arms it
 * (the engine then runs that CQ's QPs on the poller's CPU): polling
 * completions leaves the mark as it is, arming clears it.
 */
static void shca_cq_spinning_mark(struct kunit *test)
{
	struct shca_cq_probe *p = shca_cq_probe_new(test, 16);
	struct ib_wc wc;

	KUNIT_EXPECT_FALSE(test, shca_cq_spinning(p->cq));
	KUNIT_ASSERT_EQ(test, shca_push(p, 1, false), 0);
	KUNIT_EXPECT_EQ(test, ib_poll_cq(p->cq, 1, &wc), 1);
	KUNIT_EXPECT_FALSE(test, shca_cq_spinning(p->cq));
	KUNIT_EXPECT_EQ(test, ib_poll_cq(p->cq, 1, &wc), 0);
	KUNIT_EXPECT_TRUE(test, shca_cq_spinning(p->cq));
	KUNIT_ASSERT_EQ(test, shca_push(p, 2, false), 0);
	KUNIT_EXPECT_EQ(test, ib_poll_cq(p->cq, 1, &wc), 1);
	KUNIT_EXPECT_TRUE(test, shca_cq_spinning(p->cq));
	KUNIT_EXPECT_EQ(test, ib_req_notify_cq(p->cq, IB_CQ_SOLICITED), 0);
	KUNIT_EXPECT_FALSE(test, shca_cq_spinning(p->cq));
	KUNIT_EXPECT_EQ(test, ib_poll_cq(p->cq, 1, &wc), 0);
	KUNIT_EXPECT_EQ(test, ib_req_notify_cq(p->cq, IB_CQ_NEXT_COMP), 0);
	KUNIT_EXPECT_FALSE(test, shca_cq_spinning(p->cq));
	KUNIT_EXPECT_EQ(test, ib_destroy_cq_user(p->cq, NULL), 0);
}

static void shca_cq_push_fn(void *arg)
{
	struct shca_cq_probe *p = arg;

	WRITE_ONCE(p->push_cpu, raw_smp_processor_id());
	p->ret = shca_cq_push(to_shca_cq(p->cq), &p->cqe, p->solicited);
	WRITE_ONCE(p->push_cpu, -1);
}

/*
 * An armed CQ's handler runs once per arm, in task context, after the
 * push that fired it returned, whatever context that push ran in.
 */
static void shca_cq_notify_deferred(struct kunit *test)
{
	const enum shca_context *ctx = test->param_value;
	struct shca_cq_probe *p = shca_cq_probe_new(test, 16);

	KUNIT_ASSERT_EQ(test, ib_req_notify_cq(p->cq, IB_CQ_NEXT_COMP), 0);
	p->cqe = shca_test_cqe(1);
	shca_run_in(test, *ctx, shca_cq_push_fn, p);
	KUNIT_EXPECT_EQ(test, p->ret, 0);
	KUNIT_EXPECT_TRUE(test, shca_wait_count(&p->wait, &p->comps, 1));
	KUNIT_EXPECT_FALSE(test, p->reentered);
	KUNIT_EXPECT_FALSE(test, p->handler_not_task);

	/* Not re-armed: the next completion calls nothing. */
	shca_run_in(test, *ctx, shca_cq_push_fn, p);
	shca_cq_settle(p);
	KUNIT_EXPECT_EQ(test, atomic_read(&p->comps), 1);
	KUNIT_EXPECT_EQ(test, ib_destroy_cq_user(p->cq, NULL), 0);
}

/*
 * One completion vector per online CPU, and the handler of a CQ on vector
 * v runs on the v-th online CPU, whichever CPU pushed the completion (as
 * the vector's interrupt would be steered): ULPs spread their queues over
 * the vectors (nvme-rdma, RDS, SRP) and expect their work spread alike.
 * ib_get_vector_affinity() names that CPU, and no vector beyond them.
 */
static void shca_cq_vector_cpu(struct kunit *test)
{
	struct ib_device *ibdev = shca_cq_fx.ibdev;
	const struct cpumask *mask;
	struct shca_cq_probe *p;
	int vector, want, cpu, n, ret;

	KUNIT_EXPECT_EQ(test, ibdev->num_comp_vectors, num_online_cpus());
	KUNIT_EXPECT_NULL(test, ib_get_vector_affinity(ibdev,
						       ibdev->num_comp_vectors));
	KUNIT_EXPECT_NULL(test, ib_get_vector_affinity(ibdev, -1));
	for (vector = 0; vector < ibdev->num_comp_vectors; vector++) {
		want = cpumask_local_spread(vector, NUMA_NO_NODE);
		mask = ib_get_vector_affinity(ibdev, vector);
		KUNIT_ASSERT_NOT_NULL(test, mask);
		KUNIT_EXPECT_EQ(test, cpumask_weight(mask), 1);
		KUNIT_EXPECT_EQ(test, cpumask_first(mask), want);
		p = shca_cq_probe_vector(test, 16, vector);
		n = 0;
		for_each_online_cpu(cpu) {
			KUNIT_ASSERT_EQ(test,
					ib_req_notify_cq(p->cq, IB_CQ_NEXT_COMP),
					0);
			p->cqe = shca_test_cqe(cpu);
			ret = smp_call_function_single(cpu, shca_cq_push_fn, p,
						       1);
			KUNIT_ASSERT_EQ(test, ret, 0);
			KUNIT_EXPECT_EQ(test, p->ret, 0);
			KUNIT_ASSERT_TRUE(test,
					  shca_wait_count(&p->wait, &p->comps,
							  ++n));
			KUNIT_EXPECT_EQ_MSG(test, p->handler_cpu, want,
					    "vector %d, pushed on CPU %d",
					    vector, cpu);
		}
		KUNIT_EXPECT_EQ(test, ib_destroy_cq_user(p->cq, NULL), 0);
	}
}

/* Armed for solicited completions only, others do not fire it. */
static void shca_cq_solicited(struct kunit *test)
{
	struct shca_cq_probe *p = shca_cq_probe_new(test, 16);

	KUNIT_ASSERT_EQ(test, ib_req_notify_cq(p->cq, IB_CQ_SOLICITED), 0);
	KUNIT_ASSERT_EQ(test, shca_push(p, 1, false), 0);
	shca_cq_settle(p);
	KUNIT_EXPECT_EQ(test, atomic_read(&p->comps), 0);
	KUNIT_ASSERT_EQ(test, shca_push(p, 2, true), 0);
	KUNIT_EXPECT_TRUE(test, shca_wait_count(&p->wait, &p->comps, 1));
	KUNIT_EXPECT_EQ(test, ib_destroy_cq_user(p->cq, NULL), 0);
}

/*
 * Armed with both bits (IB_CQ_SOLICITED_MASK, as SMC-R arms its receive
 * CQ), any completion fires it; and a CQ armed for the next completion
 * is not narrowed to solicited ones by a later solicited arm.
 */
static void shca_cq_notify_both_bits(struct kunit *test)
{
	struct shca_cq_probe *p = shca_cq_probe_new(test, 16);

	KUNIT_ASSERT_EQ(test, ib_req_notify_cq(p->cq, IB_CQ_SOLICITED_MASK),
			0);
	KUNIT_ASSERT_EQ(test, shca_push(p, 1, false), 0);
	KUNIT_EXPECT_TRUE(test, shca_wait_count(&p->wait, &p->comps, 1));

	KUNIT_ASSERT_EQ(test, ib_req_notify_cq(p->cq, IB_CQ_NEXT_COMP), 0);
	KUNIT_ASSERT_EQ(test, ib_req_notify_cq(p->cq, IB_CQ_SOLICITED), 0);
	KUNIT_ASSERT_EQ(test, shca_push(p, 2, false), 0);
	KUNIT_EXPECT_TRUE(test, shca_wait_count(&p->wait, &p->comps, 2));
	KUNIT_EXPECT_EQ(test, ib_destroy_cq_user(p->cq, NULL), 0);
}

/* Arm-then-recheck: arming a CQ that holds completions says so. */
static void shca_cq_missed_events(struct kunit *test)
{
	const enum ib_cq_notify_flags arm = IB_CQ_NEXT_COMP |
					    IB_CQ_REPORT_MISSED_EVENTS;
	struct shca_cq_probe *p = shca_cq_probe_new(test, 16);
	struct ib_wc wc;

	KUNIT_EXPECT_EQ(test, ib_req_notify_cq(p->cq, arm), 0);
	KUNIT_ASSERT_EQ(test, shca_push(p, 1, false), 0);
	KUNIT_EXPECT_EQ(test, ib_req_notify_cq(p->cq, arm), 1);
	KUNIT_EXPECT_EQ(test, ib_poll_cq(p->cq, 1, &wc), 1);
	KUNIT_EXPECT_EQ(test, ib_req_notify_cq(p->cq, arm), 0);
	shca_cq_settle(p);
	KUNIT_EXPECT_EQ(test, ib_destroy_cq_user(p->cq, NULL), 0);
}

/* A full CQ loses the completion and reports one CQ error event. */
static void shca_cq_overflow(struct kunit *test)
{
	struct shca_cq_probe *p = shca_cq_probe_new(test, 1);
	int i;

	KUNIT_ASSERT_EQ(test, p->cq->cqe, 1);
	KUNIT_EXPECT_EQ(test, shca_push(p, 1, false), 0);
	for (i = 0; i < 3; i++)
		KUNIT_EXPECT_EQ(test, shca_push(p, 2, false), -ENOSPC);
	KUNIT_EXPECT_TRUE(test, shca_wait_count(&p->wait, &p->events, 1));
	shca_cq_settle(p);
	KUNIT_EXPECT_EQ(test, atomic_read(&p->events), 1);
	KUNIT_EXPECT_EQ(test, p->event, IB_EVENT_CQ_ERR);
	KUNIT_EXPECT_EQ(test, ib_destroy_cq_user(p->cq, NULL), 0);
}

/* A resize keeps the completions not polled yet, or fails and keeps all. */
static void shca_cq_resize(struct kunit *test)
{
	struct shca_cq_probe *p = shca_cq_probe_new(test, 4);
	struct ib_wc wc[4];
	int i;

	for (i = 0; i < 3; i++)
		KUNIT_ASSERT_EQ(test, shca_push(p, i, false), 0);
	KUNIT_ASSERT_EQ(test, ib_resize_cq(p->cq, 100), 0);
	KUNIT_EXPECT_GE(test, p->cq->cqe, 100);
	for (i = 3; i < 6; i++)
		KUNIT_ASSERT_EQ(test, shca_push(p, i, false), 0);
	KUNIT_EXPECT_EQ(test, ib_resize_cq(p->cq, 2), -EINVAL);
	KUNIT_EXPECT_EQ(test, ib_resize_cq(p->cq, SHCA_MAX_CQE + 1), -EINVAL);
	KUNIT_ASSERT_EQ(test, ib_poll_cq(p->cq, 4, wc), 4);
	for (i = 0; i < 4; i++)
		shca_expect_wc(test, &wc[i], i);
	KUNIT_ASSERT_EQ(test, ib_poll_cq(p->cq, 4, wc), 2);
	for (i = 0; i < 2; i++)
		shca_expect_wc(test, &wc[i], 4 + i);
	KUNIT_EXPECT_EQ(test, ib_destroy_cq_user(p->cq, NULL), 0);
}

struct shca_poll_arg {
	struct ib_cq *cq;
	struct ib_wc wc[4];
	int polled;
	int armed;
};

static void shca_poll_arm_fn(void *arg)
{
	struct shca_poll_arg *a = arg;

	a->polled = ib_poll_cq(a->cq, ARRAY_SIZE(a->wc), a->wc);
	a->armed = ib_req_notify_cq(a->cq, IB_CQ_NEXT_COMP |
				    IB_CQ_REPORT_MISSED_EVENTS);
}

/* poll_cq and req_notify_cq in hard-irq, softirq, and with IRQs off. */
static void shca_cq_poll_in_atomic(struct kunit *test)
{
	const enum shca_context *ctx = test->param_value;
	struct shca_cq_probe *p = shca_cq_probe_new(test, 16);
	struct shca_poll_arg *a;
	int i;

	a = kunit_kzalloc(test, sizeof(*a), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, a);
	a->cq = p->cq;
	for (i = 0; i < 6; i++)
		KUNIT_ASSERT_EQ(test, shca_push(p, i, false), 0);
	shca_run_in(test, *ctx, shca_poll_arm_fn, a);
	KUNIT_EXPECT_EQ(test, a->polled, 4);
	KUNIT_EXPECT_EQ(test, a->armed, 1);
	for (i = 0; i < 4; i++)
		shca_expect_wc(test, &a->wc[i], i);
	shca_run_in(test, *ctx, shca_poll_arm_fn, a);
	KUNIT_EXPECT_EQ(test, a->polled, 2);
	KUNIT_EXPECT_EQ(test, a->armed, 0);
	for (i = 0; i < 2; i++)
		shca_expect_wc(test, &a->wc[i], 4 + i);
	KUNIT_EXPECT_EQ(test, ib_destroy_cq_user(p->cq, NULL), 0);
}

static void shca_cq_destroyed(void *ctx, int status)
{
	struct shca_cq_probe *p = ctx;

	p->status = status;
	atomic_inc(&p->events);
	complete(&p->done);
}

static void shca_cq_async_destroy_fn(void *arg)
{
	struct shca_cq_probe *p = arg;

	p->ret = softhca_async_destroy_cq(p->cq, shca_cq_destroyed, p);
}

static void shca_cq_async_destroy(struct kunit *test)
{
	const enum shca_context *ctx = test->param_value;
	struct shca_cq_probe *p = shca_cq_probe_new(test, 16);

	p->status = -1;
	shca_run_in(test, *ctx, shca_cq_async_destroy_fn, p);
	KUNIT_ASSERT_EQ(test, p->ret, 0);
	KUNIT_ASSERT_TRUE(test, wait_for_completion_timeout(&p->done, 20 * HZ));
	KUNIT_EXPECT_EQ(test, p->status, 0);
	KUNIT_EXPECT_EQ(test, atomic_read(&p->events), 1);
	KUNIT_EXPECT_EQ(test, shca_cq_res(), 0);
}

KUNIT_ARRAY_PARAM(shca_cq_ctx, shca_contexts, shca_context_desc);

/* One CQ more than query_device advertises fails cleanly. */
static void shca_cq_limit(struct kunit *test)
{
	struct shca_dev *dev = to_shca_dev(shca_cq_fx.ibdev);
	struct ib_cq_init_attr attr = { .cqe = 1 };
	struct ib_cq *last, *over;

	KUNIT_ASSERT_EQ(test, dev->ibdev.attrs.max_cq, SHCA_MAX_CQ);
	atomic_set(&dev->res[SHCA_RES_CQ], SHCA_MAX_CQ - 1);	/* all but one */
	last = ib_create_cq(&dev->ibdev, NULL, NULL, NULL, &attr);
	over = ib_create_cq(&dev->ibdev, NULL, NULL, NULL, &attr);
	KUNIT_EXPECT_FALSE(test, IS_ERR(last));
	KUNIT_EXPECT_EQ(test, PTR_ERR_OR_ZERO(over), -ENOMEM);
	if (!IS_ERR(over))
		ib_destroy_cq_user(over, NULL);
	if (!IS_ERR(last))
		ib_destroy_cq_user(last, NULL);
	KUNIT_EXPECT_EQ(test, shca_cq_res(), SHCA_MAX_CQ - 2);
	atomic_set(&dev->res[SHCA_RES_CQ], 1);
}

/* Many create/destroy cycles leave nothing behind (kmemleak checks too). */
static void shca_cq_cycles(struct kunit *test)
{
	struct ib_cq_init_attr attr = { .cqe = 64 };
	u64 start = ktime_get_ns();
	struct ib_cq *cq;
	int i;

	for (i = 0; i < SHCA_TEST_CYCLES; i++) {
		cq = ib_create_cq(shca_cq_fx.ibdev, NULL, NULL, NULL, &attr);
		KUNIT_ASSERT_NOT_ERR_OR_NULL(test, cq);
		KUNIT_ASSERT_EQ(test, ib_destroy_cq_user(cq, NULL), 0);
	}
	KUNIT_EXPECT_EQ(test, shca_cq_res(), 0);
	kunit_info(test, "%d CQ cycles in %llu ms\n", SHCA_TEST_CYCLES,
		   (ktime_get_ns() - start) / NSEC_PER_MSEC);
}

static struct kunit_case shca_cq_cases[] = {
	KUNIT_CASE(shca_cq_create_limits),
	KUNIT_CASE(shca_cq_poll_order),
	KUNIT_CASE(shca_cq_spinning_mark),
	KUNIT_CASE_PARAM(shca_cq_notify_deferred, shca_cq_ctx_gen_params),
	KUNIT_CASE(shca_cq_vector_cpu),
	KUNIT_CASE(shca_cq_solicited),
	KUNIT_CASE(shca_cq_notify_both_bits),
	KUNIT_CASE(shca_cq_missed_events),
	KUNIT_CASE(shca_cq_overflow),
	KUNIT_CASE(shca_cq_resize),
	KUNIT_CASE_PARAM(shca_cq_poll_in_atomic, shca_cq_ctx_gen_params),
	KUNIT_CASE_PARAM(shca_cq_async_destroy, shca_cq_ctx_gen_params),
	KUNIT_CASE(shca_cq_limit),
	KUNIT_CASE(shca_cq_cycles),
	{}
};

static struct kunit_suite shca_cq_suite = {
	.name = "softhca_cq",
	.suite_init = shca_cq_fx_suite_init,
	.suite_exit = shca_cq_fx_suite_exit,
	.init = shca_cq_fx_init,
	.test_cases = shca_cq_cases,
};

kunit_test_suite(shca_cq_suite);
