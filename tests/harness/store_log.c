/*
 * Store-logging oracle for generated sequences (driven by
 * tests/trace_vs_qemu.rs, which appends a driver: the header, one thunk per
 * sequence and main() calling sl_main()).
 *
 * qemu-user cannot log a guest's data accesses, so every device window is
 * mapped PROT_NONE and each access faults. The SIGSEGV handler notes the
 * address, opens the page and runs the faulting instruction once more on
 * its own: on POWER and AArch64 (fixed 4-byte instructions, device accesses
 * are never PC-relative) it is copied into a trampoline followed by a trap;
 * on x86-64 the trap flag single-steps it in place. RISC-V (RV64, no
 * compressed forms in generated code) is handled like AArch64: sfence.vma
 * and sinval.vma are logged with their rs1/rs2 operands that are not x0,
 * Svinval's two fences are skipped as barriers. The SIGTRAP handler
 * reads what was stored (or what the load saw), closes the page and
 * resumes after the instruction. Privileged invalidates (tlbi, tlbie) raise
 * SIGILL in user mode: they are logged with their operand registers and
 * skipped. Barriers run natively (tlbsync traps and is skipped) and leave
 * no trace here.
 *
 * POWER Book III-E (e6500) state is modelled, not logged: mtspr/mfspr of
 * MAS0-MAS8 write and read a MAS file, mfmsr/wrtee/wrteei an MSR[EE] that
 * is 1 when a sequence is called (Linux calls tlb_low.S with interrupts
 * on), tlbsx/tlbre are skipped. tlbilx and tlbivax are logged as
 * invalidates with the operands the spec gives them: T=1 MAS6; T=3 and
 * tlbivax EA ((RA|0)+RB), MAS6; T=0 none. Fatal: one that reads a MAS6
 * written while EE was 1 or with EE set again since (an interrupt could
 * have rewritten it), and a return with EE clear.
 *
 * stdin, one directive per line; a `call` runs a case and resets:
 *   win D I SIZE           instance I of device D: SIZE bytes, no access
 *   read D OFF HEX,HEX...  successive loads at OFF of each instance of D
 *                          see these bytes (memory order; the last repeats)
 *   mem P HEX              normal memory for pointer parameter P
 *   lmem P HEX             the same, logged: a window of its own whose
 *                          accesses print as nstore/nload (a lock's
 *                          intermediate values are meaning too)
 *   arg base D | arg array D N | arg int V | arg mem P
 *   call S                 run sequence S of the driver's table
 *                          (PCOFF is from its entry, or absolute when
 *                          the table has no function for it)
 * stdout, per call:
 *   store|load D I OFF WIDTH HEX PCOFF   (HEX: bytes in memory order)
 *   nstore|nload P OFF WIDTH HEX PCOFF   (lmem P)
 *   inval PCOFF WORD [OPERAND...]
 *   mem P HEX
 *   ret V
 *   end
 * Anything unexpected prints "fatal ..." and exits 3.
 */
#define _GNU_SOURCE 1
#include <ctype.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

struct sl_seq {
	const char *name;
	void (*fn)(void); /* the generated function (a descriptor on ELFv1) */
	long (*call)(const uint64_t *args);
};

#define SL_MAXWIN 64
#define SL_MAXSCRIPT 16
#define SL_MAXVALS 16
#define SL_MAXARGS 16
#define SL_MAXMEM 8
#define SL_MAXEVENTS (4u << 20)

struct sl_win {
	int dev;
	unsigned inst;
	unsigned char *base;
	size_t size, mapped;
	unsigned nread[SL_MAXSCRIPT]; /* loads served per script entry */
};

struct sl_script {
	int dev;
	unsigned long off;
	unsigned n;
	unsigned len[SL_MAXVALS];
	unsigned char val[SL_MAXVALS][8];
};

struct sl_event {
	char kind; /* 's'tore, 'l'oad, 'i'nvalidate */
	unsigned char width, nops;
	unsigned char bytes[8];
	short win;
	uint32_t word;
	unsigned long off, pcoff;
	uint64_t ops[2];
};

static struct sl_win wins[SL_MAXWIN];
static int nwins;
static struct sl_script scripts[SL_MAXSCRIPT];
static int nscripts;
static unsigned char *mems[SL_MAXMEM];
static int logged_mem[SL_MAXMEM]; /* mems[p] is a window (lmem) */
static size_t memlen[SL_MAXMEM];
static struct sl_event *events;
static size_t nevents;
static uintptr_t entry; /* first instruction of the running sequence */
#if defined(__powerpc64__)
/* Book III-E: SPR numbers of MAS0..MAS8 (Linux reg_booke.h), their
 * values, MSR[EE], and whether MAS6 was written in the EE=0 window that
 * is still open. */
static const unsigned mas_spr[9] = {0x270, 0x271, 0x272, 0x273, 0x274,
				    0x153, 0x276, 0x3b0, 0x155};
