//! One-bit tests. A poll of a one-bit field (`poll iotlb.ivt == 0`) or a
//! test of a flag is built as `t = a & (1 << k); if t == 0 goto L`; when
//! nothing else reads `t`, the pair is one [`Inst::BranchBit`], which
//! every target tests without materialising the mask (a 64-bit mask is
//! two to three instructions on x86-64, POWER and riscv64, and inside a
//! poll loop it was rebuilt every trip).

use super::{Cmp, Func, Inst, Operand, VReg};
use crate::ir::expr::BinOp;

pub fn fuse(f: &mut Func) {
    let mut reads = vec![0u32; f.nvregs as usize];
    for (inst, _) in &f.insts {
        inst.each_use(|v| {
            if let Some(n) = reads.get_mut(v.0 as usize) {
                *n += 1;
            }
        });
    }
    let read_once = |v: VReg| reads.get(v.0 as usize) == Some(&1);
    let mut i = 0;
    while i + 1 < f.insts.len() {
        if let Some(mut fused) = pair(&f.insts[i].0, &f.insts[i + 1].0, read_once) {
            // The branch's origin: the test is what the branch was for.
            let origin = f.insts[i + 1].1.clone();
            // `(x >> k) & 1` (a flag read out of a word) tests bit k of x.
            let from = match i.checked_sub(1).map(|p| &f.insts[p].0) {
                Some(shift) if shifted_bit(shift, &mut fused, read_once) => i - 1,
                _ => i,
            };
            f.insts.splice(from..i + 2, [(fused, origin)]);
            i = from;
        }
        i += 1;
    }
}

/// `t = a & m; if t CMP c goto L` as a bit branch, when `m` is one bit,
/// `c` is 0 or `m`, the compare is (in)equality, `t` is not `a` and the
/// branch is the only reader of `t`.
fn pair(and: &Inst, branch: &Inst, read_once: impl Fn(VReg) -> bool) -> Option<Inst> {
    let Inst::Bin {
        op: BinOp::And,
        dst,
        a,
        b: Operand::Imm(m),
    } = *and
    else {
        return None;
    };
    let Inst::Branch {
        cmp,
        a: t,
        b: Operand::Imm(c),
        target,
    } = *branch
    else {
        return None;
    };
    if !m.is_power_of_two() || t != dst || dst == a || !read_once(dst) || (c != 0 && c != m) {
        return None;
    }
    // Branch when the bit is set: `t != 0` or `t == m`.
    let set = match cmp {
        Cmp::Eq => c == m,
        Cmp::Ne => c == 0,
        Cmp::Ltu | Cmp::Geu => return None,
    };
    Some(Inst::BranchBit {
        a,
        bit: m.trailing_zeros() as u8,
        set,
        target,
    })
}

