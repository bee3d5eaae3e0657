//! LIR -> POWER instructions (64-bit, either endianness).
//!
//! ABI (ELFv1 and ELFv2 alike for leaf functions): arguments in r3..r10,
//! result in r3, r0 and r3..r12 volatile. We use volatile registers first;
//! a sequence that needs more borrows r31, r30, ... (non-volatile): they
//! are saved below the stack pointer, in the 288-byte protected zone both
//! ABIs give a leaf function (ELFv2 2.2.2.4; the ELFv1 Linux supplement
//! 3.2.2), and restored before every `blr`, so there is still no stack
//! frame; arguments past r10 are read from the caller's parameter save
//! area where they are used (see [`stack_arg_slot`]). r0 is reserved as the scratch register
//! of this lowering: it reads as zero in the RA slot of D-form and X-form
//! addresses, so it is never given to a value that serves as a base.

use super::constants::{fits_i16, mask_and, materialize, sldi};
use super::insn::{Cond, CrField, Ds, Insn, Label, Mb6, Reg, Sh6, Spr};
use crate::ir::expr::BinOp;
use crate::isa::lower_common::{MemAccess, Src};
use crate::isa::{Machine, Target};
use crate::lir::regalloc::{Allocation, RegFile};
use crate::lir::{Cmp, Func, Inst, Operand, Origin, SysKind, UnOp, VReg};

pub const REGS: RegFile = RegFile {
    args: &[3, 4, 5, 6, 7, 8, 9, 10],
    pool: &[11, 12, 10, 9, 8, 7, 6, 5, 4, 3],
    // Borrowed only when the volatile set runs out (a range loop around an
    // `each` with a poll needed 11 registers; found by tests/random_specs.rs).
    callee_saved: &[31, 30, 29, 28, 27, 26, 25, 24],
    reserve: None,
};

/// Save slot of non-volatile `r` below r1, where the ABIs' register save
/// area convention puts it (r31 at -8, r30 at -16, ...).
fn save_slot(r: Reg) -> Result<Ds, LowerError> {
    let d = -8 * (32 - i64::from(r.get()));
    Ds::maybe_from(d).ok_or_else(|| LowerError::OutOfReach(format!("save slot {d}(r1)")))
}

/// Displacement from r1 of incoming argument `index` (0-based) when it is
/// passed on the stack, and the argument register its slot shadows (the
/// `R11` of the kernel's `STK_PARAM(R11)`). Every argument has a
/// doubleword in the caller's parameter save area, r3's first, which
/// starts after the fixed frame header: 48(r1) in ELFv1 (64-bit PowerPC
/// ELF ABI Supplement 1.9, "The Stack Frame": back chain, CR, LR, two
/// reserved doublewords, TOC), 32(r1) in ELFv2 (ELFv2 ABI, "The Stack
/// Frame": no reserved doublewords; a caller allocates the area when the
/// prototype has arguments on the stack, as ours then do). So the ninth is
/// at 112(r1) or 96(r1), where gcc's callers store it, and the kernel's
/// `__STK_PARAM` says the same. `power64` is ELFv1, `power64le` ELFv2.
fn stack_arg_slot(index: usize, target: Target) -> Option<(Ds, u8)> {
    index.checked_sub(REGS.args.len())?;
    let area = if target == Target::Power64le { 32 } else { 48 };
    let d = Ds::maybe_from(i64::try_from(area + 8 * index).ok()?)?;
    Some((d, u8::try_from(index + 3).ok()?))
}

/// Displacement from r1 of spill slot `slot`: below the eight save slots
/// of r24..r31, inside the 288 bytes under r1 that both ABIs (and the
/// kernel's exception entry, KERNEL_REDZONE_SIZE) leave to a leaf
/// function, so r1 does not move.
fn spill_slot(slot: u32) -> Result<Ds, LowerError> {
    let d = -72 - 8 * i64::from(slot);
    match Ds::maybe_from(d) {
        Some(d) if d.get() >= -288 => Ok(d),
        _ => Err(LowerError::OutOfReach(format!(
            "spill slot {slot} (below the 288-byte protected zone)"
        ))),
    }
}

