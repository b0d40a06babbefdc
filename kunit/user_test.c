// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * softhca_user: what user space hands the driver, checked against real
 * user memory.  KUnit's cases run in kthreads without an mm, so the suite
 * borrows the one of the process that loads it (insmod, in whose context
 * suite_init runs), maps pages there, and each case adopts that mm with
 * kthread_use_mm().  Inside that window the cases only EXPECT: an ASSERT
 * would end the kthread while it holds the borrowed mm.
 *
 * - a verb that defines no driver request accepts an empty or all-zero
 *   one, of any length, and refuses a non-zero byte;
 * - a user MR pins the pages behind its range: every byte the data path
 *   finds through the MR is the byte the process sees, both ways;
 * - a bad range, unsupported access flags and unmapped memory are refused
 *   and leave nothing counted;
 * - an on-demand paging MR's pages are faulted in by the engine as a
 *   WRITE or READ reaches them, and the ones the process unmaps are gone
 *   from it (a remote access error);
 * - a user ring's memory (charged to the process's memory cgroup) is
 *   zeroed and maps into a process as shca_mmap() maps it, the same bytes
 *   both ways.
 */

#include <linux/anon_inodes.h>
#include <linux/highmem.h>
#include <linux/mman.h>
#include <linux/sched/mm.h>
#include <linux/uaccess.h>
#include <linux/vmalloc.h>

#include "dev.h"
#include "dp.h"
#include "fixture.h"
#include "mr.h"
#include "queue.h"
#include "verbs.h"

#define SHCA_USER_PAGES 4

SHCA_SUITE_FIXTURE(shca_user_fx, "softhca_ktuser");

static struct {
	struct mm_struct *mm;
	unsigned long addr;		/* SHCA_USER_PAGES pages in mm */
} shca_user;

static int shca_user_suite_init(struct kunit_suite *suite)
{
	int ret;

	shca_user.mm = get_task_mm(current);
	if (!shca_user.mm)
		return -ESRCH;
	/* One page more, unmapped again: a hole right after the pages. */
	shca_user.addr = vm_mmap(NULL, 0, (SHCA_USER_PAGES + 1) * PAGE_SIZE,
				 PROT_READ | PROT_WRITE,
				 MAP_ANONYMOUS | MAP_PRIVATE, 0);
	if (IS_ERR_VALUE(shca_user.addr)) {
		ret = (int)shca_user.addr;
		goto err_put_mm;
	}
	vm_munmap(shca_user.addr + SHCA_USER_PAGES * PAGE_SIZE, PAGE_SIZE);
	ret = shca_user_fx_suite_init(suite);
	if (ret)
		goto err_unmap;
	return 0;

err_unmap:
	vm_munmap(shca_user.addr, SHCA_USER_PAGES * PAGE_SIZE);
err_put_mm:
	mmput(shca_user.mm);
	return ret;
}

static void shca_user_suite_exit(struct kunit_suite *suite)
{
	shca_user_fx_suite_exit(suite);
	vm_munmap(shca_user.addr, SHCA_USER_PAGES * PAGE_SIZE);
	mmput(shca_user.mm);
}

/* Runs @body with the borrowed mm as the kthread's own. */
static void shca_user_run(struct kunit *test, struct ib_pd *pd,
			  void (*body)(struct kunit *test, struct ib_pd *pd))
{
	kthread_use_mm(shca_user.mm);
	body(test, pd);
	kthread_unuse_mm(shca_user.mm);
}

static void __user *shca_user_ptr(size_t offset)
{
	return (void __user *)(shca_user.addr + offset);
}

