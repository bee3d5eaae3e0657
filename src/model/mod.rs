//! The cost model: what an invalidation strategy costs, and the thresholds
//! derived from it.
//!
//! Costs come from the spec's granule set (`cost invalidate 1500 ns`...),
//! where the author says where each number comes from. One formula,
//! [`cost`], prices [`Counts`]: operations launched (one per launch write
//! per device instance, one per invalidate instruction), MMIO stores,
//! barriers, over-invalidated granules and flush-alls. A loop of sized
//! operations costs, per operation, the counts of one instantiation of the
//! cover body; a flush-all the counts of its instantiation plus the
//! refill of everything thrown away (`cost all`). The loop wins up to
//! `floor(all / per_op)` operations: that is the threshold, unless the
//! spec or `--set` pins it. `shootdown cost` prices the same [`Counts`],
//! counted by running the generated IR ([`cost`] module), and checks that
//! its crossover lands on the threshold.

pub use crate::ir::thresholds::{expr_threshold_sets, threshold_name};
pub use crate::ir::{all_entry, loop_entry, sized_entries};
use crate::ir::{Costs, DevId, GSize, Granule, GranuleSet, Program, RegId, Seq, Stmt, Via};

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Source {
    /// Derived from the costs: per-op cost and flush-all cost (ns).
    Derived { per_op: u64, all: u64 },
    /// `threshold NAME = V` in the spec.
    Spec,
    /// `--set NAME=V` on the command line.
    Cli,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Threshold {
    pub name: String,
    /// Largest number of granules handled by the loop.
    pub value: u64,
    pub source: Source,
}

/// What a strategy does, counted: the one input of [`cost`]. The static
/// derivation ([`op_counts`], [`threshold`]) and the dynamic tables of
/// `shootdown cost` / `diff` (counted by running the IR interpreter) both
/// go through [`cost`], so a threshold and a crossover cannot disagree
/// about what an operation costs.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct Counts {
    /// Invalidate operations launched: writes to a launch register (per
    /// device instance) and CPU invalidate instructions.
    pub ops: u64,
    /// MMIO stores (launches included).
    pub stores: u64,
    /// Barrier instructions executed.
    pub barriers: u64,
    /// Smallest granules invalidated beyond the request (over-invalidation
    /// by a larger op), each refilled at `cost refill`.
    pub refill: u64,
    /// Flush-alls, each followed by a refill at `cost all`.
    pub flushes: u64,
}

impl Counts {
    pub fn add(&mut self, o: &Counts) {
        self.ops += o.ops;
        self.stores += o.stores;
        self.barriers += o.barriers;
        self.refill += o.refill;
        self.flushes += o.flushes;
    }
}

/// The cost model (ns): every operation, store, barrier, refilled granule
/// and flush-all refill at its stated price.
pub fn cost(c: &Costs, n: &Counts) -> u64 {
    let parts = [
        (n.ops, c.invalidate),
        (n.stores, c.store),
        (n.barriers, c.barrier),
        (n.refill, c.refill),
        (n.flushes, c.all),
    ];
    parts
        .iter()
        .fold(0u64, |acc, (k, v)| acc.saturating_add(k.saturating_mul(*v)))
}

/// Registers of the set's device whose writes launch an operation: every
/// `via` register and every register an entry sets fields of; when the
/// set names none, every register that is not an address register.
pub fn is_launch(set: &GranuleSet, dev: DevId, reg: RegId) -> bool {
    if set.dev != Some(dev) {
        return false;
    }
    let launches: Vec<RegId> = set
        .entries
        .iter()
        .flat_map(|e| {
            e.set_regs.iter().copied().chain(match &e.via {
                Some(Via::Reg(r)) => Some(*r),
                _ => None,
            })
        })
        .collect();
    if launches.is_empty() {
        !set.entries.iter().any(|e| e.addr == Some(reg))
    } else {
        launches.contains(&reg)
    }
}

/// What one instantiation of a cover body for `entry` does, counting loops
/// over instances by their weight (the maximum of a dynamic set) and a
/// flush-all as one flush.
pub fn op_counts(prog: &Program, set: &GranuleSet, entry: &Granule, body: &[Stmt]) -> Counts {
    let dropped = dropped_regs(set, entry);
    let dropped_i = dropped_insns(set, entry);
    fn count(
        prog: &Program,
        set: &GranuleSet,
        body: &[Stmt],
        dropped: &[usize],
        dropped_i: &[String],
        w: u64,
        n: &mut Counts,
    ) {
        for s in body {
            match s {
                Stmt::Write { access, .. } => {
                    // As the cover pass drops them (passes/cover.rs).
                    if dropped.contains(&access.reg) && set.dev.is_none_or(|d| d == access.dev) {
                        continue;
                    }
                    n.stores += w;
                    if is_launch(set, access.dev, access.reg) {
                        n.ops += w;
                    }
                }
                Stmt::Invalidate { name, .. } if !dropped_i.contains(name) => n.ops += w,
                Stmt::Barrier { .. } => n.barriers += w,
                Stmt::Each { dev, body, .. } => count(
                    prog,
                    set,
                    body,
                    dropped,
                    dropped_i,
                    w * prog.devices[*dev].instances.weight(),
                    n,
                ),
                Stmt::Range { body, .. } | Stmt::Cover { body, .. } => {
                    count(prog, set, body, dropped, dropped_i, w, n)
                }
                _ => {}
            }
        }
    }
    let mut n = Counts::default();
    count(prog, set, body, &dropped, &dropped_i, 1, &mut n);
    if entry.size == GSize::All {
        n.flushes = 1;
    }
    n
}

