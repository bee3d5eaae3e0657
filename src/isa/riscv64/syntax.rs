//! How a spec writes RISC-V's instructions: dotted names, operands that
//! end with their line as in GNU as, FENCE's access sets.

use crate::isa::backend::Words;
use crate::spec::syntax::{Insn, Kind, Operands, SetBarrier, Syntax};

/// `sfence.vma x0, asid`: a zero first operand is every address of one
/// ASID, a different operation to the cover pass.
const VMA: Operands = Operands::Line { zero: "x0" };

#[linkme::distributed_slice(crate::spec::syntax::SYNTAXES)]
static RISCV64: &Syntax = &Syntax {
    isa: "riscv64",
    insns: &[
        Insn {
            mnemonic: "sfence.vma",
            kind: Kind::Invalidate,
            operands: VMA,
        },
        Insn {
            mnemonic: "sinval.vma",
            kind: Kind::Invalidate,
            operands: VMA,
        },
    ],
    // `fence.i`, `sfence.w.inval`, `sfence.inval.ir`.
    dotted_barriers: &["fence", "sfence"],
    set_barriers: &[SetBarrier {
        name: "fence",
        pred: "a FENCE predecessor set (`rw`, `w`, `iorw`...)",
        succ: "a FENCE successor set",
    }],
    barrier_options: &[],
    imm_forms: &[],
    spr_reads: &[],
};

/// `sfence.vma` / `sinval.vma`, with ` x0` for a whole ASID. Linux's
/// riscv ISA-extension alternatives are not modelled: a riscv64 feature
/// is a run-time bit of the feature word.
pub(super) static WORDS: Words = Words {
    via_insns: &["sfence.vma", "sinval.vma"],
    invalidation: |_, name, n| super::lower::invalidation(name, n),
    patching: &[],
};

impl crate::isa::backend::SpecWords for super::Riscv64 {
    /// Svinval's `sinval.vma` is ordered only by `sfence.w.inval` /
    /// `sfence.inval.ir`, this hart only, like POWER's tlbiel.
    /// (`sfence.vma` orders itself: the default class, with this target's
    /// implicit orders.)
    fn invalidate_class(&self, mnemonic: &str) -> Option<crate::ir::order::Class> {
        (mnemonic == "sinval.vma").then_some(crate::ir::order::Class::LocalInvalidate)
    }
}
