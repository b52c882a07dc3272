// SPDX-License-Identifier: GPL-2.0
/*
 * The NBD handshake, client side (fixed newstyle, doc/proto.md of
 * NetworkBlockDevice/nbd): NBDMAGIC/IHAVEOPT, client flags, NBD_OPT_GO with
 * NBD_INFO_EXPORT and NBD_INFO_BLOCK_SIZE, NBD_OPT_EXPORT_NAME only when the
 * server does not know NBD_OPT_GO. Every read is bounded in size and time, so
 * a broken or hostile server gives an error, never a hang or a crash.
 */
#include "attach.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#define NBD_INIT_PASSWD		0x4e42444d41474943ULL	/* "NBDMAGIC" */
#define NBD_OPTS_MAGIC		0x49484156454f5054ULL	/* "IHAVEOPT" */
#define NBD_OLDSTYLE_MAGIC	0x0000420281861253ULL
#define NBD_REP_MAGIC		0x0003e889045565a9ULL
#define NBD_REQUEST_MAGIC	0x25609513U

#define NBD_FLAG_FIXED_NEWSTYLE	(1 << 0)
#define NBD_FLAG_NO_ZEROES	(1 << 1)

#define NBD_OPT_EXPORT_NAME	1
#define NBD_OPT_ABORT		2
#define NBD_OPT_GO		7

#define NBD_REP_ACK		1
#define NBD_REP_INFO		3
#define NBD_REP_FLAG_ERROR	(1U << 31)
#define NBD_REP_ERR_UNSUP	(1 | NBD_REP_FLAG_ERROR)
#define NBD_REP_ERR_POLICY	(2 | NBD_REP_FLAG_ERROR)
#define NBD_REP_ERR_INVALID	(3 | NBD_REP_FLAG_ERROR)
#define NBD_REP_ERR_PLATFORM	(4 | NBD_REP_FLAG_ERROR)
#define NBD_REP_ERR_TLS_REQD	(5 | NBD_REP_FLAG_ERROR)
#define NBD_REP_ERR_UNKNOWN	(6 | NBD_REP_FLAG_ERROR)
#define NBD_REP_ERR_SHUTDOWN	(7 | NBD_REP_FLAG_ERROR)
#define NBD_REP_ERR_BLOCK_SIZE_REQD (8 | NBD_REP_FLAG_ERROR)

#define NBD_INFO_EXPORT		0
#define NBD_INFO_BLOCK_SIZE	3

#define NBD_CMD_DISC		2

/* Longest reply payload we accept: an error string is at most 4096 bytes. */
#define MAX_REPLY		(64 * 1024)
/* Most NBD_REP_INFO replies to one NBD_OPT_GO (we ask for two kinds). */
#define MAX_INFO_REPLIES	64

int server_parse(struct server *s, const char *host, const char *port)
{
	struct sockaddr_in *in4 = (struct sockaddr_in *)&s->addr;
	struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&s->addr;
	char *end;
	unsigned long p;

	memset(s, 0, sizeof(*s));
	errno = 0;
	p = strtoul(port, &end, 10);
	if (!*port || *end || errno || p == 0 || p > 65535)
		return fail(XC_USAGE, "bad port '%s' (1-65535)", port);
	if (inet_pton(AF_INET, host, &in4->sin_addr) == 1) {
		in4->sin_family = AF_INET;
		in4->sin_port = htons(p);
		s->addrlen = sizeof(*in4);
		snprintf(s->text, sizeof(s->text), "%s:%lu", host, p);
	} else if (inet_pton(AF_INET6, host, &in6->sin6_addr) == 1) {
		in6->sin6_family = AF_INET6;
		in6->sin6_port = htons(p);
		s->addrlen = sizeof(*in6);
		snprintf(s->text, sizeof(s->text), "[%s]:%lu", host, p);
	} else {
		return fail(XC_USAGE,
			    "bad host '%s': give an IPv4 or IPv6 address (names are not looked up: the kernel reconnects to the address)",
			    host);
	}
	return 0;
}

