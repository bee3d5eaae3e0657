//! POWER code generation driver: lower, encode, and produce lines.

use super::insn::{assemble, Insn, RegStyle};
use super::lower;
use crate::isa::error::CodegenError;
use crate::isa::file::FileView;
use crate::isa::mach::{bare, mach_func, MachFunc};
use crate::isa::style::Style;
use crate::isa::{Machine, Target};
use crate::lir::regalloc::Allocation;
use crate::lir::Func;

crate::mach_insn!(Insn);

pub fn codegen(
    f: &Func,
    alloc: &Allocation,
    target: Target,
    symbol: &str,
    style: Style,
    machine: Machine,
) -> Result<MachFunc, CodegenError> {
    // Linux's ppc_asm.h defines r3 etc. as %r3; plain GNU as needs %r3.
    let style = match style {
        Style::Plain => RegStyle::Percent,
        Style::Linux => RegStyle::Bare,
    };
    let lowered = lower::lower(f, alloc, target, machine)?;
    let asm = assemble(&bare(&lowered.insns), target.big_endian()).map_err(CodegenError::encode)?;
    Ok(mach_func(
        symbol,
        &lowered.insns,
        asm.bytes,
        &asm.offsets,
        &|_, insn: &Insn, name| insn.text(style, name),
        Some(match machine {
            Machine::Book3s => "power9",
            Machine::E6500 => "e6500",
        }),
    ))
}

#[derive(askama::Template)]
#[template(path = "power.S", escape = "none")]
struct PowerFile<'a> {
    v: &'a FileView<'a>,
    elfv2: bool,
}

/// The whole `.S` file: ELFv1 function descriptors on big-endian, ELFv2
/// on little-endian, or the kernel's `_GLOBAL()` in Linux style.
pub fn render_file(target: Target, v: &FileView) -> Result<String, askama::Error> {
    crate::isa::file::render_sized(
        &PowerFile {
            v,
            elfv2: target == Target::Power64le,
        },
        v,
    )
}

impl crate::isa::backend::Lowering for super::Power {
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
    ) -> Result<MachFunc, CodegenError> {
        codegen(f, alloc, self.target(), symbol, style, machine)
    }

    fn render_file(&self, v: &FileView) -> Result<String, askama::Error> {
        render_file(self.target(), v)
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
}
