// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Device lifetime and attributes.
 *
 * Port attributes are derived from the bound netdev each time they are
 * asked for, so MTU, carrier and link speed changes show up without softhca
 * mirroring them.  The one piece of port state kept is the state last
 * reported in an event, so that each netdev transition yields exactly one
 * IB_EVENT_PORT_ACTIVE or IB_EVENT_PORT_ERR.
 */

#include <kunit/visibility.h>
#include <linux/cpumask.h>
#include <linux/if_arp.h>
#include <net/addrconf.h>
#include <rdma/ib_addr.h>
#include <rdma/ib_cache.h>
#include <rdma/ib_mad.h>
#include <rdma/softhca-abi.h>

#include "dev.h"
#include "transport.h"

static enum ib_port_state shca_netdev_port_state(struct net_device *ndev)
{
	if (netif_running(ndev) && netif_carrier_ok(ndev))
		return IB_PORT_ACTIVE;
	return IB_PORT_DOWN;
}

/*
 * On-demand paging MRs (explicit ones only): every opcode of every QP
 * type, whichever side's MR pages on demand (mem.c).
 */
static const struct ib_odp_caps shca_odp_caps = {
	.general_caps = IB_ODP_SUPPORT,
	.per_transport_caps = {
		.rc_odp_caps = IB_ODP_SUPPORT_SEND | IB_ODP_SUPPORT_RECV |
			       IB_ODP_SUPPORT_WRITE | IB_ODP_SUPPORT_READ |
			       IB_ODP_SUPPORT_ATOMIC | IB_ODP_SUPPORT_SRQ_RECV,
		.uc_odp_caps = IB_ODP_SUPPORT_SEND | IB_ODP_SUPPORT_RECV |
			       IB_ODP_SUPPORT_WRITE | IB_ODP_SUPPORT_SRQ_RECV,
		.ud_odp_caps = IB_ODP_SUPPORT_SEND | IB_ODP_SUPPORT_RECV |
			       IB_ODP_SUPPORT_SRQ_RECV,
	},
};

int shca_query_device(struct ib_device *ibdev, struct ib_device_attr *attr,
		      struct ib_udata *udata)
{
	int ret = shca_udata_no_request(ibdev, udata, "query_device");

	if (ret)
		return ret;

	*attr = (struct ib_device_attr){
		.vendor_id = SHCA_VENDOR_ID,
		.vendor_part_id = SHCA_VENDOR_PART_ID,
		.sys_image_guid = ibdev->node_guid,
		.max_mr_size = U64_MAX,
		.page_size_cap = GENMASK_ULL(63, PAGE_SHIFT),
		.max_qp = SHCA_MAX_QP,
		.max_qp_wr = SHCA_MAX_QP_WR,
		.device_cap_flags = IB_DEVICE_PORT_ACTIVE_EVENT |
				    IB_DEVICE_RC_RNR_NAK_GEN |
				    IB_DEVICE_SYS_IMAGE_GUID |
				    IB_DEVICE_MEM_MGT_EXTENSIONS |
				    IB_DEVICE_MEM_WINDOW |
				    IB_DEVICE_MEM_WINDOW_TYPE_2B |
				    SHCA_DEVICE_ATOMIC_WRITE |
				    SHCA_DEVICE_FLUSH_GLOBAL,
		.kernel_cap_flags = IBK_ALLOW_USER_UNREG | IBK_LOCAL_DMA_LKEY |
				    (IS_ENABLED(CONFIG_INFINIBAND_ON_DEMAND_PAGING) ?
				     IBK_ON_DEMAND_PAGING : 0),
		.max_send_sge = SHCA_MAX_SGE,
		.max_recv_sge = SHCA_MAX_SGE,
		.max_sge_rd = SHCA_MAX_SGE,
		.max_cq = SHCA_MAX_CQ,
		.max_cqe = SHCA_MAX_CQE,
		.max_mr = SHCA_MAX_MR,
		.max_mw = SHCA_MAX_MR,
		.max_pd = SHCA_MAX_PD,
		.max_qp_rd_atom = SHCA_MAX_RD_ATOMIC,
		.max_qp_init_rd_atom = SHCA_MAX_RD_ATOMIC,
		.max_res_rd_atom = SHCA_MAX_QP * SHCA_MAX_RD_ATOMIC,
		.atomic_cap = IB_ATOMIC_HCA,
		.max_srq = SHCA_MAX_SRQ,
		.max_srq_wr = SHCA_MAX_SRQ_WR,
		.max_srq_sge = SHCA_MAX_SGE,
		.max_fast_reg_page_list_len = SHCA_MAX_FAST_REG_PAGES,
		.max_pkeys = SHCA_PKEY_TBL_LEN,
		.local_ca_ack_delay = 15,
		.max_ah = SHCA_MAX_AH,
		.max_mcast_grp = SHCA_MAX_MCAST_GRP,
		.max_mcast_qp_attach = SHCA_MAX_MCAST_QP_ATTACH,
		.max_total_mcast_qp_attach = SHCA_MAX_TOTAL_MCAST_QP_ATTACH,
	};
	if (IS_ENABLED(CONFIG_INFINIBAND_ON_DEMAND_PAGING))
		attr->odp_caps = shca_odp_caps;
	return 0;
}

