// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * KUnit fixture for softhca: test netdevs and devices bound to them.
 *
 * Devices are created through the same function `rdma link add` reaches
 * (shca_dev_add) and deleted the way `rdma link delete` deletes them
 * (ib_unregister_device_and_put), so the suites exercise the real paths.
 */

#include <linux/delay.h>
#include <linux/etherdevice.h>
#include <linux/ethtool.h>
#include <linux/module.h>
#include <linux/rtnetlink.h>
#include <rdma/ib_cache.h>
#include <rdma/softhca-abi.h>

#include "dev.h"
#include "fixture.h"
#include "verbs.h"

/* Events arrive from ib_core's work queue; TCG makes it slow. */
#define SHCA_TEST_EVENT_TIMEOUT (20 * HZ)

/*
 * A test netdev's private part: the frames it sent, while capturing, and
 * the CPU the last one taken from them was sent from.
 */
struct shca_test_netdev {
	struct sk_buff_head sent;
	bool capture;
	int sent_cpu;
};

/* Frames a capture keeps; the rest (IPv6 chatter, say) are dropped. */
#define SHCA_TEST_CAPTURE_MAX 256

/* The CPU a captured frame was sent from, kept in its control buffer. */
static int *shca_test_cpu(struct sk_buff *skb)
{
	return (int *)skb->cb;
}

static netdev_tx_t shca_test_xmit(struct sk_buff *skb, struct net_device *ndev)
{
	struct shca_test_netdev *priv = netdev_priv(ndev);

	if (READ_ONCE(priv->capture) &&
	    skb_queue_len(&priv->sent) < SHCA_TEST_CAPTURE_MAX) {
		*shca_test_cpu(skb) = smp_processor_id();
		skb_queue_tail(&priv->sent, skb);
		return NETDEV_TX_OK;
	}
	dev_kfree_skb_any(skb);
	return NETDEV_TX_OK;
}

/* Keep (or, @on false, stop keeping and drop) what @ndev sends. */
void shca_test_netdev_capture(struct net_device *ndev, bool on)
{
	struct shca_test_netdev *priv = netdev_priv(ndev);

	WRITE_ONCE(priv->capture, on);
	if (!on)
		skb_queue_purge(&priv->sent);
}

/*
 * Give @ndev scatter-gather (@on), or take it away, as ethtool's "sg"
 * would: without it, the stack copies a packet's page fragments into a
 * linear packet before @ndev sees it.
 */
void shca_test_netdev_sg(struct net_device *ndev, bool on)
{
	rtnl_lock();
	if (on)
		ndev->wanted_features |= NETIF_F_SG;
	else
		ndev->wanted_features &= ~NETIF_F_SG;
	netdev_update_features(ndev);
	rtnl_unlock();
}

/* The CPU the frame shca_test_netdev_sent() gave last was sent from. */
int shca_test_netdev_sent_cpu(struct net_device *ndev)
{
	struct shca_test_netdev *priv = netdev_priv(ndev);

	return priv->sent_cpu;
}

/*
 * The oldest frame @ndev sent while capturing, or NULL when none came
 * within @timeout jiffies.
 */
struct sk_buff *shca_test_netdev_sent(struct net_device *ndev,
				      unsigned long timeout)
{
	struct shca_test_netdev *priv = netdev_priv(ndev);
	unsigned long end = jiffies + timeout;
	struct sk_buff *skb;

	for (;;) {
		skb = skb_dequeue(&priv->sent);
		if (skb)
			priv->sent_cpu = *shca_test_cpu(skb);
		if (skb || !time_before(jiffies, end))
			return skb;
		usleep_range(1000, 10000);
	}
}

/* A 25 Gb/s link, so that ib_core need not guess the port speed. */
static int shca_test_get_link_ksettings(struct net_device *ndev,
					struct ethtool_link_ksettings *cmd)
{
	cmd->base.speed = SPEED_25000;
	cmd->base.duplex = DUPLEX_FULL;
	return 0;
}

static const struct ethtool_ops shca_test_ethtool_ops = {
	.get_link_ksettings = shca_test_get_link_ksettings,
};

static const struct net_device_ops shca_test_netdev_ops = {
	.ndo_start_xmit = shca_test_xmit,
	.ndo_set_mac_address = eth_mac_addr,
	.ndo_validate_addr = eth_validate_addr,
};

/*
 * An up, carrier-on Ethernet netdev that accepts MTUs up to 9000 and, as
 * any NIC, scatter-gather: what is sent reaches its transmit (and the
 * capture) with the page fragments it was built with.
 */
struct net_device *shca_test_netdev_create(void)
{
	struct shca_test_netdev *priv;
	struct net_device *ndev;
	int ret;

