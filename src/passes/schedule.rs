//! Emission order: among the orders of top-level statements that keep
//! every rule (program order per device, among CPU invalidates, around
//! anything that can leave the sequence, and along required edges), pick
//! the one whose minimal barrier placement costs least. Typed barriers
//! make this matter: lining up requirements so that one barrier serves
//! several can beat the source order.
//!
//! The search is exhaustive over the topological orders when there are at
//! most [`MAX_UNITS`] statements (ties keep the source order); beyond that
//! the source order stands.

use crate::ir::{DevId, OpId, Program, Seq, Stmt};
use crate::isa::Target;
use crate::passes::barriers;

pub const MAX_UNITS: usize = 8;

/// What a statement touches, for the ordering rules.
#[derive(Default)]
struct Touch {
    devices: Vec<DevId>,
    ops: Vec<OpId>,
    invalidates: bool,
    /// Must not move at all relative to anything (exits, spec barriers,
    /// branches, returns).
    pinned: bool,
}

fn touch(s: &Stmt) -> Touch {
    let mut t = Touch {
        pinned: s.may_exit()
            || matches!(
                s,
                Stmt::Barrier { .. }
                    | Stmt::If { .. }
                    | Stmt::Cover { .. }
                    | Stmt::Mem { .. }
                    // It defines a local later statements read.
                    | Stmt::Read { .. }
                    // MAS registers: a later tlbsx/tlbwe reads what it
                    // wrote, and the statements do not say which.
                    | Stmt::Sys { .. }
            ),
        ..Touch::default()
    };
    crate::ir::walk(std::slice::from_ref(s), &mut |x| match x {
        Stmt::Write { access, .. } | Stmt::Poll { access, .. } | Stmt::Read { access, .. } => {
            t.devices.push(access.dev);
            t.ops.push(access.id);
        }
        Stmt::Invalidate { id, .. } => {
            t.invalidates = true;
            t.ops.push(*id);
        }
        // An assignment changes what later statements read: nothing may
        // cross it (statements do not record which locals they read).
        Stmt::Barrier { .. }
        | Stmt::If { .. }
        | Stmt::Return { .. }
        | Stmt::Mem { .. }
        | Stmt::Assign { .. }
        | Stmt::While { .. } => t.pinned = true,
        _ => {}
    });
    t
}

/// Must `a` (earlier in the source) stay before `b`?
fn conflict(seq: &Seq, a: &Touch, b: &Touch) -> bool {
    a.pinned
        || b.pinned
        || a.devices.iter().any(|d| b.devices.contains(d))
        || (a.invalidates && b.invalidates)
        || seq.edges.iter().any(|e| {
            (a.ops.contains(&e.from) && b.ops.contains(&e.to))
                || (b.ops.contains(&e.from) && a.ops.contains(&e.to))
        })
}

pub fn run(cx: &super::Cx, seq: &mut Seq) -> Result<(), crate::spec::diag::Diag> {
    reorder(cx.prog, seq, cx.target);
    Ok(())
}

fn reorder(prog: &Program, seq: &mut Seq, target: Target) {
    let n = seq.body.len();
    if !(2..=MAX_UNITS).contains(&n) || seq.edges.is_empty() {
        return;
    }
    let touches: Vec<Touch> = seq.body.iter().map(touch).collect();
    let mut preds = vec![Vec::new(); n];
    for j in 0..n {
        for i in 0..j {
            if conflict(seq, &touches[i], &touches[j]) {
                preds[j].push(i);
            }
        }
    }
    let Some(base) = barriers::min_cost(prog, seq, target) else {
        return;
    };
    let mut best = (base, (0..n).collect::<Vec<_>>());
    let original = seq.body.clone();
    let mut order = Vec::with_capacity(n);
    let mut used = vec![false; n];
    // Orders tried, and the placement work all their solves may spend
    // together (one slow solve per order times 8! orders was a hang).
    let mut budget = (50_000u32, 4 * barriers::SOLVE_WORK);
    search(
        prog,
        seq,
        target,
        &original,
        &preds,
        &mut order,
        &mut used,
        &mut best,
        &mut budget,
    );
    seq.body = best.1.iter().map(|&i| original[i].clone()).collect();
}

#[allow(clippy::too_many_arguments)]
fn search(
    prog: &Program,
    seq: &mut Seq,
    target: Target,
    original: &[Stmt],
    preds: &[Vec<usize>],
    order: &mut Vec<usize>,
    used: &mut [bool],
    best: &mut (u64, Vec<usize>),
    budget: &mut (u32, u64),
) {
    if budget.0 == 0 || budget.1 == 0 {
        return;
    }
    let n = original.len();
    if order.len() == n {
        budget.0 -= 1;
        seq.body = order.iter().map(|&i| original[i].clone()).collect();
        if let Some(c) = barriers::min_cost_within(prog, seq, target, &mut budget.1) {
            if c < best.0 {
                *best = (c, order.clone());
            }
        }
        return;
    }
    for i in 0..n {
        if used[i] || preds[i].iter().any(|&p| !used[p]) {
            continue;
        }
        used[i] = true;
        order.push(i);
        search(
            prog, seq, target, original, preds, order, used, best, budget,
        );
        order.pop();
        used[i] = false;
    }
}
