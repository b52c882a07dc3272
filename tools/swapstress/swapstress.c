// SPDX-License-Identifier: GPL-2.0
/*
 * swapstress - the seed series' swap-over-NBD workload, with verification.
 *
 * 16 x NCPU processes each map a share of 4 x RAM of anonymous memory, fill
 * every page with a pattern derived from (process, page index, generation),
 * then read their mapping linearly in a loop, verifying every page on every
 * read. A page that is lost, misplaced, stale or garbled on its way through
 * swap is reported with its address. See --help for options and exit codes.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/sysinfo.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "pattern.h"

enum {
	EXIT_COMPLETED = 0,
	EXIT_CORRUPT = 1,
	EXIT_USAGE = 2,
	EXIT_MMAP = 3,
	EXIT_FORK = 4,
	EXIT_KILLED = 5,
	EXIT_INTERRUPTED = 6,
};

#define MAX_PROCS 4096
#define MAX_REPORTS_PER_PROC 8
#define BATCH 32

struct worker_stat {
	volatile uint64_t verified;
	volatile uint64_t written;
	volatile uint64_t corrupt;
	volatile uint32_t passes;
	volatile uint32_t state; /* 0 running, 1 done, 2 mmap failed */
	char pad[64 - 32];
};

struct shared {
	volatile int stop;
	char pad[60];
	struct worker_stat w[];
};

struct config {
	unsigned int procs;
	uint64_t size;           /* bytes, total */
	double size_ram_factor;  /* > 0: size = factor x MemTotal */
	unsigned int loops;
	double duration;
	double write_frac;
	double interval;
	int quiet;
	int inject;              /* test hook: corrupt one page */
	unsigned int inject_proc;
	uint32_t inject_index;
	enum pattern_verdict inject_kind;
};

static struct shared *sh;
static volatile sig_atomic_t interrupted;

static void usage(FILE *f)
{
	fprintf(f,
"Usage: swapstress [options]\n"
"Anonymous-memory swap workload: N processes map SIZE bytes in total, fill every\n"
"page with a pattern of (process, page, generation), then read their mappings\n"
"linearly in a loop, verifying every page on every read.\n"
"\n"
"  -p, --procs N          worker processes (default: 16 x online CPUs)\n"
"  -s, --size SIZE        total mapping size: bytes with optional K/M/G suffix,\n"
"                         or Nx for N times MemTotal (default: 4x)\n"
"  -l, --loops N          verifying passes after the initial fill (default: 2)\n"
"  -d, --duration SEC     keep passing until SEC seconds elapsed (overrides -l)\n"
"  -w, --write-frac F     fraction 0..1 of pages rewritten with a new generation\n"
"                         on each pass (default: 0, read only as in the seed)\n"
"  -i, --interval SEC     seconds between progress lines (default: 2)\n"
"  -q, --quiet            no progress lines\n"
"      --inject P:I:KIND  testing: after the fill, damage page I of process P\n"
"                         (KIND: zero, garbled, stale, foreign)\n"
"  -h, --help             this text\n"
"\n"
"Output lines start with 'swapstress:' and carry key=value fields:\n"
"  start, progress (t, verified, rate, passes, corrupt), corrupt (proc, page,\n"
"  addr, kind, ...), done (result, elapsed, verified, corrupt, killed).\n"
"\n"
"Exit status: 0 completed, every page verified; 1 corrupt page(s) found;\n"
"  2 usage error; 3 mmap failed; 4 fork failed; 5 a worker was killed\n"
"  (e.g. by the OOM killer) or died; 6 interrupted by SIGINT/SIGTERM.\n");
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void say(const char *fmt, ...)
{
	char buf[512];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf) - 1, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if (n > (int)sizeof(buf) - 2)
		n = sizeof(buf) - 2;
	buf[n++] = '\n';
	/* one write per line so lines from several processes never interleave */
	if (write(STDOUT_FILENO, buf, n) < 0)
		return;
}

static int parse_size(const char *s, struct config *c)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || v <= 0)
		return -1;
	if (*end == 'x' || *end == 'X') {
		if (end[1])
			return -1;
		c->size_ram_factor = v;
		return 0;
	}
	switch (*end) {
	case 'g': case 'G': v *= 1024;
		/* fallthrough */
	case 'm': case 'M': v *= 1024;
		/* fallthrough */
	case 'k': case 'K': v *= 1024;
		end++;
		break;
	case '\0':
		break;
	default:
		return -1;
	}
	if (*end)
		return -1;
	c->size = (uint64_t)v;
	c->size_ram_factor = 0;
	return 0;
}

