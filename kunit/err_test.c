// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * softhca_errors: every way a work request can fail completes it with the
 * status the IBA names, leaves the memory it was refused untouched, and
 * moves the QPs where the IBA says: RC requester and responder to ERR
 * (with the responder's affiliated event), UC and UD requesters to SQE
 * (from which they recover).  RNR waits and retries; a peer that never
 * answers exhausts the retry count.  Destroying objects with work in
 * flight neither hangs nor touches freed memory (KASAN watches).
 */

#include <linux/delay.h>
#include <linux/slab.h>
#include <rdma/ib_verbs.h>

#include "dp.h"
#include "fixture.h"
#include "qp.h"

SHCA_SUITE_FIXTURE(shca_err_fx, "softhca_kterr");
static struct shca_dp shca_err_dp;

static void shca_err_exit(struct kunit *test)
{
	shca_dp_teardown(&shca_err_dp);
}

static void *shca_err_buf(struct kunit *test, size_t len)
{
	void *buf = kunit_kzalloc(test, len, GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, buf);
	return buf;
}

static int shca_err_state(struct ib_qp *qp)
{
	struct ib_qp_init_attr init;
	struct ib_qp_attr attr;
	int ret = ib_query_qp(qp, &attr, IB_QP_STATE, &init);

	return ret ?: attr.qp_state;
}

static void shca_err_event(struct ib_event *event, void *ctx)
{
	struct shca_dp *dp = ctx;

	if (event->event == IB_EVENT_QP_ACCESS_ERR ||
	    event->event == IB_EVENT_QP_REQ_ERR)
		atomic_inc(&dp->events);
	wake_up(&dp->wait);
}

static struct shca_dp *shca_err_setup(struct kunit *test,
				      const struct shca_dp_opts *o)
{
	struct shca_dp *dp = &shca_err_dp;

	shca_dp_setup(test, &shca_err_fx, dp, o);
	dp->qp[1]->event_handler = shca_err_event;
	return dp;
}

/* Posts one signalled WR on QP 0 and returns its completion status. */
static int shca_err_status(struct kunit *test, struct shca_dp *dp,
			   struct ib_send_wr *wr)
{
	struct ib_wc wc;

	wr->send_flags |= IB_SEND_SIGNALED;
	KUNIT_ASSERT_EQ(test, shca_dp_post_send(dp, 0, wr), 0);
	KUNIT_ASSERT_TRUE(test, shca_dp_poll(dp, 0, &wc));
	KUNIT_EXPECT_EQ(test, wc.wr_id, wr->wr_id);
	return wc.status;
}

static struct ib_rdma_wr shca_err_write(struct ib_sge *sge, void *to,
					u32 rkey)
{
	return (struct ib_rdma_wr){
		.wr = { .wr_id = 1, .opcode = IB_WR_RDMA_WRITE,
			.sg_list = sge, .num_sge = 1 },
		.remote_addr = (uintptr_t)to,
		.rkey = rkey,
	};
}

/*
 * A refused remote request: the requester gets @status, both QPs end in
 * ERR, the responder hears of it (from an affiliated @event when no
 * receive completion told it), and the next WR is flushed.
 */
static void shca_err_expect_nak(struct kunit *test, struct shca_dp *dp,
				struct ib_send_wr *wr, enum ib_wc_status status,
				bool event)
{
	struct ib_send_wr next = { .wr_id = 2, .opcode = IB_WR_SEND };

	KUNIT_EXPECT_EQ(test, shca_err_status(test, dp, wr), status);
	KUNIT_EXPECT_EQ(test, shca_err_state(dp->qp[0]), IB_QPS_ERR);
	KUNIT_EXPECT_EQ(test, shca_err_state(dp->qp[1]), IB_QPS_ERR);
	if (event)
		KUNIT_EXPECT_TRUE(test,
				  wait_event_timeout(dp->wait,
						     atomic_read(&dp->events),
						     10 * HZ));
	KUNIT_EXPECT_EQ(test, shca_err_status(test, dp, &next),
			IB_WC_WR_FLUSH_ERR);
}

/* An MR without REMOTE_WRITE: REM_ACCESS_ERR, and not a byte written. */
static void shca_err_mr_access(struct kunit *test)
{
	struct shca_dp *dp = shca_err_setup(test, &shca_dp_rc);
	u8 *src = shca_err_buf(test, 256), *dst = shca_err_buf(test, 256);
	struct ib_sge sge = shca_dp_sge(dp, src, 256);
	struct ib_rdma_wr wr;
	struct ib_mr *mr;

	memset(src, 0x5a, 256);
	mr = shca_dp_frwr(dp, 1, dst, 256, IB_ACCESS_REMOTE_READ);
	wr = shca_err_write(&sge, dst, mr->rkey);
	shca_err_expect_nak(test, dp, &wr.wr, IB_WC_REM_ACCESS_ERR, true);
	KUNIT_EXPECT_TRUE(test, !memchr_inv(dst, 0, 256));
	KUNIT_EXPECT_EQ(test, ib_dereg_mr(mr), 0);
}

/* A QP without remote write access refuses even a valid rkey. */
static void shca_err_qp_access(struct kunit *test)
{
	struct shca_dp_opts o = shca_dp_rc;
	struct shca_dp *dp;
	u8 *src = shca_err_buf(test, 64), *dst = shca_err_buf(test, 64);
	struct ib_sge sge;
	struct ib_rdma_wr wr;

	o.access = IB_ACCESS_REMOTE_READ;
	dp = shca_err_setup(test, &o);
	sge = shca_dp_sge(dp, src, 64);
	memset(src, 0x5a, 64);
	wr = shca_err_write(&sge, dst, dp->pd->unsafe_global_rkey);
	shca_err_expect_nak(test, dp, &wr.wr, IB_WC_REM_ACCESS_ERR, true);
	KUNIT_EXPECT_TRUE(test, !memchr_inv(dst, 0, 64));
}

/* An rkey of another PD is refused. */
static void shca_err_pd(struct kunit *test)
{
	struct shca_dp *dp = shca_err_setup(test, &shca_dp_rc);
	u8 *src = shca_err_buf(test, 64), *dst = shca_err_buf(test, 64);
	struct ib_sge sge = shca_dp_sge(dp, src, 64);
	struct ib_rdma_wr wr;
	struct ib_pd *pd2;

	pd2 = ib_alloc_pd(shca_err_fx.ibdev, IB_PD_UNSAFE_GLOBAL_RKEY);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, pd2);
	memset(src, 0x5a, 64);
	wr = shca_err_write(&sge, dst, pd2->unsafe_global_rkey);
	shca_err_expect_nak(test, dp, &wr.wr, IB_WC_REM_ACCESS_ERR, true);
	KUNIT_EXPECT_TRUE(test, !memchr_inv(dst, 0, 64));
	ib_dealloc_pd(pd2);
}

