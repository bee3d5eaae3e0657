//! aarch64 code generation driver: lower, encode, and produce lines.

use super::insn::{assemble, Insn};
use super::lower;
use crate::isa::error::CodegenError;
use crate::isa::file::FileView;
use crate::isa::mach::{bare, mach_func, MachFunc};
use crate::lir::regalloc::Allocation;
use crate::lir::Func;

crate::mach_insn!(Insn);

pub fn codegen(f: &Func, alloc: &Allocation, symbol: &str) -> Result<MachFunc, CodegenError> {
    let lowered = lower::lower(f, alloc)?;
    let insns = bare(&lowered.insns);
    let asm = assemble(&insns).map_err(CodegenError::encode)?;
    Ok(mach_func(
        symbol,
        &lowered.insns,
        asm.bytes,
        &asm.offsets,
        &|_, insn: &Insn, name| insn.text(name),
        // Architecture levels compare as strings: "armv8.1-a" < "armv8.4-a".
        insns.iter().filter_map(Insn::needs_arch).max(),
    ))
}

#[derive(askama::Template)]
#[template(path = "aarch64.S", escape = "none")]
struct Aarch64File<'a> {
    v: &'a FileView<'a>,
}

/// The whole `.S` file: plain GNU as, or the kernel's `SYM_FUNC_START()`
/// in Linux style.
pub fn render_file(v: &FileView) -> Result<String, askama::Error> {
    crate::isa::file::render_sized(&Aarch64File { v }, v)
}

impl crate::isa::backend::Lowering for super::Aarch64 {
    fn codegen(
        &self,
        f: &Func,
        alloc: &Allocation,
        symbol: &str,
        // GNU as and the kernel's linkage.h agree on register names (x0,
        // not %x0): the style changes only the file frame.
        _style: crate::isa::style::Style,
        _machine: crate::ir::Machine,
    ) -> Result<MachFunc, crate::isa::error::CodegenError> {
        codegen(f, alloc, symbol)
    }

    fn render_file(&self, v: &crate::isa::file::FileView) -> Result<String, askama::Error> {
        render_file(v)
    }

    fn reservation_window(&self, width: u32) -> String {
        let a = match width {
            8 => "b",
            16 => "h",
            _ => "",
        };
        format!("ldaxr{a}/stxr{a}")
    }
}
