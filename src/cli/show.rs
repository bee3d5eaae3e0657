//! `shootdown show`: one stage of the pipeline.

use super::common::*;
use crate::emit::show::Stage;
use clap::ValueEnum;
use std::path::PathBuf;

#[derive(Clone, Copy, ValueEnum)]
enum StageArg {
    Ast,
    Ir,
    Opt,
    Lir,
    Asm,
    Bytes,
}

#[derive(clap::Args)]
pub struct Args {
    spec: PathBuf,
    #[arg(long, value_enum, default_value = "asm")]
    stage: StageArg,
    #[arg(long, value_enum, default_value = "power64")]
    target: TargetArg,
    #[command(flatten)]
    code: CodeOpts,
}

pub fn run(a: Args, io: &mut Io) -> Result<(), Fail> {
    let opts = options(&a.code, io)?;
    let name = a.spec.display().to_string();
    let src = read_spec(&a.spec, io)?;
    let stage = match a.stage {
        StageArg::Ast => Stage::Ast,
        StageArg::Ir => Stage::Ir,
        StageArg::Opt => Stage::Opt,
        StageArg::Lir => Stage::Lir,
        StageArg::Asm => Stage::Asm,
        StageArg::Bytes => Stage::Bytes,
    };
    let text = crate::emit::show::render(&name, &src, stage, a.target.into(), &opts)
        .map_err(|d| report(io, &name, &src, &d))?;
    out!(io, "{text}");
    Ok(())
}
