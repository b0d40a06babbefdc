// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * softhca_cmdq: the command queue runs commands one at a time in
 * submission order, takes asynchronous commands from any context without
 * sleeping, calls each callback exactly once, fails fast once broken,
 * takes verbs from a work item that freed itself, and drains on device
 * removal.
 */

#include <linux/delay.h>
#include <linux/slab.h>
#include <linux/workqueue.h>
#include <rdma/softhca.h>

#include "cmdq.h"
#include "context.h"
#include "dev.h"
#include "fixture.h"

#define SHCA_TEST_CMDS 64

/*
 * What the test commands record, in the order the queue ran them: the
 * first SHCA_TEST_CMDS + 1 of them, and how many there were.
 */
struct shca_cmdq_log {
	spinlock_t lock;		/* protects the fields below */
	int ran[SHCA_TEST_CMDS + 1];
	int nr_ran;
	int called[SHCA_TEST_CMDS + 1];
	int nr_called;
	struct completion gate;		/* a blocking command waits on it */
	struct completion blocked;	/* ... after completing this */
	wait_queue_head_t wait;
};

static struct shca_cmdq_log *shca_log_new(struct kunit *test)
{
	struct shca_cmdq_log *log;

	log = kunit_kzalloc(test, sizeof(*log), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, log);
	spin_lock_init(&log->lock);
	init_completion(&log->gate);
	init_completion(&log->blocked);
	init_waitqueue_head(&log->wait);
	return log;
}

struct shca_test_cmd {
	struct shca_cmdq_log *log;
	int seq;
};

static int shca_test_cmd_fn(struct shca_cmd *cmd)
{
	struct shca_test_cmd *tc = cmd->obj;
	unsigned long flags;

	spin_lock_irqsave(&tc->log->lock, flags);
	if (tc->log->nr_ran < ARRAY_SIZE(tc->log->ran))
		tc->log->ran[tc->log->nr_ran] = tc->seq;
	tc->log->nr_ran++;
	spin_unlock_irqrestore(&tc->log->lock, flags);
	return tc->seq;
}

static void shca_test_cmd_done(void *ctx, int status)
{
	struct shca_test_cmd *tc = ctx;
	unsigned long flags;

	spin_lock_irqsave(&tc->log->lock, flags);
	if (tc->log->nr_called < ARRAY_SIZE(tc->log->called))
		tc->log->called[tc->log->nr_called] = status;
	tc->log->nr_called++;
	spin_unlock_irqrestore(&tc->log->lock, flags);
	wake_up(&tc->log->wait);
}

static int shca_test_block_fn(struct shca_cmd *cmd)
{
	struct shca_cmdq_log *log = cmd->obj;

	complete(&log->blocked);
	wait_for_completion(&log->gate);
	return 0;
}

/* Occupy the worker until log->gate is completed. */
static void shca_block_queue(struct kunit *test, struct ib_device *ibdev,
			     struct shca_cmdq_log *log)
{
	struct shca_cmd *cmd;

	cmd = shca_cmd_slot_get(ibdev, shca_test_block_fn, NULL, NULL);
	KUNIT_ASSERT_FALSE(test, IS_ERR(cmd));
	cmd->obj = log;
	shca_cmd_slot_submit(cmd);
	wait_for_completion(&log->blocked);
}

static int shca_queue_test_cmd(struct ib_device *ibdev,
			       struct shca_test_cmd *tc)
{
	return shca_cmd_queue(ibdev, shca_test_cmd_fn, tc, shca_test_cmd_done,
			      tc);
}

static bool shca_log_called(struct shca_cmdq_log *log, int count)
{
	return READ_ONCE(log->nr_called) >= count;
}

/*
 * Queued commands and a synchronous one behind them run in submission
 * order, and each callback runs once, after its command, with its result.
 */
