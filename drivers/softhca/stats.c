// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The device's counters: what the wire carried, and every packet dropped,
 * by reason, so that a hostile or broken peer shows up in `rdma statistic`
 * rather than in the kernel log.  Counted from any context, lock-free.
 */

#include <kunit/visibility.h>
#include <rdma/ib_verbs.h>

#include "dev.h"
#include "net.h"
#include "trace.h"

/* The drop reasons' names are wire.c's: shca_stats_init() copies them. */
static struct rdma_stat_desc shca_counter_descs[SHCA_CNT_MAX] = {
	[SHCA_CNT_RX_PACKETS] = { .name = "rx_packets" },
	[SHCA_CNT_TX_PACKETS] = { .name = "tx_packets" },
	[SHCA_CNT_TX_ERRORS] = { .name = "tx_errors" },
	[SHCA_CNT_LOCAL_ACK_TIMEOUT] = { .name = "local_ack_timeout_err" },
	[SHCA_CNT_SEQ_NAK_RCVD] = { .name = "packet_seq_err" },
	[SHCA_CNT_OUT_OF_SEQUENCE] = { .name = "out_of_sequence" },
	[SHCA_CNT_DUPLICATE_REQUEST] = { .name = "duplicate_request" },
	[SHCA_CNT_RESENT_TIMEOUT] = { .name = "tx_resent_timeout" },
	[SHCA_CNT_RESENT_SEQ] = { .name = "tx_resent_seq" },
	[SHCA_CNT_RESENT_RNR] = { .name = "tx_resent_rnr" },
	[SHCA_CNT_RX_SOFTIRQ_RUNS] = { .name = "rx_softirq_runs" },
	[SHCA_CNT_TX_CPU_MOVES] = { .name = "tx_cpu_moves" },
};

/* Context: module init, before any device exists. */
void shca_stats_init(void)
{
	enum shca_drop why;

	for (why = SHCA_DROP_NONE + 1; why < SHCA_DROP_MAX; why++)
		shca_counter_descs[SHCA_CNT_DROP + why - 1].name =
			shca_drop_names[why];
}

/* Context: any. */
const char *shca_counter_name(enum shca_counter counter)
{
	return shca_counter_descs[counter].name;
}

/* Context: any. */
void shca_count(struct shca_dev *dev, enum shca_counter counter)
{
	atomic64_inc(&dev->counters[counter]);
}

/* Context: any. */
void shca_count_add(struct shca_dev *dev, enum shca_counter counter, u64 n)
{
	atomic64_add(n, &dev->counters[counter]);
}

/* Context: any. */
void shca_count_drop(struct shca_dev *dev, enum shca_drop reason)
{
	/* SHCA_DROP_NONE, 0, is not a drop. */
	shca_count(dev, SHCA_CNT_DROP + reason - 1);
	trace_softhca_drop(&dev->ibdev, shca_drop_names[reason]);
}

struct rdma_hw_stats *shca_alloc_hw_port_stats(struct ib_device *ibdev,
					       u32 port)
{
	return rdma_alloc_hw_stats_struct(shca_counter_descs, SHCA_CNT_MAX,
					  RDMA_HW_STATS_DEFAULT_LIFESPAN);
}
EXPORT_SYMBOL_IF_KUNIT(shca_alloc_hw_port_stats);

int shca_get_hw_stats(struct ib_device *ibdev, struct rdma_hw_stats *stats,
		      u32 port, int index)
{
	struct shca_dev *dev = to_shca_dev(ibdev);
	int i;

	for (i = 0; i < SHCA_CNT_MAX; i++)
		stats->value[i] = atomic64_read(&dev->counters[i]);
	return SHCA_CNT_MAX;
}
EXPORT_SYMBOL_IF_KUNIT(shca_get_hw_stats);
