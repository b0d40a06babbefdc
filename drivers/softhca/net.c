// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * RoCEv2's network layer.
 *
 * Receive.  Each network namespace that has a softhca device's netdev has
 * two kernel UDP sockets (IPv4, and IPv6-only) bound to port 4791 in it:
 * the first device there opens them, the last one's release closes them,
 * or the namespace's own end does if it comes first (a physical netdev
 * goes back to the initial namespace, and its device is unregistered
 * later).  rdma_rxe binds the same port in the initial namespace when its
 * module loads, so with rxe loaded `rdma link add` fails there, saying
 * so; it works in another namespace.  A datagram reaches shca_net_recv()
 * in softirq context; the device is the one bound to the netdev it
 * arrived on, and roce_rx.c takes it from there.
 *
 * A namespace's entry (struct shca_netns) also tells devices apart:
 * loopback joins two devices only when their netdevs share a namespace.
 *
 * Transmit.  The transport builds the IBA headers, payload and room for
 * the ICRC; shca_net_xmit() routes by the address vector's GIDs through
 * the netdev of its source GID (the device's, or a VLAN above it, which
 * tags the frames), pushes the UDP and IP headers, computes the ICRC
 * over the final headers (IPv4's identification is covered, so it is
 * chosen first) and hands the packet to the IP layer of the netdev's
 * namespace, which resolves the neighbour and queues it on the netdev.
 * No socket is involved: transmission never waits for a namespace's
 * sockets, nor races their closing.
 *
 * The UDP checksum is 0, as RoCEv2 allows (the ICRC covers the payload);
 * the IPv6 socket accepts a zero checksum for that reason.
 */

#include <linux/if_vlan.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/udp.h>
#include <net/addrconf.h>
#include <net/ip.h>
#include <net/ip6_route.h>
#include <net/ipv6_stubs.h>
#include <net/route.h>
#include <net/udp_tunnel.h>
#include <rdma/softhca-abi.h>

#include "ah.h"
#include "dev.h"
#include "icrc.h"
#include "net.h"
#include "roce.h"
#include "trace.h"

/*
 * The receive sockets of one network namespace, held by its devices
 * (users).  Listed while the namespace lives; its net is only compared,
 * never followed, and NULL once the namespace is gone.  Under
 * shca_net_lock.
 */
struct shca_netns {
	struct list_head list;
	struct net *net;
	struct socket *sock4;
	struct socket *sock6;
	unsigned int users;
};

static LIST_HEAD(shca_netns_list);
static DEFINE_MUTEX(shca_net_lock);

/* The transport's receive, set once before any socket opens. */
static shca_net_recv_t shca_net_deliver __read_mostly;

/*
 * encap_rcv of every socket: @skb's data starts at its UDP header, whose
 * length the UDP layer checked.  Return: 0, the datagram consumed.
 */
static int shca_net_recv(struct sock *sk, struct sk_buff *skb)
{
	struct net_device *ndev = skb->dev;
	struct ib_device *ibdev;

	/* A VLAN's packets are its real device's softhca device's. */
	if (is_vlan_dev(ndev))
		ndev = vlan_dev_real_dev(ndev);
	ibdev = ib_device_get_by_netdev(ndev, SOFTHCA_DRIVER_ID);
	if (!ibdev) {
		kfree_skb(skb);
		return 0;
	}
	shca_net_deliver(to_shca_dev(ibdev), skb);
	ib_device_put(ibdev);
	return 0;
}

static struct socket *shca_net_sock_open(struct net *net, bool ipv6)
{
	struct udp_tunnel_sock_cfg tunnel = {
		.encap_type = 1,
		.encap_rcv = shca_net_recv,
	};
	struct udp_port_cfg cfg = {
		.family = ipv6 ? AF_INET6 : AF_INET,
		.local_udp_port = htons(SHCA_ROCE_UDP_PORT),
		.ipv6_v6only = 1,
		/* RoCEv2 senders leave the UDP checksum 0 (the ICRC covers). */
		.use_udp6_rx_checksums = 0,
	};
	struct socket *sock;
	int ret;

	ret = udp_sock_create(net, &cfg, &sock);
	if (ret)
		return ERR_PTR(ret);
	setup_udp_tunnel_sock(net, sock, &tunnel);
	return sock;
}

/* Waits for any datagram being received on them. */
static void shca_netns_close(struct shca_netns *ns)
{
	if (ns->sock6)
		udp_tunnel_sock_release(ns->sock6);
	if (ns->sock4)
		udp_tunnel_sock_release(ns->sock4);
	ns->sock4 = NULL;
	ns->sock6 = NULL;
}

