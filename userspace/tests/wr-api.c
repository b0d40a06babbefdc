// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * wr-api DEVICE GID_INDEX: the extended verbs, on QPs connected to
 * themselves: ibv_create_qp_ex with the ibv_wr_* post API and
 * ibv_create_cq_ex with ibv_start_poll and the ibv_wc_read_* accessors,
 * beyond what rdma-core's python suite covers:
 * - a batch of several opcodes (gather list, READ, both atomics) posted by
 *   one ibv_wr_complete, completed in order, its data compared;
 * - inline data lists, immediate data, a UD send with ibv_wr_set_ud_addr;
 * - a batch with one bad call (too many SGEs, an opcode the QP was not
 *   created for, more WRs than the ring holds) posts nothing, and says why;
 *   ibv_wr_abort posts nothing; the QP goes on working after each;
 * - ibv_post_send and ibv_wr_* mixed on one QP, ibv_poll_cq and
 *   ibv_start_poll on one CQ;
 * - what softhca does not offer is refused with EOPNOTSUPP;
 * and memory windows, bound by ibv_bind_mw (type 1) and ibv_wr_bind_mw
 * (type 2), checked as strictly as an MR: remote access through a window
 * reaches its bytes of the MR and nothing else, with its access only, on
 * its QP only (type 2); unbinding, invalidation (local and remote) and
 * deallocation close it; an MR with a window bound stays registered;
 * and ATOMIC WRITE, through ibv_wr_atomic_write and ibv_post_send: its 8
 * bytes land, and nothing else; its target checked as a WRITE's, 8-byte
 * aligned.
 * TAP output; exit 0 when every check passed.
 */
#include <endian.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

#include "tap.h"

#define DEPTH		16
#define BUF		65536
#define GRH		40
#define QKEY		0x11111111
#define OPS_RC		(IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM | \
			 IBV_QP_EX_WITH_RDMA_WRITE |			      \
			 IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM |		      \
			 IBV_QP_EX_WITH_RDMA_READ |			      \
			 IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP |		      \
			 IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD)

struct env {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq_ex *cq;
	struct ibv_mr *mr;
	unsigned char *buf;	/* send half, then receive half */
	union ibv_gid gid;
	int gid_index;
};

/* The next completion, through ibv_start_poll: 0, or -1 after 5 s. */
struct done {
	uint64_t wr_id;
	int status;
	int opcode;
	uint32_t byte_len;
	uint32_t qp_num;
	uint32_t src_qp;
	unsigned int wc_flags;
	uint32_t imm;
};

static void read_cqe(struct ibv_cq_ex *cq, struct done *d)
{
	*d = (struct done){
		.wr_id = cq->wr_id,
		.status = cq->status,
		.opcode = ibv_wc_read_opcode(cq),
		.byte_len = ibv_wc_read_byte_len(cq),
		.qp_num = ibv_wc_read_qp_num(cq),
		.src_qp = ibv_wc_read_src_qp(cq),
		.wc_flags = ibv_wc_read_wc_flags(cq),
	};
	if (d->wc_flags & IBV_WC_WITH_IMM)
		d->imm = be32toh(ibv_wc_read_imm_data(cq));
}

/* Takes @n completions in one ibv_start_poll .. ibv_end_poll. */
static int poll_n(struct ibv_cq_ex *cq, struct done *d, int n)
{
	struct ibv_poll_cq_attr attr = {};
	time_t end = time(NULL) + 5;
	int i = 0;

	while (ibv_start_poll(cq, &attr) == ENOENT)
		if (time(NULL) > end)
			return -1;
	read_cqe(cq, &d[i++]);
	while (i < n) {
		if (ibv_next_poll(cq) == ENOENT) {
			if (time(NULL) > end)
				break;
			continue;
		}
		read_cqe(cq, &d[i++]);
	}
	ibv_end_poll(cq);
	return i == n ? 0 : -1;
}

/* No completion arrives within 200 ms. */
static int cq_quiet(struct ibv_cq_ex *cq)
{
	struct ibv_poll_cq_attr attr = {};
	struct timespec pause = { .tv_nsec = 200000000 };

	nanosleep(&pause, NULL);
	if (ibv_start_poll(cq, &attr) == ENOENT)
		return 1;
	ibv_end_poll(cq);
	return 0;
}

static struct ibv_qp *qp_ex(struct env *e, enum ibv_qp_type type,
			    uint64_t ops, uint32_t depth)
{
	struct ibv_qp_init_attr_ex a = {
		.qp_type = type,
		.send_cq = ibv_cq_ex_to_cq(e->cq),
		.recv_cq = ibv_cq_ex_to_cq(e->cq),
		.cap = { .max_send_wr = depth, .max_recv_wr = depth,
			 .max_send_sge = 4, .max_recv_sge = 1,
			 .max_inline_data = 64 },
		.comp_mask = IBV_QP_INIT_ATTR_PD |
			     IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
		.pd = e->pd,
		.send_ops_flags = ops,
	};

	return ibv_create_qp_ex(e->ctx, &a);
}

