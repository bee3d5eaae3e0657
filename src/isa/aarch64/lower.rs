//! LIR -> AArch64 instructions (A64, little-endian, AAPCS64).
//!
//! ABI (AAPCS64, "Procedure Call Standard for the Arm 64-bit
//! Architecture", 6.1.1): arguments in x0..x7, result in x0, x9..x15
//! temporaries, x8 the indirect-result register (free in a function that
//! returns `long`), all of x0..x15 caller-saved. We use those first; when
//! they run out, x19..x28 (callee-saved), stored below the caller's sp at
//! entry (sp moved down 16-byte aligned) and reloaded before every return.
//! Arguments past x7 are read from the caller's stack, `[sp]`, `[sp, #8]`...
//! (plus that frame), where they are used. x16/x17 (IP0/IP1,
//! intra-procedure-call scratch) are reserved as this lowering's scratch
//! registers: x16 for materialised immediates, byte-reversed store data and
//! popcount, x17 for out-of-range memory offsets. x18 (platform register)
//! and x29/x30 (FP/LR) are never touched.

pub use super::constants::materialize;
use super::insn::{
    xreg, Bitfield, Cond, Imm12, ImmLogic, ImmShift, Insn, Label, RegOrSp, RegOrZr, Size, SpAdjust,
    TlbiOp, UImm12Scaled, XReg,
};
use crate::ir::expr::BinOp;
use crate::ir::isa::InvalidationError;
use crate::isa::hweight::{self, Step};
use crate::isa::invalidation::Invalidation;
use crate::isa::lower_common::{hweight_regs, MemAccess, Src};
use crate::isa::scaffold;
use crate::lir::regalloc::{Allocation, RegFile};
use crate::lir::role::Role;
use crate::lir::{Cmp, Func, Inst, Operand, Origin, UnOp, VReg};
use rustc_hash::FxHashSet;

pub const REGS: RegFile = RegFile {
    args: &[0, 1, 2, 3, 4, 5, 6, 7],
    pool: &[9, 10, 11, 12, 13, 14, 15, 8, 7, 6, 5, 4, 3, 2, 1, 0],
    // x19..x28: stored below sp at entry and reloaded before every
    // return when the volatile set runs out (AAPCS64 6.1.1).
    callee_saved: &[19, 20, 21, 22, 23, 24, 25, 26, 27, 28],
    reserve: None,
};

/// IP0: immediates, byte-reversed store data.
const SCRATCH: XReg = xreg(16);
/// IP1: memory offsets that do not fit the scaled immediate form.
const SCRATCH_OFF: XReg = xreg(17);
/// The result register.
const X0: XReg = xreg(0);

/// `[sp, #off]` of incoming argument `index` (0-based) when it is passed
/// on the stack. AAPCS64 6.8.2 (C.16, C.17): past x7, each 64-bit argument
/// takes the next 8-byte slot from the stack pointer at the call (gcc's
/// caller stores the ninth and tenth with `stp x3, x2, [sp]`). Only a
/// function that saves callee-saved registers or spills moves sp, by `frame` bytes
/// at entry (16-byte aligned, AAPCS64 6.4.5.1) and back before each return.
fn stack_arg_offset(index: usize, frame: u32) -> Option<u32> {
    scaffold::stack_arg_offset(index, REGS.args.len(), frame)
}

/// Lowered function: instructions with their origins (labels included).
pub struct Lowered {
    pub insns: Vec<(Insn, Origin)>,
}

pub use crate::isa::error::LowerError;

pub fn lower(f: &Func, alloc: &Allocation) -> Result<Lowered, LowerError> {
    let mut out = Lowered { insns: Vec::new() };
    let saved: Vec<XReg> = alloc
        .used_callee_saved(&REGS)
        .into_iter()
        .map(phys)
        .collect::<Result<_, _>>()?;
    // A TLBI operand of constant 0 reads XZR, as the kernel's "rZ"
    // constraint makes GCC emit (`tlbi vale1is, xzr`).
    let zeros = scaffold::zero_vregs(f);
    let (frame, saved) = frame(&saved, f.spill_slots())?;
    let cx = Cx {
        alloc,
        xzr_only: xzr_only(f, &zeros),
        zeros,
        frame,
        saved,
        void: f.void,
    };
    if let Some((_, origin)) = f.insts.first() {
        cx.callee_saved(false, &mut |i| out.insns.push((i, origin.clone())));
    }
    for (inst, origin) in &f.insts {
        cx.inst(inst, &mut |i| out.insns.push((i, origin.clone())))?;
    }
    Ok(out)
}

