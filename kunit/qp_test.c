// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * softhca_qp: QPs get the capacity they ask for and a number of their own;
 * posting writes the work request into the ring from any context; bad
 * work requests and posts in the wrong state are refused with bad_wr set;
 * a QP in the error state flushes everything posted to it, later, never
 * inside the post, so ib_drain_qp() works; the SQ-drained event arrives;
 * the asynchronous modify and destroy work from atomic context; ib_mad's
 * GSI QP is ready; the engine runs unbound but for a consumer that
 * busy-polls; limits hold and cycles leave nothing behind.
 */

#include <linux/delay.h>
#include <rdma/ib_mad.h>
#include <rdma/softhca.h>

#include "compat.h"
#include "context.h"
#include "cq.h"
#include "dev.h"
#include "fixture.h"
#include "qp.h"

SHCA_SUITE_FIXTURE(shca_qp_fx, "softhca_ktqp");

/* A PD, a CQ and what their handlers saw. */
struct shca_qp_env {
	struct kunit *test;
	struct ib_pd *pd;
	struct ib_cq *cq;
	struct ib_qp *qp;
	atomic_t comps;
	atomic_t qp_events;
	enum ib_event_type qp_event;
	/* A post under way (its CPU), or -1: see shca_qp_comp(). */
	int post_cpu;
	bool reentered;
	wait_queue_head_t wait;
	/* For the functions run in a context. */
	const struct ib_send_wr *bad_wr;
	int ret;
	int seq;
	int order[4];
	struct completion done;
	u8 data[64];
};

static void shca_qp_comp(struct ib_cq *cq, void *ctx)
{
	struct shca_qp_env *env = ctx;

	/*
	 * A post runs with preemption off (shca_run_in()'s contexts): a
	 * handler on its CPU while it is under way runs inside it, where one
	 * on another CPU merely runs beside it.
	 */
	if (READ_ONCE(env->post_cpu) == raw_smp_processor_id())
		env->reentered = true;
	atomic_inc(&env->comps);
	wake_up(&env->wait);
}

static void shca_qp_event(struct ib_event *event, void *ctx)
{
	struct shca_qp_env *env = ctx;

	env->qp_event = event->event;
	atomic_inc(&env->qp_events);
	wake_up(&env->wait);
}

static int shca_qp_res(void)
{
	return atomic_read(&to_shca_dev(shca_qp_fx.ibdev)->res[SHCA_RES_QP]);
}

static struct shca_qp_env *shca_env_new(struct kunit *test)
{
	struct ib_cq_init_attr cq_attr = { .cqe = 64 };
	struct shca_qp_env *env;

	env = kunit_kzalloc(test, sizeof(*env), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, env);
	env->test = test;
	init_waitqueue_head(&env->wait);
	init_completion(&env->done);
	env->post_cpu = -1;
	env->pd = ib_alloc_pd(shca_qp_fx.ibdev, 0);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, env->pd);
	env->cq = ib_create_cq(shca_qp_fx.ibdev, shca_qp_comp, NULL, env,
			       &cq_attr);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, env->cq);
	return env;
}

static void shca_env_free(struct shca_qp_env *env)
{
	KUNIT_EXPECT_EQ(env->test, ib_destroy_cq_user(env->cq, NULL), 0);
	ib_dealloc_pd(env->pd);
}

static struct ib_qp *shca_qp_new(struct shca_qp_env *env,
				 enum ib_qp_type type, u32 wrs)
{
	struct ib_qp_init_attr init = {
		.event_handler = shca_qp_event,
		.qp_context = env,
		.send_cq = env->cq,
		.recv_cq = env->cq,
		.cap = {
			.max_send_wr = wrs,
			.max_recv_wr = wrs,
			.max_send_sge = 2,
			.max_recv_sge = 2,
			.max_inline_data = 64,
		},
		.sq_sig_type = IB_SIGNAL_REQ_WR,
		.qp_type = type,
	};

	return ib_create_qp(env->pd, &init);
}

/* RESET -> INIT -> RTR -> RTS, connected back to the device itself. */
static void shca_qp_to_rts(struct kunit *test, struct ib_qp *qp)
{
	struct ib_qp_attr attr = {
		.port_num = SHCA_PORT,
		.qp_access_flags = IB_ACCESS_REMOTE_WRITE,
		.path_mtu = IB_MTU_1024,
		.dest_qp_num = qp->qp_num,
	};

	KUNIT_ASSERT_EQ(test, shca_fixture_connect(qp, &shca_qp_fx, &attr), 0);
}

static int shca_qp_set_state(struct ib_qp *qp, enum ib_qp_state state)
{
	struct ib_qp_attr attr = { .qp_state = state };

	return ib_modify_qp(qp, &attr, IB_QP_STATE);
}

/*
 * On to SQD, where sends may be posted but the engine leaves them in the
 * ring: what the posting tests inspect.
 */
static void shca_qp_to_sqd(struct kunit *test, struct ib_qp *qp)
{
	shca_qp_to_rts(test, qp);
	KUNIT_ASSERT_EQ(test, shca_qp_set_state(qp, IB_QPS_SQD), 0);
}

static int shca_query_state_of(struct ib_qp *qp)
{
	struct ib_qp_init_attr init;
	struct ib_qp_attr attr;
	int ret = ib_query_qp(qp, &attr, IB_QP_STATE, &init);

	return ret ?: attr.qp_state;
}

