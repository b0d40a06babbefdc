/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Queue pairs: RC, UC, UD and the GSI QP.  Control verbs run on the
 * command queue; posting only writes work queue entries into the rings and
 * rings the doorbell, in any context.
 */
#ifndef SHCA_QP_H
#define SHCA_QP_H

#include <linux/hrtimer.h>
#include <linux/kref.h>
#include <linux/mutex.h>
#include <linux/skbuff.h>
#include <rdma/ib_verbs.h>

#include "ah.h"
#include "cq.h"
#include "dev.h"
#include "engine.h"
#include "event.h"
#include "queue.h"
#include "resp.h"
#include "transport.h"

struct shca_roce_qp;
struct shca_ucontext;

/* One work queue of a QP. */
struct shca_qp_queue {
	struct shca_queue queue;
	spinlock_t lock;		/* serialises kernel posters */
	u32 max_sge;
};

/* A send queue WQE, copied out of its ring: user space may rewrite it. */
struct shca_swqe {
	struct softhca_send_wqe hdr;
	union {
		struct softhca_sge sge[SHCA_MAX_SGE];
		u8 inline_data[SHCA_MAX_INLINE];
	};
};

/*
 * The requester's state: the WQEs the engine took from the send queue
 * and has not completed, their retry counts, and its timer.  Owned by
 * the QP's engine (under engine_lock).
 *
 * A WQE is copied out of the ring once, when the engine takes it, and
 * only that copy is used until it completes: a message is resent, and
 * its READ responses placed, over several runs, and each must see the
 * WQE that set its PSNs and length, whatever a process wrote into its
 * ring meanwhile.  The copies sit in @wqes by ring index, each as large
 * as the ring's entries, the wire's state of each beside them in @msgs:
 * an RC QP on the wire keeps up to @win messages in flight (@taken of
 * them, from the ring's consumer index on); any QP holds the next WQE
 * there across a retry wait (@held).  The window's messages are sent by
 * the transport that took the first of them (@tr).
 */
struct shca_req {
	struct hrtimer timer;		/* RNR and ACK timeouts */
	const struct shca_transport *tr;	/* the window's */
	u32 una;			/* the window's, at the last run */
	u32 armed;			/* the una the ACK timer runs for */
	bool waiting;			/* a retry wait: the timer kicks the engine */
	bool expired;			/* the local ACK timeout passed */
	bool held;			/* the next WQE's copy and counts are kept */
	u8 rnr_left;			/* 7: retry for ever */
	u8 retry_left;
	u8 backoff;			/* ACK timeouts since una moved */
	ktime_t charged;		/* una moved, or a retry counted; 0: idle */
	u32 psn;			/* the next packet's, on the wire */
	u32 taken;			/* RC messages in the wire's window */
	u32 win;			/* slots, a power of two */
	u32 wqe_size;			/* bytes of a copy */
	struct shca_wire_slot *msgs;	/* @win of them */
	void *wqes;			/* @win copies */
	/* A user QP's worker, when its process has no doorbell slot for it */
	struct shca_runs runs;
};

struct shca_qp {
	struct ib_qp ibqp;
	/* Held by the QPN table and by whoever found the QP there. */
	struct kref ref;
	struct completion released;
	/*
	 * Changed under state_lock by modify_qp (on the command queue) and by
	 * the data path (to SQE or ERR); read locklessly by posters and the
	 * engine.
	 */
	spinlock_t state_lock;
	enum ib_qp_state state;
	/*
	 * Attributes set by modify_qp, as query_qp reports them, but for the
	 * primary path, which is in av; no address vector keeps the sgid_attr
	 * reference ib_core holds for the verb's duration.
	 */
	struct ib_qp_attr attr;
	struct shca_av av;
	enum ib_sig_type sq_sig_type;
	u32 max_inline;
	struct shca_qp_queue sq;
	struct shca_qp_queue rq;		/* unused with an SRQ */
	/*
	 * The engine: runs the send queue, or flushes in SQE and ERR, from
	 * the work item or a user doorbell, holding engine_lock; or runs what
	 * the QP received in the receive softirq, holding run_lock, while
	 * engine_lock is free (engine.c).
	 */
	struct mutex engine_lock;
	spinlock_t run_lock;		/* the softirq's run */
	struct work_struct work;
	struct workqueue_struct *engine_wq;	/* unbound */
	/* The engine's run for what the transports received. */
	struct work_struct rx_work;
	struct workqueue_struct *local_wq;	/* per-CPU */
	struct shca_req req;
	/* The responder (resp.c), whichever transport brings messages. */
	struct shca_resp resp;
	/* Its state on the wire (roce.h). */
	struct shca_roce_qp *roce;
	struct shca_events events;
	/* Multicast groups it is attached to (mcast.c): the command queue's. */
	u32 nr_mcg;
	/* A user QP's process, and its bit in the process's doorbell */
	struct shca_ucontext *uctx;
	u32 db_slot;			/* or SOFTHCA_NO_SLOT */
};

