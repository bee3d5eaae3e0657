//! Completion on every return path.
//!
//! `order invalidates before return` asks that no return leaves an
//! invalidation incomplete. Placement covers the normal return (the edges
//! to [`crate::ir::OpId::EXIT`]); this pass covers the early ones: a poll
//! that runs out, a bounded lock spin that gives up, a `range` with a zero
//! step. Each gets the completion barrier on its failure path, and only
//! when an invalidation may still be incomplete there: on that path alone
//! it costs nothing on the normal path, which is why it is not an edge of
//! the ordering graph (an edge would pull the barrier in front of the poll
//! for every call). An explicit `return` gets a barrier statement before
//! it, under the same condition.

use crate::ir::order::Class;
use crate::ir::{BarrierName, MemOp, Origin, Seq, Stmt};
use crate::target::barriers::{Barrier, BarrierKind};
use crate::target::Target;

/// Give every early exit of `seq` the completion barrier it needs.
pub fn run(seq: &mut Seq, target: Target, machine: crate::target::Machine) {
    if !seq
        .orders
        .iter()
        .any(|(b, a, _)| b == "invalidates" && a == "return")
    {
        return;
    }
    // Every kind of invalidation the sequence issues must be complete at
    // an early exit: one barrier that completes them all (POWER: `tlbie`
    // needs `eieio; tlbsync; ptesync`, `tlbiel` only `ptesync`).
    let mut classes: Vec<Class> = Vec::new();
    crate::ir::walk(&seq.body, &mut |s| {
        if let Stmt::Invalidate { name, .. } = s {
            let c = crate::ir::order::invalidate_class(name);
            if !classes.contains(&c) {
                classes.push(c);
            }
        }
    });
    let to = Class::InvalidateCompletion;
    classes.retain(|&c| !target.orders_implicitly(c, to, false));
    if classes.is_empty() {
        return;
    }
    let completes_all = |k: &BarrierKind| classes.iter().all(|&c| k.covers(c, to));
    let Some(kind) = target
        .table(machine)
        .iter()
        .filter(|k| completes_all(k))
        .min_by_key(|k| k.cost)
    else {
        // Placement has already reported that nothing orders these.
        return;
    };
    let cx = Cx {
        completes: &completes_all,
        barrier: Barrier::of(kind),
    };
    block(&cx, &mut seq.body, false);
}

struct Cx<'a> {
    /// Does this barrier complete the sequence's invalidations?
    completes: &'a dyn Fn(&BarrierKind) -> bool,
    /// The cheapest one that does.
    barrier: Barrier,
}

impl Cx<'_> {
    fn mark(&self, pending: bool, slot: &mut Option<Barrier>) {
        if pending && slot.is_none() {
            *slot = Some(self.barrier);
        }
    }
}

/// Walk a block with `pending` (an invalidation may be incomplete) at its
/// start; returns whether one may be incomplete at its end. Marking is
/// monotone, so running a loop body again with a larger entry state only
/// adds barriers the loop's back edge makes necessary.
fn block(cx: &Cx, body: &mut Vec<Stmt>, mut pending: bool) -> bool {
    let mut i = 0;
    while i < body.len() {
        match &mut body[i] {
            Stmt::Invalidate { .. } => pending = true,
            Stmt::Barrier { name, .. } => {
                if (cx.completes)(&name.kind()) {
                    pending = false;
                }
            }
            Stmt::Poll { fail_barrier, .. } => cx.mark(pending, fail_barrier),
            Stmt::Mem {
                op:
                    MemOp::Acquire {
                        limit: Some(_),
                        fail_barrier,
                        ..
                    }
                    | MemOp::Poll { fail_barrier, .. },
                ..
            } => cx.mark(pending, fail_barrier),
            Stmt::Range {
                step,
                fail_barrier,
                body: b,
                ..
            } => {
                if step.as_const().is_none() {
                    cx.mark(pending, fail_barrier);
                }
                pending = looped(cx, b, pending);
            }
            Stmt::Each { body: b, .. } | Stmt::Cover { body: b, .. } => {
                pending = looped(cx, b, pending);
            }
            // The limit is hit at the loop head after a full run of the
            // body: whatever an iteration leaves pending is pending there.
            Stmt::While {
                body: b,
                fail_barrier,
                ..
            } => {
                pending = looped(cx, b, pending);
                cx.mark(pending, fail_barrier);
            }
            Stmt::If { then_, else_, .. } => {
                let t = block(cx, then_, pending);
                let e = block(cx, else_, pending);
                pending = t || e;
            }
            Stmt::Return { .. } => {
                if pending {
                    body.insert(
                        i,
                        Stmt::Barrier {
                            name: BarrierName::Kind(cx.barrier),
                            origin: Origin::Pass("complete-exits"),
                            covers: Vec::new(),
                        },
                    );
                    i += 1;
                }
                // Nothing after a return runs on this path.
                pending = false;
            }
            Stmt::Write { .. } | Stmt::Read { .. } | Stmt::Mem { .. } | Stmt::Assign { .. } => {}
        }
        i += 1;
    }
    pending
}

/// A loop body that may run zero or more times.
fn looped(cx: &Cx, body: &mut Vec<Stmt>, pending: bool) -> bool {
    let out = block(cx, body, pending);
    if out && !pending {
        // The next iteration starts with what the last one left.
        block(cx, body, true);
    }
    pending || out
}
