//! What the checks need to read AArch64 code back: capstone, its
//! aliases and branches, the trace's TLBI decoding, herd7's dialect and
//! the emulator.

use crate::isa::backend::Oracles;
use crate::isa::mach::{branch_flow, Flow};

impl Oracles for super::Aarch64 {
    fn disassembler(&self) -> capstone::CsResult<capstone::Capstone> {
        use capstone::prelude::*;
        Capstone::new()
            .arm64()
            .mode(arch::arm64::ArchMode::Arm)
            .build()
    }

    fn capstone_flow(&self, m: &str, ops: &str, at: u64) -> Flow {
        match m {
            "ret" => Flow::Return,
            "b" => branch_flow(ops, at, false, false),
            "cbz" | "cbnz" | "tbz" | "tbnz" => branch_flow(ops, at, false, true),
            _ if m.starts_with("b.") => branch_flow(ops, at, false, true),
            "br" | "blr" | "bl" => Flow::Unknown,
            _ => Flow::Next,
        }
    }

    fn capstone_aliases(&self) -> &'static [(&'static str, &'static [&'static str])] {
        &[
            ("movz", &["mov"]),
            ("movn", &["mov"]),
            ("orr", &["mov"]),
            ("ubfm", &["lsl", "lsr", "ubfiz", "ubfx"]),
            ("ubfiz", &["lsl", "ubfx"]),
            ("lsl", &["ubfiz", "lsr"]),
            ("subs", &["cmp"]),
            ("sub", &["neg"]),
            ("orn", &["mvn"]),
        ]
    }

    fn decode_invalidation(&self, insn: &str, operands: &[u64]) -> Option<String> {
        super::decode::tlbi(insn, operands)
    }

    fn litmus(&self) -> &'static dyn crate::isa::litmus::Dialect {
        &super::litmus::LITMUS
    }

    #[cfg(feature = "emu")]
    fn emu(&self) -> &dyn crate::emu::EmuTarget {
        self
    }
}
