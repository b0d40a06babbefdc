// SPDX-License-Identifier: GPL-2.0
/*
 * Harness self-test: sleeping with a spinlock held and interrupts off must
 * fail the run (CONFIG_DEBUG_ATOMIC_SLEEP: "BUG: sleeping function called
 * from invalid context").  In 6.1 msleep() has no might_sleep() of its own,
 * so the kernel would only notice once it schedules ("BUG: scheduling while
 * atomic"); the explicit might_sleep(), which every sleeping primitive
 * (mutex_lock, GFP_KERNEL allocations, ...) has, makes the atomic-sleep
 * checker itself report it.
 */
#include <linux/module.h>
#include <linux/spinlock.h>
#include <linux/delay.h>

static DEFINE_SPINLOCK(selftest_lock);

static int __init selftest_init(void)
{
	unsigned long flags;

	spin_lock_irqsave(&selftest_lock, flags);
	might_sleep();
	msleep(1);
	spin_unlock_irqrestore(&selftest_lock, flags);
	return 0;
}

static void __exit selftest_exit(void)
{
}

module_init(selftest_init);
module_exit(selftest_exit);
MODULE_DESCRIPTION("softhca harness self-test: sleep in atomic context");
MODULE_LICENSE("GPL");