int shca_query_port(struct ib_device *ibdev, u32 port,
		    struct ib_port_attr *attr)
{
	struct net_device *ndev = to_shca_dev(ibdev)->ndev;

	/* ib_core zeroed *attr; only non-zero attributes are set here. */
	attr->state = shca_netdev_port_state(ndev);
	attr->phys_state = attr->state == IB_PORT_ACTIVE ?
			   IB_PORT_PHYS_STATE_LINK_UP :
			   IB_PORT_PHYS_STATE_DISABLED;
	attr->max_mtu = IB_MTU_4096;
	attr->active_mtu = shca_active_mtu(ndev);
	attr->gid_tbl_len = SHCA_GID_TBL_LEN;
	attr->port_cap_flags = IB_PORT_CM_SUP;
	attr->max_msg_sz = SZ_2G;
	attr->pkey_tbl_len = SHCA_PKEY_TBL_LEN;
	attr->max_vl_num = 1;
	attr->ip_gids = true;

	/*
	 * ib_core forgets the netdev as it unregisters, before the queued
	 * device unregistration has run; the port is down by then and any
	 * speed will do.
	 */
	if (ib_get_eth_speed(ibdev, port, &attr->active_speed,
			     &attr->active_width)) {
		attr->active_speed = IB_SPEED_SDR;
		attr->active_width = IB_WIDTH_1X;
	}
	return 0;
}

int shca_query_pkey(struct ib_device *ibdev, u32 port, u16 index, u16 *pkey)
{
	if (index >= SHCA_PKEY_TBL_LEN)
		return -EINVAL;
	*pkey = IB_DEFAULT_PKEY_FULL;
	return 0;
}

int shca_get_port_immutable(struct ib_device *ibdev, u32 port,
			    struct ib_port_immutable *immutable)
{
	immutable->pkey_tbl_len = SHCA_PKEY_TBL_LEN;
	immutable->gid_tbl_len = SHCA_GID_TBL_LEN;
	immutable->core_cap_flags = RDMA_CORE_PORT_IBA_ROCE_UDP_ENCAP;
	immutable->max_mad_size = IB_MGMT_MAD_SIZE;
	return 0;
}

enum rdma_link_layer shca_get_link_layer(struct ib_device *ibdev, u32 port)
{
	return IB_LINK_LAYER_ETHERNET;
}

/*
 * ops.get_netdev.  ib_device_set_netdev() serves ib_core, but SMC and, on
 * 6.1, ksmbd call the op itself.  As ib_core's own lookup does, an
 * unregistering netdev is not handed out.
 */
struct net_device *shca_get_netdev(struct ib_device *ibdev, u32 port)
{
	struct net_device *ndev = to_shca_dev(ibdev)->ndev;

	if (READ_ONCE(ndev->reg_state) != NETREG_REGISTERED)
		return NULL;
	dev_hold(ndev);
	return ndev;
}

/*
 * Report a port transition to consumers.  Called from the netdev notifier
 * and once after registration (a transition may have happened in between);
 * xchg() makes concurrent callers agree on who reports a change.
 */
void shca_dev_port_update(struct shca_dev *dev)
{
	enum ib_port_state state = shca_netdev_port_state(dev->ndev);
	struct ib_event event = {
		.device = &dev->ibdev,
		.element.port_num = SHCA_PORT,
	};

	if (xchg(&dev->port_state, state) == state)
		return;
	event.event = state == IB_PORT_ACTIVE ? IB_EVENT_PORT_ACTIVE :
						IB_EVENT_PORT_ERR;
	ibdev_dbg(&dev->ibdev, "port %s\n",
		  state == IB_PORT_ACTIVE ? "active" : "down");
	ib_dispatch_event(&event);
}

