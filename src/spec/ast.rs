//! Syntax tree of a spec, as written (names unresolved, spans kept).

use super::diag::Span;
pub use super::ops::{BinOp as ArithOp, Rel};
use serde::Serialize;

#[derive(Clone, Debug, Serialize)]
pub struct Ident {
    pub name: String,
    #[serde(skip)]
    pub span: Span,
}

#[derive(Clone, Debug, Default, Serialize)]
pub struct Spec {
    pub targets: Vec<Ident>,
    /// `machine NAME` lines (POWER CPU family; at most one is valid).
    pub machines: Vec<Ident>,
    pub devices: Vec<Device>,
    pub granules: Vec<Granules>,
    /// `threshold NAME = VALUE`: pinned strategy thresholds.
    pub thresholds: Vec<(Ident, u64)>,
    /// `feature NAME [= CAPABILITY]`: CPU features and errata.
    pub features: Vec<FeatureDecl>,
    /// `record NAME SIZE { field ... }`: a command layout in memory.
    pub records: Vec<Record>,
    /// `queue NAME on DEV { ... }`: a command ring in normal memory.
    pub queues: Vec<Queue>,
    pub seqs: Vec<Seq>,
}

/// `record NAME BYTES { field NAME lsb0|msb0 A..B [= VALUE] ... }`: the
/// layout of a command (or descriptor) written to a queue, in 64-bit words;
/// bit numbers count across the whole record (lsb0: bit 64 is bit 0 of
/// the second word, as SMMUv3, VT-d and AMD number their commands).
#[derive(Clone, Debug, Serialize)]
pub struct Record {
    pub name: Ident,
    pub size: u64,
    #[serde(skip)]
    pub size_span: Span,
    pub fields: Vec<RecordField>,
    /// `write u32 data at addr << 2 when sw`: what the device stores to
    /// memory when it consumes the command (a completion write).
    pub write: Option<RecordWrite>,
    #[serde(skip)]
    pub span: Span,
}

#[derive(Clone, Debug, Serialize)]
pub struct RecordField {
    pub name: Ident,
    pub numbering: Numbering,
    pub first: u64,
    pub last: u64,
    #[serde(skip)]
    pub bits_span: Span,
    /// `= VALUE`: fixed by the record (an opcode).
    pub fixed: Option<(u64, Span)>,
}

/// A record's completion write: when the device consumes an entry of the
/// record (and field `when` is nonzero), it stores field `value`, `bytes`
/// wide, at the address field `addr` << `shift`.
#[derive(Clone, Debug, Serialize)]
pub struct RecordWrite {
    pub width: Ident,
    pub value: Ident,
    pub addr: Ident,
    pub shift: u64,
    pub when: Option<Ident>,
    #[serde(skip)]
    pub span: Span,
}

/// How a queue's producer and consumer registers count.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum QueueIndex {
    /// An entry index with a wrap bit just above it (SMMUv3): full when
    /// all 2^n entries are in use.
    Wrap,
    /// A byte offset into the ring (VT-d IQT/IQH, AMD tail/head): one
    /// entry is kept free, full when the next offset is the consumer's.
    Bytes,
}

/// `queue NAME on DEV { entry 16 le; prod REG; cons REG[.FIELD];
/// index wrap|bytes; [batch N;] full limit N }`.
#[derive(Clone, Debug, Serialize)]
pub struct Queue {
    pub name: Ident,
    pub dev: Ident,
    pub entry: u64,
    #[serde(skip)]
    pub entry_span: Span,
    pub endian: Endian,
    pub prod: Ident,
    pub cons: Vec<Ident>,
    pub index: QueueIndex,
    pub batch: Option<(u64, Span)>,
    /// Reads of the consumer register while the ring stays full.
    pub full_limit: u64,
    #[serde(skip)]
    pub span: Span,
}

/// `feature NAME [= CAPABILITY]`: a property of the CPU fixed at boot
/// (an erratum, an ISA level). CAPABILITY names the kernel's own bit
/// (`ARM64_WORKAROUND_REPEAT_TLBI`, `CPU_FTR_ARCH_31`) so that
/// `--style linux` code is patched by the kernel's alternatives.
#[derive(Clone, Debug, Serialize)]
pub struct FeatureDecl {
    pub name: Ident,
    pub cap: Option<Ident>,
}

/// `granules NAME [on DEV] { ... }`: what one invalidate can cover.
#[derive(Clone, Debug, Serialize)]
pub struct Granules {
    pub name: Ident,
    pub dev: Option<Ident>,
    pub entries: Vec<Granule>,
    /// `cost KIND VALUE [ns|us|ms]`, normalised to ns.
    pub costs: Vec<(Ident, u64)>,
    #[serde(skip)]
    pub span: Span,
}

