//! LIR: a small, target-independent, register-based code form between the
//! optimized IR and each target's instructions. Control flow is explicit
//! (labels, branches) and values live in virtual registers; each target's
//! `lower` turns an allocated LIR function into its own instructions.

pub mod bittest;
pub mod builder;
pub mod cfg;
pub mod constfold;
pub mod dead;
pub mod guards;
pub mod invalidation;
pub mod jumps;
pub mod path_consts;
pub mod regalloc;
pub mod role;
pub mod spill;
#[cfg(test)]
pub(crate) mod test_insts;
pub mod thread;

use crate::ir::barrier::Barrier;
use crate::ir::expr::BinOp;
use crate::ir::{DevId, OpId, RegId};
use invalidation::Invalidation;
use std::fmt;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct VReg(pub u32);

pub type LabelId = u32;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Operand {
    Reg(VReg),
    Imm(u64),
}

/// Branch conditions: the IR's comparison, as the IR's conditions use it.
pub use crate::ir::Cmp;

/// One-operand bit counts. Targets lower them natively where the ISA has
/// them (AArch64 `clz`, `rbit`; POWER `cntlzd`, `cnttzd`, `popcntd`) and
/// define the value at 0 as given, so x86-64's `bsr`/`bsf` get a zero test.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum UnOp {
    /// Leading zero bits; 64 for 0.
    Clz,
    /// Trailing zero bits; 64 for 0.
    Ctz,
    /// Set bits.
    Popcount,
}

