/*
 * C stand-in for the code shootdown generates from examples/vtd_qi.inv:
 * VT-d queued invalidation, one producer (the caller holds the queue, as
 * the kernel's qi->q_lock), 128-bit descriptors, transcribed from Linux 6.1
 * drivers/iommu/intel/:
 *  - dmar.c qi_flush_iotlb and qi_flush_context: the descriptor each
 *    builds (QI_IOTLB_* / QI_CC_* of iommu.h; DR/DW from cap_read_drain /
 *    cap_write_drain);
 *  - dmar.c qi_submit_sync: the descriptor at free_head, desc_status =
 *    QI_IN_USE, the wait descriptor QI_IWD_STATUS_DATA(QI_DONE) |
 *    QI_IWD_STATUS_WRITE | QI_IWD_TYPE with the status word's physical
 *    address, both copied into the ring, then one writel() of the new
 *    tail to IQT (no barrier: x86 keeps stores in order), then a poll of
 *    the status word until QI_DONE;
 *  - iommu.c iommu_flush_iotlb_psi (second-level domain): mask =
 *    ilog2(__roundup_pow_of_two(pages)); an address not aligned to it gets
 *    the shared-bits mask; DSI when the IOMMU has no PSI or the mask
 *    exceeds cap_max_amask_val; intel_flush_iotlb_all (the whole space):
 *    DSI.
 * Deviations, each what the spec does: the address of a PSI is aligned
 * down to 2^mask pages (6.11's calculate_psi_aligned_address; 6.1 passes
 * pfn << 12 unaligned, and the hardware, and QEMU, ignore the bits below
 * the mask); no free-shared-bits mask of 64 (6.1: BITS_PER_LONG; 6.11: 52;
 * both a DSI); ih = start & 1 (the 2025 qi_desc_iotlb fix; 6.1 always 0);
 * where the kernel keeps free_head/free_cnt in memory, this reads IQT once
 * at entry and IQH when the ring looks full; the polls are bounded (-110).
 *
 * SD_BROKEN selects a deliberately wrong subject for the negative controls
 * of tests/vtd_qemu.rs:
 *   1 no wait descriptor (only the invalidation is queued)
 *   2 PSI address mask one too large
 *   3 IQT written before the wait descriptor is in the ring
 *   4 DR/DW never set
 *   5 a reserved bit (qw0 bit 8) set in the IOTLB descriptor
 *   6 the wait descriptor's status address one word off
 */
#ifndef SD_BROKEN
#define SD_BROKEN 0
#endif

typedef unsigned long u64;
typedef unsigned int u32;
typedef unsigned short u16;
typedef unsigned char u8;

#define DMAR_IQH_REG 0x80
#define DMAR_IQT_REG 0x88

/* iommu.h (6.1) */
#define VTD_PAGE_SHIFT 12
#define VTD_PAGE_SIZE (1UL << VTD_PAGE_SHIFT)
#define VTD_PAGE_MASK (((u64)-1) << VTD_PAGE_SHIFT)
#define DMA_TLB_FLUSH_GRANU_OFFSET 60
#define DMA_TLB_DSI_FLUSH (((u64)2) << 60)
#define DMA_TLB_PSI_FLUSH (((u64)3) << 60)
#define DMA_CCMD_INVL_GRANU_OFFSET 61
#define cap_read_drain(c) (((c) >> 55) & 1)
#define cap_write_drain(c) (((c) >> 54) & 1)
#define cap_max_amask_val(c) (((c) >> 48) & 0x3f)
#define cap_pgsel_inv(c) (((c) >> 39) & 1)
enum { QI_FREE, QI_IN_USE, QI_DONE, QI_ABORT };
#define QI_CC_TYPE 0x1
#define QI_IOTLB_TYPE 0x2
#define QI_IWD_TYPE 0x5
#define QI_IWD_STATUS_DATA(d) (((u64)d) << 32)
#define QI_IWD_STATUS_WRITE (((u64)1) << 5)
#define QI_IOTLB_DID(did) (((u64)did) << 16)
#define QI_IOTLB_DR(dr) (((u64)dr) << 7)
#define QI_IOTLB_DW(dw) (((u64)dw) << 6)
#define QI_IOTLB_GRAN(gran) (((u64)gran) >> (DMA_TLB_FLUSH_GRANU_OFFSET - 4))
#define QI_IOTLB_ADDR(addr) (((u64)addr) & VTD_PAGE_MASK)
#define QI_IOTLB_IH(ih) (((u64)ih) << 6)
#define QI_IOTLB_AM(am) (((u8)am) & 0x3f)
#define QI_CC_FM(fm) (((u64)fm) << 48)
#define QI_CC_SID(sid) (((u64)sid) << 32)
#define QI_CC_DID(did) (((u64)did) << 16)
#define QI_CC_GRAN(gran) (((u64)gran) >> (DMA_CCMD_INVL_GRANU_OFFSET - 4))

