// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Registered memory as the data path sees it: MRs found by key, checked,
 * made valid and invalid by work requests, and walked.  The verbs that
 * create and destroy MRs are mr.c's.
 *
 * An SGE's key is looked up, and the whole SGE checked against its MR
 * (PD, access, range), when the cursor enters it, and the reference is
 * held until the cursor leaves: deregistration waits for it.  Bytes are
 * reached a page at a time through the MR (pinned user pages, a fast
 * registration's page list, or the kernel's linear map) and mapped with
 * kmap_local_page(), so a copy maps two pages at most and unmaps them in
 * reverse order.
 *
 * An on-demand paging MR's pages are not pinned: the cursor faults each
 * in as it reaches it, and holds a reference on it while the engine
 * copies (see below).
 *
 * Context: the engine (process context; copies reschedule, and fault in
 * an on-demand paging MR's pages).  Map and unmap alone, as atomics use
 * them, are safe in any context on the other MRs.
 */

#include <kunit/visibility.h>
#include <linux/highmem.h>
#include <linux/mmu_notifier.h>
#include <linux/skbuff.h>

#include "dev.h"
#include "mem.h"
#include "mr.h"

/*
 * Flags a device may ignore: the IB_ACCESS_OPTIONAL range (relaxed
 * ordering) and the IB_ACCESS_HUGETLB hint.  Anything else outside
 * SHCA_MR_ACCESS (memory windows, zero-based, on-demand paging) is refused.
 */
#define SHCA_MR_ACCESS_IGNORED (IB_ACCESS_OPTIONAL | IB_ACCESS_HUGETLB)

/* The access flags that let the engine write to memory. */
#define SHCA_MEM_WRITE_ACCESS (IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE | \
			       IB_ACCESS_REMOTE_ATOMIC)

/*
 * Bytes copied between two chances for the scheduler: a copy of fewer (a
 * packet's, or an atomic's) never reschedules, and may be made in the
 * receive softirq.
 */
#define SHCA_COPY_RESCHED_BYTES SZ_256K

/* Access flags a verb or a REG_MR asks for: 0, -EOPNOTSUPP or -EINVAL. */
int shca_mr_access_check(struct ib_device *ibdev, int access,
			 const char *verb)
{
	int unknown = access & ~(SHCA_MR_ACCESS | SHCA_MR_ACCESS_IGNORED);

	if (!unknown)
		return 0;
	/* Defined, but not offered: consumers probe for these. */
	if (!(unknown & ~(IB_ACCESS_MW_BIND | IB_ACCESS_ON_DEMAND))) {
		ibdev_dbg_ratelimited(ibdev, "%s: access flags %#x not offered\n",
				      verb, unknown);
		return -EOPNOTSUPP;
	}
	ibdev_dbg_ratelimited(ibdev, "%s: unsupported access flags %#x\n",
			      verb, unknown);
	return -EINVAL;
}

/**
 * shca_mr_get() - find an MR by its key and take a reference
 * @dev: the device
 * @key: the full key (lkey or rkey) as a work request or packet names it
 *
 * Context: any, hard-irq included.
 * Return: the MR, to release with shca_mr_put(), or NULL when no MR has
 * @key as its current key (variant byte included) or it is being
 * deregistered.
 */
struct shca_mr *shca_mr_get(struct shca_dev *dev, u32 key)
{
	struct shca_mr *mr;

	rcu_read_lock();
	mr = xa_load(&dev->mrs, key >> SHCA_MR_KEY_SHIFT);
	if (mr && (READ_ONCE(mr->key) != key ||
		   !kref_get_unless_zero(&mr->ref)))
		mr = NULL;
	rcu_read_unlock();
	return mr;
}
EXPORT_SYMBOL_IF_KUNIT(shca_mr_get);

/**
 * shca_mr_get_index() - find an MR by the index part of a key
 * @dev: the device
 * @key: a key whose variant byte may differ from the MR's current one, as
 *	a REG_MR work request names the MR by its next key
 *
 * Context: any, hard-irq included.
 * Return: the MR, to release with shca_mr_put(), or NULL.
 */
struct shca_mr *shca_mr_get_index(struct shca_dev *dev, u32 key)
{
	struct shca_mr *mr;

	rcu_read_lock();
	mr = xa_load(&dev->mrs, key >> SHCA_MR_KEY_SHIFT);
	if (mr && !kref_get_unless_zero(&mr->ref))
		mr = NULL;
	rcu_read_unlock();
	return mr;
}

static void shca_mr_release(struct kref *ref)
{
	complete(&container_of(ref, struct shca_mr, ref)->released);
}

/* Context: any. */
void shca_mr_put(struct shca_mr *mr)
{
	kref_put(&mr->ref, shca_mr_release);
}
EXPORT_SYMBOL_IF_KUNIT(shca_mr_put);

/* [iova, iova + len) inside [start, start + size), without overflowing. */
static bool shca_mr_in_range(u64 start, u64 size, u64 iova, u64 len)
{
	return iova >= start && iova - start <= size &&
	       len <= size - (iova - start);
}

