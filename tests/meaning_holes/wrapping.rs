//! Ranges that wrap around the address space: flushed whole under qemu,
//! never under-invalidated in any cover mode.

use super::*;

/// A file of Debian's linux-source-6.1: from the tree the kernel boot test
/// unpacks, else unpacked here once (cached under target/).
pub(super) fn kernel_file(rel: &str) -> String {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let target = std::env::var("CARGO_TARGET_DIR")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|_| root.join("target"));
    for tree in ["kernel-tlb", "kernel-headers"] {
        let p = target.join(tree).join("linux-source-6.1").join(rel);
        if let Ok(s) = std::fs::read_to_string(&p) {
            return s;
        }
    }
    let dir = target.join("kernel-headers");
    std::fs::create_dir_all(&dir).unwrap();
    support::run(
        std::process::Command::new("tar")
            .arg("-C")
            .arg(&dir)
            .args(["-xJf", "/usr/src/linux-source-6.1.tar.xz"])
            .arg(format!("linux-source-6.1/{rel}")),
    );
    std::fs::read_to_string(dir.join("linux-source-6.1").join(rel)).unwrap()
}

// ------------------------------------------------------------- section 5

/// `invalidate_range(start=0x10000, size=2^64-1)` on npu2_atsd: the
/// flush-all ATSD (LAUNCH with IS, no AVA) on every NPU, not one 64K ATSD.
#[test]
fn wrapping_range_flushes_all_under_qemu() {
    let path = "examples/npu2_atsd.inv";
    let prog = shootdown::load(path, &std::fs::read_to_string(path).unwrap()).unwrap();
    for target in [Target::Power64, Target::Power64le] {
        let case = |start: u64, size: u64| {
            let (i, mut w) = world(
                &prog,
                "invalidate_range",
                &[("pid", 5), ("start", start), ("size", size)],
                2,
                &[],
                target,
            );
            let stat = prog.devices[0]
                .regs
                .iter()
                .position(|r| r.name == "stat")
                .unwrap();
            w.reads.insert((0, stat), vec![0]);
            (i, w)
        };
        let runs = qemu(
            &prog,
            "npu2_atsd",
            target,
            &support::options("all"),
            vec![
                case(0x1_0000, u64::MAX),
                case(0u64.wrapping_sub(0xedd), 0x3000),
            ],
        );
        // LAUNCH: IS (msb0 12) | PRS (msb0 13) | PID 5 (msb0 24..38).
        let launch = (1u64 << 51) | (1 << 50) | (5 << 25);
        for r in &runs {
            let stores: Vec<_> = accesses(r).into_iter().filter(|a| a.0 == "store").collect();
            assert_eq!(
                stores,
                [
                    store("npu[0].launch", launch),
                    store("npu[1].launch", launch)
                ],
                "{target}"
            );
            assert_eq!(r.ret, 0);
        }
    }
}

/// Every example with a cover, every target of its `target` line, every
/// mode its set can serve: a request that wraps past 2^64 (from an
/// aligned and from an unaligned start) runs the flush-all or returns
/// -EINVAL in the spec's meaning, whose covers are checked against the
/// request, and the generated code (emulated) does exactly that.
#[test]
fn wrapping_ranges_never_under_invalidate_in_any_mode() {
    let mut checked = 0;
    for stem in ["npu2_atsd", "npu2_tce_kill", "arm_smmu", "arm64_tlb_range"] {
        let path = format!("examples/{stem}.inv");
        let prog = shootdown::load(&path, &std::fs::read_to_string(&path).unwrap()).unwrap();
        for target in shootdown::output::default_targets(&prog) {
            for mode in [
                CoverMode::Single,
                CoverMode::Exact,
                CoverMode::Auto,
                CoverMode::Range,
            ] {
                let cover = CoverConfig {
                    mode: Some(mode),
                    pins: Vec::new(),
                };
                let opts = Options {
                    cover: cover.clone(),
                    ..support::options("all")
                };
                // A set that cannot serve the mode is a compile error.
                let Ok(c) = shootdown::compile(&prog, target, &opts) else {
                    continue;
                };
                for (si, seq) in prog.seqs.iter().enumerate() {
                    let mut has_cover = false;
                    shootdown::ir::walk(&seq.body, &mut |s| {
                        has_cover |= matches!(s, Stmt::Cover { .. })
                    });
                    if !has_cover {
                        continue;
                    }
                    for (start, size) in [(0x1_0000, u64::MAX), (0u64.wrapping_sub(0xedd), 0x3000)]
                    {
                        let mut w = World {
                            params: seq
                                .params
                                .iter()
                                .map(|p| match p.as_str() {
                                    "start" | "iova" | "dma_addr" => start,
                                    "size" => size,
                                    "end" => start.wrapping_add(size),
                                    "npages" => size >> 12,
                                    "tce_size" | "granule" => 0x1000,
                                    _ => 5,
                                })
                                .collect(),
                            cover: cover.clone(),
                            big_endian: target.big_endian(),
                            ..World::default()
                        };
                        for &d in &seq.devices {
                            w.counts.insert(d, 2);
                        }
                        let what =
                            format!("{stem} {target} {mode:?} {} {start:#x}+{size:#x}", seq.name);
                        let expect = interp::run(&prog, seq, &w).unwrap();
                        let requested: Vec<_> = expect.covers.iter().map(|c| c.requested).collect();
                        for cv in &expect.covers {
                            assert!(!cv.short, "{what}: the meaning under-invalidates: {cv:?}");
                        }
                        // A wrapping request: flush-all (or -EINVAL).
                        if let Some(cv) = expect.covers.first() {
                            if start.checked_add(cv.requested).is_none() {
                                assert!(
                                    cv.flushes == 1 || expect.ret == -22,
                                    "{what}: requested {requested:x?}: {cv:?}, returns {}",
                                    expect.ret
                                );
                            }
                        }
                        let t = trace::run(&prog, &c, si, &w, 10_000_000).unwrap();
                        let mut report = Report::default();
                        order_check::same_effects(&what, &expect, &t, &mut report);
                        assert!(report.ok(), "{}", report.failures.join("\n"));
                        checked += 1;
                    }
                }
            }
        }
    }
    assert!(checked >= 40, "only {checked} cases");
}
