/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * What the guest test programs share: TAP output (one "ok N - what" or
 * "not ok N - what" line per check, then the plan and a summary),
 * opening a device by name, and taking an RC QP to RTS.  Header-only:
 * each program is one file.
 */
#ifndef SOFTHCA_TEST_TAP_H
#define SOFTHCA_TEST_TAP_H

#include <stdio.h>
#include <string.h>

#include <infiniband/verbs.h>

static int tap_checks, tap_failed;

static inline void tap(int ok, const char *what, const char *detail)
{
	tap_checks++;
	tap_failed += !ok;
	printf("%sok %d - %s%s%s\n", ok ? "" : "not ", tap_checks, what,
	       detail ? ": " : "", detail ? detail : "");
}

/*
 * A check of a known fault of another implementation's, @todo saying
 * which (or NULL: tap()): TAP's TODO, reported, never counted as failed.
 */
static inline void tap_todo(int ok, const char *what, const char *detail,
			    const char *todo)
{
	if (!todo) {
		tap(ok, what, detail);
		return;
	}
	tap_checks++;
	printf("%sok %d - %s%s%s # TODO %s\n", ok ? "" : "not ", tap_checks,
	       what, detail ? ": " : "", detail ? detail : "", todo);
}

/* The plan and the summary; the exit status of the program. */
static inline int tap_done(void)
{
	printf("1..%d\n# %d passed, %d failed\n", tap_checks,
	       tap_checks - tap_failed, tap_failed);
	return tap_failed ? 1 : 0;
}

/*
 * Opens device @name of @list (from ibv_get_device_list()), or says why
 * not on stderr.  Returns the context, or NULL.
 */
static inline struct ibv_context *tap_open(struct ibv_device **list,
					   const char *name)
{
	struct ibv_context *ctx;
	int i;

	for (i = 0; list && list[i]; i++) {
		if (strcmp(ibv_get_device_name(list[i]), name))
			continue;
		ctx = ibv_open_device(list[i]);
		if (!ctx)
			perror(name);
		return ctx;
	}
	fprintf(stderr, "no device %s\n", name);
	return NULL;
}

/*
 * RC QP @qp, in RESET, to RTS: connected to QP @dqpn at @dgid, from its
 * port 1's GID @sgid_index, remote WRITE and READ allowed.  Returns 0, or
 * -1 with errno set by the step that failed.
 */
static inline int tap_rc_connect(struct ibv_qp *qp, uint32_t dqpn,
				 const union ibv_gid *dgid, int sgid_index)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT, .port_num = 1,
		.qp_access_flags = IBV_ACCESS_REMOTE_WRITE |
				   IBV_ACCESS_REMOTE_READ,
	};

	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			  IBV_QP_PORT | IBV_QP_ACCESS_FLAGS))
		return -1;
	a = (struct ibv_qp_attr){
		.qp_state = IBV_QPS_RTR, .path_mtu = IBV_MTU_1024,
		.dest_qp_num = dqpn, .max_dest_rd_atomic = 4,
		.min_rnr_timer = 1,
		.ah_attr = { .is_global = 1, .port_num = 1,
			     .grh = { .dgid = *dgid,
				      .sgid_index = sgid_index,
				      .hop_limit = 64 } },
	};
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV |
			  IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
			  IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER))
		return -1;
	a = (struct ibv_qp_attr){
		.qp_state = IBV_QPS_RTS, .timeout = 14, .retry_cnt = 7,
		.rnr_retry = 7, .max_rd_atomic = 4,
	};
	return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_TIMEOUT |
			     IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
			     IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC);
}

#endif /* SOFTHCA_TEST_TAP_H */
