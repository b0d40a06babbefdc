// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The data path of an ibloop run: cfg->iters messages go from the
 * initiator's QP to the target's, cfg->depth at a time.
 *
 * Message i uses slot i % depth of every buffer.  It is done when all the
 * completions it causes arrived (a send or write with immediate completes
 * at both ends); only then is its destination checked and message
 * i + depth posted into the slot.  RC completes in order on each queue, so
 * slots free up in order and receives are consumed in the order posted.
 *
 * Completions are handled by whoever owns the service loop (see
 * ibloop_service()): a completion handler, in mode=handler, or the run
 * thread, which busy-polls in mode=poll.  On ib_core's CQs (the other
 * modes) ib_core's poller calls each WR's ib_cqe, whose callback hands
 * the completion over to the loop through the side's @done ring and
 * kicks it, as a handler would; the run thread polls a DIRECT CQ.
 *
 * cfg->context says where that loop, and so every post, poll and arm of
 * the run, executes: in whoever has the work (task: the run thread or the
 * handler), in that caller under a spinlock with IRQs off (irqsoff), or
 * in a hard-irq or softirq hrtimer callback (hardirq, softirq) that whoever
 * has the work starts, handlers included.  Each of those verbs first
 * checks that it runs where it should, and counts it if not.
 */
#include <linux/bitops.h>
#include <linux/delay.h>
#include <linux/hardirq.h>
#include <linux/irqflags.h>
#include <linux/ktime.h>
#include <linux/sched/signal.h>

#include "ctx.h"

#define IBLOOP_STALL	(10 * HZ)	/* no completion for this long: give up */
#define IBLOOP_BUDGET	64		/* completions per pass of the loop */
#define IBLOOP_TIMER_NS	1000		/* from a kick to the timer's pass */
/*
 * From the end of a timer pass to the next, when work came in meanwhile:
 * long enough that the hrtimer interrupt does not find the timer expired
 * again before it returns (it would run it again, and after three rounds
 * take itself for hung), even under emulation.
 */
#define IBLOOP_REARM_NS	(50 * NSEC_PER_USEC)

/*
 * Bits of ibloop_ctx.flags.  BUSY is the service loop's lock (see
 * ibloop_service()); the others are work for its owner.
 */
enum {
	IBLOOP_BUSY,
	IBLOOP_START,		/* post the first window of messages */
	IBLOOP_POLL,		/* + side: poll that side's CQ */
	IBLOOP_KICK = IBLOOP_POLL + IBLOOP_SIDES, /* run thread: poll */
	IBLOOP_TIMER,		/* the timer is queued or running */
};

#define IBLOOP_POLL_ALL	(BIT(IBLOOP_POLL + IBLOOP_INI) | \
			 BIT(IBLOOP_POLL + IBLOOP_TGT))

static const enum ib_wr_opcode ibloop_opcode[] = {
	[IBLOOP_OP_SEND] = IB_WR_SEND,
	[IBLOOP_OP_WRITE] = IB_WR_RDMA_WRITE,
	[IBLOOP_OP_READ] = IB_WR_RDMA_READ,
	[IBLOOP_OP_WRITE_IMM] = IB_WR_RDMA_WRITE_WITH_IMM,
};

static bool ibloop_has_recv(const struct ibloop_cfg *cfg)
{
	return cfg->op == IBLOOP_OP_SEND || cfg->op == IBLOOP_OP_WRITE_IMM;
}

/*
 * The sides message data comes from and goes to (reads pull from the
 * target), and their buffers' slots.
 */
static struct ibloop_side *ibloop_src_side(struct ibloop_ctx *ctx)
{
	bool read = ctx->cfg->op == IBLOOP_OP_READ;

	return &ctx->side[read ? IBLOOP_TGT : IBLOOP_INI];
}

static struct ibloop_side *ibloop_dst_side(struct ibloop_ctx *ctx)
{
	bool read = ctx->cfg->op == IBLOOP_OP_READ;