static int shca_netns_open(struct shca_netns *ns, struct net_device *ndev)
{
	struct socket *sock;

	sock = shca_net_sock_open(ns->net, false);
	if (IS_ERR(sock))
		goto err_report;
	ns->sock4 = sock;
	if (!IS_ENABLED(CONFIG_IPV6))
		return 0;
	sock = shca_net_sock_open(ns->net, true);
	if (!IS_ERR(sock)) {
		ns->sock6 = sock;
		return 0;
	}
	shca_netns_close(ns);
err_report:
	if (PTR_ERR(sock) == -EADDRINUSE)
		netdev_err(ndev,
			   "softhca: UDP port %u is taken (is rdma_rxe loaded? rmmod rdma_rxe first)\n",
			   SHCA_ROCE_UDP_PORT);
	else
		netdev_err(ndev, "softhca: no UDP socket on port %u: %pe\n",
			   SHCA_ROCE_UDP_PORT, sock);
	return PTR_ERR(sock);
}

static struct shca_netns *shca_netns_get(struct net_device *ndev)
{
	struct net *net = dev_net(ndev);
	struct shca_netns *ns;
	int ret;

	list_for_each_entry(ns, &shca_netns_list, list) {
		if (net_eq(ns->net, net))
			goto found;
	}
	ns = kzalloc(sizeof(*ns), GFP_KERNEL);
	if (!ns)
		return ERR_PTR(-ENOMEM);
	ns->net = net;
	ret = shca_netns_open(ns, ndev);
	if (ret) {
		kfree(ns);
		return ERR_PTR(ret);
	}
	list_add(&ns->list, &shca_netns_list);
found:
	ns->users++;
	return ns;
}

/**
 * shca_net_get() - bind RoCEv2's UDP port for a new device
 * @dev: the device, not registered yet
 *
 * In the namespace of the device's netdev, if no device there has yet.
 *
 * Context: process context; sleeps.
 * Return: 0, -EADDRINUSE when another module (rdma_rxe) holds the port
 * there, or -ENOMEM.
 */
int shca_net_get(struct shca_dev *dev)
{
	struct shca_netns *ns;

	mutex_lock(&shca_net_lock);
	ns = shca_netns_get(dev->ndev);
	mutex_unlock(&shca_net_lock);
	if (IS_ERR(ns))
		return PTR_ERR(ns);
	dev->netns = ns;
	return 0;
}

/**
 * shca_net_put() - a device that shca_net_get() bound for is going
 * @dev: the device, unregistered: no packet is sent for it any more
 *
 * The namespace's last device closes its sockets; a datagram being
 * received meanwhile is done with when this returns.
 *
 * Context: process context; sleeps.
 */
void shca_net_put(struct shca_dev *dev)
{
	struct shca_netns *ns = dev->netns;

	mutex_lock(&shca_net_lock);
	if (!--ns->users) {
		shca_netns_close(ns);
		list_del(&ns->list);
		kfree(ns);
	}
	mutex_unlock(&shca_net_lock);
}

/*
 * A namespace ends: its netdevs are gone, or back in the initial
 * namespace with their devices' unregistration queued.  Its sockets go
 * now; the entry stays, unlisted, until its last device puts it.
 */
static void __net_exit shca_net_exit_net(struct net *net)
{
	struct shca_netns *ns;

	mutex_lock(&shca_net_lock);
	list_for_each_entry(ns, &shca_netns_list, list) {
		if (net_eq(ns->net, net)) {
			shca_netns_close(ns);
			list_del_init(&ns->list);
			ns->net = NULL;
			break;
		}
	}
	mutex_unlock(&shca_net_lock);
}

static struct pernet_operations shca_net_ops = {
	.exit = shca_net_exit_net,
};

/**
 * shca_net_init() - the sockets' module-wide state
 * @recv: what every datagram the sockets take goes to, in softirq
 *
 * Return: 0 or a negative errno.
 */
int shca_net_init(shca_net_recv_t recv)
{
	shca_net_deliver = recv;
	return register_pernet_subsys(&shca_net_ops);
}

void shca_net_exit(void)
{
	unregister_pernet_subsys(&shca_net_ops);
}

static bool shca_av_ipv4(const struct shca_av *av)
{
	return av->net_type == RDMA_NETWORK_IPV4;
}

/**
 * shca_net_headroom() - bytes to reserve in front of the BTH
 * @dev: the sending device
 * @av: where the packet goes
 *
 * Return: room for the link layer, the IP and the UDP headers.
 */
unsigned int shca_net_headroom(const struct shca_dev *dev,
			       const struct shca_av *av)
{
	return LL_RESERVED_SPACE(dev->ndev) + sizeof(struct udphdr) +
	       (shca_av_ipv4(av) ? sizeof(struct iphdr) :
				   sizeof(struct ipv6hdr));
}

static void shca_net_push_udp(struct sk_buff *skb, u16 sport)
{
	struct udphdr *uh;

	uh = skb_push(skb, sizeof(*uh));
	skb_reset_transport_header(skb);
	uh->source = htons(sport);
	uh->dest = htons(SHCA_ROCE_UDP_PORT);
	uh->len = htons(skb->len);
	uh->check = 0;
}

/* The ICRC, over the final headers, into the packet's last 4 bytes. */
static void shca_net_icrc(struct sk_buff *skb, bool ipv6)
{
	__le32 icrc;

	icrc = cpu_to_le32(shca_icrc_skb(skb, 0, skb->len, ipv6));
	/* In the linear part, or in the packet's own last fragment. */
	skb_store_bits(skb, skb->len - SHCA_ICRC_LEN, &icrc, sizeof(icrc));
}

