/*
 * Bare-metal driver for the SMMUv3 command-queue oracle (tests/smmuv3_qemu.rs,
 * docs/smmuv3-qemu.md). Runs under
 *   qemu-system-aarch64 -M virt,iommu=smmuv3 -cpu cortex-a57 -nographic \
 *       -semihosting -kernel image.elf
 * at EL1 with the MMU off. It enables QEMU's SMMUv3 command queue, calls the
 * subject's three functions (the C stand-in or a generated .S) for a list of
 * cases, checks what the registers say after each, prints one line per case
 * on the PL011 and exits through semihosting with 0 (all checks passed), 1
 * (a check failed) or 3 (an exception). What QEMU decoded is checked by the
 * test from QEMU's trace; this file writes a marker to an unimplemented SMMU
 * register (MARKER, write-ignored by QEMU but traced by smmuv3_write_mmio)
 * before and after each case so that the trace can be cut into cases.
 *
 * The semihosting command line (-append) selects the mode: "main" (the
 * cases) or "timeout" (a command error stops QEMU's queue; sd_sync must
 * return -110; then recovery).
 */
typedef unsigned long u64;
typedef unsigned int u32;

long sd_tlb_inv_range(void *smmu, void *ring, unsigned long log2n, unsigned long asid,
		      unsigned long iova, unsigned long size, unsigned long granule);
long sd_tlb_inv_asid(void *smmu, void *ring, unsigned long log2n, unsigned long asid);
long sd_sync(void *smmu, void *ring, unsigned long log2n);
/* Range invalidation (ARM_SMMU_FEAT_RANGE_INV): only the generated code
 * has it; the cases are skipped for a subject without it. */
long sd_tlb_inv_range_ril(void *smmu, void *ring, unsigned long log2n, unsigned long asid,
			  unsigned long iova, unsigned long size, unsigned long granule,
			  unsigned long tg) __attribute__((weak));

void sd_exit(int status) __attribute__((noreturn));
long sd_semihost(long op, void *param);

#define UART_BASE 0x09000000UL /* hw/arm/virt.c base_memmap[VIRT_UART] */
#define SMMU_BASE 0x09050000UL /* hw/arm/virt.c base_memmap[VIRT_SMMU] */

/* SMMUv3 registers (Arm IHI 0070; QEMU hw/arm/smmuv3-internal.h) */
#define SMMU_IDR0 0x00
#define SMMU_IDR1 0x04
#define SMMU_CR0 0x20
#define SMMU_CR0ACK 0x24
#define SMMU_GERROR 0x60
#define SMMU_GERRORN 0x64
#define SMMU_CMDQ_BASE 0x90
#define SMMU_CMDQ_PROD 0x98
#define SMMU_CMDQ_CONS 0x9c
#define CR0_CMDQEN (1u << 3)
#define GERROR_CMDQ_ERR (1u << 0)
#define Q_BASE_RWA (1UL << 62) /* the kernel's Q_BASE_RWA; QEMU ignores it */
#define MARKER 0xe00            /* IMPLEMENTATION DEFINED space: QEMU WI */

#define CMDQ_OP_CMD_SYNC 0x46

/* Rings: 2^8 entries for most cases, 2^4 to force full-ring waits. The
 * spec wants the base aligned to the ring size (at least 32 bytes). */
static u64 ring256[256 * 2] __attribute__((aligned(4096)));
static u64 ring16[16 * 2] __attribute__((aligned(256)));

/* ------------------------------------------------------------ MMIO, UART */

static inline u32 rd32(u64 addr)
{
	u32 v;
	__asm__ volatile("ldr %w0, [%1]" : "=r"(v) : "r"(addr) : "memory");
	return v;
}
static inline void wr32(u64 addr, u32 v)
{
	__asm__ volatile("str %w0, [%1]" : : "r"(v), "r"(addr) : "memory");
}
static inline void wr64(u64 addr, u64 v)
{
	__asm__ volatile("str %0, [%1]" : : "r"(v), "r"(addr) : "memory");
}
static inline u32 smmu_rd(u32 off) { return rd32(SMMU_BASE + off); }
static inline void smmu_wr(u32 off, u32 v) { wr32(SMMU_BASE + off, v); }

