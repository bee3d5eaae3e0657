// SPDX-License-Identifier: GPL-2.0-only
/*
 * Built-in boot test for shootdown's generated POWER radix TLB flushes
 * (examples/radix_tlb.inv, --target power64le --style linux), copied into
 * drivers/misc/sd_radix/ by scripts/kernel-tlb-power-test.sh and run on a
 * powernv9 kernel (radix MMU, 64K pages) under qemu-system-ppc64 TCG.
 *
 * The page under test is a user address (quadrant 0) of an mm of its own,
 * so it is tagged with that mm's PID, as a user page is: the trial runs
 * with PIDR = that PID, with interrupts off:
 *
 *   PTE -> page A; full local flush; read (must be A);
 *   PTE -> page B with no flush; read (must still be A: stale, else VOID);
 *   one generated flush; read (B = invalidated, A = still stale).
 *
 * Variants (same spec, see the script): sd_ (default passes) and sdn_
 * (--passes none) with the spec's features (POWER9 tlbie errata, ISA 3.1)
 * off; sde_ (default passes) with them as CPU feature sections the kernel
 * patches for this CPU; sdnb_ (--passes fission,fuse, features off: no
 * barrier at all, the barrier control). What QEMU can and cannot tell
 * apart is in docs/kernel-proof.md ("Proof in a running POWER kernel"):
 * the controls marked hw-stale stay stale on POWER9 but not under QEMU,
 * whose TLB has no PID tags and turns a by-VA flush of a 64K page into a
 * full flush; they are reported, not required.
 */
#include <linux/init.h>
#include <linux/irqflags.h>
#include <linux/kernel.h>
#include <linux/mm.h>
#include <linux/pgtable.h>
#include <linux/printk.h>
#include <linux/sched/mm.h>
#include <linux/cpumask.h>
#include <asm/cpu_has_feature.h>
#include <asm/mmu.h>
#include <asm/reg.h>
#include <asm/tlbflush.h>

#include "sd_radix_tlb.h"
#include "sd_radix_tlb_none.h"
#include "sd_radix_tlb_nb.h"
#include "sd_radix_tlb_errata.h"

#define PAT_A 0xaaaaaaaa00000000ULL
#define PAT_B 0xbbbbbbbb00000000ULL
/* The user address under test: quadrant 0, 2M-aligned base + 2 pages. */
#define UVA (0x10000000UL + 2 * PAGE_SIZE)

struct variant {
	const char *name;
	long (*page)(u64 pid, u64 va);
	long (*page_local)(u64 pid, u64 va);
	long (*pid)(u64 pid);
	long (*pid_local)(u64 pid);
	long (*range)(u64 pid, u64 start, u64 end);
	long (*range_local)(u64 pid, u64 start, u64 end);
	long (*all)(void);
	/* Pages the per-page loop of flush_tlb_range covers at most (derived) */
	unsigned long ceil;
	/* The same for flush_tlb_range_local's tlbiel loop */
	unsigned long ceil_local;
	/*
	 * ALL_CASES: every case; ERRATA: the flushes and ctl-none (the errata
	 * fixups' extra tlbies flush everything under QEMU: see
	 * docs/kernel-proof.md); CONTROL: the barrier control, the flushes
	 * only, outcome reported.
	 */
	enum { ALL_CASES, ERRATA, CONTROL } kind;
};

#define VARIANT(n, p, P, kind) { n, p##flush_tlb_page, p##flush_tlb_page_local, \
	p##flush_tlb_pid, p##flush_tlb_pid_local, p##flush_tlb_range,	\
	p##flush_tlb_range_local, p##flush_tlb_all,			\
	P##FLUSH_TLB_RANGE_RADIX64K_THRESHOLD,				\
	P##FLUSH_TLB_RANGE_LOCAL_RADIX64K_LOCAL_THRESHOLD, kind }
static const struct variant variants[] = {
	VARIANT("sd", sd_, SD_, ALL_CASES),
	VARIANT("sdn", sdn_, SDN_, ALL_CASES),
	VARIANT("sde", sde_, SDE_, ERRATA),
	VARIANT("sdnb", sdnb_, SDNB_, CONTROL),
};

enum expect { NEW, STALE, HW_STALE };

enum kase_id {
	PAGE, PAGE_LOCAL, PID, PID_LOCAL, RANGE, RANGE_PID, RANGE_LOCAL,
	RANGE_LOCAL_PID, ALL,
	CTL_NONE, CTL_OTHER_VA, CTL_OTHER_PID, CTL_PID_OTHER, CTL_RANGE_CEIL,
	NKASE
};

