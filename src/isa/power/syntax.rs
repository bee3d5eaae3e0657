//! How a spec writes POWER's instructions (both Book III-S and III-E;
//! which CPU family has which is checking's question).

use crate::ir::feature::Patching;
use crate::isa::backend::Words;
use crate::spec::syntax::{ImmForm, Insn, Kind, Operands, SprRead, Syntax};

#[linkme::distributed_slice(crate::spec::syntax::SYNTAXES)]
static POWER: &Syntax = &Syntax {
    isa: "power",
    insns: &[
        insn("tlbie", Kind::Invalidate, Operands::List),
        insn("tlbiel", Kind::Invalidate, Operands::List),
        insn("slbia", Kind::Invalidate, Operands::List),
        insn("tlbivax", Kind::Invalidate, Operands::List),
        // `tlbilx va, EA, MAS6`: the operation, then its registers.
        insn(
            "tlbilx",
            Kind::Invalidate,
            Operands::Operation {
                what: "what tlbilx invalidates: `all`, `pid` or `va`",
                max: usize::MAX,
            },
        ),
        // The entry it writes is in MAS0-MAS3 and MAS7.
        insn("tlbwe", Kind::Invalidate, Operands::Optional),
        insn(
            "mtspr",
            Kind::Sys,
            Operands::Spr {
                what: "a special-purpose register (`MAS1`)",
            },
        ),
        insn("tlbsx", Kind::Sys, Operands::One),
        insn("tlbre", Kind::Sys, Operands::None),
        insn("wrteei", Kind::Sys, Operands::One),
        insn("wrtee", Kind::Sys, Operands::One),
    ],
    dotted_barriers: &[],
    set_barriers: &[],
    barrier_options: &[],
    // RIC, PRS and R (`tlbie RB,RS,RIC,PRS,R`) and IH are fields of the
    // instruction word: part of what the instruction is.
    imm_forms: &[
        ImmForm {
            mnemonic: "tlbie",
            regs: 2,
            fields: &[("ric", 3), ("prs", 1), ("r", 1)],
        },
        ImmForm {
            mnemonic: "tlbiel",
            regs: 2,
            fields: &[("ric", 3), ("prs", 1), ("r", 1)],
        },
        ImmForm {
            mnemonic: "slbia",
            regs: 0,
            fields: &[("ih", 7)],
        },
    ],
    spr_reads: &[
        SprRead {
            mnemonic: "mfmsr",
            fixed: Some("MSR"),
            what: "",
        },
        SprRead {
            mnemonic: "mfspr",
            fixed: None,
            what: "a special-purpose register (`MAS1`)",
        },
    ],
};

const fn insn(mnemonic: &'static str, kind: Kind, operands: Operands) -> Insn {
    Insn {
        mnemonic,
        kind,
        operands,
    }
}

/// `via tlbie 2, 1, 1`: the parser has folded RIC, PRS and R. Features
/// are patched by the kernel's CPU and MMU feature sections.
pub(super) static WORDS: Words = Words {
    via_insns: &["tlbie ", "tlbiel "],
    invalidation: super::book3e::invalidation,
    patching: &[Patching::PowerCpuFtr, Patching::PowerMmuFtr],
};

impl crate::isa::backend::SpecWords for super::Power {
    fn has_machines(&self) -> bool {
        true
    }

    fn invalidate_class(&self, mnemonic: &str) -> Option<crate::ir::order::Class> {
        use crate::ir::order::Class;
        match mnemonic {
            // Book III-E tlbilx: this CPU only, complete after msync;
            // isync (objdump spells it `tlbilxva`, `tlbilxpid`,
            // `tlbilxlpid`).
            "tlbiel" => Some(Class::LocalInvalidate),
            m if m.starts_with("tlbilx") => Some(Class::LocalInvalidate),
            // Writing an entry drops whatever translation it held, on this
            // CPU: complete after `msync; isync` as a tlbilx (Linux 6.1
            // tlb_low.S e500 `__tlbil_va`: "tlbwe; msync; isync").
            "tlbwe" => Some(Class::LocalInvalidate),
            "slbia" => Some(Class::EratInvalidate),
            _ => None,
        }
    }

    fn spr(
        &self,
        machine: crate::ir::Machine,
        name: &str,
    ) -> Result<crate::ir::Spr, crate::ir::SprError> {
        super::book3e::spr(machine, name)
    }
}
