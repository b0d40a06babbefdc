// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Check that libibverbs can load the softhca provider and that the provider
 * registers itself correctly.
 *
 * Usage: RDMAV_DRIVERS=/abs/path/libsofthca load-test
 * (libibverbs appends "-rdmav34.so" to an absolute RDMAV_DRIVERS entry.)
 *
 * libibverbs loads providers lazily: ibv_get_device_list() dlopen()s them
 * only when sysfs shows at least one uverbs device.  So:
 *  - with a softhca device present (test VM), ibv_get_device_list() itself
 *    must have loaded our object and listed the device;
 *  - without any RDMA device (build host), the test does what libibverbs'
 *    loader would: dlopen(path, RTLD_NOW), which fails on any unresolved
 *    symbol or missing symbol version.
 * In both cases the registration is observed by interposing
 * verbs_register_driver_34 (see load-test.map) and forwarding to the real
 * one, and the registered descriptor is checked field by field.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rdma/softhca-abi.h>

#include "rdma-core-private.h"

#define PROVIDER_SUFFIX "-rdmav34.so"
#define MAX_REGS 32
#define SYSFS_UVERBS "/sys/class/infiniband_verbs"

static const struct verbs_device_ops *regs[MAX_REGS];
static unsigned int nr_regs;
static int forward_failed;

/*
 * Stand-in for libibverbs' entry point: remember who registered, then let
 * libibverbs do the real registration so the library state stays sane.
 */
void verbs_register_driver_34(const struct verbs_device_ops *ops)
{
	void (*real)(const struct verbs_device_ops *ops);

	if (nr_regs < MAX_REGS)
		regs[nr_regs++] = ops;

	real = (void (*)(const struct verbs_device_ops *))
		dlvsym(RTLD_NEXT, "verbs_register_driver_34",
		       "IBVERBS_PRIVATE_34");
	if (!real) {
		forward_failed = 1;
		return;
	}
	real(ops);
}

static int failures;

#define CHECK(cond, ...)						\
	do {								\
		if (cond) {						\
			printf("ok:   " __VA_ARGS__);			\
		} else {						\
			printf("FAIL: " __VA_ARGS__);			\
			failures++;					\
		}							\
		putchar('\n');						\
	} while (0)

static int mapped(const char *path)
{
	char line[PATH_MAX + 256];
	size_t len = strlen(path);
	int found = 0;
	FILE *f;

	f = fopen("/proc/self/maps", "r");
	if (!f)
		return 0;
	while (!found && fgets(line, sizeof(line), f)) {
		char *p = strchr(line, '/');

		found = p && !strncmp(p, path, len) &&
			(p[len] == '\n' || p[len] == '\0');
	}
	fclose(f);
	return found;
}

/* The descriptor registered from the object at 'path', if exactly one. */
static const struct verbs_device_ops *our_registration(const char *path)
{
	const struct verbs_device_ops *found = NULL;
	char real[PATH_MAX];
	unsigned int i, n = 0;
	Dl_info info;

	for (i = 0; i < nr_regs; i++) {
		if (!dladdr(regs[i], &info) || !info.dli_fname ||
		    !realpath(info.dli_fname, real) || strcmp(real, path))
			continue;
		found = regs[i];
		n++;
	}
	CHECK(n == 1, "provider registered %u time(s) from %s", n, path);
	return n == 1 ? found : NULL;
}

static void check_descriptor(const struct verbs_device_ops *ops)
{
	const struct verbs_match_ent *m;
	unsigned int n = 0, ids = 0;

	CHECK(ops->name && !strcmp(ops->name, "softhca"), "name is \"%s\"",
	      ops->name ? ops->name : "(null)");
	CHECK(ops->match_min_abi_version == SOFTHCA_UVERBS_ABI_VERSION &&
	      ops->match_max_abi_version == SOFTHCA_UVERBS_ABI_VERSION,
	      "uverbs ABI range %u..%u (kernel reports %u)",
	      ops->match_min_abi_version, ops->match_max_abi_version,
	      SOFTHCA_UVERBS_ABI_VERSION);
	CHECK(ops->alloc_device && ops->uninit_device && ops->alloc_context,
	      "alloc_device, uninit_device, alloc_context set");
	CHECK(!ops->match_device && !ops->import_context &&
	      !ops->static_providers,
	      "match_device, import_context, static_providers unset");
	if (!ops->match_table) {
		CHECK(0, "match table present");
		return;
	}
	for (m = ops->match_table; m->kind != VERBS_MATCH_SENTINEL && n < 64;
	     m++, n++)
		ids += m->kind == VERBS_MATCH_DRIVER_ID &&
		       m->u.driver_id == SOFTHCA_DRIVER_ID;
	CHECK(n == 1 && ids == 1,
	      "match table: %u entr%s, driver id 0x%08x matched %u time(s)",
	      n, n == 1 ? "y" : "ies", SOFTHCA_DRIVER_ID, ids);
}

/*
 * Drive alloc_context through the real libibverbs without a kernel: with
 * cmd_fd -1 the first uverbs call fails with EBADF, so this exercises
 * context allocation at our offsets, the core's initialisation of it, and
 * the provider's unwinding (uninit + free) back to a NULL return.
 */
