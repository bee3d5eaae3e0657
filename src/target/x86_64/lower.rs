//! LIR -> x86-64 instructions (SysV ABI).
//!
//! ABI: integer arguments in rdi, rsi, rdx, rcx, r8, r9; result in rax;
//! rax, rcx, rdx, rsi, rdi, r8..r11 are caller-saved. We use those first
//! and push rbx, r12.. only when they run out; arguments past the sixth are
//! read from the caller's stack where they are used. r11 is reserved as the scratch
//! register of this lowering (large immediates, byte-swapped store values,
//! the right operand of a `sub` whose destination it would clobber, the
//! zero-case value of `bsr`/`bsf`, popcount's masks, rcx parked around a
//! shift by cl) and is never handed to the allocator.
//!
//! x86 is two-address: `dst = a op b` becomes `mov dst,a; op dst,b`, with
//! the `mov` left out when `dst == a`. Device registers are mapped UC by
//! the kernel (`ioremap`), so plain `mov` is the MMIO access.

use super::barriers::TABLE;
use super::insn::{Cond, Insn, Reg, Size};
use crate::ir::expr::BinOp;
use crate::lir::regalloc::{Allocation, RegFile};
use crate::lir::{Cmp, Func, Inst, Operand, Origin, UnOp};
use crate::target::barriers;
use crate::target::hweight::{self, Loc, Step};

/// Hardware numbering: 0=rax 1=rcx 2=rdx 6=rsi 7=rdi 8..=r8...
pub const REGS: RegFile = RegFile {
    args: &[RDI, RSI, RDX, RCX, R8, R9],
    pool: &[RAX, R10, R9, R8, RCX, RDX, RSI, RDI],
    // rbx, r12..r15: pushed at entry and popped before every return when a
    // sequence needs more than the caller-saved set (rbp is left alone for
    // frame-pointer unwinders).
    callee_saved: &[3, 12, 13, 14, 15],
    reserve: Some(RAX),
};

const RAX: Reg = 0;
const RCX: Reg = 1;
const RDX: Reg = 2;
const RSI: Reg = 6;
const RDI: Reg = 7;
const R8: Reg = 8;
const R9: Reg = 9;
const R10: Reg = 10;
const RSP: Reg = 4;

/// `disp(%rsp)` of incoming argument `index` (0-based) when it is passed on
/// the stack, after `pushed` callee-saved registers were pushed at entry.
/// SysV psABI 3.2.3: arguments past the six registers are pushed right to
/// left, so the seventh is at 8(%rsp) on entry, above the return address
/// (what gcc -O2 reads in a callee: `movq 24(%rsp)` for the ninth).
fn stack_arg_disp(index: usize, pushed: usize) -> Option<i32> {
    let slot = index.checked_sub(REGS.args.len())?;
    i32::try_from(8 * (1 + pushed + slot)).ok()
}

/// The lowering's scratch register (caller-saved, not an argument).
pub const SCRATCH: Reg = 11;

/// Lowered function: instructions with their origins (labels included).
pub struct Lowered {
    pub insns: Vec<(Insn, Origin)>,
}

#[derive(Debug)]
pub struct LowerError(pub String);

fn fits_i32(v: u64) -> bool {
    i32::try_from(v as i64).is_ok()
}

/// Can `name` with `n` register operands be lowered?
pub fn check_invalidate(name: &str, n: usize) -> Result<(), String> {
    match (name, n) {
        ("invlpg", 1) => Ok(()),
        ("invlpg", n) => Err(format!("`invlpg` takes one address operand, got {n}")),
        (other, _) => Err(format!(
            "`{}` is not an x86-64 invalidation instruction",
            crate::ir::insn_imm::split(other).0
        )),
    }
}