impl UnOp {
    pub fn apply(self, x: u64) -> u64 {
        u64::from(match self {
            UnOp::Clz => x.leading_zeros(),
            UnOp::Ctz => x.trailing_zeros(),
            UnOp::Popcount => x.count_ones(),
        })
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MemKind {
    /// A device register access (an event the emulator attributes).
    Device { dev: DevId, reg: RegId, op: OpId },
    /// Ordinary memory the function reads, e.g. the array of instance bases.
    Normal,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Inst {
    Imm {
        dst: VReg,
        value: u64,
    },
    /// Incoming argument `index` (ABI order).
    Arg {
        dst: VReg,
        index: usize,
    },
    Copy {
        dst: VReg,
        src: VReg,
    },
    /// `dst = a op b`; shifts take immediate amounts below 64.
    Bin {
        op: BinOp,
        dst: VReg,
        a: VReg,
        b: Operand,
    },
    Not {
        dst: VReg,
        src: VReg,
    },
    /// `dst = op(src)`: bit counts, each defined at 0 (see [`UnOp`]).
    Un {
        op: UnOp,
        dst: VReg,
        src: VReg,
    },
    /// `dst = (src & mask(width)) << shift`.
    Insert {
        dst: VReg,
        src: VReg,
        shift: u32,
        width: u32,
    },
    /// `swap`: the register's byte order differs from the target's.
    /// `index`: `offset` already in a register, for a target whose
    /// byte-reversed forms only take base + index (POWER `ldbrx`): set
    /// before a loop, not rebuilt on every trip.
    Load {
        dst: VReg,
        base: VReg,
        offset: u64,
        width: u32,
        swap: bool,
        kind: MemKind,
        index: Option<VReg>,
    },
    Store {
        src: VReg,
        base: VReg,
        offset: u64,
        width: u32,
        swap: bool,
        kind: MemKind,
        index: Option<VReg>,
    },
    /// A barrier of the target's table (`eieio`, `dsb ish`).
    Barrier {
        name: Barrier,
    },
    /// A CPU TLB invalidation the target has checked (`tlbi vale1is`,
    /// `tlbie`, `invlpg`), with its register operands in the ISA's order
    /// (AArch64: Xt or none; POWER tlbie: RB, RS; x86 invlpg: the
    /// address), as many as the check accepted.
    Invalidate {
        name: Invalidation,
        operands: Vec<VReg>,
    },
    /// Load-reserve of `width` bits at `base` (POWER `l?arx`; AArch64
    /// `ldaxr*` when `acquire`, else `ldxr*`; x86-64: a plain load, the
    /// reservation being `lock cmpxchg` against this value). Zero-extends.
    LoadReserve {
        dst: VReg,
        base: VReg,
        width: u32,
        acquire: bool,
    },
    /// Store-conditional of `src` at `base`, paired with the load-reserve
    /// that produced `expected`; when the reservation is lost (x86-64: the
    /// memory no longer holds `expected`) branch to `retry`. POWER
    /// `st?cx.` + `bne- cr0`; AArch64 `st[l]xr*` + `cbnz`; x86-64
    /// `lock cmpxchg` (with `expected` in rax) + `jne`.
    StoreCond {
        src: VReg,
        base: VReg,
        width: u32,
        expected: VReg,
        release: bool,
        retry: LabelId,
    },
    /// The releasing store of a lock (AArch64 `stlr*`; elsewhere a plain
    /// store after the barrier the builder placed).
    StoreRelease {
        src: VReg,
        base: VReg,
        width: u32,
    },
    /// Inside a contention spin (x86-64 `pause`; nothing elsewhere).
    SpinHint,
    Label(LabelId),
    Jump(LabelId),
    Branch {
        cmp: Cmp,
        a: VReg,
        b: Operand,
        target: LabelId,
    },
    /// To `target` when bit `bit` (0 = least significant) of `a` is
    /// `set`, else on: a poll of a one-bit field or a test of a flag,
    /// without the masked copy (aarch64 `tbnz`/`tbz`, x86-64 `test` or
    /// `bt` and a `jcc`, POWER `andi.` or a compare of the bit moved to
    /// the sign, riscv64 likewise). Made by [`bittest::fuse`].
    BranchBit {
        a: VReg,
        bit: u8,
        set: bool,
        target: LabelId,
    },
    /// `a -= b`, then to `target` when `a` was above `b` (unsigned): the
    /// bottom test of a loop that counts a remainder down by a run-time
    /// step, its last trip taking whatever is left (aarch64 `cmp; sub;
    /// b.hi`, x86-64 `sub; ja`, POWER `cmpld; subf; bgt`, riscv64 `sltu;
    /// sub; bnez`): one test per trip instead of a test at the top and a
    /// jump back at the bottom.
    SubBranchAbove {
        a: VReg,
        b: VReg,
        target: LabelId,
    },
    Ret {
        value: Operand,
    },
    /// `dst = (a cmp b) ? 1 : 0`, on a target that sets a register from a
    /// comparison without a branch (aarch64 `cset`, riscv64 `sltu`); the
    /// others get `Imm 1; Branch; Imm 0` from the builder.
    SetCmp {
        cmp: Cmp,
        dst: VReg,
        a: VReg,
        b: Operand,
    },
    /// Store `src` to stack slot `slot` of the function's frame (8 bytes
    /// each): a value the allocator could not keep in a register
    /// (see [`spill`]).
    Spill {
        src: VReg,
        slot: u32,
    },
    /// Load stack slot `slot` into `dst`, just before a use of the value
    /// [`Inst::Spill`] stored there.
    Reload {
        dst: VReg,
        slot: u32,
    },
    /// A special-purpose register move or TLB-entry instruction of the
    /// target (Book III-E): `mtspr` reads `src`, `mfspr` writes `dst`,
    /// `tlbsx` reads `src` (the EA), `tlbre` neither.
    Sys {
        op: SysKind,
        src: Option<VReg>,
        dst: Option<VReg>,
    },
    /// Go to `target` when the CPU has kernel capability `cap`, by the
    /// kernel's boot-time patching (arm64 alternatives, POWER feature
    /// sections): unpatched, a `nop` that falls through.
    FeatureJump {
        cap: String,
        target: LabelId,
    },
}

/// What an [`Inst::Sys`] does; SPRs by number.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SysKind {
    MtSpr(u16),
    MfSpr(u16),
    TlbSearch,
    TlbRead,
    MfMsr,
    /// `wrteei 0|1`.
    Wrteei(bool),
    /// `wrtee src`.
    Wrtee,
}

/// Where an instruction names the register it writes: the one list for
/// [`Inst::def`] and [`Inst::set_def`] (the patterns bind a shared or a
/// mutable register by the instruction's reference); `$e` with `$d`
/// bound to it, else `$none`.
macro_rules! def_of {
    ($i:expr, |$d:ident| $e:expr, $none:expr) => {
        match $i {
            Inst::Imm { dst: $d, .. }
            | Inst::Arg { dst: $d, .. }
            | Inst::Copy { dst: $d, .. }
            | Inst::Bin { dst: $d, .. }
            | Inst::Not { dst: $d, .. }
            | Inst::Un { dst: $d, .. }
            | Inst::Insert { dst: $d, .. }
            | Inst::Load { dst: $d, .. }
            | Inst::Reload { dst: $d, .. }
            | Inst::SetCmp { dst: $d, .. }
            | Inst::LoadReserve { dst: $d, .. }
            | Inst::SubBranchAbove { a: $d, .. }
            | Inst::Sys { dst: Some($d), .. } => $e,
            _ => $none,
        }
    };
}

impl Inst {
    /// Registers read.
    pub fn uses(&self) -> Vec<VReg> {
        let mut out = Vec::new();
        self.each_use(|v| out.push(v));
        out
    }

    /// [`Inst::uses`] without building a vector (the allocator visits
    /// every instruction of every function).
    pub fn each_use(&self, mut f: impl FnMut(VReg)) {
        let op = |o: &Operand, f: &mut dyn FnMut(VReg)| {
            if let Operand::Reg(r) = o {
                f(*r)
            }
        };
        match self {
            Inst::Copy { src, .. }
            | Inst::Not { src, .. }
            | Inst::Un { src, .. }
            | Inst::Insert { src, .. } => f(*src),
            Inst::Bin { a, b, .. } | Inst::Branch { a, b, .. } | Inst::SetCmp { a, b, .. } => {
                f(*a);
                op(b, &mut f);
            }
            Inst::Load { base, index, .. } => {
                f(*base);
                index.iter().for_each(|&i| f(i));
            }
            Inst::LoadReserve { base, .. } => f(*base),
            Inst::Store {
                src, base, index, ..
            } => {
                f(*src);
                f(*base);
                index.iter().for_each(|&i| f(i));
            }
            Inst::StoreRelease { src, base, .. } => {
                f(*src);
                f(*base);
            }
            Inst::SubBranchAbove { a, b, .. } => {
                f(*a);
                f(*b);
            }
            Inst::BranchBit { a, .. } => f(*a),
            Inst::Spill { src, .. } => f(*src),
            Inst::Sys { src, .. } => src.iter().for_each(|&v| f(v)),
            Inst::Ret { value } => op(value, &mut f),
            Inst::Invalidate { operands, .. } => operands.iter().for_each(|v| f(*v)),
            Inst::StoreCond {
                src,
                base,
                expected,
                ..
            } => {
                f(*src);
                f(*base);
                f(*expected);
            }
            _ => {}
        }
    }

    /// The label a jump or branch may go to.
    pub fn branch_target(&self) -> Option<LabelId> {
        match self {
            Inst::Jump(t)
            | Inst::Branch { target: t, .. }
            | Inst::SubBranchAbove { target: t, .. }
            | Inst::BranchBit { target: t, .. }
            | Inst::FeatureJump { target: t, .. } => Some(*t),
            Inst::StoreCond { retry, .. } => Some(*retry),
            _ => None,
        }
    }

    /// Register written.
    pub fn def(&self) -> Option<VReg> {
        def_of!(self, |d| Some(*d), None)
    }

    /// Every register this instruction reads, passed through `f` (which
    /// may rename it); the register it writes is left alone unless it is
    /// also read (`SubBranchAbove`'s `a`).
    pub fn map_uses(&mut self, mut f: impl FnMut(VReg) -> VReg) {
        let op = |o: &mut Operand, f: &mut dyn FnMut(VReg) -> VReg| {
            if let Operand::Reg(r) = o {
                *r = f(*r)
            }
        };
        match self {
            Inst::Copy { src, .. }
            | Inst::Not { src, .. }
            | Inst::Un { src, .. }
            | Inst::Insert { src, .. }
            | Inst::Spill { src, .. } => *src = f(*src),
            Inst::Bin { a, b, .. } | Inst::Branch { a, b, .. } | Inst::SetCmp { a, b, .. } => {
                *a = f(*a);
                op(b, &mut f);
            }
            Inst::Load { base, index, .. } => {
                *base = f(*base);
                if let Some(i) = index {
                    *i = f(*i);
                }
            }
            Inst::LoadReserve { base, .. } => *base = f(*base),
            Inst::Store {
                src, base, index, ..
            } => {
                *src = f(*src);
                *base = f(*base);
                if let Some(i) = index {
                    *i = f(*i);
                }
            }
            Inst::StoreRelease { src, base, .. } => {
                *src = f(*src);
                *base = f(*base);
            }
            Inst::SubBranchAbove { a, b, .. } => {
                *a = f(*a);
                *b = f(*b);
            }
            Inst::BranchBit { a, .. } => *a = f(*a),
            Inst::Ret { value } => op(value, &mut f),
            Inst::Invalidate { operands, .. } => {
                operands.iter_mut().for_each(|v| *v = f(*v));
            }
            Inst::Sys { src, .. } => {
                if let Some(v) = src {
                    *v = f(*v);
                }
            }
            Inst::StoreCond {
                src,
                base,
                expected,
                ..
            } => {
                *src = f(*src);
                *base = f(*base);
                *expected = f(*expected);
            }
            Inst::Imm { .. }
            | Inst::Arg { .. }
            | Inst::Reload { .. }
            | Inst::Barrier { .. }
            | Inst::SpinHint
            | Inst::Label(_)
            | Inst::Jump(_)
            | Inst::FeatureJump { .. } => {}
        }
    }

    /// The register this instruction writes ([`Inst::def`]), renamed to
    /// `to`.
    pub fn set_def(&mut self, to: VReg) {
        def_of!(self, |d| *d = to, ())
    }
}

impl Func {
    /// Stack slots the function's spills use (8 bytes each).
    pub fn spill_slots(&self) -> u32 {
        self.insts
            .iter()
            .filter_map(|(i, _)| match i {
                Inst::Spill { slot, .. } | Inst::Reload { slot, .. } => Some(slot + 1),
                _ => None,
            })
            .max()
            .unwrap_or(0)
    }
}

/// Where an instruction came from, for `show` and the comments in `.S`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Origin {
    /// 1-based spec line.
    pub line: Option<usize>,
    /// Short description: the spec statement, or the pass that placed it.
    /// Shared: every instruction of a statement carries the same note.
    pub note: std::sync::Arc<str>,
    /// The IR operation this instruction performs (device accesses and
    /// invalidations), for attributing emulator events to edges.
    pub op: Option<crate::ir::OpId>,
}

/// How one ABI argument is used.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ArgKind {
    /// Base address of a single-instance device.
    DeviceBase(DevId),
    /// `void *const dev[]` of a multi-instance device.
    DeviceArray(DevId),
    /// `unsigned long dev_count`.
    DeviceCount(DevId),
    /// A sequence parameter.
    Param(usize),
}

