//! How a spec writes AArch64's instructions.

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

impl crate::isa::backend::SpecWords for super::Aarch64 {
    fn via_insn(&self, name: &str) -> bool {
        name.starts_with("tlbi ")
    }

    fn invalidation(
        &self,
        _machine: crate::ir::Machine,
        name: &str,
        n: usize,
    ) -> Result<crate::isa::invalidation::Invalidation, crate::ir::isa::InvalidationError> {
        super::lower::invalidation(name, n)
    }

    fn patches(&self, p: crate::ir::feature::Patching) -> bool {
        p == crate::ir::feature::Patching::Arm64Alternative
    }
}
