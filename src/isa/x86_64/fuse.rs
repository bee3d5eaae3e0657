//! What the x86-64 lowering of one LIR instruction learns from the
//! others: where rcx is free for a shift count, which constants a later
//! instruction can take as an immediate, and which bit scans read a value
//! already known not to be 0.
//!
//! - `k - clz(x)` (`Un Clz t, x`, `Imm a, k`, `Bin Sub d, a, t` in a row,
//!   `t` and `a` read nowhere else) is `bsr` with -1 for 0, plus `k - 63`:
//!   `clz(x) = 63 - bsr(x)` for `x != 0` and `clz(0) = 64 = 63 - (-1)`,
//!   exact modulo 2^64. VT-d's `ilog2(roundup_pow2(pages))` is `63 -
//!   clz` and `64 - clz`: three or four instructions instead of seven.
//! - A scan whose source the branch just before tested against 0 (`if x
//!   != 0 { ctz(x) }`) needs no value for 0: `bsf` alone.
//! - `Imm a, K` read only by a shift by a register later in the same
//!   block: the constant goes straight into the result register, after
//!   the count is in cl (rcx may be the result).
//! - rcx is kept around a shift only where a value that lives there is
//!   live (its range spans the shift), not wherever rcx is used at all.

use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};

use super::insn::{Gpr, Insn, Simm32};
use super::lower::{imm, mov, Emit, LowerError, SCRATCH};
use super::mem::size;
use crate::ir::expr::BinOp;
use crate::isa::lower_common::Src;
use crate::lir::regalloc::{live_ranges, Allocation};
use crate::lir::{Cmp, Func, Inst, Operand, UnOp, VReg};

const RCX: Gpr = Gpr::RCX;

/// `dst = src's bsr (-1 for 0) + add`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ClzFrom {
    pub src: VReg,
    pub add: i32,
    pub nonzero: bool,
}

/// The plan of one function (indices are LIR instruction indices).
#[derive(Default)]
pub struct Plan {
    /// Emit nothing: a later instruction does this one's work.
    pub skip: HashSet<usize>,
    /// The `Sub` of a `k - clz(x)`.
    pub clz: HashMap<usize, ClzFrom>,
    /// A `Un` scan whose source is known not to be 0.
    pub nonzero: HashSet<usize>,
    /// A shift whose left operand is this constant (its `Imm` skipped).
    pub const_left: HashMap<usize, u64>,
    /// A value other than the instruction's result holds rcx across it.
    pub rcx_busy: HashSet<usize>,
    /// A store of this constant, as an immediate (`movb $0,(%rdi)`).
    pub store_imm: HashMap<usize, u64>,
    /// A branch on `a & b` against 0 whose `and` is skipped: `test`.
    pub and_test: HashMap<usize, (VReg, Operand)>,
    /// The `Copy` of a shift's result chosen over 0 (see [`late_shifts`]):
    /// the shift itself, straight into the copy's register.
    pub shift_at_copy: HashMap<usize, LateShift>,
    /// `d = (a + b) + c` (or `- c`) whose inner sum is skipped: one
    /// `lea c(%a,%b), %d` (the page count's `end - start + offset +
    /// 0x1000`).
    pub lea3: HashMap<usize, (VReg, VReg, i32)>,
}

/// A shift done where its one reader copies it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LateShift {
    pub shl: bool,
    /// The shifted value: a register, or the constant of `const_left`.
    pub a: VReg,
    pub konst: Option<u64>,
    pub n: VReg,
    /// rcx holds another live value at the copy.
    pub rcx_busy: bool,
}

/// How often each register is written and read.
fn counts(f: &Func) -> (HashMap<VReg, usize>, HashMap<VReg, usize>) {
    let (mut defs, mut uses) = (HashMap::default(), HashMap::default());
    for (i, _) in &f.insts {
        i.each_use(|v| *uses.entry(v).or_insert(0) += 1);
        if let Some(d) = i.def() {
            *defs.entry(d).or_insert(0) += 1;
        }
    }
    (defs, uses)
}

