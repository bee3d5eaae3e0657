//! riscv64 code generation (what the driver in `isa::codegen` asks of
//! it: far branches relaxed into veneers before encoding) and the `.S`
//! file template.

use super::insn::{assemble, relax};
use super::insn::Insn;
use super::lower;
use crate::isa::assembler::{EncodeError, Label};
use crate::isa::codegen::{newest_arch, Code, Codegen, Insns, LabelName};
use crate::isa::error::LowerError;
use crate::isa::file::FileView;
use crate::isa::style::Style;
use crate::isa::Machine;
use crate::lir::regalloc::Allocation;
use crate::lir::Func;

crate::mach_insn!(Insn);

/// Register names are the same in plain and kernel style (the kernel's
/// riscv `.S` files use ABI names), so the style changes only the frame.
impl Codegen for super::Riscv64 {
    type Insn = Insn;
    type Error = EncodeError;

    fn lower(&self, f: &Func, alloc: &Allocation, _: Machine) -> Result<Insns<Insn>, LowerError> {
        Ok(lower::lower(f, alloc)?.insns)
    }

    fn relax(&self, insns: Insns<Insn>, next_label: Label) -> Result<Insns<Insn>, EncodeError> {
        relax(insns, next_label)
    }

    fn assemble(&self, insns: &[Insn], _: Style, name: LabelName) -> Result<Code, EncodeError> {
        Ok(Code::printed(assemble(insns)?, insns, |i| i.text(name)))
    }

    fn needs_arch(&self, insns: &[Insn], _: Machine) -> Option<&'static str> {
        newest_arch(insns, Insn::needs_arch)
    }
}

#[derive(askama::Template)]
#[template(path = "riscv64.S", escape = "none")]
struct Riscv64File<'a> {
    v: &'a FileView<'a>,
}

impl crate::isa::backend::Lowering for super::Riscv64 {
    /// The whole `.S` file: plain GNU as, or the kernel's
    /// `SYM_FUNC_START()` in Linux style.
    fn render_file(&self, v: &FileView) -> Result<String, askama::Error> {
        crate::isa::file::render_sized(&Riscv64File { v }, v)
    }

    fn reservation_window(&self, width: u32) -> String {
        let w = if width == 64 { "d" } else { "w" };
        format!("lr.{w}/sc.{w}")
    }
}
