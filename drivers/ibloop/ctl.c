// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * ibloop: an in-kernel loopback client built only on ib_core's exported
 * verbs, to measure and check any RDMA device from inside the kernel the
 * way a kernel ULP uses it.  Its control is one debugfs file:
 *
 *   echo "dev=rxe0 op=write size=4096 iters=2000" \
 *	> /sys/kernel/debug/ibloop/run
 *   cat /sys/kernel/debug/ibloop/run
 *
 * peer=DEV puts the target QP on another device, e.g. a softhca or
 * rdma_rxe device in another network namespace, so that the messages
 * cross a wire (every byte still checked):
 *
 *   echo "dev=softhca0 peer=rxe0 op=read size=1048576 iters=50 depth=8" \
 *	> /sys/kernel/debug/ibloop/run
 *
 * A write runs synchronously in the writer's context and returns when the
 * run ended: the line's length, or the run's errno.  A read returns the
 * last run's result as one line of key=value pairs.
 *
 * mode=handler has a completion handler poll, repost and re-arm; on rdma_rxe
 * of Linux 6.5 and later (Debian's 6.12) rxe calls the handler with its CQ
 * lock held, so the handler's ib_poll_cq() deadlocks there: use mode=poll,
 * in which the writer busy-polls and no CQ is ever armed.  The other modes
 * take the CQs ULPs take from ib_core, whose poller calls back for each
 * completion: mode=direct (ib_alloc_cq() with IB_POLL_DIRECT, the writer
 * polling through ib_process_cq_direct()), softirq, workqueue and
 * unbound (IB_POLL_SOFTIRQ, _WORKQUEUE, _UNBOUND_WORKQUEUE), and pool
 * (ib_cq_pool_get(), shared CQs polled in softirq).
 *
 * ctx= says where every post, poll and arm of the run is issued from, to
 * show a provider keeping ib_core's promise that the data path verbs may
 * be called from any context: task (the default: the writer, or the
 * completion handler), hardirq or softirq (a hard-irq or softirq hrtimer
 * callback, which the writer and the handler start instead of posting),
 * or irqsoff (the writer or the handler, holding a spinlock with IRQs
 * off).  The result's ctx_violations counts verbs that found themselves
 * elsewhere.  Not every provider keeps that promise: rdma_rxe of 6.1 runs
 * its requester inside post_send under spin_lock_bh(), which must not be
 * called from hard-irq or with IRQs off, so ctx=hardirq and ctx=irqsoff
 * splat or deadlock there.  ibloop does not refuse them (it knows no
 * providers); scripts/tests/integration-guest.sh runs contexts other
 * than task against softhca only.
 */
#include <linux/debugfs.h>
#include <linux/math64.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/sizes.h>
#include <linux/string.h>
#include <linux/uaccess.h>

#include "ibloop.h"

#define IBLOOP_LINE_MAX		256	/* a control line */
#define IBLOOP_RESULT_MAX	448	/* a result line */
#define IBLOOP_DEPTH_MAX	1024
/* Per buffer (four per run) of depth slots: one run stays below 64 MiB. */
#define IBLOOP_WINDOW_MAX	SZ_16M

static const char * const ibloop_op_names[] = {
	[IBLOOP_OP_SEND] = "send",
	[IBLOOP_OP_WRITE] = "write",
	[IBLOOP_OP_READ] = "read",
	[IBLOOP_OP_WRITE_IMM] = "write_imm",
	[IBLOOP_OP_MEMCPY] = "memcpy",
};

static const char * const ibloop_mode_names[] = {
	[IBLOOP_MODE_HANDLER] = "handler",
	[IBLOOP_MODE_POLL] = "poll",
	[IBLOOP_MODE_DIRECT] = "direct",
	[IBLOOP_MODE_SOFTIRQ] = "softirq",
	[IBLOOP_MODE_WORKQUEUE] = "workqueue",
	[IBLOOP_MODE_UNBOUND] = "unbound",
	[IBLOOP_MODE_POOL] = "pool",
};

static const char * const ibloop_context_names[] = {
	[IBLOOP_CONTEXT_TASK] = "task",
	[IBLOOP_CONTEXT_HARDIRQ] = "hardirq",
	[IBLOOP_CONTEXT_SOFTIRQ] = "softirq",
	[IBLOOP_CONTEXT_IRQSOFF] = "irqsoff",
};

static const struct ibloop_cfg ibloop_defaults = {
	.op = IBLOOP_OP_SEND,
	.size = 4096,
	.iters = 10000,
	.depth = 16,
	.mode = IBLOOP_MODE_HANDLER,
	.context = IBLOOP_CONTEXT_TASK,
	.gid = -1,
};

static struct dentry *ibloop_dir;
/* One run at a time: two would only measure each other. */
static DEFINE_MUTEX(ibloop_run_lock);
/* The last result line; its own lock, so reads need not wait for a run. */
static DEFINE_MUTEX(ibloop_result_lock);
static char ibloop_result[IBLOOP_RESULT_MAX];

static int ibloop_parse_u32(const char *val, u32 min, u32 max, u32 *out)
{
	u32 v;

	if (kstrtou32(val, 0, &v) || v < min || v > max)
		return -EINVAL;
	*out = v;
	return 0;
}

/* One key=value pair into @cfg. */
static int ibloop_parse_pair(struct ibloop_cfg *cfg, const char *key,
			     const char *val)
{
	u32 gid;
	int i;

	if (!strcmp(key, "dev"))
		return strscpy(cfg->dev, val, sizeof(cfg->dev)) > 0 ? 0 :
		       -EINVAL;
	if (!strcmp(key, "peer"))
		return strscpy(cfg->peer, val, sizeof(cfg->peer)) > 0 ? 0 :
		       -EINVAL;
	if (!strcmp(key, "op")) {
		i = match_string(ibloop_op_names, ARRAY_SIZE(ibloop_op_names),
				 val);
		cfg->op = i;
		return i < 0 ? i : 0;
	}
	if (!strcmp(key, "mode")) {
		i = match_string(ibloop_mode_names,
				 ARRAY_SIZE(ibloop_mode_names), val);
		cfg->mode = i;
		return i < 0 ? i : 0;
	}
	if (!strcmp(key, "ctx")) {
		i = match_string(ibloop_context_names,
				 ARRAY_SIZE(ibloop_context_names), val);
		cfg->context = i;
		return i < 0 ? i : 0;
	}
	if (!strcmp(key, "size"))
		return ibloop_parse_u32(val, 1, SZ_1M, &cfg->size);
	if (!strcmp(key, "iters"))
		return ibloop_parse_u32(val, 1, U32_MAX, &cfg->iters);
	if (!strcmp(key, "depth"))
		return ibloop_parse_u32(val, 1, IBLOOP_DEPTH_MAX, &cfg->depth);
	if (!strcmp(key, "gid")) {
		if (ibloop_parse_u32(val, 0, S32_MAX, &gid))
			return -EINVAL;
		cfg->gid = gid;
		return 0;
	}
	return -EINVAL;
}

/*
 * A line of whitespace-separated key=value pairs; dev= is required, but
 * for op=memcpy, which uses no device.  ib_core's CQs are polled where
 * ib_core polls them, so they take ctx=task only.
 */
static int ibloop_parse(char *line, struct ibloop_cfg *cfg)
{
	char *key, *val;
	int ret;

	*cfg = ibloop_defaults;
	while ((key = strsep(&line, " \t\n"))) {
		if (!*key)
			continue;
		val = strchr(key, '=');
		if (!val)
			return -EINVAL;
		*val++ = '\0';
		ret = ibloop_parse_pair(cfg, key, val);
		if (ret)
			return ret;
	}
	if ((!cfg->dev[0] && cfg->op != IBLOOP_OP_MEMCPY) ||
	    (u64)cfg->depth * cfg->size > IBLOOP_WINDOW_MAX ||
	    (ibloop_core_cq(cfg) && cfg->context != IBLOOP_CONTEXT_TASK))
		return -EINVAL;
	return 0;
}

/* MB/s (10^6 bytes) and messages/s, as integers; 0 for a run of 0 ns. */
static u64 ibloop_per_s(u64 n, u64 scale, u64 ns)
{
	return ns ? mul_u64_u64_div_u64(n, scale, ns) : 0;
}

static void ibloop_format(const struct ibloop_cfg *cfg,
			  const struct ibloop_result *res)
{
	u64 bytes = res->completed * cfg->size;

	mutex_lock(&ibloop_result_lock);
	scnprintf(ibloop_result, sizeof(ibloop_result),
		  "dev=%s peer=%s op=%s size=%u iters=%u depth=%u mode=%s ctx=%s completed=%llu bytes=%llu ns=%llu mbps=%llu msgs_per_s=%llu mismatches=%llu errors=%llu ctx_violations=%llu max_handler_depth=%d status=%d\n",
		  cfg->dev, ibloop_peer(cfg),
		  ibloop_op_names[cfg->op], cfg->size, cfg->iters,
		  cfg->depth, ibloop_mode_names[cfg->mode],
		  ibloop_context_names[cfg->context], res->completed,
		  bytes, res->ns, ibloop_per_s(bytes, 1000, res->ns),
		  ibloop_per_s(res->completed, NSEC_PER_SEC, res->ns),
		  res->mismatches, res->errors, res->ctx_violations,
		  res->max_handler_depth, res->status);
	mutex_unlock(&ibloop_result_lock);
}

static ssize_t ibloop_write(struct file *file, const char __user *ubuf,
			    size_t len, loff_t *ppos)
{
	struct ibloop_result res = {};
	struct ibloop_cfg cfg;
	char *line;
	int ret;

	if (len >= IBLOOP_LINE_MAX)
		return -EINVAL;
	line = memdup_user_nul(ubuf, len);
	if (IS_ERR(line))
		return PTR_ERR(line);
	ret = ibloop_parse(line, &cfg);
	kfree(line);
	if (ret)
		return ret;
	if (mutex_lock_interruptible(&ibloop_run_lock))
		return -EINTR;
	if (cfg.op == IBLOOP_OP_MEMCPY)
		ret = ibloop_memcpy(&cfg, &res);
	else
		ret = ibloop_run(&cfg, &res);
	ibloop_format(&cfg, &res);
	mutex_unlock(&ibloop_run_lock);
	return ret ?: len;
}

static ssize_t ibloop_read(struct file *file, char __user *ubuf, size_t len,
			   loff_t *ppos)
{
	char line[IBLOOP_RESULT_MAX];

	mutex_lock(&ibloop_result_lock);
	strscpy(line, ibloop_result, sizeof(line));
	mutex_unlock(&ibloop_result_lock);
	return simple_read_from_buffer(ubuf, len, ppos, line, strlen(line));
}

static const struct file_operations ibloop_fops = {
	.owner = THIS_MODULE,
	.open = simple_open,
	.read = ibloop_read,
	.write = ibloop_write,
	.llseek = default_llseek,
};

static int __init ibloop_init(void)
{
	int ret;

	/* The file is the only interface: without debugfs, nothing to do. */
	ibloop_dir = debugfs_create_dir("ibloop", NULL);
	if (IS_ERR(ibloop_dir))
		return PTR_ERR(ibloop_dir);
	ret = ib_register_client(&ibloop_client);
	if (ret)
		goto remove_dir;
	debugfs_create_file("run", 0600, ibloop_dir, NULL, &ibloop_fops);
	return 0;

remove_dir:
	debugfs_remove_recursive(ibloop_dir);
	return ret;
}

static void __exit ibloop_exit(void)
{
	/* No run is in progress: an open file holds the module (.owner). */
	debugfs_remove_recursive(ibloop_dir);
	ib_unregister_client(&ibloop_client);
}

module_init(ibloop_init);
module_exit(ibloop_exit);
MODULE_DESCRIPTION("Loopback client of ib_core's verbs, driven through debugfs");
MODULE_LICENSE("Dual BSD/GPL");
