//! Which kernel function each example's sequences stand for, the calls
//! that make it up, and the inputs both run on: in the kernel's domain
//! (what its callers pass), several sizes and alignments. Where the
//! example chooses differently from the kernel by design, either a build
//! pins the kernel's threshold (`--set`), or the input is marked
//! `differs` and the comparison must find the difference.

use super::{Arg, Build, Call, Input, Scenario, Val};

const NONE: &[(&str, Val)] = &[];
const PID0: &[(&str, Val)] = &[("pid", Val::K(0))];
/// mmio_invalidate() ends with two flush ATSDs for PID 0 (the GPU needs
/// two): the example's invalidate_pid(0), twice.
const RANGE_FLUSHES: &[Call] = &[
    Call {
        seq: "invalidate_range",
        bind: NONE,
    },
    Call {
        seq: "invalidate_pid",
        bind: PID0,
    },
    Call {
        seq: "invalidate_pid",
        bind: PID0,
    },
];
const VA_FLUSHES: &[Call] = &[
    Call {
        seq: "invalidate_va",
        bind: NONE,
    },
    Call {
        seq: "invalidate_pid",
        bind: PID0,
    },
    Call {
        seq: "invalidate_pid",
        bind: PID0,
    },
];
/// The same with npu_context->nmmu_flush: flush_all_mm() first.
const NMMU_RANGE_FLUSHES: &[Call] = &[
    Call {
        seq: "flush_all_mm",
        bind: NONE,
    },
    Call {
        seq: "invalidate_range",
        bind: NONE,
    },
    Call {
        seq: "invalidate_pid",
        bind: PID0,
    },
    Call {
        seq: "invalidate_pid",
        bind: PID0,
    },
];
const PID_FLUSHES: &[Call] = &[
    Call {
        seq: "invalidate_pid",
        bind: NONE,
    },
    Call {
        seq: "invalidate_pid",
        bind: PID0,
    },
    Call {
        seq: "invalidate_pid",
        bind: PID0,
    },
];

const PID: &str = "the example's PID field is 15 bits (MSB0 24..38) and drops bit 15; \
    the kernel shifts the whole PID (radix PIDs have up to 20 bits) to bit 38, so PID bits \
    15..19 land in launch bits 19..23";

fn npu2_atsd() -> Vec<Build> {
    let range = |label: &str, pid: u64, start: u64, size: u64| {
        Input::new(label, &[("pid", pid), ("start", start), ("size", size)])
    };
    vec![Build {
        pins: vec![],
        why: "no threshold",
        scenarios: vec![
            Scenario {
                name: "invalidate_range; invalidate_pid(0) x2",
                kernel: "npu-dma.c mmio_invalidate() (Linux v5.2)",
                ref_fn: "ref_mmio_invalidate",
                args: &[
                    Arg::Dev("npu"),
                    Arg::Count("npu"),
                    Arg::Int("pid"),
                    Arg::Int("start"),
                    Arg::Int("size"),
                ],
                calls: RANGE_FLUSHES,
                inputs: vec![
                    range("one 64K page", 5, 0x1001_0000, 0x1_0000),
                    range("64K from an unaligned start", 5, 0x1000_8000, 0x1_0000).differs(
                        "for size == 64K the kernel issues one 64K ATSD at the unaligned start \
                         (its callers pass whole pages); the example takes the 2M block that \
                         holds both 64K pages the range touches",
                    ),
                    range("4K inside a 64K page", 5, 0x1001_3000, 0x1000).differs(
                        "below 64K the kernel's smallest choice is the 2M block (only size == 64K \
                         gets a 64K ATSD); the example takes the 64K page that holds the range",
                    ),
                    range("128K: two 64K pages", 5, 0x1001_0000, 0x2_0000),
                    range("1M inside a 2M block", 5, 0x1008_0000, 0x10_0000),
                    range("one 1G block", 5, 0x4000_0000, 0x4000_0000),
                    range("across 2M, inside 1G", 5, 0x401f_0000, 0x2_0000),
                    range("across a 1G boundary", 5, 0x7fff_0000, 0x2_0000),
                    range("everything (size ~0)", 5, 0, u64::MAX),
                    range("pid 0x7fff, 2M", 0x7fff, 0x1001_0000, 0x2_0000),
                    range("pid 0x7fff, 64K", 0x7fff, 0x1001_0000, 0x1_0000),
                    range("pid 0x7fff, one 1G block", 0x7fff, 0x4000_0000, 0x4000_0000),
                    range("pid 0x7fff, everything", 0x7fff, 0, u64::MAX),
                    // Ends at 2^64 - 1 (an odd size): no wrap.
                    range("up to 2^64 - 1", 5, 0xffff_ffff_fff0_0000, 0xf_ffff),
                    range(
                        "pid 0x7fff, across a 1G boundary",
                        0x7fff,
                        0x7fff_0000,
                        0x2_0000,
                    ),
                    range("64K + 1 byte: 2M", 5, 0x1000_0000, 0x1_0001),
                    range(
                        "2M + 1 byte from a 1G boundary: 1G",
                        5,
                        0x4000_0000,
                        0x20_0001,
                    ),
                    range("pid 0x8001, 64K", 0x8001, 0x1001_0000, 0x1_0000).differs(PID),
                    range("pid 0x8001, 2M", 0x8001, 0x1001_0000, 0x2_0000).differs(PID),
                    range("pid 0x8001, 1G", 0x8001, 0x4000_0000, 0x4000_0000).differs(PID),
                    range("pid 0x8001, all", 0x8001, 0x7fff_0000, 0x2_0000).differs(PID),
                ],
            },
            Scenario {
                name: "flush_all_mm; invalidate_range; invalidate_pid(0) x2",
                kernel: "npu-dma.c mmio_invalidate() with nmmu_flush, radix__flush_all_mm() (Linux v5.2)",
                ref_fn: "ref_mmio_invalidate_nmmu",
                args: &[
                    Arg::Dev("npu"),
                    Arg::Count("npu"),
                    Arg::Int("pid"),
                    Arg::Int("start"),
                    Arg::Int("size"),
                    Arg::Int("features"),
                ],
                calls: NMMU_RANGE_FLUSHES,
                inputs: [0, 1]
                    .into_iter()
                    .flat_map(|f| {
                        let radix = if f == 1 { "radix" } else { "hash" };
                        [
                            Input::new(
                                format!("one 64K page, {radix}"),
                                &[("pid", 5), ("start", 0x1001_0000), ("size", 0x1_0000), ("features", f)],
                            ),
                            Input::new(
                                format!("1M inside a 2M block, {radix}"),
                                &[("pid", 5), ("start", 0x1008_0000), ("size", 0x10_0000), ("features", f)],
                            ),
                            Input::new(
                                format!("everything, pid 0x7fff, {radix}"),
                                &[("pid", 0x7fff), ("start", 0), ("size", u64::MAX), ("features", f)],
                            ),
                        ]
                    })
                    .collect(),
            },
            Scenario {
                name: "invalidate_va; invalidate_pid(0) x2",
                kernel: "npu-dma.c mmio_invalidate(va, SZ_64K) (Linux v5.2)",
                ref_fn: "ref_mmio_invalidate_page",
                args: &[
                    Arg::Dev("npu"),
                    Arg::Count("npu"),
                    Arg::Int("pid"),
                    Arg::Int("va"),
                ],
                calls: VA_FLUSHES,
                inputs: vec![
                    Input::new("aligned", &[("pid", 5), ("va", 0x1001_0000)]),
                    Input::new("unaligned va", &[("pid", 0x1234), ("va", 0x1001_2345)]),
                    Input::new("pid 0x7fff", &[("pid", 0x7fff), ("va", 0x1001_0000)]),
                ],
            },
            Scenario {
                name: "invalidate_pid; invalidate_pid(0) x2",
                kernel: "npu-dma.c mmio_invalidate(0, ~0UL) (pnv_npu2_mn_release, Linux v5.2)",
                ref_fn: "ref_mmio_invalidate_all",
                args: &[Arg::Dev("npu"), Arg::Count("npu"), Arg::Int("pid")],
                calls: PID_FLUSHES,
                inputs: vec![
                    Input::new("pid 5", &[("pid", 5)]),
                    Input::new("pid 0x7fff", &[("pid", 0x7fff)]),
                ],
            },
        ],
    }]
}

