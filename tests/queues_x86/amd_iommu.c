// SPDX-License-Identifier: GPL-2.0-only
/*
 * examples/amd_iommu.inv natively on x86-64 against a fake AMD IOMMU
 * command buffer (consumer.h): head 0x2000 / tail 0x2008 as plain memory,
 * 16-byte commands, a completion semaphore in memory.
 *
 * The oracle is C transcribed from the kernel (facts only, transcribed):
 * drivers/iommu/amd/iommu.c (6.1) build_inv_address, build_inv_iommu_pages,
 * build_completion_wait (struct iommu_cmd: four u32 data[], CMD_SET_TYPE),
 * here prefixed kernel_ (the generated build_inv_iommu_pages has the name),
 * amd_iommu_types.h (6.1) CMD_* values, include/linux/iommu-helper.h
 * iommu_num_pages. The semaphore's physical address is its address here
 * (iommu_virt_to_phys), the semaphore value the caller's (the kernel's
 * ++iommu->cmd_sem_val).
 *
 * argv[1] == "neg": only the first case, with QX_BREAK compiled in (the
 * oracle's domain id off by one): it must fail.
 */
#include "consumer.h"
#include "amd_iommu.h"

typedef uint64_t u64;
typedef uint32_t u32;
typedef uint16_t u16;

#define PAGE_SHIFT 12
#define PAGE_SIZE (1UL << PAGE_SHIFT)
#define PAGE_MASK (~(PAGE_SIZE - 1))
#define DIV_ROUND_UP(n, d) (((n) + (d) - 1) / (d))
#define lower_32_bits(n) ((u32)((n) & 0xffffffff))
#define upper_32_bits(n) ((u32)(((n) >> 16) >> 16))

#define CMD_COMPL_WAIT 0x01
#define CMD_INV_IOMMU_PAGES 0x03
#define CMD_COMPL_WAIT_STORE_MASK 0x01
#define CMD_INV_IOMMU_PAGES_SIZE_MASK 0x01
#define CMD_INV_IOMMU_PAGES_PDE_MASK 0x02
#define CMD_INV_IOMMU_ALL_PAGES_ADDRESS 0x7fffffffffffffffULL
#define CMD_SET_TYPE(cmd, t) ((cmd)->data[1] |= ((t) << 28))

struct iommu_cmd {
	u32 data[4];
};

static int fls64(u64 x)
{
	return x ? 64 - __builtin_clzll(x) : 0;
}

static unsigned long iommu_num_pages(unsigned long addr, unsigned long len,
				     unsigned long io_page_size)
{
	unsigned long size = (addr & (io_page_size - 1)) + len;

	return DIV_ROUND_UP(size, io_page_size);
}

static void kernel_build_completion_wait(struct iommu_cmd *cmd, u64 paddr, u64 data)
{
	memset(cmd, 0, sizeof(*cmd));
	cmd->data[0] = lower_32_bits(paddr) | CMD_COMPL_WAIT_STORE_MASK;
	cmd->data[1] = upper_32_bits(paddr);
	cmd->data[2] = lower_32_bits(data);
	cmd->data[3] = upper_32_bits(data);
	CMD_SET_TYPE(cmd, CMD_COMPL_WAIT);
}

static inline u64 kernel_build_inv_address(u64 address, size_t size)
{
	u64 pages, end, msb_diff;

	pages = iommu_num_pages(address, size, PAGE_SIZE);

	if (pages == 1)
		return address & PAGE_MASK;

	end = address + size - 1;

	msb_diff = fls64(end ^ address) - 1;

	if (msb_diff > 51) {
		address = CMD_INV_IOMMU_ALL_PAGES_ADDRESS;
	} else {
		address |= (1ull << msb_diff) - 1;
	}

	address &= PAGE_MASK;

	return address | CMD_INV_IOMMU_PAGES_SIZE_MASK;
}

