//! A64 binary encoding: one 32-bit word per instruction, the fixed bits
//! of its form with the operand fields placed in them (Arm ARM C4.1 "A64
//! instruction set encoding"; the base words are the C6.2 pages'), and
//! the shared fixed-width assembler for labels. Registers and immediates
//! are in range by type (see `regs` and `imms`), so the only operands
//! checked here are the combinations a type cannot rule out.

use crate::isa::assembler::{self, Encode, Reach};

use super::{
    Assembled, BarrierOpt, Cond, EncodeError, ImmLogic, Insn, Label, MoveWide, RegOrSp, RegOrZr,
    Size, TlbiOp, UImm12Scaled,
};

/// Reach of B (imm26 words) and of CBZ/CBNZ/B.cond (imm19) (Arm ARM
/// C6.2 "B", "B.cond", "CBZ").
const B_REACH: Reach = Reach::signed(26, 4);
const COND_REACH: Reach = Reach::signed(19, 4);
/// TBZ/TBNZ: imm14 words.
const TB_REACH: Reach = Reach::signed(14, 4);

/// Register number 31: XZR or SP, as the field's position says.
const R31: u8 = 31;

fn bad(index: usize, what: &'static str) -> EncodeError {
    EncodeError::BadOperand { index, what }
}

/// Rd/Rt (bits 0-4), Rn (5-9) and Rm/Rs (16-20) placed in `base`: the
/// data-processing (register) forms, and the loads and stores whose
/// second register is an index or a status/compare value.
fn rrr(base: u32, d: u8, n: u8, m: u8) -> u32 {
    base | u32::from(m) << 16 | u32::from(n) << 5 | u32::from(d)
}

/// Rd and Rn alone: data-processing (1 source), and the loads and stores
/// whose Rs field is fixed (all ones) in `base`.
fn rr(base: u32, d: u8, n: u8) -> u32 {
    rrr(base, d, n, 0)
}

/// Add/subtract (immediate), 64-bit, no shift: imm12 in bits 10-21.
fn add_imm(base: u32, d: u8, n: u8, imm: u16) -> u32 {
    rr(base | u32::from(imm) << 10, d, n)
}

/// Move wide (immediate), 64-bit: hw (the shift / 16) in bits 21-22,
/// imm16 in 5-20.
fn move_wide(base: u32, d: RegOrZr, imm: MoveWide) -> u32 {
    let hw = u32::from(imm.shift() / 16);
    base | hw << 21 | u32::from(imm.bits()) << 5 | u32::from(d.field())
}

/// Load/store (unsigned immediate): imm12 counts access-size units.
fn uimm12(base: u32, t: RegOrZr, n: RegOrSp, off: UImm12Scaled) -> u32 {
    rr(sized(base | off.units() << 10, off.size()), t.field(), n.field())
}

/// Logical (immediate), 64-bit (Arm ARM C4.1.92 "Logical (immediate)"):
/// sf = 1, `opc`, 0b100100, N, immr, imms, Rn, Rd. Rd = 31 is SP, Rn = 31
/// is XZR (C6.2 "ORR (immediate)").
fn logical_imm_word(opc: u32, rd: u8, rn: u8, imm: ImmLogic) -> u32 {
    let (n, immr, imms) = imm.fields();
    rr(1 << 31 | opc << 29 | 0b100100 << 23 | n << 22 | immr << 16 | imms << 10, rd, rn)
}

/// Opc of AND and ORR (immediate).
const OPC_AND: u32 = 0b00;
const OPC_ORR: u32 = 0b01;

/// UBFM Xd, Xn, #immr, #imms, the bitfield move behind LSL/LSR
/// (immediate), UBFIZ and UBFX (Arm ARM C6.2 "UBFM" and its aliases).
fn ubfm(d: RegOrZr, n: RegOrZr, immr: u32, imms: u32) -> u32 {
    rr(0xd340_0000 | immr << 16 | imms << 10, d.field(), n.field())
}

/// The size field (bits 30-31) of every load and store: log2 of the
/// access size in bytes.
fn sized(base: u32, size: Size) -> u32 {
    size.log2() << 30 | base
}

