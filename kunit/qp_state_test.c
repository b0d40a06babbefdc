// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * softhca_qp_state: the QP state machine of RC, UC and UD QPs, driven
 * through ib_core (ib_create_qp, ib_modify_qp, ib_query_qp, ib_destroy_qp),
 * follows the InfiniBand Architecture Specification, Vol 1, chapter 11
 * (Modify Queue Pair: the QP state transition table and, for each
 * transition and transport, its required and optional attributes):
 *
 * - each valid transition succeeds with exactly its required attributes,
 *   with them plus each optional attribute, and with all of them;
 * - it fails (-EINVAL) with any one required attribute missing, and with
 *   any one attribute that is neither required nor optional;
 * - every other (current state, next state) pair fails (-EINVAL), moving
 *   to SQE included: only the HCA enters SQE, on a send error;
 * - every state may move to RESET and to ERR, with no attribute;
 * - a refused modify leaves the QP in its state, and an accepted one
 *   leaves it in the new state reporting the attributes just set;
 * - the device's own GSI QP (QPN 1) cannot be created a second time.
 *
 * ib_modify_qp() does not check the transition for a kernel caller
 * (ib_modify_qp_is_ok() is for drivers to call), so this checks the
 * driver.  The expected results are the spec's, written out below
 * independently of ib_core's qp_state_table; where the two differ, a
 * comment says so.
 *
 * One device serves the whole suite; each row works on QPs of its own.
 */

#include <rdma/ib_cache.h>
#include <rdma/softhca-abi.h>

#include "dev.h"
#include "fixture.h"

/* Distinctive attribute values, within the device's limits. */
#define SHCA_T_SQ_PSN		0x123456
#define SHCA_T_RQ_PSN		0x654321
#define SHCA_T_QKEY		0x11223344
#define SHCA_T_DEST_QPN		0x42
#define SHCA_T_TIMEOUT		14
#define SHCA_T_RETRY_CNT	6
#define SHCA_T_RNR_RETRY	5
#define SHCA_T_MIN_RNR_TIMER	12
#define SHCA_T_MAX_RD_ATOMIC	8	/* <= max_qp_init_rd_atom (128) */
#define SHCA_T_MAX_DEST_RD_ATOMIC 9	/* <= max_qp_rd_atom (128) */
#define SHCA_T_PATH_MTU		IB_MTU_1024
#define SHCA_T_PKEY_INDEX	0	/* the P_Key table has one entry */

/*
 * The spec's attribute sets, named after the transition (and transport)
 * they belong to.  Spec names: P_Key index, Physical port, Q_Key, RDMA
 * and atomic enables (ACCESS_FLAGS), Primary AV (AV), Path MTU,
 * Destination QPN, Receive PSN (RQ_PSN), Responder resources
 * (MAX_DEST_RD_ATOMIC), Minimum RNR NAK timer, Send PSN (SQ_PSN), Local
 * ACK timeout (TIMEOUT), Retry count, RNR retry count, Initiator depth
 * (MAX_QP_RD_ATOMIC), Alternate path (ALT_PATH), Path migration state,
 * Current QP state (CUR_STATE), SQD affiliated asynchronous event request
 * (EN_SQD_ASYNC_NOTIFY).
 */

/* RESET->INIT required; INIT->INIT optional. */
#define SHCA_CONN_INIT	(IB_QP_PKEY_INDEX | IB_QP_PORT | IB_QP_ACCESS_FLAGS)
#define SHCA_UD_INIT	(IB_QP_PKEY_INDEX | IB_QP_PORT | IB_QP_QKEY)

/* INIT->RTR required. */
#define SHCA_UC_RTR	(IB_QP_AV | IB_QP_PATH_MTU | IB_QP_DEST_QPN | \
			 IB_QP_RQ_PSN)
#define SHCA_RC_RTR	(SHCA_UC_RTR | IB_QP_MAX_DEST_RD_ATOMIC | \
			 IB_QP_MIN_RNR_TIMER)
/* INIT->RTR optional. */
#define SHCA_CONN_RTR_OPT (IB_QP_ALT_PATH | IB_QP_ACCESS_FLAGS | \
			   IB_QP_PKEY_INDEX)
#define SHCA_UD_RTR_OPT	(IB_QP_PKEY_INDEX | IB_QP_QKEY)

/* RTR->RTS required. */
#define SHCA_RC_RTS	(IB_QP_SQ_PSN | IB_QP_TIMEOUT | IB_QP_RETRY_CNT | \
			 IB_QP_RNR_RETRY | IB_QP_MAX_QP_RD_ATOMIC)

/*
 * Optional on every move into RTS (RTR->RTS, RTS->RTS, SQD->RTS): the
 * current state may be asserted, the path and access changed.
 */
