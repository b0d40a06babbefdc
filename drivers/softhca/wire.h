/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The InfiniBand transport headers as RoCEv2 carries them in a UDP
 * datagram (IBA Vol 1, 9.2 to 9.3, and Annex A17): the base transport
 * header (BTH), then the extension headers an opcode calls for, then the
 * payload, 0 to 3 pad bytes and the 4-byte invariant CRC (icrc.h).
 *
 * The structs are the wire layout, big-endian.  They are packed: a BTH
 * may sit at any offset of a received frame, and the compiler then makes
 * every access safe whatever the alignment.  struct shca_pkt is the same
 * packet in CPU byte order, the only form the rest of the driver handles.
 */
#ifndef SHCA_WIRE_H
#define SHCA_WIRE_H

#include <linux/bits.h>
#include <linux/build_bug.h>
#include <linux/types.h>

/* UDP destination port of RoCEv2 (IANA). */
#define SHCA_ROCE_UDP_PORT	4791

/* Base transport header. */
struct shca_bth {
	u8 opcode;
	u8 flags;
	__be16 pkey;
	__be32 qpn;
	__be32 psn;
} __packed;

#define SHCA_BTH_SE		BIT(7)		/* solicited event */
#define SHCA_BTH_MIGREQ		BIT(6)
#define SHCA_BTH_PAD		GENMASK(5, 4)	/* pad count */
#define SHCA_BTH_TVER		GENMASK(3, 0)	/* transport header version */
/*
 * The top byte of @qpn is resv8a in the IBA; RoCE puts FECN and BECN in
 * it.  Ignored on receive, zero on transmit, masked out of the ICRC.
 */
#define SHCA_BTH_RESV8A		GENMASK(31, 24)
#define SHCA_BTH_QPN		GENMASK(23, 0)
#define SHCA_BTH_ACKREQ		BIT(31)
#define SHCA_BTH_PSN		GENMASK(23, 0)

/* The destination QP of every packet sent to a multicast group. */
#define SHCA_MCAST_QPN		0xffffff

/* RDMA extended transport header: WRITE's first packet, READ request. */
struct shca_reth {
	__be64 va;
	__be32 rkey;
	__be32 dma_len;
} __packed;

/* ACK extended transport header: ACK/NAK syndrome and MSN. */
struct shca_aeth {
	__be32 smsn;
} __packed;

#define SHCA_AETH_SYNDROME	GENMASK(31, 24)
#define SHCA_AETH_MSN		GENMASK(23, 0)

/*
 * AETH syndromes: the type in bits 6:5, then the ACK's
 * credit count, the RNR NAK's timer or the NAK's code in bits 4:0.
 */
#define SHCA_AETH_TYPE		GENMASK(6, 5)
#define SHCA_AETH_VALUE		GENMASK(4, 0)

enum shca_aeth_type {
	SHCA_AETH_ACK = 0,
	SHCA_AETH_RNR_NAK = 1,
	SHCA_AETH_NAK = 3,
};

/* An ACK's credit count for a responder that does not count credits. */
#define SHCA_AETH_NO_CREDIT	0x1f

enum shca_nak {
	SHCA_NAK_PSN_SEQ = 0,		/* PSN sequence error */
	SHCA_NAK_INV_REQ = 1,		/* invalid request */
	SHCA_NAK_REM_ACCESS = 2,	/* remote access error */
	SHCA_NAK_REM_OP = 3,		/* remote operational error */
};

/* Atomic extended transport header: its 64-bit fields are unaligned. */
struct shca_atmeth {
	__be64 va;
	__be32 rkey;
	__be64 swap_add;
	__be64 compare;
} __packed;

/* Atomic acknowledge extended transport header. */
struct shca_atmack {
	__be64 orig;
} __packed;

/* Immediate data. */
struct shca_immdt {
	__be32 imm;
} __packed;

/* Invalidate extended transport header: the rkey SEND_WITH_INV names. */
struct shca_ieth {
	__be32 rkey;
} __packed;

/*
 * FLUSH extended transport header (IBA 1.5): the placement type (global
 * visibility, persistence) and the selectivity level (the RETH's range,
 * or the whole MR of its rkey).
 */
struct shca_feth {
	__be32 bits;
} __packed;

#define SHCA_FETH_PLT		GENMASK(3, 0)
#define SHCA_FETH_SEL		GENMASK(5, 4)

/* FETH placement types, bits of SHCA_FETH_PLT. */
#define SHCA_FLUSH_GLOBAL	BIT(0)
#define SHCA_FLUSH_PERSISTENT	BIT(1)
/* FETH selectivity levels. */
#define SHCA_FLUSH_RANGE	0
#define SHCA_FLUSH_MR		1

/* Datagram extended transport header (UD). */
struct shca_deth {
	__be32 qkey;
	__be32 sqpn;
} __packed;

#define SHCA_DETH_SQPN		GENMASK(23, 0)

