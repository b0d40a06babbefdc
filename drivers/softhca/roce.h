/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The RoCEv2 transport: messages to QPs of other hosts, as IBA packets
 * over UDP (net.c), beside loopback behind the same seam (transport.h).
 *
 * Transmit runs in the requester's engine.  Receive is split: the UDP
 * socket's softirq checks a packet (length, ICRC, headers, destination
 * GID and QP) and queues it on its QP, whose engine work executes it, so
 * a responder runs in the same context whichever transport brought the
 * message, and softirq does bounded work per packet.
 *
 * UD is one packet per message (roce_tx.c).  RC and UC are segmented to
 * the path MTU: the requester (roce_req.c) sends each WQE as the engine
 * takes it and, on RC, keeps a window of them until they are answered,
 * retransmitting from the first unacknowledged PSN (go-back-N); the
 * responder (roce_resp.c) takes packets in PSN order.
 */
#ifndef SHCA_ROCE_H
#define SHCA_ROCE_H

#include <linux/skbuff.h>

#include "resp.h"
#include "transport.h"
#include "wire.h"

struct shca_dev;
struct shca_qp;

/*
 * Memory (skb truesize) the packets a QP has queued before its engine
 * takes them may pin.  Bytes, not packets: a peer's small packets may sit
 * in buffers of 64 KiB.  1024 frames of the largest MTU (4096 bytes) in
 * the 8 KiB buffers they take.
 */
#define SHCA_ROCE_RX_QUEUE_BYTES (8U << 20)

/* RoCE has the default P_Key only. */
#define SHCA_DEFAULT_PKEY 0xffff

/* Where packet @i of @n sits in its message. */
static inline enum shca_pos shca_pkt_pos(u32 i, u32 n)
{
	if (n == 1)
		return SHCA_POS_ONLY;
	if (!i)
		return SHCA_POS_FIRST;
	return i == n - 1 ? SHCA_POS_LAST : SHCA_POS_MIDDLE;
}

/*
 * PSNs an RC QP may have sent beyond the first one not acknowledged: the
 * most its congestion window opens to.  Bounds what a QP sprays at a
 * receiver's backlog, and what one loss resends.
 */
#define SHCA_WIRE_WINDOW_PSNS 128
/* The least the congestion window closes to, on a timeout. */
#define SHCA_WIRE_CWND_MIN 8
/* A packet asks for an acknowledgment at least every so many PSNs. */
#define SHCA_WIRE_ACK_EVERY 32
/*
 * An RC QP's packets queued below it (qdisc, the NIC's ring) before its
 * requester stops sending, and the count at which it goes on
 * (roce_tx.c).
 */
#define SHCA_WIRE_TX_QUEUED 64
#define SHCA_WIRE_TX_RESUME 16

/* What the wire said of the window, for the requester's engine. */
enum shca_wire_verdict {
	SHCA_WIRE_NONE,		/* nothing to act on: a timeout resends */
	SHCA_WIRE_RESEND,	/* sequence NAK or a gap: resend from una */
	SHCA_WIRE_RNR,		/* RNR NAK: wait, then resend from una */
	SHCA_WIRE_RNR_WAITED,	/* the RNR wait is over */
};

