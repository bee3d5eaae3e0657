//! The checks a sequence's `assume` facts decide, folded away. Not a
//! pass: like cover expansion it runs always, after it (a cover's wrap
//! and alignment checks are among what a fact can decide). An `assume`
//! is part of the sequence's contract, as the kernel's own hand-written
//! code has it: the lock byte of e6500's `tlb_core_data` holds the cpu
//! number + 1 with no check that it fits, because no e6500 system has
//! 255 cpus. A check that only a call outside the contract could take is
//! not code the naive lowering (`--passes none`) should have either.

use crate::ir::facts::{self, Known};
use crate::ir::{Program, Seq, Stmt};

/// Folds every `if` the facts decide in each sequence that has any, and
/// recomputes its required orderings (a folded arm may have held an
/// early return).
pub fn run(prog: &mut Program) {
    let devices = &prog.devices;
    for seq in &mut prog.seqs {
        if seq.assumes.is_empty() {
            continue;
        }
        let mut notes = Vec::new();
        let body = std::mem::take(&mut seq.body);
        seq.body = fold(seq, body, &mut notes);
        if !notes.is_empty() {
            seq.edges = crate::ir::order::required_edges(devices, &seq.body, &seq.orders);
        }
        seq.notes.extend(notes);
    }
}

/// `body` with the `if`s the facts of `seq` decide replaced by the arm
/// that runs; `notes` says which.
pub fn fold(seq: &Seq, body: Vec<Stmt>, notes: &mut Vec<String>) -> Vec<Stmt> {
    // The checker refused facts it cannot read, so this is Ok; a
    // sequence built some other way folds nothing.
    let Ok(known) = facts::params_known(seq.params.len(), &seq.assumes) else {
        return body;
    };
    let facts: Vec<&str> = seq.assumes.iter().map(|a| a.text.as_str()).collect();
    fold_block(body, &known, &facts.join(", "), notes)
}

fn fold_block(body: Vec<Stmt>, known: &[Known], facts: &str, notes: &mut Vec<String>) -> Vec<Stmt> {
    let mut out = Vec::with_capacity(body.len());
    for s in body {
        match s {
            Stmt::If {
                cond,
                then_,
                else_,
                why,
                ..
            } if facts::decide(&cond, known).is_some() => {
                let taken = facts::decide(&cond, known) == Some(true);
                notes.push(format!(
                    "assume: `{facts}` decides the test of {}: it {}, so only its {} arm is kept",
                    why.as_deref()
                        .map_or("a check".to_string(), |w| format!("`{w}`")),
                    if taken { "always holds" } else { "never holds" },
                    if taken { "then" } else { "else" },
                ));
                let arm = if taken { then_ } else { else_ };
                out.extend(fold_block(arm, known, facts, notes));
            }
            s => out.push(s.map_blocks(&mut |b| fold_block(b, known, facts, notes))),
        }
    }
    out
}
