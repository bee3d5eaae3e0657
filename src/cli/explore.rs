//! `shootdown explore`: the spec and its generated code as one static
//! HTML page (see `crate::emit::explore`).

use super::common::*;
use crate::emit::explore::{self, SeqExtras};
use std::path::PathBuf;

pub const HELP: &str = "\
Writes <out>/<stem>.html: the spec beside each target's .S, spec lines and
their instructions in one colour (click either side), every barrier's
provenance on hover, each sequence's ordering graph and, for a sequence
with a size choice, its cost plot. One file, no network: open it from
file:// or attach it to a review.

With --seq and --arg (--read, --instances, --tlb), the page also has
that sequence's run in the emulator on each target, as `shootdown trace`
prints it; click an event for its spec line and instructions.

Example:
  shootdown explore examples/radix_tlb.inv --out build/ && xdg-open build/radix_tlb.html
  shootdown explore examples/arm64_tlb_range.inv --seq flush_tlb_page \
      --arg asid=1 --arg addr=0x400000 --out build/";

#[derive(clap::Args)]
#[command(after_help = HELP)]
pub struct Args {
    spec: PathBuf,
    /// Targets (default: the spec's `target` line, else power64).
    #[arg(long, value_enum)]
    target: Vec<Target>,
    /// Only this sequence (the page is still named after the spec).
    #[arg(long)]
    seq: Option<String>,
    /// Directory to write the page into.
    #[arg(long, default_value = ".")]
    out: PathBuf,
    /// With `--seq`: the page also shows that sequence's run in the
    /// emulator with these inputs on each target, as `shootdown trace`.
    #[command(flatten)]
    inputs: super::trace::Inputs,
    #[command(flatten)]
    code: CodeOpts,
}

pub fn run(a: Args, io: &mut Io) -> Result<(), Fail> {
    let opts = options(&a.code);
    let (name, src, prog) = load_spec(io, &a.spec, &opts)?;
    known_seq(io, &prog, a.seq.as_deref())?;
    let prog = match &a.seq {
        None => prog,
        Some(s) => crate::cost::select_seq(&prog, s).expect("the sequence is known"),
    };
    let targets = if a.target.is_empty() {
        crate::output::default_targets(&prog)
    } else {
        a.target.clone()
    };
    if a.inputs.given() && a.seq.is_none() {
        return Err(usage(
            io,
            "--arg, --read, --instances and --tlb are one sequence's inputs: give --seq",
        ));
    }
    let mut compiled = Vec::new();
    for t in targets {
        let c = crate::compile(&prog, t, &opts).map_err(|d| report(io, &name, &src, &d))?;
        let mut extras = extras(&prog, t, &a.code, &opts);
        if let (Some(seq), true) = (&a.seq, a.inputs.given()) {
            let tr = trace_view(&a, seq, t, io)?;
            if let Some(x) = extras.iter_mut().find(|x| &x.seq == seq) {
                x.trace = Some(tr);
            }
        }
        compiled.push((c, extras));
    }
    let page = explore::render(&name, &src, &compiled);
    let stem = crate::output::stem(&a.spec);
    let planned = [crate::output::Planned {
        path: a.out.join(format!("{stem}.html")),
        content: page,
        what: format!("the explorer page of {name}"),
    }];
    let inputs = [(a.spec.clone(), format!("the spec {name}"))];
    match crate::output::write_all(&planned, &inputs) {
        Ok(_) => Ok(()),
        Err(e @ crate::output::WriteError::Clash(_)) => {
            errln!(io, "{e}");
            Err(Fail::Usage)
        }
        Err(e) => {
            errln!(io, "{e}");
            Err(Fail::Reported)
        }
    }
}

/// `seq` run in the emulator on `target` with the page's inputs, each
/// event as `shootdown trace` prints it.
#[cfg(feature = "emu")]
fn trace_view(
    a: &Args,
    seq: &str,
    target: Target,
    io: &mut Io,
) -> Result<explore::TraceView, Fail> {
    let ran = super::trace::prepare_with(&a.spec, Some(target), seq, &a.inputs, &a.code, io)?;
    let t = &ran.trace;
    let events = t
        .events
        .iter()
        .map(|e| {
            let x = super::trace::event_text(e);
            explore::TraceRow {
                kind: x.kind,
                what: x.what,
                detail: x.detail,
                line: e.line,
                pc: u64::from(e.pc),
            }
        })
        .collect();
    Ok(explore::TraceView {
        inputs: a.inputs.describe(),
        ret: t.ret,
        executed: t.insns_executed,
        events,
    })
}

#[cfg(not(feature = "emu"))]
fn trace_view(_: &Args, _: &str, _: Target, io: &mut Io) -> Result<explore::TraceView, Fail> {
    errln!(
        io,
        "error: this shootdown was built without the `emu` feature (needs cmake and libclang): it cannot trace"
    );
    Err(Fail::Reported)
}

/// Per sequence: `shootdown cost`'s plot when it has a `cover` (one
/// without is simply left without a plot), and `shootdown diff`'s report
/// of the naive lowering against what was generated.
fn extras(
    prog: &crate::ir::Program,
    target: Target,
    code: &CodeOpts,
    opts: &crate::Options,
) -> Vec<SeqExtras> {
    let pins = &code.sets;
    prog.seqs
        .iter()
        .map(|s| {
            let mut has_cover = false;
            crate::ir::walk(&s.body, &mut |st| {
                has_cover |= matches!(st, crate::ir::Stmt::Cover { .. });
            });
            let cost_svg = has_cover
                .then(|| {
                    let req = crate::cost::Request {
                        target,
                        passes: crate::passes::all(),
                        args: Vec::new(),
                        sizes: None,
                        start: None,
                        instances: None,
                        reads: Default::default(),
                        pins: pins.to_vec(),
                        costs: Vec::new(),
                        with: Vec::new(),
                    };
                    let table = crate::cost::table(prog, &s.name, &req).ok()?;
                    crate::cost::plot::svg(&table).ok()
                })
                .flatten();
            let side =
                |spec_index, passes: Vec<crate::passes::Pass>, text: &str| crate::diff::Side {
                    spec_index,
                    prog,
                    passes,
                    passes_text: text.to_string(),
                    strategy: None,
                    reads: Default::default(),
                    target,
                    pins: pins.to_vec(),
                    features: code.features.clone(),
                };
            let req = crate::diff::Request {
                seq: s.name.clone(),
                args: Vec::new(),
                instances: None,
                costs: Vec::new(),
                dynamic: false,
                raw: false,
            };
            let diff = crate::diff::render(
                &side(0, vec![crate::passes::Pass::NaiveBarriers], "none"),
                &side(1, opts.passes.clone(), "as generated"),
                &req,
            )
            .ok();
            SeqExtras {
                seq: s.name.clone(),
                cost_svg,
                diff,
                trace: None,
            }
        })
        .collect()
}
