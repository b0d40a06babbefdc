// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * rds-check ADDR: RDS over RDMA on the device that owns ADDR, the kernel's
 * RDS being the consumer (rds-tools is not packaged).  Two RDS sockets on
 * ADDR, each forced onto RDS_TRANS_IB before bind (so no TCP or loopback
 * transport can stand in):
 * - messages of many sizes, each with its sequence number and a pattern,
 *   sent in windows and received in order, checked byte for byte;
 * - an RDMA WRITE of RDS's: the receiver maps a buffer (RDS_CMSG_RDMA_MAP,
 *   a fast-registration MR on the device), the sender writes into it and
 *   asks to be told when it is done (RDS_RDMA_NOTIFY_ME); the buffer is
 *   compared;
 * - RDS's own view: the connection's transport is "infiniband", and its
 *   RDMA connection's GIDs are the device's.
 * TAP output; exit 0 when every check passed.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <linux/rds.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include "tap.h"

#define SEND_PORT	18634
#define RECV_PORT	18635
#define WINDOW		8
#define MAX_MSG		(64 * 1024 + 1)
#define RDMA_BYTES	(256 * 1024)
#define SOCK_BUF	(4 * 1024 * 1024)
#define TIMEOUT_MS	20000

static const size_t sizes[] = {
	1, 7, 64, 511, 4096, 4097, 8192, 12345, 32768, 65536, MAX_MSG,
};

static struct sockaddr_in addr_of(struct in_addr ip, uint16_t port)
{
	struct sockaddr_in sin = {
		.sin_family = AF_INET,
		.sin_port = htons(port),
		.sin_addr = ip,
	};

	return sin;
}

/* An RDS socket on @ip:@port, its transport forced to RDS_TRANS_IB. */
static int rds_socket(struct in_addr ip, uint16_t port)
{
	struct sockaddr_in sin = addr_of(ip, port);
	int trans = RDS_TRANS_IB, buf = SOCK_BUF;
	int fd;

	fd = socket(AF_RDS, SOCK_SEQPACKET, 0);
	if (fd < 0) {
		perror("socket(AF_RDS)");
		return -1;
	}
	if (setsockopt(fd, SOL_RDS, SO_RDS_TRANSPORT, &trans, sizeof(trans)) ||
	    setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &buf, sizeof(buf)) ||
	    setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &buf, sizeof(buf)) ||
	    bind(fd, (struct sockaddr *)&sin, sizeof(sin))) {
		perror("rds socket setup");
		close(fd);
		return -1;
	}
	return fd;
}

static int wait_for(int fd, short events)
{
	struct pollfd p = { .fd = fd, .events = events };

	return poll(&p, 1, TIMEOUT_MS) == 1 ? 0 : -1;
}

static unsigned char pattern(uint32_t seq, size_t i)
{
	return (unsigned char)(seq * 31 + i * 7 + (i >> 8));
}

static void fill(unsigned char *buf, uint32_t seq, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++)
		buf[i] = pattern(seq, i);
}

/* Index of the first byte of @buf that is not the pattern, or @len. */
static size_t first_bad(const unsigned char *buf, uint32_t seq, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (buf[i] != pattern(seq, i))
			break;
	return i;
}

static int send_msg(int fd, const struct sockaddr_in *to, const void *buf,
		    size_t len, struct cmsghdr *cmsg, size_t cmsg_len)
{
	struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };
	struct msghdr msg = {
		.msg_name = (void *)to, .msg_namelen = sizeof(*to),
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = cmsg, .msg_controllen = cmsg_len,
	};
	int tries;

	/*
	 * A full send queue (ENOBUFS) or a connection still coming up for a
	 * mapping (EAGAIN): wait for room, as RDS asks, then try again.
	 */
	for (tries = 0; tries < TIMEOUT_MS; tries++) {
		if (sendmsg(fd, &msg, 0) == (ssize_t)len)
			return 0;
		if ((errno != ENOBUFS && errno != EAGAIN) ||
		    wait_for(fd, POLLOUT))
			return -1;
		usleep(1000);
	}
	return -1;
}

/* Messages of every size, WINDOW in flight, checked on arrival. */
static void check_messages(int tx, int rx, const struct sockaddr_in *to,
			   int rounds)
{
	unsigned char *out = malloc(MAX_MSG), *in = malloc(MAX_MSG + 1);
	size_t nsizes = sizeof(sizes) / sizeof(sizes[0]);
	uint32_t sent = 0, got = 0, total = rounds * nsizes;
	char detail[160] = "";
	int ok = out && in;

	while (ok && got < total) {
		size_t len = sizes[got % nsizes], bad;
		ssize_t n;

		while (sent < total && sent - got < WINDOW) {
			size_t out_len = sizes[sent % nsizes];

			fill(out, sent, out_len);
			if (send_msg(tx, to, out, out_len, NULL, 0)) {
				snprintf(detail, sizeof(detail),
					 "send %u (%zu bytes): %s", sent,
					 out_len, strerror(errno));
				ok = 0;
				break;
			}
			sent++;
		}
		if (!ok)
			break;
		if (wait_for(rx, POLLIN)) {
			snprintf(detail, sizeof(detail),
				 "message %u not received in %d ms", got,
				 TIMEOUT_MS);
			ok = 0;
			break;
		}
		n = recv(rx, in, MAX_MSG + 1, 0);
		if (n != (ssize_t)len) {
			snprintf(detail, sizeof(detail),
				 "message %u: %zd bytes, expected %zu", got, n,
				 len);
			ok = 0;
			break;
		}
		bad = first_bad(in, got, len);
		if (bad != len) {
			snprintf(detail, sizeof(detail),
				 "message %u: byte %zu differs", got, bad);
			ok = 0;
			break;
		}
		got++;
	}
	if (ok)
		snprintf(detail, sizeof(detail), "%u messages, %zu sizes, in order",
			 got, nsizes);
	tap(ok, "messages", detail);
	free(out);
	free(in);
}

