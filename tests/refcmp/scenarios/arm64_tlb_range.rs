//! The `arm64_tlb_range` example's scenarios.

use super::*;

const ASID: u64 = 0x42;
const BASE: u64 = 0x7f12_3400_0000;
const KBASE: u64 = 0xffff_8000_1000_0000;
const USER: &[Arg] = &[Arg::Int("asid"), Arg::Int("start"), Arg::Int("end")];
const KERNEL: &[Arg] = &[Arg::Int("start"), Arg::Int("end")];
const DERIVED: &str = "the example's threshold is derived (501 pages): past it the \
    example flushes the ASID (or everything), the kernel goes on page by page up to \
    MAX_TLBI_OPS = 512";

pub(super) fn arm64_tlb_range() -> Vec<Build> {
    vec![
        Build {
            pins: vec![],
            why: "the derived thresholds (501 pages); sizes where the kernel's \
                  MAX_TLBI_OPS = 512 chooses the same",
            scenarios: [
                vec![derived_range()],
                page_and_mm(),
                ranged_and_repeated(),
                vec![derived_kernel_range()],
            ]
            .into_iter()
            .flatten()
            .collect(),
        },
        kernel_thresholds(),
    ]
}

fn pages(label: &str, start: u64, n: u64) -> Input {
    Input::new(
        label,
        &[
            ("asid", ASID),
            ("start", start),
            ("end", start + n * 0x1000),
        ],
    )
}

fn user(n: u64) -> Input {
    pages(&format!("{n} pages"), BASE, n)
}

fn kpages(n: u64) -> Input {
    Input::new(
        format!("{n} kernel pages"),
        &[("start", KBASE), ("end", KBASE + n * 0x1000)],
    )
}

/// Bit 12 of the start set and an offset in the page: both sides flush
/// the two pages from 0x1000 (a trip count built from `start & 0x1000`
/// instead of `start & 0xfff` would flush three).
fn unaligned_kernel_start() -> Input {
    Input::new(
        "2 kernel pages from an unaligned start",
        &[("start", KBASE + 0x1800), ("end", KBASE + 0x3000)],
    )
}