/* One byte past the MR: the whole WRITE is refused. */
static void shca_err_range(struct kunit *test)
{
	struct shca_dp *dp = shca_err_setup(test, &shca_dp_rc);
	u8 *src = shca_err_buf(test, 128), *dst = shca_err_buf(test, 128);
	struct ib_sge sge = shca_dp_sge(dp, src, 65);
	struct ib_rdma_wr wr;
	struct ib_mr *mr;

	memset(src, 0x5a, 128);
	mr = shca_dp_frwr(dp, 1, dst, 64, IB_ACCESS_REMOTE_WRITE |
			  IB_ACCESS_LOCAL_WRITE);
	wr = shca_err_write(&sge, dst, mr->rkey);
	shca_err_expect_nak(test, dp, &wr.wr, IB_WC_REM_ACCESS_ERR, true);
	KUNIT_EXPECT_TRUE(test, !memchr_inv(dst, 0, 128));
	KUNIT_EXPECT_EQ(test, ib_dereg_mr(mr), 0);
}

/* A misaligned atomic is an invalid request. */
static void shca_err_atomic_align(struct kunit *test)
{
	struct shca_dp *dp = shca_err_setup(test, &shca_dp_rc);
	u64 *target = shca_err_buf(test, 16), *orig = shca_err_buf(test, 8);
	struct ib_sge sge = shca_dp_sge(dp, orig, 8);
	struct ib_atomic_wr wr = {
		.wr = { .wr_id = 1, .opcode = IB_WR_ATOMIC_FETCH_AND_ADD,
			.sg_list = &sge, .num_sge = 1 },
		.remote_addr = (uintptr_t)target + 4,
		.compare_add = 1,
		.rkey = dp->pd->unsafe_global_rkey,
	};

	shca_err_expect_nak(test, dp, &wr.wr, IB_WC_REM_INV_REQ_ERR, true);
	KUNIT_EXPECT_EQ(test, target[0] | target[1], 0);
}

