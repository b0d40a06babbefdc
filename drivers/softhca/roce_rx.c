// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * RoCEv2 receive.
 *
 * Every byte of a packet is hostile.  In softirq, shca_roce_recv() checks
 * what can be checked without the QP: the ICRC, the IBA headers against
 * the length (wire.c), that the destination address is one of the
 * device's GIDs and that the destination QP exists; then it queues the
 * packet on that QP, bounded by the memory the queue pins, and hands the
 * QP to its engine, which runs it there and then if it is idle, unless
 * the QP takes no packets (RESET, INIT).  A
 * packet to a multicast group is queued so on each QP of the device
 * attached to it (mcast.c), a copy each.  A packet that fails is dropped
 * and counted by reason (`rdma statistic`).
 *
 * The engine executes the queued packets in order (shca_roce_rx_run()).
 * UD: one packet is one message, handed to the responder (resp.c) as
 * loopback hands it one, with the payload in the packet.  A message the
 * QP refuses (state, service, Q_Key, no receive WQE) is dropped and
 * counted too.  RC and UC packets must come from the QP's peer; requests
 * go to the responder (roce_resp.c), acknowledgments and READ responses
 * to the requester (roce_req.c).
 */

#include <linux/if_ether.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/udp.h>
#include <net/ipv6.h>
#include <rdma/ib_cache.h>

#include "ah.h"
#include "dev.h"
#include "icrc.h"
#include "mcast.h"
#include "mem.h"
#include "net.h"
#include "qp.h"
#include "roce.h"
#include "trace.h"

/* Packets a run of the engine executes before it lets others run. */
#define SHCA_ROCE_RX_BATCH 64

/*
 * The bytes of READ responses a run sends before it lets others run: in
 * the receive softirq too (the responder stops sooner where the netdev's
 * pace holds its packets back).
 */
#define SHCA_ROCE_RX_BUDGET SZ_64K

/* The engine's, which main.c gives. */
static shca_roce_rx_ready_t shca_roce_rx_ready;

/**
 * shca_roce_rx_init() - what runs a QP that packets were queued on
 * @ready: the engine's entry, called in the receive softirq
 *
 * Context: module init, before the sockets are made.
 */
void shca_roce_rx_init(shca_roce_rx_ready_t ready)
{
	shca_roce_rx_ready = ready;
}

static bool shca_skb_ipv6(const struct sk_buff *skb)
{
	return skb->protocol == htons(ETH_P_IPV6);
}

/* The source and destination addresses of @skb, as GIDs. */
static void shca_skb_gids(const struct sk_buff *skb, union ib_gid *sgid,
			  union ib_gid *dgid)
{
	const struct iphdr *iph = ip_hdr(skb);

	if (shca_skb_ipv6(skb)) {
		memcpy(sgid, &ipv6_hdr(skb)->saddr, sizeof(*sgid));
		memcpy(dgid, &ipv6_hdr(skb)->daddr, sizeof(*dgid));
		return;
	}
	ipv6_addr_set_v4mapped(iph->saddr, (struct in6_addr *)sgid);
	ipv6_addr_set_v4mapped(iph->daddr, (struct in6_addr *)dgid);
}

/* Sent to a multicast group: IP let it in because the netdev joined. */
static bool shca_skb_mcast(const struct sk_buff *skb)
{
	if (shca_skb_ipv6(skb))
		return ipv6_addr_is_multicast(&ipv6_hdr(skb)->daddr);
	return ipv4_is_multicast(ip_hdr(skb)->daddr);
}

static bool shca_roce_dgid_ok(struct shca_dev *dev, const struct sk_buff *skb)
{
	const struct ib_gid_attr *attr;
	union ib_gid sgid, dgid;

	shca_skb_gids(skb, &sgid, &dgid);
	/* The netdev it came in on: the device's, or a VLAN's above it. */
	attr = rdma_find_gid_by_port(&dev->ibdev, &dgid,
				     IB_GID_TYPE_ROCE_UDP_ENCAP, SHCA_PORT,
				     skb->dev);
	if (IS_ERR(attr))
		return false;
	rdma_put_gid_attr(attr);
	return true;
}

