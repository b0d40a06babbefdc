/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The ib_device_ops front end: the table ib_core calls, and the verbs that
 * belong to no other object.
 */
#ifndef SHCA_VERBS_H
#define SHCA_VERBS_H

#include <rdma/ib_verbs.h>

int shca_dev_add(const char *name, struct net_device *ndev);

#endif /* SHCA_VERBS_H */
