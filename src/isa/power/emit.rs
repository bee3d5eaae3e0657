//! POWER code generation (what the driver in `isa::codegen` asks of it)
//! and the `.S` file template.

use super::insn::{assemble, Insn, RegStyle};
use super::lower;
use crate::isa::assembler::EncodeError;
use crate::isa::codegen::{Code, Codegen, Insns, LabelName};
use crate::isa::error::LowerError;
use crate::isa::file::FileView;
use crate::isa::style::Style;
use crate::isa::Machine;
use crate::lir::regalloc::Allocation;
use crate::lir::Func;

crate::mach_insn!(Insn);

impl Codegen for super::Power {
    type Insn = Insn;
    type Error = EncodeError;

    fn lower(
        &self,
        f: &Func,
        alloc: &Allocation,
        machine: Machine,
    ) -> Result<Insns<Insn>, LowerError> {
        Ok(lower::lower(f, alloc, self.target(), machine)?.insns)
    }

    /// Linux's ppc_asm.h defines r3 etc. as %r3; plain GNU as needs %r3.
    fn assemble(&self, insns: &[Insn], style: Style, name: LabelName) -> Result<Code, EncodeError> {
        let regs = match style {
            Style::Plain => RegStyle::Percent,
            Style::Linux => RegStyle::Bare,
        };
        Ok(Code::printed(assemble(insns, !self.le)?, insns, |i| {
            i.text(regs, name)
        }))
    }

    fn needs_arch(&self, _: &[Insn], machine: Machine) -> Option<&'static str> {
        Some(match machine {
            Machine::Book3s => "power9",
            Machine::E6500 => "e6500",
        })
    }
}

crate::isa::emit::file_template!(PowerFile, "power.S", elfv2: bool);

impl crate::isa::backend::Lowering for super::Power {
    fn big_endian(&self) -> bool {
        !self.le
    }

    /// `ldbrx`/`stdbrx` and the narrower forms are X-form only.
    fn swap_is_indexed(&self) -> bool {
        true
    }

    /// `mtctr` before a counted loop, `bdnz` at its bottom.
    fn counts_on_a_register(&self) -> bool {
        true
    }

    /// The whole `.S` file: ELFv1 function descriptors on big-endian,
    /// ELFv2 on little-endian, or the kernel's `_GLOBAL()` in Linux style.
    fn render_file(&self, v: &FileView) -> Result<String, askama::Error> {
        crate::isa::file::render_sized(&PowerFile { v, elfv2: self.le }, v)
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
