//! The checks a sequence's `assume` facts (and the tests around them)
//! decide, folded away. Not a
//! pass: like cover expansion it runs always, after it (a cover's wrap
//! and alignment checks are among what a fact can decide). An `assume`
//! is part of the sequence's contract, as the kernel's own hand-written
//! code has it: the lock byte of e6500's `tlb_core_data` holds the cpu
//! number + 1 with no check that it fits, because no e6500 system has
//! 255 cpus. A check that only a call outside the contract could take is
//! not code the naive lowering (`--passes none`) should have either.

use crate::ir::facts::{self, Known};
use crate::ir::{Program, Seq, Stmt};

/// Folds every `if` the facts decide in each sequence, and recomputes
/// its required orderings where one went (a folded arm may have held an
/// early return).
pub fn run(prog: &mut Program) {
    let devices = &prog.devices;
    for seq in &mut prog.seqs {
        let mut notes = Vec::new();
        let body = std::mem::take(&mut seq.body);
        seq.body = fold(seq, body, &mut notes);
        if !notes.is_empty() {
            seq.edges = crate::ir::order::required_edges(devices, &seq.body, &seq.orders);
        }
        seq.notes.extend(notes);
    }
}

/// `body` with the `if`s decided by the facts of `seq` and by the tests
/// around them (inside `if size != 0`, `size` is at least 1) replaced by
/// the arm that runs; `notes` says which.
pub fn fold(seq: &Seq, body: Vec<Stmt>, notes: &mut Vec<String>) -> Vec<Stmt> {
    // The checker refused facts it cannot read, so this is Ok; a
    // sequence built some other way folds nothing.
    let Ok(known) = facts::params_known(seq.params.len(), &seq.assumes) else {
        return body;
    };
    let facts: Vec<&str> = seq.assumes.iter().map(|a| a.text.as_str()).collect();
    let given = if facts.is_empty() {
        "the tests around it".to_string()
    } else {
        format!("`{}` and the tests around it", facts.join(", "))
    };
    fold_block(body, &known, &given, notes)
}

fn fold_block(body: Vec<Stmt>, known: &[Known], given: &str, notes: &mut Vec<String>) -> Vec<Stmt> {
    let mut out = Vec::with_capacity(body.len());
    for mut s in body {
        match &mut s {
            Stmt::If {
                cond,
                then_,
                else_,
                why,
                ..
            } => match facts::decide(cond, known) {
                Some(taken) => {
                    let what = why
                        .as_deref()
                        .map_or("an `if`".to_string(), |w| format!("`{w}`"));
                    notes.push(format!(
                        "assume: given {given}, the test of {what} {}: only its {} arm is kept",
                        if taken { "always holds" } else { "never holds" },
                        if taken { "then" } else { "else" },
                    ));
                    let arm = std::mem::take(if taken { then_ } else { else_ });
                    out.extend(fold_block(arm, known, given, notes));
                }
                None => {
                    let not = crate::ir::Cond {
                        cmp: cond.cmp.inverse(),
                        a: cond.a.clone(),
                        b: cond.b.clone(),
                    };
                    let inside = facts::assuming(known, cond);
                    *then_ = fold_block(std::mem::take(then_), &inside, given, notes);
                    let inside = facts::assuming(known, &not);
                    *else_ = fold_block(std::mem::take(else_), &inside, given, notes);
                    out.push(s);
                }
            },
            _ => out.push(s.map_blocks(&mut |b| fold_block(b, known, given, notes))),
        }
    }
    out
}