const SCRATCH: Reg = Reg::R0;
/// The stack pointer.
const SP: Reg = Reg::R1;
/// The result register.
const R3: Reg = Reg::of::<3>();
/// cr7, as GCC uses for compares it does not need cr0 for.
pub(super) const CR: CrField = CrField::of::<7>();
/// cr0, which the record forms (`andi.`, `st?cx.`) set.
pub(super) const CR0: CrField = CrField::of::<0>();

/// The register the allocator's number `n` names.
fn gpr(n: u8) -> Result<Reg, LowerError> {
    Reg::maybe_from(u64::from(n))
        .ok_or_else(|| LowerError::Internal(format!("register {n} is not one of r0..r31")))
}

/// Lowered function: instructions with their origins (labels included).
pub struct Lowered {
    pub insns: Vec<(Insn, Origin)>,
}

use super::ctr::Step;
pub use crate::isa::error::LowerError;

/// Where instructions go: the lowering of one LIR instruction pushes them
/// with that instruction's origin.
type Emit<'a> = &'a mut dyn FnMut(Insn);

pub fn lower(
    f: &Func,
    alloc: &Allocation,
    target: Target,
    machine: Machine,
) -> Result<Lowered, LowerError> {
    let saved = alloc.used_callee_saved(&REGS).into_iter().map(gpr);
    let cx = Cx {
        alloc,
        target,
        machine,
        saved: saved.collect::<Result<_, _>>()?,
        void: f.void,
    };
    // Most LIR instructions are one or two POWER ones: sized up front, a
    // large function's vector is not copied as it grows.
    let mut out = Lowered {
        insns: Vec::with_capacity(f.insts.len() * 3 / 2 + 16),
    };
    if let Some((_, origin)) = f.insts.first() {
        cx.save_callee_saved(&mut |i| out.insns.push((i, origin.clone())))?;
    }
    let ctr = super::ctr::loops(f);
    for (k, (inst, origin)) in f.insts.iter().enumerate() {
        let mut e = |i| out.insns.push((i, origin.clone()));
        match ctr.get(&k) {
            Some(Step::Load(n)) => {
                e(Insn::Mtctr { rs: cx.r(*n)? });
                cx.inst(inst, &mut e)?
            }
            Some(Step::Drop) => {}
            Some(Step::Branch(top)) => e(Insn::Bdnz { target: *top }),
            None => cx.inst(inst, &mut e)?,
        }
    }
    super::peephole::word_rotates(&mut out.insns);
    super::peephole::record_forms(&mut out.insns);
    Ok(out)
}

/// What lowering one instruction needs to know about the function.
struct Cx<'a> {
    alloc: &'a Allocation,
    target: Target,
    machine: Machine,
    /// The non-volatile registers the function borrows.
    saved: Vec<Reg>,
    /// `-> void`: returns leave r3 alone.
    void: bool,
}

