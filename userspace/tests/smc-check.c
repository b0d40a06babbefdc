// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * smc-check: SMC-R between two hosts, the kernel's SMC being the consumer
 * (smc-tools is not packaged).
 *
 *   smc-check ueid EID
 *	adds EID to the kernel's user EID table (SMC's generic netlink, as
 *	smc-tools' `smcr ueid add` does); SMC-Rv2 is proposed only when both
 *	sides have one in common.
 *   smc-check serve ADDR PORT BYTES IBDEV
 *   smc-check connect ADDR PORT BYTES IBDEV
 *	one AF_SMC connection: the client sends BYTES of a pattern, the
 *	server checks every byte and sends BYTES of another back, which the
 *	client checks.  While the connection is up, each side asks SMC's
 *	own diagnostics whether it used RDMA: sock_diag says the socket is
 *	in SMC-R mode (not fallen back to TCP) on IBDEV, and the link group
 *	dump (SMC's generic netlink) says the link group is SMC-Rv2.
 *
 * TAP output; exit 0 when every check passed.
 */
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <linux/genetlink.h>
#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/smc.h>
#include <linux/smc_diag.h>
#include <linux/sock_diag.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tap.h"

#ifndef AF_SMC
#define AF_SMC		43
#endif
#define SMCPROTO_SMC	0	/* SMC over IPv4 (net/smc/smc.h) */
#define TIMEOUT_MS	60000
#define CHUNK		(64 * 1024)
#define NL_BUF		(64 * 1024)

/* Byte @i of direction @dir's stream: not periodic in any power of two. */
static uint8_t pattern(uint64_t i, int dir)
{
	return (uint8_t)(i * 131 + (i >> 11) * 7 + dir * 29);
}

/* --- netlink --------------------------------------------------------- */

static int nl_open(int proto)
{
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK };
	int fd;

	fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, proto);
	if (fd < 0)
		return -1;
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		close(fd);
		return -1;
	}
	return fd;
}

/* Appends attribute @type of @len bytes at @data to message @nlh. */
static void nl_put(struct nlmsghdr *nlh, uint16_t type, const void *data,
		   uint16_t len)
{
	struct nlattr *nla = (void *)((char *)nlh + NLMSG_ALIGN(nlh->nlmsg_len));

	nla->nla_type = type;
	nla->nla_len = NLA_HDRLEN + len;
	memcpy((char *)nla + NLA_HDRLEN, data, len);
	nlh->nlmsg_len = NLMSG_ALIGN(nlh->nlmsg_len) + NLA_ALIGN(nla->nla_len);
}

/* The first attribute of type @type in [@start, @start + @len), or NULL. */
static struct nlattr *nl_find(void *start, int len, uint16_t type)
{
	struct nlattr *nla = start;

	while (len >= NLA_HDRLEN && nla->nla_len >= NLA_HDRLEN &&
	       nla->nla_len <= len) {
		if ((nla->nla_type & NLA_TYPE_MASK) == type)
			return nla;
		len -= NLA_ALIGN(nla->nla_len);
		nla = (void *)((char *)nla + NLA_ALIGN(nla->nla_len));
	}
	return NULL;
}

typedef int (*nl_each_fn)(struct nlmsghdr *nlh, void *arg);

/*
 * Sends @req and reads the answer until NLMSG_DONE (a dump) or an ACK,
 * calling @each for every other message.  Returns 0, or a negative errno
 * (the kernel's, from an NLMSG_ERROR).
 */