static uint64_t mas[9];
static int msr_ee = 1, mas6_masked;
#define SL_MSR_EE 0x8000UL

static int mas_index(uint32_t w)
{
	unsigned spr = ((w >> 16) & 31) | ((w >> 11) & 31) << 5, i;
	for (i = 0; i < 9; i++)
		if (mas_spr[i] == spr)
			return (int)i;
	return -1;
}
#endif
static size_t pagesz;
static uint32_t *tramp;

/* The access being single-stepped. */
static struct {
	int active, store, win;
	unsigned width;
	unsigned long off;
	uintptr_t pc;
	unsigned char *page;
	size_t plen;
	unsigned long lo, hi; /* window bytes checked for stray changes */
	unsigned char before[64];
} step;

static void print_events(void);

/* Not async-signal-safe, but the interrupted code is generated assembly,
 * never libc, and the process ends here. */
static void fatal(const char *what, uint64_t v)
{
	print_events();
	printf("fatal %s %#llx\n", what, (unsigned long long)v);
	fflush(stdout);
	_exit(3);
}

static struct sl_event *new_event(char kind)
{
	struct sl_event *e;
	if (nevents == SL_MAXEVENTS)
		fatal("too many events", nevents);
	e = &events[nevents++];
	memset(e, 0, sizeof *e);
	e->kind = kind;
	return e;
}

/* ------------------------------------------------------------ per arch */

#if defined(__powerpc64__)
#define SL_PC(uc) ((uc)->uc_mcontext.gp_regs[32]) /* PT_NIP */
#define SL_GPR(uc, r) ((uc)->uc_mcontext.gp_regs[r])
#define SL_TRAP 0x7fe00008u /* tw 31,0,0 */
#elif defined(__aarch64__)
#define SL_PC(uc) ((uc)->uc_mcontext.pc)
#define SL_GPR(uc, r) ((uc)->uc_mcontext.regs[r])
#define SL_TRAP 0xd4200000u /* brk #0 */
#elif defined(__x86_64__)
#define SL_PC(uc) ((uc)->uc_mcontext.gregs[REG_RIP])
#define SL_TF 0x100ull
#elif defined(__riscv) && __riscv_xlen == 64
/* glibc's riscv mcontext: __gregs[0] is the pc, __gregs[r] is xr. */
#define SL_PC(uc) ((uc)->uc_mcontext.__gregs[REG_PC])
#define SL_GPR(uc, r) ((uc)->uc_mcontext.__gregs[r])
#define SL_X(uc, r) ((r) ? SL_GPR(uc, r) : 0)
#define SL_TRAP 0x00100073u /* ebreak */
#else
#error "store_log.c: unsupported architecture"
#endif

/* Whether the instruction at pc accesses memory, how wide, and which way.
 * Minimal decoders: enough for every integer load/store form a generator
 * may pick; anything else is fatal rather than guessed. */
