//! A64 binary encoding.
//!
//! Encoding goes through `dynasmrt`'s `dynasm!` macro (aarch64 backend,
//! dynamic registers).  `dynasm!` resolves mnemonics, barrier options and
//! TLBI operation names at *compile* time, so every enum value gets its own
//! macro invocation; only registers and immediates are dynamic.  The
//! runtime helpers that `dynasm!` generates for dynamic immediates *panic*
//! when a value is out of range; registers and immediates are in range by
//! type (see `regs` and `imms`), so the public functions in this module
//! never panic.
//!
//! Hand encoding is used for two cases:
//! * `ldrb`/`strb` (register offset) with an explicit `lsl #0`, which
//!   dynasm-rs 5.1 cannot express: its S bit (bit 12) must be set (Arm ARM
//!   C6.2 "LDRB (register)": `S == 1` is the `LSL #0` form).  dynasm-rs maps
//!   amount 0 to S = 0, so the bit is ORed in after dynasm produced the
//!   rest of the word.
//! * logical (immediate), whose N:immr:imms fields [`ImmLogic`] computed
//!   when it was built; dynasm would search for them again.

// `dynasm!` expands every dynamic register `X(r)` to `r.into()` (u8 -> u8
// here); the lint fires inside macro output we do not control.
#![allow(clippy::useless_conversion)]

use std::collections::HashMap;

use dynasmrt::aarch64::Aarch64Relocation;
use dynasmrt::{dynasm, DynamicLabel, DynasmApi, DynasmLabelApi, VecAssembler};

use crate::isa::assembler::{self, Encode, Reach};

use super::{
    Assembled, BarrierOpt, Cond, EncodeError, ImmLogic, Insn, Label, MoveWide, RegOrZr, Size,
    TlbiOp,
};

type Asm = VecAssembler<Aarch64Relocation>;

/// Reach of B (imm26 words) and of CBZ/CBNZ/B.cond (imm19) (Arm ARM
/// C6.2 "B", "B.cond", "CBZ").
const B_REACH: Reach = Reach::signed(26, 4);
const COND_REACH: Reach = Reach::signed(19, 4);
/// TBZ/TBNZ: imm14 words.
const TB_REACH: Reach = Reach::signed(14, 4);

fn bad(index: usize, what: &'static str) -> EncodeError {
    EncodeError::BadOperand { index, what }
}

struct Ctx<'a> {
    index: usize,
    labels: &'a HashMap<Label, DynamicLabel>,
}

impl Ctx<'_> {
    fn label(&self, l: Label) -> Result<DynamicLabel, EncodeError> {
        self.labels
            .get(&l)
            .copied()
            .ok_or(EncodeError::UndefinedLabel(l))
    }
}

/// Logical (immediate), 64-bit (Arm ARM C4.1.92 "Logical (immediate)"):
/// sf = 1, `opc`, 0b100100, N, immr, imms, Rn, Rd. Rd = 31 is SP, Rn = 31
/// is XZR (C6.2 "ORR (immediate)").
fn logical_imm_word(opc: u32, rd: u8, rn: u8, imm: ImmLogic) -> u32 {
    let (n, immr, imms) = imm.fields();
    (1 << 31)
        | (opc << 29)
        | (0b100100 << 23)
        | (n << 22)
        | (immr << 16)
        | (imms << 10)
        | (u32::from(rn) << 5)
        | u32::from(rd)
}

/// Opc of AND and ORR (immediate).
const OPC_AND: u32 = 0b00;
const OPC_ORR: u32 = 0b01;

