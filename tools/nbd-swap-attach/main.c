// SPDX-License-Identifier: GPL-2.0
/*
 * nbd-swap-attach: attach (or detach) an NBD device for swap over generic
 * netlink, with the settings swap needs: a dead-connection timeout, the
 * in-kernel reconnect attributes where the kernel has them, a memory-locked
 * IO_FLUSHER process. One job; see --help and docs/admin-guide.md.
 */
#include "attach.h"
#include "nl.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#ifndef PR_SET_IO_FLUSHER
#define PR_SET_IO_FLUSHER 57
#endif

#define MAX_CONNS		64
#define DEF_TIMEOUT		60
#define DEF_DEAD_CONN_TIMEOUT	120
#define DEF_CONNECT_TIMEOUT	10
#define KERNEL_MAX_REQUEST	(32U << 20)	/* nbd: blk_queue_max_hw_sectors(65536) */
#define MIN_SWAP_BYTES		(10 * 4096)	/* mkswap wants 10 pages */

int fail(int code, const char *fmt, ...)
{
	va_list ap;

	fputs(PROG ": error: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return code;
}

void warn(const char *fmt, ...)
{
	va_list ap;

	fputs(PROG ": warning: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

void note(const char *fmt, ...)
{
	va_list ap;

	fputs(PROG ": ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

static void usage(FILE *f)
{
	fprintf(f,
"Usage: " PROG " [OPTIONS] HOST PORT DEVICE     attach DEVICE to the export for swap\n"
"       " PROG " -d DEVICE [--force]            detach DEVICE\n"
"\n"
"Negotiates with the NBD server at HOST PORT itself (fixed newstyle, NBD_OPT_GO),\n"
"then configures DEVICE (/dev/nbdN or nbdN) over nbd's generic netlink family,\n"
"with a dead-connection timeout and, where the kernel has it, in-kernel reconnect.\n"
"HOST is an IPv4 or IPv6 address (no name lookup). Then: mkswap DEVICE; swapon DEVICE.\n"
"\n"
"Options:\n"
"  -N, --name EXPORT           export name (default: \"\", the server's default export)\n"
"  -C, --connections N         TCP connections, 1-%d (default 1)\n"
"  -b, --block-size BYTES      512, 1024, 2048 or 4096 (default 4096)\n"
"  -t, --timeout SECONDS       request timeout, NBD_ATTR_TIMEOUT (default %d; 0: never;\n"
"                              a request that times out marks its connection dead)\n"
"  -D, --dead-conn-timeout SECONDS\n"
"                              how long I/O waits for a connection to come back before\n"
"                              it fails, NBD_ATTR_DEAD_CONN_TIMEOUT (default %d)\n"
"  -R, --no-reconnect          attach without in-kernel reconnect (required on a kernel\n"
"                              that lacks it; a lost connection then fails swap I/O\n"
"                              after the dead-connection timeout)\n"
"  -T, --connect-timeout SECONDS  limit for reaching the server and for each step of\n"
"                              the negotiation (default %d)\n"
"  -n, --dry-run               negotiate, print what would be configured, configure\n"
"                              nothing (never opens netlink)\n"
"  -w, --wait                  after attaching, stay in the foreground (memory-locked)\n"
"                              and log the kernel's NBD_CMD_LINK_DEAD events for DEVICE\n"
"                              until it is disconnected\n"
"  -d, --disconnect DEVICE     detach DEVICE (refused while it is active swap or in use)\n"
"  -f, --force                 with -d: detach even while in use (swapped-out pages are lost)\n"
"  -h, --help                  this text\n"
"\n"
"Exit codes:\n"
"   0  done\n"
"   1  other error (out of memory, netlink socket failure, ...)\n"
"   2  bad arguments\n"
"   3  server unreachable (connection refused, timed out, no route)\n"
"   4  export missing: the server has no export of that name\n"
"   5  NBD protocol error: not an NBD server, bad magic, truncated or malformed reply\n"
"   6  refused: the server refused the export (TLS required, policy, ...) or it is\n"
"      unfit for swap (read-only, too small, block size constraints)\n"
"   7  no nbd support in the kernel (no \"nbd\" generic netlink family: modprobe nbd)\n"
"   8  the kernel cannot reconnect by itself and --no-reconnect was not given\n"
"   9  device busy: already connected, or (-d) active swap or in use\n"
"  10  not permitted: needs root (CAP_SYS_ADMIN)\n"
"  11  the kernel refused the configuration otherwise (see dmesg)\n"
"  12  -d: the device is not connected\n"
"\n"
"Environment: NBD_SWAP_ATTACH_NO_NETLINK=1 makes any step that would talk to the\n"
"kernel fail with exit code 1 (the host tests set it).\n",
		MAX_CONNS, DEF_TIMEOUT, DEF_DEAD_CONN_TIMEOUT, DEF_CONNECT_TIMEOUT);
}

struct opts {
	const char *name;
	int conns;
	unsigned int bs;
	unsigned long timeout, dead_conn_timeout;
	int connect_timeout;
	int no_reconnect, dry_run, wait, force;
	const char *disconnect;
	const char *host, *port, *device;
	int index;
};

static int parse_num(const char *arg, const char *what, unsigned long lo, unsigned long hi,
		     unsigned long *out)
{
	char *end;
	unsigned long v;

	errno = 0;
	if (!*arg || *arg == '-' || *arg == ' ')
		return fail(XC_USAGE, "bad %s '%s' (%lu-%lu)", what, arg, lo, hi);
	v = strtoul(arg, &end, 10);
	if (*end || errno || v < lo || v > hi)
		return fail(XC_USAGE, "bad %s '%s' (%lu-%lu)", what, arg, lo, hi);
	*out = v;
	return 0;
}

/* "/dev/nbd3" or "nbd3" -> 3 */
static int parse_device(const char *dev, int *index)
{
	const char *p = dev;
	char *end;
	long v;

	if (!strncmp(p, "/dev/", 5))
		p += 5;
	if (strncmp(p, "nbd", 3) || p[3] < '0' || p[3] > '9')
		return fail(XC_USAGE, "bad device '%s' (expected /dev/nbdN)", dev);
	errno = 0;
	v = strtol(p + 3, &end, 10);
	if (*end || errno || v < 0 || v > 65535)
		return fail(XC_USAGE, "bad device '%s' (expected /dev/nbdN)", dev);
	*index = v;
	return 0;
}

static int parse_args(int argc, char **argv, struct opts *o)
{
	static const struct option lo[] = {
		{ "name", required_argument, NULL, 'N' },
		{ "connections", required_argument, NULL, 'C' },
		{ "block-size", required_argument, NULL, 'b' },
		{ "timeout", required_argument, NULL, 't' },
		{ "dead-conn-timeout", required_argument, NULL, 'D' },
		{ "no-reconnect", no_argument, NULL, 'R' },
		{ "connect-timeout", required_argument, NULL, 'T' },
		{ "dry-run", no_argument, NULL, 'n' },
		{ "wait", no_argument, NULL, 'w' },
		{ "disconnect", required_argument, NULL, 'd' },
		{ "force", no_argument, NULL, 'f' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	unsigned long v;
	int c, rc, dead_set = 0;

	*o = (struct opts){ .name = "", .conns = 1, .bs = 4096, .timeout = DEF_TIMEOUT,
			    .dead_conn_timeout = DEF_DEAD_CONN_TIMEOUT,
			    .connect_timeout = DEF_CONNECT_TIMEOUT, .index = -1 };
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":N:C:b:t:D:RT:nwd:fh", lo, NULL)) != -1) {
		rc = 0;
		switch (c) {
		case 'N':
			o->name = optarg;
			if (strlen(optarg) > NBD_EXPORT_NAME_MAX)
				return fail(XC_USAGE, "export name longer than %d bytes", NBD_EXPORT_NAME_MAX);
			break;
		case 'C':
			rc = parse_num(optarg, "number of connections", 1, MAX_CONNS, &v);
			o->conns = v;
			break;
		case 'b':
			rc = parse_num(optarg, "block size", 512, 4096, &v);
			if (!rc && (v & (v - 1)))
				rc = fail(XC_USAGE, "bad block size '%s' (512, 1024, 2048 or 4096)", optarg);
			o->bs = v;
			break;
		case 't':
			rc = parse_num(optarg, "timeout", 0, 86400, &o->timeout);
			break;
		case 'D':
			rc = parse_num(optarg, "dead-conn-timeout", 0, 86400, &o->dead_conn_timeout);
			dead_set = 1;
			break;
		case 'R':
			o->no_reconnect = 1;
			break;
		case 'T':
			rc = parse_num(optarg, "connect timeout", 1, 600, &v);
			o->connect_timeout = v;
			break;
		case 'n':
			o->dry_run = 1;
			break;
		case 'w':
			o->wait = 1;
			break;
		case 'd':
			o->disconnect = optarg;
			break;
		case 'f':
			o->force = 1;
			break;
		case 'h':
			usage(stdout);
			exit(XC_OK);
		case ':':
			return fail(XC_USAGE, "option %s needs an argument (see --help)", argv[optind - 1]);
		default:
			return fail(XC_USAGE, "unknown option %s (see --help)", argv[optind - 1]);
		}
		if (rc)
			return rc;
	}
	if (o->disconnect) {
		if (optind != argc)
			return fail(XC_USAGE, "-d DEVICE takes no other arguments");
		return parse_device(o->disconnect, &o->index);
	}
	if (o->force)
		return fail(XC_USAGE, "--force goes with -d only");
	if (argc - optind != 3)
		return fail(XC_USAGE, "expected HOST PORT DEVICE (see --help)");
	o->host = argv[optind];
	o->port = argv[optind + 1];
	o->device = argv[optind + 2];
	if (o->wait && o->dry_run)
		return fail(XC_USAGE, "--wait and --dry-run do not go together");
	if (!o->dead_conn_timeout && !o->no_reconnect)
		return fail(XC_USAGE, "--dead-conn-timeout 0 disables the wait for a reconnect; "
			    "in-kernel reconnect needs it > 0 (or give --no-reconnect)");
	if (!o->dead_conn_timeout && dead_set)
		warn("--dead-conn-timeout 0: I/O fails at once when a connection is lost");
	return parse_device(o->device, &o->index);
}

/* Keep this process in memory and out of reclaim's way, as nbd-client -swap does. */
static void protect_self(int quiet)
{
	if (mlockall(MCL_CURRENT | MCL_FUTURE) < 0 && !quiet)
		warn("mlockall: %s: this process is not memory-locked (run as root)", strerror(errno));
	if (prctl(PR_SET_IO_FLUSHER, 1, 0, 0, 0) < 0 && !quiet)
		warn("prctl(PR_SET_IO_FLUSHER): %s: this process is not marked as an I/O flusher "
		     "(needs CAP_SYS_RESOURCE, Linux 5.6+)", strerror(errno));
}

static int kernel_errno(int err, const char *what, int index)
{
	switch (err) {
	case EPERM:
	case EACCES:
		return fail(XC_PERM, "%s nbd%d: %s: needs root (CAP_SYS_ADMIN)", what, index, strerror(err));
	case EBUSY:
		return fail(XC_BUSY, "%s nbd%d: device busy: it is already connected or being set up by another program",
			    what, index);
	case ENOMEM:
		return fail(XC_ERROR, "%s nbd%d: out of memory", what, index);
	case EIO:
		return fail(XC_ERROR, "%s nbd%d: the netlink socket failed", what, index);
	default:
		return fail(XC_KERNEL, "%s nbd%d: the kernel refused: %s (dmesg says why)", what, index,
			    strerror(err));
	}
}

static int open_family(struct nl_sock **sk, struct nbd_family *fam, int index)
{
	int err;

	*sk = nbdnl_open();
	if (!*sk)
		return XC_ERROR;
	err = nbdnl_family(*sk, fam);
	if (err == ENOENT)
		return fail(XC_NOKERNEL, "this kernel has no nbd generic netlink family: load the nbd module "
			    "(modprobe nbd) or build the kernel with CONFIG_BLK_DEV_NBD");
	if (err)
		return kernel_errno(err, "looking up the nbd family for", index);
	return 0;
}

/* Is /dev/nbdN in /proc/swaps? */
static int is_active_swap(int index)
{
	char line[512], want[32];
	FILE *f = fopen("/proc/swaps", "r");
	int found = 0;

	if (!f)
		return 0;
	snprintf(want, sizeof(want), "nbd%d", index);
	while (fgets(line, sizeof(line), f)) {
		char *sp = strpbrk(line, " \t"), *base;

		if (!sp)
			continue;
		*sp = 0;
		base = strrchr(line, '/');
		if (!strcmp(base ? base + 1 : line, want))
			found = 1;
	}
	fclose(f);
	return found;
}

static int do_disconnect(const struct opts *o)
{
	struct nl_sock *sk;
	struct nbd_family fam;
	char path[32];
	int rc, err, connected, fd;

	rc = open_family(&sk, &fam, o->index);
	if (rc)
		goto out;
	err = nbdnl_status(sk, &fam, o->index, &connected);
	if (err) {
		rc = kernel_errno(err, "asking the kernel about", o->index);
		goto out;
	}
	if (!connected) {
		rc = fail(XC_NOTCONN, "nbd%d is not connected", o->index);
		goto out;
	}
	snprintf(path, sizeof(path), "/dev/nbd%d", o->index);
	if (!o->force) {
		if (is_active_swap(o->index)) {
			rc = fail(XC_BUSY, "%s is active swap: swapoff %s first (--force detaches anyway and "
				  "every page swapped out to it is lost)", path, path);
			goto out;
		}
		fd = open(path, O_RDONLY | O_EXCL | O_CLOEXEC);
		if (fd < 0 && errno == EBUSY) {
			rc = fail(XC_BUSY, "%s is in use (mounted, or held by another program); "
				  "--force detaches anyway", path);
			goto out;
		}
		if (fd >= 0)
			close(fd);
	}
	err = nbdnl_disconnect(sk, &fam, o->index);
	if (err) {
		rc = kernel_errno(err, "disconnecting", o->index);
		goto out;
	}
	/* the kernel lets go of the device asynchronously; wait up to 10 s */
	for (int i = 0; i < 100; i++) {
		if (nbdnl_status(sk, &fam, o->index, &connected) || !connected)
			break;
		usleep(100000);
	}
	if (connected)
		warn("nbd%d: disconnect requested, the kernel still holds it after 10 s", o->index);
	else
		printf("%s disconnected\n", path);
out:
	nbdnl_close(sk);
	return rc;
}

/* Every connection must see the same export, and it must suit swap. */
static int check_export(const struct opts *o, const struct server *s, const struct nbd_export *ex, int n)
{
	if (n > 0) {
		const struct nbd_export *first = &ex[0], *e = &ex[n];

		if (e->size != first->size || e->flags != first->flags)
			return fail(XC_PROTOCOL, "connection %d saw size %llu flags 0x%x, connection 1 size %llu flags 0x%x",
				    n + 1, (unsigned long long)e->size, e->flags,
				    (unsigned long long)first->size, first->flags);
		return 0;
	}
	if (ex->flags & 2)	/* NBD_FLAG_READ_ONLY */
		return fail(XC_REFUSED, "export '%s' on %s is read-only; swap needs a writable export",
			    o->name, s->text);
	if (ex->size < MIN_SWAP_BYTES)
		return fail(XC_REFUSED, "export '%s' on %s has %llu bytes: too small for swap (at least %u)",
			    o->name, s->text, (unsigned long long)ex->size, MIN_SWAP_BYTES);
	if (ex->size > (uint64_t)INT64_MAX)
		return fail(XC_PROTOCOL, "export '%s' on %s: size %llu is out of range",
			    o->name, s->text, (unsigned long long)ex->size);
	if (ex->has_bs) {
		if (!ex->min_bs || ex->min_bs > 65536 || (ex->min_bs & (ex->min_bs - 1)) ||
		    ex->max_bs < ex->min_bs)
			return fail(XC_PROTOCOL, "server %s: nonsensical block sizes min %u preferred %u max %u",
				    s->text, ex->min_bs, ex->pref_bs, ex->max_bs);
		if (o->bs < ex->min_bs)
			return fail(XC_REFUSED, "server %s needs a block size of at least %u; the kernel "
				    "allows at most 4096 here (-b %u)", s->text, ex->min_bs, o->bs);
		if (o->bs > ex->max_bs)
			return fail(XC_REFUSED, "server %s accepts at most %u bytes per request, less than "
				    "the block size %u (-b)", s->text, ex->max_bs, o->bs);
		if (ex->max_bs < KERNEL_MAX_REQUEST)
			warn("server %s accepts at most %u bytes per request; the kernel may send up to %u "
			     "(swap I/O is far smaller, other use of the device may fail)",
			     s->text, ex->max_bs, KERNEL_MAX_REQUEST);
	}
	if (ex->size % o->bs)
		warn("export size %llu is not a multiple of the block size %u; the tail is unused",
		     (unsigned long long)ex->size, o->bs);
	if (o->conns > 1 && !(ex->flags & (1 << 8)))	/* NBD_FLAG_CAN_MULTI_CONN */
		warn("server %s does not announce NBD_FLAG_CAN_MULTI_CONN; with -C %d, a flush on one "
		     "connection may not cover writes on another", s->text, o->conns);
	return 0;
}

static void print_config(const struct opts *o, const struct server *s, const struct nbd_export *ex,
			 int nconns, const char *reconnect)
{
	char fl[200];

	describe_flags(ex->flags, fl, sizeof(fl));
	printf("device=/dev/nbd%d\n", o->index);
	printf("server=%s\n", s->text);
	printf("export=%s\n", o->name);
	printf("negotiation=%s\n", ex->used_go ? "NBD_OPT_GO" : "NBD_OPT_EXPORT_NAME");
	printf("size=%llu\n", (unsigned long long)ex->size);
	printf("block_size=%u\n", o->bs);
	if (ex->has_bs)
		printf("server_block_sizes=min:%u,preferred:%u,max:%u\n", ex->min_bs, ex->pref_bs, ex->max_bs);
	else
		printf("server_block_sizes=none\n");
	printf("server_flags=0x%04x %s\n", ex->flags, fl);
	printf("connections=%d\n", nconns);
	printf("timeout=%lu\n", o->timeout);
	printf("dead_conn_timeout=%lu\n", o->dead_conn_timeout);
	printf("reconnect=%s\n", reconnect);
}

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static void stamp(char *buf, size_t len)
{
	time_t t = time(NULL);
	struct tm tm;

	localtime_r(&t, &tm);
	strftime(buf, len, "%H:%M:%S", &tm);
}

static void on_link_dead(int index)
{
	char ts[16];

	stamp(ts, sizeof(ts));
	printf("%s nbd%d: the kernel reports a dead connection (NBD_CMD_LINK_DEAD)\n", ts, index);
	fflush(stdout);
}

/* --wait: stay resident, log the device's link-dead events until it goes away. */
static int wait_resident(struct nl_sock *sk, const struct nbd_family *fam, int index)
{
	struct sigaction sa = { .sa_handler = on_signal };
	struct nl_sock *ev;
	char ts[16];
	int fd, err, connected = 1;

	fd = open("/proc/self/oom_score_adj", O_WRONLY | O_CLOEXEC);
	if (fd < 0 || write(fd, "-1000", 5) != 5)
		warn("oom_score_adj: %s: the OOM killer may pick this process", strerror(errno));
	if (fd >= 0)
		close(fd);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	ev = nbdnl_open();
	if (!ev)
		return XC_ERROR;
	err = nbdnl_watch(ev, fam);
	if (err) {
		nbdnl_close(ev);
		return fail(XC_ERROR, "cannot listen to nbd's multicast group: %s", strerror(err));
	}
	stamp(ts, sizeof(ts));
	printf("%s nbd%d: watching for NBD_CMD_LINK_DEAD (SIGTERM leaves the device connected)\n", ts, index);
	fflush(stdout);
	while (!stop) {
		err = nbdnl_events(ev, index, 5000, on_link_dead);
		if (err)
			warn("reading nbd events: %s", strerror(err));
		if (stop)
			break;
		if (!nbdnl_status(sk, fam, index, &connected) && !connected)
			break;
	}
	stamp(ts, sizeof(ts));
	if (!connected)
		printf("%s nbd%d: disconnected; exiting\n", ts, index);
	else
		printf("%s nbd%d: signal; leaving the device connected\n", ts, index);
	nbdnl_close(ev);
	return XC_OK;
}

static int do_attach(const struct opts *o)
{
	struct server s;
	struct nbd_export ex[MAX_CONNS];
	int fds[MAX_CONNS], nfds = 0, rc, err, connected;
	struct nl_sock *sk = NULL;
	struct nbd_family fam = { 0 };
	int reconnect = !o->no_reconnect;
	char how[160];

	rc = server_parse(&s, o->host, o->port);
	if (rc)
		return rc;
	if (!o->dry_run) {
		rc = open_family(&sk, &fam, o->index);
		if (rc)
			goto out;
		if (fam.maxattr < NBD_ATTR_EXPORT_NAME) {
			if (!o->no_reconnect) {
				rc = fail(XC_NORECONNECT,
					  "this kernel's nbd cannot reconnect by itself (netlink maxattr %u, "
					  "NBD_ATTR_EXPORT_NAME is %d): if the connection to the server is lost, "
					  "swap I/O fails after %lu s and the processes whose pages were swapped "
					  "out are killed. Use a kernel with in-kernel nbd reconnect, or give "
					  "--no-reconnect to attach without it",
					  fam.maxattr, NBD_ATTR_EXPORT_NAME, o->dead_conn_timeout);
				goto out;
			}
			note("this kernel's nbd cannot reconnect by itself; attaching without reconnect "
			     "(--no-reconnect)");
		}
		err = nbdnl_status(sk, &fam, o->index, &connected);
		if (err) {
			rc = kernel_errno(err, "asking the kernel about", o->index);
			goto out;
		}
		if (connected) {
			rc = fail(XC_BUSY, "/dev/nbd%d is already connected (" PROG " -d /dev/nbd%d detaches it)",
				  o->index, o->index);
			goto out;
		}
	}
	while (nfds < o->conns) {
		rc = nbd_open_export(&s, o->name, o->connect_timeout, nfds + 1, &ex[nfds], &fds[nfds]);
		if (rc)
			goto out;
		nfds++;
		rc = check_export(o, &s, ex, nfds - 1);
		if (rc)
			goto out;
	}
	if (o->no_reconnect)
		snprintf(how, sizeof(how), "off (--no-reconnect)");
	else if (o->dry_run)
		snprintf(how, sizeof(how), "in-kernel: NBD_ATTR_EXPORT_NAME and NBD_SOCK_ADDR on %d socket%s "
			 "(kernel support is not checked by --dry-run)", o->conns, o->conns > 1 ? "s" : "");
	else
		snprintf(how, sizeof(how), "in-kernel: NBD_ATTR_EXPORT_NAME and NBD_SOCK_ADDR on %d socket%s",
			 o->conns, o->conns > 1 ? "s" : "");
	if (o->dry_run) {
		printf("dry-run: would configure /dev/nbd%d:\n", o->index);
		print_config(o, &s, &ex[0], nfds, how);
		goto out;
	}
	for (int i = 0; i < nfds; i++) {
		rc = nbd_ready_for_kernel(fds[i]);
		if (rc)
			goto out;
	}
	struct nbd_config cfg = {
		.index = o->index,
		.size = ex[0].size,
		.block_size = o->bs,
		.server_flags = ex[0].flags,
		.timeout = o->timeout,
		.dead_conn_timeout = o->dead_conn_timeout,
		.export_name = reconnect ? o->name : NULL,
		.addr = reconnect ? &s.addr : NULL,
		.addrlen = s.addrlen,
		.nsocks = nfds,
		.fds = fds,
	};
	err = nbdnl_connect(sk, &fam, &cfg);
	if (err) {
		rc = kernel_errno(err, "configuring", o->index);
		goto out;
	}
	/* the kernel holds its own references to the sockets now */
	for (int i = 0; i < nfds; i++)
		close(fds[i]);
	nfds = 0;
	printf("/dev/nbd%d connected: server %s export '%s', %llu bytes, %d connection%s, timeout %lu s, "
	       "dead_conn_timeout %lu s, reconnect %s\n",
	       o->index, s.text, o->name, (unsigned long long)ex[0].size, o->conns, o->conns > 1 ? "s" : "",
	       o->timeout, o->dead_conn_timeout, reconnect ? "in kernel" : "off");
	fflush(stdout);
	if (o->wait)
		rc = wait_resident(sk, &fam, o->index);
out:
	for (int i = 0; i < nfds; i++) {
		nbd_say_goodbye(fds[i]);
		close(fds[i]);
	}
	nbdnl_close(sk);
	return rc;
}

int main(int argc, char **argv)
{
	struct opts o;
	int rc;

	setvbuf(stdout, NULL, _IOLBF, 0);
	rc = parse_args(argc, argv, &o);
	if (rc)
		return rc;
	protect_self(0);
	if (o.disconnect)
		return do_disconnect(&o);
	return do_attach(&o);
}
