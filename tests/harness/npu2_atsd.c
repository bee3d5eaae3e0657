/*
 * Outside-oracle harness for the generated NPU2 ATSD sequences
 * (examples/npu2_atsd.inv). Target-neutral C: it never depends on the host
 * byte order, every register is compared as the big-endian BYTES the
 * hardware would see. Built together with the generated header and .S and
 * run under qemu-user (or natively).
 *
 *   harness               run every check: one "ok <check>" line per check,
 *                         "FAIL <check>: ..." otherwise; exit 1 on failure
 *   harness count-va      one invalidate_va(npus, 6, 1, 0x10010000)
 *   harness count-pid     one invalidate_pid(npus, 6, 1)
 *   harness count-timeout one invalidate_va with STAT busy on NPU 3
 *   (count-* modes exist for instruction counting under qemu -d exec)
 */
#define _POSIX_C_SOURCE 200809L
#define _DEFAULT_SOURCE 1
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "npu2_atsd.h"

#define NNPU 6
#define LAUNCH 0 /* +0x00 */
#define AVA 1    /* +0x08 */
#define STAT 2   /* +0x10 */
#define ETIMEDOUT_RC (-110L)
#define VA 0x10010000ULL

static uint64_t regs[NNPU][3];
static void *npus[NNPU];
static int failures;

/* Hand-written from the spec (IBM bit numbering), independent of the
 * header: PRS = bit 13 -> 1 << 50, AP = bits 15..17 -> << 46,
 * IS = bit 12 -> 1 << 51, PID = bits 24..38 (15 bits) -> << 25. */
#define HAND_PRS 0x0004000000000000ULL
#define HAND_AP5 0x0001400000000000ULL
#define HAND_IS 0x0008000000000000ULL
#define HAND_PID(p) ((((unsigned long long)(p)) & 0x7fffULL) << 25)

static void be_bytes(uint64_t v, unsigned char out[8])
{
	int i;
	for (i = 0; i < 8; i++)
		out[i] = (unsigned char)(v >> (56 - 8 * i));
}

static void fill(void)
{
	int i;
	memset(regs, 0xA5, sizeof regs);
	for (i = 0; i < NNPU; i++) {
		memset(&regs[i][STAT], 0, 8);
		npus[i] = regs[i];
	}
}

#ifdef __GNUC__
__attribute__((format(printf, 3, 4)))
#endif
static void check(int cond, const char *name, const char *fmt, ...)
{
	va_list ap;
	if (cond) {
		printf("ok %s\n", name);
		return;
	}
	printf("FAIL %s: ", name);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	failures++;
}

static unsigned long long be_load(const void *p)
{
	const unsigned char *b = p;
	unsigned long long v = 0;
	int i;
	for (i = 0; i < 8; i++)
		v = (v << 8) | b[i];
	return v;
}

/* Register `r` of `npu` holds `v` as big-endian bytes. */
static int reg_is(const void *npu, int r, uint64_t v)
{
	unsigned char e[8];
	be_bytes(v, e);
	return memcmp((const unsigned char *)npu + 8 * r, e, 8) == 0;
}

/* Register still holds the fill pattern. */
static int untouched(const void *npu, int r)
{
	static const unsigned char pat[8] = { 0xA5, 0xA5, 0xA5, 0xA5, 0xA5, 0xA5, 0xA5, 0xA5 };
	return memcmp((const unsigned char *)npu + 8 * r, pat, 8) == 0;
}

/* After a launch on the first n NPUs: registers of NPU i as expected. */
static void check_npus(const char *what, int n, int ava_written, uint64_t ava,
		       uint64_t launch)
{
	char name[160];
	int i;
	for (i = 0; i < NNPU; i++) {
		if (i < n) {
			snprintf(name, sizeof name, "%s npu%d launch", what, i);
			check(reg_is(regs[i], LAUNCH, launch), name,
			      "got %#018llx want %#018llx", be_load(&regs[i][LAUNCH]),
			      (unsigned long long)launch);
			snprintf(name, sizeof name, "%s npu%d ava", what, i);
			if (ava_written)
				check(reg_is(regs[i], AVA, ava), name, "got %#018llx want %#018llx",
				      be_load(&regs[i][AVA]), (unsigned long long)ava);
			else
				check(untouched(regs[i], AVA), name, "got %#018llx want untouched",
				      be_load(&regs[i][AVA]));
		} else {
			snprintf(name, sizeof name, "%s npu%d untouched", what, i);
			check(untouched(regs[i], LAUNCH) && untouched(regs[i], AVA), name,
			      "launch %#018llx ava %#018llx", be_load(&regs[i][LAUNCH]),
			      be_load(&regs[i][AVA]));
		}
		snprintf(name, sizeof name, "%s npu%d stat untouched", what, i);
		check(reg_is(regs[i], STAT, 0), name, "got %#018llx", be_load(&regs[i][STAT]));
	}
}

