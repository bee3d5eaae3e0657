/*
 * Harness for the aarch64 code generated from examples/npu2_atsd.inv:
 * six fake NPUs in RAM, each three 64-bit big-endian registers (LAUNCH at
 * +0, AVA at +8, STAT at +0x10). Registers are checked byte by byte, so a
 * missing or wrong byte swap fails. NPUs past `count` hold a sentinel with
 * a non-zero STAT: touching or polling one is caught.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include "npu2_atsd.h"

#define NPUS 6
#define LAUNCH 0
#define AVA 1
#define STAT 2
#define SENTINEL UINT64_C(0xa5a5a5a5a5a5a5a5)

static uint64_t regs[NPUS][3];
static void *bases[NPUS];
static int failures;

#define CHECK(cond, ...)                                     \
	do {                                                 \
		if (!(cond)) {                               \
			printf("FAIL %s:%d: ", __FILE__, __LINE__); \
			printf(__VA_ARGS__);                 \
			printf("\n");                        \
			failures++;                          \
		}                                            \
	} while (0)

/* The value as the device sees it: most significant byte first. */
static uint64_t be(uint64_t v)
{
	unsigned char b[8];
	uint64_t r;
	for (int i = 0; i < 8; i++)
		b[i] = (unsigned char)(v >> (56 - 8 * i));
	memcpy(&r, b, 8);
	return r;
}

static int reg_is(int npu, int reg, uint64_t v)
{
	uint64_t want = be(v);
	return memcmp(&regs[npu][reg], &want, 8) == 0;
}

static int untouched(int npu)
{
	return regs[npu][LAUNCH] == SENTINEL && regs[npu][AVA] == SENTINEL &&
	       regs[npu][STAT] == SENTINEL;
}

/* NPUs below `active` are idle (STAT 0); `busy` (if >= 0) never finishes. */
static void reset(int active, int busy)
{
	for (int i = 0; i < NPUS; i++) {
		bases[i] = regs[i];
		for (int r = 0; r < 3; r++)
			regs[i][r] = SENTINEL;
		if (i < active)
			regs[i][STAT] = 0;
	}
	if (busy >= 0)
		regs[busy][STAT] = be(1);
}

int main(void)
{
	static const int counts[] = { 0, 1, 6 };
	const uint64_t va = 0x10010000;
	const uint64_t launch_va = UINT64_C(0x0005400002000000);
	const uint64_t launch_pid = UINT64_C(0x000c000002000000);

	for (unsigned k = 0; k < sizeof(counts) / sizeof(counts[0]); k++) {
		int n = counts[k];
		int before = failures;
		reset(n, -1);
		long r = invalidate_va(bases, (unsigned long)n, 1, va);
		CHECK(r == 0, "invalidate_va n=%d returned %ld", n, r);
		for (int i = 0; i < n; i++) {
			CHECK(reg_is(i, AVA, va), "n=%d npu %d AVA %016llx", n, i,
			      (unsigned long long)regs[i][AVA]);
			CHECK(reg_is(i, LAUNCH, launch_va), "n=%d npu %d LAUNCH %016llx", n, i,
			      (unsigned long long)regs[i][LAUNCH]);
			CHECK(regs[i][STAT] == 0, "n=%d npu %d STAT written", n, i);
		}
		for (int i = n; i < NPUS; i++)
			CHECK(untouched(i), "n=%d npu %d touched", n, i);
		if (failures == before)
			printf("ok invalidate_va n=%d\n", n);
	}

	{
		int before = failures;
		reset(NPUS, -1);
		long r = invalidate_pid(bases, NPUS, 1);
		CHECK(r == 0, "invalidate_pid returned %ld", r);
		for (int i = 0; i < NPUS; i++) {
			CHECK(reg_is(i, LAUNCH, launch_pid), "pid: npu %d LAUNCH %016llx", i,
			      (unsigned long long)regs[i][LAUNCH]);
			CHECK(regs[i][AVA] == SENTINEL, "pid: npu %d AVA written", i);
		}
		if (failures == before)
			printf("ok invalidate_pid n=6\n");
	}

	{
		int before = failures;
		reset(NPUS, 3);
		long r = invalidate_va(bases, NPUS, 1, va);
		CHECK(r == -110, "busy invalidate_va returned %ld", r);
		for (int i = 0; i < NPUS; i++)
			CHECK(reg_is(i, LAUNCH, launch_va), "busy: npu %d LAUNCH %016llx", i,
			      (unsigned long long)regs[i][LAUNCH]);
		if (failures == before)
			printf("ok invalidate_va busy\n");
	}

	{
		int before = failures;
		reset(NPUS, 5);
		long r = invalidate_pid(bases, NPUS, 1);
		CHECK(r == -110, "busy invalidate_pid returned %ld", r);
		if (failures == before)
			printf("ok invalidate_pid busy\n");
	}

	printf("failures %d\n", failures);
	return failures != 0;
}
