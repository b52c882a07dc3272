// SPDX-License-Identifier: GPL-2.0
/*
 * loopbench - throughput of one message size over the guest's loopback.
 *
 * A sender (this process) and a receiver (a child) exchange TOTAL bytes in
 * SIZE-byte writes or datagrams over 127.0.0.1, once untimed (the warm-up)
 * and then REPS times timed with CLOCK_MONOTONIC. Made for guests under QEMU
 * instruction counting, where guest time is a function of the instructions
 * executed: nothing is printed until every repetition is done, both sides
 * may be pinned to CPUs, and the socket buffers may be fixed.
 *
 * TCP: one connection; a repetition ends when the receiver, having read all
 * TOTAL bytes (in reads of up to READ bytes), sends one byte back.
 * UDP: a repetition starts at the sender's first datagram and ends at the
 * receiver's last; with -W N the sender waits for the receiver's word after
 * every N datagrams (no drops while N datagrams fit the receive buffer),
 * with -W 0 it sends as fast as it can (drops are counted, as iperf3 -u -b 0
 * does).
 *
 * One line per timed repetition, after the last:
 *   NETSWAP: bench proto=P size=N rep=I bytes=B sent=S ns=T bits_per_second=X
 *            window=N stalls=K
 * (bytes: received; bits_per_second: bytes * 8 / T; stalls: UDP words that
 * did not come, i.e. datagrams lost although paced).
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_REPS 1000
#define MARK 0x80		/* UDP: first byte of the end-of-repetition datagram */
#define TAG(phase) ((phase) % 0x7f)	/* UDP: first byte of a repetition's datagrams */
#define WORD_WAIT_MS 1000	/* UDP -W: how long the sender waits for a word */

struct opts {
	int udp;
	long size;		/* bytes per write or datagram */
	long long total;	/* bytes per repetition */
	long long warmup;	/* bytes of the untimed first transfer */
	int reps;
	long rsize;		/* receiver's read size */
	int sockbuf;		/* SO_SNDBUF / SO_RCVBUF, 0 = the kernel's autotuning */
	int window;		/* UDP: datagrams between the receiver's words, 0 = unpaced,
				 * -1 = min(128, 65536 / size): fits the default receive buffer */
	int cpu_send, cpu_recv;	/* -1 = not pinned */
	int rt_send, rt_recv;	/* SCHED_FIFO priorities, 0 = SCHED_OTHER */
	int nodelay;
};

/* what the receiver tells the sender at the end of a UDP repetition */
struct udp_result {
	long long bytes;
	long long t_last;	/* ns, CLOCK_MONOTONIC: the last payload datagram */
};

static long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void usage(FILE *f)
{
	fprintf(f,
"Usage: loopbench [-u] -s SIZE [-t TOTAL] [-w WARMUP] [-n REPS] [-r READ]\n"
"                 [-B SOCKBUF] [-W WINDOW] [-c SEND_CPU,RECV_CPU] [-P S,R] [-D]\n"
"Throughput of SIZE-byte writes (TCP) or datagrams (UDP, -u) over 127.0.0.1,\n"
"between this process and a child, timed with CLOCK_MONOTONIC.\n"
"  -s SIZE    bytes per write or datagram (1..65507)\n"
"  -t TOTAL   bytes per timed repetition (default 8388608)\n"
"  -w WARMUP  bytes of the untimed transfer first (default 1048576; 0 = none)\n"
"  -n REPS    timed repetitions (default 3, at most 1000)\n"
"  -r READ    receiver's read size for TCP (default 131072)\n"
"  -B BYTES   fix SO_SNDBUF and SO_RCVBUF (default: the kernel's autotuning)\n"
"  -W N       UDP: the sender waits (up to 1 s) for the receiver's word after\n"
"             every N datagrams (default: min(128, 65536 / SIZE), which fits the\n"
"             default receive buffer; 0 = send unpaced, drops counted)\n"
"  -c S,R     pin the sender to CPU S and the receiver to CPU R\n"
"  -P S,R     run the sender and the receiver under SCHED_FIFO at priorities\n"
"             S and R (1..99; 0 = leave that side under SCHED_OTHER): on one\n"
"             CPU, which side runs when both can is then fixed\n"
"  -D         TCP_NODELAY on the sender\n"
"Prints, after the last repetition, one line per repetition (the rig's\n"
"bench tag, then):\n"
"  proto=P size=N rep=I bytes=B sent=S ns=T bits_per_second=X window=N stalls=K\n"
"(bytes received; stalls: UDP words that did not come within 1 s)\n"
"Exit status: 0 ok, 1 socket or system error, 2 usage error.\n");
}

