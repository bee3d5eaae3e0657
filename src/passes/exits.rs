//! Completion on every return path.
//!
//! `order invalidates before return` asks that no return leaves an
//! invalidation incomplete. Placement covers the normal return (the edges
//! to [`crate::ir::OpId::EXIT`]); this pass covers the early ones: a poll
//! that runs out, a bounded lock spin that gives up, a `while` that hits
//! its limit, a `range` with a zero step. Each gets the completion
//! barriers on its failure path, and only those the invalidations that may
//! still be incomplete there need: on that path alone it costs nothing on
//! the normal path, which is why it is not an edge of the ordering graph
//! (an edge would pull the barrier in front of the poll for every call).
//! An explicit `return` gets barrier statements before it, under the same
//! condition.
//!
//! What may be incomplete is tracked per class of invalidation, not as one
//! flag: no single barrier completes every mix (POWER `tlbiel` needs
//! `ptesync`, `slbia` a context synchronization), so an exit gets the
//! cheapest barrier for each class still pending there (issue 41: an
//! `slbia` in another arm made the pass give up on every exit).

use crate::ir::order::Class;
use crate::ir::{BarrierName, ExitBarriers, MemOp, Origin, Seq, Stmt, Wait};
use crate::isa::barriers::{Barrier, BarrierKind};
use crate::isa::Target;

/// Invalidation classes that may be incomplete, as a bit set over
/// [`Class::ALL`].
#[derive(Clone, Copy, Default, PartialEq, Eq)]
struct Pending(u16);

impl Pending {
    fn bit(c: Class) -> u16 {
        1 << Class::ALL.iter().position(|&x| x == c).unwrap_or(0)
    }
    fn add(&mut self, c: Class) {
        self.0 |= Pending::bit(c);
    }
    fn has(self, c: Class) -> bool {
        self.0 & Pending::bit(c) != 0
    }
    fn union(self, o: Pending) -> Pending {
        Pending(self.0 | o.0)
    }
}

/// Give every early exit of `seq` the completion barriers it needs.
pub fn run(seq: &mut Seq, target: Target, machine: crate::isa::Machine) {
    if !seq
        .orders
        .iter()
        .any(|(b, a, _)| b == "invalidates" && a == "return")
    {
        return;
    }
    let cx = Cx {
        table: target.table(machine),
        implicit: &|c| target.orders_implicitly(c, Class::InvalidateCompletion, false),
    };
    block(&cx, &mut seq.body, Pending::default());
}

struct Cx<'a> {
    table: &'static [BarrierKind],
    /// Is an invalidation of this class complete with no barrier?
    implicit: &'a dyn Fn(Class) -> bool,
}

impl Cx<'_> {
    /// The barriers that complete every pending class, in the order they
    /// run: for each class in [`Class::ALL`] order (TLB before ERAT: the
    /// context synchronization comes last), the cheapest barrier that
    /// completes it unless one chosen already does. A class nothing
    /// completes has been reported by placement.
    fn completion(&self, pending: Pending) -> ExitBarriers {
        let to = Class::InvalidateCompletion;
        let mut out = ExitBarriers::NONE;
        let needed: Vec<Class> = Class::ALL
            .into_iter()
            .filter(|&c| pending.has(c) && !(self.implicit)(c))
            .collect();
        // One barrier for all of them when the table has one.
        if let Some(k) = self
            .table
            .iter()
            .filter(|k| needed.iter().all(|&c| k.covers(c, to)))
            .min_by_key(|k| k.cost)
        {
            if !needed.is_empty() {
                out.push(Barrier::of(k));
            }
            return out;
        }
        for c in needed {
            if out.iter().any(|b| b.covers(c, to)) {
                continue;
            }
            if let Some(k) = self
                .table
                .iter()
                .filter(|k| k.covers(c, to))
                .min_by_key(|k| k.cost)
            {
                out.push(Barrier::of(k));
            }
        }
        out
    }

    fn mark(&self, pending: Pending, slot: &mut ExitBarriers) {
        for b in self.completion(pending).iter() {
            slot.push(b);
        }
    }

    /// What a barrier leaves pending.
    fn after(&self, b: &BarrierKind, pending: Pending) -> Pending {
        let mut left = Pending::default();
        for c in Class::ALL {
            if pending.has(c) && !b.covers(c, Class::InvalidateCompletion) {
                left.add(c);
            }
        }
        left
    }
}

/// Walk a block with `pending` (the invalidations that may be incomplete)
/// at its start; returns what may be incomplete at its end. Marking is
/// monotone, so running a loop body again with a larger entry state only
/// adds barriers the loop's back edge makes necessary.
fn block(cx: &Cx, body: &mut Vec<Stmt>, mut pending: Pending) -> Pending {
    let mut i = 0;
    while i < body.len() {
        match &mut body[i] {
            Stmt::Invalidate { name, .. } => {
                pending.add(crate::ir::order::invalidate_class(name));
            }
            Stmt::Barrier { name, .. } => pending = cx.after(&name.kind(), pending),
            Stmt::Poll {
                wait: Wait { fail_barrier, .. },
                ..
            }
            | Stmt::Mem {
                op:
                    MemOp::Acquire(crate::ir::Acquire {
                        limit: Some(_),
                        fail_barrier,
                        ..
                    })
                    | MemOp::Poll {
                        wait: Wait { fail_barrier, .. },
                        ..
                    },
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
                pending = t.union(e);
            }
            Stmt::Return { .. } => {
                for b in cx
                    .completion(pending)
                    .iter()
                    .collect::<Vec<_>>()
                    .into_iter()
                    .rev()
                {
                    body.insert(
                        i,
                        Stmt::Barrier {
                            name: BarrierName::Kind(b),
                            origin: Origin::Pass("complete-exits"),
                            covers: Vec::new(),
                        },
                    );
                    i += 1;
                }
                // Nothing after a return runs on this path.
                pending = Pending::default();
            }
            Stmt::Write { .. }
            | Stmt::Read { .. }
            | Stmt::Mem { .. }
            | Stmt::Assign { .. }
            | Stmt::Sys { .. } => {}
        }
        i += 1;
    }
    pending
}

/// A loop body that may run zero or more times: run to a fixpoint (the
/// state only grows, over a handful of classes).
fn looped(cx: &Cx, body: &mut Vec<Stmt>, pending: Pending) -> Pending {
    let mut entry = pending;
    loop {
        let out = block(cx, body, entry);
        let next = entry.union(out);
        if next == entry {
            return entry;
        }
        entry = next;
    }
}
