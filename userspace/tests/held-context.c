// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * held-context DEV READY: a process that holds a context on DEV, with a
 * PD, a CQ, an RC QP and an MR, its rings mapped, while the device goes
 * away under it (`rdma link delete`, netdev removal, rmmod: the harness
 * does one of those once the file READY exists).  The removal must not
 * wait for the process; the process must learn of it rather than hang:
 * IBV_EVENT_DEVICE_FATAL on its async event queue, then EIO from verbs
 * that reach the kernel.  Tearing its objects down and closing the
 * device still succeed, as libibverbs promises for a device that was
 * disassociated.  TAP output (tap.h); exit 0 when every check passed.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include "tap.h"

/* The removal is given this long; SIGALRM ends a process left hanging. */
#define HELD_TIMEOUT_S 60

struct held {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	char buf[4096];
};

static int held_create(struct held *h)
{
	struct ibv_qp_init_attr attr = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 16, .max_recv_wr = 16,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};

	h->pd = ibv_alloc_pd(h->ctx);
	h->cq = ibv_create_cq(h->ctx, 16, NULL, NULL, 0);
	if (!h->pd || !h->cq)
		return -1;
	attr.send_cq = h->cq;
	attr.recv_cq = h->cq;
	h->qp = ibv_create_qp(h->pd, &attr);
	h->mr = ibv_reg_mr(h->pd, h->buf, sizeof(h->buf),
			   IBV_ACCESS_LOCAL_WRITE);
	return h->qp && h->mr ? 0 : -1;
}

/*
 * Tells the harness the context is held, then waits for the removal.
 * Port events may come first (the netdev's removal takes its GIDs).
 */
static void held_wait_removal(struct held *h, const char *ready)
{
	enum ibv_event_type type = IBV_EVENT_PORT_ACTIVE;
	struct ibv_async_event ev;
	int fd, ret;

	fd = open(ready, O_CREAT | O_WRONLY, 0644);
	if (fd >= 0)
		close(fd);
	tap(fd >= 0, "ready file created", NULL);
	alarm(HELD_TIMEOUT_S);
	do {
		ret = ibv_get_async_event(h->ctx, &ev);
		if (ret)
			break;
		type = ev.event_type;
		ibv_ack_async_event(&ev);
		printf("# event: %s\n", ibv_event_type_str(type));
	} while (type != IBV_EVENT_DEVICE_FATAL);
	tap(!ret, "IBV_EVENT_DEVICE_FATAL delivered",
	    ret ? "ibv_get_async_event failed" : NULL);
}

static void held_verbs_fail(struct held *h)
{
	struct ibv_device_attr attr;
	struct ibv_wc wc;
	struct ibv_pd *pd;
	int ret;

	errno = 0;
	pd = ibv_alloc_pd(h->ctx);
	tap(!pd && errno == EIO, "alloc_pd fails with EIO", strerror(errno));
	if (pd)
		ibv_dealloc_pd(pd);
	ret = ibv_query_device(h->ctx, &attr);
	tap(ret == EIO, "query_device fails with EIO", strerror(ret));
	/* The CQ's ring is still mapped, and inert. */
	tap(ibv_poll_cq(h->cq, 1, &wc) == 0, "poll_cq finds nothing", NULL);
}

static void held_destroy(struct held *h)
{
	tap(!ibv_dereg_mr(h->mr), "dereg_mr", NULL);
	tap(!ibv_destroy_qp(h->qp), "destroy_qp", NULL);
	tap(!ibv_destroy_cq(h->cq), "destroy_cq", NULL);
	tap(!ibv_dealloc_pd(h->pd), "dealloc_pd", NULL);
	tap(!ibv_close_device(h->ctx), "close_device", NULL);
}

int main(int argc, char **argv)
{
	struct ibv_device **list;
	struct held h = {};

	if (argc != 3) {
		fprintf(stderr, "usage: %s DEV READY_FILE\n", argv[0]);
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	list = ibv_get_device_list(NULL);
	h.ctx = tap_open(list, argv[1]);
	tap(h.ctx && !held_create(&h), "context and objects created", NULL);
	if (tap_failed)
		return tap_done();
	held_wait_removal(&h, argv[2]);
	held_verbs_fail(&h);
	held_destroy(&h);
	ibv_free_device_list(list);
	return tap_done();
}
