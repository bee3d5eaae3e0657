//! aarch64 code generation driver: lower, encode, and produce lines.

use super::insn::{assemble, Insn};
use super::lower;
use crate::codegen::Style;
use crate::emit::asm::FileView;
use crate::lir::regalloc::Allocation;
use crate::lir::Func;
use crate::target::mach::{label_name, InsnClass, Line, MachFunc};

pub fn codegen(
    f: &Func,
    alloc: &Allocation,
    symbol: &str,
    _style: Style,
) -> Result<MachFunc, String> {
    // GNU as and the kernel's linkage.h agree on register names (x0, not
    // %x0), so the style changes only the file frame, not the body.
    let lowered = lower::lower(f, alloc).map_err(|e| e.0)?;
    let insns: Vec<Insn> = lowered.insns.iter().map(|(i, _)| i.clone()).collect();
    let asm = assemble(&insns).map_err(|e| e.to_string())?;
    let name = |l: u32| label_name(symbol, l);
    let lines = lowered
        .insns
        .iter()
        .zip(&asm.offsets)
        .map(|((insn, origin), &offset)| {
            let class = InsnClass::of(
                insn.is_barrier(),
                insn.is_invalidate(),
                insn.is_store(),
                insn.is_load(),
            );
            Line {
                label: match insn {
                    Insn::Label(l) => Some(name(*l)),
                    _ => None,
                },
                text: insn.text(&name),
                mnemonic: insn.mnemonic(),
                class,
                offset,
                origin: origin.clone(),
            }
        })
        .collect();
    // Architecture levels compare as strings: "armv8.1-a" < "armv8.4-a".
    let needs_arch = insns.iter().filter_map(Insn::needs_arch).max();
    Ok(MachFunc {
        symbol: symbol.to_string(),
        lines,
        bytes: asm.bytes,
        needs_arch,
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
