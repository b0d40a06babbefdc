/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * softhca's trace events, in the kernel's trace system (tracefs,
 * trace-cmd, perf): the "softhca" group.  Each one names the device it
 * happened on.  Off, an event costs a patched-out branch; a build with
 * NOTRACE=1 has none at all (make bench compares the two).
 *
 * Their arguments are the device and plain values, so that this header
 * depends on no softhca structure: it sits at the bottom of the layers.
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM softhca

#if !defined(SHCA_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define SHCA_TRACE_H

#include <linux/tracepoint.h>
#include <rdma/ib_cm.h>
#include <rdma/ib_verbs.h>
#include <rdma/rdma_cm.h>
/* rdma_show_wc_status(); its CM event tables need the two CM headers. */
#include <trace/misc/rdma.h>

/* Every event's first field: the device's name. */
#define SHCA_TRACE_DEV	__array(char, dev, IB_DEVICE_NAME_MAX)
#define shca_trace_dev_assign(ibdev) \
	strscpy(__entry->dev, dev_name(&(ibdev)->dev), IB_DEVICE_NAME_MAX)

/* Reasons (a counter's name) and causes, as short strings. */
#define SHCA_TRACE_WHY_MAX	24

/* The enums' values, for trace-cmd and perf, which read the formats. */
TRACE_DEFINE_ENUM(IB_QPS_RESET);
TRACE_DEFINE_ENUM(IB_QPS_INIT);
TRACE_DEFINE_ENUM(IB_QPS_RTR);
TRACE_DEFINE_ENUM(IB_QPS_RTS);
TRACE_DEFINE_ENUM(IB_QPS_SQD);
TRACE_DEFINE_ENUM(IB_QPS_SQE);
TRACE_DEFINE_ENUM(IB_QPS_ERR);
TRACE_DEFINE_ENUM(IB_WR_RDMA_WRITE);
TRACE_DEFINE_ENUM(IB_WR_RDMA_WRITE_WITH_IMM);
TRACE_DEFINE_ENUM(IB_WR_SEND);
TRACE_DEFINE_ENUM(IB_WR_SEND_WITH_IMM);
TRACE_DEFINE_ENUM(IB_WR_RDMA_READ);
TRACE_DEFINE_ENUM(IB_WR_ATOMIC_CMP_AND_SWP);
TRACE_DEFINE_ENUM(IB_WR_ATOMIC_FETCH_AND_ADD);
TRACE_DEFINE_ENUM(IB_WR_SEND_WITH_INV);
TRACE_DEFINE_ENUM(IB_WR_LOCAL_INV);
TRACE_DEFINE_ENUM(IB_WR_REG_MR);
TRACE_DEFINE_ENUM(IB_WC_SEND);
TRACE_DEFINE_ENUM(IB_WC_RDMA_WRITE);
TRACE_DEFINE_ENUM(IB_WC_RDMA_READ);
TRACE_DEFINE_ENUM(IB_WC_COMP_SWAP);
TRACE_DEFINE_ENUM(IB_WC_FETCH_ADD);
TRACE_DEFINE_ENUM(IB_WC_LOCAL_INV);
TRACE_DEFINE_ENUM(IB_WC_REG_MR);
TRACE_DEFINE_ENUM(IB_WC_RECV);
TRACE_DEFINE_ENUM(IB_WC_RECV_RDMA_WITH_IMM);

#define shca_show_qp_state(x)						\
	__print_symbolic(x, { IB_QPS_RESET, "RESET" },			\
			 { IB_QPS_INIT, "INIT" }, { IB_QPS_RTR, "RTR" },	\
			 { IB_QPS_RTS, "RTS" }, { IB_QPS_SQD, "SQD" },	\
			 { IB_QPS_SQE, "SQE" }, { IB_QPS_ERR, "ERR" })

#define shca_show_wr_opcode(x)						\
	__print_symbolic(x, { IB_WR_RDMA_WRITE, "RDMA_WRITE" },		\
			 { IB_WR_RDMA_WRITE_WITH_IMM, "RDMA_WRITE_WITH_IMM" }, \
			 { IB_WR_SEND, "SEND" },				\
			 { IB_WR_SEND_WITH_IMM, "SEND_WITH_IMM" },		\
			 { IB_WR_RDMA_READ, "RDMA_READ" },			\
			 { IB_WR_ATOMIC_CMP_AND_SWP, "ATOMIC_CMP_AND_SWP" },	\
			 { IB_WR_ATOMIC_FETCH_AND_ADD, "ATOMIC_FETCH_AND_ADD" }, \
			 { IB_WR_SEND_WITH_INV, "SEND_WITH_INV" },		\
			 { IB_WR_LOCAL_INV, "LOCAL_INV" },			\
			 { IB_WR_REG_MR, "REG_MR" })