#define SHCA_UC_RTS_OPT	(IB_QP_CUR_STATE | IB_QP_ALT_PATH | \
			 IB_QP_ACCESS_FLAGS | IB_QP_PATH_MIG_STATE)
#define SHCA_RC_RTS_OPT	(SHCA_UC_RTS_OPT | IB_QP_MIN_RNR_TIMER)
#define SHCA_UD_RTS_OPT	(IB_QP_CUR_STATE | IB_QP_QKEY)

/*
 * SQD->SQD optional: once the send queue is drained the primary path and
 * the RC timers and depths may change.  The spec names the physical port
 * among them for RC only (UC carries its port in the AV).
 */
#define SHCA_RC_SQD_OPT	(IB_QP_PORT | IB_QP_AV | IB_QP_TIMEOUT | \
			 IB_QP_RETRY_CNT | IB_QP_RNR_RETRY | \
			 IB_QP_MAX_QP_RD_ATOMIC | IB_QP_MAX_DEST_RD_ATOMIC | \
			 IB_QP_ALT_PATH | IB_QP_ACCESS_FLAGS | \
			 IB_QP_PKEY_INDEX | IB_QP_MIN_RNR_TIMER | \
			 IB_QP_PATH_MIG_STATE)
#define SHCA_UC_SQD_OPT	(IB_QP_AV | IB_QP_ALT_PATH | IB_QP_ACCESS_FLAGS | \
			 IB_QP_PKEY_INDEX | IB_QP_PATH_MIG_STATE)
#define SHCA_UD_SQD_OPT	(IB_QP_PKEY_INDEX | IB_QP_QKEY)

/* SQE->RTS optional (UC and UD only: an RC send error goes to ERR). */
#define SHCA_UC_SQE_OPT	(IB_QP_CUR_STATE | IB_QP_ACCESS_FLAGS)
#define SHCA_UD_SQE_OPT	(IB_QP_CUR_STATE | IB_QP_QKEY)

/* One row of the spec's transition table, for one transport. */
struct shca_qp_row {
	enum ib_qp_type qpt;
	enum ib_qp_state from;
	enum ib_qp_state to;
	int req;		/* required attributes */
	int opt;		/* optional attributes */
};

#define SHCA_ROW(t, f, n, r, o)	{				\
	.qpt = IB_QPT_##t, .from = IB_QPS_##f, .to = IB_QPS_##n,	\
	.req = (r), .opt = (o),					\
}

/*
 * The valid transitions other than "any state -> RESET" and "any state ->
 * ERR" (which take no attribute; see shca_qp_to_reset_or_err()).
 *
 * Cross-checked afterwards against ib_core's qp_state_table (verbs.c):
 * the same attribute sets for RC, UC and UD.  Where ib_core differs:
 * RESET->ERR (see shca_qp_to_reset_or_err()), and the path migration
 * attributes on RoCE (see shca_opt_expect()).
 *
 * Linux-specific extras, not IBA attributes and not tested as optional:
 * IB_QP_RATE_LIMIT (ib_core allows it on RTR->RTS and RTS->RTS of raw
 * packet QPs only) and IB_QP_CAP (resizing the queues, an optional HCA
 * feature softhca does not advertise).
 */
static const struct shca_qp_row shca_qp_rows[] = {
	SHCA_ROW(RC, RESET, INIT, SHCA_CONN_INIT, 0),
	SHCA_ROW(UC, RESET, INIT, SHCA_CONN_INIT, 0),
	SHCA_ROW(UD, RESET, INIT, SHCA_UD_INIT, 0),

	SHCA_ROW(RC, INIT, INIT, 0, SHCA_CONN_INIT),
	SHCA_ROW(UC, INIT, INIT, 0, SHCA_CONN_INIT),
	SHCA_ROW(UD, INIT, INIT, 0, SHCA_UD_INIT),

	SHCA_ROW(RC, INIT, RTR, SHCA_RC_RTR, SHCA_CONN_RTR_OPT),
	SHCA_ROW(UC, INIT, RTR, SHCA_UC_RTR, SHCA_CONN_RTR_OPT),
	SHCA_ROW(UD, INIT, RTR, 0, SHCA_UD_RTR_OPT),

	SHCA_ROW(RC, RTR, RTS, SHCA_RC_RTS, SHCA_RC_RTS_OPT),
	SHCA_ROW(UC, RTR, RTS, IB_QP_SQ_PSN, SHCA_UC_RTS_OPT),
	SHCA_ROW(UD, RTR, RTS, IB_QP_SQ_PSN, SHCA_UD_RTS_OPT),

	SHCA_ROW(RC, RTS, RTS, 0, SHCA_RC_RTS_OPT),
	SHCA_ROW(UC, RTS, RTS, 0, SHCA_UC_RTS_OPT),
	SHCA_ROW(UD, RTS, RTS, 0, SHCA_UD_RTS_OPT),

	SHCA_ROW(RC, RTS, SQD, 0, IB_QP_EN_SQD_ASYNC_NOTIFY),
	SHCA_ROW(UC, RTS, SQD, 0, IB_QP_EN_SQD_ASYNC_NOTIFY),
	SHCA_ROW(UD, RTS, SQD, 0, IB_QP_EN_SQD_ASYNC_NOTIFY),

	SHCA_ROW(RC, SQD, RTS, 0, SHCA_RC_RTS_OPT),
	SHCA_ROW(UC, SQD, RTS, 0, SHCA_UC_RTS_OPT),
	SHCA_ROW(UD, SQD, RTS, 0, SHCA_UD_RTS_OPT),

	SHCA_ROW(RC, SQD, SQD, 0, SHCA_RC_SQD_OPT),
	SHCA_ROW(UC, SQD, SQD, 0, SHCA_UC_SQD_OPT),
	SHCA_ROW(UD, SQD, SQD, 0, SHCA_UD_SQD_OPT),

	/*
	 * Part of the table (so that SQE->RTS is not an invalid pair), but
	 * not run: only the HCA moves a QP to SQE, on a send completed in
	 * error, and softhca has no data path yet.
	 */
	SHCA_ROW(UC, SQE, RTS, 0, SHCA_UC_SQE_OPT),
	SHCA_ROW(UD, SQE, RTS, 0, SHCA_UD_SQE_OPT),
};

