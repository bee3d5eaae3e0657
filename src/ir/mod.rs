//! The checked, target-independent IR: devices with resolved registers and
//! fields, sequences of operations, and the graph of required orderings.
//!
//! Passes rewrite sequence bodies; the ordering graph is keyed by [`OpId`]
//! so it survives reordering and loop fission.

pub mod barrier;
pub mod c_names;
pub mod check;
mod cmp;
pub mod cover_map;
pub mod expr;
pub mod facts;
pub mod feature;
mod granule;
pub mod insn_imm;
pub mod isa;
mod machine;
pub mod order;
pub mod print;
mod stmt;
pub mod thresholds;

use crate::spec::ast::{Endian, Numbering, Scope};
use crate::spec::diag::Span;
pub use cmp::Cmp;
pub use expr::Expr;
pub use machine::Machine;

pub use granule::{
    all_entry, body_issues, loop_entry, sized_entries, Costs, GSize, Granule, GranuleSet, ParamSet,
    Via,
};
pub use stmt::{
    each_expr, map_exprs, walk, walk_mut, Access, Acquire, BarrierName, Cond, ExitBarriers,
    LockValue, MemOp, MemRef, Origin, PollOp, ReleaseOrder, Spr, SprError, Stmt, SysOp, Wait,
};
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
    pub machine: Machine,
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
    /// The queue's name in the spec.
    pub span: Span,
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

/// An `order BEFORE before AFTER` declaration: its two ends as written
/// (`stores`, `invalidates` or `return`) and where.
pub type Order = (String, String, Span);

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
    pub orders: Vec<Order>,
    /// For each of `orders`, the `if feature` arms it was written in:
    /// (feature, the value that arm runs with). An order applies to a
    /// variant only where all of them hold: [`crate::features::resolve`]
    /// drops it from a variant with the feature fixed the other way.
    pub order_guards: Vec<Vec<(usize, bool)>>,
    /// For each of `edges` once the features pass has split the sequence
    /// into variants: the variant it belongs to, as (feature, value)
    /// pairs (empty: every variant, or none split).
    pub edge_variants: Vec<Vec<(usize, bool)>>,
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
    /// `assume COND`: what the caller guarantees of the parameters (the
    /// `assume` pass folds the checks these decide; see [`facts`]).
    pub assumes: Vec<facts::Assume>,
}

pub use crate::spec::ast::CoverMode;

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

impl Program {
    /// A copy of everything but the sequences (which passes copy one by
    /// one, on every core).
    pub fn without_seqs(&self) -> Program {
        Program {
            machine: self.machine,
            machine_span: self.machine_span,
            source_name: self.source_name.clone(),
            source_text: self.source_text.clone(),
            line_starts: self.line_starts.clone(),
            targets: self.targets.clone(),
            devices: self.devices.clone(),
            granules: self.granules.clone(),
            thresholds: self.thresholds.clone(),
            features: self.features.clone(),
            queues: self.queues.clone(),
            records: self.records.clone(),
            seqs: Vec::new(),
        }
    }

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
