/* QEMU's e6500 TLB against the code shootdown generates from
 * examples/e6500_tlb_miss.inv (link it with e6500_tlb_miss.power64.S; the
 * generated e6500_tlb_miss.h next to it gives the prototypes):
 *
 *   tlbil_va_e500   Linux's e500 __tlbil_va by search: tlbsx, clear
 *                   MAS1[V], tlbwe, msync; isync, with MSR[EE] off.
 *   tlb_miss_e6500  the TLB work of tlb_miss_common_e6500: the per-core
 *                   lock, the round-robin victim's tlbre and (when valid)
 *                   its tlbilx, tlbsx for an entry already loaded, the
 *                   write of the indirect entry for the 2M region of ea.
 *
 * "ok"/"FAIL" lines are checks of architected behaviour that QEMU models;
 * "info" lines record what this QEMU does where it does not model the
 * architecture (MAS1[IND] on a tlbsx miss). See README.md.
 *
 * TLB1 use: ESEL 2, 8, 9 for tlbil_va_e500; ESEL 3..7 the round robin of
 * tlb_miss_e6500 (esel_first 3, esel_max 8); 10..13 (and TLB0) entries
 * that must survive. Everything is torn down between groups of cases
 * (clear()). The harness's TLB1[0] and [1] are IPROT and outside every
 * address used here. */
#include "harness.h"
#include "e6500_tlb_miss.h"

#define MSR_EE 0x8000UL
#define MAS4_INDD 0x00008000u
#define TSIZE_2M 11
/* MAS4 as Linux 6.1 sets it for e6500 hardware tablewalk
 * (arch/powerpc/mm/nohash/tlb_64e.c early_init_this_mmu, PPC_HTW_E6500):
 * WIMGED = M, INDD, TSIZED = 2M, TLBSELD = 1. */
#define MAS4_E6500 (MAS0_TLBSEL(1) | MAS4_INDD | MAS1_TSIZE(TSIZE_2M) | MAS2_M)
/* MAS6 as a data TLB miss in PID pid, AS 0, leaves it with that MAS4:
 * SPID = PID, SIND = INDD, ISIZE = TSIZED (the kernel's "MAS6:IND should
 * be already set based on MAS4"). */
#define MISS_MAS6(pid) (MAS6_SPID(pid) | MAS6_SIND | MAS6_ISIZE(TSIZE_2M))

/* RAM pages mapped at other effective addresses (VA == PA in the image). */
static u64 pages[4][512] __attribute__((aligned(4096)));
#define P(i) ((u64)pages[i])

/* tlbil_va_e500 */
#define VA_T1 0x40000000UL  /* TLB1 4K entries */
#define VA_T0 0x40100000UL  /* TLB0 4K entries */
#define VA_NONE 0x40200000UL /* never mapped */

/* tlb_miss_e6500 */
#define VICTIM_VA 0x48000000UL /* the round-robin victim (4K, TID 7) */
#define STALE_VA 0x4a000000UL  /* an invalid ESEL's stale EPN */
#define IND_VA 0x4e000000UL    /* an indirect victim (2M) */
#define KEA 0xc000000010234560UL  /* kernel (vmalloc) addresses, 4M apart */
#define KEA2 0xc000000010634560UL
#define KEA3 0xc000000010a34560UL
#define KEA4 0xc000000010e34560UL
#define UEA 0x0000000010034560UL  /* user addresses (outside 0..64M) */
#define UEA2 0x0000000010434560UL
/* PMD entries (the page-table page the walk found); MAS7 != 0 for one */
#define PTE1 0x0000000123456000UL
#define PTE2 0x0000000007654000UL
#define PTE3 0x0000000008765000UL
#define PTE_OTHER 0x00000000099aa000UL

/* The tcd: struct tlb_core_data's first four bytes (lock, esel_next,
 * esel_max, esel_first). */
