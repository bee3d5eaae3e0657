/* Demo for the e6500 TLB harness: what QEMU's e6500 TLB model does with
 * Linux 6.1's e500 __tlbil_va (both arms: tlbsx + tlbwe with V cleared, and
 * tlbilx 3,0,ea), written in tlbil_va.S as generated code would be. Lines
 * "ok"/"FAIL" are checks of architected behaviour; "info" lines record what
 * this QEMU does where the answer is model-specific. */
#include "harness.h"

void test_tlbil_va(u64 ea, u64 pid);
void test_tlbilx_va(u64 ea, u64 pid);

/* RAM pages the tests map at other virtual addresses; the image's own
 * mapping is VA == PA, so &pages[i] is also the physical address. */
static u64 pages[4][512] __attribute__((aligned(4096)));

#define VA(n) (0x40000000UL + (u64)(n) * 0x100000) /* 1M apart, outside 0..64M */

static void fill(int i, u64 tag)
{
	for (int j = 0; j < 512; j++)
		pages[i][j] = tag + j;
}

static void environment(void)
{
	hprintf("info MMUCFG=%lx TLB0CFG=%lx TLB1CFG=%lx TLB0PS=%lx TLB1PS=%lx PID=%lx\n",
		mfspr(SPRN_MMUCFG), mfspr(SPRN_TLB0CFG), mfspr(SPRN_TLB1CFG), mfspr(SPRN_TLB0PS),
		mfspr(SPRN_TLB1PS), mfspr(SPRN_PID));
	struct mas m;
	tlb_read(MAS0_TLBSEL(1) | MAS0_ESEL(0), &m);
	tlb_print("info TLB1[0] (QEMU's initial mapping, IPROT added)", &m);
	tlb_read(MAS0_TLBSEL(1) | MAS0_ESEL(1), &m);
	tlb_print("info TLB1[1] (CCSR)", &m);
	CHECK(boot_state.msr == 0 && (mfmsr() & 0x80000000), "entry MSR 0 (CM=0), now MSR[CM]=1");
}

/* Linux's non-TLBILX __tlbil_va on a TLB1 entry, PID 0. */
static void tlbsx_tlbwe_tlb1(void)
{
	struct mas m;
	u64 va = VA(0), pa = (u64)pages[0];
	fill(0, 0x1111000000000000UL);
	tlb_map(1, 2, va, pa, TSIZE_4K, 0, 0, 0);
	expect_load(va + 8, pages[0][1], "TLB1[2] 4K");
	expect_miss(va + 0x1000, "TLB1[2] is only 4K");
	CHECK(tlb_search_pid(va, 0, &m) && m.mas0 == (MAS0_TLBSEL(1) | MAS0_ESEL(2) | (m.mas0 & 0xfff)) &&
		      (m.mas2 & ~0xfffUL) == va && (m.mas3 & ~0xfffu) == (u32)pa,
	      "tlbsx finds TLB1[2]: MAS0=%x MAS1=%x MAS2=%lx MAS3=%x", m.mas0, m.mas1, m.mas2, m.mas3);

	test_tlbil_va(va, 0);

	CHECK(!tlb_search_pid(va, 0, &m), "after test_tlbil_va: tlbsx misses (MAS1=%x)", m.mas1);
	tlb_read(MAS0_TLBSEL(1) | MAS0_ESEL(2), &m);
	CHECK(!(m.mas1 & MAS1_VALID) && (m.mas2 & ~0xfffUL) == va,
	      "after test_tlbil_va: tlbre TLB1[2] has V=0, EPN kept (MAS1=%x MAS2=%lx)", m.mas1, m.mas2);
	expect_miss(va, "after test_tlbil_va");
	mas_read(&m);
	tlb_print("info MAS after that data TLB miss (QEMU loads MAS4 defaults)", &m);
}

