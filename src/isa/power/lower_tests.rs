//! Constant materialisation against a small evaluator of the instructions
//! it emits.

use super::*;
use crate::isa::lower_common::testing::{check_materialize_bounds, check_materialize_random};

fn eval(seq: &[Insn]) -> u64 {
    // A tiny interpreter for the instructions `materialize` emits; the
    // encodings themselves are checked against GNU as elsewhere, and
    // the values end to end under qemu.
    let mut r = 0u64;
    for i in seq {
        r = match *i {
            Insn::Li { imm, .. } => imm as i64 as u64,
            Insn::Lis { imm, .. } => ((imm as i64) << 16) as u64,
            Insn::Ori { imm, .. } => r | u64::from(imm),
            Insn::Oris { imm, .. } => r | (u64::from(imm) << 16),
            Insn::Rldicr { sh, me, .. } => r.rotate_left(sh.bits()) & (u64::MAX << (63 - me.get())),
            Insn::Rldicl { sh, mb, .. } => r.rotate_left(sh.bits()) & (u64::MAX >> mb.get()),
            ref other => panic!("unexpected {other:?}"),
        };
    }
    r
}

/// `materialize` into r3, its value checked.
fn check(v: u64) -> Vec<Insn> {
    let mut seq = Vec::new();
    materialize(Reg::of::<3>(), v, &mut |i| seq.push(i));
    assert_eq!(eval(&seq), v, "{v:#x}: {seq:?}");
    seq
}

#[test]
fn materialize_is_correct_and_short() {
    let bounds: [(usize, &[u64]); 4] = [
        (1, &[0, 1, u64::MAX, 0x7fff]),
        (2, &[0x8000, 0x0005_4000_0000_0000, 1 << 63]),
        (3, &[0xffff_ffff, 0x8000_0000]),
        (
            5,
            &[
                0x0005_4000_0200_0000,
                0x000c_0000_0200_0000,
                0x1234_5678_9abc_def0,
            ],
        ),
    ];
    check_materialize_bounds(&bounds, check);
}

#[test]
fn materialize_random_values() {
    check_materialize_random(5, check);
}

/// A register the allocator never saw is an error, never r0.
#[test]
fn unallocated_register_is_an_error() {
    use crate::isa::{Machine, Target};
    let (f, alloc) = crate::isa::test_values::copy_from_unallocated(9);
    let e = lower(&f, &alloc, Target::Power64le, Machine::Book3s)
        .err()
        .expect("an error");
    assert_eq!(
        e,
        LowerError::NoRegister(crate::lir::regalloc::NoRegister(crate::lir::VReg(0)))
    );
}
