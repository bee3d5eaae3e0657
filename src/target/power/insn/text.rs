//! GNU as text: mnemonics and operands as the assembler reads them.

use super::args::{Cond, Label, Spr};
use super::regs::{Reg, RegStyle, RegText};
use super::Insn;

/// The extended mnemonic of a conditional branch.
fn cond_mnemonic(c: Cond) -> &'static str {
    match c {
        Cond::Lt => "blt",
        Cond::Gt => "bgt",
        Cond::Eq => "beq",
        Cond::Ne => "bne",
        Cond::Ge => "bge",
        Cond::Le => "ble",
    }
}

/// An SPR operand: its number in hex, as `reg_booke.h` writes it.
fn spr_text(spr: Spr) -> String {
    match spr.number() {
        Some(n) => format!("{n:#x}"),
        // Out of range: the name, for the assembler to reject.
        None => spr.name(),
    }
}

/// Prints the instructions of one kind (given the mnemonic), None for the
/// others.
type TextGroup = fn(&Insn, &Printer, &str) -> Option<String>;

/// How one instruction's operands are spelled.
struct Printer<'a> {
    style: RegStyle,
    label_name: &'a dyn Fn(Label) -> String,
}

impl Printer<'_> {
    fn r(&self, n: Reg) -> RegText {
        RegText::new(self.style, n, false)
    }

    /// RA0 operands (addi/addis base, every load/store base): GPR 0 in
    /// that slot means literal zero, and GNU as warns ("invalid register
    /// expression") if it is spelled as a register, so print `0`.
    fn r0(&self, n: Reg) -> RegText {
        RegText::new(self.style, n, true)
    }

    fn label(&self, l: Label) -> String {
        (self.label_name)(l)
    }
}

/// A load-and-reserve's EH hint, printed only when set.
fn eh_text(e: bool) -> &'static str {
    if e {
        ",1"
    } else {
        ""
    }
}

impl Insn {
    /// GNU as text (no leading indentation, no newline). Percent style
    /// assembles with plain `as -mpower9`; Bare style needs `-mregnames`.
    /// CR fields/bits are plain numbers in both styles. Labels print as
    /// `name:`. Operands are printed verbatim, so out-of-range values give
    /// text the assembler will reject rather than a panic.
    pub fn text(&self, style: RegStyle, label_name: &dyn Fn(Label) -> String) -> String {
        let p = Printer { style, label_name };
        let m = self.mnemonic();
        // Each group prints the instructions of its kind and passes on the
        // others; every instruction is in one.
        let groups: [TextGroup; 5] = [
            Insn::integer_text,
            Insn::memory_text,
            Insn::control_text,
            Insn::book3e_text,
            Insn::barrier_invalidate_text,
        ];
        groups
            .iter()
            .find_map(|group| group(self, &p, m))
            .unwrap_or_default()
    }

    /// Integer arithmetic, logicals, shifts, counts and rotates.
    fn integer_text(&self, p: &Printer, m: &str) -> Option<String> {
        use Insn::*;
        Some(match self {
            Li { rt, imm } | Lis { rt, imm } => format!("{m} {},{imm}", p.r(*rt)),
            Addi { rt, ra, imm } | Addis { rt, ra, imm } => {
                format!("{m} {},{},{imm}", p.r(*rt), p.r0(*ra))
            }
            Ori { ra, rs, imm }
            | Oris { ra, rs, imm }
            | Xori { ra, rs, imm }
            | Xoris { ra, rs, imm }
            | AndiDot { ra, rs, imm } => format!("{m} {},{},{imm}", p.r(*ra), p.r(*rs)),
            AddicDot { rt, ra, imm } => format!("{m} {},{},{imm}", p.r(*rt), p.r(*ra)),
            Or { ra, rs, rb }
            | And { ra, rs, rb }
            | Xor { ra, rs, rb }
            | Andc { ra, rs, rb }
            | Nor { ra, rs, rb }
            | Sld { ra, rs, rb }
            | Srd { ra, rs, rb } => format!("{m} {},{},{}", p.r(*ra), p.r(*rs), p.r(*rb)),
            Add { rt, ra, rb } | Subf { rt, ra, rb } | Mulld { rt, ra, rb } => {
                format!("{m} {},{},{}", p.r(*rt), p.r(*ra), p.r(*rb))
            }
            Neg { rt, ra } => format!("{m} {},{}", p.r(*rt), p.r(*ra)),
            Rldicl { ra, rs, sh, mb: b }
            | Rldicr { ra, rs, sh, me: b }
            | Rldic { ra, rs, sh, mb: b }
            | Rldimi { ra, rs, sh, mb: b } => format!("{m} {},{},{sh},{b}", p.r(*ra), p.r(*rs)),
            Mr { ra, rs } | Cntlzd { ra, rs } | Cnttzd { ra, rs } | Popcntd { ra, rs } => {
                format!("{m} {},{}", p.r(*ra), p.r(*rs))
            }
            _ => return None,
        })
    }