/* Capacities are at least those asked for; numbers are never 0 or 1. */
static void shca_qp_create_caps(struct kunit *test)
{
	struct shca_qp_env *env = shca_env_new(test);
	const enum ib_qp_type types[] = { IB_QPT_RC, IB_QPT_UC, IB_QPT_UD };
	struct ib_qp *qps[ARRAY_SIZE(types)];
	struct ib_qp_init_attr init;
	struct ib_qp_attr attr;
	int i;

	for (i = 0; i < ARRAY_SIZE(types); i++) {
		qps[i] = shca_qp_new(env, types[i], 10);
		KUNIT_ASSERT_NOT_ERR_OR_NULL(test, qps[i]);
		KUNIT_EXPECT_GT(test, qps[i]->qp_num, 1);
		KUNIT_EXPECT_LE(test, qps[i]->qp_num, 0xffffff);
		if (i)
			KUNIT_EXPECT_NE(test, qps[i]->qp_num,
					qps[i - 1]->qp_num);
		KUNIT_ASSERT_EQ(test, ib_query_qp(qps[i], &attr, 0, &init), 0);
		KUNIT_EXPECT_EQ(test, attr.qp_state, IB_QPS_RESET);
		KUNIT_EXPECT_GE(test, init.cap.max_send_wr, 10);
		KUNIT_EXPECT_GE(test, init.cap.max_recv_wr, 10);
		KUNIT_EXPECT_EQ(test, init.cap.max_send_sge, 2);
		KUNIT_EXPECT_EQ(test, init.cap.max_inline_data, 64);
		KUNIT_EXPECT_EQ(test, init.qp_type, types[i]);
	}
	KUNIT_EXPECT_EQ(test, shca_qp_res(), 3 + 1);	/* ib_mad's QP1 */
	for (i = 0; i < ARRAY_SIZE(types); i++)
		KUNIT_EXPECT_EQ(test, ib_destroy_qp(qps[i]), 0);
	KUNIT_EXPECT_EQ(test, shca_qp_res(), 1);
	shca_env_free(env);
}

static void shca_qp_create_refused(struct kunit *test)
{
	struct shca_qp_env *env = shca_env_new(test);
	struct ib_qp_init_attr init = {
		.send_cq = env->cq,
		.recv_cq = env->cq,
		.cap = { .max_send_wr = 1, .max_recv_wr = 1 },
		.qp_type = IB_QPT_RC,
	};

	init.cap.max_send_wr = SHCA_MAX_QP_WR + 1;
	KUNIT_EXPECT_EQ(test, PTR_ERR(ib_create_qp(env->pd, &init)), -EINVAL);
	init.cap.max_send_wr = 1;
	init.cap.max_send_sge = SHCA_MAX_SGE + 1;
	KUNIT_EXPECT_EQ(test, PTR_ERR(ib_create_qp(env->pd, &init)), -EINVAL);
	init.cap.max_send_sge = 1;
	init.cap.max_inline_data = SHCA_MAX_INLINE + 1;
	KUNIT_EXPECT_EQ(test, PTR_ERR(ib_create_qp(env->pd, &init)), -EINVAL);
	init.cap.max_inline_data = 0;
	init.qp_type = IB_QPT_RAW_PACKET;
	KUNIT_EXPECT_EQ(test, PTR_ERR(ib_create_qp(env->pd, &init)),
			-EOPNOTSUPP);
	init.qp_type = IB_QPT_RC;
	init.create_flags = IB_QP_CREATE_BLOCK_MULTICAST_LOOPBACK;
	KUNIT_EXPECT_EQ(test, PTR_ERR(ib_create_qp(env->pd, &init)),
			-EOPNOTSUPP);
	KUNIT_EXPECT_EQ(test, shca_qp_res(), 1);
	shca_env_free(env);
}

/* ib_mad brought its GSI QP (QPN 1) to RTS with the well-known Q_Key. */
static void shca_qp_gsi_ready(struct kunit *test)
{
	struct shca_qp *qp = shca_qp_get(to_shca_dev(shca_qp_fx.ibdev), 1);
	struct ib_qp_init_attr init;
	struct ib_qp_attr attr;

	KUNIT_ASSERT_NOT_NULL(test, qp);
	KUNIT_EXPECT_EQ(test, qp->ibqp.qp_type, IB_QPT_GSI);
	KUNIT_EXPECT_EQ(test, ib_query_qp(&qp->ibqp, &attr, IB_QP_STATE |
					  IB_QP_QKEY, &init), 0);
	KUNIT_EXPECT_EQ(test, attr.qp_state, IB_QPS_RTS);
	KUNIT_EXPECT_EQ(test, attr.qkey, IB_QP1_QKEY);
	/* ib_mad keeps receives posted on it. */
	KUNIT_EXPECT_GT(test, qp->rq.queue.prod, 0);
	shca_qp_put(qp);
}

struct shca_post_arg {
	struct shca_qp_env *env;
	struct ib_sge sge[2];
	struct ib_rdma_wr write;
	struct ib_send_wr send;
	struct ib_send_wr inl;
	struct ib_recv_wr recv;
	const struct ib_recv_wr *bad_recv;
	int send_ret;
	int recv_ret;
};

static void shca_post_fn(void *arg)
{
	struct shca_post_arg *a = arg;

	a->send_ret = ib_post_send(a->env->qp, &a->write.wr, &a->env->bad_wr);
	a->recv_ret = ib_post_recv(a->env->qp, &a->recv, &a->bad_recv);
}

