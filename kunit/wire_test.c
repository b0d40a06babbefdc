// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * softhca_wire: the RoCEv2 transport headers and the ICRC (wire.c and
 * icrc.c), against the IBA's own tables and against packets rdma_rxe put
 * on a wire:
 *
 * - each RC, UC and UD opcode has the extension headers, header length,
 *   payload and position of IBA table 38 (written out below, apart from
 *   wire.c's table), and builds and parses back with every field equal;
 * - each of the other 219 opcodes, a transport header version other than
 *   0, a pad count the length cannot hold, and a payload where none may
 *   be are refused with their reason;
 * - each truncation of a valid packet is refused with its reason, parsed
 *   from a buffer of exactly that many bytes, so KASAN sees a read past it;
 * - the ICRC of three packets written out from Annex A17 and of two that
 *   rdma_rxe sent is reproduced, from a linear skb and from an skb split
 *   between its head and page fragments at every offset; flipping a bit
 *   changes it unless the bit is in a field routers may rewrite.
 */

#include <kunit/test.h>
#include <linux/bitfield.h>
#include <linux/if_ether.h>
#include <linux/ip.h>
#include <linux/random.h>
#include <linux/sizes.h>
#include <linux/skbuff.h>
#include <linux/udp.h>

#include "frame.h"
#include "icrc.h"
#include "wire.h"

/* One opcode as IBA table 38 has it. */
struct shca_wire_op {
	u8 opcode;
	const char *name;
	u8 hdrs;
	u8 hdr_len;	/* BTH 12, RETH 16, AETH 4, AtomicETH 28, ... */
	bool payload;
	u8 pos;
};

#define SHCA_W(op, n, h, l, pay, p) {					\
	.opcode = (op), .name = (n), .hdrs = (h), .hdr_len = (l),	\
	.payload = (pay), .pos = SHCA_POS_##p,				\
}

#define DETH	SHCA_HDR_DETH
#define FETH	SHCA_HDR_FETH
#define RETH	SHCA_HDR_RETH
#define ATMETH	SHCA_HDR_ATMETH
#define AETH	SHCA_HDR_AETH
#define ATMACK	SHCA_HDR_ATMACK
#define IMMDT	SHCA_HDR_IMMDT
#define IETH	SHCA_HDR_IETH

static const struct shca_wire_op shca_wire_ops[] = {
	SHCA_W(0x00, "RC SEND_FIRST", 0, 12, true, FIRST),
	SHCA_W(0x01, "RC SEND_MIDDLE", 0, 12, true, MIDDLE),
	SHCA_W(0x02, "RC SEND_LAST", 0, 12, true, LAST),
	SHCA_W(0x03, "RC SEND_LAST_WITH_IMMEDIATE", IMMDT, 16, true, LAST),
	SHCA_W(0x04, "RC SEND_ONLY", 0, 12, true, ONLY),
	SHCA_W(0x05, "RC SEND_ONLY_WITH_IMMEDIATE", IMMDT, 16, true, ONLY),
	SHCA_W(0x06, "RC RDMA_WRITE_FIRST", RETH, 28, true, FIRST),
	SHCA_W(0x07, "RC RDMA_WRITE_MIDDLE", 0, 12, true, MIDDLE),
	SHCA_W(0x08, "RC RDMA_WRITE_LAST", 0, 12, true, LAST),
	SHCA_W(0x09, "RC RDMA_WRITE_LAST_WITH_IMMEDIATE", IMMDT, 16, true,
	       LAST),
	SHCA_W(0x0a, "RC RDMA_WRITE_ONLY", RETH, 28, true, ONLY),
	SHCA_W(0x0b, "RC RDMA_WRITE_ONLY_WITH_IMMEDIATE", RETH | IMMDT, 32,
	       true, ONLY),
	SHCA_W(0x0c, "RC RDMA_READ_REQUEST", RETH, 28, false, ONLY),
	SHCA_W(0x0d, "RC RDMA_READ_RESPONSE_FIRST", AETH, 16, true, FIRST),
	SHCA_W(0x0e, "RC RDMA_READ_RESPONSE_MIDDLE", 0, 12, true, MIDDLE),
	SHCA_W(0x0f, "RC RDMA_READ_RESPONSE_LAST", AETH, 16, true, LAST),
	SHCA_W(0x10, "RC RDMA_READ_RESPONSE_ONLY", AETH, 16, true, ONLY),
	SHCA_W(0x11, "RC ACKNOWLEDGE", AETH, 16, false, ONLY),
	SHCA_W(0x12, "RC ATOMIC_ACKNOWLEDGE", AETH | ATMACK, 24, false, ONLY),
	SHCA_W(0x13, "RC COMPARE_SWAP", ATMETH, 40, false, ONLY),
	SHCA_W(0x14, "RC FETCH_ADD", ATMETH, 40, false, ONLY),
	SHCA_W(0x16, "RC SEND_LAST_WITH_INVALIDATE", IETH, 16, true, LAST),
	SHCA_W(0x17, "RC SEND_ONLY_WITH_INVALIDATE", IETH, 16, true, ONLY),
	SHCA_W(0x1c, "RC FLUSH", FETH | RETH, 32, false, ONLY),
	SHCA_W(0x1d, "RC ATOMIC_WRITE", RETH, 28, true, ONLY),
	SHCA_W(0x20, "UC SEND_FIRST", 0, 12, true, FIRST),
	SHCA_W(0x21, "UC SEND_MIDDLE", 0, 12, true, MIDDLE),
	SHCA_W(0x22, "UC SEND_LAST", 0, 12, true, LAST),
	SHCA_W(0x23, "UC SEND_LAST_WITH_IMMEDIATE", IMMDT, 16, true, LAST),
	SHCA_W(0x24, "UC SEND_ONLY", 0, 12, true, ONLY),
	SHCA_W(0x25, "UC SEND_ONLY_WITH_IMMEDIATE", IMMDT, 16, true, ONLY),
	SHCA_W(0x26, "UC RDMA_WRITE_FIRST", RETH, 28, true, FIRST),
	SHCA_W(0x27, "UC RDMA_WRITE_MIDDLE", 0, 12, true, MIDDLE),
	SHCA_W(0x28, "UC RDMA_WRITE_LAST", 0, 12, true, LAST),
	SHCA_W(0x29, "UC RDMA_WRITE_LAST_WITH_IMMEDIATE", IMMDT, 16, true,
	       LAST),
	SHCA_W(0x2a, "UC RDMA_WRITE_ONLY", RETH, 28, true, ONLY),
	SHCA_W(0x2b, "UC RDMA_WRITE_ONLY_WITH_IMMEDIATE", RETH | IMMDT, 32,
	       true, ONLY),
	SHCA_W(0x64, "UD SEND_ONLY", DETH, 20, true, ONLY),
	SHCA_W(0x65, "UD SEND_ONLY_WITH_IMMEDIATE", DETH | IMMDT, 24, true,
	       ONLY),
};

