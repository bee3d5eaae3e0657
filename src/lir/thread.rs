//! Branches that the path into them decides. A flag the sequence sets
//! by branching (vtd's `all = start == 0 && end == ~0`: `li 0`, two
//! tests, `li 1`) is tested again at each `if` that reads it, with the
//! paths that set it meeting just before: the test is decided on every
//! incoming path but not at the join, so [`super::path_consts`] keeps
//! it. Here each path on which the flag is a known constant takes its
//! own copy of the (short, pure) code before the test and jumps where
//! the test would have sent it; the paths left agree, and the test
//! folds. Once no test reads the flag, nothing reads its constants and
//! they go too.
//!
//! Sound because the copy is the block's own instructions, none of them
//! touching memory or the flag, so each path computes what it computed
//! before and then goes where the test, on the value that path gives
//! the flag, sent it.

use super::path_consts::{jumps_when, tested, Flow};
use super::{Func, Inst, LabelId};

/// At most this many instructions are copied into a path: the test
/// saved is one or two instructions, and a longer copy is code size for
/// a rare path.
const MAX_COPY: usize = 8;

/// Paths split per function: each split copies a block, so the number
/// is bounded rather than left to the shape of the spec.
const MAX_SPLITS: usize = 16;

/// Splits the decided paths into tests of constant flags, then folds
/// the tests every path left agrees on.
pub fn run(f: &mut Func) {
    let mut split = false;
    for _ in 0..MAX_SPLITS {
        if !split_one(f) {
            break;
        }
        split = true;
    }
    if split {
        super::path_consts::fold(f);
        super::jumps::thread(f);
    }
}

/// Splits one path into a test it decides; false if there is none.
fn split_one(f: &mut Func) -> bool {
    let Some(flow) = Flow::of(f) else {
        return false;
    };
    for b in 1..flow.starts.len() {
        if let Some(done) = split_into(f, &flow, b) {
            return done;
        }
    }
    false
}

/// How a path enters a block.
struct Pred {
    block: usize,
    /// What the tested register holds when the path reaches the test.
    value: u64,
    /// By falling through (else by a jump or branch to its label).
    falls_in: bool,
}

/// Splits one decided path into block `b`: `Some(true)` when it did,
/// `None` when `b` has none.
fn split_into(f: &mut Func, flow: &Flow, b: usize) -> Option<bool> {
    let (start, end) = (flow.starts[b], flow.end_of(f, b));
    let (test, origin) = f.insts[end - 1].clone();
    let v = tested(&test).filter(|&v| flow.follows(v))?;
    let label = match f.insts[start].0 {
        Inst::Label(l) => Some(l),
        _ => None,
    };
    let body_start = start + usize::from(label.is_some());
    let body: Vec<_> = f.insts[body_start..end - 1].to_vec();
    if body.len() > MAX_COPY || !body.iter().all(|(i, _)| i.is_pure()) {
        return None;
    }
    // Every path agrees already: path_consts folds the test.
    if flow.known_after(f, b, &[], v).is_some() {
        return None;
    }
    let ends_in_jump = matches!(f.insts.last(), Some((Inst::Ret { .. } | Inst::Jump(_), _)));
    let mut preds = Vec::new();
    for p in (0..flow.starts.len()).filter(|&p| flow.succs[p].contains(&b)) {
        if !flow.reached(p) {
            continue;
        }
        // A path on which the register varies keeps the test: splitting
        // the others would not remove it.
        let value = flow.known_after(f, p, &body, v)?;
        let last = &f.insts[flow.end_of(f, p) - 1].0;
        let falls_in = p + 1 == b && !matches!(last, Inst::Ret { .. } | Inst::Jump(_));
        let jumps_in = label.is_some() && last.branch_target() == label;
        let retargetable = matches!(
            last,
            Inst::Jump(_) | Inst::Branch { .. } | Inst::BranchBit { .. }
        );
        // Both edges of one branch into `b`, or an edge only boot-time
        // patching or a reservation retry takes: left alone.
        if falls_in == jumps_in || (jumps_in && !(retargetable && ends_in_jump)) {
            return None;
        }
        preds.push(Pred {
            block: p,
            value,
            falls_in,
        });
    }
    // The paths one way or the other take their own copies, the way
    // with fewer out-of-line copies (each costs a jump); the test stays
    // for the others, which then agree on it.
    let cost = |way: bool| {
        let of_way = preds.iter().filter(|p| jumps_when(&test, p.value) == way);
        (
            of_way.clone().filter(|p| !p.falls_in).count(),
            of_way.count(),
        )
    };
    let way = cost(true) > cost(false);
    let pred = preds.iter().find(|p| jumps_when(&test, p.value) != way)?;
    let taken = test.branch_target()?;
    let mut p_last = flow.end_of(f, pred.block) - 1;
    // Where the test sends this path: its target, or what follows it
    // (labelled here if it is not yet).
    let dest = if jumps_when(&test, pred.value) {
        taken
    } else {
        match f.insts.get(end).cloned() {
            Some((Inst::Label(l), _)) => l,
            Some((_, o)) => {
                let l = new_label(f);
                f.insts.insert(end, (Inst::Label(l), o));
                if p_last >= end {
                    p_last += 1;
                }
                l
            }
            None => return None,
        }
    };
    let mut copy = body;
    copy.push((Inst::Jump(dest), origin.clone()));
    if pred.falls_in {
        // `start` is before `end`, so the label inserted at `end` has not
        // moved it.
        f.insts.splice(start..start, copy);
    } else {
        let l = new_label(f);
        retarget(&mut f.insts[p_last].0, l);
        f.insts.push((Inst::Label(l), origin));
        f.insts.extend(copy);
    }
    Some(true)
}