/* RC: connected to itself; UD: ready to send. */
static int qp_up(struct env *e, struct ibv_qp *qp)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT, .port_num = 1, .qkey = QKEY,
		.qp_access_flags = IBV_ACCESS_REMOTE_WRITE |
				   IBV_ACCESS_REMOTE_READ |
				   IBV_ACCESS_REMOTE_ATOMIC,
	};
	int ud = qp->qp_type == IBV_QPT_UD;

	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			  IBV_QP_PORT | (ud ? IBV_QP_QKEY :
					 IBV_QP_ACCESS_FLAGS)))
		return -1;
	a = (struct ibv_qp_attr){
		.qp_state = IBV_QPS_RTR, .path_mtu = IBV_MTU_1024,
		.dest_qp_num = qp->qp_num, .max_dest_rd_atomic = 4,
		.min_rnr_timer = 1,
		.ah_attr = { .is_global = 1, .port_num = 1,
			     .grh = { .dgid = e->gid,
				      .sgid_index = e->gid_index,
				      .hop_limit = 64 } },
	};
	if (ibv_modify_qp(qp, &a, ud ? IBV_QP_STATE :
			  IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
			  IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
			  IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER))
		return -1;
	a = (struct ibv_qp_attr){
		.qp_state = IBV_QPS_RTS, .timeout = 14, .retry_cnt = 7,
		.rnr_retry = 7, .max_rd_atomic = 4,
	};
	return ibv_modify_qp(qp, &a, ud ? IBV_QP_STATE | IBV_QP_SQ_PSN :
			     IBV_QP_STATE | IBV_QP_TIMEOUT |
			     IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
			     IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC);
}

static int post_recv(struct env *e, struct ibv_qp *qp, uint64_t wr_id,
		     uint32_t offset, uint32_t len)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)e->buf + offset,
		.length = len,
		.lkey = e->mr->lkey,
	};
	struct ibv_recv_wr wr = { .wr_id = wr_id, .sg_list = &sge,
				  .num_sge = 1 }, *bad;

	return ibv_post_recv(qp, &wr, &bad);
}

static uint64_t addr_of(struct env *e, uint32_t offset)
{
	return (uintptr_t)e->buf + offset;
}

static void fill(unsigned char *p, size_t len, unsigned int seed)
{
	size_t i;

	for (i = 0; i < len; i++)
		p[i] = (unsigned char)(seed + i * 7);
}

/*
 * One batch: a 3-SGE gathered RDMA WRITE, an RDMA READ of it back, a
 * FETCH_ADD and a CMP_SWP; four completions in order, data compared.
 */
static void batch_of_ops(struct env *e, struct ibv_qp *qp)
{
	struct ibv_qp_ex *x = ibv_qp_to_qp_ex(qp);
	uint64_t *word = (uint64_t *)(e->buf + 60000);
	struct ibv_sge sg[3];
	struct done d[4];
	int i, ok;

	fill(e->buf, 3000, 1);
	memset(e->buf + 10000, 0, 6000);
	*word = 40;
	for (i = 0; i < 3; i++)
		sg[i] = (struct ibv_sge){ .addr = addr_of(e, i * 1000),
					  .length = 1000,
					  .lkey = e->mr->lkey };
	ibv_wr_start(x);
	x->wr_id = 1;
	x->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_rdma_write(x, e->mr->rkey, addr_of(e, 10000));
	ibv_wr_set_sge_list(x, 3, sg);
	x->wr_id = 2;
	x->wr_flags = IBV_SEND_SIGNALED | IBV_SEND_FENCE;
	ibv_wr_rdma_read(x, e->mr->rkey, addr_of(e, 10000));
	ibv_wr_set_sge(x, e->mr->lkey, addr_of(e, 13000), 3000);
	x->wr_id = 3;
	x->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_atomic_fetch_add(x, e->mr->rkey, addr_of(e, 60000), 2);
	ibv_wr_set_sge(x, e->mr->lkey, addr_of(e, 60008), 8);
	x->wr_id = 4;
	ibv_wr_atomic_cmp_swp(x, e->mr->rkey, addr_of(e, 60000), 42, 7);
	ibv_wr_set_sge(x, e->mr->lkey, addr_of(e, 60016), 8);
	tap(ibv_wr_complete(x) == 0, "batch: one ibv_wr_complete posts 4",
	    NULL);
	ok = !poll_n(e->cq, d, 4);
	tap(ok, "batch: 4 completions", NULL);
	if (!ok)
		return;
	tap(d[0].wr_id == 1 && d[0].opcode == IBV_WC_RDMA_WRITE &&
	    d[1].wr_id == 2 && d[1].opcode == IBV_WC_RDMA_READ &&
	    d[2].wr_id == 3 && d[2].opcode == IBV_WC_FETCH_ADD &&
	    d[3].wr_id == 4 && d[3].opcode == IBV_WC_COMP_SWAP &&
	    !d[0].status && !d[1].status && !d[2].status && !d[3].status,
	    "batch: in order, wr_id and opcode each, all successful", NULL);
	tap(d[1].byte_len == 3000 && d[0].qp_num == qp->qp_num,
	    "batch: READ's byte_len, the QP number", NULL);
	tap(!memcmp(e->buf + 10000, e->buf, 3000) &&
	    !memcmp(e->buf + 13000, e->buf, 3000),
	    "batch: gathered WRITE and READ back, data compared", NULL);
	tap(word[1] == 40 && word[2] == 42 && word[0] == 7,
	    "batch: FETCH_ADD then CMP_SWP: 40, 42, then 7", NULL);
}