/*
 * A bad local key stops the message at the requester: LOC_PROT_ERR, and
 * the responder's receive is still there for the next sender.
 */
static void shca_err_local_key(struct kunit *test)
{
	struct shca_dp *dp = shca_err_setup(test, &shca_dp_rc);
	u8 *src = shca_err_buf(test, 64), *dst = shca_err_buf(test, 64);
	struct ib_sge sge = shca_dp_sge(dp, src, 64);
	struct ib_send_wr wr = {
		.wr_id = 1, .opcode = IB_WR_SEND, .sg_list = &sge,
		.num_sge = 1,
	};

	KUNIT_ASSERT_EQ(test, shca_dp_post_recv(dp, 1, 9, dst, 64), 0);
	sge.lkey = 0x123400;
	KUNIT_EXPECT_EQ(test, shca_err_status(test, dp, &wr),
			IB_WC_LOC_PROT_ERR);
	KUNIT_EXPECT_EQ(test, shca_err_state(dp->qp[0]), IB_QPS_ERR);
	KUNIT_EXPECT_EQ(test, shca_err_state(dp->qp[1]), IB_QPS_RTS);
	KUNIT_EXPECT_EQ(test, to_shca_qp(dp->qp[1])->rq.queue.cons, 0);
	KUNIT_EXPECT_TRUE(test, shca_dp_cq_empty(dp, 1));
}

/* A receive too small: LOC_LEN_ERR there, REM_INV_REQ_ERR here. */
static void shca_err_recv_len(struct kunit *test)
{
	struct shca_dp *dp = shca_err_setup(test, &shca_dp_rc);
	u8 *src = shca_err_buf(test, 100), *dst = shca_err_buf(test, 100);
	struct ib_sge sge = shca_dp_sge(dp, src, 100);
	struct ib_send_wr wr = {
		.wr_id = 1, .opcode = IB_WR_SEND, .sg_list = &sge,
		.num_sge = 1,
	};
	struct ib_wc wc;

	KUNIT_ASSERT_EQ(test, shca_dp_post_recv(dp, 1, 9, dst, 16), 0);
	shca_err_expect_nak(test, dp, &wr, IB_WC_REM_INV_REQ_ERR, false);
	KUNIT_ASSERT_TRUE(test, shca_dp_poll(dp, 1, &wc));
	KUNIT_EXPECT_EQ(test, wc.wr_id, 9);
	KUNIT_EXPECT_EQ(test, wc.status, IB_WC_LOC_LEN_ERR);
}

