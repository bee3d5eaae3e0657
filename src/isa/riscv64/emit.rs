//! riscv64 code generation (what the driver in `isa::codegen` asks of
//! it: far branches relaxed into veneers before encoding) and the `.S`
//! file template.

use super::encode::{assemble, relax};
use super::insn::Insn;
use super::lower;
use crate::isa::assembler::{Assembled, EncodeError, Label};
use crate::isa::codegen::{newest_arch, Codegen};
use crate::isa::error::LowerError;
use crate::isa::file::FileView;
use crate::isa::style::Style;
use crate::isa::Machine;
use crate::lir::regalloc::Allocation;
use crate::lir::{Func, Origin};

crate::mach_insn!(Insn);

/// Register names are the same in plain and kernel style (the kernel's
/// riscv `.S` files use ABI names), so the style changes only the frame.
impl Codegen for super::Riscv64 {
    type Insn = Insn;
    type Error = EncodeError;
    type Listing = ();

    fn lower(
        &self,
        f: &Func,
        alloc: &Allocation,
        _machine: Machine,
    ) -> Result<Vec<(Insn, Origin)>, LowerError> {
        Ok(lower::lower(f, alloc)?.insns)
    }

    fn relax(
        &self,
        insns: Vec<(Insn, Origin)>,
        next_label: Label,
    ) -> Result<Vec<(Insn, Origin)>, EncodeError> {
        relax(insns, next_label)
    }

    fn assemble(
        &self,
        insns: &[Insn],
        _: &dyn Fn(Label) -> String,
    ) -> Result<(Assembled, ()), EncodeError> {
        Ok((assemble(insns)?, ()))
    }

    fn text(
        &self,
        _: usize,
        insn: &Insn,
        _: &(),
        _: Style,
        label_name: &dyn Fn(Label) -> String,
    ) -> String {
        insn.text(label_name)
    }

    fn needs_arch(&self, insns: &[Insn], _machine: Machine) -> Option<&'static str> {
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