/// Appends one instruction to `ops`.
fn emit(ops: &mut Asm, insn: &Insn, cx: &Ctx<'_>) -> Result<(), EncodeError> {
    match *insn {
        Insn::Movz { .. }
        | Insn::Movk { .. }
        | Insn::Movn { .. }
        | Insn::OrrImm { .. }
        | Insn::AndImm { .. }
        | Insn::MovReg { .. }
        | Insn::Mvn { .. }
        | Insn::Orr { .. }
        | Insn::And { .. }
        | Insn::Eor { .. }
        | Insn::Bic { .. } => emit_move_and_logical(ops, insn, cx)?,
        Insn::Add { .. }
        | Insn::Sub { .. }
        | Insn::AddImm { .. }
        | Insn::SubImm { .. }
        | Insn::SpSub { .. }
        | Insn::SpAdd { .. }
        | Insn::SubsImm { .. }
        | Insn::SubsReg { .. }
        | Insn::Mul { .. }
        | Insn::CmpReg { .. }
        | Insn::CmpImm { .. } => emit_arithmetic(ops, insn, cx)?,
        Insn::LslImm { .. }
        | Insn::LsrImm { .. }
        | Insn::LslReg { .. }
        | Insn::LsrReg { .. }
        | Insn::Ubfiz { .. }
        | Insn::Ubfx { .. }
        | Insn::Rev { .. }
        | Insn::Clz { .. }
        | Insn::Cset { .. }
        | Insn::Rbit { .. }
        | Insn::Rev32W { .. }
        | Insn::Rev16W { .. } => emit_shift_and_bits(ops, insn, cx)?,
        Insn::Str { .. } | Insn::Ldr { .. } | Insn::StrReg { .. } | Insn::LdrReg { .. } => {
            emit_load_store(ops, insn, cx)?
        }
        Insn::Ldxr { .. }
        | Insn::Ldaxr { .. }
        | Insn::Stxr { .. }
        | Insn::Stlxr { .. }
        | Insn::Ldar { .. }
        | Insn::Stlr { .. }
        | Insn::Casa { .. }
        | Insn::Swpa { .. } => emit_exclusive_or_atomic(ops, insn, cx)?,
        Insn::Cbz { .. }
        | Insn::Cbnz { .. }
        | Insn::Tbz { .. }
        | Insn::Tbnz { .. }
        | Insn::BCond { .. }
        | Insn::B { .. } => emit_branch(ops, insn, cx)?,
        Insn::Dmb(o) => emit_dmb(ops, o),
        Insn::Dsb(o) => emit_dsb(ops, o),
        Insn::Ret => dynasm!(ops ; .arch aarch64 ; ret),
        Insn::Isb => dynasm!(ops ; .arch aarch64 ; isb),
        // Unpatched, the alternative is its default: a `nop`.
        Insn::Nop | Insn::AltB { .. } => dynasm!(ops ; .arch aarch64 ; nop),
        Insn::Tlbi { op, rt } => emit_tlbi(ops, cx, op, rt)?,
        Insn::Label(l) => {
            let l = cx.label(l)?;
            dynasm!(ops ; .arch aarch64 ; =>l);
        }
    }
    Ok(())
}

/// Move-wide, register moves and the logical operations.
fn emit_move_and_logical(ops: &mut Asm, insn: &Insn, cx: &Ctx<'_>) -> Result<(), EncodeError> {
    let wide = |imm: MoveWide| (u32::from(imm.bits()), u32::from(imm.shift()));
    match *insn {
        Insn::Movz { rd, imm } => {
            let (rd, (imm, sh)) = (rd.field(), wide(imm));
            dynasm!(ops ; .arch aarch64 ; movz X(rd), imm, lsl sh);
        }
        Insn::Movk { rd, imm } => {
            let (rd, (imm, sh)) = (rd.field(), wide(imm));
            dynasm!(ops ; .arch aarch64 ; movk X(rd), imm, lsl sh);
        }
        Insn::Movn { rd, imm } => {
            let (rd, (imm, sh)) = (rd.field(), wide(imm));
            dynasm!(ops ; .arch aarch64 ; movn X(rd), imm, lsl sh);
        }
        Insn::OrrImm { rd, rn, imm } => {
            ops.extend(logical_imm_word(OPC_ORR, rd.field(), rn.field(), imm).to_le_bytes());
        }
        Insn::AndImm { rd, rn, imm } => {
            ops.extend(logical_imm_word(OPC_AND, rd.field(), rn.field(), imm).to_le_bytes());
        }
        Insn::MovReg { rd, rm } => {
            // MOV (register) is ORR Xd, XZR, Xm (Arm ARM C6.2 "MOV (register)").
            let (rd, rm) = (rd.field(), rm.field());
            dynasm!(ops ; .arch aarch64 ; orr X(rd), xzr, X(rm));
        }
        Insn::Mvn { rd, rm } => {
            // MVN is ORN Xd, XZR, Xm (Arm ARM C6.2 "MVN").
            let (rd, rm) = (rd.field(), rm.field());
            dynasm!(ops ; .arch aarch64 ; orn X(rd), xzr, X(rm));
        }
        Insn::Orr { rd, rn, rm } => {
            let (rd, rn, rm) = (rd.field(), rn.field(), rm.field());
            dynasm!(ops ; .arch aarch64 ; orr X(rd), X(rn), X(rm));
        }
        Insn::And { rd, rn, rm } => {
            let (rd, rn, rm) = (rd.field(), rn.field(), rm.field());
            dynasm!(ops ; .arch aarch64 ; and X(rd), X(rn), X(rm));
        }
        Insn::Eor { rd, rn, rm } => {
            let (rd, rn, rm) = (rd.field(), rn.field(), rm.field());
            dynasm!(ops ; .arch aarch64 ; eor X(rd), X(rn), X(rm));
        }
        Insn::Bic { rd, rn, rm } => {
            let (rd, rn, rm) = (rd.field(), rn.field(), rm.field());
            dynasm!(ops ; .arch aarch64 ; bic X(rd), X(rn), X(rm));
        }
        _ => return Err(bad(cx.index, "internal: not a move or logical instruction")),
    }
    Ok(())
}

