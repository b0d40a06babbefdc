// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * softhca_mr: memory regions get unguessable keys that lookups match in
 * full, record the access they grant, map a page list in any context,
 * register and deregister through the asynchronous API from any context,
 * wait for the data path's references on deregistration, and are counted
 * against the advertised limit without leaking; memory windows' rules.
 *
 * reg_user_mr is not exercised here: ib_umem_get() pins pages of
 * current->mm, and a KUnit test runs in a kernel thread, which has none.
 * User MRs are left to the integration suite (ibv_reg_mr in the guest).
 */

#include <linux/delay.h>
#include <linux/scatterlist.h>
#include <linux/slab.h>
#include <linux/workqueue.h>
#include <rdma/softhca.h>

#include "context.h"
#include "dev.h"
#include "fixture.h"
#include "mem.h"
#include "mr.h"

SHCA_SUITE_FIXTURE(shca_mr_fx, "softhca_ktmr");

/* A kmalloc'd region over several pages, starting inside one. */
#define SHCA_TEST_BUF_SIZE (4 * PAGE_SIZE)
#define SHCA_TEST_REGION_OFFSET 100
#define SHCA_TEST_LEN (3 * PAGE_SIZE)
#define SHCA_TEST_MAX_SG 8
#define SHCA_TEST_TIMEOUT (20 * HZ)

struct shca_mr_fixture {
	struct shca_dev *dev;
	struct ib_pd *pd;
	struct ib_mr *mr;
	void *buf;
	void *region;
	struct scatterlist sg[2];
	int mapped;		/* ib_map_mr_sg()'s result */
	u32 key;		/* for the asynchronous registration */
	int access;
	int status;		/* the asynchronous call's own result */
	int done_status;	/* the last callback's */
	atomic_t calls;
	struct completion done;
};

static struct shca_mr_fixture *shca_mr_setup(struct kunit *test)
{
	struct shca_fixture *fx = test->priv;
	struct shca_mr_fixture *mf;

	mf = kunit_kzalloc(test, sizeof(*mf), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, mf);
	mf->dev = to_shca_dev(fx->ibdev);
	init_completion(&mf->done);
	mf->pd = ib_alloc_pd(fx->ibdev, 0);
	KUNIT_ASSERT_FALSE(test, IS_ERR(mf->pd));
	mf->mr = ib_alloc_mr(mf->pd, IB_MR_TYPE_MEM_REG, SHCA_TEST_MAX_SG);
	KUNIT_ASSERT_FALSE(test, IS_ERR(mf->mr));
	return mf;
}

/*
 * Two sg entries over one region: the first runs from inside a page to
 * its end, the second from there on, mapped the way a ULP maps them.
 */
static void shca_mr_setup_sg(struct kunit *test, struct shca_mr_fixture *mf)
{
	unsigned int first;

	mf->buf = kmalloc(SHCA_TEST_BUF_SIZE, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, mf->buf);
	mf->region = mf->buf + SHCA_TEST_REGION_OFFSET;
	first = PAGE_SIZE - offset_in_page(mf->region);

	sg_init_table(mf->sg, ARRAY_SIZE(mf->sg));
	sg_set_buf(&mf->sg[0], mf->region, first);
	sg_set_buf(&mf->sg[1], mf->region + first, SHCA_TEST_LEN - first);
	KUNIT_ASSERT_EQ(test, ib_dma_map_sg(mf->pd->device, mf->sg,
					    ARRAY_SIZE(mf->sg),
					    DMA_BIDIRECTIONAL),
			(int)ARRAY_SIZE(mf->sg));
}

static void shca_mr_teardown(struct shca_mr_fixture *mf)
{
	if (mf->buf)
		ib_dma_unmap_sg(mf->pd->device, mf->sg, ARRAY_SIZE(mf->sg),
				DMA_BIDIRECTIONAL);
	kfree(mf->buf);
	if (mf->mr)
		ib_dereg_mr(mf->mr);
	ib_dealloc_pd(mf->pd);
}

static void shca_expect_no_mr(struct kunit *test, struct shca_dev *dev)
{
	KUNIT_EXPECT_EQ(test, atomic_read(&dev->res[SHCA_RES_MR]), 0);
	KUNIT_EXPECT_TRUE(test, xa_empty(&dev->mrs));
}

