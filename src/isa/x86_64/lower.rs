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

use super::insn::{Cond, Disp32, Gpr, Imm6, Index, Insn, Label, Scale, Simm32, Size};
use super::mem::{load, size, slot_disp, stack_arg_disp, store, Access};
use crate::ir::expr::BinOp;
use crate::ir::isa::InvalidationError;
use crate::isa::hweight::{self, Loc, Step};
use crate::isa::invalidation::Invalidation;
use crate::isa::lower_common::{hweight_regs, unpatched, MemAccess, Src};
use crate::lir::regalloc::{Allocation, RegFile};
use crate::lir::role::Role;
use crate::lir::{Cmp, Func, Inst, Operand, Origin, UnOp, VReg};

/// Hardware numbering: 0=rax 1=rcx 2=rdx 6=rsi 7=rdi 8..=r8...
pub const REGS: RegFile = RegFile {
    args: &[
        RDI.num(),
        RSI.num(),
        RDX.num(),
        RCX.num(),
        R8.num(),
        R9.num(),
    ],
    pool: &[
        RAX.num(),
        R10.num(),
        R9.num(),
        R8.num(),
        RCX.num(),
        RDX.num(),
        RSI.num(),
        RDI.num(),
    ],
    // rbx, r12..r15: pushed at entry and popped before every return when a
    // sequence needs more than the caller-saved set (rbp is left alone for
    // frame-pointer unwinders).
    callee_saved: &[
        Gpr::RBX.num(),
        Gpr::R12.num(),
        Gpr::R13.num(),
        Gpr::R14.num(),
        Gpr::R15.num(),
    ],
    reserve: Some(RAX.num()),
};

const RAX: Gpr = Gpr::RAX;
const RCX: Gpr = Gpr::RCX;
const RDX: Gpr = Gpr::RDX;
const RSI: Gpr = Gpr::RSI;
const RDI: Gpr = Gpr::RDI;
const R8: Gpr = Gpr::R8;
const R9: Gpr = Gpr::R9;
const R10: Gpr = Gpr::R10;
const RSP: Gpr = Gpr::RSP;

/// A register number of [`REGS`] as a register: the table holds the 16
/// GPRs only, so an error here is an internal one.
fn phys(n: u8) -> Result<Gpr, LowerError> {
    Gpr::new(n).ok_or_else(|| LowerError::Internal(format!("register {n} is not one of 0..=15")))
}

/// A shift count (or a shift the LIR asks for) as the 6-bit count.
fn count(v: u64) -> Result<Imm6, LowerError> {
    Imm6::maybe_from(v).ok_or(LowerError::Shift(v))
}

/// The lowering's scratch register (caller-saved, not an argument).
pub const SCRATCH: Gpr = Gpr::R11;

/// Lowered function: instructions with their origins (labels included).
pub struct Lowered {
    pub insns: Vec<(Insn, Origin)>,
}

pub use crate::isa::error::LowerError;

/// Where instructions go: the lowering of one LIR instruction pushes them
/// with that instruction's origin.
pub(super) type Emit<'a> = &'a mut dyn FnMut(Insn);

/// x86-64's one invalidation, `invlpg` of an address: what an
/// [`Invalidation`] holds here.
#[derive(Clone, Copy, Debug)]
struct Invlpg;

/// The invalidation `name`, if it is `invlpg` with its one address
/// operand; an error shows the instruction without its immediates.
pub fn invalidation(name: &str, n: usize) -> Result<Invalidation, InvalidationError> {
    match (name, n) {
        ("invlpg", 1) => Ok(Invalidation::new(name, Invlpg)),
        ("invlpg", n) => Err(InvalidationError::NamedOperands {
            name: "invlpg".into(),
            what: "one address operand".into(),
            got: n,
        }),
        _ => Err(InvalidationError::NotX86 {
            mnemonic: crate::ir::insn_imm::split(name).0.into(),
        }),
    }
}

