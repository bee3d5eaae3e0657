//! x86-64 instruction model, encoder and AT&T text printer.
//!
//! Encoding goes through `iced_x86::code_asm::CodeAssembler`; the text is
//! produced by iced's `GasFormatter` from the *same* `Instruction` list that
//! the assembler encoded, so the text re-assembles with GNU `as --64` to the
//! same bytes.
//!
//! The cut: this file holds the instruction enum, its errors and what an
//! instruction does to memory; `regs` the registers and their names;
//! `imms` the immediates, scales and displacements; `operands` the
//! memory operand and the error context of one instruction; `iced` the
//! translation of one instruction to iced; `encode` the layout, branch
//! relaxation and encoding; `text` the AT&T printing. Registers and
//! immediates are valid when built, so an `Insn` that exists has operands
//! its encoding can hold.

mod encode;
mod iced;
mod imms;
mod operands;
mod regs;
mod text;

use std::fmt;

use iced_x86::IcedError;

pub use encode::assemble;
pub use imms::{Disp32, Imm6, Scale, Simm32};
pub use regs::{Gpr, Index};

pub type Label = u32;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Size {
    B,
    W,
    D,
    Q,
}

/// The operand size of `bswap`: 32 or 64 bits. The 16-bit form is
/// undefined (Intel SDM Vol. 2A "BSWAP"), so a 16-bit swap is
/// [`Insn::Rol16`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BswapSize {
    D,
    Q,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Cond {
    E,
    Ne,
    B,
    Ae,
    A,
    Be,
    L,
    Ge,
    G,
    Le,
    S,
    Ns,
}

/// One x86-64 instruction.  All ALU/shift/compare forms operate on the full
/// 64-bit registers; immediates are sign-extended imm32 (imm8 when it fits).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Insn {
    /// `mov $imm32, %r32` (zero-extends) when `imm <= u32::MAX`,
    /// `mov $simm32, %r64` when it fits i32, else `movabs $imm64, %r64`.
    MovImm {
        rd: Gpr,
        imm: u64,
    },
    MovReg {
        rd: Gpr,
        rs: Gpr,
    },
    /// The low `size` bits of `rs` zero-extended into `rd`: B/W `movzx`
    /// into r32, D `mov` r32 (a 32-bit write clears the upper half). One
    /// instruction for a field insert's `mask`, against `mov` and `and`.
    MovZx {
        size: Size,
        rd: Gpr,
        rs: Gpr,
    },
    Store {
        size: Size,
        base: Gpr,
        index: Option<Index>,
        disp: Disp32,
        src: Gpr,
    },
    /// `mov $imm, disp(%base)`: the low `size` bytes of `imm` (B: imm8,
    /// W: imm16, D: imm32; Q: imm32 sign-extended to 64 bits), so a
    /// constant stored needs no register. The lowering builds `imm` from
    /// the value truncated to the size (see [`Insn::store_imm`]).
    StoreImm {
        size: Size,
        base: Gpr,
        index: Option<Index>,
        disp: Disp32,
        imm: Simm32,
    },
    /// `lea disp(%base, %index), %rd`: an add of a register or a
    /// constant into another register in one instruction (no `mov`),
    /// leaving the flags alone.
    Lea {
        rd: Gpr,
        base: Gpr,
        index: Option<Index>,
        disp: Disp32,
    },
    /// B/W: movzx into r32; D: mov r32 (zero-extends); Q: mov r64.
    Load {
        size: Size,
        rd: Gpr,
        base: Gpr,
        index: Option<Index>,
        disp: Disp32,
    },
    Bswap {
        size: BswapSize,
        rd: Gpr,
    },
    /// `rol $8, %r16` (16-bit byte swap).
    Rol16 {
        rd: Gpr,
    },
    Or {
        rd: Gpr,
        rs: Gpr,
    },
    And {
        rd: Gpr,
        rs: Gpr,
    },
    Xor {
        rd: Gpr,
        rs: Gpr,
    },
    Add {
        rd: Gpr,
        rs: Gpr,
    },
    Sub {
        rd: Gpr,
        rs: Gpr,
    },
    Imul {
        rd: Gpr,
        rs: Gpr,
    },
    OrImm {
        rd: Gpr,
        imm: Simm32,
    },
    AndImm {
        rd: Gpr,
        imm: Simm32,
    },
    AddImm {
        rd: Gpr,
        imm: Simm32,
    },
    SubImm {
        rd: Gpr,
        imm: Simm32,
    },
    XorImm {
        rd: Gpr,
        imm: Simm32,
    },
    ShlImm {
        rd: Gpr,
        sh: Imm6,
    },
    ShrImm {
        rd: Gpr,
        sh: Imm6,
    },
    ShlCl {
        rd: Gpr,
    },
    ShrCl {
        rd: Gpr,
    },
    Not {
        rd: Gpr,
    },
    Neg {
        rd: Gpr,
    },
    /// `bsr %rs, %rd`: index of the highest set bit of `rs`; ZF set and
    /// `rd` unchanged when `rs` is 0 (AMD's APM; the Intel SDM says
    /// undefined, and Linux's x86-64 `fls64()` relies on unchanged, as
    /// Intel's architects confirmed: arch/x86/include/asm/bitops.h).
    Bsr {
        rd: Gpr,
        rs: Gpr,
    },
    /// `bsf %rs, %rd`: index of the lowest set bit, likewise.
    Bsf {
        rd: Gpr,
        rs: Gpr,
    },
    /// `cmove %rs, %rd`: `rd = rs` when ZF is set.
    Cmove {
        rd: Gpr,
        rs: Gpr,
    },
    /// Flags from `ra - rb` (AT&T: `cmp %rb, %ra`).
    CmpReg {
        ra: Gpr,
        rb: Gpr,
    },
    CmpImm {
        ra: Gpr,
        imm: Simm32,
    },
    Test {
        ra: Gpr,
        rb: Gpr,
    },
    TestImm {
        ra: Gpr,
        imm: Simm32,
    },
    /// `bts %rn, %rd`: set bit `rn mod 64` of `rd` (`1 << n` into a
    /// cleared register, with no count in cl).
    Bts {
        rd: Gpr,
        rn: Gpr,
    },
    /// `bt $bit, %ra`: CF = bit `bit` of `ra`; the test of a one-bit
    /// field above what `test $imm32` reaches.
    Bt {
        ra: Gpr,
        bit: Imm6,
    },
    Jcc {
        cond: Cond,
        target: Label,
    },
    Jmp {
        target: Label,
    },
    Ret,
    /// Save/restore of callee-saved registers a sequence borrows.
    Push {
        rs: Gpr,
    },
    Pop {
        rd: Gpr,
    },
    Pause,
    Nop,
    Sfence,
    Lfence,
    Mfence,
    /// `lock cmpxchg %src, disp(%base)`; rax/eax/ax/al is the implicit comparand.
    LockCmpxchg {
        size: Size,
        base: Gpr,
        disp: Disp32,
        src: Gpr,
    },
    /// `xchg %src, disp(%base)` (implicitly locked).
    Xchg {
        size: Size,
        base: Gpr,
        disp: Disp32,
        src: Gpr,
    },
    Invlpg {
        base: Gpr,
    },
    Clflush {
        base: Gpr,
    },
    Label(Label),
}

