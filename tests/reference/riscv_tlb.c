/*
 * Reference for examples/riscv_tlb.inv: Linux arch/riscv/mm/tlbflush.c,
 * the local flushes for one mm as of v6.8 (tlb_flush_all_threshold = 64,
 * local_flush_tlb_range_threshold_asid) with the Svinval patch ("riscv:
 * mm: Add support for Svinval extension", v8, 2025), 4K pages, asid !=
 * FLUSH_TLB_NO_ASID. has_svinval() is the `svinval` variable (what the
 * boot-time alternative answers). The insn-def.h encodings of the
 * Svinval instructions are written as GNU as mnemonics
 * (`.option arch, +svinval`).
 */
#include "kernel.h"

#define PAGE_SIZE 4096UL
#define FLUSH_TLB_MAX_SIZE ((unsigned long)-1)
#define DIV_ROUND_UP(n, d) (((n) + (d)-1) / (d))

static int svinval;
static unsigned long tlb_flush_all_threshold = 64;

#define SVINVAL(insn) ".option push\n\t.option arch, +svinval\n\t" insn "\n\t.option pop"

static inline void local_sfence_inval_ir(void)
{
	__asm__ __volatile__(SVINVAL("sfence.inval.ir") ::: "memory");
}

static inline void local_sfence_w_inval(void)
{
	__asm__ __volatile__(SVINVAL("sfence.w.inval") ::: "memory");
}

static inline void local_sinval_vma(unsigned long vma, unsigned long asid)
{
	__asm__ __volatile__(SVINVAL("sinval.vma %0, %1") : : "r"(vma), "r"(asid) : "memory");
}

static inline void local_flush_tlb_all(void)
{
	__asm__ __volatile__("sfence.vma" : : : "memory");
}

static inline void local_flush_tlb_all_asid(unsigned long asid)
{
	__asm__ __volatile__("sfence.vma x0, %0" : : "r"(asid) : "memory");
}

static inline void local_flush_tlb_page_asid(unsigned long addr, unsigned long asid)
{
	__asm__ __volatile__("sfence.vma %0, %1" : : "r"(addr), "r"(asid) : "memory");
}

static void local_flush_tlb_range_threshold_asid(unsigned long start, unsigned long size,
						 unsigned long stride, unsigned long asid)
{
	unsigned long nr_ptes_in_range = DIV_ROUND_UP(size, stride);
	unsigned long i;

	if (nr_ptes_in_range > tlb_flush_all_threshold) {
		local_flush_tlb_all_asid(asid);
		return;
	}

	if (svinval) {
		local_sfence_w_inval();
		for (i = 0; i < nr_ptes_in_range; ++i) {
			local_sinval_vma(start, asid);
			start += stride;
		}
		local_sfence_inval_ir();
		return;
	}

	for (i = 0; i < nr_ptes_in_range; ++i) {
		local_flush_tlb_page_asid(start, asid);
		start += stride;
	}
}

static inline void local_flush_tlb_range_asid(unsigned long start, unsigned long size,
					      unsigned long stride, unsigned long asid)
{
	if (size <= stride)
		local_flush_tlb_page_asid(start, asid);
	else if (size == FLUSH_TLB_MAX_SIZE)
		local_flush_tlb_all_asid(asid);
	else
		local_flush_tlb_range_threshold_asid(start, size, stride, asid);
}

/* Entry points: the scenario's arguments in order (asid, start, size;
 * asid, addr; asid; none). */
long ref_flush_tlb_range(const uint64_t *a)
{
	svinval = 0;
	local_flush_tlb_range_asid(a[1], a[2], PAGE_SIZE, a[0]);
	return 0;
}

long ref_flush_tlb_range_svinval(const uint64_t *a)
{
	svinval = 1;
	local_flush_tlb_range_asid(a[1], a[2], PAGE_SIZE, a[0]);
	return 0;
}

long ref_flush_tlb_page(const uint64_t *a)
{
	local_flush_tlb_page_asid(a[1], a[0]);
	return 0;
}

long ref_flush_tlb_mm(const uint64_t *a)
{
	local_flush_tlb_all_asid(a[0]);
	return 0;
}

long ref_flush_tlb_all(const uint64_t *a)
{
	(void)a;
	local_flush_tlb_all();
	return 0;
}
