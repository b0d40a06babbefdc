// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * softhca_roce: RoCEv2 on the wire, through the fixture's netdev, which
 * keeps what it sends.  A UD send to another host leaves as one packet
 * that says what was posted (Ethernet, IPv6, UDP to 4791 from the QP's
 * source port, BTH, DETH, payload, ICRC over the masked headers).  That
 * packet, addressed back to the device and given to the netdev's receive
 * path, goes up the IP stack to softhca's UDP socket and is delivered to
 * the QP it names, GRH first.  Damaged variants of it are dropped and
 * counted by reason, and deliver nothing.  What waits for the QP's engine
 * is bounded by the memory it pins, whatever the packets carry.
 */

#include <linux/etherdevice.h>
#include <linux/ipv6.h>
#include <linux/udp.h>

#include "dev.h"
#include "dp.h"
#include "engine.h"
#include "fixture.h"
#include "frame.h"
#include "icrc.h"
#include "qp.h"
#include "roce.h"
#include "wire.h"

SHCA_SUITE_FIXTURE(shca_roce_fx, "softhca_ktroce");

#define SHCA_ROCE_LEN 256
#define SHCA_ROCE_QKEY 0x1234		/* shca_dp_setup()'s UD Q_Key */
#define SHCA_ROCE_PEER_QPN 0x4321

/* QP 0 sends @src to the peer; @f gets the frame that left. */
static void shca_roce_ud_send(struct kunit *test, struct shca_dp *dp,
			      void *src, struct shca_frame *f)
{
	struct ib_sge sge = shca_dp_sge(dp, src, SHCA_ROCE_LEN);
	struct ib_ud_wr wr = {
		.wr = { .wr_id = 1, .opcode = IB_WR_SEND, .num_sge = 1,
			.sg_list = &sge, .send_flags = IB_SEND_SIGNALED },
		.remote_qpn = SHCA_ROCE_PEER_QPN,
		.remote_qkey = SHCA_ROCE_QKEY,
	};
	struct rdma_ah_attr attr;
	struct ib_wc wc;

	shca_frame_peer_av(&attr);
	wr.ah = rdma_create_ah(dp->pd, &attr, 0);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, wr.ah);

	shca_test_netdev_capture(dp->fx->ndev, true);
	KUNIT_ASSERT_EQ(test, shca_dp_post_send(dp, 0, &wr.wr), 0);
	KUNIT_ASSERT_TRUE(test, shca_dp_poll(dp, 0, &wc));
	KUNIT_EXPECT_EQ(test, wc.status, IB_WC_SUCCESS);
	shca_frame_capture(test, dp->fx, f);
	shca_test_netdev_capture(dp->fx->ndev, false);
	rdma_destroy_ah(wr.ah, 0);
}

static void shca_roce_setup(struct kunit *test, struct shca_dp *dp,
			    union ib_gid *gid, u8 *src, struct shca_frame *f)
{
	struct shca_dp_opts o = shca_dp_rc;

	o.type = IB_QPT_UD;
	shca_dp_setup(test, test->priv, dp, &o);
	shca_frame_gid(test, test->priv, gid);
	shca_frame_neigh(test, dp->fx->ndev);
	shca_dp_fill(src, SHCA_ROCE_LEN, 7);
	shca_roce_ud_send(test, dp, src, f);
}

