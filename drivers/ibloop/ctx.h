/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The state of one ibloop run, shared by its setup and teardown (run.c)
 * and its data path (traffic.c).
 */
#ifndef IBLOOP_CTX_H
#define IBLOOP_CTX_H

#include <linux/hrtimer.h>
#include <linux/kfifo.h>
#include <linux/spinlock.h>
#include <linux/wait.h>
#include <rdma/ib_verbs.h>

#include "ibloop.h"

#define IBLOOP_PORT	1
#define IBLOOP_BATCH	16		/* work completions per ib_poll_cq() */

enum { IBLOOP_INI, IBLOOP_TGT, IBLOOP_SIDES };
enum { IBLOOP_SRC, IBLOOP_DST, IBLOOP_BUFS };

/**
 * struct ibloop_buf - one message slot of a buffer
 * @va: its kernel address
 * @dma: its address for the device (ib_dma_map_single())
 */
struct ibloop_buf {
	void *va;
	u64 dma;
};

struct ibloop_ctx;
struct ibloop_side;

/**
 * struct ibloop_cqe - a work request's ib_cqe, on ib_core's CQs
 * @cqe: what the WR carries; its done callback is ibloop's
 * @side: whose queue the WR is on
 * @wr_id: what the WR would carry on ibloop's own CQs: slot and queue
 */
struct ibloop_cqe {
	struct ib_cqe cqe;
	struct ibloop_side *side;
	u64 wr_id;
};

/**
 * struct ibloop_side - one QP of the pair and what belongs to it
 * @ctx: the run
 * @dev: its device, held (both sides may have the same)
 * @port: port 1's attributes
 * @sgid: the GID the QP sends from, held
 * @dmac: its MAC address (RoCE): where the other side sends to
 * @pd: its PD, whose DMA lkey and global rkey its buffers are reached by
 * @cq: its CQ, for both its send and receive queues
 * @done: on ib_core's CQs, the completions its poller handed over, each
 *	with its @wr_id, for the service loop: at most one per WR posted
 * @qp: the QP
 * @buf: its source and destination buffers, of cfg->depth slots each
 * @sq_out: send work requests posted and not yet completed
 * @rq_out: receive work requests posted and not yet completed
 */
struct ibloop_side {
	struct ibloop_ctx *ctx;
	struct ib_device *dev;
	struct ib_port_attr port;
	const struct ib_gid_attr *sgid;
	u8 dmac[ETH_ALEN];
	struct ib_pd *pd;
	struct ib_cq *cq;
	DECLARE_KFIFO_PTR(done, struct ib_wc);
	struct ib_qp *qp;
	struct ibloop_buf *buf[IBLOOP_BUFS];
	u32 sq_out;
	u32 rq_out;
};

/**
 * struct ibloop_msg - the message in one slot
 * @iter: its iteration
 * @cqes: completions still to come before it is done
 * @bad: a completion said something other than what was sent
 */
struct ibloop_msg {
	u32 iter;
	u8 cqes;
	bool bad;
};

/**
 * struct ibloop_ctx - one run
 * @cfg: what to run
 * @res: the results, written by the service loop's owner
 * @rd_atom: RDMA reads in flight per QP
 * @side: initiator and target
 * @flags: the service loop's lock bit and work (traffic.c)
 * @timer: runs the service loop for context=hardirq and softirq
 * @irqsoff: held, with IRQs off, by the service loop for context=irqsoff
 * @stopping: teardown began: handlers keep off the queues
 * @done: the traffic ended; @res->status says how
 * @removed: the device is being unregistered: the run ends (-ENODEV)
 * @posted: messages posted so far
 * @polled: completions seen so far, the measure of progress
 * @t0: when the first message was posted (ns)
 * @t1: when the traffic ended (ns)
 * @wq: where the run thread waits
 * @handler_depth: completion handler calls running now
 * @max_handler_depth: the most seen at once
 * @wc: the service loop owner's work completions
 * @cqe: on ib_core's CQs, the WRs' ib_cqes: cfg->depth sends, then as
 *	many receives
 * @msg: the messages in flight, cfg->depth slots
 */
struct ibloop_ctx {
	const struct ibloop_cfg *cfg;
	struct ibloop_result *res;
	u8 rd_atom;
	struct ibloop_side side[IBLOOP_SIDES];
	unsigned long flags;
	struct hrtimer timer;
	spinlock_t irqsoff;	/* taken by the loop's owner only */
	bool stopping;
	bool done;
	bool removed;
	u32 posted;
	unsigned long polled;
	u64 t0;
	u64 t1;
	wait_queue_head_t wq;
	atomic_t handler_depth;
	atomic_t max_handler_depth;
	struct ib_wc wc[IBLOOP_BATCH];
	struct ibloop_cqe *cqe;
	struct ibloop_msg msg[];
};

void ibloop_init_context(struct ibloop_ctx *ctx);
int ibloop_alloc_cqes(struct ibloop_ctx *ctx);
void ibloop_free_cqes(struct ibloop_ctx *ctx);
void ibloop_comp(struct ib_cq *cq, void *cq_context);
void ibloop_keep_off(struct ibloop_ctx *ctx);
int ibloop_traffic(struct ibloop_ctx *ctx);

#endif
