//! Constants through registers. The builder lowers each expression where
//! it stands, so a range whose bounds are constants still computes its
//! trip count and tests it for zero (`li 127; cmpdi 7,r,0; beq`), and an
//! induction variable's first value is built from a constant start
//! (`li 1; sldi 12; ori 0x400` for `(1 << 10) | (set << 12)` at set = 1).
//! Here a register written once, by a constant, is that constant wherever
//! it is read: computations of constants become constants, branches on
//! constants become jumps or go, and what nothing reads any more goes.
//!
//! Sound because a register with one definition holds that definition's
//! value wherever it is read (the builder never reads a register before
//! writing it), and each fold computes what the target's instruction
//! would: [`BinOp::apply`], [`UnOp::apply`], [`Cmp::holds`]; shifts are
//! folded only below 64, where every target agrees.

use super::{Cmp, Func, Inst, Operand, VReg};
use crate::ir::expr::BinOp;

pub fn fold(f: &mut Func) {
    let mut defs = vec![0u32; f.nvregs as usize];
    for (inst, _) in &f.insts {
        if let Some(d) = inst.def() {
            if let Some(n) = defs.get_mut(d.0 as usize) {
                *n += 1;
            }
        }
    }
    let mut known: Vec<Option<u64>> = vec![None; f.nvregs as usize];
    let mut changed = false;
    for (inst, _) in &mut f.insts {
        if let Some(new) = folded(inst, &known) {
            *inst = new;
            changed = true;
        }
        if let Inst::Imm { dst, value } = inst {
            if defs.get(dst.0 as usize) == Some(&1) {
                known[dst.0 as usize] = Some(*value);
            }
        }
    }
    if changed {
        f.insts
            .retain(|(i, _)| !matches!(i, Inst::Copy { dst, src } if dst == src));
        drop_unread(f);
    }
}

/// `inst` with its constant operands folded, if that changes it: a
/// constant, a jump, or a copy for a branch never taken (a copy of a
/// register to itself, removed after).
pub(super) fn folded(inst: &Inst, known: &[Option<u64>]) -> Option<Inst> {
    let k = |v: &VReg| known.get(v.0 as usize).copied().flatten();
    let op = |o: &Operand| match o {
        Operand::Imm(x) => Some(*x),
        Operand::Reg(v) => k(v),
    };
    let value = |dst: &VReg, value: u64| Some(Inst::Imm { dst: *dst, value });
    match inst {
        Inst::Copy { dst, src } => value(dst, k(src)?),
        Inst::Not { dst, src } => value(dst, !k(src)?),
        Inst::Un { op: u, dst, src } => value(dst, u.apply(k(src)?)),
        Inst::Bin {
            op: b,
            dst,
            a,
            b: rhs,
        } => {
            let (x, y) = (k(a)?, op(rhs)?);
            if matches!(b, BinOp::Shl | BinOp::Shr) && y >= 64 {
                return None;
            }
            value(dst, b.apply(x, y))
        }
        Inst::Insert {
            dst,
            src,
            shift,
            width,
        } if *shift < 64 => {
            let mask = 1u64.checked_shl(*width).map_or(u64::MAX, |m| m - 1);
            value(dst, (k(src)? & mask) << shift)
        }
        Inst::SetCmp { cmp, dst, a, b } => value(dst, u64::from(cmp.holds(k(a)?, op(b)?))),
        // Every target returns an immediate as cheaply as a register
        // (`li r3,0` rather than `li r11,0 ... mr r3,r11`).
        Inst::Ret {
            value: Operand::Reg(v),
        } => Some(Inst::Ret {
            value: Operand::Imm(k(v)?),
        }),
        Inst::Branch { cmp, a, b, target } => match (k(a), op(b), b) {
            (Some(x), Some(y), _) if cmp.holds(x, y) => Some(Inst::Jump(*target)),
            (Some(_), Some(_), _) => Some(Inst::Copy { dst: *a, src: *a }),
            // A constant on the left (`threshold < size` with the
            // threshold pinned): the register on the left, as every
            // target's compare wants it.
            (Some(c), None, Operand::Reg(x)) => {
                let (cmp, c) = swapped(*cmp, c)?;
                Some(Inst::Branch {
                    cmp,
                    a: *x,
                    b: Operand::Imm(c),
                    target: *target,
                })
            }
            _ => None,
        },
        _ => None,
    }
}

/// `c cmp x` as `x cmp' c'`: equality both ways; `c < x` is `x >= c + 1`
/// and `c >= x` is `x < c + 1`; against 1 these are `x != 0` and `x ==
/// 0`, which every target tests without a constant. Only where `c + 1`
/// is as cheap to build as `c`: below 2048 it is one instruction or an
/// immediate operand on every target, while a larger `c` may be one
/// that `c + 1` is not (riscv64 `lui 0x77` against `lui; addiw`, an
/// AArch64 12-bit immediate shifted by 12).
fn swapped(cmp: Cmp, c: u64) -> Option<(Cmp, u64)> {
    let next = c + 1;
    match cmp {
        Cmp::Eq | Cmp::Ne => Some((cmp, c)),
        Cmp::Ltu if c == 0 => Some((Cmp::Ne, 0)),
        Cmp::Geu if c == 0 => Some((Cmp::Eq, 0)),
        _ if c >= SMALL => None,
        Cmp::Ltu => Some((Cmp::Geu, next)),
        Cmp::Geu => Some((Cmp::Ltu, next)),
    }
}