static void shca_wire_op_desc(const struct shca_wire_op *op, char *desc)
{
	strscpy(desc, op->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(shca_wire_ops, shca_wire_ops, shca_wire_op_desc);

static const struct shca_wire_op *shca_wire_op_find(u8 opcode)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(shca_wire_ops); i++)
		if (shca_wire_ops[i].opcode == opcode)
			return &shca_wire_ops[i];
	return NULL;
}

/* The opcode's entry in wire.c agrees with the spec's. */
static void shca_wire_opcode_info(struct kunit *test)
{
	const struct shca_wire_op *op = test->param_value;
	const struct shca_opcode_info *info = shca_opcode_lookup(op->opcode);

	KUNIT_ASSERT_NOT_NULL(test, info);
	KUNIT_EXPECT_STREQ(test, info->name, op->name);
	KUNIT_EXPECT_EQ(test, info->hdrs, op->hdrs);
	KUNIT_EXPECT_EQ(test, info->hdr_len, op->hdr_len);
	KUNIT_EXPECT_EQ(test, info->payload, op->payload);
	KUNIT_EXPECT_EQ(test, info->pos, op->pos);
	KUNIT_EXPECT_EQ(test, shca_pkt_hdr_len(op->opcode), op->hdr_len);
}

/*
 * A packet with every field set, to something no other field has, and
 * the booleans varying with the opcode so both values are exercised.
 * Whole path MTUs in first and middle packets; else one byte, with pad.
 */
static void shca_wire_pkt_fill(struct shca_pkt *pkt,
			       const struct shca_wire_op *op)
{
	*pkt = (struct shca_pkt){
		.opcode = op->opcode,
		.se = op->opcode & 1,
		.migreq = !(op->opcode & 1),
		.pkey = 0xa1b2,
		.dqpn = 0xc3d4e5,
		.ackreq = op->opcode & 2,
		.psn = 0xf60718,
		.va = 0x0123456789abcdefULL,
		.rkey = 0x89abcdef,
		.dma_len = 0x12345678,
		.syndrome = 0x9f,
		.msn = 0xfedcba,
		.swap_add = 0x1122334455667788ULL,
		.compare = 0x99aabbccddeeff00ULL,
		.orig = 0x0f1e2d3c4b5a6978ULL,
		.imm = 0xdeadbeef,
		.inv_rkey = 0x76543210,
		.plt = 0xa,
		.sel = 0x2,
		.qkey = 0x80010002,
		.sqpn = 0x00abcd,
	};
	if (!op->payload)
		pkt->paylen = 0;
	else if (op->pos == SHCA_POS_FIRST || op->pos == SHCA_POS_MIDDLE)
		pkt->paylen = 256;
	else
		pkt->paylen = 1;
}

/* What parsing @src built as @op must give: absent headers read as 0. */
static struct shca_pkt shca_wire_pkt_want(const struct shca_pkt *src,
					  const struct shca_wire_op *op)
{
	struct shca_pkt want = *src;

	if (!(op->hdrs & (RETH | ATMETH))) {
		want.va = 0;
		want.rkey = 0;
	}
	if (!(op->hdrs & RETH))
		want.dma_len = 0;
	if (!(op->hdrs & AETH)) {
		want.syndrome = 0;
		want.msn = 0;
	}
	if (!(op->hdrs & ATMETH)) {
		want.swap_add = 0;
		want.compare = 0;
	}
	if (!(op->hdrs & ATMACK))
		want.orig = 0;
	if (!(op->hdrs & IMMDT))
		want.imm = 0;
	if (!(op->hdrs & IETH))
		want.inv_rkey = 0;
	if (!(op->hdrs & FETH)) {
		want.plt = 0;
		want.sel = 0;
	}
	if (!(op->hdrs & DETH)) {
		want.qkey = 0;
		want.sqpn = 0;
	}
	want.pad = -src->paylen & 3;
	want.hdr_len = op->hdr_len;
	want.drop = SHCA_DROP_NONE;
	return want;
}