/* LAUNCH for invalidate_va from the header's field macros. */
static uint64_t launch_va_macros(uint64_t pid)
{
	return NPU_LAUNCH_PRS_PREP(1) | NPU_LAUNCH_AP_PREP(5) | NPU_LAUNCH_PID_PREP(pid);
}

static uint64_t launch_pid_macros(uint64_t pid)
{
	return NPU_LAUNCH_IS_PREP(1) | NPU_LAUNCH_PRS_PREP(1) | NPU_LAUNCH_PID_PREP(pid);
}

static void test_va(int n, uint64_t pid, uint64_t va, uint64_t hand)
{
	char what[96];
	long rc;
	uint64_t fromhdr = launch_va_macros(pid);
	snprintf(what, sizeof what, "va(n=%d,pid=%#llx,va=%#llx)", n, (unsigned long long)pid,
		 (unsigned long long)va);
	fill();
	rc = invalidate_va(npus, (unsigned long)n, pid, va);
	{
		char name[160];
		snprintf(name, sizeof name, "%s expected launch: header macros == hand constant", what);
		check(fromhdr == hand, name, "macros %#018llx hand %#018llx",
		      (unsigned long long)fromhdr, (unsigned long long)hand);
		snprintf(name, sizeof name, "%s returns 0", what);
		check(rc == 0, name, "rc %ld", rc);
	}
	check_npus(what, n, 1, va, hand);
}

static void test_pid(int n, uint64_t pid, uint64_t hand)
{
	char what[96], name[160];
	long rc;
	uint64_t fromhdr = launch_pid_macros(pid);
	snprintf(what, sizeof what, "pid(n=%d,pid=%#llx)", n, (unsigned long long)pid);
	fill();
	rc = invalidate_pid(npus, (unsigned long)n, pid);
	snprintf(name, sizeof name, "%s expected launch: header macros == hand constant", what);
	check(fromhdr == hand, name, "macros %#018llx hand %#018llx", (unsigned long long)fromhdr,
	      (unsigned long long)hand);
	snprintf(name, sizeof name, "%s returns 0", what);
	check(rc == 0, name, "rc %ld", rc);
	check_npus(what, n, 0, 0, hand);
}

/* ---- timeout: STAT busy on NPU 3, NPUs 4 and 5 must not be polled ----
 * NPUs 4 and 5 sit at the end of a read-write page so that LAUNCH and AVA
 * are writable while STAT (+0x10) is the first word of a PROT_NONE page:
 * polling them faults, the SIGSEGV handler jumps back and we report it. */
static sigjmp_buf jb;
static volatile sig_atomic_t faulted;
static void *volatile fault_addr;

static void on_segv(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	(void)uc;
	faulted = 1;
	fault_addr = si->si_addr;
	siglongjmp(jb, 1);
}

static unsigned char *guard_base;
static long pagesz;

static unsigned char *guarded_npu(int k)
{
	/* pages: [rw][none][rw][none]; NPU 4 ends page 0, NPU 5 ends page 2 */
	return guard_base + (2 * k + 1) * pagesz - 16;
}