static void shca_user_no_request_body(struct kunit *test, struct ib_pd *pd)
{
	struct ib_device *ibdev = pd->device;
	struct ib_udata udata = { .inbuf = shca_user_ptr(0) };
	const u8 one = 1;

	KUNIT_EXPECT_EQ(test, clear_user(shca_user_ptr(0), PAGE_SIZE), 0);
	KUNIT_EXPECT_EQ(test, shca_udata_no_request(ibdev, NULL, "t"), 0);
	KUNIT_EXPECT_EQ(test, shca_udata_no_request(ibdev, &udata, "t"), 0);
	udata.inlen = 8;
	KUNIT_EXPECT_EQ(test, shca_udata_no_request(ibdev, &udata, "t"), 0);
	/* A newer provider's longer request: fine while it is all zero. */
	udata.inlen = 200;
	KUNIT_EXPECT_EQ(test, shca_udata_no_request(ibdev, &udata, "t"), 0);
	KUNIT_EXPECT_EQ(test, copy_to_user(shca_user_ptr(199), &one, 1), 0);
	KUNIT_EXPECT_EQ(test, shca_udata_no_request(ibdev, &udata, "t"),
			-EINVAL);
	udata.inlen = 199;
	KUNIT_EXPECT_EQ(test, shca_udata_no_request(ibdev, &udata, "t"), 0);
}

static u8 shca_pattern(size_t i)
{
	return i * 13 + 7;
}

/* Check one byte as the data path sees it, then write it through the MR. */
static void shca_mr_probe(struct kunit *test, struct shca_mr *mr, u64 iova,
			  size_t user_offset)
{
	unsigned int offset;
	struct page *page;
	u8 *byte, got;

	page = shca_mr_iova_page(mr, iova, &offset);
	KUNIT_EXPECT_NOT_NULL(test, page);
	if (!page)
		return;
	byte = (u8 *)kmap_local_page(page) + offset;
	KUNIT_EXPECT_EQ(test, *byte, shca_pattern(user_offset));
	*byte = ~shca_pattern(user_offset);
	kunmap_local(byte);
	/* A write through the MR is what the process reads. */
	KUNIT_EXPECT_EQ(test, copy_from_user(&got, shca_user_ptr(user_offset),
					     1), 0);
	KUNIT_EXPECT_EQ(test, got, (u8)~shca_pattern(user_offset));
}

/*
 * The driver's verb itself, as ib_uverbs calls it; the MR it returns is
 * unknown to ib_core, so it goes back through the driver's dereg_mr too.
 */
static struct ib_mr *shca_reg_user(struct ib_pd *pd, size_t offset,
				   u64 length, u64 iova, int access)
{
	return pd->device->ops.reg_user_mr(pd, shca_user.addr + offset, length,
					   iova, access, NULL);
}

/* Every byte the MR maps is the process's byte, read and written. */
static void shca_user_mr_pages_body(struct kunit *test, struct ib_pd *pd)
{
	const size_t first = 100, len = 3 * PAGE_SIZE - 200;
	const u64 iova = 0x7000000 + first;
	const u64 probes[] = { 0, 1, PAGE_SIZE - first - 1, PAGE_SIZE - first,
			       2 * PAGE_SIZE, len - 1 };
	struct shca_dev *dev = to_shca_dev(pd->device);
	struct shca_mr *mr;
	struct ib_mr *ibmr;
	unsigned int offset;
	size_t i;
	u8 *buf;

	buf = kunit_kmalloc(test, SHCA_USER_PAGES * PAGE_SIZE, GFP_KERNEL);
	KUNIT_EXPECT_NOT_NULL(test, buf);
	if (!buf)
		return;
	for (i = 0; i < SHCA_USER_PAGES * PAGE_SIZE; i++)
		buf[i] = shca_pattern(i);
	KUNIT_EXPECT_EQ(test, copy_to_user(shca_user_ptr(0), buf,
					   SHCA_USER_PAGES * PAGE_SIZE), 0);

	ibmr = shca_reg_user(pd, first, len, iova,
			     IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_READ);
	KUNIT_EXPECT_NOT_ERR_OR_NULL(test, ibmr);
	if (IS_ERR_OR_NULL(ibmr))
		return;
	mr = to_shca_mr(ibmr);
	KUNIT_EXPECT_EQ(test, mr->kind, SHCA_MR_USER);
	KUNIT_EXPECT_EQ(test, atomic_read(&dev->res[SHCA_RES_MR]), 1);
	KUNIT_EXPECT_EQ(test, shca_mr_check(mr, mr->key, pd, iova, len,
					    IB_ACCESS_REMOTE_READ), 0);
	KUNIT_EXPECT_EQ(test, shca_mr_check(mr, mr->key, pd, iova, len + 1,
					    IB_ACCESS_REMOTE_READ), -ERANGE);
	KUNIT_EXPECT_EQ(test, shca_mr_check(mr, mr->key, pd, iova, 8,
					    IB_ACCESS_REMOTE_WRITE), -EACCES);
	KUNIT_EXPECT_NULL(test, shca_mr_iova_page(mr, iova + len, &offset));
	for (i = 0; i < ARRAY_SIZE(probes); i++)
		shca_mr_probe(test, mr, iova + probes[i], first + probes[i]);

	KUNIT_EXPECT_EQ(test, pd->device->ops.dereg_mr(ibmr, NULL), 0);
	KUNIT_EXPECT_EQ(test, atomic_read(&dev->res[SHCA_RES_MR]), 0);
}