pub fn lower(f: &Func, alloc: &Allocation) -> Result<Lowered, LowerError> {
    let mut out = Lowered { insns: Vec::new() };
    let saved: Vec<Gpr> = (alloc.used_callee_saved(&REGS).into_iter())
        .map(phys)
        .collect::<Result<_, _>>()?;
    // Below the pushes; the kernel is built with -mno-red-zone, so
    // rsp moves. Nothing is called: no alignment to keep.
    let spill = Simm32::maybe_from(8 * u64::from(f.spill_slots()))
        .ok_or_else(|| LowerError::Internal("too many spill slots".into()))?;
    // Stack slots are addressed from rsp, which a push inside the body
    // would move: such a function saves at entry (frame.rs).
    let stack_args = (f.insts.iter())
        .any(|(i, _)| matches!(i, Inst::Arg { index, .. } if *index >= REGS.args.len()));
    let cx = Cx {
        alloc,
        entry_frame: spill != Simm32::ZERO || stack_args,
        saved,
        plan: super::fuse::plan(f, alloc, RCX.num()),
        void: f.void,
        spill,
    };
    if let (Some((_, origin)), true) = (f.insts.first(), cx.entry_frame) {
        for &p in &cx.saved {
            out.insns.push((Insn::Push { rs: p }, origin.clone()));
        }
        if cx.spill != Simm32::ZERO {
            out.insns.push((
                Insn::SubImm {
                    rd: RSP,
                    imm: cx.spill,
                },
                origin.clone(),
            ));
        }
    }
    for (k, (inst, origin)) in f.insts.iter().enumerate() {
        if cx.plan.skip.contains(&k) {
            continue;
        }
        let prev = out.insns.last().map(|(i, _)| i.clone());
        cx.inst(k, inst, prev.as_ref(), &mut |i| {
            out.insns.push((i, origin.clone()))
        })?;
    }
    if !cx.entry_frame {
        let (body, saved) = super::rename::callee_saved(out.insns, &cx.saved);
        out.insns = super::frame::wrap(body, &saved);
    }
    Ok(out)
}

/// What lowering one instruction needs to know about its function.
struct Cx<'a> {
    alloc: &'a Allocation,
    /// Callee-saved registers the allocation uses.
    saved: Vec<Gpr>,
    /// They are pushed at entry and popped before every return (else
    /// `frame::wrap` places them afterwards).
    entry_frame: bool,
    /// What one instruction's lowering learns from the others.
    plan: super::fuse::Plan,
    /// `-> void`: returns leave rax alone.
    void: bool,
    /// Bytes of spill slots below the pushed registers (slot `n` at
    /// `8n(%rsp)`).
    spill: Simm32,
}