static void check_alloc_context_unwind(const struct verbs_device_ops *ops)
{
	struct verbs_context *vctx;
	struct verbs_device *vdev;

	vdev = ops->alloc_device(NULL);
	CHECK(vdev, "alloc_device");
	if (!vdev)
		return;
	/* What the core's device discovery would have filled in. */
	vdev->ops = ops;
	atomic_init(&vdev->refcount, 1);
	strcpy(vdev->device.name, "softhca-test");

	errno = 0;
	vctx = ops->alloc_context(&vdev->device, -1, NULL);
	CHECK(!vctx && errno == EBADF,
	      "alloc_context without kernel fails cleanly (errno %d, want %d)",
	      errno, EBADF);
	CHECK(atomic_load(&vdev->refcount) == 1,
	      "device reference dropped on failure");
	ops->uninit_device(vdev);
}

/* With a real device: open it and run the queries the provider answers. */
static void check_device(struct ibv_device *dev)
{
	const char *name = ibv_get_device_name(dev);
	struct ibv_device_attr_ex attr = {};
	struct ibv_port_attr pattr;
	struct ibv_context *ctx;
	int err;

	ctx = ibv_open_device(dev);
	CHECK(ctx, "%s: ibv_open_device%s%s", name, ctx ? "" : ": ",
	      ctx ? "" : strerror(errno));
	if (!ctx)
		return;
	err = ibv_query_device_ex(ctx, NULL, &attr);
	CHECK(!err && attr.orig_attr.phys_port_cnt >= 1,
	      "%s: ibv_query_device_ex: %s, %u port(s)", name,
	      strerror(err), attr.orig_attr.phys_port_cnt);
	if (!err && attr.orig_attr.phys_port_cnt >= 1) {
		err = ibv_query_port(ctx, 1, &pattr);
		CHECK(!err, "%s: ibv_query_port(1): %s, state %d link_layer %d",
		      name, strerror(err), err ? 0 : pattr.state,
		      err ? 0 : pattr.link_layer);
	}
	CHECK(!ibv_close_device(ctx), "%s: ibv_close_device", name);
}

/*
 * ibv_get_device_list() fails outright (ENOSYS) when the kernel has no RDMA
 * stack at all; on a build host that only means there is nothing to list.
 */
static struct ibv_device **get_device_list(int *n)
{
	struct ibv_device **list = ibv_get_device_list(n);
	int err = errno;

	if (list) {
		CHECK(1, "ibv_get_device_list: %d device(s)", *n);
	} else if (access(SYSFS_UVERBS, F_OK)) {
		printf("info: ibv_get_device_list: %s (no %s: no RDMA stack here)\n",
		       strerror(err), SYSFS_UVERBS);
	} else {
		CHECK(0, "ibv_get_device_list: %s", strerror(err));
	}
	return list;
}

int main(void)
{
	const struct verbs_device_ops *ops;
	struct ibv_device **list;
	char so[PATH_MAX], path[PATH_MAX];
	const char *env = getenv("RDMAV_DRIVERS");
	int i, n, softhca_devs = 0;

	if (!env || env[0] != '/' || strpbrk(env, ":;")) {
		fprintf(stderr,
			"set RDMAV_DRIVERS to the absolute path of the provider without \"%s\"\n",
			PROVIDER_SUFFIX);
		return 2;
	}
	errno = 0;
	if (snprintf(so, sizeof(so), "%s%s", env, PROVIDER_SUFFIX) >=
	    (int)sizeof(so) || !realpath(so, path)) {
		fprintf(stderr, "%s%s: %s\n", env, PROVIDER_SUFFIX,
			strerror(errno ? errno : ENAMETOOLONG));
		return 2;
	}

	list = get_device_list(&n);
	for (i = 0; list && i < n; i++) {
		const char *name = ibv_get_device_name(list[i]);

		printf("      device %s\n", name);
		if (strncmp(name, "softhca", 7))
			continue;
		softhca_devs++;
		check_device(list[i]);
	}
	if (list)
		ibv_free_device_list(list);

	if (softhca_devs) {
		CHECK(mapped(path), "libibverbs loaded %s", path);
	} else if (mapped(path)) {
		printf("info: libibverbs loaded the provider; no softhca device present\n");
	} else {
		void *h;

		printf("info: no softhca device, libibverbs loads no provider; loading it the way libibverbs does\n");
		h = dlopen(path, RTLD_NOW);
		CHECK(h, "dlopen(RTLD_NOW) %s%s%s", path, h ? "" : ": ",
		      h ? "" : dlerror());
		if (!h)
			goto out;
		CHECK(mapped(path), "%s mapped", path);
		/* Keep it loaded: the core now holds a pointer into it. */
	}

	CHECK(!forward_failed, "forwarded registration to libibverbs");
	ops = our_registration(path);
	if (ops) {
		check_descriptor(ops);
		check_alloc_context_unwind(ops);
	}

	/* The core must cope with the extra registered provider. */
	list = get_device_list(&n);
	if (list)
		ibv_free_device_list(list);
out:
	printf("%s\n", failures ? "load-test: FAILED" : "load-test: PASSED");
	return failures ? 1 : 0;
}
