// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Transport headers: what each opcode carries, and a BTH with its
 * extension headers parsed into a struct shca_pkt or built from one.
 *
 * shca_pkt_parse() takes bytes straight from the network.  Every length
 * and count in them is checked against the bytes received before a header
 * is read, and a refusal names its reason, which the transport counts.
 */

#include <linux/bitfield.h>
#include <linux/bug.h>
#include <linux/errno.h>
#include <linux/kernel.h>
#include <linux/string.h>
#include <kunit/visibility.h>

#include "wire.h"

/* Bytes of the BTH and the extension headers in @h (enum shca_hdr). */
#define SHCA_HDRS_LEN(h)						\
	(sizeof(struct shca_bth) +					\
	 ((h) & SHCA_HDR_DETH ? sizeof(struct shca_deth) : 0) +		\
	 ((h) & SHCA_HDR_FETH ? sizeof(struct shca_feth) : 0) +		\
	 ((h) & SHCA_HDR_RETH ? sizeof(struct shca_reth) : 0) +		\
	 ((h) & SHCA_HDR_ATMETH ? sizeof(struct shca_atmeth) : 0) +	\
	 ((h) & SHCA_HDR_AETH ? sizeof(struct shca_aeth) : 0) +		\
	 ((h) & SHCA_HDR_ATMACK ? sizeof(struct shca_atmack) : 0) +	\
	 ((h) & SHCA_HDR_IMMDT ? sizeof(struct shca_immdt) : 0) +	\
	 ((h) & SHCA_HDR_IETH ? sizeof(struct shca_ieth) : 0))

/* The entry of opcode @tr @op: SHCA_OPI(RC, SEND_ONLY, 0, true, ONLY). */
#define SHCA_OPI(tr, op, h, pay, p)					\
	[SHCA_OPCODE(tr, op)] = {					\
		.name = #tr " " #op, .hdrs = (h),			\
		.hdr_len = SHCA_HDRS_LEN(h), .payload = (pay),		\
		.pos = SHCA_POS_##p,					\
	}

/*
 * IBA table 38, the RC, UC and UD rows, and the RC opcodes of IBA 1.5 that
 * softhca executes; a NULL name is an invalid opcode.
 */
