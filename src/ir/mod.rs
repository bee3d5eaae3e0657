//! The checked, target-independent IR: devices with resolved registers and
//! fields, sequences of operations, and the graph of required orderings.
//!
//! Passes rewrite sequence bodies; the ordering graph is keyed by [`OpId`]
//! so it survives reordering and loop fission.

pub mod check;
pub mod cover_map;
pub mod expr;
pub mod insn_imm;
pub mod order;
pub mod print;

use crate::spec::ast::{Endian, Numbering, Scope};
use crate::spec::diag::Span;
pub use expr::Expr;

pub type DevId = usize;
pub type RegId = usize;
pub type FieldId = usize;

/// Identity of one device access in the source; copies made by loop fission
/// keep the id, so edges still name them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct OpId(pub u32);

#[derive(Clone, Debug)]
pub struct Program {
    /// The POWER CPU family (`machine e6500`), and where the spec says it.
    pub machine: crate::target::Machine,
    pub machine_span: Option<Span>,
    /// The spec's path as given on the command line (used in banners).
    pub source_name: String,
    /// The spec text, for mapping spans to lines in listings.
    pub source_text: String,
    /// Byte offsets where each line of `source_text` starts (built on
    /// first use: `line_of` is called for every emitted statement, and a
    /// scan from the top each time made generation quadratic).
    pub line_starts: std::sync::OnceLock<Vec<usize>>,
    pub targets: Vec<(String, Span)>,
    pub devices: Vec<Device>,
    pub granules: Vec<GranuleSet>,
    /// Thresholds pinned in the spec (`threshold NAME = VALUE`).
    pub thresholds: Vec<(String, u64)>,
    /// `feature` declarations; bit `i` of a sequence's feature word is
    /// `features[i]`.
    pub features: Vec<Feature>,
    /// Command queues (their statements are rewritten into plain ones;
    /// kept for the header and the simulated consumer).
    pub queues: Vec<Queue>,
    /// Command layouts (`record`), for the header.
    pub records: Vec<crate::spec::queue::RecordLayout>,
    pub seqs: Vec<Seq>,
}

/// A command ring: producer/consumer registers of `dev`.
#[derive(Clone, Debug)]
pub struct Queue {
    pub name: String,
    pub dev: DevId,
    pub prod: RegId,
    pub cons: RegId,
    /// Bits of the consumer register that hold the index.
    pub cons_mask: u64,
    pub entry: u64,
    pub index: crate::spec::ast::QueueIndex,
    pub batch: Option<u64>,
}

/// A CPU feature or erratum (see [`crate::features`] for how code that
/// depends on one is selected).
#[derive(Clone, Debug)]
pub struct Feature {
    pub name: String,
    pub span: Span,
    /// The kernel capability it stands for, if the spec names one.
    pub cap: Option<String>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Instances {
    /// One instance; the function takes its base address.
    Single,
    /// A fixed array of instances: `void *const base[N]`.
    Fixed(u64),
    /// A run-time set: `void *const base[], unsigned long count`.
    Dynamic { max: u64 },
}

impl Instances {
    /// How many times a per-instance barrier runs, for costing placements.
    pub fn weight(self) -> u64 {
        match self {
            Instances::Single => 1,
            Instances::Fixed(n) => n.max(1),
            Instances::Dynamic { max } => max.max(1),
        }
    }
}

/// How a device's registers are mapped; matters where the memory model
/// distinguishes (AArch64 Device-nGnRE keeps order per peripheral,
/// Device-GRE does not).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mapping {
    /// Caching-inhibited, guarded / Device-nGnRE / UC: the default for MMIO.
    Strong,
    /// Device-GRE (gathering, reordering allowed).
    Weak,
}

#[derive(Clone, Debug)]
pub struct Device {
    pub name: String,
    pub span: Span,
    pub instances: Instances,
    pub mapping: Mapping,
    pub regs: Vec<Reg>,
    pub fields: Vec<Field>,
    pub requires: Vec<Require>,
    /// `require stores before REG`: the caller's normal-memory stores
    /// (e.g. page tables the device walks) must be visible first.
    pub after_stores: Vec<(RegId, Span)>,
}

impl Device {
    /// Bytes from the base to the end of the highest register (8 for a
    /// device without registers): the window a simulated instance needs.
    pub fn extent(&self) -> u64 {
        self.regs
            .iter()
            .map(|r| r.offset + u64::from(r.bytes()))
            .max()
            .unwrap_or(8)
    }
}