/// The instruction just before `k` is `if x == 0 goto ..`: falling into
/// `k` (which is no label, so nothing jumps there) means `x != 0`.
fn tested_nonzero(f: &Func, k: usize, x: VReg) -> bool {
    k.checked_sub(1).and_then(|j| f.insts.get(j)).is_some_and(
        |(i, _)| matches!(i, Inst::Branch { cmp: Cmp::Eq, a, b: Operand::Imm(0), .. } if *a == x),
    )
}

/// The instruction after `k` branches on `t` being 0 or not.
fn tested_next(f: &Func, k: usize, t: VReg) -> bool {
    f.insts.get(k + 1).is_some_and(|(i, _)| {
        matches!(i, Inst::Branch { cmp: Cmp::Eq | Cmp::Ne, a, b: Operand::Imm(0), .. } if *a == t)
    })
}

/// `test` takes a register or a sign-extended imm32.
fn testable(b: &Operand) -> bool {
    match *b {
        Operand::Reg(_) => true,
        Operand::Imm(v) => Simm32::maybe_from(v).is_some(),
    }
}

pub fn plan(f: &Func, alloc: &Allocation, rcx: u8) -> Plan {
    let mut p = Plan::default();
    let (defs, uses) = counts(f);
    let once = |v: VReg| defs.get(&v) == Some(&1) && uses.get(&v) == Some(&1);
    // Where each once-written constant is.
    let mut consts: HashMap<VReg, (usize, u64)> = HashMap::default();
    for (k, (i, _)) in f.insts.iter().enumerate() {
        match i {
            Inst::Imm { dst, value } if once(*dst) => {
                consts.insert(*dst, (k, *value));
            }
            Inst::Un { src, .. } if tested_nonzero(f, k, *src) => {
                p.nonzero.insert(k);
            }
            Inst::Bin {
                op: BinOp::And,
                dst,
                a,
                b,
            } if once(*dst) && tested_next(f, k, *dst) && testable(b) => {
                p.skip.insert(k);
                p.and_test.insert(k + 1, (*a, *b));
            }
            Inst::Bin {
                op: BinOp::Sub,
                a,
                b: Operand::Reg(t),
                ..
            } => {
                if let Some(c) = clz_sub(f, k, *a, *t, &once) {
                    p.skip.extend([k - 1, k - 2]);
                    p.clz.insert(k, c);
                }
            }
            Inst::Bin {
                op: BinOp::Shl | BinOp::Shr,
                a,
                b: Operand::Reg(_),
                ..
            } => {
                let Some(&(at, value)) = consts.get(a) else {
                    continue;
                };
                // In the same block, so the constant is set once per shift.
                let block = f.insts[at + 1..k]
                    .iter()
                    .all(|(i, _)| !matches!(i, Inst::Label(_)) && i.branch_target().is_none());
                if block && !p.skip.contains(&at) {
                    p.skip.insert(at);
                    p.const_left.insert(k, value);
                }
            }
            _ => {}
        }
    }
    sums_of_three(f, &once, &mut p);
    stored_constants(f, &defs, &mut p);
    let ranges = live_ranges(f);
    late_shifts(f, alloc, &once, &ranges, rcx, &mut p);
    for (k, (i, _)) in f.insts.iter().enumerate() {
        if !matches!(
            i,
            Inst::Bin {
                op: BinOp::Shl | BinOp::Shr,
                b: Operand::Reg(_),
                ..
            }
        ) {
            continue;
        }
        let busy = (ranges.iter()).any(|(v, &(a, b))| {
            alloc.try_get(*v) == Some(rcx) && a < k && k <= b && i.def() != Some(*v)
        });
        if busy {
            p.rcx_busy.insert(k);
        }
    }
    p
}

