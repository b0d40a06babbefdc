// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Memory regions.
 *
 * ib_core does not allocate MRs (6.1 and 6.12), so the verbs do: they
 * build the MR in the caller's context (pinning user memory needs the
 * caller's mm, which the command queue worker has not), then one command
 * counts it against the limit, gives it a key and publishes it in the
 * device's xarray.  Deregistration unpublishes it by command, then waits
 * until the data path has put every reference it took with shca_mr_get()
 * before freeing anything.
 *
 * Four kinds: the DMA MR (ib_alloc_pd() with IB_PD_UNSAFE_GLOBAL_RKEY),
 * whose iova is a kernel virtual address; user MRs over pinned pages, or
 * over pages the data path faults in on demand (ODP, mem.c); and
 * fast-registration MRs, a page list that map_mr_sg fills and a REG_MR
 * work request (or softhca_async_reg_mr()) makes valid, until LOCAL_INV
 * or SEND_WITH_INV makes it invalid again.  Memory windows, which user
 * space binds onto user MRs, live here too.
 */

#include <kunit/visibility.h>
#include <linux/random.h>
#include <linux/slab.h>
#include <rdma/softhca.h>

#include "cmdq.h"
#include "dev.h"
#include "fault.h"
#include "mr.h"

static struct shca_mr *shca_mr_new(struct ib_pd *pd, enum shca_mr_kind kind,
				   int access)
{
	bool user = kind == SHCA_MR_USER || kind == SHCA_MR_ODP;
	struct shca_mr *mr;

	/* A user MR is charged to its process, as its page list is. */
	mr = shca_fault() ? NULL :
	     kzalloc(sizeof(*mr), user ? GFP_KERNEL_ACCOUNT : GFP_KERNEL);
	if (!mr)
		return NULL;
	mr->pd = pd;
	mr->kind = kind;
	mr->access = access & (user ? SHCA_MR_USER_ACCESS : SHCA_MR_ACCESS);
	kref_init(&mr->ref);
	init_completion(&mr->released);
	spin_lock_init(&mr->lock);
	return mr;
}

/*
 * Count the MR, reserve an index, set the key, then publish: a lookup
 * sees either nothing or the finished MR (xa_store() orders the writes
 * before it).  The variant byte is random so that keys do not follow
 * each other in sequence.
 */
static int shca_mr_add_cmd(struct shca_cmd *cmd)
{
	struct shca_mr *mr = cmd->obj;
	struct shca_dev *dev = to_shca_dev(mr->pd->device);
	u32 index;
	int ret;

	ret = shca_dev_res_get(dev, SHCA_RES_MR);
	if (ret)
		return ret;
	ret = shca_fault() ? -ENOMEM :
	      xa_alloc_cyclic_irq(&dev->mrs, &index, NULL,
				  XA_LIMIT(SHCA_MR_MIN_INDEX, SHCA_MR_MAX_INDEX),
				  &dev->next_mr, GFP_KERNEL);
	if (ret < 0)
		goto err_res_put;

	mr->index = index;
	mr->key = (index << SHCA_MR_KEY_SHIFT) | get_random_u8();
	mr->ibmr.lkey = mr->key;
	mr->ibmr.rkey = mr->key;
	/* Storing into the reserved entry allocates nothing. */
	ret = xa_err(xa_store_irq(&dev->mrs, index, mr, GFP_KERNEL));
	if (ret)
		goto err_release_index;
	return 0;

err_release_index:
	xa_erase_irq(&dev->mrs, index);
err_res_put:
	shca_dev_res_put(dev, SHCA_RES_MR);
	return ret;
}

static int shca_mr_add(struct shca_mr *mr)
{
	return shca_cmd_run(mr->pd->device, shca_mr_add_cmd, mr, false, NULL);
}

/*
 * An MR about to go: one with windows bound to it stays (-EBUSY, as the
 * IBA has it), since its windows hold references to it; otherwise, from
 * here on, no window binds to it.  @dying: false to take that back.
 */
static int shca_mr_set_dying(struct shca_mr *mr, bool dying,
			     const char *verb)
{
	unsigned long flags;
	u32 windows;

	spin_lock_irqsave(&mr->lock, flags);
	windows = mr->windows;
	if (!windows || !dying)
		mr->dying = dying;
	spin_unlock_irqrestore(&mr->lock, flags);
	if (windows && dying) {
		ibdev_dbg(mr->pd->device, "%s: %u windows bound\n", verb,
			  windows);
		return -EBUSY;
	}
	return 0;
}