/* MAS6[SPID]: an entry with TID 5 is found and invalidated only with pid 5. */
static void tlbsx_tlbwe_pid(void)
{
	struct mas m;
	u64 va = VA(1), pa = (u64)pages[1];
	fill(1, 0x2222000000000000UL);
	tlb_map(1, 3, va, pa, TSIZE_4K, 5, 0, 0);
	expect_miss(va, "TID 5 entry, PID 0");
	set_pid(5);
	expect_load(va, pages[1][0], "TID 5 entry, PID 5");
	CHECK(!tlb_search_pid(va, 0, &m), "tlbsx with SPID 0 misses the TID 5 entry");
	CHECK(tlb_search_pid(va, 5, &m) && (m.mas1 & 0x3fff0000) == MAS1_TID(5), "tlbsx with SPID 5 finds it (MAS1=%x)",
	      m.mas1);
	test_tlbil_va(va, 0);
	expect_load(va, pages[1][0], "test_tlbil_va(pid 0) leaves the TID 5 entry");
	/* through the descriptor, as a C caller of generated code would */
	void (*volatile fp)(u64, u64) = test_tlbil_va;
	const u64 *desc = (const u64 *)fp;
	hprintf("info test_tlbil_va descriptor at %p: entry %lx toc %lx\n", (void *)desc, desc[0], desc[1]);
	fp(va, 5);
	CHECK(!tlb_search_pid(va, 5, &m), "test_tlbil_va(pid 5) via descriptor: tlbsx misses");
	expect_miss(va, "test_tlbil_va(pid 5)");
	set_pid(0);
}

static void tlbilx_va(void)
{
	struct mas m;
	u64 va = VA(2), pa = (u64)pages[2];
	fill(2, 0x3333000000000000UL);

	tlb_map(1, 4, va, pa, TSIZE_4K, 0, 0, 0);
	expect_load(va, pages[2][0], "TLB1[4]");
	test_tlbilx_va(va, 0);
	CHECK(!tlb_search_pid(va, 0, &m), "after tlbilx 3 (TLB1): tlbsx misses");
	tlb_read(MAS0_TLBSEL(1) | MAS0_ESEL(4), &m);
	CHECK(!(m.mas1 & MAS1_VALID), "after tlbilx 3: tlbre TLB1[4] has V=0 (MAS1=%x)", m.mas1);
	expect_miss(va, "after tlbilx 3 (TLB1)");

	/* TLB0 (4K pages, set chosen by the EA, ESEL = way) */
	va = VA(3);
	tlb_map(0, 1, va, pa, TSIZE_4K, 0, 0, 0);
	expect_load(va, pages[2][0], "TLB0 way 1");
	CHECK(tlb_search_pid(va, 0, &m) && (m.mas0 >> 28 & 3) == 0 && (m.mas0 >> 16 & 0xfff) == 1,
	      "tlbsx finds it in TLB0 way 1 (MAS0=%x)", m.mas0);
	test_tlbilx_va(va, 0);
	CHECK(!tlb_search_pid(va, 0, &m), "after tlbilx 3 (TLB0): tlbsx misses");
	expect_miss(va, "after tlbilx 3 (TLB0)");

	tlb_map(0, 2, va, pa, TSIZE_4K, 0, 0, 0);
	expect_load(va, pages[2][0], "TLB0 way 2");
	test_tlbil_va(va, 0);
	CHECK(!tlb_search_pid(va, 0, &m), "after test_tlbil_va (TLB0): tlbsx misses");
	expect_miss(va, "after test_tlbil_va (TLB0)");

	/* tlbilx 3 matches MAS6[SPID] against the TID */
	tlb_map(1, 5, va, pa, TSIZE_4K, 7, 0, 0);
	test_tlbilx_va(va, 3);
	CHECK(tlb_search_pid(va, 7, &m), "tlbilx 3 with SPID 3 leaves a TID 7 entry");
	test_tlbilx_va(va, 7);
	CHECK(!tlb_search_pid(va, 7, &m), "tlbilx 3 with SPID 7 removes it");
}

/* Both sequences say ISIZE = 4K and SAS = 0. Against a 1M TLB1 entry (EA in
 * its second 4K page) and a TS=1 entry: model-specific, reported as info. */