pub fn lower(f: &Func, alloc: &Allocation) -> Result<Lowered, LowerError> {
    let mut out = Lowered { insns: Vec::new() };
    let r = |v| alloc.get(v);
    let saved = alloc.used_callee_saved(&REGS);
    // A shift by a register amount needs it in cl; rcx is kept intact
    // around it only when some value lives there.
    let rcx_live = alloc.reg.values().any(|&p| p == RCX);
    if let Some((_, origin)) = f.insts.first() {
        for &p in &saved {
            out.insns.push((Insn::Push { rs: p }, origin.clone()));
        }
    }
    for (inst, origin) in &f.insts {
        let prev = out.insns.last().map(|(i, _)| i.clone());
        let mut e = |i: Insn| out.insns.push((i, origin.clone()));
        match inst {
            Inst::Arg { dst, index } => {
                if let Some(disp) = stack_arg_disp(*index, saved.len()) {
                    e(Insn::Load {
                        size: Size::Q,
                        rd: r(*dst),
                        base: RSP,
                        index: None,
                        disp,
                    });
                }
            }
            Inst::Imm { dst, value } => imm(r(*dst), *value, &mut e),
            Inst::Copy { dst, src } => mov(r(*dst), r(*src), &mut e),
            Inst::Un { op, dst, src } => un(*op, r(*dst), r(*src), &mut e),
            Inst::Not { dst, src } => {
                mov(r(*dst), r(*src), &mut e);
                e(Insn::Not { rd: r(*dst) });
            }
            Inst::Insert {
                dst,
                src,
                shift,
                width,
            } => insert(r(*dst), r(*src), *shift, *width, &mut e)?,
            Inst::Bin { op, dst, a, b } => {
                let b = match b {
                    Operand::Reg(v) => Operand2::Reg(r(*v)),
                    Operand::Imm(v) => Operand2::Imm(*v),
                };
                bin(*op, r(*dst), r(*a), b, rcx_live, &mut e)?
            }
            Inst::Load {
                dst,
                base,
                offset,
                width,
                swap,
                ..
            } => load(r(*dst), r(*base), *offset, *width, *swap, &mut e)?,
            Inst::Store {
                src,
                base,
                offset,
                width,
                swap,
                ..
            } => store(r(*src), r(*base), *offset, *width, *swap, &mut e)?,
            Inst::Barrier { name } => e(barrier(name)?),
            Inst::Invalidate { name, operands } => match (name.as_str(), operands.as_slice()) {
                ("invlpg", [addr]) => e(Insn::Invlpg { base: r(*addr) }),
                ("invlpg", ops) => {
                    return Err(LowerError(format!(
                        "`invlpg` takes one address operand, got {}",
                        ops.len()
                    )))
                }
                (other, _) => {
                    return Err(LowerError(format!(
                        "`{other}` is not an x86-64 invalidation instruction"
                    )))
                }
            },
            // No load-reserve on x86-64: a plain load into rax (the
            // allocator pins it there), and `lock cmpxchg` stores only if
            // the memory still holds that value.
            Inst::LoadReserve {
                dst, base, width, ..
            } => load(r(*dst), r(*base), 0, *width, false, &mut e)?,
            Inst::StoreCond {
                src,
                base,
                width,
                expected,
                retry,
                ..
            } => {
                if r(*expected) != RAX {
                    return Err(LowerError(
                        "lock cmpxchg needs the expected value in rax".into(),
                    ));
                }
                e(Insn::LockCmpxchg {
                    size: size(*width)?,
                    base: r(*base),
                    disp: 0,
                    src: r(*src),
                });
                e(Insn::Jcc {
                    cond: Cond::Ne,
                    target: *retry,
                });
            }
            // TSO: stores are not reordered with earlier loads or stores.
            Inst::StoreRelease { src, base, width } => {
                store(r(*src), r(*base), 0, *width, false, &mut e)?
            }
            Inst::SpinHint => e(Insn::Pause),
            Inst::Label(l) => e(Insn::Label(*l)),
            Inst::Jump(l) => e(Insn::Jmp { target: *l }),
            Inst::FeatureJump { cap, .. } => {
                return Err(LowerError(format!(
                    "x86-64 code is not patched by kernel alternatives (`{cap}`): fix the feature with `--feature NAME=on|off`, or declare it without a capability to test it at run time"
                )))
            }
            Inst::Branch { cmp, a, b, target } => {
                let ra = r(*a);
                match b {
                    // test a,a clears CF, so Ltu/Geu against 0 come out
                    // right too (never / always taken).
                    // The instruction just before computed `a` and set ZF
                    // from it (`sub $1,%r8; jne`): no test needed.
                    Operand::Imm(0)
                        if matches!(cmp, Cmp::Eq | Cmp::Ne)
                            && prev.as_ref().is_some_and(|p| sets_zf_of(p) == Some(ra)) => {}
                    Operand::Imm(0) => e(Insn::Test { ra, rb: ra }),
                    Operand::Imm(v) if fits_i32(*v) => e(Insn::CmpImm {
                        ra,
                        imm: *v as i64 as i32,
                    }),
                    Operand::Imm(v) => {
                        e(Insn::MovImm {
                            rd: SCRATCH,
                            imm: *v,
                        });
                        e(Insn::CmpReg { ra, rb: SCRATCH });
                    }
                    Operand::Reg(rb) => e(Insn::CmpReg { ra, rb: r(*rb) }),
                }
                let cond = match cmp {
                    Cmp::Eq => Cond::E,
                    Cmp::Ne => Cond::Ne,
                    Cmp::Ltu => Cond::B,
                    Cmp::Geu => Cond::Ae,
                };
                e(Insn::Jcc {
                    cond,
                    target: *target,
                });
            }
            Inst::Ret { value } => {
                match value {
                    Operand::Imm(v) => imm(RAX, *v, &mut e),
                    Operand::Reg(v) => mov(RAX, r(*v), &mut e),
                }
                for &p in saved.iter().rev() {
                    e(Insn::Pop { rd: p });
                }
                e(Insn::Ret);
            }
        }
    }
    Ok(out)
}

