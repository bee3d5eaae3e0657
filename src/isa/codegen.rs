//! The one code generation driver: an allocated LIR function lowered to
//! a target's instructions, its far branches relaxed, assembled, and
//! turned into the target-independent [`MachFunc`] (lines with text,
//! class and origin, bytes, the `.arch` it needs). A target says only
//! what is its own ([`Codegen`], in its `emit.rs`); the registry
//! (`targets!`) runs [`run`] on each target's backend.

use super::assembler::{Assembled, Label};
use super::error::{CodegenError, LowerError};
use super::mach::{label_name, Line, MachFunc, MachInsn};
use super::style::Style;
use super::Machine;
use crate::lir::regalloc::Allocation;
use crate::lir::{Func, Origin};

/// A function's instructions, each with the origin of the LIR
/// instruction it lowers (labels included).
pub type Insns<I> = Vec<(I, Origin)>;

/// How the text names label `l` (`.Lsymbol.l`).
pub type LabelName<'a> = &'a dyn Fn(Label) -> String;

/// What code generation needs of one target.
pub trait Codegen {
    type Insn: MachInsn + Clone;
    /// Its encoder's error (kept typed in [`CodegenError::Encode`]).
    type Error: std::error::Error + Send + Sync + 'static;

    /// The instructions of `f` on `machine`.
    fn lower(
        &self,
        f: &Func,
        alloc: &Allocation,
        machine: Machine,
    ) -> Result<Insns<Self::Insn>, LowerError>;

    /// Far branches rewritten before encoding, new labels numbered from
    /// `next_label` (riscv64's veneers, which the `.S` shows too). By
    /// default the assembler reports a branch out of reach.
    fn relax(
        &self,
        insns: Insns<Self::Insn>,
        _next_label: Label,
    ) -> Result<Insns<Self::Insn>, Self::Error> {
        Ok(insns)
    }

    /// Machine code, the byte offset of every instruction (labels
    /// included) and its text in a `style` file.
    fn assemble(
        &self,
        insns: &[Self::Insn],
        style: Style,
        name: LabelName,
    ) -> Result<Code, Self::Error>;

    /// The `.arch`/`.machine` the function's text needs beyond the
    /// assembler's default.
    fn needs_arch(&self, _insns: &[Self::Insn], _machine: Machine) -> Option<&'static str> {
        None
    }
}

/// An assembled function and how each of its instructions prints (a
/// label's text is unused).
pub struct Code {
    pub asm: Assembled,
    pub text: Vec<String>,
}

impl Code {
    /// `asm` of `insns`, each printed by `print`: for targets whose
    /// instructions print by themselves (x86-64's text is iced's).
    pub fn printed<I>(asm: Assembled, insns: &[I], print: impl Fn(&I) -> String) -> Code {
        let text = insns.iter().map(print).collect();
        Code { asm, text }
    }
}

/// The newest architecture level any of `insns` needs. Levels compare as
/// strings: "armv8.1-a" < "armv8.4-a".
pub fn newest_arch<I>(insns: &[I], needs: fn(&I) -> Option<&'static str>) -> Option<&'static str> {
    insns.iter().filter_map(needs).max()
}

/// Lower an allocated LIR function to `target`'s machine code: the
/// one driver, which [`super::Target::codegen`] runs for every target.
pub fn run<C: Codegen>(
    target: &C,
    f: &Func,
    alloc: &Allocation,
    symbol: &str,
    style: Style,
    machine: Machine,
) -> Result<MachFunc, CodegenError> {
    let insns = target.lower(f, alloc, machine)?;
    let insns = target
        .relax(insns, f.nlabels)
        .map_err(CodegenError::encode)?;
    let plain: Vec<C::Insn> = insns.iter().map(|(i, _)| i.clone()).collect();
    let name = |l: Label| label_name(symbol, l);
    let Code { asm, text } = target
        .assemble(&plain, style, &name)
        .map_err(CodegenError::encode)?;
    let lines = insns
        .iter()
        .zip(&asm.offsets)
        .zip(text)
        .map(|(((insn, origin), &offset), text)| Line {
            label: insn.label().map(name),
            text,
            mnemonic: insn.mnemonic(),
            class: insn.class(),
            offset,
            origin: origin.clone(),
        })
        .collect();
    Ok(MachFunc {
        symbol: symbol.to_string(),
        lines,
        bytes: asm.bytes,
        needs_arch: target.needs_arch(&plain, machine),
    })
}