/* The unsafe global rkey is a DMA MR granting remote read and write. */
static void shca_mr_dma_global_rkey(struct kunit *test)
{
	struct shca_fixture *fx = test->priv;
	struct shca_dev *dev = to_shca_dev(fx->ibdev);
	unsigned int offset;
	struct shca_mr *mr;
	struct ib_pd *pd;
	void *buf;
	u64 here;

	/* In the linear map, as the buffers kernel ULPs register. */
	buf = kunit_kzalloc(test, 64, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, buf);
	here = (uintptr_t)buf;
	pd = ib_alloc_pd(fx->ibdev, IB_PD_UNSAFE_GLOBAL_RKEY);
	KUNIT_ASSERT_FALSE(test, IS_ERR(pd));
	KUNIT_ASSERT_NOT_NULL(test, pd->__internal_mr);
	mr = to_shca_mr(pd->__internal_mr);

	KUNIT_EXPECT_EQ(test, pd->local_dma_lkey, SHCA_LOCAL_DMA_LKEY);
	KUNIT_EXPECT_EQ(test, pd->unsafe_global_rkey, mr->ibmr.rkey);
	KUNIT_EXPECT_EQ(test, mr->ibmr.lkey, mr->ibmr.rkey);
	KUNIT_EXPECT_EQ(test, mr->key, mr->ibmr.rkey);
	KUNIT_EXPECT_GE(test, mr->key >> SHCA_MR_KEY_SHIFT, 1U);
	KUNIT_EXPECT_EQ(test, mr->kind, SHCA_MR_DMA);
	KUNIT_EXPECT_EQ(test, mr->access,
			IB_ACCESS_REMOTE_READ | IB_ACCESS_REMOTE_WRITE);
	KUNIT_EXPECT_EQ(test, atomic_read(&dev->res[SHCA_RES_MR]), 1);

	KUNIT_EXPECT_PTR_EQ(test, shca_mr_get(dev, mr->key), mr);
	shca_mr_put(mr);
	KUNIT_EXPECT_EQ(test, shca_mr_check(mr, mr->key, pd, here, 8,
					    IB_ACCESS_REMOTE_READ), 0);
	KUNIT_EXPECT_EQ(test, shca_mr_check(mr, mr->key, pd, here, 8,
					    IB_ACCESS_REMOTE_ATOMIC), -EACCES);
	KUNIT_EXPECT_PTR_EQ(test, shca_mr_iova_page(mr, here, &offset),
			    virt_to_page(buf));
	KUNIT_EXPECT_EQ(test, offset, (unsigned int)offset_in_page(buf));

	ib_dealloc_pd(pd);
	shca_expect_no_mr(test, dev);
}

static void shca_mr_map_fn(void *arg)
{
	struct shca_mr_fixture *mf = arg;

	mf->mapped = ib_map_mr_sg(mf->mr, mf->sg, ARRAY_SIZE(mf->sg), NULL,
				  PAGE_SIZE);
}

static void shca_expect_mapped(struct kunit *test, struct shca_mr_fixture *mf)
{
	struct shca_mr *mr = to_shca_mr(mf->mr);
	uintptr_t start = (uintptr_t)mf->region;
	uintptr_t first = ALIGN_DOWN(start, PAGE_SIZE);
	u32 npages = (ALIGN(start + SHCA_TEST_LEN, PAGE_SIZE) - first) >>
		     PAGE_SHIFT;
	u32 i;

	KUNIT_EXPECT_EQ(test, mf->mapped, (int)ARRAY_SIZE(mf->sg));
	KUNIT_EXPECT_EQ(test, mf->mr->iova, (u64)start);
	KUNIT_EXPECT_EQ(test, mf->mr->length, (u64)SHCA_TEST_LEN);
	KUNIT_ASSERT_EQ(test, mr->frwr.map.npages, npages);
	KUNIT_EXPECT_EQ(test, mr->frwr.map.offset, (u32)(start & ~PAGE_MASK));
	KUNIT_EXPECT_EQ(test, mr->frwr.map.shift, (u8)PAGE_SHIFT);
	for (i = 0; i < npages; i++)
		KUNIT_EXPECT_EQ(test, mr->frwr.pages[i],
				(u64)(first + i * PAGE_SIZE));
}

/* After registration the data path finds each byte's page. */
static void shca_expect_pages(struct kunit *test, struct shca_mr_fixture *mf)
{
	static const u64 probes[] = {
		0, 1, PAGE_SIZE - 1, PAGE_SIZE, 2 * PAGE_SIZE + 7,
		SHCA_TEST_LEN - 1,
	};
	struct shca_mr *mr = to_shca_mr(mf->mr);
	unsigned int offset;
	int i;

	for (i = 0; i < ARRAY_SIZE(probes); i++) {
		void *want = mf->region + probes[i];

		KUNIT_EXPECT_PTR_EQ(test,
				    shca_mr_iova_page(mr, mf->mr->iova + probes[i],
						      &offset),
				    virt_to_page(want));
		KUNIT_EXPECT_EQ(test, offset,
				(unsigned int)offset_in_page(want));
	}
	KUNIT_EXPECT_NULL(test, shca_mr_iova_page(mr, mf->mr->iova - 1,
						  &offset));
	KUNIT_EXPECT_NULL(test, shca_mr_iova_page(mr, mf->mr->iova +
						  SHCA_TEST_LEN, &offset));
}

