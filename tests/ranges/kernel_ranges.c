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
 *  - AMD: drivers/iommu/amd/iommu.c (6.1) build_inv_iommu_pages and
 *    build_inv_address, iommu_num_pages() from lib/iommu-helper;
 *  - VT-d: drivers/iommu/intel/cache.c (6.11, with the 6.10 fixes
 *    "aligned_pages = 1UL << mask" and MAX_AGAW_PFN_WIDTH)
 *    calculate_psi_aligned_address and cache_tag_flush_iotlb, and
 *    iommu.c (6.1) __iommu_flush_iotlb (register-based, DW when
 *    cap_write_drain), the cap_* accessors of intel/iommu.h.
 *  - SMMUv3: drivers/iommu/arm/arm-smmu-v3/arm-smmu-v3.c (6.1)
 *    __arm_smmu_tlb_inv_range with ARM_SMMU_FEAT_RANGE_INV and the
 *    CMDQ_OP_TLBI_NH_VA layout of arm_smmu_cmdq_build_cmd (VMID 0).
 *  - Book III-E: arch/powerpc/mm/nohash/tlb_low.S (6.1, CONFIG_PPC_BOOK3E_64)
 *    _tlbil_pid, _tlbil_pid_noind, _tlbil_va, _tlbivax_bcast: the MAS6
 *    value and EA their tlbilx/tlbivax receive, instruction by instruction
 *    (slwi, ori, cmpwi/beq, rlwimi on the low word) with the MAS6_* values
 *    of asm/nohash/mmu-e500.h; the arguments are the 64-bit registers.
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

/* AMD */
#define PAGE_MASK (~(PAGE_SIZE - 1))
#define CMD_INV_IOMMU_PAGES 0x03
#define CMD_INV_IOMMU_PAGES_SIZE_MASK 0x01
#define CMD_INV_IOMMU_PAGES_PDE_MASK 0x02
#define CMD_INV_IOMMU_ALL_PAGES_ADDRESS 0x7fffffffffffffffULL
#define DIV_ROUND_UP(n, d) (((n) + (d) - 1) / (d))

static int fls64(unsigned long x)
{
	return x ? 64 - __builtin_clzl(x) : 0;
}

static unsigned long iommu_num_pages(unsigned long addr, unsigned long len,
				     unsigned long io_page_size)
{
	unsigned long size = (addr & (io_page_size - 1)) + len;

	return DIV_ROUND_UP(size, io_page_size);
}

static unsigned long build_inv_address(unsigned long address, unsigned long size)
{
	unsigned long pages, end, msb_diff;

	pages = iommu_num_pages(address, size, PAGE_SIZE);
	if (pages == 1)
		return address & PAGE_MASK;
	end = address + size - 1;
	msb_diff = (unsigned long)(fls64(end ^ address) - 1);
	if (msb_diff > 51)
		address = CMD_INV_IOMMU_ALL_PAGES_ADDRESS;
	else
		address |= (1ull << msb_diff) - 1;
	address &= PAGE_MASK;
	return address | CMD_INV_IOMMU_PAGES_SIZE_MASK;
}

static long amd_inv_pages(unsigned long address, unsigned long size,
			  unsigned long domid, unsigned long pde)
{
	unsigned int data[4];
	unsigned long inv_address = build_inv_address(address, size);
	char name[16];

	memset(data, 0, sizeof(data));
	data[1] |= (unsigned short)domid;
	data[2] = (unsigned int)inv_address;
	data[3] = (unsigned int)(inv_address >> 32);
	data[1] |= (CMD_INV_IOMMU_PAGES & 0x0f) << 28;
	if (pde)
		data[2] |= CMD_INV_IOMMU_PAGES_PDE_MASK;
	for (int i = 0; i < 4; i++) {
		snprintf(name, sizeof(name), "cmd[0x%x]", 4 * i);
		emit(name, data[i]);
	}
	return 0;
}

