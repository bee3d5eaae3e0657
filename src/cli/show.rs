//! `shootdown show`: one stage of the pipeline.

use super::common::*;
use crate::emit::show::Stage;
use std::path::PathBuf;

#[derive(clap::Args)]
#[command(
    after_help = "Example:\n  shootdown show examples/npu2_atsd.inv --stage opt --passes none"
)]
pub struct Args {
    spec: PathBuf,
    #[arg(long, value_enum, default_value = "asm")]
    stage: Stage,
    /// Target (default: the first of the spec's `target` line, else power64).
    #[arg(long, value_enum)]
    target: Option<Target>,
    /// One sequence (default: all; not with `--stage ast`, which is the
    /// parse of the whole file).
    #[arg(long)]
    seq: Option<String>,
    #[command(flatten)]
    code: CodeOpts,
}

pub fn run(a: Args, io: &mut Io) -> Result<(), Fail> {
    let opts = options(&a.code);
    let name = a.spec.display().to_string();
    let src = read_spec(&a.spec, io)?;
    if a.stage != Stage::Ast {
        let prog = load_checked(io, &name, &src, &opts)?;
        only_seq(io, prog, a.seq.as_deref())?;
    } else if a.seq.is_some() {
        return Err(usage(
            io,
            "--seq: `--stage ast` is the parse of the whole file".to_string(),
        ));
    }
    let target = target_for(a.target, &src);
    let text = crate::emit::show::render(&name, &src, a.stage, target, &opts, a.seq.as_deref())
        .map_err(|d| report(io, &name, &src, &d))?;
    out!(io, "{text}");
    Ok(())
}
