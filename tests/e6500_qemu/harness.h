/* Bare-metal e6500 TLB harness (start.S, harness.c): what a test program
 * (one C file defining test_main, plus the code under test) can use.
 *
 * Layout the harness owns: TLB1 ESEL 0 (QEMU's VA 0..64M -> PA 0..64M, the
 * image, made IPROT by start.S) and ESEL 1 (CCSR at CCSR_VA, IPROT). Tests
 * use TLB1 ESEL >= TLB1_FIRST_FREE, TLB0, and effective addresses outside
 * 0..64M and the CCSR_VA megabyte (two valid entries matching one address
 * is a multi-hit, which the architecture leaves undefined). */
#ifndef E6500_HARNESS_H
#define E6500_HARNESS_H

typedef unsigned long u64;
typedef unsigned int u32;
typedef unsigned char u8;

#define CCSR_VA 0x7f000000UL
#define CCSR_PA 0xfe0000000UL /* hw/ppc/e500plat.c ccsrbar_base */
#define TLB1_FIRST_FREE 2

/* SPR numbers (Power ISA 2.06 Book III-E, e6500 reference manual) */
#define SPRN_PID 48
#define SPRN_DEAR 61
#define SPRN_ESR 62
#define SPRN_SRR0 26
#define SPRN_SRR1 27
#define SPRN_CSRR0 58
#define SPRN_CSRR1 59
#define SPRN_MCSRR0 570
#define SPRN_MCSRR1 571
#define SPRN_EPCR 307
#define SPRN_MAS5 339
#define SPRN_MAS8 341
#define SPRN_MAS7_MAS3 372
#define SPRN_MAS0 624
#define SPRN_MAS1 625
#define SPRN_MAS2 626
#define SPRN_MAS3 627
#define SPRN_MAS4 628
#define SPRN_MAS6 630
#define SPRN_MAS7 944
#define SPRN_TLB0CFG 688
#define SPRN_TLB1CFG 689
#define SPRN_TLB0PS 344
#define SPRN_TLB1PS 345
#define SPRN_MMUCFG 1015
#define SPRN_MMUCSR0 1012

/* MAS fields (arch/powerpc/include/asm/nohash/mmu-e500.h) */
#define MAS0_TLBSEL(x) (((u32)(x) << 28) & 0x30000000)
#define MAS0_ESEL(x) (((u32)(x) << 16) & 0x0fff0000)
#define MAS0_HES 0x00004000
#define MAS1_VALID 0x80000000u
#define MAS1_IPROT 0x40000000u
#define MAS1_TID(x) (((u32)(x) << 16) & 0x3fff0000)
#define MAS1_IND 0x00002000u
#define MAS1_TS 0x00001000u
#define MAS1_TSIZE(x) (((u32)(x) << 7) & 0x00000f80)
#define MAS1_GET_TSIZE(m) (((m) >> 7) & 0x1f)
#define MAS2_W 0x10
#define MAS2_I 0x08
#define MAS2_M 0x04
#define MAS2_G 0x02
#define MAS2_E 0x01
#define MAS3_SX 0x10
#define MAS3_SW 0x04
#define MAS3_SR 0x01
#define MAS3_UX 0x20
#define MAS3_UW 0x08
#define MAS3_UR 0x02
#define MAS6_SPID(x) (((u32)(x) << 16) & 0x3fff0000)
#define MAS6_ISIZE(x) MAS1_TSIZE(x)
#define MAS6_SIND 0x00000002u
#define MAS6_SAS 0x00000001u
#define MMUCSR0_TLB0FI 0x4
#define MMUCSR0_TLB1FI 0x2
/* TSIZE: page = 2^TSIZE KiB (MMU architecture version 2.0) */
#define TSIZE_4K 2
#define TSIZE_16K 4
#define TSIZE_64K 6
#define TSIZE_1M 10
#define TSIZE_16M 14

/* Interrupt vectors as numbered by their IVOR */
#define EXC_DSI 2
#define EXC_ISI 3
#define EXC_ALIGN 5
#define EXC_PROGRAM 6
#define EXC_DTLB 13
#define EXC_ITLB 14