/// The frame that keeps the callee-saved registers `saved` below the
/// caller's sp, then `spills` spill slots, and the slot of each register
/// in it.
fn frame(saved: &[XReg], spills: u32) -> Result<(SpAdjust, Vec<(XReg, UImm12Scaled)>), LowerError> {
    let internal = || LowerError::Internal(format!("no frame for {} registers", saved.len()));
    let bytes = scaffold::frame_size(saved.len() + spills as usize);
    let frame = SpAdjust::maybe_from(bytes.into()).ok_or_else(internal)?;
    let slots = (0u64..)
        .zip(saved)
        .map(|(i, &r)| Some((r, UImm12Scaled::maybe_from(8 * i, Size::X)?)))
        .collect::<Option<_>>()
        .ok_or_else(internal)?;
    Ok((frame, slots))
}

/// The zero registers whose every read is a TLBI operand (which reads
/// XZR instead).
fn xzr_only(f: &Func, zeros: &FxHashSet<VReg>) -> FxHashSet<VReg> {
    let mut zeros = zeros.clone();
    for (inst, _) in &f.insts {
        if !matches!(inst, Inst::Invalidate { .. }) {
            inst.each_use(|v| {
                zeros.remove(&v);
            });
        }
    }
    zeros
}

/// What lowering one instruction needs to know about its function.
struct Cx<'a> {
    alloc: &'a Allocation,
    /// Virtual registers that only ever hold 0.
    zeros: FxHashSet<VReg>,
    /// Those of them read only where XZR stands in: their `Imm 0` is
    /// dead and not emitted.
    xzr_only: FxHashSet<VReg>,
    /// Callee-saved registers the allocation uses, each with its slot in
    /// the frame below the caller's sp.
    saved: Vec<(XReg, UImm12Scaled)>,
    frame: SpAdjust,
    /// `-> void`: returns leave x0 alone.
    void: bool,
}