/* map_mr_sg fills the page list in any context; registration uses it. */
static void shca_mr_map_in_atomic(struct kunit *test)
{
	const enum shca_context *ctx = test->param_value;
	struct shca_mr_fixture *mf = shca_mr_setup(test);
	struct shca_mr *mr = to_shca_mr(mf->mr);

	shca_mr_setup_sg(test, mf);
	shca_run_in(test, *ctx, shca_mr_map_fn, mf);
	shca_expect_mapped(test, mf);

	KUNIT_EXPECT_FALSE(test, mr->valid);
	KUNIT_ASSERT_EQ(test, shca_mr_fast_reg(mr, mf->mr->rkey,
					       IB_ACCESS_LOCAL_WRITE), 0);
	KUNIT_EXPECT_TRUE(test, mr->valid);
	KUNIT_EXPECT_EQ(test, mr->iova, mf->mr->iova);
	KUNIT_EXPECT_EQ(test, mr->length, (u64)SHCA_TEST_LEN);
	shca_expect_pages(test, mf);
	shca_mr_teardown(mf);
}

/*
 * Pages smaller than the kernel's are refused (page_size_cap): the data
 * path would take the bytes after one 512-byte entry, to the end of its
 * kernel page, for the next entry's.  The MR maps normally afterwards.
 */
static void shca_mr_map_small_pages(struct kunit *test)
{
	struct shca_mr_fixture *mf = shca_mr_setup(test);
	struct shca_mr *mr = to_shca_mr(mf->mr);
	unsigned int size;

	KUNIT_EXPECT_FALSE(test, mf->dev->ibdev.attrs.page_size_cap &
				 (PAGE_SIZE - 1));
	shca_mr_setup_sg(test, mf);
	for (size = 512; size < PAGE_SIZE; size *= 2) {
		KUNIT_EXPECT_EQ(test, ib_map_mr_sg(mf->mr, mf->sg,
						   ARRAY_SIZE(mf->sg), NULL,
						   size), -EINVAL);
		KUNIT_EXPECT_EQ(test, mr->frwr.map.npages, 0U);
	}
	shca_mr_map_fn(mf);
	shca_expect_mapped(test, mf);
	KUNIT_ASSERT_EQ(test, shca_mr_fast_reg(mr, mf->mr->rkey,
					       IB_ACCESS_LOCAL_WRITE), 0);
	shca_expect_pages(test, mf);
	shca_mr_teardown(mf);
}

KUNIT_ARRAY_PARAM(shca_mr_ctx, shca_contexts, shca_context_desc);

/*
 * Keys: never 0 (the local DMA lkey), lkey == rkey, all different, and
 * the variant byte random, so that a key does not follow from the last.
 */
static void shca_mr_keys_unguessable(struct kunit *test)
{
	struct shca_fixture *fx = test->priv;
	struct ib_mr *mrs[64];
	bool variants_differ = false, steps_differ = false;
	struct ib_pd *pd;
	int i, j;

	pd = ib_alloc_pd(fx->ibdev, 0);
	KUNIT_ASSERT_FALSE(test, IS_ERR(pd));
	for (i = 0; i < ARRAY_SIZE(mrs); i++) {
		mrs[i] = ib_alloc_mr(pd, IB_MR_TYPE_MEM_REG, 1);
		KUNIT_ASSERT_FALSE(test, IS_ERR(mrs[i]));
	}
	for (i = 0; i < ARRAY_SIZE(mrs); i++) {
		KUNIT_EXPECT_NE(test, mrs[i]->rkey, 0U);
		KUNIT_EXPECT_NE(test, mrs[i]->rkey >> SHCA_MR_KEY_SHIFT, 0U);
		KUNIT_EXPECT_EQ(test, mrs[i]->lkey, mrs[i]->rkey);
		for (j = 0; j < i; j++)
			KUNIT_EXPECT_NE(test, mrs[i]->rkey, mrs[j]->rkey);
		if (i && (mrs[i]->rkey & 0xff) != (mrs[0]->rkey & 0xff))
			variants_differ = true;
		if (i > 1 && mrs[i]->rkey - mrs[i - 1]->rkey !=
			     mrs[1]->rkey - mrs[0]->rkey)
			steps_differ = true;
	}
	KUNIT_EXPECT_TRUE(test, variants_differ);
	KUNIT_EXPECT_TRUE(test, steps_differ);
	for (i = 0; i < ARRAY_SIZE(mrs); i++)
		KUNIT_EXPECT_EQ(test, ib_dereg_mr(mrs[i]), 0);
	ib_dealloc_pd(pd);
	shca_expect_no_mr(test, to_shca_dev(fx->ibdev));
}