/// When `shift` is `s = x >> k` and the bit branch tests bit `b` of `s`,
/// read nowhere else, test bit `k + b` of `x` instead.
fn shifted_bit(shift: &Inst, fused: &mut Inst, read_once: impl Fn(VReg) -> bool) -> bool {
    let (
        Inst::Bin {
            op: BinOp::Shr,
            dst,
            a: x,
            b: Operand::Imm(k),
        },
        Inst::BranchBit { a, bit, .. },
    ) = (shift, fused)
    else {
        return false;
    };
    if *a != *dst || *x == *dst || !read_once(*dst) || *k + u64::from(*bit) >= 64 {
        return false;
    }
    *a = *x;
    *bit += *k as u8;
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    fn func(insts: Vec<Inst>) -> Func {
        crate::lir::test_insts::func(insts, 4, 8)
    }
    use crate::lir::LabelId;

    fn and(m: u64) -> Inst {
        Inst::Bin {
            op: BinOp::And,
            dst: VReg(1),
            a: VReg(0),
            b: Operand::Imm(m),
        }
    }

    fn branch(cmp: Cmp, c: u64, target: LabelId) -> Inst {
        Inst::Branch {
            cmp,
            a: VReg(1),
            b: Operand::Imm(c),
            target,
        }
    }

    fn fused(insts: Vec<Inst>) -> Vec<Inst> {
        let mut f = func(insts);
        fuse(&mut f);
        f.insts.into_iter().map(|(i, _)| i).collect()
    }

    /// Every form the pair can take, against the meaning of the two
    /// instructions evaluated on values around the bit.
    #[test]
    fn a_fused_branch_goes_where_the_pair_went() {
        for k in [0u32, 5, 15, 16, 30, 31, 32, 47, 62, 63] {
            let m = 1u64 << k;
            for cmp in [Cmp::Eq, Cmp::Ne] {
                for c in [0, m] {
                    let out = fused(vec![and(m), branch(cmp, c, 7)]);
                    let [Inst::BranchBit {
                        a: VReg(0),
                        bit,
                        set,
                        target: 7,
                    }] = out[..]
                    else {
                        panic!("{k} {cmp:?} {c}: {out:?}");
                    };
                    assert_eq!(bit as u32, k);
                    for x in [0, m, !m, u64::MAX, m - 1, m.wrapping_add(m)] {
                        let taken = cmp.holds(x & m, c);
                        assert_eq!(
                            taken,
                            (x >> bit) & 1 == set as u64,
                            "{k} {cmp:?} {c} {x:#x}"
                        );
                    }
                }
            }
        }
    }

    /// `(x >> k) & m` with one bit in `m`: the bit of `x` it reads, on
    /// values around that bit; a shift whose value is read again stays.
    #[test]
    fn a_flag_shifted_out_of_a_word_is_its_bit() {
        let shr = |k: u64| Inst::Bin {
            op: BinOp::Shr,
            dst: VReg(0),
            a: VReg(2),
            b: Operand::Imm(k),
        };
        for (k, b) in [(0u64, 0u32), (39, 0), (54, 0), (48, 5), (63, 0), (60, 3)] {
            let m = 1u64 << b;
            let out = fused(vec![shr(k), and(m), branch(Cmp::Eq, 0, 7)]);
            let [Inst::BranchBit {
                a: VReg(2),
                bit,
                set: false,
                target: 7,
            }] = out[..]
            else {
                panic!("{k} {b}: {out:?}");
            };
            for x in [
                0,
                u64::MAX,
                1 << bit,
                !(1 << bit),
                1 << k,
                0x5555_5555_5555_5555,
            ] {
                let taken = (x >> k) & m == 0;
                assert_eq!(taken, (x >> bit) & 1 == 0, "{k} {b} {x:#x}");
            }
        }
        // Past bit 63: the shifted word has no such bit of x.
        let out = fused(vec![shr(60), and(1 << 4), branch(Cmp::Eq, 0, 7)]);
        assert!(matches!(
            out[..],
            [Inst::Bin { .. }, Inst::BranchBit { a: VReg(0), .. }]
        ));
        // The shift read again after the test.
        let again = Inst::Ret {
            value: Operand::Reg(VReg(0)),
        };
        let out = fused(vec![shr(39), and(1), branch(Cmp::Eq, 0, 7), again]);
        assert!(matches!(
            out[1],
            Inst::BranchBit {
                a: VReg(0),
                bit: 0,
                ..
            }
        ));
    }

    #[test]
    fn a_mask_read_again_or_not_one_bit_stays() {
        let kept = |insts: Vec<Inst>| assert_eq!(fused(insts.clone()), insts);
        // Two bits, or a compare against neither 0 nor the mask.
        kept(vec![and(3), branch(Cmp::Eq, 0, 1)]);
        kept(vec![and(4), branch(Cmp::Eq, 2, 1)]);
        // Unsigned order is not a bit test.
        kept(vec![and(4), branch(Cmp::Ltu, 4, 1)]);
        // `t` read after the branch.
        kept(vec![
            and(4),
            branch(Cmp::Eq, 0, 1),
            Inst::Ret {
                value: Operand::Reg(VReg(1)),
            },
        ]);
        // `t = t & m`: the branch would read a value the AND changed.
        kept(vec![
            Inst::Bin {
                op: BinOp::And,
                dst: VReg(1),
                a: VReg(1),
                b: Operand::Imm(4),
            },
            branch(Cmp::Eq, 0, 1),
        ]);
        // Not adjacent.
        kept(vec![and(4), Inst::SpinHint, branch(Cmp::Eq, 0, 1)]);
    }
}
