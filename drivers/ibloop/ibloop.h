/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * ibloop: an in-kernel loopback client of ib_core's exported verbs.  ctl.c
 * is the debugfs front end, run.c one run on a device; this is what they
 * share.
 */
#ifndef IBLOOP_H
#define IBLOOP_H

#include <rdma/ib_verbs.h>

enum ibloop_op {
	IBLOOP_OP_SEND,
	IBLOOP_OP_WRITE,
	IBLOOP_OP_READ,
	IBLOOP_OP_WRITE_IMM,
	IBLOOP_OP_MEMCPY,	/* no device: memcpy, the limit of a WRITE */
};

/*
 * How completions are handled: ibloop's own handler on a CQ of
 * ib_create_cq(), or busy polling of such a CQ by the run thread; or one
 * of the CQs ib_core gives ULPs, whose poller calls each work request's
 * ib_cqe: ib_alloc_cq() in each poll context (the run thread polls a
 * DIRECT one through ib_process_cq_direct()), or a shared CQ of the
 * device's pool (ib_cq_pool_get(), softirq-polled, as NVMe-oF's queues).
 */
enum ibloop_mode {
	IBLOOP_MODE_HANDLER,
	IBLOOP_MODE_POLL,
	IBLOOP_MODE_DIRECT,
	IBLOOP_MODE_SOFTIRQ,
	IBLOOP_MODE_WORKQUEUE,
	IBLOOP_MODE_UNBOUND,
	IBLOOP_MODE_POOL,
};

/*
 * Where every ib_post_send(), ib_post_recv(), ib_req_notify_cq() and
 * ib_poll_cq() of the run is issued from (traffic.c): the thread or
 * handler that has the work, a hard-irq or a softirq hrtimer callback, or
 * the thread or handler under a spinlock with IRQs off.
 */
enum ibloop_context {
	IBLOOP_CONTEXT_TASK,
	IBLOOP_CONTEXT_HARDIRQ,
	IBLOOP_CONTEXT_SOFTIRQ,
	IBLOOP_CONTEXT_IRQSOFF,
};

/**
 * struct ibloop_cfg - what one run does, parsed from a control line
 * @dev: name of the RDMA device, the initiator's
 * @peer: name of the target's device, or "" for @dev's own loopback
 * @op: the operation each message is
 * @size: bytes per message
 * @iters: messages in the run
 * @depth: messages in flight
 * @mode: how completions are handled
 * @context: the context the verbs of the data path are called from
 * @gid: source GID index on port 1 of @dev (and of @peer when that is
 *	@dev), or -1 to pick one
 */
struct ibloop_cfg {
	char dev[IB_DEVICE_NAME_MAX];
	char peer[IB_DEVICE_NAME_MAX];
	enum ibloop_op op;
	u32 size;
	u32 iters;
	u32 depth;
	enum ibloop_mode mode;
	enum ibloop_context context;
	int gid;
};

/**
 * struct ibloop_result - what one run did
 * @completed: messages whose every completion arrived
 * @ns: time from the first post to the end of the run
 * @mismatches: completed messages whose data or metadata was wrong
 * @errors: completions with a status other than IB_WC_SUCCESS
 * @ctx_violations: data path verbs called from another context than the
 *	one asked for
 * @max_handler_depth: most completion handler calls seen running at once
 * @status: 0 or a negative errno, as the control write returns it
 */
struct ibloop_result {
	u64 completed;
	u64 ns;
	u64 mismatches;
	u64 errors;
	u64 ctx_violations;
	int max_handler_depth;
	int status;
};

/* Completions come through ib_core's CQ poller and ib_cqe callbacks. */
static inline bool ibloop_core_cq(const struct ibloop_cfg *cfg)
{
	return cfg->mode >= IBLOOP_MODE_DIRECT;
}

/* The run thread polls: busy polling, or a DIRECT CQ. */
static inline bool ibloop_thread_polls(const struct ibloop_cfg *cfg)
{
	return cfg->mode == IBLOOP_MODE_POLL || cfg->mode == IBLOOP_MODE_DIRECT;
}

/* The target's device: the peer, or the initiator's own. */
static inline const char *ibloop_peer(const struct ibloop_cfg *cfg)
{
	return cfg->peer[0] ? cfg->peer : cfg->dev;
}

extern struct ib_client ibloop_client;

int ibloop_run(const struct ibloop_cfg *cfg, struct ibloop_result *res);
int ibloop_memcpy(const struct ibloop_cfg *cfg, struct ibloop_result *res);

#endif
