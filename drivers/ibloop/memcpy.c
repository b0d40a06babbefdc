// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * op=memcpy: the limit a loopback RDMA WRITE is measured against.  A
 * loopback WRITE is one copy between two registered buffers, so the run
 * does the same copies with the CPU's memcpy, and nothing else: @depth
 * slots of @size bytes in each of two buffers, taken in turn as the RDMA
 * runs take their message slots, @iters copies, timed.  No device.
 */
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/timekeeping.h>

#include "ibloop.h"

/* Copies between reschedule points: about 1 MiB. */
#define IBLOOP_MEMCPY_CHUNK	SZ_1M

int ibloop_memcpy(const struct ibloop_cfg *cfg, struct ibloop_result *res)
{
	size_t window = (size_t)cfg->size * cfg->depth;
	u32 i, every = max_t(u32, IBLOOP_MEMCPY_CHUNK / cfg->size, 1);
	u8 *src, *dst;
	u64 start;

	src = kvmalloc(window, GFP_KERNEL);
	dst = kvzalloc(window, GFP_KERNEL);
	if (!src || !dst) {
		res->status = -ENOMEM;
		goto out_free;
	}
	for (i = 0; i < window; i++)
		src[i] = i * 7 + 1;

	start = ktime_get_ns();
	for (i = 0; i < cfg->iters; i++) {
		size_t off = (size_t)(i % cfg->depth) * cfg->size;

		memcpy(dst + off, src + off, cfg->size);
		if (!((i + 1) % every))
			cond_resched();
	}
	res->ns = ktime_get_ns() - start;
	res->completed = cfg->iters;
	/* The slots copied at least once hold the source's bytes. */
	if (memcmp(dst, src, min_t(u64, cfg->iters, cfg->depth) * cfg->size))
		res->mismatches = 1;
out_free:
	kvfree(dst);
	kvfree(src);
	return res->status;
}