/**
 * struct shca_wire_req - an RC requester's window on the wire
 * @verdict: enum shca_wire_verdict
 * @cause: the verdict a resend acts on, for the count of its packets
 * @gap: an answer beyond @una was seen (resend once per gap)
 * @rnr_timer: an RNR NAK's timer code
 * @una: the first PSN not acknowledged (or READ response not received)
 * @nxt: the next PSN to send: from @una to it, sent since the last go-back
 * @back: the PSN of the last go-back
 * @high: the PSN after the highest ever sent: below it, a packet is resent
 * @back_high: @high at the last go-back: until @una passes it, a sequence
 *	NAK of @back may be of a packet sent before the go-back
 * @recover: @high at the last loss: the window shrinks once per loss event
 * @cwnd: the PSNs that may be sent beyond @una (congestion window)
 * @ssthresh: below it @cwnd grows by the PSNs acknowledged, above it by
 *	one per window acknowledged
 * @grown: PSNs acknowledged towards @cwnd's next step above @ssthresh
 * @rd_atomic: READs and atomics in the window not answered yet
 * @timing: a PSN sent once is being timed: @timed_psn, sent at @timed_at,
 *	until @una passes it (a resend voids it: Karn's rule)
 * @timed_psn: the PSN timed
 * @timed_at: when it left
 * @srtt_us: the round trip, smoothed (RFC 6298), in us; 0: not measured
 * @rttvar_us: its mean deviation, in us
 * @resps: READ responses received in order, not placed yet
 *
 * The window's messages are the engine's taken WQEs (shca_req_ws()),
 * in PSN order; their PSNs run from the oldest's first to the QP's send
 * PSN, of which those before @nxt left.  Owned by the QP's engine, under
 * engine_lock.
 */
struct shca_wire_req {
	u8 verdict;
	u8 cause;
	bool gap;
	u8 rnr_timer;
	u32 una;
	u32 nxt;
	u32 back;
	u32 high;
	u32 back_high;
	u32 recover;
	u32 cwnd;
	u32 ssthresh;
	u32 grown;
	u32 rd_atomic;
	bool timing;
	u32 timed_psn;
	ktime_t timed_at;
	u32 srtt_us;
	u32 rttvar_us;
	struct sk_buff_head resps;
};

/* What a responder resource holds. */
enum shca_wire_res_kind {
	SHCA_WIRE_RES_NONE,
	SHCA_WIRE_RES_READ,
	SHCA_WIRE_RES_ATOMIC,
	SHCA_WIRE_RES_ATOMIC_WRITE,
	SHCA_WIRE_RES_FLUSH,
};

/**
 * struct shca_wire_res - a READ, atomic, ATOMIC WRITE or FLUSH a responder executed
 * @kind: enum shca_wire_res_kind
 * @psn: its first PSN
 * @npsn: PSNs it took (a READ: one per response packet)
 * @read: a READ's range: address, length and rkey (in lkey)
 * @orig: an atomic's result
 *
 * Kept to answer a duplicate (responder resources, IBA 9.7.5.1.2): a
 * READ again from the memory, from any of its PSNs to its end; an atomic
 * with the result it had, an ATOMIC WRITE with its empty response, never
 * executed twice.  An RC QP keeps its last max_dest_rd_atomic, in a table
 * of SHCA_MAX_RD_ATOMIC; a duplicate of anything else is dropped.
 */
struct shca_wire_res {
	u8 kind;
	u32 psn;
	u32 npsn;
	struct softhca_sge read;
	u64 orig;
};

/**
 * struct shca_wire_read - the READ a responder is answering
 * @active: responses remain to be sent
 * @psn: the PSN of the answer's first response
 * @n: its response packets
 * @sent: those sent
 * @range: what it reads: address, length and rkey (in lkey)
 *
 * A READ of up to 2 GiB is answered across runs of the engine, a budget
 * of bytes at a time and at the netdev's pace, as the requester sends;
 * the requests after it wait in the QP's packet queue, to be executed in
 * order once it is answered.
 */
struct shca_wire_read {
	bool active;
	u32 psn;
	u32 n;
	u32 sent;
	struct softhca_sge range;
};

/**
 * struct shca_wire_resp - an RC or UC responder's state on the wire
 * @msn: messages completed (the AETH's MSN)
 * @nak_sent: a sequence NAK went out for the QP's epsn: no more until it
 *	comes
 * @ack_due: an acknowledgment of epsn - 1 is owed (coalesced per run)
 * @read: the READ being answered
 * @res: RC: the responder resources, SHCA_MAX_RD_ATOMIC of them (the
 *	table is kept across resets, its contents are not)
 * @res_next: READs and atomics executed: the next one's slot, modulo the
 *	QP's max_dest_rd_atomic
 *
 * What a SEND or WRITE keeps between its packets is the responder's
 * (struct shca_resp).  Owned by the QP's engine, under engine_lock.
 */
