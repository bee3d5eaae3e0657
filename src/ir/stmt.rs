//! IR statements: device accesses, normal-memory and lock operations,
//! barriers, control flow; and walks over statement trees.

use super::barrier::Barrier;
use super::{expr, CoverMode, DevId, Expr, OpId, RegId};
use crate::spec::diag::Span;

/// The barriers an early exit runs before it returns (the exits pass
/// fills them): at most one per kind of invalidation that may still be
/// incomplete there, since no single barrier completes every mix (POWER
/// `tlbiel` needs `ptesync`, `slbia` a context synchronization: `isync`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct ExitBarriers([Option<Barrier>; 3]);

impl ExitBarriers {
    pub const NONE: ExitBarriers = ExitBarriers([None; 3]);

    pub fn iter(&self) -> impl Iterator<Item = Barrier> + '_ {
        self.0.iter().flatten().copied()
    }

    pub fn is_empty(&self) -> bool {
        self.0[0].is_none()
    }

    /// Add `b` after those already there (in order of execution); a
    /// barrier already there is not added twice.
    pub fn push(&mut self, b: Barrier) {
        if self.iter().any(|x| x == b) {
            return;
        }
        if let Some(slot) = self.0.iter_mut().find(|s| s.is_none()) {
            *slot = Some(b);
        }
    }
}

/// `p[offset]`: normal (cacheable) memory through pointer parameter `ptr`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct MemRef {
    pub ptr: usize,
    pub offset: u64,
    /// Bits: 8, 16, 32 or 64 (the pointer's element type).
    pub width: u32,
}

/// What a lock operation stores.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LockValue {
    /// Free is 0; taken stores this owner value.
    Owner(Expr),
    /// Test-and-set of one bit (LSB0 number).
    Bit(u32),
}

/// How a release orders the critical section before the releasing store.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReleaseOrder {
    /// Earlier loads and stores (POWER `lwsync`; AArch64 `stlr`; x86 TSO).
    Full,
    /// Earlier stores only: every load of the critical section feeds a
    /// store that precedes the release (POWER `eieio` orders cacheable
    /// stores among themselves; the data dependency orders the loads).
    StoresOnly,
    /// Earlier device accesses too (the sequence touches a device before
    /// the release): POWER needs `sync`, as Linux's `arch_spin_unlock`
    /// issues when `io_sync` is set; `lwsync` does not order
    /// caching-inhibited accesses.
    Device,
}

/// Normal-memory operations and reservation-loop locks.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum MemOp {
    /// `local = *mem` (zero-extended).
    Load {
        local: usize,
        mem: MemRef,
    },
    Store {
        mem: MemRef,
        value: Expr,
    },
    Acquire(Acquire),
    /// `local = p[index]` at a byte offset computed at run time.
    LoadAt {
        local: usize,
        ptr: usize,
        width: u32,
        index: Expr,
    },
    /// `p[index] = value` at a byte offset computed at run time.
    StoreAt {
        ptr: usize,
        width: u32,
        index: Expr,
        value: Expr,
    },
    /// Wait until `p[index] == value` (or `!=`): memory a device writes
    /// (a completion word, a semaphore), bounded like a register poll.
    Poll {
        ptr: usize,
        width: u32,
        index: Expr,
        wait: Wait,
    },
    Release {
        mem: MemRef,
        value: LockValue,
        /// Release only when this value is 0 (a token from `acquire held`).
        cond: Option<Expr>,
        order: ReleaseOrder,
    },
}

/// Spin until the lock is free, then take it atomically (load-reserve,
/// compare, branch, store-conditional), then an acquire barrier.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Acquire {
    pub mem: MemRef,
    pub value: LockValue,
    /// Already held by this owner: set `status` to this code and go on
    /// without taking it (needs an `Owner` value and a status local).
    pub held: Option<u64>,
    pub status: Option<usize>,
    /// Bounded spin: (reads, negative return code).
    pub limit: Option<(u64, i64)>,
    /// Barrier run before returning the spin's failure code.
    pub fail_barrier: ExitBarriers,
    /// Loop-invariant work (the owner value, clearing the status) is
    /// done before the reservation window; false (the naive code) does
    /// it inside, on every retry.
    pub hoisted: bool,
}

/// A special-purpose register, as the target that has it numbers it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Spr {
    pub number: u16,
    /// The spec's spelling, upper case (`MAS1`).
    pub name: &'static str,
}