static u8 tcd[4] __attribute__((aligned(8)));
static u64 mas6_after;
static struct mas kea_entry; /* TLB1[5] as the first call wrote it */

static void fill(int i, u64 tag)
{
	for (int j = 0; j < 512; j++)
		pages[i][j] = tag + j;
}

static void read1(int esel, struct mas *m)
{
	tlb_read(MAS0_TLBSEL(1) | MAS0_ESEL(esel), m);
}

static int same_entry(const struct mas *a, const struct mas *b)
{
	return a->mas1 == b->mas1 && a->mas2 == b->mas2 && a->mas3 == b->mas3 && a->mas7 == b->mas7;
}

static void write_entry(int tlbsel, int esel, u32 mas1, u64 mas2, u64 mas7_3)
{
	struct mas m = {
		.mas0 = MAS0_TLBSEL(tlbsel) | MAS0_ESEL(esel),
		.mas1 = mas1,
		.mas2 = mas2,
		.mas3 = (u32)mas7_3,
		.mas7 = (u32)(mas7_3 >> 32),
	};
	tlb_write(&m);
}

/* Every test entry gone: TLB1 ESEL 2..15 and TLB0 ways 0..3 of the sets
 * the tests use. */
static void clear(void)
{
	for (int e = TLB1_FIRST_FREE; e < 16; e++)
		tlb_unmap(1, e, 0);
	static const u64 t0[] = { VA_T0, IND_VA, STALE_VA };
	for (unsigned i = 0; i < sizeof(t0) / sizeof(t0[0]); i++)
		for (int w = 0; w < 4; w++)
			tlb_unmap(0, w, t0[i]);
	set_pid(0);
}

/* ------------------------------------------------------ tlbil_va_e500 */

/* Call it with MSR[EE] = 1 (nothing can interrupt: no decrementer, FIT or
 * watchdog interrupt is enabled in TCR and the MPIC has no source set
 * up; one would show up as an unexpected interrupt); the MSR afterwards. */
static u64 call_ee_on(u64 va, u64 pid)
{
	__asm__ volatile("wrteei 1" : : : "memory");
	tlbil_va_e500(va, pid);
	u64 msr = mfmsr();
	__asm__ volatile("wrteei 0" : : : "memory");
	return msr;
}

static void tlbil_va_tlb1(void)
{
	struct mas m, before;
	fill(0, 0x1111000000000000UL);
	fill(1, 0x2222000000000000UL);
	tlb_map(1, 2, VA_T1, P(0), TSIZE_4K, 5, 0, 0);		/* the one to go */
	tlb_map(1, 8, VA_T1, P(1), TSIZE_4K, 6, 0, 0);		/* same page, TID 6 */
	tlb_map(1, 9, VA_T1 + 0x1000, P(1), TSIZE_4K, 5, 0, 0); /* TID 5, next page */
	set_pid(5);
	expect_load(VA_T1 + 8, pages[0][1], "tlbil_va TLB1 before: TID 5 page");
	expect_load(VA_T1 + 0x1000, pages[1][0], "tlbil_va TLB1 before: TID 5 next page");
	set_pid(6);
	expect_load(VA_T1, pages[1][0], "tlbil_va TLB1 before: TID 6 same page");
	set_pid(0);
	CHECK(tlb_search_pid(VA_T1, 5, &m) && (m.mas0 >> 16 & 0xfff) == 2,
	      "tlbil_va TLB1 before: tlbsx SPID 5 finds TLB1[2]");
	read1(2, &before);

	u64 msr = mfmsr();
	tlbil_va_e500(VA_T1 + 0x123, 5);
	u64 msr_after = mfmsr();
	CHECK(msr_after == msr && !(msr & MSR_EE), "tlbil_va TLB1: MSR unchanged, EE stays 0 (%lx -> %lx)", msr,
	      msr_after);
	CHECK(!tlb_search_pid(VA_T1, 5, &m), "tlbil_va TLB1: tlbsx SPID 5 misses (MAS1=%x)", m.mas1);
	read1(2, &m);
	CHECK(!(m.mas1 & MAS1_VALID) && (m.mas1 | MAS1_VALID) == before.mas1 && m.mas2 == before.mas2 &&
		      m.mas3 == before.mas3,
	      "tlbil_va TLB1: tlbre TLB1[2] has V=0, the rest kept (MAS1=%x)", m.mas1);
	set_pid(5);
	expect_miss(VA_T1, "tlbil_va TLB1 after: TID 5 page");
	expect_load(VA_T1 + 0x1000, pages[1][0], "tlbil_va TLB1 after: TID 5 next page survives");
	set_pid(6);
	expect_load(VA_T1, pages[1][0], "tlbil_va TLB1 after: TID 6 same page survives");
	set_pid(0);
}