/// The register whose value an instruction leaves ZF describing, for the
/// arithmetic forms that set ZF from their result (`not`, `mov`, `imul`
/// and shifts do not, or not always).
fn sets_zf_of(i: &Insn) -> Option<Reg> {
    match *i {
        Insn::And { rd, .. }
        | Insn::Or { rd, .. }
        | Insn::Xor { rd, .. }
        | Insn::Add { rd, .. }
        | Insn::Sub { rd, .. }
        | Insn::AndImm { rd, .. }
        | Insn::OrImm { rd, .. }
        | Insn::AddImm { rd, .. }
        | Insn::SubImm { rd, .. }
        | Insn::Neg { rd } => Some(rd),
        _ => None,
    }
}

/// A constant: `xor %r,%r` for zero (as compilers do; LIR never puts an
/// `Imm` between a compare and its branch), else the shortest `mov`.
fn imm(rd: Reg, value: u64, e: &mut dyn FnMut(Insn)) {
    if value == 0 {
        e(Insn::Xor { rd, rs: rd });
    } else {
        e(Insn::MovImm { rd, imm: value });
    }
}

fn mov(rd: Reg, rs: Reg, e: &mut dyn FnMut(Insn)) {
    if rd != rs {
        e(Insn::MovReg { rd, rs });
    }
}

fn barrier(name: &str) -> Result<Insn, LowerError> {
    if barriers::find(TABLE, name).is_none() {
        return Err(LowerError(format!("x86_64 has no barrier `{name}`")));
    }
    Ok(match name {
        "sfence" => Insn::Sfence,
        "lfence" => Insn::Lfence,
        "mfence" => Insn::Mfence,
        other => return Err(LowerError(format!("x86_64 has no barrier `{other}`"))),
    })
}

/// `dst = (src & mask(width)) << shift`.
fn insert(
    rd: Reg,
    rs: Reg,
    shift: u32,
    width: u32,
    e: &mut dyn FnMut(Insn),
) -> Result<(), LowerError> {
    if shift >= 64 {
        return Err(LowerError(format!("insert at shift {shift}")));
    }
    mov(rd, rs, e);
    if shift + width >= 64 {
        // The field reaches bit 63: the shift drops the high bits itself.
        if shift > 0 {
            e(Insn::ShlImm {
                rd,
                sh: shift as u8,
            });
        }
        return Ok(());
    }
    if width == 0 {
        e(Insn::MovImm { rd, imm: 0 });
        return Ok(());
    }
    if width <= 31 {
        // The mask fits a sign-extended imm32 (imm8 up to 6 bits).
        e(Insn::AndImm {
            rd,
            imm: ((1u64 << width) - 1) as i32,
        });
        if shift > 0 {
            e(Insn::ShlImm {
                rd,
                sh: shift as u8,
            });
        }
    } else {
        // A mask of 32 bits or more does not fit imm32: shift the field to
        // the top (dropping the high bits), then down into place. Two
        // instructions and no scratch, against movabs+and+shl.
        let up = 64 - width;
        e(Insn::ShlImm { rd, sh: up as u8 });
        e(Insn::ShrImm {
            rd,
            sh: (up - shift) as u8,
        });
    }
    Ok(())
}

#[derive(Clone, Copy)]
enum Operand2 {
    Reg(Reg),
    Imm(u64),
}

fn reg_op(op: BinOp, rd: Reg, rs: Reg) -> Result<Insn, LowerError> {
    Ok(match op {
        BinOp::And => Insn::And { rd, rs },
        BinOp::Or => Insn::Or { rd, rs },
        BinOp::Xor => Insn::Xor { rd, rs },
        BinOp::Add => Insn::Add { rd, rs },
        BinOp::Sub => Insn::Sub { rd, rs },
        BinOp::Mul => Insn::Imul { rd, rs },
        BinOp::Shl | BinOp::Shr => {
            return Err(LowerError(
                "internal: a shift by a register goes through shift_by_reg".into(),
            ))
        }
    })
}

