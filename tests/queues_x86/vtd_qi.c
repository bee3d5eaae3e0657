// SPDX-License-Identifier: GPL-2.0-only
/*
 * examples/vtd_qi.inv natively on x86-64 against a fake VT-d invalidation
 * queue (consumer.h): IQH 0x80 / IQT 0x88 as plain memory, a ring of
 * 128-bit descriptors, the status word of the invalidation wait.
 *
 * The oracle is C transcribed from the kernel (facts only, transcribed):
 *  - drivers/iommu/intel/iommu.h (6.1): QI_* descriptor macros, cap_*();
 *  - dmar.c (6.1) qi_flush_iotlb and qi_flush_context: the descriptor each
 *    passes to qi_submit_sync; qi_submit_sync's wait descriptor
 *    (QI_IWD_STATUS_DATA(QI_DONE) | QI_IWD_STATUS_WRITE | QI_IWD_TYPE, the
 *    status word's physical address) and desc_status = QI_IN_USE before
 *    the tail write;
 *  - the decision between PSI and DSI of drivers/iommu/intel/cache.c (6.11)
 *    calculate_psi_aligned_address and cache_tag_flush_iotlb, as
 *    tests/ranges/kernel_ranges.c has it for the register interface;
 *  - the invalidation hint: 6.1's qi_flush_iotlb has `int ih = 0` (the
 *    hint its callers put in bit 6 of addr is cleared by QI_IOTLB_ADDR);
 *    the 2025 fix of qi_desc_iotlb takes `ih = addr & 1`, which is what
 *    IH_FIXED selects and what the spec does (for ih 0 the two agree).
 *
 * argv[1] == "neg": only the first case, with QX_BREAK compiled in (the
 * oracle's DID off by one): it must fail.
 */
#include "consumer.h"
#include "vtd_qi.h"

#define IH_FIXED 1

typedef uint64_t u64;
typedef uint16_t u16;
typedef uint8_t u8;

#define VTD_PAGE_SHIFT 12
#define VTD_PAGE_SIZE (1UL << VTD_PAGE_SHIFT)
#define VTD_PAGE_MASK (((u64)-1) << VTD_PAGE_SHIFT)
#define PAGE_SIZE VTD_PAGE_SIZE
#define PAGE_MASK (~(PAGE_SIZE - 1))
#define PAGE_ALIGN(x) (((x) + PAGE_SIZE - 1) & PAGE_MASK)
#define IOVA_PFN(addr) ((addr) >> VTD_PAGE_SHIFT)
#define ALIGN_DOWN(x, a) ((x) & ~((a) - 1))
#define MAX_AGAW_WIDTH 64
#define MAX_AGAW_PFN_WIDTH (MAX_AGAW_WIDTH - VTD_PAGE_SHIFT)

#define DMA_TLB_FLUSH_GRANU_OFFSET 60
#define DMA_TLB_GLOBAL_FLUSH (((u64)1) << 60)
#define DMA_TLB_DSI_FLUSH (((u64)2) << 60)
#define DMA_TLB_PSI_FLUSH (((u64)3) << 60)
#define DMA_CCMD_INVL_GRANU_OFFSET 61
#define DMA_CCMD_GLOBAL_INVL (((u64)1) << 61)
#define DMA_CCMD_DOMAIN_INVL (((u64)2) << 61)
#define DMA_CCMD_DEVICE_INVL (((u64)3) << 61)

#define cap_read_drain(c) (((c) >> 55) & 1)
#define cap_write_drain(c) (((c) >> 54) & 1)
#define cap_max_amask_val(c) (((c) >> 48) & 0x3f)
#define cap_pgsel_inv(c) (((c) >> 39) & 1)

