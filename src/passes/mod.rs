//! Optimization passes over sequence bodies (avo-style: each pass is a
//! function over the IR in its own file, with one signature, [`PassFn`]).
//! [`REGISTRY`] is the one list of them: `--passes` names, what `all`
//! runs and in which order. `cover` is not a pass: expanding covers is
//! lowering, and runs first always.

// The passes' files, and four that are not passes: `cover` (lowering),
// `assume` (the checks a precondition decides, after it), `exits` and
// `locks` (what `place-barriers` uses).
pub mod assume;
pub mod barriers;
pub mod cover;
pub mod exits;
pub mod fission;
pub mod fuse;
pub mod hoist_window;
pub mod locks;
pub mod naive_barriers;
pub mod reuse_loads;
pub mod schedule;
pub mod weaken_release;

use crate::ir::{Program, Seq};
use crate::isa::Target;
use crate::spec::diag::Diag;

/// What a pass sees: the program (devices, granules, source; not the
/// other sequences) and the target. Every pass has the one signature
/// [`PassFn`] and appends what it did to `Seq::notes` (`show --stage opt`).
pub struct Cx<'a> {
    pub prog: &'a Program,
    pub target: Target,
}

pub type PassFn = fn(&Cx, &mut Seq) -> Result<(), Diag>;

/// One registered pass: its `--passes` name, what it does (the README's
/// pass table is checked against these), whether `all` runs it, and its
/// entry point.
pub struct PassDef {
    pub pass: Pass,
    pub name: &'static str,
    pub summary: &'static str,
    pub in_all: bool,
    pub run: PassFn,
}

/// The registry: one entry per pass (its summary as a one-line doc
/// comment, then `Variant = "--passes name", module, whether `all` runs
/// it`), in the order `all` runs them. From it come the [`Pass`] enum and
/// [`REGISTRY`]: names, `all`, `--passes` parsing, its error message and
/// the README table. Adding a pass is its file, its `mod` line and one
/// entry here.
macro_rules! passes {
    ($(#[doc = $summary:literal] $variant:ident = $name:literal, $module:ident, $in_all:literal;)+) => {
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        pub enum Pass {
            $(#[doc = $summary] $variant),+
        }

        /// Every pass, in the order `all` runs them.
        pub const REGISTRY: [PassDef; [$($name),+].len()] = [$(PassDef {
            pass: Pass::$variant,
            name: $name,
            // `/// text` is the literal " text".
            summary: $summary.trim_ascii_start(),
            in_all: $in_all,
            run: $module::run,
        }),+];
    };
}

passes! {
    /// split `each` loops so accesses that need ordering land in separate loops (write batching)
    Fission = "fission", fission, true;
    /// choose the emission order of top-level statements whose minimal barrier placement is cheapest
    Schedule = "schedule", schedule, true;
    /// minimal-cost barrier placement over the target's table, then the early exits completed
    PlaceBarriers = "place-barriers", barriers, true;
    /// re-join loops that fission split and no barrier separates
    Fuse = "fuse", fuse, true;
    /// one barrier right before the later access of every required edge, in program order: the hand-written code (`none`)
    NaiveBarriers = "naive-barriers", naive_barriers, false;
    /// loop-invariant work of an `acquire` before its load-reserve/store-conditional window
    HoistWindow = "hoist-window", hoist_window, true;
    /// a second read of a location reuses the register of the first when nothing can have changed it
    ReuseLoads = "reuse-loads", reuse_loads, true;
    /// release with store->store ordering when the section's loads all feed its stores
    WeakenRelease = "weaken-release", weaken_release, true;
}

impl Pass {
    pub fn def(self) -> &'static PassDef {
        REGISTRY
            .iter()
            .find(|d| d.pass == self)
            .expect("every pass is registered")
    }

    pub fn name(self) -> &'static str {
        self.def().name
    }
}

/// `all`: the registered passes `all` runs, in order.
pub fn all() -> Vec<Pass> {
    REGISTRY
        .iter()
        .filter(|d| d.in_all)
        .map(|d| d.pass)
        .collect()
}

/// Parse `--passes`: `all` (default), `none` (naive lowering, i.e.
/// `naive-barriers`), or a comma-separated list of pass names run in the
/// order given.
pub fn parse_list(s: &str) -> Result<Vec<Pass>, String> {
    match s.trim() {
        "all" | "default" => return Ok(all()),
        "none" | "naive" => return Ok(vec![Pass::NaiveBarriers]),
        "" => return Ok(Vec::new()),
        _ => {}
    }
    let mut out = Vec::new();
    for part in s.split(',') {
        let part = part.trim();
        let p = REGISTRY.iter().find(|d| d.name == part).ok_or_else(|| {
            format!(
                "unknown pass `{part}`; passes are {}, or `all` / `none`",
                REGISTRY.map(|d| d.name).join(", ")
            )
        })?;
        if out.contains(&p.pass) {
            return Err(format!(
                "pass `{part}` named twice; each pass runs once, in the order given"
            ));
        }
        out.push(p.pass);
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
    assume::run(&mut out);
    // The passes read devices and source, never other sequences: give
    // them the program without its sequences instead of a deep copy.
    let mut seqs = std::mem::take(&mut out.seqs);
    let ctx = &out;
    crate::par::each_mut(&mut seqs, |seq| {
        barriers::resolve_spec_barriers(ctx, seq, target)?;
        // A sequence that tests features is optimized once per
        // combination of them (see `crate::features`).
        crate::features::split_optimize(ctx, seq, &|v| {
            passes.iter().try_for_each(|p| run_one(ctx, v, target, *p))
        })
    })?;
    out.seqs = seqs;
    Ok(out)
}

fn run_one(prog: &Program, seq: &mut Seq, target: Target, pass: Pass) -> Result<(), Diag> {
    (pass.def().run)(&Cx { prog, target }, seq)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The README's pass table and `all` list are the registry's.
    #[test]
    fn readme_lists_the_registry() {
        let readme =
            std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md")).unwrap();
        let rows: Vec<&str> = readme
            .lines()
            .filter(|l| {
                REGISTRY
                    .iter()
                    .any(|d| l.starts_with(&format!("| `{}` |", d.name)))
            })
            .collect();
        let want: Vec<String> = REGISTRY
            .iter()
            .map(|d| format!("| `{}` | {} |", d.name, d.summary))
            .collect();
        assert_eq!(rows, want);
        let names: Vec<&str> = all().iter().map(|p| p.name()).collect();
        assert!(readme.contains(&format!("(default: `{}`)", names.join(","))));
    }

    #[test]
    fn pass_lists() {
        assert_eq!(parse_list("none").unwrap(), vec![Pass::NaiveBarriers]);
        assert_eq!(
            parse_list("fission,fuse").unwrap(),
            vec![Pass::Fission, Pass::Fuse]
        );
        assert!(parse_list("bogus").is_err());
        // Every registered name parses, `schedule` included (it once ran
        // in `all` without being accepted by name).
        for d in &REGISTRY {
            assert_eq!(parse_list(d.name).unwrap(), vec![d.pass]);
        }
        assert_eq!(
            parse_list("fission,schedule,place-barriers").unwrap(),
            vec![Pass::Fission, Pass::Schedule, Pass::PlaceBarriers]
        );
        let all = all();
        assert!(!all.contains(&Pass::NaiveBarriers));
        assert_eq!(all.len(), REGISTRY.len() - 1);
        assert!(parse_list("place-barriers,naive-barriers").is_err());
    }
}
