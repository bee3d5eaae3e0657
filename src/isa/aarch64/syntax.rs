//! How a spec writes AArch64's instructions.

use crate::ir::feature::Patching;
use crate::isa::backend::Words;
use crate::spec::syntax::{Insn, Kind, Operands, Syntax};

#[linkme::distributed_slice(crate::spec::syntax::SYNTAXES)]
static AARCH64: &Syntax = &Syntax {
    isa: "aarch64",
    // `tlbi vale1is, ADDR`: the operation is part of the name.
    insns: &[Insn {
        mnemonic: "tlbi",
        kind: Kind::Invalidate,
        operands: Operands::Operation {
            what: "a TLBI operation (e.g. vale1is)",
            max: 1,
        },
    }],
    dotted_barriers: &[],
    set_barriers: &[],
    // The shareability domain and access types of `dsb`/`dmb`.
    barrier_options: &[
        "sy", "st", "ld", "ish", "ishst", "ishld", "osh", "oshst", "oshld", "nsh", "nshst", "nshld",
    ],
    imm_forms: &[],
    spr_reads: &[],
};

/// `tlbi vale1is, ADDR`'s names; features are patched as the kernel's
/// `alternative_if` does.
pub(super) static WORDS: Words = Words {
    via_insns: &["tlbi "],
    invalidation: |_, name, n| super::lower::invalidation(name, n),
    patching: &[Patching::Arm64Alternative],
};

impl crate::isa::backend::SpecWords for super::Aarch64 {}
