/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The responder (resp.c): what a QP does with a message that reaches it,
 * whichever transport brought it.  Loopback hands it whole messages
 * (shca_resp_execute()); the wire's RC and UC responder (roce_resp.c)
 * keeps the packets in PSN order, answers READs and duplicates, and
 * hands it each packet of a SEND or WRITE as a segment
 * (shca_resp_segment()), so that a message meets the same checks and
 * completes the same way on both.
 *
 * Context: the engine of the responder QP (process context).
 */
#ifndef SHCA_RESP_H
#define SHCA_RESP_H

#include "dev.h"
#include "transport.h"

/* The receive WQE a message consumes, copied out of its ring. */
struct shca_rwqe {
	struct softhca_recv_wqe hdr;
	struct softhca_sge sge[SHCA_MAX_SGE];
};

/* The message a responder is in the middle of. */
enum shca_resp_msg {
	SHCA_RESP_MSG_NONE,
	SHCA_RESP_MSG_SEND,
	SHCA_RESP_MSG_WRITE,
};

/**
 * struct shca_resp_cur - the SEND or WRITE a responder is placing
 * @have_rwqe: @rwqe was taken from the receive queue and not completed
 * @off: bytes of the message placed
 * @write: a WRITE's target: address, length and rkey (in lkey)
 * @rwqe: the receive WQE the message fills
 */
struct shca_resp_cur {
	bool have_rwqe;
	u32 off;
	struct softhca_sge write;
	struct shca_rwqe rwqe;
};

/**
 * struct shca_resp - a QP's responder
 * @epsn: RC and UC: the PSN expected next of the QP's peer, whichever
 *	transport brings its messages
 * @msg: enum shca_resp_msg: a SEND or WRITE with segments to come
 * @cur: that message, between its segments
 *
 * A whole message (loopback's, or UD's) is placed with a @cur of its
 * own, on the stack of the engine that delivers it: several requesters
 * may reach one QP at once.  The wire's segments come in PSN order from
 * the QP's own engine, under engine_lock, which owns @msg and @cur;
 * loopback moves @epsn from the peer's engine (see loopback.c).
 */
struct shca_resp {
	u32 epsn;
	u8 msg;
	struct shca_resp_cur cur;
};

enum shca_tx shca_resp_segment(struct shca_qp *qp, struct shca_msg *msg,
			       bool first, bool last);
enum shca_resp_msg shca_resp_class(u8 wr_opcode);

/*
 * Refuses @msg: on RC, @qp goes to the error state and @msg->status is
 * what the requester's completion reports (@event: raise the affiliated
 * event, when no receive WQE told the consumer); dropped otherwise.
 */
enum shca_tx shca_resp_refuse(struct shca_qp *qp, struct shca_msg *msg,
			      enum ib_wc_status status, bool event);

/* The QP's access flags, then @msg->remote's rkey: 0 or -EACCES. */
int shca_resp_target(struct shca_qp *qp, struct shca_msg *msg,
		     struct shca_sgl *target, int access);

/* The QP is in the error state: the receive WQE a message holds flushes. */
void shca_resp_flush(struct shca_qp *qp);

/* The responder starts afresh, expecting @epsn (RESET, or RTR). */
void shca_resp_reset(struct shca_qp *qp, u32 epsn);

#endif /* SHCA_RESP_H */