static void tlbil_va_tlb0(void)
{
	struct mas m;
	fill(2, 0x3333000000000000UL);
	fill(3, 0x4444000000000000UL);
	tlb_map(0, 1, VA_T0, P(2), TSIZE_4K, 5, 0, 0);
	tlb_map(0, 2, VA_T0, P(3), TSIZE_4K, 6, 0, 0);
	set_pid(5);
	expect_load(VA_T0, pages[2][0], "tlbil_va TLB0 before: TID 5 (way 1)");
	set_pid(0);
	CHECK(tlb_search_pid(VA_T0, 5, &m) && (m.mas0 >> 28 & 3) == 0 && (m.mas0 >> 16 & 0xfff) == 1,
	      "tlbil_va TLB0 before: tlbsx SPID 5 finds TLB0 way 1");

	tlbil_va_e500(VA_T0, 5);
	CHECK(!tlb_search_pid(VA_T0, 5, &m), "tlbil_va TLB0: tlbsx SPID 5 misses");
	set_pid(5);
	expect_miss(VA_T0 + 0x10, "tlbil_va TLB0 after: TID 5");
	set_pid(6);
	expect_load(VA_T0, pages[3][0], "tlbil_va TLB0 after: TID 6 (way 2) survives");
	set_pid(0);
	CHECK(tlb_search_pid(VA_T0, 6, &m) && (m.mas0 >> 16 & 0xfff) == 2, "tlbil_va TLB0 after: tlbsx SPID 6 finds way 2");
}

/* Nothing mapped there (for that PID): nothing removed, MSR[EE] restored
 * on both paths whether it was on or off. */
static void tlbil_va_msr(void)
{
	struct mas m;
	u64 msr = mfmsr();
	tlbil_va_e500(VA_NONE, 5);
	CHECK(mfmsr() == msr, "tlbil_va unmapped, EE 0: MSR unchanged");
	tlbil_va_e500(VA_T1 + 0x1000, 6); /* mapped, but for TID 5 */
	CHECK(mfmsr() == msr, "tlbil_va other TID, EE 0: MSR unchanged");
	CHECK(tlb_search_pid(VA_T1 + 0x1000, 5, &m) && tlb_search_pid(VA_T1, 6, &m) && tlb_search_pid(VA_T0, 6, &m),
	      "tlbil_va unmapped/other TID: every other entry survives");

	u64 after = call_ee_on(VA_NONE, 5);
	CHECK(after == (msr | MSR_EE), "tlbil_va unmapped, EE 1: MSR[EE] back on (%lx)", after);
	CHECK(mfmsr() == msr, "wrteei 0 after the call: MSR as before");
	after = call_ee_on(VA_T1 + 0x1000, 5); /* the invalidating path */
	CHECK(after == (msr | MSR_EE), "tlbil_va mapped, EE 1: MSR[EE] back on (%lx)", after);
	CHECK(!tlb_search_pid(VA_T1 + 0x1000, 5, &m), "tlbil_va mapped, EE 1: the entry is gone");
	CHECK(tlb_search_pid(VA_T1, 6, &m) && tlb_search_pid(VA_T0, 6, &m), "tlbil_va mapped, EE 1: the TID 6 entries survive");
}