/// Why a spec may not name a special-purpose register (the message is
/// the diagnostic).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SprError {
    #[error(
        "`{name}` is a Book III-E MMU assist register: say `machine e6500` at the top of the spec"
    )]
    NeedsMachine { name: String },
    #[error("{machine} has no MMU assist register `{name}`: {known}")]
    Unknown {
        machine: &'static str,
        name: String,
        known: &'static str,
    },
    #[error("{target} has no `mtspr`/`mfspr`")]
    NoSprs { target: &'static str },
}

/// What a [`Stmt::Sys`] does.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SysOp {
    /// `mtspr SPR, value`.
    MtSpr { spr: Spr, value: Expr },
    /// `local = mfspr SPR`.
    MfSpr { spr: Spr, local: usize },
    /// `tlbsx EA`: search this CPU's TLB for EA under MAS6's PID and
    /// address space; the entry found (MAS1.V = 1) or not (V = 0) is left
    /// in MAS0-MAS3 and MAS7.
    TlbSearch { ea: Expr },
    /// `tlbre`: read the entry MAS0 names into MAS1-MAS3 and MAS7.
    TlbRead,
    /// `local = mfmsr`.
    MfMsr { local: usize },
    /// `wrteei 0|1`: external interrupts off or on (MSR[EE]).
    Wrteei(bool),
    /// `wrtee value`: MSR[EE] from the value's EE bit (a saved MSR).
    Wrtee { value: Expr },
}

/// What placed a barrier: the spec author, or a named pass.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Origin {
    Spec(Span),
    Pass(&'static str),
}

#[derive(Clone, Debug)]
pub struct Access {
    pub id: OpId,
    pub dev: DevId,
    pub reg: RegId,
    pub span: Span,
}

/// How a bounded poll, of a device register or of memory, waits and
/// gives up.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Wait {
    pub op: PollOp,
    /// What the read is compared with: a constant or a run-time value
    /// (e.g. a producer index).
    pub value: Expr,
    /// Reads before giving up.
    pub limit: u64,
    /// Returned on giving up.
    pub fail: i64,
    /// Barrier run before returning `fail` (completes invalidations the
    /// sequence must finish before any return; see `passes::exits`).
    pub fail_barrier: ExitBarriers,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PollOp {
    /// Wait until `(reg & mask) == value`.
    Eq,
    /// Wait until `(reg & mask) != value`.
    Ne,
}

/// The barrier of a [`Stmt::Barrier`]. The IR out of the checker serves
/// every target on the spec's `target` line, so a spec's `barrier NAME` is
/// text until one target's passes resolve it against its table
/// (`passes::barriers::resolve_spec_barriers`, which reports a name the
/// table lacks); the barriers the passes place are table entries from
/// the start. Nothing after the passes sees a spelled one.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BarrierName {
    /// As the spec writes it.
    Spelled(String),
    /// An entry of the target's table.
    Kind(Barrier),
}

impl BarrierName {
    /// The table entry; a spelled name here is a pipeline bug (the
    /// passes resolve every spec barrier before anything lowers them).
    pub fn kind(&self) -> Barrier {
        match self {
            BarrierName::Kind(b) => *b,
            BarrierName::Spelled(s) => panic!("spec barrier `{s}` used before it was resolved"),
        }
    }

    pub fn as_str(&self) -> &str {
        match self {
            BarrierName::Spelled(s) => s,
            BarrierName::Kind(b) => b.name(),
        }
    }
}