/*
 * The attributes, by name.  @probe: offered as "neither required nor
 * optional" where a row does not list it.  The path migration attributes
 * are not probed: on this device they are refused anyway (see
 * shca_opt_expect()), which would prove nothing.
 */
static const struct shca_attr_name {
	int bit;
	const char *name;
	bool probe;
} shca_attrs[] = {
	{ IB_QP_CUR_STATE, "CUR_STATE", true },
	{ IB_QP_EN_SQD_ASYNC_NOTIFY, "EN_SQD_ASYNC_NOTIFY", true },
	{ IB_QP_ACCESS_FLAGS, "ACCESS_FLAGS", true },
	{ IB_QP_PKEY_INDEX, "PKEY_INDEX", true },
	{ IB_QP_PORT, "PORT", true },
	{ IB_QP_QKEY, "QKEY", true },
	{ IB_QP_AV, "AV", true },
	{ IB_QP_PATH_MTU, "PATH_MTU", true },
	{ IB_QP_TIMEOUT, "TIMEOUT", true },
	{ IB_QP_RETRY_CNT, "RETRY_CNT", true },
	{ IB_QP_RNR_RETRY, "RNR_RETRY", true },
	{ IB_QP_RQ_PSN, "RQ_PSN", true },
	{ IB_QP_MAX_QP_RD_ATOMIC, "MAX_QP_RD_ATOMIC", true },
	{ IB_QP_ALT_PATH, "ALT_PATH", false },
	{ IB_QP_MIN_RNR_TIMER, "MIN_RNR_TIMER", true },
	{ IB_QP_SQ_PSN, "SQ_PSN", true },
	{ IB_QP_MAX_DEST_RD_ATOMIC, "MAX_DEST_RD_ATOMIC", true },
	{ IB_QP_PATH_MIG_STATE, "PATH_MIG_STATE", false },
	{ IB_QP_DEST_QPN, "DEST_QPN", true },
};

static const char * const shca_state_names[] = {
	[IB_QPS_RESET] = "RESET",
	[IB_QPS_INIT] = "INIT",
	[IB_QPS_RTR] = "RTR",
	[IB_QPS_RTS] = "RTS",
	[IB_QPS_SQD] = "SQD",
	[IB_QPS_SQE] = "SQE",
	[IB_QPS_ERR] = "ERR",
};

/*
 * The canonical path into each state, as its predecessor on it: RESET ->
 * INIT -> RTR -> RTS -> SQD, and ERR through INIT.  SQE has none.
 */
static const enum ib_qp_state shca_canon_prev[] = {
	[IB_QPS_INIT] = IB_QPS_RESET,
	[IB_QPS_RTR] = IB_QPS_INIT,
	[IB_QPS_RTS] = IB_QPS_RTR,
	[IB_QPS_SQD] = IB_QPS_RTS,
	[IB_QPS_ERR] = IB_QPS_INIT,
};

static const enum ib_qp_type shca_qpts[] = { IB_QPT_RC, IB_QPT_UC, IB_QPT_UD };

/* The device the suite shares, and what its rows address. */
static struct {
	struct shca_fixture fx;
	union ib_gid dgid;		/* the device's own GID 0 */
	bool apm;			/* automatic path migration offered */
} shca_env;

