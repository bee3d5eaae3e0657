//! The ordering graph: which accesses the hardware needs ordered.
//!
//! Only *required* orderings are edges. Program order among accesses to the
//! same device instance or the same register is an emission rule the passes
//! keep, not an edge; an edge asks for a barrier unless the target's memory
//! model already orders the two classes.

use super::*;
use crate::spec::ast::Scope;
use serde::Serialize;

/// Access classes of the ordering model (DESIGN.md "Ordering model").
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, PartialOrd, Ord)]
pub enum Class {
    DevStore,
    DevLoad,
    NormalStore,
    NormalLoad,
    /// A CPU TLB invalidation broadcast to every CPU (AArch64 `tlbi ...is`,
    /// POWER `tlbie`); RISC-V `sfence.vma` (this hart, ordered and complete
    /// by itself: the riscv64 table orders it implicitly).
    TlbInvalidate,
    /// A CPU TLB invalidation of this CPU only (POWER `tlbiel`): complete
    /// after `ptesync` alone, no `tlbsync` (Power ISA v3.0B Book III 6.10.1).
    /// RISC-V Svinval's `sinval.vma`: complete after `sfence.inval.ir`.
    LocalInvalidate,
    /// An ERAT (effective-to-real cache) invalidation (POWER `slbia`):
    /// complete at the next context-synchronizing instruction.
    EratInvalidate,
    InvalidateCompletion,
    ContextSync,
}

impl Class {
    pub const ALL: [Class; 9] = [
        Class::DevStore,
        Class::DevLoad,
        Class::NormalStore,
        Class::NormalLoad,
        Class::TlbInvalidate,
        Class::LocalInvalidate,
        Class::EratInvalidate,
        Class::InvalidateCompletion,
        Class::ContextSync,
    ];

    /// A CPU invalidation of some kind (what `order ... invalidates`
    /// names).
    pub fn is_invalidation(self) -> bool {
        matches!(
            self,
            Class::TlbInvalidate | Class::LocalInvalidate | Class::EratInvalidate
        )
    }

    /// A TLB invalidation (not the ERAT): page-table stores must reach
    /// the table walk before it.
    pub fn reads_page_tables(self) -> bool {
        matches!(self, Class::TlbInvalidate | Class::LocalInvalidate)
    }
}

