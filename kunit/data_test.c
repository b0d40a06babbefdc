// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * softhca_data: every opcode moves the right bytes.  Each case posts work
 * requests through ib_core between two loopback-connected QPs and reads
 * the destination back: multi-SGE and unaligned lists, zero-length and
 * inline sends, immediates and invalidations delivered, atomics correct
 * while other CPUs update the same word, UD with its GRH, ib_mad's GSI
 * QP answering, UC, SRQs, and QPs on two devices of the host.  UD sends
 * posted before their AH or their QP is destroyed leave all the same.
 */

#include <linux/kthread.h>
#include <linux/slab.h>
#include <rdma/ib_cache.h>
#include <rdma/ib_mad.h>
#include <rdma/ib_verbs.h>

#include "dp.h"
#include "fixture.h"

static struct shca_fixture shca_data_fx, shca_data_fx2;
static struct shca_dp shca_data_dp;

static int shca_data_suite_init(struct kunit_suite *suite)
{
	int ret = shca_fixture_setup(&shca_data_fx, "softhca_ktdata");

	if (ret)
		return ret;
	ret = shca_fixture_setup(&shca_data_fx2, "softhca_ktdata2");
	if (ret)
		shca_fixture_teardown(&shca_data_fx);
	return ret;
}

static void shca_data_suite_exit(struct kunit_suite *suite)
{
	shca_fixture_teardown(&shca_data_fx2);
	shca_fixture_teardown(&shca_data_fx);
}

static int shca_data_init(struct kunit *test)
{
	test->priv = &shca_data_dp;
	return 0;
}

static void shca_data_exit(struct kunit *test)
{
	shca_dp_teardown(&shca_data_dp);
}

static struct shca_dp *shca_data_rc(struct kunit *test)
{
	shca_dp_setup(test, &shca_data_fx, test->priv, &shca_dp_rc);
	return test->priv;
}

static void *shca_data_buf(struct kunit *test, size_t len)
{
	void *buf = kunit_kzalloc(test, len, GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, buf);
	return buf;
}

