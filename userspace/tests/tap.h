/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * What the guest test programs share: TAP output (one "ok N - what" or
 * "not ok N - what" line per check, then the plan and a summary), and
 * opening a device by name.  Header-only: each program is one file.
 */
#ifndef SOFTHCA_TEST_TAP_H
#define SOFTHCA_TEST_TAP_H

#include <stdio.h>
#include <string.h>

#include <infiniband/verbs.h>

static int tap_checks, tap_failed;

static inline void tap(int ok, const char *what, const char *detail)
{
	tap_checks++;
	tap_failed += !ok;
	printf("%sok %d - %s%s%s\n", ok ? "" : "not ", tap_checks, what,
	       detail ? ": " : "", detail ? detail : "");
}

/*
 * A check of a known fault of another implementation's, @todo saying
 * which (or NULL: tap()): TAP's TODO, reported, never counted as failed.
 */
static inline void tap_todo(int ok, const char *what, const char *detail,
			    const char *todo)
{
	if (!todo) {
		tap(ok, what, detail);
		return;
	}
	tap_checks++;
	printf("%sok %d - %s%s%s # TODO %s\n", ok ? "" : "not ", tap_checks,
	       what, detail ? ": " : "", detail ? detail : "", todo);
}

/* The plan and the summary; the exit status of the program. */
static inline int tap_done(void)
{
	printf("1..%d\n# %d passed, %d failed\n", tap_checks,
	       tap_checks - tap_failed, tap_failed);
	return tap_failed ? 1 : 0;
}

/*
 * Opens device @name of @list (from ibv_get_device_list()), or says why
 * not on stderr.  Returns the context, or NULL.
 */
static inline struct ibv_context *tap_open(struct ibv_device **list,
					   const char *name)
{
	struct ibv_context *ctx;
	int i;

	for (i = 0; list && list[i]; i++) {
		if (strcmp(ibv_get_device_name(list[i]), name))
			continue;
		ctx = ibv_open_device(list[i]);
		if (!ctx)
			perror(name);
		return ctx;
	}
	fprintf(stderr, "no device %s\n", name);
	return NULL;
}

#endif /* SOFTHCA_TEST_TAP_H */