/* A receive with a bad key: LOC_PROT_ERR there, REM_OP_ERR here. */
static void shca_err_recv_key(struct kunit *test)
{
	struct shca_dp *dp = shca_err_setup(test, &shca_dp_rc);
	u8 *src = shca_err_buf(test, 64), *dst = shca_err_buf(test, 64);
	struct ib_sge sge = shca_dp_sge(dp, src, 64);
	struct ib_sge rsge = shca_dp_sge(dp, dst, 64);
	struct ib_recv_wr rwr = { .wr_id = 9, .sg_list = &rsge, .num_sge = 1 };
	struct ib_send_wr wr = {
		.wr_id = 1, .opcode = IB_WR_SEND, .sg_list = &sge,
		.num_sge = 1,
	};
	const struct ib_recv_wr *bad;
	struct ib_wc wc;

	memset(src, 0x5a, 64);
	rsge.lkey = 0x777700;
	KUNIT_ASSERT_EQ(test, ib_post_recv(dp->qp[1], &rwr, &bad), 0);
	shca_err_expect_nak(test, dp, &wr, IB_WC_REM_OP_ERR, false);
	KUNIT_ASSERT_TRUE(test, shca_dp_poll(dp, 1, &wc));
	KUNIT_EXPECT_EQ(test, wc.wr_id, 9);
	KUNIT_EXPECT_EQ(test, wc.status, IB_WC_LOC_PROT_ERR);
	KUNIT_EXPECT_TRUE(test, !memchr_inv(dst, 0, 64));
}

/* No receive and rnr_retry 0: RNR_RETRY_EXC_ERR at once. */
static void shca_err_rnr_exceeded(struct kunit *test)
{
	struct shca_dp_opts o = shca_dp_rc;
	struct shca_dp *dp;
	struct ib_send_wr wr = { .wr_id = 1, .opcode = IB_WR_SEND };

	o.rnr_retry = 0;
	dp = shca_err_setup(test, &o);
	KUNIT_EXPECT_EQ(test, shca_err_status(test, dp, &wr),
			IB_WC_RNR_RETRY_EXC_ERR);
	KUNIT_EXPECT_EQ(test, shca_err_state(dp->qp[0]), IB_QPS_ERR);
	KUNIT_EXPECT_EQ(test, shca_err_state(dp->qp[1]), IB_QPS_RTS);
}

