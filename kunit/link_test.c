// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * softhca_link: creating and deleting devices the ways an administrator
 * and the network stack do.  Leaks show up in the harness's kmemleak scan
 * at the end of the run.
 */

#include <linux/rtnetlink.h>
#include <net/net_namespace.h>
#include <rdma/softhca-abi.h>

#include "dev.h"
#include "verbs.h"
#include "fixture.h"

static int shca_link_test_init(struct kunit *test)
{
	test->priv = shca_test_netdev_create();
	KUNIT_ASSERT_NOT_NULL(test, test->priv);
	return 0;
}

static void shca_link_test_exit(struct kunit *test)
{
	if (test->priv)
		shca_test_netdev_destroy(test->priv);
}

/*
 * A device's whole life, again and again: one cycle costs about 4 s of
 * ib_core work under TCG with KASAN and lockdep, and kmemleak reports
 * what any one cycle leaves.
 */
#define SHCA_LINK_CYCLES 10

static void shca_link_add_delete(struct kunit *test)
{
	struct ib_device *ibdev;
	int i;

	for (i = 0; i < SHCA_LINK_CYCLES; i++) {
		ibdev = shca_test_link_add(test, test->priv, "softhca_ktl");
		KUNIT_ASSERT_NOT_NULL(test, ibdev);
		KUNIT_EXPECT_EQ(test, (u32)ibdev->ops.driver_id,
				SOFTHCA_DRIVER_ID);
		KUNIT_EXPECT_TRUE(test, rdma_protocol_roce(ibdev, SHCA_PORT));
		shca_test_link_delete(ibdev);
		KUNIT_ASSERT_NULL(test, ib_device_get_by_name("softhca_ktl",
							      SOFTHCA_DRIVER_ID));
	}
}

static void shca_link_one_device_per_netdev(struct kunit *test)
{
	struct ib_device *ibdev;

	ibdev = shca_test_link_add(test, test->priv, "softhca_ktd0");
	KUNIT_ASSERT_NOT_NULL(test, ibdev);
	KUNIT_EXPECT_EQ(test, shca_dev_add("softhca_ktd1", test->priv),
			-EEXIST);
	KUNIT_EXPECT_NULL(test, ib_device_get_by_name("softhca_ktd1",
						      SOFTHCA_DRIVER_ID));
	shca_test_link_delete(ibdev);
}

static void shca_link_name_taken(struct kunit *test)
{
	struct net_device *other;
	struct ib_device *ibdev;

	ibdev = shca_test_link_add(test, test->priv, "softhca_ktn");
	KUNIT_ASSERT_NOT_NULL(test, ibdev);
	other = shca_test_netdev_create();
	KUNIT_ASSERT_NOT_NULL(test, other);

	KUNIT_EXPECT_EQ(test, shca_dev_add("softhca_ktn", other), -ENFILE);

	shca_test_netdev_destroy(other);
	shca_test_link_delete(ibdev);
}

static void shca_link_refuses_non_ethernet(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, shca_dev_add("softhca_ktlo",
					   init_net.loopback_dev), -EINVAL);
	KUNIT_EXPECT_NULL(test, ib_device_get_by_name("softhca_ktlo",
						      SOFTHCA_DRIVER_ID));
}

/* unregister_netdev() returns only once every reference is gone. */
static void shca_link_follows_netdev_unregister(struct kunit *test)
{
	struct ib_device *ibdev;

	ibdev = shca_test_link_add(test, test->priv, "softhca_ktu");
	KUNIT_ASSERT_NOT_NULL(test, ibdev);
	ib_device_put(ibdev);

	shca_test_netdev_destroy(test->priv);
	test->priv = NULL;

	KUNIT_EXPECT_NULL(test, ib_device_get_by_name("softhca_ktu",
						      SOFTHCA_DRIVER_ID));
}

static struct kunit_case shca_link_cases[] = {
	KUNIT_CASE(shca_link_add_delete),
	KUNIT_CASE(shca_link_one_device_per_netdev),
	KUNIT_CASE(shca_link_name_taken),
	KUNIT_CASE(shca_link_refuses_non_ethernet),
	KUNIT_CASE(shca_link_follows_netdev_unregister),
	{}
};

static struct kunit_suite shca_link_suite = {
	.name = "softhca_link",
	.init = shca_link_test_init,
	.exit = shca_link_test_exit,
	.test_cases = shca_link_cases,
};

kunit_test_suite(shca_link_suite);
