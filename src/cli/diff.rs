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
    #[arg(long, value_enum, default_value = "power64")]
    target: TargetArg,
    #[arg(long, default_value = "none")]
    passes_a: String,
    #[arg(long, default_value = "all")]
    passes_b: String,
    /// Force the covers of side a to a strategy.
    #[arg(long, value_enum)]
    mode_a: Option<StrategyArg>,
    #[arg(long, value_enum)]
    mode_b: Option<StrategyArg>,
    /// A parameter value, `name=value`; any --arg turns on the dynamic
    /// counts (missing parameters are 0).
    #[arg(long = "arg")]
    args: Vec<String>,
    /// Instances of every run-time device set (default: its maximum).
    #[arg(long)]
    instances: Option<u64>,
    #[arg(long = "cost", value_name = "KIND=NS")]
    costs: Vec<String>,
    #[arg(long = "set", value_name = "NAME=VALUE")]
    sets: Vec<String>,
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
    let args = pairs(io, "--arg", &a.args)?;
    let req = diff::Request {
        target: a.target.into(),
        seq,
        dynamic: !args.is_empty(),
        args,
        instances: a.instances,
        pins: pairs(io, "--set", &a.sets)?,
        costs: pairs(io, "--cost", &a.costs)?,
    };
    let side_a = diff::Side {
        spec_index: 0,
        prog: &prog,
        passes: parse_passes(io, "--passes-a", &a.passes_a)?,
        passes_text: a.passes_a.clone(),
        strategy: a.mode_a.map(Into::into),
    };
    let side_b = diff::Side {
        spec_index: 1,
        prog: &prog2,
        passes: parse_passes(io, "--passes-b", &a.passes_b)?,
        passes_text: a.passes_b.clone(),
        strategy: a.mode_b.map(Into::into),
    };
    let text = diff::render(&side_a, &side_b, &req)
        .map_err(|e| cost_error(io, &[(&name, &src), (&name2, &src2)], e))?;
    out!(io, "{text}");
    Ok(())
}