static int decode(const unsigned char *pc, int *store, unsigned *width)
{
#if defined(__powerpc64__)
	uint32_t w;
	memcpy(&w, pc, 4);
	switch (w >> 26) {
	case 32: case 33: *store = 0; *width = 4; return 0; /* lwz[u] */
	case 34: case 35: *store = 0; *width = 1; return 0; /* lbz[u] */
	case 40: case 41: case 42: case 43: *store = 0; *width = 2; return 0;
	case 36: case 37: *store = 1; *width = 4; return 0; /* stw[u] */
	case 38: case 39: *store = 1; *width = 1; return 0; /* stb[u] */
	case 44: case 45: *store = 1; *width = 2; return 0; /* sth[u] */
	case 58: /* ld, ldu, lwa */
		*store = 0;
		*width = (w & 3) == 2 ? 4 : 8;
		return (w & 3) == 3;
	case 62: /* std, stdu */
		*store = 1;
		*width = 8;
		return (w & 3) > 1;
	case 31:
		switch ((w >> 1) & 0x3ff) {
		case 21: case 53: case 532: case 84: /* ldx ldux ldbrx ldarx */
			*store = 0; *width = 8; return 0;
		case 23: case 55: case 341: case 373: case 534: case 20:
			*store = 0; *width = 4; return 0;
		case 279: case 311: case 343: case 375: case 790: case 116:
			*store = 0; *width = 2; return 0;
		case 87: case 119: case 52:
			*store = 0; *width = 1; return 0;
		case 149: case 181: case 660: case 214: /* stdx stdux stdbrx stdcx. */
			*store = 1; *width = 8; return 0;
		case 151: case 183: case 662: case 150:
			*store = 1; *width = 4; return 0;
		case 407: case 439: case 918: case 726:
			*store = 1; *width = 2; return 0;
		case 215: case 247: case 694:
			*store = 1; *width = 1; return 0;
		}
	}
	return -1;
#elif defined(__aarch64__)
	uint32_t w, size, opc;
	memcpy(&w, pc, 4);
	size = w >> 30;
	opc = (w >> 22) & 3;
	if ((w & 0x3e000000) == 0x38000000) {
		/* Load/store register, integer: bits 29:25 = 11100 (V = 0). */
		int reg_form = !(w & (1u << 24)) && (w & (1u << 21));
		if (reg_form && ((w >> 10) & 3) != 2)
			return -1; /* atomics, pointer-auth loads */
		if (size == 3 && opc == 2)
			return -1; /* prfm */
		*store = opc == 0;
		*width = 1u << size;
		return 0;
	}
	if ((w & 0x3f000000) == 0x08000000 && !(w & (1u << 21))) {
		/* Exclusive / ordered, single register: L = bit 22. */
		*store = !(w & (1u << 22));
		*width = 1u << size;
		return 0;
	}
	if ((w & 0x3f200c00) == 0x19000000) { /* ldapur / stlur */
		*store = opc == 0;
		*width = 1u << size;
		return 0;
	}
	return -1;
#elif defined(__riscv)
	/* LOAD (lb..lwu by funct3) and STORE (sb..sd); LR/SC go through
	 * emulate_reservation. */
	uint32_t w, f3;
	memcpy(&w, pc, 4);
	f3 = (w >> 12) & 7;
	if ((w & 0x7f) == 0x03 && f3 != 7) {
		*store = 0;
		*width = 1u << (f3 & 3);
		return 0;
	}
	if ((w & 0x7f) == 0x23 && f3 < 4) {
		*store = 1;
		*width = 1u << f3;
		return 0;
	}
	return -1;
#elif defined(__x86_64__)
	int rexw = 0, o16 = 0;
	unsigned full;
	for (;; pc++) {
		if (*pc == 0x66)
			o16 = 1;
		else if (*pc != 0xf0 && *pc != 0x2e && *pc != 0x3e && *pc != 0x26 && *pc != 0x36 &&
			 *pc != 0x64 && *pc != 0x65 && *pc != 0x67)
			break;
	}
	if ((*pc & 0xf0) == 0x40)
		rexw = (*pc++ & 8) != 0;
	full = rexw ? 8 : o16 ? 2 : 4;
	switch (pc[0]) {
	case 0x88: case 0xc6: *store = 1; *width = 1; return 0;
	case 0x89: case 0xc7: *store = 1; *width = full; return 0;
	case 0x8a: *store = 0; *width = 1; return 0;
	case 0x8b: *store = 0; *width = full; return 0;
	case 0x0f:
		switch (pc[1]) {
		/* (lock) cmpxchg: 2, a store only if it changes the bytes (a
		 * failing one writes back what it read) */
		case 0xb0: *store = 2; *width = 1; return 0;
		case 0xb1: *store = 2; *width = full; return 0;
		case 0xb6: case 0xbe: *store = 0; *width = 1; return 0;
		case 0xb7: case 0xbf: *store = 0; *width = 2; return 0;
		case 0x38: /* movbe */
			if (pc[2] == 0xf0 || pc[2] == 0xf1) {
				*store = pc[2] == 0xf1;
				*width = full;
				return 0;
			}
		}
	}
	return -1;
#endif
}

/* ------------------------------------------------------------- handlers */

/*
 * Load-reserve / store-conditional pairs (a lock on logged memory) cannot
 * run one at a time in the trampoline: the signal between them loses the
 * reservation, and a store-conditional without one fails without touching
 * memory (so without faulting), forever. The handler emulates the
 * load-reserve (it loads and remembers address and bytes). The
 * store-conditional then fails in qemu and the loop comes back to the
 * load-reserve with no other access between: that second fault at the
 * same pc is where the handler performs the store-conditional the code
 * ran (the next one after the load-reserve), if the bytes are unchanged
 * (single-threaded: nothing else writes), reports success as the
 * architecture does (POWER CR0.EQ, AArch64 Ws = 0) and resumes after it.
 * Returns the access width, or 0 for other instructions.
 */
#if defined(__powerpc64__) || defined(__aarch64__) || defined(__riscv)
static struct {
	uintptr_t addr, pc;
	unsigned width;
	unsigned char bytes[8];
	int valid;
	int fresh; /* no other access since the load-reserve */
} resv;

static uint64_t sl_from_bytes(const unsigned char *b, unsigned n)
{
	uint64_t v = 0;
	unsigned i;
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	for (i = 0; i < n; i++)
		v = (v << 8) | b[i];
#else
	for (i = n; i-- > 0;)
		v = (v << 8) | b[i];
#endif
	return v;
}

static void sl_to_bytes(uint64_t v, unsigned char *b, unsigned n)
{
	unsigned i;
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	for (i = n; i-- > 0; v >>= 8)
		b[i] = (unsigned char)v;
#else
	for (i = 0; i < n; i++, v >>= 8)
		b[i] = (unsigned char)v;
#endif
}