/* With rnr_retry 7 the sender waits for a receive, however late. */
static void shca_err_rnr_wait(struct kunit *test)
{
	struct shca_dp_opts o = shca_dp_rc;
	struct shca_dp *dp;
	u8 *src = shca_err_buf(test, 64), *dst = shca_err_buf(test, 64);
	struct ib_sge sge;
	struct ib_send_wr wr = {
		.wr_id = 1, .opcode = IB_WR_SEND, .sg_list = &sge,
		.num_sge = 1, .send_flags = IB_SEND_SIGNALED,
	};
	struct ib_wc wc;

	o.min_rnr_timer = 14;	/* 1.28 ms */
	dp = shca_err_setup(test, &o);
	sge = shca_dp_sge(dp, src, 64);
	shca_dp_fill(src, 64, 20);
	KUNIT_ASSERT_EQ(test, shca_dp_post_send(dp, 0, &wr), 0);
	KUNIT_EXPECT_TRUE(test, shca_dp_cq_empty(dp, 0));
	msleep(100);
	KUNIT_ASSERT_EQ(test, shca_dp_post_recv(dp, 1, 9, dst, 64), 0);
	KUNIT_ASSERT_TRUE(test, shca_dp_poll(dp, 0, &wc));
	KUNIT_EXPECT_EQ(test, wc.status, IB_WC_SUCCESS);
	KUNIT_ASSERT_TRUE(test, shca_dp_poll(dp, 1, &wc));
	KUNIT_EXPECT_EQ(test, wc.status, IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(test, memcmp(src, dst, 64), 0);
}

/* A peer that does not answer: RETRY_EXC_ERR after retrying. */
static void shca_err_retry_exceeded(struct kunit *test)
{
	struct shca_dp_opts o = shca_dp_rc;
	struct shca_dp *dp;
	struct ib_send_wr wr = { .wr_id = 1, .opcode = IB_WR_SEND };

	o.retry_cnt = 2;
	o.timeout = 1;		/* 8.192 us */
	dp = shca_err_setup(test, &o);
	/* Its peer gone to RESET, QP 0's messages fall on deaf ears. */
	KUNIT_ASSERT_EQ(test, shca_dp_modify(dp->qp[1], IB_QPS_RESET), 0);
	KUNIT_EXPECT_EQ(test, shca_err_status(test, dp, &wr),
			IB_WC_RETRY_EXC_ERR);
	KUNIT_EXPECT_EQ(test, shca_err_state(dp->qp[0]), IB_QPS_ERR);
}

/*
 * UC: a send error moves the requester to SQE, where later sends flush,
 * receives still work, and modify to RTS recovers it (IBA 10.3.1).
 */
static void shca_err_uc_sqe(struct kunit *test)
{
	struct shca_dp_opts o = shca_dp_rc;
	struct shca_dp *dp;
	u8 *src = shca_err_buf(test, 64), *dst = shca_err_buf(test, 64);
	struct ib_sge sge;
	struct ib_send_wr wr = {
		.wr_id = 1, .opcode = IB_WR_SEND, .sg_list = &sge,
		.num_sge = 1,
	};
	struct ib_qp_attr attr = { .qp_state = IB_QPS_RTS };
	struct ib_wc wc;

	o.type = IB_QPT_UC;
	dp = shca_err_setup(test, &o);
	sge = shca_dp_sge(dp, src, 64);
	sge.lkey = 0x999900;
	KUNIT_EXPECT_EQ(test, shca_err_status(test, dp, &wr),
			IB_WC_LOC_PROT_ERR);
	KUNIT_EXPECT_EQ(test, shca_err_state(dp->qp[0]), IB_QPS_SQE);
	sge.lkey = dp->pd->local_dma_lkey;
	KUNIT_EXPECT_EQ(test, shca_err_status(test, dp, &wr),
			IB_WC_WR_FLUSH_ERR);

	/* The receive side of the SQE QP still works. */
	shca_dp_fill(src, 64, 21);
	KUNIT_ASSERT_EQ(test, shca_dp_post_recv(dp, 0, 9, dst, 64), 0);
	wr.send_flags = 0;
	KUNIT_ASSERT_EQ(test, shca_dp_post_send(dp, 1, &wr), 0);
	KUNIT_ASSERT_TRUE(test, shca_dp_poll(dp, 0, &wc));
	KUNIT_EXPECT_EQ(test, wc.status, IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(test, memcmp(src, dst, 64), 0);

	attr.cur_qp_state = IB_QPS_SQE;
	KUNIT_ASSERT_EQ(test, ib_modify_qp(dp->qp[0], &attr,
					   IB_QP_STATE | IB_QP_CUR_STATE), 0);
	KUNIT_ASSERT_EQ(test, shca_dp_post_recv(dp, 1, 10, dst, 64), 0);
	KUNIT_EXPECT_EQ(test, shca_err_status(test, dp, &wr), IB_WC_SUCCESS);
}

/* UD with the wrong Q_Key: sent, as far as the sender knows; dropped. */
static void shca_err_ud_qkey(struct kunit *test)
{
	struct shca_dp_opts o = shca_dp_rc;
	struct shca_dp *dp;
	u8 *dst = shca_err_buf(test, 128);
	struct ib_ud_wr wr = {
		.wr = { .wr_id = 1, .opcode = IB_WR_SEND },
		.remote_qkey = 0x4321,
	};

	o.type = IB_QPT_UD;
	dp = shca_err_setup(test, &o);
	wr.ah = dp->ah[0];
	wr.remote_qpn = dp->qp[1]->qp_num;
	KUNIT_ASSERT_EQ(test, shca_dp_post_recv(dp, 1, 9, dst, 128), 0);
	KUNIT_EXPECT_EQ(test, shca_err_status(test, dp, &wr.wr),
			IB_WC_SUCCESS);
	KUNIT_EXPECT_TRUE(test, shca_dp_cq_empty(dp, 1));
	/* With the right one (the QP's own, by the high bit), it arrives. */
	wr.remote_qkey = BIT(31);
	KUNIT_EXPECT_EQ(test, shca_err_status(test, dp, &wr.wr),
			IB_WC_SUCCESS);
	KUNIT_EXPECT_TRUE(test, !shca_dp_cq_empty(dp, 1));
}

/*
 * Destroying the QPs, then deregistering the MR, while large WRITEs are
 * still queued: neither hangs, and KASAN sees no use after free.
 */
static void shca_err_destroy_in_flight(struct kunit *test)
{
	struct shca_dp *dp = shca_err_setup(test, &shca_dp_rc);
	u32 len = 64 * 1024;
	u8 *src = shca_err_buf(test, len), *dst = shca_err_buf(test, len);
	struct ib_sge sge = shca_dp_sge(dp, src, len);
	struct ib_rdma_wr wr;
	struct ib_mr *mr;
	int i;

	mr = shca_dp_frwr(dp, 1, dst, len, IB_ACCESS_REMOTE_WRITE |
			  IB_ACCESS_LOCAL_WRITE);
	wr = shca_err_write(&sge, dst, mr->rkey);
	for (i = 0; i < 32; i++)
		KUNIT_ASSERT_EQ(test, shca_dp_post_send(dp, 0, &wr.wr), 0);
	KUNIT_EXPECT_EQ(test, ib_destroy_qp(dp->qp[1]), 0);
	dp->qp[1] = NULL;
	KUNIT_EXPECT_EQ(test, ib_destroy_qp(dp->qp[0]), 0);
	dp->qp[0] = NULL;
	KUNIT_EXPECT_EQ(test, ib_dereg_mr(mr), 0);
}

/* The doorbell flag of @qp's send or receive queue, once its engine has gone idle. */
static u32 shca_err_doorbell(struct ib_qp *qp, bool send)
{
	struct shca_qp *sqp = to_shca_qp(qp);

	flush_work(&sqp->work);
	return READ_ONCE((send ? &sqp->sq : &sqp->rq)->queue.ctrl->doorbell);
}

/*
 * The doorbell protocol of the user rings (softhca-abi.h), which kernel
 * QPs keep too: the send queue asks for a doorbell once its engine is
 * idle, a receive queue only once a QP in error flushed it, and RESET
 * starts over with none asked for.
 */
static void shca_err_doorbells(struct kunit *test)
{
	struct shca_dp *dp = shca_err_setup(test, &shca_dp_rc);
	u8 *buf = shca_err_buf(test, 64);
	struct ib_sge sge = shca_dp_sge(dp, buf, 64);
	struct ib_send_wr wr = {
		.wr_id = 1, .opcode = IB_WR_SEND, .sg_list = &sge,
		.num_sge = 1,
	};
	struct ib_wc wc;

	KUNIT_ASSERT_EQ(test, shca_dp_post_recv(dp, 1, 9, buf, 64), 0);
	KUNIT_EXPECT_EQ(test, shca_err_status(test, dp, &wr), IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(test, shca_err_doorbell(dp->qp[0], true), 1);
	KUNIT_EXPECT_EQ(test, shca_err_doorbell(dp->qp[1], false), 0);

	KUNIT_ASSERT_EQ(test, shca_dp_post_recv(dp, 0, 10, buf, 64), 0);
	KUNIT_ASSERT_EQ(test, shca_dp_modify(dp->qp[0], IB_QPS_ERR), 0);
	KUNIT_ASSERT_TRUE(test, shca_dp_poll(dp, 0, &wc));
	KUNIT_EXPECT_EQ(test, wc.wr_id, 10);
	KUNIT_EXPECT_EQ(test, wc.status, IB_WC_WR_FLUSH_ERR);
	KUNIT_EXPECT_EQ(test, shca_err_doorbell(dp->qp[0], true), 1);
	KUNIT_EXPECT_EQ(test, shca_err_doorbell(dp->qp[0], false), 1);

	KUNIT_ASSERT_EQ(test, shca_dp_modify(dp->qp[0], IB_QPS_RESET), 0);
	KUNIT_EXPECT_EQ(test, shca_err_doorbell(dp->qp[0], true), 0);
	KUNIT_EXPECT_EQ(test, shca_err_doorbell(dp->qp[0], false), 0);
}

static void shca_err_fatal_event(struct ib_event *event, void *ctx)
{
	struct shca_dp *dp = ctx;

	if (event->event == IB_EVENT_QP_FATAL)
		atomic_inc(&dp->events);
	wake_up(&dp->wait);
}

/*
 * A producer index out of its ring's range (a process scribbling on its
 * own rings) breaks only that QP: it goes to ERR with IB_EVENT_QP_FATAL.
 * On a send queue the engine finds it; on a receive queue the responder,
 * and the requester then gets REM_OP_ERR.
 */
static void shca_err_ring_overrun(struct kunit *test)
{
	struct shca_dp *dp = shca_err_setup(test, &shca_dp_rc);
	struct shca_queue *sq = &to_shca_qp(dp->qp[0])->sq.queue;
	struct shca_queue *rq = &to_shca_qp(dp->qp[1])->rq.queue;
	u8 *buf = shca_err_buf(test, 64);
	struct ib_sge sge = shca_dp_sge(dp, buf, 64);
	struct ib_send_wr wr = {
		.wr_id = 1, .opcode = IB_WR_SEND, .sg_list = &sge,
		.num_sge = 1,
	};

	dp->qp[0]->event_handler = shca_err_fatal_event;
	dp->qp[1]->event_handler = shca_err_fatal_event;
	WRITE_ONCE(rq->ctrl->producer, rq->cons + rq->num + 1);
	KUNIT_EXPECT_EQ(test, shca_err_status(test, dp, &wr),
			IB_WC_REM_OP_ERR);
	KUNIT_EXPECT_EQ(test, shca_err_state(dp->qp[1]), IB_QPS_ERR);
	KUNIT_EXPECT_TRUE(test, wait_event_timeout(dp->wait,
						   atomic_read(&dp->events) == 1,
						   10 * HZ));

	/* A fresh pair, whose send queue's index is garbage when it runs. */
	shca_dp_teardown(dp);
	dp = shca_err_setup(test, &shca_dp_rc);
	sq = &to_shca_qp(dp->qp[0])->sq.queue;
	dp->qp[0]->event_handler = shca_err_fatal_event;
	KUNIT_ASSERT_EQ(test, shca_dp_modify(dp->qp[0], IB_QPS_SQD), 0);
	WRITE_ONCE(sq->ctrl->producer, sq->cons - 1);
	KUNIT_ASSERT_EQ(test, shca_dp_modify(dp->qp[0], IB_QPS_RTS), 0);
	KUNIT_EXPECT_TRUE(test, wait_event_timeout(dp->wait,
						   atomic_read(&dp->events) == 1,
						   10 * HZ));
	KUNIT_EXPECT_EQ(test, shca_err_state(dp->qp[0]), IB_QPS_ERR);
	KUNIT_EXPECT_EQ(test, shca_err_state(dp->qp[1]), IB_QPS_RTS);
}

static struct kunit_case shca_err_cases[] = {
	KUNIT_CASE(shca_err_mr_access),
	KUNIT_CASE(shca_err_qp_access),
	KUNIT_CASE(shca_err_pd),
	KUNIT_CASE(shca_err_range),
	KUNIT_CASE(shca_err_atomic_align),
	KUNIT_CASE(shca_err_local_key),
	KUNIT_CASE(shca_err_recv_len),
	KUNIT_CASE(shca_err_recv_key),
	KUNIT_CASE(shca_err_rnr_exceeded),
	KUNIT_CASE(shca_err_rnr_wait),
	KUNIT_CASE(shca_err_retry_exceeded),
	KUNIT_CASE(shca_err_uc_sqe),
	KUNIT_CASE(shca_err_ud_qkey),
	KUNIT_CASE(shca_err_destroy_in_flight),
	KUNIT_CASE(shca_err_doorbells),
	KUNIT_CASE(shca_err_ring_overrun),
	{}
};

static struct kunit_suite shca_err_suite = {
	.name = "softhca_errors",
	.suite_init = shca_err_fx_suite_init,
	.suite_exit = shca_err_fx_suite_exit,
	.init = shca_err_fx_init,
	.exit = shca_err_exit,
	.test_cases = shca_err_cases,
};

kunit_test_suite(shca_err_suite);