static const struct shca_opcode_info shca_opcodes[256] = {
	SHCA_OPI(RC, SEND_FIRST, 0, true, FIRST),
	SHCA_OPI(RC, SEND_MIDDLE, 0, true, MIDDLE),
	SHCA_OPI(RC, SEND_LAST, 0, true, LAST),
	SHCA_OPI(RC, SEND_LAST_WITH_IMMEDIATE, SHCA_HDR_IMMDT, true, LAST),
	SHCA_OPI(RC, SEND_ONLY, 0, true, ONLY),
	SHCA_OPI(RC, SEND_ONLY_WITH_IMMEDIATE, SHCA_HDR_IMMDT, true, ONLY),
	SHCA_OPI(RC, RDMA_WRITE_FIRST, SHCA_HDR_RETH, true, FIRST),
	SHCA_OPI(RC, RDMA_WRITE_MIDDLE, 0, true, MIDDLE),
	SHCA_OPI(RC, RDMA_WRITE_LAST, 0, true, LAST),
	SHCA_OPI(RC, RDMA_WRITE_LAST_WITH_IMMEDIATE, SHCA_HDR_IMMDT,
		 true, LAST),
	SHCA_OPI(RC, RDMA_WRITE_ONLY, SHCA_HDR_RETH, true, ONLY),
	SHCA_OPI(RC, RDMA_WRITE_ONLY_WITH_IMMEDIATE,
		 SHCA_HDR_RETH | SHCA_HDR_IMMDT, true, ONLY),
	SHCA_OPI(RC, RDMA_READ_REQUEST, SHCA_HDR_RETH, false, ONLY),
	SHCA_OPI(RC, RDMA_READ_RESPONSE_FIRST, SHCA_HDR_AETH, true, FIRST),
	SHCA_OPI(RC, RDMA_READ_RESPONSE_MIDDLE, 0, true, MIDDLE),
	SHCA_OPI(RC, RDMA_READ_RESPONSE_LAST, SHCA_HDR_AETH, true, LAST),
	SHCA_OPI(RC, RDMA_READ_RESPONSE_ONLY, SHCA_HDR_AETH, true, ONLY),
	SHCA_OPI(RC, ACKNOWLEDGE, SHCA_HDR_AETH, false, ONLY),
	SHCA_OPI(RC, ATOMIC_ACKNOWLEDGE, SHCA_HDR_AETH | SHCA_HDR_ATMACK,
		 false, ONLY),
	SHCA_OPI(RC, COMPARE_SWAP, SHCA_HDR_ATMETH, false, ONLY),
	SHCA_OPI(RC, FETCH_ADD, SHCA_HDR_ATMETH, false, ONLY),
	SHCA_OPI(RC, SEND_LAST_WITH_INVALIDATE, SHCA_HDR_IETH, true, LAST),
	SHCA_OPI(RC, SEND_ONLY_WITH_INVALIDATE, SHCA_HDR_IETH, true, ONLY),
	/*
	 * IBA 1.5, each answered by an empty READ response: FLUSH makes what
	 * was placed visible; ATOMIC WRITE stores 8 bytes whole.
	 */
	SHCA_OPI(RC, FLUSH, SHCA_HDR_FETH | SHCA_HDR_RETH, false, ONLY),
	SHCA_OPI(RC, ATOMIC_WRITE, SHCA_HDR_RETH, true, ONLY),

	SHCA_OPI(UC, SEND_FIRST, 0, true, FIRST),
	SHCA_OPI(UC, SEND_MIDDLE, 0, true, MIDDLE),
	SHCA_OPI(UC, SEND_LAST, 0, true, LAST),
	SHCA_OPI(UC, SEND_LAST_WITH_IMMEDIATE, SHCA_HDR_IMMDT, true, LAST),
	SHCA_OPI(UC, SEND_ONLY, 0, true, ONLY),
	SHCA_OPI(UC, SEND_ONLY_WITH_IMMEDIATE, SHCA_HDR_IMMDT, true, ONLY),
	SHCA_OPI(UC, RDMA_WRITE_FIRST, SHCA_HDR_RETH, true, FIRST),
	SHCA_OPI(UC, RDMA_WRITE_MIDDLE, 0, true, MIDDLE),
	SHCA_OPI(UC, RDMA_WRITE_LAST, 0, true, LAST),
	SHCA_OPI(UC, RDMA_WRITE_LAST_WITH_IMMEDIATE, SHCA_HDR_IMMDT,
		 true, LAST),
	SHCA_OPI(UC, RDMA_WRITE_ONLY, SHCA_HDR_RETH, true, ONLY),
	SHCA_OPI(UC, RDMA_WRITE_ONLY_WITH_IMMEDIATE,
		 SHCA_HDR_RETH | SHCA_HDR_IMMDT, true, ONLY),

	SHCA_OPI(UD, SEND_ONLY, SHCA_HDR_DETH, true, ONLY),
	SHCA_OPI(UD, SEND_ONLY_WITH_IMMEDIATE, SHCA_HDR_DETH | SHCA_HDR_IMMDT,
		 true, ONLY),
};

const char *const shca_drop_names[SHCA_DROP_MAX] = {
	[SHCA_DROP_NONE] = "accepted",
	[SHCA_DROP_TRUNCATED] = "rx_drop_truncated",
	[SHCA_DROP_OPCODE] = "rx_drop_opcode",
	[SHCA_DROP_TVER] = "rx_drop_tver",
	[SHCA_DROP_PAD] = "rx_drop_pad",
	[SHCA_DROP_LENGTH] = "rx_drop_length",
	[SHCA_DROP_ICRC] = "rx_drop_icrc",
	[SHCA_DROP_DGID] = "rx_drop_dgid",
	[SHCA_DROP_QPN] = "rx_drop_qpn",
	[SHCA_DROP_BUSY] = "rx_drop_busy",
	[SHCA_DROP_NOMEM] = "rx_drop_nomem",
	[SHCA_DROP_REFUSED] = "rx_drop_refused",
	[SHCA_DROP_DUP_READ] = "rx_drop_dup_read",
	[SHCA_DROP_DUP_ATOMIC] = "rx_drop_dup_atomic",
	[SHCA_DROP_LOOP_SRC] = "loop_drop_src",
	[SHCA_DROP_LOOP_PSN] = "loop_drop_psn",
	[SHCA_DROP_STALE] = "rx_drop_stale",
	[SHCA_DROP_PURGED] = "rx_drop_purged",
};
EXPORT_SYMBOL_IF_KUNIT(shca_drop_names);