impl Cx<'_> {
    /// The register of `v`; one the allocator never saw is an error, not
    /// x0.
    fn r(&self, v: VReg) -> Result<XReg, LowerError> {
        phys(self.alloc.reg(v)?)
    }

    /// At entry (`load` false): moves sp down by the frame and stores the
    /// callee-saved registers there. Before a return: reloads them and
    /// frees the frame.
    fn callee_saved(&self, load: bool, e: &mut dyn FnMut(Insn)) {
        if self.frame.bytes() == 0 {
            return;
        }
        if !load {
            e(Insn::SpSub { imm: self.frame });
        }
        for &(rt, off) in &self.saved {
            let (rt, rn) = (rt.into(), RegOrSp::Sp);
            e(if load {
                Insn::Ldr { rt, rn, off }
            } else {
                Insn::Str { rt, rn, off }
            });
        }
        if load {
            e(Insn::SpAdd { imm: self.frame });
        }
    }

    /// `[sp, #off]` of spill slot `slot`: after the callee-saved
    /// registers in the frame.
    fn spill_slot(&self, slot: u32) -> Result<UImm12Scaled, LowerError> {
        UImm12Scaled::maybe_from(8 * (self.saved.len() as u64 + u64::from(slot)), Size::X)
            .ok_or_else(|| LowerError::OutOfReach(format!("spill slot {slot}")))
    }

    /// One LIR instruction.
    fn inst(&self, inst: &Inst, e: &mut dyn FnMut(Insn)) -> Result<(), LowerError> {
        match inst.role() {
            Role::Memory => return self.memory(inst, e),
            Role::Control => return self.control(inst, e),
            Role::Compute => {}
        }
        let r = |v: &VReg| self.r(*v);
        match inst {
            Inst::Imm { dst, .. } if self.xzr_only.contains(dst) => {}
            Inst::Imm { dst, value } => materialize(r(dst)?, *value, e),
            Inst::Copy { dst, src } => mov(r(dst)?, r(src)?, e),
            Inst::Not { dst, src } => not(r(dst)?, r(src)?, e),
            Inst::Un { op, dst, src } => un(*op, r(dst)?, r(src)?, e)?,
            Inst::Insert {
                dst,
                src,
                shift,
                width,
            } => insert(r(dst)?, r(src)?, *shift, *width, e),
            Inst::Bin { op, dst, a, b } => bin(*op, r(dst)?, r(a)?, Src::of(b, |v| self.r(v))?, e)?,
            Inst::Barrier { name } => name.lower(e),
            Inst::Invalidate { name, operands } => e(self.invalidate(*name.op(), operands)?),
            Inst::SpinHint => {}
            Inst::Sys { .. } => {
                return Err(LowerError::Internal(
                    "a Book III-E system instruction reached a target the check refuses it on"
                        .into(),
                ))
            }
            Inst::SetCmp { cmp, dst, a, b } => {
                let cond = self.compare(*cmp, r(a)?, b, e)?;
                e(Insn::Cset {
                    rd: r(dst)?.into(),
                    cond,
                });
            }
            // Memory and control instructions went to their own lowering above.
            _ => return Err(LowerError::Internal("not a compute instruction".into())),
        }
        Ok(())
    }

    /// Loads, stores, reservations, spills and stack arguments.
    fn memory(&self, inst: &Inst, e: &mut dyn FnMut(Insn)) -> Result<(), LowerError> {
        if let Some(access) = MemAccess::of(inst) {
            return mem(&access.map(|v| self.r(v))?, e);
        }
        let r = |v: &VReg| self.r(*v);
        match inst {
            Inst::Spill { src, slot } => e(Insn::Str {
                rt: r(src)?.into(),
                rn: RegOrSp::Sp,
                off: self.spill_slot(*slot)?,
            }),
            Inst::Reload { dst, slot } => e(Insn::Ldr {
                rt: r(dst)?.into(),
                rn: RegOrSp::Sp,
                off: self.spill_slot(*slot)?,
            }),
            Inst::Arg { dst, index } => {
                if let Some(off) = stack_arg_offset(*index, self.frame.bytes().into()) {
                    let off = UImm12Scaled::maybe_from(off.into(), Size::X)
                        .ok_or_else(|| LowerError::OutOfReach(format!("argument {index}")))?;
                    e(Insn::Ldr {
                        rt: r(dst)?.into(),
                        rn: RegOrSp::Sp,
                        off,
                    });
                }
            }
            Inst::LoadReserve {
                dst,
                base,
                width,
                acquire,
            } => {
                let (size, rt, rn) = (xsize(*width), r(dst)?.into(), r(base)?.into());
                e(if *acquire {
                    Insn::Ldaxr { size, rt, rn }
                } else {
                    Insn::Ldxr { size, rt, rn }
                });
            }
            Inst::StoreCond {
                src,
                base,
                width,
                release,
                retry,
                ..
            } => store_cond(r(src)?, r(base)?, *width, *release, *retry, e),
            Inst::StoreRelease { src, base, width } => e(Insn::Stlr {
                size: xsize(*width),
                rt: r(src)?.into(),
                rn: r(base)?.into(),
            }),
            _ => return Err(LowerError::Internal("not a memory instruction".into())),
        }
        Ok(())
    }

    /// Labels, jumps, branches and the return.
    fn control(&self, inst: &Inst, e: &mut dyn FnMut(Insn)) -> Result<(), LowerError> {
        let r = |v: &VReg| self.r(*v);
        match inst {
            Inst::Label(l) => e(Insn::Label(*l)),
            Inst::Jump(l) => e(Insn::B { target: *l }),
            Inst::FeatureJump { cap, target } => e(feature_jump(cap, *target)?),
            Inst::Branch { cmp, a, b, target } => self.branch(*cmp, r(a)?, b, *target, e)?,
            Inst::BranchBit {
                a,
                bit,
                set,
                target,
            } => {
                let bit = ImmShift::maybe_from(u64::from(*bit))
                    .ok_or_else(|| LowerError::Internal(format!("bit {bit}")))?;
                let (rt, target) = (r(a)?.into(), *target);
                e(if *set {
                    Insn::Tbnz { rt, bit, target }
                } else {
                    Insn::Tbz { rt, bit, target }
                });
            }
            Inst::SubBranchAbove { a, b, target } => {
                let (rn, rm) = (r(a)?.into(), r(b)?.into());
                e(Insn::SubsReg { rd: rn, rn, rm });
                e(Insn::BCond {
                    cond: Cond::Hi,
                    target: *target,
                });
            }
            Inst::Ret { value } => self.ret(value, e)?,
            _ => return Err(LowerError::Internal("not a control instruction".into())),
        }
        Ok(())
    }

    /// The result into x0 (a `-> void` function leaves it alone), the
    /// callee-saved registers reloaded, `ret`.
    fn ret(&self, value: &Operand, e: &mut dyn FnMut(Insn)) -> Result<(), LowerError> {
        match value {
            _ if self.void => {}
            Operand::Imm(v) => materialize(X0, *v, e),
            Operand::Reg(v) => mov(X0, self.r(*v)?, e),
        }
        self.callee_saved(true, e);
        e(Insn::Ret);
        Ok(())
    }

    /// `tlbi <op>[, xt]` (`operands` as many as `op` takes); a register
    /// operand known to be 0 is read from XZR.
    fn invalidate(&self, op: TlbiOp, operands: &[VReg]) -> Result<Insn, LowerError> {
        let rt = match operands {
            [x] if self.zeros.contains(x) => Some(RegOrZr::Zr),
            [x] => Some(self.r(*x)?.into()),
            _ => None,
        };
        Ok(Insn::Tlbi { op, rt })
    }

    /// `cbz`/`cbnz` against 0, else a compare (the immediate in x16 when
    /// it does not fit 12 bits) and `b.cond`.
    fn branch(
        &self,
        cmp: Cmp,
        rn: XReg,
        b: &Operand,
        target: Label,
        e: &mut dyn FnMut(Insn),
    ) -> Result<(), LowerError> {
        match (cmp, b) {
            (Cmp::Eq, Operand::Imm(0)) => {
                e(Insn::Cbz {
                    rt: rn.into(),
                    target,
                });
                return Ok(());
            }
            (Cmp::Ne, Operand::Imm(0)) => {
                e(Insn::Cbnz {
                    rt: rn.into(),
                    target,
                });
                return Ok(());
            }
            _ => {}
        }
        let cond = self.compare(cmp, rn, b, e)?;
        e(Insn::BCond { cond, target });
        Ok(())
    }

    /// `cmp` of `rn` with `b` (the immediate in x16 when it does not fit
    /// 12 bits); the condition that holds when `rn cmp b` does.
    fn compare(
        &self,
        cmp: Cmp,
        rn: XReg,
        b: &Operand,
        e: &mut dyn FnMut(Insn),
    ) -> Result<Cond, LowerError> {
        match b {
            Operand::Imm(v) => match Imm12::maybe_from(*v) {
                Some(imm) => e(Insn::CmpImm { rn, imm }),
                None => {
                    materialize(SCRATCH, *v, e);
                    e(Insn::CmpReg {
                        rn: rn.into(),
                        rm: SCRATCH.into(),
                    });
                }
            },
            Operand::Reg(b) => e(Insn::CmpReg {
                rn: rn.into(),
                rm: self.r(*b)?.into(),
            }),
        }
        Ok(match cmp {
            Cmp::Eq => Cond::Eq,
            Cmp::Ne => Cond::Ne,
            Cmp::Ltu => Cond::Lo,
            Cmp::Geu => Cond::Hs,
        })
    }
}

