//! POWER (ppc64 big-endian ELFv1 and little-endian ELFv2).

pub mod barriers;
pub mod book3e;
mod constants;
pub mod emit;
#[cfg(feature = "emu")]
mod emu;
pub mod insn;
pub mod litmus;
pub mod lower;
mod peephole;
mod syntax;
pub mod tlb;

use super::backend::{Backend, Description};
use super::barriers::{Barrier, BarrierKind};
use super::invalidation::Invalidation;
use super::mach::MachFunc;
use super::mach::{branch_flow, capstone_target, Flow};
use super::{Machine, Target};
use crate::ir::feature::Patching;
use crate::ir::order::Class;
use crate::isa::file::FileView;
use crate::isa::style::Style;
use crate::lir::regalloc::Allocation;
use crate::lir::Func;

/// ppc64: `le` selects little-endian ELFv2, else big-endian ELFv1.
pub struct Power {
    pub le: bool,
    description: Description,
}

pub static BE: Power = Power {
    le: false,
    description: description("power64", "powerpc64-linux-gnu"),
};
pub static LE: Power = Power {
    le: true,
    description: description("power64le", "powerpc64le-linux-gnu"),
};

/// The two byte orders share registers and memory model.
const fn description(name: &'static str, triple: &'static str) -> Description {
    Description {
        name,
        triple,
        regs: &lower::REGS,
        barriers: barriers::TABLE,
        implicit: barriers::implicit,
        set_cmp: false,
    }
}

impl Power {
    fn target(&self) -> Target {
        if self.le {
            Target::Power64le
        } else {
            Target::Power64
        }
    }
}

impl Backend for Power {
    fn litmus(&self) -> &'static dyn crate::isa::litmus::Dialect {
        &litmus::Litmus
    }
    fn decode_invalidation(&self, insn: &str, operands: &[u64]) -> Option<String> {
        tlb::decode(insn, operands)
    }

    fn description(&self) -> &Description {
        &self.description
    }

    fn big_endian(&self) -> bool {
        !self.le
    }
    /// `ldbrx`/`stdbrx` and the narrower forms are X-form only.
    fn swap_is_indexed(&self) -> bool {
        true
    }

    fn codegen(
        &self,
        f: &Func,
        alloc: &Allocation,
        symbol: &str,
        style: Style,
        machine: Machine,
    ) -> Result<MachFunc, crate::isa::error::CodegenError> {
        emit::codegen(f, alloc, self.target(), symbol, style, machine)
    }

    fn render_file(&self, v: &FileView) -> Result<String, askama::Error> {
        emit::render_file(self.target(), v)
    }

    fn has_machines(&self) -> bool {
        true
    }

    fn invalidate_class(&self, mnemonic: &str) -> Option<Class> {
        match mnemonic {
            // Book III-E tlbilx: this CPU only, complete after msync;
            // isync (objdump spells it `tlbilxva`, `tlbilxpid`,
            // `tlbilxlpid`).
            "tlbiel" => Some(Class::LocalInvalidate),
            m if m.starts_with("tlbilx") => Some(Class::LocalInvalidate),
            // Writing an entry drops whatever translation it held, on this
            // CPU: complete after `msync; isync` as a tlbilx (Linux 6.1
            // tlb_low.S e500 `__tlbil_va`: "tlbwe; msync; isync").
            "tlbwe" => Some(Class::LocalInvalidate),
            "slbia" => Some(Class::EratInvalidate),
            _ => None,
        }
    }

    /// `via tlbie 2, 1, 1`: the parser has folded RIC, PRS and R.
    fn via_insn(&self, name: &str) -> bool {
        name.starts_with("tlbie ") || name.starts_with("tlbiel ")
    }

    fn invalidation(
        &self,
        machine: Machine,
        name: &str,
        n: usize,
    ) -> Result<Invalidation, crate::ir::isa::InvalidationError> {
        book3e::invalidation(machine, name, n)
    }

    fn spr(&self, machine: Machine, name: &str) -> Result<crate::ir::Spr, crate::ir::SprError> {
        book3e::spr(machine, name)
    }

    fn patches(&self, p: Patching) -> bool {
        matches!(p, Patching::PowerCpuFtr | Patching::PowerMmuFtr)
    }

    fn table(&self, machine: Machine) -> &'static [BarrierKind] {
        match machine {
            Machine::E6500 => book3e::TABLE,
            Machine::Book3s => barriers::TABLE,
        }
    }

    // A release is a plain store after the default release barrier:
    // `lwsync` (`sync` after device accesses).

    /// `isync` after the branch-dependent store-conditional (Book II
    /// B.2.1.1, "Acquire Lock").
    fn acquire_barrier(&self, machine: Machine) -> Option<Barrier> {
        Some(Barrier::named(self.table(machine), "isync"))
    }

    fn reservation_window(&self, width: u32) -> String {
        let c = match width {
            8 => "b",
            16 => "h",
            32 => "w",
            _ => "d",
        };
        format!("l{c}arx/st{c}cx.")
    }

    /// ELFv1: the global symbol names the .opd descriptor; code is at the
    /// dot symbol.
    fn code_symbol(&self, symbol: &str) -> String {
        if self.le {
            symbol.to_string()
        } else {
            format!(".{symbol}")
        }
    }

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

    #[cfg(feature = "emu")]
    fn emu(&self) -> &dyn crate::emu::EmuTarget {
        self
    }
}
