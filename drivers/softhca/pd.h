/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Protection domains. */
#ifndef SHCA_PD_H
#define SHCA_PD_H

#include <rdma/ib_verbs.h>

struct shca_pd {
	struct ib_pd ibpd;
};

static inline struct shca_pd *to_shca_pd(struct ib_pd *ibpd)
{
	return container_of(ibpd, struct shca_pd, ibpd);
}

int shca_alloc_pd(struct ib_pd *ibpd, struct ib_udata *udata);
int shca_dealloc_pd(struct ib_pd *ibpd, struct ib_udata *udata);

#endif /* SHCA_PD_H */
