//! The one code generation driver: an allocated LIR function lowered to
//! a target's instructions, its far branches relaxed, assembled, and
//! turned into the target-independent [`MachFunc`] (lines with text,
//! class and origin, bytes, the `.arch` it needs). A target says only
//! what is its own ([`Codegen`], in its `emit.rs`); every backend gets
//! the object-safe [`Generate`] from it, which is what
//! [`super::Target::codegen`] calls.

use super::assembler::{Assembled, Label};
use super::error::{CodegenError, LowerError};
use super::mach::{label_name, Line, MachFunc, MachInsn};
use super::style::Style;
use super::Machine;
use crate::lir::regalloc::Allocation;
use crate::lir::{Func, Origin};

/// What code generation needs of one target.
pub trait Codegen {
    type Insn: MachInsn + Clone;
    /// Its encoder's error (kept typed in [`CodegenError::Encode`]).
    type Error: std::error::Error + Send + Sync + 'static;
    /// What the assembler hands the printer besides bytes and offsets:
    /// x86-64's text from iced, which knows which branches came out
    /// short; `()` where an instruction prints by itself.
    type Listing;

    /// The instructions of `f` on `machine`, each with the origin of the
    /// LIR instruction it lowers (labels included).
    fn lower(
        &self,
        f: &Func,
        alloc: &Allocation,
        machine: Machine,
    ) -> Result<Vec<(Self::Insn, Origin)>, LowerError>;

    /// Far branches rewritten before encoding, new labels numbered from
    /// `next_label` (riscv64's veneers, which the `.S` shows too). By
    /// default the assembler reports a branch out of reach.
    fn relax(
        &self,
        insns: Vec<(Self::Insn, Origin)>,
        _next_label: Label,
    ) -> Result<Vec<(Self::Insn, Origin)>, Self::Error> {
        Ok(insns)
    }

    /// Machine code and the byte offset of every instruction (labels
    /// included); `label_name` is how the text names label `l`.
    fn assemble(
        &self,
        insns: &[Self::Insn],
        label_name: &dyn Fn(Label) -> String,
    ) -> Result<(Assembled, Self::Listing), Self::Error>;

    /// How instruction `index` is written in a `style` file.
    fn text(
        &self,
        index: usize,
        insn: &Self::Insn,
        listing: &Self::Listing,
        style: Style,
        label_name: &dyn Fn(Label) -> String,
    ) -> String;

    /// The `.arch`/`.machine` the function's text needs beyond the
    /// assembler's default.
    fn needs_arch(&self, _insns: &[Self::Insn], _machine: Machine) -> Option<&'static str> {
        None
    }
}

/// The newest architecture level any of `insns` needs. Levels compare as
/// strings: "armv8.1-a" < "armv8.4-a".
pub fn newest_arch<I>(insns: &[I], needs: fn(&I) -> Option<&'static str>) -> Option<&'static str> {
    insns.iter().filter_map(needs).max()
}

/// Code generation as the rest of the crate asks any backend for it.
pub trait Generate {
    /// Lower an allocated LIR function to this target's machine code.
    fn codegen(
        &self,
        f: &Func,
        alloc: &Allocation,
        symbol: &str,
        style: Style,
        machine: Machine,
    ) -> Result<MachFunc, CodegenError>;
}

impl<C: Codegen> Generate for C {
    fn codegen(
        &self,
        f: &Func,
        alloc: &Allocation,
        symbol: &str,
        style: Style,
        machine: Machine,
    ) -> Result<MachFunc, CodegenError> {
        let insns = self.lower(f, alloc, machine)?;
        let insns = self.relax(insns, f.nlabels).map_err(CodegenError::encode)?;
        let plain: Vec<C::Insn> = insns.iter().map(|(i, _)| i.clone()).collect();
        let name = |l: Label| label_name(symbol, l);
        let (asm, listing) = self.assemble(&plain, &name).map_err(CodegenError::encode)?;
        let lines = insns
            .iter()
            .zip(&asm.offsets)
            .enumerate()
            .map(|(index, ((insn, origin), &offset))| Line {
                label: insn.label().map(name),
                text: self.text(index, insn, &listing, style, &name),
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
            needs_arch: self.needs_arch(&plain, machine),
        })
    }
}
