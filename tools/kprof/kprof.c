// SPDX-License-Identifier: GPL-2.0
/*
 * kprof - a sampling profile of the guest kernel, per function.
 *
 * One perf event per CPU (software cpu-clock: an hrtimer that fires every
 * 1/HZ seconds of the CPU's time, idle or not) records the interrupted
 * instruction pointer and, with -d, the first callers of a kernel sample.
 * kprof reads the ring buffers until SIGTERM or SIGINT (or -t seconds), then
 * resolves every address against /proc/kallsyms (read once at the start),
 * counts samples per chain of function names (leaf<caller<caller...) and
 * prints them on stdout, most frequent first:
 *
 *   NETSWAP: info kprof_hz=1000 kprof_cpus=2 kprof_samples=... (a summary)
 *   NETSWAP: info kprof_n=COUNT kprof_f=leaf<caller<caller
 *   NETSWAP: info kprof_end=1 kprof_printed=LINES
 *
 * A sample taken in user mode is counted in kprof_user and not resolved.
 * cpu-clock is not an NMI: a sample cannot land where interrupts are
 * disabled, so such time shows at the point that enables them again
 * (for example _raw_spin_unlock_irqrestore); the callers tell whose it was.
 * kprof locks itself in memory, so that it does not page while the guest
 * swaps.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <linux/perf_event.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define MAX_CPUS 64
#define MAX_DEPTH 6
#define RING_PAGES 64			/* data pages per CPU: 256 KB */
#define HASH_BITS 16
#define HASH_SIZE (1u << HASH_BITS)
#define SYM_NONE (-1)			/* no caller (the chain ended) */
#define SYM_UNKNOWN (-2)		/* an address outside every text symbol */

struct sym {
	unsigned long long addr;
	const char *name;
};

struct entry {
	int32_t k[MAX_DEPTH + 1];
	uint32_t n;
};

static struct sym *syms;
static long nsyms;
static struct entry *table;
static unsigned long entries;
static unsigned long long n_samples, n_user, n_kernel, n_lost, n_throttle, n_unknown, n_full;
static int depth;
static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static void usage(FILE *f)
{
	fprintf(f,
"Usage: kprof [-f HZ] [-d DEPTH] [-t SECONDS] [-r READYFILE]\n"
"Sample every online CPU HZ times a second (cpu-clock, default 1000) until\n"
"SIGTERM/SIGINT or SECONDS, then print the kernel samples per function chain\n"
"as 'NETSWAP: info kprof_n=COUNT kprof_f=leaf<caller...' lines.\n"
"  -d DEPTH  callers recorded per kernel sample (0-%d, default 2)\n"
"  -r FILE   create FILE once sampling runs (for a script to wait on)\n"
"Exit status: 0 ok, 1 perf or kallsyms failed, 2 usage error.\n", MAX_DEPTH);
}

static int sym_cmp(const void *a, const void *b)
{
	const struct sym *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/* text symbols of /proc/kallsyms, sorted by address */
static int load_kallsyms(void)
{
	FILE *f = fopen("/proc/kallsyms", "r");
	char line[512], name[256], type;
	unsigned long long addr;
	long cap = 65536, nonzero = 0;

	if (!f) {
		perror("kprof: /proc/kallsyms");
		return -1;
	}
	syms = malloc(cap * sizeof(*syms));
	if (!syms)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%llx %c %255s", &addr, &type, name) != 3)
			continue;
		if (type != 't' && type != 'T' && type != 'w' && type != 'W')
			continue;
		if (nsyms == cap) {
			cap *= 2;
			syms = realloc(syms, cap * sizeof(*syms));
			if (!syms)
				return -1;
		}
		syms[nsyms].addr = addr;
		syms[nsyms].name = strdup(name);
		if (!syms[nsyms].name)
			return -1;
		nonzero += addr != 0;
		nsyms++;
	}
	fclose(f);
	if (!nonzero) {
		fprintf(stderr, "kprof: /proc/kallsyms shows no addresses (not root?)\n");
		return -1;
	}
	qsort(syms, nsyms, sizeof(*syms), sym_cmp);
	return 0;
}

static int32_t lookup(unsigned long long addr)
{
	long lo = 0, hi = nsyms - 1, best = -1;

	while (lo <= hi) {
		long mid = lo + (hi - lo) / 2;

		if (syms[mid].addr <= addr) {
			best = mid;
			lo = mid + 1;
		} else {
			hi = mid - 1;
		}
	}
	/* past the last text symbol (_etext and beyond) is not text */
	if (best < 0 || best == nsyms - 1)
		return SYM_UNKNOWN;
	return (int32_t)best;
}

