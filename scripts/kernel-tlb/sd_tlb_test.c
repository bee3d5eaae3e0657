// SPDX-License-Identifier: GPL-2.0-only
/*
 * Built-in boot test for shootdown's generated arm64 TLB flushes
 * (examples/arm64_tlb_range.inv), copied into drivers/misc/sd_tlb/ by
 * scripts/kernel-tlb-test.sh. Under QEMU TCG a translation stays in QEMU's
 * software TLB after its PTE changes until a TLBI removes it, so:
 *
 *   map page A at a vmap VA; full local flush; read (must be A);
 *   set_pte() to page B with no TLBI; read (must still be A: stale, else
 *   the trial is VOID); call one generated flush; read (B = flushed).
 *
 * Interrupts are off inside the window and nothing but the two reads, the
 * PTE store and the flush runs there, so QEMU neither evicts the stale entry
 * nor gets a reason to flush its whole TLB. Variants (same spec, see the
 * script): sd_ (default passes), sdn_ (--passes none), sdnb_ (--passes
 * fission,fuse: no barrier placement, the barrier control). Each has
 * flush_tlb_page/flush_tlb_range (by ASID; tried on a non-global mapping)
 * and flush_tlb_kernel_range (any ASID; tried on the global vmap mapping).
 */
#include <linux/init.h>
#include <linux/irqflags.h>
#include <linux/kernel.h>
#include <linux/mm.h>
#include <linux/pgtable.h>
#include <linux/printk.h>
#include <linux/vmalloc.h>
#include <asm/sysreg.h>

#include "sd_tlb_range.h"
#include "sd_tlb_range_none.h"
#include "sd_tlb_range_nb.h"

#define PAT_A 0xaaaaaaaa00000000ULL
#define PAT_B 0xbbbbbbbb00000000ULL
/* Pages the loop path of flush_tlb_range covers at most (derived). */
#define THR SD_FLUSH_TLB_RANGE_TLB4K_THRESHOLD
#define KTHR SD_FLUSH_TLB_KERNEL_RANGE_TLB4K_KERNEL_THRESHOLD

struct variant {
	const char *name;
	long (*page)(u64 asid, u64 addr);
	long (*range)(u64 asid, u64 start, u64 end);
	long (*krange)(u64 start, u64 end);
	bool control; /* barrier control: outcome reported, not required */
};

static const struct variant variants[] = {
	{ "sd", sd_flush_tlb_page, sd_flush_tlb_range,
	  sd_flush_tlb_kernel_range, false },
	{ "sdn", sdn_flush_tlb_page, sdn_flush_tlb_range,
	  sdn_flush_tlb_kernel_range, false },
	{ "sdnb", sdnb_flush_tlb_page, sdnb_flush_tlb_range,
	  sdnb_flush_tlb_kernel_range, true },
};

/*
 * The ASID sequences (flush_tlb_page/range) run on a non-global mapping
 * (nG = 1, tagged with the current ASID, as a user page would be): on
 * hardware TLBI ASIDE1IS does not remove global entries. The kernel-VA
 * sequence (flush_tlb_kernel_range) runs on the global vmap mapping.
 */
enum kase {
	PAGE, RANGE, RANGE_ALL, OTHER_VA, RANGE_BELOW,
	KPAGE, KRANGE, KRANGE_ALL, KOTHER_VA, KRANGE_BELOW, NKASE
};

static const char *const kase_name[NKASE] = {
	[PAGE] = "page",		/* page(va) */
	[RANGE] = "range-around",	/* range(va - 1p, va + 2p) */
	[RANGE_ALL] = "range-all",	/* THR+1 pages past va: flush-all path */
	[OTHER_VA] = "ctl-other-va",	/* page(va + 1p) */
	[RANGE_BELOW] = "ctl-range-thr", /* THR pages past va: loop path */
	[KPAGE] = "kernel-page",	/* kernel_range(va, va + 1p) */
	[KRANGE] = "kernel-range-around",
	[KRANGE_ALL] = "kernel-range-all",
	[KOTHER_VA] = "ctl-kernel-other-va",
	[KRANGE_BELOW] = "ctl-kernel-range-thr",
};
static const bool kase_expect_new[NKASE] = {
	[PAGE] = true, [RANGE] = true, [RANGE_ALL] = true,
	[OTHER_VA] = false, [RANGE_BELOW] = false,
	[KPAGE] = true, [KRANGE] = true, [KRANGE_ALL] = true,
	[KOTHER_VA] = false, [KRANGE_BELOW] = false,
};

static unsigned long va;
static pte_t *ptep;
static pte_t pte_a, pte_b, pte_a_ng, pte_b_ng;
static u64 asid;

static inline void local_flush_all(void)
{
	asm volatile("dsb nshst\n\ttlbi vmalle1\n\tdsb nsh\n\tisb" ::: "memory");
}

static inline u64 rd(void)
{
	return READ_ONCE(*(volatile u64 *)va);
}

static char tag(u64 v)
{
	return v == PAT_A ? 'A' : v == PAT_B ? 'B' : '?';
}

