/* C side of the e6500 TLB harness (see harness.h, README.md). Runs in
 * supervisor (hypervisor) state, MSR[CM] = 1, AS 0, PID 0, interrupts off. */
#include "harness.h"

struct boot_state boot_state;
volatile struct exc_rec exc_rec;
int harness_failures;

/* ------------------------------------------------------------ libc bits */

/* gcc may emit calls to these even with -ffreestanding. */
void *memset(void *d, int c, unsigned long n)
{
	u8 *p = d;
	while (n--)
		*p++ = (u8)c;
	return d;
}

void *memcpy(void *d, const void *s, unsigned long n)
{
	u8 *p = d;
	const u8 *q = s;
	while (n--)
		*p++ = *q++;
	return d;
}

/* ----------------------------------------------------------------- UART */

/* 16550 at CCSR + 0x4500, byte registers (hw/ppc/e500.c serial_mm_init
 * with regshift 0). QEMU's THR never fills, the LSR wait is for form. */
#define UART ((volatile u8 *)(CCSR_VA + 0x4500))
#define UART_LSR 5
#define LSR_THRE 0x20

void uart_putc(char c)
{
	for (int i = 0; i < 100000 && !(UART[UART_LSR] & LSR_THRE); i++)
		;
	UART[0] = (u8)c;
}

void uart_puts(const char *s)
{
	while (*s)
		uart_putc(*s++);
}

void uart_puthex(u64 v)
{
	uart_puts("0x");
	for (int i = 60; i >= 0; i -= 4)
		uart_putc("0123456789abcdef"[(v >> i) & 0xf]);
}

static void put_num(u64 v, int base, int width, char pad, int neg)
{
	char buf[24];
	int n = 0;
	do {
		buf[n++] = "0123456789abcdef"[v % base];
		v /= base;
	} while (v);
	if (neg)
		buf[n++] = '-';
	while (n < width--)
		uart_putc(pad);
	while (n)
		uart_putc(buf[--n]);
}

static void vprint(const char *f, __builtin_va_list ap)
{
	for (; *f; f++) {
		if (*f != '%') {
			uart_putc(*f);
			continue;
		}
		f++;
		char pad = ' ';
		int width = 0, lng = 0;
		if (*f == '0')
			pad = '0', f++;
		while (*f >= '0' && *f <= '9')
			width = width * 10 + (*f++ - '0');
		while (*f == 'l')
			lng = 1, f++;
		switch (*f) {
		case 's': {
			const char *s = __builtin_va_arg(ap, const char *);
			uart_puts(s ? s : "(null)");
			break;
		}
		case 'c':
			uart_putc((char)__builtin_va_arg(ap, int));
			break;
		case 'd': {
			long v = lng ? __builtin_va_arg(ap, long) : __builtin_va_arg(ap, int);
			put_num(v < 0 ? -(u64)v : (u64)v, 10, width, pad, v < 0);
			break;
		}
		case 'u':
			put_num(lng ? __builtin_va_arg(ap, u64) : __builtin_va_arg(ap, u32), 10, width, pad,
				0);
			break;
		case 'x':
			put_num(lng ? __builtin_va_arg(ap, u64) : __builtin_va_arg(ap, u32), 16, width, pad,
				0);
			break;
		case 'p':
			uart_puthex((u64)__builtin_va_arg(ap, void *));
			break;
		case '%':
			uart_putc('%');
			break;
		default:
			uart_putc('?');
		}
	}
}

void hprintf(const char *fmt, ...)
{
	__builtin_va_list ap;
	__builtin_va_start(ap, fmt);
	vprint(fmt, ap);
	__builtin_va_end(ap);
}

void check_(int ok, int line, const char *fmt, ...)
{
	__builtin_va_list ap;
	__builtin_va_start(ap, fmt);
	if (ok) {
		uart_puts("ok ");
	} else {
		harness_failures++;
		hprintf("FAIL (line %d) ", line);
	}
	vprint(fmt, ap);
	__builtin_va_end(ap);
	uart_putc('\n');
}

/* ------------------------------------------------------------------ TLB */

void mas_read(struct mas *m)
{
	m->mas0 = (u32)mfspr(SPRN_MAS0);
	m->mas1 = (u32)mfspr(SPRN_MAS1);
	m->mas2 = mfspr(SPRN_MAS2);
	m->mas3 = (u32)mfspr(SPRN_MAS3);
	m->mas7 = (u32)mfspr(SPRN_MAS7);
}

void tlb_write(const struct mas *m)
{
	mtspr(SPRN_MAS0, m->mas0);
	mtspr(SPRN_MAS1, m->mas1);
	mtspr(SPRN_MAS2, m->mas2);
	mtspr(SPRN_MAS3, m->mas3);
	mtspr(SPRN_MAS7, m->mas7);
	/* as Linux's loadcam_entry: the MAS writes are context-synchronized
	 * before tlbwe, and tlbwe before the next access */
	__asm__ volatile("isync; tlbwe; isync" : : : "memory");
}

void tlb_read(u32 mas0, struct mas *out)
{
	mtspr(SPRN_MAS0, mas0);
	__asm__ volatile("isync; tlbre; isync" : : : "memory");
	mas_read(out);
}

int tlb_search(u64 ea, u32 mas6, struct mas *out)
{
	mtspr(SPRN_MAS6, mas6);
	__asm__ volatile("isync; tlbsx 0,%0; isync" : : "r"(ea) : "memory");
	mas_read(out);
	return (out->mas1 & MAS1_VALID) != 0;
}