static inline struct shca_qp *to_shca_qp(struct ib_qp *ibqp)
{
	return container_of(ibqp, struct shca_qp, ibqp);
}

/* QP types by service, as BIT(qp_type). */
#define SHCA_QPT_CONNECTED (BIT(IB_QPT_RC) | BIT(IB_QPT_UC))
#define SHCA_QPT_DATAGRAM (BIT(IB_QPT_UD) | BIT(IB_QPT_GSI))

/*
 * The doorbells: queue the QP's engine work, for its send queue and its
 * state changes (any context, hard-irq included), or, for the packets it
 * received, its receive work on this CPU (the receive softirq).  The
 * send queue's work is unbound, but for a QP whose kernel consumer
 * busy-polls one of its CQs: it waits on this CPU, and the engine runs
 * here as soon as it yields (engine.c).  Inline, so that any layer may
 * ring one: a doorbell asks for a run of the engine and runs nothing
 * itself.
 */
static inline struct workqueue_struct *shca_engine_kick_wq(struct shca_qp *qp)
{
	if (shca_cq_spinning(qp->ibqp.send_cq) ||
	    shca_cq_spinning(qp->ibqp.recv_cq))
		return qp->local_wq;
	return qp->engine_wq;
}

static inline void shca_engine_kick(struct shca_qp *qp)
{
	queue_work(shca_engine_kick_wq(qp), &qp->work);
}

static inline void shca_engine_kick_rx(struct shca_qp *qp)
{
	queue_work(qp->local_wq, &qp->rx_work);
}

/*
 * The receive work on @cpu, where the QP's queued packets left from
 * (roce_tx.c).  Return: false when the work was already queued.
 */
static inline bool shca_engine_kick_rx_on(struct shca_qp *qp, int cpu)
{
	return queue_work_on(cpu, qp->local_wq, &qp->rx_work);
}

/* The path MTU in bytes: RC and UC messages are segmented to it. */
static inline u32 shca_qp_pmtu(const struct shca_qp *qp)
{
	return ib_mtu_enum_to_int(READ_ONCE(qp->attr.path_mtu));
}

/* The engine's slot for the WQE @i after the send queue's consumer index. */
static inline u32 shca_req_pos(const struct shca_qp *qp, u32 i)
{
	return (qp->sq.queue.cons + i) & (qp->req.win - 1);
}

/* The engine's copy of that WQE: as large as the ring's entries. */
static inline struct shca_swqe *shca_req_wqe(struct shca_qp *qp, u32 i)
{
	return qp->req.wqes + (size_t)shca_req_pos(qp, i) * qp->req.wqe_size;
}

/* The wire's state of its message. */
static inline struct shca_wire_slot *shca_req_ws(struct shca_qp *qp, u32 i)
{
	return &qp->req.msgs[shca_req_pos(qp, i)];
}

struct shca_qp *shca_qp_get(struct shca_dev *dev, u32 qpn);
void shca_qp_put(struct shca_qp *qp);
struct shca_qp *shca_qp_get_next(struct shca_dev *dev, unsigned long *qpn);
struct ib_qp *shca_qp_ib_lookup(struct shca_dev *dev, u32 qpn);

int shca_create_qp(struct ib_qp *ibqp, struct ib_qp_init_attr *init,
		   struct ib_udata *udata);
int shca_modify_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
		   struct ib_udata *udata);
int shca_query_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
		  struct ib_qp_init_attr *init);
int shca_destroy_qp(struct ib_qp *ibqp, struct ib_udata *udata);
int shca_post_send(struct ib_qp *ibqp, const struct ib_send_wr *wr,
		   const struct ib_send_wr **bad_wr);
int shca_post_recv(struct ib_qp *ibqp, const struct ib_recv_wr *wr,
		   const struct ib_recv_wr **bad_wr);

/* The engine's side of the work queues (wqe.c). */
void shca_qp_state_locked(struct shca_qp *qp, enum ib_qp_state state);
void shca_qp_error(struct shca_qp *qp, enum ib_qp_state state);
void shca_qp_fatal(struct shca_qp *qp);
bool shca_send_op_ok(const struct shca_qp *qp, unsigned int opcode);
u8 shca_send_wc_opcode(unsigned int opcode);
bool shca_qp_flush(struct shca_qp *qp, bool recv);
int shca_rq_pop(struct shca_qp *qp, struct softhca_recv_wqe *wqe,
		struct softhca_sge *sge);

/* Shared with SRQs. */
int shca_recv_wqes_post(struct ib_device *ibdev, u32 num, bool srq,
			struct shca_queue *q, spinlock_t *lock, u32 max_sge,
			const struct ib_recv_wr *wr,
			const struct ib_recv_wr **bad_wr, u32 *posted);
u32 shca_recv_wqe_size(u32 max_sge);

#endif /* SHCA_QP_H */