static void shca_user_mr_refused_body(struct kunit *test, struct ib_pd *pd)
{
	struct shca_dev *dev = to_shca_dev(pd->device);
	struct ib_mr *mr;

	KUNIT_EXPECT_EQ(test, PTR_ERR(shca_reg_user(pd, 0, 0, 0,
						    IB_ACCESS_LOCAL_WRITE)),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, PTR_ERR(shca_reg_user(pd, 0, PAGE_SIZE, U64_MAX,
						    IB_ACCESS_LOCAL_WRITE)),
			-EINVAL);
	/* Implicit ODP (the whole address space) is not offered. */
	mr = pd->device->ops.reg_user_mr(pd, 0, U64_MAX, 0, IB_ACCESS_ON_DEMAND,
					 NULL);
	KUNIT_EXPECT_EQ(test, PTR_ERR(mr), -EOPNOTSUPP);
	/* Not defined at all. */
	KUNIT_EXPECT_EQ(test, PTR_ERR(shca_reg_user(pd, 0, PAGE_SIZE, 0,
						    BIT(12))),
			-EINVAL);
	/* The hole after the pages: nothing there to pin. */
	mr = shca_reg_user(pd, SHCA_USER_PAGES * PAGE_SIZE, PAGE_SIZE, 0,
			   IB_ACCESS_LOCAL_WRITE);
	KUNIT_EXPECT_EQ(test, PTR_ERR(mr), -EFAULT);
	KUNIT_EXPECT_EQ(test, atomic_read(&dev->res[SHCA_RES_MR]), 0);
	KUNIT_EXPECT_TRUE(test, xa_empty(&dev->mrs));
}

/* An RDMA WRITE or READ of @len bytes between @buf and @raddr. */
static enum ib_wc_status shca_user_rdma(struct shca_dp *dp,
					enum ib_wr_opcode op, void *buf,
					u32 len, u64 raddr, u32 rkey)
{
	struct ib_sge sge = shca_dp_sge(dp, buf, len);
	struct ib_rdma_wr wr = {
		.wr = { .opcode = op, .sg_list = &sge, .num_sge = 1,
			.send_flags = IB_SEND_SIGNALED },
		.remote_addr = raddr,
		.rkey = rkey,
	};
	struct ib_wc wc;

	if (shca_dp_post_send(dp, 0, &wr.wr) || !shca_dp_poll(dp, 0, &wc))
		return IB_WC_GENERAL_ERR;
	return wc.status;
}

/*
 * An on-demand paging MR as the target of RDMA WRITEs and READs: none of
 * its pages is there when it is registered; the engine faults them in as
 * the WRITE reaches them, and the process reads what was written; the
 * READ returns what the process wrote; a WRITE to pages the process
 * unmapped since completes with a remote access error, and touches
 * nothing outside its range.
 */