	return &ctx->side[read ? IBLOOP_INI : IBLOOP_TGT];
}

static struct ibloop_buf *ibloop_src(struct ibloop_ctx *ctx, u32 slot)
{
	return &ibloop_src_side(ctx)->buf[IBLOOP_SRC][slot];
}

static struct ibloop_buf *ibloop_dst(struct ibloop_ctx *ctx, u32 slot)
{
	return &ibloop_dst_side(ctx)->buf[IBLOOP_DST][slot];
}

/*
 * The pattern of message @iter: each 4-byte group holds the bytes of a
 * seed that differs for every iteration (odd multiplier: a bijection on
 * u32), plus the group's index, so that a stale or misplaced group, and
 * every message still in the slot from an earlier round, is detected.
 */
static u8 ibloop_byte(u32 seed, size_t i)
{
	return (u8)(seed >> ((i & 3) * 8)) + (u8)(i >> 2);
}

static u32 ibloop_seed(u32 iter)
{
	return (iter + 1) * 0x9e3779b1;
}

static void ibloop_fill(u8 *p, u32 size, u32 iter)
{
	u32 seed = ibloop_seed(iter);
	size_t i;

	for (i = 0; i < size; i++)
		p[i] = ibloop_byte(seed, i);
}

static bool ibloop_same(const u8 *p, u32 size, u32 iter)
{
	u32 seed = ibloop_seed(iter);
	size_t i;

	for (i = 0; i < size; i++)
		if (p[i] != ibloop_byte(seed, i))
			return false;
	return true;
}

/* Ends the run, once; the first reason wins. */
static void ibloop_finish(struct ibloop_ctx *ctx, int status)
{
	if (ctx->done)
		return;
	ctx->res->status = status;
	ctx->t1 = ktime_get_ns();
	WRITE_ONCE(ctx->done, true);
	wake_up(&ctx->wq);
}

/* Counts a verb called from another context than the one asked for. */
static void ibloop_check_context(struct ibloop_ctx *ctx)
{
	bool ok;

	switch (ctx->cfg->context) {
	case IBLOOP_CONTEXT_HARDIRQ:
		ok = in_hardirq();
		break;
	case IBLOOP_CONTEXT_SOFTIRQ:
		ok = in_serving_softirq() && !in_hardirq();
		break;
	case IBLOOP_CONTEXT_IRQSOFF:
		ok = irqs_disabled();
		break;
	default:
		ok = true;
	}
	if (!ok)
		ctx->res->ctx_violations++;
}

static u64 ibloop_wr_id(u32 slot, bool recv)
{
	return (u64)recv << 32 | slot;
}

static int ibloop_post_recv(struct ibloop_ctx *ctx, u32 slot)
{
	struct ibloop_side *tgt = &ctx->side[IBLOOP_TGT];
	struct ib_sge sge = {
		.addr = tgt->buf[IBLOOP_DST][slot].dma,
		.length = ctx->cfg->size,
		.lkey = tgt->pd->local_dma_lkey,
	};
	struct ib_recv_wr wr = {
		.wr_id = ibloop_wr_id(slot, true),
		.sg_list = &sge,
		/* A write with immediate consumes a receive, not its buffer. */
		.num_sge = ctx->cfg->op == IBLOOP_OP_SEND,
	};
	int ret;

	if (ctx->cqe)
		wr.wr_cqe = &ctx->cqe[ctx->cfg->depth + slot].cqe;
	ibloop_check_context(ctx);
	ret = ib_post_recv(tgt->qp, &wr, NULL);
	if (!ret)
		tgt->rq_out++;
	return ret;
}

