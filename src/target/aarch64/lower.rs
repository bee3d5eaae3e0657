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

use super::insn::{logical_imm_encodable, BarrierOpt, Cond, Insn, Reg, Size, TlbiOp};
use crate::ir::expr::BinOp;
use crate::lir::regalloc::{Allocation, RegFile};
use crate::lir::{Cmp, Func, Inst, Operand, Origin, UnOp};
use crate::target::barriers;
use crate::target::hweight::{self, Loc, Step};
use crate::target::scaffold;
use crate::target::Target;

pub const REGS: RegFile = RegFile {
    args: &[0, 1, 2, 3, 4, 5, 6, 7],
    pool: &[9, 10, 11, 12, 13, 14, 15, 8, 7, 6, 5, 4, 3, 2, 1, 0],
    // x19..x28: stored below sp at entry and reloaded before every
    // return when the volatile set runs out (AAPCS64 6.1.1).
    callee_saved: &[19, 20, 21, 22, 23, 24, 25, 26, 27, 28],
    reserve: None,
};

/// IP0: immediates, byte-reversed store data.
const SCRATCH: Reg = 16;
/// IP1: memory offsets that do not fit the scaled immediate form.
const SCRATCH_OFF: Reg = 17;
/// Register number 31 reads as zero in the forms we use it in.
const XZR: Reg = 31;

/// As a load/store base, register 31 is SP (Arm ARM C1.2.5).
const SP: Reg = 31;

/// `[sp, #off]` of incoming argument `index` (0-based) when it is passed
/// on the stack. AAPCS64 6.8.2 (C.16, C.17): past x7, each 64-bit argument
/// takes the next 8-byte slot from the stack pointer at the call (gcc's
/// caller stores the ninth and tenth with `stp x3, x2, [sp]`). Only a
/// function that saves callee-saved registers moves sp, by `frame` bytes
/// at entry (16-byte aligned, AAPCS64 6.4.5.1) and back before each return.
fn stack_arg_offset(index: usize, frame: u32) -> Option<u32> {
    scaffold::stack_arg_offset(index, REGS.args.len(), frame)
}

/// Lowered function: instructions with their origins (labels included).
pub struct Lowered {
    pub insns: Vec<(Insn, Origin)>,
}

#[derive(Debug)]
pub struct LowerError(pub String);

