// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * A process's context on the device, and its doorbell.
 *
 * A send queue's doorbell (softhca-abi.h) wakes the engine for one QP.  A
 * process that spreads its posts over many QPs finds each idle when it
 * posts to it, and rings for each: a system call per post.  So a context
 * has a doorbell too, a page the process maps, with a bit per QP (its
 * slot) and a word the kernel sets when the context's worker stops.  The
 * provider sets the bit of a QP whose own doorbell is set, and rings only
 * when the context's is set too; the worker takes the bits and runs those
 * QPs' send queues, a short run each per pass, until a pass finds none.
 * A QP with more small WQEs than a run takes is run again in the next
 * pass; one with more bytes goes on in its own work, beside the others.
 *
 * A process that streams to a worker with no CPU of its own would still
 * ring for a WQE or two at a time; its doorbells ask the worker to poll
 * it instead (shca_uctx_streams()): the worker runs off a timer, and the
 * process posts on with no system call while it does.
 *
 * The page is the process's to write at any moment: a bit is only a hint
 * to look at the QP's ring, whose entries the engine checks as ever, and
 * a slot without a QP names nothing.  A process that sets bits for
 * nothing keeps its worker looking, as one that rings in a loop keeps its
 * system calls busy.  The kernel's own marks (a doorbell rung through the
 * system call, a QP with more small WQEs than a run takes) are in @again,
 * which the process cannot reach.
 *
 * A QP leaves its slot before it is destroyed (shca_uctx_qp_del()): the
 * worker finds QPs by slot under run_lock, and runs them under it.
 */

#include <linux/bitops.h>
#include <linux/hrtimer.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>
#include <rdma/uverbs_ioctl.h>

#include "fault.h"
#include "qp.h"
#include "queue.h"
#include "trace.h"
#include "uctx.h"

/* The doorbell page: one page, its header and the slots' bits. */
#define SHCA_UCTX_DB_SIZE PAGE_SIZE
#define SHCA_UCTX_SLOTS \
	((SHCA_UCTX_DB_SIZE - sizeof(struct softhca_ctx_doorbell)) * BITS_PER_BYTE)

static_assert(sizeof(struct softhca_ctx_doorbell) == 64);

/*
 * Passes a run of the worker makes while slots are marked, before it
 * requeues itself behind other work.
 */
#define SHCA_UCTX_PASSES 16

/*
 * How long after a run the worker looks at the slots again while it polls
 * (shca_uctx_poll()): as long as the run took, from 50 us to 200 us.  A
 * worker with no CPU of its own, whose runs are long, so leaves the
 * poster (and its peer) at least as much time as it took; and its runs'
 * fixed cost (the timer, the wakeup) is spread over more WQEs.
 */
#define SHCA_UCTX_POLL_NS (50 * NSEC_PER_USEC)
#define SHCA_UCTX_POLL_MAX_NS (200 * NSEC_PER_USEC)
/* Runs in a row that took a WQE or two, after which polling stops. */
#define SHCA_UCTX_POLL_MISSES 2
/*
 * A doorbell is quick when it comes within this many times the last
 * doorbell run in its system call took, after the kernel asked for it.
 */
#define SHCA_UCTX_QUICK_TIMES 4
/* Quick doorbells in a row from which a process streams. */
#define SHCA_UCTX_QUICK 8

/* Words of the bitmaps that hold a slot given out. */
static u32 shca_uctx_words(const struct shca_ucontext *uc)
{
	return DIV_ROUND_UP(READ_ONCE(uc->slots_hi), 32);
}

/*
 * One pass over the slots marked: a short run of each QP's send queue,
 * whose WQEs taken are added to @taken; a QP with a full batch taken and
 * more to come is marked again.
 */
static void shca_uctx_pass(struct shca_ucontext *uc, u32 *taken)
{
	u32 words = shca_uctx_words(uc), w, bits, slot;
	struct shca_qp *qp;

	for (w = 0; w < words; w++) {
		bits = 0;
		if (READ_ONCE(uc->db->pending[w]))
			bits = xchg(&uc->db->pending[w], 0);
		if (atomic_read(&uc->again[w]))
			bits |= atomic_xchg(&uc->again[w], 0);
		while (bits) {
			slot = w * 32 + __ffs(bits);
			bits &= bits - 1;
			qp = xa_load(&uc->qps, slot);
			if (qp && shca_engine_run_user(qp, taken))
				atomic_or(BIT(slot % 32), &uc->again[w]);
		}
		cond_resched();
	}
}