/* VT-d */
#define VTD_PAGE_SHIFT 12
#define VTD_PAGE_SIZE (1UL << VTD_PAGE_SHIFT)
#define MAX_AGAW_WIDTH 64
#define MAX_AGAW_PFN_WIDTH (MAX_AGAW_WIDTH - VTD_PAGE_SHIFT)
#define ALIGN_DOWN(x, a) ((x) & ~((a) - 1))
#define PAGE_ALIGN(x) (((x) + PAGE_SIZE - 1) & PAGE_MASK)
#define IOVA_PFN(addr) ((addr) >> PAGE_SHIFT)
#define DMA_TLB_IVT (1UL << 63)
#define DMA_TLB_DSI_FLUSH (2UL << 60)
#define DMA_TLB_PSI_FLUSH (3UL << 60)
#define DMA_TLB_DID(id) (((unsigned long)((id) & 0xffff)) << 32)
#define DMA_TLB_WRITE_DRAIN (1UL << 48)
#define cap_write_drain(c) (((c) >> 54) & 1)
#define cap_max_amask_val(c) (((c) >> 48) & 0x3f)
#define cap_pgsel_inv(c) (((c) >> 39) & 1)

static unsigned long aligned_nrpages(unsigned long host_addr, unsigned long size)
{
	host_addr &= ~PAGE_MASK;
	return PAGE_ALIGN(host_addr + size) >> VTD_PAGE_SHIFT;
}

/* __roundup_pow_of_two: 1UL << fls_long(n - 1), undefined for 0. */
static unsigned long roundup_pow_of_two(unsigned long n)
{
	return 1UL << fls64(n - 1);
}

static unsigned long calculate_psi_aligned_address(unsigned long start, unsigned long end,
						   unsigned long *_pages, unsigned long *_mask)
{
	unsigned long pages = aligned_nrpages(start, end - start + 1);
	unsigned long aligned_pages = roundup_pow_of_two(pages);
	unsigned long bitmask = aligned_pages - 1;
	unsigned long mask = (unsigned long)(fls64(aligned_pages) - 1);
	unsigned long pfn = IOVA_PFN(start);

	if (bitmask & pfn) {
		unsigned long end_pfn = pfn + pages - 1, shared_bits;

		shared_bits = ~(pfn ^ end_pfn) & ~bitmask;
		mask = shared_bits ? (unsigned long)__builtin_ctzl(shared_bits) : MAX_AGAW_PFN_WIDTH;
		aligned_pages = 1UL << mask;
	}
	*_pages = aligned_pages;
	*_mask = mask;
	return ALIGN_DOWN(start, VTD_PAGE_SIZE << mask);
}

static void __iommu_flush_iotlb(unsigned long cap, unsigned long did, unsigned long addr,
				unsigned int size_order, unsigned long type)
{
	unsigned long val = 0, val_iva = 0;

	if (type == DMA_TLB_DSI_FLUSH) {
		val = DMA_TLB_DSI_FLUSH | DMA_TLB_IVT | DMA_TLB_DID(did);
	} else {
		val = DMA_TLB_PSI_FLUSH | DMA_TLB_IVT | DMA_TLB_DID(did);
		val_iva = size_order | addr;
	}
	if (cap_write_drain(cap))
		val |= DMA_TLB_WRITE_DRAIN;
	if (val_iva)
		emit("iva", val_iva);
	emit("iotlb", val);
}

/* cap: iommu->cap; ih 0. */
static long vtd_flush_range(unsigned long did, unsigned long start, unsigned long end,
			    unsigned long cap)
{
	unsigned long pages, mask, addr;

	if (start == 0 && end == ~0UL) {
		addr = 0;
		pages = -1;
		mask = MAX_AGAW_PFN_WIDTH;
	} else {
		addr = calculate_psi_aligned_address(start, end, &pages, &mask);
	}
	if (!cap_pgsel_inv(cap) || mask > cap_max_amask_val(cap) || pages == (unsigned long)-1)
		__iommu_flush_iotlb(cap, did, 0, 0, DMA_TLB_DSI_FLUSH);
	else
		__iommu_flush_iotlb(cap, did, addr, (unsigned int)mask, DMA_TLB_PSI_FLUSH);
	return 0;
}

/* SMMUv3 */
#define FIELD_PREP(mask, val) (((unsigned long)(val) << __builtin_ctzll(mask)) & (mask))
#define CMDQ_0_OP GENMASK_ULL(7, 0)
#define CMDQ_TLBI_0_NUM GENMASK_ULL(16, 12)
#define CMDQ_TLBI_RANGE_NUM_MAX 31
#define CMDQ_TLBI_0_SCALE GENMASK_ULL(24, 20)
#define CMDQ_TLBI_0_VMID GENMASK_ULL(47, 32)
#define CMDQ_TLBI_0_ASID GENMASK_ULL(63, 48)
#define CMDQ_TLBI_1_LEAF (1UL << 0)
#define CMDQ_TLBI_1_TTL GENMASK_ULL(9, 8)
#define CMDQ_TLBI_1_TG GENMASK_ULL(11, 10)
#define CMDQ_TLBI_1_VA_MASK GENMASK_ULL(63, 12)
#define CMDQ_OP_TLBI_NH_VA 0x12

