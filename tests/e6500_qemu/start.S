/* Entry for the e6500 TLB harness under qemu-system-ppc64 -M ppce500
 * -cpu e6500 -kernel image.elf (no -bios). QEMU enters _start (the ELF
 * entry, a plain code address, not a descriptor) with MSR = 0, r3 = device
 * tree, r7 = size of the TLB1[0] mapping VA 0 -> PA 0 it made (64M), and
 * nothing else set up (see README.md).
 *
 * Big-endian 64-bit ELFv1: C symbols are .opd descriptors, so C is entered
 * through them (load the entry and the TOC, bctrl); that is also how a test
 * calls generated code through a function pointer. */

#define SPRN_DEAR	61
#define SPRN_ESR	62
#define SPRN_IVPR	63
#define SPRN_SPRG0	272
#define SPRN_SPRG1	273
#define SPRN_SPRG2	274
#define SPRN_EPCR	307
#define SPRN_IVOR0	400
#define SPRN_IVOR32	528
#define SPRN_MAS0	624
#define SPRN_MAS1	625
#define SPRN_MAS2	626
#define SPRN_MAS3	627
#define SPRN_MAS7	944

#define CCSR_VA		0x7f000000	/* harness.h; below 2G so lis needs no care */

/* Call the C function whose descriptor is \sym, e.g. harness_main. */
	.macro CALL_DESC sym
	lis	%r12,\sym@ha
	addi	%r12,%r12,\sym@l
	ld	%r0,0(%r12)
	ld	%r2,8(%r12)
	mtctr	%r0
	bctrl
	.endm

	.section .text.boot,"ax"
	.globl	_start
_start:
	mr	%r31,%r3		/* device tree, for harness_main */
	mr	%r30,%r7		/* initial mapping size */
	mfmsr	%r29			/* MSR at entry, reported by harness */

	/* 64-bit computation mode. The e6500 resets with MSR[CM] = 0, in which
	 * loads and stores do work but effective addresses are truncated to
	 * 32 bits and record forms (andi. etc.) set CR0 from the low word;
	 * generated code is 64-bit code, so run it as Linux does
	 * (head_64.S enable_64b_mode). */
	mfmsr	%r0
	oris	%r0,%r0,0x8000		/* MSR[CM] */
	mtmsr	%r0
	isync
	/* Take interrupts in 64-bit mode too (EPCR[ICM], as init_thread_book3e),
	 * or QEMU truncates the vector and the handlers run with CM = 0. */
	lis	%r0,0x0200
	mtspr	SPRN_EPCR,%r0
	isync

	lis	%r1,__stack_top@ha
	addi	%r1,%r1,__stack_top@l
	li	%r0,0
	stdu	%r0,-128(%r1)		/* back chain 0 ends the stack */

	lis	%r3,__bss_start@ha
	addi	%r3,%r3,__bss_start@l
	lis	%r4,__bss_end@ha
	addi	%r4,%r4,__bss_end@l
1:	cmpld	%r3,%r4
	bge	2f
	std	%r0,0(%r3)
	addi	%r3,%r3,8
	b	1b
