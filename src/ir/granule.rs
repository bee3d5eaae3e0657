//! Granule sets: what one invalidation can cover, how it is launched,
//! and the modelled costs.

use super::{DevId, RegId};
use crate::spec::diag::Span;

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
