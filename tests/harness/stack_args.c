/*
 * Calls the sequences of tests/stack_args/stack_args.inv through the
 * generated header's prototypes, so the C compiler (not shootdown) decides
 * where the arguments past the argument registers go, and checks every
 * value the code stored. Device windows are plain memory here: what a
 * register holds afterwards is read back in the register's byte order.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "stack_args.h"

static unsigned fails, oks;

static void check(const char *what, uint64_t got, uint64_t want)
{
	if (got == want) {
		oks++;
		printf("ok %s = %#llx\n", what, (unsigned long long)want);
	} else {
		fails++;
		printf("FAIL %s: got %#llx, want %#llx\n", what, (unsigned long long)got,
		       (unsigned long long)want);
	}
}

static uint64_t get_le(const void *p, int n)
{
	const unsigned char *b = p;
	uint64_t v = 0;
	while (n--)
		v = (v << 8) | b[n];
	return v;
}

static uint64_t get_be(const void *p, int n)
{
	const unsigned char *b = p;
	uint64_t v = 0;
	for (int i = 0; i < n; i++)
		v = (v << 8) | b[i];
	return v;
}

static void put_le64(void *p, uint64_t v)
{
	unsigned char *b = p;
	for (int i = 0; i < 8; i++)
		b[i] = (unsigned char)(v >> (8 * i));
}

/* Distinct in every byte position that matters: a swapped, truncated or
 * shifted argument shows. */
static uint64_t arg(int i)
{
	return 0xa5c3000000000000ull ^ ((uint64_t)(i + 1) << 40) ^
	       ((uint64_t)(0x10 + i) << 24) ^ (0x1000u + 0x111u * (unsigned)i);
}

static void test_ten(uint64_t stat_delta, long want_ret)
{
	static unsigned char dev[0x30] __attribute__((aligned(64)));
	static unsigned long out[5];
	char what[64];
	uint64_t a[10];
	for (int i = 1; i <= 9; i++)
		a[i] = arg(i);
	memset(dev, 0, sizeof dev);
	memset(out, 0, sizeof out);
	put_le64(dev + 0x28, a[9] + stat_delta);
	long r = ten(dev, out, a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8], a[9]);
	snprintf(what, sizeof what, "ten(stat%+lld) return", (long long)stat_delta);
	check(what, (uint64_t)r, (uint64_t)want_ret);
	check("ten d.r1 = a1", get_le(dev + 0x00, 8), a[1]);
	check("ten d.r2 = a2", get_be(dev + 0x08, 8), a[2]);
	check("ten d.r3 = a3 (u32)", get_le(dev + 0x10, 4), (uint32_t)a[3]);
	check("ten d.r3 high half untouched", get_le(dev + 0x14, 4), 0);
	check("ten d.r4 = a4", get_le(dev + 0x18, 8), a[4]);
	check("ten d.mix", get_be(dev + 0x20, 8), (a[1] ^ a[9]) + (a[5] << 3) - a[8]);
	for (int i = 0; i < 5; i++) {
		snprintf(what, sizeof what, "ten out[%d] = a%d", 8 * i, 5 + i);
		check(what, out[i], a[5 + i]);
	}
}

static void test_twelve(uint64_t held_by, long want_ret)
{
	static unsigned char win[4][0x18] __attribute__((aligned(64)));
	static unsigned long lk[7];
	void *const base[3] = { win[0], win[1], win[2] };
	char what[64];
	uint64_t b[10];
	for (int i = 1; i <= 9; i++)
		b[i] = arg(20 + i);
	memset(win, 0, sizeof win);
	memset(lk, 0, sizeof lk);
	lk[0] = held_by;
	long r = twelve(base, 3, lk, b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9]);
	snprintf(what, sizeof what, "twelve(held by %#llx) return", (unsigned long long)held_by);
	check(what, (uint64_t)r, (uint64_t)want_ret);
	if (want_ret != 0) {
		/* The lock was never taken: nothing else happened. */
		check("twelve lock word kept", lk[0], held_by);
		for (int k = 0; k < 4; k++)
			for (int o = 0; o < 0x18; o += 8) {
				snprintf(what, sizeof what, "twelve q%d+%#x untouched", k, o);
				check(what, get_le(win[k] + o, 8), 0);
			}
		for (int i = 1; i < 7; i++) {
			snprintf(what, sizeof what, "twelve lk[%d] untouched", 8 * i);
			check(what, lk[i], 0);
		}
		return;
	}
	uint64_t sum = 0;
	for (int i = 1; i <= 9; i++)
		sum += b[i];
	for (int k = 0; k < 3; k++) {
		snprintf(what, sizeof what, "twelve q%d.a = b1", k);
		check(what, get_le(win[k] + 0x00, 8), b[1]);
		snprintf(what, sizeof what, "twelve q%d.b = b8", k);
		check(what, get_be(win[k] + 0x08, 8), b[8]);
		snprintf(what, sizeof what, "twelve q%d.sum", k);
		check(what, get_le(win[k] + 0x10, 8), sum);
	}
	for (int o = 0; o < 0x18; o += 8) {
		snprintf(what, sizeof what, "twelve q3+%#x untouched (count 3)", o);
		check(what, get_le(win[3] + o, 8), 0);
	}
	check("twelve lk[0] = owner b9", lk[0], b[9]);
	check("twelve lk[8] = b3", lk[1], b[3]);
	check("twelve lk[16] = b4 ^ b5", lk[2], b[4] ^ b[5]);
	check("twelve lk[24] = b6", lk[3], b[6]);
	check("twelve lk[32] = b7", lk[4], b[7]);
	check("twelve lk[40] = b2", lk[5], b[2]);
	check("twelve lk[48] = b5", lk[6], b[5]);
}

int main(void)
{
	test_ten(0, 0);
	/* The poll compares with the ninth parameter: off by one never ends. */
	test_ten(1, -110);
	test_twelve(0, 0);
	/* Held by another owner: the bounded spin gives up. */
	test_twelve(0x77, -16);
	printf("PASSED: %u ok, %u failure(s)\n", oks, fails);
	return fails != 0;
}
