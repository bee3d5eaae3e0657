//! One instruction of the model as an iced `Instruction`, in the forms
//! GNU `as` picks. The operands were checked when built; what iced can
//! still refuse comes back as its error.

use iced_x86::{Code, IcedError, Instruction, Register};

use super::operands::{mem, Ctx};
use super::{BswapSize, Disp32, EncodeError, Gpr, Imm6, Insn, MovImmForm, Simm32, Size};

type Built = Result<Instruction, IcedError>;

/// The imm8, `rax, imm32` and `r/m64, imm32` forms of one ALU operation.
const OR_IMM: [Code; 3] = [Code::Or_rm64_imm8, Code::Or_RAX_imm32, Code::Or_rm64_imm32];
const AND_IMM: [Code; 3] = [
    Code::And_rm64_imm8,
    Code::And_RAX_imm32,
    Code::And_rm64_imm32,
];
const ADD_IMM: [Code; 3] = [
    Code::Add_rm64_imm8,
    Code::Add_RAX_imm32,
    Code::Add_rm64_imm32,
];
const SUB_IMM: [Code; 3] = [
    Code::Sub_rm64_imm8,
    Code::Sub_RAX_imm32,
    Code::Sub_rm64_imm32,
];
const XOR_IMM: [Code; 3] = [
    Code::Xor_rm64_imm8,
    Code::Xor_RAX_imm32,
    Code::Xor_rm64_imm32,
];
const CMP_IMM: [Code; 3] = [
    Code::Cmp_rm64_imm8,
    Code::Cmp_RAX_imm32,
    Code::Cmp_rm64_imm32,
];

/// The B, W, D and Q forms of one memory operation.
const STORE: [Code; 4] = [
    Code::Mov_rm8_r8,
    Code::Mov_rm16_r16,
    Code::Mov_rm32_r32,
    Code::Mov_rm64_r64,
];
const STORE_IMM: [Code; 4] = [
    Code::Mov_rm8_imm8,
    Code::Mov_rm16_imm16,
    Code::Mov_rm32_imm32,
    Code::Mov_rm64_imm32,
];
const CMPXCHG: [Code; 4] = [
    Code::Cmpxchg_rm8_r8,
    Code::Cmpxchg_rm16_r16,
    Code::Cmpxchg_rm32_r32,
    Code::Cmpxchg_rm64_r64,
];
const XCHG: [Code; 4] = [
    Code::Xchg_rm8_r8,
    Code::Xchg_rm16_r16,
    Code::Xchg_rm32_r32,
    Code::Xchg_rm64_r64,
];
/// A register-to-register zero extension: `movzx` for B/W, and for D/Q
/// the `mov r/m, r` GNU as encodes a register move as.
const MOVZX: [Code; 4] = [
    Code::Movzx_r32_rm8,
    Code::Movzx_r32_rm16,
    Code::Mov_rm32_r32,
    Code::Mov_rm64_r64,
];

