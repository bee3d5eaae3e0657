//! Every return code documented; `verify`'s edge worlds without false
//! failures.

use super::*;

const STEP: &str = "
target power64, aarch64, x86_64
device d { reg a 0x0 u64 le }
seq walk(n: u64, s: u64) {
    range i in 0, n step s { d.a = i }
}
seq walk_void(n: u64, s: u64) -> void {
    range i in 0, n step s { d.a = i }
}
";

/// A run-time step of 0 returns -EINVAL, and the header says so; a
/// `-> void` sequence leaves 0 in the return register on that exit too.
#[test]
fn every_return_code_is_documented() {
    let prog = load("step", STEP);
    let opts = support::options("all");
    let header = shootdown::emit::header::render(&prog, "step", &opts);
    assert!(
        header.contains("walk: returns 0; -22 (-EINVAL) when a run-time `range` step is 0"),
        "{header}"
    );
    assert!(
        header.contains(
            "walk_void: returns nothing; it stops early when a run-time `range` step is 0"
        ),
        "{header}"
    );
    for target in shootdown::output::default_targets(&prog) {
        let ws = vec![
            world(&prog, "walk", &[("n", 3), ("s", 0)], 1, &[], target),
            world(&prog, "walk_void", &[("n", 3), ("s", 0)], 1, &[], target),
            world(&prog, "walk", &[("n", 3), ("s", 2)], 1, &[], target),
        ];
        let runs = qemu(&prog, "step", target, &opts, ws);
        assert_eq!((runs[0].ret, runs[0].accesses.len()), (-22, 0), "{target}");
        assert_eq!((runs[1].ret, runs[1].accesses.len()), (0, 0), "{target}");
        assert_eq!(
            accesses(&runs[2]),
            [store("d[0].a", 0), store("d[0].a", 2)],
            "{target}"
        );
        assert_eq!(runs[2].ret, 0);
    }
    // Every example's header lists its codes: each poll's, and -EINVAL
    // where a run-time granule or step can be unusable.
    let path = "examples/npu2_tce_kill.inv";
    let p = shootdown::load(path, &std::fs::read_to_string(path).unwrap()).unwrap();
    let h = shootdown::emit::header::render(&p, "npu2_tce_kill", &opts);
    assert!(
        h.contains("tce_kill: returns 0; -22 (-EINVAL) when the granule size `tce_size` is not a power of two"),
        "{h}"
    );
}

// -------------------------------------------------------- verify's worlds

/// The edges are among `verify`'s worlds, and its false failures are gone:
/// a register above 64 KiB, a pointer offset above 4 KiB, POWER ELFv1
/// sequences named `L` and `Lfoo` (whose code symbols `.L`/`.Lfoo` GNU as
/// treats as local).
#[test]
fn verify_has_edge_worlds_and_no_false_failures() {
    let path = "examples/npu2_atsd.inv";
    let prog = shootdown::load(path, &std::fs::read_to_string(path).unwrap()).unwrap();
    let i = prog
        .seqs
        .iter()
        .position(|s| s.name == "invalidate_range")
        .unwrap();
    let names: Vec<String> = shootdown::verify::worlds(&prog, i)
        .into_iter()
        .map(|(n, _)| n)
        .collect();
    for want in [
        "every parameter 0",
        "every parameter 1",
        "every parameter all ones",
        "start 0x10000, size 2^64 - 1 (wraps)",
        "start 2^64 - 0xedd, size 0x3000 (wraps)",
        "unaligned start 0x1234, size 0x2345",
    ] {
        assert!(
            names.iter().any(|n| n.ends_with(want)),
            "{want}: {names:#?}"
        );
    }

    let src = "
target power64, power64le, aarch64, x86_64
device d {
    instances dynamic max 4
    reg a 0x0 u64 le
    reg b 0x20000 u32 be
    reg c 0x1000000 u64 le
    require a before c
}
seq L(x: u64, p: ptr u64) {
    each d { d.a = x; d.b = x; d.c = p[0x1008]; poll d.b == 0 limit 3 }
    p[0x1010] = x
}
seq Lfoo(x: u64) {
    each d { d.c = x }
}
";
    let opts = support::options("all");
    let report = shootdown::verify::verify("edges.inv", src, &Target::ALL, &opts).unwrap();
    assert!(report.ok(), "{}", report.failures.join("\n"));
    assert!(report.passed.len() > 40, "{:#?}", report.passed);
}
