//! The built LIR of page loops, run by a small LIR evaluator for every
//! page count up to each threshold (riscv_tlb) and for POWER's constant
//! set loop: the pages invalidated, in order; and how many trips each
//! target's loops run per bottom test.

use crate::ir::expr::BinOp;
use crate::lir::{Func, Inst, Operand, VReg};
use crate::Target;
use rustc_hash::FxHashMap;

const RISCV_TLB: &str = include_str!("../../../examples/riscv_tlb.inv");
const ARM64_TLB: &str = include_str!("../../../examples/arm64_tlb_range.inv");
const RADIX_TLB: &str = include_str!("../../../examples/radix_tlb.inv");

fn lir(src: &str, target: Target, seq: &str) -> Func {
    let prog = crate::load("t.inv", src).expect("the example loads");
    let c = crate::compile(&prog, target, &crate::Options::default()).expect("compiles");
    let si = c.opt.seqs.iter().position(|s| s.name == seq).unwrap();
    c.lir[si].clone()
}

/// The operands of each invalidation `f` executes on `args`.
fn invalidations(f: &Func, args: &[u64]) -> Vec<Vec<u64>> {
    let at: FxHashMap<u32, usize> = f
        .insts
        .iter()
        .enumerate()
        .filter_map(|(k, (i, _))| match i {
            Inst::Label(l) => Some((*l, k)),
            _ => None,
        })
        .collect();
    let mut regs: FxHashMap<VReg, u64> = FxHashMap::default();
    let mut out = Vec::new();
    let mut pc = 0;
    for _ in 0..100_000 {
        let r = |regs: &FxHashMap<VReg, u64>, v: &VReg| regs[v];
        let opnd = |regs: &FxHashMap<VReg, u64>, o: &Operand| match o {
            Operand::Reg(v) => regs[v],
            Operand::Imm(c) => *c,
        };
        let mut next = pc + 1;
        match &f.insts[pc].0 {
            Inst::Arg { dst, index } => drop(regs.insert(*dst, args[*index])),
            Inst::Imm { dst, value } => drop(regs.insert(*dst, *value)),
            Inst::Copy { dst, src } => drop(regs.insert(*dst, r(&regs, src))),
            Inst::Not { dst, src } => drop(regs.insert(*dst, !r(&regs, src))),
            Inst::Bin { op, dst, a, b } => {
                let v = op.apply(r(&regs, a), opnd(&regs, b));
                regs.insert(*dst, v);
            }
            Inst::Label(_) | Inst::Barrier { .. } => {}
            Inst::Jump(l) => next = at[l],
            Inst::Branch { cmp, a, b, target } => {
                if cmp.holds(r(&regs, a), opnd(&regs, b)) {
                    next = at[target];
                }
            }
            Inst::BranchBit {
                a,
                bit,
                set,
                target,
            } => {
                if (r(&regs, a) >> bit) & 1 == u64::from(*set) {
                    next = at[target];
                }
            }
            Inst::Invalidate { operands, .. } => {
                out.push(operands.iter().map(|v| r(&regs, v)).collect())
            }
            Inst::Ret { .. } => return out,
            // What defines nothing and goes nowhere (`slbia`) changes no
            // value the loops read.
            other if other.def().is_none() && other.branch_target().is_none() => {}
            other => panic!("not in the evaluator: {other:?}"),
        }
        pc = next;
    }
    panic!("no return after 100000 steps")
}

#[test]
fn every_page_count_invalidates_each_page_once_in_order() {
    let f = lir(RISCV_TLB, Target::Riscv64, "flush_tlb_range");
    let asid = 0x2a;
    // (feature word, threshold in pages)
    for (features, threshold) in [(0u64, 64u64), (1, 119)] {
        for start in [
            0x3f_8000_0000u64,
            0x3f_8000_0f00,
            0u64.wrapping_sub(200 << 12),
        ] {
            for size in 1..=threshold << 12 {
                // Every byte count near a page boundary, and a sample between.
                if size % 4096 > 2 && size % 4096 < 4094 && size % 977 != 0 {
                    continue;
                }
                let first = start & !0xfff;
                let pages = (start - first + size).div_ceil(4096);
                let want: Vec<Vec<u64>> =
                    (0..pages).map(|k| vec![first + (k << 12), asid]).collect();
                let got = invalidations(&f, &[asid, start, size, features]);
                assert_eq!(
                    got, want,
                    "start {start:#x} size {size:#x} svinval {features}"
                );
            }
        }
    }
}

