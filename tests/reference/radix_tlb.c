/*
 * Reference for examples/radix_tlb.inv: Linux 6.1
 * arch/powerpc/mm/book3s64/radix_tlb.c, transcribed for 64K base pages
 * (mmu_virtual_psize = MMU_PAGE_64K) with CONFIG_TRANSPARENT_HUGEPAGE and
 * two paths of __radix__flush_tlb_range: the global tlbie one
 * (cputlb_use_tlbie(), MMU_FTR_GTSE, FLUSH_TYPE_GLOBAL) and the local
 * tlbiel one (FLUSH_TYPE_LOCAL). The CPU features are variables here
 * (cpu_has_feature() after boot patching): `erat_bug`
 * (CPU_FTR_P9_TLBIE_ERAT_BUG), `stq_bug` (CPU_FTR_P9_TLBIE_STQ_BUG), `arch31`
 * (CPU_FTR_ARCH_31), set by the ref_*_f<bits> entry points. tlbie, tlbiel,
 * tlbsync and slbia trap in user mode; the harness logs them with their
 * operand registers.
 */
#include "kernel.h"

#define PPC_BITLSHIFT(be) (63 - (be))
#define PPC_BIT(bit) (1UL << PPC_BITLSHIFT(bit))
#define PPC_BITMASK(bs, be) ((PPC_BIT(bs) - PPC_BIT(be)) | PPC_BIT(bs))
#define RIC_FLUSH_TLB 0
#define RIC_FLUSH_PWC 1
#define RIC_FLUSH_ALL 2
#define POWER9_TLB_SETS_RADIX 128
#define PAGE_SHIFT 16
#define PMD_SIZE (1UL << 21)
#define PMD_MASK (~(PMD_SIZE - 1))
/* mmu_psize_defs[].ap of radix: 4K 0, 64K 5, 2M 1, 1G 2. */
#define AP_64K 5UL
#define AP_2M 1UL

static int erat_bug, stq_bug, arch31;
/* tlb_single_page_flush_ceiling: the spec's derived value is pinned to it
 * per build (tests/refcmp/scenarios.rs). */
static unsigned long ceiling = 33;
/* tlb_local_single_page_flush_ceiling = POWER9_TLB_SETS_RADIX * 2. */
static unsigned long local_ceiling = POWER9_TLB_SETS_RADIX * 2;

#define PPC_TLBIE_5(rb, rs, ric, prs, r) "tlbie " rb "," rs "," ric "," prs "," r
#define PPC_TLBIEL(rb, rs, ric, prs, r) "tlbiel " rb "," rs "," ric "," prs "," r


#define TLBIE(rb, rs, ric, prs, r)                                              \
	__asm__ __volatile__(".machine power9\n\t" PPC_TLBIE_5("%0", "%4", "%3", "%2", "%1") \
			     : : "r"(rb), "i"(r), "i"(prs), "i"(ric), "r"(rs) : "memory")
#define TLBIEL(rb, rs, ric, prs, r)                                             \
	__asm__ __volatile__(".machine power9\n\t" PPC_TLBIEL("%0", "%4", "%3", "%2", "%1") \
			     : : "r"(rb), "i"(r), "i"(prs), "i"(ric), "r"(rs) : "memory")

#define __tlbie_pid(pid, ric)                                                   \
	do {                                                                    \
		unsigned long rb = PPC_BIT(53); /* IS = 1 */                    \
		unsigned long rs = (unsigned long)(pid) << PPC_BITLSHIFT(31);   \
		TLBIE(rb, rs, ric, 1, 1);                                       \
	} while (0)
#define __tlbiel_pid_set(pid, set, ric)                                         \
	do {                                                                    \
		unsigned long rb = PPC_BIT(53);                                 \
		rb |= (unsigned long)(set) << PPC_BITLSHIFT(51);                \
		unsigned long rs = (unsigned long)(pid) << PPC_BITLSHIFT(31);   \
		TLBIEL(rb, rs, ric, 1, 1);                                      \
	} while (0)
#define __tlbie_va(va, pid, ap, ric)                                            \
	do {                                                                    \
		unsigned long rb = (va) & ~(PPC_BITMASK(52, 63));               \
		rb |= (ap) << PPC_BITLSHIFT(58);                                \
		unsigned long rs = (unsigned long)(pid) << PPC_BITLSHIFT(31);   \
		TLBIE(rb, rs, ric, 1, 1);                                       \
	} while (0)