/**
 * shca_opcode_lookup() - what a BTH opcode carries
 * @opcode: any byte
 *
 * Return: the opcode's entry, or NULL if softhca does not speak it (RD,
 * CNP, reserved values).
 */
const struct shca_opcode_info *shca_opcode_lookup(u8 opcode)
{
	const struct shca_opcode_info *info = &shca_opcodes[opcode];

	return info->name ? info : NULL;
}
EXPORT_SYMBOL_IF_KUNIT(shca_opcode_lookup);

/**
 * shca_pkt_hdr_len() - bytes of the BTH and an opcode's extension headers
 * @opcode: any byte
 *
 * Return: the length, which is also the payload's offset from the BTH, or
 * 0 for an opcode shca_opcode_lookup() does not know.
 */
unsigned int shca_pkt_hdr_len(u8 opcode)
{
	const struct shca_opcode_info *info = shca_opcode_lookup(opcode);

	return info ? info->hdr_len : 0;
}
EXPORT_SYMBOL_IF_KUNIT(shca_pkt_hdr_len);

static void shca_bth_get(struct shca_pkt *pkt, const struct shca_bth *bth)
{
	u32 qpn = be32_to_cpu(bth->qpn);
	u32 psn = be32_to_cpu(bth->psn);

	pkt->opcode = bth->opcode;
	pkt->se = FIELD_GET(SHCA_BTH_SE, bth->flags);
	pkt->migreq = FIELD_GET(SHCA_BTH_MIGREQ, bth->flags);
	pkt->pad = FIELD_GET(SHCA_BTH_PAD, bth->flags);
	pkt->tver = FIELD_GET(SHCA_BTH_TVER, bth->flags);
	pkt->pkey = be16_to_cpu(bth->pkey);
	pkt->dqpn = FIELD_GET(SHCA_BTH_QPN, qpn);
	pkt->ackreq = FIELD_GET(SHCA_BTH_ACKREQ, psn);
	pkt->psn = FIELD_GET(SHCA_BTH_PSN, psn);
}

/* Reads extension header @hdr at @p into @pkt; returns its length. */
static unsigned int shca_ext_get(struct shca_pkt *pkt, enum shca_hdr hdr,
				 const void *p)
{
	const struct shca_deth *deth = p;
	const struct shca_feth *feth = p;
	const struct shca_reth *reth = p;
	const struct shca_atmeth *atm = p;
	const struct shca_aeth *aeth = p;
	const struct shca_atmack *ack = p;
	const struct shca_immdt *imm = p;
	const struct shca_ieth *ieth = p;

	switch (hdr) {
	case SHCA_HDR_DETH:
		pkt->qkey = be32_to_cpu(deth->qkey);
		pkt->sqpn = FIELD_GET(SHCA_DETH_SQPN, be32_to_cpu(deth->sqpn));
		return sizeof(*deth);
	case SHCA_HDR_FETH:
		pkt->plt = FIELD_GET(SHCA_FETH_PLT, be32_to_cpu(feth->bits));
		pkt->sel = FIELD_GET(SHCA_FETH_SEL, be32_to_cpu(feth->bits));
		return sizeof(*feth);
	case SHCA_HDR_RETH:
		pkt->va = be64_to_cpu(reth->va);
		pkt->rkey = be32_to_cpu(reth->rkey);
		pkt->dma_len = be32_to_cpu(reth->dma_len);
		return sizeof(*reth);
	case SHCA_HDR_ATMETH:
		pkt->va = be64_to_cpu(atm->va);
		pkt->rkey = be32_to_cpu(atm->rkey);
		pkt->swap_add = be64_to_cpu(atm->swap_add);
		pkt->compare = be64_to_cpu(atm->compare);
		return sizeof(*atm);
	case SHCA_HDR_AETH:
		pkt->syndrome = FIELD_GET(SHCA_AETH_SYNDROME,
					  be32_to_cpu(aeth->smsn));
		pkt->msn = FIELD_GET(SHCA_AETH_MSN, be32_to_cpu(aeth->smsn));
		return sizeof(*aeth);
	case SHCA_HDR_ATMACK:
		pkt->orig = be64_to_cpu(ack->orig);
		return sizeof(*ack);
	case SHCA_HDR_IMMDT:
		pkt->imm = be32_to_cpu(imm->imm);
		return sizeof(*imm);
	case SHCA_HDR_IETH:
		pkt->inv_rkey = be32_to_cpu(ieth->rkey);
		return sizeof(*ieth);
	}
	return 0;
}

