//! `shootdown explore`: the spec and its generated code as one static
//! HTML page (see `crate::emit::explore`).

use super::common::*;
use crate::emit::explore::{self, GraphCost};
use std::path::PathBuf;

pub const HELP: &str = "\
Writes <out>/<stem>.html: the spec beside each target's .S, spec lines and
their instructions in one colour (click either side), every barrier's
provenance on hover, each sequence's ordering graph and, for a sequence
with a size choice, its cost plot. One file, no network: open it from
file:// or attach it to a review.

Example:
  shootdown explore examples/radix_tlb.inv --out build/ && xdg-open build/radix_tlb.html";

#[derive(clap::Args)]
pub struct Args {
    spec: PathBuf,
    /// Targets (default: the spec's `target` line, else power64).
    #[arg(long, value_enum)]
    target: Vec<Target>,
    /// Directory to write the page into.
    #[arg(long, default_value = ".")]
    out: PathBuf,
    #[command(flatten)]
    code: CodeOpts,
}

pub fn run(a: Args, io: &mut Io) -> Result<(), Fail> {
    let opts = options(&a.code);
    let name = a.spec.display().to_string();
    let src = read_spec(&a.spec, io)?;
    let prog = load_checked(io, &name, &src, &opts)?;
    let targets = if a.target.is_empty() {
        crate::output::default_targets(&prog)
    } else {
        a.target.clone()
    };
    let mut compiled = Vec::new();
    for t in targets {
        let c = crate::compile(&prog, t, &opts).map_err(|d| report(io, &name, &src, &d))?;
        compiled.push((c, Some(cost_plots(&prog, t, &a.code.sets))));
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

/// `shootdown cost`'s plot for each sequence that has a size choice (a
/// sequence without one is simply left without a plot).
fn cost_plots(prog: &crate::ir::Program, target: Target, pins: &[(String, u64)]) -> Vec<GraphCost> {
    prog.seqs
        .iter()
        .filter(|s| {
            let mut has = false;
            crate::ir::walk(&s.body, &mut |st| {
                has |= matches!(st, crate::ir::Stmt::Cover { .. });
            });
            has
        })
        .filter_map(|s| {
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
            Some(GraphCost {
                seq: s.name.clone(),
                svg: crate::cost::plot::svg(&table).ok()?,
            })
        })
        .collect()
}
