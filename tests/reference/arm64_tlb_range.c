/*
 * Reference for examples/arm64_tlb_range.inv: Linux 6.1
 * arch/arm64/include/asm/tlbflush.h, 4K pages, transcribed. The CPU
 * capabilities are constants here: no KPTI (arm64_kernel_unmapped_at_el0()
 * false, so __tlbi_user() issues nothing), no ARMv8.4-TTL (tlb_level 0
 * adds no hint anyway); ARM64_WORKAROUND_REPEAT_TLBI is `repeat_tlbi`
 * (what alternative_has_feature_unlikely() answers after boot patching; 0
 * unless a ref_*_repeat function sets it); system_supports_tlb_range() is
 * the `range` argument of __flush_tlb_range().
 */
#include "kernel.h"

#define PAGE_SHIFT 12
#define PAGE_SIZE (1UL << PAGE_SHIFT)
#define PTRS_PER_PTE 512
#define MAX_TLBI_OPS PTRS_PER_PTE
#define GENMASK_ULL(h, l) (((~0ULL) << (l)) & (~0ULL >> (63 - (h))))
#define round_down(x, y) ((x) & ~((y)-1))
#define round_up(x, y) ((((x)-1) | ((y)-1)) + 1)

/* __tlbi(op, arg): "tlbi op, %x0" with "rZ"; __tlbi(op): no operand.
 * .arch armv8.4-a: the range operations are FEAT_TLBIRANGE. */
#define __tlbi1(op, arg) __asm__ __volatile__(".arch armv8.4-a\n\ttlbi " #op ", %x0" : : "rZ"(arg))
#define __tlbi0(op) __asm__ __volatile__("tlbi " #op)
static int repeat_tlbi;

/* Debian's 6.1: __repeat_tlbi_sync(vale1is, 0) after the DSB. */
static void __tlbi_sync_s1ish(void)
{
	dsb(ish);
	if (!repeat_tlbi)
		return;
	__tlbi1(vale1is, 0);
	dsb(ish);
}

#define __TLBI_VADDR(addr, asid)                                                \
	({                                                                      \
		unsigned long __ta = (addr) >> 12;                              \
		__ta &= GENMASK_ULL(43, 0);                                     \
		__ta |= (unsigned long)(asid) << 48;                            \
		__ta;                                                           \
	})
#define TLBI_TTL_TG_4K 1
#define __TLBI_VADDR_RANGE(addr, asid, scale, num, ttl)                         \
	({                                                                      \
		unsigned long __ta = (addr) >> PAGE_SHIFT;                      \
		__ta &= GENMASK_ULL(36, 0);                                     \
		__ta |= (unsigned long)(ttl) << 37;                             \
		__ta |= (unsigned long)(num) << 39;                             \
		__ta |= (unsigned long)(scale) << 44;                           \
		__ta |= (unsigned long)TLBI_TTL_TG_4K << 46;                    \
		__ta |= (unsigned long)(asid) << 48;                            \
		__ta;                                                           \
	})
#define __TLBI_RANGE_PAGES(num, scale) ((unsigned long)((num) + 1) << (5 * (scale) + 1))
#define MAX_TLBI_RANGE_PAGES __TLBI_RANGE_PAGES(31, 3)
#define TLBI_RANGE_MASK GENMASK_ULL(4, 0)
#define __TLBI_RANGE_NUM(pages, scale) ((((pages) >> (5 * (scale) + 1)) & TLBI_RANGE_MASK) - 1)

static void flush_tlb_all(void)
{
	dsb(ishst);
	__tlbi0(vmalle1is);
	__tlbi_sync_s1ish();
	isb();
}

static void flush_tlb_mm(unsigned long mm_asid)
{
	unsigned long asid;

	dsb(ishst);
	asid = __TLBI_VADDR(0, mm_asid);
	__tlbi1(aside1is, asid);
	__tlbi_sync_s1ish();
}

static void flush_tlb_page(unsigned long mm_asid, unsigned long uaddr)
{
	/* flush_tlb_page_nosync() */
	unsigned long addr;

	dsb(ishst);
	addr = __TLBI_VADDR(uaddr, mm_asid);
	__tlbi1(vale1is, addr);
	__tlbi_sync_s1ish();
}

