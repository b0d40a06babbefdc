// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * softhca_fuzz_wire: a campaign of hostile RoCEv2 frames (issue 17), in
 * softhca_fuzz.ko, apart from the other suites: its length is a module
 * parameter.
 *
 * The test plays frame.h's peer.  QPs of every type the wire speaks (RC,
 * UC, UD) wait in every state a QP can be in (RESET, INIT, RTR, RTS, SQD,
 * SQE but on RC, ERR), some of them mid-message: a SEND half received, a
 * request of their own in flight; each of them twice, its path and its
 * frames IPv6 (the link-local GID) or IPv4 (a v4-mapped GID, the netdev
 * given an address for it).  Each batch takes one QP and one opcode
 * of IBA table 38 of the QP's transport, builds valid frames of it, and
 * mutates them: PSNs near the expected one and far from it, payload and
 * DMA lengths, remote keys and addresses, AETH syndromes and MSNs,
 * opcodes (the headers rebuilt for the new one, or only the opcode byte
 * changed, so that the header lengths disagree), pad counts, TVer,
 * flags, keys, destination QPs (ib_mad's GSI QP 1 among them, with its
 * Q_Key), the IP and UDP lengths, truncation and random bytes.  Half
 * of the SEND_WITH_INVALIDATE frames name, by its exact key, a
 * fast-registration MR of the QPs' PD, so that remote invalidation runs
 * too.  The ICRC is then computed again, so that the mutations reach
 * past its check (a few frames keep a stale one).
 *
 * The frames enter where the network delivers them, the netdev's receive
 * path, so the campaign does not depend on how the transport is built.
 * Every frame is accounted for: it reached the device (rx_packets) or the
 * IP or UDP layer dropped it (their MIB counters); of those that
 * reached the device, the header checks dropped some, by reason, and the
 * others reached their QP.  For every opcode and every state, some
 * mutated frame must have reached its QP: a campaign whose frames all die
 * at the ICRC tests nothing.  A QP the frames moved out of its state is
 * put back (through RESET) before its next batch.  At the end of a round
 * every QP, reset and connected again, must take a message from the peer
 * with its data intact.
 *
 * The campaign runs in rounds of at most SHCA_FZ_ROUND_S seconds (a
 * KUnit case has 300 s), each seeded with seed + round.  It prints its
 * seed, each round's plan, and on a failure the last batches it sent
 * (QP, state, opcode, mutations of each frame): with the seed, that
 * replays the part of the campaign that does not depend on timing.
 */

#include <linux/bitfield.h>
#include <linux/delay.h>
#include <linux/moduleparam.h>
#include <linux/prandom.h>
#include <net/ip.h>
#include <net/ipv6.h>
#include <net/udp.h>
#include <rdma/ib_mad.h>
#include <asm/unaligned.h>

#include "dev.h"
#include "dp.h"
#include "fixture.h"
#include "frame.h"
#include "mr.h"
#include "net.h"
#include "wire.h"

static ulong seed;
module_param(seed, ulong, 0444);
MODULE_PARM_DESC(seed, "the campaign's PRNG seed (0: a random one)");

static ulong frames = 20000;
module_param(frames, ulong, 0444);
MODULE_PARM_DESC(frames, "frames to send (0: until seconds runs out)");

static uint seconds;
module_param(seconds, uint, 0444);
MODULE_PARM_DESC(seconds, "stop after this long (0: when frames are sent)");

static bool verbose;
module_param(verbose, bool, 0444);
MODULE_PARM_DESC(verbose, "log every batch");

SHCA_SUITE_FIXTURE(shca_fz_fx, "softhca_ktfuzz");

/* The peer's QP facing the test's QP i is SHCA_FZ_PEER_QPN + i. */
#define SHCA_FZ_PEER_QPN 0x4300
#define SHCA_FZ_MTU 256
/* First PSNs just short of the 24-bit wrap, so that messages cross it. */
#define SHCA_FZ_RQ_PSN 0xfffff0
#define SHCA_FZ_SQ_PSN 0xfffff8
#define SHCA_FZ_QKEY 0x1234
#define SHCA_FZ_BATCH 16
/* The longest payload a mutation asks for, and a frame's buffer. */
#define SHCA_FZ_MAX_PAY 1024
#define SHCA_FZ_FRAME 1536
/* The peer's target: remote writes, reads and atomics land here. */
#define SHCA_FZ_MR_LEN 4096
#define SHCA_FZ_RECVS 16
#define SHCA_FZ_RBUF 4096
#define SHCA_FZ_REQ_LEN 600
/* Batches kept to print when the campaign fails. */
#define SHCA_FZ_LOG 32
/* A round's fuzzing time, short of KUnit's 300 s per case. */
#define SHCA_FZ_ROUND_S 200
#define SHCA_FZ_MAX_ROUNDS 1024
/* How long the frames of a batch may take to be counted. */
#define SHCA_FZ_SETTLE (5 * HZ)
#define SHCA_FZ_POLL (20 * HZ)

/* wr_ids: what a completion was for. */
enum {
	SHCA_FZ_WR_RECV = 1,
	SHCA_FZ_WR_SEND,
	SHCA_FZ_WR_BAD,
};

/* Where a QP is in a message when its batches start. */
enum shca_fz_mid {
	SHCA_FZ_IDLE,
	SHCA_FZ_MID_SEND,	/* the first two packets of a SEND received */
	SHCA_FZ_MID_REQ,	/* a request of its own waits for its answer */
};

struct shca_fz_plan {
	enum ib_qp_type type;
	enum ib_qp_state state;
	enum shca_fz_mid mid;
};

/* A QP for each; SQE only for UC and UD (an RC send error goes to ERR). */
static const struct shca_fz_plan shca_fz_plans[] = {
	{ IB_QPT_RC, IB_QPS_RESET }, { IB_QPT_RC, IB_QPS_INIT },
	{ IB_QPT_RC, IB_QPS_RTR }, { IB_QPT_RC, IB_QPS_RTS },
	{ IB_QPT_RC, IB_QPS_SQD }, { IB_QPT_RC, IB_QPS_ERR },
	{ IB_QPT_RC, IB_QPS_RTS, SHCA_FZ_MID_SEND },
	{ IB_QPT_RC, IB_QPS_RTS, SHCA_FZ_MID_REQ },
	{ IB_QPT_UC, IB_QPS_RESET }, { IB_QPT_UC, IB_QPS_INIT },
	{ IB_QPT_UC, IB_QPS_RTR }, { IB_QPT_UC, IB_QPS_RTS },
	{ IB_QPT_UC, IB_QPS_SQD }, { IB_QPT_UC, IB_QPS_SQE },
	{ IB_QPT_UC, IB_QPS_ERR },
	{ IB_QPT_UC, IB_QPS_RTS, SHCA_FZ_MID_SEND },
	{ IB_QPT_UD, IB_QPS_RESET }, { IB_QPT_UD, IB_QPS_INIT },
	{ IB_QPT_UD, IB_QPS_RTR }, { IB_QPT_UD, IB_QPS_RTS },
	{ IB_QPT_UD, IB_QPS_SQD }, { IB_QPT_UD, IB_QPS_SQE },
	{ IB_QPT_UD, IB_QPS_ERR },
};

#define SHCA_FZ_NPLAN ARRAY_SIZE(shca_fz_plans)
/* Each plan twice: QP i is IPv4 from SHCA_FZ_NPLAN on. */
#define SHCA_FZ_NQP (2 * SHCA_FZ_NPLAN)

