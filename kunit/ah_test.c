// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * softhca_ah: address handles are created and destroyed inline from any
 * context (ib_core calls them from atomic context), through the
 * asynchronous API as well, refuse what RoCEv2 cannot address, and are
 * counted against the advertised limit.
 */

#include <linux/etherdevice.h>
#include <rdma/softhca.h>

#include "ah.h"
#include "context.h"
#include "dev.h"
#include "fixture.h"

SHCA_SUITE_FIXTURE(shca_ah_fx, "softhca_ktah");

struct shca_ah_fixture {
	struct ib_pd *pd;
	struct rdma_ah_attr attr;
	struct ib_ah *ah;
	struct completion done;
	int status;
};

/* A unicast RoCEv2 destination reached from GID 0 of the device. */
static struct shca_ah_fixture *shca_ah_setup(struct kunit *test)
{
	struct shca_fixture *fx = test->priv;
	struct shca_ah_fixture *af;
	union ib_gid dgid = {};
	const u8 dmac[ETH_ALEN] = { 0x02, 0x00, 0x5e, 0x00, 0x53, 0x01 };

	KUNIT_ASSERT_EQ(test, shca_fixture_wait_gid(fx, 0), 0);
	af = kunit_kzalloc(test, sizeof(*af), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, af);
	init_completion(&af->done);
	af->pd = ib_alloc_pd(fx->ibdev, 0);
	KUNIT_ASSERT_FALSE(test, IS_ERR(af->pd));

	ipv6_addr_set_v4mapped(htonl(0xc0000202), (struct in6_addr *)dgid.raw);
	af->attr.type = rdma_ah_find_type(fx->ibdev, SHCA_PORT);
	rdma_ah_set_port_num(&af->attr, SHCA_PORT);
	rdma_ah_set_grh(&af->attr, &dgid, 0x1234, 0, 64, 0);
	memcpy(af->attr.roce.dmac, dmac, ETH_ALEN);
	return af;
}

static void shca_ah_teardown(struct shca_ah_fixture *af)
{
	ib_dealloc_pd(af->pd);
}

static void shca_ah_create_fn(void *arg)
{
	struct shca_ah_fixture *af = arg;

	af->ah = rdma_create_ah(af->pd, &af->attr, 0);
}

static void shca_ah_destroy_fn(void *arg)
{
	struct shca_ah_fixture *af = arg;

	rdma_destroy_ah(af->ah, 0);
}

static void shca_expect_ah_attr(struct kunit *test, struct ib_ah *ah,
				const struct rdma_ah_attr *want)
{
	struct rdma_ah_attr got;

	KUNIT_ASSERT_EQ(test, rdma_query_ah(ah, &got), 0);
	KUNIT_EXPECT_EQ(test, got.type, RDMA_AH_ATTR_TYPE_ROCE);
	KUNIT_EXPECT_EQ(test, memcmp(got.grh.dgid.raw, want->grh.dgid.raw,
				     sizeof(got.grh.dgid)), 0);
	KUNIT_EXPECT_EQ(test, got.grh.flow_label, 0x1234);
	KUNIT_EXPECT_EQ(test, got.grh.hop_limit, 64);
	KUNIT_EXPECT_EQ(test, got.grh.sgid_index, 0);
	KUNIT_EXPECT_EQ(test, memcmp(got.roce.dmac, want->roce.dmac,
				     ETH_ALEN), 0);
	KUNIT_EXPECT_EQ(test, to_shca_ah(ah)->av.net_type, RDMA_NETWORK_IPV6);
	KUNIT_EXPECT_NE(test, to_shca_ah(ah)->num, 0);
	rdma_destroy_ah_attr(&got);
}

static void shca_ah_inline_in_atomic(struct kunit *test)
{
	const enum shca_context *ctx = test->param_value;
	struct shca_ah_fixture *af = shca_ah_setup(test);
	struct shca_dev *dev = to_shca_dev(af->pd->device);

	shca_run_in(test, *ctx, shca_ah_create_fn, af);
	KUNIT_ASSERT_FALSE(test, IS_ERR(af->ah));
	KUNIT_EXPECT_EQ(test, atomic_read(&dev->res[SHCA_RES_AH]), 1);
	shca_expect_ah_attr(test, af->ah, &af->attr);
	shca_run_in(test, *ctx, shca_ah_destroy_fn, af);
	KUNIT_EXPECT_EQ(test, atomic_read(&dev->res[SHCA_RES_AH]), 0);
	shca_ah_teardown(af);
}

static void shca_ah_created(void *ctx, struct ib_ah *ah)
{
	struct shca_ah_fixture *af = ctx;

	af->ah = ah;
	complete(&af->done);
}

static void shca_ah_destroyed(void *ctx, int status)
{
	struct shca_ah_fixture *af = ctx;

	af->status = status;
	complete(&af->done);
}

static void shca_ah_async_create_fn(void *arg)
{
	struct shca_ah_fixture *af = arg;

	af->status = softhca_async_create_ah(af->pd, &af->attr,
					     shca_ah_created, af);
}

static void shca_ah_async_destroy_fn(void *arg)
{
	struct shca_ah_fixture *af = arg;

	af->status = softhca_async_destroy_ah(af->ah, shca_ah_destroyed, af);
}