static const struct {
	const char *name;
	int max;
} shca_res_limits[SHCA_RES_MAX] = {
	[SHCA_RES_PD] = { "PD", SHCA_MAX_PD },
	[SHCA_RES_AH] = { "AH", SHCA_MAX_AH },
	[SHCA_RES_CQ] = { "CQ", SHCA_MAX_CQ },
	[SHCA_RES_QP] = { "QP", SHCA_MAX_QP },
	[SHCA_RES_SRQ] = { "SRQ", SHCA_MAX_SRQ },
	[SHCA_RES_MR] = { "MR", SHCA_MAX_MR },
};

/**
 * shca_dev_res_get() - count one more object against its device limit
 * @dev: the device
 * @res: the kind of object
 *
 * Context: any; does not sleep.
 * Return: 0, or -ENOMEM when the device already has as many as it
 * advertises in query_device.
 */
int shca_dev_res_get(struct shca_dev *dev, enum shca_res res)
{
	if (atomic_inc_return(&dev->res[res]) <= shca_res_limits[res].max)
		return 0;
	atomic_dec(&dev->res[res]);
	ibdev_dbg(&dev->ibdev, "%s limit (%d) reached\n",
		  shca_res_limits[res].name, shca_res_limits[res].max);
	return -ENOMEM;
}

void shca_dev_res_put(struct shca_dev *dev, enum shca_res res)
{
	atomic_dec(&dev->res[res]);
}

/**
 * shca_dev_odp_get() - count an ODP MR of the device, before it is found
 * @dev: the device
 *
 * The first waits for the receive softirq's runs that started while the
 * device had none (an RCU read-side section each, with bottom halves
 * off): from here on, none starts, and none looks the MR up.
 *
 * Context: process context; sleeps.
 */
void shca_dev_odp_get(struct shca_dev *dev)
{
	if (atomic_inc_return(&dev->odp_mrs) == 1)
		synchronize_rcu();
}
EXPORT_SYMBOL_IF_KUNIT(shca_dev_odp_get);

/**
 * shca_dev_odp_put() - an ODP MR of the device is gone
 * @dev: the device
 *
 * Context: any.
 */
void shca_dev_odp_put(struct shca_dev *dev)
{
	atomic_dec(&dev->odp_mrs);
}
EXPORT_SYMBOL_IF_KUNIT(shca_dev_odp_put);

/*
 * An RC requester's ACK timer waits as long as the QP's path takes to
 * answer, the QP's local ACK timeout at most (engine.c); off, it waits
 * that timeout each time, as a requester without a measure must.
 */
static bool adaptive_retrans = true;
module_param(adaptive_retrans, bool, 0644);
MODULE_PARM_DESC(adaptive_retrans,
		 "RC ACK timer from the measured round trip, the QP's local ACK timeout its bound (default: on); for devices created after a change");

static void shca_dev_init(struct shca_dev *dev, struct net_device *ndev,
			  const struct ib_device_ops *ops)
{
	struct ib_device *ibdev = &dev->ibdev;

	dev->ndev = ndev;
	dev->adaptive_ack = READ_ONCE(adaptive_retrans);
	dev->port_state = shca_netdev_port_state(ndev);
	INIT_LIST_HEAD(&dev->list);
	xa_init_flags(&dev->qps, XA_FLAGS_ALLOC | XA_FLAGS_LOCK_IRQ);
	xa_init_flags(&dev->mrs, XA_FLAGS_ALLOC | XA_FLAGS_LOCK_IRQ);
	xa_init_flags(&dev->ahs, XA_FLAGS_ALLOC1 | XA_FLAGS_LOCK_IRQ);
	hash_init(dev->mcgs);
	ibdev->node_type = RDMA_NODE_IB_CA;
	ibdev->phys_port_cnt = 1;
	ibdev->num_comp_vectors = num_online_cpus();
	ibdev->local_dma_lkey = SHCA_LOCAL_DMA_LKEY;
	strscpy(ibdev->node_desc, "softhca", sizeof(ibdev->node_desc));
	addrconf_addr_eui48((u8 *)&ibdev->node_guid, ndev->dev_addr);
	/*
	 * Write commands ib_core leaves off: a user QP's doorbells (an empty
	 * post_send or post_recv) and arming a CQ.  Not poll_cq: the provider
	 * polls the ring itself.
	 */
	ibdev->uverbs_cmd_mask |= BIT_ULL(IB_USER_VERBS_CMD_POST_SEND) |
				  BIT_ULL(IB_USER_VERBS_CMD_POST_RECV) |
				  BIT_ULL(IB_USER_VERBS_CMD_REQ_NOTIFY_CQ);
	ib_set_device_ops(ibdev, ops);
}

