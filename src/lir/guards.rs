//! Tests that a comparison on the way in decides. A shift by a run-time
//! amount is guarded (`0x1000 << mask` is 0 once `mask` reaches 64, as
//! the spec's meaning has it, while the targets' shifts wrap), but the
//! path to it has often bounded the amount already: vtd's page-selective
//! arm runs only where `mask <= cap_max_amask_val(cap)`, a 6-bit field,
//! so there `mask < 64` and the guard never jumps. Here a test of a
//! register against a constant is folded where its outcome follows from
//! the largest value the register can hold: what its own definition
//! allows, or what a comparison on the single path into the block
//! allowed (`x >= mask` with `x = y & 63` bounds `mask` by 63).
//!
//! Sound because a bound is taken only from a definition that is the
//! register's only one (so it holds wherever the register is read), or
//! from a branch whose edge is the only way into the blocks between it
//! and the test, none of which writes the register again.

use super::{cfg, Cmp, Func, Inst, Operand, VReg};
use crate::ir::expr::BinOp;

/// How far up the chain of single-predecessor blocks a bound is looked
/// for: the guards are a few blocks below the test that bounds them.
const MAX_WALK: usize = 8;

/// Folds the guards the bounds decide, then drops what nothing reads.
pub fn fold(f: &mut Func) {
    let mut changed = false;
    // One at a time: a fold changes the blocks.
    for _ in 0..64 {
        let Some((at, jumps)) = decided(f) else { break };
        match f.insts[at].0.branch_target() {
            Some(t) if jumps => f.insts[at].0 = Inst::Jump(t),
            _ => {
                f.insts.remove(at);
            }
        }
        changed = true;
    }
    if changed {
        super::jumps::thread(f);
        super::constfold::drop_unread(f);
    }
}

/// The largest value register `v` can hold anywhere, from its only
/// definition.
fn def_max(f: &Func, defs: &[u32], v: VReg) -> u64 {
    if defs.get(v.0 as usize) != Some(&1) {
        return u64::MAX;
    }
    let Some(inst) = f.insts.iter().map(|(i, _)| i).find(|i| i.def() == Some(v)) else {
        return u64::MAX;
    };
    match *inst {
        Inst::Imm { value, .. } => value,
        Inst::Bin {
            op: BinOp::And,
            b: Operand::Imm(m),
            ..
        } => m,
        Inst::Bin {
            op: BinOp::Shr,
            b: Operand::Imm(s),
            ..
        } if s < 64 => u64::MAX >> s,
        Inst::Insert { shift, width, .. } if shift + width < 64 => (1u64 << (shift + width)) - 1,
        Inst::Un { .. } => 64,
        _ => u64::MAX,
    }
}

/// The first guard a bound decides: its index and whether it jumps.
fn decided(f: &Func) -> Option<(usize, bool)> {
    let mut defs = vec![0u32; f.nvregs as usize];
    for (inst, _) in &f.insts {
        if let Some(n) = inst.def().and_then(|d| defs.get_mut(d.0 as usize)) {
            *n += 1;
        }
    }
    let (starts, succs) = cfg::basic_blocks(f);
    let len = f.insts.len();
    let end_of = |b: usize| starts.get(b + 1).copied().unwrap_or(len);
    let mut preds = vec![Vec::new(); starts.len()];
    for (b, ss) in succs.iter().enumerate() {
        for &s in ss {
            preds[s].push(b);
        }
    }
    for b in 0..starts.len() {
        let at = end_of(b) - 1;
        let Inst::Branch {
            cmp: cmp @ (Cmp::Geu | Cmp::Ltu),
            a: n,
            b: Operand::Imm(k),
            ..
        } = f.insts[at].0
        else {
            continue;
        };
        let mut max = def_max(f, &defs, n);
        // Up the single-predecessor chain, while nothing there writes `n`.
        let (mut blk, mut from) = (b, at);
        for _ in 0..MAX_WALK {
            if max < k
                || f.insts[starts[blk]..from]
                    .iter()
                    .any(|(i, _)| i.def() == Some(n))
            {
                break;
            }
            let [p] = preds[blk][..] else { break };
            let p_end = end_of(p) - 1;
            if let Some(m) = edge_bound(f, &defs, p_end, p + 1 == blk, starts[blk], n) {
                max = max.min(m);
            }
            (blk, from) = (p, p_end + 1);
        }
        if max < k {
            return Some((at, cmp == Cmp::Ltu));
        }
    }
    None
}