enum { QI_FREE, QI_IN_USE, QI_DONE, QI_ABORT };
#define QI_CC_TYPE 0x1
#define QI_IOTLB_TYPE 0x2
#define QI_IWD_TYPE 0x5
#define QI_IWD_STATUS_DATA(d) (((u64)d) << 32)
#define QI_IWD_STATUS_WRITE (((u64)1) << 5)
#define QI_IOTLB_DID(did) (((u64)did) << 16)
#define QI_IOTLB_DR(dr) (((u64)dr) << 7)
#define QI_IOTLB_DW(dw) (((u64)dw) << 6)
#define QI_IOTLB_GRAN(gran) (((u64)gran) >> (DMA_TLB_FLUSH_GRANU_OFFSET - 4))
#define QI_IOTLB_ADDR(addr) (((u64)addr) & VTD_PAGE_MASK)
#define QI_IOTLB_IH(ih) (((u64)ih) << 6)
#define QI_IOTLB_AM(am) (((u8)am) & 0x3f)
#define QI_CC_FM(fm) (((u64)fm) << 48)
#define QI_CC_SID(sid) (((u64)sid) << 32)
#define QI_CC_DID(did) (((u64)did) << 16)
#define QI_CC_GRAN(gran) (((u64)gran) >> (DMA_CCMD_INVL_GRANU_OFFSET - 4))

struct qi_desc {
	u64 qw0, qw1, qw2, qw3;
};

static int fls64(u64 x)
{
	return x ? 64 - __builtin_clzll(x) : 0;
}

/* qi_flush_iotlb (dmar.c 6.1) / qi_desc_iotlb (iommu.h, with the fix). */
static void qi_flush_iotlb_desc(struct qi_desc *desc, u64 cap, u16 did, u64 addr,
				unsigned int size_order, u64 type)
{
	u8 dw = 0, dr = 0;
#ifdef IH_FIXED
	int ih = addr & 1;
#else
	int ih = 0;
#endif

	if (cap_write_drain(cap))
		dw = 1;

	if (cap_read_drain(cap))
		dr = 1;

#ifdef QX_BREAK
	did += 1;
#endif
	desc->qw0 = QI_IOTLB_DID(did) | QI_IOTLB_DR(dr) | QI_IOTLB_DW(dw)
		| QI_IOTLB_GRAN(type) | QI_IOTLB_TYPE;
	desc->qw1 = QI_IOTLB_ADDR(addr) | QI_IOTLB_IH(ih)
		| QI_IOTLB_AM(size_order);
	desc->qw2 = 0;
	desc->qw3 = 0;
}

/* qi_flush_context (dmar.c 6.1). */
static void qi_flush_context_desc(struct qi_desc *desc, u16 did, u16 sid, u8 fm, u64 type)
{
	desc->qw0 = QI_CC_FM(fm) | QI_CC_SID(sid) | QI_CC_DID(did)
			| QI_CC_GRAN(type) | QI_CC_TYPE;
	desc->qw1 = 0;
	desc->qw2 = 0;
	desc->qw3 = 0;
}

/* qi_submit_sync's wait descriptor (dmar.c 6.1, options 0). */
static void qi_wait_desc(struct qi_desc *wait_desc, u64 status_phys)
{
	wait_desc->qw0 = QI_IWD_STATUS_DATA(QI_DONE) |
			QI_IWD_STATUS_WRITE | QI_IWD_TYPE;
	wait_desc->qw1 = status_phys;
	wait_desc->qw2 = 0;
	wait_desc->qw3 = 0;
}

/* calculate_psi_aligned_address (cache.c 6.11). */
static unsigned long aligned_nrpages(unsigned long host_addr, unsigned long size)
{
	host_addr &= ~PAGE_MASK;
	return PAGE_ALIGN(host_addr + size) >> VTD_PAGE_SHIFT;
}

static unsigned long calculate_psi_aligned_address(unsigned long start, unsigned long end,
						   unsigned long *_pages, unsigned long *_mask)
{
	unsigned long pages = aligned_nrpages(start, end - start + 1);
	unsigned long aligned_pages = 1UL << fls64(pages - 1); /* __roundup_pow_of_two */
	unsigned long bitmask = aligned_pages - 1;
	unsigned long mask = (unsigned long)(fls64(aligned_pages) - 1);
	unsigned long pfn = IOVA_PFN(start);

	if (bitmask & pfn) {
		unsigned long end_pfn = pfn + pages - 1, shared_bits;

		shared_bits = ~(pfn ^ end_pfn) & ~bitmask;
		mask = shared_bits ? (unsigned long)__builtin_ctzl(shared_bits) : MAX_AGAW_PFN_WIDTH;
		aligned_pages = 1UL << mask;
	}
	*_pages = aligned_pages;
	*_mask = mask;
	return ALIGN_DOWN(start, VTD_PAGE_SIZE << mask);
}