static int ibloop_post_send(struct ibloop_ctx *ctx, u32 slot, u32 iter)
{
	struct ibloop_side *ini = &ctx->side[IBLOOP_INI];
	struct ibloop_side *tgt = &ctx->side[IBLOOP_TGT];
	bool read = ctx->cfg->op == IBLOOP_OP_READ;
	struct ib_sge sge = {
		.addr = (read ? ibloop_dst(ctx, slot) : ibloop_src(ctx, slot))->dma,
		.length = ctx->cfg->size,
		.lkey = ini->pd->local_dma_lkey,
	};
	struct ib_rdma_wr wr = {
		.wr = {
			.wr_id = ibloop_wr_id(slot, false),
			.sg_list = &sge,
			.num_sge = 1,
			.opcode = ibloop_opcode[ctx->cfg->op],
			.send_flags = IB_SEND_SIGNALED,
		},
		/* Ignored by a send; the target PD's global rkey otherwise. */
		.remote_addr = (read ? ibloop_src(ctx, slot) :
				ibloop_dst(ctx, slot))->dma,
		.rkey = tgt->pd->unsafe_global_rkey,
	};
	int ret;

	if (ctx->cfg->op == IBLOOP_OP_WRITE_IMM)
		wr.wr.ex.imm_data = cpu_to_be32(iter);
	if (ctx->cqe)
		wr.wr.wr_cqe = &ctx->cqe[slot].cqe;
	ibloop_check_context(ctx);
	ret = ib_post_send(ini->qp, &wr.wr, NULL);
	if (!ret)
		ini->sq_out++;
	return ret;
}

/* Posts message @iter: its receive first, so the send never meets RNR. */
static int ibloop_post_msg(struct ibloop_ctx *ctx, u32 iter)
{
	u32 slot = iter % ctx->cfg->depth;
	struct ibloop_msg *msg = &ctx->msg[slot];
	struct ibloop_buf *src = ibloop_src(ctx, slot);
	int ret;

	/* Slots free up in order, unless the device broke RC's ordering. */
	if (msg->cqes)
		return -EPROTO;
	msg->iter = iter;
	msg->bad = false;
	msg->cqes = 1 + ibloop_has_recv(ctx->cfg);
	if (ibloop_has_recv(ctx->cfg)) {
		ret = ibloop_post_recv(ctx, slot);
		if (ret)
			return ret;
	}
	ibloop_fill(src->va, ctx->cfg->size, iter);
	ib_dma_sync_single_for_device(ibloop_src_side(ctx)->dev, src->dma,
				      ctx->cfg->size, DMA_BIDIRECTIONAL);
	return ibloop_post_send(ctx, slot, iter);
}

static void ibloop_post_next(struct ibloop_ctx *ctx)
{
	int ret;

	if (ctx->posted >= ctx->cfg->iters || READ_ONCE(ctx->stopping))
		return;
	ret = ibloop_post_msg(ctx, ctx->posted);
	if (ret) {
		ibdev_dbg(ctx->side[IBLOOP_INI].dev, "ibloop: post failed: %d\n",
			  ret);
		ibloop_finish(ctx, ret);
		return;
	}
	ctx->posted++;
}

static void ibloop_post_window(struct ibloop_ctx *ctx)
{
	u32 i;

	for (i = 0; i < ctx->cfg->depth && !ctx->done; i++)
		ibloop_post_next(ctx);
}

/* Every completion of message @slot arrived: check it, reuse the slot. */
static void ibloop_msg_done(struct ibloop_ctx *ctx, u32 slot)
{
	struct ibloop_msg *msg = &ctx->msg[slot];
	struct ib_device *dev = ibloop_dst_side(ctx)->dev;
	struct ibloop_buf *dst = ibloop_dst(ctx, slot);
	u32 size = ctx->cfg->size;

	ib_dma_sync_single_for_cpu(dev, dst->dma, size, DMA_BIDIRECTIONAL);
	if (msg->bad || !ibloop_same(dst->va, size, msg->iter))
		ctx->res->mismatches++;
	ib_dma_sync_single_for_device(dev, dst->dma, size, DMA_BIDIRECTIONAL);
	if (++ctx->res->completed == ctx->cfg->iters)
		ibloop_finish(ctx, 0);
	else
		ibloop_post_next(ctx);
}

