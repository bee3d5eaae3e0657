//! `cover` in an unexpanded program: the operations each mode chooses for
//! a range, run as the cover pass would expand them, and what they
//! covered (for the cost model and `verify`'s "never less than asked").

use super::{Flow, InterpError, Machine, EINVAL};
use crate::ir::{CoverMode, DevId, GSize, Granule, GranuleSet, RegId, Stmt};
use crate::model;

/// One executed `cover` of an unexpanded program: what was asked and what
/// the chosen operations covered (for the cost model's over-invalidation).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Coverage {
    /// Index of the granule set.
    pub set: usize,
    /// Requested bytes.
    pub requested: u64,
    /// Bytes covered by the sized operations run.
    pub covered: u64,
    /// Smallest granule of the set (the unit of refill).
    pub granule: u64,
    /// Flush-alls run.
    pub flushes: u64,
    /// Each sized operation run: (address, bytes).
    pub ops: Vec<(u64, u64)>,
    /// The cover ran to its end without a flush-all, and its operations
    /// leave part of `[start, start + size)` uncovered (a wrapping range
    /// counts as reaching past 2^64, which no sized operation covers).
    pub short: bool,
}

/// Do `ops` cover `[start, start + size)`? Computed in 128 bits, apart
/// from the cover code: the meaning's own check that a cover never
/// invalidates less than it was asked.
pub fn covers_range(start: u64, size: u64, ops: &[(u64, u64)]) -> bool {
    let end = u128::from(start) + u128::from(size);
    let mut ops: Vec<(u128, u128)> = ops
        .iter()
        .map(|&(a, n)| (u128::from(a), u128::from(a) + u128::from(n)))
        .collect();
    ops.sort_unstable();
    let mut reached = u128::from(start);
    for (lo, hi) in ops {
        if lo <= reached {
            reached = reached.max(hi);
        }
    }
    reached >= end
}

/// Inside a cover instantiation: its bindings and the writes and
/// instructions dead for its operation.
#[derive(Clone)]
pub(super) struct CoverCx {
    pub(super) num: u64,
    pub(super) scale: u64,
    pub(super) addr: u64,
    pub(super) bits: u64,
    pub(super) reg_bits: Vec<(RegId, u64)>,
    pub(super) size: u64,
    pub(super) dev: Option<DevId>,
    pub(super) dead_regs: Vec<RegId>,
    pub(super) dead_insns: Vec<String>,
}

/// One `cover` statement as it runs, its range evaluated.
#[derive(Clone, Copy)]
pub(super) struct CoverRun<'p> {
    pub set_index: usize,
    pub set: &'p GranuleSet,
    pub mode: CoverMode,
    pub start: u64,
    pub size: u64,
    pub threshold: &'p str,
    pub body: &'p [Stmt],
}