#[derive(Clone, Debug)]
pub struct Reg {
    pub name: String,
    pub span: Span,
    pub offset: u64,
    /// Bits: 8, 16, 32 or 64.
    pub width: u32,
    pub endian: Endian,
}

impl Reg {
    pub fn bytes(&self) -> u32 {
        self.width / 8
    }
}

#[derive(Clone, Debug)]
pub struct Field {
    pub reg: RegId,
    pub name: String,
    pub span: Span,
    /// LSB0 shift of the field's least significant bit.
    pub shift: u32,
    pub width: u32,
    /// As written, for documentation in headers.
    pub numbering: Numbering,
    pub first: u64,
    pub last: u64,
}

impl Field {
    pub fn mask(&self) -> u64 {
        expr::field_mask(self.shift, self.width)
    }
}

#[derive(Clone, Debug)]
pub struct Require {
    pub before: RegId,
    pub after: RegId,
    pub scope: Scope,
    pub span: Span,
}

#[derive(Clone, Debug)]
pub struct Seq {
    pub name: String,
    pub span: Span,
    pub params: Vec<String>,
    /// Devices the sequence touches, in declaration order: they become the
    /// leading function arguments.
    pub devices: Vec<DevId>,
    pub body: Vec<Stmt>,
    /// Orderings the hardware needs between accesses of this sequence.
    pub edges: Vec<order::Edge>,
    /// Names of `range` loop variables, by local index.
    pub locals: Vec<String>,
    /// `order ...` declarations (edges are recomputed after expansion).
    pub orders: Vec<(String, String, Span)>,
    /// Element width in bits of each parameter that is a pointer
    /// (`ptr u8` -> Some(8)); None for 64-bit integer parameters.
    pub ptrs: Vec<Option<u32>>,
    /// Pointer parameters declared `private`: memory no device or other
    /// CPU writes (loads of it may be reused across device accesses).
    pub private: Vec<bool>,
    /// C type of each integer parameter written `ulong` or `long` (still
    /// 64 bits in registers); None: `u64`, i.e. `unsigned long long`.
    pub ctypes: Vec<Option<&'static str>>,
    /// `NAME: phys PTR`: the pointer parameter whose physical address
    /// integer parameter NAME holds (a device's completion write lands
    /// there).
    pub phys: Vec<Option<usize>>,
    /// `-> void`: the C prototype returns nothing.
    pub void: bool,
    /// The parameter holding the feature word (`features`, appended to
    /// the declared ones) when the sequence tests features at run time.
    pub feature_word: Option<usize>,
    /// The local holding an `acquire ... held CODE` status (0 = taken,
    /// CODE = already held by this owner): what the sequence returns when
    /// it runs off its end.
    pub status: Option<usize>,
    /// What each pass did, for `show --stage opt`.
    pub notes: Vec<String>,
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
    /// Spin until the lock is free, then take it atomically (load-reserve,
    /// compare, branch, store-conditional), then an acquire barrier.
    Acquire {
        mem: MemRef,
        value: LockValue,
        /// Already held by this owner: set `status` to this code and go on
        /// without taking it (needs an `Owner` value and a status local).
        held: Option<u64>,
        status: Option<usize>,
        /// Bounded spin: (reads, negative return code).
        limit: Option<(u64, i64)>,
        /// Barrier run before returning the spin's failure code.
        fail_barrier: Option<String>,
        /// Loop-invariant work (the owner value, clearing the status) is
        /// done before the reservation window; false (the naive code) does
        /// it inside, on every retry.
        hoisted: bool,
    },
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
        op: PollOp,
        value: Expr,
        limit: u64,
        fail: i64,
        fail_barrier: Option<String>,
    },
    Release {
        mem: MemRef,
        value: LockValue,
        /// Release only when this value is 0 (a token from `acquire held`).
        cond: Option<Expr>,
        order: ReleaseOrder,
    },
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

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PollOp {
    /// Wait until `(reg & mask) == value`.
    Eq,
    /// Wait until `(reg & mask) != value`.
    Ne,
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
        op: PollOp,
        /// Compared with the masked register; a constant or a run-time
        /// value (e.g. a producer index), already shifted into the field.
        value: Expr,
        limit: u64,
        fail: i64,
        /// Barrier run before returning `fail` (completes invalidations
        /// the sequence must finish before any return; see
        /// `passes::exits`).
        fail_barrier: Option<String>,
    },
    /// `local = dev.reg`: one read of a device register (a producer or
    /// consumer index); fields are extracted from the local afterwards.
    Read {
        access: Access,
        local: usize,
    },
    Barrier {
        /// Target mnemonic, e.g. `eieio`, `dsb ish`.
        name: String,
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
        fail_barrier: Option<String>,
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
        fail_barrier: Option<String>,
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
    pub cmp: crate::lir::Cmp,
    pub a: Expr,
    pub b: Expr,
}