/* What a receive completion says must match what was sent. */
static bool ibloop_recv_ok(struct ibloop_ctx *ctx, const struct ib_wc *wc,
			   u32 iter)
{
	if (ctx->cfg->op == IBLOOP_OP_SEND)
		return wc->byte_len == ctx->cfg->size;
	return (wc->wc_flags & IB_WC_WITH_IMM) &&
		wc->ex.imm_data == cpu_to_be32(iter);
}

static void ibloop_wc(struct ibloop_side *side, const struct ib_wc *wc)
{
	struct ibloop_ctx *ctx = side->ctx;
	bool recv = upper_32_bits(wc->wr_id);
	u32 slot = lower_32_bits(wc->wr_id);
	struct ibloop_msg *msg;

	if (recv)
		side->rq_out--;
	else
		side->sq_out--;
	WRITE_ONCE(ctx->polled, ctx->polled + 1);
	if (ctx->done)		/* flushed at teardown, or after an error */
		return;
	if (slot >= ctx->cfg->depth) {	/* not a wr_id of ours */
		ibloop_finish(ctx, -EPROTO);
		return;
	}
	msg = &ctx->msg[slot];
	if (wc->status != IB_WC_SUCCESS) {
		ibdev_info_ratelimited(side->dev,
				       "ibloop: %s completion of message %u: %s\n",
				       recv ? "receive" : "send", msg->iter,
				       ib_wc_status_msg(wc->status));
		ctx->res->errors++;
		ibloop_finish(ctx, -EIO);
		return;
	}
	if (recv && !ibloop_recv_ok(ctx, wc, msg->iter))
		msg->bad = true;
	if (!--msg->cqes)
		ibloop_msg_done(ctx, slot);
}

/*
 * On ib_core's CQs: the completions its poller handed over, after having
 * it poll a DIRECT CQ here.
 */
static int ibloop_take(struct ibloop_side *side, int budget)
{
	struct ibloop_ctx *ctx = side->ctx;
	int total = 0;

	if (ctx->cfg->mode == IBLOOP_MODE_DIRECT)
		ib_process_cq_direct(side->cq, budget);
	while (total < budget && kfifo_get(&side->done, &ctx->wc[0])) {
		ibloop_wc(side, &ctx->wc[0]);
		total++;
	}
	return total;
}

/* Polls up to @budget completions; returns how many, or a negative errno. */
static int ibloop_poll(struct ibloop_side *side, int budget)
{
	struct ibloop_ctx *ctx = side->ctx;
	int n, i, total = 0;

	if (ctx->cqe)
		return ibloop_take(side, budget);
	while (total < budget) {
		ibloop_check_context(ctx);
		n = ib_poll_cq(side->cq, min(budget - total, IBLOOP_BATCH),
			       ctx->wc);
		if (n <= 0)
			return n < 0 ? n : total;
		for (i = 0; i < n; i++)
			ibloop_wc(side, &ctx->wc[i]);
		total += n;
	}
	return total;
}

/*
 * The standard poll, arm, re-poll loop: arming with
 * IB_CQ_REPORT_MISSED_EVENTS says whether completions slipped in between
 * the last empty poll and the arm, which no handler call would announce.
 * A pass that spends its budget hands the rest to the run thread instead
 * of keeping a softirq (or, on rxe of 6.5+, a CQ lock) busy; so does one
 * on ib_core's CQs, whose poller has nothing more to kick the loop with.
 * Only ibloop's own handler arms.
 */
