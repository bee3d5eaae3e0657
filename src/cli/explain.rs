//! `shootdown explain`: how each required ordering is met.

use super::common::*;
use std::path::PathBuf;

#[derive(clap::Args)]
#[command(
    after_help = "Example:\n  shootdown explain examples/npu2_atsd.inv --seq invalidate_va --target power64 --json"
)]
pub struct Args {
    spec: PathBuf,
    /// One sequence (default: all).
    #[arg(long)]
    seq: Option<String>,
    /// Target (default: the first of the spec's `target` line, else power64).
    #[arg(long, value_enum)]
    target: Option<Target>,
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    code: CodeOpts,
}

pub fn run(a: Args, io: &mut Io) -> Result<(), Fail> {
    let opts = options(&a.code);
    let (name, src, prog) = load_spec(io, &a.spec, &opts)?;
    known_seq(io, &prog, a.seq.as_deref())?;
    let c = crate::compile(&prog, target_for(a.target, &src), &opts)
        .map_err(|d| report(io, &name, &src, &d))?;
    let x = crate::emit::explain::explain(&c, a.seq.as_deref());
    if a.json {
        match serde_json::to_string_pretty(&x) {
            Ok(j) => outln!(io, "{j}"),
            Err(e) => return Err(usage(io, format!("json: {e}"))),
        }
    } else {
        out!(io, "{}", crate::emit::explain::to_text(&x));
    }
    Ok(())
}