/* The IBA packet: from the BTH to the end of the UDP payload. */
static u8 *shca_skb_bth(const struct sk_buff *skb)
{
	return skb->data + sizeof(struct udphdr);
}

static unsigned int shca_skb_bth_len(const struct sk_buff *skb)
{
	return skb->len - sizeof(struct udphdr);
}

/*
 * The ICRC @skb carries against the one of its bytes, from the IP header
 * (in the head, in front of the data) on.
 */
static bool shca_roce_icrc_ok(struct sk_buff *skb)
{
	unsigned int l3 = -skb_network_offset(skb);
	__le32 icrc;
	bool ok;

	if (skb_copy_bits(skb, skb->len - SHCA_ICRC_LEN, &icrc, sizeof(icrc)))
		return false;
	__skb_push(skb, l3);
	ok = le32_to_cpu(icrc) == shca_icrc_skb(skb, 0, skb->len,
						shca_skb_ipv6(skb));
	__skb_pull(skb, l3);
	return ok;
}

static enum shca_drop shca_roce_check(struct shca_dev *dev,
				      struct sk_buff *skb,
				      struct shca_pkt *pkt)
{
	unsigned int hdrs;

	/* The ICRC covers the BTH: it must be there to check it. */
	if (skb->len < sizeof(struct udphdr) + sizeof(struct shca_bth) +
		       SHCA_ICRC_LEN)
		return SHCA_DROP_TRUNCATED;
	/*
	 * The headers in the head, for the parse; the payload stays where
	 * the netdev put it (page fragments, as a NIC receives into pages),
	 * and is read from there once.  A frag list is rare: made linear.
	 */
	if (!pskb_may_pull(skb, sizeof(struct udphdr) +
				sizeof(struct shca_bth)))
		return SHCA_DROP_NOMEM;
	hdrs = shca_pkt_hdr_len(*shca_skb_bth(skb));
	if (!pskb_may_pull(skb, min_t(unsigned int, skb->len,
				      sizeof(struct udphdr) + hdrs)) ||
	    (skb_has_frag_list(skb) && __skb_linearize(skb)))
		return SHCA_DROP_NOMEM;
	if (!shca_roce_icrc_ok(skb))
		return SHCA_DROP_ICRC;
	if (shca_pkt_parse(pkt, shca_skb_bth(skb), shca_skb_bth_len(skb)))
		return pkt->drop;
	/* A group's packets are checked against its members. */
	if (!shca_skb_mcast(skb) && !shca_roce_dgid_ok(dev, skb))
		return SHCA_DROP_DGID;
	return SHCA_DROP_NONE;
}

/*
 * Queues @skb on @qp, unless the QP takes no packets yet (RESET, INIT), as
 * hardware drops them, or its queue pins too much memory already.  The
 * state is read under the queue's lock, which shca_engine_qp_stop() takes
 * to purge the queue once the QP is in RESET: nothing received before a
 * RESET is executed after it.
 */
static enum shca_drop shca_roce_rx_queue(struct shca_qp *qp,
					 struct sk_buff *skb)
{
	enum shca_drop why = SHCA_DROP_NONE;
	unsigned long flags;

	spin_lock_irqsave(&qp->roce->rx_pkts.lock, flags);
	if (READ_ONCE(qp->state) < IB_QPS_RTR) {
		why = SHCA_DROP_REFUSED;
	} else if (skb->truesize > SHCA_ROCE_RX_QUEUE_BYTES - qp->roce->rx_bytes) {
		why = SHCA_DROP_BUSY;
	} else {
		qp->roce->rx_bytes += skb->truesize;
		__skb_queue_tail(&qp->roce->rx_pkts, skb);
	}
	spin_unlock_irqrestore(&qp->roce->rx_pkts.lock, flags);
	return why;
}

static struct sk_buff *shca_roce_rx_dequeue(struct shca_qp *qp)
{
	struct sk_buff *skb;
	unsigned long flags;

