//! Granule sets: what one invalidation can cover, how it is launched,
//! and the modelled costs.

use super::expr::{BinOp, Expr};
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
    /// Fields set to a parameter of the covering sequence (`set
    /// tce_kill.pe = pe`): part of `$bits` for this op only, where the
    /// constant settings are in `bits`.
    pub param_sets: Vec<ParamSet>,
    pub span: Span,
}

/// `set REG.FIELD = PARAM`: the field takes the covering sequence's
/// parameter of that name (resolved per sequence, as `size PARAM` is).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParamSet {
    pub reg: RegId,
    pub shift: u32,
    pub width: u32,
    pub param: String,
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

    /// The parameter settings in `reg` (every register: None).
    fn param_sets_in(&self, reg: Option<RegId>) -> impl Iterator<Item = &ParamSet> {
        self.param_sets
            .iter()
            .filter(move |p| reg.is_none_or(|r| r == p.reg))
    }

    /// `$bits` (in a write to `reg`; None: all registers) as an
    /// expression of a sequence with parameters `params`: the constant
    /// settings, each parameter setting inserted into its field.
    pub fn bits_expr(&self, params: &[String], reg: Option<RegId>) -> Expr {
        let konst = reg.map_or(self.bits, |r| self.bits_of(r));
        self.param_sets_in(reg).fold(Expr::Const(konst), |acc, p| {
            let Some(i) = params.iter().position(|x| *x == p.param) else {
                // The checker rejects a cover whose sequence lacks it.
                return acc;
            };
            Expr::bin(
                BinOp::Or,
                acc,
                Expr::Insert {
                    value: Box::new(Expr::Param(i)),
                    shift: p.shift,
                    width: p.width,
                },
            )
        })
    }

    /// [`Self::bits_expr`] for parameter values `values`.
    pub fn bits_value(&self, params: &[String], values: &[u64], reg: Option<RegId>) -> u64 {
        self.bits_expr(params, reg).eval_with(values, &[])
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

impl Costs {
    /// The cost a spec's `costs` line or `--cost` names (`op` is
    /// `invalidate`); None for another name.
    pub fn named(&mut self, name: &str) -> Option<&mut u64> {
        Some(match name {
            "invalidate" | "op" => &mut self.invalidate,
            "store" => &mut self.store,
            "barrier" => &mut self.barrier,
            "refill" => &mut self.refill,
            "all" => &mut self.all,
            _ => return None,
        })
    }
}

/// The set's entries of a constant size, with their sizes, smallest
/// first (entries of one size keep the spec's order).
pub fn sized_entries(set: &GranuleSet) -> Vec<(u64, &Granule)> {
    let mut sized: Vec<(u64, &Granule)> = set
        .entries
        .iter()
        .filter_map(|e| match e.size {
            GSize::Bytes(b) => Some((b, e)),
            _ => None,
        })
        .collect();
    sized.sort_by_key(|(b, _)| *b);
    sized
}

/// The entry a loop uses: the smallest constant size, else the run-time
/// size.
pub fn loop_entry(set: &GranuleSet) -> Option<&Granule> {
    sized_entries(set).first().map(|(_, e)| *e).or_else(|| {
        set.entries
            .iter()
            .find(|e| matches!(e.size, GSize::Param(_)))
    })
}

/// The set's flush-all, if it has one.
pub fn all_entry(set: &GranuleSet) -> Option<&Granule> {
    set.entries.iter().find(|e| e.size == GSize::All)
}

/// Can a cover with `body` issue `entry`? A CPU granule's operation is
/// its instruction: a body that names only another granule's would
/// invalidate nothing through it (the cover pass then makes a wrapping
/// range return -EINVAL instead of taking such a flush-all).
pub fn body_issues(entry: &Granule, body: &[super::Stmt]) -> bool {
    let Some(super::Via::Insn(insn)) = &entry.via else {
        return true;
    };
    let mut issued = false;
    super::walk(body, &mut |s| {
        issued |= matches!(s, super::Stmt::Invalidate { name, .. } if name == insn)
    });
    issued
}