#define __tlbiel_va(va, pid, ap, ric)                                           \
	do {                                                                    \
		unsigned long rb = (va) & ~(PPC_BITMASK(52, 63));               \
		rb |= (ap) << PPC_BITLSHIFT(58);                                \
		unsigned long rs = (unsigned long)(pid) << PPC_BITLSHIFT(31);   \
		TLBIEL(rb, rs, ric, 1, 1);                                      \
	} while (0)

#define ptesync() __asm__ __volatile__("ptesync" ::: "memory")
#define tlbie_sync() __asm__ __volatile__("eieio; tlbsync; ptesync" ::: "memory")

static void ppc_after_tlbiel_barrier(void)
{
	ptesync();
	if (arch31)
		__asm__ __volatile__(".machine power9\n\tcpabort" ::: "memory");
}

static void fixup_tlbie_va(unsigned long va, unsigned long pid, unsigned long ap)
{
	if (erat_bug) {
		ptesync();
		__tlbie_va(va, 0, ap, RIC_FLUSH_TLB);
	}
	if (stq_bug) {
		ptesync();
		__tlbie_va(va, pid, ap, RIC_FLUSH_TLB);
	}
}

static void fixup_tlbie_va_range(unsigned long va, unsigned long pid, unsigned long ap)
{
	if (erat_bug) {
		ptesync();
		__tlbie_pid(0, RIC_FLUSH_TLB);
	}
	if (stq_bug) {
		ptesync();
		__tlbie_va(va, pid, ap, RIC_FLUSH_TLB);
	}
}

static void fixup_tlbie_pid(unsigned long pid)
{
	unsigned long va = ((1UL << 52) - 1);

	if (erat_bug) {
		ptesync();
		__tlbie_pid(0, RIC_FLUSH_TLB);
	}
	if (stq_bug) {
		ptesync();
		__tlbie_va(va, pid, AP_64K, RIC_FLUSH_TLB);
	}
}

/* _tlbie_va(va, pid, MMU_PAGE_64K, RIC_FLUSH_TLB) */
static void _tlbie_va(unsigned long va, unsigned long pid)
{
	ptesync();
	__tlbie_va(va, pid, AP_64K, RIC_FLUSH_TLB);
	fixup_tlbie_va(va, pid, AP_64K);
	tlbie_sync();
}

/* _tlbiel_va(va, pid, MMU_PAGE_64K, RIC_FLUSH_TLB) */
static void _tlbiel_va(unsigned long va, unsigned long pid)
{
	ptesync();
	__tlbiel_va(va, pid, AP_64K, RIC_FLUSH_TLB);
	ppc_after_tlbiel_barrier();
}

/* _tlbie_pid(pid, RIC_FLUSH_ALL) */
static void _tlbie_pid_all(unsigned long pid)
{
	ptesync();
	__tlbie_pid(pid, RIC_FLUSH_ALL);
	fixup_tlbie_pid(pid);
	tlbie_sync();
}

/* _tlbiel_pid(pid, RIC_FLUSH_ALL) */
static void _tlbiel_pid_all(unsigned long pid)
{
	int set;

	ptesync();
	__tlbiel_pid_set(pid, 0, RIC_FLUSH_ALL);
	if (!arch31) {
		for (set = 1; set < POWER9_TLB_SETS_RADIX; set++)
			__tlbiel_pid_set(pid, set, RIC_FLUSH_TLB);
	}
	ppc_after_tlbiel_barrier();
	__asm__ __volatile__(".machine power9\n\tslbia 3; isync" ::: "memory");
}

static void __tlbie_va_range(unsigned long start, unsigned long end, unsigned long pid,
			     unsigned long page_size, unsigned long ap)
{
	unsigned long addr;

	for (addr = start; addr < end; addr += page_size)
		__tlbie_va(addr, pid, ap, RIC_FLUSH_TLB);
	fixup_tlbie_va_range(addr - page_size, pid, ap);
}

static void __tlbiel_va_range(unsigned long start, unsigned long end, unsigned long pid,
			      unsigned long page_size, unsigned long ap)
{
	unsigned long addr;

	for (addr = start; addr < end; addr += page_size)
		__tlbiel_va(addr, pid, ap, RIC_FLUSH_TLB);
}

/* __radix__flush_tlb_range, not fullmm: FLUSH_TYPE_LOCAL when `local`,
 * else FLUSH_TYPE_GLOBAL with tlbie. */