/* Once erased, no new lookup finds the MR; those in flight may. */
static int shca_mr_remove_cmd(struct shca_cmd *cmd)
{
	struct shca_mr *mr = cmd->obj;
	struct shca_dev *dev = to_shca_dev(mr->pd->device);
	int ret;

	ret = shca_mr_set_dying(mr, true, "dereg_mr");
	if (ret)
		return ret;
	xa_erase_irq(&dev->mrs, mr->index);
	shca_dev_res_put(dev, SHCA_RES_MR);
	return 0;
}

struct ib_mr *shca_get_dma_mr(struct ib_pd *pd, int access)
{
	struct shca_mr *mr;
	int ret;

	ret = shca_mr_access_check(pd->device, access, "get_dma_mr");
	if (ret)
		return ERR_PTR(ret);
	mr = shca_mr_new(pd, SHCA_MR_DMA, access);
	if (!mr)
		return ERR_PTR(-ENOMEM);
	/* The whole address space; shca_mr_iova_page() checks addresses. */
	mr->iova = 0;
	mr->length = U64_MAX;
	mr->valid = true;

	ret = shca_mr_add(mr);
	if (ret)
		goto err_free_mr;
	return &mr->ibmr;

err_free_mr:
	kfree(mr);
	return ERR_PTR(ret);
}

/*
 * One struct page per PAGE_SIZE of the umem, so that the data path finds
 * the page behind an iova by index, whatever page sizes back the memory.
 */
static int shca_mr_user_pages(struct shca_mr *mr)
{
	struct ib_umem *umem = mr->user.umem;
	size_t npages = ib_umem_num_pages(umem);
	struct sg_page_iter iter;
	struct page **pages;
	size_t i = 0;

	pages = shca_fault() ? NULL :
		kvcalloc(npages, sizeof(*pages), GFP_KERNEL_ACCOUNT);
	if (!pages)
		return -ENOMEM;
	for_each_sgtable_page(&umem->sgt_append.sgt, &iter, 0) {
		if (WARN_ON_ONCE(i == npages))
			break;
		pages[i++] = sg_page_iter_page(&iter);
	}
	if (WARN_ON_ONCE(i != npages)) {
		kvfree(pages);
		return -EFAULT;
	}
	mr->user.pages = pages;
	mr->user.npages = npages;
	return 0;
}

static int shca_reg_user_mr_check(struct ib_pd *pd, u64 start, u64 length,
				  u64 virt_addr, int access,
				  struct ib_udata *udata)
{
	struct ib_device *ibdev = pd->device;
	int ret;

	ret = shca_udata_no_request(ibdev, udata, "reg_user_mr");
	if (ret)
		return ret;
	/* Windows may be bound to user MRs only, which may page on demand. */
	ret = shca_mr_access_check(ibdev, access & ~(IB_ACCESS_MW_BIND |
						     IB_ACCESS_ON_DEMAND),
				   "reg_user_mr");
	if (ret)
		return ret;
	if (access & IB_ACCESS_ON_DEMAND && !start && length == U64_MAX) {
		ibdev_dbg(ibdev, "reg_user_mr: implicit ODP is not offered\n");
		return -EOPNOTSUPP;
	}
	/* The last byte's iova and address must not wrap. */
	if (!length || virt_addr + length - 1 < virt_addr ||
	    start + length - 1 < start) {
		ibdev_dbg(ibdev, "reg_user_mr: bad range %#llx+%#llx at %#llx\n",
			  start, length, virt_addr);
		return -EINVAL;
	}
	return 0;
}

/*
 * An on-demand paging MR: nothing is pinned; the data path faults its
 * pages in as it reaches them (mem.c), and the mm takes them back when
 * it will, through the umem's interval notifier.
 */