impl Cx<'_> {
    /// The register of `v`; one the allocator never saw is an error, not
    /// r0.
    fn r(&self, v: VReg) -> Result<Reg, LowerError> {
        gpr(self.alloc.reg(v)?)
    }

    fn save_callee_saved(&self, e: Emit) -> Result<(), LowerError> {
        for &p in &self.saved {
            e(Insn::Std {
                rs: p,
                d: save_slot(p)?,
                ra: SP,
            });
        }
        Ok(())
    }

    /// One LIR instruction, by kind.
    fn inst(&self, inst: &Inst, e: Emit) -> Result<(), LowerError> {
        let r = |v: &VReg| self.r(*v);
        if let Some(a) = MemAccess::of(inst) {
            let a = a.map(|v| self.r(v))?;
            let at = At::of(a.base, a.offset, a.index);
            return mem(a.store, a.data, at, a.width, a.swap, e);
        }
        match inst {
            Inst::Spill { src, slot } => e(Insn::Std {
                rs: r(src)?,
                d: spill_slot(*slot)?,
                ra: SP,
            }),
            Inst::Reload { dst, slot } => e(Insn::Ld {
                rt: r(dst)?,
                d: spill_slot(*slot)?,
                ra: SP,
            }),
            Inst::Arg { dst, index } => self.arg(r(dst)?, *index, e),
            Inst::Imm { dst, value } => materialize(r(dst)?, *value, e),
            Inst::Copy { dst, src } => copy(r(dst)?, r(src)?, e),
            Inst::Un { op, dst, src } => self.un(*op, r(dst)?, r(src)?, e),
            Inst::Not { dst, src } => e(Insn::Nor {
                ra: r(dst)?,
                rs: r(src)?,
                rb: r(src)?,
            }),
            Inst::Insert {
                dst,
                src,
                shift,
                width,
            } => e(insert(r(dst)?, r(src)?, *shift, *width)?),
            Inst::Bin { op, dst, a, b } => bin(*op, r(dst)?, r(a)?, Src::of(b, |v| self.r(v))?, e)?,
            Inst::Barrier { name } => name.lower(e),
            Inst::Sys { op, src, dst } => {
                let src = src.map(|v| r(&v)).transpose()?;
                let dst = dst.map(|v| r(&v)).transpose()?;
                sys(*op, src, dst, e)?
            }
            Inst::Invalidate { name, operands } => {
                let regs = operands.iter().map(r).collect::<Result<Vec<_>, _>>()?;
                name.op::<super::tlb::Op>().lower(&regs, SCRATCH, e)
            }
            Inst::LoadReserve {
                dst, base, width, ..
            } => load_reserve(r(dst)?, r(base)?, *width, e),
            Inst::StoreCond {
                src,
                base,
                width,
                retry,
                ..
            } => store_cond(r(src)?, r(base)?, *width, *retry, e),
            Inst::StoreRelease { src, base, width } => {
                mem(true, r(src)?, At::plain(r(base)?), *width, false, e)?
            }
            Inst::SpinHint => {}
            Inst::SetCmp { .. } => {
                return Err(LowerError::Internal(
                    "SetCmp on a target whose Description says set_cmp: false".into(),
                ))
            }
            Inst::Label(l) => e(Insn::Label(*l)),
            Inst::Jump(l) => e(Insn::B { target: *l }),
            Inst::FeatureJump { cap, target } => feature_jump(cap, *target, e)?,
            Inst::Branch { cmp, a, b, target } => self.branch(*cmp, r(a)?, *b, *target, e)?,
            Inst::BranchBit {
                a,
                bit,
                set,
                target,
            } => branch_bit(r(a)?, *bit, *set, *target, e)?,
            Inst::SubBranchAbove { a, b, target } => sub_branch_above(r(a)?, r(b)?, *target, e),
            Inst::Ret { value } => self.ret(*value, e)?,
            Inst::Load { .. } | Inst::Store { .. } => unreachable!("lowered as a MemAccess"),
        }
        Ok(())
    }

    /// An argument past r10 is loaded from its stack slot; the others
    /// are already in their registers.
    fn arg(&self, rt: Reg, index: usize, e: Emit) {
        if let Some((d, param)) = stack_arg_slot(index, self.target) {
            e(Insn::LdArg { rt, d, param });
        }
    }

    /// Each defined at 0 as the LIR wants it (64 for the counts).
    fn un(&self, op: UnOp, ra: Reg, rs: Reg, e: Emit) {
        if matches!(op, UnOp::Ctz) && self.machine == Machine::E6500 {
            return ctz_without_cnttzd(ra, rs, e);
        }
        e(match op {
            UnOp::Clz => Insn::Cntlzd { ra, rs },
            UnOp::Ctz => Insn::Cnttzd { ra, rs },
            UnOp::Popcount => Insn::Popcntd { ra, rs },
        });
    }

    /// Compare into cr7, then branch on the condition.
    fn branch(
        &self,
        cmp: Cmp,
        ra: Reg,
        b: Operand,
        target: Label,
        e: Emit,
    ) -> Result<(), LowerError> {
        let signed = matches!(cmp, Cmp::Eq | Cmp::Ne);
        match b {
            Operand::Imm(v) if signed && (v as i64) >= -32768 && (v as i64) <= 32767 => {
                e(Insn::Cmpdi {
                    bf: CR,
                    ra,
                    imm: v as i64 as i16,
                })
            }
            Operand::Imm(v) if !signed && v <= 0xffff => e(Insn::Cmpldi {
                bf: CR,
                ra,
                imm: v as u16,
            }),
            Operand::Imm(v) => {
                materialize(SCRATCH, v, e);
                e(Insn::Cmpld {
                    bf: CR,
                    ra,
                    rb: SCRATCH,
                });
            }
            Operand::Reg(rb) => e(Insn::Cmpld {
                bf: CR,
                ra,
                rb: self.r(rb)?,
            }),
        }
        let cond = match cmp {
            Cmp::Eq => Cond::Eq,
            Cmp::Ne => Cond::Ne,
            Cmp::Ltu => Cond::Lt,
            Cmp::Geu => Cond::Ge,
        };
        e(Insn::Bc {
            cond,
            bf: CR,
            target,
        });
        Ok(())
    }

    /// The result into r3, the borrowed registers restored, `blr`.
    fn ret(&self, value: Operand, e: Emit) -> Result<(), LowerError> {
        match value {
            _ if self.void => {}
            Operand::Imm(v) => materialize(R3, v, e),
            Operand::Reg(v) => copy(R3, self.r(v)?, e),
        }
        for &p in self.saved.iter().rev() {
            e(Insn::Ld {
                rt: p,
                d: save_slot(p)?,
                ra: SP,
            });
        }
        e(Insn::Blr);
        Ok(())
    }
}