fn bin(
    op: BinOp,
    rd: Reg,
    ra: Reg,
    b: Operand2,
    rcx_live: bool,
    e: &mut dyn FnMut(Insn),
) -> Result<(), LowerError> {
    match b {
        Operand2::Reg(rn) if matches!(op, BinOp::Shl | BinOp::Shr) => {
            shift_by_reg(op == BinOp::Shl, rd, ra, rn, rcx_live, e)
        }
        Operand2::Reg(rb) => {
            if rd == ra {
                e(reg_op(op, rd, rb)?);
            } else if rd == rb {
                match op {
                    BinOp::And | BinOp::Or | BinOp::Xor | BinOp::Add | BinOp::Mul => {
                        e(reg_op(op, rd, ra)?)
                    }
                    // rd = ra - rd = -rd + ra
                    BinOp::Sub => {
                        e(Insn::Neg { rd });
                        e(Insn::Add { rd, rs: ra });
                    }
                    BinOp::Shl | BinOp::Shr => return reg_op(op, rd, rb).map(|_| ()),
                }
            } else {
                let i = reg_op(op, rd, rb)?;
                e(Insn::MovReg { rd, rs: ra });
                e(i);
            }
        }
        Operand2::Imm(v) => {
            let imm = v as i64 as i32;
            let small = fits_i32(v);
            let i = match op {
                BinOp::Shl | BinOp::Shr if v >= 64 => {
                    return Err(LowerError(format!("shift by {v}")));
                }
                BinOp::Shl | BinOp::Shr if v == 0 => None,
                BinOp::Mul if v == 1 => None,
                BinOp::Shl => Some(Insn::ShlImm { rd, sh: v as u8 }),
                BinOp::Shr => Some(Insn::ShrImm { rd, sh: v as u8 }),
                BinOp::And if small => Some(Insn::AndImm { rd, imm }),
                BinOp::Or if small => Some(Insn::OrImm { rd, imm }),
                BinOp::Add if small => Some(Insn::AddImm { rd, imm }),
                BinOp::Sub if small => Some(Insn::SubImm { rd, imm }),
                BinOp::Xor if v == u64::MAX => Some(Insn::Not { rd }),
                BinOp::Mul if v.is_power_of_two() => Some(Insn::ShlImm {
                    rd,
                    sh: v.trailing_zeros() as u8,
                }),
                // No imm form in the encoder (xor, imul) or the value
                // does not fit a sign-extended imm32.
                _ => {
                    e(Insn::MovImm {
                        rd: SCRATCH,
                        imm: v,
                    });
                    let i = reg_op(op, rd, SCRATCH)?;
                    mov(rd, ra, e);
                    e(i);
                    return Ok(());
                }
            };
            mov(rd, ra, e);
            if let Some(i) = i {
                e(i);
            }
        }
    }
    Ok(())
}

/// `rd = ra << (rn mod 64)` (or `>>`): x86 takes a variable count only in
/// cl. The LIR fixes amounts of 64 and more up afterwards, so the
/// hardware's modulo 64 is what it expects. rcx may hold another value:
/// it is parked in the scratch register around the shift when anything
/// lives there, and `rd`, `ra` or `rn` may each be rcx.
fn shift_by_reg(shl: bool, rd: Reg, ra: Reg, rn: Reg, rcx_live: bool, e: &mut dyn FnMut(Insn)) {
    let sh = |rd| {
        if shl {
            Insn::ShlCl { rd }
        } else {
            Insn::ShrCl { rd }
        }
    };
    match (rd == RCX, rn == RCX) {
        // The amount is in place; the result may not overwrite it before
        // the shift.
        (false, true) => {
            mov(rd, ra, e);
            e(sh(rd));
        }
        // rcx is overwritten by the result: shift in the scratch register.
        (true, _) => {
            mov(SCRATCH, ra, e);
            mov(RCX, rn, e);
            e(sh(SCRATCH));
            e(Insn::MovReg {
                rd: RCX,
                rs: SCRATCH,
            });
        }
        (false, false) if !rcx_live => {
            e(Insn::MovReg { rd: RCX, rs: rn });
            mov(rd, ra, e);
            e(sh(rd));
        }
        (false, false) => {
            e(Insn::MovReg {
                rd: SCRATCH,
                rs: RCX,
            });
            e(Insn::MovReg { rd: RCX, rs: rn });
            // ra's value, if it was rcx's, is now in the scratch register.
            mov(rd, if ra == RCX { SCRATCH } else { ra }, e);
            e(sh(rd));
            e(Insn::MovReg {
                rd: RCX,
                rs: SCRATCH,
            });
        }
    }
}

/// Bit counts without BMI/ABM/POPCNT (the kernel's x86-64 baseline):
/// `bsr`/`bsf` leave the destination undefined for 0 and set ZF, so the
/// value for 0 comes from the scratch register by `cmove`. clz is
/// `63 - bsr`, computed as `bsr ^ 63` (as compilers do), with 127 for 0
/// so that 127 ^ 63 = 64. Popcount is [`hweight::HWEIGHT64`].
fn un(op: UnOp, rd: Reg, rs: Reg, e: &mut dyn FnMut(Insn)) {
    match op {
        UnOp::Clz => {
            e(Insn::MovImm {
                rd: SCRATCH,
                imm: 127,
            });
            e(Insn::Bsr { rd, rs });
            e(Insn::Cmove { rd, rs: SCRATCH });
            e(Insn::XorImm { rd, imm: 63 });
        }
        UnOp::Ctz => {
            e(Insn::MovImm {
                rd: SCRATCH,
                imm: 64,
            });
            e(Insn::Bsf { rd, rs });
            e(Insn::Cmove { rd, rs: SCRATCH });
        }
        UnOp::Popcount => {
            mov(rd, rs, e);
            let reg = |l: Loc| match l {
                Loc::D => rd,
                Loc::S => SCRATCH,
            };
            for step in hweight::HWEIGHT64 {
                match step {
                    // The constant goes into the scratch register first.
                    Step::And { dst, k } => {
                        e(Insn::MovImm {
                            rd: SCRATCH,
                            imm: k,
                        });
                        match dst {
                            Loc::S => e(Insn::And {
                                rd: SCRATCH,
                                rs: rd,
                            }),
                            Loc::D => e(Insn::And { rd, rs: SCRATCH }),
                        }
                    }
                    Step::Shr { dst, src, n } => {
                        mov(reg(dst), reg(src), e);
                        e(Insn::ShrImm {
                            rd: reg(dst),
                            sh: n,
                        });
                    }
                    Step::Sub => e(Insn::Sub { rd, rs: SCRATCH }),
                    Step::Add => e(Insn::Add { rd, rs: SCRATCH }),
                    Step::Mul(k) => {
                        e(Insn::MovImm {
                            rd: SCRATCH,
                            imm: k,
                        });
                        e(Insn::Imul { rd, rs: SCRATCH });
                    }
                }
            }
        }
    }
}

