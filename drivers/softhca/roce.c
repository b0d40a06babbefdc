// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The RoCEv2 transport as the engine sees it (struct shca_transport): its
 * ops, and the state of a QP it makes, resets and reports.  Its parts are
 * the requester's window (roce_req.c), the responder of RC and UC packets
 * (roce_resp.c), the receive path (roce_rx.c) and packet transmission
 * (roce_tx.c).
 */

#include <linux/slab.h>
#include <rdma/rdma_netlink.h>

#include "dev.h"
#include "qp.h"
#include "roce.h"

/*
 * A QP's state on the wire, and an RC responder's resources: the READs
 * and atomics it remembers.  Context: the command queue; sleeps.
 */
static int shca_roce_qp_init(struct shca_qp *qp, gfp_t gfp)
{
	struct shca_roce_qp *roce;

	roce = kzalloc(sizeof(*roce), gfp);
	if (!roce)
		return -ENOMEM;
	if (qp->ibqp.qp_type == IB_QPT_RC) {
		roce->resp.res = kcalloc(SHCA_MAX_RD_ATOMIC,
					 sizeof(*roce->resp.res), gfp);
		if (!roce->resp.res)
			goto err_free_roce;
	}
	skb_queue_head_init(&roce->rx_pkts);
	qp->roce = roce;
	shca_roce_req_init(qp);
	return 0;

err_free_roce:
	kfree(roce);
	return -ENOMEM;
}

/* The QP's engine is stopped, its packets purged. */
static void shca_roce_qp_free(struct shca_qp *qp)
{
	kfree(qp->roce->resp.res);
	kfree(qp->roce);
	qp->roce = NULL;
}

/*
 * A QP in RESET takes no more packets: shca_roce_recv() reads the state
 * under the packet queue's lock, which the purge takes after RESET was
 * set, so a packet is queued before the purge (and purged) or not at all.
 */
static void shca_roce_qp_stop(struct shca_qp *qp)
{
	shca_roce_rx_purge(qp);
	shca_roce_req_reset(qp);
	shca_roce_resp_reset(qp);
	/* A path measured before the reset may not be the next one. */
	qp->roce->req.srtt_us = 0;
	qp->roce->req.rttvar_us = 0;
}

/* The packets queued; for RC and UC, the window and the responder. */
static int shca_roce_fill_res(struct sk_buff *msg, struct shca_qp *qp)
{
	const struct shca_wire_req *wr = &qp->roce->req;
	const struct shca_wire_resp *rs = &qp->roce->resp;

	if (rdma_nl_put_driver_u32(msg, "rx_queued",
				   skb_queue_len(&qp->roce->rx_pkts)))
		return -EMSGSIZE;
	if (qp->ibqp.qp_type != IB_QPT_RC && qp->ibqp.qp_type != IB_QPT_UC)
		return 0;
	if (qp->ibqp.qp_type == IB_QPT_RC &&
	    rdma_nl_put_driver_u32(msg, "tx_queued",
				   atomic_read(&qp->roce->tx_queued)))
		return -EMSGSIZE;
	if (rdma_nl_put_driver_u32_hex(msg, "una", wr->una) ||
	    rdma_nl_put_driver_u32_hex(msg, "nxt", wr->nxt) ||
	    rdma_nl_put_driver_u32(msg, "cwnd", wr->cwnd) ||
	    rdma_nl_put_driver_u32(msg, "ssthresh", wr->ssthresh) ||
	    rdma_nl_put_driver_u32(msg, "rd_atomic", wr->rd_atomic) ||
	    rdma_nl_put_driver_u32(msg, "srtt_us", wr->srtt_us) ||
	    rdma_nl_put_driver_u32(msg, "rttvar_us", wr->rttvar_us) ||
	    rdma_nl_put_driver_u32(msg, "verdict", wr->verdict) ||
	    rdma_nl_put_driver_u32_hex(msg, "epsn", qp->resp.epsn) ||
	    rdma_nl_put_driver_u32(msg, "msn", rs->msn) ||
	    rdma_nl_put_driver_u32(msg, "nak_sent", rs->nak_sent) ||
	    rdma_nl_put_driver_u32(msg, "resp_msg", qp->resp.msg))
		return -EMSGSIZE;
	return 0;
}

static const struct shca_window_ops shca_roce_window = {
	.act = shca_roce_req_act,
	.resend = shca_roce_req_resend,
	.need = shca_roce_req_need,
	.service = shca_roce_req_service,
	.fail = shca_roce_req_fail,
	.busy = shca_roce_req_busy,
	.una = shca_roce_req_una,
	.rto = shca_roce_req_rto,
	.reset = shca_roce_req_reset,
};

const struct shca_transport shca_roce_transport = {
	.send = shca_roce_send,
	.win = &shca_roce_window,
	.qp_init = shca_roce_qp_init,
	.qp_free = shca_roce_qp_free,
	.rx_run = shca_roce_rx_run,
	.resp_reset = shca_roce_resp_reset,
	.stop = shca_roce_qp_stop,
	.fill_res = shca_roce_fill_res,
};