static const struct kase {
	const char *name;
	enum expect expect;
} kases[NKASE] = {
	[PAGE] = { "page", NEW },		/* page(pid, va) */
	[PAGE_LOCAL] = { "page-local", NEW },	/* page_local(pid, va) */
	[PID] = { "pid", NEW },			/* pid(pid) */
	[PID_LOCAL] = { "pid-local", NEW },	/* pid_local(pid) */
	[RANGE] = { "range-around", NEW },	/* range(pid, va - 1p, va + 2p) */
	[RANGE_PID] = { "range-pid", NEW },	/* ceil+1 pages past va: PID flush */
	[RANGE_LOCAL] = { "range-local", NEW },	/* range_local(pid, va - 1p, va + 2p) */
	[RANGE_LOCAL_PID] = { "range-local-pid", NEW },	/* ceil_local+1 pages past va */
	[ALL] = { "all", NEW },			/* all() */
	[CTL_NONE] = { "ctl-none", STALE },	/* no flush */
	[CTL_OTHER_VA] = { "ctl-other-va", HW_STALE },	/* page(pid, va + 1p) */
	[CTL_OTHER_PID] = { "ctl-other-pid", HW_STALE },	/* page(pid + 1, va) */
	[CTL_PID_OTHER] = { "ctl-pid-other", HW_STALE },	/* pid(pid + 1) */
	[CTL_RANGE_CEIL] = { "ctl-range-ceil", HW_STALE }, /* ceil pages past va: per-page path */
};

static pte_t *ptep;
static pte_t pte_a, pte_b;
static u64 pid;

static inline u64 rd(void)
{
	return READ_ONCE(*(volatile u64 *)UVA);
}

static char tag(u64 v)
{
	return v == PAT_A ? 'A' : v == PAT_B ? 'B' : '?';
}

static noinline void do_flush(const struct variant *v, enum kase_id k)
{
	const unsigned long p = PAGE_SIZE, va = UVA;

	switch (k) {
	case PAGE:
		v->page(pid, va);
		break;
	case PAGE_LOCAL:
		v->page_local(pid, va);
		break;
	case PID:
		v->pid(pid);
		break;
	case PID_LOCAL:
		v->pid_local(pid);
		break;
	case RANGE:
		v->range(pid, va - p, va + 2 * p);
		break;
	case RANGE_PID:
		v->range(pid, va + 2 * p, va + 2 * p + (v->ceil + 1) * p);
		break;
	case RANGE_LOCAL:
		v->range_local(pid, va - p, va + 2 * p);
		break;
	case RANGE_LOCAL_PID:
		v->range_local(pid, va + 2 * p,
			       va + 2 * p + (v->ceil_local + 1) * p);
		break;
	case ALL:
		v->all();
		break;
	case CTL_NONE:
		break;
	case CTL_OTHER_VA:
		v->page(pid, va + p);
		break;
	case CTL_OTHER_PID:
		v->page(pid + 1, va);
		break;
	case CTL_PID_OTHER:
		v->pid(pid + 1);
		break;
	case CTL_RANGE_CEIL:
		v->range(pid, va + 2 * p, va + 2 * p + v->ceil * p);
		break;
	default:
		break;
	}
}

static unsigned int npass, nfail, nvoid, nuncaught, ninvisible, ntrials;