/* Wire helpers: big-endian integers. */
static uint64_t get64(const unsigned char *p)
{
	uint64_t v = 0;

	for (int i = 0; i < 8; i++)
		v = (v << 8) | p[i];
	return v;
}

static uint32_t get32(const unsigned char *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static uint16_t get16(const unsigned char *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static unsigned char *put64(unsigned char *p, uint64_t v)
{
	for (int i = 7; i >= 0; i--)
		*p++ = v >> (8 * i);
	return p;
}

static unsigned char *put32(unsigned char *p, uint32_t v)
{
	*p++ = v >> 24;
	*p++ = v >> 16;
	*p++ = v >> 8;
	*p++ = v;
	return p;
}

static unsigned char *put16(unsigned char *p, uint16_t v)
{
	*p++ = v >> 8;
	*p++ = v;
	return p;
}

/* One connection's negotiation state, for messages. */
struct conn {
	int fd;
	int n;			/* connection number, from 1 */
	int timeout_s;
	struct timespec deadline;	/* the whole negotiation of this connection */
	int clean;		/* the server ended an option with an error reply */
	const struct server *s;
};

/*
 * Read exactly len bytes. On failure print what was being read and return an
 * exit code: EOF or a short read is a protocol error, a timeout too (the
 * server accepted the connection and then said nothing).
 */
/* Milliseconds left until the connection's deadline, at least 0. */
static int ms_left(const struct conn *c)
{
	struct timespec now;
	long long ms;

	clock_gettime(CLOCK_MONOTONIC, &now);
	ms = (c->deadline.tv_sec - now.tv_sec) * 1000LL + (c->deadline.tv_nsec - now.tv_nsec) / 1000000;
	return ms < 0 ? 0 : ms;
}

static int rd(struct conn *c, void *buf, size_t len, const char *what)
{
	unsigned char *p = buf;
	size_t got = 0;

	while (got < len) {
		struct pollfd pfd = { .fd = c->fd, .events = POLLIN };
		int pr = poll(&pfd, 1, ms_left(c));

		if (pr < 0 && errno == EINTR)
			continue;
		if (pr == 0)
			return fail(XC_PROTOCOL,
				    "connection %d: server %s did not finish the negotiation within %d s (waiting for %s, %zu of %zu bytes)",
				    c->n, c->s->text, c->timeout_s, what, got, len);
		ssize_t r = read(c->fd, p + got, len - got);

		if (r > 0) {
			got += r;
			continue;
		}
		if (r < 0 && errno == EINTR)
			continue;
		if (r == 0)
			return fail(XC_PROTOCOL,
				    "connection %d: server %s closed the connection while sending %s (%zu of %zu bytes)",
				    c->n, c->s->text, what, got, len);
		if (errno == EAGAIN || errno == EWOULDBLOCK)
			continue;
		return fail(XC_PROTOCOL, "connection %d: reading %s from %s: %s",
			    c->n, what, c->s->text, strerror(errno));
	}
	return 0;
}

static int wr(struct conn *c, const void *buf, size_t len, const char *what)
{
	const unsigned char *p = buf;
	size_t done = 0;

	while (done < len) {
		ssize_t r = send(c->fd, p + done, len - done, MSG_NOSIGNAL);

		if (r > 0) {
			done += r;
			continue;
		}
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return fail(XC_PROTOCOL, "connection %d: server %s accepted nothing for %d s while we sent %s",
				    c->n, c->s->text, c->timeout_s, what);
		return fail(XC_PROTOCOL, "connection %d: sending %s to %s: %s", c->n, what,
			    c->s->text, r < 0 ? strerror(errno) : "short write");
	}
	return 0;
}

/* A server's message, printable and short, for our own messages. */
static void clean_text(const unsigned char *in, size_t len, char *out, size_t outlen)
{
	size_t o = 0;

	for (size_t i = 0; i < len && o + 5 < outlen; i++) {
		if (in[i] >= 0x20 && in[i] < 0x7f)
			out[o++] = in[i];
		else
			o += snprintf(out + o, outlen - o, "\\x%02x", in[i]);
	}
	out[o] = 0;
}

static int set_timeouts(int fd, int seconds)
{
	struct timeval tv = { .tv_sec = seconds };

	if (setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) ||
	    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)))
		return -1;
	return 0;
}

