/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Memory regions and memory windows: the verbs that create and destroy
 * them, and what the data path needs to use one: find it by key, check a
 * request against it, find the page behind an iova, and (for REG_MR,
 * BIND_MW, LOCAL_INV and SEND_WITH_INV work requests) register, bind and
 * invalidate it.
 *
 * A key is (index << SHCA_MR_KEY_SHIFT) | variant: the index names the MR
 * or window in the device's xarray for as long as it exists, the variant
 * byte is random at creation and then chosen by the consumer at each fast
 * registration (ib_update_fast_reg_key()) or bind (ibv_inc_rkey()).  An
 * MR's lkey and rkey are equal; a window has only an rkey.
 */
#ifndef SHCA_MR_H
#define SHCA_MR_H

#include <linux/kref.h>
#include <linux/spinlock.h>
#include <rdma/ib_umem.h>
#include <rdma/ib_umem_odp.h>
#include <rdma/ib_verbs.h>

#include "compat.h"

struct shca_dev;

#define SHCA_MR_KEY_SHIFT 8
/* Index 0 is never used: keys 0..255 hold SHCA_LOCAL_DMA_LKEY. */
#define SHCA_MR_MIN_INDEX 1
#define SHCA_MR_MAX_INDEX (U32_MAX >> SHCA_MR_KEY_SHIFT)

/*
 * The access flags an MR records and the data path enforces; FLUSH's
 * global visibility since 6.2 (compat.h).
 */
#define SHCA_MR_ACCESS (IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE | \
			IB_ACCESS_REMOTE_READ | IB_ACCESS_REMOTE_ATOMIC | \
			SHCA_ACCESS_FLUSH_GLOBAL)

/* A user MR's: windows may be bound to it. */
#define SHCA_MR_USER_ACCESS (SHCA_MR_ACCESS | IB_ACCESS_MW_BIND)

/* The access a window may grant. */
#define SHCA_MW_ACCESS (IB_ACCESS_REMOTE_WRITE | IB_ACCESS_REMOTE_READ | \
			IB_ACCESS_REMOTE_ATOMIC)

enum shca_mr_kind {
	/* iova is a kernel virtual address, over the whole address space */
	SHCA_MR_DMA,
	/* pinned user memory, registered once by reg_user_mr */
	SHCA_MR_USER,
	/* a page list, (re-)registered by REG_MR, invalid in between */
	SHCA_MR_FAST_REG,
	/* a memory window: remote access to part of a user MR, once bound */
	SHCA_MR_WINDOW,
	/* user memory the data path faults in as it reaches it (mem.c) */
	SHCA_MR_ODP,
};

/* How a fast-registration MR's page list covers its iova range. */
struct shca_mr_layout {
	u32 npages;		/* page list entries in use */
	u32 offset;		/* offset of iova in the first page */
	u8 shift;		/* log2 of the page size */
};

/* Pinned user memory: one struct page per PAGE_SIZE of the umem. */
struct shca_mr_user {
	struct ib_umem *umem;
	struct page **pages;
	size_t npages;
};

/*
 * A fast-registration MR's page list: kernel virtual addresses (softhca
 * does virtual DMA, so ib_dma_map_*() yields those), one per page of
 * map.shift bytes.  map_mr_sg fills it while the MR is invalid; a
 * registration snapshots map into struct shca_mr's layout.
 */
struct shca_mr_frwr {
	u64 *pages;
	u32 max_pages;
	struct shca_mr_layout map;
};

/*
 * A memory window's binding, under the window's lock: the user MR it
 * opens onto (a reference held while bound, and counted in the MR's
 * @windows), and for type 2 the QP it was bound through, the only one
 * its rkey is good on.  The range and access are struct shca_mr's.
 */
struct shca_mr_window {
	struct shca_mr *parent;
	u32 qpn;
	u8 type;
};

/**
 * struct shca_mr - a memory region
 * @ibmr: ib_core's part; ib_core sets its pd, type and so on only after
 *	the verb returned, and owns lkey/rkey of a fast-registration MR
 * @pd: the PD, set before the MR is published
 * @kind: DMA, user or fast-registration
 * @index: the key's index, fixed for the MR's life
 * @ref: one reference while the MR is in the xarray, one per data-path user
 * @released: completed when the last reference is put
 * @rcu: the struct is freed after a grace period: shca_mr_get() may still
 *	be looking at it
 * @lock: protects the registration below; any context, irqsave
 * @key: the current full key; also read lock-free by shca_mr_get()
 * @access: IB_ACCESS_* granted, within SHCA_MR_ACCESS
 * @valid: registered (a fast-registration MR starts invalid)
 * @iova: first byte
 * @length: bytes from @iova
 * @layout: the registered page list geometry (fast-registration MRs)
 * @windows: windows bound to this MR (user MRs), under @lock
 * @dying: deregistration has begun: no window may bind, under @lock
 * @user: user MRs' pinned pages
 * @frwr: fast-registration MRs' page list
 * @win: a window's binding
 * @odp: an on-demand paging MR's umem: its pages, as the data path
 *	faulted them in and the mm has not taken them back
 *
 * The registration fields are written under @lock with WRITE_ONCE(), so
 * that shca_mr_iova_page() may read them without it.
 */