static void shca_expect_sge(struct kunit *test, const struct softhca_sge *got,
			    const struct ib_sge *want)
{
	KUNIT_EXPECT_EQ(test, got->addr, want->addr);
	KUNIT_EXPECT_EQ(test, got->length, want->length);
	KUNIT_EXPECT_EQ(test, got->lkey, want->lkey);
}

/* What was posted is in the rings, as the engine will read it. */
static void shca_expect_posted(struct kunit *test, struct shca_post_arg *a)
{
	struct shca_qp *qp = to_shca_qp(a->env->qp);
	const struct softhca_send_wqe *w;
	const struct softhca_recv_wqe *r;

	KUNIT_ASSERT_EQ(test, qp->sq.queue.prod, 3);
	w = shca_queue_entry(&qp->sq.queue, 0);
	KUNIT_EXPECT_EQ(test, w->wr_id, 1);
	KUNIT_EXPECT_EQ(test, w->opcode, IB_WR_RDMA_WRITE);
	KUNIT_EXPECT_EQ(test, w->flags, SOFTHCA_WQE_SIGNALED);
	KUNIT_EXPECT_EQ(test, w->num_sge, 2);
	KUNIT_EXPECT_EQ(test, w->rdma.remote_addr, 0x1000);
	KUNIT_EXPECT_EQ(test, w->rdma.rkey, 0x4242);
	shca_expect_sge(test, (const void *)(w + 1), &a->sge[0]);
	shca_expect_sge(test, (const struct softhca_sge *)(w + 1) + 1,
			&a->sge[1]);
	w = shca_queue_entry(&qp->sq.queue, 1);
	KUNIT_EXPECT_EQ(test, w->wr_id, 2);
	KUNIT_EXPECT_EQ(test, w->opcode, IB_WR_SEND_WITH_IMM);
	KUNIT_EXPECT_EQ(test, w->flags, SOFTHCA_WQE_SOLICITED);
	KUNIT_EXPECT_EQ(test, w->ex, (__force u32)cpu_to_be32(0x1234));
	w = shca_queue_entry(&qp->sq.queue, 2);
	KUNIT_EXPECT_EQ(test, w->flags, SOFTHCA_WQE_INLINE);
	KUNIT_EXPECT_EQ(test, w->inline_len, 40);
	KUNIT_EXPECT_EQ(test, memcmp(w + 1, a->env->data, 24), 0);
	KUNIT_EXPECT_EQ(test, memcmp((const void *)(w + 1) + 24,
				     a->env->data + 32, 16), 0);

	KUNIT_ASSERT_EQ(test, qp->rq.queue.prod, 1);
	r = shca_queue_entry(&qp->rq.queue, 0);
	KUNIT_EXPECT_EQ(test, r->wr_id, 9);
	KUNIT_EXPECT_EQ(test, r->num_sge, 1);
	shca_expect_sge(test, (const void *)(r + 1), &a->sge[1]);
}

static struct shca_post_arg *shca_post_arg_new(struct kunit *test,
					       struct shca_qp_env *env)
{
	struct shca_post_arg *a;
	int i;

	a = kunit_kzalloc(test, sizeof(*a), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, a);
	for (i = 0; i < sizeof(env->data); i++)
		env->data[i] = i * 7;
	a->env = env;
	a->sge[0] = (struct ib_sge){ .addr = (uintptr_t)env->data,
				     .length = 24, .lkey = 0x11 };
	a->sge[1] = (struct ib_sge){ .addr = (uintptr_t)env->data + 32,
				     .length = 16, .lkey = 0x22 };
	a->write = (struct ib_rdma_wr){
		.wr = { .wr_id = 1, .opcode = IB_WR_RDMA_WRITE,
			.send_flags = IB_SEND_SIGNALED, .sg_list = a->sge,
			.num_sge = 2, .next = &a->send },
		.remote_addr = 0x1000,
		.rkey = 0x4242,
	};
	a->send = (struct ib_send_wr){
		.wr_id = 2, .opcode = IB_WR_SEND_WITH_IMM,
		.send_flags = IB_SEND_SOLICITED, .sg_list = a->sge,
		.num_sge = 1, .ex.imm_data = cpu_to_be32(0x1234),
		.next = &a->inl,
	};
	a->inl = (struct ib_send_wr){
		.wr_id = 3, .opcode = IB_WR_SEND, .send_flags = IB_SEND_INLINE,
		.sg_list = a->sge, .num_sge = 2,
	};
	a->recv = (struct ib_recv_wr){ .wr_id = 9, .sg_list = &a->sge[1],
				       .num_sge = 1 };
	return a;
}

/* Posting in hard-irq, softirq and with IRQs off fills the rings. */
static void shca_qp_post_in_atomic(struct kunit *test)
{
	const enum shca_context *ctx = test->param_value;
	struct shca_qp_env *env = shca_env_new(test);
	struct shca_post_arg *a = shca_post_arg_new(test, env);

	env->qp = shca_qp_new(env, IB_QPT_RC, 8);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, env->qp);
	shca_qp_to_sqd(test, env->qp);
	shca_run_in(test, *ctx, shca_post_fn, a);
	KUNIT_EXPECT_EQ(test, a->send_ret, 0);
	KUNIT_EXPECT_EQ(test, a->recv_ret, 0);
	shca_expect_posted(test, a);
	KUNIT_EXPECT_EQ(test, ib_destroy_qp(env->qp), 0);
	shca_env_free(env);
}

