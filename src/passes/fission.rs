//! Loop fission: `each d { a; b }` -> `each d { a }; each d { b }`.
//!
//! This is the "write all AVAs, one eieio, write all LAUNCHes" move. It
//! reorders accesses of *different* instances only (a(i+1) now precedes
//! b(i)), which the ordering model allows unless an any-instance
//! requirement says otherwise. Bodies that can leave the sequence (polls,
//! returns) or that hold spec barriers are left alone: splitting them would
//! change what happened before an early exit, or where a verbatim barrier
//! sits.

use super::Cx;
use crate::ir::{Program, Seq, Stmt};
use crate::spec::ast::Scope;
use crate::spec::diag::Diag;

pub fn run(cx: &Cx, seq: &mut Seq) -> Result<(), Diag> {
    let body = std::mem::take(&mut seq.body);
    seq.body = block(cx.prog, body);
    Ok(())
}

/// Fission the loops of a block, and of the arms of its branches (a branch
/// arm is straight-line code like the top level).
fn block(prog: &Program, body: Vec<Stmt>) -> Vec<Stmt> {
    let mut out = Vec::with_capacity(body.len());
    for s in body {
        match s {
            s @ Stmt::If { .. } => out.push(s.map_blocks(&mut |b| block(prog, b))),
            Stmt::Each {
                dev,
                body,
                span,
                group,
            } if splittable(prog, dev, &body) => {
                for inner in body {
                    out.push(Stmt::Each {
                        dev,
                        body: vec![inner],
                        span,
                        group,
                    });
                }
            }
            other => out.push(other),
        }
    }
    out
}

fn splittable(prog: &Program, dev: usize, body: &[Stmt]) -> bool {
    if body.len() < 2 || !body.iter().all(|s| matches!(s, Stmt::Write { .. })) {
        return false;
    }
    // After fission every earlier statement of instance j runs before every
    // later statement of instance i < j. An any-instance requirement from a
    // later statement's register to an earlier one's forbids that.
    let requires = &prog.devices[dev].requires;
    for (i, a) in body.iter().enumerate() {
        for b in &body[i + 1..] {
            let (Some(a), Some(b)) = (a.access(), b.access()) else {
                return false;
            };
            if a.dev != dev || b.dev != dev {
                return false;
            }
            if requires
                .iter()
                .any(|r| r.scope == Scope::AnyInstance && r.before == b.reg && r.after == a.reg)
            {
                return false;
            }
        }
    }
    true
}