static int nl_talk(int fd, struct nlmsghdr *req, nl_each_fn each, void *arg)
{
	static char buf[NL_BUF];
	int done = 0, rc = 0;

	if (send(fd, req, req->nlmsg_len, 0) != (ssize_t)req->nlmsg_len)
		return -errno;
	while (!done) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		struct nlmsghdr *nlh;
		ssize_t n;

		if (poll(&p, 1, TIMEOUT_MS) != 1)
			return -ETIMEDOUT;
		n = recv(fd, buf, sizeof(buf), 0);
		if (n < 0)
			return -errno;
		for (nlh = (void *)buf; NLMSG_OK(nlh, n); nlh = NLMSG_NEXT(nlh, n)) {
			if (nlh->nlmsg_type == NLMSG_DONE) {
				done = 1;
			} else if (nlh->nlmsg_type == NLMSG_ERROR) {
				struct nlmsgerr *e = NLMSG_DATA(nlh);

				rc = rc ? rc : e->error;
				if (!(req->nlmsg_flags & NLM_F_DUMP) || e->error)
					done = 1;
			} else if (each && !rc) {
				rc = each(nlh, arg);
			}
		}
	}
	return rc;
}

static int genl_family_of(struct nlmsghdr *nlh, void *arg)
{
	struct genlmsghdr *g = NLMSG_DATA(nlh);
	struct nlattr *id;

	id = nl_find((char *)g + GENL_HDRLEN,
		     nlh->nlmsg_len - NLMSG_HDRLEN - GENL_HDRLEN,
		     CTRL_ATTR_FAMILY_ID);
	if (id)
		memcpy(arg, (char *)id + NLA_HDRLEN, sizeof(uint16_t));
	return 0;
}

/* A generic netlink message for @cmd of @family, in @buf. */
static struct nlmsghdr *genl_msg(void *buf, uint16_t family, uint8_t cmd,
				 uint16_t flags)
{
	struct nlmsghdr *nlh = buf;
	struct genlmsghdr *g = NLMSG_DATA(nlh);

	memset(buf, 0, NLMSG_SPACE(GENL_HDRLEN));
	nlh->nlmsg_len = NLMSG_LENGTH(GENL_HDRLEN);
	nlh->nlmsg_type = family;
	nlh->nlmsg_flags = NLM_F_REQUEST | flags;
	g->cmd = cmd;
	g->version = SMC_GENL_FAMILY_VERSION;
	return nlh;
}

/* SMC's generic netlink family: its id, or 0 (smc not loaded). */
static uint16_t smc_family(int fd)
{
	char buf[NLMSG_SPACE(GENL_HDRLEN) + NLA_HDRLEN + 32];
	struct nlmsghdr *nlh;
	uint16_t id = 0;

	nlh = genl_msg(buf, GENL_ID_CTRL, CTRL_CMD_GETFAMILY, NLM_F_ACK);
	nl_put(nlh, CTRL_ATTR_FAMILY_NAME, SMC_GENL_FAMILY_NAME,
	       sizeof(SMC_GENL_FAMILY_NAME));
	if (nl_talk(fd, nlh, genl_family_of, &id))
		return 0;
	return id;
}

/* --- the user EID ---------------------------------------------------- */

static int add_ueid(const char *eid)
{
	char buf[NLMSG_SPACE(GENL_HDRLEN) + NLA_HDRLEN + 64];
	char entry[SMC_MAX_EID_LEN + 1];
	struct nlmsghdr *nlh;
	uint16_t family;
	int fd, rc;
	size_t i;

	if (strlen(eid) > SMC_MAX_EID_LEN) {
		fprintf(stderr, "smc-check: an EID has at most %d characters\n",
			SMC_MAX_EID_LEN);
		return 2;
	}
	/* SMC's form: upper case, padded with blanks to 32 characters. */
	memset(entry, ' ', SMC_MAX_EID_LEN);
	entry[SMC_MAX_EID_LEN] = '\0';
	for (i = 0; eid[i]; i++)
		entry[i] = (char)toupper((unsigned char)eid[i]);

	fd = nl_open(NETLINK_GENERIC);
	family = fd < 0 ? 0 : smc_family(fd);
	if (!family) {
		fprintf(stderr, "smc-check: no SMC generic netlink (is smc loaded?)\n");
		return 1;
	}
	nlh = genl_msg(buf, family, SMC_NETLINK_ADD_UEID, NLM_F_ACK);
	nl_put(nlh, SMC_NLA_EID_TABLE_ENTRY, entry, sizeof(entry));
	rc = nl_talk(fd, nlh, NULL, NULL);
	close(fd);
	if (rc && rc != -EEXIST) {
		fprintf(stderr, "smc-check: adding UEID %s: %s\n", entry,
			strerror(-rc));
		return 1;
	}
	printf("# UEID '%s' in SMC's table\n", entry);
	return 0;
}

