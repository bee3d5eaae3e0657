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

use super::{cfg, Func};

/// Removes the dead computations, until none is left (a removed one may
/// have been the last reader of another).
pub fn drop_dead(f: &mut Func) {
    while drop_once(f) {}
}

fn drop_once(f: &mut Func) -> bool {
    let (starts, succs) = cfg::basic_blocks(f);
    let len = f.insts.len();
    let end_of = |b: usize| starts.get(b + 1).copied().unwrap_or(len);
    let live_out = cfg::live_out(f, &starts, &succs);
    let mut dead = vec![false; len];
    for b in 0..starts.len() {
        let mut live = live_out[b].clone();
        for i in (starts[b]..end_of(b)).rev() {
            let inst = &f.insts[i].0;
            let def = inst.def();
            if inst.is_pure() && def.is_some_and(|d| !live.contains(&d)) {
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
    use crate::lir::{Cmp, Inst, Operand, VReg};

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