/* Whether a slot is marked, by the process or the kernel. */
static bool shca_uctx_marked(struct shca_ucontext *uc)
{
	u32 words = shca_uctx_words(uc), w;

	for (w = 0; w < words; w++)
		if (READ_ONCE(uc->db->pending[w]) ||
		    atomic_read(&uc->again[w]))
			return true;
	return false;
}

/*
 * The worker is about to stop, with nothing marked: asks the process to
 * ring for what it marks from now on, then looks once more.
 * Return: true when slots were marked meanwhile (the worker goes on).
 */
static bool shca_uctx_sleep(struct shca_ucontext *uc)
{
	WRITE_ONCE(uc->asked_ns, ktime_get_ns());
	WRITE_ONCE(uc->db->doorbell, 1);
	/* Pairs with the provider's barrier between its bit and doorbell. */
	smp_mb();
	if (!shca_uctx_marked(uc))
		return false;
	WRITE_ONCE(uc->db->doorbell, 0);
	return true;
}

/*
 * The worker polls a process that streams, whose doorbells asked for it
 * (shca_uctx_ring_later()): while it does, it leaves the word clear, so
 * that the process posts on without ringing, and a timer runs it again
 * after each run (at the pace SHCA_UCTX_POLL_NS describes), to take what
 * was posted meanwhile in one run.  It stops after SHCA_UCTX_POLL_MISSES
 * runs in a row that took a WQE or two: the process no longer streams.
 *
 * Context: the worker, under run_lock.
 * Return: true when the worker polls (and does not stop).
 */
static bool shca_uctx_poll(struct shca_ucontext *uc, u32 taken, u64 run_ns)
{
	if (test_and_clear_bit(SHCA_UCTX_POLL_ASKED, &uc->flags)) {
		uc->polling = true;
		uc->misses = 0;
	}
	if (!uc->polling)
		return false;
	uc->misses = taken > SHCA_RUN_SMALL ? 0 : uc->misses + 1;
	if (uc->misses >= SHCA_UCTX_POLL_MISSES) {
		uc->polling = false;
		return false;
	}
	hrtimer_start(&uc->poll,
		      ns_to_ktime(clamp_t(u64, run_ns, SHCA_UCTX_POLL_NS,
					  SHCA_UCTX_POLL_MAX_NS)),
		      HRTIMER_MODE_REL);
	return true;
}

static enum hrtimer_restart shca_uctx_poll_fire(struct hrtimer *timer)
{
	struct shca_ucontext *uc = container_of(timer, struct shca_ucontext,
						poll);

	shca_engine_queue(&uc->work);
	return HRTIMER_NORESTART;
}

static void shca_uctx_work(struct work_struct *work)
{
	struct shca_ucontext *uc = container_of(work, struct shca_ucontext,
						work);
	u64 start = ktime_get_ns();
	u32 taken = 0, n;
	bool more = true, polls;

	mutex_lock(&uc->run_lock);
	for (n = 0; n < SHCA_UCTX_PASSES && more; n++) {
		shca_uctx_pass(uc, &taken);
		more = shca_uctx_marked(uc);
	}
	polls = !more && shca_uctx_poll(uc, taken, ktime_get_ns() - start);
	if (!more && !polls)
		more = shca_uctx_sleep(uc);
	trace_softhca_uctx_run(uc->ibuc.device, taken, polls);
	shca_engine_count_run(&uc->runs, taken, more);
	mutex_unlock(&uc->run_lock);
	if (more)
		shca_engine_queue(&uc->work);
}

/**
 * shca_uctx_init() - a process's new context: its doorbell
 * @uc: the context, zeroed by ib_core
 * @resp: the response, whose doorbell fields are filled in
 *
 * Context: process context (alloc_ucontext); sleeps.
 * Return: 0 or a negative errno.
 */
int shca_uctx_init(struct shca_ucontext *uc,
		   struct softhca_alloc_ucontext_resp *resp)
{
	struct rdma_user_mmap_entry *entry;
	int ret = -ENOMEM;

