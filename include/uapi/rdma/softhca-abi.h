/* SPDX-License-Identifier: ((GPL-2.0 WITH Linux-syscall-note) OR BSD-2-Clause) */
/*
 * softhca kernel <-> user-space ABI, shared verbatim by the kernel module
 * and the rdma-core provider.
 *
 * Rules for this file: every structure is a multiple of 8 bytes, 64-bit
 * fields are __aligned_u64, padding is explicit and named reserved*, and
 * the kernel rejects non-zero reserved fields and unknown flags.  A change
 * that is not backward compatible bumps SOFTHCA_UVERBS_ABI_VERSION.
 */
#ifndef SOFTHCA_ABI_USER_H
#define SOFTHCA_ABI_USER_H

#include <linux/types.h>

/* Reported as ib_device_ops.uverbs_abi_ver; the provider matches on it. */
#define SOFTHCA_UVERBS_ABI_VERSION 1

/*
 * ib_device_ops.driver_id, carried in every uverbs ioctl header.  ASCII
 * "SHCA": far above every value of enum rdma_driver_id (0..22 as of 6.12),
 * so it cannot collide with an in-tree driver, now or for years.
 */
#define SOFTHCA_DRIVER_ID 0x53484341u

/* Name of the rdma_link_ops type: rdma link add X type softhca netdev Y */
#define SOFTHCA_LINK_TYPE "softhca"

/* softhca_alloc_ucontext_resp.caps */
enum {
	/* db_offset and db_length map a struct softhca_ctx_doorbell */
	SOFTHCA_UCTX_CAP_DOORBELL = 1 << 0,
};

/*
 * Response to ibv_get_context (alloc_ucontext).  A kernel before
 * SOFTHCA_UCTX_CAP_DOORBELL wrote only the first 16 bytes.
 */
struct softhca_alloc_ucontext_resp {
	__u32 abi_version;	/* SOFTHCA_UVERBS_ABI_VERSION */
	__u32 reserved;
	/* SOFTHCA_UCTX_CAP_*: optional features */
	__aligned_u64 caps;
	__aligned_u64 db_offset;	/* an mmap offset on the uverbs file */
	__u32 db_length;	/* bytes */
	__u32 db_slots;		/* bits in softhca_ctx_doorbell.pending */
};

/*
 * Queues (send and receive queues, SRQs, CQs) are rings of fixed-size
 * entries that kernel and provider share through mmap.  A mapping starts
 * with struct softhca_queue_ctrl; the entries follow at
 * SOFTHCA_QUEUE_ENTRIES_OFFSET.  Indices run freely over the u32 range; an
 * entry's slot is its index modulo the (power of two) number of entries.
 * The producer writes an entry, then releases the new producer index; the
 * consumer acquires the producer index, reads, then releases its own.
 *
 * Doorbells (work queues).  The kernel sets doorbell when it is about to
 * stop looking at the ring (the send engine going idle; a QP in error
 * having flushed), then looks at the producer index once more.  The
 * provider, after releasing its producer index, issues a full barrier and
 * reads doorbell: only when it is set does it ring, with an empty WR list
 * through ib_uverbs' post_send (or post_recv).  One of the two always sees
 * the other's write, so no WQE is left behind and a busy queue is posted
 * to with no system call.
 *
 * Where a send doorbell runs.  Before it rings a send queue, the provider
 * sets poster_waits when its thread polled completions since it last
 * posted (it waits on its peer, WR by WR), and clears it otherwise (it
 * streams).  The kernel takes it as a hint: it runs a waiting poster's
 * WQEs inside the doorbell system call, and a streaming poster's beside
 * it, in a worker that takes what is posted meanwhile.
 *
 * The process's doorbell (SOFTHCA_UCTX_CAP_DOORBELL).  A context maps one
 * struct softhca_ctx_doorbell, and each of its QPs has a slot in it
 * (softhca_create_qp_resp.db_slot), unless there are too many.  When a
 * send queue's doorbell is set, the provider sets its QP's bit in pending
 * (an atomic OR), issues a full barrier and reads the context's doorbell:
 * only when that is set too does it ring the QP, as above.  The kernel has
 * one worker per context: it takes the bits (an atomic exchange per
 * word), runs those QPs' send queues, and sets the context's doorbell
 * when it is about to stop, then looks at pending once more.  So a
 * process that posts to many QPs in turn rings once while the worker runs,
 * not once per QP.  A worker that polls a process that streams (it runs
 * again after a short timer, taking what was posted meanwhile) has not
 * stopped.  A bit set for a QP with nothing to do costs a look at its
 * ring.
 *
 * Arming (CQs).  The provider arms by writing a SOFTHCA_CQ_ARM_* value to
 * arm (solicited-only arming never overrides a pending NEXT arm), then
 * issues a full barrier before it polls again.  The kernel, after
 * releasing a CQE, issues a full barrier, reads arm, and when the CQE
 * matches it swaps arm back to 0 and signals the CQ's completion channel
 * once.  Other values of arm are ignored.
 */