#[derive(Clone, Debug)]
pub struct Func {
    pub name: String,
    pub args: Vec<ArgKind>,
    pub insts: Vec<(Inst, Origin)>,
    pub nvregs: u32,
    pub nlabels: u32,
    /// `-> void`: its returns leave the return register as it is (the
    /// kernel's void functions do not clear it); the LIR still says 0,
    /// the value the spec's meaning gives every exit.
    pub void: bool,
}

impl fmt::Display for VReg {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "v{}", self.0)
    }
}

impl fmt::Display for Operand {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Operand::Reg(r) => write!(f, "{r}"),
            Operand::Imm(v) => write!(f, "{v:#x}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One instruction of every kind that has registers (v1, v2, v3).
    fn one_of_each_with_registers() -> Vec<Inst> {
        let v = VReg;
        let dev = MemKind::Normal;
        vec![
            Inst::Imm {
                dst: v(1),
                value: 3,
            },
            Inst::Arg {
                dst: v(1),
                index: 0,
            },
            Inst::Copy {
                dst: v(1),
                src: v(2),
            },
            Inst::Bin {
                op: BinOp::Add,
                dst: v(1),
                a: v(2),
                b: Operand::Reg(v(3)),
            },
            Inst::Not {
                dst: v(1),
                src: v(2),
            },
            Inst::Un {
                op: UnOp::Clz,
                dst: v(1),
                src: v(2),
            },
            Inst::Insert {
                dst: v(1),
                src: v(2),
                shift: 3,
                width: 4,
            },
            Inst::Load {
                dst: v(1),
                base: v(2),
                offset: 8,
                width: 64,
                swap: false,
                kind: dev,
                index: Some(v(3)),
            },
            Inst::Store {
                src: v(1),
                base: v(2),
                offset: 8,
                width: 64,
                swap: false,
                kind: dev,
                index: Some(v(3)),
            },
            Inst::LoadReserve {
                dst: v(1),
                base: v(2),
                width: 64,
                acquire: false,
            },
            Inst::StoreCond {
                src: v(1),
                base: v(2),
                width: 64,
                expected: v(3),
                release: false,
                retry: 0,
            },
            Inst::StoreRelease {
                src: v(1),
                base: v(2),
                width: 64,
            },
            Inst::Branch {
                cmp: Cmp::Eq,
                a: v(1),
                b: Operand::Reg(v(2)),
                target: 0,
            },
            Inst::BranchBit {
                a: v(1),
                bit: 3,
                set: true,
                target: 0,
            },
            Inst::SubBranchAbove {
                a: v(1),
                b: v(2),
                target: 0,
            },
            Inst::SetCmp {
                cmp: Cmp::Ltu,
                dst: v(1),
                a: v(2),
                b: Operand::Reg(v(3)),
            },
            Inst::Spill { src: v(1), slot: 0 },
            Inst::Reload { dst: v(1), slot: 0 },
            Inst::Sys {
                op: SysKind::MtSpr(0x276),
                src: Some(v(1)),
                dst: None,
            },
            Inst::Sys {
                op: SysKind::MfSpr(0x271),
                src: None,
                dst: Some(v(2)),
            },
            Inst::Ret {
                value: Operand::Reg(v(1)),
            },
        ]
    }

    /// `each_use`/`def` and `map_uses`/`set_def` are two matches over the
    /// instructions that must agree (the spiller renames what the
    /// allocator reads): on one instruction of every kind that has
    /// registers, `map_uses` visits exactly `uses()` and `set_def` moves
    /// exactly `def()`.
    #[test]
    fn renaming_visits_what_the_allocator_reads() {
        for inst in one_of_each_with_registers() {
            let mut seen = Vec::new();
            let mut renamed = inst.clone();
            renamed.map_uses(|r| {
                seen.push(r);
                VReg(r.0 + 100)
            });
            assert_eq!(seen, inst.uses(), "{inst:?}");
            let shifted: Vec<VReg> = inst.uses().iter().map(|r| VReg(r.0 + 100)).collect();
            assert_eq!(renamed.uses(), shifted, "{inst:?}");
            let mut moved = inst.clone();
            moved.set_def(VReg(99));
            assert_eq!(moved.def(), inst.def().map(|_| VReg(99)), "{inst:?}");
        }
    }
}