impl Cx<'_> {
    /// The register of `v`; one the allocator never saw is an error, not
    /// rax.
    fn r(&self, v: VReg) -> Result<Gpr, LowerError> {
        phys(self.alloc.reg(v)?)
    }

    fn operand(&self, b: &Operand) -> Result<Src<Gpr>, LowerError> {
        Src::of(b, |v| self.r(v))
    }

    /// LIR instruction `k`; `prev` is the instruction emitted just before.
    fn inst(&self, k: usize, inst: &Inst, prev: Option<&Insn>, e: Emit) -> Result<(), LowerError> {
        match inst.role() {
            Role::Memory => return self.memory(k, inst, e),
            Role::Control => return self.control(k, inst, prev, e),
            Role::Compute => {}
        }
        let r = |v: &VReg| self.r(*v);
        match inst {
            Inst::Imm { dst, value } => imm(r(dst)?, *value, e),
            Inst::Copy { dst, .. } if self.plan.shift_at_copy.contains_key(&k) => {
                let s = self.plan.shift_at_copy[&k];
                let a = match s.konst {
                    Some(v) => Src::Imm(v),
                    None => Src::Reg(r(&s.a)?),
                };
                let (rd, rn) = (r(dst)?, r(&s.n)?);
                if s.shl && a == Src::Imm(1) && rd != rn {
                    // The copy's register was just set to 0 (the value
                    // for an amount of 64 and more): `1 << n` is its bit n.
                    e(Insn::Bts { rd, rn });
                } else {
                    super::fuse::shift_by_reg(s.shl, rd, a, rn, s.rcx_busy, e)
                }
            }
            Inst::Copy { dst, src } => mov(r(dst)?, r(src)?, e),
            Inst::Un { op, dst, src } if self.plan.nonzero.contains(&k) => {
                super::fuse::scan_nonzero(*op, r(dst)?, r(src)?, e)
                    .map_or_else(|| un(*op, r(dst)?, r(src)?, e), Ok)?
            }
            Inst::Un { op, dst, src } => un(*op, r(dst)?, r(src)?, e)?,
            Inst::Not { dst, src } => {
                mov(r(dst)?, r(src)?, e);
                e(Insn::Not { rd: r(dst)? });
            }
            Inst::Insert {
                dst,
                src,
                shift,
                width,
            } => insert(r(dst)?, r(src)?, *shift, *width, e)?,
            Inst::Bin { dst, .. } if self.plan.lea3.contains_key(&k) => {
                let (a, b, disp) = self.plan.lea3[&k];
                let (rd, ra, rb) = (r(dst)?, r(&a)?, r(&b)?);
                // rsp cannot index: it is the base then.
                let (base, index) = match Index::maybe_from(rb, Scale::of::<1>()) {
                    Some(i) => (ra, i),
                    None => (
                        rb,
                        Index::maybe_from(ra, Scale::of::<1>())
                            .ok_or_else(|| LowerError::Internal("lea of rsp + rsp".into()))?,
                    ),
                };
                e(Insn::Lea {
                    rd,
                    base,
                    index: Some(index),
                    disp: Simm32::from(disp),
                });
            }
            Inst::Bin { dst, .. } if self.plan.clz.contains_key(&k) => {
                let c = self.plan.clz[&k];
                super::fuse::bsr_plus(r(dst)?, r(&c.src)?, c, e)
            }
            Inst::Bin {
                op,
                dst,
                b: Operand::Reg(n),
                ..
            } if self.plan.const_left.contains_key(&k) => super::fuse::shift_by_reg(
                *op == BinOp::Shl,
                r(dst)?,
                Src::Imm(self.plan.const_left[&k]),
                r(n)?,
                self.plan.rcx_busy.contains(&k),
                e,
            ),
            Inst::Bin { op, dst, a, b } => bin(
                *op,
                r(dst)?,
                r(a)?,
                self.operand(b)?,
                self.plan.rcx_busy.contains(&k),
                e,
            )?,
            Inst::Barrier { name } => name.lower(e),
            Inst::Invalidate { name, operands } => {
                // The one form: the downcast only checks the target.
                let &Invlpg = name.op();
                e(Insn::Invlpg {
                    base: r(&operands[0])?,
                });
            }
            Inst::SpinHint => e(Insn::Pause),
            Inst::Sys { .. } => {
                return Err(LowerError::Internal(
                    "a Book III-E system instruction reached a target the check refuses it on"
                        .into(),
                ))
            }
            Inst::SetCmp { .. } => {
                return Err(LowerError::Internal(
                    "SetCmp on a target whose Description says set_cmp: false".into(),
                ))
            }
            // Memory and control instructions went to their own lowering above.
            _ => return Err(LowerError::Internal("not a compute instruction".into())),
        }
        Ok(())
    }

    /// Loads, stores, reservations, spills and stack arguments.
    fn memory(&self, k: usize, inst: &Inst, e: Emit) -> Result<(), LowerError> {
        if let Some(&value) = self.plan.store_imm.get(&k) {
            return super::fuse::store_imm(inst, value, |v| self.r(v), e);
        }
        if let Some(a) = MemAccess::of(inst) {
            let a = a.map(|v| self.r(v))?;
            let at = Access::new(a.base, a.offset, a.width, a.swap)?;
            if a.store {
                return store(a.data, &at, e);
            }
            load(a.data, &at, e);
            return Ok(());
        }
        let r = |v: &VReg| self.r(*v);
        match inst {
            Inst::Arg { dst, index } => {
                if let Some(disp) = stack_arg_disp(*index, self.saved.len(), self.spill) {
                    e(Insn::Load {
                        size: Size::Q,
                        rd: r(dst)?,
                        base: RSP,
                        index: None,
                        disp,
                    });
                }
            }
            // No load-reserve on x86-64: a plain load into rax (the
            // allocator pins it there), and `lock cmpxchg` stores only if
            // the memory still holds that value.
            Inst::LoadReserve {
                dst, base, width, ..
            } => load(r(dst)?, &Access::new(r(base)?, 0, *width, false)?, e),
            Inst::StoreCond {
                src,
                base,
                width,
                expected,
                retry,
                ..
            } => store_cond(r(src)?, r(base)?, *width, r(expected)?, *retry, e)?,
            // TSO: stores are not reordered with earlier loads or stores.
            Inst::StoreRelease { src, base, width } => {
                store(r(src)?, &Access::new(r(base)?, 0, *width, false)?, e)?
            }
            Inst::Spill { src, slot } => e(Insn::Store {
                size: Size::Q,
                base: RSP,
                index: None,
                disp: slot_disp(*slot)?,
                src: r(src)?,
            }),
            Inst::Reload { dst, slot } => e(Insn::Load {
                size: Size::Q,
                rd: r(dst)?,
                base: RSP,
                index: None,
                disp: slot_disp(*slot)?,
            }),
            _ => return Err(LowerError::Internal("not a memory instruction".into())),
        }
        Ok(())
    }

    /// Labels, jumps, branches and the return.
    fn control(
        &self,
        k: usize,
        inst: &Inst,
        prev: Option<&Insn>,
        e: Emit,
    ) -> Result<(), LowerError> {
        let r = |v: &VReg| self.r(*v);
        match inst {
            Inst::Label(l) => e(Insn::Label(*l)),
            Inst::Jump(l) => e(Insn::Jmp { target: *l }),
            Inst::FeatureJump { cap, .. } => return Err(unpatched(cap, NOT_PATCHED)),
            Inst::Branch { cmp, target, .. } if self.plan.and_test.contains_key(&k) => {
                let (a, b) = self.plan.and_test[&k];
                super::fuse::and_test(r(&a)?, self.operand(&b)?, e)?;
                let cond = if *cmp == Cmp::Eq { Cond::E } else { Cond::Ne };
                e(Insn::Jcc {
                    cond,
                    target: *target,
                });
            }
            Inst::Branch { cmp, a, b, target } => {
                branch(*cmp, r(a)?, self.operand(b)?, *target, prev, e)
            }
            Inst::BranchBit {
                a,
                bit,
                set,
                target,
            } => branch_bit(r(a)?, *bit, *set, *target, e)?,
            // `sub` leaves CF = borrow and ZF = (a == b): `ja` is a > b.
            Inst::SubBranchAbove { a, b, target } => {
                e(Insn::Sub {
                    rd: r(a)?,
                    rs: r(b)?,
                });
                e(Insn::Jcc {
                    cond: Cond::A,
                    target: *target,
                });
            }
            Inst::Ret { value } => {
                match value {
                    _ if self.void => {}
                    Operand::Imm(v) => imm(RAX, *v, e),
                    Operand::Reg(v) => mov(RAX, r(v)?, e),
                }
                if self.spill != Simm32::ZERO {
                    e(Insn::AddImm {
                        rd: RSP,
                        imm: self.spill,
                    });
                }
                if self.entry_frame {
                    for &p in self.saved.iter().rev() {
                        e(Insn::Pop { rd: p });
                    }
                }
                e(Insn::Ret);
            }

            _ => return Err(LowerError::Internal("not a control instruction".into())),
        }
        Ok(())
    }
}

