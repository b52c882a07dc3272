// SPDX-License-Identifier: GPL-2.0
/* Host unit tests for the swapstress page patterns. Prints TAP. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pattern.h"

#define PSZ 4096

static int failures, tests;

static void ok(int cond, const char *what)
{
	tests++;
	if (!cond)
		failures++;
	printf("%sok %d - %s\n", cond ? "" : "not ", tests, what);
}

int main(void)
{
	static unsigned char a[PSZ], b[PSZ];
	struct pattern_mismatch mm;
	int i, below = 0;

	pattern_fill(a, PSZ, 3, 77, 5);
	ok(pattern_check(a, PSZ, 3, 77, 5, &mm) == PATTERN_OK, "a filled page verifies");

	pattern_fill(b, PSZ, 3, 77, 5);
	ok(memcmp(a, b, PSZ) == 0, "filling is deterministic");

	pattern_fill(b, PSZ, 3, 78, 5);
	ok(memcmp(a, b, PSZ) != 0, "neighbouring pages differ");

	memset(b, 0, PSZ);
	ok(pattern_check(b, PSZ, 3, 77, 5, &mm) == PATTERN_ZERO && mm.word == 0,
	   "a zeroed page is classified zero");

	pattern_fill(b, PSZ, 3, 77, 4);
	ok(pattern_check(b, PSZ, 3, 77, 5, &mm) == PATTERN_STALE && mm.found_gen == 4,
	   "an older generation is classified stale, with its generation");

	pattern_fill(b, PSZ, 4, 77, 5);
	ok(pattern_check(b, PSZ, 3, 77, 5, &mm) == PATTERN_FOREIGN && mm.found_proc == 4,
	   "another process's page is classified foreign");

	pattern_fill(b, PSZ, 3, 1000, 5);
	ok(pattern_check(b, PSZ, 3, 77, 5, &mm) == PATTERN_FOREIGN && mm.found_index == 1000,
	   "another index's page is classified foreign, with its index");

	memcpy(b, a, PSZ);
	b[PSZ - 1] ^= 0x80;
	ok(pattern_check(b, PSZ, 3, 77, 5, &mm) == PATTERN_GARBLED && mm.word == PSZ / 8 - 1,
	   "one flipped bit in the last word is found, garbled");

	memcpy(b, a, PSZ);
	b[12] ^= 1;
	ok(pattern_check(b, PSZ, 3, 77, 5, &mm) == PATTERN_GARBLED && mm.word == 1,
	   "a damaged header is garbled, not stale");

	memcpy(b, a, PSZ);
	memset(b + 2048, 0, 2048);
	ok(pattern_check(b, PSZ, 3, 77, 5, &mm) == PATTERN_GARBLED && mm.word == 256,
	   "a half-zeroed page is garbled at the first zero word");

	for (i = 0; i < 100000; i++)
		below += pattern_unit(1, i, 2) < 0.25;
	ok(below > 24000 && below < 26000, "pattern_unit is uniform enough for write fractions");

	ok(pattern_unit(1, 2, 3) == pattern_unit(1, 2, 3) &&
	   pattern_unit(1, 2, 3) != pattern_unit(1, 2, 4), "pattern_unit is deterministic per pass");

	printf("1..%d\n", tests);
	return failures ? 1 : 0;
}
