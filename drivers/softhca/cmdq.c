// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Command queue transport; the layering is described in cmdq.h.
 *
 * Synchronous commands (ib_core's verbs) live on the caller's stack and
 * are waited for.  Commands queued from atomic context use slots reserved
 * when the device was created, so that queuing never allocates.  Both kinds
 * run on one ordered workqueue per device, under exec_lock.
 *
 * A handler may itself issue a verb (an asynchronous destroy_qp calls
 * ib_destroy_qp(), which lands in destroy_qp), and a callback may issue
 * one: on the worker such a nested command runs inline, since queuing it
 * behind the running command would wait forever.
 */

#include <kunit/visibility.h>
#include <linux/memcontrol.h>
#include <linux/sched/mm.h>
#include <linux/slab.h>
#include <rdma/softhca-abi.h>

#include "cmdq.h"
#include "dev.h"
#include "trace.h"

/* A command that has not started after this long means a stuck queue. */
#define SHCA_CMD_TIMEOUT (60 * HZ)

/*
 * Whether the caller is @q's worker, running a command or its callback.
 * Not through current_work(): a caller's work item may be one its own
 * function freed before it issued the verb (nvmet-rdma's queue release
 * does), which the workqueue allows and which must not be read.
 */
static bool shca_cmdq_on_worker(struct shca_cmdq *q)
{
	return READ_ONCE(q->worker) == current;
}

static int shca_cmd_run_locked(struct shca_cmdq *q, struct shca_cmd *cmd)
{
	struct mem_cgroup *old = NULL;
	u64 start;
	int status;

	mutex_lock(&q->exec_lock);
	WRITE_ONCE(q->running, current);
	/* A nested command has none: it runs as the one it is nested in. */
	if (cmd->memcg)
		old = set_active_memcg(cmd->memcg);
	start = ktime_get_ns();
	status = cmd->fn(cmd);
	trace_softhca_cmd(&container_of(q, struct shca_dev, cmdq)->ibdev,
			  cmd->fn, start - cmd->queued,
			  ktime_get_ns() - start, status);
	if (cmd->memcg)
		set_active_memcg(old);
	WRITE_ONCE(q->running, NULL);
	mutex_unlock(&q->exec_lock);
	return status;
}

static void shca_cmd_slot_put(struct shca_cmd *cmd)
{
	struct shca_cmdq *q = cmd->cmdq;
	unsigned long flags;

	spin_lock_irqsave(&q->slot_lock, flags);
	list_add(&cmd->slot_entry, &q->free_slots);
	spin_unlock_irqrestore(&q->slot_lock, flags);
}

static void shca_cmd_work(struct work_struct *work)
{
	struct shca_cmd *cmd = container_of(work, struct shca_cmd, work);
	struct shca_cmdq *q = cmd->cmdq;

	WRITE_ONCE(q->worker, current);
	cmd->status = shca_cmd_run_locked(q, cmd);
	if (!cmd->slot) {
		WRITE_ONCE(q->worker, NULL);
		/* The waiter's stack, where @cmd lives, may go now. */
		complete(&cmd->done);
		return;
	}
	/* Outside exec_lock: a callback may issue verbs of its own. */
	if (cmd->notify)
		cmd->notify(cmd);
	else if (cmd->async_done)
		cmd->async_done(cmd->ctx, cmd->status);
	shca_cmd_slot_put(cmd);
	WRITE_ONCE(q->worker, NULL);
}

static void shca_cmdq_break(struct shca_cmdq *q)
{
	if (xchg(&q->state, SHCA_CMDQ_BROKEN) == SHCA_CMDQ_BROKEN)
		return;
	ibdev_err(&container_of(q, struct shca_dev, cmdq)->ibdev,
		  "command queue stalled; failing further commands\n");
}

static int shca_cmd_wait(struct shca_cmdq *q, struct shca_cmd *cmd)
{
	if (wait_for_completion_timeout(&cmd->done, q->timeout))
		return cmd->status;
	if (cancel_work(&cmd->work)) {
		shca_cmdq_break(q);
		return cmd->must_run ? shca_cmd_run_locked(q, cmd) : -ETIMEDOUT;
	}
	/* It started: handlers are bounded, let it finish. */
	wait_for_completion(&cmd->done);
	return cmd->status;
}

/**
 * shca_cmd_exec() - run a command on the device's queue and wait for it
 * @q: the device's command queue
 * @cmd: the command, with @fn and its arguments set; may be on the stack
 *
 * A command that has not started within the queue's timeout breaks the
 * queue: it fails with -ETIMEDOUT, and every later command fails at once
 * with -EIO, but for must-run commands (destroy, dereg), which then run in
 * the caller's context.  The handler runs as a member of the caller's
 * memory cgroup: what it allocates with __GFP_ACCOUNT for a user object
 * is charged to the process that asked for it, not to the worker.
 *
 * Context: process context; sleeps.
 * Return: the handler's result, or -ETIMEDOUT / -EIO as above.
 */
int shca_cmd_exec(struct shca_cmdq *q, struct shca_cmd *cmd)
{
	int status;

	might_sleep();
	cmd->queued = ktime_get_ns();
	if (READ_ONCE(q->running) == current)
		return cmd->fn(cmd);
	if (shca_cmdq_on_worker(q))
		return shca_cmd_run_locked(q, cmd);
	if (READ_ONCE(q->state) == SHCA_CMDQ_BROKEN)
		return cmd->must_run ? shca_cmd_run_locked(q, cmd) : -EIO;

	cmd->cmdq = q;
	cmd->slot = false;
	cmd->memcg = get_mem_cgroup_from_mm(current->mm);
	init_completion(&cmd->done);
	INIT_WORK_ONSTACK(&cmd->work, shca_cmd_work);
	queue_work(q->wq, &cmd->work);

	status = shca_cmd_wait(q, cmd);
	destroy_work_on_stack(&cmd->work);
	mem_cgroup_put(cmd->memcg);
	return status;
}
EXPORT_SYMBOL_IF_KUNIT(shca_cmd_exec);

/**
 * shca_cmd_run() - run a verb's command on its device's queue
 * @ibdev: the device
 * @fn: the command's handler
 * @obj: the object it acts on
 * @must_run: it runs even on a broken queue (destroy)
 * @args: the verb's arguments, or NULL
 *
 * Context: process context; sleeps.
 * Return: as shca_cmd_exec().
 */
int shca_cmd_run(struct ib_device *ibdev, shca_cmd_fn fn, void *obj,
		 bool must_run, const struct shca_cmd_verb *args)
{
	struct shca_cmd cmd = {
		.fn = fn,
		.obj = obj,
		.must_run = must_run,
	};

	if (args)
		cmd.args.verb = *args;
	return shca_cmd_exec(&to_shca_dev(ibdev)->cmdq, &cmd);
}

/**
 * shca_cmd_slot_get() - reserve a command slot for an asynchronous verb
 * @ibdev: the device the verb is for
 * @fn: the handler
 * @done: called with the handler's result once it ran, or NULL
 * @ctx: @done's argument
 *
 * Context: any, hard-irq included.
 * Return: the slot, to fill in and pass to shca_cmd_slot_submit(), or
 * ERR_PTR(-EOPNOTSUPP) for a device that is not softhca's, -EIO on a broken
 * queue, -EBUSY when every slot is in use.
 */
struct shca_cmd *shca_cmd_slot_get(struct ib_device *ibdev, shca_cmd_fn fn,
				   softhca_done_t done, void *ctx)
{
	struct shca_cmdq *q;
	struct shca_cmd *cmd;
	unsigned long flags;

	if (ibdev->ops.driver_id != SOFTHCA_DRIVER_ID)
		return ERR_PTR(-EOPNOTSUPP);
	q = &to_shca_dev(ibdev)->cmdq;
	if (READ_ONCE(q->state) == SHCA_CMDQ_BROKEN)
		return ERR_PTR(-EIO);

	spin_lock_irqsave(&q->slot_lock, flags);
	cmd = list_first_entry_or_null(&q->free_slots, struct shca_cmd,
				       slot_entry);
	if (cmd)
		list_del(&cmd->slot_entry);
	spin_unlock_irqrestore(&q->slot_lock, flags);
	if (!cmd) {
		ibdev_dbg_ratelimited(ibdev, "async command: all %d slots busy\n",
				      SHCA_CMDQ_SLOTS);
		return ERR_PTR(-EBUSY);
	}

	cmd->fn = fn;
	cmd->async_done = done;
	cmd->notify = NULL;
	cmd->ctx = ctx;
	cmd->obj = NULL;
	return cmd;
}
EXPORT_SYMBOL_IF_KUNIT(shca_cmd_slot_get);

/* Context: any, hard-irq included. */
void shca_cmd_slot_submit(struct shca_cmd *cmd)
{
	cmd->queued = ktime_get_ns();
	queue_work(cmd->cmdq->wq, &cmd->work);
}
EXPORT_SYMBOL_IF_KUNIT(shca_cmd_slot_submit);

/**
 * shca_cmd_queue() - queue an asynchronous command that takes one object
 * @ibdev: the device
 * @fn: the handler, which finds @obj in cmd->obj
 * @obj: the object
 * @done: called with the handler's result, or NULL
 * @ctx: @done's argument
 *
 * Context: any, hard-irq included.
 * Return: as shca_cmd_slot_get(), 0 once queued.
 */
int shca_cmd_queue(struct ib_device *ibdev, shca_cmd_fn fn, void *obj,
		   softhca_done_t done, void *ctx)
{
	struct shca_cmd *cmd = shca_cmd_slot_get(ibdev, fn, done, ctx);

	if (IS_ERR(cmd))
		return PTR_ERR(cmd);
	cmd->obj = obj;
	shca_cmd_slot_submit(cmd);
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(shca_cmd_queue);

int shca_cmdq_init(struct shca_cmdq *q, const char *name)
{
	int i;

	q->slots = kvcalloc(SHCA_CMDQ_SLOTS, sizeof(*q->slots), GFP_KERNEL);
	if (!q->slots)
		return -ENOMEM;
	/*
	 * WQ_MEM_RECLAIM: storage ULPs (NVMe-oF, NFS/RDMA) tear QPs down
	 * while reclaiming memory; a rescuer keeps the queue moving then.
	 */
	q->wq = alloc_ordered_workqueue("softhca_cmdq/%s", WQ_MEM_RECLAIM,
					name);
	if (!q->wq)
		goto err_free_slots;

	q->state = SHCA_CMDQ_RUNNING;
	q->timeout = SHCA_CMD_TIMEOUT;
	mutex_init(&q->exec_lock);
	spin_lock_init(&q->slot_lock);
	INIT_LIST_HEAD(&q->free_slots);
	for (i = 0; i < SHCA_CMDQ_SLOTS; i++) {
		q->slots[i].cmdq = q;
		q->slots[i].slot = true;
		INIT_WORK(&q->slots[i].work, shca_cmd_work);
		list_add_tail(&q->slots[i].slot_entry, &q->free_slots);
	}
	return 0;

err_free_slots:
	kvfree(q->slots);
	q->slots = NULL;
	return -ENOMEM;
}

/*
 * Runs every command still queued (their callbacks included), then frees
 * the queue.  Safe on a queue whose init failed or never ran.
 */
void shca_cmdq_destroy(struct shca_cmdq *q)
{
	if (q->wq)
		destroy_workqueue(q->wq);
	kvfree(q->slots);
}