/// POWER's 127-set loop, a constant size: eight sets per `addic.; bne`,
/// entered at the second of the eight (127 = 7 + 15 * 8), every set once.
#[test]
fn a_constant_trip_count_enters_without_a_test() {
    let f = lir(RADIX_TLB, Target::Power64, "flush_tlb_pid_local");
    let pid = 0x77;
    let mut want = vec![vec![1 << 10, pid << 32]];
    want.extend((1..128).map(|set| vec![1 << 10 | set << 12, pid << 32]));
    // `slbia 3`.
    want.push(Vec::new());
    let got = invalidations(&f, &[pid, 0]);
    assert_eq!(
        got.len(),
        want.len(),
        "{:?}",
        &got[got.len().saturating_sub(3)..]
    );
    assert_eq!(got, want);
    let tests = f
        .insts
        .iter()
        .filter(|(i, _)| matches!(i, Inst::BranchBit { .. }));
    assert_eq!(tests.count(), 1, "only the feature test: {:?}", f.insts);
}

/// Invalidations per loop: riscv64's page loops (one `sinval.vma` or
/// `sfence.vma` a page, ended on the address) run four per bottom test,
/// aarch64's (counted down) eight, and so does POWER's constant 127-set
/// loop; POWER's page loops keep one per `bdnz`.
#[test]
fn loops_of_one_invalidation_run_several_per_test_but_on_a_count_register() {
    // Invalidations from a label to each branch back to it.
    let per_loop = |f: &Func| -> Vec<usize> {
        let mut out = Vec::new();
        for (b, (i, _)) in f.insts.iter().enumerate() {
            let Inst::Branch { target, .. } = i else {
                continue;
            };
            let top = f.insts[..b]
                .iter()
                .position(|(l, _)| *l == Inst::Label(*target));
            if let Some(t) = top {
                let body = &f.insts[t..b];
                let n = body
                    .iter()
                    .filter(|(i, _)| matches!(i, Inst::Invalidate { .. }));
                out.push(n.count());
            }
        }
        out
    };
    let riscv = lir(RISCV_TLB, Target::Riscv64, "flush_tlb_range");
    assert_eq!(per_loop(&riscv), vec![4, 4], "{:?}", riscv.insts);
    // The versioned loop: the reduced body unrolled, the one that
    // recomputes the operand (not a tiny trip) one by one.
    let arm = lir(ARM64_TLB, Target::Aarch64, "flush_tlb_range_nl");
    let arm_loops = per_loop(&arm);
    assert!(arm_loops.contains(&8), "{arm_loops:?}");
    assert!(arm_loops.iter().all(|&n| n == 8 || n == 1), "{arm_loops:?}");
    let power = lir(RADIX_TLB, Target::Power64, "flush_tlb_range");
    let power_loops = per_loop(&power);
    assert!(power_loops.iter().all(|&n| n == 1), "{power_loops:?}");
    let sets = lir(RADIX_TLB, Target::Power64, "flush_tlb_pid_local");
    assert_eq!(per_loop(&sets), vec![8], "{:?}", sets.insts);
    // The trip count has no branch on its low bits: `(size - 1) >> 12`.
    let decrement = |f: &Func| {
        f.insts.iter().any(|(i, _)| {
            matches!(
                i,
                Inst::Bin {
                    op: BinOp::Sub,
                    b: Operand::Imm(1),
                    ..
                }
            )
        })
    };
    assert!(decrement(&riscv) && decrement(&arm) && decrement(&power));
}
