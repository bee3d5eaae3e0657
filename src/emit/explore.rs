//! `shootdown explore`: one self-contained HTML page per spec (no network,
//! no server; it opens from file:// and can be attached to a review): the
//! spec beside each target's `.S` text, a colour per spec line on both
//! sides (click a spec line and the instructions it became light up, click
//! an instruction and its line does), each barrier's provenance on hover,
//! and per sequence the ordering graph (accesses as nodes in program
//! order, each required ordering an arc, drawn by what meets it: a barrier
//! or the target's own memory model) and, for a sequence with a size
//! choice, the cost plot of `shootdown cost`.
//!
//! The page is rendered here, in full (the script only toggles classes),
//! so what a reader sees without JavaScript and what tests read from the
//! DOM are the same text. tests/explore.rs opens every example's page in
//! headless Chromium and clicks it.

use crate::codegen::Compiled;
use crate::emit::explain::{self, Explained};
use crate::ir::{OpId, Program};
use crate::isa::mach::InsnClass;
use askama::Template;
use std::fmt::Write;

/// One target's column.
pub struct TargetPage {
    pub name: String,
    pub funcs: Vec<FuncPage>,
    pub graphs: Vec<GraphPage>,
}

pub struct FuncPage {
    pub symbol: String,
    pub lines: Vec<AsmLine>,
}

pub struct AsmLine {
    pub label: Option<String>,
    pub text: String,
    /// The spec line the instruction came from (none for an instruction a
    /// pass made up for no one statement, e.g. a cover's wrap check).
    pub line: Option<usize>,
    /// Where it came from, in words (the `.S` comment).
    pub note: String,
    pub barrier: bool,
    /// The colour of its spec line.
    pub hue: usize,
}

pub struct GraphPage {
    pub seq: String,
    pub svg: String,
    /// `shootdown cost`'s plot for a sequence with a size choice.
    pub cost_svg: Option<String>,
    /// `shootdown diff`'s report, naive (`--passes none`) against what
    /// was generated, one line each with its kind (`+`, `-`, ` `).
    pub diff: Vec<(char, String)>,
    /// `shootdown trace` of the sequence with the arguments given.
    pub trace: Option<TraceView>,
}

/// A run of one sequence in the emulator, as `shootdown trace` prints it.
#[derive(Clone)]
pub struct TraceView {
    /// What was given (`--arg`s, `--read`s...), as on the command line.
    pub inputs: String,
    pub ret: i64,
    pub executed: u64,
    pub events: Vec<TraceRow>,
}

#[derive(Clone)]
pub struct TraceRow {
    pub kind: String,
    pub what: String,
    pub detail: String,
    pub line: Option<usize>,
    pub pc: u64,
}

#[derive(Template)]
#[template(path = "explore.html")]
struct PageView<'a> {
    title: &'a str,
    banner: String,
    spec: Vec<SpecLine>,
    targets: &'a [TargetPage],
}

struct SpecLine {
    n: usize,
    hue: usize,
    text: String,
    /// Some instruction of some target came from this line.
    used: bool,
}

/// Hue of spec line `n`: neighbours far apart on the colour wheel.
fn hue(n: usize) -> usize {
    (n * 137) % 360
}

/// The page of a spec: `spec_name` and its source, and what each target
/// compiled it to.
pub fn render(spec_name: &str, source: &str, compiled: &[(Compiled, Vec<SeqExtras>)]) -> String {
    let targets: Vec<TargetPage> = compiled
        .iter()
        .map(|(c, extras)| target_page(c, extras))
        .collect();
    let used: rustc_hash::FxHashSet<usize> = targets
        .iter()
        .flat_map(|t| t.funcs.iter())
        .flat_map(|f| f.lines.iter())
        .filter_map(|l| l.line)
        .collect();
    let spec = source
        .lines()
        .enumerate()
        .map(|(i, text)| SpecLine {
            n: i + 1,
            hue: hue(i + 1),
            text: text.to_string(),
            used: used.contains(&(i + 1)),
        })
        .collect();
    let view = PageView {
        title: spec_name,
        banner: crate::emit::banner(spec_name, " as an explorer page")
            .replace("shootdown gen`.", "shootdown explore`"),
        spec,
        targets: &targets,
    };
    view.render()
        .unwrap_or_else(|e| format!("<!-- template error: {e} -->\n"))
}

/// What the caller made for one sequence: the cost plot (for a sequence
/// with a size choice), the strategy diff, and a trace when the user gave
/// inputs.
pub struct SeqExtras {
    pub seq: String,
    pub cost_svg: Option<String>,
    pub diff: Option<String>,
    pub trace: Option<TraceView>,
}

fn target_page(c: &Compiled, extras: &[SeqExtras]) -> TargetPage {
    let x = explain::explain(c, None);
    let funcs = c
        .funcs
        .iter()
        .map(|f| FuncPage {
            symbol: f.symbol.clone(),
            lines: f
                .lines
                .iter()
                .map(|l| AsmLine {
                    label: l.label.clone(),
                    text: l.text.clone(),
                    line: l.origin.line,
                    note: l.origin.note.to_string(),
                    barrier: l.class == InsnClass::Barrier,
                    hue: l.origin.line.map_or(0, hue),
                })
                .collect(),
        })
        .collect();
    let graphs = c
        .opt
        .seqs
        .iter()
        .map(|seq| {
            let extra = extras.iter().find(|g| g.seq == seq.name);
            GraphPage {
                seq: seq.name.clone(),
                svg: graph_svg(&c.opt, seq, &x),
                cost_svg: extra.and_then(|g| g.cost_svg.clone()),
                diff: extra
                    .and_then(|g| g.diff.as_deref())
                    .map(diff_lines)
                    .unwrap_or_default(),
                trace: extra.and_then(|g| g.trace.clone()),
            }
        })
        .collect();
    TargetPage {
        name: c.target.to_string(),
        funcs,
        graphs,
    }
}