/* cache_tag_flush_range + cache_tag_flush_iotlb (cache.c 6.11, second-level
 * domain, queued invalidation): the IOTLB descriptor for [start, end]. */
static void flush_range_desc(struct qi_desc *desc, u64 cap, u16 did, unsigned long start,
			     unsigned long end, int ih)
{
	unsigned long pages, mask, addr;
	u64 type = DMA_TLB_PSI_FLUSH;

	if (start == 0 && end == ~0UL) {
		addr = 0;
		pages = -1;
		mask = MAX_AGAW_PFN_WIDTH;
	} else {
		addr = calculate_psi_aligned_address(start, end, &pages, &mask);
	}
	if (!cap_pgsel_inv(cap) || mask > cap_max_amask_val(cap) || pages == (unsigned long)-1) {
		addr = 0;
		mask = 0;
		ih = 0;
		type = DMA_TLB_DSI_FLUSH;
	}
	qi_flush_iotlb_desc(desc, cap, did, addr | ih, (unsigned int)mask, type);
}

/* The device side: an invalidation wait with SW stores its status data. */
int dev_is_completion(const uint64_t w[2], uint64_t *addr, uint64_t *value, unsigned *width)
{
	if ((w[0] & 0xf) != QI_IWD_TYPE || !(w[0] & QI_IWD_STATUS_WRITE))
		return 0;
	*addr = w[1] & ~3ULL;
	*value = w[0] >> 32;
	*width = 32;
	return 1;
}

void dev_describe(const uint64_t w[2], char *buf, size_t n)
{
	static const char *gran[] = {"res", "global", "DSI", "PSI"};
	switch (w[0] & 0xf) {
	case QI_IOTLB_TYPE:
		snprintf(buf, n, "IOTLB %s did=%#llx dr=%d dw=%d am=%d ih=%d addr=%#llx",
			 gran[(w[0] >> 4) & 3], (unsigned long long)((w[0] >> 16) & 0xffff),
			 (int)(w[0] >> 7) & 1, (int)(w[0] >> 6) & 1, (int)(w[1] & 0x3f),
			 (int)(w[1] >> 6) & 1, (unsigned long long)(w[1] & VTD_PAGE_MASK));
		break;
	case QI_CC_TYPE:
		snprintf(buf, n, "CC gran=%d did=%#llx sid=%#llx fm=%d", (int)(w[0] >> 4) & 3,
			 (unsigned long long)((w[0] >> 16) & 0xffff),
			 (unsigned long long)((w[0] >> 32) & 0xffff), (int)(w[0] >> 48) & 3);
		break;
	case QI_IWD_TYPE:
		snprintf(buf, n, "WAIT sw=%d fn=%d data=%u addr=%#llx", (int)(w[0] >> 5) & 1,
			 (int)(w[0] >> 6) & 1, (unsigned)(w[0] >> 32), (unsigned long long)w[1]);
		break;
	default:
		snprintf(buf, n, "type %d", (int)(w[0] & 0xf));
	}
}

static uint8_t mmio[0x1000] __attribute__((aligned(4096)));
static uint32_t status __attribute__((aligned(8)));
static struct qx_dev dev = {.mmio = mmio, .head_off = 0x80, .tail_off = 0x88};

static uint32_t st(void)
{
	return __atomic_load_n(&status, __ATOMIC_ACQUIRE);
}

#define CAP(pgsel, mamv, dr, dw) \
	(((u64)(pgsel) << 39) | ((u64)(mamv) << 48) | ((u64)(dr) << 55) | ((u64)(dw) << 54))
/* A Skylake-SP like unit: PSI, MAMV 9 (2M), read and write draining. */
#define CAP_TYPICAL CAP(1, 9, 1, 1)