/*
 * Whether @rest bytes, between the headers and the ICRC, can be this
 * opcode's payload and the BTH's pad count.  Payload and pad end on a
 * 4-byte boundary; first and middle packets carry a whole path MTU, which
 * needs no pad and is never empty.
 */
static enum shca_drop shca_pkt_check_len(const struct shca_opcode_info *info,
					 u8 pad, unsigned int rest)
{
	if (!info->payload) {
		if (pad)
			return SHCA_DROP_PAD;
		return rest ? SHCA_DROP_LENGTH : SHCA_DROP_NONE;
	}
	if (pad > rest || rest % 4)
		return SHCA_DROP_PAD;
	if (info->pos == SHCA_POS_FIRST || info->pos == SHCA_POS_MIDDLE) {
		if (pad)
			return SHCA_DROP_PAD;
		if (!rest)
			return SHCA_DROP_LENGTH;
	}
	return SHCA_DROP_NONE;
}

static int shca_pkt_drop(struct shca_pkt *pkt, enum shca_drop why)
{
	pkt->drop = why;
	return -EINVAL;
}

/**
 * shca_pkt_parse() - check and read a received transport packet
 * @pkt: filled in; on failure, @pkt->drop says why
 * @bth: the packet's first byte, its BTH's opcode
 * @len: bytes from @bth to the end of the UDP payload, ICRC included
 *
 * Reads nothing outside @bth[0, @len), and reads a header only once @len
 * is known to cover it.  Checks that the opcode is one softhca speaks,
 * that the transport header version is 0, and that the headers, payload,
 * pad count and ICRC fit @len exactly.  The ICRC itself is the caller's
 * (icrc.h), and so is every check that needs the QP.
 *
 * Context: any.
 * Return: 0, or -EINVAL with @pkt->drop set.
 */