static int tcp_connect(struct conn *c)
{
	int fd, flags, err = 0, on = 1;
	socklen_t errlen = sizeof(err);
	struct pollfd pfd;

	fd = socket(c->s->addr.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return fail(XC_ERROR, "socket: %s", strerror(errno));
	/* as nbd-client: no Nagle delay, and keepalive to notice a dead peer */
	if (setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof(on)) ||
	    setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &on, sizeof(on))) {
		close(fd);
		return fail(XC_ERROR, "setsockopt: %s", strerror(errno));
	}
	flags = fcntl(fd, F_GETFL);
	fcntl(fd, F_SETFL, flags | O_NONBLOCK);
	if (connect(fd, (const struct sockaddr *)&c->s->addr, c->s->addrlen) < 0) {
		if (errno != EINPROGRESS) {
			err = errno;
			goto unreachable;
		}
		pfd.fd = fd;
		pfd.events = POLLOUT;
		int r;

		do
			r = poll(&pfd, 1, ms_left(c));
		while (r < 0 && errno == EINTR);
		if (r == 0) {
			err = ETIMEDOUT;
			goto unreachable;
		}
		if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &errlen) < 0)
			err = errno;
		if (err)
			goto unreachable;
	}
	fcntl(fd, F_SETFL, flags);
	if (set_timeouts(fd, c->timeout_s)) {
		close(fd);
		return fail(XC_ERROR, "setsockopt: %s", strerror(errno));
	}
	c->fd = fd;
	return 0;
unreachable:
	close(fd);
	return fail(XC_UNREACHABLE, "connection %d: cannot reach server %s: %s", c->n,
		    c->s->text, strerror(err));
}

static int send_option(struct conn *c, uint32_t opt, const void *data, uint32_t len,
		       const char *what)
{
	unsigned char hdr[16], *p = hdr;
	int rc;

	p = put64(p, NBD_OPTS_MAGIC);
	p = put32(p, opt);
	put32(p, len);
	rc = wr(c, hdr, sizeof(hdr), what);
	if (!rc && len)
		rc = wr(c, data, len, what);
	return rc;
}

/* NBD_OPT_ABORT without waiting for the answer: polite, best effort. */
static void send_abort(struct conn *c)
{
	unsigned char hdr[16], *p = hdr;

	p = put64(p, NBD_OPTS_MAGIC);
	p = put32(p, NBD_OPT_ABORT);
	put32(p, 0);
	(void)!send(c->fd, hdr, sizeof(hdr), MSG_NOSIGNAL | MSG_DONTWAIT);
}

static const char *rep_err_name(uint32_t t)
{
	switch (t) {
	case NBD_REP_ERR_UNSUP: return "NBD_REP_ERR_UNSUP";
	case NBD_REP_ERR_POLICY: return "NBD_REP_ERR_POLICY";
	case NBD_REP_ERR_INVALID: return "NBD_REP_ERR_INVALID";
	case NBD_REP_ERR_PLATFORM: return "NBD_REP_ERR_PLATFORM";
	case NBD_REP_ERR_TLS_REQD: return "NBD_REP_ERR_TLS_REQD";
	case NBD_REP_ERR_UNKNOWN: return "NBD_REP_ERR_UNKNOWN";
	case NBD_REP_ERR_SHUTDOWN: return "NBD_REP_ERR_SHUTDOWN";
	case NBD_REP_ERR_BLOCK_SIZE_REQD: return "NBD_REP_ERR_BLOCK_SIZE_REQD";
	default: return "an error";
	}
}

