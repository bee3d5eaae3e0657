//! AArch64 instruction model, GNU `as` text rendering and binary encoding
//! for the small subset of A64 that TLB-shootdown sequences need.
//!
//! Encoding goes through `dynasmrt`'s `dynasm!` macro (aarch64 backend,
//! dynamic registers).  `dynasm!` resolves mnemonics, barrier options and
//! TLBI operation names at *compile* time, so every enum value gets its own
//! macro invocation; only registers and immediates are dynamic.  The
//! runtime helpers that `dynasm!` generates for dynamic immediates *panic*
//! when a value is out of range, so every operand is validated here first:
//! the public functions in this module never panic.
//!
//! Hand encoding is used for exactly one case that dynasm-rs 5.1 cannot
//! express: `ldrb`/`strb` (register offset) with an explicit `lsl #0`, whose
//! S bit (bit 12) must be set (Arm ARM C6.2 "LDRB (register)": `S == 1`
//! is the `LSL #0` form).  dynasm-rs maps amount 0 to S = 0, so the bit is
//! ORed in after dynasm produced the rest of the word.
//!
//! References are to the Arm Architecture Reference Manual for A-profile
//! (DDI 0487), "Arm ARM" below.

// `dynasm!` expands every dynamic register `X(r)` to `r.into()` (u8 -> u8
// here); the lint fires inside macro output we do not control.
#![allow(clippy::useless_conversion)]

use std::collections::HashMap;
use std::fmt;

use dynasmrt::aarch64::Aarch64Relocation;
use dynasmrt::{dynasm, DynamicLabel, DynasmApi, DynasmLabelApi, VecAssembler};

/// 0..=30 = x0..x30, 31 = xzr (or sp where the form uses sp; only as base
/// register of loads/stores).
pub type Reg = u8;
pub type Label = u32;

/// Access size of a load/store: 8/16/32/64 bits.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Size {
    B,
    H,
    W,
    X,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Cond {
    Eq,
    Ne,
    Hs,
    Lo,
    Mi,
    Pl,
    Hi,
    Ls,
    Ge,
    Lt,
    Gt,
    Le,
}

/// Barrier domain/type option of DMB/DSB (Arm ARM C6.2 "DMB", CRm field).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BarrierOpt {
    Sy,
    St,
    Ld,
    Ish,
    Ishst,
    Ishld,
    Osh,
    Oshst,
    Oshld,
    Nsh,
    Nshst,
}

/// EL1 TLB maintenance operations (Arm ARM D8.13 / C5.5 "TLBI").
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TlbiOp {
    Vmalle1,
    Vmalle1is,
    Vmalle1os,
    Vae1,
    Vae1is,
    Vae1os,
    Vale1,
    Vale1is,
    Vale1os,
    Aside1,
    Aside1is,
    Aside1os,
    Vaae1is,
    Vaale1is,
    Rvae1is,
    Rvale1is,
    Rvae1os,
    Rvale1os,
    Rvaae1is,
    Rvaale1is,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Insn {
    /// shift in {0,16,32,48}; 64-bit (x registers).
    Movz {
        rd: Reg,
        imm: u16,
        shift: u8,
    },
    Movk {
        rd: Reg,
        imm: u16,
        shift: u8,
    },
    Movn {
        rd: Reg,
        imm: u16,
        shift: u8,
    },
    /// Logical immediate (64-bit); `BadOperand` if not encodable, see
    /// [`logical_imm_encodable`].
    OrrImm {
        rd: Reg,
        rn: Reg,
        imm: u64,
    },
    /// `orr xd, xzr, xm`
    MovReg {
        rd: Reg,
        rm: Reg,
    },
    Orr {
        rd: Reg,
        rn: Reg,
        rm: Reg,
    },
    And {
        rd: Reg,
        rn: Reg,
        rm: Reg,
    },
    Eor {
        rd: Reg,
        rn: Reg,
        rm: Reg,
    },
    Bic {
        rd: Reg,
        rn: Reg,
        rm: Reg,
    },
    AndImm {
        rd: Reg,
        rn: Reg,
        imm: u64,
    },
    Add {
        rd: Reg,
        rn: Reg,
        rm: Reg,
    },
    Sub {
        rd: Reg,
        rn: Reg,
        rm: Reg,
    },
    /// imm 0..=4095
    AddImm {
        rd: Reg,
        rn: Reg,
        imm: u16,
    },
    SubImm {
        rd: Reg,
        rn: Reg,
        imm: u16,
    },
    SubsImm {
        rd: Reg,
        rn: Reg,
        imm: u16,
    },
    /// `sub sp, sp, #imm` / `add sp, sp, #imm` (imm 0..=4095, a multiple
    /// of 16): the frame for callee-saved registers.
    SpSub {
        imm: u16,
    },
    SpAdd {
        imm: u16,
    },
    Mul {
        rd: Reg,
        rn: Reg,
        rm: Reg,
    },
    LslImm {
        rd: Reg,
        rn: Reg,
        sh: u8,
    },
    LsrImm {
        rd: Reg,
        rn: Reg,
        sh: u8,
    },
    LslReg {
        rd: Reg,
        rn: Reg,
        rm: Reg,
    },
    LsrReg {
        rd: Reg,
        rn: Reg,
        rm: Reg,
    },
    Ubfiz {
        rd: Reg,
        rn: Reg,
        lsb: u8,
        width: u8,
    },
    Ubfx {
        rd: Reg,
        rn: Reg,
        lsb: u8,
        width: u8,
    },
    /// Count leading zeros (64-bit; 64 for 0).
    Clz {
        rd: Reg,
        rn: Reg,
    },
    /// Reverse the bit order (64-bit).
    Rbit {
        rd: Reg,
        rn: Reg,
    },
    /// 64-bit byte reverse.
    Rev {
        rd: Reg,
        rn: Reg,
    },
    /// `rev wD, wN` (32-bit byte reverse).
    Rev32W {
        rd: Reg,
        rn: Reg,
    },
    /// `rev16 wD, wN`
    Rev16W {
        rd: Reg,
        rn: Reg,
    },
    /// Unsigned scaled immediate offset; `off` in bytes, a multiple of the
    /// access size and at most 4095 * size.
    Str {
        size: Size,
        rt: Reg,
        rn: Reg,
        off: u32,
    },
    Ldr {
        size: Size,
        rt: Reg,
        rn: Reg,
        off: u32,
    },
    /// Register offset; `lsl #log2(size)` when `scaled`.
    StrReg {
        size: Size,
        rt: Reg,
        rn: Reg,
        rm: Reg,
        scaled: bool,
    },
    LdrReg {
        size: Size,
        rt: Reg,
        rn: Reg,
        rm: Reg,
        scaled: bool,
    },
    Ldxr {
        size: Size,
        rt: Reg,
        rn: Reg,
    },
    Ldaxr {
        size: Size,
        rt: Reg,
        rn: Reg,
    },
    Stxr {
        size: Size,
        rs: Reg,
        rt: Reg,
        rn: Reg,
    },
    Stlxr {
        size: Size,
        rs: Reg,
        rt: Reg,
        rn: Reg,
    },
    Ldar {
        size: Size,
        rt: Reg,
        rn: Reg,
    },
    Stlr {
        size: Size,
        rt: Reg,
        rn: Reg,
    },
    /// LSE (FEAT_LSE, Armv8.1); text needs `.arch armv8.1-a` or later.
    Casa {
        size: Size,
        rs: Reg,
        rt: Reg,
        rn: Reg,
    },
    Swpa {
        size: Size,
        rs: Reg,
        rt: Reg,
        rn: Reg,
    },
    CmpReg {
        rn: Reg,
        rm: Reg,
    },
    CmpImm {
        rn: Reg,
        imm: u16,
    },
    Cbz {
        rt: Reg,
        target: Label,
    },
    Cbnz {
        rt: Reg,
        target: Label,
    },
    BCond {
        cond: Cond,
        target: Label,
    },
    B {
        target: Label,
    },
    /// `nop`, patched by the kernel into `b target` when the CPU has the
    /// capability (`alternative_if CAP` ... `alternative_else_nop_endif`,
    /// `<asm/alternative.h>`; the patcher rebases a branch that leaves
    /// the alternative). Linux style only.
    AltB {
        cap: String,
        target: Label,
    },
    Ret,
    Dmb(BarrierOpt),
    Dsb(BarrierOpt),
    Isb,
    Nop,
    /// `rt` is `None` only for the `vmalle1*` operations; text
    /// `tlbi vale1is, x1`.
    Tlbi {
        op: TlbiOp,
        rt: Option<Reg>,
    },
    /// Pseudo instruction: defines `Label` at the offset of the next insn.
    Label(Label),
}

/// Little-endian instruction words; `offsets[i]` is the byte offset of
/// `insns[i]` (for `Insn::Label`, the offset of the next instruction).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Assembled {
    pub bytes: Vec<u8>,
    pub offsets: Vec<u32>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EncodeError {
    UndefinedLabel(Label),
    DuplicateLabel(Label),
    BranchOutOfRange { index: usize },
    BadOperand { index: usize, what: &'static str },
}

impl fmt::Display for EncodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EncodeError::UndefinedLabel(l) => write!(f, "undefined label {l}"),
            EncodeError::DuplicateLabel(l) => write!(f, "label {l} defined more than once"),
            EncodeError::BranchOutOfRange { index } => {
                write!(f, "instruction {index}: branch target out of range")
            }
            EncodeError::BadOperand { index, what } => {
                write!(f, "instruction {index}: bad operand: {what}")
            }
        }
    }
}