#define shca_show_wc_opcode(x)						\
	__print_symbolic(x, { IB_WC_SEND, "SEND" },			\
			 { IB_WC_RDMA_WRITE, "RDMA_WRITE" },		\
			 { IB_WC_RDMA_READ, "RDMA_READ" },			\
			 { IB_WC_COMP_SWAP, "COMP_SWAP" },			\
			 { IB_WC_FETCH_ADD, "FETCH_ADD" },			\
			 { IB_WC_LOCAL_INV, "LOCAL_INV" },			\
			 { IB_WC_REG_MR, "REG_MR" }, { IB_WC_RECV, "RECV" },	\
			 { IB_WC_RECV_RDMA_WITH_IMM, "RECV_RDMA_WITH_IMM" })

/* A kernel consumer's send WR, as post_send wrote it to the ring. */
TRACE_EVENT(softhca_post_send,
	    TP_PROTO(const struct ib_device *ibdev, u32 qpn,
		     const struct ib_send_wr *wr),
	    TP_ARGS(ibdev, qpn, wr),
	    TP_STRUCT__entry(SHCA_TRACE_DEV
			     __field(u32, qpn)
			     __field(u64, wr_id)
			     __field(u32, opcode)
			     __field(int, num_sge)
			     __field(u32, send_flags)),
	    TP_fast_assign(shca_trace_dev_assign(ibdev);
			   __entry->qpn = qpn;
			   __entry->wr_id = wr->wr_id;
			   __entry->opcode = wr->opcode;
			   __entry->num_sge = wr->num_sge;
			   __entry->send_flags = wr->send_flags;),
	    TP_printk("%s qpn %u wr_id %#llx %s sges %d flags %#x",
		      __entry->dev, __entry->qpn, __entry->wr_id,
		      shca_show_wr_opcode(__entry->opcode), __entry->num_sge,
		      __entry->send_flags)
);

/* A kernel consumer's receive WR, posted to a QP or an SRQ (@srq). */
TRACE_EVENT(softhca_post_recv,
	    TP_PROTO(const struct ib_device *ibdev, u32 num, bool srq,
		     const struct ib_recv_wr *wr),
	    TP_ARGS(ibdev, num, srq, wr),
	    TP_STRUCT__entry(SHCA_TRACE_DEV
			     __field(u32, num)
			     __field(bool, srq)
			     __field(u64, wr_id)
			     __field(int, num_sge)),
	    TP_fast_assign(shca_trace_dev_assign(ibdev);
			   __entry->num = num;
			   __entry->srq = srq;
			   __entry->wr_id = wr->wr_id;
			   __entry->num_sge = wr->num_sge;),
	    TP_printk("%s %s %u wr_id %#llx sges %d", __entry->dev,
		      __entry->srq ? "srqn" : "qpn", __entry->num,
		      __entry->wr_id, __entry->num_sge)
);

/*
 * A user work queue's doorbell, a system call; @here: the send engine ran
 * in it (shca_engine_doorbell_user()) rather than in its worker.
 */
TRACE_EVENT(softhca_doorbell,
	    TP_PROTO(const struct ib_device *ibdev, u32 qpn, bool send,
		     bool here),
	    TP_ARGS(ibdev, qpn, send, here),
	    TP_STRUCT__entry(SHCA_TRACE_DEV
			     __field(u32, qpn)
			     __field(bool, send)
			     __field(bool, here)),
	    TP_fast_assign(shca_trace_dev_assign(ibdev);
			   __entry->qpn = qpn;
			   __entry->send = send;
			   __entry->here = here;),
	    TP_printk("%s qpn %u %s%s", __entry->dev, __entry->qpn,
		      __entry->send ? "send" : "recv",
		      __entry->here ? " run here" : "")
);

/*
 * The kernel is about to stop looking at a work queue and asks its
 * producer to ring for what it posts next (the doorbell protocol of
 * softhca-abi.h), even when its last look then finds more and it goes
 * on: a process posting from one thread rings no more often than this.
 */
TRACE_EVENT(softhca_doorbell_wanted,
	    TP_PROTO(const struct ib_device *ibdev, u32 qpn, bool send),
	    TP_ARGS(ibdev, qpn, send),
	    TP_STRUCT__entry(SHCA_TRACE_DEV
			     __field(u32, qpn)
			     __field(bool, send)),
	    TP_fast_assign(shca_trace_dev_assign(ibdev);
			   __entry->qpn = qpn;
			   __entry->send = send;),
	    TP_printk("%s qpn %u %s", __entry->dev, __entry->qpn,
		      __entry->send ? "send" : "recv")
);