/// The bound on `n` that the branch at `at` gives on its edge into the
/// block starting at `start` (`falls`: the block follows it).
fn edge_bound(
    f: &Func,
    defs: &[u32],
    at: usize,
    falls: bool,
    start: usize,
    n: VReg,
) -> Option<u64> {
    let Inst::Branch { cmp, a, b, target } = f.insts[at].0 else {
        return None;
    };
    let into_target = matches!(f.insts[start].0, Inst::Label(l) if l == target);
    // Both edges into one block, or neither: nothing is known.
    if into_target == falls {
        return None;
    }
    // The relation that holds on this edge, as `a cmp b`.
    let cmp = if into_target { cmp } else { cmp.inverse() };
    match (cmp, b) {
        // n < k, n <= k - 1
        (Cmp::Ltu, Operand::Imm(k)) if a == n => k.checked_sub(1),
        // x >= n: n is at most what x can be.
        (Cmp::Geu, Operand::Reg(y)) if y == n && a != n => Some(def_max(f, defs, a)),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lir::test_insts::{arg, bin, branch, func, imm, insts, ret, run as meaning};

    /// vtd's shape: `if (cap & 63) >= mask` then a guard `mask >= 64`
    /// that can no longer jump; on the other edge it stays.
    #[test]
    fn a_bound_on_the_way_in_folds_the_guard() {
        // `only_taken`: the bounding branch's taken edge is the only way
        // into the guard's block (else it also falls through into it).
        let body = |only_taken: bool| {
            let mut v = vec![
                arg(0),
                arg(1),
                bin(BinOp::And, 2, 1, Operand::Imm(63)),
                branch(Cmp::Geu, 2, Operand::Reg(VReg(0)), 0),
            ];
            if only_taken {
                v.push(ret(0));
            }
            v.extend([
                Inst::Label(0),
                imm(3, 0),
                branch(Cmp::Geu, 0, Operand::Imm(64), 1),
                imm(3, 7),
                Inst::Label(1),
                ret(3),
            ]);
            v
        };
        let before = func(body(true), 4, 3);
        let mut f = before.clone();
        fold(&mut f);
        for x in [0, 1, 63, 64, 65, u64::MAX] {
            for y in [0, 5, 63, 64, u64::MAX] {
                assert_eq!(meaning(&f, &[x, y]), meaning(&before, &[x, y]), "{x} {y}");
            }
        }
        let got = insts(f);
        assert!(
            !got.contains(&branch(Cmp::Geu, 0, Operand::Imm(64), 1)),
            "{got:?}"
        );
        assert!(got.contains(&imm(3, 7)), "{got:?}");
        let mut f = func(body(false), 4, 3);
        fold(&mut f);
        let got = insts(f);
        assert!(
            got.contains(&branch(Cmp::Geu, 0, Operand::Imm(64), 1)),
            "{got:?}"
        );
    }

    /// A register written again between the bounding test and the guard
    /// is not bounded by it.
    #[test]
    fn a_write_between_drops_the_bound() {
        let body = vec![
            arg(0),
            arg(1),
            bin(BinOp::And, 2, 1, Operand::Imm(63)),
            branch(Cmp::Geu, 2, Operand::Reg(VReg(0)), 0),
            ret(0),
            Inst::Label(0),
            bin(BinOp::Add, 0, 0, Operand::Imm(100)),
            imm(3, 0),
            branch(Cmp::Geu, 0, Operand::Imm(64), 1),
            imm(3, 7),
            Inst::Label(1),
            ret(3),
        ];
        let mut f = func(body.clone(), 4, 2);
        fold(&mut f);
        assert_eq!(insts(f), body);
    }
}
