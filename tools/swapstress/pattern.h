/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Page patterns for swapstress: every page carries a pattern derived from
 * (process, page index, generation), so that a page that comes back from swap
 * zeroed, misplaced, stale or garbled is detected and classified.
 *
 * Layout of one page of 64-bit words:
 *   word 0: PATTERN_MAGIC << 48 | proc << 32 | page index (32 bits)
 *   word 1: generation << 32 | check(word 0)
 *   word w >= 2: base ^ (w * PATTERN_K), base = mix64(word 0 ^ word 1)
 */
#ifndef SWAPSTRESS_PATTERN_H
#define SWAPSTRESS_PATTERN_H

#include <stddef.h>
#include <stdint.h>

#define PATTERN_MAGIC 0x5e5aULL
#define PATTERN_K 0x9e3779b97f4a7c15ULL

enum pattern_verdict {
	PATTERN_OK = 0,
	PATTERN_ZERO,     /* the whole page reads as zeros: data lost */
	PATTERN_FOREIGN,  /* a valid page of another process or index */
	PATTERN_STALE,    /* the right page, but an older or newer generation */
	PATTERN_GARBLED,  /* header or body does not match anything */
};

struct pattern_mismatch {
	enum pattern_verdict verdict;
	size_t word;       /* first word that differs */
	uint64_t got;
	uint64_t want;
	unsigned int found_proc;   /* for FOREIGN / STALE: what the header says */
	uint32_t found_index;
	uint32_t found_gen;
};

uint64_t pattern_mix64(uint64_t x);
void pattern_fill(void *page, size_t page_size, unsigned int proc,
		  uint32_t index, uint32_t gen);
/* Returns PATTERN_OK or a verdict; fills *mm (may be NULL) on mismatch. */
enum pattern_verdict pattern_check(const void *page, size_t page_size,
				   unsigned int proc, uint32_t index,
				   uint32_t gen, struct pattern_mismatch *mm);
const char *pattern_verdict_name(enum pattern_verdict v);
/* Deterministic uniform value in [0, 1) for (proc, index, pass). */
double pattern_unit(unsigned int proc, uint32_t index, uint32_t pass);

#endif
