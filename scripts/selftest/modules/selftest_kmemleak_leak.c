// SPDX-License-Identifier: GPL-2.0
/*
 * Harness self-test: memory nobody points to any more must fail the run
 * (kmemleak: "unreferenced object").  kmemleak looks for pointers anywhere
 * in memory, so the only one is overwritten, not just left behind.
 */
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/string.h>

static void *selftest_ptr;

static int __init selftest_init(void)
{
	selftest_ptr = kmalloc(128, GFP_KERNEL);
	if (!selftest_ptr)
		return -ENOMEM;
	/* A recognisable hex dump in the report; barrier() keeps the fill. */
	memset(selftest_ptr, 0x5a, 128);
	barrier();
	WRITE_ONCE(selftest_ptr, NULL);
	return 0;
}

static void __exit selftest_exit(void)
{
}

module_init(selftest_init);
module_exit(selftest_exit);
MODULE_DESCRIPTION("softhca harness self-test: memory leak");
MODULE_LICENSE("GPL");
