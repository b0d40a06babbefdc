/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Shared KUnit fixture: a private Ethernet netdev (its transmit drops
 * every frame, or keeps it for the test to look at) with a softhca device
 * bound to it, and a recorder of the
 * asynchronous events ib_core delivers for that device.
 */
#ifndef SHCA_KUNIT_FIXTURE_H
#define SHCA_KUNIT_FIXTURE_H

#include <kunit/test.h>
#include <linux/netdevice.h>
#include <rdma/ib_verbs.h>

/*
 * Create/destroy cycles of one object type in a leak test.  kmemleak
 * reports each object a cycle leaves, and the resource counters must be
 * back where they were, so the count needs only to outlast the caches:
 * 1,000 take 4 to 8 s under TCG with KASAN and lockdep, 10,000 took 40 to
 * 80 s each for nothing more.
 */
#define SHCA_TEST_CYCLES 1000

struct shca_fixture {
	struct net_device *ndev;
	struct ib_device *ibdev;	/* holds a reference while set */
	char name[IB_DEVICE_NAME_MAX];

	struct ib_event_handler handler;
	spinlock_t lock;		/* protects the event log below */
	enum ib_event_type events[16];
	unsigned int nr_events;
	wait_queue_head_t wait;
};

struct net_device *shca_test_netdev_create(void);
void shca_test_netdev_destroy(struct net_device *ndev);
void shca_test_netdev_capture(struct net_device *ndev, bool on);
void shca_test_netdev_sg(struct net_device *ndev, bool on);
struct sk_buff *shca_test_netdev_sent(struct net_device *ndev,
				      unsigned long timeout);
int shca_test_netdev_sent_cpu(struct net_device *ndev);

int shca_fixture_setup(struct shca_fixture *fx, const char *name);
void shca_fixture_teardown(struct shca_fixture *fx);
int shca_fixture_init(struct kunit *test);
void shca_fixture_exit(struct kunit *test);

struct ib_device *shca_test_link_add(struct kunit *test,
				     struct net_device *ndev,
				     const char *name);
void shca_test_link_delete(struct ib_device *ibdev);

unsigned int shca_fixture_wait_events(struct shca_fixture *fx,
				      unsigned int count);
void shca_fixture_settle(void);
bool shca_wait_count(wait_queue_head_t *wait, atomic_t *count, int n);
int shca_fixture_wait_gid(struct shca_fixture *fx, unsigned int index);
int shca_fixture_loopback_av(struct shca_fixture *fx, struct rdma_ah_attr *ah);
int shca_fixture_connect(struct ib_qp *qp, struct shca_fixture *to,
			 struct ib_qp_attr *attr);

/*
 * One device for a whole suite (creating one takes seconds under TCG):
 * defines _fx, and the suite's .suite_init, .suite_exit and .init
 * (_fx##_suite_init, _fx##_suite_exit, _fx##_init), the last of which
 * points test->priv at _fx.  Each case leaves the device as it found it.
 */
#define SHCA_SUITE_FIXTURE(_fx, _name)					\
static struct shca_fixture _fx;						\
static int _fx##_suite_init(struct kunit_suite *suite)			\
{									\
	return shca_fixture_setup(&_fx, _name);				\
}									\
static void _fx##_suite_exit(struct kunit_suite *suite)		\
{									\
	shca_fixture_teardown(&_fx);					\
}									\
static int _fx##_init(struct kunit *test)				\
{									\
	test->priv = &_fx;						\
	return 0;							\
}

#endif /* SHCA_KUNIT_FIXTURE_H */
