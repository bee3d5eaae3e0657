//! aarch64 code generation (what the driver in `isa::codegen` asks of
//! it) and the `.S` file template.

use super::insn::{assemble, Insn};
use super::lower;
use crate::isa::assembler::EncodeError;
use crate::isa::codegen::{newest_arch, Code, Codegen, Insns, LabelName};
use crate::isa::error::LowerError;
use crate::isa::file::FileView;
use crate::isa::style::Style;
use crate::isa::Machine;
use crate::lir::regalloc::Allocation;
use crate::lir::Func;

crate::mach_insn!(Insn);

/// GNU as and the kernel's linkage.h agree on register names (x0, not
/// %x0): the style changes only the file frame.
impl Codegen for super::Aarch64 {
    type Insn = Insn;
    type Error = EncodeError;

    fn lower(&self, f: &Func, alloc: &Allocation, _: Machine) -> Result<Insns<Insn>, LowerError> {
        Ok(lower::lower(f, alloc)?.insns)
    }

    fn assemble(&self, insns: &[Insn], _: Style, name: LabelName) -> Result<Code, EncodeError> {
        Ok(Code::printed(assemble(insns)?, insns, |i| i.text(name)))
    }

    fn needs_arch(&self, insns: &[Insn], _: Machine) -> Option<&'static str> {
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
