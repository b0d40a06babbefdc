// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* RoCEv2 frames to and from a fake peer on the fixture's link: frame.h. */

#include <linux/delay.h>
#include <linux/etherdevice.h>
#include <linux/netdevice.h>
#include <net/addrconf.h>
#include <net/arp.h>
#include <net/ip.h>
#include <net/ndisc.h>
#include <net/neighbour.h>
#include <rdma/ib_cache.h>

#include "dev.h"
#include "frame.h"
#include "icrc.h"

/* The UDP source port of the peer's frames: any will do. */
#define SHCA_FRAME_PEER_SPORT 0xc0de

const struct in6_addr shca_frame_peer = {
	.s6_addr = { 0xfe, 0x80, 0, 0, 0, 0, 0, 0,
		     0x50, 0x54, 0x00, 0xff, 0xfe, 0x12, 0x34, 0x56 },
};

const u8 shca_frame_peer_mac[ETH_ALEN] = {
	0x52, 0x54, 0x00, 0x12, 0x34, 0x56
};

/* TEST-NET-2: the netdev's IPv4 address, and the peer's beside it. */
#define SHCA_FRAME_NET4 0xc6336400	/* 198.51.100.0/24 */
#define SHCA_FRAME_PLEN4 24
static const __be32 shca_frame_addr4 = cpu_to_be32(SHCA_FRAME_NET4 | 1);
const __be32 shca_frame_peer4 = cpu_to_be32(SHCA_FRAME_NET4 | 2);

/* The ICRC the frame carries. */
u32 shca_frame_icrc(const struct shca_frame *f)
{
	__le32 icrc;

	memcpy(&icrc, f->buf + f->len - SHCA_ICRC_LEN, sizeof(icrc));
	return le32_to_cpu(icrc);
}

/*
 * The ICRC of the RoCEv2 packet at @l3, @len bytes from its IP header to
 * its end, ICRC included: the driver's own, over a linear copy in an skb.
 * 0 and a warning if there is no memory for the copy (frames are sealed
 * in atomic context too).
 */
u32 shca_frame_icrc_of(const void *l3, unsigned int len, bool ipv6)
{
	struct sk_buff *skb = alloc_skb(len, GFP_ATOMIC);
	u32 icrc;

	if (WARN_ON_ONCE(!skb))
		return 0;
	skb_put_data(skb, l3, len);
	icrc = shca_icrc_skb(skb, 0, len, ipv6);
	consume_skb(skb);
	return icrc;
}

/* The ICRC the frame's headers and payload call for. */
u32 shca_frame_want_icrc(const struct shca_frame *f)
{
	return shca_frame_icrc_of(shca_frame_ip6(f),
				  f->len - SHCA_FRAME_IP_OFF,
				  !shca_frame_is_v4(f));
}

void shca_frame_seal(struct shca_frame *f)
{
	__le32 icrc = cpu_to_le32(shca_frame_want_icrc(f));

	memcpy(f->buf + f->len - SHCA_ICRC_LEN, &icrc, sizeof(icrc));
}

/*
 * The IP header's length field, as given: IPv6's payload length, or
 * IPv4's total length, whose header checksum follows.
 */
void shca_frame_set_ip_len(struct shca_frame *f, u16 len)
{
	struct iphdr *ip4 = shca_frame_ip4(f);

	if (!shca_frame_is_v4(f)) {
		shca_frame_ip6(f)->payload_len = htons(len);
		return;
	}
	ip4->tot_len = htons(len);
	ip_send_check(ip4);
}

/*
 * Ends the frame @len bytes after the UDP header, with the lengths right,
 * and the ICRC when there is room for the BTH it covers.
 */
void shca_frame_cut(struct shca_frame *f, unsigned int len)
{
	unsigned int udp_len = sizeof(struct udphdr) + len;

	f->len = shca_frame_bth_off(f) + len;
	shca_frame_udp(f)->len = htons(udp_len);
	shca_frame_set_ip_len(f, shca_frame_is_v4(f) ?
			      f->len - SHCA_FRAME_IP_OFF : udp_len);
	if (len >= sizeof(struct shca_bth) + SHCA_ICRC_LEN)
		shca_frame_seal(f);
}

/* The peer's address @addr, in @ndev's table @tbl for good. */
static void shca_frame_neigh_add(struct kunit *test, struct neigh_table *tbl,
				 const void *addr, struct net_device *ndev)
{
	struct neighbour *n;

	n = __neigh_lookup(tbl, addr, ndev, 1);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, n);
	KUNIT_ASSERT_EQ(test, neigh_update(n, shca_frame_peer_mac,
					   NUD_PERMANENT,
					   NEIGH_UPDATE_F_OVERRIDE |
					   NEIGH_UPDATE_F_ADMIN, 0), 0);
	neigh_release(n);
}

