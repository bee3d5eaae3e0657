//! AArch64 instruction model, GNU `as` text rendering and binary encoding
//! for the small subset of A64 that TLB-shootdown sequences need.
//!
//! The cut: this file holds the instruction enum, its errors and what an
//! instruction does to memory; `args` the operand types (sizes,
//! conditions, barrier and TLBI options); `regs` the registers; `imms`
//! the immediates; `text` the GNU `as` text; `encode` the machine code.
//! Registers and immediates are valid when built, so an `Insn` that
//! exists has operands its encoding can hold.
//!
//! References are to the Arm Architecture Reference Manual for A-profile
//! (DDI 0487), "Arm ARM" below.

mod args;
mod encode;
mod imms;
mod regs;
#[cfg(test)]
mod tests;
mod text;

pub use args::{BarrierOpt, Cond, Size, TlbiOp};
pub use encode::{assemble, encode_one};
pub use imms::{Bitfield, Imm12, ImmLogic, ImmShift, MoveWide, SpAdjust, UImm12Scaled};
pub use regs::{xreg, RegOrSp, RegOrZr, XReg};

pub type Label = u32;

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Insn {
    /// 64-bit (x registers).
    Movz {
        rd: RegOrZr,
        imm: MoveWide,
    },
    Movk {
        rd: RegOrZr,
        imm: MoveWide,
    },
    Movn {
        rd: RegOrZr,
        imm: MoveWide,
    },
    /// Logical immediate (64-bit).
    OrrImm {
        rd: XReg,
        rn: RegOrZr,
        imm: ImmLogic,
    },
    /// `orr xd, xzr, xm`
    MovReg {
        rd: RegOrZr,
        rm: RegOrZr,
    },
    /// `orn xd, xzr, xm`: the bitwise not.
    Mvn {
        rd: RegOrZr,
        rm: RegOrZr,
    },
    Orr {
        rd: RegOrZr,
        rn: RegOrZr,
        rm: RegOrZr,
    },
    And {
        rd: RegOrZr,
        rn: RegOrZr,
        rm: RegOrZr,
    },
    Eor {
        rd: RegOrZr,
        rn: RegOrZr,
        rm: RegOrZr,
    },
    Bic {
        rd: RegOrZr,
        rn: RegOrZr,
        rm: RegOrZr,
    },
    AndImm {
        rd: XReg,
        rn: RegOrZr,
        imm: ImmLogic,
    },
    Add {
        rd: RegOrZr,
        rn: RegOrZr,
        rm: RegOrZr,
    },
    Sub {
        rd: RegOrZr,
        rn: RegOrZr,
        rm: RegOrZr,
    },
    /// `lsl12`: the immediate is `imm << 12` (`sh == 1`), a multiple of
    /// 4K up to 0xfff000 in one instruction.
    AddImm {
        rd: XReg,
        rn: XReg,
        imm: Imm12,
        lsl12: bool,
    },
    SubImm {
        rd: XReg,
        rn: XReg,
        imm: Imm12,
        lsl12: bool,
    },
    SubsImm {
        rd: RegOrZr,
        rn: XReg,
        imm: Imm12,
    },
    /// SUBS (shifted register, no shift): a remainder counted down by a
    /// run-time step sets the flags its loop branches on.
    SubsReg {
        rd: RegOrZr,
        rn: RegOrZr,
        rm: RegOrZr,
    },
    /// `sub sp, sp, #imm` / `add sp, sp, #imm`: the frame for
    /// callee-saved registers.
    SpSub {
        imm: SpAdjust,
    },
    SpAdd {
        imm: SpAdjust,
    },
    Mul {
        rd: RegOrZr,
        rn: RegOrZr,
        rm: RegOrZr,
    },
    LslImm {
        rd: RegOrZr,
        rn: RegOrZr,
        sh: ImmShift,
    },
    LsrImm {
        rd: RegOrZr,
        rn: RegOrZr,
        sh: ImmShift,
    },
    LslReg {
        rd: RegOrZr,
        rn: RegOrZr,
        rm: RegOrZr,
    },
    LsrReg {
        rd: RegOrZr,
        rn: RegOrZr,
        rm: RegOrZr,
    },
    Ubfiz {
        rd: RegOrZr,
        rn: RegOrZr,
        field: Bitfield,
    },
    Ubfx {
        rd: RegOrZr,
        rn: RegOrZr,
        field: Bitfield,
    },
    /// Count leading zeros (64-bit; 64 for 0).
    Clz {
        rd: RegOrZr,
        rn: RegOrZr,
    },
    /// `cset rd, cond` (CSINC rd, XZR, XZR, inverted cond): 1 when the
    /// flags satisfy `cond`, else 0.
    Cset {
        rd: RegOrZr,
        cond: Cond,
    },
    /// Reverse the bit order (64-bit).
    Rbit {
        rd: RegOrZr,
        rn: RegOrZr,
    },
    /// 64-bit byte reverse.
    Rev {
        rd: RegOrZr,
        rn: RegOrZr,
    },
    /// `rev wD, wN` (32-bit byte reverse).
    Rev32W {
        rd: RegOrZr,
        rn: RegOrZr,
    },
    /// `rev16 wD, wN`
    Rev16W {
        rd: RegOrZr,
        rn: RegOrZr,
    },
    /// Unsigned scaled immediate offset; the access size is the one
    /// `off` is scaled by.
    Str {
        rt: RegOrZr,
        rn: RegOrSp,
        off: UImm12Scaled,
    },
    Ldr {
        rt: RegOrZr,
        rn: RegOrSp,
        off: UImm12Scaled,
    },
    /// Register offset; `lsl #log2(size)` when `scaled`.
    StrReg {
        size: Size,
        rt: RegOrZr,
        rn: RegOrSp,
        rm: RegOrZr,
        scaled: bool,
    },
    LdrReg {
        size: Size,
        rt: RegOrZr,
        rn: RegOrSp,
        rm: RegOrZr,
        scaled: bool,
    },
    Ldxr {
        size: Size,
        rt: RegOrZr,
        rn: RegOrSp,
    },
    Ldaxr {
        size: Size,
        rt: RegOrZr,
        rn: RegOrSp,
    },
    Stxr {
        size: Size,
        rs: RegOrZr,
        rt: RegOrZr,
        rn: RegOrSp,
    },
    Stlxr {
        size: Size,
        rs: RegOrZr,
        rt: RegOrZr,
        rn: RegOrSp,
    },
    Ldar {
        size: Size,
        rt: RegOrZr,
        rn: RegOrSp,
    },
    Stlr {
        size: Size,
        rt: RegOrZr,
        rn: RegOrSp,
    },
    /// LSE (FEAT_LSE, Armv8.1); text needs `.arch armv8.1-a` or later.
    Casa {
        size: Size,
        rs: RegOrZr,
        rt: RegOrZr,
        rn: RegOrSp,
    },
    Swpa {
        size: Size,
        rs: RegOrZr,
        rt: RegOrZr,
        rn: RegOrSp,
    },
    CmpReg {
        rn: RegOrZr,
        rm: RegOrZr,
    },
    CmpImm {
        rn: XReg,
        imm: Imm12,
    },
    Cbz {
        rt: RegOrZr,
        target: Label,
    },
    Cbnz {
        rt: RegOrZr,
        target: Label,
    },
    /// Test bit `bit` of `rt` and branch if it is zero (`tbz`) or one
    /// (`tbnz`): a one-bit poll without the mask (+-32 KiB).
    Tbz {
        rt: RegOrZr,
        bit: ImmShift,
        target: Label,
    },
    Tbnz {
        rt: RegOrZr,
        bit: ImmShift,
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
        rt: Option<RegOrZr>,
    },
    /// Pseudo instruction: defines `Label` at the offset of the next insn.
    Label(Label),
}