/* Each type's QP ready for traffic, for the checks after the campaign. */
static const struct shca_fz_plan shca_fz_idle[] = {
	{ IB_QPT_RC, IB_QPS_RTS }, { IB_QPT_UC, IB_QPS_RTS },
	{ IB_QPT_UD, IB_QPS_RTS },
};

static const char *shca_fz_type(enum ib_qp_type type)
{
	return type == IB_QPT_RC ? "RC" : type == IB_QPT_UC ? "UC" : "UD";
}

static const char *const shca_fz_states[] = {
	[IB_QPS_RESET] = "RESET", [IB_QPS_INIT] = "INIT",
	[IB_QPS_RTR] = "RTR", [IB_QPS_RTS] = "RTS", [IB_QPS_SQD] = "SQD",
	[IB_QPS_SQE] = "SQE", [IB_QPS_ERR] = "ERR",
};

/* The mutations, in the order they apply; a frame gets none to three. */
enum shca_fz_mut {
	SHCA_FZ_M_PSN_NEAR,
	SHCA_FZ_M_PSN_FAR,
	SHCA_FZ_M_PAYLEN,
	SHCA_FZ_M_DMA_LEN,
	SHCA_FZ_M_RKEY,
	SHCA_FZ_M_VA,
	SHCA_FZ_M_AETH,
	SHCA_FZ_M_OPCODE,
	SHCA_FZ_M_KEYS,
	SHCA_FZ_M_FLAGS,
	SHCA_FZ_M_DQPN,
	/* On the frame built, from here on. */
	SHCA_FZ_M_OPCODE_RAW,
	SHCA_FZ_M_PAD,
	SHCA_FZ_M_TVER,
	SHCA_FZ_M_BYTES,
	SHCA_FZ_M_CUT,
	SHCA_FZ_M_IP_LEN,
	SHCA_FZ_M_UDP_LEN,
	SHCA_FZ_M_ICRC,		/* the ICRC left as it was */
	SHCA_FZ_M_MAX,
};

static const char *const shca_fz_mut_names[SHCA_FZ_M_MAX] = {
	"psn-near", "psn-far", "paylen", "dma_len", "rkey", "va", "aeth",
	"opcode", "keys", "flags", "dqpn", "opcode-raw", "pad", "tver",
	"bytes", "cut", "ip-len", "udp-len", "icrc",
};

/* The QP of a plan, and what the test knows of it. */
struct shca_fz_qp {
	const struct shca_fz_plan *plan;
	bool v4;			/* its path and frames are IPv4 */
	struct ib_cq *cq;
	struct ib_qp *qp;
	u32 peer_qpn;
	u32 epsn;		/* its responder's next PSN, as its ACKs say */
	u32 sq_psn;		/* its last request's PSN */
	unsigned int recvs;	/* receive WQEs posted and not completed */
	unsigned int sends;	/* requests posted and not completed */
	unsigned int rebuilds;
	bool flushed;		/* in ERR: no more receives until rebuilt */
	u8 *rbuf;		/* receives land here, READ responses after */
};

/* A batch, as the log keeps it. */
struct shca_fz_rec {
	u64 batch;
	u8 qp;
	u8 state;
	u8 opcode;
	u8 n;
	u32 muts[SHCA_FZ_BATCH];
};

struct shca_fz {
	struct kunit *test;
	struct shca_fixture *fx;
	struct shca_dev *dev;
	struct rnd_state rnd;
	u64 seed;
	struct ib_pd *pd;
	struct ib_ah *ah;		/* UD: to the peer */
	struct ib_mr *mr;
	struct ib_mr *inv_mr;		/* what SEND_WITH_INV frames may name */
	u8 *mem;			/* the MRs' memory */
	u8 *payload;
	union ib_gid gid;		/* GID 0, IPv6 link-local */
	union ib_gid gid4;		/* the netdev's IPv4 address */
	u8 sgid4;			/* its index */
	struct shca_fz_qp qp[SHCA_FZ_NQP];
	struct shca_frame f[SHCA_FZ_BATCH];
	u64 sent;
	u64 batches;
	u64 accepted;
	u64 sent4, accepted4;		/* of them, IPv4 frames */
	u64 cnt0[SHCA_CNT_MAX];		/* the counters when the round began */
	u64 net0;
	u64 muts[SHCA_FZ_M_MAX];
	bool covered[2][256][IB_QPS_ERR + 1];	/* IPv6, IPv4 */
	struct shca_fz_rec log[SHCA_FZ_LOG];
};

/* The campaign across rounds. */
static struct {
	u64 seed;
	u64 sent;
	unsigned long start;
	bool failed;
} shca_fz_campaign;

static u32 shca_fz_rand(struct shca_fz *fz, u32 n)
{
	return n ? prandom_u32_state(&fz->rnd) % n : 0;
}

static u64 shca_fz_cnt(struct shca_fz *fz, unsigned int i)
{
	return atomic64_read(&fz->dev->counters[i]);
}

static u64 shca_fz_drop(struct shca_fz *fz, enum shca_drop why)
{
	return shca_fz_cnt(fz, SHCA_CNT_DROP + why - 1) -
	       fz->cnt0[SHCA_CNT_DROP + why - 1];
}

/* Frames the checks on receipt dropped, before any QP saw them. */
static u64 shca_fz_hdr_drops(struct shca_fz *fz)
{
	enum shca_drop why;
	u64 n = 0;

	for (why = SHCA_DROP_NONE + 1; why < SHCA_DROP_REFUSED; why++)
		n += shca_fz_drop(fz, why);
	return n;
}

/* What IPv4 or IPv6 counts of frames it dropped: bad lengths, headers. */
static u64 shca_fz_ip_drops(struct ipstats_mib __percpu *mib)
{
	return snmp_fold_field64(mib, IPSTATS_MIB_INTRUNCATEDPKTS,
				 offsetof(struct ipstats_mib, syncp)) +
	       snmp_fold_field64(mib, IPSTATS_MIB_INHDRERRORS,
				 offsetof(struct ipstats_mib, syncp)) +
	       snmp_fold_field64(mib, IPSTATS_MIB_INDISCARDS,
				 offsetof(struct ipstats_mib, syncp));
}

/*
 * Frames IP and UDP dropped (lengths and headers they refused) before
 * the device saw them; nothing else is received in the guest meanwhile.
 */
static u64 shca_fz_net_drops(struct shca_fz *fz)
{
	struct net *net = dev_net(fz->fx->ndev);

	return shca_fz_ip_drops(net->mib.ipv6_statistics) +
	       shca_fz_ip_drops(net->mib.ip_statistics) +
	       snmp_fold_field(net->mib.udp_stats_in6, UDP_MIB_INERRORS) +
	       snmp_fold_field(net->mib.udp_statistics, UDP_MIB_INERRORS) -
	       fz->net0;
}

/* The GID @t's frames go to, of its family. */
static const union ib_gid *shca_fz_gid(struct shca_fz *fz,
				       const struct shca_fz_qp *t)
{
	return t->v4 ? &fz->gid4 : &fz->gid;
}

static u64 shca_fz_rx(struct shca_fz *fz)
{
	return shca_fz_cnt(fz, SHCA_CNT_RX_PACKETS) -
	       fz->cnt0[SHCA_CNT_RX_PACKETS];
}

