// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * softhca_fault: every allocation an object's creation makes can fail,
 * on the caller's side or on the command queue's worker, and the verb
 * then fails with -ENOMEM, counts nothing, and leaves nothing behind
 * (kmemleak and KASAN watch the run).  Each case fails the 1st, 2nd, ...
 * allocation of one create path through softhca's fault point, until a
 * creation succeeds without reaching the fault.
 */

#include "context.h"
#include "dev.h"
#include "fault.h"
#include "fixture.h"

SHCA_SUITE_FIXTURE(shca_fault_fx, "softhca_ktfault");

/* No create path makes more allocations than this. */
#define SHCA_FAULT_MAX_ALLOCS 16

struct shca_fault_env {
	struct ib_pd *pd;
	struct ib_cq *cq;
	struct ib_srq *srq;
	struct rdma_ah_attr av;
	void *obj;			/* what the path under test created */
};

struct shca_fault_path {
	const char *name;
	int min_allocs;			/* fault points the path must reach */
	int (*create)(struct shca_fault_env *env);
	void (*destroy)(struct shca_fault_env *env);
};

static int shca_fault_obj(struct shca_fault_env *env, void *obj)
{
	env->obj = obj;
	return PTR_ERR_OR_ZERO(obj);
}

static int shca_fault_cq(struct shca_fault_env *env)
{
	struct ib_cq_init_attr attr = { .cqe = 16 };

	return shca_fault_obj(env, ib_create_cq(shca_fault_fx.ibdev, NULL,
						NULL, NULL, &attr));
}

static void shca_fault_cq_destroy(struct shca_fault_env *env)
{
	ib_destroy_cq(env->obj);
}

static struct ib_qp *shca_fault_new_qp(struct shca_fault_env *env,
				       struct ib_srq *srq)
{
	struct ib_qp_init_attr init = {
		.send_cq = env->cq,
		.recv_cq = env->cq,
		.srq = srq,
		.cap = { .max_send_wr = 4, .max_recv_wr = srq ? 0 : 4,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.qp_type = IB_QPT_RC,
	};

	return ib_create_qp(env->pd, &init);
}

static int shca_fault_qp(struct shca_fault_env *env)
{
	return shca_fault_obj(env, shca_fault_new_qp(env, NULL));
}

static int shca_fault_qp_srq(struct shca_fault_env *env)
{
	return shca_fault_obj(env, shca_fault_new_qp(env, env->srq));
}

static void shca_fault_qp_destroy(struct shca_fault_env *env)
{
	ib_destroy_qp(env->obj);
}

static int shca_fault_srq(struct shca_fault_env *env)
{
	struct ib_srq_init_attr init = {
		.attr = { .max_wr = 16, .max_sge = 1 },
	};

	return shca_fault_obj(env, ib_create_srq(env->pd, &init));
}

static void shca_fault_srq_destroy(struct shca_fault_env *env)
{
	ib_destroy_srq(env->obj);
}

static int shca_fault_ah(struct shca_fault_env *env)
{
	return shca_fault_obj(env, rdma_create_ah(env->pd, &env->av, 0));
}

static void shca_fault_ah_destroy(struct shca_fault_env *env)
{
	rdma_destroy_ah(env->obj, 0);
}

static int shca_fault_frmr(struct shca_fault_env *env)
{
	return shca_fault_obj(env, ib_alloc_mr(env->pd, IB_MR_TYPE_MEM_REG,
					       32));
}

/* The DMA MR behind a PD's global rkey: PD and MR come and go together. */
static int shca_fault_dma_mr(struct shca_fault_env *env)
{
	return shca_fault_obj(env, ib_alloc_pd(shca_fault_fx.ibdev,
					       IB_PD_UNSAFE_GLOBAL_RKEY));
}

static void shca_fault_mr_destroy(struct shca_fault_env *env)
{
	ib_dereg_mr(env->obj);
}

static int shca_fault_pd(struct shca_fault_env *env)
{
	return shca_fault_obj(env, ib_alloc_pd(shca_fault_fx.ibdev, 0));
}

static void shca_fault_pd_destroy(struct shca_fault_env *env)
{
	ib_dealloc_pd(env->obj);
}

static const struct shca_fault_path shca_fault_paths[] = {
	{ "pd", 0, shca_fault_pd, shca_fault_pd_destroy },
	{ "cq", 1, shca_fault_cq, shca_fault_cq_destroy },
	{ "qp", 3, shca_fault_qp, shca_fault_qp_destroy },
	{ "qp_on_srq", 2, shca_fault_qp_srq, shca_fault_qp_destroy },
	{ "srq", 1, shca_fault_srq, shca_fault_srq_destroy },
	{ "ah", 1, shca_fault_ah, shca_fault_ah_destroy },
	{ "fast_reg_mr", 3, shca_fault_frmr, shca_fault_mr_destroy },
	{ "dma_mr", 2, shca_fault_dma_mr, shca_fault_pd_destroy },
};

static void shca_fault_path_desc(const struct shca_fault_path *path,
				 char *desc)
{
	strscpy(desc, path->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(shca_fault_paths, shca_fault_paths, shca_fault_path_desc);

/* Fail the (@skip + 1)th allocation from now, silently. */
static void shca_fault_arm(int skip)
{
	shca_fault_attr.verbose = 0;
	shca_fault_attr.interval = 1;
	/* should_fail() skips calls while space exceeds their size (1). */
	atomic_set(&shca_fault_attr.space, skip + 1);
	atomic_set(&shca_fault_attr.times, 1);
	WRITE_ONCE(shca_fault_attr.probability, 100);
}

/* Return: whether the armed fault fired. */
static bool shca_fault_disarm(void)
{
	WRITE_ONCE(shca_fault_attr.probability, 0);
	return !atomic_read(&shca_fault_attr.times);
}

static void shca_fault_env_init(struct kunit *test,
				struct shca_fault_env *env)
{
	struct ib_srq_init_attr srq = { .attr = { .max_wr = 4, .max_sge = 1 } };
	struct ib_device *ibdev = shca_fault_fx.ibdev;

	env->pd = ib_alloc_pd(ibdev, 0);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, env->pd);
	env->cq = ib_alloc_cq(ibdev, NULL, 16, 0, IB_POLL_DIRECT);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, env->cq);
	env->srq = ib_create_srq(env->pd, &srq);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, env->srq);
	KUNIT_ASSERT_EQ(test, shca_fixture_wait_gid(&shca_fault_fx, 0), 0);
	KUNIT_ASSERT_EQ(test, shca_fixture_loopback_av(&shca_fault_fx,
						       &env->av), 0);
}

