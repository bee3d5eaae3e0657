//! The `arm_smmu` example's scenarios.

use super::*;

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
const FLAG_ON: &[Call] = &[Call {
    seq: "tlb_inv_walk_s1_flag",
    bind: &[("prefer_tlbiasid", Val::K(1))],
}];
const FLAG_OFF: &[Call] = &[Call {
    seq: "tlb_inv_walk_s1_flag",
    bind: &[("prefer_tlbiasid", Val::K(0))],
}];

pub(super) fn arm_smmu() -> Vec<Build> {
    vec![
        derived_threshold(),
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

fn derived_threshold() -> Build {
    let mut scenarios = vec![range_s1()];
    scenarios.extend(sync_and_context());
    scenarios.extend([
        generic_walks(),
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
    ]);
    Build {
        pins: vec![],
        why: "the derived threshold (413 granules): below it the generic walk flush, \
              above it the qcom one choose as the example does",
        scenarios,
    }
}

fn walk(label: &str, iova: u64, size: u64, granule: u64) -> Input {
    Input::new(
        label,
        &[
            ("asid", 7),
            ("iova", iova),
            ("size", size),
            ("granule", granule),
        ],
    )
}

fn range(label: &str, asid: u64, iova: u64, size: u64, granule: u64) -> Input {
    Input::new(
        label,
        &[
            ("asid", asid),
            ("iova", iova),
            ("size", size),
            ("granule", granule),
        ],
    )
}

fn generic(inputs: Vec<Input>) -> Scenario {
    Scenario {
        name: "tlb_inv_walk_s1; tlb_sync",
        kernel: "arm-smmu.c arm_smmu_tlb_inv_walk_s1() (Linux 6.1)",
        ref_fn: "ref_tlb_inv_walk_s1",
        args: RANGE_ARGS,
        calls: WALK,
        inputs,
    }
}

fn qcom(inputs: Vec<Input>) -> Scenario {
    Scenario {
        name: "tlb_inv_walk_s1; tlb_sync (qcom)",
        kernel: "arm-smmu.c arm_smmu_tlb_inv_walk_s1() with flush_walk_prefer_tlbiasid \
                 (arm-smmu-qcom.c, Linux 6.1)",
        ref_fn: "ref_qcom_tlb_inv_walk_s1",
        args: RANGE_ARGS,
        calls: WALK,
        inputs,
    }
}

/// The flag as a parameter of one sequence: each arm against the
/// kernel's function with the flag the same way.
fn flag(on: bool) -> Scenario {
    Scenario {
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
    }
}

fn small() -> Vec<Input> {
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
}

fn odd() -> Input {
    walk("odd unaligned iova", 0x40_1001, 0x2000, 0x1000).differs(
        "the kernel steps from iova by the granule size / granule times (callers \
         pass granule-aligned ranges); the example invalidates every granule the \
         range touches, one more here",
    )
}

fn large() -> Vec<Input> {
    vec![
        walk("2M of 4K granules", 0x20_0000, 0x20_0000, 0x1000),
        walk("1G of 2M granules", 0x4000_0000, 0x4000_0000, 0x20_0000),
    ]
}

fn range_s1() -> Scenario {
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
    }
}

fn sync_and_context() -> Vec<Scenario> {
    vec![
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
    ]
}

fn generic_walks() -> Scenario {
    generic(
        [
            small(),
            vec![
                odd(),
                // Across 2^60 the page number reaches the
                // ASID's bits (a carry there is not an OR):
                // the loop that carries the TLBIVA operand is
                // only taken below.
                walk("two pages across 2^60", (1 << 60) - 0x1000, 0x2000, 0x1000).differs(
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
                walk("end wraps past 2^64", 0xffff_ffff_ffff_f000, 0x2000, 0x1000).differs(
                    "a range whose end passes 2^64 takes the flush-all path (README, \
                     \"What a cover never does\"): one TLBIASID; the kernel's walk \
                     writes TLBIVA for the wrapped addresses",
                ),
            ],
        ]
        .concat(),
    )
}
