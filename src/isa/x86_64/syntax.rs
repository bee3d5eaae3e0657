//! How a spec writes x86-64's instructions.

use crate::isa::backend::Words;
use crate::spec::syntax::{Insn, Kind, Operands, Syntax};

#[linkme::distributed_slice(crate::spec::syntax::SYNTAXES)]
static X86_64: &Syntax = &Syntax {
    isa: "x86_64",
    insns: &[Insn {
        mnemonic: "invlpg",
        kind: Kind::Invalidate,
        operands: Operands::List,
    }],
    dotted_barriers: &[],
    set_barriers: &[],
    barrier_options: &[],
    imm_forms: &[],
    spr_reads: &[],
};

/// A granule's `via` names no x86-64 instruction, and no feature is
/// patched at boot by code of ours on x86-64.
pub(super) static WORDS: Words = Words {
    via_insns: &[],
    invalidation: |_, name, n| super::lower::invalidation(name, n),
    patching: &[],
};

impl crate::isa::backend::SpecWords for super::X86_64 {}
