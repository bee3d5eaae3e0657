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
    format!("{:#x}", spr.number())
}

/// One instruction's text, written operand by operand into the line (a
/// `format!` per instruction was a fifth of `gen`'s time on large specs).
struct Line<'a> {
    out: &'a mut String,
    style: RegStyle,
    label_name: &'a dyn Fn(Label) -> String,
    operands: usize,
}

impl Line<'_> {
    /// The separator before the next operand: a space, then commas.
    fn sep(&mut self) -> &mut Self {
        self.out.push(if self.operands == 0 { ' ' } else { ',' });
        self.operands += 1;
        self
    }

    fn r(&mut self, n: Reg) -> &mut Self {
        self.sep();
        RegText::new(self.style, n, false).push_to(self.out);
        self
    }

    /// RA0 operands (addi/addis base, every load/store base): GPR 0 in
    /// that slot means literal zero, and GNU as warns ("invalid register
    /// expression") if it is spelled as a register, so print `0`.
    fn r0(&mut self, n: Reg) -> &mut Self {
        self.sep();
        RegText::new(self.style, n, true).push_to(self.out);
        self
    }

    fn int(&mut self, v: impl itoa::Integer) -> &mut Self {
        self.sep();
        self.out.push_str(itoa::Buffer::new().format(v));
        self
    }

    fn raw(&mut self, text: &str) -> &mut Self {
        self.sep();
        self.out.push_str(text);
        self
    }

    fn label(&mut self, l: Label) -> &mut Self {
        let name = (self.label_name)(l);
        self.raw(&name)
    }

    /// A D-form memory operand, `d(ra)`.
    fn mem(&mut self, d: i16, ra: Reg) -> &mut Self {
        self.int(d);
        self.out.push('(');
        RegText::new(self.style, ra, true).push_to(self.out);
        self.out.push(')');
        self
    }
}

impl Insn {
    /// GNU as text (no leading indentation, no newline). Percent style
    /// assembles with plain `as -mpower9`; Bare style needs `-mregnames`.
    /// CR fields/bits are plain numbers in both styles. Labels print as
    /// `name:`.
    pub fn text(&self, style: RegStyle, label_name: &dyn Fn(Label) -> String) -> String {
        let mut out = String::with_capacity(24);
        self.write_text(style, label_name, &mut out);
        out
    }

    /// [`Insn::text`], appended to `out`.
    pub fn write_text(
        &self,
        style: RegStyle,
        label_name: &dyn Fn(Label) -> String,
        out: &mut String,
    ) {
        use Insn::*;
        if let Label(l) = self {
            out.push_str(&label_name(*l));
            return out.push(':');
        }
        if let FtrB { mmu, cap, target } = self {
            let k = if *mmu { "MMU_" } else { "" };
            let target = label_name(*target);
            out.push_str(&format!(
                "BEGIN_{k}FTR_SECTION\n\tnop\n{k}FTR_SECTION_ELSE\n\tb {target}\nALT_{k}FTR_SECTION_END_IFCLR({cap})"
            ));
            return;
        }
        out.push_str(self.mnemonic());
        let mut w = Line {
            out,
            style,
            label_name,
            operands: 0,
        };
        // Each group prints the operands of its kind and passes on the
        // others; every instruction is in one.
        let _ = w.integer(self)
            || w.memory(self)
            || w.control(self)
            || w.book3e(self)
            || w.barrier_invalidate(self);
    }
}