    /// Loads and stores (reserving and conditional included).
    fn memory_text(&self, p: &Printer, m: &str) -> Option<String> {
        use Insn::*;
        Some(match self {
            Std { rs: t, d, ra }
            | Stw { rs: t, d, ra }
            | Sth { rs: t, d, ra }
            | Stb { rs: t, d, ra }
            | Ld { rt: t, d, ra }
            | Lwz { rt: t, d, ra }
            | Lhz { rt: t, d, ra }
            | Lbz { rt: t, d, ra } => format!("{m} {},{d}({})", p.r(*t), p.r0(*ra)),
            LdArg { rt, d, param } => match p.style {
                RegStyle::Percent => format!("{m} {},{d}({})", p.r(*rt), p.r(1)),
                RegStyle::Bare => format!("{m} {},STK_PARAM(R{param})({})", p.r(*rt), p.r(1)),
            },
            Stdx { rs: t, ra, rb }
            | Stwx { rs: t, ra, rb }
            | Sthx { rs: t, ra, rb }
            | Stbx { rs: t, ra, rb }
            | Ldx { rt: t, ra, rb }
            | Lwzx { rt: t, ra, rb }
            | Lhzx { rt: t, ra, rb }
            | Lbzx { rt: t, ra, rb }
            | Stdbrx { rs: t, ra, rb }
            | Stwbrx { rs: t, ra, rb }
            | Sthbrx { rs: t, ra, rb }
            | Ldbrx { rt: t, ra, rb }
            | Lwbrx { rt: t, ra, rb }
            | Lhbrx { rt: t, ra, rb }
            | Stbcx { rs: t, ra, rb }
            | Sthcx { rs: t, ra, rb }
            | Stwcx { rs: t, ra, rb }
            | Stdcx { rs: t, ra, rb } => format!("{m} {},{},{}", p.r(*t), p.r0(*ra), p.r(*rb)),
            Lbarx { rt, ra, rb, eh: e }
            | Lharx { rt, ra, rb, eh: e }
            | Lwarx { rt, ra, rb, eh: e }
            | Ldarx { rt, ra, rb, eh: e } => {
                format!("{m} {},{},{}{}", p.r(*rt), p.r0(*ra), p.r(*rb), eh_text(*e))
            }
            _ => return None,
        })
    }

    /// Compares, CR logic, branches (feature-patched included), the count
    /// register and labels.
    fn control_text(&self, p: &Printer, m: &str) -> Option<String> {
        use Insn::*;
        Some(match self {
            Cmpdi { bf, ra, imm } | Cmpwi { bf, ra, imm } => format!("{m} {bf},{},{imm}", p.r(*ra)),
            Cmpldi { bf, ra, imm } | Cmplwi { bf, ra, imm } => {
                format!("{m} {bf},{},{imm}", p.r(*ra))
            }
            Cmpd { bf, ra, rb }
            | Cmpld { bf, ra, rb }
            | Cmpw { bf, ra, rb }
            | Cmplw { bf, ra, rb } => {
                format!("{m} {bf},{},{}", p.r(*ra), p.r(*rb))
            }
            Crxor { bt, ba, bb } => format!("{m} {bt},{ba},{bb}"),
            B { target } | Bdnz { target } => format!("{m} {}", p.label(*target)),
            Bc { bf, target, .. } => format!("{m} {bf},{}", p.label(*target)),
            Mtctr { rs: t } | Mfctr { rt: t } => format!("{m} {}", p.r(*t)),
            Blr => m.to_string(),
            FtrB { mmu, cap, target } => {
                let k = if *mmu { "MMU_" } else { "" };
                format!(
                    "BEGIN_{k}FTR_SECTION\n\tnop\n{k}FTR_SECTION_ELSE\n\tb {}\nALT_{k}FTR_SECTION_END_IFCLR({cap})",
                    p.label(*target)
                )
            }
            Label(l) => format!("{}:", p.label(*l)),
            _ => return None,
        })
    }

    /// Book III-E TLB management, barriers, MAS and MSR accesses.
    fn book3e_text(&self, p: &Printer, m: &str) -> Option<String> {
        use Insn::*;
        Some(match self {
            Tlbilx { t, ra, rb } => format!("{m} {t},{},{}", p.r0(*ra), p.r(*rb)),
            Tlbivax { ra, rb } | Tlbsx { ra, rb } => format!("{m} {},{}", p.r0(*ra), p.r(*rb)),
            Tlbre | Tlbwe | Msync | Mbar { mo: 0 } => m.to_string(),
            Mbar { mo } => format!("{m} {mo}"),
            // The number (the kernel's SPRN_ names need <asm/reg_booke.h>,
            // which a Book3S kernel tree does not include).
            Mtspr { spr, rs } => format!("{m} {},{}", spr_text(*spr), p.r(*rs)),
            Mfspr { rt, spr } => format!("{m} {},{}", p.r(*rt), spr_text(*spr)),
            Wrteei { e } => format!("{m} {}", u8::from(*e)),
            Wrtee { rs: t } | Mfmsr { rt: t } => format!("{m} {}", p.r(*t)),
            _ => return None,
        })
    }

