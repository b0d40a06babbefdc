// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Data-path test bench: two connected QPs, built and torn down through
 * ib_core's API, as a kernel ULP would (see dp.h).
 */

#include <linux/delay.h>
#include <linux/etherdevice.h>
#include <linux/scatterlist.h>
#include <rdma/ib_cache.h>

#include "dev.h"
#include "dp.h"
#include "engine.h"
#include "qp.h"

/* Completions come from the engine's and notifier's work: TCG is slow. */
#define SHCA_DP_TIMEOUT (20 * HZ)

const struct shca_dp_opts shca_dp_rc = {
	.type = IB_QPT_RC,
	.access = IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE |
		  IB_ACCESS_REMOTE_READ | IB_ACCESS_REMOTE_ATOMIC,
	.rnr_retry = 7,
	.min_rnr_timer = 1,
	.timeout = 10,
	.retry_cnt = 3,
	.depth = 64,
	.sig = IB_SIGNAL_REQ_WR,
};

static void shca_dp_comp(struct ib_cq *cq, void *ctx)
{
	struct shca_dp *dp = ctx;

	atomic_inc(&dp->comps[cq == dp->cq[1]]);
	wake_up(&dp->wait);
}

static struct ib_device *shca_dp_dev(const struct shca_dp *dp, int i)
{
	return dp->qp[i] ? dp->qp[i]->device : dp->cq[i]->device;
}

/* ib_core fills GID tables from a work queue: wait for GID 0. */
static int shca_dp_gid(struct ib_device *ibdev, union ib_gid *gid)
{
	int tries, ret = -ENOENT;

	for (tries = 0; tries < 200 && ret; tries++) {
		ret = rdma_query_gid(ibdev, SHCA_PORT, 0, gid);
		if (ret)
			msleep(50);
	}
	return ret;
}

/* A RoCE address vector to GID 0 of @to, with its MAC resolved. */
static void shca_dp_av(struct shca_dp *dp, struct ib_device *to,
		       struct rdma_ah_attr *ah)
{
	union ib_gid dgid;

	KUNIT_ASSERT_EQ(dp->test, shca_dp_gid(to, &dgid), 0);
	*ah = (struct rdma_ah_attr){ .type = RDMA_AH_ATTR_TYPE_ROCE };
	rdma_ah_set_port_num(ah, SHCA_PORT);
	rdma_ah_set_grh(ah, &dgid, 0, 0, 64, 0);
	ether_addr_copy(ah->roce.dmac, to_shca_dev(to)->ndev->dev_addr);
}

int shca_dp_modify(struct ib_qp *qp, enum ib_qp_state state)
{
	struct ib_qp_attr attr = { .qp_state = state };

	return ib_modify_qp(qp, &attr, IB_QP_STATE);
}

static void shca_dp_connect(struct shca_dp *dp, int i,
			    const struct shca_dp_opts *o)
{
	struct ib_qp *qp = dp->qp[i], *to = dp->qp[!i];
	struct ib_qp_attr attr = {
		.qp_state = IB_QPS_INIT,
		.port_num = SHCA_PORT,
		.qp_access_flags = o->access,
		.qkey = o->qkey ?: 0x1234,
	};
	bool ud = o->type == IB_QPT_UD, rc = o->type == IB_QPT_RC;
	int mask = IB_QP_STATE | IB_QP_PKEY_INDEX | IB_QP_PORT;

	mask |= ud ? IB_QP_QKEY : IB_QP_ACCESS_FLAGS;
	KUNIT_ASSERT_EQ(dp->test, ib_modify_qp(qp, &attr, mask), 0);

	attr.qp_state = IB_QPS_RTR;
	mask = IB_QP_STATE;
	if (!ud) {
		attr.path_mtu = IB_MTU_1024;
		attr.dest_qp_num = to->qp_num;
		attr.max_dest_rd_atomic = 16;
		attr.min_rnr_timer = o->min_rnr_timer;
		shca_dp_av(dp, to->device, &attr.ah_attr);
		mask |= IB_QP_AV | IB_QP_PATH_MTU | IB_QP_DEST_QPN |
			IB_QP_RQ_PSN;
		if (rc)
			mask |= IB_QP_MAX_DEST_RD_ATOMIC | IB_QP_MIN_RNR_TIMER;
	}
	KUNIT_ASSERT_EQ(dp->test, ib_modify_qp(qp, &attr, mask), 0);

	attr.qp_state = IB_QPS_RTS;
	attr.timeout = o->timeout;
	attr.retry_cnt = o->retry_cnt;
	attr.rnr_retry = o->rnr_retry;
	attr.max_rd_atomic = 16;
	mask = IB_QP_STATE | IB_QP_SQ_PSN;
	if (rc)
		mask |= IB_QP_TIMEOUT | IB_QP_RETRY_CNT | IB_QP_RNR_RETRY |
			IB_QP_MAX_QP_RD_ATOMIC;
	KUNIT_ASSERT_EQ(dp->test, ib_modify_qp(qp, &attr, mask), 0);
}