static void putc_(char c)
{
	while (rd32(UART_BASE + 0x18) & (1u << 5)) /* FR.TXFF */
		;
	wr32(UART_BASE, (u32)(unsigned char)c);
}
#include "../support/bare_metal.h"

void harness_exception(long code, u64 esr, u64 elr, u64 far)
{
	puts_("smmuv3-qemu: EXCEPTION");
	kv("esr", esr);
	kv("elr", elr);
	kv("far", far);
	puts_("\n");
	sd_exit((int)code);
}

/* ------------------------------------------------------------ the queue */

static u64 *cur_ring;
static u32 cur_log2n;

/* CR0 := v and wait for CR0ACK to follow (the spec's update protocol). */
static int cr0_write(u32 v)
{
	int i;
	smmu_wr(SMMU_CR0, v);
	for (i = 0; i < 1000; i++)
		if (smmu_rd(SMMU_CR0ACK) == v)
			return 0;
	return -1;
}

/*
 * Command queue only. QEMU's smmuv3_cmdq_consume() (hw/arm/smmuv3.c) runs
 * whenever CMDQ_PROD is written, and needs nothing but CR0.CMDQEN: TLBI and
 * SYNC commands touch neither the stream table nor the event queue, and
 * SMMUEN only gates translation (smmuv3_translate). So SMMUEN, EVENTQEN,
 * STRTAB_* stay 0: no device does DMA here. CMDQ_BASE and CMDQ_CONS may
 * only be written while CMDQEN is 0.
 */
static int cmdq_setup(u64 *ring, u32 log2n, u32 start)
{
	if (cr0_write(0))
		return -1;
	wr64(SMMU_BASE + SMMU_CMDQ_BASE, Q_BASE_RWA | (u64)ring | log2n);
	smmu_wr(SMMU_CMDQ_PROD, start);
	smmu_wr(SMMU_CMDQ_CONS, start);
	if (cr0_write(CR0_CMDQEN))
		return -2;
	cur_ring = ring;
	cur_log2n = log2n;
	return 0;
}

/* ------------------------------------------------------------ the cases */

enum kind { RANGE, ASID, SYNC, RIL };

struct tcase {
	const char *name;
	enum kind kind;
	u32 log2n;
	long start; /* -1: keep the queue as the previous case left it */
	u64 asid, iova, size, granule;
	u64 tg; /* RIL: log2 of the leaf page size */
};

static const struct tcase cases[] = {
	{"page", RANGE, 8, 0, 0x1, 0x10000000, 0x1000, 0x1000},
	{"pages256", RANGE, 8, -1, 0x2, 0x20000000, 256 * 0x1000, 0x1000},
	{"pages1000", RANGE, 8, -1, 0x3, 0x7fff0000000, 1000 * 0x1000, 0x1000},
	{"unaligned", RANGE, 8, -1, 0x4, 0x30000123, 0x3000, 0x1000},
	{"block2m", RANGE, 8, -1, 0x5, 0x40000000, 0x200000, 0x200000},
	{"asid", ASID, 8, -1, 0xbeef, 0, 0, 0},
	{"sync", SYNC, 8, -1, 0, 0, 0, 0},
	{"wrap", RANGE, 8, 0x1fa, 0x7, 0x50000000, 16 * 0x1000, 0x1000},
	{"smallring", RANGE, 4, 0, 0x8, 0x60000000, 100 * 0x1000, 0x1000},
	{"ril1", RIL, 8, 0, 0x9, 0x10000000, 0x1000, 0x1000, 12},
	{"ril2m", RIL, 8, -1, 0xa, 0x40000000, 0x200000, 0x1000, 12},
	{"ril1000", RIL, 8, -1, 0xb, 0x7fff0000000, 1000 * 0x1000, 0x1000, 12},
	{"ril64k", RIL, 8, -1, 0xc, 0x80000000, 33 * 0x10000, 0x10000, 16},
	{"rilblk", RIL, 8, -1, 0xd, 0x40000000, 0x40000000, 0x200000, 12},
};