	uc->again = shca_fault() ? NULL :
		kcalloc(DIV_ROUND_UP(SHCA_UCTX_SLOTS, 32), sizeof(*uc->again),
			GFP_KERNEL_ACCOUNT);
	if (!uc->again)
		return -ENOMEM;
	uc->db = shca_fault() ? NULL : shca_queue_alloc_user(SHCA_UCTX_DB_SIZE);
	if (!uc->db)
		goto err_free_again;
	/* Until the worker first runs, the process rings. */
	uc->db->doorbell = 1;
	entry = shca_queue_map_user(&uc->ibuc, uc->db, SHCA_UCTX_DB_SIZE);
	if (IS_ERR(entry)) {
		ret = PTR_ERR(entry);
		goto err_free_db;
	}
	uc->db_entry = entry;
	xa_init_flags(&uc->qps, XA_FLAGS_ALLOC);
	mutex_init(&uc->run_lock);
	INIT_WORK(&uc->work, shca_uctx_work);
	hrtimer_init(&uc->poll, CLOCK_MONOTONIC, HRTIMER_MODE_REL);
	uc->poll.function = shca_uctx_poll_fire;

	resp->caps |= SOFTHCA_UCTX_CAP_DOORBELL;
	resp->db_offset = rdma_user_mmap_get_offset(entry);
	resp->db_length = SHCA_UCTX_DB_SIZE;
	resp->db_slots = SHCA_UCTX_SLOTS;
	return 0;

err_free_db:
	vfree(uc->db);
err_free_again:
	kfree(uc->again);
	return ret;
}

/**
 * shca_uctx_destroy() - undo shca_uctx_init()
 * @uc: the context, whose QPs are all destroyed
 *
 * The page stays the process's until it unmaps it.
 *
 * Context: process context; sleeps.
 */
void shca_uctx_destroy(struct shca_ucontext *uc)
{
	/* With no QP left, no doorbell asks the worker to poll again. */
	mutex_lock(&uc->run_lock);
	clear_bit(SHCA_UCTX_POLL_ASKED, &uc->flags);
	uc->polling = false;
	mutex_unlock(&uc->run_lock);
	hrtimer_cancel(&uc->poll);
	cancel_work_sync(&uc->work);
	rdma_user_mmap_entry_remove(uc->db_entry);
	xa_destroy(&uc->qps);
	kfree(uc->again);
}

/**
 * shca_uctx_qp_add() - a user QP's slot in its process's doorbell
 * @qp: the QP, built but for its slot
 * @udata: the create verb's
 *
 * A QP past the last slot gets none, and rings through its own doorbell.
 *
 * Context: the command queue; sleeps.
 * Return: 0 or -ENOMEM.
 */
int shca_uctx_qp_add(struct shca_qp *qp, struct ib_udata *udata)
{
	struct shca_ucontext *uc = rdma_udata_to_drv_context(udata,
			struct shca_ucontext, ibuc);
	u32 slot;
	int ret;

	qp->db_slot = SOFTHCA_NO_SLOT;
	if (!uc)
		return 0;
	xa_lock(&uc->qps);
	ret = shca_fault() ? -ENOMEM :
		__xa_alloc(&uc->qps, &slot, qp,
			   XA_LIMIT(0, SHCA_UCTX_SLOTS - 1), GFP_KERNEL);
	if (!ret && slot >= uc->slots_hi)
		WRITE_ONCE(uc->slots_hi, slot + 1);
	xa_unlock(&uc->qps);
	if (ret == -EBUSY)
		return 0;
	if (ret)
		return ret;
	qp->uctx = uc;
	qp->db_slot = slot;
	return 0;
}

/**
 * shca_uctx_qp_del() - a QP leaves its slot
 * @qp: the QP, about to be destroyed
 *
 * On return the worker has stopped running it and cannot find it again.
 *
 * Context: the command queue; sleeps.
 */
void shca_uctx_qp_del(struct shca_qp *qp)
{
	struct shca_ucontext *uc;

	if (qp->db_slot == SOFTHCA_NO_SLOT)
		return;
	uc = qp->uctx;
	mutex_lock(&uc->run_lock);
	xa_erase(&uc->qps, qp->db_slot);
	mutex_unlock(&uc->run_lock);
	qp->db_slot = SOFTHCA_NO_SLOT;
}

/**
 * shca_uctx_runs() - the counts of the worker a user QP's doorbell wakes
 * @qp: the user QP
 *
 * Context: any.
 */
struct shca_runs *shca_uctx_runs(struct shca_qp *qp)
{
	if (qp->db_slot == SOFTHCA_NO_SLOT)
		return &qp->req.runs;
	return &qp->uctx->runs;
}