/**
 * shca_mr_check() - may a request use these bytes of an MR?
 * @mr: the MR, from shca_mr_get()
 * @key: the key the request named
 * @pd: the PD of the QP the request came through
 * @iova: the first byte
 * @len: the number of bytes
 * @access: IB_ACCESS_* the request needs (0 for a local read)
 *
 * Checked together under the MR's lock, so that a concurrent
 * invalidation or re-registration cannot split them.
 *
 * Context: any, hard-irq included.
 * Return: 0; -EACCES when the MR is invalid, its key changed, its PD
 * differs, it does not grant @access or it is a window; -ERANGE when the
 * bytes are not all inside it.
 */
int shca_mr_check(struct shca_mr *mr, u32 key, struct ib_pd *pd, u64 iova,
		  u64 len, int access)
{
	unsigned long flags;
	int ret = 0;

	/* A window's rkey is entered through shca_mw_enter() only. */
	if (mr->kind == SHCA_MR_WINDOW)
		return -EACCES;
	spin_lock_irqsave(&mr->lock, flags);
	if (!mr->valid || mr->key != key || mr->pd != pd ||
	    (mr->access & access) != access)
		ret = -EACCES;
	else if (!shca_mr_in_range(mr->iova, mr->length, iova, len))
		ret = -ERANGE;
	spin_unlock_irqrestore(&mr->lock, flags);
	return ret;
}
EXPORT_SYMBOL_IF_KUNIT(shca_mr_check);

/**
 * shca_kva_page() - the page of a kernel virtual address
 * @addr: the address, as the DMA MR and the local DMA lkey name bytes
 * @offset: set to its offset in the page
 *
 * Context: any.
 * Return: the page, or NULL when @addr is not in the linear map.
 */
struct page *shca_kva_page(u64 addr, unsigned int *offset)
{
	void *va = (void *)(uintptr_t)addr;

	if (!virt_addr_valid(va))
		return NULL;
	*offset = offset_in_page(va);
	return virt_to_page(va);
}

static struct page *shca_mr_user_page(struct shca_mr *mr, u64 iova,
				      unsigned int *offset)
{
	u64 off = iova - mr->iova;	/* fixed for a user MR's life */
	size_t i;

	if (iova < mr->iova || off >= mr->length)
		return NULL;
	off += ib_umem_offset(mr->user.umem);
	i = off >> PAGE_SHIFT;
	if (WARN_ON_ONCE(i >= mr->user.npages))
		return NULL;
	*offset = off & ~PAGE_MASK;
	return mr->user.pages[i];
}

/*
 * Lock-free: a registration racing with the caller may send it to other
 * bytes of the page list (as it would on hardware), never outside it.
 */
static struct page *shca_mr_frwr_page(struct shca_mr *mr, u64 iova,
				      unsigned int *offset)
{
	u64 start = READ_ONCE(mr->iova);
	u8 shift = READ_ONCE(mr->layout.shift);
	u64 off = iova - start;
	u32 i;

	if (iova < start || off >= READ_ONCE(mr->length))
		return NULL;
	off += READ_ONCE(mr->layout.offset);
	if (off >> shift >= min(READ_ONCE(mr->layout.npages),
				mr->frwr.max_pages))
		return NULL;
	i = off >> shift;
	return shca_kva_page(mr->frwr.pages[i] +
				(off & (BIT_ULL(shift) - 1)), offset);
}

/**
 * shca_mr_iova_page() - the page holding one byte of an MR
 * @mr: the MR, from shca_mr_get() and checked with shca_mr_check()
 * @iova: the byte
 * @offset: set to the byte's offset in the page
 *
 * The bytes from there to the end of the page are contiguous; map the
 * page with kmap_local_page() and ask again for the next ones.
 *
 * Context: any, hard-irq included.
 * Return: the page, or NULL when @iova is not backed by the MR.
 */
struct page *shca_mr_iova_page(struct shca_mr *mr, u64 iova,
			       unsigned int *offset)
{
	switch (mr->kind) {
	case SHCA_MR_DMA:
		return shca_kva_page(iova, offset);
	case SHCA_MR_USER:
		return shca_mr_user_page(mr, iova, offset);
	case SHCA_MR_FAST_REG:
		return shca_mr_frwr_page(mr, iova, offset);
	case SHCA_MR_WINDOW:
		/* Reached through its MR (shca_mw_enter()), never itself. */
	case SHCA_MR_ODP:
		/* Faulted in, and held: shca_mr_odp_page(). */
		break;
	}
	return NULL;
}
EXPORT_SYMBOL_IF_KUNIT(shca_mr_iova_page);

