//! `shootdown diff`: two strategies side by side.

use super::common::*;
use std::path::PathBuf;

#[derive(clap::Args)]
pub struct Args {
    spec: PathBuf,
    /// A second spec for side b (default: the same).
    spec2: Option<PathBuf>,
    #[arg(long)]
    seq: Option<String>,
    /// Target (default: the first of the spec's `target` line, else power64).
    #[arg(long, value_enum)]
    target: Option<Target>,
    #[arg(long, default_value = "none", value_parser = pass_list)]
    passes_a: PassList,
    #[arg(long, default_value = "all", value_parser = pass_list)]
    passes_b: PassList,
    /// Force the covers of side a to a strategy.
    #[arg(long, value_enum)]
    mode_a: Option<StrategyArg>,
    #[arg(long, value_enum)]
    mode_b: Option<StrategyArg>,
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
    #[arg(long = "set", value_name = "NAME=VALUE", value_parser = pair)]
    sets: Vec<(String, u64)>,
}

pub fn run(a: Args, io: &mut Io) -> Result<(), Fail> {
    use crate::emit::diff;
    let name = a.spec.display().to_string();
    let src = read_spec(&a.spec, io)?;
    let seq = need_seq(io, &name, &src, a.seq)?;
    let (name2, src2) = match &a.spec2 {
        Some(p) => (p.display().to_string(), read_spec(p, io)?),
        None => (name.clone(), src.clone()),
    };
    let prog = crate::load(&name, &src).map_err(|d| report(io, &name, &src, &d))?;
    let prog2 = crate::load(&name2, &src2).map_err(|d| report(io, &name2, &src2, &d))?;
    check_pins(io, &prog, &a.sets)?;
    no_repeats(io, "--arg", &a.args)?;
    no_repeats(io, "--cost", &a.costs)?;
    for p in [&prog, &prog2] {
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
    let req = diff::Request {
        target: target_for(a.target, &src),
        seq,
        dynamic: !a.args.is_empty() || !a.reads.is_empty(),
        args: a.args,
        instances: a.instances,
        pins: a.sets,
        costs: a.costs,
    };
    let side_a = diff::Side {
        spec_index: 0,
        prog: &prog,
        passes: a.passes_a.0,
        passes_text: a.passes_a.1,
        strategy: a.mode_a.map(Into::into),
        reads,
        target: target_for(a.target, &src),
    };
    let side_b = diff::Side {
        spec_index: 1,
        prog: &prog2,
        passes: a.passes_b.0,
        passes_text: a.passes_b.1,
        strategy: a.mode_b.map(Into::into),
        reads: reads2,
        target: target_for(a.target, &src2),
    };
    let text = diff::render(&side_a, &side_b, &req)
        .map_err(|e| cost_error(io, &[(&name, &src), (&name2, &src2)], e))?;
    out!(io, "{text}");
    Ok(())
}
