/*
 * Bare-metal driver for the VT-d invalidation-queue oracle (tests/vtd_qemu.rs,
 * docs/vtd-qemu.md). Runs under
 *   qemu-system-x86_64 -M q35 -device intel-iommu -kernel image.bin \
 *       -device isa-debug-exit,iobase=0xf4,iosize=4 -append MODE
 * in long mode, identity-mapped (start.S). It enables QEMU's invalidation
 * queue as Linux 6.1's __dmar_enable_qi does, calls the subject's two
 * functions (the C stand-in vtd_standin.c or a generated .S) for a list of
 * cases, checks what the registers and the status word say after each,
 * prints one line per case on COM1 and exits through isa-debug-exit with 0
 * (all checks passed), 1 (a check failed) or 3 (an exception). What QEMU
 * decoded is checked by the test from QEMU's trace; this file writes a
 * marker to a reserved DMAR register offset (MARKER: no register there,
 * the write changes nothing, but vtd_reg_write traces it) before and
 * after each case so that the trace can be cut into cases.
 *
 * The multiboot command line (-append) selects the mode: "main" (the
 * cases) or "timeout" (an invalid descriptor stops QEMU's queue; the
 * subject must return -110; then recovery as the kernel's qi_check_fault).
 */
typedef unsigned long u64;
typedef unsigned int u32;
typedef unsigned short u16;
typedef unsigned char u8;

long sd_qi_flush_iotlb(void *dmar, unsigned long *qi_ring, unsigned long long qi_log2n,
		       unsigned long long did, unsigned long long start, unsigned long long end,
		       unsigned long long cap, unsigned long long ih, unsigned int *status,
		       unsigned long long status_phys);
long sd_qi_flush_context(void *dmar, unsigned long *qi_ring, unsigned long long qi_log2n,
			 unsigned long long did, unsigned long long sid, unsigned long long fm,
			 unsigned long long gran, unsigned int *status,
			 unsigned long long status_phys);

void sd_exit(int status) __attribute__((noreturn));
long sd_call_checked(void *fn, const unsigned long args[10], unsigned long *bad);

#define DMAR_BASE 0xfed90000UL /* hw/i386/intel_iommu.c Q35_HOST_BRIDGE_IOMMU_ADDR */
#define COM1 0x3f8

/* drivers/iommu/intel/iommu.h (6.1) */
#define DMAR_VER_REG 0x0
#define DMAR_CAP_REG 0x8
#define DMAR_ECAP_REG 0x10
#define DMAR_GCMD_REG 0x18
#define DMAR_GSTS_REG 0x1c
#define DMAR_FSTS_REG 0x34
#define DMAR_IQH_REG 0x80
#define DMAR_IQT_REG 0x88
#define DMAR_IQA_REG 0x90
#define DMA_GCMD_QIE (1u << 26)
#define DMA_GSTS_QIES (1u << 26)
#define DMA_FSTS_IQE (1u << 4)
#define DMA_FSTS_ICE (1u << 5)
#define DMA_FSTS_ITE (1u << 6)
#define MARKER 0x4 /* reserved (VER is 32 bits): QEMU's vtd_mem_write default case, wmask 0 */

#define QI_LOG2N 8 /* QEMU: 2^(QS + 8) entries, so 256 is the smallest ring */
#define QI_ENTRIES (1u << QI_LOG2N)
#define QI_RING_BYTES (QI_ENTRIES * 16)

static unsigned long ring[QI_ENTRIES * 2] __attribute__((aligned(4096)));
static volatile u32 status_word __attribute__((aligned(8)));

/* ------------------------------------------------------------ I/O */

static inline void outb(u16 port, u8 v)
{
	__asm__ volatile("outb %0, %1" : : "a"(v), "Nd"(port));
}
static inline u8 inb(u16 port)
{
	u8 v;
	__asm__ volatile("inb %1, %0" : "=a"(v) : "Nd"(port));
	return v;
}
static inline u32 rd32(u32 off)
{
	return *(volatile u32 *)(DMAR_BASE + off);
}
static inline u64 rd64(u32 off)
{
	return *(volatile u64 *)(DMAR_BASE + off);
}
static inline void wr32(u32 off, u32 v)
{
	*(volatile u32 *)(DMAR_BASE + off) = v;
}
static inline void wr64(u32 off, u64 v)
{
	*(volatile u64 *)(DMAR_BASE + off) = v;
}

