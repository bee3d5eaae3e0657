//! aarch64 code generation (what the driver in `isa::codegen` asks of
//! it) and the `.S` file template.

use super::insn::Insn;
use crate::isa::emit::{file_template, printed_codegen};
use crate::isa::file::FileView;

crate::mach_insn!(Insn);

// GNU as and the kernel's linkage.h agree on register names (x0, not
// %x0): the style changes only the file frame.
printed_codegen!(super::Aarch64);

file_template!(Aarch64File, "aarch64.S");

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