/*
 * On-demand paging.  ib_core's ib_umem_odp keeps the pages of an ODP MR
 * that the data path faulted in, for as long as the mm does not take
 * them back.  The engine, in process context, looks a page up under the
 * umem's mutex, faults it in (a chunk of them) when it is not there or
 * not writable, and takes a reference on it before it lets go of the
 * mutex: the mm may unmap it meanwhile (munmap, madvise, reclaim,
 * migration), but not free it under the copy, whose bytes then come from
 * or land in the page the mm gave up, as they would have a moment
 * earlier.  The mm's invalidations unmap their range in the umem; the
 * next access faults again, and fails (a protection or access error)
 * when the memory is gone.
 */

/* What a fault maps beyond the page the engine reached. */
#define SHCA_ODP_FAULT_BYTES SZ_64K

static bool shca_odp_invalidate(struct mmu_interval_notifier *mni,
				const struct mmu_notifier_range *range,
				unsigned long cur_seq)
{
	struct ib_umem_odp *odp =
		container_of(mni, struct ib_umem_odp, notifier);
	unsigned long start, end;

	if (!mmu_notifier_range_blockable(range))
		return false;
	mutex_lock(&odp->umem_mutex);
	mmu_interval_set_seq(mni, cur_seq);
	start = max(ib_umem_start(odp), range->start);
	end = min(ib_umem_end(odp), range->end);
	ib_umem_odp_unmap_dma_pages(odp, start, end);
	mutex_unlock(&odp->umem_mutex);
	return true;
}

const struct mmu_interval_notifier_ops shca_odp_ops = {
	.invalidate = shca_odp_invalidate,
};

/* The user address of @len bytes at @iova of @mr, or false. */
static bool shca_odp_uva(struct shca_mr *mr, u64 iova, u64 len, u64 *uva)
{
	u64 off = iova - mr->iova;	/* fixed for an ODP MR's life */

	if (iova < mr->iova || off >= mr->length || len > mr->length - off)
		return false;
	*uva = mr->odp->umem.address + off;
	return true;
}

static u64 shca_odp_access(bool write)
{
	return ODP_READ_ALLOWED_BIT | (write ? ODP_WRITE_ALLOWED_BIT : 0);
}

/**
 * shca_mr_odp_page() - the page holding one byte of an ODP MR, faulted in
 * @mr: the MR, of kind SHCA_MR_ODP, from shca_mr_get() and checked
 * @iova: the byte
 * @offset: set to the byte's offset in the page
 * @write: the caller writes to it
 *
 * Context: process context; sleeps.
 * Return: the page, with a reference the caller puts, or NULL when
 * @iova is not in the MR or its memory cannot be faulted in (unmapped,
 * or not writable).
 */
struct page *shca_mr_odp_page(struct shca_mr *mr, u64 iova,
			      unsigned int *offset, bool write)
{
	struct ib_umem_odp *odp = mr->odp;
	u64 access = shca_odp_access(write);
	struct page *page;
	dma_addr_t dma;
	u64 uva, idx;
	void *va;
	int ret;

	might_sleep();
	if (!shca_odp_uva(mr, iova, 1, &uva))
		return NULL;
	idx = (uva - ib_umem_start(odp)) >> odp->page_shift;
	mutex_lock(&odp->umem_mutex);
	dma = odp->dma_list[idx];
	if ((dma & access) != access) {
		mutex_unlock(&odp->umem_mutex);
		ret = ib_umem_odp_map_dma_and_lock(odp, uva,
						   min_t(u64, SHCA_ODP_FAULT_BYTES,
							 ib_umem_end(odp) - uva),
						   access, true);
		if (ret < 0) {
			ibdev_dbg_ratelimited(mr->pd->device,
					      "ODP MR %#x: no page at %#llx: %d\n",
					      mr->key, iova, ret);
			return NULL;
		}
		dma = odp->dma_list[idx];
	}
	/* Virtual DMA: the address is the page's in the linear map. */
	va = (void *)(uintptr_t)(dma & ODP_DMA_ADDR_MASK) +
	     (uva & (BIT_ULL(odp->page_shift) - 1));
	page = virt_to_page(va);
	get_page(page);
	mutex_unlock(&odp->umem_mutex);
	*offset = offset_in_page(va);
	return page;
}

/**
 * shca_mr_odp_prefetch() - fault in, or map what is there of, an ODP range
 * @mr: the MR, of kind SHCA_MR_ODP, checked for @len bytes at @iova
 * @iova: the range's first byte
 * @len: its length
 * @write: for writing
 * @fault: fault the pages in; else map those present only
 *
 * Context: process context; sleeps.
 * Return: 0, -EINVAL when the range is not the MR's, or the fault's error.
 */
int shca_mr_odp_prefetch(struct shca_mr *mr, u64 iova, u64 len, bool write,
			 bool fault)
{
	u64 uva;
	int ret;

	if (!shca_odp_uva(mr, iova, len, &uva))
		return -EINVAL;
	if (!len)
		return 0;
	ret = ib_umem_odp_map_dma_and_lock(mr->odp, uva, len,
					   shca_odp_access(write), fault);
	if (ret < 0)
		return ret;
	mutex_unlock(&mr->odp->umem_mutex);
	return 0;
}

