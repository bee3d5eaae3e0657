//! Binary encoding: the instruction forms, one word per instruction, and
//! two-pass assembly with labels. Operands are valid when built (see
//! [`super::imms`]), so only labels are checked here.

use super::args::{spr_field, Cond, Label};
use super::imms::{CrField, Ds, Mb6, Sh6};
use super::regs::Reg;
use super::Insn;

use crate::isa::assembler::{self, Encode, Reach};
pub use crate::isa::assembler::{Assembled, EncodeError};

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
fn md_form(xo: u32, s: Reg, a: Reg, sh: Sh6, mbe: Mb6) -> u32 {
    let (s, a, sh, mbe) = (r(s), r(a), sh.bits(), mbe.bits());
    let mbe_field = ((mbe & 0x1f) << 1) | (mbe >> 5);
    po(30) | s << 21 | a << 16 | (sh & 0x1f) << 11 | mbe_field << 5 | xo << 2 | (sh >> 5) << 1
}

/// B-form condition: (BO, bit within the CR field). Each condition tests
/// one CR field bit (LT=0 GT=1 EQ=2 SO=3), for set (BO=12 "branch if CR
/// bit set": lt, gt, eq) or clear (BO=4: ge, le, ne).
fn cond_bo_bit(c: Cond) -> (u32, u32) {
    let bit = match c {
        Cond::Lt | Cond::Ge => 0,
        Cond::Gt | Cond::Le => 1,
        Cond::Eq | Cond::Ne => 2,
    };
    let bo = if matches!(c, Cond::Lt | Cond::Gt | Cond::Eq) {
        12
    } else {
        4
    };
    (bo, bit)
}

/// A register's 5-bit field (RT, RS, RA, RB).
fn r(x: Reg) -> u32 {
    x.bits()
}

/// SI or D: a signed immediate or displacement as its 16 bits.
fn s16(v: i16) -> u32 {
    u32::from(v as u16)
}

/// UI: an unsigned 16-bit immediate.
fn ui16(v: u16) -> u32 {
    u32::from(v)
}

/// DS-form (ld/std): the displacement's low 2 bits hold the XO (0).
fn ds(d: Ds) -> u32 {
    s16(d.get())
}

/// D-form compare: PO | BF (6-8) | / | L (10) | RA | SI/UI. L=1 selects
/// the 64-bit (doubleword) comparison.
fn cmp_imm(p: u32, f: CrField, l: u32, a: Reg, imm: u32) -> u32 {
    po(p) | f.bits() << 23 | l << 21 | r(a) << 16 | (imm & 0xffff)
}

/// X-form compare: cmp XO=0, cmpl XO=32, same BF/L layout.
fn cmp_reg(xo: u32, f: CrField, l: u32, a: Reg, b: Reg) -> u32 {
    x_form(xo, f.bits() << 2 | l, r(a), r(b), 0)
}

/// tlbie/tlbiel X-form (v3.0): RS (6-10) | / (11) | RIC (12-13) | PRS
/// (14) | R (15) | RB (16-20) | XO.
fn tlbi(xo: u32, b: Reg, s: Reg, ric: super::imms::Ric, prs: bool, rr: bool) -> u32 {
    let fields = ric.bits() << 2 | u32::from(prs) << 1 | u32::from(rr);
    x_form(xo, r(s), fields, r(b), 0)
}

/// Encodes the instructions of one group of forms, None for the others.
type FormGroup<E> = fn(&E, &Insn) -> Result<Option<u32>, EncodeError>;

/// The instruction at `pc` being encoded (its index for error reports),
/// and the labels its branches resolve against.
struct Encoder<'a> {
    index: usize,
    pc: u32,
    resolve: &'a dyn Fn(Label) -> Option<u32>,
}