	spin_lock_irqsave(&qp->roce->rx_pkts.lock, flags);
	skb = __skb_dequeue(&qp->roce->rx_pkts);
	if (skb)
		qp->roce->rx_bytes -= skb->truesize;
	spin_unlock_irqrestore(&qp->roce->rx_pkts.lock, flags);
	return skb;
}

/**
 * shca_roce_rx_purge() - drop, and count, the packets queued on a QP
 * @qp: the QP, its engine stopped
 *
 * Context: any.
 */
void shca_roce_rx_purge(struct shca_qp *qp)
{
	struct sk_buff *skb;

	while ((skb = shca_roce_rx_dequeue(qp))) {
		shca_count_drop(to_shca_dev(qp->ibqp.device),
				SHCA_DROP_PURGED);
		kfree_skb(skb);
	}
}

/*
 * A UD packet to a multicast group, destination QP 0xFFFFFF: a copy for
 * each QP of the device attached to the group, queued as a packet to it
 * would be.  Return: why the packet reached no member, or SHCA_DROP_NONE.
 */
static enum shca_drop shca_roce_recv_mcast(struct shca_dev *dev,
					   struct sk_buff *skb,
					   const struct shca_pkt *pkt)
{
	struct sk_buff *copy;
	struct shca_mcg *mcg;
	enum shca_drop why;
	union ib_gid sgid, mgid;
	struct shca_qp *qp;
	u32 i;

	if ((pkt->opcode & SHCA_OPCODE_TRANSPORT) != SHCA_TRANSPORT_UD ||
	    pkt->dqpn != SHCA_MCAST_QPN)
		return SHCA_DROP_QPN;
	shca_skb_gids(skb, &sgid, &mgid);
	rcu_read_lock();
	mcg = shca_mcg_find(dev, &mgid);
	for (i = 0; mcg && i < mcg->len; i++) {
		qp = shca_qp_get(dev, READ_ONCE(mcg->qpn[i]));
		if (!qp)
			continue;
		copy = skb_clone(skb, GFP_ATOMIC);
		why = copy ? shca_roce_rx_queue(qp, copy) : SHCA_DROP_NOMEM;
		if (why == SHCA_DROP_NONE) {
			shca_roce_rx_ready(qp);
		} else {
			shca_count_drop(dev, why);
			kfree_skb(copy);
		}
		shca_qp_put(qp);
	}
	rcu_read_unlock();
	if (!mcg)
		return SHCA_DROP_DGID;
	consume_skb(skb);
	return SHCA_DROP_NONE;
}

/**
 * shca_roce_recv() - take a RoCEv2 datagram that reached a device
 * @dev: the device bound to the netdev it arrived on
 * @skb: the datagram, its data at the UDP header; consumed
 *
 * Context: softirq (the UDP socket's encap_rcv).
 */
void shca_roce_recv(struct shca_dev *dev, struct sk_buff *skb)
{
	struct shca_pkt pkt;
	enum shca_drop why;
	struct shca_qp *qp;

	shca_count(dev, SHCA_CNT_RX_PACKETS);
	why = shca_roce_check(dev, skb, &pkt);
	if (why != SHCA_DROP_NONE)
		goto drop;
	trace_softhca_recv(&dev->ibdev, pkt.opcode, pkt.dqpn, pkt.psn,
			   skb->len - sizeof(struct udphdr));
	if (shca_skb_mcast(skb)) {
		why = shca_roce_recv_mcast(dev, skb, &pkt);
		if (why != SHCA_DROP_NONE)
			goto drop;
		return;
	}
	qp = shca_qp_get(dev, pkt.dqpn);
	if (!qp) {
		why = SHCA_DROP_QPN;
		goto drop;
	}
	why = shca_roce_rx_queue(qp, skb);
	if (why != SHCA_DROP_NONE) {
		shca_qp_put(qp);
		goto drop;
	}
	shca_roce_rx_ready(qp);
	shca_qp_put(qp);
	return;

drop:
	ibdev_dbg_ratelimited(&dev->ibdev, "dropped a packet: %s\n",
			      shca_drop_names[why]);
	shca_count_drop(dev, why);
	kfree_skb(skb);
}