/* --- SMC's diagnostics ----------------------------------------------- */

struct diag_seen {
	uint64_t inode;
	int found;
	uint8_t mode;
	char ibname[IB_DEVICE_NAME_MAX + 1];
	int has_lgr;
	struct smc_diag_fallback fallback;
};

static int diag_sock(struct nlmsghdr *nlh, void *arg)
{
	struct smc_diag_msg *m = NLMSG_DATA(nlh);
	struct diag_seen *seen = arg;
	struct nlattr *lgr, *fb;
	int len;

	if (nlh->nlmsg_len < NLMSG_LENGTH(sizeof(*m)) || m->diag_inode != seen->inode)
		return 0;
	seen->found = 1;
	seen->mode = m->diag_mode;
	len = nlh->nlmsg_len - NLMSG_LENGTH(NLMSG_ALIGN(sizeof(*m)));
	fb = nl_find((char *)m + NLMSG_ALIGN(sizeof(*m)), len, SMC_DIAG_FALLBACK);
	if (fb && fb->nla_len >= NLA_HDRLEN + sizeof(seen->fallback))
		memcpy(&seen->fallback, (char *)fb + NLA_HDRLEN,
		       sizeof(seen->fallback));
	lgr = nl_find((char *)m + NLMSG_ALIGN(sizeof(*m)), len, SMC_DIAG_LGRINFO);
	if (lgr && lgr->nla_len >= NLA_HDRLEN + sizeof(struct smc_diag_lgrinfo)) {
		struct smc_diag_lgrinfo *info = (void *)((char *)lgr + NLA_HDRLEN);

		memcpy(seen->ibname, info->lnk[0].ibname, IB_DEVICE_NAME_MAX);
		seen->has_lgr = 1;
	}
	return 0;
}

/* sock_diag's view of socket @fd: its mode and its link's device. */
static void check_sock_diag(int fd, const char *ibdev)
{
	struct {
		struct nlmsghdr nlh;
		struct smc_diag_req req;
	} msg = {
		.nlh = {
			.nlmsg_len = sizeof(msg),
			.nlmsg_type = SOCK_DIAG_BY_FAMILY,
			.nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP,
		},
		.req = {
			.diag_family = AF_SMC,
			.diag_ext = 1 << (SMC_DIAG_LGRINFO - 1) |
				    1 << (SMC_DIAG_FALLBACK - 1),
		},
	};
	struct diag_seen seen = { 0 };
	char detail[128];
	struct stat st;
	int nl, rc;

	nl = nl_open(NETLINK_SOCK_DIAG);
	if (nl < 0 || fstat(fd, &st)) {
		tap(0, "sock_diag: the socket's mode", strerror(errno));
		return;
	}
	seen.inode = st.st_ino;
	rc = nl_talk(nl, &msg.nlh, diag_sock, &seen);
	close(nl);
	if (rc || !seen.found)
		snprintf(detail, sizeof(detail), "%s", rc ? strerror(-rc) :
			 "socket not listed (is smc_diag loaded?)");
	else if (seen.mode == SMC_DIAG_MODE_FALLBACK_TCP)
		/* SMC's decline codes, SMC_CLC_DECL_* in net/smc/smc_clc.h */
		snprintf(detail, sizeof(detail),
			 "fell back to TCP, reason 0x%08x, peer's 0x%08x",
			 seen.fallback.reason, seen.fallback.peer_diagnosis);
	else
		snprintf(detail, sizeof(detail), "%s",
			 seen.mode == SMC_DIAG_MODE_SMCD ? "SMC-D" : "SMC-R");
	tap(!rc && seen.found && seen.mode == SMC_DIAG_MODE_SMCR,
	    "sock_diag: the connection is SMC-R, not TCP", detail);
	snprintf(detail, sizeof(detail), "link on '%s'", seen.ibname);
	tap(seen.has_lgr && !strcmp(seen.ibname, ibdev),
	    "sock_diag: its link is on the device", detail);
}