static int parse_double(const char *s, double lo, double hi, double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || *end || v < lo || v > hi)
		return -1;
	*out = v;
	return 0;
}

static int parse_uint(const char *s, unsigned long lo, unsigned long hi,
		      unsigned long *out)
{
	char *end;
	unsigned long v;

	if (*s == '-')
		return -1;
	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || end == s || *end || v < lo || v > hi)
		return -1;
	*out = v;
	return 0;
}

static int parse_inject(const char *s, struct config *c)
{
	unsigned int p;
	unsigned long i;
	char kind[16];

	if (sscanf(s, "%u:%lu:%15s", &p, &i, kind) != 3)
		return -1;
	if (!strcmp(kind, "zero"))
		c->inject_kind = PATTERN_ZERO;
	else if (!strcmp(kind, "garbled"))
		c->inject_kind = PATTERN_GARBLED;
	else if (!strcmp(kind, "stale"))
		c->inject_kind = PATTERN_STALE;
	else if (!strcmp(kind, "foreign"))
		c->inject_kind = PATTERN_FOREIGN;
	else
		return -1;
	c->inject = 1;
	c->inject_proc = p;
	c->inject_index = (uint32_t)i;
	return 0;
}

static void damage(char *page, size_t psz, unsigned int proc, uint32_t idx,
		   uint32_t gen, enum pattern_verdict kind)
{
	switch (kind) {
	case PATTERN_ZERO:
		memset(page, 0, psz);
		break;
	case PATTERN_STALE:
		pattern_fill(page, psz, proc, idx, gen + 1);
		break;
	case PATTERN_FOREIGN:
		pattern_fill(page, psz, proc + 1, idx, gen);
		break;
	default:
		((uint64_t *)page)[psz / 16] ^= 0x1;
		break;
	}
}

