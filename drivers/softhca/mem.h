/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Registered memory as the engine walks it: the bytes a work request's SGE
 * list names, or a remote range named by an rkey, or a plain kernel buffer
 * (inline data), or a received packet's payload, in its head and page
 * fragments, each behind one cursor type so that one copy loop serves
 * every combination.
 */
#ifndef SHCA_MEM_H
#define SHCA_MEM_H

#include <rdma/ib_verbs.h>
#include <rdma/softhca-abi.h>

struct shca_dev;
struct shca_mr;
struct sk_buff;

/**
 * struct shca_sgl - a cursor over memory the engine reads or writes
 * @dev: the device whose keys name the memory
 * @pd: the PD every MR must belong to
 * @access: the IB_ACCESS_* every MR must grant
 * @dma_lkey: the local DMA lkey may be used (kernel QPs only)
 * @sge: the SGE list, or NULL for @buf or @skb
 * @num_sge: entries in @sge
 * @buf: a plain kernel buffer
 * @skb: a packet, or NULL
 * @skb_off: where in @skb's data the bytes start
 * @len: bytes in total
 * @pos: bytes before the cursor, at most @len
 * @i: the SGE the cursor is in
 * @off: the cursor's offset in that SGE (or in @buf, or from @skb_off)
 * @entered: SGE @i's key was looked up and its range checked
 * @mr: the MR of SGE @i, held; NULL for the local DMA lkey
 * @map: what shca_sgl_map() mapped, for shca_sgl_unmap()
 * @held: the page under the cursor, of an on-demand paging MR: a
 *	reference, so that the mm taking it back does not free it while the
 *	engine copies (put when the cursor moves on, unmaps or is released)
 * @bad: this list, not the one it was copied to or from, failed a check
 */
struct shca_sgl {
	struct shca_dev *dev;
	struct ib_pd *pd;
	int access;
	bool dma_lkey;
	const struct softhca_sge *sge;
	u32 num_sge;
	void *buf;
	const struct sk_buff *skb;
	u32 skb_off;
	u32 len;
	u32 pos;
	u32 i;
	u32 off;
	bool entered;
	struct shca_mr *mr;
	void *map;
	struct page *held;
	bool bad;
};

int shca_sgl_init(struct shca_sgl *sgl, struct shca_dev *dev,
		  struct ib_pd *pd, int access, bool dma_lkey,
		  const struct softhca_sge *sge, u32 num_sge);
void shca_sgl_init_buf(struct shca_sgl *sgl, void *buf, u32 len);
void shca_sgl_init_skb(struct shca_sgl *sgl, const struct sk_buff *skb,
		       u32 off, u32 len);
int shca_sgl_init_remote(struct shca_sgl *sgl, struct softhca_sge *range,
			 struct shca_dev *dev, struct ib_pd *pd, u32 qpn,
			 int access);
void shca_sgl_release(struct shca_sgl *sgl);
int shca_sgl_check(struct shca_sgl *sgl);
int shca_sgl_skip(struct shca_sgl *sgl, u32 len);
int shca_sgl_copy(struct shca_sgl *dst, struct shca_sgl *src, u32 len);
struct page *shca_sgl_page(struct shca_sgl *sgl, unsigned int *poff,
			   u32 *len);
void *shca_sgl_map(struct shca_sgl *sgl, u32 *len);
void shca_sgl_unmap(struct shca_sgl *sgl);

#endif /* SHCA_MEM_H */