/* kind: 1 load-reserve, 2 store-conditional; 0 neither */
static int reservation_form(uint32_t w, unsigned *width)
{
#if defined(__powerpc64__)
	if (w >> 26 != 31)
		return 0;
	switch ((w >> 1) & 0x3ff) {
	case 52: *width = 1; return 1;  /* lbarx */
	case 116: *width = 2; return 1; /* lharx */
	case 20: *width = 4; return 1;  /* lwarx */
	case 84: *width = 8; return 1;  /* ldarx */
	case 694: *width = 1; return 2; /* stbcx. */
	case 726: *width = 2; return 2; /* sthcx. */
	case 150: *width = 4; return 2; /* stwcx. */
	case 214: *width = 8; return 2; /* stdcx. */
	}
	return 0;
#elif defined(__riscv)
	/* AMO opcode, funct5 00010 LR, 00011 SC; funct3 2 word, 3 double */
	if ((w & 0x7f) != 0x2f || (((w >> 27) != 2) && ((w >> 27) != 3)))
		return 0;
	*width = ((w >> 12) & 7) == 3 ? 8 : 4;
	return (w >> 27) == 2 ? 1 : 2;
#else
	/* load/store exclusive, one register: o2 (bit 23) = 0, o1 (bit 21) = 0 */
	if ((w & 0x3fa00000) != 0x08000000)
		return 0;
	*width = 1u << (w >> 30);
	return (w & (1u << 22)) ? 1 : 2;
#endif
}

static unsigned emulate_reservation(ucontext_t *uc, uintptr_t pc, uintptr_t a, int wi)
{
	struct sl_win *w = &wins[wi];
	struct sl_event *e;
	unsigned width, w2, k;
	uint32_t insn;
	int kind, ok = 0;
	unsigned char *page = (unsigned char *)(a & ~(uintptr_t)(pagesz - 1));

	memcpy(&insn, (const void *)pc, 4);
	kind = reservation_form(insn, &width);
	if (!kind) {
		resv.fresh = 0;
		return 0;
	}
	if (kind == 1 && resv.valid && resv.fresh && resv.pc == pc && resv.addr == a) {
		/* The store-conditional after it failed in qemu: run it here. */
		for (k = 1; k <= 16; k++) {
			memcpy(&insn, (const void *)(pc + 4 * k), 4);
			if (reservation_form(insn, &w2) == 2)
				break;
		}
		if (k > 16 || w2 != width)
			fatal("no store-conditional after the load-reserve at pc offset", pc - entry);
		pc += 4 * k;
		kind = 2;
	}
	if ((a & (width - 1)) || (a & (pagesz - 1)) + width > pagesz)
		fatal("unaligned reservation access at", a);
	if (mprotect(page, pagesz, PROT_READ | PROT_WRITE))
		fatal("mprotect RW", a);
#if defined(__powerpc64__)
	{
		unsigned rt = (insn >> 21) & 31;
		if (kind == 1) {
			SL_GPR(uc, rt) = sl_from_bytes((unsigned char *)a, width);
		} else {
			unsigned long cr = SL_GPR(uc, 38) & 0x0fffffffUL; /* PT_CCR */
			ok = resv.valid && resv.addr == a && resv.width == width &&
			     !memcmp(resv.bytes, (void *)a, width);
			if (ok)
				sl_to_bytes(SL_GPR(uc, rt), (unsigned char *)a, width);
			if (ok)
				cr |= 0x20000000UL; /* CR0.EQ */
			if (SL_GPR(uc, 37) & 0x80000000UL) /* XER.SO */
				cr |= 0x10000000UL;
			SL_GPR(uc, 38) = cr;
		}
	}
#elif defined(__riscv)
	{
		unsigned rd = (insn >> 7) & 31, rs2 = (insn >> 20) & 31;
		if (kind == 1) {
			/* LR.W sign-extends */
			uint64_t v = sl_from_bytes((unsigned char *)a, width);
			if (width == 4)
				v = (uint64_t)(int64_t)(int32_t)v;
			if (rd)
				SL_GPR(uc, rd) = v;
		} else {
			ok = resv.valid && resv.addr == a && resv.width == width &&
			     !memcmp(resv.bytes, (void *)a, width);
			if (ok)
				sl_to_bytes(SL_X(uc, rs2), (unsigned char *)a, width);
			if (rd)
				SL_GPR(uc, rd) = ok ? 0 : 1;
		}
	}
#else
	{
		unsigned rt = insn & 31, rs = (insn >> 16) & 31;
		if (kind == 1) {
			if (rt != 31)
				SL_GPR(uc, rt) = sl_from_bytes((unsigned char *)a, width);
		} else {
			uint64_t v = rt == 31 ? 0 : SL_GPR(uc, rt);
			ok = resv.valid && resv.addr == a && resv.width == width &&
			     !memcmp(resv.bytes, (void *)a, width);
			if (ok)
				sl_to_bytes(v, (unsigned char *)a, width);
			if (rs != 31)
				SL_GPR(uc, rs) = ok ? 0 : 1;
		}
	}
#endif
	if (kind == 1) {
		resv.addr = a;
		resv.pc = pc;
		resv.width = width;
		memcpy(resv.bytes, (void *)a, width);
		resv.valid = 1;
		resv.fresh = 1;
	} else {
		resv.valid = 0;
	}
	if (kind == 1 || ok) {
		e = new_event(kind == 1 ? 'l' : 's');
		e->win = (short)wi;
		e->off = a - (uintptr_t)w->base;
		e->width = (unsigned char)width;
		memcpy(e->bytes, (void *)a, width);
		e->pcoff = pc - entry;
	}
	if (mprotect(page, pagesz, PROT_NONE))
		fatal("mprotect NONE", a);
	SL_PC(uc) = pc + 4;
	return width;
}
#endif

