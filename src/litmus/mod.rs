//! Litmus tests for herd7 (issue 36, docs/memory-model.md): what a
//! sequence's generated code does for one set of arguments, with the
//! guarantees its spec requires written as forbidden outcomes, so that
//! the architecture's own memory model (herd7's `aarch64.cat`, `ppc.cat`,
//! `riscv.cat`, `x86tso.cat`, Arm's VMSA model of TLB maintenance) judges
//! the barriers. qemu and unicorn cannot: they perform accesses in order.
//!
//! The sequence's thread (P0) is the trace the emulator ran: accesses,
//! barriers and invalidations in execution order, loops unrolled and
//! branches resolved. Values and addresses become small constants and
//! named locations; arithmetic and dependencies are left out (they can
//! only forbid more outcomes, so a `Never` without them holds with them).
//! The other thread and the `exists` clause come from the sequence's
//! required orderings (`seq.edges`, the ones `explain` lists): one test
//! per ordered pair of accesses the run executed ([`shape`]), and on
//! AArch64 one VMSA test per invalidated page for `order stores before
//! invalidates` + `order invalidates before return` ([`vmsa`]).

pub mod herd;
#[cfg(feature = "emu")]
mod shape;
#[cfg(feature = "emu")]
mod thread;
#[cfg(feature = "emu")]
mod vmsa;

#[cfg(feature = "emu")]
use crate::codegen::Compiled;
#[cfg(feature = "emu")]
use crate::ir::order::Class;
#[cfg(feature = "emu")]
use crate::ir::OpId;
#[cfg(feature = "emu")]
use crate::verify::trace::Trace;
use serde::Serialize;

pub use crate::isa::litmus::{Dialect, Lowered, Side, Tlbi};

/// One litmus test.
#[derive(Clone, Debug, Serialize)]
pub struct Test {
    /// herd7's name for it (also the file stem).
    pub name: String,
    /// `-variant` herd7 needs (`vmsa` for TLB maintenance).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub variant: Option<&'static str>,
    /// The required orderings (`explain`'s `e<N>`) it checks.
    pub edges: Vec<usize>,
    /// What the forbidden outcome means, in words.
    pub checks: String,
    /// The test, in herd7's syntax.
    pub text: String,
}

/// A required ordering the export has no test for, and why.
#[derive(Clone, Debug, Serialize)]
pub struct Skipped {
    pub edge: usize,
    pub why: String,
}

#[derive(Clone, Debug, Default, Serialize)]
pub struct Export {
    pub tests: Vec<Test>,
    pub skipped: Vec<Skipped>,
}

#[cfg(feature = "emu")]
/// Export the run `trace` of sequence `si` of `c` as litmus tests named
/// after `stem`.
pub fn export(c: &Compiled, si: usize, trace: &Trace, stem: &str) -> Result<Export, String> {
    let d = c.target.backend().litmus();
    let seq = &c.opt.seqs[si];
    let steps = thread::steps(trace);
    let mut out = Export::default();
    let tlb_edges: Vec<usize> = seq
        .edges
        .iter()
        .enumerate()
        .filter(|(_, e)| {
            (e.from == OpId::ENTRY && e.to_class == Class::TlbInvalidate)
                || (e.from_class == Class::TlbInvalidate && e.to == OpId::EXIT)
        })
        .map(|(i, _)| i)
        .collect();
    let mut covered: Vec<usize> = Vec::new();
    if !tlb_edges.is_empty() {
        match vmsa::tests(d, seq, &steps, stem, &tlb_edges) {
            Ok(v) => {
                covered = v.iter().flat_map(|t| t.edges.clone()).collect();
                out.tests.extend(v);
            }
            Err(why) => {
                for &i in &tlb_edges {
                    out.skipped.push(Skipped {
                        edge: i,
                        why: why.clone(),
                    });
                }
                covered = tlb_edges.clone();
            }
        }
    }
    for (i, e) in seq.edges.iter().enumerate() {
        if covered.contains(&i) {
            continue;
        }
        if tlb_edges.contains(&i) {
            out.skipped.push(Skipped {
                edge: i,
                why: "not reached with these arguments: its TLBI did not run".into(),
            });
            continue;
        }
        if e.from_class.is_invalidation() && e.to != OpId::EXIT {
            out.skipped.push(Skipped {
                edge: i,
                why: if d.arch() == "AArch64" {
                    "a TLBI complete before a later TLBI (the REPEAT_TLBI workaround): it answers an erratum of some CPUs, which the architecture's model does not have".into()
                } else {
                    format!("an invalidation complete before a later operation: herd7's {} model has no TLB invalidation", d.arch())
                },
            });
            continue;
        }
        match shape::edge_tests(d, c, &seq.name, e, i, &steps, stem) {
            Ok(tests) => out.tests.extend(tests),
            Err(why) => out.skipped.push(Skipped { edge: i, why }),
        }
    }
    Ok(out)
}

#[cfg(feature = "emu")]
/// The operation ids that stand for "the caller's stores" and "the
/// return", which have no event in a trace.
fn is_boundary(id: OpId) -> bool {
    id == OpId::ENTRY || id == OpId::EXIT
}

/// A herd7 name: letters, digits, `_`, `+`, `-`, `.`.
#[cfg(feature = "emu")]
fn herd_name(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "_+-.".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// The text of a test: header, notes, initial state, threads side by
/// side, the forbidden outcome.
#[cfg(feature = "emu")]
pub(crate) fn render(
    d: &dyn Dialect,
    name: &str,
    notes: &[String],
    init: &[String],
    threads: &[Vec<String>],
    exists: &str,
) -> String {
    use std::fmt::Write;
    let mut s = String::new();
    let _ = writeln!(s, "{} {}", d.arch(), name);
    for n in notes {
        // herd7 comments do not nest: keep `*)` out of a note.
        let _ = writeln!(s, "(* {} *)", n.replace("*)", "* )"));
    }
    let _ = writeln!(s, "{{");
    for i in init {
        let _ = writeln!(s, " {i};");
    }
    let _ = writeln!(s, "}}");
    let widths: Vec<usize> = threads
        .iter()
        .enumerate()
        .map(|(k, t)| {
            t.iter()
                .map(String::len)
                .chain([format!("P{k}").len()])
                .max()
                .unwrap_or(0)
        })
        .collect();
    let rows = threads.iter().map(Vec::len).max().unwrap_or(0);
    let line = |cells: Vec<String>| -> String {
        let mut l = String::new();
        for (k, c) in cells.iter().enumerate() {
            let sep = if k + 1 == cells.len() { " ;" } else { " |" };
            let _ = write!(l, " {:<w$}{sep}", c, w = widths[k]);
        }
        l
    };
    let _ = writeln!(
        s,
        "{}",
        line((0..threads.len()).map(|k| format!("P{k}")).collect())
    );
    for r in 0..rows {
        let cells = threads
            .iter()
            .map(|t| t.get(r).cloned().unwrap_or_default())
            .collect();
        let _ = writeln!(s, "{}", line(cells));
    }
    let _ = writeln!(s, "exists ({exists})");
    s
}
