//! x86_64 code generation (what the driver in `isa::codegen` asks of
//! it: iced assembles and prints the whole function) and the `.S` file
//! template.

use super::insn::{assemble, EncodeError, Insn};
use super::lower;
use crate::isa::assembler::{Assembled, Label};
use crate::isa::codegen::Codegen;
use crate::isa::error::LowerError;
use crate::isa::file::FileView;
use crate::isa::style::Style;
use crate::isa::Machine;
use crate::lir::regalloc::Allocation;
use crate::lir::{Func, Origin};

crate::mach_insn!(Insn);

impl Codegen for super::X86_64 {
    type Insn = Insn;
    type Error = EncodeError;
    /// Each instruction's text as iced printed it while encoding.
    type Listing = Vec<String>;

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
        label_name: &dyn Fn(Label) -> String,
    ) -> Result<(Assembled, Vec<String>), EncodeError> {
        let asm = assemble(insns, label_name)?;
        let code = Assembled {
            bytes: asm.bytes,
            offsets: asm.offsets,
        };
        Ok((code, asm.text))
    }

    /// The text is iced's, made while encoding (it knows which branches
    /// came out short), except that the kernel's RET (linkage.h) is `ret`
    /// plus the return-thunk and straight-line-speculation mitigations it
    /// is configured with; objtool rejects a bare `ret` in RETHUNK builds.
    /// The bytes stay those of a plain `ret`.
    fn text(
        &self,
        index: usize,
        insn: &Insn,
        text: &Vec<String>,
        style: Style,
        _: &dyn Fn(Label) -> String,
    ) -> String {
        match (insn, style) {
            (Insn::Ret, Style::Linux) => "RET".to_string(),
            _ => text[index].clone(),
        }
    }
}

#[derive(askama::Template)]
#[template(path = "x86_64.S", escape = "none")]
struct X86File<'a> {
    v: &'a FileView<'a>,
}

impl crate::isa::backend::Lowering for super::X86_64 {
    /// The whole `.S` file: plain GNU as, or the kernel's
    /// `SYM_FUNC_START`/`SYM_FUNC_END` in Linux style.
    fn render_file(&self, v: &FileView) -> Result<String, askama::Error> {
        crate::isa::file::render_sized(&X86File { v }, v)
    }

    fn reservation_window(&self, _width: u32) -> String {
        "load/lock cmpxchg".into()
    }
}
