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
mod syntax;

use super::backend::{Backend, Description};
use super::barriers::Barrier;
use super::invalidation::Invalidation;
use super::mach::MachFunc;
use super::mach::{branch_flow, Flow};
use super::Machine;
use crate::ir::feature::Patching;
use crate::ir::ReleaseOrder;
use crate::isa::file::FileView;
use crate::isa::style::Style;
use crate::lir::regalloc::Allocation;
use crate::lir::Func;

pub struct Aarch64;

pub static BACKEND: Aarch64 = Aarch64;

static DESCRIPTION: Description = Description {
    name: "aarch64",
    triple: "aarch64-linux-gnu",
    regs: &lower::REGS,
    barriers: barriers::TABLE,
    implicit: barriers::implicit,
    set_cmp: true,
};

impl Backend for Aarch64 {
    fn litmus(&self) -> &'static dyn crate::isa::litmus::Dialect {
        &litmus::Litmus
    }
    fn decode_invalidation(&self, insn: &str, operands: &[u64]) -> Option<String> {
        decode::tlbi(insn, operands)
    }

    fn description(&self) -> &Description {
        &DESCRIPTION
    }

    fn codegen(
        &self,
        f: &Func,
        alloc: &Allocation,
        symbol: &str,
        // GNU as and the kernel's linkage.h agree on register names (x0,
        // not %x0): the style changes only the file frame.
        _style: Style,
        _machine: Machine,
    ) -> Result<MachFunc, crate::isa::error::CodegenError> {
        emit::codegen(f, alloc, symbol)
    }

    fn render_file(&self, v: &FileView) -> Result<String, askama::Error> {
        emit::render_file(v)
    }

    fn via_insn(&self, name: &str) -> bool {
        name.starts_with("tlbi ")
    }

    fn invalidation(
        &self,
        _machine: Machine,
        name: &str,
        n: usize,
    ) -> Result<Invalidation, crate::ir::isa::InvalidationError> {
        lower::invalidation(name, n)
    }

    fn patches(&self, p: Patching) -> bool {
        p == Patching::Arm64Alternative
    }

    /// `stlr` orders every earlier explicit access, Device memory
    /// included (Arm ARM B2.3.7; Linux arm64 has no `mmiowb` for this
    /// reason): no barrier.
    fn release_barrier(&self, _machine: Machine, _order: ReleaseOrder) -> Option<Barrier> {
        None
    }

    /// Acquired with `ldaxr`.
    fn acquire_barrier(&self, _machine: Machine) -> Option<Barrier> {
        None
    }

    fn reservation_window(&self, width: u32) -> String {
        let a = match width {
            8 => "b",
            16 => "h",
            _ => "",
        };
        format!("ldaxr{a}/stxr{a}")
    }

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

    #[cfg(feature = "emu")]
    fn emu(&self) -> &dyn crate::emu::EmuTarget {
        self
    }
}
