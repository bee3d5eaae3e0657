//! Constants that reach a read along every path. A value the sequence
//! sets on several paths, each time to a constant (an `acquire ... held`
//! status: 0 where the lock was taken, 1 where this CPU already held
//! it), is one register written twice, so [`super::constfold`], which
//! trusts only registers written once, keeps the register: POWER
//! `li r11,0` before the reservation loop and `mr r3,r11` at the return.
//! Here a forward data flow over the basic blocks tells, at each read,
//! whether the same constant reached it on every path; where it did, the
//! read folds as a single definition's would (the return becomes
//! `li r3,0`, and the definitions nothing reads any more go).
//!
//! Sound because only registers all of whose definitions are constants
//! take part, and a path on which the register was not yet written
//! counts as "varies": no read is folded by assuming the builder's
//! promise that it never reads a register before writing it.

use super::{cfg, Func, Inst};

/// What a candidate register holds on entry to a block.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Val {
    /// Not written on any path here yet.
    Unset,
    Const(u64),
    Varies,
}

impl Val {
    fn join(self, o: Val) -> Val {
        match (self, o) {
            (Val::Unset, Val::Unset) => Val::Unset,
            (Val::Const(a), Val::Const(b)) if a == b => Val::Const(a),
            _ => Val::Varies,
        }
    }
}

/// At most this many registers are followed: the state is one value per
/// candidate per block, and a spec of thousands of statements should
/// not pay a quadratic cost for a fold worth one instruction a path.
const MAX_CANDIDATES: usize = 64;

/// Folds the reads the data flow decides, then drops what nothing reads.
/// Runs after [`super::jumps::thread`], which copies a shared return
/// into each path that jumped to it: before that, the paths meet at one
/// return and the constant varies there.
pub fn fold(f: &mut Func) {
    if fold_reads(f) {
        super::constfold::drop_unread(f);
    }
}

/// Folds the reads the data flow decides; true if any changed.
fn fold_reads(f: &mut Func) -> bool {
    let n = f.nvregs as usize;
    let mut defs = vec![0u32; n];
    let mut all_imm = vec![true; n];
    for (inst, _) in &f.insts {
        if let Some(d) = inst.def().filter(|d| (d.0 as usize) < n) {
            defs[d.0 as usize] += 1;
            all_imm[d.0 as usize] &= matches!(inst, Inst::Imm { .. });
        }
    }
    // Register number -> index into a block's state.
    let mut slot: Vec<Option<usize>> = vec![None; n];
    let mut cands = 0;
    for v in 0..n {
        if defs[v] >= 2 && all_imm[v] && cands < MAX_CANDIDATES {
            slot[v] = Some(cands);
            cands += 1;
        }
    }
    if cands == 0 {
        return false;
    }
    let (starts, succs) = cfg::basic_blocks(f);
    let len = f.insts.len();
    let end_of = |b: usize| starts.get(b + 1).copied().unwrap_or(len);
    let insts = &f.insts;
    let transfer = |b: usize, state: &mut Vec<Val>| {
        for (inst, _) in &insts[starts[b]..end_of(b)] {
            if let Inst::Imm { dst, value } = inst {
                if let Some(s) = slot.get(dst.0 as usize).copied().flatten() {
                    state[s] = Val::Const(*value);
                }
            }
        }
    };
    let mut entry: Vec<Option<Vec<Val>>> = vec![None; starts.len()];
    entry[0] = Some(vec![Val::Unset; cands]);
    let mut work = vec![0usize];
    while let Some(b) = work.pop() {
        let Some(mut state) = entry[b].clone() else {
            continue;
        };
        transfer(b, &mut state);
        for &s in &succs[b] {
            let joined = match &entry[s] {
                None => state.clone(),
                Some(old) => old.iter().zip(&state).map(|(a, b)| a.join(*b)).collect(),
            };
            if entry[s].as_ref() != Some(&joined) {
                entry[s] = Some(joined);
                work.push(s);
            }
        }
    }
    let mut known: Vec<Option<u64>> = vec![None; n];
    let mut changed = false;
    for (b, state) in entry.iter().enumerate() {
        let Some(state) = state else { continue };
        for (v, s) in slot.iter().enumerate() {
            known[v] = s.and_then(|s| match state[s] {
                Val::Const(c) => Some(c),
                _ => None,
            });
        }
        for (inst, _) in &mut f.insts[starts[b]..end_of(b)] {
            if let Some(new) = super::constfold::folded(inst, &known) {
                *inst = new;
                changed = true;
            }
            if let Inst::Imm { dst, value } = inst {
                if slot.get(dst.0 as usize).copied().flatten().is_some() {
                    known[dst.0 as usize] = Some(*value);
                }
            }
        }
    }
    changed
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lir::test_insts::{branch, func, imm, insts, ret};
    use crate::lir::{Cmp, Operand, VReg};

    fn ret_imm(c: u64) -> Inst {
        Inst::Ret {
            value: Operand::Imm(c),
        }
    }

    /// tcd_lock's shape: the status is 0 before the loop and on the
    /// taken path, 1 on the held path; each return reads one constant.
    #[test]
    fn each_path_returns_its_constant() {
        let mut f = func(
            vec![
                imm(1, 0),
                Inst::Label(0),
                branch(Cmp::Ne, 0, Operand::Imm(0), 1),
                branch(Cmp::Eq, 2, Operand::Imm(0), 0),
                ret(1),
                Inst::Label(1),
                imm(1, 1),
                ret(1),
            ],
            3,
            2,
        );
        assert!(fold_reads(&mut f));
        let got = insts(f);
        assert_eq!(got[4], ret_imm(0), "{got:?}");
        assert_eq!(got[7], ret_imm(1), "{got:?}");
    }

    /// Where the paths disagree, or one has not written the register,
    /// the read stays a register.
    #[test]
    fn paths_that_disagree_or_skip_the_write_keep_the_register() {
        for other in [Some(1), None] {
            let mut body = vec![
                branch(Cmp::Eq, 0, Operand::Imm(0), 0),
                imm(1, 0),
                Inst::Jump(1),
            ];
            body.push(Inst::Label(0));
            if let Some(c) = other {
                body.push(imm(1, c));
            }
            body.extend([Inst::Label(1), ret(1)]);
            // A second write on a path that is never read keeps the
            // register a candidate in the `None` case.
            body.extend([Inst::Label(2), imm(1, 0), ret(1)]);
            let mut f = func(body, 2, 3);
            fold(&mut f);
            let got = insts(f);
            assert!(got.iter().any(|i| *i == ret(1)), "{other:?}: {got:?}");
        }
    }

    /// A register written once by a non-constant is never a candidate.
    #[test]
    fn a_register_with_a_computed_definition_is_left_alone() {
        let mut f = func(
            vec![
                imm(1, 0),
                Inst::Copy {
                    dst: VReg(1),
                    src: VReg(0),
                },
                ret(1),
            ],
            2,
            0,
        );
        assert!(!fold_reads(&mut f));
    }
}