/* SEND of a 2-buffer inline list, SEND_WITH_IMM, RDMA WRITE_WITH_IMM. */
static void sends(struct env *e, struct ibv_qp *qp)
{
	struct ibv_qp_ex *x = ibv_qp_to_qp_ex(qp);
	struct ibv_data_buf bufs[2] = {
		{ .addr = e->buf, .length = 20 },
		{ .addr = e->buf + 100, .length = 30 },
	};
	unsigned char want[50];
	struct done d[6];
	int ok, i;

	fill(e->buf, 200, 3);
	memcpy(want, e->buf, 20);
	memcpy(want + 20, e->buf + 100, 30);
	for (i = 0; i < 3; i++)
		post_recv(e, qp, 100 + i, 32768 + i * 1024, 1024);
	ibv_wr_start(x);
	x->wr_id = 10;
	x->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_send(x);
	ibv_wr_set_inline_data_list(x, 2, bufs);
	x->wr_id = 11;
	ibv_wr_send_imm(x, htobe32(0xabcd0123));
	ibv_wr_set_sge(x, e->mr->lkey, addr_of(e, 0), 8);
	x->wr_id = 12;
	ibv_wr_rdma_write_imm(x, e->mr->rkey, addr_of(e, 20000),
			      htobe32(0x5a5a));
	ibv_wr_set_inline_data(x, e->buf, 16);
	/* The inline buffers may be reused once the call returns. */
	memset(e->buf, 0xee, 20);
	tap(ibv_wr_complete(x) == 0, "sends: posted", NULL);
	ok = !poll_n(e->cq, d, 6);
	tap(ok, "sends: 3 send and 3 receive completions", NULL);
	if (!ok)
		return;
	ok = 1;
	for (i = 0; i < 6; i++) {
		if (d[i].status)
			ok = 0;
		if (d[i].wr_id == 100)
			ok &= d[i].opcode == IBV_WC_RECV &&
			      d[i].byte_len == 50 &&
			      !(d[i].wc_flags & IBV_WC_WITH_IMM);
		if (d[i].wr_id == 101)
			ok &= d[i].opcode == IBV_WC_RECV &&
			      d[i].byte_len == 8 &&
			      d[i].wc_flags & IBV_WC_WITH_IMM &&
			      d[i].imm == 0xabcd0123;
		if (d[i].wr_id == 102)
			ok &= d[i].opcode == IBV_WC_RECV_RDMA_WITH_IMM &&
			      d[i].wc_flags & IBV_WC_WITH_IMM &&
			      d[i].imm == 0x5a5a;
	}
	tap(ok, "sends: opcodes, lengths, immediate data read back", NULL);
	tap(!memcmp(e->buf + 32768, want, 50),
	    "sends: inline list received whole, copied at post time", NULL);
}

/* A bad call makes the batch post nothing; the QP goes on working. */
static void bad_batches(struct env *e, struct ibv_qp *qp)
{
	struct ibv_qp_ex *x = ibv_qp_to_qp_ex(qp);
	struct ibv_sge sg[5];
	struct done d;
	int i, ret;

	for (i = 0; i < 5; i++)
		sg[i] = (struct ibv_sge){ .addr = addr_of(e, 0), .length = 8,
					  .lkey = e->mr->lkey };
	ibv_wr_start(x);
	x->wr_id = 20;
	x->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_rdma_write(x, e->mr->rkey, addr_of(e, 20000));
	ibv_wr_set_sge(x, e->mr->lkey, addr_of(e, 0), 8);
	ibv_wr_rdma_write(x, e->mr->rkey, addr_of(e, 20000));
	ibv_wr_set_sge_list(x, 5, sg);
	ret = ibv_wr_complete(x);
	tap(ret == EINVAL, "bad batch: 5 SGEs on a 4-SGE QP: EINVAL", NULL);

	ibv_wr_start(x);
	ibv_wr_send_inv(x, 0x1234);
	ret = ibv_wr_complete(x);
	tap(ret == EINVAL, "bad batch: an opcode not in send_ops_flags: EINVAL",
	    NULL);

	ibv_wr_start(x);
	x->wr_flags = 0;
	for (i = 0; i < 100000; i++) {
		ibv_wr_rdma_write(x, e->mr->rkey, addr_of(e, 20000));
		ibv_wr_set_sge(x, e->mr->lkey, addr_of(e, 0), 8);
	}
	ret = ibv_wr_complete(x);
	tap(ret == ENOMEM, "bad batch: more WRs than the ring holds: ENOMEM",
	    NULL);

	ibv_wr_start(x);
	x->wr_id = 21;
	x->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_rdma_write(x, e->mr->rkey, addr_of(e, 20000));
	ibv_wr_set_sge(x, e->mr->lkey, addr_of(e, 0), 8);
	ibv_wr_abort(x);
	tap(cq_quiet(e->cq), "bad batches and an abort: nothing completes",
	    NULL);

	ibv_wr_start(x);
	x->wr_id = 22;
	x->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_rdma_write(x, e->mr->rkey, addr_of(e, 20000));
	ibv_wr_set_sge(x, e->mr->lkey, addr_of(e, 0), 8);
	tap(!ibv_wr_complete(x) && !poll_n(e->cq, &d, 1) && d.wr_id == 22 &&
	    !d.status, "after them, the next batch completes", NULL);
}

