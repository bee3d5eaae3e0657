//! What the checks need to read RISC-V code back: capstone, LLVM's
//! aliases, branches relative to the branch, the trace's sfence/sinval
//! decoding, herd7's dialect and the emulator.

use crate::isa::backend::Oracles;
use crate::isa::mach::{branch_flow, Flow};

impl Oracles for super::Riscv64 {
    fn disassembler(&self) -> capstone::CsResult<capstone::Capstone> {
        use capstone::prelude::*;
        Capstone::new()
            .riscv()
            .mode(arch::riscv::ArchMode::RiscV64)
            .build()
    }

    fn capstone_flow(&self, m: &str, ops: &str, at: u64) -> Flow {
        // Capstone prints RISC-V branch targets relative to the branch.
        match m {
            "ret" => Flow::Return,
            "j" => branch_flow(ops, at, true, false),
            "jal" | "jalr" | "jr" | "call" | "tail" => Flow::Unknown,
            "beq" | "bne" | "blt" | "bge" | "bltu" | "bgeu" | "beqz" | "bnez" | "blez" | "bgez"
            | "bltz" | "bgtz" | "bgt" | "ble" | "bgtu" | "bleu" => branch_flow(ops, at, true, true),
            _ => Flow::Next,
        }
    }

    /// LLVM's aliases (tests/riscv64_capstone.rs pins each).
    fn capstone_aliases(&self) -> &'static [(&'static str, &'static [&'static str])] {
        &[
            ("addi", &["nop", "mv"]),
            ("addiw", &["sext.w"]),
            ("xori", &["not"]),
            ("sub", &["neg"]),
            ("beq", &["beqz"]),
            ("bne", &["bnez"]),
            ("blt", &["bltz", "bgtz"]),
            ("bge", &["bgez", "blez"]),
        ]
    }

    /// Capstone 5 does not decode Svinval (tests/riscv64_capstone.rs).
    fn capstone_gap(&self, mnemonic: &str) -> bool {
        matches!(
            mnemonic,
            "sinval.vma" | "sfence.w.inval" | "sfence.inval.ir"
        )
    }

    fn decode_invalidation(&self, insn: &str, operands: &[u64]) -> Option<String> {
        super::decode::invalidation(insn, operands)
    }

    fn litmus(&self) -> &'static dyn crate::isa::litmus::Dialect {
        &super::litmus::LITMUS
    }

    #[cfg(feature = "emu")]
    fn emu(&self) -> &dyn crate::emu::EmuTarget {
        self
    }
}
