//! LIR -> RV64 instructions (RV64GC without compressed forms, LP64).
//!
//! ABI (RISC-V psABI, "Integer Calling Convention"): arguments in a0..a7,
//! result in a0, t0..t6 and a0..a7 caller-saved, s0..s11 callee-saved. We
//! allocate t0..t4 and the argument registers; when they run out s1..s11,
//! stored below the caller's sp at entry (sp moved down 16-byte aligned)
//! and reloaded before every return. s0 (frame pointer), ra, gp and tp are
//! never touched. Arguments past a7 are read from the caller's stack,
//! `0(sp)`, `8(sp)`... (plus that frame), where they are used. t5 and t6
//! are this lowering's scratch registers.

use super::insn::{AluOp, BrCond, Imm12, Imm20, ImmOp, Insn, Label, Reg, Shamt, ShiftOp, Width};
use super::mem::memory;
use crate::ir::expr::BinOp;
use crate::ir::isa::InvalidationError;
use crate::isa::hweight::{self, Step};
use crate::isa::invalidation::Invalidation;
use crate::isa::lower_common::{hweight_regs, unpatched, Src};
use crate::isa::scaffold;
use crate::lir::regalloc::{Allocation, RegFile};
use crate::lir::role::Role;
use crate::lir::{Cmp, Func, Inst, Operand, Origin, UnOp, VReg};

pub const REGS: RegFile = RegFile {
    args: &[10, 11, 12, 13, 14, 15, 16, 17],
    pool: &[5, 6, 7, 28, 17, 16, 15, 14, 13, 12, 11, 10],
    callee_saved: &[9, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27],
    reserve: None,
};

/// t6: materialised immediates, byte-reversed data, popcount's second
/// register, the store-conditional status.
pub(super) const SCRATCH: Reg = Reg::of(31);
/// t5: addresses whose offset does not fit 12 bits, 64-bit masks, the
/// byte reversal's temporary.
pub(super) const SCRATCH2: Reg = Reg::of(30);
/// t4: a byte or halfword lock's bit offset in its word, from the
/// load-reserve to the store-conditional (see
/// [`super::mem`]'s `reserve_sub_word`).
pub(super) const SCRATCH3: Reg = Reg::of(29);

pub struct Lowered {
    pub insns: Vec<(Insn, Origin)>,
}

pub use crate::isa::error::LowerError;

pub(super) type Emit<'a> = &'a mut dyn FnMut(Insn);

/// The allocated register of `v`; a register the allocator never saw is
/// an error, not x0.
pub(super) fn reg_of(alloc: &Allocation, v: VReg) -> Result<Reg, LowerError> {
    let n = alloc.reg(v)?;
    Reg::new(n).ok_or_else(|| LowerError::Internal(format!("register {n} is not one of x0..x31")))
}

fn imm12(v: i64) -> Imm12 {
    Imm12::maybe_from(v).expect("checked by the caller")
}

fn sh(n: u32) -> Shamt {
    Shamt::maybe_from(u64::from(n)).expect("shift below 64")
}

pub(super) fn alu_imm(op: ImmOp, rd: Reg, rs1: Reg, v: i64) -> Insn {
    Insn::AluImm {
        op,
        rd,
        rs1,
        imm: imm12(v),
    }
}

pub(super) fn shift(op: ShiftOp, rd: Reg, rs1: Reg, n: u32) -> Insn {
    Insn::Shift {
        op,
        rd,
        rs1,
        sh: sh(n),
    }
}

pub(super) fn alu(op: AluOp, rd: Reg, rs1: Reg, rs2: Reg) -> Insn {
    Insn::Alu { op, rd, rs1, rs2 }
}

pub(super) fn mov(rd: Reg, rs: Reg, e: Emit) {
    if rd != rs {
        e(Insn::Mv { rd, rs });
    }
}

