/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Address handles: RoCEv2 address vectors for UD sends. */
#ifndef SHCA_AH_H
#define SHCA_AH_H

#include <rdma/ib_verbs.h>

struct shca_ah {
	struct ib_ah ibah;
	/* The attributes as created, without the sgid_attr ib_core holds. */
	struct rdma_ah_attr attr;
	enum rdma_network_type net_type;
};

static inline struct shca_ah *to_shca_ah(struct ib_ah *ibah)
{
	return container_of(ibah, struct shca_ah, ibah);
}

int shca_create_ah(struct ib_ah *ibah, struct rdma_ah_init_attr *init_attr,
		   struct ib_udata *udata);
int shca_query_ah(struct ib_ah *ibah, struct rdma_ah_attr *attr);
int shca_destroy_ah(struct ib_ah *ibah, u32 flags);

#endif /* SHCA_AH_H */
