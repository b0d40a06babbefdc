// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The device's counters: what the wire carried, and every packet dropped,
 * by reason, so that a hostile or broken peer shows up in `rdma statistic`
 * rather than in the kernel log.  Counted from any context, lock-free.
 */

#include <rdma/ib_verbs.h>

#include "dev.h"
#include "net.h"

#define SHCA_DROP_DESC(reason, text) \
	[SHCA_CNT_DROP + SHCA_DROP_##reason - 1] = { .name = "rx_drop_" text }

static const struct rdma_stat_desc shca_counter_descs[SHCA_CNT_MAX] = {
	[SHCA_CNT_RX_PACKETS] = { .name = "rx_packets" },
	[SHCA_CNT_TX_PACKETS] = { .name = "tx_packets" },
	[SHCA_CNT_TX_ERRORS] = { .name = "tx_errors" },
	SHCA_DROP_DESC(TRUNCATED, "truncated"),
	SHCA_DROP_DESC(OPCODE, "opcode"),
	SHCA_DROP_DESC(TVER, "tver"),
	SHCA_DROP_DESC(PAD, "pad"),
	SHCA_DROP_DESC(LENGTH, "length"),
	SHCA_DROP_DESC(ICRC, "icrc"),
	SHCA_DROP_DESC(DGID, "dgid"),
	SHCA_DROP_DESC(QPN, "qpn"),
	SHCA_DROP_DESC(BUSY, "busy"),
	SHCA_DROP_DESC(NOMEM, "nomem"),
	SHCA_DROP_DESC(REFUSED, "refused"),
};

/* Context: any. */
void shca_count(struct shca_dev *dev, enum shca_counter counter)
{
	atomic64_inc(&dev->counters[counter]);
}

/* Context: any. */
void shca_count_drop(struct shca_dev *dev, enum shca_drop reason)
{
	/* SHCA_DROP_NONE, 0, is not a drop. */
	shca_count(dev, SHCA_CNT_DROP + reason - 1);
}

struct rdma_hw_stats *shca_alloc_hw_port_stats(struct ib_device *ibdev,
					       u32 port)
{
	return rdma_alloc_hw_stats_struct(shca_counter_descs, SHCA_CNT_MAX,
					  RDMA_HW_STATS_DEFAULT_LIFESPAN);
}

int shca_get_hw_stats(struct ib_device *ibdev, struct rdma_hw_stats *stats,
		      u32 port, int index)
{
	struct shca_dev *dev = to_shca_dev(ibdev);
	int i;

	for (i = 0; i < SHCA_CNT_MAX; i++)
		stats->value[i] = atomic64_read(&dev->counters[i]);
	return SHCA_CNT_MAX;
}