static struct ib_mr *shca_reg_odp_mr(struct ib_pd *pd, u64 start, u64 length,
				     u64 virt_addr, int access)
{
	struct ib_umem_odp *odp;
	struct shca_mr *mr;
	int ret;

	mr = shca_mr_new(pd, SHCA_MR_ODP, access);
	if (!mr)
		return ERR_PTR(-ENOMEM);
	mr->iova = virt_addr;
	mr->length = length;
	mr->valid = true;

	/* In the caller's context: the umem follows current->mm. */
	odp = ib_umem_odp_get(pd->device, start, length, access,
			      &shca_odp_ops);
	if (IS_ERR(odp)) {
		ret = PTR_ERR(odp);
		ibdev_dbg(pd->device, "reg_user_mr: no ODP umem: %d\n", ret);
		goto err_free_mr;
	}
	mr->odp = odp;
	shca_dev_odp_get(to_shca_dev(pd->device));
	ret = shca_mr_add(mr);
	if (ret)
		goto err_odp_put;
	return &mr->ibmr;

err_odp_put:
	shca_dev_odp_put(to_shca_dev(pd->device));
	ib_umem_odp_release(odp);
err_free_mr:
	kfree(mr);
	return ERR_PTR(ret);
}

struct ib_mr *shca_reg_user_mr(struct ib_pd *pd, u64 start, u64 length,
			       u64 virt_addr, int access,
			       struct ib_udata *udata)
{
	struct ib_umem *umem;
	struct shca_mr *mr;
	int ret;

	ret = shca_reg_user_mr_check(pd, start, length, virt_addr, access,
				     udata);
	if (ret)
		return ERR_PTR(ret);
	if (access & IB_ACCESS_ON_DEMAND)
		return shca_reg_odp_mr(pd, start, length, virt_addr, access);
	mr = shca_mr_new(pd, SHCA_MR_USER, access);
	if (!mr)
		return ERR_PTR(-ENOMEM);
	mr->iova = virt_addr;
	mr->length = length;
	mr->valid = true;

	/* In the caller's context: ib_umem_get() pins current->mm's pages. */
	umem = ib_umem_get(pd->device, start, length, access);
	if (IS_ERR(umem)) {
		ret = PTR_ERR(umem);
		ibdev_dbg(pd->device, "reg_user_mr: cannot pin: %d\n", ret);
		goto err_free_mr;
	}
	mr->user.umem = umem;
	ret = shca_mr_user_pages(mr);
	if (ret)
		goto err_release_umem;

	ret = shca_mr_add(mr);
	if (ret)
		goto err_free_pages;
	return &mr->ibmr;

err_free_pages:
	kvfree(mr->user.pages);
err_release_umem:
	ib_umem_release(umem);
err_free_mr:
	kfree(mr);
	return ERR_PTR(ret);
}

/*
 * rereg_mr.  A new translation makes a new MR, with new keys, registered
 * as reg_user_mr registers one (with the new PD and access flags, or the
 * old ones); ib_core puts it in the old one's place and deregisters the
 * old one, which waits for the data path to let go of it (and must have
 * no window bound: -EBUSY).  The data path
 * relies on a user MR's pages being fixed for its life, so they are never
 * changed under it.  Otherwise the MR changes in place and its keys stay,
 * as consumers that handed them out expect: a new PD and new access flags
 * are taken under the MR's lock, where every check reads them; write
 * access to pages pinned read-only is not offered.
 */
struct ib_mr *shca_rereg_user_mr(struct ib_mr *ibmr, int flags, u64 start,
				 u64 length, u64 virt_addr, int access,
				 struct ib_pd *pd, struct ib_udata *udata)
{
	struct shca_mr *mr = to_shca_mr(ibmr);
	unsigned long irqflags;
	struct ib_mr *new;
	int ret;

