// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* See context.h. */

#include <linux/completion.h>
#include <linux/hrtimer.h>
#include <linux/spinlock.h>
#include <linux/timer.h>

#include "context.h"

const enum shca_context shca_contexts[3] = {
	SHCA_CTX_HARDIRQ, SHCA_CTX_SOFTIRQ, SHCA_CTX_IRQS_OFF,
};

void shca_context_desc(const enum shca_context *ctx, char *desc)
{
	static const char * const names[] = {
		[SHCA_CTX_HARDIRQ] = "hardirq",
		[SHCA_CTX_SOFTIRQ] = "softirq",
		[SHCA_CTX_IRQS_OFF] = "spinlock irqs off",
	};

	strscpy(desc, names[*ctx], KUNIT_PARAM_DESC_SIZE);
}

struct shca_ctx_run {
	void (*fn)(void *arg);
	void *arg;
	bool right_context;
	struct completion done;
	struct hrtimer hrtimer;
	struct timer_list timer;
};

static enum hrtimer_restart shca_ctx_hrtimer(struct hrtimer *hrtimer)
{
	struct shca_ctx_run *run = container_of(hrtimer, struct shca_ctx_run,
						hrtimer);

	run->right_context = in_hardirq();
	run->fn(run->arg);
	complete(&run->done);
	return HRTIMER_NORESTART;
}

static void shca_ctx_timer(struct timer_list *timer)
{
	struct shca_ctx_run *run = from_timer(run, timer, timer);

	run->right_context = in_serving_softirq();
	run->fn(run->arg);
	complete(&run->done);
}

void shca_run_in(struct kunit *test, enum shca_context ctx,
		 void (*fn)(void *arg), void *arg)
{
	static DEFINE_SPINLOCK(lock);
	struct shca_ctx_run run = { .fn = fn, .arg = arg };
	unsigned long flags;

	init_completion(&run.done);
	switch (ctx) {
	case SHCA_CTX_HARDIRQ:
		hrtimer_init_on_stack(&run.hrtimer, CLOCK_MONOTONIC,
				      HRTIMER_MODE_REL_HARD);
		run.hrtimer.function = shca_ctx_hrtimer;
		hrtimer_start(&run.hrtimer, ns_to_ktime(1000),
			      HRTIMER_MODE_REL_HARD);
		wait_for_completion(&run.done);
		hrtimer_cancel(&run.hrtimer);
		destroy_hrtimer_on_stack(&run.hrtimer);
		break;
	case SHCA_CTX_SOFTIRQ:
		timer_setup_on_stack(&run.timer, shca_ctx_timer, 0);
		mod_timer(&run.timer, jiffies + 1);
		wait_for_completion(&run.done);
		del_timer_sync(&run.timer);
		destroy_timer_on_stack(&run.timer);
		break;
	case SHCA_CTX_IRQS_OFF:
		spin_lock_irqsave(&lock, flags);
		run.right_context = irqs_disabled() && !preemptible();
		fn(arg);
		spin_unlock_irqrestore(&lock, flags);
		break;
	}
	KUNIT_EXPECT_TRUE_MSG(test, run.right_context,
			      "did not run in the intended context");
}