/* ----------------------------------------------------- tlb_miss_e6500 */

static void set_tcd(u8 lock, u8 next, u8 max, u8 first)
{
	tcd[0] = lock;
	tcd[1] = next;
	tcd[2] = max;
	tcd[3] = first;
}

static int tcd_is(u8 lock, u8 next, u8 max, u8 first)
{
	return tcd[0] == lock && tcd[1] == next && tcd[2] == max && tcd[3] == first;
}

/* MAS6 as the hardware left it, then the call; MAS6 afterwards in
 * mas6_after (the handler's MAS6 must survive the victim's tlbilx). */
static long miss(u64 ea, u64 pte, u64 kernel, u64 cpu, u32 mas6)
{
	mtspr(SPRN_MAS6, mas6);
	isync();
	long r = tlb_miss_e6500(tcd, ea, pte, kernel, cpu);
	mas6_after = mfspr(SPRN_MAS6);
	return r;
}

/* TLB1[esel] is the entry tlb_miss_e6500 writes for ea: valid, EPN = the
 * 2M region, MAS7_MAS3 = pte | SPSIZE 4K, TID and TS from the tlbsx miss
 * (MAS6[SPID], MAS6[SAS]; TID 0 for kernel addresses), TSIZE = MAS4[TSIZED],
 * no IPROT. MAS1[IND] (MAS4[INDD] on a tlbsx miss): info only. */
static void expect_written(int esel, u64 ea, u64 pte, u32 tid, int ts, const char *what)
{
	struct mas m;
	read1(esel, &m);
	u64 m73 = (u64)m.mas7 << 32 | m.mas3;
	CHECK((m.mas1 & MAS1_VALID) && !(m.mas1 & MAS1_IPROT) && MAS1_GET_TSIZE(m.mas1) == TSIZE_2M,
	      "%s: TLB1[%d] valid, TSIZE 2M, no IPROT (MAS1=%x)", what, esel, m.mas1);
	CHECK(m.mas2 == (ea & ~0x1fffffUL), "%s: TLB1[%d] MAS2 = ea & ~0x1fffff (%lx)", what, esel, m.mas2);
	CHECK(m73 == (pte | 4), "%s: TLB1[%d] MAS7_MAS3 = pte_page | 4 (%lx)", what, esel, m73);
	CHECK((m.mas1 & 0x3fff0000) == MAS1_TID(tid) && !!(m.mas1 & MAS1_TS) == ts,
	      "%s: TLB1[%d] TID %x TS %d", what, esel, (m.mas1 >> 16) & 0x3fff, !!(m.mas1 & MAS1_TS));
	hprintf("info %s: TLB1[%d] MAS1[IND]=%d (the architecture: MAS4[INDD] = 1 on a tlbsx miss)\n",
		what, esel, !!(m.mas1 & MAS1_IND));
}

/* First call: a valid victim at esel_next goes (tlbilx, then overwritten),
 * the kernel entry is written there with TID 0 although MAS6[SPID] is
 * 0x15, esel_next advances, the lock is free again. */