struct tlbi_ent {
	unsigned char num, scale;
	unsigned short asid, vmid;
	_Bool leaf;
	unsigned char ttl, tg;
	unsigned long addr;
};

static int ncmds;

static void cmdq_batch_add(const struct tlbi_ent *t)
{
	unsigned long cmd[2] = { 0, 0 };
	char name[32];

	cmd[0] |= FIELD_PREP(CMDQ_0_OP, CMDQ_OP_TLBI_NH_VA);
	cmd[0] |= FIELD_PREP(CMDQ_TLBI_0_VMID, t->vmid);
	cmd[0] |= FIELD_PREP(CMDQ_TLBI_0_NUM, t->num);
	cmd[0] |= FIELD_PREP(CMDQ_TLBI_0_SCALE, t->scale);
	cmd[0] |= FIELD_PREP(CMDQ_TLBI_0_ASID, t->asid);
	cmd[1] |= FIELD_PREP(CMDQ_TLBI_1_LEAF, t->leaf);
	cmd[1] |= FIELD_PREP(CMDQ_TLBI_1_TTL, t->ttl);
	cmd[1] |= FIELD_PREP(CMDQ_TLBI_1_TG, t->tg);
	cmd[1] |= t->addr & CMDQ_TLBI_1_VA_MASK;
	for (int i = 0; i < 2; i++) {
		snprintf(name, sizeof(name), "cmds[0x%x]", 16 * ncmds + 8 * i);
		emit(name, cmd[i]);
	}
	ncmds++;
}

static int ilog2_ul(unsigned long x)
{
	return fls64(x) - 1;
}

static long smmuv3_inv_range(unsigned long asid, unsigned long iova, unsigned long size,
			     unsigned long granule, unsigned long pgsize_bitmap,
			     unsigned long leaf)
{
	unsigned long end = iova + size, num_pages = 0, tg = 0;
	unsigned long inv_range = granule;
	struct tlbi_ent cmd = { .asid = (unsigned short)asid, .leaf = leaf != 0 };

	ncmds = 0;
	if (!size)
		return 0;
	tg = (unsigned long)__builtin_ctzl(pgsize_bitmap);
	num_pages = size >> tg;
	cmd.tg = (unsigned char)((tg - 10) / 2);
	if (cmd.leaf)
		cmd.ttl = (unsigned char)(4 - ((ilog2_ul(granule) - 3) / (tg - 3)));
	else if ((num_pages & CMDQ_TLBI_RANGE_NUM_MAX) == 1)
		num_pages++;
	while (iova < end) {
		unsigned long scale, num;

		/* The kernel would spin here: not an input the test gives. */
		if (ncmds == 64 || !num_pages)
			return 1000;
		scale = (unsigned long)__builtin_ctzl(num_pages);
		cmd.scale = (unsigned char)scale;
		num = (num_pages >> scale) & CMDQ_TLBI_RANGE_NUM_MAX;
		cmd.num = (unsigned char)(num - 1);
		inv_range = num << (scale + tg);
		num_pages -= num << scale;
		cmd.addr = iova;
		cmdq_batch_add(&cmd);
		iova += inv_range;
	}
	return ncmds;
}

/* Book III-E. The 32-bit rotate-and-mask instructions on a 64-bit
 * register: the low word rotated, replicated in both halves (ROTL32), under
 * MASK(mb + 32, me + 32) (Power ISA Book I, rlwinm/rlwimi). */
static unsigned long rotl32(unsigned long x, unsigned n)
{
	unsigned int w = (unsigned int)x;
	unsigned int r = n ? (w << n) | (w >> (32 - n)) : w;

	return ((unsigned long)r << 32) | r;
}

static unsigned long mask32(unsigned mb, unsigned me)
{
	/* Bits mb+32..me+32 in IBM numbering, mb <= me here. */
	return (~0UL >> (mb + 32)) & (~0UL << (31 - me));
}

static unsigned long rlwinm(unsigned long rs, unsigned sh, unsigned mb, unsigned me)
{
	return rotl32(rs, sh) & mask32(mb, me);
}