/// A 64-bit constant in one register: `addi` for 12 bits, `lui` +
/// `addiw` for 32, else the constant without its low 12 bits (shifted
/// down past its trailing zeros), built the same way, then `slli` and
/// `addi` (the shape of GNU as's and LLVM's `li` expansion).
pub fn li(rd: Reg, value: u64, e: Emit) {
    let v = value as i64;
    if Imm12::maybe_from(v).is_some() {
        e(alu_imm(ImmOp::Addi, rd, Reg::ZERO, v));
        return;
    }
    let lo = (v << 52) >> 52;
    if i32::try_from(v).is_ok() {
        let hi = (v.wrapping_sub(lo) >> 12) << 44 >> 44;
        let imm = Imm20::maybe_from(hi).expect("20 bits");
        e(Insn::Lui { rd, imm });
        if lo != 0 {
            e(alu_imm(ImmOp::Addiw, rd, rd, lo));
        }
        return;
    }
    let hi = v.wrapping_sub(lo) >> 12;
    let tz = hi.trailing_zeros();
    li(rd, (hi >> tz) as u64, e);
    e(shift(ShiftOp::Slli, rd, rd, 12 + tz));
    if lo != 0 {
        e(alu_imm(ImmOp::Addi, rd, rd, lo));
    }
}

pub fn lower(f: &Func, alloc: &Allocation) -> Result<Lowered, LowerError> {
    let mut out = Vec::new();
    let saved: Vec<Reg> = alloc
        .used_callee_saved(&REGS)
        .into_iter()
        .filter_map(Reg::new)
        .collect();
    // Spill slots at the top of the frame, above the saved registers.
    let frame = scaffold::frame_size(saved.len() + f.spill_slots() as usize);
    if frame > 2032 {
        return Err(LowerError::OutOfReach(format!(
            "a frame of {frame} bytes (one `addi sp` moves at most 2032)"
        )));
    }
    let save = |load: bool, e: Emit| {
        if frame == 0 {
            return;
        }
        if !load {
            e(alu_imm(ImmOp::Addi, Reg::SP, Reg::SP, -i64::from(frame)));
        }
        for (i, &r) in saved.iter().enumerate() {
            let off = imm12(8 * i as i64);
            e(if load {
                Insn::Load {
                    w: Width::D,
                    rd: r,
                    base: Reg::SP,
                    off,
                }
            } else {
                Insn::Store {
                    w: Width::D,
                    src: r,
                    base: Reg::SP,
                    off,
                }
            });
        }
        if load {
            e(alu_imm(ImmOp::Addi, Reg::SP, Reg::SP, i64::from(frame)));
        }
    };
    if let Some((_, origin)) = f.insts.first() {
        save(false, &mut |i| out.push((i, origin.clone())));
    }
    // Inside a byte/halfword reservation, t4 and t5 carry its word.
    let mut sub_word = false;
    for (inst, origin) in &f.insts {
        let first = out.len();
        let mut e = |i: Insn| out.push((i, origin.clone()));
        match inst {
            Inst::LoadReserve { width, .. } => sub_word = *width < 32,
            Inst::StoreCond { .. } => sub_word = false,
            _ if sub_word => {
                one(inst, alloc, frame, &mut e)?;
                if let Some((i, _)) = out[first..]
                    .iter()
                    .find(|(i, _)| matches!(i.writes(), Some(SCRATCH2 | SCRATCH3)))
                {
                    return Err(LowerError::Internal(format!(
                        "`{}` inside a byte/halfword reservation needs t4/t5",
                        i.text(&|l| l.to_string())
                    )));
                }
                continue;
            }
            _ => {}
        }
        if let Inst::Ret { value } = inst {
            match value {
                _ if f.void => {}
                Operand::Imm(v) => li(Reg::A0, *v, &mut e),
                Operand::Reg(v) => mov(Reg::A0, reg_of(alloc, *v)?, &mut e),
            }
            save(true, &mut e);
            e(Insn::Ret);
            continue;
        }
        one(inst, alloc, frame, &mut e)?;
    }
    Ok(Lowered { insns: out })
}

