// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * softhca_loop_src: loopback takes an RC message only from the QP's peer,
 * in PSN order, as the wire does.  QP A on device 1 is connected to QP B
 * on device 2.  Each device numbers its own QPs, so a process can create
 * QPs on device 3 until one, C, has B's number, and connect C to A: C's
 * SEND must find A deaf (C retries, then completes with RETRY_EXC_ERR),
 * leave A's receive queue and state alone, and be counted.  So must B's
 * own messages with a PSN other than A's expected one; and the honest
 * pair numbers its messages as the wire would.  Two devices may have one
 * GID (netdevs with one MAC address: VLANs of one NIC): C, given B's GID
 * as well, must still be refused, for its device.
 */

#include <linux/etherdevice.h>
#include <linux/rtnetlink.h>
#include <linux/slab.h>
#include <rdma/ib_cache.h>
#include <rdma/ib_verbs.h>

#include "dev.h"
#include "dp.h"
#include "fixture.h"
#include "frame.h"
#include "qp.h"

/* Each refused WQE: its first try and dp's retry_cnt retries. */
#define SHCA_LS_TRIES (1 + 3)

/* Bounds the attacker's churn for a QPN. */
#define SHCA_LS_CHURN 256

static struct shca_fixture shca_ls_fx[3];

/*
 * A's and B's bench, and the attacker's QP C with its PD and CQ; device
 * 3's own MAC address while it has device 2's.
 */
struct shca_ls {
	struct shca_dp dp;
	struct ib_pd *pd2;
	struct ib_pd *pd3;
	struct ib_cq *cq3;
	struct ib_qp *c;
	bool mac_taken;
	u8 mac3[ETH_ALEN];
};

static struct shca_ls shca_ls;

static int shca_ls_suite_init(struct kunit_suite *suite)
{
	static const char *const names[] = {
		"softhca_ktls1", "softhca_ktls2", "softhca_ktls3",
	};
	int i, ret;

	for (i = 0; i < ARRAY_SIZE(shca_ls_fx); i++) {
		ret = shca_fixture_setup(&shca_ls_fx[i], names[i]);
		if (ret)
			goto err_teardown;
	}
	return 0;

err_teardown:
	while (i--)
		shca_fixture_teardown(&shca_ls_fx[i]);
	return ret;
}

static void shca_ls_suite_exit(struct kunit_suite *suite)
{
	int i;

	for (i = ARRAY_SIZE(shca_ls_fx) - 1; i >= 0; i--)
		shca_fixture_teardown(&shca_ls_fx[i]);
}

static int shca_ls_init(struct kunit *test)
{
	test->priv = &shca_ls;
	return 0;
}

/* Device 3's netdev takes @mac, and with it the GIDs made of it. */
static int shca_ls_set_mac(const u8 *mac)
{
	struct net_device *ndev = shca_ls_fx[2].ndev;
	struct sockaddr sa = { .sa_family = ndev->type };
	int ret;

	ether_addr_copy(sa.sa_data, mac);
	rtnl_lock();
	ret = dev_set_mac_address(ndev, &sa, NULL);
	rtnl_unlock();
	return ret;
}

static void shca_ls_exit(struct kunit *test)
{
	struct shca_ls *ls = test->priv;

	if (ls->mac_taken)
		shca_ls_set_mac(ls->mac3);

	if (!IS_ERR_OR_NULL(ls->c))
		ib_destroy_qp(ls->c);
	if (!IS_ERR_OR_NULL(ls->cq3))
		ib_destroy_cq_user(ls->cq3, NULL);
	if (!IS_ERR_OR_NULL(ls->pd3))
		ib_dealloc_pd(ls->pd3);
	shca_dp_teardown(&ls->dp);
	if (!IS_ERR_OR_NULL(ls->pd2))
		ib_dealloc_pd(ls->pd2);
	*ls = (struct shca_ls){};
}

