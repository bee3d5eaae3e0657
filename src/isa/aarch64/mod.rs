//! AArch64 (AAPCS64).

pub mod barriers;
mod constants;
pub mod decode;
pub mod emit;
#[cfg(feature = "emu")]
mod emu;
pub mod insn;
pub mod litmus;
pub mod lower;
mod oracles;
mod syntax;

use super::backend::{Described, Description};

pub struct Aarch64;

pub static BACKEND: Aarch64 = Aarch64;

static DESCRIPTION: Description = Description {
    name: "aarch64",
    triple: "aarch64-linux-gnu",
    regs: &lower::REGS,
    barriers: barriers::TABLE,
    implicit: barriers::implicit,
    branch_compares_registers: false,
    words: &syntax::WORDS,
    set_cmp: true,
};

impl Described for Aarch64 {
    fn description(&self) -> &Description {
        &DESCRIPTION
    }
}