static void kernel_build_inv_iommu_pages(struct iommu_cmd *cmd, u64 address, size_t size, u16 domid,
				  int pde)
{
	u64 inv_address = kernel_build_inv_address(address, size);

#ifdef QX_BREAK
	domid += 1;
#endif
	memset(cmd, 0, sizeof(*cmd));
	cmd->data[1] |= domid;
	cmd->data[2] = lower_32_bits(inv_address);
	cmd->data[3] = upper_32_bits(inv_address);
	CMD_SET_TYPE(cmd, CMD_INV_IOMMU_PAGES);
	if (pde)
		cmd->data[2] |= CMD_INV_IOMMU_PAGES_PDE_MASK;
}

/* The 16 bytes as the ring holds them: data[0] lowest. */
static void words(const struct iommu_cmd *c, uint64_t w[2])
{
	w[0] = c->data[0] | (uint64_t)c->data[1] << 32;
	w[1] = c->data[2] | (uint64_t)c->data[3] << 32;
}

/* The device side: COMPLETION_WAIT with S stores its data (64 bits). */
int dev_is_completion(const uint64_t w[2], uint64_t *addr, uint64_t *value, unsigned *width)
{
	if ((w[0] >> 60) != CMD_COMPL_WAIT || !(w[0] & CMD_COMPL_WAIT_STORE_MASK))
		return 0;
	*addr = w[0] & 0x000ffffffffffff8ULL;
	*value = w[1];
	*width = 64;
	return 1;
}

void dev_describe(const uint64_t w[2], char *buf, size_t n)
{
	switch (w[0] >> 60) {
	case CMD_INV_IOMMU_PAGES:
		snprintf(buf, n, "INVALIDATE_IOMMU_PAGES domid=%#llx s=%d pde=%d addr=%#llx",
			 (unsigned long long)((w[0] >> 32) & 0xffff), (int)(w[1] & 1),
			 (int)(w[1] >> 1) & 1, (unsigned long long)(w[1] & PAGE_MASK));
		break;
	case CMD_COMPL_WAIT:
		snprintf(buf, n, "COMPLETION_WAIT s=%d i=%d f=%d addr=%#llx data=%#llx", (int)(w[0] & 1),
			 (int)(w[0] >> 1) & 1, (int)(w[0] >> 2) & 1,
			 (unsigned long long)(w[0] & 0x000ffffffffffff8ULL), (unsigned long long)w[1]);
		break;
	default:
		snprintf(buf, n, "opcode %d", (int)(w[0] >> 60));
	}
}

static uint8_t mmio[0x3000] __attribute__((aligned(4096)));
static uint64_t sem __attribute__((aligned(8)));
static uint64_t sem_val = 0x100000000ULL; /* past 32 bits: data[3] is used */
static struct qx_dev dev = {.mmio = mmio, .head_off = 0x2000, .tail_off = 0x2008};

static uint64_t semv(void)
{
	return __atomic_load_n(&sem, __ATOMIC_ACQUIRE);
}

static uint32_t tail_reg(void)
{
	return __atomic_load_n((uint32_t *)(mmio + 0x2008), __ATOMIC_ACQUIRE);
}

static void expect_pages(u64 address, u64 size, u16 domid, int pde, u64 val)
{
	struct iommu_cmd c;
	uint64_t w[2];
	kernel_build_inv_iommu_pages(&c, address, size, domid, pde);
	words(&c, w);
	qx_expect(&dev, w);
	kernel_build_completion_wait(&c, (uintptr_t)&sem, val);
	words(&c, w);
	qx_expect(&dev, w);
}

static long call_pages(u64 address, u64 size, u64 domid, u64 pde, u64 val, double *us)
{
	double t0 = qx_now_us();
	long r = inv_iommu_pages_sync(mmio, dev.ring, dev.log2n, address, size, domid, pde, &sem,
				      (uintptr_t)&sem, val);
	*us = qx_now_us() - t0;
	return r;
}