static void expect_iotlb(u64 cap, u16 did, unsigned long start, unsigned long end, int ih)
{
	struct qi_desc d, w;
	flush_range_desc(&d, cap, did, start, end, ih);
	qi_wait_desc(&w, (uintptr_t)&status);
	uint64_t a[2] = {d.qw0, d.qw1}, b[2] = {w.qw0, w.qw1};
	qx_expect(&dev, a);
	qx_expect(&dev, b);
}

static long call_iotlb(u64 did, u64 start, u64 end, u64 cap, u64 ih, double *us)
{
	double t0 = qx_now_us();
	long r = qi_flush_iotlb(mmio, dev.ring, dev.log2n, did, start, end, cap, ih, &status,
				(uintptr_t)&status);
	*us = qx_now_us() - t0;
	return r;
}

/* One qi_flush_iotlb against a running consumer; everything checked. */
static void case_iotlb(const char *name, unsigned log2n, uint32_t at, u64 cap, u64 did, u64 start,
		       u64 end, u64 ih, long done_delay_us)
{
	double us;
	qx_reset(&dev, log2n, at);
	dev.done_delay_us = done_delay_us;
	dev.verbose = 1;
	status = QI_FREE;
	expect_iotlb(cap, (u16)did, start, end, (int)ih);
	printf("case %s: did=%#llx [%#llx, %#llx] cap=%#llx ih=%d ring 2^%u at %#x\n", name,
	       (unsigned long long)did, (unsigned long long)start, (unsigned long long)end,
	       (unsigned long long)cap, (int)ih, log2n, at);
	qx_start(&dev);
	long r = call_iotlb(did, start, end, cap, ih, &us);
	int drained = qx_finish(&dev);
	CHECK(r == 0, "%s: returns 0 (%ld) in %.1f us", name, r, us);
	CHECK(drained && dev.fails == 0 && dev.ngot == 2,
	      "%s: the IOMMU took the kernel's 2 descriptors (%d taken, %d wrong)", name, dev.ngot,
	      dev.fails);
	CHECK(st() == QI_DONE && dev.completions == 1, "%s: status QI_DONE written once (%u)", name,
	      st());
	uint32_t mask = (16u << log2n) - 1;
	CHECK(__atomic_load_n((uint32_t *)(mmio + 0x88), __ATOMIC_ACQUIRE) == ((at + 32) & mask),
	      "%s: IQT moved by two descriptors, to %#x", name, (at + 32) & mask);
}

static void case_context(const char *name, u64 did, u64 sid, u64 fm, u64 gran)
{
	double t0, us;
	struct qi_desc d, w;
	qx_reset(&dev, 8, 0);
	dev.verbose = 1;
	status = QI_FREE;
	qi_flush_context_desc(&d, (u16)did, (u16)sid, (u8)fm, gran << DMA_CCMD_INVL_GRANU_OFFSET);
	qi_wait_desc(&w, (uintptr_t)&status);
	uint64_t a[2] = {d.qw0, d.qw1}, b[2] = {w.qw0, w.qw1};
	qx_expect(&dev, a);
	qx_expect(&dev, b);
	printf("case %s: did=%#llx sid=%#llx fm=%d gran=%d\n", name, (unsigned long long)did,
	       (unsigned long long)sid, (int)fm, (int)gran);
	qx_start(&dev);
	t0 = qx_now_us();
	long r = qi_flush_context(mmio, dev.ring, dev.log2n, did, sid, fm, gran, &status,
				  (uintptr_t)&status);
	us = qx_now_us() - t0;
	int drained = qx_finish(&dev);
	CHECK(r == 0 && drained && dev.fails == 0 && dev.ngot == 2 && st() == QI_DONE,
	      "%s: returns %ld in %.1f us, the kernel's context-cache descriptor and wait (%d taken, %d wrong)",
	      name, r, us, dev.ngot, dev.fails);
}

/* A ring of 2^3 with 6 of its 7 usable entries pending (another caller's
 * DSIs) and an IOMMU that takes nothing before the tail moves, then
 * starts 2 ms late: the second descriptor must wait for space, and the
 * producer publishes the first while it waits (the only tail write before
 * the last one). */
