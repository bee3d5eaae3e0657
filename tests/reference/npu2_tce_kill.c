/*
 * Reference for examples/npu2_tce_kill.inv: skiboot v7.1 hw/npu2.c
 * npu2_tce_kill() for OPAL_PCI_TCE_KILL_PAGES, transcribed. skiboot's
 * npu2_write() reaches NPU2_ATS_TCE_KILL through an XSCOM indirect
 * write; the example models the register as one big-endian MMIO
 * doubleword, so the write here is skiboot's out_be64() (include/io.h:
 * sync, then the store; stdcix is for hypervisor real mode, std is the
 * same store from user mode). Left out: the PE number and TCE size
 * checks against the TVE cache (inputs are valid).
 */
#include "kernel.h"

#define PPC_BITLSHIFT(b) (63 - (b))
#define PPC_BIT(b) (1UL << PPC_BITLSHIFT(b))
/* include/npu2-regs.h */
#define NPU2_ATS_TCE_KILL_ALL PPC_BIT(0)
#define NPU2_ATS_TCE_KILL_ONE PPC_BIT(2)
#define NPU2_ATS_TCE_KILL_PENUM_SHIFT PPC_BITLSHIFT(7)
#define NPU2_ATS_TCE_KILL_PENUM_MASK (0xfUL << NPU2_ATS_TCE_KILL_PENUM_SHIFT)
/* include/bitutils.h SETFIELD(m, v, val) */
#define SETFIELD_PENUM(v, val)                                                  \
	(((v) & ~NPU2_ATS_TCE_KILL_PENUM_MASK) |                                \
	 (((u64)(val) << NPU2_ATS_TCE_KILL_PENUM_SHIFT) & NPU2_ATS_TCE_KILL_PENUM_MASK))

#if defined(__powerpc64__)
#define sync() __asm__ __volatile__("sync" ::: "memory")
#else
#define sync() mb() /* port: processor.h sync() is a full barrier */
#endif

static void npu2_write(volatile u64 *tce_kill, u64 val)
{
	out_be64(tce_kill, val);
}

/* a: npu base, pe, dma_addr, npages, tce_size */
long ref_npu2_tce_kill(const uint64_t *a)
{
	volatile u64 *tce_kill = (volatile u64 *)(uintptr_t)a[0];
	u64 pe_number = a[1], dma_addr = a[2];
	u32 npages = (u32)a[3], tce_size = (u32)a[4];

	sync();
	if (npages < 128) {
		while (npages--) {
			u64 val = SETFIELD_PENUM(dma_addr, pe_number);
			npu2_write(tce_kill, NPU2_ATS_TCE_KILL_ONE | val);
			dma_addr += tce_size;
		}
		return 0;
	}
	/* Too many TCEs: KILL_ALL is a lot faster. */
	npu2_write(tce_kill, NPU2_ATS_TCE_KILL_ALL);
	return 0;
}