/// What a spec with a capability can do instead on x86-64.
const NOT_PATCHED: &str = "x86-64 code is not patched by kernel alternatives: fix the feature with `--feature NAME=on|off`, or declare it without a capability to test it at run time";

/// `lock cmpxchg` of a reservation: stores `src` if memory still holds
/// `expected` (which must be rax), else retries.
fn store_cond(
    src: Gpr,
    base: Gpr,
    width: u32,
    expected: Gpr,
    retry: Label,
    e: Emit,
) -> Result<(), LowerError> {
    if expected != RAX {
        return Err(LowerError::Internal(
            "lock cmpxchg needs the expected value in rax".into(),
        ));
    }
    e(Insn::LockCmpxchg {
        size: size(width)?,
        base,
        disp: Disp32::ZERO,
        src,
    });
    e(Insn::Jcc {
        cond: Cond::Ne,
        target: retry,
    });
    Ok(())
}

/// Compare (or test) and `jcc`.
fn branch(cmp: Cmp, ra: Gpr, b: Src<Gpr>, target: Label, prev: Option<&Insn>, e: Emit) {
    match b {
        // test a,a clears CF, so Ltu/Geu against 0 come out
        // right too (never / always taken).
        // The instruction just before computed `a` and set ZF
        // from it (`sub $1,%r8; jne`): no test needed.
        Src::Imm(0)
            if matches!(cmp, Cmp::Eq | Cmp::Ne)
                && prev.is_some_and(|p| sets_zf_of(p) == Some(ra)) => {}
        Src::Imm(0) => e(Insn::Test { ra, rb: ra }),
        Src::Imm(v) => match Simm32::maybe_from(v) {
            Some(imm) => e(Insn::CmpImm { ra, imm }),
            None => {
                e(Insn::MovImm {
                    rd: SCRATCH,
                    imm: v,
                });
                e(Insn::CmpReg { ra, rb: SCRATCH });
            }
        },
        Src::Reg(rb) => e(Insn::CmpReg { ra, rb }),
    }
    let cond = match cmp {
        Cmp::Eq => Cond::E,
        Cmp::Ne => Cond::Ne,
        Cmp::Ltu => Cond::B,
        Cmp::Geu => Cond::Ae,
    };
    e(Insn::Jcc { cond, target });
}