static void shca_fz_dump(struct shca_fz *fz)
{
	const struct shca_fz_rec *r;
	unsigned int i, j;

	for (i = 0; i < SHCA_FZ_LOG; i++) {
		r = &fz->log[(fz->batches + i) % SHCA_FZ_LOG];
		if (!r->n)
			continue;
		kunit_info(fz->test, "batch %llu: QP %u %s opcode %#04x, %u frames, mutations:\n",
			   r->batch, r->qp, shca_fz_states[r->state],
			   r->opcode, r->n);
		for (j = 0; j < r->n; j += 8)
			kunit_info(fz->test, "  %05x %05x %05x %05x %05x %05x %05x %05x\n",
				   r->muts[j], r->muts[j + 1], r->muts[j + 2],
				   r->muts[j + 3], r->muts[j + 4],
				   r->muts[j + 5], r->muts[j + 6],
				   r->muts[j + 7]);
	}
}

/*
 * The frames reached the netdev's receive path: wait until each was
 * counted, by the device or by IP and UDP.
 */
static void shca_fz_inject(struct shca_fz *fz, unsigned int n, u64 *passed)
{
	u64 want = fz->sent + n, rx0 = shca_fz_rx(fz);
	u64 hdr0 = shca_fz_hdr_drops(fz);
	unsigned long end = jiffies + SHCA_FZ_SETTLE;
	u64 seen;

	shca_frame_inject(fz->test, fz->fx->ndev, fz->f, n);
	fz->sent = want;
	for (;;) {
		seen = shca_fz_rx(fz) + shca_fz_net_drops(fz);
		if (seen >= want || !time_before(jiffies, end))
			break;
		usleep_range(50, 500);
	}
	if (seen != want) {
		shca_fz_dump(fz);
		KUNIT_ASSERT_FAILURE(fz->test,
				     "%llu frames sent, %llu counted (%llu by the device)",
				     want, seen, shca_fz_rx(fz));
	}
	if (passed)
		*passed = shca_fz_rx(fz) - rx0 - (shca_fz_hdr_drops(fz) - hdr0);
}

static int shca_fz_modify(struct shca_fz_qp *t, struct ib_qp_attr *attr,
			  int mask)
{
	return ib_modify_qp(t->qp, attr, mask);
}

static void shca_fz_init(struct shca_fz *fz, struct shca_fz_qp *t)
{
	struct ib_qp_attr attr = {
		.qp_state = IB_QPS_INIT,
		.port_num = SHCA_PORT,
		.qkey = SHCA_FZ_QKEY,
		.qp_access_flags = IB_ACCESS_LOCAL_WRITE |
				   IB_ACCESS_REMOTE_WRITE,
	};
	int mask = IB_QP_STATE | IB_QP_PKEY_INDEX | IB_QP_PORT;

	if (t->plan->type == IB_QPT_UD)
		mask |= IB_QP_QKEY;
	else
		mask |= IB_QP_ACCESS_FLAGS;
	if (t->plan->type == IB_QPT_RC)
		attr.qp_access_flags = shca_dp_rc.access;
	KUNIT_ASSERT_EQ(fz->test, shca_fz_modify(t, &attr, mask), 0);
}

static void shca_fz_rtr(struct shca_fz *fz, struct shca_fz_qp *t)
{
	struct ib_qp_attr attr = {
		.qp_state = IB_QPS_RTR,
		.path_mtu = ib_mtu_int_to_enum(SHCA_FZ_MTU),
		.dest_qp_num = t->peer_qpn,
		.rq_psn = SHCA_FZ_RQ_PSN,
		.max_dest_rd_atomic = 16,
		.min_rnr_timer = 1,
	};
	int mask = IB_QP_STATE;

	if (t->plan->type != IB_QPT_UD) {
		if (t->v4)
			shca_frame_peer_av4(&attr.ah_attr, fz->sgid4);
		else
			shca_frame_peer_av(&attr.ah_attr);
		mask |= IB_QP_AV | IB_QP_PATH_MTU | IB_QP_DEST_QPN |
			IB_QP_RQ_PSN;
	}
	if (t->plan->type == IB_QPT_RC)
		mask |= IB_QP_MAX_DEST_RD_ATOMIC | IB_QP_MIN_RNR_TIMER;
	KUNIT_ASSERT_EQ(fz->test, shca_fz_modify(t, &attr, mask), 0);
}

static void shca_fz_rts(struct shca_fz *fz, struct shca_fz_qp *t)
{
	struct ib_qp_attr attr = {
		.qp_state = IB_QPS_RTS,
		.sq_psn = SHCA_FZ_SQ_PSN,
		.timeout = 14,		/* 67 ms */
		.retry_cnt = 7,
		.rnr_retry = 3,
		.max_rd_atomic = 16,
	};
	int mask = IB_QP_STATE | IB_QP_SQ_PSN;

	if (t->plan->type == IB_QPT_RC)
		mask |= IB_QP_TIMEOUT | IB_QP_RETRY_CNT | IB_QP_RNR_RETRY |
			IB_QP_MAX_QP_RD_ATOMIC;
	KUNIT_ASSERT_EQ(fz->test, shca_fz_modify(t, &attr, mask), 0);
}

/* Takes a QP's completions: its receive WQEs and requests that ended. */
static unsigned int shca_fz_drain(struct shca_fz_qp *t)
{
	struct ib_wc wc[8];
	unsigned int n = 0;
	int i, got;

	while ((got = ib_poll_cq(t->cq, ARRAY_SIZE(wc), wc)) > 0) {
		for (i = 0; i < got; i++) {
			if (wc[i].status == IB_WC_WR_FLUSH_ERR)
				t->flushed = true;
			if (wc[i].wr_id == SHCA_FZ_WR_RECV && t->recvs)
				t->recvs--;
			else if (wc[i].wr_id == SHCA_FZ_WR_SEND && t->sends)
				t->sends--;
		}
		n += got;
	}
	return n;
}

static bool shca_fz_can_recv(enum ib_qp_state state)
{
	return state >= IB_QPS_INIT && state <= IB_QPS_SQE;
}

static void shca_fz_post_recvs(struct shca_fz *fz, struct shca_fz_qp *t)
{
	struct ib_sge sge = {
		.addr = (uintptr_t)t->rbuf,
		.length = 40 + SHCA_FZ_MAX_PAY,
		.lkey = fz->pd->local_dma_lkey,
	};
	struct ib_recv_wr wr = {
		.wr_id = SHCA_FZ_WR_RECV, .sg_list = &sge, .num_sge = 1,
	};

	if (!shca_fz_can_recv(t->plan->state) || t->flushed)
		return;
	while (t->recvs < SHCA_FZ_RECVS && !ib_post_recv(t->qp, &wr, NULL))
		t->recvs++;
}

/*
 * A request of the QP's own to the peer, which will answer it (or not):
 * a READ, SEND, WRITE or atomic in turn.
 */
static void shca_fz_request(struct shca_fz *fz, struct shca_fz_qp *t)
{
	static const enum ib_wr_opcode ops[] = {
		IB_WR_RDMA_READ, IB_WR_SEND, IB_WR_RDMA_WRITE,
		IB_WR_ATOMIC_CMP_AND_SWP, IB_WR_ATOMIC_FETCH_AND_ADD,
	};
	struct ib_sge sge = {
		.addr = (uintptr_t)t->rbuf + SHCA_FZ_RBUF / 2,
		.length = SHCA_FZ_REQ_LEN,
		.lkey = fz->pd->local_dma_lkey,
	};
	struct ib_atomic_wr awr = {
		.wr = {
			.wr_id = SHCA_FZ_WR_SEND, .sg_list = &sge,
			.num_sge = 1, .send_flags = IB_SEND_SIGNALED,
			.opcode = ops[fz->sent % ARRAY_SIZE(ops)],
		},
		.remote_addr = 0x10000, .rkey = 0x1234, .swap = 1,
	};
	struct ib_rdma_wr rwr = {
		.wr = awr.wr, .remote_addr = 0x10000, .rkey = 0x1234,
	};
	struct ib_send_wr *wr = &rwr.wr;

	if (awr.wr.opcode >= IB_WR_ATOMIC_CMP_AND_SWP) {
		sge.length = 8;
		wr = &awr.wr;
	}
	if (!ib_post_send(t->qp, wr, NULL))
		t->sends++;
}

