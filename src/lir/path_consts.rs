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

use super::{cfg, Func, Inst, VReg};

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
        // A branch never taken became a copy of its register to itself.
        f.insts
            .retain(|(i, _)| !matches!(i, Inst::Copy { dst, src } if dst == src));
        super::constfold::drop_unread(f);
    }
}

/// The forward data flow: which registers take part, the basic blocks,
/// and what each candidate holds on entry to each block (`None`: no
/// path reaches it).
pub(super) struct Flow {
    /// Register number -> index into a block's state.
    slot: Vec<Option<usize>>,
    pub starts: Vec<usize>,
    pub succs: Vec<Vec<usize>>,
    entry: Vec<Option<Vec<Val>>>,
}

impl Flow {
    /// Registers written at least twice, each time by a constant, and
    /// what each holds on entry to each block; `None` if there are none.
    pub fn of(f: &Func) -> Option<Flow> {
        let n = f.nvregs as usize;
        let mut defs = vec![0u32; n];
        let mut copies = vec![false; n];
        let mut ok = vec![true; n];
        for (inst, _) in &f.insts {
            if let Some(d) = inst.def().filter(|d| (d.0 as usize) < n) {
                let d = d.0 as usize;
                defs[d] += 1;
                match inst {
                    Inst::Imm { .. } => {}
                    Inst::Copy { .. } => copies[d] = true,
                    _ => ok[d] = false,
                }
            }
        }
        // A copy of a register that takes part takes part too (a `let`
        // of a flag is a copy of the register its branches set); a
        // register written once by a constant is constfold's.
        let mut cand: Vec<bool> = (0..n)
            .map(|v| ok[v] && (defs[v] >= 2 || copies[v]))
            .collect();
        loop {
            let mut changed = false;
            for (inst, _) in &f.insts {
                if let Inst::Copy { dst, src } = inst {
                    let (d, s) = (dst.0 as usize, src.0 as usize);
                    if d < n && cand[d] && !cand.get(s).copied().unwrap_or(false) {
                        cand[d] = false;
                        changed = true;
                    }
                }
            }
            if !changed {
                break;
            }
        }
        let mut slot: Vec<Option<usize>> = vec![None; n];
        let mut cands = 0;
        for v in 0..n {
            if cand[v] && cands < MAX_CANDIDATES {
                slot[v] = Some(cands);
                cands += 1;
            }
        }
        // A copy whose source fell outside the budget does not take part.
        let mut changed = true;
        while changed {
            changed = false;
            for (inst, _) in &f.insts {
                if let Inst::Copy { dst, src } = inst {
                    let d = dst.0 as usize;
                    if slot.get(src.0 as usize).copied().flatten().is_none()
                        && slot.get(d).copied().flatten().is_some()
                    {
                        slot[d] = None;
                        changed = true;
                    }
                }
            }
        }
        if slot.iter().all(Option::is_none) {
            return None;
        }
        let (starts, succs) = cfg::basic_blocks(f);
        let mut flow = Flow {
            slot,
            starts,
            entry: vec![None; succs.len()],
            succs,
        };
        flow.entry[0] = Some(vec![Val::Unset; cands]);
        let mut work = vec![0usize];
        while let Some(b) = work.pop() {
            let Some(mut state) = flow.entry[b].clone() else {
                continue;
            };
            flow.transfer(f, b, &mut state);
            // A test of a register the state knows goes one way only (a
            // flag's second test, on the path that set it).
            let last = &f.insts[flow.end_of(f, b) - 1].0;
            let taken = tested(last)
                .and_then(|v| flow.slot.get(v.0 as usize).copied().flatten())
                .and_then(|s| match state[s] {
                    Val::Const(c) => Some(jumps_when(last, c)),
                    _ => None,
                });
            let succs = &flow.succs[b];
            for &s in succs {
                match taken {
                    Some(true) if s != succs[0] => continue,
                    Some(false) if s != b + 1 => continue,
                    _ => {}
                }
                let joined = match &flow.entry[s] {
                    None => state.clone(),
                    Some(old) => old.iter().zip(&state).map(|(a, b)| a.join(*b)).collect(),
                };
                if flow.entry[s].as_ref() != Some(&joined) {
                    flow.entry[s] = Some(joined);
                    work.push(s);
                }
            }
        }
        Some(flow)
    }

    /// One past the last instruction of block `b`.
    pub fn end_of(&self, f: &Func, b: usize) -> usize {
        self.starts.get(b + 1).copied().unwrap_or(f.insts.len())
    }

    fn transfer(&self, f: &Func, b: usize, state: &mut [Val]) {
        self.through(&f.insts[self.starts[b]..self.end_of(f, b)], state);
    }

    fn through(&self, insts: &[(Inst, super::Origin)], state: &mut [Val]) {
        for (inst, _) in insts {
            let slot = |v: &VReg| self.slot.get(v.0 as usize).copied().flatten();
            match inst {
                Inst::Imm { dst, value } => {
                    if let Some(s) = slot(dst) {
                        state[s] = Val::Const(*value);
                    }
                }
                Inst::Copy { dst, src } => {
                    if let (Some(d), Some(s)) = (slot(dst), slot(src)) {
                        state[d] = state[s];
                    }
                }
                _ => {}
            }
        }
    }

    /// The constant `v` holds after leaving block `p` and running `then`
    /// (straight-line code), if `p` is reached.
    pub fn known_after(
        &self,
        f: &Func,
        p: usize,
        then: &[(Inst, super::Origin)],
        v: VReg,
    ) -> Option<u64> {
        let s = self.slot.get(v.0 as usize).copied().flatten()?;
        let mut state = self.entry[p].clone()?;
        self.transfer(f, p, &mut state);
        self.through(then, &mut state);
        match state[s] {
            Val::Const(c) => Some(c),
            _ => None,
        }
    }

    /// Does some path reach block `b`?
    pub fn reached(&self, b: usize) -> bool {
        self.entry[b].is_some()
    }

    /// Is `v` followed (written only by constants, at least twice)?
    pub fn follows(&self, v: VReg) -> bool {
        self.slot.get(v.0 as usize).copied().flatten().is_some()
    }
}

/// The register a test of a register against a constant reads.
pub(super) fn tested(inst: &Inst) -> Option<VReg> {
    match *inst {
        Inst::Branch {
            a,
            b: super::Operand::Imm(_),
            ..
        }
        | Inst::BranchBit { a, .. } => Some(a),
        _ => None,
    }
}

/// Does the test `inst` (see [`tested`]) jump when its register holds `c`?
pub(super) fn jumps_when(inst: &Inst, c: u64) -> bool {
    match *inst {
        Inst::Branch {
            cmp,
            b: super::Operand::Imm(k),
            ..
        } => cmp.holds(c, k),
        Inst::BranchBit { bit, set, .. } => ((c >> bit) & 1 == 1) == set,
        _ => false,
    }
}

/// Folds the reads the data flow decides; true if any changed.
fn fold_reads(f: &mut Func) -> bool {
    let Some(flow) = Flow::of(f) else {
        return false;
    };
    let n = f.nvregs as usize;
    let Flow {
        slot,
        starts,
        entry,
        ..
    } = flow;
    let len = f.insts.len();
    let end_of = |b: usize| starts.get(b + 1).copied().unwrap_or(len);
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
            match inst {
                Inst::Imm { dst, value } if slot[dst.0 as usize].is_some() => {
                    known[dst.0 as usize] = Some(*value);
                }
                // Not folded: its source varies here.
                Inst::Copy { dst, .. } if slot[dst.0 as usize].is_some() => {
                    known[dst.0 as usize] = None;
                }
                _ => {}
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