/// A register number of [`REGS`] as a register: the table holds x0..x30
/// only, so an error here is an internal one.
fn phys(n: u8) -> Result<XReg, LowerError> {
    XReg::new(n).ok_or_else(|| LowerError::Internal(format!("register {n} is not one of x0..x30")))
}

/// No MVN/ORN in the model: xor with all ones.
fn not(rd: XReg, rn: XReg, e: &mut dyn FnMut(Insn)) {
    e(Insn::Mvn {
        rd: rd.into(),
        rm: rn.into(),
    });
}

/// `rd = (rn & mask(width)) << shift`.
fn insert(rd: XReg, rn: XReg, shift: u32, width: u32, e: &mut dyn FnMut(Insn)) {
    // The bits that stay inside the register; none is no field.
    let width = width.min(64u32.saturating_sub(shift));
    match Bitfield::maybe_from(shift, width) {
        None => materialize(rd, 0, e),
        // The field reaches bit 63: a plain shift left.
        Some(field) if field.reaches_top() => lsl(rd, rn, field.lsb(), e),
        // UBFIZ (UBFM alias): (x & mask(width)) << lsb.
        Some(field) => e(Insn::Ubfiz {
            rd: rd.into(),
            rn: rn.into(),
            field,
        }),
    }
}

/// `rd = rn << sh`, a move when `sh` is 0.
fn lsl(rd: XReg, rn: XReg, sh: ImmShift, e: &mut dyn FnMut(Insn)) {
    if sh.get() == 0 {
        mov(rd, rn, e);
    } else {
        e(Insn::LslImm {
            rd: rd.into(),
            rn: rn.into(),
            sh,
        });
    }
}