static void case_pages(const char *name, unsigned log2n, uint32_t at, u64 address, u64 size, u64 domid,
		       u64 pde, long done_delay_us)
{
	double us;
	u64 val = ++sem_val;
	qx_reset(&dev, log2n, at);
	dev.done_delay_us = done_delay_us;
	dev.verbose = 1;
	expect_pages(address, size, (u16)domid, pde != 0, val);
	printf("case %s: [%#llx +%#llx) domid=%#llx pde=%d ring 2^%u at %#x\n", name,
	       (unsigned long long)address, (unsigned long long)size, (unsigned long long)domid,
	       (int)pde, log2n, at);
	qx_start(&dev);
	long r = call_pages(address, size, domid, pde, val, &us);
	int drained = qx_finish(&dev);
	CHECK(r == 0, "%s: returns 0 (%ld) in %.1f us", name, r, us);
	CHECK(drained && dev.fails == 0 && dev.ngot == 2,
	      "%s: the IOMMU took the kernel's 2 commands (%d taken, %d wrong)", name, dev.ngot, dev.fails);
	CHECK(semv() == val && dev.completions == 1, "%s: semaphore %#llx stored once", name,
	      (unsigned long long)semv());
	uint32_t mask = (16u << log2n) - 1;
	CHECK(tail_reg() == ((at + 32) & mask) && dev.tail_moves == 1,
	      "%s: one tail write for both commands, to %#x (%d moves)", name, (at + 32) & mask,
	      dev.tail_moves);
}

/*
 * domain_flush_pages() with amd_iommu_np_cache set (drivers/iommu/amd/
 * iommu.c, Linux 6.1): the naturally aligned pieces it flushes one by one.
 */
static int kernel_np_pieces(u64 address, u64 size, u64 piece_addr[], u64 piece_size[])
{
	int n = 0;

	while (size != 0) {
		int addr_alignment = address ? __builtin_ctzll(address) : 0; /* __ffs */
		int size_alignment = fls64(size) - 1;                        /* __fls */
		int min_alignment;
		u64 flush_size;

		if ((unsigned long)address != 0)
			min_alignment = addr_alignment < size_alignment ? addr_alignment : size_alignment;
		else
			min_alignment = size_alignment;

		flush_size = 1ul << min_alignment;

		piece_addr[n] = address;
		piece_size[n] = flush_size;
		n++;
		address += flush_size;
		size -= flush_size;
	}
	return n;
}

static void case_np(const char *name, u64 address, u64 size, u64 domid, u64 pde)
{
	static u64 pa[256], ps[256];
	struct iommu_cmd c;
	uint64_t w[2];
	double t0, us;
	int n = kernel_np_pieces(address, size, pa, ps);
	u64 val = ++sem_val;

	qx_reset(&dev, 9, 0x100);
	dev.done_delay_us = 0;
	dev.verbose = 0;
	for (int i = 0; i < n; i++) {
		kernel_build_inv_iommu_pages(&c, pa[i], ps[i], (u16)domid, pde != 0);
		words(&c, w);
		qx_expect(&dev, w);
	}
	kernel_build_completion_wait(&c, (uintptr_t)&sem, val);
	words(&c, w);
	qx_expect(&dev, w);
	printf("case np-%s: [%#llx +%#llx), the kernel flushes %d pieces\n", name,
	       (unsigned long long)address, (unsigned long long)size, n);
	qx_start(&dev);
	t0 = qx_now_us();
	long r = inv_iommu_pages_np_sync(mmio, dev.ring, dev.log2n, address, size, domid, pde, &sem,
					 (uintptr_t)&sem, val);
	us = qx_now_us() - t0;
	int drained = qx_finish(&dev);
	CHECK(r == 0, "np-%s: returns 0 (%ld) in %.1f us", name, r, us);
	CHECK(drained && dev.fails == 0 && dev.ngot == n + 1,
	      "np-%s: the IOMMU took the kernel's %d pieces and the wait (%d taken, %d wrong)", name, n,
	      dev.ngot, dev.fails);
	CHECK(semv() == val && dev.completions == 1 && dev.tail_moves == 1,
	      "np-%s: semaphore stored once, one tail write (%d moves)", name, dev.tail_moves);
}