/// Additions and subtractions (stack pointer moves included),
/// multiplication and compares.
fn emit_arithmetic(ops: &mut Asm, insn: &Insn, cx: &Ctx<'_>) -> Result<(), EncodeError> {
    match *insn {
        Insn::Add { rd, rn, rm } => {
            // Shifted-register form: 31 is XZR in every position.
            let (rd, rn, rm) = (rd.field(), rn.field(), rm.field());
            dynasm!(ops ; .arch aarch64 ; add X(rd), X(rn), X(rm));
        }
        Insn::Sub { rd, rn, rm } => {
            let (rd, rn, rm) = (rd.field(), rn.field(), rm.field());
            dynasm!(ops ; .arch aarch64 ; sub X(rd), X(rn), X(rm));
        }
        Insn::AddImm { rd, rn, imm } | Insn::SubImm { rd, rn, imm } => {
            // ADD/SUB (immediate): 31 is SP for both Rd and Rn.
            let (rd, rn, imm) = (rd.field(), rn.field(), u32::from(imm.get()));
            if matches!(insn, Insn::AddImm { .. }) {
                dynasm!(ops ; .arch aarch64 ; add XSP(rd), XSP(rn), imm);
            } else {
                dynasm!(ops ; .arch aarch64 ; sub XSP(rd), XSP(rn), imm);
            }
        }
        Insn::SpSub { imm } | Insn::SpAdd { imm } => {
            let imm = u32::from(imm.bytes());
            if matches!(insn, Insn::SpAdd { .. }) {
                dynasm!(ops ; .arch aarch64 ; add XSP(31), XSP(31), imm);
            } else {
                dynasm!(ops ; .arch aarch64 ; sub XSP(31), XSP(31), imm);
            }
        }
        Insn::SubsImm { rd, rn, imm } => {
            // SUBS (immediate): Rd = 31 is XZR (that is CMP), Rn = 31 is SP.
            let (rd, rn, imm) = (rd.field(), rn.field(), u32::from(imm.get()));
            dynasm!(ops ; .arch aarch64 ; subs X(rd), XSP(rn), imm);
        }
        Insn::SubsReg { rd, rn, rm } => {
            let (rd, rn, rm) = (rd.field(), rn.field(), rm.field());
            dynasm!(ops ; .arch aarch64 ; subs X(rd), X(rn), X(rm));
        }
        Insn::Mul { rd, rn, rm } => {
            let (rd, rn, rm) = (rd.field(), rn.field(), rm.field());
            dynasm!(ops ; .arch aarch64 ; mul X(rd), X(rn), X(rm));
        }
        Insn::CmpReg { rn, rm } => {
            // CMP (shifted register) = SUBS XZR, Xn, Xm; 31 is XZR.
            let (rn, rm) = (rn.field(), rm.field());
            dynasm!(ops ; .arch aarch64 ; cmp X(rn), X(rm));
        }
        Insn::CmpImm { rn, imm } => {
            // CMP (immediate) = SUBS XZR, Xn|SP, #imm; 31 would be SP.
            let (rn, imm) = (rn.field(), u32::from(imm.get()));
            dynasm!(ops ; .arch aarch64 ; cmp XSP(rn), imm);
        }
        _ => return Err(bad(cx.index, "internal: not an arithmetic instruction")),
    }
    Ok(())
}