/* Does the page list map_mr_sg built cover the iova range? */
static bool shca_mr_map_covers(struct shca_mr *mr)
{
	const struct shca_mr_layout *map = &mr->frwr.map;
	u64 mapped = (u64)map->npages << map->shift;

	return map->offset <= mapped && mr->ibmr.length <= mapped - map->offset;
}

static void shca_mr_set_valid(struct shca_mr *mr, u32 key, int access)
{
	WRITE_ONCE(mr->key, key);
	WRITE_ONCE(mr->access, access & SHCA_MR_ACCESS);
	WRITE_ONCE(mr->iova, mr->ibmr.iova);
	WRITE_ONCE(mr->length, mr->ibmr.length);
	WRITE_ONCE(mr->layout.npages, mr->frwr.map.npages);
	WRITE_ONCE(mr->layout.offset, mr->frwr.map.offset);
	WRITE_ONCE(mr->layout.shift, mr->frwr.map.shift);
	WRITE_ONCE(mr->valid, true);
}

/**
 * shca_mr_fast_reg() - register a fast-registration MR (REG_MR)
 * @mr: an MR from alloc_mr, its page list filled by ib_map_mr_sg()
 * @key: the new key: the MR's index and a variant byte of the consumer's
 *	choice (as ib_update_fast_reg_key() sets it)
 * @access: IB_ACCESS_* to grant
 *
 * Takes the iova and length map_mr_sg left in @mr->ibmr.  The MR must be
 * invalid: re-registering a valid MR is an error, as on hardware.
 *
 * Context: any, hard-irq included.
 * Return: 0, or -EINVAL for an MR of another kind, a key with another
 * index, unknown access flags, a page list that does not cover the range,
 * or a valid MR.
 */
int shca_mr_fast_reg(struct shca_mr *mr, u32 key, int access)
{
	unsigned long flags;
	int ret = 0;

	if (mr->kind != SHCA_MR_FAST_REG ||
	    key >> SHCA_MR_KEY_SHIFT != mr->index ||
	    shca_mr_access_check(mr->pd->device, access, "reg_mr") ||
	    !shca_mr_map_covers(mr))
		return -EINVAL;

	spin_lock_irqsave(&mr->lock, flags);
	if (mr->valid)
		ret = -EINVAL;
	else
		shca_mr_set_valid(mr, key, access);
	spin_unlock_irqrestore(&mr->lock, flags);
	return ret;
}
EXPORT_SYMBOL_IF_KUNIT(shca_mr_fast_reg);

/* Undoes shca_mw_take_mr()'s count; the reference is the caller's. */
static void shca_mw_untake_mr(struct shca_mr *mr)
{
	unsigned long flags;

	spin_lock_irqsave(&mr->lock, flags);
	mr->windows--;
	spin_unlock_irqrestore(&mr->lock, flags);
}

/* A window's MR, as its binding ends. */
static void shca_mw_put_mr(struct shca_mr *mr)
{
	shca_mw_untake_mr(mr);
	shca_mr_put(mr);
}

/* Ends a window's binding, under its lock; returns the MR to put. */
static struct shca_mr *shca_mw_detach(struct shca_mr *win)
{
	struct shca_mr *old = win->win.parent;

	win->win.parent = NULL;
	win->valid = false;
	return old;
}

/**
 * shca_mr_invalidate() - invalidate a fast-registration MR or a window
 * @mr: the MR or window
 * @key: the key the LOCAL_INV or SEND_WITH_INV named
 * @qpn: the QP it came through: a type 2 window's must be the one it was
 *	bound through
 *
 * Context: any, hard-irq included.
 * Return: 0 (also for an MR already invalid), or -EINVAL for an MR of
 * another kind, a type 1 window (only a bind unbinds one), a key that is
 * not its current one, an unbound window or another QP.
 */
int shca_mr_invalidate(struct shca_mr *mr, u32 key, u32 qpn)
{
	unsigned long flags;
	int ret = 0;

	if (mr->kind == SHCA_MR_WINDOW) {
		struct shca_mr *parent = NULL;

		if (mr->win.type != IB_MW_TYPE_2)
			return -EINVAL;
		spin_lock_irqsave(&mr->lock, flags);
		if (mr->key == key && mr->valid && mr->win.qpn == qpn)
			parent = shca_mw_detach(mr);
		spin_unlock_irqrestore(&mr->lock, flags);
		if (!parent)
			return -EINVAL;
		shca_mw_put_mr(parent);
		return 0;
	}
	if (mr->kind != SHCA_MR_FAST_REG)
		return -EINVAL;
	spin_lock_irqsave(&mr->lock, flags);
	if (mr->key != key)
		ret = -EINVAL;
	else
		WRITE_ONCE(mr->valid, false);
	spin_unlock_irqrestore(&mr->lock, flags);
	return ret;
}
EXPORT_SYMBOL_IF_KUNIT(shca_mr_invalidate);

