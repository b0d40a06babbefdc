// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * hostile-abi: sends softhca's uverbs commands with malformed driver data
 * and absurd attributes, and checks that the kernel refuses each one
 * cleanly, with the error code a provider can act on.  Then it proves the
 * context still works.  Leaks are for the caller to see: it compares the
 * device's resource counts (rdma resource show) before and after.
 *
 * Usage: RDMAV_DRIVERS=/abs/path/libsofthca hostile-abi DEVICE
 * Output: one TAP line per case; exit status 0 when every case passed.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <rdma/softhca-abi.h>

#include "rdma-core-private.h"
#include "tap.h"

/* One case: the call returned @err (0 or a positive errno value). */
static void expect(const char *what, int err, int want)
{
	char detail[128];

	snprintf(detail, sizeof(detail), "%s%s%s",
		 err ? strerror(err) : "accepted",
		 err == want ? "" : ", expected ",
		 err == want ? "" : (want ? strerror(want) : "accepted"));
	tap(err == want, what, detail);
}

/* A command buffer followed by driver request data the kernel must see. */
#define WITH_TAIL(type)							\
	struct {							\
		struct type cmd;					\
		uint64_t tail;						\
	}

/* A response big enough for the core part and softhca's, and then some. */
union resp_buf {
	struct ib_uverbs_create_cq_resp cq;
	struct ib_uverbs_create_qp_resp qp;
	struct ib_uverbs_create_srq_resp srq;
	struct ib_uverbs_resize_cq_resp resize;
	struct ib_uverbs_create_ah_resp ah;
	uint8_t bytes[256];
};

static void cq_cases(struct ibv_context *ctx, struct ibv_cq *real)
{
	WITH_TAIL(rcp_create_cq_cmd) c = { .tail = 0x5a };
	WITH_TAIL(rcp_resize_cq_cmd) r = { .tail = 0x5a };
	union resp_buf resp;
	struct ibv_cq cq;
	size_t full = sizeof(resp.cq) + sizeof(struct softhca_create_cq_resp);
	int err;

	memset(&cq, 0, sizeof(cq));
	expect("create_cq: non-zero request data",
	       ibv_cmd_create_cq(ctx, 16, NULL, 0, &cq, &c.cmd, sizeof(c),
				 &resp.cq, full), EINVAL);
	expect("create_cq: no room for the ring's map",
	       ibv_cmd_create_cq(ctx, 16, NULL, 0, &cq, &c.cmd,
				 sizeof(c.cmd), &resp.cq, sizeof(resp.cq)),
	       EINVAL);
	expect("create_cq: half the ring's map",
	       ibv_cmd_create_cq(ctx, 16, NULL, 0, &cq, &c.cmd,
				 sizeof(c.cmd), &resp.cq, full - 8), EINVAL);
	expect("create_cq: 0 entries",
	       ibv_cmd_create_cq(ctx, 0, NULL, 0, &cq, &c.cmd,
				 sizeof(c.cmd), &resp.cq, full), EINVAL);
	expect("create_cq: 2^30 entries",
	       ibv_cmd_create_cq(ctx, 1 << 30, NULL, 0, &cq, &c.cmd,
				 sizeof(c.cmd), &resp.cq, full), EINVAL);
	expect("create_cq: -1 entries",
	       ibv_cmd_create_cq(ctx, -1, NULL, 0, &cq, &c.cmd,
				 sizeof(c.cmd), &resp.cq, full), EINVAL);
	/* Zeroed request data is what a newer provider's unused fields are. */
	c.tail = 0;
	err = ibv_cmd_create_cq(ctx, 16, NULL, 0, &cq, &c.cmd, sizeof(c),
				&resp.cq, full);
	expect("create_cq: zeroed request data", err, 0);
	if (!err)
		expect("destroy_cq after it", ibv_cmd_destroy_cq(&cq), 0);

	full = sizeof(resp.resize) + sizeof(struct softhca_create_cq_resp);
	expect("resize_cq: non-zero request data",
	       ibv_cmd_resize_cq(real, 64, &r.cmd, sizeof(r), &resp.resize,
				 full), EINVAL);
	expect("resize_cq: no room for the ring's map",
	       ibv_cmd_resize_cq(real, 64, &r.cmd, sizeof(r.cmd),
				 &resp.resize, sizeof(resp.resize)), EINVAL);
	expect("resize_cq: 2^30 entries",
	       ibv_cmd_resize_cq(real, 1 << 30, &r.cmd, sizeof(r.cmd),
				 &resp.resize, full), EINVAL);
}

