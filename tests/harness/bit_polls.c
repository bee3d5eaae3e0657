/* One-bit polls against C: for each bit, values with it set and clear
 * (and its neighbours, all ones, zero), each sequence's return is what
 * gcc computes from the same value. The register is little-endian
 * (`u64 le`), stored byte by byte so big-endian power64 reads it alike.
 * Prints "ok" per check, "FAIL ..." on a mismatch. */
#include <stdint.h>
#include <stdio.h>
#include "bit_polls.h"

static unsigned char reg[8] __attribute__((aligned(8)));
static int oks, fails;

static void put(uint64_t v)
{
	for (int i = 0; i < 8; i++)
		reg[i] = (unsigned char)(v >> (8 * i));
}

static void check(const char *what, int bit, uint64_t v, long got, long want)
{
	if (got == want) {
		oks++;
	} else {
		fails++;
		printf("FAIL %s bit %d value %#llx: got %ld, want %ld\n", what, bit,
		       (unsigned long long)v, got, want);
	}
}

typedef long (*seq)(void *);

static void bit(int b, seq clear, seq set, seq ne)
{
	uint64_t m = (uint64_t)1 << b;
	uint64_t vals[] = { 0, ~(uint64_t)0, m, ~m, m << 1, m >> 1, ~(m << 1), ~(m >> 1) };
	for (unsigned i = 0; i < sizeof vals / sizeof vals[0]; i++) {
		uint64_t v = vals[i];
		int is_set = (v >> b) & 1;
		put(v);
		check("clear", b, v, clear(reg), is_set ? -110 : 0);
		check("set", b, v, set(reg), is_set ? 0 : -16);
		check("ne", b, v, ne(reg), is_set ? 0 : -5);
	}
}

int main(void)
{
	bit(0, clear_0, set_0, ne_0);
	bit(5, clear_5, set_5, ne_5);
	bit(10, clear_10, set_10, ne_10);
	bit(11, clear_11, set_11, ne_11);
	bit(15, clear_15, set_15, ne_15);
	bit(16, clear_16, set_16, ne_16);
	bit(30, clear_30, set_30, ne_30);
	bit(31, clear_31, set_31, ne_31);
	bit(32, clear_32, set_32, ne_32);
	bit(47, clear_47, set_47, ne_47);
	bit(62, clear_62, set_62, ne_62);
	bit(63, clear_63, set_63, ne_63);
	printf("PASSED: %d ok, %d failure(s)\n", oks, fails);
	return fails != 0;
}
