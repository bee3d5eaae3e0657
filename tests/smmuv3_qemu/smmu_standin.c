/*
 * C stand-in for the code shootdown generates from examples/smmuv3_cmdq.inv:
 * SMMUv3 command-queue TLB invalidation, single producer (the caller
 * serialises), as Linux 6.1 does it in drivers/iommu/arm/arm-smmu-v3/
 * arm-smmu-v3.c for a stage-1 domain without ARM_SMMU_FEAT_RANGE_INV:
 * __arm_smmu_tlb_inv_range() adds one CMD_TLBI_NH_VA per granule step from
 * iova to a batch, arm_smmu_cmdq_batch_add() issues the batch every
 * CMDQ_BATCH_ENTRIES (64) commands, arm_smmu_cmdq_batch_submit() issues the
 * rest with a CMD_SYNC, and arm_smmu_cmdq_issue_cmdlist() makes the entries
 * visible with dma_wmb() (dmb oshst) before it writes PROD with
 * writel_relaxed(). The command words are arm_smmu_cmdq_build_cmd()'s.
 *
 * The queue: 2^log2n entries of 16 bytes at `ring`; PROD (0x98) and CONS
 * (0x9c) hold an index with the wrap flag at bit log2n, CONS.ERR is
 * [30:24]. Where the kernel keeps a shared cached llq, this keeps a local
 * copy of PROD and CONS read at entry; when the ring looks full it
 * publishes what it has written and polls CONS until there is room.
 *
 * SD_BROKEN selects a deliberately wrong subject for the negative controls
 * of tests/smmuv3_qemu.rs:
 *   1 wrong opcode (CMD_TLBI_NH_VAA, 0x13, instead of CMD_TLBI_NH_VA)
 *   2 ADDR one page too high
 *   3 no barrier before the PROD write
 *   4 a barrier and a PROD write after every entry
 *   5 the last granule of a range is not invalidated
 */
#ifndef SD_BROKEN
#define SD_BROKEN 0
#endif

typedef unsigned long u64;
typedef unsigned int u32;

#define SMMU_CMDQ_PROD 0x98
#define SMMU_CMDQ_CONS 0x9c

/* arm-smmu-v3.h */
#define CMDQ_OP_TLBI_NH_ASID 0x11
#define CMDQ_OP_TLBI_NH_VA 0x12
#define CMDQ_OP_CMD_SYNC 0x46
#define CMDQ_TLBI_0_ASID_SHIFT 48     /* GENMASK_ULL(63, 48) */
#define CMDQ_TLBI_1_LEAF 1UL          /* (1UL << 0) */
#define CMDQ_TLBI_1_VA_MASK (~0xfffUL) /* GENMASK_ULL(63, 12) */
#define CMDQ_SYNC_0_CS_SHIFT 12       /* GENMASK_ULL(13, 12) */
#define CMDQ_SYNC_0_CS_NONE 0UL
#define CMDQ_SYNC_0_CS_SEV 2UL
#define CMDQ_SYNC_0_MSH_SHIFT 22      /* GENMASK_ULL(23, 22) */
#define CMDQ_SYNC_0_MSIATTR_SHIFT 24  /* GENMASK_ULL(27, 24) */
#define ARM_SMMU_SH_ISH 3UL
#define ARM_SMMU_MEMATTR_OIWB 0xfUL
#define CMDQ_BATCH_ENTRIES 64

#define SD_POLL_LIMIT 100000
#define SD_ETIMEDOUT 110

#if SD_BROKEN == 1
#define SD_OP_VA 0x13
#else
#define SD_OP_VA CMDQ_OP_TLBI_NH_VA
#endif
#if SD_BROKEN == 2
#define SD_ADDR_SKEW 0x1000UL
#else
#define SD_ADDR_SKEW 0UL
#endif
#if SD_BROKEN == 4
#define SD_BATCH 1
#else
#define SD_BATCH CMDQ_BATCH_ENTRIES
#endif

struct sd_q {
	volatile unsigned char *smmu;
	u64 *ring;
	u32 log2n;
	u32 wim; /* wrap | index bits */
	u32 prod, cons, published, batch;
};

static inline u32 mmio_read32(volatile unsigned char *smmu, u32 off)
{
	u32 v;
	__asm__ volatile("ldr %w0, [%1]" : "=r"(v) : "r"(smmu + off) : "memory");
	return v;
}

static inline void mmio_write32(volatile unsigned char *smmu, u32 off, u32 v)
{
	__asm__ volatile("str %w0, [%1]" : : "r"(v), "r"(smmu + off) : "memory");
}

/* dma_wmb() on arm64 */
static inline void dma_wmb(void)
{
#if SD_BROKEN != 3
	__asm__ volatile("dmb oshst" : : : "memory");
#else
	__asm__ volatile("" : : : "memory");
#endif
}