static void shca_fault_env_fini(struct shca_fault_env *env)
{
	ib_destroy_srq(env->srq);
	ib_free_cq(env->cq);
	ib_dealloc_pd(env->pd);
}

static void shca_fault_sweep(struct kunit *test)
{
	const struct shca_fault_path *path = test->param_value;
	struct shca_dev *dev = to_shca_dev(shca_fault_fx.ibdev);
	int before[SHCA_RES_MAX], n, res, ret;
	struct shca_fault_env env = {};
	bool fired;

	shca_fault_env_init(test, &env);
	for (res = 0; res < SHCA_RES_MAX; res++)
		before[res] = atomic_read(&dev->res[res]);
	for (n = 0; n < SHCA_FAULT_MAX_ALLOCS; n++) {
		shca_fault_arm(n);
		ret = path->create(&env);
		fired = shca_fault_disarm();
		if (!fired) {
			KUNIT_EXPECT_EQ_MSG(test, ret, 0, "%s: no fault",
					    path->name);
			if (!ret)
				path->destroy(&env);
			break;
		}
		KUNIT_EXPECT_EQ_MSG(test, ret, -ENOMEM,
				    "%s: allocation %d failed", path->name, n);
		if (!ret)
			path->destroy(&env);
		for (res = 0; res < SHCA_RES_MAX; res++)
			KUNIT_EXPECT_EQ_MSG(test, atomic_read(&dev->res[res]),
					    before[res],
					    "%s: allocation %d: counter %d",
					    path->name, n, res);
	}
	KUNIT_EXPECT_EQ_MSG(test, n, path->min_allocs,
			    "%s: fault points reached", path->name);
	shca_fault_env_fini(&env);
}

static struct kunit_case shca_fault_cases[] = {
	KUNIT_CASE_PARAM(shca_fault_sweep, shca_fault_paths_gen_params),
	{}
};

static struct kunit_suite shca_fault_suite = {
	.name = "softhca_fault",
	.suite_init = shca_fault_fx_suite_init,
	.suite_exit = shca_fault_fx_suite_exit,
	.init = shca_fault_fx_init,
	.test_cases = shca_fault_cases,
};

kunit_test_suite(shca_fault_suite);