/// Shifts, bitfield moves, bit counts and byte reversals.
fn emit_shift_and_bits(ops: &mut Asm, insn: &Insn, cx: &Ctx<'_>) -> Result<(), EncodeError> {
    match *insn {
        Insn::LslImm { rd, rn, sh } | Insn::LsrImm { rd, rn, sh } => {
            let (rd, rn, sh) = (rd.field(), rn.field(), u32::from(sh.get()));
            if matches!(insn, Insn::LslImm { .. }) {
                dynasm!(ops ; .arch aarch64 ; lsl X(rd), X(rn), sh);
            } else {
                dynasm!(ops ; .arch aarch64 ; lsr X(rd), X(rn), sh);
            }
        }
        Insn::LslReg { rd, rn, rm } => {
            let (rd, rn, rm) = (rd.field(), rn.field(), rm.field());
            dynasm!(ops ; .arch aarch64 ; lsl X(rd), X(rn), X(rm));
        }
        Insn::LsrReg { rd, rn, rm } => {
            let (rd, rn, rm) = (rd.field(), rn.field(), rm.field());
            dynasm!(ops ; .arch aarch64 ; lsr X(rd), X(rn), X(rm));
        }
        Insn::Ubfiz { rd, rn, field } | Insn::Ubfx { rd, rn, field } => {
            // Both are UBFM aliases.
            let (rd, rn) = (rd.field(), rn.field());
            let (lsb, width) = (u32::from(field.lsb().get()), u32::from(field.width()));
            if matches!(insn, Insn::Ubfiz { .. }) {
                dynasm!(ops ; .arch aarch64 ; ubfiz X(rd), X(rn), lsb, width);
            } else {
                dynasm!(ops ; .arch aarch64 ; ubfx X(rd), X(rn), lsb, width);
            }
        }
        Insn::Rev { rd, rn } => {
            let (rd, rn) = (rd.field(), rn.field());
            dynasm!(ops ; .arch aarch64 ; rev X(rd), X(rn));
        }
        // Data-processing (1 source): 31 is XZR in both fields.
        Insn::Clz { rd, rn } => {
            let (rd, rn) = (rd.field(), rn.field());
            dynasm!(ops ; .arch aarch64 ; clz X(rd), X(rn));
        }
        Insn::Cset { rd, cond } => {
            let rd = rd.field();
            match cond {
                Cond::Eq => dynasm!(ops ; .arch aarch64 ; cset X(rd), eq),
                Cond::Ne => dynasm!(ops ; .arch aarch64 ; cset X(rd), ne),
                Cond::Hs => dynasm!(ops ; .arch aarch64 ; cset X(rd), hs),
                Cond::Lo => dynasm!(ops ; .arch aarch64 ; cset X(rd), lo),
                Cond::Mi => dynasm!(ops ; .arch aarch64 ; cset X(rd), mi),
                Cond::Pl => dynasm!(ops ; .arch aarch64 ; cset X(rd), pl),
                Cond::Hi => dynasm!(ops ; .arch aarch64 ; cset X(rd), hi),
                Cond::Ls => dynasm!(ops ; .arch aarch64 ; cset X(rd), ls),
                Cond::Ge => dynasm!(ops ; .arch aarch64 ; cset X(rd), ge),
                Cond::Lt => dynasm!(ops ; .arch aarch64 ; cset X(rd), lt),
                Cond::Gt => dynasm!(ops ; .arch aarch64 ; cset X(rd), gt),
                Cond::Le => dynasm!(ops ; .arch aarch64 ; cset X(rd), le),
            }
        }
        Insn::Rbit { rd, rn } => {
            let (rd, rn) = (rd.field(), rn.field());
            dynasm!(ops ; .arch aarch64 ; rbit X(rd), X(rn));
        }
        Insn::Rev32W { rd, rn } => {
            let (rd, rn) = (rd.field(), rn.field());
            dynasm!(ops ; .arch aarch64 ; rev W(rd), W(rn));
        }
        Insn::Rev16W { rd, rn } => {
            let (rd, rn) = (rd.field(), rn.field());
            dynasm!(ops ; .arch aarch64 ; rev16 W(rd), W(rn));
        }
        _ => return Err(bad(cx.index, "internal: not a shift or bit instruction")),
    }
    Ok(())
}

/// Plain loads and stores, immediate or register offset.
fn emit_load_store(ops: &mut Asm, insn: &Insn, cx: &Ctx<'_>) -> Result<(), EncodeError> {
    let ix = cx.index;
    match *insn {
        Insn::Str { rt, rn, off } => {
            let (size, rt, rn, off) = (off.size(), rt.field(), rn.field(), off.bytes());
            match size {
                Size::B => dynasm!(ops ; .arch aarch64 ; strb W(rt), [XSP(rn), off]),
                Size::H => dynasm!(ops ; .arch aarch64 ; strh W(rt), [XSP(rn), off]),
                Size::W => dynasm!(ops ; .arch aarch64 ; str W(rt), [XSP(rn), off]),
                Size::X => dynasm!(ops ; .arch aarch64 ; str X(rt), [XSP(rn), off]),
            }
        }
        Insn::Ldr { rt, rn, off } => {
            let (size, rt, rn, off) = (off.size(), rt.field(), rn.field(), off.bytes());
            match size {
                Size::B => dynasm!(ops ; .arch aarch64 ; ldrb W(rt), [XSP(rn), off]),
                Size::H => dynasm!(ops ; .arch aarch64 ; ldrh W(rt), [XSP(rn), off]),
                Size::W => dynasm!(ops ; .arch aarch64 ; ldr W(rt), [XSP(rn), off]),
                Size::X => dynasm!(ops ; .arch aarch64 ; ldr X(rt), [XSP(rn), off]),
            }
        }
        Insn::StrReg {
            size,
            rt,
            rn,
            rm,
            scaled,
        } => {
            let (rt, rn, rm) = (rt.field(), rn.field(), rm.field());
            match (size, scaled) {
                (Size::B, false) => dynasm!(ops ; .arch aarch64 ; strb W(rt), [XSP(rn), X(rm)]),
                (Size::B, true) => emit_byte_lsl0(ops, ix, false, rt, rn, rm)?,
                (Size::H, false) => dynasm!(ops ; .arch aarch64 ; strh W(rt), [XSP(rn), X(rm)]),
                (Size::H, true) => {
                    dynasm!(ops ; .arch aarch64 ; strh W(rt), [XSP(rn), X(rm), lsl 1])
                }
                (Size::W, false) => dynasm!(ops ; .arch aarch64 ; str W(rt), [XSP(rn), X(rm)]),
                (Size::W, true) => {
                    dynasm!(ops ; .arch aarch64 ; str W(rt), [XSP(rn), X(rm), lsl 2])
                }
                (Size::X, false) => dynasm!(ops ; .arch aarch64 ; str X(rt), [XSP(rn), X(rm)]),
                (Size::X, true) => {
                    dynasm!(ops ; .arch aarch64 ; str X(rt), [XSP(rn), X(rm), lsl 3])
                }
            }
        }
        Insn::LdrReg {
            size,
            rt,
            rn,
            rm,
            scaled,
        } => {
            let (rt, rn, rm) = (rt.field(), rn.field(), rm.field());
            match (size, scaled) {
                (Size::B, false) => dynasm!(ops ; .arch aarch64 ; ldrb W(rt), [XSP(rn), X(rm)]),
                (Size::B, true) => emit_byte_lsl0(ops, ix, true, rt, rn, rm)?,
                (Size::H, false) => dynasm!(ops ; .arch aarch64 ; ldrh W(rt), [XSP(rn), X(rm)]),
                (Size::H, true) => {
                    dynasm!(ops ; .arch aarch64 ; ldrh W(rt), [XSP(rn), X(rm), lsl 1])
                }
                (Size::W, false) => dynasm!(ops ; .arch aarch64 ; ldr W(rt), [XSP(rn), X(rm)]),
                (Size::W, true) => {
                    dynasm!(ops ; .arch aarch64 ; ldr W(rt), [XSP(rn), X(rm), lsl 2])
                }
                (Size::X, false) => dynasm!(ops ; .arch aarch64 ; ldr X(rt), [XSP(rn), X(rm)]),
                (Size::X, true) => {
                    dynasm!(ops ; .arch aarch64 ; ldr X(rt), [XSP(rn), X(rm), lsl 3])
                }
            }
        }
        _ => return Err(bad(cx.index, "internal: not a plain load or store")),
    }
    Ok(())
}

