//! AArch64 (AAPCS64).

pub mod barriers;
pub mod emit;
pub mod insn;
pub mod lower;