static void putc_(char c)
{
	while (!(inb(COM1 + 5) & 0x20)) /* LSR.THRE */
		;
	outb(COM1, (u8)c);
}
#include "../support/bare_metal.h"

void harness_exception(u64 vector, u64 error, u64 rip, u64 cr2)
{
	puts_("vtd-qemu: EXCEPTION");
	kv("vector", vector);
	kv("error", error);
	kv("rip", rip);
	kv("cr2", cr2);
	puts_("\n");
	sd_exit(3);
}

/* ------------------------------------------------------------ the queue */

static u64 cap;

static void marker(u32 id, u32 phase)
{
	wr32(MARKER, 0x5d000000u | (id << 8) | phase);
}

/*
 * __dmar_enable_qi (drivers/iommu/intel/dmar.c 6.1): IQT = 0, IQA = ring |
 * QS (0: one 4K page, 256 descriptors; DW = 0, legacy 128-bit: QEMU's
 * intel-iommu has no scalable mode unless x-scalable-mode=on), GCMD |= QIE,
 * wait for GSTS.QIES.
 */
static int qi_enable(void)
{
	int i;
	wr32(DMAR_IQT_REG, 0);
	wr64(DMAR_IQA_REG, (u64)ring | 0);
	wr32(DMAR_GCMD_REG, DMA_GCMD_QIE);
	for (i = 0; i < 1000; i++)
		if (rd32(DMAR_GSTS_REG) & DMA_GSTS_QIES)
			return 0;
	return -1;
}

/* ------------------------------------------------------------ the cases */

enum kind { IOTLB, CTX, WRAP };

/* VT-d CAP bits (iommu.h cap_pgsel_inv, cap_read_drain, cap_write_drain) */
#define CAP_PSI (1UL << 39)
#define CAP_DRD (1UL << 55)
#define CAP_DWD (1UL << 54)

struct tcase {
	const char *name;
	enum kind kind;
	u64 did;
	u64 start, end; /* IOTLB: bytes, end inclusive */
	u64 capclr;     /* CAP bits cleared for this case */
	u64 ih;
	u64 sid, fm, gran; /* CTX */
	u32 calls;         /* WRAP: consecutive one-page flushes */
};

static const struct tcase cases[] = {
	{"page", IOTLB, 1, 0x10000000, 0x10000fff},
	{"pages256", IOTLB, 2, 0x20000000, 0x20000000 + 256 * 0x1000 - 1},
	{"pages1000", IOTLB, 3, 0x7fff0000000, 0x7fff0000000 + 1000 * 0x1000 - 1},
	/* pfn 0x30001, 4 pages (0x123 in): not aligned to 4 pages, so the
	 * shared-bits mask: 3, the block at 0x30000000 */
	{"unaligned", IOTLB, 4, 0x30001123, 0x30001123 + 0x3000 - 1},
	/* 2 GiB: mask 19 > MAMV: domain-selective */
	{"dsi_big", IOTLB, 5, 0x80000000, 0xffffffff},
	{"dsi_all", IOTLB, 6, 0, ~0UL},
	{"dsi_nopsi", IOTLB, 7, 0x10000000, 0x10000fff, CAP_PSI},
	{"nodrain", IOTLB, 8, 0x40000000, 0x401fffff, CAP_DRD | CAP_DWD},
	{"ih", IOTLB, 9, 0x50000000, 0x50000fff, 0, 1},
	{"ctx_global", CTX, 0, 0, 0, 0, 0, 0, 0, 1},
	{"ctx_domain", CTX, 0x11, 0, 0, 0, 0, 0, 0, 2},
	{"ctx_device", CTX, 0x12, 0, 0, 0, 0, 0x00f8, 0, 3},
	{"ctx_devfm", CTX, 0x13, 0, 0, 0, 0, 0x0010, 3, 3},
	/* 140 calls of 2 descriptors: the 256-entry ring wraps once */
	{"wrap", WRAP, 0x20, 0x60000000, 0x60000fff, 0, 0, 0, 0, 0, 140},
};

