// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * softhca_rc_wire: RC and UC on the wire, the test playing the peer.
 *
 * A QP of the fixture's device is connected to a QP of a host that does
 * not exist (frame.h's peer, in the neighbour table), with a 256-byte
 * path MTU, so that a message of a few hundred bytes takes several
 * packets, and with PSNs just short of the 24-bit wrap, so that messages
 * cross it.  The test builds the peer's packets, gives them to the
 * netdev's receive path, and reads what the device sends back from the
 * netdev's capture.
 *
 * As a responder, the QP places a SEND or WRITE given packet by packet
 * and acknowledges it once, with the right PSN and MSN; NAKs a PSN gap
 * once however many packets follow it, and completes the message when it
 * is resent; acknowledges a duplicate again without executing it; answers
 * a READ, and a duplicate READ, from the memory; replays an atomic's
 * original value rather than executing it twice; answers RNR without a
 * receive WQE; and NAKs what it refuses, leaving the QP in the error
 * state.  On UC a gap abandons the message and the next one completes.
 * A duplicate READ is answered only as the responder remembers it (the
 * last max_dest_rd_atomic READs and atomics), for the rest of it; a READ
 * of megabytes is answered across runs of the engine, so that modify_qp
 * does not wait for all of it, and the requests after it wait for it.
 *
 * As a requester, the QP segments a SEND or WRITE with PSNs from sq_psn,
 * asks for an acknowledgment on the last packet only, completes when it
 * comes, and resends after the local ACK timeout until retry_cnt runs
 * out; resends from the PSN a sequence NAK names, after the timer an RNR
 * NAK names (not again for a late sequence NAK of the packets after it),
 * and completes with the status an error NAK names; places
 * READ responses, asks again for what a gap in them lost, and completes
 * an atomic with the value its acknowledgment carries.  Answers for no
 * PSN in flight, of the wrong kind, from a stranger, or for a QP with
 * nothing in flight change nothing.
 *
 * The requester keeps a window of messages in flight: they leave back to
 * back; coalesced ACKs, and answers that imply one, complete them in
 * order; the loss of any packet of a window resends from it on; a timeout
 * resends from the first unacknowledged PSN; READs and atomics stay
 * within max_rd_atomic, and a fenced WQE waits for them.  An answer and
 * the peer's next request, come together, complete in that order.
 *
 * A few cases connect with a 1024-byte path MTU instead, for roce_tx.c's
 * zero copy: payloads of 512 bytes or more leave as page fragments, of
 * the memory's own pages (held by the frames until they are gone) or of
 * copies; the netdev's capture keeps the fragments as the device built
 * them.
 *
 * The frames one injection carries reach the QP in order, and a QP
 * executes them in order; a duplicate request with AckReq set (a "ping")
 * is answered by an ACK once everything before it was executed, which
 * tells that nothing else was sent meanwhile.
 */

#include <linux/etherdevice.h>
#include <linux/kthread.h>
#include <linux/ktime.h>
#include <net/ipv6.h>
#include <rdma/ib_verbs.h>

#include "dev.h"
#include "dp.h"
#include "engine.h"
#include "fixture.h"
#include "frame.h"
#include "qp.h"
#include "roce.h"
#include "wire.h"

SHCA_SUITE_FIXTURE(shca_rcw_fx, "softhca_ktrcw");

#define SHCA_RCW_PEER_QPN 0x4321
#define SHCA_RCW_MTU 256
/*
 * The zero-copy cases' path MTU, and roce_tx.c's SHCA_ROCE_ZCOPY_MIN:
 * payloads of 512 bytes or more leave as page fragments.
 */
#define SHCA_RCW_ZC_MTU 1024
#define SHCA_RCW_ZC_MIN 512
/*
 * The QP's max_dest_rd_atomic: the atomics whose results its responder
 * keeps for duplicates.
 */
#define SHCA_RCW_ATOMIC_RES 16
/* The first PSNs: messages of three packets or more cross the wrap. */
#define SHCA_RCW_RQ_PSN 0xfffffe
#define SHCA_RCW_SQ_PSN 0xfffffd
/* The responder's min_rnr_timer, an RNR NAK's timer code. */
#define SHCA_RCW_MIN_RNR 3
/*
 * A local ACK timeout (4.096 us << 20, 4.3 s) no test takes to answer:
 * a message is sent once unless a test asks for it again.
 */
#define SHCA_RCW_SLOW 20
/* 4.096 us << 12: 16.8 ms, so that retries take milliseconds. */
#define SHCA_RCW_FAST 12
/* How long a test waits to see that nothing more is sent. */
#define SHCA_RCW_QUIET (HZ / 5)

/* AETH syndromes (IBA 9.7.5.1, table 44), written out apart from wire.h. */
#define SHCA_RCW_ACK 0x1f		/* ACK with no credit count */
#define SHCA_RCW_RNR(timer) (0x20 | (timer))
#define SHCA_RCW_NAK(code) (0x60 | (code))
#define SHCA_RCW_NAK_SEQ 0
#define SHCA_RCW_NAK_INV_REQ 1
#define SHCA_RCW_NAK_REM_ACCESS 2
#define SHCA_RCW_NAK_REM_OP 3

/* The opcodes of a message's packets, by enum shca_pos (IBA table 38). */
static const u8 shca_rcw_send_ops[] = {
	SHCA_OP_SEND_FIRST, SHCA_OP_SEND_MIDDLE,
	SHCA_OP_SEND_LAST, SHCA_OP_SEND_ONLY,
};

static const u8 shca_rcw_send_imm_ops[] = {
	SHCA_OP_SEND_FIRST, SHCA_OP_SEND_MIDDLE,
	SHCA_OP_SEND_LAST_WITH_IMMEDIATE, SHCA_OP_SEND_ONLY_WITH_IMMEDIATE,
};

static const u8 shca_rcw_write_ops[] = {
	SHCA_OP_RDMA_WRITE_FIRST, SHCA_OP_RDMA_WRITE_MIDDLE,
	SHCA_OP_RDMA_WRITE_LAST, SHCA_OP_RDMA_WRITE_ONLY,
};

static const u8 shca_rcw_write_imm_ops[] = {
	SHCA_OP_RDMA_WRITE_FIRST, SHCA_OP_RDMA_WRITE_MIDDLE,
	SHCA_OP_RDMA_WRITE_LAST_WITH_IMMEDIATE,
	SHCA_OP_RDMA_WRITE_ONLY_WITH_IMMEDIATE,
};

static const u8 shca_rcw_read_resp_ops[] = {
	SHCA_OP_RDMA_READ_RESPONSE_FIRST, SHCA_OP_RDMA_READ_RESPONSE_MIDDLE,
	SHCA_OP_RDMA_READ_RESPONSE_LAST, SHCA_OP_RDMA_READ_RESPONSE_ONLY,
};

/* The device's QP, connected to the peer's, and what the test saw. */
struct shca_rcw {
	struct shca_dp dp;		/* QP 0 (and CQ 0) only, but for UD */
	struct ib_mr *mr;		/* the peer's target, if any */
	struct net_device *ndev;
	union ib_gid gid;		/* the device's GID 0 */
	u32 qpn;
	u32 mtu;			/* the path MTU */
	u32 depth;			/* QP 0's send queue; 0: 16 */
	enum ib_event_type event;	/* the QP's last affiliated event */
	struct task_struct *storm;	/* a thread injecting frames, if any */
};

static struct shca_rcw shca_rcw;

static void shca_rcw_exit(struct kunit *test)
{
	struct shca_fixture *fx = test->priv;

	/* The suite's device: the next test's ACK timers are fixed again. */
	if (fx)
		to_shca_dev(fx->ibdev)->adaptive_ack = false;
	if (shca_rcw.storm)
		kthread_stop(shca_rcw.storm);
	if (shca_rcw.ndev) {
		shca_test_netdev_capture(shca_rcw.ndev, false);
		shca_test_netdev_sg(shca_rcw.ndev, true);
	}
	if (shca_rcw.mr)
		KUNIT_EXPECT_EQ(test, ib_dereg_mr(shca_rcw.mr), 0);
	shca_dp_teardown(&shca_rcw.dp);
	shca_rcw = (struct shca_rcw){};
}

/**
 * struct shca_rcw_msg - a message, as either side puts it on the wire
 * @transport: SHCA_TRANSPORT_RC or SHCA_TRANSPORT_UC
 * @ops: its packets' opcodes by position (shca_rcw_send_ops, ...)
 * @psn: its first packet's PSN
 * @data: its payload
 * @len: its length
 * @va: a WRITE's RETH: address
 * @rkey: a WRITE's RETH: remote key
 * @imm: immediate data
 * @ackreq: the last packet asks for an acknowledgment (RC requests)
 * @followed: the requester sent it with the next message posted right
 *	behind: its last packet leaves the ACK to that one's
 * @msn: a READ response's AETH: MSN
 */
struct shca_rcw_msg {
	u8 transport;
	const u8 *ops;
	u32 psn;
	const u8 *data;
	u32 len;
	u64 va;
	u32 rkey;
	u32 imm;
	bool ackreq;
	bool followed;
	u32 msn;
};

/* The READ responses of @len bytes from @data, from PSN @psn on, MSN 1. */
static struct shca_rcw_msg shca_rcw_read_resps(u32 psn, const u8 *data,
					       u32 len)
{
	return (struct shca_rcw_msg){
		.transport = SHCA_TRANSPORT_RC,
		.ops = shca_rcw_read_resp_ops,
		.psn = psn,
		.data = data,
		.len = len,
		.msn = 1,
	};
}

static u32 shca_rcw_psn(u32 psn, s32 i)
{
	return (psn + i) & SHCA_BTH_PSN;
}

/* PSN @a - PSN @b, as a signed 24-bit distance. */
static s32 shca_rcw_diff(u32 a, u32 b)
{
	return sign_extend32(a - b, 23);
}

/* PSN @i of the peer's requests, and of the device's. */
static u32 shca_rcw_rq(s32 i)
{
	return shca_rcw_psn(SHCA_RCW_RQ_PSN, i);
}

static u32 shca_rcw_sq(s32 i)
{
	return shca_rcw_psn(SHCA_RCW_SQ_PSN, i);
}

static u32 shca_rcw_npkts(const struct shca_rcw *w, u32 len)
{
	return len ? DIV_ROUND_UP(len, w->mtu) : 1;
}

static enum shca_pos shca_rcw_pos(u32 i, u32 n)
{
	if (n == 1)
		return SHCA_POS_ONLY;
	if (!i)
		return SHCA_POS_FIRST;
	return i == n - 1 ? SHCA_POS_LAST : SHCA_POS_MIDDLE;
}

static bool shca_rcw_last(enum shca_pos pos)
{
	return pos == SHCA_POS_LAST || pos == SHCA_POS_ONLY;
}

static bool shca_rcw_first(enum shca_pos pos)
{
	return pos == SHCA_POS_FIRST || pos == SHCA_POS_ONLY;
}

static void *shca_rcw_buf(struct kunit *test, size_t len)
{
	void *buf = kunit_kzalloc(test, len, GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, buf);
	return buf;
}

static void shca_rcw_event(struct ib_event *event, void *ctx)
{
	struct shca_rcw *w = ctx;

	WRITE_ONCE(w->event, event->event);
	atomic_inc(&w->dp.events);
	wake_up(&w->dp.wait);
}

static int shca_rcw_state(struct ib_qp *qp)
{
	struct ib_qp_init_attr init;
	struct ib_qp_attr attr;
	int ret = ib_query_qp(qp, &attr, IB_QP_STATE, &init);

	return ret ?: attr.qp_state;
}

/* QP 0 through INIT and RTR (rq_psn, path to the peer) to RTS (sq_psn). */
static void shca_rcw_connect(struct kunit *test, struct shca_rcw *w,
			     const struct shca_dp_opts *o)
{
	struct ib_qp *qp = w->dp.qp[0];
	bool rc = o->type == IB_QPT_RC;
	struct ib_qp_attr attr = {
		.qp_state = IB_QPS_INIT,
		.port_num = SHCA_PORT,
		.qp_access_flags = o->access,
	};
	int mask = IB_QP_STATE | IB_QP_PKEY_INDEX | IB_QP_PORT |
		   IB_QP_ACCESS_FLAGS;

	KUNIT_ASSERT_EQ(test, ib_modify_qp(qp, &attr, mask), 0);

	attr.qp_state = IB_QPS_RTR;
	attr.path_mtu = ib_mtu_int_to_enum(w->mtu);
	attr.dest_qp_num = SHCA_RCW_PEER_QPN;
	attr.rq_psn = SHCA_RCW_RQ_PSN;
	attr.max_dest_rd_atomic = SHCA_RCW_ATOMIC_RES;
	attr.min_rnr_timer = o->min_rnr_timer;
	shca_frame_peer_av(&attr.ah_attr);
	mask = IB_QP_STATE | IB_QP_AV | IB_QP_PATH_MTU | IB_QP_DEST_QPN |
	       IB_QP_RQ_PSN;
	if (rc)
		mask |= IB_QP_MAX_DEST_RD_ATOMIC | IB_QP_MIN_RNR_TIMER;
	KUNIT_ASSERT_EQ(test, ib_modify_qp(qp, &attr, mask), 0);

	attr.qp_state = IB_QPS_RTS;
	attr.sq_psn = SHCA_RCW_SQ_PSN;
	attr.timeout = o->timeout;
	attr.retry_cnt = o->retry_cnt;
	attr.rnr_retry = o->rnr_retry;
	attr.max_rd_atomic = o->max_rd_atomic ?: 16;
	mask = IB_QP_STATE | IB_QP_SQ_PSN;
	if (rc)
		mask |= IB_QP_TIMEOUT | IB_QP_RETRY_CNT | IB_QP_RNR_RETRY |
			IB_QP_MAX_QP_RD_ATOMIC;
	KUNIT_ASSERT_EQ(test, ib_modify_qp(qp, &attr, mask), 0);
}

static void shca_rcw_create(struct kunit *test, struct shca_rcw *w, int i,
			    enum ib_qp_type type)
{
	struct ib_cq_init_attr cq_attr = { .cqe = 64 };
	struct ib_qp_init_attr init = {
		.event_handler = shca_rcw_event,
		.qp_context = w,
		.cap = {
			.max_send_wr = w->depth ?: 16,
			.max_recv_wr = 16,
			.max_send_sge = SHCA_MAX_SGE,
			.max_recv_sge = 1,
		},
		.sq_sig_type = IB_SIGNAL_REQ_WR,
		.qp_type = type,
	};

	w->dp.cq[i] = ib_create_cq(w->dp.fx->ibdev, NULL, NULL, w, &cq_attr);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, w->dp.cq[i]);
	init.send_cq = w->dp.cq[i];
	init.recv_cq = w->dp.cq[i];
	w->dp.qp[i] = ib_create_qp(w->dp.pd, &init);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, w->dp.qp[i]);
}

/*
 * QP 0, of @o->type, with @o's access, timers and retry counts, connected
 * to the peer with a path MTU of @mtu bytes, and the netdev capturing
 * what it sends.
 */
static struct shca_rcw *shca_rcw_setup_mtu(struct kunit *test,
					   const struct shca_dp_opts *o,
					   u32 mtu)
{
	struct shca_fixture *fx = test->priv;
	struct shca_rcw *w = &shca_rcw;

	w->dp = (struct shca_dp){ .test = test, .fx = fx };
	w->mtu = mtu;
	init_waitqueue_head(&w->dp.wait);
	shca_frame_gid(test, fx, &w->gid);
	shca_frame_neigh(test, fx->ndev);
	w->dp.pd = ib_alloc_pd(fx->ibdev, IB_PD_UNSAFE_GLOBAL_RKEY);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, w->dp.pd);
	shca_rcw_create(test, w, 0, o->type);
	w->qpn = w->dp.qp[0]->qp_num;
	shca_rcw_connect(test, w, o);
	w->ndev = fx->ndev;
	shca_test_netdev_capture(w->ndev, true);
	return w;
}

static struct shca_rcw *shca_rcw_setup(struct kunit *test,
				       const struct shca_dp_opts *o)
{
	return shca_rcw_setup_mtu(test, o, SHCA_RCW_MTU);
}

/* An RC QP with shca_dp_rc's access and retries, and @timeout. */
static struct shca_rcw *shca_rcw_setup_rc(struct kunit *test, u8 timeout)
{
	struct shca_dp_opts o = shca_dp_rc;

	o.timeout = timeout;
	o.min_rnr_timer = SHCA_RCW_MIN_RNR;
	return shca_rcw_setup(test, &o);
}

/* @pkt from the peer to the QP, as a frame. */
static void shca_rcw_build(struct kunit *test, struct shca_rcw *w,
			   struct shca_pkt *pkt, const void *payload,
			   struct shca_frame *f)
{
	pkt->pkey = 0xffff;
	pkt->dqpn = w->qpn;
	shca_frame_build(test, w->ndev, &w->gid, pkt, payload, f);
}

/* @m as the peer sends it, a frame per packet in @f; returns how many. */
static u32 shca_rcw_segment(struct kunit *test, struct shca_rcw *w,
			    const struct shca_rcw_msg *m, struct shca_frame *f)
{
	u32 n = shca_rcw_npkts(w, m->len), i;
	struct shca_pkt pkt = {
		.va = m->va,
		.rkey = m->rkey,
		.dma_len = m->len,
		.imm = m->imm,
		.syndrome = SHCA_RCW_ACK,
		.msn = m->msn,
	};
	enum shca_pos pos;

	for (i = 0; i < n; i++) {
		pos = shca_rcw_pos(i, n);
		pkt.opcode = m->transport | m->ops[pos];
		pkt.psn = shca_rcw_psn(m->psn, i);
		pkt.ackreq = m->ackreq && shca_rcw_last(pos);
		pkt.paylen = min(w->mtu, m->len - i * w->mtu);
		shca_rcw_build(test, w, &pkt, m->data + i * w->mtu, &f[i]);
	}
	return n;
}

/* An acknowledgment (ACK or NAK) from the peer, as a frame. */
static void shca_rcw_answer_frame(struct kunit *test, struct shca_rcw *w,
				  u8 syndrome, u32 psn, struct shca_frame *f)
{
	struct shca_pkt pkt = {
		.opcode = SHCA_OPCODE(RC, ACKNOWLEDGE),
		.psn = psn,
		.syndrome = syndrome,
	};

	shca_rcw_build(test, w, &pkt, NULL, f);
}

/* An acknowledgment (ACK or NAK) from the peer, injected. */
static void shca_rcw_answer(struct kunit *test, struct shca_rcw *w,
			    u8 syndrome, u32 psn)
{
	struct shca_frame f;

	shca_rcw_answer_frame(test, w, syndrome, psn, &f);
	shca_frame_inject(test, w->ndev, &f, 1);
}

/* The next frame the device sent: to the peer, sealed, parsed. */
static void shca_rcw_sent(struct kunit *test, struct shca_rcw *w,
			  struct shca_frame *f, struct shca_pkt *pkt)
{
	shca_frame_capture(test, w->dp.fx, f);
	KUNIT_EXPECT_TRUE(test, ether_addr_equal(shca_frame_eth(f)->h_dest,
						 shca_frame_peer_mac));
	KUNIT_EXPECT_TRUE(test, ipv6_addr_equal(&shca_frame_ip6(f)->daddr,
						&shca_frame_peer));
	KUNIT_EXPECT_EQ(test, shca_frame_icrc(f), shca_frame_want_icrc(f));
	KUNIT_ASSERT_EQ(test, shca_pkt_parse(pkt, shca_frame_bth(f),
					     shca_frame_bth_len(f)), 0);
	KUNIT_EXPECT_EQ(test, pkt->dqpn, SHCA_RCW_PEER_QPN);
	KUNIT_EXPECT_EQ(test, pkt->pkey, 0xffff);
}

/* The next frame is an ACKNOWLEDGE with @syndrome, @psn and @msn. */
static void shca_rcw_expect_aeth(struct kunit *test, struct shca_rcw *w,
				 u8 syndrome, u32 psn, u32 msn)
{
	struct shca_frame f;
	struct shca_pkt pkt;

	shca_rcw_sent(test, w, &f, &pkt);
	KUNIT_EXPECT_EQ(test, pkt.opcode, SHCA_OPCODE(RC, ACKNOWLEDGE));
	KUNIT_EXPECT_EQ(test, pkt.syndrome, syndrome);
	KUNIT_EXPECT_EQ(test, pkt.psn, psn);
	KUNIT_EXPECT_EQ(test, pkt.msn, msn);
}

/*
 * Does @m's packet @i ask for an ACK?  If @m does (RC): the last one,
 * unless a message followed, and every SHCA_WIRE_ACK_EVERY-th PSN, and,
 * with @pause, this one, the last of a burst the congestion window cut
 * short.
 */
static bool shca_rcw_ackreq(struct shca_rcw *w, const struct shca_rcw_msg *m,
			    u32 i, bool pause)
{
	u32 next = shca_rcw_psn(m->psn, i + 1);

	return m->ackreq &&
	       ((!m->followed &&
		 shca_rcw_last(shca_rcw_pos(i, shca_rcw_npkts(w, m->len)))) ||
		!(next % SHCA_WIRE_ACK_EVERY) || pause);
}

/*
 * The next frame, in @f, is @m's packet @i: its opcode, PSN, AckReq as
 * shca_rcw_ackreq() has it, RETH on a WRITE's first, AETH on a READ
 * response's first and last, and the payload.
 */
static void shca_rcw_expect_pkt_at(struct kunit *test, struct shca_rcw *w,
				   const struct shca_rcw_msg *m, u32 i,
				   bool pause, struct shca_frame *f)
{
	enum shca_pos pos = shca_rcw_pos(i, shca_rcw_npkts(w, m->len));
	u32 off = i * w->mtu, len = min(w->mtu, m->len - off);
	struct shca_pkt pkt;
	bool aeth;

	shca_rcw_sent(test, w, f, &pkt);
	KUNIT_EXPECT_EQ(test, pkt.opcode, m->transport | m->ops[pos]);
	KUNIT_EXPECT_EQ(test, pkt.psn, shca_rcw_psn(m->psn, i));
	KUNIT_EXPECT_EQ(test, pkt.ackreq, shca_rcw_ackreq(w, m, i, pause));
	KUNIT_EXPECT_FALSE(test, pkt.se);
	if (m->ops == shca_rcw_write_ops && shca_rcw_first(pos)) {
		KUNIT_EXPECT_EQ(test, pkt.va, m->va);
		KUNIT_EXPECT_EQ(test, pkt.rkey, m->rkey);
		KUNIT_EXPECT_EQ(test, pkt.dma_len, m->len);
	}
	aeth = m->ops == shca_rcw_read_resp_ops && pos != SHCA_POS_MIDDLE;
	KUNIT_EXPECT_EQ(test, pkt.syndrome, aeth ? SHCA_RCW_ACK : 0);
	KUNIT_EXPECT_EQ(test, pkt.msn, aeth ? m->msn : 0);
	KUNIT_ASSERT_EQ(test, pkt.paylen, len);
	KUNIT_EXPECT_EQ(test, memcmp(shca_frame_bth(f) + pkt.hdr_len,
				     m->data + off, len), 0);
}

static void shca_rcw_expect_pkt(struct kunit *test, struct shca_rcw *w,
				const struct shca_rcw_msg *m, u32 i,
				struct shca_frame *f)
{
	shca_rcw_expect_pkt_at(test, w, m, i, false, f);
}

/*
 * The next frames are @m's packets @from to @to - 1; with @pause, the
 * congestion window stopped the burst there.
 */
static void shca_rcw_expect_range(struct kunit *test, struct shca_rcw *w,
				  const struct shca_rcw_msg *m, u32 from,
				  u32 to, bool pause)
{
	struct shca_frame f;
	u32 i;

	for (i = from; i < to; i++)
		shca_rcw_expect_pkt_at(test, w, m, i, pause && i == to - 1, &f);
}

/* The next frames are @m's packets from packet @from on. */
static void shca_rcw_expect_msg(struct kunit *test, struct shca_rcw *w,
				const struct shca_rcw_msg *m, u32 from)
{
	u32 n = shca_rcw_npkts(w, m->len), i;
	struct shca_frame f;

	for (i = from; i < n; i++)
		shca_rcw_expect_pkt(test, w, m, i, &f);
}

/* The device's counter @i (enum shca_counter), as `rdma statistic` reads it. */
static s64 shca_rcw_counter(struct kunit *test, struct shca_rcw *w,
			    unsigned int i)
{
	struct ib_device *ibdev = w->dp.fx->ibdev;
	struct rdma_hw_stats *stats;
	s64 n;

	stats = shca_alloc_hw_port_stats(ibdev, SHCA_PORT);
	KUNIT_ASSERT_NOT_NULL(test, stats);
	shca_get_hw_stats(ibdev, stats, SHCA_PORT, 0);
	n = stats->value[i];
	rdma_free_hw_stats_struct(stats);
	return n;
}

/* A ping: a SEND_ONLY with no payload for @epsn - 1, AckReq set. */
static void shca_rcw_ping(struct kunit *test, struct shca_rcw *w, u32 epsn,
			  struct shca_frame *f)
{
	struct shca_pkt pkt = {
		.opcode = SHCA_OPCODE(RC, SEND_ONLY),
		.psn = shca_rcw_psn(epsn, -1),
		.ackreq = true,
	};

	shca_rcw_build(test, w, &pkt, NULL, f);
}

/*
 * Every packet injected before was executed, and the frames it made the
 * responder send were taken: the ping's ACK, of @epsn - 1 with @msn, is
 * the next frame.
 */
static void shca_rcw_sync(struct kunit *test, struct shca_rcw *w, u32 epsn,
			  u32 msn)
{
	struct shca_frame f;

	shca_rcw_ping(test, w, epsn, &f);
	shca_frame_inject(test, w->ndev, &f, 1);
	shca_rcw_expect_aeth(test, w, SHCA_RCW_ACK, shca_rcw_psn(epsn, -1),
			     msn);
}

/*
 * @n frames reach the QP while its engine is held, as a run in progress
 * holds it, and wait in its queue; the caller releases the engine.
 */
