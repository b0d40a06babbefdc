// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * softhca_srq: SRQs get the capacity they ask for; posting from any
 * context stores the WQE the data path then takes, checked; the limit
 * event fires once when fewer WQEs than the armed limit remain, and
 * disarms; a QP on an SRQ has no receive queue of its own; limits hold.
 */

#include "context.h"
#include "dev.h"
#include "fixture.h"
#include "srq.h"

SHCA_SUITE_FIXTURE(shca_srq_fx, "softhca_ktsrq");

struct shca_srq_env {
	struct ib_pd *pd;
	struct ib_srq *srq;
	atomic_t events;
	enum ib_event_type event;
	wait_queue_head_t wait;
	struct ib_sge sge[2];
	struct ib_recv_wr wr[4];
	const struct ib_recv_wr *bad_wr;
	int ret;
};

static void shca_srq_event(struct ib_event *event, void *ctx)
{
	struct shca_srq_env *env = ctx;

	env->event = event->event;
	atomic_inc(&env->events);
	wake_up(&env->wait);
}

static int shca_srq_res(void)
{
	return atomic_read(&to_shca_dev(shca_srq_fx.ibdev)->res[SHCA_RES_SRQ]);
}

static struct ib_srq *shca_srq_new(struct shca_srq_env *env, u32 max_wr,
				   u32 limit)
{
	struct ib_srq_init_attr init = {
		.event_handler = shca_srq_event,
		.srq_context = env,
		.attr = { .max_wr = max_wr, .max_sge = 2, .srq_limit = limit },
	};

	return ib_create_srq(env->pd, &init);
}

static struct shca_srq_env *shca_srq_env_new(struct kunit *test, u32 max_wr)
{
	struct shca_srq_env *env;
	int i;

	env = kunit_kzalloc(test, sizeof(*env), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, env);
	init_waitqueue_head(&env->wait);
	env->pd = ib_alloc_pd(shca_srq_fx.ibdev, 0);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, env->pd);
	env->srq = shca_srq_new(env, max_wr, 0);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, env->srq);
	env->sge[0] = (struct ib_sge){ .addr = 0x1000, .length = 10,
				       .lkey = 0x100 };
	env->sge[1] = (struct ib_sge){ .addr = 0x2000, .length = 20,
				       .lkey = 0x200 };
	for (i = 0; i < ARRAY_SIZE(env->wr); i++)
		env->wr[i] = (struct ib_recv_wr){
			.wr_id = 50 + i,
			.sg_list = env->sge,
			.num_sge = 1 + i % 2,
			.next = i + 1 < ARRAY_SIZE(env->wr) ? &env->wr[i + 1] :
							     NULL,
		};
	return env;
}

static void shca_srq_env_free(struct kunit *test, struct shca_srq_env *env)
{
	KUNIT_EXPECT_EQ(test, ib_destroy_srq_user(env->srq, NULL), 0);
	ib_dealloc_pd(env->pd);
}

static void shca_srq_create(struct kunit *test)
{
	struct shca_srq_env *env = shca_srq_env_new(test, 10);
	struct ib_srq_attr attr;
	struct ib_srq *srq;

	KUNIT_ASSERT_EQ(test, ib_query_srq(env->srq, &attr), 0);
	KUNIT_EXPECT_GE(test, attr.max_wr, 10);
	KUNIT_EXPECT_EQ(test, attr.max_sge, 2);
	KUNIT_EXPECT_EQ(test, attr.srq_limit, 0);
	KUNIT_EXPECT_EQ(test, shca_srq_res(), 1);

	srq = shca_srq_new(env, SHCA_MAX_SRQ_WR + 1, 0);
	KUNIT_EXPECT_EQ(test, PTR_ERR_OR_ZERO(srq), -EINVAL);
	srq = shca_srq_new(env, 4, 5);
	KUNIT_EXPECT_EQ(test, PTR_ERR_OR_ZERO(srq), -EINVAL);
	srq = shca_srq_new(env, 0, 0);
	KUNIT_EXPECT_EQ(test, PTR_ERR_OR_ZERO(srq), -EINVAL);
	attr.max_wr = 100;
	KUNIT_EXPECT_EQ(test, ib_modify_srq(env->srq, &attr, IB_SRQ_MAX_WR),
			-EOPNOTSUPP);
	attr.srq_limit = 1000;
	KUNIT_EXPECT_EQ(test, ib_modify_srq(env->srq, &attr, IB_SRQ_LIMIT),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, shca_srq_res(), 1);
	shca_srq_env_free(test, env);
	KUNIT_EXPECT_EQ(test, shca_srq_res(), 0);
}