/* One WR of every opcode a kernel consumer may post, chained. */
struct shca_ops_arg {
	struct shca_qp_env *env;
	u64 word;
	struct ib_sge sge;
	struct ib_send_wr send, send_inv, local_inv;
	struct ib_rdma_wr write_imm, read, atomic_write;
	struct ib_atomic_wr cas, faa;
	struct ib_reg_wr reg;
	int ret;
};

static void shca_ops_fn(void *arg)
{
	struct shca_ops_arg *a = arg;

	a->ret = ib_post_send(a->env->qp, &a->send, &a->env->bad_wr);
}

static struct shca_ops_arg *shca_ops_arg_new(struct kunit *test,
					     struct shca_qp_env *env)
{
	struct shca_ops_arg *a = kunit_kzalloc(test, sizeof(*a), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, a);
	a->env = env;
	a->word = 0x1122334455667788ULL;
	a->sge = (struct ib_sge){ .addr = (uintptr_t)&a->word, .length = 8,
				  .lkey = 0x33 };
	a->send = (struct ib_send_wr){ .wr_id = 1, .opcode = IB_WR_SEND,
				       .sg_list = &a->sge, .num_sge = 1,
				       .next = &a->send_inv };
	a->send_inv = (struct ib_send_wr){
		.wr_id = 2, .opcode = IB_WR_SEND_WITH_INV,
		.ex.invalidate_rkey = 0x5501, .next = &a->write_imm.wr,
	};
	a->write_imm = (struct ib_rdma_wr){
		.wr = { .wr_id = 3, .opcode = IB_WR_RDMA_WRITE_WITH_IMM,
			.sg_list = &a->sge, .num_sge = 1,
			.ex.imm_data = cpu_to_be32(0xabcd), .next = &a->read.wr },
		.remote_addr = 0x2000, .rkey = 0x5502,
	};
	a->read = (struct ib_rdma_wr){
		.wr = { .wr_id = 4, .opcode = IB_WR_RDMA_READ,
			.sg_list = &a->sge, .num_sge = 1, .next = &a->cas.wr },
		.remote_addr = 0x3000, .rkey = 0x5503,
	};
	a->cas = (struct ib_atomic_wr){
		.wr = { .wr_id = 5, .opcode = IB_WR_ATOMIC_CMP_AND_SWP,
			.sg_list = &a->sge, .num_sge = 1, .next = &a->faa.wr },
		.remote_addr = 0x4000, .compare_add = 7, .swap = 8,
		.rkey = 0x5504,
	};
	a->faa = (struct ib_atomic_wr){
		.wr = { .wr_id = 6, .opcode = IB_WR_ATOMIC_FETCH_AND_ADD,
			.sg_list = &a->sge, .num_sge = 1,
			.next = &a->atomic_write.wr },
		.remote_addr = 0x4008, .compare_add = 9, .rkey = 0x5505,
	};
	a->atomic_write = (struct ib_rdma_wr){
		.wr = { .wr_id = 7, .opcode = SHCA_WR_ATOMIC_WRITE,
			.sg_list = &a->sge, .num_sge = 1,
			.next = &a->local_inv },
		.remote_addr = 0x5000, .rkey = 0x5506,
	};
	a->local_inv = (struct ib_send_wr){
		.wr_id = 8, .opcode = IB_WR_LOCAL_INV,
		.ex.invalidate_rkey = 0x5507, .next = &a->reg.wr,
	};
	a->reg = (struct ib_reg_wr){
		.wr = { .wr_id = 9, .opcode = IB_WR_REG_MR },
		.key = 0x5508, .access = IB_ACCESS_REMOTE_READ,
	};
	return a;
}

static const struct softhca_send_wqe *shca_sq_wqe(struct shca_qp_env *env,
						  u32 i)
{
	return shca_queue_entry(&to_shca_qp(env->qp)->sq.queue, i);
}

/*
 * Every opcode a kernel consumer may post (ATOMIC WRITE included, and
 * REG_MR and LOCAL_INV, which ULPs post from their completion handlers)
 * is written into the ring from hard-irq, softirq and with IRQs off, each
 * WQE as the engine will read it.
 */