/* Calls an 8-argument subject with x19..x28 holding 19..28 and counts
 * those that differ afterwards, and whether sp moved (AAPCS64: the callee
 * preserves them; the range-invalidation code is the one that runs out of
 * volatile registers and saves some). */
static long call8_preserving(void *fn, u64 a0, u64 a1, u64 a2, u64 a3, u64 a4, u64 a5, u64 a6,
			     u64 a7, u64 *bad)
{
	register u64 x0 __asm__("x0") = a0;
	register u64 x1 __asm__("x1") = a1;
	register u64 x2 __asm__("x2") = a2;
	register u64 x3 __asm__("x3") = a3;
	register u64 x4 __asm__("x4") = a4;
	register u64 x5 __asm__("x5") = a5;
	register u64 x6 __asm__("x6") = a6;
	register u64 x7 __asm__("x7") = a7;
	register void *x16 __asm__("x16") = fn;
	__asm__ volatile("mov x17, sp\n\t"
			 "mov x19, #19\n\tmov x20, #20\n\tmov x21, #21\n\tmov x22, #22\n\t"
			 "mov x23, #23\n\tmov x24, #24\n\tmov x25, #25\n\tmov x26, #26\n\t"
			 "mov x27, #27\n\tmov x28, #28\n\t"
			 "str x17, [sp, #-16]!\n\t"
			 "blr x16\n\t"
			 "ldr x17, [sp], #16\n\t"
			 "mov x1, #0\n\t"
			 "mov x16, sp\n\tcmp x16, x17\n\tcinc x1, x1, ne\n\t"
			 "cmp x19, #19\n\tcinc x1, x1, ne\n\tcmp x20, #20\n\tcinc x1, x1, ne\n\t"
			 "cmp x21, #21\n\tcinc x1, x1, ne\n\tcmp x22, #22\n\tcinc x1, x1, ne\n\t"
			 "cmp x23, #23\n\tcinc x1, x1, ne\n\tcmp x24, #24\n\tcinc x1, x1, ne\n\t"
			 "cmp x25, #25\n\tcinc x1, x1, ne\n\tcmp x26, #26\n\tcinc x1, x1, ne\n\t"
			 "cmp x27, #27\n\tcinc x1, x1, ne\n\tcmp x28, #28\n\tcinc x1, x1, ne"
			 : "+r"(x0), "+r"(x1), "+r"(x2), "+r"(x3), "+r"(x4), "+r"(x5), "+r"(x6),
			   "+r"(x7), "+r"(x16)
			 :
			 : "x8", "x9", "x10", "x11", "x12", "x13", "x14", "x15", "x17", "x18", "x19",
			   "x20", "x21", "x22", "x23", "x24", "x25", "x26", "x27", "x28", "x30",
			   "memory", "cc");
	*bad = x1;
	return (long)x0;
}

static void marker(u32 id, u32 phase)
{
	smmu_wr(MARKER, 0x5d000000u | (id << 8) | phase);
}

static u64 n_range_cmds(const struct tcase *c)
{
	u64 n = 0, a;
	for (a = c->iova; a < c->iova + c->size; a += c->granule)
		n++;
	return n;
}

/* Commands __arm_smmu_tlb_inv_range() issues with range invalidation:
 * one per 5-bit group of the page count. */
static u64 n_ril_cmds(const struct tcase *c)
{
	u64 n = 0, pages = c->size >> c->tg;
	while (pages) {
		u64 scale = __builtin_ctzl(pages);
		pages -= ((pages >> scale) & 31) << scale;
		n++;
	}
	return n;
}

