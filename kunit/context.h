/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Run a function in the execution contexts the softhca contract names:
 * hard-irq (an hrtimer in hard mode), softirq (a timer), and task context
 * with a spinlock held and interrupts off.  Used as a KUnit parameter.
 */
#ifndef SHCA_KUNIT_CONTEXT_H
#define SHCA_KUNIT_CONTEXT_H

#include <kunit/test.h>

enum shca_context {
	SHCA_CTX_HARDIRQ,
	SHCA_CTX_SOFTIRQ,
	SHCA_CTX_IRQS_OFF,
};

extern const enum shca_context shca_contexts[3];
void shca_context_desc(const enum shca_context *ctx, char *desc);

/*
 * Run fn(arg) once in @ctx and wait for it; fails the test if it did not
 * run in that context.
 */
void shca_run_in(struct kunit *test, enum shca_context ctx,
		 void (*fn)(void *arg), void *arg);

#endif /* SHCA_KUNIT_CONTEXT_H */