fn npu2_tce_kill() -> Vec<Build> {
    const ARGS: &[Arg] = &[
        Arg::Dev("npu"),
        Arg::Int("pe"),
        Arg::Int("dma_addr"),
        Arg::Int("npages"),
        Arg::Int("tce_size"),
    ];
    const CALLS: &[Call] = &[Call {
        seq: "tce_kill",
        bind: NONE,
    }];
    let kill_at = |pe: u64, dma: u64, npages: u64, tce_size: u64| {
        Input::new(
            format!("PE {pe}, {npages} pages of {tce_size:#x} at {dma:#x}"),
            &[
                ("pe", pe),
                ("dma_addr", dma),
                ("npages", npages),
                ("tce_size", tce_size),
            ],
        )
    };
    let kill = |npages: u64, tce_size: u64| kill_at(3, 0x8000_0000, npages, tce_size);
    const PAST: &str = "the example's threshold is derived (129 pages), skiboot's is \
        npages < 128: here one of them kills page by page, the other all";
    const WRAPS: &str = "a range whose end passes 2^64 takes the flush-all path (README, \
        \"What a cover never does\"): one KILL_ALL; skiboot kills page by page at the \
        wrapped addresses";
    let sc = |inputs| Scenario {
        name: "tce_kill",
        kernel: "skiboot hw/npu2.c npu2_tce_kill(OPAL_PCI_TCE_KILL_PAGES) (v7.1)",
        ref_fn: "ref_npu2_tce_kill",
        args: ARGS,
        calls: CALLS,
        inputs,
    };
    vec![
        Build {
            pins: vec![],
            why: "the derived threshold (129 pages); inputs where skiboot's `npages < 128` \
                  chooses the same",
            scenarios: vec![sc(vec![
                kill(0, 0x1000),
                kill(1, 0x1000),
                // Around the unrolled page loop's four pages per test.
                kill(3, 0x1000),
                kill(4, 0x1000),
                kill(5, 0x1000),
                kill(8, 0x1000),
                kill(9, 0x1_0000),
                kill(8, 0x1_0000),
                kill(127, 0x1000),
                kill(129, 0x1000).differs(PAST),
                kill(130, 0x1000),
                kill(512, 0x1000),
                kill_at(15, 0x8000_0000, 8, 0x1000),
                kill_at(16, 0x8000_0000, 8, 0x1000),
                kill_at(15, 0x8000_0000, 512, 0x1000),
                kill_at(16, 0x8000_0000, 512, 0x1000),
                kill_at(3, 0x8000_0000, 1, 1),
                kill_at(3, 0x8000_0801, 8, 0x1000).differs(
                    "skiboot kills at dma_addr + k * tce_size as given; the example covers \
                     the pages the range touches, from the aligned-down address (callers \
                     pass aligned addresses)",
                ),
                // One byte at the last address but one: the range ends
                // at 2^64 - 1, no wrap, so page by page.
                // The address's top byte overlaps the PE field: SETFIELD
                // replaces it with the PE (0xf3..), as the example masks.
                kill_at(3, 0xffff_ffff_ffff_fffe, 1, 1),
                // Two pages across 2^63: the end is past 2^56, where the
                // page loop that carries `{pe} | bits | addr` as a sum
                // would be wrong (the address's top byte overlaps the PE
                // field), so the loop that ORs on every page runs.
                kill_at(3, 0x7fff_ffff_ffff_f000, 2, 0x1000),
                kill_at(5, 0x0a00_0000_0000_0000, 4, 0x1000),
                // Bits 48-55 kept, 56-59 replaced by the PE, below and
                // above 2^56.
                kill_at(5, 0x00ff_0000_0000_0000, 3, 0x1000),
                kill_at(5, 0x00ff_ffff_ffff_e000, 3, 0x1000),
                kill_at(5, 0x01ff_0000_0000_0000, 3, 0x1000),
                kill_at(3, 0xffff_ffff_ffff_f000, 2, 0x1000).differs(WRAPS),
                kill_at(16, 0xffff_ffff_ffff_f000, 2, 0x1000).differs(WRAPS),
                // 129 (the threshold) pages of 2^57 pass 2^64: -22.
                kill_at(3, 0x8000_0000, 1, 1 << 57).outside(
                    "skiboot's tce_size is a u32; 2^57 does not fit (the example returns -22: \
                     129 such pages pass 2^64)",
                ),
                kill_at(3, 0x8000_0000, 8, 0).outside(
                    "a TCE size of 0 is no TVE page size (skiboot returns OPAL_PARAMETER)",
                ),
                // The largest granule the cover takes (its guard's mask).
                kill_at(3, 0x8000_0000, 1, 1 << 56).outside(
                    "skiboot's tce_size is a u32; 2^56 does not fit (the example kills the \
                     one 2^56 page that holds the address)",
                ),
            ])],
        },
        Build {
            pins: vec![("TCE_KILL_TCE_THRESHOLD", 127)],
            why: "skiboot's choice: KILL_ONE per page while npages < 128",
            scenarios: vec![sc(vec![
                kill(127, 0x1000),
                kill(128, 0x1000),
                kill(129, 0x1000),
            ])],
        },
    ]
}

