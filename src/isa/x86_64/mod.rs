//! x86-64 (SysV).

pub mod barriers;
pub mod emit;
#[cfg(feature = "emu")]
mod emu;
pub mod insn;
pub mod litmus;
pub mod lower;
mod mem;
mod oracles;
mod syntax;

use super::backend::{Described, Description};

pub struct X86_64;

pub static BACKEND: X86_64 = X86_64;

static DESCRIPTION: Description = Description {
    name: "x86_64",
    triple: "x86_64-linux-gnu",
    regs: &lower::REGS,
    barriers: barriers::TABLE,
    implicit: barriers::implicit,
    branch_compares_registers: false,
    words: &syntax::WORDS,
    set_cmp: false,
};

impl Described for X86_64 {
    fn description(&self) -> &Description {
        &DESCRIPTION
    }
}
