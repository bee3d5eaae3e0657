//! The checked, target-independent IR: devices with resolved registers and
//! fields, sequences of operations, and the graph of required orderings.
//!
//! Passes rewrite sequence bodies; the ordering graph is keyed by [`OpId`]
//! so it survives reordering and loop fission.

pub mod check;
pub mod expr;
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
    /// The spec's path as given on the command line (used in banners).
    pub source_name: String,
    /// The spec text, for mapping spans to lines in listings.
    pub source_text: String,
    pub targets: Vec<(String, Span)>,
    pub devices: Vec<Device>,
    pub seqs: Vec<Seq>,
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
        value: u64,
        limit: u64,
        fail: i64,
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
    },
    /// A CPU TLB invalidation instruction.
    Invalidate {
        id: OpId,
        /// Target mnemonic with operation (`tlbi vale1is`, `tlbie`).
        name: String,
        operands: Vec<Expr>,
        span: Span,
    },
}

/// Assumed iteration count of a `range` loop when costing barriers placed
/// inside it (the real count is only known at run time).
pub const RANGE_WEIGHT: u64 = 16;

impl OpId {
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
            // A zero step returns -EINVAL.
            Stmt::Range { .. } => true,
            Stmt::Each { body, .. } => body.iter().any(Stmt::may_exit),
            _ => false,
        }
    }

    pub fn access(&self) -> Option<&Access> {
        match self {
            Stmt::Write { access, .. } | Stmt::Poll { access, .. } => Some(access),
            _ => None,
        }
    }
}

impl Program {
    /// 1-based line of a span's start.
    pub fn line_of(&self, span: Span) -> usize {
        crate::spec::diag::line_col(&self.source_text, span.offset).0
    }
    /// The trimmed source text of a span's first line (for comments).
    pub fn snippet(&self, span: Span) -> String {
        let end = (span.offset + span.len).min(self.source_text.len());
        let text = self.source_text.get(span.offset..end).unwrap_or("");
        let first = text.lines().next().unwrap_or("").trim();
        let mut s: String = first.chars().take(60).collect();
        if first.chars().count() > 60 || text.lines().count() > 1 {
            s.push_str(" ...");
        }
        s
    }
}

/// Visit every statement, depth first, in program order.
pub fn walk<'a>(body: &'a [Stmt], f: &mut dyn FnMut(&'a Stmt)) {
    for s in body {
        f(s);
        if let Stmt::Each { body, .. } | Stmt::Range { body, .. } = s {
            walk(body, f);
        }
    }
}