fn arm_smmu() -> Vec<Build> {
    const RANGE_ARGS: &[Arg] = &[
        Arg::Dev("cb"),
        Arg::Int("asid"),
        Arg::Int("iova"),
        Arg::Int("size"),
        Arg::Int("granule"),
    ];
    const WALK: &[Call] = &[
        Call {
            seq: "tlb_inv_walk_s1",
            bind: NONE,
        },
        Call {
            seq: "tlb_sync",
            bind: NONE,
        },
    ];
    let walk = |label: &str, iova: u64, size: u64, granule: u64| {
        Input::new(
            label,
            &[
                ("asid", 7),
                ("iova", iova),
                ("size", size),
                ("granule", granule),
            ],
        )
    };
    let generic = |inputs| Scenario {
        name: "tlb_inv_walk_s1; tlb_sync",
        kernel: "arm-smmu.c arm_smmu_tlb_inv_walk_s1() (Linux 6.1)",
        ref_fn: "ref_tlb_inv_walk_s1",
        args: RANGE_ARGS,
        calls: WALK,
        inputs,
    };
    let qcom = |inputs| Scenario {
        name: "tlb_inv_walk_s1; tlb_sync (qcom)",
        kernel: "arm-smmu.c arm_smmu_tlb_inv_walk_s1() with flush_walk_prefer_tlbiasid \
                 (arm-smmu-qcom.c, Linux 6.1)",
        ref_fn: "ref_qcom_tlb_inv_walk_s1",
        args: RANGE_ARGS,
        calls: WALK,
        inputs,
    };
    // The flag as a parameter of one sequence: each arm against the
    // kernel's function with the flag the same way.
    const FLAG_ON: &[Call] = &[Call {
        seq: "tlb_inv_walk_s1_flag",
        bind: &[("prefer_tlbiasid", Val::K(1))],
    }];
    const FLAG_OFF: &[Call] = &[Call {
        seq: "tlb_inv_walk_s1_flag",
        bind: &[("prefer_tlbiasid", Val::K(0))],
    }];
    let flag = |on: bool| Scenario {
        name: if on {
            "tlb_inv_walk_s1_flag(prefer_tlbiasid = 1)"
        } else {
            "tlb_inv_walk_s1_flag(prefer_tlbiasid = 0)"
        },
        kernel: "arm-smmu.c arm_smmu_tlb_inv_walk_s1() with cfg->flush_walk_prefer_tlbiasid \
                 as set or not (Linux 6.1)",
        ref_fn: if on {
            "ref_qcom_tlb_inv_walk_s1"
        } else {
            "ref_tlb_inv_walk_s1"
        },
        args: RANGE_ARGS,
        calls: if on { FLAG_ON } else { FLAG_OFF },
        inputs: [
            walk("8 granules of 4K", 0x40_0000, 0x8000, 0x1000),
            walk("4 granules of 64K", 0x1000_0000, 0x4_0000, 0x1_0000),
            walk("one 2M granule", 0x4000_0000, 0x20_0000, 0x20_0000),
            // The range's size test: one byte of granule 1 is one TLBIVA.
            walk("1 byte, granule 1", 0x40_0000, 1, 1),
            walk("granule 1", 0x40_0000, 2, 1),
            // Bit 63 of the address is bit 51 of the TLBIVA value.
            walk(
                "iova with bit 63 set",
                0x8000_0000_0040_0000,
                0x2000,
                0x1000,
            ),
        ]
        .into_iter()
        // Below 4K the granule loop that adds granule >> 12 (0) to the
        // shifted address must not run (TLBIASID, with the flag, agrees).
        .chain((!on).then(|| {
            walk("2K granules", 0x40_0000, 0x2000, 0x800).differs(
                "the kernel adds granule >> 12 to the shifted iova, 0 for a granule below \
                 4K: it writes page 0x400 four times; the example writes the page of each \
                 granule (0x400, 0x400, 0x401, 0x401)",
            )
        }))
        .collect(),
    };
    let small = || {
        vec![
            walk("8 granules of 4K", 0x40_0000, 0x8000, 0x1000),
            walk("4 granules of 64K", 0x1000_0000, 0x4_0000, 0x1_0000),
            // A power-of-two granule in bits 48-55: the granule guard's
            // mask (0x00ffffff_ffffffff) must keep them.
            walk("two 2^48 granules", 1 << 48, 1 << 49, 1 << 48),
            Input::new(
                "asid with bits above 15",
                &[
                    ("asid", 0x8000_0000_0001_0007),
                    ("iova", 0x40_0000),
                    ("size", 0x2000),
                    ("granule", 0x1000),
                ],
            )
            .outside(
                "ASIDs are 16 bits: the kernel's TLBIASID write is the u16 ASID, the \
                 example's the low 32 bits of its u64 parameter",
            ),
            walk("granule 1", 0x40_0000, 2, 1),
            walk("granule 0", 0x40_0000, 0x1000, 0)
                .outside("the kernel loops forever on a granule of 0"),
            // The cover's size test: one byte of a granule is one TLBIVA.
            walk("1 byte of a 4K granule", 0x40_0000, 1, 0x1000).outside(
                "the kernel's `while (size -= granule)` never ends for a size that is not \
                 a multiple of the granule",
            ),
        ]
    };
    let odd = || {
        walk("odd unaligned iova", 0x40_1001, 0x2000, 0x1000).differs(
            "the kernel steps from iova by the granule size / granule times (callers \
             pass granule-aligned ranges); the example invalidates every granule the \
             range touches, one more here",
        )
    };
    let large = || {
        vec![
            walk("2M of 4K granules", 0x20_0000, 0x20_0000, 0x1000),
            walk("1G of 2M granules", 0x4000_0000, 0x4000_0000, 0x20_0000),
        ]
    };
    let range = |label: &str, asid: u64, iova: u64, size: u64, granule: u64| {
        Input::new(
            label,
            &[
                ("asid", asid),
                ("iova", iova),
                ("size", size),
                ("granule", granule),
            ],
        )
    };
    vec![
        Build {
            pins: vec![],
            why: "the derived threshold (413 granules): below it the generic walk flush, \
                  above it the qcom one choose as the example does",
            scenarios: vec![
                Scenario {
                    name: "tlb_inv_range_s1",
                    kernel: "arm-smmu.c arm_smmu_tlb_inv_range_s1(TLBIVA) (Linux 6.1)",
                    ref_fn: "ref_tlb_inv_range_s1",
                    args: RANGE_ARGS,
                    calls: &[Call {
                        seq: "tlb_inv_range_s1",
                        bind: NONE,
                    }],
                    inputs: vec![
                        range("one 4K granule", 7, 0x20_0000, 0x1000, 0x1000),
                        range("2M of 4K granules", 7, 0x20_0000, 0x20_0000, 0x1000),
                        range("3 granules of 64K", 0xffff, 0x1000_0000, 0x3_0000, 0x1_0000),
                        range("2 granules of 2M", 1, 0x4000_0000, 0x40_0000, 0x20_0000),
                        range("unaligned iova", 7, 0x1800, 0x2000, 0x1000),
                        range(
                            "asid with bits above 15 (both shift them out)",
                            0x8000_0000_0001_0007,
                            0x20_0000,
                            0x2000,
                            0x1000,
                        ),
                        // Around the unrolled loop's four trips per test:
                        // one short of it, exactly, one over, three over,
                        // two rounds and one over. (A size that is not a
                        // multiple of the granule hangs the kernel's
                        // `while (size -= granule)`.)
                        range("3 granules of 4K", 7, 0x20_0000, 0x3000, 0x1000),
                        range("4 granules of 4K", 7, 0x20_0000, 0x4000, 0x1000),
                        range("5 granules of 4K", 7, 0x20_0000, 0x5000, 0x1000),
                        range("7 granules of 4K", 7, 0x20_0000, 0x7000, 0x1000),
                        range("8 granules of 4K", 7, 0x20_0000, 0x8000, 0x1000),
                        range("9 granules of 4K", 7, 0x20_0000, 0x9000, 0x1000),
                        range(
                            "11 granules of 64K",
                            0xffff,
                            0x1000_0000,
                            0xb_0000,
                            0x1_0000,
                        ),
                        range("granule 1", 7, 0x20_0000, 2, 1),
                        range(
                            "iova with bit 63 set",
                            7,
                            0x8000_0000_0020_0000,
                            0x2000,
                            0x1000,
                        ),
                        range("granule 0", 7, 0x20_0000, 0x1000, 0)
                            .outside("the kernel loops forever on a granule of 0"),
                        // Past 2^60 `a >> 12` reaches the ASID field: the
                        // granule loop that carries the OR as a sum must
                        // not run.
                        range("across 2^60", 1, (1 << 60) - 0x1000, 0x2000, 0x1000).differs(
                            "the kernel adds granule >> 12 to (iova >> 12) | (asid << 48) and \
                             carries into the ASID field at 2^60 (0x2_0000_0000_0000); the \
                             example writes (a >> 12) | (asid << 48) for each granule \
                             (0x1_0000_0000_0000)",
                        ),
                        // Across 2^63 the end's bits 60..62 are clear: the
                        // guard of the carrying loop must test bit 63 too.
                        range("across 2^63", 1, (1 << 63) - 0x1000, 0x2000, 0x1000).differs(
                            "the kernel adds granule >> 12 to (iova >> 12) | (asid << 48): at \
                             2^63 the page number's carry clears the ASID bits it overlaps \
                             (0x8_0000_0000_0000); the example writes (a >> 12) | (asid << 48) \
                             for each granule (0x9_0000_0000_0000)",
                        ),
                    ],
                },
                Scenario {
                    name: "tlb_sync",
                    kernel: "arm-smmu.c arm_smmu_tlb_sync_context() (Linux 6.1)",
                    ref_fn: "ref_tlb_sync_context",
                    args: &[Arg::Dev("cb")],
                    calls: &[Call {
                        seq: "tlb_sync",
                        bind: NONE,
                    }],
                    inputs: vec![Input::new("", &[])],
                },
                Scenario {
                    name: "tlb_inv_context_s1; tlb_sync",
                    kernel: "arm-smmu.c arm_smmu_tlb_inv_context_s1() (Linux 6.1)",
                    ref_fn: "ref_tlb_inv_context_s1",
                    args: &[Arg::Dev("cb"), Arg::Int("asid")],
                    calls: &[
                        Call {
                            seq: "tlb_inv_context_s1",
                            bind: NONE,
                        },
                        Call {
                            seq: "tlb_sync",
                            bind: NONE,
                        },
                    ],
                    inputs: vec![
                        Input::new("asid 7", &[("asid", 7)]),
                        Input::new("asid 0xffff", &[("asid", 0xffff)]),
                    ],
                },
                generic(
                    [
                        small(),
                        vec![
                            odd(),
                            // Across 2^60 the page number reaches the
                            // ASID's bits (a carry there is not an OR):
                            // the loop that carries the TLBIVA operand is
                            // only taken below.
                            walk("two pages across 2^60", (1 << 60) - 0x1000, 0x2000, 0x1000)
                                .differs(
                                    "the kernel adds granule >> 12 to the TLBIVA operand, so \
                                     past 2^60 the page number carries into the ASID (0x8..); \
                                     the example ORs each page's number with the ASID (0x7..). \
                                     No SMMU has a 61-bit input address",
                                ),
                            // Below 4K the granule loop that adds granule >> 12
                            // (0) must not run: its guard tests the low 12 bits.
                            walk("2K granules", 0x40_0000, 0x2000, 0x800).differs(
                                "the kernel adds granule >> 12 to the shifted iova, 0 for a \
                                 granule below 4K: it writes page 0x400 four times; the example \
                                 writes the page of each granule (0x400, 0x400, 0x401, 0x401)",
                            ),
                            walk(
                                "413 granules of 4K (the threshold)",
                                0x40_0000,
                                413 << 12,
                                0x1000,
                            ),
                            walk(
                                "iova with bit 63 set",
                                0x8000_0000_0040_0000,
                                0x2000,
                                0x1000,
                            ),
                            walk("end wraps past 2^64", 0xffff_ffff_ffff_f000, 0x2000, 0x1000)
                                .differs(
                                "a range whose end passes 2^64 takes the flush-all path (README, \
                                 \"What a cover never does\"): one TLBIASID; the kernel's walk \
                                 writes TLBIVA for the wrapped addresses",
                            ),
                        ],
                    ]
                    .concat(),
                ),
                flag(true),
                flag(false),
                qcom(vec![
                    walk("32M of 4K granules", 0x40_0000, 0x200_0000, 0x1000),
                    walk(
                        "414 granules of 4K (one above)",
                        0x40_0000,
                        414 << 12,
                        0x1000,
                    ),
                ]),
            ],
        },
        Build {
            // Not u64::MAX: THRESHOLD granules must fit in 2^64 for the
            // cover to promise its per-granule path (README, "What a cover
            // never does"); 2^32 granules is more than any range here.
            pins: vec![("TLB_INV_WALK_S1_S1_THRESHOLD", 1 << 32)],
            why: "the generic driver's choice: TLBIVA per granule at any size a scenario asks",
            scenarios: vec![generic(large())],
        },
        Build {
            pins: vec![("TLB_INV_WALK_S1_S1_THRESHOLD", u64::MAX)],
            why: "a threshold no granule size fits under: the cover returns -22",
            scenarios: vec![generic(
                large()
                    .into_iter()
                    .map(|i| {
                        i.differs(
                            "with THRESHOLD u64::MAX, THRESHOLD granules of any size above 1 \
                             pass 2^64, so the cover cannot promise to cover the range and \
                             returns -22 before any write (README, \"What a cover never \
                             does\"); the kernel has no threshold to overflow",
                        )
                    })
                    .collect(),
            )],
        },
        Build {
            pins: vec![("TLB_INV_WALK_S1_S1_THRESHOLD", 0)],
            why: "arm-smmu-qcom.c's choice: TLBIASID at any size",
            scenarios: vec![qcom([small(), large()].concat())],
        },
    ]
}