/* A UD send to another host: one packet, every field as posted. */
static void shca_roce_ud_tx(struct kunit *test)
{
	u8 *src = kunit_kzalloc(test, SHCA_ROCE_LEN, GFP_KERNEL);
	struct shca_frame f = {};
	struct shca_dp dp;
	struct shca_pkt pkt;
	union ib_gid gid;
	u32 qpn;

	KUNIT_ASSERT_NOT_NULL(test, src);
	shca_roce_setup(test, &dp, &gid, src, &f);
	qpn = dp.qp[0]->qp_num;

	KUNIT_EXPECT_TRUE(test, ether_addr_equal(shca_frame_eth(&f)->h_dest,
						 shca_frame_peer_mac));
	KUNIT_EXPECT_TRUE(test, ipv6_addr_equal(&shca_frame_ip6(&f)->daddr,
						&shca_frame_peer));
	KUNIT_EXPECT_EQ(test, memcmp(&shca_frame_ip6(&f)->saddr, &gid,
				     sizeof(gid)), 0);
	KUNIT_EXPECT_EQ(test, shca_frame_ip6(&f)->hop_limit, 64);
	KUNIT_EXPECT_EQ(test, ntohs(shca_frame_udp(&f)->len),
			f.len - SHCA_FRAME_IP_OFF - sizeof(struct ipv6hdr));
	KUNIT_EXPECT_EQ(test, ntohs(shca_frame_udp(&f)->source),
			rdma_get_udp_sport(0, qpn, SHCA_ROCE_PEER_QPN));
	KUNIT_EXPECT_EQ(test, (__force u16)shca_frame_udp(&f)->check, 0);

	KUNIT_ASSERT_EQ(test, shca_pkt_parse(&pkt, shca_frame_bth(&f),
					     shca_frame_bth_len(&f)), 0);
	KUNIT_EXPECT_EQ(test, pkt.opcode, SHCA_OPCODE(UD, SEND_ONLY));
	KUNIT_EXPECT_EQ(test, pkt.dqpn, SHCA_ROCE_PEER_QPN);
	KUNIT_EXPECT_EQ(test, pkt.qkey, SHCA_ROCE_QKEY);
	KUNIT_EXPECT_EQ(test, pkt.sqpn, qpn);
	KUNIT_EXPECT_EQ(test, pkt.pkey, 0xffff);
	KUNIT_ASSERT_EQ(test, pkt.paylen, SHCA_ROCE_LEN);
	KUNIT_EXPECT_EQ(test, memcmp(shca_frame_bth(&f) + pkt.hdr_len, src,
				     SHCA_ROCE_LEN), 0);
	KUNIT_EXPECT_EQ(test, shca_frame_icrc(&f), shca_frame_want_icrc(&f));
	/* It covers the payload to its last byte. */
	f.buf[f.len - SHCA_ICRC_LEN - 1] ^= 1;
	KUNIT_EXPECT_NE(test, shca_frame_icrc(&f), shca_frame_want_icrc(&f));
	shca_dp_teardown(&dp);
}

/* The frame readdressed: from the peer's QP to the device's QP 1. */
static void shca_roce_readdress(struct shca_dp *dp, const union ib_gid *gid,
				struct shca_frame *f)
{
	struct shca_pkt pkt;

	ether_addr_copy(shca_frame_eth(f)->h_dest, dp->fx->ndev->dev_addr);
	ether_addr_copy(shca_frame_eth(f)->h_source, shca_frame_peer_mac);
	shca_frame_ip6(f)->saddr = shca_frame_peer;
	memcpy(&shca_frame_ip6(f)->daddr, gid, sizeof(*gid));
	shca_pkt_parse(&pkt, shca_frame_bth(f), shca_frame_bth_len(f));
	pkt.dqpn = dp->qp[1]->qp_num;
	pkt.sqpn = SHCA_ROCE_PEER_QPN;
	shca_pkt_build(&pkt, shca_frame_bth(f));
	shca_frame_seal(f);
}

/* The sent packet readdressed to QP 1, which has a receive posted. */
struct shca_roce_rx {
	struct shca_dp dp;
	union ib_gid gid;
	struct shca_frame f;
	u8 *src;
	u8 *dst;
};

static void shca_roce_rx_setup(struct kunit *test, struct shca_roce_rx *rx)
{
	*rx = (struct shca_roce_rx){};
	rx->src = kunit_kzalloc(test, SHCA_ROCE_LEN, GFP_KERNEL);
	rx->dst = kunit_kzalloc(test, 40 + SHCA_ROCE_LEN, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, rx->src);
	KUNIT_ASSERT_NOT_NULL(test, rx->dst);
	shca_roce_setup(test, &rx->dp, &rx->gid, rx->src, &rx->f);
	shca_roce_readdress(&rx->dp, &rx->gid, &rx->f);
	KUNIT_ASSERT_EQ(test, shca_dp_post_recv(&rx->dp, 1, 2, rx->dst,
						40 + SHCA_ROCE_LEN), 0);
}

