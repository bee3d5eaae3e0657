//! `shootdown explain`: every required ordering of a sequence and how the
//! generated code meets it: by which barrier (and who placed it), or why
//! none is needed (the target's memory model orders the pair). Early
//! exits list the completion barriers they run. Text and JSON.
//!
//! This reads the optimized IR the code was generated from: it says why
//! the placement did what it did. Whether the code keeps every ordering on
//! every path is the static proof's job (`verify`, docs/ordering-proof.md).

use crate::codegen::Compiled;
use crate::ir::order::Edge;
use crate::ir::{BarrierName, OpId, Origin, Program, Seq, Stmt};
use crate::passes::barriers::{existing_crossing, ordered_by_target};
use serde::Serialize;

#[derive(Serialize)]
pub struct Explained {
    pub sequences: Vec<SeqExplained>,
}

#[derive(Serialize)]
pub struct SeqExplained {
    pub name: String,
    pub target: String,
    pub orderings: Vec<Ordering>,
    /// Early returns and the barriers they run first.
    pub exits: Vec<String>,
}

#[derive(Serialize)]
pub struct Ordering {
    /// Index into the sequence's required orderings (`e0`, `e1`, ...
    /// in `show --stage opt` and in the `.S` barrier notes).
    pub edge: usize,
    pub from: String,
    pub to: String,
    pub classes: [String; 2],
    /// Spec line of the `require`/`order` that asks for it.
    pub required_by: usize,
    /// `barrier` or `target`.
    pub met_by: &'static str,
    /// The barriers that order it (empty when the target does).
    pub barriers: Vec<MetBarrier>,
    /// Why, in words.
    pub why: String,
}

#[derive(Serialize)]
pub struct MetBarrier {
    pub name: String,
    /// `place-barriers`, `naive-barriers`, ... or `spec` (written there).
    pub placed_by: String,
    /// Spec line, for a barrier written in the spec.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line: Option<usize>,
}

/// What each operation of `seq` is, for the report: `write npu.ava (line 9)`.
fn op_names(prog: &Program, seq: &Seq) -> rustc_hash::FxHashMap<OpId, String> {
    op_names_of(prog, seq, None)
}

/// [`op_names`] of the operations in `only` (all when None).
pub(crate) fn op_names_of(
    prog: &Program,
    seq: &Seq,
    only: Option<&rustc_hash::FxHashSet<OpId>>,
) -> rustc_hash::FxHashMap<OpId, String> {
    let mut out: rustc_hash::FxHashMap<OpId, String> = ops_in_order(prog, seq)
        .into_iter()
        .filter(|(id, _)| only.is_none_or(|o| o.contains(id)))
        .collect();
    out.insert(OpId::ENTRY, "the caller's earlier stores".to_string());
    out.insert(OpId::EXIT, "the return".to_string());
    out
}

/// Every operation an ordering can name (device accesses, stores to
/// normal memory, invalidations) in program order, with what it is:
/// `write npu.ava (line 9)`. Without the entry and the return.
pub fn ops_in_order(prog: &Program, seq: &Seq) -> Vec<(OpId, String)> {
    let mut out = Vec::new();
    let reg = |a: &crate::ir::Access| {
        let d = &prog.devices[a.dev];
        format!("{}.{}", d.name, d.regs[a.reg].name)
    };
    crate::ir::walk(&seq.body, &mut |s| {
        let (id, what) = match s {
            Stmt::Write { access, .. } => (
                access.id,
                format!("write {} (line {})", reg(access), prog.line_of(access.span)),
            ),
            Stmt::Poll { access, .. } => (
                access.id,
                format!("poll {} (line {})", reg(access), prog.line_of(access.span)),
            ),
            Stmt::Read { access, .. } => (
                access.id,
                format!("read {} (line {})", reg(access), prog.line_of(access.span)),
            ),
            Stmt::Mem { id, span, .. } => (
                *id,
                format!("store to normal memory (line {})", prog.line_of(*span)),
            ),
            Stmt::Invalidate { id, name, span, .. } => {
                (*id, format!("`{name}` (line {})", prog.line_of(*span)))
            }
            _ => return,
        };
        out.push((id, what));
    });
    out
}

fn met_barrier(prog: &Program, name: &BarrierName, origin: &Origin) -> MetBarrier {
    let (placed_by, line) = match origin {
        Origin::Pass(p) => (p.to_string(), None),
        Origin::Spec(span) => ("spec".to_string(), Some(prog.line_of(*span))),
    };
    MetBarrier {
        name: name.as_str().to_string(),
        placed_by,
        line,
    }
}