static int find_win(uintptr_t a)
{
	int i;
	for (i = 0; i < nwins; i++)
		if (a >= (uintptr_t)wins[i].base && a - (uintptr_t)wins[i].base < wins[i].size)
			return i;
	return -1;
}

static int find_script(int dev, unsigned long off)
{
	int i;
	for (i = 0; i < nscripts; i++)
		if (scripts[i].dev == dev && scripts[i].off == off)
			return i;
	return -1;
}

static void on_segv(int sig, siginfo_t *si, void *ctx)
{
	ucontext_t *uc = ctx;
	uintptr_t a = (uintptr_t)si->si_addr, pc = (uintptr_t)SL_PC(uc);
	uintptr_t first, last;
	struct sl_win *w;
	int wi = find_win(a), s;
	(void)sig;
#if defined(__x86_64__)
	/* A #GP (e.g. invlpg at CPL 3) has no address: not an access. */
	if (si->si_code == SI_KERNEL)
		fatal("privileged instruction (not logged) at pc offset", pc - entry);
#endif
	if (wi < 0)
		fatal("access outside every device window at", a);
	if (step.active)
		fatal("fault while stepping, at", a);
	w = &wins[wi];
#if defined(__powerpc64__) || defined(__aarch64__) || defined(__riscv)
	if (emulate_reservation(uc, pc, a, wi))
		return;
#endif
	if (decode((const unsigned char *)pc, &step.store, &step.width))
		fatal("device access by an instruction we cannot decode, at pc offset", pc - entry);
	step.win = wi;
	step.off = a - (uintptr_t)w->base;
	step.pc = pc;
	first = a & ~(uintptr_t)(pagesz - 1);
	last = (a + step.width - 1) & ~(uintptr_t)(pagesz - 1);
	step.page = (unsigned char *)first;
	step.plen = last + pagesz - first;
	if (mprotect(step.page, step.plen, PROT_READ | PROT_WRITE))
		fatal("mprotect RW", a);
	if (!step.store && (s = find_script(w->dev, step.off)) >= 0) {
		struct sl_script *sc = &scripts[s];
		unsigned k = w->nread[s] < sc->n - 1 ? w->nread[s] : sc->n - 1;
		memcpy(w->base + step.off, sc->val[k], sc->len[k] < step.width ? sc->len[k] : step.width);
		w->nread[s]++;
	}
	/* Bytes around the access must not change: a decoder that gets the
	 * width wrong shows up here (unless the stray bytes happen to match). */
	step.lo = step.off > 16 ? step.off - 16 : 0;
	step.hi = step.off + step.width + 16 < w->size ? step.off + step.width + 16 : w->size;
	memcpy(step.before, w->base + step.lo, step.hi - step.lo);
	step.active = 1;
#if defined(__x86_64__)
	uc->uc_mcontext.gregs[REG_EFL] |= SL_TF;
#else
	memcpy(&tramp[0], (const void *)pc, 4);
	tramp[1] = SL_TRAP;
	__builtin___clear_cache((char *)tramp, (char *)(tramp + 2));
	SL_PC(uc) = (uintptr_t)tramp;
#endif
}

static void on_trap(int sig, siginfo_t *si, void *ctx)
{
	ucontext_t *uc = ctx;
	struct sl_win *w = &wins[step.win];
	struct sl_event *e;
	unsigned long i;
	(void)sig;
	(void)si;
	if (!step.active)
		fatal("unexpected SIGTRAP at", (uintptr_t)SL_PC(uc));
#if defined(__x86_64__)
	uc->uc_mcontext.gregs[REG_EFL] &= ~SL_TF;
#else
	if ((uintptr_t)SL_PC(uc) != (uintptr_t)(tramp + 1))
		fatal("SIGTRAP away from the trampoline, at", (uintptr_t)SL_PC(uc));
	SL_PC(uc) = step.pc + 4;
#endif
	for (i = step.lo; i < step.hi; i++)
		if ((i < step.off || i >= step.off + step.width) &&
		    w->base[i] != step.before[i - step.lo])
			fatal("byte changed outside the decoded access, at offset", i);
	e = new_event(step.store == 1 || (step.store == 2 &&
				      memcmp(w->base + step.off, step.before + (step.off - step.lo),
					     step.width)) ? 's' : 'l');
	e->win = (short)step.win;
	e->off = step.off;
	e->width = (unsigned char)step.width;
	memcpy(e->bytes, w->base + step.off, step.width);
	e->pcoff = step.pc - entry;
	if (mprotect(step.page, step.plen, PROT_NONE))
		fatal("mprotect NONE", step.pc);
	step.active = 0;
}