static void shca_dp_create_qp(struct shca_dp *dp, int i, struct ib_pd *pd,
			      const struct shca_dp_opts *o)
{
	struct ib_qp_init_attr init = {
		.qp_context = dp,
		.send_cq = dp->cq[i],
		.recv_cq = dp->cq[i],
		.srq = dp->srq,
		.cap = {
			.max_send_wr = o->depth,
			.max_recv_wr = o->srq ? 0 : o->depth,
			.max_send_sge = 4,
			.max_recv_sge = o->srq ? 0 : 4,
			.max_inline_data = 64,
		},
		.sq_sig_type = o->sig,
		.qp_type = o->type,
	};

	dp->qp[i] = ib_create_qp(pd, &init);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(dp->test, dp->qp[i]);
}

static void shca_dp_create(struct shca_dp *dp, int i, struct ib_device *ibdev,
			   struct ib_pd *pd, const struct shca_dp_opts *o)
{
	struct ib_cq_init_attr cq_attr = { .cqe = 2 * o->depth + 8 };

	dp->cq[i] = ib_create_cq(ibdev, o->comp ?: shca_dp_comp, NULL, dp,
				 &cq_attr);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(dp->test, dp->cq[i]);
	shca_dp_create_qp(dp, i, pd, o);
}

/**
 * shca_dp_setup() - two QPs connected to each other, in RTS
 * @test: the test, whose assertions stop it on a failure
 * @fx: the fixture whose device holds QP 0 (and QP 1, unless @opts->peer)
 * @dp: the bench to fill; shca_dp_teardown() undoes it even half-built
 * @opts: how
 */
void shca_dp_setup(struct kunit *test, struct shca_fixture *fx,
		   struct shca_dp *dp, const struct shca_dp_opts *opts)
{
	struct ib_srq_init_attr srq_init = {
		.attr = { .max_wr = opts->depth, .max_sge = 4 },
	};
	struct ib_device *dev1 = opts->peer ?: fx->ibdev;
	struct rdma_ah_attr av;
	int i;

	*dp = (struct shca_dp){ .test = test, .fx = fx };
	init_waitqueue_head(&dp->wait);
	dp->pd = ib_alloc_pd(fx->ibdev, IB_PD_UNSAFE_GLOBAL_RKEY);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, dp->pd);
	if (opts->srq) {
		srq_init.srq_context = dp;
		dp->srq = ib_create_srq(dp->pd, &srq_init);
		KUNIT_ASSERT_NOT_ERR_OR_NULL(test, dp->srq);
	}
	shca_dp_create(dp, 0, fx->ibdev, dp->pd, opts);
	shca_dp_create(dp, 1, dev1, opts->peer_pd ?: dp->pd, opts);
	for (i = 0; i < 2; i++)
		shca_dp_connect(dp, i, opts);
	if (opts->type != IB_QPT_UD)
		return;
	for (i = 0; i < 2; i++) {
		shca_dp_av(dp, shca_dp_dev(dp, !i), &av);
		dp->ah[i] = rdma_create_ah(dp->qp[i]->pd, &av, 0);
		KUNIT_ASSERT_NOT_ERR_OR_NULL(test, dp->ah[i]);
	}
}

void shca_dp_teardown(struct shca_dp *dp)
{
	int i;

	for (i = 1; i >= 0; i--) {
		if (!IS_ERR_OR_NULL(dp->ah[i]))
			rdma_destroy_ah(dp->ah[i], 0);
		if (!IS_ERR_OR_NULL(dp->qp[i]))
			ib_destroy_qp(dp->qp[i]);
		if (!IS_ERR_OR_NULL(dp->cq[i]))
			ib_destroy_cq_user(dp->cq[i], NULL);
	}
	if (!IS_ERR_OR_NULL(dp->srq))
		ib_destroy_srq_user(dp->srq, NULL);
	if (!IS_ERR_OR_NULL(dp->pd))
		ib_dealloc_pd(dp->pd);
	*dp = (struct shca_dp){};
}

/* An SGE for a kernel buffer: its DMA address is its virtual address. */
struct ib_sge shca_dp_sge(struct shca_dp *dp, void *buf, u32 len)
{
	return (struct ib_sge){
		.addr = (uintptr_t)buf,
		.length = len,
		.lkey = dp->qp[0]->pd->local_dma_lkey,
	};
}

int shca_dp_post_recv(struct shca_dp *dp, int i, u64 wr_id, void *buf,
		      u32 len)
{
	struct ib_sge sge = shca_dp_sge(dp, buf, len);
	struct ib_recv_wr wr = {
		.wr_id = wr_id,
		.sg_list = &sge,
		.num_sge = 1,
	};
	const struct ib_recv_wr *bad;

	if (dp->srq)
		return ib_post_srq_recv(dp->srq, &wr, &bad);
	return ib_post_recv(dp->qp[i], &wr, &bad);
}

int shca_dp_post_send(struct shca_dp *dp, int i, struct ib_send_wr *wr)
{
	const struct ib_send_wr *bad;

	return ib_post_send(dp->qp[i], wr, &bad);
}