	ndev = alloc_netdev(sizeof(struct shca_test_netdev), "shcakt%d",
			    NET_NAME_ENUM, ether_setup);
	if (!ndev)
		return NULL;
	priv = netdev_priv(ndev);
	skb_queue_head_init(&priv->sent);
	ndev->netdev_ops = &shca_test_netdev_ops;
	ndev->ethtool_ops = &shca_test_ethtool_ops;
	ndev->max_mtu = 9000;
	ndev->hw_features = NETIF_F_SG;
	ndev->features = NETIF_F_SG;
	/*
	 * A test may give it another's address, and so its GIDs.  No queue:
	 * a frame reaches the capture from the CPU that sent it, as a veth
	 * hands it on, and one QP's frames are in order per CPU only.
	 */
	ndev->priv_flags |= IFF_LIVE_ADDR_CHANGE | IFF_NO_QUEUE;
	eth_hw_addr_random(ndev);

	ret = register_netdev(ndev);
	if (ret)
		goto err_free_netdev;
	rtnl_lock();
	ret = dev_open(ndev, NULL);
	rtnl_unlock();
	if (ret)
		goto err_unregister_netdev;
	return ndev;

err_unregister_netdev:
	unregister_netdev(ndev);
err_free_netdev:
	free_netdev(ndev);
	return NULL;
}

void shca_test_netdev_destroy(struct net_device *ndev)
{
	unregister_netdev(ndev);
	shca_test_netdev_capture(ndev, false);
	free_netdev(ndev);
}

struct ib_device *shca_test_link_add(struct kunit *test,
				     struct net_device *ndev,
				     const char *name)
{
	int ret = shca_dev_add(name, ndev);

	KUNIT_EXPECT_EQ(test, ret, 0);
	if (ret)
		return NULL;
	return ib_device_get_by_name(name, SOFTHCA_DRIVER_ID);
}

void shca_test_link_delete(struct ib_device *ibdev)
{
	ib_unregister_device_and_put(ibdev);
}

static void shca_fixture_event(struct ib_event_handler *handler,
			       struct ib_event *event)
{
	struct shca_fixture *fx = container_of(handler, struct shca_fixture,
					       handler);
	unsigned long flags;

	spin_lock_irqsave(&fx->lock, flags);
	if (fx->nr_events < ARRAY_SIZE(fx->events))
		fx->events[fx->nr_events] = event->event;
	fx->nr_events++;
	spin_unlock_irqrestore(&fx->lock, flags);
	wake_up(&fx->wait);
}

/* Wait until @count events have arrived; returns how many did. */
unsigned int shca_fixture_wait_events(struct shca_fixture *fx,
				      unsigned int count)
{
	wait_event_timeout(fx->wait, READ_ONCE(fx->nr_events) >= count,
			   SHCA_TEST_EVENT_TIMEOUT);
	return READ_ONCE(fx->nr_events);
}

/* Wait until @count reaches @n, as the handler that wakes @wait counts. */
bool shca_wait_count(wait_queue_head_t *wait, atomic_t *count, int n)
{
	return wait_event_timeout(*wait, atomic_read(count) == n,
				  SHCA_TEST_EVENT_TIMEOUT);
}

/* Let every netdev and ib_core event already raised be delivered. */
void shca_fixture_settle(void)
{
	rtnl_lock();		/* linkwatch events run under RTNL */
	rtnl_unlock();
	flush_workqueue(ib_wq);
}

/* ib_core fills the GID table from a work queue: wait for an entry. */
int shca_fixture_wait_gid(struct shca_fixture *fx, unsigned int index)
{
	union ib_gid gid;
	int ret, tries;

	for (tries = 0; tries < 200; tries++) {
		ret = rdma_query_gid(fx->ibdev, SHCA_PORT, index, &gid);
		if (!ret)
			return 0;
		msleep(50);
	}
	return ret;
}

/**
 * shca_fixture_loopback_av() - a RoCE address vector back to the device
 * @fx: the fixture, whose GID 0 exists (shca_fixture_wait_gid())
 * @ah: filled with GID 0 as destination and the netdev's own MAC; ib_core
 *	resolves the MAC for user space only
 *
 * Return: 0, or rdma_query_gid()'s error.
 */
int shca_fixture_loopback_av(struct shca_fixture *fx, struct rdma_ah_attr *ah)
{
	union ib_gid dgid;
	int ret;

	ret = rdma_query_gid(fx->ibdev, SHCA_PORT, 0, &dgid);
	if (ret)
		return ret;
	*ah = (struct rdma_ah_attr){ .type = RDMA_AH_ATTR_TYPE_ROCE };
	rdma_ah_set_port_num(ah, SHCA_PORT);
	rdma_ah_set_grh(ah, &dgid, 0, 0, 64, 0);
	ether_addr_copy(ah->roce.dmac, fx->ndev->dev_addr);
	return 0;
}

