// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Loopback transport: a message whose destination GID belongs to a
 * softhca device of this host (the requester's own device, or another
 * one) goes straight to the responder, which copies between the two QPs'
 * registered memory.  No packet is built and nothing crosses a netdev,
 * but ports must be up, as they would have to be for the wire.
 */

#include "dev.h"
#include "qp.h"
#include "transport.h"

static bool shca_port_active(struct shca_dev *dev)
{
	return READ_ONCE(dev->port_state) == IB_PORT_ACTIVE;
}

/**
 * shca_loop_send() - deliver a message to a QP of this host
 * @qp: the requester
 * @msg: the message
 *
 * Context: the engine: process context, no lock held.
 * Return: the responder's verdict, SHCA_TX_REMOTE when no device of this
 * host has the destination GID, or SHCA_TX_LOST when the destination QP
 * does not exist or a port is down.
 */
enum shca_tx shca_loop_send(struct shca_qp *qp, struct shca_msg *msg)
{
	struct shca_dev *peer;
	struct shca_qp *dest = NULL;
	enum shca_tx tx;

	if (!shca_port_active(to_shca_dev(qp->ibqp.device)))
		return SHCA_TX_LOST;
	rcu_read_lock();
	peer = shca_av_peer(msg->av);
	/* The QP reference keeps its device from being freed. */
	if (peer && shca_port_active(peer))
		dest = shca_qp_get(peer, msg->dest_qpn);
	rcu_read_unlock();
	/* Only tested for NULL past the read-side section. */
	if (!peer)
		return SHCA_TX_REMOTE;
	if (!dest)
		return SHCA_TX_LOST;
	tx = shca_resp_execute(dest, msg);
	shca_qp_put(dest);
	return tx;
}
