//! aarch64 code generation (what the driver in `isa::codegen` asks of
//! it) and the `.S` file template.

use super::insn::{assemble, Insn};
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

/// GNU as and the kernel's linkage.h agree on register names (x0, not
/// %x0): the style changes only the file frame.
impl Codegen for super::Aarch64 {
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
#[template(path = "aarch64.S", escape = "none")]
struct Aarch64File<'a> {
    v: &'a FileView<'a>,
}

impl crate::isa::backend::Lowering for super::Aarch64 {
    /// The whole `.S` file: plain GNU as, or the kernel's
    /// `SYM_FUNC_START()` in Linux style.
    fn render_file(&self, v: &FileView) -> Result<String, askama::Error> {
        crate::isa::file::render_sized(&Aarch64File { v }, v)
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
