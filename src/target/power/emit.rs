//! POWER code generation driver: lower, encode, and produce lines.

use super::insn::{assemble, Insn, RegStyle};
use super::lower;
use crate::lir::regalloc::Allocation;
use crate::lir::Func;
use crate::target::mach::{label_name, InsnClass, Line, MachFunc};
use crate::target::Target;

pub fn codegen(
    f: &Func,
    alloc: &Allocation,
    target: Target,
    symbol: &str,
    style: RegStyle,
) -> Result<MachFunc, String> {
    let lowered = lower::lower(f, alloc, target).map_err(|e| e.0)?;
    let insns: Vec<Insn> = lowered.insns.iter().map(|(i, _)| i.clone()).collect();
    let asm = assemble(&insns, target.big_endian()).map_err(|e| e.to_string())?;
    let name = |l: u32| label_name(symbol, l);
    let lines = lowered
        .insns
        .iter()
        .zip(&asm.offsets)
        .map(|((insn, origin), &offset)| {
            let class = if insn.is_barrier() {
                InsnClass::Barrier
            } else if insn.is_invalidate() {
                InsnClass::Invalidate
            } else if insn.is_store() {
                InsnClass::Store
            } else if insn.is_load() {
                InsnClass::Load
            } else {
                InsnClass::Other
            };
            Line {
                label: match insn {
                    Insn::Label(l) => Some(name(*l)),
                    _ => None,
                },
                text: insn.text(style, &name),
                mnemonic: insn.mnemonic().to_string(),
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
        needs_arch: Some("power9"),
    })
}