/* What the device cannot do fails with -EINVAL and leaves nothing. */
static void shca_mr_refuses_bad_args(struct kunit *test)
{
	struct shca_fixture *fx = test->priv;
	struct ib_mr *mr;
	struct ib_pd *pd;

	pd = ib_alloc_pd(fx->ibdev, 0);
	KUNIT_ASSERT_FALSE(test, IS_ERR(pd));
	KUNIT_EXPECT_EQ(test, fx->ibdev->attrs.max_fast_reg_page_list_len,
			(u32)SHCA_MAX_FAST_REG_PAGES);

	mr = ib_alloc_mr(pd, IB_MR_TYPE_MEM_REG, SHCA_MAX_FAST_REG_PAGES + 1);
	KUNIT_EXPECT_EQ(test, PTR_ERR_OR_ZERO(mr), -EINVAL);
	mr = ib_alloc_mr(pd, IB_MR_TYPE_SG_GAPS, 1);
	KUNIT_EXPECT_EQ(test, PTR_ERR_OR_ZERO(mr), -EINVAL);
	mr = ib_alloc_mr(pd, IB_MR_TYPE_MEM_REG, 0);
	KUNIT_EXPECT_EQ(test, PTR_ERR_OR_ZERO(mr), -EINVAL);
	mr = fx->ibdev->ops.get_dma_mr(pd, IB_ZERO_BASED);
	KUNIT_EXPECT_EQ(test, PTR_ERR_OR_ZERO(mr), -EINVAL);
	shca_expect_no_mr(test, to_shca_dev(fx->ibdev));

	mr = ib_alloc_mr(pd, IB_MR_TYPE_MEM_REG, SHCA_MAX_FAST_REG_PAGES);
	KUNIT_EXPECT_FALSE(test, IS_ERR(mr));
	if (!IS_ERR(mr))
		ib_dereg_mr(mr);
	ib_dealloc_pd(pd);
	shca_expect_no_mr(test, to_shca_dev(fx->ibdev));
}

/* A lookup must name the MR's current key, variant byte included. */
static void shca_mr_lookup_by_full_key(struct kunit *test)
{
	struct shca_mr_fixture *mf = shca_mr_setup(test);
	struct shca_mr *mr = to_shca_mr(mf->mr);
	u32 key = mf->mr->rkey, next = ib_inc_rkey(key);

	KUNIT_EXPECT_PTR_EQ(test, shca_mr_get(mf->dev, key), mr);
	shca_mr_put(mr);
	KUNIT_EXPECT_NULL(test, shca_mr_get(mf->dev, next));
	KUNIT_EXPECT_NULL(test, shca_mr_get(mf->dev, key & 0xff));
	KUNIT_EXPECT_NULL(test, shca_mr_get(mf->dev,
					    key + BIT(SHCA_MR_KEY_SHIFT)));

	/* Registered under the next variant, only that one finds it. */
	shca_mr_setup_sg(test, mf);
	shca_mr_map_fn(mf);
	KUNIT_ASSERT_EQ(test, shca_mr_fast_reg(mr, next, 0), 0);
	KUNIT_EXPECT_NULL(test, shca_mr_get(mf->dev, key));
	KUNIT_EXPECT_PTR_EQ(test, shca_mr_get(mf->dev, next), mr);
	shca_mr_put(mr);
	shca_mr_teardown(mf);
}