/// Result of [`assemble`]: `offsets[i]` / `text[i]` belong to `insns[i]`.
/// A `Label` gets the offset of the next instruction (or the end of the code)
/// and an empty text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Assembled {
    pub bytes: Vec<u8>,
    pub offsets: Vec<u32>,
    pub text: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EncodeError {
    UndefinedLabel(Label),
    DuplicateLabel(Label),
    BadOperand { index: usize, what: &'static str },
    Iced(String),
}

impl fmt::Display for EncodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EncodeError::UndefinedLabel(l) => write!(f, "x86-64: undefined label {l}"),
            EncodeError::DuplicateLabel(l) => write!(f, "x86-64: label {l} defined twice"),
            EncodeError::BadOperand { index, what } => {
                write!(f, "x86-64: bad operand in instruction {index}: {what}")
            }
            EncodeError::Iced(s) => write!(f, "x86-64: iced: {s}"),
        }
    }
}

impl std::error::Error for EncodeError {}

fn iced_err(index: Option<usize>, e: IcedError) -> EncodeError {
    match index {
        Some(i) => EncodeError::Iced(format!("instruction {i}: {e}")),
        None => EncodeError::Iced(e.to_string()),
    }
}

impl Cond {
    fn mnemonic(self) -> &'static str {
        match self {
            Cond::E => "je",
            Cond::Ne => "jne",
            Cond::B => "jb",
            Cond::Ae => "jae",
            Cond::A => "ja",
            Cond::Be => "jbe",
            Cond::L => "jl",
            Cond::Ge => "jge",
            Cond::G => "jg",
            Cond::Le => "jle",
            Cond::S => "js",
            Cond::Ns => "jns",
        }
    }
}

/// The form of `mov $imm, %rd`: the shortest that writes the 64-bit
/// value, as GNU as picks it.
#[derive(Clone, Copy, PartialEq, Eq)]
enum MovImmForm {
    /// `mov $imm32, %r32`, which zero-extends (B8+rd id).
    Zx32(u32),
    /// `mov $simm32, %r64`, sign-extended (REX.W C7 /0 id).
    Sx32(Simm32),
    /// `movabs $imm64, %r64` (REX.W B8+rd io).
    Abs64(u64),
}

impl MovImmForm {
    fn of(imm: u64) -> MovImmForm {
        match (u32::try_from(imm), Simm32::maybe_from(imm)) {
            (Ok(v), _) => MovImmForm::Zx32(v),
            (_, Some(v)) => MovImmForm::Sx32(v),
            _ => MovImmForm::Abs64(imm),
        }
    }
}