/**
 * shca_fixture_connect() - a QP in RESET through INIT and RTR to RTS
 * @qp: the QP
 * @to: the fixture whose GID 0 and MAC address its path names
 * @attr: what INIT, RTR and RTS take (port, access flags, path MTU,
 *	destination QPN, PSNs, timers, retry counts, READ depths); its
 *	state and address vector are set here
 *
 * Return: 0, or the error of the first step that failed.
 */
int shca_fixture_connect(struct ib_qp *qp, struct shca_fixture *to,
			 struct ib_qp_attr *attr)
{
	int ret;

	attr->qp_state = IB_QPS_INIT;
	ret = ib_modify_qp(qp, attr, IB_QP_STATE | IB_QP_PKEY_INDEX |
			   IB_QP_PORT | IB_QP_ACCESS_FLAGS);
	if (ret)
		return ret;
	ret = shca_fixture_wait_gid(to, 0) ?:
	      shca_fixture_loopback_av(to, &attr->ah_attr);
	if (ret)
		return ret;
	attr->qp_state = IB_QPS_RTR;
	ret = ib_modify_qp(qp, attr, IB_QP_STATE | IB_QP_AV | IB_QP_PATH_MTU |
			   IB_QP_DEST_QPN | IB_QP_RQ_PSN |
			   IB_QP_MAX_DEST_RD_ATOMIC | IB_QP_MIN_RNR_TIMER);
	if (ret)
		return ret;
	attr->qp_state = IB_QPS_RTS;
	return ib_modify_qp(qp, attr, IB_QP_STATE | IB_QP_SQ_PSN |
			    IB_QP_TIMEOUT | IB_QP_RETRY_CNT |
			    IB_QP_RNR_RETRY | IB_QP_MAX_QP_RD_ATOMIC);
}

/**
 * shca_fixture_setup() - a fresh netdev and a softhca device on it
 * @fx: the fixture to fill
 * @name: the device's name
 *
 * For a suite's .suite_init, where one device serves every case, and for
 * the per-test shca_fixture_init().
 *
 * Return: 0, or a negative errno (then @fx holds nothing).
 */
int shca_fixture_setup(struct shca_fixture *fx, const char *name)
{
	int ret;

	*fx = (struct shca_fixture){};
	spin_lock_init(&fx->lock);
	init_waitqueue_head(&fx->wait);
	strscpy(fx->name, name, sizeof(fx->name));

	fx->ndev = shca_test_netdev_create();
	if (!fx->ndev)
		return -ENOMEM;
	ret = shca_dev_add(fx->name, fx->ndev);
	if (ret)
		goto err_destroy_netdev;
	fx->ibdev = ib_device_get_by_name(fx->name, SOFTHCA_DRIVER_ID);
	if (!fx->ibdev) {
		/* Gone already: its netdev's removal took it. */
		ret = -ENODEV;
		goto err_destroy_netdev;
	}
	/*
	 * Every ACK timer waits the QP's local ACK timeout, as the tests
	 * that count timeouts and resends expect; the adaptive timer's own
	 * tests turn it on (rc_wire_test.c).
	 */
	to_shca_dev(fx->ibdev)->adaptive_ack = false;
	INIT_IB_EVENT_HANDLER(&fx->handler, fx->ibdev, shca_fixture_event);
	ib_register_event_handler(&fx->handler);
	return 0;

err_destroy_netdev:
	shca_test_netdev_destroy(fx->ndev);
	return ret;
}

void shca_fixture_teardown(struct shca_fixture *fx)
{
	ib_unregister_event_handler(&fx->handler);
	shca_test_link_delete(fx->ibdev);
	shca_test_netdev_destroy(fx->ndev);
}

/* Per-test: a fresh netdev and a softhca device on it. */
int shca_fixture_init(struct kunit *test)
{
	static atomic_t seq = ATOMIC_INIT(0);
	struct shca_fixture *fx;
	char name[IB_DEVICE_NAME_MAX];
	int ret;

	fx = kunit_kzalloc(test, sizeof(*fx), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, fx);
	snprintf(name, sizeof(name), "softhca_kt%d", atomic_inc_return(&seq));
	ret = shca_fixture_setup(fx, name);
	if (ret) {
		KUNIT_FAIL(test, "cannot add %s: %d", name, ret);
		return ret;
	}
	test->priv = fx;
	return 0;
}

void shca_fixture_exit(struct kunit *test)
{
	if (test->priv)
		shca_fixture_teardown(test->priv);
}

MODULE_DESCRIPTION("KUnit suites for softhca");
MODULE_LICENSE("Dual BSD/GPL");
MODULE_IMPORT_NS(EXPORTED_FOR_KUNIT_TESTING);
