// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * softhca: a software RDMA HCA (RoCEv2) on any Ethernet netdev.
 *
 * Module glue: the "softhca" rdma link type, through which the
 * administrator binds a device to a netdev, and the netdev notifier that
 * keeps every device in step with its netdev (port state, removal).
 */

#include <linux/module.h>
#include <rdma/rdma_netlink.h>
#include <rdma/softhca-abi.h>

#include "dev.h"
#include "engine.h"
#include "event.h"
#include "fault.h"
#include "icrc.h"
#include "net.h"
#include "roce.h"
#include "verbs.h"

static struct rdma_link_ops shca_link_ops = {
	.type = SOFTHCA_LINK_TYPE,
	.newlink = shca_dev_add,
};

/*
 * Runs under RTNL.  Unregistration is queued: ib_core must not be waited on
 * here, and the netdev stays alive until the device drops its reference.
 */
static int shca_netdev_event(struct notifier_block *nb, unsigned long event,
			     void *ptr)
{
	struct net_device *ndev = netdev_notifier_info_to_dev(ptr);
	struct ib_device *ibdev;

	ibdev = ib_device_get_by_netdev(ndev, SOFTHCA_DRIVER_ID);
	if (!ibdev)
		return NOTIFY_DONE;

	switch (event) {
	case NETDEV_UNREGISTER:
		ib_unregister_device_queued(ibdev);
		break;
	case NETDEV_UP:
	case NETDEV_DOWN:
	case NETDEV_CHANGE:
		shca_dev_port_update(to_shca_dev(ibdev));
		break;
	}
	ib_device_put(ibdev);
	return NOTIFY_OK;
}

static struct notifier_block shca_netdev_nb = {
	.notifier_call = shca_netdev_event,
};

static int __init shca_init(void)
{
	int ret;

	ret = shca_icrc_init();
	if (ret)
		return ret;
	ret = shca_wq_init();
	if (ret)
		goto err_exit_icrc;
	ret = shca_engine_init();
	if (ret)
		goto err_destroy_wq;
	shca_roce_rx_init(shca_engine_rx);
	ret = shca_net_init(shca_roce_recv);
	if (ret)
		goto err_destroy_engine;
	ret = register_netdevice_notifier(&shca_netdev_nb);
	if (ret)
		goto err_exit_net;
	shca_fault_init();
	shca_stats_init();
	rdma_link_register(&shca_link_ops);
	return 0;

err_exit_net:
	shca_net_exit();
err_destroy_engine:
	shca_engine_destroy();
err_destroy_wq:
	shca_wq_destroy();
err_exit_icrc:
	shca_icrc_exit();
	return ret;
}

static void __exit shca_exit(void)
{
	rdma_link_unregister(&shca_link_ops);
	ib_unregister_driver(SOFTHCA_DRIVER_ID);
	unregister_netdevice_notifier(&shca_netdev_nb);
	shca_net_exit();
	shca_fault_exit();
	shca_engine_destroy();
	shca_wq_destroy();
	shca_icrc_exit();
}

module_init(shca_init);
module_exit(shca_exit);

MODULE_DESCRIPTION("softhca: software RDMA HCA (RoCEv2)");
MODULE_LICENSE("Dual BSD/GPL");
MODULE_ALIAS_RDMA_LINK(SOFTHCA_LINK_TYPE);
/* The user-space provider needs uverbs; nothing here calls into it. */
MODULE_SOFTDEP("pre: ib_uverbs");