static void shca_rcw_inject_held(struct kunit *test, struct shca_rcw *w,
				 const struct shca_frame *f, u32 n)
{
	struct shca_qp *qp = to_shca_qp(w->dp.qp[0]);
	unsigned long end = jiffies + 5 * HZ;

	shca_engine_lock(qp);
	shca_frame_inject(test, w->ndev, f, n);
	while (skb_queue_len_lockless(&qp->roce->rx_pkts) < n &&
	       time_before(jiffies, end))
		usleep_range(100, 1000);
	KUNIT_EXPECT_EQ(test, skb_queue_len_lockless(&qp->roce->rx_pkts), n);
}

/* @n frames reach the QP in one batch: one run of its engine takes them. */
static void shca_rcw_inject_batch(struct kunit *test, struct shca_rcw *w,
				  const struct shca_frame *f, u32 n)
{
	shca_rcw_inject_held(test, w, f, n);
	shca_engine_unlock(to_shca_qp(w->dp.qp[0]));
}

/*
 * The requester's engine held while the test posts several WQEs, as a
 * run in progress holds it: the run after shca_rcw_release() finds them
 * all posted, and each message but the last is followed.
 */
static void shca_rcw_hold(struct shca_rcw *w)
{
	shca_engine_lock(to_shca_qp(w->dp.qp[0]));
}

static void shca_rcw_release(struct shca_rcw *w)
{
	shca_engine_unlock(to_shca_qp(w->dp.qp[0]));
}

/* Nothing more leaves for SHCA_RCW_QUIET. */
static void shca_rcw_quiet(struct kunit *test, struct shca_rcw *w)
{
	struct shca_frame f;
	struct shca_pkt pkt;

	if (!shca_frame_sent(test, w->ndev, &f, SHCA_RCW_QUIET))
		return;
	shca_pkt_parse(&pkt, shca_frame_bth(&f), shca_frame_bth_len(&f));
	KUNIT_FAIL(test, "sent opcode %#x PSN %#x syndrome %#x", pkt.opcode,
		   pkt.psn, pkt.syndrome);
}

/* Waits for the completion of @wr_id: its status, and the wc in @wc. */
static enum ib_wc_status shca_rcw_wc(struct kunit *test, struct shca_rcw *w,
				     u64 wr_id, struct ib_wc *wc)
{
	KUNIT_ASSERT_TRUE(test, shca_dp_poll(&w->dp, 0, wc));
	KUNIT_EXPECT_EQ(test, wc->wr_id, wr_id);
	KUNIT_EXPECT_PTR_EQ(test, wc->qp, w->dp.qp[0]);
	return wc->status;
}

/* --- The responder ------------------------------------------------- */

/* The peer's first SEND: 8 bytes, asking for an ACK. */
static struct shca_pkt shca_rcw_send8(void)
{
	return (struct shca_pkt){
		.opcode = SHCA_OPCODE(RC, SEND_ONLY),
		.psn = shca_rcw_rq(0),
		.ackreq = true,
		.paylen = 8,
	};
}

/* A message of three packets to the responder, and what it consumes. */
struct shca_rcw_msg_case {
	const char *name;
	bool write;
	bool imm;
};

static const struct shca_rcw_msg_case shca_rcw_msg_cases[] = {
	{ "send", false, false },
	{ "send-imm", false, true },
	{ "write", true, false },
	{ "write-imm", true, true },
};