struct softhca_queue_ctrl {
	__u32 producer;
	__u32 reserved0[15];	/* producer and consumer on their own lines */
	__u32 consumer;
	__u32 doorbell;		/* work queues: set by the kernel */
	__u32 arm;		/* CQs: set by the provider, cleared by the kernel */
	__u32 poster_waits;	/* send queues: set by the provider */
	__u32 reserved1[12];
};

/* softhca_queue_ctrl.arm */
enum {
	SOFTHCA_CQ_ARM_NEXT = 1,
	SOFTHCA_CQ_ARM_SOLICITED = 2,
};

#define SOFTHCA_QUEUE_ENTRIES_OFFSET 128

/* The process's doorbell: see above. */
struct softhca_ctx_doorbell {
	__u32 doorbell;		/* set by the kernel */
	__u32 reserved[15];
	/* bit (slot % 32) of word (slot / 32): set by the provider */
	__u32 pending[];
};

/* softhca_create_qp_resp.db_slot of a QP without one */
#define SOFTHCA_NO_SLOT 0xffffffffu

/* Where a queue is mapped: an mmap offset on the uverbs file, and length. */
struct softhca_queue_map {
	__aligned_u64 offset;
	__aligned_u64 length;
	__u32 num_entries;
	__u32 entry_size;
};

/* Scatter/gather element of a work request. */
struct softhca_sge {
	__aligned_u64 addr;
	__u32 length;
	__u32 lkey;
};

/* softhca_send_wqe.flags */
enum {
	SOFTHCA_WQE_SIGNALED = 1 << 0,
	SOFTHCA_WQE_SOLICITED = 1 << 1,
	SOFTHCA_WQE_FENCE = 1 << 2,
	SOFTHCA_WQE_INLINE = 1 << 3,
};

/*
 * Send queue entry.  opcode is an enum ib_uverbs_wr_opcode value.  It is
 * followed by num_sge struct softhca_sge, or by inline data (length in
 * inline_len) when SOFTHCA_WQE_INLINE is set.
 */
