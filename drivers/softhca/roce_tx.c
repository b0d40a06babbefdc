// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * RoCEv2 transmit: the requester's messages to QPs of other hosts.
 *
 * UD (and the GSI QP, which is UD with QPN 1): a message is one packet,
 * BTH, DETH, the immediate data if any, payload, pad and ICRC, sent and
 * completed: the IBA's unreliable service is not told what became of it.
 *
 * RC and UC are not carried over the wire yet: such a message is
 * unanswered, so an RC requester retries and completes in error.
 */

#include <linux/skbuff.h>

#include "ah.h"
#include "dev.h"
#include "mem.h"
#include "net.h"
#include "qp.h"
#include "roce.h"

/* RoCE has the default P_Key only. */
#define SHCA_DEFAULT_PKEY 0xffff

static u8 shca_roce_ud_opcode(const struct shca_msg *msg)
{
	return msg->opcode == IB_WR_SEND_WITH_IMM ?
	       SHCA_OPCODE(UD, SEND_ONLY_WITH_IMMEDIATE) :
	       SHCA_OPCODE(UD, SEND_ONLY);
}

/*
 * A packet for @pkt's headers and @pkt->paylen bytes of payload, with
 * room for the network headers in front; the payload is copied from
 * @msg's.  Return: the packet, or NULL (no memory, or the requester's
 * memory went away).
 */
static struct sk_buff *shca_roce_packet(struct shca_dev *dev,
					struct shca_msg *msg,
					const struct shca_pkt *pkt)
{
	unsigned int hdr_len = shca_pkt_hdr_len(pkt->opcode);
	unsigned int pad = -pkt->paylen & 3;
	unsigned int room = shca_net_headroom(dev, msg->av);
	struct shca_sgl dst;
	struct sk_buff *skb;
	void *p;

	/* The engine may run for reclaim: no allocation that waits on it. */
	skb = alloc_skb(room + hdr_len + pkt->paylen + pad + SHCA_ICRC_LEN,
			GFP_ATOMIC | __GFP_NOWARN);
	if (!skb)
		return NULL;
	skb_reserve(skb, room);
	shca_pkt_build(pkt, skb_put(skb, hdr_len));
	p = skb_put(skb, pkt->paylen);
	shca_sgl_init_buf(&dst, p, pkt->paylen);
	if (shca_sgl_copy(&dst, msg->payload, pkt->paylen)) {
		kfree_skb(skb);
		return NULL;
	}
	skb_put_zero(skb, pad + SHCA_ICRC_LEN);
	return skb;
}

static enum shca_tx shca_roce_send_ud(struct shca_qp *qp,
				      struct shca_msg *msg)
{
	struct shca_dev *dev = to_shca_dev(qp->ibqp.device);
	struct shca_pkt pkt = {
		.opcode = shca_roce_ud_opcode(msg),
		.se = msg->flags & SOFTHCA_WQE_SOLICITED,
		.pkey = SHCA_DEFAULT_PKEY,
		.dqpn = msg->dest_qpn,
		.psn = qp->req.psn++ & SHCA_BTH_PSN,
		.imm = be32_to_cpu((__force __be32)msg->ex),
		.qkey = msg->qkey,
		.sqpn = msg->src_qpn,
		.paylen = msg->len,
	};
	struct sk_buff *skb;

	msg->status = IB_WC_SUCCESS;
	skb = shca_roce_packet(dev, msg, &pkt);
	if (!skb) {
		shca_count(dev, SHCA_CNT_TX_ERRORS);
		if (msg->payload->bad)
			msg->status = IB_WC_LOC_PROT_ERR;
		return SHCA_TX_DONE;
	}
	shca_net_xmit(dev, msg->av,
		      rdma_get_udp_sport(msg->av->attr.grh.flow_label,
					 qp->ibqp.qp_num, msg->dest_qpn),
		      skb);
	return SHCA_TX_DONE;
}

/**
 * shca_roce_send() - send a message to a QP of another host
 * @qp: the requester
 * @msg: the message; its address vector names no softhca device here
 *
 * Context: the engine: process context.
 * Return: as the responder's verdict reaches the requester: SHCA_TX_DONE
 * for UD, SHCA_TX_LOST for the services not carried yet.
 */
enum shca_tx shca_roce_send(struct shca_qp *qp, struct shca_msg *msg)
{
	if (msg->qp_type == IB_QPT_UD)
		return shca_roce_send_ud(qp, msg);
	ibdev_dbg_ratelimited(qp->ibqp.device,
			      "QP %u: RC and UC over the wire are not carried yet\n",
			      qp->ibqp.qp_num);
	return SHCA_TX_LOST;
}
