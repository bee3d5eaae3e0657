/*
 * Reference for examples/arm_smmu.inv: Linux 6.1
 * drivers/iommu/arm/arm-smmu/arm-smmu.c stage-1 TLB maintenance of one
 * context bank (AArch64 context format, ARM_SMMU_FEAT_COHERENT_WALK set,
 * no smmu->impl hooks), transcribed with the kernel's accessors
 * (kernel.h). arm_smmu_tlb_sync_context() also takes cb_lock (a spinlock
 * in normal memory) around the sync: left out. __arm_smmu_tlb_sync()
 * spins TLB_SPIN_COUNT reads between udelay() backoffs and only logs a
 * timeout; here it reads until REF_POLL_LIMIT and returns -ETIMEDOUT.
 */
#include "kernel.h"

/* arm-smmu.h */
#define ARM_SMMU_CB_S1_TLBIVA 0x600
#define ARM_SMMU_CB_S1_TLBIASID 0x610
#define ARM_SMMU_CB_TLBSYNC 0x7f0
#define ARM_SMMU_CB_TLBSTATUS 0x7f4
#define ARM_SMMU_sTLBGSTATUS_GSACTIVE (1U << 0)
/* arm-smmu.c: never write a constant 0 (some hypervisors trap wzr). */
#define QCOM_DUMMY_VAL -1

struct cb {
	char *base;
	u16 asid;
};

static void arm_smmu_cb_write(struct cb *cb, int offset, u32 val)
{
	writel_relaxed(val, cb->base + offset);
}
static void arm_smmu_cb_writeq(struct cb *cb, int offset, u64 val)
{
	writeq_relaxed(val, cb->base + offset);
}
static u32 arm_smmu_cb_read(struct cb *cb, int offset)
{
	return readl_relaxed(cb->base + offset);
}

static long __arm_smmu_tlb_sync(struct cb *cb, int sync, int status)
{
	unsigned long reads;

	arm_smmu_cb_write(cb, sync, QCOM_DUMMY_VAL);
	for (reads = 0; reads < REF_POLL_LIMIT; reads++) {
		u32 reg = arm_smmu_cb_read(cb, status);
		if (!(reg & ARM_SMMU_sTLBGSTATUS_GSACTIVE))
			return 0;
		cpu_relax();
	}
	return -ETIMEDOUT;
}

static long arm_smmu_tlb_sync_context(struct cb *cb)
{
	return __arm_smmu_tlb_sync(cb, ARM_SMMU_CB_TLBSYNC, ARM_SMMU_CB_TLBSTATUS);
}

static long arm_smmu_tlb_inv_context_s1(struct cb *cb)
{
	/* The TLBI write may be relaxed: PTEs cleared by this CPU first. */
	wmb();
	arm_smmu_cb_write(cb, ARM_SMMU_CB_S1_TLBIASID, cb->asid);
	return arm_smmu_tlb_sync_context(cb);
}

static void arm_smmu_tlb_inv_range_s1(unsigned long iova, size_t size, size_t granule,
				      struct cb *cb, int reg)
{
	wmb(); /* ARM_SMMU_FEAT_COHERENT_WALK */
	iova >>= 12;
	iova |= (u64)cb->asid << 48;
	do {
		arm_smmu_cb_writeq(cb, reg, iova);
		iova += granule >> 12;
	} while (size -= granule);
}

static struct cb cb_from(const uint64_t *a)
{
	struct cb cb = { (char *)(uintptr_t)a[0], (u16)a[1] };
	return cb;
}

/* a: cb base, asid, iova, size, granule */
long ref_tlb_inv_range_s1(const uint64_t *a)
{
	struct cb cb = cb_from(a);

	arm_smmu_tlb_inv_range_s1(a[2], a[3], a[4], &cb, ARM_SMMU_CB_S1_TLBIVA);
	return 0;
}

/* a: cb base */
long ref_tlb_sync_context(const uint64_t *a)
{
	struct cb cb = { (char *)(uintptr_t)a[0], 0 };

	return arm_smmu_tlb_sync_context(&cb);
}

/* a: cb base, asid */
long ref_tlb_inv_context_s1(const uint64_t *a)
{
	struct cb cb = cb_from(a);

	return arm_smmu_tlb_inv_context_s1(&cb);
}

/*
 * arm_smmu_tlb_inv_walk_s1() (the tlb_flush_walk op). With
 * cfg->flush_walk_prefer_tlbiasid, which arm-smmu-qcom.c sets, it is
 * arm_smmu_tlb_inv_context_s1(); otherwise the TLBIVA range and a sync.
 */
static long arm_smmu_tlb_inv_walk_s1(unsigned long iova, size_t size, size_t granule,
				     struct cb *cb, int prefer_tlbiasid)
{
	if (prefer_tlbiasid)
		return arm_smmu_tlb_inv_context_s1(cb);
	arm_smmu_tlb_inv_range_s1(iova, size, granule, cb, ARM_SMMU_CB_S1_TLBIVA);
	return arm_smmu_tlb_sync_context(cb);
}

/* a: cb base, asid, iova, size, granule */
long ref_tlb_inv_walk_s1(const uint64_t *a)
{
	struct cb cb = cb_from(a);

	return arm_smmu_tlb_inv_walk_s1(a[2], a[3], a[4], &cb, 0);
}

/* a: cb base, asid, iova, size, granule */
long ref_qcom_tlb_inv_walk_s1(const uint64_t *a)
{
	struct cb cb = cb_from(a);

	return arm_smmu_tlb_inv_walk_s1(a[2], a[3], a[4], &cb, 1);
}
