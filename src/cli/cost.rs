//! `shootdown cost`: modelled cost per request size of each strategy.

use super::common::*;
use std::path::PathBuf;

#[derive(clap::Args)]
pub struct Args {
    spec: PathBuf,
    /// The sequence (must contain a `cover`).
    #[arg(long)]
    seq: Option<String>,
    #[arg(long, value_enum, default_value = "power64")]
    target: TargetArg,
    /// Request sizes, comma-separated.
    #[arg(long)]
    sizes: Option<String>,
    /// Start address of every request (default: 1G, or the largest
    /// request rounded up to a power of two: aligned).
    #[arg(long)]
    start: Option<String>,
    /// Other parameter values, `name=value` (the cover's size is solved
    /// for its one remaining parameter; a granule-size parameter
    /// defaults to 4096).
    #[arg(long = "arg")]
    args: Vec<String>,
    /// Instances of every run-time device set (default: its maximum,
    /// as the threshold derivation assumes).
    #[arg(long)]
    instances: Option<u64>,
    /// Override a cost of the cover's set, `KIND=NS` (invalidate,
    /// store, barrier, refill, all).
    #[arg(long = "cost", value_name = "KIND=NS")]
    costs: Vec<String>,
    /// Passes for every strategy (default all).
    #[arg(long, default_value = "all")]
    passes: String,
    /// Pin a threshold, `NAME=VALUE`, for `auto`.
    #[arg(long = "set", value_name = "NAME=VALUE")]
    sets: Vec<String>,
    /// Also draw the table as an SVG plot.
    #[arg(long)]
    svg: Option<PathBuf>,
    #[arg(long)]
    json: bool,
}

pub fn run(a: Args, io: &mut Io) -> Result<(), Fail> {
    use crate::model::cost;
    let name = a.spec.display().to_string();
    let src = read_spec(&a.spec, io)?;
    let seq = need_seq(io, &name, &src, a.seq)?;
    let prog = crate::load(&name, &src).map_err(|d| report(io, &name, &src, &d))?;
    let sizes = match a.sizes {
        Some(s) => Some(cost::parse_sizes(&s).map_err(|e| {
            errln!(io, "error: {e}");
            Fail::Reported
        })?),
        None => None,
    };
    let start = match a.start {
        Some(s) => Some(cost::parse_bytes(&s).ok_or_else(|| {
            errln!(io, "error: --start {s}: not an address");
            Fail::Reported
        })?),
        None => None,
    };
    let req = cost::Request {
        target: a.target.into(),
        passes: parse_passes(io, "--passes", &a.passes)?,
        args: pairs(io, "--arg", &a.args)?,
        sizes,
        start,
        instances: a.instances,
        pins: pairs(io, "--set", &a.sets)?,
        costs: pairs(io, "--cost", &a.costs)?,
    };
    let table = cost::table(&prog, &seq, &req).map_err(|e| cost_error(io, &[(&name, &src)], e))?;
    if let Some(path) = &a.svg {
        let text = crate::model::plot::svg(&table).map_err(|e| {
            errln!(io, "error: {e}");
            Fail::Reported
        })?;
        std::fs::write(path, text).map_err(|e| {
            errln!(io, "{}: error: cannot write: {e}", path.display());
            Fail::Reported
        })?;
    }
    if a.json {
        outln!(io, "{}", table.to_json());
    } else {
        out!(io, "{}", table.to_text());
    }
    Ok(())
}