static void shca_srq_post_fn(void *arg)
{
	struct shca_srq_env *env = arg;

	env->ret = ib_post_srq_recv(env->srq, env->wr, &env->bad_wr);
}

/* Posted from each context, taken back as posted; too many SGEs refused. */
static void shca_srq_post_pop(struct kunit *test)
{
	const enum shca_context *ctx = test->param_value;
	struct shca_srq_env *env = shca_srq_env_new(test, 8);
	struct shca_srq *srq = to_shca_srq(env->srq);
	struct softhca_recv_wqe wqe;
	struct softhca_sge sge[2];
	int i;

	shca_run_in(test, *ctx, shca_srq_post_fn, env);
	KUNIT_ASSERT_EQ(test, env->ret, 0);
	for (i = 0; i < ARRAY_SIZE(env->wr); i++) {
		KUNIT_ASSERT_EQ(test, shca_srq_pop(srq, &wqe, sge), 0);
		KUNIT_EXPECT_EQ(test, wqe.wr_id, 50 + i);
		KUNIT_EXPECT_EQ(test, wqe.num_sge, 1 + i % 2);
		KUNIT_EXPECT_EQ(test, sge[0].addr, 0x1000);
		KUNIT_EXPECT_EQ(test, sge[0].length, 10);
		KUNIT_EXPECT_EQ(test, sge[0].lkey, 0x100);
		if (wqe.num_sge == 2)
			KUNIT_EXPECT_EQ(test, sge[1].lkey, 0x200);
	}
	KUNIT_EXPECT_EQ(test, shca_srq_pop(srq, &wqe, sge), -ENOENT);

	env->wr[1].num_sge = 3;
	shca_run_in(test, *ctx, shca_srq_post_fn, env);
	KUNIT_EXPECT_EQ(test, env->ret, -EINVAL);
	KUNIT_EXPECT_PTR_EQ(test, env->bad_wr, &env->wr[1]);
	KUNIT_EXPECT_EQ(test, shca_srq_pop(srq, &wqe, sge), 0);
	KUNIT_EXPECT_EQ(test, shca_srq_pop(srq, &wqe, sge), -ENOENT);
	shca_srq_env_free(test, env);
}

KUNIT_ARRAY_PARAM(shca_srq_ctx, shca_contexts, shca_context_desc);

/*
 * IBA 10.2.9.5: armed with limit L, the SRQ raises one event when fewer
 * than L WQEs remain, then is disarmed (a query reports limit 0).
 */
static void shca_srq_limit_event(struct kunit *test)
{
	struct shca_srq_env *env = shca_srq_env_new(test, 16);
	struct shca_srq *srq = to_shca_srq(env->srq);
	struct ib_srq_attr attr = { .srq_limit = 3 };
	struct softhca_recv_wqe wqe;
	struct softhca_sge sge[2];
	int i;

	for (i = 0; i < 2; i++)
		KUNIT_ASSERT_EQ(test, ib_post_srq_recv(env->srq, env->wr,
						       &env->bad_wr), 0);
	KUNIT_ASSERT_EQ(test, ib_modify_srq(env->srq, &attr, IB_SRQ_LIMIT), 0);
	KUNIT_ASSERT_EQ(test, ib_query_srq(env->srq, &attr), 0);
	KUNIT_EXPECT_EQ(test, attr.srq_limit, 3);

	/* 8 posted: taking 5 leaves 3, not fewer. */
	for (i = 0; i < 5; i++)
		KUNIT_ASSERT_EQ(test, shca_srq_pop(srq, &wqe, sge), 0);
	flush_work(&srq->events.work);
	KUNIT_EXPECT_EQ(test, atomic_read(&env->events), 0);
	KUNIT_ASSERT_EQ(test, shca_srq_pop(srq, &wqe, sge), 0);
	KUNIT_EXPECT_TRUE(test, shca_wait_count(&env->wait, &env->events, 1));
	KUNIT_EXPECT_EQ(test, env->event, IB_EVENT_SRQ_LIMIT_REACHED);
	KUNIT_ASSERT_EQ(test, ib_query_srq(env->srq, &attr), 0);
	KUNIT_EXPECT_EQ(test, attr.srq_limit, 0);

	/* Disarmed: no more events. */
	while (!shca_srq_pop(srq, &wqe, sge))
		;
	flush_work(&srq->events.work);
	KUNIT_EXPECT_EQ(test, atomic_read(&env->events), 1);
	shca_srq_env_free(test, env);
}