static noinline void do_flush(const struct variant *v, enum kase k)
{
	const unsigned long p = PAGE_SIZE;

	switch (k) {
	case PAGE:
		v->page(asid, va);
		break;
	case RANGE:
		v->range(asid, va - p, va + 2 * p);
		break;
	case RANGE_ALL:
		v->range(asid, va + 2 * p, va + 2 * p + (THR + 1) * p);
		break;
	case OTHER_VA:
		v->page(asid, va + p);
		break;
	case RANGE_BELOW:
		v->range(asid, va + 2 * p, va + 2 * p + THR * p);
		break;
	case KPAGE:
		v->krange(va, va + p);
		break;
	case KRANGE:
		v->krange(va - p, va + 2 * p);
		break;
	case KRANGE_ALL:
		v->krange(va + 2 * p, va + 2 * p + (KTHR + 1) * p);
		break;
	case KOTHER_VA:
		v->krange(va + p, va + 2 * p);
		break;
	case KRANGE_BELOW:
		v->krange(va + 2 * p, va + 2 * p + KTHR * p);
		break;
	default:
		break;
	}
}

static unsigned int npass, nfail, nvoid, nuncaught, ntrials;

static void trial(const struct variant *v, enum kase k)
{
	unsigned long flags;
	u64 r0, r1, r2;
	const char *verdict;
	bool expect_new = kase_expect_new[k];
	bool global = k >= KPAGE;
	pte_t a = global ? pte_a : pte_a_ng, b = global ? pte_b : pte_b_ng;

	local_irq_save(flags);
	set_pte(ptep, a);
	local_flush_all();
	r0 = rd();		/* fills the TLB with VA -> A */
	set_pte(ptep, b);	/* no TLBI */
	r1 = rd();		/* stale: still A */
	do_flush(v, k);
	r2 = rd();
	set_pte(ptep, pte_a);
	local_flush_all();
	local_irq_restore(flags);

	ntrials++;
	if (r0 != PAT_A || r1 != PAT_A || (r2 != PAT_A && r2 != PAT_B)) {
		verdict = "VOID";
		nvoid++;
	} else if (v->control) {
		/* Missing barriers: stale would be caught; new is uncaught. */
		if (r2 == PAT_A) {
			verdict = "CAUGHT";
			npass++;
		} else {
			verdict = "UNCAUGHT";
			nuncaught++;
		}
	} else if ((r2 == PAT_B) == expect_new) {
		verdict = "PASS";
		npass++;
	} else {
		verdict = "FAIL";
		nfail++;
	}
	pr_info("sd-tlb: trial %s %s %s read=%c stale=%c after=%c expect=%s %s\n",
		v->name, kase_name[k], global ? "global" : "nG", tag(r0),
		tag(r1), tag(r2),
		v->control ? "control" : expect_new ? "new" : "stale", verdict);
}

static int __init sd_tlb_test(void)
{
	struct page *pa, *pb;
	unsigned int i;
	int k;
	pgd_t *pgd;
	p4d_t *p4d;
	pud_t *pud;
	pmd_t *pmd;
	void *m;

	pa = alloc_page(GFP_KERNEL);
	pb = alloc_page(GFP_KERNEL);
	if (!pa || !pb)
		goto fail;
	*(u64 *)page_address(pa) = PAT_A;
	*(u64 *)page_address(pb) = PAT_B;
	m = vmap(&pa, 1, VM_MAP, PAGE_KERNEL);
	if (!m)
		goto fail;
	va = (unsigned long)m;

	pgd = pgd_offset_k(va);
	p4d = p4d_offset(pgd, va);
	pud = pud_offset(p4d, va);
	pmd = pmd_offset(pud, va);
	if (pmd_none(*pmd) || pmd_leaf(*pmd))
		goto fail;
	ptep = pte_offset_kernel(pmd, va);
	pte_a = READ_ONCE(*ptep);
	if (!pte_present(pte_a) || pte_pfn(pte_a) != page_to_pfn(pa))
		goto fail;
	pte_b = pfn_pte(page_to_pfn(pb), pte_pgprot(pte_a));
	if (pte_val(pte_a) & PTE_NG)
		goto fail;	/* vmap gave a non-global mapping? */
	pte_a_ng = __pte(pte_val(pte_a) | PTE_NG);
	pte_b_ng = __pte(pte_val(pte_b) | PTE_NG);
	/* The ASID a caller would pass: TCR_EL1.A1 = 1, ASID in TTBR1. */
	asid = read_sysreg(ttbr1_el1) >> 48;

	pr_info("sd-tlb: start va=%lx pte_a=%llx pte_b=%llx asid=%llu threshold=%u kernel-threshold=%u\n",
		va, (u64)pte_val(pte_a), (u64)pte_val(pte_b), asid, THR, KTHR);
	for (i = 0; i < ARRAY_SIZE(variants); i++)
		for (k = 0; k < NKASE; k++)
			if (!variants[i].control || kase_expect_new[k])
				trial(&variants[i], k);
	pr_info("sd-tlb: summary trials=%u pass=%u fail=%u void=%u uncaught=%u\n",
		ntrials, npass, nfail, nvoid, nuncaught);
	vunmap(m);
	return 0;
fail:
	pr_info("sd-tlb: setup failed\n");
	return 0;
}
late_initcall(sd_tlb_test);