static int shca_net_xmit4(struct shca_dev *dev, const struct shca_av *av,
			  u16 sport, struct sk_buff *skb)
{
	const struct ib_global_route *grh = &av->attr.grh;
	struct net *net = dev_net(dev->ndev);
	struct flowi4 fl = {
		.flowi4_oif = av->ifindex,
		.flowi4_proto = IPPROTO_UDP,
	};
	struct rtable *rt;
	struct iphdr *iph;

	memcpy(&fl.saddr, av->sgid.raw + 12, sizeof(fl.saddr));
	memcpy(&fl.daddr, grh->dgid.raw + 12, sizeof(fl.daddr));
	rt = ip_route_output_key(net, &fl);
	if (IS_ERR(rt)) {
		kfree_skb(skb);
		return PTR_ERR(rt);
	}
	skb_dst_set(skb, &rt->dst);

	shca_net_push_udp(skb, sport);
	iph = skb_push(skb, sizeof(*iph));
	skb_reset_network_header(skb);
	*iph = (struct iphdr){
		.version = 4,
		.ihl = sizeof(*iph) / 4,
		.tos = grh->traffic_class,
		.tot_len = htons(skb->len),
		.frag_off = htons(IP_DF),
		.ttl = grh->hop_limit,
		.protocol = IPPROTO_UDP,
		.saddr = fl.saddr,
		.daddr = fl.daddr,
	};
	__ip_select_ident(net, iph, 1);
	ip_send_check(iph);
	skb->protocol = htons(ETH_P_IP);
	memset(IPCB(skb), 0, sizeof(*IPCB(skb)));
	shca_net_icrc(skb, false);
	return ip_local_out(net, NULL, skb);
}

static int shca_net_xmit6(struct shca_dev *dev, const struct shca_av *av,
			  u16 sport, struct sk_buff *skb)
{
	const struct ib_global_route *grh = &av->attr.grh;
	struct net *net = dev_net(dev->ndev);
	struct flowi6 fl = {
		.flowi6_oif = av->ifindex,
		.flowi6_proto = IPPROTO_UDP,
	};
	struct dst_entry *dst;
	struct ipv6hdr *ip6h;

	if (!IS_ENABLED(CONFIG_IPV6)) {
		kfree_skb(skb);
		return -EAFNOSUPPORT;
	}
	memcpy(&fl.saddr, av->sgid.raw, sizeof(fl.saddr));
	memcpy(&fl.daddr, grh->dgid.raw, sizeof(fl.daddr));
	dst = ipv6_stub->ipv6_dst_lookup_flow(net, NULL, &fl, NULL);
	if (IS_ERR(dst)) {
		kfree_skb(skb);
		return PTR_ERR(dst);
	}
	skb_dst_set(skb, dst);

	shca_net_push_udp(skb, sport);
	ip6h = skb_push(skb, sizeof(*ip6h));
	skb_reset_network_header(skb);
	ip6_flow_hdr(ip6h, grh->traffic_class,
		     cpu_to_be32(grh->flow_label) & IPV6_FLOWLABEL_MASK);
	ip6h->payload_len = htons(skb->len - sizeof(*ip6h));
	ip6h->nexthdr = IPPROTO_UDP;
	ip6h->hop_limit = grh->hop_limit;
	ip6h->saddr = fl.saddr;
	ip6h->daddr = fl.daddr;
	skb->protocol = htons(ETH_P_IPV6);
	memset(IP6CB(skb), 0, sizeof(*IP6CB(skb)));
	shca_net_icrc(skb, true);
	return ip6_local_out(net, NULL, skb);
}

/**
 * shca_net_xmit() - send a RoCEv2 packet
 * @dev: the sending device
 * @av: the path: source and destination GIDs, traffic class, hop limit
 * @sport: the UDP source port (entropy for ECMP)
 * @skb: the packet from its BTH to the room for its ICRC, with
 *	shca_net_headroom() in front
 *
 * Context: any but hard-irq; the engine's process context.
 * Return: 0 when the packet was queued, else a negative errno (the packet
 * is gone either way).
 */
int shca_net_xmit(struct shca_dev *dev, const struct shca_av *av, u16 sport,
		  struct sk_buff *skb)
{
	const struct shca_bth *bth = (const struct shca_bth *)skb->data;
	int ret;

	trace_softhca_xmit(&dev->ibdev, bth->opcode,
			   be32_to_cpu(bth->qpn) & SHCA_BTH_QPN,
			   be32_to_cpu(bth->psn) & SHCA_BTH_PSN, skb->len);
	skb->dev = dev->ndev;
	skb->ip_summed = CHECKSUM_NONE;
	if (shca_av_ipv4(av))
		ret = shca_net_xmit4(dev, av, sport, skb);
	else
		ret = shca_net_xmit6(dev, av, sport, skb);
	ret = net_xmit_eval(ret);
	shca_count(dev, ret ? SHCA_CNT_TX_ERRORS : SHCA_CNT_TX_PACKETS);
	return ret;
}
