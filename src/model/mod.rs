//! The cost model: what an invalidation strategy costs, and the thresholds
//! derived from it.
//!
//! Costs come from the spec's granule set (`cost invalidate 1500 ns`...),
//! where the author says where each number comes from. A loop of sized
//! operations costs, per operation, one invalidate plus the stores (and
//! barriers) of one instantiation of the cover body; a flush-all costs one
//! invalidate plus its stores plus the refill of everything thrown away.
//! The loop wins up to `floor(all / per_op)` operations: that is the
//! threshold, unless the spec or `--set` pins it.

pub mod cost;

use crate::ir::{GSize, Granule, GranuleSet, Program, Stmt, Via};

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

/// Stores performed by one instantiation of a cover body for `entry`,
/// counting loops over instances by their weight.
pub fn stores_per_op(prog: &Program, set: &GranuleSet, entry: &Granule, body: &[Stmt]) -> u64 {
    let dropped = dropped_regs(set, entry);
    fn count(prog: &Program, body: &[Stmt], dropped: &[usize], w: u64) -> u64 {
        body.iter()
            .map(|s| match s {
                Stmt::Write { access, .. } if !dropped.contains(&access.reg) => w,
                Stmt::Each { dev, body, .. } => count(
                    prog,
                    body,
                    dropped,
                    w * prog.devices[*dev].instances.weight(),
                ),
                Stmt::Range { body, .. } | Stmt::Cover { body, .. } => {
                    count(prog, body, dropped, w)
                }
                _ => 0,
            })
            .sum()
    }
    count(prog, body, &dropped, 1)
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

/// The entry a loop uses: the smallest constant size, else the run-time
/// size.
pub fn loop_entry(set: &GranuleSet) -> Option<&Granule> {
    let consts = set.entries.iter().filter_map(|e| match e.size {
        GSize::Bytes(b) => Some((b, e)),
        _ => None,
    });
    consts.min_by_key(|(b, _)| *b).map(|(_, e)| e).or_else(|| {
        set.entries
            .iter()
            .find(|e| matches!(e.size, GSize::Param(_)))
    })
}

pub fn all_entry(set: &GranuleSet) -> Option<&Granule> {
    set.entries.iter().find(|e| e.size == GSize::All)
}

/// Modelled cost of one operation of `entry` (ns).
pub fn op_cost(prog: &Program, set: &GranuleSet, entry: &Granule, body: &[Stmt]) -> u64 {
    let stores = stores_per_op(prog, set, entry, body);
    let insns = count_insns(body, &dropped_insns(set, entry));
    set.costs.invalidate * insns.max(u64::from(stores > 0)) + set.costs.store * stores
}

fn count_insns(body: &[Stmt], dropped: &[String]) -> u64 {
    let mut n = 0;
    crate::ir::walk(body, &mut |s| {
        if let Stmt::Invalidate { name, .. } = s {
            if !dropped.contains(name) {
                n += 1;
            }
        }
    });
    n
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
    if let Some((_, v)) = pins.iter().find(|(n, _)| n == name) {
        return Some(Threshold {
            name: name.to_string(),
            value: *v,
            source: Source::Cli,
        });
    }
    if let Some((_, v)) = prog.thresholds.iter().find(|(n, _)| n == name) {
        return Some(Threshold {
            name: name.to_string(),
            value: *v,
            source: Source::Spec,
        });
    }
    let (l, a) = (loop_entry(set)?, all_entry(set)?);
    let per_op = op_cost(prog, set, l, body);
    if per_op == 0 {
        return None;
    }
    let all = op_cost(prog, set, a, body) + set.costs.all;
    Some(Threshold {
        name: name.to_string(),
        value: all / per_op,
        source: Source::Derived { per_op, all },
    })
}

/// Every `auto` cover's threshold in the program (for headers and `cost`).
pub fn thresholds(prog: &Program, pins: &[(String, u64)]) -> Vec<Threshold> {
    let mut out = Vec::new();
    for seq in &prog.seqs {
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
