//! Command queues, rewritten into the statements everything else already
//! understands: a ring slot is a store at a computed offset, the doorbell a
//! register write (ordered after the entries by `require stores before
//! PROD`), a wait for space a bounded loop over consumer reads, a
//! completion wait a poll. Checking, barrier placement, lowering, the
//! interpreter and `verify` then treat queue code like any other, and the
//! rewrite is the only place that knows how SMMUv3, VT-d and AMD count.
//!
//! Each sequence that uses queue `q` takes two arguments ahead of its own,
//! `q_ring` (the ring, `ptr u64`) and `q_log2n` (log2 of its entries),
//! and keeps the producer index in a local from its first line: the caller
//! owns the queue for the call (one producer, as with a lock held), so the
//! index is read from the device once and published by `issue`.

use super::ast::*;
use super::diag::{Diag, Span};

mod build;
mod record;

use build::Cx;
pub use record::{check_records, RecordFieldLayout, RecordLayout, RecordWriteLayout};

/// Byte offsets of a ring's entries between consumer index `from` and
/// producer index `to`: `wrap` indices count entries with a wrap bit above
/// them, else they are byte offsets. None when `to` is not reachable from
/// `from` within one lap.
pub fn ring_slots(from: u64, to: u64, log2n: u64, entry: u64, wrap: bool) -> Option<Vec<u64>> {
    let cap = 1u64.checked_shl(log2n as u32)?;
    let mut out = Vec::new();
    let (mut i, mask, step) = if wrap {
        (from & (2 * cap - 1), 2 * cap - 1, 1)
    } else {
        (from & (cap * entry - 1), cap * entry - 1, entry)
    };
    let to = to & mask;
    while i != to {
        if out.len() as u64 > cap {
            return None;
        }
        out.push(if wrap { (i & (cap - 1)) * entry } else { i });
        i = (i + step) & mask;
    }
    Some(out)
}

/// Rewrite every `enqueue`/`issue`/`wait` of the spec's sequences.
/// `big_endian` answers for a target name (None: not a target), so ring
/// words can be checked against the CPU's byte order.
pub fn lower(spec: &mut Spec, big_endian: &dyn Fn(&str) -> Option<bool>) -> Result<(), Diag> {
    let records = check_records(spec)?;
    // By name: linear in the queues (issue 42).
    let mut first: rustc_hash::FxHashMap<&str, &Queue> = Default::default();
    for q in &spec.queues {
        if let Some(p) = first.get(q.name.name.as_str()) {
            return Err(Diag::new(
                q.name.span,
                format!("queue `{}` declared twice", q.name.name),
            )
            .related(p.name.span, "first declared here"));
        }
        first.insert(&q.name.name, q);
        check_queue(q, &spec.targets, big_endian)?;
    }
    let queues = spec.queues.clone();
    for seq in &mut spec.seqs {
        lower_seq(seq, &queues, &records)?;
    }
    Ok(())
}

/// A queue's entry size and batch, and its byte order against the
/// `targets`'.
fn check_queue(
    q: &Queue,
    targets: &[Ident],
    big_endian: &dyn Fn(&str) -> Option<bool>,
) -> Result<(), Diag> {
    if !q.entry.is_power_of_two() || !(8..=64).contains(&q.entry) {
        return Err(Diag::new(
            q.entry_span,
            "a queue entry is 8, 16, 32 or 64 bytes",
        ));
    }
    if let Some((b, s)) = q.batch {
        if b == 0 || b > u64::from(u32::MAX) {
            return Err(Diag::new(s, "batch must be between 1 and 4294967295"));
        }
    }
    // Ring words are stored in the CPU's byte order.
    for t in targets {
        // Unknown target names are reported where targets are checked.
        let Some(big) = big_endian(&t.name) else {
            continue;
        };
        if big != (q.endian == Endian::Big) {
            return Err(Diag::new(
                q.entry_span,
                format!(
                    "a {}-endian queue on the {}-endian target `{}` needs byte-swapped ring stores, which are not supported yet",
                    if q.endian == Endian::Big { "big" } else { "little" },
                    if big { "big" } else { "little" },
                    t.name
                ),
            )
            .related(t.span, "target"));
        }
    }
    Ok(())
}