static void isize_sas(void)
{
	struct mas m;
	u64 va = VA(4), pa = 0x100000; /* the first 1M of RAM: PA 0x100000.. */
	tlb_map(1, 6, va, pa, TSIZE_1M, 0, 0, 0);
	expect_load(va + 0x1000, *(u64 *)(pa + 0x1000), "TLB1[6] 1M");
	test_tlbil_va(va + 0x1000, 0);
	hprintf("info 1M entry after test_tlbil_va(ea+4K, ISIZE 4K): %s\n",
		tlb_search_pid(va, 0, &m) ? "still valid" : "invalidated");
	tlb_map(1, 6, va, pa, TSIZE_1M, 0, 0, 0);
	test_tlbilx_va(va + 0x1000, 0);
	hprintf("info 1M entry after tlbilx 3 (ea+4K, ISIZE 4K): %s\n",
		tlb_search_pid(va, 0, &m) ? "still valid" : "invalidated");
	mtspr(SPRN_MAS6, MAS6_ISIZE(TSIZE_1M));
	isync();
	__asm__ volatile("tlbilx 3,0,%0; msync; isync" : : "r"(va + 0x1000) : "memory");
	hprintf("info 1M entry after tlbilx 3 (ea+4K, ISIZE 1M): %s\n",
		tlb_search_pid(va, 0, &m) ? "still valid" : "invalidated");

	/* MAS6[SAS] against an address-space-1 (TS=1) entry */
	struct mas w = {
		.mas0 = MAS0_TLBSEL(1) | MAS0_ESEL(6),
		.mas1 = MAS1_VALID | MAS1_TS | MAS1_TSIZE(TSIZE_4K),
		.mas2 = va,
		.mas3 = (u32)pa | MAS3_SR,
	};
	tlb_write(&w);
	CHECK(!tlb_search(va, 0, &m), "tlbsx with SAS 0 misses a TS=1 entry");
	CHECK(tlb_search(va, MAS6_SAS, &m) && (m.mas1 & MAS1_TS), "tlbsx with SAS 1 finds it");
	test_tlbilx_va(va, 0);
	hprintf("info TS=1 entry after tlbilx 3 with SAS 0: %s\n",
		tlb_search(va, MAS6_SAS, &m) ? "still valid" : "invalidated");
	tlb_unmap(1, 6, va);
}

static void tlbre(void)
{
	struct mas w = {
		.mas0 = MAS0_TLBSEL(1) | MAS0_ESEL(7),
		.mas1 = MAS1_VALID | MAS1_TID(0x2a) | MAS1_TSIZE(TSIZE_4K),
		.mas2 = 0x50000000UL | MAS2_M | MAS2_G,
		.mas3 = 0x23456000u | MAS3_SR | MAS3_SW | MAS3_UR,
		.mas7 = 0x1,
	}, r;
	tlb_write(&w);
	tlb_read(MAS0_TLBSEL(1) | MAS0_ESEL(7), &r);
	u64 m73 = mfspr(SPRN_MAS7_MAS3);
	hprintf("tlbre TLB1[7]: MAS1=%08x MAS2=%016lx MAS3=%08x MAS7=%08x MAS7_MAS3=%016lx\n", r.mas1,
		r.mas2, r.mas3, r.mas7, m73);
	CHECK(r.mas1 == w.mas1 && r.mas2 == w.mas2 && r.mas3 == w.mas3 && r.mas7 == w.mas7,
	      "tlbre TLB1[7] returns what tlbwe wrote");
	CHECK(m73 == 0x123456007UL, "MAS7_MAS3 (SPR 372) = MAS7:MAS3 (%lx)", m73);

	/* TLB0 is set-associative: tlbre selects the set from MAS2[EPN] */
	u64 va = VA(5);
	tlb_map(0, 3, va, (u64)pages[3], TSIZE_4K, 0, MAS2_M, 0);
	struct mas q = { 0 };
	mtspr(SPRN_MAS2, va);
	tlb_read(MAS0_TLBSEL(0) | MAS0_ESEL(3), &q);
	tlb_print("tlbre TLB0 way 3 (MAS2=EPN)", &q);
	CHECK((q.mas1 & MAS1_VALID) && (q.mas2 & ~0xfffUL) == va && (q.mas3 & ~0xfffu) == (u32)(u64)pages[3],
	      "tlbre TLB0 way 3 returns the entry");
	tlb_unmap(0, 3, va);
	tlb_unmap(1, 7, 0x50000000UL);
}

/* MSR[CM]=1: an EA above 4G is used whole (with CM=0 it would be truncated
 * to 32 bits and hit TLB1[0]). */
