// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The fault point; see fault.h. */

#include <kunit/visibility.h>

#include "fault.h"

/* Off until configured: probability 0. */
struct fault_attr shca_fault_attr = FAULT_ATTR_INITIALIZER;
EXPORT_SYMBOL_IF_KUNIT(shca_fault_attr);

static struct dentry *shca_fault_dir;

/* Without debugfs the fault point is still there, for KUnit. */
void shca_fault_init(void)
{
	shca_fault_dir = fault_create_debugfs_attr("softhca_fail", NULL,
						   &shca_fault_attr);
}

void shca_fault_exit(void)
{
	debugfs_remove_recursive(shca_fault_dir);
}
