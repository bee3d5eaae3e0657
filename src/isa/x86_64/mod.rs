//! x86-64 (SysV).

pub mod barriers;
pub mod emit;
#[cfg(feature = "emu")]
mod emu;
pub mod insn;
pub mod litmus;
pub mod lower;
mod mem;
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

pub struct X86_64;

pub static BACKEND: X86_64 = X86_64;

static DESCRIPTION: Description = Description {
    name: "x86_64",
    triple: "x86_64-linux-gnu",
    regs: &lower::REGS,
    barriers: barriers::TABLE,
    implicit: barriers::implicit,
    set_cmp: false,
};

impl Backend for X86_64 {
    fn litmus(&self) -> &'static dyn crate::isa::litmus::Dialect {
        &litmus::Litmus
    }

    fn description(&self) -> &Description {
        &DESCRIPTION
    }

    fn codegen(
        &self,
        f: &Func,
        alloc: &Allocation,
        symbol: &str,
        style: Style,
        _machine: Machine,
    ) -> Result<MachFunc, crate::isa::error::CodegenError> {
        emit::codegen(f, alloc, symbol, style)
    }

    fn render_file(&self, v: &FileView) -> Result<String, askama::Error> {
        emit::render_file(v)
    }

    fn invalidation(
        &self,
        _machine: Machine,
        name: &str,
        n: usize,
    ) -> Result<Invalidation, crate::ir::isa::InvalidationError> {
        lower::invalidation(name, n)
    }

    /// No boot-time patching of ours on x86-64.
    fn patches(&self, _p: Patching) -> bool {
        false
    }

    /// Stores are ordered among themselves, UC included (TSO).
    fn release_barrier(&self, _machine: Machine, _order: ReleaseOrder) -> Option<Barrier> {
        None
    }

    /// Acquired with `lock cmpxchg`.
    fn acquire_barrier(&self, _machine: Machine) -> Option<Barrier> {
        None
    }

    fn reservation_window(&self, _width: u32) -> String {
        "load/lock cmpxchg".into()
    }

    /// TSO keeps loads in order.
    fn reload_barrier(&self, _machine: Machine) -> Option<Barrier> {
        None
    }

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

    #[cfg(feature = "emu")]
    fn emu(&self) -> &dyn crate::emu::EmuTarget {
        self
    }
}