/// The store-exclusive of a reservation; its status (0 = stored) goes to
/// the scratch register, and a failed store retries.
fn store_cond(
    rt: XReg,
    rn: XReg,
    width: u32,
    release: bool,
    retry: Label,
    e: &mut dyn FnMut(Insn),
) {
    let (size, rs, rt, rn) = (xsize(width), SCRATCH.into(), rt.into(), rn.into());
    e(if release {
        Insn::Stlxr { size, rs, rt, rn }
    } else {
        Insn::Stxr { size, rs, rt, rn }
    });
    e(Insn::Cbnz {
        rt: SCRATCH.into(),
        target: retry,
    });
}

/// A branch the kernel patches in at boot (`alternative_if`): only for
/// arm64 cpucaps.
fn feature_jump(cap: &str, target: Label) -> Result<Insn, LowerError> {
    if crate::ir::feature::patching_of(cap) != Some(crate::ir::feature::Patching::Arm64Alternative)
    {
        return Err(LowerError::Capability {
            cap: cap.to_string(),
            advice: "not an arm64 capability: aarch64 code is patched for `ARM64_*` cpucaps",
        });
    }
    Ok(Insn::AltB {
        cap: cap.to_string(),
        target,
    })
}

/// Bit counts: `clz` is defined at 0 (64), ctz is `clz` of the reversed
/// bits. Base ARMv8 has no popcount for general registers (`cnt` is
/// Advanced SIMD): [`hweight::HWEIGHT64`], whose masks are all bitmask
/// immediates, with x16 as its scratch register.
fn un(op: UnOp, rd: XReg, rn: XReg, e: &mut dyn FnMut(Insn)) -> Result<(), LowerError> {
    match op {
        UnOp::Clz => e(Insn::Clz {
            rd: rd.into(),
            rn: rn.into(),
        }),
        UnOp::Ctz => {
            let rd = rd.into();
            e(Insn::Rbit { rd, rn: rn.into() });
            e(Insn::Clz { rd, rn: rd });
        }
        UnOp::Popcount => popcount(rd, rn, e)?,
    }
    Ok(())
}

/// [`hweight::HWEIGHT64`] with `rd` as its destination and x16 as its
/// scratch register. Its masks are bitmask immediates and its shifts
/// below 64; a table that broke that would be an internal error.
fn popcount(rd: XReg, rn: XReg, e: &mut dyn FnMut(Insn)) -> Result<(), LowerError> {
    let internal = |what: &str| LowerError::Internal(format!("hweight {what} not encodable"));
    mov(rd, rn, e);
    let reg = hweight_regs(rd, SCRATCH);
    let (d, scratch) = (RegOrZr::from(rd), RegOrZr::from(SCRATCH));
    for step in hweight::HWEIGHT64 {
        match step {
            Step::And { dst, k } => e(Insn::AndImm {
                rd: reg(dst),
                rn: d,
                imm: ImmLogic::maybe_from(k).ok_or_else(|| internal("mask"))?,
            }),
            Step::Shr { dst, src, n } => e(Insn::LsrImm {
                rd: reg(dst).into(),
                rn: reg(src).into(),
                sh: ImmShift::maybe_from(n.into()).ok_or_else(|| internal("shift"))?,
            }),
            Step::Sub => e(Insn::Sub {
                rd: d,
                rn: d,
                rm: scratch,
            }),
            Step::Add => e(Insn::Add {
                rd: d,
                rn: d,
                rm: scratch,
            }),
            Step::Mul(k) => {
                materialize(SCRATCH, k, e);
                e(Insn::Mul {
                    rd: d,
                    rn: d,
                    rm: scratch,
                });
            }
        }
    }
    Ok(())
}

