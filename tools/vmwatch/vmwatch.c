// SPDX-License-Identifier: GPL-2.0
/*
 * vmwatch - print selected VM and network counters as key=value lines.
 *
 * Sources: /proc/vmstat (any key), /proc/meminfo (keys as written there, in kB),
 * /proc/net/netstat and /proc/net/snmp (as Group.Key, e.g. TcpExt.PFMemallocDrop),
 * /proc/net/sockstat (as Sockstat.PROTO.key, e.g. Sockstat.TCP.mem, in pages).
 * It locks itself in memory so that it keeps reporting under memory pressure.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define MAX_KEYS 64
#define LINE 8192

static const char *default_keys =
	"nr_free_pages,pswpin,pswpout,pgscan_direct,pgscan_kswapd,pgscan_direct_throttle,"
	"allocstall_normal,allocstall_dma32,oom_kill,SwapFree,TcpExt.PFMemallocDrop,"
	"nr_writeback,Sockstat.TCP.mem,Tcp.RetransSegs";

static char *keys[MAX_KEYS];
static long long vals[MAX_KEYS];
static int found[MAX_KEYS];
static int nkeys;

static void usage(FILE *f)
{
	fprintf(f,
"Usage: vmwatch [-i SEC] [-n COUNT] [-t TAG] [-k KEY,KEY,...]\n"
"Print counters as one line: 'vmwatch: tag=TAG t=UPTIME KEY=VALUE ...'.\n"
"  -i SEC    repeat every SEC seconds (default: print once and exit)\n"
"  -n COUNT  stop after COUNT lines (with -i)\n"
"  -t TAG    tag written on every line (default: snap)\n"
"  -k KEYS   comma-separated keys: /proc/vmstat names, /proc/meminfo names\n"
"            (kB), Group.Key of /proc/net/netstat and /proc/net/snmp,\n"
"            or Sockstat.PROTO.key of /proc/net/sockstat\n"
"            default: %s\n"
"A key that exists nowhere is printed as KEY=NA.\n"
"Exit status: 0 ok, 2 usage error, 1 /proc unreadable.\n", default_keys);
}

static int key_index(const char *k)
{
	int i;

	for (i = 0; i < nkeys; i++)
		if (!strcmp(keys[i], k))
			return i;
	return -1;
}

static void set(const char *k, long long v)
{
	int i = key_index(k);

	if (i >= 0) {
		vals[i] = v;
		found[i] = 1;
	}
}

static int read_kv(const char *path, int meminfo)
{
	char line[LINE], name[128];
	long long v;
	FILE *f = fopen(path, "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (meminfo) {
			if (sscanf(line, "%127[^:]: %lld", name, &v) == 2)
				set(name, v);
		} else if (sscanf(line, "%127s %lld", name, &v) == 2) {
			set(name, v);
		}
	}
	fclose(f);
	return 0;
}

/* netstat/snmp: pairs of lines "Group: K1 K2 ..." / "Group: V1 V2 ..." */
static void read_net(const char *path)
{
	static char hdr[LINE], val[LINE];
	FILE *f = fopen(path, "r");

	if (!f)
		return;
	while (fgets(hdr, sizeof(hdr), f) && fgets(val, sizeof(val), f)) {
		char *hs, *vs, *h, *v, *group;
		char full[256];

		group = strtok_r(hdr, " \n", &hs);
		v = strtok_r(val, " \n", &vs);
		if (!group || !v)
			continue;
		group[strlen(group) - 1] = '\0'; /* drop ':' */
		while ((h = strtok_r(NULL, " \n", &hs)) && (v = strtok_r(NULL, " \n", &vs))) {
			snprintf(full, sizeof(full), "%s.%s", group, h);
			set(full, atoll(v));
		}
	}
	fclose(f);
}

/* sockstat: "PROTO: k1 v1 k2 v2 ..." */
static void read_sockstat(const char *path)
{
	static char line[LINE];
	FILE *f = fopen(path, "r");

	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		char *ls, *proto, *k, *v;
		char full[256];

		proto = strtok_r(line, " \n", &ls);
		if (!proto || !*proto)
			continue;
		proto[strlen(proto) - 1] = '\0'; /* drop ':' */
		while ((k = strtok_r(NULL, " \n", &ls)) && (v = strtok_r(NULL, " \n", &ls))) {
			snprintf(full, sizeof(full), "Sockstat.%s.%s", proto, k);
			set(full, atoll(v));
		}
	}
	fclose(f);
}

static double uptime(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_BOOTTIME, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int snap(const char *tag)
{
	char out[LINE];
	int i, n;

	memset(found, 0, sizeof(found));
	if (read_kv("/proc/vmstat", 0))
		return -1;
	read_kv("/proc/meminfo", 1);
	read_net("/proc/net/netstat");
	read_net("/proc/net/snmp");
	read_sockstat("/proc/net/sockstat");
	n = snprintf(out, sizeof(out), "vmwatch: tag=%s t=%.1f", tag, uptime());
	for (i = 0; i < nkeys && n < (int)sizeof(out) - 64; i++) {
		if (found[i])
			n += snprintf(out + n, sizeof(out) - n, " %s=%lld", keys[i], vals[i]);
		else
			n += snprintf(out + n, sizeof(out) - n, " %s=NA", keys[i]);
	}
	out[n++] = '\n';
	return write(STDOUT_FILENO, out, n) == n ? 0 : -1;
}

int main(int argc, char **argv)
{
	const char *tag = "snap";
	char *list = strdup(default_keys), *tok, *save;
	double interval = 0;
	long count = 0, done = 0;
	char *end;
	int opt;

	while ((opt = getopt(argc, argv, "i:n:t:k:h")) != -1) {
		switch (opt) {
		case 'i':
			errno = 0;
			interval = strtod(optarg, &end);
			if (errno || *end || interval < 0.01 || interval > 86400)
				goto bad;
			break;
		case 'n':
			errno = 0;
			count = strtol(optarg, &end, 10);
			if (errno || *end || count < 1)
				goto bad;
			break;
		case 't':
			tag = optarg;
			if (!*tag || strchr(tag, ' '))
				goto bad;
			break;
		case 'k':
			free(list);
			list = strdup(optarg);
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind != argc) {
		fprintf(stderr, "vmwatch: unexpected argument '%s'\n", argv[optind]);
		return 2;
	}
	for (tok = strtok_r(list, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (nkeys == MAX_KEYS) {
			fprintf(stderr, "vmwatch: at most %d keys\n", MAX_KEYS);
			return 2;
		}
		keys[nkeys++] = tok;
	}
	if (!nkeys) {
		fprintf(stderr, "vmwatch: no keys\n");
		return 2;
	}
	if (interval > 0)
		mlockall(MCL_CURRENT | MCL_FUTURE);
	for (;;) {
		if (snap(tag)) {
			fprintf(stderr, "vmwatch: cannot read /proc/vmstat\n");
			return 1;
		}
		if (interval <= 0 || (count && ++done >= count))
			return 0;
		{
			struct timespec ts = { (time_t)interval,
				(long)((interval - (time_t)interval) * 1e9) };
			nanosleep(&ts, NULL);
		}
	}
bad:
	fprintf(stderr, "vmwatch: invalid value '%s' for -%c\n", optarg, opt);
	usage(stderr);
	return 2;
}