static void shca_cmdq_runs_in_order(struct kunit *test)
{
	struct shca_fixture *fx = test->priv;
	struct shca_cmdq_log *log = shca_log_new(test);
	struct shca_test_cmd *tc;
	struct shca_cmd sync = { .fn = shca_test_cmd_fn };
	int i;

	tc = kunit_kcalloc(test, SHCA_TEST_CMDS + 1, sizeof(*tc), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, tc);
	for (i = 0; i <= SHCA_TEST_CMDS; i++) {
		tc[i].log = log;
		tc[i].seq = i;
	}
	for (i = 0; i < SHCA_TEST_CMDS; i++)
		KUNIT_ASSERT_EQ(test, shca_queue_test_cmd(fx->ibdev, &tc[i]),
				0);
	sync.obj = &tc[SHCA_TEST_CMDS];
	KUNIT_EXPECT_EQ(test, shca_cmd_exec(&to_shca_dev(fx->ibdev)->cmdq,
					    &sync), SHCA_TEST_CMDS);

	KUNIT_ASSERT_EQ(test, log->nr_ran, SHCA_TEST_CMDS + 1);
	for (i = 0; i <= SHCA_TEST_CMDS; i++)
		KUNIT_EXPECT_EQ(test, log->ran[i], i);
	KUNIT_ASSERT_EQ(test, log->nr_called, SHCA_TEST_CMDS);
	for (i = 0; i < SHCA_TEST_CMDS; i++)
		KUNIT_EXPECT_EQ(test, log->called[i], i);
}

struct shca_queue_from {
	struct ib_device *ibdev;
	struct shca_test_cmd *tc;
	int ret;
};

static void shca_queue_from_fn(void *arg)
{
	struct shca_queue_from *q = arg;

	q->ret = shca_queue_test_cmd(q->ibdev, q->tc);
}

/* Queuing works from hard-irq, softirq and irqs-off spinlock context. */
static void shca_cmdq_queue_from_atomic(struct kunit *test)
{
	const enum shca_context *ctx = test->param_value;
	struct shca_fixture *fx = test->priv;
	struct shca_cmdq_log *log = shca_log_new(test);
	struct shca_test_cmd tc = { .log = log, .seq = 7 };
	struct shca_queue_from q = { .ibdev = fx->ibdev, .tc = &tc };

	shca_run_in(test, *ctx, shca_queue_from_fn, &q);
	KUNIT_ASSERT_EQ(test, q.ret, 0);
	KUNIT_ASSERT_TRUE(test, wait_event_timeout(log->wait,
						   shca_log_called(log, 1),
						   20 * HZ));
	KUNIT_EXPECT_EQ(test, log->called[0], 7);
	flush_workqueue(to_shca_dev(fx->ibdev)->cmdq.wq);
	KUNIT_EXPECT_EQ(test, log->nr_called, 1);
}

KUNIT_ARRAY_PARAM(shca_ctx, shca_contexts, shca_context_desc);

/* With every slot taken, queuing fails with -EBUSY and loses nothing. */
static void shca_cmdq_slots_exhausted(struct kunit *test)
{
	struct shca_fixture *fx = test->priv;
	struct shca_cmdq_log *log = shca_log_new(test);
	struct shca_test_cmd tc = { .log = log };
	int i;

	shca_block_queue(test, fx->ibdev, log);
	for (i = 1; i < SHCA_CMDQ_SLOTS; i++)
		KUNIT_ASSERT_EQ(test, shca_queue_test_cmd(fx->ibdev, &tc), 0);
	KUNIT_EXPECT_EQ(test, shca_queue_test_cmd(fx->ibdev, &tc), -EBUSY);

	complete(&log->gate);
	flush_workqueue(to_shca_dev(fx->ibdev)->cmdq.wq);
	KUNIT_EXPECT_EQ(test, log->nr_called, SHCA_CMDQ_SLOTS - 1);
	KUNIT_EXPECT_EQ(test, shca_queue_test_cmd(fx->ibdev, &tc), 0);
	flush_workqueue(to_shca_dev(fx->ibdev)->cmdq.wq);
	KUNIT_EXPECT_EQ(test, log->nr_called, SHCA_CMDQ_SLOTS);
}

/*
 * A command that cannot start within the timeout breaks the queue: it
 * fails with -ETIMEDOUT, later ones with -EIO at once, but must-run
 * commands still run.
 */
