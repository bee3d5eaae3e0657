//! Jumps to jumps. Nested `if`s, cover arms and versioned loops each end
//! with a jump to their own join, and joins nest: `b .L6` where `.L6: b
//! .L5`. A jump or branch whose target label leads (through other labels
//! only) to a `Jump` goes straight to that jump's target, and a `Jump` to
//! a label that follows it (through labels only) is dropped, and one to
//! a return is the return; code after a return or jump that no label
//! makes reachable goes. Feature
//! jumps are left alone: boot-time patching rewrites them in place.

use super::{Func, Inst, LabelId};
use rustc_hash::FxHashMap as HashMap;

pub fn thread(f: &mut Func) {
    let next_jump = after_labels(f, |inst| match inst {
        Inst::Jump(t) => Some(*t),
        _ => None,
    });
    let resolve = |mut l: LabelId| {
        // A chain visits each label at most once; a cycle of jumps is an
        // endless loop, kept as it is.
        for _ in 0..next_jump.len() {
            match next_jump.get(&l) {
                Some(&m) if m != l => l = m,
                _ => break,
            }
        }
        l
    };
    for (inst, _) in &mut f.insts {
        match inst {
            Inst::Jump(t)
            | Inst::Branch { target: t, .. }
            | Inst::SubBranchAbove { target: t, .. }
            | Inst::BranchBit { target: t, .. } => *t = resolve(*t),
            _ => {}
        }
    }
    // Dropping dead code can put a jump right above its target, and
    // dropping that jump the one before it.
    while drop_unreachable(f) | drop_fallthrough_jumps(f) {}
    returns_for_jumps(f);
    drop_unreachable(f);
    // Last: a jump that is a return by now stays one.
    if invert_over_jumps(f) {
        while drop_unreachable(f) | drop_fallthrough_jumps(f) {}
    }
}

/// Drop what follows a `Ret` or a `Jump` up to the next label: no path
/// reaches it (`li r3,-22; blr; b .L18` after an early return). Did
/// any go?
fn drop_unreachable(f: &mut Func) -> bool {
    let (before, mut dead) = (f.insts.len(), false);
    f.insts.retain(|(inst, _)| {
        let keep = !dead || matches!(inst, Inst::Label(_));
        dead = match inst {
            Inst::Label(_) => false,
            Inst::Ret { .. } | Inst::Jump(_) => true,
            _ => dead,
        };
        keep
    });
    f.insts.len() != before
}

/// A `Jump` to a label that leads (through labels only) to a `Ret` is
/// that `Ret`: one instruction less on the way out of a nested arm.
fn returns_for_jumps(f: &mut Func) {
    let ret_at = after_labels(f, |inst| match inst {
        Inst::Ret { value } => Some(*value),
        _ => None,
    });
    for (inst, _) in &mut f.insts {
        if let Inst::Jump(t) = inst {
            if let Some(&value) = ret_at.get(t) {
                *inst = Inst::Ret { value };
            }
        }
    }
}

/// Drop each `Jump` whose target follows it through labels only; did any
/// go?
fn drop_fallthrough_jumps(f: &mut Func) -> bool {
    let falls_into = |i: usize, t: LabelId| {
        f.insts[i + 1..]
            .iter()
            .map_while(|(next, _)| match next {
                Inst::Label(l) => Some(*l),
                _ => None,
            })
            .any(|l| l == t)
    };
    let drop: Vec<bool> = (0..f.insts.len())
        .map(|i| matches!(f.insts[i].0, Inst::Jump(t) if falls_into(i, t)))
        .collect();
    if !drop.contains(&true) {
        return false;
    }
    let mut i = 0;
    f.insts.retain(|_| {
        i += 1;
        !drop[i - 1]
    });
    true
}