impl std::error::Error for EncodeError {}

/// True if `imm` is a valid 64-bit A64 "bitmask immediate" (Arm ARM C3.4.2
/// / pseudocode `DecodeBitMasks`): a 2/4/8/16/32/64-bit element holding one
/// rotated run of ones, replicated.  All-zeros and all-ones are not
/// encodable.
pub fn logical_imm_encodable(imm: u64) -> bool {
    dynasmrt::aarch64::encode_logical_immediate_64bit(imm).is_some()
}

// ---------------------------------------------------------------------------
// Names and text
// ---------------------------------------------------------------------------

impl Size {
    fn bytes(self) -> u32 {
        match self {
            Size::B => 1,
            Size::H => 2,
            Size::W => 4,
            Size::X => 8,
        }
    }
    fn log2(self) -> u32 {
        match self {
            Size::B => 0,
            Size::H => 1,
            Size::W => 2,
            Size::X => 3,
        }
    }
}

impl Cond {
    fn mnemonic(self) -> &'static str {
        match self {
            Cond::Eq => "b.eq",
            Cond::Ne => "b.ne",
            Cond::Hs => "b.hs",
            Cond::Lo => "b.lo",
            Cond::Mi => "b.mi",
            Cond::Pl => "b.pl",
            Cond::Hi => "b.hi",
            Cond::Ls => "b.ls",
            Cond::Ge => "b.ge",
            Cond::Lt => "b.lt",
            Cond::Gt => "b.gt",
            Cond::Le => "b.le",
        }
    }
}

impl BarrierOpt {
    fn name(self) -> &'static str {
        match self {
            BarrierOpt::Sy => "sy",
            BarrierOpt::St => "st",
            BarrierOpt::Ld => "ld",
            BarrierOpt::Ish => "ish",
            BarrierOpt::Ishst => "ishst",
            BarrierOpt::Ishld => "ishld",
            BarrierOpt::Osh => "osh",
            BarrierOpt::Oshst => "oshst",
            BarrierOpt::Oshld => "oshld",
            BarrierOpt::Nsh => "nsh",
            BarrierOpt::Nshst => "nshst",
        }
    }
}

impl TlbiOp {
    fn name(self) -> &'static str {
        match self {
            TlbiOp::Vmalle1 => "vmalle1",
            TlbiOp::Vmalle1is => "vmalle1is",
            TlbiOp::Vmalle1os => "vmalle1os",
            TlbiOp::Vae1 => "vae1",
            TlbiOp::Vae1is => "vae1is",
            TlbiOp::Vae1os => "vae1os",
            TlbiOp::Vale1 => "vale1",
            TlbiOp::Vale1is => "vale1is",
            TlbiOp::Vale1os => "vale1os",
            TlbiOp::Aside1 => "aside1",
            TlbiOp::Aside1is => "aside1is",
            TlbiOp::Aside1os => "aside1os",
            TlbiOp::Vaae1is => "vaae1is",
            TlbiOp::Vaale1is => "vaale1is",
            TlbiOp::Rvae1is => "rvae1is",
            TlbiOp::Rvale1is => "rvale1is",
            TlbiOp::Rvae1os => "rvae1os",
            TlbiOp::Rvale1os => "rvale1os",
            TlbiOp::Rvaae1is => "rvaae1is",
            TlbiOp::Rvaale1is => "rvaale1is",
        }
    }

    /// The `vmalle1*` operations invalidate by context, not address; their
    /// Rt field is RES (encoded as 0b11111) and the text takes no register.
    fn takes_reg(self) -> bool {
        !matches!(
            self,
            TlbiOp::Vmalle1 | TlbiOp::Vmalle1is | TlbiOp::Vmalle1os
        )
    }

    fn is_range(self) -> bool {
        matches!(
            self,
            TlbiOp::Rvae1is
                | TlbiOp::Rvale1is
                | TlbiOp::Rvae1os
                | TlbiOp::Rvale1os
                | TlbiOp::Rvaae1is
                | TlbiOp::Rvaale1is
        )
    }

    /// Outer-shareable TLBI variants are FEAT_TLBIOS (Armv8.4).
    fn is_outer(self) -> bool {
        matches!(
            self,
            TlbiOp::Vmalle1os
                | TlbiOp::Vae1os
                | TlbiOp::Vale1os
                | TlbiOp::Aside1os
                | TlbiOp::Rvae1os
                | TlbiOp::Rvale1os
        )
    }
}

fn xr(r: Reg) -> String {
    if r == 31 {
        "xzr".to_string()
    } else {
        format!("x{r}")
    }
}

fn wr(r: Reg) -> String {
    if r == 31 {
        "wzr".to_string()
    } else {
        format!("w{r}")
    }
}

/// Transfer register of a load/store: w for B/H/W, x for X.
fn tr(size: Size, r: Reg) -> String {
    if size == Size::X {
        xr(r)
    } else {
        wr(r)
    }
}

/// Base register of a load/store: register 31 is SP here (Arm ARM C1.2.5).
fn base(r: Reg) -> String {
    if r == 31 {
        "sp".to_string()
    } else {
        format!("x{r}")
    }
}

/// Immediates are printed the way LLVM/capstone print them: decimal up to
/// 9, hex above.  GNU as accepts both.
fn imm(v: u64) -> String {
    if v > 9 {
        format!("#{v:#x}")
    } else {
        format!("#{v}")
    }
}