/* A UC or UD QP in RTS, moved to SQE by a send with a bad lkey. */
static void shca_fz_sqe(struct shca_fz *fz, struct shca_fz_qp *t)
{
	struct ib_sge sge = {
		.addr = (uintptr_t)t->rbuf, .length = 64, .lkey = 0x999900,
	};
	struct ib_ud_wr wr = {
		.wr = {
			.wr_id = SHCA_FZ_WR_BAD, .opcode = IB_WR_SEND,
			.sg_list = &sge, .num_sge = 1,
			.send_flags = IB_SEND_SIGNALED,
		},
		.ah = fz->ah,
		.remote_qpn = t->peer_qpn,
		.remote_qkey = SHCA_FZ_QKEY,
	};
	unsigned long end = jiffies + SHCA_FZ_POLL;
	struct ib_wc wc;

	KUNIT_ASSERT_EQ(fz->test, ib_post_send(t->qp, &wr.wr, NULL), 0);
	while (ib_poll_cq(t->cq, 1, &wc) < 1 || wc.wr_id != SHCA_FZ_WR_BAD) {
		KUNIT_ASSERT_TRUE(fz->test, time_before(jiffies, end));
		usleep_range(100, 1000);
	}
	KUNIT_ASSERT_NE(fz->test, wc.status, IB_WC_SUCCESS);
}

/* A valid packet of @opcode from the peer to @t, @i packets on. */
static void shca_fz_valid(struct shca_fz *fz, struct shca_fz_qp *t,
			  u8 opcode, u32 i, struct shca_pkt *pkt)
{
	*pkt = (struct shca_pkt){
		.opcode = opcode,
		.pkey = 0xffff,
		.dqpn = t->qp->qp_num,
		.psn = (t->epsn + i) & SHCA_BTH_PSN,
		.ackreq = true,
		.qkey = SHCA_FZ_QKEY,
		.sqpn = t->peer_qpn,
		.syndrome = SHCA_AETH_NO_CREDIT,
		.rkey = fz->mr->rkey,
		.va = fz->mr->iova,
	};
}

/* The first two packets of a 3-packet SEND: the QP is mid-message. */
static void shca_fz_half_send(struct shca_fz *fz, struct shca_fz_qp *t)
{
	struct shca_pkt pkt;
	u32 i;

	for (i = 0; i < 2; i++) {
		shca_fz_valid(fz, t, (t->plan->type == IB_QPT_RC ?
				      SHCA_TRANSPORT_RC : SHCA_TRANSPORT_UC) |
			      (i ? SHCA_OP_SEND_MIDDLE : SHCA_OP_SEND_FIRST),
			      i, &pkt);
		pkt.paylen = SHCA_FZ_MTU;
		shca_frame_fill(fz->fx->ndev, shca_fz_gid(fz, t), &pkt,
				fz->payload, &fz->f[i]);
	}
	shca_fz_inject(fz, 2, NULL);
	t->epsn = (t->epsn + 2) & SHCA_BTH_PSN;
}

/* From RTS to the plan's state, or mid-message. */
static void shca_fz_enter(struct shca_fz *fz, struct shca_fz_qp *t)
{
	struct ib_qp_attr attr = { .qp_state = t->plan->state };

	switch (t->plan->state) {
	case IB_QPS_SQD:
	case IB_QPS_ERR:
		KUNIT_ASSERT_EQ(fz->test,
				shca_fz_modify(t, &attr, IB_QP_STATE), 0);
		return;
	case IB_QPS_SQE:
		shca_fz_sqe(fz, t);
		return;
	default:
		break;
	}
	if (t->plan->mid == SHCA_FZ_MID_SEND)
		shca_fz_half_send(fz, t);
	else if (t->plan->mid == SHCA_FZ_MID_REQ)
		shca_fz_request(fz, t);
}

/* The QP, through RESET, in its plan's state again. */
static void shca_fz_rebuild(struct shca_fz *fz, struct shca_fz_qp *t)
{
	enum ib_qp_state state = t->plan->state;

	KUNIT_ASSERT_EQ(fz->test, shca_dp_modify(t->qp, IB_QPS_RESET), 0);
	shca_fz_drain(t);
	t->flushed = false;
	t->recvs = 0;
	t->sends = 0;
	t->epsn = SHCA_FZ_RQ_PSN;
	t->sq_psn = SHCA_FZ_SQ_PSN;
	t->rebuilds++;
	if (state == IB_QPS_RESET)
		return;
	shca_fz_init(fz, t);
	shca_fz_post_recvs(fz, t);
	if (state == IB_QPS_INIT)
		return;
	shca_fz_rtr(fz, t);
	if (state == IB_QPS_RTR)
		return;
	shca_fz_rts(fz, t);
	shca_fz_enter(fz, t);
}

static enum ib_qp_state shca_fz_state(struct shca_fz_qp *t)
{
	struct ib_qp_init_attr init;
	struct ib_qp_attr attr;

	if (ib_query_qp(t->qp, &attr, IB_QP_STATE, &init))
		return IB_QPS_ERR + 1;
	return attr.qp_state;
}

