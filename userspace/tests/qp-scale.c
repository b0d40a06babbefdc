// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * qp-scale: what N RC QPs cost.  Creates N QPs, 256 WRs deep, on one CQ,
 * connects each to itself (RTS, its own QPN as destination) and then makes
 * OPS 8-byte RDMA WRITEs spread over all of them in turn, 16 in flight.
 * Works on any RoCE device, so that the same numbers come from softhca and
 * from rdma_rxe.
 *
 * Usage: qp-scale DEVICE GID_INDEX N OPS
 * Prints one line:
 *   qps=N create_us=<per QP> kib=<kernel memory per QP> op_ns=<per WRITE>
 * Kernel memory is what creating and connecting the QPs adds to the
 * kernel's slab and vmalloc use (/proc/meminfo Slab + VmallocUsed): the
 * QP objects and their rings, on either device.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <infiniband/verbs.h>

#include "tap.h"

#define DEPTH 256
#define IN_FLIGHT 16

static double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

/* Kernel memory in slabs and vmalloc areas, in KiB. */
static long kernel_kib(void)
{
	char line[256];
	long v = 0;
	FILE *f = fopen("/proc/meminfo", "r");

	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, "Slab:", 5))
			v += atol(line + 5);
		else if (!strncmp(line, "VmallocUsed:", 12))
			v += atol(line + 12);
	if (f)
		fclose(f);
	return v;
}

static int connect_self(struct ibv_qp *qp, int gid_index,
			const union ibv_gid *gid)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT, .port_num = 1,
		.qp_access_flags = IBV_ACCESS_REMOTE_WRITE,
	};

	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			  IBV_QP_PORT | IBV_QP_ACCESS_FLAGS))
		return -1;
	a = (struct ibv_qp_attr){
		.qp_state = IBV_QPS_RTR, .path_mtu = IBV_MTU_1024,
		.dest_qp_num = qp->qp_num, .max_dest_rd_atomic = 1,
		.min_rnr_timer = 1,
		.ah_attr = { .is_global = 1, .port_num = 1,
			     .grh = { .dgid = *gid, .sgid_index = gid_index,
				      .hop_limit = 64 } },
	};
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
			  IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
			  IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER))
		return -1;
	a = (struct ibv_qp_attr){
		.qp_state = IBV_QPS_RTS, .timeout = 14, .retry_cnt = 7,
		.rnr_retry = 7, .max_rd_atomic = 1,
	};
	return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_TIMEOUT |
			     IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
			     IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC);
}

int main(int argc, char **argv)
{
	struct ibv_device **list;
	struct ibv_context *ctx;
	struct ibv_qp **qps;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_mr *mr;
	union ibv_gid gid;
	long n, ops, i, posted = 0, done = 0, mem;
	double t0, create_us, op_ns;
	char buf[64];

	if (argc != 5) {
		fprintf(stderr, "usage: %s DEVICE GID_INDEX N OPS\n", argv[0]);
		return 2;
	}
	n = atol(argv[3]);
	ops = atol(argv[4]);
	list = ibv_get_device_list(NULL);
	ctx = tap_open(list, argv[1]);
	pd = ctx ? ibv_alloc_pd(ctx) : NULL;
	cq = pd ? ibv_create_cq(ctx, 4 * IN_FLIGHT, NULL, NULL, 0) : NULL;
	mr = cq ? ibv_reg_mr(pd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE |
			     IBV_ACCESS_REMOTE_WRITE) : NULL;
	qps = calloc(n, sizeof(*qps));
	if (!mr || !qps || n < 1 ||
	    ibv_query_gid(ctx, 1, atoi(argv[2]), &gid)) {
		perror("setup");
		return 2;
	}

	mem = kernel_kib();
	t0 = now_us();
	for (i = 0; i < n; i++) {
		struct ibv_qp_init_attr init = {
			.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
			.cap = { .max_send_wr = DEPTH, .max_recv_wr = DEPTH,
				 .max_send_sge = 1, .max_recv_sge = 1 },
		};

		qps[i] = ibv_create_qp(pd, &init);
		if (!qps[i] || connect_self(qps[i], atoi(argv[2]), &gid)) {
			fprintf(stderr, "QP %ld of %ld: cannot create\n", i, n);
			return 1;
		}
	}
	create_us = (now_us() - t0) / n;
	mem = kernel_kib() - mem;

	t0 = now_us();
	while (done < ops) {
		struct ibv_wc wc[IN_FLIGHT];
		int k;

		while (posted < ops && posted - done < IN_FLIGHT) {
			struct ibv_sge sge = {
				.addr = (uintptr_t)buf, .length = 8,
				.lkey = mr->lkey,
			};
			struct ibv_send_wr wr = {
				.wr_id = posted, .sg_list = &sge, .num_sge = 1,
				.opcode = IBV_WR_RDMA_WRITE,
				.send_flags = IBV_SEND_SIGNALED,
				.wr.rdma = { .remote_addr = (uintptr_t)buf + 32,
					     .rkey = mr->rkey },
			}, *bad;

			if (ibv_post_send(qps[posted % n], &wr, &bad)) {
				perror("post_send");
				return 1;
			}
			posted++;
		}
		k = ibv_poll_cq(cq, IN_FLIGHT, wc);
		for (i = 0; i < k; i++)
			if (wc[i].status != IBV_WC_SUCCESS) {
				fprintf(stderr, "WRITE %llu: %s\n",
					(unsigned long long)wc[i].wr_id,
					ibv_wc_status_str(wc[i].status));
				return 1;
			}
		done += k > 0 ? k : 0;
	}
	op_ns = (now_us() - t0) * 1000 / ops;

	printf("qps=%ld create_us=%.1f kib=%.1f op_ns=%.0f\n", n, create_us,
	       (double)mem / n, op_ns);
	for (i = 0; i < n; i++)
		ibv_destroy_qp(qps[i]);
	free(qps);
	ibv_dereg_mr(mr);
	ibv_destroy_cq(cq);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	ibv_free_device_list(list);
	return 0;
}
