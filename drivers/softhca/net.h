/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * RoCEv2's network layer: the UDP tunnel sockets on port 4791 that
 * receive for the softhca devices of each network namespace, and
 * IPv4/IPv6 transmission through a device's netdev.  Counters of what
 * went through, and of what was dropped and why, are the device's, read
 * through `rdma statistic`.
 */
#ifndef SHCA_NET_H
#define SHCA_NET_H

#include <linux/skbuff.h>
#include <rdma/ib_addr.h>
#include <rdma/ib_verbs.h>

#include "wire.h"

struct shca_av;
struct shca_dev;
struct shca_netns;

/*
 * The device's counters: packets, RC transport events (named as mlx5
 * names them), then received packets dropped, by reason (enum shca_drop,
 * from SHCA_DROP_NONE + 1).
 */
enum shca_counter {
	SHCA_CNT_RX_PACKETS,
	SHCA_CNT_TX_PACKETS,
	SHCA_CNT_TX_ERRORS,
	SHCA_CNT_LOCAL_ACK_TIMEOUT,	/* no answer in time: a resend */
	SHCA_CNT_SEQ_NAK_RCVD,		/* PSN sequence NAKs received */
	SHCA_CNT_OUT_OF_SEQUENCE,	/* requests past the expected PSN */
	SHCA_CNT_DUPLICATE_REQUEST,	/* requests before it */
	SHCA_CNT_RESENT_TIMEOUT,	/* packets resent: after a timeout, */
	SHCA_CNT_RESENT_SEQ,		/* a sequence NAK or READ gap, */
	SHCA_CNT_RESENT_RNR,		/* an RNR NAK */
	SHCA_CNT_RX_SOFTIRQ_RUNS,	/* receive runs in the softirq */
	SHCA_CNT_TX_CPU_MOVES,		/* sends handed to their QP's CPU */
	SHCA_CNT_DROP,
	SHCA_CNT_MAX = SHCA_CNT_DROP + SHCA_DROP_MAX - 1,
};

/* The largest IB MTU whose RoCEv2 packets fit the netdev's MTU. */
static inline enum ib_mtu shca_active_mtu(struct net_device *ndev)
{
	enum ib_mtu mtu = iboe_get_mtu(READ_ONCE(ndev->mtu));

	/* Below 256 bytes there is no IB MTU; report the smallest one. */
	return mtu ?: IB_MTU_256;
}

/*
 * Does @ndev keep packets in order only as each CPU gave them?  So do a
 * netdev with no queue of its own (a veth, which hands each packet to
 * the receive backlog of the CPU that sent it; a bond) and one with
 * several transmit queues (XPS picks one by CPU).  A netdev with one
 * queue keeps the order in which all CPUs gave them.
 */
static inline bool shca_net_per_cpu_order(const struct net_device *ndev)
{
	return (ndev->priv_flags & IFF_NO_QUEUE) ||
	       READ_ONCE(ndev->real_num_tx_queues) > 1;
}

/*
 * May @ndev's packets carry their payload in page fragments?  A netdev
 * without scatter-gather (virtio-net without checksum offload, as behind
 * QEMU's socket backend) has the stack copy each such packet into a new
 * linear one before the driver sees it (validate_xmit_skb()), which
 * costs more than copying the payload into the packet in the first place.
 */
static inline bool shca_net_sg(const struct net_device *ndev)
{
	return READ_ONCE(ndev->features) & NETIF_F_SG;
}

/*
 * A datagram that reached @dev's netdev, its data at the UDP header;
 * consumed.  Context: softirq.
 */
typedef void (*shca_net_recv_t)(struct shca_dev *dev, struct sk_buff *skb);

int shca_net_init(shca_net_recv_t recv);
void shca_net_exit(void);
int shca_net_get(struct shca_dev *dev);
void shca_net_put(struct shca_dev *dev);

int shca_net_xmit(struct shca_dev *dev, const struct shca_av *av, u16 sport,
		  struct sk_buff *skb);
unsigned int shca_net_headroom(const struct shca_dev *dev,
			       const struct shca_av *av);

void shca_stats_init(void);
const char *shca_counter_name(enum shca_counter counter);
void shca_count(struct shca_dev *dev, enum shca_counter counter);
void shca_count_add(struct shca_dev *dev, enum shca_counter counter, u64 n);
void shca_count_drop(struct shca_dev *dev, enum shca_drop reason);

struct rdma_hw_stats *shca_alloc_hw_port_stats(struct ib_device *ibdev,
					       u32 port);
int shca_get_hw_stats(struct ib_device *ibdev, struct rdma_hw_stats *stats,
		      u32 port, int index);

#endif /* SHCA_NET_H */
