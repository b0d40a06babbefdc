/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Multicast groups: the UD QPs of a device attached to each multicast
 * GID, which receive a copy of every packet sent to it.
 */
#ifndef SHCA_MCAST_H
#define SHCA_MCAST_H

#include <linux/jhash.h>
#include <rdma/ib_verbs.h>

struct shca_dev;
struct shca_qp;

/**
 * struct shca_mcg - a multicast group of one device, and its members
 * @node: in the device's table (dev->mcgs), under RCU
 * @rcu: frees a copy that a new one replaced
 * @mgid: the group's GID (an IPv6 multicast address, or an IPv4-mapped one)
 * @live: the members' count
 * @len: slots in @qpn
 * @qpn: the members' QPNs; 0 (no UD QP has it) in a slot whose QP left
 *
 * A copy is never resized: a QP that joins gets a new copy, which
 * replaces the old one in the table; one that leaves zeroes its slot.
 * Receive reads the table under rcu_read_lock(); the command queue
 * changes it.
 */
struct shca_mcg {
	struct hlist_node node;
	struct rcu_head rcu;
	union ib_gid mgid;
	u32 live;
	u32 len;
	u32 qpn[];
};

/* A group's key in its device's table. */
static inline u32 shca_mcg_key(const union ib_gid *mgid)
{
	return jhash(mgid->raw, sizeof(mgid->raw), 0);
}

/* The data path's (wqe.c). */
struct shca_mcg *shca_mcg_find(struct shca_dev *dev, const union ib_gid *mgid);

/* The verbs (mcast.c). */
int shca_attach_mcast(struct ib_qp *ibqp, union ib_gid *gid, u16 lid);
int shca_detach_mcast(struct ib_qp *ibqp, union ib_gid *gid, u16 lid);
void shca_mcast_qp_leave(struct shca_qp *qp);

#endif /* SHCA_MCAST_H */
