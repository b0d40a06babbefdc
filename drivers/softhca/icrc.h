/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The RoCEv2 invariant CRC (IBA Annex A17): the CRC-32 of Ethernet over
 * the packet from the IP header to the end of the UDP payload, the ICRC
 * excluded, with every field a router may rewrite replaced by ones, and
 * 64 bits of ones in front, where InfiniBand has its local route header.
 *
 * On the wire the ICRC's least significant byte comes first, as in an
 * Ethernet FCS: the trailing 4 bytes are a __le32.  rdma_rxe stores the
 * CRC in CPU byte order, which is that on the little-endian hosts it
 * interoperates from.
 */
#ifndef SHCA_ICRC_H
#define SHCA_ICRC_H

#include <linux/skbuff.h>
#include <linux/types.h>

#include "wire.h"

struct crypto_shash;

int shca_icrc_init(void);
void shca_icrc_exit(void);
u32 shca_icrc_skb(struct sk_buff *skb, unsigned int l3_off,
		  unsigned int len, bool ipv6);

#if IS_ENABLED(CONFIG_KUNIT)
/* Each CRC-32 on its own, for the tests that hold them to each other. */
extern struct crypto_shash *shca_icrc_tfm;
u32 shca_icrc_skb_by(struct crypto_shash *tfm, struct sk_buff *skb,
		     unsigned int l3_off, unsigned int len, bool ipv6);
#endif

#endif /* SHCA_ICRC_H */