/* The peer, in @ndev's neighbour table for good. */
void shca_frame_neigh(struct kunit *test, struct net_device *ndev)
{
	shca_frame_neigh_add(test, &nd_tbl, &shca_frame_peer, ndev);
}

/* An address vector to the peer, for a QP's path or an AH. */
void shca_frame_peer_av(struct rdma_ah_attr *ah)
{
	union ib_gid dgid;

	*ah = (struct rdma_ah_attr){ .type = RDMA_AH_ATTR_TYPE_ROCE };
	memcpy(&dgid, &shca_frame_peer, sizeof(dgid));
	rdma_ah_set_port_num(ah, SHCA_PORT);
	rdma_ah_set_grh(ah, &dgid, 0, 0, 64, 0);
	ether_addr_copy(ah->roce.dmac, shca_frame_peer_mac);
}

/* An address vector to the peer's IPv4 address, from GID @sgid_index. */
void shca_frame_peer_av4(struct rdma_ah_attr *ah, u8 sgid_index)
{
	union ib_gid dgid;

	shca_frame_peer_av(ah);
	ipv6_addr_set_v4mapped(shca_frame_peer4, (struct in6_addr *)&dgid);
	rdma_ah_set_grh(ah, &dgid, 0, sgid_index, 64, 0);
}

/*
 * Gives @ndev an IPv4 address through rtnetlink, as `ip addr add` does,
 * from a kernel socket: there is no other way for a module.
 */
static int shca_frame_add_addr4(struct net_device *ndev, __be32 addr,
				u8 plen)
{
	struct {
		struct nlmsghdr nh;
		struct ifaddrmsg ifa;
		struct nlattr local;
		__be32 local_addr;
		struct nlattr address;
		__be32 address_addr;
	} req = {
		.nh = {
			.nlmsg_len = sizeof(req),
			.nlmsg_type = RTM_NEWADDR,
			.nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK |
				       NLM_F_CREATE | NLM_F_REPLACE,
		},
		.ifa = {
			.ifa_family = AF_INET,
			.ifa_prefixlen = plen,
			.ifa_index = ndev->ifindex,
		},
		.local = { .nla_len = NLA_HDRLEN + 4, .nla_type = IFA_LOCAL },
		.local_addr = addr,
		.address = { .nla_len = NLA_HDRLEN + 4,
			     .nla_type = IFA_ADDRESS },
		.address_addr = addr,
	};
	struct {
		struct nlmsghdr nh;
		struct nlmsgerr err;
	} ack;
	struct kvec iov = { .iov_base = &req, .iov_len = sizeof(req) };
	struct msghdr msg = {};
	struct socket *sock;
	struct file *file;
	int ret;

	ret = sock_create_kern(dev_net(ndev), AF_NETLINK, SOCK_RAW,
			       NETLINK_ROUTE, &sock);
	if (ret)
		return ret;
	/* rtnetlink asks the sending socket's file for CAP_NET_ADMIN. */
	file = sock_alloc_file(sock, 0, NULL);
	if (IS_ERR(file))
		return PTR_ERR(file);
	ret = kernel_sendmsg(sock, &msg, &iov, 1, sizeof(req));
	if (ret >= 0) {
		iov = (struct kvec){ .iov_base = &ack, .iov_len = sizeof(ack) };
		ret = kernel_recvmsg(sock, &msg, &iov, 1, sizeof(ack), 0);
	}
	if (ret >= 0)
		ret = ret < (int)sizeof(ack) || ack.nh.nlmsg_type != NLMSG_ERROR ?
		      -EPROTO : ack.err.error;
	fput(file);
	return ret;
}

/* The index of @fx's RoCEv2 GID @gid, or -1. */
static int shca_frame_gid_index(struct shca_fixture *fx,
				const union ib_gid *gid)
{
	const struct ib_gid_attr *attr;
	unsigned int i, n;
	int found = -1;

	n = fx->ibdev->port_data[SHCA_PORT].immutable.gid_tbl_len;
	for (i = 0; i < n && found < 0; i++) {
		attr = rdma_get_gid_attr(fx->ibdev, SHCA_PORT, i);
		if (IS_ERR(attr))
			continue;
		if (!memcmp(&attr->gid, gid, sizeof(*gid)) &&
		    attr->gid_type == IB_GID_TYPE_ROCE_UDP_ENCAP)
			found = i;
		rdma_put_gid_attr(attr);
	}
	return found;
}

