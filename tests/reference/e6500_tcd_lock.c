/*
 * Reference for examples/e6500_tcd_lock.inv: the e6500 TLB-miss lock of
 * Linux 6.1 arch/powerpc/mm/nohash/tlb_low_64e.S (tlb_miss_common_e6500,
 * tlb_unlock_e6500) on struct tlb_core_data
 * (arch/powerpc/include/asm/nohash/mmu-e500.h: u8 lock, "must be the
 * first struct element", then esel_next, esel_max, esel_first).
 *
 * On POWER the lock and unlock are the kernel's instructions as inline
 * asm; the lock value is PACAPACAINDEX + 1 (here cpu + 1) and cr1.eq,
 * set when this cpu already holds the lock (a nested handler), is the
 * returned token. The MAS0 values the kernel moves to the SPR with mtspr
 * (privileged) are stored to `mas0[]` instead, as the example does.
 *
 * Port for aarch64 and x86-64, which have no such lock: the same
 * algorithm with GCC's __atomic builtins (an acquiring compare-and-swap,
 * a releasing store).
 */
#include "kernel.h"

/* struct tlb_core_data */
#define TCD_LOCK 0
#define TCD_ESEL_NEXT 1
#define TCD_ESEL_MAX 2
#define TCD_ESEL_FIRST 3
#define MAS0_TLBSEL_1 0x10000000u
#define MAS0_ESEL_MASK 0x00ff0000u

#if defined(__powerpc64__)
static long tcd_lock(volatile u8 *lock, unsigned long cpu)
{
	unsigned long r15, token, r10 = cpu + 1; /* lhz PACAPACAINDEX; addi 1 */

	__asm__ __volatile__("	crclr	4*1+2\n" /* cr1.eq = 0: not recursive */
			     "1:	lbarx	%0,0,%3\n"
			     "	cmpdi	%0,0\n"
			     "	bne	2f\n"
			     "	stbcx.	%2,0,%3\n"
			     "	bne	1b\n"
			     "3:	li	%1,0\n"
			     "	bne	1,4f\n"
			     "	li	%1,1\n"
			     "4:\n"
			     "	.subsection 1\n"
			     "2:	cmpd	1,%0,%2\n" /* recursive (mcheck, crit)? */
			     "	beq	1,3b\n"
			     "10:	lbz	%0,0(%3)\n"
			     "	cmpdi	%0,0\n"
			     "	bne	10b\n"
			     "	b	1b\n"
			     "	.previous\n"
			     : "=&r"(r15), "=&r"(token)
			     : "r"(r10), "r"(lock)
			     : "cr0", "cr1", "memory");
	return (long)token;
}

static void tcd_unlock(volatile u8 *lock, long token)
{
	if (token) /* beq cr1,1f: a nested holder does not unlock */
		return;
	__asm__ __volatile__("li	%%r0,0\n\tisync\n\tstb	%%r0,0(%0)" : : "b"(lock) : "r0", "memory");
}
#else
static long tcd_lock(volatile u8 *lock, unsigned long cpu)
{
	u8 want = (u8)(cpu + 1);

	/* As the asm: look first, take it only when it reads free. */
	for (;;) {
		u8 seen = __atomic_load_n(lock, __ATOMIC_RELAXED);
		if (seen == 0) {
			if (__atomic_compare_exchange_n(lock, &seen, want, 0, __ATOMIC_ACQUIRE,
							__ATOMIC_RELAXED))
				return 0;
			continue;
		}
		if (seen == cpu + 1)
			return 1;
		while (__atomic_load_n(lock, __ATOMIC_RELAXED))
			cpu_relax();
	}
}

static void tcd_unlock(volatile u8 *lock, long token)
{
	if (!token)
		__atomic_store_n(lock, 0, __ATOMIC_RELEASE);
}
#endif

/* a: lock, cpu */
long ref_tcd_lock(const uint64_t *a)
{
	return tcd_lock((volatile u8 *)(uintptr_t)a[0], a[1]);
}

/* a: lock, token */
long ref_tcd_unlock(const uint64_t *a)
{
	tcd_unlock((volatile u8 *)(uintptr_t)a[0], (long)a[1]);
	return 0;
}

/*
 * a: tcd, mas0, cpu. The lock, esel_next read once, MAS0 for the tlbilx
 * of that entry and for the tlbwe, esel_next advanced round robin from
 * esel_first to esel_max, the unlock.
 */
long ref_tcd_next_esel(const uint64_t *a)
{
	volatile u8 *tcd = (volatile u8 *)(uintptr_t)a[0];
	volatile u32 *mas0 = (volatile u32 *)(uintptr_t)a[1];
	long token = tcd_lock(tcd + TCD_LOCK, a[2]);
	u32 r7 = tcd[TCD_ESEL_NEXT], r16, r14;
	u32 r10 = ((r7 << 16) & MAS0_ESEL_MASK) | MAS0_TLBSEL_1;

	mas0[0] = r10; /* mtspr SPRN_MAS0 before tlbre/tlbilx */
	r16 = tcd[TCD_ESEL_MAX];
	r14 = tcd[TCD_ESEL_FIRST];
	r10 = (r10 & ~MAS0_ESEL_MASK) | ((r7 << 16) & MAS0_ESEL_MASK);
	r7 = r7 + 1;
	mas0[1] = r10; /* mtspr SPRN_MAS0 before tlbwe */
	tcd[TCD_ESEL_NEXT] = (u8)(r7 == r16 ? r14 : r7);
	tcd_unlock(tcd + TCD_LOCK, token);
	return 0;
}