impl std::fmt::Display for BarrierName {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

#[derive(Clone, Debug)]
pub enum Stmt {
    Each {
        dev: DevId,
        body: Vec<Stmt>,
        span: Span,
        /// Loops split from one source loop share a group, so fusion only
        /// re-joins what fission separated.
        group: u32,
    },
    Write {
        access: Access,
        value: Expr,
    },
    Poll {
        access: Access,
        mask: u64,
        /// Its `value` is compared with the masked register, already
        /// shifted into the field.
        wait: Wait,
    },
    /// `local = dev.reg`: one read of a device register (a producer or
    /// consumer index); fields are extracted from the local afterwards.
    Read {
        access: Access,
        local: usize,
    },
    Barrier {
        /// `eieio`, `dsb ish`: spelled until the target is known.
        name: BarrierName,
        origin: Origin,
        /// Edges this barrier was placed for (empty for spec barriers).
        covers: Vec<usize>,
    },
    Return {
        value: Expr,
        span: Span,
    },
    /// `for (local = start; local < start + size; local += step)`, with
    /// at least one iteration when size > 0 and never more than
    /// ceil(size / step); a zero step returns `-EINVAL`.
    Range {
        local: usize,
        start: Expr,
        size: Expr,
        step: Expr,
        body: Vec<Stmt>,
        span: Span,
        /// Barrier run before returning `-EINVAL` for a zero step.
        fail_barrier: ExitBarriers,
    },
    /// `cover start, size with set mode { body }` (expanded by the cover
    /// pass into loops and branches over instantiations of the body).
    Cover {
        set: usize,
        mode: CoverMode,
        start: Expr,
        size: Expr,
        body: Vec<Stmt>,
        span: Span,
        /// Name of its threshold `#define` (auto mode).
        threshold: String,
    },
    /// `local = value`: a `let` (its first assignment) or an assignment.
    Assign {
        local: usize,
        value: Expr,
        span: Span,
    },
    /// `while cond limit N else return fail { body }`: the body runs while
    /// `cond` holds, at most `limit` times; still true after `limit` runs,
    /// the sequence returns `fail` (after `fail_barrier`).
    While {
        cond: Cond,
        body: Vec<Stmt>,
        limit: u64,
        fail: i64,
        span: Span,
        fail_barrier: ExitBarriers,
    },
    /// Two-way branch (made by the cover pass).
    If {
        cond: Cond,
        then_: Vec<Stmt>,
        else_: Vec<Stmt>,
        /// The then arm runs rarely (a queue's batch doorbell, its
        /// full-ring wait): barrier placement costs it as once per loop,
        /// not once per iteration.
        rare: bool,
        /// The spec's `if` (None: made by a pass), for naming its arms.
        span: Option<Span>,
        /// Why a pass made it (a cover's wrap check, its derived threshold):
        /// the `.S` comment on the compare, which has no spec line.
        why: Option<std::sync::Arc<str>>,
    },
    /// A CPU TLB invalidation instruction.
    Invalidate {
        id: OpId,
        /// Target mnemonic with operation (`tlbi vale1is`, `tlbie`).
        name: String,
        operands: Vec<Expr>,
        /// `after invalidates` (its span): every earlier CPU invalidation
        /// is ordered before this one (ir::order).
        after: Option<Span>,
        span: Span,
    },
    /// A special-purpose register move or a TLB-entry instruction that
    /// invalidates nothing (Book III-E `machine e6500`: MAS registers,
    /// `tlbsx`, `tlbre`). Not an access of the ordering model: these act
    /// on this CPU's MAS registers, in program order, and the passes keep
    /// them where the spec put them.
    Sys {
        op: SysOp,
        span: Span,
    },
    /// Normal memory and locks (see [`MemOp`]). Stores (plain, lock
    /// taking and releasing) are ordering-graph operations of class
    /// `NormalStore` under `id`.
    Mem {
        id: OpId,
        op: MemOp,
        span: Span,
    },
}

/// A run-time comparison of two 64-bit values.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Cond {
    pub cmp: super::Cmp,
    pub a: Expr,
    pub b: Expr,
}

impl Cond {
    /// Branch on a value: a comparison becomes the branch's own, anything
    /// else branches on `value != 0`.
    pub fn of(e: Expr) -> Cond {
        use super::Cmp;
        match e {
            Expr::Cmp(rel, a, b) => {
                let (cmp, a, b) = match rel {
                    expr::Rel::Eq => (Cmp::Eq, *a, *b),
                    expr::Rel::Ne => (Cmp::Ne, *a, *b),
                    expr::Rel::Lt => (Cmp::Ltu, *a, *b),
                    expr::Rel::Ge => (Cmp::Geu, *a, *b),
                    expr::Rel::Le => (Cmp::Geu, *b, *a),
                    expr::Rel::Gt => (Cmp::Ltu, *b, *a),
                };
                Cond { cmp, a, b }
            }
            other => Cond {
                cmp: Cmp::Ne,
                a: other,
                b: Expr::Const(0),
            },
        }
    }

    pub fn eval(&self, params: &[u64], locals: &[u64]) -> bool {
        let (a, b) = (
            self.a.eval_with(params, locals),
            self.b.eval_with(params, locals),
        );
        self.cmp.holds(a, b)
    }
}

/// Where a statement nests blocks: the one list for the walks and the
/// rebuilds (the patterns bind shared or mutable blocks by the
/// statement's reference), running `$e` with `$b` bound to each block in
/// program order.
macro_rules! each_block {
    ($s:expr, |$b:ident| $e:expr) => {
        match $s {
            Stmt::Each { body: $b, .. }
            | Stmt::Range { body: $b, .. }
            | Stmt::Cover { body: $b, .. }
            | Stmt::While { body: $b, .. } => {
                $e;
            }
            Stmt::If { then_, else_, .. } => {
                let $b = then_;
                $e;
                let $b = else_;
                $e;
            }
            _ => {}
        }
    };
}

