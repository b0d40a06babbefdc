/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The seam between the engine and the ways a message reaches its
 * responder.  The engine (engine.c) turns a send queue WQE into a struct
 * shca_msg and hands it to a transport; the transport delivers it to the
 * responder (resp.c) of the destination QP and reports the outcome as the
 * requester sees it: executed with a status, refused for want of a
 * receive WQE (RNR), or unanswered; over the wire, an RC message joins
 * the requester's window (pending), or waits for room in it (blocked),
 * and its answer comes later.
 *
 * Loopback (loopback.c) serves QPs of softhca devices in this host, by
 * calling the responder directly with the requester's memory as the
 * payload.  RoCEv2 (roce.h) carries what loopback finds no QP here for.
 */
#ifndef SHCA_TRANSPORT_H
#define SHCA_TRANSPORT_H

#include <linux/skbuff.h>
#include <rdma/ib_verbs.h>
#include <rdma/softhca-abi.h>

#include "ah.h"
#include "compat.h"
#include "mem.h"

struct shca_dev;
struct shca_qp;

enum shca_tx {
	SHCA_TX_DONE,		/* executed: see status */
	SHCA_TX_RNR,		/* no receive WQE: retry after rnr_timer */
	SHCA_TX_LOST,		/* nothing answered: retry after a timeout */
	SHCA_TX_REMOTE,		/* not in this host: for the wire */
	SHCA_TX_PENDING,	/* sent: in the window until answered */
	SHCA_TX_BLOCKED,	/* not sent: the window or the net holds it */
	SHCA_TX_PAUSED,		/* UC: sent in part; its copy is kept */
};

/**
 * struct shca_msg - one message, requester to responder
 * @qp_type: the requester's service: IB_QPT_RC, IB_QPT_UC or IB_QPT_UD
 * @opcode: the WQE's opcode (enum ib_wr_opcode)
 * @flags: SOFTHCA_WQE_* (SOLICITED matters to the responder)
 * @ex: immediate data, or the rkey SEND_WITH_INV invalidates
 * @len: payload bytes: sent, written, or to read
 * @payload: the requester's bytes: the source of a SEND or WRITE, the
 *	sink of a READ
 * @remote: address, rkey (as lkey) and length of a WRITE, READ or atomic
 * @compare_add: atomic operand
 * @swap: atomic operand
 * @plt: a FLUSH's placement type (SHCA_FLUSH_GLOBAL, _PERSISTENT)
 * @sel: a FLUSH's selectivity level (SHCA_FLUSH_RANGE, _MR)
 * @src_qpn: the requester's QPN
 * @dest_qpn: the responder's QPN
 * @psn: RC and UC: the requester's PSN for the message's first packet
 * @npsn: RC and UC: the PSNs it takes (shca_msg_npsn())
 * @qkey: a UD message's Q_Key
 * @av: the path (GIDs and the GRH fields a UD receiver sees)
 * @smac: the requester's MAC address
 * @slot: RC: where the requester's window keeps the message's state
 * @followed: RC: the engine sends the next WQE's message right behind
 *	this one, whose last packet then need not ask for an ACK
 * @status: set by the responder with SHCA_TX_DONE, as the requester's
 *	completion reports it
 * @rnr_timer: set with SHCA_TX_RNR: the responder's minimum RNR timer
 * @atomic_orig: set by an atomic: the value before the operation
 */
struct shca_msg {
	enum ib_qp_type qp_type;
	u8 opcode;
	u8 flags;
	u32 ex;
	u32 len;
	struct shca_sgl *payload;
	struct softhca_sge remote;
	u64 compare_add;
	u64 swap;
	u8 plt;
	u8 sel;
	u32 src_qpn;
	u32 dest_qpn;
	u32 psn;
	u32 npsn;
	u32 qkey;
	const struct shca_av *av;
	const u8 *smac;
	struct shca_wire_slot *slot;
	bool followed;

	enum ib_wc_status status;
	u8 rnr_timer;
	u64 atomic_orig;
};

/*
 * The PSNs an RC or UC message takes with a path MTU of @pmtu bytes: a
 * SEND or WRITE one per packet, a READ one per response packet, an
 * atomic one.  Loopback numbers its messages as the wire does, so that a
 * QP's PSNs mean the same whichever transport carried its messages.
 */
static inline u32 shca_msg_npsn(const struct shca_msg *msg, u32 pmtu)
{
	if (msg->opcode == IB_WR_ATOMIC_CMP_AND_SWP ||
	    msg->opcode == IB_WR_ATOMIC_FETCH_AND_ADD || !msg->len)
		return 1;
	return DIV_ROUND_UP(msg->len, pmtu);
}

/**
 * struct shca_wire_slot - an RC message in the requester's window, or the
 *	UC message being sent
 * @first: its first PSN
 * @npsn: PSNs it takes (a READ: one per response packet); 0 while none
 *	is sent (the engine zeroes the slot when it takes the WQE)
 * @asked: a READ: its PSNs, from @first, that requests asked for so far
 * @len: its length in bytes
 * @sent: UC: its packets sent so far
 * @wr_opcode: the WQE's opcode (enum ib_wr_opcode)
 * @answered: the answer came (or the requester gave up): @status is final
 * @status: with @answered, the completion's status
 * @atomic_orig: an atomic's original value, from its AtomicAckETH
 *
 * Kept beside the engine's copy of the WQE (struct shca_req); the engine
 * fills it for a message that completes at once, the transport for one
 * it sends.
 */