pub fn lower(f: &Func, alloc: &Allocation) -> Result<Lowered, LowerError> {
    let mut out = Lowered { insns: Vec::new() };
    let r = |v| alloc.get(v);
    // A TLBI operand of constant 0 reads XZR, as the kernel's "rZ"
    // constraint makes GCC emit (`tlbi vale1is, xzr`).
    let zeros = scaffold::zero_vregs(f);
    let saved = alloc.used_callee_saved(&REGS);
    let frame = scaffold::frame_size(saved.len());
    let save = |load: bool, e: &mut dyn FnMut(Insn)| {
        if saved.is_empty() {
            return;
        }
        if !load {
            e(Insn::SpSub { imm: frame as u16 });
        }
        for (i, &rt) in saved.iter().enumerate() {
            let off = 8 * i as u32;
            e(if load {
                Insn::Ldr {
                    size: Size::X,
                    rt,
                    rn: SP,
                    off,
                }
            } else {
                Insn::Str {
                    size: Size::X,
                    rt,
                    rn: SP,
                    off,
                }
            });
        }
        if load {
            e(Insn::SpAdd { imm: frame as u16 });
        }
    };
    if let Some((_, origin)) = f.insts.first() {
        save(false, &mut |i| out.insns.push((i, origin.clone())));
    }
    for (inst, origin) in &f.insts {
        let mut e = |i: Insn| out.insns.push((i, origin.clone()));
        match inst {
            Inst::Arg { dst, index } => {
                if let Some(off) = stack_arg_offset(*index, frame) {
                    e(Insn::Ldr {
                        size: Size::X,
                        rt: r(*dst),
                        rn: SP,
                        off,
                    });
                }
            }
            Inst::Imm { dst, value } => materialize(r(*dst), *value, &mut e),
            Inst::Copy { dst, src } => mov(r(*dst), r(*src), &mut e),
            Inst::Not { dst, src } => {
                // No MVN/ORN in the model: xor with all ones.
                e(Insn::Movn {
                    rd: SCRATCH,
                    imm: 0,
                    shift: 0,
                });
                e(Insn::Eor {
                    rd: r(*dst),
                    rn: r(*src),
                    rm: SCRATCH,
                });
            }
            Inst::Un { op, dst, src } => un(*op, r(*dst), r(*src), &mut e),
            Inst::Insert {
                dst,
                src,
                shift,
                width,
            } => {
                let (rd, rn) = (r(*dst), r(*src));
                if *shift >= 64 || *width == 0 {
                    // Nothing of the field survives.
                    materialize(rd, 0, &mut e);
                } else if shift + width >= 64 {
                    // The field reaches bit 63: a plain shift left.
                    if *shift == 0 {
                        mov(rd, rn, &mut e);
                    } else {
                        e(Insn::LslImm {
                            rd,
                            rn,
                            sh: *shift as u8,
                        });
                    }
                } else {
                    // UBFIZ (UBFM alias): (x & mask(width)) << lsb.
                    e(Insn::Ubfiz {
                        rd,
                        rn,
                        lsb: *shift as u8,
                        width: *width as u8,
                    });
                }
            }
            Inst::Bin { op, dst, a, b } => bin(*op, r(*dst), r(*a), *b, alloc, &mut e)?,
            Inst::Load {
                dst,
                base,
                offset,
                width,
                swap,
                ..
            } => mem(false, r(*dst), r(*base), *offset, *width, *swap, &mut e)?,
            Inst::Store {
                src,
                base,
                offset,
                width,
                swap,
                ..
            } => mem(true, r(*src), r(*base), *offset, *width, *swap, &mut e)?,
            Inst::Barrier { name } => e(barrier(name)?),
            Inst::Invalidate { name, operands } => {
                let op = tlbi_op(name)?;
                let rt = match (op_takes_reg(op), operands.as_slice()) {
                    (true, [x]) if zeros.contains(x) => Some(XZR),
                    (true, [x]) => Some(r(*x)),
                    (false, []) => None,
                    (takes, ops) => {
                        return Err(LowerError(format!(
                            "`{name}` takes {} register operand(s), got {}",
                            usize::from(takes),
                            ops.len()
                        )))
                    }
                };
                e(Insn::Tlbi { op, rt });
            }
            Inst::LoadReserve {
                dst,
                base,
                width,
                acquire,
            } => {
                let (size, rt, rn) = (xsize(*width), r(*dst), r(*base));
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
            } => {
                // The status (0 = stored) goes to the scratch register.
                let (size, rs, rt, rn) = (xsize(*width), SCRATCH, r(*src), r(*base));
                e(if *release {
                    Insn::Stlxr { size, rs, rt, rn }
                } else {
                    Insn::Stxr { size, rs, rt, rn }
                });
                e(Insn::Cbnz {
                    rt: SCRATCH,
                    target: *retry,
                });
            }
            Inst::StoreRelease { src, base, width } => e(Insn::Stlr {
                size: xsize(*width),
                rt: r(*src),
                rn: r(*base),
            }),
            Inst::SpinHint => {}
            Inst::Label(l) => e(Insn::Label(*l)),
            Inst::Jump(l) => e(Insn::B { target: *l }),
            Inst::FeatureJump { cap, target } => {
                if crate::features::patching_of(cap)
                    != Some(crate::features::Patching::Arm64Alternative)
                {
                    return Err(LowerError(format!(
                        "`{cap}` is not an arm64 capability: aarch64 code is patched for `ARM64_*` cpucaps"
                    )));
                }
                e(Insn::AltB {
                    cap: cap.clone(),
                    target: *target,
                })
            }
            Inst::Branch { cmp, a, b, target } => {
                let rn = r(*a);
                let target = *target;
                match (cmp, b) {
                    (Cmp::Eq, Operand::Imm(0)) => {
                        e(Insn::Cbz { rt: rn, target });
                        continue;
                    }
                    (Cmp::Ne, Operand::Imm(0)) => {
                        e(Insn::Cbnz { rt: rn, target });
                        continue;
                    }
                    (_, Operand::Imm(v)) if *v <= 4095 => e(Insn::CmpImm { rn, imm: *v as u16 }),
                    (_, Operand::Imm(v)) => {
                        materialize(SCRATCH, *v, &mut e);
                        e(Insn::CmpReg { rn, rm: SCRATCH });
                    }
                    (_, Operand::Reg(b)) => e(Insn::CmpReg { rn, rm: r(*b) }),
                }
                let cond = match cmp {
                    Cmp::Eq => Cond::Eq,
                    Cmp::Ne => Cond::Ne,
                    Cmp::Ltu => Cond::Lo,
                    Cmp::Geu => Cond::Hs,
                };
                e(Insn::BCond { cond, target });
            }
            Inst::Ret { value } => {
                match value {
                    Operand::Imm(v) => materialize(0, *v, &mut e),
                    Operand::Reg(v) => mov(0, r(*v), &mut e),
                }
                save(true, &mut e);
                e(Insn::Ret);
            }
        }
    }
    Ok(out)
}