static void q_init(struct sd_q *q, void *smmu, void *ring, u64 log2n)
{
	q->smmu = smmu;
	q->ring = ring;
	q->log2n = log2n;
	q->wim = (2u << log2n) - 1;
	q->prod = mmio_read32(q->smmu, SMMU_CMDQ_PROD) & q->wim;
	q->cons = mmio_read32(q->smmu, SMMU_CMDQ_CONS);
	q->published = q->prod;
	q->batch = 0;
}

static int q_full(const struct sd_q *q)
{
	return ((q->prod ^ q->cons) & q->wim) == (1u << q->log2n);
}

/* Make the written entries visible, then ring the doorbell. */
static void q_publish(struct sd_q *q)
{
	if (q->prod != q->published) {
		dma_wmb();
		mmio_write32(q->smmu, SMMU_CMDQ_PROD, q->prod);
		q->published = q->prod;
	}
	q->batch = 0;
}

static long q_push(struct sd_q *q, u64 cmd0, u64 cmd1, int is_sync)
{
	u32 i, slot;

	/* arm_smmu_cmdq_batch_add(): a full batch is issued before the next
	 * command; the CMD_SYNC goes out with the last batch. */
	if (!is_sync && q->batch == SD_BATCH)
		q_publish(q);
	if (q_full(q)) {
		q_publish(q);
		for (i = 0;; i++) {
			q->cons = mmio_read32(q->smmu, SMMU_CMDQ_CONS);
			if (!q_full(q))
				break;
			if (i >= SD_POLL_LIMIT)
				return -SD_ETIMEDOUT;
		}
	}
	slot = q->prod & ((1u << q->log2n) - 1);
	q->ring[2 * slot] = cmd0;
	q->ring[2 * slot + 1] = cmd1;
	q->prod = (q->prod + 1) & q->wim;
	q->batch++;
#if SD_BROKEN == 4
	q_publish(q);
#endif
	return 0;
}

/* CMD_SYNC as arm_smmu_cmdq_build_cmd() builds it without MSI polling
 * (CS = SEV, MSH = ISH, MSIATTR = OIWB: 0xfc02046), publish, wait until
 * CONS == PROD. */
static long q_sync(struct sd_q *q)
{
	u32 i;
	long r = q_push(q, CMDQ_OP_CMD_SYNC | (CMDQ_SYNC_0_CS_SEV << CMDQ_SYNC_0_CS_SHIFT) |
				(ARM_SMMU_SH_ISH << CMDQ_SYNC_0_MSH_SHIFT) |
				(ARM_SMMU_MEMATTR_OIWB << CMDQ_SYNC_0_MSIATTR_SHIFT), 0, 1);

	if (r)
		return r;
	q_publish(q);
	for (i = 0;; i++) {
		q->cons = mmio_read32(q->smmu, SMMU_CMDQ_CONS);
		if (((q->cons ^ q->prod) & q->wim) == 0)
			return 0;
		if (i >= SD_POLL_LIMIT)
			return -SD_ETIMEDOUT;
	}
}

long sd_tlb_inv_range(void *smmu, void *ring, unsigned long log2n, unsigned long asid,
		      unsigned long iova, unsigned long size, unsigned long granule)
{
	struct sd_q q;
	unsigned long end = iova + size;
	long r;

	if (!size) /* __arm_smmu_tlb_inv_range(): nothing, not even a sync */
		return 0;
#if SD_BROKEN == 5
	end -= granule;
#endif
	q_init(&q, smmu, ring, log2n);
	while (iova < end) {
		u64 cmd0 = SD_OP_VA | ((asid & 0xffff) << CMDQ_TLBI_0_ASID_SHIFT);
		u64 cmd1 = CMDQ_TLBI_1_LEAF | ((iova + SD_ADDR_SKEW) & CMDQ_TLBI_1_VA_MASK);

		r = q_push(&q, cmd0, cmd1, 0);
		if (r)
			return r;
		iova += granule;
	}
	return q_sync(&q);
}

long sd_tlb_inv_asid(void *smmu, void *ring, unsigned long log2n, unsigned long asid)
{
	struct sd_q q;
	long r;

	q_init(&q, smmu, ring, log2n);
	r = q_push(&q, CMDQ_OP_TLBI_NH_ASID | ((asid & 0xffff) << CMDQ_TLBI_0_ASID_SHIFT), 0, 0);
	if (r)
		return r;
	return q_sync(&q);
}

long sd_sync(void *smmu, void *ring, unsigned long log2n)
{
	struct sd_q q;

	q_init(&q, smmu, ring, log2n);
	return q_sync(&q);
}