fn sized(size: Size, b: &'static str, h: &'static str, w: &'static str) -> &'static str {
    match size {
        Size::B => b,
        Size::H => h,
        Size::W | Size::X => w,
    }
}

impl Insn {
    /// GNU as syntax for this instruction (no leading indentation).
    pub fn text(&self, label_name: &dyn Fn(Label) -> String) -> String {
        let m = self.mnemonic();
        if let Insn::AltB { cap, target } = self {
            return format!(
                "alternative_if {cap}\n\tb {}\nalternative_else_nop_endif",
                label_name(*target)
            );
        }
        match *self {
            Insn::Movz { rd, imm: i, shift }
            | Insn::Movk { rd, imm: i, shift }
            | Insn::Movn { rd, imm: i, shift } => {
                if shift == 0 {
                    format!("{m} {}, {}", xr(rd), imm(i.into()))
                } else {
                    format!("{m} {}, {}, lsl #{shift}", xr(rd), imm(i.into()))
                }
            }
            Insn::OrrImm { rd, rn, imm: i } | Insn::AndImm { rd, rn, imm: i } => {
                format!("{m} {}, {}, {}", xr(rd), xr(rn), imm(i))
            }
            Insn::MovReg { rd, rm } => format!("mov {}, {}", xr(rd), xr(rm)),
            Insn::Orr { rd, rn, rm }
            | Insn::And { rd, rn, rm }
            | Insn::Eor { rd, rn, rm }
            | Insn::Bic { rd, rn, rm }
            | Insn::Add { rd, rn, rm }
            | Insn::Sub { rd, rn, rm }
            | Insn::Mul { rd, rn, rm }
            | Insn::LslReg { rd, rn, rm }
            | Insn::LsrReg { rd, rn, rm } => format!("{m} {}, {}, {}", xr(rd), xr(rn), xr(rm)),
            // ADD/SUB (immediate) use SP for register 31 (Arm ARM C6.2
            // "ADD (immediate)"); 31 is rejected by the encoder, but print
            // what the encoding would mean.
            Insn::AddImm { rd, rn, imm: i } | Insn::SubImm { rd, rn, imm: i } => {
                format!("{m} {}, {}, {}", base(rd), base(rn), imm(i.into()))
            }
            Insn::SpSub { imm: i } | Insn::SpAdd { imm: i } => {
                format!("{m} sp, sp, {}", imm(i.into()))
            }
            // SUBS (immediate): Rd is XZR-capable, Rn is SP-capable.
            Insn::SubsImm { rd, rn, imm: i } => {
                format!("subs {}, {}, {}", xr(rd), base(rn), imm(i.into()))
            }
            Insn::LslImm { rd, rn, sh } | Insn::LsrImm { rd, rn, sh } => {
                format!("{m} {}, {}, #{sh}", xr(rd), xr(rn))
            }
            Insn::Ubfiz { rd, rn, lsb, width } | Insn::Ubfx { rd, rn, lsb, width } => {
                format!("{m} {}, {}, #{lsb}, #{width}", xr(rd), xr(rn))
            }
            Insn::Rev { rd, rn } | Insn::Clz { rd, rn } | Insn::Rbit { rd, rn } => {
                format!("{m} {}, {}", xr(rd), xr(rn))
            }
            Insn::Rev32W { rd, rn } | Insn::Rev16W { rd, rn } => {
                format!("{m} {}, {}", wr(rd), wr(rn))
            }
            Insn::Str { size, rt, rn, off } | Insn::Ldr { size, rt, rn, off } => {
                if off == 0 {
                    format!("{m} {}, [{}]", tr(size, rt), base(rn))
                } else {
                    format!("{m} {}, [{}, {}]", tr(size, rt), base(rn), imm(off.into()))
                }
            }
            Insn::StrReg {
                size,
                rt,
                rn,
                rm,
                scaled,
            }
            | Insn::LdrReg {
                size,
                rt,
                rn,
                rm,
                scaled,
            } => {
                if scaled {
                    format!(
                        "{m} {}, [{}, {}, lsl #{}]",
                        tr(size, rt),
                        base(rn),
                        xr(rm),
                        size.log2()
                    )
                } else {
                    format!("{m} {}, [{}, {}]", tr(size, rt), base(rn), xr(rm))
                }
            }
            Insn::Ldxr { size, rt, rn }
            | Insn::Ldaxr { size, rt, rn }
            | Insn::Ldar { size, rt, rn }
            | Insn::Stlr { size, rt, rn } => {
                format!("{m} {}, [{}]", tr(size, rt), base(rn))
            }
            // The status register of STXR/STLXR is always a W register.
            Insn::Stxr { size, rs, rt, rn } | Insn::Stlxr { size, rs, rt, rn } => {
                format!("{m} {}, {}, [{}]", wr(rs), tr(size, rt), base(rn))
            }
            Insn::Casa { size, rs, rt, rn } | Insn::Swpa { size, rs, rt, rn } => {
                format!("{m} {}, {}, [{}]", tr(size, rs), tr(size, rt), base(rn))
            }
            Insn::CmpReg { rn, rm } => format!("cmp {}, {}", xr(rn), xr(rm)),
            Insn::CmpImm { rn, imm: i } => format!("cmp {}, {}", base(rn), imm(i.into())),
            Insn::Cbz { rt, target } | Insn::Cbnz { rt, target } => {
                format!("{m} {}, {}", xr(rt), label_name(target))
            }
            Insn::BCond { target, .. } | Insn::B { target } => {
                format!("{m} {}", label_name(target))
            }
            Insn::Ret | Insn::Isb | Insn::Nop | Insn::AltB { .. } => m.to_string(),
            Insn::Dmb(o) | Insn::Dsb(o) => format!("{m} {}", o.name()),
            Insn::Tlbi { op, rt } => match rt {
                Some(r) => format!("tlbi {}, {}", op.name(), xr(r)),
                None => format!("tlbi {}", op.name()),
            },
            Insn::Label(l) => format!("{}:", label_name(l)),
        }
    }

    /// Assembler mnemonic (the size-specific one for loads/stores, e.g.
    /// `ldxrb`); `""` for the `Label` pseudo instruction.
    pub fn mnemonic(&self) -> &'static str {
        match *self {
            Insn::Movz { .. } => "movz",
            Insn::Movk { .. } => "movk",
            Insn::Movn { .. } => "movn",
            Insn::OrrImm { .. } | Insn::Orr { .. } => "orr",
            Insn::MovReg { .. } => "mov",
            Insn::And { .. } | Insn::AndImm { .. } => "and",
            Insn::Eor { .. } => "eor",
            Insn::Bic { .. } => "bic",
            Insn::Add { .. } | Insn::AddImm { .. } | Insn::SpAdd { .. } => "add",
            Insn::Sub { .. } | Insn::SubImm { .. } | Insn::SpSub { .. } => "sub",
            Insn::SubsImm { .. } => "subs",
            Insn::Mul { .. } => "mul",
            Insn::LslImm { .. } | Insn::LslReg { .. } => "lsl",
            Insn::LsrImm { .. } | Insn::LsrReg { .. } => "lsr",
            Insn::Ubfiz { .. } => "ubfiz",
            Insn::Ubfx { .. } => "ubfx",
            Insn::Clz { .. } => "clz",
            Insn::Rbit { .. } => "rbit",
            Insn::Rev { .. } | Insn::Rev32W { .. } => "rev",
            Insn::Rev16W { .. } => "rev16",
            Insn::Str { size, .. } | Insn::StrReg { size, .. } => {
                sized(size, "strb", "strh", "str")
            }
            Insn::Ldr { size, .. } | Insn::LdrReg { size, .. } => {
                sized(size, "ldrb", "ldrh", "ldr")
            }
            Insn::Ldxr { size, .. } => sized(size, "ldxrb", "ldxrh", "ldxr"),
            Insn::Ldaxr { size, .. } => sized(size, "ldaxrb", "ldaxrh", "ldaxr"),
            Insn::Stxr { size, .. } => sized(size, "stxrb", "stxrh", "stxr"),
            Insn::Stlxr { size, .. } => sized(size, "stlxrb", "stlxrh", "stlxr"),
            Insn::Ldar { size, .. } => sized(size, "ldarb", "ldarh", "ldar"),
            Insn::Stlr { size, .. } => sized(size, "stlrb", "stlrh", "stlr"),
            Insn::Casa { size, .. } => sized(size, "casab", "casah", "casa"),
            Insn::Swpa { size, .. } => sized(size, "swpab", "swpah", "swpa"),
            Insn::CmpReg { .. } | Insn::CmpImm { .. } => "cmp",
            Insn::Cbz { .. } => "cbz",
            Insn::Cbnz { .. } => "cbnz",
            Insn::BCond { cond, .. } => cond.mnemonic(),
            Insn::B { .. } => "b",
            Insn::Ret => "ret",
            Insn::Dmb(_) => "dmb",
            Insn::Dsb(_) => "dsb",
            Insn::Isb => "isb",
            Insn::Nop | Insn::AltB { .. } => "nop",
            Insn::Tlbi { .. } => "tlbi",
            Insn::Label(_) => "",
        }
    }

    /// DMB, DSB and ISB.  (Acquire/release accesses order memory too, but
    /// they are accesses, not barriers.)
    pub fn is_barrier(&self) -> bool {
        matches!(self, Insn::Dmb(_) | Insn::Dsb(_) | Insn::Isb)
    }

    /// Writes memory.  CASA/SWPA are read-modify-write and count as both
    /// a load and a store (CASA writes only on a successful compare, but
    /// it is a store for ordering purposes: Arm ARM B2.3).
    pub fn is_store(&self) -> bool {
        matches!(
            self,
            Insn::Str { .. }
                | Insn::StrReg { .. }
                | Insn::Stxr { .. }
                | Insn::Stlxr { .. }
                | Insn::Stlr { .. }
                | Insn::Casa { .. }
                | Insn::Swpa { .. }
        )
    }

    pub fn is_load(&self) -> bool {
        matches!(
            self,
            Insn::Ldr { .. }
                | Insn::LdrReg { .. }
                | Insn::Ldxr { .. }
                | Insn::Ldaxr { .. }
                | Insn::Ldar { .. }
                | Insn::Casa { .. }
                | Insn::Swpa { .. }
        )
    }

    /// TLB maintenance.
    pub fn is_invalidate(&self) -> bool {
        matches!(self, Insn::Tlbi { .. })
    }

    /// Minimum `.arch` the text needs: LSE atomics are FEAT_LSE (Armv8.1);
    /// range TLBIs are FEAT_TLBIRANGE and the `*os` TLBIs FEAT_TLBIOS, both
    /// Armv8.4.
    pub fn needs_arch(&self) -> Option<&'static str> {
        match *self {
            Insn::Casa { .. } | Insn::Swpa { .. } => Some("armv8.1-a"),
            Insn::Tlbi { op, .. } if op.is_range() || op.is_outer() => Some("armv8.4-a"),
            _ => None,
        }
    }
}