struct shca_wire_resp {
	u32 msn;
	bool nak_sent;
	bool ack_due;
	struct shca_wire_read read;
	struct shca_wire_res *res;
	u32 res_next;
};

/**
 * struct shca_roce_qp - a QP's state on the wire
 * @rx_pkts: packets received, for the QP's engine run (roce_rx.c)
 * @rx_bytes: the memory they pin (their truesize), under @rx_pkts.lock
 * @req: RC: the requester's window on the wire (roce_req.c)
 * @resp: RC and UC: the responder of packets from the wire (roce_resp.c)
 * @tx_queued: RC and UC: packets sent and not yet freed by the layers
 *	below
 * @tx_ordered: of those, the ones whose order counts (all but ACKs)
 * @tx_cpu: the CPU the last of those left from
 * @tx_held: the QP stopped sending for them, and waits for a kick
 *
 * Made with the QP (struct shca_transport's qp_init), which holds it as
 * struct shca_qp's roce; nothing but the RoCEv2 transport looks inside.
 */
struct shca_roce_qp {
	struct sk_buff_head rx_pkts;
	unsigned int rx_bytes;
	struct shca_wire_req req;
	struct shca_wire_resp resp;
	atomic_t tx_queued;
	atomic_t tx_ordered;
	int tx_cpu;
	bool tx_held;
};

/* Runs, or schedules, the engine of a QP that packets were queued on. */
typedef void (*shca_roce_rx_ready_t)(struct shca_qp *qp);

enum shca_tx shca_roce_send(struct shca_qp *qp, struct shca_msg *msg);
void shca_roce_rx_init(shca_roce_rx_ready_t ready);
void shca_roce_recv(struct shca_dev *dev, struct sk_buff *skb);
bool shca_roce_rx_run(struct shca_qp *qp);
void shca_roce_rx_purge(struct shca_qp *qp);

/* Packet transmission, for the requester and the responder (roce_tx.c). */
int shca_roce_xmit(struct shca_qp *qp, const struct shca_av *av,
		   const struct shca_pkt *pkt, struct shca_sgl *src);
bool shca_roce_tx_hold(struct shca_qp *qp);

/* The RC and UC requester (roce_req.c). */
enum shca_tx shca_roce_req_send(struct shca_qp *qp, struct shca_msg *msg);
enum shca_wire_act shca_roce_req_act(struct shca_qp *qp, bool expired,
				     u8 *rnr_timer);
void shca_roce_req_resend(struct shca_qp *qp);
unsigned int shca_roce_req_need(struct shca_qp *qp,
				const struct shca_wire_slot *ws);
void shca_roce_req_service(struct shca_qp *qp, struct shca_wire_slot *ws,
			   struct shca_msg *msg, unsigned int need);
void shca_roce_req_fail(struct shca_qp *qp, struct shca_wire_slot *ws,
			enum ib_wc_status status);
bool shca_roce_req_busy(struct shca_qp *qp);
u32 shca_roce_req_una(struct shca_qp *qp);
u64 shca_roce_req_rto(struct shca_qp *qp);
void shca_roce_req_rx(struct shca_qp *qp, struct sk_buff *skb,
		      const struct shca_pkt *pkt, u32 data);
void shca_roce_req_init(struct shca_qp *qp);
void shca_roce_req_reset(struct shca_qp *qp);

/* The RC and UC responder (roce_resp.c). */
bool shca_roce_resp_rx(struct shca_qp *qp, const struct shca_pkt *pkt,
		       struct shca_sgl *payload);

/* What became of the READ being answered: see shca_roce_resp_read(). */
enum shca_rr_read {
	SHCA_RR_READ_DONE,
	SHCA_RR_READ_MORE,
	SHCA_RR_READ_HELD,
};

enum shca_rr_read shca_roce_resp_read(struct shca_qp *qp, u32 *budget);
void shca_roce_resp_ack(struct shca_qp *qp);
void shca_roce_resp_reset(struct shca_qp *qp);

#endif /* SHCA_ROCE_H */