/// Build the iced instruction for a non-branch, non-label instruction.
pub(super) fn iced_instruction(cx: &Ctx, insn: &Insn) -> Result<Instruction, EncodeError> {
    let built = match *insn {
        Insn::MovImm { rd, imm } => mov_imm(rd, imm),
        Insn::MovReg { rd, rs } => rr(Code::Mov_rm64_r64, rd, rs),
        Insn::MovZx { size, rd, rs } => {
            Instruction::with2(sized_code(size, MOVZX), zx_dest(size, rd), rs.iced(size))
        }
        Insn::Store {
            size,
            base,
            index,
            disp,
            src,
        } => Instruction::with2(
            sized_code(size, STORE),
            mem(base, index, disp),
            src.iced(size),
        ),
        Insn::StoreImm {
            size,
            base,
            index,
            disp,
            imm,
        } => Instruction::with2(
            sized_code(size, STORE_IMM),
            mem(base, index, disp),
            imm.get(),
        ),
        Insn::Load {
            size,
            rd,
            base,
            index,
            disp,
        } => Instruction::with2(load_code(size), zx_dest(size, rd), mem(base, index, disp)),
        Insn::Lea {
            rd,
            base,
            index,
            disp,
        } => Instruction::with2(Code::Lea_r64_m, rd.iced(Size::Q), mem(base, index, disp)),
        Insn::Bswap {
            size: BswapSize::D,
            rd,
        } => Instruction::with1(Code::Bswap_r32, rd.iced(Size::D)),
        Insn::Bswap {
            size: BswapSize::Q,
            rd,
        } => Instruction::with1(Code::Bswap_r64, rd.r64()),
        Insn::Rol16 { rd } => Instruction::with2(Code::Rol_rm16_imm8, rd.iced(Size::W), 8i32),
        Insn::Or { rd, rs } => rr(Code::Or_rm64_r64, rd, rs),
        Insn::And { rd, rs } => rr(Code::And_rm64_r64, rd, rs),
        Insn::Xor { rd, rs } => rr(Code::Xor_rm64_r64, rd, rs),
        Insn::Add { rd, rs } => rr(Code::Add_rm64_r64, rd, rs),
        Insn::Sub { rd, rs } => rr(Code::Sub_rm64_r64, rd, rs),
        Insn::Imul { rd, rs } => rr(Code::Imul_r64_rm64, rd, rs),
        Insn::OrImm { rd, imm } => alu_imm(rd, imm, OR_IMM),
        Insn::AndImm { rd, imm } => alu_imm(rd, imm, AND_IMM),
        Insn::AddImm { rd, imm } => alu_imm(rd, imm, ADD_IMM),
        Insn::SubImm { rd, imm } => alu_imm(rd, imm, SUB_IMM),
        Insn::XorImm { rd, imm } => alu_imm(rd, imm, XOR_IMM),
        Insn::CmpImm { ra, imm } => alu_imm(ra, imm, CMP_IMM),
        Insn::TestImm { ra, imm } => test_imm(ra, imm),
        Insn::ShlImm { rd, sh } => shift(rd, sh, [Code::Shl_rm64_1, Code::Shl_rm64_imm8]),
        Insn::ShrImm { rd, sh } => shift(rd, sh, [Code::Shr_rm64_1, Code::Shr_rm64_imm8]),
        Insn::ShlCl { rd } => Instruction::with2(Code::Shl_rm64_CL, rd.r64(), Register::CL),
        Insn::ShrCl { rd } => Instruction::with2(Code::Shr_rm64_CL, rd.r64(), Register::CL),
        Insn::Not { rd } => Instruction::with1(Code::Not_rm64, rd.r64()),
        Insn::Neg { rd } => Instruction::with1(Code::Neg_rm64, rd.r64()),
        Insn::Bsr { rd, rs } => rr(Code::Bsr_r64_rm64, rd, rs),
        Insn::Bsf { rd, rs } => rr(Code::Bsf_r64_rm64, rd, rs),
        Insn::Cmove { rd, rs } => rr(Code::Cmove_r64_rm64, rd, rs),
        Insn::CmpReg { ra, rb } => rr(Code::Cmp_rm64_r64, ra, rb),
        Insn::Test { ra, rb } => rr(Code::Test_rm64_r64, ra, rb),
        Insn::Bts { rd, rn } => rr(Code::Bts_rm64_r64, rd, rn),
        Insn::Bt { ra, bit } => {
            Instruction::with2(Code::Bt_rm64_imm8, ra.r64(), u32::from(bit.get()))
        }
        Insn::LockCmpxchg {
            size,
            base,
            disp,
            src,
        } => rmw(CMPXCHG, size, base, disp, src).map(|mut i| {
            i.set_has_lock_prefix(true);
            i
        }),
        Insn::Xchg {
            size,
            base,
            disp,
            src,
        } => rmw(XCHG, size, base, disp, src),
        Insn::Ret => Ok(Instruction::with(Code::Retnq)),
        Insn::Pause => Ok(Instruction::with(Code::Pause)),
        Insn::Push { rs } => Instruction::with1(Code::Push_r64, rs.r64()),
        Insn::Pop { rd } => Instruction::with1(Code::Pop_r64, rd.r64()),
        Insn::Nop => Ok(Instruction::with(Code::Nopd)),
        Insn::Sfence => Ok(Instruction::with(Code::Sfence)),
        Insn::Lfence => Ok(Instruction::with(Code::Lfence)),
        Insn::Mfence => Ok(Instruction::with(Code::Mfence)),
        Insn::Invlpg { base } => Instruction::with1(Code::Invlpg_m, mem(base, None, Disp32::ZERO)),
        Insn::Clflush { base } => {
            Instruction::with1(Code::Clflush_m8, mem(base, None, Disp32::ZERO))
        }
        Insn::Jcc { .. } | Insn::Jmp { .. } | Insn::Label(_) => {
            return Err(cx.bad("internal: branch/label lowered as plain instruction"))
        }
    };
    built.map_err(|e| cx.ierr(e))
}

