//! x86_64 code generation driver: lower, encode, and produce lines.

use super::insn::{assemble, Insn};
use super::lower;
use crate::isa::error::CodegenError;
use crate::isa::file::FileView;
use crate::isa::mach::{bare, label_name, mach_func, MachFunc};
use crate::isa::style::Style;
use crate::lir::regalloc::Allocation;
use crate::lir::Func;

crate::mach_insn!(Insn);

pub fn codegen(
    f: &Func,
    alloc: &Allocation,
    symbol: &str,
    style: Style,
) -> Result<MachFunc, CodegenError> {
    let lowered = lower::lower(f, alloc)?;
    let name = |l: u32| label_name(symbol, l);
    let asm = assemble(&bare(&lowered.insns), &name).map_err(CodegenError::encode)?;
    // The text is iced's, made while encoding (it knows which branches
    // came out short), except that the kernel's RET (linkage.h) is `ret`
    // plus the return-thunk and straight-line-speculation mitigations it
    // is configured with; objtool rejects a bare `ret` in RETHUNK builds.
    // The bytes stay those of a plain `ret`.
    let text = |index: usize, insn: &Insn, _: &dyn Fn(u32) -> String| match (insn, style) {
        (Insn::Ret, Style::Linux) => "RET".to_string(),
        _ => asm.text[index].clone(),
    };
    Ok(mach_func(
        symbol,
        &lowered.insns,
        asm.bytes,
        &asm.offsets,
        &text,
        None,
    ))
}

#[derive(askama::Template)]
#[template(path = "x86_64.S", escape = "none")]
struct X86File<'a> {
    v: &'a FileView<'a>,
}

/// The whole `.S` file: plain GNU as, or the kernel's
/// `SYM_FUNC_START`/`SYM_FUNC_END` in Linux style.
pub fn render_file(v: &FileView) -> Result<String, askama::Error> {
    crate::isa::file::render_sized(&X86File { v }, v)
}

impl crate::isa::backend::Lowering for super::X86_64 {
    fn codegen(
        &self,
        f: &Func,
        alloc: &Allocation,
        symbol: &str,
        style: Style,
        _machine: crate::ir::Machine,
    ) -> Result<MachFunc, CodegenError> {
        codegen(f, alloc, symbol, style)
    }

    fn render_file(&self, v: &FileView) -> Result<String, askama::Error> {
        render_file(v)
    }

    fn reservation_window(&self, _width: u32) -> String {
        "load/lock cmpxchg".into()
    }
}