static void ibloop_drain(struct ibloop_side *side)
{
	struct ibloop_ctx *ctx = side->ctx;
	bool handler = ctx->cfg->mode == IBLOOP_MODE_HANDLER;
	int budget = IBLOOP_BUDGET, n;

	for (;;) {
		n = ibloop_poll(side, budget);
		if (n < 0) {
			ibloop_finish(ctx, n);
			return;
		}
		budget -= n;
		if (ibloop_thread_polls(ctx->cfg) || ctx->done ||
		    READ_ONCE(ctx->stopping))
			return;
		if (!budget) {
			set_bit(IBLOOP_KICK, &ctx->flags);
			wake_up(&ctx->wq);
			return;
		}
		if (!handler)
			return;
		ibloop_check_context(ctx);
		n = ib_req_notify_cq(side->cq, IB_CQ_NEXT_COMP |
				     IB_CQ_REPORT_MISSED_EVENTS);
		if (n <= 0) {
			if (n < 0)
				ibloop_finish(ctx, n);
			return;
		}
	}
}

static void ibloop_serve_work(struct ibloop_ctx *ctx)
{
	int i;

	if (test_and_clear_bit(IBLOOP_START, &ctx->flags))
		ibloop_post_window(ctx);
	for (i = 0; i < IBLOOP_SIDES; i++)
		if (test_and_clear_bit(IBLOOP_POLL + i, &ctx->flags))
			ibloop_drain(&ctx->side[i]);
}

/*
 * The owner of the service loop does the work the flags ask for; for
 * context=irqsoff under a spinlock with IRQs off.  Only the owner takes
 * it, so nobody ever waits for it.
 */
static void ibloop_serve(struct ibloop_ctx *ctx)
{
	unsigned long flags;

	if (ctx->cfg->context != IBLOOP_CONTEXT_IRQSOFF) {
		ibloop_serve_work(ctx);
		return;
	}
	spin_lock_irqsave(&ctx->irqsoff, flags);
	ibloop_serve_work(ctx);
	spin_unlock_irqrestore(&ctx->irqsoff, flags);
}

/* context=hardirq and softirq: the loop runs in the timer's callback. */
static bool ibloop_deferred(struct ibloop_ctx *ctx)
{
	return ctx->cfg->context == IBLOOP_CONTEXT_HARDIRQ ||
	       ctx->cfg->context == IBLOOP_CONTEXT_SOFTIRQ;
}

static enum hrtimer_mode ibloop_timer_mode(struct ibloop_ctx *ctx)
{
	return ctx->cfg->context == IBLOOP_CONTEXT_HARDIRQ ?
	       HRTIMER_MODE_REL_HARD : HRTIMER_MODE_REL_SOFT;
}

/* Has the timer run the loop in @ns, unless it is queued or running. */
static void ibloop_defer(struct ibloop_ctx *ctx, u64 ns)
{
	if (!test_and_set_bit(IBLOOP_TIMER, &ctx->flags))
		hrtimer_start(&ctx->timer, ns_to_ktime(ns),
			      ibloop_timer_mode(ctx));
}

static bool ibloop_try_own(struct ibloop_ctx *ctx)
{
	return !test_and_set_bit_lock(IBLOOP_BUSY, &ctx->flags);
}

static bool ibloop_work_pending(struct ibloop_ctx *ctx)
{
	return READ_ONCE(ctx->flags) & (BIT(IBLOOP_START) | IBLOOP_POLL_ALL);
}

/*
 * Gives up the service loop, unless work came in that nobody else took:
 * that work is done here, or, for a timer context, by the timer.
 */
static void ibloop_unown(struct ibloop_ctx *ctx)
{
	for (;;) {
		clear_bit_unlock(IBLOOP_BUSY, &ctx->flags);
		/* Pairs with the barrier in ibloop_kick(): see ibloop_service. */
		smp_mb__after_atomic();
		if (!ibloop_work_pending(ctx))
			return;
		if (ibloop_deferred(ctx)) {
			ibloop_defer(ctx, IBLOOP_TIMER_NS);
			return;
		}
		if (!ibloop_try_own(ctx))
			return;
		ibloop_serve(ctx);
	}
}