2:
	lis	%r3,boot_state@ha
	addi	%r3,%r3,boot_state@l
	std	%r29,0(%r3)
	std	%r31,8(%r3)
	std	%r30,16(%r3)

	/* Vectors: IVOR n -> exc_vectors + n * 0x40 (32..35 too: SPE/AltiVec,
	 * FP assist, perf monitor are 32..35 on e6500). */
	lis	%r3,exc_vectors@ha
	addi	%r3,%r3,exc_vectors@l
	mtspr	SPRN_IVPR,%r3
	.irp	n,0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15
	li	%r3,\n * 0x40
	mtspr	SPRN_IVOR0 + \n,%r3
	.endr
	.irp	n,32,33,34,35
	li	%r3,\n * 0x40
	mtspr	SPRN_IVOR32 + \n - 32,%r3
	.endr
	isync

	/* QEMU's TLB1[0] (the image) has no IPROT: protect it, so that tests
	 * may run tlbilx 0 / tlbilx 1 / MMUCSR0 flash invalidation. */
	lis	%r3,0x1000		/* MAS0: TLBSEL 1, ESEL 0 */
	mtspr	SPRN_MAS0,%r3
	isync
	tlbre
	isync
	mfspr	%r3,SPRN_MAS1
	oris	%r3,%r3,0x4000		/* MAS1[IPROT] */
	mtspr	SPRN_MAS1,%r3
	isync
	tlbwe
	isync

	/* TLB1[1]: CCSR (PA 0xF_E000_0000, 1M, the UART at +0x4500 and the
	 * power-off GPIO at +0xFF000) at CCSR_VA, caching-inhibited and guarded
	 * (WIMGE = I|G), supervisor R/W, IPROT. */
	lis	%r3,0x1001		/* TLBSEL 1, ESEL 1 */
	mtspr	SPRN_MAS0,%r3
	lis	%r3,0xc000		/* V | IPROT */
	ori	%r3,%r3,10 << 7		/* TSIZE 1M (2^10 KiB, MAV 2.0) */
	clrldi	%r3,%r3,32
	mtspr	SPRN_MAS1,%r3
	lis	%r3,CCSR_VA@h
	ori	%r3,%r3,0x0a		/* I | G */
	mtspr	SPRN_MAS2,%r3
	lis	%r3,0xe000
	ori	%r3,%r3,0x05		/* SR | SW */
	clrldi	%r3,%r3,32
	mtspr	SPRN_MAS3,%r3
	li	%r3,0xf			/* PA bits 32..35 */
	mtspr	SPRN_MAS7,%r3
	isync
	tlbwe
	isync

	mr	%r3,%r31
	CALL_DESC harness_main
	CALL_DESC harness_poweroff
3:	b	3b

/* Interrupts. Each stub saves r3, r4 and CR in SPRG0..2 and passes its
 * IVOR number to exc_common, which records the interrupt in exc_rec. If a
 * probe armed exc_rec (harness.c) and the interrupt is a data TLB miss,
 * data storage, alignment or program interrupt, the faulting instruction is
 * skipped and execution resumes; anything else goes to harness_exception
 * (C) on its own stack, which reports it and powers off. */
	.section .vectors,"ax"
	.globl	exc_vectors
exc_vectors:
	.irp	n,0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,32,33,34,35
	.org	exc_vectors + \n * 0x40
	mtspr	SPRN_SPRG0,%r3
	mtspr	SPRN_SPRG1,%r4
	mfcr	%r3
	mtspr	SPRN_SPRG2,%r3
	li	%r3,\n
	b	exc_common
	.endr

exc_common:
	lis	%r4,exc_rec@ha
	addi	%r4,%r4,exc_rec@l
	std	%r3,16(%r4)		/* vector */
	mfspr	%r3,SPRN_DEAR
	std	%r3,24(%r4)
	mfspr	%r3,SPRN_ESR
	std	%r3,32(%r4)
	mfsrr0	%r3
	std	%r3,40(%r4)
	mfsrr1	%r3
	std	%r3,48(%r4)
	ld	%r3,8(%r4)
	addi	%r3,%r3,1
	std	%r3,8(%r4)		/* count */
	ld	%r3,0(%r4)
	cmpdi	%r3,0
	beq	9f			/* not armed */
	ld	%r3,16(%r4)
	cmpdi	%r3,13			/* data TLB miss */
	beq	1f
	cmpdi	%r3,2			/* data storage */
	beq	1f
	cmpdi	%r3,5			/* alignment */
	beq	1f
	cmpdi	%r3,6			/* program (illegal instruction/SPR) */
	bne	9f
1:	li	%r3,0
	std	%r3,0(%r4)		/* one interrupt per probe */
	mfsrr0	%r3
	addi	%r3,%r3,4
	mtsrr0	%r3
	mfspr	%r3,SPRN_SPRG2
	mtcr	%r3
	mfspr	%r4,SPRN_SPRG1
	mfspr	%r3,SPRN_SPRG0
	rfi

9:	lis	%r1,__exc_stack_top@ha
	addi	%r1,%r1,__exc_stack_top@l
	li	%r0,0
	stdu	%r0,-128(%r1)
	ld	%r3,16(%r4)
	CALL_DESC harness_exception
	CALL_DESC harness_poweroff
8:	b	8b
