//! x86-64 (SysV).

pub mod barriers;
pub mod emit;
#[cfg(feature = "emu")]
mod emu;
pub mod insn;
pub mod lower;

use super::backend::Backend;
use super::barriers::{Barrier, BarrierKind};
use super::invalidation::Invalidation;
use super::mach::MachFunc;
use super::Machine;
use crate::codegen::Style;
use crate::emit::asm::FileView;
use crate::features::Patching;
use crate::ir::order::Class;
use crate::ir::ReleaseOrder;
use crate::lir::regalloc::{Allocation, RegFile};
use crate::lir::Func;

pub struct X86_64;

pub static BACKEND: X86_64 = X86_64;

impl Backend for X86_64 {
    fn name(&self) -> &'static str {
        "x86_64"
    }

    fn triple(&self) -> &'static str {
        "x86_64-linux-gnu"
    }

    fn regfile(&self) -> &'static RegFile {
        &lower::REGS
    }

    fn codegen(
        &self,
        f: &Func,
        alloc: &Allocation,
        symbol: &str,
        style: Style,
        _machine: Machine,
    ) -> Result<MachFunc, String> {
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
    ) -> Result<Invalidation, String> {
        lower::invalidation(name, n)
    }

    /// No boot-time patching of ours on x86-64.
    fn patches(&self, _p: Patching) -> bool {
        false
    }

    fn table(&self, _machine: Machine) -> &'static [BarrierKind] {
        barriers::TABLE
    }

    fn orders_implicitly(&self, from: Class, to: Class, same_strong_device: bool) -> bool {
        barriers::implicit(from, to, same_strong_device)
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

    fn disassembler(&self) -> Result<capstone::Capstone, String> {
        use capstone::prelude::*;
        Capstone::new()
            .x86()
            .mode(arch::x86::ArchMode::Mode64)
            .syntax(arch::x86::ArchSyntax::Att)
            .build()
            .map_err(|e| e.to_string())
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
