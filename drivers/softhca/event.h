/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Deferred delivery of a QP's, CQ's or SRQ's asynchronous events and of
 * CQ completion notifications.  Raising an event is safe in any context
 * and never calls the consumer: its handler runs later on softhca's
 * workqueue, outside every softhca lock.
 */
#ifndef SHCA_EVENT_H
#define SHCA_EVENT_H

#include <linux/workqueue.h>
#include <rdma/ib_verbs.h>

/* Runs notifications, events and flushes; exists while the module does. */
extern struct workqueue_struct *shca_wq;

int shca_wq_init(void);
void shca_wq_destroy(void);

/*
 * One object's pending events, a bit per enum ib_event_type: an event
 * raised again before delivery is delivered once.
 */
struct shca_events {
	struct work_struct work;
	unsigned long pending;
	void (*deliver)(struct shca_events *ev, enum ib_event_type type);
};

void shca_events_init(struct shca_events *ev,
		      void (*deliver)(struct shca_events *ev,
				      enum ib_event_type type));
void shca_event_raise(struct shca_events *ev, enum ib_event_type type);
void shca_events_stop(struct shca_events *ev);

#endif /* SHCA_EVENT_H */
