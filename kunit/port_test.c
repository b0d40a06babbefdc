// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * softhca_port: the port follows its netdev.  Each transition of carrier
 * or administrative state yields exactly one port event, and query_port
 * and ib_core's cached state agree with it.
 */

#include <linux/rtnetlink.h>
#include <rdma/ib_cache.h>

#include "dev.h"
#include "fixture.h"

static void shca_expect_port_state(struct kunit *test, struct ib_device *ibdev,
				   enum ib_port_state want)
{
	struct ib_port_attr attr;
	enum ib_port_state cached;

	KUNIT_ASSERT_EQ(test, ib_query_port(ibdev, SHCA_PORT, &attr), 0);
	KUNIT_EXPECT_EQ(test, attr.state, want);
	KUNIT_EXPECT_EQ(test, attr.phys_state,
			want == IB_PORT_ACTIVE ? IB_PORT_PHYS_STATE_LINK_UP :
						 IB_PORT_PHYS_STATE_DISABLED);
	KUNIT_ASSERT_EQ(test,
			ib_get_cached_port_state(ibdev, SHCA_PORT, &cached), 0);
	KUNIT_EXPECT_EQ(test, cached, want);
}

static void shca_port_follows_carrier(struct kunit *test)
{
	struct shca_fixture *fx = test->priv;

	shca_expect_port_state(test, fx->ibdev, IB_PORT_ACTIVE);

	netif_carrier_off(fx->ndev);
	KUNIT_ASSERT_EQ(test, shca_fixture_wait_events(fx, 1), 1);
	KUNIT_EXPECT_EQ(test, fx->events[0], IB_EVENT_PORT_ERR);
	shca_fixture_settle();
	shca_expect_port_state(test, fx->ibdev, IB_PORT_DOWN);

	netif_carrier_on(fx->ndev);
	KUNIT_ASSERT_EQ(test, shca_fixture_wait_events(fx, 2), 2);
	KUNIT_EXPECT_EQ(test, fx->events[1], IB_EVENT_PORT_ACTIVE);
	shca_fixture_settle();
	shca_expect_port_state(test, fx->ibdev, IB_PORT_ACTIVE);
	KUNIT_EXPECT_EQ(test, fx->nr_events, 2);
}

static void shca_port_follows_admin_state(struct kunit *test)
{
	struct shca_fixture *fx = test->priv;

	rtnl_lock();
	dev_close(fx->ndev);
	rtnl_unlock();
	KUNIT_ASSERT_EQ(test, shca_fixture_wait_events(fx, 1), 1);
	KUNIT_EXPECT_EQ(test, fx->events[0], IB_EVENT_PORT_ERR);
	shca_fixture_settle();
	shca_expect_port_state(test, fx->ibdev, IB_PORT_DOWN);

	rtnl_lock();
	KUNIT_EXPECT_EQ(test, dev_open(fx->ndev, NULL), 0);
	rtnl_unlock();
	KUNIT_ASSERT_EQ(test, shca_fixture_wait_events(fx, 2), 2);
	KUNIT_EXPECT_EQ(test, fx->events[1], IB_EVENT_PORT_ACTIVE);
	shca_fixture_settle();
	shca_expect_port_state(test, fx->ibdev, IB_PORT_ACTIVE);
	KUNIT_EXPECT_EQ(test, fx->nr_events, 2);
}

/* A netdev change that is not a port transition must stay silent. */
static void shca_port_no_event_without_transition(struct kunit *test)
{
	struct shca_fixture *fx = test->priv;

	rtnl_lock();
	netdev_state_change(fx->ndev);
	KUNIT_EXPECT_EQ(test, dev_set_mtu(fx->ndev, 4200), 0);
	rtnl_unlock();
	netif_carrier_on(fx->ndev);
	shca_fixture_settle();
	KUNIT_EXPECT_EQ(test, fx->nr_events, 0);
	shca_expect_port_state(test, fx->ibdev, IB_PORT_ACTIVE);
}

static struct kunit_case shca_port_cases[] = {
	KUNIT_CASE(shca_port_follows_carrier),
	KUNIT_CASE(shca_port_follows_admin_state),
	KUNIT_CASE(shca_port_no_event_without_transition),
	{}
};

static struct kunit_suite shca_port_suite = {
	.name = "softhca_port",
	.init = shca_fixture_init,
	.exit = shca_fixture_exit,
	.test_cases = shca_port_cases,
};

kunit_test_suite(shca_port_suite);