/// Exclusive, acquire/release and LSE atomic accesses.
fn emit_exclusive_or_atomic(ops: &mut Asm, insn: &Insn, cx: &Ctx<'_>) -> Result<(), EncodeError> {
    let ix = cx.index;
    match *insn {
        Insn::Ldxr { size, rt, rn } => {
            let (rt, rn) = (rt.field(), rn.field());
            match size {
                Size::B => dynasm!(ops ; .arch aarch64 ; ldxrb W(rt), [XSP(rn)]),
                Size::H => dynasm!(ops ; .arch aarch64 ; ldxrh W(rt), [XSP(rn)]),
                Size::W => dynasm!(ops ; .arch aarch64 ; ldxr W(rt), [XSP(rn)]),
                Size::X => dynasm!(ops ; .arch aarch64 ; ldxr X(rt), [XSP(rn)]),
            }
        }
        Insn::Ldaxr { size, rt, rn } => {
            let (rt, rn) = (rt.field(), rn.field());
            match size {
                Size::B => dynasm!(ops ; .arch aarch64 ; ldaxrb W(rt), [XSP(rn)]),
                Size::H => dynasm!(ops ; .arch aarch64 ; ldaxrh W(rt), [XSP(rn)]),
                Size::W => dynasm!(ops ; .arch aarch64 ; ldaxr W(rt), [XSP(rn)]),
                Size::X => dynasm!(ops ; .arch aarch64 ; ldaxr X(rt), [XSP(rn)]),
            }
        }
        Insn::Stxr { size, rs, rt, rn } | Insn::Stlxr { size, rs, rt, rn } => {
            let (rs, rt, rn) = (rs.field(), rt.field(), rn.field());
            // Arm ARM C6.2 "STXR": if s == t, or s == n with n != 31, the
            // behaviour is CONSTRAINED UNPREDICTABLE; refuse to emit it.
            // GNU as also warns for wzr status with an sp base (both are
            // number 31, architecturally fine); that is rejected too so the
            // emitted text always assembles without warnings.
            if rs == rt || rs == rn {
                return Err(bad(ix, "exclusive status register overlaps rt or rn"));
            }
            let release = matches!(insn, Insn::Stlxr { .. });
            match (size, release) {
                (Size::B, false) => dynasm!(ops ; .arch aarch64 ; stxrb W(rs), W(rt), [XSP(rn)]),
                (Size::H, false) => dynasm!(ops ; .arch aarch64 ; stxrh W(rs), W(rt), [XSP(rn)]),
                (Size::W, false) => dynasm!(ops ; .arch aarch64 ; stxr W(rs), W(rt), [XSP(rn)]),
                (Size::X, false) => dynasm!(ops ; .arch aarch64 ; stxr W(rs), X(rt), [XSP(rn)]),
                (Size::B, true) => dynasm!(ops ; .arch aarch64 ; stlxrb W(rs), W(rt), [XSP(rn)]),
                (Size::H, true) => dynasm!(ops ; .arch aarch64 ; stlxrh W(rs), W(rt), [XSP(rn)]),
                (Size::W, true) => dynasm!(ops ; .arch aarch64 ; stlxr W(rs), W(rt), [XSP(rn)]),
                (Size::X, true) => dynasm!(ops ; .arch aarch64 ; stlxr W(rs), X(rt), [XSP(rn)]),
            }
        }
        Insn::Ldar { size, rt, rn } => {
            let (rt, rn) = (rt.field(), rn.field());
            match size {
                Size::B => dynasm!(ops ; .arch aarch64 ; ldarb W(rt), [XSP(rn)]),
                Size::H => dynasm!(ops ; .arch aarch64 ; ldarh W(rt), [XSP(rn)]),
                Size::W => dynasm!(ops ; .arch aarch64 ; ldar W(rt), [XSP(rn)]),
                Size::X => dynasm!(ops ; .arch aarch64 ; ldar X(rt), [XSP(rn)]),
            }
        }
        Insn::Stlr { size, rt, rn } => {
            let (rt, rn) = (rt.field(), rn.field());
            match size {
                Size::B => dynasm!(ops ; .arch aarch64 ; stlrb W(rt), [XSP(rn)]),
                Size::H => dynasm!(ops ; .arch aarch64 ; stlrh W(rt), [XSP(rn)]),
                Size::W => dynasm!(ops ; .arch aarch64 ; stlr W(rt), [XSP(rn)]),
                Size::X => dynasm!(ops ; .arch aarch64 ; stlr X(rt), [XSP(rn)]),
            }
        }
        Insn::Casa { size, rs, rt, rn } => {
            let (rs, rt, rn) = (rs.field(), rt.field(), rn.field());
            match size {
                Size::B => dynasm!(ops ; .arch aarch64 ; casab W(rs), W(rt), [XSP(rn)]),
                Size::H => dynasm!(ops ; .arch aarch64 ; casah W(rs), W(rt), [XSP(rn)]),
                Size::W => dynasm!(ops ; .arch aarch64 ; casa W(rs), W(rt), [XSP(rn)]),
                Size::X => dynasm!(ops ; .arch aarch64 ; casa X(rs), X(rt), [XSP(rn)]),
            }
        }
        Insn::Swpa { size, rs, rt, rn } => {
            let (rs, rt, rn) = (rs.field(), rt.field(), rn.field());
            match size {
                Size::B => dynasm!(ops ; .arch aarch64 ; swpab W(rs), W(rt), [XSP(rn)]),
                Size::H => dynasm!(ops ; .arch aarch64 ; swpah W(rs), W(rt), [XSP(rn)]),
                Size::W => dynasm!(ops ; .arch aarch64 ; swpa W(rs), W(rt), [XSP(rn)]),
                Size::X => dynasm!(ops ; .arch aarch64 ; swpa X(rs), X(rt), [XSP(rn)]),
            }
        }
        _ => return Err(bad(cx.index, "internal: not an exclusive or atomic access")),
    }
    Ok(())
}