/// Constants below this are one instruction (or an immediate) wherever
/// they stand (riscv64 `addi`, AArch64 `cmp #imm12`, POWER `cmpldi`).
const SMALL: u64 = 2048;

/// Removes computations nothing reads, until none is left (a removed
/// one may have been the last reader of another).
pub(super) fn drop_unread(f: &mut Func) {
    loop {
        let mut reads = vec![0u32; f.nvregs as usize];
        for (inst, _) in &f.insts {
            inst.each_use(|v| {
                if let Some(n) = reads.get_mut(v.0 as usize) {
                    *n += 1;
                }
            });
        }
        let before = f.insts.len();
        f.insts.retain(|(inst, _)| {
            !inst.is_pure()
                || inst
                    .def()
                    .is_some_and(|d| reads.get(d.0 as usize) != Some(&0))
        });
        if f.insts.len() == before {
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lir::test_insts::{bin, branch, func, imm, insts, ret};

    /// A function of `body` (at most 2 labels) after `fold`.
    fn folded(body: Vec<Inst>, nvregs: u32) -> Vec<Inst> {
        let mut f = func(body, nvregs, 2);
        fold(&mut f);
        insts(f)
    }

    /// radix's `range set in 1, 127`: the zero test goes, the first value
    /// of `(1 << 10) | (set << 12)` is one constant, the count stays (the
    /// loop writes it again).
    #[test]
    fn a_constant_range_start_is_one_constant() {
        // The loop, which folding leaves as it is.
        let kept = [
            Inst::Label(1),
            bin(BinOp::Add, 4, 4, Operand::Imm(4096)),
            bin(BinOp::Sub, 2, 2, Operand::Imm(1)),
            branch(Cmp::Ne, 2, Operand::Imm(0), 1),
            Inst::Label(0),
            ret(4),
        ];
        let body = [
            imm(0, 127),
            imm(1, 1),
            branch(Cmp::Eq, 0, Operand::Imm(0), 0),
            bin(BinOp::Shr, 2, 0, Operand::Imm(0)),
            bin(BinOp::Shl, 3, 1, Operand::Imm(12)),
            bin(BinOp::Or, 4, 3, Operand::Imm(1024)),
        ];
        let got = folded([&body[..], &kept].concat(), 5);
        let want = [&[imm(2, 127), imm(4, 0x1400)][..], &kept].concat();
        assert_eq!(got, want);
    }

    /// `0 < size` (a threshold pinned to 0) is `size != 0`; `5 >= x` is
    /// `x < 6`; a compare of a large constant stays.
    #[test]
    fn a_constant_on_the_left_moves_right() {
        for (cmp, c, want) in [
            (Cmp::Ltu, 0, Some((Cmp::Ne, 0))),
            (Cmp::Geu, 0, Some((Cmp::Eq, 0))),
            (Cmp::Geu, 5, Some((Cmp::Ltu, 6))),
            (Cmp::Ltu, 5, Some((Cmp::Geu, 6))),
            (Cmp::Eq, 7, Some((Cmp::Eq, 7))),
            (Cmp::Ltu, u64::MAX, None),
            (Cmp::Ltu, 0x77000, None),
        ] {
            let got = folded(
                vec![
                    imm(0, c),
                    branch(cmp, 0, Operand::Reg(VReg(1)), 0),
                    Inst::Label(0),
                    ret(1),
                ],
                2,
            );
            let moved = got.iter().find_map(|i| match i {
                Inst::Branch {
                    cmp,
                    a: VReg(1),
                    b: Operand::Imm(c),
                    ..
                } => Some((*cmp, *c)),
                _ => None,
            });
            assert_eq!(moved, want, "{cmp:?} {c}");
            for x in [0, 1, 5, 6, 7, u64::MAX] {
                if let Some((cmp2, c2)) = want {
                    assert_eq!(cmp.holds(c, x), cmp2.holds(x, c2), "{cmp:?} {c} {x}");
                }
            }
        }
    }

    /// A register written twice is not a constant, a branch always taken
    /// is a jump, and a shift of 64 is left to the target's lowering.
    #[test]
    fn only_single_definitions_fold() {
        let got = folded(
            vec![
                imm(0, 5),
                imm(1, 64),
                bin(BinOp::Add, 0, 0, Operand::Imm(1)),
                branch(Cmp::Ltu, 1, Operand::Imm(100), 0),
                bin(BinOp::Shl, 2, 0, Operand::Reg(VReg(1))),
                Inst::Label(0),
                ret(2),
            ],
            3,
        );
        assert!(
            matches!(got[2], Inst::Bin { op: BinOp::Add, .. }),
            "{got:?}"
        );
        assert_eq!(got[3], Inst::Jump(0));
        assert!(
            matches!(got[4], Inst::Bin { op: BinOp::Shl, .. }),
            "{got:?}"
        );
    }
}