fn arm64_tlb_range() -> Vec<Build> {
    const ASID: u64 = 0x42;
    const BASE: u64 = 0x7f12_3400_0000;
    const KBASE: u64 = 0xffff_8000_1000_0000;
    const USER: &[Arg] = &[Arg::Int("asid"), Arg::Int("start"), Arg::Int("end")];
    const KERNEL: &[Arg] = &[Arg::Int("start"), Arg::Int("end")];
    let pages = |label: &str, start: u64, n: u64| {
        Input::new(
            label,
            &[
                ("asid", ASID),
                ("start", start),
                ("end", start + n * 0x1000),
            ],
        )
    };
    let user = |n: u64| pages(&format!("{n} pages"), BASE, n);
    let kpages = |n: u64| {
        Input::new(
            format!("{n} kernel pages"),
            &[("start", KBASE), ("end", KBASE + n * 0x1000)],
        )
    };
    const DERIVED: &str = "the example's threshold is derived (501 pages): past it the \
        example flushes the ASID (or everything), the kernel goes on page by page up to \
        MAX_TLBI_OPS = 512";
    let one = |seq: &'static str| -> &'static [Call] {
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
    };
    let range = |inputs| Scenario {
        name: "flush_tlb_range",
        kernel: "tlbflush.h __flush_tlb_range(PAGE_SIZE, last_level) (Linux 6.1)",
        ref_fn: "ref_flush_tlb_range",
        args: USER,
        calls: one("flush_tlb_range"),
        inputs,
    };
    let kernel = |inputs| Scenario {
        name: "flush_tlb_kernel_range",
        kernel: "tlbflush.h flush_tlb_kernel_range() (Linux 6.1)",
        ref_fn: "ref_flush_tlb_kernel_range",
        args: KERNEL,
        calls: one("flush_tlb_kernel_range"),
        inputs,
    };
    vec![
        Build {
            pins: vec![],
            why: "the derived thresholds (501 pages); sizes where the kernel's \
                  MAX_TLBI_OPS = 512 chooses the same",
            scenarios: vec![
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
                ]),
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
                    inputs: vec![kpages(1), kpages(5), kpages(600)],
                },
                kernel(vec![
                    kpages(1),
                    kpages(5),
                    // Bit 12 of the start set and an offset in the page:
                    // both sides flush the two pages from 0x1000.
                    Input::new(
                        "2 kernel pages from an unaligned start",
                        &[("start", KBASE + 0x1800), ("end", KBASE + 0x3000)],
                    ),
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
                    Input::new(
                        "501 kernel pages + 4K",
                        &[("start", KBASE), ("end", KBASE + 502 * 0x1000)],
                    )
                    .differs(DERIVED),
                ]),
            ],
        },
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
        },
    ]
}