    /// Barriers, no-ops and Book III-S invalidations.
    fn barrier_invalidate_text(&self, p: &Printer, m: &str) -> Option<String> {
        use Insn::*;
        Some(match self {
            Eieio | Sync | Lwsync | Ptesync | Isync | Tlbsync | Nop | CpAbort => m.to_string(),
            Slbia { ih } => format!("{m} {ih}"),
            Tlbie {
                rb,
                rs,
                ric,
                prs,
                r: rr,
            }
            | Tlbiel {
                rb,
                rs,
                ric,
                prs,
                r: rr,
            } => {
                format!("{m} {},{},{ric},{prs},{rr}", p.r(*rb), p.r(*rs))
            }
            _ => return None,
        })
    }

    /// The mnemonic as printed by [`Insn::text`] (for `Bc`, the condition's
    /// extended mnemonic, e.g. `"beq"`). `Label` has none and returns `""`.
    pub fn mnemonic(&self) -> &'static str {
        use Insn::*;
        match self {
            Li { .. } => "li",
            Lis { .. } => "lis",
            Addi { .. } => "addi",
            Addis { .. } => "addis",
            Ori { .. } => "ori",
            Oris { .. } => "oris",
            Xori { .. } => "xori",
            Xoris { .. } => "xoris",
            AndiDot { .. } => "andi.",
            AddicDot { .. } => "addic.",
            Or { .. } => "or",
            And { .. } => "and",
            Xor { .. } => "xor",
            Andc { .. } => "andc",
            Nor { .. } => "nor",
            Add { .. } => "add",
            Subf { .. } => "subf",
            Neg { .. } => "neg",
            Mulld { .. } => "mulld",
            Sld { .. } => "sld",
            Srd { .. } => "srd",
            Cntlzd { .. } => "cntlzd",
            Cnttzd { .. } => "cnttzd",
            Popcntd { .. } => "popcntd",
            Rldicl { .. } => "rldicl",
            Rldicr { .. } => "rldicr",
            Rldic { .. } => "rldic",
            Rldimi { .. } => "rldimi",
            Mr { .. } => "mr",
            Std { .. } => "std",
            Stw { .. } => "stw",
            Sth { .. } => "sth",
            Stb { .. } => "stb",
            Ld { .. } | LdArg { .. } => "ld",
            Lwz { .. } => "lwz",
            Lhz { .. } => "lhz",
            Lbz { .. } => "lbz",
            Stdx { .. } => "stdx",
            Stwx { .. } => "stwx",
            Sthx { .. } => "sthx",
            Stbx { .. } => "stbx",
            Ldx { .. } => "ldx",
            Lwzx { .. } => "lwzx",
            Lhzx { .. } => "lhzx",
            Lbzx { .. } => "lbzx",
            Stdbrx { .. } => "stdbrx",
            Stwbrx { .. } => "stwbrx",
            Sthbrx { .. } => "sthbrx",
            Ldbrx { .. } => "ldbrx",
            Lwbrx { .. } => "lwbrx",
            Lhbrx { .. } => "lhbrx",
            Lbarx { .. } => "lbarx",
            Lharx { .. } => "lharx",
            Lwarx { .. } => "lwarx",
            Ldarx { .. } => "ldarx",
            Stbcx { .. } => "stbcx.",
            Sthcx { .. } => "sthcx.",
            Stwcx { .. } => "stwcx.",
            Stdcx { .. } => "stdcx.",
            Cmpdi { .. } => "cmpdi",
            Cmpldi { .. } => "cmpldi",
            Cmpd { .. } => "cmpd",
            Cmpld { .. } => "cmpld",
            Cmpwi { .. } => "cmpwi",
            Cmplwi { .. } => "cmplwi",
            Cmpw { .. } => "cmpw",
            Cmplw { .. } => "cmplw",
            Crxor { .. } => "crxor",
            B { .. } => "b",
            Bc { cond, .. } => cond_mnemonic(*cond),
            Bdnz { .. } => "bdnz",
            Blr => "blr",
            Mtctr { .. } => "mtctr",
            Mfctr { .. } => "mfctr",
            Tlbilx { .. } => "tlbilx",
            Tlbivax { .. } => "tlbivax",
            Tlbsx { .. } => "tlbsx",
            Tlbre => "tlbre",
            Tlbwe => "tlbwe",
            Msync => "msync",
            Mbar { .. } => "mbar",
            Mtspr { .. } => "mtspr",
            Mfspr { .. } => "mfspr",
            Wrteei { .. } => "wrteei",
            Wrtee { .. } => "wrtee",
            Mfmsr { .. } => "mfmsr",
            Eieio => "eieio",
            Sync => "sync",
            Lwsync => "lwsync",
            Ptesync => "ptesync",
            Isync => "isync",
            Tlbsync => "tlbsync",
            Nop | FtrB { .. } => "nop",
            Tlbie { .. } => "tlbie",
            Tlbiel { .. } => "tlbiel",
            Slbia { .. } => "slbia",
            // GNU as 2.40 spells the ISA's cp_abort `cpabort` (-mpower9).
            CpAbort => "cpabort",
            Label(_) => "",
        }
    }
}
