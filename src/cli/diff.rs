//! `shootdown diff`: two strategies side by side.

use super::common::*;
use std::path::PathBuf;

#[derive(clap::Args)]
#[command(
    after_help = "Example:\n  shootdown diff examples/npu2_atsd.inv --seq invalidate_va --instances 6 \\\n      --arg pid=1 --arg va=0x10010000"
)]
pub struct Args {
    spec: PathBuf,
    /// A second spec for side b (default: the same).
    spec2: Option<PathBuf>,
    /// The sequence (required unless --summary).
    #[arg(long)]
    seq: Option<String>,
    /// One line per sequence of the spec(s): same or changed, and how the
    /// static counts and barriers move; for a patch review.
    #[arg(long)]
    summary: bool,
    /// Compare the `.S` texts as emitted: labels and spec line numbers
    /// included (by default a label is named after the instruction it
    /// labels and line numbers are `_`, so a one-line spec change shows
    /// only itself).
    #[arg(long)]
    raw: bool,
    /// Target of both sides (default: each spec's first `target`).
    #[arg(long, value_enum)]
    target: Option<Target>,
    /// Target of side a (one sequence across targets).
    #[arg(long, value_enum)]
    a_target: Option<Target>,
    #[arg(long, value_enum)]
    b_target: Option<Target>,
    /// Passes of side a (default: none, the naive lowering).
    #[arg(long = "a-passes", alias = "passes-a", default_value = "none", value_parser = pass_list)]
    passes_a: PassList,
    /// Passes of side b (default: all).
    #[arg(long = "b-passes", alias = "passes-b", default_value = "all", value_parser = pass_list)]
    passes_b: PassList,
    /// Force the covers of side a to a strategy.
    #[arg(long = "a-mode", alias = "mode-a", value_enum)]
    mode_a: Option<StrategyArg>,
    #[arg(long = "b-mode", alias = "mode-b", value_enum)]
    mode_b: Option<StrategyArg>,
    /// Pin a threshold on side a only, `NAME=VALUE` (after --set).
    #[arg(long = "a-set", value_name = "NAME=VALUE", value_parser = pair)]
    a_sets: Vec<(String, u64)>,
    #[arg(long = "b-set", value_name = "NAME=VALUE", value_parser = pair)]
    b_sets: Vec<(String, u64)>,
    /// Fix a CPU feature on side a only, `NAME=on|off`.
    #[arg(long = "a-feature", value_name = "NAME=on|off", value_parser = feature_pair)]
    a_features: Vec<(String, bool)>,
    #[arg(long = "b-feature", value_name = "NAME=on|off", value_parser = feature_pair)]
    b_features: Vec<(String, bool)>,
    /// A parameter value, `name=value`; any --arg turns on the dynamic
    /// counts (missing parameters are 0).
    #[arg(long = "arg", value_parser = pair)]
    args: Vec<(String, u64)>,
    /// Instances of every run-time device set (default: its maximum; at
    /// most 4096).
    #[arg(long)]
    instances: Option<u64>,
    /// Scripted reads of a register for the dynamic counts,
    /// `dev.reg=v1,v2,...` (the last value repeats), e.g. a status bit the
    /// device clears; other registers read back what was stored.
    #[arg(long = "read", value_parser = read_arg)]
    reads: Vec<ReadArg>,
    #[arg(long = "cost", value_name = "KIND=NS", value_parser = pair)]
    costs: Vec<(String, u64)>,
    /// Pin a threshold on both sides, `NAME=VALUE`.
    #[arg(long = "set", value_name = "NAME=VALUE", value_parser = pair)]
    sets: Vec<(String, u64)>,
}

pub fn run(a: Args, io: &mut Io) -> Result<(), Fail> {
    use crate::diff;
    let name = a.spec.display().to_string();
    let src = read_spec(&a.spec, io)?;
    let seq = if a.summary {
        a.seq.clone().unwrap_or_default()
    } else {
        need_seq(io, &name, &src, a.seq.clone())?
    };
    let (name2, src2) = match &a.spec2 {
        Some(p) => (p.display().to_string(), read_spec(p, io)?),
        None => (name.clone(), src.clone()),
    };
    let prog = crate::load(&name, &src).map_err(|d| report(io, &name, &src, &d))?;
    let prog2 = crate::load(&name2, &src2).map_err(|d| report(io, &name2, &src2, &d))?;
    check_pins(io, &prog, &a.sets)?;
    check_pins(io, &prog, &a.a_sets)?;
    check_pins(io, &prog2, &a.b_sets)?;
    no_repeats(io, "--arg", &a.args)?;
    no_repeats(io, "--cost", &a.costs)?;
    for p in [&prog, &prog2].into_iter().filter(|_| !a.summary) {
        if let Some(s) = p.seqs.iter().find(|s| s.name == seq) {
            instance_counts(
                io,
                p,
                s,
                a.instances,
                super::cost::INTERP_MAX_INSTANCES,
                "`diff`",
            )?;
        }
    }
    let reads = resolve_reads(io, &prog, &a.reads)?;
    let reads2 = resolve_reads(io, &prog2, &a.reads)?;
    if a.summary && (!a.args.is_empty() || !a.reads.is_empty()) {
        return Err(usage(
            io,
            "--summary compares static counts: drop --arg/--read, or give --seq without --summary"
                .to_string(),
        ));
    }
    let req = diff::Request {
        seq,
        dynamic: !a.args.is_empty() || !a.reads.is_empty(),
        args: a.args.clone(),
        instances: a.instances,
        costs: a.costs.clone(),
        raw: a.raw,
    };
    let side_a = a.side(0, &prog, &src, reads);
    let side_b = a.side(1, &prog2, &src2, reads2);
    let text = if a.summary {
        diff::summary(&side_a, &side_b, &req)
    } else {
        diff::render(&side_a, &side_b, &req)
    }
    .map_err(|e| cost_error(io, &[(&name, &src), (&name2, &src2)], e))?;
    out!(io, "{text}");
    Ok(())
}

impl Args {
    /// Side `i` of the diff (0: a, 1: b) as its own options and the
    /// shared ones make it, over `prog` (of the spec text `src`).
    fn side<'p>(
        &self,
        i: usize,
        prog: &'p crate::ir::Program,
        src: &str,
        reads: std::collections::HashMap<(usize, usize), Vec<u64>>,
    ) -> crate::diff::Side<'p> {
        let (passes, mode, target, own_sets, features) = if i == 0 {
            (
                &self.passes_a,
                self.mode_a,
                self.a_target,
                &self.a_sets,
                &self.a_features,
            )
        } else {
            (
                &self.passes_b,
                self.mode_b,
                self.b_target,
                &self.b_sets,
                &self.b_features,
            )
        };
        // `--set`, but this side's own `--a-set`/`--b-set` for a name both pin.
        let mut pins: Vec<(String, u64)> = self
            .sets
            .iter()
            .filter(|(k, _)| !own_sets.iter().any(|(o, _)| o == k))
            .cloned()
            .collect();
        pins.extend(own_sets.iter().cloned());
        crate::diff::Side {
            spec_index: i,
            prog,
            passes: passes.0.clone(),
            passes_text: passes.1.clone(),
            strategy: mode.map(Into::into),
            reads,
            target: target_for(target.or(self.target), src),
            pins,
            features: features.clone(),
        }
    }
}