/* Every call goes through sd_call_checked (start.S): rbx, rbp, r12..r15
 * and rsp must survive it (SysV callee-saved). */
static u64 callee_saved_bad;

static long call_one(const struct tcase *c, u64 start, u64 end)
{
	u64 bad = 0;
	long ret;

	if (c->kind == CTX) {
		const unsigned long a[10] = {DMAR_BASE, (u64)ring, QI_LOG2N, c->did, c->sid, c->fm,
					     c->gran, (u64)&status_word, (u64)&status_word, 0};
		ret = sd_call_checked((void *)sd_qi_flush_context, a, &bad);
	} else {
		const unsigned long a[10] = {DMAR_BASE, (u64)ring, QI_LOG2N, c->did, start, end,
					     cap & ~c->capclr, c->ih, (u64)&status_word,
					     (u64)&status_word};
		ret = sd_call_checked((void *)sd_qi_flush_iotlb, a, &bad);
	}
	callee_saved_bad += bad;
	return ret;
}

/* One call: the checks after it (0 when all passed). */
static int check_call(u32 iqt0, long ret, const char **why)
{
	u32 iqt = rd32(DMAR_IQT_REG), iqh = rd32(DMAR_IQH_REG), fsts = rd32(DMAR_FSTS_REG);
	*why = 0;
	if (callee_saved_bad)
		*why = "callee-saved";
	else if (ret != 0)
		*why = "ret";
	else if (iqh != iqt)
		*why = "iqh!=iqt";
	else if (fsts & (DMA_FSTS_IQE | DMA_FSTS_ICE | DMA_FSTS_ITE))
		*why = "fsts";
	else if (status_word != 2)
		*why = "status!=QI_DONE";
	else if (iqt != ((iqt0 + 32) & (QI_RING_BYTES - 1)))
		*why = "iqt-advance";
	return *why != 0;
}

static void run_case(u32 id, const struct tcase *c)
{
	u32 iqt0 = rd32(DMAR_IQT_REG), i, n = c->kind == WRAP ? c->calls : 1, bad = 0;
	u32 wrapped = 0;
	long ret = 0;
	const char *why = 0, *first = 0;
	u64 start = c->start, end = c->end;

	marker(id, 1);
	for (i = 0; i < n; i++) {
		u32 before = rd32(DMAR_IQT_REG);
		status_word = 0xdeadbeef;
		ret = call_one(c, start, end);
		if (check_call(before, ret, &why)) {
			if (!bad)
				first = why;
			bad++;
			break; /* a broken subject: one failed call says it */
		}
		if (rd32(DMAR_IQT_REG) < before)
			wrapped++;
		start += 0x1000;
		end += 0x1000;
	}
	marker(id, 2);

	puts_("case ");
	puts_(c->name);
	kv("id", id);
	puts_(c->kind == CTX ? " kind=ctx" : c->kind == WRAP ? " kind=wrap" : " kind=iotlb");
	kv("did", c->did);
	kv("start", c->start);
	kv("end", c->end);
	kv("cap", cap & ~c->capclr);
	kv("ih", c->ih);
	kv("sid", c->sid);
	kv("fm", c->fm);
	kv("gran", c->gran);
	kv("calls", n);
	kv("iqt0", iqt0);
	kv("iqt", rd32(DMAR_IQT_REG));
	kv("iqh", rd32(DMAR_IQH_REG));
	kv("fsts", rd32(DMAR_FSTS_REG));
	kv("status", status_word);
	kv("status_phys", (u64)&status_word);
	kv("wrapped", wrapped);
	kv("callee_saved_bad", callee_saved_bad);
	puts_(" ret=");
	putdec(ret);
	if (bad) {
		fail(first);
		kv("bad_calls", bad);
	}
	if (c->kind == WRAP && !wrapped)
		fail("no-wrap");
	puts_("\n");
}

/*
 * An invalid descriptor (type 0) stops QEMU's queue: FSTS.IQE, IQH stays
 * on it (vtd_fetch_inv_desc -> vtd_handle_inv_queue_error). The subject's
 * wait then never completes: it must return -110. Recovery as Linux 6.1's
 * qi_check_fault does for IQE: copy the wait descriptor over the bad one
 * at IQH and clear IQE (write 1); QEMU resumes at the next IQT write.
 */