/* The data path's check: state, key, PD, access and range together. */
static void shca_mr_check_rules(struct kunit *test)
{
	struct shca_mr_fixture *mf = shca_mr_setup(test);
	struct shca_mr *mr = to_shca_mr(mf->mr);
	const int access = IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_READ;
	u32 key = mf->mr->rkey;
	struct ib_pd *other;
	u64 iova;

	shca_mr_setup_sg(test, mf);
	shca_mr_map_fn(mf);
	iova = mf->mr->iova;
	KUNIT_EXPECT_EQ(test, shca_mr_check(mr, key, mf->pd, iova, 1, 0),
			-EACCES);
	KUNIT_EXPECT_EQ(test, shca_mr_fast_reg(mr, key, IB_ACCESS_MW_BIND),
			-EINVAL);
	KUNIT_ASSERT_EQ(test, shca_mr_fast_reg(mr, key, access), 0);
	KUNIT_EXPECT_EQ(test, shca_mr_fast_reg(mr, key, access), -EINVAL);
	KUNIT_EXPECT_EQ(test, mr->access, access);

	KUNIT_EXPECT_EQ(test, shca_mr_check(mr, key, mf->pd, iova,
					    SHCA_TEST_LEN, access), 0);
	KUNIT_EXPECT_EQ(test, shca_mr_check(mr, key, mf->pd, iova + 1,
					    SHCA_TEST_LEN - 1, 0), 0);
	KUNIT_EXPECT_EQ(test, shca_mr_check(mr, key, mf->pd, iova + 1,
					    SHCA_TEST_LEN, 0), -ERANGE);
	KUNIT_EXPECT_EQ(test, shca_mr_check(mr, key, mf->pd, iova - 1, 1, 0),
			-ERANGE);
	KUNIT_EXPECT_EQ(test, shca_mr_check(mr, key, mf->pd, iova + 8,
					    U64_MAX, 0), -ERANGE);
	KUNIT_EXPECT_EQ(test, shca_mr_check(mr, key, mf->pd, iova, 8,
					    IB_ACCESS_REMOTE_WRITE), -EACCES);
	KUNIT_EXPECT_EQ(test, shca_mr_check(mr, ib_inc_rkey(key), mf->pd,
					    iova, 8, 0), -EACCES);

	other = ib_alloc_pd(mf->pd->device, 0);
	KUNIT_ASSERT_FALSE(test, IS_ERR(other));
	KUNIT_EXPECT_EQ(test, shca_mr_check(mr, key, other, iova, 8, 0),
			-EACCES);
	ib_dealloc_pd(other);

	KUNIT_EXPECT_EQ(test, shca_mr_invalidate(mr, ib_inc_rkey(key), 0),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, shca_mr_invalidate(mr, key, 0), 0);
	KUNIT_EXPECT_EQ(test, shca_mr_check(mr, key, mf->pd, iova, 8, 0),
			-EACCES);
	KUNIT_EXPECT_EQ(test, shca_mr_fast_reg(mr, key +
					       BIT(SHCA_MR_KEY_SHIFT), 0),
			-EINVAL);
	shca_mr_teardown(mf);
}

/*
 * The requester's check of a send's SGEs (an empty one with no key, then
 * two of the MR) leaves the cursor at the first with bytes, holding one
 * reference on its MR, from which the copy reads the right bytes.  A
 * list with a refused key anywhere leaves no reference behind.
 */
static void shca_mr_sgl_check_keeps_first(struct kunit *test)
{
	struct shca_mr_fixture *mf = shca_mr_setup(test);
	struct shca_mr *mr = to_shca_mr(mf->mr);
	u32 key = mf->mr->rkey;
	struct softhca_sge sge[3];
	struct shca_sgl sgl, dst;
	unsigned int refs;
	u8 out[16];
	u64 iova;

	shca_mr_setup_sg(test, mf);
	shca_mr_map_fn(mf);
	KUNIT_ASSERT_EQ(test, shca_mr_fast_reg(mr, key, 0), 0);
	iova = mf->mr->iova;
	memset(mf->region, 0x11, 8);
	memset(mf->region + PAGE_SIZE, 0x22, 8);
	sge[0] = (struct softhca_sge){ .lkey = 0 };
	sge[1] = (struct softhca_sge){ .addr = iova, .length = 8, .lkey = key };
	sge[2] = (struct softhca_sge){ .addr = iova + PAGE_SIZE, .length = 8,
				       .lkey = key };
	refs = kref_read(&mr->ref);

	KUNIT_ASSERT_EQ(test, shca_sgl_init(&sgl, mf->dev, mf->pd, 0, false,
					    sge, ARRAY_SIZE(sge)), 0);
	KUNIT_EXPECT_EQ(test, shca_sgl_check(&sgl), 0);
	KUNIT_EXPECT_EQ(test, sgl.i, 1);
	KUNIT_EXPECT_PTR_EQ(test, sgl.mr, mr);
	KUNIT_EXPECT_EQ(test, kref_read(&mr->ref), refs + 1);
	shca_sgl_init_buf(&dst, out, sizeof(out));
	KUNIT_EXPECT_EQ(test, shca_sgl_copy(&dst, &sgl, sizeof(out)), 0);
	KUNIT_EXPECT_TRUE(test, !memchr_inv(out, 0x11, 8));
	KUNIT_EXPECT_TRUE(test, !memchr_inv(out + 8, 0x22, 8));
	shca_sgl_release(&sgl);
	KUNIT_EXPECT_EQ(test, kref_read(&mr->ref), refs);

	sge[2].lkey = ib_inc_rkey(key);
	KUNIT_ASSERT_EQ(test, shca_sgl_init(&sgl, mf->dev, mf->pd, 0, false,
					    sge, ARRAY_SIZE(sge)), 0);
	KUNIT_EXPECT_EQ(test, shca_sgl_check(&sgl), -EACCES);
	KUNIT_EXPECT_TRUE(test, sgl.bad);
	KUNIT_EXPECT_NULL(test, sgl.mr);
	KUNIT_EXPECT_EQ(test, kref_read(&mr->ref), refs);
	shca_mr_teardown(mf);
}

