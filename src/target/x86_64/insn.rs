//! x86-64 instruction model, encoder and AT&T text printer.
//!
//! Encoding goes through `iced_x86::code_asm::CodeAssembler`; the text is
//! produced by iced's `GasFormatter` from the *same* `Instruction` list that
//! the assembler encoded, so the text re-assembles with GNU `as --64` to the
//! same bytes.
//!
//! Branch sizing: iced's `BlockEncoder` relaxes branches by starting from the
//! long forms and shrinking (for at most 5 passes), while GNU `as` starts from
//! the short forms and grows them until every displacement fits.  The two can
//! reach different fixed points (e.g. two forward jumps that each fit in rel8
//! only if the other one is short).  To agree with `as` byte for byte we do
//! the GNU-style grow-only relaxation ourselves, pick `rel8`/`rel32` per
//! branch, and let iced encode exactly that with
//! `BlockEncoderOptions::DONT_FIX_BRANCHES`.

use std::cell::RefCell;
use std::collections::HashMap;
use std::fmt;
use std::rc::Rc;

use iced_x86::code_asm::{CodeAssembler, CodeLabel};
use iced_x86::{
    BlockEncoderOptions, Code, Formatter, GasFormatter, IcedError, Instruction, MemoryOperand,
    OpKind, Register, SymbolResolver, SymbolResult,
};