/// `if c goto L1; goto L2; L1:` is `if !c goto L2; L1:`: the path that
/// jumped falls through, the other takes the branch, one instruction
/// fewer (vtd's `all` test, whose true path leaves for its own copy of
/// the code after it). Did any change?
fn invert_over_jumps(f: &mut Func) -> bool {
    let mut changed = false;
    let mut i = 0;
    while i + 1 < f.insts.len() {
        let Inst::Jump(over) = f.insts[i + 1].0 else {
            i += 1;
            continue;
        };
        let next_labels: Vec<LabelId> = f.insts[i + 2..]
            .iter()
            .map_while(|(next, _)| match next {
                Inst::Label(l) => Some(*l),
                _ => None,
            })
            .collect();
        let inverted = match f.insts[i].0 {
            Inst::Branch { cmp, a, b, target } if next_labels.contains(&target) => {
                Some(Inst::Branch {
                    cmp: cmp.inverse(),
                    a,
                    b,
                    target: over,
                })
            }
            Inst::BranchBit {
                a,
                bit,
                set,
                target,
            } if next_labels.contains(&target) => Some(Inst::BranchBit {
                a,
                bit,
                set: !set,
                target: over,
            }),
            _ => None,
        };
        if let Some(b) = inverted {
            f.insts[i].0 = b;
            f.insts.remove(i + 1);
            changed = true;
        }
        i += 1;
    }
    changed
}

/// Each label that is followed, through labels only, by an instruction
/// `pick` takes: what it took.
fn after_labels<T>(f: &Func, pick: impl Fn(&Inst) -> Option<T>) -> HashMap<LabelId, T>
where
    T: Copy,
{
    let mut out = HashMap::default();
    let mut pending = Vec::new();
    for (inst, _) in &f.insts {
        if let Inst::Label(l) = inst {
            pending.push(*l);
            continue;
        }
        if let Some(t) = pick(inst) {
            out.extend(pending.iter().map(|&l| (l, t)));
        }
        pending.clear();
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lir::test_insts::{branch, func, imm, insts};
    use crate::lir::{Cmp, Operand};

    /// A function of `body` after `thread`.
    fn threaded(body: Vec<Inst>) -> Vec<Inst> {
        let mut f = func(body, 1, 4);
        thread(&mut f);
        insts(f)
    }

    #[test]
    fn chains_are_followed_and_fallthrough_jumps_dropped() {
        let ret = imm(0, 1);
        let insts = threaded(vec![
            branch(Cmp::Eq, 0, Operand::Imm(0), 1),
            Inst::Jump(2),
            Inst::Label(1),
            Inst::Jump(2),
            Inst::Label(2),
            Inst::Label(3),
            Inst::Jump(0),
            Inst::Label(0),
            ret.clone(),
        ]);
        assert_eq!(
            insts,
            vec![
                branch(Cmp::Eq, 0, Operand::Imm(0), 0),
                Inst::Label(1),
                Inst::Label(2),
                Inst::Label(3),
                Inst::Label(0),
                ret,
            ]
        );
    }

    #[test]
    fn dead_code_goes_and_then_the_jumps_that_fall_into_their_target() {
        let ret = Inst::Ret {
            value: Operand::Imm(0),
        };
        let insts = threaded(vec![
            Inst::Jump(0),
            imm(0, 1),
            Inst::Label(1),
            Inst::Jump(0),
            Inst::Label(0),
            ret.clone(),
        ]);
        // The dead `Imm` goes, then both jumps fall into their target.
        assert_eq!(insts, vec![Inst::Label(1), Inst::Label(0), ret]);
    }

    #[test]
    fn a_jump_to_a_return_is_the_return() {
        let ret = Inst::Ret {
            value: Operand::Imm(0),
        };
        let branch = branch(Cmp::Eq, 0, Operand::Imm(0), 1);
        let insts = threaded(vec![
            branch.clone(),
            Inst::Jump(0),
            Inst::Label(1),
            imm(0, 1),
            Inst::Label(0),
            ret.clone(),
        ]);
        assert_eq!(insts[..2], [branch, ret]);
    }

    #[test]
    fn a_branch_over_a_jump_is_inverted() {
        let insts = threaded(vec![
            branch(Cmp::Ne, 0, Operand::Imm(0), 1),
            Inst::Jump(2),
            Inst::Label(1),
            imm(0, 1),
            Inst::Label(2),
            imm(0, 2),
            Inst::Ret {
                value: Operand::Reg(crate::lir::VReg(0)),
            },
        ]);
        assert_eq!(insts[0], branch(Cmp::Eq, 0, Operand::Imm(0), 2));
        assert_eq!(insts[1], Inst::Label(1));
    }

    #[test]
    fn an_endless_loop_stays() {
        let insts = threaded(vec![Inst::Label(0), Inst::Jump(0)]);
        assert_eq!(insts.len(), 2);
    }
}