/* The packet, received: QP 1 gets the payload after the peer's GRH. */
static void shca_roce_ud_rx(struct kunit *test)
{
	struct shca_roce_rx rx;
	struct ib_wc wc;

	shca_roce_rx_setup(test, &rx);
	shca_frame_inject(test, rx.dp.fx->ndev, &rx.f, 1);

	KUNIT_ASSERT_TRUE(test, shca_dp_poll(&rx.dp, 1, &wc));
	KUNIT_EXPECT_EQ(test, wc.status, IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(test, wc.wr_id, 2);
	KUNIT_EXPECT_EQ(test, wc.byte_len, 40 + SHCA_ROCE_LEN);
	KUNIT_EXPECT_EQ(test, wc.src_qp, SHCA_ROCE_PEER_QPN);
	KUNIT_EXPECT_TRUE(test, wc.wc_flags & IB_WC_GRH);
	KUNIT_EXPECT_TRUE(test,
			  ipv6_addr_equal(&((struct ipv6hdr *)rx.dst)->saddr,
					  &shca_frame_peer));
	KUNIT_EXPECT_EQ(test, memcmp(rx.dst + 40, rx.src, SHCA_ROCE_LEN), 0);
	shca_dp_teardown(&rx.dp);
}

/* A damaged packet, and the reason it must be dropped for. */
struct shca_roce_bad {
	const char *name;
	void (*damage)(struct shca_frame *f);
	enum shca_drop why;
};

static void shca_roce_bad_icrc(struct shca_frame *f)
{
	f->buf[f->len - SHCA_ICRC_LEN - 1] ^= 1;
}

static void shca_roce_bad_truncated(struct shca_frame *f)
{
	/* 8 bytes of BTH, and the ICRC. */
	shca_frame_cut(f, 8 + SHCA_ICRC_LEN);
}

static void shca_roce_bad_deth(struct shca_frame *f)
{
	/* A whole BTH, half a DETH. */
	shca_frame_cut(f, sizeof(struct shca_bth) + 4 + SHCA_ICRC_LEN);
}

/* Rewrites one BTH or DETH field, and seals the frame again. */
static void shca_roce_bad_field(struct shca_frame *f,
				void (*set)(struct shca_pkt *pkt))
{
	struct shca_pkt pkt;

	shca_pkt_parse(&pkt, shca_frame_bth(f), shca_frame_bth_len(f));
	set(&pkt);
	shca_pkt_build(&pkt, shca_frame_bth(f));
	shca_frame_seal(f);
}

static void shca_roce_set_qpn(struct shca_pkt *pkt)
{
	pkt->dqpn = 0xabcde;
}

static void shca_roce_bad_qpn(struct shca_frame *f)
{
	shca_roce_bad_field(f, shca_roce_set_qpn);
}

static void shca_roce_set_qkey(struct shca_pkt *pkt)
{
	pkt->qkey = SHCA_ROCE_QKEY + 1;
}

static void shca_roce_bad_qkey(struct shca_frame *f)
{
	shca_roce_bad_field(f, shca_roce_set_qkey);
}

static void shca_roce_bad_tver(struct shca_frame *f)
{
	shca_frame_bth(f)[1] |= 1;		/* TVer, in the low nibble */
	shca_frame_seal(f);
}

static void shca_roce_bad_opcode(struct shca_frame *f)
{
	shca_frame_bth(f)[0] = 0x40;		/* RD SEND_FIRST */
	shca_frame_seal(f);
}

static const struct shca_roce_bad shca_roce_bads[] = {
	{ "icrc", shca_roce_bad_icrc, SHCA_DROP_ICRC },
	{ "truncated-bth", shca_roce_bad_truncated, SHCA_DROP_TRUNCATED },
	{ "truncated-deth", shca_roce_bad_deth, SHCA_DROP_TRUNCATED },
	{ "unknown-qpn", shca_roce_bad_qpn, SHCA_DROP_QPN },
	{ "wrong-qkey", shca_roce_bad_qkey, SHCA_DROP_REFUSED },
	{ "tver", shca_roce_bad_tver, SHCA_DROP_TVER },
	{ "rd-opcode", shca_roce_bad_opcode, SHCA_DROP_OPCODE },
};

static void shca_roce_bad_desc(const struct shca_roce_bad *bad, char *desc)
{
	strscpy(desc, bad->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(shca_roce_bad, shca_roce_bads, shca_roce_bad_desc);

/* Dropped, counted under its reason, and nothing received. */
static void shca_roce_bad_rx(struct kunit *test)
{
	const struct shca_roce_bad *bad = test->param_value;
	struct shca_roce_rx rx;
	struct ib_wc wc;
	s64 before;

	shca_roce_rx_setup(test, &rx);
	bad->damage(&rx.f);
	before = shca_frame_drops(test, rx.dp.fx->ibdev, bad->why);
	shca_frame_inject(test, rx.dp.fx->ndev, &rx.f, 1);

	KUNIT_EXPECT_EQ(test, shca_frame_wait_drops(test, rx.dp.fx->ibdev,
						    bad->why, before + 1),
			before + 1);
	msleep(20);
	if (ib_poll_cq(rx.dp.cq[1], 1, &wc) == 1)
		KUNIT_FAIL(test, "received: wr_id %llu status %d byte_len %u src_qp %#x",
			   wc.wr_id, wc.status, wc.byte_len, wc.src_qp);
	shca_dp_teardown(&rx.dp);
}

/* Frames in 64 KiB buffers, as a driver that receives into big ones. */
#define SHCA_ROCE_BIG_ROOM 60000
#define SHCA_ROCE_BIG_MAX (SHCA_ROCE_RX_QUEUE_BYTES / SZ_64K + 16)
#define SHCA_ROCE_SMALL 64

/*
 * The number of busy drops since @busy0 once @n frames reached @qp in
 * all, queued there or dropped as busy, or after 5 s.
 */
static s64 shca_roce_wait_taken(struct kunit *test, struct ib_device *ibdev,
				struct shca_qp *qp, s64 busy0, u32 n)
{
	unsigned long end = jiffies + 5 * HZ;
	s64 busy;

	for (;;) {
		busy = shca_frame_drops(test, ibdev, SHCA_DROP_BUSY) - busy0;
		if (skb_queue_len(&qp->roce->rx_pkts) + busy >= n ||
		    !time_before(jiffies, end))
			return busy;
		usleep_range(1000, 10000);
	}
}

/* @n copies of @f, injected in buffers of at least @room bytes. */
static void shca_roce_inject_n(struct kunit *test, struct shca_roce_rx *rx,
			       u32 n, unsigned int room)
{
	struct shca_frame *frames;
	u32 i;

	frames = kunit_kmalloc_array(test, n, sizeof(*frames), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, frames);
	for (i = 0; i < n; i++)
		frames[i] = rx->f;
	shca_frame_inject_room(test, rx->dp.fx->ndev, frames, n, room);
}

/*
 * While the QP's engine cannot run (its lock held here), what arrives
 * waits on the QP: small frames all do; frames in 64 KiB buffers only
 * until they pin SHCA_ROCE_RX_QUEUE_BYTES, the rest dropped as busy.
 * Only EXPECTs under the lock: an ASSERT would leave it held.
 */
static void shca_roce_fill_locked(struct kunit *test, struct shca_roce_rx *rx,
				  struct shca_qp *qp, s64 busy0)
{
	struct ib_device *ibdev = rx->dp.fx->ibdev;
	unsigned int bytes, tail;
	s64 busy;

	shca_roce_inject_n(test, rx, SHCA_ROCE_SMALL, 0);
	busy = shca_roce_wait_taken(test, ibdev, qp, busy0, SHCA_ROCE_SMALL);
	KUNIT_EXPECT_EQ(test, busy, 0);
	KUNIT_EXPECT_EQ(test, skb_queue_len(&qp->roce->rx_pkts), SHCA_ROCE_SMALL);

	shca_roce_inject_n(test, rx, SHCA_ROCE_BIG_MAX, SHCA_ROCE_BIG_ROOM);
	busy = shca_roce_wait_taken(test, ibdev, qp, busy0,
				    SHCA_ROCE_SMALL + SHCA_ROCE_BIG_MAX);
	KUNIT_EXPECT_GE(test, busy, 16);
	KUNIT_EXPECT_EQ(test, skb_queue_len(&qp->roce->rx_pkts) + busy,
			SHCA_ROCE_SMALL + SHCA_ROCE_BIG_MAX);
	spin_lock_irq(&qp->roce->rx_pkts.lock);
	bytes = qp->roce->rx_bytes;
	tail = skb_peek_tail(&qp->roce->rx_pkts)->truesize;
	spin_unlock_irq(&qp->roce->rx_pkts.lock);
	KUNIT_EXPECT_GE(test, tail, SZ_64K);
	KUNIT_EXPECT_LE(test, bytes, SHCA_ROCE_RX_QUEUE_BYTES);
	/* Full: the next big frame would not have fitted. */
	KUNIT_EXPECT_GT(test, bytes + tail, SHCA_ROCE_RX_QUEUE_BYTES);
}

/*
 * A peer cannot pin more than SHCA_ROCE_RX_QUEUE_BYTES of a QP's: drops
 * past that are counted as busy; what was queued runs once the engine
 * can, and releases what it pinned.
 */
static void shca_roce_rx_bytes(struct kunit *test)
{
	unsigned int queued, bytes;
	struct shca_roce_rx rx;
	unsigned long end;
	struct shca_qp *qp;
	struct ib_wc wc;
	s64 busy0;

	shca_roce_rx_setup(test, &rx);
	qp = to_shca_qp(rx.dp.qp[1]);
	busy0 = shca_frame_drops(test, rx.dp.fx->ibdev, SHCA_DROP_BUSY);

	shca_engine_lock(qp);
	shca_roce_fill_locked(test, &rx, qp, busy0);
	shca_engine_unlock(qp);

	/* The first frame takes the receive posted; the QP refuses the rest. */
	KUNIT_ASSERT_TRUE(test, shca_dp_poll(&rx.dp, 1, &wc));
	KUNIT_EXPECT_EQ(test, wc.status, IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(test, memcmp(rx.dst + 40, rx.src, SHCA_ROCE_LEN), 0);
	end = jiffies + 5 * HZ;
	while (!skb_queue_empty_lockless(&qp->roce->rx_pkts) &&
	       time_before(jiffies, end))
		usleep_range(1000, 10000);
	spin_lock_irq(&qp->roce->rx_pkts.lock);
	queued = skb_queue_len(&qp->roce->rx_pkts);
	bytes = qp->roce->rx_bytes;
	spin_unlock_irq(&qp->roce->rx_pkts.lock);
	KUNIT_EXPECT_EQ(test, queued, 0);
	KUNIT_EXPECT_EQ(test, bytes, 0);
	shca_dp_teardown(&rx.dp);
}

static struct kunit_case shca_roce_cases[] = {
	KUNIT_CASE(shca_roce_ud_tx),
	KUNIT_CASE(shca_roce_ud_rx),
	KUNIT_CASE_PARAM(shca_roce_bad_rx, shca_roce_bad_gen_params),
	KUNIT_CASE(shca_roce_rx_bytes),
	{}
};

static struct kunit_suite shca_roce_suite = {
	.name = "softhca_roce",
	.suite_init = shca_roce_fx_suite_init,
	.suite_exit = shca_roce_fx_suite_exit,
	.init = shca_roce_fx_init,
	.test_cases = shca_roce_cases,
};

kunit_test_suite(shca_roce_suite);
