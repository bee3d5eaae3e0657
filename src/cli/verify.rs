//! `shootdown verify`: every check we have, on every target.

use super::common::*;
use crate::output;
use crate::Target;
use std::path::PathBuf;

#[derive(clap::Args)]
#[command(
    after_help = "Examples:\n  shootdown verify examples/npu2_atsd.inv --target power64 --target power64le\n  shootdown verify examples/*.inv --allow-unreached   # list, not fail on, code no world ran"
)]
pub struct Args {
    #[arg(required = true)]
    specs: Vec<PathBuf>,
    /// Targets (default: each spec's `target` line).
    #[arg(long, value_enum)]
    target: Vec<Target>,
    /// Only this sequence (every spec given must have it).
    #[arg(long)]
    seq: Option<String>,
    #[command(flatten)]
    code: CodeOpts,
    /// Pass even when some code was never run by the worlds (branch
    /// arms, `while` limit exits, worlds too long to interpret): they are
    /// listed as `unreached` either way.
    #[arg(long)]
    allow_unreached: bool,
    /// Fail when a check could not run here (a cross toolchain missing,
    /// built without the emulator) instead of listing it as skipped.
    #[arg(long)]
    strict: bool,
    /// Print every check that passed too (default: failures, skips,
    /// unrun code and one summary line per spec).
    #[arg(short, long)]
    verbose: bool,
}

pub fn run(a: Args, io: &mut Io) -> Result<(), Fail> {
    let opts = options(&a.code);
    let mut ok = true;
    for spec in &a.specs {
        let (name, src, prog) = load_spec(io, spec, &opts)?;
        let prog = only_seq(io, prog, a.seq.as_deref())?;
        let targets: Vec<Target> = if a.target.is_empty() {
            output::default_targets(&prog)
        } else {
            a.target.clone()
        };
        let r = crate::verify::verify_program(&prog, &targets, &opts)
            .map_err(|d| report(io, &name, &src, &d))?;
        if a.verbose {
            for p in &r.passed {
                outln!(io, "ok    {name}: {p}");
            }
        }
        for s in &r.skipped {
            let tag = if a.strict { "SKIP " } else { "skip " };
            outln!(io, "{tag} {name}: {s}");
        }
        for u in &r.unreached {
            let tag = if a.allow_unreached { "unrun" } else { "UNRUN" };
            outln!(io, "{tag} {name}: {u}");
        }
        for f in &r.failures {
            outln!(io, "FAIL  {name}: {f}");
        }
        let good = r.ok()
            && (a.allow_unreached || r.unreached.is_empty())
            && (!a.strict || r.skipped.is_empty());
        outln!(
            io,
            "{} {name}: {} passed, {} failed, {} skipped, {} unrun",
            if good { "PASS " } else { "FAIL " },
            r.passed.len(),
            r.failures.len(),
            r.skipped.len(),
            r.unreached.len()
        );
        ok &= good;
    }
    if ok {
        Ok(())
    } else {
        Err(Fail::Reported)
    }
}
