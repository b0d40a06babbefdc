/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The responder's parts (resp.c) that the wire's packet-by-packet RC and
 * UC responder (roce_resp.c) shares with shca_resp_execute(), so that a
 * message meets the same checks and completes the same way whichever
 * transport brought it.
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

/* Why a receive WQE cannot take a message (shca_resp_fail()). */
enum shca_resp_fault {
	SHCA_RESP_WQE,		/* the WQE is malformed */
	SHCA_RESP_LEN,		/* the message does not fit its SGEs */
	SHCA_RESP_INV,		/* SEND_WITH_INV's rkey cannot be invalidated */
	SHCA_RESP_PROT,		/* its SGEs' memory refused the bytes */
};

/*
 * Takes the receive WQE @msg consumes (of the SRQ, if any) into @rwqe.
 * Return: true; or false with *@tx what became of @msg: SHCA_TX_RNR (RC)
 * or SHCA_TX_LOST for an empty queue, else refused (a broken WQE or ring).
 */
bool shca_resp_take(struct shca_qp *qp, struct shca_msg *msg,
		    struct shca_rwqe *rwqe, enum shca_tx *tx);

/* A cursor over @rwqe's SGEs, for the bytes of a SEND. */
int shca_resp_sink(struct shca_qp *qp, const struct shca_rwqe *rwqe,
		   struct shca_sgl *sink);

/*
 * @rwqe cannot take @msg (@why): it completes in error, and @msg is
 * refused (shca_resp_refuse()), each with @why's status.
 */
enum shca_tx shca_resp_fail(struct shca_qp *qp, struct shca_msg *msg,
			    const struct shca_rwqe *rwqe,
			    enum shca_resp_fault why);

/* Completes @rwqe for @msg; an error moves @qp to the error state. */
void shca_resp_complete(struct shca_qp *qp, const struct shca_msg *msg,
			const struct shca_rwqe *rwqe, enum ib_wc_status status,
			u32 byte_len);

/*
 * Refuses @msg: on RC, @qp goes to the error state and @msg->status is
 * what the requester's completion reports (@event: raise the affiliated
 * event, when no receive WQE told the consumer); dropped otherwise.
 */
enum shca_tx shca_resp_refuse(struct shca_qp *qp, struct shca_msg *msg,
			      enum ib_wc_status status, bool event);

/* SEND_WITH_INV's invalidation of @rkey, in @qp's PD: 0 or -EINVAL. */
int shca_resp_invalidate(struct shca_qp *qp, u32 rkey);

/* The QP's access flags, then @msg->remote's rkey: 0 or -EACCES. */
int shca_resp_target(struct shca_qp *qp, struct shca_msg *msg,
		     struct shca_sgl *target, int access);

#endif /* SHCA_RESP_H */
