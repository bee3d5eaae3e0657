//! POWER (ppc64 big-endian ELFv1 and little-endian ELFv2).

pub mod barriers;
pub mod emit;
pub mod insn;
pub mod lower;
pub mod tlb;
