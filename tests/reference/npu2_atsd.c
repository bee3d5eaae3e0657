/*
 * Reference for examples/npu2_atsd.inv: the NPU2 ATSD invalidation of
 * Linux v5.2 arch/powerpc/platforms/powernv/npu-dma.c (mmio_invalidate()
 * and the helpers it calls), transcribed with the kernel's accessors
 * (kernel.h). What is left out, and why:
 * - acquire_atsd_reg()/release_atsd_reg() pick one of 8 ATSD register
 *   sets per NPU with a bit lock in normal memory; here NPU i uses its
 *   one set (the example's instance i), so the register accesses are the
 *   kernel's;
 * - npu_context->nmmu_flush is the caller's choice: ref_mmio_invalidate
 *   has it off, ref_mmio_invalidate_nmmu on, with radix_enabled() from
 *   the scenario's feature word (bit 0, the spec's `radix`); off the
 *   POWER CPUs it is 0;
 * - __flush_all_mm() takes its global path (_tlbie_pid): a GPU's mm is
 *   not thread-local; the MMU_NO_CONTEXT test is left out (the callers'
 *   PIDs are valid);
 * - mmio_invalidate_wait() spins forever; here it gives up after
 *   REF_POLL_LIMIT reads and the function returns -ETIMEDOUT (kernel.h).
 * Every entry point takes the scenario's argument vector `a`; its layout
 * is written above each one (tests/refcmp/scenarios.rs builds it).
 */
#include "kernel.h"

#define NV_MAX_NPUS 8
#define SZ_64K 0x10000UL
#define SZ_2M 0x200000UL
#define SZ_1G 0x40000000UL
#define ALIGN_DOWN(x, a) ((x) & ~((a)-1))
/* PPC_BIT(b) is MSB0 bit b of a doubleword; PPC_BITLSHIFT(b) = 63 - b. */
#define PPC_BITLSHIFT(b) (63 - (b))
#define PPC_BIT(b) (1UL << PPC_BITLSHIFT(b))

/* MMIO ATSD register offsets (in doublewords) */
#define XTS_ATSD_LAUNCH 0
#define XTS_ATSD_AVA 1
#define XTS_ATSD_STAT 2

enum { MMU_PAGE_64K, MMU_PAGE_2M, MMU_PAGE_1G, MMU_PAGE_COUNT };
/* mmu_get_ap(): the radix AP encodings (arch/powerpc/mm/book3s64/radix_pgtable.c) */
static const unsigned long mmu_ap[] = { 5, 1, 2 };

struct npu {
	u64 *mmio_atsd_regs[1];
};
struct mmio_atsd_reg {
	struct npu *npu;
	int reg;
};

static const int max_npu2_index = NV_MAX_NPUS - 1;

static unsigned long get_atsd_launch_val(unsigned long pid, unsigned long psize)
{
	unsigned long launch = 0;

	if (psize == MMU_PAGE_COUNT)
		launch |= PPC_BIT(12); /* IS: the whole PID */
	else
		launch |= mmu_ap[psize] << PPC_BITLSHIFT(17); /* AP */
	launch |= PPC_BIT(13); /* PRS */
	launch |= pid << PPC_BITLSHIFT(38);
	/* "No flush" (bit 39) stays 0 */
	return launch;
}

static void mmio_atsd_regs_write(struct mmio_atsd_reg r[NV_MAX_NPUS], unsigned long offset,
				 unsigned long val)
{
	int i;

	for (i = 0; i <= max_npu2_index; i++) {
		if (r[i].reg < 0)
			continue;
		__raw_writeq_be(val, r[i].npu->mmio_atsd_regs[r[i].reg] + offset);
	}
}

static void mmio_invalidate_pid(struct mmio_atsd_reg r[NV_MAX_NPUS], unsigned long pid)
{
	mmio_atsd_regs_write(r, XTS_ATSD_LAUNCH, get_atsd_launch_val(pid, MMU_PAGE_COUNT));
}

static void mmio_invalidate_range(struct mmio_atsd_reg r[NV_MAX_NPUS], unsigned long pid,
				  unsigned long start, unsigned long psize)
{
	unsigned long launch = get_atsd_launch_val(pid, psize);

	mmio_atsd_regs_write(r, XTS_ATSD_AVA, start); /* all VAs first */
	eieio(); /* one barrier for all address writes */
	mmio_atsd_regs_write(r, XTS_ATSD_LAUNCH, launch);
}

static long mmio_invalidate_wait(struct mmio_atsd_reg r[NV_MAX_NPUS])
{
	int i;

	for (i = 0; i <= max_npu2_index; i++) {
		unsigned long reads = 0;

		if (r[i].reg < 0)
			continue;
		while (__raw_readq(r[i].npu->mmio_atsd_regs[r[i].reg] + XTS_ATSD_STAT)) {
			if (++reads == REF_POLL_LIMIT)
				return -ETIMEDOUT;
			cpu_relax();
		}
	}
	return 0;
}

