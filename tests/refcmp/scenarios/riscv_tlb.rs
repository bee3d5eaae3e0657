//! The `riscv_tlb` example's scenarios.

use super::*;

const ASID: u64 = 0x2a;
const BASE: u64 = 0x3f_8000_0000;
const USER: &[Arg] = &[Arg::Int("asid"), Arg::Int("start"), Arg::Int("size")];
const PLAIN: &[Call] = &[Call {
    seq: "flush_tlb_range",
    bind: &[("features", Val::K(0))],
}];
const SVINVAL: &[Call] = &[Call {
    seq: "flush_tlb_range",
    bind: &[("features", Val::K(1))],
}];
const DERIVED: &str = "the example's Svinval threshold is derived (119 pages): up to it \
    the example goes on page by page with sinval.vma, the kernel flushes the ASID past \
    tlb_flush_all_threshold = 64";

pub(super) fn riscv_tlb() -> Vec<Build> {
    let mut scenarios = ranges();
    scenarios.extend(page_mm_and_all());
    vec![Build {
        pins: vec![],
        why: "the derived thresholds: 64 pages with sfence.vma (the kernel's), 119 with Svinval",
        scenarios,
    }]
}

fn pages(n: u64) -> Input {
    Input::new(
        format!("{n} pages"),
        &[("asid", ASID), ("start", BASE), ("size", n * 0x1000)],
    )
}

// The kernel's callers pass page-aligned starts and a size of at least
// one byte: for size 0 the kernel flushes a page (size <= stride),
// the example's cover nothing.
fn inputs(svinval: bool) -> Vec<Input> {
    let differs = |i: Input, why: &'static str| if svinval { i.differs(why) } else { i };
    let mut v = vec![
        differs(
            pages(1),
            "one page: the kernel issues sfence.vma (size <= stride), the example's \
             Svinval cover sinval.vma between its fence pair",
        ),
        pages(2),
        pages(16),
        // Bit 12 of the start set: a page-offset mask one bit too wide
        // would count a page more.
        Input::new(
            "16 pages from an odd page",
            &[
                ("asid", ASID),
                ("start", BASE + 0x1000),
                ("size", 16 * 0x1000),
            ],
        ),
        // A start below the size (the lowest page mmap_min_addr allows):
        // the cover's wrap test compares the size with ~start, and a
        // test of start itself would take the ASID flush here.
        Input::new(
            "2 pages from 0x1000",
            &[("asid", ASID), ("start", 0x1000), ("size", 2 * 0x1000)],
        ),
        pages(64),
        differs(
            Input::new(
                "64 pages + 1 byte",
                &[("asid", ASID), ("start", BASE), ("size", 64 * 0x1000 + 1)],
            ),
            DERIVED,
        ),
        pages(600),
        Input::new(
            "FLUSH_TLB_MAX_SIZE",
            &[("asid", ASID), ("start", 0), ("size", u64::MAX)],
        ),
    ];
    if svinval {
        v.push(pages(100).differs(DERIVED));
        v.push(pages(119).differs(DERIVED));
        v.push(pages(120));
    }
    v
}

/// The range flush, with and without Svinval.
fn ranges() -> Vec<Scenario> {
    vec![
        Scenario {
            name: "flush_tlb_range",
            kernel: "tlbflush.c local_flush_tlb_range_asid(PAGE_SIZE) (Linux v6.8)",
            ref_fn: "ref_flush_tlb_range",
            args: USER,
            calls: PLAIN,
            inputs: inputs(false),
        },
        Scenario {
            name: "flush_tlb_range svinval",
            kernel: "tlbflush.c local_flush_tlb_range_asid(PAGE_SIZE) with Svinval \
                     (Svinval patch v8)",
            ref_fn: "ref_flush_tlb_range_svinval",
            args: USER,
            calls: SVINVAL,
            inputs: inputs(true),
        },
    ]
}

/// One page, one address space, everything.
fn page_mm_and_all() -> Vec<Scenario> {
    vec![
        Scenario {
            name: "flush_tlb_page",
            kernel: "tlbflush.c local_flush_tlb_page_asid() (Linux v6.8)",
            ref_fn: "ref_flush_tlb_page",
            args: &[Arg::Int("asid"), Arg::Int("addr")],
            calls: &[Call {
                seq: "flush_tlb_page",
                bind: NONE,
            }],
            inputs: vec![Input::new(
                "a page",
                &[("asid", ASID), ("addr", BASE + 0x5000)],
            )],
        },
        Scenario {
            name: "flush_tlb_mm",
            kernel: "tlbflush.c local_flush_tlb_all_asid() (Linux v6.8)",
            ref_fn: "ref_flush_tlb_mm",
            args: &[Arg::Int("asid")],
            calls: &[Call {
                seq: "flush_tlb_mm",
                bind: NONE,
            }],
            inputs: vec![Input::new("asid", &[("asid", ASID)])],
        },
        Scenario {
            name: "flush_tlb_all",
            kernel: "tlbflush.h local_flush_tlb_all() (Linux v6.8)",
            ref_fn: "ref_flush_tlb_all",
            args: &[],
            calls: &[Call {
                seq: "flush_tlb_all",
                bind: NONE,
            }],
            inputs: vec![Input::new("everything", &[])],
        },
    ]
}