static void shca_qp_post_opcodes_in_atomic(struct kunit *test)
{
	const enum shca_context *ctx = test->param_value;
	struct shca_qp_env *env = shca_env_new(test);
	struct shca_ops_arg *a = shca_ops_arg_new(test, env);
	const struct softhca_send_wqe *w;
	static const u8 opcodes[] = {
		IB_WR_SEND, IB_WR_SEND_WITH_INV, IB_WR_RDMA_WRITE_WITH_IMM,
		IB_WR_RDMA_READ, IB_WR_ATOMIC_CMP_AND_SWP,
		IB_WR_ATOMIC_FETCH_AND_ADD, SHCA_WR_ATOMIC_WRITE,
		IB_WR_LOCAL_INV, IB_WR_REG_MR,
	};
	u32 i;

	env->qp = shca_qp_new(env, IB_QPT_RC, 16);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, env->qp);
	shca_qp_to_sqd(test, env->qp);
	shca_run_in(test, *ctx, shca_ops_fn, a);
	KUNIT_ASSERT_EQ(test, a->ret, 0);
	KUNIT_ASSERT_EQ(test, to_shca_qp(env->qp)->sq.queue.prod,
			ARRAY_SIZE(opcodes));
	for (i = 0; i < ARRAY_SIZE(opcodes); i++) {
		w = shca_sq_wqe(env, i);
		KUNIT_EXPECT_EQ(test, w->wr_id, i + 1);
		KUNIT_EXPECT_EQ(test, w->opcode, opcodes[i]);
	}
	KUNIT_EXPECT_EQ(test, shca_sq_wqe(env, 1)->ex, 0x5501);
	w = shca_sq_wqe(env, 2);
	KUNIT_EXPECT_EQ(test, w->ex, (__force u32)cpu_to_be32(0xabcd));
	KUNIT_EXPECT_EQ(test, w->rdma.remote_addr, 0x2000);
	KUNIT_EXPECT_EQ(test, w->rdma.rkey, 0x5502);
	w = shca_sq_wqe(env, 3);
	KUNIT_EXPECT_EQ(test, w->rdma.remote_addr, 0x3000);
	KUNIT_EXPECT_EQ(test, w->rdma.rkey, 0x5503);
	w = shca_sq_wqe(env, 4);
	KUNIT_EXPECT_EQ(test, w->atomic.remote_addr, 0x4000);
	KUNIT_EXPECT_EQ(test, w->atomic.compare_add, 7);
	KUNIT_EXPECT_EQ(test, w->atomic.swap, 8);
	KUNIT_EXPECT_EQ(test, w->atomic.rkey, 0x5504);
	w = shca_sq_wqe(env, 5);
	KUNIT_EXPECT_EQ(test, w->atomic.compare_add, 9);
	KUNIT_EXPECT_EQ(test, w->atomic.rkey, 0x5505);
	/* ATOMIC WRITE's 8 bytes are read at the post, into the WQE. */
	w = shca_sq_wqe(env, 6);
	KUNIT_EXPECT_EQ(test, w->num_sge, 0);
	KUNIT_EXPECT_EQ(test, w->atomic_write.remote_addr, 0x5000);
	KUNIT_EXPECT_EQ(test, w->atomic_write.rkey, 0x5506);
	KUNIT_EXPECT_EQ(test, memcmp(w->atomic_write.data, &a->word, 8), 0);
	KUNIT_EXPECT_EQ(test, shca_sq_wqe(env, 7)->ex, 0x5507);
	w = shca_sq_wqe(env, 8);
	KUNIT_EXPECT_EQ(test, w->reg.key, 0x5508);
	KUNIT_EXPECT_EQ(test, w->reg.access, IB_ACCESS_REMOTE_READ);
	KUNIT_EXPECT_EQ(test, ib_destroy_qp(env->qp), 0);
	shca_env_free(env);
}

/* Bad work requests and wrong states: refused, bad_wr names the first. */
static void shca_qp_post_refused(struct kunit *test)
{
	struct shca_qp_env *env = shca_env_new(test);
	struct shca_post_arg *a = shca_post_arg_new(test, env);
	struct ib_send_wr wrs[9] = {};
	const struct ib_send_wr *bad;
	const struct ib_recv_wr *bad_recv;
	int i;

	env->qp = shca_qp_new(env, IB_QPT_RC, 8);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, env->qp);
	KUNIT_EXPECT_EQ(test, ib_post_send(env->qp, &a->send, &bad), -EINVAL);
	KUNIT_EXPECT_PTR_EQ(test, bad, &a->send);
	KUNIT_EXPECT_EQ(test, ib_post_recv(env->qp, &a->recv, &bad_recv),
			-EINVAL);
	KUNIT_EXPECT_PTR_EQ(test, bad_recv, &a->recv);
	shca_qp_to_sqd(test, env->qp);

	/* The third WR has too many SGEs: two are posted. */
	a->inl.send_flags = 0;
	a->inl.num_sge = 3;
	KUNIT_EXPECT_EQ(test, ib_post_send(env->qp, &a->write.wr, &bad),
			-EINVAL);
	KUNIT_EXPECT_PTR_EQ(test, bad, &a->inl);
	KUNIT_EXPECT_EQ(test, to_shca_qp(env->qp)->sq.queue.prod, 2);
	/* Inline data over the QP's maximum. */
	a->inl.send_flags = IB_SEND_INLINE;
	a->sge[0].length = 65;
	a->inl.num_sge = 1;
	KUNIT_EXPECT_EQ(test, ib_post_send(env->qp, &a->inl, &bad), -EINVAL);
	/* An opcode outside the table. */
	a->inl.opcode = IB_WR_REG_MR_INTEGRITY;
	a->inl.send_flags = 0;
	KUNIT_EXPECT_EQ(test, ib_post_send(env->qp, &a->inl, &bad), -EINVAL);

	/* A full queue: 6 more fit the 8 entries, the 7th does not. */
	for (i = 0; i < ARRAY_SIZE(wrs); i++)
		wrs[i] = (struct ib_send_wr){ .wr_id = 100 + i,
					      .opcode = IB_WR_SEND,
					      .next = &wrs[i + 1] };
	wrs[ARRAY_SIZE(wrs) - 1].next = NULL;
	KUNIT_EXPECT_EQ(test, ib_post_send(env->qp, wrs, &bad), -ENOMEM);
	KUNIT_EXPECT_PTR_EQ(test, bad, &wrs[6]);
	KUNIT_EXPECT_EQ(test, to_shca_qp(env->qp)->sq.queue.prod, 8);
	KUNIT_EXPECT_EQ(test, ib_destroy_qp(env->qp), 0);
	shca_env_free(env);
}