/// Registers whose writes are dead in an instantiation for `entry`: the
/// address and launch registers of the set's other operations (a
/// flush-all reads no address register), unless `entry` uses them too.
pub fn dropped_regs(set: &GranuleSet, entry: &Granule) -> Vec<usize> {
    let mine: Vec<usize> = entry
        .addr
        .into_iter()
        .chain(match &entry.via {
            Some(Via::Reg(r)) => Some(*r),
            _ => None,
        })
        .collect();
    let mut out = Vec::new();
    for e in &set.entries {
        for r in e.addr.into_iter().chain(match &e.via {
            Some(Via::Reg(r)) => Some(*r),
            _ => None,
        }) {
            if !mine.contains(&r) && !out.contains(&r) {
                out.push(r);
            }
        }
    }
    out
}

/// Instructions whose statements are dead in an instantiation for `entry`.
pub fn dropped_insns(set: &GranuleSet, entry: &Granule) -> Vec<String> {
    set.entries
        .iter()
        .filter_map(|e| match &e.via {
            Some(Via::Insn(n)) if entry.via != e.via => Some(n.clone()),
            _ => None,
        })
        .collect()
}

/// Modelled cost of one operation of `entry` (ns), a flush-all's refill
/// included.
pub fn op_cost(prog: &Program, set: &GranuleSet, entry: &Granule, body: &[Stmt]) -> u64 {
    cost(&set.costs, &op_counts(prog, set, entry, body))
}

/// The threshold of an `auto` cover: pinned (CLI first, then spec) or
/// derived from the costs. None when the set states no invalidate cost.
pub fn threshold(
    prog: &Program,
    set: &GranuleSet,
    name: &str,
    body: &[Stmt],
    pins: &[(String, u64)],
) -> Option<Threshold> {
    if let Some(t) = pinned(prog, name, pins) {
        return Some(t);
    }
    let (l, a) = (loop_entry(set)?, all_entry(set)?);
    let per_op = op_cost(prog, set, l, body);
    if per_op == 0 {
        return None;
    }
    let all = op_cost(prog, set, a, body);
    Some(Threshold {
        name: name.to_string(),
        value: all / per_op,
        source: Source::Derived { per_op, all },
    })
}

/// A threshold pinned on the command line (first) or in the spec.
fn pinned(prog: &Program, name: &str, pins: &[(String, u64)]) -> Option<Threshold> {
    if let Some((_, v)) = pins.iter().find(|(n, _)| n == name) {
        return Some(Threshold {
            name: name.to_string(),
            value: *v,
            source: Source::Cli,
        });
    }
    prog.thresholds
        .iter()
        .find(|(n, _)| n == name)
        .map(|(_, v)| Threshold {
            name: name.to_string(),
            value: *v,
            source: Source::Spec,
        })
}

pub fn expr_threshold_names(prog: &Program, seq: &Seq) -> Vec<String> {
    expr_threshold_sets(seq)
        .into_iter()
        .filter_map(|s| prog.granules.get(s))
        .map(|g| threshold_name(&seq.name, &g.name))
        .collect()
}

/// `threshold(SET)` in sequence `seq`: as an `auto` cover of a body that
/// issues the loop granule's and the flush-all's instruction once each,
/// so `floor((invalidate + all) / invalidate)` from the set's costs
/// unless pinned.
pub fn expr_threshold(
    prog: &Program,
    seq: &str,
    set: usize,
    pins: &[(String, u64)],
) -> Option<Threshold> {
    let g = prog.granules.get(set)?;
    // Queue commands: one command per granule, or one flush-all command.
    if matches!(loop_entry(g)?.via, Some(Via::Record(_))) {
        let name = threshold_name(seq, &g.name);
        if let Some(t) = pinned(prog, &name, pins) {
            return Some(t);
        }
        let (per_op, all) = (g.costs.invalidate, g.costs.invalidate + g.costs.all);
        if per_op == 0 {
            return None;
        }
        return Some(Threshold {
            name,
            value: all / per_op,
            source: Source::Derived { per_op, all },
        });
    }
    let body: Vec<Stmt> = [loop_entry(g)?, all_entry(g)?]
        .iter()
        .filter_map(|e| match &e.via {
            Some(Via::Insn(n)) => Some(Stmt::Invalidate {
                id: crate::ir::OpId(0),
                name: n.clone(),
                operands: Vec::new(),
                after: None,
                span: g.span,
            }),
            _ => None,
        })
        .collect();
    threshold(prog, g, &threshold_name(seq, &g.name), &body, pins)
}

/// Every `auto` cover's threshold in the program (for headers and `cost`).
pub fn thresholds(prog: &Program, pins: &[(String, u64)]) -> Vec<Threshold> {
    let mut out = Vec::new();
    for seq in &prog.seqs {
        for s in expr_threshold_sets(seq) {
            if let Some(t) = expr_threshold(prog, &seq.name, s, pins) {
                if !out.iter().any(|o: &Threshold| o.name == t.name) {
                    out.push(t);
                }
            }
        }
        crate::ir::walk(&seq.body, &mut |s| {
            if let Stmt::Cover {
                set,
                mode: crate::ir::CoverMode::Auto,
                body,
                threshold,
                ..
            } = s
            {
                if let Some(t) = self::threshold(prog, &prog.granules[*set], threshold, body, pins)
                {
                    out.push(t);
                }
            }
        });
    }
    out
}