/* ibv_post_send and ibv_wr_* in turn; ibv_poll_cq and ibv_start_poll. */
static void mixed(struct env *e, struct ibv_qp *qp)
{
	struct ibv_qp_ex *x = ibv_qp_to_qp_ex(qp);
	struct ibv_sge sge = { .addr = addr_of(e, 0), .length = 64,
			       .lkey = e->mr->lkey };
	struct ibv_send_wr wr = {
		.sg_list = &sge, .num_sge = 1,
		.opcode = IBV_WR_RDMA_WRITE, .send_flags = IBV_SEND_SIGNALED,
		.wr.rdma = { .remote_addr = addr_of(e, 24000),
			     .rkey = e->mr->rkey },
	}, *bad;
	struct ibv_wc wc[8];
	uint64_t got = 0;
	time_t end = time(NULL) + 5;
	int i, n = 0, ret = 0;

	for (i = 0; i < 8 && !ret; i++) {
		if (i % 2) {
			ibv_wr_start(x);
			x->wr_id = 30 + i;
			x->wr_flags = IBV_SEND_SIGNALED;
			ibv_wr_rdma_write(x, e->mr->rkey, addr_of(e, 24000));
			ibv_wr_set_sge(x, e->mr->lkey, addr_of(e, 0), 64);
			ret = ibv_wr_complete(x);
		} else {
			wr.wr_id = 30 + i;
			ret = ibv_post_send(qp, &wr, &bad);
		}
	}
	tap(!ret, "mixed: 8 WRITEs posted by both APIs in turn", NULL);
	while (n < 8 && time(NULL) <= end) {
		ret = ibv_poll_cq(ibv_cq_ex_to_cq(e->cq), 8 - n, wc + n);
		if (ret < 0)
			break;
		n += ret;
	}
	for (i = 0; i < n; i++)
		if (wc[i].wr_id == 30u + i && !wc[i].status)
			got++;
	tap(got == 8, "mixed: ibv_poll_cq on the extended CQ: all 8 in order",
	    NULL);
}

/* UD through ibv_wr_set_ud_addr, to itself. */
static void ud_send(struct env *e)
{
	struct ibv_qp *qp = qp_ex(e, IBV_QPT_UD, IBV_QP_EX_WITH_SEND, DEPTH);
	struct ibv_ah_attr aa = {
		.is_global = 1, .port_num = 1,
		.grh = { .dgid = e->gid, .sgid_index = e->gid_index,
			 .hop_limit = 64 },
	};
	struct ibv_qp_ex *x;
	struct ibv_ah *ah;
	struct done d[2];
	int ok, i, recv = -1;

	tap(qp && !qp_up(e, qp), "ud: an extended UD QP, ready", NULL);
	if (!qp)
		return;
	ah = ibv_create_ah(e->pd, &aa);
	x = ibv_qp_to_qp_ex(qp);
	fill(e->buf, 300, 9);
	post_recv(e, qp, 200, 40000, GRH + 300);
	ibv_wr_start(x);
	x->wr_id = 201;
	x->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_send(x);
	ibv_wr_set_ud_addr(x, ah, qp->qp_num, QKEY);
	ibv_wr_set_sge(x, e->mr->lkey, addr_of(e, 0), 300);
	ok = ah && !ibv_wr_complete(x) && !poll_n(e->cq, d, 2);
	tap(ok, "ud: sent and received", NULL);
	for (i = 0; ok && i < 2; i++)
		if (d[i].wr_id == 200)
			recv = i;
	tap(recv >= 0 && !d[recv].status &&
	    d[recv].byte_len == GRH + 300 && d[recv].src_qp == qp->qp_num &&
	    d[recv].wc_flags & IBV_WC_GRH &&
	    !memcmp(e->buf + 40000 + GRH, e->buf, 300),
	    "ud: length with GRH, source QP, data compared", NULL);
	if (ah)
		ibv_destroy_ah(ah);
	ibv_destroy_qp(qp);
}

