/*
 * STAND-IN, NOT GENERATED. Hand-written from Linux 6.1
 * arch/powerpc/mm/book3s64/radix_tlb.c (64K pages, global tlbie path, no
 * errata fixups) only so that the POWER boot test could be developed before
 * examples/radix_tlb.inv existed. scripts/kernel-tlb-power-test.sh uses it
 * only with SD_STANDIN=1 and then prints that the result proves nothing
 * about shootdown. @P@ is replaced by the variant's prefix; for the
 * barrier control the script deletes every ptesync/eieio/tlbsync line.
 */
#include <asm/ppc_asm.h>

	.machine push
	.machine power9
	.text

/* long flush_tlb_page(pid, va): _tlbie_va(va, pid, MMU_PAGE_64K, RIC_FLUSH_TLB) */
_GLOBAL(@P@flush_tlb_page)
	rldicr	r4,r4,0,51		/* va & ~PPC_BITMASK(52, 63) */
	ori	r4,r4,5 << 5		/* ap(64K) = 5 << PPC_BITLSHIFT(58) */
	sldi	r3,r3,32		/* pid << PPC_BITLSHIFT(31) */
	ptesync
	tlbie	r4,r3,0,1,1
	eieio
	tlbsync
	ptesync
	li	r3,0
	blr

/* long flush_tlb_page_local(pid, va): _tlbiel_va(va, pid, MMU_PAGE_64K, RIC_FLUSH_TLB) */
_GLOBAL(@P@flush_tlb_page_local)
	rldicr	r4,r4,0,51
	ori	r4,r4,5 << 5
	sldi	r3,r3,32
	ptesync
	tlbiel	r4,r3,0,1,1
	ptesync				/* ppc_after_tlbiel_barrier (POWER9) */
	li	r3,0
	blr

/* long flush_tlb_pid(pid): _tlbie_pid(pid, RIC_FLUSH_ALL) */
_GLOBAL(@P@flush_tlb_pid)
	li	r4,1 << 10		/* IS = 1: PPC_BIT(53) */
	sldi	r3,r3,32
	ptesync
	tlbie	r4,r3,2,1,1
	eieio
	tlbsync
	ptesync
	li	r3,0
	blr

/*
 * long flush_tlb_range(pid, start, end): __radix__flush_tlb_range, global
 * tlbie path: a PID flush past 33 pages (tlb_single_page_flush_ceiling),
 * else a PWC flush for ranges >= 2M, one tlbie per 64K page and one per
 * 2M block inside the range (THP).
 */
_GLOBAL(@P@flush_tlb_range)
	sldi	r3,r3,32		/* rs */
	subf	r6,r4,r5		/* end - start */
	srdi	r7,r6,16		/* nr_pages */
	cmpldi	r7,33
	ble	1f
	li	r8,1 << 10
	ptesync
	tlbie	r8,r3,2,1,1
	eieio
	tlbsync
	ptesync
	li	r3,0
	blr
1:	ptesync
	lis	r8,0x20			/* PMD_SIZE = 2M */
	cmpld	r6,r8
	blt	2f
	li	r9,1 << 10
	tlbie	r9,r3,1,1,1		/* RIC_FLUSH_PWC */
2:	mr	r9,r4
3:	cmpld	r9,r5
	bge	4f
	rldicr	r10,r9,0,51
	ori	r10,r10,5 << 5
	tlbie	r10,r3,0,1,1
	addis	r9,r9,1			/* += 64K */
	b	3b
4:	addi	r9,r8,-1		/* hstart = (start + 2M - 1) & ~(2M - 1) */
	add	r9,r4,r9
	rldicr	r9,r9,0,42
	rldicr	r10,r5,0,42		/* hend = end & ~(2M - 1) */
5:	cmpld	r9,r10
	bge	6f
	ori	r11,r9,1 << 5		/* ap(2M) = 1 */
	tlbie	r11,r3,0,1,1
	add	r9,r9,r8
	b	5b
6:	eieio
	tlbsync
	ptesync
	li	r3,0
	blr

/* long flush_tlb_all(void): radix__flush_tlb_all */
_GLOBAL(@P@flush_tlb_all)
	li	r4,3 << 10		/* IS = 3 */
	li	r5,1
	li	r6,0
	ptesync
	tlbie	r4,r5,2,1,1		/* guest entries: PRS = 1, LPID != 0 */
	tlbie	r4,r6,2,0,1		/* host entries: PRS = 0, LPID = 0 */
	eieio
	tlbsync
	ptesync
	li	r3,0
	blr

	.machine pop