static void count(const int32_t *k)
{
	uint32_t h = 2166136261u;
	unsigned long i;
	int d;

	for (d = 0; d <= depth; d++)
		h = (h ^ (uint32_t)k[d]) * 16777619u;
	for (i = 0; i < HASH_SIZE; i++) {
		struct entry *e = &table[(h + i) & (HASH_SIZE - 1)];

		if (!e->n) {
			memcpy(e->k, k, sizeof(e->k));
			e->n = 1;
			entries++;
			return;
		}
		if (!memcmp(e->k, k, sizeof(e->k))) {
			e->n++;
			return;
		}
	}
	n_full++;
}

static void sample(const struct perf_event_header *h, const uint64_t *p, const uint64_t *end)
{
	int32_t k[MAX_DEPTH + 1];
	uint64_t ip = p[0];
	int d;

	n_samples++;
	if ((h->misc & PERF_RECORD_MISC_CPUMODE_MASK) == PERF_RECORD_MISC_USER) {
		n_user++;
		return;
	}
	n_kernel++;
	for (d = 0; d <= MAX_DEPTH; d++)
		k[d] = SYM_NONE;
	k[0] = lookup(ip);
	if (k[0] == SYM_UNKNOWN)
		n_unknown++;
	if (depth && p + 1 < end) {
		uint64_t nr = p[1], i;
		const uint64_t *ips = p + 2;
		int first = 1;

		d = 1;
		for (i = 0; i < nr && ips + i < end && d <= depth; i++) {
			if (ips[i] >= (uint64_t)PERF_CONTEXT_MAX)
				continue;		/* a context marker */
			if (first && ips[i] == ip) {	/* the sample's own address */
				first = 0;
				continue;
			}
			first = 0;
			/* a return address: the call is just before it */
			k[d++] = lookup(ips[i] - 1);
		}
	}
	count(k);
}

struct ring {
	int fd;
	void *base;
	size_t data_size;
};

static struct ring rings[MAX_CPUS];
static int nrings;
static long page_size;

static void drain(struct ring *r)
{
	struct perf_event_mmap_page *mp = r->base;
	const unsigned char *data = (const unsigned char *)r->base + page_size;
	uint64_t head = __atomic_load_n(&mp->data_head, __ATOMIC_ACQUIRE);
	uint64_t tail = mp->data_tail;
	static uint64_t buf[4096 / 8 + 8];

	while (tail < head) {
		struct perf_event_header h;
		size_t off = tail % r->data_size, i, len;
		unsigned char *dst = (unsigned char *)buf;

		/* the header, then the record, either may wrap around */
		for (i = 0; i < sizeof(h); i++)
			((unsigned char *)&h)[i] = data[(off + i) % r->data_size];
		len = h.size;
		if (len < sizeof(h))
			break;
		if (len > sizeof(buf))
			len = sizeof(buf);
		if (off + len <= r->data_size) {
			memcpy(dst, data + off, len);
		} else {
			size_t first = r->data_size - off;

			memcpy(dst, data + off, first);
			memcpy(dst + first, data, len - first);
		}
		{
			const uint64_t *p = (const uint64_t *)(dst + sizeof(h));
			const uint64_t *end = (const uint64_t *)(dst + len);

			switch (h.type) {
			case PERF_RECORD_SAMPLE:
				if (p < end)
					sample(&h, p, end);
				break;
			case PERF_RECORD_LOST:	/* u64 id, u64 lost */
				if (p + 1 < end)
					n_lost += p[1];
				break;
			case PERF_RECORD_THROTTLE:
				n_throttle++;
				break;
			default:
				break;
			}
		}
		tail += h.size;
	}
	__atomic_store_n(&mp->data_tail, tail, __ATOMIC_RELEASE);
}

