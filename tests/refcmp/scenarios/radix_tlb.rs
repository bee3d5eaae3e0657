//! The `radix_tlb` example's scenarios.

use super::*;

const PID: u64 = 0x1_2345;
const BASE: u64 = 0x7fff_a000_0000;
const RANGE: &[Arg] = &[
    Arg::Int("pid"),
    Arg::Int("start"),
    Arg::Int("end"),
    Arg::Int("features"),
];
const PAGE: &[Arg] = &[Arg::Int("pid"), Arg::Int("va"), Arg::Int("features")];
const ONE_PID: &[Arg] = &[Arg::Int("pid"), Arg::Int("features")];

pub(super) fn radix_tlb() -> Vec<Build> {
    let kernel_local = vec![
        range("256 pages", BASE, 256, 0),
        range("257 pages", BASE, 257, 0),
        range("257 pages, ISA 3.1", BASE, 257, 4),
    ];
    vec![
        Build {
            pins: vec![],
            why: "the derived ceilings (31 and 279 pages) against the kernel's with tlb_single_page_flush_ceiling = 31 and tlb_local_single_page_flush_ceiling = 279",
            scenarios: vec![
                scenario("flush_tlb_page", "radix_tlb.c _tlbie_va(64K, RIC_FLUSH_TLB) (Linux 6.1)", "ref_flush_tlb_page", PAGE, page_inputs()),
                scenario("flush_tlb_page_local", "radix_tlb.c _tlbiel_va(64K, RIC_FLUSH_TLB) (Linux 6.1)", "ref_flush_tlb_page_local", PAGE, local_page_inputs()),
                scenario("flush_tlb_pid", "radix_tlb.c _tlbie_pid(RIC_FLUSH_ALL) (Linux 6.1)", "ref_flush_tlb_pid", ONE_PID, pid_inputs()),
                scenario("flush_tlb_pid_local", "radix_tlb.c _tlbiel_pid(RIC_FLUSH_ALL) (Linux 6.1)", "ref_flush_tlb_pid_local", ONE_PID, pid_local_inputs()),
                scenario("flush_tlb_range", "radix_tlb.c __radix__flush_tlb_range, global tlbie path, ceiling 31 (Linux 6.1)", "ref_flush_tlb_range_c31", RANGE, range_inputs()),
                scenario("flush_tlb_range_local", "radix_tlb.c __radix__flush_tlb_range, local tlbiel path, ceiling 279 (Linux 6.1)", "ref_flush_tlb_range_local_c279", RANGE, range_local_inputs()),
                scenario("flush_tlb_all", "radix_tlb.c radix__flush_tlb_all (Linux 6.1)", "ref_flush_tlb_all", &[], vec![Input::new("all", &[])]),
            ],
        },
        Build {
            pins: vec![("FLUSH_TLB_RANGE_LOCAL_RADIX64K_LOCAL_THRESHOLD", 256)],
            why: "the kernel's tlb_local_single_page_flush_ceiling = POWER9_TLB_SETS_RADIX * 2",
            scenarios: vec![scenario(
                "flush_tlb_range_local",
                "radix_tlb.c __radix__flush_tlb_range, local tlbiel path (Linux 6.1)",
                "ref_flush_tlb_range_local",
                RANGE,
                kernel_local,
            )],
        },
        Build {
            pins: vec![("FLUSH_TLB_RANGE_RADIX64K_THRESHOLD", 33)],
            why: "the kernel's tlb_single_page_flush_ceiling = 33",
            scenarios: vec![scenario(
                "flush_tlb_range",
                "radix_tlb.c __radix__flush_tlb_range, global tlbie path (Linux 6.1)",
                "ref_flush_tlb_range",
                RANGE,
                vec![range("33 pages", BASE, 33, 0), range("34 pages", BASE, 34, 0), range("33 pages, both errata", BASE, 33, 3)],
            )],
        },
    ]
}