/* The path a UD packet came by, as the responder reports it (GRH). */
static void shca_roce_rx_av(const struct sk_buff *skb, struct shca_av *av)
{
	struct ib_global_route *grh = &av->attr.grh;

	shca_skb_gids(skb, &av->sgid, &grh->dgid);
	if (shca_skb_ipv6(skb)) {
		const struct ipv6hdr *ip6h = ipv6_hdr(skb);

		av->net_type = RDMA_NETWORK_IPV6;
		grh->traffic_class = ip6_tclass(ip6_flowinfo(ip6h));
		grh->flow_label = be32_to_cpu(ip6_flowlabel(ip6h));
		grh->hop_limit = ip6h->hop_limit;
		return;
	}
	av->net_type = RDMA_NETWORK_IPV4;
	grh->traffic_class = ip_hdr(skb)->tos;
	grh->hop_limit = ip_hdr(skb)->ttl;
}

/*
 * The sender's MAC address.  A packet to a group that the IP stack looped
 * back to the sending netdev has no Ethernet header: it is the netdev's.
 */
static const u8 *shca_roce_rx_smac(struct shca_qp *qp,
				   const struct sk_buff *skb)
{
	if (skb->pkt_type == PACKET_LOOPBACK)
		return to_shca_dev(qp->ibqp.device)->ndev->dev_addr;
	return eth_hdr(skb)->h_source;
}

/* Where @pkt's payload starts, from the data of its skb. */
static u32 shca_roce_rx_data(const struct shca_pkt *pkt)
{
	return sizeof(struct udphdr) + pkt->hdr_len;
}

static bool shca_roce_rx_ud(struct shca_qp *qp, struct sk_buff *skb,
			    const struct shca_pkt *pkt)
{
	struct shca_sgl payload;
	struct shca_av av = {};
	struct shca_msg msg = {
		.qp_type = IB_QPT_UD,
		.opcode = pkt->opcode == SHCA_OPCODE(UD, SEND_ONLY) ?
			  IB_WR_SEND : IB_WR_SEND_WITH_IMM,
		.flags = pkt->se ? SOFTHCA_WQE_SOLICITED : 0,
		.ex = (__force u32)cpu_to_be32(pkt->imm),
		.len = pkt->paylen,
		.payload = &payload,
		.src_qpn = pkt->sqpn,
		.dest_qpn = pkt->dqpn,
		.qkey = pkt->qkey,
		.av = &av,
		.smac = shca_roce_rx_smac(qp, skb),
	};

	shca_sgl_init_skb(&payload, skb, shca_roce_rx_data(pkt), pkt->paylen);
	shca_roce_rx_av(skb, &av);
	return shca_resp_execute(qp, &msg) == SHCA_TX_DONE;
}

/*
 * An RC or UC packet comes from the QP's peer: the transport is the QP's
 * and the source address is its path's destination.
 */
static bool shca_roce_rx_peer_ok(struct shca_qp *qp, const struct sk_buff *skb,
				 const struct shca_pkt *pkt)
{
	enum ib_qp_type type = (pkt->opcode & SHCA_OPCODE_TRANSPORT) ==
			       SHCA_TRANSPORT_RC ? IB_QPT_RC : IB_QPT_UC;
	union ib_gid sgid, dgid;

	if (qp->ibqp.qp_type != type)
		return false;
	shca_skb_gids(skb, &sgid, &dgid);
	return !memcmp(&sgid, &qp->av.attr.grh.dgid, sizeof(sgid));
}

/* An acknowledgment or READ response: for the requester. */
static bool shca_roce_rx_answer(u8 opcode)
{
	u8 op = opcode & ~SHCA_OPCODE_TRANSPORT;

	return op >= SHCA_OP_RDMA_READ_RESPONSE_FIRST &&
	       op <= SHCA_OP_ATOMIC_ACKNOWLEDGE;
}

