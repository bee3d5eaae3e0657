//! RISC-V RV64 (LP64, RV64GC without compressed forms; Svinval).
//!
//! Cut like the other targets: `regs` (registers, typed immediates),
//! `insn` (instructions and their text), `encode` (machine code, branch
//! relaxation), `lower` (LIR -> instructions, ABI), `barriers` (the RVWMO
//! table), `emit` (the driver and the file template).

pub mod barriers;
pub mod decode;
pub mod emit;
#[cfg(feature = "emu")]
mod emu;
pub mod encode;
pub mod insn;
pub mod litmus;
pub mod lower;
pub mod regs;
mod syntax;

use super::backend::{Backend, Description};
use super::barriers::Barrier;
use super::invalidation::Invalidation;
use super::mach::MachFunc;
use super::mach::{branch_flow, Flow};
use super::Machine;
use crate::ir::feature::Patching;
use crate::ir::order::Class;
use crate::isa::file::FileView;
use crate::isa::style::Style;
use crate::lir::regalloc::Allocation;
use crate::lir::Func;

pub struct Riscv64;

pub static BACKEND: Riscv64 = Riscv64;

static DESCRIPTION: Description = Description {
    name: "riscv64",
    triple: "riscv64-linux-gnu",
    regs: &lower::REGS,
    barriers: barriers::TABLE,
    implicit: barriers::implicit,
    set_cmp: true,
};

impl Backend for Riscv64 {
    fn litmus(&self) -> &'static dyn crate::isa::litmus::Dialect {
        &litmus::Litmus
    }
    fn decode_invalidation(&self, insn: &str, operands: &[u64]) -> Option<String> {
        decode::invalidation(insn, operands)
    }

    fn description(&self) -> &Description {
        &DESCRIPTION
    }

    fn codegen(
        &self,
        f: &Func,
        alloc: &Allocation,
        symbol: &str,
        _style: Style,
        _machine: Machine,
    ) -> Result<MachFunc, crate::isa::error::CodegenError> {
        emit::codegen(f, alloc, symbol)
    }

    fn render_file(&self, v: &FileView) -> Result<String, askama::Error> {
        emit::render_file(v)
    }

    /// Svinval's `sinval.vma` is ordered only by `sfence.w.inval` /
    /// `sfence.inval.ir`, this hart only, like POWER's tlbiel.
    /// (`sfence.vma` orders itself: the default class, with this target's
    /// implicit orders.)
    fn invalidate_class(&self, mnemonic: &str) -> Option<Class> {
        (mnemonic == "sinval.vma").then_some(Class::LocalInvalidate)
    }

    /// `sfence.vma` / `sinval.vma`, with ` x0` for a whole ASID.
    fn via_insn(&self, name: &str) -> bool {
        name.starts_with("sfence.vma") || name.starts_with("sinval.vma")
    }

    fn invalidation(
        &self,
        _machine: Machine,
        name: &str,
        n: usize,
    ) -> Result<Invalidation, crate::ir::isa::InvalidationError> {
        lower::invalidation(name, n)
    }

    /// Linux's riscv ISA-extension alternatives are not modelled: a
    /// riscv64 feature is a run-time bit of the feature word.
    fn patches(&self, _p: Patching) -> bool {
        false
    }

    // A release is a plain store after the default release barrier, the
    // cheapest fence that orders what the critical section did before it
    // (Linux's RISCV_RELEASE_BARRIER is `fence rw,w`; device accesses need
    // I/O in the predecessor set).

    /// LR.aq orders the lock's load before later memory accesses, but
    /// not before device (I/O) accesses: `fence r,iorw` after the taken
    /// lock does.
    fn acquire_barrier(&self, _machine: Machine) -> Option<Barrier> {
        Some(Barrier::named(barriers::TABLE, "fence r,iorw"))
    }

    fn reservation_window(&self, width: u32) -> String {
        let w = if width == 64 { "d" } else { "w" };
        format!("lr.{w}/sc.{w}")
    }

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

    #[cfg(feature = "emu")]
    fn emu(&self) -> &dyn crate::emu::EmuTarget {
        self
    }
}