/**
 * shca_frame_inet() - the fixture's netdev on the peer's IPv4 subnet
 * @test: the test
 * @fx: the fixture
 * @gid: filled with the device's GID of that address (v4-mapped)
 *
 * Gives the netdev its address (again, if it has it), puts the peer in
 * its ARP table for good, and waits for ib_core to add the GID.
 *
 * Return: the GID's index.
 */
u8 shca_frame_inet(struct kunit *test, struct shca_fixture *fx,
		   union ib_gid *gid)
{
	int index, tries;

	KUNIT_ASSERT_EQ(test, shca_frame_add_addr4(fx->ndev, shca_frame_addr4,
						   SHCA_FRAME_PLEN4), 0);
	shca_frame_neigh_add(test, &arp_tbl, &shca_frame_peer4, fx->ndev);
	ipv6_addr_set_v4mapped(shca_frame_addr4, (struct in6_addr *)gid);
	for (tries = 0; tries < 200; tries++) {
		index = shca_frame_gid_index(fx, gid);
		if (index >= 0)
			break;
		msleep(50);
	}
	KUNIT_ASSERT_GE_MSG(test, index, 0, "no GID for %pI4",
			    &shca_frame_addr4);
	return index;
}

/* GID 0, the link-local address, once it is no longer tentative. */
void shca_frame_gid(struct kunit *test, struct shca_fixture *fx,
		    union ib_gid *gid)
{
	int tries;

	KUNIT_ASSERT_EQ(test, shca_fixture_wait_gid(fx, 0), 0);
	KUNIT_ASSERT_EQ(test, rdma_query_gid(fx->ibdev, SHCA_PORT, 0, gid), 0);
	for (tries = 0; tries < 100; tries++) {
		if (ipv6_chk_addr(dev_net(fx->ndev), (struct in6_addr *)gid,
				  fx->ndev, 0))
			return;
		msleep(50);
	}
	KUNIT_FAIL(test, "GID 0 stays tentative");
}

/* The bytes of a frame of @pkt, from its Ethernet header to its ICRC. */
unsigned int shca_frame_size(const struct shca_pkt *pkt)
{
	return SHCA_FRAME_BTH_OFF + shca_pkt_hdr_len(pkt->opcode) +
	       pkt->paylen + (-pkt->paylen & 3) + SHCA_ICRC_LEN;
}

/**
 * shca_frame_fill() - a packet from the peer to the device, in a buffer
 * @ndev: the device's netdev, the Ethernet destination
 * @gid: the device's GID, the IP destination (IPv4 when v4-mapped)
 * @pkt: the transport headers, of an opcode wire.c knows; @pkt->paylen
 *	bytes of payload follow
 * @payload: the payload (NULL when @pkt->paylen is 0)
 * @f: its buffer, of shca_frame_size(@pkt) bytes or more; filled: the
 *	frame, its pad zero and its ICRC sealed
 *
 * For tests that build many frames in a buffer of their own.
 */
void shca_frame_fill(struct net_device *ndev, const union ib_gid *gid,
		     const struct shca_pkt *pkt, const void *payload,
		     struct shca_frame *f)
{
	unsigned int hdr_len = shca_pkt_hdr_len(pkt->opcode);
	unsigned int size = shca_frame_size(pkt);
	bool v4 = ipv6_addr_v4mapped((const struct in6_addr *)gid);
	struct ipv6hdr *ip6;
	struct ethhdr *eth;
	struct udphdr *udp;
	struct iphdr *ip4;

	memset(f->buf, 0, size);
	f->nr_frags = 0;
	eth = shca_frame_eth(f);
	ether_addr_copy(eth->h_dest, ndev->dev_addr);
	ether_addr_copy(eth->h_source, shca_frame_peer_mac);
	eth->h_proto = htons(v4 ? ETH_P_IP : ETH_P_IPV6);
	if (v4) {
		ip4 = shca_frame_ip4(f);
		ip4->version = 4;
		ip4->ihl = sizeof(*ip4) / 4;
		ip4->frag_off = htons(IP_DF);
		ip4->ttl = 64;
		ip4->protocol = IPPROTO_UDP;
		ip4->saddr = shca_frame_peer4;
		memcpy(&ip4->daddr, &gid->raw[12], sizeof(ip4->daddr));
	} else {
		ip6 = shca_frame_ip6(f);
		ip6->version = 6;
		ip6->nexthdr = IPPROTO_UDP;
		ip6->hop_limit = 64;
		ip6->saddr = shca_frame_peer;
		memcpy(&ip6->daddr, gid, sizeof(*gid));
	}
	udp = shca_frame_udp(f);
	udp->source = htons(SHCA_FRAME_PEER_SPORT);
	udp->dest = htons(SHCA_ROCE_UDP_PORT);
	shca_pkt_build(pkt, shca_frame_bth(f));
	if (pkt->paylen)
		memcpy(shca_frame_bth(f) + hdr_len, payload, pkt->paylen);
	shca_frame_cut(f, size - SHCA_FRAME_BTH_OFF);
}