struct softhca_send_wqe {
	__aligned_u64 wr_id;
	__u8 opcode;
	__u8 flags;
	__u8 num_sge;
	__u8 reserved0;
	__u32 ex;		/* immediate data (big endian) or rkey to invalidate */
	__u32 inline_len;
	__u32 reserved1;
	union {
		struct {
			__aligned_u64 remote_addr;
			__u32 rkey;
			__u32 reserved;
		} rdma;
		struct {
			__aligned_u64 remote_addr;
			__aligned_u64 compare_add;
			__aligned_u64 swap;
			__u32 rkey;
			__u32 reserved;
		} atomic;
		struct {
			/*
			 * IB_UVERBS_WR_ATOMIC_WRITE (RC), with no SGE and
			 * no inline data: data, 8 bytes as they lie in
			 * memory, stored whole at remote_addr (8-byte
			 * aligned).
			 */
			__aligned_u64 remote_addr;
			__u32 rkey;
			__u32 reserved;
			__u8 data[8];
		} atomic_write;
		struct {
			/*
			 * IB_UVERBS_WR_FLUSH (RC), with no SGE and no
			 * inline data: what earlier requests placed in
			 * length bytes at remote_addr (level
			 * IB_UVERBS_FLUSH_RANGE), or in the whole MR of
			 * rkey (IB_UVERBS_FLUSH_MR), made visible as type
			 * says (IB_UVERBS_FLUSH_GLOBAL, _PERSISTENT).
			 */
			__aligned_u64 remote_addr;
			__u32 rkey;
			__u32 length;
			__u8 type;
			__u8 level;
			__u8 reserved[6];
		} flush;
		struct {
			__u32 ah;	/* AH number from create_ah */
			__u32 remote_qpn;
			__u32 remote_qkey;
			__u32 reserved;
		} ud;
		struct {
			/* kernel only: the MR's new key names the MR too */
			__u32 key;
			__u32 access;
		} reg;
		struct {
			/* IB_UVERBS_WR_BIND_MW: the window's new rkey names it */
			__aligned_u64 addr;	/* its first byte, in the MR */
			__aligned_u64 length;	/* 0: unbind (type 1) */
			__u32 mw_key;
			__u32 mr_lkey;
			__u32 access;	/* ib_uverbs_access_flags, REMOTE_* */
			__u32 reserved;
		} bind;
	};
	__aligned_u64 reserved2;	/* the header is one 64-byte line */
};

/* Receive queue and SRQ entry, followed by num_sge struct softhca_sge. */
struct softhca_recv_wqe {
	__aligned_u64 wr_id;
	__u32 num_sge;
	__u32 reserved;
};

/* softhca_cqe.flags */
enum {
	SOFTHCA_CQE_GRH = 1 << 0,
	SOFTHCA_CQE_IMM = 1 << 1,
	SOFTHCA_CQE_INV = 1 << 2,
};

/*
 * Completion queue entry.  status is an enum ib_uverbs_wc_status value
 * (the same numbers as ibv_wc_status), opcode an ib_uverbs_wc_opcode.
 */
struct softhca_cqe {
	__aligned_u64 wr_id;
	__u8 status;
	__u8 opcode;
	__u8 flags;
	__u8 network_hdr_type;	/* RDMA_NETWORK_IPV4/IPV6, with GRH */
	__u32 byte_len;
	__u32 ex;		/* immediate data (big endian) or invalidated rkey */
	__u32 qp_num;
	__u32 src_qp;
	__u8 smac[6];
	__u16 vendor_err;
	__u16 pkey_index;
	__u16 reserved0;
	__aligned_u64 reserved1[3];
};

/*
 * create_cq and resize_cq: no request; the response maps the CQ's ring
 * (after resize_cq, the new one).
 */
struct softhca_create_cq_resp {
	struct softhca_queue_map cq;
};

/*
 * create_qp: no request; the response maps both work queues.  A kernel
 * before SOFTHCA_UCTX_CAP_DOORBELL wrote only sq and rq.
 */
struct softhca_create_qp_resp {
	struct softhca_queue_map sq;
	struct softhca_queue_map rq;	/* length 0 when the QP uses an SRQ */
	__u32 db_slot;		/* in the process's doorbell, or SOFTHCA_NO_SLOT */
	__u32 reserved;
};

/*
 * create_ah: no request; the response gives the AH's number, which UD
 * send WQEs name it by (softhca_send_wqe.ud.ah).
 */
struct softhca_create_ah_resp {
	__u32 ah_num;
	__u32 reserved;
};

/* create_srq: no request; the response maps the SRQ ring. */
struct softhca_create_srq_resp {
	struct softhca_queue_map srq;
};

#endif /* SOFTHCA_ABI_USER_H */