/*
 * NBD_OPT_GO. Returns 0 on success, -1 if the server does not know the
 * option (fall back to NBD_OPT_EXPORT_NAME), or an exit code.
 */
static int opt_go(struct conn *c, const char *name, struct nbd_export *ex)
{
	size_t nlen = strlen(name);
	uint32_t len = 4 + nlen + 2 + 2 * 2;
	unsigned char *req = malloc(len), *p = req, *data;
	int rc, have_export = 0, replies = 0;

	if (!req)
		return fail(XC_ERROR, "out of memory");
	p = put32(p, nlen);
	memcpy(p, name, nlen);
	p += nlen;
	p = put16(p, 2);
	p = put16(p, NBD_INFO_EXPORT);
	put16(p, NBD_INFO_BLOCK_SIZE);
	rc = send_option(c, NBD_OPT_GO, req, len, "NBD_OPT_GO");
	free(req);
	if (rc)
		return rc;
	data = malloc(MAX_REPLY);
	if (!data)
		return fail(XC_ERROR, "out of memory");
	for (;;) {
		unsigned char hdr[20];
		uint32_t opt, type, rlen;

		rc = rd(c, hdr, sizeof(hdr), "a reply to NBD_OPT_GO");
		if (rc)
			break;
		if (get64(hdr) != NBD_REP_MAGIC) {
			rc = fail(XC_PROTOCOL,
				  "connection %d: server %s: bad reply magic 0x%016llx to NBD_OPT_GO (expected 0x%016llx)",
				  c->n, c->s->text, (unsigned long long)get64(hdr),
				  (unsigned long long)NBD_REP_MAGIC);
			break;
		}
		opt = get32(hdr + 8);
		type = get32(hdr + 12);
		rlen = get32(hdr + 16);
		if (opt != NBD_OPT_GO) {
			rc = fail(XC_PROTOCOL, "connection %d: server %s replied to option %u, not to NBD_OPT_GO (%u)",
				  c->n, c->s->text, opt, NBD_OPT_GO);
			break;
		}
		if (rlen > MAX_REPLY) {
			rc = fail(XC_PROTOCOL, "connection %d: server %s: reply of %u bytes to NBD_OPT_GO (at most %u expected)",
				  c->n, c->s->text, rlen, MAX_REPLY);
			break;
		}
		rc = rd(c, data, rlen, "the data of a reply to NBD_OPT_GO");
		if (rc)
			break;
		if (type == NBD_REP_INFO) {
			uint16_t info;

			if (++replies > MAX_INFO_REPLIES) {
				rc = fail(XC_PROTOCOL, "connection %d: server %s sent more than %d NBD_REP_INFO replies",
					  c->n, c->s->text, MAX_INFO_REPLIES);
				break;
			}

			if (rlen < 2) {
				rc = fail(XC_PROTOCOL, "connection %d: server %s: NBD_REP_INFO of %u bytes",
					  c->n, c->s->text, rlen);
				break;
			}
			info = get16(data);
			if (info == NBD_INFO_EXPORT) {
				if (rlen != 12) {
					rc = fail(XC_PROTOCOL,
						  "connection %d: server %s: NBD_INFO_EXPORT of %u bytes (12 expected)",
						  c->n, c->s->text, rlen);
					break;
				}
				ex->size = get64(data + 2);
				ex->flags = get16(data + 10);
				have_export = 1;
			} else if (info == NBD_INFO_BLOCK_SIZE) {
				if (rlen != 14) {
					rc = fail(XC_PROTOCOL,
						  "connection %d: server %s: NBD_INFO_BLOCK_SIZE of %u bytes (14 expected)",
						  c->n, c->s->text, rlen);
					break;
				}
				ex->has_bs = 1;
				ex->min_bs = get32(data + 2);
				ex->pref_bs = get32(data + 6);
				ex->max_bs = get32(data + 10);
			}
			/* other information types are ignored, as the protocol says */
			continue;
		}
		if (type == NBD_REP_ACK) {
			if (!have_export)
				rc = fail(XC_PROTOCOL,
					  "connection %d: server %s accepted NBD_OPT_GO without sending NBD_INFO_EXPORT",
					  c->n, c->s->text);
			else
				ex->used_go = 1;
			break;
		}
		if (type & NBD_REP_FLAG_ERROR) {
			char msg[256];

			c->clean = 1;
			clean_text(data, rlen, msg, sizeof(msg));
			if (type == NBD_REP_ERR_UNSUP) {
				rc = -1;
			} else if (type == NBD_REP_ERR_UNKNOWN) {
				rc = fail(XC_NOEXPORT, "server %s has no export '%s'%s%s%s", c->s->text,
					  name, *msg ? " (server says: " : "", msg, *msg ? ")" : "");
			} else if (type == NBD_REP_ERR_TLS_REQD) {
				rc = fail(XC_REFUSED, "server %s requires TLS for export '%s'; " PROG
					  " does not speak TLS (swap traffic should stay on a private network)%s%s%s",
					  c->s->text, name, *msg ? " (server says: " : "", msg, *msg ? ")" : "");
			} else if (type == NBD_REP_ERR_BLOCK_SIZE_REQD) {
				rc = fail(XC_PROTOCOL,
					  "connection %d: server %s sent NBD_REP_ERR_BLOCK_SIZE_REQD although block sizes were requested",
					  c->n, c->s->text);
			} else {
				rc = fail(XC_REFUSED, "server %s refused export '%s' with %s (0x%08x)%s%s%s",
					  c->s->text, name, rep_err_name(type), type,
					  *msg ? " (server says: " : "", msg, *msg ? ")" : "");
			}
			break;
		}
		rc = fail(XC_PROTOCOL, "connection %d: server %s: unexpected reply type 0x%08x to NBD_OPT_GO",
			  c->n, c->s->text, type);
		break;
	}
	free(data);
	return rc;
}