static void case_full(void)
{
	double us;
	qx_reset(&dev, 3, 0x40);
	dev.verbose = 1;
	status = QI_FREE;
	for (int i = 0; i < 6; i++) {
		struct qi_desc d;
		flush_range_desc(&d, CAP_TYPICAL, (u16)(100 + i), 0, ~0UL, 0);
		uint64_t a[2] = {d.qw0, d.qw1};
		qx_prefill(&dev, a);
	}
	expect_iotlb(CAP_TYPICAL, 7, 0x200000, 0x3fffff, 0);
	dev.hold = 1;
	dev.start_delay_us = 2000;
	dev.entry_delay_us = 200;
	printf("case full: ring 2^3, 6 entries pending, the IOMMU takes nothing before the tail moves, then 2 ms late, 200 us per entry\n");
	qx_start(&dev);
	long r = call_iotlb(7, 0x200000, 0x3fffff, CAP_TYPICAL, 0, &us);
	int drained = qx_finish(&dev);
	CHECK(r == 0, "full: returns 0 (%ld) after %.1f us", r, us);
	CHECK(drained && dev.fails == 0 && dev.ngot == 8, "full: 8 descriptors in order (%d taken, %d wrong)",
	      dev.ngot, dev.fails);
	CHECK(dev.max_pending == 7, "full: the ring was full (7 of 8 entries pending at most: %u)",
	      dev.max_pending);
	CHECK(dev.tail_moves == 2,
	      "full: IQT written with the first descriptor while waiting, then with the wait (%d moves)",
	      dev.tail_moves);
	CHECK(us > 2000 && st() == QI_DONE, "full: the call waited for the IOMMU (%.1f us), QI_DONE", us);
}

/* 100 calls in a row on a ring of 2^3: it wraps 25 times. */
static void case_many(void)
{
	double us, total = 0;
	int bad = 0;
	qx_reset(&dev, 3, 0x70);
	qx_start(&dev);
	for (int i = 0; i < 100; i++) {
		u64 start = 0x100000000ULL + (u64)i * 0x5000;
		u64 end = start + (u64)(i % 7 + 1) * 0x1000 - 1;
		status = QI_FREE;
		expect_iotlb(CAP_TYPICAL, (u16)i, start, end, i & 1);
		long r = call_iotlb((u64)i, start, end, CAP_TYPICAL, (u64)(i & 1), &us);
		total += us;
		if (r != 0 || st() != QI_DONE)
			bad++;
	}
	int drained = qx_finish(&dev);
	CHECK(bad == 0 && drained && dev.fails == 0 && dev.ngot == 200 && dev.completions == 100,
	      "many: 100 calls, 200 descriptors on a 2^3 ring, all the kernel's (%d bad returns, %d wrong), %.1f us a call",
	      bad, dev.fails, total / 100);
}

/* The IOMMU takes nothing: the status poll runs out. */
static void case_timeout(void)
{
	double us;
	qx_reset(&dev, 8, 0);
	status = QI_FREE;
	dev.paused = 1;
	qx_start(&dev);
	long r = call_iotlb(1, 0x1000, 0x1fff, CAP_TYPICAL, 0, &us);
	__atomic_store_n(&dev.stop, 1, __ATOMIC_RELEASE);
	pthread_join(dev.thread, NULL);
	CHECK(r == -110, "timeout: returns -110 (%ld) after %.0f ms", r, us / 1000);
	CHECK(st() == QI_IN_USE, "timeout: status still QI_IN_USE (%u)", st());
	CHECK(__atomic_load_n((uint32_t *)(mmio + 0x88), __ATOMIC_ACQUIRE) == 32,
	      "timeout: both descriptors were published (IQT 0x20)");
}