/* Every field of @got is @want's. */
static void shca_wire_expect_pkt(struct kunit *test,
				 const struct shca_pkt *got,
				 const struct shca_pkt *want)
{
	const struct {
		const char *name;
		u64 got;
		u64 want;
	} f[] = {
		{ "opcode", got->opcode, want->opcode },
		{ "se", got->se, want->se },
		{ "migreq", got->migreq, want->migreq },
		{ "pad", got->pad, want->pad },
		{ "tver", got->tver, want->tver },
		{ "pkey", got->pkey, want->pkey },
		{ "dqpn", got->dqpn, want->dqpn },
		{ "ackreq", got->ackreq, want->ackreq },
		{ "psn", got->psn, want->psn },
		{ "va", got->va, want->va },
		{ "rkey", got->rkey, want->rkey },
		{ "dma_len", got->dma_len, want->dma_len },
		{ "syndrome", got->syndrome, want->syndrome },
		{ "msn", got->msn, want->msn },
		{ "swap_add", got->swap_add, want->swap_add },
		{ "compare", got->compare, want->compare },
		{ "orig", got->orig, want->orig },
		{ "imm", got->imm, want->imm },
		{ "inv_rkey", got->inv_rkey, want->inv_rkey },
		{ "plt", got->plt, want->plt },
		{ "sel", got->sel, want->sel },
		{ "qkey", got->qkey, want->qkey },
		{ "sqpn", got->sqpn, want->sqpn },
		{ "hdr_len", got->hdr_len, want->hdr_len },
		{ "paylen", got->paylen, want->paylen },
		{ "drop", got->drop, want->drop },
	};
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(f); i++)
		KUNIT_EXPECT_EQ_MSG(test, f[i].got, f[i].want, "field %s",
				    f[i].name);
}

/*
 * @pkt built into a zeroed buffer of exactly its length: headers,
 * payload, pad and a (zero) ICRC.
 */
static u8 *shca_wire_build(struct kunit *test, const struct shca_pkt *pkt,
			   unsigned int *len)
{
	unsigned int hdr_len = shca_pkt_hdr_len(pkt->opcode);
	u8 *buf;

	*len = hdr_len + ALIGN(pkt->paylen, 4) + SHCA_ICRC_LEN;
	buf = kunit_kzalloc(test, *len, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, buf);
	shca_pkt_build(pkt, buf);
	return buf;
}

/* Build, then parse: every field comes back; nothing past the headers. */
static void shca_wire_round_trip(struct kunit *test)
{
	const struct shca_wire_op *op = test->param_value;
	struct shca_pkt src, got, want;
	unsigned int len;
	u8 *buf;

	shca_wire_pkt_fill(&src, op);
	buf = shca_wire_build(test, &src, &len);
	KUNIT_EXPECT_NULL(test, memchr_inv(buf + op->hdr_len, 0,
					   len - op->hdr_len));
	KUNIT_ASSERT_EQ(test, shca_pkt_parse(&got, buf, len), 0);
	want = shca_wire_pkt_want(&src, op);
	shca_wire_expect_pkt(test, &got, &want);
}

/*
 * Every length short of a valid packet, in a buffer of exactly that
 * length: too short for the headers and ICRC is TRUNCATED; past them, the
 * one byte of a last or only packet leaves bytes too few for its pad of
 * 3 (PAD), and the 4 bytes of a first or middle packet leave a length no
 * whole pad count fits (PAD) or, at 0, an empty packet (LENGTH).
 */
static void shca_wire_truncated(struct kunit *test)
{
	const struct shca_wire_op *op = test->param_value;
	unsigned int len, full, cut;
	struct shca_pkt pkt, got;
	enum shca_drop want;
	u8 *buf, *part;

	shca_wire_pkt_fill(&pkt, op);
	if (op->pos == SHCA_POS_FIRST || op->pos == SHCA_POS_MIDDLE)
		pkt.paylen = 4;
	buf = shca_wire_build(test, &pkt, &full);
	KUNIT_ASSERT_EQ(test, shca_pkt_parse(&got, buf, full), 0);

	for (len = 0; len < full; len++) {
		part = kunit_kmalloc(test, len, GFP_KERNEL);
		KUNIT_ASSERT_NOT_NULL(test, part);
		memcpy(part, buf, len);
		cut = full - len;
		if (len < op->hdr_len + SHCA_ICRC_LEN)
			want = SHCA_DROP_TRUNCATED;
		else if (cut == 4 && op->pos != SHCA_POS_LAST &&
			 op->pos != SHCA_POS_ONLY)
			want = SHCA_DROP_LENGTH;
		else
			want = SHCA_DROP_PAD;
		KUNIT_EXPECT_EQ_MSG(test, shca_pkt_parse(&got, part, len),
				    -EINVAL, "length %u of %u", len, full);
		KUNIT_EXPECT_EQ_MSG(test, got.drop, want, "length %u of %u",
				    len, full);
		kunit_kfree(test, part);
	}
}

/* Transport header versions 1 to 15 are refused, for every opcode. */
static void shca_wire_bad_tver(struct kunit *test)
{
	const struct shca_wire_op *op;
	struct shca_pkt pkt, got;
	unsigned int len;
	u8 *buf;

	for (op = shca_wire_ops; op < shca_wire_ops + ARRAY_SIZE(shca_wire_ops);
	     op++) {
		shca_wire_pkt_fill(&pkt, op);
		for (pkt.tver = 1; pkt.tver < 16; pkt.tver++) {
			buf = shca_wire_build(test, &pkt, &len);
			KUNIT_EXPECT_EQ(test, shca_pkt_parse(&got, buf, len),
					-EINVAL);
			KUNIT_EXPECT_EQ_MSG(test, got.drop, SHCA_DROP_TVER,
					    "%s version %u", op->name,
					    pkt.tver);
		}
	}
}

