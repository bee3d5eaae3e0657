//! x86_64 code generation (what the driver in `isa::codegen` asks of
//! it: iced assembles and prints the whole function) and the `.S` file
//! template.

use super::insn::{assemble, EncodeError, Insn};
use super::lower;
use crate::isa::assembler::Assembled;
use crate::isa::codegen::{Code, Codegen, Insns, LabelName};
use crate::isa::error::LowerError;
use crate::isa::file::FileView;
use crate::isa::style::Style;
use crate::isa::Machine;
use crate::lir::regalloc::Allocation;
use crate::lir::Func;

crate::mach_insn!(Insn);

impl Codegen for super::X86_64 {
    type Insn = Insn;
    type Error = EncodeError;

    fn lower(&self, f: &Func, alloc: &Allocation, _: Machine) -> Result<Insns<Insn>, LowerError> {
        Ok(lower::lower(f, alloc)?.insns)
    }

    /// The text is iced's, made while encoding (it knows which branches
    /// came out short), except that the kernel's RET (linkage.h) is `ret`
    /// plus the return-thunk and straight-line-speculation mitigations it
    /// is configured with; objtool rejects a bare `ret` in RETHUNK builds.
    /// The bytes stay those of a plain `ret`.
    fn assemble(&self, insns: &[Insn], style: Style, name: LabelName) -> Result<Code, EncodeError> {
        let a = assemble(insns, name)?;
        let mut text = a.text;
        if style == Style::Linux {
            for (t, _) in text
                .iter_mut()
                .zip(insns)
                .filter(|(_, i)| matches!(i, Insn::Ret))
            {
                *t = "RET".to_string();
            }
        }
        let asm = Assembled {
            bytes: a.bytes,
            offsets: a.offsets,
        };
        Ok(Code { asm, text })
    }
}

crate::isa::emit::file_template!(X86File, "x86_64.S");

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