/* Datagram QPs post sends only, and name an AH. */
static void shca_qp_post_ud_refused(struct kunit *test)
{
	struct shca_qp_env *env = shca_env_new(test);
	struct shca_post_arg *a = shca_post_arg_new(test, env);
	struct ib_ud_wr ud = {
		.wr = { .opcode = IB_WR_SEND, .sg_list = a->sge, .num_sge = 1 },
	};
	const struct ib_send_wr *bad;
	struct ib_qp_attr attr = {
		.qp_state = IB_QPS_INIT,
		.port_num = SHCA_PORT,
		.qkey = 0x1111,
	};

	env->qp = shca_qp_new(env, IB_QPT_UD, 8);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, env->qp);
	KUNIT_ASSERT_EQ(test, ib_modify_qp(env->qp, &attr, IB_QP_STATE |
					   IB_QP_PKEY_INDEX | IB_QP_PORT |
					   IB_QP_QKEY), 0);
	KUNIT_ASSERT_EQ(test, shca_qp_set_state(env->qp, IB_QPS_RTR), 0);
	attr.qp_state = IB_QPS_RTS;
	KUNIT_ASSERT_EQ(test, ib_modify_qp(env->qp, &attr, IB_QP_STATE |
					   IB_QP_SQ_PSN), 0);
	/* No AH. */
	KUNIT_EXPECT_EQ(test, ib_post_send(env->qp, &ud.wr, &bad), -EINVAL);
	/* No RDMA on datagram QPs. */
	KUNIT_EXPECT_EQ(test, ib_post_send(env->qp, &a->write.wr, &bad),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, to_shca_qp(env->qp)->sq.queue.prod, 0);
	KUNIT_EXPECT_EQ(test, ib_destroy_qp(env->qp), 0);
	shca_env_free(env);
}

static void shca_post_err_fn(void *arg)
{
	struct shca_post_arg *a = arg;

	WRITE_ONCE(a->env->post_cpu, raw_smp_processor_id());
	a->send_ret = ib_post_send(a->env->qp, &a->send, &a->env->bad_wr);
	a->recv_ret = ib_post_recv(a->env->qp, &a->recv, &a->bad_recv);
	WRITE_ONCE(a->env->post_cpu, -1);
}

static int shca_poll_all(struct shca_qp_env *env, struct ib_wc *wc, int n)
{
	int got = 0;
	unsigned long end = jiffies + 20 * HZ;

	while (got < n && time_before(jiffies, end)) {
		got += ib_poll_cq(env->cq, n - got, wc + got);
		if (got < n)
			msleep(20);
	}
	return got;
}

/*
 * Moving to ERR flushes everything outstanding, signalled or not, in
 * order; a post in ERR is flushed too, later, never inside the post.
 */
static void shca_qp_flush_on_err(struct kunit *test)
{
	const enum shca_context *ctx = test->param_value;
	struct shca_qp_env *env = shca_env_new(test);
	struct shca_post_arg *a = shca_post_arg_new(test, env);
	struct ib_wc wc[6];
	int i;

	env->qp = shca_qp_new(env, IB_QPT_RC, 8);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, env->qp);
	shca_qp_to_sqd(test, env->qp);
	shca_post_fn(a);
	KUNIT_ASSERT_EQ(test, a->send_ret, 0);
	KUNIT_ASSERT_EQ(test, a->recv_ret, 0);
	KUNIT_ASSERT_EQ(test, ib_req_notify_cq(env->cq, IB_CQ_NEXT_COMP), 0);
	KUNIT_ASSERT_EQ(test, shca_qp_set_state(env->qp, IB_QPS_ERR), 0);

	KUNIT_ASSERT_EQ(test, shca_poll_all(env, wc, 4), 4);
	for (i = 0; i < 4; i++)
		KUNIT_EXPECT_EQ(test, wc[i].status, IB_WC_WR_FLUSH_ERR);
	/* The SQ first (the flush's order), then the RQ. */
	KUNIT_EXPECT_EQ(test, wc[0].wr_id, 1);
	KUNIT_EXPECT_EQ(test, wc[0].opcode, IB_WC_RDMA_WRITE);
	KUNIT_EXPECT_EQ(test, wc[1].wr_id, 2);
	KUNIT_EXPECT_EQ(test, wc[2].wr_id, 3);
	KUNIT_EXPECT_EQ(test, wc[3].wr_id, 9);
	KUNIT_EXPECT_EQ(test, wc[3].opcode, IB_WC_RECV);
	KUNIT_EXPECT_PTR_EQ(test, wc[0].qp, env->qp);
	KUNIT_EXPECT_TRUE(test, shca_wait_count(&env->wait, &env->comps, 1));

	KUNIT_ASSERT_EQ(test, ib_req_notify_cq(env->cq, IB_CQ_NEXT_COMP), 0);
	shca_run_in(test, *ctx, shca_post_err_fn, a);
	KUNIT_EXPECT_EQ(test, a->send_ret, 0);
	KUNIT_EXPECT_EQ(test, a->recv_ret, 0);
	/* a->send chains to a->inl: two sends, one receive. */
	KUNIT_ASSERT_EQ(test, shca_poll_all(env, wc, 3), 3);
	KUNIT_EXPECT_EQ(test, wc[0].wr_id, 2);
	KUNIT_EXPECT_EQ(test, wc[1].wr_id, 3);
	KUNIT_EXPECT_EQ(test, wc[2].wr_id, 9);
	KUNIT_EXPECT_TRUE(test, shca_wait_count(&env->wait, &env->comps, 2));
	KUNIT_EXPECT_FALSE(test, env->reentered);
	KUNIT_EXPECT_EQ(test, ib_destroy_qp(env->qp), 0);
	shca_env_free(env);
}