static void shca_fz_create(struct shca_fz *fz, unsigned int i)
{
	const struct shca_fz_plan *plan = &shca_fz_plans[i % SHCA_FZ_NPLAN];
	struct ib_cq_init_attr cq_attr = { .cqe = 256 };
	struct shca_fz_qp *t = &fz->qp[i];
	struct ib_qp_init_attr init = {
		.cap = {
			.max_send_wr = 16,
			.max_recv_wr = SHCA_FZ_RECVS,
			.max_send_sge = 1,
			.max_recv_sge = 1,
		},
		.sq_sig_type = IB_SIGNAL_REQ_WR,
		.qp_type = plan->type,
	};

	t->plan = plan;
	t->v4 = i >= SHCA_FZ_NPLAN;
	t->peer_qpn = SHCA_FZ_PEER_QPN + i;
	t->rbuf = kunit_kzalloc(fz->test, SHCA_FZ_RBUF, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(fz->test, t->rbuf);
	t->cq = ib_create_cq(fz->fx->ibdev, NULL, NULL, fz, &cq_attr);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(fz->test, t->cq);
	init.send_cq = t->cq;
	init.recv_cq = t->cq;
	t->qp = ib_create_qp(fz->pd, &init);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(fz->test, t->qp);
}

/* The peer's memory, registered through QP @t, which is in RTS. */
static void shca_fz_register(struct shca_fz *fz, struct shca_fz_qp *t)
{
	struct shca_dp dp = {
		.test = fz->test, .fx = fz->fx, .pd = fz->pd,
		.qp = { t->qp }, .cq = { t->cq },
	};

	fz->mem = kunit_kzalloc(fz->test, SHCA_FZ_MR_LEN, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(fz->test, fz->mem);
	fz->mr = shca_dp_frwr(&dp, 0, fz->mem, SHCA_FZ_MR_LEN,
			      shca_dp_rc.access);
	fz->inv_mr = shca_dp_frwr(&dp, 0, fz->mem, SHCA_FZ_MR_LEN,
				  IB_ACCESS_LOCAL_WRITE);
}

static void shca_fz_teardown(struct shca_fz *fz)
{
	unsigned int i;

	shca_test_netdev_capture(fz->fx->ndev, false);
	if (!IS_ERR_OR_NULL(fz->inv_mr))
		ib_dereg_mr(fz->inv_mr);
	if (!IS_ERR_OR_NULL(fz->mr))
		ib_dereg_mr(fz->mr);
	for (i = 0; i < SHCA_FZ_NQP; i++) {
		if (!IS_ERR_OR_NULL(fz->qp[i].qp))
			ib_destroy_qp(fz->qp[i].qp);
		if (!IS_ERR_OR_NULL(fz->qp[i].cq))
			ib_destroy_cq(fz->qp[i].cq);
	}
	if (!IS_ERR_OR_NULL(fz->ah))
		rdma_destroy_ah(fz->ah, 0);
	if (!IS_ERR_OR_NULL(fz->pd))
		ib_dealloc_pd(fz->pd);
}

static void shca_fz_exit(struct kunit *test)
{
	/* shca_fz_setup() points test->priv at the round's state. */
	if (test->priv != &shca_fz_fx)
		shca_fz_teardown(test->priv);
}

/* The QPs and the peer's memory; the peer, known to the netdev. */
static struct shca_fz *shca_fz_setup(struct kunit *test, u64 round)
{
	struct shca_fz *fz = kunit_kzalloc(test, sizeof(*fz), GFP_KERNEL);
	struct rdma_ah_attr av;
	unsigned int i;

	KUNIT_ASSERT_NOT_NULL(test, fz);
	fz->test = test;
	fz->fx = test->priv;
	fz->dev = to_shca_dev(fz->fx->ibdev);
	fz->seed = shca_fz_campaign.seed + round;
	prandom_seed_state(&fz->rnd, fz->seed);
	test->priv = fz;
	fz->payload = kunit_kmalloc(test, SHCA_FZ_MAX_PAY, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, fz->payload);
	shca_dp_fill(fz->payload, SHCA_FZ_MAX_PAY, fz->seed);
	for (i = 0; i < SHCA_FZ_BATCH; i++) {
		fz->f[i].buf = kunit_kzalloc(test, SHCA_FZ_FRAME, GFP_KERNEL);
		KUNIT_ASSERT_NOT_NULL(test, fz->f[i].buf);
	}
	shca_frame_gid(test, fz->fx, &fz->gid);
	shca_frame_neigh(test, fz->fx->ndev);
	fz->sgid4 = shca_frame_inet(test, fz->fx, &fz->gid4);
	/* No global rkey: a mutated address must not reach all memory. */
	fz->pd = ib_alloc_pd(fz->fx->ibdev, 0);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, fz->pd);
	shca_frame_peer_av(&av);
	fz->ah = rdma_create_ah(fz->pd, &av, 0);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, fz->ah);
	for (i = 0; i < SHCA_FZ_NQP; i++)
		shca_fz_create(fz, i);
	return fz;
}

/* Frame @f, as the network's stack will read it: its lengths. */
static void shca_fz_set_lens(struct shca_fz *fz, struct shca_frame *f,
			     bool ip)
{
	/* The field's true value: IPv4's counts its own header. */
	u16 len = ip && shca_frame_is_v4(f) ? f->len - SHCA_FRAME_IP_OFF :
			     f->len - shca_frame_bth_off(f) + sizeof(struct udphdr);
	u16 v;

	switch (shca_fz_rand(fz, 4)) {
	case 0:
		v = prandom_u32_state(&fz->rnd);
		break;
	case 1:
		v = len + 1 + shca_fz_rand(fz, 8);
		break;
	case 2:
		v = len - 1 - shca_fz_rand(fz, min_t(u16, len, 16));
		break;
	default:
		v = shca_fz_rand(fz, 2) ? 0 : 8;
		break;
	}
	if (ip)
		shca_frame_set_ip_len(f, v);
	else
		shca_frame_udp(f)->len = htons(v);
}

/* An opcode of the same transport, of IBA table 38. */
static u8 shca_fz_opcode(struct shca_fz *fz, u8 transport)
{
	u8 op;

	do {
		op = transport | shca_fz_rand(fz, 0x18);
	} while (!shca_opcode_lookup(op));
	return op;
}

static void shca_fz_mut_lens(struct shca_fz *fz, struct shca_pkt *pkt,
			     u32 muts)
{
	static const u32 dma_lens[] = {
		0, 1, SHCA_FZ_MTU, SHCA_FZ_MR_LEN, SHCA_FZ_MR_LEN + 1,
		U32_MAX, 1U << 31,
	};

	if (muts & BIT(SHCA_FZ_M_PAYLEN))
		pkt->paylen = shca_fz_rand(fz, SHCA_FZ_MAX_PAY + 1);
	if (muts & BIT(SHCA_FZ_M_DMA_LEN))
		pkt->dma_len = shca_fz_rand(fz, 2) ?
			       dma_lens[shca_fz_rand(fz, ARRAY_SIZE(dma_lens))] :
			       prandom_u32_state(&fz->rnd);
	if (muts & BIT(SHCA_FZ_M_RKEY))
		pkt->rkey ^= shca_fz_rand(fz, 2) ?
			     BIT(shca_fz_rand(fz, 32)) :
			     prandom_u32_state(&fz->rnd);
	if (muts & BIT(SHCA_FZ_M_VA))
		pkt->va = shca_fz_rand(fz, 2) ?
			  pkt->va + shca_fz_rand(fz, 2 * SHCA_FZ_MR_LEN) -
			  SHCA_FZ_MR_LEN / 2 :
			  (u64)prandom_u32_state(&fz->rnd) << 32 |
			  prandom_u32_state(&fz->rnd);
}

/* The mutations of the transport headers, before the frame is built. */
static void shca_fz_mut_pkt(struct shca_fz *fz, struct shca_pkt *pkt,
			    u32 muts)
{
	struct ib_qp *qp;

	if (muts & BIT(SHCA_FZ_M_PSN_NEAR))
		pkt->psn = (pkt->psn + shca_fz_rand(fz, 9) - 4) & SHCA_BTH_PSN;
	if (muts & BIT(SHCA_FZ_M_PSN_FAR))
		pkt->psn = prandom_u32_state(&fz->rnd) & SHCA_BTH_PSN;
	shca_fz_mut_lens(fz, pkt, muts);
	if (muts & BIT(SHCA_FZ_M_AETH)) {
		pkt->syndrome = prandom_u32_state(&fz->rnd);
		pkt->msn = prandom_u32_state(&fz->rnd) & SHCA_AETH_MSN;
	}
	if (muts & BIT(SHCA_FZ_M_OPCODE))
		pkt->opcode = shca_fz_opcode(fz, pkt->opcode &
					     SHCA_OPCODE_TRANSPORT);
	if (muts & BIT(SHCA_FZ_M_KEYS)) {
		pkt->qkey ^= BIT(shca_fz_rand(fz, 32));
		pkt->sqpn = prandom_u32_state(&fz->rnd) & SHCA_DETH_SQPN;
		pkt->inv_rkey = fz->mr->rkey ^ BIT(shca_fz_rand(fz, 32));
	}
	if (muts & BIT(SHCA_FZ_M_FLAGS)) {
		pkt->se = shca_fz_rand(fz, 2);
		pkt->migreq = shca_fz_rand(fz, 2);
		pkt->ackreq = shca_fz_rand(fz, 2);
		pkt->pkey = shca_fz_rand(fz, 2) ? 0x7fff :
			    prandom_u32_state(&fz->rnd);
	}
	if (muts & BIT(SHCA_FZ_M_DQPN)) {
		switch (shca_fz_rand(fz, 4)) {
		case 0:
			/* ib_mad's GSI QP, with the Q_Key it takes. */
			pkt->dqpn = 1;
			pkt->qkey = IB_QP1_QKEY;
			break;
		case 1:
			pkt->dqpn = prandom_u32_state(&fz->rnd) & SHCA_BTH_QPN;
			break;
		default:
			qp = fz->qp[shca_fz_rand(fz, SHCA_FZ_NQP)].qp;
			pkt->dqpn = qp->qp_num;
		}
	}
}

