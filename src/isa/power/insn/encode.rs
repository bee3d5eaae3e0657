//! Binary encoding: operand checks, the instruction forms, one word per
//! instruction, and two-pass assembly with labels.

use super::args::{spr_field, Cond, Label};
use super::regs::Reg;
use super::Insn;

use crate::isa::assembler::{self, Encode, Reach};
pub use crate::isa::assembler::{Assembled, EncodeError};

// ---------------------------------------------------------------------------
// Encoding helpers
// ---------------------------------------------------------------------------

/// Operand validator carrying the instruction index for error reports.
struct Check {
    index: usize,
}

impl Check {
    fn bad(&self, what: &'static str) -> EncodeError {
        EncodeError::BadOperand {
            index: self.index,
            what,
        }
    }
    /// Any 5-bit field (GPR number, CR bit number).
    fn r5(&self, v: u8, what: &'static str) -> Result<u32, EncodeError> {
        if v < 32 {
            Ok(u32::from(v))
        } else {
            Err(self.bad(what))
        }
    }
    /// Unsigned field of `bits` width.
    fn uf(&self, v: u8, bits: u32, what: &'static str) -> Result<u32, EncodeError> {
        if u32::from(v) < (1u32 << bits) {
            Ok(u32::from(v))
        } else {
            Err(self.bad(what))
        }
    }
}

/// Primary opcode occupies ISA bits 0-5.
const fn po(p: u32) -> u32 {
    p << 26
}

/// D-form: PO | RT/RS (6-10) | RA (11-15) | D/SI/UI (16-31).
fn d_form(p: u32, t: u32, a: u32, imm16: u32) -> u32 {
    po(p) | t << 21 | a << 16 | (imm16 & 0xffff)
}

/// X-form (opcode 31): PO | RT/RS (6-10) | RA (11-15) | RB (16-20) | XO (21-30) | Rc/EH (31).
/// XO-form arithmetic (add/subf/neg/mulld) is the same layout with OE=0 at
/// bit 21, so the 9-bit XO shifted by 1 gives the identical word.
fn x_form(xo: u32, t: u32, a: u32, b: u32, bit31: u32) -> u32 {
    po(31) | t << 21 | a << 16 | b << 11 | xo << 1 | bit31
}

/// MD-form (PO 30): RS | RA | sh0:4 (16-20) | mb/me (21-26, stored as
/// mb5||mb0:4, i.e. the 6-bit value rotated right by 1) | XO (27-29) | sh5 (30) | Rc.
fn md_form(xo: u32, s: u32, a: u32, sh: u32, mbe: u32) -> u32 {
    let mbe_field = ((mbe & 0x1f) << 1) | (mbe >> 5);
    po(30) | s << 21 | a << 16 | (sh & 0x1f) << 11 | mbe_field << 5 | xo << 2 | (sh >> 5) << 1
}

/// B-form condition: (BO, bit within the CR field). BO=12 "branch if CR bit
/// set", BO=4 "branch if CR bit clear"; CR field bits are LT=0 GT=1 EQ=2 SO=3.
fn cond_bo_bit(c: Cond) -> (u32, u32) {
    match c {
        Cond::Lt => (12, 0),
        Cond::Gt => (12, 1),
        Cond::Eq => (12, 2),
        Cond::Ne => (4, 2),
        Cond::Ge => (4, 0),
        Cond::Le => (4, 1),
    }
}

/// A field's value as its 16 bits (a signed immediate or displacement).
fn s16(v: i16) -> u32 {
    u32::from(v as u16)
}

/// An unsigned 16-bit immediate.
fn ui16(v: u16) -> u32 {
    u32::from(v)
}

/// Encodes the instructions of one group of forms, None for the others.
type FormGroup<E> = fn(&E, &Insn) -> Result<Option<u32>, EncodeError>;

/// The instruction at `pc` being encoded: its operands' checks, and the
/// labels its branches resolve against.
struct Encoder<'a> {
    c: Check,
    pc: u32,
    resolve: &'a dyn Fn(Label) -> Option<u32>,
}