/**
 * ibloop_service() - run the service loop, unless someone already does
 * @ctx: the run
 *
 * Handlers may be called concurrently on several CPUs, or from inside a
 * post that the loop itself makes (siw flushes inline), and the run thread
 * joins in.  A spinlock would have to disable interrupts (handlers may run
 * in hard-irq context) and then rxe of 6.1, which runs its requester inline
 * in post_send under spin_lock_bh(), would be posted to with IRQs off.  So
 * the loop is owned through a bit that is only ever tried, never waited
 * for: who finds it taken leaves its work in ctx->flags and returns, and
 * the owner looks at the flags again after letting go.  No context ever
 * waits for another, and nested calls return at once, with bounded stack.
 * (context=irqsoff does post with IRQs off, on purpose: see ctl.c.)
 */
static void ibloop_service(struct ibloop_ctx *ctx)
{
	if (!ibloop_try_own(ctx))
		return;
	ibloop_serve(ctx);
	ibloop_unown(ctx);
}

/* Queues @work for the service loop, and runs it or has the timer run it. */
static void ibloop_kick(struct ibloop_ctx *ctx, unsigned long work)
{
	unsigned int bit;

	for_each_set_bit(bit, &work, BITS_PER_LONG)
		set_bit(bit, &ctx->flags);
	/* Work visible before the try: pairs with ibloop_unown(). */
	smp_mb__after_atomic();
	if (ibloop_deferred(ctx))
		ibloop_defer(ctx, IBLOOP_TIMER_NS);
	else
		ibloop_service(ctx);
}

/*
 * The timer's callback, in hard-irq or softirq context: one pass of the
 * service loop, whose work is bounded (a window of posts, a budget of
 * completions per CQ), never a wait.  IBLOOP_TIMER stays set while it
 * runs, so work that comes in meanwhile waits for the end of the pass,
 * which queues the timer again.
 */
static enum hrtimer_restart ibloop_timer_fn(struct hrtimer *timer)
{
	struct ibloop_ctx *ctx = container_of(timer, struct ibloop_ctx, timer);

	ibloop_service(ctx);
	clear_bit(IBLOOP_TIMER, &ctx->flags);
	/* Pairs with the barrier in ibloop_kick(). */
	smp_mb__after_atomic();
	if (ibloop_work_pending(ctx))
		ibloop_defer(ctx, IBLOOP_REARM_NS);
	return HRTIMER_NORESTART;
}

/* Stops the timer; only the run thread may start it again. */
static void ibloop_timer_off(struct ibloop_ctx *ctx)
{
	hrtimer_cancel(&ctx->timer);
	/* Still set if the timer was queued: its work waits for a kick. */
	clear_bit(IBLOOP_TIMER, &ctx->flags);
}

/**
 * ibloop_init_context() - prepare a run for its context
 * @ctx: the run, its configuration set
 */
void ibloop_init_context(struct ibloop_ctx *ctx)
{
	spin_lock_init(&ctx->irqsoff);
	hrtimer_init(&ctx->timer, CLOCK_MONOTONIC, ibloop_timer_mode(ctx));
	ctx->timer.function = ibloop_timer_fn;
}

static void ibloop_note_depth(struct ibloop_ctx *ctx, int depth)
{
	int max = atomic_read(&ctx->max_handler_depth);

	while (depth > max)
		if (atomic_try_cmpxchg(&ctx->max_handler_depth, &max, depth))
			break;
}

/*
 * A completion handler's or ib_cqe callback's visit: counts itself, for
 * ibloop_keep_off() to wait for; hands over @wc, if any, to the service
 * loop through the side's ring, which holds one entry per WR that can be
 * outstanding on the side's queues and so never fills; and has the loop
 * poll the side unless teardown began (whose flushes the run thread
 * collects).
 */
