//! How a spec writes x86-64's instructions.

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