impl Stmt {
    /// Can control leave the sequence from inside this statement?
    pub fn may_exit(&self) -> bool {
        match self {
            Stmt::Poll { .. } | Stmt::Return { .. } => true,
            // A zero step returns -EINVAL; a loop past its limit its code.
            Stmt::Range { .. } | Stmt::While { .. } => true,
            Stmt::Mem {
                op: MemOp::Acquire(a),
                ..
            } => a.limit.is_some(),
            Stmt::Each { body, .. } | Stmt::Cover { body, .. } => body.iter().any(Stmt::may_exit),
            Stmt::If { then_, else_, .. } => then_.iter().chain(else_).any(Stmt::may_exit),
            _ => false,
        }
    }

    /// Rebuild the statement with each block nested directly in it (loop
    /// bodies, cover bodies, both arms of an `if`) passed through `f`.
    pub fn try_map_blocks<E>(
        mut self,
        f: &mut dyn FnMut(Vec<Stmt>) -> Result<Vec<Stmt>, E>,
    ) -> Result<Stmt, E> {
        each_block!(&mut self, |b| *b = f(std::mem::take(b))?);
        Ok(self)
    }

    /// [`Stmt::try_map_blocks`] for a rewrite that cannot fail.
    pub fn map_blocks(self, f: &mut dyn FnMut(Vec<Stmt>) -> Vec<Stmt>) -> Stmt {
        let done: Result<Stmt, std::convert::Infallible> = self.try_map_blocks(&mut |b| Ok(f(b)));
        done.unwrap_or_else(|never| match never {})
    }

    pub fn access(&self) -> Option<&Access> {
        match self {
            Stmt::Write { access, .. } | Stmt::Poll { access, .. } | Stmt::Read { access, .. } => {
                Some(access)
            }
            _ => None,
        }
    }
}

/// [`walk`] with mutable access.
pub fn walk_mut(body: &mut [Stmt], f: &mut dyn FnMut(&mut Stmt)) {
    for s in body {
        f(s);
        each_block!(s, |b| walk_mut(b, f));
    }
}

/// Where a statement holds expressions: the one list, expanded for shared
/// and for mutable statements alike (the same patterns bind `&Expr` or
/// `&mut Expr` by the statement's reference), calling `$f` on each.
macro_rules! exprs_of {
    ($s:expr, $f:expr) => {
        match $s {
            Stmt::Write { value, .. }
            | Stmt::Return { value, .. }
            | Stmt::Poll {
                wait: Wait { value, .. },
                ..
            }
            | Stmt::Assign { value, .. } => $f(value),
            Stmt::While {
                cond: Cond { a, b, .. },
                ..
            }
            | Stmt::If {
                cond: Cond { a, b, .. },
                ..
            } => {
                $f(a);
                $f(b);
            }
            Stmt::Range {
                start, size, step, ..
            } => {
                $f(start);
                $f(size);
                $f(step);
            }
            Stmt::Cover { start, size, .. } => {
                $f(start);
                $f(size);
            }
            Stmt::Invalidate { operands, .. } => {
                for o in operands {
                    $f(o);
                }
            }
            Stmt::Sys {
                op:
                    SysOp::MtSpr { value: e, .. }
                    | SysOp::TlbSearch { ea: e }
                    | SysOp::Wrtee { value: e },
                ..
            } => $f(e),
            Stmt::Mem { op, .. } => match op {
                MemOp::Store { value, .. } => $f(value),
                MemOp::LoadAt { index, .. } => $f(index),
                MemOp::StoreAt { index, value, .. }
                | MemOp::Poll {
                    index,
                    wait: Wait { value, .. },
                    ..
                } => {
                    $f(index);
                    $f(value);
                }
                MemOp::Acquire(Acquire {
                    value: LockValue::Owner(e),
                    ..
                }) => $f(e),
                MemOp::Release { cond: Some(c), .. } => $f(c),
                _ => {}
            },
            _ => {}
        }
    };
}

/// Visit every expression of the statements, in the order `map_exprs`
/// rewrites them.
pub fn each_expr(body: &[Stmt], f: &mut dyn FnMut(&Expr)) {
    walk(body, &mut |s| exprs_of!(s, |e: &Expr| f(e)));
}

/// Apply `f` to every expression of the statements.
pub fn map_exprs(body: &mut [Stmt], f: &mut dyn FnMut(&Expr) -> Expr) {
    walk_mut(body, &mut |s| exprs_of!(s, |e: &mut Expr| *e = f(e)));
}

/// Visit every statement, depth first, in program order.
pub fn walk<'a>(body: &'a [Stmt], f: &mut dyn FnMut(&'a Stmt)) {
    for s in body {
        f(s);
        each_block!(s, |b| walk(b, f));
    }
}