	if (mr->kind != SHCA_MR_USER) {
		ibdev_dbg(ibmr->device, "rereg_mr: not a user MR\n");
		return ERR_PTR(-EOPNOTSUPP);
	}
	/*
	 * ib_core passes the MR's own PD when the PD does not change.  Once
	 * it has the new MR, it deregisters the old one and cannot take that
	 * back: no window may be bound to the old one, nor bind meanwhile.
	 */
	if (flags & IB_MR_REREG_TRANS) {
		ret = shca_mr_set_dying(mr, true, "rereg_mr");
		if (ret)
			return ERR_PTR(ret);
		new = shca_reg_user_mr(pd, start, length, virt_addr,
				       flags & IB_MR_REREG_ACCESS ?
				       access : mr->access, udata);
		if (IS_ERR(new))
			shca_mr_set_dying(mr, false, "rereg_mr");
		return new;
	}
	ret = shca_udata_no_request(ibmr->device, udata, "rereg_mr");
	if (ret)
		return ERR_PTR(ret);
	if (flags & IB_MR_REREG_ACCESS) {
		ret = shca_mr_access_check(ibmr->device,
					   access & ~IB_ACCESS_MW_BIND,
					   "rereg_mr");
		if (ret)
			return ERR_PTR(ret);
		if (ib_access_writable(access) && !mr->user.umem->writable) {
			ibdev_dbg(ibmr->device,
				  "rereg_mr: write access to read-only pages\n");
			return ERR_PTR(-EOPNOTSUPP);
		}
	}
	spin_lock_irqsave(&mr->lock, irqflags);
	if (flags & IB_MR_REREG_PD)
		mr->pd = pd;
	if (flags & IB_MR_REREG_ACCESS)
		mr->access = access & SHCA_MR_USER_ACCESS;
	spin_unlock_irqrestore(&mr->lock, irqflags);
	return NULL;
}

struct ib_mr *shca_alloc_mr(struct ib_pd *pd, enum ib_mr_type mr_type,
			    u32 max_num_sg)
{
	struct shca_mr *mr;
	int ret;

	if (mr_type != IB_MR_TYPE_MEM_REG || !max_num_sg ||
	    max_num_sg > SHCA_MAX_FAST_REG_PAGES) {
		ibdev_dbg(pd->device, "alloc_mr: type %d, %u pages\n",
			  mr_type, max_num_sg);
		return ERR_PTR(-EINVAL);
	}
	/* Invalid (free) until registered. */
	mr = shca_mr_new(pd, SHCA_MR_FAST_REG, 0);
	if (!mr)
		return ERR_PTR(-ENOMEM);
	/* Here, not in map_mr_sg: that one may run in any context. */
	mr->frwr.pages = shca_fault() ? NULL :
		kcalloc(max_num_sg, sizeof(*mr->frwr.pages), GFP_KERNEL);
	if (!mr->frwr.pages) {
		ret = -ENOMEM;
		goto err_free_mr;
	}
	mr->frwr.max_pages = max_num_sg;

	ret = shca_mr_add(mr);
	if (ret)
		goto err_free_pages;
	return &mr->ibmr;

err_free_pages:
	kfree(mr->frwr.pages);
err_free_mr:
	kfree(mr);
	return ERR_PTR(ret);
}

/* ib_sg_to_pages() callback; any context. */
static int shca_mr_set_page(struct ib_mr *ibmr, u64 addr)
{
	struct shca_mr_frwr *frwr = &to_shca_mr(ibmr)->frwr;

	if (unlikely(frwr->map.npages == frwr->max_pages))
		return -ENOMEM;
	frwr->pages[frwr->map.npages++] = addr;
	return 0;
}

/*
 * Context: any, hard-irq included: fills the page list alloc_mr
 * allocated, and neither sleeps nor allocates.  The consumer owns the
 * mapping of an invalid MR, so there is nothing to lock against here.
 *
 * Pages smaller than PAGE_SIZE are refused, as page_size_cap says: the
 * data path takes the bytes from an iova to the end of its kernel page as
 * contiguous (shca_mr_iova_page()), which a list of sub-page entries does
 * not make them.  -EINVAL is what ib_map_mr_sg() callers treat as "this
 * device cannot map that" (they fail the I/O rather than retry).
 */
int shca_map_mr_sg(struct ib_mr *ibmr, struct scatterlist *sg, int sg_nents,
		   unsigned int *sg_offset)
{
	struct shca_mr *mr = to_shca_mr(ibmr);
	struct shca_mr_frwr *frwr = &mr->frwr;
	int n;

	if (mr->kind != SHCA_MR_FAST_REG || !is_power_of_2(ibmr->page_size) ||
	    ibmr->page_size < PAGE_SIZE) {
		ibdev_dbg_ratelimited(ibmr->device,
				      "map_mr_sg: MR kind %d, page size %u\n",
				      mr->kind, ibmr->page_size);
		return -EINVAL;
	}
	frwr->map.npages = 0;
	n = ib_sg_to_pages(ibmr, sg, sg_nents, sg_offset, shca_mr_set_page);
	frwr->map.shift = ilog2(ibmr->page_size);
	/* Taken now: a ULP may rewrite ibmr->iova before registering. */
	frwr->map.offset = ibmr->iova & (ibmr->page_size - 1);
	return n;
}

