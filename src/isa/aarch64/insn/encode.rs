//! A64 binary encoding.
//!
//! Encoding goes through `dynasmrt`'s `dynasm!` macro (aarch64 backend,
//! dynamic registers).  `dynasm!` resolves mnemonics, register widths,
//! conditions, barrier options and TLBI operation names at *compile*
//! time, so an operand of one of those kinds is a `match` with a macro
//! invocation per value (`sized!` and `by_name!` write those matches
//! once); only registers and immediates are dynamic.  The runtime
//! helpers that `dynasm!` generates for dynamic immediates *panic* when a
//! value is out of range; registers and immediates are in range by type
//! (see `regs` and `imms`), so the public functions in this module never
//! panic.
//!
//! Logical (immediate) is encoded by hand: its N:immr:imms fields
//! [`ImmLogic`] computed when it was built; dynasm would search for them
//! again.

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

/// `dynasm!` for A64 (its default target is x86-64).  Registers are
/// passed as the model's types (`X(rd)`): dynasm converts them to their
/// field with `u8::from`.
macro_rules! a64 {
    ($ops:ident; $($insn:tt)*) => {
        dynasm!($ops ; .arch aarch64 ; $($insn)*)
    };
}

/// A load or store of each access size: `[$b $h $m]` are the byte,
/// halfword and word/doubleword mnemonics; the registers in `($r, ..)`
/// are W, or X for doublewords, and an exclusive store's status register
/// `W($s)` is W for every size; `$addr` is the address operand.
macro_rules! sized {
    ($ops:ident, $size:expr, [$b:ident $h:ident $m:ident],
     $(W($s:ident),)? ($($r:ident),+), $addr:tt) => {
        match $size {
            Size::B => a64!($ops; $b $(W($s),)? $(W($r)),+, $addr),
            Size::H => a64!($ops; $h $(W($s),)? $(W($r)),+, $addr),
            Size::W => a64!($ops; $m $(W($s),)? $(W($r)),+, $addr),
            Size::X => a64!($ops; $m $(W($s),)? $(X($r)),+, $addr),
        }
    };
}

/// `dynasm!` once per value of an operand it takes only by name: for
/// `$value`, the instruction `$pre NAME $post` of its `Variant => NAME`.
macro_rules! by_name {
    ($ops:ident, $value:expr, $pre:tt $post:tt, $($var:path => $name:ident,)+) => {
        match $value {
            $($var => by_name!(@one $ops, $pre $name $post),)+
        }
    };
    (@one $ops:ident, [$($pre:tt)*] $name:ident [$($post:tt)*]) => {
        a64!($ops; $($pre)* $name $($post)*)
    };
}

/// The instruction `$pre COND $post` for the condition `$cond`.
macro_rules! cond {
    ($ops:ident, $cond:expr, $pre:tt $post:tt) => {
        by_name!($ops, $cond, $pre $post,
            Cond::Eq => eq,
            Cond::Ne => ne,
            Cond::Hs => hs,
            Cond::Lo => lo,
            Cond::Mi => mi,
            Cond::Pl => pl,
            Cond::Hi => hi,
            Cond::Ls => ls,
            Cond::Ge => ge,
            Cond::Lt => lt,
            Cond::Gt => gt,
            Cond::Le => le,
        )
    };
}