fn copy(rd: Reg, rs: Reg, e: Emit) {
    if rd != rs {
        e(Insn::Mr { ra: rd, rs });
    }
}

/// e6500 (ISA 2.06) has no cnttzd: 64 - clz((x - 1) & !x), 64 at 0 as
/// well (all ones has no leading zero).
fn ctz_without_cnttzd(rd: Reg, rs: Reg, e: Emit) {
    e(Insn::Addi {
        rt: SCRATCH,
        ra: rs,
        imm: -1,
    });
    e(Insn::Andc {
        ra: SCRATCH,
        rs: SCRATCH,
        rb: rs,
    });
    e(Insn::Cntlzd {
        ra: SCRATCH,
        rs: SCRATCH,
    });
    e(Insn::Neg {
        rt: rd,
        ra: SCRATCH,
    });
    e(Insn::Addi {
        rt: rd,
        ra: rd,
        imm: 64,
    });
}

/// `src`'s low `width` bits shifted left by `shift`, the rest zero: one
/// instruction.
fn insert(rd: Reg, rs: Reg, shift: u32, width: u32) -> Result<Insn, LowerError> {
    let sh = Sh6::maybe_from(u64::from(shift)).ok_or(LowerError::Shift(u64::from(shift)))?;
    Ok(match 64u32.checked_sub(shift + width) {
        // rldic: rotate left by sh, clear the high 64-sh-w bits
        // and the low sh bits (MD-form), i.e. (x & mask) << sh.
        Some(mb) if mb > 0 => Insn::Rldic {
            ra: rd,
            rs,
            sh,
            mb: Mb6::maybe_from(u64::from(mb)).ok_or(LowerError::Shift(u64::from(shift)))?,
        },
        // The field reaches bit 63: a plain shift left.
        _ => sldi(rd, rs, sh),
    })
}

