//! The `npu2_atsd` example's scenarios.

use super::*;

pub(super) fn npu2_atsd() -> Vec<Build> {
    vec![Build {
        pins: vec![],
        why: "no threshold",
        scenarios: vec![
            range_flushes(),
            nmmu_range_flushes(),
            va_flushes(),
            pid_flushes(),
        ],
    }]
}

fn range(label: &str, pid: u64, start: u64, size: u64) -> Input {
    Input::new(label, &[("pid", pid), ("start", start), ("size", size)])
}

/// A range, then the two flush ATSDs.
fn range_flushes() -> Scenario {
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
    }
}

/// The same with the nest MMU flushed first (hash and radix).
fn nmmu_range_flushes() -> Scenario {
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
                        &[
                            ("pid", 5),
                            ("start", 0x1001_0000),
                            ("size", 0x1_0000),
                            ("features", f),
                        ],
                    ),
                    Input::new(
                        format!("1M inside a 2M block, {radix}"),
                        &[
                            ("pid", 5),
                            ("start", 0x1008_0000),
                            ("size", 0x10_0000),
                            ("features", f),
                        ],
                    ),
                    // Bit 63 of the pid falls off `pid << 32` (tlbie's RS)
                    // as it falls off the kernel's `pid << 25` into the
                    // launch register (bits 15..37 would not: the
                    // example's PID field is 15 bits, documented above).
                    Input::new(
                        format!("one 64K page, pid bit 63, {radix}"),
                        &[
                            ("pid", (1 << 63) | 5),
                            ("start", 0x1001_0000),
                            ("size", 0x1_0000),
                            ("features", f),
                        ],
                    ),
                    Input::new(
                        format!("everything, pid 0x7fff, {radix}"),
                        &[
                            ("pid", 0x7fff),
                            ("start", 0),
                            ("size", u64::MAX),
                            ("features", f),
                        ],
                    ),
                ]
            })
            .collect(),
    }
}

/// One page.
fn va_flushes() -> Scenario {
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
    }
}

/// A whole PID.
fn pid_flushes() -> Scenario {
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
    }
}