/* The ring stays full: the wait for space runs out before any store. */
static void case_full_timeout(void)
{
	double us;
	qx_reset(&dev, 3, 0);
	for (int i = 0; i < 7; i++) {
		struct qi_desc d;
		flush_range_desc(&d, CAP_TYPICAL, (u16)i, 0, ~0UL, 0);
		uint64_t a[2] = {d.qw0, d.qw1};
		qx_prefill(&dev, a);
	}
	uint64_t slot7[2] = {dev.ring[14], dev.ring[15]};
	status = QI_FREE;
	dev.paused = 1;
	qx_start(&dev);
	long r = call_iotlb(1, 0x1000, 0x1fff, CAP_TYPICAL, 0, &us);
	__atomic_store_n(&dev.stop, 1, __ATOMIC_RELEASE);
	pthread_join(dev.thread, NULL);
	CHECK(r == -110, "full timeout: returns -110 (%ld) after %.0f ms", r, us / 1000);
	CHECK(dev.ring[14] == slot7[0] && dev.ring[15] == slot7[1] &&
		      __atomic_load_n((uint32_t *)(mmio + 0x88), __ATOMIC_ACQUIRE) == 0x70,
	      "full timeout: the free entry untouched, IQT still 0x70");
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc > 1 && !strcmp(argv[1], "neg")) {
		case_iotlb("neg", 8, 0, CAP_TYPICAL, 0x12, 0x7f0000201000ULL, 0x7f0000201fffULL, 0, 0);
		return qx_fails != 0;
	}
	/* One page: PSI, am 0. */
	case_iotlb("page", 8, 0, CAP_TYPICAL, 0x12, 0x7f0000201000ULL, 0x7f0000201fffULL, 0, 0);
	/* 2M aligned: PSI, am 9 (the unit's maximum). */
	case_iotlb("2M", 8, 0, CAP_TYPICAL, 0x12, 0x40000000ULL, 0x401fffffULL, 0, 100);
	/* 4M: mask 10 > MAMV 9, the DSI fallback. */
	case_iotlb("4M-dsi", 8, 0, CAP_TYPICAL, 0x12, 0x40000000ULL, 0x403fffffULL, 0, 0);
	/* 1G: DSI. */
	case_iotlb("1G-dsi", 8, 0, CAP_TYPICAL, 0x12, 0x40000000ULL, 0x7fffffffULL, 0, 0);
	/* Everything: DSI (pages == -1). */
	case_iotlb("all", 8, 0, CAP_TYPICAL, 0x12, 0, ~0ULL, 0, 0);
	/* No page-selective invalidation: DSI for one page. */
	case_iotlb("no-psi", 8, 0, CAP(0, 9, 1, 1), 0x12, 0x5000, 0x5fff, 0, 0);
	/* Unaligned: pfns 3 and 4 share bits from 3 up: am 3 at 0. */
	case_iotlb("unaligned", 8, 0, CAP_TYPICAL, 0x12, 0x3000, 0x4fff, 0, 0);
	/* Unaligned bytes inside pages: [0x3456, 0x5123] is pfns 3..5. */
	case_iotlb("unaligned-bytes", 8, 0, CAP_TYPICAL, 0x12, 0x3456, 0x5123, 0, 0);
	/* Two pages across a 2M boundary: mask 10 > 9, DSI. */
	case_iotlb("across-2M", 8, 0, CAP_TYPICAL, 0x12, 0x1ff000, 0x200fff, 0, 0);
	/* The hint (a leaf-only unmap), no draining, a DID past 16 bits. */
	case_iotlb("ih", 8, 0, CAP(1, 6, 0, 0), 0x12345, 0x10000, 0x17fff, 1, 0);
	/* Ring wrap: the IOTLB descriptor in the last slot, the wait in 0. */
	case_iotlb("wrap", 3, 0x70, CAP_TYPICAL, 0x12, 0x7f0000201000ULL, 0x7f0000201fffULL, 0, 50);
	case_iotlb("wrap-256", 8, 0xff0, CAP_TYPICAL, 0x12, 0x40000000ULL, 0x401fffffULL, 0, 0);
	/* A slow IOMMU: 2 ms before the status write. */
	case_iotlb("slow", 8, 0x100, CAP_TYPICAL, 0x12, 0x7f0000201000ULL, 0x7f0000201fffULL, 0, 2000);
	case_context("cc-global", 0, 0, 0, 1);
	case_context("cc-domain", 0x2a, 0, 0, 2);
	case_context("cc-device", 0x2a, 0x0308, 3, 3);
	case_full();
	case_many();
	case_timeout();
	case_full_timeout();
	printf(qx_fails ? "FAILED %d\n" : "PASSED\n", qx_fails);
	return qx_fails != 0;
}