/// To `target` when bit `bit` of `ra` is `set`: the sign for bit 63,
/// `test $imm32` where the bit is in a positive imm32, else `bt` (CF).
fn branch_bit(ra: Gpr, bit: u8, set: bool, target: Label, e: Emit) -> Result<(), LowerError> {
    let (when_set, when_clear) = match bit {
        63 => {
            e(Insn::Test { ra, rb: ra });
            (Cond::S, Cond::Ns)
        }
        0..=30 => {
            e(Insn::TestImm {
                ra,
                imm: Simm32::from(1 << bit),
            });
            (Cond::Ne, Cond::E)
        }
        _ => {
            let bit = Imm6::maybe_from(bit.into())
                .ok_or_else(|| LowerError::Internal(format!("bit {bit}")))?;
            e(Insn::Bt { ra, bit });
            (Cond::B, Cond::Ae)
        }
    };
    let cond = if set { when_set } else { when_clear };
    e(Insn::Jcc { cond, target });
    Ok(())
}

/// The register whose value an instruction leaves ZF describing, for the
/// arithmetic forms that set ZF from their result (`not`, `mov`, `imul`
/// and shifts do not, or not always).
fn sets_zf_of(i: &Insn) -> Option<Gpr> {
    use Insn::*;
    match *i {
        // reg, reg
        And { rd, .. } | Or { rd, .. } | Xor { rd, .. } | Add { rd, .. } | Sub { rd, .. } => {
            Some(rd)
        }
        // reg, imm32
        AndImm { rd, .. } | OrImm { rd, .. } | AddImm { rd, .. } | SubImm { rd, .. } => Some(rd),
        Neg { rd } => Some(rd),
        _ => None,
    }
}

/// A constant: `xor %r,%r` for zero (as compilers do; LIR never puts an
/// `Imm` between a compare and its branch), else the shortest `mov`.
pub(super) fn imm(rd: Gpr, value: u64, e: Emit) {
    if value == 0 {
        e(Insn::Xor { rd, rs: rd });
    } else {
        e(Insn::MovImm { rd, imm: value });
    }
}

pub(super) fn mov(rd: Gpr, rs: Gpr, e: Emit) {
    if rd != rs {
        e(Insn::MovReg { rd, rs });
    }
}

/// `dst = (src & mask(width)) << shift`.
fn insert(rd: Gpr, rs: Gpr, shift: u32, width: u32, e: Emit) -> Result<(), LowerError> {
    let sh = count(shift.into())?;
    let zx = match width {
        8 => Some(Size::B),
        16 => Some(Size::W),
        32 => Some(Size::D),
        _ => None,
    };
    if let (Some(size), true) = (zx, shift + width < 64) {
        // A byte, half or word field: the move is the mask.
        e(Insn::MovZx { size, rd, rs });
        if shift > 0 {
            e(Insn::ShlImm { rd, sh });
        }
        return Ok(());
    }
    mov(rd, rs, e);
    if shift + width >= 64 {
        // The field reaches bit 63: the shift drops the high bits itself.
        if shift > 0 {
            e(Insn::ShlImm { rd, sh });
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
            imm: Simm32::from((1 << width) - 1),
        });
        if shift > 0 {
            e(Insn::ShlImm { rd, sh });
        }
    } else {
        // A mask of 32 bits or more does not fit imm32: shift the field to
        // the top (dropping the high bits), then down into place. Two
        // instructions and no scratch, against movabs+and+shl.
        let up = 64 - width;
        e(Insn::ShlImm {
            rd,
            sh: count(up.into())?,
        });
        e(Insn::ShrImm {
            rd,
            sh: count((up - shift).into())?,
        });
    }
    Ok(())
}

fn reg_op(op: BinOp, rd: Gpr, rs: Gpr) -> Result<Insn, LowerError> {
    Ok(match op {
        BinOp::And => Insn::And { rd, rs },
        BinOp::Or => Insn::Or { rd, rs },
        BinOp::Xor => Insn::Xor { rd, rs },
        BinOp::Add => Insn::Add { rd, rs },
        BinOp::Sub => Insn::Sub { rd, rs },
        BinOp::Mul => Insn::Imul { rd, rs },
        BinOp::Shl | BinOp::Shr => {
            return Err(LowerError::Internal(
                "a shift by a register goes through shift_by_reg".into(),
            ))
        }
    })
}