/// The class of a CPU invalidation instruction by its IR name: what the
/// target that has the instruction says (a mnemonic belongs to one
/// target), else a broadcast TLB invalidation.
pub fn invalidate_class(name: &str) -> Class {
    let m = name.split_whitespace().next().unwrap_or_default();
    crate::ir::isa::all()
        .iter()
        .find_map(|i| i.invalidate_class(m))
        .unwrap_or(Class::TlbInvalidate)
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Edge {
    pub from: OpId,
    pub to: OpId,
    pub from_class: Class,
    pub to_class: Class,
    /// Both ends on this device (for per-peripheral ordering rules).
    pub dev: Option<DevId>,
    pub scope: Scope,
    /// The `require` that asked for it.
    pub span: Span,
}

/// Edges by index as the printed IR names them: `e3, e5`.
pub fn edge_names(edges: &[usize]) -> String {
    edges
        .iter()
        .map(|e| format!("e{e}"))
        .collect::<Vec<_>>()
        .join(", ")
}

pub fn class_of(s: &Stmt) -> Option<Class> {
    match s {
        Stmt::Write { .. } => Some(Class::DevStore),
        Stmt::Poll { .. } | Stmt::Read { .. } => Some(Class::DevLoad),
        Stmt::Invalidate { name, .. } => Some(invalidate_class(name)),
        _ => None,
    }
}

/// An ordered operation: its id, device register if any, and class.
struct Op {
    id: OpId,
    reg: Option<(DevId, RegId)>,
    class: Class,
    /// The branch arms it sits in: (branch number, arm).
    arms: Vec<(usize, usize)>,
    /// The arms of those branches that no loop encloses: the only arms
    /// that exclude each other. A branch inside a loop runs again on the
    /// next iteration and may take its other arm then, so an access in
    /// one arm can be followed by one in the other (issue 42).
    once_arms: Vec<(usize, usize)>,
    /// The loops around it (numbered in program order).
    loops: Vec<usize>,
    /// The device of each loop around it that is an `each`, None for
    /// other loops.
    loop_devs: Vec<Option<DevId>>,
    /// Runs for every instance of its device whenever the sequence gets
    /// past it: in no branch arm, and every loop around it is an `each`
    /// over its own device (ranges and covers may run zero times).
    unconditional: bool,
}

impl Op {
    /// Never both executed: in different arms of one branch that no loop
    /// runs again.
    fn exclusive(&self, other: &Op) -> bool {
        self.once_arms
            .iter()
            .any(|(b, a)| other.once_arms.iter().any(|(b2, a2)| b == b2 && a != a2))
    }

    /// Can this op, later in the body than `later`, run before it on the
    /// next iteration of a loop around both? Only through a loop they
    /// share. For a per-instance requirement the path must also be able to
    /// stay on one instance: not when every shared loop is an `each` over
    /// `dev` (its next iteration is the next instance).
    fn carried_to(&self, later: &Op, same_instance_of: Option<DevId>) -> bool {
        let shared = self
            .loops
            .iter()
            .zip(&later.loops)
            .take_while(|(a, b)| a == b)
            .count();
        shared > 0
            && !(same_instance_of.is_some()
                && self.loop_devs[..shared]
                    .iter()
                    .all(|d| *d == same_instance_of))
    }

    /// Does the block this op sits in also enclose `later`? Then a barrier
    /// that orders this op before `later` lies in a block enclosing
    /// `later`, after this op on the line, so it also follows everything
    /// earlier on the line: this op closes the backward scan.
    fn encloses(&self, later: &Op) -> bool {
        later.loops.starts_with(&self.loops) && later.arms.starts_with(&self.arms)
    }
}

/// Operations in program order (a loop body once).
fn ops(body: &[Stmt]) -> Vec<Op> {
    struct Cx {
        arms: Vec<(usize, usize)>,
        once_arms: Vec<(usize, usize)>,
        loops: Vec<usize>,
        branches: usize,
        nloops: usize,
        /// The device of each enclosing `each`, None for other loops.
        loop_devs: Vec<Option<DevId>>,
    }
    fn unconditional(cx: &Cx, dev: Option<DevId>) -> bool {
        cx.arms.is_empty() && cx.loop_devs.iter().all(|d| d.is_some() && *d == dev)
    }
    fn go(body: &[Stmt], cx: &mut Cx, out: &mut Vec<Op>) {
        for s in body {
            match s {
                Stmt::Write { access, .. }
                | Stmt::Poll { access, .. }
                | Stmt::Read { access, .. } => out.push(Op {
                    id: access.id,
                    reg: Some((access.dev, access.reg)),
                    class: class_of(s).unwrap_or(Class::DevStore),
                    arms: cx.arms.clone(),
                    once_arms: cx.once_arms.clone(),
                    loops: cx.loops.clone(),
                    loop_devs: cx.loop_devs.clone(),
                    unconditional: unconditional(cx, Some(access.dev)),
                }),
                // Plain stores to normal memory (command entries, page
                // tables): what `require stores before` and `order stores
                // before invalidates` order, besides the caller's stores.
                // Lock words are not: they synchronise CPUs through their
                // own acquire/release order, and no device reads them.
                Stmt::Mem {
                    id,
                    op: MemOp::Store { .. } | MemOp::StoreAt { .. },
                    ..
                } => out.push(Op {
                    id: *id,
                    reg: None,
                    class: Class::NormalStore,
                    arms: cx.arms.clone(),
                    once_arms: cx.once_arms.clone(),
                    loops: cx.loops.clone(),
                    loop_devs: cx.loop_devs.clone(),
                    unconditional: false,
                }),
                Stmt::Invalidate { id, name, .. } => out.push(Op {
                    id: *id,
                    reg: None,
                    class: invalidate_class(name),
                    arms: cx.arms.clone(),
                    once_arms: cx.once_arms.clone(),
                    loops: cx.loops.clone(),
                    loop_devs: cx.loop_devs.clone(),
                    unconditional: false,
                }),
                // A `while` is a loop like a `range`: it may run zero
                // times, and its iterations follow each other.
                Stmt::Each { body, .. }
                | Stmt::Range { body, .. }
                | Stmt::Cover { body, .. }
                | Stmt::While { body, .. } => {
                    cx.loops.push(cx.nloops);
                    cx.nloops += 1;
                    cx.loop_devs.push(match s {
                        Stmt::Each { dev, .. } => Some(*dev),
                        _ => None,
                    });
                    go(body, cx, out);
                    cx.loop_devs.pop();
                    cx.loops.pop();
                }
                Stmt::If { then_, else_, .. } => {
                    let b = cx.branches;
                    cx.branches += 1;
                    let once = cx.loops.is_empty();
                    for (arm, blk) in [then_, else_].into_iter().enumerate() {
                        cx.arms.push((b, arm));
                        if once {
                            cx.once_arms.push((b, arm));
                        }
                        go(blk, cx, out);
                        if once {
                            cx.once_arms.pop();
                        }
                        cx.arms.pop();
                    }
                }
                _ => {}
            }
        }
    }
    let mut out = Vec::new();
    let mut cx = Cx {
        arms: Vec::new(),
        once_arms: Vec::new(),
        loops: Vec::new(),
        branches: 0,
        nloops: 0,
        loop_devs: Vec::new(),
    };
    go(body, &mut cx, &mut out);
    out
}

/// All required edges of a sequence: device `require`s between its
/// accesses, `require stores before REG`, and the sequence's `order`s
/// (which use the pseudo-operations [`OpId::ENTRY`] and [`OpId::EXIT`]).
pub fn required_edges(devices: &[Device], body: &[Stmt], orders: &[Order]) -> Vec<Edge> {
    edges(devices, body, orders, true)
}

/// Every edge the `require`s name, none dropped as implied: quadratic, for
/// checking traces against the requirements themselves rather than
/// against the pruned graph the optimizer works on.
pub fn all_required_edges(devices: &[Device], body: &[Stmt], orders: &[Order]) -> Vec<Edge> {
    edges(devices, body, orders, false)
}

fn edges(devices: &[Device], body: &[Stmt], orders: &[Order], prune: bool) -> Vec<Edge> {
    let ops = ops(body);
    let mut out = EdgeSet::default();
    require_edges(devices, &ops, prune, &mut out);
    store_edges(devices, &ops, orders, prune, &mut out);
    let invalidates: Vec<usize> = (0..ops.len())
        .filter(|&i| ops[i].class.is_invalidation())
        .collect();
    invalidates_order_edges(&ops, &invalidates, orders, prune, &mut out);
    after_invalidates_edges(body, &ops, &invalidates, prune, &mut out);
    return_edges(&ops, orders, &mut out);
    out.edges
}

/// Edges in the order found, each (ends, span) once.
#[derive(Default)]
struct EdgeSet {
    edges: Vec<Edge>,
    seen: rustc_hash::FxHashSet<(OpId, OpId, usize)>,
}

impl EdgeSet {
    fn push(&mut self, e: Edge) {
        if self.seen.insert((e.from, e.to, e.span.offset)) {
            self.edges.push(e);
        }
    }
}

/// Device `require`s: from earlier accesses of each register required
/// before the one an access touches, to that access.
fn require_edges(devices: &[Device], ops: &[Op], prune: bool, out: &mut EdgeSet) {
    // The classes each register is accessed with, to know when a backward
    // scan has closed everything it could still find.
    let mut classes: rustc_hash::FxHashMap<(DevId, RegId), Vec<Class>> = Default::default();
    for o in ops {
        if let Some(r) = o.reg {
            let c = classes.entry(r).or_default();
            if !c.contains(&o.class) {
                c.push(o.class);
            }
        }
    }
    for (j, b) in ops.iter().enumerate() {
        let Some((db, rb)) = b.reg else { continue };
        let wanted: Vec<RegId> = devices[db]
            .requires
            .iter()
            .filter(|r| r.after == rb)
            .map(|r| r.before)
            .collect();
        if wanted.is_empty() {
            continue;
        }
        // Only the latest earlier access of each register (in the same
        // loops and branch arms) needs an edge to `b`: a barrier after it
        // and before `b` is after every earlier one too. An unconditional
        // access (see [`Op::unconditional`]) closes its register and class
        // for everything before it, in any loop: for each instance it runs
        // between the earlier access and `b`, so a barrier that orders it
        // before `b` is also, in program order, between the earlier access
        // and `b`. This keeps the graph linear in the accesses.
        let mut latest = rustc_hash::FxHashSet::default();
        let mut closed: Vec<(RegId, Class)> = Vec::new();
        for a in ops[..j].iter().rev() {
            let Some((da, ra)) = a.reg else { continue };
            if da != db || a.exclusive(b) || !wanted.contains(&ra) {
                continue;
            }
            if prune && closed.contains(&(ra, a.class)) {
                // Every class of every wanted register closed: nothing
                // earlier can add an edge.
                if wanted.iter().all(|w| {
                    classes
                        .get(&(db, *w))
                        .is_none_or(|cs| cs.iter().all(|c| closed.contains(&(*w, *c))))
                }) {
                    break;
                }
                continue;
            }
            if prune && !latest.insert((ra, a.class, a.arms.clone(), a.loops.clone())) {
                continue;
            }
            if a.unconditional {
                closed.push((ra, a.class));
            }
            for r in &devices[da].requires {
                if r.before == ra && r.after == rb {
                    out.push(require_edge(a, b, da, r));
                }
            }
        }
        // Loop-carried: an access later in a loop around `b` runs before
        // `b`'s next iteration. Only the latest of each register, class
        // and block matters (a barrier after it follows the others of its
        // block).
        let Some(&outer) = b.loops.first() else {
            continue;
        };
        let mut latest = rustc_hash::FxHashSet::default();
        let n = ops[j + 1..]
            .iter()
            .take_while(|a| a.loops.first() == Some(&outer))
            .count();
        for a in ops[j + 1..j + 1 + n].iter().rev() {
            let Some((da, ra)) = a.reg else { continue };
            if da != db || !wanted.contains(&ra) {
                continue;
            }
            if prune && !latest.insert((ra, a.class, a.arms.clone(), a.loops.clone())) {
                continue;
            }
            for r in &devices[da].requires {
                let per_instance = (r.scope == Scope::SameInstance).then_some(da);
                if r.before == ra && r.after == rb && a.carried_to(b, per_instance) {
                    out.push(require_edge(a, b, da, r));
                }
            }
        }
    }
}

fn require_edge(a: &Op, b: &Op, dev: DevId, r: &Require) -> Edge {
    Edge {
        from: a.id,
        to: b.id,
        from_class: a.class,
        to_class: b.class,
        dev: Some(dev),
        scope: r.scope,
        span: r.span,
    }
}

/// `require stores before REG` and `order stores before invalidates`:
/// the caller's stores (entry) and the sequence's own earlier ones.
fn store_edges(devices: &[Device], ops: &[Op], orders: &[Order], prune: bool, out: &mut EdgeSet) {
    let stores: Vec<usize> = (0..ops.len())
        .filter(|&i| ops[i].class == Class::NormalStore)
        .collect();
    let stores_first = orders
        .iter()
        .find(|(b, a, _)| b == "stores" && a == "invalidates")
        .map(|o| o.2);
    for (j, b) in ops.iter().enumerate() {
        let mut spans: Vec<Span> = Vec::new();
        // What the device must see first is what a write to REG starts
        // (a doorbell, a launch); a read of REG starts nothing, so a
        // producer index read before the entries needs no barrier.
        if let (Some((d, r)), Class::DevStore) = (b.reg, b.class) {
            spans.extend(
                devices[d]
                    .after_stores
                    .iter()
                    .filter(|(reg, _)| *reg == r)
                    .map(|(_, s)| *s),
            );
        }
        if b.class.reads_page_tables() {
            spans.extend(stores_first);
        }
        for span in spans {
            let own = stores_before(ops, &stores, j, prune);
            for from in std::iter::once(OpId::ENTRY).chain(own.iter().map(|&a| ops[a].id)) {
                out.push(Edge {
                    from,
                    to: b.id,
                    from_class: Class::NormalStore,
                    to_class: b.class,
                    dev: None,
                    scope: Scope::AnyInstance,
                    span,
                });
            }
        }
    }
}

/// `order invalidates before invalidates`: each CPU invalidation is
/// complete before the next is issued (errata that repeat a TLBI:
/// `tlbi; dsb ish; tlbi`), the previous iteration's included.
/// `invalidates`: the invalidations' indices into `ops`.
fn invalidates_order_edges(
    ops: &[Op],
    invalidates: &[usize],
    orders: &[Order],
    prune: bool,
    out: &mut EdgeSet,
) {
    for (before, after, span) in orders {
        if (before.as_str(), after.as_str()) != ("invalidates", "invalidates") {
            continue;
        }
        for &j in invalidates {
            for a in stores_before(ops, invalidates, j, prune) {
                out.push(Edge {
                    from: ops[a].id,
                    to: ops[j].id,
                    from_class: ops[a].class,
                    to_class: Class::InvalidateCompletion,
                    dev: None,
                    scope: Scope::AnyInstance,
                    span: *span,
                });
            }
        }
    }
}

/// `INVALIDATION after invalidates`: that one instruction is issued
/// only once every earlier invalidation (the previous iteration's
/// included) is ordered before it; not completed (POWER: `ptesync`, not
/// `tlbsync`; the POWER9 tlbie errata fixups), and nothing between the
/// earlier ones. The edge's classes are the two invalidations'.
fn after_invalidates_edges(
    body: &[Stmt],
    ops: &[Op],
    invalidates: &[usize],
    prune: bool,
    out: &mut EdgeSet,
) {
    let mut after_spans: rustc_hash::FxHashMap<OpId, Span> = Default::default();
    super::walk(body, &mut |s| {
        if let Stmt::Invalidate {
            id,
            after: Some(span),
            ..
        } = s
        {
            after_spans.insert(*id, *span);
        }
    });
    if after_spans.is_empty() {
        return;
    }
    for &j in invalidates {
        let Some(&span) = after_spans.get(&ops[j].id) else {
            continue;
        };
        for a in stores_before(ops, invalidates, j, prune) {
            out.push(Edge {
                from: ops[a].id,
                to: ops[j].id,
                from_class: ops[a].class,
                to_class: ops[j].class,
                dev: None,
                scope: Scope::AnyInstance,
                span,
            });
        }
    }
}

/// `order invalidates before return`: every invalidation complete before
/// the sequence returns.
fn return_edges(ops: &[Op], orders: &[Order], out: &mut EdgeSet) {
    for (before, after, span) in orders {
        if (before.as_str(), after.as_str()) != ("invalidates", "return") {
            continue;
        }
        for op in ops.iter().filter(|o| o.class.is_invalidation()) {
            out.push(Edge {
                from: op.id,
                to: OpId::EXIT,
                from_class: op.class,
                to_class: Class::InvalidateCompletion,
                dev: None,
                scope: Scope::AnyInstance,
                span: *span,
            });
        }
    }
}

/// A block as its enclosing branch arms and loops.
type Block<'a> = (&'a [(usize, usize)], &'a [usize]);

/// The sequence's own stores (indices into `ops`; or any other ops of
/// one kind, as the invalidations) that may run before op `j` with no
/// other op of theirs between: earlier in program order, or
/// later in a loop around `j` (the previous iteration's). Pruned, only the
/// latest store of each block, back to the first whose block encloses `j`
/// (see [`Op::encloses`]); unpruned, all of them.
fn stores_before(ops: &[Op], stores: &[usize], j: usize, prune: bool) -> Vec<usize> {
    let b = &ops[j];
    let mut out = Vec::new();
    // Blocks (arms, loops) already given their latest store.
    let mut seen: Vec<Block> = Vec::new();
    let mut keep = |a: usize, seen: &mut Vec<_>| {
        let o = &ops[a];
        if o.exclusive(b) {
            return;
        }
        if prune {
            let ctx = (o.arms.as_slice(), o.loops.as_slice());
            if seen.contains(&ctx) {
                return;
            }
            seen.push(ctx);
        }
        out.push(a);
    };
    // Loop-carried: stores after `j` inside a loop that also runs `j`,
    // and `j` itself when it is one of them (an invalidation in a loop
    // follows its own previous iteration: issue 42).
    if let Some(&outer) = b.loops.first() {
        let after = stores.partition_point(|&a| a < j);
        let n = stores[after..]
            .iter()
            .take_while(|&&a| ops[a].loops.first() == Some(&outer))
            .count();
        for &a in stores[after..after + n].iter().rev() {
            keep(a, &mut seen);
        }
        seen.clear();
    }
    let before = stores.partition_point(|&a| a < j);
    for &a in stores[..before].iter().rev() {
        keep(a, &mut seen);
        if prune && ops[a].encloses(b) {
            break;
        }
    }
    out
}