impl Insn {
    /// The AT&T mnemonic as it appears in the emitted text (without the
    /// `lock` prefix for [`Insn::LockCmpxchg`]).  `Label` returns `""`.
    pub fn mnemonic(&self) -> &'static str {
        match self {
            Insn::MovImm { imm, .. } => {
                if let MovImmForm::Abs64(_) = MovImmForm::of(*imm) {
                    "movabs"
                } else {
                    "mov"
                }
            }
            Insn::MovReg { .. } | Insn::Store { .. } => "mov",
            Insn::StoreImm { size, .. } => match size {
                Size::B => "movb",
                Size::W => "movw",
                Size::D => "movl",
                Size::Q => "movq",
            },
            Insn::MovZx { size, .. } | Insn::Load { size, .. } => match size {
                Size::B => "movzbl",
                Size::W => "movzwl",
                Size::D | Size::Q => "mov",
            },
            Insn::Lea { .. } => "lea",
            Insn::Bswap { .. } => "bswap",
            Insn::Rol16 { .. } => "rol",
            Insn::Or { .. } | Insn::OrImm { .. } => "or",
            Insn::And { .. } | Insn::AndImm { .. } => "and",
            Insn::Xor { .. } | Insn::XorImm { .. } => "xor",
            Insn::Add { .. } | Insn::AddImm { .. } => "add",
            Insn::Sub { .. } | Insn::SubImm { .. } => "sub",
            Insn::Imul { .. } => "imul",
            Insn::ShlImm { .. } | Insn::ShlCl { .. } => "shl",
            Insn::ShrImm { .. } | Insn::ShrCl { .. } => "shr",
            Insn::Not { .. } => "not",
            Insn::Neg { .. } => "neg",
            Insn::Bsr { .. } => "bsr",
            Insn::Bsf { .. } => "bsf",
            Insn::Cmove { .. } => "cmove",
            Insn::CmpReg { .. } | Insn::CmpImm { .. } => "cmp",
            Insn::Test { .. } | Insn::TestImm { .. } => "test",
            Insn::Bt { .. } => "bt",
            Insn::Bts { .. } => "bts",
            Insn::Jcc { cond, .. } => cond.mnemonic(),
            Insn::Jmp { .. } => "jmp",
            Insn::Ret => "ret",
            Insn::Pause => "pause",
            Insn::Push { .. } => "push",
            Insn::Pop { .. } => "pop",
            Insn::Nop => "nop",
            Insn::Sfence => "sfence",
            Insn::Lfence => "lfence",
            Insn::Mfence => "mfence",
            Insn::LockCmpxchg { .. } => "cmpxchg",
            Insn::Xchg { .. } => "xchg",
            Insn::Invlpg { .. } => "invlpg",
            Insn::Clflush { .. } => "clflush",
            Insn::Label(_) => "",
        }
    }

    /// Memory-ordering barriers: the fences plus the locked read-modify-write
    /// instructions (`lock cmpxchg`, `xchg` with memory), which are full
    /// barriers on x86.
    pub fn is_barrier(&self) -> bool {
        matches!(
            self,
            Insn::Sfence
                | Insn::Lfence
                | Insn::Mfence
                | Insn::LockCmpxchg { .. }
                | Insn::Xchg { .. }
        )
    }

    /// Writes memory (plain store or locked RMW).
    pub fn is_store(&self) -> bool {
        matches!(
            self,
            Insn::Store { .. }
                | Insn::StoreImm { .. }
                | Insn::LockCmpxchg { .. }
                | Insn::Xchg { .. }
        )
    }

    /// Reads memory (plain load or locked RMW).
    pub fn is_load(&self) -> bool {
        matches!(
            self,
            Insn::Load { .. } | Insn::LockCmpxchg { .. } | Insn::Xchg { .. }
        )
    }

    /// TLB / cache invalidation: `invlpg` and `clflush`.
    pub fn is_invalidate(&self) -> bool {
        matches!(self, Insn::Invlpg { .. } | Insn::Clflush { .. })
    }

    /// The store of the constant `value` (its low `size` bytes) to
    /// `disp(%base, index)`; None for a 64-bit value that is no
    /// sign-extended imm32.
    pub fn store_imm(
        size: Size,
        base: Gpr,
        index: Option<Index>,
        disp: Disp32,
        value: u64,
    ) -> Option<Insn> {
        let imm = match size {
            Size::B => Simm32::from(i32::from(value as u8 as i8)),
            Size::W => Simm32::from(i32::from(value as u16 as i16)),
            Size::D => Simm32::from(value as u32 as i32),
            Size::Q => Simm32::maybe_from(value)?,
        };
        Some(Insn::StoreImm {
            size,
            base,
            index,
            disp,
            imm,
        })
    }

    fn branch_target(&self) -> Option<Label> {
        match self {
            Insn::Jcc { target, .. } | Insn::Jmp { target } => Some(*target),
            _ => None,
        }
    }
}
