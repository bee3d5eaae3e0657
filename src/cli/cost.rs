//! `shootdown cost`: modelled cost per request size of each strategy.

use super::common::*;
use std::path::PathBuf;

/// Instances of one device set the interpreter runs for `cost` and `diff`
/// (every access of a run is kept until it is counted).
pub const INTERP_MAX_INSTANCES: u64 = 4096;

#[derive(clap::Args)]
#[command(
    after_help = "Sizes: bytes (4K, 2M, 0x1000, 4096) or smallest granules with a `p` suffix (8p);\n\
default: powers of two from the smallest granule to 1G.\n\
Example:\n  shootdown cost examples/npu2_tce_kill.inv --seq tce_kill --svg tce.svg"
)]
pub struct Args {
    spec: PathBuf,
    /// The sequence (must contain a `cover` or an `if X > threshold(SET)`).
    #[arg(long)]
    seq: Option<String>,
    /// Target (default: the first of the spec's `target` line, else power64).
    #[arg(long, value_enum)]
    target: Option<Target>,
    /// Request sizes, comma-separated.
    #[arg(long, value_parser = sizes)]
    sizes: Option<Sizes>,
    /// Start address of every request (default: 1G, or the largest
    /// request rounded up to a power of two: aligned).
    #[arg(long, value_parser = bytes)]
    start: Option<u64>,
    /// Other parameter values, `name=value` (the cover's size is solved
    /// for its one remaining parameter; a granule-size parameter
    /// defaults to 4096).
    #[arg(long = "arg", value_parser = pair)]
    args: Vec<(String, u64)>,
    /// Instances of every run-time device set (default: its maximum,
    /// as the threshold derivation assumes; at most 4096).
    #[arg(long)]
    instances: Option<u64>,
    /// Scripted reads of a register, `dev.reg=v1,v2,...` (the last value
    /// repeats), e.g. a status bit the device clears.
    #[arg(long = "read", value_parser = read_arg)]
    reads: Vec<ReadArg>,
    /// Override a cost of the cover's set, `KIND=NS` (invalidate,
    /// store, barrier, refill, all).
    #[arg(long = "cost", value_name = "KIND=NS", value_parser = pair)]
    costs: Vec<(String, u64)>,
    /// Passes for every strategy (default all).
    #[arg(long, default_value = "all", value_parser = pass_list)]
    passes: PassList,
    /// Pin a threshold, `NAME=VALUE`, for `auto`.
    #[arg(long = "set", value_name = "NAME=VALUE", value_parser = pair)]
    sets: Vec<(String, u64)>,
    /// Price another sequence of the spec beside the strategies, at the
    /// same request sizes (repeatable), e.g. a range-command variant;
    /// parameters of the same name take the same values.
    #[arg(long = "with", value_name = "SEQ")]
    with: Vec<String>,
    /// Also draw the table as an SVG plot.
    #[arg(long)]
    svg: Option<PathBuf>,
    #[arg(long)]
    json: bool,
}

/// `--sizes`, parsed (a newtype: clap reads `Option<Vec<_>>` as a
/// multi-valued option).
#[derive(Clone, Debug)]
pub struct Sizes(Vec<crate::cost::SizeSpec>);

fn sizes(s: &str) -> Result<Sizes, String> {
    let v = crate::cost::parse_sizes(s)?;
    if v.is_empty() {
        return Err("no sizes (e.g. 4K,64K,2M or 8p)".into());
    }
    if v.len() > 1024 {
        return Err("at most 1024 sizes".into());
    }
    Ok(Sizes(v))
}

fn bytes(s: &str) -> Result<u64, String> {
    crate::cost::parse_bytes(s).ok_or_else(|| "not an address (e.g. 0x10000 or 1G)".into())
}

pub fn run(a: Args, io: &mut Io) -> Result<(), Fail> {
    use crate::cost;
    let name = a.spec.display().to_string();
    let src = read_spec(&a.spec, io)?;
    let seq = need_seq(io, &name, &src, a.seq)?;
    let prog = crate::load(&name, &src).map_err(|d| report(io, &name, &src, &d))?;
    check_pins(io, &prog, &a.sets)?;
    no_repeats(io, "--arg", &a.args)?;
    no_repeats(io, "--cost", &a.costs)?;
    if let Some(s) = prog.seqs.iter().find(|s| s.name == seq) {
        instance_counts(io, &prog, s, a.instances, INTERP_MAX_INSTANCES, "`cost`")?;
    }
    let req = cost::Request {
        target: target_for(a.target, &src),
        passes: a.passes.0,
        args: a.args,
        sizes: a.sizes.map(|s| s.0),
        start: a.start,
        instances: a.instances,
        reads: resolve_reads(io, &prog, &a.reads)?,
        pins: a.sets,
        costs: a.costs,
        with: a.with,
    };
    let table = cost::table(&prog, &seq, &req).map_err(|e| cost_error(io, &[(&name, &src)], e))?;
    if let Some(path) = &a.svg {
        let text = crate::cost::plot::svg(&table).map_err(|e| {
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