struct shca_mr {
	struct ib_mr ibmr;
	struct ib_pd *pd;
	enum shca_mr_kind kind;
	u32 index;
	struct kref ref;
	struct completion released;
	struct rcu_head rcu;

	spinlock_t lock;		/* protects the registration */
	u32 key;
	int access;
	bool valid;
	u64 iova;
	u64 length;
	struct shca_mr_layout layout;
	u32 windows;
	bool dying;

	union {
		struct shca_mr_user user;
		struct shca_mr_frwr frwr;
		struct shca_mr_window win;
		struct ib_umem_odp *odp;
	};
};

/*
 * ib_core allocates and frees the ib_mw; the window itself is a struct
 * shca_mr of its own, freed after an RCU grace period like every other,
 * since lookups may still be looking at it.
 */
struct shca_mw {
	struct ib_mw ibmw;
	struct shca_mr *win;
};

static inline struct shca_mr *to_shca_mr(struct ib_mr *ibmr)
{
	return container_of(ibmr, struct shca_mr, ibmr);
}

struct ib_mr *shca_get_dma_mr(struct ib_pd *pd, int access);
struct ib_mr *shca_reg_user_mr(struct ib_pd *pd, u64 start, u64 length,
			       u64 virt_addr, int access,
			       struct ib_udata *udata);
struct ib_mr *shca_rereg_user_mr(struct ib_mr *ibmr, int flags, u64 start,
				 u64 length, u64 virt_addr, int access,
				 struct ib_pd *pd, struct ib_udata *udata);
struct ib_mr *shca_alloc_mr(struct ib_pd *pd, enum ib_mr_type mr_type,
			    u32 max_num_sg);
int shca_map_mr_sg(struct ib_mr *ibmr, struct scatterlist *sg, int sg_nents,
		   unsigned int *sg_offset);
int shca_dereg_mr(struct ib_mr *ibmr, struct ib_udata *udata);
int shca_advise_mr(struct ib_pd *pd, enum ib_uverbs_advise_mr_advice advice,
		   u32 flags, struct ib_sge *sg_list, u32 num_sge,
		   struct uverbs_attr_bundle *attrs);
int shca_alloc_mw(struct ib_mw *ibmw, struct ib_udata *udata);
int shca_dealloc_mw(struct ib_mw *ibmw);

/* For the data path (mem.c); any context. */
int shca_mr_access_check(struct ib_device *ibdev, int access,
			 const char *verb);
struct shca_mr *shca_mr_get(struct shca_dev *dev, u32 key);
void shca_mr_put(struct shca_mr *mr);
int shca_mr_check(struct shca_mr *mr, u32 key, struct ib_pd *pd, u64 iova,
		  u64 len, int access);
struct page *shca_mr_iova_page(struct shca_mr *mr, u64 iova,
			       unsigned int *offset);
int shca_mr_fast_reg(struct shca_mr *mr, u32 key, int access);
int shca_mr_invalidate(struct shca_mr *mr, u32 key, u32 qpn);
int shca_mw_bind(struct shca_mr *win, u32 key, struct shca_mr *mr,
		 u32 qpn, u64 iova, u64 length, int access);
void shca_mw_unbind(struct shca_mr *win);
struct shca_mr *shca_mw_enter(struct shca_mr *win, u32 key, u32 qpn,
			      struct ib_pd *pd, u64 iova, u64 len, int access);
struct shca_mr *shca_mr_get_index(struct shca_dev *dev, u32 key);
struct page *shca_kva_page(u64 addr, unsigned int *offset);

/* On-demand paging (mem.c); process context, sleeps. */
extern const struct mmu_interval_notifier_ops shca_odp_ops;
struct page *shca_mr_odp_page(struct shca_mr *mr, u64 iova,
			      unsigned int *offset, bool write);
int shca_mr_odp_prefetch(struct shca_mr *mr, u64 iova, u64 len, bool write,
			 bool fault);

#endif /* SHCA_MR_H */