/* A (QP 0) on device 1 and B (QP 1) on device 2, connected, in RTS. */
static struct shca_dp *shca_ls_bench(struct kunit *test)
{
	struct shca_dp_opts o = shca_dp_rc;
	struct shca_ls *ls = test->priv;

	ls->pd2 = ib_alloc_pd(shca_ls_fx[1].ibdev, IB_PD_UNSAFE_GLOBAL_RKEY);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, ls->pd2);
	o.peer = shca_ls_fx[1].ibdev;
	o.peer_pd = ls->pd2;
	shca_dp_setup(test, &shca_ls_fx[0], &ls->dp, &o);
	return &ls->dp;
}

static void *shca_ls_buf(struct kunit *test, size_t len, u32 seed)
{
	void *buf = kunit_kzalloc(test, len, GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, buf);
	shca_dp_fill(buf, len, seed);
	return buf;
}

/*
 * @qp (in RESET) to RTS, connected to QPN @dest_qpn on @to's device and
 * sending from PSN @sq_psn, with dp's retry counts.
 */
static void shca_ls_connect(struct kunit *test, struct ib_qp *qp,
			    struct shca_fixture *to, u32 dest_qpn, u32 sq_psn)
{
	struct ib_qp_attr attr = {
		.port_num = SHCA_PORT,
		.qp_access_flags = shca_dp_rc.access,
		.path_mtu = IB_MTU_1024,
		.dest_qp_num = dest_qpn,
		.max_dest_rd_atomic = 16,
		.min_rnr_timer = shca_dp_rc.min_rnr_timer,
		.sq_psn = sq_psn,
		.timeout = shca_dp_rc.timeout,
		.retry_cnt = shca_dp_rc.retry_cnt,
		.rnr_retry = shca_dp_rc.rnr_retry,
		.max_rd_atomic = 16,
	};

	KUNIT_ASSERT_EQ(test, shca_fixture_connect(qp, to, &attr), 0);
}

/*
 * The attack: RC QPs on device 3, created and destroyed until one has
 * the number @qpn (B's), then connected to A as B is.
 */
static struct ib_qp *shca_ls_attacker(struct kunit *test, u32 qpn)
{
	struct ib_cq_init_attr cq_attr = { .cqe = 16 };
	struct shca_ls *ls = test->priv;
	struct ib_qp_init_attr init = {
		.cap = {
			.max_send_wr = 4, .max_recv_wr = 4,
			.max_send_sge = 1, .max_recv_sge = 1,
		},
		.sq_sig_type = IB_SIGNAL_REQ_WR,
		.qp_type = IB_QPT_RC,
	};
	int i;

	ls->pd3 = ib_alloc_pd(shca_ls_fx[2].ibdev, IB_PD_UNSAFE_GLOBAL_RKEY);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, ls->pd3);
	ls->cq3 = ib_create_cq(shca_ls_fx[2].ibdev, NULL, NULL, NULL,
			       &cq_attr);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, ls->cq3);
	init.send_cq = ls->cq3;
	init.recv_cq = ls->cq3;
	for (i = 0; i < SHCA_LS_CHURN; i++) {
		ls->c = ib_create_qp(ls->pd3, &init);
		KUNIT_ASSERT_NOT_ERR_OR_NULL(test, ls->c);
		if (ls->c->qp_num == qpn)
			break;
		ib_destroy_qp(ls->c);
		ls->c = NULL;
	}
	KUNIT_ASSERT_NOT_NULL_MSG(test, ls->c, "no QPN %u on device 3", qpn);
	/* Its source GID, which modify_qp resolves. */
	KUNIT_ASSERT_EQ(test, shca_fixture_wait_gid(&shca_ls_fx[2], 0), 0);
	shca_ls_connect(test, ls->c, &shca_ls_fx[0], ls->dp.qp[0]->qp_num, 0);
	return ls->c;
}

static enum ib_qp_state shca_ls_state(struct ib_qp *qp)
{
	struct ib_qp_init_attr init;
	struct ib_qp_attr attr;

	if (ib_query_qp(qp, &attr, IB_QP_STATE, &init))
		return -1;
	return attr.qp_state;
}