/// `t = a << n; d = 0; if n >= 64 goto L; d = t; L:` (how the LIR
/// gives a shift by 64 or more its 0): the shift moves to the copy and
/// writes `d` itself, on the one path that needs it, instead of a
/// register of its own that is copied. Sound where `t` is read only by
/// the copy, `a` and `n` are not in `d`'s register (the `d = 0` between
/// would overwrite them), and the four instructions are in a row.
fn late_shifts(
    f: &Func,
    alloc: &Allocation,
    once: &dyn Fn(VReg) -> bool,
    ranges: &HashMap<VReg, (usize, usize)>,
    rcx: u8,
    p: &mut Plan,
) {
    let at = |k: usize| f.insts.get(k).map(|(i, _)| i);
    for k in 0..f.insts.len() {
        let Some(&Inst::Bin {
            op: op @ (BinOp::Shl | BinOp::Shr),
            dst: t,
            a,
            b: Operand::Reg(n),
        }) = at(k)
        else {
            continue;
        };
        let (Some(&Inst::Imm { dst: d, value: 0 }), Some(br), Some(&Inst::Copy { dst, src })) =
            (at(k + 1), at(k + 2), at(k + 3))
        else {
            continue;
        };
        let konst = p.const_left.get(&k).copied();
        let mut reads_t = false;
        br.each_use(|v| reads_t |= v == t);
        let reg = |v: VReg| alloc.try_get(v);
        let clear = [Some(n), konst.is_none().then_some(a)]
            .into_iter()
            .flatten()
            .all(|v| reg(v).is_some() && reg(v) != reg(d));
        let branch = matches!(br, Inst::Branch { .. } | Inst::BranchBit { .. });
        if !(dst == d && src == t && once(t) && branch && !reads_t && clear) {
            continue;
        }
        let c = k + 3;
        let rcx_busy = (ranges.iter())
            .any(|(v, &(s, e))| reg(*v) == Some(rcx) && s < c && c <= e && *v != t && *v != d);
        p.skip.insert(k);
        p.shift_at_copy.insert(
            c,
            LateShift {
                shl: op == BinOp::Shl,
                a,
                konst,
                n,
                rcx_busy,
            },
        );
    }
}

/// `t = a + b; d = t + c` (or `t - c`) in a row, `t` read only there and
/// `c` a constant that fits a displacement: `lea c(%a,%b), %d`, which
/// also leaves `a` and `b` in place where `add` would need a `mov`.
fn sums_of_three(f: &Func, once: &dyn Fn(VReg) -> bool, p: &mut Plan) {
    for k in 1..f.insts.len() {
        let (
            Inst::Bin {
                op: BinOp::Add,
                dst: t,
                a,
                b: Operand::Reg(b),
            },
            Inst::Bin {
                op: op @ (BinOp::Add | BinOp::Sub),
                a: t2,
                b: Operand::Imm(c),
                ..
            },
        ) = (&f.insts[k - 1].0, &f.insts[k].0)
        else {
            continue;
        };
        let c = if *op == BinOp::Add {
            *c
        } else {
            c.wrapping_neg()
        };
        let Some(disp) = i32::try_from(c as i64).ok() else {
            continue;
        };
        if t == t2 && once(*t) && !p.skip.contains(&(k - 1)) {
            p.skip.insert(k - 1);
            p.lea3.insert(k, (*a, *b, disp));
        }
    }
}

/// The register a store writes to memory, when the store can take it as
/// an immediate of `value` instead: no byte reversal, a disp32 offset,
/// and for 64 bits a sign-extended imm32. Its other registers too.
fn stored(i: &Inst, value: impl Fn(VReg) -> Option<u64>) -> Option<(VReg, Vec<VReg>)> {
    let (data, base, index, offset, width, swap) = match *i {
        Inst::Store {
            src,
            base,
            index,
            offset,
            width,
            swap,
            ..
        } => (src, base, index, offset, width, swap),
        Inst::StoreRelease { src, base, width } => (src, base, None, 0, width, false),
        _ => return None,
    };
    let v = value(data)?;
    let fits = width != 64 || Simm32::maybe_from(v).is_some();
    let plain = !swap && index.is_none() && Simm32::maybe_from(offset).is_some();
    (fits && plain && matches!(width, 8 | 16 | 32 | 64)).then(|| (data, vec![base]))
}

