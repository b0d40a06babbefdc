// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Loopback transport: a message whose destination GID belongs to a
 * softhca device of this host (the requester's own device, or another
 * one whose netdev is in the same network namespace) goes straight to the
 * responder, which copies between the two QPs' registered memory.  No
 * packet is built and nothing crosses a netdev, but ports must be up, as
 * they would have to be for the wire.
 *
 * An RC or UC message is checked as the wire's receive path checks a
 * packet (roce_rx.c, roce_resp.c): it must come from the responder's
 * peer, the QP its path names (source GID, device, QPN), with the PSN the
 * responder expects, or it is dropped and counted (`rdma statistic`).
 * QPNs are numbered per device, so the QPN alone is no proof: a process
 * that creates QPs on another device until one has the number of a
 * kernel ULP's peer would otherwise reach the ULP's QP.  A dropped
 * message is unanswered, as a dropped packet is: the requester retries
 * until its retry count runs out; the responder sees nothing at all.
 * Loopback numbers messages as the wire does, in the QP's own sq_psn and
 * ePSN, so a QP's PSNs stay right if its traffic changes transport.
 *
 * A UD message needs the Q_Key only, as on the wire.  The source GID its
 * GRH reports is the requester's AH's, which ib_core took from the
 * requester's device's GID table: a work request names an AH of its own
 * PD and device, never a GID.
 */

#include <rdma/ib_cache.h>

#include "dev.h"
#include "qp.h"
#include "transport.h"

/*
 * Registered devices, for loopback to find the device that owns a GID.
 * A device joins once registered and leaves before ib_core frees it
 * (dev.c).  The generation changes whenever a device leaves the list, so
 * that a cached lookup (struct shca_av) can tell it may point at a freed
 * device.
 */
static LIST_HEAD(shca_devs);
static DEFINE_MUTEX(shca_devs_lock);
static atomic_t shca_devs_gen;

/* Changes whenever a device leaves: a cached peer may be gone. */
unsigned int shca_loop_generation(void)
{
	return atomic_read(&shca_devs_gen);
}

/**
 * shca_loop_find_gid() - the softhca device that has a RoCEv2 GID
 * @from: the device that looks, whose namespace the other must share
 * @gid: the GID
 *
 * A device whose netdev is in another network namespace is not found:
 * two containers reach each other through their network, if at all,
 * never by loopback.
 *
 * Context: any, under rcu_read_lock(), which keeps the device alive.
 * Return: the device, or NULL when no softhca device of @from's namespace
 * has it.
 */
struct shca_dev *shca_loop_find_gid(const struct shca_dev *from,
				    const union ib_gid *gid)
{
	const struct ib_gid_attr *attr;
	struct shca_dev *dev;

	list_for_each_entry_rcu(dev, &shca_devs, list) {
		if (dev->netns != from->netns)
			continue;
		attr = rdma_find_gid_by_port(&dev->ibdev, gid,
					     IB_GID_TYPE_ROCE_UDP_ENCAP,
					     SHCA_PORT, NULL);
		if (!IS_ERR(attr)) {
			rdma_put_gid_attr(attr);
			return dev;
		}
	}
	return NULL;
}

void shca_loop_dev_add(struct shca_dev *dev)
{
	mutex_lock(&shca_devs_lock);
	list_add_tail_rcu(&dev->list, &shca_devs);
	mutex_unlock(&shca_devs_lock);
}

/* Context: process context; sleeps (a grace period). */
void shca_loop_dev_del(struct shca_dev *dev)
{
	if (list_empty(&dev->list))
		return;
	mutex_lock(&shca_devs_lock);
	list_del_rcu(&dev->list);
	atomic_inc(&shca_devs_gen);
	mutex_unlock(&shca_devs_lock);
	synchronize_rcu();
}

/*
 * The softhca device of this host that owns @av's destination GID, in
 * the namespace of @dev, whose AH or QP @av is; or NULL.  Under
 * rcu_read_lock(), which keeps the device alive.
 */
static struct shca_dev *shca_av_peer(const struct shca_dev *dev,
				     const struct shca_av *av)
{
	/*
	 * A device leaves the list, then bumps the generation, then waits
	 * for a grace period: a cached device with the current generation
	 * lives as long as the caller's read-side section.
	 */
	if (av->peer && av->peer_gen == shca_loop_generation())
		return av->peer;
	return shca_loop_find_gid(dev, &av->attr.grh.dgid);
}

static bool shca_port_active(struct shca_dev *dev)
{
	return READ_ONCE(dev->port_state) == IB_PORT_ACTIVE;
}

/*
 * @qp is @dest's peer: @dest's path names @qp's source GID and QPN, and
 * the device that owns that GID is @qp's (two devices may have one GID).
 * @msg's source GID is @qp's own: its path's, which ib_core resolved from
 * @qp's device's GID table, never a work request's.
 *
 * Context: under rcu_read_lock(), which shca_av_peer() needs.
 */