static void ibloop_visit(struct ibloop_side *side, const struct ib_wc *wc)
{
	struct ibloop_ctx *ctx = side->ctx;
	int depth = atomic_inc_return(&ctx->handler_depth);

	ibloop_note_depth(ctx, depth);
	if (wc)
		WARN_ON_ONCE(!kfifo_put(&side->done, *wc));
	/* Ordered after the increment: pairs with ibloop_keep_off(). */
	if (!READ_ONCE(ctx->stopping))
		ibloop_kick(ctx, BIT(IBLOOP_POLL + (side - ctx->side)));
	/* Whatever the visit touched, before the teardown sees 0. */
	smp_mb__before_atomic();
	atomic_dec(&ctx->handler_depth);
}

/**
 * ibloop_comp() - the completion handler of both CQs
 * @cq: the CQ
 * @cq_context: its side
 *
 * Any context: has the service loop poll the CQ, unless teardown began.
 */
void ibloop_comp(struct ib_cq *cq, void *cq_context)
{
	ibloop_visit(cq_context, NULL);
}

/*
 * The ib_cqe callback of every WR on ib_core's CQs, in its poller's
 * context: the completion, with the WR's slot and queue, to the loop.
 */
static void ibloop_cqe_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct ibloop_cqe *c = container_of(wc->wr_cqe, struct ibloop_cqe, cqe);
	struct ib_wc copy = *wc;

	copy.wr_id = c->wr_id;
	ibloop_visit(c->side, &copy);
}

/**
 * ibloop_alloc_cqes() - prepare a run on ib_core's CQs
 * @ctx: the run
 *
 * Return: 0 or -ENOMEM.
 */
int ibloop_alloc_cqes(struct ibloop_ctx *ctx)
{
	u32 depth = ctx->cfg->depth, i;
	int s;

	ctx->cqe = kcalloc(2 * depth, sizeof(*ctx->cqe), GFP_KERNEL);
	if (!ctx->cqe)
		return -ENOMEM;
	for (i = 0; i < 2 * depth; i++) {
		bool recv = i >= depth;

		ctx->cqe[i].cqe.done = ibloop_cqe_done;
		ctx->cqe[i].side = &ctx->side[recv ? IBLOOP_TGT : IBLOOP_INI];
		ctx->cqe[i].wr_id = ibloop_wr_id(i % depth, recv);
	}
	for (s = 0; s < IBLOOP_SIDES; s++)
		if (kfifo_alloc(&ctx->side[s].done, depth + 1, GFP_KERNEL)) {
			ibloop_free_cqes(ctx);
			return -ENOMEM;
		}
	return 0;
}

void ibloop_free_cqes(struct ibloop_ctx *ctx)
{
	int s;

	for (s = 0; s < IBLOOP_SIDES; s++)
		kfifo_free(&ctx->side[s].done);
	kfree(ctx->cqe);
	ctx->cqe = NULL;
}

/**
 * ibloop_keep_off() - keep completion handlers away from the queues
 * @ctx: the run
 *
 * Once @ctx->stopping is set, a handler only counts itself; this waits
 * for those already past the test, then stops the timer they may have
 * started.  Sleeps.
 */
void ibloop_keep_off(struct ibloop_ctx *ctx)
{
	WRITE_ONCE(ctx->stopping, true);
	/* Pairs with the atomic_inc_return() in ibloop_comp(). */
	smp_mb();
	while (atomic_read_acquire(&ctx->handler_depth))
		usleep_range(50, 100);
	ibloop_timer_off(ctx);
}

/*
 * True once every posted work request completed; has the service loop
 * poll for the flushes, in the run's context like every other poll.
 */
static bool ibloop_flushed(struct ibloop_ctx *ctx)
{
	bool flushed;

	ibloop_kick(ctx, IBLOOP_POLL_ALL);
	if (!ibloop_try_own(ctx))
		return false;
	flushed = !ctx->side[IBLOOP_INI].sq_out &&
		  !ctx->side[IBLOOP_TGT].rq_out;
	ibloop_unown(ctx);
	return flushed;
}

