// SPDX-License-Identifier: GPL-2.0
/*
 * Harness self-test: two locks taken in opposite orders on two paths must
 * fail the run (lockdep: "possible circular locking dependency").  The paths
 * run one after the other, so nothing actually deadlocks: lockdep reports
 * the order it has seen, not a deadlock that happened.
 */
#include <linux/module.h>
#include <linux/mutex.h>

static DEFINE_MUTEX(selftest_a);
static DEFINE_MUTEX(selftest_b);

static void a_then_b(void)
{
	mutex_lock(&selftest_a);
	mutex_lock(&selftest_b);
	mutex_unlock(&selftest_b);
	mutex_unlock(&selftest_a);
}

static void b_then_a(void)
{
	mutex_lock(&selftest_b);
	mutex_lock(&selftest_a);
	mutex_unlock(&selftest_a);
	mutex_unlock(&selftest_b);
}

static int __init selftest_init(void)
{
	a_then_b();
	b_then_a();
	return 0;
}

static void __exit selftest_exit(void)
{
}

module_init(selftest_init);
module_exit(selftest_exit);
MODULE_DESCRIPTION("softhca harness self-test: AB-BA lock order");
MODULE_LICENSE("GPL");
