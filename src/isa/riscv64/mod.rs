//! RISC-V RV64 (LP64, RV64GC without compressed forms; Svinval).
//!
//! Cut like the other targets: `insn` (instructions; in it `regs`,
//! `imms` (typed immediates), `text` and `encode` (machine code, branch
//! relaxation)), `lower` (LIR -> instructions, ABI) and `mem` (its loads,
//! stores, spills and reservations), `barriers` (the RVWMO table and
//! memory model), `emit` (what the code generation driver asks of the
//! target, and the file template), `syntax` (how a spec writes its
//! instructions), `oracles` (capstone, litmus, emulator).

pub mod barriers;
pub mod decode;
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

pub struct Riscv64;

pub static BACKEND: Riscv64 = Riscv64;

static DESCRIPTION: Description = Description {
    name: "riscv64",
    triple: "riscv64-linux-gnu",
    regs: &lower::REGS,
    barriers: barriers::TABLE,
    implicit: barriers::implicit,
    branch_compares_registers: true,
    words: &syntax::WORDS,
    set_cmp: true,
};

impl Described for Riscv64 {
    fn description(&self) -> &Description {
        &DESCRIPTION
    }
}