#define OPS_MW		(OPS_RC | IBV_QP_EX_WITH_BIND_MW | \
			 IBV_QP_EX_WITH_LOCAL_INV | IBV_QP_EX_WITH_SEND_WITH_INV)
#define WIN		49152	/* the windows' MR: the buffer's last 16 KiB */

/* A fresh RC QP connected to itself: an error completion ends a QP. */
static struct ibv_qp *mw_qp(struct env *e)
{
	struct ibv_qp *qp = qp_ex(e, IBV_QPT_RC, OPS_MW, DEPTH);

	if (qp && qp_up(e, qp)) {
		ibv_destroy_qp(qp);
		qp = NULL;
	}
	return qp;
}

/* One signaled @op of @len bytes at @addr under @rkey; its status. */
static int rdma_status(struct env *e, struct ibv_qp *qp, enum ibv_wr_opcode op,
		       uint32_t rkey, uint64_t addr, uint32_t len,
		       uint32_t lkey)
{
	struct ibv_qp_ex *x = ibv_qp_to_qp_ex(qp);
	struct done d;

	ibv_wr_start(x);
	x->wr_id = 300;
	x->wr_flags = IBV_SEND_SIGNALED;
	if (op == IBV_WR_RDMA_READ)
		ibv_wr_rdma_read(x, rkey, addr);
	else
		ibv_wr_rdma_write(x, rkey, addr);
	ibv_wr_set_sge(x, lkey, addr_of(e, 0), len);
	if (ibv_wr_complete(x) || poll_n(e->cq, &d, 1))
		return -1;
	return d.status;
}

static int write_status(struct env *e, struct ibv_qp *qp, uint32_t rkey,
			uint64_t addr, uint32_t len)
{
	return rdma_status(e, qp, IBV_WR_RDMA_WRITE, rkey, addr, len,
			   e->mr->lkey);
}

/* A status, once @qp (used up by an error) is destroyed. */
static int last_status(struct ibv_qp *qp, int status)
{
	ibv_destroy_qp(qp);
	return status;
}

/* Type 2 bind on @qp through ibv_wr_bind_mw: the completion's status. */
static int bind2(struct env *e, struct ibv_qp *qp, struct ibv_mw *mw,
		 uint32_t rkey, const struct ibv_mw_bind_info *info)
{
	struct ibv_qp_ex *x = ibv_qp_to_qp_ex(qp);
	struct done d;

	ibv_wr_start(x);
	x->wr_id = 310;
	x->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_bind_mw(x, mw, rkey, info);
	if (ibv_wr_complete(x) || poll_n(e->cq, &d, 1))
		return -1;
	return d.opcode == IBV_WC_BIND_MW || d.status ? d.status : -1;
}

static void windows_type1(struct env *e, struct ibv_mr *wmr)
{
	struct ibv_mw_bind bind = {
		.wr_id = 301, .send_flags = IBV_SEND_SIGNALED,
		.bind_info = { .mr = wmr, .addr = addr_of(e, WIN + 4096),
			       .length = 4096,
			       .mw_access_flags = IBV_ACCESS_REMOTE_WRITE },
	};
	struct ibv_qp *qp = mw_qp(e);
	struct ibv_mw *mw;
	uint32_t old;
	struct done d;

	errno = 0;
	tap(!ibv_alloc_mw(e->pd, 3) && errno == EINVAL,
	    "windows: a window of type 3: EINVAL", NULL);
	mw = ibv_alloc_mw(e->pd, IBV_MW_TYPE_1);
	tap(qp && mw, "windows: a type 1 window", NULL);
	if (!qp || !mw)
		return;
	old = mw->rkey;
	tap(!ibv_bind_mw(qp, mw, &bind) && !poll_n(e->cq, &d, 1) &&
	    d.wr_id == 301 && d.opcode == IBV_WC_BIND_MW && !d.status &&
	    mw->rkey != old && mw->rkey >> 8 == old >> 8,
	    "windows: ibv_bind_mw completes, with a new rkey", NULL);
	fill(e->buf, 64, 5);
	tap(!write_status(e, qp, mw->rkey, addr_of(e, WIN + 4096 + 100), 64) &&
	    !memcmp(e->buf + WIN + 4096 + 100, e->buf, 64),
	    "windows: a WRITE through it lands in the MR, data compared",
	    NULL);
	tap(ibv_dereg_mr(wmr) == EBUSY,
	    "windows: the MR of a bound window stays registered: EBUSY", NULL);
	errno = 0;
	tap(ibv_rereg_mr(wmr, IBV_REREG_MR_CHANGE_TRANSLATION, NULL,
			 e->buf + WIN, BUF - WIN, 0) && errno == EBUSY,
	    "windows: nor is it registered anew: EBUSY", NULL);
	tap(last_status(qp, write_status(e, qp, mw->rkey,
					 addr_of(e, WIN + 8192 - 32), 64)) ==
	    IBV_WC_REM_ACCESS_ERR,
	    "windows: a WRITE past its end: remote access error", NULL);
	qp = mw_qp(e);
	tap(qp && last_status(qp, rdma_status(e, qp, IBV_WR_RDMA_READ,
					      mw->rkey,
					      addr_of(e, WIN + 4096), 64,
					      e->mr->lkey)) ==
	    IBV_WC_REM_ACCESS_ERR,
	    "windows: a READ it does not grant: remote access error", NULL);
	qp = mw_qp(e);
	tap(qp && last_status(qp, rdma_status(e, qp, IBV_WR_RDMA_WRITE,
					      e->mr->rkey,
					      addr_of(e, 20000), 64,
					      mw->rkey)) ==
	    IBV_WC_LOC_PROT_ERR,
	    "windows: its rkey as a local key: local protection error", NULL);
	qp = mw_qp(e);
	old = mw->rkey;
	bind.bind_info.length = 0;
	bind.bind_info.mw_access_flags = 0;
	tap(qp && !ibv_bind_mw(qp, mw, &bind) && !poll_n(e->cq, &d, 1) &&
	    !d.status, "windows: a zero-length bind unbinds it", NULL);
	tap(qp && last_status(qp, write_status(e, qp, old,
					       addr_of(e, WIN + 4096), 64)) ==
	    IBV_WC_REM_ACCESS_ERR,
	    "windows: unbound, its old rkey: remote access error", NULL);
	tap(!ibv_dealloc_mw(mw), "windows: type 1 deallocated", NULL);
}

