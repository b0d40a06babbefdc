/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Address vectors (of AHs, and of connected QPs' paths) and address
 * handles: RoCEv2 destinations for UD sends.
 */
#ifndef SHCA_AH_H
#define SHCA_AH_H

#include <rdma/ib_verbs.h>

struct shca_dev;

/*
 * A RoCEv2 address vector as the data path needs it: the attributes
 * without the sgid_attr reference ib_core holds only for the verb's
 * duration, and what that attribute resolved to.  peer caches which
 * softhca device of this host owns the destination GID (NULL: none did),
 * valid while the device generation is still peer_gen.
 */
struct shca_av {
	struct rdma_ah_attr attr;
	union ib_gid sgid;
	enum rdma_network_type net_type;
	int ifindex;			/* the source GID's netdev */
	struct shca_dev *peer;
	unsigned int peer_gen;
};

struct shca_ah {
	struct ib_ah ibah;
	struct shca_av av;
	u32 num;			/* names the AH in a UD work request */
};

static inline struct shca_ah *to_shca_ah(struct ib_ah *ibah)
{
	return container_of(ibah, struct shca_ah, ibah);
}

int shca_av_check(struct ib_device *ibdev, const struct rdma_ah_attr *attr);
void shca_av_set(struct shca_av *av, const struct shca_dev *dev,
		 const struct rdma_ah_attr *attr);

int shca_create_ah(struct ib_ah *ibah, struct rdma_ah_init_attr *init_attr,
		   struct ib_udata *udata);
int shca_query_ah(struct ib_ah *ibah, struct rdma_ah_attr *attr);
int shca_destroy_ah(struct ib_ah *ibah, u32 flags);

#endif /* SHCA_AH_H */
