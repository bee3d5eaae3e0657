/*
 * Reference for examples/book3e_tlb.inv: Linux 6.1
 * arch/powerpc/mm/nohash/tlb_low.S, the CONFIG_PPC_BOOK3E_64 functions
 * _tlbil_pid, _tlbil_pid_noind, _tlbil_all, _tlbil_va and _tlbivax_bcast,
 * instruction for instruction, with the kernel's macros expanded as its
 * assembler sees them: PPC_TLBILX_PID(0,R0) = tlbilx 1,0,r0,
 * PPC_TLBILX_ALL(0,R0) = tlbilx 0,0,r0, PPC_TLBILX_VA(0,R3) = tlbilx
 * 3,0,r3, PPC_TLBIVAX(0,R3) = tlbivax 0,r3 (asm/ppc-opcode.h);
 * SPRN_MAS6 = 0x276 (asm/reg_booke.h); MAS6_SPID_SHIFT 16,
 * MAS6_ISIZE_SHIFT 7, MAS6_ISIZE_MASK 0xf80, MAS6_SIND 2,
 * MAS6_SIND_SHIFT 1 (asm/nohash/mmu-e500.h).
 *
 * Each runs in an asm statement with its arguments in the registers the
 * ABI gives them (r3..r6) and the registers it clobbers (r4, r10, cr0)
 * declared, called with the kernel's prototypes (unsigned int pid, tsize,
 * ind: zero-extended as the C caller passes them). Privileged, they trap
 * in the store-log harness, which models MAS6 and MSR[EE] as for the
 * generated code.
 */
#include "kernel.h"

#if !defined(__powerpc64__)
#error "book3e_tlb: POWER only"
#endif

#define B3E_BEGIN ".machine push\n\t.machine e6500\n\t"
#define B3E_END ".machine pop\n\t"

/* _GLOBAL(_tlbil_pid) */
static void k_tlbil_pid(unsigned int pid)
{
	register unsigned long r3 __asm__("r3") = pid;

	__asm__ __volatile__(B3E_BEGIN
			     "slwi	%%r4,%%r3,16\n\t" /* MAS6_SPID_SHIFT */
			     "mfmsr	%%r10\n\t"
			     "wrteei	0\n\t"
			     "mtspr	0x276,%%r4\n\t" /* SPRN_MAS6 */
			     "tlbilx	1,0,%%r0\n\t" /* PPC_TLBILX_PID(0,R0) */
			     "wrtee	%%r10\n\t"
			     "msync\n\t"
			     "isync\n\t" B3E_END
			     : "+r"(r3)
			     :
			     : "r4", "r10", "memory");
}

/* _GLOBAL(_tlbil_pid_noind) */
static void k_tlbil_pid_noind(unsigned int pid)
{
	register unsigned long r3 __asm__("r3") = pid;

	__asm__ __volatile__(B3E_BEGIN
			     "slwi	%%r4,%%r3,16\n\t"
			     "mfmsr	%%r10\n\t"
			     "ori	%%r4,%%r4,2\n\t" /* MAS6_SIND */
			     "wrteei	0\n\t"
			     "mtspr	0x276,%%r4\n\t"
			     "tlbilx	1,0,%%r0\n\t"
			     "wrtee	%%r10\n\t"
			     "msync\n\t"
			     "isync\n\t" B3E_END
			     : "+r"(r3)
			     :
			     : "r4", "r10", "memory");
}

/* _GLOBAL(_tlbil_all) */
static void k_tlbil_all(void)
{
	__asm__ __volatile__(B3E_BEGIN
			     "tlbilx	0,0,%%r0\n\t" /* PPC_TLBILX_ALL(0,R0) */
			     "msync\n\t"
			     "isync\n\t" B3E_END
			     :
			     :
			     : "memory");
}

/* _GLOBAL(_tlbil_va) */
static void k_tlbil_va(unsigned long address, unsigned int pid, unsigned int tsize,
		       unsigned int ind)
{
	register unsigned long r3 __asm__("r3") = address;
	register unsigned long r4 __asm__("r4") = pid;
	register unsigned long r5 __asm__("r5") = tsize;
	register unsigned long r6 __asm__("r6") = ind;

	__asm__ __volatile__(B3E_BEGIN
			     "mfmsr	%%r10\n\t"
			     "wrteei	0\n\t"
			     "cmpwi	%%cr0,%%r6,0\n\t"
			     "slwi	%%r4,%%r4,16\n\t"
			     "rlwimi	%%r4,%%r5,7,0x00000f80\n\t" /* MAS6_ISIZE */
			     "beq	1f\n\t"
			     "rlwimi	%%r4,%%r6,1,0x00000002\n" /* MAS6_SIND */
			     "1:	mtspr	0x276,%%r4\n\t"
			     "tlbilx	3,0,%%r3\n\t" /* PPC_TLBILX_VA(0,R3) */
			     "msync\n\t"
			     "isync\n\t"
			     "wrtee	%%r10\n\t" B3E_END
			     : "+r"(r3), "+r"(r4), "+r"(r5), "+r"(r6)
			     :
			     : "r10", "cr0", "memory");
}

/* _GLOBAL(_tlbivax_bcast) */
static void k_tlbivax_bcast(unsigned long address, unsigned int pid, unsigned int tsize,
			    unsigned int ind)
{
	register unsigned long r3 __asm__("r3") = address;
	register unsigned long r4 __asm__("r4") = pid;
	register unsigned long r5 __asm__("r5") = tsize;
	register unsigned long r6 __asm__("r6") = ind;

	__asm__ __volatile__(B3E_BEGIN
			     "mfmsr	%%r10\n\t"
			     "wrteei	0\n\t"
			     "cmpwi	%%cr0,%%r6,0\n\t"
			     "slwi	%%r4,%%r4,16\n\t"
			     "rlwimi	%%r4,%%r5,7,0x00000f80\n\t"
			     "beq	1f\n\t"
			     "rlwimi	%%r4,%%r6,1,0x00000002\n"
			     "1:	mtspr	0x276,%%r4\n\t"
			     "tlbivax	0,%%r3\n\t" /* PPC_TLBIVAX(0,R3) */
			     "mbar\n\t"
			     "tlbsync\n\t"
			     "sync\n\t"
			     "wrtee	%%r10\n\t" B3E_END
			     : "+r"(r3), "+r"(r4), "+r"(r5), "+r"(r6)
			     :
			     : "r10", "cr0", "memory");
}

/* a: pid */
long ref_tlbil_pid(const uint64_t *a)
{
	k_tlbil_pid((unsigned int)a[0]);
	return 0;
}

long ref_tlbil_pid_noind(const uint64_t *a)
{
	k_tlbil_pid_noind((unsigned int)a[0]);
	return 0;
}

long ref_tlbil_all(const uint64_t *a)
{
	(void)a;
	k_tlbil_all();
	return 0;
}

/* a: address, pid, tsize, ind */
long ref_tlbil_va(const uint64_t *a)
{
	k_tlbil_va(a[0], (unsigned int)a[1], (unsigned int)a[2], (unsigned int)a[3]);
	return 0;
}

long ref_tlbivax_bcast(const uint64_t *a)
{
	k_tlbivax_bcast(a[0], (unsigned int)a[1], (unsigned int)a[2], (unsigned int)a[3]);
	return 0;
}
