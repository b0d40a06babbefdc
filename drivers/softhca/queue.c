// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Ring memory: one zeroed buffer per ring, control block first.  A user
 * queue's is zeroed pages charged to the process's memory cgroup (a
 * process that makes rings pays for them), mapped contiguously in vmalloc
 * space as remap_vmalloc_range() wants them (VM_USERMAP), so that they
 * can be mapped into the process as they are.  It belongs to its mmap
 * entry, because the process may keep the mapping after the object is
 * destroyed: mmap_free frees it once ib_core drops the entry's last
 * reference.  A kernel queue's is kvzalloc() memory (no page rounding, and
 * cheap for small rings), freed with the queue.
 */

#include <kunit/visibility.h>
#include <linux/log2.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>
#include <rdma/uverbs_ioctl.h>

#include "fault.h"
#include "queue.h"
#include "uctx.h"

/* The ABI's layout: one cache line per CQE and per send WQE header. */
static_assert(sizeof(struct softhca_queue_ctrl) == SOFTHCA_QUEUE_ENTRIES_OFFSET);
static_assert(sizeof(struct softhca_cqe) == 64);
static_assert(sizeof(struct softhca_send_wqe) == 64);
static_assert(sizeof(struct softhca_recv_wqe) == 16);
static_assert(sizeof(struct softhca_sge) == 16);

/**
 * shca_queue_alloc_user() - ring memory for a user queue
 * @size: bytes, a multiple of PAGE_SIZE
 *
 * vmalloc_user() would do but for the charge: its GFP flags are fixed,
 * and neither __vmalloc_node_range() nor find_vm_area(), which would let
 * an accounted allocation be marked VM_USERMAP, is exported.  So the pages
 * are allocated here and vmap() takes them (VM_MAP_PUT_PAGES: vfree()
 * puts them and frees the array).
 *
 * Context: process context; sleeps.
 * Return: the memory, to free with vfree(), or NULL.
 */
void *shca_queue_alloc_user(size_t size)
{
	unsigned int i, n = size >> PAGE_SHIFT;
	struct page **pages;
	void *buf;

	pages = kvcalloc(n, sizeof(*pages), GFP_KERNEL_ACCOUNT);
	if (!pages)
		return NULL;
	for (i = 0; i < n; i++) {
		pages[i] = alloc_page(GFP_KERNEL_ACCOUNT | __GFP_ZERO);
		if (!pages[i])
			goto err_free_pages;
	}
	buf = vmap(pages, n, VM_MAP | VM_USERMAP | VM_MAP_PUT_PAGES,
		   PAGE_KERNEL);
	if (buf)
		return buf;

err_free_pages:
	while (i--)
		__free_page(pages[i]);
	kvfree(pages);
	return NULL;
}
EXPORT_SYMBOL_IF_KUNIT(shca_queue_alloc_user);

struct shca_mmap_entry {
	struct rdma_user_mmap_entry rdma;
	void *buf;
};

static struct shca_mmap_entry *to_shca_mmap(struct rdma_user_mmap_entry *e)
{
	return container_of(e, struct shca_mmap_entry, rdma);
}

/**
 * shca_queue_map_user() - offer memory for the process to map
 * @ibuc: the process's context
 * @buf: from shca_queue_alloc_user(); the entry owns it from now on
 * @size: its bytes
 *
 * Context: process context; sleeps.
 * Return: the entry, whose removal frees @buf once the process unmapped
 * it, or an ERR_PTR(); on failure @buf is still the caller's.
 */
struct rdma_user_mmap_entry *shca_queue_map_user(struct ib_ucontext *ibuc,
						 void *buf, size_t size)
{
	struct shca_mmap_entry *e;
	int ret;

	e = shca_fault() ? NULL : kzalloc(sizeof(*e), GFP_KERNEL_ACCOUNT);
	if (!e)
		return ERR_PTR(-ENOMEM);
	e->buf = buf;
	ret = rdma_user_mmap_entry_insert(ibuc, &e->rdma, size);
	if (ret) {
		kfree(e);
		return ERR_PTR(ret);
	}
	return &e->rdma;
}

static int shca_queue_export_user(struct shca_queue *q,
				  struct ib_udata *udata)
{
	struct shca_ucontext *uc = rdma_udata_to_drv_context(udata,
			struct shca_ucontext, ibuc);
	struct rdma_user_mmap_entry *entry;

	entry = shca_queue_map_user(&uc->ibuc, q->ctrl, q->size);
	if (IS_ERR(entry))
		return PTR_ERR(entry);
	q->mmap_entry = entry;
	return 0;
}

/**
 * shca_queue_init() - allocate a ring
 * @q: the queue to set up
 * @num: entries wanted; rounded up to a power of two
 * @entry_size: bytes per entry
 * @udata: the verb's udata when user space maps the ring, else NULL
 *
 * Context: process context; sleeps.
 * Return: 0 or -ENOMEM.
 */
int shca_queue_init(struct shca_queue *q, u32 num, u32 entry_size,
		    struct ib_udata *udata)
{
	int ret;

	*q = (struct shca_queue){
		.num = roundup_pow_of_two(max(num, 1U)),
		.entry_size = entry_size,
	};
	q->size = SOFTHCA_QUEUE_ENTRIES_OFFSET + (size_t)q->num * entry_size;
	if (!udata) {
		q->ctrl = shca_fault() ? NULL : kvzalloc(q->size, GFP_KERNEL);
		if (!q->ctrl)
			return -ENOMEM;
		q->entries = (void *)q->ctrl + SOFTHCA_QUEUE_ENTRIES_OFFSET;
		return 0;
	}

	q->size = PAGE_ALIGN(q->size);
	q->ctrl = shca_fault() ? NULL : shca_queue_alloc_user(q->size);
	if (!q->ctrl)
		return -ENOMEM;
	q->entries = (void *)q->ctrl + SOFTHCA_QUEUE_ENTRIES_OFFSET;

	ret = shca_queue_export_user(q, udata);
	if (ret) {
		vfree(q->ctrl);
		q->ctrl = NULL;
	}
	return ret;
}

/* Context: process context. */
void shca_queue_destroy(struct shca_queue *q)
{
	if (q->mmap_entry)
		rdma_user_mmap_entry_remove(q->mmap_entry);
	else
		kvfree(q->ctrl);
	q->ctrl = NULL;
}

/* What the provider needs to map @q; the caller copies it to udata. */
void shca_queue_export(const struct shca_queue *q,
		       struct softhca_queue_map *map)
{
	*map = (struct softhca_queue_map){
		.offset = rdma_user_mmap_get_offset(q->mmap_entry),
		.length = q->size,
		.num_entries = q->num,
		.entry_size = q->entry_size,
	};
}

int shca_mmap(struct ib_ucontext *ibuc, struct vm_area_struct *vma)
{
	struct rdma_user_mmap_entry *rdma;
	int ret;

	rdma = rdma_user_mmap_entry_get(ibuc, vma);
	if (!rdma) {
		ibdev_dbg(ibuc->device, "mmap: no queue at offset %#lx\n",
			  vma->vm_pgoff << PAGE_SHIFT);
		return -EINVAL;
	}
	ret = remap_vmalloc_range(vma, to_shca_mmap(rdma)->buf, 0);
	if (ret)
		ibdev_dbg(ibuc->device, "mmap: remap failed: %d\n", ret);
	rdma_user_mmap_entry_put(rdma);
	return ret;
}

void shca_mmap_free(struct rdma_user_mmap_entry *rdma)
{
	struct shca_mmap_entry *e = to_shca_mmap(rdma);

	vfree(e->buf);
	kfree(e);
}