static int open_events(int hz)
{
	long ncpu = sysconf(_SC_NPROCESSORS_CONF), cpu;
	size_t len = (RING_PAGES + 1) * page_size;

	if (ncpu > MAX_CPUS)
		ncpu = MAX_CPUS;
	for (cpu = 0; cpu < ncpu; cpu++) {
		struct perf_event_attr a;
		int fd;

		memset(&a, 0, sizeof(a));
		a.size = sizeof(a);
		a.type = PERF_TYPE_SOFTWARE;
		a.config = PERF_COUNT_SW_CPU_CLOCK;
		a.freq = 1;
		a.sample_freq = hz;
		a.sample_type = PERF_SAMPLE_IP | (depth ? PERF_SAMPLE_CALLCHAIN : 0);
		a.exclude_callchain_user = 1;
		a.sample_max_stack = depth + 1;
		a.disabled = 1;
		fd = syscall(SYS_perf_event_open, &a, -1, (int)cpu, -1, 0);
		if (fd < 0) {
			if (errno == ENODEV)	/* an offline CPU */
				continue;
			fprintf(stderr, "kprof: perf_event_open cpu %ld: %s\n", cpu, strerror(errno));
			return -1;
		}
		rings[nrings].fd = fd;
		rings[nrings].data_size = RING_PAGES * page_size;
		rings[nrings].base = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		if (rings[nrings].base == MAP_FAILED) {
			fprintf(stderr, "kprof: mmap cpu %ld: %s\n", cpu, strerror(errno));
			return -1;
		}
		nrings++;
	}
	return nrings ? 0 : -1;
}

static const char *name_of(int32_t s)
{
	return s >= 0 ? syms[s].name : "?";
}

static int by_count(const void *a, const void *b)
{
	const struct entry *x = a, *y = b;

	return x->n < y->n ? 1 : x->n > y->n ? -1 : 0;
}

static void write_file(const char *path, const char *val)
{
	FILE *f = fopen(path, "w");

	if (f) {
		fputs(val, f);
		fclose(f);
	}
}

int main(int argc, char **argv)
{
	int hz = 1000, opt, i;
	double seconds = 0, took;
	const char *ready = NULL;
	struct sigaction sa;
	struct timespec t0, t1;
	unsigned long printed = 0, j;

	depth = 2;
	while ((opt = getopt(argc, argv, "f:d:t:r:h")) != -1) {
		switch (opt) {
		case 'f':
			hz = atoi(optarg);
			break;
		case 'd':
			depth = atoi(optarg);
			break;
		case 't':
			seconds = atof(optarg);
			break;
		case 'r':
			ready = optarg;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind != argc || hz < 1 || hz > 100000 || depth < 0 || depth > MAX_DEPTH) {
		usage(stderr);
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	page_size = sysconf(_SC_PAGESIZE);
	table = calloc(HASH_SIZE, sizeof(*table));
	if (!table || load_kallsyms())
		return 1;
	if (mlockall(MCL_CURRENT | MCL_FUTURE))
		perror("kprof: mlockall");
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	if (open_events(hz))
		return 1;
	for (i = 0; i < nrings; i++)
		ioctl(rings[i].fd, PERF_EVENT_IOC_ENABLE, 0);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	if (ready)
		write_file(ready, "1\n");
	while (!stop) {
		struct timespec nap = { 0, 50 * 1000 * 1000 };

		nanosleep(&nap, NULL);
		for (i = 0; i < nrings; i++)
			drain(&rings[i]);
		clock_gettime(CLOCK_MONOTONIC, &t1);
		if (seconds > 0 && (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9 >= seconds)
			break;
	}
	for (i = 0; i < nrings; i++)
		ioctl(rings[i].fd, PERF_EVENT_IOC_DISABLE, 0);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	took = (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9;
	for (i = 0; i < nrings; i++)
		drain(&rings[i]);

	/* the filled slots, most samples first */
	for (j = 0; j < HASH_SIZE; j++)
		if (table[j].n)
			table[printed++] = table[j];
	qsort(table, printed, sizeof(*table), by_count);
	printf("NETSWAP: info kprof_hz=%d kprof_cpus=%d kprof_depth=%d kprof_secs=%.2f "
	       "kprof_samples=%llu kprof_kernel=%llu kprof_user=%llu kprof_lost=%llu "
	       "kprof_throttle=%llu kprof_unknown=%llu kprof_full=%llu kprof_chains=%lu\n",
	       hz, nrings, depth, took, n_samples, n_kernel, n_user, n_lost, n_throttle,
	       n_unknown, n_full, entries);
	for (j = 0; j < printed; j++) {
		int d;

		printf("NETSWAP: info kprof_n=%u kprof_f=%s", table[j].n, name_of(table[j].k[0]));
		for (d = 1; d <= depth && table[j].k[d] != SYM_NONE; d++)
			printf("<%s", name_of(table[j].k[d]));
		putchar('\n');
	}
	printf("NETSWAP: info kprof_end=1 kprof_printed=%lu\n", printed);
	return 0;
}