static void miss_first(void)
{
	struct mas m;
	u32 mas6 = MISS_MAS6(0x15);
	fill(0, 0x5555000000000000UL);
	fill(1, 0x6666000000000000UL);
	set_tcd(0, 5, 8, 3);
	tlb_map(1, 5, VICTIM_VA, P(0), TSIZE_4K, 7, 0, 0);  /* the victim */
	tlb_map(1, 10, VICTIM_VA, P(1), TSIZE_4K, 9, 0, 0); /* same EA, TID 9 */
	set_pid(7);
	expect_load(VICTIM_VA, pages[0][0], "miss first before: victim TLB1[5] TID 7");
	set_pid(0);

	long r = miss(KEA, PTE1, 1, 0, mas6);
	CHECK(r == 0, "miss first: returns 0 (%ld)", r);
	CHECK(tcd_is(0, 6, 8, 3), "miss first: tcd = {0, 6, 8, 3} (%d %d %d %d)", tcd[0], tcd[1], tcd[2], tcd[3]);
	CHECK(mas6_after == mas6, "miss first: MAS6 restored (%lx)", mas6_after);
	expect_written(5, KEA, PTE1, 0, 0, "miss first");
	read1(5, &kea_entry);
	CHECK(tlb_search_pid(KEA, 0x15, &m) && m.mas0 >> 28 == 1 && (m.mas0 >> 16 & 0xfff) == 5,
	      "miss first: tlbsx SPID 0x15 finds it in TLB1[5] (MAS0=%x)", m.mas0);
	CHECK(!tlb_search_pid(VICTIM_VA, 7, &m), "miss first: tlbsx SPID 7 misses the victim's EA");
	set_pid(7);
	expect_miss(VICTIM_VA, "miss first after: victim's EA, PID 7");
	set_pid(9);
	expect_load(VICTIM_VA, pages[1][0], "miss first after: TID 9 entry at the victim's EA survives");
	set_pid(0);
}

/* The same ea again: tlbsx finds TLB1[5]; 1, nothing written, the stale
 * (invalid) TLB1[6] untouched and no tlbilx for it (a valid entry with its
 * EPN and TID survives), the lock released. */
static void miss_found(void)
{
	struct mas m, before;
	u32 mas6 = MISS_MAS6(0x15);
	fill(2, 0x7777000000000000UL);
	write_entry(1, 6, MAS1_TID(0x33) | MAS1_TSIZE(TSIZE_4K), STALE_VA, P(3) | MAS3_SR | MAS3_SW);
	tlb_map(1, 11, STALE_VA, P(2), TSIZE_4K, 0x33, 0, 0);
	read1(6, &before);

	long r = miss(KEA + 0x1000, PTE_OTHER, 1, 0, mas6);
	CHECK(r == 1, "miss found: returns 1 (%ld)", r);
	CHECK(tcd_is(0, 6, 8, 3), "miss found: tcd = {0, 6, 8, 3} (lock released, esel_next kept)");
	CHECK(mas6_after == mas6, "miss found: MAS6 unchanged");
	read1(6, &m);
	CHECK(same_entry(&m, &before), "miss found: TLB1[6] (invalid) untouched (MAS1=%x MAS2=%lx)", m.mas1, m.mas2);
	read1(5, &m);
	CHECK(same_entry(&m, &kea_entry), "miss found: TLB1[5] unchanged (MAS7_MAS3 not pte_page %lx)", PTE_OTHER);
	read1(11, &m);
	CHECK(m.mas1 & MAS1_VALID, "miss found: TLB1[11] (stale EPN and TID of TLB1[6]) still valid");
	set_pid(0x33);
	expect_load(STALE_VA, pages[2][0], "miss found: TLB1[11] still translates");
	set_pid(0);
}

/* The A-008139 tlbilx on its own: tlbsx finds ea, so nothing overwrites
 * the victim; a valid indirect victim (IND, TID 0x21, 2M) at esel_next is
 * invalidated by tlbilx with SPID = its TID and SIND = its IND, and only
 * it: a direct TLB0 entry with the same EPN and TID (IND 0) and an
 * indirect one with TID 0x22 survive. */