static int worker(const struct config *c, unsigned int id, size_t npages,
		  size_t psz)
{
	struct worker_stat *st = &sh->w[id];
	unsigned int reports = 0;
	uint32_t *gen;
	uint32_t pass;
	size_t i;
	char *map;

	map = mmap(NULL, npages * psz, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	gen = calloc(npages, sizeof(*gen));
	if (map == MAP_FAILED || !gen) {
		say("swapstress: error proc=%u mmap of %zu bytes failed: %s",
		    id, npages * psz, strerror(errno));
		st->state = 2;
		return EXIT_MMAP;
	}
#ifdef MADV_NOHUGEPAGE
	madvise(map, npages * psz, MADV_NOHUGEPAGE);
#endif
	for (i = 0; i < npages; i++) {
		pattern_fill(map + i * psz, psz, id, (uint32_t)i, 0);
		if ((i % BATCH) == BATCH - 1)
			__atomic_add_fetch(&st->written, BATCH, __ATOMIC_RELAXED);
		if (sh->stop)
			goto out;
	}
	__atomic_add_fetch(&st->written, npages % BATCH, __ATOMIC_RELAXED);
	if (c->inject && c->inject_proc == id && c->inject_index < npages)
		damage(map + (size_t)c->inject_index * psz, psz, id,
		       c->inject_index, 0, c->inject_kind);

	for (pass = 1; c->duration > 0 || pass <= c->loops; pass++) {
		uint64_t batch = 0;

		for (i = 0; i < npages; i++) {
			char *page = map + i * psz;
			struct pattern_mismatch mm;

			if (pattern_check(page, psz, id, (uint32_t)i, gen[i], &mm)) {
				__atomic_add_fetch(&st->corrupt, 1, __ATOMIC_RELAXED);
				if (reports++ < MAX_REPORTS_PER_PROC)
					say("swapstress: corrupt proc=%u page=%zu addr=%p pass=%u kind=%s want_gen=%u word=%zu got=0x%016llx want=0x%016llx found_proc=%u found_page=%u found_gen=%u",
					    id, i, (void *)page, pass,
					    pattern_verdict_name(mm.verdict), gen[i],
					    mm.word, (unsigned long long)mm.got,
					    (unsigned long long)mm.want, mm.found_proc,
					    mm.found_index, mm.found_gen);
				/* repair so that one bad page is counted once */
				pattern_fill(page, psz, id, (uint32_t)i, gen[i]);
			}
			if (c->write_frac > 0 &&
			    pattern_unit(id, (uint32_t)i, pass) < c->write_frac) {
				pattern_fill(page, psz, id, (uint32_t)i, pass);
				gen[i] = pass;
			}
			if (++batch == BATCH) {
				__atomic_add_fetch(&st->verified, batch, __ATOMIC_RELAXED);
				batch = 0;
				if (sh->stop)
					goto out;
			}
		}
		__atomic_add_fetch(&st->verified, batch, __ATOMIC_RELAXED);
		st->passes = pass;
		if (sh->stop)
			break;
	}
out:
	st->state = 1;
	return st->corrupt ? EXIT_CORRUPT : EXIT_COMPLETED;
}

static void on_signal(int sig)
{
	(void)sig;
	interrupted = 1;
	if (sh)
		sh->stop = 1;
}

static uint64_t memtotal_bytes(void)
{
	struct sysinfo si;

	if (sysinfo(&si))
		return 0;
	return (uint64_t)si.totalram * si.mem_unit;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "procs", required_argument, NULL, 'p' },
		{ "size", required_argument, NULL, 's' },
		{ "loops", required_argument, NULL, 'l' },
		{ "duration", required_argument, NULL, 'd' },
		{ "write-frac", required_argument, NULL, 'w' },
		{ "interval", required_argument, NULL, 'i' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "inject", required_argument, NULL, 'J' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct config c = {
		.size_ram_factor = 4, .loops = 2, .interval = 2,
	};
	size_t psz = (size_t)sysconf(_SC_PAGESIZE);
	uint64_t last_verified = 0, total_pages, memtotal;
	unsigned int killed = 0, mmap_failed = 0, nchild = 0, i;
	unsigned long ul;
	double t0, last, deadline;
	size_t npages;
	pid_t *pids;
	int opt, corrupt_exit = 0, fork_failed = 0;
	struct sigaction sa;

	c.procs = 16 * (unsigned int)sysconf(_SC_NPROCESSORS_ONLN);
	while ((opt = getopt_long(argc, argv, "p:s:l:d:w:i:qh", opts, NULL)) != -1) {
		switch (opt) {
		case 'p':
			if (parse_uint(optarg, 1, MAX_PROCS, &ul))
				goto bad;
			c.procs = ul;
			break;
		case 's':
			if (parse_size(optarg, &c))
				goto bad;
			break;
		case 'l':
			if (parse_uint(optarg, 0, 1000000, &ul))
				goto bad;
			c.loops = ul;
			break;
		case 'd':
			if (parse_double(optarg, 0.001, 1e9, &c.duration))
				goto bad;
			break;
		case 'w':
			if (parse_double(optarg, 0, 1, &c.write_frac))
				goto bad;
			break;
		case 'i':
			if (parse_double(optarg, 0.05, 3600, &c.interval))
				goto bad;
			break;
		case 'q':
			c.quiet = 1;
			break;
		case 'J':
			if (parse_inject(optarg, &c))
				goto bad;
			break;
		case 'h':
			usage(stdout);
			return EXIT_COMPLETED;
		default:
			usage(stderr);
			return EXIT_USAGE;
		}
	}
	if (optind != argc) {
		fprintf(stderr, "swapstress: unexpected argument '%s'\n", argv[optind]);
		usage(stderr);
		return EXIT_USAGE;
	}

	memtotal = memtotal_bytes();
	if (c.size_ram_factor > 0)
		c.size = (uint64_t)(c.size_ram_factor * (double)memtotal);
	total_pages = c.size / psz;
	npages = total_pages / c.procs;
	if (npages == 0) {
		fprintf(stderr, "swapstress: size %llu bytes gives no page to each of %u processes\n",
			(unsigned long long)c.size, c.procs);
		return EXIT_USAGE;
	}
	if (npages > UINT32_MAX) {
		fprintf(stderr, "swapstress: more than 2^32 pages per process\n");
		return EXIT_USAGE;
	}

	sh = mmap(NULL, sizeof(*sh) + c.procs * sizeof(struct worker_stat),
		  PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	pids = calloc(c.procs, sizeof(*pids));
	if (sh == MAP_FAILED || !pids) {
		fprintf(stderr, "swapstress: cannot allocate bookkeeping: %s\n", strerror(errno));
		return EXIT_MMAP;
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);

	say("swapstress: start procs=%u size_mb=%llu pages_per_proc=%zu loops=%u duration=%.0f write_frac=%.3f memtotal_mb=%llu",
	    c.procs, (unsigned long long)(npages * psz * c.procs >> 20), npages,
	    c.loops, c.duration, c.write_frac,
	    (unsigned long long)(memtotal >> 20));
	t0 = now();
	deadline = c.duration > 0 ? t0 + c.duration : 0;
	for (i = 0; i < c.procs; i++) {
		pid_t pid = fork();

		if (pid < 0) {
			say("swapstress: error fork of worker %u failed: %s", i, strerror(errno));
			sh->stop = 1;
			fork_failed = 1;
			break;
		}
		if (pid == 0) {
			signal(SIGINT, SIG_IGN);
			signal(SIGTERM, SIG_DFL);
			_exit(worker(&c, i, npages, psz));
		}
		pids[i] = pid;
		nchild++;
	}
	/* the reporter must not stall behind its own page faults */
	mlockall(MCL_CURRENT | MCL_FUTURE);

	last = t0;
	while (nchild) {
		struct timespec ts = { 0, 50 * 1000 * 1000 };
		double t = now();
		int status;
		pid_t pid;

		while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
			for (i = 0; i < c.procs; i++)
				if (pids[i] == pid)
					break;
			nchild--;
			if (WIFSIGNALED(status)) {
				killed++;
				say("swapstress: worker proc=%u pid=%d killed by signal %d",
				    i, (int)pid, WTERMSIG(status));
			} else if (WEXITSTATUS(status) == EXIT_MMAP) {
				mmap_failed++;
			} else if (WEXITSTATUS(status) == EXIT_CORRUPT) {
				corrupt_exit = 1;
			} else if (WEXITSTATUS(status) != EXIT_COMPLETED) {
				killed++;
				say("swapstress: worker proc=%u pid=%d exited with %d",
				    i, (int)pid, WEXITSTATUS(status));
			}
		}
		if (deadline && t >= deadline)
			sh->stop = 1;
		if (!c.quiet && (t - last >= c.interval || !nchild)) {
			uint64_t v = 0, wr = 0, bad = 0, passes = 0;

			for (i = 0; i < c.procs; i++) {
				v += sh->w[i].verified;
				wr += sh->w[i].written;
				bad += sh->w[i].corrupt;
				passes += sh->w[i].passes;
			}
			say("swapstress: progress t=%.1f verified=%llu rate=%.0f filled=%llu passes=%llu/%llu corrupt=%llu running=%u",
			    t - t0, (unsigned long long)v,
			    (double)(v - last_verified) / (t - last),
			    (unsigned long long)wr, (unsigned long long)passes,
			    (unsigned long long)(c.duration > 0 ? 0 : (uint64_t)c.loops * c.procs),
			    (unsigned long long)bad, nchild);
			last_verified = v;
			last = t;
		}
		if (nchild)
			nanosleep(&ts, NULL);
	}

	{
		uint64_t v = 0, bad = 0;
		const char *result;
		int rc;

		for (i = 0; i < c.procs; i++) {
			v += sh->w[i].verified;
			bad += sh->w[i].corrupt;
		}
		if (bad || corrupt_exit) {
			result = "corrupt";
			rc = EXIT_CORRUPT;
		} else if (interrupted) {
			result = "interrupted";
			rc = EXIT_INTERRUPTED;
		} else if (killed) {
			result = "killed";
			rc = EXIT_KILLED;
		} else if (mmap_failed) {
			result = "mmap-failed";
			rc = EXIT_MMAP;
		} else if (fork_failed) {
			result = "fork-failed";
			rc = EXIT_FORK;
		} else {
			result = "completed";
			rc = EXIT_COMPLETED;
		}
		say("swapstress: done result=%s elapsed=%.1f verified=%llu corrupt=%llu killed=%u exit=%d",
		    result, now() - t0, (unsigned long long)v,
		    (unsigned long long)bad, killed, rc);
		return rc;
	}
bad:
	fprintf(stderr, "swapstress: invalid value '%s' for option -%c\n", optarg, opt);
	usage(stderr);
	return EXIT_USAGE;
}
