//! Optimization passes over sequence bodies, run in a fixed pipeline
//! (avo-style: each pass is a function over the IR in its own file).

pub mod barriers;
pub mod cover;
pub mod exits;
pub mod fission;
pub mod fuse;
pub mod locks;
pub mod schedule;

use crate::ir::{Program, Seq};
use crate::spec::diag::Diag;
use crate::target::Target;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pass {
    /// Split `each` loops so accesses that need ordering land in separate
    /// loops (write batching).
    Fission,
    /// Choose the emission order of top-level statements whose minimal
    /// barrier placement is cheapest.
    Schedule,
    /// Minimal-cost barrier placement over the target's table.
    PlaceBarriers,
    /// Re-join loops that fission split and no barrier separates.
    Fuse,
    /// One barrier right before the later access of every required edge,
    /// in program order: the hand-written, pre-optimization code.
    NaiveBarriers,
    /// Loop-invariant work of an `acquire` before the reservation window.
    HoistWindow,
    /// A second read of a location reuses the register of the first.
    ReuseLoads,
    /// Release with store->store ordering when the section's loads all
    /// feed its stores.
    WeakenRelease,
}

impl Pass {
    pub const ALL: [Pass; 7] = [
        Pass::Fission,
        Pass::PlaceBarriers,
        Pass::Fuse,
        Pass::NaiveBarriers,
        Pass::HoistWindow,
        Pass::ReuseLoads,
        Pass::WeakenRelease,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Pass::Fission => "fission",
            Pass::Schedule => "schedule",
            Pass::PlaceBarriers => "place-barriers",
            Pass::Fuse => "fuse",
            Pass::NaiveBarriers => "naive-barriers",
            Pass::HoistWindow => "hoist-window",
            Pass::ReuseLoads => "reuse-loads",
            Pass::WeakenRelease => "weaken-release",
        }
    }
}

/// Parse `--passes`: `all` (default), `none` (naive lowering, i.e.
/// `naive-barriers`), or a comma-separated list of pass names run in the
/// order given.
pub fn parse_list(s: &str) -> Result<Vec<Pass>, String> {
    match s.trim() {
        "all" | "default" => {
            return Ok(vec![
                Pass::Fission,
                Pass::Schedule,
                Pass::PlaceBarriers,
                Pass::Fuse,
                Pass::HoistWindow,
                Pass::ReuseLoads,
                Pass::WeakenRelease,
            ])
        }
        "none" | "naive" => return Ok(vec![Pass::NaiveBarriers]),
        "" => return Ok(Vec::new()),
        _ => {}
    }
    let mut out = Vec::new();
    for part in s.split(',') {
        let part = part.trim();
        let p = Pass::ALL
            .into_iter()
            .find(|p| p.name() == part)
            .ok_or_else(|| {
                format!(
                    "unknown pass `{part}`; passes are {}, or `all` / `none`",
                    Pass::ALL.map(|p| p.name()).join(", ")
                )
            })?;
        out.push(p);
    }
    let placements = out
        .iter()
        .filter(|p| matches!(p, Pass::PlaceBarriers | Pass::NaiveBarriers))
        .count();
    if placements > 1 {
        return Err("place-barriers and naive-barriers exclude each other".into());
    }
    Ok(out)
}

/// Run the pipeline on every sequence for one target. Covers are always
/// expanded first: that is lowering, not optimization.
pub fn run(
    prog: &Program,
    target: Target,
    passes: &[Pass],
    cover: &cover::CoverConfig,
) -> Result<Program, Diag> {
    let mut out = cover::run(prog, cover)?;
    // The passes read devices and source, never other sequences: give
    // them the program without its sequences instead of a deep copy.
    let mut seqs = std::mem::take(&mut out.seqs);
    let ctx = out.clone();
    crate::par::each_mut(&mut seqs, |seq| {
        // A sequence that tests features is optimized once per
        // combination of them (see `crate::features`).
        crate::features::split_optimize(&ctx, seq, &|v| {
            passes.iter().try_for_each(|p| run_one(&ctx, v, target, *p))
        })
    })?;
    out.seqs = seqs;
    Ok(out)
}

fn run_one(prog: &Program, seq: &mut Seq, target: Target, pass: Pass) -> Result<(), Diag> {
    match pass {
        Pass::Fission => fission::run(prog, seq),
        Pass::Schedule => schedule::run(prog, seq, target),
        Pass::Fuse => fuse::run(seq),
        // Placement orders the normal return; the exits pass completes
        // the early ones (see `exits`).
        Pass::PlaceBarriers => {
            barriers::place_minimal(prog, seq, target)?;
            exits::run(seq, target, prog.machine);
        }
        Pass::NaiveBarriers => {
            barriers::place_naive(prog, seq, target)?;
            locks::naive_reload_barriers(seq, target, prog.machine);
            exits::run(seq, target, prog.machine);
        }
        Pass::HoistWindow => locks::hoist_window(prog, seq, target),
        Pass::ReuseLoads => locks::reuse_loads(prog, seq),
        Pass::WeakenRelease => locks::weaken_release(prog, seq, target),
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pass_lists() {
        assert_eq!(parse_list("none").unwrap(), vec![Pass::NaiveBarriers]);
        assert_eq!(
            parse_list("fission,fuse").unwrap(),
            vec![Pass::Fission, Pass::Fuse]
        );
        assert!(parse_list("bogus").is_err());
        assert!(parse_list("place-barriers,naive-barriers").is_err());
    }
}
