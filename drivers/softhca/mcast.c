// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Multicast: attach_mcast and detach_mcast on UD QPs.
 *
 * A device keeps a table of its groups, each with the QPNs attached to
 * it; RoCEv2 receive (roce_rx.c) finds a group there (shca_mcg_find(),
 * wqe.c) and hands a copy of each packet sent to it, destination QP
 * 0xFFFFFF, to every member.  The table changes on the command queue
 * only (under its exec_lock); receive reads it under RCU.
 *
 * A group with members is also the netdev's: its first member joins it
 * at the IP layer (IGMP for an IPv4-mapped GID, MLD for an IPv6 one),
 * which lets the IP stack accept its datagrams, sets the netdev's
 * multicast filter and tells the switches; the last member to leave
 * leaves it.  rdma_cm joins IPv4 groups itself too, on the netdev of the
 * address it was bound to (a VLAN above the device's, say): the IP layer
 * counts joins, so both are kept.  What a device sends to a group leaves
 * through the IP stack, whose multicast loopback brings a copy back to
 * the sender's netdev: members on the sending device receive it as they
 * would from another host, the sender's own QP included if attached.
 *
 * The limits are query_device's max_mcast_grp, max_mcast_qp_attach and
 * max_total_mcast_qp_attach.  The MGID is the group's name; the LID
 * means nothing on RoCE and is ignored, as ib_core ignores it there.
 */

#include <linux/hashtable.h>
#include <linux/igmp.h>
#include <linux/rtnetlink.h>
#include <net/addrconf.h>

#include "cmdq.h"
#include "dev.h"
#include "mcast.h"
#include "qp.h"

/* The slot of @qpn in @mcg, or -1. */
static int shca_mcg_slot(const struct shca_mcg *mcg, u32 qpn)
{
	u32 i;

	for (i = 0; i < mcg->len; i++) {
		if (mcg->qpn[i] == qpn)
			return i;
	}
	return -1;
}

/*
 * The netdev joins or leaves @mgid's group at the IP layer.  Not done
 * for a netdev whose IPv4 or IPv6 configuration is gone (it is being
 * unregistered): its memberships went with it.
 */
static int shca_mcg_ip(struct shca_dev *dev, const union ib_gid *mgid,
		       bool join)
{
	const struct in6_addr *addr = (const struct in6_addr *)mgid->raw;
	struct in_device *in_dev;
	int ret = 0;

	rtnl_lock();
	if (ipv6_addr_v4mapped(addr)) {
		in_dev = __in_dev_get_rtnl(dev->ndev);
		if (!in_dev)
			ret = -ENODEV;
		else if (join)
			ip_mc_inc_group(in_dev, addr->s6_addr32[3]);
		else
			ip_mc_dec_group(in_dev, addr->s6_addr32[3]);
	} else if (!IS_ENABLED(CONFIG_IPV6)) {
		ret = -EAFNOSUPPORT;
	} else if (join) {
		ret = ipv6_dev_mc_inc(dev->ndev, addr);
	} else {
		ret = ipv6_dev_mc_dec(dev->ndev, addr);
	}
	rtnl_unlock();
	return ret;
}

static int shca_mcg_check_attach(struct shca_dev *dev,
				 const struct shca_mcg *mcg)
{
	if (!mcg && dev->nr_mcg >= SHCA_MAX_MCAST_GRP) {
		ibdev_dbg(&dev->ibdev, "attach_mcast: %u groups already\n",
			  dev->nr_mcg);
		return -ENOMEM;
	}
	if (mcg && mcg->live >= SHCA_MAX_MCAST_QP_ATTACH) {
		ibdev_dbg(&dev->ibdev, "attach_mcast: group %pI6 has %u QPs\n",
			  mcg->mgid.raw, mcg->live);
		return -ENOMEM;
	}
	if (dev->nr_mcast_attached >= SHCA_MAX_TOTAL_MCAST_QP_ATTACH) {
		ibdev_dbg(&dev->ibdev, "attach_mcast: %u attachments already\n",
			  dev->nr_mcast_attached);
		return -ENOMEM;
	}
	return 0;
}

/*
 * A copy of @mcg (NULL: a new group) with @qpn as a member, its left
 * members' slots dropped; it replaces @mcg in the table.
 */
static int shca_mcg_add(struct shca_dev *dev, struct shca_mcg *mcg,
			const union ib_gid *mgid, u32 qpn, gfp_t gfp)
{
	u32 live = mcg ? mcg->live : 0;
	struct shca_mcg *copy;
	u32 i;
	int ret;

	copy = kzalloc(struct_size(copy, qpn, live + 1), gfp);
	if (!copy)
		return -ENOMEM;
	copy->mgid = *mgid;
	for (i = 0; mcg && i < mcg->len; i++) {
		if (mcg->qpn[i])
			copy->qpn[copy->len++] = mcg->qpn[i];
	}
	copy->qpn[copy->len++] = qpn;
	copy->live = copy->len;
	if (mcg) {
		hlist_replace_rcu(&mcg->node, &copy->node);
		kfree_rcu(mcg, rcu);
		return 0;
	}
	ret = shca_mcg_ip(dev, mgid, true);
	if (ret) {
		ibdev_dbg(&dev->ibdev, "attach_mcast: no IP membership of %pI6: %d\n",
			  mgid->raw, ret);
		kfree(copy);
		return ret;
	}
	hash_add_rcu(dev->mcgs, &copy->node, shca_mcg_key(mgid));
	dev->nr_mcg++;
	return 0;
}

/* @mcg's member in @slot leaves; the group goes with its last member. */
static void shca_mcg_remove(struct shca_dev *dev, struct shca_mcg *mcg,
			    u32 slot)
{
	WRITE_ONCE(mcg->qpn[slot], 0);
	dev->nr_mcast_attached--;
	if (--mcg->live)
		return;
	hlist_del_rcu(&mcg->node);
	dev->nr_mcg--;
	shca_mcg_ip(dev, &mcg->mgid, false);
	kfree_rcu(mcg, rcu);
}

static int shca_mcast_attach_cmd(struct shca_cmd *cmd)
{
	const union ib_gid *mgid = cmd->args.verb.attr;
	struct shca_qp *qp = cmd->obj;
	struct shca_dev *dev = to_shca_dev(qp->ibqp.device);
	struct shca_mcg *mcg;
	int ret;

	mcg = shca_mcg_find(dev, mgid);
	/* Attached already: one membership, as one detach ends it. */
	if (mcg && shca_mcg_slot(mcg, qp->ibqp.qp_num) >= 0)
		return 0;
	ret = shca_mcg_check_attach(dev, mcg);
	if (ret)
		return ret;
	ret = shca_mcg_add(dev, mcg, mgid, qp->ibqp.qp_num,
			   qp->ibqp.uobject ? GFP_KERNEL_ACCOUNT : GFP_KERNEL);
	if (ret)
		return ret;
	dev->nr_mcast_attached++;
	qp->nr_mcg++;
	return 0;
}

static int shca_mcast_detach_cmd(struct shca_cmd *cmd)
{
	const union ib_gid *mgid = cmd->args.verb.attr;
	struct shca_qp *qp = cmd->obj;
	struct shca_dev *dev = to_shca_dev(qp->ibqp.device);
	struct shca_mcg *mcg;
	int slot = -1;

	mcg = shca_mcg_find(dev, mgid);
	if (mcg)
		slot = shca_mcg_slot(mcg, qp->ibqp.qp_num);
	if (slot < 0) {
		ibdev_dbg(&dev->ibdev, "detach_mcast: QP %u is not in group %pI6\n",
			  qp->ibqp.qp_num, mgid->raw);
		return -EINVAL;
	}
	shca_mcg_remove(dev, mcg, slot);
	qp->nr_mcg--;
	return 0;
}

/**
 * shca_mcast_qp_leave() - a QP being destroyed leaves its groups
 * @qp: the QP, still published under its QPN
 *
 * ib_uverbs detaches a process's QP before destroying it, and ib_core
 * refuses to destroy a kernel QP that is still attached; a QP attached
 * through the op alone leaves here.  Receive may still hold a group's
 * old copy: the grace period ends that before the QPN may be reused.
 *
 * Context: the command queue; sleeps.
 */
void shca_mcast_qp_leave(struct shca_qp *qp)
{
	struct shca_dev *dev = to_shca_dev(qp->ibqp.device);
	struct hlist_node *next;
	struct shca_mcg *mcg;
	unsigned int bkt;
	int slot;

	if (!qp->nr_mcg)
		return;
	hash_for_each_safe(dev->mcgs, bkt, next, mcg, node) {
		slot = shca_mcg_slot(mcg, qp->ibqp.qp_num);
		if (slot >= 0)
			shca_mcg_remove(dev, mcg, slot);
	}
	qp->nr_mcg = 0;
	synchronize_rcu();
}

/*
 * What ib_core checks for its kernel callers only (ib_uverbs calls the
 * ops directly): a UD QP and a multicast GID.
 */
static int shca_mcast_check(struct ib_qp *ibqp, const union ib_gid *gid,
			    const char *verb)
{
	if (ibqp->qp_type != IB_QPT_UD) {
		ibdev_dbg(ibqp->device, "%s: QP %u is of type %d, not UD\n",
			  verb, ibqp->qp_num, ibqp->qp_type);
		return -EINVAL;
	}
	if (!rdma_is_multicast_addr((struct in6_addr *)gid->raw)) {
		ibdev_dbg(ibqp->device, "%s: %pI6 is not a multicast GID\n",
			  verb, gid->raw);
		return -EINVAL;
	}
	return 0;
}

static int shca_mcast_exec(struct ib_qp *ibqp, shca_cmd_fn fn,
			   const union ib_gid *gid, const char *verb)
{
	struct shca_cmd_verb args = { .attr = gid };
	int ret;

	ret = shca_mcast_check(ibqp, gid, verb);
	if (ret)
		return ret;
	return shca_cmd_run(ibqp->device, fn, to_shca_qp(ibqp), false, &args);
}

int shca_attach_mcast(struct ib_qp *ibqp, union ib_gid *gid, u16 lid)
{
	return shca_mcast_exec(ibqp, shca_mcast_attach_cmd, gid,
			       "attach_mcast");
}

int shca_detach_mcast(struct ib_qp *ibqp, union ib_gid *gid, u16 lid)
{
	return shca_mcast_exec(ibqp, shca_mcast_detach_cmd, gid,
			       "detach_mcast");
}