static void qp_cases(struct ibv_pd *pd, struct ibv_cq *cq)
{
	WITH_TAIL(rcp_create_qp_cmd) c = { .tail = 0x5a };
	const struct ibv_qp_init_attr good = {
		.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 16, .max_recv_wr = 16,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_qp_init_attr attr;
	union resp_buf resp;
	struct ibv_qp qp;
	size_t full = sizeof(resp.qp) + sizeof(struct softhca_create_qp_resp);

	memset(&qp, 0, sizeof(qp));
#define CREATE_QP(what, field, value, csize, rsize, want)		\
	do {								\
		attr = good;						\
		field = value;						\
		expect("create_qp: " what,				\
		       ibv_cmd_create_qp(pd, &qp, &attr, &c.cmd, csize,	\
					 &resp.qp, rsize), want);	\
	} while (0)
	CREATE_QP("non-zero request data", attr.sq_sig_all, 0, sizeof(c),
		  full, EINVAL);
	CREATE_QP("no room for the rings' maps", attr.sq_sig_all, 0,
		  sizeof(c.cmd), sizeof(resp.qp), EINVAL);
	CREATE_QP("2^30 send WRs", attr.cap.max_send_wr, 1 << 30,
		  sizeof(c.cmd), full, EINVAL);
	CREATE_QP("2^30 receive WRs", attr.cap.max_recv_wr, 1 << 30,
		  sizeof(c.cmd), full, EINVAL);
	CREATE_QP("10000 send SGEs", attr.cap.max_send_sge, 10000,
		  sizeof(c.cmd), full, EINVAL);
	CREATE_QP("10000 receive SGEs", attr.cap.max_recv_sge, 10000,
		  sizeof(c.cmd), full, EINVAL);
	CREATE_QP("1 MiB inline", attr.cap.max_inline_data, 1 << 20,
		  sizeof(c.cmd), full, EINVAL);
	CREATE_QP("unknown QP type", attr.qp_type, 0x7f, sizeof(c.cmd), full,
		  EINVAL);
#undef CREATE_QP
}

/* INIT to RTR with one bad attribute: refused. */
static void rtr_case(struct ibv_qp *qp, const char *what,
		     enum ibv_mtu mtu, uint32_t qpn, uint8_t gid_index,
		     int want)
{
	struct ibv_qp_attr attr = {
		.qp_state = IBV_QPS_RTR, .path_mtu = mtu, .dest_qp_num = qpn,
		.ah_attr = { .is_global = 1, .port_num = 1,
			     .grh = { .sgid_index = gid_index,
				      .hop_limit = 64 } },
	};
	char name[96];

	ibv_query_gid(qp->context, 1, 1, &attr.ah_attr.grh.dgid);
	snprintf(name, sizeof(name), "modify_qp: RTR with %s", what);
	expect(name, ibv_modify_qp(qp, &attr, IBV_QP_STATE | IBV_QP_AV |
				   IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
				   IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
				   IBV_QP_MIN_RNR_TIMER), want);
}

/* Modify attributes out of range: refused, and the QP stays in RESET. */
static void modify_cases(struct ibv_pd *pd, struct ibv_cq *cq)
{
	struct ibv_qp_init_attr init = {
		.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 4, .max_recv_wr = 4,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	const struct ibv_qp_attr to_init = {
		.qp_state = IBV_QPS_INIT, .port_num = 1,
	};
	const int init_mask = IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			      IBV_QP_PORT | IBV_QP_ACCESS_FLAGS;
	struct ibv_qp_attr attr;
	struct ibv_qp *qp;

	qp = ibv_create_qp(pd, &init);
	if (!qp) {
		expect("create_qp for modify cases", errno, 0);
		return;
	}
#define MODIFY(what, field, value, mask)				\
	do {								\
		attr = to_init;						\
		field = value;						\
		expect("modify_qp: " what, ibv_modify_qp(qp, &attr, mask), \
		       EINVAL);						\
	} while (0)
	MODIFY("port 2", attr.port_num, 2, init_mask);
	MODIFY("P_Key index 100", attr.pkey_index, 100, init_mask);
	MODIFY("unknown access flag", attr.qp_access_flags, 1 << 20,
	       init_mask);
	MODIFY("RESET to RTS", attr.qp_state, IBV_QPS_RTS, IBV_QP_STATE);
#undef MODIFY
	expect("modify_qp: to INIT after all", ibv_modify_qp(qp, (struct ibv_qp_attr *)&to_init, init_mask), 0);
	rtr_case(qp, "MTU code 9", 9, 2, 1, EINVAL);
	rtr_case(qp, "QPN 2^24", IBV_MTU_1024, 1 << 24, 1, EINVAL);
	/* ib_core looks the GID up, and finds none. */
	rtr_case(qp, "GID index 200", IBV_MTU_1024, 2, 200, ENODATA);

	/* WRs copied in through ib_uverbs would race the provider's ring. */
	{
		struct ibv_send_wr swr = { .opcode = IBV_WR_SEND }, *sbad;
		struct ibv_recv_wr rwr = { .wr_id = 1 }, *rbad;

		expect("post_send: WRs through the kernel",
		       ibv_cmd_post_send(qp, &swr, &sbad), EINVAL);
		expect("post_recv: WRs through the kernel",
		       ibv_cmd_post_recv(qp, &rwr, &rbad), EINVAL);
	}
	expect("destroy_qp", ibv_destroy_qp(qp), 0);
}

/* A QP of an SRQ has no receive ring: its receive doorbell is refused. */
static void srq_qp_case(struct ibv_pd *pd, struct ibv_cq *cq,
			struct ibv_srq *srq)
{
	struct ibv_qp_init_attr init = {
		.send_cq = cq, .recv_cq = cq, .srq = srq, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 4, .max_send_sge = 1 },
	};
	struct ibv_recv_wr *bad;
	struct ibv_qp *qp = ibv_create_qp(pd, &init);

	expect("create_qp on the SRQ", qp ? 0 : errno, 0);
	if (!qp)
		return;
	expect("post_recv: the receive doorbell of a QP of an SRQ",
	       ibv_cmd_post_recv(qp, NULL, &bad), EINVAL);
	expect("destroy_qp of the SRQ", ibv_destroy_qp(qp), 0);
}

static void srq_cases(struct ibv_pd *pd, struct ibv_cq *cq)
{
	WITH_TAIL(rcp_create_srq_cmd) c = { .tail = 0x5a };
	struct rcp_modify_srq_cmd m = {};
	const struct ibv_srq_init_attr good = {
		.attr = { .max_wr = 16, .max_sge = 1 },
	};
	struct ibv_srq_init_attr attr;
	struct ibv_srq_attr mod;
	union resp_buf resp;
	struct ibv_srq srq, *real;
	size_t full = sizeof(resp.srq) +
		      sizeof(struct softhca_create_srq_resp);

	memset(&srq, 0, sizeof(srq));
#define CREATE_SRQ(what, field, value, csize, rsize)			\
	do {								\
		attr = good;						\
		field = value;						\
		expect("create_srq: " what,				\
		       ibv_cmd_create_srq(pd, &srq, &attr, &c.cmd, csize, \
					  &resp.srq, rsize), EINVAL);	\
	} while (0)
	CREATE_SRQ("non-zero request data", attr.attr.srq_limit, 0,
		   sizeof(c), full);
	CREATE_SRQ("no room for the ring's map", attr.attr.srq_limit, 0,
		   sizeof(c.cmd), sizeof(resp.srq));
	CREATE_SRQ("2^30 WRs", attr.attr.max_wr, 1 << 30, sizeof(c.cmd),
		   full);
	CREATE_SRQ("10000 SGEs", attr.attr.max_sge, 10000, sizeof(c.cmd),
		   full);
	CREATE_SRQ("limit over its size", attr.attr.srq_limit, 17,
		   sizeof(c.cmd), full);
#undef CREATE_SRQ

	attr = good;
	real = ibv_create_srq(pd, &attr);
	if (!real) {
		expect("create_srq for modify cases", errno, 0);
		return;
	}
	mod = (struct ibv_srq_attr){ .max_wr = 64 };
	expect("modify_srq: resize (not offered)",
	       ibv_cmd_modify_srq(real, &mod, IBV_SRQ_MAX_WR, &m, sizeof(m)),
	       EOPNOTSUPP);
	mod = (struct ibv_srq_attr){ .srq_limit = 1000 };
	expect("modify_srq: limit over its size",
	       ibv_cmd_modify_srq(real, &mod, IBV_SRQ_LIMIT, &m, sizeof(m)),
	       EINVAL);
	srq_qp_case(pd, cq, real);
	expect("destroy_srq", ibv_destroy_srq(real), 0);
}

static void ah_mr_cases(struct ibv_pd *pd)
{
	struct ibv_ah_attr attr = {
		.is_global = 1, .port_num = 1,
		.grh = { .sgid_index = 1, .hop_limit = 64 },
	};
	union resp_buf resp;
	struct ibv_ah ah;
	void *buf = malloc(4096);

	memset(&ah, 0, sizeof(ah));
	ibv_query_gid(pd->context, 1, 1, &attr.grh.dgid);
	expect("create_ah: no room for its number",
	       ibv_cmd_create_ah(pd, &ah, &attr, &resp.ah, sizeof(resp.ah)),
	       EINVAL);
	/* Bits 10..19: no flag, and not in the optional range either. */
	expect("reg_mr: unknown access flag",
	       ibv_reg_mr(pd, buf, 4096, 1 << 12) ? 0 : errno, EINVAL);
	{
		struct ibv_mr *ro = ibv_reg_mr(pd, buf, 4096, 0);

		expect("reg_mr: read-only", ro ? 0 : errno, 0);
		if (ro) {
			expect("rereg_mr: a new translation onto unmapped memory",
			       ibv_rereg_mr(ro, IBV_REREG_MR_CHANGE_TRANSLATION,
					    NULL, (void *)4096, 4096, 0) ?
			       errno : 0, EFAULT);
			expect("rereg_mr: a new translation",
			       ibv_rereg_mr(ro, IBV_REREG_MR_CHANGE_TRANSLATION,
					    NULL, buf, 2048, 0) ? errno : 0,
			       0);
			expect("rereg_mr: write access to read-only pages",
			       ibv_rereg_mr(ro, IBV_REREG_MR_CHANGE_ACCESS, NULL,
					    NULL, 0, IBV_ACCESS_LOCAL_WRITE) ?
			       errno : 0, EOPNOTSUPP);
			expect("rereg_mr: remote read access",
			       ibv_rereg_mr(ro, IBV_REREG_MR_CHANGE_ACCESS, NULL,
					    NULL, 0, IBV_ACCESS_REMOTE_READ) ?
			       errno : 0, 0);
			expect("dereg_mr after it", ibv_dereg_mr(ro), 0);
		}
	}
	expect("reg_mr: unmapped memory",
	       ibv_reg_mr(pd, (void *)4096, 4096, IBV_ACCESS_LOCAL_WRITE) ?
	       0 : errno, EFAULT);
	free(buf);
}

/* mmap of what no create response described. */
/* Memory windows: only types 1 and 2, and no driver data. */
static void mw_cases(struct ibv_pd *pd)
{
	WITH_TAIL(rcp_alloc_mw_cmd) c = { .tail = 0x5a };
	struct ib_uverbs_alloc_mw_resp resp;
	struct ibv_mw mw;
	int type;

	memset(&mw, 0, sizeof(mw));
	expect("alloc_mw: non-zero request data",
	       ibv_cmd_alloc_mw(pd, IBV_MW_TYPE_2, &mw, &c.cmd, sizeof(c),
				&resp, sizeof(resp)), EINVAL);
	for (type = 0; type <= 255; type += 255) {
		memset(&c, 0, sizeof(c));
		expect(type ? "alloc_mw: type 255" : "alloc_mw: type 0",
		       ibv_cmd_alloc_mw(pd, type, &mw, &c.cmd, sizeof(c.cmd),
					&resp, sizeof(resp)), EINVAL);
	}
	memset(&c, 0, sizeof(c));
	expect("alloc_mw: type 1",
	       ibv_cmd_alloc_mw(pd, IBV_MW_TYPE_1, &mw, &c.cmd, sizeof(c.cmd),
				&resp, sizeof(resp)), 0);
	expect("dealloc_mw after it", ibv_cmd_dealloc_mw(&mw), 0);
	/* ib_core's answer for a handle it no longer has. */
	expect("dealloc_mw again", ibv_cmd_dealloc_mw(&mw), ENOENT);
}

/*
 * Multicast: UD QPs and multicast GIDs only.  ib_uverbs refuses to
 * destroy a QP still attached; the one left so goes with the context,
 * detached first, and the harness checks that the netdev left its group.
 */
static void mcast_cases(struct ibv_pd *pd, struct ibv_cq *cq)
{
	struct ibv_qp_init_attr init = {
		.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 1, .max_recv_wr = 1,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	/* ::ffff:239.1.2.3 */
	union ibv_gid mgid = {
		.raw = { [10] = 0xff, 0xff, 239, 1, 2, 3 },
	};
	union ibv_gid ucast;
	struct ibv_qp *rc, *ud;

	rc = ibv_create_qp(pd, &init);
	init.qp_type = IBV_QPT_UD;
	ud = ibv_create_qp(pd, &init);
	if (!rc || !ud) {
		expect("create_qp: an RC and a UD QP", errno, 0);
		goto out;
	}
	expect("attach_mcast: an RC QP", ibv_attach_mcast(rc, &mgid, 0),
	       EINVAL);
	ibv_query_gid(pd->context, 1, 1, &ucast);
	expect("attach_mcast: a unicast GID", ibv_attach_mcast(ud, &ucast, 0),
	       EINVAL);
	expect("detach_mcast: not attached", ibv_detach_mcast(ud, &mgid, 0),
	       EINVAL);
	expect("attach_mcast", ibv_attach_mcast(ud, &mgid, 0), 0);
	expect("attach_mcast again", ibv_attach_mcast(ud, &mgid, 0), 0);
	expect("detach_mcast", ibv_detach_mcast(ud, &mgid, 0), 0);
	expect("detach_mcast again", ibv_detach_mcast(ud, &mgid, 0), EINVAL);
	expect("attach_mcast, for the context's end",
	       ibv_attach_mcast(ud, &mgid, 0), 0);
	expect("destroy_qp: attached", ibv_destroy_qp(ud), EBUSY);
	ud = NULL;
out:
	if (ud)
		ibv_destroy_qp(ud);
	if (rc)
		ibv_destroy_qp(rc);
}

/* advise_mr: ODP MRs' ranges only, and the advice ib_uverbs passes on. */
static void advise_cases(struct ibv_pd *pd)
{
	size_t len = 4 * 4096;
	void *buf = aligned_alloc(4096, len);
	struct ibv_mr *odp, *pinned;
	struct ibv_sge sge;

	odp = buf ? ibv_reg_mr(pd, buf, len, IBV_ACCESS_LOCAL_WRITE |
			       IBV_ACCESS_ON_DEMAND) : NULL;
	pinned = odp ? ibv_reg_mr(pd, buf, len, 0) : NULL;
	expect("reg_mr: on-demand paging, and pinned over the same pages",
	       pinned ? 0 : errno, 0);
	if (!pinned)
		goto out;
	sge = (struct ibv_sge){ .addr = (uintptr_t)buf, .length = len,
				.lkey = odp->lkey };
	expect("advise_mr: prefetch for writing",
	       ibv_advise_mr(pd, IBV_ADVISE_MR_ADVICE_PREFETCH_WRITE,
			     IBV_ADVISE_MR_FLAG_FLUSH, &sge, 1), 0);
	sge.length = len + 1;
	expect("advise_mr: a range past the MR's end",
	       ibv_advise_mr(pd, IBV_ADVISE_MR_ADVICE_PREFETCH, 0, &sge, 1),
	       EINVAL);
	sge.length = len;
	sge.lkey = odp->lkey ^ 0xff;
	expect("advise_mr: a stale key",
	       ibv_advise_mr(pd, IBV_ADVISE_MR_ADVICE_PREFETCH, 0, &sge, 1),
	       EINVAL);
	sge.lkey = pinned->lkey;
	expect("advise_mr: a pinned MR",
	       ibv_advise_mr(pd, IBV_ADVISE_MR_ADVICE_PREFETCH, 0, &sge, 1),
	       EINVAL);
	ibv_dereg_mr(pinned);
out:
	if (odp)
		ibv_dereg_mr(odp);
	free(buf);
}

static void mmap_cases(struct ibv_context *ctx)
{
	void *p;

	p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, ctx->cmd_fd,
		 1ull << 40);
	expect("mmap: an offset no queue has", p == MAP_FAILED ? errno : 0,
	       EINVAL);
	if (p != MAP_FAILED)
		munmap(p, 4096);
}

/* The raw uverbs GET_CONTEXT, with request data softhca does not take. */
static void ucontext_case(struct ibv_device *dev)
{
	struct {
		struct ib_uverbs_cmd_hdr hdr;
		struct ib_uverbs_get_context core;
		uint64_t tail;
	} cmd = {
		.hdr = {
			.command = IB_USER_VERBS_CMD_GET_CONTEXT,
			.in_words = sizeof(cmd) / 4,
		},
		.tail = 0x5a,
	};
	struct {
		struct ib_uverbs_get_context_resp core;
		struct softhca_alloc_ucontext_resp drv;
	} resp;
	char path[128];
	int fd, err;

	cmd.hdr.out_words = sizeof(resp) / 4;
	cmd.core.response = (uintptr_t)&resp;
	snprintf(path, sizeof(path), "/dev/infiniband/%s", dev->dev_name);
	fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		expect("open the uverbs device", errno, 0);
		return;
	}
	err = write(fd, &cmd, sizeof(cmd)) < 0 ? errno : 0;
	expect("alloc_ucontext: non-zero request data", err, EINVAL);
	close(fd);
}

