/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Rings shared with user space: work queues, SRQs and CQs.  The layout is
 * the ABI's (struct softhca_queue_ctrl, then the entries).  Each side keeps
 * its own index privately and publishes it in the control block; the
 * other side's index, read back from a ring user space can write, is only
 * a hint that is checked before use.
 */
#ifndef SHCA_QUEUE_H
#define SHCA_QUEUE_H

#include <rdma/ib_verbs.h>
#include <rdma/softhca-abi.h>

struct shca_dev;

struct shca_queue {
	struct softhca_queue_ctrl *ctrl;
	void *entries;
	u32 num;			/* entries, a power of two */
	u32 entry_size;
	u32 prod;			/* the kernel's own index, when it produces */
	u32 cons;			/* ... when it consumes */
	size_t size;			/* bytes, control block included */
	/* Set for a user queue, which then owns the buffer. */
	struct rdma_user_mmap_entry *mmap_entry;
};

void *shca_queue_alloc_user(size_t size);
struct rdma_user_mmap_entry *shca_queue_map_user(struct ib_ucontext *ibuc,
						 void *buf, size_t size);
int shca_queue_init(struct shca_queue *q, u32 num, u32 entry_size,
		    struct ib_udata *udata);
void shca_queue_destroy(struct shca_queue *q);
void shca_queue_export(const struct shca_queue *q,
		       struct softhca_queue_map *map);

int shca_mmap(struct ib_ucontext *ibuc, struct vm_area_struct *vma);
void shca_mmap_free(struct rdma_user_mmap_entry *entry);

static inline void *shca_queue_entry(const struct shca_queue *q, u32 index)
{
	return q->entries + (size_t)(index & (q->num - 1)) * q->entry_size;
}

/*
 * Entries the other side published that the kernel has not consumed yet;
 * a producer index user space moved out of range reads as none.
 */
static inline u32 shca_queue_pending(const struct shca_queue *q)
{
	/* Acquire: the entries are read after the index that published them. */
	u32 n = smp_load_acquire(&q->ctrl->producer) - q->cons;

	return n <= q->num ? n : 0;
}

/*
 * The other side published a producer index out of the ring's range: only
 * a process scribbling on its own ring does that.
 */
static inline bool shca_queue_overrun(const struct shca_queue *q)
{
	return READ_ONCE(q->ctrl->producer) - q->cons > q->num;
}

/* Free entries for the kernel to produce into. */
static inline u32 shca_queue_room(const struct shca_queue *q)
{
	/* Acquire: entries are reused only after the consumer released them. */
	u32 used = q->prod - smp_load_acquire(&q->ctrl->consumer);

	return used <= q->num ? q->num - used : 0;
}

static inline void shca_queue_produced(struct shca_queue *q, u32 n)
{
	q->prod += n;
	/* Release: the entries are written before the index publishes them. */
	smp_store_release(&q->ctrl->producer, q->prod);
}

static inline void shca_queue_consumed(struct shca_queue *q, u32 n)
{
	q->cons += n;
	/* Release: the entries are read before the index frees them. */
	smp_store_release(&q->ctrl->consumer, q->cons);
}

/*
 * The consumer is busy with @q: the producer need not ring for what it
 * publishes meanwhile (see the doorbell protocol in softhca-abi.h).
 */
static inline void shca_queue_wake(struct shca_queue *q)
{
	WRITE_ONCE(q->ctrl->doorbell, 0);
}

/*
 * The consumer is about to stop looking at @q, past the @held entries it
 * took and has not consumed: asks the producer to ring for what it
 * publishes from now on, then looks once more.
 * Return: true when entries arrived meanwhile (and the consumer goes on).
 */
static inline bool shca_queue_sleep(struct shca_queue *q, u32 held)
{
	WRITE_ONCE(q->ctrl->doorbell, 1);
	/* Pairs with the producer's barrier between its index and doorbell. */
	smp_mb();
	if (shca_queue_pending(q) <= held)
		return false;
	shca_queue_wake(q);
	return true;
}

#endif /* SHCA_QUEUE_H */