fn vtd_iotlb() -> Vec<Build> {
    // iommu->cap: cap_write_drain is bit 54, cap_max_amask_val bits
    // 48-53, cap_pgsel_inv bit 39 (intel/iommu.h).
    const DW: u64 = 1 << 54;
    let page = |label: &str, did: u64, addr: u64, am: u64, cap: u64| {
        Input::new(
            label,
            &[("did", did), ("addr", addr), ("am", am), ("cap", cap)],
        )
    };
    let range_cap = |label: &str, did: u64, start: u64, end: u64, cap: u64| {
        Input::new(
            label,
            &[("did", did), ("start", start), ("end", end), ("cap", cap)],
        )
    };
    // An IOMMU that drains writes, with PSI `pgsel` and `max_amask`.
    let range = |label: &str, did: u64, start: u64, end: u64, pgsel: u64, max_amask: u64| {
        range_cap(label, did, start, end, DW | pgsel << 39 | max_amask << 48)
    };
    vec![Build {
        pins: vec![],
        why: "no threshold",
        scenarios: vec![
            Scenario {
                name: "iotlb_flush_page",
                kernel: "intel/iommu.c __iommu_flush_iotlb(DMA_TLB_PSI_FLUSH) (Linux 6.1)",
                ref_fn: "ref_iommu_flush_iotlb_psi",
                args: &[
                    Arg::Dev("iotlb"),
                    Arg::Int("did"),
                    Arg::Int("addr"),
                    Arg::Int("am"),
                    Arg::Int("cap"),
                ],
                calls: &[Call {
                    seq: "iotlb_flush_page",
                    bind: NONE,
                }],
                inputs: vec![
                    page("one page", 5, 0x1234_5000, 0, 0),
                    page("one page, write drain", 5, 0x1234_5000, 0, DW),
                    page("512 pages, did 0xffff", 0xffff, 0x8000_0000, 9, !0),
                    page("IH set in the address", 1, 0x40_0040, 0, DW),
                    page("address 0, one page", 2, 0, 0, 0).differs(
                        "the kernel skips the IVA write when addr | size_order is 0 \
                         (`if (val_iva)`), so IVA keeps whatever an earlier flush left; \
                         the example always writes IVA",
                    ),
                ],
            },
            Scenario {
                name: "iotlb_flush_domain",
                kernel: "intel/iommu.c __iommu_flush_iotlb(DMA_TLB_DSI_FLUSH) (Linux 6.1)",
                ref_fn: "ref_iommu_flush_iotlb_dsi",
                args: &[Arg::Dev("iotlb"), Arg::Int("did"), Arg::Int("cap")],
                calls: &[Call {
                    seq: "iotlb_flush_domain",
                    bind: NONE,
                }],
                inputs: vec![
                    Input::new("did 5", &[("did", 5), ("cap", 0)]),
                    Input::new("did 5, write drain", &[("did", 5), ("cap", DW)]),
                    Input::new("did 0xffff, every cap bit", &[("did", 0xffff), ("cap", !0)]),
                ],
            },
            Scenario {
                name: "iotlb_flush_range",
                kernel: "intel/cache.c cache_tag_flush_range() mask and PSI/DSI choice \
                         (Linux 6.11), dmar.c __iommu_flush_iotlb()",
                ref_fn: "ref_iotlb_flush_range",
                args: &[
                    Arg::Dev("iotlb"),
                    Arg::Int("did"),
                    Arg::Int("start"),
                    Arg::Int("end"),
                    Arg::Int("cap"),
                ],
                calls: &[Call {
                    seq: "iotlb_flush_range",
                    bind: NONE,
                }],
                inputs: vec![
                    range("one page", 5, 0x1234_5000, 0x1234_5fff, 1, 9),
                    range_cap(
                        "one page, no drain",
                        5,
                        0x1234_5000,
                        0x1234_5fff,
                        9 << 48 | 1 << 39,
                    ),
                    range_cap("no PSI, no drain: DSI", 2, 0x1000, 0x1fff, 63 << 48),
                    range("two pages, unaligned: mask 3", 5, 0x3000, 0x4fff, 1, 9),
                    range("512 aligned pages", 0xffff, 0x20_0000, 0x3f_ffff, 1, 9),
                    range(
                        "513 pages: mask 10 above max_amask 9, DSI",
                        1,
                        0x20_0000,
                        0x40_0fff,
                        1,
                        9,
                    ),
                    range("no PSI (pgsel 0): DSI", 2, 0x1000, 0x1fff, 0, 63),
                    range("everything: DSI", 3, 0, u64::MAX, 1, 63),
                    range("page 0, mask 0: no IVA write", 4, 0, 0xfff, 1, 9),
                    range("one byte past a page", 6, 0x5fff, 0x6000, 1, 9),
                    range("did with bit 16", 0x1_0005, 0x3000, 0x3fff, 1, 9),
                    range(
                        "everything, any max_amask: DSI",
                        3,
                        0,
                        u64::MAX,
                        1,
                        u64::MAX,
                    ),
                    range(
                        "half the address space: mask 51",
                        3,
                        0,
                        (1 << 63) - 1,
                        1,
                        63,
                    ),
                ],
            },
        ],
    }]
}