static void miss_victim_tlbilx(void)
{
	struct mas m, before;
	u32 mas6 = MISS_MAS6(0x15);
	set_tcd(0, 6, 8, 3);
	u32 ind1 = MAS1_VALID | MAS1_TID(0x21) | MAS1_IND | MAS1_TSIZE(TSIZE_2M);
	write_entry(1, 6, ind1, IND_VA, PTE2 | 4);
	write_entry(1, 12, (ind1 & ~0x3fff0000u) | MAS1_TID(0x22), IND_VA, PTE3 | 4);
	tlb_map(0, 0, IND_VA, P(2), TSIZE_4K, 0x21, 0, 0);
	read1(6, &before);
	CHECK(before.mas1 == ind1 && before.mas2 == IND_VA,
	      "miss victim: TLB1[6] holds the indirect victim (MAS1=%x)", before.mas1);

	long r = miss(KEA, PTE_OTHER, 1, 0, mas6);
	CHECK(r == 1, "miss victim: returns 1, tlbsx found TLB1[5] (%ld)", r);
	CHECK(tcd_is(0, 6, 8, 3), "miss victim: tcd = {0, 6, 8, 3}");
	CHECK(mas6_after == mas6, "miss victim: MAS6 restored after the tlbilx (%lx)", mas6_after);
	read1(6, &m);
	CHECK(!(m.mas1 & MAS1_VALID) && (m.mas1 | MAS1_VALID) == before.mas1 && m.mas2 == before.mas2 &&
		      m.mas3 == before.mas3,
	      "miss victim: TLB1[6] invalidated by tlbilx, nothing else changed (MAS1=%x)", m.mas1);
	read1(12, &m);
	CHECK(m.mas1 & MAS1_VALID, "miss victim: indirect entry TID 0x22 same EPN survives");
	struct mas q = { 0 };
	mtspr(SPRN_MAS2, IND_VA);
	tlb_read(MAS0_TLBSEL(0) | MAS0_ESEL(0), &q);
	CHECK((q.mas1 & MAS1_VALID) && (q.mas2 & ~0xfffUL) == IND_VA,
	      "miss victim: direct TLB0 entry same EPN and TID survives (IND 0 != SIND 1)");
	read1(5, &m);
	CHECK(same_entry(&m, &kea_entry), "miss victim: TLB1[5] unchanged");
}

/* A user address in PID 0x2a (kernel = 0): the TID from MAS6[SPID] stays;
 * esel_next 7 wraps to esel_first 3. Then AS 1 (MAS6[SAS]): TS = 1. */
static void miss_user_wrap(void)
{
	struct mas m;
	set_tcd(0, 7, 8, 3);
	long r = miss(UEA, PTE2, 0, 1, MISS_MAS6(0x2a));
	CHECK(r == 0, "miss user: returns 0 (%ld)", r);
	CHECK(tcd_is(0, 3, 8, 3), "miss user: esel_next 7 wraps to esel_first 3 (%d)", tcd[1]);
	expect_written(7, UEA, PTE2, 0x2a, 0, "miss user");
	CHECK(tlb_search_pid(UEA, 0x2a, &m) && (m.mas0 >> 16 & 0xfff) == 7, "miss user: tlbsx SPID 0x2a finds TLB1[7]");
	CHECK(!tlb_search_pid(UEA, 0x2b, &m), "miss user: tlbsx SPID 0x2b misses it (TID kept)");

	r = miss(UEA2, PTE3, 0, 1, MISS_MAS6(0x2a) | MAS6_SAS);
	CHECK(r == 0, "miss user AS 1: returns 0 (%ld)", r);
	CHECK(tcd_is(0, 4, 8, 3), "miss user AS 1: tcd = {0, 4, 8, 3}");
	expect_written(3, UEA2, PTE3, 0x2a, 1, "miss user AS 1");
	CHECK(!tlb_search(UEA2, MAS6_SPID(0x2a), &m) && tlb_search(UEA2, MAS6_SPID(0x2a) | MAS6_SAS, &m),
	      "miss user AS 1: tlbsx finds it with SAS 1 only");
}

/* esel_next's entry is invalid but holds a stale EPN and TID: no tlbilx,
 * so a valid entry with that EPN and TID elsewhere survives the write. */