/*
 * A FLUSH's FETH, as IBA 1.5 lays it out: after the BTH and before the
 * RETH, the placement type in bits 3:0 and the selectivity level in
 * bits 5:4 of one big-endian word, the rest reserved (zero).
 */
static void shca_wire_flush_layout(struct kunit *test)
{
	struct shca_pkt pkt = {
		.opcode = SHCA_OPCODE(RC, FLUSH),
		.plt = SHCA_FLUSH_GLOBAL,
		.sel = SHCA_FLUSH_MR,
		.va = 0x1122334455667788ULL,
		.rkey = 0x99aabbcc,
		.dma_len = 0x100,
	};
	static const u8 feth[4] = { 0, 0, 0, 0x11 };
	static const u8 reth[16] = {
		0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88,
		0x99, 0xaa, 0xbb, 0xcc, 0x00, 0x00, 0x01, 0x00,
	};
	unsigned int len;
	u8 *buf;

	buf = shca_wire_build(test, &pkt, &len);
	KUNIT_ASSERT_EQ(test, len, 12 + 4 + 16 + SHCA_ICRC_LEN);
	KUNIT_EXPECT_EQ(test, memcmp(buf + 12, feth, sizeof(feth)), 0);
	KUNIT_EXPECT_EQ(test, memcmp(buf + 16, reth, sizeof(reth)), 0);
}

/*
 * Each opcode not in table 38's RC, UC and UD rows (RD, CNP, reserved) is
 * unknown to the lookup and refused by the parser, whatever follows it.
 */
static void shca_wire_bad_opcode(struct kunit *test)
{
	unsigned int opcode, valid = 0;
	struct shca_pkt pkt;
	u8 buf[64] = {};

	for (opcode = 0; opcode < 256; opcode++) {
		if (shca_wire_op_find(opcode)) {
			valid++;
			continue;
		}
		KUNIT_EXPECT_NULL(test, shca_opcode_lookup(opcode));
		KUNIT_EXPECT_EQ(test, shca_pkt_hdr_len(opcode), 0);
		buf[0] = opcode;
		KUNIT_EXPECT_EQ(test, shca_pkt_parse(&pkt, buf, sizeof(buf)),
				-EINVAL);
		KUNIT_EXPECT_EQ_MSG(test, pkt.drop, SHCA_DROP_OPCODE,
				    "opcode 0x%02x", opcode);
	}
	KUNIT_EXPECT_EQ(test, valid, ARRAY_SIZE(shca_wire_ops));
}

/* Sets the BTH's pad count of the packet at @buf. */
static void shca_wire_set_pad(u8 *buf, u8 pad)
{
	buf[1] &= ~SHCA_BTH_PAD;
	buf[1] |= FIELD_PREP(SHCA_BTH_PAD, pad);
}

/*
 * The opcodes without payload (READ request, acknowledgements, atomics)
 * refuse a pad count (PAD) and any byte between headers and ICRC
 * (LENGTH).
 */
static void shca_wire_no_payload(struct kunit *test)
{
	const struct shca_wire_op *op;
	struct shca_pkt pkt, got;
	unsigned int len, extra;
	u8 pad, *buf;

	for (op = shca_wire_ops; op < shca_wire_ops + ARRAY_SIZE(shca_wire_ops);
	     op++) {
		if (op->payload)
			continue;
		shca_wire_pkt_fill(&pkt, op);
		buf = shca_wire_build(test, &pkt, &len);
		for (pad = 1; pad < 4; pad++) {
			shca_wire_set_pad(buf, pad);
			KUNIT_EXPECT_EQ(test, shca_pkt_parse(&got, buf, len),
					-EINVAL);
			KUNIT_EXPECT_EQ_MSG(test, got.drop, SHCA_DROP_PAD,
					    "%s pad %u", op->name, pad);
		}

		/* Headers, 1 to 8 bytes more, ICRC: with a pad count of 0. */
		pkt.paylen = 8;
		buf = shca_wire_build(test, &pkt, &len);
		for (extra = 1; extra <= 8; extra++) {
			KUNIT_EXPECT_EQ(test, shca_pkt_parse(&got, buf,
							     len - 8 + extra),
					-EINVAL);
			KUNIT_EXPECT_EQ_MSG(test, got.drop, SHCA_DROP_LENGTH,
					    "%s with %u bytes", op->name,
					    extra);
		}
	}
}

/* Parses @buf[0, @len) with pad count @pad, expecting the refusal @why. */
static void shca_wire_expect_pad(struct kunit *test, u8 *buf,
				 unsigned int len, u8 pad, enum shca_drop why)
{
	struct shca_pkt pkt;

	shca_wire_set_pad(buf, pad);
	KUNIT_EXPECT_EQ(test, shca_pkt_parse(&pkt, buf, len),
			why ? -EINVAL : 0);
	KUNIT_EXPECT_EQ_MSG(test, pkt.drop, why, "opcode 0x%02x length %u pad %u",
			    buf[0], len, pad);
}

/*
 * Pad counts against payloads: more pad than bytes, or payload and pad
 * not ending on a 4-byte boundary, is PAD; first and middle packets, a
 * whole path MTU, take no pad and are never empty (LENGTH).
 */
