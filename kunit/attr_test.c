// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * softhca_attr: the attributes a device reports are consistent with each
 * other, with ib_core's view of the port, and with the bound netdev.
 */

#include <linux/rtnetlink.h>
#include <rdma/ib_cache.h>
#include <rdma/ib_mad.h>

#include "dev.h"
#include "fixture.h"

SHCA_SUITE_FIXTURE(shca_attr_fx, "softhca_ktattr");

static void shca_attr_device_limits(struct kunit *test)
{
	struct shca_fixture *fx = test->priv;
	const struct ib_device_attr *attr = &fx->ibdev->attrs;
	struct ib_device_attr again;

	KUNIT_EXPECT_GE(test, attr->max_qp, 10000);
	KUNIT_EXPECT_GE(test, attr->max_qp_wr, 16384);
	KUNIT_EXPECT_GE(test, attr->max_cqe, attr->max_qp_wr);
	KUNIT_EXPECT_EQ(test, attr->max_send_sge, attr->max_recv_sge);
	KUNIT_EXPECT_LE(test, attr->max_srq_sge, attr->max_recv_sge);
	KUNIT_EXPECT_LE(test, attr->max_srq_wr, attr->max_qp_wr);
	KUNIT_EXPECT_LE(test, attr->max_qp_init_rd_atom, attr->max_qp_rd_atom);
	KUNIT_EXPECT_GE(test, attr->max_res_rd_atom, attr->max_qp_rd_atom);
	KUNIT_EXPECT_EQ(test, attr->max_pkeys, 1);
	KUNIT_EXPECT_EQ(test, be64_to_cpu(attr->sys_image_guid),
			be64_to_cpu(fx->ibdev->node_guid));
	KUNIT_EXPECT_TRUE(test, attr->kernel_cap_flags & IBK_ALLOW_USER_UNREG);
	KUNIT_EXPECT_TRUE(test, attr->kernel_cap_flags & IBK_LOCAL_DMA_LKEY);
	KUNIT_EXPECT_EQ(test, fx->ibdev->local_dma_lkey, SHCA_LOCAL_DMA_LKEY);
	KUNIT_EXPECT_TRUE(test, attr->device_cap_flags &
				IB_DEVICE_PORT_ACTIVE_EVENT);
	KUNIT_EXPECT_NE(test, attr->page_size_cap & PAGE_SIZE, 0);

	/* What ib_core cached at registration is what the device says now. */
	KUNIT_ASSERT_EQ(test, fx->ibdev->ops.query_device(fx->ibdev, &again,
							  NULL), 0);
	KUNIT_EXPECT_EQ(test, memcmp(&again, attr, sizeof(again)), 0);
}

/*
 * What the kernel's ULPs look for before they use a device: fast
 * registration (nvme-rdma, NFS over RDMA, iSER, SRP and RDS refuse a device
 * without it), a page list as long as nvme-rdma's 256 segments, three send
 * SGEs (rpcrdma's minimum), RNR NAKs, a completion vector per online CPU,
 * and the netdev through the get_netdev op (SMC).  Gap-tolerant MRs are not
 * implemented and must not be claimed.
 */
static void shca_attr_ulp_caps(struct kunit *test)
{
	struct shca_fixture *fx = test->priv;
	const struct ib_device_attr *attr = &fx->ibdev->attrs;
	struct net_device *ndev;

	KUNIT_EXPECT_TRUE(test, attr->device_cap_flags &
				IB_DEVICE_MEM_MGT_EXTENSIONS);
	KUNIT_EXPECT_TRUE(test, attr->device_cap_flags &
				IB_DEVICE_RC_RNR_NAK_GEN);
	KUNIT_EXPECT_TRUE(test, attr->device_cap_flags &
				IB_DEVICE_SYS_IMAGE_GUID);
	KUNIT_EXPECT_FALSE(test, attr->kernel_cap_flags & IBK_SG_GAPS_REG);
	KUNIT_EXPECT_GE(test, attr->max_fast_reg_page_list_len, 256);
	KUNIT_EXPECT_GE(test, attr->max_send_sge, 3);
	KUNIT_EXPECT_GE(test, attr->max_sge_rd, 1);
	KUNIT_EXPECT_EQ(test, fx->ibdev->num_comp_vectors, num_online_cpus());

	KUNIT_ASSERT_NOT_NULL(test, fx->ibdev->ops.get_netdev);
	ndev = fx->ibdev->ops.get_netdev(fx->ibdev, SHCA_PORT);
	KUNIT_EXPECT_PTR_EQ(test, ndev, fx->ndev);
	dev_put(ndev);
}

/* The node GUID is the netdev MAC as a modified EUI-64 (IBA 4.1.1). */
static void shca_attr_node_guid_from_mac(struct kunit *test)
{
	struct shca_fixture *fx = test->priv;
	const u8 *mac = fx->ndev->dev_addr;
	u8 want[8] = { mac[0] ^ 2, mac[1], mac[2], 0xff, 0xfe,
		       mac[3], mac[4], mac[5] };

	KUNIT_EXPECT_EQ(test, memcmp(&fx->ibdev->node_guid, want, 8), 0);
	KUNIT_EXPECT_EQ(test, fx->ibdev->node_type, RDMA_NODE_IB_CA);
	KUNIT_EXPECT_EQ(test, rdma_end_port(fx->ibdev), SHCA_PORT);
}