impl Encoder<'_> {
    fn rt(&self, r: Reg) -> Result<u32, EncodeError> {
        self.c.r5(r, "rt: GPR must be 0..=31")
    }
    fn rs(&self, r: Reg) -> Result<u32, EncodeError> {
        self.c.r5(r, "rs: GPR must be 0..=31")
    }
    fn ra(&self, r: Reg) -> Result<u32, EncodeError> {
        self.c.r5(r, "ra: GPR must be 0..=31")
    }
    fn rb(&self, r: Reg) -> Result<u32, EncodeError> {
        self.c.r5(r, "rb: GPR must be 0..=31")
    }
    fn bf(&self, v: u8) -> Result<u32, EncodeError> {
        self.c.uf(v, 3, "bf: CR field must be 0..=7")
    }
    fn sh6(&self, v: u8) -> Result<u32, EncodeError> {
        self.c.uf(v, 6, "sh: shift must be 0..=63")
    }
    fn mb6(&self, v: u8) -> Result<u32, EncodeError> {
        self.c.uf(v, 6, "mb/me: mask bound must be 0..=63")
    }

    /// Branch displacement relative to `pc`, checked against a signed
    /// field of `bits` bits that is implicitly scaled by 4 (the low two
    /// bits of the target are AA/LK, not address bits).
    fn disp(&self, target: Label, bits: u32) -> Result<u32, EncodeError> {
        let addr = (self.resolve)(target).ok_or(EncodeError::UndefinedLabel(target))?;
        let d = i64::from(addr) - i64::from(self.pc);
        if d & 3 != 0 {
            return Err(self.c.bad("branch target not 4-byte aligned"));
        }
        let lim = 1i64 << (bits + 1); // field counts words: range is +-2^(bits-1) words
        if d < -lim || d >= lim {
            return Err(EncodeError::BranchOutOfRange {
                index: self.c.index,
            });
        }
        Ok((d as u32) & (((1u32 << bits) - 1) << 2))
    }

    /// DS-form (ld/std): the displacement's low 2 bits hold the XO, so
    /// only word-aligned offsets are expressible.
    fn ds(&self, d: i16) -> Result<u32, EncodeError> {
        if d & 3 != 0 {
            Err(self
                .c
                .bad("ds: DS-form displacement must be a multiple of 4"))
        } else {
            Ok(u32::from(d as u16) & 0xfffc)
        }
    }

    /// D-form compare: PO | BF (6-8) | / | L (10) | RA | SI/UI. L=1 selects
    /// the 64-bit (doubleword) comparison.
    fn cmp_imm(&self, p: u32, f: u8, l: u32, a: Reg, imm: u32) -> Result<u32, EncodeError> {
        Ok(po(p) | self.bf(f)? << 23 | l << 21 | self.ra(a)? << 16 | (imm & 0xffff))
    }

    /// X-form compare: cmp XO=0, cmpl XO=32, same BF/L layout.
    fn cmp_reg(&self, xo: u32, f: u8, l: u32, a: Reg, b: Reg) -> Result<u32, EncodeError> {
        Ok(x_form(
            xo,
            self.bf(f)? << 2 | l,
            self.ra(a)?,
            self.rb(b)?,
            0,
        ))
    }

    /// tlbie/tlbiel X-form (v3.0): RS (6-10) | / (11) | RIC (12-13) |
    /// PRS (14) | R (15) | RB (16-20) | XO.
    fn tlbi(&self, xo: u32, b: Reg, s: Reg, ric: u8, prs: u8, r: u8) -> Result<u32, EncodeError> {
        let ric = self.c.uf(ric, 2, "ric: must be 0..=3")?;
        let prs = self.c.uf(prs, 1, "prs: must be 0 or 1")?;
        let r = self.c.uf(r, 1, "r: must be 0 or 1")?;
        Ok(x_form(
            xo,
            self.rs(s)?,
            ric << 2 | prs << 1 | r,
            self.rb(b)?,
            0,
        ))
    }

    fn encode(&self, insn: &Insn) -> Result<u32, EncodeError> {
        // Each group encodes the instructions of its forms and passes on
        // the others.
        let groups: [FormGroup<Self>; 5] = [
            Self::integer,
            Self::load_store,
            Self::compare_branch,
            Self::book3e,
            Self::barrier_invalidate,
        ];
        for group in groups {
            if let Some(w) = group(self, insn)? {
                return Ok(w);
            }
        }
        // Only the pseudo-instruction is in no group.
        Err(self.c.bad("Label is a pseudo-instruction with no encoding"))
    }

    /// Integer arithmetic, logicals, shifts, counts and rotates.
    fn integer(&self, insn: &Insn) -> Result<Option<u32>, EncodeError> {
        use Insn::*;
        #[rustfmt::skip]
        let w = match *insn {
            // D-form arithmetic; li/lis are addi/addis with RA=0 (RA0 means
            // literal zero, not GPR0).
            Li { rt: t, imm } => d_form(14, self.rt(t)?, 0, s16(imm)),
            Lis { rt: t, imm } => d_form(15, self.rt(t)?, 0, s16(imm)),
            Addi { rt: t, ra: a, imm } => d_form(14, self.rt(t)?, self.ra(a)?, s16(imm)),
            Addis { rt: t, ra: a, imm } => d_form(15, self.rt(t)?, self.ra(a)?, s16(imm)),
            // D-form logical: RS is in bits 6-10, RA (destination) in 11-15.
            Ori { ra: a, rs: s, imm } => d_form(24, self.rs(s)?, self.ra(a)?, ui16(imm)),
            Oris { ra: a, rs: s, imm } => d_form(25, self.rs(s)?, self.ra(a)?, ui16(imm)),
            Xori { ra: a, rs: s, imm } => d_form(26, self.rs(s)?, self.ra(a)?, ui16(imm)),
            Xoris { ra: a, rs: s, imm } => d_form(27, self.rs(s)?, self.ra(a)?, ui16(imm)),
            AndiDot { ra: a, rs: s, imm } => d_form(28, self.rs(s)?, self.ra(a)?, ui16(imm)),
            AndisDot { ra: a, rs: s, imm } => d_form(29, self.rs(s)?, self.ra(a)?, ui16(imm)),
            // RA is a register here, r0 included (no RA0 rule).
            AddicDot { rt: t, ra: a, imm } => d_form(13, self.rt(t)?, self.ra(a)?, s16(imm)),
            // X-form logical.
            Or { ra: a, rs: s, rb: b } => x_form(444, self.rs(s)?, self.ra(a)?, self.rb(b)?, 0),
            And { ra: a, rs: s, rb: b } => x_form(28, self.rs(s)?, self.ra(a)?, self.rb(b)?, 0),
            Xor { ra: a, rs: s, rb: b } => x_form(316, self.rs(s)?, self.ra(a)?, self.rb(b)?, 0),
            Andc { ra: a, rs: s, rb: b } => x_form(60, self.rs(s)?, self.ra(a)?, self.rb(b)?, 0),
            Nor { ra: a, rs: s, rb: b } => x_form(124, self.rs(s)?, self.ra(a)?, self.rb(b)?, 0),
            Mr { ra: a, rs: s } => {
                let s = self.rs(s)?;
                x_form(444, s, self.ra(a)?, s, 0)
            }
            // XO-form arithmetic (OE=0, Rc=0).
            Add { rt: t, ra: a, rb: b } => x_form(266, self.rt(t)?, self.ra(a)?, self.rb(b)?, 0),
            Subf { rt: t, ra: a, rb: b } => x_form(40, self.rt(t)?, self.ra(a)?, self.rb(b)?, 0),
            Neg { rt: t, ra: a } => x_form(104, self.rt(t)?, self.ra(a)?, 0, 0),
            Mulld { rt: t, ra: a, rb: b } => x_form(233, self.rt(t)?, self.ra(a)?, self.rb(b)?, 0),
            // X-form shifts.
            Sld { ra: a, rs: s, rb: b } => x_form(27, self.rs(s)?, self.ra(a)?, self.rb(b)?, 0),
            Srd { ra: a, rs: s, rb: b } => x_form(539, self.rs(s)?, self.ra(a)?, self.rb(b)?, 0),
            // X-form one-source logicals, RB field 0, Rc=0.
            Cntlzd { ra: a, rs: s } => x_form(58, self.rs(s)?, self.ra(a)?, 0, 0),
            Cnttzd { ra: a, rs: s } => x_form(570, self.rs(s)?, self.ra(a)?, 0, 0),
            Popcntd { ra: a, rs: s } => x_form(506, self.rs(s)?, self.ra(a)?, 0, 0),
            // MD-form rotates.
            Rldicl { ra: a, rs: s, sh, mb } => md_form(0, self.rs(s)?, self.ra(a)?, self.sh6(sh)?, self.mb6(mb)?),
            Rldicr { ra: a, rs: s, sh, me } => md_form(1, self.rs(s)?, self.ra(a)?, self.sh6(sh)?, self.mb6(me)?),
            // M-form: RS, RA, SH, MB, ME, Rc = 0.
            Rlwinm { ra: a, rs: s, sh, mb, me } => {
                po(21)
                    | self.rs(s)? << 21
                    | self.ra(a)? << 16
                    | self.c.uf(sh, 5, "sh: word shift must be 0..=31")? << 11
                    | self.c.uf(mb, 5, "mb: word mask bound must be 0..=31")? << 6
                    | self.c.uf(me, 5, "me: word mask bound must be 0..=31")? << 1
            }
            Rldic { ra: a, rs: s, sh, mb } => md_form(2, self.rs(s)?, self.ra(a)?, self.sh6(sh)?, self.mb6(mb)?),
            Rldimi { ra: a, rs: s, sh, mb } => md_form(3, self.rs(s)?, self.ra(a)?, self.sh6(sh)?, self.mb6(mb)?),
            _ => return Ok(None),
        };
        Ok(Some(w))
    }

    /// Loads and stores: displacement, indexed, byte-reversed, reserving and
    /// conditional.
    fn load_store(&self, insn: &Insn) -> Result<Option<u32>, EncodeError> {
        use Insn::*;
        #[rustfmt::skip]
        let w = match *insn {
            // DS-form doubleword load/store (XO=0 in bits 30-31).
            Std { rs: s, d, ra: a } => d_form(62, self.rs(s)?, self.ra(a)?, self.ds(d)?),
            Ld { rt: t, d, ra: a } => d_form(58, self.rt(t)?, self.ra(a)?, self.ds(d)?),
            LdArg { rt: t, d, .. } => d_form(58, self.rt(t)?, 1, self.ds(d)?),
            // D-form word/half/byte load/store.
            Stw { rs: s, d, ra: a } => d_form(36, self.rs(s)?, self.ra(a)?, s16(d)),
            Sth { rs: s, d, ra: a } => d_form(44, self.rs(s)?, self.ra(a)?, s16(d)),
            Stb { rs: s, d, ra: a } => d_form(38, self.rs(s)?, self.ra(a)?, s16(d)),
            Lwz { rt: t, d, ra: a } => d_form(32, self.rt(t)?, self.ra(a)?, s16(d)),
            Lhz { rt: t, d, ra: a } => d_form(40, self.rt(t)?, self.ra(a)?, s16(d)),
            Lbz { rt: t, d, ra: a } => d_form(34, self.rt(t)?, self.ra(a)?, s16(d)),
            // X-form indexed load/store.
            Stdx { rs: s, ra: a, rb: b } => x_form(149, self.rs(s)?, self.ra(a)?, self.rb(b)?, 0),
            Stwx { rs: s, ra: a, rb: b } => x_form(151, self.rs(s)?, self.ra(a)?, self.rb(b)?, 0),
            Sthx { rs: s, ra: a, rb: b } => x_form(407, self.rs(s)?, self.ra(a)?, self.rb(b)?, 0),
            Stbx { rs: s, ra: a, rb: b } => x_form(215, self.rs(s)?, self.ra(a)?, self.rb(b)?, 0),
            Ldx { rt: t, ra: a, rb: b } => x_form(21, self.rt(t)?, self.ra(a)?, self.rb(b)?, 0),
            Lwzx { rt: t, ra: a, rb: b } => x_form(23, self.rt(t)?, self.ra(a)?, self.rb(b)?, 0),
            Lhzx { rt: t, ra: a, rb: b } => x_form(279, self.rt(t)?, self.ra(a)?, self.rb(b)?, 0),
            Lbzx { rt: t, ra: a, rb: b } => x_form(87, self.rt(t)?, self.ra(a)?, self.rb(b)?, 0),
            // X-form byte-reversed load/store.
            Stdbrx { rs: s, ra: a, rb: b } => x_form(660, self.rs(s)?, self.ra(a)?, self.rb(b)?, 0),
            Stwbrx { rs: s, ra: a, rb: b } => x_form(662, self.rs(s)?, self.ra(a)?, self.rb(b)?, 0),
            Sthbrx { rs: s, ra: a, rb: b } => x_form(918, self.rs(s)?, self.ra(a)?, self.rb(b)?, 0),
            Ldbrx { rt: t, ra: a, rb: b } => x_form(532, self.rt(t)?, self.ra(a)?, self.rb(b)?, 0),
            Lwbrx { rt: t, ra: a, rb: b } => x_form(534, self.rt(t)?, self.ra(a)?, self.rb(b)?, 0),
            Lhbrx { rt: t, ra: a, rb: b } => x_form(790, self.rt(t)?, self.ra(a)?, self.rb(b)?, 0),
            // X-form load-and-reserve; bit 31 is the EH (exclusive-access) hint.
            Lbarx { rt: t, ra: a, rb: b, eh } => x_form(52, self.rt(t)?, self.ra(a)?, self.rb(b)?, u32::from(eh)),
            Lharx { rt: t, ra: a, rb: b, eh } => x_form(116, self.rt(t)?, self.ra(a)?, self.rb(b)?, u32::from(eh)),
            Lwarx { rt: t, ra: a, rb: b, eh } => x_form(20, self.rt(t)?, self.ra(a)?, self.rb(b)?, u32::from(eh)),
            Ldarx { rt: t, ra: a, rb: b, eh } => x_form(84, self.rt(t)?, self.ra(a)?, self.rb(b)?, u32::from(eh)),
            // X-form store-conditional; bit 31 (Rc) must be 1 ("stwcx." etc.).
            Stbcx { rs: s, ra: a, rb: b } => x_form(694, self.rs(s)?, self.ra(a)?, self.rb(b)?, 1),
            Sthcx { rs: s, ra: a, rb: b } => x_form(726, self.rs(s)?, self.ra(a)?, self.rb(b)?, 1),
            Stwcx { rs: s, ra: a, rb: b } => x_form(150, self.rs(s)?, self.ra(a)?, self.rb(b)?, 1),
            Stdcx { rs: s, ra: a, rb: b } => x_form(214, self.rs(s)?, self.ra(a)?, self.rb(b)?, 1),
            _ => return Ok(None),
        };
        Ok(Some(w))
    }

    /// Compares, CR logic, branches and the count register.
    fn compare_branch(&self, insn: &Insn) -> Result<Option<u32>, EncodeError> {
        use Insn::*;
        #[rustfmt::skip]
        let w = match *insn {
            // Compares: cmpi PO 11 (signed), cmpli PO 10 (unsigned); L=1 for d-forms.
            Cmpdi { bf: f, ra: a, imm } => self.cmp_imm(11, f, 1, a, s16(imm))?,
            Cmpldi { bf: f, ra: a, imm } => self.cmp_imm(10, f, 1, a, ui16(imm))?,
            Cmpwi { bf: f, ra: a, imm } => self.cmp_imm(11, f, 0, a, s16(imm))?,
            Cmplwi { bf: f, ra: a, imm } => self.cmp_imm(10, f, 0, a, ui16(imm))?,
            Cmpd { bf: f, ra: a, rb: b } => self.cmp_reg(0, f, 1, a, b)?,
            Cmpld { bf: f, ra: a, rb: b } => self.cmp_reg(32, f, 1, a, b)?,
            Cmpw { bf: f, ra: a, rb: b } => self.cmp_reg(0, f, 0, a, b)?,
            Cmplw { bf: f, ra: a, rb: b } => self.cmp_reg(32, f, 0, a, b)?,
            // XL-form CR logical: PO 19 | BT | BA | BB | XO 193.
            Crxor { bt, ba, bb } => {
                let bt = self.c.r5(bt, "bt: CR bit must be 0..=31")?;
                let ba = self.c.r5(ba, "ba: CR bit must be 0..=31")?;
                let bb = self.c.r5(bb, "bb: CR bit must be 0..=31")?;
                po(19) | bt << 21 | ba << 16 | bb << 11 | 193 << 1
            }
            // I-form: PO 18 | LI (6-29, word displacement) | AA=0 | LK=0.
            B { target } => po(18) | self.disp(target, 24)?,
            // B-form: PO 16 | BO | BI | BD (16-29) | AA=0 | LK=0.
            Bc { cond, bf: f, target } => {
                let (bo, bit) = cond_bo_bit(cond);
                let bi = self.bf(f)? * 4 + bit;
                po(16) | bo << 21 | bi << 16 | self.disp(target, 14)?
            }
            // bdnz = bc 16,0,target (BO=16: decrement CTR, branch if CTR != 0).
            Bdnz { target } => po(16) | 16 << 21 | self.disp(target, 14)?,
            // XL-form bclr 20,0,0 (BO=20: branch always).
            Blr => po(19) | 20 << 21 | 16 << 1,
            // XFX-form mtspr/mfspr with SPR 9 (CTR); the SPR field is stored
            // with its two 5-bit halves swapped, so 9 lands in bits 11-15.
            Mtctr { rs: s } => x_form(467, self.rs(s)?, 9, 0, 0),
            Mfctr { rt: t } => x_form(339, self.rt(t)?, 9, 0, 0),
            _ => return Ok(None),
        };
        Ok(Some(w))
    }

    /// Book III-E TLB management, barriers, MAS and MSR accesses.
    fn book3e(&self, insn: &Insn) -> Result<Option<u32>, EncodeError> {
        use Insn::*;
        #[rustfmt::skip]
        let w = match *insn {
            // Book III-E. tlbilx: T in bits 9-10 (the RT slot's low two
            // bits; Linux __PPC_T_TLB). RA0 slots: GPR 0 reads as zero.
            Tlbilx { t, ra: a, rb: b } => {
                if !matches!(t, 0 | 1 | 3) {
                    return Err(self.c.bad("t: tlbilx T must be 0, 1 or 3"));
                }
                x_form(18, u32::from(t), self.ra(a)?, self.rb(b)?, 0)
            }
            Tlbivax { ra: a, rb: b } => x_form(786, 0, self.ra(a)?, self.rb(b)?, 0),
            Tlbsx { ra: a, rb: b } => x_form(914, 0, self.ra(a)?, self.rb(b)?, 0),
            Tlbre => x_form(946, 0, 0, 0, 0),
            Tlbwe => x_form(978, 0, 0, 0, 0),
            Msync => x_form(598, 0, 0, 0, 0),
            Mbar { mo } => x_form(854, self.c.uf(mo, 5, "mo: mbar MO must be 0..=31")?, 0, 0, 0),
            Mtspr { spr, rs: s } => {
                let n = spr.number().ok_or_else(|| self.c.bad("spr: no such MAS register"))?;
                po(31) | self.rs(s)? << 21 | spr_field(n) | 467 << 1
            }
            Mfspr { rt: t, spr } => {
                let n = spr.number().ok_or_else(|| self.c.bad("spr: no such MAS register"))?;
                po(31) | self.rt(t)? << 21 | spr_field(n) | 339 << 1
            }
            // wrteei: E in bit 16.
            Wrteei { e } => x_form(163, 0, 0, 0, 0) | u32::from(e) << 15,
            Wrtee { rs: s } => x_form(131, self.rs(s)?, 0, 0, 0),
            Mfmsr { rt: t } => x_form(83, self.rt(t)?, 0, 0, 0),
            _ => return Ok(None),
        };
        Ok(Some(w))
    }

    /// Barriers, no-ops and Book III-S invalidations.
    fn barrier_invalidate(&self, insn: &Insn) -> Result<Option<u32>, EncodeError> {
        use Insn::*;
        #[rustfmt::skip]
        let w = match *insn {
            // X-form barriers. sync's L field (bits 9-10): 0=hwsync,
            // 1=lwsync, 2=ptesync; it lands in the RT slot's low two bits.
            Eieio => x_form(854, 0, 0, 0, 0),
            Sync => x_form(598, 0, 0, 0, 0),
            Lwsync => x_form(598, 1, 0, 0, 0),
            Ptesync => x_form(598, 2, 0, 0, 0),
            // XL-form isync: PO 19, XO 150.
            Isync => po(19) | 150 << 1,
            Tlbsync => x_form(566, 0, 0, 0, 0),
            // Preferred no-op is ori 0,0,0 (D-form).
            // Unpatched, the feature section holds its default: a `nop`.
            Nop | FtrB { .. } => d_form(24, 0, 0, 0),
            Tlbie { rb: b, rs: s, ric, prs, r } => self.tlbi(306, b, s, ric, prs, r)?,
            Tlbiel { rb: b, rs: s, ric, prs, r } => self.tlbi(274, b, s, ric, prs, r)?,
            // X-form PO 31, XO 498; IH in bits 8-10 (the RS slot's low 3).
            Slbia { ih } => {
                if ih > 7 {
                    return Err(self.c.bad("slbia IH must be 0..=7"));
                }
                x_form(498, u32::from(ih), 0, 0, 0)
            }
            // X-form PO 31, XO 838 (Linux PPC_RAW_CP_ABORT 0x7c00068c).
            CpAbort => x_form(838, 0, 0, 0, 0),
            _ => return Ok(None),
        };
        Ok(Some(w))
    }
}