/// Constants written once and read only as the data of stores that can
/// take them as immediates: the stores do, and the constant is never set.
fn stored_constants(f: &Func, defs: &HashMap<VReg, usize>, p: &mut Plan) {
    let mut consts: HashMap<VReg, (usize, u64)> = HashMap::default();
    for (k, (i, _)) in f.insts.iter().enumerate() {
        if let Inst::Imm { dst, value } = i {
            if defs.get(dst) == Some(&1) {
                consts.insert(*dst, (k, *value));
            }
        }
    }
    let mut stores: HashMap<VReg, Vec<usize>> = HashMap::default();
    let mut other: HashSet<VReg> = HashSet::default();
    for (k, (i, _)) in f.insts.iter().enumerate() {
        match stored(i, |v| consts.get(&v).map(|c| c.1)) {
            Some((data, rest)) if !rest.contains(&data) => {
                stores.entry(data).or_default().push(k);
                other.extend(rest);
            }
            _ => i.each_use(|v| {
                other.insert(v);
            }),
        }
    }
    for (v, ks) in stores {
        let (at, value) = consts[&v];
        if other.contains(&v) || p.skip.contains(&at) {
            continue;
        }
        p.skip.insert(at);
        p.store_imm.extend(ks.into_iter().map(|k| (k, value)));
    }
}

/// `k - clz(x)` ending at the `Sub` at `at`: the `Clz` and the `Imm k`
/// are the two instructions before it, in either order.
fn clz_sub(f: &Func, at: usize, a: VReg, t: VReg, once: &dyn Fn(VReg) -> bool) -> Option<ClzFrom> {
    let first = at.checked_sub(2)?;
    let (mut k, mut src) = (None, None);
    for (i, _) in &f.insts[first..at] {
        match i {
            Inst::Imm { dst, value } if *dst == a && once(a) => k = Some(*value),
            Inst::Un {
                op: UnOp::Clz,
                dst,
                src: x,
            } if *dst == t && once(t) && *x != a => src = Some(*x),
            _ => return None,
        }
    }
    let (k, src) = (k?, src?);
    let add = i32::try_from(k.wrapping_sub(63) as i64).ok()?;
    Some(ClzFrom {
        src,
        add,
        nonzero: tested_nonzero(f, first, src),
    })
}

/// `rd = bsr(rs) + c.add`, with -1 for the scan of 0 unless `rs` is
/// known not to be 0 (see the module comment). Into another register,
/// the -1 goes there first and a scan of 0 leaves it, as in Linux's
/// x86-64 `fls64()`; in place, it waits in the scratch register for
/// `cmove`.
pub fn bsr_plus(rd: Gpr, rs: Gpr, c: ClzFrom, e: Emit) {
    if !c.nonzero && rd != rs {
        e(Insn::MovImm { rd, imm: u64::MAX });
        e(Insn::Bsr { rd, rs });
    } else {
        bsr_cmove(rd, rs, c.nonzero, e);
    }
    if c.add != 0 {
        e(Insn::AddImm {
            rd,
            imm: Simm32::from(c.add),
        });
    }
}

fn bsr_cmove(rd: Gpr, rs: Gpr, nonzero: bool, e: Emit) {
    if !nonzero {
        e(Insn::MovImm {
            rd: SCRATCH,
            imm: u64::MAX,
        });
    }
    e(Insn::Bsr { rd, rs });
    if !nonzero {
        e(Insn::Cmove { rd, rs: SCRATCH });
    }
}

/// clz or ctz of a value known not to be 0: the scan alone (`63 - bsr`
/// as `bsr ^ 63`). None for popcount, which has no shortcut.
pub fn scan_nonzero(op: UnOp, rd: Gpr, rs: Gpr, e: Emit) -> Option<()> {
    match op {
        UnOp::Clz => {
            e(Insn::Bsr { rd, rs });
            e(Insn::XorImm {
                rd,
                imm: Simm32::of::<63>(),
            });
        }
        UnOp::Ctz => e(Insn::Bsf { rd, rs }),
        UnOp::Popcount => return None,
    }
    Some(())
}