static void miss_victim_invalid(void)
{
	struct mas m;
	u32 mas6 = MISS_MAS6(0);
	fill(2, 0x8888000000000000UL);
	set_tcd(0, 4, 8, 3);
	write_entry(1, 4, MAS1_TID(0x33) | MAS1_TSIZE(TSIZE_4K), STALE_VA, P(2) | MAS3_SR | MAS3_SW);
	tlb_map(1, 13, STALE_VA, P(2), TSIZE_4K, 0x33, 0, 0);
	long r = miss(KEA2, PTE3, 1, 2, mas6);
	CHECK(r == 0, "miss invalid victim: returns 0 (%ld)", r);
	CHECK(tcd_is(0, 5, 8, 3), "miss invalid victim: tcd = {0, 5, 8, 3}");
	CHECK(mas6_after == mas6, "miss invalid victim: MAS6 unchanged");
	expect_written(4, KEA2, PTE3, 0, 0, "miss invalid victim");
	read1(13, &m);
	CHECK((m.mas1 & MAS1_VALID) && m.mas2 == STALE_VA,
	      "miss invalid victim: TLB1[13] (the stale EPN and TID) survives");
	set_pid(0x33);
	expect_load(STALE_VA + 16, pages[2][2], "miss invalid victim: TLB1[13] still translates");
	set_pid(0);
}

/* The lock: nested (tcd[0] == cpu + 1 already) neither takes nor releases
 * it and returns 2 (1 when found); cpu 254 (lock value 255) works, cpu 255
 * does not fit the byte: -22 and nothing done. */
static void miss_lock(void)
{
	struct mas before, m;
	set_tcd(5, 5, 8, 3);
	long r = miss(KEA3, PTE1, 1, 4, MISS_MAS6(0));
	CHECK(r == 2, "miss nested: returns 2 (%ld)", r);
	CHECK(tcd_is(5, 6, 8, 3), "miss nested: lock still 5 (cpu 4 + 1), esel_next 6 (%d %d)", tcd[0], tcd[1]);
	expect_written(5, KEA3, PTE1, 0, 0, "miss nested");
	r = miss(KEA3, PTE2, 1, 4, MISS_MAS6(0));
	CHECK(r == 1, "miss nested found: returns 1 (%ld)", r);
	CHECK(tcd_is(5, 6, 8, 3), "miss nested found: lock still 5, esel_next 6");

	set_tcd(0, 6, 8, 3);
	r = miss(KEA4, PTE2, 1, 254, MISS_MAS6(0));
	CHECK(r == 0 && tcd_is(0, 7, 8, 3), "miss cpu 254: returns 0, lock released, esel_next 7 (%ld)", r);
	expect_written(6, KEA4, PTE2, 0, 0, "miss cpu 254");

	read1(7, &before);
	r = miss(KEA4 + 0x200000, PTE3, 1, 255, MISS_MAS6(0));
	read1(7, &m);
	CHECK(r == -22 && tcd_is(0, 7, 8, 3) && same_entry(&m, &before),
	      "miss cpu 255: returns -22, tcd and TLB1[7] untouched (%ld)", r);
}

/* A lock held by another CPU (tcd[0] = 9, cpu 8): the code must spin until
 * it is released, then take it as cpu + 1. One CPU here, so the releaser
 * is a decrementer interrupt: this handler (in .vectors, within IVPR's 64K,
 * so IVOR10 can point at it) records SRR0, stores 0 to the lock byte,
 * turns the decrementer off (TCR[DIE] = 0, TSR[DIS] cleared) and returns.
 * A subject that took a held lock for a nested one would return 2 without
 * waiting (SRR0 would not be in it). */
