/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The engine: executes the work queues of QPs, away from the posters.
 * A doorbell queues the QP's work item on softhca's engine workqueue;
 * the work item runs the send queue (or flushes the QP in an error
 * state) a bounded batch at a time.
 */
#ifndef SHCA_ENGINE_H
#define SHCA_ENGINE_H

#include <linux/sizes.h>
#include <linux/workqueue.h>

/*
 * The bytes a run of the engine moves before it requeues itself: WQEs of
 * the send queue, or READ responses.
 */
#define SHCA_ENGINE_BUDGET SZ_1M

struct ib_qp;
struct sk_buff;
struct shca_qp;

/*
 * A worker that runs a process's send queues: how many of its recent runs
 * took a WQE or two and left nothing (shca_engine_doorbell_here()), and
 * the doorbells run in their system calls since.
 */
struct shca_runs {
	u8 small;
	atomic_t rung_here;
};

/*
 * A worker's run that took at most this many WQEs of a process's send
 * queues and left nothing to do is small: the process posts no faster than
 * the worker takes, and each post of the next rings the doorbell again.
 */
#define SHCA_RUN_SMALL 2

int shca_engine_init(void);
void shca_engine_destroy(void);

int shca_engine_qp_init(struct shca_qp *qp, gfp_t gfp);
void shca_engine_qp_window(struct shca_qp *qp, gfp_t gfp);
void shca_engine_qp_free(struct shca_qp *qp);
void shca_engine_qp_epsn(struct shca_qp *qp, u32 psn);
void shca_engine_lock(struct shca_qp *qp);
void shca_engine_unlock(struct shca_qp *qp);
void shca_engine_rx(struct shca_qp *qp);
void shca_engine_sync(struct shca_qp *qp);
bool shca_engine_doorbell_here(struct shca_runs *runs);
void shca_engine_doorbell_user(struct shca_qp *qp);
void shca_engine_count_run(struct shca_runs *runs, u32 taken, bool more);
bool shca_engine_runs_small(const struct shca_runs *runs);
bool shca_engine_run_user(struct shca_qp *qp, u32 *taken);
void shca_engine_queue(struct work_struct *work);
void shca_engine_flush(void);
void shca_engine_drain_sq(struct shca_qp *qp);
void shca_engine_qp_stop(struct shca_qp *qp);
int shca_fill_res_qp_entry(struct sk_buff *msg, struct ib_qp *ibqp);

#endif /* SHCA_ENGINE_H */