/// Branches to a label.
fn emit_branch(ops: &mut Asm, insn: &Insn, cx: &Ctx<'_>) -> Result<(), EncodeError> {
    match *insn {
        Insn::Cbz { rt, target } => {
            let (rt, l) = (rt.field(), cx.label(target)?);
            dynasm!(ops ; .arch aarch64 ; cbz X(rt), =>l);
        }
        Insn::Cbnz { rt, target } => {
            let (rt, l) = (rt.field(), cx.label(target)?);
            dynasm!(ops ; .arch aarch64 ; cbnz X(rt), =>l);
        }
        Insn::Tbz { rt, bit, target } => {
            let (rt, b, l) = (rt.field(), u32::from(bit.get()), cx.label(target)?);
            dynasm!(ops ; .arch aarch64 ; tbz X(rt), b, =>l);
        }
        Insn::Tbnz { rt, bit, target } => {
            let (rt, b, l) = (rt.field(), u32::from(bit.get()), cx.label(target)?);
            dynasm!(ops ; .arch aarch64 ; tbnz X(rt), b, =>l);
        }
        Insn::BCond { cond, target } => {
            let l = cx.label(target)?;
            match cond {
                Cond::Eq => dynasm!(ops ; .arch aarch64 ; b.eq =>l),
                Cond::Ne => dynasm!(ops ; .arch aarch64 ; b.ne =>l),
                Cond::Hs => dynasm!(ops ; .arch aarch64 ; b.hs =>l),
                Cond::Lo => dynasm!(ops ; .arch aarch64 ; b.lo =>l),
                Cond::Mi => dynasm!(ops ; .arch aarch64 ; b.mi =>l),
                Cond::Pl => dynasm!(ops ; .arch aarch64 ; b.pl =>l),
                Cond::Hi => dynasm!(ops ; .arch aarch64 ; b.hi =>l),
                Cond::Ls => dynasm!(ops ; .arch aarch64 ; b.ls =>l),
                Cond::Ge => dynasm!(ops ; .arch aarch64 ; b.ge =>l),
                Cond::Lt => dynasm!(ops ; .arch aarch64 ; b.lt =>l),
                Cond::Gt => dynasm!(ops ; .arch aarch64 ; b.gt =>l),
                Cond::Le => dynasm!(ops ; .arch aarch64 ; b.le =>l),
            }
        }
        Insn::B { target } => {
            let l = cx.label(target)?;
            dynasm!(ops ; .arch aarch64 ; b =>l);
        }
        _ => return Err(bad(cx.index, "internal: not a branch")),
    }
    Ok(())
}