/* One parameter's QPs: their PD and CQ, and the row under test. */
struct shca_qp_ctx {
	struct kunit *test;
	enum ib_qp_type qpt;
	struct ib_pd *pd;
	struct ib_cq *cq;
	char row[48];			/* "RC INIT->RTR", in messages */
};

static const char *shca_qpt_name(enum ib_qp_type qpt)
{
	switch (qpt) {
	case IB_QPT_RC:
		return "RC";
	case IB_QPT_UC:
		return "UC";
	case IB_QPT_UD:
		return "UD";
	default:
		return "?";
	}
}

static void shca_row_name(const struct shca_qp_row *row, char *buf,
			  size_t len)
{
	snprintf(buf, len, "%s %s->%s", shca_qpt_name(row->qpt),
		 shca_state_names[row->from], shca_state_names[row->to]);
}

static void shca_row_desc(const struct shca_qp_row *row, char *desc)
{
	shca_row_name(row, desc, KUNIT_PARAM_DESC_SIZE);
}

static void shca_qpt_desc(const enum ib_qp_type *qpt, char *desc)
{
	strscpy(desc, shca_qpt_name(*qpt), KUNIT_PARAM_DESC_SIZE);
}

/* The rows a verb can start from: all but those from SQE. */
static const void *shca_qp_rows_gen_params(const void *prev, char *desc)
{
	const struct shca_qp_row *row = prev ? (const struct shca_qp_row *)prev + 1 :
					       shca_qp_rows;

	for (; row < shca_qp_rows + ARRAY_SIZE(shca_qp_rows); row++) {
		if (row->from == IB_QPS_SQE)
			continue;
		shca_row_desc(row, desc);
		return row;
	}
	return NULL;
}

KUNIT_ARRAY_PARAM(shca_qpts, shca_qpts, shca_qpt_desc);

static const struct shca_qp_row *shca_find_row(enum ib_qp_type qpt,
					       enum ib_qp_state from,
					       enum ib_qp_state to)
{
	int i;

	for (i = 0; i < ARRAY_SIZE(shca_qp_rows); i++) {
		const struct shca_qp_row *row = &shca_qp_rows[i];

		if (row->qpt == qpt && row->from == from && row->to == to)
			return row;
	}
	return NULL;
}

static bool shca_is_valid(enum ib_qp_type qpt, enum ib_qp_state from,
			  enum ib_qp_state to)
{
	return to == IB_QPS_RESET || to == IB_QPS_ERR ||
	       shca_find_row(qpt, from, to);
}

/* Required attributes of the canonical step into @to (0 if none). */
static int shca_entry_req(enum ib_qp_type qpt, enum ib_qp_state to)
{
	const struct shca_qp_row *row;

	if (to == IB_QPS_RESET || to == IB_QPS_SQE)
		return 0;
	row = shca_find_row(qpt, shca_canon_prev[to], to);
	return row ? row->req : 0;
}

/* The RoCE primary (and alternate) path: back to the device itself. */
static void shca_fill_path(struct rdma_ah_attr *ah)
{
	/* GID 0 exists: the suite's init waited for it. */
	WARN_ON_ONCE(shca_fixture_loopback_av(&shca_env.fx, ah));
}

/*
 * Every attribute, whatever the mask: the mask decides what is used.
 * UC has no RDMA read; UD ignores the access flags.
 */
static void shca_fill_attr(struct ib_qp_attr *attr, enum ib_qp_type qpt,
			   enum ib_qp_state cur, enum ib_qp_state to)
{
	*attr = (struct ib_qp_attr){
		.qp_state = to,
		.cur_qp_state = cur,
		.path_mtu = SHCA_T_PATH_MTU,
		.path_mig_state = IB_MIG_REARM,
		.qkey = SHCA_T_QKEY,
		.rq_psn = SHCA_T_RQ_PSN,
		.sq_psn = SHCA_T_SQ_PSN,
		.dest_qp_num = SHCA_T_DEST_QPN,
		.qp_access_flags = IB_ACCESS_REMOTE_WRITE,
		.pkey_index = SHCA_T_PKEY_INDEX,
		.alt_pkey_index = SHCA_T_PKEY_INDEX,
		.en_sqd_async_notify = 1,
		.max_rd_atomic = SHCA_T_MAX_RD_ATOMIC,
		.max_dest_rd_atomic = SHCA_T_MAX_DEST_RD_ATOMIC,
		.min_rnr_timer = SHCA_T_MIN_RNR_TIMER,
		.port_num = SHCA_PORT,
		.timeout = SHCA_T_TIMEOUT,
		.retry_cnt = SHCA_T_RETRY_CNT,
		.rnr_retry = SHCA_T_RNR_RETRY,
		.alt_port_num = SHCA_PORT,
		.alt_timeout = SHCA_T_TIMEOUT,
	};
	if (qpt == IB_QPT_RC)
		attr->qp_access_flags |= IB_ACCESS_REMOTE_READ;
	shca_fill_path(&attr->ah_attr);
	shca_fill_path(&attr->alt_ah_attr);
}