static int die(const char *what)
{
	fprintf(stderr, "loopbench: %s: %s\n", what, strerror(errno));
	return 1;
}

/* this process on CPU cpu (-1: anywhere) under SCHED_FIFO prio (0: as it is) */
static int place(int cpu, int prio)
{
	struct sched_param sp = { .sched_priority = prio };
	cpu_set_t set;

	if (cpu >= 0) {
		CPU_ZERO(&set);
		CPU_SET(cpu, &set);
		if (sched_setaffinity(0, sizeof(set), &set))
			return -1;
	}
	return prio ? sched_setscheduler(0, SCHED_FIFO, &sp) : 0;
}

static int write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len) {
		ssize_t n = write(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		p += n;
		len -= n;
	}
	return 0;
}

static int read_all(int fd, void *buf, size_t len)
{
	char *p = buf;

	while (len) {
		ssize_t n = read(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		p += n;
		len -= n;
	}
	return 0;
}

static long long phase_bytes(const struct opts *o, int phase)
{
	return phase ? o->total : o->warmup;
}

/* ---- TCP ---- */

static int tcp_receiver(const struct opts *o, int lfd)
{
	char *buf = malloc(o->rsize);
	int fd = accept(lfd, NULL, NULL);
	int phase;

	if (!buf || fd < 0)
		return die("accept");
	for (phase = o->warmup ? 0 : 1; phase <= o->reps; phase++) {
		long long left = phase_bytes(o, phase);

		while (left > 0) {
			ssize_t n = read(fd, buf, left < o->rsize ? left : o->rsize);

			if (n < 0 && errno == EINTR)
				continue;
			if (n <= 0)
				return die("receiver read");
			left -= n;
		}
		if (write_all(fd, "k", 1))
			return die("receiver ack");
	}
	close(fd);
	return 0;
}

static int tcp_sender(const struct opts *o, struct sockaddr_in *sa,
		      long long *ns, long long *bytes)
{
	char *buf = calloc(1, o->size);
	int fd = socket(AF_INET, SOCK_STREAM, 0), phase;
	char ack;

	if (!buf || fd < 0)
		return die("socket");
	if (o->sockbuf &&
	    setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &o->sockbuf, sizeof(o->sockbuf)))
		return die("SO_SNDBUF");
	if (o->nodelay &&
	    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &o->nodelay, sizeof(o->nodelay)))
		return die("TCP_NODELAY");
	if (connect(fd, (struct sockaddr *)sa, sizeof(*sa)))
		return die("connect");
	for (phase = o->warmup ? 0 : 1; phase <= o->reps; phase++) {
		long long left = phase_bytes(o, phase), t0 = now_ns();

		while (left > 0) {
			size_t len = left < o->size ? left : o->size;

			if (write_all(fd, buf, len))
				return die("sender write");
			left -= len;
		}
		if (read_all(fd, &ack, 1))
			return die("sender ack");
		if (phase) {
			ns[phase - 1] = now_ns() - t0;
			bytes[phase - 1] = o->total;
		}
	}
	close(fd);
	return 0;
}

/* ---- UDP ---- */