fn size(width: u32) -> Result<Size, LowerError> {
    Ok(match width {
        8 => Size::B,
        16 => Size::W,
        32 => Size::D,
        64 => Size::Q,
        w => return Err(LowerError(format!("access width {w}"))),
    })
}

fn byte_swap(rd: Reg, sz: Size, e: &mut dyn FnMut(Insn)) {
    match sz {
        Size::B => {}
        Size::W => e(Insn::Rol16 { rd }),
        Size::D | Size::Q => e(Insn::Bswap { size: sz, rd }),
    }
}

/// `(index, disp)` for `offset(base)`: disp32 when the offset fits, else
/// the offset in the scratch register as an index.
fn address(offset: u64, e: &mut dyn FnMut(Insn)) -> (Option<(Reg, u8)>, i32) {
    if fits_i32(offset) {
        (None, offset as i64 as i32)
    } else {
        e(Insn::MovImm {
            rd: SCRATCH,
            imm: offset,
        });
        (Some((SCRATCH, 1)), 0)
    }
}

/// Loads zero-extend (movzbl/movzwl, 32-bit mov); a swapped load reverses
/// the bytes in place afterwards (`rol $8` keeps the upper bits zero).
fn load(
    rd: Reg,
    base: Reg,
    offset: u64,
    width: u32,
    swap: bool,
    e: &mut dyn FnMut(Insn),
) -> Result<(), LowerError> {
    let sz = size(width)?;
    let (index, disp) = address(offset, e);
    e(Insn::Load {
        size: sz,
        rd,
        base,
        index,
        disp,
    });
    if swap {
        byte_swap(rd, sz, e);
    }
    Ok(())
}