/* The mutations of the frame built; then its ICRC, unless kept stale. */
static void shca_fz_mut_frame(struct shca_fz *fz, struct shca_frame *f,
			      u32 muts)
{
	u8 *bth = shca_frame_bth(f);
	unsigned int i, n;

	if (muts & BIT(SHCA_FZ_M_OPCODE_RAW))
		bth[0] = shca_fz_rand(fz, 2) ? prandom_u32_state(&fz->rnd) :
			 shca_fz_opcode(fz, bth[0] & SHCA_OPCODE_TRANSPORT);
	if (muts & BIT(SHCA_FZ_M_PAD))
		bth[1] ^= FIELD_PREP(SHCA_BTH_PAD, 1 + shca_fz_rand(fz, 3));
	if (muts & BIT(SHCA_FZ_M_TVER))
		bth[1] ^= FIELD_PREP(SHCA_BTH_TVER, 1 + shca_fz_rand(fz, 15));
	if (muts & BIT(SHCA_FZ_M_BYTES)) {
		n = 1 + shca_fz_rand(fz, 4);
		for (i = 0; i < n; i++)
			bth[shca_fz_rand(fz, shca_frame_bth_len(f) -
					 SHCA_ICRC_LEN)] ^=
				1 + shca_fz_rand(fz, 255);
	}
	if (muts & BIT(SHCA_FZ_M_CUT))
		shca_frame_cut(f, shca_fz_rand(fz, shca_frame_bth_len(f)));
	if (muts & BIT(SHCA_FZ_M_IP_LEN))
		shca_fz_set_lens(fz, f, true);
	if (muts & BIT(SHCA_FZ_M_UDP_LEN))
		shca_fz_set_lens(fz, f, false);
	if (!(muts & BIT(SHCA_FZ_M_ICRC)) &&
	    shca_frame_bth_len(f) >= sizeof(struct shca_bth) + SHCA_ICRC_LEN)
		shca_frame_seal(f);
}

/* None (one frame in 8), or one to three mutations; a stale ICRC, rarely. */
static u32 shca_fz_pick(struct shca_fz *fz)
{
	u32 muts = 0, n, i;

	if (!shca_fz_rand(fz, 8))
		return 0;
	n = 1 + shca_fz_rand(fz, 3);
	for (i = 0; i < n; i++)
		muts |= BIT(shca_fz_rand(fz, SHCA_FZ_M_ICRC));
	if (!shca_fz_rand(fz, 64))
		muts |= BIT(SHCA_FZ_M_ICRC);
	return muts;
}

static bool shca_fz_answer(u8 opcode)
{
	u8 op = opcode & ~SHCA_OPCODE_TRANSPORT;

	return op >= SHCA_OP_RDMA_READ_RESPONSE_FIRST &&
	       op <= SHCA_OP_ATOMIC_ACKNOWLEDGE;
}

/* Frame @i of a batch of @opcode to @t: valid, then mutated. */
static void shca_fz_frame(struct shca_fz *fz, struct shca_fz_qp *t,
			  u8 opcode, u32 i, u32 muts)
{
	const struct shca_opcode_info *info = shca_opcode_lookup(opcode);
	struct shca_pkt pkt;

	shca_fz_valid(fz, t, opcode, i, &pkt);
	if (shca_fz_answer(opcode))
		pkt.psn = (t->sq_psn + i) & SHCA_BTH_PSN;
	if (info->payload)
		pkt.paylen = info->pos == SHCA_POS_FIRST ||
			     info->pos == SHCA_POS_MIDDLE ? SHCA_FZ_MTU :
			     shca_fz_rand(fz, SHCA_FZ_MTU + 1);
	pkt.dma_len = info->pos == SHCA_POS_FIRST ? 3 * SHCA_FZ_MTU :
		      pkt.paylen ?: 1 + shca_fz_rand(fz, SHCA_FZ_MR_LEN / 2);
	/* Room in the MR from there on for a READ or a WRITE. */
	pkt.va += shca_fz_rand(fz, SHCA_FZ_MR_LEN / 16) * 8;
	pkt.imm = prandom_u32_state(&fz->rnd);
	pkt.swap_add = prandom_u32_state(&fz->rnd);
	pkt.compare = prandom_u32_state(&fz->rnd);
	pkt.orig = prandom_u32_state(&fz->rnd);
	/* Half name an MR of the QPs' PD by its key, which they invalidate. */
	pkt.inv_rkey = shca_fz_rand(fz, 2) ? fz->inv_mr->rkey :
		       prandom_u32_state(&fz->rnd);
	shca_fz_mut_pkt(fz, &pkt, muts);
	shca_frame_fill(fz->fx->ndev, shca_fz_gid(fz, t), &pkt, fz->payload,
			&fz->f[i]);
	shca_fz_mut_frame(fz, &fz->f[i], muts);
}

/* What the device sent: its ACKs tell each responder's next PSN. */
static void shca_fz_heard(struct shca_fz *fz, struct sk_buff *skb)
{
	u8 buf[SHCA_FRAME_BTH_OFF + sizeof(struct shca_bth) + 4];
	struct shca_frame f = {
		.buf = buf, .len = min_t(unsigned int, skb->len, sizeof(buf)),
	};
	struct shca_fz_qp *t;
	u8 *bth, op, syn;
	u32 i, psn;

	if (skb_copy_bits(skb, 0, buf, f.len) || !shca_frame_is_roce(&f) ||
	    shca_frame_bth_len(&f) < sizeof(struct shca_bth) + 4)
		return;
	bth = shca_frame_bth(&f);
	i = (get_unaligned_be32(bth + 4) & SHCA_BTH_QPN) - SHCA_FZ_PEER_QPN;
	if (i >= SHCA_FZ_NQP)
		return;
	t = &fz->qp[i];
	psn = get_unaligned_be32(bth + 8) & SHCA_BTH_PSN;
	op = bth[0] & ~SHCA_OPCODE_TRANSPORT;
	syn = bth[sizeof(struct shca_bth)];
	if (op == SHCA_OP_ACKNOWLEDGE) {
		if (FIELD_GET(SHCA_AETH_TYPE, syn) == SHCA_AETH_ACK)
			t->epsn = (psn + 1) & SHCA_BTH_PSN;
		else if (syn == (FIELD_PREP(SHCA_AETH_TYPE, SHCA_AETH_NAK) |
				 SHCA_NAK_PSN_SEQ))
			t->epsn = psn;
	} else if (op == SHCA_OP_RDMA_READ_RESPONSE_LAST ||
		   op == SHCA_OP_RDMA_READ_RESPONSE_ONLY ||
		   op == SHCA_OP_ATOMIC_ACKNOWLEDGE) {
		t->epsn = (psn + 1) & SHCA_BTH_PSN;
	} else if (!shca_fz_answer(bth[0])) {
		t->sq_psn = psn;
	}
}

