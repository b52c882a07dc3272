// SPDX-License-Identifier: GPL-2.0
#include "pattern.h"

#include <string.h>

uint64_t pattern_mix64(uint64_t x)
{
	/* splitmix64 finaliser */
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ULL;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebULL;
	x ^= x >> 31;
	return x;
}

static uint64_t header0(unsigned int proc, uint32_t index)
{
	return PATTERN_MAGIC << 48 | (uint64_t)(proc & 0xffff) << 32 | index;
}

static uint64_t header1(uint64_t h0, uint32_t gen)
{
	return (uint64_t)gen << 32 | (pattern_mix64(h0) & 0xffffffffULL);
}

void pattern_fill(void *page, size_t page_size, unsigned int proc,
		  uint32_t index, uint32_t gen)
{
	uint64_t *w = page;
	size_t n = page_size / sizeof(uint64_t);
	uint64_t h0 = header0(proc, index), h1 = header1(h0, gen);
	uint64_t base = pattern_mix64(h0 ^ h1);
	size_t i;

	w[0] = h0;
	w[1] = h1;
	for (i = 2; i < n; i++)
		w[i] = base ^ (i * PATTERN_K);
}

static int all_zero(const uint64_t *w, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (w[i])
			return 0;
	return 1;
}

/* Is this page a complete, self-consistent pattern of some (proc, index, gen)? */
static int self_consistent(const uint64_t *w, size_t n)
{
	uint64_t base;
	size_t i;

	if (w[0] >> 48 != PATTERN_MAGIC)
		return 0;
	if ((w[1] & 0xffffffffULL) != (pattern_mix64(w[0]) & 0xffffffffULL))
		return 0;
	base = pattern_mix64(w[0] ^ w[1]);
	for (i = 2; i < n; i++)
		if (w[i] != (base ^ (i * PATTERN_K)))
			return 0;
	return 1;
}

enum pattern_verdict pattern_check(const void *page, size_t page_size,
				   unsigned int proc, uint32_t index,
				   uint32_t gen, struct pattern_mismatch *mm)
{
	const uint64_t *w = page;
	size_t n = page_size / sizeof(uint64_t);
	uint64_t h0 = header0(proc, index), h1 = header1(h0, gen);
	uint64_t base = pattern_mix64(h0 ^ h1), want = 0;
	enum pattern_verdict v;
	size_t i, bad = n;

	if (w[0] != h0) {
		bad = 0;
		want = h0;
	} else if (w[1] != h1) {
		bad = 1;
		want = h1;
	} else {
		for (i = 2; i < n; i++) {
			if (w[i] != (base ^ (i * PATTERN_K))) {
				bad = i;
				want = base ^ (i * PATTERN_K);
				break;
			}
		}
	}
	if (bad == n)
		return PATTERN_OK;

	if (all_zero(w, n))
		v = PATTERN_ZERO;
	else if (self_consistent(w, n))
		v = ((w[0] & 0xffffffffffffULL) == (h0 & 0xffffffffffffULL)) ?
			PATTERN_STALE : PATTERN_FOREIGN;
	else
		v = PATTERN_GARBLED;

	if (mm) {
		memset(mm, 0, sizeof(*mm));
		mm->verdict = v;
		mm->word = bad;
		mm->got = w[bad];
		mm->want = want;
		mm->found_proc = (unsigned int)(w[0] >> 32) & 0xffff;
		mm->found_index = (uint32_t)w[0];
		mm->found_gen = (uint32_t)(w[1] >> 32);
	}
	return v;
}

const char *pattern_verdict_name(enum pattern_verdict v)
{
	switch (v) {
	case PATTERN_OK: return "ok";
	case PATTERN_ZERO: return "zero";
	case PATTERN_FOREIGN: return "foreign";
	case PATTERN_STALE: return "stale";
	case PATTERN_GARBLED: return "garbled";
	}
	return "unknown";
}

double pattern_unit(unsigned int proc, uint32_t index, uint32_t pass)
{
	uint64_t x = pattern_mix64((uint64_t)proc << 48 ^ (uint64_t)pass << 32 ^ index ^ 0x5157ULL);

	return (double)(x >> 11) / (double)(1ULL << 53);
}