/* Context: process; sleeps until the data path put its references. */
int shca_dereg_mr(struct ib_mr *ibmr, struct ib_udata *udata)
{
	struct shca_mr *mr = to_shca_mr(ibmr);
	int ret;

	ret = shca_cmd_run(mr->pd->device, shca_mr_remove_cmd, mr, true, NULL);
	if (ret)
		return ret;
	shca_mr_put(mr);
	wait_for_completion(&mr->released);

	/* The undo of creation, whichever kind it was. */
	if (mr->kind == SHCA_MR_FAST_REG) {
		kfree(mr->frwr.pages);
	} else if (mr->kind == SHCA_MR_USER) {
		kvfree(mr->user.pages);
		ib_umem_release(mr->user.umem);
	} else if (mr->kind == SHCA_MR_ODP) {
		ib_umem_odp_release(mr->odp);
		shca_dev_odp_put(to_shca_dev(mr->pd->device));
	}
	kfree_rcu(mr, rcu);
	return 0;
}

/*
 * ibv_advise_mr(): the ranges of on-demand paging MRs faulted in, for
 * reading or for writing, or those of their pages that are present
 * mapped without a fault.  Done before the verb returns, whether or not
 * IB_UVERBS_ADVISE_MR_FLAG_FLUSH asks for that.
 *
 * Context: process context (ib_uverbs); sleeps.
 */
int shca_advise_mr(struct ib_pd *pd, enum ib_uverbs_advise_mr_advice advice,
		   u32 flags, struct ib_sge *sg_list, u32 num_sge,
		   struct uverbs_attr_bundle *attrs)
{
	bool write = advice == IB_UVERBS_ADVISE_MR_ADVICE_PREFETCH_WRITE;
	bool fault = advice != IB_UVERBS_ADVISE_MR_ADVICE_PREFETCH_NO_FAULT;
	struct shca_dev *dev = to_shca_dev(pd->device);
	struct shca_mr *mr;
	int ret = 0;
	u32 i;

	switch (advice) {
	case IB_UVERBS_ADVISE_MR_ADVICE_PREFETCH:
	case IB_UVERBS_ADVISE_MR_ADVICE_PREFETCH_WRITE:
	case IB_UVERBS_ADVISE_MR_ADVICE_PREFETCH_NO_FAULT:
		break;
	default:
		ibdev_dbg(pd->device, "advise_mr: advice %d\n", advice);
		return -EOPNOTSUPP;
	}
	for (i = 0; i < num_sge && !ret; i++) {
		mr = shca_mr_get(dev, sg_list[i].lkey);
		if (!mr || mr->kind != SHCA_MR_ODP ||
		    shca_mr_check(mr, sg_list[i].lkey, pd, sg_list[i].addr,
				  sg_list[i].length,
				  write ? IB_ACCESS_LOCAL_WRITE : 0))
			ret = -EINVAL;
		else
			ret = shca_mr_odp_prefetch(mr, sg_list[i].addr,
						   sg_list[i].length, write,
						   fault);
		if (ret)
			ibdev_dbg(pd->device, "advise_mr: key %#x, %u bytes at %#llx: %d\n",
				  sg_list[i].lkey, sg_list[i].length,
				  sg_list[i].addr, ret);
		if (mr)
			shca_mr_put(mr);
	}
	return ret;
}

/*
 * Memory windows.  A window is a struct shca_mr of kind SHCA_MR_WINDOW,
 * keyed and published like an MR (and counted against the same limit);
 * ib_core allocates the struct ib_mw around it and frees it after
 * dealloc_mw.  It starts unbound: its rkey names nothing until a bind.
 */
