//! riscv64 memory accesses: loads and stores (RISC-V has no
//! byte-reversing forms, so a swapped access reverses by hand; offsets
//! past 12 bits go through t5), spills and stack arguments, and the LR/SC
//! reservations of locks (bytes and halfwords through their aligned
//! word).

use super::insn::{AluOp, AmoWidth, BrCond, Imm12, ImmOp, Insn, Reg, ShiftOp, Width};
use super::lower::{
    alu, alu_imm, li, mov, reg_of, shift, Emit, LowerError, REGS, SCRATCH, SCRATCH2, SCRATCH3,
};
use crate::isa::lower_common::MemAccess;
use crate::isa::scaffold;
use crate::lir::regalloc::Allocation;
use crate::lir::{Inst, VReg};

/// Loads, stores, spills and stack arguments.
pub(super) fn memory(
    inst: &Inst,
    alloc: &Allocation,
    frame: u32,
    e: Emit,
) -> Result<(), LowerError> {
    let r = |v: VReg| reg_of(alloc, v);
    // Slot `n` is the (n+1)th doubleword down from the frame's top.
    let slot_off = |slot: u32| {
        i64::from(frame)
            .checked_sub(8 * (i64::from(slot) + 1))
            .and_then(Imm12::maybe_from)
            .ok_or_else(|| LowerError::OutOfReach(format!("spill slot {slot}")))
    };
    if let Some(a) = MemAccess::of(inst) {
        let a = a.map(r)?;
        return mem(a.store, a.data, a.base, a.offset, a.width, a.swap, e);
    }
    match inst {
        Inst::Spill { src, slot } => e(Insn::Store {
            w: Width::D,
            src: r(*src)?,
            base: Reg::SP,
            off: slot_off(*slot)?,
        }),
        Inst::Reload { dst, slot } => e(Insn::Load {
            w: Width::D,
            rd: r(*dst)?,
            base: Reg::SP,
            off: slot_off(*slot)?,
        }),
        Inst::Arg { dst, index } => {
            if let Some(off) = scaffold::stack_arg_offset(*index, REGS.args.len(), frame) {
                mem(false, r(*dst)?, Reg::SP, u64::from(off), 64, false, e)?;
            }
        }
        Inst::LoadReserve { .. } | Inst::StoreCond { .. } | Inst::StoreRelease { .. } => {
            lock_op(inst, alloc, e)?
        }
        _ => return Err(LowerError::Internal("not a memory instruction".into())),
    }
    Ok(())
}

/// The reservation pair and the releasing store of a lock.
fn lock_op(inst: &Inst, alloc: &Allocation, e: Emit) -> Result<(), LowerError> {
    let r = |v: VReg| reg_of(alloc, v);
    match inst {
        Inst::LoadReserve {
            dst,
            base,
            width,
            acquire,
        } if *width < 32 => reserve_sub_word(r(*dst)?, r(*base)?, *width, *acquire, e),
        Inst::StoreCond {
            src,
            base,
            width,
            expected,
            release,
            retry,
        } if *width < 32 => {
            let (src, base, expected) = (r(*src)?, r(*base)?, r(*expected)?);
            store_cond_sub_word(src, base, expected, *width, *release, *retry, e)
        }
        Inst::LoadReserve {
            dst,
            base,
            width,
            acquire,
        } => {
            let (w, rd) = (amo_width(*width)?, r(*dst)?);
            e(Insn::Lr {
                w,
                aq: *acquire,
                rd,
                base: r(*base)?,
            });
            // LR.W sign-extends; the lock's values compare zero-extended.
            // Two base-ISA shifts keep the LR/SC loop constrained
            // (unprivileged 8.3: only base integer instructions between).
            if w == AmoWidth::W {
                e(shift(ShiftOp::Slli, rd, rd, 32));
                e(shift(ShiftOp::Srli, rd, rd, 32));
            }
        }
        Inst::StoreCond {
            src,
            base,
            width,
            release,
            retry,
            ..
        } => {
            e(Insn::Sc {
                w: amo_width(*width)?,
                rl: *release,
                status: SCRATCH,
                src: r(*src)?,
                base: r(*base)?,
            });
            e(Insn::Branch {
                cond: BrCond::Ne,
                rs1: SCRATCH,
                rs2: Reg::ZERO,
                target: *retry,
            });
        }
        Inst::StoreRelease { src, base, width } => {
            mem(true, r(*src)?, r(*base)?, 0, *width, false, e)?
        }
        _ => unreachable!("only lock operations"),
    }
    Ok(())
}

fn amo_width(width: u32) -> Result<AmoWidth, LowerError> {
    match width {
        32 => Ok(AmoWidth::W),
        64 => Ok(AmoWidth::D),
        w => Err(LowerError::Width {
            width: w,
            what: "load-reserve (LR/SC take 32 and 64 bits, A extension)",
            target: "riscv64",
        }),
    }
}