struct shca_wire_slot {
	u32 first;
	u32 npsn;
	u32 asked;
	u32 len;
	u32 sent;
	u8 wr_opcode;
	bool answered;
	u8 status;
	u64 atomic_orig;
};

/* What the engine's run does about a window (struct shca_window_ops). */
enum shca_wire_act {
	SHCA_WIRE_ACT_NONE,	/* place READ responses, complete */
	SHCA_WIRE_ACT_LOST,	/* a loss: resend, on retry_cnt */
	SHCA_WIRE_ACT_TIMEOUT,	/* nothing came in time: resend, on retry_cnt */
	SHCA_WIRE_ACT_RNR,	/* wait the RNR timer: send nothing */
	SHCA_WIRE_ACT_RESEND,	/* the RNR wait is over: resend */
};

/* What a message in a window needs of a run (struct shca_window_ops). */
#define SHCA_WIRE_NEED_PLACE	BIT(0)	/* READ responses to place */
#define SHCA_WIRE_NEED_SEND	BIT(1)	/* packets to send, or send again */

/**
 * struct shca_window_ops - RC messages that a transport answers later
 * @act: what the transport heard of the window since the last run;
 *	@expired: the local ACK timeout passed.  With SHCA_WIRE_ACT_RNR, sets
 *	*@rnr_timer to the responder's code
 * @resend: goes back to the first PSN not answered, for what @act said:
 *	the window's messages are sent again from there
 * @need: what the message @ws needs of this run: SHCA_WIRE_NEED_*
 * @service: does it: places READ responses into @msg's payload, sends
 *	its packets (again)
 * @fail: ends @ws (NULL: every message not answered) with @status
 * @busy: a message is not answered yet: the local ACK timer runs
 * @una: the first PSN not answered: when it moves, the window made
 *	progress
 * @rto: how long an answer takes on the QP's path, as measured (the
 *	smoothed round trip and four deviations), in ns; 0 before the first
 *	measure
 * @reset: the window is empty, or the QP reset: what it kept goes
 *
 * The engine keeps the window's WQEs and completes them in order (see
 * struct shca_req); the transport numbers, sends, resends and answers
 * them.  The retry counts and the timers are the engine's: the transport
 * says what happened (a loss, an RNR NAK, progress), the engine decides
 * whether to resend, wait or give up.
 *
 * Context: the QP's engine (under engine_lock).
 */
struct shca_window_ops {
	enum shca_wire_act (*act)(struct shca_qp *qp, bool expired,
				  u8 *rnr_timer);
	void (*resend)(struct shca_qp *qp);
	unsigned int (*need)(struct shca_qp *qp,
			     const struct shca_wire_slot *ws);
	void (*service)(struct shca_qp *qp, struct shca_wire_slot *ws,
			struct shca_msg *msg, unsigned int need);
	void (*fail)(struct shca_qp *qp, struct shca_wire_slot *ws,
		     enum ib_wc_status status);
	bool (*busy)(struct shca_qp *qp);
	u32 (*una)(struct shca_qp *qp);
	u64 (*rto)(struct shca_qp *qp);
	void (*reset)(struct shca_qp *qp);
};

/**
 * struct shca_transport - a way messages reach their responders
 * @send: delivers @msg from @qp, or answers SHCA_TX_REMOTE when its
 *	destination is not this transport's to reach
 * @win: for a transport whose @send answers SHCA_TX_PENDING: its window
 * @qp_init: a new QP's state on this transport (process context, @gfp)
 * @qp_free: frees it; the QP's engine is stopped
 * @rx_run: executes a batch of what @qp received; returns true to run
 *	again.  The engine runs the send queue (the window's answered
 *	messages complete there) after each batch, before the next
 * @resp_reset: the QP's responder starts afresh (modify_qp's rq_psn)
 * @stop: the QP entered RESET, its engine stopped: what it received and
 *	kept goes, its window and responder start afresh
 * @fill_res: the transport's state of @qp, as driver attributes of
 *	`rdma res show qp -dd`
 *
 * The engine (engine.c) calls a transport only through these, in the
 * QP's engine context unless said otherwise; every member but @send may
 * be NULL.
 */
struct shca_transport {
	enum shca_tx (*send)(struct shca_qp *qp, struct shca_msg *msg);
	const struct shca_window_ops *win;
	int (*qp_init)(struct shca_qp *qp, gfp_t gfp);
	void (*qp_free)(struct shca_qp *qp);
	bool (*rx_run)(struct shca_qp *qp);
	void (*resp_reset)(struct shca_qp *qp);
	void (*stop)(struct shca_qp *qp);
	int (*fill_res)(struct sk_buff *msg, struct shca_qp *qp);
};

/* Messages to QPs of this host (loopback.c). */
extern const struct shca_transport shca_loop_transport;
/* Messages to other hosts, over RoCEv2 (roce.c). */
extern const struct shca_transport shca_roce_transport;

/* Loopback's list of this host's devices (loopback.c). */
void shca_loop_dev_add(struct shca_dev *dev);
void shca_loop_dev_del(struct shca_dev *dev);
unsigned int shca_loop_generation(void);
struct shca_dev *shca_loop_find_gid(const struct shca_dev *from,
				    const union ib_gid *gid);

/* The responder: executes @msg on @qp, which the transport holds. */
enum shca_tx shca_resp_execute(struct shca_qp *qp, struct shca_msg *msg);

#endif /* SHCA_TRANSPORT_H */