/// Bit counts: `clz` is defined at 0 (64), ctz is `clz` of the reversed
/// bits. Base ARMv8 has no popcount for general registers (`cnt` is
/// Advanced SIMD): [`hweight::HWEIGHT64`], whose masks are all bitmask
/// immediates, with x16 as its scratch register.
fn un(op: UnOp, rd: Reg, rn: Reg, e: &mut dyn FnMut(Insn)) {
    match op {
        UnOp::Clz => e(Insn::Clz { rd, rn }),
        UnOp::Ctz => {
            e(Insn::Rbit { rd, rn });
            e(Insn::Clz { rd, rn: rd });
        }
        UnOp::Popcount => {
            mov(rd, rn, e);
            let reg = |l: Loc| match l {
                Loc::D => rd,
                Loc::S => SCRATCH,
            };
            for step in hweight::HWEIGHT64 {
                match step {
                    Step::And { dst, k } => e(Insn::AndImm {
                        rd: reg(dst),
                        rn: rd,
                        imm: k,
                    }),
                    Step::Shr { dst, src, n } => e(Insn::LsrImm {
                        rd: reg(dst),
                        rn: reg(src),
                        sh: n,
                    }),
                    Step::Sub => e(Insn::Sub {
                        rd,
                        rn: rd,
                        rm: SCRATCH,
                    }),
                    Step::Add => e(Insn::Add {
                        rd,
                        rn: rd,
                        rm: SCRATCH,
                    }),
                    Step::Mul(k) => {
                        materialize(SCRATCH, k, e);
                        e(Insn::Mul {
                            rd,
                            rn: rd,
                            rm: SCRATCH,
                        });
                    }
                }
            }
        }
    }
}

fn xsize(width: u32) -> Size {
    match width {
        8 => Size::B,
        16 => Size::H,
        32 => Size::W,
        _ => Size::X,
    }
}

fn mov(rd: Reg, rm: Reg, e: &mut dyn FnMut(Insn)) {
    if rd != rm {
        e(Insn::MovReg { rd, rm });
    }
}

/// `dmb <opt>`, `dsb <opt>` or `isb`, if the barrier table knows the name.
fn barrier(name: &str) -> Result<Insn, LowerError> {
    let unknown = || LowerError(format!("aarch64 has no barrier `{name}`"));
    if barriers::find(Target::Aarch64.barriers(), name).is_none() {
        return Err(unknown());
    }
    if name == "isb" {
        return Ok(Insn::Isb);
    }
    let (kind, opt) = name.split_once(' ').ok_or_else(unknown)?;
    let opt = match opt {
        "sy" => BarrierOpt::Sy,
        "st" => BarrierOpt::St,
        "ld" => BarrierOpt::Ld,
        "ish" => BarrierOpt::Ish,
        "ishst" => BarrierOpt::Ishst,
        "ishld" => BarrierOpt::Ishld,
        "osh" => BarrierOpt::Osh,
        "oshst" => BarrierOpt::Oshst,
        "oshld" => BarrierOpt::Oshld,
        "nsh" => BarrierOpt::Nsh,
        "nshst" => BarrierOpt::Nshst,
        _ => return Err(unknown()),
    };
    match kind {
        "dmb" => Ok(Insn::Dmb(opt)),
        "dsb" => Ok(Insn::Dsb(opt)),
        _ => Err(unknown()),
    }
}

const TLBI_OPS: &[(&str, TlbiOp)] = &[
    ("vmalle1", TlbiOp::Vmalle1),
    ("vmalle1is", TlbiOp::Vmalle1is),
    ("vmalle1os", TlbiOp::Vmalle1os),
    ("vae1", TlbiOp::Vae1),
    ("vae1is", TlbiOp::Vae1is),
    ("vae1os", TlbiOp::Vae1os),
    ("vale1", TlbiOp::Vale1),
    ("vale1is", TlbiOp::Vale1is),
    ("vale1os", TlbiOp::Vale1os),
    ("aside1", TlbiOp::Aside1),
    ("aside1is", TlbiOp::Aside1is),
    ("aside1os", TlbiOp::Aside1os),
    ("vaae1is", TlbiOp::Vaae1is),
    ("vaale1is", TlbiOp::Vaale1is),
    ("rvae1is", TlbiOp::Rvae1is),
    ("rvale1is", TlbiOp::Rvale1is),
    ("rvae1os", TlbiOp::Rvae1os),
    ("rvale1os", TlbiOp::Rvale1os),
    ("rvaae1is", TlbiOp::Rvaae1is),
    ("rvaale1is", TlbiOp::Rvaale1is),
];

/// Can `name` with `n` register operands be lowered? (Checked before
/// lowering, so the error points at the spec statement.)
pub fn check_invalidate(name: &str, n: usize) -> Result<(), String> {
    let op = tlbi_op(name).map_err(|e| e.0)?;
    let takes = usize::from(op_takes_reg(op));
    if takes != n {
        return Err(format!(
            "`{name}` takes {takes} register operand(s), got {n}"
        ));
    }
    Ok(())
}

/// `tlbi <op>` by name (with or without the `tlbi ` prefix).
fn tlbi_op(name: &str) -> Result<TlbiOp, LowerError> {
    let op = name.strip_prefix("tlbi ").unwrap_or(name).trim();
    TLBI_OPS
        .iter()
        .find(|(n, _)| *n == op)
        .map(|(_, o)| *o)
        .ok_or_else(|| LowerError(format!("aarch64 has no invalidation `{name}`")))
}