int shca_alloc_mw(struct ib_mw *ibmw, struct ib_udata *udata)
{
	struct shca_mw *mw = container_of(ibmw, struct shca_mw, ibmw);
	struct shca_mr *win;
	int ret;

	if (ibmw->type != IB_MW_TYPE_1 && ibmw->type != IB_MW_TYPE_2) {
		ibdev_dbg(ibmw->device, "alloc_mw: type %d\n", ibmw->type);
		return -EINVAL;
	}
	ret = shca_udata_no_request(ibmw->device, udata, "alloc_mw");
	if (ret)
		return ret;
	win = shca_mr_new(ibmw->pd, SHCA_MR_WINDOW, 0);
	if (!win)
		return -ENOMEM;
	win->win.type = ibmw->type;
	ret = shca_mr_add(win);
	if (ret) {
		kfree(win);
		return ret;
	}
	mw->win = win;
	ibmw->rkey = win->key;
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(shca_alloc_mw);

/* Context: process; sleeps until the data path put its references. */
int shca_dealloc_mw(struct ib_mw *ibmw)
{
	struct shca_mr *win = container_of(ibmw, struct shca_mw, ibmw)->win;
	int ret;

	ret = shca_cmd_run(ibmw->device, shca_mr_remove_cmd, win, true, NULL);
	if (ret)
		return ret;
	shca_mr_put(win);
	wait_for_completion(&win->released);
	/* No bind can run any more: it would have found the window. */
	shca_mw_unbind(win);
	kfree_rcu(win, rcu);
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(shca_dealloc_mw);

/*
 * Unlike a REG_MR work request, whose poster already updated the keys,
 * the asynchronous registration leaves ibmr's lkey and rkey naming it.
 */
static int shca_mr_async_reg_cmd(struct shca_cmd *cmd)
{
	struct shca_cmd_reg_mr *args = &cmd->args.reg_mr;
	struct shca_mr *mr = cmd->obj;
	int ret;

	ret = shca_mr_fast_reg(mr, args->key, args->access);
	if (ret)
		return ret;
	ib_update_fast_reg_key(&mr->ibmr, args->key & 0xff);
	return 0;
}

/**
 * softhca_async_reg_mr() - register a fast-registration MR from atomic context
 * @mr: an MR from ib_alloc_mr(IB_MR_TYPE_MEM_REG), invalid, whose page
 *	list ib_map_mr_sg() filled (that may be done in any context)
 * @key: the new key: @mr's index (the upper 24 bits of its lkey) and a
 *	variant byte, as ib_inc_rkey() makes it
 * @access: IB_ACCESS_* to grant
 * @done: called with 0 once @mr is valid under @key, with @mr->lkey and
 *	@mr->rkey set to @key; or with -EINVAL (see shca_mr_fast_reg()); or
 *	NULL
 * @ctx: @done's argument
 *
 * What a REG_MR work request does, without a QP.  See <rdma/softhca.h> for
 * context, ordering and lifetime rules.
 * Return: 0 when queued; -EBUSY, -EIO or -EOPNOTSUPP (then @done is not
 * called).
 */
int softhca_async_reg_mr(struct ib_mr *mr, u32 key, int access,
			 softhca_done_t done, void *ctx)
{
	struct shca_cmd *cmd;

	cmd = shca_cmd_slot_get(mr->device, shca_mr_async_reg_cmd, done, ctx);
	if (IS_ERR(cmd))
		return PTR_ERR(cmd);
	cmd->obj = to_shca_mr(mr);
	cmd->args.reg_mr.key = key;
	cmd->args.reg_mr.access = access;
	shca_cmd_slot_submit(cmd);
	return 0;
}
EXPORT_SYMBOL(softhca_async_reg_mr);

static int shca_mr_async_dereg_cmd(struct shca_cmd *cmd)
{
	return ib_dereg_mr(cmd->obj);
}

/**
 * softhca_async_dereg_mr() - deregister an MR from atomic context
 * @mr: the MR, of any kind
 * @done: called with the result once @mr is freed, or NULL
 * @ctx: @done's argument
 *
 * Queues ib_dereg_mr(@mr), which first waits for the data path to finish
 * with the MR.  See <rdma/softhca.h> for context, ordering and lifetime
 * rules.
 * Return: 0 when queued; -EBUSY, -EIO or -EOPNOTSUPP (then @done is not
 * called and @mr still exists).
 */
int softhca_async_dereg_mr(struct ib_mr *mr, softhca_done_t done, void *ctx)
{
	return shca_cmd_queue(mr->device, shca_mr_async_dereg_cmd, mr, done,
			      ctx);
}
EXPORT_SYMBOL(softhca_async_dereg_mr);