/* Takes @mr's part of a binding: 0, or -EINVAL when it may not be bound. */
static int shca_mw_take_mr(struct shca_mr *mr, struct ib_pd *pd, u64 iova,
			   u64 length, int access)
{
	unsigned long flags;
	int ret = -EINVAL;

	spin_lock_irqsave(&mr->lock, flags);
	/* Remote write or atomic access need local write (IBA 10.6.7.2). */
	if ((mr->kind == SHCA_MR_USER || mr->kind == SHCA_MR_ODP) &&
	    mr->pd == pd && !mr->dying &&
	    mr->access & IB_ACCESS_MW_BIND &&
	    (!(access & (IB_ACCESS_REMOTE_WRITE | IB_ACCESS_REMOTE_ATOMIC)) ||
	     mr->access & IB_ACCESS_LOCAL_WRITE) &&
	    shca_mr_in_range(mr->iova, mr->length, iova, length)) {
		mr->windows++;
		ret = 0;
	}
	spin_unlock_irqrestore(&mr->lock, flags);
	return ret;
}

/**
 * shca_mw_bind() - bind a memory window (a BIND_MW work request)
 * @win: the window, from shca_mr_get_index()
 * @key: its new rkey: its index and a new variant byte
 * @mr: the MR to open onto, from shca_mr_get(): on success the window
 *	keeps this reference; NULL when @length is 0
 * @qpn: the QP binding it, the only one a type 2 window's rkey is good on
 * @iova: the window's first byte, in @mr's iova space
 * @length: its bytes; 0 unbinds the window (type 1)
 * @access: IB_ACCESS_REMOTE_* it grants (and IB_ACCESS_LOCAL_WRITE,
 *	ignored)
 *
 * A type 1 window may be bound again at any time, a type 2 window only
 * once invalidated.  The window and @mr must have the QP's PD (the caller
 * checked the window's).
 *
 * Context: any, hard-irq included.
 * Return: 0, or -EINVAL (the window is unchanged).
 */
