// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The RoCEv2 invariant CRC (icrc.h).
 *
 * The headers it covers (IP, UDP, BTH) are copied and their variant
 * fields set to ones in the copy; the CRC runs over the copy, then over
 * the rest of the packet where it lies: the skb's head, page fragments
 * and frag list.
 */

#include <linux/bug.h>
#include <linux/crc32.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/string.h>
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

/*
 * The CRC of the masked copy @h of the headers: what a router may
 * rewrite (IPv4 TOS and TTL, and so the header checksum; IPv6 traffic
 * class, flow label and hop limit; the UDP checksum; FECN and BECN in the
 * BTH's resv8a byte) counts as ones, and 64 bits of ones come first, in
 * the place of InfiniBand's local route header.
 */
static u32 shca_icrc_hdrs(u8 *h, unsigned int hlen, bool ipv6)
{
	static const u8 lrh[8] = { [0 ... 7] = 0xff };
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
	return crc32_le(crc32_le(~0U, lrh, sizeof(lrh)), h, hlen);
}

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
 * @skb.
 *
 * Context: any.
 * Return: the ICRC, which goes in the last 4 bytes least significant byte
 * first; 0 if @len does not fit (a caller bug, warned about).
 */
u32 shca_icrc_skb(struct sk_buff *skb, unsigned int l3_off,
		  unsigned int len, bool ipv6)
{
	u8 h[SHCA_ICRC_HDRS_MAX] __aligned(8);
	unsigned int hlen, rest, done = 0, n;
	struct skb_seq_state seq;
	const u8 *p;
	u32 crc;

	if (WARN_ON_ONCE(l3_off > skb->len || len > skb->len - l3_off) ||
	    skb_copy_bits(skb, l3_off, h, 1))
		return 0;
	hlen = shca_icrc_hdrs_len(h[0], len, ipv6);
	if (!hlen || skb_copy_bits(skb, l3_off, h, hlen))
		return 0;
	crc = shca_icrc_hdrs(h, hlen, ipv6);
	/*
	 * A CRC goes on from where it stopped: piece by piece, as they lie.
	 * A piece may run past the end asked for.
	 */
	rest = len - hlen - SHCA_ICRC_LEN;
	skb_prepare_seq_read(skb, l3_off + hlen, l3_off + hlen + rest, &seq);
	while (done < rest && (n = skb_seq_read(done, &p, &seq))) {
		n = min(n, rest - done);
		crc = crc32_le(crc, p, n);
		done += n;
	}
	skb_abort_seq_read(&seq);
	return ~crc;
}
EXPORT_SYMBOL_IF_KUNIT(shca_icrc_skb);