static int udp_receiver(const struct opts *o, int fd, int word_fd, int res_fd)
{
	static char buf[65536];
	struct udp_result r = { 0, 0 };
	int phase = o->warmup ? 0 : 1;
	long long count = 0;

	while (phase <= o->reps) {
		ssize_t n = recv(fd, buf, sizeof(buf), 0);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return die("receiver recv");
		if ((buf[0] & 0x7f) != TAG(phase))
			continue;	/* a late datagram of the previous repetition */
		if (buf[0] & MARK) {
			if (write_all(res_fd, &r, sizeof(r)))
				return die("receiver result");
			r.bytes = r.t_last = 0;
			count = 0;
			phase++;
			continue;
		}
		r.bytes += n;
		r.t_last = now_ns();
		if (o->window && ++count % o->window == 0 && write_all(word_fd, "w", 1))
			return die("receiver word");
	}
	return 0;
}

/* wait for the receiver's word; 1 if it did not come (a datagram was lost) */
static int wait_word(int word_fd)
{
	struct pollfd pfd = { .fd = word_fd, .events = POLLIN };
	char w;
	int n;

	do
		n = poll(&pfd, 1, WORD_WAIT_MS);
	while (n < 0 && errno == EINTR);
	if (n <= 0)
		return n < 0 ? -1 : 1;
	return read_all(word_fd, &w, 1);
}

static int udp_sender(const struct opts *o, struct sockaddr_in *sa, int word_fd,
		      int res_fd, long long *ns, long long *bytes, long long *sent,
		      long long *stalls)
{
	char *buf = calloc(1, o->size);
	int fd = socket(AF_INET, SOCK_DGRAM, 0), phase;

	if (!buf || fd < 0)
		return die("socket");
	if (o->sockbuf &&
	    setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &o->sockbuf, sizeof(o->sockbuf)))
		return die("SO_SNDBUF");
	if (connect(fd, (struct sockaddr *)sa, sizeof(*sa)))
		return die("connect");
	for (phase = o->warmup ? 0 : 1; phase <= o->reps; phase++) {
		long long left = phase_bytes(o, phase), out = 0, count = 0, t0;
		struct udp_result r;
		struct pollfd pfd = { .fd = res_fd, .events = POLLIN };
		char mark = MARK | TAG(phase);

		buf[0] = TAG(phase);
		t0 = now_ns();
		while (left > 0) {
			size_t len = left < o->size ? left : o->size;

			if (send(fd, buf, len, 0) < 0) {
				if (errno == ENOBUFS || errno == EAGAIN || errno == EINTR)
					continue;
				return die("sender send");
			}
			left -= len;
			out += len;
			if (o->window && ++count % o->window == 0) {
				int w = wait_word(word_fd);

				if (w < 0)
					return die("sender word");
				if (phase)
					stalls[phase - 1] += w;
			}
		}
		/* the end mark, again until the receiver answers (it may be dropped) */
		do {
			if (send(fd, &mark, 1, 0) < 0 && errno != ENOBUFS && errno != EAGAIN)
				return die("sender mark");
		} while (poll(&pfd, 1, 10) == 0);
		if (read_all(res_fd, &r, sizeof(r)))
			return die("sender result");
		if (phase) {
			ns[phase - 1] = r.bytes ? r.t_last - t0 : 0;
			bytes[phase - 1] = r.bytes;
			sent[phase - 1] = out;
		}
	}
	close(fd);
	return 0;
}

static int parse_ll(const char *s, long long lo, long long hi, long long *v)
{
	char *end;

	errno = 0;
	*v = strtoll(s, &end, 10);
	return errno || *end || end == s || *v < lo || *v > hi;
}