static int opt_export_name(struct conn *c, const char *name, struct nbd_export *ex, int no_zeroes)
{
	unsigned char rep[10 + 124];
	size_t want = no_zeroes ? 10 : sizeof(rep);
	int rc;

	rc = send_option(c, NBD_OPT_EXPORT_NAME, name, strlen(name), "NBD_OPT_EXPORT_NAME");
	if (rc)
		return rc;
	/* a server without NBD_OPT_GO answers an unknown name by hanging up */
	struct pollfd pfd = { .fd = c->fd, .events = POLLIN };

	if (poll(&pfd, 1, ms_left(c)) > 0 && recv(c->fd, rep, 1, MSG_PEEK | MSG_DONTWAIT) == 0)
		return fail(XC_NOEXPORT,
			    "server %s closed the connection after NBD_OPT_EXPORT_NAME: it has no export '%s' "
			    "(or refused it; this server does not know NBD_OPT_GO and cannot say which)",
			    c->s->text, name);
	rc = rd(c, rep, want, "the reply to NBD_OPT_EXPORT_NAME");
	if (rc)
		return rc;
	ex->size = get64(rep);
	ex->flags = get16(rep + 8);
	ex->used_go = 0;
	return 0;
}

int nbd_open_export(const struct server *s, const char *name, int timeout_s, int n,
		    struct nbd_export *ex, int *fd_out)
{
	struct conn c = { .fd = -1, .n = n, .timeout_s = timeout_s, .s = s };
	unsigned char hello[18], cflags[4];
	uint64_t magic;
	uint32_t client = 0;
	int rc;