static void windows_type2(struct env *e, struct ibv_mr *wmr)
{
	struct ibv_mw_bind_info info = {
		.mr = wmr, .addr = addr_of(e, WIN), .length = 8192,
		.mw_access_flags = IBV_ACCESS_REMOTE_WRITE |
				   IBV_ACCESS_REMOTE_READ,
	};
	struct ibv_qp *a = mw_qp(e), *b = mw_qp(e), *c;
	struct ibv_mw *mw = ibv_alloc_mw(e->pd, IBV_MW_TYPE_2);
	struct ibv_qp_ex *x;
	uint32_t key;
	struct done d[2];
	int i, recv = -1;

	tap(a && b && mw, "windows: a type 2 window", NULL);
	if (!a || !b || !mw)
		return;
	key = ibv_inc_rkey(mw->rkey);
	tap(!bind2(e, a, mw, key, &info),
	    "windows: ibv_wr_bind_mw completes", NULL);
	fill(e->buf, 64, 6);
	tap(!write_status(e, a, key, addr_of(e, WIN + 8000), 64) &&
	    !memcmp(e->buf + WIN + 8000, e->buf, 64),
	    "windows: a WRITE through its QP lands, data compared", NULL);
	tap(last_status(b, write_status(e, b, key, addr_of(e, WIN), 64)) ==
	    IBV_WC_REM_ACCESS_ERR,
	    "windows: through another QP of its PD: remote access error",
	    NULL);
	c = mw_qp(e);
	tap(c && last_status(c, bind2(e, c, mw, ibv_inc_rkey(key), &info)) ==
	    IBV_WC_MW_BIND_ERR,
	    "windows: bound again before invalidation: bind error", NULL);

	x = ibv_qp_to_qp_ex(a);
	ibv_wr_start(x);
	x->wr_id = 320;
	x->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_local_inv(x, key);
	tap(!ibv_wr_complete(x) && !poll_n(e->cq, d, 1) && !d[0].status &&
	    d[0].opcode == IBV_WC_LOCAL_INV,
	    "windows: LOCAL_INV of it completes", NULL);
	tap(last_status(a, write_status(e, a, key, addr_of(e, WIN), 64)) ==
	    IBV_WC_REM_ACCESS_ERR,
	    "windows: invalidated, its rkey: remote access error", NULL);

	a = mw_qp(e);
	key = ibv_inc_rkey(key);
	tap(a && !bind2(e, a, mw, key, &info),
	    "windows: bound again once invalidated", NULL);
	if (!a)
		return;
	post_recv(e, a, 330, 32768, 1024);
	x = ibv_qp_to_qp_ex(a);
	ibv_wr_start(x);
	x->wr_id = 331;
	x->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_send_inv(x, key);
	ibv_wr_set_sge(x, e->mr->lkey, addr_of(e, 0), 16);
	tap(!ibv_wr_complete(x) && !poll_n(e->cq, d, 2),
	    "windows: a SEND_WITH_INV of it, received", NULL);
	for (i = 0; i < 2; i++)
		if (d[i].wr_id == 330)
			recv = i;
	tap(recv >= 0 && !d[recv].status &&
	    d[recv].wc_flags & IBV_WC_WITH_INV,
	    "windows: the receive says it invalidated the rkey", NULL);
	tap(last_status(a, write_status(e, a, key, addr_of(e, WIN), 64)) ==
	    IBV_WC_REM_ACCESS_ERR,
	    "windows: invalidated by its peer: remote access error", NULL);

	a = mw_qp(e);
	key = ibv_inc_rkey(key);
	tap(a && !bind2(e, a, mw, key, &info) && !ibv_dealloc_mw(mw),
	    "windows: deallocated while bound", NULL);
	tap(a && last_status(a, write_status(e, a, key, addr_of(e, WIN), 64)) ==
	    IBV_WC_REM_ACCESS_ERR,
	    "windows: deallocated, its rkey: remote access error", NULL);
}