/* Between batches: completions taken, receives and requests renewed. */
static void shca_fz_service(struct shca_fz *fz)
{
	struct shca_fz_qp *t;
	struct sk_buff *skb;
	unsigned int i;

	while ((skb = shca_test_netdev_sent(fz->fx->ndev, 0))) {
		shca_fz_heard(fz, skb);
		kfree_skb(skb);
	}
	for (i = 0; i < SHCA_FZ_NQP; i++) {
		t = &fz->qp[i];
		shca_fz_drain(t);
		shca_fz_post_recvs(fz, t);
		if (t->plan->mid == SHCA_FZ_MID_REQ && !t->sends)
			shca_fz_request(fz, t);
	}
}

static void shca_fz_record(struct shca_fz *fz, unsigned int qp, u8 opcode,
			   const u32 *muts, unsigned int n)
{
	struct shca_fz_rec *r = &fz->log[fz->batches % SHCA_FZ_LOG];

	*r = (struct shca_fz_rec){
		.batch = fz->batches, .qp = qp, .opcode = opcode, .n = n,
		.state = fz->qp[qp].plan->state,
	};
	memcpy(r->muts, muts, n * sizeof(*muts));
	if (verbose)
		kunit_info(fz->test, "batch %llu: QP %u %s opcode %#04x\n",
			   fz->batches, qp, shca_fz_states[r->state], opcode);
}

/* One batch of @opcode to QP @qp, in its plan's state first. */
static void shca_fz_batch(struct shca_fz *fz, unsigned int qp, u8 opcode)
{
	struct shca_fz_qp *t = &fz->qp[qp];
	u32 muts[SHCA_FZ_BATCH], i, b;
	u64 passed;

	/* Mid-message is where the last batch left it: start it again. */
	if (t->plan->mid || shca_fz_state(t) != t->plan->state)
		shca_fz_rebuild(fz, t);
	for (i = 0; i < SHCA_FZ_BATCH; i++) {
		muts[i] = shca_fz_pick(fz);
		for (b = 0; b < SHCA_FZ_M_MAX; b++)
			fz->muts[b] += !!(muts[i] & BIT(b));
		shca_fz_frame(fz, t, opcode, i, muts[i]);
	}
	shca_fz_record(fz, qp, opcode, muts, SHCA_FZ_BATCH);
	fz->batches++;
	shca_fz_inject(fz, SHCA_FZ_BATCH, &passed);
	fz->accepted += passed;
	if (t->v4) {
		fz->sent4 += SHCA_FZ_BATCH;
		fz->accepted4 += passed;
	}
	if (passed)
		fz->covered[t->v4][opcode][t->plan->state] = true;
	shca_fz_service(fz);
}

static u8 shca_fz_transport(const struct shca_fz_qp *t)
{
	switch (t->plan->type) {
	case IB_QPT_RC:
		return SHCA_TRANSPORT_RC;
	case IB_QPT_UC:
		return SHCA_TRANSPORT_UC;
	default:
		return SHCA_TRANSPORT_UD;
	}
}

/* Every opcode to every QP of its transport once, to begin with. */
static void shca_fz_sweep(struct shca_fz *fz)
{
	unsigned int i, op;
	u8 tr;

	for (i = 0; i < SHCA_FZ_NQP; i++) {
		tr = shca_fz_transport(&fz->qp[i]);
		for (op = 0; op < 0x20; op++)
			if (shca_opcode_lookup(tr | op))
				shca_fz_batch(fz, i, tr | op);
	}
}

static bool shca_fz_more(struct shca_fz *fz, u64 budget, unsigned long end)
{
	return fz->sent < budget && time_before(jiffies, end);
}

/* Each QP's opcodes that reached it in each state, all of them. */
static void shca_fz_check_coverage(struct shca_fz *fz)
{
	const struct shca_fz_plan *p;
	unsigned int i, op;
	u8 tr;

	for (i = 0; i < SHCA_FZ_NQP; i++) {
		p = fz->qp[i].plan;
		tr = shca_fz_transport(&fz->qp[i]);
		for (op = 0; op < 0x20; op++) {
			if (!shca_opcode_lookup(tr | op))
				continue;
			KUNIT_EXPECT_TRUE_MSG(fz->test,
					      fz->covered[fz->qp[i].v4][tr | op][p->state],
					      "no %s frame over IPv%d reached a QP in %s",
					      shca_opcode_lookup(tr | op)->name,
					      fz->qp[i].v4 ? 4 : 6,
					      shca_fz_states[p->state]);
		}
	}
}