static int shca_modify(struct shca_qp_ctx *ctx, struct ib_qp *qp,
		       enum ib_qp_state cur, enum ib_qp_state to, int mask)
{
	struct ib_qp_attr attr;

	shca_fill_attr(&attr, ctx->qpt, cur, to);
	return ib_modify_qp(qp, &attr, IB_QP_STATE | mask);
}

/* The state ib_query_qp() reports, or a negative errno. */
static int shca_query_state(struct ib_qp *qp)
{
	struct ib_qp_init_attr init = {};
	struct ib_qp_attr attr = {};
	int ret;

	ret = ib_query_qp(qp, &attr, IB_QP_STATE, &init);
	return ret ? ret : attr.qp_state;
}

static void shca_expect_path(struct shca_qp_ctx *ctx, const char *what,
			     const struct rdma_ah_attr *got)
{
	struct kunit *test = ctx->test;

	KUNIT_EXPECT_TRUE_MSG(test, got->type == RDMA_AH_ATTR_TYPE_ROCE,
			      "%s %s: AV type %d", ctx->row, what, got->type);
	KUNIT_EXPECT_EQ_MSG(test, rdma_ah_get_port_num(got), SHCA_PORT,
			    "%s %s: AV port", ctx->row, what);
	KUNIT_EXPECT_TRUE_MSG(test, rdma_ah_get_ah_flags(got) & IB_AH_GRH,
			      "%s %s: AV without GRH", ctx->row, what);
	KUNIT_EXPECT_EQ_MSG(test, memcmp(rdma_ah_read_grh(got)->dgid.raw,
					 shca_env.dgid.raw,
					 sizeof(shca_env.dgid)), 0,
			    "%s %s: AV dgid", ctx->row, what);
}

/*
 * The value of the field @bit sets, widened; false for an attribute a
 * query does not report as a plain value (AV, alternate path, CUR_STATE)
 * or that ib_core's query leaves unspecified (EN_SQD_ASYNC_NOTIFY).
 */
static bool shca_field(const struct ib_qp_attr *attr, int bit, u32 *val)
{
	switch (bit) {
	case IB_QP_ACCESS_FLAGS:
		*val = attr->qp_access_flags;
		return true;
	case IB_QP_PKEY_INDEX:
		*val = attr->pkey_index;
		return true;
	case IB_QP_PORT:
		*val = attr->port_num;
		return true;
	case IB_QP_QKEY:
		*val = attr->qkey;
		return true;
	case IB_QP_PATH_MTU:
		*val = attr->path_mtu;
		return true;
	case IB_QP_TIMEOUT:
		*val = attr->timeout;
		return true;
	case IB_QP_RETRY_CNT:
		*val = attr->retry_cnt;
		return true;
	case IB_QP_RNR_RETRY:
		*val = attr->rnr_retry;
		return true;
	case IB_QP_RQ_PSN:
		*val = attr->rq_psn;
		return true;
	case IB_QP_MAX_QP_RD_ATOMIC:
		*val = attr->max_rd_atomic;
		return true;
	case IB_QP_MIN_RNR_TIMER:
		*val = attr->min_rnr_timer;
		return true;
	case IB_QP_SQ_PSN:
		*val = attr->sq_psn;
		return true;
	case IB_QP_MAX_DEST_RD_ATOMIC:
		*val = attr->max_dest_rd_atomic;
		return true;
	case IB_QP_PATH_MIG_STATE:
		*val = attr->path_mig_state;
		return true;
	case IB_QP_DEST_QPN:
		*val = attr->dest_qp_num;
		return true;
	default:
		return false;
	}
}

static void shca_expect_fields(struct shca_qp_ctx *ctx, const char *what,
			       int mask, const struct ib_qp_attr *got,
			       const struct ib_qp_attr *want)
{
	u32 got_val, want_val;
	int i, bit;

	KUNIT_EXPECT_EQ_MSG(ctx->test, got->qp_state, want->qp_state,
			    "%s %s: qp_state", ctx->row, what);
	for (i = 0; i < ARRAY_SIZE(shca_attrs); i++) {
		bit = shca_attrs[i].bit;
		if (!(mask & bit) || !shca_field(got, bit, &got_val))
			continue;
		shca_field(want, bit, &want_val);
		KUNIT_EXPECT_EQ_MSG(ctx->test, got_val, want_val, "%s %s: %s",
				    ctx->row, what, shca_attrs[i].name);
	}
	if (mask & IB_QP_AV)
		shca_expect_path(ctx, what, &got->ah_attr);
}