/// One sequence: the arguments and opening locals of each queue it
/// uses, and its queue statements rewritten.
fn lower_seq(seq: &mut Seq, queues: &[Queue], records: &[RecordLayout]) -> Result<(), Diag> {
    let mut used: Vec<usize> = Vec::new();
    find_used(&seq.body, queues, &mut used)?;
    if used.is_empty() {
        return Ok(());
    }
    // Reported after the statements' own errors (an unknown field says
    // more than the missing `issue` after it).
    let flow = check_flow(&seq.body);
    let mut injected = Vec::new();
    let mut prologue = Vec::new();
    for &qi in &used {
        let q = &queues[qi];
        let cx = Cx::new(q, q.name.span);
        injected.extend(cx.arguments(&seq.params)?);
        prologue.extend(cx.prologue());
    }
    injected.append(&mut seq.params);
    seq.params = injected;
    let body = std::mem::take(&mut seq.body);
    let mut new = prologue;
    new.extend(rewrite(body, queues, records)?);
    seq.body = new;
    flow
}

/// A queue statement in program order, with the loops around it.
struct Event<'a> {
    kind: QueueOp,
    queue: &'a str,
    span: Span,
    loops: Vec<usize>,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum QueueOp {
    Enqueue,
    Issue,
    Wait,
}

fn events<'a>(body: &'a [Stmt], loops: &mut Vec<usize>, n: &mut usize, out: &mut Vec<Event<'a>>) {
    for s in body {
        match s {
            Stmt::Enqueue { queue, span, .. } => out.push(Event {
                kind: QueueOp::Enqueue,
                queue: &queue.name,
                span: *span,
                loops: loops.clone(),
            }),
            Stmt::Issue { queue, span } => out.push(Event {
                kind: QueueOp::Issue,
                queue: &queue.name,
                span: *span,
                loops: loops.clone(),
            }),
            Stmt::Wait { queue, span, .. } => out.push(Event {
                kind: QueueOp::Wait,
                queue: &queue.name,
                span: *span,
                loops: loops.clone(),
            }),
            Stmt::Each { body, .. }
            | Stmt::Range { body, .. }
            | Stmt::While { body, .. }
            | Stmt::Cover { body, .. } => {
                *n += 1;
                loops.push(*n);
                events(body, loops, n, out);
                loops.pop();
            }
            Stmt::If { then_, else_, .. } => {
                events(then_, loops, n, out);
                events(else_, loops, n, out);
            }
            _ => {}
        }
    }
}

/// Entries must be issued and a wait must have something issued to
/// wait for (issue 42): an `enqueue` from which no `issue` of its queue
/// can follow leaves entries the device never sees (the producer index
/// lives in the call: the next call overwrites them), and a `wait` that
/// no `issue` can precede waits for nothing this call did. "Can follow"
/// is program order, or an earlier statement of a loop around both.
fn check_flow(body: &[Stmt]) -> Result<(), Diag> {
    let mut ev = Vec::new();
    events(body, &mut Vec::new(), &mut 0, &mut ev);
    let shares_loop = |a: &Event, b: &Event| a.loops.iter().any(|l| b.loops.contains(l));
    for (i, e) in ev.iter().enumerate() {
        let issue_at = |j: usize| ev[j].kind == QueueOp::Issue && ev[j].queue == e.queue;
        let later = (i + 1..ev.len()).any(issue_at);
        let earlier = (0..i).any(issue_at);
        let looped = (0..ev.len()).any(|j| issue_at(j) && shares_loop(e, &ev[j]));
        match e.kind {
            QueueOp::Enqueue if !later && !looped => {
                return Err(Diag::new(
                    e.span,
                    format!("entries enqueued on `{}` are never issued", e.queue),
                )
                .label("no `issue` follows on any path")
                .help(format!("add `issue {}` after the last `enqueue`", e.queue)))
            }
            QueueOp::Wait if !earlier && !looped => {
                return Err(Diag::new(
                    e.span,
                    format!("`wait` on `{}` with nothing issued before it", e.queue),
                )
                .label("no `issue` precedes it on any path")
                .help(format!(
                    "`issue {}` what the device must complete before waiting for it",
                    e.queue
                )))
            }
            _ => {}
        }
    }
    Ok(())
}