static void shca_user_odp_body(struct kunit *test, struct shca_dp *dp,
			       u8 *src, u8 *got)
{
	const size_t len = 3 * PAGE_SIZE - 200, size = 4 * PAGE_SIZE;
	const int access = IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE |
			   IB_ACCESS_REMOTE_READ | IB_ACCESS_ON_DEMAND;
	unsigned long addr;
	struct shca_mr *mr;
	struct ib_mr *ibmr;

	addr = vm_mmap(NULL, 0, size, PROT_READ | PROT_WRITE,
		       MAP_ANONYMOUS | MAP_PRIVATE, 0);
	KUNIT_EXPECT_FALSE(test, IS_ERR_VALUE(addr));
	if (IS_ERR_VALUE(addr))
		return;
	ibmr = dp->pd->device->ops.reg_user_mr(dp->pd, addr, size, addr,
					       access, NULL);
	KUNIT_EXPECT_NOT_ERR_OR_NULL(test, ibmr);
	if (IS_ERR_OR_NULL(ibmr))
		goto out_unmap;
	mr = to_shca_mr(ibmr);
	KUNIT_EXPECT_EQ(test, mr->kind, SHCA_MR_ODP);
	KUNIT_EXPECT_EQ(test, mr->odp->npages, 0);

	shca_dp_fill(src, len, 21);
	KUNIT_EXPECT_EQ(test, shca_user_rdma(dp, IB_WR_RDMA_WRITE, src, len,
					     addr + 100, ibmr->rkey),
			IB_WC_SUCCESS);
	KUNIT_EXPECT_GE(test, mr->odp->npages, 3);
	KUNIT_EXPECT_EQ(test, copy_from_user(got, (void __user *)addr + 100,
					     len), 0);
	KUNIT_EXPECT_EQ(test, memcmp(got, src, len), 0);

	shca_dp_fill(src, size, 22);
	KUNIT_EXPECT_EQ(test, copy_to_user((void __user *)addr, src, size), 0);
	memset(got, 0, size);
	KUNIT_EXPECT_EQ(test, shca_user_rdma(dp, IB_WR_RDMA_READ, got, size,
					     addr, ibmr->rkey),
			IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(test, memcmp(got, src, size), 0);

	/* The last two pages go: the umem hears of it, the WRITE fails. */
	vm_munmap(addr + 2 * PAGE_SIZE, 2 * PAGE_SIZE);
	KUNIT_EXPECT_EQ(test, mr->odp->npages, 2);
	KUNIT_EXPECT_EQ(test, shca_user_rdma(dp, IB_WR_RDMA_WRITE, src,
					     PAGE_SIZE, addr + PAGE_SIZE + 8,
					     ibmr->rkey),
			IB_WC_REM_ACCESS_ERR);
	/*
	 * It may have written the part of its range that is still there;
	 * the bytes before it kept theirs.
	 */
	KUNIT_EXPECT_EQ(test, copy_from_user(got, (void __user *)addr,
					     PAGE_SIZE + 8), 0);
	KUNIT_EXPECT_EQ(test, memcmp(got, src, PAGE_SIZE + 8), 0);
	KUNIT_EXPECT_EQ(test, dp->pd->device->ops.dereg_mr(ibmr, NULL), 0);
out_unmap:
	vm_munmap(addr, size);
}

static void shca_user_odp(struct kunit *test)
{
	struct shca_dp_opts o = shca_dp_rc;
	u8 *src = kunit_kmalloc(test, 4 * PAGE_SIZE, GFP_KERNEL);
	u8 *got = kunit_kmalloc(test, 4 * PAGE_SIZE, GFP_KERNEL);
	struct shca_dp dp;

	KUNIT_ASSERT_NOT_NULL(test, src);
	KUNIT_ASSERT_NOT_NULL(test, got);
	o.access = IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE |
		   IB_ACCESS_REMOTE_READ;
	shca_dp_setup(test, test->priv, &dp, &o);
	kthread_use_mm(shca_user.mm);
	shca_user_odp_body(test, &dp, src, got);
	kthread_unuse_mm(shca_user.mm);
	shca_dp_teardown(&dp);
}

/* A case: a PD, then @body in the borrowed mm. */
#define SHCA_USER_CASE(name)						\
static void name(struct kunit *test)					\
{									\
	struct ib_pd *pd = ib_alloc_pd(shca_user_fx.ibdev, 0);		\
									\
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, pd);				\
	shca_user_run(test, pd, name##_body);				\
	ib_dealloc_pd(pd);						\
}

/* The ring's file, as ib_uverbs' is for shca_mmap(). */
static int shca_user_ring_mmap(struct file *file, struct vm_area_struct *vma)
{
	return remap_vmalloc_range(vma, file->private_data, 0);
}

static const struct file_operations shca_user_ring_fops = {
	.owner = THIS_MODULE,
	.mmap = shca_user_ring_mmap,
};

#define SHCA_USER_RING_SIZE (3 * PAGE_SIZE)

/* @ring mapped into the process: it reads what the kernel wrote, and back. */
static void shca_user_ring_map(struct kunit *test, u8 *ring, u8 *copy)
{
	struct file *file;
	unsigned long addr;
	const u8 mark = 0xa5;

	file = anon_inode_getfile("[softhca-ring]", &shca_user_ring_fops, ring,
				  O_RDWR);
	KUNIT_EXPECT_FALSE(test, IS_ERR(file));
	if (IS_ERR(file))
		return;
	addr = vm_mmap(file, 0, SHCA_USER_RING_SIZE, PROT_READ | PROT_WRITE,
		       MAP_SHARED, 0);
	KUNIT_EXPECT_FALSE(test, IS_ERR_VALUE(addr));
	if (!IS_ERR_VALUE(addr)) {
		KUNIT_EXPECT_EQ(test, copy_from_user(copy, (void __user *)addr,
						     SHCA_USER_RING_SIZE), 0);
		KUNIT_EXPECT_EQ(test, memcmp(copy, ring, SHCA_USER_RING_SIZE),
				0);
		KUNIT_EXPECT_EQ(test, copy_to_user((void __user *)addr +
						   PAGE_SIZE + 1, &mark, 1), 0);
		KUNIT_EXPECT_EQ(test, ring[PAGE_SIZE + 1], mark);
		vm_munmap(addr, SHCA_USER_RING_SIZE);
	}
	fput(file);
}

static void shca_user_ring_body(struct kunit *test, struct ib_pd *pd)
{
	u8 *ring = shca_queue_alloc_user(SHCA_USER_RING_SIZE);
	u8 *copy = kzalloc(SHCA_USER_RING_SIZE, GFP_KERNEL);
	size_t i;

	KUNIT_EXPECT_NOT_NULL(test, ring);
	KUNIT_EXPECT_NOT_NULL(test, copy);
	if (ring && copy) {
		KUNIT_EXPECT_NULL(test, memchr_inv(ring, 0,
						   SHCA_USER_RING_SIZE));
		for (i = 0; i < SHCA_USER_RING_SIZE; i++)
			ring[i] = shca_pattern(i);
		shca_user_ring_map(test, ring, copy);
	}
	kfree(copy);
	vfree(ring);
}

SHCA_USER_CASE(shca_user_no_request)
SHCA_USER_CASE(shca_user_mr_pages)
SHCA_USER_CASE(shca_user_mr_refused)
SHCA_USER_CASE(shca_user_ring)

static struct kunit_case shca_user_cases[] = {
	KUNIT_CASE(shca_user_no_request),
	KUNIT_CASE(shca_user_mr_pages),
	KUNIT_CASE(shca_user_mr_refused),
	KUNIT_CASE(shca_user_odp),
	KUNIT_CASE(shca_user_ring),
	{}
};

static struct kunit_suite shca_user_suite = {
	.name = "softhca_user",
	.suite_init = shca_user_suite_init,
	.suite_exit = shca_user_suite_exit,
	.init = shca_user_fx_init,
	.test_cases = shca_user_cases,
};

kunit_test_suite(shca_user_suite);