/// Little-endian instruction words, and the byte offset of each input
/// instruction; why an instruction list cannot be assembled.
pub use crate::isa::assembler::{Assembled, EncodeError};

impl Insn {
    /// DMB, DSB and ISB.  (Acquire/release accesses order memory too, but
    /// they are accesses, not barriers.)
    pub fn is_barrier(&self) -> bool {
        matches!(self, Insn::Dmb(_) | Insn::Dsb(_) | Insn::Isb)
    }

    /// What it does to memory: (reads, writes).  CASA/SWPA are
    /// read-modify-write and count as both a load and a store (CASA writes
    /// only on a successful compare, but it is a store for ordering
    /// purposes: Arm ARM B2.3).
    fn accesses(&self) -> (bool, bool) {
        match self {
            Insn::Ldr { .. } | Insn::LdrReg { .. } => (true, false),
            Insn::Ldxr { .. } | Insn::Ldaxr { .. } | Insn::Ldar { .. } => (true, false),
            Insn::Str { .. } | Insn::StrReg { .. } => (false, true),
            Insn::Stxr { .. } | Insn::Stlxr { .. } | Insn::Stlr { .. } => (false, true),
            Insn::Casa { .. } | Insn::Swpa { .. } => (true, true),
            _ => (false, false),
        }
    }

    /// Writes memory.
    pub fn is_store(&self) -> bool {
        self.accesses().1
    }

    /// Reads memory.
    pub fn is_load(&self) -> bool {
        self.accesses().0
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
