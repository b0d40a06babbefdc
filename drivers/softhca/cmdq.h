/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The command queue: every control verb runs here, one at a time per
 * device, in submission order, on an ordered workqueue.
 *
 * Three layers, as an HCA's admin queue would have them:
 *  - the transport (cmdq.c): submit, wait with a timeout, a health state
 *    that fails fast once the queue is broken, one map from the queue's
 *    own failures to errnos, and the slots reserved for atomic callers;
 *  - typed commands (one shca_cmd_*() wrapper per verb, next to the
 *    object it acts on), which fill a struct shca_cmd and submit it;
 *  - the verbs (verbs.c), which only call the wrappers.
 *
 * A command's handler returns 0 or a negative errno itself: unlike a
 * hardware queue there is no device status to translate, because handler
 * and driver are the same code.
 */
#ifndef SHCA_CMDQ_H
#define SHCA_CMDQ_H

#include <linux/completion.h>
#include <linux/workqueue.h>
#include <rdma/ib_verbs.h>
#include <rdma/softhca.h>

struct shca_dev;
struct shca_cmd;
struct mem_cgroup;

typedef int (*shca_cmd_fn)(struct shca_cmd *cmd);

/* Arguments of the commands that can be queued from atomic context. */
struct shca_cmd_create_ah {
	struct ib_pd *pd;
	struct rdma_ah_attr attr;
	struct ib_ah *ah;
	softhca_ah_done_t done;
};

struct shca_cmd_modify_qp {
	struct ib_qp_attr attr;
	int mask;
};

/* A synchronous verb's arguments, on its caller's stack. */
struct shca_cmd_verb {
	const void *attr;
	int mask;
	struct ib_udata *udata;
	void *out;
};

struct shca_cmd_reg_mr {
	u32 key;
	int access;
};

/**
 * struct shca_cmd - one command
 * @work: queued on the device's ordered workqueue
 * @cmdq: the queue it was submitted to
 * @fn: the handler
 * @must_run: runs even on a broken queue (destroy and dereg: ib_core's
 *	teardown cannot fail)
 * @slot: a reserved slot (asynchronous), not a caller's stack command
 * @status: the handler's result
 * @done: completed when a synchronous command ran
 * @async_done: a slot's callback, or NULL
 * @notify: calls a slot's callback of another type than softhca_done_t
 * @ctx: the callback's argument
 * @slot_entry: on the free list while the slot is unused
 * @obj: the object a simple command acts on
 * @memcg: a synchronous command's caller's memory cgroup, active while
 *	the handler runs, so that it charges its caller; NULL for a slot
 * @args: a queued command's arguments, copied from the caller
 * @queued: when it was submitted (ktime_get_ns()), for its trace event
 */
struct shca_cmd {
	struct work_struct work;
	struct shca_cmdq *cmdq;
	shca_cmd_fn fn;
	bool must_run;
	bool slot;
	int status;
	struct completion done;
	softhca_done_t async_done;
	void (*notify)(struct shca_cmd *cmd);
	void *ctx;
	struct list_head slot_entry;
	void *obj;
	struct mem_cgroup *memcg;
	union {
		struct shca_cmd_verb verb;
		struct shca_cmd_create_ah create_ah;
		struct shca_cmd_modify_qp modify_qp;
		struct shca_cmd_reg_mr reg_mr;
	} args;
	u64 queued;
};

enum shca_cmdq_state {
	SHCA_CMDQ_RUNNING,
	/* A command did not start within the timeout: fail fast from now. */
	SHCA_CMDQ_BROKEN,
};

/* Command slots reserved per device for softhca_async_*(). */
#define SHCA_CMDQ_SLOTS 256

struct shca_cmdq {
	struct workqueue_struct *wq;
	enum shca_cmdq_state state;
	unsigned long timeout;		/* jiffies a command may wait to start */
	/*
	 * Serialises handlers: the worker's, and those a broken queue runs
	 * in their callers' context.
	 */
	struct mutex exec_lock;
	struct task_struct *running;	/* runs a handler, under exec_lock */
	/* The worker, while it runs a command's work: handler and callback. */
	struct task_struct *worker;
	spinlock_t slot_lock;		/* protects free_slots */
	struct list_head free_slots;
	struct shca_cmd *slots;
};

int shca_cmdq_init(struct shca_cmdq *q, const char *name);
void shca_cmdq_destroy(struct shca_cmdq *q);
int shca_cmd_exec(struct shca_cmdq *q, struct shca_cmd *cmd);
int shca_cmd_run(struct ib_device *ibdev, shca_cmd_fn fn, void *obj,
		 bool must_run, const struct shca_cmd_verb *args);

struct shca_cmd *shca_cmd_slot_get(struct ib_device *ibdev, shca_cmd_fn fn,
				   softhca_done_t done, void *ctx);
void shca_cmd_slot_submit(struct shca_cmd *cmd);
int shca_cmd_queue(struct ib_device *ibdev, shca_cmd_fn fn, void *obj,
		   softhca_done_t done, void *ctx);

#endif /* SHCA_CMDQ_H */