fn xsize(width: u32) -> Size {
    match width {
        8 => Size::B,
        16 => Size::H,
        32 => Size::W,
        _ => Size::X,
    }
}

fn mov(rd: XReg, rm: XReg, e: &mut dyn FnMut(Insn)) {
    if rd != rm {
        e(Insn::MovReg {
            rd: rd.into(),
            rm: rm.into(),
        });
    }
}

/// The `tlbi <op>` named `name` (with or without the `tlbi ` prefix),
/// if it takes `n` register operands: the `vmalle1*` operations take
/// none, the others one (Arm ARM C5.5 "TLBI"). Checked before lowering,
/// so the error points at the spec statement.
pub fn invalidation(name: &str, n: usize) -> Result<Invalidation, InvalidationError> {
    let op = name.strip_prefix("tlbi ").unwrap_or(name).trim();
    let Some(op) = TlbiOp::ALL.into_iter().find(|o| o.name() == op) else {
        return Err(InvalidationError::NoSuch {
            target: "aarch64",
            name: name.into(),
            also: "",
        });
    };
    let takes = usize::from(op.takes_reg());
    if takes != n {
        return Err(InvalidationError::Operands {
            name: name.into(),
            takes: takes.to_string(),
            got: n,
        });
    }
    Ok(Invalidation::new(name, op))
}

fn bin(
    op: BinOp,
    rd: XReg,
    rn: XReg,
    b: Src<XReg>,
    e: &mut dyn FnMut(Insn),
) -> Result<(), LowerError> {
    let imm = match b {
        Src::Reg(rm) => {
            reg_op(op, rd, rn, rm, e);
            return Ok(());
        }
        Src::Imm(v) => v,
    };
    let shift = ImmShift::maybe_from(imm);
    let logic = ImmLogic::maybe_from(imm);
    // The immediate itself, or its negation (add -k is sub k).
    let arith = (
        Imm12::maybe_from(imm),
        Imm12::maybe_from(imm.wrapping_neg()),
    );
    match (op, shift, logic, arith, pow2_shift(imm)) {
        (BinOp::Shl | BinOp::Shr, None, ..) => return Err(LowerError::Shift(imm)),
        (BinOp::Shl | BinOp::Shr | BinOp::Or | BinOp::Xor | BinOp::Add | BinOp::Sub, ..)
            if imm == 0 =>
        {
            mov(rd, rn, e)
        }
        (BinOp::Shl, Some(sh), ..) => e(Insn::LslImm {
            rd: rd.into(),
            rn: rn.into(),
            sh,
        }),
        (BinOp::Shr, Some(sh), ..) => e(Insn::LsrImm {
            rd: rd.into(),
            rn: rn.into(),
            sh,
        }),
        (BinOp::And, ..) if imm == u64::MAX => mov(rd, rn, e),
        (BinOp::And, ..) if imm == 0 => materialize(rd, 0, e),
        (BinOp::And, _, Some(imm), ..) => e(Insn::AndImm {
            rd,
            rn: rn.into(),
            imm,
        }),
        (BinOp::Or, _, Some(imm), ..) => e(Insn::OrrImm {
            rd,
            rn: rn.into(),
            imm,
        }),
        (BinOp::Add, _, _, (Some(imm), _), _) | (BinOp::Sub, _, _, (None, Some(imm)), _) => {
            e(Insn::AddImm {
                rd,
                rn,
                imm,
                lsl12: false,
            })
        }
        (BinOp::Sub, _, _, (Some(imm), _), _) | (BinOp::Add, _, _, (None, Some(imm)), _) => {
            e(Insn::SubImm {
                rd,
                rn,
                imm,
                lsl12: false,
            })
        }
        // A multiple of 4K below 16M: the same instructions with `lsl #12`
        // (a page count's `+ 0x1000`), not a constant built in x16.
        (BinOp::Add | BinOp::Sub, ..) if high_arith(op, rd, rn, imm).is_some() => {
            if let Some(i) = high_arith(op, rd, rn, imm) {
                e(i)
            }
        }
        (BinOp::Mul, .., Some(sh)) => lsl(rd, rn, sh, e),
        _ => {
            materialize(SCRATCH, imm, e);
            reg_op(op, rd, rn, SCRATCH, e);
        }
    }
    Ok(())
}