/**
 * shca_frame_build() - a packet from the peer to the device, as a frame
 * @test: the test, which owns the frame's memory
 * @ndev: the device's netdev, the Ethernet destination
 * @gid: the device's GID, the IPv6 destination
 * @pkt: the transport headers; @pkt->paylen bytes of payload follow
 * @payload: the payload (NULL when @pkt->paylen is 0)
 * @f: filled: the frame, its pad zero and its ICRC sealed
 */
void shca_frame_build(struct kunit *test, struct net_device *ndev,
		      const union ib_gid *gid, const struct shca_pkt *pkt,
		      const void *payload, struct shca_frame *f)
{
	KUNIT_ASSERT_NE(test, shca_pkt_hdr_len(pkt->opcode), 0);
	*f = (struct shca_frame){
		.buf = kunit_kzalloc(test, shca_frame_size(pkt), GFP_KERNEL),
	};
	KUNIT_ASSERT_NOT_NULL(test, f->buf);
	shca_frame_fill(ndev, gid, pkt, payload, f);
}

/* @f in one linear buffer of @room bytes at least. */
static struct sk_buff *shca_frame_skb(struct net_device *ndev,
				      const struct shca_frame *f,
				      unsigned int room)
{
	struct sk_buff *skb;

	skb = __netdev_alloc_skb(ndev, max(f->len, room), GFP_KERNEL);
	if (skb)
		skb_put_data(skb, f->buf, f->len);
	return skb;
}

/*
 * @f as a NIC that receives into pages hands it up: the Ethernet and IP
 * headers in the head, the rest in page fragments, the first of which
 * ends inside the BTH, and the payload across the next ones.
 */
static struct sk_buff *shca_frame_skb_frags(struct net_device *ndev,
					    const struct shca_frame *f)
{
	unsigned int at, n, i = 0;
	struct sk_buff *skb;
	struct page *page;

	at = min_t(unsigned int, f->len,
		   shca_frame_bth_off(f) - sizeof(struct udphdr));
	skb = __netdev_alloc_skb(ndev, at, GFP_KERNEL);
	if (!skb)
		return NULL;
	skb_put_data(skb, f->buf, at);
	for (; at < f->len; at += n) {
		n = min_t(unsigned int, f->len - at,
			  i ? PAGE_SIZE : sizeof(struct udphdr) + 4);
		page = alloc_page(GFP_KERNEL);
		if (!page) {
			kfree_skb(skb);
			return NULL;
		}
		memcpy(page_address(page), f->buf + at, n);
		skb_add_rx_frag(skb, i++, page, 0, n, PAGE_SIZE);
	}
	return skb;
}

/*
 * The frames go to one CPU's backlog in one go, so they go up the stack,
 * and reach their QP, in this order.  @room: each in a linear buffer of
 * that many bytes at least; 0: in page fragments.
 */
static void shca_frame_rx(struct kunit *test, struct net_device *ndev,
			  const struct shca_frame *f, unsigned int n,
			  unsigned int room)
{
	struct sk_buff_head q;
	struct sk_buff *skb;
	unsigned int i;

	__skb_queue_head_init(&q);
	for (i = 0; i < n; i++) {
		skb = room ? shca_frame_skb(ndev, &f[i], room) :
		      shca_frame_skb_frags(ndev, &f[i]);
		if (!skb) {
			__skb_queue_purge(&q);
			KUNIT_ASSERT_FAILURE(test, "no skb for frame %u", i);
		}
		skb->protocol = eth_type_trans(skb, ndev);
		__skb_queue_tail(&q, skb);
	}
	local_bh_disable();
	while ((skb = __skb_dequeue(&q)))
		netif_rx(skb);
	local_bh_enable();
}

/**
 * shca_frame_inject_room() - frames reach @ndev from the link, in big buffers
 * @test: the test
 * @ndev: the netdev that receives them
 * @f: the frames
 * @n: how many
 * @room: bytes of linear buffer each frame gets at least, as a driver
 *	that receives into large buffers gives them (their skbs' truesize)
 */