static void on_ill(int sig, siginfo_t *si, void *ctx)
{
	ucontext_t *uc = ctx;
	uintptr_t pc = (uintptr_t)SL_PC(uc);
	(void)sig;
	(void)si;
#if defined(__x86_64__)
	fatal("illegal instruction at pc offset", pc - entry);
#else
	struct sl_event *e;
	uint32_t w;
	memcpy(&w, (const void *)pc, 4);
	SL_PC(uc) = pc + 4;
#if defined(__riscv)
	/* SYSTEM, funct3 0, rd 0: SFENCE.VMA (funct7 0001001), SINVAL.VMA
	 * (0001011) log rs1, rs2 unless x0; SFENCE.W.INVAL / SFENCE.INVAL.IR
	 * (0001100) are barriers. */
	if ((w & 0x7fff) != 0x73)
		fatal("illegal instruction (not a supervisor fence) at pc offset", pc - entry);
	if (w >> 25 == 0x0c)
		return;
	if (w >> 25 != 0x09 && w >> 25 != 0x0b)
		fatal("illegal instruction (not sfence.vma/sinval.vma) at pc offset", pc - entry);
	e = new_event('i');
	{
		unsigned rs1 = (w >> 15) & 31, rs2 = (w >> 20) & 31;
		if (rs1)
			e->ops[e->nops++] = SL_GPR(uc, rs1);
		if (rs2)
			e->ops[e->nops++] = SL_GPR(uc, rs2);
	}
#elif defined(__aarch64__)
	/* SYS #op1, C8, Cm, #op2, Xt: TLBI. */
	if ((w & 0xfff8f000u) != 0xd5088000u)
		fatal("illegal instruction (not a TLBI) at pc offset", pc - entry);
	e = new_event('i');
	/* Every EL1 TLBI but VMALLE1* (op2 0) reads Xt; Rt 31 is XZR. */
	if (((w >> 5) & 7) != 0)
		e->ops[e->nops++] = (w & 31) == 31 ? 0 : SL_GPR(uc, w & 31);
#else
	if (w >> 26 != 31)
		fatal("illegal instruction at pc offset", pc - entry);
	/* tlbsync is privileged too, but a barrier (for trace as well). */
	if (((w >> 1) & 0x3ff) == 566)
		return;
	{
		unsigned t = (w >> 21) & 31, ra = (w >> 16) & 31, rb = (w >> 11) & 31;
		uint64_t ea = (ra ? SL_GPR(uc, ra) : 0) + SL_GPR(uc, rb);
		int n = mas_index(w);
		switch ((w >> 1) & 0x3ff) {
		case 467: /* mtspr */
			if (n < 0)
				fatal("mtspr of a privileged SPR that is not a MAS, at pc offset",
				      pc - entry);
			mas[n] = SL_GPR(uc, t);
			if (n == 6)
				mas6_masked = !msr_ee;
			return;
		case 339: /* mfspr */
			if (n < 0)
				fatal("mfspr of a privileged SPR that is not a MAS, at pc offset",
				      pc - entry);
			SL_GPR(uc, t) = mas[n];
			return;
		case 83: /* mfmsr */
			SL_GPR(uc, t) = msr_ee ? SL_MSR_EE : 0;
			return;
		case 131: /* wrtee */
			msr_ee = (SL_GPR(uc, t) & SL_MSR_EE) != 0;
			mas6_masked &= !msr_ee;
			return;
		case 163: /* wrteei */
			msr_ee = (w >> 15) & 1;
			mas6_masked &= !msr_ee;
			return;
		case 914: case 946: /* tlbsx, tlbre */
			return;
		case 18: case 786: /* tlbilx, tlbivax */
			if (((w >> 1) & 0x3ff) == 18 && (t & 3) == 0) {
				e = new_event('i');
				break;
			}
			if (!mas6_masked)
				fatal("MAS6 not written in this interrupts-off window, at pc offset",
				      pc - entry);
			e = new_event('i');
			if (((w >> 1) & 0x3ff) == 786 || (t & 3) == 3)
				e->ops[e->nops++] = ea;
			e->ops[e->nops++] = mas[6];
			e->word = w;
			e->pcoff = pc - entry;
			return;
		default:
			e = new_event('i');
		}
	}
	switch ((w >> 1) & 0x3ff) {
	case 306: case 274: case 466: /* tlbie, tlbiel, slbieg: RB, RS */
		e->ops[e->nops++] = SL_GPR(uc, (w >> 11) & 31);
		e->ops[e->nops++] = SL_GPR(uc, (w >> 21) & 31);
		break;
	case 434: /* slbie: RB */
		e->ops[e->nops++] = SL_GPR(uc, (w >> 11) & 31);
		break;
	}
#endif
	e->word = w;
	e->pcoff = pc - entry;
#endif
}