/// To `target` when bit `bit` of `ra` is `set`. A bit `andi.` reaches
/// is tested in CR0 by the branch right after it (the record-form
/// peephole's CR0 rule); any other is moved to the sign (bit 63 is
/// there already) and compared into CR7, as every CR7 branch is.
/// A Book III-E MAS or MSR move, or a TLB search or read, with its
/// registers (`src` read, `dst` written).
fn sys(op: SysKind, src: Option<Reg>, dst: Option<Reg>, e: Emit) -> Result<(), LowerError> {
    let spr = |n: u16| {
        Spr::from_number(n)
            .ok_or_else(|| LowerError::Internal(format!("SPR {n:#x} is not a MAS register")))
    };
    let need = |v: Option<Reg>| {
        v.ok_or_else(|| LowerError::Internal("system instruction without its register".into()))
    };
    e(match op {
        SysKind::MtSpr(n) => Insn::Mtspr {
            spr: spr(n)?,
            rs: need(src)?,
        },
        SysKind::MfSpr(n) => Insn::Mfspr {
            rt: need(dst)?,
            spr: spr(n)?,
        },
        // EA = (RA|0) + RB, as the kernel's `tlbsx 0,rB`.
        SysKind::TlbSearch => Insn::Tlbsx {
            ra: Reg::R0,
            rb: need(src)?,
        },
        SysKind::TlbRead => Insn::Tlbre,
        SysKind::MfMsr => Insn::Mfmsr { rt: need(dst)? },
        SysKind::Wrteei(on) => Insn::Wrteei { e: on },
        SysKind::Wrtee => Insn::Wrtee { rs: need(src)? },
    });
    Ok(())
}

fn branch_bit(ra: Reg, bit: u8, set: bool, target: Label, e: Emit) -> Result<(), LowerError> {
    if bit < 32 {
        e(if bit < 16 {
            Insn::AndiDot {
                ra: SCRATCH,
                rs: ra,
                imm: 1 << bit,
            }
        } else {
            Insn::AndisDot {
                ra: SCRATCH,
                rs: ra,
                imm: 1 << (bit - 16),
            }
        });
        let cond = if set { Cond::Ne } else { Cond::Eq };
        e(Insn::Bc {
            cond,
            bf: CR0,
            target,
        });
        return Ok(());
    }
    let sh = 63u64
        .checked_sub(u64::from(bit))
        .and_then(Sh6::maybe_from)
        .ok_or(LowerError::Shift(u64::from(bit)))?;
    let signed = if bit == 63 {
        ra
    } else {
        e(Insn::Rldicr {
            ra: SCRATCH,
            rs: ra,
            sh,
            me: Mb6::of::<0>(),
        });
        SCRATCH
    };
    e(Insn::Cmpdi {
        bf: CR,
        ra: signed,
        imm: 0,
    });
    let cond = if set { Cond::Lt } else { Cond::Ge };
    e(Insn::Bc {
        cond,
        bf: CR,
        target,
    });
    Ok(())
}

/// `cmpld 6,a,b; subf a,b,a; bgt 6`: the compare reads `a` before the
/// subtraction, so it cannot be CR0 of a record form. CR6 (volatile in
/// both ELF ABIs) keeps it apart from CR7, whose compares the record-form
/// peephole rewrites only where each sits right before its branch.
fn sub_branch_above(a: Reg, b: Reg, target: Label, e: Emit) {
    const CR6: CrField = CrField::of::<6>();
    e(Insn::Cmpld {
        bf: CR6,
        ra: a,
        rb: b,
    });
    e(Insn::Subf {
        rt: a,
        ra: b,
        rb: a,
    });
    e(Insn::Bc {
        cond: Cond::Gt,
        bf: CR6,
        target,
    });
}

fn load_reserve(rt: Reg, base: Reg, width: u32, e: Emit) {
    let (ra, rb, eh) = (Reg::R0, base, false);
    e(match width {
        8 => Insn::Lbarx { rt, ra, rb, eh },
        16 => Insn::Lharx { rt, ra, rb, eh },
        32 => Insn::Lwarx { rt, ra, rb, eh },
        _ => Insn::Ldarx { rt, ra, rb, eh },
    });
}

/// The store-conditional, and back to `retry` when it failed.
fn store_cond(rs: Reg, base: Reg, width: u32, retry: Label, e: Emit) {
    let (ra, rb) = (Reg::R0, base);
    e(match width {
        8 => Insn::Stbcx { rs, ra, rb },
        16 => Insn::Sthcx { rs, ra, rb },
        32 => Insn::Stwcx { rs, ra, rb },
        _ => Insn::Stdcx { rs, ra, rb },
    });
    // cr0.eq is set when the store was performed.
    e(Insn::Bc {
        cond: Cond::Ne,
        bf: CR0,
        target: retry,
    });
}