static void radix_flush_tlb_range(unsigned long pid, unsigned long start, unsigned long end,
				  int local)
{
	unsigned long page_size = 1UL << PAGE_SHIFT;
	unsigned long nr_pages = (end - start) >> PAGE_SHIFT;
	int flush_pid, flush_pwc = 0;

	if (!local)
		flush_pid = nr_pages > ceiling;
	else
		flush_pid = nr_pages > local_ceiling;
	if (!flush_pid && (end - start) >= PMD_SIZE)
		flush_pwc = 1;
	if (flush_pid) {
		if (local)
			_tlbiel_pid_all(pid);
		else
			_tlbie_pid_all(pid);
	} else {
		int hflush = 0;
		unsigned long hstart, hend;

		hstart = (start + PMD_SIZE - 1) & PMD_MASK;
		hend = end & PMD_MASK;
		if (hstart < hend)
			hflush = 1;
		if (local) {
			ptesync();
			if (flush_pwc)
				/* For PWC, only one flush is needed */
				__tlbiel_pid_set(pid, 0, RIC_FLUSH_PWC);
			__tlbiel_va_range(start, end, pid, page_size, AP_64K);
			if (hflush)
				__tlbiel_va_range(hstart, hend, pid, PMD_SIZE, AP_2M);
			ppc_after_tlbiel_barrier();
		} else {
			ptesync();
			if (flush_pwc)
				__tlbie_pid(pid, RIC_FLUSH_PWC);
			__tlbie_va_range(start, end, pid, page_size, AP_64K);
			if (hflush)
				__tlbie_va_range(hstart, hend, pid, PMD_SIZE, AP_2M);
			tlbie_sync();
		}
	}
}

/* radix__flush_tlb_all */
static void radix_flush_tlb_all(void)
{
	unsigned long rb, prs, r, rs;
	unsigned long ric = RIC_FLUSH_ALL;

	rb = 0x3 << PPC_BITLSHIFT(53); /* IS = 3 */
	prs = 0;
	r = 1;
	rs = 1 & ((1UL << 32) - 1);
	(void)ric;
	(void)prs;
	(void)r;
	ptesync();
	TLBIE(rb, rs, RIC_FLUSH_ALL, 1, 1);
	TLBIE(rb, 0UL, RIC_FLUSH_ALL, 0, 1);
	tlbie_sync();
}

static void features(unsigned long f)
{
	erat_bug = f & 1;
	stq_bug = (f >> 1) & 1;
	arch31 = (f >> 2) & 1;
}

/* Entry points: the harness passes the scenario's arguments as an array
 * (tests/refcmp/scenarios.rs: pid, va or start, end, features). */
long ref_flush_tlb_page(const uint64_t *a)
{
	features(a[2]);
	_tlbie_va(a[1], a[0]);
	return 0;
}

long ref_flush_tlb_page_local(const uint64_t *a)
{
	features(a[2]);
	_tlbiel_va(a[1], a[0]);
	return 0;
}

long ref_flush_tlb_pid(const uint64_t *a)
{
	features(a[1]);
	_tlbie_pid_all(a[0]);
	return 0;
}

long ref_flush_tlb_pid_local(const uint64_t *a)
{
	features(a[1]);
	_tlbiel_pid_all(a[0]);
	return 0;
}

long ref_flush_tlb_range(const uint64_t *a)
{
	features(a[3]);
	radix_flush_tlb_range(a[0], a[1], a[2], 0);
	return 0;
}

long ref_flush_tlb_range_c31(const uint64_t *a)
{
	long r;

	ceiling = 31;
	r = ref_flush_tlb_range(a);
	ceiling = 33;
	return r;
}

long ref_flush_tlb_range_local(const uint64_t *a)
{
	features(a[3]);
	radix_flush_tlb_range(a[0], a[1], a[2], 1);
	return 0;
}

/* With the spec's derived local ceiling (threshold(radix64k_local)). */
long ref_flush_tlb_range_local_c279(const uint64_t *a)
{
	long r;

	local_ceiling = 279;
	r = ref_flush_tlb_range_local(a);
	local_ceiling = POWER9_TLB_SETS_RADIX * 2;
	return r;
}

long ref_flush_tlb_all(const uint64_t *a)
{
	(void)a;
	radix_flush_tlb_all();
	return 0;
}
