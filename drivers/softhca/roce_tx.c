// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * RoCEv2 transmit: the requester's messages to QPs of other hosts.
 *
 * UD (and the GSI QP, which is UD with QPN 1): a message is one packet,
 * BTH, DETH, the immediate data if any, payload, pad and ICRC, sent and
 * completed: the IBA's unreliable service is not told what became of it.
 *
 * Every packet, whatever its service, leaves through shca_roce_xmit():
 * the RC and UC requester's (roce_req.c) and the responder's
 * acknowledgments and READ responses (roce_resp.c) too.
 *
 * Pacing.  An RC or UC QP's packets are counted from the moment they
 * are sent until the layers below free them: a NIC once it has put them
 * on the wire, a qdisc that drops them, a veth as it hands them on.  Past
 * SHCA_WIRE_TX_QUEUED the requester sends no more, nor the responder
 * READ responses (shca_roce_tx_hold()), and the packet that brings the
 * count down to SHCA_WIRE_TX_RESUME runs its engine again.  So a window
 * or a READ's answer leaves at the pace the NIC takes it, not in one
 * burst that a full ring or socket (QEMU's user-space wire, say) drops
 * the end of.  A UC message pauses so between two packets, and completes
 * once all of it has left.  Each packet holds its QP until it is freed:
 * a QP's destruction waits for its packets to leave.
 *
 * One CPU.  The layers below keep a flow's packets in order only as each
 * CPU gave them: a veth hands a packet to the receive backlog of the CPU
 * that sent it, and a NIC with a transmit queue per CPU (XPS) puts it on
 * that CPU's ring.  A QP's engine runs where its work, a doorbell or the
 * receive softirq finds it, so consecutive packets may leave from two
 * CPUs, and the second CPU's overtake the first's: an RC responder drops
 * them as out of sequence, and the requester goes back for them and
 * halves its congestion window; a UC responder drops the messages they
 * belong to, for good.  So while a QP's packets whose order counts are
 * still queued below such a netdev (shca_net_per_cpu_order()), the QP
 * sends only from the CPU they left from: a run elsewhere sends nothing
 * and hands the QP to its receive work on that CPU (counted in
 * tx_cpu_moves).  A netdev with one queue keeps every CPU's packets in
 * order, and a NIC frees them late, so there the QP stays free.  ACKs
 * are exempt: a late one is a duplicate, and holding them would delay
 * the next request of a round trip.  A run that moves to another CPU
 * between the test and the send (a preempted unbound worker) may still
 * send one packet from there: RC's go-back recovers it, as before.
 */

#include <linux/skbuff.h>

#include "ah.h"
#include "dev.h"
#include "mem.h"
#include "net.h"
#include "qp.h"
#include "roce.h"

static u8 shca_roce_ud_opcode(const struct shca_msg *msg)
{
	return msg->opcode == IB_WR_SEND_WITH_IMM ?
	       SHCA_OPCODE(UD, SEND_ONLY_WITH_IMMEDIATE) :
	       SHCA_OPCODE(UD, SEND_ONLY);
}

/* Smaller payloads are copied: a page reference costs more than that. */
#define SHCA_ROCE_ZCOPY_MIN 512

static void shca_roce_add_frag(struct sk_buff *skb, struct page *page,
			       unsigned int off, u32 len)
{
	skb_fill_page_desc(skb, skb_shinfo(skb)->nr_frags, page, off, len);
	skb->len += len;
	skb->data_len += len;
	skb->truesize += len;
}

/* @len bytes from @src into a fragment of the packet's own. */
static int shca_roce_copy_frag(struct sk_buff *skb, struct shca_sgl *src,
			       u32 len, unsigned int zero)
{
	struct shca_sgl dst;
	struct page *page;
	void *p;

	p = netdev_alloc_frag(len + zero);
	if (!p)
		return -ENOMEM;
	shca_sgl_init_buf(&dst, p, len);
	if (len && shca_sgl_copy(&dst, src, len)) {
		skb_free_frag(p);
		return -EFAULT;
	}
	memset(p + len, 0, zero);
	page = virt_to_head_page(p);
	shca_roce_add_frag(skb, page, p - page_address(page), len + zero);
	return 0;
}

/*
 * The payload without a copy: @src's pages, each held by the packet, as
 * its fragments; then a fragment of its own for the pad and the ICRC.
 * What may not be lent to the network stack (slab objects, which it must
 * not hold) is copied, and so is what the fragments cannot take.  The
 * consumer does not touch the memory until the message completes, which
 * on RC is once the responder acknowledged it.  A copy still queued for
 * a retransmission may meet new bytes: its ICRC no longer matches, and
 * the responder, which has the message, drops it.
 */
static int shca_roce_zcopy(struct sk_buff *skb, struct shca_sgl *src,
			   u32 len)
{
	unsigned int poff, pad = -len & 3;
	struct page *page;
	u32 n;
	int ret;

	skb_shinfo(skb)->flags |= SKBFL_SHARED_FRAG;
	while (len && skb_shinfo(skb)->nr_frags < MAX_SKB_FRAGS - 1) {
		page = shca_sgl_page(src, &poff, &n);
		if (IS_ERR(page))
			return PTR_ERR(page);
		n = min(n, len);
		len -= n;
		if (!sendpage_ok(page)) {
			ret = shca_roce_copy_frag(skb, src, n, 0);
			if (ret)
				return ret;
			continue;
		}
		get_page(page);
		shca_roce_add_frag(skb, page, poff, n);
		shca_sgl_skip(src, n);
	}
	return shca_roce_copy_frag(skb, src, len, pad + SHCA_ICRC_LEN);
}

/*
 * A packet for @pkt's headers and @pkt->paylen bytes of payload from
 * @src (which may be NULL with no payload), with room for the network
 * headers to @av in front; @zcopy: the payload may stay in @src's pages
 * (it does when it is large enough, and the netdev takes fragments).
 * Return: the packet, or an ERR_PTR(): -ENOMEM, or -EFAULT when @src's
 * memory went away (@src->bad).
 */
static struct sk_buff *shca_roce_packet(struct shca_dev *dev,
					const struct shca_av *av,
					const struct shca_pkt *pkt,
					struct shca_sgl *src, bool zcopy)
{
	unsigned int hdr_len = shca_pkt_hdr_len(pkt->opcode);
	unsigned int pad = -pkt->paylen & 3;
	unsigned int room = shca_net_headroom(dev, av);
	unsigned int linear = hdr_len;
	struct shca_sgl dst;
	struct sk_buff *skb;
	int ret = 0;

	zcopy &= pkt->paylen >= SHCA_ROCE_ZCOPY_MIN && src->sge &&
		 shca_net_sg(dev->ndev);
	if (!zcopy)
		linear += pkt->paylen + pad + SHCA_ICRC_LEN;
	/* The engine may run for reclaim: no allocation that waits on it. */
	skb = alloc_skb(room + linear, GFP_ATOMIC | __GFP_NOWARN);
	if (!skb)
		return ERR_PTR(-ENOMEM);
	skb_reserve(skb, room);
	shca_pkt_build(pkt, skb_put(skb, hdr_len));
	if (zcopy) {
		ret = shca_roce_zcopy(skb, src, pkt->paylen);
	} else {
		shca_sgl_init_buf(&dst, skb_put(skb, pkt->paylen),
				  pkt->paylen);
		if (pkt->paylen)
			ret = shca_sgl_copy(&dst, src, pkt->paylen);
		skb_put_zero(skb, pad + SHCA_ICRC_LEN);
	}
	if (ret) {
		kfree_skb(skb);
		return ERR_PTR(src->bad ? -EFAULT : -ENOMEM);
	}
	return skb;
}

/* An RC or UC packet left the layers below: see "Pacing" above. */
static void shca_roce_tx_done(struct sk_buff *skb)
{
	struct shca_qp *qp = skb_shinfo(skb)->destructor_arg;
	struct shca_roce_qp *roce = qp->roce;

	if (atomic_dec_return(&roce->tx_queued) <= SHCA_WIRE_TX_RESUME &&
	    READ_ONCE(roce->tx_held) && xchg(&roce->tx_held, false))
		shca_engine_kick(qp);
	shca_qp_put(qp);
}

/* A packet whose order counts left the layers below: "One CPU". */
static void shca_roce_tx_done_ordered(struct sk_buff *skb)
{
	struct shca_qp *qp = skb_shinfo(skb)->destructor_arg;

	atomic_dec(&qp->roce->tx_ordered);
	shca_roce_tx_done(skb);
}

/*
 * Counts @skb among @qp's queued packets until the layers below free it,
 * and, @ordered, among those that keep the QP on this CPU.
 * Context: BH disabled, on the CPU that sends @skb.
 */
static void shca_roce_tx_own(struct shca_qp *qp, struct sk_buff *skb,
			     bool ordered)
{
	struct shca_roce_qp *roce = qp->roce;

	kref_get(&qp->ref);
	atomic_inc(&roce->tx_queued);
	skb_shinfo(skb)->destructor_arg = qp;
	skb->destructor = shca_roce_tx_done;
	if (ordered) {
		atomic_inc(&roce->tx_ordered);
		WRITE_ONCE(roce->tx_cpu, smp_processor_id());
		skb->destructor = shca_roce_tx_done_ordered;
	}
}

/*
 * Are @qp's packets whose order counts still queued below a netdev that
 * keeps them in order only per CPU, sent from another CPU?  Then its
 * receive work runs there ("One CPU"); a CPU gone offline keeps nothing.
 */
static bool shca_roce_tx_moved(struct shca_qp *qp)
{
	struct shca_dev *dev = to_shca_dev(qp->ibqp.device);
	struct shca_roce_qp *roce = qp->roce;
	int cpu = READ_ONCE(roce->tx_cpu);

	if (!atomic_read(&roce->tx_ordered) ||
	    cpu == raw_smp_processor_id() || !cpu_online(cpu) ||
	    !shca_net_per_cpu_order(dev->ndev))
		return false;
	if (shca_engine_kick_rx_on(qp, cpu))
		shca_count(dev, SHCA_CNT_TX_CPU_MOVES);
	return true;
}

/**
 * shca_roce_tx_hold() - must an RC or UC QP send no more for now?
 * @qp: the requester, or the responder answering a READ
 *
 * Context: the engine.
 * Return: true when SHCA_WIRE_TX_QUEUED of its packets are still queued
 * below (the one that brings them down to SHCA_WIRE_TX_RESUME kicks its
 * engine), or else when those it sent last left from another CPU and are
 * still queued (its receive work on that CPU is kicked).  A QP held for
 * the first reason hands over only once it may send: a run that finds
 * it full, here or there (a stream's polling worker, every 50 us), would
 * have nothing for the other CPU to do.
 */
bool shca_roce_tx_hold(struct shca_qp *qp)
{
	struct shca_roce_qp *roce = qp->roce;

	if (atomic_read(&roce->tx_queued) >= SHCA_WIRE_TX_QUEUED) {
		WRITE_ONCE(roce->tx_held, true);
		/* Against shca_roce_tx_done(): one of the two sees the other. */
		smp_mb();
		if (atomic_read(&roce->tx_queued) >= SHCA_WIRE_TX_QUEUED)
			return true;
	}
	return shca_roce_tx_moved(qp);
}

/**
 * shca_roce_xmit() - send one packet of a QP
 * @qp: the QP it is from
 * @av: where to
 * @pkt: its transport headers; @pkt->paylen bytes of payload follow
 * @src: where the payload comes from, its cursor advanced past it
 *
 * Context: the engine: process context.
 * Return: 0, -ENOMEM, or -EFAULT when @src's memory went away (@src->bad
 * is set).  A packet the network layer drops is counted, not reported:
 * it is as lost as on the wire.
 */
int shca_roce_xmit(struct shca_qp *qp, const struct shca_av *av,
		   const struct shca_pkt *pkt, struct shca_sgl *src)
{
	struct shca_dev *dev = to_shca_dev(qp->ibqp.device);
	struct sk_buff *skb;

	/*
	 * UC and UD messages complete as they leave, and the consumer may
	 * then reuse the memory while the packet waits in a queue: their
	 * payload is copied.
	 */
	skb = shca_roce_packet(dev, av, pkt, src,
			       qp->ibqp.qp_type == IB_QPT_RC);
	if (IS_ERR(skb)) {
		shca_count(dev, SHCA_CNT_TX_ERRORS);
		return PTR_ERR(skb);
	}
	/* Recorded on the CPU it leaves from ("One CPU"). */
	local_bh_disable();
	if (qp->ibqp.qp_type == IB_QPT_RC || qp->ibqp.qp_type == IB_QPT_UC)
		shca_roce_tx_own(qp, skb,
				 pkt->opcode != SHCA_OPCODE(RC, ACKNOWLEDGE));
	shca_net_xmit(dev, av,
		      rdma_get_udp_sport(av->attr.grh.flow_label,
					 qp->ibqp.qp_num, pkt->dqpn),
		      skb);
	local_bh_enable();
	return 0;
}

static enum shca_tx shca_roce_send_ud(struct shca_qp *qp,
				      struct shca_msg *msg)
{
	struct shca_pkt pkt = {
		.opcode = shca_roce_ud_opcode(msg),
		.se = msg->flags & SOFTHCA_WQE_SOLICITED,
		.pkey = SHCA_DEFAULT_PKEY,
		.dqpn = msg->dest_qpn,
		.psn = qp->req.psn,
		.imm = be32_to_cpu((__force __be32)msg->ex),
		.qkey = msg->qkey,
		.sqpn = msg->src_qpn,
		.paylen = msg->len,
	};

	qp->req.psn = shca_psn_add(qp->req.psn, 1);
	msg->status = shca_roce_xmit(qp, msg->av, &pkt, msg->payload) ==
		      -EFAULT ? IB_WC_LOC_PROT_ERR : IB_WC_SUCCESS;
	return SHCA_TX_DONE;
}

/**
 * shca_roce_send() - send a message to a QP of another host
 * @qp: the requester
 * @msg: the message; its address vector names no softhca device here
 *
 * Context: the engine: process context.
 * Return: as the responder's verdict reaches the requester: SHCA_TX_DONE
 * for UD and UC, and for RC once the answer came; SHCA_TX_PENDING while
 * an RC message waits for it (see shca_roce_req_send()).
 */
enum shca_tx shca_roce_send(struct shca_qp *qp, struct shca_msg *msg)
{
	if (msg->qp_type == IB_QPT_UD)
		return shca_roce_send_ud(qp, msg);
	return shca_roce_req_send(qp, msg);
}
