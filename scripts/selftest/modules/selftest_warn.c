// SPDX-License-Identifier: GPL-2.0
/* Harness self-test: a WARN_ON must fail the run ("WARNING: CPU: ..."). */
#include <linux/module.h>
#include <linux/bug.h>

static int __init selftest_init(void)
{
	WARN_ON(1);
	return 0;
}

static void __exit selftest_exit(void)
{
}

module_init(selftest_init);
module_exit(selftest_exit);
MODULE_DESCRIPTION("softhca harness self-test: WARN_ON");
MODULE_LICENSE("GPL");
