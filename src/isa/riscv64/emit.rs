//! riscv64 code generation (what the driver in `isa::codegen` asks of
//! it: far branches relaxed into veneers before encoding) and the `.S`
//! file template.

use super::insn::Insn;
use crate::isa::emit::{file_template, printed_codegen};
use crate::isa::file::FileView;

crate::mach_insn!(Insn);

// Register names are the same in plain and kernel style (the kernel's
// riscv `.S` files use ABI names), so the style changes only the frame.
printed_codegen!(super::Riscv64, relax: super::insn::relax);

file_template!(Riscv64File, "riscv64.S");

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