/* Waits for one completion of QP @i's CQ. */
bool shca_dp_poll(struct shca_dp *dp, int i, struct ib_wc *wc)
{
	unsigned long end = jiffies + SHCA_DP_TIMEOUT;

	do {
		if (ib_poll_cq(dp->cq[i], 1, wc) == 1)
			return true;
		usleep_range(20, 200);
	} while (time_before(jiffies, end));
	return false;
}

/* True when QP @i's CQ is still empty after the engine went idle. */
bool shca_dp_cq_empty(struct shca_dp *dp, int i)
{
	struct ib_wc wc;

	msleep(20);
	return ib_poll_cq(dp->cq[i], 1, &wc) == 0;
}

/* A pattern that differs with @seed and with every byte's position. */
void shca_dp_fill(void *buf, size_t len, u32 seed)
{
	u8 *p = buf;
	size_t i;

	for (i = 0; i < len; i++)
		p[i] = (u8)(seed * 131 + i * 7 + (i >> 8));
}

/**
 * shca_dp_frwr() - a fast-registration MR over a buffer, registered by a
 * REG_MR work request on QP @i, the way storage ULPs register memory
 * @dp: the bench
 * @i: the QP whose PD and send queue register it
 * @buf: kernel memory (kmalloc)
 * @len: its length
 * @access: IB_ACCESS_* to grant
 *
 * Return: the MR (ib_dereg_mr() it), valid with its new key.
 */
struct ib_mr *shca_dp_frwr(struct shca_dp *dp, int i, void *buf, u32 len,
			   int access)
{
	struct ib_device *ibdev = dp->qp[i]->device;
	u32 pages = DIV_ROUND_UP(offset_in_page(buf) + len, PAGE_SIZE);
	struct scatterlist sg;
	struct ib_reg_wr wr;
	struct ib_mr *mr;
	struct ib_wc wc;

	mr = ib_alloc_mr(dp->qp[i]->pd, IB_MR_TYPE_MEM_REG, pages);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(dp->test, mr);
	sg_init_one(&sg, buf, len);
	KUNIT_ASSERT_EQ(dp->test, ib_dma_map_sg(ibdev, &sg, 1,
						DMA_BIDIRECTIONAL), 1);
	KUNIT_ASSERT_EQ(dp->test, ib_map_mr_sg(mr, &sg, 1, NULL, PAGE_SIZE),
			1);
	ib_update_fast_reg_key(mr, ib_inc_rkey(mr->rkey) & 0xff);
	wr = (struct ib_reg_wr){
		.wr = {
			.wr_id = 0xfeed,
			.opcode = IB_WR_REG_MR,
			.send_flags = IB_SEND_SIGNALED,
		},
		.mr = mr,
		.key = mr->rkey,
		.access = access,
	};
	KUNIT_ASSERT_EQ(dp->test, shca_dp_post_send(dp, i, &wr.wr), 0);
	KUNIT_ASSERT_TRUE(dp->test, shca_dp_poll(dp, i, &wc));
	KUNIT_EXPECT_EQ(dp->test, wc.status, IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(dp->test, wc.opcode, IB_WC_REG_MR);
	KUNIT_EXPECT_EQ(dp->test, wc.wr_id, 0xfeed);
	return mr;
}

struct shca_dp_held {
	struct work_struct work;
	struct shca_dp *dp;
	void (*verb)(struct shca_dp *dp);
	struct completion done;
};

static void shca_dp_held_verb(struct work_struct *work)
{
	struct shca_dp_held *h = container_of(work, struct shca_dp_held, work);

	h->verb(h->dp);
	complete(&h->done);
}

/**
 * shca_dp_engine_held() - a verb called while a QP's engine is busy
 * @dp: the bench
 * @i: the QP whose engine is held
 * @post: posts, with the engine held, what @verb must not lose
 * @verb: the verb, called in a worker once @post returned
 * @wait: how long the engine stays held unless @verb returns first
 *
 * The engine is held as a run of it in progress elsewhere holds it: what
 * @post rings for waits, and @verb, if it waits for the engine, returns
 * only once the engine is released, after @wait.  The one place the bench
 * reaches inside softhca (shca_engine_lock()).
 *
 * Return: whether @verb returned while the engine was held.
 */
bool shca_dp_engine_held(struct shca_dp *dp, int i,
			 void (*post)(struct shca_dp *dp),
			 void (*verb)(struct shca_dp *dp), unsigned long wait)
{
	struct shca_qp *qp = to_shca_qp(dp->qp[i]);
	struct shca_dp_held h = { .dp = dp, .verb = verb };
	bool returned;

	init_completion(&h.done);
	INIT_WORK_ONSTACK(&h.work, shca_dp_held_verb);
	shca_engine_lock(qp);
	post(dp);
	queue_work(system_unbound_wq, &h.work);
	returned = wait_for_completion_timeout(&h.done, wait);
	shca_engine_unlock(qp);
	if (!returned)
		wait_for_completion(&h.done);
	destroy_work_on_stack(&h.work);
	return returned;
}