/* Executes one queued packet; its checks passed in shca_roce_recv(). */
static void shca_roce_rx_one(struct shca_qp *qp, struct sk_buff *skb)
{
	struct shca_dev *dev = to_shca_dev(qp->ibqp.device);
	struct shca_sgl payload;
	struct shca_pkt pkt;
	bool ud, peer, done = false;

	shca_pkt_parse(&pkt, shca_skb_bth(skb), shca_skb_bth_len(skb));
	ud = (pkt.opcode & SHCA_OPCODE_TRANSPORT) == SHCA_TRANSPORT_UD;
	peer = !ud && shca_roce_rx_peer_ok(qp, skb, &pkt);
	if (peer && shca_roce_rx_answer(pkt.opcode)) {
		shca_roce_req_rx(qp, skb, &pkt, shca_roce_rx_data(&pkt));
		return;
	}
	if (ud) {
		done = shca_roce_rx_ud(qp, skb, &pkt);
	} else if (peer) {
		shca_sgl_init_skb(&payload, skb, shca_roce_rx_data(&pkt),
				  pkt.paylen);
		done = shca_roce_resp_rx(qp, &pkt, &payload);
	}
	if (done) {
		consume_skb(skb);
		return;
	}
	shca_count_drop(dev, SHCA_DROP_REFUSED);
	kfree_skb(skb);
}

/*
 * Whether the packet queued next is a request (or anything but an
 * answer).  Its headers were checked before it was queued.
 */
static bool shca_roce_rx_request_next(struct shca_qp *qp)
{
	struct sk_buff *skb;
	unsigned long flags;
	bool request;

	spin_lock_irqsave(&qp->roce->rx_pkts.lock, flags);
	skb = skb_peek(&qp->roce->rx_pkts);
	request = skb && !shca_roce_rx_answer(shca_skb_bth(skb)[0]);
	spin_unlock_irqrestore(&qp->roce->rx_pkts.lock, flags);
	return request;
}

/**
 * shca_roce_rx_run() - execute a batch of the packets queued on a QP
 * @qp: the QP
 *
 * Answers complete the requester's WQEs in the engine's run of the send
 * queue, which follows this one.  A batch therefore ends at an answer
 * that a request follows: the request's completion (a receive, a WRITE
 * with immediate) comes after those of the WQEs the answer acknowledged,
 * in the order the wire brought them, as an HCA's do.  A consumer that
 * waits for its SEND's completion and then for the peer's reply, with a
 * send CQ as deep as its one SEND in flight (ib_send_lat -e), relies on
 * it.  A run of answers, or of requests, is one batch.
 *
 * Context: the QP's engine: its work (under engine_lock), or the receive
 * softirq (under run_lock).
 * Return: true when packets remain, or responses to a READ that the
 * netdev's pace does not hold back.
 */
bool shca_roce_rx_run(struct shca_qp *qp)
{
	u32 budget = SHCA_ROCE_RX_BUDGET;
	enum shca_rr_read read;
	struct sk_buff *skb;
	unsigned int n;
	bool answer;

	/*
	 * A READ answered in part goes on, and the packets after it wait:
	 * in the next run, or in the one the netdev's pace kicks.
	 */
	read = shca_roce_resp_read(qp, &budget);
	if (read != SHCA_RR_READ_DONE)
		return read == SHCA_RR_READ_MORE;
	/* Most runs are a loopback QP's: no lock for an empty queue. */
	if (skb_queue_empty_lockless(&qp->roce->rx_pkts))
		return false;
	for (n = 0; n < SHCA_ROCE_RX_BATCH; n++) {
		skb = shca_roce_rx_dequeue(qp);
		if (!skb)
			break;
		answer = shca_roce_rx_answer(shca_skb_bth(skb)[0]);
		shca_roce_rx_one(qp, skb);
		read = shca_roce_resp_read(qp, &budget);
		if (read != SHCA_RR_READ_DONE)
			return read == SHCA_RR_READ_MORE;
		if (answer && shca_roce_rx_request_next(qp))
			break;
	}
	/* One acknowledgment for what the run executed. */
	shca_roce_resp_ack(qp);
	return !skb_queue_empty_lockless(&qp->roce->rx_pkts);
}