static void case_wait_only(void)
{
	double t0, us;
	struct iommu_cmd c;
	uint64_t w[2];
	u64 val = ++sem_val;
	qx_reset(&dev, 9, 0x1ff0);
	dev.verbose = 1;
	kernel_build_completion_wait(&c, (uintptr_t)&sem, val);
	words(&c, w);
	qx_expect(&dev, w);
	printf("case completion-wait: ring 2^9 at 0x1ff0\n");
	qx_start(&dev);
	t0 = qx_now_us();
	long r = completion_wait(mmio, dev.ring, dev.log2n, &sem, (uintptr_t)&sem, val);
	us = qx_now_us() - t0;
	int drained = qx_finish(&dev);
	CHECK(r == 0 && drained && dev.fails == 0 && dev.ngot == 1 && semv() == val && tail_reg() == 0,
	      "completion-wait: returns %ld in %.1f us, the kernel's COMPLETION_WAIT, tail wrapped to 0", r,
	      us);
}

static void case_full(void)
{
	double us;
	u64 val = ++sem_val;
	qx_reset(&dev, 3, 0x40);
	dev.verbose = 1;
	for (int i = 0; i < 6; i++) {
		struct iommu_cmd c;
		uint64_t w[2];
		kernel_build_inv_iommu_pages(&c, 0, ~0ULL, (u16)(100 + i), 1);
		words(&c, w);
		qx_prefill(&dev, w);
	}
	expect_pages(0x200000, 0x200000, 7, 0, val);
	dev.hold = 1;
	dev.start_delay_us = 2000;
	dev.entry_delay_us = 200;
	printf("case full: ring 2^3, 6 commands pending, the IOMMU takes nothing before the tail moves, then 2 ms late, 200 us per command\n");
	qx_start(&dev);
	long r = call_pages(0x200000, 0x200000, 7, 0, val, &us);
	int drained = qx_finish(&dev);
	CHECK(r == 0, "full: returns 0 (%ld) after %.1f us", r, us);
	CHECK(drained && dev.fails == 0 && dev.ngot == 8, "full: 8 commands in order (%d taken, %d wrong)",
	      dev.ngot, dev.fails);
	CHECK(dev.max_pending == 7, "full: the buffer was full (7 of 8 entries pending at most: %u)",
	      dev.max_pending);
	CHECK(dev.tail_moves == 2,
	      "full: tail written with INVALIDATE_IOMMU_PAGES while waiting, then with COMPLETION_WAIT (%d moves)",
	      dev.tail_moves);
	CHECK(us > 2000 && semv() == val, "full: the call waited for the IOMMU (%.1f us)", us);
}

static void case_many(void)
{
	double us, total = 0;
	int bad = 0;
	qx_reset(&dev, 3, 0x70);
	qx_start(&dev);
	for (int i = 0; i < 100; i++) {
		u64 address = 0x100000000ULL + (u64)i * 0x5123;
		u64 size = (u64)(i % 9 + 1) * 0x1000 - (u64)(i % 3);
		u64 val = ++sem_val;
		expect_pages(address, size, (u16)i, i & 1, val);
		long r = call_pages(address, size, (u64)i, (u64)(i & 1), val, &us);
		total += us;
		if (r != 0 || semv() != val)
			bad++;
	}
	int drained = qx_finish(&dev);
	CHECK(bad == 0 && drained && dev.fails == 0 && dev.ngot == 200 && dev.completions == 100,
	      "many: 100 calls, 200 commands on a 2^3 buffer, all the kernel's (%d bad returns, %d wrong), %.1f us a call",
	      bad, dev.fails, total / 100);
}

static void case_timeout(void)
{
	double us;
	u64 before = semv();
	qx_reset(&dev, 9, 0);
	dev.paused = 1;
	qx_start(&dev);
	long r = call_pages(0x1000, 0x1000, 1, 0, ++sem_val, &us);
	__atomic_store_n(&dev.stop, 1, __ATOMIC_RELEASE);
	pthread_join(dev.thread, NULL);
	CHECK(r == -110, "timeout: returns -110 (%ld) after %.0f ms", r, us / 1000);
	CHECK(semv() == before && tail_reg() == 32,
	      "timeout: semaphore untouched, both commands published (tail 0x20)");
}

