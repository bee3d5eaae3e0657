//! `shootdown stats`: static counts per sequence.

use super::common::*;
use std::path::PathBuf;

#[derive(clap::Args)]
pub struct Args {
    spec: PathBuf,
    #[arg(long, value_enum, default_value = "power64")]
    target: TargetArg,
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    code: CodeOpts,
}

pub fn run(a: Args, io: &mut Io) -> Result<(), Fail> {
    let opts = options(&a.code, io)?;
    let name = a.spec.display().to_string();
    let src = read_spec(&a.spec, io)?;
    let prog = crate::load(&name, &src).map_err(|d| report(io, &name, &src, &d))?;
    let c =
        crate::compile(&prog, a.target.into(), &opts).map_err(|d| report(io, &name, &src, &d))?;
    let stats = crate::emit::stats::collect(&c);
    if a.json {
        outln!(io, "{}", crate::emit::stats::to_json(stats));
    } else {
        out!(io, "{}", crate::emit::stats::to_text(&stats));
    }
    Ok(())
}