void tlb_print(const char *what, const struct mas *m)
{
	hprintf("%s: MAS0=%08x MAS1=%08x MAS2=%016lx MAS3=%08x MAS7=%08x\n", what, m->mas0, m->mas1,
		m->mas2, m->mas3, m->mas7);
}

void tlb_map(int tlbsel, int esel, u64 va, u64 pa, int tsize, u32 tid, u32 wimge, u32 perms)
{
	struct mas m = {
		.mas0 = MAS0_TLBSEL(tlbsel) | MAS0_ESEL(esel),
		.mas1 = MAS1_VALID | MAS1_TID(tid) | MAS1_TSIZE(tsize),
		.mas2 = (va & ~0xfffUL) | (wimge & 0x1f),
		.mas3 = (u32)(pa & 0xfffff000u) | (perms ? perms : MAS3_SR | MAS3_SW | MAS3_SX),
		.mas7 = (u32)(pa >> 32),
	};
	tlb_write(&m);
}

void tlb_unmap(int tlbsel, int esel, u64 va)
{
	struct mas m = {
		.mas0 = MAS0_TLBSEL(tlbsel) | MAS0_ESEL(esel),
		.mas1 = 0,
		.mas2 = va & ~0xfffUL,
	};
	tlb_write(&m);
}

void set_pid(u32 pid)
{
	mtspr(SPRN_PID, pid);
	isync();
}

/* --------------------------------------------------------------- probes */

const char *exc_name(u64 v)
{
	switch (v) {
	case 0: return "critical input";
	case 1: return "machine check";
	case 2: return "data storage";
	case 3: return "instruction storage";
	case 4: return "external input";
	case 5: return "alignment";
	case 6: return "program";
	case 7: return "FP unavailable";
	case 8: return "system call";
	case 10: return "decrementer";
	case 13: return "data TLB miss";
	case 14: return "instruction TLB miss";
	case 15: return "debug";
	case 32: return "AltiVec unavailable";
	default: return "other";
	}
}

static int probe_result(u64 before)
{
	exc_rec.armed = 0;
	if (exc_rec.count == before)
		return 0;
	hprintf("EXC %lu (%s) DEAR=%lx ESR=%lx SRR0=%lx\n", exc_rec.vector, exc_name(exc_rec.vector),
		exc_rec.dear, exc_rec.esr, exc_rec.srr0);
	return (int)exc_rec.vector;
}

int probe_load(u64 va, u64 *val)
{
	u64 before = exc_rec.count, v = 0;
	exc_rec.armed = 1;
	__asm__ volatile("ld %0,0(%1)" : "+r"(v) : "b"(va) : "memory");
	int r = probe_result(before);
	if (!r)
		*val = v;
	return r;
}

int probe_store(u64 va, u64 val)
{
	u64 before = exc_rec.count;
	exc_rec.armed = 1;
	__asm__ volatile("std %0,0(%1)" : : "r"(val), "b"(va) : "memory");
	return probe_result(before);
}

/* ------------------------------------------------------- entry and exit */

/* hw/ppc/e500.c connects pin 0 of the MPC8XXX GPIO (CCSR + 0xFF000) to
 * qemu_system_shutdown_request: QEMU exits with status 0. */
void harness_poweroff(void)
{
	volatile u32 *gpio = (volatile u32 *)(CCSR_VA + 0xff000);
	gpio[0] = 0x80000000; /* GPDIR: pin 0 is an output */
	gpio[2] = 0x80000000; /* GPDAT: drive it high */
	__asm__ volatile("msync" : : : "memory");
	for (;;)
		;
}

void harness_exception(u64 vector)
{
	u64 pc = exc_rec.srr0, msr = exc_rec.srr1;
	if (vector == 0 || vector == 12 || vector == 15) {
		pc = mfspr(SPRN_CSRR0);
		msr = mfspr(SPRN_CSRR1);
	} else if (vector == 1) {
		pc = mfspr(SPRN_MCSRR0);
		msr = mfspr(SPRN_MCSRR1);
	}
	hprintf("EXC %lu (%s) DEAR=%lx ESR=%lx SRR0=%lx SRR1=%lx\n", vector, exc_name(vector),
		exc_rec.dear, exc_rec.esr, pc, msr);
	uart_puts("FAIL unexpected interrupt\n");
	harness_poweroff();
}

void harness_main(u64 dtb)
{
	(void)dtb;
	hprintf("e6500 harness: entry MSR=%lx dtb=%lx initial-map=%lx MSR now=%lx EPCR=%lx\n",
		boot_state.msr, boot_state.dtb, boot_state.mapsize, mfmsr(), mfspr(SPRN_EPCR));
	int rc = test_main();
	if (rc == 0 && harness_failures == 0)
		uart_puts("PASS\n");
	else
		hprintf("FAIL %d check(s) failed, test_main returned %d\n", harness_failures, rc);
	harness_poweroff();
}

void expect_load(u64 va, u64 want, const char *what)
{
	u64 v = 0;
	int r = probe_load(va, &v);
	CHECK(r == 0 && v == want, "%s: load %lx -> %lx (interrupt %d)", what, va, v, r);
}

void expect_miss(u64 va, const char *what)
{
	u64 v = 0;
	int r = probe_load(va, &v);
	CHECK(r == EXC_DTLB && exc_rec.dear == va, "%s: load %lx takes a data TLB miss (got %d, DEAR %lx)",
	      what, va, r, exc_rec.dear);
}

int tlb_search_pid(u64 ea, u32 pid, struct mas *m)
{
	return tlb_search(ea, MAS6_SPID(pid), m);
}
