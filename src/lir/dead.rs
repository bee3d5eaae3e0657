//! Computations whose value no path reads. [`super::constfold`] drops a
//! register nothing reads anywhere; a register read somewhere can still
//! be written where no read follows: vtd's `mask = 52` before the
//! branch that computes the mask on the path that uses it, or, once
//! [`super::thread`] has given the path that skips it its own copy,
//! a flag's constant that no test reads any more. Backward liveness
//! over the basic blocks finds them.
//!
//! Sound because only instructions without effects go (constants,
//! copies, arithmetic, field inserts, comparisons into registers), and
//! only where no path from them reads the register before writing it.

use super::{cfg, Func, Inst, VReg};
use rustc_hash::FxHashSet as Set;

fn pure(inst: &Inst) -> bool {
    matches!(
        inst,
        Inst::Imm { .. }
            | Inst::Copy { .. }
            | Inst::Not { .. }
            | Inst::Un { .. }
            | Inst::Bin { .. }
            | Inst::Insert { .. }
            | Inst::SetCmp { .. }
    )
}

/// Removes the dead computations, until none is left (a removed one may
/// have been the last reader of another).
pub fn drop_dead(f: &mut Func) {
    while drop_once(f) {}
}

fn drop_once(f: &mut Func) -> bool {
    let (starts, succs) = cfg::basic_blocks(f);
    let len = f.insts.len();
    let nb = starts.len();
    let end_of = |b: usize| starts.get(b + 1).copied().unwrap_or(len);
    // Per block: read before written (gen) and written (kill).
    let mut gen: Vec<Set<VReg>> = vec![Set::default(); nb];
    let mut kill: Vec<Set<VReg>> = vec![Set::default(); nb];
    for b in 0..nb {
        for (inst, _) in &f.insts[starts[b]..end_of(b)] {
            inst.each_use(|v| {
                if !kill[b].contains(&v) {
                    gen[b].insert(v);
                }
            });
            if let Some(d) = inst.def() {
                kill[b].insert(d);
            }
        }
    }
    let mut live_in = gen.clone();
    let mut changed = true;
    while changed {
        changed = false;
        for b in (0..nb).rev() {
            let mut live: Set<VReg> = Set::default();
            for &s in &succs[b] {
                live.extend(live_in[s].iter().copied());
            }
            live.retain(|v| !kill[b].contains(v));
            live.extend(gen[b].iter().copied());
            if live.len() != live_in[b].len() {
                live_in[b] = live;
                changed = true;
            }
        }
    }
    let mut dead = vec![false; len];
    for b in 0..nb {
        let mut live: Set<VReg> = Set::default();
        for &s in &succs[b] {
            live.extend(live_in[s].iter().copied());
        }
        for i in (starts[b]..end_of(b)).rev() {
            let inst = &f.insts[i].0;
            let def = inst.def();
            if pure(inst) && def.is_some_and(|d| !live.contains(&d)) {
                dead[i] = true;
                continue;
            }
            if let Some(d) = def {
                live.remove(&d);
            }
            inst.each_use(|v| {
                live.insert(v);
            });
        }
    }
    if !dead.contains(&true) {
        return false;
    }
    let mut i = 0;
    f.insts.retain(|_| {
        i += 1;
        !dead[i - 1]
    });
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lir::test_insts::{arg, branch, func, imm, insts, ret};
    use crate::lir::{Cmp, Operand};

    /// `mask = 52` on the path that overwrites it before any read goes;
    /// on the path that reads it, it stays.
    #[test]
    fn a_constant_overwritten_on_every_path_goes() {
        let body = vec![
            arg(0),
            imm(1, 52),
            branch(Cmp::Eq, 0, Operand::Imm(0), 0),
            imm(1, 7),
            Inst::Label(0),
            ret(1),
        ];
        let mut f = func(body.clone(), 2, 1);
        drop_dead(&mut f);
        assert_eq!(insts(f), body, "52 is read when the branch is taken");
        let overwritten = vec![
            arg(0),
            imm(1, 52),
            branch(Cmp::Eq, 0, Operand::Imm(0), 0),
            Inst::Label(1),
            imm(1, 7),
            Inst::Label(0),
            imm(1, 9),
            ret(1),
        ];
        let mut f = func(overwritten.clone(), 2, 2);
        drop_dead(&mut f);
        let got = insts(f);
        assert!(!got.contains(&imm(1, 52)), "{got:?}");
        assert!(!got.contains(&imm(1, 7)), "{got:?}");
        assert!(got.contains(&imm(1, 9)), "{got:?}");
    }

    /// A value read around a loop's back edge is live at its end.
    #[test]
    fn a_value_read_by_the_next_iteration_stays() {
        use crate::ir::expr::BinOp;
        let body = vec![
            imm(0, 4),
            Inst::Label(0),
            Inst::Bin {
                op: BinOp::Sub,
                dst: VReg(0),
                a: VReg(0),
                b: Operand::Imm(1),
            },
            branch(Cmp::Ne, 0, Operand::Imm(0), 0),
            ret(0),
        ];
        let mut f = func(body.clone(), 1, 1);
        drop_dead(&mut f);
        assert_eq!(insts(f), body);
    }
}