/// The barrier `$m` (DMB or DSB) with the option `$o`.
macro_rules! barrier {
    ($ops:ident, $m:ident, $o:expr) => {
        by_name!($ops, $o, [$m] [],
            BarrierOpt::Sy => sy,
            BarrierOpt::St => st,
            BarrierOpt::Ld => ld,
            BarrierOpt::Ish => ish,
            BarrierOpt::Ishst => ishst,
            BarrierOpt::Ishld => ishld,
            BarrierOpt::Osh => osh,
            BarrierOpt::Oshst => oshst,
            BarrierOpt::Oshld => oshld,
            BarrierOpt::Nsh => nsh,
            BarrierOpt::Nshst => nshst,
        )
    };
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

/// The 16 bits and the shift of a move-wide immediate, as `dynasm!`
/// takes them.
fn wide(imm: MoveWide) -> (u32, u32) {
    (u32::from(imm.bits()), u32::from(imm.shift()))
}

/// Appends one instruction to `ops`: here the data processing (moves,
/// logical, arithmetic, shifts and bit operations), the rest in
/// [`emit_access_or_control`].
fn emit(ops: &mut Asm, insn: &Insn, cx: &Ctx<'_>) -> Result<(), EncodeError> {
    use Insn::*;
    match *insn {
        Movz { rd, imm } => {
            let (imm, sh) = wide(imm);
            a64!(ops; movz X(rd), imm, lsl sh)
        }
        Movk { rd, imm } => {
            let (imm, sh) = wide(imm);
            a64!(ops; movk X(rd), imm, lsl sh)
        }
        Movn { rd, imm } => {
            let (imm, sh) = wide(imm);
            a64!(ops; movn X(rd), imm, lsl sh)
        }
        OrrImm { rd, rn, imm } => {
            ops.extend(logical_imm_word(OPC_ORR, rd.field(), rn.field(), imm).to_le_bytes())
        }
        AndImm { rd, rn, imm } => {
            ops.extend(logical_imm_word(OPC_AND, rd.field(), rn.field(), imm).to_le_bytes())
        }
        // MOV (register) is ORR Xd, XZR, Xm; MVN is ORN Xd, XZR, Xm (Arm
        // ARM C6.2 "MOV (register)", "MVN").
        MovReg { rd, rm } => a64!(ops; orr X(rd), xzr, X(rm)),
        Mvn { rd, rm } => a64!(ops; orn X(rd), xzr, X(rm)),
        // Logical and add/subtract (shifted register): 31 is XZR in every
        // position.
        Orr { rd, rn, rm } => a64!(ops; orr X(rd), X(rn), X(rm)),
        And { rd, rn, rm } => a64!(ops; and X(rd), X(rn), X(rm)),
        Eor { rd, rn, rm } => a64!(ops; eor X(rd), X(rn), X(rm)),
        Bic { rd, rn, rm } => a64!(ops; bic X(rd), X(rn), X(rm)),
        Add { rd, rn, rm } => a64!(ops; add X(rd), X(rn), X(rm)),
        Sub { rd, rn, rm } => a64!(ops; sub X(rd), X(rn), X(rm)),
        SubsReg { rd, rn, rm } => a64!(ops; subs X(rd), X(rn), X(rm)),
        // CMP (shifted register) = SUBS XZR, Xn, Xm.
        CmpReg { rn, rm } => a64!(ops; cmp X(rn), X(rm)),
        Mul { rd, rn, rm } => a64!(ops; mul X(rd), X(rn), X(rm)),
        // ADD/SUB (immediate): 31 is SP for both Rd and Rn; SUBS
        // (immediate): Rd = 31 is XZR (that is CMP), Rn = 31 is SP.
        AddImm {
            rd,
            rn,
            imm,
            lsl12: false,
        } => a64!(ops; add XSP(rd), XSP(rn), u32::from(imm.get())),
        AddImm { rd, rn, imm, .. } => {
            a64!(ops; add XSP(rd), XSP(rn), u32::from(imm.get()), lsl 12)
        }
        SubImm {
            rd,
            rn,
            imm,
            lsl12: false,
        } => a64!(ops; sub XSP(rd), XSP(rn), u32::from(imm.get())),
        SubImm { rd, rn, imm, .. } => {
            a64!(ops; sub XSP(rd), XSP(rn), u32::from(imm.get()), lsl 12)
        }
        SpAdd { imm } => a64!(ops; add sp, sp, u32::from(imm.bytes())),
        SpSub { imm } => a64!(ops; sub sp, sp, u32::from(imm.bytes())),
        SubsImm { rd, rn, imm } => a64!(ops; subs X(rd), XSP(rn), u32::from(imm.get())),
        CmpImm { rn, imm } => a64!(ops; cmp XSP(rn), u32::from(imm.get())),
        LslImm { rd, rn, sh } => a64!(ops; lsl X(rd), X(rn), u32::from(sh.get())),
        LsrImm { rd, rn, sh } => a64!(ops; lsr X(rd), X(rn), u32::from(sh.get())),
        LslReg { rd, rn, rm } => a64!(ops; lsl X(rd), X(rn), X(rm)),
        LsrReg { rd, rn, rm } => a64!(ops; lsr X(rd), X(rn), X(rm)),
        // Both are UBFM aliases.
        Ubfiz { rd, rn, field } | Ubfx { rd, rn, field } => {
            let (lsb, width) = (u32::from(field.lsb().get()), u32::from(field.width()));
            if matches!(insn, Ubfiz { .. }) {
                a64!(ops; ubfiz X(rd), X(rn), lsb, width)
            } else {
                a64!(ops; ubfx X(rd), X(rn), lsb, width)
            }
        }
        // Data-processing (1 source): 31 is XZR in both fields.
        Rev { rd, rn } => a64!(ops; rev X(rd), X(rn)),
        Clz { rd, rn } => a64!(ops; clz X(rd), X(rn)),
        Rbit { rd, rn } => a64!(ops; rbit X(rd), X(rn)),
        Rev32W { rd, rn } => a64!(ops; rev W(rd), W(rn)),
        Rev16W { rd, rn } => a64!(ops; rev16 W(rd), W(rn)),
        Cset { rd, cond } => cond!(ops, cond, [cset X(rd),] []),
        _ => return emit_access_or_control(ops, insn, cx),
    }
    Ok(())
}

/// Loads and stores (plain, exclusive, acquire/release and LSE atomic),
/// branches, barriers, TLBI and the rest of [`emit`]'s instructions.
// The register-offset patterns stay on one line each.
#[rustfmt::skip]
fn emit_access_or_control(ops: &mut Asm, insn: &Insn, cx: &Ctx<'_>) -> Result<(), EncodeError> {
    use Insn::*;
    match *insn {
        Str { rt, rn, off } => {
            sized!(ops, off.size(), [strb strh str], (rt), [XSP(rn), off.bytes()])
        }
        Ldr { rt, rn, off } => {
            sized!(ops, off.size(), [ldrb ldrh ldr], (rt), [XSP(rn), off.bytes()])
        }
        StrReg { size, rt, rn, rm, scaled: false } => {
            sized!(ops, size, [strb strh str], (rt), [XSP(rn), X(rm)])
        }
        LdrReg { size, rt, rn, rm, scaled: false } => {
            sized!(ops, size, [ldrb ldrh ldr], (rt), [XSP(rn), X(rm)])
        }
        // `lsl #log2(size)` is the S = 1 form; for bytes that is `lsl #0`
        // (Arm ARM C6.2 "LDRB (register)"), which dynasm tells apart from
        // no shift at all.
        StrReg { size, rt, rn, rm, scaled: true } => {
            sized!(ops, size, [strb strh str], (rt), [XSP(rn), X(rm), lsl size.log2()])
        }
        LdrReg { size, rt, rn, rm, scaled: true } => {
            sized!(ops, size, [ldrb ldrh ldr], (rt), [XSP(rn), X(rm), lsl size.log2()])
        }
        Ldxr { size, rt, rn } => sized!(ops, size, [ldxrb ldxrh ldxr], (rt), [XSP(rn)]),
        Ldaxr { size, rt, rn } => sized!(ops, size, [ldaxrb ldaxrh ldaxr], (rt), [XSP(rn)]),
        Ldar { size, rt, rn } => sized!(ops, size, [ldarb ldarh ldar], (rt), [XSP(rn)]),
        Stlr { size, rt, rn } => sized!(ops, size, [stlrb stlrh stlr], (rt), [XSP(rn)]),
        Stxr { size, rs, rt, rn } | Stlxr { size, rs, rt, rn } => {
            // Arm ARM C6.2 "STXR": if s == t, or s == n with n != 31, the
            // behaviour is CONSTRAINED UNPREDICTABLE; refuse to emit it.
            // GNU as also warns for wzr status with an sp base (both are
            // number 31, architecturally fine); that is rejected too so the
            // emitted text always assembles without warnings.
            if rs.field() == rt.field() || rs.field() == rn.field() {
                return Err(bad(cx.index, "exclusive status register overlaps rt or rn"));
            }
            if matches!(insn, Stlxr { .. }) {
                sized!(ops, size, [stlxrb stlxrh stlxr], W(rs), (rt), [XSP(rn)])
            } else {
                sized!(ops, size, [stxrb stxrh stxr], W(rs), (rt), [XSP(rn)])
            }
        }
        Casa { size, rs, rt, rn } => sized!(ops, size, [casab casah casa], (rs, rt), [XSP(rn)]),
        Swpa { size, rs, rt, rn } => sized!(ops, size, [swpab swpah swpa], (rs, rt), [XSP(rn)]),
        Cbz { rt, target } => a64!(ops; cbz X(rt), =>cx.label(target)?),
        Cbnz { rt, target } => a64!(ops; cbnz X(rt), =>cx.label(target)?),
        Tbz { rt, bit, target } => {
            let (b, l) = (u32::from(bit.get()), cx.label(target)?);
            a64!(ops; tbz X(rt), b, =>l)
        }
        Tbnz { rt, bit, target } => {
            let (b, l) = (u32::from(bit.get()), cx.label(target)?);
            a64!(ops; tbnz X(rt), b, =>l)
        }
        BCond { cond, target } => {
            let l = cx.label(target)?;
            cond!(ops, cond, [b.] [=>l])
        }
        B { target } => a64!(ops; b =>cx.label(target)?),
        Dmb(o) => barrier!(ops, dmb, o),
        Dsb(o) => barrier!(ops, dsb, o),
        Ret => a64!(ops; ret),
        Isb => a64!(ops; isb),
        // Unpatched, the alternative is its default: a `nop`.
        Nop | AltB { .. } => a64!(ops; nop),
        Tlbi { op, rt } => emit_tlbi(ops, cx, op, rt)?,
        Label(l) => a64!(ops; =>cx.label(l)?),
        _ => return Err(bad(cx.index, "internal: not an access or control instruction")),
    }
    Ok(())
}

fn emit_tlbi(
    ops: &mut Asm,
    cx: &Ctx<'_>,
    op: TlbiOp,
    rt: Option<RegOrZr>,
) -> Result<(), EncodeError> {
    let rt = match (op.takes_reg(), rt) {
        (true, Some(r)) => r,
        // TLBI VMALLE1* have no register operand; Rt is 0b11111 (Arm ARM
        // C5.5 "TLBI VMALLE1": "Rt should be 0b11111", as GNU as emits).
        (false, None) => RegOrZr::Zr,
        (true, None) => return Err(bad(cx.index, "this TLBI operation needs a register")),
        (false, Some(_)) => return Err(bad(cx.index, "vmalle1* TLBI takes no register")),
    };
    // dynasm-rs fills Rt with 0 when the register operand is omitted, so the
    // register is always passed explicitly (XZR for the vmalle1 forms).
    by_name!(ops, op, [tlbi] [, X(rt)],
        TlbiOp::Vmalle1 => vmalle1,
        TlbiOp::Vmalle1is => vmalle1is,
        TlbiOp::Vmalle1os => vmalle1os,
        TlbiOp::Vae1 => vae1,
        TlbiOp::Vae1is => vae1is,
        TlbiOp::Vae1os => vae1os,
        TlbiOp::Vale1 => vale1,
        TlbiOp::Vale1is => vale1is,
        TlbiOp::Vale1os => vale1os,
        TlbiOp::Aside1 => aside1,
        TlbiOp::Aside1is => aside1is,
        TlbiOp::Aside1os => aside1os,
        TlbiOp::Vaae1is => vaae1is,
        TlbiOp::Vaale1is => vaale1is,
        TlbiOp::Rvae1is => rvae1is,
        TlbiOp::Rvale1is => rvale1is,
        TlbiOp::Rvae1os => rvae1os,
        TlbiOp::Rvale1os => rvale1os,
        TlbiOp::Rvaae1is => rvaae1is,
        TlbiOp::Rvaale1is => rvaale1is,
    );
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