fn new_label(f: &mut Func) -> LabelId {
    let l = f.nlabels;
    f.nlabels += 1;
    l
}

fn retarget(inst: &mut Inst, to: LabelId) {
    match inst {
        Inst::Jump(t) | Inst::Branch { target: t, .. } | Inst::BranchBit { target: t, .. } => {
            *t = to
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::expr::BinOp;
    use crate::lir::test_insts::{arg, bin, branch, func, imm, insts, run as meaning};
    use crate::lir::{Cmp, Operand, VReg};

    fn copy(dst: u32, src: u32) -> Inst {
        Inst::Copy {
            dst: VReg(dst),
            src: VReg(src),
        }
    }

    /// vtd's `all`: set by two tests, copied into its `let`, then tested
    /// twice, with `mask = 52` and a pure prefix before the tests.
    fn vtd_shape() -> Vec<Inst> {
        vec![
            arg(0),
            arg(1),
            arg(2),
            imm(5, 0),
            branch(Cmp::Ne, 0, Operand::Imm(0), 0),
            branch(Cmp::Ne, 1, Operand::Imm(u64::MAX), 0),
            imm(5, 1),
            Inst::Label(0),
            copy(6, 5),
            imm(7, 52),
            branch(Cmp::Ne, 6, Operand::Imm(0), 2),
            bin(BinOp::Add, 8, 0, Operand::Reg(VReg(1))),
            bin(BinOp::And, 7, 8, Operand::Imm(63)),
            Inst::Label(2),
            bin(BinOp::And, 9, 2, Operand::Imm(63)),
            branch(Cmp::Ne, 6, Operand::Imm(0), 3),
            branch(Cmp::Geu, 9, Operand::Reg(VReg(7)), 4),
            Inst::Label(3),
            bin(BinOp::Add, 10, 9, Operand::Imm(1000)),
            Inst::Ret {
                value: Operand::Reg(VReg(10)),
            },
            Inst::Label(4),
            Inst::Ret {
                value: Operand::Reg(VReg(7)),
            },
        ]
    }

    #[test]
    fn each_path_takes_the_arm_its_flag_decides() {
        let before = func(vtd_shape(), 11, 5);
        let mut after = before.clone();
        run(&mut after);
        let got = insts(after.clone());
        // No test reads the flag, and nothing sets it any more.
        for v in [5, 6] {
            assert!(
                got.iter()
                    .all(|i| !i.uses().contains(&VReg(v)) && i.def() != Some(VReg(v))),
                "v{v}: {got:?}"
            );
        }
        for start in [0, 1, 5, u64::MAX] {
            for end in [0, 7, u64::MAX] {
                for cap in [0, 3, 63, 100] {
                    let args = [start, end, cap];
                    assert_eq!(
                        meaning(&after, &args),
                        meaning(&before, &args),
                        "{args:?}: {got:?}"
                    );
                }
            }
        }
    }

    /// A path on which the flag varies keeps the test on every path.
    #[test]
    fn a_flag_that_varies_on_a_path_keeps_its_test() {
        let mut body = vtd_shape();
        // The flag also comes from a register on one path.
        body.insert(6, copy(5, 2));
        let mut f = func(body, 11, 5);
        run(&mut f);
        assert!(insts(f)
            .iter()
            .any(|i| matches!(i, Inst::Branch { a: VReg(6), .. })));
    }
}