/* tlb_level 0: __tlbi_level() is __tlbi() */
static void __flush_tlb_range(unsigned long mm_asid, unsigned long start, unsigned long end,
			      unsigned long stride, int last_level, int range)
{
	int num = 0;
	int scale = 0;
	unsigned long asid, addr, pages;

	start = round_down(start, stride);
	end = round_up(end, stride);
	pages = (end - start) >> PAGE_SHIFT;

	if ((!range && (end - start) >= (MAX_TLBI_OPS * stride)) ||
	    pages >= MAX_TLBI_RANGE_PAGES) {
		flush_tlb_mm(mm_asid);
		return;
	}

	dsb(ishst);
	asid = mm_asid;
	while (pages > 0) {
		if (!range || pages % 2 == 1) {
			addr = __TLBI_VADDR(start, asid);
			if (last_level)
				__tlbi1(vale1is, addr);
			else
				__tlbi1(vae1is, addr);
			start += stride;
			pages -= stride >> PAGE_SHIFT;
			continue;
		}
		num = __TLBI_RANGE_NUM(pages, scale);
		if (num >= 0) {
			addr = __TLBI_VADDR_RANGE(start, asid, scale, num, 0);
			if (last_level)
				__tlbi1(rvale1is, addr);
			else
				__tlbi1(rvae1is, addr);
			start += __TLBI_RANGE_PAGES(num, scale) << PAGE_SHIFT;
			pages -= __TLBI_RANGE_PAGES(num, scale);
		}
		scale++;
	}
	__tlbi_sync_s1ish();
}

static void flush_tlb_kernel_range(unsigned long start, unsigned long end)
{
	unsigned long addr;

	if ((end - start) > (MAX_TLBI_OPS * PAGE_SIZE)) {
		flush_tlb_all();
		return;
	}
	start = __TLBI_VADDR(start, 0);
	end = __TLBI_VADDR(end, 0);
	dsb(ishst);
	for (addr = start; addr < end; addr += 1 << (PAGE_SHIFT - 12))
		__tlbi1(vaale1is, addr);
	__tlbi_sync_s1ish();
	isb();
}

/*
 * a: asid, start, end. The example's per-page op is TLBI VALE1IS:
 * __flush_tlb_range() with last_level, as tlb_flush() calls it for an
 * mmu_gather that freed no page tables (flush_tlb_range() itself passes
 * last_level = false and would use VAE1IS).
 */
long ref_flush_tlb_range(const uint64_t *a)
{
	__flush_tlb_range(a[0], a[1], a[2], PAGE_SIZE, 1, 0);
	return 0;
}

/* a: asid, addr */
long ref_flush_tlb_page(const uint64_t *a)
{
	flush_tlb_page(a[0], a[1]);
	return 0;
}

/* a: asid, addr; a CPU with ARM64_WORKAROUND_REPEAT_TLBI */
long ref_flush_tlb_page_repeat(const uint64_t *a)
{
	repeat_tlbi = 1;
	flush_tlb_page(a[0], a[1]);
	repeat_tlbi = 0;
	return 0;
}

/* a: asid */
long ref_flush_tlb_mm(const uint64_t *a)
{
	flush_tlb_mm(a[0]);
	return 0;
}

long ref_flush_tlb_mm_repeat(const uint64_t *a)
{
	repeat_tlbi = 1;
	flush_tlb_mm(a[0]);
	repeat_tlbi = 0;
	return 0;
}

/* a: asid, start, end; a CPU with FEAT_TLBIRANGE */
long ref_flush_tlb_range_r(const uint64_t *a)
{
	__flush_tlb_range(a[0], a[1], a[2], PAGE_SIZE, 1, 1);
	return 0;
}

/* a: start, end */
long ref_flush_tlb_kernel_range(const uint64_t *a)
{
	flush_tlb_kernel_range(a[0], a[1]);
	return 0;
}

/* The range flushes on a CPU with ARM64_WORKAROUND_REPEAT_TLBI. */
long ref_flush_tlb_range_repeat(const uint64_t *a)
{
	repeat_tlbi = 1;
	__flush_tlb_range(a[0], a[1], a[2], PAGE_SIZE, 1, 0);
	repeat_tlbi = 0;
	return 0;
}

long ref_flush_tlb_range_r_repeat(const uint64_t *a)
{
	repeat_tlbi = 1;
	__flush_tlb_range(a[0], a[1], a[2], PAGE_SIZE, 1, 1);
	repeat_tlbi = 0;
	return 0;
}

long ref_flush_tlb_kernel_range_repeat(const uint64_t *a)
{
	repeat_tlbi = 1;
	flush_tlb_kernel_range(a[0], a[1]);
	repeat_tlbi = 0;
	return 0;
}