static void trial(const struct variant *v, enum kase_id k)
{
	static const char *const ename[] = { "new", "stale", "hw-stale" };
	const struct kase *c = &kases[k];
	unsigned long flags, old_pid;
	const char *verdict;
	u64 r0, r1, r2;

	local_irq_save(flags);
	old_pid = mfspr(SPRN_PID);
	mtspr(SPRN_PID, pid);
	isync();
	WRITE_ONCE(ptep->pte, pte_raw(pte_a));
	tlbiel_all();		/* full local flush (ptesync first) */
	r0 = rd();		/* fills the TLB: (pid, va) -> A */
	WRITE_ONCE(ptep->pte, pte_raw(pte_b));	/* no flush */
	r1 = rd();		/* stale: still A */
	do_flush(v, k);
	r2 = rd();
	WRITE_ONCE(ptep->pte, pte_raw(pte_a));
	tlbiel_all();
	mtspr(SPRN_PID, old_pid);
	isync();
	local_irq_restore(flags);

	ntrials++;
	if (r0 != PAT_A || r1 != PAT_A || (r2 != PAT_A && r2 != PAT_B)) {
		verdict = "VOID";
		nvoid++;
	} else if (v->kind == CONTROL) {
		/* Missing barriers: stale would be caught; new is uncaught. */
		if (r2 == PAT_A) {
			verdict = "CAUGHT";
			npass++;
		} else {
			verdict = "UNCAUGHT";
			nuncaught++;
		}
	} else if (c->expect == HW_STALE) {
		/* Stale on POWER9; QEMU cannot tell (see the header). */
		if (r2 == PAT_A) {
			verdict = "PASS";
			npass++;
		} else {
			verdict = "INVISIBLE";
			ninvisible++;
		}
	} else if ((r2 == PAT_B) == (c->expect == NEW)) {
		verdict = "PASS";
		npass++;
	} else {
		verdict = "FAIL";
		nfail++;
	}
	pr_info("sd-radix: trial %s %s read=%c stale=%c after=%c expect=%s %s\n",
		v->name, c->name, tag(r0), tag(r1), tag(r2),
		v->kind == CONTROL ? "control" : ename[c->expect], verdict);
}

static int __init sd_radix_test(void)
{
	struct mm_struct *mm;
	struct page *pa, *pb;
	unsigned int i;
	int k;
	pgd_t *pgd;
	p4d_t *p4d;
	pud_t *pud;
	pmd_t *pmd;

	if (!radix_enabled()) {
		pr_info("sd-radix: setup failed: not the radix MMU\n");
		return 0;
	}
	/*
	 * The same kernel boots on 4 CPUs for the mm test
	 * (scripts/kernel-mm-power-test.sh): there another CPU's tlbie could
	 * land in a trial's window, so the trials run on one CPU only.
	 */
	if (num_online_cpus() != 1) {
		pr_info("sd-radix: skipped: %u CPUs online (the trials need one)\n",
			num_online_cpus());
		return 0;
	}
	pa = alloc_page(GFP_KERNEL);
	pb = alloc_page(GFP_KERNEL);
	mm = mm_alloc();	/* an mm of our own: its PID, its page table */
	if (!pa || !pb || !mm)
		goto fail;
	*(u64 *)page_address(pa) = PAT_A;
	*(u64 *)page_address(pb) = PAT_B;
	pid = mm->context.id;

	pgd = pgd_offset(mm, UVA);
	p4d = p4d_alloc(mm, pgd, UVA);
	pud = p4d ? pud_alloc(mm, p4d, UVA) : NULL;
	pmd = pud ? pmd_alloc(mm, pud, UVA) : NULL;
	if (!pmd || pte_alloc(mm, pmd))
		goto fail;
	ptep = pte_offset_kernel(pmd, UVA);
	/* Privileged (kernel) access rights: the kernel reads it, no KUAP. */
	pte_a = pfn_pte(page_to_pfn(pa), PAGE_KERNEL);
	pte_b = pfn_pte(page_to_pfn(pb), PAGE_KERNEL);

	pr_info("sd-radix: start va=%lx pid=%llu pte_a=%llx pte_b=%llx page=%lu ceiling=%lu erat_bug=%d stq_bug=%d arch31=%d\n",
		UVA, pid, (u64)pte_val(pte_a), (u64)pte_val(pte_b), PAGE_SIZE,
		variants[0].ceil, cpu_has_feature(CPU_FTR_P9_TLBIE_ERAT_BUG),
		cpu_has_feature(CPU_FTR_P9_TLBIE_STQ_BUG),
		cpu_has_feature(CPU_FTR_ARCH_31));
	for (i = 0; i < ARRAY_SIZE(variants); i++)
		for (k = 0; k < NKASE; k++)
			if (variants[i].kind == ALL_CASES ||
			    kases[k].expect == NEW ||
			    (variants[i].kind == ERRATA && kases[k].expect == STALE))
				trial(&variants[i], k);
	pr_info("sd-radix: summary trials=%u pass=%u fail=%u void=%u uncaught=%u invisible=%u\n",
		ntrials, npass, nfail, nvoid, nuncaught, ninvisible);
	/* The mm (its PID, its page table) is left allocated: boot test. */
	return 0;
fail:
	pr_info("sd-radix: setup failed\n");
	return 0;
}
late_initcall(sd_radix_test);