fn e6500_tcd_lock(src: &str) -> Vec<Build> {
    // struct tlb_core_data in the kernel's layout: lock, esel_next,
    // esel_max, esel_first.
    const CPU255: &str = "the lock byte holds cpu + 1: the kernel's `stbcx.` of 256 stores 0 \
                          (a lock that reads free; no e6500 system has 256 cpus), the example \
                          returns -22 for an owner outside 1..255 before touching the lock";
    let tcd = |next: u8| [0u8, next, 4, 0];
    let layout = (!src.contains("acquire tcd[0]")).then_some(
        "the example's tlb_core_data is not the kernel's (issue 12 section 4: the kernel \
         has the lock at byte 0, esel_next at byte 1)",
    );
    let esel = |label: &str, next: u8| {
        let i = Input::new(label, &[("cpu", 1)])
            .mem("tcd", &tcd(next))
            .mem("mas0", &[0; 8]);
        match layout {
            Some(why) => i.differs(why),
            None => i,
        }
    };
    vec![Build {
        pins: vec![],
        why: "no threshold",
        scenarios: vec![
            Scenario {
                name: "tcd_lock",
                kernel: "tlb_low_64e.S tlb_miss_common_e6500 lock (Linux 6.1)",
                ref_fn: "ref_tcd_lock",
                args: &[Arg::Mem("lock"), Arg::Int("cpu")],
                calls: &[Call {
                    seq: "tcd_lock",
                    bind: NONE,
                }],
                inputs: vec![
                    Input::new("free", &[("cpu", 5)]).mem("lock", &[0, 0, 0, 0]),
                    Input::new("held by this cpu", &[("cpu", 5)]).mem("lock", &[6, 0, 0, 0]),
                    Input::new("cpu 0, free", &[("cpu", 0)]).mem("lock", &[0, 9, 9, 9]),
                    Input::new("cpu 254 (owner 255, the largest)", &[("cpu", 254)])
                        .mem("lock", &[0, 0, 0, 0]),
                    Input::new("cpu 255 (owner 256)", &[("cpu", 255)])
                        .mem("lock", &[0, 0, 0, 0])
                        .differs(CPU255),
                    Input::new("held by cpu 1, released after two reads", &[("cpu", 5)])
                        .mem("lock", &[2, 0, 0, 0])
                        .mem_reads("lock", 0, &[2, 0]),
                ],
            },
            Scenario {
                name: "tcd_unlock",
                kernel: "tlb_low_64e.S tlb_unlock_e6500 (Linux 6.1)",
                ref_fn: "ref_tcd_unlock",
                args: &[Arg::Mem("lock"), Arg::Int("token")],
                calls: &[Call {
                    seq: "tcd_unlock",
                    bind: NONE,
                }],
                inputs: vec![
                    Input::new("owner", &[("token", 0)]).mem("lock", &[6, 1, 2, 3]),
                    Input::new("nested holder", &[("token", 1)]).mem("lock", &[6, 1, 2, 3]),
                ],
            },
            Scenario {
                name: "tcd_next_esel",
                kernel: "tlb_low_64e.S tlb_miss_common_e6500 esel_next (Linux 6.1)",
                ref_fn: "ref_tcd_next_esel",
                args: &[Arg::Mem("tcd"), Arg::Mem("mas0"), Arg::Int("cpu")],
                calls: &[Call {
                    seq: "tcd_next_esel",
                    bind: NONE,
                }],
                inputs: [
                    vec![
                        esel("esel_next 0", 0),
                        esel("esel_next 3 wraps", 3),
                        // n = 4, n ^ esel_max = 1: only n == esel_max wraps.
                        esel("esel_next 3 of esel_max 5", 3).mem("tcd", &[0, 3, 5, 1]),
                        Input::new("cpu 254 (owner 255)", &[("cpu", 254)])
                            .mem("tcd", &tcd(1))
                            .mem("mas0", &[0; 8]),
                        Input::new("cpu 255 (owner 256)", &[("cpu", 255)])
                            .mem("tcd", &tcd(1))
                            .mem("mas0", &[0; 8])
                            .differs(CPU255),
                        // Held by another cpu (lock value 2) while cpu 5 asks.
                        Input::new("held by cpu 1, released after two reads", &[("cpu", 5)])
                            .mem("tcd", &[2, 2, 4, 0])
                            .mem_reads("tcd", 0, &[2, 0])
                            .mem("mas0", &[0; 8]),
                        esel("held by this cpu (a nested handler)", 2)
                            .mem("tcd", &[2, 2, 4, 0])
                            .mem_reads("tcd", 0, &[2, 0])
                            .differs(
                                "the kernel's handler finds its own cpu + 1 in the lock, \
                                 neither takes nor releases it; the example's tcd_next_esel \
                                 has no `held` and waits for the lock to read 0 (here after \
                                 two reads), then takes and releases it",
                            ),
                    ],
                    // While the example has its own layout, inputs in that
                    // layout too (esel_next at byte 0, the lock at byte 3).
                    match layout {
                        Some(why) => vec![
                            Input::new("example layout, esel_next 2", &[("cpu", 1)])
                                .mem("tcd", &[2, 0, 0, 0])
                                .mem("mas0", &[0; 8])
                                .outside(why),
                            Input::new("example layout, esel_next 3 wraps", &[("cpu", 6)])
                                .mem("tcd", &[3, 0, 0, 0])
                                .mem("mas0", &[0; 8])
                                .outside(why),
                            Input::new("example layout, held by cpu 1, released", &[("cpu", 6)])
                                .mem("tcd", &[1, 0, 0, 2])
                                .mem_reads("tcd", 3, &[2, 0])
                                .mem("mas0", &[0; 8])
                                .outside(why),
                        ],
                        None => vec![],
                    },
                ]
                .concat(),
            },
        ],
    }]
}