/* Waits for @qp's one WQE: in @cq, or QP @i's of @dp when @cq is NULL. */
static enum ib_wc_status shca_ls_send(struct kunit *test, struct shca_dp *dp,
				      int i, struct ib_qp *qp, struct ib_cq *cq,
				      struct ib_sge *sge)
{
	struct ib_send_wr wr = {
		.wr_id = 0x5e9d, .opcode = IB_WR_SEND, .sg_list = sge,
		.num_sge = 1, .send_flags = IB_SEND_SIGNALED,
	};
	const struct ib_send_wr *bad;
	unsigned long end = jiffies + 20 * HZ;
	struct ib_wc wc;

	KUNIT_ASSERT_EQ(test, ib_post_send(qp, &wr, &bad), 0);
	if (!cq) {
		KUNIT_ASSERT_TRUE(test, shca_dp_poll(dp, i, &wc));
	} else {
		while (ib_poll_cq(cq, 1, &wc) != 1) {
			KUNIT_ASSERT_TRUE(test, time_before(jiffies, end));
			usleep_range(20, 200);
		}
	}
	KUNIT_EXPECT_EQ(test, wc.wr_id, 0x5e9d);
	return wc.status;
}

/* A's receive WQE @wr_id still waits: B's next SEND lands in it. */
static void shca_ls_expect_intact(struct kunit *test, struct shca_dp *dp,
				  u64 wr_id, u8 *dst, u32 len)
{
	u8 *src = shca_ls_buf(test, len, 77);
	struct ib_sge sge = shca_dp_sge(dp, src, len);
	struct ib_wc wc;

	KUNIT_EXPECT_EQ(test, shca_ls_state(dp->qp[0]), IB_QPS_RTS);
	KUNIT_EXPECT_TRUE(test, shca_dp_cq_empty(dp, 0));
	KUNIT_EXPECT_EQ(test, shca_ls_send(test, dp, 1, dp->qp[1], NULL, &sge),
			IB_WC_SUCCESS);
	KUNIT_ASSERT_TRUE(test, shca_dp_poll(dp, 0, &wc));
	KUNIT_EXPECT_EQ(test, wc.status, IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(test, wc.wr_id, wr_id);
	KUNIT_EXPECT_EQ(test, wc.byte_len, len);
	KUNIT_EXPECT_EQ(test, memcmp(dst, src, len), 0);
}

/*
 * Device 3 takes device 2's MAC address; its default GID, made of it,
 * becomes B's (ib_core's netdev events change it).
 */
static void shca_ls_take_gid(struct kunit *test)
{
	struct shca_ls *ls = test->priv;
	union ib_gid gid2, gid3;
	int tries;

	ether_addr_copy(ls->mac3, shca_ls_fx[2].ndev->dev_addr);
	KUNIT_ASSERT_EQ(test, shca_ls_set_mac(shca_ls_fx[1].ndev->dev_addr),
			0);
	ls->mac_taken = true;
	KUNIT_ASSERT_EQ(test, rdma_query_gid(shca_ls_fx[1].ibdev, SHCA_PORT, 0,
					     &gid2), 0);
	for (tries = 0; tries < 200; tries++) {
		if (!rdma_query_gid(shca_ls_fx[2].ibdev, SHCA_PORT, 0, &gid3) &&
		    !memcmp(&gid2, &gid3, sizeof(gid2)))
			return;
		msleep(50);
	}
	KUNIT_FAIL(test, "device 3's GID 0 never became device 2's");
}

/*
 * C on device 3 has B's QPN (and, given @same_gid, B's GID as its source)
 * and names A as its peer: its SEND is dropped (not from A's path's GID
 * and device), counted, unanswered.
 */
static void shca_ls_impostor(struct kunit *test, bool same_gid)
{
	struct shca_dp *dp = shca_ls_bench(test);
	struct ib_device *dev1 = shca_ls_fx[0].ibdev;
	u8 *dst = shca_ls_buf(test, 64, 0);
	u8 *evil = shca_ls_buf(test, 64, 66);
	struct ib_sge sge;
	struct ib_qp *c;
	s64 before;

	KUNIT_ASSERT_EQ(test, shca_dp_post_recv(dp, 0, 1, dst, 64), 0);
	if (same_gid)
		shca_ls_take_gid(test);
	c = shca_ls_attacker(test, dp->qp[1]->qp_num);
	before = shca_frame_drops(test, dev1, SHCA_DROP_LOOP_SRC);
	sge = (struct ib_sge){
		.addr = (uintptr_t)evil, .length = 64,
		.lkey = c->pd->local_dma_lkey,
	};
	KUNIT_EXPECT_EQ(test, shca_ls_send(test, dp, 0, c, shca_ls.cq3, &sge),
			IB_WC_RETRY_EXC_ERR);
	KUNIT_EXPECT_EQ(test, shca_frame_drops(test, dev1, SHCA_DROP_LOOP_SRC),
			before + SHCA_LS_TRIES);
	shca_ls_expect_intact(test, dp, 1, dst, 64);
}

static void shca_ls_foreign_qpn(struct kunit *test)
{
	shca_ls_impostor(test, false);
}

static void shca_ls_same_gid(struct kunit *test)
{
	shca_ls_impostor(test, true);
}

/* B, reconnected to A from @sq_psn, a PSN A does not expect. */
static void shca_ls_bad_psn(struct kunit *test, struct shca_dp *dp,
			    u32 sq_psn)
{
	struct ib_device *dev1 = shca_ls_fx[0].ibdev;
	u8 *src = shca_ls_buf(test, 64, 3);
	struct ib_sge sge = shca_dp_sge(dp, src, 64);
	s64 before = shca_frame_drops(test, dev1, SHCA_DROP_LOOP_PSN);

	KUNIT_ASSERT_EQ(test, shca_dp_modify(dp->qp[1], IB_QPS_RESET), 0);
	shca_ls_connect(test, dp->qp[1], &shca_ls_fx[0], dp->qp[0]->qp_num,
			sq_psn);
	KUNIT_EXPECT_EQ(test, shca_ls_send(test, dp, 1, dp->qp[1], NULL, &sge),
			IB_WC_RETRY_EXC_ERR);
	KUNIT_EXPECT_EQ(test, shca_frame_drops(test, dev1, SHCA_DROP_LOOP_PSN),
			before + SHCA_LS_TRIES);
	KUNIT_EXPECT_EQ(test, shca_ls_state(dp->qp[0]), IB_QPS_RTS);
	KUNIT_EXPECT_TRUE(test, shca_dp_cq_empty(dp, 0));
}

/*
 * B's messages from a PSN behind A's ePSN (a replay) and ahead of it are
 * dropped and counted; from the expected PSN, taken.
 */
static void shca_ls_psn_order(struct kunit *test)
{
	struct shca_dp *dp = shca_ls_bench(test);
	u8 *dst = shca_ls_buf(test, 64, 0);

	KUNIT_ASSERT_EQ(test, shca_dp_post_recv(dp, 0, 1, dst, 64), 0);
	shca_ls_expect_intact(test, dp, 1, dst, 64);
	KUNIT_EXPECT_EQ(test, to_shca_qp(dp->qp[0])->resp.epsn, 1);

	KUNIT_ASSERT_EQ(test, shca_dp_post_recv(dp, 0, 2, dst, 64), 0);
	shca_ls_bad_psn(test, dp, 0);
	shca_ls_bad_psn(test, dp, 0x100);
	KUNIT_ASSERT_EQ(test, shca_dp_modify(dp->qp[1], IB_QPS_RESET), 0);
	shca_ls_connect(test, dp->qp[1], &shca_ls_fx[0], dp->qp[0]->qp_num, 1);
	shca_ls_expect_intact(test, dp, 2, dst, 64);
}

/*
 * The honest pair, both ways: every opcode's data compared, and the PSNs
 * used as the wire would number them at a 1024-byte MTU.
 */
static void shca_ls_honest(struct kunit *test)
{
	struct shca_dp *dp = shca_ls_bench(test);
	u8 *a = shca_ls_buf(test, 3000, 1), *b = shca_ls_buf(test, 3000, 0);
	struct ib_sge sge = shca_dp_sge(dp, a, 3000);
	struct ib_rdma_wr rdma = {
		.wr = { .wr_id = 0x5e9d, .opcode = IB_WR_RDMA_WRITE,
			.sg_list = &sge, .num_sge = 1,
			.send_flags = IB_SEND_SIGNALED },
		.remote_addr = (uintptr_t)b,
		.rkey = shca_ls.pd2->unsafe_global_rkey,
	};
	s64 drops[2];
	struct ib_wc wc;
	int i;

	for (i = 0; i < 2; i++)
		drops[i] = shca_frame_drops(test, shca_ls_fx[i].ibdev,
					    SHCA_DROP_LOOP_PSN) +
			   shca_frame_drops(test, shca_ls_fx[i].ibdev,
					    SHCA_DROP_LOOP_SRC);
	/* A SEND of 3 packets, B to A. */
	KUNIT_ASSERT_EQ(test, shca_dp_post_recv(dp, 0, 1, b, 3000), 0);
	KUNIT_EXPECT_EQ(test, shca_ls_send(test, dp, 1, dp->qp[1], NULL, &sge),
			IB_WC_SUCCESS);
	KUNIT_ASSERT_TRUE(test, shca_dp_poll(dp, 0, &wc));
	KUNIT_EXPECT_EQ(test, wc.status, IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(test, memcmp(a, b, 3000), 0);
	/* A WRITE of 2 packets and a READ of 3 responses, A to B. */
	for (i = 0; i < 2; i++) {
		memset(b, 0, 3000);
		sge.length = i ? 3000 : 2000;
		rdma.wr.opcode = i ? IB_WR_RDMA_READ : IB_WR_RDMA_WRITE;
		if (i) {
			shca_dp_fill(b, 3000, 9);
			memset(a, 0, 3000);
		}
		KUNIT_ASSERT_EQ(test, shca_dp_post_send(dp, 0, &rdma.wr), 0);
		KUNIT_ASSERT_TRUE(test, shca_dp_poll(dp, 0, &wc));
		KUNIT_EXPECT_EQ(test, wc.status, IB_WC_SUCCESS);
		KUNIT_EXPECT_EQ(test, memcmp(a, b, sge.length), 0);
	}
	KUNIT_EXPECT_EQ(test, to_shca_qp(dp->qp[1])->req.psn, 3);
	KUNIT_EXPECT_EQ(test, to_shca_qp(dp->qp[0])->resp.epsn, 3);
	KUNIT_EXPECT_EQ(test, to_shca_qp(dp->qp[0])->req.psn, 5);
	KUNIT_EXPECT_EQ(test, to_shca_qp(dp->qp[1])->resp.epsn, 5);
	for (i = 0; i < 2; i++)
		KUNIT_EXPECT_EQ(test, shca_frame_drops(test, shca_ls_fx[i].ibdev,
						       SHCA_DROP_LOOP_PSN) +
				shca_frame_drops(test, shca_ls_fx[i].ibdev,
						 SHCA_DROP_LOOP_SRC), drops[i]);
}

static struct kunit_case shca_ls_cases[] = {
	KUNIT_CASE(shca_ls_foreign_qpn),
	KUNIT_CASE(shca_ls_same_gid),
	KUNIT_CASE(shca_ls_psn_order),
	KUNIT_CASE(shca_ls_honest),
	{}
};

static struct kunit_suite shca_ls_suite = {
	.name = "softhca_loop_src",
	.suite_init = shca_ls_suite_init,
	.suite_exit = shca_ls_suite_exit,
	.init = shca_ls_init,
	.exit = shca_ls_exit,
	.test_cases = shca_ls_cases,
};

kunit_test_suite(shca_ls_suite);