static int setup_guard(void)
{
	struct sigaction sa;
	int k;
	pagesz = sysconf(_SC_PAGESIZE);
	guard_base = mmap(NULL, 4 * pagesz, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (guard_base == MAP_FAILED)
		return -1;
	for (k = 0; k < 2; k++)
		if (mprotect(guard_base + (2 * k + 1) * pagesz, pagesz, PROT_NONE))
			return -1;
	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = on_segv;
	sa.sa_flags = SA_SIGINFO | SA_NODEFER;
	sigemptyset(&sa.sa_mask);
	return sigaction(SIGSEGV, &sa, NULL);
}

/* Fill; NPU 3 busy forever (STAT = BE 1); NPUs 4, 5 guarded. */
static void fill_timeout(void)
{
	int k;
	unsigned char one[8];
	fill();
	be_bytes(1, one);
	memcpy(&regs[3][STAT], one, 8);
	for (k = 0; k < 2; k++) {
		memset(guarded_npu(k), 0xA5, 16);
		npus[4 + k] = guarded_npu(k);
	}
}

static const char *which_guard(const void *a)
{
	const unsigned char *p = a;
	if (p >= guard_base + pagesz && p < guard_base + 2 * pagesz)
		return "npu4";
	if (p >= guard_base + 3 * pagesz && p < guard_base + 4 * pagesz)
		return "npu5";
	return "elsewhere";
}

static void test_timeout(int pid_seq)
{
	const char *what = pid_seq ? "pid-timeout" : "va-timeout";
	uint64_t launch = pid_seq ? HAND_IS | HAND_PRS | HAND_PID(1) : HAND_PRS | HAND_AP5 | HAND_PID(1);
	volatile long rc = 12345;
	char name[160];
	int i;

	fill_timeout();
	faulted = 0;
	if (sigsetjmp(jb, 1) == 0)
		rc = pid_seq ? invalidate_pid(npus, NNPU, 1) : invalidate_va(npus, NNPU, 1, VA);
	snprintf(name, sizeof name, "%s npus 4,5 not polled after npu3 timed out", what);
	check(!faulted, name, "load from %s (%p)", which_guard((const void *)fault_addr),
	      (void *)fault_addr);
	if (faulted)
		return;
	snprintf(name, sizeof name, "%s returns -110 (-ETIMEDOUT)", what);
	check(rc == ETIMEDOUT_RC, name, "rc %ld", (long)rc);
	for (i = 0; i < NNPU; i++) {
		const unsigned char *npu = npus[i];
		snprintf(name, sizeof name, "%s npu%d launch", what, i);
		check(reg_is(npu, LAUNCH, launch), name, "got %#018llx want %#018llx",
		      be_load(npu), (unsigned long long)launch);
		snprintf(name, sizeof name, "%s npu%d ava", what, i);
		if (pid_seq)
			check(untouched(npu, AVA), name, "got %#018llx", be_load(npu + 8));
		else
			check(reg_is(npu, AVA, VA), name, "got %#018llx want %#018llx",
			      be_load(npu + 8), VA);
	}
}

/* Positive control: with nobody busy, NPU 4 IS polled, so the guard page
 * must fault; otherwise the "not polled" check above proves nothing. */
static void test_guard_works(void)
{
	fill_timeout();
	memset(&regs[3][STAT], 0, 8);
	faulted = 0;
	if (sigsetjmp(jb, 1) == 0)
		(void)invalidate_va(npus, NNPU, 1, VA);
	check(faulted && strcmp(which_guard((const void *)fault_addr), "npu4") == 0,
	      "guard control: polling npu4 faults", "faulted=%d in %s", (int)faulted,
	      faulted ? which_guard((const void *)fault_addr) : "-");
}

static int count_mode(const char *m)
{
	long rc;
	fill();
	if (strcmp(m, "count-va") == 0) {
		rc = invalidate_va(npus, NNPU, 1, VA);
		return rc == 0 && reg_is(regs[5], LAUNCH, HAND_PRS | HAND_AP5 | HAND_PID(1)) ? 0 : 1;
	}
	if (strcmp(m, "count-pid") == 0) {
		rc = invalidate_pid(npus, NNPU, 1);
		return rc == 0 && reg_is(regs[5], LAUNCH, HAND_IS | HAND_PRS | HAND_PID(1)) ? 0 : 1;
	}
	if (strcmp(m, "count-timeout") == 0) {
		unsigned char one[8];
		be_bytes(1, one);
		memcpy(&regs[3][STAT], one, 8);
		rc = invalidate_va(npus, NNPU, 1, VA);
		return rc == ETIMEDOUT_RC ? 0 : 1;
	}
	fprintf(stderr, "unknown mode %s\n", m);
	return 2;
}

int main(int argc, char **argv)
{
	if (argc > 1)
		return count_mode(argv[1]);

	/* invalidate_va: n = 0, 1, 6 with the reference values */
	test_va(0, 1, VA, HAND_PRS | HAND_AP5 | HAND_PID(1));
	test_va(1, 1, VA, HAND_PRS | HAND_AP5 | HAND_PID(1));
	test_va(6, 1, VA, 0x0005400002000000ULL);
	/* high bits: the full 15-bit pid, a pid wider than the field, all ones,
	 * and a va with every byte distinct (catches byte-order slips) */
	test_va(6, 0x7fff, VA, 0x000540fffe000000ULL);
	test_va(6, 0x12345, VA, 0x000540468a000000ULL);
	test_va(6, ~0ULL, 0xfedcba9876543210ULL, 0x000540fffe000000ULL);
	test_va(3, 0x4000, 0x0123456789abcdefULL, 0x0005408000000000ULL);

	/* invalidate_pid */
	test_pid(6, 1, 0x000c000002000000ULL);
	test_pid(0, 1, HAND_IS | HAND_PRS | HAND_PID(1));
	test_pid(2, 0x7fff, 0x000c00fffe000000ULL);
	test_pid(6, 0x12345, 0x000c00468a000000ULL);
	test_pid(6, ~0ULL, 0x000c00fffe000000ULL);

	if (setup_guard() != 0) {
		printf("FAIL guard setup\n");
		return 1;
	}
	test_guard_works();
	test_timeout(0);
	test_timeout(1);

	printf("%s: %d failure(s)\n", failures ? "FAILED" : "PASSED", failures);
	return failures ? 1 : 0;
}
