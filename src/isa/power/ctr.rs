//! Counted loops on the count register: `mtctr n` before the loop and
//! `bdnz` at its bottom, instead of `addic. n,n,-1; bne` there. One
//! instruction less per trip (the kernel's own loops over the 128 TLB
//! sets or a range's pages compile to `bdnz` too), one more per loop.
//!
//! `bdnz` decrements CTR (64 bits wide in 64-bit mode) and branches while
//! it is not zero: the same trips as `n -= 1; if n != 0` for every `n`,
//! 0 included. What differs is `n` after the loop (0 before, untouched
//! now), so a loop is taken only where nothing can read `n` after it:
//! the LIR loop is straight-line (one label, entered only by falling in
//! from above and by its own bottom branch; no other branch, return or
//! label inside, so no inner loop uses CTR too), `n` is not touched in
//! its body, nothing after the bottom branch mentions `n`, and before the
//! loop `n`'s first mention writes it and the labels between are reached
//! only from there (no path into the loop skips the write). CTR is
//! volatile in both ELF ABIs and nothing else we emit uses it.

use crate::ir::expr::BinOp;
use crate::lir::{Cmp, Func, Inst, LabelId, Operand, VReg};
use rustc_hash::FxHashMap;

/// What becomes of the LIR instruction at an index.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Step {
    /// The loop's top label: `mtctr n` goes before it.
    Load(VReg),
    /// The decrement: nothing (`bdnz` decrements).
    Drop,
    /// The bottom branch: `bdnz` to the label.
    Branch(LabelId),
}

/// The count-register loops of `f`, by LIR index.
pub(super) fn loops(f: &Func) -> FxHashMap<usize, Step> {
    let insts: Vec<&Inst> = f.insts.iter().map(|(i, _)| i).collect();
    let mut out = FxHashMap::default();
    for (j, inst) in insts.iter().enumerate() {
        if let Some((top, n, t)) = counted_loop(&insts, j, inst) {
            out.insert(t, Step::Load(n));
            out.insert(j - 1, Step::Drop);
            out.insert(j, Step::Branch(top));
        }
    }
    out
}

/// The loop whose bottom branch is `insts[j]`, if it can count on CTR:
/// its label, its count and the label's index.
fn counted_loop(insts: &[&Inst], j: usize, inst: &Inst) -> Option<(LabelId, VReg, usize)> {
    let Inst::Branch {
        cmp: Cmp::Ne,
        a: n,
        b: Operand::Imm(0),
        target: top,
    } = *inst
    else {
        return None;
    };
    let decrement = Inst::Bin {
        op: BinOp::Sub,
        dst: n,
        a: n,
        b: Operand::Imm(1),
    };
    if *insts.get(j.checked_sub(1)?)? != &decrement {
        return None;
    }
    let t = insts[..j].iter().rposition(|i| **i == Inst::Label(top))?;
    let mentions = |i: &Inst| i.def() == Some(n) || i.uses().contains(&n);
    let body = &insts[t + 1..j - 1];
    let straight = body.iter().all(|i| {
        !matches!(i, Inst::Label(_) | Inst::Ret { .. })
            && i.branch_target().is_none()
            && !mentions(i)
    });
    let entered_once = insts
        .iter()
        .enumerate()
        .all(|(k, i)| k == j || i.branch_target() != Some(top));
    let dead_after = !insts[j + 1..].iter().any(|i| mentions(i));
    (straight && entered_once && dead_after && written_first(insts, n, t)).then_some((top, n, t))
}

/// Is `n`'s first mention before index `t` a write that does not read
/// it, with every label between it and `t` a target only of branches
/// between them (no path reaches the loop without the write)?
fn written_first(insts: &[&Inst], n: VReg, t: usize) -> bool {
    let Some(d) = insts[..t]
        .iter()
        .position(|i| i.def() == Some(n) || i.uses().contains(&n))
    else {
        return false;
    };
    if insts[d].def() != Some(n) || insts[d].uses().contains(&n) {
        return false;
    }
    let inside: Vec<LabelId> = insts[d..t]
        .iter()
        .filter_map(|i| match i {
            Inst::Label(l) => Some(*l),
            _ => None,
        })
        .collect();
    insts.iter().enumerate().all(|(k, i)| {
        i.branch_target()
            .is_none_or(|l| !inside.contains(&l) || (d..t).contains(&k))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn func(insts: Vec<Inst>) -> Func {
        crate::lir::test_insts::func(insts, 4, 3)
    }

    fn counted(body: Vec<Inst>, after: Vec<Inst>) -> Func {
        let v = VReg;
        let mut insts = vec![
            Inst::Imm {
                dst: v(0),
                value: 127,
            },
            Inst::Imm {
                dst: v(1),
                value: 0x1400,
            },
            Inst::Label(1),
        ];
        insts.extend(body);
        insts.extend([
            Inst::Bin {
                op: BinOp::Sub,
                dst: v(0),
                a: v(0),
                b: Operand::Imm(1),
            },
            Inst::Branch {
                cmp: Cmp::Ne,
                a: v(0),
                b: Operand::Imm(0),
                target: 1,
            },
        ]);
        insts.extend(after);
        insts.push(Inst::Ret {
            value: Operand::Imm(0),
        });
        func(insts)
    }

    /// A body instruction that does not mention the count.
    fn step() -> Inst {
        Inst::Bin {
            op: BinOp::Add,
            dst: VReg(1),
            a: VReg(1),
            b: Operand::Imm(4096),
        }
    }

    #[test]
    fn a_straight_counted_loop_counts_on_ctr() {
        let f = counted(vec![step()], vec![]);
        let l = loops(&f);
        assert_eq!(l.get(&2), Some(&Step::Load(VReg(0))));
        assert_eq!(l.get(&4), Some(&Step::Drop));
        assert_eq!(l.get(&5), Some(&Step::Branch(1)));
    }

    /// The count read after the loop, in the body, or a branch inside:
    /// the loop keeps its register count.
    #[test]
    fn a_count_that_may_be_read_stays_in_its_register() {
        let v = VReg;
        let read_after = Inst::Copy {
            dst: v(2),
            src: v(0),
        };
        assert!(loops(&counted(vec![step()], vec![read_after.clone()])).is_empty());
        assert!(loops(&counted(vec![read_after], vec![])).is_empty());
        let branch = Inst::Branch {
            cmp: Cmp::Eq,
            a: v(1),
            b: Operand::Imm(0),
            target: 2,
        };
        assert!(loops(&counted(vec![branch, Inst::Label(2)], vec![])).is_empty());
    }
}