static void shca_wire_pad(struct kunit *test)
{
	const struct shca_wire_op *only = shca_wire_op_find(0x04);
	const struct shca_wire_op *first = shca_wire_op_find(0x00);
	struct shca_pkt pkt;
	unsigned int len, h;
	u8 pad, *buf;

	/* RC SEND_ONLY, with 0 or 4 bytes of payload and pad. */
	shca_wire_pkt_fill(&pkt, only);
	pkt.paylen = 4;
	buf = shca_wire_build(test, &pkt, &len);
	h = only->hdr_len + SHCA_ICRC_LEN;
	shca_wire_expect_pad(test, buf, h, 0, SHCA_DROP_NONE);
	for (pad = 1; pad < 4; pad++) {
		shca_wire_expect_pad(test, buf, h, pad, SHCA_DROP_PAD);
		shca_wire_expect_pad(test, buf, h + 4, pad, SHCA_DROP_NONE);
		shca_wire_expect_pad(test, buf, h + pad, 0, SHCA_DROP_PAD);
		shca_wire_expect_pad(test, buf, h + pad, pad, SHCA_DROP_PAD);
	}

	/* RC SEND_FIRST: never padded, never empty. */
	shca_wire_pkt_fill(&pkt, first);
	buf = shca_wire_build(test, &pkt, &len);
	h = first->hdr_len + SHCA_ICRC_LEN;
	shca_wire_expect_pad(test, buf, h, 0, SHCA_DROP_LENGTH);
	shca_wire_expect_pad(test, buf, h + 4, 0, SHCA_DROP_NONE);
	for (pad = 1; pad < 4; pad++)
		shca_wire_expect_pad(test, buf, h + 4, pad, SHCA_DROP_PAD);
}

/* Every drop reason has a counter name, each its own. */
static void shca_wire_drop_names(struct kunit *test)
{
	unsigned int i, j;

	for (i = 0; i < SHCA_DROP_MAX; i++) {
		KUNIT_ASSERT_NOT_NULL(test, shca_drop_names[i]);
		for (j = 0; j < i; j++)
			KUNIT_EXPECT_STRNEQ(test, shca_drop_names[i],
					    shca_drop_names[j]);
	}
}

/*
 * Packets with known ICRCs.  The "spec" ones are written out by hand
 * from IBA Annex A17, with every variant field set, and their ICRCs were
 * computed from the annex's definition by a separate implementation
 * (Python's zlib.crc32 over 8 bytes of ones and the masked packet).  The
 * "rxe" ones are frames rdma_rxe sent on Debian's Linux 6.1.0-57 (6.1.192),
 * ibv_rc_pingpong -s 61 (IPv4) and -s 64 (IPv6 GID) from a veth toward a
 * peer in another network namespace, captured with an AF_PACKET socket;
 * the same separate implementation reproduced all 841 frames of that run.
 */
struct shca_wire_vec {
	const char *name;
	const u8 *l3;
	unsigned int len;
	unsigned int ip_len;	/* the UDP header's offset */
	bool ipv6;
	u32 icrc;
	struct shca_pkt pkt;	/* what the transport headers say */
};

/* RC RDMA WRITE ONLY with immediate, over IPv4. */
static const u8 shca_wire_spec_v4[] = {
	/* IPv4: DSCP 26 and ECN 1, 72 bytes, ID 0x1234, DF, TTL 64, UDP */
	0x45, 0x69, 0x00, 0x48, 0x12, 0x34, 0x40, 0x00,
	0x40, 0x11, 0xa4, 0x04,
	/* 192.0.2.1 to 192.0.2.2 */
	0xc0, 0x00, 0x02, 0x01, 0xc0, 0x00, 0x02, 0x02,
	/* UDP: port 0xc0de to 4791, 52 bytes, checksum 0xbeef */
	0xc0, 0xde, 0x12, 0xb7, 0x00, 0x34, 0xbe, 0xef,
	/* BTH: SE, pad 3, P_Key 0xffff, FECN and BECN, QP 0x123456, AckReq */
	0x0b, 0xb0, 0xff, 0xff, 0xc0, 0x12, 0x34, 0x56,
	0x80, 0xab, 0xcd, 0xef,
	/* RETH: VA 0x0011223344556677, R_Key 0x89abcdef, length 5 */
	0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77,
	0x89, 0xab, 0xcd, 0xef, 0x00, 0x00, 0x00, 0x05,
	/* ImmDt */
	0xca, 0xfe, 0xf0, 0x0d,
	/* "hello", pad */
	0x68, 0x65, 0x6c, 0x6c, 0x6f, 0x00, 0x00, 0x00,
	/* ICRC 0x2086680b */
	0x0b, 0x68, 0x86, 0x20,
};

/* RC COMPARE SWAP, over IPv4 with options (the ICRC covers them). */
static const u8 shca_wire_spec_v4opt[] = {
	/* IPv4, IHL 6: DSCP 26 and ECN 1, 76 bytes, ID 0x1234, DF, TTL 64 */
	0x46, 0x69, 0x00, 0x4c, 0x12, 0x34, 0x40, 0x00,
	0x40, 0x11, 0xa0, 0xfe,
	0xc0, 0x00, 0x02, 0x01, 0xc0, 0x00, 0x02, 0x02,
	/* options: four NOPs */
	0x01, 0x01, 0x01, 0x01,
	/* UDP: port 0xc0de to 4791, 52 bytes, checksum 0xbeef */
	0xc0, 0xde, 0x12, 0xb7, 0x00, 0x34, 0xbe, 0xef,
	/* BTH: MigReq, P_Key 0x7fff, BECN, QP 0x000102, AckReq, PSN 7 */
	0x13, 0x40, 0x7f, 0xff, 0x40, 0x00, 0x01, 0x02,
	0x80, 0x00, 0x00, 0x07,
	/* AtomicETH: VA 0x00007f0012345678, R_Key 0xabcd, swap, compare */
	0x00, 0x00, 0x7f, 0x00, 0x12, 0x34, 0x56, 0x78,
	0x00, 0x00, 0xab, 0xcd,
	0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08,
	0x11, 0x12, 0x13, 0x14, 0x15, 0x16, 0x17, 0x18,
	/* ICRC 0xda0edb1d */
	0x1d, 0xdb, 0x0e, 0xda,
};

