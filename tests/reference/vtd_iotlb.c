/*
 * Reference for examples/vtd_iotlb.inv: Linux 6.1
 * drivers/iommu/intel/iommu.c __iommu_flush_iotlb() for page-selective
 * (DMA_TLB_PSI_FLUSH) and domain-selective (DMA_TLB_DSI_FLUSH)
 * invalidation, transcribed with the kernel's dmar_writeq()/dmar_readq()
 * (writeq/readq, kernel.h). The window passed in is the IOTLB register
 * pair (iommu->reg + ecap_iotlb_offset()). cap_write_drain() is 0 (no DW
 * bit), register_lock (a raw spinlock in normal memory) is left out, and
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

/* a: iotlb base, did, addr, am */
long ref_iommu_flush_iotlb_psi(const uint64_t *a)
{
	return __iommu_flush_iotlb((char *)(uintptr_t)a[0], 0, (u16)a[1], a[2], (unsigned int)a[3],
				   DMA_TLB_PSI_FLUSH);
}

/* a: iotlb base, did */
long ref_iommu_flush_iotlb_dsi(const uint64_t *a)
{
	return __iommu_flush_iotlb((char *)(uintptr_t)a[0], 0, (u16)a[1], 0, 0, DMA_TLB_DSI_FLUSH);
}