/* ib_query_qp() reports state @to and the attributes in @mask. */
static void shca_expect_attrs(struct shca_qp_ctx *ctx, struct ib_qp *qp,
			      enum ib_qp_state to, int mask, const char *what)
{
	struct ib_qp_init_attr init = {};
	struct ib_qp_attr got = {};
	struct ib_qp_attr want;
	int ret;

	/* CUR_STATE is an assertion, not an attribute one can query. */
	ret = ib_query_qp(qp, &got, (IB_QP_STATE | mask) & ~IB_QP_CUR_STATE,
			  &init);
	KUNIT_EXPECT_EQ_MSG(ctx->test, ret, 0, "%s %s: query", ctx->row, what);
	if (ret)
		return;
	shca_fill_attr(&want, ctx->qpt, to, to);
	shca_expect_fields(ctx, what, mask, &got, &want);
}

/* The QP's handler: SQ drained and the like are not checked here. */
static void shca_qp_event(struct ib_event *event, void *context)
{
}

static struct ib_qp *shca_qp_create(struct shca_qp_ctx *ctx,
				    enum ib_qp_type qpt)
{
	struct ib_qp_init_attr init = {
		.event_handler = shca_qp_event,
		.send_cq = ctx->cq,
		.recv_cq = ctx->cq,
		.cap = {
			.max_send_wr = 8,
			.max_recv_wr = 8,
			.max_send_sge = 1,
			.max_recv_sge = 1,
		},
		.sq_sig_type = IB_SIGNAL_REQ_WR,
		.qp_type = qpt,
		.port_num = SHCA_PORT,
	};

	return ib_create_qp(ctx->pd, &init);
}

static void shca_qp_destroy(struct shca_qp_ctx *ctx, struct ib_qp *qp)
{
	KUNIT_EXPECT_EQ_MSG(ctx->test, ib_destroy_qp(qp), 0,
			    "%s: destroy QP", ctx->row);
}

/* Move @qp from RESET to @target along the canonical path. */
static int shca_qp_drive(struct shca_qp_ctx *ctx, struct ib_qp *qp,
			 enum ib_qp_state target)
{
	enum ib_qp_state path[IB_QPS_ERR + 1];
	enum ib_qp_state cur = IB_QPS_RESET;
	int n = 0, ret;

	for (; target != IB_QPS_RESET; target = shca_canon_prev[target])
		path[n++] = target;
	while (n--) {
		ret = shca_modify(ctx, qp, cur, path[n],
				  shca_entry_req(ctx->qpt, path[n]));
		KUNIT_EXPECT_EQ_MSG(ctx->test, ret, 0, "%s: setup %s->%s",
				    ctx->row, shca_state_names[cur],
				    shca_state_names[path[n]]);
		if (ret)
			return ret;
		cur = path[n];
	}
	return 0;
}

/* A new QP of the parameter's type in state @state, or NULL. */
static struct ib_qp *shca_qp_new_at(struct shca_qp_ctx *ctx,
				    enum ib_qp_state state)
{
	struct ib_qp *qp = shca_qp_create(ctx, ctx->qpt);

	KUNIT_EXPECT_FALSE_MSG(ctx->test, IS_ERR(qp), "%s: create QP: %ld",
			       ctx->row, PTR_ERR_OR_ZERO(qp));
	if (IS_ERR(qp))
		return NULL;
	if (shca_qp_drive(ctx, qp, state)) {
		shca_qp_destroy(ctx, qp);
		return NULL;
	}
	return qp;
}

/* The modify fails with @err and the QP stays in state @row->from. */
static void shca_expect_refused(struct shca_qp_ctx *ctx, struct ib_qp *qp,
				const struct shca_qp_row *row,
				enum ib_qp_state cur, int mask, int err,
				const char *what)
{
	int ret = shca_modify(ctx, qp, cur, row->to, mask);

	KUNIT_EXPECT_EQ_MSG(ctx->test, ret, err, "%s %s", ctx->row, what);
	KUNIT_EXPECT_EQ_MSG(ctx->test, shca_query_state(qp), (int)row->from,
			    "%s %s: state after refusal", ctx->row, what);
}

/* A fresh QP in @row->from accepts the move with @mask, and reports it. */
static void shca_expect_accepted(struct shca_qp_ctx *ctx,
				 const struct shca_qp_row *row, int mask,
				 const char *what)
{
	struct ib_qp *qp = shca_qp_new_at(ctx, row->from);
	int ret;

	if (!qp)
		return;
	ret = shca_modify(ctx, qp, row->from, row->to, mask);
	KUNIT_EXPECT_EQ_MSG(ctx->test, ret, 0, "%s %s", ctx->row, what);
	if (!ret)
		shca_expect_attrs(ctx, qp, row->to,
				  row->to == IB_QPS_RESET ? 0 : mask, what);
	shca_qp_destroy(ctx, qp);
}

