// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * softhca_wire: the RoCEv2 transport headers (wire.c), against the IBA's
 * own tables:
 *
 * - each RC, UC and UD opcode has the extension headers, header length,
 *   payload and position of IBA table 38 (written out below, apart from
 *   wire.c's table), and builds and parses back with every field equal;
 * - each of the other 219 opcodes, a transport header version other than
 *   0, a pad count the length cannot hold, and a payload where none may
 *   be are refused with their reason;
 * - each truncation of a valid packet is refused with its reason, parsed
 *   from a buffer of exactly that many bytes, so KASAN sees a read past it.
 */

#include <kunit/test.h>
#include <linux/bitfield.h>

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

static struct kunit_case shca_wire_cases[] = {
	KUNIT_CASE_PARAM(shca_wire_opcode_info, shca_wire_ops_gen_params),
	KUNIT_CASE_PARAM(shca_wire_round_trip, shca_wire_ops_gen_params),
	KUNIT_CASE_PARAM(shca_wire_truncated, shca_wire_ops_gen_params),
	KUNIT_CASE(shca_wire_bad_tver),
	KUNIT_CASE(shca_wire_bad_opcode),
	KUNIT_CASE(shca_wire_no_payload),
	KUNIT_CASE(shca_wire_pad),
	KUNIT_CASE(shca_wire_drop_names),
	{}
};

static struct kunit_suite shca_wire_suite = {
	.name = "softhca_wire",
	.test_cases = shca_wire_cases,
};

kunit_test_suite(shca_wire_suite);