static void shca_expect_wc(struct kunit *test, struct shca_dp *dp, int i,
			   u64 wr_id, enum ib_wc_opcode opcode, u32 byte_len)
{
	struct ib_wc wc;

	KUNIT_ASSERT_TRUE(test, shca_dp_poll(dp, i, &wc));
	KUNIT_EXPECT_EQ(test, wc.status, IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(test, wc.wr_id, wr_id);
	KUNIT_EXPECT_EQ(test, wc.opcode, opcode);
	KUNIT_EXPECT_PTR_EQ(test, wc.qp, dp->qp[i]);
	if (opcode & IB_WC_RECV || opcode == IB_WC_RDMA_READ)
		KUNIT_EXPECT_EQ(test, wc.byte_len, byte_len);
}

/* 3 unaligned source SGEs, one across a page boundary, into 2 sinks. */
static void shca_data_send_sges(struct kunit *test)
{
	struct shca_dp *dp = shca_data_rc(test);
	u8 *src = shca_data_buf(test, 3 * PAGE_SIZE);
	u8 *dst = shca_data_buf(test, 3 * PAGE_SIZE);
	u8 *want = shca_data_buf(test, 3 * PAGE_SIZE);
	struct ib_sge ss[3] = {
		shca_dp_sge(dp, src + 1, 100),
		shca_dp_sge(dp, src + 333, 1),
		shca_dp_sge(dp, src + PAGE_SIZE - 7, 4000),
	};
	struct ib_sge rs[2] = {
		shca_dp_sge(dp, dst + 3, 2000),
		shca_dp_sge(dp, dst + 2 * PAGE_SIZE + 5, 3000),
	};
	struct ib_recv_wr rwr = { .wr_id = 7, .sg_list = rs, .num_sge = 2 };
	struct ib_send_wr swr = {
		.wr_id = 8, .opcode = IB_WR_SEND, .sg_list = ss, .num_sge = 3,
		.send_flags = IB_SEND_SIGNALED,
	};
	const struct ib_recv_wr *bad;

	shca_dp_fill(src, 3 * PAGE_SIZE, 1);
	memcpy(want, src + 1, 100);
	memcpy(want + 100, src + 333, 1);
	memcpy(want + 101, src + PAGE_SIZE - 7, 4000);
	KUNIT_ASSERT_EQ(test, ib_post_recv(dp->qp[1], &rwr, &bad), 0);
	KUNIT_ASSERT_EQ(test, shca_dp_post_send(dp, 0, &swr), 0);
	shca_expect_wc(test, dp, 0, 8, IB_WC_SEND, 0);
	shca_expect_wc(test, dp, 1, 7, IB_WC_RECV, 4101);
	KUNIT_EXPECT_EQ(test, memcmp(dst + 3, want, 2000), 0);
	KUNIT_EXPECT_EQ(test, memcmp(dst + 2 * PAGE_SIZE + 5, want + 2000,
				     2101), 0);
	/* Bytes around the sinks untouched. */
	KUNIT_EXPECT_EQ(test, dst[2] | dst[2003] | dst[2 * PAGE_SIZE + 4] |
			dst[2 * PAGE_SIZE + 5 + 2101], 0);
}

/* SEND_WITH_IMM: the immediate, and the source QP, reach the receiver. */
static void shca_data_send_imm(struct kunit *test)
{
	struct shca_dp *dp = shca_data_rc(test);
	u8 *src = shca_data_buf(test, 64), *dst = shca_data_buf(test, 64);
	struct ib_sge sge = shca_dp_sge(dp, src, 64);
	struct ib_send_wr wr = {
		.wr_id = 1, .opcode = IB_WR_SEND_WITH_IMM, .sg_list = &sge,
		.num_sge = 1, .send_flags = IB_SEND_SIGNALED,
		.ex.imm_data = cpu_to_be32(0xfeedbeef),
	};
	struct ib_wc wc;

	shca_dp_fill(src, 64, 2);
	KUNIT_ASSERT_EQ(test, shca_dp_post_recv(dp, 1, 2, dst, 64), 0);
	KUNIT_ASSERT_EQ(test, shca_dp_post_send(dp, 0, &wr), 0);
	shca_expect_wc(test, dp, 0, 1, IB_WC_SEND, 0);
	KUNIT_ASSERT_TRUE(test, shca_dp_poll(dp, 1, &wc));
	KUNIT_EXPECT_EQ(test, wc.status, IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(test, wc.opcode, IB_WC_RECV);
	KUNIT_EXPECT_TRUE(test, wc.wc_flags & IB_WC_WITH_IMM);
	KUNIT_EXPECT_EQ(test, be32_to_cpu(wc.ex.imm_data), 0xfeedbeef);
	KUNIT_EXPECT_EQ(test, wc.src_qp, dp->qp[0]->qp_num);
	KUNIT_EXPECT_EQ(test, memcmp(src, dst, 64), 0);
}

/* A zero-length SEND consumes a receive and completes with 0 bytes. */
static void shca_data_send_empty(struct kunit *test)
{
	struct shca_dp *dp = shca_data_rc(test);
	u8 *dst = shca_data_buf(test, 16);
	struct ib_send_wr wr = {
		.wr_id = 3, .opcode = IB_WR_SEND,
		.send_flags = IB_SEND_SIGNALED,
	};

	KUNIT_ASSERT_EQ(test, shca_dp_post_recv(dp, 1, 4, dst, 16), 0);
	KUNIT_ASSERT_EQ(test, shca_dp_post_send(dp, 0, &wr), 0);
	shca_expect_wc(test, dp, 0, 3, IB_WC_SEND, 0);
	shca_expect_wc(test, dp, 1, 4, IB_WC_RECV, 0);
}

/* Inline data is taken at post time: changing the source after is safe. */
static void shca_data_send_inline(struct kunit *test)
{
	struct shca_dp *dp = shca_data_rc(test);
	u8 *src = shca_data_buf(test, 64), *dst = shca_data_buf(test, 64);
	u8 *want = shca_data_buf(test, 64);
	struct ib_sge sge[2] = {
		shca_dp_sge(dp, src + 1, 30),
		shca_dp_sge(dp, src + 40, 20),
	};
	struct ib_send_wr wr = {
		.wr_id = 5, .opcode = IB_WR_SEND, .sg_list = sge, .num_sge = 2,
		.send_flags = IB_SEND_SIGNALED | IB_SEND_INLINE,
	};

	shca_dp_fill(src, 64, 3);
	memcpy(want, src + 1, 30);
	memcpy(want + 30, src + 40, 20);
	/* No key is needed for inline data. */
	sge[0].lkey = 0xdead00;
	KUNIT_ASSERT_EQ(test, shca_dp_post_recv(dp, 1, 6, dst, 64), 0);
	KUNIT_ASSERT_EQ(test, shca_dp_post_send(dp, 0, &wr), 0);
	memset(src, 0, 64);
	shca_expect_wc(test, dp, 0, 5, IB_WC_SEND, 0);
	shca_expect_wc(test, dp, 1, 6, IB_WC_RECV, 50);
	KUNIT_EXPECT_EQ(test, memcmp(dst, want, 50), 0);
}

static void shca_data_post_write(struct kunit *test, struct shca_dp *dp,
				 enum ib_wr_opcode op, struct ib_sge *sge,
				 int num_sge, void *to, u32 rkey)
{
	struct ib_rdma_wr wr = {
		.wr = {
			.wr_id = 10, .opcode = op, .sg_list = sge,
			.num_sge = num_sge, .send_flags = IB_SEND_SIGNALED,
			.ex.imm_data = cpu_to_be32(0x5151),
		},
		.remote_addr = (uintptr_t)to,
		.rkey = rkey,
	};

	KUNIT_ASSERT_EQ(test, shca_dp_post_send(dp, 0, &wr.wr), 0);
}

/* A WRITE with @rkey is refused, and @len bytes at @to stay zero. */
static void shca_data_expect_refused(struct kunit *test, struct shca_dp *dp,
				     struct ib_sge *sge, u8 *to, u32 len,
				     u32 rkey)
{
	struct ib_wc wc;

	memset(to, 0, len);
	shca_data_post_write(test, dp, IB_WR_RDMA_WRITE, sge, 1, to, rkey);
	KUNIT_ASSERT_TRUE(test, shca_dp_poll(dp, 0, &wc));
	KUNIT_EXPECT_EQ(test, wc.status, IB_WC_REM_ACCESS_ERR);
	KUNIT_EXPECT_TRUE(test, !memchr_inv(to, 0, len));
}

/* RDMA WRITE from 2 SGEs to an unaligned remote address, exactly. */
static void shca_data_write(struct kunit *test)
{
	struct shca_dp *dp = shca_data_rc(test);
	u8 *src = shca_data_buf(test, 2 * PAGE_SIZE);
	u8 *dst = shca_data_buf(test, 3 * PAGE_SIZE);
	struct ib_sge sge[2] = {
		shca_dp_sge(dp, src + 11, 5000),
		shca_dp_sge(dp, src + 3, 7),
	};

	shca_dp_fill(src, 2 * PAGE_SIZE, 4);
	shca_data_post_write(test, dp, IB_WR_RDMA_WRITE, sge, 2, dst + 99,
			     dp->pd->unsafe_global_rkey);
	shca_expect_wc(test, dp, 0, 10, IB_WC_RDMA_WRITE, 0);
	KUNIT_EXPECT_EQ(test, memcmp(dst + 99, src + 11, 5000), 0);
	KUNIT_EXPECT_EQ(test, memcmp(dst + 5099, src + 3, 7), 0);
	KUNIT_EXPECT_EQ(test, dst[98] | dst[5106], 0);
	/* Nothing reached the responder's CQ: a WRITE consumes no receive. */
	KUNIT_EXPECT_TRUE(test, shca_dp_cq_empty(dp, 1));
}

/* WRITE_WITH_IMM: data placed, and a receive completes with the imm. */
static void shca_data_write_imm(struct kunit *test)
{
	struct shca_dp *dp = shca_data_rc(test);
	u8 *src = shca_data_buf(test, 300), *dst = shca_data_buf(test, 300);
	struct ib_sge sge = shca_dp_sge(dp, src, 300);
	struct ib_wc wc;

	shca_dp_fill(src, 300, 5);
	KUNIT_ASSERT_EQ(test, shca_dp_post_recv(dp, 1, 11, NULL, 0), 0);
	shca_data_post_write(test, dp, IB_WR_RDMA_WRITE_WITH_IMM, &sge, 1,
			     dst, dp->pd->unsafe_global_rkey);
	shca_expect_wc(test, dp, 0, 10, IB_WC_RDMA_WRITE, 0);
	KUNIT_ASSERT_TRUE(test, shca_dp_poll(dp, 1, &wc));
	KUNIT_EXPECT_EQ(test, wc.status, IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(test, wc.wr_id, 11);
	KUNIT_EXPECT_EQ(test, wc.opcode, IB_WC_RECV_RDMA_WITH_IMM);
	KUNIT_EXPECT_EQ(test, wc.byte_len, 300);
	KUNIT_EXPECT_TRUE(test, wc.wc_flags & IB_WC_WITH_IMM);
	KUNIT_EXPECT_EQ(test, be32_to_cpu(wc.ex.imm_data), 0x5151);
	KUNIT_EXPECT_EQ(test, memcmp(src, dst, 300), 0);
}

/* RDMA READ into 3 unaligned SGEs. */
static void shca_data_read(struct kunit *test)
{
	struct shca_dp *dp = shca_data_rc(test);
	u8 *remote = shca_data_buf(test, 2 * PAGE_SIZE);
	u8 *local = shca_data_buf(test, 2 * PAGE_SIZE);
	struct ib_sge sge[3] = {
		shca_dp_sge(dp, local + 1, 10),
		shca_dp_sge(dp, local + 100, 0),
		shca_dp_sge(dp, local + 200, 6000),
	};
	struct ib_rdma_wr wr = {
		.wr = {
			.wr_id = 12, .opcode = IB_WR_RDMA_READ, .sg_list = sge,
			.num_sge = 3, .send_flags = IB_SEND_SIGNALED,
		},
		.remote_addr = (uintptr_t)remote + 17,
		.rkey = dp->pd->unsafe_global_rkey,
	};

	shca_dp_fill(remote, 2 * PAGE_SIZE, 6);
	KUNIT_ASSERT_EQ(test, shca_dp_post_send(dp, 0, &wr.wr), 0);
	shca_expect_wc(test, dp, 0, 12, IB_WC_RDMA_READ, 6010);
	KUNIT_EXPECT_EQ(test, memcmp(local + 1, remote + 17, 10), 0);
	KUNIT_EXPECT_EQ(test, memcmp(local + 200, remote + 27, 6000), 0);
	KUNIT_EXPECT_EQ(test, local[0] | local[11] | local[199], 0);
}

static u64 shca_data_atomic(struct kunit *test, struct shca_dp *dp, int i,
			    enum ib_wr_opcode op, u64 *target, u32 rkey,
			    u64 add, u64 swap)
{
	u64 *orig = shca_data_buf(test, sizeof(u64));
	struct ib_sge sge = shca_dp_sge(dp, orig, sizeof(u64));
	struct ib_atomic_wr wr = {
		.wr = {
			.wr_id = 13, .opcode = op, .sg_list = &sge,
			.num_sge = 1, .send_flags = IB_SEND_SIGNALED,
		},
		.remote_addr = (uintptr_t)target,
		.compare_add = add,
		.swap = swap,
		.rkey = rkey,
	};
	struct ib_wc wc;

	*orig = 0xbad;
	KUNIT_EXPECT_EQ(test, shca_dp_post_send(dp, i, &wr.wr), 0);
	KUNIT_EXPECT_TRUE(test, shca_dp_poll(dp, i, &wc));
	KUNIT_EXPECT_EQ(test, wc.status, rkey == dp->pd->unsafe_global_rkey ?
			IB_WC_REM_ACCESS_ERR : IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(test, wc.opcode, op == IB_WR_ATOMIC_CMP_AND_SWP ?
			IB_WC_COMP_SWAP : IB_WC_FETCH_ADD);
	return *orig;
}

/*
 * Atomics need an MR with REMOTE_ATOMIC: the PD's global rkey (read and
 * write only) is refused.  Compare-and-swap swaps only on a match; both
 * return the old value.
 */
static void shca_data_atomics(struct kunit *test)
{
	struct shca_dp *dp = shca_data_rc(test);
	u64 *target = shca_data_buf(test, 16);
	u32 rkey = dp->pd->unsafe_global_rkey;
	struct ib_mr *mr;

	*target = 100;
	mr = shca_dp_frwr(dp, 1, target, 16, IB_ACCESS_REMOTE_ATOMIC |
			  IB_ACCESS_LOCAL_WRITE);
	KUNIT_EXPECT_EQ(test, shca_data_atomic(test, dp, 0,
					       IB_WR_ATOMIC_CMP_AND_SWP,
					       target, mr->rkey, 99, 7), 100);
	KUNIT_EXPECT_EQ(test, *target, 100);
	KUNIT_EXPECT_EQ(test, shca_data_atomic(test, dp, 0,
					       IB_WR_ATOMIC_CMP_AND_SWP,
					       target, mr->rkey, 100, 7), 100);
	KUNIT_EXPECT_EQ(test, *target, 7);
	KUNIT_EXPECT_EQ(test, shca_data_atomic(test, dp, 0,
					       IB_WR_ATOMIC_FETCH_AND_ADD,
					       target, mr->rkey, 1ULL << 40,
					       0), 7);
	KUNIT_EXPECT_EQ(test, *target, 7 + (1ULL << 40));
	KUNIT_EXPECT_EQ(test, ib_dereg_mr(mr), 0);
	/* The wc of a refused atomic is checked by shca_data_atomic(). */
	KUNIT_EXPECT_EQ(test, shca_data_atomic(test, dp, 0,
					       IB_WR_ATOMIC_FETCH_AND_ADD,
					       target, rkey, 1, 0), 0xbad);
}

#define SHCA_ATOMIC_OPS 2000

struct shca_adder {
	struct kunit *test;
	struct shca_dp *dp;
	int qp;
	u64 *target;
	u32 rkey;
	u64 *origs;
	struct completion done;
};

/* Keeps a window of FETCH_ADDs of 1 in flight on one QP. */
static void shca_data_adder(struct shca_adder *a)
{
	struct ib_sge sge;
	struct ib_atomic_wr wr = {
		.wr = { .opcode = IB_WR_ATOMIC_FETCH_AND_ADD, .num_sge = 1,
			.sg_list = &sge, .send_flags = IB_SEND_SIGNALED },
		.remote_addr = (uintptr_t)a->target,
		.compare_add = 1,
		.rkey = a->rkey,
	};
	int posted = 0, done = 0;
	struct ib_wc wc;

	while (done < SHCA_ATOMIC_OPS) {
		while (posted < SHCA_ATOMIC_OPS && posted - done < 16) {
			sge = shca_dp_sge(a->dp, &a->origs[posted], 8);
			wr.wr.wr_id = posted;
			if (shca_dp_post_send(a->dp, a->qp, &wr.wr))
				return;
			posted++;
		}
		if (!shca_dp_poll(a->dp, a->qp, &wc) ||
		    wc.status != IB_WC_SUCCESS)
			return;
		done++;
	}
}

static int shca_data_adder_thread(void *arg)
{
	struct shca_adder *a = arg;

	shca_data_adder(a);
	complete(&a->done);
	return 0;
}

/*
 * Both QPs add 1 to the same word 2000 times each, while this CPU adds 1
 * with atomic64_inc(): no update is lost, and each QP sees the old values
 * increase strictly, as sequential atomics on one QP must.
 */
static void shca_data_atomics_concurrent(struct kunit *test)
{
	struct shca_dp *dp = shca_data_rc(test);
	u64 *target = shca_data_buf(test, 8);
	struct shca_adder a[2];
	struct task_struct *t;
	int i, j, local = 0;
	struct ib_mr *mr;

	mr = shca_dp_frwr(dp, 1, target, 8, IB_ACCESS_REMOTE_ATOMIC |
			  IB_ACCESS_LOCAL_WRITE);
	for (i = 0; i < 2; i++) {
		a[i] = (struct shca_adder){ .test = test, .dp = dp, .qp = i,
					    .target = target,
					    .rkey = mr->rkey };
		a[i].origs = shca_data_buf(test, 8 * SHCA_ATOMIC_OPS);
		init_completion(&a[i].done);
		t = kthread_run(shca_data_adder_thread, &a[i], "shca_add%d", i);
		KUNIT_ASSERT_FALSE(test, IS_ERR(t));
	}
	while (!completion_done(&a[0].done) || !completion_done(&a[1].done)) {
		atomic64_inc((atomic64_t *)target);
		local++;
		cond_resched();
	}
	KUNIT_EXPECT_EQ(test, *target, 2 * SHCA_ATOMIC_OPS + local);
	for (i = 0; i < 2; i++) {
		for (j = 1; j < SHCA_ATOMIC_OPS - 1; j++)
			if (a[i].origs[j] <= a[i].origs[j - 1])
				break;
		KUNIT_EXPECT_GT_MSG(test, a[i].origs[j], a[i].origs[j - 1],
				    "QP %d, FETCH_ADD %d", i, j);
	}
	KUNIT_EXPECT_EQ(test, ib_dereg_mr(mr), 0);
}

/* REG_MR grants access; LOCAL_INV withdraws it. */
static void shca_data_frwr(struct kunit *test)
{
	struct shca_dp *dp = shca_data_rc(test);
	u8 *src = shca_data_buf(test, 512), *dst = shca_data_buf(test, 512);
	struct ib_sge sge = shca_dp_sge(dp, src, 512);
	struct ib_send_wr inv = {
		.wr_id = 14, .opcode = IB_WR_LOCAL_INV,
		.send_flags = IB_SEND_SIGNALED,
	};
	struct ib_mr *mr;

	shca_dp_fill(src, 512, 7);
	mr = shca_dp_frwr(dp, 1, dst, 512, IB_ACCESS_LOCAL_WRITE |
			  IB_ACCESS_REMOTE_WRITE);
	shca_data_post_write(test, dp, IB_WR_RDMA_WRITE, &sge, 1, dst,
			     mr->rkey);
	shca_expect_wc(test, dp, 0, 10, IB_WC_RDMA_WRITE, 0);
	KUNIT_EXPECT_EQ(test, memcmp(src, dst, 512), 0);

	inv.ex.invalidate_rkey = mr->rkey;
	KUNIT_ASSERT_EQ(test, shca_dp_post_send(dp, 1, &inv), 0);
	shca_expect_wc(test, dp, 1, 14, IB_WC_LOCAL_INV, 0);
	shca_data_expect_refused(test, dp, &sge, dst, 512, mr->rkey);
	KUNIT_EXPECT_EQ(test, ib_dereg_mr(mr), 0);
}

/* SEND_WITH_INV invalidates the receiver's MR and says which. */
static void shca_data_send_inv(struct kunit *test)
{
	struct shca_dp *dp = shca_data_rc(test);
	u8 *buf = shca_data_buf(test, 256), *dst = shca_data_buf(test, 64);
	struct ib_send_wr wr = {
		.wr_id = 15, .opcode = IB_WR_SEND_WITH_INV,
		.send_flags = IB_SEND_SIGNALED,
	};
	struct ib_sge sge = shca_dp_sge(dp, dst, 64);
	struct ib_mr *mr;
	struct ib_wc wc;

	mr = shca_dp_frwr(dp, 1, buf, 256, IB_ACCESS_REMOTE_WRITE |
			  IB_ACCESS_LOCAL_WRITE);
	wr.ex.invalidate_rkey = mr->rkey;
	KUNIT_ASSERT_EQ(test, shca_dp_post_recv(dp, 1, 16, dst, 64), 0);
	KUNIT_ASSERT_EQ(test, shca_dp_post_send(dp, 0, &wr), 0);
	shca_expect_wc(test, dp, 0, 15, IB_WC_SEND, 0);
	KUNIT_ASSERT_TRUE(test, shca_dp_poll(dp, 1, &wc));
	KUNIT_EXPECT_EQ(test, wc.status, IB_WC_SUCCESS);
	KUNIT_EXPECT_TRUE(test, wc.wc_flags & IB_WC_WITH_INVALIDATE);
	KUNIT_EXPECT_EQ(test, wc.ex.invalidate_rkey, mr->rkey);

	/* The rkey no longer works. */
	shca_data_expect_refused(test, dp, &sge, buf, 256, mr->rkey);
	KUNIT_EXPECT_EQ(test, ib_dereg_mr(mr), 0);
}

/* With sq_sig_type REQ_WR, only signalled WRs complete; all execute. */
static void shca_data_unsignaled(struct kunit *test)
{
	struct shca_dp *dp = shca_data_rc(test);
	u8 *src = shca_data_buf(test, 64), *dst = shca_data_buf(test, 256);
	struct ib_sge sge = shca_dp_sge(dp, src, 64);
	struct ib_rdma_wr wr[4];
	int i;

	shca_dp_fill(src, 64, 8);
	for (i = 0; i < 4; i++)
		wr[i] = (struct ib_rdma_wr){
			.wr = { .wr_id = 20 + i, .opcode = IB_WR_RDMA_WRITE,
				.sg_list = &sge, .num_sge = 1,
				.next = i < 3 ? &wr[i + 1].wr : NULL,
				.send_flags = i == 3 ? IB_SEND_SIGNALED : 0 },
			.remote_addr = (uintptr_t)dst + 64 * i,
			.rkey = dp->pd->unsafe_global_rkey,
		};
	KUNIT_ASSERT_EQ(test, shca_dp_post_send(dp, 0, &wr[0].wr), 0);
	shca_expect_wc(test, dp, 0, 23, IB_WC_RDMA_WRITE, 0);
	KUNIT_EXPECT_TRUE(test, shca_dp_cq_empty(dp, 0));
	for (i = 0; i < 4; i++)
		KUNIT_EXPECT_EQ(test, memcmp(dst + 64 * i, src, 64), 0);
}

/*
 * A WR's send queue slot is free by the time its completion can be
 * polled: a one-entry queue takes a new WR after every completion.
 */
static void shca_data_slot_reuse(struct kunit *test)
{
	struct shca_dp_opts o = shca_dp_rc;
	struct shca_dp *dp = test->priv;
	u8 *src = shca_data_buf(test, 8), *dst = shca_data_buf(test, 8);
	struct ib_sge sge;
	struct ib_rdma_wr wr = {
		.wr = { .opcode = IB_WR_RDMA_WRITE, .num_sge = 1,
			.sg_list = &sge, .send_flags = IB_SEND_SIGNALED },
		.remote_addr = (uintptr_t)dst,
	};
	unsigned long end;
	struct ib_wc wc;
	int i, refused = 0;

	o.depth = 1;
	shca_dp_setup(test, &shca_data_fx, dp, &o);
	sge = shca_dp_sge(dp, src, 8);
	wr.rkey = dp->pd->unsafe_global_rkey;
	for (i = 0; i < 2000; i++) {
		wr.wr.wr_id = i;
		if (shca_dp_post_send(dp, 0, &wr.wr)) {
			refused++;
			break;
		}
		/* Busy-poll, to repost as soon as the completion shows. */
		wc.wr_id = U64_MAX;
		end = jiffies + 10 * HZ;
		while (!ib_poll_cq(dp->cq[0], 1, &wc) &&
		       time_before(jiffies, end))
			cond_resched();
		KUNIT_ASSERT_EQ(test, wc.wr_id, i);
	}
	KUNIT_EXPECT_EQ(test, refused, 0);
}

/* A WRITE of over 1 MiB, past one engine budget, lands whole. */
static void shca_data_write_large(struct kunit *test)
{
	struct shca_dp *dp = shca_data_rc(test);
	u32 len = SZ_1M + 3;
	u8 *src = shca_data_buf(test, len), *dst = shca_data_buf(test, len);
	struct ib_sge sge = shca_dp_sge(dp, src, len);

	shca_dp_fill(src, len, 9);
	shca_data_post_write(test, dp, IB_WR_RDMA_WRITE, &sge, 1, dst,
			     dp->pd->unsafe_global_rkey);
	shca_expect_wc(test, dp, 0, 10, IB_WC_RDMA_WRITE, 0);
	KUNIT_EXPECT_EQ(test, memcmp(src, dst, len), 0);
}

/* UD: the receive buffer starts with the 40-byte GRH ib_core parses. */
static void shca_data_ud(struct kunit *test)
{
	struct shca_dp_opts o = shca_dp_rc;
	struct shca_dp *dp = test->priv;
	u8 *src = shca_data_buf(test, 512), *dst = shca_data_buf(test, 600);
	struct ib_sge sge;
	struct ib_ud_wr wr = {
		.wr = { .wr_id = 30, .opcode = IB_WR_SEND, .num_sge = 1,
			.sg_list = &sge, .send_flags = IB_SEND_SIGNALED },
		.remote_qkey = 0x1234,
	};
	struct rdma_ah_attr ah_attr;
	union ib_gid gid;
	struct ib_wc wc;

	o.type = IB_QPT_UD;
	shca_dp_setup(test, &shca_data_fx, dp, &o);
	wr.ah = dp->ah[0];
	wr.remote_qpn = dp->qp[1]->qp_num;
	sge = shca_dp_sge(dp, src, 512);
	shca_dp_fill(src, 512, 10);
	KUNIT_ASSERT_EQ(test, shca_dp_post_recv(dp, 1, 31, dst, 600), 0);
	KUNIT_ASSERT_EQ(test, shca_dp_post_send(dp, 0, &wr.wr), 0);
	shca_expect_wc(test, dp, 0, 30, IB_WC_SEND, 0);
	KUNIT_ASSERT_TRUE(test, shca_dp_poll(dp, 1, &wc));
	KUNIT_EXPECT_EQ(test, wc.status, IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(test, wc.byte_len, 552);
	KUNIT_EXPECT_EQ(test, wc.src_qp, dp->qp[0]->qp_num);
	KUNIT_EXPECT_TRUE(test, wc.wc_flags & IB_WC_GRH);
	KUNIT_EXPECT_EQ(test, memcmp(dst + 40, src, 512), 0);
	KUNIT_EXPECT_EQ(test, ib_get_rdma_header_version((void *)dst), 6);
	/* ib_core can answer the sender from what it received. */
	KUNIT_ASSERT_EQ(test, ib_init_ah_attr_from_wc(dp->qp[1]->device, 1,
						      &wc, (void *)dst,
						      &ah_attr), 0);
	KUNIT_ASSERT_EQ(test, rdma_query_gid(dp->qp[0]->device, 1, 0, &gid),
			0);
	KUNIT_EXPECT_EQ(test, memcmp(&ah_attr.grh.dgid, &gid, sizeof(gid)),
			0);
	rdma_destroy_ah_attr(&ah_attr);

	/* Longer than the path MTU: a local length error, nothing sent. */
	sge.length = 2048;
	KUNIT_ASSERT_EQ(test, shca_dp_post_send(dp, 0, &wr.wr), 0);
	KUNIT_ASSERT_TRUE(test, shca_dp_poll(dp, 0, &wc));
	KUNIT_EXPECT_EQ(test, wc.status, IB_WC_LOC_LEN_ERR);
}

#define SHCA_DATA_SENDS 100	/* more than a run of the engine takes */
#define SHCA_DATA_UD_LEN 256

/* Unsignaled UD sends from QP 0 to QP 1, each its own bytes (ctx). */
static void shca_data_ud_sends(struct shca_dp *dp)
{
	u8 *src = dp->ctx;
	struct ib_sge sge;
	struct ib_ud_wr wr = {
		.wr = { .opcode = IB_WR_SEND, .num_sge = 1, .sg_list = &sge },
		.ah = dp->ah[0],
		.remote_qpn = dp->qp[1]->qp_num,
		.remote_qkey = 0x1234,
	};
	int i;

	for (i = 0; i < SHCA_DATA_SENDS; i++) {
		sge = shca_dp_sge(dp, src + i * SHCA_DATA_UD_LEN,
				  SHCA_DATA_UD_LEN);
		wr.wr.wr_id = i;
		KUNIT_EXPECT_EQ(dp->test, shca_dp_post_send(dp, 0, &wr.wr), 0);
	}
}

static void shca_data_destroy_ah(struct shca_dp *dp)
{
	rdma_destroy_ah(dp->ah[0], RDMA_DESTROY_AH_SLEEPABLE);
	dp->ah[0] = NULL;
}

static void shca_data_destroy_qp(struct shca_dp *dp)
{
	KUNIT_EXPECT_EQ(dp->test, ib_destroy_qp(dp->qp[0]), 0);
	dp->qp[0] = NULL;
}

/*
 * @verb, called right after the sends while the sender's engine is busy
 * (shca_dp_engine_held()), lets every one of them leave first: a
 * hardware queue would have fetched them by the time the verb comes
 * (rdma-core's mckey destroys its AH, then its QP, right after posting).
 */
static void shca_data_ud_verb_after(struct kunit *test,
				    void (*verb)(struct shca_dp *dp))
{
	const size_t len = SHCA_DATA_SENDS * SHCA_DATA_UD_LEN;
	const u32 rlen = 40 + SHCA_DATA_UD_LEN;
	struct shca_dp_opts o = shca_dp_rc;
	struct shca_dp *dp = test->priv;
	u8 *src = shca_data_buf(test, len);
	u8 *dst = shca_data_buf(test, SHCA_DATA_SENDS * rlen);
	struct ib_wc wc;
	int i;

	o.type = IB_QPT_UD;
	o.depth = 2 * SHCA_DATA_SENDS;
	shca_dp_setup(test, &shca_data_fx, dp, &o);
	dp->ctx = src;
	for (i = 0; i < SHCA_DATA_SENDS; i++) {
		shca_dp_fill(src + i * SHCA_DATA_UD_LEN, SHCA_DATA_UD_LEN, i);
		KUNIT_ASSERT_EQ(test, shca_dp_post_recv(dp, 1, i, dst + i * rlen,
							rlen), 0);
	}
	/* The verb waits for the engine: its sends are taken first. */
	KUNIT_EXPECT_FALSE(test, shca_dp_engine_held(dp, 0, shca_data_ud_sends,
						     verb, HZ / 2));
	for (i = 0; i < SHCA_DATA_SENDS; i++) {
		KUNIT_ASSERT_TRUE(test, shca_dp_poll(dp, 1, &wc));
		KUNIT_EXPECT_EQ(test, wc.status, IB_WC_SUCCESS);
		KUNIT_EXPECT_EQ(test, wc.wr_id, i);
		KUNIT_EXPECT_EQ(test, wc.byte_len, rlen);
		KUNIT_EXPECT_EQ(test, memcmp(dst + i * rlen + 40,
					     src + i * SHCA_DATA_UD_LEN,
					     SHCA_DATA_UD_LEN), 0);
	}
	/* Unsignaled and successful: the sender's CQ has nothing. */
	KUNIT_EXPECT_TRUE(test, shca_dp_cq_empty(dp, 0));
}

/* destroy_ah: the sends naming the AH leave before it goes. */
static void shca_data_ud_destroy_ah(struct kunit *test)
{
	shca_data_ud_verb_after(test, shca_data_destroy_ah);
}

/* destroy_qp: the QP's sends leave before it goes, all of them. */
static void shca_data_ud_destroy_qp(struct kunit *test)
{
	shca_data_ud_verb_after(test, shca_data_destroy_qp);
}

/*
 * ib_mad's GSI QP (QPN 1) takes a MAD through the data path and its
 * answer comes back: an unmatched Get is answered with a GetResp whose
 * status says "unsupported", sent from the AH ib_core builds from the
 * GRH this device placed.
 */
static void shca_data_gsi(struct kunit *test)
{
	struct shca_dp_opts o = shca_dp_rc;
	struct shca_dp *dp = test->priv;
	struct ib_mad_hdr *req = shca_data_buf(test, IB_MGMT_MAD_SIZE);
	u8 *resp = shca_data_buf(test, 40 + IB_MGMT_MAD_SIZE);
	const struct ib_mad_hdr *hdr = (void *)(resp + 40);
	struct ib_sge sge;
	struct ib_ud_wr wr = {
		.wr = { .wr_id = 70, .opcode = IB_WR_SEND, .num_sge = 1,
			.sg_list = &sge, .send_flags = IB_SEND_SIGNALED },
		.remote_qpn = 1,
		.remote_qkey = IB_QP1_QKEY,
	};
	struct ib_wc wc;

	o.type = IB_QPT_UD;
	o.qkey = IB_QP1_QKEY;
	shca_dp_setup(test, &shca_data_fx, dp, &o);
	*req = (struct ib_mad_hdr){
		.base_version = IB_MGMT_BASE_VERSION,
		.mgmt_class = IB_MGMT_CLASS_DEVICE_MGMT,
		.class_version = 1,
		.method = IB_MGMT_METHOD_GET,
		.tid = cpu_to_be64(0x1122334455667788ULL),
		.attr_id = cpu_to_be16(0x10),
	};
	wr.ah = dp->ah[0];
	sge = shca_dp_sge(dp, req, IB_MGMT_MAD_SIZE);
	KUNIT_ASSERT_EQ(test, shca_dp_post_recv(dp, 0, 71, resp,
						40 + IB_MGMT_MAD_SIZE), 0);
	KUNIT_ASSERT_EQ(test, shca_dp_post_send(dp, 0, &wr.wr), 0);
	shca_expect_wc(test, dp, 0, 70, IB_WC_SEND, 0);
	KUNIT_ASSERT_TRUE(test, shca_dp_poll(dp, 0, &wc));
	KUNIT_EXPECT_EQ(test, wc.status, IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(test, wc.wr_id, 71);
	KUNIT_EXPECT_EQ(test, wc.src_qp, 1);
	KUNIT_EXPECT_EQ(test, wc.byte_len, 40 + IB_MGMT_MAD_SIZE);
	KUNIT_EXPECT_EQ(test, hdr->method, IB_MGMT_METHOD_GET_RESP);
	KUNIT_EXPECT_EQ(test, be16_to_cpu(hdr->status),
			IB_MGMT_MAD_STATUS_UNSUPPORTED_METHOD_ATTRIB);
	KUNIT_EXPECT_EQ(test, be64_to_cpu(hdr->tid), 0x1122334455667788ULL);
}

/* UC moves SENDs and WRITEs like RC. */
static void shca_data_uc(struct kunit *test)
{
	struct shca_dp_opts o = shca_dp_rc;
	struct shca_dp *dp = test->priv;
	u8 *src = shca_data_buf(test, 128), *dst = shca_data_buf(test, 256);
	struct ib_sge sge;
	struct ib_send_wr wr = {
		.wr_id = 40, .opcode = IB_WR_SEND, .num_sge = 1,
		.sg_list = &sge, .send_flags = IB_SEND_SIGNALED,
	};

	o.type = IB_QPT_UC;
	shca_dp_setup(test, &shca_data_fx, dp, &o);
	sge = shca_dp_sge(dp, src, 128);
	shca_dp_fill(src, 128, 11);
	KUNIT_ASSERT_EQ(test, shca_dp_post_recv(dp, 1, 41, dst, 128), 0);
	KUNIT_ASSERT_EQ(test, shca_dp_post_send(dp, 0, &wr), 0);
	shca_expect_wc(test, dp, 0, 40, IB_WC_SEND, 0);
	shca_expect_wc(test, dp, 1, 41, IB_WC_RECV, 128);
	KUNIT_EXPECT_EQ(test, memcmp(src, dst, 128), 0);
	shca_data_post_write(test, dp, IB_WR_RDMA_WRITE, &sge, 1, dst + 128,
			     dp->pd->unsafe_global_rkey);
	shca_expect_wc(test, dp, 0, 10, IB_WC_RDMA_WRITE, 0);
	KUNIT_EXPECT_EQ(test, memcmp(src, dst + 128, 128), 0);
}

static void shca_data_srq_event(struct ib_event *event, void *ctx)
{
	struct shca_dp *dp = ctx;

	if (event->event == IB_EVENT_SRQ_LIMIT_REACHED)
		atomic_inc(&dp->events);
	wake_up(&dp->wait);
}

/*
 * Receives through an SRQ, in posting order, whichever QP they arrive
 * on; the limit event fires when the data path takes the SRQ below it.
 */
static void shca_data_srq(struct kunit *test)
{
	struct shca_dp_opts o = shca_dp_rc;
	struct shca_dp *dp = test->priv;
	u8 *src = shca_data_buf(test, 64), *dst = shca_data_buf(test, 256);
	struct ib_srq_attr limit = { .srq_limit = 2 };
	struct ib_sge sge;
	struct ib_send_wr wr = {
		.opcode = IB_WR_SEND, .num_sge = 1, .sg_list = &sge,
	};
	int i;

	o.srq = true;
	o.comp = NULL;
	shca_dp_setup(test, &shca_data_fx, dp, &o);
	dp->srq->event_handler = shca_data_srq_event;
	sge = shca_dp_sge(dp, src, 64);
	shca_dp_fill(src, 64, 12);
	for (i = 0; i < 4; i++)
		KUNIT_ASSERT_EQ(test, shca_dp_post_recv(dp, 0, 50 + i,
							dst + 64 * i, 64), 0);
	KUNIT_ASSERT_EQ(test, ib_modify_srq(dp->srq, &limit, IB_SRQ_LIMIT), 0);
	KUNIT_ASSERT_EQ(test, shca_dp_post_send(dp, 0, &wr), 0);
	shca_expect_wc(test, dp, 1, 50, IB_WC_RECV, 64);
	KUNIT_ASSERT_EQ(test, shca_dp_post_send(dp, 1, &wr), 0);
	shca_expect_wc(test, dp, 0, 51, IB_WC_RECV, 64);
	KUNIT_EXPECT_EQ(test, atomic_read(&dp->events), 0);
	KUNIT_ASSERT_EQ(test, shca_dp_post_send(dp, 0, &wr), 0);
	shca_expect_wc(test, dp, 1, 52, IB_WC_RECV, 64);
	KUNIT_EXPECT_TRUE(test, wait_event_timeout(dp->wait,
						   atomic_read(&dp->events),
						   10 * HZ));
	for (i = 0; i < 3; i++)
		KUNIT_EXPECT_EQ(test, memcmp(dst + 64 * i, src, 64), 0);
}

/* QPs on two softhca devices of the host reach each other both ways. */
static void shca_data_two_devices(struct kunit *test)
{
	struct shca_dp_opts o = shca_dp_rc;
	struct shca_dp *dp = test->priv;
	u8 *a = shca_data_buf(test, 1024), *b = shca_data_buf(test, 1024);
	struct ib_pd *pd2;
	struct ib_sge sge;
	struct ib_rdma_wr wr = {
		.wr = { .wr_id = 60, .opcode = IB_WR_RDMA_READ, .num_sge = 1,
			.sg_list = &sge, .send_flags = IB_SEND_SIGNALED },
		.remote_addr = 0,
	};
	struct ib_send_wr send = {
		.wr_id = 61, .opcode = IB_WR_SEND, .num_sge = 1,
		.sg_list = &sge, .send_flags = IB_SEND_SIGNALED,
	};

	pd2 = ib_alloc_pd(shca_data_fx2.ibdev, IB_PD_UNSAFE_GLOBAL_RKEY);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, pd2);
	o.peer = shca_data_fx2.ibdev;
	o.peer_pd = pd2;
	shca_dp_setup(test, &shca_data_fx, dp, &o);
	shca_dp_fill(a, 1024, 13);
	/* Device 2 reads device 1's buffer... */
	sge = shca_dp_sge(dp, b, 1024);
	wr.remote_addr = (uintptr_t)a;
	wr.rkey = dp->pd->unsafe_global_rkey;
	KUNIT_ASSERT_EQ(test, shca_dp_post_send(dp, 1, &wr.wr), 0);
	shca_expect_wc(test, dp, 1, 60, IB_WC_RDMA_READ, 1024);
	KUNIT_EXPECT_EQ(test, memcmp(a, b, 1024), 0);
	/* ... and sends it back. */
	memset(a, 0, 1024);
	KUNIT_ASSERT_EQ(test, shca_dp_post_recv(dp, 0, 62, a, 1024), 0);
	KUNIT_ASSERT_EQ(test, shca_dp_post_send(dp, 1, &send), 0);
	shca_expect_wc(test, dp, 1, 61, IB_WC_SEND, 0);
	shca_expect_wc(test, dp, 0, 62, IB_WC_RECV, 1024);
	KUNIT_EXPECT_EQ(test, memcmp(a, b, 1024), 0);
	shca_dp_teardown(dp);
	ib_dealloc_pd(pd2);
}

static struct kunit_case shca_data_cases[] = {
	KUNIT_CASE(shca_data_send_sges),
	KUNIT_CASE(shca_data_send_imm),
	KUNIT_CASE(shca_data_send_empty),
	KUNIT_CASE(shca_data_send_inline),
	KUNIT_CASE(shca_data_write),
	KUNIT_CASE(shca_data_write_imm),
	KUNIT_CASE(shca_data_read),
	KUNIT_CASE(shca_data_atomics),
	KUNIT_CASE(shca_data_atomics_concurrent),
	KUNIT_CASE(shca_data_frwr),
	KUNIT_CASE(shca_data_send_inv),
	KUNIT_CASE(shca_data_unsignaled),
	KUNIT_CASE(shca_data_slot_reuse),
	KUNIT_CASE(shca_data_write_large),
	KUNIT_CASE(shca_data_ud),
	KUNIT_CASE(shca_data_ud_destroy_ah),
	KUNIT_CASE(shca_data_ud_destroy_qp),
	KUNIT_CASE(shca_data_gsi),
	KUNIT_CASE(shca_data_uc),
	KUNIT_CASE(shca_data_srq),
	KUNIT_CASE(shca_data_two_devices),
	{}
};

static struct kunit_suite shca_data_suite = {
	.name = "softhca_data",
	.suite_init = shca_data_suite_init,
	.suite_exit = shca_data_suite_exit,
	.init = shca_data_init,
	.exit = shca_data_exit,
	.test_cases = shca_data_cases,
};

kunit_test_suite(shca_data_suite);
