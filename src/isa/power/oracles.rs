//! What the checks need to read POWER code back: capstone in either byte
//! order, its aliases and branches, the instructions it cannot decode, the
//! trace's tlbie decoding, herd7's dialect and the emulator.

use crate::isa::backend::Oracles;
use crate::isa::mach::{branch_flow, capstone_target, Flow};

impl Oracles for super::Power {
    fn disassembler(&self) -> capstone::CsResult<capstone::Capstone> {
        use capstone::prelude::*;
        Capstone::new()
            .ppc()
            .mode(arch::ppc::ArchMode::Mode64)
            .endian(if self.le {
                capstone::Endian::Little
            } else {
                capstone::Endian::Big
            })
            .build()
    }

    fn capstone_flow(&self, m: &str, ops: &str, at: u64) -> Flow {
        // Branch hints print as a `+`/`-` suffix.
        match m.trim_end_matches(['+', '-']) {
            "blr" => Flow::Return,
            "b" | "ba" => branch_flow(ops, at, false, false),
            "bl" | "bla" | "blrl" | "bctr" | "bctrl" | "bcctr" | "bcctrl" => Flow::Unknown,
            m if m.starts_with('b') && m.ends_with("lr") => Flow::CondReturn,
            m if m.starts_with('b') && m.ends_with("ctr") => Flow::Unknown,
            // Conditional branches end with their target; `brd`,
            // `bpermd` (not branches) end with a register.
            m if m.starts_with('b') && capstone_target(ops).is_some() => {
                branch_flow(ops, at, false, true)
            }
            _ => Flow::Next,
        }
    }

    fn capstone_aliases(&self) -> &'static [(&'static str, &'static [&'static str])] {
        &[
            ("rldicr", &["sldi", "clrrdi"]),
            ("rldicl", &["srdi", "clrldi", "rotldi", "extrdi"]),
            ("rldic", &["clrlsldi"]),
            (
                "rlwinm",
                &[
                    "slwi", "srwi", "clrlwi", "clrrwi", "rotlwi", "rotrwi", "extlwi", "extrwi",
                    "clrlslwi",
                ],
            ),
            ("addi", &["li", "subi", "la"]),
            ("addis", &["lis", "subis"]),
            ("li", &["addi"]),
            ("ori", &["nop"]),
            ("or", &["mr"]),
            ("mr", &["or"]),
            ("nor", &["not"]),
            ("subf", &["sub"]),
            ("cmpdi", &["cmpdi"]),
            ("sync", &["hwsync", "msync"]),
            ("eieio", &["mbar"]),
            ("cpabort", &["cp_abort"]),
            // Book E names of the same words.
            ("msync", &["sync"]),
            ("mbar", &["eieio"]),
        ]
    }

    /// Radix `tlbie`/`tlbiel` with nonzero RIC/PRS/R, `slbia` with an IH
    /// operand and Book III-E `tlbilx` (tests/power_capstone.rs).
    fn capstone_gap(&self, mnemonic: &str) -> bool {
        matches!(mnemonic, "tlbie" | "tlbiel" | "slbia" | "tlbilx")
    }

    fn decode_invalidation(&self, insn: &str, operands: &[u64]) -> Option<String> {
        super::tlb::decode(insn, operands)
    }

    fn litmus(&self) -> &'static dyn crate::isa::litmus::Dialect {
        &super::litmus::LITMUS
    }

    #[cfg(feature = "emu")]
    fn emu(&self) -> &dyn crate::emu::EmuTarget {
        self
    }
}
