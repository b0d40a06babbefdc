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

/*
 * A packet for @pkt's headers and @pkt->paylen bytes of payload, copied
 * from @src (which may be NULL with no payload), with room for the
 * network headers to @av in front.  Return: the packet, or NULL (no
 * memory, or @src's memory went away: @src->bad).
 */
static struct sk_buff *shca_roce_packet(struct shca_dev *dev,
					const struct shca_av *av,
					const struct shca_pkt *pkt,
					struct shca_sgl *src)
{
	unsigned int hdr_len = shca_pkt_hdr_len(pkt->opcode);
	unsigned int pad = -pkt->paylen & 3;
	unsigned int room = shca_net_headroom(dev, av);
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
	if (pkt->paylen && shca_sgl_copy(&dst, src, pkt->paylen)) {
		kfree_skb(skb);
		return NULL;
	}
	skb_put_zero(skb, pad + SHCA_ICRC_LEN);
	return skb;
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

	skb = shca_roce_packet(dev, av, pkt, src);
	if (!skb) {
		shca_count(dev, SHCA_CNT_TX_ERRORS);
		return src && src->bad ? -EFAULT : -ENOMEM;
	}
	shca_net_xmit(dev, av,
		      rdma_get_udp_sport(av->attr.grh.flow_label,
					 qp->ibqp.qp_num, pkt->dqpn),
		      skb);
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