#[derive(Clone, Debug, Serialize)]
pub enum GranuleSize {
    /// A constant size in bytes (`64K`).
    Bytes(u64),
    /// `size NAME`: given at run time by a sequence parameter.
    Param(Ident),
    /// `all`: everything (no address).
    All,
    /// `range`: an operation covering a run of granules (arm64 TLBI R*:
    /// `$num` and `$scale` give (num + 1) << (5 * scale + 1) granules).
    Range,
}

#[derive(Clone, Debug, Serialize)]
pub struct Granule {
    pub size: GranuleSize,
    /// `set REG.FIELD = VALUE`: field settings this size needs.
    pub sets: Vec<(Ident, Ident, Expr)>,
    /// `addr REG`: the register the op reads its address from.
    pub addr: Option<Ident>,
    /// `via REG` or `via tlbi OP`: what launches the op.
    pub via: Option<Ident>,
    #[serde(skip)]
    pub span: Span,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum CoverMode {
    Single,
    Exact,
    Auto,
    /// Range operations (arm64 FEAT_TLBIRANGE), single ops for an odd
    /// count, and `all` only past the range operations' reach.
    Range,
}

#[derive(Clone, Debug, Serialize)]
pub struct Device {
    pub name: Ident,
    pub instances: Option<Instances>,
    pub mapping: Option<Ident>,
    pub regs: Vec<Reg>,
    pub fields: Vec<Field>,
    pub requires: Vec<Require>,
}

#[derive(Clone, Debug, Serialize)]
pub enum Instances {
    Fixed {
        count: u64,
        #[serde(skip)]
        span: Span,
    },
    Dynamic {
        max: u64,
        #[serde(skip)]
        span: Span,
    },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum Endian {
    Big,
    Little,
}

#[derive(Clone, Debug, Serialize)]
pub struct Reg {
    pub name: Ident,
    pub offset: u64,
    #[serde(skip)]
    pub offset_span: Span,
    pub width: u32,
    #[serde(skip)]
    pub width_span: Span,
    pub endian: Endian,
    #[serde(skip)]
    pub span: Span,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum Numbering {
    Msb0,
    Lsb0,
}

#[derive(Clone, Debug, Serialize)]
pub struct Field {
    pub reg: Ident,
    pub name: Ident,
    pub numbering: Numbering,
    /// As written: `first..last` (or a single bit, first == last).
    pub first: u64,
    pub last: u64,
    #[serde(skip)]
    pub bits_span: Span,
    #[serde(skip)]
    pub span: Span,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum Scope {
    /// The ordering holds between accesses to the same device instance.
    SameInstance,
    /// The ordering holds across all instances of the device.
    AnyInstance,
}

#[derive(Clone, Debug, Serialize)]
pub struct Require {
    pub before: Ident,
    pub after: Ident,
    pub scope: Scope,
    #[serde(skip)]
    pub span: Span,
}

#[derive(Clone, Debug, Serialize)]
pub struct Param {
    pub name: Ident,
    pub ty: Ident,
    /// `ptr u8|u16|u32|u64`: the element type of a pointer parameter
    /// (normal memory the sequence loads, stores and locks).
    pub elem: Option<Ident>,
    /// `ptr u64 private`: memory only this CPU reads and writes (no device
    /// or other CPU changes it), so a load of it may be reused across
    /// device accesses, polls, barriers and lock operations.
    #[serde(skip)]
    pub private: Option<Span>,
    /// `NAME: phys PTR`: the physical (DMA) address of the memory pointer
    /// parameter PTR points to, for a device's completion write.
    pub phys: Option<Ident>,
}

#[derive(Clone, Debug, Serialize)]
pub struct Seq {
    pub name: Ident,
    pub params: Vec<Param>,
    /// `-> void`: the C prototype returns `void`.
    pub void: bool,
    pub body: Vec<Stmt>,
    #[serde(skip)]
    pub span: Span,
}

/// What an `acquire` stores: an owner value, or one bit (test-and-set).
#[derive(Clone, Debug, Serialize)]
pub enum LockValue {
    Owner(Expr),
    Bit(u64, #[serde(skip)] Span),
}

/// `dev.reg` or `dev.reg.field`.
#[derive(Clone, Debug, Serialize)]
pub struct Path {
    pub parts: Vec<Ident>,
    #[serde(skip)]
    pub span: Span,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum CmpOp {
    Eq,
    Ne,
}

/// Expressions of the rarer statements are boxed: an enum is as large as
/// its largest variant, and writes and `each` loops (most of a large
/// spec) paid 368 bytes each for an `acquire`'s four expressions. Now
/// 128 bytes; `Expr` is 48 (a call's and a pointer's names are boxed).
#[derive(Clone, Debug, Serialize)]
pub enum Stmt {
    Each {
        dev: Ident,
        body: Vec<Stmt>,
        #[serde(skip)]
        span: Span,
    },
    Write {
        target: Path,
        value: Expr,
        #[serde(skip)]
        span: Span,
    },
    Poll {
        target: Box<PollTarget>,
        op: CmpOp,
        value: Box<Expr>,
        limit: Option<(u64, Span)>,
        fail: Option<Box<Expr>>,
        #[serde(skip)]
        span: Span,
    },
    Barrier {
        name: Ident,
        #[serde(skip)]
        span: Span,
    },
    Return {
        value: Expr,
        #[serde(skip)]
        span: Span,
    },
    /// `range a in start, size step g { ... }`: `a` takes start,
    /// start+g, ... while below start+size.
    Range {
        var: Ident,
        start: Box<Expr>,
        size: Box<Expr>,
        step: Box<Expr>,
        body: Vec<Stmt>,
        #[serde(skip)]
        span: Span,
    },
    /// A CPU invalidation instruction: `tlbi vale1is, EXPR`,
    /// `tlbie RB, RS, RIC, PRS, R`, `invlpg EXPR`, optionally followed by
    /// `after invalidates`.
    Invalidate {
        /// Mnemonic with its operation (`tlbi vale1is`).
        name: Ident,
        operands: Vec<Expr>,
        /// `after invalidates`: issued only once every earlier CPU
        /// invalidation of the sequence is ordered before it.
        #[serde(skip)]
        after: Option<Span>,
        #[serde(skip)]
        span: Span,
    },
    /// `cover START, SIZE with SET MODE { ... }`: the body runs once per
    /// chosen invalidate with `$addr`, `$bits` and `$size` bound.
    Cover {
        start: Box<Expr>,
        size: Box<Expr>,
        set: Ident,
        mode: CoverMode,
        #[serde(skip)]
        mode_span: Span,
        body: Vec<Stmt>,
        #[serde(skip)]
        span: Span,
    },
    /// `acquire MEM = OWNER [held CODE] [limit N else return -CODE]` or
    /// `acquire MEM bit N [limit ...]`: a reservation-loop lock.
    Acquire {
        mem: Box<Expr>,
        value: Box<LockValue>,
        held: Option<Box<Expr>>,
        limit: Option<(u64, Span)>,
        fail: Option<Box<Expr>>,
        #[serde(skip)]
        span: Span,
    },
    /// `release MEM [= VALUE | bit N] [if EXPR == 0]`.
    Release {
        mem: Box<Expr>,
        value: Option<Box<LockValue>>,
        cond: Option<Box<Expr>>,
        #[serde(skip)]
        span: Span,
    },
    /// `p[OFF] = VALUE`: a normal-memory store through a pointer parameter.
    MemWrite {
        mem: Box<Expr>,
        value: Box<Expr>,
        #[serde(skip)]
        span: Span,
    },
    /// `if COND { ... } else { ... }` (`else if` nests in the else arm).
    If {
        cond: Box<Expr>,
        then_: Vec<Stmt>,
        else_: Vec<Stmt>,
        /// Made by a queue rewrite: the then arm runs rarely.
        #[serde(skip)]
        rare: bool,
        #[serde(skip)]
        span: Span,
    },
    /// `let NAME = VALUE`: a 64-bit local, visible to the end of its block.
    Let {
        name: Ident,
        value: Expr,
        #[serde(skip)]
        span: Span,
    },
    /// `NAME = VALUE`: assignment to a `let` local.
    Assign {
        name: Ident,
        value: Expr,
        #[serde(skip)]
        span: Span,
    },
    /// `while COND limit N [else return -CODE] { ... }`: at most N runs of
    /// the body; still true after N runs, the sequence returns CODE.
    While {
        cond: Box<Expr>,
        limit: u64,
        #[serde(skip)]
        limit_span: Span,
        fail: Option<Box<Expr>>,
        body: Vec<Stmt>,
        #[serde(skip)]
        span: Span,
    },
    /// `enqueue Q RECORD { field: value, ... }`: one command into the ring
    /// (waiting for space when it is full; published every `batch`).
    Enqueue {
        queue: Ident,
        record: Ident,
        fields: Vec<(Ident, Expr)>,
        #[serde(skip)]
        span: Span,
    },
    /// `issue Q`: publish the producer index (the doorbell).
    Issue {
        queue: Ident,
        #[serde(skip)]
        span: Span,
    },
    /// `wait Q limit N [else return -CODE]`: until the device consumed
    /// everything published.
    Wait {
        queue: Ident,
        limit: Option<(u64, Span)>,
        fail: Option<Box<Expr>>,
        #[serde(skip)]
        span: Span,
    },
    /// A Book III-E (`machine e6500`) TLB-entry or MAS register
    /// instruction: `mtspr SPR, VALUE`, `tlbsx EA`, `tlbre`.
    Sys {
        /// `mtspr`, `tlbsx`, `tlbre`.
        name: Ident,
        /// The register `mtspr` writes.
        spr: Option<Ident>,
        operands: Vec<Expr>,
        #[serde(skip)]
        span: Span,
    },
    /// `assume COND`: a precondition on the parameters that the caller
    /// guarantees (written at the top of the sequence).
    Assume {
        cond: Expr,
        #[serde(skip)]
        span: Span,
    },
    /// `order stores before invalidates` / `order invalidates before return`.
    Order {
        before: Ident,
        after: Ident,
        #[serde(skip)]
        span: Span,
    },
}

/// What a `poll` reads: a device register (or field), or normal memory.
#[derive(Clone, Debug, Serialize)]
pub enum PollTarget {
    Reg(Path),
    Mem(Expr),
}

/// A binary operator as written. Serialized as the bare operator name
/// (`"Or"`, `"Eq"`, `"LogAnd"`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(untagged)]
pub enum BinOp {
    Arith(ArithOp),
    /// Comparisons (unsigned), 1 when they hold, else 0.
    Rel(Rel),
    Logic(Logic),
}

/// `&&`, `||`: 1 when both / either operand is nonzero, else 0.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum Logic {
    LogAnd,
    LogOr,
}

#[derive(Clone, Debug, Serialize)]
pub enum Expr {
    Int {
        value: u64,
        #[serde(skip)]
        span: Span,
    },
    Name(Ident),
    /// `$addr`, `$bits`, `$size` inside a `cover` body.
    Binding(Ident),
    /// `feature NAME`: 1 when the CPU has the feature, else 0.
    Feature(Ident),
    /// `mfspr SPR` (Book III-E `machine e6500`: `mfspr MAS1`): a read of
    /// a special-purpose register, placed before its statement like a
    /// device register read. `mfmsr` is parsed as this read of `MSR`.
    MfSpr(Ident),
    Neg {
        inner: Box<Expr>,
        #[serde(skip)]
        span: Span,
    },
    Not {
        inner: Box<Expr>,
        #[serde(skip)]
        span: Span,
    },
    /// `!x`: 1 when x is 0, else 0.
    LogNot {
        inner: Box<Expr>,
        #[serde(skip)]
        span: Span,
    },
    /// A built-in function: `ffs(x)`, `min(a, b)`, ...
    Call {
        func: Box<Ident>,
        args: Vec<Expr>,
        #[serde(skip)]
        span: Span,
    },
    Bin {
        op: BinOp,
        lhs: Box<Expr>,
        rhs: Box<Expr>,
        #[serde(skip)]
        span: Span,
    },
    /// `p` or `p[OFF]`: the element at byte offset OFF of pointer
    /// parameter `p` (a normal-memory load when used as a value).
    Mem {
        ptr: Box<Ident>,
        offset: u64,
        /// A byte offset computed at run time (`p[(idx & mask) * 16]`).
        index: Option<Box<Expr>>,
        #[serde(skip)]
        span: Span,
    },
    /// `dev.reg` or `dev.reg.field` as a value: one read of the device
    /// register (made before the statement, like a memory read).
    Reg(Path),
    /// `{ field: value, ... }`: fields of the register being written.
    Aggregate {
        fields: Vec<(Ident, Expr)>,
        #[serde(skip)]
        span: Span,
    },
}

impl Expr {
    pub fn span(&self) -> Span {
        match self {
            Expr::Int { span, .. }
            | Expr::Neg { span, .. }
            | Expr::Not { span, .. }
            | Expr::LogNot { span, .. }
            | Expr::Call { span, .. }
            | Expr::Bin { span, .. }
            | Expr::Mem { span, .. }
            | Expr::Aggregate { span, .. } => *span,
            Expr::Reg(p) => p.span,
            Expr::Name(i) | Expr::Binding(i) | Expr::Feature(i) | Expr::MfSpr(i) => i.span,
        }
    }
}