/* Holds a lookup reference until deregistration unpublished the MR. */
struct shca_mr_holder {
	struct delayed_work work;
	struct shca_dev *dev;
	struct shca_mr *mr;
	bool erased;		/* the MR left the xarray while held */
	bool put;
};

static void shca_mr_holder_put(struct work_struct *work)
{
	struct shca_mr_holder *h = container_of(to_delayed_work(work),
						struct shca_mr_holder, work);
	int tries;

	for (tries = 0; tries < 400; tries++) {
		if (!xa_load(&h->dev->mrs, h->mr->index))
			break;
		msleep(50);
	}
	WRITE_ONCE(h->erased, !xa_load(&h->dev->mrs, h->mr->index));
	/* Give a dereg that does not wait the time to return. */
	msleep(100);
	WRITE_ONCE(h->put, true);
	shca_mr_put(h->mr);
}

static void shca_mr_dereg_waits_for_refs(struct kunit *test)
{
	struct shca_mr_fixture *mf = shca_mr_setup(test);
	struct shca_mr_holder *h;

	h = kunit_kzalloc(test, sizeof(*h), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, h);
	h->dev = mf->dev;
	h->mr = shca_mr_get(mf->dev, mf->mr->rkey);
	KUNIT_ASSERT_NOT_NULL(test, h->mr);
	INIT_DELAYED_WORK(&h->work, shca_mr_holder_put);
	schedule_delayed_work(&h->work, msecs_to_jiffies(50));

	KUNIT_EXPECT_EQ(test, ib_dereg_mr(mf->mr), 0);
	mf->mr = NULL;
	KUNIT_EXPECT_TRUE(test, READ_ONCE(h->erased));
	KUNIT_EXPECT_TRUE(test, READ_ONCE(h->put));
	flush_delayed_work(&h->work);
	shca_mr_teardown(mf);
	shca_expect_no_mr(test, mf->dev);
}

static void shca_mr_done(void *ctx, int status)
{
	struct shca_mr_fixture *mf = ctx;

	mf->done_status = status;
	atomic_inc(&mf->calls);
	complete(&mf->done);
}

static void shca_mr_async_reg_fn(void *arg)
{
	struct shca_mr_fixture *mf = arg;

	mf->status = softhca_async_reg_mr(mf->mr, mf->key, mf->access,
					  shca_mr_done, mf);
}

static void shca_mr_async_dereg_fn(void *arg)
{
	struct shca_mr_fixture *mf = arg;

	mf->status = softhca_async_dereg_mr(mf->mr, shca_mr_done, mf);
}

/* Queue from @ctx, wait for the callback; returns its status. */
static int shca_mr_async(struct kunit *test, struct shca_mr_fixture *mf,
			 enum shca_context ctx, void (*fn)(void *arg))
{
	reinit_completion(&mf->done);
	mf->status = -1;
	mf->done_status = -1;
	shca_run_in(test, ctx, fn, mf);
	KUNIT_EXPECT_EQ(test, mf->status, 0);
	if (mf->status)
		return mf->status;
	KUNIT_EXPECT_TRUE(test, wait_for_completion_timeout(&mf->done,
							    SHCA_TEST_TIMEOUT));
	return mf->done_status;
}