struct lgr_seen {
	int lgrs, v2;
};

static int lgr_each(struct nlmsghdr *nlh, void *arg)
{
	struct genlmsghdr *g = NLMSG_DATA(nlh);
	struct lgr_seen *seen = arg;
	struct nlattr *lgr;

	lgr = nl_find((char *)g + GENL_HDRLEN,
		      nlh->nlmsg_len - NLMSG_HDRLEN - GENL_HDRLEN,
		      SMC_GEN_LGR_SMCR);
	if (!lgr)
		return 0;
	seen->lgrs++;
	if (nl_find((char *)lgr + NLA_HDRLEN, lgr->nla_len - NLA_HDRLEN,
		    SMC_NLA_LGR_R_V2))
		seen->v2++;
	return 0;
}

/* SMC's link groups: one, of SMC-R version 2. */
static void check_lgr_v2(void)
{
	char buf[NLMSG_SPACE(GENL_HDRLEN)];
	struct lgr_seen seen = { 0 };
	char detail[96];
	uint16_t family;
	int fd, rc = -ENOENT;

	fd = nl_open(NETLINK_GENERIC);
	family = fd < 0 ? 0 : smc_family(fd);
	if (family)
		rc = nl_talk(fd, genl_msg(buf, family, SMC_NETLINK_GET_LGR_SMCR,
					  NLM_F_DUMP), lgr_each, &seen);
	if (fd >= 0)
		close(fd);
	snprintf(detail, sizeof(detail), "%d SMC-R link group(s), %d of version 2%s%s",
		 seen.lgrs, seen.v2, rc ? "; " : "", rc ? strerror(-rc) : "");
	tap(!rc && seen.lgrs > 0 && seen.v2 == seen.lgrs,
	    "SMC's link groups are SMC-Rv2", detail);
}

/* --- the connection -------------------------------------------------- */

static int wait_for(int fd, short events)
{
	struct pollfd p = { .fd = fd, .events = events };

	return poll(&p, 1, TIMEOUT_MS) == 1 ? 0 : -1;
}

/* Sends @bytes of direction @dir's pattern; 0 or -1. */
static int send_stream(int fd, uint64_t bytes, int dir)
{
	static uint8_t buf[CHUNK];
	uint64_t off = 0;

	while (off < bytes) {
		size_t n = bytes - off < CHUNK ? bytes - off : CHUNK;
		size_t i, sent = 0;

		for (i = 0; i < n; i++)
			buf[i] = pattern(off + i, dir);
		while (sent < n) {
			ssize_t w;

			if (wait_for(fd, POLLOUT))
				return -1;
			w = send(fd, buf + sent, n - sent, MSG_NOSIGNAL);
			if (w <= 0)
				return -1;
			sent += w;
		}
		off += n;
	}
	return 0;
}

/*
 * Receives @bytes and checks them against direction @dir's pattern;
 * the offset of the first wrong byte, of the end when the stream ended
 * early, or @bytes when all are right.
 */
static uint64_t recv_stream(int fd, uint64_t bytes, int dir)
{
	static uint8_t buf[CHUNK];
	uint64_t off = 0;

	while (off < bytes) {
		size_t want = bytes - off < CHUNK ? bytes - off : CHUNK;
		ssize_t n, i;

		if (wait_for(fd, POLLIN))
			return off;
		n = recv(fd, buf, want, 0);
		if (n <= 0) {
			printf("# recv at byte %llu: %s\n", (unsigned long long)off,
			       n ? strerror(errno) : "end of stream");
			return off;
		}
		for (i = 0; i < n; i++)
			if (buf[i] != pattern(off + i, dir)) {
				printf("# byte %llu of a read of %zd: 0x%02x, not 0x%02x\n",
				       (unsigned long long)(off + i), n, buf[i],
				       pattern(off + i, dir));
				return off + i;
			}
		off += n;
	}
	return bytes;
}