/* ---------------------------------------------------------------- driver */

static void print_hex(const unsigned char *b, size_t n)
{
	size_t i;
	for (i = 0; i < n; i++)
		printf("%02x", b[i]);
	if (!n)
		printf("-");
}

static void print_events(void)
{
	size_t k;
	unsigned j;
	for (k = 0; k < nevents; k++) {
		struct sl_event *e = &events[k];
		if (e->kind == 'i') {
			printf("inval %#lx %#x", e->pcoff, e->word);
			for (j = 0; j < e->nops; j++)
				printf(" %#llx", (unsigned long long)e->ops[j]);
		} else {
			if (wins[e->win].dev < 0)
				printf("%s %d %#lx %u ", e->kind == 's' ? "nstore" : "nload",
				       -1 - wins[e->win].dev, e->off, e->width);
			else
				printf("%s %d %u %#lx %u ", e->kind == 's' ? "store" : "load",
				       wins[e->win].dev, wins[e->win].inst, e->off, e->width);
			print_hex(e->bytes, e->width);
			printf(" %#lx", e->pcoff);
		}
		printf("\n");
	}
	nevents = 0;
}

static int parse_hex(const char *s, unsigned char *out, size_t max, size_t *n)
{
	unsigned v;
	*n = 0;
	if (*s == '-')
		return 0;
	while (isxdigit((unsigned char)s[0]) && isxdigit((unsigned char)s[1]) && *n < max) {
		if (sscanf(s, "%2x", &v) != 1)
			return -1;
		out[(*n)++] = (unsigned char)v;
		s += 2;
	}
	return *s && *s != '\n' && *s != ',' ? -1 : 0;
}

static void reset(void)
{
	int i;
	for (i = 0; i < nwins; i++)
		munmap(wins[i].base, wins[i].mapped);
	for (i = 0; i < SL_MAXMEM; i++) {
		if (!logged_mem[i])
			free(mems[i]);
		logged_mem[i] = 0;
		mems[i] = NULL;
		memlen[i] = 0;
	}
	nwins = nscripts = 0;
	nevents = 0;
#if defined(__powerpc64__)
	memset(mas, 0, sizeof mas);
	msr_ee = 1;
	mas6_masked = 0;
#endif
#if defined(__powerpc64__) || defined(__aarch64__) || defined(__riscv)
	resv.valid = 0;
#endif
}

static void *win_base(int dev, unsigned inst)
{
	int i;
	for (i = 0; i < nwins; i++)
		if (wins[i].dev == dev && wins[i].inst == inst)
			return wins[i].base;
	fatal("no window for device", (uint64_t)dev);
	return NULL;
}

static void install(int sig, void (*h)(int, siginfo_t *, void *))
{
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = h;
	/* Own stack: the generated code may keep data below its stack pointer
	 * (POWER protected zone, x86-64 red zone). */
	sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
	sigemptyset(&sa.sa_mask);
	if (sigaction(sig, &sa, NULL))
		fatal("sigaction", (uint64_t)sig);
}