fn radix_tlb() -> Vec<Build> {
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
    let calls = |seq: &'static str| -> &'static [Call] {
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
    };
    // Every combination of the two POWER9 errata (bits 0, 1), and ISA 3.1
    // (bit 2) for the local flushes.
    let page = |f: u64| {
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
    };
    let range = |label: &str, start: u64, pages: u64, f: u64| {
        Input::new(
            format!("{label}, features {f}"),
            &[
                ("pid", PID),
                ("start", start),
                ("end", start + pages * 0x1_0000),
                ("features", f),
            ],
        )
    };
    let ranges = |f: u64| {
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
    };
    // A range whose end passes 2^64 (3M, 48 pages).
    let wrapping = |f: u64| {
        Input::new(
            format!("3M wrapping past 2^64, features {f}"),
            &[
                ("pid", PID),
                ("start", 0u64.wrapping_sub(0x20_0000)),
                ("end", 0x10_0000),
                ("features", f),
            ],
        )
    };
    let scenario = |name: &'static str,
                    kernel: &'static str,
                    ref_fn: &'static str,
                    args: &'static [Arg],
                    inputs| Scenario {
        name,
        kernel,
        ref_fn,
        args,
        calls: calls(name),
        inputs,
    };
    let mut page_in = Vec::new();
    let mut pid_in = Vec::new();
    let mut range_in = Vec::new();
    for f in 0..4 {
        page_in.extend(page(f));
        pid_in.push(Input::new(
            format!("features {f}"),
            &[("pid", PID), ("features", f)],
        ));
        pid_in.push(Input::new(
            format!("pid all ones, features {f}"),
            &[("pid", u64::MAX), ("features", f)],
        ));
        range_in.extend(ranges(f));
        // Past the global ceiling (31): the flush-all, as the kernel's.
        range_in.push(wrapping(f));
    }
    let local_in: Vec<Input> = [0, 4].iter().flat_map(|&f| page(f)).collect();
    let pid_local_in: Vec<Input> = [(PID, 0u64), (PID, 4), (u64::MAX, 0), (u64::MAX, 4)]
        .iter()
        .map(|&(pid, f)| {
            Input::new(
                format!("pid {pid:#x}, features {f}"),
                &[("pid", pid), ("features", f)],
            )
        })
        .collect();
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
    // The local path: no errata (they are tlbie's), ISA 3.1 off and on;
    // both sides of the derived local ceiling (279) and of the kernel's
    // (256).
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
                scenario("flush_tlb_page", "radix_tlb.c _tlbie_va(64K, RIC_FLUSH_TLB) (Linux 6.1)", "ref_flush_tlb_page", PAGE, page_in),
                scenario("flush_tlb_page_local", "radix_tlb.c _tlbiel_va(64K, RIC_FLUSH_TLB) (Linux 6.1)", "ref_flush_tlb_page_local", PAGE, local_in),
                scenario("flush_tlb_pid", "radix_tlb.c _tlbie_pid(RIC_FLUSH_ALL) (Linux 6.1)", "ref_flush_tlb_pid", ONE_PID, pid_in),
                scenario("flush_tlb_pid_local", "radix_tlb.c _tlbiel_pid(RIC_FLUSH_ALL) (Linux 6.1)", "ref_flush_tlb_pid_local", ONE_PID, pid_local_in),
                scenario("flush_tlb_range", "radix_tlb.c __radix__flush_tlb_range, global tlbie path, ceiling 31 (Linux 6.1)", "ref_flush_tlb_range_c31", RANGE, range_in),
                scenario("flush_tlb_range_local", "radix_tlb.c __radix__flush_tlb_range, local tlbiel path, ceiling 279 (Linux 6.1)", "ref_flush_tlb_range_local_c279", RANGE, range_local_in),
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

/// Book III-E tlb_low.S: every function on the edges of its fields and
/// fixed-seed random registers (upper words included: the kernel's
/// rlwinm/rlwimi read the low word, its C callers pass unsigned ints).
fn book3e_tlb() -> Vec<Build> {
    const VA: &[Arg] = &[
        Arg::Int("address"),
        Arg::Int("pid"),
        Arg::Int("tsize"),
        Arg::Int("ind"),
    ];
    let mut x = 0x5eed_b00c_3e65_0001u64;
    let mut next = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let mut va_inputs = vec![
        Input::new(
            "4K page, pid 0x2a5",
            &[
                ("address", 0x1000_3000),
                ("pid", 0x2a5),
                ("tsize", 2),
                ("ind", 0),
            ],
        ),
        Input::new(
            "indirect entry, every pid bit",
            &[
                ("address", 0xc000_0000_0123_4000),
                ("pid", 0xffff_ffff),
                ("tsize", 0x1f),
                ("ind", 1),
            ],
        ),
        Input::new(
            "ind 2 (low word non-zero, SIND 0)",
            &[("address", 0), ("pid", 1), ("tsize", 0x20), ("ind", 2)],
        ),
        Input::new(
            "zeros",
            &[("address", 0), ("pid", 0), ("tsize", 0), ("ind", 0)],
        ),
    ];
    let mut pid_inputs = vec![
        Input::new("pid 0 (the kernel's own)", &[("pid", 0)]),
        Input::new("pid 0x3fff (MAS6_SPID_MASK)", &[("pid", 0x3fff)]),
        Input::new("pid 0xffff_ffff", &[("pid", 0xffff_ffff)]),
    ];
    for k in 0..12 {
        let (a, p, t, i) = (next(), next(), next(), next());
        let narrow = |v: u64| if k % 2 == 0 { v & 0xffff_ffff } else { v };
        va_inputs.push(Input::new(
            format!("random {k}"),
            &[
                ("address", a),
                ("pid", narrow(p)),
                ("tsize", narrow(t) % if k % 3 == 0 { 32 } else { u64::MAX }),
                ("ind", narrow(i) % if k % 3 == 1 { 2 } else { u64::MAX }),
            ],
        ));
        pid_inputs.push(Input::new(format!("random {k}"), &[("pid", narrow(p))]));
    }
    let one = |seq: &'static str| -> &'static [Call] {
        match seq {
            "tlbil_pid" => &[Call {
                seq: "tlbil_pid",
                bind: NONE,
            }],
            "tlbil_pid_noind" => &[Call {
                seq: "tlbil_pid_noind",
                bind: NONE,
            }],
            "tlbil_all" => &[Call {
                seq: "tlbil_all",
                bind: NONE,
            }],
            "tlbil_va" => &[Call {
                seq: "tlbil_va",
                bind: NONE,
            }],
            _ => &[Call {
                seq: "tlbivax_bcast",
                bind: NONE,
            }],
        }
    };
    vec![Build {
        pins: vec![],
        why: "no threshold",
        scenarios: vec![
            Scenario {
                name: "tlbil_pid",
                kernel: "tlb_low.S _tlbil_pid (Linux 6.1, CONFIG_PPC_BOOK3E_64)",
                ref_fn: "ref_tlbil_pid",
                args: &[Arg::Int("pid")],
                calls: one("tlbil_pid"),
                inputs: pid_inputs.clone(),
            },
            Scenario {
                name: "tlbil_pid_noind",
                kernel: "tlb_low.S _tlbil_pid_noind (Linux 6.1, CONFIG_PPC_BOOK3E_64)",
                ref_fn: "ref_tlbil_pid_noind",
                args: &[Arg::Int("pid")],
                calls: one("tlbil_pid_noind"),
                inputs: pid_inputs,
            },
            Scenario {
                name: "tlbil_all",
                kernel: "tlb_low.S _tlbil_all (Linux 6.1, CONFIG_PPC_BOOK3E_64)",
                ref_fn: "ref_tlbil_all",
                args: &[],
                calls: one("tlbil_all"),
                inputs: vec![Input::new("no arguments", &[])],
            },
            Scenario {
                name: "tlbil_va",
                kernel: "tlb_low.S _tlbil_va (Linux 6.1, CONFIG_PPC_BOOK3E_64)",
                ref_fn: "ref_tlbil_va",
                args: VA,
                calls: one("tlbil_va"),
                inputs: va_inputs.clone(),
            },
            Scenario {
                name: "tlbivax_bcast",
                kernel: "tlb_low.S _tlbivax_bcast (Linux 6.1, CONFIG_PPC_BOOK3E_64)",
                ref_fn: "ref_tlbivax_bcast",
                args: VA,
                calls: one("tlbivax_bcast"),
                inputs: va_inputs,
            },
        ],
    }]
}

fn riscv_tlb() -> Vec<Build> {
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
    let pages = |n: u64| {
        Input::new(
            format!("{n} pages"),
            &[("asid", ASID), ("start", BASE), ("size", n * 0x1000)],
        )
    };
    // The kernel's callers pass page-aligned starts and a size of at least
    // one byte: for size 0 the kernel flushes a page (size <= stride),
    // the example's cover nothing.
    let inputs = |svinval: bool| {
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
    };
    vec![Build {
        pins: vec![],
        why: "the derived thresholds: 64 pages with sfence.vma (the kernel's), 119 with Svinval",
        scenarios: vec![
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
        ],
    }]
}

/// The builds of an example (`src`: its spec text).
pub fn builds(stem: &str, src: &str) -> Vec<Build> {
    match stem {
        "npu2_atsd" => npu2_atsd(),
        "npu2_tce_kill" => npu2_tce_kill(),
        "arm_smmu" => arm_smmu(),
        "arm64_tlb_range" => arm64_tlb_range(),
        "vtd_iotlb" => vtd_iotlb(),
        "e6500_tcd_lock" => e6500_tcd_lock(src),
        "radix_tlb" => radix_tlb(),
        "book3e_tlb" => book3e_tlb(),
        "riscv_tlb" => riscv_tlb(),
        _ => panic!("no scenarios for {stem}"),
    }
}