impl Line<'_> {
    /// Integer arithmetic, logicals, shifts, counts and rotates.
    fn integer(&mut self, i: &Insn) -> bool {
        use Insn::*;
        match *i {
            Li { rt, imm } | Lis { rt, imm } => self.r(rt).int(imm),
            Addi { rt, ra, imm } | Addis { rt, ra, imm } => self.r(rt).r0(ra).int(imm),
            Ori { ra, rs, imm }
            | Oris { ra, rs, imm }
            | Xori { ra, rs, imm }
            | Xoris { ra, rs, imm }
            | AndiDot { ra, rs, imm }
            | AndisDot { ra, rs, imm } => self.r(ra).r(rs).int(imm),
            AddicDot { rt, ra, imm } => self.r(rt).r(ra).int(imm),
            Or { ra, rs, rb }
            | And { ra, rs, rb }
            | Xor { ra, rs, rb }
            | Andc { ra, rs, rb }
            | Nor { ra, rs, rb }
            | Sld { ra, rs, rb }
            | Srd { ra, rs, rb } => self.r(ra).r(rs).r(rb),
            Add { rt, ra, rb } | Subf { rt, ra, rb } | Mulld { rt, ra, rb } => {
                self.r(rt).r(ra).r(rb)
            }
            Neg { rt, ra } => self.r(rt).r(ra),
            Rldicl { ra, rs, sh, mb: b }
            | Rldicr { ra, rs, sh, me: b }
            | Rldic { ra, rs, sh, mb: b }
            | Rldimi { ra, rs, sh, mb: b } => self.r(ra).r(rs).int(sh.get()).int(b.get()),
            Rlwinm { ra, rs, sh, mb, me } => {
                self.r(ra).r(rs).int(sh.get()).int(mb.get()).int(me.get())
            }
            Mr { ra, rs } | Cntlzd { ra, rs } | Cnttzd { ra, rs } | Popcntd { ra, rs } => {
                self.r(ra).r(rs)
            }
            _ => return false,
        };
        true
    }

    /// Loads and stores (reserving and conditional included).
    fn memory(&mut self, i: &Insn) -> bool {
        use Insn::*;
        match *i {
            Stw { rs: t, d, ra }
            | Sth { rs: t, d, ra }
            | Stb { rs: t, d, ra }
            | Lwz { rt: t, d, ra }
            | Lhz { rt: t, d, ra }
            | Lbz { rt: t, d, ra } => self.r(t).mem(d, ra),
            Std { rs: t, d, ra } | Ld { rt: t, d, ra } => self.r(t).mem(d.get(), ra),
            LdArg { rt, d, param } => match self.style {
                RegStyle::Percent => self.r(rt).mem(d.get(), Reg::R1),
                RegStyle::Bare => {
                    let slot = format!("STK_PARAM(R{param})(r1)");
                    self.r(rt).raw(&slot)
                }
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
            | Stdcx { rs: t, ra, rb } => self.r(t).r0(ra).r(rb),
            Lbarx { rt, ra, rb, eh: e }
            | Lharx { rt, ra, rb, eh: e }
            | Lwarx { rt, ra, rb, eh: e }
            | Ldarx { rt, ra, rb, eh: e } => {
                self.r(rt).r0(ra).r(rb);
                // The EH hint, printed only when set.
                if e {
                    self.int(1u8);
                }
                self
            }
            _ => return false,
        };
        true
    }

    /// Compares, CR logic, branches, the count register. (Labels and
    /// feature-patched branches are whole lines, printed by the caller.)
    fn control(&mut self, i: &Insn) -> bool {
        use Insn::*;
        match *i {
            Cmpdi { bf, ra, imm } | Cmpwi { bf, ra, imm } => self.int(bf.get()).r(ra).int(imm),
            Cmpldi { bf, ra, imm } | Cmplwi { bf, ra, imm } => self.int(bf.get()).r(ra).int(imm),
            Cmpd { bf, ra, rb }
            | Cmpld { bf, ra, rb }
            | Cmpw { bf, ra, rb }
            | Cmplw { bf, ra, rb } => self.int(bf.get()).r(ra).r(rb),
            Crxor { bt, ba, bb } => self.int(bt.get()).int(ba.get()).int(bb.get()),
            B { target } | Bdnz { target } => self.label(target),
            Bc { bf, target, .. } => self.int(bf.get()).label(target),
            Mtctr { rs: t } | Mfctr { rt: t } => self.r(t),
            Blr => self,
            _ => return false,
        };
        true
    }

    /// Book III-E TLB management, barriers, MAS and MSR accesses.
    fn book3e(&mut self, i: &Insn) -> bool {
        use Insn::*;
        match *i {
            Tlbilx { t, ra, rb } => self.int(t.get()).r0(ra).r(rb),
            Tlbivax { ra, rb } | Tlbsx { ra, rb } => self.r0(ra).r(rb),
            Tlbre | Tlbwe | Msync => self,
            Mbar { mo } if mo.get() == 0 => self,
            Mbar { mo } => self.int(mo.get()),
            // The number (the kernel's SPRN_ names need <asm/reg_booke.h>,
            // which a Book3S kernel tree does not include).
            Mtspr { spr, rs } => self.raw(&spr_text(spr)).r(rs),
            Mfspr { rt, spr } => self.r(rt).raw(&spr_text(spr)),
            Wrteei { e } => self.int(u8::from(e)),
            Wrtee { rs: t } | Mfmsr { rt: t } => self.r(t),
            _ => return false,
        };
        true
    }

    /// Barriers, no-ops and Book III-S invalidations.
    fn barrier_invalidate(&mut self, i: &Insn) -> bool {
        use Insn::*;
        match *i {
            Eieio | Sync | Lwsync | Ptesync | Isync | Tlbsync | Nop | CpAbort => self,
            Slbia { ih } => self.int(ih.get()),
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
            } => self
                .r(rb)
                .r(rs)
                .int(ric.get())
                .int(u8::from(prs))
                .int(u8::from(rr)),
            _ => return false,
        };
        true
    }
}

impl Insn {
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
            AndisDot { .. } => "andis.",
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
            Rlwinm { .. } => "rlwinm",
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