fn sized_code(size: Size, codes: [Code; 4]) -> Code {
    match size {
        Size::B => codes[0],
        Size::W => codes[1],
        Size::D => codes[2],
        Size::Q => codes[3],
    }
}

/// `op` on two 64-bit registers.
fn rr(code: Code, a: Gpr, b: Gpr) -> Built {
    Instruction::with2(code, a.r64(), b.r64())
}

/// The destination of a zero-extending move or load: r32 below Q (a
/// 32-bit write clears the upper half), r64 for Q.
fn zx_dest(size: Size, rd: Gpr) -> Register {
    match size {
        Size::Q => rd.r64(),
        _ => rd.iced(Size::D),
    }
}

/// B/W: movzx into r32; D: mov r32 (zero-extends); Q: mov r64.
fn load_code(size: Size) -> Code {
    sized_code(
        size,
        [
            Code::Movzx_r32_rm8,
            Code::Movzx_r32_rm16,
            Code::Mov_r32_rm32,
            Code::Mov_r64_rm64,
        ],
    )
}

fn mov_imm(rd: Gpr, imm: u64) -> Built {
    match MovImmForm::of(imm) {
        MovImmForm::Zx32(v) => Instruction::with2(Code::Mov_r32_imm32, rd.iced(Size::D), v),
        MovImmForm::Sx32(v) => Instruction::with2(Code::Mov_rm64_imm32, rd.r64(), v.get()),
        MovImmForm::Abs64(v) => Instruction::with2(Code::Mov_r64_imm64, rd.r64(), v),
    }
}

/// `op r64, imm` choosing imm8 / accumulator / imm32 like GNU as.
fn alu_imm(rd: Gpr, imm: Simm32, codes: [Code; 3]) -> Built {
    let [imm8, rax_imm32, rm_imm32] = codes;
    let imm = imm.get();
    let code = if i8::try_from(imm).is_ok() {
        imm8
    } else if rd == Gpr::RAX {
        rax_imm32
    } else {
        rm_imm32
    };
    Instruction::with2(code, rd.r64(), imm)
}

/// `test $imm32`: no imm8 form; the accumulator's is shorter.
fn test_imm(ra: Gpr, imm: Simm32) -> Built {
    let code = if ra == Gpr::RAX {
        Code::Test_RAX_imm32
    } else {
        Code::Test_rm64_imm32
    };
    Instruction::with2(code, ra.r64(), imm.get())
}

/// `shl`/`shr $sh`: GNU as uses the D1 (shift-by-one) form for `$1`.
fn shift(rd: Gpr, sh: Imm6, codes: [Code; 2]) -> Built {
    let [by_one, by_imm8] = codes;
    let code = if sh.get() == 1 { by_one } else { by_imm8 };
    Instruction::with2(code, rd.r64(), u32::from(sh.get()))
}

/// `lock cmpxchg` or `xchg` of `src` with `disp(%base)`.
fn rmw(codes: [Code; 4], size: Size, base: Gpr, disp: Disp32, src: Gpr) -> Built {
    Instruction::with2(
        sized_code(size, codes),
        mem(base, None, disp),
        src.iced(size),
    )
}