/*
 * A doorbell's QP is the worker's to run: marked where the process cannot
 * reach, and the process told that the worker runs (it rings no more).
 */
static void shca_uctx_mark(struct shca_ucontext *uc, u32 slot)
{
	atomic_or(BIT(slot % 32), &uc->again[slot / 32]);
	WRITE_ONCE(uc->db->doorbell, 0);
}

/**
 * shca_uctx_ring() - a user QP's send doorbell, for its process's worker
 * @qp: the QP, whose WQEs were published before the call
 *
 * The worker runs the QP in its next pass, and the process posts on
 * without ringing while it runs.
 *
 * Context: process context (ib_uverbs' post_send).
 * Return: false when the QP has no slot (its own work must run it).
 */
bool shca_uctx_ring(struct shca_qp *qp)
{
	struct shca_ucontext *uc = qp->uctx;

	if (qp->db_slot == SOFTHCA_NO_SLOT)
		return false;
	shca_uctx_mark(uc, qp->db_slot);
	shca_engine_queue(&uc->work);
	return true;
}

/**
 * shca_uctx_streams() - whether a user QP's send doorbell is one of a
 * stream
 * @qp: the QP, whose poster did not wait on its peer before it rang
 *
 * A process whose posts come faster than the worker takes them rings for
 * a WQE or two each time, once its worker has no CPU of its own (its
 * runs are small; the doorbells then run in their system calls).  Its
 * doorbells come soon after the kernel asked for them: within
 * SHCA_UCTX_QUICK_TIMES times what a doorbell's run in its system call
 * took, a measure of the host's speed.  After SHCA_UCTX_QUICK such
 * doorbells in a row, the process streams, and its worker polls it
 * (shca_uctx_ring_later()).  A process that rings now and then, however
 * small its runs, does not stream: each of its doorbells runs at once.
 *
 * Context: process context (ib_uverbs' post_send).
 */
bool shca_uctx_streams(struct shca_qp *qp)
{
	struct shca_ucontext *uc = qp->uctx;
	u8 quick = 0;
	u64 gap;

	if (qp->db_slot == SOFTHCA_NO_SLOT ||
	    !shca_engine_runs_small(&uc->runs))
		return false;
	gap = ktime_get_ns() - READ_ONCE(uc->asked_ns);
	if (gap < (u64)READ_ONCE(uc->here_ns) * SHCA_UCTX_QUICK_TIMES)
		quick = min_t(u8, READ_ONCE(uc->quick) + 1, SHCA_UCTX_QUICK);
	WRITE_ONCE(uc->quick, quick);
	return quick >= SHCA_UCTX_QUICK;
}

/**
 * shca_uctx_ran_here() - a user QP's doorbell ran the engine in its
 * system call
 * @qp: the QP
 * @start: when the run began, ktime_get_ns()
 *
 * The engine asked the process to ring for what it posts next.
 *
 * Context: process context (ib_uverbs' post_send).
 */
void shca_uctx_ran_here(struct shca_qp *qp, u64 start)
{
	struct shca_ucontext *uc = qp->uctx;
	u64 now = ktime_get_ns();

	if (qp->db_slot == SOFTHCA_NO_SLOT)
		return;
	WRITE_ONCE(uc->here_ns, min_t(u64, now - start, U32_MAX));
	WRITE_ONCE(uc->asked_ns, now);
}

/**
 * shca_uctx_ring_later() - a streaming process's send doorbell: its
 * worker polls
 * @qp: the QP, with a slot (shca_uctx_streams()), whose WQEs were
 * published before the call
 *
 * The worker runs SHCA_UCTX_POLL_NS later, rather than now, and takes
 * what the process posted meanwhile with no further doorbell; then it
 * polls (shca_uctx_poll()).
 *
 * Context: process context (ib_uverbs' post_send).
 */
void shca_uctx_ring_later(struct shca_qp *qp)
{
	struct shca_ucontext *uc = qp->uctx;

	shca_uctx_mark(uc, qp->db_slot);
	WRITE_ONCE(uc->quick, 0);
	set_bit(SHCA_UCTX_POLL_ASKED, &uc->flags);
	hrtimer_start(&uc->poll, ns_to_ktime(SHCA_UCTX_POLL_NS),
		      HRTIMER_MODE_REL);
}