// ---------------------------------------------------------------------------
// Encoding
// ---------------------------------------------------------------------------

type Asm = VecAssembler<Aarch64Relocation>;

/// Largest displacement (bytes) of B (imm26) and of CBZ/CBNZ/B.cond (imm19);
/// the minimum is `-(max + 4)` (Arm ARM C6.2 "B", "B.cond", "CBZ").
const B_MAX: i64 = (1 << 27) - 4;
const COND_MAX: i64 = (1 << 20) - 4;

fn bad(index: usize, what: &'static str) -> EncodeError {
    EncodeError::BadOperand { index, what }
}

struct Ctx<'a> {
    index: usize,
    labels: &'a HashMap<Label, DynamicLabel>,
}

impl Ctx<'_> {
    fn reg(&self, r: Reg) -> Result<u8, EncodeError> {
        if r > 31 {
            Err(bad(self.index, "register number > 31"))
        } else {
            Ok(r)
        }
    }
    /// A register that must not be 31 because 31 would mean SP in this
    /// encoding, while the model only allows SP as a load/store base.
    fn not_sp(&self, r: Reg) -> Result<u8, EncodeError> {
        if r >= 31 {
            Err(bad(self.index, "register 31 would be sp in this form"))
        } else {
            Ok(r)
        }
    }
    fn label(&self, l: Label) -> Result<DynamicLabel, EncodeError> {
        self.labels
            .get(&l)
            .copied()
            .ok_or(EncodeError::UndefinedLabel(l))
    }
}

fn check_wide(ix: usize, shift: u8) -> Result<u32, EncodeError> {
    match shift {
        0 | 16 | 32 | 48 => Ok(shift.into()),
        _ => Err(bad(ix, "move-wide shift must be 0, 16, 32 or 48")),
    }
}

/// Rejects `off` that the unsigned-offset form (imm12 scaled by the access
/// size, Arm ARM C6.2 "STR (immediate)", unsigned offset variant) can't hold.
fn check_off(ix: usize, size: Size, off: u32) -> Result<u32, EncodeError> {
    if !off.is_multiple_of(size.bytes()) {
        return Err(bad(ix, "offset not a multiple of the access size"));
    }
    if off / size.bytes() > 4095 {
        return Err(bad(ix, "offset out of range (max 4095 * size)"));
    }
    Ok(off)
}