static int smc_socket(void)
{
	int fd = socket(AF_SMC, SOCK_STREAM, SMCPROTO_SMC);

	if (fd < 0)
		tap(0, "socket(AF_SMC)", strerror(errno));
	return fd;
}

/* The two ends' transfers: the client's stream, then the server's. */
static void transfer(int fd, uint64_t bytes, int client)
{
	char detail[96];
	uint64_t got;

	if (client)
		tap(!send_stream(fd, bytes, 0), "the client's stream sent",
		    NULL);
	/* The client's stream is direction 0, the server's 1. */
	got = recv_stream(fd, bytes, client);
	snprintf(detail, sizeof(detail), "%llu of %llu bytes right",
		 (unsigned long long)got, (unsigned long long)bytes);
	tap(got == bytes, client ? "the server's stream received and checked" :
	    "the client's stream received and checked", detail);
	if (!client)
		tap(!send_stream(fd, bytes, 1), "the server's stream sent",
		    NULL);
}

static int serve(struct sockaddr_in *sin, uint64_t bytes, const char *ibdev)
{
	int one = 1, lfd, fd;
	char byte;

	lfd = smc_socket();
	if (lfd < 0)
		return tap_done();
	if (setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    bind(lfd, (struct sockaddr *)sin, sizeof(*sin)) || listen(lfd, 1)) {
		tap(0, "listen", strerror(errno));
		return tap_done();
	}
	printf("# listening\n");
	fflush(stdout);
	fd = wait_for(lfd, POLLIN) ? -1 : accept(lfd, NULL, NULL);
	tap(fd >= 0, "a connection accepted", fd < 0 ? strerror(errno) : NULL);
	if (fd < 0)
		return tap_done();
	transfer(fd, bytes, 0);
	check_sock_diag(fd, ibdev);
	check_lgr_v2();
	/* The client closes once it has checked its side. */
	tap(!wait_for(fd, POLLIN) && recv(fd, &byte, 1, 0) == 0,
	    "the client closed", NULL);
	close(fd);
	close(lfd);
	return tap_done();
}

static int connect_to(struct sockaddr_in *sin, uint64_t bytes,
		      const char *ibdev)
{
	int fd = smc_socket();

	if (fd < 0)
		return tap_done();
	if (connect(fd, (struct sockaddr *)sin, sizeof(*sin))) {
		tap(0, "connect", strerror(errno));
		return tap_done();
	}
	tap(1, "connected", NULL);
	transfer(fd, bytes, 1);
	check_sock_diag(fd, ibdev);
	check_lgr_v2();
	close(fd);
	return tap_done();
}

static int usage(void)
{
	fprintf(stderr, "usage: smc-check ueid EID\n"
		"       smc-check serve|connect ADDR PORT BYTES IBDEV\n");
	return 2;
}

int main(int argc, char **argv)
{
	struct sockaddr_in sin = { .sin_family = AF_INET };
	uint64_t bytes;

	if (argc == 3 && !strcmp(argv[1], "ueid"))
		return add_ueid(argv[2]);
	if (argc != 6 || inet_pton(AF_INET, argv[2], &sin.sin_addr) != 1)
		return usage();
	sin.sin_port = htons((uint16_t)atoi(argv[3]));
	bytes = strtoull(argv[4], NULL, 0);
	if (!bytes)
		return usage();
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (!strcmp(argv[1], "serve"))
		return serve(&sin, bytes, argv[5]);
	if (!strcmp(argv[1], "connect"))
		return connect_to(&sin, bytes, argv[5]);
	return usage();
}
