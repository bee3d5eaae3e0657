//! `shootdown stats`: static counts per sequence.

use super::common::*;
use std::path::PathBuf;

#[derive(clap::Args)]
#[command(
    after_help = "Example:\n  shootdown stats examples/npu2_atsd.inv --target power64 --json"
)]
pub struct Args {
    spec: PathBuf,
    /// Target (default: the first of the spec's `target` line, else power64).
    #[arg(long, value_enum)]
    target: Option<Target>,
    /// One sequence (default: all).
    #[arg(long)]
    seq: Option<String>,
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    code: CodeOpts,
}

pub fn run(a: Args, io: &mut Io) -> Result<(), Fail> {
    let opts = options(&a.code);
    let (name, src, prog) = load_spec(io, &a.spec, &opts)?;
    let prog = only_seq(io, prog, a.seq.as_deref())?;
    let c = crate::compile(&prog, target_for(a.target, &src), &opts)
        .map_err(|d| report(io, &name, &src, &d))?;
    let stats = crate::emit::stats::collect(&c);
    if a.json {
        outln!(io, "{}", crate::emit::stats::to_json(stats));
    } else {
        out!(io, "{}", crate::emit::stats::to_text(&stats));
    }
    Ok(())
}