static void shca_cmdq_broken_fails_fast(struct kunit *test)
{
	struct shca_fixture *fx = test->priv;
	struct shca_cmdq *q = &to_shca_dev(fx->ibdev)->cmdq;
	struct shca_cmdq_log *log = shca_log_new(test);
	struct shca_test_cmd tc = { .log = log, .seq = 1 };
	struct shca_cmd cmd = { .fn = shca_test_cmd_fn, .obj = &tc };
	struct shca_cmd must = { .fn = shca_test_cmd_fn, .obj = &tc,
				 .must_run = true };
	unsigned long start;

	q->timeout = HZ;
	shca_block_queue(test, fx->ibdev, log);
	KUNIT_EXPECT_EQ(test, shca_cmd_exec(q, &cmd), -ETIMEDOUT);
	KUNIT_EXPECT_EQ(test, q->state, SHCA_CMDQ_BROKEN);

	start = jiffies;
	KUNIT_EXPECT_EQ(test, shca_cmd_exec(q, &cmd), -EIO);
	KUNIT_EXPECT_LT(test, jiffies - start, (unsigned long)HZ / 2);
	KUNIT_EXPECT_EQ(test, shca_queue_test_cmd(fx->ibdev, &tc), -EIO);
	KUNIT_EXPECT_EQ(test, log->nr_ran, 0);

	complete(&log->gate);
	KUNIT_EXPECT_EQ(test, shca_cmd_exec(q, &must), 1);
	KUNIT_EXPECT_EQ(test, log->nr_ran, 1);
}

/* Allocate and free a PD through ib_core: two synchronous commands. */
static int shca_pd_round_trip(struct ib_device *ibdev)
{
	struct ib_pd *pd = ib_alloc_pd(ibdev, 0);

	if (IS_ERR(pd))
		return PTR_ERR(pd);
	ib_dealloc_pd(pd);
	return 0;
}

struct shca_nested {
	struct ib_device *ibdev;
	int in_callback;
	struct completion done;
};

/* A verb issued by a handler runs inline, not queued behind itself. */
static int shca_nested_fn(struct shca_cmd *cmd)
{
	struct shca_nested *n = cmd->obj;

	return shca_pd_round_trip(n->ibdev);
}

/* So does one issued by a callback, which runs on the worker too. */
static void shca_nested_done(void *ctx, int status)
{
	struct shca_nested *n = ctx;

	n->in_callback = status ?: shca_pd_round_trip(n->ibdev);
	complete(&n->done);
}

static void shca_cmdq_nested_verbs(struct kunit *test)
{
	struct shca_fixture *fx = test->priv;
	struct shca_nested n = { .ibdev = fx->ibdev, .in_callback = 1 };
	struct shca_cmd *cmd;

	init_completion(&n.done);
	cmd = shca_cmd_slot_get(fx->ibdev, shca_nested_fn, shca_nested_done,
				&n);
	KUNIT_ASSERT_FALSE(test, IS_ERR(cmd));
	cmd->obj = &n;
	shca_cmd_slot_submit(cmd);
	KUNIT_ASSERT_TRUE(test, wait_for_completion_timeout(&n.done,
							    20 * HZ));
	KUNIT_EXPECT_EQ(test, n.in_callback, 0);
}

/*
 * A work item whose function frees it, then issues verbs: nvmet-rdma's
 * queue release does, which the workqueue allows.  The queue must not
 * read the freed item to tell whether the caller is its own worker.
 */
struct shca_freed_work {
	struct work_struct work;
	struct ib_device *ibdev;
	int *status;
	struct completion *done;
};

static void shca_freed_work_fn(struct work_struct *work)
{
	struct shca_freed_work *fw = container_of(work, typeof(*fw), work);
	struct completion *done = fw->done;
	struct ib_device *ibdev = fw->ibdev;
	int *status = fw->status;

	kfree(fw);
	*status = shca_pd_round_trip(ibdev);
	complete(done);
}

static void shca_cmdq_verb_from_freed_work(struct kunit *test)
{
	struct shca_fixture *fx = test->priv;
	DECLARE_COMPLETION_ONSTACK(done);
	struct shca_freed_work *fw;
	int status = 1;

	fw = kzalloc(sizeof(*fw), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, fw);
	fw->ibdev = fx->ibdev;
	fw->status = &status;
	fw->done = &done;
	INIT_WORK(&fw->work, shca_freed_work_fn);
	queue_work(system_wq, &fw->work);
	KUNIT_ASSERT_TRUE(test, wait_for_completion_timeout(&done, 20 * HZ));
	KUNIT_EXPECT_EQ(test, status, 0);
}