int shca_mw_bind(struct shca_mr *win, u32 key, struct shca_mr *mr,
		 u32 qpn, u64 iova, u64 length, int access)
{
	struct shca_mr *old;
	unsigned long flags;

	/* Local write means nothing to a window; consumers ask for it. */
	if (win->kind != SHCA_MR_WINDOW ||
	    key >> SHCA_MR_KEY_SHIFT != win->index ||
	    access & ~(SHCA_MW_ACCESS | IB_ACCESS_LOCAL_WRITE) ||
	    !mr != !length ||
	    (mr && shca_mw_take_mr(mr, win->pd, iova, length, access)))
		return -EINVAL;

	spin_lock_irqsave(&win->lock, flags);
	if (win->win.type == IB_MW_TYPE_2 && win->valid) {
		spin_unlock_irqrestore(&win->lock, flags);
		if (mr)
			shca_mw_untake_mr(mr);
		return -EINVAL;
	}
	old = win->win.parent;
	win->win.parent = mr;
	win->win.qpn = qpn;
	WRITE_ONCE(win->key, key);
	win->iova = iova;
	win->length = length;
	win->access = access & SHCA_MW_ACCESS;
	win->valid = !!mr;
	spin_unlock_irqrestore(&win->lock, flags);
	if (old)
		shca_mw_put_mr(old);
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(shca_mw_bind);

/**
 * shca_mw_unbind() - unbind a window, letting go of its MR
 * @win: the window
 *
 * Context: any, hard-irq included.
 */
void shca_mw_unbind(struct shca_mr *win)
{
	struct shca_mr *old;
	unsigned long flags;

	spin_lock_irqsave(&win->lock, flags);
	old = shca_mw_detach(win);
	spin_unlock_irqrestore(&win->lock, flags);
	if (old)
		shca_mw_put_mr(old);
}

/**
 * shca_mw_enter() - check a remote request against a window
 * @win: the window, from shca_mr_get()
 * @key: the rkey the request named
 * @qpn: the responder's QP
 * @pd: its PD
 * @iova: the first byte
 * @len: the number of bytes
 * @access: IB_ACCESS_REMOTE_* the request needs
 *
 * Bound, under @key, to @pd (and, type 2, to @qpn), granting @access over
 * every byte: then the request reaches the bytes through the window's MR,
 * which it holds from here on, whatever happens to the window meanwhile.
 *
 * Context: any, hard-irq included.
 * Return: the window's MR, to release with shca_mr_put(), or NULL.
 */
struct shca_mr *shca_mw_enter(struct shca_mr *win, u32 key, u32 qpn,
			      struct ib_pd *pd, u64 iova, u64 len, int access)
{
	struct shca_mr *mr = NULL;
	unsigned long flags;

	spin_lock_irqsave(&win->lock, flags);
	if (win->valid && win->key == key && win->pd == pd &&
	    (win->win.type == IB_MW_TYPE_1 || win->win.qpn == qpn) &&
	    (win->access & access) == access &&
	    shca_mr_in_range(win->iova, win->length, iova, len)) {
		mr = win->win.parent;
		/* The window's own reference keeps it above zero. */
		kref_get(&mr->ref);
	}
	spin_unlock_irqrestore(&win->lock, flags);
	return mr;
}
EXPORT_SYMBOL_IF_KUNIT(shca_mw_enter);

/**
 * shca_sgl_init() - a cursor over a work request's SGE list
 * @sgl: the cursor
 * @dev: the device whose keys the SGEs name
 * @pd: the PD of the QP the work request came through
 * @access: IB_ACCESS_* the MRs must grant (IB_ACCESS_LOCAL_WRITE when
 *	the engine writes to them, 0 when it only reads)
 * @dma_lkey: accept the local DMA lkey (a kernel QP's SGEs)
 * @sge: the SGEs, which must outlive the cursor
 * @num_sge: how many
 *
 * Keys are checked later, as the cursor reaches each SGE.
 *
 * Return: 0, or -EMSGSIZE when the SGEs add up to more than the IBA's
 * 2^31 bytes per message.
 */
int shca_sgl_init(struct shca_sgl *sgl, struct shca_dev *dev,
		  struct ib_pd *pd, int access, bool dma_lkey,
		  const struct softhca_sge *sge, u32 num_sge)
{
	u64 len = 0;
	u32 i;

	for (i = 0; i < num_sge; i++)
		len += sge[i].length;
	if (len > SZ_2G)
		return -EMSGSIZE;
	*sgl = (struct shca_sgl){
		.dev = dev,
		.pd = pd,
		.access = access,
		.dma_lkey = dma_lkey,
		.sge = sge,
		.num_sge = num_sge,
		.len = len,
	};
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(shca_sgl_init);

/* A cursor over @len bytes of kernel memory at @buf. */
void shca_sgl_init_buf(struct shca_sgl *sgl, void *buf, u32 len)
{
	*sgl = (struct shca_sgl){ .buf = buf, .len = len };
}
EXPORT_SYMBOL_IF_KUNIT(shca_sgl_init_buf);

/**
 * shca_sgl_init_skb() - a cursor over a received packet's bytes
 * @sgl: the cursor, which reads them only
 * @skb: the packet, with no frag list; it must outlive the cursor
 * @off: where the bytes start, from @skb->data
 * @len: how many there are
 *
 * The bytes may lie in @skb's head and page fragments: a packet is not
 * made linear (allocated and copied again) to be read once.
 */
void shca_sgl_init_skb(struct shca_sgl *sgl, const struct sk_buff *skb,
		       u32 off, u32 len)
{
	*sgl = (struct shca_sgl){ .skb = skb, .skb_off = off, .len = len };
}
EXPORT_SYMBOL_IF_KUNIT(shca_sgl_init_skb);

/**
 * shca_sgl_init_remote() - a cursor over a range named by an rkey
 * @sgl: the cursor
 * @range: the range (addr, length, and the rkey in lkey), which must
 *	outlive the cursor
 * @dev: the responder's device
 * @pd: the responder QP's PD
 * @qpn: the responder QP, which a type 2 window must be bound to
 * @access: IB_ACCESS_REMOTE_* the request needs
 *
 * Unlike a local SGE list, the range is checked at once: a request that
 * may not touch every byte of it touches none.
 *
 * Return: 0, or -EACCES when the key, PD, access or range is refused.
 */
int shca_sgl_init_remote(struct shca_sgl *sgl, struct softhca_sge *range,
			 struct shca_dev *dev, struct ib_pd *pd, u32 qpn,
			 int access)
{
	struct shca_mr *win;
	int ret;

	ret = shca_sgl_init(sgl, dev, pd, access, false, range, 1);
	if (ret || !range->length)
		return ret;
	sgl->mr = shca_mr_get(dev, range->lkey);
	if (!sgl->mr)
		return -EACCES;
	sgl->entered = true;
	if (sgl->mr->kind == SHCA_MR_WINDOW) {
		/* Checked once: from here on, the bytes are the MR's. */
		win = sgl->mr;
		sgl->mr = shca_mw_enter(win, range->lkey, qpn, pd, range->addr,
					range->length, access);
		shca_mr_put(win);
		return sgl->mr ? 0 : -EACCES;
	}
	ret = shca_mr_check(sgl->mr, range->lkey, pd, range->addr,
			    range->length, access);
	return ret ? -EACCES : 0;
}

/* Puts the reference on the ODP MR page the cursor was at. */
static void shca_sgl_put_held(struct shca_sgl *sgl)
{
	if (sgl->held)
		put_page(sgl->held);
	sgl->held = NULL;
}

/* Leaves the current SGE (dropping its MR); also the cursor's release. */
void shca_sgl_release(struct shca_sgl *sgl)
{
	shca_sgl_put_held(sgl);
	if (sgl->mr)
		shca_mr_put(sgl->mr);
	sgl->mr = NULL;
	sgl->entered = false;
}
EXPORT_SYMBOL_IF_KUNIT(shca_sgl_release);

/*
 * A move of @len bytes past the cursor's end: a caller that trusted a
 * length it should have checked.  The cursor is spent (at its end, and
 * bad), so that no later map reaches past it either.
 */
static bool shca_sgl_overrun(struct shca_sgl *sgl, u32 len)
{
	if (likely(len <= sgl->len - sgl->pos))
		return false;
	sgl->pos = sgl->len;
	sgl->bad = true;
	return true;
}

/* Looks the current SGE's key up and checks the whole SGE against it. */
static int shca_sgl_enter(struct shca_sgl *sgl)
{
	const struct softhca_sge *sge = &sgl->sge[sgl->i];

	sgl->entered = true;
	if (sge->lkey == SHCA_LOCAL_DMA_LKEY && sgl->dma_lkey)
		return 0;
	sgl->mr = shca_mr_get(sgl->dev, sge->lkey);
	if (!sgl->mr ||
	    shca_mr_check(sgl->mr, sge->lkey, sgl->pd, sge->addr,
			  sge->length, sgl->access)) {
		ibdev_dbg_ratelimited(&sgl->dev->ibdev,
				      "key %#x refused for %u bytes at %#llx\n",
				      sge->lkey, sge->length, sge->addr);
		return -EACCES;
	}
	return 0;
}

/**
 * shca_sgl_check() - check every SGE's key and range now
 * @sgl: a cursor over an SGE list, not used yet
 *
 * For the requester, whose local protection errors must stop a message
 * before the responder sees any of it.  The SGEs are checked last to
 * first, so that the cursor is left at the first one with bytes, entered:
 * the copy that follows looks no key up again for a one-SGE message.
 *
 * Return: 0, or -EACCES (and @sgl->bad set; the cursor holds no MR).
 */
int shca_sgl_check(struct shca_sgl *sgl)
{
	u32 i = sgl->num_sge;
	int ret = 0;

	while (i-- && !ret) {
		if (!sgl->sge[i].length)
			continue;
		shca_sgl_release(sgl);
		sgl->i = i;
		ret = shca_sgl_enter(sgl);
	}
	if (ret) {
		shca_sgl_release(sgl);
		sgl->i = 0;
	}
	sgl->bad = ret;
	return ret;
}
EXPORT_SYMBOL_IF_KUNIT(shca_sgl_check);

/**
 * shca_sgl_page() - the page under the cursor of an SGE list
 * @sgl: the cursor, over an SGE list
 * @poff: set to the cursor's offset in the page
 * @len: set to how many bytes from there the page holds, in the SGE
 *
 * The page is the cursor's until it moves to another, unmaps or is
 * released (an ODP MR's is held until then): a caller that keeps it
 * takes a reference of its own.
 *
 * Return: the page, or an ERR_PTR() as shca_sgl_map() has them.
 */
struct page *shca_sgl_page(struct shca_sgl *sgl, unsigned int *poff,
			   u32 *len)
{
	const struct softhca_sge *sge;
	struct page *page;

	if (shca_sgl_overrun(sgl, 1))
		return ERR_PTR(-EFAULT);
	/* Bytes are left, so an SGE with bytes is ahead. */
	while (sgl->off == sgl->sge[sgl->i].length) {
		shca_sgl_release(sgl);
		if (WARN_ON_ONCE(++sgl->i == sgl->num_sge))
			return ERR_PTR(-EFAULT);
		sgl->off = 0;
	}
	sge = &sgl->sge[sgl->i];
	if (!sgl->entered && shca_sgl_enter(sgl)) {
		sgl->bad = true;
		return ERR_PTR(-EACCES);
	}
	if (sgl->mr && sgl->mr->kind == SHCA_MR_ODP) {
		shca_sgl_put_held(sgl);
		sgl->held = shca_mr_odp_page(sgl->mr, sge->addr + sgl->off,
					     poff, sgl->access &
					     SHCA_MEM_WRITE_ACCESS);
		page = sgl->held;
	} else if (sgl->mr) {
		page = shca_mr_iova_page(sgl->mr, sge->addr + sgl->off, poff);
	} else {
		page = shca_kva_page(sge->addr + sgl->off, poff);
	}
	if (!page) {
		sgl->bad = true;
		return ERR_PTR(-EFAULT);
	}
	*len = min_t(u32, PAGE_SIZE - *poff, sge->length - sgl->off);
	return page;
}

/* The bytes of a packet at the cursor: in its head, or in a fragment. */
static void *shca_sgl_map_skb(struct shca_sgl *sgl, u32 *len)
{
	const struct skb_shared_info *shinfo = skb_shinfo(sgl->skb);
	u32 at = sgl->skb_off + sgl->off, left = sgl->len - sgl->off;
	u32 head = skb_headlen(sgl->skb), size, poff, room;
	const skb_frag_t *frag;
	unsigned int i;

	if (at < head) {
		*len = min(head - at, left);
		return sgl->skb->data + at;
	}
	at -= head;
	for (i = 0; i < shinfo->nr_frags; i++) {
		frag = &shinfo->frags[i];
		size = skb_frag_size(frag);
		if (at >= size) {
			at -= size;
			continue;
		}
		/* A fragment may span the pages of a compound page. */
		poff = skb_frag_off(frag) + at;
		room = PAGE_SIZE - offset_in_page(poff);
		*len = min3(size - at, left, room);
		sgl->map = kmap_local_page(skb_frag_page(frag) +
					   (poff >> PAGE_SHIFT));
		return sgl->map + offset_in_page(poff);
	}
	sgl->bad = true;
	return ERR_PTR(-EFAULT);
}

/**
 * shca_sgl_map() - map the bytes at the cursor
 * @sgl: the cursor
 * @len: set to how many bytes from there are mapped contiguously
 *
 * Return: the bytes, to unmap with shca_sgl_unmap() before the next map
 * of @sgl, or an ERR_PTR(): -EACCES when a key or range is refused,
 * -EFAULT when an address is not backed or the cursor is at its end (all
 * set @sgl->bad).
 */
void *shca_sgl_map(struct shca_sgl *sgl, u32 *len)
{
	unsigned int poff;
	struct page *page;

	if (sgl->skb) {
		if (shca_sgl_overrun(sgl, 1))
			return ERR_PTR(-EFAULT);
		return shca_sgl_map_skb(sgl, len);
	}
	if (!sgl->sge) {
		if (shca_sgl_overrun(sgl, 1))
			return ERR_PTR(-EFAULT);
		*len = sgl->len - sgl->off;
		return sgl->buf + sgl->off;
	}
	page = shca_sgl_page(sgl, &poff, len);
	if (IS_ERR(page))
		return ERR_CAST(page);
	sgl->map = kmap_local_page(page);
	return sgl->map + poff;
}
EXPORT_SYMBOL_IF_KUNIT(shca_sgl_map);

void shca_sgl_unmap(struct shca_sgl *sgl)
{
	if (sgl->map)
		kunmap_local(sgl->map);
	sgl->map = NULL;
	shca_sgl_put_held(sgl);
}

/**
 * shca_sgl_skip() - move a cursor on without touching the bytes
 * @sgl: the cursor
 * @len: how many bytes to pass over
 *
 * For a message that resumes part-way: a packet retransmitted, or one
 * placed at its offset.  Keys are checked when bytes are reached.
 *
 * Return: 0, or -EFAULT when fewer than @len bytes are left (the cursor
 * is then spent: see shca_sgl_overrun()).
 */
int shca_sgl_skip(struct shca_sgl *sgl, u32 len)
{
	u32 n;

	if (shca_sgl_overrun(sgl, len))
		return -EFAULT;
	sgl->pos += len;
	if (!sgl->sge) {
		sgl->off += len;
		return 0;
	}
	while (len) {
		n = min(len, sgl->sge[sgl->i].length - sgl->off);
		sgl->off += n;
		len -= n;
		if (!len)
			break;
		shca_sgl_release(sgl);
		/* Bytes are left, so an SGE with bytes is ahead. */
		if (WARN_ON_ONCE(++sgl->i == sgl->num_sge))
			return -EFAULT;
		sgl->off = 0;
	}
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(shca_sgl_skip);

/**
 * shca_sgl_copy() - copy bytes from one cursor to another
 * @dst: where to
 * @src: where from
 * @len: how many
 *
 * Both cursors advance by what was copied.
 *
 * Context: process context for an ODP MR's memory (sleeps), and for
 * SHCA_COPY_RESCHED_BYTES or more (reschedules); else softirq too.
 * Return: 0, -EFAULT when either cursor has fewer than @len bytes left
 * (nothing is copied), or the error of the first map that failed (see
 * shca_sgl_map(); the failing cursor has ->bad set).
 */
int shca_sgl_copy(struct shca_sgl *dst, struct shca_sgl *src, u32 len)
{
	u32 dlen, slen, n, copied = 0;
	void *d, *s;

	if (shca_sgl_overrun(dst, len) || shca_sgl_overrun(src, len))
		return -EFAULT;
	while (len) {
		d = shca_sgl_map(dst, &dlen);
		if (IS_ERR(d))
			return PTR_ERR(d);
		s = shca_sgl_map(src, &slen);
		if (IS_ERR(s)) {
			shca_sgl_unmap(dst);
			return PTR_ERR(s);
		}
		n = min3(len, dlen, slen);
		memcpy(d, s, n);
		shca_sgl_unmap(src);
		shca_sgl_unmap(dst);
		dst->off += n;
		dst->pos += n;
		src->off += n;
		src->pos += n;
		len -= n;
		copied += n;
		if (copied >= SHCA_COPY_RESCHED_BYTES) {
			copied = 0;
			cond_resched();
		}
	}
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(shca_sgl_copy);
