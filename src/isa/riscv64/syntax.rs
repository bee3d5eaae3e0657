//! How a spec writes RISC-V's instructions: dotted names, operands that
//! end with their line as in GNU as, FENCE's access sets.

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