/* ib_drain_qp() returns: its marker WRs are flushed and completed. */
static void shca_qp_drain(struct kunit *test)
{
	struct shca_qp_env *env = shca_env_new(test);
	struct ib_qp_init_attr init = {
		.cap = { .max_send_wr = 4, .max_recv_wr = 4,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.qp_type = IB_QPT_RC,
	};
	struct ib_cq *cq;
	struct ib_qp *qp;

	cq = ib_alloc_cq(shca_qp_fx.ibdev, NULL, 16, 0, IB_POLL_WORKQUEUE);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, cq);
	init.send_cq = cq;
	init.recv_cq = cq;
	qp = ib_create_qp(env->pd, &init);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, qp);
	shca_qp_to_rts(test, qp);
	ib_drain_qp(qp);
	KUNIT_EXPECT_EQ(test, shca_query_state_of(qp), IB_QPS_ERR);
	KUNIT_EXPECT_EQ(test, ib_destroy_qp(qp), 0);
	ib_free_cq(cq);
	shca_env_free(env);
}

/* RTS -> SQD with the notification asked for: the SQ-drained event. */
static void shca_qp_sqd_event(struct kunit *test)
{
	struct shca_qp_env *env = shca_env_new(test);
	struct ib_qp_attr attr = {
		.qp_state = IB_QPS_SQD,
		.en_sqd_async_notify = 1,
	};

	env->qp = shca_qp_new(env, IB_QPT_RC, 8);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, env->qp);
	shca_qp_to_rts(test, env->qp);
	KUNIT_ASSERT_EQ(test, ib_modify_qp(env->qp, &attr, IB_QP_STATE |
					   IB_QP_EN_SQD_ASYNC_NOTIFY), 0);
	KUNIT_EXPECT_TRUE(test, shca_wait_count(&env->wait, &env->qp_events, 1));
	KUNIT_EXPECT_EQ(test, env->qp_event, IB_EVENT_SQ_DRAINED);
	KUNIT_EXPECT_EQ(test, shca_query_state_of(env->qp), IB_QPS_SQD);
	KUNIT_EXPECT_EQ(test, ib_destroy_qp(env->qp), 0);
	shca_env_free(env);
}

struct shca_async_arg {
	struct shca_qp_env *env;
	struct ib_qp_attr attr;
	int ret[3];
};

static void shca_async_done(void *ctx, int status)
{
	struct shca_qp_env *env = ctx;

	if (env->seq < ARRAY_SIZE(env->order))
		env->order[env->seq] = status;
	env->seq++;
	if (env->seq == 3)
		complete(&env->done);
}

/* RESET -> INIT, a refused INIT -> RTS, then destroy: queued in one go. */
static void shca_async_fn(void *arg)
{
	struct shca_async_arg *a = arg;
	struct ib_qp *qp = a->env->qp;

	a->attr.qp_state = IB_QPS_INIT;
	a->attr.port_num = SHCA_PORT;
	a->ret[0] = softhca_async_modify_qp(qp, &a->attr, IB_QP_STATE |
					    IB_QP_PKEY_INDEX | IB_QP_PORT |
					    IB_QP_ACCESS_FLAGS,
					    shca_async_done, a->env);
	/* Reused at once: the call copied it. */
	a->attr.qp_state = IB_QPS_RTS;
	a->ret[1] = softhca_async_modify_qp(qp, &a->attr, IB_QP_STATE,
					    shca_async_done, a->env);
	a->ret[2] = softhca_async_destroy_qp(qp, shca_async_done, a->env);
}

/*
 * The asynchronous modify and destroy, queued from each atomic context:
 * each callback once, in submission order, with the verb's result.
 */
static void shca_qp_async(struct kunit *test)
{
	const enum shca_context *ctx = test->param_value;
	struct shca_qp_env *env = shca_env_new(test);
	struct shca_async_arg *a;
	int i;

	a = kunit_kzalloc(test, sizeof(*a), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, a);
	a->env = env;
	env->qp = shca_qp_new(env, IB_QPT_RC, 8);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, env->qp);
	shca_run_in(test, *ctx, shca_async_fn, a);
	for (i = 0; i < ARRAY_SIZE(a->ret); i++)
		KUNIT_EXPECT_EQ(test, a->ret[i], 0);
	KUNIT_ASSERT_TRUE(test, wait_for_completion_timeout(&env->done,
							    20 * HZ));
	KUNIT_EXPECT_EQ(test, env->seq, 3);
	KUNIT_EXPECT_EQ(test, env->order[0], 0);
	KUNIT_EXPECT_EQ(test, env->order[1], -EINVAL);
	KUNIT_EXPECT_EQ(test, env->order[2], 0);
	KUNIT_EXPECT_EQ(test, shca_qp_res(), 1);
	shca_env_free(env);
}

KUNIT_ARRAY_PARAM(shca_qp_ctx, shca_contexts, shca_context_desc);

/*
 * A QP's engine runs unbound, beside its poster, unless its kernel
 * consumer busy-polls one of its CQs: then on the poller's CPU, until that
 * CQ is armed.
 */
