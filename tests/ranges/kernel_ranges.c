// SPDX-License-Identifier: GPL-2.0-only
/*
 * C transcriptions of the kernel's range decompositions, the oracle of
 * tests/ranges.rs. Each keeps the kernel's types (int num and scale,
 * unsigned long pages) and control flow; __tlbi() records the operation
 * instead of issuing it. Sources (facts only, transcribed):
 *  - arm64 >= 6.9: arch/arm64/include/asm/tlbflush.h __flush_tlb_range_nosync
 *    with __flush_tlb_range_op, __TLBI_RANGE_NUM clamped by min(),
 *    system_supports_tlb_range() true, LPA2 and KPTI off, stride PAGE_SIZE,
 *    last_level false, tlb_level 0;
 *  - arm64 5.10 .. 6.8: the same file in linux-source-6.1, __flush_tlb_range.
 *
 * stdin: lines "NAME ARG..." in hex; stdout: one line per input, the ops
 * as "op=operand" in hex, then "ret=VALUE".
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PAGE_SHIFT 12
#define PAGE_SIZE (1UL << PAGE_SHIFT)
#define GENMASK_ULL(h, l) (((~0ULL) << (l)) & (~0ULL >> (63 - (h))))
#define round_down(x, y) ((x) & ~((y) - 1))
#define round_up(x, y) ((((x) - 1) | ((y) - 1)) + 1)

static char out[1 << 16];
static size_t outlen;

static void emit(const char *op, unsigned long v)
{
	outlen += (size_t)snprintf(out + outlen, sizeof(out) - outlen, "%s=%lx ", op, v);
}

#define __tlbi(op, arg) emit(#op, (arg))

static unsigned long __TLBI_VADDR(unsigned long addr, unsigned long asid)
{
	unsigned long ta = addr >> 12;

	ta &= GENMASK_ULL(43, 0);
	ta |= asid << 48;
	return ta;
}

/* 4K granule: TG = 1; ttl 0 (level unknown). */
static unsigned long __TLBI_VADDR_RANGE(unsigned long addr, unsigned long asid,
					int scale, int num, int ttl)
{
	unsigned long ta = addr >> PAGE_SHIFT;

	ta &= GENMASK_ULL(36, 0);
	ta |= (unsigned long)ttl << 37;
	ta |= (unsigned long)num << 39;
	ta |= (unsigned long)scale << 44;
	ta |= 1UL << 46;
	ta |= asid << 48;
	return ta;
}

#define __TLBI_RANGE_PAGES(num, scale) ((unsigned long)((num) + 1) << (5 * (scale) + 1))
#define MAX_TLBI_RANGE_PAGES __TLBI_RANGE_PAGES(31, 3)

/* 6.9+: clamp to what NUM 31 at this scale covers. */
static int range_num_69(unsigned long pages, int scale)
{
	unsigned long lim = __TLBI_RANGE_PAGES(31, scale);
	int __pages = (int)(pages < lim ? pages : lim);

	return (__pages >> (5 * scale + 1)) - 1;
}

/* 5.10 .. 6.8 */
#define TLBI_RANGE_MASK GENMASK_ULL(4, 0)
#define __TLBI_RANGE_NUM_510(pages, scale) ((int)((((pages) >> (5 * (scale) + 1)) & TLBI_RANGE_MASK) - 1))

static void flush_tlb_mm(unsigned long asid)
{
	__tlbi(aside1is, __TLBI_VADDR(0, asid));
}

static long arm64_69(unsigned long asid, unsigned long start, unsigned long end)
{
	unsigned long stride = PAGE_SIZE, pages;

	start = round_down(start, stride);
	end = round_up(end, stride);
	pages = (end - start) >> PAGE_SHIFT;
	if (pages > MAX_TLBI_RANGE_PAGES) {
		flush_tlb_mm(asid);
		return 0;
	}
	{
		unsigned long __flush_start = start;
		unsigned long __flush_pages = pages;
		int num = 0;
		int scale = 3;
		unsigned long addr;

		while (__flush_pages > 0) {
			if (__flush_pages == 1) {
				addr = __TLBI_VADDR(__flush_start, asid);
				__tlbi(vae1is, addr);
				__flush_start += stride;
				__flush_pages -= stride >> PAGE_SHIFT;
				continue;
			}
			num = range_num_69(__flush_pages, scale);
			if (num >= 0) {
				addr = __TLBI_VADDR_RANGE(__flush_start, asid, scale, num, 0);
				__tlbi(rvae1is, addr);
				__flush_start += __TLBI_RANGE_PAGES(num, scale) << PAGE_SHIFT;
				__flush_pages -= __TLBI_RANGE_PAGES(num, scale);
			}
			scale--;
		}
	}
	return 0;
}

static long arm64_510(unsigned long asid, unsigned long start, unsigned long end)
{
	unsigned long stride = PAGE_SIZE, pages, addr;
	int num = 0;
	int scale = 0;

	start = round_down(start, stride);
	end = round_up(end, stride);
	pages = (end - start) >> PAGE_SHIFT;
	if (pages >= MAX_TLBI_RANGE_PAGES) {
		flush_tlb_mm(asid);
		return 0;
	}
	while (pages > 0) {
		if (pages % 2 == 1) {
			addr = __TLBI_VADDR(start, asid);
			__tlbi(vae1is, addr);
			start += stride;
			pages -= stride >> PAGE_SHIFT;
			continue;
		}
		num = __TLBI_RANGE_NUM_510(pages, scale);
		if (num >= 0) {
			addr = __TLBI_VADDR_RANGE(start, asid, scale, num, 0);
			__tlbi(rvae1is, addr);
			start += __TLBI_RANGE_PAGES(num, scale) << PAGE_SHIFT;
			pages -= __TLBI_RANGE_PAGES(num, scale);
		}
		scale++;
	}
	return 0;
}

int main(void)
{
	char name[64];
	unsigned long a[6];

	while (scanf("%63s", name) == 1) {
		long ret;

		for (int i = 0; i < 3; i++)
			if (scanf("%lx", &a[i]) != 1)
				return 2;
		outlen = 0;
		out[0] = 0;
		if (!strcmp(name, "arm64_69"))
			ret = arm64_69(a[0], a[1], a[2]);
		else if (!strcmp(name, "arm64_510"))
			ret = arm64_510(a[0], a[1], a[2]);
		else
			return 3;
		printf("%sret=%lx\n", out, (unsigned long)ret);
	}
	return 0;
}