/// A branch the kernel patches in when the CPU has `cap`.
fn feature_jump(cap: &str, target: Label, e: Emit) -> Result<(), LowerError> {
    use crate::ir::feature::{patching_of, Patching};
    let mmu = match patching_of(cap) {
        Some(Patching::PowerCpuFtr) => false,
        Some(Patching::PowerMmuFtr) => true,
        _ => return Err(LowerError::Capability {
            cap: cap.to_string(),
            advice:
                "not a POWER capability: POWER code is patched for `CPU_FTR_*` and `MMU_FTR_*` bits",
        }),
    };
    e(Insn::FtrB {
        mmu,
        cap: cap.to_string(),
        target,
    });
    Ok(())
}

fn bin(op: BinOp, rd: Reg, ra: Reg, b: Src<Reg>, e: Emit) -> Result<(), LowerError> {
    let (rb, imm) = match b {
        Src::Reg(rb) => (Some(rb), 0),
        Src::Imm(v) => (None, v),
    };
    let shift = || Sh6::maybe_from(imm).ok_or(LowerError::Shift(imm));
    match (op, rb) {
        (BinOp::Shl | BinOp::Shr, None) if shift()?.get() == 0 => copy(rd, ra, e),
        (BinOp::Shl, None) => e(sldi(rd, ra, shift()?)),
        // srdi rd,ra,n = rldicl rd,ra,64-n,n
        (BinOp::Shr, None) => e(Insn::Rldicl {
            ra: rd,
            rs: ra,
            sh: Sh6::maybe_from(64 - imm).ok_or(LowerError::Shift(imm))?,
            mb: Mb6::maybe_from(imm).ok_or(LowerError::Shift(imm))?,
        }),
        (BinOp::Or, None) if imm <= 0xffff => e(Insn::Ori {
            ra: rd,
            rs: ra,
            imm: imm as u16,
        }),
        (BinOp::Or, None) if imm & 0xffff == 0 && imm <= 0xffff_0000 => e(Insn::Oris {
            ra: rd,
            rs: ra,
            imm: (imm >> 16) as u16,
        }),
        (BinOp::Xor, None) if imm <= 0xffff => e(Insn::Xori {
            ra: rd,
            rs: ra,
            imm: imm as u16,
        }),
        (BinOp::And, None) if imm <= 0xffff => e(Insn::AndiDot {
            ra: rd,
            rs: ra,
            imm: imm as u16,
        }),
        (BinOp::And, None) if mask_and(rd, ra, imm, e) => {}
        (BinOp::Add, None) if fits_i16(imm as i64) => e(Insn::Addi {
            rt: rd,
            ra,
            imm: imm as i64 as i16,
        }),
        (BinOp::Sub, None) if fits_i16((imm as i64).wrapping_neg()) => e(Insn::Addi {
            rt: rd,
            ra,
            imm: (imm as i64).wrapping_neg() as i16,
        }),
        (_, None) => {
            materialize(SCRATCH, imm, e);
            reg_op(op, rd, ra, SCRATCH, e);
        }
        (_, Some(rb)) => reg_op(op, rd, ra, rb, e),
    }
    Ok(())
}

fn reg_op(op: BinOp, rd: Reg, ra: Reg, rb: Reg, e: &mut dyn FnMut(Insn)) {
    e(match op {
        BinOp::Or => Insn::Or { ra: rd, rs: ra, rb },
        BinOp::Xor => Insn::Xor { ra: rd, rs: ra, rb },
        BinOp::And => Insn::And { ra: rd, rs: ra, rb },
        BinOp::Add => Insn::Add { rt: rd, ra, rb },
        // subf rt,ra,rb = rb - ra
        BinOp::Sub => Insn::Subf {
            rt: rd,
            ra: rb,
            rb: ra,
        },
        BinOp::Mul => Insn::Mulld { rt: rd, ra, rb },
        BinOp::Shl => Insn::Sld { ra: rd, rs: ra, rb },
        BinOp::Shr => Insn::Srd { ra: rd, rs: ra, rb },
    })
}