/* In @buf (@space bytes, zeroed first): an RDS control message of @type. */
static struct cmsghdr *cmsg_init(void *buf, size_t space, int type,
				 const void *data, size_t len)
{
	struct cmsghdr *c = buf;

	memset(buf, 0, space);
	c->cmsg_level = SOL_RDS;
	c->cmsg_type = type;
	c->cmsg_len = CMSG_LEN(len);
	memcpy(CMSG_DATA(c), data, len);
	return c;
}

/*
 * recvmsg() of one message or notification on @fd into @buf, its RDS
 * control message of @type copied to @data; returns the bytes received,
 * or -1 when none came or recvmsg() failed.
 */
static ssize_t recv_with(int fd, void *buf, size_t len, int type, void *data,
			 size_t data_len)
{
	char cbuf[CMSG_SPACE(sizeof(struct rds_rdma_args))];
	struct iovec iov = { .iov_base = buf, .iov_len = len };
	struct msghdr msg = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = cbuf, .msg_controllen = sizeof(cbuf),
	};
	struct cmsghdr *c;
	ssize_t n;

	if (wait_for(fd, POLLIN))
		return -1;
	n = recvmsg(fd, &msg, 0);
	if (n < 0)
		return -1;
	for (c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c))
		if (c->cmsg_level == SOL_RDS && c->cmsg_type == type &&
		    c->cmsg_len >= CMSG_LEN(data_len))
			memcpy(data, CMSG_DATA(c), data_len);
	return n;
}

/*
 * RDS's RDMA, as its users do it: the receiver maps a buffer
 * (RDS_CMSG_RDMA_MAP, a fast-registration MR on the device) in a message
 * to the sender, which gets the cookie with it (RDS_CMSG_RDMA_DEST),
 * RDMA-writes into the buffer with a message of its own and asks to be
 * told when the write completed (RDS_RDMA_NOTIFY_ME).  The buffer is
 * compared when the sender's message arrives, which RDS delivers after
 * the data it carried.
 */