static void run_timeout(void)
{
	u32 iqt0 = rd32(DMAR_IQT_REG), head, fsts, iqt, slot;
	long ret;
	static const struct tcase ctx = {"timeout", CTX, 0x31, 0, 0, 0, 0, 0, 0, 1};

	marker(0x40, 1);
	slot = iqt0 / 16;
	ring[2 * slot] = 0; /* type 0: not a descriptor */
	ring[2 * slot + 1] = 0;
	wr32(DMAR_IQT_REG, (iqt0 + 16) & (QI_RING_BYTES - 1));
	marker(0x40, 2);
	head = rd32(DMAR_IQH_REG);
	fsts = rd32(DMAR_FSTS_REG);
	puts_("timeout injected");
	kv("iqt0", iqt0);
	kv("iqh", head);
	kv("fsts", fsts);
	if (head != iqt0)
		fail("iqh-moved");
	if (!(fsts & DMA_FSTS_IQE))
		fail("no-iqe");
	puts_("\n");

	marker(0x41, 1);
	status_word = 0xdeadbeef;
	ret = call_one(&ctx, 0, 0);
	marker(0x41, 2);
	iqt = rd32(DMAR_IQT_REG);
	puts_("timeout call");
	kv("iqt", iqt);
	kv("iqh", rd32(DMAR_IQH_REG));
	kv("status", status_word);
	puts_(" ret=");
	putdec(ret);
	if (ret != -110)
		fail("ret!=-110");
	if (iqt != ((iqt0 + 48) & (QI_RING_BYTES - 1)))
		fail("iqt-advance");
	if (rd32(DMAR_IQH_REG) != iqt0)
		fail("iqh-moved");
	puts_("\n");

	/* qi_check_fault: the wait descriptor (the call's last) over the bad one */
	marker(0x42, 1);
	head = rd32(DMAR_IQH_REG) / 16;
	slot = ((iqt / 16) + QI_ENTRIES - 1) % QI_ENTRIES;
	ring[2 * head] = ring[2 * slot];
	ring[2 * head + 1] = ring[2 * slot + 1];
	wr32(DMAR_FSTS_REG, DMA_FSTS_IQE);
	marker(0x42, 2);
	fsts = rd32(DMAR_FSTS_REG);
	puts_("timeout recovered");
	kv("fsts", fsts);
	kv("iqh", rd32(DMAR_IQH_REG));
	if (fsts & DMA_FSTS_IQE)
		fail("iqe-stuck");
	puts_("\n");

	/* The next call's IQT write resumes QEMU: the copied wait, the
	 * timed-out call's two descriptors, then this call's. */
	run_case(0x43, &(struct tcase){"after-timeout", IOTLB, 0x32, 0x70000000, 0x70000fff});
}

static const char *cmdline(u32 mbi)
{
	u32 flags = *(volatile u32 *)(u64)mbi;
	if (!(flags & 4))
		return "";
	return (const char *)(u64) * (volatile u32 *)(u64)(mbi + 16);
}

int harness_main(u32 mbi)
{
	u32 i;
	const char *cl = cmdline(mbi);

	cap = rd64(DMAR_CAP_REG);
	puts_("vtd-qemu: start");
	kv("ver", rd32(DMAR_VER_REG));
	kv("cap", cap);
	kv("ecap", rd64(DMAR_ECAP_REG));
	kv("mamv", (cap >> 48) & 0x3f);
	kv("psi", (cap >> 39) & 1);
	kv("ring", (u64)ring);
	kv("subject", (u64)sd_qi_flush_iotlb);
	puts_(" cmdline=");
	puts_(cl);
	puts_("\n");
	if (qi_enable()) {
		fail("qie");
		puts_("\n");
	} else if (last_word_is(cl, "timeout")) {
		run_timeout();
	} else {
		/* A subject that fails four cases stops the run: each failed
		 * call may have polled to its bound. */
		for (i = 0; i < sizeof(cases) / sizeof(cases[0]) && failures < 4; i++)
			run_case(i, &cases[i]);
	}
	puts_("vtd-qemu: done failures=");
	putdec(failures);
	puts_("\n");
	return failures ? 1 : 0;
}
