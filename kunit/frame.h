/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * RoCEv2 frames for the suites that play another host on the fixture's
 * link: a fake peer known to neighbour discovery (and, for a suite that
 * gives the netdev an IPv4 address, to ARP), Ethernet + IPv6 (or IPv4) +
 * UDP frames from it to the device, built and sealed with their ICRC and
 * given to the netdev's receive path (in page fragments, as a NIC that
 * receives into pages gives them), and the frames the device sent,
 * taken from the netdev's capture and linearised; and the device's
 * counters of the frames it dropped.  A frame is IPv4 when its Ethernet
 * type says so, with a header of 20 bytes.
 */
#ifndef SHCA_KUNIT_FRAME_H
#define SHCA_KUNIT_FRAME_H

#include <kunit/test.h>
#include <linux/if_ether.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/udp.h>
#include <rdma/ib_verbs.h>

#include "fixture.h"
#include "wire.h"

#define SHCA_FRAME_IP_OFF ETH_HLEN
/* An IPv6 frame's BTH. */
#define SHCA_FRAME_BTH_OFF (ETH_HLEN + sizeof(struct ipv6hdr) + \
			    sizeof(struct udphdr))

/*
 * Another host on the link: its link-local address, its MAC, and its IPv4
 * address on the subnet shca_frame_inet() gives the netdev.
 */
extern const struct in6_addr shca_frame_peer;
extern const u8 shca_frame_peer_mac[ETH_ALEN];
extern const __be32 shca_frame_peer4;

/*
 * A frame as the wire carries it, from its Ethernet header on, the page
 * fragments its skb had (none in a frame the test built), and whether it
 * was built with pages lent to it (SKBFL_SHARED_FRAG, which stays when
 * the stack copies the fragments into a linear skb for a netdev without
 * scatter-gather).
 */
struct shca_frame {
	u8 *buf;
	unsigned int len;
	u16 nr_frags;
	bool lent;
};

static inline struct ethhdr *shca_frame_eth(const struct shca_frame *f)
{
	return (struct ethhdr *)f->buf;
}

static inline bool shca_frame_is_v4(const struct shca_frame *f)
{
	return shca_frame_eth(f)->h_proto == htons(ETH_P_IP);
}

static inline struct ipv6hdr *shca_frame_ip6(const struct shca_frame *f)
{
	return (struct ipv6hdr *)(f->buf + SHCA_FRAME_IP_OFF);
}

static inline struct iphdr *shca_frame_ip4(const struct shca_frame *f)
{
	return (struct iphdr *)(f->buf + SHCA_FRAME_IP_OFF);
}

static inline unsigned int shca_frame_bth_off(const struct shca_frame *f)
{
	return shca_frame_is_v4(f) ? ETH_HLEN + sizeof(struct iphdr) +
				     sizeof(struct udphdr) :
				     SHCA_FRAME_BTH_OFF;
}

static inline struct udphdr *shca_frame_udp(const struct shca_frame *f)
{
	return (struct udphdr *)(f->buf + shca_frame_bth_off(f) -
				 sizeof(struct udphdr));
}

static inline u8 *shca_frame_bth(const struct shca_frame *f)
{
	return f->buf + shca_frame_bth_off(f);
}

static inline unsigned int shca_frame_bth_len(const struct shca_frame *f)
{
	return f->len - shca_frame_bth_off(f);
}

bool shca_frame_is_roce(const struct shca_frame *f);
u32 shca_frame_icrc(const struct shca_frame *f);
u32 shca_frame_icrc_of(const void *l3, unsigned int len, bool ipv6);
u32 shca_frame_want_icrc(const struct shca_frame *f);
void shca_frame_seal(struct shca_frame *f);
void shca_frame_cut(struct shca_frame *f, unsigned int len);

void shca_frame_set_ip_len(struct shca_frame *f, u16 len);

void shca_frame_peer_av(struct rdma_ah_attr *ah);
void shca_frame_peer_av4(struct rdma_ah_attr *ah, u8 sgid_index);
void shca_frame_neigh(struct kunit *test, struct net_device *ndev);
void shca_frame_gid(struct kunit *test, struct shca_fixture *fx,
		    union ib_gid *gid);
u8 shca_frame_inet(struct kunit *test, struct shca_fixture *fx,
		   union ib_gid *gid);

unsigned int shca_frame_size(const struct shca_pkt *pkt);
void shca_frame_fill(struct net_device *ndev, const union ib_gid *gid,
		     const struct shca_pkt *pkt, const void *payload,
		     struct shca_frame *f);
void shca_frame_build(struct kunit *test, struct net_device *ndev,
		      const union ib_gid *gid, const struct shca_pkt *pkt,
		      const void *payload, struct shca_frame *f);
void shca_frame_inject(struct kunit *test, struct net_device *ndev,
		       const struct shca_frame *f, unsigned int n);
void shca_frame_inject_room(struct kunit *test, struct net_device *ndev,
			    const struct shca_frame *f, unsigned int n,
			    unsigned int room);
bool shca_frame_sent(struct kunit *test, struct net_device *ndev,
		     struct shca_frame *f, unsigned long timeout);
void shca_frame_capture(struct kunit *test, struct shca_fixture *fx,
			struct shca_frame *f);

s64 shca_frame_drops(struct kunit *test, struct ib_device *ibdev,
		     enum shca_drop why);
s64 shca_frame_wait_drops(struct kunit *test, struct ib_device *ibdev,
			  enum shca_drop why, s64 n);

#endif /* SHCA_KUNIT_FRAME_H */