/* UD SEND ONLY to the GSI QP, over IPv6. */
static const u8 shca_wire_spec_v6[] = {
	/* IPv6: traffic class 0x69, flow label 0xabcde, 40 bytes, UDP, 64 */
	0x66, 0x9a, 0xbc, 0xde, 0x00, 0x28, 0x11, 0x40,
	/* 2001:db8::1 to 2001:db8::2 */
	0x20, 0x01, 0x0d, 0xb8, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01,
	0x20, 0x01, 0x0d, 0xb8, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02,
	/* UDP: port 0xc0de to 4791, 40 bytes, checksum 0xbeef */
	0xc0, 0xde, 0x12, 0xb7, 0x00, 0x28, 0xbe, 0xef,
	/* BTH: MigReq, P_Key 0x8001, QP 1, PSN 0x42 */
	0x64, 0x40, 0x80, 0x01, 0x00, 0x00, 0x00, 0x01,
	0x00, 0x00, 0x00, 0x42,
	/* DETH: Q_Key 0x80010000, source QP 0xabcd */
	0x80, 0x01, 0x00, 0x00, 0x00, 0x00, 0xab, 0xcd,
	/* "RoCEv2!\n" */
	0x52, 0x6f, 0x43, 0x45, 0x76, 0x32, 0x21, 0x0a,
	/* ICRC 0x114cc2a0 */
	0xa0, 0xc2, 0x4c, 0x11,
};

/* rdma_rxe: RC SEND ONLY of 61 bytes (pad 3), over IPv4. */
static const u8 shca_wire_rxe_v4[] = {
	0x45, 0x00, 0x00, 0x6c, 0x09, 0x26, 0x40, 0x00,
	0x40, 0x11, 0xad, 0x57, 0xc0, 0x00, 0x02, 0x01,
	0xc0, 0x00, 0x02, 0x02, 0xc1, 0x21, 0x12, 0xb7,
	0x00, 0x58, 0x00, 0x00, 0x04, 0x30, 0xff, 0xff,
	0x00, 0x00, 0x00, 0x11, 0x80, 0x23, 0x10, 0x1d,
	0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b,
	0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b,
	0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b,
	0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b,
	0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b,
	0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b,
	0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b,
	0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x00, 0x00, 0x00,
	0x51, 0x58, 0xaa, 0x74,
};

/* rdma_rxe: RC SEND ONLY of 64 bytes, over IPv6. */
static const u8 shca_wire_rxe_v6[] = {
	0x60, 0x00, 0x00, 0x00, 0x00, 0x58, 0x11, 0x40,
	0x20, 0x01, 0x0d, 0xb8, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01,
	0x20, 0x01, 0x0d, 0xb8, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02,
	0xc1, 0x32, 0x12, 0xb7, 0x00, 0x58, 0x00, 0x00,
	0x04, 0x00, 0xff, 0xff, 0x00, 0x00, 0x00, 0x11,
	0x80, 0x3f, 0xaa, 0x62, 0x7b, 0x7b, 0x7b, 0x7b,
	0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b,
	0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b,
	0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b,
	0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b,
	0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b,
	0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b,
	0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b,
	0x7b, 0x7b, 0x7b, 0x7b, 0x8c, 0x22, 0x60, 0xcb,
};

#define SHCA_VEC(n, a, ip, v6, crc) \
	.name = (n), .l3 = (a), .len = sizeof(a), .ip_len = (ip), \
	.ipv6 = (v6), .icrc = (crc)

static const struct shca_wire_vec shca_wire_vecs[] = {
	{
		SHCA_VEC("spec IPv4 RC WRITE imm", shca_wire_spec_v4, 20,
			 false, 0x2086680b),
		.pkt = {
			.opcode = 0x0b, .se = true, .pad = 3, .pkey = 0xffff,
			.dqpn = 0x123456, .ackreq = true, .psn = 0xabcdef,
			.va = 0x0011223344556677ULL, .rkey = 0x89abcdef,
			.dma_len = 5, .imm = 0xcafef00d,
			.hdr_len = 32, .paylen = 5,
		},
	}, {
		SHCA_VEC("spec IPv4 options RC CMP_SWAP", shca_wire_spec_v4opt,
			 24, false, 0xda0edb1d),
		.pkt = {
			.opcode = 0x13, .migreq = true, .pkey = 0x7fff,
			.dqpn = 0x000102, .ackreq = true, .psn = 7,
			.va = 0x00007f0012345678ULL, .rkey = 0xabcd,
			.swap_add = 0x0102030405060708ULL,
			.compare = 0x1112131415161718ULL,
			.hdr_len = 40,
		},
	}, {
		SHCA_VEC("spec IPv6 UD SEND", shca_wire_spec_v6, 40, true,
			 0x114cc2a0),
		.pkt = {
			.opcode = 0x64, .migreq = true, .pkey = 0x8001,
			.dqpn = 1, .psn = 0x42, .qkey = 0x80010000,
			.sqpn = 0xabcd, .hdr_len = 20, .paylen = 8,
		},
	}, {
		SHCA_VEC("rxe IPv4 RC SEND", shca_wire_rxe_v4, 20, false,
			 0x74aa5851),
		.pkt = {
			.opcode = 0x04, .pad = 3, .pkey = 0xffff, .dqpn = 0x11,
			.ackreq = true, .psn = 0x23101d,
			.hdr_len = 12, .paylen = 61,
		},
	}, {
		SHCA_VEC("rxe IPv6 RC SEND", shca_wire_rxe_v6, 40, true,
			 0xcb60228c),
		.pkt = {
			.opcode = 0x04, .pkey = 0xffff, .dqpn = 0x11,
			.ackreq = true, .psn = 0x3faa62,
			.hdr_len = 12, .paylen = 64,
		},
	},
};