static void shca_ah_async_in_atomic(struct kunit *test)
{
	const enum shca_context *ctx = test->param_value;
	struct shca_ah_fixture *af = shca_ah_setup(test);

	shca_run_in(test, *ctx, shca_ah_async_create_fn, af);
	KUNIT_ASSERT_EQ(test, af->status, 0);
	KUNIT_ASSERT_TRUE(test, wait_for_completion_timeout(&af->done,
							    20 * HZ));
	KUNIT_ASSERT_FALSE(test, IS_ERR(af->ah));
	shca_expect_ah_attr(test, af->ah, &af->attr);

	reinit_completion(&af->done);
	af->status = -1;
	shca_run_in(test, *ctx, shca_ah_async_destroy_fn, af);
	KUNIT_ASSERT_EQ(test, af->status, 0);
	KUNIT_ASSERT_TRUE(test, wait_for_completion_timeout(&af->done,
							    20 * HZ));
	KUNIT_EXPECT_EQ(test, af->status, 0);
	shca_ah_teardown(af);
}

KUNIT_ARRAY_PARAM(shca_ah_ctx, shca_contexts, shca_context_desc);

/* The device checks what ib_core lets through from other callers. */
static void shca_ah_refuses_non_roce(struct kunit *test)
{
	struct shca_fixture *fx = test->priv;
	struct rdma_ah_attr attr = { .type = RDMA_AH_ATTR_TYPE_IB };
	struct rdma_ah_init_attr init = { .ah_attr = &attr };
	struct shca_ah *ah;

	ah = kunit_kzalloc(test, sizeof(*ah), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, ah);
	ah->ibah.device = fx->ibdev;
	KUNIT_EXPECT_EQ(test, shca_create_ah(&ah->ibah, &init, NULL), -EINVAL);

	attr.type = RDMA_AH_ATTR_TYPE_ROCE;
	rdma_ah_set_port_num(&attr, SHCA_PORT);
	KUNIT_EXPECT_EQ(test, shca_create_ah(&ah->ibah, &init, NULL), -EINVAL);
	KUNIT_EXPECT_EQ(test, atomic_read(&to_shca_dev(fx->ibdev)->res[SHCA_RES_AH]),
			0);
}

/* One AH more than query_device advertises fails cleanly. */
static void shca_ah_limit(struct kunit *test)
{
	struct shca_ah_fixture *af = shca_ah_setup(test);
	struct shca_dev *dev = to_shca_dev(af->pd->device);
	struct ib_ah *last, *over;

	KUNIT_ASSERT_EQ(test, af->pd->device->attrs.max_ah, SHCA_MAX_AH);
	atomic_set(&dev->res[SHCA_RES_AH], SHCA_MAX_AH - 1);
	last = rdma_create_ah(af->pd, &af->attr, RDMA_CREATE_AH_SLEEPABLE);
	KUNIT_EXPECT_FALSE(test, IS_ERR(last));
	over = rdma_create_ah(af->pd, &af->attr, RDMA_CREATE_AH_SLEEPABLE);
	KUNIT_EXPECT_EQ(test, PTR_ERR_OR_ZERO(over), -ENOMEM);
	if (!IS_ERR(over))
		rdma_destroy_ah(over, RDMA_DESTROY_AH_SLEEPABLE);
	if (!IS_ERR(last))
		rdma_destroy_ah(last, RDMA_DESTROY_AH_SLEEPABLE);
	KUNIT_EXPECT_EQ(test, atomic_read(&dev->res[SHCA_RES_AH]),
			SHCA_MAX_AH - 1);
	atomic_set(&dev->res[SHCA_RES_AH], 0);
	shca_ah_teardown(af);
}

/* Many PD and AH create/destroy cycles leave nothing behind. */
static void shca_pd_ah_cycles(struct kunit *test)
{
	struct shca_ah_fixture *af = shca_ah_setup(test);
	struct shca_dev *dev = to_shca_dev(af->pd->device);
	int pds = atomic_read(&dev->res[SHCA_RES_PD]);
	u64 start = ktime_get_ns();
	struct ib_pd *pd;
	struct ib_ah *ah;
	int i;

	for (i = 0; i < SHCA_TEST_CYCLES; i++) {
		pd = ib_alloc_pd(af->pd->device, 0);
		KUNIT_ASSERT_NOT_ERR_OR_NULL(test, pd);
		ah = rdma_create_ah(pd, &af->attr, 0);
		KUNIT_ASSERT_NOT_ERR_OR_NULL(test, ah);
		rdma_destroy_ah(ah, 0);
		ib_dealloc_pd(pd);
	}
	KUNIT_EXPECT_EQ(test, atomic_read(&dev->res[SHCA_RES_PD]), pds);
	KUNIT_EXPECT_EQ(test, atomic_read(&dev->res[SHCA_RES_AH]), 0);
	KUNIT_EXPECT_TRUE(test, xa_empty(&dev->ahs));
	kunit_info(test, "%d PD and AH cycles in %llu ms\n", SHCA_TEST_CYCLES,
		   (ktime_get_ns() - start) / NSEC_PER_MSEC);
	shca_ah_teardown(af);
}

static struct kunit_case shca_ah_cases[] = {
	KUNIT_CASE_PARAM(shca_ah_inline_in_atomic, shca_ah_ctx_gen_params),
	KUNIT_CASE_PARAM(shca_ah_async_in_atomic, shca_ah_ctx_gen_params),
	KUNIT_CASE(shca_ah_refuses_non_roce),
	KUNIT_CASE(shca_ah_limit),
	KUNIT_CASE(shca_pd_ah_cycles),
	{}
};

static struct kunit_suite shca_ah_suite = {
	.name = "softhca_ah",
	.suite_init = shca_ah_fx_suite_init,
	.suite_exit = shca_ah_fx_suite_exit,
	.init = shca_ah_fx_init,
	.test_cases = shca_ah_cases,
};

kunit_test_suite(shca_ah_suite);