static unsigned long rlwimi(unsigned long ra, unsigned long rs, unsigned sh, unsigned mb,
			    unsigned me)
{
	unsigned long m = mask32(mb, me);

	return (rotl32(rs, sh) & m) | (ra & ~m);
}

#define MAS6_SPID_SHIFT 16
#define MAS6_ISIZE_SHIFT 7
#define MAS6_ISIZE_MASK 0x00000f80 /* MB 20, ME 24 */
#define MAS6_SIND 0x00000002 /* MB 30, ME 30 */
#define MAS6_SIND_SHIFT 1

/* slwi rA,rS,n = rlwinm rA,rS,n,0,31-n */
#define slwi(x, n) rlwinm((x), (n), 0, 31 - (n))

/* _tlbil_va / _tlbivax_bcast: r3 = address, r4 = pid, r5 = tsize, r6 = ind. */
static unsigned long book3e_mas6_va(unsigned long r4, unsigned long r5, unsigned long r6)
{
	r4 = slwi(r4, MAS6_SPID_SHIFT);
	r4 = rlwimi(r4, r5, MAS6_ISIZE_SHIFT, 20, 24);
	if ((int)(unsigned int)r6 != 0) /* cmpwi cr0,r6,0; beq 1f */
		r4 = rlwimi(r4, r6, MAS6_SIND_SHIFT, 30, 30);
	return r4; /* mtspr SPRN_MAS6,r4 */
}

static long book3e(const char *name, const unsigned long *a)
{
	if (!strcmp(name, "book3e_tlbil_pid")) {
		/* slwi r4,r3,MAS6_SPID_SHIFT; mtspr; PPC_TLBILX_PID(0,R0) */
		outlen += (size_t)snprintf(out + outlen, sizeof(out) - outlen, "tlbilx1=%lx ",
					   slwi(a[0], MAS6_SPID_SHIFT));
	} else if (!strcmp(name, "book3e_tlbil_pid_noind")) {
		/* slwi r4,r3,MAS6_SPID_SHIFT; ori r4,r4,MAS6_SIND */
		outlen += (size_t)snprintf(out + outlen, sizeof(out) - outlen, "tlbilx1=%lx ",
					   slwi(a[0], MAS6_SPID_SHIFT) | MAS6_SIND);
	} else if (!strcmp(name, "book3e_tlbil_va")) {
		/* PPC_TLBILX_VA(0,R3): EA = r3 */
		outlen += (size_t)snprintf(out + outlen, sizeof(out) - outlen, "tlbilx3=%lx,%lx ",
					   a[0], book3e_mas6_va(a[1], a[2], a[3]));
	} else {
		/* PPC_TLBIVAX(0,R3) */
		outlen += (size_t)snprintf(out + outlen, sizeof(out) - outlen, "tlbivax=%lx,%lx ",
					   a[0], book3e_mas6_va(a[1], a[2], a[3]));
	}
	return 0;
}

int main(void)
{
	char name[64];
	unsigned long a[6];

	while (scanf("%63s", name) == 1) {
		long ret;

		int n = !strncmp(name, "book3e_tlbil_pid", 16) ? 1 :
			!strncmp(name, "book3e_", 7) ? 4 :
			!strcmp(name, "amd_inv_pages") ? 4 :
			!strcmp(name, "vtd_flush_range") ? 4 :
			!strcmp(name, "smmuv3_inv_range") ? 6 : 3;

		for (int i = 0; i < n; i++)
			if (scanf("%lx", &a[i]) != 1)
				return 2;
		outlen = 0;
		out[0] = 0;
		if (!strcmp(name, "arm64_69"))
			ret = arm64_69(a[0], a[1], a[2]);
		else if (!strcmp(name, "arm64_510"))
			ret = arm64_510(a[0], a[1], a[2]);
		else if (!strcmp(name, "amd_inv_pages"))
			ret = amd_inv_pages(a[0], a[1], a[2], a[3]);
		else if (!strcmp(name, "smmuv3_inv_range"))
			ret = smmuv3_inv_range(a[0], a[1], a[2], a[3], a[4], a[5]);
		else if (!strcmp(name, "vtd_flush_range"))
			ret = vtd_flush_range(a[0], a[1], a[2], a[3]);
		else if (!strncmp(name, "book3e_", 7))
			ret = book3e(name, a);
		else
			return 3;
		printf("%sret=%lx\n", out, (unsigned long)ret);
	}
	return 0;
}
