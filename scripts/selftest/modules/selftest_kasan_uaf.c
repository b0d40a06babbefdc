// SPDX-License-Identifier: GPL-2.0
/*
 * Harness self-test: reading freed memory must fail the run ("BUG: KASAN:
 * use-after-free").  The module is built with KASAN instrumentation like any
 * module of a KASAN kernel.
 */
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/compiler.h>

static int __init selftest_init(void)
{
	char *p = kmalloc(32, GFP_KERNEL);

	if (!p)
		return -ENOMEM;
	kfree(p);
	/* Keep the compiler from proving the read pointless or dropping it. */
	OPTIMIZER_HIDE_VAR(p);
	pr_info("selftest_kasan_uaf: read %d\n", READ_ONCE(p[8]));
	return 0;
}

static void __exit selftest_exit(void)
{
}

module_init(selftest_init);
module_exit(selftest_exit);
MODULE_DESCRIPTION("softhca harness self-test: use after free");
MODULE_LICENSE("GPL");