struct dec_rec {
	u64 srr0;  /* 0 */
	u64 count; /* 8 */
	u64 lock;  /* 16: the byte to release */
};
volatile struct dec_rec tlbmiss_dec_rec;
extern char tlbmiss_dec_handler[];
__asm__("	.section .vectors,\"ax\"\n"
	"	.p2align 4\n"
	"	.globl tlbmiss_dec_handler\n"
	"tlbmiss_dec_handler:\n"
	"	mtspr	272,%r3\n"		/* SPRG0 */
	"	mtspr	273,%r4\n"		/* SPRG1 */
	"	lis	%r3,0x0800\n"
	"	mtspr	336,%r3\n"		/* TSR: clear DIS */
	"	li	%r3,0\n"
	"	mtspr	340,%r3\n"		/* TCR: DIE off */
	"	lis	%r4,tlbmiss_dec_rec@ha\n"
	"	addi	%r4,%r4,tlbmiss_dec_rec@l\n"
	"	mfsrr0	%r3\n"
	"	std	%r3,0(%r4)\n"
	"	ld	%r3,8(%r4)\n"
	"	addi	%r3,%r3,1\n"
	"	std	%r3,8(%r4)\n"
	"	ld	%r3,16(%r4)\n"
	"	li	%r4,0\n"
	"	stb	%r4,0(%r3)\n"		/* release the lock */
	"	mfspr	%r4,273\n"
	"	mfspr	%r3,272\n"
	"	rfi\n"
	"	.previous\n");

#define SPRN_DEC 22
#define SPRN_IVPR 63
#define SPRN_TSR 336
#define SPRN_TCR 340
#define SPRN_IVOR10 410
#define TSR_DIS 0x08000000u
#define TCR_DIE 0x04000000u

static void miss_contended(void)
{
	long (*volatile fp)(unsigned char *, unsigned long, unsigned long, unsigned long, unsigned long) =
		tlb_miss_e6500;
	u64 entry = ((const u64 *)(void *)fp)[0]; /* ELFv1 descriptor: code address */
	u64 h = (u64)tlbmiss_dec_handler;
	CHECK((h & ~0xffffUL) == mfspr(SPRN_IVPR), "miss contended: decrementer handler within IVPR's 64K (%lx)", h);
	set_tcd(9, 3, 8, 3);
	tlbmiss_dec_rec.srr0 = 0;
	tlbmiss_dec_rec.count = 0;
	tlbmiss_dec_rec.lock = (u64)&tcd[0];
	mtspr(SPRN_IVOR10, h & 0xffff);
	mtspr(SPRN_TSR, TSR_DIS);
	mtspr(SPRN_DEC, 20000000); /* 50 ms of the 400 MHz timebase */
	mtspr(SPRN_TCR, TCR_DIE);
	mtspr(SPRN_MAS6, MISS_MAS6(0));
	isync();
	__asm__ volatile("wrteei 1" : : : "memory");
	long r = fp(tcd, KEA, PTE1, 1, 4);
	__asm__ volatile("wrteei 0" : : : "memory");
	mtspr(SPRN_TCR, 0);
	mtspr(SPRN_TSR, TSR_DIS);
	mtspr(SPRN_IVOR10, 10 * 0x40);
	isync();
	u64 pc = tlbmiss_dec_rec.srr0;
	CHECK(tlbmiss_dec_rec.count == 1 && pc >= entry && pc < entry + 0x400,
	      "miss contended: waited in tlb_miss_e6500 until the interrupt released the lock (at +%lx)",
	      pc - entry);
	CHECK(r == 0 && tcd_is(0, 4, 8, 3),
	      "miss contended: then took it: returns 0, released, esel_next 4 (%ld)", r);
	expect_written(3, KEA, PTE1, 0, 0, "miss contended");
}

int test_main(void)
{
	tlbil_va_tlb1();
	tlbil_va_tlb0();
	tlbil_va_msr();
	clear();

	mtspr(SPRN_MAS4, MAS4_E6500);
	isync();
	CHECK(mfspr(SPRN_MAS4) == MAS4_E6500, "MAS4 = %x (Linux's e6500 tablewalk defaults)", MAS4_E6500);
	miss_first();
	miss_found();
	miss_victim_tlbilx();
	clear();
	miss_user_wrap();
	clear();
	miss_victim_invalid();
	clear();
	miss_lock();
	clear();
	miss_contended();
	clear();
	return 0;
}