/* The windows open onto an MR that grants no remote access itself. */
static void windows(struct env *e)
{
	struct ibv_mr *wmr = ibv_reg_mr(e->pd, e->buf + WIN, BUF - WIN,
					IBV_ACCESS_LOCAL_WRITE |
					IBV_ACCESS_MW_BIND);

	tap(wmr != NULL, "windows: an MR that windows may bind to", NULL);
	if (!wmr)
		return;
	windows_type1(e, wmr);
	windows_type2(e, wmr);
	tap(!ibv_dereg_mr(wmr),
	    "windows: the MR deregistered once no window is bound", NULL);
}

#define OPS_AW		(OPS_RC | IBV_QP_EX_WITH_ATOMIC_WRITE)
#define AW		61000	/* ATOMIC WRITE's targets, 8-byte aligned */

/* One signaled ATOMIC WRITE of @data at @addr under @rkey: its status. */
static int atomic_write_status(struct env *e, uint32_t rkey, uint64_t addr,
			       const void *data)
{
	struct ibv_qp *qp = qp_ex(e, IBV_QPT_RC, OPS_AW, DEPTH);
	struct ibv_qp_ex *x;
	struct done d;

	if (!qp || qp_up(e, qp))
		return -1;
	x = ibv_qp_to_qp_ex(qp);
	ibv_wr_start(x);
	x->wr_id = 400;
	x->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_atomic_write(x, rkey, addr, data);
	if (ibv_wr_complete(x) || poll_n(e->cq, &d, 1))
		return last_status(qp, -1);
	return last_status(qp, d.opcode == IBV_WC_ATOMIC_WRITE || d.status ?
			   d.status : -1);
}

static void atomic_write(struct env *e)
{
	static const char a[8] = "abcdefgh", b[8] = "ABCDEFGH";
	struct ibv_qp *qp = qp_ex(e, IBV_QPT_RC, OPS_AW, DEPTH);
	struct ibv_sge sge = { .addr = addr_of(e, AW + 32), .length = 8,
			       .lkey = e->mr->lkey };
	struct ibv_send_wr wr = {
		.wr_id = 402, .opcode = IBV_WR_ATOMIC_WRITE, .sg_list = &sge,
		.num_sge = 1, .send_flags = IBV_SEND_SIGNALED,
		.wr.rdma = { .remote_addr = addr_of(e, AW + 8),
			     .rkey = e->mr->rkey },
	}, *bad;
	unsigned char before[24];
	struct ibv_mr *ro;
	struct ibv_qp_ex *x;
	struct done d[2];
	int ok;

	tap(qp && !qp_up(e, qp), "atomic write: an RC QP for it", NULL);
	if (!qp)
		return;
	x = ibv_qp_to_qp_ex(qp);
	memset(e->buf + AW, 0x5a, 24);
	memcpy(e->buf + AW + 32, b, 8);
	ibv_wr_start(x);
	x->wr_id = 401;
	x->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_atomic_write(x, e->mr->rkey, addr_of(e, AW), a);
	ok = !ibv_wr_complete(x) && !ibv_post_send(qp, &wr, &bad) &&
	     !poll_n(e->cq, d, 2);
	tap(ok && d[0].wr_id == 401 && d[1].wr_id == 402 && !d[0].status &&
	    !d[1].status && d[0].opcode == IBV_WC_ATOMIC_WRITE &&
	    d[1].opcode == IBV_WC_ATOMIC_WRITE && d[0].byte_len == 8 &&
	    d[1].byte_len == 8,
	    "atomic write: ibv_wr_atomic_write, then ibv_post_send: 8 bytes each",
	    NULL);
	memset(before, 0x5a, sizeof(before));
	tap(!memcmp(e->buf + AW, a, 8) && !memcmp(e->buf + AW + 8, b, 8) &&
	    !memcmp(e->buf + AW + 16, before, 8),
	    "atomic write: their bytes landed, and nothing past them", NULL);

	ibv_wr_start(x);
	ibv_wr_atomic_write(x, e->mr->rkey, addr_of(e, AW), b);
	ibv_wr_set_sge(x, e->mr->lkey, addr_of(e, 0), 8);
	tap(ibv_wr_complete(x) == EINVAL && cq_quiet(e->cq) &&
	    !memcmp(e->buf + AW, a, 8),
	    "atomic write: with an SGE besides, EINVAL, nothing posted", NULL);
	sge.length = 4;
	tap(ibv_post_send(qp, &wr, &bad) == EINVAL && bad == &wr,
	    "atomic write: ibv_post_send of 4 bytes: EINVAL", NULL);
	ibv_destroy_qp(qp);

	memcpy(before, e->buf + AW, 16);
	tap(atomic_write_status(e, e->mr->rkey, addr_of(e, AW + 4), b) ==
	    IBV_WC_REM_INV_REQ_ERR && !memcmp(e->buf + AW, before, 16),
	    "atomic write: not 8-byte aligned: remote invalid request", NULL);
	ro = ibv_reg_mr(e->pd, e->buf + AW, 64, IBV_ACCESS_LOCAL_WRITE |
			IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC);
	tap(ro && atomic_write_status(e, ro->rkey, addr_of(e, AW), b) ==
	    IBV_WC_REM_ACCESS_ERR && !memcmp(e->buf + AW, before, 16),
	    "atomic write: an MR without remote write: remote access error",
	    NULL);
	if (ro)
		ibv_dereg_mr(ro);
}