#define stringify_(x) #x
#define stringify(x) stringify_(x)
#define mfspr(n)                                                        \
	({                                                              \
		u64 v_;                                                 \
		__asm__ volatile("mfspr %0," stringify(n) : "=r"(v_)); \
		v_;                                                     \
	})
#define mtspr(n, v) __asm__ volatile("mtspr " stringify(n) ",%0" : : "r"((u64)(v)) : "memory")
#define mfmsr()                                            \
	({                                                 \
		u64 v_;                                    \
		__asm__ volatile("mfmsr %0" : "=r"(v_));   \
		v_;                                        \
	})
#define isync() __asm__ volatile("isync" : : : "memory")

/* What start.S saw at entry. */
struct boot_state {
	u64 msr;     /* MSR as QEMU left it */
	u64 dtb;     /* r3 */
	u64 mapsize; /* r7: size of QEMU's initial TLB1[0] mapping */
};
extern struct boot_state boot_state;

/* The interrupt record start.S fills (offsets are used there). */
struct exc_rec {
	u64 armed;  /* 0: set by a probe; the handler clears it */
	u64 count;  /* 8: interrupts taken since boot */
	u64 vector; /* 16: IVOR number of the last one */
	u64 dear;   /* 24 */
	u64 esr;    /* 32 */
	u64 srr0;   /* 40 */
	u64 srr1;   /* 48 */
};
extern volatile struct exc_rec exc_rec;

/* The MAS registers as one TLB entry. */
struct mas {
	u32 mas0, mas1;
	u64 mas2;
	u32 mas3, mas7;
};

/* UART and printing (only %s %c %d %u %x %p, l, 0 and width). */
void uart_putc(char c);
void uart_puts(const char *s);
void uart_puthex(u64 v);
void hprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Test bookkeeping: CHECK prints "ok ..." or "FAIL ..." (with the line). */
extern int harness_failures;
void check_(int ok, int line, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
#define CHECK(cond, ...) check_(!!(cond), __LINE__, __VA_ARGS__)

/* TLB access: mtspr MAS*, isync, tlbwe/tlbre/tlbsx, isync (as Linux's
 * loadcam_entry). Nothing here clears MAS registers first: a search or read
 * leaves in MAS what the instruction put there. */
void tlb_write(const struct mas *m);
void tlb_read(u32 mas0, struct mas *out);          /* MAS0 then tlbre */
int tlb_search(u64 ea, u32 mas6, struct mas *out); /* MAS6, tlbsx 0,ea; 1 iff MAS1[V] */
void mas_read(struct mas *out);                    /* just mfspr MAS0..3,7 */
void tlb_print(const char *what, const struct mas *m);
/* Convenience: a valid TLB1 entry (or TLB0 when tlbsel = 0, where esel is
 * the way), supervisor RWX unless perms is non-zero. */
void tlb_map(int tlbsel, int esel, u64 va, u64 pa, int tsize, u32 tid, u32 wimge, u32 perms);
void tlb_unmap(int tlbsel, int esel, u64 va); /* write V = 0 */
void set_pid(u32 pid);

/* Probes: 0 if the access completed, else the IVOR number of the interrupt
 * it raised (exc_rec says DEAR/ESR/SRR0). The load leaves *val alone when
 * it faults. The faulting instruction is skipped, so only one instruction
 * is under the probe. */
int probe_load(u64 va, u64 *val);
/* Checks the test programs share: the load through va completes and
 * reads want; the load through va takes a data TLB miss at va; and
 * tlb_search with MAS6[SPID] = pid. */
void expect_load(u64 va, u64 want, const char *what);
void expect_miss(u64 va, const char *what);
int tlb_search_pid(u64 ea, u32 pid, struct mas *m);
int probe_store(u64 va, u64 val);
const char *exc_name(u64 vector);

/* Power off QEMU (the power-off GPIO); the run ends. */
void harness_poweroff(void) __attribute__((noreturn));

/* The test program: return 0 unless something beyond CHECKs failed. */
int test_main(void);

void *memset(void *d, int c, unsigned long n);
void *memcpy(void *d, const void *s, unsigned long n);

#endif