/// A store the plan gave a constant (see [`stored`]).
pub fn store_imm(
    i: &Inst,
    value: u64,
    r: impl Fn(VReg) -> Result<Gpr, LowerError>,
    e: Emit,
) -> Result<(), LowerError> {
    let (base, offset, width) = match *i {
        Inst::Store {
            base,
            offset,
            width,
            ..
        } => (base, offset, width),
        Inst::StoreRelease { base, width, .. } => (base, 0, width),
        _ => {
            return Err(LowerError::Internal(
                "a constant store that is no store".into(),
            ))
        }
    };
    let disp = Simm32::maybe_from(offset)
        .ok_or_else(|| LowerError::Internal(format!("offset {offset:#x} past disp32")))?;
    let insn = Insn::store_imm(size(width)?, r(base)?, None, disp, value)
        .ok_or_else(|| LowerError::Internal(format!("{value:#x} stored as an imm32")))?;
    e(insn);
    Ok(())
}

/// `test` of `a & b` for a branch on it against 0 (ZF is the and's).
pub fn and_test(ra: Gpr, b: Src<Gpr>, e: Emit) -> Result<(), LowerError> {
    e(match b {
        Src::Reg(rb) => Insn::Test { ra, rb },
        Src::Imm(v) => Insn::TestImm {
            ra,
            imm: Simm32::maybe_from(v)
                .ok_or_else(|| LowerError::Internal(format!("test of {v:#x}")))?,
        },
    });
    Ok(())
}

/// `rd = ra << (rn mod 64)` (or `>>`): x86 takes a variable count only in
/// cl. The LIR fixes amounts of 64 and more up afterwards, so the
/// hardware's modulo 64 is what it expects. `rcx_busy`: another value
/// lives in rcx across the shift, so it is parked in the scratch
/// register. `rd`, `ra` or `rn` may each be rcx; `ra` may be a constant.
pub fn shift_by_reg(shl: bool, rd: Gpr, ra: Src<Gpr>, rn: Gpr, rcx_busy: bool, e: Emit) {
    let sh = |rd| {
        if shl {
            Insn::ShlCl { rd }
        } else {
            Insn::ShrCl { rd }
        }
    };
    let set = |rd: Gpr, ra: Src<Gpr>, e: Emit| match ra {
        Src::Reg(r) => mov(rd, r, e),
        Src::Imm(v) => imm(rd, v, e),
    };
    // `1 << n` is bit n set in a cleared register, with no count in cl.
    if shl && ra == Src::Imm(1) && rd != rn {
        imm(rd, 0, e);
        e(Insn::Bts { rd, rn });
        return;
    }
    match (rd == RCX, rn == RCX) {
        // The amount is in place; the result may not overwrite it before
        // the shift.
        (false, true) => {
            set(rd, ra, e);
            e(sh(rd));
        }
        // rcx is overwritten by the result: shift in the scratch register.
        (true, _) => {
            set(SCRATCH, ra, e);
            mov(RCX, rn, e);
            e(sh(SCRATCH));
            e(Insn::MovReg {
                rd: RCX,
                rs: SCRATCH,
            });
        }
        (false, false) if !rcx_busy && ra != Src::Reg(RCX) => {
            e(Insn::MovReg { rd: RCX, rs: rn });
            set(rd, ra, e);
            e(sh(rd));
        }
        (false, false) => {
            e(Insn::MovReg {
                rd: SCRATCH,
                rs: RCX,
            });
            e(Insn::MovReg { rd: RCX, rs: rn });
            // ra's value, if it was rcx's, is now in the scratch register.
            let ra = if ra == Src::Reg(RCX) {
                Src::Reg(SCRATCH)
            } else {
                ra
            };
            set(rd, ra, e);
            e(sh(rd));
            e(Insn::MovReg {
                rd: RCX,
                rs: SCRATCH,
            });
        }
    }
}

#[cfg(test)]
#[path = "fuse_tests.rs"]
mod tests;