static void check_rdma_write(int tx, int rx, struct in_addr ip)
{
	char cbuf[CMSG_SPACE(sizeof(struct rds_rdma_args))];
	struct sockaddr_in to_tx = addr_of(ip, SEND_PORT);
	struct sockaddr_in to_rx = addr_of(ip, RECV_PORT);
	rds_rdma_cookie_t cookie = 0, dest = 0;
	struct rds_rdma_notify notify = { 0 };
	struct rds_rdma_args args = { 0 };
	struct rds_get_mr_args mr = { 0 };
	unsigned char *dst, *src, in[16];
	struct rds_iovec local;
	char detail[160] = "";
	struct cmsghdr *c;
	size_t bad;
	int ok = 0;

	dst = mmap(NULL, RDMA_BYTES, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	src = mmap(NULL, RDMA_BYTES, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (dst == MAP_FAILED || src == MAP_FAILED) {
		tap(0, "rdma-write", "mmap failed");
		return;
	}
	memset(dst, 0, RDMA_BYTES);
	fill(src, 0xabc, RDMA_BYTES);

	mr.vec.addr = (uintptr_t)dst;
	mr.vec.bytes = RDMA_BYTES;
	mr.cookie_addr = (uintptr_t)&cookie;
	mr.flags = RDS_RDMA_READWRITE | RDS_RDMA_USE_ONCE;
	c = cmsg_init(cbuf, sizeof(cbuf), RDS_CMSG_RDMA_MAP, &mr, sizeof(mr));
	if (send_msg(rx, &to_tx, "m", 1, c, CMSG_SPACE(sizeof(mr)))) {
		snprintf(detail, sizeof(detail), "sendmsg(RDMA_MAP): %s",
			 strerror(errno));
		goto out;
	}
	if (recv_with(tx, in, sizeof(in), RDS_CMSG_RDMA_DEST, &dest,
		      sizeof(dest)) != 1 || !cookie || dest != cookie) {
		snprintf(detail, sizeof(detail),
			 "the mapping's cookie %#llx came as %#llx",
			 (unsigned long long)cookie, (unsigned long long)dest);
		goto out;
	}

	local.addr = (uintptr_t)src;
	local.bytes = RDMA_BYTES;
	args.cookie = dest;
	args.remote_vec.bytes = RDMA_BYTES;
	args.local_vec_addr = (uintptr_t)&local;
	args.nr_local = 1;
	args.flags = RDS_RDMA_READWRITE | RDS_RDMA_NOTIFY_ME;
	args.user_token = 0x5eed;
	c = cmsg_init(cbuf, sizeof(cbuf), RDS_CMSG_RDMA_ARGS, &args,
		      sizeof(args));
	if (send_msg(tx, &to_rx, "w", 1, c, sizeof(cbuf))) {
		snprintf(detail, sizeof(detail), "sendmsg(RDMA_ARGS): %s",
			 strerror(errno));
		goto out;
	}

	if (wait_for(rx, POLLIN) || recv(rx, in, sizeof(in), 0) != 1 ||
	    in[0] != 'w') {
		snprintf(detail, sizeof(detail), "the message did not arrive");
		goto out;
	}
	bad = first_bad(dst, 0xabc, RDMA_BYTES);
	if (bad != RDMA_BYTES) {
		snprintf(detail, sizeof(detail),
			 "byte %zu of the written buffer differs", bad);
		goto out;
	}
	if (recv_with(tx, in, sizeof(in), RDS_CMSG_RDMA_STATUS, &notify,
		      sizeof(notify)) < 0 || notify.user_token != 0x5eed ||
	    notify.status != RDS_RDMA_SUCCESS) {
		snprintf(detail, sizeof(detail),
			 "notification: token %#llx status %d",
			 (unsigned long long)notify.user_token, notify.status);
		goto out;
	}
	snprintf(detail, sizeof(detail), "%d KiB written, notified",
		 RDMA_BYTES / 1024);
	ok = 1;
out:
	tap(ok, "rdma-write", detail);
	munmap(dst, RDMA_BYTES);
	munmap(src, RDMA_BYTES);
}

/* getsockopt(RDS_INFO_*) into a buffer grown until it fits. */
static void *rds_info(int fd, int what, socklen_t *len, int *each)
{
	void *buf = NULL;

	*len = 0;
	for (;;) {
		*each = getsockopt(fd, SOL_RDS, what, buf, len);
		if (*each >= 0)
			return buf;
		free(buf);
		if (errno != ENOSPC)
			return NULL;
		buf = malloc(*len ? *len : 1);
		if (!buf)
			return NULL;
	}
}

static void gid_str(const uint8_t *gid, char *s, size_t n)
{
	inet_ntop(AF_INET6, gid, s, n);
}

/* RDS's own view: the connection to ADDR is its IB transport's. */
static void check_rds_view(int fd, struct in_addr ip)
{
	struct rds_info_rdma_connection *ib;
	struct rds_info_connection *conn;
	char detail[200] = "no connection to the address";
	char sgid[INET6_ADDRSTRLEN], dgid[INET6_ADDRSTRLEN];
	int each, ok = 0;
	socklen_t len, off;

	conn = rds_info(fd, RDS_INFO_CONNECTIONS, &len, &each);
	for (off = 0; conn && each > 0 && off + each <= len; off += each) {
		struct rds_info_connection *c = (void *)((char *)conn + off);

		if (c->laddr != ip.s_addr || c->faddr != ip.s_addr)
			continue;
		ok = !strcmp((char *)c->transport, "infiniband");
		snprintf(detail, sizeof(detail), "transport %.*s",
			 TRANSNAMSIZ, c->transport);
	}
	free(conn);
	tap(ok, "transport-is-ib", detail);

	ok = 0;
	snprintf(detail, sizeof(detail), "no RDMA connection");
	ib = rds_info(fd, RDS_INFO_IB_CONNECTIONS, &len, &each);
	for (off = 0; ib && each > 0 && off + each <= len; off += each) {
		struct rds_info_rdma_connection *c = (void *)((char *)ib + off);

		if (c->src_addr != ip.s_addr)
			continue;
		gid_str(c->src_gid, sgid, sizeof(sgid));
		gid_str(c->dst_gid, dgid, sizeof(dgid));
		snprintf(detail, sizeof(detail),
			 "gids %s -> %s, %u send WRs, %u send SGEs", sgid, dgid,
			 c->max_send_wr, c->max_send_sge);
		ok = c->max_send_wr > 0;
	}
	free(ib);
	tap(ok, "ib-connection", detail);
}

int main(int argc, char **argv)
{
	struct sockaddr_in to;
	struct in_addr ip;
	int tx, rx;

	if (argc != 2 || inet_pton(AF_INET, argv[1], &ip) != 1) {
		fprintf(stderr, "usage: %s IPV4-ADDR\n", argv[0]);
		return 2;
	}
	tx = rds_socket(ip, SEND_PORT);
	rx = rds_socket(ip, RECV_PORT);
	tap(tx >= 0 && rx >= 0, "sockets", "RDS_TRANS_IB, bound");
	if (tx < 0 || rx < 0)
		return tap_done();
	to = addr_of(ip, RECV_PORT);

	check_messages(tx, rx, &to, 20);
	check_rdma_write(tx, rx, ip);
	check_rds_view(tx, ip);
	close(tx);
	close(rx);
	return tap_done();
}