impl Cond {
    /// Branch on a value: a comparison becomes the branch's own, anything
    /// else branches on `value != 0`.
    pub fn of(e: Expr) -> Cond {
        use crate::lir::Cmp;
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

pub use crate::spec::ast::CoverMode;

/// A granule set: what one invalidate can cover, and what things cost.
#[derive(Clone, Debug)]
pub struct GranuleSet {
    pub name: String,
    pub span: Span,
    pub dev: Option<DevId>,
    pub entries: Vec<Granule>,
    pub costs: Costs,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum GSize {
    Bytes(u64),
    /// A sequence parameter by name (resolved per sequence).
    Param(String),
    All,
    /// A run of granules per operation (`$num`, `$scale`).
    Range,
}

#[derive(Clone, Debug)]
pub struct Granule {
    pub size: GSize,
    /// Field bits this op needs, all registers together.
    pub bits: u64,
    /// The same settings per register: what `$bits` is in a write to
    /// that register (a register the granule sets nothing in gets 0).
    pub reg_bits: Vec<(RegId, u64)>,
    /// Register the op reads its address from.
    pub addr: Option<RegId>,
    /// What launches the op: a register write or an instruction mnemonic.
    pub via: Option<Via>,
    /// Registers of the fields the op sets (`set launch.ap = 5`): writing
    /// them launches the op when no `via` says otherwise.
    pub set_regs: Vec<RegId>,
    pub span: Span,
}

impl Granule {
    /// `$bits` in a write to `reg`.
    pub fn bits_of(&self, reg: RegId) -> u64 {
        self.reg_bits
            .iter()
            .find(|(r, _)| *r == reg)
            .map_or(0, |(_, b)| *b)
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Via {
    Reg(RegId),
    Insn(String),
    /// A command of this record enqueued on the set's queue
    /// (`granules NAME on QUEUE`).
    Record(String),
}

/// Modelled costs, in ns. Stated in the spec with where they come from.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Costs {
    /// One invalidate operation (latency seen by the issuing CPU).
    pub invalidate: u64,
    /// One MMIO store.
    pub store: u64,
    /// One barrier.
    pub barrier: u64,
    /// Refilling one granule's worth of translations that were thrown
    /// away needlessly (over-invalidation).
    pub refill: u64,
    /// Refilling after a flush-all, beyond its `invalidate` cost.
    pub all: u64,
}

/// Assumed iteration count of a `range` loop when costing barriers placed
/// inside it (the real count is only known at run time).
pub const RANGE_WEIGHT: u64 = 16;

impl OpId {
    /// Not an access: what the interpreter records barriers under.
    pub const BARRIER: OpId = OpId(u32::MAX - 2);
    /// The caller's earlier normal-memory stores (page-table updates).
    pub const ENTRY: OpId = OpId(u32::MAX - 1);
    /// The return to the caller.
    pub const EXIT: OpId = OpId(u32::MAX);
}

impl Stmt {
    /// Can control leave the sequence from inside this statement?
    pub fn may_exit(&self) -> bool {
        match self {
            Stmt::Poll { .. } | Stmt::Return { .. } => true,
            // A zero step returns -EINVAL; a loop past its limit its code.
            Stmt::Range { .. } | Stmt::While { .. } => true,
            Stmt::Mem {
                op: MemOp::Acquire { limit, .. },
                ..
            } => limit.is_some(),
            Stmt::Each { body, .. } | Stmt::Cover { body, .. } => body.iter().any(Stmt::may_exit),
            Stmt::If { then_, else_, .. } => then_.iter().chain(else_).any(Stmt::may_exit),
            _ => false,
        }
    }

    /// Rebuild the statement with each block nested directly in it (loop
    /// bodies, cover bodies, both arms of an `if`) passed through `f`.
    pub fn try_map_blocks<E>(
        self,
        f: &mut dyn FnMut(Vec<Stmt>) -> Result<Vec<Stmt>, E>,
    ) -> Result<Stmt, E> {
        Ok(match self {
            Stmt::Each {
                dev,
                body,
                span,
                group,
            } => Stmt::Each {
                dev,
                body: f(body)?,
                span,
                group,
            },
            Stmt::Range {
                local,
                start,
                size,
                step,
                body,
                span,
                fail_barrier,
            } => Stmt::Range {
                local,
                start,
                size,
                step,
                body: f(body)?,
                span,
                fail_barrier,
            },
            Stmt::While {
                cond,
                body,
                limit,
                fail,
                span,
                fail_barrier,
            } => Stmt::While {
                cond,
                body: f(body)?,
                limit,
                fail,
                span,
                fail_barrier,
            },
            Stmt::Cover {
                set,
                mode,
                start,
                size,
                body,
                span,
                threshold,
            } => Stmt::Cover {
                set,
                mode,
                start,
                size,
                body: f(body)?,
                span,
                threshold,
            },
            Stmt::If {
                cond,
                then_,
                else_,
                rare,
            } => Stmt::If {
                rare,
                cond,
                then_: f(then_)?,
                else_: f(else_)?,
            },
            other => other,
        })
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

impl Program {
    /// 1-based line of a span's start.
    pub fn line_of(&self, span: Span) -> usize {
        let starts = self.line_starts.get_or_init(|| {
            std::iter::once(0)
                .chain(
                    self.source_text
                        .bytes()
                        .enumerate()
                        .filter(|&(_, c)| c == b'\n')
                        .map(|(i, _)| i + 1),
                )
                .collect()
        });
        // Lines whose start is at or before the offset.
        starts.partition_point(|&s| s <= span.offset.min(self.source_text.len()))
    }
    /// The trimmed source text of a span's first line (for comments).
    pub fn snippet(&self, span: Span) -> String {
        let end = (span.offset + span.len).min(self.source_text.len());
        let text = self.source_text.get(span.offset..end).unwrap_or("");
        let first = text.lines().next().unwrap_or("").trim();
        // Only look as far as needed: the span of a loop covers its body.
        let more_lines = text.find('\n').is_some_and(|i| i + 1 < text.len());
        let cut = first.char_indices().nth(60).map(|(i, _)| i);
        let mut s = String::with_capacity(first.len().min(240) + 4);
        s.push_str(&first[..cut.unwrap_or(first.len())]);
        if cut.is_some() || more_lines {
            s.push_str(" ...");
        }
        s
    }
}

/// [`walk`] with mutable access.
pub fn walk_mut(body: &mut [Stmt], f: &mut dyn FnMut(&mut Stmt)) {
    for s in body {
        f(s);
        match s {
            Stmt::Each { body, .. }
            | Stmt::Range { body, .. }
            | Stmt::Cover { body, .. }
            | Stmt::While { body, .. } => walk_mut(body, f),
            Stmt::If { then_, else_, .. } => {
                walk_mut(then_, f);
                walk_mut(else_, f);
            }
            _ => {}
        }
    }
}

/// Apply `f` to every expression of the statements.
pub fn map_exprs(body: &mut [Stmt], f: &mut dyn FnMut(&Expr) -> Expr) {
    walk_mut(body, &mut |s| match s {
        Stmt::Write { value, .. }
        | Stmt::Return { value, .. }
        | Stmt::Poll { value, .. }
        | Stmt::Assign { value, .. } => *value = f(value),
        Stmt::While { cond, .. } => {
            cond.a = f(&cond.a);
            cond.b = f(&cond.b);
        }
        Stmt::Range {
            start, size, step, ..
        } => {
            *start = f(start);
            *size = f(size);
            *step = f(step);
        }
        Stmt::Cover { start, size, .. } => {
            *start = f(start);
            *size = f(size);
        }
        Stmt::If { cond, .. } => {
            cond.a = f(&cond.a);
            cond.b = f(&cond.b);
        }
        Stmt::Invalidate { operands, .. } => {
            for o in operands {
                *o = f(o);
            }
        }
        Stmt::Mem { op, .. } => match op {
            MemOp::Store { value, .. } => *value = f(value),
            MemOp::LoadAt { index, .. } => *index = f(index),
            MemOp::StoreAt { index, value, .. } | MemOp::Poll { index, value, .. } => {
                *index = f(index);
                *value = f(value);
            }
            MemOp::Acquire {
                value: LockValue::Owner(e),
                ..
            } => *e = f(e),
            MemOp::Release { cond: Some(c), .. } => *c = f(c),
            _ => {}
        },
        _ => {}
    });
}

/// Visit every statement, depth first, in program order.
pub fn walk<'a>(body: &'a [Stmt], f: &mut dyn FnMut(&'a Stmt)) {
    for s in body {
        f(s);
        match s {
            Stmt::Each { body, .. }
            | Stmt::Range { body, .. }
            | Stmt::Cover { body, .. }
            | Stmt::While { body, .. } => walk(body, f),
            Stmt::If { then_, else_, .. } => {
                walk(then_, f);
                walk(else_, f);
            }
            _ => {}
        }
    }
}