fn emit(ops: &mut Asm, insn: &Insn, cx: &Ctx<'_>) -> Result<(), EncodeError> {
    let ix = cx.index;
    match *insn {
        Insn::Movz { rd, imm, shift } => {
            let (rd, sh, imm) = (cx.reg(rd)?, check_wide(ix, shift)?, u32::from(imm));
            dynasm!(ops ; .arch aarch64 ; movz X(rd), imm, lsl sh);
        }
        Insn::Movk { rd, imm, shift } => {
            let (rd, sh, imm) = (cx.reg(rd)?, check_wide(ix, shift)?, u32::from(imm));
            dynasm!(ops ; .arch aarch64 ; movk X(rd), imm, lsl sh);
        }
        Insn::Movn { rd, imm, shift } => {
            let (rd, sh, imm) = (cx.reg(rd)?, check_wide(ix, shift)?, u32::from(imm));
            dynasm!(ops ; .arch aarch64 ; movn X(rd), imm, lsl sh);
        }
        Insn::OrrImm { rd, rn, imm } | Insn::AndImm { rd, rn, imm } => {
            // Logical (immediate): Rd = 31 is SP, Rn = 31 is XZR (Arm ARM
            // C6.2 "ORR (immediate)").
            let (rd, rn) = (cx.not_sp(rd)?, cx.reg(rn)?);
            if !logical_imm_encodable(imm) {
                return Err(bad(ix, "immediate is not a valid bitmask immediate"));
            }
            if matches!(insn, Insn::OrrImm { .. }) {
                dynasm!(ops ; .arch aarch64 ; orr XSP(rd), X(rn), imm);
            } else {
                dynasm!(ops ; .arch aarch64 ; and XSP(rd), X(rn), imm);
            }
        }
        Insn::MovReg { rd, rm } => {
            // MOV (register) is ORR Xd, XZR, Xm (Arm ARM C6.2 "MOV (register)").
            let (rd, rm) = (cx.reg(rd)?, cx.reg(rm)?);
            dynasm!(ops ; .arch aarch64 ; orr X(rd), xzr, X(rm));
        }
        Insn::Orr { rd, rn, rm } => {
            let (rd, rn, rm) = (cx.reg(rd)?, cx.reg(rn)?, cx.reg(rm)?);
            dynasm!(ops ; .arch aarch64 ; orr X(rd), X(rn), X(rm));
        }
        Insn::And { rd, rn, rm } => {
            let (rd, rn, rm) = (cx.reg(rd)?, cx.reg(rn)?, cx.reg(rm)?);
            dynasm!(ops ; .arch aarch64 ; and X(rd), X(rn), X(rm));
        }
        Insn::Eor { rd, rn, rm } => {
            let (rd, rn, rm) = (cx.reg(rd)?, cx.reg(rn)?, cx.reg(rm)?);
            dynasm!(ops ; .arch aarch64 ; eor X(rd), X(rn), X(rm));
        }
        Insn::Bic { rd, rn, rm } => {
            let (rd, rn, rm) = (cx.reg(rd)?, cx.reg(rn)?, cx.reg(rm)?);
            dynasm!(ops ; .arch aarch64 ; bic X(rd), X(rn), X(rm));
        }
        Insn::Add { rd, rn, rm } => {
            // Shifted-register form: 31 is XZR in every position.
            let (rd, rn, rm) = (cx.reg(rd)?, cx.reg(rn)?, cx.reg(rm)?);
            dynasm!(ops ; .arch aarch64 ; add X(rd), X(rn), X(rm));
        }
        Insn::Sub { rd, rn, rm } => {
            let (rd, rn, rm) = (cx.reg(rd)?, cx.reg(rn)?, cx.reg(rm)?);
            dynasm!(ops ; .arch aarch64 ; sub X(rd), X(rn), X(rm));
        }
        Insn::AddImm { rd, rn, imm } | Insn::SubImm { rd, rn, imm } => {
            // ADD/SUB (immediate): 31 is SP for both Rd and Rn.
            let (rd, rn) = (cx.not_sp(rd)?, cx.not_sp(rn)?);
            let imm = check_imm12(ix, imm)?;
            if matches!(insn, Insn::AddImm { .. }) {
                dynasm!(ops ; .arch aarch64 ; add XSP(rd), XSP(rn), imm);
            } else {
                dynasm!(ops ; .arch aarch64 ; sub XSP(rd), XSP(rn), imm);
            }
        }
        Insn::SpSub { imm } | Insn::SpAdd { imm } => {
            let imm = check_imm12(ix, imm)?;
            if imm % 16 != 0 {
                return Err(bad(ix, "sp moves in multiples of 16"));
            }
            if matches!(insn, Insn::SpAdd { .. }) {
                dynasm!(ops ; .arch aarch64 ; add XSP(31), XSP(31), imm);
            } else {
                dynasm!(ops ; .arch aarch64 ; sub XSP(31), XSP(31), imm);
            }
        }
        Insn::SubsImm { rd, rn, imm } => {
            // SUBS (immediate): Rd = 31 is XZR (that is CMP), Rn = 31 is SP.
            let (rd, rn) = (cx.reg(rd)?, cx.not_sp(rn)?);
            let imm = check_imm12(ix, imm)?;
            dynasm!(ops ; .arch aarch64 ; subs X(rd), XSP(rn), imm);
        }
        Insn::Mul { rd, rn, rm } => {
            let (rd, rn, rm) = (cx.reg(rd)?, cx.reg(rn)?, cx.reg(rm)?);
            dynasm!(ops ; .arch aarch64 ; mul X(rd), X(rn), X(rm));
        }
        Insn::LslImm { rd, rn, sh } | Insn::LsrImm { rd, rn, sh } => {
            let (rd, rn) = (cx.reg(rd)?, cx.reg(rn)?);
            if sh > 63 {
                return Err(bad(ix, "shift amount must be 0..=63"));
            }
            let sh = u32::from(sh);
            if matches!(insn, Insn::LslImm { .. }) {
                dynasm!(ops ; .arch aarch64 ; lsl X(rd), X(rn), sh);
            } else {
                dynasm!(ops ; .arch aarch64 ; lsr X(rd), X(rn), sh);
            }
        }
        Insn::LslReg { rd, rn, rm } => {
            let (rd, rn, rm) = (cx.reg(rd)?, cx.reg(rn)?, cx.reg(rm)?);
            dynasm!(ops ; .arch aarch64 ; lsl X(rd), X(rn), X(rm));
        }
        Insn::LsrReg { rd, rn, rm } => {
            let (rd, rn, rm) = (cx.reg(rd)?, cx.reg(rn)?, cx.reg(rm)?);
            dynasm!(ops ; .arch aarch64 ; lsr X(rd), X(rn), X(rm));
        }
        Insn::Ubfiz { rd, rn, lsb, width } | Insn::Ubfx { rd, rn, lsb, width } => {
            // Both are UBFM aliases; the field must lie inside the 64-bit
            // register: lsb < 64 and 1 <= width <= 64 - lsb (Arm ARM C6.2
            // "UBFIZ", "UBFX").
            let (rd, rn) = (cx.reg(rd)?, cx.reg(rn)?);
            if lsb > 63 || width == 0 || u32::from(width) > 64 - u32::from(lsb) {
                return Err(bad(ix, "bitfield lsb/width outside 64-bit register"));
            }
            let (lsb, width) = (u32::from(lsb), u32::from(width));
            if matches!(insn, Insn::Ubfiz { .. }) {
                dynasm!(ops ; .arch aarch64 ; ubfiz X(rd), X(rn), lsb, width);
            } else {
                dynasm!(ops ; .arch aarch64 ; ubfx X(rd), X(rn), lsb, width);
            }
        }
        Insn::Rev { rd, rn } => {
            let (rd, rn) = (cx.reg(rd)?, cx.reg(rn)?);
            dynasm!(ops ; .arch aarch64 ; rev X(rd), X(rn));
        }
        // Data-processing (1 source): 31 is XZR in both fields.
        Insn::Clz { rd, rn } => {
            let (rd, rn) = (cx.reg(rd)?, cx.reg(rn)?);
            dynasm!(ops ; .arch aarch64 ; clz X(rd), X(rn));
        }
        Insn::Rbit { rd, rn } => {
            let (rd, rn) = (cx.reg(rd)?, cx.reg(rn)?);
            dynasm!(ops ; .arch aarch64 ; rbit X(rd), X(rn));
        }
        Insn::Rev32W { rd, rn } => {
            let (rd, rn) = (cx.reg(rd)?, cx.reg(rn)?);
            dynasm!(ops ; .arch aarch64 ; rev W(rd), W(rn));
        }
        Insn::Rev16W { rd, rn } => {
            let (rd, rn) = (cx.reg(rd)?, cx.reg(rn)?);
            dynasm!(ops ; .arch aarch64 ; rev16 W(rd), W(rn));
        }
        Insn::Str { size, rt, rn, off } => {
            let (rt, rn, off) = (cx.reg(rt)?, cx.reg(rn)?, check_off(ix, size, off)?);
            match size {
                Size::B => dynasm!(ops ; .arch aarch64 ; strb W(rt), [XSP(rn), off]),
                Size::H => dynasm!(ops ; .arch aarch64 ; strh W(rt), [XSP(rn), off]),
                Size::W => dynasm!(ops ; .arch aarch64 ; str W(rt), [XSP(rn), off]),
                Size::X => dynasm!(ops ; .arch aarch64 ; str X(rt), [XSP(rn), off]),
            }
        }
        Insn::Ldr { size, rt, rn, off } => {
            let (rt, rn, off) = (cx.reg(rt)?, cx.reg(rn)?, check_off(ix, size, off)?);
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
            let (rt, rn, rm) = (cx.reg(rt)?, cx.reg(rn)?, cx.reg(rm)?);
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
            let (rt, rn, rm) = (cx.reg(rt)?, cx.reg(rn)?, cx.reg(rm)?);
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
        Insn::Ldxr { size, rt, rn } => {
            let (rt, rn) = (cx.reg(rt)?, cx.reg(rn)?);
            match size {
                Size::B => dynasm!(ops ; .arch aarch64 ; ldxrb W(rt), [XSP(rn)]),
                Size::H => dynasm!(ops ; .arch aarch64 ; ldxrh W(rt), [XSP(rn)]),
                Size::W => dynasm!(ops ; .arch aarch64 ; ldxr W(rt), [XSP(rn)]),
                Size::X => dynasm!(ops ; .arch aarch64 ; ldxr X(rt), [XSP(rn)]),
            }
        }
        Insn::Ldaxr { size, rt, rn } => {
            let (rt, rn) = (cx.reg(rt)?, cx.reg(rn)?);
            match size {
                Size::B => dynasm!(ops ; .arch aarch64 ; ldaxrb W(rt), [XSP(rn)]),
                Size::H => dynasm!(ops ; .arch aarch64 ; ldaxrh W(rt), [XSP(rn)]),
                Size::W => dynasm!(ops ; .arch aarch64 ; ldaxr W(rt), [XSP(rn)]),
                Size::X => dynasm!(ops ; .arch aarch64 ; ldaxr X(rt), [XSP(rn)]),
            }
        }
        Insn::Stxr { size, rs, rt, rn } | Insn::Stlxr { size, rs, rt, rn } => {
            let (rs, rt, rn) = (cx.reg(rs)?, cx.reg(rt)?, cx.reg(rn)?);
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
            let (rt, rn) = (cx.reg(rt)?, cx.reg(rn)?);
            match size {
                Size::B => dynasm!(ops ; .arch aarch64 ; ldarb W(rt), [XSP(rn)]),
                Size::H => dynasm!(ops ; .arch aarch64 ; ldarh W(rt), [XSP(rn)]),
                Size::W => dynasm!(ops ; .arch aarch64 ; ldar W(rt), [XSP(rn)]),
                Size::X => dynasm!(ops ; .arch aarch64 ; ldar X(rt), [XSP(rn)]),
            }
        }
        Insn::Stlr { size, rt, rn } => {
            let (rt, rn) = (cx.reg(rt)?, cx.reg(rn)?);
            match size {
                Size::B => dynasm!(ops ; .arch aarch64 ; stlrb W(rt), [XSP(rn)]),
                Size::H => dynasm!(ops ; .arch aarch64 ; stlrh W(rt), [XSP(rn)]),
                Size::W => dynasm!(ops ; .arch aarch64 ; stlr W(rt), [XSP(rn)]),
                Size::X => dynasm!(ops ; .arch aarch64 ; stlr X(rt), [XSP(rn)]),
            }
        }
        Insn::Casa { size, rs, rt, rn } => {
            let (rs, rt, rn) = (cx.reg(rs)?, cx.reg(rt)?, cx.reg(rn)?);
            match size {
                Size::B => dynasm!(ops ; .arch aarch64 ; casab W(rs), W(rt), [XSP(rn)]),
                Size::H => dynasm!(ops ; .arch aarch64 ; casah W(rs), W(rt), [XSP(rn)]),
                Size::W => dynasm!(ops ; .arch aarch64 ; casa W(rs), W(rt), [XSP(rn)]),
                Size::X => dynasm!(ops ; .arch aarch64 ; casa X(rs), X(rt), [XSP(rn)]),
            }
        }
        Insn::Swpa { size, rs, rt, rn } => {
            let (rs, rt, rn) = (cx.reg(rs)?, cx.reg(rt)?, cx.reg(rn)?);
            match size {
                Size::B => dynasm!(ops ; .arch aarch64 ; swpab W(rs), W(rt), [XSP(rn)]),
                Size::H => dynasm!(ops ; .arch aarch64 ; swpah W(rs), W(rt), [XSP(rn)]),
                Size::W => dynasm!(ops ; .arch aarch64 ; swpa W(rs), W(rt), [XSP(rn)]),
                Size::X => dynasm!(ops ; .arch aarch64 ; swpa X(rs), X(rt), [XSP(rn)]),
            }
        }
        Insn::CmpReg { rn, rm } => {
            // CMP (shifted register) = SUBS XZR, Xn, Xm; 31 is XZR.
            let (rn, rm) = (cx.reg(rn)?, cx.reg(rm)?);
            dynasm!(ops ; .arch aarch64 ; cmp X(rn), X(rm));
        }
        Insn::CmpImm { rn, imm } => {
            // CMP (immediate) = SUBS XZR, Xn|SP, #imm; 31 would be SP.
            let rn = cx.not_sp(rn)?;
            let imm = check_imm12(ix, imm)?;
            dynasm!(ops ; .arch aarch64 ; cmp XSP(rn), imm);
        }
        Insn::Cbz { rt, target } => {
            let (rt, l) = (cx.reg(rt)?, cx.label(target)?);
            dynasm!(ops ; .arch aarch64 ; cbz X(rt), =>l);
        }
        Insn::Cbnz { rt, target } => {
            let (rt, l) = (cx.reg(rt)?, cx.label(target)?);
            dynasm!(ops ; .arch aarch64 ; cbnz X(rt), =>l);
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
        Insn::Ret => dynasm!(ops ; .arch aarch64 ; ret),
        Insn::Dmb(o) => match o {
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
        },
        Insn::Dsb(o) => match o {
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
        },
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

fn check_imm12(ix: usize, imm: u16) -> Result<u32, EncodeError> {
    if imm > 4095 {
        Err(bad(ix, "arithmetic immediate must be 0..=4095"))
    } else {
        Ok(imm.into())
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

fn emit_tlbi(ops: &mut Asm, cx: &Ctx<'_>, op: TlbiOp, rt: Option<Reg>) -> Result<(), EncodeError> {
    let rt = match (op.takes_reg(), rt) {
        (true, Some(r)) => cx.reg(r)?,
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

fn branch_target(insn: &Insn) -> Option<(Label, i64)> {
    match *insn {
        Insn::B { target } => Some((target, B_MAX)),
        Insn::Cbz { target, .. } | Insn::Cbnz { target, .. } | Insn::BCond { target, .. } => {
            Some((target, COND_MAX))
        }
        _ => None,
    }
}

/// Assembles a whole sequence.  Pass 1 computes offsets and label
/// positions and checks branch ranges (so errors name the instruction);
/// pass 2 encodes through dynasm, whose label relocations then cannot fail.
pub fn assemble(insns: &[Insn]) -> Result<Assembled, EncodeError> {
    // Pass 1: every real instruction is 4 bytes (A64 is fixed width).
    let mut offsets = Vec::with_capacity(insns.len());
    let mut label_off: HashMap<Label, u32> = HashMap::new();
    let mut off: u32 = 0;
    for (i, insn) in insns.iter().enumerate() {
        offsets.push(off);
        if let Insn::Label(l) = *insn {
            if label_off.insert(l, off).is_some() {
                return Err(EncodeError::DuplicateLabel(l));
            }
        } else {
            off = off
                .checked_add(4)
                .ok_or(bad(i, "program larger than 4 GiB"))?;
        }
    }
    for (i, insn) in insns.iter().enumerate() {
        if let Some((target, max)) = branch_target(insn) {
            let t = *label_off
                .get(&target)
                .ok_or(EncodeError::UndefinedLabel(target))?;
            let disp = i64::from(t) - i64::from(offsets[i]);
            if disp > max || disp < -(max + 4) {
                return Err(EncodeError::BranchOutOfRange { index: i });
            }
        }
    }

    // Pass 2.
    let mut ops = Asm::new(0);
    let labels: HashMap<Label, DynamicLabel> = label_off
        .keys()
        .map(|&l| (l, ops.new_dynamic_label()))
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
    let bytes = ops.finalize().map_err(|_| {
        // Unreachable after pass 1; reported rather than panicking.
        bad(insns.len(), "internal: dynasm failed to resolve labels")
    })?;
    Ok(Assembled { bytes, offsets })
}

/// Encodes a single non-branch instruction.  Branches and labels need
/// [`assemble`] (they are PC-relative) and yield `BadOperand`.
pub fn encode_one(insn: &Insn) -> Result<u32, EncodeError> {
    if branch_target(insn).is_some() || matches!(insn, Insn::Label(_)) {
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

#[cfg(test)]
mod tests {
    use super::*;

    fn bad_at(index: usize) -> impl Fn(&Result<u32, EncodeError>) -> bool {
        move |r| matches!(r, Err(EncodeError::BadOperand { index: i, .. }) if *i == index)
    }

    #[test]
    fn rejects_bad_move_wide_shift() {
        for shift in [1u8, 8, 15, 17, 47, 49, 64, 255] {
            for i in [
                Insn::Movz {
                    rd: 0,
                    imm: 1,
                    shift,
                },
                Insn::Movk {
                    rd: 0,
                    imm: 1,
                    shift,
                },
                Insn::Movn {
                    rd: 0,
                    imm: 1,
                    shift,
                },
            ] {
                assert!(bad_at(0)(&encode_one(&i)), "{i:?}");
            }
        }
    }

    #[test]
    fn rejects_bad_shift_and_bitfield() {
        let e = |i: Insn| encode_one(&i);
        assert!(bad_at(0)(&e(Insn::LslImm {
            rd: 0,
            rn: 1,
            sh: 64
        })));
        assert!(bad_at(0)(&e(Insn::LsrImm {
            rd: 0,
            rn: 1,
            sh: 200
        })));
        assert!(bad_at(0)(&e(Insn::Ubfx {
            rd: 0,
            rn: 1,
            lsb: 0,
            width: 0
        })));
        assert!(bad_at(0)(&e(Insn::Ubfx {
            rd: 0,
            rn: 1,
            lsb: 1,
            width: 64
        })));
        assert!(bad_at(0)(&e(Insn::Ubfiz {
            rd: 0,
            rn: 1,
            lsb: 64,
            width: 1
        })));
        assert!(bad_at(0)(&e(Insn::Ubfiz {
            rd: 0,
            rn: 1,
            lsb: 60,
            width: 5
        })));
        assert!(e(Insn::Ubfiz {
            rd: 0,
            rn: 1,
            lsb: 60,
            width: 4
        })
        .is_ok());
    }

    #[test]
    fn rejects_unencodable_logical_immediates() {
        for imm in [
            0u64,
            u64::MAX,
            0b101,
            0x1234,
            0x8000_0000_0000_0002,
            0x0001_0002_0003_0004,
        ] {
            assert!(!logical_imm_encodable(imm), "{imm:#x}");
            assert!(bad_at(0)(&encode_one(&Insn::OrrImm { rd: 0, rn: 1, imm })));
            assert!(bad_at(0)(&encode_one(&Insn::AndImm { rd: 0, rn: 1, imm })));
        }
    }

    /// Independent reference: every value produced by the Arm ARM
    /// `DecodeBitMasks` pseudocode (J1 shared pseudocode) over all N:immr:imms
    /// is encodable (there are exactly 5334), and a sample of other values
    /// is not.
    #[test]
    fn logical_immediate_matches_decode_bit_masks() {
        let mut valid = std::collections::HashSet::new();
        for n in 0..2u32 {
            for immr in 0..64u32 {
                for imms in 0..64u32 {
                    let combined = (n << 6) | (!imms & 0x3f);
                    if combined == 0 {
                        continue;
                    }
                    let len = 31 - combined.leading_zeros();
                    if len < 1 {
                        continue;
                    }
                    let esize = 1u32 << len;
                    let levels = esize - 1;
                    let s = imms & levels;
                    let r = immr & levels;
                    if s == levels {
                        continue; // all-ones element is reserved
                    }
                    let welem: u64 = (1u64 << (s + 1)) - 1;
                    let mask = if esize == 64 {
                        u64::MAX
                    } else {
                        (1u64 << esize) - 1
                    };
                    let elem = ((welem >> r) | (welem << ((esize - r) % esize))) & mask;
                    let mut v = 0u64;
                    let mut k = 0;
                    while k < 64 {
                        v |= elem << k;
                        k += esize;
                    }
                    valid.insert(v);
                }
            }
        }
        assert_eq!(valid.len(), 5334);
        for &v in &valid {
            assert!(logical_imm_encodable(v), "{v:#x}");
            assert!(encode_one(&Insn::OrrImm {
                rd: 1,
                rn: 2,
                imm: v
            })
            .is_ok());
        }
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        for _ in 0..100_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            assert_eq!(logical_imm_encodable(x), valid.contains(&x), "{x:#x}");
        }
    }

    #[test]
    fn rejects_misaligned_or_out_of_range_offsets() {
        let cases = [
            (Size::H, 1u32),
            (Size::W, 2),
            (Size::X, 4),
            (Size::X, 0x7f4),
            (Size::B, 4096),
            (Size::H, 8192),
            (Size::W, 16384),
            (Size::X, 32768),
            (Size::X, u32::MAX),
        ];
        for (size, off) in cases {
            assert!(bad_at(0)(&encode_one(&Insn::Str {
                size,
                rt: 1,
                rn: 0,
                off
            })));
            assert!(bad_at(0)(&encode_one(&Insn::Ldr {
                size,
                rt: 1,
                rn: 0,
                off
            })));
        }
        for (size, off) in [
            (Size::B, 4095u32),
            (Size::H, 8190),
            (Size::W, 16380),
            (Size::X, 32760),
        ] {
            assert!(encode_one(&Insn::Str {
                size,
                rt: 1,
                rn: 0,
                off
            })
            .is_ok());
        }
    }

    #[test]
    fn rejects_bad_registers_and_immediates() {
        let e = |i: Insn| encode_one(&i);
        assert!(bad_at(0)(&e(Insn::Add {
            rd: 32,
            rn: 0,
            rm: 0
        })));
        assert!(bad_at(0)(&e(Insn::Ldr {
            size: Size::X,
            rt: 0,
            rn: 99,
            off: 0
        })));
        // 31 would be SP in these encodings.
        assert!(bad_at(0)(&e(Insn::AddImm {
            rd: 31,
            rn: 0,
            imm: 1
        })));
        assert!(bad_at(0)(&e(Insn::SubImm {
            rd: 0,
            rn: 31,
            imm: 1
        })));
        assert!(bad_at(0)(&e(Insn::SubsImm {
            rd: 0,
            rn: 31,
            imm: 1
        })));
        assert!(bad_at(0)(&e(Insn::CmpImm { rn: 31, imm: 1 })));
        assert!(bad_at(0)(&e(Insn::OrrImm {
            rd: 31,
            rn: 0,
            imm: 1
        })));
        assert!(bad_at(0)(&e(Insn::AndImm {
            rd: 31,
            rn: 0,
            imm: 1
        })));
        assert!(bad_at(0)(&e(Insn::AddImm {
            rd: 0,
            rn: 1,
            imm: 4096
        })));
        assert!(bad_at(0)(&e(Insn::CmpImm {
            rn: 1,
            imm: u16::MAX
        })));
        // CONSTRAINED UNPREDICTABLE exclusive status register.
        assert!(bad_at(0)(&e(Insn::Stxr {
            size: Size::X,
            rs: 1,
            rt: 1,
            rn: 0
        })));
        assert!(bad_at(0)(&e(Insn::Stlxr {
            size: Size::W,
            rs: 0,
            rt: 1,
            rn: 0
        })));
        assert!(bad_at(0)(&e(Insn::Stxr {
            size: Size::B,
            rs: 31,
            rt: 1,
            rn: 31
        })));
        // TLBI register presence.
        assert!(bad_at(0)(&e(Insn::Tlbi {
            op: TlbiOp::Vae1is,
            rt: None
        })));
        assert!(bad_at(0)(&e(Insn::Tlbi {
            op: TlbiOp::Vmalle1is,
            rt: Some(0)
        })));
        // Branches and labels are not single-word encodable.
        assert!(bad_at(0)(&e(Insn::B { target: 0 })));
        assert!(bad_at(0)(&e(Insn::Label(0))));
    }

    #[test]
    fn label_errors() {
        assert_eq!(
            assemble(&[Insn::Nop, Insn::Cbz { rt: 0, target: 9 }]),
            Err(EncodeError::UndefinedLabel(9))
        );
        assert_eq!(
            assemble(&[Insn::Label(1), Insn::Nop, Insn::Label(1)]),
            Err(EncodeError::DuplicateLabel(1))
        );
        // Error indices refer to the instruction list.
        assert_eq!(
            assemble(&[
                Insn::Label(1),
                Insn::Nop,
                Insn::LslImm {
                    rd: 0,
                    rn: 0,
                    sh: 70
                }
            ]),
            Err(EncodeError::BadOperand {
                index: 2,
                what: "shift amount must be 0..=63"
            })
        );
        assert!(assemble(&[]).unwrap().bytes.is_empty());
    }

    #[test]
    fn b_range_limit() {
        // imm26: +-128 MiB.  Build the program lazily sized: 2^25 words.
        let mut v = vec![Insn::B { target: 0 }];
        v.extend(std::iter::repeat_n(Insn::Nop, (1 << 25) - 1));
        v.push(Insn::Label(0));
        assert_eq!(
            assemble(&v),
            Err(EncodeError::BranchOutOfRange { index: 0 })
        );
        v.remove(1);
        let a = assemble(&v).unwrap();
        // disp = 2^27 - 4 -> imm26 = 0x1ffffff
        assert_eq!(&a.bytes[0..4], &0x15ff_ffffu32.to_le_bytes());
    }

    #[test]
    fn display_and_predicates() {
        let e = EncodeError::BadOperand {
            index: 3,
            what: "x",
        };
        assert_eq!(e.to_string(), "instruction 3: bad operand: x");
        let _: &dyn std::error::Error = &e;
        assert!(Insn::Dsb(BarrierOpt::Ish).is_barrier());
        assert!(!Insn::Ldar {
            size: Size::X,
            rt: 0,
            rn: 1
        }
        .is_barrier());
        let cas = Insn::Casa {
            size: Size::X,
            rs: 0,
            rt: 1,
            rn: 2,
        };
        assert!(cas.is_load() && cas.is_store());
        assert_eq!(cas.needs_arch(), Some("armv8.1-a"));
        let t = Insn::Tlbi {
            op: TlbiOp::Rvale1is,
            rt: Some(1),
        };
        assert!(t.is_invalidate() && !t.is_store());
        assert_eq!(t.needs_arch(), Some("armv8.4-a"));
        assert_eq!(
            Insn::Tlbi {
                op: TlbiOp::Vale1is,
                rt: Some(1)
            }
            .needs_arch(),
            None
        );
        assert_eq!(
            Insn::Tlbi {
                op: TlbiOp::Vmalle1os,
                rt: None
            }
            .needs_arch(),
            Some("armv8.4-a")
        );
        assert_eq!(t.text(&|l| format!("L{l}")), "tlbi rvale1is, x1");
        for i in [Insn::Clz { rd: 31, rn: 2 }, Insn::Rbit { rd: 1, rn: 31 }] {
            assert!(!i.is_load() && !i.is_store() && !i.is_barrier() && !i.is_invalidate());
            assert_eq!(i.needs_arch(), None);
        }
        assert_eq!(
            Insn::Clz { rd: 31, rn: 2 }.text(&|l| format!("L{l}")),
            "clz xzr, x2"
        );
        assert_eq!(
            Insn::Rbit { rd: 1, rn: 31 }.text(&|l| format!("L{l}")),
            "rbit x1, xzr"
        );
        // Arm ARM C6.2 "CLZ" (sf=1: 0xdac01000), "RBIT" (0xdac00000).
        assert_eq!(encode_one(&Insn::Clz { rd: 0, rn: 1 }), Ok(0xdac0_1020));
        assert_eq!(encode_one(&Insn::Rbit { rd: 0, rn: 1 }), Ok(0xdac0_0020));
        assert_eq!(
            Insn::Str {
                size: Size::W,
                rt: 2,
                rn: 0,
                off: 0x7f4
            }
            .text(&|l| format!("L{l}")),
            "str w2, [x0, #0x7f4]"
        );
        assert_eq!(
            Insn::Str {
                size: Size::X,
                rt: 2,
                rn: 0,
                off: 8
            }
            .text(&|l| format!("L{l}")),
            "str x2, [x0, #8]"
        );
        assert_eq!(
            Insn::Stlxr {
                size: Size::H,
                rs: 1,
                rt: 2,
                rn: 3
            }
            .mnemonic(),
            "stlxrh"
        );
        assert_eq!(
            Insn::BCond {
                cond: Cond::Lo,
                target: 0
            }
            .mnemonic(),
            "b.lo"
        );
    }

    /// Random operands (including out-of-range ones) never panic.
    #[test]
    fn never_panics_on_random_operands() {
        let mut s = 0x1234_5678_9abc_def1u64;
        let mut next = move || {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            s
        };
        let sizes = [Size::B, Size::H, Size::W, Size::X];
        for _ in 0..20_000 {
            let r = next();
            let (a, b, c) = (
                (r & 0x3f) as u8,
                ((r >> 6) & 0x3f) as u8,
                ((r >> 12) & 0x3f) as u8,
            );
            let imm16 = (r >> 20) as u16;
            let size = sizes[(r >> 40) as usize % 4];
            let off = (next() % 40_000) as u32;
            let u8v = (r >> 48) as u8;
            let insns = [
                Insn::Movz {
                    rd: a,
                    imm: imm16,
                    shift: u8v,
                },
                Insn::OrrImm {
                    rd: a,
                    rn: b,
                    imm: next(),
                },
                Insn::AndImm {
                    rd: a,
                    rn: b,
                    imm: next() >> (r % 64),
                },
                Insn::AddImm {
                    rd: a,
                    rn: b,
                    imm: imm16,
                },
                Insn::SubsImm {
                    rd: a,
                    rn: b,
                    imm: imm16,
                },
                Insn::LslImm {
                    rd: a,
                    rn: b,
                    sh: u8v,
                },
                Insn::Ubfiz {
                    rd: a,
                    rn: b,
                    lsb: u8v,
                    width: (r >> 56) as u8,
                },
                Insn::Ubfx {
                    rd: a,
                    rn: b,
                    lsb: u8v % 70,
                    width: (r >> 56) as u8 % 70,
                },
                Insn::Str {
                    size,
                    rt: a,
                    rn: b,
                    off,
                },
                Insn::Ldr {
                    size,
                    rt: a,
                    rn: b,
                    off,
                },
                Insn::LdrReg {
                    size,
                    rt: a,
                    rn: b,
                    rm: c,
                    scaled: r & 1 == 1,
                },
                Insn::Stxr {
                    size,
                    rs: a,
                    rt: b,
                    rn: c,
                },
                Insn::Casa {
                    size,
                    rs: a,
                    rt: b,
                    rn: c,
                },
                Insn::CmpImm { rn: a, imm: imm16 },
                Insn::Clz { rd: a, rn: b },
                Insn::Rbit { rd: c, rn: a },
                Insn::Tlbi {
                    op: TlbiOp::Vae1is,
                    rt: if r & 2 == 0 { None } else { Some(a) },
                },
                Insn::Cbz {
                    rt: a,
                    target: u32::from(u8v % 4),
                },
                Insn::Label(u32::from(u8v % 3)),
            ];
            for i in &insns {
                let _ = encode_one(i);
                let _ = i.text(&|l| format!("L{l}"));
            }
            let _ = assemble(&insns);
        }
    }
}
