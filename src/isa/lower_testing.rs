//! What the lowerings' unit tests check the same way on every target.

use crate::ir::expr::BinOp;
use crate::isa::test_values::xorshift;
use std::fmt::Debug;

/// Every binary operation of the LIR.
pub const BIN_OPS: [BinOp; 8] = [
    BinOp::And,
    BinOp::Or,
    BinOp::Xor,
    BinOp::Add,
    BinOp::Sub,
    BinOp::Mul,
    BinOp::Shl,
    BinOp::Shr,
];

/// A target's constant materialisation within known bounds: `seq(v)`
/// is the sequence that builds `v` (its value checked on the target's
/// evaluator), and each value of `bounds` takes at most the instructions
/// its group says.
pub fn check_materialize_bounds<I: Debug>(bounds: &[(usize, &[u64])], seq: impl Fn(u64) -> Vec<I>) {
    for &(len, values) in bounds {
        for &v in values {
            let s = seq(v);
            assert!(s.len() <= len, "{v:#x} took {} insns: {s:?}", s.len());
        }
    }
}

/// [`check_materialize_bounds`] for pseudo-random values of the shapes
/// constants have (masks, shifted fields, complements), each within
/// `max_len` instructions.
pub fn check_materialize_random<I: Debug>(max_len: usize, seq: impl Fn(u64) -> Vec<I>) {
    for x in xorshift(0x9e37_79b9_7f4a_7c15).take(10_000) {
        for v in [
            x,
            x >> 20,
            x & 0xffff_0000,
            x << 30,
            !(x >> 40),
            x & 0xffff_0000_ffff,
        ] {
            let s = seq(v);
            assert!(s.len() <= max_len, "{v:#x}: {s:?}");
        }
    }
}
