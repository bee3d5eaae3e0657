//! POWER (Power ISA v3.0B, 64-bit) instruction model: binary encoder and
//! GNU-as text printer for the small subset `shootdown` emits.
//!
//! Every instruction is exactly one 32-bit word. Field positions follow the
//! ISA's big-endian bit numbering (bit 0 = MSB), so a field occupying ISA bits
//! `a..=b` is shifted left by `31 - b` in the `u32` word. The byte order of the
//! emitted stream is chosen only at the end (`assemble(.., big_endian)`): the
//! ISA defines instructions as words, and LE mode simply stores each word
//! byte-reversed.
//!
//! Nothing here panics on operand values: every field is range-checked and an
//! out-of-range value yields `EncodeError::BadOperand`.

use rustc_hash::FxHashMap as HashMap;
use std::fmt;

/// General-purpose register number, 0..=31.
pub type Reg = u8;
/// Branch-target label identifier (defined by `Insn::Label`).
pub type Label = u32;

/// Condition tested by a conditional branch, against one CR field.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Cond {
    Lt,
    Gt,
    Eq,
    Ne,
    Ge,
    Le,
}

/// Register spelling in the emitted text.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RegStyle {
    /// `%r3`: accepted by plain GNU as.
    Percent,
    /// `r3`: Linux `ppc_asm.h` style; needs `as -mregnames`.
    Bare,
}

#[rustfmt::skip]
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Insn {
    // integer
    Li { rt: Reg, imm: i16 },
    Lis { rt: Reg, imm: i16 },
    Addi { rt: Reg, ra: Reg, imm: i16 },
    Addis { rt: Reg, ra: Reg, imm: i16 },
    Ori { ra: Reg, rs: Reg, imm: u16 },
    Oris { ra: Reg, rs: Reg, imm: u16 },
    Xori { ra: Reg, rs: Reg, imm: u16 },
    Xoris { ra: Reg, rs: Reg, imm: u16 },
    /// `andi.` (always records CR0).
    AndiDot { ra: Reg, rs: Reg, imm: u16 },
    Or { ra: Reg, rs: Reg, rb: Reg },
    And { ra: Reg, rs: Reg, rb: Reg },
    Xor { ra: Reg, rs: Reg, rb: Reg },
    Andc { ra: Reg, rs: Reg, rb: Reg },
    Nor { ra: Reg, rs: Reg, rb: Reg },
    Add { rt: Reg, ra: Reg, rb: Reg },
    Subf { rt: Reg, ra: Reg, rb: Reg },
    Neg { rt: Reg, ra: Reg },
    Mulld { rt: Reg, ra: Reg, rb: Reg },
    Sld { ra: Reg, rs: Reg, rb: Reg },
    Srd { ra: Reg, rs: Reg, rb: Reg },
    /// Count leading / trailing zeros, population count (64 for 0 in the
    /// counts; `cnttzd` is v3.0, `popcntd` v2.06).
    Cntlzd { ra: Reg, rs: Reg },
    Cnttzd { ra: Reg, rs: Reg },
    Popcntd { ra: Reg, rs: Reg },
    Rldicl { ra: Reg, rs: Reg, sh: u8, mb: u8 },
    Rldicr { ra: Reg, rs: Reg, sh: u8, me: u8 },
    Rldic { ra: Reg, rs: Reg, sh: u8, mb: u8 },
    Rldimi { ra: Reg, rs: Reg, sh: u8, mb: u8 },
    /// `or ra,rs,rs`
    Mr { ra: Reg, rs: Reg },
    // loads/stores, D/DS-form (displacement) and X-form (indexed); *brx are byte-reversed
    Std { rs: Reg, d: i16, ra: Reg },
    Stw { rs: Reg, d: i16, ra: Reg },
    Sth { rs: Reg, d: i16, ra: Reg },
    Stb { rs: Reg, d: i16, ra: Reg },
    Ld { rt: Reg, d: i16, ra: Reg },
    /// `ld rt,d(r1)`: an incoming argument from the caller's parameter
    /// save area, `param` being the argument register the slot belongs to
    /// (r11 for the ninth argument). Linux style prints the kernel's
    /// `STK_PARAM(R11)` for `d`, which follows the ABI the kernel is built
    /// for (ELFv1 or ELFv2 big-endian alike); the bytes use `d`.
    LdArg { rt: Reg, d: i16, param: u8 },
    Lwz { rt: Reg, d: i16, ra: Reg },
    Lhz { rt: Reg, d: i16, ra: Reg },
    Lbz { rt: Reg, d: i16, ra: Reg },
    Stdx { rs: Reg, ra: Reg, rb: Reg },
    Stwx { rs: Reg, ra: Reg, rb: Reg },
    Sthx { rs: Reg, ra: Reg, rb: Reg },
    Stbx { rs: Reg, ra: Reg, rb: Reg },
    Ldx { rt: Reg, ra: Reg, rb: Reg },
    Lwzx { rt: Reg, ra: Reg, rb: Reg },
    Lhzx { rt: Reg, ra: Reg, rb: Reg },
    Lbzx { rt: Reg, ra: Reg, rb: Reg },
    Stdbrx { rs: Reg, ra: Reg, rb: Reg },
    Stwbrx { rs: Reg, ra: Reg, rb: Reg },
    Sthbrx { rs: Reg, ra: Reg, rb: Reg },
    Ldbrx { rt: Reg, ra: Reg, rb: Reg },
    Lwbrx { rt: Reg, ra: Reg, rb: Reg },
    Lhbrx { rt: Reg, ra: Reg, rb: Reg },
    // reservations (EH hint bit included; printed as ",1" only when eh is true)
    Lbarx { rt: Reg, ra: Reg, rb: Reg, eh: bool },
    Lharx { rt: Reg, ra: Reg, rb: Reg, eh: bool },
    Lwarx { rt: Reg, ra: Reg, rb: Reg, eh: bool },
    Ldarx { rt: Reg, ra: Reg, rb: Reg, eh: bool },
    Stbcx { rs: Reg, ra: Reg, rb: Reg },
    Sthcx { rs: Reg, ra: Reg, rb: Reg },
    Stwcx { rs: Reg, ra: Reg, rb: Reg },
    Stdcx { rs: Reg, ra: Reg, rb: Reg },
    // compares into CR field bf (0..=7)
    Cmpdi { bf: u8, ra: Reg, imm: i16 },
    Cmpldi { bf: u8, ra: Reg, imm: u16 },
    Cmpd { bf: u8, ra: Reg, rb: Reg },
    Cmpld { bf: u8, ra: Reg, rb: Reg },
    Cmpwi { bf: u8, ra: Reg, imm: i16 },
    Cmplwi { bf: u8, ra: Reg, imm: u16 },
    Cmpw { bf: u8, ra: Reg, rb: Reg },
    Cmplw { bf: u8, ra: Reg, rb: Reg },
    /// CR bit numbers 0..=31; `crclr x` is `crxor x,x,x`.
    Crxor { bt: u8, ba: u8, bb: u8 },
    // control flow (branch targets are labels, resolved by assemble)
    B { target: Label },
    Bc { cond: Cond, bf: u8, target: Label },
    Bdnz { target: Label },
    Blr,
    Mtctr { rs: Reg },
    Mfctr { rt: Reg },
    // barriers and invalidation
    Eieio,
    Sync,
    Lwsync,
    Ptesync,
    Isync,
    Tlbsync,
    Nop,
    /// `nop`, patched by the kernel into `b target` when the CPU has
    /// capability `cap` (a feature section, `<asm/feature-fixups.h>`:
    /// `BEGIN_FTR_SECTION nop FTR_SECTION_ELSE b target
    /// ALT_FTR_SECTION_END_IFCLR(cap)`; `mmu`: the MMU_FTR_ form). The
    /// patcher rebases a branch that leaves the alternative. Linux style
    /// only.
    FtrB { mmu: bool, cap: String, target: Label },
    Tlbie { rb: Reg, rs: Reg, ric: u8, prs: u8, r: u8 },
    Tlbiel { rb: Reg, rs: Reg, ric: u8, prs: u8, r: u8 },
    /// `slbia IH` (ISA 3.0): with radix, invalidates ERAT entries of the
    /// class IH selects (Linux PPC_RADIX_INVALIDATE_ERAT_USER: IH=3).
    Slbia { ih: u8 },
    /// `cp_abort` (ISA 3.0): clears the copy-paste buffer; Linux issues it
    /// after `tlbiel` on ISA 3.1 (ppc_after_tlbiel_barrier).
    CpAbort,
    /// Pseudo: no bytes, defines a branch target.
    Label(Label),
}