int shca_pkt_parse(struct shca_pkt *pkt, const void *bth, unsigned int len)
{
	const struct shca_opcode_info *info;
	enum shca_drop why;
	unsigned int rest;
	const u8 *p = bth;
	unsigned int hdr;

	memset(pkt, 0, sizeof(*pkt));
	if (len < sizeof(struct shca_bth) + SHCA_ICRC_LEN)
		return shca_pkt_drop(pkt, SHCA_DROP_TRUNCATED);
	shca_bth_get(pkt, bth);
	info = shca_opcode_lookup(pkt->opcode);
	if (!info)
		return shca_pkt_drop(pkt, SHCA_DROP_OPCODE);
	if (pkt->tver)
		return shca_pkt_drop(pkt, SHCA_DROP_TVER);
	if (len < info->hdr_len + SHCA_ICRC_LEN)
		return shca_pkt_drop(pkt, SHCA_DROP_TRUNCATED);
	rest = len - info->hdr_len - SHCA_ICRC_LEN;
	why = shca_pkt_check_len(info, pkt->pad, rest);
	if (why)
		return shca_pkt_drop(pkt, why);

	p += sizeof(struct shca_bth);
	for (hdr = 1; hdr <= SHCA_HDR_LAST; hdr <<= 1)
		if (info->hdrs & hdr)
			p += shca_ext_get(pkt, hdr, p);
	pkt->hdr_len = info->hdr_len;
	pkt->paylen = rest - pkt->pad;
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(shca_pkt_parse);

static void shca_bth_put(const struct shca_pkt *pkt, struct shca_bth *bth)
{
	/* Payload and pad end on a 4-byte boundary. */
	u8 pad = -pkt->paylen & 3;

	bth->opcode = pkt->opcode;
	bth->flags = FIELD_PREP(SHCA_BTH_SE, pkt->se) |
		     FIELD_PREP(SHCA_BTH_MIGREQ, pkt->migreq) |
		     FIELD_PREP(SHCA_BTH_PAD, pad) |
		     FIELD_PREP(SHCA_BTH_TVER, pkt->tver);
	bth->pkey = cpu_to_be16(pkt->pkey);
	bth->qpn = cpu_to_be32(FIELD_PREP(SHCA_BTH_QPN, pkt->dqpn));
	bth->psn = cpu_to_be32(FIELD_PREP(SHCA_BTH_ACKREQ, pkt->ackreq) |
			       FIELD_PREP(SHCA_BTH_PSN, pkt->psn));
}

/* Writes extension header @hdr at @p from @pkt; returns its length. */
static unsigned int shca_ext_put(const struct shca_pkt *pkt,
				 enum shca_hdr hdr, void *p)
{
	struct shca_deth *deth = p;
	struct shca_feth *feth = p;
	struct shca_reth *reth = p;
	struct shca_atmeth *atm = p;
	struct shca_aeth *aeth = p;
	struct shca_atmack *ack = p;
	struct shca_immdt *imm = p;
	struct shca_ieth *ieth = p;

	switch (hdr) {
	case SHCA_HDR_DETH:
		deth->qkey = cpu_to_be32(pkt->qkey);
		deth->sqpn = cpu_to_be32(FIELD_PREP(SHCA_DETH_SQPN, pkt->sqpn));
		return sizeof(*deth);
	case SHCA_HDR_FETH:
		feth->bits = cpu_to_be32(FIELD_PREP(SHCA_FETH_PLT, pkt->plt) |
					 FIELD_PREP(SHCA_FETH_SEL, pkt->sel));
		return sizeof(*feth);
	case SHCA_HDR_RETH:
		reth->va = cpu_to_be64(pkt->va);
		reth->rkey = cpu_to_be32(pkt->rkey);
		reth->dma_len = cpu_to_be32(pkt->dma_len);
		return sizeof(*reth);
	case SHCA_HDR_ATMETH:
		atm->va = cpu_to_be64(pkt->va);
		atm->rkey = cpu_to_be32(pkt->rkey);
		atm->swap_add = cpu_to_be64(pkt->swap_add);
		atm->compare = cpu_to_be64(pkt->compare);
		return sizeof(*atm);
	case SHCA_HDR_AETH:
		aeth->smsn = cpu_to_be32(FIELD_PREP(SHCA_AETH_SYNDROME,
						    pkt->syndrome) |
					 FIELD_PREP(SHCA_AETH_MSN, pkt->msn));
		return sizeof(*aeth);
	case SHCA_HDR_ATMACK:
		ack->orig = cpu_to_be64(pkt->orig);
		return sizeof(*ack);
	case SHCA_HDR_IMMDT:
		imm->imm = cpu_to_be32(pkt->imm);
		return sizeof(*imm);
	case SHCA_HDR_IETH:
		ieth->rkey = cpu_to_be32(pkt->inv_rkey);
		return sizeof(*ieth);
	}
	return 0;
}

/**
 * shca_pkt_build() - write a packet's BTH and extension headers
 * @pkt: the packet; @pkt->pad, @pkt->hdr_len and @pkt->drop are ignored
 * @bth: where the BTH goes, shca_pkt_hdr_len(@pkt->opcode) bytes
 *
 * Writes the headers @pkt->opcode calls for, in wire order, with the pad
 * count that @pkt->paylen needs; the reserved bits are zero.  The payload,
 * the pad bytes and the ICRC are the caller's.
 *
 * Context: any.
 */
void shca_pkt_build(const struct shca_pkt *pkt, void *bth)
{
	const struct shca_opcode_info *info = shca_opcode_lookup(pkt->opcode);
	u8 *p = bth;
	unsigned int hdr;

	/* The caller picked the opcode: one not in the table is a bug. */
	if (WARN_ON_ONCE(!info))
		return;
	shca_bth_put(pkt, bth);
	p += sizeof(struct shca_bth);
	for (hdr = 1; hdr <= SHCA_HDR_LAST; hdr <<= 1)
		if (info->hdrs & hdr)
			p += shca_ext_put(pkt, hdr, p);
}
EXPORT_SYMBOL_IF_KUNIT(shca_pkt_build);