/* A QP on an SRQ takes its receives from there: post_recv is refused. */
static void shca_srq_qp_has_no_rq(struct kunit *test)
{
	struct shca_srq_env *env = shca_srq_env_new(test, 8);
	struct ib_cq *cq = ib_alloc_cq(shca_srq_fx.ibdev, NULL, 8, 0,
				       IB_POLL_DIRECT);
	struct ib_qp_init_attr init = {
		.cap = { .max_send_wr = 1, .max_send_sge = 1 },
		.qp_type = IB_QPT_RC,
		.srq = env->srq,
	};
	struct ib_qp_attr attr = {
		.qp_state = IB_QPS_INIT,
		.port_num = SHCA_PORT,
	};
	const struct ib_recv_wr *bad;
	struct ib_qp *qp;

	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, cq);
	init.send_cq = cq;
	init.recv_cq = cq;
	qp = ib_create_qp(env->pd, &init);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, qp);
	KUNIT_ASSERT_EQ(test, ib_modify_qp(qp, &attr, IB_QP_STATE |
					   IB_QP_PKEY_INDEX | IB_QP_PORT |
					   IB_QP_ACCESS_FLAGS), 0);
	KUNIT_EXPECT_EQ(test, ib_post_recv(qp, env->wr, &bad), -EINVAL);
	KUNIT_EXPECT_PTR_EQ(test, bad, &env->wr[0]);
	KUNIT_EXPECT_EQ(test, ib_destroy_qp(qp), 0);
	ib_free_cq(cq);
	shca_srq_env_free(test, env);
}

/* One SRQ more than query_device advertises fails cleanly. */
static void shca_srq_limit(struct kunit *test)
{
	struct shca_dev *dev = to_shca_dev(shca_srq_fx.ibdev);
	struct shca_srq_env *env = shca_srq_env_new(test, 1);
	struct ib_srq *over;

	KUNIT_ASSERT_EQ(test, dev->ibdev.attrs.max_srq, SHCA_MAX_SRQ);
	atomic_set(&dev->res[SHCA_RES_SRQ], SHCA_MAX_SRQ);
	over = shca_srq_new(env, 1, 0);
	KUNIT_EXPECT_EQ(test, PTR_ERR_OR_ZERO(over), -ENOMEM);
	if (!IS_ERR(over))
		ib_destroy_srq_user(over, NULL);
	KUNIT_EXPECT_EQ(test, shca_srq_res(), SHCA_MAX_SRQ);
	atomic_set(&dev->res[SHCA_RES_SRQ], 1);
	shca_srq_env_free(test, env);
}

static void shca_srq_cycles(struct kunit *test)
{
	struct shca_srq_env *env = shca_srq_env_new(test, 1);
	u64 start = ktime_get_ns();
	struct ib_srq *srq;
	int i;

	for (i = 0; i < SHCA_TEST_CYCLES; i++) {
		srq = shca_srq_new(env, 64, 0);
		KUNIT_ASSERT_NOT_ERR_OR_NULL(test, srq);
		KUNIT_ASSERT_EQ(test, ib_destroy_srq_user(srq, NULL), 0);
	}
	KUNIT_EXPECT_EQ(test, shca_srq_res(), 1);
	kunit_info(test, "%d SRQ cycles in %llu ms\n", SHCA_TEST_CYCLES,
		   (ktime_get_ns() - start) / NSEC_PER_MSEC);
	shca_srq_env_free(test, env);
}

static struct kunit_case shca_srq_cases[] = {
	KUNIT_CASE(shca_srq_create),
	KUNIT_CASE_PARAM(shca_srq_post_pop, shca_srq_ctx_gen_params),
	KUNIT_CASE(shca_srq_limit_event),
	KUNIT_CASE(shca_srq_qp_has_no_rq),
	KUNIT_CASE(shca_srq_limit),
	KUNIT_CASE(shca_srq_cycles),
	{}
};

static struct kunit_suite shca_srq_suite = {
	.name = "softhca_srq",
	.suite_init = shca_srq_fx_suite_init,
	.suite_exit = shca_srq_fx_suite_exit,
	.init = shca_srq_fx_init,
	.test_cases = shca_srq_cases,
};

kunit_test_suite(shca_srq_suite);