static_assert(sizeof(struct shca_bth) == 12);
static_assert(sizeof(struct shca_reth) == 16);
static_assert(sizeof(struct shca_aeth) == 4);
static_assert(sizeof(struct shca_atmeth) == 28);
static_assert(sizeof(struct shca_atmack) == 8);
static_assert(sizeof(struct shca_immdt) == 4);
static_assert(sizeof(struct shca_ieth) == 4);
static_assert(sizeof(struct shca_deth) == 8);
static_assert(sizeof(struct shca_feth) == 4);

/*
 * The extension headers, in the order they follow the BTH on the wire
 * (IBA 9.2; RD's RDETH and XRC's XRCETH are not spoken here).
 */
enum shca_hdr {
	SHCA_HDR_DETH = BIT(0),
	SHCA_HDR_FETH = BIT(1),
	SHCA_HDR_RETH = BIT(2),
	SHCA_HDR_ATMETH = BIT(3),
	SHCA_HDR_AETH = BIT(4),
	SHCA_HDR_ATMACK = BIT(5),
	SHCA_HDR_IMMDT = BIT(6),
	SHCA_HDR_IETH = BIT(7),
	SHCA_HDR_LAST = SHCA_HDR_IETH,
};

/*
 * BTH opcodes (IBA table 38): the transport in bits 7:5, the operation
 * in bits 4:0.  RD, CNP and the reserved values are not in the table
 * wire.c keeps, so shca_pkt_parse() refuses them.
 */
#define SHCA_OPCODE_TRANSPORT	GENMASK(7, 5)

enum shca_bth_transport {
	SHCA_TRANSPORT_RC = 0x00,
	SHCA_TRANSPORT_UC = 0x20,
	SHCA_TRANSPORT_UD = 0x60,
};

enum shca_op {
	SHCA_OP_SEND_FIRST = 0x00,
	SHCA_OP_SEND_MIDDLE = 0x01,
	SHCA_OP_SEND_LAST = 0x02,
	SHCA_OP_SEND_LAST_WITH_IMMEDIATE = 0x03,
	SHCA_OP_SEND_ONLY = 0x04,
	SHCA_OP_SEND_ONLY_WITH_IMMEDIATE = 0x05,
	SHCA_OP_RDMA_WRITE_FIRST = 0x06,
	SHCA_OP_RDMA_WRITE_MIDDLE = 0x07,
	SHCA_OP_RDMA_WRITE_LAST = 0x08,
	SHCA_OP_RDMA_WRITE_LAST_WITH_IMMEDIATE = 0x09,
	SHCA_OP_RDMA_WRITE_ONLY = 0x0a,
	SHCA_OP_RDMA_WRITE_ONLY_WITH_IMMEDIATE = 0x0b,
	SHCA_OP_RDMA_READ_REQUEST = 0x0c,
	SHCA_OP_RDMA_READ_RESPONSE_FIRST = 0x0d,
	SHCA_OP_RDMA_READ_RESPONSE_MIDDLE = 0x0e,
	SHCA_OP_RDMA_READ_RESPONSE_LAST = 0x0f,
	SHCA_OP_RDMA_READ_RESPONSE_ONLY = 0x10,
	SHCA_OP_ACKNOWLEDGE = 0x11,
	SHCA_OP_ATOMIC_ACKNOWLEDGE = 0x12,
	SHCA_OP_COMPARE_SWAP = 0x13,
	SHCA_OP_FETCH_ADD = 0x14,
	SHCA_OP_SEND_LAST_WITH_INVALIDATE = 0x16,
	SHCA_OP_SEND_ONLY_WITH_INVALIDATE = 0x17,
	SHCA_OP_FLUSH = 0x1c,
	SHCA_OP_ATOMIC_WRITE = 0x1d,
};

/* The opcode of operation @op on transport @tr: SHCA_OPCODE(RC, SEND_ONLY). */
#define SHCA_OPCODE(tr, op)	(SHCA_TRANSPORT_##tr | SHCA_OP_##op)

/* Where a packet sits in its message. */
enum shca_pos {
	SHCA_POS_FIRST,
	SHCA_POS_MIDDLE,
	SHCA_POS_LAST,
	SHCA_POS_ONLY,
};

/**
 * struct shca_opcode_info - what an opcode puts on the wire
 * @name: for debug messages, e.g. "RC SEND_ONLY"
 * @hdrs: the extension headers after the BTH (enum shca_hdr bits)
 * @hdr_len: bytes of the BTH and those headers
 * @payload: a payload (and pad) may follow the headers
 * @pos: the packet's place in its message; ONLY for single-packet
 *	operations (requests and acknowledgments alike)
 */
struct shca_opcode_info {
	const char *name;
	u8 hdrs;
	u8 hdr_len;
	bool payload;
	u8 pos;
};

const struct shca_opcode_info *shca_opcode_lookup(u8 opcode);

