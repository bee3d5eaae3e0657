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

impl crate::isa::backend::SpecWords for super::X86_64 {
    fn invalidation(
        &self,
        _machine: crate::ir::Machine,
        name: &str,
        n: usize,
    ) -> Result<crate::isa::invalidation::Invalidation, crate::ir::isa::InvalidationError> {
        super::lower::invalidation(name, n)
    }

    /// No boot-time patching of ours on x86-64.
    fn patches(&self, _p: crate::ir::feature::Patching) -> bool {
        false
    }
}