/*
 * A run of a process's doorbell worker (uctx.c): the WQEs it took;
 * @polls: it polls, its timer runs it again, rather than stop.
 */
TRACE_EVENT(softhca_uctx_run,
	    TP_PROTO(const struct ib_device *ibdev, u32 taken, bool polls),
	    TP_ARGS(ibdev, taken, polls),
	    TP_STRUCT__entry(SHCA_TRACE_DEV
			     __field(u32, taken)
			     __field(bool, polls)),
	    TP_fast_assign(shca_trace_dev_assign(ibdev);
			   __entry->taken = taken;
			   __entry->polls = polls;),
	    TP_printk("%s took %u%s", __entry->dev, __entry->taken,
		      __entry->polls ? " polls" : "")
);

/* A completion added to a CQ; @lost when the CQ had no room. */
TRACE_EVENT(softhca_cqe,
	    TP_PROTO(const struct ib_device *ibdev, u32 cqn, u32 qpn, u64 wr_id,
		     u8 status, u8 opcode, u32 byte_len, bool lost),
	    TP_ARGS(ibdev, cqn, qpn, wr_id, status, opcode, byte_len, lost),
	    TP_STRUCT__entry(SHCA_TRACE_DEV
			     __field(u32, cqn)
			     __field(u32, qpn)
			     __field(u64, wr_id)
			     __field(u32, byte_len)
			     __field(u8, status)
			     __field(u8, opcode)
			     __field(bool, lost)),
	    TP_fast_assign(shca_trace_dev_assign(ibdev);
			   __entry->cqn = cqn;
			   __entry->qpn = qpn;
			   __entry->wr_id = wr_id;
			   __entry->byte_len = byte_len;
			   __entry->status = status;
			   __entry->opcode = opcode;
			   __entry->lost = lost;),
	    TP_printk("%s cqn %u qpn %u wr_id %#llx %s %s len %u%s",
		      __entry->dev, __entry->cqn, __entry->qpn, __entry->wr_id,
		      shca_show_wc_opcode(__entry->opcode),
		      rdma_show_wc_status(__entry->status), __entry->byte_len,
		      __entry->lost ? " LOST (CQ overflow)" : "")
);

/* A QP moved from one state to another, by modify_qp or the data path. */
TRACE_EVENT(softhca_qp_state,
	    TP_PROTO(const struct ib_device *ibdev, u32 qpn,
		     enum ib_qp_state from, enum ib_qp_state to),
	    TP_ARGS(ibdev, qpn, from, to),
	    TP_STRUCT__entry(SHCA_TRACE_DEV
			     __field(u32, qpn)
			     __field(u32, from)
			     __field(u32, to)),
	    TP_fast_assign(shca_trace_dev_assign(ibdev);
			   __entry->qpn = qpn;
			   __entry->from = from;
			   __entry->to = to;),
	    TP_printk("%s qpn %u %s -> %s", __entry->dev, __entry->qpn,
		      shca_show_qp_state(__entry->from),
		      shca_show_qp_state(__entry->to))
);

/*
 * RoCEv2 packets: their BTH's opcode, destination QPN and PSN, and @len,
 * their bytes from the BTH to the ICRC.
 */
DECLARE_EVENT_CLASS(softhca_packet,
		    TP_PROTO(const struct ib_device *ibdev, u8 opcode, u32 qpn, u32 psn,
			     u32 len),
		    TP_ARGS(ibdev, opcode, qpn, psn, len),
		    TP_STRUCT__entry(SHCA_TRACE_DEV
				     __field(u32, qpn)
				     __field(u32, psn)
				     __field(u32, len)
				     __field(u8, opcode)),
		    TP_fast_assign(shca_trace_dev_assign(ibdev);
				   __entry->qpn = qpn;
				   __entry->psn = psn;
				   __entry->len = len;
				   __entry->opcode = opcode;),
		    TP_printk("%s opcode %#04x dest qpn %u psn %u len %u", __entry->dev,
			      __entry->opcode, __entry->qpn, __entry->psn, __entry->len)
);

/* A RoCEv2 packet handed to the IP stack. */
DEFINE_EVENT(softhca_packet, softhca_xmit,
	     TP_PROTO(const struct ib_device *ibdev, u8 opcode, u32 qpn, u32 psn,
		      u32 len),
	     TP_ARGS(ibdev, opcode, qpn, psn, len)
);

