//! aarch64 code generation driver: lower, encode, and produce lines.

use super::insn::{assemble, Insn};
use super::lower;
use crate::emit::asm::FileView;
use crate::lir::regalloc::Allocation;
use crate::lir::Func;
use crate::target::mach::{lines_of, MachFunc};

crate::mach_insn!(Insn);

pub fn codegen(f: &Func, alloc: &Allocation, symbol: &str) -> Result<MachFunc, String> {
    let lowered = lower::lower(f, alloc).map_err(|e| e.0)?;
    let insns: Vec<Insn> = lowered.insns.iter().map(|(i, _)| i.clone()).collect();
    let asm = assemble(&insns).map_err(|e| e.to_string())?;
    Ok(MachFunc {
        symbol: symbol.to_string(),
        lines: lines_of(symbol, &lowered.insns, &asm.offsets),
        bytes: asm.bytes,
        // Architecture levels compare as strings: "armv8.1-a" < "armv8.4-a".
        needs_arch: insns.iter().filter_map(Insn::needs_arch).max(),
    })
}

#[derive(askama::Template)]
#[template(path = "aarch64.S", escape = "none")]
struct Aarch64File<'a> {
    v: &'a FileView<'a>,
}

/// The whole `.S` file: plain GNU as, or the kernel's `SYM_FUNC_START()`
/// in Linux style.
pub fn render_file(v: &FileView) -> Result<String, askama::Error> {
    crate::emit::asm::render_sized(&Aarch64File { v }, v)
}