	memset(ex, 0, sizeof(*ex));
	clock_gettime(CLOCK_MONOTONIC, &c.deadline);
	c.deadline.tv_sec += timeout_s;
	rc = tcp_connect(&c);
	if (rc)
		return rc;
	rc = rd(&c, hello, 16, "its greeting");
	if (rc)
		goto out;
	if (get64(hello) != NBD_INIT_PASSWD) {
		rc = fail(XC_PROTOCOL, "connection %d: %s is not an NBD server (greeting 0x%016llx, expected \"NBDMAGIC\")",
			  n, s->text, (unsigned long long)get64(hello));
		goto out;
	}
	magic = get64(hello + 8);
	if (magic == NBD_OLDSTYLE_MAGIC) {
		rc = fail(XC_PROTOCOL, "connection %d: server %s speaks the oldstyle protocol (no export names); "
			  "only newstyle servers are supported", n, s->text);
		goto out;
	}
	if (magic != NBD_OPTS_MAGIC) {
		rc = fail(XC_PROTOCOL, "connection %d: server %s: bad magic 0x%016llx after NBDMAGIC (expected \"IHAVEOPT\")",
			  n, s->text, (unsigned long long)magic);
		goto out;
	}
	rc = rd(&c, hello + 16, 2, "its handshake flags");
	if (rc)
		goto out;
	ex->hs_flags = get16(hello + 16);
	/* answer only with flags the server offered */
	client = ex->hs_flags & (NBD_FLAG_FIXED_NEWSTYLE | NBD_FLAG_NO_ZEROES);
	put32(cflags, client);
	rc = wr(&c, cflags, 4, "client flags");
	if (rc)
		goto out;
	if (client & NBD_FLAG_FIXED_NEWSTYLE) {
		rc = opt_go(&c, name, ex);
		if (rc >= 0)
			goto out;
		c.clean = 0;
	}
	/* NBD_OPT_GO unknown (or not fixed newstyle): the old way, on the same connection */
	rc = opt_export_name(&c, name, ex, client & NBD_FLAG_NO_ZEROES);
out:
	if (rc) {
		if (c.clean)
			send_abort(&c);
		close(c.fd);
		return rc;
	}
	*fd_out = c.fd;
	return 0;
}

/*
 * Hand the socket to the kernel as a blocking socket without our negotiation
 * timeouts: nbd's receive thread reads with the socket's own receive timeout,
 * and a leftover one would declare an idle connection dead.
 */
int nbd_ready_for_kernel(int fd)
{
	int flags = fcntl(fd, F_GETFL);

	if (flags < 0 || fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) < 0 || set_timeouts(fd, 0) < 0)
		return fail(XC_ERROR, "preparing the socket for the kernel: %s", strerror(errno));
	return 0;
}

/* NBD_CMD_DISC in the transmission phase: leave the server cleanly. */
void nbd_say_goodbye(int fd)
{
	unsigned char req[28] = { 0 }, *p = req;

	p = put32(p, NBD_REQUEST_MAGIC);
	p = put16(p, 0);
	put16(p, NBD_CMD_DISC);
	(void)!send(fd, req, sizeof(req), MSG_NOSIGNAL | MSG_DONTWAIT);
}

void describe_flags(uint16_t flags, char *buf, size_t len)
{
	static const char *const names[] = {
		"HAS_FLAGS", "READ_ONLY", "SEND_FLUSH", "SEND_FUA", "ROTATIONAL",
		"SEND_TRIM", "SEND_WRITE_ZEROES", "SEND_DF", "CAN_MULTI_CONN",
		"SEND_RESIZE", "SEND_CACHE", "SEND_FAST_ZERO", "BLOCK_STAT_PAYLOAD",
	};
	size_t o = 0;

	buf[0] = 0;
	for (unsigned int i = 0; i < 16 && o < len; i++) {
		if (!(flags & (1U << i)))
			continue;
		if (i < sizeof(names) / sizeof(names[0]))
			o += snprintf(buf + o, len - o, "%s%s", o ? "," : "", names[i]);
		else
			o += snprintf(buf + o, len - o, "%sbit%u", o ? "," : "", i);
	}
}