#define MAX_AGAW_PFN_WIDTH 52
#define SD_POLL_LIMIT 100000
#define SD_ETIMEDOUT 110

struct qi_desc {
	u64 qw0, qw1;
};

static inline u32 readl(volatile unsigned char *reg, u32 off)
{
	return *(volatile u32 *)(reg + off);
}
static inline void writel(u32 v, volatile unsigned char *reg, u32 off)
{
	*(volatile u32 *)(reg + off) = v;
}

static u32 free_space(u32 head, u32 tail, u32 n)
{
	return (head + n - tail - 1) % n; /* entries; one kept empty */
}

/* qi_submit_sync(iommu, desc, 1, 0) for one producer. */
static long qi_submit_sync(void *dmar, unsigned long *ring, unsigned long long log2n,
			   const struct qi_desc *desc, unsigned int *status, u64 status_phys)
{
	volatile unsigned char *reg = dmar;
	volatile unsigned int *st = status;
	u32 n = 1u << log2n, index, wait_index, i;
	volatile u64 *q = (volatile u64 *)ring;
	struct qi_desc wait_desc;

	index = (readl(reg, DMAR_IQT_REG) >> 4) % n;
	for (i = 0; free_space(readl(reg, DMAR_IQH_REG) >> 4, index, n) < 2; i++)
		if (i >= SD_POLL_LIMIT)
			return -SD_ETIMEDOUT;
	wait_index = (index + 1) % n;

	q[2 * index] = desc->qw0;
	q[2 * index + 1] = desc->qw1;
	*st = QI_IN_USE; /* desc_status[wait_index] */

	wait_desc.qw0 = QI_IWD_STATUS_DATA(QI_DONE) | QI_IWD_STATUS_WRITE | QI_IWD_TYPE;
	wait_desc.qw1 = status_phys;
#if SD_BROKEN == 6
	wait_desc.qw1 += 4;
#endif
#if SD_BROKEN == 1
	(void)wait_desc;
	wait_index = index;
#elif SD_BROKEN == 3
	/* the tail moves before the wait descriptor is written */
	writel(((wait_index + 1) % n) << 4, reg, DMAR_IQT_REG);
	q[2 * wait_index] = wait_desc.qw0;
	q[2 * wait_index + 1] = wait_desc.qw1;
#else
	q[2 * wait_index] = wait_desc.qw0;
	q[2 * wait_index + 1] = wait_desc.qw1;
#endif
	/* update the HW tail register indicating the presence of new descriptors */
	writel(((wait_index + 1) % n) << 4, reg, DMAR_IQT_REG);

	for (i = 0; *st != QI_DONE; i++)
		if (i >= SD_POLL_LIMIT)
			return -SD_ETIMEDOUT;
	return 0;
}

