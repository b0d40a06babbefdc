/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * softhca's fault point, for testing error paths: on a kernel with
 * CONFIG_FAULT_INJECTION every allocation an object's creation makes
 * (softhca's own, and the table slots it reserves) first asks
 * shca_fault().  It is configured like the kernel's other fault points
 * (Documentation/fault-injection/fault-injection.rst), through
 * /sys/kernel/debug/softhca_fail/ or, from KUnit, shca_fault_attr.
 * Unlike failslab with fail_nth it also reaches allocations made on the
 * command queue's worker.
 */
#ifndef SHCA_FAULT_H
#define SHCA_FAULT_H

#include <linux/fault-inject.h>

#ifdef CONFIG_FAULT_INJECTION
extern struct fault_attr shca_fault_attr;

static inline bool shca_fault(void)
{
	return should_fail(&shca_fault_attr, 1);
}

void shca_fault_init(void);
void shca_fault_exit(void);
#else
static inline bool shca_fault(void)
{
	return false;
}

static inline void shca_fault_init(void)
{
}

static inline void shca_fault_exit(void)
{
}
#endif

#endif /* SHCA_FAULT_H */