/// The right operand of a comparison in a register: x0 for 0, a
/// constant in the scratch register.
fn compared(b: &Operand, alloc: &Allocation, e: Emit) -> Result<Reg, LowerError> {
    Ok(match b {
        Operand::Imm(0) => Reg::ZERO,
        Operand::Imm(v) => {
            li(SCRATCH, *v, e);
            SCRATCH
        }
        Operand::Reg(v) => reg_of(alloc, *v)?,
    })
}

/// Every instruction but `Ret` (which restores the frame).
fn one(inst: &Inst, alloc: &Allocation, frame: u32, e: Emit) -> Result<(), LowerError> {
    let r = |v: VReg| reg_of(alloc, v);
    match inst.role() {
        Role::Memory => return memory(inst, alloc, frame, e),
        Role::Control => return control(inst, alloc, e),
        Role::Compute => {}
    }
    match inst {
        Inst::Imm { dst, value } => li(r(*dst)?, *value, e),
        Inst::Copy { dst, src } => mov(r(*dst)?, r(*src)?, e),
        Inst::Not { dst, src } => e(alu_imm(ImmOp::Xori, r(*dst)?, r(*src)?, -1)),
        Inst::Un { op, dst, src } => un(*op, r(*dst)?, r(*src)?, e),
        Inst::Insert {
            dst,
            src,
            shift: s,
            width,
        } => insert(r(*dst)?, r(*src)?, *s, *width, e),
        Inst::Bin { op, dst, a, b } => bin(*op, r(*dst)?, r(*a)?, Src::of(b, r)?, e)?,
        Inst::Barrier { name } => name.lower(e),
        Inst::Invalidate { name, operands } => {
            let ops = operands
                .iter()
                .map(|v| r(*v))
                .collect::<Result<Vec<_>, _>>()?;
            e(invalidate(*name.op(), &ops))
        }
        Inst::SpinHint => {}
        Inst::Sys { .. } => {
            return Err(LowerError::Internal(
                "a Book III-E system instruction reached a target the check refuses it on".into(),
            ))
        }
        // No flags: `sltu` for an unsigned order, `xor` then `sltu` from
        // x0 (`snez`) for (in)equality, `xori 1` for the negations.
        Inst::SetCmp { cmp, dst, a, b } => {
            let (rd, ra) = (r(*dst)?, r(*a)?);
            let rb = compared(b, alloc, e)?;
            match cmp {
                Cmp::Ltu | Cmp::Geu => e(alu(AluOp::Sltu, rd, ra, rb)),
                Cmp::Eq | Cmp::Ne => {
                    let diff = if rb == Reg::ZERO {
                        ra
                    } else {
                        e(alu(AluOp::Xor, rd, ra, rb));
                        rd
                    };
                    e(alu(AluOp::Sltu, rd, Reg::ZERO, diff));
                }
            }
            if matches!(cmp, Cmp::Geu | Cmp::Eq) {
                e(alu_imm(ImmOp::Xori, rd, rd, 1));
            }
        }
        // Memory and control instructions went to their own lowering above.
        _ => return Err(LowerError::Internal("not a compute instruction".into())),
    }
    Ok(())
}

/// What a spec with a capability can do instead on riscv64.
const NOT_PATCHED: &str = "riscv64 code is not patched at boot for kernel capabilities; \
                           test the feature at run time (a feature without `= CAPABILITY`)";