/// The condition field of B.cond and CSINC (Arm ARM C1.2.4 "Condition
/// code"); its low bit inverts the condition.
fn cond_code(c: Cond) -> u32 {
    match c {
        Cond::Eq => 0b0000,
        Cond::Ne => 0b0001,
        Cond::Hs => 0b0010,
        Cond::Lo => 0b0011,
        Cond::Mi => 0b0100,
        Cond::Pl => 0b0101,
        Cond::Hi => 0b1000,
        Cond::Ls => 0b1001,
        Cond::Ge => 0b1010,
        Cond::Lt => 0b1011,
        Cond::Gt => 0b1100,
        Cond::Le => 0b1101,
    }
}

/// The CRm field of DMB and DSB: the option (Arm ARM C6.2 "DMB").
fn barrier_crm(o: BarrierOpt) -> u32 {
    match o {
        BarrierOpt::Sy => 0b1111,
        BarrierOpt::St => 0b1110,
        BarrierOpt::Ld => 0b1101,
        BarrierOpt::Ish => 0b1011,
        BarrierOpt::Ishst => 0b1010,
        BarrierOpt::Ishld => 0b1001,
        BarrierOpt::Nsh => 0b0111,
        BarrierOpt::Nshst => 0b0110,
        BarrierOpt::Osh => 0b0011,
        BarrierOpt::Oshst => 0b0010,
        BarrierOpt::Oshld => 0b0001,
    }
}

/// `tlbi op{, Xt}`: SYS #0, C8, CRm, #op2, Xt (see [`TlbiOp::crm_op2`]).
fn tlbi(ix: usize, op: TlbiOp, rt: Option<RegOrZr>) -> Result<u32, EncodeError> {
    let rt = match (op.takes_reg(), rt) {
        (true, Some(r)) => r.field(),
        // TLBI VMALLE1* have no register operand; Rt is 0b11111 (Arm ARM
        // C5.5 "TLBI VMALLE1": "Rt should be 0b11111", as GNU as emits).
        (false, None) => R31,
        (true, None) => return Err(bad(ix, "this TLBI operation needs a register")),
        (false, Some(_)) => return Err(bad(ix, "vmalle1* TLBI takes no register")),
    };
    let (crm, op2) = op.crm_op2();
    Ok(rr(0xd508_8000 | crm << 8 | op2 << 5, rt, 0))
}

/// A branch's word displacement, `bits` wide, at bit 5 of the
/// compare-and-branch and conditional forms (the assembler checked its
/// reach).
fn imm_at5(disp: i64, bits: u32) -> u32 {
    ((disp >> 2) as u32 & ((1 << bits) - 1)) << 5
}