impl Insn {
    /// Encode to one 32-bit instruction word. `pc` is the address of this
    /// instruction and `resolve` maps labels to addresses (same space as
    /// `pc`). `Insn::Label` has no encoding and returns `BadOperand`.
    /// Error indices are 0; [`assemble`] reports the real slice index.
    pub fn encode_word(
        &self,
        pc: u32,
        resolve: &dyn Fn(Label) -> Option<u32>,
    ) -> Result<u32, EncodeError> {
        self.encode_at(pc, resolve, 0)
    }

    fn encode_at(
        &self,
        pc: u32,
        resolve: &dyn Fn(Label) -> Option<u32>,
        index: usize,
    ) -> Result<u32, EncodeError> {
        Encoder {
            c: Check { index },
            pc,
            resolve,
        }
        .encode(self)
    }
}

impl Encode for Insn {
    fn defines(&self) -> Option<Label> {
        match self {
            Insn::Label(l) => Some(*l),
            _ => None,
        }
    }

    /// `b` has a 24-bit word displacement, `bc` and `bdnz` 14 bits (the
    /// feature section's `b` is a `nop` here: the kernel patches it).
    fn branch(&self) -> Option<(Label, Reach)> {
        match *self {
            Insn::B { target } => Some((target, Reach::signed(24, 4))),
            Insn::Bc { target, .. } | Insn::Bdnz { target } => Some((target, Reach::signed(14, 4))),
            _ => None,
        }
    }
}

/// The shared assembler (labels take no space, every label known before
/// any word is encoded, so forward branches work); words in the requested
/// byte order.
pub fn assemble(insns: &[Insn], big_endian: bool) -> Result<Assembled, EncodeError> {
    assembler::assemble(insns, |layout| {
        let resolve = |l: Label| layout.label(l);
        assembler::words(insns, layout, big_endian, |index, insn, pc| {
            insn.encode_at(pc, &resolve, index)
        })
    })
}