/// DMB with its option.
fn emit_dmb(ops: &mut Asm, o: BarrierOpt) {
    match o {
        BarrierOpt::Sy => dynasm!(ops ; .arch aarch64 ; dmb sy),
        BarrierOpt::St => dynasm!(ops ; .arch aarch64 ; dmb st),
        BarrierOpt::Ld => dynasm!(ops ; .arch aarch64 ; dmb ld),
        BarrierOpt::Ish => dynasm!(ops ; .arch aarch64 ; dmb ish),
        BarrierOpt::Ishst => dynasm!(ops ; .arch aarch64 ; dmb ishst),
        BarrierOpt::Ishld => dynasm!(ops ; .arch aarch64 ; dmb ishld),
        BarrierOpt::Osh => dynasm!(ops ; .arch aarch64 ; dmb osh),
        BarrierOpt::Oshst => dynasm!(ops ; .arch aarch64 ; dmb oshst),
        BarrierOpt::Oshld => dynasm!(ops ; .arch aarch64 ; dmb oshld),
        BarrierOpt::Nsh => dynasm!(ops ; .arch aarch64 ; dmb nsh),
        BarrierOpt::Nshst => dynasm!(ops ; .arch aarch64 ; dmb nshst),
    }
}

/// DSB with its option.
fn emit_dsb(ops: &mut Asm, o: BarrierOpt) {
    match o {
        BarrierOpt::Sy => dynasm!(ops ; .arch aarch64 ; dsb sy),
        BarrierOpt::St => dynasm!(ops ; .arch aarch64 ; dsb st),
        BarrierOpt::Ld => dynasm!(ops ; .arch aarch64 ; dsb ld),
        BarrierOpt::Ish => dynasm!(ops ; .arch aarch64 ; dsb ish),
        BarrierOpt::Ishst => dynasm!(ops ; .arch aarch64 ; dsb ishst),
        BarrierOpt::Ishld => dynasm!(ops ; .arch aarch64 ; dsb ishld),
        BarrierOpt::Osh => dynasm!(ops ; .arch aarch64 ; dsb osh),
        BarrierOpt::Oshst => dynasm!(ops ; .arch aarch64 ; dsb oshst),
        BarrierOpt::Oshld => dynasm!(ops ; .arch aarch64 ; dsb oshld),
        BarrierOpt::Nsh => dynasm!(ops ; .arch aarch64 ; dsb nsh),
        BarrierOpt::Nshst => dynasm!(ops ; .arch aarch64 ; dsb nshst),
    }
}

/// Emits `ldrb/strb wt, [xn, xm, lsl #0]`, the S = 1 encoding (Arm ARM
/// C6.2 "LDRB (register)"), which dynasm-rs cannot express: its amount list
/// for byte accesses is [0, 0], so `lsl 0` yields S = 0.  dynasm encodes the
/// S = 0 word into a scratch assembler, bit 12 is set by hand, and the word
/// is appended to `ops`.
fn emit_byte_lsl0(
    ops: &mut Asm,
    ix: usize,
    load: bool,
    rt: u8,
    rn: u8,
    rm: u8,
) -> Result<(), EncodeError> {
    let mut tmp = Asm::new(0);
    if load {
        dynasm!(tmp ; .arch aarch64 ; ldrb W(rt), [XSP(rn), X(rm)]);
    } else {
        dynasm!(tmp ; .arch aarch64 ; strb W(rt), [XSP(rn), X(rm)]);
    }
    let bytes = tmp
        .finalize()
        .map_err(|_| bad(ix, "internal: dynasm error"))?;
    let w = <[u8; 4]>::try_from(bytes.as_slice()).map_err(|_| bad(ix, "internal: not one word"))?;
    let w = u32::from_le_bytes(w) | (1 << 12);
    ops.extend(w.to_le_bytes());
    Ok(())
}