/// The calls of one scenario: a sequence with its feature word
/// (ARM64_WORKAROUND_REPEAT_TLBI or not).
fn one(seq: &'static str) -> &'static [Call] {
    match seq {
        "flush_tlb_range" => &[Call {
            seq: "flush_tlb_range",
            bind: &[("features", Val::K(0))],
        }],
        "flush_tlb_range repeat_tlbi" => &[Call {
            seq: "flush_tlb_range",
            bind: &[("features", Val::K(1))],
        }],
        // The feature word: no ARM64_WORKAROUND_REPEAT_TLBI.
        "flush_tlb_page" => &[Call {
            seq: "flush_tlb_page",
            bind: &[("features", Val::K(0))],
        }],
        "flush_tlb_page repeat_tlbi" => &[Call {
            seq: "flush_tlb_page",
            bind: &[("features", Val::K(1))],
        }],
        "flush_tlb_mm" => &[Call {
            seq: "flush_tlb_mm",
            bind: &[("features", Val::K(0))],
        }],
        "flush_tlb_mm repeat_tlbi" => &[Call {
            seq: "flush_tlb_mm",
            bind: &[("features", Val::K(1))],
        }],
        "flush_tlb_range_r" => &[Call {
            seq: "flush_tlb_range_r",
            bind: &[("features", Val::K(0))],
        }],
        "flush_tlb_range_r repeat_tlbi" => &[Call {
            seq: "flush_tlb_range_r",
            bind: &[("features", Val::K(1))],
        }],
        "flush_tlb_kernel_range repeat_tlbi" => &[Call {
            seq: "flush_tlb_kernel_range",
            bind: &[("features", Val::K(1))],
        }],
        _ => &[Call {
            seq: "flush_tlb_kernel_range",
            bind: &[("features", Val::K(0))],
        }],
    }
}

fn range(inputs: Vec<Input>) -> Scenario {
    Scenario {
        name: "flush_tlb_range",
        kernel: "tlbflush.h __flush_tlb_range(PAGE_SIZE, last_level) (Linux 6.1)",
        ref_fn: "ref_flush_tlb_range",
        args: USER,
        calls: one("flush_tlb_range"),
        inputs,
    }
}

fn kernel(inputs: Vec<Input>) -> Scenario {
    Scenario {
        name: "flush_tlb_kernel_range",
        kernel: "tlbflush.h flush_tlb_kernel_range() (Linux 6.1)",
        ref_fn: "ref_flush_tlb_kernel_range",
        args: KERNEL,
        calls: one("flush_tlb_kernel_range"),
        inputs,
    }
}

/// The derived threshold, for user ranges.
fn derived_range() -> Scenario {
    range(vec![
        user(1),
        user(16),
        pages("5 pages, unaligned start and end", BASE + 0x800, 5),
        user(600),
        user(501),
        Input::new(
            "501 pages + 1 byte",
            &[
                ("asid", ASID),
                ("start", BASE),
                ("end", BASE + 501 * 0x1000 + 1),
            ],
        )
        .differs(DERIVED),
        // The last two pages, end one byte short of 2^64: no
        // wrap, so page by page (one more byte and the cover
        // would take the flush-all path).
        Input::new(
            "last two pages, end 2^64 - 1",
            &[
                ("asid", ASID),
                ("start", 0xffff_ffff_ffff_e000),
                ("end", u64::MAX),
            ],
        ),
    ])
}

/// One page and the whole address space, with and without the repeat.
fn page_and_mm() -> Vec<Scenario> {
    vec![
        Scenario {
            name: "flush_tlb_page",
            kernel: "tlbflush.h flush_tlb_page() (Linux 6.1)",
            ref_fn: "ref_flush_tlb_page",
            args: &[Arg::Int("asid"), Arg::Int("addr")],
            calls: one("flush_tlb_page"),
            inputs: vec![
                Input::new("aligned", &[("asid", ASID), ("addr", BASE + 0x5000)]),
                Input::new("unaligned", &[("asid", 0xffff), ("addr", BASE + 0x5678)]),
            ],
        },
        Scenario {
            name: "flush_tlb_page repeat_tlbi",
            kernel: "tlbflush.h flush_tlb_page() on a CPU with \
                     ARM64_WORKAROUND_REPEAT_TLBI (Linux 6.1 __tlbi_sync_s1ish)",
            ref_fn: "ref_flush_tlb_page_repeat",
            args: &[Arg::Int("asid"), Arg::Int("addr")],
            calls: one("flush_tlb_page repeat_tlbi"),
            inputs: vec![
                Input::new("aligned", &[("asid", ASID), ("addr", BASE + 0x5000)]),
                Input::new("unaligned", &[("asid", 0xffff), ("addr", BASE + 0x5678)]),
            ],
        },
        Scenario {
            name: "flush_tlb_mm",
            kernel: "tlbflush.h flush_tlb_mm() (Linux 6.1)",
            ref_fn: "ref_flush_tlb_mm",
            args: &[Arg::Int("asid")],
            calls: one("flush_tlb_mm"),
            inputs: vec![
                Input::new("asid", &[("asid", ASID)]),
                Input::new("asid 0xffff", &[("asid", 0xffff)]),
            ],
        },
        Scenario {
            name: "flush_tlb_mm repeat_tlbi",
            kernel: "tlbflush.h flush_tlb_mm() on a CPU with \
                     ARM64_WORKAROUND_REPEAT_TLBI (Linux 6.1 __tlbi_sync_s1ish)",
            ref_fn: "ref_flush_tlb_mm_repeat",
            args: &[Arg::Int("asid")],
            calls: one("flush_tlb_mm repeat_tlbi"),
            inputs: vec![Input::new("asid", &[("asid", ASID)])],
        },
    ]
}

/// FEAT_TLBIRANGE, and the ranges with the repeat.
fn ranged_and_repeated() -> Vec<Scenario> {
    vec![
        Scenario {
            name: "flush_tlb_range_r",
            kernel: "tlbflush.h __flush_tlb_range(PAGE_SIZE, last_level) with \
                     FEAT_TLBIRANGE (Linux 6.1)",
            ref_fn: "ref_flush_tlb_range_r",
            args: USER,
            calls: one("flush_tlb_range_r"),
            inputs: vec![
                user(1),
                user(2),
                user(37),
                user(64),
                user(4099),
                pages("37 pages, unaligned start", BASE + 0x800, 37),
                user((32 << 16) - 1),
                user(32 << 16),
            ],
        },
        Scenario {
            name: "flush_tlb_range repeat_tlbi",
            kernel: "tlbflush.h __flush_tlb_range(PAGE_SIZE, last_level) on a CPU \
                     with ARM64_WORKAROUND_REPEAT_TLBI (Linux 6.1 __tlbi_sync_s1ish, \
                     also after flush_tlb_mm() past the threshold)",
            ref_fn: "ref_flush_tlb_range_repeat",
            args: USER,
            calls: one("flush_tlb_range repeat_tlbi"),
            inputs: vec![
                user(1),
                user(16),
                pages("5 pages, unaligned start and end", BASE + 0x800, 5),
                user(600),
            ],
        },
        Scenario {
            name: "flush_tlb_range_r repeat_tlbi",
            kernel: "tlbflush.h __flush_tlb_range(PAGE_SIZE, last_level) with \
                     FEAT_TLBIRANGE on a CPU with ARM64_WORKAROUND_REPEAT_TLBI \
                     (Linux 6.1)",
            ref_fn: "ref_flush_tlb_range_r_repeat",
            args: USER,
            calls: one("flush_tlb_range_r repeat_tlbi"),
            inputs: vec![
                user(2),
                user(37),
                user(4099),
                pages("37 pages, unaligned start", BASE + 0x800, 37),
                user((32 << 16) - 1),
                user(32 << 16),
            ],
        },
        Scenario {
            name: "flush_tlb_kernel_range repeat_tlbi",
            kernel: "tlbflush.h flush_tlb_kernel_range() on a CPU with \
                     ARM64_WORKAROUND_REPEAT_TLBI (Linux 6.1: the repeat before \
                     the ISB, and after flush_tlb_all() past the threshold)",
            ref_fn: "ref_flush_tlb_kernel_range_repeat",
            args: KERNEL,
            calls: one("flush_tlb_kernel_range repeat_tlbi"),
            inputs: vec![
                kpages(1),
                kpages(5),
                unaligned_kernel_start(),
                kpages(600),
                past_derived_kernel(),
            ],
        },
    ]
}

/// The derived threshold, for kernel ranges.
fn derived_kernel_range() -> Scenario {
    kernel(vec![
        kpages(1),
        kpages(5),
        unaligned_kernel_start(),
        kpages(600),
        kpages(501),
        Input::new(
            "2 kernel pages + 1 byte",
            &[("start", KBASE), ("end", KBASE + 0x2001)],
        )
        .differs(
            "the kernel flushes the pages [start >> 12, end >> 12): a last, \
                 partial page is left out (callers pass page-aligned ends); the \
                 example covers every page the range touches",
        ),
        past_derived_kernel(),
    ])
}

/// One page past the derived threshold: the example flushes everything,
/// the kernel goes on page by page (a threshold one page or more too
/// high would take the page loop here).
fn past_derived_kernel() -> Input {
    Input::new(
        "501 kernel pages + 4K",
        &[("start", KBASE), ("end", KBASE + 502 * 0x1000)],
    )
    .differs(DERIVED)
}

/// The kernel's MAX_TLBI_OPS pinned.
fn kernel_thresholds() -> Build {
    Build {
        pins: vec![
            ("FLUSH_TLB_RANGE_TLB4K_THRESHOLD", 511),
            ("FLUSH_TLB_KERNEL_RANGE_TLB4K_KERNEL_THRESHOLD", 512),
        ],
        why: "the kernel's choice: per page while end - start < MAX_TLBI_OPS pages \
              (user) or <= MAX_TLBI_OPS pages (kernel)",
        scenarios: vec![
            range(vec![
                user(510),
                user(511),
                user(512),
                pages("511 pages from an unaligned start", BASE + 0x800, 511).differs(
                    "the kernel compares the page-rounded range (512 pages here: \
                     TLBI ASIDE1IS), the example the requested size (511 pages: it \
                     invalidates the 512 pages touched one by one)",
                ),
            ]),
            kernel(vec![kpages(511), kpages(512), kpages(513)]),
        ],
    }
}