/* A QP, its CQ and PD, torn down by asynchronous commands. */
struct shca_removal {
	struct kunit *test;
	struct shca_fixture *fx;
	struct ib_pd *pd;
	struct ib_cq *cq;
	struct ib_qp *qp;
	int status[3];
	atomic_t called;
	struct work_struct remove;
};

static void shca_removal_done(void *ctx, int status)
{
	struct shca_removal *r = ctx;
	int i = atomic_inc_return(&r->called) - 1;

	if (i < ARRAY_SIZE(r->status))
		r->status[i] = status;
	/* Last: the PD, from the callback, with a sleeping verb. */
	if (i == 2)
		ib_dealloc_pd(r->pd);
}

static void shca_removal_work(struct work_struct *work)
{
	struct shca_removal *r = container_of(work, struct shca_removal,
					      remove);

	shca_fixture_teardown(r->fx);
}

static void shca_removal_objects(struct kunit *test, struct shca_removal *r)
{
	struct ib_cq_init_attr cq_attr = { .cqe = 4 };
	struct ib_qp_init_attr init = {
		.cap = { .max_send_wr = 1, .max_recv_wr = 1,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.qp_type = IB_QPT_RC,
	};

	r->pd = ib_alloc_pd(r->fx->ibdev, 0);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, r->pd);
	r->cq = ib_create_cq(r->fx->ibdev, NULL, NULL, NULL, &cq_attr);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, r->cq);
	init.send_cq = r->cq;
	init.recv_cq = r->cq;
	r->qp = ib_create_qp(r->pd, &init);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, r->qp);
}

/*
 * Removing the device (as rdma link delete and module unload do) while
 * asynchronous commands are queued: they all run, each callback once, in
 * order, before the device is freed; no hang, nothing used after free.
 */
static void shca_cmdq_removal_runs_queued(struct kunit *test)
{
	struct shca_cmdq_log *log = shca_log_new(test);
	struct ib_qp_attr attr = { .qp_state = IB_QPS_ERR };
	struct shca_removal *r;

	r = kunit_kzalloc(test, sizeof(*r), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, r);
	r->test = test;
	r->fx = test->priv;
	INIT_WORK(&r->remove, shca_removal_work);
	shca_removal_objects(test, r);

	shca_block_queue(test, r->fx->ibdev, log);
	KUNIT_ASSERT_EQ(test, softhca_async_modify_qp(r->qp, &attr,
						      IB_QP_STATE,
						      shca_removal_done, r), 0);
	KUNIT_ASSERT_EQ(test, softhca_async_destroy_qp(r->qp,
						       shca_removal_done, r),
			0);
	KUNIT_ASSERT_EQ(test, softhca_async_destroy_cq(r->cq,
						       shca_removal_done, r),
			0);
	/* The fixture's exit must not remove the device a second time. */
	test->priv = NULL;
	queue_work(system_unbound_wq, &r->remove);
	msleep(100);
	KUNIT_EXPECT_EQ(test, atomic_read(&r->called), 0);
	complete(&log->gate);
	flush_work(&r->remove);

	KUNIT_EXPECT_EQ(test, atomic_read(&r->called), 3);
	KUNIT_EXPECT_EQ(test, r->status[0], 0);
	KUNIT_EXPECT_EQ(test, r->status[1], 0);
	KUNIT_EXPECT_EQ(test, r->status[2], 0);
}

static struct kunit_case shca_cmdq_cases[] = {
	KUNIT_CASE(shca_cmdq_runs_in_order),
	KUNIT_CASE_PARAM(shca_cmdq_queue_from_atomic, shca_ctx_gen_params),
	KUNIT_CASE(shca_cmdq_slots_exhausted),
	KUNIT_CASE(shca_cmdq_broken_fails_fast),
	KUNIT_CASE(shca_cmdq_nested_verbs),
	KUNIT_CASE(shca_cmdq_verb_from_freed_work),
	KUNIT_CASE(shca_cmdq_removal_runs_queued),
	{}
};

static struct kunit_suite shca_cmdq_suite = {
	.name = "softhca_cmdq",
	.init = shca_fixture_init,
	.exit = shca_fixture_exit,
	.test_cases = shca_cmdq_cases,
};

kunit_test_suite(shca_cmdq_suite);
