/*
 * Native check of the generated npu2_atsd.h field macros and helpers.
 * Valid C99/C11 and C++17. Prints "ok <check>" / "FAIL <check>"; exit 1
 * on failure.
 */
#include <stdio.h>
#include "npu2_atsd.h"

static int failures;

static void check(int cond, const char *what, unsigned long long got, unsigned long long want)
{
	if (cond) {
		printf("ok %s\n", what);
	} else {
		printf("FAIL %s: got %#llx want %#llx\n", what, got, want);
		failures++;
	}
}

#define EQ(what, got, want) \
	check((unsigned long long)(got) == (unsigned long long)(want), what, \
	      (unsigned long long)(got), (unsigned long long)(want))

static const uint64_t samples[] = {
	0, 1, 2, 5, 0x7fff, 0x8000, 0x12345, 0xa5a5a5a5a5a5a5a5ULL, 0xffffffffffffffffULL,
	0x0123456789abcdefULL,
};

#define NSAMPLES (sizeof samples / sizeof samples[0])

/* For field F: mask == ((1 << width) - 1) << shift; GET(PREP(v)) == v
 * truncated to the width; PREP(GET(r)) == r & MASK; helpers == macros. */
#define FIELD(F, f)                                                                          \
	do {                                                                                 \
		unsigned i;                                                                  \
		uint64_t ones = NPU_LAUNCH_##F##_WIDTH == 64 ? ~(uint64_t)0                  \
							       : (((uint64_t)1 << NPU_LAUNCH_##F##_WIDTH) - 1); \
		int ok = NPU_LAUNCH_##F##_MASK == (ones << NPU_LAUNCH_##F##_SHIFT);          \
		EQ(#F " mask from shift and width", NPU_LAUNCH_##F##_MASK,                   \
		   ok ? NPU_LAUNCH_##F##_MASK : ones << NPU_LAUNCH_##F##_SHIFT);             \
		for (i = 0; i < NSAMPLES; i++) {                                             \
			uint64_t v = samples[i];                                             \
			ok = NPU_LAUNCH_##F##_GET(NPU_LAUNCH_##F##_PREP(v)) == (v & ones) &&    \
			     NPU_LAUNCH_##F##_PREP(NPU_LAUNCH_##F##_GET(v)) ==                 \
				     (v & NPU_LAUNCH_##F##_MASK) &&                             \
			     npu_launch_##f##_prep(v) == NPU_LAUNCH_##F##_PREP(v) &&            \
			     npu_launch_##f##_get(v) == NPU_LAUNCH_##F##_GET(v) &&              \
			     npu_launch_##f##_get(npu_launch_##f##_prep(v)) == (v & ones) &&     \
			     (NPU_LAUNCH_##F##_PREP(v) & ~NPU_LAUNCH_##F##_MASK) == 0;          \
			check(ok, #F " round trip", v, v & ones);                            \
		}                                                                            \
	} while (0)

int main(void)
{
	uint64_t masks[5];
	unsigned i, j;

	EQ("va launch from macros", NPU_LAUNCH_PRS_PREP(1) | NPU_LAUNCH_AP_PREP(5) | NPU_LAUNCH_PID_PREP(1),
	   0x0005400002000000ULL);
	EQ("pid launch from macros", NPU_LAUNCH_IS_PREP(1) | NPU_LAUNCH_PRS_PREP(1) | NPU_LAUNCH_PID_PREP(1),
	   0x000c000002000000ULL);
	EQ("pid 0x12345 masked to 15 bits", NPU_LAUNCH_PID_PREP(0x12345), 0x000000468a000000ULL);
	EQ("pid get", NPU_LAUNCH_PID_GET(0x000540468a000000ULL), 0x2345);
	EQ("ap get", NPU_LAUNCH_AP_GET(0x0005400002000000ULL), 5);
	EQ("prs get", NPU_LAUNCH_PRS_GET(0x0005400002000000ULL), 1);
	EQ("is get", NPU_LAUNCH_IS_GET(0x000c000002000000ULL), 1);
	EQ("no_flush is IBM bit 39", NPU_LAUNCH_NO_FLUSH_PREP(1), 1ULL << 24);
	/* IBM (MSB0) numbering: bit b is 1 << (63 - b) */
	EQ("is is IBM bit 12", NPU_LAUNCH_IS_MASK, 1ULL << (63 - 12));
	EQ("prs is IBM bit 13", NPU_LAUNCH_PRS_MASK, 1ULL << (63 - 13));
	EQ("ap is IBM bits 15..17", NPU_LAUNCH_AP_MASK, 7ULL << (63 - 17));
	EQ("pid is IBM bits 24..38", NPU_LAUNCH_PID_MASK, 0x7fffULL << (63 - 38));
	EQ("launch offset", NPU_LAUNCH_OFFSET, 0x0);
	EQ("ava offset", NPU_AVA_OFFSET, 0x8);
	EQ("stat offset", NPU_STAT_OFFSET, 0x10);
	EQ("launch width", NPU_LAUNCH_WIDTH, 64);
	EQ("instances max", NPU_INSTANCES_MAX, 6);
	EQ("pid width", NPU_LAUNCH_PID_WIDTH, 15);
	EQ("ap width", NPU_LAUNCH_AP_WIDTH, 3);

	FIELD(IS, is);
	FIELD(PRS, prs);
	FIELD(AP, ap);
	FIELD(PID, pid);
	FIELD(NO_FLUSH, no_flush);

	masks[0] = NPU_LAUNCH_IS_MASK;
	masks[1] = NPU_LAUNCH_PRS_MASK;
	masks[2] = NPU_LAUNCH_AP_MASK;
	masks[3] = NPU_LAUNCH_PID_MASK;
	masks[4] = NPU_LAUNCH_NO_FLUSH_MASK;
	for (i = 0; i < 5; i++)
		for (j = i + 1; j < 5; j++)
			EQ("field masks disjoint", masks[i] & masks[j], 0);

	/* the prototypes have the ABI's types (unevaluated: nothing to link) */
	(void)sizeof(invalidate_va((void *const *)0, 0UL, 0ULL, 0ULL));
	(void)sizeof(invalidate_pid((void *const *)0, 0UL, 0ULL));
	EQ("invalidate_va returns long", sizeof(invalidate_va((void *const *)0, 0UL, 0ULL, 0ULL)),
	   sizeof(long));

	printf("%s: %d failure(s)\n", failures ? "FAILED" : "PASSED", failures);
	return failures ? 1 : 0;
}
