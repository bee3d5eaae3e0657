//! x86-64 (SysV).

pub mod barriers;
pub mod emit;
pub mod insn;
pub mod lower;
