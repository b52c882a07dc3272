// SPDX-License-Identifier: GPL-2.0
/*
 * udpsink - an ordinary (non-memalloc) UDP receiver for the guest.
 *
 * Binds 0.0.0.0:PORT, counts the datagrams it receives and prints
 * "udpsink: t=SEC received=N bytes=N" every interval. Under memory pressure
 * with the series, datagrams that arrive in reserve memory are dropped before
 * they reach this socket (TcpExt.PFMemallocDrop counts them).
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void usage(FILE *f)
{
	fprintf(f,
"Usage: udpsink -p PORT [-i SEC] [-d SEC] [-b BYTES] [-H]\n"
"Count UDP datagrams received on 0.0.0.0:PORT.\n"
"  -p PORT  port to bind (1..65535)\n"
"  -i SEC   report interval (default 2)\n"
"  -d SEC   stop after SEC seconds (default: run until killed)\n"
"  -b BYTES receive buffer (SO_RCVBUFFORCE: above net.core.rmem_max)\n"
"  -H       hold: never read, so that the queue keeps its datagrams\n"
"           (a slow reader pinning receive memory)\n"
"Exit status: 0 ok, 2 usage error, 1 socket error.\n");
}

int main(int argc, char **argv)
{
	double interval = 2, duration = 0, t0, last;
	long rcvbuf = 0;
	int hold = 0;
	unsigned long long received = 0, bytes = 0;
	struct sockaddr_in sa = { .sin_family = AF_INET };
	static char buf[65536];
	long port = 0;
	char *end;
	int opt, fd;

	while ((opt = getopt(argc, argv, "p:i:d:b:Hh")) != -1) {
		switch (opt) {
		case 'p':
			port = strtol(optarg, &end, 10);
			if (*end || port < 1 || port > 65535)
				goto bad;
			break;
		case 'i':
			interval = strtod(optarg, &end);
			if (*end || interval < 0.1)
				goto bad;
			break;
		case 'd':
			duration = strtod(optarg, &end);
			if (*end || duration <= 0)
				goto bad;
			break;
		case 'b':
			rcvbuf = strtol(optarg, &end, 10);
			if (*end || rcvbuf < 1 || rcvbuf > 1L << 30)
				goto bad;
			break;
		case 'H':
			hold = 1;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (!port || optind != argc) {
		usage(stderr);
		return 2;
	}
	mlockall(MCL_CURRENT | MCL_FUTURE);
	fd = socket(AF_INET, SOCK_DGRAM, 0);
	sa.sin_port = htons(port);
	if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		fprintf(stderr, "udpsink: cannot bind port %ld: %s\n", port, strerror(errno));
		return 1;
	}
	if (rcvbuf) {
		int v = (int)rcvbuf;
		socklen_t len = sizeof(v);

		if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &v, sizeof(v))) {
			fprintf(stderr, "udpsink: SO_RCVBUFFORCE %ld: %s\n", rcvbuf, strerror(errno));
			return 1;
		}
		getsockopt(fd, SOL_SOCKET, SO_RCVBUF, &v, &len);
		rcvbuf = v;
	}
	printf("udpsink: listening port=%ld rcvbuf=%ld hold=%d\n", port, rcvbuf, hold);
	fflush(stdout);
	t0 = last = now();
	for (;;) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		double t;

		if (hold) {
			poll(NULL, 0, 200);
		} else if (poll(&p, 1, 200) > 0) {
			ssize_t n = recv(fd, buf, sizeof(buf), MSG_DONTWAIT);

			if (n >= 0) {
				received++;
				bytes += n;
			}
		}
		t = now();
		if (t - last >= interval || (duration && t - t0 >= duration)) {
			printf("udpsink: t=%.1f received=%llu bytes=%llu\n", t - t0, received, bytes);
			fflush(stdout);
			last = t;
		}
		if (duration && t - t0 >= duration)
			return 0;
	}
bad:
	fprintf(stderr, "udpsink: invalid value '%s' for -%c\n", optarg, opt);
	usage(stderr);
	return 2;
}