static void run_case(u32 id, const struct tcase *c)
{
	u64 *ring = c->log2n == 4 ? ring16 : ring256;
	u32 wim = (2u << c->log2n) - 1, prod0, prod, cons, gerror, gerrorn;
	u64 cmds = 0;
	long ret = 0;

	if (c->kind == RIL && !sd_tlb_inv_range_ril)
		return;

	if (c->start >= 0 || c->log2n != cur_log2n || ring != cur_ring) {
		if (cmdq_setup(ring, c->log2n, c->start < 0 ? 0 : (u32)c->start)) {
			puts_("case ");
			puts_(c->name);
			fail("cmdq-setup");
			puts_("\n");
			return;
		}
	}
	prod0 = smmu_rd(SMMU_CMDQ_PROD) & wim;
	marker(id, 1);
	switch (c->kind) {
	case RANGE:
		ret = sd_tlb_inv_range((void *)SMMU_BASE, ring, c->log2n, c->asid, c->iova,
				       c->size, c->granule);
		cmds = n_range_cmds(c);
		break;
	case ASID:
		ret = sd_tlb_inv_asid((void *)SMMU_BASE, ring, c->log2n, c->asid);
		cmds = 1;
		break;
	case SYNC:
		ret = sd_sync((void *)SMMU_BASE, ring, c->log2n);
		break;
	case RIL: {
		u64 bad = 0;
		ret = call8_preserving((void *)sd_tlb_inv_range_ril, SMMU_BASE, (u64)ring, c->log2n,
				       c->asid, c->iova, c->size, c->granule, c->tg, &bad);
		if (bad)
			fail("callee-saved");
		cmds = n_ril_cmds(c);
		break;
	}
	}
	marker(id, 2);
	prod = smmu_rd(SMMU_CMDQ_PROD);
	cons = smmu_rd(SMMU_CMDQ_CONS);
	gerror = smmu_rd(SMMU_GERROR);
	gerrorn = smmu_rd(SMMU_GERRORN);

	puts_("case ");
	puts_(c->name);
	kv("id", id);
	puts_(c->kind == RANGE	 ? " kind=range"
	      : c->kind == ASID	 ? " kind=asid"
	      : c->kind == RIL	 ? " kind=ril"
				 : " kind=sync");
	kv("tg", c->tg);
	kv("log2n", c->log2n);
	kv("asid", c->asid);
	kv("iova", c->iova);
	kv("size", c->size);
	kv("granule", c->granule);
	kv("prod0", prod0);
	kv("prod", prod);
	kv("cons", cons);
	kv("gerror", gerror);
	kv("gerrorn", gerrorn);
	puts_(" ret=");
	putdec(ret);
	if (ret != 0)
		fail("ret");
	if ((prod ^ cons) & wim)
		fail("cons!=prod");
	if ((cons >> 24) & 0x7f)
		fail("cons.err");
	if (gerror != gerrorn)
		fail("gerror!=gerrorn");
	if ((prod & wim) != ((prod0 + cmds + 1) & wim))
		fail("prod-advance");
	if (prod & ~wim)
		fail("prod-high-bits");
	puts_("\n");
}

/* A command error stops QEMU's queue (smmuv3_cmdq_consume breaks while
 * GERROR.CMDQ_ERR is active): sd_sync must time out with -110. Then
 * recover as arm_smmu_cmdq_skip_err() does: replace the bad command by a
 * CMD_SYNC and acknowledge the error through GERRORN. */