/// A swapped store reverses a copy in the scratch register; the source
/// value stays intact for later uses.
fn store(
    src: Reg,
    base: Reg,
    offset: u64,
    width: u32,
    swap: bool,
    e: &mut dyn FnMut(Insn),
) -> Result<(), LowerError> {
    let sz = size(width)?;
    let swap = swap && sz != Size::B;
    if swap && !fits_i32(offset) {
        // The scratch register holds the swapped copy, so the offset
        // cannot go there: step the base up by two imm32 adds, store with
        // the remaining disp32, step it back (offsets are below 4 GiB).
        const STEP: i32 = 0x7fff_f000;
        e(Insn::MovReg {
            rd: SCRATCH,
            rs: src,
        });
        byte_swap(SCRATCH, sz, e);
        let mut steps = 0;
        while !fits_i32(offset.wrapping_sub(steps * STEP as u64)) && steps < 4 {
            e(Insn::AddImm {
                rd: base,
                imm: STEP,
            });
            steps += 1;
        }
        let disp = i32::try_from(offset as i64 - steps as i64 * i64::from(STEP))
            .map_err(|_| LowerError(format!("register offset {offset:#x} beyond 8 GiB")))?;
        e(Insn::Store {
            size: sz,
            base,
            index: None,
            disp,
            src: SCRATCH,
        });
        for _ in 0..steps {
            e(Insn::AddImm {
                rd: base,
                imm: -STEP,
            });
        }
        return Ok(());
    }
    let src = if swap {
        e(Insn::MovReg {
            rd: SCRATCH,
            rs: src,
        });
        byte_swap(SCRATCH, sz, e);
        SCRATCH
    } else {
        src
    };
    let (index, disp) = address(offset, e);
    e(Insn::Store {
        size: sz,
        base,
        index,
        disp,
        src,
    });
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A tiny interpreter for the register-only instructions the lowering
    /// emits (encodings are checked against GNU as elsewhere, values end
    /// to end in the native harness).
    fn run(seq: &[Insn], regs: &mut [u64; 16]) {
        // ZF as the bit scans leave it (nothing else here reads flags).
        let mut zf = false;
        for i in seq {
            match *i {
                // The destination is undefined for 0: poison it.
                Insn::Bsr { rd, rs } | Insn::Bsf { rd, rs } => {
                    let x = regs[rs as usize];
                    zf = x == 0;
                    regs[rd as usize] = match (x, i) {
                        (0, _) => 0xdead_beef_dead_beef,
                        (_, Insn::Bsr { .. }) => 63 - u64::from(x.leading_zeros()),
                        _ => u64::from(x.trailing_zeros()),
                    };
                }
                Insn::Cmove { rd, rs } => {
                    if zf {
                        regs[rd as usize] = regs[rs as usize]
                    }
                }
                Insn::XorImm { rd, imm } => regs[rd as usize] ^= imm as i64 as u64,
                Insn::ShlCl { rd } => regs[rd as usize] <<= regs[RCX as usize] & 63,
                Insn::ShrCl { rd } => regs[rd as usize] >>= regs[RCX as usize] & 63,
                Insn::MovImm { rd, imm } => regs[rd as usize] = imm,
                Insn::MovReg { rd, rs } => regs[rd as usize] = regs[rs as usize],
                Insn::And { rd, rs } => regs[rd as usize] &= regs[rs as usize],
                Insn::Or { rd, rs } => regs[rd as usize] |= regs[rs as usize],
                Insn::Xor { rd, rs } => regs[rd as usize] ^= regs[rs as usize],
                Insn::Add { rd, rs } => {
                    regs[rd as usize] = regs[rd as usize].wrapping_add(regs[rs as usize])
                }
                Insn::Sub { rd, rs } => {
                    regs[rd as usize] = regs[rd as usize].wrapping_sub(regs[rs as usize])
                }
                Insn::Imul { rd, rs } => {
                    regs[rd as usize] = regs[rd as usize].wrapping_mul(regs[rs as usize])
                }
                Insn::AndImm { rd, imm } => regs[rd as usize] &= imm as i64 as u64,
                Insn::OrImm { rd, imm } => regs[rd as usize] |= imm as i64 as u64,
                Insn::AddImm { rd, imm } => {
                    regs[rd as usize] = regs[rd as usize].wrapping_add(imm as i64 as u64)
                }
                Insn::SubImm { rd, imm } => {
                    regs[rd as usize] = regs[rd as usize].wrapping_sub(imm as i64 as u64)
                }
                Insn::ShlImm { rd, sh } => regs[rd as usize] <<= sh,
                Insn::ShrImm { rd, sh } => regs[rd as usize] >>= sh,
                Insn::Not { rd } => regs[rd as usize] = !regs[rd as usize],
                Insn::Neg { rd } => regs[rd as usize] = regs[rd as usize].wrapping_neg(),
                ref other => panic!("unexpected {other:?}"),
            }
        }
    }

    fn reference(op: BinOp, a: u64, b: u64) -> u64 {
        match op {
            BinOp::And => a & b,
            BinOp::Or => a | b,
            BinOp::Xor => a ^ b,
            BinOp::Add => a.wrapping_add(b),
            BinOp::Sub => a.wrapping_sub(b),
            BinOp::Mul => a.wrapping_mul(b),
            BinOp::Shl => a << b,
            BinOp::Shr => a >> b,
        }
    }

    const OPS: [BinOp; 8] = [
        BinOp::And,
        BinOp::Or,
        BinOp::Xor,
        BinOp::Add,
        BinOp::Sub,
        BinOp::Mul,
        BinOp::Shl,
        BinOp::Shr,
    ];

    /// Byte-swapped stores past disp32 (offsets 2 GiB..4 GiB): the right
    /// address and bytes, the source and the base intact afterwards.
    #[test]
    fn swapped_stores_beyond_disp32() {
        let (base, src) = (7u8, 6u8);
        for offset in [
            0x8000_0000u64,
            0x8000_0008,
            0xffff_fff8,
            0x1_0000_0000,
            0x7fff_fff8,
        ] {
            for (width, want) in [
                (64, 0x0807_0605_0403_0201u64),
                (32, 0x0807_0605),
                (16, 0x0807),
            ] {
                let mut seq = Vec::new();
                store(src, base, offset, width, true, &mut |i| seq.push(i)).unwrap();
                let mut regs = [0u64; 16];
                regs[base as usize] = 0x7f00_0000_0000;
                regs[src as usize] = 0x0102_0304_0506_0708;
                let mut stored = Vec::new();
                for i in &seq {
                    match *i {
                        Insn::Store {
                            base: b,
                            index,
                            disp,
                            src: s,
                            ..
                        } => {
                            let idx = index.map_or(0, |(r, k)| regs[r as usize] * k as u64);
                            let addr = regs[b as usize]
                                .wrapping_add(idx)
                                .wrapping_add(disp as i64 as u64);
                            stored.push((addr, regs[s as usize] & (u64::MAX >> (64 - width))));
                        }
                        Insn::Bswap { size: Size::Q, rd } => {
                            regs[rd as usize] = regs[rd as usize].swap_bytes()
                        }
                        Insn::Bswap { size: Size::D, rd } => {
                            regs[rd as usize] = (regs[rd as usize] as u32).swap_bytes() as u64
                        }
                        Insn::Rol16 { rd } => {
                            let v = regs[rd as usize];
                            regs[rd as usize] = (v & !0xffff) | ((v as u16).rotate_left(8) as u64)
                        }
                        ref other => run(std::slice::from_ref(other), &mut regs),
                    }
                }
                assert_eq!(
                    stored,
                    [(0x7f00_0000_0000 + offset, want)],
                    "{offset:#x} u{width}: {seq:?}"
                );
                assert_eq!(regs[base as usize], 0x7f00_0000_0000, "base moved: {seq:?}");
                assert_eq!(regs[src as usize], 0x0102_0304_0506_0708);
            }
        }
    }

    #[test]
    fn two_address_bin_handles_every_aliasing() {
        let (a, b) = (0x1234_5678_9abc_def0u64, 0x0fed_cba9_8765_4321u64);
        for op in OPS {
            if matches!(op, BinOp::Shl | BinOp::Shr) {
                continue;
            }
            // (rd, ra, rb): distinct, rd==ra, rd==rb, ra==rb, all equal.
            for (rd, ra, rb) in [(0, 1, 2), (1, 1, 2), (2, 1, 2), (0, 1, 1), (1, 1, 1)] {
                let mut regs = [0u64; 16];
                regs[ra as usize] = a;
                regs[rb as usize] = b;
                let want = reference(op, regs[ra as usize], regs[rb as usize]);
                let mut seq = Vec::new();
                bin(op, rd, ra, Operand2::Reg(rb), true, &mut |i| seq.push(i)).unwrap();
                run(&seq, &mut regs);
                assert_eq!(regs[rd as usize], want, "{op:?} {rd},{ra},{rb}: {seq:?}");
                if rb != rd {
                    assert_eq!(regs[rb as usize], b, "{op:?} clobbered b: {seq:?}");
                }
            }
        }
    }

    /// Every way rd, ra and the amount can share registers, rcx among
    /// them or not, with and without a value living in rcx.
    #[test]
    fn shift_by_register_handles_rcx_in_every_role() {
        let (a, n, other) = (0x8123_4567_89ab_cdefu64, 0x47u64, 0x5a5a_0000_1111_2222u64);
        for shl in [true, false] {
            let op = if shl { BinOp::Shl } else { BinOp::Shr };
            let cands = [RCX, RAX, RDX, RSI];
            for rd in cands {
                for ra in cands {
                    for rn in cands {
                        for rcx_live in [true, false] {
                            if !rcx_live && (ra == RCX || rn == RCX) {
                                continue;
                            }
                            let mut regs = [0u64; 16];
                            regs[RCX as usize] = other;
                            regs[rn as usize] = n;
                            regs[ra as usize] = a;
                            let (va, vn) = (regs[ra as usize], regs[rn as usize]);
                            let mut seq = Vec::new();
                            bin(op, rd, ra, Operand2::Reg(rn), rcx_live, &mut |i| {
                                seq.push(i)
                            })
                            .unwrap();
                            run(&seq, &mut regs);
                            let ctx = format!("{op:?} rd={rd} ra={ra} rn={rn} live={rcx_live}");
                            assert_eq!(
                                regs[rd as usize],
                                reference(op, va, vn & 63),
                                "{ctx}: {seq:?}"
                            );
                            for (r, v) in [(ra, va), (rn, vn)] {
                                if r != rd {
                                    assert_eq!(regs[r as usize], v, "{ctx} clobbered: {seq:?}");
                                }
                            }
                            let rcx_before = match (ra == RCX, rn == RCX) {
                                (true, _) => va,
                                (_, true) => vn,
                                _ => other,
                            };
                            if rcx_live && rd != RCX {
                                assert_eq!(
                                    regs[RCX as usize], rcx_before,
                                    "{ctx}: rcx not restored: {seq:?}"
                                );
                            }
                            for &r in &[3u8, 5, 12, 13, 14, 15] {
                                assert_eq!(regs[r as usize], 0, "{ctx}: touched {r}");
                            }
                            assert!(seq.len() <= 5, "{ctx}: {seq:?}");
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn bit_counts_match_their_definitions() {
        let mut x = 0x2545_f491_4f6c_dd1du64;
        let mut vals = vec![0, 1, 2, 3, 1 << 63, (1 << 63) + 1, (1 << 63) - 1, u64::MAX];
        for _ in 0..2000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            vals.extend([x, x >> (x % 64), x << (x % 61)]);
        }
        for op in [UnOp::Clz, UnOp::Ctz, UnOp::Popcount] {
            for (rd, rs) in [(RAX, RDX), (RDX, RDX), (R10, RCX)] {
                let mut seq = Vec::new();
                un(op, rd, rs, &mut |i| seq.push(i));
                super::super::insn::assemble(&seq, &|l| l.to_string()).unwrap();
                for &v in &vals {
                    let mut regs = [0u64; 16];
                    regs[rs as usize] = v;
                    run(&seq, &mut regs);
                    assert_eq!(regs[rd as usize], op.apply(v), "{op:?} {v:#x}: {seq:?}");
                    if rd != rs {
                        assert_eq!(regs[rs as usize], v, "{op:?} clobbered the source");
                    }
                    for r in 0..16u8 {
                        if ![rd, rs, SCRATCH].contains(&r) {
                            assert_eq!(regs[r as usize], 0, "{op:?} touched {r}");
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn bin_immediates() {
        let a = 0x8123_4567_89ab_cdefu64;
        let imms = [
            0u64,
            1,
            8,
            63,
            0x7f,
            0x80,
            0x7fff_ffff,
            0x8000_0000,
            0xffff_ffff,
            u64::MAX,
            (-128i64) as u64,
            (i32::MIN as i64) as u64,
            0x0005_4000_0000_0000,
            1 << 40,
        ];
        for op in OPS {
            for &v in &imms {
                if matches!(op, BinOp::Shl | BinOp::Shr) && v >= 64 {
                    continue;
                }
                for (rd, ra) in [(0u8, 1u8), (1, 1)] {
                    let mut regs = [0u64; 16];
                    regs[ra as usize] = a;
                    let mut seq = Vec::new();
                    bin(op, rd, ra, Operand2::Imm(v), true, &mut |i| seq.push(i)).unwrap();
                    run(&seq, &mut regs);
                    assert_eq!(
                        regs[rd as usize],
                        reference(op, a, v),
                        "{op:?} {v:#x}: {seq:?}"
                    );
                    for i in &seq {
                        if let Insn::AndImm { imm, .. }
                        | Insn::OrImm { imm, .. }
                        | Insn::AddImm { imm, .. }
                        | Insn::SubImm { imm, .. } = i
                        {
                            assert_eq!(*imm as i64 as u64, v);
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn insert_matches_its_definition() {
        let x = 0xdead_beef_cafe_f00du64;
        for width in 1..=64u32 {
            for shift in 0..64u32 {
                for (rd, rs) in [(0u8, 1u8), (1, 1)] {
                    let mut regs = [0u64; 16];
                    regs[rs as usize] = x;
                    let mut seq = Vec::new();
                    insert(rd, rs, shift, width, &mut |i| seq.push(i)).unwrap();
                    run(&seq, &mut regs);
                    let mask = if width >= 64 {
                        u64::MAX
                    } else {
                        (1 << width) - 1
                    };
                    assert_eq!(
                        regs[rd as usize],
                        (x & mask) << shift,
                        "shift {shift} width {width}: {seq:?}"
                    );
                    assert!(seq.len() <= 3, "{seq:?}");
                    assert!(!seq.iter().any(|i| matches!(i, Insn::MovImm { rd: 11, .. })));
                }
            }
        }
    }

    #[test]
    fn swapped_store_keeps_the_source() {
        let mut seq = Vec::new();
        store(RSI, RDI, 8, 64, true, &mut |i| seq.push(i)).unwrap();
        assert_eq!(
            seq,
            vec![
                Insn::MovReg {
                    rd: SCRATCH,
                    rs: RSI
                },
                Insn::Bswap {
                    size: Size::Q,
                    rd: SCRATCH
                },
                Insn::Store {
                    size: Size::Q,
                    base: RDI,
                    index: None,
                    disp: 8,
                    src: SCRATCH
                },
            ]
        );
    }

    #[test]
    fn test_is_left_out_only_after_a_flag_setting_op_on_the_same_register() {
        use crate::lir::VReg;
        let (n, m) = (VReg(0), VReg(1));
        let alloc = Allocation {
            reg: [(n, R8), (m, R9)].into_iter().collect(),
        };
        let lower_of = |insts: Vec<Inst>| {
            let f = Func {
                name: "t".into(),
                args: vec![],
                insts: insts.into_iter().map(|i| (i, Origin::default())).collect(),
                nvregs: 2,
                nlabels: 1,
            };
            lower(&f, &alloc)
                .unwrap()
                .insns
                .into_iter()
                .map(|(i, _)| i)
                .collect::<Vec<_>>()
        };
        let dec = |v| Inst::Bin {
            op: BinOp::Sub,
            dst: v,
            a: v,
            b: Operand::Imm(1),
        };
        let br = |cmp, v| Inst::Branch {
            cmp,
            a: v,
            b: Operand::Imm(0),
            target: 0,
        };
        let has_test = |v: &[Insn]| v.iter().any(|i| matches!(i, Insn::Test { .. }));
        let l = Inst::Label(0);
        assert!(!has_test(&lower_of(vec![
            l.clone(),
            dec(n),
            br(Cmp::Ne, n)
        ])));
        assert!(has_test(&lower_of(vec![l.clone(), dec(m), br(Cmp::Ne, n)])));
        assert!(has_test(&lower_of(vec![dec(n), l.clone(), br(Cmp::Ne, n)])));
        assert!(has_test(&lower_of(vec![l, dec(n), br(Cmp::Ltu, n)])));
    }

    #[test]
    fn pool_is_caller_saved_and_avoids_the_scratch() {
        for &p in REGS.pool.iter().chain(REGS.args) {
            assert!(![3, 4, 5, 11, 12, 13, 14, 15].contains(&p), "{p}");
        }
    }
}