static void shca_mr_async_in_atomic(struct kunit *test)
{
	const enum shca_context *ctx = test->param_value;
	struct shca_mr_fixture *mf = shca_mr_setup(test);
	struct shca_mr *mr = to_shca_mr(mf->mr);

	shca_mr_setup_sg(test, mf);
	shca_run_in(test, *ctx, shca_mr_map_fn, mf);
	mf->key = ib_inc_rkey(mf->mr->rkey);
	mf->access = IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE;

	KUNIT_ASSERT_EQ(test, shca_mr_async(test, mf, *ctx,
					    shca_mr_async_reg_fn), 0);
	KUNIT_EXPECT_TRUE(test, mr->valid);
	KUNIT_EXPECT_EQ(test, mr->key, mf->key);
	KUNIT_EXPECT_EQ(test, mr->access, mf->access);
	KUNIT_EXPECT_EQ(test, mf->mr->rkey, mf->key);
	KUNIT_EXPECT_EQ(test, mf->mr->lkey, mf->key);
	KUNIT_EXPECT_EQ(test, shca_mr_check(mr, mf->key, mf->pd, mf->mr->iova,
					    SHCA_TEST_LEN, mf->access), 0);

	KUNIT_ASSERT_EQ(test, shca_mr_async(test, mf, *ctx,
					    shca_mr_async_dereg_fn), 0);
	mf->mr = NULL;
	/* Each callback exactly once: nothing more runs after a flush. */
	flush_workqueue(mf->dev->cmdq.wq);
	KUNIT_EXPECT_EQ(test, atomic_read(&mf->calls), 2);
	shca_mr_teardown(mf);
	shca_expect_no_mr(test, mf->dev);
}

/* A key must keep the MR's index: the callback reports -EINVAL. */
static void shca_mr_async_reg_other_index(struct kunit *test)
{
	struct shca_mr_fixture *mf = shca_mr_setup(test);
	struct shca_mr *mr = to_shca_mr(mf->mr);
	u32 key = mf->mr->rkey;

	shca_mr_setup_sg(test, mf);
	shca_mr_map_fn(mf);
	mf->key = key + BIT(SHCA_MR_KEY_SHIFT);
	mf->access = IB_ACCESS_LOCAL_WRITE;
	KUNIT_EXPECT_EQ(test, shca_mr_async(test, mf, SHCA_CTX_IRQS_OFF,
					    shca_mr_async_reg_fn), -EINVAL);
	flush_workqueue(mf->dev->cmdq.wq);
	KUNIT_EXPECT_EQ(test, atomic_read(&mf->calls), 1);
	KUNIT_EXPECT_FALSE(test, mr->valid);
	KUNIT_EXPECT_EQ(test, mf->mr->rkey, key);
	shca_mr_teardown(mf);
}

/* One MR more than query_device advertises fails cleanly. */
static void shca_mr_limit(struct kunit *test)
{
	struct shca_fixture *fx = test->priv;
	struct shca_dev *dev = to_shca_dev(fx->ibdev);
	struct ib_mr *last, *over;
	struct ib_pd *pd;

	KUNIT_ASSERT_EQ(test, fx->ibdev->attrs.max_mr, SHCA_MAX_MR);
	pd = ib_alloc_pd(fx->ibdev, 0);
	KUNIT_ASSERT_FALSE(test, IS_ERR(pd));
	atomic_set(&dev->res[SHCA_RES_MR], SHCA_MAX_MR - 1);
	last = ib_alloc_mr(pd, IB_MR_TYPE_MEM_REG, 1);
	KUNIT_EXPECT_FALSE(test, IS_ERR(last));
	over = ib_alloc_mr(pd, IB_MR_TYPE_MEM_REG, 1);
	KUNIT_EXPECT_EQ(test, PTR_ERR_OR_ZERO(over), -ENOMEM);
	if (!IS_ERR(over))
		ib_dereg_mr(over);
	if (!IS_ERR(last))
		ib_dereg_mr(last);
	KUNIT_EXPECT_EQ(test, atomic_read(&dev->res[SHCA_RES_MR]),
			SHCA_MAX_MR - 1);
	atomic_set(&dev->res[SHCA_RES_MR], 0);
	ib_dealloc_pd(pd);
	shca_expect_no_mr(test, dev);
}

/* Nothing stays behind, and indices move on rather than being reused. */
static void shca_mr_alloc_dereg_cycles(struct kunit *test)
{
	struct shca_fixture *fx = test->priv;
	struct shca_dev *dev = to_shca_dev(fx->ibdev);
	u64 start = ktime_get_ns();
	struct ib_mr *mr;
	struct ib_pd *pd;
	int i;

	pd = ib_alloc_pd(fx->ibdev, 0);
	KUNIT_ASSERT_FALSE(test, IS_ERR(pd));
	for (i = 0; i < SHCA_TEST_CYCLES; i++) {
		mr = ib_alloc_mr(pd, IB_MR_TYPE_MEM_REG, SHCA_TEST_MAX_SG);
		KUNIT_ASSERT_FALSE(test, IS_ERR(mr));
		KUNIT_ASSERT_EQ(test, ib_dereg_mr(mr), 0);
	}
	KUNIT_EXPECT_GE(test, dev->next_mr, (u32)SHCA_TEST_CYCLES);
	ib_dealloc_pd(pd);
	shca_expect_no_mr(test, dev);
	kunit_info(test, "%d MR cycles in %llu ms\n", SHCA_TEST_CYCLES,
		   (ktime_get_ns() - start) / NSEC_PER_MSEC);
}