static void refused(struct env *e)
{
	struct ibv_cq_init_attr_ex ca = {
		.cqe = 8,
		.wc_flags = IBV_WC_EX_WITH_COMPLETION_TIMESTAMP,
	};
	struct ibv_qp *qp;

	errno = 0;
	tap(!ibv_create_cq_ex(e->ctx, &ca) && errno == EOPNOTSUPP,
	    "refused: a CQ with completion timestamps: EOPNOTSUPP", NULL);
	/* This one reaches the kernel, which refuses every creation flag. */
	ca = (struct ibv_cq_init_attr_ex){
		.cqe = 8,
		.comp_mask = IBV_CQ_INIT_ATTR_MASK_FLAGS,
		.flags = IBV_CREATE_CQ_ATTR_IGNORE_OVERRUN,
	};
	errno = 0;
	tap(!ibv_create_cq_ex(e->ctx, &ca) && errno == EOPNOTSUPP,
	    "refused: a CQ that ignores overruns: EOPNOTSUPP", NULL);
	errno = 0;
	qp = qp_ex(e, IBV_QPT_UC, IBV_QP_EX_WITH_ATOMIC_WRITE, DEPTH);
	tap(!qp && errno == EOPNOTSUPP,
	    "refused: a UC QP for ATOMIC WRITE: EOPNOTSUPP", NULL);
	errno = 0;
	qp = qp_ex(e, IBV_QPT_UD, IBV_QP_EX_WITH_RDMA_WRITE, DEPTH);
	tap(!qp && errno == EOPNOTSUPP,
	    "refused: a UD QP to RDMA WRITE: EOPNOTSUPP", NULL);
}

int main(int argc, char **argv)
{
	struct ibv_cq_init_attr_ex ca = {
		.cqe = 4 * DEPTH,
		.wc_flags = IBV_WC_STANDARD_FLAGS,
	};
	struct ibv_device **list;
	struct env e = {};
	struct ibv_qp *qp;

	if (argc != 3) {
		fprintf(stderr, "usage: %s DEVICE GID_INDEX\n", argv[0]);
		return 2;
	}
	e.gid_index = atoi(argv[2]);
	list = ibv_get_device_list(NULL);
	e.ctx = tap_open(list, argv[1]);
	if (!e.ctx || ibv_query_gid(e.ctx, 1, e.gid_index, &e.gid))
		return 1;
	e.pd = ibv_alloc_pd(e.ctx);
	e.buf = calloc(1, BUF);
	e.mr = e.pd && e.buf ?
	       ibv_reg_mr(e.pd, e.buf, BUF, IBV_ACCESS_LOCAL_WRITE |
			  IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
			  IBV_ACCESS_REMOTE_ATOMIC) : NULL;
	e.cq = ibv_create_cq_ex(e.ctx, &ca);
	qp = e.mr && e.cq ? qp_ex(&e, IBV_QPT_RC, OPS_RC, DEPTH) : NULL;
	tap(qp && ibv_qp_to_qp_ex(qp) && !qp_up(&e, qp),
	    "an extended RC QP on an extended CQ, connected to itself", NULL);
	if (!qp || ibv_qp_to_qp_ex(qp) == NULL)
		return tap_done();
	batch_of_ops(&e, qp);
	sends(&e, qp);
	bad_batches(&e, qp);
	mixed(&e, qp);
	ud_send(&e);
	windows(&e);
	atomic_write(&e);
	refused(&e);
	ibv_destroy_qp(qp);
	ibv_destroy_cq(ibv_cq_ex_to_cq(e.cq));
	ibv_dereg_mr(e.mr);
	ibv_dealloc_pd(e.pd);
	ibv_close_device(e.ctx);
	ibv_free_device_list(list);
	free(e.buf);
	return tap_done();
}