fn bin(
    op: BinOp,
    rd: Gpr,
    ra: Gpr,
    b: Src<Gpr>,
    rcx_live: bool,
    e: Emit,
) -> Result<(), LowerError> {
    match b {
        Src::Reg(rn) if matches!(op, BinOp::Shl | BinOp::Shr) => {
            super::fuse::shift_by_reg(op == BinOp::Shl, rd, Src::Reg(ra), rn, rcx_live, e)
        }
        Src::Reg(rb) => {
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
            } else if let (BinOp::Add, Some(index)) = (op, Index::maybe_from(rb, Scale::of::<1>()))
            {
                // A third register: `lea` adds without the `mov`.
                e(Insn::Lea {
                    rd,
                    base: ra,
                    index: Some(index),
                    disp: Disp32::ZERO,
                });
            } else {
                let i = reg_op(op, rd, rb)?;
                e(Insn::MovReg { rd, rs: ra });
                e(i);
            }
        }
        Src::Imm(v) => {
            let disp = match op {
                BinOp::Add => Simm32::maybe_from(v),
                BinOp::Sub => Simm32::maybe_from(v.wrapping_neg()),
                _ => None,
            };
            if let (Some(disp), true) = (disp, rd != ra) {
                e(Insn::Lea {
                    rd,
                    base: ra,
                    index: None,
                    disp,
                });
                return Ok(());
            }
            let i = match (op, Simm32::maybe_from(v)) {
                (BinOp::Shl | BinOp::Shr, _) if v >= 64 => {
                    return Err(LowerError::Shift(v));
                }
                (BinOp::Shl | BinOp::Shr, _) if v == 0 => None,
                (BinOp::Mul, _) if v == 1 => None,
                (BinOp::Shl, _) => Some(Insn::ShlImm { rd, sh: count(v)? }),
                (BinOp::Shr, _) => Some(Insn::ShrImm { rd, sh: count(v)? }),
                (BinOp::And, Some(imm)) => Some(Insn::AndImm { rd, imm }),
                (BinOp::Or, Some(imm)) => Some(Insn::OrImm { rd, imm }),
                (BinOp::Add, Some(imm)) => Some(Insn::AddImm { rd, imm }),
                (BinOp::Sub, Some(imm)) => Some(Insn::SubImm { rd, imm }),
                (BinOp::Xor, _) if v == u64::MAX => Some(Insn::Not { rd }),
                (BinOp::Mul, _) if v.is_power_of_two() => Some(Insn::ShlImm {
                    rd,
                    sh: count(v.trailing_zeros().into())?,
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

/// Bit counts without BMI/ABM/POPCNT (the kernel's x86-64 baseline):
/// `bsr`/`bsf` leave the destination undefined for 0 and set ZF, so the
/// value for 0 comes from the scratch register by `cmove`. clz is
/// `63 - bsr`, computed as `bsr ^ 63` (as compilers do), with 127 for 0
/// so that 127 ^ 63 = 64. Popcount is [`hweight::HWEIGHT64`].
fn un(op: UnOp, rd: Gpr, rs: Gpr, e: Emit) -> Result<(), LowerError> {
    match op {
        UnOp::Clz => {
            // Into another register, 127 goes there first and a scan of 0
            // leaves it (see `Insn::Bsr`).
            if rd == rs {
                bit_scan(Insn::Bsr { rd, rs }, rd, 127, e);
            } else {
                e(Insn::MovImm { rd, imm: 127 });
                e(Insn::Bsr { rd, rs });
            }
            e(Insn::XorImm {
                rd,
                imm: Simm32::of::<63>(),
            });
        }
        UnOp::Ctz => bit_scan(Insn::Bsf { rd, rs }, rd, 64, e),
        UnOp::Popcount => {
            mov(rd, rs, e);
            let reg = hweight_regs(rd, SCRATCH);
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
                            sh: count(n.into())?,
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
    Ok(())
}

/// `bsr`/`bsf` (`scan`) into `rd`, `for_zero` there instead when the
/// source is 0 (the scan then leaves `rd` undefined and sets ZF): the
/// value waits in the scratch register for `cmove`.
fn bit_scan(scan: Insn, rd: Gpr, for_zero: u64, e: Emit) {
    e(Insn::MovImm {
        rd: SCRATCH,
        imm: for_zero,
    });
    e(scan);
    e(Insn::Cmove { rd, rs: SCRATCH });
}

#[cfg(test)]
#[path = "lower_tests.rs"]
mod tests;