void shca_frame_inject_room(struct kunit *test, struct net_device *ndev,
			    const struct shca_frame *f, unsigned int n,
			    unsigned int room)
{
	shca_frame_rx(test, ndev, f, n, max(room, 1U));
}

/**
 * shca_frame_inject() - frames reach @ndev from the link
 * @test: the test
 * @ndev: the netdev that receives them
 * @f: the frames
 * @n: how many
 *
 * Each in page fragments (shca_frame_skb_frags()), so that every suite
 * that injects frames has the device read its headers and payload there.
 */
void shca_frame_inject(struct kunit *test, struct net_device *ndev,
		       const struct shca_frame *f, unsigned int n)
{
	shca_frame_rx(test, ndev, f, n, 0);
}

/* UDP over IPv4 or IPv6, to the RoCEv2 port. */
bool shca_frame_is_roce(const struct shca_frame *f)
{
	if (f->len < ETH_HLEN || f->len <= shca_frame_bth_off(f))
		return false;
	if (shca_frame_is_v4(f)) {
		if (shca_frame_ip4(f)->protocol != IPPROTO_UDP)
			return false;
	} else if (shca_frame_eth(f)->h_proto != htons(ETH_P_IPV6) ||
		   shca_frame_ip6(f)->nexthdr != IPPROTO_UDP) {
		return false;
	}
	return shca_frame_udp(f)->dest == htons(SHCA_ROCE_UDP_PORT);
}

/**
 * shca_frame_sent() - the next RoCEv2 frame @ndev sent, linearised
 * @test: the test, which owns the frame's memory
 * @ndev: the capturing netdev
 * @f: filled with the frame
 * @timeout: how long to wait for one, in jiffies
 *
 * The netdev's own chatter (neighbour discovery, MLD) is skipped.
 *
 * Return: false when no RoCEv2 frame came within @timeout.
 */
bool shca_frame_sent(struct kunit *test, struct net_device *ndev,
		     struct shca_frame *f, unsigned long timeout)
{
	unsigned long end = jiffies + timeout, now;
	struct sk_buff *skb;
	int ret;

	for (;;) {
		now = jiffies;
		skb = shca_test_netdev_sent(ndev, time_before(now, end) ?
					    end - now : 0);
		if (!skb)
			return false;
		f->len = skb->len;
		f->nr_frags = skb_shinfo(skb)->nr_frags;
		f->lent = skb_shinfo(skb)->flags & SKBFL_SHARED_FRAG;
		f->buf = kunit_kmalloc(test, skb->len, GFP_KERNEL);
		ret = f->buf ? skb_copy_bits(skb, 0, f->buf, f->len) : -ENOMEM;
		kfree_skb(skb);
		KUNIT_ASSERT_EQ(test, ret, 0);
		if (shca_frame_is_roce(f))
			return true;
	}
}

/* The device's drop counter for @why, as `rdma statistic` reads it. */
s64 shca_frame_drops(struct kunit *test, struct ib_device *ibdev,
		     enum shca_drop why)
{
	unsigned int i = SHCA_CNT_DROP + why - 1;
	struct rdma_hw_stats *stats;
	s64 n;

	stats = shca_alloc_hw_port_stats(ibdev, SHCA_PORT);
	KUNIT_ASSERT_NOT_NULL(test, stats);
	KUNIT_EXPECT_EQ(test, shca_get_hw_stats(ibdev, stats, SHCA_PORT, 0),
			SHCA_CNT_MAX);
	KUNIT_EXPECT_STREQ(test, stats->descs[i].name, shca_drop_names[why]);
	n = stats->value[i];
	rdma_free_hw_stats_struct(stats);
	return n;
}

/*
 * The drop counter for @why once it reached @n, or after 5 s: the engine
 * counts what a QP refuses when it runs.
 */
s64 shca_frame_wait_drops(struct kunit *test, struct ib_device *ibdev,
			  enum shca_drop why, s64 n)
{
	unsigned long end = jiffies + 5 * HZ;
	s64 now;

	for (;;) {
		now = shca_frame_drops(test, ibdev, why);
		if (now >= n || !time_before(jiffies, end))
			return now;
		usleep_range(1000, 10000);
	}
}

/* The next RoCEv2 frame the fixture's netdev sent, within 5 s. */
void shca_frame_capture(struct kunit *test, struct shca_fixture *fx,
			struct shca_frame *f)
{
	if (!shca_frame_sent(test, fx->ndev, f, 5 * HZ))
		KUNIT_ASSERT_FAILURE(test, "no RoCEv2 frame was sent");
}