fn emit_tlbi(
    ops: &mut Asm,
    cx: &Ctx<'_>,
    op: TlbiOp,
    rt: Option<RegOrZr>,
) -> Result<(), EncodeError> {
    let rt = match (op.takes_reg(), rt) {
        (true, Some(r)) => r.field(),
        // TLBI VMALLE1* have no register operand; Rt is 0b11111 (Arm ARM
        // C5.5 "TLBI VMALLE1": "Rt should be 0b11111", as GNU as emits).
        (false, None) => 31,
        (true, None) => return Err(bad(cx.index, "this TLBI operation needs a register")),
        (false, Some(_)) => return Err(bad(cx.index, "vmalle1* TLBI takes no register")),
    };
    // dynasm-rs fills Rt with 0 when the register operand is omitted, so the
    // register is always passed explicitly (31 = XZR for the vmalle1 forms).
    match op {
        TlbiOp::Vmalle1 => dynasm!(ops ; .arch aarch64 ; tlbi vmalle1, X(rt)),
        TlbiOp::Vmalle1is => dynasm!(ops ; .arch aarch64 ; tlbi vmalle1is, X(rt)),
        TlbiOp::Vmalle1os => dynasm!(ops ; .arch aarch64 ; tlbi vmalle1os, X(rt)),
        TlbiOp::Vae1 => dynasm!(ops ; .arch aarch64 ; tlbi vae1, X(rt)),
        TlbiOp::Vae1is => dynasm!(ops ; .arch aarch64 ; tlbi vae1is, X(rt)),
        TlbiOp::Vae1os => dynasm!(ops ; .arch aarch64 ; tlbi vae1os, X(rt)),
        TlbiOp::Vale1 => dynasm!(ops ; .arch aarch64 ; tlbi vale1, X(rt)),
        TlbiOp::Vale1is => dynasm!(ops ; .arch aarch64 ; tlbi vale1is, X(rt)),
        TlbiOp::Vale1os => dynasm!(ops ; .arch aarch64 ; tlbi vale1os, X(rt)),
        TlbiOp::Aside1 => dynasm!(ops ; .arch aarch64 ; tlbi aside1, X(rt)),
        TlbiOp::Aside1is => dynasm!(ops ; .arch aarch64 ; tlbi aside1is, X(rt)),
        TlbiOp::Aside1os => dynasm!(ops ; .arch aarch64 ; tlbi aside1os, X(rt)),
        TlbiOp::Vaae1is => dynasm!(ops ; .arch aarch64 ; tlbi vaae1is, X(rt)),
        TlbiOp::Vaale1is => dynasm!(ops ; .arch aarch64 ; tlbi vaale1is, X(rt)),
        TlbiOp::Rvae1is => dynasm!(ops ; .arch aarch64 ; tlbi rvae1is, X(rt)),
        TlbiOp::Rvale1is => dynasm!(ops ; .arch aarch64 ; tlbi rvale1is, X(rt)),
        TlbiOp::Rvae1os => dynasm!(ops ; .arch aarch64 ; tlbi rvae1os, X(rt)),
        TlbiOp::Rvale1os => dynasm!(ops ; .arch aarch64 ; tlbi rvale1os, X(rt)),
        TlbiOp::Rvaae1is => dynasm!(ops ; .arch aarch64 ; tlbi rvaae1is, X(rt)),
        TlbiOp::Rvaale1is => dynasm!(ops ; .arch aarch64 ; tlbi rvaale1is, X(rt)),
    }
    Ok(())
}

impl Encode for Insn {
    assembler::defines_label_variant!();

    fn branch(&self) -> Option<(Label, Reach)> {
        match *self {
            Insn::B { target } => Some((target, B_REACH)),
            Insn::Tbz { target, .. } | Insn::Tbnz { target, .. } => Some((target, TB_REACH)),
            Insn::Cbz { target, .. } | Insn::Cbnz { target, .. } | Insn::BCond { target, .. } => {
                Some((target, COND_REACH))
            }
            _ => None,
        }
    }
}

/// Assembles a whole sequence: the shared assembler lays it out and
/// checks branch ranges (so errors name the instruction); dynasm encodes,
/// and its label relocations then cannot fail.
pub fn assemble(insns: &[Insn]) -> Result<Assembled, EncodeError> {
    assembler::assemble(insns, |_| {
        let mut ops = Asm::new(0);
        let labels: HashMap<Label, DynamicLabel> = insns
            .iter()
            .filter_map(Encode::defines)
            .map(|l| (l, ops.new_dynamic_label()))
            .collect();
        for (index, insn) in insns.iter().enumerate() {
            emit(
                &mut ops,
                insn,
                &Ctx {
                    index,
                    labels: &labels,
                },
            )?;
        }
        ops.finalize().map_err(|_| {
            // Unreachable after the layout; reported rather than panicking.
            bad(insns.len(), "internal: dynasm failed to resolve labels")
        })
    })
}

/// Encodes a single non-branch instruction.  Branches and labels need
/// [`assemble`] (they are PC-relative) and yield `BadOperand`.
pub fn encode_one(insn: &Insn) -> Result<u32, EncodeError> {
    if insn.branch().is_some() || matches!(insn, Insn::Label(_)) {
        return Err(bad(0, "branches and labels need assemble()"));
    }
    let labels = HashMap::new();
    let mut ops = Asm::new(0);
    emit(
        &mut ops,
        insn,
        &Ctx {
            index: 0,
            labels: &labels,
        },
    )?;
    let bytes = ops
        .finalize()
        .map_err(|_| bad(0, "internal: dynasm error"))?;
    match <[u8; 4]>::try_from(bytes.as_slice()) {
        Ok(w) => Ok(u32::from_le_bytes(w)),
        Err(_) => Err(bad(0, "internal: not exactly one word")),
    }
}