fn calls(seq: &'static str) -> &'static [Call] {
    match seq {
        "flush_tlb_page" => &[Call {
            seq: "flush_tlb_page",
            bind: NONE,
        }],
        "flush_tlb_page_local" => &[Call {
            seq: "flush_tlb_page_local",
            bind: NONE,
        }],
        "flush_tlb_pid" => &[Call {
            seq: "flush_tlb_pid",
            bind: NONE,
        }],
        "flush_tlb_pid_local" => &[Call {
            seq: "flush_tlb_pid_local",
            bind: NONE,
        }],
        "flush_tlb_all" => &[Call {
            seq: "flush_tlb_all",
            bind: NONE,
        }],
        "flush_tlb_range_local" => &[Call {
            seq: "flush_tlb_range_local",
            bind: NONE,
        }],
        _ => &[Call {
            seq: "flush_tlb_range",
            bind: NONE,
        }],
    }
}

fn scenario(
    name: &'static str,
    kernel: &'static str,
    ref_fn: &'static str,
    args: &'static [Arg],
    inputs: Vec<Input>,
) -> Scenario {
    Scenario {
        name,
        kernel,
        ref_fn,
        args,
        calls: calls(name),
        inputs,
    }
}

// Every combination of the two POWER9 errata (bits 0, 1), and ISA 3.1
// (bit 2) for the local flushes.
fn page(f: u64) -> Vec<Input> {
    vec![
        Input::new(
            format!("aligned, features {f}"),
            &[("pid", PID), ("va", BASE + 0x3_0000), ("features", f)],
        ),
        Input::new(
            format!("unaligned, features {f}"),
            // Odd: the page mask must clear bit 0 as well.
            &[("pid", 0xf_ffff), ("va", BASE + 0x3_1235), ("features", f)],
        ),
        // Bits above a PID's 20: RS = pid << 32 keeps only the low 32.
        Input::new(
            format!("pid all ones, features {f}"),
            &[("pid", u64::MAX), ("va", BASE + 0x3_0000), ("features", f)],
        ),
    ]
}

fn range(label: &str, start: u64, pages: u64, f: u64) -> Input {
    Input::new(
        format!("{label}, features {f}"),
        &[
            ("pid", PID),
            ("start", start),
            ("end", start + pages * 0x1_0000),
            ("features", f),
        ],
    )
}

fn ranges(f: u64) -> Vec<Input> {
    vec![
        range("1 page", BASE, 1, f),
        // The smallest nonzero size, from a page boundary: a cover's
        // size test must not take 1 for empty.
        Input::new(
            format!("1 byte, features {f}"),
            &[
                ("pid", PID),
                ("start", BASE),
                ("end", BASE + 1),
                ("features", f),
            ],
        ),
        range("16 pages", BASE, 16, f),
        // Bit 15 of the start set: the cover's 64K alignment must
        // clear it (a mask one bit short passed every other input).
        range("16 pages from half a page in", BASE + 0x8000, 16, f).outside(
            "the kernel's callers pass page-aligned ranges: from an unaligned start \
             its loop steps 64K from the start and leaves the page holding the end \
             unflushed; the example covers all 17 pages the range touches",
        ),
        range("31 pages", BASE, 31, f),
        range("32 pages (2M)", BASE, 32, f),
        range("48 pages across a 2M boundary", BASE + 0x10_0000, 48, f),
        range("64 pages from 2M (two huge pages)", BASE, 64, f),
        range("1000 pages", BASE, 1000, f),
        // A size of 2^63 + 64K: the page count `(end - start) >> 16`
        // must keep the size's top bit (2^47 + 1 pages, the flush-all
        // in both, not 1 page).
        Input::new(
            format!("2^63 + 64K, features {f}"),
            &[
                ("pid", PID),
                ("start", BASE),
                ("end", BASE.wrapping_add((1 << 63) + 0x1_0000)),
                ("features", f),
            ],
        ),
    ]
}

/// A range whose end passes 2^64 (3M, 48 pages).
fn wrapping(f: u64) -> Input {
    Input::new(
        format!("3M wrapping past 2^64, features {f}"),
        &[
            ("pid", PID),
            ("start", 0u64.wrapping_sub(0x20_0000)),
            ("end", 0x10_0000),
            ("features", f),
        ],
    )
}

fn page_inputs() -> Vec<Input> {
    (0..4).flat_map(page).collect()
}

fn pid_inputs() -> Vec<Input> {
    let mut pid_in = Vec::new();
    for f in 0..4 {
        pid_in.push(Input::new(
            format!("features {f}"),
            &[("pid", PID), ("features", f)],
        ));
        pid_in.push(Input::new(
            format!("pid all ones, features {f}"),
            &[("pid", u64::MAX), ("features", f)],
        ));
    }
    pid_in
}

fn range_inputs() -> Vec<Input> {
    let mut range_in = Vec::new();
    for f in 0..4 {
        range_in.extend(ranges(f));
        // Past the global ceiling (31): the flush-all, as the kernel's.
        range_in.push(wrapping(f));
    }
    for f in 0..4 {
        for n in [16, 1000] {
            range_in.push(Input::new(
                format!("{n} pages, pid all ones, features {f}"),
                &[
                    ("pid", u64::MAX),
                    ("start", BASE),
                    ("end", BASE + n * 0x1_0000),
                    ("features", f),
                ],
            ));
        }
    }
    range_in
}

fn local_page_inputs() -> Vec<Input> {
    [0, 4].iter().flat_map(|&f| page(f)).collect()
}

fn pid_local_inputs() -> Vec<Input> {
    [(PID, 0u64), (PID, 4), (u64::MAX, 0), (u64::MAX, 4)]
        .iter()
        .map(|&(pid, f)| {
            Input::new(
                format!("pid {pid:#x}, features {f}"),
                &[("pid", pid), ("features", f)],
            )
        })
        .collect()
}

// The local path: no errata (they are tlbie's), ISA 3.1 off and on;
// both sides of the derived local ceiling (279) and of the kernel's
// (256).
fn range_local_inputs() -> Vec<Input> {
    let mut range_local_in = Vec::new();
    for f in [0, 4] {
        range_local_in.extend(ranges(f));
        // Under the local ceiling (279): the page-walk cache flush, then
        // the cover, whose body has no flush-all, returns -EINVAL after
        // completing it.
        range_local_in.push(wrapping(f).differs(
            "a range whose end passes 2^64 returns -EINVAL from the exact cover (its body \
             names only the per-page tlbiel; README); the kernel's callers never pass one",
        ));
        for n in [256, 257, 279, 280] {
            range_local_in.push(range(&format!("{n} pages"), BASE, n, f));
        }
        // The page loops' RS: pid << 32 keeps only the pid's low 32 bits
        // (64K pages; 2M pages across a boundary).
        for (label, start, pages) in [
            ("16 pages", BASE, 16),
            ("48 pages across 2M", BASE + 0x10_0000, 48),
        ] {
            range_local_in.push(Input::new(
                format!("{label}, pid all ones, features {f}"),
                &[
                    ("pid", u64::MAX),
                    ("start", start),
                    ("end", start + pages * 0x1_0000),
                    ("features", f),
                ],
            ));
        }
        range_local_in.push(Input::new(
            format!("1000 pages, pid all ones, features {f}"),
            &[
                ("pid", u64::MAX),
                ("start", BASE),
                ("end", BASE + 1000 * 0x1_0000),
                ("features", f),
            ],
        ));
    }
    range_local_in
}
