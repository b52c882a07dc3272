// SPDX-License-Identifier: GPL-2.0
/*
 * nbd-uapi-check: in the guest, send nbd's NBD_CMD_CONNECT with partial or
 * malformed kernel reconnect information (NBD_ATTR_EXPORT_NAME,
 * NBD_SOCK_ADDR, NBD_ATTR_DEAD_CONN_TIMEOUT) and check that the kernel
 * refuses each with the documented errno and an extended ack message,
 * before touching the device. Raw generic netlink, no library.
 * Prints KTAP results as "NETSWAP: ktap ok|not ok N NAME # DETAIL" lines and
 * the plan after them; exit 1 if one failed.
 */
#include <errno.h>
#include <linux/genetlink.h>
#include <linux/nbd-netlink.h>
#include <linux/netlink.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#ifndef NBD_ATTR_EXPORT_NAME
#define NBD_ATTR_EXPORT_NAME	(NBD_ATTR_BACKEND_IDENTIFIER + 1)
#endif
#ifndef NBD_SOCK_ADDR
#define NBD_SOCK_ADDR		(NBD_SOCK_FD + 1)
#endif
#ifndef NETLINK_EXT_ACK
#define NETLINK_EXT_ACK		11
#endif

static int nl, fam_id, failures;
static unsigned int maxattr, seq = 1;
static char buf[16384];
static size_t len;
static char extack[256];

static void *put(uint16_t type, const void *data, size_t n)
{
	struct nlattr *a = (struct nlattr *)(buf + len);

	a->nla_type = type;
	a->nla_len = NLA_HDRLEN + n;
	if (data)
		memcpy((char *)a + NLA_HDRLEN, data, n);
	len += NLA_ALIGN(a->nla_len);
	return a;
}

static struct nlattr *nest(uint16_t type)
{
	return put(type | NLA_F_NESTED, NULL, 0);
}

static void end(struct nlattr *a)
{
	a->nla_len = buf + len - (char *)a;
}

static void start(uint16_t type, uint8_t cmd)
{
	struct nlmsghdr *h = (struct nlmsghdr *)buf;
	struct genlmsghdr *g = (struct genlmsghdr *)(buf + NLMSG_HDRLEN);

	memset(buf, 0, sizeof(buf));
	h->nlmsg_type = type;
	h->nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK;
	h->nlmsg_seq = ++seq;
	g->cmd = cmd;
	g->version = 1;
	len = NLMSG_HDRLEN + GENL_HDRLEN;
}

/* send, then read until the ACK/ERROR; returns the kernel's errno (0 = ok) */
static int talk(void)
{
	struct nlmsghdr *h = (struct nlmsghdr *)buf;
	static char in[32768];
	int err = -1;

	h->nlmsg_len = len;
	extack[0] = '\0';
	if (send(nl, buf, len, 0) < 0)
		return errno;
	while (err < 0) {
		ssize_t n = recv(nl, in, sizeof(in), 0);
		struct nlmsghdr *m;

		if (n < 0)
			return errno;
		for (m = (struct nlmsghdr *)in; NLMSG_OK(m, n); m = NLMSG_NEXT(m, n)) {
			if (m->nlmsg_type == GENL_ID_CTRL) {
				struct nlattr *a = (struct nlattr *)((char *)NLMSG_DATA(m) + GENL_HDRLEN);
				int rem = m->nlmsg_len - NLMSG_HDRLEN - GENL_HDRLEN;

				for (; rem >= NLA_HDRLEN && a->nla_len >= NLA_HDRLEN && a->nla_len <= rem;
				     rem -= NLA_ALIGN(a->nla_len),
				     a = (struct nlattr *)((char *)a + NLA_ALIGN(a->nla_len))) {
					if ((a->nla_type & NLA_TYPE_MASK) == CTRL_ATTR_FAMILY_ID)
						fam_id = *(uint16_t *)((char *)a + NLA_HDRLEN);
					if ((a->nla_type & NLA_TYPE_MASK) == CTRL_ATTR_MAXATTR)
						maxattr = *(uint32_t *)((char *)a + NLA_HDRLEN);
				}
			} else if (m->nlmsg_type == NLMSG_ERROR) {
				struct nlmsgerr *e = NLMSG_DATA(m);
				size_t off = sizeof(*e);
				int total = m->nlmsg_len - NLMSG_HDRLEN;

				err = -e->error;
				if (!(m->nlmsg_flags & NLM_F_CAPPED))
					off += e->msg.nlmsg_len - NLMSG_HDRLEN;
				if (m->nlmsg_flags & NLM_F_ACK_TLVS) {
					struct nlattr *a = (struct nlattr *)((char *)e + NLMSG_ALIGN(off));
					int rem = total - NLMSG_ALIGN(off);

					for (; rem >= NLA_HDRLEN && a->nla_len >= NLA_HDRLEN &&
					       a->nla_len <= rem;
					     rem -= NLA_ALIGN(a->nla_len),
					     a = (struct nlattr *)((char *)a + NLA_ALIGN(a->nla_len)))
						if (a->nla_type == NLMSGERR_ATTR_MSG)
							snprintf(extack, sizeof(extack), "%s",
								 (char *)a + NLA_HDRLEN);
				}
			}
		}
	}
	return err;
}

/* one KTAP result on the console ("NETSWAP: ktap ok N name # detail"); the
 * plan is printed after the last one (the rig compares the two)
 */
static int results;

static void check(const char *name, int ok, const char *fmt, int a, const char *b)
{
	printf("NETSWAP: ktap %s %d %s # ", ok ? "ok" : "not ok", ++results, name);
	printf(fmt, a, b);
	printf("\n");
	failures += !ok;
}