/*
 * What an optional attribute gets on this device.  The path migration
 * attributes are optional in the spec only for an HCA that implements
 * automatic path migration: ib_core refuses an alternate path on RoCE
 * outright, and without APM a path migration state cannot be set (the
 * spec allows Migrated only from Armed, and arming needs an alternate
 * path).
 */
static int shca_opt_expect(int bit)
{
	if (bit == IB_QP_ALT_PATH)
		return -EINVAL;
	if (bit == IB_QP_PATH_MIG_STATE && !shca_env.apm)
		return -EINVAL;
	return 0;
}

/* Refusals, all on one QP: a refused modify leaves it where it was. */
static void shca_row_refusals(struct shca_qp_ctx *ctx,
			      const struct shca_qp_row *row)
{
	struct ib_qp *qp = shca_qp_new_at(ctx, row->from);
	char what[64];
	int i, bit;

	if (!qp)
		return;
	for (i = 0; i < ARRAY_SIZE(shca_attrs); i++) {
		bit = shca_attrs[i].bit;
		if (row->req & bit) {
			snprintf(what, sizeof(what), "without required %s",
				 shca_attrs[i].name);
			shca_expect_refused(ctx, qp, row, row->from,
					    row->req & ~bit, -EINVAL, what);
		} else if ((row->opt & bit) && shca_opt_expect(bit)) {
			snprintf(what, sizeof(what), "with optional %s",
				 shca_attrs[i].name);
			shca_expect_refused(ctx, qp, row, row->from,
					    row->req | bit,
					    shca_opt_expect(bit), what);
		} else if (!(row->opt & bit) && shca_attrs[i].probe) {
			snprintf(what, sizeof(what), "with disallowed %s",
				 shca_attrs[i].name);
			shca_expect_refused(ctx, qp, row, row->from,
					    row->req | bit, -EINVAL, what);
		}
	}
	/* The current state asserted, wrongly: RESET is never a source here. */
	if (row->opt & IB_QP_CUR_STATE)
		shca_expect_refused(ctx, qp, row, IB_QPS_RESET,
				    row->req | IB_QP_CUR_STATE, -EINVAL,
				    "with CUR_STATE RESET (wrong)");
	shca_qp_destroy(ctx, qp);
}

/* Acceptances: required only, plus each optional, plus all optional. */
static void shca_row_accepts(struct shca_qp_ctx *ctx,
			     const struct shca_qp_row *row)
{
	char what[64];
	int i, bit, all = 0;

	shca_expect_accepted(ctx, row, row->req, "with required only");
	for (i = 0; i < ARRAY_SIZE(shca_attrs); i++) {
		bit = shca_attrs[i].bit;
		if (!(row->opt & bit) || shca_opt_expect(bit))
			continue;
		snprintf(what, sizeof(what), "with optional %s",
			 shca_attrs[i].name);
		shca_expect_accepted(ctx, row, row->req | bit, what);
		all |= bit;
	}
	if (hweight32(all) > 1)
		shca_expect_accepted(ctx, row, row->req | all,
				     "with all optional");
}

static void shca_run_row(struct shca_qp_ctx *ctx,
			 const struct shca_qp_row *row)
{
	shca_row_name(row, ctx->row, sizeof(ctx->row));
	shca_row_refusals(ctx, row);
	shca_row_accepts(ctx, row);
}

static void shca_ctx_init(struct kunit *test, struct shca_qp_ctx *ctx,
			  enum ib_qp_type qpt)
{
	struct ib_device *ibdev = shca_env.fx.ibdev;

	*ctx = (struct shca_qp_ctx){ .test = test, .qpt = qpt };
	ctx->pd = ib_alloc_pd(ibdev, 0);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, ctx->pd);
	ctx->cq = ib_alloc_cq(ibdev, NULL, 16, 0, IB_POLL_DIRECT);
	if (IS_ERR(ctx->cq))
		ib_dealloc_pd(ctx->pd);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, ctx->cq);
}

static void shca_ctx_fini(struct shca_qp_ctx *ctx)
{
	ib_free_cq(ctx->cq);
	ib_dealloc_pd(ctx->pd);
}

/* One row of the spec's table. */
static void shca_qp_transition(struct kunit *test)
{
	const struct shca_qp_row *row = test->param_value;
	struct shca_qp_ctx ctx;

	shca_ctx_init(test, &ctx, row->qpt);
	shca_run_row(&ctx, row);
	shca_ctx_fini(&ctx);
}

/*
 * Any state -> RESET and any state -> ERR, with no attribute.
 *
 * Differs from ib_core: its qp_state_table has no RESET->ERR entry, so a
 * driver that only calls ib_modify_qp_is_ok() refuses RESET->ERR, which
 * the spec allows (Modify QP may move a QP to Error from any state).
 * The canonical path into ERR goes through INIT so that only this row
 * depends on it.
 */