/// The `vmalle1*` operations take no register (Arm ARM C5.5 "TLBI").
fn op_takes_reg(op: TlbiOp) -> bool {
    !matches!(op, TlbiOp::Vmalle1 | TlbiOp::Vmalle1is | TlbiOp::Vmalle1os)
}

/// 16-bit chunk `i` of `v`.
fn chunk(v: u64, i: u32) -> u16 {
    (v >> (16 * i)) as u16
}

/// Shortest sequence we know for a 64-bit constant: a single `movz` or
/// `movn`; one `orr xd, xzr, #bitmask`; `orr` + one `movk`; `movz` +
/// `movk`s over the non-zero chunks; or `movn` + `movk`s over the chunks
/// that are not 0xffff.
pub fn materialize(rd: Reg, value: u64, e: &mut dyn FnMut(Insn)) {
    for i in candidates(rd, value) {
        e(i);
    }
}

fn candidates(rd: Reg, value: u64) -> Vec<Insn> {
    let movk = |i: u32| Insn::Movk {
        rd,
        imm: chunk(value, i),
        shift: (16 * i) as u8,
    };
    // movz/movn + movk: skip the chunks the first instruction already got
    // right (0 for movz, 0xffff for movn).
    let wide = |fill: u16| -> Vec<Insn> {
        let mut s = Vec::new();
        for i in 0..4 {
            let c = chunk(value, i);
            if c == fill {
                continue;
            }
            if s.is_empty() {
                s.push(if fill == 0 {
                    Insn::Movz {
                        rd,
                        imm: c,
                        shift: (16 * i) as u8,
                    }
                } else {
                    Insn::Movn {
                        rd,
                        imm: !c,
                        shift: (16 * i) as u8,
                    }
                });
            } else {
                s.push(movk(i));
            }
        }
        if s.is_empty() {
            s.push(if fill == 0 {
                Insn::Movz {
                    rd,
                    imm: 0,
                    shift: 0,
                }
            } else {
                Insn::Movn {
                    rd,
                    imm: 0,
                    shift: 0,
                }
            });
        }
        s
    };
    let mut best = wide(0);
    let n = wide(0xffff);
    if n.len() < best.len() {
        best = n;
    }
    // Prefer `movz`/`movn` when one of them does it alone: `mov x0, #6`
    // reads better than `orr x0, xzr, #6`.
    if best.len() > 1 && logical_imm_encodable(value) {
        return vec![Insn::OrrImm {
            rd,
            rn: XZR,
            imm: value,
        }];
    }
    if best.len() > 2 {
        // A bitmask immediate that is right in all chunks but one.
        for i in 0..4 {
            let mask = 0xffffu64 << (16 * i);
            for fill in [0u64, u64::MAX]
                .into_iter()
                .chain((0..4).map(|j| u64::from(chunk(value, j)) * 0x0001_0001_0001_0001))
            {
                let imm = (value & !mask) | (fill & mask);
                if logical_imm_encodable(imm) {
                    return vec![Insn::OrrImm { rd, rn: XZR, imm }, movk(i)];
                }
            }
        }
    }
    best
}

fn bin(
    op: BinOp,
    rd: Reg,
    rn: Reg,
    b: Operand,
    alloc: &Allocation,
    e: &mut dyn FnMut(Insn),
) -> Result<(), LowerError> {
    let imm = match b {
        Operand::Reg(v) => {
            reg_op(op, rd, rn, alloc.get(v), e);
            return Ok(());
        }
        Operand::Imm(v) => v,
    };
    let neg = imm.wrapping_neg();
    match op {
        BinOp::Shl | BinOp::Shr if imm >= 64 => {
            return Err(LowerError("shift of 64 or more".into()))
        }
        BinOp::Shl | BinOp::Shr | BinOp::Or | BinOp::Xor | BinOp::Add | BinOp::Sub if imm == 0 => {
            mov(rd, rn, e)
        }
        BinOp::Shl => e(Insn::LslImm {
            rd,
            rn,
            sh: imm as u8,
        }),
        BinOp::Shr => e(Insn::LsrImm {
            rd,
            rn,
            sh: imm as u8,
        }),
        BinOp::And if imm == u64::MAX => mov(rd, rn, e),
        BinOp::And if imm == 0 => materialize(rd, 0, e),
        BinOp::And if logical_imm_encodable(imm) => e(Insn::AndImm { rd, rn, imm }),
        BinOp::Or if logical_imm_encodable(imm) => e(Insn::OrrImm { rd, rn, imm }),
        BinOp::Add if imm <= 4095 => e(Insn::AddImm {
            rd,
            rn,
            imm: imm as u16,
        }),
        BinOp::Add if neg <= 4095 => e(Insn::SubImm {
            rd,
            rn,
            imm: neg as u16,
        }),
        BinOp::Sub if imm <= 4095 => e(Insn::SubImm {
            rd,
            rn,
            imm: imm as u16,
        }),
        BinOp::Sub if neg <= 4095 => e(Insn::AddImm {
            rd,
            rn,
            imm: neg as u16,
        }),
        BinOp::Mul if imm.is_power_of_two() => {
            let sh = imm.trailing_zeros() as u8;
            if sh == 0 {
                mov(rd, rn, e);
            } else {
                e(Insn::LslImm { rd, rn, sh });
            }
        }
        _ => {
            materialize(SCRATCH, imm, e);
            reg_op(op, rd, rn, SCRATCH, e);
        }
    }
    Ok(())
}