/*
 * Why shca_pkt_parse() refused a packet, or the receive path or loopback
 * dropped a message, one counter each; the names in shca_drop_names[]
 * are those counters' names.  The reasons before SHCA_DROP_REFUSED are
 * decided on receipt, before the packet is queued on its QP; the others
 * by the QP's engine, later.
 */
enum shca_drop {
	SHCA_DROP_NONE,		/* accepted */
	SHCA_DROP_TRUNCATED,	/* shorter than its headers and ICRC */
	SHCA_DROP_OPCODE,	/* not an RC, UC or UD opcode */
	SHCA_DROP_TVER,		/* transport header version not 0 */
	SHCA_DROP_PAD,		/* pad count impossible for the length */
	SHCA_DROP_LENGTH,	/* payload where none may be, or none needed */
	SHCA_DROP_ICRC,		/* invariant CRC mismatch */
	SHCA_DROP_DGID,		/* destination address not the device's */
	SHCA_DROP_QPN,		/* no such destination QP */
	SHCA_DROP_BUSY,		/* the QP's packets pin too much memory */
	SHCA_DROP_NOMEM,	/* no memory to take the packet in */
	SHCA_DROP_REFUSED,	/* the QP refused it (state, service, Q_Key) */
	SHCA_DROP_DUP_READ,	/* a duplicate READ the responder forgot */
	SHCA_DROP_DUP_ATOMIC,	/* a duplicate atomic it forgot */
	SHCA_DROP_LOOP_SRC,	/* loopback: not from the QP's peer */
	SHCA_DROP_LOOP_PSN,	/* loopback: not the PSN the QP expects */
	SHCA_DROP_STALE,	/* an answer for no PSN in flight: late, duplicate */
	SHCA_DROP_PURGED,	/* queued, then purged as the QP was reset */
	SHCA_DROP_MAX,
};

extern const char *const shca_drop_names[SHCA_DROP_MAX];

/* The invariant CRC that ends every packet (icrc.h). */
#define SHCA_ICRC_LEN		4

/**
 * struct shca_pkt - a transport packet, in CPU byte order
 * @opcode: BTH opcode
 * @se: solicited event
 * @migreq: migration request
 * @pad: pad count; shca_pkt_build() derives it from @paylen
 * @tver: transport header version: 0, the only one parsed
 * @pkey: partition key
 * @dqpn: destination QP number (24 bits)
 * @ackreq: acknowledge request
 * @psn: packet sequence number (24 bits)
 * @va: RETH or AtomicETH virtual address
 * @rkey: RETH or AtomicETH remote key
 * @dma_len: RETH DMA length
 * @syndrome: AETH syndrome
 * @msn: AETH message sequence number (24 bits)
 * @swap_add: AtomicETH swap (CMP_SWAP) or add (FETCH_ADD) data
 * @compare: AtomicETH compare data
 * @orig: AtomicAckETH original remote data
 * @imm: ImmDt, as the 32-bit number the wire carries
 * @inv_rkey: IETH remote key to invalidate
 * @plt: FETH placement type (SHCA_FLUSH_GLOBAL, _PERSISTENT)
 * @sel: FETH selectivity level (SHCA_FLUSH_RANGE, _MR)
 * @qkey: DETH queue key
 * @sqpn: DETH source QP number (24 bits)
 * @hdr_len: bytes of BTH and extension headers, the payload's offset
 * @paylen: payload bytes, without pad and ICRC
 * @drop: why shca_pkt_parse() refused the packet, or SHCA_DROP_NONE
 *
 * Fields of headers the opcode does not carry are zero after parsing and
 * ignored when building.
 */
struct shca_pkt {
	u8 opcode;
	bool se;
	bool migreq;
	u8 pad;
	u8 tver;
	u16 pkey;
	u32 dqpn;
	bool ackreq;
	u32 psn;
	u64 va;
	u32 rkey;
	u32 dma_len;
	u8 syndrome;
	u32 msn;
	u64 swap_add;
	u64 compare;
	u64 orig;
	u32 imm;
	u32 inv_rkey;
	u8 plt;
	u8 sel;
	u32 qkey;
	u32 sqpn;
	u16 hdr_len;
	u32 paylen;
	enum shca_drop drop;
};

unsigned int shca_pkt_hdr_len(u8 opcode);
int shca_pkt_parse(struct shca_pkt *pkt, const void *bth, unsigned int len);
void shca_pkt_build(const struct shca_pkt *pkt, void *bth);

/* PSNs are 24 bits: @a - @b, as a signed distance. */
static inline s32 shca_psn_diff(u32 a, u32 b)
{
	return (s32)((a - b) << 8) >> 8;
}

static inline u32 shca_psn_add(u32 psn, u32 n)
{
	return (psn + n) & SHCA_BTH_PSN;
}

#endif /* SHCA_WIRE_H */