static void shca_qp_to_reset_or_err(struct kunit *test)
{
	const enum ib_qp_type *qpt = test->param_value;
	struct shca_qp_row row = { .qpt = *qpt };
	struct shca_qp_ctx ctx;

	shca_ctx_init(test, &ctx, *qpt);
	for (row.from = IB_QPS_RESET; row.from <= IB_QPS_ERR; row.from++) {
		if (row.from == IB_QPS_SQE)	/* see shca_qp_rows[] */
			continue;
		row.to = IB_QPS_RESET;
		shca_run_row(&ctx, &row);
		row.to = IB_QPS_ERR;
		shca_run_row(&ctx, &row);
	}
	shca_ctx_fini(&ctx);
}

/* Refuse every pair the table does not list, from one reachable state. */
static void shca_invalid_from(struct shca_qp_ctx *ctx, enum ib_qp_state from)
{
	struct shca_qp_row row = { .qpt = ctx->qpt, .from = from };
	struct ib_qp *qp;

	shca_row_name(&row, ctx->row, sizeof(ctx->row));
	qp = shca_qp_new_at(ctx, from);
	if (!qp)
		return;
	for (row.to = IB_QPS_RESET; row.to <= IB_QPS_ERR; row.to++) {
		if (shca_is_valid(ctx->qpt, from, row.to))
			continue;
		shca_row_name(&row, ctx->row, sizeof(ctx->row));
		/* What would enter row.to, so that only the pair is wrong. */
		shca_expect_refused(ctx, qp, &row, from,
				    shca_entry_req(ctx->qpt, row.to), -EINVAL,
				    "(invalid pair)");
	}
	shca_qp_destroy(ctx, qp);
}

/* Every invalid (current, next) pair fails; SQE is never a next state. */
static void shca_qp_invalid_pairs(struct kunit *test)
{
	const enum ib_qp_type *qpt = test->param_value;
	struct shca_qp_ctx ctx;
	enum ib_qp_state from;

	shca_ctx_init(test, &ctx, *qpt);
	for (from = IB_QPS_RESET; from <= IB_QPS_ERR; from++)
		if (from != IB_QPS_SQE)	/* see shca_qp_rows[] */
			shca_invalid_from(&ctx, from);
	shca_ctx_fini(&ctx);
}

/* ib_mad owns the device's GSI QP (QPN 1): there is no second one. */
static void shca_qp_gsi_busy(struct kunit *test)
{
	struct shca_qp_ctx ctx;
	struct ib_qp *qp;

	shca_ctx_init(test, &ctx, IB_QPT_GSI);
	strscpy(ctx.row, "GSI", sizeof(ctx.row));
	qp = shca_qp_create(&ctx, IB_QPT_GSI);
	KUNIT_EXPECT_EQ(test, PTR_ERR_OR_ZERO(qp), -EBUSY);
	if (!IS_ERR(qp))
		shca_qp_destroy(&ctx, qp);
	shca_ctx_fini(&ctx);
}

/* One device serves the whole suite: creating one takes seconds in TCG. */
static int shca_qp_suite_init(struct kunit_suite *suite)
{
	struct shca_fixture *fx = &shca_env.fx;
	int ret;

	ret = shca_fixture_setup(fx, "softhca_qpst");
	if (ret)
		return ret;
	ret = shca_fixture_wait_gid(fx, 0);
	if (!ret)
		ret = rdma_query_gid(fx->ibdev, SHCA_PORT, 0, &shca_env.dgid);
	if (ret) {
		shca_fixture_teardown(fx);
		return ret;
	}
	shca_env.apm = fx->ibdev->attrs.device_cap_flags &
		       IB_DEVICE_AUTO_PATH_MIG;
	return 0;
}

static void shca_qp_suite_exit(struct kunit_suite *suite)
{
	shca_fixture_teardown(&shca_env.fx);
}

static struct kunit_case shca_qp_state_cases[] = {
	KUNIT_CASE_PARAM(shca_qp_transition, shca_qp_rows_gen_params),
	KUNIT_CASE_PARAM(shca_qp_to_reset_or_err, shca_qpts_gen_params),
	KUNIT_CASE_PARAM(shca_qp_invalid_pairs, shca_qpts_gen_params),
	KUNIT_CASE(shca_qp_gsi_busy),
	{}
};

static struct kunit_suite shca_qp_state_suite = {
	.name = "softhca_qp_state",
	.suite_init = shca_qp_suite_init,
	.suite_exit = shca_qp_suite_exit,
	.test_cases = shca_qp_state_cases,
};

kunit_test_suite(shca_qp_state_suite);
