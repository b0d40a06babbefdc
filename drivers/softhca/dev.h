/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * softhca device: one ib_device bound to one Ethernet netdev, one RoCEv2
 * port.  Created by `rdma link add`, destroyed by `rdma link delete`, by
 * the netdev going away, or by module unload.
 */
#ifndef SHCA_DEV_H
#define SHCA_DEV_H

#include <linux/hashtable.h>
#include <linux/netdevice.h>
#include <rdma/ib_verbs.h>

#include "cmdq.h"
#include "net.h"

#define SHCA_PORT 1

/*
 * The reserved lkey through which kernel consumers name any kernel
 * virtual address (IBK_LOCAL_DMA_LKEY): a software HCA "DMAs" through the
 * kernel's own mapping.  MR keys never take this value.
 */
#define SHCA_LOCAL_DMA_LKEY 0

/*
 * query_device's vendor: software HCAs have no IEEE OUI and report
 * 0xffffff (as rdma_rxe does); the part ID is "SH" in ASCII.
 */
#define SHCA_VENDOR_ID 0xffffff
#define SHCA_VENDOR_PART_ID 0x5348

/*
 * Limits advertised by query_device; objects are counted against them.
 * None is below what rdma_rxe advertises on the same kernel (an
 * integration test compares them), but for the P_Key table: RoCE knows
 * only the default P_Key.
 */
enum {
	SHCA_MAX_QP = 1 << 20,
	SHCA_MAX_QP_WR = 1 << 20,
	SHCA_MAX_SGE = 32,
	SHCA_MAX_CQ = 1 << 20,
	SHCA_MAX_CQE = (1 << 22) - 1,
	SHCA_MAX_PD = 1 << 20,
	SHCA_MAX_MR = 1 << 20,
	SHCA_MAX_SRQ = 1 << 20,
	SHCA_MAX_SRQ_WR = 1 << 20,
	SHCA_MAX_AH = 1 << 20,
	SHCA_MAX_INLINE = 256,
	SHCA_MAX_RD_ATOMIC = 128,
	SHCA_MAX_MCAST_GRP = 8192,
	SHCA_MAX_MCAST_QP_ATTACH = 64,
	SHCA_MAX_TOTAL_MCAST_QP_ATTACH = SHCA_MAX_MCAST_GRP *
					 SHCA_MAX_MCAST_QP_ATTACH,
	SHCA_GID_TBL_LEN = 1024,
	SHCA_PKEY_TBL_LEN = 1,
	SHCA_MAX_FAST_REG_PAGES = 512,
};

/* Objects counted against the limits query_device advertises. */
enum shca_res {
	SHCA_RES_PD,
	SHCA_RES_AH,
	SHCA_RES_CQ,
	SHCA_RES_QP,
	SHCA_RES_SRQ,
	SHCA_RES_MR,
	SHCA_RES_MAX
};

struct shca_dev {
	struct ib_device ibdev;
	/* Held from creation until ib_core frees the device. */
	struct net_device *ndev;
	/* Port state last reported to consumers; updated with xchg(). */
	enum ib_port_state port_state;
	struct shca_cmdq cmdq;
	atomic_t res[SHCA_RES_MAX];
	/* QPN -> struct shca_qp; QPNs 0 and 1 are the special QPs' own. */
	struct xarray qps;
	u32 next_qpn;			/* cyclic allocation cursor */
	/* AH number -> struct shca_ah; changed in any context. */
	struct xarray ahs;
	/* Key index (key >> 8) -> struct shca_mr. */
	struct xarray mrs;
	u32 next_mr;			/* cyclic allocation cursor */
	/* Multicast groups (mcast.c), changed on the command queue; RCU. */
	DECLARE_HASHTABLE(mcgs, 8);
	u32 nr_mcg;
	u32 nr_mcast_attached;		/* QPs attached, summed over groups */
	/* In the list loopback searches for a destination GID; RCU. */
	struct list_head list;
	/*
	 * The receive sockets of the netdev's namespace (shca_net_get()),
	 * held; NULL before.  Devices are loopback peers only if theirs
	 * is the same.
	 */
	struct shca_netns *netns;
	/*
	 * RC ACK timers adapt to the measured round trip (the module's
	 * adaptive_retrans when the device was made; KUnit sets it).
	 */
	bool adaptive_ack;
	/*
	 * ODP MRs: their pages are faulted in by sleeping, so the receive
	 * softirq runs no QP's engine while there is one (engine.c).
	 */
	atomic_t odp_mrs;
	atomic64_t counters[SHCA_CNT_MAX];
};

static inline struct shca_dev *to_shca_dev(struct ib_device *ibdev)
{
	return container_of(ibdev, struct shca_dev, ibdev);
}

/*
 * Whether the device has an ODP MR.  Read in the receive softirq: a run
 * there that found none ends before an ODP MR can be looked up
 * (shca_dev_odp_get()).
 */
static inline bool shca_dev_has_odp(const struct shca_dev *dev)
{
	return atomic_read(&dev->odp_mrs);
}

/*
 * What a process makes it pays for: allocations on behalf of a user
 * object are charged to the caller's memory cgroup (the command queue
 * runs its handlers as the caller's, see shca_cmd_exec()).
 */
static inline gfp_t shca_gfp(struct ib_udata *udata)
{
	return udata ? GFP_KERNEL_ACCOUNT : GFP_KERNEL;
}

int shca_dev_create(const char *name, struct net_device *ndev,
		    const struct ib_device_ops *ops);
void shca_dev_dealloc(struct ib_device *ibdev);
int shca_udata_no_request(struct ib_device *ibdev, struct ib_udata *udata,
			  const char *verb);
void shca_dev_port_update(struct shca_dev *dev);
int shca_dev_res_get(struct shca_dev *dev, enum shca_res res);
void shca_dev_res_put(struct shca_dev *dev, enum shca_res res);
void shca_dev_odp_get(struct shca_dev *dev);
void shca_dev_odp_put(struct shca_dev *dev);

int shca_query_device(struct ib_device *ibdev, struct ib_device_attr *attr,
		      struct ib_udata *udata);
int shca_query_port(struct ib_device *ibdev, u32 port,
		    struct ib_port_attr *attr);
int shca_query_pkey(struct ib_device *ibdev, u32 port, u16 index, u16 *pkey);
int shca_get_port_immutable(struct ib_device *ibdev, u32 port,
			    struct ib_port_immutable *immutable);
enum rdma_link_layer shca_get_link_layer(struct ib_device *ibdev, u32 port);
struct net_device *shca_get_netdev(struct ib_device *ibdev, u32 port);

#endif /* SHCA_DEV_H */