/// `x & mask(width)` for a byte or halfword, in place.
fn low_bits(rd: Reg, width: u32, e: Emit) {
    if width == 8 {
        e(alu_imm(ImmOp::Andi, rd, rd, 0xff));
    } else {
        e(shift(ShiftOp::Slli, rd, rd, 64 - width));
        e(shift(ShiftOp::Srli, rd, rd, 64 - width));
    }
}

/// LR/SC have no byte or halfword forms: reserve the aligned word that
/// holds the lock (as Linux's riscv `__cmpxchg_small` does) and extract
/// it. t5 keeps the word and t4 the lock's bit offset in it (little
/// endian: 8 * (addr & 3)) until the store-conditional; `lower` checks
/// that nothing between writes them.
fn reserve_sub_word(rd: Reg, base: Reg, width: u32, aq: bool, e: Emit) {
    e(alu_imm(ImmOp::Andi, SCRATCH3, base, 3));
    e(shift(ShiftOp::Slli, SCRATCH3, SCRATCH3, 3));
    e(alu_imm(ImmOp::Andi, SCRATCH, base, -4));
    e(Insn::Lr {
        w: AmoWidth::W,
        aq,
        rd: SCRATCH2,
        base: SCRATCH,
    });
    e(alu(AluOp::Srl, rd, SCRATCH2, SCRATCH3));
    low_bits(rd, width, e);
}

/// The word with the lock's bits replaced: word ^ ((expected ^ src) &
/// mask) << offset, where `expected` is what the load-reserve extracted,
/// so only the lock's bits change. The status lands in t4.
fn store_cond_sub_word(
    src: Reg,
    base: Reg,
    expected: Reg,
    width: u32,
    rl: bool,
    retry: crate::lir::LabelId,
    e: Emit,
) {
    e(alu(AluOp::Xor, SCRATCH, expected, src));
    low_bits(SCRATCH, width, e);
    e(alu(AluOp::Sll, SCRATCH, SCRATCH, SCRATCH3));
    e(alu(AluOp::Xor, SCRATCH2, SCRATCH2, SCRATCH));
    e(alu_imm(ImmOp::Andi, SCRATCH, base, -4));
    e(Insn::Sc {
        w: AmoWidth::W,
        rl,
        status: SCRATCH3,
        src: SCRATCH2,
        base: SCRATCH,
    });
    e(Insn::Branch {
        cond: BrCond::Ne,
        rs1: SCRATCH3,
        rs2: Reg::ZERO,
        target: retry,
    });
}

/// Byte-reverse the low `n` bytes of `rs` into `rd` (no Zbb `rev8` in
/// RV64GC): each byte masked out and shifted to its mirrored place.
/// `rd` and `tmp` must differ from `rs` and each other.
fn reverse(rd: Reg, rs: Reg, tmp: Reg, n: u32, e: Emit) {
    for i in 0..n {
        let to = 8 * (n - 1 - i);
        let dst = if i == 0 { rd } else { tmp };
        if i == 0 {
            e(alu_imm(ImmOp::Andi, dst, rs, 0xff));
        } else {
            e(shift(ShiftOp::Srli, dst, rs, 8 * i));
            if 8 * i + 8 < 64 {
                e(alu_imm(ImmOp::Andi, dst, dst, 0xff));
            }
        }
        if to > 0 {
            e(shift(ShiftOp::Slli, dst, dst, to));
        }
        if i > 0 {
            e(alu(AluOp::Or, rd, rd, tmp));
        }
    }
}

/// A device or memory access. RISC-V has no byte-reversing loads or
/// stores: a swapped store reverses into t6 first, a swapped load reverses
/// after it. Offsets past 12 bits go through t5.
fn mem(
    store: bool,
    rt: Reg,
    base: Reg,
    offset: u64,
    width: u32,
    swap: bool,
    e: Emit,
) -> Result<(), LowerError> {
    let w = Width::from_bits(width).ok_or(LowerError::Width {
        width,
        what: "access",
        target: "riscv64",
    })?;
    let swap = swap && width > 8;
    let data = if store && swap {
        reverse(SCRATCH, rt, SCRATCH2, w.bytes(), e);
        SCRATCH
    } else {
        rt
    };
    let (base, off) = match Imm12::maybe_from(offset as i64) {
        Some(off) => (base, off),
        None => {
            li(SCRATCH2, offset, e);
            e(alu(AluOp::Add, SCRATCH2, SCRATCH2, base));
            (SCRATCH2, Imm12::ZERO)
        }
    };
    e(if store {
        Insn::Store {
            w,
            src: data,
            base,
            off,
        }
    } else {
        Insn::Load {
            w,
            rd: rt,
            base,
            off,
        }
    });
    if !store && swap {
        reverse(SCRATCH, rt, SCRATCH2, w.bytes(), e);
        mov(rt, SCRATCH, e);
    }
    Ok(())
}
