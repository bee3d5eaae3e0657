//! `shootdown gen`: write the `.S` files and the header of each spec.

use super::common::*;
use crate::output;
use crate::Target;
use std::path::PathBuf;

pub const HELP: &str = "\
Examples:
  shootdown gen examples/npu2_atsd.inv --target power64le --out build/
  shootdown gen examples/*.inv --out generated --check
  shootdown gen examples/radix_tlb.inv --seq flush_tlb_page --out build/
  shootdown gen examples/npu2_atsd.inv --style linux --prefix sd_ --spdx GPL-2.0 \\
      --target aarch64 --out build/ --depfile build/npu2_atsd.d

Files are written through a temporary file and a rename, and only when
their bytes change (an unchanged output keeps its mtime). Output bytes
depend only on the spec and the options.

Exit codes: 0 success (with --check: nothing stale); 1 a spec has errors,
--check found stale outputs (listed on stderr), or a file could not be
written; 2 bad command-line usage.";

#[derive(clap::Args)]
#[command(after_help = HELP)]
pub struct Args {
    #[arg(required = true)]
    specs: Vec<PathBuf>,
    /// Targets (default: the spec's `target` line, else power64).
    #[arg(long, value_enum)]
    target: Vec<Target>,
    #[arg(long, default_value = "generated")]
    out: PathBuf,
    /// Write nothing; exit 1 and list the files that would change.
    #[arg(long)]
    check: bool,
    /// Also write a make-style dependency file: every output depends
    /// on its spec (one `output: spec` line per output).
    #[arg(long, value_name = "FILE")]
    depfile: Option<PathBuf>,
    /// Only this sequence: its function in the `.S` and its prototype in
    /// the header (every spec given must have it).
    #[arg(long, value_name = "NAME")]
    seq: Option<String>,
    #[command(flatten)]
    code: CodeOpts,
}

pub fn run(a: Args, io: &mut Io) -> Result<(), Fail> {
    let opts = options(&a.code);
    let targets: Vec<Target> = a.target;
    let mut planned = Vec::new();
    let mut deps = Vec::new();
    let mut progs = Vec::new();
    let mut failed = false;
    for spec in &a.specs {
        let name = spec.display().to_string();
        let Ok(src) = read_spec(spec, io) else {
            failed = true;
            continue;
        };
        let prog = match crate::load(&name, &src) {
            Ok(p) => p,
            Err(d) => {
                report(io, &name, &src, &d);
                failed = true;
                continue;
            }
        };
        let prog = only_seq(io, prog, a.seq.as_deref())?;
        match output::plan_program(&prog, &targets, &a.out, &opts) {
            Ok(p) => {
                deps.push((spec.clone(), p.iter().map(|p| p.path.clone()).collect()));
                planned.extend(p)
            }
            Err(d) => {
                report(io, &name, &src, &d);
                failed = true;
            }
        }
        progs.push(prog);
    }
    if failed {
        return Err(Fail::Reported);
    }
    // One `--set` applies to every spec: it must name a threshold of one.
    for (k, v) in &opts.cover.pins {
        let pin = [(k.clone(), *v)];
        let mut sink = Vec::new();
        let mut quiet = Io {
            out: &mut std::io::sink(),
            err: &mut sink,
        };
        if !progs
            .iter()
            .any(|p| check_pins(&mut quiet, p, &pin).is_ok())
        {
            return Err(match progs.first() {
                Some(p) if progs.len() == 1 => check_pins(io, p, &pin).unwrap_err(),
                _ => usage(
                    io,
                    format!("--set {k}=...: no spec has a threshold named `{k}`"),
                ),
            });
        }
    }
    no_repeats(io, "--set", &opts.cover.pins)?;
    check_features(io, &progs.iter().collect::<Vec<_>>(), &opts.features.fixed)?;
    if let Some(d) = a.depfile {
        planned.push(output::Planned {
            content: output::depfile(&deps),
            path: d,
            what: "the depfile".into(),
        });
    }
    let inputs: Vec<_> = a
        .specs
        .iter()
        .map(|s| (s.clone(), format!("the spec {}", s.display())))
        .collect();
    let written = if a.check {
        output::check(&planned, &inputs).map(|_| 0)
    } else {
        output::write_all(&planned, &inputs)
    };
    match written {
        Ok(_) => {}
        Err(e @ output::WriteError::Clash(_)) => {
            errln!(io, "{e}");
            return Err(Fail::Usage);
        }
        Err(e) => {
            errln!(io, "{e}");
            return Err(Fail::Reported);
        }
    }
    if a.check {
        let stale: Vec<_> = planned
            .iter()
            .filter(|p| p.what != "the depfile" && output::is_stale(p))
            .collect();
        for p in &stale {
            errln!(io, "stale: {}", p.path.display());
        }
        if !stale.is_empty() {
            return Err(Fail::Reported);
        }
    }
    // The process ends when `gen` returns: freeing a large spec's trees
    // and outputs piece by piece took longer than writing them (60 ms of
    // a 100k-operation spec); the system takes the memory back at once.
    std::mem::forget(progs);
    std::mem::forget(planned);
    Ok(())
}