fn explain_edge(
    c: &Compiled,
    seq: &Seq,
    i: usize,
    e: &Edge,
    names: &rustc_hash::FxHashMap<OpId, String>,
) -> Ordering {
    let prog = &c.opt;
    let name = |id: &OpId| {
        names
            .get(id)
            .cloned()
            .unwrap_or_else(|| format!("op{}", id.0))
    };
    let mut barriers = Vec::new();
    crate::ir::walk(&seq.body, &mut |s| {
        if let Stmt::Barrier {
            name,
            origin,
            covers,
        } = s
        {
            if covers.contains(&i) {
                barriers.push(met_barrier(prog, name, origin));
            }
        }
    });
    let (met_by, why) = if ordered_by_target(prog, e, c.target) {
        let same = e
            .dev
            .is_some_and(|d| prog.devices[d].mapping == crate::ir::Mapping::Strong);
        let why = if same {
            format!(
                "no barrier: {} keeps these two accesses to one strongly mapped device in program order",
                c.target
            )
        } else {
            format!(
                "no barrier: {}'s memory model orders {:?} before {:?} by itself",
                c.target, e.from_class, e.to_class
            )
        };
        ("target", why)
    } else {
        if barriers.is_empty() {
            // Written in the spec, or kept from before placement: the
            // barriers already on the line between the two, in the
            // ordering's own variant (its operations are in every one).
            let own;
            let variant = (seq.edge_variants.len() == seq.edges.len())
                .then(|| seq.edge_variants.get(i))
                .flatten();
            let seq = match variant.filter(|f| !f.is_empty()) {
                Some(fixed) => {
                    own = Seq {
                        body: crate::features::variant_body(seq, fixed),
                        ..seq.clone()
                    };
                    &own
                }
                None => seq,
            };
            for (b, o) in existing_crossing(prog, seq, e) {
                barriers.push(met_barrier(prog, &BarrierName::Kind(b), &o));
            }
        }
        let list: Vec<String> = barriers
            .iter()
            .map(|b| match b.line {
                Some(l) => format!("`{}` (written at line {l})", b.name),
                None => format!("`{}` (placed by {})", b.name, b.placed_by),
            })
            .collect();
        let why = if list.is_empty() {
            "NOT MET: no barrier crosses it (a bug: please report)".to_string()
        } else {
            format!(
                "{} orders {:?} before {:?}",
                list.join(", "),
                e.from_class,
                e.to_class
            )
        };
        ("barrier", why)
    };
    Ordering {
        edge: i,
        from: name(&e.from),
        to: name(&e.to),
        classes: [format!("{:?}", e.from_class), format!("{:?}", e.to_class)],
        required_by: prog.line_of(e.span),
        met_by,
        barriers,
        why,
    }
}

/// Early exits and the completion barriers they run.
fn exits(prog: &Program, seq: &Seq) -> Vec<String> {
    let mut out = Vec::new();
    let list = |b: &crate::ir::ExitBarriers| -> String {
        let v: Vec<String> = b.iter().map(|b| format!("`{b}`")).collect();
        if v.is_empty() {
            "nothing (no invalidation can be pending there)".to_string()
        } else {
            v.join(", ")
        }
    };
    crate::ir::walk(&seq.body, &mut |s| match s {
        Stmt::Poll { access, wait, .. } => out.push(format!(
            "poll at line {} gives up with {}: runs {} first",
            prog.line_of(access.span),
            wait.fail,
            list(&wait.fail_barrier)
        )),
        Stmt::While {
            span,
            fail,
            fail_barrier,
            ..
        } => out.push(format!(
            "while at line {} hits its limit, returns {fail}: runs {} first",
            prog.line_of(*span),
            list(fail_barrier)
        )),
        Stmt::Range {
            span,
            fail_barrier,
            step,
            ..
        } if step.as_const().is_none() => out.push(format!(
            "range at line {} with a zero step returns -22: runs {} first",
            prog.line_of(*span),
            list(fail_barrier)
        )),
        _ => {}
    });
    // Early `return`s (written, or a cover's wrap check): the barriers the
    // exits pass put right before them.
    fn returns(prog: &Program, body: &[Stmt], out: &mut Vec<String>) {
        for (k, s) in body.iter().enumerate() {
            if let Stmt::Return { value, .. } = s {
                let before: Vec<String> = body[..k]
                    .iter()
                    .rev()
                    .map_while(|b| match b {
                        Stmt::Barrier {
                            name,
                            origin: Origin::Pass("complete-exits"),
                            ..
                        } => Some(format!("`{name}`")),
                        _ => None,
                    })
                    .collect();
                if !before.is_empty() {
                    let v: Vec<String> = before.into_iter().rev().collect();
                    let code = value
                        .as_const()
                        .map_or_else(|| "a computed code".to_string(), |c| (c as i64).to_string());
                    out.push(format!(
                        "return {code} runs {} first (complete-exits)",
                        v.join(", ")
                    ));
                }
            }
            match s {
                Stmt::Each { body, .. }
                | Stmt::Range { body, .. }
                | Stmt::While { body, .. }
                | Stmt::Cover { body, .. } => returns(prog, body, out),
                Stmt::If { then_, else_, .. } => {
                    returns(prog, then_, out);
                    returns(prog, else_, out);
                }
                _ => {}
            }
        }
        let _ = prog;
    }
    returns(prog, &seq.body, &mut out);
    out
}

/// Explain every sequence of `c` (or the one named `only`).
pub fn explain(c: &Compiled, only: Option<&str>) -> Explained {
    let prog = &c.opt;
    let sequences = prog
        .seqs
        .iter()
        .filter(|s| only.is_none_or(|n| n == s.name))
        .map(|seq| {
            let names = op_names(prog, seq);
            SeqExplained {
                name: seq.name.clone(),
                target: c.target.to_string(),
                orderings: seq
                    .edges
                    .iter()
                    .enumerate()
                    .map(|(i, e)| explain_edge(c, seq, i, e, &names))
                    .collect(),
                exits: exits(prog, seq),
            }
        })
        .collect();
    Explained { sequences }
}

pub fn to_text(x: &Explained) -> String {
    use std::fmt::Write;
    let mut out = String::new();
    for s in &x.sequences {
        let _ = writeln!(out, "{} on {}:", s.name, s.target);
        if s.orderings.is_empty() {
            let _ = writeln!(out, "  no required orderings");
        }
        for o in &s.orderings {
            let _ = writeln!(
                out,
                "  e{}: {} before {} ({} -> {}, line {})\n      {}",
                o.edge, o.from, o.to, o.classes[0], o.classes[1], o.required_by, o.why
            );
        }
        for e in &s.exits {
            let _ = writeln!(out, "  exit: {e}");
        }
    }
    out
}