/// Labels, jumps, branches (`Ret` restores the frame: `lower` lowers it).
fn control(inst: &Inst, alloc: &Allocation, e: Emit) -> Result<(), LowerError> {
    let r = |v: VReg| reg_of(alloc, v);
    match inst {
        Inst::Label(l) => e(Insn::Label(*l)),
        Inst::Jump(l) => e(Insn::J { target: *l }),
        Inst::FeatureJump { cap, .. } => return Err(unpatched(cap, NOT_PATCHED)),
        Inst::Branch { cmp, a, b, target } => {
            let rs2 = compared(b, alloc, e)?;
            let cond = match cmp {
                Cmp::Eq => BrCond::Eq,
                Cmp::Ne => BrCond::Ne,
                Cmp::Ltu => BrCond::Ltu,
                Cmp::Geu => BrCond::Geu,
            };
            e(Insn::Branch {
                cond,
                rs1: r(*a)?,
                rs2,
                target: *target,
            });
        }
        Inst::BranchBit {
            a,
            bit,
            set,
            target,
        } => branch_bit(r(*a)?, *bit, *set, *target, e),
        // No flags: the comparison with the old value goes to a scratch
        // register first.
        Inst::SubBranchAbove { a, b, target } => {
            let (a, b) = (r(*a)?, r(*b)?);
            e(alu(AluOp::Sltu, SCRATCH, b, a));
            e(alu(AluOp::Sub, a, a, b));
            e(Insn::Branch {
                cond: BrCond::Ne,
                rs1: SCRATCH,
                rs2: Reg::ZERO,
                target: *target,
            });
        }
        Inst::Ret { .. } => return Err(LowerError::Internal("`Ret` is lowered by `lower`".into())),
        _ => return Err(LowerError::Internal("not a control instruction".into())),
    }
    Ok(())
}

/// `(src & mask(width)) << shift` with two shifts: the field to the top,
/// then down to its place.
fn insert(rd: Reg, rs: Reg, s: u32, width: u32, e: Emit) {
    if s >= 64 || width == 0 {
        li(rd, 0, e);
    } else if s + width >= 64 {
        if s == 0 {
            mov(rd, rs, e);
        } else {
            e(shift(ShiftOp::Slli, rd, rs, s));
        }
    } else {
        e(shift(ShiftOp::Slli, rd, rs, 64 - width));
        e(shift(ShiftOp::Srli, rd, rd, 64 - width - s));
    }
}

/// Bit counts without Zbb: everything becomes a population count
/// ([`hweight::HWEIGHT64`]). clz(x) = popcount(!smear(x)), where smear
/// sets every bit below the highest set one; ctz(x) = popcount(!x &
/// (x - 1)), the bits below the lowest set one. Both give 64 for 0.
fn un(op: UnOp, rd: Reg, rs: Reg, e: Emit) {
    match op {
        UnOp::Clz => {
            mov(rd, rs, e);
            for s in [1, 2, 4, 8, 16, 32] {
                e(shift(ShiftOp::Srli, SCRATCH, rd, s));
                e(alu(AluOp::Or, rd, rd, SCRATCH));
            }
            e(alu_imm(ImmOp::Xori, rd, rd, -1));
        }
        UnOp::Ctz => {
            e(alu_imm(ImmOp::Addi, SCRATCH, rs, -1));
            e(alu_imm(ImmOp::Xori, rd, rs, -1));
            e(alu(AluOp::And, rd, rd, SCRATCH));
        }
        UnOp::Popcount => mov(rd, rs, e),
    }
    popcount(rd, e);
}

fn popcount(rd: Reg, e: Emit) {
    let reg = hweight_regs(rd, SCRATCH);
    for step in hweight::HWEIGHT64 {
        match step {
            Step::And { dst, k } => {
                li(SCRATCH2, k, e);
                e(alu(AluOp::And, reg(dst), rd, SCRATCH2));
            }
            Step::Shr { dst, src, n } => e(shift(ShiftOp::Srli, reg(dst), reg(src), n.into())),
            Step::Sub => e(alu(AluOp::Sub, rd, rd, SCRATCH)),
            Step::Add => e(alu(AluOp::Add, rd, rd, SCRATCH)),
            Step::Mul(k) => {
                li(SCRATCH, k, e);
                e(alu(AluOp::Mul, rd, rd, SCRATCH));
            }
        }
    }
}