/*
 * Stops the traffic and waits until no work request is left with the
 * device, so that the buffers may be unmapped.  On ib_core's CQs, as ULPs
 * do: ib_drain_qp(), whose marker WRs complete after every flush.  On
 * ibloop's own, not ib_drain_qp(): it relies on the CQ's poll context
 * calling its own ib_cqe done callbacks, and these CQs come from
 * ib_create_cq() with ibloop's own handler (or none armed, in poll mode).
 * Instead the QPs go to ERR, which flushes everything posted.  Either
 * way the run thread then has the flushes collected until all are in;
 * then the timer stops for good.  Handlers must keep off already
 * (ibloop_keep_off()).
 */
static void ibloop_stop(struct ibloop_ctx *ctx)
{
	struct ib_qp_attr attr = { .qp_state = IB_QPS_ERR };
	unsigned long end = jiffies + IBLOOP_STALL;
	int i, ret;

	for (i = 0; i < IBLOOP_SIDES; i++) {
		if (ctx->cqe) {
			ib_drain_qp(ctx->side[i].qp);
			continue;
		}
		ret = ib_modify_qp(ctx->side[i].qp, &attr, IB_QP_STATE);
		if (ret)
			ibdev_dbg(ctx->side[i].dev, "ibloop: QP to ERR: %d\n",
				  ret);
	}
	while (!ibloop_flushed(ctx)) {
		if (time_after(jiffies, end)) {
			ibdev_dbg(ctx->side[IBLOOP_INI].dev,
				  "ibloop: flush timed out\n");
			break;
		}
		usleep_range(100, 200);
	}
	ibloop_timer_off(ctx);
}

static bool ibloop_woken(struct ibloop_ctx *ctx)
{
	return READ_ONCE(ctx->done) || READ_ONCE(ctx->removed) ||
	       test_bit(IBLOOP_KICK, &ctx->flags);
}

/*
 * The run thread: starts the traffic and waits for its end, polling
 * itself in poll and direct modes and whenever a handler ran out of
 * budget.
 */
static int ibloop_wait(struct ibloop_ctx *ctx)
{
	bool poll = ibloop_thread_polls(ctx->cfg);
	unsigned long seen = 0, last = jiffies;
	long ret;

	ctx->t0 = ktime_get_ns();
	ibloop_kick(ctx, BIT(IBLOOP_START) | IBLOOP_POLL_ALL);
	while (!READ_ONCE(ctx->done)) {
		if (poll || test_and_clear_bit(IBLOOP_KICK, &ctx->flags)) {
			ibloop_kick(ctx, IBLOOP_POLL_ALL);
			cond_resched();
		} else {
			ret = wait_event_killable_timeout(ctx->wq,
							  ibloop_woken(ctx),
							  HZ);
			if (ret < 0)
				return -EINTR;
		}
		if (fatal_signal_pending(current))
			return -EINTR;
		if (READ_ONCE(ctx->removed))
			return -ENODEV;
		if (READ_ONCE(ctx->polled) != seen) {
			seen = READ_ONCE(ctx->polled);
			last = jiffies;
		} else if (time_after(jiffies, last + IBLOOP_STALL)) {
			return -ETIMEDOUT;
		}
	}
	return 0;
}

/**
 * ibloop_traffic() - run the messages and stop the QPs
 * @ctx: a run whose QPs are in RTS, with nothing posted
 *
 * Returns with the QPs in ERR and every work request completed or flushed
 * (or after giving up on the flushes for %IBLOOP_STALL), so that the
 * buffers may go.  Sleeps.
 *
 * Return: the run's status, also in @ctx->res->status.
 */
int ibloop_traffic(struct ibloop_ctx *ctx)
{
	int ret = ibloop_wait(ctx);

	ibloop_keep_off(ctx);
	/*
	 * No handler runs now, so the run thread has the loop to itself.
	 * A run that timed out or was killed ends here, before the flushes
	 * come in that would otherwise count as errors.
	 */
	ibloop_finish(ctx, ret);
	ibloop_stop(ctx);
	ctx->res->ns = ctx->t1 - ctx->t0;
	return ctx->res->status;
}