struct item {
	int fd;			/* -1: none */
	const void *addr;	/* NULL: none */
	size_t addrlen;
};

/* NBD_CMD_CONNECT for device 0, 1 GB, with the given reconnect information */
static int connect_cmd(const char *name, long dead, const struct item *items, int n)
{
	uint64_t size = 1ULL << 30, d = dead;
	uint32_t index = 0;
	struct nlattr *socks;
	int i;

	start(fam_id, NBD_CMD_CONNECT);
	put(NBD_ATTR_INDEX, &index, 4);
	put(NBD_ATTR_SIZE_BYTES, &size, 8);
	if (dead >= 0)
		put(NBD_ATTR_DEAD_CONN_TIMEOUT, &d, 8);
	if (name)
		put(NBD_ATTR_EXPORT_NAME, name, strlen(name) + 1);
	socks = nest(NBD_ATTR_SOCKETS);
	for (i = 0; i < n; i++) {
		struct nlattr *it = nest(NBD_SOCK_ITEM);

		if (items[i].fd >= 0) {
			uint32_t fd = items[i].fd;

			put(NBD_SOCK_FD, &fd, 4);
		}
		if (items[i].addr)
			put(NBD_SOCK_ADDR, items[i].addr, items[i].addrlen);
		end(it);
	}
	end(socks);
	return talk();
}

static int configured(void)
{
	return access("/sys/block/nbd0/pid", F_OK) == 0;
}

static void refused(const char *name, int err, int want, const char *msg_part)
{
	char detail[400];

	snprintf(detail, sizeof(detail), "extack=\"%s\"", extack);
	check(name, err == want && strstr(extack, msg_part) && !configured(),
	      "errno=%d %s", err, detail);
}

int main(void)
{
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK };
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = htons(10809),
				   .sin_addr.s_addr = htonl(0x0a000202) };
	struct sockaddr_in noport = sin;
	struct sockaddr_in6 sin6 = { .sin6_family = AF_INET6, .sin6_port = htons(10809) };
	/* a family other than inet, no longer than the policy allows */
	struct sockaddr_in sun = { .sin_family = AF_UNIX, .sin_port = htons(10809) };
	char longaddr[sizeof(sin) + 4];
	static char longname[4098];
	int one = 1, fd, err;

	nl = socket(AF_NETLINK, SOCK_RAW, NETLINK_GENERIC);
	if (nl < 0 || bind(nl, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		perror("netlink");
		return 2;
	}
	setsockopt(nl, SOL_NETLINK, NETLINK_EXT_ACK, &one, sizeof(one));
	start(GENL_ID_CTRL, CTRL_CMD_GETFAMILY);
	put(CTRL_ATTR_FAMILY_NAME, NBD_GENL_FAMILY_NAME, sizeof(NBD_GENL_FAMILY_NAME));
	err = talk();
	if (err || !fam_id) {
		printf("NETSWAP: ktap not ok 1 nbd-family # errno=%d\nNETSWAP: ktap 1..1\n", err);
		return 1;
	}
	check("maxattr-has-export-name", maxattr >= NBD_ATTR_EXPORT_NAME,
	      "maxattr=%d%s", maxattr, "");

	/* a TCP socket for NBD_SOCK_FD: the checks come before it is used */
	fd = socket(AF_INET, SOCK_STREAM, 0);
	noport.sin_port = 0;
	memcpy(longaddr, &sin, sizeof(sin));
	memset(longaddr + sizeof(sin), 0, 4);
	memset(longname, 'x', 4097);

	{
		struct item it[] = { { fd, NULL, 0 } };

		refused("name-without-address", connect_cmd("netswap", 60, it, 1), EINVAL,
			"kernel reconnect needs");
	}
	{
		struct item it[] = { { fd, &sin, sizeof(sin) } };

		refused("address-without-name", connect_cmd(NULL, 60, it, 1), EINVAL,
			"kernel reconnect needs");
		refused("no-dead-conn-timeout", connect_cmd("netswap", -1, it, 1), EINVAL,
			"kernel reconnect needs");
		refused("dead-conn-timeout-0", connect_cmd("netswap", 0, it, 1), EINVAL,
			"kernel reconnect needs");
	}
	{
		struct item it[] = { { fd, &sin, sizeof(sin) }, { fd, NULL, 0 } };

		refused("address-on-one-of-two", connect_cmd("netswap", 60, it, 2), EINVAL,
			"kernel reconnect needs");
	}
	{
		struct item it[] = { { fd, &sun, sizeof(sun) } };

		refused("address-not-inet", connect_cmd("netswap", 60, it, 1), EAFNOSUPPORT,
			"AF_INET or AF_INET6");
	}
	{
		struct item it[] = { { fd, longaddr, sizeof(longaddr) } };

		refused("address-wrong-length", connect_cmd("netswap", 60, it, 1), EINVAL,
			"needs a struct sockaddr_in");
	}
	{
		struct item it[] = { { fd, &noport, sizeof(noport) } };

		refused("address-without-port", connect_cmd("netswap", 60, it, 1), EINVAL,
			"without a port");
	}
	{
		struct item it[] = { { fd, &sin6, sizeof(sin6) } };

		err = connect_cmd("netswap", 60, it, 1);
		/* this guest kernel has no IPv6 */
		refused("address-inet6-without-ipv6", err, EAFNOSUPPORT, "no IPv6");
	}
	{
		struct item it[] = { { fd, &sin, sizeof(sin) } };

		err = connect_cmd(longname, 60, it, 1);
		check("name-over-4096-refused", err != 0 && !configured(), "errno=%d %s", err, "");
	}
	close(fd);
	printf("NETSWAP: ktap 1..%d\n", results);
	printf("NETSWAP: info uapi checks failed=%d\n", failures);
	return failures ? 1 : 0;
}