static int sl_main(const struct sl_seq *seqs, int nseqs)
{
	static char line[1 << 16];
	static void *arrays[SL_MAXARGS][SL_MAXWIN];
	uint64_t args[SL_MAXARGS];
	int nargs = 0;
	stack_t ss;

	pagesz = (size_t)sysconf(_SC_PAGESIZE);
	events = mmap(NULL, SL_MAXEVENTS * sizeof *events, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	tramp = mmap(NULL, pagesz, PROT_READ | PROT_WRITE | PROT_EXEC,
		     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ss.ss_sp = malloc(1 << 16);
	ss.ss_size = 1 << 16;
	ss.ss_flags = 0;
	if (events == MAP_FAILED || tramp == MAP_FAILED || !ss.ss_sp || sigaltstack(&ss, NULL))
		fatal("setup", 0);
	install(SIGSEGV, on_segv);
	install(SIGTRAP, on_trap);
	install(SIGILL, on_ill);

	while (fgets(line, sizeof line, stdin)) {
		int d, p, s;
		unsigned i;
		unsigned long long v;
		unsigned long off, size;
		char what[16];
		if (sscanf(line, "win %d %u %lu", &d, &i, &size) == 3) {
			struct sl_win *w = &wins[nwins];
			if (nwins == SL_MAXWIN)
				fatal("too many windows", nwins);
			memset(w, 0, sizeof *w);
			w->dev = d;
			w->inst = i;
			w->size = size;
			/* A guard page after each window: nothing runs into the
			 * next one unnoticed. */
			w->mapped = (size + pagesz - 1) / pagesz * pagesz + pagesz;
			w->base = mmap(NULL, w->mapped, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
			if (w->base == MAP_FAILED)
				fatal("mmap window", size);
			nwins++;
		} else if (sscanf(line, "read %d %lx", &d, &off) == 2) {
			struct sl_script *sc = &scripts[nscripts];
			const char *q = strchr(strchr(line + 5, ' ') + 1, ' ');
			size_t n;
			if (nscripts == SL_MAXSCRIPT || !q)
				fatal("bad read directive", nscripts);
			memset(sc, 0, sizeof *sc);
			sc->dev = d;
			sc->off = off;
			for (q++; sc->n < SL_MAXVALS; q++) {
				if (parse_hex(q, sc->val[sc->n], 8, &n))
					fatal("bad read value", sc->n);
				sc->len[sc->n++] = (unsigned)n;
				q = strchr(q, ',');
				if (!q)
					break;
			}
			nscripts++;
		} else if (sscanf(line, "lmem %d", &p) == 1) {
			struct sl_win *w = &wins[nwins];
			size_t n;
			const char *q = strchr(line + 5, ' ');
			if (p < 0 || p >= SL_MAXMEM || !q || nwins == SL_MAXWIN)
				fatal("bad lmem directive", (uint64_t)p);
			memset(w, 0, sizeof *w);
			w->dev = -1 - p;
			w->size = 4096;
			w->mapped = 2 * pagesz;
			w->base = mmap(NULL, w->mapped, PROT_READ | PROT_WRITE,
				       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
			if (w->base == MAP_FAILED || parse_hex(q + 1, w->base, 4096, &n))
				fatal("bad lmem bytes", (uint64_t)p);
			if (mprotect(w->base, w->mapped, PROT_NONE))
				fatal("mprotect lmem", (uint64_t)p);
			nwins++;
			mems[p] = w->base;
			memlen[p] = n;
			logged_mem[p] = 1;
		} else if (sscanf(line, "mem %d", &p) == 1) {
			size_t n;
			const char *q = strchr(line + 4, ' ');
			if (p < 0 || p >= SL_MAXMEM || !q)
				fatal("bad mem directive", (uint64_t)p);
			mems[p] = calloc(1, 4096);
			if (!mems[p] || parse_hex(q + 1, mems[p], 4096, &n))
				fatal("bad mem bytes", (uint64_t)p);
			memlen[p] = n;
		} else if (sscanf(line, "arg %15s", what) == 1) {
			if (nargs == SL_MAXARGS)
				fatal("too many arguments", nargs);
			if (!strcmp(what, "base") && sscanf(line, "arg base %d", &d) == 1) {
				args[nargs++] = (uintptr_t)win_base(d, 0);
			} else if (!strcmp(what, "array") && sscanf(line, "arg array %d %u", &d, &i) == 2) {
				unsigned k;
				if (i > SL_MAXWIN)
					fatal("array too long", i);
				for (k = 0; k < i; k++)
					arrays[nargs][k] = win_base(d, k);
				args[nargs] = (uintptr_t)arrays[nargs];
				nargs++;
			} else if (!strcmp(what, "int") && sscanf(line, "arg int %llx", &v) == 1) {
				args[nargs++] = v;
			} else if (!strcmp(what, "mem") && sscanf(line, "arg mem %d", &p) == 1 &&
				   p >= 0 && p < SL_MAXMEM && mems[p]) {
				args[nargs++] = (uintptr_t)mems[p];
			} else {
				fatal("bad arg directive", nargs);
			}
		} else if (sscanf(line, "call %d", &s) == 1) {
			long r;
			if (s < 0 || s >= nseqs)
				fatal("no such sequence", (uint64_t)s);
			/* A NULL fn (a driver's composite case) logs absolute pcs. */
			entry = (uintptr_t)seqs[s].fn;
#if defined(__powerpc64__) && (!defined(_CALL_ELF) || _CALL_ELF == 1)
			if (entry)
				entry = *(const uintptr_t *)entry; /* ELFv1: the descriptor's code address */
#endif
			r = seqs[s].call(args);
#if defined(__powerpc64__)
			if (!msr_ee)
				fatal("returned with MSR[EE] clear, sequence", (uint64_t)s);
#endif
			print_events();
			for (p = 0; p < SL_MAXMEM; p++)
				if (logged_mem[p] && mprotect(mems[p], pagesz, PROT_READ))
					fatal("mprotect lmem", (uint64_t)p);
			for (p = 0; p < SL_MAXMEM; p++) {
				if (!mems[p])
					continue;
				printf("mem %d ", p);
				print_hex(mems[p], memlen[p]);
				printf("\n");
			}
			printf("ret %ld\nend\n", r);
			fflush(stdout);
			reset();
			nargs = 0;
		} else if (line[0] != '\n' && line[0] != '#') {
			fatal("bad directive", 0);
		}
	}
	return 0;
}