static void shca_qp_engine_wq(struct kunit *test)
{
	struct shca_qp_env *env = shca_env_new(test);
	struct ib_cq_init_attr cq_attr = { .cqe = 16 };
	struct ib_qp_init_attr init = {
		.send_cq = env->cq,
		.cap = {
			.max_send_wr = 4,
			.max_recv_wr = 4,
			.max_send_sge = 1,
			.max_recv_sge = 1,
		},
		.sq_sig_type = IB_SIGNAL_REQ_WR,
		.qp_type = IB_QPT_RC,
	};
	struct shca_qp *qp;
	struct ib_cq *rcq;
	struct ib_wc wc;

	rcq = ib_create_cq(shca_qp_fx.ibdev, NULL, NULL, NULL, &cq_attr);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, rcq);
	init.recv_cq = rcq;
	env->qp = ib_create_qp(env->pd, &init);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, env->qp);
	qp = to_shca_qp(env->qp);
	KUNIT_EXPECT_PTR_NE(test, qp->engine_wq, qp->local_wq);
	KUNIT_EXPECT_PTR_EQ(test, shca_engine_kick_wq(qp), qp->engine_wq);
	KUNIT_EXPECT_EQ(test, ib_poll_cq(rcq, 1, &wc), 0);
	KUNIT_EXPECT_PTR_EQ(test, shca_engine_kick_wq(qp), qp->local_wq);
	KUNIT_EXPECT_EQ(test, ib_req_notify_cq(rcq, IB_CQ_NEXT_COMP), 0);
	KUNIT_EXPECT_PTR_EQ(test, shca_engine_kick_wq(qp), qp->engine_wq);
	KUNIT_EXPECT_EQ(test, ib_poll_cq(env->cq, 1, &wc), 0);
	KUNIT_EXPECT_PTR_EQ(test, shca_engine_kick_wq(qp), qp->local_wq);
	KUNIT_EXPECT_EQ(test, ib_req_notify_cq(env->cq, IB_CQ_NEXT_COMP), 0);
	KUNIT_EXPECT_PTR_EQ(test, shca_engine_kick_wq(qp), qp->engine_wq);
	KUNIT_EXPECT_EQ(test, ib_destroy_qp(env->qp), 0);
	KUNIT_EXPECT_EQ(test, ib_destroy_cq_user(rcq, NULL), 0);
	shca_env_free(env);
}

/* One QP more than query_device advertises fails cleanly. */
static void shca_qp_limit(struct kunit *test)
{
	struct shca_dev *dev = to_shca_dev(shca_qp_fx.ibdev);
	struct shca_qp_env *env = shca_env_new(test);
	int before = shca_qp_res();
	struct ib_qp *last, *over;

	KUNIT_ASSERT_EQ(test, dev->ibdev.attrs.max_qp, SHCA_MAX_QP);
	atomic_set(&dev->res[SHCA_RES_QP], SHCA_MAX_QP - 1);
	last = shca_qp_new(env, IB_QPT_RC, 1);
	over = shca_qp_new(env, IB_QPT_RC, 1);
	KUNIT_EXPECT_FALSE(test, IS_ERR(last));
	KUNIT_EXPECT_EQ(test, PTR_ERR_OR_ZERO(over), -ENOMEM);
	if (!IS_ERR(over))
		ib_destroy_qp(over);
	if (!IS_ERR(last))
		ib_destroy_qp(last);
	KUNIT_EXPECT_EQ(test, shca_qp_res(), SHCA_MAX_QP - 1);
	atomic_set(&dev->res[SHCA_RES_QP], before);
	shca_env_free(env);
}

/* Many create/destroy cycles leave nothing behind (kmemleak checks too). */
static void shca_qp_cycles(struct kunit *test)
{
	struct shca_qp_env *env = shca_env_new(test);
	struct ib_qp *qp;
	u64 start = ktime_get_ns();
	int i;

	for (i = 0; i < SHCA_TEST_CYCLES; i++) {
		qp = shca_qp_new(env, i % 2 ? IB_QPT_RC : IB_QPT_UD, 16);
		KUNIT_ASSERT_NOT_ERR_OR_NULL(test, qp);
		KUNIT_ASSERT_EQ(test, ib_destroy_qp(qp), 0);
	}
	KUNIT_EXPECT_EQ(test, shca_qp_res(), 1);
	kunit_info(test, "%d QP cycles in %llu ms\n", SHCA_TEST_CYCLES,
		   (ktime_get_ns() - start) / NSEC_PER_MSEC);
	shca_env_free(env);
}

static struct kunit_case shca_qp_cases[] = {
	KUNIT_CASE(shca_qp_create_caps),
	KUNIT_CASE(shca_qp_create_refused),
	KUNIT_CASE(shca_qp_gsi_ready),
	KUNIT_CASE_PARAM(shca_qp_post_in_atomic, shca_qp_ctx_gen_params),
	KUNIT_CASE_PARAM(shca_qp_post_opcodes_in_atomic, shca_qp_ctx_gen_params),
	KUNIT_CASE(shca_qp_post_refused),
	KUNIT_CASE(shca_qp_post_ud_refused),
	KUNIT_CASE_PARAM(shca_qp_flush_on_err, shca_qp_ctx_gen_params),
	KUNIT_CASE(shca_qp_drain),
	KUNIT_CASE(shca_qp_sqd_event),
	KUNIT_CASE(shca_qp_engine_wq),
	KUNIT_CASE_PARAM(shca_qp_async, shca_qp_ctx_gen_params),
	KUNIT_CASE(shca_qp_limit),
	KUNIT_CASE(shca_qp_cycles),
	{}
};

static struct kunit_suite shca_qp_suite = {
	.name = "softhca_qp",
	.suite_init = shca_qp_fx_suite_init,
	.suite_exit = shca_qp_fx_suite_exit,
	.init = shca_qp_fx_init,
	.test_cases = shca_qp_cases,
};

kunit_test_suite(shca_qp_suite);
