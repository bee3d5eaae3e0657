//! POWER code generation driver: lower, encode, and produce lines.

use super::insn::{assemble, Insn, RegStyle};
use super::lower;
use crate::codegen::Style;
use crate::emit::asm::FileView;
use crate::lir::regalloc::Allocation;
use crate::lir::Func;
use crate::target::mach::{label_name, InsnClass, Line, MachFunc};
use crate::target::{Machine, Target};

pub fn codegen(
    f: &Func,
    alloc: &Allocation,
    target: Target,
    symbol: &str,
    style: Style,
    machine: Machine,
) -> Result<MachFunc, String> {
    // Linux's ppc_asm.h defines r3 etc. as %r3; plain GNU as needs %r3.
    let style = match style {
        Style::Plain => RegStyle::Percent,
        Style::Linux => RegStyle::Bare,
    };
    let lowered = lower::lower(f, alloc, target, machine).map_err(|e| e.0)?;
    let insns: Vec<Insn> = lowered.insns.iter().map(|(i, _)| i.clone()).collect();
    let asm = assemble(&insns, target.big_endian()).map_err(|e| e.to_string())?;
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
                text: insn.text(style, &name),
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
        needs_arch: Some(match machine {
            Machine::Book3s => "power9",
            Machine::E6500 => "e6500",
        }),
    })
}

#[derive(askama::Template)]
#[template(path = "power.S", escape = "none")]
struct PowerFile<'a> {
    v: &'a FileView<'a>,
    elfv2: bool,
}

/// The whole `.S` file: ELFv1 function descriptors on big-endian, ELFv2
/// on little-endian, or the kernel's `_GLOBAL()` in Linux style.
pub fn render_file(target: Target, v: &FileView) -> Result<String, askama::Error> {
    crate::emit::asm::render_sized(
        &PowerFile {
            v,
            elfv2: target == Target::Power64le,
        },
        v,
    )
}