fn find_queue(queues: &[Queue], name: &Ident) -> Result<usize, Diag> {
    queues
        .iter()
        .position(|q| q.name.name == name.name)
        .ok_or_else(|| {
            Diag::undeclared(name.span, "queue", &name.name)
                .help("declare it at the top level: `queue NAME on DEVICE { ... }`")
        })
}

fn find_used(body: &[Stmt], queues: &[Queue], used: &mut Vec<usize>) -> Result<(), Diag> {
    for s in body {
        match s {
            Stmt::Enqueue { queue, .. } | Stmt::Issue { queue, .. } | Stmt::Wait { queue, .. } => {
                let q = find_queue(queues, queue)?;
                if !used.contains(&q) {
                    used.push(q);
                }
            }
            Stmt::Each { body, .. }
            | Stmt::Range { body, .. }
            | Stmt::While { body, .. }
            | Stmt::Cover { body, .. } => find_used(body, queues, used)?,
            Stmt::If { then_, else_, .. } => {
                find_used(then_, queues, used)?;
                find_used(else_, queues, used)?;
            }
            _ => {}
        }
    }
    Ok(())
}

fn rewrite(body: Vec<Stmt>, queues: &[Queue], records: &[RecordLayout]) -> Result<Vec<Stmt>, Diag> {
    let mut out = Vec::with_capacity(body.len());
    let mut body = body.into_iter().peekable();
    while let Some(s) = body.next() {
        match s {
            Stmt::Enqueue {
                queue,
                record,
                fields,
                span,
            } => {
                let ahead_of_issue = matches!(
                    body.peek(),
                    Some(Stmt::Issue { queue: q, .. }) if q.name == queue.name
                );
                out.extend(rewrite_enqueue(
                    &queue,
                    &record,
                    &fields,
                    span,
                    queues,
                    records,
                    ahead_of_issue,
                )?)
            }
            Stmt::Issue { queue, span } => {
                let q = &queues[find_queue(queues, &queue)?];
                out.extend(Cx::new(q, span).publish());
            }
            Stmt::Wait {
                queue,
                limit,
                fail,
                span,
            } => {
                let q = &queues[find_queue(queues, &queue)?];
                out.push(Cx::new(q, span).wait(limit, fail));
            }
            mut other => {
                rewrite_nested(&mut other, queues, records)?;
                out.push(other);
            }
        }
    }
    Ok(out)
}

/// The blocks inside statement `s`, rewritten.
fn rewrite_nested(s: &mut Stmt, queues: &[Queue], records: &[RecordLayout]) -> Result<(), Diag> {
    match s {
        Stmt::Each { body, .. }
        | Stmt::Range { body, .. }
        | Stmt::While { body, .. }
        | Stmt::Cover { body, .. } => *body = rewrite(std::mem::take(body), queues, records)?,
        Stmt::If { then_, else_, .. } => {
            *then_ = rewrite(std::mem::take(then_), queues, records)?;
            *else_ = rewrite(std::mem::take(else_), queues, records)?;
        }
        _ => {}
    }
    Ok(())
}

/// `enqueue QUEUE RECORD { fields }` (at `span`), the record's size the
/// queue's entry size.
fn rewrite_enqueue(
    queue: &Ident,
    record: &Ident,
    fields: &[(Ident, Expr)],
    span: Span,
    queues: &[Queue],
    records: &[RecordLayout],
    ahead_of_issue: bool,
) -> Result<Vec<Stmt>, Diag> {
    let q = &queues[find_queue(queues, queue)?];
    let r = records
        .iter()
        .find(|r| r.name == record.name)
        .ok_or_else(|| Diag::undeclared(record.span, "record", &record.name))?;
    if r.size != q.entry {
        return Err(Diag::new(
            record.span,
            format!(
                "record `{}` is {} bytes, queue `{}` takes {}-byte entries",
                r.name, r.size, q.name.name, q.entry
            ),
        )
        .related(q.entry_span, "entry size"));
    }
    Cx::new(q, span).enqueue(r, fields, span, ahead_of_issue)
}

/// Without any `queue`, a queue statement names an unknown queue.
pub fn no_queue_statements(spec: &Spec) -> Result<(), Diag> {
    let mut used = Vec::new();
    for s in &spec.seqs {
        find_used(&s.body, &[], &mut used)?;
    }
    Ok(())
}
