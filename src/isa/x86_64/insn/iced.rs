//! One instruction of the model as an iced `Instruction`, in the forms
//! GNU `as` picks.

use iced_x86::{Code, IcedError, Instruction, Register};

use super::operands::{mem, Ctx};
use super::{mov_imm_kind, EncodeError, Gpr, Insn, Simm32, Size};

impl Ctx {
    /// An iced result, its error naming this instruction.
    fn ok(&self, r: Result<Instruction, IcedError>) -> Result<Instruction, EncodeError> {
        r.map_err(|e| self.ierr(e))
    }

    /// `op` on two 64-bit registers.
    fn rr(&self, code: Code, a: Gpr, b: Gpr) -> Result<Instruction, EncodeError> {
        self.ok(Instruction::with2(code, a.r64(), b.r64()))
    }

    /// `op` on one 64-bit register.
    fn r1(&self, code: Code, a: Gpr) -> Result<Instruction, EncodeError> {
        self.ok(Instruction::with1(code, a.r64()))
    }
}

/// `op r64, imm` choosing imm8 / accumulator / imm32 like GNU as.
fn alu_imm(cx: &Ctx, rd: Gpr, imm: Simm32, codes: [Code; 3]) -> Result<Instruction, EncodeError> {
    let [imm8, rax_imm32, rm_imm32] = codes;
    let r = rd.r64();
    let imm = imm.get();
    let code = if i8::try_from(imm).is_ok() {
        imm8
    } else if rd == Gpr::RAX {
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
pub(super) fn iced_instruction(cx: &Ctx, insn: &Insn) -> Result<Instruction, EncodeError> {
    match *insn {
        Insn::MovImm { .. }
        | Insn::MovReg { .. }
        | Insn::MovZx { .. }
        | Insn::Store { .. }
        | Insn::Load { .. }
        | Insn::Bswap { .. }
        | Insn::Rol16 { .. } => move_or_access(cx, insn),
        Insn::Or { .. }
        | Insn::And { .. }
        | Insn::Xor { .. }
        | Insn::Add { .. }
        | Insn::Sub { .. }
        | Insn::Imul { .. }
        | Insn::OrImm { .. }
        | Insn::AndImm { .. }
        | Insn::AddImm { .. }
        | Insn::SubImm { .. }
        | Insn::XorImm { .. }
        | Insn::CmpImm { .. }
        | Insn::TestImm { .. } => alu(cx, insn),
        Insn::ShlImm { .. }
        | Insn::ShrImm { .. }
        | Insn::ShlCl { .. }
        | Insn::ShrCl { .. }
        | Insn::Not { .. }
        | Insn::Neg { .. }
        | Insn::Bsr { .. }
        | Insn::Bsf { .. }
        | Insn::Cmove { .. }
        | Insn::CmpReg { .. }
        | Insn::Test { .. }
        | Insn::Bt { .. } => shift_or_bits(cx, insn),
        Insn::LockCmpxchg { .. } | Insn::Xchg { .. } => locked_rmw(cx, insn),
        Insn::Ret => Ok(Instruction::with(Code::Retnq)),
        Insn::Pause => Ok(Instruction::with(Code::Pause)),
        Insn::Push { rs } => cx.r1(Code::Push_r64, rs),
        Insn::Pop { rd } => cx.r1(Code::Pop_r64, rd),
        Insn::Nop => Ok(Instruction::with(Code::Nopd)),
        Insn::Sfence => Ok(Instruction::with(Code::Sfence)),
        Insn::Lfence => Ok(Instruction::with(Code::Lfence)),
        Insn::Mfence => Ok(Instruction::with(Code::Mfence)),
        Insn::Invlpg { base } => cx.ok(Instruction::with1(
            Code::Invlpg_m,
            mem(base, None, Simm32::ZERO),
        )),
        Insn::Clflush { base } => cx.ok(Instruction::with1(
            Code::Clflush_m8,
            mem(base, None, Simm32::ZERO),
        )),
        Insn::Jcc { .. } | Insn::Jmp { .. } | Insn::Label(_) => {
            Err(cx.bad("internal: branch/label lowered as plain instruction"))
        }
    }
}

/// Register and immediate moves, plain loads and stores, byte swaps.
fn move_or_access(cx: &Ctx, insn: &Insn) -> Result<Instruction, EncodeError> {
    match *insn {
        Insn::MovImm { rd, imm } => match mov_imm_kind(imm) {
            0 => cx.ok(Instruction::with2(
                Code::Mov_r32_imm32,
                rd.iced(Size::D),
                imm as u32,
            )),
            1 => cx.ok(Instruction::with2(
                Code::Mov_rm64_imm32,
                rd.r64(),
                imm as i64 as i32,
            )),
            _ => cx.ok(Instruction::with2(Code::Mov_r64_imm64, rd.r64(), imm)),
        },
        Insn::MovReg { rd, rs } => cx.rr(Code::Mov_rm64_r64, rd, rs),
        Insn::MovZx { size, rd, rs } => {
            let code = sized_code(
                size,
                [
                    Code::Movzx_r32_rm8,
                    Code::Movzx_r32_rm16,
                    // GNU as encodes a register move as `mov r/m, r`.
                    Code::Mov_rm32_r32,
                    Code::Mov_rm64_r64,
                ],
            );
            let rd = match size {
                Size::Q => rd.r64(),
                _ => rd.iced(Size::D),
            };
            cx.ok(Instruction::with2(code, rd, rs.iced(size)))
        }
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
            cx.ok(Instruction::with2(
                code,
                mem(base, index, disp),
                src.iced(size),
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
                Size::B => (Code::Movzx_r32_rm8, rd.iced(Size::D)),
                Size::W => (Code::Movzx_r32_rm16, rd.iced(Size::D)),
                Size::D => (Code::Mov_r32_rm32, rd.iced(Size::D)),
                Size::Q => (Code::Mov_r64_rm64, rd.r64()),
            };
            cx.ok(Instruction::with2(code, dst, mem(base, index, disp)))
        }
        Insn::Bswap { size, rd } => match size {
            Size::D => cx.ok(Instruction::with1(Code::Bswap_r32, rd.iced(Size::D))),
            Size::Q => cx.r1(Code::Bswap_r64, rd),
            Size::B | Size::W => Err(cx.bad("bswap size must be D or Q (use Rol16 for W)")),
        },
        Insn::Rol16 { rd } => cx.ok(Instruction::with2(
            Code::Rol_rm16_imm8,
            rd.iced(Size::W),
            8i32,
        )),
        _ => Err(cx.bad("internal: not a move")),
    }
}

/// Two-operand arithmetic and logic, register or immediate, and `test $imm`.
fn alu(cx: &Ctx, insn: &Insn) -> Result<Instruction, EncodeError> {
    match *insn {
        Insn::Or { rd, rs } => cx.rr(Code::Or_rm64_r64, rd, rs),
        Insn::And { rd, rs } => cx.rr(Code::And_rm64_r64, rd, rs),
        Insn::Xor { rd, rs } => cx.rr(Code::Xor_rm64_r64, rd, rs),
        Insn::Add { rd, rs } => cx.rr(Code::Add_rm64_r64, rd, rs),
        Insn::Sub { rd, rs } => cx.rr(Code::Sub_rm64_r64, rd, rs),
        Insn::Imul { rd, rs } => cx.rr(Code::Imul_r64_rm64, rd, rs),
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
            let code = if ra == Gpr::RAX {
                Code::Test_RAX_imm32
            } else {
                Code::Test_rm64_imm32
            };
            cx.ok(Instruction::with2(code, ra.r64(), imm.get()))
        }
        _ => Err(cx.bad("internal: not an ALU instruction")),
    }
}

/// Shifts, `not`/`neg`, bit scans, `cmove` and register compares.
fn shift_or_bits(cx: &Ctx, insn: &Insn) -> Result<Instruction, EncodeError> {
    match *insn {
        Insn::ShlImm { rd, sh } | Insn::ShrImm { rd, sh } => {
            let sh = sh.get();
            let shl = matches!(insn, Insn::ShlImm { .. });
            // GNU as uses the D1 (shift-by-one) form for `$1`.
            let code = match (shl, sh == 1) {
                (true, true) => Code::Shl_rm64_1,
                (true, false) => Code::Shl_rm64_imm8,
                (false, true) => Code::Shr_rm64_1,
                (false, false) => Code::Shr_rm64_imm8,
            };
            cx.ok(Instruction::with2(code, rd.r64(), u32::from(sh)))
        }
        Insn::ShlCl { rd } => cx.ok(Instruction::with2(
            Code::Shl_rm64_CL,
            rd.r64(),
            Register::CL,
        )),
        Insn::ShrCl { rd } => cx.ok(Instruction::with2(
            Code::Shr_rm64_CL,
            rd.r64(),
            Register::CL,
        )),
        Insn::Not { rd } => cx.r1(Code::Not_rm64, rd),
        Insn::Neg { rd } => cx.r1(Code::Neg_rm64, rd),
        Insn::Bsr { rd, rs } => cx.rr(Code::Bsr_r64_rm64, rd, rs),
        Insn::Bsf { rd, rs } => cx.rr(Code::Bsf_r64_rm64, rd, rs),
        Insn::Cmove { rd, rs } => cx.rr(Code::Cmove_r64_rm64, rd, rs),
        Insn::CmpReg { ra, rb } => cx.rr(Code::Cmp_rm64_r64, ra, rb),
        Insn::Test { ra, rb } => cx.rr(Code::Test_rm64_r64, ra, rb),
        Insn::Bt { ra, bit } => cx.ok(Instruction::with2(
            Code::Bt_rm64_imm8,
            ra.r64(),
            u32::from(bit.get()),
        )),
        _ => Err(cx.bad("internal: not a shift or bit instruction")),
    }
}

/// `lock cmpxchg` and `xchg` with memory.
fn locked_rmw(cx: &Ctx, insn: &Insn) -> Result<Instruction, EncodeError> {
    match *insn {
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
            let mut i = cx.ok(Instruction::with2(
                code,
                mem(base, None, disp),
                src.iced(size),
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
            cx.ok(Instruction::with2(
                code,
                mem(base, None, disp),
                src.iced(size),
            ))
        }
        _ => Err(cx.bad("internal: not a locked read-modify-write")),
    }
}
