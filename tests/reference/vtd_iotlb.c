/*
 * Reference for examples/vtd_iotlb.inv: Linux 6.1
 * drivers/iommu/intel/iommu.c __iommu_flush_iotlb() for page-selective
 * (DMA_TLB_PSI_FLUSH) and domain-selective (DMA_TLB_DSI_FLUSH)
 * invalidation, transcribed with the kernel's dmar_writeq()/dmar_readq()
 * (writeq/readq, kernel.h). The window passed in is the IOTLB register
 * pair (iommu->reg + ecap_iotlb_offset()); `cap` is iommu->cap.
 * register_lock (a raw spinlock in normal memory) is left out, and
 * IOMMU_WAIT_OP gives up after REF_POLL_LIMIT reads with -ETIMEDOUT
 * instead of panicking after DMAR_OPERATION_TIMEOUT cycles. The
 * IAIG/IIRG check after the wait only logs: left out.
 */
#include "kernel.h"

/* drivers/iommu/intel/iommu.h */
#define DMA_TLB_DSI_FLUSH (((u64)2) << 60)
#define DMA_TLB_PSI_FLUSH (((u64)3) << 60)
#define DMA_TLB_WRITE_DRAIN (((u64)1) << 48)
#define DMA_TLB_DID(id) (((u64)((id)&0xffff)) << 32)
#define DMA_TLB_IVT (((u64)1) << 63)
#define dmar_readq(a) readq(a)
#define dmar_writeq(a, v) writeq(v, a)
#define cap_write_drain(c) (((c) >> 54) & 1)
#define cap_max_amask_val(c) (((c) >> 48) & 0x3f)
#define cap_pgsel_inv(c) (((c) >> 39) & 1)

static long __iommu_flush_iotlb(char *reg, u64 cap, u16 did, u64 addr, unsigned int size_order,
				u64 type)
{
	u64 val = 0, val_iva = 0;
	unsigned long reads = 0;

	switch (type) {
	case DMA_TLB_DSI_FLUSH:
		val = DMA_TLB_DSI_FLUSH | DMA_TLB_IVT | DMA_TLB_DID(did);
		break;
	case DMA_TLB_PSI_FLUSH:
		val = DMA_TLB_PSI_FLUSH | DMA_TLB_IVT | DMA_TLB_DID(did);
		val_iva = size_order | addr; /* IH comes in the address */
		break;
	}
	if (cap_write_drain(cap))
		val |= DMA_TLB_WRITE_DRAIN;

	if (val_iva)
		dmar_writeq(reg, val_iva);
	dmar_writeq(reg + 8, val);

	/* IOMMU_WAIT_OP(iommu, tlb_offset + 8, dmar_readq, !(val & IVT), val) */
	for (;;) {
		val = dmar_readq(reg + 8);
		if (!(val & DMA_TLB_IVT))
			break;
		if (++reads == REF_POLL_LIMIT)
			return -ETIMEDOUT;
		cpu_relax();
	}
	return 0;
}

/* a: iotlb base, did, addr, am, cap */
long ref_iommu_flush_iotlb_psi(const uint64_t *a)
{
	return __iommu_flush_iotlb((char *)(uintptr_t)a[0], a[4], (u16)a[1], a[2],
				   (unsigned int)a[3], DMA_TLB_PSI_FLUSH);
}

/* a: iotlb base, did, cap */
long ref_iommu_flush_iotlb_dsi(const uint64_t *a)
{
	return __iommu_flush_iotlb((char *)(uintptr_t)a[0], a[2], (u16)a[1], 0, 0,
				   DMA_TLB_DSI_FLUSH);
}

/*
 * Linux >= 6.11 drivers/iommu/intel/cache.c: cache_tag_flush_range()'s
 * mask (calculate_psi_aligned_address(), with the 6.10 fixes) and
 * cache_tag_flush_iotlb()'s PSI or DSI choice, register-based, ih 0.
 * cache_tag_flush_iotlb() reads PSI and the maximum mask from iommu->cap.
 */
#define VTD_PAGE_SHIFT 12
#define VTD_PAGE_SIZE (1UL << VTD_PAGE_SHIFT)
#define MAX_AGAW_PFN_WIDTH (64 - VTD_PAGE_SHIFT)

/* fls_long(): 0 for 0, as the kernel's (the builtin is undefined there) */
static unsigned long fls_long(unsigned long x)
{
	return x ? 64 - (unsigned long)__builtin_clzl(x) : 0;
}

static unsigned long aligned_nrpages(unsigned long host_addr, unsigned long size)
{
	host_addr &= VTD_PAGE_SIZE - 1;
	return ((host_addr + size + VTD_PAGE_SIZE - 1) & ~(VTD_PAGE_SIZE - 1)) >> VTD_PAGE_SHIFT;
}

static unsigned long calculate_psi_aligned_address(unsigned long start, unsigned long end,
						   unsigned long *_pages, unsigned long *_mask)
{
	unsigned long pages = aligned_nrpages(start, end - start + 1);
	/* __roundup_pow_of_two(): 1UL << fls_long(n - 1) */
	unsigned long aligned_pages = 1UL << fls_long(pages - 1);
	unsigned long bitmask = aligned_pages - 1;
	unsigned long mask = fls_long(aligned_pages) - 1; /* ilog2() */
	unsigned long pfn = start >> VTD_PAGE_SHIFT;

	if (bitmask & pfn) {
		unsigned long end_pfn = pfn + pages - 1, shared_bits;

		shared_bits = ~(pfn ^ end_pfn) & ~bitmask;
		mask = shared_bits ? (unsigned long)__builtin_ctzl(shared_bits) : MAX_AGAW_PFN_WIDTH;
		aligned_pages = 1UL << mask;
	}
	*_pages = aligned_pages;
	*_mask = mask;
	return start & ~((VTD_PAGE_SIZE << mask) - 1);
}

/* a: iotlb base, did, start, end, cap */
long ref_iotlb_flush_range(const uint64_t *a)
{
	char *reg = (char *)(uintptr_t)a[0];
	unsigned long start = a[2], end = a[3], pages, mask, addr;

	if (start == 0 && end == ~0UL) {
		addr = 0;
		pages = -1;
		mask = MAX_AGAW_PFN_WIDTH;
	} else {
		addr = calculate_psi_aligned_address(start, end, &pages, &mask);
	}
	if (!cap_pgsel_inv(a[4]) || mask > cap_max_amask_val(a[4]) || pages == (unsigned long)-1)
		return __iommu_flush_iotlb(reg, a[4], (u16)a[1], 0, 0, DMA_TLB_DSI_FLUSH);
	return __iommu_flush_iotlb(reg, a[4], (u16)a[1], addr, (unsigned int)mask,
				   DMA_TLB_PSI_FLUSH);
}