impl Machine<'_> {
    /// Run the cover's body for one chosen operation.
    fn instance(
        &mut self,
        run: &CoverRun,
        entry: &Granule,
        addr: u64,
        size: u64,
    ) -> Result<Flow, InterpError> {
        let set = run.set;
        if let Some(c) = self.covers.last_mut() {
            if entry.size == GSize::All {
                c.flushes += 1;
            } else {
                c.covered = c.covered.saturating_add(size);
                c.ops.push((addr, size));
            }
        }
        let (num, scale) = self.range_op.take().unwrap_or((0, 0));
        let saved = self.cover.replace(CoverCx {
            num,
            scale,
            addr,
            bits: entry.bits_value(&self.seq.params, &self.world.params, None),
            reg_bits: entry
                .reg_bits
                .iter()
                .map(|&(r, _)| {
                    (
                        r,
                        entry.bits_value(&self.seq.params, &self.world.params, Some(r)),
                    )
                })
                .collect(),
            size,
            dev: set.dev,
            dead_regs: model::dropped_regs(set, entry),
            dead_insns: model::dropped_insns(set, entry),
        });
        let r = self.block(run.body);
        self.cover = saved;
        r
    }

    pub(super) fn cover(&mut self, run: &CoverRun) -> Result<Flow, InterpError> {
        let n = self.covers.len();
        let r = self.cover_ops(run);
        if let (Ok(Flow::Next), Some(c)) = (&r, self.covers.get_mut(n)) {
            c.short = c.flushes == 0 && !covers_range(run.start, run.size, &c.ops);
        }
        r
    }

    /// The operations the mode chooses for `[start, start + size)`, each
    /// running the body once.
    fn cover_ops(&mut self, run: &CoverRun) -> Result<Flow, InterpError> {
        let CoverRun {
            set_index,
            set,
            mode,
            start,
            size,
            threshold,
            body,
        } = *run;
        if size == 0 {
            return Ok(Flow::Next);
        }
        let mode = self.world.cover.mode.unwrap_or(mode);
        self.begin_coverage(set_index, set, size);
        // A range reaching 2^64 is not a range of addresses: flush all.
        if size > !start {
            return self.flush_all(run, Flow::Return(EINVAL));
        }
        let t = match mode {
            CoverMode::Auto => Some(self.auto_threshold(set, threshold, body)),
            _ => None,
        };
        if self.unusable_granule(set, mode, t) {
            return Ok(Flow::Return(EINVAL));
        }
        match mode {
            CoverMode::Single => self.cover_single(run),
            CoverMode::Exact => self.cover_exact(run),
            // Linux __flush_tlb_range_op with FEAT_TLBIRANGE, as a loop.
            CoverMode::Range => self.cover_range(run),
            CoverMode::Auto => self.cover_auto(run, t.unwrap_or(0)),
        }
    }

    /// Bytes of a granule: its constant size, or the run-time size
    /// parameter's value (0 for `all`, `range` and a missing parameter).
    fn granule_bytes(&self, e: &Granule) -> u64 {
        match &e.size {
            GSize::Bytes(b) => *b,
            GSize::Param(p) => self
                .seq
                .params
                .iter()
                .position(|x| x == p)
                .and_then(|i| self.world.params.get(i).copied())
                .unwrap_or(0),
            GSize::All | GSize::Range => 0,
        }
    }

    /// Record a cover of `size` bytes; its operations add to it as they
    /// run.
    fn begin_coverage(&mut self, set_index: usize, set: &GranuleSet, size: u64) {
        let unit = model::loop_entry(set).map_or(0, |e| self.granule_bytes(e));
        self.covers.push(Coverage {
            set: set_index,
            requested: size,
            covered: 0,
            granule: unit,
            flushes: 0,
            ops: Vec::new(),
            short: false,
        });
    }

    /// `auto`'s threshold (0 without one).
    fn auto_threshold(&self, set: &GranuleSet, threshold: &str, body: &[Stmt]) -> u64 {
        model::threshold(self.prog, set, threshold, body, &self.world.cover.pins)
            .map(|t| t.value)
            .unwrap_or(0)
    }

    /// A run-time granule size must be a power of two (to align to
    /// it) and, for `auto`, small enough that THRESHOLD granules do
    /// not pass 2^64.
    fn unusable_granule(&self, set: &GranuleSet, mode: CoverMode, t: Option<u64>) -> bool {
        if !matches!(mode, CoverMode::Exact | CoverMode::Auto) {
            return false;
        }
        let Some(e) = model::loop_entry(set).filter(|e| matches!(e.size, GSize::Param(_))) else {
            return false;
        };
        let g = self.granule_bytes(e);
        let max = t.map_or(1 << 63, crate::passes::cover::max_granule);
        !g.is_power_of_two() || g > max
    }

    /// The set's flush-all, or `without` when it has none or the body
    /// does not issue it (as the cover pass compiles it).
    fn flush_all(&mut self, run: &CoverRun, without: Flow) -> Result<Flow, InterpError> {
        match model::all_entry(run.set).filter(|a| crate::ir::body_issues(a, run.body)) {
            Some(a) => self.instance(run, a, 0, 0),
            None => Ok(without),
        }
    }

    /// `single`: the smallest size whose aligned block holds the whole
    /// range, else `all`.
    fn cover_single(&mut self, run: &CoverRun) -> Result<Flow, InterpError> {
        let start = run.start;
        let x = start ^ start.wrapping_add(run.size).wrapping_sub(1);
        for (b, e) in crate::ir::sized_entries(run.set) {
            if x < b {
                return self.instance(run, e, start & !(b - 1), b);
            }
        }
        self.flush_all(run, Flow::Next)
    }

    /// `exact`: one smallest-granule operation per granule of the range.
    fn cover_exact(&mut self, run: &CoverRun) -> Result<Flow, InterpError> {
        let (start, size) = (run.start, run.size);
        let Some(e) = model::loop_entry(run.set) else {
            return Ok(Flow::Next);
        };
        let g = self.granule_bytes(e);
        if g == 0 {
            return Ok(Flow::Return(EINVAL));
        }
        let base = start & !(g - 1);
        let span = size + (start & (g - 1));
        let n = span.div_ceil(g);
        for k in 0..n {
            self.tick()?;
            if let Flow::Return(v) = self.instance(run, e, base.wrapping_add(k * g), g)? {
                return Ok(Flow::Return(v));
            }
        }
        Ok(Flow::Next)
    }

    /// `range`: single operations and range operations (NUM and SCALE)
    /// over the granules, or `all` for too many of them.
    fn cover_range(&mut self, run: &CoverRun) -> Result<Flow, InterpError> {
        let (set, start, size) = (run.set, run.start, run.size);
        let (Some(single), Some(range), Some(all)) = (
            model::loop_entry(set),
            set.entries.iter().find(|e| e.size == GSize::Range),
            model::all_entry(set),
        ) else {
            return Ok(Flow::Next);
        };
        let g = self.granule_bytes(single);
        if g == 0 {
            return Ok(Flow::Next);
        }
        let mut addr = start & !(g - 1);
        let mut pages = (size + (start & (g - 1))).div_ceil(g);
        if pages >= crate::passes::cover::MAX_RANGE_GRANULES {
            return self.instance(run, all, 0, 0);
        }
        let mut scale = 0u64;
        while pages > 0 {
            self.tick()?;
            if pages % 2 == 1 {
                if let Flow::Return(v) = self.instance(run, single, addr, g)? {
                    return Ok(Flow::Return(v));
                }
                addr = addr.wrapping_add(g);
                pages -= 1;
                continue;
            }
            let num = ((pages >> (5 * scale + 1)) & 31) as i64 - 1;
            if num >= 0 {
                let n = ((num as u64) + 1) << (5 * scale + 1);
                self.range_op = Some((num as u64, scale));
                if let Flow::Return(v) = self.instance(run, range, addr, n * g)? {
                    return Ok(Flow::Return(v));
                }
                addr = addr.wrapping_add(n * g);
                pages -= n;
            }
            scale += 1;
        }
        Ok(Flow::Next)
    }

    /// `auto`: `exact` up to THRESHOLD granules, else `all`.
    fn cover_auto(&mut self, run: &CoverRun, t: u64) -> Result<Flow, InterpError> {
        let g = model::loop_entry(run.set)
            .map(|e| self.granule_bytes(e))
            .unwrap_or(0);
        if run.size <= t.saturating_mul(g) {
            self.cover_exact(run)
        } else {
            self.flush_all(run, Flow::Next)
        }
    }
}
