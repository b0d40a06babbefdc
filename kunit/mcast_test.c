// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * softhca_mcast: UD QPs attached to a multicast group.  A packet from
 * another host to the group, destination QP 0xFFFFFF, reaches every QP
 * attached to it and no other, with the bytes sent; one to the group
 * that names another QP is dropped.  What the device itself sends to
 * the group leaves as one frame to the group's MAC, and the IP stack's
 * multicast loopback brings it to the members on the same device.  The
 * netdev is in the group (its multicast filter has the group's MAC) as
 * long as a QP is attached, and a QP destroyed attached leaves it.
 */

#include <linux/etherdevice.h>
#include <net/if_inet6.h>
#include <rdma/ib_cache.h>

#include "dev.h"
#include "dp.h"
#include "fixture.h"
#include "frame.h"
#include "qp.h"
#include "wire.h"

SHCA_SUITE_FIXTURE(shca_mcast_fx, "softhca_ktmcast");

#define SHCA_MCAST_LEN 200
#define SHCA_MCAST_QKEY 0x1234		/* shca_dp_setup()'s UD Q_Key */
#define SHCA_MCAST_PEER_QPN 0x777

/* A link-local-scope group: the fixture's GID is link-local too. */
static const union ib_gid shca_mcast_mgid = {
	.raw = { 0xff, 0x12, [12] = 0x53, 0x48, 0x00, 0x01 },
};

/* Whether the netdev's multicast filter has the group's MAC. */
static bool shca_mcast_mac_listed(struct net_device *ndev)
{
	struct netdev_hw_addr *ha;
	u8 mac[ETH_ALEN];
	bool found = false;

	ipv6_eth_mc_map((const struct in6_addr *)shca_mcast_mgid.raw, mac);
	netif_addr_lock_bh(ndev);
	netdev_for_each_mc_addr(ha, ndev) {
		if (ether_addr_equal(ha->addr, mac))
			found = true;
	}
	netif_addr_unlock_bh(ndev);
	return found;
}

static int shca_mcast_attach(struct shca_dp *dp, int i)
{
	union ib_gid mgid = shca_mcast_mgid;

	return ib_attach_mcast(dp->qp[i], &mgid, 0);
}

static int shca_mcast_detach(struct shca_dp *dp, int i)
{
	union ib_gid mgid = shca_mcast_mgid;

	return ib_detach_mcast(dp->qp[i], &mgid, 0);
}

static void shca_mcast_setup(struct kunit *test, struct shca_dp *dp)
{
	struct shca_dp_opts o = shca_dp_rc;
	union ib_gid gid;

	o.type = IB_QPT_UD;
	shca_dp_setup(test, test->priv, dp, &o);
	shca_frame_gid(test, dp->fx, &gid);
}

/* A UD SEND from the peer to the group, naming @dqpn. */
static void shca_mcast_frame(struct kunit *test, struct shca_dp *dp,
			     u32 dqpn, const void *payload,
			     struct shca_frame *f)
{
	struct shca_pkt pkt = {
		.opcode = SHCA_OPCODE(UD, SEND_ONLY),
		.pkey = 0xffff,
		.dqpn = dqpn,
		.qkey = SHCA_MCAST_QKEY,
		.sqpn = SHCA_MCAST_PEER_QPN,
		.paylen = SHCA_MCAST_LEN,
	};

	shca_frame_build(test, dp->fx->ndev, &shca_mcast_mgid, &pkt, payload,
			 f);
	ipv6_eth_mc_map(&shca_frame_ip6(f)->daddr, shca_frame_eth(f)->h_dest);
}

/* QP @i received @payload, sent to the group by @sqpn from @smac. */
static void shca_mcast_expect(struct kunit *test, struct shca_dp *dp, int i,
			      u8 *buf, const u8 *payload, u32 sqpn,
			      const u8 *smac)
{
	struct ib_wc wc;

	KUNIT_ASSERT_TRUE(test, shca_dp_poll(dp, i, &wc));
	KUNIT_EXPECT_EQ(test, wc.status, IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(test, wc.byte_len, 40 + SHCA_MCAST_LEN);
	KUNIT_EXPECT_EQ(test, wc.src_qp, sqpn);
	KUNIT_EXPECT_TRUE(test, ether_addr_equal(wc.smac, smac));
	KUNIT_EXPECT_TRUE(test, wc.wc_flags & IB_WC_GRH);
	/* The GRH names the group as the destination. */
	KUNIT_EXPECT_EQ(test, memcmp(&((struct ipv6hdr *)buf)->daddr,
				     &shca_mcast_mgid, 16), 0);
	KUNIT_EXPECT_EQ(test, memcmp(buf + 40, payload, SHCA_MCAST_LEN), 0);
}

static u8 *shca_mcast_buf(struct kunit *test, u32 len)
{
	u8 *buf = kunit_kzalloc(test, len, GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, buf);
	return buf;
}

/*
 * What the verbs refuse, and what they do twice: a QP is attached once
 * however often it asks, and one detach ends it.
 */
static void shca_mcast_verbs(struct kunit *test)
{
	struct shca_fixture *fx = test->priv;
	struct shca_dev *dev = to_shca_dev(fx->ibdev);
	union ib_gid mgid = shca_mcast_mgid, ucast;
	struct shca_qp *gsi;
	struct shca_dp dp;

	shca_mcast_setup(test, &dp);
	KUNIT_ASSERT_EQ(test, rdma_query_gid(fx->ibdev, SHCA_PORT, 0, &ucast),
			0);
	/* ib_uverbs calls the ops directly: they check for themselves. */
	KUNIT_EXPECT_EQ(test, fx->ibdev->ops.attach_mcast(dp.qp[0], &ucast, 0),
			-EINVAL);
	gsi = shca_qp_get(dev, 1);
	KUNIT_ASSERT_NOT_NULL(test, gsi);
	KUNIT_EXPECT_EQ(test, fx->ibdev->ops.attach_mcast(&gsi->ibqp, &mgid,
							  0), -EINVAL);
	shca_qp_put(gsi);
	KUNIT_EXPECT_EQ(test, shca_mcast_detach(&dp, 0), -EINVAL);
	KUNIT_EXPECT_FALSE(test, shca_mcast_mac_listed(fx->ndev));

	KUNIT_ASSERT_EQ(test, shca_mcast_attach(&dp, 0), 0);
	KUNIT_EXPECT_EQ(test, fx->ibdev->ops.attach_mcast(dp.qp[0], &mgid, 0),
			0);
	KUNIT_EXPECT_EQ(test, dev->nr_mcg, 1);
	KUNIT_EXPECT_EQ(test, dev->nr_mcast_attached, 1);
	KUNIT_EXPECT_TRUE(test, shca_mcast_mac_listed(fx->ndev));
	KUNIT_EXPECT_EQ(test, shca_mcast_detach(&dp, 0), 0);
	KUNIT_EXPECT_EQ(test, fx->ibdev->ops.detach_mcast(dp.qp[0], &mgid, 0),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, dev->nr_mcg, 0);
	KUNIT_EXPECT_EQ(test, dev->nr_mcast_attached, 0);
	KUNIT_EXPECT_FALSE(test, shca_mcast_mac_listed(fx->ndev));
	shca_dp_teardown(&dp);
}

/*
 * A packet from another host to the group: a copy to each member, none
 * to a QP that left; one naming a QP instead of 0xFFFFFF reaches none.
 */
static void shca_mcast_rx(struct kunit *test)
{
	u8 *payload = shca_mcast_buf(test, SHCA_MCAST_LEN);
	u8 *buf[2] = { shca_mcast_buf(test, 40 + SHCA_MCAST_LEN),
		       shca_mcast_buf(test, 40 + SHCA_MCAST_LEN) };
	struct shca_frame f, bad;
	struct shca_dp dp;
	s64 drops;
	int i;

	shca_mcast_setup(test, &dp);
	shca_dp_fill(payload, SHCA_MCAST_LEN, 11);
	shca_mcast_frame(test, &dp, SHCA_MCAST_QPN, payload, &f);
	for (i = 0; i < 2; i++) {
		KUNIT_ASSERT_EQ(test, shca_mcast_attach(&dp, i), 0);
		KUNIT_ASSERT_EQ(test, shca_dp_post_recv(&dp, i, i, buf[i],
							40 + SHCA_MCAST_LEN),
				0);
	}
	KUNIT_EXPECT_TRUE(test, shca_mcast_mac_listed(dp.fx->ndev));

	shca_frame_inject(test, dp.fx->ndev, &f, 1);
	for (i = 0; i < 2; i++)
		shca_mcast_expect(test, &dp, i, buf[i], payload,
				  SHCA_MCAST_PEER_QPN, shca_frame_peer_mac);

	drops = shca_frame_drops(test, dp.fx->ibdev, SHCA_DROP_QPN);
	shca_mcast_frame(test, &dp, dp.qp[1]->qp_num, payload, &bad);
	for (i = 0; i < 2; i++)
		KUNIT_ASSERT_EQ(test, shca_dp_post_recv(&dp, i, i, buf[i],
							40 + SHCA_MCAST_LEN),
				0);
	shca_frame_inject(test, dp.fx->ndev, &bad, 1);
	KUNIT_EXPECT_EQ(test, shca_frame_wait_drops(test, dp.fx->ibdev,
						    SHCA_DROP_QPN, drops + 1),
			drops + 1);
	KUNIT_EXPECT_TRUE(test, shca_dp_cq_empty(&dp, 0));
	KUNIT_EXPECT_TRUE(test, shca_dp_cq_empty(&dp, 1));

	memset(buf[1], 0, 40 + SHCA_MCAST_LEN);
	KUNIT_ASSERT_EQ(test, shca_mcast_detach(&dp, 0), 0);
	shca_frame_inject(test, dp.fx->ndev, &f, 1);
	shca_mcast_expect(test, &dp, 1, buf[1], payload, SHCA_MCAST_PEER_QPN,
			  shca_frame_peer_mac);
	KUNIT_EXPECT_TRUE(test, shca_dp_cq_empty(&dp, 0));

	/* The last member gone, the netdev left the group. */
	KUNIT_ASSERT_EQ(test, shca_mcast_detach(&dp, 1), 0);
	KUNIT_EXPECT_FALSE(test, shca_mcast_mac_listed(dp.fx->ndev));
	KUNIT_ASSERT_EQ(test, shca_dp_post_recv(&dp, 1, 1, buf[1],
						40 + SHCA_MCAST_LEN), 0);
	shca_frame_inject(test, dp.fx->ndev, &f, 1);
	KUNIT_EXPECT_TRUE(test, shca_dp_cq_empty(&dp, 1));
	shca_dp_teardown(&dp);
}

/*
 * The device sends to the group: one frame to the group's MAC and
 * destination QP 0xFFFFFF leaves, and QP 1, attached, receives it by the
 * IP stack's multicast loopback; QP 0, the sender, not attached, does not.
 */
static void shca_mcast_send(struct kunit *test)
{
	u8 *payload = shca_mcast_buf(test, SHCA_MCAST_LEN);
	u8 *buf = shca_mcast_buf(test, 40 + SHCA_MCAST_LEN);
	u8 *buf0 = shca_mcast_buf(test, 40 + SHCA_MCAST_LEN);
	struct ib_sge sge;
	struct ib_ud_wr wr = {
		.wr = { .wr_id = 5, .opcode = IB_WR_SEND, .num_sge = 1,
			.sg_list = &sge, .send_flags = IB_SEND_SIGNALED },
		.remote_qpn = SHCA_MCAST_QPN,
		.remote_qkey = SHCA_MCAST_QKEY,
	};
	struct rdma_ah_attr attr;
	struct shca_frame f;
	struct shca_pkt pkt;
	struct shca_dp dp;
	struct ib_wc wc;
	u8 mac[ETH_ALEN];

	shca_mcast_setup(test, &dp);
	shca_dp_fill(payload, SHCA_MCAST_LEN, 12);
	sge = shca_dp_sge(&dp, payload, SHCA_MCAST_LEN);
	KUNIT_ASSERT_EQ(test, shca_fixture_loopback_av(dp.fx, &attr), 0);
	attr.grh.dgid = shca_mcast_mgid;
	ipv6_eth_mc_map((const struct in6_addr *)shca_mcast_mgid.raw, mac);
	ether_addr_copy(attr.roce.dmac, mac);
	wr.ah = rdma_create_ah(dp.pd, &attr, 0);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, wr.ah);
	KUNIT_ASSERT_EQ(test, shca_mcast_attach(&dp, 1), 0);
	KUNIT_ASSERT_EQ(test, shca_dp_post_recv(&dp, 1, 1, buf,
						40 + SHCA_MCAST_LEN), 0);
	KUNIT_ASSERT_EQ(test, shca_dp_post_recv(&dp, 0, 0, buf0,
						40 + SHCA_MCAST_LEN), 0);

	shca_test_netdev_capture(dp.fx->ndev, true);
	KUNIT_ASSERT_EQ(test, shca_dp_post_send(&dp, 0, &wr.wr), 0);
	KUNIT_ASSERT_TRUE(test, shca_dp_poll(&dp, 0, &wc));
	KUNIT_EXPECT_EQ(test, wc.status, IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(test, wc.wr_id, 5);
	shca_frame_capture(test, dp.fx, &f);
	shca_test_netdev_capture(dp.fx->ndev, false);

	KUNIT_EXPECT_TRUE(test, ether_addr_equal(shca_frame_eth(&f)->h_dest,
						 mac));
	KUNIT_EXPECT_EQ(test, memcmp(&shca_frame_ip6(&f)->daddr,
				     &shca_mcast_mgid, 16), 0);
	KUNIT_ASSERT_EQ(test, shca_pkt_parse(&pkt, shca_frame_bth(&f),
					     shca_frame_bth_len(&f)), 0);
	KUNIT_EXPECT_EQ(test, pkt.dqpn, SHCA_MCAST_QPN);
	KUNIT_EXPECT_EQ(test, pkt.sqpn, dp.qp[0]->qp_num);
	KUNIT_EXPECT_EQ(test, memcmp(shca_frame_bth(&f) + pkt.hdr_len,
				     payload, SHCA_MCAST_LEN), 0);

	shca_mcast_expect(test, &dp, 1, buf, payload, dp.qp[0]->qp_num,
			  dp.fx->ndev->dev_addr);
	KUNIT_EXPECT_TRUE(test, shca_dp_cq_empty(&dp, 0));
	KUNIT_EXPECT_EQ(test, shca_mcast_detach(&dp, 1), 0);
	rdma_destroy_ah(wr.ah, 0);
	shca_dp_teardown(&dp);
}

/*
 * QPs attached through the ops, as ib_uverbs attaches them (ib_core does
 * not count those), and destroyed attached: they leave, and the group
 * with them.
 */
static void shca_mcast_destroy(struct kunit *test)
{
	struct shca_fixture *fx = test->priv;
	struct shca_dev *dev = to_shca_dev(fx->ibdev);
	union ib_gid mgid = shca_mcast_mgid;
	struct shca_dp dp;
	int i;

	shca_mcast_setup(test, &dp);
	for (i = 0; i < 2; i++)
		KUNIT_ASSERT_EQ(test, fx->ibdev->ops.attach_mcast(dp.qp[i],
								  &mgid, 0),
				0);
	KUNIT_EXPECT_EQ(test, dev->nr_mcast_attached, 2);
	KUNIT_EXPECT_TRUE(test, shca_mcast_mac_listed(fx->ndev));
	shca_dp_teardown(&dp);
	KUNIT_EXPECT_EQ(test, dev->nr_mcg, 0);
	KUNIT_EXPECT_EQ(test, dev->nr_mcast_attached, 0);
	KUNIT_EXPECT_FALSE(test, shca_mcast_mac_listed(fx->ndev));
}

/* A group takes max_mcast_qp_attach QPs, and refuses one more. */
static void shca_mcast_group_limit(struct kunit *test)
{
	struct shca_fixture *fx = test->priv;
	u32 n = fx->ibdev->attrs.max_mcast_qp_attach;
	union ib_gid mgid = shca_mcast_mgid;
	struct ib_qp_init_attr init = {
		.qp_type = IB_QPT_UD,
		.cap = { .max_send_wr = 1, .max_recv_wr = 1,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ib_qp **qps;
	struct shca_dp dp;
	u32 made, i;

	KUNIT_ASSERT_GT(test, n, 0);
	qps = kunit_kcalloc(test, n + 1, sizeof(*qps), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, qps);
	shca_mcast_setup(test, &dp);
	init.send_cq = dp.cq[0];
	init.recv_cq = dp.cq[0];
	for (made = 0; made <= n; made++) {
		qps[made] = ib_create_qp(dp.pd, &init);
		if (IS_ERR(qps[made]))
			break;
	}
	KUNIT_EXPECT_EQ(test, made, n + 1);
	for (i = 0; i < made; i++)
		KUNIT_EXPECT_EQ(test, ib_attach_mcast(qps[i], &mgid, 0),
				i < n ? 0 : -ENOMEM);
	for (i = 0; i < made; i++) {
		/* ib_core counts the attachments that succeeded. */
		if (atomic_read(&qps[i]->usecnt))
			KUNIT_EXPECT_EQ(test, ib_detach_mcast(qps[i], &mgid, 0),
					0);
		KUNIT_EXPECT_EQ(test, ib_destroy_qp(qps[i]), 0);
	}
	KUNIT_EXPECT_FALSE(test, shca_mcast_mac_listed(fx->ndev));
	shca_dp_teardown(&dp);
}

static struct kunit_case shca_mcast_cases[] = {
	KUNIT_CASE(shca_mcast_verbs),
	KUNIT_CASE(shca_mcast_rx),
	KUNIT_CASE(shca_mcast_send),
	KUNIT_CASE(shca_mcast_destroy),
	KUNIT_CASE(shca_mcast_group_limit),
	{}
};

static struct kunit_suite shca_mcast_suite = {
	.name = "softhca_mcast",
	.suite_init = shca_mcast_fx_suite_init,
	.suite_exit = shca_mcast_fx_suite_exit,
	.init = shca_mcast_fx_init,
	.test_cases = shca_mcast_cases,
};

kunit_test_suite(shca_mcast_suite);
