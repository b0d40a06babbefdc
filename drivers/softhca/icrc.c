// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The RoCEv2 invariant CRC (icrc.h).
 *
 * The headers it covers (IP, UDP, BTH) are copied and their variant
 * fields set to ones in the copy; the CRC runs over the copy, then over
 * the rest of the packet where it lies: the skb's head, page fragments
 * and frag list.
 *
 * Two CRC-32s can compute it: crc32_le(), table-driven on x86 in 6.1 and
 * 6.12, and the crypto API's "crc32", which is crc32-pclmul on a CPU with
 * PCLMULQDQ and an arch's own elsewhere.  Which is faster depends on the
 * CPU (and under QEMU's TCG, which emulates PCLMULQDQ, on the emulator),
 * so both are timed at load, as raid6 times its syndromes, and the faster
 * one is used, unless the icrc module parameter names one.
 */

#include <crypto/hash.h>
#include <linux/bug.h>
#include <linux/crc32.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/ktime.h>
#include <linux/minmax.h>
#include <linux/moduleparam.h>
#include <linux/random.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/sysfs.h>
#include <linux/udp.h>
#include <kunit/visibility.h>

#include "icrc.h"

/* The longest headers the ICRC masks: IPv4 with options, UDP, BTH. */
#define SHCA_ICRC_HDRS_MAX						\
	(15 * 4 + sizeof(struct udphdr) + sizeof(struct shca_bth))

/*
 * Bytes of the IP, UDP and base transport headers, from the IP header's
 * first byte; 0, and a warning, if @len cannot hold them and the ICRC:
 * callers pass packets shca_pkt_parse() and the IP stack have accepted.
 * IPv6 extension headers are not supported: UDP follows at byte 40.
 */
static unsigned int shca_icrc_hdrs_len(u8 first, unsigned int len, bool ipv6)
{
	unsigned int hlen = sizeof(struct udphdr) + sizeof(struct shca_bth);

	hlen += ipv6 ? sizeof(struct ipv6hdr) : (first & 0xf) * 4;
	return WARN_ON_ONCE(len < hlen + SHCA_ICRC_LEN) ? 0 : hlen;
}

/* 64 bits of ones, in the place of InfiniBand's local route header. */
static const u8 shca_icrc_lrh[8] = { [0 ... 7] = 0xff };

/* The crypto API's crc32, seeded with ones; NULL if it has none. */
VISIBLE_IF_KUNIT struct crypto_shash *shca_icrc_tfm __ro_after_init;
EXPORT_SYMBOL_IF_KUNIT(shca_icrc_tfm);
/* shca_icrc_tfm is faster than crc32_le() on this CPU. */
static bool shca_icrc_by_tfm __ro_after_init;

/* A CRC-32's state kept by the crypto API: a u32 in each implementation. */
#define SHCA_CRC_DESC_SIZE	(sizeof(struct shash_desc) + 8)

/* A CRC-32 under way, by crc32_le() if @desc is NULL, else by @desc. */
struct shca_crc {
	struct shash_desc *desc;
	u32 crc;
	u8 room[SHCA_CRC_DESC_SIZE] CRYPTO_MINALIGN_ATTR;
};

/* Start @c on @tfm, or on crc32_le() if @tfm is NULL; seeded with ones. */
static void shca_crc_start(struct shca_crc *c, struct crypto_shash *tfm)
{
	c->crc = ~0U;
	c->desc = NULL;
	if (!tfm)
		return;
	c->desc = (struct shash_desc *)c->room;
	c->desc->tfm = tfm;
	crypto_shash_init(c->desc);
}

/* A CRC-32's update cannot fail: the crypto API's return is not read. */
static void shca_crc_add(struct shca_crc *c, const void *p, unsigned int n)
{
	if (c->desc)
		crypto_shash_update(c->desc, p, n);
	else
		c->crc = crc32_le(c->crc, p, n);
}

/* The CRC-32 of what @c was given, not yet inverted. */
static u32 shca_crc_end(struct shca_crc *c)
{
	__le32 out;

	if (!c->desc)
		return c->crc;
	crypto_shash_final(c->desc, (u8 *)&out);
	return le32_to_cpu(out);
}

/*
 * Mask the copy @h of the headers: what a router may rewrite (IPv4 TOS
 * and TTL, and so the header checksum; IPv6 traffic class, flow label and
 * hop limit; the UDP checksum; FECN and BECN in the BTH's resv8a byte)
 * counts as ones.  Then run @c over 64 bits of ones, in the place of
 * InfiniBand's local route header, and over @h.
 */
static void shca_icrc_hdrs(struct shca_crc *c, u8 *h, unsigned int hlen,
			   bool ipv6)
{
	struct udphdr *udp = (void *)(h + hlen - sizeof(struct shca_bth) -
				      sizeof(struct udphdr));
	struct shca_bth *bth = (void *)(udp + 1);
	struct ipv6hdr *ip6 = (void *)h;
	struct iphdr *ip4 = (void *)h;

	if (ipv6) {
		ip6->priority = 0xf;
		memset(ip6->flow_lbl, 0xff, sizeof(ip6->flow_lbl));
		ip6->hop_limit = 0xff;
	} else {
		ip4->tos = 0xff;
		ip4->ttl = 0xff;
		memset(&ip4->check, 0xff, sizeof(ip4->check));
	}
	memset(&udp->check, 0xff, sizeof(udp->check));
	bth->qpn |= cpu_to_be32(SHCA_BTH_RESV8A);
	shca_crc_add(c, shca_icrc_lrh, sizeof(shca_icrc_lrh));
	shca_crc_add(c, h, hlen);
}

/*
 * The ICRC by @tfm, or by crc32_le() if @tfm is NULL; shca_icrc_skb()
 * says the rest.
 */
VISIBLE_IF_KUNIT u32 shca_icrc_skb_by(struct crypto_shash *tfm,
				      struct sk_buff *skb, unsigned int l3_off,
				      unsigned int len, bool ipv6)
{
	u8 h[SHCA_ICRC_HDRS_MAX] __aligned(8);
	unsigned int hlen, rest, done = 0, n;
	struct skb_seq_state seq;
	struct shca_crc c;
	const u8 *p;

	if (WARN_ON_ONCE(l3_off > skb->len || len > skb->len - l3_off) ||
	    skb_copy_bits(skb, l3_off, h, 1))
		return 0;
	hlen = shca_icrc_hdrs_len(h[0], len, ipv6);
	if (!hlen || skb_copy_bits(skb, l3_off, h, hlen))
		return 0;
	shca_crc_start(&c, tfm);
	shca_icrc_hdrs(&c, h, hlen, ipv6);
	/*
	 * A CRC goes on from where it stopped: piece by piece, as they lie.
	 * A piece may run past the end asked for.
	 */
	rest = len - hlen - SHCA_ICRC_LEN;
	skb_prepare_seq_read(skb, l3_off + hlen, l3_off + hlen + rest, &seq);
	while (done < rest && (n = skb_seq_read(done, &p, &seq))) {
		n = min(n, rest - done);
		shca_crc_add(&c, p, n);
		done += n;
	}
	skb_abort_seq_read(&seq);
	return ~shca_crc_end(&c);
}
EXPORT_SYMBOL_IF_KUNIT(shca_icrc_skb_by);

/**
 * shca_icrc_skb() - the ICRC of a RoCEv2 packet in an skb
 * @skb: the packet; its bytes may be in the head, page fragments or the
 *	frag list
 * @l3_off: offset of the IP header in @skb's data
 * @len: bytes from the IP header to the end of the UDP payload, ICRC
 *	included
 * @ipv6: the IP header is IPv6's, else IPv4's
 *
 * @len must cover the IP and UDP headers, a BTH and the ICRC, and lie in
 * @skb.  The CRC-32 is the one shca_icrc_init() found faster.
 *
 * Context: any.
 * Return: the ICRC, which goes in the last 4 bytes least significant byte
 * first; 0 if @len does not fit (a caller bug, warned about).
 */
u32 shca_icrc_skb(struct sk_buff *skb, unsigned int l3_off,
		  unsigned int len, bool ipv6)
{
	return shca_icrc_skb_by(shca_icrc_by_tfm ? shca_icrc_tfm : NULL, skb,
				l3_off, len, ipv6);
}
EXPORT_SYMBOL_IF_KUNIT(shca_icrc_skb);

/* What one 1 KiB packet's CRC-32 costs: 64 bits of ones, headers, payload. */
#define SHCA_ICRC_TIME_HDRS	48
#define SHCA_ICRC_TIME_LEN	(SHCA_ICRC_TIME_HDRS + 1024)

/*
 * The fastest of 8 rounds of 16 packets, in ns per packet: the least is
 * the one nothing preempted.
 */
static u64 shca_icrc_time(struct crypto_shash *tfm, const u8 *buf)
{
	u64 best = U64_MAX, t;
	struct shca_crc c;
	unsigned int i, j;

	for (i = 0; i < 8; i++) {
		t = ktime_get_ns();
		for (j = 0; j < 16; j++) {
			shca_crc_start(&c, tfm);
			shca_crc_add(&c, shca_icrc_lrh,
				     sizeof(shca_icrc_lrh));
			shca_crc_add(&c, buf, SHCA_ICRC_TIME_HDRS);
			shca_crc_add(&c, buf + SHCA_ICRC_TIME_HDRS,
				     SHCA_ICRC_TIME_LEN - SHCA_ICRC_TIME_HDRS);
			shca_crc_end(&c);
		}
		best = min(best, ktime_get_ns() - t);
	}
	return best / 16;
}

/*
 * The crypto API's crc32, seeded with ones, if it has one whose state
 * fits struct shca_crc; NULL if not.
 */
static struct crypto_shash *shca_icrc_tfm_alloc(void)
{
	__le32 seed = cpu_to_le32(~0U);
	struct crypto_shash *tfm;

	tfm = crypto_alloc_shash("crc32", 0, 0);
	if (IS_ERR(tfm))
		return NULL;
	if (crypto_shash_descsize(tfm) > SHCA_CRC_DESC_SIZE -
					 sizeof(struct shash_desc) ||
	    crypto_shash_setkey(tfm, (u8 *)&seed, sizeof(seed))) {
		crypto_free_shash(tfm);
		return NULL;
	}
	return tfm;
}

/*
 * Which CRC-32: "auto" times both at load; "crc32_le" or "crypto" (the
 * crypto API's crc32, if it has one) forces one.  Read back, it names the
 * one in use.
 */
static char icrc[CRYPTO_MAX_ALG_NAME] = "auto";
module_param_string(icrc, icrc, sizeof(icrc), 0444);
MODULE_PARM_DESC(icrc,
		 "CRC-32 for the ICRC: auto (the faster, timed at load), crc32_le or crypto; reads back the one in use");

/**
 * shca_icrc_init() - choose the CRC-32 for the ICRC
 *
 * As the icrc parameter asks: by default, times crc32_le() and the
 * crypto API's crc32 (if it has one) over a 1 KiB packet and keeps the
 * faster.  The parameter then names the one in use.
 *
 * Context: process; at module load, before any packet.
 * Return: 0, or -EINVAL for an icrc value other than those above.
 */
int shca_icrc_init(void)
{
	bool by_auto = sysfs_streq(icrc, "auto");
	bool by_table = sysfs_streq(icrc, "crc32_le");
	u64 t_table, t_tfm;
	u8 *buf;

	if (!by_auto && !by_table && !sysfs_streq(icrc, "crypto"))
		return -EINVAL;
	if (!by_table)
		shca_icrc_tfm = shca_icrc_tfm_alloc();
	shca_icrc_by_tfm = shca_icrc_tfm && !by_auto;
	if (by_auto && shca_icrc_tfm) {
		buf = kmalloc(SHCA_ICRC_TIME_LEN, GFP_KERNEL);
		if (buf) {
			get_random_bytes(buf, SHCA_ICRC_TIME_LEN);
			t_table = shca_icrc_time(NULL, buf);
			t_tfm = shca_icrc_time(shca_icrc_tfm, buf);
			kfree(buf);
			shca_icrc_by_tfm = t_tfm < t_table;
		}
	}
	strscpy(icrc, shca_icrc_by_tfm ?
		crypto_shash_driver_name(shca_icrc_tfm) : "crc32_le",
		sizeof(icrc));
	return 0;
}

/**
 * shca_icrc_exit() - free what shca_icrc_init() took
 *
 * Context: process; at module unload, after the last packet.
 */
void shca_icrc_exit(void)
{
	crypto_free_shash(shca_icrc_tfm);
}