static void run_timeout(void)
{
	u32 wim = (2u << 8) - 1, prod0, prod, cons, gerror, gerrorn, slot;
	long ret;

	if (cmdq_setup(ring256, 8, 0x0fe)) {
		fail("cmdq-setup");
		return;
	}
	prod0 = smmu_rd(SMMU_CMDQ_PROD) & wim;
	slot = prod0 & 0xff;
	marker(0x40, 1);
	ring256[2 * slot] = 0; /* opcode 0: not a command, CERROR_ILL */
	ring256[2 * slot + 1] = 0;
	__asm__ volatile("dmb oshst" ::: "memory");
	smmu_wr(SMMU_CMDQ_PROD, (prod0 + 1) & wim);
	marker(0x40, 2);
	cons = smmu_rd(SMMU_CMDQ_CONS);
	gerror = smmu_rd(SMMU_GERROR);
	gerrorn = smmu_rd(SMMU_GERRORN);
	puts_("timeout injected");
	kv("prod0", prod0);
	kv("cons", cons);
	kv("gerror", gerror);
	kv("gerrorn", gerrorn);
	if ((cons & wim) != prod0)
		fail("cons-moved");
	if (((cons >> 24) & 0x7f) != 1)
		fail("cons.err!=ILL");
	if (((gerror ^ gerrorn) & GERROR_CMDQ_ERR) == 0)
		fail("no-cmdq-err");
	puts_("\n");

	marker(0x41, 1);
	ret = sd_sync((void *)SMMU_BASE, ring256, 8);
	marker(0x41, 2);
	prod = smmu_rd(SMMU_CMDQ_PROD);
	cons = smmu_rd(SMMU_CMDQ_CONS);
	puts_("timeout sync");
	kv("prod", prod);
	kv("cons", cons);
	puts_(" ret=");
	putdec(ret);
	if (ret != -110)
		fail("ret!=-110");
	if ((prod & wim) != ((prod0 + 2) & wim))
		fail("prod-advance");
	if ((cons & wim) != prod0)
		fail("cons-moved");
	puts_("\n");

	marker(0x42, 1);
	ring256[2 * slot] = CMDQ_OP_CMD_SYNC;
	__asm__ volatile("dmb oshst" ::: "memory");
	smmu_wr(SMMU_GERRORN, smmu_rd(SMMU_GERROR));
	marker(0x42, 2);
	prod = smmu_rd(SMMU_CMDQ_PROD);
	cons = smmu_rd(SMMU_CMDQ_CONS);
	gerror = smmu_rd(SMMU_GERROR);
	gerrorn = smmu_rd(SMMU_GERRORN);
	puts_("timeout recovered");
	kv("prod", prod);
	kv("cons", cons);
	kv("gerror", gerror);
	kv("gerrorn", gerrorn);
	if ((prod ^ cons) & wim)
		fail("cons!=prod");
	if (gerror != gerrorn)
		fail("gerror!=gerrorn");
	puts_("\n");

	/* A fresh queue (CONS written while disabled clears CONS.ERR, which
	 * QEMU keeps across later increments) works again. */
	run_case(0x43, &(struct tcase){"after-timeout", RANGE, 8, 0x100, 0x9, 0x70000000,
				       0x1000, 0x1000});
}

static int cmdline_is(const char *want)
{
	static char buf[128];
	struct {
		char *p;
		u64 n;
	} blk = {buf, sizeof(buf)};

	if (sd_semihost(0x15, &blk) != 0) /* SYS_GET_CMDLINE */
		return 0;
	/* "image.elf timeout" or "timeout" */
	return last_word_is(buf, want);
}

int harness_main(u64 el)
{
	u32 idr1 = smmu_rd(SMMU_IDR1), i;

	puts_("smmuv3-qemu: start");
	kv("el", el);
	kv("idr0", smmu_rd(SMMU_IDR0));
	kv("idr1", idr1);
	kv("cmdqs", (idr1 >> 21) & 0x1f);
	kv("subject", (u64)sd_tlb_inv_range);
	puts_("\n");
	if (el != 1)
		fail("not-el1");
	if (((idr1 >> 21) & 0x1f) < 8)
		fail("cmdqs<8");

	if (cmdline_is("timeout")) {
		run_timeout();
	} else {
		for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
			run_case(i, &cases[i]);
	}
	puts_("smmuv3-qemu: done failures=");
	putdec(failures);
	puts_("\n");
	return failures ? 1 : 0;
}