/// `log2(v)` when `v` is a power of two: multiplying by `v` is a shift
/// left by it.
fn pow2_shift(v: u64) -> Option<ImmShift> {
    ImmShift::maybe_from(v.trailing_zeros().into()).filter(|_| v.is_power_of_two())
}

fn reg_op(op: BinOp, rd: XReg, rn: XReg, rm: XReg, e: &mut dyn FnMut(Insn)) {
    let (rd, rn, rm) = (rd.into(), rn.into(), rm.into());
    e(match op {
        BinOp::Or => Insn::Orr { rd, rn, rm },
        BinOp::Xor => Insn::Eor { rd, rn, rm },
        BinOp::And => Insn::And { rd, rn, rm },
        BinOp::Add => Insn::Add { rd, rn, rm },
        BinOp::Sub => Insn::Sub { rd, rn, rm },
        BinOp::Mul => Insn::Mul { rd, rn, rm },
        // LSLV/LSRV take the amount modulo 64.
        BinOp::Shl => Insn::LslReg { rd, rn, rm },
        BinOp::Shr => Insn::LsrReg { rd, rn, rm },
    })
}

/// A device or memory access. A64 has no byte-reversing loads or stores:
/// a swapped store reverses into x16 first, a swapped load reverses the
/// loaded register in place (the 32/16-bit forms zero the upper bits,
/// as the zero-extending load did).
fn mem(access: &MemAccess<XReg>, e: &mut dyn FnMut(Insn)) -> Result<(), LowerError> {
    let MemAccess {
        store,
        data: rt,
        base,
        offset,
        width,
        swap,
        ..
    } = *access;
    if !matches!(width, 8 | 16 | 32 | 64) {
        return Err(LowerError::Width {
            width,
            what: "access",
            target: "aarch64",
        });
    }
    let size = xsize(width);
    let swap = swap && width > 8;
    let reverse = |rd: XReg, rn: XReg| {
        let (rd, rn) = (rd.into(), rn.into());
        match size {
            Size::X => Insn::Rev { rd, rn },
            Size::W => Insn::Rev32W { rd, rn },
            _ => Insn::Rev16W { rd, rn },
        }
    };
    let data = if store && swap {
        e(reverse(SCRATCH, rt));
        SCRATCH
    } else {
        rt
    };
    let (data, base) = (RegOrZr::from(data), RegOrSp::from(base));
    if let Some(off) = UImm12Scaled::maybe_from(offset, size) {
        e(if store {
            Insn::Str {
                rt: data,
                rn: base,
                off,
            }
        } else {
            Insn::Ldr {
                rt: data,
                rn: base,
                off,
            }
        });
    } else {
        materialize(SCRATCH_OFF, offset, e);
        e(if store {
            Insn::StrReg {
                size,
                rt: data,
                rn: base,
                rm: SCRATCH_OFF.into(),
                scaled: false,
            }
        } else {
            Insn::LdrReg {
                size,
                rt: data,
                rn: base,
                rm: SCRATCH_OFF.into(),
                scaled: false,
            }
        });
    }
    if !store && swap {
        e(reverse(rt, rt));
    }
    Ok(())
}

#[cfg(test)]
#[path = "lower_tests.rs"]
mod tests;

/// `v` as `k << 12` with `k` an [`Imm12`], if it is one.
fn high_imm12(v: u64) -> Option<Imm12> {
    if v & 0xfff != 0 {
        return None;
    }
    Imm12::maybe_from(v >> 12)
}

/// `rd = rn op imm` (add or subtract) as one ADD/SUB with `lsl #12`:
/// `imm` or its negation a nonzero multiple of 4K below 16M.
fn high_arith(op: BinOp, rd: XReg, rn: XReg, imm: u64) -> Option<Insn> {
    let (add, k) = match (op, high_imm12(imm), high_imm12(imm.wrapping_neg())) {
        _ if imm == 0 => return None,
        (BinOp::Add, Some(k), _) => (true, k),
        (BinOp::Sub, Some(k), _) => (false, k),
        (BinOp::Add, None, Some(k)) => (false, k),
        (BinOp::Sub, None, Some(k)) => (true, k),
        _ => return None,
    };
    Some(if add {
        Insn::AddImm {
            rd,
            rn,
            imm: k,
            lsl12: true,
        }
    } else {
        Insn::SubImm {
            rd,
            rn,
            imm: k,
            lsl12: true,
        }
    })
}