/* qi_flush_iotlb (dmar.c 6.1), ih as the 2025 qi_desc_iotlb takes it. */
static long qi_flush_iotlb(void *dmar, unsigned long *ring, unsigned long long log2n, u64 cap,
			   u16 did, u64 addr, unsigned int size_order, u64 type,
			   unsigned int *status, u64 status_phys)
{
	u8 dw = 0, dr = 0;
	struct qi_desc desc;
	int ih = addr & 1;

	if (cap_write_drain(cap))
		dw = 1;
	if (cap_read_drain(cap))
		dr = 1;
#if SD_BROKEN == 4
	dw = dr = 0;
#endif
	desc.qw0 = QI_IOTLB_DID(did) | QI_IOTLB_DR(dr) | QI_IOTLB_DW(dw) | QI_IOTLB_GRAN(type) |
		   QI_IOTLB_TYPE;
#if SD_BROKEN == 5
	desc.qw0 |= 1UL << 8;
#endif
	desc.qw1 = QI_IOTLB_ADDR(addr) | QI_IOTLB_IH(ih) | QI_IOTLB_AM(size_order);
	return qi_submit_sync(dmar, ring, log2n, &desc, status, status_phys);
}

static int fls64(u64 x)
{
	return x ? 64 - __builtin_clzl(x) : 0;
}

/* aligned_nrpages (iommu.c 6.1) */
static unsigned long aligned_nrpages(unsigned long host_addr, unsigned long size)
{
	host_addr &= ~VTD_PAGE_MASK;
	return ((host_addr + size + VTD_PAGE_SIZE - 1) & VTD_PAGE_MASK) >> VTD_PAGE_SHIFT;
}

/* iommu_flush_iotlb_psi / intel_flush_iotlb_all (iommu.c 6.1) behind the
 * spec's interface: [start, end], end inclusive. */
long sd_qi_flush_iotlb(void *dmar, unsigned long *qi_ring, unsigned long long qi_log2n,
		       unsigned long long did, unsigned long long start, unsigned long long end,
		       unsigned long long cap, unsigned long long ih, unsigned int *status,
		       unsigned long long status_phys)
{
	unsigned long pfn = start >> VTD_PAGE_SHIFT, pages, aligned_pages, mask;

	if (start == 0 && end == ~0UL) /* intel_flush_iotlb_all */
		return qi_flush_iotlb(dmar, qi_ring, qi_log2n, cap, did, 0, 0, DMA_TLB_DSI_FLUSH,
				      status, status_phys);
	pages = aligned_nrpages(start, end - start + 1);
	aligned_pages = 1UL << fls64(pages - 1); /* __roundup_pow_of_two */
	mask = fls64(aligned_pages) - 1;         /* ilog2 */
	if ((aligned_pages - 1) & pfn) {
		unsigned long end_pfn = pfn + pages - 1, shared_bits;

		shared_bits = ~(pfn ^ end_pfn) & ~(aligned_pages - 1);
		mask = shared_bits ? (unsigned long)__builtin_ctzl(shared_bits) : MAX_AGAW_PFN_WIDTH;
	}
#if SD_BROKEN == 2
	mask += 1;
#endif
	if (!cap_pgsel_inv(cap) || mask > cap_max_amask_val(cap))
		return qi_flush_iotlb(dmar, qi_ring, qi_log2n, cap, did, 0, 0, DMA_TLB_DSI_FLUSH,
				      status, status_phys);
	return qi_flush_iotlb(dmar, qi_ring, qi_log2n, cap, did,
			      ((pfn << VTD_PAGE_SHIFT) & ~((VTD_PAGE_SIZE << mask) - 1)) | (ih & 1),
			      mask, DMA_TLB_PSI_FLUSH, status, status_phys);
}

/* qi_flush_context (dmar.c 6.1); gran is the type >> 61 (1 global, 2
 * domain, 3 device). */
long sd_qi_flush_context(void *dmar, unsigned long *qi_ring, unsigned long long qi_log2n,
			 unsigned long long did, unsigned long long sid, unsigned long long fm,
			 unsigned long long gran, unsigned int *status,
			 unsigned long long status_phys)
{
	struct qi_desc desc;
	u64 type = (u64)gran << DMA_CCMD_INVL_GRANU_OFFSET;

	desc.qw0 = QI_CC_FM((u8)fm) | QI_CC_SID((u16)sid) | QI_CC_DID((u16)did) |
		   QI_CC_GRAN(type) | QI_CC_TYPE;
	desc.qw1 = 0;
	return qi_submit_sync(dmar, qi_ring, qi_log2n, &desc, status, status_phys);
}