fn bin(op: BinOp, rd: Reg, rs1: Reg, b: Src<Reg>, e: Emit) -> Result<(), LowerError> {
    let imm = match b {
        Src::Reg(rs2) => {
            e(reg_op(op, rd, rs1, rs2));
            return Ok(());
        }
        Src::Imm(v) => v,
    };
    let s = imm as i64;
    let fits = Imm12::maybe_from(s).is_some();
    match op {
        BinOp::Shl | BinOp::Shr if imm >= 64 => return Err(LowerError::Shift(imm)),
        BinOp::Shl | BinOp::Shr | BinOp::Or | BinOp::Xor | BinOp::Add | BinOp::Sub if imm == 0 => {
            mov(rd, rs1, e)
        }
        BinOp::Shl => e(shift(ShiftOp::Slli, rd, rs1, imm as u32)),
        BinOp::Shr => e(shift(ShiftOp::Srli, rd, rs1, imm as u32)),
        BinOp::And if imm == u64::MAX => mov(rd, rs1, e),
        // The I-type immediates are sign-extended to 64 bits.
        BinOp::And if fits => e(alu_imm(ImmOp::Andi, rd, rs1, s)),
        BinOp::Or if fits => e(alu_imm(ImmOp::Ori, rd, rs1, s)),
        BinOp::Xor if fits => e(alu_imm(ImmOp::Xori, rd, rs1, s)),
        BinOp::Add if fits => e(alu_imm(ImmOp::Addi, rd, rs1, s)),
        BinOp::Sub if Imm12::maybe_from(s.wrapping_neg()).is_some() => {
            e(alu_imm(ImmOp::Addi, rd, rs1, s.wrapping_neg()))
        }
        BinOp::And if by_shifts(imm).is_some_and(|s| s.len() <= li_len(imm)) => {
            let shifts = by_shifts(imm).unwrap_or_default();
            for (i, (op, n)) in shifts.into_iter().enumerate() {
                e(shift(op, rd, if i == 0 { rs1 } else { rd }, n));
            }
        }
        BinOp::Mul if imm.is_power_of_two() => {
            let n = imm.trailing_zeros();
            if n == 0 {
                mov(rd, rs1, e);
            } else {
                e(shift(ShiftOp::Slli, rd, rs1, n));
            }
        }
        _ => {
            li(SCRATCH, imm, e);
            e(reg_op(op, rd, rs1, SCRATCH));
        }
    }
    Ok(())
}

/// `x & m` for `m` one run of ones, as shifts: the run to the top,
/// down to bit 0, back to its place (only the shifts that move it; none
/// for 0 or every bit, which the callers handle). Shifts need no
/// scratch register, so they win where they are no more than `li` and
/// `and` (a low mask past 12 bits, `lui; addiw; and`, is `slli; srli`).
fn by_shifts(m: u64) -> Option<Vec<(ShiftOp, u32)>> {
    let (lo, hi) = crate::spec::bits::ones_run(m)?;
    let top = 63 - hi;
    let shifts = [
        (ShiftOp::Slli, top),
        (ShiftOp::Srli, top + lo),
        (ShiftOp::Slli, lo),
    ]
    .into_iter()
    .filter(|&(_, n)| n > 0)
    .collect();
    Some(shifts)
}

/// Instructions of `li` for `v`.
fn li_len(v: u64) -> usize {
    let mut n = 0;
    li(SCRATCH, v, &mut |_| n += 1);
    n
}

/// SLL/SRL take the amount modulo 64, as the LIR's shifts by register.
fn reg_op(op: BinOp, rd: Reg, rs1: Reg, rs2: Reg) -> Insn {
    let op = match op {
        BinOp::Or => AluOp::Or,
        BinOp::Xor => AluOp::Xor,
        BinOp::And => AluOp::And,
        BinOp::Add => AluOp::Add,
        BinOp::Sub => AluOp::Sub,
        BinOp::Mul => AluOp::Mul,
        BinOp::Shl => AluOp::Sll,
        BinOp::Shr => AluOp::Srl,
    };
    alu(op, rd, rs1, rs2)
}