/*
 * Memory windows, as far as a kernel thread can take them: a window binds
 * only to a user MR (which needs a process, see above; the integration
 * suite's wr-api binds, uses, invalidates and deallocates them), so here
 * it stays unbound.  Allocated as ib_core allocates one for uverbs, it has
 * a key of its own that lookups find, is never usable as a local key nor
 * for remote access unbound, refuses a fast-registration MR, only type 2
 * is invalidated (and only when bound), it does not keep the MR from
 * being deregistered, and deallocation unpublishes it.
 */
static void shca_mr_window_rules(struct kunit *test)
{
	struct shca_mr_fixture *mf = shca_mr_setup(test);
	struct shca_mr *mr = to_shca_mr(mf->mr), *win, *got;
	struct shca_mw *mw;
	u32 key;
	int type;

	for (type = IB_MW_TYPE_1; type <= IB_MW_TYPE_2; type++) {
		mw = kunit_kzalloc(test, sizeof(*mw), GFP_KERNEL);
		KUNIT_ASSERT_NOT_NULL(test, mw);
		mw->ibmw.device = mf->pd->device;
		mw->ibmw.pd = mf->pd;
		mw->ibmw.type = type;
		KUNIT_ASSERT_EQ(test, shca_alloc_mw(&mw->ibmw, NULL), 0);
		win = mw->win;
		key = mw->ibmw.rkey;
		KUNIT_EXPECT_EQ(test, win->kind, SHCA_MR_WINDOW);

		got = shca_mr_get(mf->dev, key);
		KUNIT_EXPECT_PTR_EQ(test, got, win);
		if (got)
			shca_mr_put(got);
		KUNIT_EXPECT_EQ(test, shca_mr_check(win, key, mf->pd, 0, 1, 0),
				-EACCES);
		KUNIT_EXPECT_NULL(test, shca_mw_enter(win, key, 1, mf->pd, 0,
						      1, 0));
		KUNIT_EXPECT_EQ(test, shca_mw_bind(win, ib_inc_rkey(key), mr, 1,
						   mf->mr->iova, 1,
						   IB_ACCESS_REMOTE_READ),
				-EINVAL);
		KUNIT_EXPECT_EQ(test, shca_mw_bind(win, ib_inc_rkey(key), NULL,
						   1, 0, 1, 0), -EINVAL);
		KUNIT_EXPECT_EQ(test, shca_mr_invalidate(win, key, 1), -EINVAL);
		KUNIT_EXPECT_EQ(test, mr->windows, 0U);

		KUNIT_EXPECT_EQ(test, shca_dealloc_mw(&mw->ibmw), 0);
		KUNIT_EXPECT_NULL(test, shca_mr_get(mf->dev, key));
	}
	shca_mr_teardown(mf);
	shca_expect_no_mr(test, mf->dev);
}

static struct kunit_case shca_mr_cases[] = {
	KUNIT_CASE(shca_mr_dma_global_rkey),
	KUNIT_CASE_PARAM(shca_mr_map_in_atomic, shca_mr_ctx_gen_params),
	KUNIT_CASE(shca_mr_map_small_pages),
	KUNIT_CASE(shca_mr_keys_unguessable),
	KUNIT_CASE(shca_mr_refuses_bad_args),
	KUNIT_CASE(shca_mr_lookup_by_full_key),
	KUNIT_CASE(shca_mr_check_rules),
	KUNIT_CASE(shca_mr_sgl_check_keeps_first),
	KUNIT_CASE(shca_mr_dereg_waits_for_refs),
	KUNIT_CASE_PARAM(shca_mr_async_in_atomic, shca_mr_ctx_gen_params),
	KUNIT_CASE(shca_mr_async_reg_other_index),
	KUNIT_CASE(shca_mr_limit),
	KUNIT_CASE(shca_mr_alloc_dereg_cycles),
	KUNIT_CASE(shca_mr_window_rules),
	{}
};

static struct kunit_suite shca_mr_suite = {
	.name = "softhca_mr",
	.suite_init = shca_mr_fx_suite_init,
	.suite_exit = shca_mr_fx_suite_exit,
	.init = shca_mr_fx_init,
	.test_cases = shca_mr_cases,
};

kunit_test_suite(shca_mr_suite);