impl Encoder<'_> {
    fn bad(&self, what: &'static str) -> EncodeError {
        EncodeError::BadOperand {
            index: self.index,
            what,
        }
    }

    /// Branch displacement relative to `pc`, checked against a signed
    /// field of `bits` bits that is implicitly scaled by 4 (the low two
    /// bits of the target are AA/LK, not address bits).
    fn disp(&self, target: Label, bits: u32) -> Result<u32, EncodeError> {
        let addr = (self.resolve)(target).ok_or(EncodeError::UndefinedLabel(target))?;
        let d = i64::from(addr) - i64::from(self.pc);
        if d & 3 != 0 {
            return Err(self.bad("branch target not 4-byte aligned"));
        }
        let lim = 1i64 << (bits + 1); // field counts words: range is +-2^(bits-1) words
        if d < -lim || d >= lim {
            return Err(EncodeError::BranchOutOfRange { index: self.index });
        }
        Ok((d as u32) & (((1u32 << bits) - 1) << 2))
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
        Err(self.bad("Label is a pseudo-instruction with no encoding"))
    }

    /// Integer arithmetic, logicals, shifts, counts and rotates.
    fn integer(&self, insn: &Insn) -> Result<Option<u32>, EncodeError> {
        use Insn::*;
        #[rustfmt::skip]
        let w = match *insn {
            // D-form arithmetic; li/lis are addi/addis with RA=0 (RA0 means
            // literal zero, not GPR0).
            Li { rt: t, imm } => d_form(14, r(t), 0, s16(imm)),
            Lis { rt: t, imm } => d_form(15, r(t), 0, s16(imm)),
            Addi { rt: t, ra: a, imm } => d_form(14, r(t), r(a), s16(imm)),
            Addis { rt: t, ra: a, imm } => d_form(15, r(t), r(a), s16(imm)),
            // D-form logical: RS is in bits 6-10, RA (destination) in 11-15.
            Ori { ra: a, rs: s, imm } => d_form(24, r(s), r(a), ui16(imm)),
            Oris { ra: a, rs: s, imm } => d_form(25, r(s), r(a), ui16(imm)),
            Xori { ra: a, rs: s, imm } => d_form(26, r(s), r(a), ui16(imm)),
            Xoris { ra: a, rs: s, imm } => d_form(27, r(s), r(a), ui16(imm)),
            AndiDot { ra: a, rs: s, imm } => d_form(28, r(s), r(a), ui16(imm)),
            AndisDot { ra: a, rs: s, imm } => d_form(29, r(s), r(a), ui16(imm)),
            // RA is a register here, r0 included (no RA0 rule).
            AddicDot { rt: t, ra: a, imm } => d_form(13, r(t), r(a), s16(imm)),
            // X-form logical.
            Or { ra: a, rs: s, rb: b } => x_form(444, r(s), r(a), r(b), 0),
            And { ra: a, rs: s, rb: b } => x_form(28, r(s), r(a), r(b), 0),
            Xor { ra: a, rs: s, rb: b } => x_form(316, r(s), r(a), r(b), 0),
            Andc { ra: a, rs: s, rb: b } => x_form(60, r(s), r(a), r(b), 0),
            Nor { ra: a, rs: s, rb: b } => x_form(124, r(s), r(a), r(b), 0),
            Mr { ra: a, rs: s } => {
                let s = r(s);
                x_form(444, s, r(a), s, 0)
            }
            // XO-form arithmetic (OE=0, Rc=0).
            Add { rt: t, ra: a, rb: b } => x_form(266, r(t), r(a), r(b), 0),
            Subf { rt: t, ra: a, rb: b } => x_form(40, r(t), r(a), r(b), 0),
            Neg { rt: t, ra: a } => x_form(104, r(t), r(a), 0, 0),
            Mulld { rt: t, ra: a, rb: b } => x_form(233, r(t), r(a), r(b), 0),
            // X-form shifts.
            Sld { ra: a, rs: s, rb: b } => x_form(27, r(s), r(a), r(b), 0),
            Srd { ra: a, rs: s, rb: b } => x_form(539, r(s), r(a), r(b), 0),
            // X-form one-source logicals, RB field 0, Rc=0.
            Cntlzd { ra: a, rs: s } => x_form(58, r(s), r(a), 0, 0),
            Cnttzd { ra: a, rs: s } => x_form(570, r(s), r(a), 0, 0),
            Popcntd { ra: a, rs: s } => x_form(506, r(s), r(a), 0, 0),
            // MD-form rotates.
            Rldicl { ra: a, rs: s, sh, mb } => md_form(0, s, a, sh, mb),
            Rldicr { ra: a, rs: s, sh, me } => md_form(1, s, a, sh, me),
            // M-form: RS, RA, SH, MB, ME, Rc = 0.
            Rlwinm { ra: a, rs: s, sh, mb, me } => {
                po(21)
                    | r(s) << 21
                    | r(a) << 16
                    | sh.bits() << 11
                    | mb.bits() << 6
                    | me.bits() << 1
            }
            Rldic { ra: a, rs: s, sh, mb } => md_form(2, s, a, sh, mb),
            Rldimi { ra: a, rs: s, sh, mb } => md_form(3, s, a, sh, mb),
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
            Std { rs: s, d, ra: a } => d_form(62, r(s), r(a), ds(d)),
            Ld { rt: t, d, ra: a } => d_form(58, r(t), r(a), ds(d)),
            LdArg { rt: t, d, .. } => d_form(58, r(t), 1, ds(d)),
            // D-form word/half/byte load/store.
            Stw { rs: s, d, ra: a } => d_form(36, r(s), r(a), s16(d)),
            Sth { rs: s, d, ra: a } => d_form(44, r(s), r(a), s16(d)),
            Stb { rs: s, d, ra: a } => d_form(38, r(s), r(a), s16(d)),
            Lwz { rt: t, d, ra: a } => d_form(32, r(t), r(a), s16(d)),
            Lhz { rt: t, d, ra: a } => d_form(40, r(t), r(a), s16(d)),
            Lbz { rt: t, d, ra: a } => d_form(34, r(t), r(a), s16(d)),
            // X-form indexed load/store.
            Stdx { rs: s, ra: a, rb: b } => x_form(149, r(s), r(a), r(b), 0),
            Stwx { rs: s, ra: a, rb: b } => x_form(151, r(s), r(a), r(b), 0),
            Sthx { rs: s, ra: a, rb: b } => x_form(407, r(s), r(a), r(b), 0),
            Stbx { rs: s, ra: a, rb: b } => x_form(215, r(s), r(a), r(b), 0),
            Ldx { rt: t, ra: a, rb: b } => x_form(21, r(t), r(a), r(b), 0),
            Lwzx { rt: t, ra: a, rb: b } => x_form(23, r(t), r(a), r(b), 0),
            Lhzx { rt: t, ra: a, rb: b } => x_form(279, r(t), r(a), r(b), 0),
            Lbzx { rt: t, ra: a, rb: b } => x_form(87, r(t), r(a), r(b), 0),
            // X-form byte-reversed load/store.
            Stdbrx { rs: s, ra: a, rb: b } => x_form(660, r(s), r(a), r(b), 0),
            Stwbrx { rs: s, ra: a, rb: b } => x_form(662, r(s), r(a), r(b), 0),
            Sthbrx { rs: s, ra: a, rb: b } => x_form(918, r(s), r(a), r(b), 0),
            Ldbrx { rt: t, ra: a, rb: b } => x_form(532, r(t), r(a), r(b), 0),
            Lwbrx { rt: t, ra: a, rb: b } => x_form(534, r(t), r(a), r(b), 0),
            Lhbrx { rt: t, ra: a, rb: b } => x_form(790, r(t), r(a), r(b), 0),
            // X-form load-and-reserve; bit 31 is the EH (exclusive-access) hint.
            Lbarx { rt: t, ra: a, rb: b, eh } => x_form(52, r(t), r(a), r(b), u32::from(eh)),
            Lharx { rt: t, ra: a, rb: b, eh } => x_form(116, r(t), r(a), r(b), u32::from(eh)),
            Lwarx { rt: t, ra: a, rb: b, eh } => x_form(20, r(t), r(a), r(b), u32::from(eh)),
            Ldarx { rt: t, ra: a, rb: b, eh } => x_form(84, r(t), r(a), r(b), u32::from(eh)),
            // X-form store-conditional; bit 31 (Rc) must be 1 ("stwcx." etc.).
            Stbcx { rs: s, ra: a, rb: b } => x_form(694, r(s), r(a), r(b), 1),
            Sthcx { rs: s, ra: a, rb: b } => x_form(726, r(s), r(a), r(b), 1),
            Stwcx { rs: s, ra: a, rb: b } => x_form(150, r(s), r(a), r(b), 1),
            Stdcx { rs: s, ra: a, rb: b } => x_form(214, r(s), r(a), r(b), 1),
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
            Cmpdi { bf: f, ra: a, imm } => cmp_imm(11, f, 1, a, s16(imm)),
            Cmpldi { bf: f, ra: a, imm } => cmp_imm(10, f, 1, a, ui16(imm)),
            Cmpwi { bf: f, ra: a, imm } => cmp_imm(11, f, 0, a, s16(imm)),
            Cmplwi { bf: f, ra: a, imm } => cmp_imm(10, f, 0, a, ui16(imm)),
            Cmpd { bf: f, ra: a, rb: b } => cmp_reg(0, f, 1, a, b),
            Cmpld { bf: f, ra: a, rb: b } => cmp_reg(32, f, 1, a, b),
            Cmpw { bf: f, ra: a, rb: b } => cmp_reg(0, f, 0, a, b),
            Cmplw { bf: f, ra: a, rb: b } => cmp_reg(32, f, 0, a, b),
            // XL-form CR logical: PO 19 | BT | BA | BB | XO 193.
            Crxor { bt, ba, bb } => po(19) | bt.bits() << 21 | ba.bits() << 16 | bb.bits() << 11 | 193 << 1,
            // I-form: PO 18 | LI (6-29, word displacement) | AA=0 | LK=0.
            B { target } => po(18) | self.disp(target, 24)?,
            // B-form: PO 16 | BO | BI | BD (16-29) | AA=0 | LK=0.
            Bc { cond, bf: f, target } => {
                let (bo, bit) = cond_bo_bit(cond);
                let bi = f.bits() * 4 + bit;
                po(16) | bo << 21 | bi << 16 | self.disp(target, 14)?
            }
            // bdnz = bc 16,0,target (BO=16: decrement CTR, branch if CTR != 0).
            Bdnz { target } => po(16) | 16 << 21 | self.disp(target, 14)?,
            // XL-form bclr 20,0,0 (BO=20: branch always).
            Blr => po(19) | 20 << 21 | 16 << 1,
            // XFX-form mtspr/mfspr with SPR 9 (CTR); the SPR field is stored
            // with its two 5-bit halves swapped, so 9 lands in bits 11-15.
            Mtctr { rs: s } => x_form(467, r(s), 9, 0, 0),
            Mfctr { rt: t } => x_form(339, r(t), 9, 0, 0),
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
            Tlbilx { t, ra: a, rb: b } => x_form(18, u32::from(t.get()), r(a), r(b), 0),
            Tlbivax { ra: a, rb: b } => x_form(786, 0, r(a), r(b), 0),
            Tlbsx { ra: a, rb: b } => x_form(914, 0, r(a), r(b), 0),
            Tlbre => x_form(946, 0, 0, 0, 0),
            Tlbwe => x_form(978, 0, 0, 0, 0),
            Msync => x_form(598, 0, 0, 0, 0),
            Mbar { mo } => x_form(854, mo.bits(), 0, 0, 0),
            Mtspr { spr, rs: s } => po(31) | r(s) << 21 | spr_field(spr.number()) | 467 << 1,
            Mfspr { rt: t, spr } => po(31) | r(t) << 21 | spr_field(spr.number()) | 339 << 1,
            // wrteei: E in bit 16.
            Wrteei { e } => x_form(163, 0, 0, 0, 0) | u32::from(e) << 15,
            Wrtee { rs: s } => x_form(131, r(s), 0, 0, 0),
            Mfmsr { rt: t } => x_form(83, r(t), 0, 0, 0),
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
            Tlbie { rb: b, rs: s, ric, prs, r } => tlbi(306, b, s, ric, prs, r),
            Tlbiel { rb: b, rs: s, ric, prs, r } => tlbi(274, b, s, ric, prs, r),
            // X-form PO 31, XO 498; IH in bits 8-10 (the RS slot's low 3).
            Slbia { ih } => x_form(498, ih.bits(), 0, 0, 0),
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
        Encoder { index, pc, resolve }.encode(self)
    }
}

impl Encode for Insn {
    assembler::defines_label_variant!();

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
