//! riscv64 code generation: lower, relax far branches, encode, lines.

use super::encode::{assemble, relax};
use super::insn::Insn;
use super::lower;
use crate::isa::error::CodegenError;
use crate::isa::file::FileView;
use crate::isa::mach::{bare, mach_func, MachFunc};
use crate::lir::regalloc::Allocation;
use crate::lir::Func;

crate::mach_insn!(Insn);

/// Register names are the same in plain and kernel style (the kernel's
/// riscv `.S` files use ABI names), so the style changes only the frame.
pub fn codegen(f: &Func, alloc: &Allocation, symbol: &str) -> Result<MachFunc, CodegenError> {
    let lowered = lower::lower(f, alloc)?;
    let insns = relax(lowered.insns, f.nlabels).map_err(CodegenError::encode)?;
    let plain = bare(&insns);
    let asm = assemble(&plain).map_err(CodegenError::encode)?;
    Ok(mach_func(
        symbol,
        &insns,
        asm.bytes,
        &asm.offsets,
        &|_, insn: &Insn, name| insn.text(name),
        plain.iter().find_map(Insn::needs_arch),
    ))
}

#[derive(askama::Template)]
#[template(path = "riscv64.S", escape = "none")]
struct Riscv64File<'a> {
    v: &'a FileView<'a>,
}

/// The whole `.S` file: plain GNU as, or the kernel's `SYM_FUNC_START()`
/// in Linux style.
pub fn render_file(v: &FileView) -> Result<String, askama::Error> {
    crate::isa::file::render_sized(&Riscv64File { v }, v)
}

impl crate::isa::backend::Lowering for super::Riscv64 {
    fn codegen(
        &self,
        f: &Func,
        alloc: &Allocation,
        symbol: &str,
        _style: crate::isa::style::Style,
        _machine: crate::ir::Machine,
    ) -> Result<MachFunc, CodegenError> {
        codegen(f, alloc, symbol)
    }

    fn render_file(&self, v: &FileView) -> Result<String, askama::Error> {
        render_file(v)
    }

    fn reservation_window(&self, width: u32) -> String {
        let w = if width == 64 { "d" } else { "w" };
        format!("lr.{w}/sc.{w}")
    }
}