/// One instruction's word; `disp` is a branch's displacement (target -
/// pc, in reach), `ix` its index for errors.
fn word(insn: &Insn, disp: i64, ix: usize) -> Result<u32, EncodeError> {
    use Insn::*;
    #[rustfmt::skip]
    let w = match *insn {
        Movz { rd, imm } => move_wide(0xd280_0000, rd, imm),
        Movk { rd, imm } => move_wide(0xf280_0000, rd, imm),
        Movn { rd, imm } => move_wide(0x9280_0000, rd, imm),
        OrrImm { rd, rn, imm } => logical_imm_word(OPC_ORR, rd.field(), rn.field(), imm),
        AndImm { rd, rn, imm } => logical_imm_word(OPC_AND, rd.field(), rn.field(), imm),
        // Logical and add/subtract (shifted register), no shift: 31 is XZR
        // in every position. MOV is ORR Xd, XZR, Xm; MVN is ORN Xd, XZR, Xm.
        MovReg { rd, rm } => rrr(0xaa00_0000, rd.field(), R31, rm.field()),
        Mvn { rd, rm } => rrr(0xaa20_0000, rd.field(), R31, rm.field()),
        Orr { rd, rn, rm } => rrr(0xaa00_0000, rd.field(), rn.field(), rm.field()),
        And { rd, rn, rm } => rrr(0x8a00_0000, rd.field(), rn.field(), rm.field()),
        Eor { rd, rn, rm } => rrr(0xca00_0000, rd.field(), rn.field(), rm.field()),
        Bic { rd, rn, rm } => rrr(0x8a20_0000, rd.field(), rn.field(), rm.field()),
        Add { rd, rn, rm } => rrr(0x8b00_0000, rd.field(), rn.field(), rm.field()),
        Sub { rd, rn, rm } => rrr(0xcb00_0000, rd.field(), rn.field(), rm.field()),
        SubsReg { rd, rn, rm } => rrr(0xeb00_0000, rd.field(), rn.field(), rm.field()),
        // CMP (shifted register) = SUBS XZR, Xn, Xm.
        CmpReg { rn, rm } => rrr(0xeb00_0000, R31, rn.field(), rm.field()),
        // MUL = MADD Xd, Xn, Xm, XZR (Ra = 31 in bits 10-14).
        Mul { rd, rn, rm } => rrr(0x9b00_7c00, rd.field(), rn.field(), rm.field()),
        // ADD/SUB (immediate): 31 is SP for both Rd and Rn; SUBS
        // (immediate): Rd = 31 is XZR (that is CMP), Rn = 31 is SP.
        AddImm { rd, rn, imm } => add_imm(0x9100_0000, rd.field(), rn.field(), imm.get()),
        SubImm { rd, rn, imm } => add_imm(0xd100_0000, rd.field(), rn.field(), imm.get()),
        SpAdd { imm } => add_imm(0x9100_0000, R31, R31, imm.bytes()),
        SpSub { imm } => add_imm(0xd100_0000, R31, R31, imm.bytes()),
        SubsImm { rd, rn, imm } => add_imm(0xf100_0000, rd.field(), rn.field(), imm.get()),
        CmpImm { rn, imm } => add_imm(0xf100_0000, R31, rn.field(), imm.get()),
        // UBFM aliases: LSL #sh is immr = -sh mod 64, imms = 63 - sh; LSR
        // #sh is immr = sh, imms = 63.
        LslImm { rd, rn, sh } => {
            let sh = u32::from(sh.get());
            ubfm(rd, rn, (64 - sh) % 64, 63 - sh)
        }
        LsrImm { rd, rn, sh } => ubfm(rd, rn, u32::from(sh.get()), 63),
        Ubfiz { rd, rn, field } => {
            let (lsb, width) = (u32::from(field.lsb().get()), u32::from(field.width()));
            ubfm(rd, rn, (64 - lsb) % 64, width - 1)
        }
        Ubfx { rd, rn, field } => {
            let (lsb, width) = (u32::from(field.lsb().get()), u32::from(field.width()));
            ubfm(rd, rn, lsb, lsb + width - 1)
        }
        // Data-processing (2 source): LSLV, LSRV.
        LslReg { rd, rn, rm } => rrr(0x9ac0_2000, rd.field(), rn.field(), rm.field()),
        LsrReg { rd, rn, rm } => rrr(0x9ac0_2400, rd.field(), rn.field(), rm.field()),
        // Data-processing (1 source): 31 is XZR in both fields.
        Rbit { rd, rn } => rr(0xdac0_0000, rd.field(), rn.field()),
        Rev { rd, rn } => rr(0xdac0_0c00, rd.field(), rn.field()),
        Clz { rd, rn } => rr(0xdac0_1000, rd.field(), rn.field()),
        Rev32W { rd, rn } => rr(0x5ac0_0800, rd.field(), rn.field()),
        Rev16W { rd, rn } => rr(0x5ac0_0400, rd.field(), rn.field()),
        // CSET Xd, cond = CSINC Xd, XZR, XZR, invert(cond).
        Cset { rd, cond } => rrr(0x9a80_0400 | (cond_code(cond) ^ 1) << 12, rd.field(), R31, R31),
        Str { rt, rn, off } => uimm12(0x3900_0000, rt, rn, off),
        Ldr { rt, rn, off } => uimm12(0x3940_0000, rt, rn, off),
        // Register offset, option LSL (0b011 in bits 13-15); S (bit 12)
        // is the `lsl #log2(size)` form, for bytes the `lsl #0` one.
        StrReg { size, rt, rn, rm, scaled } | LdrReg { size, rt, rn, rm, scaled } => {
            let load = u32::from(matches!(insn, LdrReg { .. }));
            let base = sized(0x3820_6800 | load << 22 | u32::from(scaled) << 12, size);
            rrr(base, rt.field(), rn.field(), rm.field())
        }
        // Exclusive and acquire/release: Rs and Rt2 fixed at 31 unless used.
        Ldxr { size, rt, rn } => rr(sized(0x085f_7c00, size), rt.field(), rn.field()),
        Ldaxr { size, rt, rn } => rr(sized(0x085f_fc00, size), rt.field(), rn.field()),
        Ldar { size, rt, rn } => rr(sized(0x08df_fc00, size), rt.field(), rn.field()),
        Stlr { size, rt, rn } => rr(sized(0x089f_fc00, size), rt.field(), rn.field()),
        Stxr { size, rs, rt, rn } | Stlxr { size, rs, rt, rn } => {
            let (rs, rt, rn) = (rs.field(), rt.field(), rn.field());
            // Arm ARM C6.2 "STXR": if s == t, or s == n with n != 31, the
            // behaviour is CONSTRAINED UNPREDICTABLE; refuse to emit it.
            // GNU as also warns for wzr status with an sp base (both are
            // number 31, architecturally fine); that is rejected too so the
            // emitted text always assembles without warnings.
            if rs == rt || rs == rn {
                return Err(bad(ix, "exclusive status register overlaps rt or rn"));
            }
            let release = u32::from(matches!(insn, Stlxr { .. }));
            rrr(sized(0x0800_7c00 | release << 15, size), rt, rn, rs)
        }
        // LSE: CASA (L = 1), SWPA (A = 1).
        Casa { size, rs, rt, rn } | Swpa { size, rs, rt, rn } => {
            let base = if matches!(insn, Casa { .. }) { 0x08e0_7c00 } else { 0x38a0_8000 };
            rrr(sized(base, size), rt.field(), rn.field(), rs.field())
        }
        Cbz { rt, .. } => 0xb400_0000 | imm_at5(disp, 19) | u32::from(rt.field()),
        Cbnz { rt, .. } => 0xb500_0000 | imm_at5(disp, 19) | u32::from(rt.field()),
        // The bit number's b5 is bit 31, b40 bits 19-23.
        Tbz { rt, bit, .. } | Tbnz { rt, bit, .. } => {
            let (b, nz) = (u32::from(bit.get()), u32::from(matches!(insn, Tbnz { .. })));
            let fields = (b >> 5) << 31 | (b & 31) << 19 | imm_at5(disp, 14);
            0x3600_0000 | nz << 24 | fields | u32::from(rt.field())
        }
        BCond { cond, .. } => 0x5400_0000 | imm_at5(disp, 19) | cond_code(cond),
        B { .. } => 0x1400_0000 | ((disp >> 2) as u32 & 0x03ff_ffff),
        Dmb(o) => 0xd503_30bf | barrier_crm(o) << 8,
        Dsb(o) => 0xd503_309f | barrier_crm(o) << 8,
        Ret => 0xd65f_03c0,
        Isb => 0xd503_3fdf,
        // Unpatched, the alternative is its default: a `nop`.
        Nop | AltB { .. } => 0xd503_201f,
        Tlbi { op, rt } => tlbi(ix, op, rt)?,
        Label(_) => return Err(bad(ix, "internal: a label has no encoding")),
    };
    Ok(w)
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
/// checks branch ranges (so errors name the instruction), then each word
/// is encoded with its branch displacement known.
pub fn assemble(insns: &[Insn]) -> Result<Assembled, EncodeError> {
    assembler::assemble_by_disp(insns, false, |index, insn, disp| word(insn, disp, index))
}

/// Encodes a single non-branch instruction.  Branches and labels need
/// [`assemble`] (they are PC-relative) and yield `BadOperand`.
pub fn encode_one(insn: &Insn) -> Result<u32, EncodeError> {
    if insn.branch().is_some() || matches!(insn, Insn::Label(_)) {
        return Err(bad(0, "branches and labels need assemble()"));
    }
    word(insn, 0, 0)
}