/// Hardware register number: 0=rax 1=rcx 2=rdx 3=rbx 4=rsp 5=rbp 6=rsi 7=rdi 8..15=r8..r15.
pub type Reg = u8;
pub type Label = u32;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Size {
    B,
    W,
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
        rd: Reg,
        imm: u64,
    },
    MovReg {
        rd: Reg,
        rs: Reg,
    },
    Store {
        size: Size,
        base: Reg,
        index: Option<(Reg, u8)>,
        disp: i32,
        src: Reg,
    },
    /// B/W: movzx into r32; D: mov r32 (zero-extends); Q: mov r64.
    Load {
        size: Size,
        rd: Reg,
        base: Reg,
        index: Option<(Reg, u8)>,
        disp: i32,
    },
    /// `size` must be D or Q.
    Bswap {
        size: Size,
        rd: Reg,
    },
    /// `rol $8, %r16` (16-bit byte swap).
    Rol16 {
        rd: Reg,
    },
    Or {
        rd: Reg,
        rs: Reg,
    },
    And {
        rd: Reg,
        rs: Reg,
    },
    Xor {
        rd: Reg,
        rs: Reg,
    },
    Add {
        rd: Reg,
        rs: Reg,
    },
    Sub {
        rd: Reg,
        rs: Reg,
    },
    Imul {
        rd: Reg,
        rs: Reg,
    },
    OrImm {
        rd: Reg,
        imm: i32,
    },
    AndImm {
        rd: Reg,
        imm: i32,
    },
    AddImm {
        rd: Reg,
        imm: i32,
    },
    SubImm {
        rd: Reg,
        imm: i32,
    },
    XorImm {
        rd: Reg,
        imm: i32,
    },
    /// `sh` must be 0..=63.
    ShlImm {
        rd: Reg,
        sh: u8,
    },
    /// `sh` must be 0..=63.
    ShrImm {
        rd: Reg,
        sh: u8,
    },
    ShlCl {
        rd: Reg,
    },
    ShrCl {
        rd: Reg,
    },
    Not {
        rd: Reg,
    },
    Neg {
        rd: Reg,
    },
    /// `bsr %rs, %rd`: index of the highest set bit of `rs`; ZF set and
    /// `rd` undefined (Intel SDM) when `rs` is 0.
    Bsr {
        rd: Reg,
        rs: Reg,
    },
    /// `bsf %rs, %rd`: index of the lowest set bit, likewise.
    Bsf {
        rd: Reg,
        rs: Reg,
    },
    /// `cmove %rs, %rd`: `rd = rs` when ZF is set.
    Cmove {
        rd: Reg,
        rs: Reg,
    },
    /// Flags from `ra - rb` (AT&T: `cmp %rb, %ra`).
    CmpReg {
        ra: Reg,
        rb: Reg,
    },
    CmpImm {
        ra: Reg,
        imm: i32,
    },
    Test {
        ra: Reg,
        rb: Reg,
    },
    TestImm {
        ra: Reg,
        imm: i32,
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
        rs: Reg,
    },
    Pop {
        rd: Reg,
    },
    Pause,
    Nop,
    Sfence,
    Lfence,
    Mfence,
    /// `lock cmpxchg %src, disp(%base)`; rax/eax/ax/al is the implicit comparand.
    LockCmpxchg {
        size: Size,
        base: Reg,
        disp: i32,
        src: Reg,
    },
    /// `xchg %src, disp(%base)` (implicitly locked).
    Xchg {
        size: Size,
        base: Reg,
        disp: i32,
        src: Reg,
    },
    Invlpg {
        base: Reg,
    },
    Clflush {
        base: Reg,
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

fn mov_imm_kind(imm: u64) -> u8 {
    if imm <= u64::from(u32::MAX) {
        0 // mov r32, imm32
    } else if i32::try_from(imm as i64).is_ok() {
        1 // mov r64, simm32
    } else {
        2 // movabs
    }
}

impl Insn {
    /// The AT&T mnemonic as it appears in the emitted text (without the
    /// `lock` prefix for [`Insn::LockCmpxchg`]).  `Label` returns `""`.
    pub fn mnemonic(&self) -> &'static str {
        match self {
            Insn::MovImm { imm, .. } => {
                if mov_imm_kind(*imm) == 2 {
                    "movabs"
                } else {
                    "mov"
                }
            }
            Insn::MovReg { .. } | Insn::Store { .. } => "mov",
            Insn::Load { size, .. } => match size {
                Size::B => "movzbl",
                Size::W => "movzwl",
                Size::D | Size::Q => "mov",
            },
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
            Insn::Store { .. } | Insn::LockCmpxchg { .. } | Insn::Xchg { .. }
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

    fn branch_target(&self) -> Option<Label> {
        match self {
            Insn::Jcc { target, .. } | Insn::Jmp { target } => Some(*target),
            _ => None,
        }
    }
}

// ---------------------------------------------------------------------------
// Register / operand helpers

const GPR64: [Register; 16] = [
    Register::RAX,
    Register::RCX,
    Register::RDX,
    Register::RBX,
    Register::RSP,
    Register::RBP,
    Register::RSI,
    Register::RDI,
    Register::R8,
    Register::R9,
    Register::R10,
    Register::R11,
    Register::R12,
    Register::R13,
    Register::R14,
    Register::R15,
];
const GPR32: [Register; 16] = [
    Register::EAX,
    Register::ECX,
    Register::EDX,
    Register::EBX,
    Register::ESP,
    Register::EBP,
    Register::ESI,
    Register::EDI,
    Register::R8D,
    Register::R9D,
    Register::R10D,
    Register::R11D,
    Register::R12D,
    Register::R13D,
    Register::R14D,
    Register::R15D,
];
const GPR16: [Register; 16] = [
    Register::AX,
    Register::CX,
    Register::DX,
    Register::BX,
    Register::SP,
    Register::BP,
    Register::SI,
    Register::DI,
    Register::R8W,
    Register::R9W,
    Register::R10W,
    Register::R11W,
    Register::R12W,
    Register::R13W,
    Register::R14W,
    Register::R15W,
];
/// 4..7 are spl/bpl/sil/dil (REX forms), never ah/ch/dh/bh.
const GPR8: [Register; 16] = [
    Register::AL,
    Register::CL,
    Register::DL,
    Register::BL,
    Register::SPL,
    Register::BPL,
    Register::SIL,
    Register::DIL,
    Register::R8L,
    Register::R9L,
    Register::R10L,
    Register::R11L,
    Register::R12L,
    Register::R13L,
    Register::R14L,
    Register::R15L,
];

struct Ctx {
    index: usize,
}

impl Ctx {
    fn bad(&self, what: &'static str) -> EncodeError {
        EncodeError::BadOperand {
            index: self.index,
            what,
        }
    }

    fn reg(&self, r: Reg, size: Size) -> Result<Register, EncodeError> {
        let table = match size {
            Size::B => &GPR8,
            Size::W => &GPR16,
            Size::D => &GPR32,
            Size::Q => &GPR64,
        };
        table
            .get(usize::from(r))
            .copied()
            .ok_or_else(|| self.bad("register number out of range (0..=15)"))
    }

    fn r64(&self, r: Reg) -> Result<Register, EncodeError> {
        self.reg(r, Size::Q)
    }

    fn mem(
        &self,
        base: Reg,
        index: Option<(Reg, u8)>,
        disp: i32,
    ) -> Result<MemoryOperand, EncodeError> {
        let base = self.r64(base)?;
        let (index, scale) = match index {
            None => (Register::None, 1),
            Some((ix, scale)) => {
                if ix == 4 {
                    return Err(self.bad("rsp cannot be an index register"));
                }
                if !matches!(scale, 1 | 2 | 4 | 8) {
                    return Err(self.bad("scale must be 1, 2, 4 or 8"));
                }
                (self.r64(ix)?, u32::from(scale))
            }
        };
        // displ_size: 0 = none, 1 = try disp8 (iced falls back to disp32).
        let displ_size = u32::from(disp != 0);
        Ok(MemoryOperand::with_base_index_scale_displ_size(
            base,
            index,
            scale,
            i64::from(disp),
            displ_size,
        ))
    }

    fn ierr(&self, e: IcedError) -> EncodeError {
        iced_err(Some(self.index), e)
    }
}

fn fits_i8(v: i32) -> bool {
    i8::try_from(v).is_ok()
}

/// `op r64, imm` choosing imm8 / accumulator / imm32 like GNU as.
fn alu_imm(cx: &Ctx, rd: Reg, imm: i32, codes: [Code; 3]) -> Result<Instruction, EncodeError> {
    let [imm8, rax_imm32, rm_imm32] = codes;
    let r = cx.r64(rd)?;
    let code = if fits_i8(imm) {
        imm8
    } else if r == Register::RAX {
        rax_imm32
    } else {
        rm_imm32
    };
    Instruction::with2(code, r, imm).map_err(|e| cx.ierr(e))
}

fn sized_code(size: Size, codes: [Code; 4]) -> Code {
    match size {
        Size::B => codes[0],
        Size::W => codes[1],
        Size::D => codes[2],
        Size::Q => codes[3],
    }
}

/// Build the iced instruction for a non-branch, non-label instruction.
fn lower(cx: &Ctx, insn: &Insn) -> Result<Instruction, EncodeError> {
    let e = |r: Result<Instruction, IcedError>| r.map_err(|e| cx.ierr(e));
    let rr = |code: Code, a: Reg, b: Reg| -> Result<Instruction, EncodeError> {
        e(Instruction::with2(code, cx.r64(a)?, cx.r64(b)?))
    };
    let r1 = |code: Code, a: Reg| -> Result<Instruction, EncodeError> {
        e(Instruction::with1(code, cx.r64(a)?))
    };
    match *insn {
        Insn::MovImm { rd, imm } => match mov_imm_kind(imm) {
            0 => e(Instruction::with2(
                Code::Mov_r32_imm32,
                cx.reg(rd, Size::D)?,
                imm as u32,
            )),
            1 => e(Instruction::with2(
                Code::Mov_rm64_imm32,
                cx.r64(rd)?,
                imm as i64 as i32,
            )),
            _ => e(Instruction::with2(Code::Mov_r64_imm64, cx.r64(rd)?, imm)),
        },
        Insn::MovReg { rd, rs } => rr(Code::Mov_rm64_r64, rd, rs),
        Insn::Store {
            size,
            base,
            index,
            disp,
            src,
        } => {
            let code = sized_code(
                size,
                [
                    Code::Mov_rm8_r8,
                    Code::Mov_rm16_r16,
                    Code::Mov_rm32_r32,
                    Code::Mov_rm64_r64,
                ],
            );
            e(Instruction::with2(
                code,
                cx.mem(base, index, disp)?,
                cx.reg(src, size)?,
            ))
        }
        Insn::Load {
            size,
            rd,
            base,
            index,
            disp,
        } => {
            let (code, dst) = match size {
                Size::B => (Code::Movzx_r32_rm8, cx.reg(rd, Size::D)?),
                Size::W => (Code::Movzx_r32_rm16, cx.reg(rd, Size::D)?),
                Size::D => (Code::Mov_r32_rm32, cx.reg(rd, Size::D)?),
                Size::Q => (Code::Mov_r64_rm64, cx.r64(rd)?),
            };
            e(Instruction::with2(code, dst, cx.mem(base, index, disp)?))
        }
        Insn::Bswap { size, rd } => match size {
            Size::D => e(Instruction::with1(Code::Bswap_r32, cx.reg(rd, Size::D)?)),
            Size::Q => r1(Code::Bswap_r64, rd),
            Size::B | Size::W => Err(cx.bad("bswap size must be D or Q (use Rol16 for W)")),
        },
        Insn::Rol16 { rd } => e(Instruction::with2(
            Code::Rol_rm16_imm8,
            cx.reg(rd, Size::W)?,
            8i32,
        )),
        Insn::Or { rd, rs } => rr(Code::Or_rm64_r64, rd, rs),
        Insn::And { rd, rs } => rr(Code::And_rm64_r64, rd, rs),
        Insn::Xor { rd, rs } => rr(Code::Xor_rm64_r64, rd, rs),
        Insn::Add { rd, rs } => rr(Code::Add_rm64_r64, rd, rs),
        Insn::Sub { rd, rs } => rr(Code::Sub_rm64_r64, rd, rs),
        Insn::Imul { rd, rs } => rr(Code::Imul_r64_rm64, rd, rs),
        Insn::OrImm { rd, imm } => alu_imm(
            cx,
            rd,
            imm,
            [Code::Or_rm64_imm8, Code::Or_RAX_imm32, Code::Or_rm64_imm32],
        ),
        Insn::AndImm { rd, imm } => alu_imm(
            cx,
            rd,
            imm,
            [
                Code::And_rm64_imm8,
                Code::And_RAX_imm32,
                Code::And_rm64_imm32,
            ],
        ),
        Insn::AddImm { rd, imm } => alu_imm(
            cx,
            rd,
            imm,
            [
                Code::Add_rm64_imm8,
                Code::Add_RAX_imm32,
                Code::Add_rm64_imm32,
            ],
        ),
        Insn::SubImm { rd, imm } => alu_imm(
            cx,
            rd,
            imm,
            [
                Code::Sub_rm64_imm8,
                Code::Sub_RAX_imm32,
                Code::Sub_rm64_imm32,
            ],
        ),
        Insn::XorImm { rd, imm } => alu_imm(
            cx,
            rd,
            imm,
            [
                Code::Xor_rm64_imm8,
                Code::Xor_RAX_imm32,
                Code::Xor_rm64_imm32,
            ],
        ),
        Insn::CmpImm { ra, imm } => alu_imm(
            cx,
            ra,
            imm,
            [
                Code::Cmp_rm64_imm8,
                Code::Cmp_RAX_imm32,
                Code::Cmp_rm64_imm32,
            ],
        ),
        Insn::TestImm { ra, imm } => {
            let r = cx.r64(ra)?;
            let code = if r == Register::RAX {
                Code::Test_RAX_imm32
            } else {
                Code::Test_rm64_imm32
            };
            e(Instruction::with2(code, r, imm))
        }
        Insn::ShlImm { rd, sh } | Insn::ShrImm { rd, sh } => {
            if sh > 63 {
                return Err(cx.bad("shift count must be 0..=63"));
            }
            let shl = matches!(insn, Insn::ShlImm { .. });
            // GNU as uses the D1 (shift-by-one) form for `$1`.
            let code = match (shl, sh == 1) {
                (true, true) => Code::Shl_rm64_1,
                (true, false) => Code::Shl_rm64_imm8,
                (false, true) => Code::Shr_rm64_1,
                (false, false) => Code::Shr_rm64_imm8,
            };
            e(Instruction::with2(code, cx.r64(rd)?, u32::from(sh)))
        }
        Insn::ShlCl { rd } => e(Instruction::with2(
            Code::Shl_rm64_CL,
            cx.r64(rd)?,
            Register::CL,
        )),
        Insn::ShrCl { rd } => e(Instruction::with2(
            Code::Shr_rm64_CL,
            cx.r64(rd)?,
            Register::CL,
        )),
        Insn::Not { rd } => r1(Code::Not_rm64, rd),
        Insn::Neg { rd } => r1(Code::Neg_rm64, rd),
        Insn::Bsr { rd, rs } => rr(Code::Bsr_r64_rm64, rd, rs),
        Insn::Bsf { rd, rs } => rr(Code::Bsf_r64_rm64, rd, rs),
        Insn::Cmove { rd, rs } => rr(Code::Cmove_r64_rm64, rd, rs),
        Insn::CmpReg { ra, rb } => rr(Code::Cmp_rm64_r64, ra, rb),
        Insn::Test { ra, rb } => rr(Code::Test_rm64_r64, ra, rb),
        Insn::Ret => Ok(Instruction::with(Code::Retnq)),
        Insn::Pause => Ok(Instruction::with(Code::Pause)),
        Insn::Push { rs } => r1(Code::Push_r64, rs),
        Insn::Pop { rd } => r1(Code::Pop_r64, rd),
        Insn::Nop => Ok(Instruction::with(Code::Nopd)),
        Insn::Sfence => Ok(Instruction::with(Code::Sfence)),
        Insn::Lfence => Ok(Instruction::with(Code::Lfence)),
        Insn::Mfence => Ok(Instruction::with(Code::Mfence)),
        Insn::LockCmpxchg {
            size,
            base,
            disp,
            src,
        } => {
            let code = sized_code(
                size,
                [
                    Code::Cmpxchg_rm8_r8,
                    Code::Cmpxchg_rm16_r16,
                    Code::Cmpxchg_rm32_r32,
                    Code::Cmpxchg_rm64_r64,
                ],
            );
            let mut i = e(Instruction::with2(
                code,
                cx.mem(base, None, disp)?,
                cx.reg(src, size)?,
            ))?;
            i.set_has_lock_prefix(true);
            Ok(i)
        }
        Insn::Xchg {
            size,
            base,
            disp,
            src,
        } => {
            let code = sized_code(
                size,
                [
                    Code::Xchg_rm8_r8,
                    Code::Xchg_rm16_r16,
                    Code::Xchg_rm32_r32,
                    Code::Xchg_rm64_r64,
                ],
            );
            e(Instruction::with2(
                code,
                cx.mem(base, None, disp)?,
                cx.reg(src, size)?,
            ))
        }
        Insn::Invlpg { base } => e(Instruction::with1(Code::Invlpg_m, cx.mem(base, None, 0)?)),
        Insn::Clflush { base } => e(Instruction::with1(Code::Clflush_m8, cx.mem(base, None, 0)?)),
        Insn::Jcc { .. } | Insn::Jmp { .. } | Insn::Label(_) => {
            Err(cx.bad("internal: branch/label lowered as plain instruction"))
        }
    }
}

// ---------------------------------------------------------------------------
// Assembly

/// Label layout: which iced instruction index each label points at.
struct Layout {
    /// iced instruction index for every non-label insn (None for labels).
    iced_index: Vec<Option<usize>>,
    /// iced instruction index each label is bound to (`n_real` = end of code).
    label_pos: HashMap<Label, usize>,
    /// Number of real (non-label) instructions.
    n_real: usize,
    /// Labels bound to the end of the code (needs a placeholder instruction).
    trailing_labels: bool,
}

fn layout(insns: &[Insn]) -> Result<Layout, EncodeError> {
    let mut iced_index = Vec::with_capacity(insns.len());
    let mut label_pos = HashMap::new();
    let mut n = 0usize;
    for insn in insns {
        if let Insn::Label(l) = insn {
            if label_pos.insert(*l, n).is_some() {
                return Err(EncodeError::DuplicateLabel(*l));
            }
            iced_index.push(None);
        } else {
            iced_index.push(Some(n));
            n += 1;
        }
    }
    for insn in insns {
        if let Some(t) = insn.branch_target().filter(|t| !label_pos.contains_key(t)) {
            return Err(EncodeError::UndefinedLabel(t));
        }
    }
    let trailing_labels = label_pos.values().any(|&p| p == n);
    Ok(Layout {
        iced_index,
        label_pos,
        n_real: n,
        trailing_labels,
    })
}

fn emit_branch(
    a: &mut CodeAssembler,
    insn: &Insn,
    label: CodeLabel,
    long: bool,
    cx: &Ctx,
) -> Result<(), EncodeError> {
    a.set_prefer_short_branch(!long);
    let r = match insn {
        Insn::Jmp { .. } => a.jmp(label),
        Insn::Jcc { cond, .. } => match cond {
            Cond::E => a.je(label),
            Cond::Ne => a.jne(label),
            Cond::B => a.jb(label),
            Cond::Ae => a.jae(label),
            Cond::A => a.ja(label),
            Cond::Be => a.jbe(label),
            Cond::L => a.jl(label),
            Cond::Ge => a.jge(label),
            Cond::G => a.jg(label),
            Cond::Le => a.jle(label),
            Cond::S => a.js(label),
            Cond::Ns => a.jns(label),
        },
        _ => return Err(cx.bad("internal: not a branch")),
    };
    r.map_err(|e| cx.ierr(e))
}

/// Feed everything into a fresh CodeAssembler; `long[i]` selects rel32 for
/// branch `insns[i]`.
fn build(insns: &[Insn], lay: &Layout, long: &[bool]) -> Result<CodeAssembler, EncodeError> {
    let mut a = CodeAssembler::new(64).map_err(|e| iced_err(None, e))?;
    // One iced label per iced instruction index that has at least one label.
    let mut labels: HashMap<usize, CodeLabel> = HashMap::new();
    for &pos in lay.label_pos.values() {
        labels.entry(pos).or_insert_with(|| a.create_label());
    }
    fn bind(
        a: &mut CodeAssembler,
        labels: &mut HashMap<usize, CodeLabel>,
        pos: usize,
        i: Option<usize>,
    ) -> Result<(), EncodeError> {
        if let Some(l) = labels.get_mut(&pos) {
            a.set_label(l).map_err(|e| iced_err(i, e))?;
        }
        Ok(())
    }
    for (i, insn) in insns.iter().enumerate() {
        let Some(pos) = lay.iced_index[i] else {
            continue;
        };
        bind(&mut a, &mut labels, pos, Some(i))?;
        let cx = Ctx { index: i };
        if let Some(t) = insn.branch_target() {
            let tpos = lay
                .label_pos
                .get(&t)
                .ok_or(EncodeError::UndefinedLabel(t))?;
            let target = *labels.get(tpos).ok_or(EncodeError::UndefinedLabel(t))?;
            emit_branch(&mut a, insn, target, long[i], &cx)?;
        } else {
            let ins = lower(&cx, insn)?;
            a.add_instruction(ins).map_err(|e| cx.ierr(e))?;
        }
    }
    if lay.trailing_labels {
        // Placeholder so the end-of-code label has an instruction to bind
        // to; its byte is cut off again after encoding.
        bind(&mut a, &mut labels, lay.n_real, None)?;
        a.add_instruction(Instruction::with(Code::Nopd))
            .map_err(|e| iced_err(None, e))?;
    }
    Ok(a)
}

struct Encoded {
    bytes: Vec<u8>,
    /// Offset of every iced instruction, plus the end offset appended.
    offsets: Vec<u32>,
    instructions: Vec<Instruction>,
}

fn encode(insns: &[Insn], lay: &Layout, long: &[bool]) -> Result<Encoded, EncodeError> {
    let mut a = build(insns, lay, long)?;
    let res = a
        .assemble_options(
            0,
            BlockEncoderOptions::DONT_FIX_BRANCHES
                | BlockEncoderOptions::RETURN_NEW_INSTRUCTION_OFFSETS,
        )
        .map_err(|e| iced_err(None, e))?;
    let mut bytes = res.inner.code_buffer;
    let mut offsets = res.inner.new_instruction_offsets;
    if offsets.len() != a.instructions().len() || offsets.contains(&u32::MAX) {
        return Err(EncodeError::Iced(
            "internal: block encoder returned no instruction offsets".into(),
        ));
    }
    let end = if lay.trailing_labels {
        let nop_off = offsets[lay.n_real];
        bytes.truncate(nop_off as usize);
        offsets.truncate(lay.n_real);
        nop_off
    } else {
        u32::try_from(bytes.len()).map_err(|_| EncodeError::Iced("code too large".into()))?
    };
    offsets.push(end);
    Ok(Encoded {
        bytes,
        offsets,
        instructions: a.take_instructions(),
    })
}

/// GNU-as style branch relaxation: start every branch short and grow the
/// ones whose rel8 displacement does not fit until nothing changes.
fn relax(insns: &[Insn], lay: &Layout, lens: &[u32]) -> Vec<bool> {
    let mut long = vec![false; insns.len()];
    loop {
        // Offsets of iced instructions under the current choice.
        let mut off = Vec::with_capacity(lay.n_real + 1);
        let mut pos = 0i64;
        for (i, insn) in insns.iter().enumerate() {
            let Some(k) = lay.iced_index[i] else {
                continue;
            };
            off.push(pos);
            let len = if insn.branch_target().is_some() && !long[i] {
                2
            } else {
                i64::from(lens[k])
            };
            pos += len;
        }
        off.push(pos);
        let mut changed = false;
        for (i, insn) in insns.iter().enumerate() {
            let (Some(t), Some(k)) = (insn.branch_target(), lay.iced_index[i]) else {
                continue;
            };
            if long[i] {
                continue;
            }
            let Some(&tpos) = lay.label_pos.get(&t) else {
                continue;
            };
            let disp = off[tpos] - (off[k] + 2);
            if !(-128..=127).contains(&disp) {
                long[i] = true;
                changed = true;
            }
        }
        if !changed {
            return long;
        }
    }
}

/// Symbol resolver that names the branch target of the instruction being
/// formatted (set through the shared cell right before formatting).
struct BranchName(Rc<RefCell<Option<String>>>);

impl SymbolResolver for BranchName {
    fn symbol(
        &mut self,
        instruction: &Instruction,
        operand: u32,
        _instruction_operand: Option<u32>,
        address: u64,
        _address_size: u32,
    ) -> Option<SymbolResult<'_>> {
        let is_branch = matches!(
            instruction.try_op_kind(operand),
            Ok(OpKind::NearBranch64 | OpKind::NearBranch32 | OpKind::NearBranch16)
        );
        if !is_branch {
            return None;
        }
        let name = self.0.borrow().clone()?;
        Some(SymbolResult::with_string(address, name))
    }
}

/// Encode `insns` and print them as GNU-as AT&T text.  Branch targets are
/// printed as `label_name(l)`; the caller emits `label_name(l):` lines for
/// `Insn::Label` entries (whose `text` is empty).
pub fn assemble(
    insns: &[Insn],
    label_name: &dyn Fn(Label) -> String,
) -> Result<Assembled, EncodeError> {
    let lay = layout(insns)?;

    // Pass 1: every branch in its rel32 form, to measure instruction lengths.
    let all_long = vec![true; insns.len()];
    let first = encode(insns, &lay, &all_long)?;
    let lens: Vec<u32> = first
        .offsets
        .windows(2)
        .map(|w| w[1].saturating_sub(w[0]))
        .collect();

    // Pass 2: GNU-as relaxation decides rel8/rel32, iced encodes exactly that.
    let long = relax(insns, &lay, &lens);
    let enc = encode(insns, &lay, &long)?;

    // Text from the very instructions that were encoded.
    let current = Rc::new(RefCell::new(None::<String>));
    let mut fmt = GasFormatter::with_options(Some(Box::new(BranchName(current.clone()))), None);
    fmt.options_mut().set_uppercase_hex(false);

    let mut offsets = Vec::with_capacity(insns.len());
    let mut text = Vec::with_capacity(insns.len());
    for (i, insn) in insns.iter().enumerate() {
        match lay.iced_index[i] {
            None => {
                let pos = match insn {
                    Insn::Label(l) => lay.label_pos.get(l).copied().unwrap_or(lay.n_real),
                    _ => lay.n_real,
                };
                offsets.push(enc.offsets.get(pos).copied().unwrap_or(0));
                text.push(String::new());
            }
            Some(k) => {
                offsets.push(enc.offsets.get(k).copied().unwrap_or(0));
                let Some(ins) = enc.instructions.get(k) else {
                    return Err(EncodeError::Iced("internal: instruction index".into()));
                };
                *current.borrow_mut() = insn.branch_target().map(label_name);
                let mut s = String::new();
                fmt.format(ins, &mut s);
                // iced emits LOCK before the 0x66 operand-size prefix, GNU
                // as orders `lock cmpxchg %ax,..` as 66 F0.  Writing the
                // prefix as its own statement (`lock; ...`, as Linux does)
                // makes as emit F0 first, matching iced's bytes.
                if let Some(rest) = s.strip_prefix("lock ").filter(|_| ins.has_lock_prefix()) {
                    s = format!("lock; {rest}");
                }
                text.push(s);
            }
        }
    }
    Ok(Assembled {
        bytes: enc.bytes,
        offsets,
        text,
    })
}
