// SPDX-License-Identifier: GPL-2.0
/* Harness self-test: loads and unloads without any kernel report. */
#include <linux/module.h>
#include <linux/slab.h>

static int __init selftest_init(void)
{
	void *p = kmalloc(64, GFP_KERNEL);

	/* Allocate and free properly, so kmemleak has something to look at. */
	if (!p)
		return -ENOMEM;
	kfree(p);
	return 0;
}

static void __exit selftest_exit(void)
{
}

module_init(selftest_init);
module_exit(selftest_exit);
MODULE_DESCRIPTION("softhca harness self-test: a clean module");
MODULE_LICENSE("GPL");
