//! Counted page loops, with the trip count `((size - 1) >> k) + 1` on
//! every target, and several trips per bottom test (riscv64 four, aarch64
//! eight) entered at the trip that leaves a multiple of them
//! (`lir::builder::range`): every
//! page count from one to past each threshold, from an aligned start, an
//! unaligned one and starts just below the top of the address space,
//! run in the emulator against the interpreter (the spec's meaning): the
//! same invalidations with the same operands in the same order, every
//! required ordering crossed by a barrier, the same return value.
#![cfg(feature = "emu")]

use shootdown::verify::interp::{self, World};
use shootdown::verify::{order_check, trace, Report};
use shootdown::Target;

use crate::support;

/// Runs `seq` of `path` for `target` on every (start, size) of `ranges`,
/// the parameters made by `params`.
fn agree(
    path: &str,
    seq: &str,
    target: Target,
    ranges: &[(u64, u64)],
    params: &dyn Fn(u64, u64) -> Vec<u64>,
) {
    let (c, _) = support::compile_spec(path, target, "all");
    let src = std::fs::read_to_string(path).unwrap();
    let prog = shootdown::load(path, &src).unwrap();
    let si = prog.seqs.iter().position(|s| s.name == seq).unwrap();
    let mut report = Report::default();
    for &(start, size) in ranges {
        let mut p = params(start, size);
        // Features the code tests at run time come after the arguments.
        p.resize(p.len().max(prog.seqs[si].params.len()), 0);
        let world = World {
            params: p,
            ..World::default()
        };
        let what = format!("{target} {seq} start {start:#x} size {size:#x}");
        let expect = interp::run(&prog, &prog.seqs[si], &world).unwrap();
        let got =
            trace::run(&prog, &c, si, &world, 1_000_000).unwrap_or_else(|e| panic!("{what}: {e}"));
        order_check::same_effects(&what, &expect, &got, &mut report);
        order_check::edges_crossed(&what, &prog, &c.opt.seqs[si], target, &got, &mut report);
    }
    assert!(report.ok(), "{}", report.failures.join("\n"));
}

/// Every page count 1..=pages, each as whole pages and as a range one
/// byte short of its last page, from `starts`.
fn ranges(starts: &[u64], pages: u64) -> Vec<(u64, u64)> {
    let mut out = Vec::new();
    for &s in starts {
        for n in 1..=pages {
            out.push((s, n << 12));
            out.push((s, (n << 12) - 1));
        }
    }
    out
}

#[test]
fn riscv_page_loops_agree_for_every_page_count() {
    let top = 0u64.wrapping_sub(130 << 12);
    let starts = [0x3f_8000_0000, 0x3f_8000_0123, top, top + 0xfff];
    let all = ranges(&starts, 130);
    for features in [0, 1] {
        agree(
            "examples/riscv_tlb.inv",
            "flush_tlb_range",
            Target::Riscv64,
            &all,
            &|start, size| vec![0x2a, start, size, features],
        );
    }
}

#[test]
fn aarch64_page_loops_agree_for_every_page_count() {
    let top = 0u64.wrapping_sub(40 << 12);
    let starts = [0x40_0000, 0x40_0123, top];
    let all = ranges(&starts, 36);
    agree(
        "examples/arm64_tlb_range.inv",
        "flush_tlb_range_nl",
        Target::Aarch64,
        &all,
        &|start, size| vec![0x2a, start, start.wrapping_add(size)],
    );
}