static bool shca_loop_src_ok(struct shca_qp *qp, struct shca_qp *dest,
			     const struct shca_msg *msg)
{
	const struct shca_av *av = &dest->av;

	return msg->src_qpn == READ_ONCE(dest->attr.dest_qp_num) &&
	       !memcmp(&msg->av->sgid, &av->attr.grh.dgid, sizeof(av->sgid)) &&
	       shca_av_peer(to_shca_dev(dest->ibqp.device), av) ==
	       to_shca_dev(qp->ibqp.device);
}

/*
 * The PSN order the wire's responder keeps, on its ePSN: RC takes the
 * expected PSN only (loopback loses no message, so another one is not
 * the peer's next); UC takes any from the expected one on, as it does
 * after lost packets.
 */
static bool shca_loop_psn_ok(struct shca_qp *dest, const struct shca_msg *msg)
{
	s32 d = shca_psn_diff(msg->psn, READ_ONCE(dest->resp.epsn));

	return msg->qp_type == IB_QPT_RC ? !d : d >= 0;
}

static enum shca_tx shca_loop_drop(struct shca_qp *dest,
				   const struct shca_msg *msg,
				   enum shca_drop why)
{
	struct shca_dev *dev = to_shca_dev(dest->ibqp.device);

	ibdev_dbg_ratelimited(&dev->ibdev,
			      "QP %u: dropped opcode %u from QP %u PSN %#x: %s\n",
			      dest->ibqp.qp_num, msg->opcode, msg->src_qpn,
			      msg->psn, shca_drop_names[why]);
	shca_count_drop(dev, why);
	return SHCA_TX_LOST;
}

/*
 * An RC or UC message, from @qp's engine, numbered from its sq_psn.
 * @dest->resp is its own engine's, but its ePSN moves here: only @dest's
 * peer gets past the checks, and the peer's messages are ordered by the
 * peer's engine_lock; the wire's responder moves it for packets from the
 * peer, which a peer in this host sends by loopback.
 */
static enum shca_tx shca_loop_connected(struct shca_qp *qp,
					struct shca_qp *dest,
					struct shca_msg *msg)
{
	enum shca_tx tx;
	bool src_ok;
	u32 next;

	msg->psn = qp->req.psn;
	msg->npsn = shca_msg_npsn(msg, shca_qp_pmtu(qp));
	rcu_read_lock();
	src_ok = shca_loop_src_ok(qp, dest, msg);
	rcu_read_unlock();
	if (!src_ok)
		tx = shca_loop_drop(dest, msg, SHCA_DROP_LOOP_SRC);
	else if (!shca_loop_psn_ok(dest, msg))
		tx = shca_loop_drop(dest, msg, SHCA_DROP_LOOP_PSN);
	else
		tx = shca_resp_execute(dest, msg);
	next = shca_psn_add(msg->psn, msg->npsn);
	if (tx == SHCA_TX_DONE)
		WRITE_ONCE(dest->resp.epsn, next);
	/* RC resends what was not answered; UC's are gone either way. */
	if (tx == SHCA_TX_DONE || msg->qp_type == IB_QPT_UC)
		qp->req.psn = next;
	return tx;
}

/**
 * shca_loop_send() - deliver a message to a QP of this host
 * @qp: the requester
 * @msg: the message
 *
 * The QP that answers is the one @qp's path names: the QPN on the device
 * that owns the destination GID.
 *
 * Context: the engine: process context, no lock held.
 * Return: the responder's verdict, SHCA_TX_REMOTE when no device of this
 * host has the destination GID, or SHCA_TX_LOST when the destination QP
 * does not exist, the message is not from its peer or out of order, or a
 * port is down.
 */
static enum shca_tx shca_loop_send(struct shca_qp *qp, struct shca_msg *msg)
{
	struct shca_dev *dev = to_shca_dev(qp->ibqp.device);
	struct shca_qp *dest = NULL;
	struct shca_dev *peer;
	enum shca_tx tx;

	if (!shca_port_active(dev))
		return SHCA_TX_LOST;
	rcu_read_lock();
	peer = shca_av_peer(dev, msg->av);
	/* The QP reference keeps its device from being freed. */
	if (peer && shca_port_active(peer))
		dest = shca_qp_get(peer, msg->dest_qpn);
	rcu_read_unlock();
	/* Only tested for NULL past the read-side section. */
	if (!peer)
		return SHCA_TX_REMOTE;
	if (!dest)
		return SHCA_TX_LOST;
	if (msg->qp_type == IB_QPT_UD)
		tx = shca_resp_execute(dest, msg);
	else
		tx = shca_loop_connected(qp, dest, msg);
	shca_qp_put(dest);
	return tx;
}

const struct shca_transport shca_loop_transport = {
	.send = shca_loop_send,
};
