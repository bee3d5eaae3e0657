//! What the checks need to read x86-64 code back: capstone (AT&T, as
//! GNU as reads our text), its branches, herd7's dialect and the
//! emulator.

use crate::isa::backend::Oracles;
use crate::isa::mach::{branch_flow, Flow};

impl Oracles for super::X86_64 {
    fn disassembler(&self) -> capstone::CsResult<capstone::Capstone> {
        use capstone::prelude::*;
        Capstone::new()
            .x86()
            .mode(arch::x86::ArchMode::Mode64)
            .syntax(arch::x86::ArchSyntax::Att)
            .build()
    }

    fn capstone_flow(&self, m: &str, ops: &str, at: u64) -> Flow {
        match m {
            "ret" | "retq" => Flow::Return,
            "jmp" | "jmpq" => branch_flow(ops, at, false, false),
            "call" | "callq" => Flow::Unknown,
            m if m.starts_with('j') || m.starts_with("loop") => branch_flow(ops, at, false, true),
            _ => Flow::Next,
        }
    }

    fn fixed_insn_len(&self) -> Option<usize> {
        None
    }

    fn capstone_size_suffixes(&self) -> bool {
        true
    }

    fn litmus(&self) -> &'static dyn crate::isa::litmus::Dialect {
        &super::litmus::LITMUS
    }

    #[cfg(feature = "emu")]
    fn emu(&self) -> &dyn crate::emu::EmuTarget {
        self
    }
}
