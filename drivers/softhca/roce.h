/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The RoCEv2 transport: messages to QPs of other hosts, as IBA packets
 * over UDP (net.c), beside loopback behind the same seam (transport.h).
 *
 * Transmit runs in the requester's engine.  Receive is split: the UDP
 * socket's softirq checks a packet (length, ICRC, headers, destination
 * GID and QP) and queues it on its QP, whose engine work executes it, so
 * a responder runs in the same context whichever transport brought the
 * message, and softirq does bounded work per packet.
 */
#ifndef SHCA_ROCE_H
#define SHCA_ROCE_H

#include <linux/skbuff.h>

#include "transport.h"

struct shca_dev;
struct shca_qp;

/* Packets a QP may have queued before its engine takes them. */
#define SHCA_ROCE_RX_QUEUE_MAX 1024

enum shca_tx shca_roce_send(struct shca_qp *qp, struct shca_msg *msg);
void shca_roce_recv(struct shca_dev *dev, struct sk_buff *skb);
bool shca_roce_rx_run(struct shca_qp *qp);

#endif /* SHCA_ROCE_H */