/* A RoCEv2 packet that passed the checks of its headers and ICRC. */
DEFINE_EVENT(softhca_packet, softhca_recv,
	     TP_PROTO(const struct ib_device *ibdev, u8 opcode, u32 qpn, u32 psn,
		      u32 len),
	     TP_ARGS(ibdev, opcode, qpn, psn, len)
);

/* A packet dropped; @why is the rdma statistic counter that counts it. */
TRACE_EVENT(softhca_drop,
	    TP_PROTO(const struct ib_device *ibdev, const char *why),
	    TP_ARGS(ibdev, why),
	    TP_STRUCT__entry(SHCA_TRACE_DEV
			     __array(char, why, SHCA_TRACE_WHY_MAX)),
	    TP_fast_assign(shca_trace_dev_assign(ibdev);
			   strscpy(__entry->why, why, SHCA_TRACE_WHY_MAX);),
	    TP_printk("%s %s", __entry->dev, __entry->why)
);

/* A NAK an RC requester received: an RNR NAK, or a NAK's syndrome. */
TRACE_EVENT(softhca_nak,
	    TP_PROTO(const struct ib_device *ibdev, u32 qpn, u32 psn, u8 syndrome),
	    TP_ARGS(ibdev, qpn, psn, syndrome),
	    TP_STRUCT__entry(SHCA_TRACE_DEV
			     __field(u32, qpn)
			     __field(u32, psn)
			     __field(u8, syndrome)),
	    TP_fast_assign(shca_trace_dev_assign(ibdev);
			   __entry->qpn = qpn;
			   __entry->psn = psn;
			   __entry->syndrome = syndrome;),
	    TP_printk("%s qpn %u psn %u syndrome %#04x", __entry->dev,
		      __entry->qpn, __entry->psn, __entry->syndrome)
);

/*
 * An RC requester goes back to resend from its oldest unacknowledged
 * PSN, @from (@to is the next PSN it had to send): @why is the counter
 * of the packets it resends.  The congestion window and the retries left
 * are those after the go-back.
 */
TRACE_EVENT(softhca_retransmit,
	    TP_PROTO(const struct ib_device *ibdev, u32 qpn, u32 from, u32 to,
		     const char *why, u32 cwnd, u32 ssthresh, u8 retry_left),
	    TP_ARGS(ibdev, qpn, from, to, why, cwnd, ssthresh, retry_left),
	    TP_STRUCT__entry(SHCA_TRACE_DEV
			     __field(u32, qpn)
			     __field(u32, from)
			     __field(u32, to)
			     __array(char, why, SHCA_TRACE_WHY_MAX)
			     __field(u32, cwnd)
			     __field(u32, ssthresh)
			     __field(u8, retry_left)),
	    TP_fast_assign(shca_trace_dev_assign(ibdev);
			   __entry->qpn = qpn;
			   __entry->from = from;
			   __entry->to = to;
			   strscpy(__entry->why, why, SHCA_TRACE_WHY_MAX);
			   __entry->cwnd = cwnd;
			   __entry->ssthresh = ssthresh;
			   __entry->retry_left = retry_left;),
	    TP_printk("%s qpn %u psn %u..%u %s cwnd %u ssthresh %u retries left %u",
		      __entry->dev, __entry->qpn, __entry->from, __entry->to,
		      __entry->why, __entry->cwnd, __entry->ssthresh,
		      __entry->retry_left)
);

/* A control verb's command ran: how long it waited, how long it ran. */
TRACE_EVENT(softhca_cmd,
	    TP_PROTO(const struct ib_device *ibdev, const void *fn, u64 wait_ns,
		     u64 run_ns, int status),
	    TP_ARGS(ibdev, fn, wait_ns, run_ns, status),
	    TP_STRUCT__entry(SHCA_TRACE_DEV
			     __field(const void *, fn)
			     __field(u64, wait_ns)
			     __field(u64, run_ns)
			     __field(int, status)),
	    TP_fast_assign(shca_trace_dev_assign(ibdev);
			   __entry->fn = fn;
			   __entry->wait_ns = wait_ns;
			   __entry->run_ns = run_ns;
			   __entry->status = status;),
	    TP_printk("%s %ps waited %llu ns ran %llu ns status %d",
		      __entry->dev, __entry->fn, __entry->wait_ns,
		      __entry->run_ns, __entry->status)
);

#endif /* SHCA_TRACE_H */

#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE trace
#include <trace/define_trace.h>
