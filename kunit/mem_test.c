// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * softhca_mem: the engine's cursors over memory (mem.c) never move past
 * the bytes they were given.  A skip or a copy longer than what is left
 * is refused with -EFAULT, touches nothing, and spends the cursor, so
 * that no later map reaches past its end either; within the bounds,
 * bytes land where the SGE list says, zero-length SGEs included.  A
 * caller that trusted a length from a ring or a peer gets an error, not
 * a copy from or to whatever lies beyond.
 */

#include <kunit/test.h>

#include "dev.h"
#include "mem.h"

#define SHCA_MEM_LEN 64

static u8 *shca_mem_buf(struct kunit *test, u8 fill)
{
	u8 *buf = kunit_kmalloc(test, SHCA_MEM_LEN, GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, buf);
	memset(buf, fill, SHCA_MEM_LEN);
	return buf;
}

/* A skip past a buffer's end fails, and so does every map after it. */
static void shca_mem_buf_skip(struct kunit *test)
{
	u8 *buf = shca_mem_buf(test, 1);
	struct shca_sgl sgl;
	u32 len;

	shca_sgl_init_buf(&sgl, buf, 16);
	KUNIT_EXPECT_EQ(test, shca_sgl_skip(&sgl, 16), 0);
	KUNIT_EXPECT_TRUE(test, IS_ERR(shca_sgl_map(&sgl, &len)));

	shca_sgl_init_buf(&sgl, buf, 16);
	KUNIT_EXPECT_EQ(test, shca_sgl_skip(&sgl, 8), 0);
	KUNIT_EXPECT_PTR_EQ(test, shca_sgl_map(&sgl, &len), (void *)buf + 8);
	KUNIT_EXPECT_EQ(test, len, 8);
	KUNIT_EXPECT_EQ(test, shca_sgl_skip(&sgl, 9), -EFAULT);
	KUNIT_EXPECT_TRUE(test, sgl.bad);
	KUNIT_EXPECT_EQ(test, PTR_ERR(shca_sgl_map(&sgl, &len)), -EFAULT);
	KUNIT_EXPECT_EQ(test, shca_sgl_skip(&sgl, 0), 0);
	KUNIT_EXPECT_EQ(test, shca_sgl_skip(&sgl, 1), -EFAULT);
}

/* A copy longer than either side has left copies nothing. */
static void shca_mem_buf_copy(struct kunit *test)
{
	u8 *src = shca_mem_buf(test, 0xaa), *dst = shca_mem_buf(test, 0);
	struct shca_sgl s, d;

	shca_sgl_init_buf(&s, src, 16);
	shca_sgl_init_buf(&d, dst, 32);
	KUNIT_EXPECT_EQ(test, shca_sgl_copy(&d, &s, 17), -EFAULT);
	KUNIT_EXPECT_TRUE(test, s.bad);
	KUNIT_EXPECT_FALSE(test, d.bad);
	KUNIT_EXPECT_TRUE(test, !memchr_inv(dst, 0, SHCA_MEM_LEN));

	shca_sgl_init_buf(&s, src, 32);
	shca_sgl_init_buf(&d, dst, 8);
	KUNIT_EXPECT_EQ(test, shca_sgl_copy(&d, &s, 9), -EFAULT);
	KUNIT_EXPECT_TRUE(test, d.bad);
	KUNIT_EXPECT_TRUE(test, !memchr_inv(dst, 0, SHCA_MEM_LEN));

	shca_sgl_init_buf(&s, src, 32);
	shca_sgl_init_buf(&d, dst, 32);
	KUNIT_EXPECT_EQ(test, shca_sgl_copy(&d, &s, 32), 0);
	KUNIT_EXPECT_EQ(test, shca_sgl_copy(&d, &s, 1), -EFAULT);
	KUNIT_EXPECT_TRUE(test, !memchr_inv(dst, 0xaa, 32));
	KUNIT_EXPECT_TRUE(test, !memchr_inv(dst + 32, 0, SHCA_MEM_LEN - 32));
}

/*
 * An SGE list of the local DMA lkey, 10, 0 and 20 bytes: a skip of 10
 * and a copy of 20 fill the third SGE; one byte more is refused, with no
 * warning, and the bytes past the list stay as they were.
 */
static void shca_mem_sge_copy(struct kunit *test)
{
	u8 *src = shca_mem_buf(test, 0x55), *dst = shca_mem_buf(test, 0);
	struct softhca_sge sge[] = {
		{ .addr = (uintptr_t)dst, .length = 10,
		  .lkey = SHCA_LOCAL_DMA_LKEY },
		{ .addr = (uintptr_t)(dst + 10), .length = 0,
		  .lkey = SHCA_LOCAL_DMA_LKEY },
		{ .addr = (uintptr_t)(dst + 20), .length = 20,
		  .lkey = SHCA_LOCAL_DMA_LKEY },
	};
	struct shca_sgl s, d;

	KUNIT_ASSERT_EQ(test, shca_sgl_init(&d, NULL, NULL,
					    IB_ACCESS_LOCAL_WRITE, true, sge,
					    ARRAY_SIZE(sge)), 0);
	KUNIT_EXPECT_EQ(test, d.len, 30);
	shca_sgl_init_buf(&s, src, SHCA_MEM_LEN);
	KUNIT_EXPECT_EQ(test, shca_sgl_skip(&d, 10), 0);
	KUNIT_EXPECT_EQ(test, shca_sgl_copy(&d, &s, 20), 0);
	KUNIT_EXPECT_EQ(test, shca_sgl_copy(&d, &s, 1), -EFAULT);
	KUNIT_EXPECT_TRUE(test, d.bad);
	shca_sgl_release(&d);
	KUNIT_EXPECT_TRUE(test, !memchr_inv(dst, 0, 20));
	KUNIT_EXPECT_TRUE(test, !memchr_inv(dst + 20, 0x55, 20));
	KUNIT_EXPECT_TRUE(test, !memchr_inv(dst + 40, 0, SHCA_MEM_LEN - 40));

	KUNIT_ASSERT_EQ(test, shca_sgl_init(&d, NULL, NULL,
					    IB_ACCESS_LOCAL_WRITE, true, sge,
					    ARRAY_SIZE(sge)), 0);
	KUNIT_EXPECT_EQ(test, shca_sgl_skip(&d, 31), -EFAULT);
	KUNIT_EXPECT_EQ(test, shca_sgl_copy(&d, &s, 1), -EFAULT);
	shca_sgl_release(&d);
}

static struct kunit_case shca_mem_cases[] = {
	KUNIT_CASE(shca_mem_buf_skip),
	KUNIT_CASE(shca_mem_buf_copy),
	KUNIT_CASE(shca_mem_sge_copy),
	{}
};

static struct kunit_suite shca_mem_suite = {
	.name = "softhca_mem",
	.test_cases = shca_mem_cases,
};

kunit_test_suite(shca_mem_suite);