/* The context still works: a QP goes RESET -> INIT and is destroyed. */
static void still_works(struct ibv_pd *pd, struct ibv_cq *cq)
{
	struct ibv_qp_init_attr init = {
		.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_UD,
		.cap = { .max_send_wr = 4, .max_recv_wr = 4,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_qp_attr attr = {
		.qp_state = IBV_QPS_INIT, .port_num = 1, .qkey = 0x11,
	};
	struct ibv_qp *qp = ibv_create_qp(pd, &init);

	expect("create_qp afterwards", qp ? 0 : errno, 0);
	if (!qp)
		return;
	expect("modify_qp afterwards",
	       ibv_modify_qp(qp, &attr, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			     IBV_QP_PORT | IBV_QP_QKEY), 0);
	expect("destroy_qp afterwards", ibv_destroy_qp(qp), 0);
}

int main(int argc, char **argv)
{
	struct ibv_device **list;
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;

	if (argc != 2) {
		fprintf(stderr, "usage: %s DEVICE\n", argv[0]);
		return 2;
	}
	list = ibv_get_device_list(NULL);
	ctx = tap_open(list, argv[1]);
	pd = ctx ? ibv_alloc_pd(ctx) : NULL;
	cq = pd ? ibv_create_cq(ctx, 16, NULL, NULL, 0) : NULL;
	if (!cq) {
		perror("setup");
		return 2;
	}

	cq_cases(ctx, cq);
	qp_cases(pd, cq);
	modify_cases(pd, cq);
	srq_cases(pd, cq);
	ah_mr_cases(pd);
	mw_cases(pd);
	mcast_cases(pd, cq);
	advise_cases(pd);
	mmap_cases(ctx);
	ucontext_case(ctx->device);
	still_works(pd, cq);

	ibv_destroy_cq(cq);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	ibv_free_device_list(list);
	return tap_done();
}
