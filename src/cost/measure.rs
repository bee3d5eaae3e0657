//! One interpreted run of a compiled strategy, counted and priced.

use super::MAX_STEPS;
use crate::codegen::Compiled;
use crate::ir::{Costs, DevId, GSize, Program};
use crate::model::Counts;
use crate::verify::interp::{self, Access, World};
use serde::Serialize;
use std::collections::BTreeMap;

/// What one run did, counted and priced.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Dynamic {
    pub counts: Counts,
    /// Barriers executed, by mnemonic.
    pub barriers: BTreeMap<String, u64>,
    pub loads: u64,
    /// CPU invalidate instructions executed (also counted in `ops`).
    pub invalidates: u64,
    /// Queue commands the simulated consumer took, by record.
    pub commands: BTreeMap<String, u64>,
    #[serde(rename = "return")]
    pub ret: i64,
    /// Modelled cost (ns).
    pub cost: u64,
}

/// Run sequence 0 of `c.opt` (optimized and expanded, barriers placed) in
/// the interpreter and count what it does; over-invalidation and
/// flush-alls come from running the unexpanded `prog` (sequence 0) with
/// the same forced cover configuration (`world.cover`). The two runs
/// must agree on the stores and invalidates performed: that checks the
/// cover expansion against the interpreter's own cover semantics.
pub fn measure(
    prog: &Program,
    c: &Compiled,
    world: &World,
    costs: &Costs,
) -> Result<Dynamic, MeasureError> {
    let too_long = |_| MeasureError::TooLong;
    let run = interp::run_bounded(&c.opt, &c.opt.seqs[0], world, MAX_STEPS).map_err(too_long)?;
    let spec = interp::run_bounded(prog, &prog.seqs[0], world, MAX_STEPS).map_err(too_long)?;
    let mut d = Dynamic {
        ret: run.ret,
        ..Dynamic::default()
    };
    let mut spec_stores = 0;
    let mut spec_invs = 0;
    for (_, a) in &spec.accesses {
        match a {
            Access::Store { .. } => spec_stores += 1,
            Access::Invalidate { .. } => spec_invs += 1,
            _ => {}
        }
    }
    // A store launches an operation when a granule set on its device says
    // so; on a device without one, when no `require REG before ...` names
    // its register: registers that must precede others carry operands
    // (VT-d's IVA before IOTLB: one page flush is one op, not two).
    let launch = |dev: DevId, reg: crate::ir::RegId| {
        // A queue's doorbell publishes commands; they are counted below.
        if c.opt.queues.iter().any(|q| q.dev == dev && q.prod == reg) {
            return false;
        }
        let mut sets = c
            .opt
            .granules
            .iter()
            .filter(|g| g.dev == Some(dev))
            .peekable();
        if sets.peek().is_none() {
            !c.opt.devices[dev].requires.iter().any(|r| r.before == reg)
        } else {
            sets.any(|g| crate::model::is_launch(g, dev, reg))
        }
    };
    for (_, a) in &run.accesses {
        match a {
            Access::Store { dev, reg, .. } => {
                d.counts.stores += 1;
                if launch(*dev, *reg) {
                    d.counts.ops += 1;
                }
            }
            Access::Load { .. } => d.loads += 1,
            Access::Invalidate { .. } => {
                d.invalidates += 1;
                d.counts.ops += 1;
            }
            Access::Barrier { name } => {
                d.counts.barriers += 1;
                *d.barriers.entry(name.clone()).or_default() += 1;
            }
        }
    }
    if (spec_stores, spec_invs, spec.ret) != (d.counts.stores, d.invalidates, run.ret) {
        return Err(MeasureError::Disagree(format!(
            "{} stores, {} invalidates, return {} vs {spec_stores}, {spec_invs}, {}",
            d.counts.stores, d.invalidates, run.ret, spec.ret
        )));
    }
    for cv in &spec.covers {
        d.counts.refill += cv
            .covered
            .saturating_sub(cv.requested)
            .checked_div(cv.granule)
            .unwrap_or(0);
        d.counts.flushes += cv.flushes;
    }
    d.counts.flushes += spec.loose_flushes;
    // Queue commands (what the simulated consumer took): each is an
    // operation of the set that names its record, a flush-all when that
    // is the set's `all` command.
    if run.commands.len() != spec.commands.len() {
        return Err(MeasureError::Disagree(format!(
            "{} queue commands vs {}",
            run.commands.len(),
            spec.commands.len()
        )));
    }
    for (name, _) in &run.commands {
        let entry = c
            .opt
            .granules
            .iter()
            .flat_map(|g| &g.entries)
            .find(|e| matches!(&e.via, Some(crate::ir::Via::Record(r)) if r == name));
        if let Some(e) = entry {
            d.counts.ops += 1;
            if e.size == GSize::All {
                d.counts.flushes += 1;
            }
        }
        *d.commands.entry(name.clone()).or_default() += 1;
    }
    d.cost = crate::model::cost(costs, &d.counts);
    Ok(d)
}

/// Why a run could not be measured.
#[derive(Debug)]
pub enum MeasureError {
    /// More than [`MAX_STEPS`] interpreter steps.
    TooLong,
    /// The optimized IR and the spec did different things (a compiler bug).
    Disagree(String),
}

impl std::fmt::Display for MeasureError {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        match self {
            MeasureError::TooLong => write!(
                f,
                "the run takes more than {MAX_STEPS} interpreter steps (a loop that does not end soon for these arguments): `cost` takes smaller --sizes, both `cost` and `diff` fewer --instances or other --arg values"
            ),
            MeasureError::Disagree(m) => write!(f, "the generated IR and the spec disagree: {m}"),
        }
    }
}