/// Output of [`assemble`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Assembled {
    pub bytes: Vec<u8>,
    /// `offsets[i]` = byte offset of `insns[i]` (for a label: offset of the next insn).
    pub offsets: Vec<u32>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EncodeError {
    UndefinedLabel(Label),
    DuplicateLabel(Label),
    /// `index` is the position in the slice given to [`assemble`]; 0 when
    /// produced by a standalone [`Insn::encode_word`] call.
    BranchOutOfRange {
        index: usize,
    },
    /// `index` as for `BranchOutOfRange`; `what` names the offending operand.
    BadOperand {
        index: usize,
        what: &'static str,
    },
}

impl fmt::Display for EncodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EncodeError::UndefinedLabel(l) => write!(f, "undefined label {l}"),
            EncodeError::DuplicateLabel(l) => write!(f, "label {l} defined more than once"),
            EncodeError::BranchOutOfRange { index } => {
                write!(f, "instruction {index}: branch displacement out of range")
            }
            EncodeError::BadOperand { index, what } => {
                write!(f, "instruction {index}: bad operand: {what}")
            }
        }
    }
}

impl std::error::Error for EncodeError {}

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
        use Insn::*;
        let c = Check { index };
        // Branch displacement relative to `pc`, checked against a signed
        // field of `bits` bits that is implicitly scaled by 4 (the low two
        // bits of the target are AA/LK, not address bits).
        let disp = |target: self::Label, bits: u32| -> Result<u32, EncodeError> {
            let addr = resolve(target).ok_or(EncodeError::UndefinedLabel(target))?;
            let d = i64::from(addr) - i64::from(pc);
            if d & 3 != 0 {
                return Err(c.bad("branch target not 4-byte aligned"));
            }
            let lim = 1i64 << (bits + 1); // field counts words: range is +-2^(bits-1) words
            if d < -lim || d >= lim {
                return Err(EncodeError::BranchOutOfRange { index });
            }
            Ok((d as u32) & (((1u32 << bits) - 1) << 2))
        };
        let rt = |r: Reg| c.r5(r, "rt: GPR must be 0..=31");
        let rs = |r: Reg| c.r5(r, "rs: GPR must be 0..=31");
        let ra = |r: Reg| c.r5(r, "ra: GPR must be 0..=31");
        let rb = |r: Reg| c.r5(r, "rb: GPR must be 0..=31");
        let bf = |v: u8| c.uf(v, 3, "bf: CR field must be 0..=7");
        let sh6 = |v: u8| c.uf(v, 6, "sh: shift must be 0..=63");
        let mb6 = |v: u8| c.uf(v, 6, "mb/me: mask bound must be 0..=63");
        let s16 = |v: i16| u32::from(v as u16);
        let u16_ = u32::from;
        // DS-form (ld/std): the displacement's low 2 bits hold the XO, so
        // only word-aligned offsets are expressible.
        let ds = |d: i16| -> Result<u32, EncodeError> {
            if d & 3 != 0 {
                Err(c.bad("ds: DS-form displacement must be a multiple of 4"))
            } else {
                Ok(u32::from(d as u16) & 0xfffc)
            }
        };
        // D-form compare: PO | BF (6-8) | / | L (10) | RA | SI/UI. L=1 selects
        // the 64-bit (doubleword) comparison.
        let cmp_imm = |p: u32, f: u8, l: u32, a: Reg, imm: u32| -> Result<u32, EncodeError> {
            Ok(po(p) | bf(f)? << 23 | l << 21 | ra(a)? << 16 | (imm & 0xffff))
        };
        // X-form compare: cmp XO=0, cmpl XO=32, same BF/L layout.
        let cmp_reg = |xo: u32, f: u8, l: u32, a: Reg, b: Reg| -> Result<u32, EncodeError> {
            Ok(x_form(xo, bf(f)? << 2 | l, ra(a)?, rb(b)?, 0))
        };
        // tlbie/tlbiel X-form (v3.0): RS (6-10) | / (11) | RIC (12-13) |
        // PRS (14) | R (15) | RB (16-20) | XO.
        let tlbi = |xo: u32, b: Reg, s: Reg, ric: u8, prs: u8, r: u8| -> Result<u32, EncodeError> {
            let ric = c.uf(ric, 2, "ric: must be 0..=3")?;
            let prs = c.uf(prs, 1, "prs: must be 0 or 1")?;
            let r = c.uf(r, 1, "r: must be 0 or 1")?;
            Ok(x_form(xo, rs(s)?, ric << 2 | prs << 1 | r, rb(b)?, 0))
        };
        #[rustfmt::skip]
        let w = match *self {
            // D-form arithmetic; li/lis are addi/addis with RA=0 (RA0 means
            // literal zero, not GPR0).
            Li { rt: t, imm } => d_form(14, rt(t)?, 0, s16(imm)),
            Lis { rt: t, imm } => d_form(15, rt(t)?, 0, s16(imm)),
            Addi { rt: t, ra: a, imm } => d_form(14, rt(t)?, ra(a)?, s16(imm)),
            Addis { rt: t, ra: a, imm } => d_form(15, rt(t)?, ra(a)?, s16(imm)),
            // D-form logical: RS is in bits 6-10, RA (destination) in 11-15.
            Ori { ra: a, rs: s, imm } => d_form(24, rs(s)?, ra(a)?, u16_(imm)),
            Oris { ra: a, rs: s, imm } => d_form(25, rs(s)?, ra(a)?, u16_(imm)),
            Xori { ra: a, rs: s, imm } => d_form(26, rs(s)?, ra(a)?, u16_(imm)),
            Xoris { ra: a, rs: s, imm } => d_form(27, rs(s)?, ra(a)?, u16_(imm)),
            AndiDot { ra: a, rs: s, imm } => d_form(28, rs(s)?, ra(a)?, u16_(imm)),
            // X-form logical.
            Or { ra: a, rs: s, rb: b } => x_form(444, rs(s)?, ra(a)?, rb(b)?, 0),
            And { ra: a, rs: s, rb: b } => x_form(28, rs(s)?, ra(a)?, rb(b)?, 0),
            Xor { ra: a, rs: s, rb: b } => x_form(316, rs(s)?, ra(a)?, rb(b)?, 0),
            Andc { ra: a, rs: s, rb: b } => x_form(60, rs(s)?, ra(a)?, rb(b)?, 0),
            Nor { ra: a, rs: s, rb: b } => x_form(124, rs(s)?, ra(a)?, rb(b)?, 0),
            Mr { ra: a, rs: s } => {
                let s = rs(s)?;
                x_form(444, s, ra(a)?, s, 0)
            }
            // XO-form arithmetic (OE=0, Rc=0).
            Add { rt: t, ra: a, rb: b } => x_form(266, rt(t)?, ra(a)?, rb(b)?, 0),
            Subf { rt: t, ra: a, rb: b } => x_form(40, rt(t)?, ra(a)?, rb(b)?, 0),
            Neg { rt: t, ra: a } => x_form(104, rt(t)?, ra(a)?, 0, 0),
            Mulld { rt: t, ra: a, rb: b } => x_form(233, rt(t)?, ra(a)?, rb(b)?, 0),
            // X-form shifts.
            Sld { ra: a, rs: s, rb: b } => x_form(27, rs(s)?, ra(a)?, rb(b)?, 0),
            Srd { ra: a, rs: s, rb: b } => x_form(539, rs(s)?, ra(a)?, rb(b)?, 0),
            // X-form one-source logicals, RB field 0, Rc=0.
            Cntlzd { ra: a, rs: s } => x_form(58, rs(s)?, ra(a)?, 0, 0),
            Cnttzd { ra: a, rs: s } => x_form(570, rs(s)?, ra(a)?, 0, 0),
            Popcntd { ra: a, rs: s } => x_form(506, rs(s)?, ra(a)?, 0, 0),
            // MD-form rotates.
            Rldicl { ra: a, rs: s, sh, mb } => md_form(0, rs(s)?, ra(a)?, sh6(sh)?, mb6(mb)?),
            Rldicr { ra: a, rs: s, sh, me } => md_form(1, rs(s)?, ra(a)?, sh6(sh)?, mb6(me)?),
            Rldic { ra: a, rs: s, sh, mb } => md_form(2, rs(s)?, ra(a)?, sh6(sh)?, mb6(mb)?),
            Rldimi { ra: a, rs: s, sh, mb } => md_form(3, rs(s)?, ra(a)?, sh6(sh)?, mb6(mb)?),
            // DS-form doubleword load/store (XO=0 in bits 30-31).
            Std { rs: s, d, ra: a } => d_form(62, rs(s)?, ra(a)?, ds(d)?),
            Ld { rt: t, d, ra: a } => d_form(58, rt(t)?, ra(a)?, ds(d)?),
            LdArg { rt: t, d, .. } => d_form(58, rt(t)?, 1, ds(d)?),
            // D-form word/half/byte load/store.
            Stw { rs: s, d, ra: a } => d_form(36, rs(s)?, ra(a)?, s16(d)),
            Sth { rs: s, d, ra: a } => d_form(44, rs(s)?, ra(a)?, s16(d)),
            Stb { rs: s, d, ra: a } => d_form(38, rs(s)?, ra(a)?, s16(d)),
            Lwz { rt: t, d, ra: a } => d_form(32, rt(t)?, ra(a)?, s16(d)),
            Lhz { rt: t, d, ra: a } => d_form(40, rt(t)?, ra(a)?, s16(d)),
            Lbz { rt: t, d, ra: a } => d_form(34, rt(t)?, ra(a)?, s16(d)),
            // X-form indexed load/store.
            Stdx { rs: s, ra: a, rb: b } => x_form(149, rs(s)?, ra(a)?, rb(b)?, 0),
            Stwx { rs: s, ra: a, rb: b } => x_form(151, rs(s)?, ra(a)?, rb(b)?, 0),
            Sthx { rs: s, ra: a, rb: b } => x_form(407, rs(s)?, ra(a)?, rb(b)?, 0),
            Stbx { rs: s, ra: a, rb: b } => x_form(215, rs(s)?, ra(a)?, rb(b)?, 0),
            Ldx { rt: t, ra: a, rb: b } => x_form(21, rt(t)?, ra(a)?, rb(b)?, 0),
            Lwzx { rt: t, ra: a, rb: b } => x_form(23, rt(t)?, ra(a)?, rb(b)?, 0),
            Lhzx { rt: t, ra: a, rb: b } => x_form(279, rt(t)?, ra(a)?, rb(b)?, 0),
            Lbzx { rt: t, ra: a, rb: b } => x_form(87, rt(t)?, ra(a)?, rb(b)?, 0),
            // X-form byte-reversed load/store.
            Stdbrx { rs: s, ra: a, rb: b } => x_form(660, rs(s)?, ra(a)?, rb(b)?, 0),
            Stwbrx { rs: s, ra: a, rb: b } => x_form(662, rs(s)?, ra(a)?, rb(b)?, 0),
            Sthbrx { rs: s, ra: a, rb: b } => x_form(918, rs(s)?, ra(a)?, rb(b)?, 0),
            Ldbrx { rt: t, ra: a, rb: b } => x_form(532, rt(t)?, ra(a)?, rb(b)?, 0),
            Lwbrx { rt: t, ra: a, rb: b } => x_form(534, rt(t)?, ra(a)?, rb(b)?, 0),
            Lhbrx { rt: t, ra: a, rb: b } => x_form(790, rt(t)?, ra(a)?, rb(b)?, 0),
            // X-form load-and-reserve; bit 31 is the EH (exclusive-access) hint.
            Lbarx { rt: t, ra: a, rb: b, eh } => x_form(52, rt(t)?, ra(a)?, rb(b)?, u32::from(eh)),
            Lharx { rt: t, ra: a, rb: b, eh } => x_form(116, rt(t)?, ra(a)?, rb(b)?, u32::from(eh)),
            Lwarx { rt: t, ra: a, rb: b, eh } => x_form(20, rt(t)?, ra(a)?, rb(b)?, u32::from(eh)),
            Ldarx { rt: t, ra: a, rb: b, eh } => x_form(84, rt(t)?, ra(a)?, rb(b)?, u32::from(eh)),
            // X-form store-conditional; bit 31 (Rc) must be 1 ("stwcx." etc.).
            Stbcx { rs: s, ra: a, rb: b } => x_form(694, rs(s)?, ra(a)?, rb(b)?, 1),
            Sthcx { rs: s, ra: a, rb: b } => x_form(726, rs(s)?, ra(a)?, rb(b)?, 1),
            Stwcx { rs: s, ra: a, rb: b } => x_form(150, rs(s)?, ra(a)?, rb(b)?, 1),
            Stdcx { rs: s, ra: a, rb: b } => x_form(214, rs(s)?, ra(a)?, rb(b)?, 1),
            // Compares: cmpi PO 11 (signed), cmpli PO 10 (unsigned); L=1 for d-forms.
            Cmpdi { bf: f, ra: a, imm } => cmp_imm(11, f, 1, a, s16(imm))?,
            Cmpldi { bf: f, ra: a, imm } => cmp_imm(10, f, 1, a, u16_(imm))?,
            Cmpwi { bf: f, ra: a, imm } => cmp_imm(11, f, 0, a, s16(imm))?,
            Cmplwi { bf: f, ra: a, imm } => cmp_imm(10, f, 0, a, u16_(imm))?,
            Cmpd { bf: f, ra: a, rb: b } => cmp_reg(0, f, 1, a, b)?,
            Cmpld { bf: f, ra: a, rb: b } => cmp_reg(32, f, 1, a, b)?,
            Cmpw { bf: f, ra: a, rb: b } => cmp_reg(0, f, 0, a, b)?,
            Cmplw { bf: f, ra: a, rb: b } => cmp_reg(32, f, 0, a, b)?,
            // XL-form CR logical: PO 19 | BT | BA | BB | XO 193.
            Crxor { bt, ba, bb } => {
                let bt = c.r5(bt, "bt: CR bit must be 0..=31")?;
                let ba = c.r5(ba, "ba: CR bit must be 0..=31")?;
                let bb = c.r5(bb, "bb: CR bit must be 0..=31")?;
                po(19) | bt << 21 | ba << 16 | bb << 11 | 193 << 1
            }
            // I-form: PO 18 | LI (6-29, word displacement) | AA=0 | LK=0.
            B { target } => po(18) | disp(target, 24)?,
            // B-form: PO 16 | BO | BI | BD (16-29) | AA=0 | LK=0.
            Bc { cond, bf: f, target } => {
                let (bo, bit) = cond_bo_bit(cond);
                let bi = bf(f)? * 4 + bit;
                po(16) | bo << 21 | bi << 16 | disp(target, 14)?
            }
            // bdnz = bc 16,0,target (BO=16: decrement CTR, branch if CTR != 0).
            Bdnz { target } => po(16) | 16 << 21 | disp(target, 14)?,
            // XL-form bclr 20,0,0 (BO=20: branch always).
            Blr => po(19) | 20 << 21 | 16 << 1,
            // XFX-form mtspr/mfspr with SPR 9 (CTR); the SPR field is stored
            // with its two 5-bit halves swapped, so 9 lands in bits 11-15.
            Mtctr { rs: s } => x_form(467, rs(s)?, 9, 0, 0),
            Mfctr { rt: t } => x_form(339, rt(t)?, 9, 0, 0),
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
            Tlbie { rb: b, rs: s, ric, prs, r } => tlbi(306, b, s, ric, prs, r)?,
            Tlbiel { rb: b, rs: s, ric, prs, r } => tlbi(274, b, s, ric, prs, r)?,
            // X-form PO 31, XO 498; IH in bits 8-10 (the RS slot's low 3).
            Slbia { ih } => {
                if ih > 7 {
                    return Err(c.bad("slbia IH must be 0..=7"));
                }
                x_form(498, u32::from(ih), 0, 0, 0)
            }
            // X-form PO 31, XO 838 (Linux PPC_RAW_CP_ABORT 0x7c00068c).
            CpAbort => x_form(838, 0, 0, 0, 0),
            Label(_) => return Err(c.bad("Label is a pseudo-instruction with no encoding")),
        };
        Ok(w)
    }

    /// GNU as text (no leading indentation, no newline). Percent style
    /// assembles with plain `as -mpower9`; Bare style needs `-mregnames`.
    /// CR fields/bits are plain numbers in both styles. Labels print as
    /// `name:`. Operands are printed verbatim, so out-of-range values give
    /// text the assembler will reject rather than a panic.
    pub fn text(&self, style: RegStyle, label_name: &dyn Fn(Label) -> String) -> String {
        use Insn::*;
        let p = match style {
            RegStyle::Percent => "%r",
            RegStyle::Bare => "r",
        };
        let r = |n: Reg| RegText {
            prefix: p,
            n,
            zero_is_literal: false,
        };
        // RA0 operands (addi/addis base, every load/store base): GPR 0 in
        // that slot means literal zero, and GNU as warns ("invalid register
        // expression") if it is spelled as a register, so print `0`.
        let r0 = |n: Reg| RegText {
            prefix: p,
            n,
            zero_is_literal: true,
        };
        let m = self.mnemonic();
        let eh = |e: bool| if e { ",1" } else { "" };
        match self {
            Li { rt, imm } | Lis { rt, imm } => format!("{m} {},{imm}", r(*rt)),
            Addi { rt, ra, imm } | Addis { rt, ra, imm } => {
                format!("{m} {},{},{imm}", r(*rt), r0(*ra))
            }
            Ori { ra, rs, imm }
            | Oris { ra, rs, imm }
            | Xori { ra, rs, imm }
            | Xoris { ra, rs, imm }
            | AndiDot { ra, rs, imm } => format!("{m} {},{},{imm}", r(*ra), r(*rs)),
            Or { ra, rs, rb }
            | And { ra, rs, rb }
            | Xor { ra, rs, rb }
            | Andc { ra, rs, rb }
            | Nor { ra, rs, rb }
            | Sld { ra, rs, rb }
            | Srd { ra, rs, rb } => format!("{m} {},{},{}", r(*ra), r(*rs), r(*rb)),
            Add { rt, ra, rb } | Subf { rt, ra, rb } | Mulld { rt, ra, rb } => {
                format!("{m} {},{},{}", r(*rt), r(*ra), r(*rb))
            }
            Neg { rt, ra } => format!("{m} {},{}", r(*rt), r(*ra)),
            Rldicl { ra, rs, sh, mb: b }
            | Rldicr { ra, rs, sh, me: b }
            | Rldic { ra, rs, sh, mb: b }
            | Rldimi { ra, rs, sh, mb: b } => format!("{m} {},{},{sh},{b}", r(*ra), r(*rs)),
            Mr { ra, rs } | Cntlzd { ra, rs } | Cnttzd { ra, rs } | Popcntd { ra, rs } => {
                format!("{m} {},{}", r(*ra), r(*rs))
            }
            Std { rs: t, d, ra }
            | Stw { rs: t, d, ra }
            | Sth { rs: t, d, ra }
            | Stb { rs: t, d, ra }
            | Ld { rt: t, d, ra }
            | Lwz { rt: t, d, ra }
            | Lhz { rt: t, d, ra }
            | Lbz { rt: t, d, ra } => format!("{m} {},{d}({})", r(*t), r0(*ra)),
            LdArg { rt, d, param } => match style {
                RegStyle::Percent => format!("{m} {},{d}({})", r(*rt), r(1)),
                RegStyle::Bare => format!("{m} {},STK_PARAM(R{param})({})", r(*rt), r(1)),
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
            | Stdcx { rs: t, ra, rb } => format!("{m} {},{},{}", r(*t), r0(*ra), r(*rb)),
            Lbarx { rt, ra, rb, eh: e }
            | Lharx { rt, ra, rb, eh: e }
            | Lwarx { rt, ra, rb, eh: e }
            | Ldarx { rt, ra, rb, eh: e } => {
                format!("{m} {},{},{}{}", r(*rt), r0(*ra), r(*rb), eh(*e))
            }
            Cmpdi { bf, ra, imm } | Cmpwi { bf, ra, imm } => format!("{m} {bf},{},{imm}", r(*ra)),
            Cmpldi { bf, ra, imm } | Cmplwi { bf, ra, imm } => {
                format!("{m} {bf},{},{imm}", r(*ra))
            }
            Cmpd { bf, ra, rb }
            | Cmpld { bf, ra, rb }
            | Cmpw { bf, ra, rb }
            | Cmplw { bf, ra, rb } => {
                format!("{m} {bf},{},{}", r(*ra), r(*rb))
            }
            Crxor { bt, ba, bb } => format!("{m} {bt},{ba},{bb}"),
            B { target } | Bdnz { target } => format!("{m} {}", label_name(*target)),
            Bc { bf, target, .. } => format!("{m} {bf},{}", label_name(*target)),
            Mtctr { rs: t } | Mfctr { rt: t } => format!("{m} {}", r(*t)),
            Blr | Eieio | Sync | Lwsync | Ptesync | Isync | Tlbsync | Nop | CpAbort => {
                m.to_string()
            }
            Slbia { ih } => format!("{m} {ih}"),
            FtrB { mmu, cap, target } => {
                let k = if *mmu { "MMU_" } else { "" };
                format!(
                    "BEGIN_{k}FTR_SECTION\n\tnop\n{k}FTR_SECTION_ELSE\n\tb {}\nALT_{k}FTR_SECTION_END_IFCLR({cap})",
                    label_name(*target)
                )
            }
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
                format!("{m} {},{},{ric},{prs},{rr}", r(*rb), r(*rs))
            }
            Label(l) => format!("{}:", label_name(*l)),
        }
    }

    /// Memory or ordering barrier. `tlbsync` counts: it orders/waits for
    /// completion of preceding `tlbie`s rather than invalidating anything.
    pub fn is_barrier(&self) -> bool {
        use Insn::*;
        matches!(
            self,
            Eieio | Sync | Lwsync | Ptesync | Isync | Tlbsync | CpAbort
        )
    }

    /// Writes memory (store-conditional included).
    pub fn is_store(&self) -> bool {
        use Insn::*;
        matches!(
            self,
            Std { .. }
                | Stw { .. }
                | Sth { .. }
                | Stb { .. }
                | Stdx { .. }
                | Stwx { .. }
                | Sthx { .. }
                | Stbx { .. }
                | Stdbrx { .. }
                | Stwbrx { .. }
                | Sthbrx { .. }
                | Stbcx { .. }
                | Sthcx { .. }
                | Stwcx { .. }
                | Stdcx { .. }
        )
    }

    /// Reads memory (load-and-reserve included; `li`/`lis` are not loads).
    pub fn is_load(&self) -> bool {
        use Insn::*;
        matches!(
            self,
            Ld { .. }
                | LdArg { .. }
                | Lwz { .. }
                | Lhz { .. }
                | Lbz { .. }
                | Ldx { .. }
                | Lwzx { .. }
                | Lhzx { .. }
                | Lbzx { .. }
                | Ldbrx { .. }
                | Lwbrx { .. }
                | Lhbrx { .. }
                | Lbarx { .. }
                | Lharx { .. }
                | Lwarx { .. }
                | Ldarx { .. }
        )
    }

    /// TLB invalidation (`tlbie`, `tlbiel`).
    pub fn is_invalidate(&self) -> bool {
        matches!(
            self,
            Insn::Tlbie { .. } | Insn::Tlbiel { .. } | Insn::Slbia { .. }
        )
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

/// Two-pass assembly: pass 1 assigns offsets (labels take no space) and
/// collects label definitions; pass 2 encodes with all labels known, so
/// forward branches work. Words are stored in the requested byte order.
pub fn assemble(insns: &[Insn], big_endian: bool) -> Result<Assembled, EncodeError> {
    let mut offsets = Vec::with_capacity(insns.len());
    let mut labels: HashMap<Label, u32> = HashMap::default();
    let mut pc: u32 = 0;
    for (index, insn) in insns.iter().enumerate() {
        offsets.push(pc);
        if let Insn::Label(l) = insn {
            if labels.insert(*l, pc).is_some() {
                return Err(EncodeError::DuplicateLabel(*l));
            }
        } else {
            pc = pc.checked_add(4).ok_or(EncodeError::BadOperand {
                index,
                what: "program exceeds 4 GiB",
            })?;
        }
    }
    let resolve = |l: Label| labels.get(&l).copied();
    let mut bytes = Vec::with_capacity(pc as usize);
    for (index, insn) in insns.iter().enumerate() {
        if matches!(insn, Insn::Label(_)) {
            continue;
        }
        let w = insn.encode_at(offsets[index], &resolve, index)?;
        bytes.extend_from_slice(&if big_endian {
            w.to_be_bytes()
        } else {
            w.to_le_bytes()
        });
    }
    Ok(Assembled { bytes, offsets })
}

/// A register operand as GNU as spells it. Display from a table of names,
/// so an instruction's text costs one allocation and no integer formatting
/// per operand.
struct RegText {
    prefix: &'static str,
    n: Reg,
    zero_is_literal: bool,
}

const PERCENT_NAMES: [&str; 32] = [
    "%r0", "%r1", "%r2", "%r3", "%r4", "%r5", "%r6", "%r7", "%r8", "%r9", "%r10", "%r11", "%r12",
    "%r13", "%r14", "%r15", "%r16", "%r17", "%r18", "%r19", "%r20", "%r21", "%r22", "%r23", "%r24",
    "%r25", "%r26", "%r27", "%r28", "%r29", "%r30", "%r31",
];
const BARE_NAMES: [&str; 32] = [
    "r0", "r1", "r2", "r3", "r4", "r5", "r6", "r7", "r8", "r9", "r10", "r11", "r12", "r13", "r14",
    "r15", "r16", "r17", "r18", "r19", "r20", "r21", "r22", "r23", "r24", "r25", "r26", "r27",
    "r28", "r29", "r30", "r31",
];

impl std::fmt::Display for RegText {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.zero_is_literal && self.n == 0 {
            return f.write_str("0");
        }
        let table = if self.prefix == "r" {
            &BARE_NAMES
        } else {
            &PERCENT_NAMES
        };
        match table.get(usize::from(self.n)) {
            Some(name) => f.write_str(name),
            // Out of range: printed as is for the assembler to reject.
            None => write!(f, "{}{}", self.prefix, self.n),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn no_labels(_: Label) -> Option<u32> {
        None
    }

    fn bad(insn: Insn) {
        match assemble(&[Insn::Nop, insn.clone()], true) {
            Err(EncodeError::BadOperand { index: 1, .. }) => {}
            other => panic!("{insn:?}: expected BadOperand at 1, got {other:?}"),
        }
    }

    #[test]
    fn known_words() {
        // Spot values from the ISA / objdump, independent of the external oracles.
        let w = |i: Insn| i.encode_word(0, &no_labels).unwrap();
        assert_eq!(w(Insn::Nop), 0x6000_0000);
        assert_eq!(w(Insn::Sync), 0x7c00_04ac);
        assert_eq!(w(Insn::Lwsync), 0x7c20_04ac);
        assert_eq!(w(Insn::Ptesync), 0x7c40_04ac);
        assert_eq!(w(Insn::Isync), 0x4c00_012c);
        assert_eq!(w(Insn::Eieio), 0x7c00_06ac);
        assert_eq!(w(Insn::Tlbsync), 0x7c00_046c);
        // Linux ppc-opcode.h: PPC_RAW_SLBIA(IH), PPC_RAW_CP_ABORT.
        assert_eq!(w(Insn::Slbia { ih: 3 }), 0x7c00_03e4 | 3 << 21);
        assert_eq!(w(Insn::CpAbort), 0x7c00_068c);
        assert_eq!(w(Insn::Blr), 0x4e80_0020);
        assert_eq!(w(Insn::Mtctr { rs: 0 }), 0x7c09_03a6);
        assert_eq!(w(Insn::Mfctr { rt: 0 }), 0x7c09_02a6);
        let t = Insn::Tlbie {
            rb: 4,
            rs: 5,
            ric: 0,
            prs: 1,
            r: 1,
        };
        assert_eq!(w(t), 0x7ca3_2264);
        // cntlzd r3,r4 / cnttzd r3,r4 / popcntd r3,r4 (ISA v3.0B 3.3.13).
        assert_eq!(w(Insn::Cntlzd { ra: 3, rs: 4 }), 0x7c83_0074);
        assert_eq!(w(Insn::Cnttzd { ra: 3, rs: 4 }), 0x7c83_0474);
        assert_eq!(w(Insn::Popcntd { ra: 3, rs: 4 }), 0x7c83_03f4);
    }

    #[test]
    fn out_of_range_operands() {
        bad(Insn::Li { rt: 32, imm: 0 });
        bad(Insn::Addi {
            rt: 1,
            ra: 255,
            imm: 0,
        });
        bad(Insn::Or {
            ra: 1,
            rs: 2,
            rb: 32,
        });
        bad(Insn::Mr { ra: 40, rs: 2 });
        bad(Insn::Cmpdi {
            bf: 8,
            ra: 3,
            imm: 0,
        });
        bad(Insn::Cmplw {
            bf: 255,
            ra: 3,
            rb: 4,
        });
        bad(Insn::Rldicl {
            ra: 3,
            rs: 4,
            sh: 64,
            mb: 0,
        });
        bad(Insn::Rldicr {
            ra: 3,
            rs: 4,
            sh: 0,
            me: 64,
        });
        bad(Insn::Rldimi {
            ra: 3,
            rs: 4,
            sh: 0,
            mb: 200,
        });
        bad(Insn::Std { rs: 3, d: 6, ra: 1 });
        bad(Insn::Ld {
            rt: 3,
            d: -2,
            ra: 1,
        });
        bad(Insn::Crxor {
            bt: 32,
            ba: 0,
            bb: 0,
        });
        bad(Insn::Tlbie {
            rb: 1,
            rs: 2,
            ric: 4,
            prs: 0,
            r: 0,
        });
        bad(Insn::Tlbie {
            rb: 1,
            rs: 2,
            ric: 0,
            prs: 2,
            r: 0,
        });
        bad(Insn::Tlbiel {
            rb: 1,
            rs: 2,
            ric: 0,
            prs: 0,
            r: 2,
        });
        bad(Insn::Stdcx {
            rs: 1,
            ra: 2,
            rb: 99,
        });
        bad(Insn::Lwarx {
            rt: 32,
            ra: 0,
            rb: 1,
            eh: true,
        });
        bad(Insn::Mtctr { rs: 32 });
        // Bc: bf checked even though the target resolves.
        match assemble(
            &[
                Insn::Label(1),
                Insn::Bc {
                    cond: Cond::Eq,
                    bf: 8,
                    target: 1,
                },
            ],
            true,
        ) {
            Err(EncodeError::BadOperand { index: 1, .. }) => {}
            other => panic!("got {other:?}"),
        }
        // Valid edge values still encode.
        assert!(assemble(
            &[Insn::Std {
                rs: 31,
                d: -32768,
                ra: 31
            }],
            true
        )
        .is_ok());
        assert!(assemble(
            &[Insn::Rldimi {
                ra: 0,
                rs: 31,
                sh: 63,
                mb: 63
            }],
            false
        )
        .is_ok());
    }

    /// Every variant with arbitrary u8 operands: `assemble`, `encode_word`
    /// and `text` must return (Ok or Err), never panic.
    #[rustfmt::skip]
    fn every_shape(a: u8, b: u8, c: u8, d: u8) -> Vec<Insn> {
        use Insn::*;
        let (i, u, e) = (i16::from(d) * 3 - 2, u16::from(d), d % 2 == 1);
        vec![
            Li { rt: a, imm: i }, Lis { rt: a, imm: i }, Addi { rt: a, ra: b, imm: i }, Addis { rt: a, ra: b, imm: i },
            Ori { ra: a, rs: b, imm: u }, Oris { ra: a, rs: b, imm: u }, Xori { ra: a, rs: b, imm: u },
            Xoris { ra: a, rs: b, imm: u }, AndiDot { ra: a, rs: b, imm: u },
            Or { ra: a, rs: b, rb: c }, And { ra: a, rs: b, rb: c }, Xor { ra: a, rs: b, rb: c },
            Andc { ra: a, rs: b, rb: c }, Nor { ra: a, rs: b, rb: c }, Add { rt: a, ra: b, rb: c },
            Subf { rt: a, ra: b, rb: c }, Neg { rt: a, ra: b }, Mulld { rt: a, ra: b, rb: c },
            Sld { ra: a, rs: b, rb: c }, Srd { ra: a, rs: b, rb: c },
            Cntlzd { ra: a, rs: b }, Cnttzd { ra: b, rs: c }, Popcntd { ra: c, rs: a },
            Rldicl { ra: a, rs: b, sh: c, mb: d }, Rldicr { ra: a, rs: b, sh: c, me: d },
            Rldic { ra: a, rs: b, sh: c, mb: d }, Rldimi { ra: a, rs: b, sh: c, mb: d }, Mr { ra: a, rs: b },
            Std { rs: a, d: i, ra: b }, Stw { rs: a, d: i, ra: b }, Sth { rs: a, d: i, ra: b }, Stb { rs: a, d: i, ra: b },
            Ld { rt: a, d: i, ra: b }, LdArg { rt: a, d: i, param: c }, Lwz { rt: a, d: i, ra: b }, Lhz { rt: a, d: i, ra: b }, Lbz { rt: a, d: i, ra: b },
            Stdx { rs: a, ra: b, rb: c }, Stwx { rs: a, ra: b, rb: c }, Sthx { rs: a, ra: b, rb: c }, Stbx { rs: a, ra: b, rb: c },
            Ldx { rt: a, ra: b, rb: c }, Lwzx { rt: a, ra: b, rb: c }, Lhzx { rt: a, ra: b, rb: c }, Lbzx { rt: a, ra: b, rb: c },
            Stdbrx { rs: a, ra: b, rb: c }, Stwbrx { rs: a, ra: b, rb: c }, Sthbrx { rs: a, ra: b, rb: c },
            Ldbrx { rt: a, ra: b, rb: c }, Lwbrx { rt: a, ra: b, rb: c }, Lhbrx { rt: a, ra: b, rb: c },
            Lbarx { rt: a, ra: b, rb: c, eh: e }, Lharx { rt: a, ra: b, rb: c, eh: e },
            Lwarx { rt: a, ra: b, rb: c, eh: e }, Ldarx { rt: a, ra: b, rb: c, eh: e },
            Stbcx { rs: a, ra: b, rb: c }, Sthcx { rs: a, ra: b, rb: c }, Stwcx { rs: a, ra: b, rb: c }, Stdcx { rs: a, ra: b, rb: c },
            Cmpdi { bf: d, ra: a, imm: i }, Cmpldi { bf: d, ra: a, imm: u }, Cmpd { bf: d, ra: a, rb: b }, Cmpld { bf: d, ra: a, rb: b },
            Cmpwi { bf: d, ra: a, imm: i }, Cmplwi { bf: d, ra: a, imm: u }, Cmpw { bf: d, ra: a, rb: b }, Cmplw { bf: d, ra: a, rb: b },
            Crxor { bt: a, ba: b, bb: c },
            B { target: u32::from(a) }, Bc { cond: Cond::Le, bf: d, target: u32::from(b) }, Bdnz { target: u32::from(c) },
            Blr, Mtctr { rs: a }, Mfctr { rt: b }, Eieio, Sync, Lwsync, Ptesync, Isync, Tlbsync, Nop,
            Tlbie { rb: a, rs: b, ric: c, prs: d, r: a }, Tlbiel { rb: b, rs: a, ric: d, prs: c, r: b },
            Slbia { ih: c }, CpAbort,
            Label(u32::from(d)),
        ]
    }

    #[test]
    fn never_panics() {
        let vals = [0u8, 1, 3, 4, 7, 8, 31, 32, 63, 64, 127, 128, 255];
        let any = |_: Label| Some(u32::MAX - 3);
        let mut errs = 0;
        for &a in &vals {
            for &b in &vals {
                for &c in &vals {
                    for &d in &vals {
                        let shapes = every_shape(a, b, c, d);
                        for (k, insn) in shapes.iter().enumerate() {
                            let _ = insn.text(RegStyle::Bare, &|l| format!("L{l}"));
                            let _ = insn.encode_word(0, &any);
                            if assemble(std::slice::from_ref(insn), k % 2 == 0).is_err() {
                                errs += 1;
                            }
                        }
                        let _ = assemble(&shapes, true);
                    }
                }
            }
        }
        assert!(errs > 0);
    }

    #[test]
    fn label_errors() {
        assert_eq!(
            assemble(&[Insn::B { target: 7 }], true),
            Err(EncodeError::UndefinedLabel(7))
        );
        assert_eq!(
            assemble(&[Insn::Bdnz { target: 3 }, Insn::Label(4)], false),
            Err(EncodeError::UndefinedLabel(3))
        );
        assert_eq!(
            assemble(&[Insn::Label(1), Insn::Nop, Insn::Label(1)], true),
            Err(EncodeError::DuplicateLabel(1))
        );
        assert!(matches!(
            Insn::Label(0).encode_word(0, &no_labels),
            Err(EncodeError::BadOperand { .. })
        ));
    }

    #[test]
    fn branch_ranges() {
        // bc reaches +-32 KiB: target 0x7ffc ok, 0x8000 not; -0x8000 ok.
        let at = |a: u32| move |_: Label| Some(a);
        let bc = Insn::Bc {
            cond: Cond::Ne,
            bf: 0,
            target: 0,
        };
        assert!(bc.encode_word(0, &at(0x7ffc)).is_ok());
        assert_eq!(
            bc.encode_word(0, &at(0x8000)),
            Err(EncodeError::BranchOutOfRange { index: 0 })
        );
        assert!(bc.encode_word(0x8000, &at(0)).is_ok());
        assert!(bc.encode_word(0x8004, &at(0)).is_err());
        // b reaches +-32 MiB.
        let b = Insn::B { target: 0 };
        assert!(b.encode_word(0, &at(0x01ff_fffc)).is_ok());
        assert!(b.encode_word(0, &at(0x0200_0000)).is_err());
        assert_eq!(
            b.encode_word(0x0200_0000, &at(0)).unwrap(),
            0x4a00_0000 // LI = -2^23 words: sign bit of the 24-bit field set
        );
        // Misaligned target from a custom resolver: error, not panic.
        assert!(b.encode_word(0, &at(2)).is_err());
        // Extreme addresses do not overflow.
        assert!(b.encode_word(u32::MAX, &at(0)).is_err());
        // Out-of-range inside assemble reports the slice index.
        let mut prog = vec![
            Insn::Nop,
            Insn::Bc {
                cond: Cond::Eq,
                bf: 7,
                target: 9,
            },
        ];
        prog.extend(std::iter::repeat_n(Insn::Nop, 0x2000));
        prog.push(Insn::Label(9));
        assert_eq!(
            assemble(&prog, true),
            Err(EncodeError::BranchOutOfRange { index: 1 })
        );
    }

    #[test]
    fn offsets_and_classes() {
        let prog = [
            Insn::Label(0),
            Insn::Nop,
            Insn::Label(1),
            Insn::Label(2),
            Insn::Sync,
        ];
        let a = assemble(&prog, false).unwrap();
        assert_eq!(a.offsets, vec![0, 0, 4, 4, 4]);
        assert_eq!(a.bytes, vec![0, 0, 0, 0x60, 0xac, 0x04, 0, 0x7c]);
        assert!(Insn::Stwcx {
            rs: 1,
            ra: 2,
            rb: 3
        }
        .is_store());
        assert!(Insn::Ldarx {
            rt: 1,
            ra: 2,
            rb: 3,
            eh: false
        }
        .is_load());
        assert!(!Insn::Li { rt: 1, imm: 0 }.is_load());
        assert!(Insn::Ptesync.is_barrier());
        assert!(Insn::Tlbiel {
            rb: 1,
            rs: 0,
            ric: 0,
            prs: 0,
            r: 0
        }
        .is_invalidate());
        assert_eq!(Insn::Label(3).mnemonic(), "");
        for i in [
            Insn::Cntlzd { ra: 3, rs: 4 },
            Insn::Cnttzd { ra: 3, rs: 4 },
            Insn::Popcntd { ra: 3, rs: 4 },
        ] {
            assert!(!i.is_load() && !i.is_store() && !i.is_barrier() && !i.is_invalidate());
        }
    }
}