static void shca_wire_vec_desc(const struct shca_wire_vec *v, char *desc)
{
	strscpy(desc, v->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(shca_wire_vecs, shca_wire_vecs, shca_wire_vec_desc);

/* The 4 bytes that end @v, least significant first. */
static u32 shca_wire_vec_icrc(const struct shca_wire_vec *v)
{
	__le32 icrc;

	memcpy(&icrc, v->l3 + v->len - SHCA_ICRC_LEN, sizeof(icrc));
	return le32_to_cpu(icrc);
}

/*
 * The ICRC is reproduced, and sits in the last 4 bytes least significant
 * byte first: the order rdma_rxe sent it in.
 */
static void shca_wire_icrc_known(struct kunit *test)
{
	const struct shca_wire_vec *v = test->param_value;

	KUNIT_EXPECT_EQ(test, shca_frame_icrc_of(v->l3, v->len, v->ipv6), v->icrc);
	KUNIT_EXPECT_EQ(test, shca_wire_vec_icrc(v), v->icrc);
}

/*
 * The transport headers parse to what the vector's comments say, and
 * building those fields gives the same bytes back but for FECN and BECN,
 * which softhca sends as 0.
 */
static void shca_wire_vec_headers(struct kunit *test)
{
	const struct shca_wire_vec *v = test->param_value;
	unsigned int off = v->ip_len + sizeof(struct udphdr);
	const u8 *bth = v->l3 + off;
	struct shca_pkt got;
	u8 *buf;

	KUNIT_ASSERT_EQ(test, shca_pkt_parse(&got, bth, v->len - off), 0);
	shca_wire_expect_pkt(test, &got, &v->pkt);

	buf = kunit_kzalloc(test, v->pkt.hdr_len, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, buf);
	shca_pkt_build(&v->pkt, buf);
	KUNIT_EXPECT_EQ(test, buf[4], 0);
	buf[4] = bth[4];
	KUNIT_EXPECT_EQ(test, memcmp(buf, bth, v->pkt.hdr_len), 0);
}

/*
 * The bits of byte @i of @v that a router may rewrite, so the ICRC leaves
 * them out: IPv4 TOS, TTL and header checksum; IPv6 traffic class, flow
 * label and hop limit; the UDP checksum; the BTH's FECN/BECN byte.
 */
static u8 shca_wire_variant_bits(const struct shca_wire_vec *v,
				 unsigned int i)
{
	unsigned int udp = v->ip_len;

	if (i == udp + 6 || i == udp + 7 || i == udp + 8 + 4)
		return 0xff;
	if (v->ipv6)
		return i == 0 ? 0x0f : (i <= 3 || i == 7) ? 0xff : 0;
	return (i == 1 || i == 8 || i == 10 || i == 11) ? 0xff : 0;
}

/*
 * Flipping any bit changes the ICRC but for the variant bits and the ICRC
 * itself.  The IPv4 IHL is left alone: it moves the headers, and the IP
 * stack has checked it against the packet before softhca sees it.
 */
static void shca_wire_icrc_variant(struct kunit *test)
{
	const struct shca_wire_vec *v = test->param_value;
	unsigned int i, bit;
	bool same, masked;
	u8 *p;

	p = kunit_kmalloc(test, v->len, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, p);
	memcpy(p, v->l3, v->len);
	for (i = 0; i < v->len; i++) {
		for (bit = 0; bit < 8; bit++) {
			if (!v->ipv6 && i == 0 && bit < 4)
				continue;
			masked = i >= v->len - SHCA_ICRC_LEN ||
				 shca_wire_variant_bits(v, i) & BIT(bit);
			p[i] ^= BIT(bit);
			same = shca_frame_icrc_of(p, v->len, v->ipv6) == v->icrc;
			p[i] ^= BIT(bit);
			KUNIT_EXPECT_EQ_MSG(test, same, masked,
					    "byte %u bit %u", i, bit);
		}
	}
}

/*
 * @v after an Ethernet header, @head of its bytes in the skb's head and
 * the rest, with 4 bytes of trailer, split between two page fragments.
 */
static struct sk_buff *shca_wire_skb(const struct shca_wire_vec *v,
				     const u8 *src, unsigned int head)
{
	unsigned int rest = v->len + 4 - head, off = head, i, n;
	struct sk_buff *skb;
	struct page *page;

	skb = alloc_skb(ETH_HLEN + head, GFP_KERNEL);
	if (!skb)
		return NULL;
	memset(skb_put(skb, ETH_HLEN), 0xee, ETH_HLEN);
	skb_put_data(skb, src, head);
	for (i = 0; i < 2; i++) {
		page = alloc_page(GFP_KERNEL);
		if (!page) {
			consume_skb(skb);
			return NULL;
		}
		n = i ? rest - rest / 2 : rest / 2;
		memcpy(page_address(page) + 100, src + off, n);
		skb_add_rx_frag(skb, i, page, 100, n, PAGE_SIZE);
		off += n;
	}
	return skb;
}

/*
 * The skb entry agrees, wherever the head ends and the fragments start;
 * so does each CRC-32 it may use: crc32_le() and the crypto API's crc32
 * (crc32-pclmul on most x86 hosts, crc32-generic in the debug kernel),
 * whichever of them shca_icrc_init() chose.
 */
static void shca_wire_icrc_skb(struct kunit *test)
{
	const struct shca_wire_vec *v = test->param_value;
	struct sk_buff *skb;
	unsigned int head;
	u8 *src;

	src = kunit_kmalloc(test, v->len + 4, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, src);
	memcpy(src, v->l3, v->len);
	memset(src + v->len, 0xee, 4);
	for (head = 1; head < v->len; head++) {
		skb = shca_wire_skb(v, src, head);
		KUNIT_ASSERT_NOT_NULL(test, skb);
		KUNIT_EXPECT_EQ_MSG(test, shca_icrc_skb(skb, ETH_HLEN, v->len,
							v->ipv6),
				    v->icrc, "head %u", head);
		KUNIT_EXPECT_EQ_MSG(test,
				    shca_icrc_skb_by(NULL, skb, ETH_HLEN,
						     v->len, v->ipv6),
				    v->icrc, "crc32_le, head %u", head);
		if (shca_icrc_tfm)
			KUNIT_EXPECT_EQ_MSG(test,
					    shca_icrc_skb_by(shca_icrc_tfm, skb,
							     ETH_HLEN, v->len,
							     v->ipv6),
					    v->icrc, "crypto API, head %u", head);
		consume_skb(skb);
	}
}

/*
 * Over up to 4 KiB of random payload in page fragments of odd sizes, the
 * two CRC-32s agree: the crypto API's takes its SIMD path past 64 bytes.
 */
static void shca_wire_icrc_crypto_long(struct kunit *test)
{
	unsigned int hlen = sizeof(struct iphdr) + sizeof(struct udphdr) +
			    sizeof(struct shca_bth);
	unsigned int len, off, n, i;
	struct sk_buff *skb;
	struct page *page;
	u8 *src;

	if (!shca_icrc_tfm)
		kunit_skip(test, "the crypto API has no crc32");
	src = kunit_kmalloc(test, hlen + SZ_4K + SHCA_ICRC_LEN, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, src);
	for (len = hlen + SHCA_ICRC_LEN; len <= hlen + SZ_4K + SHCA_ICRC_LEN;
	     len += 251) {
		get_random_bytes(src, len);
		src[0] = 0x45;
		skb = alloc_skb(hlen, GFP_KERNEL);
		KUNIT_ASSERT_NOT_NULL(test, skb);
		skb_put_data(skb, src, hlen);
		for (off = hlen, i = 0; off < len; off += n, i++) {
			n = min(len - off, 1021U);
			page = alloc_page(GFP_KERNEL);
			if (!page)
				consume_skb(skb);
			KUNIT_ASSERT_NOT_NULL(test, page);
			memcpy(page_address(page) + 3, src + off, n);
			skb_add_rx_frag(skb, i, page, 3, n, PAGE_SIZE);
		}
		KUNIT_EXPECT_EQ_MSG(test,
				    shca_icrc_skb_by(shca_icrc_tfm, skb, 0,
						     len, false),
				    shca_icrc_skb_by(NULL, skb, 0, len, false),
				    "%u bytes", len);
		KUNIT_EXPECT_EQ(test, shca_icrc_skb(skb, 0, len, false),
				shca_icrc_skb_by(NULL, skb, 0, len, false));
		consume_skb(skb);
	}
}

static struct kunit_case shca_wire_cases[] = {
	KUNIT_CASE_PARAM(shca_wire_opcode_info, shca_wire_ops_gen_params),
	KUNIT_CASE_PARAM(shca_wire_round_trip, shca_wire_ops_gen_params),
	KUNIT_CASE_PARAM(shca_wire_truncated, shca_wire_ops_gen_params),
	KUNIT_CASE(shca_wire_bad_tver),
	KUNIT_CASE(shca_wire_flush_layout),
	KUNIT_CASE(shca_wire_bad_opcode),
	KUNIT_CASE(shca_wire_no_payload),
	KUNIT_CASE(shca_wire_pad),
	KUNIT_CASE(shca_wire_drop_names),
	KUNIT_CASE_PARAM(shca_wire_icrc_known, shca_wire_vecs_gen_params),
	KUNIT_CASE_PARAM(shca_wire_vec_headers, shca_wire_vecs_gen_params),
	KUNIT_CASE_PARAM(shca_wire_icrc_variant, shca_wire_vecs_gen_params),
	KUNIT_CASE_PARAM(shca_wire_icrc_skb, shca_wire_vecs_gen_params),
	KUNIT_CASE(shca_wire_icrc_crypto_long),
	{}
};

static struct kunit_suite shca_wire_suite = {
	.name = "softhca_wire",
	.test_cases = shca_wire_cases,
};

kunit_test_suite(shca_wire_suite);
