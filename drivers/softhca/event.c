// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Deferred event delivery; see event.h.  ib_core lets drivers call event
 * and completion handlers from interrupt context, but softhca's contract is
 * stronger: a consumer's handler never runs inside one of its own verbs,
 * so everything the data path raises is handed to a work item.
 */

#include "event.h"

struct workqueue_struct *shca_wq;

/*
 * WQ_HIGHPRI: completion notifications are latency-bound.  WQ_MEM_RECLAIM:
 * storage ULPs wait for completions (flushes included) under reclaim.
 */
int shca_wq_init(void)
{
	shca_wq = alloc_workqueue("softhca", WQ_HIGHPRI | WQ_MEM_RECLAIM, 0);
	return shca_wq ? 0 : -ENOMEM;
}

void shca_wq_destroy(void)
{
	destroy_workqueue(shca_wq);
}

static void shca_events_work(struct work_struct *work)
{
	struct shca_events *ev = container_of(work, struct shca_events, work);
	unsigned long pending = xchg(&ev->pending, 0);
	unsigned int type;

	for_each_set_bit(type, &pending, BITS_PER_LONG)
		ev->deliver(ev, type);
}

void shca_events_init(struct shca_events *ev,
		      void (*deliver)(struct shca_events *ev,
				      enum ib_event_type type))
{
	INIT_WORK(&ev->work, shca_events_work);
	ev->pending = 0;
	ev->deliver = deliver;
}

/* Context: any, hard-irq included. */
void shca_event_raise(struct shca_events *ev, enum ib_event_type type)
{
	set_bit(type, &ev->pending);
	queue_work(shca_wq, &ev->work);
}

/*
 * Waits for a delivery under way and drops pending events.  The caller has
 * made sure nothing raises events on @ev any more.
 *
 * Context: process context; sleeps.
 */
void shca_events_stop(struct shca_events *ev)
{
	cancel_work_sync(&ev->work);
	ev->pending = 0;
}
