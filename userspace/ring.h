/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The ring protocol of softhca-abi.h, seen from the provider's side: the
 * helpers both post APIs (ibv_post_send and ibv_wr_*) and both poll APIs
 * (ibv_poll_cq and ibv_start_poll) build on.
 */
#ifndef SOFTHCA_RING_H
#define SOFTHCA_RING_H

#include "softhca.h"

static inline void *ring_entry(const struct softhca_ring *ring, uint32_t index)
{
	return (char *)ring->entries +
	       (size_t)(index & (ring->num - 1)) * ring->entry_size;
}

/* Free entries for this side to produce into. */
static inline uint32_t ring_room(const struct softhca_ring *ring)
{
	/* Acquire: a slot is reused only after the kernel read it. */
	uint32_t used = ring->index -
			__atomic_load_n(&ring->ctrl->consumer, __ATOMIC_ACQUIRE);

	return used <= ring->num ? ring->num - used : 0;
}

static inline void ring_produced(struct softhca_ring *ring, uint32_t n)
{
	ring->index += n;
	/* Release: the entries are written before the index publishes them. */
	__atomic_store_n(&ring->ctrl->producer, ring->index, __ATOMIC_RELEASE);
}

/* Entries the kernel produced that this side has not consumed yet. */
static inline uint32_t ring_avail(const struct softhca_ring *ring)
{
	/* Acquire: the entries are read after the index that published them. */
	uint32_t avail = __atomic_load_n(&ring->ctrl->producer,
					 __ATOMIC_ACQUIRE) - ring->index;

	return avail <= ring->num ? avail : 0;
}

static inline void ring_consumed(struct softhca_ring *ring, uint32_t n)
{
	ring->index += n;
	/* Release: the entries are read before their slots are freed. */
	__atomic_store_n(&ring->ctrl->consumer, ring->index, __ATOMIC_RELEASE);
}

#endif /* SOFTHCA_RING_H */