static void ea64(void)
{
	u64 va = 0x0000001000000000UL;
	fill(3, 0x4444000000000000UL);
	tlb_map(1, 8, va, (u64)pages[3], TSIZE_4K, 0, 0, 0);
	expect_load(va, pages[3][0], "64-bit EA 0x1000000000");
	test_tlbilx_va(va, 0);
	expect_miss(va, "64-bit EA after tlbilx 3");
}

/* Round trip through an SPR; QEMU ignores mtspr/mfspr of an SPR it does
 * not implement in supervisor state (logged in qemu.log), so the register
 * is preset with a sentinel. */
#define ROUNDTRIP(n, val)                                                                      \
	({                                                                                     \
		u64 got_ = 0x5a5a5a5a5a5a5a5aUL;                                               \
		mtspr(n, val);                                                                 \
		isync();                                                                       \
		__asm__ volatile("mfspr %0," stringify(n) : "+r"(got_));                       \
		got_;                                                                          \
	})

static void sprs(void)
{
	u64 v;
	v = ROUNDTRIP(SPRN_MAS4, 0x00000100 | MAS1_TSIZE(TSIZE_4K));
	hprintf("info MAS4 (628) round trip: %lx\n", v);
	mtspr(SPRN_MAS4, 0);
	v = ROUNDTRIP(SPRN_MAS5, 0x80000000u);
	hprintf("info MAS5 (339) round trip of 80000000: %lx\n", v);
	mtspr(SPRN_MAS5, 0);
	v = ROUNDTRIP(SPRN_MAS8, 0x4000002au);
	hprintf("info MAS8 (341) round trip of 4000002a: %lx\n", v);
	mtspr(SPRN_MAS8, 0);
	mtspr(SPRN_MAS3, 0);
	mtspr(SPRN_MAS7, 0);
	mtspr(SPRN_MAS7_MAS3, 0x0000000987654321UL);
	isync();
	hprintf("info mtspr MAS7_MAS3 0x987654321 -> MAS7=%lx MAS3=%lx\n", mfspr(SPRN_MAS7),
		mfspr(SPRN_MAS3));

	/* flash invalidation and tlbilx 0/1 keep IPROT entries (this code and
	 * the UART would be gone otherwise) */
	struct mas m;
	u64 va = VA(6);
	tlb_map(1, 9, va, (u64)pages[0], TSIZE_4K, 0, 0, 0);
	tlb_map(0, 0, va + 0x1000, (u64)pages[0], TSIZE_4K, 0, 0, 0);
	mtspr(SPRN_MMUCSR0, MMUCSR0_TLB1FI);
	int spins = 0;
	while ((mfspr(SPRN_MMUCSR0) & MMUCSR0_TLB1FI) && spins < 1000)
		spins++;
	CHECK(!tlb_search_pid(va, 0, &m) && tlb_search_pid(va + 0x1000, 0, &m),
	      "MMUCSR0[TLB1FI] clears the TLB1 entry, not TLB0 (spins %d)", spins);
	tlb_map(1, 9, va, (u64)pages[0], TSIZE_4K, 4, 0, 0);
	mtspr(SPRN_MAS6, MAS6_SPID(3));
	__asm__ volatile("isync; tlbilx 1,0,%0; msync; isync" : : "r"(0UL) : "memory");
	CHECK(tlb_search_pid(va, 4, &m) && tlb_search_pid(va + 0x1000, 0, &m), "tlbilx 1 (PID 3) leaves TID 4 and TID 0 entries");
	mtspr(SPRN_MAS6, MAS6_SPID(4));
	__asm__ volatile("isync; tlbilx 1,0,%0; msync; isync" : : "r"(0UL) : "memory");
	CHECK(!tlb_search_pid(va, 4, &m) && tlb_search_pid(va + 0x1000, 0, &m), "tlbilx 1 (PID 4) removes only the TID 4 entry");
	__asm__ volatile("tlbilx 0,0,%0; msync; isync" : : "r"(0UL) : "memory");
	CHECK(!tlb_search_pid(va + 0x1000, 0, &m), "tlbilx 0 removes the TLB0 entry; the IPROT ones survive");
}

int test_main(void)
{
	environment();
	tlbsx_tlbwe_tlb1();
	tlbsx_tlbwe_pid();
	tlbilx_va();
	isize_sas();
	tlbre();
	ea64();
	sprs();
	return 0;
}