/// A checked riscv64 invalidation: what an [`Invalidation`] holds here.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Vma {
    /// Svinval's `sinval.vma`, else `sfence.vma`.
    sinval: bool,
    /// `... x0`: rs1 is x0 and the one operand is the ASID.
    asid_only: bool,
}

/// The invalidations and their register operands: `sfence.vma` /
/// `sinval.vma` with none (every address, every ASID), the address, or
/// the address and the ASID; `... x0` with the ASID alone (rs1 = x0: every
/// address of that ASID, as Linux's `sfence.vma x0, asid`). A register
/// holding 0 is address 0 or ASID 0, never x0 (privileged 4.2.1).
const INVALIDATES: &[(&str, Vma, &[usize])] = &[
    ("sfence.vma", Vma::new(false, false), &[0, 1, 2]),
    ("sfence.vma x0", Vma::new(false, true), &[1]),
    ("sinval.vma", Vma::new(true, false), &[0, 1, 2]),
    ("sinval.vma x0", Vma::new(true, true), &[1]),
];

impl Vma {
    const fn new(sinval: bool, asid_only: bool) -> Vma {
        Vma { sinval, asid_only }
    }
}

/// The invalidation `name`, if it takes `n` register operands. (Checked
/// before lowering, so the error points at the spec statement.)
pub fn invalidation(name: &str, n: usize) -> Result<Invalidation, InvalidationError> {
    let Some((_, op, ns)) = INVALIDATES.iter().find(|(k, ..)| *k == name) else {
        return Err(InvalidationError::NoSuch {
            target: "riscv64",
            name: name.into(),
            also: " (it has `sfence.vma` and Svinval's `sinval.vma`)",
        });
    };
    if !ns.contains(&n) {
        let takes = match ns {
            [one] => one.to_string(),
            [init @ .., last] => {
                let init: Vec<String> = init.iter().map(|k| k.to_string()).collect();
                format!("{} or {last}", init.join(", "))
            }
            [] => unreachable!("every name takes some count"),
        };
        return Err(InvalidationError::Operands {
            name: name.into(),
            takes,
            got: n,
        });
    }
    Ok(Invalidation::new(name, *op))
}

/// `op` with its operands in `ops` (as many as its name takes): the
/// address, then the ASID; an operand not given is x0 (every address,
/// every ASID).
fn invalidate(op: Vma, ops: &[Reg]) -> Insn {
    let reg = |i: usize| ops.get(i).copied().unwrap_or(Reg::ZERO);
    let (rs1, rs2) = if op.asid_only {
        (Reg::ZERO, reg(0))
    } else {
        (reg(0), reg(1))
    };
    if op.sinval {
        Insn::SinvalVma { rs1, rs2 }
    } else {
        Insn::SfenceVma { rs1, rs2 }
    }
}

#[cfg(test)]
#[path = "lower_tests.rs"]
mod tests;

/// To `target` when bit `bit` of `rs` is `set`: `andi` where the bit is
/// in a 12-bit immediate, else the bit moved to the sign (bit 63 is
/// there already) and `bltz`/`bgez`.
fn branch_bit(rs: Reg, bit: u8, set: bool, target: Label, e: Emit) {
    let (rs1, cond) = if bit < 11 {
        e(alu_imm(ImmOp::Andi, SCRATCH, rs, 1 << bit));
        (SCRATCH, if set { BrCond::Ne } else { BrCond::Eq })
    } else {
        let signed = if bit == 63 {
            rs
        } else {
            e(shift(ShiftOp::Slli, SCRATCH, rs, u32::from(63 - bit)));
            SCRATCH
        };
        (signed, if set { BrCond::Lt } else { BrCond::Ge })
    };
    e(Insn::Branch {
        cond,
        rs1,
        rs2: Reg::ZERO,
        target,
    });
}