#if defined(__powerpc64__)
#define PPC_TLBIE_5(rb, rs, ric, prs, r) "tlbie " rb "," rs "," ric "," prs "," r
#define RIC_FLUSH_ALL 2
/* v5.2 _tlbie_pid(pid, RIC_FLUSH_ALL): no POWER9 errata fixups yet (5.4). */
static void _tlbie_pid_all(unsigned long pid)
{
	unsigned long rb = PPC_BIT(53); /* IS = 1 */
	unsigned long rs = pid << PPC_BITLSHIFT(31);

	__asm__ __volatile__("ptesync" ::: "memory");
	__asm__ __volatile__(".machine power9\n\t" PPC_TLBIE_5("%0", "%4", "%3", "%2", "%1")
			     : : "r"(rb), "i"(1), "i"(1), "i"(RIC_FLUSH_ALL), "r"(rs) : "memory");
	__asm__ __volatile__("eieio; tlbsync; ptesync" ::: "memory");
}
#endif

/* flush_all_mm(): radix__flush_all_mm() when radix_enabled(), else nothing. */
static void flush_all_mm(unsigned long pid, int radix)
{
#if defined(__powerpc64__)
	if (radix) {
		mb(); /* __flush_all_mm's smp_mb() */
		_tlbie_pid_all(pid);
	}
#else
	(void)pid;
	(void)radix;
#endif
}

static long mmio_invalidate(struct npu *npus, unsigned long n, unsigned long pid,
			    unsigned long start, unsigned long size)
{
	struct mmio_atsd_reg r[NV_MAX_NPUS];
	unsigned long atsd_start = 0;
	unsigned long end = start + size - 1;
	int atsd_psize = MMU_PAGE_COUNT;
	unsigned long i;
	long rc;

	/* The range as one of the supported sizes, else the whole PID. */
	if (size == SZ_64K) {
		atsd_start = start;
		atsd_psize = MMU_PAGE_64K;
	} else if (ALIGN_DOWN(start, SZ_2M) == ALIGN_DOWN(end, SZ_2M)) {
		atsd_start = ALIGN_DOWN(start, SZ_2M);
		atsd_psize = MMU_PAGE_2M;
	} else if (ALIGN_DOWN(start, SZ_1G) == ALIGN_DOWN(end, SZ_1G)) {
		atsd_start = ALIGN_DOWN(start, SZ_1G);
		atsd_psize = MMU_PAGE_1G;
	}

	/* acquire_atsd_reg(), one register set per NPU */
	for (i = 0; i < NV_MAX_NPUS; i++) {
		r[i].reg = i < n ? 0 : -1;
		r[i].npu = &npus[i < n ? i : 0];
	}

	if (atsd_psize == MMU_PAGE_COUNT)
		mmio_invalidate_pid(r, pid);
	else
		mmio_invalidate_range(r, pid, atsd_start, atsd_psize);
	rc = mmio_invalidate_wait(r);
	if (rc)
		return rc;

	/* The GPU needs two flush ATSDs; PID 0 is never a GPU process. */
	mmio_invalidate_pid(r, 0);
	rc = mmio_invalidate_wait(r);
	if (rc)
		return rc;
	mmio_invalidate_pid(r, 0);
	return mmio_invalidate_wait(r);
}

static unsigned long npus_from(const uint64_t *a, struct npu *npus)
{
	void *const *base = (void *const *)(uintptr_t)a[0];
	unsigned long n = a[1], i;

	for (i = 0; i < n && i < NV_MAX_NPUS; i++)
		npus[i].mmio_atsd_regs[0] = base[i];
	return n;
}

/* a: npu bases, npu count, pid, start, size */
long ref_mmio_invalidate(const uint64_t *a)
{
	struct npu npus[NV_MAX_NPUS];
	unsigned long n = npus_from(a, npus);

	return mmio_invalidate(npus, n, a[2], a[3], a[4]);
}

/* a: npu bases, npu count, pid, va: pnv_npu2_mn_invalidate_range() of one
 * 64K page */
long ref_mmio_invalidate_page(const uint64_t *a)
{
	struct npu npus[NV_MAX_NPUS];
	unsigned long n = npus_from(a, npus);

	return mmio_invalidate(npus, n, a[2], a[3], SZ_64K);
}

/* a: npu bases, npu count, pid: pnv_npu2_mn_release(), the whole PID */
long ref_mmio_invalidate_all(const uint64_t *a)
{
	struct npu npus[NV_MAX_NPUS];
	unsigned long n = npus_from(a, npus);

	return mmio_invalidate(npus, n, a[2], 0, ~0UL);
}

/* a: npu bases, npu count, pid, start, size, features: mmio_invalidate()
 * with npu_context->nmmu_flush set, radix_enabled() = features bit 0 */
long ref_mmio_invalidate_nmmu(const uint64_t *a)
{
	struct npu npus[NV_MAX_NPUS];
	unsigned long n = npus_from(a, npus);

	flush_all_mm(a[2], a[5] & 1);
	return mmio_invalidate(npus, n, a[2], a[3], a[4]);
}
