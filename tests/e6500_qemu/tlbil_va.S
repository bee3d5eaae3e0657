/* Stand-ins for generated code: Linux 6.1's e500 __tlbil_va
 * (arch/powerpc/mm/nohash/tlb_low.S, CONFIG_PPC_85xx), both arms of its
 * MMU_FTR_USE_TLBILX feature section, written the way shootdown emits
 * power64 code (ELFv1: the global symbol is the .opd descriptor, the code
 * is at the dot symbol).
 *
 *   void test_tlbil_va(unsigned long ea, unsigned long pid);  tlbsx+tlbwe
 *   void test_tlbilx_va(unsigned long ea, unsigned long pid); tlbilx 3,0,ea
 */
	.machine e6500
	.text

	.globl test_tlbil_va
	.section ".opd","aw"
	.p2align 3
test_tlbil_va:
	.quad .test_tlbil_va,.TOC.@tocbase,0
	.previous
	.type test_tlbil_va,@function
	.p2align 4
.test_tlbil_va:
	mfmsr	%r10
	wrteei	0
	slwi	%r4,%r4,16
	ori	%r4,%r4,2 << 7		/* MAS6_ISIZE(BOOK3E_PAGESZ_4K) */
	mtspr	630,%r4			/* MAS6; assume AS=0 */
	tlbsx	0,%r3
	mfspr	%r4,625			/* MAS1: check valid */
	andis.	%r3,%r4,0x8000
	beq	1f
	rlwinm	%r4,%r4,0,1,31
	mtspr	625,%r4
	tlbwe
	msync
	isync
1:	wrtee	%r10
	blr
	.size test_tlbil_va,.-.test_tlbil_va

	.globl test_tlbilx_va
	.section ".opd","aw"
	.p2align 3
test_tlbilx_va:
	.quad .test_tlbilx_va,.TOC.@tocbase,0
	.previous
	.type test_tlbilx_va,@function
	.p2align 4
.test_tlbilx_va:
	mfmsr	%r10
	wrteei	0
	slwi	%r4,%r4,16
	ori	%r4,%r4,2 << 7
	mtspr	630,%r4
	tlbilx	3,0,%r3			/* PPC_TLBILX_VA(0,R3) */
	msync
	isync
	wrtee	%r10
	blr
	.size test_tlbilx_va,.-.test_tlbilx_va
