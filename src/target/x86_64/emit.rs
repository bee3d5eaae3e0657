//! x86_64 code generation driver: lower, encode, and produce lines.

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
    style: Style,
) -> Result<MachFunc, String> {
    let lowered = lower::lower(f, alloc).map_err(|e| e.0)?;
    let insns: Vec<Insn> = lowered.insns.iter().map(|(i, _)| i.clone()).collect();
    let name = |l: u32| label_name(symbol, l);
    let asm = assemble(&insns, &name).map_err(|e| e.to_string())?;
    let lines = lowered
        .insns
        .iter()
        .zip(asm.offsets.iter().zip(&asm.text))
        .map(|((insn, origin), (&offset, text))| {
            let class = InsnClass::of(
                insn.is_barrier(),
                insn.is_invalidate(),
                insn.is_store(),
                insn.is_load(),
            );
            // The kernel's RET (linkage.h) is `ret` plus the return-thunk
            // and straight-line-speculation mitigations it is configured
            // with; objtool rejects a bare `ret` in RETHUNK builds. The
            // bytes stay those of a plain `ret`.
            let text = match (insn, style) {
                (Insn::Ret, Style::Linux) => "RET".to_string(),
                _ => text.clone(),
            };
            Line {
                label: match insn {
                    Insn::Label(l) => Some(name(*l)),
                    _ => None,
                },
                text,
                mnemonic: insn.mnemonic(),
                class,
                offset,
                origin: origin.clone(),
            }
        })
        .collect();
    Ok(MachFunc {
        symbol: symbol.to_string(),
        lines,
        bytes: asm.bytes,
        needs_arch: None,
    })
}

#[derive(askama::Template)]
#[template(path = "x86_64.S", escape = "none")]
struct X86File<'a> {
    v: &'a FileView<'a>,
}

/// The whole `.S` file: plain GNU as, or the kernel's
/// `SYM_FUNC_START`/`SYM_FUNC_END` in Linux style.
pub fn render_file(v: &FileView) -> Result<String, askama::Error> {
    crate::emit::asm::render_sized(&X86File { v }, v)
}