static void shca_rcw_msg_desc(const struct shca_rcw_msg_case *c, char *desc)
{
	strscpy(desc, c->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(shca_rcw_msg, shca_rcw_msg_cases, shca_rcw_msg_desc);

/*
 * FIRST, MIDDLE and LAST (with pad) are placed in the receive buffer or
 * the MR whole, and acknowledged once, by an ACK of the LAST's PSN with
 * MSN 1; a SEND, or a WRITE with immediate, completes a receive.
 */
static void shca_rcw_resp_msg(struct kunit *test)
{
	const struct shca_rcw_msg_case *c = test->param_value;
	struct shca_rcw *w = shca_rcw_setup_rc(test, SHCA_RCW_SLOW);
	u32 len = 3 * SHCA_RCW_MTU - 55;
	u8 *src = shca_rcw_buf(test, len), *dst = shca_rcw_buf(test, len + 2);
	struct shca_rcw_msg m = {
		.transport = SHCA_TRANSPORT_RC,
		.psn = shca_rcw_rq(0),
		.data = src,
		.len = len,
		.imm = 0x5151abcd,
		.ackreq = true,
	};
	struct shca_frame f[3];
	struct ib_wc wc;

	shca_dp_fill(src, len, 1);
	if (c->write) {
		w->mr = shca_dp_frwr(&w->dp, 0, dst, len + 2,
				     IB_ACCESS_REMOTE_WRITE |
				     IB_ACCESS_LOCAL_WRITE);
		m.ops = c->imm ? shca_rcw_write_imm_ops : shca_rcw_write_ops;
		m.va = (uintptr_t)dst + 1;
		m.rkey = w->mr->rkey;
		if (c->imm)
			KUNIT_ASSERT_EQ(test, shca_dp_post_recv(&w->dp, 0, 7,
								NULL, 0), 0);
	} else {
		m.ops = c->imm ? shca_rcw_send_imm_ops : shca_rcw_send_ops;
		KUNIT_ASSERT_EQ(test, shca_dp_post_recv(&w->dp, 0, 7, dst + 1,
							len + 1), 0);
	}
	KUNIT_ASSERT_EQ(test, shca_rcw_segment(test, w, &m, f), 3);
	shca_frame_inject(test, w->ndev, f, 3);

	shca_rcw_expect_aeth(test, w, SHCA_RCW_ACK, shca_rcw_rq(2), 1);
	KUNIT_EXPECT_EQ(test, memcmp(dst + 1, src, len), 0);
	KUNIT_EXPECT_EQ(test, dst[0] | dst[len + 1], 0);
	if (!c->write || c->imm) {
		KUNIT_EXPECT_EQ(test, shca_rcw_wc(test, w, 7, &wc),
				IB_WC_SUCCESS);
		KUNIT_EXPECT_EQ(test, wc.opcode, c->write ?
				IB_WC_RECV_RDMA_WITH_IMM : IB_WC_RECV);
		KUNIT_EXPECT_EQ(test, wc.byte_len, len);
		KUNIT_EXPECT_EQ(test, wc.src_qp, SHCA_RCW_PEER_QPN);
		KUNIT_EXPECT_EQ(test, !!(wc.wc_flags & IB_WC_WITH_IMM),
				c->imm);
		if (c->imm)
			KUNIT_EXPECT_EQ(test, be32_to_cpu(wc.ex.imm_data),
					m.imm);
	}
	/* That ACK was the only frame. */
	shca_rcw_sync(test, w, shca_rcw_rq(3), 1);
	KUNIT_EXPECT_TRUE(test, shca_dp_cq_empty(&w->dp, 0));
}

/*
 * A lost MIDDLE: the next packet is NAKed (PSN sequence error, for the
 * lost PSN), the ones after it are not, and nothing is placed; each is
 * counted as out of sequence.  The message resent from the gap completes.
 */
static void shca_rcw_resp_gap(struct kunit *test)
{
	struct shca_rcw *w = shca_rcw_setup_rc(test, SHCA_RCW_SLOW);
	u32 len = 4 * SHCA_RCW_MTU - 100;
	u8 *src = shca_rcw_buf(test, len), *dst = shca_rcw_buf(test, len);
	struct shca_rcw_msg m = {
		.transport = SHCA_TRANSPORT_RC,
		.ops = shca_rcw_send_ops,
		.psn = shca_rcw_rq(0),
		.data = src,
		.len = len,
		.ackreq = true,
	};
	struct shca_frame f[4], lost[6];
	struct ib_wc wc;
	s64 oos, dup;

	shca_dp_fill(src, len, 2);
	KUNIT_ASSERT_EQ(test, shca_dp_post_recv(&w->dp, 0, 3, dst, len), 0);
	KUNIT_ASSERT_EQ(test, shca_rcw_segment(test, w, &m, f), 4);
	lost[0] = f[0];
	lost[1] = f[2];
	lost[2] = f[3];
	lost[3] = f[3];
	lost[4] = f[2];
	shca_rcw_ping(test, w, shca_rcw_rq(1), &lost[5]);
	oos = shca_rcw_counter(test, w, SHCA_CNT_OUT_OF_SEQUENCE);
	dup = shca_rcw_counter(test, w, SHCA_CNT_DUPLICATE_REQUEST);
	shca_frame_inject(test, w->ndev, lost, 6);

	shca_rcw_expect_aeth(test, w, SHCA_RCW_NAK(SHCA_RCW_NAK_SEQ),
			     shca_rcw_rq(1), 0);
	/* The ping's ACK: no second NAK came before it. */
	shca_rcw_expect_aeth(test, w, SHCA_RCW_ACK, shca_rcw_rq(0), 0);
	KUNIT_EXPECT_EQ(test, shca_rcw_counter(test, w,
					       SHCA_CNT_OUT_OF_SEQUENCE),
			oos + 4);
	KUNIT_EXPECT_EQ(test, shca_rcw_counter(test, w,
					       SHCA_CNT_DUPLICATE_REQUEST),
			dup + 1);
	KUNIT_EXPECT_TRUE(test, shca_dp_cq_empty(&w->dp, 0));
	KUNIT_EXPECT_EQ(test, shca_rcw_state(w->dp.qp[0]), IB_QPS_RTS);

	shca_frame_inject(test, w->ndev, &f[1], 3);
	shca_rcw_expect_aeth(test, w, SHCA_RCW_ACK, shca_rcw_rq(3), 1);
	KUNIT_EXPECT_EQ(test, shca_rcw_wc(test, w, 3, &wc), IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(test, wc.byte_len, len);
	KUNIT_EXPECT_EQ(test, memcmp(dst, src, len), 0);
	shca_rcw_sync(test, w, shca_rcw_rq(4), 1);
}

/*
 * A SEND acknowledged and received again (its ACK was lost) is
 * acknowledged again, and consumes no second receive: the next SEND
 * gets it.  A duplicate that does not ask is acknowledged too: the
 * packet of the resent message that asked may have been lost again.
 * Each duplicate packet is counted.
 */
static void shca_rcw_resp_dup_send(struct kunit *test)
{
	struct shca_rcw *w = shca_rcw_setup_rc(test, SHCA_RCW_SLOW);
	u8 *src = shca_rcw_buf(test, 400), *dst = shca_rcw_buf(test, 800);
	struct shca_rcw_msg m = {
		.transport = SHCA_TRANSPORT_RC,
		.ops = shca_rcw_send_ops,
		.psn = shca_rcw_rq(0),
		.data = src,
		.len = 300,
		.ackreq = true,
	};
	struct shca_frame f[2], next;
	struct ib_wc wc;
	s64 dup;

	shca_dp_fill(src, 400, 3);
	KUNIT_ASSERT_EQ(test, shca_dp_post_recv(&w->dp, 0, 1, dst, 400), 0);
	KUNIT_ASSERT_EQ(test, shca_dp_post_recv(&w->dp, 0, 2, dst + 400, 400),
			0);
	KUNIT_ASSERT_EQ(test, shca_rcw_segment(test, w, &m, f), 2);
	shca_frame_inject(test, w->ndev, f, 2);
	shca_rcw_expect_aeth(test, w, SHCA_RCW_ACK, shca_rcw_rq(1), 1);
	KUNIT_EXPECT_EQ(test, shca_rcw_wc(test, w, 1, &wc), IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(test, wc.byte_len, 300);

	dup = shca_rcw_counter(test, w, SHCA_CNT_DUPLICATE_REQUEST);
	/* In one batch: one ACK for its run. */
	shca_rcw_inject_batch(test, w, f, 2);
	shca_rcw_expect_aeth(test, w, SHCA_RCW_ACK, shca_rcw_rq(1), 1);
	KUNIT_EXPECT_TRUE(test, shca_dp_cq_empty(&w->dp, 0));
	/* The FIRST alone, which does not ask. */
	KUNIT_ASSERT_FALSE(test, ((struct shca_bth *)shca_frame_bth(&f[0]))->psn &
			   cpu_to_be32(SHCA_BTH_ACKREQ));
	shca_frame_inject(test, w->ndev, f, 1);
	shca_rcw_expect_aeth(test, w, SHCA_RCW_ACK, shca_rcw_rq(1), 1);
	KUNIT_EXPECT_TRUE(test, shca_dp_cq_empty(&w->dp, 0));
	KUNIT_EXPECT_EQ(test, shca_rcw_counter(test, w,
					       SHCA_CNT_DUPLICATE_REQUEST),
			dup + 3);

	m.psn = shca_rcw_rq(2);
	m.data = src + 300;
	m.len = 100;
	KUNIT_ASSERT_EQ(test, shca_rcw_segment(test, w, &m, &next), 1);
	shca_frame_inject(test, w->ndev, &next, 1);
	shca_rcw_expect_aeth(test, w, SHCA_RCW_ACK, shca_rcw_rq(2), 2);
	KUNIT_EXPECT_EQ(test, shca_rcw_wc(test, w, 2, &wc), IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(test, wc.byte_len, 100);
	KUNIT_EXPECT_EQ(test, memcmp(dst, src, 300), 0);
	KUNIT_EXPECT_TRUE(test, !memchr_inv(dst + 300, 0, 100));
	KUNIT_EXPECT_EQ(test, memcmp(dst + 400, src + 300, 100), 0);
}

/* A READ request for @len bytes at @va, for PSN @psn. */
static void shca_rcw_read_req(struct kunit *test, struct shca_rcw *w,
			      u32 psn, const u8 *va, u32 len)
{
	struct shca_pkt pkt = {
		.opcode = SHCA_OPCODE(RC, RDMA_READ_REQUEST),
		.psn = psn,
		.va = (uintptr_t)va,
		.rkey = w->dp.pd->unsafe_global_rkey,
		.dma_len = len,
	};
	struct shca_frame f;

	shca_rcw_build(test, w, &pkt, NULL, &f);
	shca_frame_inject(test, w->ndev, &f, 1);
}

/*
 * A READ of 700 bytes is answered by FIRST, MIDDLE and LAST, from the
 * request's PSN on, with the memory's bytes; so is its duplicate, and
 * one asking for the rest from the MIDDLE's PSN (as after a lost
 * response), which answers from there.  The MSN counts the READ once.
 */
static void shca_rcw_resp_read(struct kunit *test)
{
	struct shca_rcw *w = shca_rcw_setup_rc(test, SHCA_RCW_SLOW);
	u8 *mem = shca_rcw_buf(test, 704);
	struct shca_rcw_msg m = shca_rcw_read_resps(shca_rcw_rq(0), mem + 3,
						    700);

	shca_dp_fill(mem, 704, 4);
	shca_rcw_read_req(test, w, shca_rcw_rq(0), mem + 3, 700);
	shca_rcw_expect_msg(test, w, &m, 0);
	shca_rcw_read_req(test, w, shca_rcw_rq(0), mem + 3, 700);
	shca_rcw_expect_msg(test, w, &m, 0);

	m.psn = shca_rcw_rq(1);
	m.data = mem + 3 + SHCA_RCW_MTU;
	m.len = 700 - SHCA_RCW_MTU;
	shca_rcw_read_req(test, w, shca_rcw_rq(1), m.data, m.len);
	shca_rcw_expect_msg(test, w, &m, 0);
	shca_rcw_sync(test, w, shca_rcw_rq(3), 1);
}

/*
 * The page fragments of @m's packet @i on the zero-copy path, its bytes
 * at @m->data: none when the payload is short of SHCA_RCW_ZC_MIN, else
 * one per page it spans, lent or copied.
 */
static u32 shca_rcw_frags(struct shca_rcw *w, const struct shca_rcw_msg *m,
			  u32 i)
{
	u32 off = i * w->mtu, len = min(w->mtu, m->len - off);

	if (len < SHCA_RCW_ZC_MIN)
		return 0;
	return DIV_ROUND_UP(offset_in_page(m->data + off) + len, PAGE_SIZE);
}

/* ... and of all its packets. */
static u32 shca_rcw_msg_frags(struct shca_rcw *w,
			      const struct shca_rcw_msg *m)
{
	u32 n = shca_rcw_npkts(w, m->len), i, frags = 0;

	for (i = 0; i < n; i++)
		frags += shca_rcw_frags(w, m, i);
	return frags;
}

/*
 * The references to @buf's page (its compound page's) once the frames in
 * flight hold @refs of them, a lent fragment each, or after 5 s.
 */
static int shca_rcw_wait_refs(const void *buf, u32 refs)
{
	struct page *page = virt_to_page(buf);
	unsigned long end = jiffies + 5 * HZ;

	while (page_count(page) < refs + 1 && time_before(jiffies, end))
		usleep_range(1000, 10000);
	return page_count(page);
}

/*
 * @f, the frame of @m's packet @i, has a fragment per page its payload
 * spans, if any, and a last one for the pad and the ICRC.
 */
static void shca_rcw_expect_frags(struct kunit *test, struct shca_rcw *w,
				  const struct shca_rcw_msg *m, u32 i,
				  const struct shca_frame *f)
{
	u32 frags = shca_rcw_frags(w, m, i);

	KUNIT_EXPECT_EQ(test, f->nr_frags, frags ? frags + 1 : 0);
}

/*
 * At a 1024-byte path MTU, a READ of 2500 bytes of page-allocator memory
 * is answered from the memory's own pages: the FIRST (across a page
 * boundary) and the MIDDLE hold them as fragments, the short LAST a
 * copy, every payload the memory's bytes.  Once the frames are gone, no
 * page is held.
 */
static void shca_rcw_resp_read_zcopy(struct kunit *test)
{
	struct shca_dp_opts o = shca_dp_rc;
	u8 *mem = shca_rcw_buf(test, 3 * PAGE_SIZE);
	struct shca_rcw_msg m = shca_rcw_read_resps(shca_rcw_rq(0),
						    mem + PAGE_SIZE - 100,
						    2500);
	struct shca_rcw *w;
	struct shca_frame f;
	u32 i;

	/* Above kmalloc's caches: pages of its own. */
	KUNIT_ASSERT_FALSE(test, PageSlab(virt_to_page(mem)));
	o.timeout = SHCA_RCW_SLOW;
	w = shca_rcw_setup_mtu(test, &o, SHCA_RCW_ZC_MTU);
	shca_dp_fill(mem, 3 * PAGE_SIZE, 12);
	shca_rcw_read_req(test, w, shca_rcw_rq(0), m.data, m.len);
	KUNIT_EXPECT_EQ(test, shca_rcw_wait_refs(mem, 3), 4);
	for (i = 0; i < 3; i++) {
		shca_rcw_expect_pkt(test, w, &m, i, &f);
		shca_rcw_expect_frags(test, w, &m, i, &f);
	}
	shca_rcw_sync(test, w, shca_rcw_rq(3), 1);
	KUNIT_EXPECT_EQ(test, page_count(virt_to_page(mem)), 1);
}

/* An atomic request from the peer, as a frame. */
static void shca_rcw_atomic_req(struct kunit *test, struct shca_rcw *w,
				u8 op, u32 psn, u64 *va, u32 rkey,
				u64 swap_add, u64 compare,
				struct shca_frame *f)
{
	struct shca_pkt pkt = {
		.opcode = SHCA_TRANSPORT_RC | op,
		.psn = psn,
		.va = (uintptr_t)va,
		.rkey = rkey,
		.swap_add = swap_add,
		.compare = compare,
	};

	shca_rcw_build(test, w, &pkt, NULL, f);
}

/* The next frame is an ATOMIC_ACKNOWLEDGE for @psn: @orig, and @msn. */
static void shca_rcw_expect_atomic_ack(struct kunit *test,
				       struct shca_rcw *w, u32 psn, u64 orig,
				       u32 msn)
{
	struct shca_frame f;
	struct shca_pkt pkt;

	shca_rcw_sent(test, w, &f, &pkt);
	KUNIT_EXPECT_EQ(test, pkt.opcode, SHCA_OPCODE(RC, ATOMIC_ACKNOWLEDGE));
	KUNIT_EXPECT_EQ(test, pkt.syndrome, SHCA_RCW_ACK);
	KUNIT_EXPECT_EQ(test, pkt.psn, psn);
	KUNIT_EXPECT_EQ(test, pkt.msn, msn);
	KUNIT_EXPECT_EQ(test, pkt.orig, orig);
}

/* The next frame answers an ATOMIC WRITE at @psn: an empty READ response. */
static void shca_rcw_expect_atomic_write_ack(struct kunit *test,
					     struct shca_rcw *w, u32 psn,
					     u32 msn)
{
	struct shca_frame f;
	struct shca_pkt pkt;

	shca_rcw_sent(test, w, &f, &pkt);
	KUNIT_EXPECT_EQ(test, pkt.opcode,
			SHCA_OPCODE(RC, RDMA_READ_RESPONSE_ONLY));
	KUNIT_EXPECT_EQ(test, pkt.syndrome, SHCA_RCW_ACK);
	KUNIT_EXPECT_EQ(test, pkt.psn, psn);
	KUNIT_EXPECT_EQ(test, pkt.msn, msn);
	KUNIT_EXPECT_EQ(test, pkt.paylen, 0);
}

/*
 * An ATOMIC WRITE (IBA 1.5) from the peer: its 8 bytes land whole, and a
 * READ response with no data answers it, its MSN counting it.  A
 * duplicate with other bytes is answered again, not executed: the memory
 * keeps the first.  One at an address not 8-byte aligned is NAKed as an
 * invalid request, and writes nothing.
 */
static void shca_rcw_resp_atomic_write(struct kunit *test)
{
	struct shca_rcw *w = shca_rcw_setup_rc(test, SHCA_RCW_SLOW);
	u64 *target = shca_rcw_buf(test, 16);
	u8 *src = shca_rcw_buf(test, 8), *other = shca_rcw_buf(test, 8);
	u8 *before = shca_rcw_buf(test, 16);
	struct shca_pkt pkt = {
		.opcode = SHCA_OPCODE(RC, ATOMIC_WRITE),
		.psn = shca_rcw_rq(0),
		.ackreq = true,
		.dma_len = 8,
		.paylen = 8,
	};
	struct shca_frame f;

	shca_dp_fill(target, 16, 20);
	shca_dp_fill(src, 8, 21);
	shca_dp_fill(other, 8, 22);
	w->mr = shca_dp_frwr(&w->dp, 0, target, 16, IB_ACCESS_REMOTE_WRITE |
			     IB_ACCESS_LOCAL_WRITE);
	pkt.va = (uintptr_t)target;
	pkt.rkey = w->mr->rkey;
	shca_rcw_build(test, w, &pkt, src, &f);
	shca_frame_inject(test, w->ndev, &f, 1);
	shca_rcw_expect_atomic_write_ack(test, w, shca_rcw_rq(0), 1);
	KUNIT_EXPECT_EQ(test, memcmp(target, src, 8), 0);

	shca_rcw_build(test, w, &pkt, other, &f);
	shca_frame_inject(test, w->ndev, &f, 1);
	shca_rcw_expect_atomic_write_ack(test, w, shca_rcw_rq(0), 1);
	KUNIT_EXPECT_EQ(test, memcmp(target, src, 8), 0);

	memcpy(before, target, 16);
	pkt.psn = shca_rcw_rq(1);
	pkt.va = (uintptr_t)target + 4;
	shca_rcw_build(test, w, &pkt, other, &f);
	shca_frame_inject(test, w->ndev, &f, 1);
	shca_rcw_expect_aeth(test, w, SHCA_RCW_NAK(SHCA_RCW_NAK_INV_REQ),
			     shca_rcw_rq(1), 1);
	KUNIT_EXPECT_EQ(test, memcmp(target, before, 16), 0);
}

/*
 * A FLUSH (IBA 1.5: FETH, RETH, no data) to a device of a kernel before
 * 6.2, where no QP may allow one (ib_core has no FLUSH access flags): it
 * is NAKed as an invalid request, as rdma_rxe NAKs one its QP does not
 * allow.  On 6.12 the guest's flush tests take it through.
 */
static void shca_rcw_resp_flush(struct kunit *test)
{
	struct shca_rcw *w;
	u64 *target;
	struct shca_pkt pkt = {
		.opcode = SHCA_OPCODE(RC, FLUSH),
		.ackreq = true,
		.dma_len = 16,
		.plt = SHCA_FLUSH_GLOBAL,
		.sel = SHCA_FLUSH_RANGE,
	};
	struct shca_frame f;

	if (SHCA_ACCESS_FLUSH_GLOBAL)
		kunit_skip(test, "this kernel allows FLUSH: the guest tests it");
	w = shca_rcw_setup_rc(test, SHCA_RCW_SLOW);
	target = shca_rcw_buf(test, 16);
	w->mr = shca_dp_frwr(&w->dp, 0, target, 16, IB_ACCESS_REMOTE_WRITE |
			     IB_ACCESS_LOCAL_WRITE);
	pkt.psn = shca_rcw_rq(0);
	pkt.va = (uintptr_t)target;
	pkt.rkey = w->mr->rkey;
	shca_rcw_build(test, w, &pkt, NULL, &f);
	KUNIT_EXPECT_EQ(test, f.len, SHCA_FRAME_BTH_OFF + 32 + SHCA_ICRC_LEN);
	shca_frame_inject(test, w->ndev, &f, 1);
	shca_rcw_expect_aeth(test, w, SHCA_RCW_NAK(SHCA_RCW_NAK_INV_REQ),
			     shca_rcw_rq(0), 0);
}

/*
 * FETCH_ADD and CMP_SWAP are executed once: their duplicates get the
 * original value the first execution returned, and the memory is as the
 * first left it.  The ACK a SEND before them owes goes first, and the
 * atomic acknowledgment's MSN counts the atomic.  Of 16 more atomics,
 * the results of the last 16, the QP's max_dest_rd_atomic, are
 * remembered (not the 128 the device could keep): a duplicate of an
 * older one is not answered, and counted as rx_drop_dup_atomic.
 */
static void shca_rcw_resp_atomic(struct kunit *test)
{
	struct shca_rcw *w = shca_rcw_setup_rc(test, SHCA_RCW_SLOW);
	struct shca_frame f[SHCA_RCW_ATOMIC_RES], cas;
	u64 *target = shca_rcw_buf(test, 16);
	u8 *src = shca_rcw_buf(test, 8), *dst = shca_rcw_buf(test, 8);
	struct shca_pkt pkt = shca_rcw_send8();
	struct ib_wc wc;
	u32 rkey, i;
	s64 dups;

	*target = 100;
	w->mr = shca_dp_frwr(&w->dp, 0, target, 16, IB_ACCESS_REMOTE_ATOMIC |
			     IB_ACCESS_LOCAL_WRITE);
	rkey = w->mr->rkey;
	shca_dp_fill(src, 8, 11);
	KUNIT_ASSERT_EQ(test, shca_dp_post_recv(&w->dp, 0, 9, dst, 8), 0);
	shca_rcw_build(test, w, &pkt, src, &f[0]);
	shca_rcw_atomic_req(test, w, SHCA_OP_FETCH_ADD, shca_rcw_rq(1), target,
			    rkey, 5, 0, &f[1]);
	shca_frame_inject(test, w->ndev, f, 2);
	shca_rcw_expect_aeth(test, w, SHCA_RCW_ACK, shca_rcw_rq(0), 1);
	shca_rcw_expect_atomic_ack(test, w, shca_rcw_rq(1), 100, 2);
	KUNIT_EXPECT_EQ(test, *target, 105);
	KUNIT_EXPECT_EQ(test, shca_rcw_wc(test, w, 9, &wc), IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(test, memcmp(dst, src, 8), 0);

	shca_frame_inject(test, w->ndev, &f[1], 1);
	shca_rcw_expect_atomic_ack(test, w, shca_rcw_rq(1), 100, 2);
	KUNIT_EXPECT_EQ(test, *target, 105);

	/* Executed again, it would find 7, not 105, and swap nothing. */
	shca_rcw_atomic_req(test, w, SHCA_OP_COMPARE_SWAP, shca_rcw_rq(2),
			    target, rkey, 7, 105, &cas);
	for (i = 0; i < 2; i++) {
		shca_frame_inject(test, w->ndev, &cas, 1);
		shca_rcw_expect_atomic_ack(test, w, shca_rcw_rq(2), 105, 3);
		KUNIT_EXPECT_EQ(test, *target, 7);
	}

	for (i = 0; i < SHCA_RCW_ATOMIC_RES; i++)
		shca_rcw_atomic_req(test, w, SHCA_OP_FETCH_ADD,
				    shca_rcw_rq(3 + i), target, rkey, 1, 0,
				    &f[i]);
	shca_frame_inject(test, w->ndev, f, SHCA_RCW_ATOMIC_RES);
	for (i = 0; i < SHCA_RCW_ATOMIC_RES; i++)
		shca_rcw_expect_atomic_ack(test, w, shca_rcw_rq(3 + i), 7 + i,
					   4 + i);
	KUNIT_EXPECT_EQ(test, *target, 7 + SHCA_RCW_ATOMIC_RES);

	/* RQ(1) and RQ(2) are forgotten, RQ(3) is not. */
	dups = shca_frame_drops(test, w->dp.fx->ibdev, SHCA_DROP_DUP_ATOMIC);
	shca_rcw_atomic_req(test, w, SHCA_OP_FETCH_ADD, shca_rcw_rq(1), target,
			    rkey, 5, 0, &f[0]);
	f[1] = cas;
	shca_rcw_atomic_req(test, w, SHCA_OP_FETCH_ADD, shca_rcw_rq(3), target,
			    rkey, 1, 0, &f[2]);
	shca_rcw_ping(test, w, shca_rcw_rq(3 + SHCA_RCW_ATOMIC_RES), &f[3]);
	shca_frame_inject(test, w->ndev, f, 4);
	shca_rcw_expect_atomic_ack(test, w, shca_rcw_rq(3), 7,
				   3 + SHCA_RCW_ATOMIC_RES);
	shca_rcw_expect_aeth(test, w, SHCA_RCW_ACK,
			     shca_rcw_rq(2 + SHCA_RCW_ATOMIC_RES),
			     3 + SHCA_RCW_ATOMIC_RES);
	KUNIT_EXPECT_EQ(test, *target, 7 + SHCA_RCW_ATOMIC_RES);
	KUNIT_EXPECT_EQ(test, shca_frame_drops(test, w->dp.fx->ibdev,
					       SHCA_DROP_DUP_ATOMIC), dups + 2);
}

/*
 * Four WRITEs asking for an acknowledgment each, in one go: the ACKs
 * that come (one per run of the engine, so maybe fewer than four) are
 * for increasing PSNs with the MSN of each, the last for the last WRITE.
 */
static void shca_rcw_resp_coalesce(struct kunit *test)
{
	struct shca_rcw *w = shca_rcw_setup_rc(test, SHCA_RCW_SLOW);
	u8 *src = shca_rcw_buf(test, 64), *dst = shca_rcw_buf(test, 256);
	struct shca_rcw_msg m = {
		.transport = SHCA_TRANSPORT_RC,
		.ops = shca_rcw_write_ops,
		.data = src,
		.len = 64,
		.rkey = w->dp.pd->unsafe_global_rkey,
		.ackreq = true,
	};
	struct shca_frame f[4], ack;
	struct shca_pkt pkt;
	s32 i, acked = -1;
	u32 acks = 0;

	shca_dp_fill(src, 64, 10);
	for (i = 0; i < 4; i++) {
		m.psn = shca_rcw_rq(i);
		m.va = (uintptr_t)dst + 64 * i;
		KUNIT_ASSERT_EQ(test, shca_rcw_segment(test, w, &m, &f[i]), 1);
	}
	shca_frame_inject(test, w->ndev, f, 4);
	while (acked < 3) {
		shca_rcw_sent(test, w, &ack, &pkt);
		KUNIT_ASSERT_EQ(test, pkt.opcode, SHCA_OPCODE(RC, ACKNOWLEDGE));
		KUNIT_ASSERT_EQ(test, pkt.syndrome, SHCA_RCW_ACK);
		i = shca_rcw_diff(pkt.psn, shca_rcw_rq(0));
		KUNIT_ASSERT_GT(test, i, acked);
		KUNIT_ASSERT_LE(test, i, 3);
		KUNIT_EXPECT_EQ(test, pkt.msn, i + 1);
		acked = i;
		acks++;
	}
	kunit_info(test, "%u ACKs for 4 WRITEs\n", acks);
	for (i = 0; i < 4; i++)
		KUNIT_EXPECT_EQ(test, memcmp(dst + 64 * i, src, 64), 0);
	shca_rcw_sync(test, w, shca_rcw_rq(4), 4);
}

/*
 * A SEND with no receive WQE is answered by an RNR NAK with the QP's
 * min_rnr_timer, for its PSN; resent once a receive is posted, it
 * completes.
 */
static void shca_rcw_resp_rnr(struct kunit *test)
{
	struct shca_rcw *w = shca_rcw_setup_rc(test, SHCA_RCW_SLOW);
	u8 *src = shca_rcw_buf(test, 64), *dst = shca_rcw_buf(test, 64);
	struct shca_rcw_msg m = {
		.transport = SHCA_TRANSPORT_RC,
		.ops = shca_rcw_send_ops,
		.psn = shca_rcw_rq(0),
		.data = src,
		.len = 64,
		.ackreq = true,
	};
	struct shca_frame f;
	struct ib_wc wc;

	shca_dp_fill(src, 64, 5);
	KUNIT_ASSERT_EQ(test, shca_rcw_segment(test, w, &m, &f), 1);
	shca_frame_inject(test, w->ndev, &f, 1);
	shca_rcw_expect_aeth(test, w, SHCA_RCW_RNR(SHCA_RCW_MIN_RNR),
			     shca_rcw_rq(0), 0);
	KUNIT_EXPECT_TRUE(test, shca_dp_cq_empty(&w->dp, 0));
	KUNIT_EXPECT_EQ(test, shca_rcw_state(w->dp.qp[0]), IB_QPS_RTS);

	KUNIT_ASSERT_EQ(test, shca_dp_post_recv(&w->dp, 0, 4, dst, 64), 0);
	shca_frame_inject(test, w->ndev, &f, 1);
	shca_rcw_expect_aeth(test, w, SHCA_RCW_ACK, shca_rcw_rq(0), 1);
	KUNIT_EXPECT_EQ(test, shca_rcw_wc(test, w, 4, &wc), IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(test, wc.byte_len, 64);
	KUNIT_EXPECT_EQ(test, memcmp(dst, src, 64), 0);
}

/*
 * A WRITE with immediate of three packets and no receive WQE: its LAST
 * is RNR NAKed, the bytes before it placed; resent once a receive is
 * posted, the LAST alone completes the message, with its whole length.
 */
static void shca_rcw_resp_rnr_write_imm(struct kunit *test)
{
	struct shca_rcw *w = shca_rcw_setup_rc(test, SHCA_RCW_SLOW);
	u32 len = 3 * SHCA_RCW_MTU - 55;
	u8 *src = shca_rcw_buf(test, len), *dst = shca_rcw_buf(test, len);
	struct shca_rcw_msg m = {
		.transport = SHCA_TRANSPORT_RC,
		.ops = shca_rcw_write_imm_ops,
		.psn = shca_rcw_rq(0),
		.data = src,
		.len = len,
		.imm = 0x5151abcd,
		.ackreq = true,
	};
	struct shca_frame f[3];
	struct ib_wc wc;

	shca_dp_fill(src, len, 6);
	w->mr = shca_dp_frwr(&w->dp, 0, dst, len,
			     IB_ACCESS_REMOTE_WRITE | IB_ACCESS_LOCAL_WRITE);
	m.va = (uintptr_t)dst;
	m.rkey = w->mr->rkey;
	KUNIT_ASSERT_EQ(test, shca_rcw_segment(test, w, &m, f), 3);
	shca_frame_inject(test, w->ndev, f, 3);
	shca_rcw_expect_aeth(test, w, SHCA_RCW_RNR(SHCA_RCW_MIN_RNR),
			     shca_rcw_rq(2), 0);
	KUNIT_EXPECT_TRUE(test, shca_dp_cq_empty(&w->dp, 0));

	KUNIT_ASSERT_EQ(test, shca_dp_post_recv(&w->dp, 0, 8, NULL, 0), 0);
	shca_frame_inject(test, w->ndev, &f[2], 1);
	shca_rcw_expect_aeth(test, w, SHCA_RCW_ACK, shca_rcw_rq(2), 1);
	KUNIT_EXPECT_EQ(test, shca_rcw_wc(test, w, 8, &wc), IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(test, wc.opcode, IB_WC_RECV_RDMA_WITH_IMM);
	KUNIT_EXPECT_EQ(test, wc.byte_len, len);
	KUNIT_EXPECT_EQ(test, memcmp(dst, src, len), 0);
	KUNIT_EXPECT_EQ(test, shca_rcw_state(w->dp.qp[0]), IB_QPS_RTS);
}

/* A request the responder refuses, and how. */
struct shca_rcw_refused {
	const char *name;
	u8 op;
	u32 paylen;
	u32 dma_len;
	bool bad_rkey;
	u8 nak;
	enum ib_event_type event;
};

static const struct shca_rcw_refused shca_rcw_refuseds[] = {
	{ "bad-rkey", SHCA_OP_RDMA_WRITE_ONLY, 64, 64, true,
	  SHCA_RCW_NAK_REM_ACCESS, IB_EVENT_QP_ACCESS_ERR },
	{ "middle-first", SHCA_OP_RDMA_WRITE_MIDDLE, SHCA_RCW_MTU, 0, false,
	  SHCA_RCW_NAK_INV_REQ, IB_EVENT_QP_REQ_ERR },
	{ "short-first", SHCA_OP_RDMA_WRITE_FIRST, 100, 2 * SHCA_RCW_MTU,
	  false, SHCA_RCW_NAK_INV_REQ, IB_EVENT_QP_REQ_ERR },
	{ "past-reth", SHCA_OP_RDMA_WRITE_ONLY, 100, 50, false,
	  SHCA_RCW_NAK_INV_REQ, IB_EVENT_QP_REQ_ERR },
};

static void shca_rcw_refused_desc(const struct shca_rcw_refused *r,
				  char *desc)
{
	strscpy(desc, r->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(shca_rcw_refused, shca_rcw_refuseds, shca_rcw_refused_desc);

/*
 * A WRITE refused (a bad rkey, out of sequence, a FIRST shorter than the
 * path MTU, more than its RETH said) is NAKed with its code for its PSN,
 * writes nothing, and moves the QP to the error state with its
 * affiliated event; what comes next is dropped, unanswered.
 */
static void shca_rcw_resp_refused(struct kunit *test)
{
	const struct shca_rcw_refused *r = test->param_value;
	struct shca_rcw *w = shca_rcw_setup_rc(test, SHCA_RCW_SLOW);
	u8 *src = shca_rcw_buf(test, SHCA_RCW_MTU);
	u8 *dst = shca_rcw_buf(test, SHCA_RCW_MTU);
	u32 rkey = w->dp.pd->unsafe_global_rkey;
	struct shca_pkt pkt = {
		.opcode = SHCA_TRANSPORT_RC | r->op,
		.psn = shca_rcw_rq(0),
		.ackreq = true,
		.va = (uintptr_t)dst,
		.rkey = r->bad_rkey ? 0xdead00 : rkey,
		.dma_len = r->dma_len,
		.paylen = r->paylen,
	};
	struct shca_frame f[2];
	s64 refused;

	shca_dp_fill(src, SHCA_RCW_MTU, 6);
	shca_rcw_build(test, w, &pkt, src, &f[0]);
	shca_frame_inject(test, w->ndev, &f[0], 1);
	shca_rcw_expect_aeth(test, w, SHCA_RCW_NAK(r->nak), shca_rcw_rq(0), 0);
	KUNIT_EXPECT_EQ(test, shca_rcw_state(w->dp.qp[0]), IB_QPS_ERR);
	KUNIT_EXPECT_TRUE(test, wait_event_timeout(w->dp.wait,
						   atomic_read(&w->dp.events),
						   10 * HZ));
	KUNIT_EXPECT_EQ(test, READ_ONCE(w->event), r->event);
	KUNIT_EXPECT_TRUE(test, !memchr_inv(dst, 0, SHCA_RCW_MTU));

	/* A valid WRITE now is dropped. */
	pkt = (struct shca_pkt){
		.opcode = SHCA_OPCODE(RC, RDMA_WRITE_ONLY),
		.psn = shca_rcw_rq(0),
		.ackreq = true,
		.va = (uintptr_t)dst,
		.rkey = rkey,
		.dma_len = 64,
		.paylen = 64,
	};
	shca_rcw_build(test, w, &pkt, src, &f[1]);
	refused = shca_frame_drops(test, w->dp.fx->ibdev, SHCA_DROP_REFUSED);
	shca_frame_inject(test, w->ndev, &f[1], 1);
	KUNIT_EXPECT_EQ(test, shca_frame_wait_drops(test, w->dp.fx->ibdev,
						    SHCA_DROP_REFUSED,
						    refused + 1),
			refused + 1);
	shca_rcw_quiet(test, w);
	KUNIT_EXPECT_TRUE(test, !memchr_inv(dst, 0, SHCA_RCW_MTU));
}

/*
 * UC: a lost MIDDLE abandons its SEND, whose LAST is dropped; the next
 * SEND fills the receive WQE the abandoned one took, and completes; the
 * one after takes the next WQE.  Nothing is acknowledged.  Two packets
 * count as out of sequence: the LAST, and the next SEND's, since the
 * LAST, dropped, did not move the PSN expected.
 */
static void shca_rcw_uc_gap(struct kunit *test)
{
	struct shca_dp_opts o = shca_dp_rc;
	u8 *src = shca_rcw_buf(test, 1024), *dst = shca_rcw_buf(test, 2048);
	struct shca_rcw_msg m = {
		.transport = SHCA_TRANSPORT_UC,
		.ops = shca_rcw_send_ops,
		.psn = shca_rcw_rq(0),
		.data = src,
		.len = 3 * SHCA_RCW_MTU,
	};
	struct shca_frame f[3], next[3];
	struct shca_rcw *w;
	struct ib_wc wc;
	s64 oos;

	o.type = IB_QPT_UC;
	w = shca_rcw_setup(test, &o);
	oos = shca_rcw_counter(test, w, SHCA_CNT_OUT_OF_SEQUENCE);
	shca_dp_fill(src, 1024, 7);
	KUNIT_ASSERT_EQ(test, shca_dp_post_recv(&w->dp, 0, 1, dst, 1024), 0);
	KUNIT_ASSERT_EQ(test, shca_dp_post_recv(&w->dp, 0, 2, dst + 1024,
						1024), 0);
	KUNIT_ASSERT_EQ(test, shca_rcw_segment(test, w, &m, f), 3);
	next[0] = f[0];
	next[1] = f[2];
	m.psn = shca_rcw_rq(3);
	m.data = src + 768;
	m.len = 200;
	KUNIT_ASSERT_EQ(test, shca_rcw_segment(test, w, &m, &next[2]), 1);
	shca_frame_inject(test, w->ndev, next, 3);

	KUNIT_EXPECT_EQ(test, shca_rcw_wc(test, w, 1, &wc), IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(test, wc.opcode, IB_WC_RECV);
	KUNIT_EXPECT_EQ(test, wc.byte_len, 200);
	KUNIT_EXPECT_EQ(test, memcmp(dst, src + 768, 200), 0);
	KUNIT_EXPECT_EQ(test, shca_rcw_counter(test, w,
					       SHCA_CNT_OUT_OF_SEQUENCE),
			oos + 2);

	m.psn = shca_rcw_rq(4);
	m.data = src;
	m.len = 300;
	KUNIT_ASSERT_EQ(test, shca_rcw_segment(test, w, &m, f), 2);
	shca_frame_inject(test, w->ndev, f, 2);
	KUNIT_EXPECT_EQ(test, shca_rcw_wc(test, w, 2, &wc), IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(test, wc.byte_len, 300);
	KUNIT_EXPECT_EQ(test, memcmp(dst + 1024, src, 300), 0);
	KUNIT_EXPECT_TRUE(test, shca_dp_cq_empty(&w->dp, 0));
	shca_rcw_quiet(test, w);
}

/* --- The requester ------------------------------------------------- */

/* A SEND or WRITE the requester segments, on RC or UC. */
struct shca_rcw_req_case {
	const char *name;
	enum ib_qp_type type;
	bool write;
};

static const struct shca_rcw_req_case shca_rcw_req_cases[] = {
	{ "rc-send", IB_QPT_RC, false },
	{ "rc-write", IB_QPT_RC, true },
	{ "uc-send", IB_QPT_UC, false },
	{ "uc-write", IB_QPT_UC, true },
};

static void shca_rcw_req_desc(const struct shca_rcw_req_case *c, char *desc)
{
	strscpy(desc, c->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(shca_rcw_req, shca_rcw_req_cases, shca_rcw_req_desc);

#define SHCA_RCW_REMOTE_VA 0x123456789000ULL
#define SHCA_RCW_REMOTE_RKEY 0xabc01

/*
 * Posts @m as a SEND or WRITE (@m->ops says), signalled, its bytes from
 * the @num_sge SGEs at @sge.
 */
static void shca_rcw_post_sgl(struct kunit *test, struct shca_rcw *w,
			      const struct shca_rcw_msg *m,
			      struct ib_sge *sge, int num_sge, u64 wr_id)
{
	struct ib_rdma_wr wr = {
		.wr = {
			.wr_id = wr_id,
			.opcode = m->ops == shca_rcw_write_ops ?
				  IB_WR_RDMA_WRITE : IB_WR_SEND,
			.sg_list = sge,
			.num_sge = num_sge,
			.send_flags = IB_SEND_SIGNALED,
		},
		.remote_addr = m->va,
		.rkey = m->rkey,
	};

	KUNIT_ASSERT_EQ(test, shca_dp_post_send(&w->dp, 0, &wr.wr), 0);
}

/* Posts @m's bytes, from @m->data, as a SEND or WRITE, signalled. */
static void shca_rcw_post(struct kunit *test, struct shca_rcw *w,
			  const struct shca_rcw_msg *m, u64 wr_id)
{
	struct ib_sge sge = shca_dp_sge(&w->dp, (void *)m->data, m->len);

	shca_rcw_post_sgl(test, w, m, &sge, 1, wr_id);
}

/* A message of @len bytes from the device's first PSN on, for @type. */
static struct shca_rcw_msg shca_rcw_req_msg(struct kunit *test,
					    enum ib_qp_type type, bool write,
					    u32 len)
{
	u8 *src = shca_rcw_buf(test, len);

	shca_dp_fill(src, len, len);
	return (struct shca_rcw_msg){
		.transport = type == IB_QPT_RC ? SHCA_TRANSPORT_RC :
						 SHCA_TRANSPORT_UC,
		.ops = write ? shca_rcw_write_ops : shca_rcw_send_ops,
		.psn = shca_rcw_sq(0),
		.data = src,
		.len = len,
		.va = write ? SHCA_RCW_REMOTE_VA : 0,
		.rkey = write ? SHCA_RCW_REMOTE_RKEY : 0,
		.ackreq = type == IB_QPT_RC,
	};
}

/*
 * A SEND or WRITE of three packets leaves as FIRST, MIDDLE and LAST with
 * PSNs from sq_psn, AckReq on the LAST alone (RC), the RETH on the FIRST
 * (WRITE), and the payload.  RC completes when the LAST is acknowledged,
 * not before (an ACK of the MIDDLE is progress); UC at once.  The next
 * message, of one packet, takes the next PSN, and the previous
 * message's ACK does not complete it.
 */
static void shca_rcw_req_send(struct kunit *test)
{
	const struct shca_rcw_req_case *c = test->param_value;
	struct shca_dp_opts o = shca_dp_rc;
	struct shca_rcw_msg m = shca_rcw_req_msg(test, c->type, c->write,
						 3 * SHCA_RCW_MTU - 13);
	bool rc = c->type == IB_QPT_RC;
	struct shca_rcw *w;
	struct ib_wc wc;
	u32 last;
	int i;

	o.type = c->type;
	o.timeout = SHCA_RCW_SLOW;
	w = shca_rcw_setup(test, &o);
	for (i = 0; i < 2; i++) {
		last = shca_rcw_psn(m.psn, shca_rcw_npkts(w, m.len) - 1);
		shca_rcw_post(test, w, &m, 0x10 + i);
		shca_rcw_expect_msg(test, w, &m, 0);
		if (rc) {
			shca_rcw_answer(test, w, SHCA_RCW_ACK,
					shca_rcw_psn(last, -1));
			KUNIT_EXPECT_TRUE(test, shca_dp_cq_empty(&w->dp, 0));
			shca_rcw_answer(test, w, SHCA_RCW_ACK, last);
		}
		KUNIT_EXPECT_EQ(test, shca_rcw_wc(test, w, 0x10 + i, &wc),
				IB_WC_SUCCESS);
		KUNIT_EXPECT_EQ(test, wc.opcode, c->write ? IB_WC_RDMA_WRITE :
				IB_WC_SEND);
		/* The next one: a single packet, PSN after the LAST's. */
		m.psn = shca_rcw_sq(3);
		m.len = 40;
	}
	shca_rcw_quiet(test, w);
	KUNIT_EXPECT_EQ(test, shca_rcw_state(w->dp.qp[0]), IB_QPS_RTS);
}

/* Where the bytes of a message on the zero-copy path are. */
enum shca_rcw_zc_mem {
	SHCA_RCW_ZC_PAGES,		/* a buffer of the page allocator's */
	SHCA_RCW_ZC_SLAB,		/* a slab object */
	SHCA_RCW_ZC_SPREAD,		/* SGEs in pages of their own */
};

/*
 * SHCA_RCW_ZC_SPREAD's SGEs: of 33 bytes, more than a packet has
 * fragments for (MAX_SKB_FRAGS - 1, and one for the pad and ICRC).
 */
#define SHCA_RCW_ZC_SGES 32
#define SHCA_RCW_ZC_SGE_LEN 33

struct shca_rcw_zc_case {
	const char *name;
	enum shca_rcw_zc_mem mem;
	bool write;
};

static const struct shca_rcw_zc_case shca_rcw_zc_cases[] = {
	{ "send-pages", SHCA_RCW_ZC_PAGES, false },
	{ "write-pages", SHCA_RCW_ZC_PAGES, true },
	{ "send-slab", SHCA_RCW_ZC_SLAB, false },
	{ "write-slab", SHCA_RCW_ZC_SLAB, true },
	{ "send-spread", SHCA_RCW_ZC_SPREAD, false },
	{ "write-spread", SHCA_RCW_ZC_SPREAD, true },
};

static void shca_rcw_zc_desc(const struct shca_rcw_zc_case *c, char *desc)
{
	strscpy(desc, c->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(shca_rcw_zc, shca_rcw_zc_cases, shca_rcw_zc_desc);

/*
 * Posts @m, its bytes copied to SHCA_RCW_ZC_SGES SGEs, SGE i in page i
 * of @buf and i SGEs into it.
 */
static void shca_rcw_post_spread(struct kunit *test, struct shca_rcw *w,
				 const struct shca_rcw_msg *m, u8 *buf,
				 u64 wr_id)
{
	struct ib_sge sge[SHCA_RCW_ZC_SGES];
	u8 *p;
	int i;

	for (i = 0; i < SHCA_RCW_ZC_SGES; i++) {
		p = buf + i * (PAGE_SIZE + SHCA_RCW_ZC_SGE_LEN);
		memcpy(p, m->data + i * SHCA_RCW_ZC_SGE_LEN,
		       SHCA_RCW_ZC_SGE_LEN);
		sge[i] = shca_dp_sge(&w->dp, p, SHCA_RCW_ZC_SGE_LEN);
	}
	shca_rcw_post_sgl(test, w, m, sge, SHCA_RCW_ZC_SGES, wr_id);
}

/*
 * At a 1024-byte path MTU, an RC SEND or WRITE leaves with PSNs, opcodes,
 * payload and ICRC as ever, and completes when acknowledged; but packets
 * of 512 bytes or more carry the payload as page fragments: the buffer's
 * own pages, held until the frames are gone, when they come from the
 * page allocator; copies when it is a slab object; and of 32 SGEs of 33
 * bytes in pages of their own, the FIRST holds the first 16 SGEs' pages,
 * the rest copied into its last fragment with the pad and the ICRC.
 */
static void shca_rcw_req_zcopy(struct kunit *test)
{
	const struct shca_rcw_zc_case *c = test->param_value;
	bool spread = c->mem == SHCA_RCW_ZC_SPREAD;
	u32 len = spread ? SHCA_RCW_ZC_SGES * SHCA_RCW_ZC_SGE_LEN :
			   3 * SHCA_RCW_ZC_MTU - 13;
	struct shca_rcw_msg m = shca_rcw_req_msg(test, IB_QPT_RC, c->write,
						 len);
	struct shca_dp_opts o = shca_dp_rc;
	struct shca_rcw *w;
	struct shca_frame f;
	struct ib_wc wc;
	u32 n, i, refs = 0;
	u8 *buf = NULL;

	o.timeout = SHCA_RCW_SLOW;
	w = shca_rcw_setup_mtu(test, &o, SHCA_RCW_ZC_MTU);
	switch (c->mem) {
	case SHCA_RCW_ZC_PAGES:
		/* Above kmalloc's caches: pages of its own. */
		buf = shca_rcw_buf(test, 3 * PAGE_SIZE);
		KUNIT_ASSERT_FALSE(test, PageSlab(virt_to_page(buf)));
		/* The FIRST across a page boundary. */
		memcpy(buf + PAGE_SIZE - 300, m.data, len);
		m.data = buf + PAGE_SIZE - 300;
		shca_rcw_post(test, w, &m, 0x18);
		break;
	case SHCA_RCW_ZC_SLAB:
		KUNIT_ASSERT_TRUE(test, PageSlab(virt_to_page(m.data)));
		shca_rcw_post(test, w, &m, 0x18);
		break;
	case SHCA_RCW_ZC_SPREAD:
		buf = shca_rcw_buf(test, SHCA_RCW_ZC_SGES * PAGE_SIZE);
		KUNIT_ASSERT_FALSE(test, PageSlab(virt_to_page(buf)));
		shca_rcw_post_spread(test, w, &m, buf, 0x18);
		break;
	}

	if (c->mem == SHCA_RCW_ZC_PAGES)
		refs = shca_rcw_msg_frags(w, &m);
	else if (spread)
		refs = MAX_SKB_FRAGS - 1;
	if (refs)
		KUNIT_EXPECT_EQ(test, shca_rcw_wait_refs(buf, refs), refs + 1);

	n = shca_rcw_npkts(w, len);
	for (i = 0; i < n; i++) {
		shca_rcw_expect_pkt(test, w, &m, i, &f);
		if (spread && !i)
			KUNIT_EXPECT_EQ(test, f.nr_frags, MAX_SKB_FRAGS);
		else
			shca_rcw_expect_frags(test, w, &m, i, &f);
	}
	shca_rcw_answer(test, w, SHCA_RCW_ACK, shca_rcw_sq(n - 1));
	KUNIT_EXPECT_EQ(test, shca_rcw_wc(test, w, 0x18, &wc), IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(test, wc.opcode, c->write ? IB_WC_RDMA_WRITE :
			IB_WC_SEND);
	shca_rcw_quiet(test, w);
	if (buf)
		KUNIT_EXPECT_EQ(test, page_count(virt_to_page(buf)), 1);
}

/*
 * Behind a netdev without scatter-gather, the same WRITE of page-allocator
 * memory leaves as linear packets that softhca filled itself: no page of
 * the buffer is lent to a packet (which the stack would then copy into a
 * new linear one), and each payload is the buffer's bytes.
 */
static void shca_rcw_req_no_sg(struct kunit *test)
{
	u32 len = 3 * SHCA_RCW_ZC_MTU - 13, n, i;
	struct shca_rcw_msg m = shca_rcw_req_msg(test, IB_QPT_RC, true, len);
	struct shca_dp_opts o = shca_dp_rc;
	struct shca_rcw *w;
	struct shca_frame f;
	struct ib_wc wc;
	u8 *buf;

	o.timeout = SHCA_RCW_SLOW;
	w = shca_rcw_setup_mtu(test, &o, SHCA_RCW_ZC_MTU);
	shca_test_netdev_sg(w->ndev, false);
	buf = shca_rcw_buf(test, 3 * PAGE_SIZE);
	KUNIT_ASSERT_FALSE(test, PageSlab(virt_to_page(buf)));
	memcpy(buf + PAGE_SIZE - 300, m.data, len);
	m.data = buf + PAGE_SIZE - 300;
	shca_rcw_post(test, w, &m, 0x19);

	n = shca_rcw_npkts(w, len);
	for (i = 0; i < n; i++) {
		shca_rcw_expect_pkt(test, w, &m, i, &f);
		KUNIT_EXPECT_EQ(test, f.nr_frags, 0);
		KUNIT_EXPECT_FALSE(test, f.lent);
	}
	shca_rcw_answer(test, w, SHCA_RCW_ACK, shca_rcw_sq(n - 1));
	KUNIT_EXPECT_EQ(test, shca_rcw_wc(test, w, 0x19, &wc), IB_WC_SUCCESS);
	shca_rcw_quiet(test, w);
	KUNIT_EXPECT_EQ(test, page_count(virt_to_page(buf)), 1);
}

/* The retries a message without an answer gets: retry_cnt. */
static const u8 shca_rcw_retries[] = { 0, 2 };

static void shca_rcw_retry_desc(const u8 *retry, char *desc)
{
	snprintf(desc, KUNIT_PARAM_DESC_SIZE, "retry_cnt %u", *retry);
}

KUNIT_ARRAY_PARAM(shca_rcw_retry, shca_rcw_retries, shca_rcw_retry_desc);

/*
 * Unanswered, a message is sent again, whole and with the same PSNs, a
 * local ACK timeout after the last time, retry_cnt times; then it
 * completes with RETRY_EXC_ERR, the QP in the error state.  Every timeout
 * is counted, the last one too, and every packet resent.
 */
static void shca_rcw_req_timeout(struct kunit *test)
{
	const u8 *retry = test->param_value;
	struct shca_dp_opts o = shca_dp_rc;
	struct shca_rcw_msg m = shca_rcw_req_msg(test, IB_QPT_RC, false, 300);
	u64 timeout_ns = 4096ULL << SHCA_RCW_FAST;
	struct shca_rcw *w;
	struct ib_wc wc;
	ktime_t start;
	s64 timeouts, resent;
	u8 i;

	o.timeout = SHCA_RCW_FAST;
	o.retry_cnt = *retry;
	w = shca_rcw_setup(test, &o);
	timeouts = shca_rcw_counter(test, w, SHCA_CNT_LOCAL_ACK_TIMEOUT);
	resent = shca_rcw_counter(test, w, SHCA_CNT_RESENT_TIMEOUT);
	start = ktime_get();
	shca_rcw_post(test, w, &m, 0x20);
	for (i = 0; i <= *retry; i++) {
		shca_rcw_expect_msg(test, w, &m, 0);
		KUNIT_EXPECT_GE(test, ktime_to_ns(ktime_sub(ktime_get(),
							    start)),
				(s64)(i * timeout_ns));
	}
	KUNIT_EXPECT_EQ(test, shca_rcw_wc(test, w, 0x20, &wc),
			IB_WC_RETRY_EXC_ERR);
	KUNIT_EXPECT_EQ(test, shca_rcw_state(w->dp.qp[0]), IB_QPS_ERR);
	KUNIT_EXPECT_EQ(test, shca_rcw_counter(test, w,
					       SHCA_CNT_LOCAL_ACK_TIMEOUT),
			timeouts + *retry + 1);
	KUNIT_EXPECT_EQ(test, shca_rcw_counter(test, w,
					       SHCA_CNT_RESENT_TIMEOUT),
			resent + *retry * shca_rcw_npkts(w, m.len));
	shca_rcw_quiet(test, w);
}

/* 4.096 us << 16: 268 ms, a local ACK timeout the adaptive timer cuts. */
#define SHCA_RCW_ADAPTIVE_TIMEOUT 16

/*
 * An RC QP with the adaptive ACK timer, @timeout and @retry_cnt, whose
 * path was measured: a message of 300 bytes (two packets) answered at
 * once, so that its round trip is under the timer's floor (50 ms).  @m
 * is then the next message, of 40 bytes.
 */
static struct shca_rcw *shca_rcw_adaptive_setup(struct kunit *test,
						u8 timeout, u8 retry_cnt,
						struct shca_rcw_msg *m)
{
	struct shca_dp_opts o = shca_dp_rc;
	struct shca_rcw *w;
	struct ib_wc wc;
	u32 n;

	o.timeout = timeout;
	o.retry_cnt = retry_cnt;
	w = shca_rcw_setup(test, &o);
	to_shca_dev(w->dp.fx->ibdev)->adaptive_ack = true;
	*m = shca_rcw_req_msg(test, IB_QPT_RC, false, 300);
	n = shca_rcw_npkts(w, m->len);
	shca_rcw_post(test, w, m, 0x30);
	shca_rcw_expect_msg(test, w, m, 0);
	shca_rcw_answer(test, w, SHCA_RCW_ACK, shca_rcw_sq(n - 1));
	KUNIT_EXPECT_EQ(test, shca_rcw_wc(test, w, 0x30, &wc), IB_WC_SUCCESS);
	m->psn = shca_rcw_sq(n);
	m->len = 40;
	return w;
}

/*
 * The adaptive ACK timer: a message not answered on a measured path is
 * sent again after the timer's floor, 50 ms, not the local ACK timeout
 * (4.3 s), then again twice as late, each timeout counted.  retry_cnt 0
 * is not spent, since the local ACK timeout did not pass: the ACK that
 * comes then completes the message, the QP still in RTS.
 */
static void shca_rcw_adaptive_timeout(struct kunit *test)
{
	struct shca_rcw_msg m;
	struct shca_rcw *w;
	struct ib_wc wc;
	ktime_t posted;
	s64 timeouts;

	w = shca_rcw_adaptive_setup(test, SHCA_RCW_SLOW, 0, &m);
	timeouts = shca_rcw_counter(test, w, SHCA_CNT_LOCAL_ACK_TIMEOUT);
	posted = ktime_get();
	shca_rcw_post(test, w, &m, 0x31);
	shca_rcw_expect_msg(test, w, &m, 0);
	shca_rcw_expect_msg(test, w, &m, 0);
	KUNIT_EXPECT_GE(test, ktime_ms_delta(ktime_get(), posted), 50);
	KUNIT_EXPECT_LT(test, ktime_ms_delta(ktime_get(), posted), 4000);
	shca_rcw_expect_msg(test, w, &m, 0);
	KUNIT_EXPECT_GE(test, ktime_ms_delta(ktime_get(), posted), 150);
	shca_rcw_answer(test, w, SHCA_RCW_ACK, m.psn);
	KUNIT_EXPECT_EQ(test, shca_rcw_wc(test, w, 0x31, &wc), IB_WC_SUCCESS);
	KUNIT_EXPECT_GE(test, shca_rcw_counter(test, w,
					       SHCA_CNT_LOCAL_ACK_TIMEOUT),
			timeouts + 2);
	KUNIT_EXPECT_EQ(test, shca_rcw_state(w->dp.qp[0]), IB_QPS_RTS);
	shca_rcw_quiet(test, w);
}

/*
 * The adaptive timer gives up no sooner than the local ACK timeout has
 * it: with a local ACK timeout of 268 ms and retry_cnt 1, an unanswered
 * message completes with RETRY_EXC_ERR no sooner than two of them after
 * it was posted, having been sent again more often than the once a
 * requester that waits the whole timeout sends it.
 */
static void shca_rcw_adaptive_retry_exc(struct kunit *test)
{
	struct shca_rcw_msg m;
	struct shca_frame f;
	struct shca_rcw *w;
	struct ib_wc wc;
	ktime_t posted;
	u32 sent = 0;

	w = shca_rcw_adaptive_setup(test, SHCA_RCW_ADAPTIVE_TIMEOUT, 1, &m);
	posted = ktime_get();
	shca_rcw_post(test, w, &m, 0x31);
	KUNIT_EXPECT_EQ(test, shca_rcw_wc(test, w, 0x31, &wc),
			IB_WC_RETRY_EXC_ERR);
	KUNIT_EXPECT_GE(test, ktime_ms_delta(ktime_get(), posted),
			(s64)div_u64(2 * (4096ULL << SHCA_RCW_ADAPTIVE_TIMEOUT),
				NSEC_PER_MSEC));
	KUNIT_EXPECT_EQ(test, shca_rcw_state(w->dp.qp[0]), IB_QPS_ERR);
	while (shca_frame_sent(test, w->ndev, &f, SHCA_RCW_QUIET))
		sent++;
	KUNIT_EXPECT_GE(test, sent, 3);
}

/*
 * A PSN sequence NAK for the MIDDLE, counted: the MIDDLE and the LAST are
 * sent again at once (two packets resent), and the ACK of the LAST
 * completes the message.
 */
static void shca_rcw_req_seq_nak(struct kunit *test)
{
	struct shca_rcw *w = shca_rcw_setup_rc(test, SHCA_RCW_SLOW);
	struct shca_rcw_msg m = shca_rcw_req_msg(test, IB_QPT_RC, false,
						 3 * SHCA_RCW_MTU);
	struct ib_wc wc;
	s64 naks, resent;

	naks = shca_rcw_counter(test, w, SHCA_CNT_SEQ_NAK_RCVD);
	resent = shca_rcw_counter(test, w, SHCA_CNT_RESENT_SEQ);
	shca_rcw_post(test, w, &m, 0x30);
	shca_rcw_expect_msg(test, w, &m, 0);
	shca_rcw_answer(test, w, SHCA_RCW_NAK(SHCA_RCW_NAK_SEQ),
			shca_rcw_sq(1));
	shca_rcw_expect_msg(test, w, &m, 1);
	shca_rcw_answer(test, w, SHCA_RCW_ACK, shca_rcw_sq(2));
	KUNIT_EXPECT_EQ(test, shca_rcw_wc(test, w, 0x30, &wc), IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(test, shca_rcw_counter(test, w, SHCA_CNT_SEQ_NAK_RCVD),
			naks + 1);
	KUNIT_EXPECT_EQ(test, shca_rcw_counter(test, w, SHCA_CNT_RESENT_SEQ),
			resent + 2);
	shca_rcw_quiet(test, w);
}

/* An RNR NAK's timer code, and the microseconds it stands for. */
#define SHCA_RCW_RNR_TIMER 20
#define SHCA_RCW_RNR_USECS 10240

/* rnr_retry: 7 retries for ever, 0 gives up at the first RNR NAK. */
static const u8 shca_rcw_rnr_retries[] = { 7, 0 };

static void shca_rcw_rnr_desc(const u8 *retry, char *desc)
{
	snprintf(desc, KUNIT_PARAM_DESC_SIZE, "rnr_retry %u", *retry);
}

KUNIT_ARRAY_PARAM(shca_rcw_rnr, shca_rcw_rnr_retries, shca_rcw_rnr_desc);

/*
 * An RNR NAK for the FIRST: the message is sent again, not before the
 * NAK's timer ran out (its two packets counted as resent for an RNR),
 * and completes when acknowledged; with rnr_retry 0
 * it completes with RNR_RETRY_EXC_ERR instead.
 */
static void shca_rcw_req_rnr(struct kunit *test)
{
	const u8 *retry = test->param_value;
	struct shca_dp_opts o = shca_dp_rc;
	struct shca_rcw_msg m = shca_rcw_req_msg(test, IB_QPT_RC, false,
						 2 * SHCA_RCW_MTU);
	struct shca_rcw *w;
	struct ib_wc wc;
	ktime_t nak;
	s64 resent;

	o.timeout = SHCA_RCW_SLOW;
	o.rnr_retry = *retry;
	w = shca_rcw_setup(test, &o);
	resent = shca_rcw_counter(test, w, SHCA_CNT_RESENT_RNR);
	shca_rcw_post(test, w, &m, 0x40);
	shca_rcw_expect_msg(test, w, &m, 0);
	nak = ktime_get();
	shca_rcw_answer(test, w, SHCA_RCW_RNR(SHCA_RCW_RNR_TIMER),
			shca_rcw_sq(0));
	if (!*retry) {
		KUNIT_EXPECT_EQ(test, shca_rcw_wc(test, w, 0x40, &wc),
				IB_WC_RNR_RETRY_EXC_ERR);
		KUNIT_EXPECT_EQ(test, shca_rcw_state(w->dp.qp[0]), IB_QPS_ERR);
		shca_rcw_quiet(test, w);
		return;
	}
	shca_rcw_expect_msg(test, w, &m, 0);
	KUNIT_EXPECT_GE(test, ktime_us_delta(ktime_get(), nak),
			SHCA_RCW_RNR_USECS);
	KUNIT_EXPECT_TRUE(test, shca_dp_cq_empty(&w->dp, 0));
	shca_rcw_answer(test, w, SHCA_RCW_ACK, shca_rcw_sq(1));
	KUNIT_EXPECT_EQ(test, shca_rcw_wc(test, w, 0x40, &wc), IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(test, shca_rcw_counter(test, w, SHCA_CNT_RESENT_RNR),
			resent + 2);
	shca_rcw_quiet(test, w);
}

/*
 * rdma_rxe's responder answers the FIRST of a message with no receive
 * posted by an RNR NAK, and the MIDDLE after it by a sequence NAK of the
 * FIRST's PSN; with a short RNR timer the sequence NAK comes after the
 * requester's wait, once the message is on its way again.  It is of the
 * packets sent before the go-back: nothing is sent again for it and no
 * retry is charged (retry_cnt 0 would fail the message), and the ACK of
 * the LAST completes it.
 */
static void shca_rcw_req_rnr_late_seq_nak(struct kunit *test)
{
	struct shca_dp_opts o = shca_dp_rc;
	struct shca_rcw_msg m = shca_rcw_req_msg(test, IB_QPT_RC, false,
						 3 * SHCA_RCW_MTU);
	struct shca_rcw *w;
	struct ib_wc wc;
	s64 naks, resent;

	o.timeout = SHCA_RCW_SLOW;
	o.retry_cnt = 0;
	o.rnr_retry = 7;
	w = shca_rcw_setup(test, &o);
	naks = shca_rcw_counter(test, w, SHCA_CNT_SEQ_NAK_RCVD);
	resent = shca_rcw_counter(test, w, SHCA_CNT_RESENT_SEQ);
	shca_rcw_post(test, w, &m, 0x48);
	shca_rcw_expect_msg(test, w, &m, 0);
	shca_rcw_answer(test, w, SHCA_RCW_RNR(1), shca_rcw_sq(0));
	shca_rcw_expect_msg(test, w, &m, 0);
	shca_rcw_answer(test, w, SHCA_RCW_NAK(SHCA_RCW_NAK_SEQ),
			shca_rcw_sq(0));
	shca_rcw_quiet(test, w);
	KUNIT_EXPECT_TRUE(test, shca_dp_cq_empty(&w->dp, 0));
	shca_rcw_answer(test, w, SHCA_RCW_ACK, shca_rcw_sq(2));
	KUNIT_EXPECT_EQ(test, shca_rcw_wc(test, w, 0x48, &wc), IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(test, shca_rcw_counter(test, w, SHCA_CNT_SEQ_NAK_RCVD),
			naks + 1);
	KUNIT_EXPECT_EQ(test, shca_rcw_counter(test, w, SHCA_CNT_RESENT_SEQ),
			resent);
	shca_rcw_quiet(test, w);
}

/*
 * retry_cnt counts local ACK timeouts in a row: an RNR NAK between two
 * is an answer.  With retry_cnt 1, a message timed out once, RNR NAKed,
 * then timed out again is sent again, not failed, and completes when
 * acknowledged.
 */
static void shca_rcw_req_rnr_resets_retry(struct kunit *test)
{
	struct shca_dp_opts o = shca_dp_rc;
	struct shca_rcw_msg m = shca_rcw_req_msg(test, IB_QPT_RC, false, 64);
	struct shca_rcw *w;
	struct ib_wc wc;

	/* 268 ms: time for each answer the test injects. */
	o.timeout = SHCA_RCW_ADAPTIVE_TIMEOUT;
	o.retry_cnt = 1;
	o.rnr_retry = 7;
	w = shca_rcw_setup(test, &o);
	shca_rcw_post(test, w, &m, 0x49);
	shca_rcw_expect_msg(test, w, &m, 0);
	shca_rcw_expect_msg(test, w, &m, 0);
	shca_rcw_answer(test, w, SHCA_RCW_RNR(1), shca_rcw_sq(0));
	shca_rcw_expect_msg(test, w, &m, 0);
	shca_rcw_expect_msg(test, w, &m, 0);
	KUNIT_EXPECT_TRUE(test, shca_dp_cq_empty(&w->dp, 0));
	shca_rcw_answer(test, w, SHCA_RCW_ACK, shca_rcw_sq(0));
	KUNIT_EXPECT_EQ(test, shca_rcw_wc(test, w, 0x49, &wc), IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(test, shca_rcw_state(w->dp.qp[0]), IB_QPS_RTS);
	shca_rcw_quiet(test, w);
}

/* An error NAK, and the status the requester's completion takes. */
struct shca_rcw_nak {
	const char *name;
	u8 code;
	enum ib_wc_status status;
};

static const struct shca_rcw_nak shca_rcw_naks[] = {
	{ "invalid-request", SHCA_RCW_NAK_INV_REQ, IB_WC_REM_INV_REQ_ERR },
	{ "remote-access", SHCA_RCW_NAK_REM_ACCESS, IB_WC_REM_ACCESS_ERR },
	{ "remote-op", SHCA_RCW_NAK_REM_OP, IB_WC_REM_OP_ERR },
};

static void shca_rcw_nak_desc(const struct shca_rcw_nak *nak, char *desc)
{
	strscpy(desc, nak->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(shca_rcw_nak, shca_rcw_naks, shca_rcw_nak_desc);

/*
 * An error NAK completes the WRITE with the status it names, nothing is
 * sent again, the QP goes to the error state and flushes the next WR.
 */
static void shca_rcw_req_nak(struct kunit *test)
{
	const struct shca_rcw_nak *nak = test->param_value;
	struct shca_rcw *w = shca_rcw_setup_rc(test, SHCA_RCW_SLOW);
	struct shca_rcw_msg m = shca_rcw_req_msg(test, IB_QPT_RC, true, 64);
	struct ib_wc wc;

	shca_rcw_post(test, w, &m, 0x50);
	shca_rcw_expect_msg(test, w, &m, 0);
	shca_rcw_answer(test, w, SHCA_RCW_NAK(nak->code), shca_rcw_sq(0));
	KUNIT_EXPECT_EQ(test, shca_rcw_wc(test, w, 0x50, &wc), nak->status);
	KUNIT_EXPECT_EQ(test, shca_rcw_state(w->dp.qp[0]), IB_QPS_ERR);
	shca_rcw_post(test, w, &m, 0x51);
	KUNIT_EXPECT_EQ(test, shca_rcw_wc(test, w, 0x51, &wc),
			IB_WC_WR_FLUSH_ERR);
	shca_rcw_quiet(test, w);
}

/* Posts a READ of @len bytes into @local, of the peer's remote VA. */
static void shca_rcw_post_read(struct kunit *test, struct shca_rcw *w,
			       u8 *local, u32 len, u64 wr_id)
{
	struct ib_sge sge = shca_dp_sge(&w->dp, local, len);
	struct ib_rdma_wr wr = {
		.wr = {
			.wr_id = wr_id,
			.opcode = IB_WR_RDMA_READ,
			.sg_list = &sge,
			.num_sge = 1,
			.send_flags = IB_SEND_SIGNALED,
		},
		.remote_addr = SHCA_RCW_REMOTE_VA,
		.rkey = SHCA_RCW_REMOTE_RKEY,
	};

	KUNIT_ASSERT_EQ(test, shca_dp_post_send(&w->dp, 0, &wr.wr), 0);
}

/* The next frame is a READ request: @psn, @off bytes in, @len bytes. */
static void shca_rcw_expect_read_req(struct kunit *test, struct shca_rcw *w,
				     u32 psn, u32 off, u32 len)
{
	struct shca_frame f;
	struct shca_pkt pkt;

	shca_rcw_sent(test, w, &f, &pkt);
	KUNIT_EXPECT_EQ(test, pkt.opcode, SHCA_OPCODE(RC, RDMA_READ_REQUEST));
	KUNIT_EXPECT_EQ(test, pkt.psn, psn);
	KUNIT_EXPECT_EQ(test, pkt.va, SHCA_RCW_REMOTE_VA + off);
	KUNIT_EXPECT_EQ(test, pkt.rkey, SHCA_RCW_REMOTE_RKEY);
	KUNIT_EXPECT_EQ(test, pkt.dma_len, len);
	KUNIT_EXPECT_EQ(test, pkt.paylen, 0);
}

/*
 * An RDMA READ of 700 bytes asks for them all with one request; its
 * responses FIRST, MIDDLE and LAST are placed in order, the buffer's
 * edges untouched, and complete it.  It took three PSNs: the next
 * message has the fourth.
 */
static void shca_rcw_req_read(struct kunit *test)
{
	struct shca_rcw *w = shca_rcw_setup_rc(test, SHCA_RCW_SLOW);
	struct shca_rcw_msg next = shca_rcw_req_msg(test, IB_QPT_RC, false, 8);
	u8 *local = shca_rcw_buf(test, 702), *remote = shca_rcw_buf(test, 700);
	struct shca_rcw_msg m = shca_rcw_read_resps(shca_rcw_sq(0), remote,
						    700);
	struct shca_frame f[3];
	struct ib_wc wc;

	shca_dp_fill(remote, 700, 8);
	shca_rcw_post_read(test, w, local + 1, 700, 0x60);
	shca_rcw_expect_read_req(test, w, shca_rcw_sq(0), 0, 700);
	KUNIT_ASSERT_EQ(test, shca_rcw_segment(test, w, &m, f), 3);
	shca_frame_inject(test, w->ndev, f, 3);
	KUNIT_EXPECT_EQ(test, shca_rcw_wc(test, w, 0x60, &wc), IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(test, wc.opcode, IB_WC_RDMA_READ);
	KUNIT_EXPECT_EQ(test, wc.byte_len, 700);
	KUNIT_EXPECT_EQ(test, memcmp(local + 1, remote, 700), 0);
	KUNIT_EXPECT_EQ(test, local[0] | local[701], 0);

	next.psn = shca_rcw_sq(3);
	shca_rcw_post(test, w, &next, 0x61);
	shca_rcw_expect_msg(test, w, &next, 0);
	shca_rcw_answer(test, w, SHCA_RCW_ACK, shca_rcw_sq(3));
	KUNIT_EXPECT_EQ(test, shca_rcw_wc(test, w, 0x61, &wc), IB_WC_SUCCESS);
	shca_rcw_quiet(test, w);
}

/*
 * The MIDDLE READ response lost: the LAST tells, and a READ request for
 * the rest goes out with the MIDDLE's PSN, its address one MTU on and
 * its length one MTU less (one packet resent for a gap).  The LAST again
 * (still on its way, or a duplicate) asks for nothing more: one resend
 * per gap, until una moves.  The new request's responses complete the
 * READ.
 */
static void shca_rcw_req_read_gap(struct kunit *test)
{
	struct shca_rcw *w = shca_rcw_setup_rc(test, SHCA_RCW_SLOW);
	u8 *local = shca_rcw_buf(test, 700), *remote = shca_rcw_buf(test, 700);
	struct shca_rcw_msg m = shca_rcw_read_resps(shca_rcw_sq(0), remote,
						    700);
	struct shca_frame f[3], gap[2];
	struct ib_wc wc;
	s64 resent;

	shca_dp_fill(remote, 700, 9);
	resent = shca_rcw_counter(test, w, SHCA_CNT_RESENT_SEQ);
	shca_rcw_post_read(test, w, local, 700, 0x70);
	shca_rcw_expect_read_req(test, w, shca_rcw_sq(0), 0, 700);
	KUNIT_ASSERT_EQ(test, shca_rcw_segment(test, w, &m, f), 3);
	gap[0] = f[0];
	gap[1] = f[2];
	shca_frame_inject(test, w->ndev, gap, 2);
	shca_rcw_expect_read_req(test, w, shca_rcw_sq(1), SHCA_RCW_MTU,
				 700 - SHCA_RCW_MTU);
	shca_frame_inject(test, w->ndev, &gap[1], 1);
	shca_rcw_quiet(test, w);
	KUNIT_EXPECT_TRUE(test, shca_dp_cq_empty(&w->dp, 0));
	KUNIT_EXPECT_EQ(test, shca_rcw_counter(test, w, SHCA_CNT_RESENT_SEQ),
			resent + 1);

	m.psn = shca_rcw_sq(1);
	m.data = remote + SHCA_RCW_MTU;
	m.len = 700 - SHCA_RCW_MTU;
	KUNIT_ASSERT_EQ(test, shca_rcw_segment(test, w, &m, f), 2);
	shca_frame_inject(test, w->ndev, f, 2);
	KUNIT_EXPECT_EQ(test, shca_rcw_wc(test, w, 0x70, &wc), IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(test, wc.byte_len, 700);
	KUNIT_EXPECT_EQ(test, memcmp(local, remote, 700), 0);
	shca_rcw_quiet(test, w);
}

/* FETCH_ADD or CMP_SWAP, the requester's. */
struct shca_rcw_atomic {
	const char *name;
	enum ib_wr_opcode wr;
	u8 op;
	enum ib_wc_opcode wc;
};

static const struct shca_rcw_atomic shca_rcw_atomics[] = {
	{ "fetch-add", IB_WR_ATOMIC_FETCH_AND_ADD, SHCA_OP_FETCH_ADD,
	  IB_WC_FETCH_ADD },
	{ "cmp-swap", IB_WR_ATOMIC_CMP_AND_SWP, SHCA_OP_COMPARE_SWAP,
	  IB_WC_COMP_SWAP },
};

static void shca_rcw_atomic_desc(const struct shca_rcw_atomic *a, char *desc)
{
	strscpy(desc, a->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(shca_rcw_atomic, shca_rcw_atomics, shca_rcw_atomic_desc);

/*
 * An atomic leaves with its AtomicETH; a plain ACK for its PSN does not
 * answer it, its atomic acknowledgment does: the original value lands in
 * the local buffer and the WR completes.
 */
static void shca_rcw_req_atomic(struct kunit *test)
{
	const struct shca_rcw_atomic *a = test->param_value;
	struct shca_rcw *w = shca_rcw_setup_rc(test, SHCA_RCW_SLOW);
	u64 *orig = shca_rcw_buf(test, sizeof(u64));
	struct ib_sge sge = shca_dp_sge(&w->dp, orig, sizeof(u64));
	struct ib_atomic_wr wr = {
		.wr = {
			.wr_id = 0x80,
			.opcode = a->wr,
			.sg_list = &sge,
			.num_sge = 1,
			.send_flags = IB_SEND_SIGNALED,
		},
		.remote_addr = SHCA_RCW_REMOTE_VA,
		.compare_add = 0x1111222233334444ULL,
		.swap = 0x5555666677778888ULL,
		.rkey = SHCA_RCW_REMOTE_RKEY,
	};
	struct shca_frame f, answers[2];
	struct shca_pkt pkt;
	bool cas = a->wr == IB_WR_ATOMIC_CMP_AND_SWP;
	struct ib_wc wc;

	*orig = 0xbad;
	KUNIT_ASSERT_EQ(test, shca_dp_post_send(&w->dp, 0, &wr.wr), 0);
	shca_rcw_sent(test, w, &f, &pkt);
	KUNIT_EXPECT_EQ(test, pkt.opcode, SHCA_TRANSPORT_RC | a->op);
	KUNIT_EXPECT_EQ(test, pkt.psn, shca_rcw_sq(0));
	KUNIT_EXPECT_EQ(test, pkt.va, SHCA_RCW_REMOTE_VA);
	KUNIT_EXPECT_EQ(test, pkt.rkey, SHCA_RCW_REMOTE_RKEY);
	KUNIT_EXPECT_EQ(test, pkt.swap_add, cas ? wr.swap : wr.compare_add);
	if (cas)
		KUNIT_EXPECT_EQ(test, pkt.compare, wr.compare_add);

	pkt = (struct shca_pkt){
		.opcode = SHCA_OPCODE(RC, ACKNOWLEDGE),
		.psn = shca_rcw_sq(0),
		.syndrome = SHCA_RCW_ACK,
		.msn = 1,
	};
	shca_rcw_build(test, w, &pkt, NULL, &answers[0]);
	pkt.opcode = SHCA_OPCODE(RC, ATOMIC_ACKNOWLEDGE);
	pkt.orig = 0x0123456789abcdefULL;
	shca_rcw_build(test, w, &pkt, NULL, &answers[1]);
	/* In one batch: the ACK alone would be taken for a lost answer. */
	shca_rcw_inject_batch(test, w, answers, 2);
	KUNIT_EXPECT_EQ(test, shca_rcw_wc(test, w, 0x80, &wc), IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(test, wc.opcode, a->wc);
	KUNIT_EXPECT_EQ(test, wc.byte_len, sizeof(u64));
	KUNIT_EXPECT_EQ(test, *orig, 0x0123456789abcdefULL);
	shca_rcw_quiet(test, w);
}

/*
 * A kernel consumer's ATOMIC WRITE leaves as one packet asking for an
 * answer, its 8 bytes read from its SGE when it was posted.  The READ
 * response with no data that answers it (rdma_rxe's answer, and
 * softhca's) completes it as an ATOMIC WRITE of 8 bytes; the next one,
 * a plain ACK of its PSN (which leaves nothing unanswered).
 */
static void shca_rcw_req_atomic_write(struct kunit *test)
{
	struct shca_rcw *w = shca_rcw_setup_rc(test, SHCA_RCW_SLOW);
	u8 *val = shca_rcw_buf(test, 8), *sent = shca_rcw_buf(test, 8);
	struct ib_sge sge = shca_dp_sge(&w->dp, val, 8);
	struct ib_rdma_wr wr = {
		.wr = {
			.opcode = SHCA_WR_ATOMIC_WRITE,
			.sg_list = &sge,
			.num_sge = 1,
			.send_flags = IB_SEND_SIGNALED,
		},
		.remote_addr = SHCA_RCW_REMOTE_VA,
		.rkey = SHCA_RCW_REMOTE_RKEY,
	};
	struct shca_frame f;
	struct shca_pkt pkt;
	struct ib_wc wc;
	u32 i;

	for (i = 0; i < 2; i++) {
		shca_dp_fill(val, 8, 30 + i);
		memcpy(sent, val, 8);
		wr.wr.wr_id = 0x90 + i;
		KUNIT_ASSERT_EQ(test, shca_dp_post_send(&w->dp, 0, &wr.wr), 0);
		memset(val, 0, 8);
		shca_rcw_sent(test, w, &f, &pkt);
		KUNIT_EXPECT_EQ(test, pkt.opcode, SHCA_OPCODE(RC, ATOMIC_WRITE));
		KUNIT_EXPECT_EQ(test, pkt.psn, shca_rcw_sq(i));
		KUNIT_EXPECT_TRUE(test, pkt.ackreq);
		KUNIT_EXPECT_EQ(test, pkt.va, SHCA_RCW_REMOTE_VA);
		KUNIT_EXPECT_EQ(test, pkt.rkey, SHCA_RCW_REMOTE_RKEY);
		KUNIT_EXPECT_EQ(test, pkt.dma_len, 8);
		KUNIT_ASSERT_EQ(test, pkt.paylen, 8);
		KUNIT_EXPECT_EQ(test, memcmp(shca_frame_bth(&f) + pkt.hdr_len,
					     sent, 8), 0);

		pkt = (struct shca_pkt){
			.opcode = i ? SHCA_OPCODE(RC, ACKNOWLEDGE) :
				      SHCA_OPCODE(RC, RDMA_READ_RESPONSE_ONLY),
			.psn = shca_rcw_sq(i),
			.syndrome = SHCA_RCW_ACK,
			.msn = 1 + i,
		};
		shca_rcw_build(test, w, &pkt, NULL, &f);
		shca_frame_inject(test, w->ndev, &f, 1);
		KUNIT_EXPECT_EQ(test, shca_rcw_wc(test, w, 0x90 + i, &wc),
				IB_WC_SUCCESS);
		KUNIT_EXPECT_EQ(test, wc.opcode, SHCA_WC_ATOMIC_WRITE);
		KUNIT_EXPECT_EQ(test, wc.byte_len, 8);
	}
	shca_rcw_quiet(test, w);
}

/*
 * Answers to a SEND in flight that must change nothing: NAKs for PSNs
 * past its last, before its first and half the PSN space away, an atomic
 * acknowledgment and a READ response (it is neither), and a NAK from
 * another address.  The ACK after them completes it with success; the
 * three for no PSN in flight are counted as stale, the stranger's packet
 * as refused.
 */
static void shca_rcw_req_hostile(struct kunit *test)
{
	struct shca_rcw *w = shca_rcw_setup_rc(test, SHCA_RCW_SLOW);
	struct shca_rcw_msg m = shca_rcw_req_msg(test, IB_QPT_RC, false,
						 2 * SHCA_RCW_MTU);
	static const struct in6_addr stranger = {
		.s6_addr = { 0xfe, 0x80, [15] = 0x77 },
	};
	u8 nak = SHCA_RCW_NAK(SHCA_RCW_NAK_REM_ACCESS);
	struct shca_pkt pkts[] = {
		{ .opcode = SHCA_OPCODE(RC, ACKNOWLEDGE), .syndrome = nak,
		  .psn = shca_rcw_sq(2) },
		{ .opcode = SHCA_OPCODE(RC, ACKNOWLEDGE), .syndrome = nak,
		  .psn = shca_rcw_sq(-1) },
		{ .opcode = SHCA_OPCODE(RC, ACKNOWLEDGE), .syndrome = nak,
		  .psn = shca_rcw_sq(0x400000) },
		{ .opcode = SHCA_OPCODE(RC, ATOMIC_ACKNOWLEDGE),
		  .syndrome = SHCA_RCW_ACK, .psn = shca_rcw_sq(1) },
		{ .opcode = SHCA_OPCODE(RC, RDMA_READ_RESPONSE_ONLY),
		  .syndrome = SHCA_RCW_ACK, .psn = shca_rcw_sq(0),
		  .paylen = 16 },
		{ .opcode = SHCA_OPCODE(RC, ACKNOWLEDGE), .syndrome = nak,
		  .psn = shca_rcw_sq(0) },
		{ .opcode = SHCA_OPCODE(RC, ACKNOWLEDGE),
		  .syndrome = SHCA_RCW_ACK, .psn = shca_rcw_sq(1) },
	};
	struct shca_frame f[ARRAY_SIZE(pkts)];
	struct ib_wc wc;
	s64 refused, stale;
	int i;

	for (i = 0; i < ARRAY_SIZE(pkts); i++)
		shca_rcw_build(test, w, &pkts[i], m.data, &f[i]);
	/* The NAK for the SEND's first PSN is the stranger's. */
	shca_frame_ip6(&f[5])->saddr = stranger;
	shca_frame_seal(&f[5]);

	shca_rcw_post(test, w, &m, 0x90);
	shca_rcw_expect_msg(test, w, &m, 0);
	refused = shca_frame_drops(test, w->dp.fx->ibdev, SHCA_DROP_REFUSED);
	stale = shca_frame_drops(test, w->dp.fx->ibdev, SHCA_DROP_STALE);
	shca_frame_inject(test, w->ndev, f, ARRAY_SIZE(f));
	KUNIT_EXPECT_EQ(test, shca_rcw_wc(test, w, 0x90, &wc), IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(test, shca_frame_drops(test, w->dp.fx->ibdev,
					       SHCA_DROP_REFUSED),
			refused + 1);
	KUNIT_EXPECT_EQ(test, shca_frame_drops(test, w->dp.fx->ibdev,
					       SHCA_DROP_STALE),
			stale + 3);
	shca_rcw_quiet(test, w);
	KUNIT_EXPECT_EQ(test, shca_rcw_state(w->dp.qp[0]), IB_QPS_RTS);
}

/*
 * Answers with nothing in flight: to an RC QP that sent nothing (counted
 * as stale), and an RC ACK to a UD QP (refused).  No completion, no state
 * change, and the RC QP's first message still has the first PSN.
 */
static void shca_rcw_req_idle(struct kunit *test)
{
	struct shca_rcw *w = shca_rcw_setup_rc(test, SHCA_RCW_SLOW);
	struct shca_rcw_msg m = shca_rcw_req_msg(test, IB_QPT_RC, false, 32);
	struct ib_qp_attr attr = {
		.qp_state = IB_QPS_INIT,
		.port_num = SHCA_PORT,
		.qkey = 0x1234,
	};
	struct shca_pkt pkts[] = {
		{ .opcode = SHCA_OPCODE(RC, ACKNOWLEDGE),
		  .syndrome = SHCA_RCW_ACK, .psn = shca_rcw_sq(0) },
		{ .opcode = SHCA_OPCODE(RC, ACKNOWLEDGE),
		  .syndrome = SHCA_RCW_NAK(SHCA_RCW_NAK_REM_ACCESS),
		  .psn = shca_rcw_sq(0) },
		{ .opcode = SHCA_OPCODE(RC, ATOMIC_ACKNOWLEDGE),
		  .syndrome = SHCA_RCW_ACK, .psn = shca_rcw_sq(0) },
		{ .opcode = SHCA_OPCODE(RC, RDMA_READ_RESPONSE_ONLY),
		  .syndrome = SHCA_RCW_ACK, .psn = shca_rcw_sq(0),
		  .paylen = 16 },
		{ .opcode = SHCA_OPCODE(RC, ACKNOWLEDGE),
		  .syndrome = SHCA_RCW_ACK, .psn = shca_rcw_sq(0) },
	};
	struct shca_frame f[ARRAY_SIZE(pkts)];
	int i, ud = ARRAY_SIZE(pkts) - 1;
	struct ib_wc wc;
	s64 refused, stale;

	shca_rcw_create(test, w, 1, IB_QPT_UD);
	KUNIT_ASSERT_EQ(test, ib_modify_qp(w->dp.qp[1], &attr,
					   IB_QP_STATE | IB_QP_PKEY_INDEX |
					   IB_QP_PORT | IB_QP_QKEY), 0);
	KUNIT_ASSERT_EQ(test, shca_dp_modify(w->dp.qp[1], IB_QPS_RTR), 0);
	attr.qp_state = IB_QPS_RTS;
	KUNIT_ASSERT_EQ(test, ib_modify_qp(w->dp.qp[1], &attr,
					   IB_QP_STATE | IB_QP_SQ_PSN), 0);

	for (i = 0; i < ud; i++)
		shca_rcw_build(test, w, &pkts[i], m.data, &f[i]);
	/* The last one is for the UD QP. */
	pkts[ud].pkey = 0xffff;
	pkts[ud].dqpn = w->dp.qp[1]->qp_num;
	shca_frame_build(test, w->ndev, &w->gid, &pkts[ud], NULL, &f[ud]);
	refused = shca_frame_drops(test, w->dp.fx->ibdev, SHCA_DROP_REFUSED);
	stale = shca_frame_drops(test, w->dp.fx->ibdev, SHCA_DROP_STALE);
	shca_frame_inject(test, w->ndev, f, ARRAY_SIZE(f));
	KUNIT_EXPECT_EQ(test, shca_frame_wait_drops(test, w->dp.fx->ibdev,
						    SHCA_DROP_REFUSED,
						    refused + 1),
			refused + 1);
	KUNIT_EXPECT_EQ(test, shca_frame_wait_drops(test, w->dp.fx->ibdev,
						    SHCA_DROP_STALE, stale + ud),
			stale + ud);
	KUNIT_EXPECT_TRUE(test, shca_dp_cq_empty(&w->dp, 0));
	KUNIT_EXPECT_TRUE(test, shca_dp_cq_empty(&w->dp, 1));
	KUNIT_EXPECT_EQ(test, shca_rcw_state(w->dp.qp[0]), IB_QPS_RTS);
	KUNIT_EXPECT_EQ(test, shca_rcw_state(w->dp.qp[1]), IB_QPS_RTS);

	shca_rcw_post(test, w, &m, 0xa0);
	shca_rcw_expect_msg(test, w, &m, 0);
	shca_rcw_answer(test, w, SHCA_RCW_ACK, shca_rcw_sq(0));
	KUNIT_EXPECT_EQ(test, shca_rcw_wc(test, w, 0xa0, &wc), IB_WC_SUCCESS);
	shca_rcw_quiet(test, w);
}

/* --- The requester's window ---------------------------------------- */

/* Messages of the window cases: two packets each, from sq_psn on. */
#define SHCA_RCW_WIN 4
#define SHCA_RCW_WIN_PKTS (2 * SHCA_RCW_WIN)
#define SHCA_RCW_WIN_ID 0x100

/*
 * SENDs and WRITEs in turn, of two packets each, posted in a row: only
 * the last asks for an ACK at its end.
 */
static void shca_rcw_win_post(struct kunit *test, struct shca_rcw *w,
			      struct shca_rcw_msg *m)
{
	int i;

	shca_rcw_hold(w);
	for (i = 0; i < SHCA_RCW_WIN; i++) {
		m[i] = shca_rcw_req_msg(test, IB_QPT_RC, i & 1,
					2 * SHCA_RCW_MTU - 7 * i);
		m[i].psn = shca_rcw_sq(2 * i);
		m[i].followed = i < SHCA_RCW_WIN - 1;
		shca_rcw_post(test, w, &m[i], SHCA_RCW_WIN_ID + i);
	}
	shca_rcw_release(w);
}

/* The messages go again: a resend asks for an ACK at each one's end. */
static void shca_rcw_win_again(struct shca_rcw_msg *m)
{
	int i;

	for (i = 0; i < SHCA_RCW_WIN; i++)
		m[i].followed = false;
}

/* Every message of the window leaves, none waiting for an answer. */
static void shca_rcw_win_sent(struct kunit *test, struct shca_rcw *w,
			      const struct shca_rcw_msg *m)
{
	int i;

	for (i = 0; i < SHCA_RCW_WIN; i++)
		shca_rcw_expect_msg(test, w, &m[i], 0);
}

/*
 * Messages @from to @to - 1 complete with success, in order, and no more
 * (the run that completed them would have completed the next too).
 */
static void shca_rcw_win_done(struct kunit *test, struct shca_rcw *w,
			      int from, int to)
{
	struct ib_wc wc;
	int i;

	for (i = from; i < to; i++) {
		KUNIT_EXPECT_EQ(test, shca_rcw_wc(test, w, SHCA_RCW_WIN_ID + i,
						  &wc), IB_WC_SUCCESS);
		KUNIT_EXPECT_EQ(test, wc.byte_len, 2 * SHCA_RCW_MTU - 7 * i);
	}
	KUNIT_EXPECT_TRUE(test, shca_dp_cq_empty(&w->dp, 0));
}

/*
 * Four messages leave back to back, before any answer: the QP keeps them
 * in flight, and asks for one ACK, the last's.  An ACK of the second's
 * last PSN completes the first two (coalesced: the first was not
 * acknowledged on its own), an ACK of the fourth's the rest, each in
 * order.
 */
static void shca_rcw_win_stream(struct kunit *test)
{
	struct shca_rcw *w = shca_rcw_setup_rc(test, SHCA_RCW_SLOW);
	struct shca_rcw_msg m[SHCA_RCW_WIN];

	shca_rcw_win_post(test, w, m);
	shca_rcw_win_sent(test, w, m);
	KUNIT_EXPECT_TRUE(test, shca_dp_cq_empty(&w->dp, 0));
	shca_rcw_answer(test, w, SHCA_RCW_ACK, shca_rcw_sq(3));
	shca_rcw_win_done(test, w, 0, 2);
	shca_rcw_answer(test, w, SHCA_RCW_ACK, shca_rcw_sq(7));
	shca_rcw_win_done(test, w, 2, SHCA_RCW_WIN);
	shca_rcw_quiet(test, w);
}

/*
 * A send queue of 64 keeps a window of 32 messages: 40 SENDs of a packet
 * posted, 32 leave and the rest wait, the 32nd asking for an ACK; the
 * ACK of the 32nd completes the 32, each WQE as posted, and lets the
 * rest leave.
 */
#define SHCA_RCW_FULL 40

static void shca_rcw_win_full(struct kunit *test)
{
	struct shca_rcw_msg *m = shca_rcw_buf(test, SHCA_RCW_FULL * sizeof(*m));
	struct shca_rcw *w;
	struct ib_wc wc;
	int i;

	shca_rcw.depth = 64;
	w = shca_rcw_setup_rc(test, SHCA_RCW_SLOW);
	shca_rcw_hold(w);
	for (i = 0; i < SHCA_RCW_FULL; i++) {
		m[i] = shca_rcw_req_msg(test, IB_QPT_RC, false, 8 + i);
		m[i].psn = shca_rcw_sq(i);
		/* The 32nd fills the window: nothing follows it at once. */
		m[i].followed = i != 31 && i != SHCA_RCW_FULL - 1;
		shca_rcw_post(test, w, &m[i], 0x500 + i);
	}
	shca_rcw_release(w);
	for (i = 0; i < 32; i++)
		shca_rcw_expect_msg(test, w, &m[i], 0);
	shca_rcw_quiet(test, w);
	shca_rcw_answer(test, w, SHCA_RCW_ACK, shca_rcw_sq(31));
	for (i = 0; i < 32; i++) {
		KUNIT_EXPECT_EQ(test, shca_rcw_wc(test, w, 0x500 + i, &wc),
				IB_WC_SUCCESS);
		KUNIT_EXPECT_EQ(test, wc.byte_len, 8 + i);
	}
	for (; i < SHCA_RCW_FULL; i++)
		shca_rcw_expect_msg(test, w, &m[i], 0);
	shca_rcw_answer(test, w, SHCA_RCW_ACK,
			shca_rcw_sq(SHCA_RCW_FULL - 1));
	for (i = 32; i < SHCA_RCW_FULL; i++)
		KUNIT_EXPECT_EQ(test, shca_rcw_wc(test, w, 0x500 + i, &wc),
				IB_WC_SUCCESS);
	shca_rcw_quiet(test, w);
}

static const u8 shca_rcw_win_losses[] = { 0, 1, 2, 3, 4, 5, 6, 7 };

static void shca_rcw_loss_desc(const u8 *lost, char *desc)
{
	snprintf(desc, KUNIT_PARAM_DESC_SIZE, "packet %u of %u lost", *lost,
		 SHCA_RCW_WIN_PKTS);
}

KUNIT_ARRAY_PARAM(shca_rcw_win_loss, shca_rcw_win_losses, shca_rcw_loss_desc);

/*
 * Any one packet of the window lost: the peer's sequence NAK names it.
 * The messages before it complete at once (the NAK acknowledges what
 * precedes it); everything from the lost packet on is sent again, in
 * order (go-back-N), and counted; the ACK of the last completes the rest.
 */
static void shca_rcw_win_loss(struct kunit *test)
{
	struct shca_rcw *w = shca_rcw_setup_rc(test, SHCA_RCW_SLOW);
	u32 lost = *(const u8 *)test->param_value, i;
	struct shca_rcw_msg m[SHCA_RCW_WIN];
	s64 resent;

	resent = shca_rcw_counter(test, w, SHCA_CNT_RESENT_SEQ);
	shca_rcw_win_post(test, w, m);
	shca_rcw_win_sent(test, w, m);
	shca_rcw_answer(test, w, SHCA_RCW_NAK(SHCA_RCW_NAK_SEQ),
			shca_rcw_sq(lost));
	shca_rcw_win_again(m);
	for (i = lost / 2; i < SHCA_RCW_WIN; i++)
		shca_rcw_expect_msg(test, w, &m[i], i == lost / 2 ? lost % 2 : 0);
	shca_rcw_win_done(test, w, 0, lost / 2);
	KUNIT_EXPECT_EQ(test, shca_rcw_counter(test, w, SHCA_CNT_RESENT_SEQ),
			resent + SHCA_RCW_WIN_PKTS - lost);
	shca_rcw_answer(test, w, SHCA_RCW_ACK, shca_rcw_sq(7));
	shca_rcw_win_done(test, w, lost / 2, SHCA_RCW_WIN);
	shca_rcw_quiet(test, w);
}

/*
 * 4.096 us << 16: 268 ms, longer than SHCA_RCW_QUIET, so that the test
 * answers before the first timeout however slow its guest, and a timeout
 * still takes a fraction of a second.
 */
#define SHCA_RCW_WIN_TIMEOUT 16

/*
 * The window's tail lost, and no NAK: an ACK in the middle of the third
 * message completes two and moves una; the local ACK timeout then sends
 * again what follows it (three packets), once, and counts it.
 */
static void shca_rcw_win_timeout(struct kunit *test)
{
	struct shca_rcw *w = shca_rcw_setup_rc(test, SHCA_RCW_WIN_TIMEOUT);
	struct shca_rcw_msg m[SHCA_RCW_WIN];
	s64 timeouts, resent;

	timeouts = shca_rcw_counter(test, w, SHCA_CNT_LOCAL_ACK_TIMEOUT);
	resent = shca_rcw_counter(test, w, SHCA_CNT_RESENT_TIMEOUT);
	shca_rcw_win_post(test, w, m);
	shca_rcw_win_sent(test, w, m);
	shca_rcw_answer(test, w, SHCA_RCW_ACK, shca_rcw_sq(4));
	shca_rcw_win_done(test, w, 0, 2);
	shca_rcw_win_again(m);
	shca_rcw_expect_msg(test, w, &m[2], 1);
	shca_rcw_expect_msg(test, w, &m[3], 0);
	shca_rcw_answer(test, w, SHCA_RCW_ACK, shca_rcw_sq(7));
	shca_rcw_win_done(test, w, 2, SHCA_RCW_WIN);
	KUNIT_EXPECT_EQ(test, shca_rcw_counter(test, w,
					       SHCA_CNT_LOCAL_ACK_TIMEOUT),
			timeouts + 1);
	KUNIT_EXPECT_EQ(test, shca_rcw_counter(test, w,
					       SHCA_CNT_RESENT_TIMEOUT),
			resent + 3);
	shca_rcw_quiet(test, w);
}

/* The READ responses for @len bytes of @remote at PSN @psn, injected. */
static void shca_rcw_win_read_resp(struct kunit *test, struct shca_rcw *w,
				   u32 psn, const u8 *remote, u32 len)
{
	struct shca_rcw_msg r = shca_rcw_read_resps(psn, remote, len);
	struct shca_frame *f;

	f = shca_rcw_buf(test, shca_rcw_npkts(w, len) * sizeof(*f));
	shca_frame_inject(test, w->ndev, f, shca_rcw_segment(test, w, &r, f));
}

/*
 * With max_rd_atomic 2, three READs and a SEND posted: two READs leave,
 * and nothing else until the first is answered; then the third, and the
 * SEND behind it.  Each READ places its own bytes; all four complete in
 * order.
 */
static void shca_rcw_win_rd_atomic(struct kunit *test)
{
	struct shca_dp_opts o = shca_dp_rc;
	struct shca_rcw_msg send;
	u8 *local[3], *remote[3];
	struct shca_rcw *w;
	struct ib_wc wc;
	int i;

	o.timeout = SHCA_RCW_SLOW;
	o.max_rd_atomic = 2;
	w = shca_rcw_setup(test, &o);
	send = shca_rcw_req_msg(test, IB_QPT_RC, false, 100);
	send.psn = shca_rcw_sq(3);
	for (i = 0; i < 3; i++) {
		local[i] = shca_rcw_buf(test, 100);
		remote[i] = shca_rcw_buf(test, 100);
		shca_dp_fill(remote[i], 100, 20 + i);
		shca_rcw_post_read(test, w, local[i], 100, 0x200 + i);
	}
	shca_rcw_post(test, w, &send, 0x203);
	shca_rcw_expect_read_req(test, w, shca_rcw_sq(0), 0, 100);
	shca_rcw_expect_read_req(test, w, shca_rcw_sq(1), 0, 100);
	shca_rcw_quiet(test, w);

	shca_rcw_win_read_resp(test, w, shca_rcw_sq(0), remote[0], 100);
	KUNIT_EXPECT_EQ(test, shca_rcw_wc(test, w, 0x200, &wc), IB_WC_SUCCESS);
	shca_rcw_expect_read_req(test, w, shca_rcw_sq(2), 0, 100);
	shca_rcw_expect_msg(test, w, &send, 0);
	shca_rcw_win_read_resp(test, w, shca_rcw_sq(1), remote[1], 100);
	shca_rcw_win_read_resp(test, w, shca_rcw_sq(2), remote[2], 100);
	shca_rcw_answer(test, w, SHCA_RCW_ACK, shca_rcw_sq(3));
	for (i = 1; i < 4; i++)
		KUNIT_EXPECT_EQ(test, shca_rcw_wc(test, w, 0x200 + i, &wc),
				IB_WC_SUCCESS);
	for (i = 0; i < 3; i++)
		KUNIT_EXPECT_EQ(test, memcmp(local[i], remote[i], 100), 0);
	shca_rcw_quiet(test, w);
}

/*
 * A fenced SEND behind a READ waits for the READ's responses; a SEND
 * that is not fenced would not (shca_rcw_win_rd_atomic).
 */
static void shca_rcw_win_fence(struct kunit *test)
{
	struct shca_rcw *w = shca_rcw_setup_rc(test, SHCA_RCW_SLOW);
	struct shca_rcw_msg send = shca_rcw_req_msg(test, IB_QPT_RC, false,
						    100);
	u8 *local = shca_rcw_buf(test, 100), *remote = shca_rcw_buf(test, 100);
	struct ib_sge sge = shca_dp_sge(&w->dp, (void *)send.data, send.len);
	struct ib_send_wr wr = {
		.wr_id = 0x301,
		.opcode = IB_WR_SEND,
		.sg_list = &sge,
		.num_sge = 1,
		.send_flags = IB_SEND_SIGNALED | IB_SEND_FENCE,
	};
	struct ib_wc wc;

	shca_dp_fill(remote, 100, 30);
	send.psn = shca_rcw_sq(1);
	shca_rcw_post_read(test, w, local, 100, 0x300);
	KUNIT_ASSERT_EQ(test, shca_dp_post_send(&w->dp, 0, &wr), 0);
	shca_rcw_expect_read_req(test, w, shca_rcw_sq(0), 0, 100);
	shca_rcw_quiet(test, w);
	shca_rcw_win_read_resp(test, w, shca_rcw_sq(0), remote, 100);
	KUNIT_EXPECT_EQ(test, shca_rcw_wc(test, w, 0x300, &wc), IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(test, memcmp(local, remote, 100), 0);
	shca_rcw_expect_msg(test, w, &send, 0);
	shca_rcw_answer(test, w, SHCA_RCW_ACK, shca_rcw_sq(1));
	KUNIT_EXPECT_EQ(test, shca_rcw_wc(test, w, 0x301, &wc), IB_WC_SUCCESS);
	shca_rcw_quiet(test, w);
}

/*
 * A SEND and a LOCAL_INV posted together.  The LOCAL_INV waits for the
 * SEND's answer, so the SEND asks for an ACK though a WQE follows it:
 * one that is no message.  Its ACK completes both, in order.
 */
static void shca_rcw_win_local(struct kunit *test)
{
	struct shca_rcw *w = shca_rcw_setup_rc(test, SHCA_RCW_SLOW);
	struct shca_rcw_msg m = shca_rcw_req_msg(test, IB_QPT_RC, false, 100);
	u8 *buf = shca_rcw_buf(test, 64);
	struct ib_send_wr inv = {
		.wr_id = 0x801,
		.opcode = IB_WR_LOCAL_INV,
		.send_flags = IB_SEND_SIGNALED,
	};
	struct ib_wc wc;

	w->mr = shca_dp_frwr(&w->dp, 0, buf, 64, IB_ACCESS_LOCAL_WRITE);
	inv.ex.invalidate_rkey = w->mr->rkey;
	shca_rcw_hold(w);
	shca_rcw_post(test, w, &m, 0x800);
	KUNIT_ASSERT_EQ(test, shca_dp_post_send(&w->dp, 0, &inv), 0);
	shca_rcw_release(w);
	shca_rcw_expect_msg(test, w, &m, 0);
	shca_rcw_quiet(test, w);
	KUNIT_EXPECT_TRUE(test, shca_dp_cq_empty(&w->dp, 0));
	shca_rcw_answer(test, w, SHCA_RCW_ACK, shca_rcw_sq(0));
	KUNIT_EXPECT_EQ(test, shca_rcw_wc(test, w, 0x800, &wc), IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(test, shca_rcw_wc(test, w, 0x801, &wc), IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(test, wc.opcode, IB_WC_LOCAL_INV);
	shca_rcw_quiet(test, w);
}

/*
 * A SEND, a READ and a SEND in flight, the first SEND asking for no ACK:
 * the READ follows it.  With @lost false the peer sends the READ's
 * response (which acknowledges the first SEND: the responder answers in
 * order) and an ACK of the last SEND: all three complete, in order.  With
 * @lost true the READ's response is lost, and the ACK of the last SEND
 * tells: the READ is asked for again, and the SEND behind it sent again
 * (go-back-N), before all three complete.
 */
static void shca_rcw_win_mixed(struct kunit *test, bool lost)
{
	struct shca_rcw *w = shca_rcw_setup_rc(test, SHCA_RCW_SLOW);
	struct shca_rcw_msg s0 = shca_rcw_req_msg(test, IB_QPT_RC, false, 50);
	struct shca_rcw_msg s2 = shca_rcw_req_msg(test, IB_QPT_RC, true, 60);
	u8 *local = shca_rcw_buf(test, 100), *remote = shca_rcw_buf(test, 100);
	struct ib_wc wc;

	shca_dp_fill(remote, 100, 40);
	s2.psn = shca_rcw_sq(2);
	s0.followed = true;
	shca_rcw_hold(w);
	shca_rcw_post(test, w, &s0, 0x400);
	shca_rcw_post_read(test, w, local, 100, 0x401);
	shca_rcw_post(test, w, &s2, 0x402);
	shca_rcw_release(w);
	shca_rcw_expect_msg(test, w, &s0, 0);
	shca_rcw_expect_read_req(test, w, shca_rcw_sq(1), 0, 100);
	shca_rcw_expect_msg(test, w, &s2, 0);
	if (lost) {
		shca_rcw_answer(test, w, SHCA_RCW_ACK, shca_rcw_sq(2));
		KUNIT_EXPECT_EQ(test, shca_rcw_wc(test, w, 0x400, &wc),
				IB_WC_SUCCESS);
		shca_rcw_expect_read_req(test, w, shca_rcw_sq(1), 0, 100);
		shca_rcw_expect_msg(test, w, &s2, 0);
	}
	shca_rcw_win_read_resp(test, w, shca_rcw_sq(1), remote, 100);
	shca_rcw_answer(test, w, SHCA_RCW_ACK, shca_rcw_sq(2));
	if (!lost)
		KUNIT_EXPECT_EQ(test, shca_rcw_wc(test, w, 0x400, &wc),
				IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(test, shca_rcw_wc(test, w, 0x401, &wc), IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(test, memcmp(local, remote, 100), 0);
	KUNIT_EXPECT_EQ(test, shca_rcw_wc(test, w, 0x402, &wc), IB_WC_SUCCESS);
	shca_rcw_quiet(test, w);
}

/*
 * The pacing cases: a WRITE of 160 packets, more than the congestion
 * window holds when fully open (SHCA_WIRE_WINDOW_PSNS, 128).
 */
#define SHCA_RCW_PACE 160
#define SHCA_RCW_PACE_ID 0x600

static struct shca_rcw_msg shca_rcw_pace_post(struct kunit *test,
					      struct shca_rcw *w)
{
	struct shca_rcw_msg m = shca_rcw_req_msg(test, IB_QPT_RC, true,
						 SHCA_RCW_PACE * SHCA_RCW_MTU);

	shca_rcw_post(test, w, &m, SHCA_RCW_PACE_ID);
	return m;
}

/* The ACK of the WRITE's last packet completes it, and nothing follows. */
static void shca_rcw_pace_done(struct kunit *test, struct shca_rcw *w,
			       const struct shca_rcw_msg *m)
{
	struct ib_wc wc;

	shca_rcw_answer(test, w, SHCA_RCW_ACK, shca_rcw_sq(SHCA_RCW_PACE - 1));
	KUNIT_EXPECT_EQ(test, shca_rcw_wc(test, w, SHCA_RCW_PACE_ID, &wc),
			IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(test, wc.byte_len, m->len);
	shca_rcw_quiet(test, w);
}

/*
 * 128 packets leave, the last asking for an ACK, and no more until an
 * answer: an ACK of the 64th lets the other 32 go.  With @forge, an ACK
 * of a PSN the window has not let go yet (150) comes first: a forgery,
 * dropped and counted stale, it completes nothing and lets nothing go.
 */
static void shca_rcw_pace(struct kunit *test, bool forge)
{
	struct shca_rcw *w = shca_rcw_setup_rc(test, SHCA_RCW_SLOW);
	struct shca_rcw_msg m = shca_rcw_pace_post(test, w);
	s64 stale;

	shca_rcw_expect_range(test, w, &m, 0, 128, true);
	if (forge) {
		stale = shca_frame_drops(test, w->dp.fx->ibdev,
					 SHCA_DROP_STALE);
		shca_rcw_answer(test, w, SHCA_RCW_ACK, shca_rcw_sq(150));
		KUNIT_EXPECT_EQ(test,
				shca_frame_wait_drops(test, w->dp.fx->ibdev,
						      SHCA_DROP_STALE,
						      stale + 1),
				stale + 1);
	}
	shca_rcw_quiet(test, w);
	KUNIT_EXPECT_TRUE(test, shca_dp_cq_empty(&w->dp, 0));
	shca_rcw_answer(test, w, SHCA_RCW_ACK, shca_rcw_sq(63));
	shca_rcw_expect_range(test, w, &m, 128, SHCA_RCW_PACE, false);
	shca_rcw_pace_done(test, w, &m);
}

static void shca_rcw_win_pace(struct kunit *test)
{
	shca_rcw_pace(test, false);
}

static void shca_rcw_win_pace_forged(struct kunit *test)
{
	shca_rcw_pace(test, true);
}

/*
 * The QP's packets the netdev has not freed, once they reach @n (or
 * after 2 s); then @settle ms more, for any that would follow.
 */
static int shca_rcw_tx_queued(struct shca_rcw *w, int n, unsigned int settle)
{
	atomic_t *queued = &to_shca_qp(w->dp.qp[0])->roce->tx_queued;
	unsigned long end = jiffies + 2 * HZ;

	while (atomic_read(queued) != n && time_before(jiffies, end))
		usleep_range(1000, 2000);
	msleep(settle);
	return atomic_read(queued);
}

/*
 * @m's first packets leave at the pace of the netdev, which holds them
 * (the capture keeps them, as a NIC's ring would): 64, and no more; 47 of
 * them taken leave 17 queued, and nothing follows; the 48th brings the
 * count to 16, and 48 more leave.  Each is @m's next.
 * Return: the packets taken, 48.
 */
static u32 shca_rcw_expect_paced(struct kunit *test, struct shca_rcw *w,
				 const struct shca_rcw_msg *m)
{
	const u32 held = SHCA_WIRE_TX_QUEUED - SHCA_WIRE_TX_RESUME - 1;

	KUNIT_EXPECT_EQ(test, shca_rcw_tx_queued(w, SHCA_WIRE_TX_QUEUED, 100),
			SHCA_WIRE_TX_QUEUED);
	shca_rcw_expect_range(test, w, m, 0, held, false);
	KUNIT_EXPECT_EQ(test, shca_rcw_tx_queued(w, SHCA_WIRE_TX_RESUME + 1,
						 100),
			SHCA_WIRE_TX_RESUME + 1);
	shca_rcw_expect_range(test, w, m, held, held + 1, false);
	KUNIT_EXPECT_EQ(test, shca_rcw_tx_queued(w, SHCA_WIRE_TX_QUEUED, 100),
			SHCA_WIRE_TX_QUEUED);
	return held + 1;
}

/*
 * Packets the netdev holds hold the requester back: of the 128 the
 * congestion window lets go, they leave as shca_rcw_expect_paced() has
 * it; an ACK lets the last 32 go.
 */
static void shca_rcw_win_tx_queued(struct kunit *test)
{
	struct shca_rcw *w = shca_rcw_setup_rc(test, SHCA_RCW_SLOW);
	struct shca_rcw_msg m = shca_rcw_pace_post(test, w);
	u32 taken = shca_rcw_expect_paced(test, w, &m);

	shca_rcw_expect_range(test, w, &m, taken, 128, true);
	shca_rcw_quiet(test, w);
	shca_rcw_answer(test, w, SHCA_RCW_ACK, shca_rcw_sq(63));
	shca_rcw_expect_range(test, w, &m, 128, SHCA_RCW_PACE, false);
	shca_rcw_pace_done(test, w, &m);
	KUNIT_EXPECT_EQ(test, shca_rcw_tx_queued(w, 0, 0), 0);
}

/*
 * A READ's 160 responses leave at the same pace (shca_rcw_expect_paced());
 * taken as they come, the rest follow, each the memory's next bytes, and
 * the packets after the READ run once it is answered.
 */
static void shca_rcw_resp_read_tx_queued(struct kunit *test)
{
	struct shca_rcw *w = shca_rcw_setup_rc(test, SHCA_RCW_SLOW);
	const u32 len = SHCA_RCW_PACE * SHCA_RCW_MTU;
	u8 *mem = shca_rcw_buf(test, len);
	struct shca_rcw_msg m = shca_rcw_read_resps(shca_rcw_rq(0), mem, len);

	shca_dp_fill(mem, len, 13);
	shca_rcw_read_req(test, w, shca_rcw_rq(0), mem, len);
	shca_rcw_expect_msg(test, w, &m, shca_rcw_expect_paced(test, w, &m));
	shca_rcw_sync(test, w, shca_rcw_rq(SHCA_RCW_PACE), 1);
	KUNIT_EXPECT_EQ(test, shca_rcw_tx_queued(w, 0, 0), 0);
}

/*
 * roce_tx.c's "One CPU": the WRITE's packets 113 to 127 are still held
 * below, sent from one CPU, when the ACK of its 64th comes in on another.
 * That CPU's receive softirq runs the QP, and would send the rest of the
 * WRITE from there, where a veth would let it overtake the held packets;
 * it hands the QP to that first CPU instead (tx_cpu_moves), and all 32
 * leave from there, each the WRITE's next.
 */
static void shca_rcw_win_one_cpu(struct kunit *test)
{
	struct shca_rcw *w;
	struct shca_rcw_msg m;
	struct shca_frame f;
	int cpu, other;
	s64 moves;
	u32 i;

	if (num_online_cpus() < 2)
		kunit_skip(test, "one CPU online");
	w = shca_rcw_setup_rc(test, SHCA_RCW_SLOW);
	m = shca_rcw_pace_post(test, w);
	shca_rcw_expect_range(test, w, &m, 0, 112, false);
	KUNIT_ASSERT_EQ(test, shca_rcw_tx_queued(w, 16, 100), 16);
	shca_rcw_expect_pkt(test, w, &m, 112, &f);
	cpu = shca_test_netdev_sent_cpu(w->dp.fx->ndev);
	other = cpumask_any_but(cpu_online_mask, cpu);
	KUNIT_ASSERT_EQ(test, set_cpus_allowed_ptr(current, cpumask_of(other)),
			0);
	moves = shca_rcw_counter(test, w, SHCA_CNT_TX_CPU_MOVES);
	shca_rcw_answer(test, w, SHCA_RCW_ACK, shca_rcw_sq(63));
	for (i = 113; i < SHCA_RCW_PACE; i++) {
		shca_rcw_expect_pkt_at(test, w, &m, i, i == 127, &f);
		KUNIT_EXPECT_EQ_MSG(test,
				    shca_test_netdev_sent_cpu(w->dp.fx->ndev),
				    cpu, "packet %u", i);
	}
	KUNIT_EXPECT_GT(test, shca_rcw_counter(test, w, SHCA_CNT_TX_CPU_MOVES),
			moves);
	set_cpus_allowed_ptr(current, cpu_possible_mask);
	shca_rcw_pace_done(test, w, &m);
}

/*
 * UC is paced too: of a WRITE of 100 packets, 64 leave and fill the
 * netdev's queue, and the WRITE does not complete; 47 of them taken leave
 * 17 queued, and nothing follows; the 48th brings the count to 16, and
 * the WRITE's other 36 leave, then the next WRITE, whole.  Each packet is
 * its message's next, and both complete.
 */
static void shca_rcw_uc_tx_queued(struct kunit *test)
{
	const u32 held = SHCA_WIRE_TX_QUEUED - SHCA_WIRE_TX_RESUME - 1;
	struct shca_dp_opts o = shca_dp_rc;
	struct shca_rcw_msg m[2];
	struct shca_rcw *w;
	struct ib_wc wc;

	o.type = IB_QPT_UC;
	w = shca_rcw_setup(test, &o);
	m[0] = shca_rcw_req_msg(test, IB_QPT_UC, true, 100 * SHCA_RCW_MTU);
	m[1] = shca_rcw_req_msg(test, IB_QPT_UC, true, 2 * SHCA_RCW_MTU + 5);
	m[1].psn = shca_rcw_sq(100);
	shca_rcw_post(test, w, &m[0], 0x50);
	shca_rcw_post(test, w, &m[1], 0x51);
	KUNIT_EXPECT_EQ(test, shca_rcw_tx_queued(w, SHCA_WIRE_TX_QUEUED, 100),
			SHCA_WIRE_TX_QUEUED);
	KUNIT_EXPECT_TRUE(test, shca_dp_cq_empty(&w->dp, 0));
	shca_rcw_expect_range(test, w, &m[0], 0, held, false);
	KUNIT_EXPECT_EQ(test, shca_rcw_tx_queued(w, SHCA_WIRE_TX_RESUME + 1,
						 100),
			SHCA_WIRE_TX_RESUME + 1);
	shca_rcw_expect_range(test, w, &m[0], held, 100, false);
	shca_rcw_expect_range(test, w, &m[1], 0, 3, false);
	KUNIT_EXPECT_EQ(test, shca_rcw_wc(test, w, 0x50, &wc), IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(test, shca_rcw_wc(test, w, 0x51, &wc), IB_WC_SUCCESS);
	shca_rcw_quiet(test, w);
	KUNIT_EXPECT_EQ(test, shca_rcw_tx_queued(w, 0, 0), 0);
}

/*
 * A UC WRITE paused by the pacing (64 of its 100 packets queued) and its
 * QP moved to ERR: the WRITE completes flushed, the 64 packets already
 * queued leave, and not one of the other 36.
 */
static void shca_rcw_uc_paused_err(struct kunit *test)
{
	struct shca_dp_opts o = shca_dp_rc;
	struct shca_rcw_msg m;
	struct shca_rcw *w;
	struct ib_wc wc;

	o.type = IB_QPT_UC;
	w = shca_rcw_setup(test, &o);
	m = shca_rcw_req_msg(test, IB_QPT_UC, true, 100 * SHCA_RCW_MTU);
	shca_rcw_post(test, w, &m, 0x52);
	KUNIT_EXPECT_EQ(test, shca_rcw_tx_queued(w, SHCA_WIRE_TX_QUEUED, 100),
			SHCA_WIRE_TX_QUEUED);
	KUNIT_ASSERT_EQ(test, shca_dp_modify(w->dp.qp[0], IB_QPS_ERR), 0);
	KUNIT_EXPECT_EQ(test, shca_rcw_wc(test, w, 0x52, &wc),
			IB_WC_WR_FLUSH_ERR);
	shca_rcw_expect_range(test, w, &m, 0, SHCA_WIRE_TX_QUEUED, false);
	shca_rcw_quiet(test, w);
}

/*
 * "One CPU" on UC, whose responder drops an overtaken message for good:
 * a WRITE's packets 1 and 2, sent from one CPU, are still held below
 * when the next WRITE is posted on another, whose busy-polled CQ runs the
 * engine there.  The QP is handed back to the first CPU (tx_cpu_moves),
 * and the second WRITE leaves from there, after the first.
 */
static void shca_rcw_uc_one_cpu(struct kunit *test)
{
	struct shca_dp_opts o = shca_dp_rc;
	struct shca_rcw_msg m[2];
	struct shca_frame f;
	struct shca_rcw *w;
	struct ib_wc wc;
	int cpu, other;
	s64 moves;
	u32 i;

	if (num_online_cpus() < 2)
		kunit_skip(test, "one CPU online");
	o.type = IB_QPT_UC;
	w = shca_rcw_setup(test, &o);
	m[0] = shca_rcw_req_msg(test, IB_QPT_UC, true, 3 * SHCA_RCW_MTU);
	m[1] = shca_rcw_req_msg(test, IB_QPT_UC, true, 3 * SHCA_RCW_MTU - 7);
	m[1].psn = shca_rcw_sq(3);
	cpu = cpumask_first(cpu_online_mask);
	other = cpumask_any_but(cpu_online_mask, cpu);

	KUNIT_ASSERT_EQ(test, set_cpus_allowed_ptr(current, cpumask_of(cpu)),
			0);
	/* A consumer that busy-polls its CQ has the engine on its CPU. */
	KUNIT_EXPECT_EQ(test, ib_poll_cq(w->dp.cq[0], 1, &wc), 0);
	shca_rcw_post(test, w, &m[0], 0x40);
	shca_rcw_expect_pkt(test, w, &m[0], 0, &f);
	KUNIT_ASSERT_EQ(test, shca_test_netdev_sent_cpu(w->ndev), cpu);
	KUNIT_ASSERT_EQ(test, shca_rcw_tx_queued(w, 2, 0), 2);
	KUNIT_EXPECT_EQ(test, shca_rcw_wc(test, w, 0x40, &wc), IB_WC_SUCCESS);

	KUNIT_ASSERT_EQ(test, set_cpus_allowed_ptr(current,
						   cpumask_of(other)), 0);
	moves = shca_rcw_counter(test, w, SHCA_CNT_TX_CPU_MOVES);
	KUNIT_EXPECT_EQ(test, ib_poll_cq(w->dp.cq[0], 1, &wc), 0);
	shca_rcw_post(test, w, &m[1], 0x41);
	shca_rcw_expect_range(test, w, &m[0], 1, 3, false);
	for (i = 0; i < 3; i++) {
		shca_rcw_expect_pkt(test, w, &m[1], i, &f);
		KUNIT_EXPECT_EQ_MSG(test, shca_test_netdev_sent_cpu(w->ndev),
				    cpu, "packet %u", i);
	}
	KUNIT_EXPECT_GT(test, shca_rcw_counter(test, w, SHCA_CNT_TX_CPU_MOVES),
			moves);
	KUNIT_EXPECT_EQ(test, shca_rcw_wc(test, w, 0x41, &wc), IB_WC_SUCCESS);
	set_cpus_allowed_ptr(current, cpu_possible_mask);
	shca_rcw_quiet(test, w);
}

/* What answers the device's message, ahead of the peer's SEND. */
struct shca_rcw_order_case {
	const char *name;
	bool read;		/* a READ, and its response; else a SEND, an ACK */
};

static const struct shca_rcw_order_case shca_rcw_order_cases[] = {
	{ "ack", false },
	{ "read-response", true },
};

static void shca_rcw_order_desc(const struct shca_rcw_order_case *c,
				char *desc)
{
	strscpy(desc, c->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(shca_rcw_order, shca_rcw_order_cases, shca_rcw_order_desc);

/*
 * The answer to the device's message (an ACK of its SEND, the response
 * to its READ) and the peer's next SEND reach the QP in one batch: the
 * message completes before the SEND's receive, on their one CQ, in the
 * order the wire brought them (roce_rx.c), as ib_send_lat -e needs.  The
 * receive and the READ hold the bytes sent, and the SEND is acknowledged.
 */
static void shca_rcw_answer_order(struct kunit *test)
{
	const struct shca_rcw_order_case *c = test->param_value;
	struct shca_rcw *w = shca_rcw_setup_rc(test, SHCA_RCW_SLOW);
	struct shca_rcw_msg m = shca_rcw_req_msg(test, IB_QPT_RC, false, 40);
	u8 *local = shca_rcw_buf(test, 40), *remote = shca_rcw_buf(test, 40);
	u8 *src = shca_rcw_buf(test, 8), *dst = shca_rcw_buf(test, 8);
	struct shca_pkt pkt = shca_rcw_send8();
	struct shca_frame f[2];
	struct ib_wc wc;

	shca_dp_fill(remote, 40, 21);
	shca_dp_fill(src, 8, 22);
	KUNIT_ASSERT_EQ(test, shca_dp_post_recv(&w->dp, 0, 0x71, dst, 8), 0);
	if (c->read) {
		shca_rcw_post_read(test, w, local, 40, 0x70);
		shca_rcw_expect_read_req(test, w, shca_rcw_sq(0), 0, 40);
		m = shca_rcw_read_resps(shca_rcw_sq(0), remote, 40);
		KUNIT_ASSERT_EQ(test, shca_rcw_segment(test, w, &m, f), 1);
	} else {
		shca_rcw_post(test, w, &m, 0x70);
		shca_rcw_expect_msg(test, w, &m, 0);
		shca_rcw_answer_frame(test, w, SHCA_RCW_ACK, shca_rcw_sq(0),
				      &f[0]);
	}
	shca_rcw_build(test, w, &pkt, src, &f[1]);
	shca_rcw_inject_batch(test, w, f, 2);

	KUNIT_EXPECT_EQ(test, shca_rcw_wc(test, w, 0x70, &wc), IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(test, wc.opcode,
			c->read ? IB_WC_RDMA_READ : IB_WC_SEND);
	KUNIT_EXPECT_EQ(test, shca_rcw_wc(test, w, 0x71, &wc), IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(test, wc.opcode, IB_WC_RECV);
	KUNIT_EXPECT_EQ(test, wc.byte_len, 8);
	KUNIT_EXPECT_EQ(test, memcmp(dst, src, 8), 0);
	if (c->read)
		KUNIT_EXPECT_EQ(test, memcmp(local, remote, 40), 0);
	shca_rcw_expect_aeth(test, w, SHCA_RCW_ACK, shca_rcw_rq(0), 1);
	shca_rcw_quiet(test, w);
}

/* Where the QP's engine stands when the peer's SEND arrives. */
struct shca_rcw_here_case {
	const char *name;
	bool held;		/* a run holds it */
	bool odp;		/* the device has an ODP MR */
};

static const struct shca_rcw_here_case shca_rcw_here_cases[] = {
	{ "idle", false, false },
	{ "held", true, false },
	{ "odp-mr", false, true },
};

static void shca_rcw_here_desc(const struct shca_rcw_here_case *c, char *desc)
{
	strscpy(desc, c->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(shca_rcw_here, shca_rcw_here_cases, shca_rcw_here_desc);

/*
 * The receive softirq runs a QP whose engine is idle (engine.c), and only
 * such a one: a SEND to it is executed there, counted in rx_softirq_runs.
 * A run in progress holds the engine: the SEND waits in the QP's queue,
 * with nothing of it done, until the run ends and the engine's own work
 * executes it.  On a device with an ODP MR (counted as its registration
 * counts it, shca_dev_odp_get()), whose pages a fault would sleep for,
 * the work executes it too.  Either way the bytes land, one completion
 * and one ACK.
 */
static void shca_rcw_rx_here(struct kunit *test)
{
	const struct shca_rcw_here_case *c = test->param_value;
	struct shca_rcw *w = shca_rcw_setup_rc(test, SHCA_RCW_SLOW);
	struct shca_dev *dev = to_shca_dev(w->dp.fx->ibdev);
	struct shca_qp *qp = to_shca_qp(w->dp.qp[0]);
	u8 *src = shca_rcw_buf(test, 8), *dst = shca_rcw_buf(test, 8);
	struct shca_pkt pkt = shca_rcw_send8();
	struct shca_frame f;
	struct ib_wc wc;
	s64 runs;

	shca_dp_fill(src, 8, 23);
	KUNIT_ASSERT_EQ(test, shca_dp_post_recv(&w->dp, 0, 0x72, dst, 8), 0);
	shca_rcw_build(test, w, &pkt, src, &f);
	runs = shca_rcw_counter(test, w, SHCA_CNT_RX_SOFTIRQ_RUNS);
	if (c->odp)
		shca_dev_odp_get(dev);
	if (c->held) {
		shca_rcw_inject_held(test, w, &f, 1);
		/* Queued, not executed: no receive consumed, no ACK. */
		KUNIT_EXPECT_TRUE(test, shca_dp_cq_empty(&w->dp, 0));
		KUNIT_EXPECT_FALSE(test, shca_frame_sent(test, w->ndev, &f, 0));
		shca_engine_unlock(qp);
	} else {
		shca_frame_inject(test, w->ndev, &f, 1);
	}

	KUNIT_EXPECT_EQ(test, shca_rcw_wc(test, w, 0x72, &wc), IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(test, wc.opcode, IB_WC_RECV);
	KUNIT_EXPECT_EQ(test, wc.byte_len, 8);
	KUNIT_EXPECT_EQ(test, memcmp(dst, src, 8), 0);
	shca_rcw_expect_aeth(test, w, SHCA_RCW_ACK, shca_rcw_rq(0), 1);
	shca_rcw_quiet(test, w);
	if (c->odp)
		shca_dev_odp_put(dev);
	KUNIT_EXPECT_EQ(test, shca_rcw_counter(test, w,
					       SHCA_CNT_RX_SOFTIRQ_RUNS) - runs,
			c->held || c->odp ? 0 : 1);
}

/*
 * A loss halves the window, once per loss event.  Packet 10 lost: the
 * NAK goes back to it and 64 leave (10 to 73).  The same NAK again
 * changes nothing.  Packet 40 of that resend lost too: the same event,
 * so 64 again (40 to 103).  The ACK of the 103rd opens the window to 65:
 * 104 to the end leave (24 of them resent).
 */
static void shca_rcw_win_halve(struct kunit *test)
{
	struct shca_rcw *w = shca_rcw_setup_rc(test, SHCA_RCW_SLOW);
	struct shca_rcw_msg m = shca_rcw_pace_post(test, w);
	u8 nak = SHCA_RCW_NAK(SHCA_RCW_NAK_SEQ);
	s64 resent;

	resent = shca_rcw_counter(test, w, SHCA_CNT_RESENT_SEQ);
	shca_rcw_expect_range(test, w, &m, 0, 128, true);
	shca_rcw_answer(test, w, nak, shca_rcw_sq(10));
	shca_rcw_expect_range(test, w, &m, 10, 74, true);
	shca_rcw_quiet(test, w);
	shca_rcw_answer(test, w, nak, shca_rcw_sq(10));
	shca_rcw_quiet(test, w);
	KUNIT_EXPECT_EQ(test, shca_rcw_counter(test, w, SHCA_CNT_RESENT_SEQ),
			resent + 64);
	shca_rcw_answer(test, w, nak, shca_rcw_sq(40));
	shca_rcw_expect_range(test, w, &m, 40, 104, true);
	shca_rcw_quiet(test, w);
	shca_rcw_answer(test, w, SHCA_RCW_ACK, shca_rcw_sq(103));
	shca_rcw_expect_range(test, w, &m, 104, SHCA_RCW_PACE, false);
	KUNIT_EXPECT_EQ(test, shca_rcw_counter(test, w, SHCA_CNT_RESENT_SEQ),
			resent + 64 + 64 + 24);
	shca_rcw_pace_done(test, w, &m);
}

/*
 * A timeout closes the window to SHCA_WIRE_CWND_MIN (8) and halves its
 * threshold (64): 8 packets go again.  Then it doubles for each window
 * acknowledged (16, 32, 64), and opens by one per window above the
 * threshold (65): 8 to 23, 24 to 55, 56 to 119, 120 to the end.
 */
static void shca_rcw_win_slow_start(struct kunit *test)
{
	struct shca_rcw *w = shca_rcw_setup_rc(test, SHCA_RCW_WIN_TIMEOUT);
	struct shca_rcw_msg m = shca_rcw_pace_post(test, w);
	static const u32 burst[] = { 8, 24, 56, 120, SHCA_RCW_PACE };
	s64 resent;
	int i;

	resent = shca_rcw_counter(test, w, SHCA_CNT_RESENT_TIMEOUT);
	shca_rcw_expect_range(test, w, &m, 0, 128, true);
	shca_rcw_expect_range(test, w, &m, 0, burst[0], true);
	KUNIT_EXPECT_EQ(test, shca_rcw_counter(test, w,
					       SHCA_CNT_RESENT_TIMEOUT),
			resent + burst[0]);
	for (i = 1; i < ARRAY_SIZE(burst); i++) {
		shca_rcw_answer(test, w, SHCA_RCW_ACK,
				shca_rcw_sq(burst[i - 1] - 1));
		shca_rcw_expect_range(test, w, &m, burst[i - 1], burst[i],
				      burst[i] != SHCA_RCW_PACE);
	}
	shca_rcw_pace_done(test, w, &m);
}

/*
 * A READ of 160 packets' worth, more than the congestion window: asked
 * for in two parts, 128 PSNs, then, once their responses are in, the
 * other 32.  A response of the second part lost: its rest is asked for
 * again, from the lost one, as the first request of that part had it.
 */
static void shca_rcw_win_read_parts(struct kunit *test)
{
	struct shca_rcw *w = shca_rcw_setup_rc(test, SHCA_RCW_SLOW);
	u32 len = SHCA_RCW_PACE * SHCA_RCW_MTU, part = 128 * SHCA_RCW_MTU;
	u32 lost = part + 5 * SHCA_RCW_MTU;
	u8 *local = shca_rcw_buf(test, len), *remote = shca_rcw_buf(test, len);
	struct shca_frame *f;
	struct shca_rcw_msg r;
	struct ib_wc wc;

	shca_dp_fill(remote, len, 50);
	shca_rcw_post_read(test, w, local, len, 0x700);
	shca_rcw_expect_read_req(test, w, shca_rcw_sq(0), 0, part);
	shca_rcw_quiet(test, w);
	shca_rcw_win_read_resp(test, w, shca_rcw_sq(0), remote, part);
	shca_rcw_expect_read_req(test, w, shca_rcw_sq(128), part, len - part);
	shca_rcw_quiet(test, w);
	/* Of the second part's 32 responses, 5 arrive, then 2 after a loss. */
	r = shca_rcw_read_resps(shca_rcw_sq(128), remote + part, len - part);
	f = shca_rcw_buf(test, 32 * sizeof(*f));
	KUNIT_ASSERT_EQ(test, shca_rcw_segment(test, w, &r, f), 32);
	shca_frame_inject(test, w->ndev, f, 5);
	shca_frame_inject(test, w->ndev, f + 6, 2);
	shca_rcw_expect_read_req(test, w, shca_rcw_sq(133), lost, len - lost);
	shca_rcw_quiet(test, w);
	shca_rcw_win_read_resp(test, w, shca_rcw_sq(133), remote + lost,
			       len - lost);
	KUNIT_EXPECT_EQ(test, shca_rcw_wc(test, w, 0x700, &wc), IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(test, memcmp(local, remote, len), 0);
	shca_rcw_quiet(test, w);
}

static void shca_rcw_win_implied(struct kunit *test)
{
	shca_rcw_win_mixed(test, false);
}

static void shca_rcw_win_read_lost(struct kunit *test)
{
	shca_rcw_win_mixed(test, true);
}

/* --- A WQE in flight whose ring slot is rewritten ---------------- */

/* How the slot of a WQE the engine has taken is rewritten. */
enum shca_rcw_scribble {
	SHCA_RCW_INLINE_EMPTY,	/* an inline SEND of no bytes */
	SHCA_RCW_INLINE_HUGE,	/* an inline SEND past the QP's max_inline */
	SHCA_RCW_TO_READ,	/* a READ of one byte */
	SHCA_RCW_TO_SEND,	/* a SEND of 64 KiB from the same memory */
	SHCA_RCW_GARBAGE,	/* every byte 0xff */
};

/* What the peer does once the slot is rewritten. */
enum shca_rcw_after {
	SHCA_RCW_SEQ_NAK,	/* a SEND: NAKs its MIDDLE's PSN */
	SHCA_RCW_RNR_NAK,	/* a SEND: RNR NAKs its MIDDLE */
	SHCA_RCW_FLUSH,		/* a SEND: the QP is moved to ERR */
	SHCA_RCW_READ_RESP,	/* a READ: its responses, the MIDDLE lost */
};

struct shca_rcw_ring_case {
	const char *name;
	enum shca_rcw_after after;
	enum shca_rcw_scribble how;
};

static const struct shca_rcw_ring_case shca_rcw_ring_cases[] = {
	{ "seq-nak-inline-empty", SHCA_RCW_SEQ_NAK, SHCA_RCW_INLINE_EMPTY },
	{ "seq-nak-inline-huge", SHCA_RCW_SEQ_NAK, SHCA_RCW_INLINE_HUGE },
	{ "seq-nak-to-read", SHCA_RCW_SEQ_NAK, SHCA_RCW_TO_READ },
	{ "seq-nak-to-send", SHCA_RCW_SEQ_NAK, SHCA_RCW_TO_SEND },
	{ "seq-nak-garbage", SHCA_RCW_SEQ_NAK, SHCA_RCW_GARBAGE },
	{ "rnr-nak-inline-empty", SHCA_RCW_RNR_NAK, SHCA_RCW_INLINE_EMPTY },
	{ "rnr-nak-to-read", SHCA_RCW_RNR_NAK, SHCA_RCW_TO_READ },
	{ "flush-to-read", SHCA_RCW_FLUSH, SHCA_RCW_TO_READ },
	{ "read-inline-empty", SHCA_RCW_READ_RESP, SHCA_RCW_INLINE_EMPTY },
	{ "read-inline-huge", SHCA_RCW_READ_RESP, SHCA_RCW_INLINE_HUGE },
	{ "read-to-send", SHCA_RCW_READ_RESP, SHCA_RCW_TO_SEND },
	{ "read-garbage", SHCA_RCW_READ_RESP, SHCA_RCW_GARBAGE },
};

static void shca_rcw_ring_desc(const struct shca_rcw_ring_case *c,
			       char *desc)
{
	strscpy(desc, c->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(shca_rcw_ring, shca_rcw_ring_cases, shca_rcw_ring_desc);

/*
 * Rewrites the slot of the WQE posted last, as a process may rewrite its
 * own ring at any moment: a kernel QP's ring is kernel memory, but the
 * engine reads both kinds alike.
 */
static void shca_rcw_scribble(struct shca_rcw *w, enum shca_rcw_scribble how)
{
	struct shca_queue *q = &to_shca_qp(w->dp.qp[0])->sq.queue;
	struct softhca_send_wqe *wqe = shca_queue_entry(q, q->prod - 1);
	struct softhca_sge *sge = (struct softhca_sge *)(wqe + 1);

	if (how == SHCA_RCW_GARBAGE) {
		memset(wqe, 0xff, q->entry_size);
		return;
	}
	wqe->wr_id = 0xbad;
	wqe->opcode = how == SHCA_RCW_TO_READ ? IB_WR_RDMA_READ : IB_WR_SEND;
	wqe->flags = SOFTHCA_WQE_SIGNALED;
	switch (how) {
	case SHCA_RCW_INLINE_EMPTY:
	case SHCA_RCW_INLINE_HUGE:
		wqe->flags |= SOFTHCA_WQE_INLINE;
		wqe->inline_len = how == SHCA_RCW_INLINE_EMPTY ? 0 : SZ_1M;
		wqe->num_sge = 0;
		break;
	default:
		wqe->num_sge = 1;
		sge->length = how == SHCA_RCW_TO_READ ? 1 : SZ_64K;
		break;
	}
}

/* A SEND of three packets, answered as @c says after the rewrite. */
static void shca_rcw_ring_send(struct kunit *test, struct shca_rcw *w,
			       const struct shca_rcw_ring_case *c)
{
	struct shca_rcw_msg m = shca_rcw_req_msg(test, IB_QPT_RC, false,
						 3 * SHCA_RCW_MTU - 5);
	struct ib_wc wc;

	shca_rcw_post(test, w, &m, 0x70);
	shca_rcw_expect_msg(test, w, &m, 0);
	shca_rcw_scribble(w, c->how);
	if (c->after == SHCA_RCW_FLUSH) {
		KUNIT_ASSERT_EQ(test, shca_dp_modify(w->dp.qp[0], IB_QPS_ERR), 0);
		KUNIT_EXPECT_EQ(test, shca_rcw_wc(test, w, 0x70, &wc),
				IB_WC_WR_FLUSH_ERR);
		KUNIT_EXPECT_EQ(test, wc.opcode, IB_WC_SEND);
		shca_rcw_quiet(test, w);
		return;
	}
	shca_rcw_answer(test, w, c->after == SHCA_RCW_SEQ_NAK ?
			SHCA_RCW_NAK(SHCA_RCW_NAK_SEQ) :
			SHCA_RCW_RNR(SHCA_RCW_MIN_RNR), shca_rcw_sq(1));
	/* The MIDDLE and the LAST again, with the bytes first posted. */
	shca_rcw_expect_msg(test, w, &m, 1);
	shca_rcw_answer(test, w, SHCA_RCW_ACK, shca_rcw_sq(2));
	KUNIT_EXPECT_EQ(test, shca_rcw_wc(test, w, 0x70, &wc), IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(test, wc.opcode, IB_WC_SEND);
	KUNIT_EXPECT_EQ(test, wc.byte_len, m.len);
	shca_rcw_quiet(test, w);
}

/*
 * A READ of three responses, rewritten once its request left: the FIRST
 * and the LAST come, the lost MIDDLE is asked for again as the READ
 * first posted would ask, and the responses land in the buffer first
 * posted, its edges untouched.
 */
static void shca_rcw_ring_read(struct kunit *test, struct shca_rcw *w,
			       const struct shca_rcw_ring_case *c)
{
	u8 *local = shca_rcw_buf(test, 702), *remote = shca_rcw_buf(test, 700);
	struct shca_rcw_msg m = shca_rcw_read_resps(shca_rcw_sq(0), remote,
						    700);
	struct shca_frame f[3];
	struct ib_wc wc;

	shca_dp_fill(remote, 700, 9);
	shca_rcw_post_read(test, w, local + 1, 700, 0x71);
	shca_rcw_expect_read_req(test, w, shca_rcw_sq(0), 0, 700);
	shca_rcw_scribble(w, c->how);
	KUNIT_ASSERT_EQ(test, shca_rcw_segment(test, w, &m, f), 3);
	shca_frame_inject(test, w->ndev, &f[0], 1);
	shca_frame_inject(test, w->ndev, &f[2], 1);
	shca_rcw_expect_read_req(test, w, shca_rcw_sq(1), SHCA_RCW_MTU,
				 700 - SHCA_RCW_MTU);
	m.psn = shca_rcw_sq(1);
	m.data = remote + SHCA_RCW_MTU;
	m.len = 700 - SHCA_RCW_MTU;
	KUNIT_ASSERT_EQ(test, shca_rcw_segment(test, w, &m, f), 2);
	shca_frame_inject(test, w->ndev, f, 2);
	KUNIT_EXPECT_EQ(test, shca_rcw_wc(test, w, 0x71, &wc), IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(test, wc.opcode, IB_WC_RDMA_READ);
	KUNIT_EXPECT_EQ(test, wc.byte_len, 700);
	KUNIT_EXPECT_EQ(test, memcmp(local + 1, remote, 700), 0);
	KUNIT_EXPECT_EQ(test, local[0] | local[701], 0);
	shca_rcw_quiet(test, w);
}

/*
 * A WQE the engine has taken is executed as it was when taken, however
 * its ring slot is rewritten meanwhile: resends after a sequence or RNR
 * NAK carry the bytes first posted, READ responses land where the READ
 * first posted said, and the completion (or the flush) has the first
 * work request's id, opcode and length.  The QP stays in RTS.  On the
 * debug kernel, a requester that read the slot again would also copy
 * packets from, or READ responses to, past its copy of an inline WQE,
 * which KASAN reports.
 */
static void shca_rcw_req_ring_rewrite(struct kunit *test)
{
	const struct shca_rcw_ring_case *c = test->param_value;
	struct shca_rcw *w = shca_rcw_setup_rc(test, SHCA_RCW_SLOW);

	if (c->after == SHCA_RCW_READ_RESP)
		shca_rcw_ring_read(test, w, c);
	else
		shca_rcw_ring_send(test, w, c);
	if (c->after != SHCA_RCW_FLUSH)
		KUNIT_EXPECT_EQ(test, shca_rcw_state(w->dp.qp[0]), IB_QPS_RTS);
}

/* --- RESET under traffic ------------------------------------------- */

/* QP 0 to @state, and its CQ polled empty (ERR flushes the SQ). */
static void shca_rcw_to(struct kunit *test, struct shca_rcw *w,
			enum ib_qp_state state)
{
	struct ib_qp_attr attr = { .qp_state = state };
	struct ib_wc wc[8];

	KUNIT_ASSERT_EQ(test, ib_modify_qp(w->dp.qp[0], &attr, IB_QP_STATE),
			0);
	while (ib_poll_cq(w->dp.cq[0], ARRAY_SIZE(wc), wc) > 0)
		;
}

/*
 * A QP in RESET, or reconnected (INIT), takes no packet: requests and
 * answers alike are dropped on arrival and counted as refused, nothing
 * is sent; once connected again, it starts afresh at rq_psn.
 */
static void shca_rcw_reset_drops(struct kunit *test)
{
	struct shca_rcw *w = shca_rcw_setup_rc(test, SHCA_RCW_SLOW);
	struct ib_device *ibdev = w->dp.fx->ibdev;
	u8 *src = shca_rcw_buf(test, 64), *dst = shca_rcw_buf(test, 64);
	struct shca_pkt pkts[] = {
		{ .opcode = SHCA_OPCODE(RC, SEND_ONLY), .psn = shca_rcw_rq(0),
		  .ackreq = true, .paylen = 64 },
		{ .opcode = SHCA_OPCODE(RC, RDMA_READ_RESPONSE_ONLY),
		  .syndrome = SHCA_RCW_ACK, .psn = shca_rcw_sq(0),
		  .paylen = 16 },
		{ .opcode = SHCA_OPCODE(RC, ACKNOWLEDGE),
		  .syndrome = SHCA_RCW_ACK, .psn = shca_rcw_sq(0) },
	};
	struct shca_frame f[ARRAY_SIZE(pkts)];
	struct shca_rcw_msg m = {
		.transport = SHCA_TRANSPORT_RC,
		.ops = shca_rcw_send_ops,
		.psn = shca_rcw_rq(0),
		.data = src,
		.len = 64,
		.ackreq = true,
	};
	struct ib_qp_attr attr = {
		.qp_state = IB_QPS_INIT,
		.port_num = SHCA_PORT,
		.qp_access_flags = shca_dp_rc.access,
	};
	struct ib_wc wc;
	s64 refused;
	int i;

	shca_dp_fill(src, 64, 15);
	for (i = 0; i < ARRAY_SIZE(pkts); i++)
		shca_rcw_build(test, w, &pkts[i], src, &f[i]);
	KUNIT_ASSERT_EQ(test, shca_dp_post_recv(&w->dp, 0, 6, dst, 64), 0);
	shca_rcw_to(test, w, IB_QPS_RESET);
	refused = shca_frame_drops(test, ibdev, SHCA_DROP_REFUSED);
	shca_frame_inject(test, w->ndev, f, ARRAY_SIZE(f));
	KUNIT_EXPECT_EQ(test, shca_frame_wait_drops(test, ibdev,
						    SHCA_DROP_REFUSED,
						    refused + 3), refused + 3);
	KUNIT_ASSERT_EQ(test, ib_modify_qp(w->dp.qp[0], &attr,
					   IB_QP_STATE | IB_QP_PKEY_INDEX |
					   IB_QP_PORT | IB_QP_ACCESS_FLAGS), 0);
	shca_frame_inject(test, w->ndev, f, ARRAY_SIZE(f));
	KUNIT_EXPECT_EQ(test, shca_frame_wait_drops(test, ibdev,
						    SHCA_DROP_REFUSED,
						    refused + 6), refused + 6);
	shca_rcw_quiet(test, w);

	shca_rcw_to(test, w, IB_QPS_RESET);
	shca_rcw_connect(test, w, &shca_dp_rc);
	KUNIT_ASSERT_EQ(test, shca_dp_post_recv(&w->dp, 0, 7, dst, 64), 0);
	KUNIT_ASSERT_EQ(test, shca_rcw_segment(test, w, &m, f), 1);
	shca_frame_inject(test, w->ndev, f, 1);
	shca_rcw_expect_aeth(test, w, SHCA_RCW_ACK, shca_rcw_rq(0), 1);
	KUNIT_EXPECT_EQ(test, shca_rcw_wc(test, w, 7, &wc), IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(test, memcmp(dst, src, 64), 0);
}

/* The peer of the race: frames injected in a loop until stopped. */
struct shca_rcw_storm {
	struct net_device *ndev;
	const struct shca_frame *f;
	unsigned int n;
	atomic_t rounds;
};

static int shca_rcw_storm_fn(void *arg)
{
	struct shca_rcw_storm *s = arg;
	struct sk_buff *skb;
	unsigned int i;

	while (!kthread_should_stop()) {
		for (i = 0; i < s->n; i++) {
			skb = netdev_alloc_skb(s->ndev, s->f[i].len);
			if (!skb)
				break;
			skb_put_data(skb, s->f[i].buf, s->f[i].len);
			skb->protocol = eth_type_trans(skb, s->ndev);
			local_bh_disable();
			netif_rx(skb);
			local_bh_enable();
		}
		atomic_inc(&s->rounds);
		cond_resched();
	}
	return 0;
}

/* The race's rounds: READ in flight, then RESET (or ERR, then RESET). */
#define SHCA_RCW_RACE_ROUNDS 300
#define SHCA_RCW_RACE_PKTS 16

/* The frames of the storm: READ responses, SENDs and WRITEs to QP 0. */
static void shca_rcw_storm_frames(struct kunit *test, struct shca_rcw *w,
				  u8 *mem, struct shca_frame *f)
{
	enum shca_pos pos;
	struct shca_pkt pkt;
	u32 i;

	for (i = 0; i < SHCA_RCW_RACE_PKTS; i++) {
		pos = shca_rcw_pos(i, SHCA_RCW_RACE_PKTS);
		pkt = (struct shca_pkt){
			.opcode = SHCA_TRANSPORT_RC |
				  shca_rcw_read_resp_ops[pos],
			.syndrome = SHCA_RCW_ACK,
			.psn = shca_rcw_sq(i),
			.paylen = SHCA_RCW_MTU,
		};
		shca_rcw_build(test, w, &pkt, mem, &f[3 * i]);
		pkt = (struct shca_pkt){
			.opcode = SHCA_OPCODE(RC, SEND_ONLY),
			.psn = shca_rcw_rq(i),
			.ackreq = true,
			.paylen = 32,
		};
		shca_rcw_build(test, w, &pkt, mem, &f[3 * i + 1]);
		pkt = (struct shca_pkt){
			.opcode = SHCA_OPCODE(RC, RDMA_WRITE_ONLY),
			.psn = shca_rcw_rq(i),
			.ackreq = true,
			.va = (uintptr_t)mem + SZ_4K,
			.rkey = w->dp.pd->unsafe_global_rkey,
			.dma_len = 32,
			.paylen = 32,
		};
		shca_rcw_build(test, w, &pkt, mem, &f[3 * i + 2]);
	}
}

/*
 * modify_qp to RESET (every other round through ERR) against a stream of
 * packets for the QP: READ responses to the READ it has in flight, SENDs
 * and WRITEs, injected on another thread.  The transport's resets run
 * under engine_lock while the receive path takes no packet for a QP in
 * RESET; on the debug kernel, KASAN or a list walk would report the
 * race.  Afterwards the QP, connected again, still works: a SEND
 * completes and is acknowledged with the first PSN and MSN 1.
 */
static void shca_rcw_reset_race(struct kunit *test)
{
	struct shca_rcw *w = shca_rcw_setup_rc(test, SHCA_RCW_SLOW);
	struct shca_frame *f = kunit_kcalloc(test, 3 * SHCA_RCW_RACE_PKTS,
					     sizeof(*f), GFP_KERNEL);
	u32 len = SHCA_RCW_RACE_PKTS * SHCA_RCW_MTU;
	u8 *mem = shca_rcw_buf(test, SZ_8K), *local = shca_rcw_buf(test, len);
	struct shca_rcw_storm *storm = kunit_kzalloc(test, sizeof(*storm),
						     GFP_KERNEL);
	struct task_struct *task;
	int i;

	KUNIT_ASSERT_NOT_NULL(test, f);
	KUNIT_ASSERT_NOT_NULL(test, storm);
	shca_rcw_storm_frames(test, w, mem, f);
	*storm = (struct shca_rcw_storm){
		.ndev = w->ndev,
		.f = f,
		.n = 3 * SHCA_RCW_RACE_PKTS,
	};
	shca_test_netdev_capture(w->ndev, false);
	/* Stopped by the exit, should an assertion end the test. */
	task = kthread_run(shca_rcw_storm_fn, storm, "shca_rcw_storm");
	KUNIT_ASSERT_FALSE(test, IS_ERR(task));
	w->storm = task;
	for (i = 0; i < SHCA_RCW_RACE_ROUNDS; i++) {
		shca_rcw_post_read(test, w, local, len, i);
		/* Let the storm meet the READ in flight. */
		usleep_range(100, 1000);
		if (i & 1)
			shca_rcw_to(test, w, IB_QPS_ERR);
		shca_rcw_to(test, w, IB_QPS_RESET);
		shca_rcw_connect(test, w, &shca_dp_rc);
	}
	w->storm = NULL;
	kthread_stop(task);
	kunit_info(test, "%d rounds against %d storms of %u packets\n", i,
		   atomic_read(&storm->rounds), storm->n);
	/* What the storm injected last has reached the QP. */
	msleep(100);

	shca_rcw_to(test, w, IB_QPS_RESET);
	shca_rcw_connect(test, w, &shca_dp_rc);
	shca_test_netdev_capture(w->ndev, true);
	KUNIT_ASSERT_EQ(test, shca_dp_post_recv(&w->dp, 0, 0x99, local, 32),
			0);
	shca_frame_inject(test, w->ndev, &f[1], 1);
	shca_rcw_expect_aeth(test, w, SHCA_RCW_ACK, shca_rcw_rq(0), 1);
	KUNIT_EXPECT_EQ(test, memcmp(local, mem, 32), 0);
}

/* --- Duplicate READs and long READs -------------------------------- */

/* A READ request for @len bytes at @va with @rkey, for PSN @psn. */
static void shca_rcw_read_key(struct kunit *test, struct shca_rcw *w,
			      u32 psn, u64 va, u32 len, u32 rkey,
			      struct shca_frame *f)
{
	struct shca_pkt pkt = {
		.opcode = SHCA_OPCODE(RC, RDMA_READ_REQUEST),
		.psn = psn,
		.va = va,
		.rkey = rkey,
		.dma_len = len,
	};

	shca_rcw_build(test, w, &pkt, NULL, f);
}

/*
 * Duplicate READs are answered only as the responder remembers them:
 * one restarting at the MIDDLE's PSN gets the MIDDLE and the LAST, with
 * the memory's bytes; one for the same PSN but other bytes (the whole
 * buffer, or past the READ's end), or for a PSN no READ had, or for a
 * READ more than max_dest_rd_atomic READs old, gets nothing, and each is
 * counted as rx_drop_dup_read.  The last of 16 newer READs is still
 * answered.
 */
static void shca_rcw_resp_read_dup(struct kunit *test)
{
	struct shca_rcw *w = shca_rcw_setup_rc(test, SHCA_RCW_SLOW);
	u8 *mem = shca_rcw_buf(test, 704);
	u32 rkey = w->dp.pd->unsafe_global_rkey;
	u64 va = (uintptr_t)mem + 3, mid = va + SHCA_RCW_MTU;
	struct shca_rcw_msg m = shca_rcw_read_resps(shca_rcw_rq(0), mem + 3,
						    700);
	struct shca_frame f[SHCA_RCW_ATOMIC_RES + 1];
	s64 dups;
	u32 i;

	shca_dp_fill(mem, 704, 13);
	dups = shca_frame_drops(test, w->dp.fx->ibdev, SHCA_DROP_DUP_READ);
	shca_rcw_read_req(test, w, shca_rcw_rq(0), mem + 3, 700);
	shca_rcw_expect_msg(test, w, &m, 0);

	/* Forgotten or other bytes: nothing, then the ping's ACK. */
	shca_rcw_read_key(test, w, shca_rcw_rq(1), va, 700, rkey, &f[0]);
	shca_rcw_read_key(test, w, shca_rcw_rq(1), mid, 700 - SHCA_RCW_MTU + 4,
			  rkey, &f[1]);
	shca_rcw_read_key(test, w, shca_rcw_rq(-3), va, 8, rkey, &f[2]);
	shca_rcw_read_key(test, w, shca_rcw_rq(1), mid, 700 - SHCA_RCW_MTU,
			  rkey, &f[3]);
	shca_frame_inject(test, w->ndev, f, 3);
	shca_rcw_sync(test, w, shca_rcw_rq(3), 1);
	KUNIT_EXPECT_EQ(test, shca_frame_drops(test, w->dp.fx->ibdev,
					       SHCA_DROP_DUP_READ), dups + 3);

	/* The rest of it, from the MIDDLE: FIRST and LAST of 444 bytes. */
	shca_frame_inject(test, w->ndev, &f[3], 1);
	m.psn = shca_rcw_rq(1);
	m.data = mem + 3 + SHCA_RCW_MTU;
	m.len = 700 - SHCA_RCW_MTU;
	shca_rcw_expect_msg(test, w, &m, 0);

	/* 16 READs of 8 bytes: the first READ is forgotten, not the last. */
	for (i = 0; i < SHCA_RCW_ATOMIC_RES; i++)
		shca_rcw_read_key(test, w, shca_rcw_rq(3 + i), va + i, 8, rkey,
				  &f[i]);
	shca_frame_inject(test, w->ndev, f, SHCA_RCW_ATOMIC_RES);
	m = (struct shca_rcw_msg){
		.transport = SHCA_TRANSPORT_RC,
		.ops = shca_rcw_read_resp_ops,
		.len = 8,
	};
	for (i = 0; i < SHCA_RCW_ATOMIC_RES; i++) {
		m.psn = shca_rcw_rq(3 + i);
		m.data = mem + 3 + i;
		m.msn = 2 + i;
		shca_rcw_expect_msg(test, w, &m, 0);
	}
	shca_rcw_read_key(test, w, shca_rcw_rq(1), mid, 700 - SHCA_RCW_MTU,
			  rkey, &f[0]);
	shca_rcw_read_key(test, w, shca_rcw_rq(2 + SHCA_RCW_ATOMIC_RES),
			  va + SHCA_RCW_ATOMIC_RES - 1, 8, rkey, &f[1]);
	shca_frame_inject(test, w->ndev, f, 2);
	shca_rcw_expect_msg(test, w, &m, 0);
	shca_rcw_sync(test, w, shca_rcw_rq(3 + SHCA_RCW_ATOMIC_RES),
		      1 + SHCA_RCW_ATOMIC_RES);
	KUNIT_EXPECT_EQ(test, shca_frame_drops(test, w->dp.fx->ibdev,
					       SHCA_DROP_DUP_READ), dups + 4);
}

/* The big READs' chunk: 2 MiB, mapped again and again by one MR. */
#define SHCA_RCW_CHUNK SZ_2M

/*
 * An MR of @n * 2 MiB for remote READs, every 2 MiB of it the same
 * chunk of memory: a READ of up to 1 GiB with 2 MiB of RAM.
 */
static struct ib_mr *shca_rcw_big_mr(struct kunit *test, struct shca_rcw *w,
				     u8 *chunk, u32 n)
{
	struct scatterlist *sg = kunit_kcalloc(test, n, sizeof(*sg),
					       GFP_KERNEL);
	struct ib_device *ibdev = w->dp.fx->ibdev;
	struct ib_reg_wr wr = {
		.wr = {
			.wr_id = 0xb16,
			.opcode = IB_WR_REG_MR,
			.send_flags = IB_SEND_SIGNALED,
		},
		.access = IB_ACCESS_REMOTE_READ | IB_ACCESS_LOCAL_WRITE,
	};
	struct ib_mr *mr;
	struct ib_wc wc;
	u32 i;

	KUNIT_ASSERT_NOT_NULL(test, sg);
	KUNIT_ASSERT_TRUE(test, IS_ALIGNED((uintptr_t)chunk, SHCA_RCW_CHUNK));
	sg_init_table(sg, n);
	for (i = 0; i < n; i++)
		sg_set_buf(&sg[i], chunk, SHCA_RCW_CHUNK);
	mr = ib_alloc_mr(w->dp.pd, IB_MR_TYPE_MEM_REG, n);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, mr);
	w->mr = mr;
	KUNIT_ASSERT_EQ(test, ib_dma_map_sg(ibdev, sg, n, DMA_TO_DEVICE), n);
	KUNIT_ASSERT_EQ(test, ib_map_mr_sg(mr, sg, n, NULL, SHCA_RCW_CHUNK),
			n);
	KUNIT_ASSERT_EQ(test, mr->length, (u64)n * SHCA_RCW_CHUNK);
	wr.mr = mr;
	wr.key = mr->rkey;
	KUNIT_ASSERT_EQ(test, shca_dp_post_send(&w->dp, 0, &wr.wr), 0);
	KUNIT_ASSERT_TRUE(test, shca_dp_poll(&w->dp, 0, &wc));
	KUNIT_ASSERT_EQ(test, wc.status, IB_WC_SUCCESS);
	return mr;
}

/* A 2 MiB chunk of the page allocator's, naturally aligned. */
static u8 *shca_rcw_chunk(struct kunit *test)
{
	u8 *chunk = kunit_kmalloc(test, SHCA_RCW_CHUNK, GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, chunk);
	shca_dp_fill(chunk, SHCA_RCW_CHUNK, 14);
	return chunk;
}

/* The READ responses the device sent since @tx0, once @n of them were. */
static s64 shca_rcw_wait_tx(struct kunit *test, struct shca_rcw *w, s64 tx0,
			    s64 n)
{
	unsigned long end = jiffies + 10 * HZ;
	s64 tx;

	for (;;) {
		tx = shca_rcw_counter(test, w, SHCA_CNT_TX_PACKETS) - tx0;
		if (tx >= n || !time_before(jiffies, end))
			return tx;
		usleep_range(100, 1000);
	}
}

/*
 * A READ of 3 MiB, answered over several runs of the engine, and a SEND
 * after it, injected together: the SEND waits while the netdev holds the
 * READ's first 64 responses, the FIRST carrying the memory, and completes
 * once every response has left, the netdev then sending them as they
 * come.
 */
static void shca_rcw_resp_read_order(struct kunit *test)
{
	struct shca_dp_opts o = shca_dp_rc;
	u32 len = 3 * SZ_1M, n = len / SHCA_RCW_ZC_MTU;
	u8 *chunk = shca_rcw_chunk(test), *dst;
	struct shca_pkt send = {
		.opcode = SHCA_OPCODE(RC, SEND_ONLY),
		.psn = shca_rcw_rq(n),
		.paylen = 16,
	};
	struct shca_rcw_msg m = shca_rcw_read_resps(shca_rcw_rq(0), chunk,
						    len);
	struct shca_frame f[2], resp;
	struct shca_rcw *w;
	struct ib_mr *mr;
	struct ib_wc wc;
	s64 tx0;

	o.timeout = SHCA_RCW_SLOW;
	w = shca_rcw_setup_mtu(test, &o, SHCA_RCW_ZC_MTU);
	mr = shca_rcw_big_mr(test, w, chunk, 2);
	dst = shca_rcw_buf(test, 16);
	KUNIT_ASSERT_EQ(test, shca_dp_post_recv(&w->dp, 0, 5, dst, 16), 0);
	shca_rcw_read_key(test, w, shca_rcw_rq(0), mr->iova, len, mr->rkey,
			  &f[0]);
	shca_rcw_build(test, w, &send, chunk, &f[1]);
	tx0 = shca_rcw_counter(test, w, SHCA_CNT_TX_PACKETS);
	shca_frame_inject(test, w->ndev, f, 2);
	KUNIT_EXPECT_EQ(test, shca_rcw_tx_queued(w, SHCA_WIRE_TX_QUEUED, 100),
			SHCA_WIRE_TX_QUEUED);
	KUNIT_EXPECT_TRUE(test, shca_dp_cq_empty(&w->dp, 0));
	shca_rcw_expect_pkt(test, w, &m, 0, &resp);
	shca_test_netdev_capture(w->ndev, false);
	KUNIT_ASSERT_EQ(test, shca_rcw_wc(test, w, 5, &wc), IB_WC_SUCCESS);
	KUNIT_EXPECT_GE(test, shca_rcw_counter(test, w, SHCA_CNT_TX_PACKETS) -
			tx0, n);
	KUNIT_EXPECT_EQ(test, memcmp(dst, chunk, 16), 0);
}

/*
 * A READ of 64 MiB, 65536 responses at a 1 KiB path MTU, that the
 * netdev sends as they come (no capture, so no pace holds them):
 * modify_qp to ERR while it is being answered returns after a run of the
 * engine, not after the whole READ (measured in responses sent, and in
 * time, well within the command queue's timeout); no response leaves
 * after it, and the command queue takes the next verbs (another QP,
 * created and modified).
 */
static void shca_rcw_resp_read_err(struct kunit *test)
{
	struct shca_dp_opts o = shca_dp_rc;
	u32 chunks = 32, n = chunks * (SHCA_RCW_CHUNK / SHCA_RCW_ZC_MTU);
	struct ib_qp_attr attr = { .qp_state = IB_QPS_ERR };
	struct ib_qp_attr init = {
		.qp_state = IB_QPS_INIT,
		.port_num = SHCA_PORT,
		.qp_access_flags = shca_dp_rc.access,
	};
	u8 *chunk = shca_rcw_chunk(test);
	struct shca_rcw *w;
	struct shca_frame f;
	s64 tx0, tx, later;
	struct ib_mr *mr;
	ktime_t t;

	o.timeout = SHCA_RCW_SLOW;
	w = shca_rcw_setup_mtu(test, &o, SHCA_RCW_ZC_MTU);
	mr = shca_rcw_big_mr(test, w, chunk, chunks);
	shca_rcw_read_key(test, w, shca_rcw_rq(0), mr->iova, mr->length,
			  mr->rkey, &f);
	shca_test_netdev_capture(w->ndev, false);
	tx0 = shca_rcw_counter(test, w, SHCA_CNT_TX_PACKETS);
	shca_frame_inject(test, w->ndev, &f, 1);
	KUNIT_ASSERT_GT(test, shca_rcw_wait_tx(test, w, tx0, 1), 0);

	t = ktime_get();
	KUNIT_EXPECT_EQ(test, ib_modify_qp(w->dp.qp[0], &attr, IB_QP_STATE),
			0);
	t = ktime_sub(ktime_get(), t);
	tx = shca_rcw_counter(test, w, SHCA_CNT_TX_PACKETS) - tx0;
	kunit_info(test, "modify_qp to ERR took %lld ms, %lld of %u sent\n",
		   ktime_to_ms(t), tx, n);
	KUNIT_EXPECT_LT(test, tx, (s64)n / 4);
	KUNIT_EXPECT_LT(test, ktime_to_ms(t), 10 * MSEC_PER_SEC);

	msleep(200);
	later = shca_rcw_counter(test, w, SHCA_CNT_TX_PACKETS) - tx0;
	KUNIT_EXPECT_LE(test, later, tx + (s64)(SZ_1M / SHCA_RCW_ZC_MTU));
	msleep(200);
	KUNIT_EXPECT_EQ(test, shca_rcw_counter(test, w, SHCA_CNT_TX_PACKETS) -
			tx0, later);
	KUNIT_EXPECT_EQ(test, shca_rcw_state(w->dp.qp[0]), IB_QPS_ERR);

	shca_rcw_create(test, w, 1, IB_QPT_RC);
	KUNIT_EXPECT_EQ(test, ib_modify_qp(w->dp.qp[1], &init,
					   IB_QP_STATE | IB_QP_PKEY_INDEX |
					   IB_QP_PORT | IB_QP_ACCESS_FLAGS), 0);
	KUNIT_EXPECT_EQ(test, shca_rcw_state(w->dp.qp[1]), IB_QPS_INIT);
}

static struct kunit_case shca_rcw_cases[] = {
	KUNIT_CASE_PARAM(shca_rcw_resp_msg, shca_rcw_msg_gen_params),
	KUNIT_CASE(shca_rcw_resp_gap),
	KUNIT_CASE(shca_rcw_resp_dup_send),
	KUNIT_CASE(shca_rcw_resp_read),
	KUNIT_CASE(shca_rcw_resp_read_zcopy),
	KUNIT_CASE(shca_rcw_resp_atomic),
	KUNIT_CASE(shca_rcw_resp_atomic_write),
	KUNIT_CASE(shca_rcw_resp_coalesce),
	KUNIT_CASE(shca_rcw_resp_rnr),
	KUNIT_CASE(shca_rcw_resp_rnr_write_imm),
	KUNIT_CASE_PARAM(shca_rcw_resp_refused, shca_rcw_refused_gen_params),
	KUNIT_CASE(shca_rcw_uc_gap),
	KUNIT_CASE_PARAM(shca_rcw_req_send, shca_rcw_req_gen_params),
	KUNIT_CASE_PARAM(shca_rcw_req_zcopy, shca_rcw_zc_gen_params),
	KUNIT_CASE(shca_rcw_req_no_sg),
	KUNIT_CASE_PARAM(shca_rcw_req_timeout, shca_rcw_retry_gen_params),
	KUNIT_CASE(shca_rcw_adaptive_timeout),
	KUNIT_CASE(shca_rcw_adaptive_retry_exc),
	KUNIT_CASE(shca_rcw_req_seq_nak),
	KUNIT_CASE_PARAM(shca_rcw_req_rnr, shca_rcw_rnr_gen_params),
	KUNIT_CASE(shca_rcw_req_rnr_late_seq_nak),
	KUNIT_CASE(shca_rcw_req_rnr_resets_retry),
	KUNIT_CASE_PARAM(shca_rcw_req_nak, shca_rcw_nak_gen_params),
	KUNIT_CASE(shca_rcw_req_read),
	KUNIT_CASE(shca_rcw_req_read_gap),
	KUNIT_CASE_PARAM(shca_rcw_req_atomic, shca_rcw_atomic_gen_params),
	KUNIT_CASE(shca_rcw_req_atomic_write),
	KUNIT_CASE(shca_rcw_resp_flush),
	KUNIT_CASE(shca_rcw_req_hostile),
	KUNIT_CASE(shca_rcw_req_idle),
	KUNIT_CASE(shca_rcw_win_stream),
	KUNIT_CASE(shca_rcw_win_full),
	KUNIT_CASE_PARAM(shca_rcw_win_loss, shca_rcw_win_loss_gen_params),
	KUNIT_CASE(shca_rcw_win_timeout),
	KUNIT_CASE(shca_rcw_win_rd_atomic),
	KUNIT_CASE(shca_rcw_win_fence),
	KUNIT_CASE(shca_rcw_win_local),
	KUNIT_CASE(shca_rcw_win_implied),
	KUNIT_CASE(shca_rcw_win_read_lost),
	KUNIT_CASE(shca_rcw_win_pace),
	KUNIT_CASE(shca_rcw_win_pace_forged),
	KUNIT_CASE(shca_rcw_win_tx_queued),
	KUNIT_CASE(shca_rcw_resp_read_tx_queued),
	KUNIT_CASE(shca_rcw_win_one_cpu),
	KUNIT_CASE(shca_rcw_uc_tx_queued),
	KUNIT_CASE(shca_rcw_uc_paused_err),
	KUNIT_CASE(shca_rcw_uc_one_cpu),
	KUNIT_CASE_PARAM(shca_rcw_answer_order, shca_rcw_order_gen_params),
	KUNIT_CASE_PARAM(shca_rcw_rx_here, shca_rcw_here_gen_params),
	KUNIT_CASE(shca_rcw_win_halve),
	KUNIT_CASE(shca_rcw_win_slow_start),
	KUNIT_CASE(shca_rcw_win_read_parts),
	KUNIT_CASE_PARAM(shca_rcw_req_ring_rewrite, shca_rcw_ring_gen_params),
	KUNIT_CASE(shca_rcw_reset_drops),
	KUNIT_CASE(shca_rcw_reset_race),
	KUNIT_CASE(shca_rcw_resp_read_dup),
	KUNIT_CASE(shca_rcw_resp_read_order),
	KUNIT_CASE(shca_rcw_resp_read_err),
	{}
};

static struct kunit_suite shca_rcw_suite = {
	.name = "softhca_rc_wire",
	.suite_init = shca_rcw_fx_suite_init,
	.suite_exit = shca_rcw_fx_suite_exit,
	.init = shca_rcw_fx_init,
	.exit = shca_rcw_exit,
	.test_cases = shca_rcw_cases,
};

kunit_test_suite(shca_rcw_suite);