int main(int argc, char **argv)
{
	struct opts o = { .total = 8388608, .warmup = 1048576, .reps = 3,
			  .rsize = 131072, .window = -1, .cpu_send = -1, .cpu_recv = -1 };
	static long long ns[MAX_REPS], bytes[MAX_REPS], sent[MAX_REPS], stalls[MAX_REPS];
	struct sockaddr_in sa = { .sin_family = AF_INET };
	socklen_t salen = sizeof(sa);
	int opt, fd, words[2], res[2], status, rc, i;
	long long v;
	pid_t child;

	while ((opt = getopt(argc, argv, "us:t:w:n:r:B:W:c:P:Dh")) != -1) {
		switch (opt) {
		case 'u':
			o.udp = 1;
			break;
		case 's':
			if (parse_ll(optarg, 1, 65507, &v))
				goto bad;
			o.size = v;
			break;
		case 't':
			if (parse_ll(optarg, 1, 1LL << 40, &o.total))
				goto bad;
			break;
		case 'w':
			if (parse_ll(optarg, 0, 1LL << 40, &o.warmup))
				goto bad;
			break;
		case 'n':
			if (parse_ll(optarg, 1, MAX_REPS, &v))
				goto bad;
			o.reps = v;
			break;
		case 'r':
			if (parse_ll(optarg, 1, 1 << 24, &v))
				goto bad;
			o.rsize = v;
			break;
		case 'B':
			if (parse_ll(optarg, 0, 1 << 28, &v))
				goto bad;
			o.sockbuf = v;
			break;
		case 'W':
			if (parse_ll(optarg, 0, 1 << 20, &v))
				goto bad;
			o.window = v;
			break;
		case 'c':
			if (sscanf(optarg, "%d,%d", &o.cpu_send, &o.cpu_recv) != 2 ||
			    o.cpu_send < 0 || o.cpu_recv < 0 || o.cpu_send >= CPU_SETSIZE ||
			    o.cpu_recv >= CPU_SETSIZE)
				goto bad;
			break;
		case 'P':
			if (sscanf(optarg, "%d,%d", &o.rt_send, &o.rt_recv) != 2 ||
			    o.rt_send < 0 || o.rt_recv < 0 || o.rt_send > 99 || o.rt_recv > 99)
				goto bad;
			break;
		case 'D':
			o.nodelay = 1;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			goto bad;
		}
	}
	if (!o.size || optind != argc)
		goto bad;
	if (o.udp && o.size < 2) {
		fprintf(stderr, "loopbench: UDP needs -s 2 or more\n");
		goto bad;
	}
	if (o.window < 0)
		o.window = 65536 / o.size > 128 ? 128 : 65536 / o.size ? 65536 / o.size : 1;
	if (!o.udp)
		o.window = 0;

	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	fd = socket(AF_INET, o.udp ? SOCK_DGRAM : SOCK_STREAM, 0);
	if (fd < 0)
		return die("socket");
	/* on the listener, so that the accepted socket starts with it */
	if (o.sockbuf &&
	    setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &o.sockbuf, sizeof(o.sockbuf)))
		return die("SO_RCVBUF");
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) ||
	    getsockname(fd, (struct sockaddr *)&sa, &salen))
		return die("bind");
	if (!o.udp && listen(fd, 1))
		return die("listen");
	if (pipe(words) || pipe(res))
		return die("pipe");
	fflush(NULL);
	child = fork();
	if (child < 0)
		return die("fork");
	if (child == 0) {
		close(words[0]);
		close(res[0]);
		if (place(o.cpu_recv, o.rt_recv))
			_exit(die("receiver placement"));
		_exit(o.udp ? udp_receiver(&o, fd, words[1], res[1]) : tcp_receiver(&o, fd));
	}
	close(words[1]);
	close(res[1]);
	if (place(o.cpu_send, o.rt_send)) {
		kill(child, SIGKILL);
		return die("sender placement");
	}
	rc = o.udp ? udp_sender(&o, &sa, words[0], res[0], ns, bytes, sent, stalls)
		   : tcp_sender(&o, &sa, ns, bytes);
	if (rc)
		kill(child, SIGKILL);
	if (waitpid(child, &status, 0) < 0)
		return die("waitpid");
	if (rc || !WIFEXITED(status) || WEXITSTATUS(status))
		return 1;
	for (i = 0; i < o.reps; i++) {
		if (!o.udp)
			sent[i] = o.total;
		printf("NETSWAP: bench proto=%s size=%ld rep=%d bytes=%lld sent=%lld ns=%lld bits_per_second=%.0f window=%d stalls=%lld\n",
		       o.udp ? "udp" : "tcp", o.size, i + 1, bytes[i], sent[i], ns[i],
		       ns[i] ? bytes[i] * 8e9 / ns[i] : 0.0, o.window, stalls[i]);
	}
	return 0;
bad:
	usage(stderr);
	return 2;
}