fn reg_op(op: BinOp, rd: Reg, rn: Reg, rm: Reg, e: &mut dyn FnMut(Insn)) {
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
fn mem(
    store: bool,
    rt: Reg,
    base: Reg,
    offset: u64,
    width: u32,
    swap: bool,
    e: &mut dyn FnMut(Insn),
) -> Result<(), LowerError> {
    let size = match width {
        8 => Size::B,
        16 => Size::H,
        32 => Size::W,
        64 => Size::X,
        w => return Err(LowerError(format!("no {w}-bit access on aarch64"))),
    };
    if base >= 31 {
        return Err(LowerError("register 31 cannot be a base register".into()));
    }
    let swap = swap && width > 8;
    let reverse = |rd: Reg, rn: Reg| match size {
        Size::X => Insn::Rev { rd, rn },
        Size::W => Insn::Rev32W { rd, rn },
        _ => Insn::Rev16W { rd, rn },
    };
    let data = if store && swap {
        e(reverse(SCRATCH, rt));
        SCRATCH
    } else {
        rt
    };
    let bytes = u64::from(width / 8);
    if offset.is_multiple_of(bytes) && offset / bytes <= 4095 {
        let off = offset as u32;
        e(if store {
            Insn::Str {
                size,
                rt: data,
                rn: base,
                off,
            }
        } else {
            Insn::Ldr {
                size,
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
                rm: SCRATCH_OFF,
                scaled: false,
            }
        } else {
            Insn::LdrReg {
                size,
                rt: data,
                rn: base,
                rm: SCRATCH_OFF,
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
mod tests {
    use super::*;

    /// A tiny interpreter for the instructions `materialize` emits; the
    /// encodings themselves are checked against GNU as elsewhere, and the
    /// values end to end under qemu.
    fn eval(seq: &[Insn]) -> u64 {
        let mut r = 0xdead_beef_dead_beefu64;
        for i in seq {
            r = match *i {
                Insn::Movz { imm, shift, .. } => u64::from(imm) << shift,
                Insn::Movn { imm, shift, .. } => !(u64::from(imm) << shift),
                Insn::Movk { imm, shift, .. } => {
                    (r & !(0xffffu64 << shift)) | (u64::from(imm) << shift)
                }
                Insn::OrrImm { rn: XZR, imm, .. } => imm,
                ref other => panic!("unexpected {other:?}"),
            };
        }
        r
    }

    fn check(v: u64) -> Vec<Insn> {
        let mut seq = Vec::new();
        materialize(9, v, &mut |i| seq.push(i));
        assert_eq!(eval(&seq), v, "{v:#x}: {seq:?}");
        // Every instruction must also encode.
        super::super::insn::assemble(&seq).unwrap_or_else(|e| panic!("{v:#x}: {e}"));
        seq
    }

    #[test]
    fn materialize_is_correct_and_short() {
        let cases = [
            (0u64, 1usize),
            (1, 1),
            (u64::MAX, 1),
            (0xffff, 1),
            (0x1234, 1),
            (0x12345, 2),
            (0xffff_ffff, 1),
            (0xffff_ffff_ffff_fffe, 1),
            (0xffff_ffff_ffff_1234, 1),
            (100_000, 2),
            ((-110i64) as u64, 1),
            (0x0005_4000_0200_0000, 3),
            (0x0005_4000_0000_0000, 2),
            (0x000c_0000_0200_0000, 2),
            (0x0000_00ff_fe00_0000, 1),
            (0x1234_5678_9abc_def0, 4),
            (0x5555_5555_5555_1234, 2),
            (1 << 63, 1),
        ];
        for (v, max_len) in cases {
            let seq = check(v);
            assert!(
                seq.len() <= max_len,
                "{v:#x} took {} insns: {seq:?}",
                seq.len()
            );
        }
    }

    #[test]
    fn materialize_random_values() {
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        for _ in 0..10_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            for v in [
                x,
                x >> 20,
                x & 0xffff_0000,
                x << 30,
                !(x >> 40),
                x & 0xffff_0000_ffff,
            ] {
                let seq = check(v);
                assert!(seq.len() <= 4, "{v:#x}: {seq:?}");
            }
        }
    }

    #[test]
    fn barriers_and_tlbis_map() {
        for b in Target::Aarch64.barriers() {
            let i = barrier(b.name).unwrap();
            assert_eq!(i.text(&|l| l.to_string()), b.name);
        }
        assert!(barrier("eieio").is_err());
        assert!(barrier("dmb bogus").is_err());
        for (n, op) in TLBI_OPS {
            assert_eq!(tlbi_op(&format!("tlbi {n}")).unwrap(), *op);
            let rt = op_takes_reg(*op).then_some(1);
            let text = Insn::Tlbi { op: *op, rt }.text(&|l| l.to_string());
            assert!(text.starts_with(&format!("tlbi {n}")), "{text}");
        }
        assert!(tlbi_op("tlbi bogus").is_err());
    }

    use crate::lir::{regalloc, ArgKind, MemKind, VReg};

    /// Interpreter for the register-only instructions ALU lowering emits.
    fn run_alu(seq: &[Insn], regs: &mut [u64; 32]) {
        for i in seq {
            let x = |r: Reg| if r == XZR { 0 } else { regs[r as usize] };
            let (rd, v) = match *i {
                Insn::Movz { rd, imm, shift } => (rd, u64::from(imm) << shift),
                Insn::Movn { rd, imm, shift } => (rd, !(u64::from(imm) << shift)),
                Insn::Movk { rd, imm, shift } => (
                    rd,
                    (x(rd) & !(0xffffu64 << shift)) | (u64::from(imm) << shift),
                ),
                Insn::OrrImm { rd, rn, imm } => (rd, x(rn) | imm),
                Insn::AndImm { rd, rn, imm } => (rd, x(rn) & imm),
                Insn::MovReg { rd, rm } => (rd, x(rm)),
                Insn::Orr { rd, rn, rm } => (rd, x(rn) | x(rm)),
                Insn::And { rd, rn, rm } => (rd, x(rn) & x(rm)),
                Insn::Eor { rd, rn, rm } => (rd, x(rn) ^ x(rm)),
                Insn::Add { rd, rn, rm } => (rd, x(rn).wrapping_add(x(rm))),
                Insn::Sub { rd, rn, rm } => (rd, x(rn).wrapping_sub(x(rm))),
                Insn::Mul { rd, rn, rm } => (rd, x(rn).wrapping_mul(x(rm))),
                Insn::AddImm { rd, rn, imm } => (rd, x(rn).wrapping_add(imm.into())),
                Insn::SubImm { rd, rn, imm } => (rd, x(rn).wrapping_sub(imm.into())),
                Insn::LslImm { rd, rn, sh } => (rd, x(rn) << sh),
                Insn::LsrImm { rd, rn, sh } => (rd, x(rn) >> sh),
                Insn::LslReg { rd, rn, rm } => (rd, x(rn) << (x(rm) & 63)),
                Insn::LsrReg { rd, rn, rm } => (rd, x(rn) >> (x(rm) & 63)),
                Insn::Clz { rd, rn } => (rd, u64::from(x(rn).leading_zeros())),
                Insn::Rbit { rd, rn } => (rd, x(rn).reverse_bits()),
                Insn::Ubfiz { rd, rn, lsb, width } => {
                    (rd, (x(rn) & (u64::MAX >> (64 - width))) << lsb)
                }
                ref other => panic!("unexpected {other:?}"),
            };
            assert_ne!(rd, XZR);
            regs[rd as usize] = v;
        }
    }

    fn alloc_of(pairs: &[(u32, u8)]) -> Allocation {
        Allocation {
            reg: pairs.iter().map(|&(v, r)| (VReg(v), r)).collect(),
        }
    }

    fn lower_one(inst: Inst, alloc: &Allocation) -> Result<Vec<Insn>, LowerError> {
        let f = Func {
            name: "t".into(),
            args: vec![],
            insts: vec![(inst, Origin::default())],
            nvregs: 3,
            nlabels: 0,
        };
        Ok(lower(&f, alloc)?
            .insns
            .into_iter()
            .map(|(i, _)| i)
            .collect())
    }

    /// Bin/Not/Insert lowering against Rust's own arithmetic, for random
    /// operands and immediates of every shape, with dst aliasing a source
    /// or not. Scratch use must not clobber the sources.
    #[test]
    fn alu_lowering_matches_reference() {
        let ops = [
            BinOp::And,
            BinOp::Or,
            BinOp::Xor,
            BinOp::Add,
            BinOp::Sub,
            BinOp::Mul,
            BinOp::Shl,
            BinOp::Shr,
        ];
        let reference = |op: BinOp, a: u64, b: u64| match op {
            BinOp::And => a & b,
            BinOp::Or => a | b,
            BinOp::Xor => a ^ b,
            BinOp::Add => a.wrapping_add(b),
            BinOp::Sub => a.wrapping_sub(b),
            BinOp::Mul => a.wrapping_mul(b),
            BinOp::Shl => a << (b & 63),
            BinOp::Shr => a >> (b & 63),
        };
        let mut x = 0x2545_f491_4f6c_dd1du64;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        for round in 0..3000 {
            let a = next();
            let raw = next();
            let imms = [
                raw,
                raw & 0xfff,
                raw.wrapping_neg() & 0xfff,
                (raw & 0xfff).wrapping_neg(),
                0,
                u64::MAX,
                1 << (raw & 63),
                0xff << (raw % 56),
                raw & 63,
            ];
            for (k, &imm) in imms.iter().enumerate() {
                for op in ops {
                    let imm = if matches!(op, BinOp::Shl | BinOp::Shr) {
                        imm & 63
                    } else {
                        imm
                    };
                    for (dst_reg, b) in [(9, Operand::Imm(imm)), (3, Operand::Reg(VReg(2)))] {
                        // v0 = a in x3, v2 = imm in x4, dst v1.
                        let alloc = alloc_of(&[(0, 3), (1, dst_reg), (2, 4)]);
                        let seq = lower_one(
                            Inst::Bin {
                                op,
                                dst: VReg(1),
                                a: VReg(0),
                                b,
                            },
                            &alloc,
                        )
                        .unwrap();
                        let mut regs = [0u64; 32];
                        regs[3] = a;
                        regs[4] = imm;
                        run_alu(&seq, &mut regs);
                        assert_eq!(
                            regs[dst_reg as usize],
                            reference(op, a, imm),
                            "{op:?} {a:#x}, {imm:#x} ({round}/{k}): {seq:?}"
                        );
                        if dst_reg != 4 {
                            assert_eq!(regs[4], imm, "source clobbered: {seq:?}");
                        }
                        super::super::insn::assemble(&seq).unwrap();
                    }
                }
            }
            let alloc = alloc_of(&[(0, 3), (1, 10)]);
            let seq = lower_one(
                Inst::Not {
                    dst: VReg(1),
                    src: VReg(0),
                },
                &alloc,
            )
            .unwrap();
            let mut regs = [0u64; 32];
            regs[3] = a;
            run_alu(&seq, &mut regs);
            assert_eq!(regs[10], !a);
            let (shift, width) = ((raw % 64) as u32, ((raw >> 8) % 65) as u32);
            let seq = lower_one(
                Inst::Insert {
                    dst: VReg(1),
                    src: VReg(0),
                    shift,
                    width,
                },
                &alloc,
            )
            .unwrap();
            super::super::insn::assemble(&seq).unwrap();
            let mut regs = [0u64; 32];
            regs[3] = a;
            run_alu(&seq, &mut regs);
            let mask = if width >= 64 {
                u64::MAX
            } else {
                (1u64 << width) - 1
            };
            assert_eq!(
                regs[10],
                (a & mask) << shift,
                "insert {a:#x} shift {shift} width {width}: {seq:?}"
            );
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
            for (rd, rs) in [(9u8, 3u8), (3, 3)] {
                let alloc = alloc_of(&[(0, rs), (1, rd)]);
                let seq = lower_one(
                    Inst::Un {
                        op,
                        dst: VReg(1),
                        src: VReg(0),
                    },
                    &alloc,
                )
                .unwrap();
                super::super::insn::assemble(&seq).unwrap();
                for &v in &vals {
                    let mut regs = [0u64; 32];
                    regs[rs as usize] = v;
                    run_alu(&seq, &mut regs);
                    assert_eq!(regs[rd as usize], op.apply(v), "{op:?} {v:#x}: {seq:?}");
                    if rd != rs {
                        assert_eq!(regs[rs as usize], v, "{op:?} clobbered the source");
                    }
                    for r in 0..32u8 {
                        if ![rd, rs, SCRATCH].contains(&r) {
                            assert_eq!(regs[r as usize], 0, "{op:?} touched x{r}");
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn memory_forms() {
        let alloc = alloc_of(&[(0, 3), (1, 9)]);
        let text = |i: Inst| -> Vec<String> {
            let seq = lower_one(i, &alloc).unwrap();
            super::super::insn::assemble(&seq).unwrap();
            seq.iter().map(|i| i.text(&|l| l.to_string())).collect()
        };
        let kind = MemKind::Normal;
        let st = |offset, width, swap| Inst::Store {
            src: VReg(1),
            base: VReg(0),
            offset,
            width,
            swap,
            kind,
        };
        let ld = |offset, width, swap| Inst::Load {
            dst: VReg(1),
            base: VReg(0),
            offset,
            width,
            swap,
            kind,
        };
        assert_eq!(text(st(8, 64, true)), ["rev x16, x9", "str x16, [x3, #8]"]);
        assert_eq!(text(st(4, 32, true)), ["rev w16, w9", "str w16, [x3, #4]"]);
        assert_eq!(
            text(st(2, 16, true)),
            ["rev16 w16, w9", "strh w16, [x3, #2]"]
        );
        assert_eq!(text(st(3, 8, true)), ["strb w9, [x3, #3]"]);
        assert_eq!(text(st(0, 64, false)), ["str x9, [x3]"]);
        assert_eq!(text(st(0x7ff8, 64, false)), ["str x9, [x3, #0x7ff8]"]);
        assert_eq!(
            text(st(0x8000, 64, false)),
            ["movz x17, #0x8000", "str x9, [x3, x17]"]
        );
        assert_eq!(
            text(st(6, 32, true)),
            ["rev w16, w9", "movz x17, #6", "str w16, [x3, x17]"]
        );
        assert_eq!(
            text(ld(0x10, 64, true)),
            ["ldr x9, [x3, #0x10]", "rev x9, x9"]
        );
        assert_eq!(text(ld(4, 32, true)), ["ldr w9, [x3, #4]", "rev w9, w9"]);
        assert_eq!(text(ld(2, 16, true)), ["ldrh w9, [x3, #2]", "rev16 w9, w9"]);
        assert_eq!(text(ld(1, 8, false)), ["ldrb w9, [x3, #1]"]);
        assert!(lower_one(st(0, 24, false), &alloc).is_err());
    }

    #[test]
    fn invalidates_barriers_branches() {
        let alloc = alloc_of(&[(0, 3), (1, 9)]);
        let text = |i: Inst| -> Vec<String> {
            lower_one(i, &alloc)
                .unwrap()
                .iter()
                .map(|i| i.text(&|l| format!(".L{l}")))
                .collect()
        };
        let inv = |name: &str, operands: Vec<VReg>| Inst::Invalidate {
            name: name.into(),
            operands,
        };
        assert_eq!(
            text(inv("tlbi vale1is", vec![VReg(0)])),
            ["tlbi vale1is, x3"]
        );
        assert_eq!(text(inv("tlbi vmalle1is", vec![])), ["tlbi vmalle1is"]);
        assert!(lower_one(inv("tlbi vale1is", vec![]), &alloc).is_err());
        assert!(lower_one(inv("tlbi vmalle1is", vec![VReg(0)]), &alloc).is_err());
        assert!(lower_one(inv("tlbie", vec![VReg(0)]), &alloc).is_err());
        assert_eq!(
            text(Inst::Barrier {
                name: "dsb ish".into()
            }),
            ["dsb ish"]
        );
        assert!(lower_one(
            Inst::Barrier {
                name: "sync".into()
            },
            &alloc
        )
        .is_err());
        let br = |cmp, b| Inst::Branch {
            cmp,
            a: VReg(0),
            b,
            target: 7,
        };
        assert_eq!(text(br(Cmp::Eq, Operand::Imm(0))), ["cbz x3, .L7"]);
        assert_eq!(text(br(Cmp::Ne, Operand::Imm(0))), ["cbnz x3, .L7"]);
        assert_eq!(
            text(br(Cmp::Ltu, Operand::Imm(4095))),
            ["cmp x3, #0xfff", "b.lo .L7"]
        );
        assert_eq!(
            text(br(Cmp::Geu, Operand::Reg(VReg(1)))),
            ["cmp x3, x9", "b.hs .L7"]
        );
        assert_eq!(
            text(br(Cmp::Eq, Operand::Imm(4096))),
            ["movz x16, #0x1000", "cmp x3, x16", "b.eq .L7"]
        );
        assert_eq!(
            text(Inst::Ret {
                value: Operand::Imm((-110i64) as u64)
            }),
            ["movn x0, #0x6d", "ret"]
        );
        assert_eq!(
            text(Inst::Ret {
                value: Operand::Reg(VReg(1))
            }),
            ["mov x0, x9", "ret"]
        );
    }

    /// A whole function through regalloc and codegen: range TLBIs raise
    /// the `.arch` level.
    #[test]
    fn needs_arch_from_instructions() {
        let f = |name: &str| Func {
            name: "t".into(),
            args: vec![ArgKind::Param(0)],
            insts: vec![
                (
                    Inst::Arg {
                        dst: VReg(0),
                        index: 0,
                    },
                    Origin::default(),
                ),
                (
                    Inst::Invalidate {
                        name: name.into(),
                        operands: vec![VReg(0)],
                    },
                    Origin::default(),
                ),
                (
                    Inst::Ret {
                        value: Operand::Imm(0),
                    },
                    Origin::default(),
                ),
            ],
            nvregs: 1,
            nlabels: 0,
        };
        for (name, arch) in [
            ("tlbi vale1is", None),
            ("tlbi rvae1is", Some("armv8.4-a")),
            ("tlbi vae1os", Some("armv8.4-a")),
        ] {
            let func = f(name);
            let alloc = regalloc::allocate(&func, &REGS).unwrap();
            let m = super::super::emit::codegen(&func, &alloc, "t", crate::codegen::Style::Plain)
                .unwrap();
            assert_eq!(m.needs_arch, arch, "{name}");
            assert_eq!(m.bytes.len(), 4 * 3);
        }
    }

    #[test]
    fn pool_avoids_reserved_registers() {
        for r in REGS.pool.iter().chain(REGS.args) {
            assert!(*r <= 15 && *r != SCRATCH && *r != SCRATCH_OFF, "x{r}");
        }
    }
}