/**
 * shca_udata_no_request() - check a verb that defines no driver request
 * @ibdev: the device
 * @udata: the verb's udata, or NULL for a kernel caller
 * @verb: the verb's name, for the debug message
 *
 * A newer provider may send a longer request than this driver knows; that
 * is fine as long as every byte of it is zero.
 *
 * Return: 0, or -EINVAL when the request carries a non-zero byte.
 */
int shca_udata_no_request(struct ib_device *ibdev, struct ib_udata *udata,
			  const char *verb)
{
	if (!udata || !udata->inlen ||
	    ib_is_udata_cleared(udata, 0, udata->inlen))
		return 0;
	ibdev_dbg(ibdev, "%s: non-zero driver request\n", verb);
	return -EINVAL;
}
EXPORT_SYMBOL_IF_KUNIT(shca_udata_no_request);

/**
 * shca_dev_create() - create and register a softhca device on a netdev
 * @name: ib_device name, e.g. "softhca0"
 * @ndev: the Ethernet netdev the device sends and receives through
 * @ops: the verbs' table (verbs.c), which ib_core calls
 *
 * Context: process context, may sleep.  Not under RTNL: registration
 * takes it.
 * Return: 0, or -EINVAL for a netdev that is not Ethernet, -EEXIST when
 * the netdev already has a softhca device, or an ib_core error.
 */
int shca_dev_create(const char *name, struct net_device *ndev,
		    const struct ib_device_ops *ops)
{
	struct ib_device *other;
	struct shca_dev *dev;
	int ret;

	if (ndev->type != ARPHRD_ETHER) {
		netdev_dbg(ndev, "softhca: not an Ethernet device\n");
		return -EINVAL;
	}
	other = ib_device_get_by_netdev(ndev, SOFTHCA_DRIVER_ID);
	if (other) {
		ib_device_put(other);
		return -EEXIST;
	}

	dev = ib_alloc_device(shca_dev, ibdev);
	if (!dev)
		return -ENOMEM;
	/*
	 * From here on ib_dealloc_device() undoes what was done, through
	 * dealloc_driver: the netdev reference, the command queue and the
	 * UDP port.
	 */
	dev_hold(ndev);
	shca_dev_init(dev, ndev, ops);

	ret = shca_cmdq_init(&dev->cmdq, name);
	if (ret)
		goto err_dealloc_device;
	ret = shca_net_get(dev);
	if (ret)
		goto err_dealloc_device;
	ret = ib_device_set_netdev(&dev->ibdev, ndev, SHCA_PORT);
	if (ret)
		goto err_dealloc_device;
	ret = ib_register_device(&dev->ibdev, name, NULL);
	if (ret)
		goto err_dealloc_device;

	shca_loop_dev_add(dev);
	shca_dev_port_update(dev);
	return 0;

err_dealloc_device:
	ib_dealloc_device(&dev->ibdev);
	return ret;
}

/*
 * ops.dealloc_driver: ib_core is done with the device (unregistered, or
 * never registered) and frees it after this returns.
 */
void shca_dev_dealloc(struct ib_device *ibdev)
{
	struct shca_dev *dev = to_shca_dev(ibdev);

	shca_loop_dev_del(dev);
	shca_cmdq_destroy(&dev->cmdq);
	if (dev->netns)
		shca_net_put(dev);
	/* ib_core destroyed every QP and MR before this. */
	WARN_ON_ONCE(!xa_empty(&dev->qps) || !xa_empty(&dev->mrs) ||
		     !xa_empty(&dev->ahs) || dev->nr_mcg);
	xa_destroy(&dev->qps);
	xa_destroy(&dev->mrs);
	xa_destroy(&dev->ahs);
	dev_put(dev->ndev);
}