/// Where an access goes: `base + offset`, the offset also in `index`
/// when the builder set it in a register before the loop.
struct At {
    base: Reg,
    offset: u64,
    index: Option<Reg>,
}

impl At {
    fn of(base: Reg, offset: u64, index: Option<Reg>) -> At {
        At {
            base,
            offset,
            index,
        }
    }

    fn plain(base: Reg) -> At {
        At::of(base, 0, None)
    }
}

/// A device or memory access. Byte-reversed forms exist only indexed
/// (X-form), so a swapped access at a non-zero offset takes the offset
/// from its index register, or else puts it in r0 (legal in the RB slot).
fn mem(
    store: bool,
    rt: Reg,
    At {
        base,
        offset,
        index,
    }: At,
    width: u32,
    swap: bool,
    e: &mut dyn FnMut(Insn),
) -> Result<(), LowerError> {
    if base == Reg::R0 {
        return Err(LowerError::Internal("r0 cannot be a base register".into()));
    }
    let swap = swap && width > 8;
    if let Some(insn) = (!swap)
        .then(|| displaced(store, rt, base, offset, width))
        .flatten()
    {
        e(insn);
        return Ok(());
    }
    // Indexed: EA = (RA|0) + RB.
    let (ra, rb) = match (offset, index) {
        (0, _) => (Reg::R0, base),
        (_, Some(index)) => (base, index),
        _ => {
            materialize(SCRATCH, offset, e);
            (base, SCRATCH)
        }
    };
    e(match (store, width, swap) {
        (true, 64, true) => Insn::Stdbrx { rs: rt, ra, rb },
        (true, 32, true) => Insn::Stwbrx { rs: rt, ra, rb },
        (true, 16, true) => Insn::Sthbrx { rs: rt, ra, rb },
        (false, 64, true) => Insn::Ldbrx { rt, ra, rb },
        (false, 32, true) => Insn::Lwbrx { rt, ra, rb },
        (false, 16, true) => Insn::Lhbrx { rt, ra, rb },
        (true, 64, _) => Insn::Stdx { rs: rt, ra, rb },
        (true, 32, _) => Insn::Stwx { rs: rt, ra, rb },
        (true, 16, _) => Insn::Sthx { rs: rt, ra, rb },
        (true, _, _) => Insn::Stbx { rs: rt, ra, rb },
        (false, 64, _) => Insn::Ldx { rt, ra, rb },
        (false, 32, _) => Insn::Lwzx { rt, ra, rb },
        (false, 16, _) => Insn::Lhzx { rt, ra, rb },
        (false, _, _) => Insn::Lbzx { rt, ra, rb },
    });
    Ok(())
}

/// The D-form (DS-form for 64 bits) access of `rt` at `offset` from
/// `base`, None where the displacement does not fit.
fn displaced(store: bool, rt: Reg, base: Reg, offset: u64, width: u32) -> Option<Insn> {
    let d = i16::try_from(offset).ok()?;
    let ds = || Ds::maybe_from(i64::from(d));
    let ra = base;
    Some(match (store, width) {
        (true, 64) => Insn::Std {
            rs: rt,
            d: ds()?,
            ra,
        },
        (true, 32) => Insn::Stw { rs: rt, d, ra },
        (true, 16) => Insn::Sth { rs: rt, d, ra },
        (true, _) => Insn::Stb { rs: rt, d, ra },
        (false, 64) => Insn::Ld { rt, d: ds()?, ra },
        (false, 32) => Insn::Lwz { rt, d, ra },
        (false, 16) => Insn::Lhz { rt, d, ra },
        (false, _) => Insn::Lbz { rt, d, ra },
    })
}

#[cfg(test)]
#[path = "lower_tests.rs"]
mod tests;