static void shca_attr_port(struct kunit *test)
{
	struct shca_fixture *fx = test->priv;
	struct ib_device *ibdev = fx->ibdev;
	struct ib_port_attr attr;
	u16 pkey;

	KUNIT_ASSERT_EQ(test, ib_query_port(ibdev, SHCA_PORT, &attr), 0);
	KUNIT_EXPECT_EQ(test, attr.state, IB_PORT_ACTIVE);
	KUNIT_EXPECT_EQ(test, attr.max_mtu, IB_MTU_4096);
	KUNIT_EXPECT_LE(test, attr.active_mtu, attr.max_mtu);
	KUNIT_EXPECT_TRUE(test, attr.port_cap_flags & IB_PORT_CM_SUP);
	KUNIT_EXPECT_TRUE(test, attr.ip_gids);
	KUNIT_EXPECT_EQ(test, attr.pkey_tbl_len, 1);
	KUNIT_EXPECT_GE(test, attr.gid_tbl_len, 16);

	KUNIT_EXPECT_EQ(test, rdma_port_get_link_layer(ibdev, SHCA_PORT),
			IB_LINK_LAYER_ETHERNET);
	KUNIT_EXPECT_TRUE(test,
			  rdma_protocol_roce_udp_encap(ibdev, SHCA_PORT));
	KUNIT_EXPECT_FALSE(test,
			   rdma_protocol_roce_eth_encap(ibdev, SHCA_PORT));
	KUNIT_EXPECT_TRUE(test, rdma_cap_ib_cm(ibdev, SHCA_PORT));
	KUNIT_EXPECT_EQ(test, rdma_max_mad_size(ibdev, SHCA_PORT),
			IB_MGMT_MAD_SIZE);

	KUNIT_EXPECT_EQ(test, ib_query_pkey(ibdev, SHCA_PORT, 0, &pkey), 0);
	KUNIT_EXPECT_EQ(test, pkey, IB_DEFAULT_PKEY_FULL);
	KUNIT_EXPECT_EQ(test, ib_query_pkey(ibdev, SHCA_PORT, 1, &pkey),
			-EINVAL);
}

struct shca_mtu_case {
	int netdev_mtu;
	enum ib_mtu ib_mtu;
};

/* RoCEv2 needs 96 bytes of headers beyond the payload (ib_addr.h). */
static const struct shca_mtu_case shca_mtu_cases[] = {
	{ 68, IB_MTU_256 },
	{ 400, IB_MTU_256 },
	{ 700, IB_MTU_512 },
	{ 1500, IB_MTU_1024 },
	{ 2200, IB_MTU_2048 },
	{ 4191, IB_MTU_2048 },
	{ 4192, IB_MTU_4096 },
	{ 9000, IB_MTU_4096 },
};

static void shca_mtu_case_desc(const struct shca_mtu_case *c, char *desc)
{
	snprintf(desc, KUNIT_PARAM_DESC_SIZE, "netdev mtu %d", c->netdev_mtu);
}

KUNIT_ARRAY_PARAM(shca_mtu, shca_mtu_cases, shca_mtu_case_desc);

static void shca_attr_mtu_follows_netdev(struct kunit *test)
{
	const struct shca_mtu_case *c = test->param_value;
	struct shca_fixture *fx = test->priv;
	struct ib_port_attr attr;
	int ret;

	rtnl_lock();
	ret = dev_set_mtu(fx->ndev, c->netdev_mtu);
	rtnl_unlock();
	KUNIT_ASSERT_EQ(test, ret, 0);

	KUNIT_ASSERT_EQ(test, ib_query_port(fx->ibdev, SHCA_PORT, &attr), 0);
	KUNIT_EXPECT_EQ(test, attr.active_mtu, c->ib_mtu);
}

/*
 * GID 0 is the default RoCE GID, fe80::/64 with the interface id made from
 * the MAC: the same bytes as the node GUID.  ib_core fills the table from
 * a work queue, so wait for it.
 */
static void shca_attr_default_gid(struct kunit *test)
{
	struct shca_fixture *fx = test->priv;
	const u8 prefix[8] = { 0xfe, 0x80 };
	union ib_gid gid;

	KUNIT_ASSERT_EQ(test, shca_fixture_wait_gid(fx, 0), 0);
	KUNIT_ASSERT_EQ(test, rdma_query_gid(fx->ibdev, SHCA_PORT, 0, &gid), 0);
	KUNIT_EXPECT_EQ(test, memcmp(gid.raw, prefix, 8), 0);
	KUNIT_EXPECT_EQ(test, memcmp(gid.raw + 8, &fx->ibdev->node_guid, 8),
			0);
}

static struct kunit_case shca_attr_cases[] = {
	KUNIT_CASE(shca_attr_device_limits),
	KUNIT_CASE(shca_attr_ulp_caps),
	KUNIT_CASE(shca_attr_node_guid_from_mac),
	KUNIT_CASE(shca_attr_port),
	KUNIT_CASE_PARAM(shca_attr_mtu_follows_netdev, shca_mtu_gen_params),
	KUNIT_CASE(shca_attr_default_gid),
	{}
};

static struct kunit_suite shca_attr_suite = {
	.name = "softhca_attr",
	.suite_init = shca_attr_fx_suite_init,
	.suite_exit = shca_attr_fx_suite_exit,
	.init = shca_attr_fx_init,
	.test_cases = shca_attr_cases,
};

kunit_test_suite(shca_attr_suite);