/* After the campaign: a message from the peer, placed intact. */
static void shca_fz_check_traffic(struct shca_fz *fz, struct shca_fz_qp *t)
{
	unsigned long end = jiffies + SHCA_FZ_POLL;
	u8 tr = shca_fz_transport(t);
	u32 n = tr == SHCA_TRANSPORT_UD ? 1 : 3, i, off;
	struct shca_pkt pkt;
	struct ib_wc wc;

	t->plan = &shca_fz_idle[t->plan->type == IB_QPT_RC ? 0 :
				t->plan->type == IB_QPT_UC ? 1 : 2];
	shca_fz_rebuild(fz, t);
	memset(t->rbuf, 0, SHCA_FZ_RBUF);
	for (i = 0; i < n; i++) {
		shca_fz_valid(fz, t, tr | (n == 1 ? SHCA_OP_SEND_ONLY :
					  SHCA_OP_SEND_FIRST + i), i, &pkt);
		pkt.paylen = SHCA_FZ_MTU;
		shca_frame_fill(fz->fx->ndev, shca_fz_gid(fz, t), &pkt,
				fz->payload + i * SHCA_FZ_MTU, &fz->f[i]);
	}
	shca_fz_inject(fz, n, NULL);
	while (ib_poll_cq(t->cq, 1, &wc) < 1) {
		KUNIT_ASSERT_TRUE_MSG(fz->test, time_before(jiffies, end),
				      "QP %u received nothing", t->qp->qp_num);
		usleep_range(100, 1000);
	}
	off = tr == SHCA_TRANSPORT_UD ? 40 : 0;
	KUNIT_EXPECT_EQ(fz->test, wc.status, IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(fz->test, wc.byte_len, off + n * SHCA_FZ_MTU);
	KUNIT_EXPECT_EQ(fz->test, memcmp(t->rbuf + off, fz->payload,
					 n * SHCA_FZ_MTU), 0);
}

static void shca_fz_report(struct shca_fz *fz, unsigned long start)
{
	unsigned long ms = jiffies_to_msecs(jiffies - start) ?: 1;
	enum shca_drop why;
	unsigned int i;

	kunit_info(fz->test, "%llu frames in %lu ms (%llu/s): %llu reached the device, %llu dropped by IP/UDP, %llu reached their QP\n",
		   fz->sent, ms, fz->sent * 1000 / ms, shca_fz_rx(fz),
		   shca_fz_net_drops(fz), fz->accepted);
	kunit_info(fz->test, "  IPv4: %llu frames sent in batches, %llu reached their QP\n",
		   fz->sent4, fz->accepted4);
	for (why = SHCA_DROP_NONE + 1; why < SHCA_DROP_MAX; why++)
		kunit_info(fz->test, "  dropped %s: %llu\n",
			   shca_drop_names[why], shca_fz_drop(fz, why));
	for (i = 0; i < SHCA_FZ_M_MAX; i++)
		kunit_info(fz->test, "  mutation %s: %llu frames\n",
			   shca_fz_mut_names[i], fz->muts[i]);
	kunit_info(fz->test, "  the MR SEND_WITH_INV names: %s\n",
		   READ_ONCE(to_shca_mr(fz->inv_mr)->valid) ? "valid" :
		   "invalidated");
	for (i = 0; i < SHCA_FZ_NQP; i++)
		kunit_info(fz->test, "  QP %u (%s%s %s%s): rebuilt %u times\n", i,
			   shca_fz_type(fz->qp[i].plan->type),
			   fz->qp[i].v4 ? "/IPv4" : "",
			   shca_fz_states[fz->qp[i].plan->state],
			   fz->qp[i].plan->mid ? ", mid-message" : "",
			   fz->qp[i].rebuilds);
}

static void shca_fz_plan_log(struct shca_fz *fz, u64 round, u64 budget)
{
	unsigned int i;

	if (!round)
		kunit_info(fz->test, "campaign: seed=%llu frames=%lu seconds=%u\n",
			   shca_fz_campaign.seed, frames, seconds);
	kunit_info(fz->test, "round %llu: seed=%llu, up to %llu frames, batches of %u, opcodes of the QP's transport uniformly, 0-3 mutations a frame\n",
		   round, fz->seed, budget, SHCA_FZ_BATCH);
	for (i = 0; i < SHCA_FZ_NQP; i++)
		kunit_info(fz->test, "  QP %u: %s%s %s%s, qpn %#x\n", i,
			   shca_fz_type(fz->qp[i].plan->type),
			   fz->qp[i].v4 ? "/IPv4" : "",
			   shca_fz_states[fz->qp[i].plan->state],
			   fz->qp[i].plan->mid == SHCA_FZ_MID_SEND ?
			   ", a SEND half received" :
			   fz->qp[i].plan->mid == SHCA_FZ_MID_REQ ?
			   ", a request in flight" : "",
			   fz->qp[i].qp->qp_num);
}

/* The frames this round sends: what is left, or no bound with seconds. */
static u64 shca_fz_budget(void)
{
	if (!frames)
		return U64_MAX;
	return frames - min_t(u64, frames, shca_fz_campaign.sent);
}

static void shca_fz_start(struct shca_fz *fz)
{
	unsigned int i;

	for (i = 0; i < SHCA_FZ_NQP; i++)
		if (fz->qp[i].plan->state == IB_QPS_RTS &&
		    fz->qp[i].plan->type == IB_QPT_RC && !fz->mr) {
			shca_fz_init(fz, &fz->qp[i]);
			shca_fz_rtr(fz, &fz->qp[i]);
			shca_fz_rts(fz, &fz->qp[i]);
			shca_fz_register(fz, &fz->qp[i]);
		}
	shca_test_netdev_capture(fz->fx->ndev, true);
	for (i = 0; i < SHCA_CNT_MAX; i++)
		fz->cnt0[i] = shca_fz_cnt(fz, i);
	fz->net0 = shca_fz_net_drops(fz);
	for (i = 0; i < SHCA_FZ_NQP; i++)
		shca_fz_rebuild(fz, &fz->qp[i]);
}

/* A round of the campaign: the sweep, then random batches. */
static void shca_fz_round(struct kunit *test)
{
	const u64 *round = test->param_value;
	unsigned long start = jiffies, end = start + SHCA_FZ_ROUND_S * HZ;
	struct shca_fz *fz;
	u64 budget = shca_fz_budget();
	unsigned int qp, i;
	u8 op;

	shca_fz_campaign.failed = true;
	fz = shca_fz_setup(test, *round);
	shca_fz_start(fz);
	shca_fz_plan_log(fz, *round, budget);
	shca_fz_sweep(fz);
	while (shca_fz_more(fz, budget, end) &&
	       (!seconds || time_before(jiffies, shca_fz_campaign.start +
					seconds * HZ))) {
		qp = shca_fz_rand(fz, SHCA_FZ_NQP);
		op = shca_fz_opcode(fz, shca_fz_transport(&fz->qp[qp]));
		shca_fz_batch(fz, qp, op);
		if (!(fz->batches % 4096))
			kunit_info(test, "%llu frames, %llu reached their QP\n",
				   fz->sent, fz->accepted);
	}
	shca_fz_campaign.sent += fz->sent;
	shca_fz_report(fz, start);
	KUNIT_EXPECT_EQ(test, fz->sent, shca_fz_rx(fz) + shca_fz_net_drops(fz));
	shca_fz_check_coverage(fz);
	for (i = 0; i < SHCA_FZ_NQP; i++)
		shca_fz_check_traffic(fz, &fz->qp[i]);
	if (test->status == KUNIT_SUCCESS)
		shca_fz_campaign.failed = false;
	else
		shca_fz_dump(fz);
}

static u64 shca_fz_rounds[SHCA_FZ_MAX_ROUNDS];

/* Rounds until the frames are sent or the time is up, or one failed. */
static const void *shca_fz_gen(const void *prev, char *desc)
{
	const u64 *r = prev ? (const u64 *)prev + 1 : shca_fz_rounds;
	bool timeout = seconds && !time_before(jiffies,
					       shca_fz_campaign.start +
					       seconds * HZ);

	if (!prev) {
		shca_fz_campaign.seed = seed ?: get_random_u32();
		shca_fz_campaign.start = jiffies;
		shca_fz_campaign.sent = 0;
	} else if (shca_fz_campaign.failed || timeout || !shca_fz_budget()) {
		return NULL;
	}
	if (r - shca_fz_rounds >= SHCA_FZ_MAX_ROUNDS)
		return NULL;
	snprintf(desc, KUNIT_PARAM_DESC_SIZE, "round %zu",
		 (size_t)(r - shca_fz_rounds));
	return r;
}

/*
 * KUnit on 6.1 runs a module's suites while the module is coming, before
 * its parameters are parsed: they are read from its arguments here.
 */
static void shca_fz_args(void)
{
	char *args = kstrdup(THIS_MODULE->args ?: "", GFP_KERNEL);
	char *p = args, *arg, *val;
	unsigned long v;

	while ((arg = strsep(&p, " \t\n"))) {
		val = strchr(arg, '=');
		if (!val || kstrtoul(val + 1, 0, &v))
			continue;
		*val = '\0';
		if (!strcmp(arg, "seed"))
			seed = v;
		else if (!strcmp(arg, "frames"))
			frames = v;
		else if (!strcmp(arg, "seconds"))
			seconds = v;
		else if (!strcmp(arg, "verbose"))
			verbose = v;
	}
	kfree(args);
}

static int shca_fz_suite_init(struct kunit_suite *suite)
{
	unsigned int i;

	shca_fz_args();
	for (i = 0; i < SHCA_FZ_MAX_ROUNDS; i++)
		shca_fz_rounds[i] = i;
	return shca_fz_fx_suite_init(suite);
}

static struct kunit_case shca_fz_cases[] = {
	KUNIT_CASE_PARAM(shca_fz_round, shca_fz_gen),
	{}
};

static struct kunit_suite shca_fz_suite = {
	.name = "softhca_fuzz_wire",
	.suite_init = shca_fz_suite_init,
	.suite_exit = shca_fz_fx_suite_exit,
	.init = shca_fz_fx_init,
	.exit = shca_fz_exit,
	.test_cases = shca_fz_cases,
};

kunit_test_suite(shca_fz_suite);
