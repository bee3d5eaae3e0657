//! How a spec writes the CPU instructions of each instruction set, as
//! data the ISAs register (`crate::isa::<arch>::syntax`, one
//! [`Syntax`] each in [`SYNTAXES`]). The parser reads a few generic shapes
//! (a mnemonic, dotted or not; an operation word; operands to the end of
//! the line; immediate fields) and asks the registry which shape a word
//! has, so it names no architecture's instructions itself. Adding an ISA
//! adds its table; the front end does not change.
//!
//! The registry is one language: every spec may name every ISA's
//! instructions (whether its `target` can issue them is checking's
//! question, `crate::ir::isa`), so two ISAs that register one mnemonic
//! must agree on its shape (a unit test checks they do).

/// One instruction set's words.
pub struct Syntax {
    /// Who registered it (for the consistency test's messages).
    pub isa: &'static str,
    /// Statement instructions: CPU invalidations and system-register
    /// moves.
    pub insns: &'static [Insn],
    /// Barriers whose name goes on with `.WORD`s (RISC-V `fence.i`,
    /// `sfence.w.inval`): their first word.
    pub dotted_barriers: &'static [&'static str],
    /// Barriers that take a `PRED,SUCC` pair of access sets on their line
    /// (RISC-V `fence rw,w`).
    pub set_barriers: &'static [SetBarrier],
    /// Words that continue any other barrier's name (`dsb ish`).
    pub barrier_options: &'static [&'static str],
    /// Instructions with immediate fields that are part of what the
    /// instruction is (POWER `tlbie`'s RIC, PRS, R): see
    /// [`crate::spec::insn_imm`].
    pub imm_forms: &'static [ImmForm],
    /// Expressions that read a special-purpose register (`mfspr MAS1`,
    /// `mfmsr`).
    pub spr_reads: &'static [SprRead],
}

/// A barrier with a pair of access sets, and what each set is (for the
/// diagnostic when one is missing).
pub struct SetBarrier {
    pub name: &'static str,
    pub pred: &'static str,
    pub succ: &'static str,
}

/// An expression that reads a special-purpose register: the one it
/// always reads (`mfmsr`: MSR), or the one named after it (`mfspr`; `what`
/// describes it).
pub struct SprRead {
    pub mnemonic: &'static str,
    pub fixed: Option<&'static str>,
    pub what: &'static str,
}

/// A statement instruction: its mnemonic as written (`sfence.vma`) and
/// how its operands read.
pub struct Insn {
    pub mnemonic: &'static str,
    pub kind: Kind,
    pub operands: Operands,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// A CPU invalidation (`Stmt::Invalidate`): it may end with `after
    /// invalidates`, and its name may be a granule's `via`.
    Invalidate,
    /// A system-register move or TLB-entry access (`Stmt::Sys`).
    Sys,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Operands {
    /// Comma-separated expressions (`tlbie RB, RS, RIC, PRS, R`).
    List,
    /// An operation word that becomes part of the name (`tlbi vale1is`,
    /// `tlbilx va`; `what` says what it is), then up to `max`
    /// `, EXPR` operands.
    Operation { what: &'static str, max: usize },
    /// Operands that end with the instruction's line, as in GNU as; a
    /// first operand `zero` (the zero register) becomes part of the name
    /// instead (`sfence.vma x0, asid`: every address of one ASID).
    Line { zero: &'static str },
    /// Operands on the instruction's line, if any (`tlbwe`: the entry is
    /// in registers the instruction names none of).
    Optional,
    /// `SPR, VALUE`: a special-purpose register and what goes into it.
    Spr { what: &'static str },
    /// Exactly one expression.
    One,
    /// None.
    None,
}

/// An instruction with immediate fields, in the ISA's operand order:
/// `regs` register operands, then each field with its largest value.
pub struct ImmForm {
    pub mnemonic: &'static str,
    pub regs: usize,
    pub fields: &'static [(&'static str, u64)],
}

#[linkme::distributed_slice]
pub static SYNTAXES: [&'static Syntax];

/// One table of every registered ISA, chained in registration order.
fn every<T: 'static>(
    table: fn(&'static Syntax) -> &'static [T],
) -> impl Iterator<Item = &'static T> {
    SYNTAXES.iter().flat_map(move |s| table(s))
}

/// The statement instruction spelled `mnemonic` (dotted as written).
pub fn insn(mnemonic: &str) -> Option<&'static Insn> {
    every(|s| s.insns).find(|i| i.mnemonic == mnemonic)
}

/// Every statement instruction whose mnemonic has dots, for the parser's
/// look-ahead over `WORD . WORD` tokens.
pub fn dotted_insns() -> impl Iterator<Item = &'static Insn> {
    every(|s| s.insns).filter(|i| i.mnemonic.contains('.'))
}

/// Does a barrier named `first` continue with `.WORD`s?
pub fn is_dotted_barrier(first: &str) -> bool {
    every(|s| s.dotted_barriers).any(|&b| b == first)
}

/// The `PRED,SUCC` shape of barrier `name`, if it takes one.
pub fn set_barrier(name: &str) -> Option<&'static SetBarrier> {
    every(|s| s.set_barriers).find(|b| b.name == name)
}

/// The special-purpose register read spelled `mnemonic`.
pub fn spr_read(mnemonic: &str) -> Option<&'static SprRead> {
    every(|s| s.spr_reads).find(|r| r.mnemonic == mnemonic)
}

/// Does `word` continue a barrier's name?
pub fn is_barrier_option(word: &str) -> bool {
    every(|s| s.barrier_options).any(|&o| o == word)
}

/// The immediate form of `mnemonic`, if it has one.
pub fn imm_form(mnemonic: &str) -> Option<&'static ImmForm> {
    every(|s| s.imm_forms).find(|f| f.mnemonic == mnemonic)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One language: a mnemonic two ISAs register has one shape, and
    /// each ISA registers each word once.
    #[test]
    fn registered_shapes_agree() {
        assert!(SYNTAXES.len() >= 4, "the ISAs register their syntax");
        let all: Vec<(&str, &Insn)> = SYNTAXES
            .iter()
            .flat_map(|s| s.insns.iter().map(move |i| (s.isa, i)))
            .collect();
        for (a, (isa_a, i)) in all.iter().enumerate() {
            for (isa_b, j) in &all[a + 1..] {
                if i.mnemonic == j.mnemonic {
                    assert!(
                        isa_a != isa_b && i.kind == j.kind && i.operands == j.operands,
                        "`{}` registered by {isa_a} and {isa_b} with different shapes",
                        i.mnemonic
                    );
                }
            }
        }
        for s in SYNTAXES {
            for f in s.imm_forms {
                let i = s.insns.iter().find(|i| i.mnemonic == f.mnemonic);
                assert!(
                    i.is_some_and(|i| i.operands == Operands::List),
                    "{}: immediate form `{}` is not an operand-list instruction",
                    s.isa,
                    f.mnemonic
                );
            }
        }
    }
}