/// A unified diff's lines with their kind; the report's header and
/// count tables as context.
fn diff_lines(text: &str) -> Vec<(char, String)> {
    text.lines()
        .map(|l| {
            let kind = match l.chars().next() {
                Some('+') if !l.starts_with("+++") => '+',
                Some('-') if !l.starts_with("---") => '-',
                Some('@') => '@',
                _ => ' ',
            };
            (kind, l.to_string())
        })
        .collect()
}

fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// The ordering graph of `seq`: the caller's earlier stores, every access
/// in program order and the return, one under the other; each required
/// ordering an arc on the right from its first access down to its second
/// (solid orange when a barrier meets it, dashed grey when the target
/// does), labelled with the barrier and explained in its tooltip.
fn graph_svg(prog: &Program, seq: &crate::ir::Seq, x: &Explained) -> String {
    let mut nodes: Vec<(OpId, String)> = vec![(OpId::ENTRY, "the caller's earlier stores".into())];
    for (id, what) in explain::ops_in_order(prog, seq) {
        if !nodes.iter().any(|(n, _)| *n == id) {
            nodes.push((id, what));
        }
    }
    nodes.push((OpId::EXIT, "the return".into()));
    let row = |id: OpId| nodes.iter().position(|(n, _)| *n == id);
    let orderings = x
        .sequences
        .iter()
        .find(|s| s.name == seq.name)
        .map(|s| &s.orderings[..])
        .unwrap_or(&[]);
    let (h, w_node) = (26usize, 330usize);
    let spans: Vec<usize> = seq
        .edges
        .iter()
        .filter_map(|e| Some(row(e.from)?.abs_diff(row(e.to)?)))
        .collect();
    let reach = spans.iter().max().copied().unwrap_or(0);
    let width = w_node + 40 + 14 * reach.min(40) + 120;
    let height = 20 + h * nodes.len();
    let mut s = String::new();
    let _ = write!(
        s,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"ograph\" width=\"{width}\" height=\"{height}\" viewBox=\"0 0 {width} {height}\">"
    );
    for (i, (id, what)) in nodes.iter().enumerate() {
        let y = 10 + i * h;
        let _ = write!(
            s,
            "<g class=\"node\" data-op=\"{}\"><rect x=\"4\" y=\"{y}\" width=\"{w_node}\" height=\"{}\" rx=\"4\"/><text x=\"10\" y=\"{}\">{}</text></g>",
            id.0,
            h - 6,
            y + h / 2 + 1,
            esc(what)
        );
    }
    for (i, e) in seq.edges.iter().enumerate() {
        let (Some(a), Some(b)) = (row(e.from), row(e.to)) else {
            continue;
        };
        let o = orderings.iter().find(|o| o.edge == i);
        let by_barrier = o.is_some_and(|o| o.met_by == "barrier");
        let ya = 10 + a * h + (h - 6) / 2;
        let yb = 10 + b * h + (h - 6) / 2;
        let dx = 30 + 14 * a.abs_diff(b).min(40);
        let x0 = 4 + w_node;
        let label = o
            .map(|o| {
                o.barriers
                    .iter()
                    .map(|b| b.name.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            })
            .unwrap_or_default();
        // The feature variant the ordering belongs to, when the features
        // pass split the sequence.
        let variant: Vec<String> = seq
            .edge_variants
            .get(i)
            .filter(|_| seq.edge_variants.len() == seq.edges.len())
            .into_iter()
            .flatten()
            .filter_map(|&(f, on)| {
                let name = &prog.features.get(f)?.name;
                Some(if on { name.clone() } else { format!("!{name}") })
            })
            .collect();
        let variant = if variant.is_empty() {
            String::new()
        } else {
            format!(" [variant {}]", variant.join(", "))
        };
        let tip = o.map_or_else(String::new, |o| {
            format!(
                "e{i}{variant}: {} -> {} (required by line {}): {}",
                o.from, o.to, o.required_by, o.why
            )
        });
        let _ = write!(
            s,
            "<g class=\"edge {}\" data-edge=\"{i}\"><title>{}</title><path d=\"M {x0} {ya} C {} {ya}, {} {yb}, {x0} {yb}\"/>",
            if by_barrier { "by-barrier" } else { "by-target" },
            esc(&tip),
            x0 + dx,
            x0 + dx,
        );
        if !label.is_empty() {
            let _ = write!(
                s,
                "<text x=\"{}\" y=\"{}\">{}</text>",
                x0 + dx * 3 / 4 + 4,
                (ya + yb) / 2 + 4,
                esc(&label)
            );
        }
        s.push_str("</g>");
    }
    s.push_str("</svg>");
    s
}

#[cfg(test)]
mod tests {
    #[test]
    fn hues_of_neighbouring_lines_differ() {
        for n in 1..500 {
            assert!(super::hue(n).abs_diff(super::hue(n + 1)) > 30);
        }
    }
}