static void case_full_timeout(void)
{
	double us;
	qx_reset(&dev, 3, 0);
	for (int i = 0; i < 7; i++) {
		struct iommu_cmd c;
		uint64_t w[2];
		kernel_build_inv_iommu_pages(&c, 0, ~0ULL, (u16)i, 1);
		words(&c, w);
		qx_prefill(&dev, w);
	}
	uint64_t slot7[2] = {dev.ring[14], dev.ring[15]};
	dev.paused = 1;
	qx_start(&dev);
	long r = call_pages(0x1000, 0x1000, 1, 0, ++sem_val, &us);
	__atomic_store_n(&dev.stop, 1, __ATOMIC_RELEASE);
	pthread_join(dev.thread, NULL);
	CHECK(r == -110, "full timeout: returns -110 (%ld) after %.0f ms", r, us / 1000);
	CHECK(dev.ring[14] == slot7[0] && dev.ring[15] == slot7[1] && tail_reg() == 0x70,
	      "full timeout: the free entry untouched, tail still 0x70");
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc > 1 && !strcmp(argv[1], "neg")) {
		case_pages("neg", 9, 0, 0x7f0000201000ULL, 0x1000, 0x12, 0, 0);
		return qx_fails != 0;
	}
	/* One page: S 0, the page address. */
	case_pages("page", 9, 0, 0x7f0000201000ULL, 0x1000, 0x12, 0, 0);
	/* 2M aligned: S, the address with bits 20:12 set. */
	case_pages("2M", 9, 0, 0x40000000ULL, 0x200000, 0x12, 0, 100);
	/* 1G with PDE. */
	case_pages("1G-pde", 9, 0, 0x40000000ULL, 0x40000000ULL, 0x12, 1, 0);
	/* Start and end differ in bit 52: CMD_INV_IOMMU_ALL_PAGES_ADDRESS. */
	case_pages("all-pages", 9, 0, 0xffffffffff000ULL, 0x2000, 0x12, 1, 0);
	/* Everything. */
	case_pages("everything", 9, 0, 0, ~0ULL, 0x12, 1, 0);
	/* Unaligned: [0x1234, 0x3234) is three pages. */
	case_pages("unaligned", 9, 0, 0x1234, 0x2000, 0x12, 0, 0);
	/* Inside one page, unaligned; a domain id past 16 bits. */
	case_pages("in-page", 9, 0, 0x5010, 0x20, 0x1abcd, 0, 0);
	/* Wrap: INVALIDATE_IOMMU_PAGES in the last slot, COMPLETION_WAIT in 0. */
	case_pages("wrap", 3, 0x70, 0x7f0000201000ULL, 0x1000, 0x12, 0, 50);
	case_pages("wrap-512", 9, 0x1ff0, 0x40000000ULL, 0x200000, 0x12, 0, 0);
	/* A slow IOMMU: 2 ms before the semaphore store. */
	case_pages("slow", 9, 0x100, 0x7f0000201000ULL, 0x1000, 0x12, 0, 2000);
	/* NpCache: naturally aligned pieces (domain_flush_pages). */
	case_np("aligned-2M", 0x40000000ULL, 0x200000, 0x12, 0);
	case_np("unaligned", 0x7f0000201000ULL, 0x7000, 0x12, 1);
	case_np("odd", 0x1234, 0x5555, 0x1abcd, 0);
	case_np("from-0", 0, 0x3000, 7, 0);
	case_np("everything", 0, ~0ULL, 7, 1);
	case_np("top", 0xffffffffff000ULL, 0x2000, 3, 0);
	case_np("most-pieces", 1, ~0ULL - 1, 9, 0);
	case_wait_only();
	case_full();
	case_many();
	case_timeout();
	case_full_timeout();
	printf(qx_fails ? "FAILED %d\n" : "PASSED\n", qx_fails);
	return qx_fails != 0;
}
