//! Checks of an emulator trace against the spec: same effects as the IR
//! interpreter, and every required ordering crossed by a barrier that
//! orders its classes on the target.

use super::interp::{Access, Outcome};
use super::trace::{Kind, Trace};
use super::Report;
use crate::ir::order::Edge;
use crate::ir::{OpId, Program, Seq};
use crate::isa::{barriers, Target};
use crate::spec::ast::Scope;
use std::collections::BTreeMap;

type Key = (usize, u64);

/// Per device instance, the accesses in order: (load?, reg, value).
fn per_instance_expected(o: &Outcome) -> BTreeMap<Key, Vec<(bool, usize, u64)>> {
    let mut m: BTreeMap<Key, Vec<_>> = BTreeMap::new();
    for (_, a) in &o.accesses {
        match a {
            Access::Store {
                dev,
                inst,
                reg,
                value,
            }
            | Access::Load {
                dev,
                inst,
                reg,
                value,
            } => m.entry((*dev, *inst)).or_default().push((
                matches!(a, Access::Load { .. }),
                *reg,
                *value,
            )),
            Access::Invalidate { .. } | Access::Barrier { .. } => {}
        }
    }
    m
}

fn per_instance_traced(t: &Trace) -> BTreeMap<Key, Vec<(bool, usize, u64)>> {
    let mut m: BTreeMap<Key, Vec<_>> = BTreeMap::new();
    for e in &t.events {
        if let (Some(d), Some(i), Some(r), Some(v)) = (e.dev_id, e.instance, e.reg_id, e.raw) {
            m.entry((d, i))
                .or_default()
                .push((e.kind == Kind::Load, r, v));
        }
    }
    m
}

pub fn same_effects(what: &str, expect: &Outcome, trace: &Trace, report: &mut Report) {
    for (p, bytes) in &trace.memory {
        let want = expect.memory.get(p).map(|m| &m[..bytes.len().min(m.len())]);
        if want != Some(bytes.as_slice()) {
            report.failures.push(format!(
                "{what}: memory behind parameter {p} ends as {bytes:02x?}, the spec says {want:02x?}"
            ));
        }
    }
    if expect.ret != trace.ret {
        report.failures.push(format!(
            "{what}: returned {} but the spec returns {}",
            trace.ret, expect.ret
        ));
    }
    let (e, t) = (per_instance_expected(expect), per_instance_traced(trace));
    if e != t {
        let keys: Vec<&Key> = e.keys().chain(t.keys()).collect();
        for k in keys {
            let (ev, tv) = (e.get(k), t.get(k));
            if ev != tv {
                report.failures.push(format!(
                    "{what}: device {} instance {}: spec accesses {:x?}, machine code accesses {:x?}",
                    k.0,
                    k.1,
                    ev.map(Vec::as_slice).unwrap_or(&[]),
                    tv.map(Vec::as_slice).unwrap_or(&[])
                ));
                break;
            }
        }
    }
    let inv_e: Vec<&Vec<u64>> = expect
        .accesses
        .iter()
        .filter_map(|(_, a)| match a {
            Access::Invalidate { operands, .. } => Some(operands),
            _ => None,
        })
        .collect();
    let inv_t: Vec<&Vec<u64>> = trace
        .events
        .iter()
        .filter(|e| e.kind == Kind::Invalidate)
        .map(|e| &e.operands)
        .collect();
    if inv_e != inv_t {
        report.failures.push(format!(
            "{what}: spec invalidates with operands {inv_e:x?}, machine code with {inv_t:x?}"
        ));
    }
}

/// Walk the trace keeping, per edge, the earlier-side events not yet
/// followed by a barrier that orders the edge's classes. A later-side
/// event that meets such a pending event (of the same instance where the
/// edge is per instance) is an ordering violation.
pub fn edges_crossed(
    what: &str,
    prog: &Program,
    seq: &Seq,
    target: Target,
    trace: &Trace,
    report: &mut Report,
) {
    let table = target.table(prog.machine);
    // Every edge the requirements name, not the pruned graph placement
    // worked from: the pruning itself is checked here.
    let all = crate::ir::order::all_required_edges(&prog.devices, &seq.body, &seq.orders);
    let edges: Vec<&Edge> = all
        .iter()
        .filter(|e| !crate::passes::barriers::ordered_by_target(prog, e, target))
        .collect();
    let mut pending: Vec<Vec<(Option<Key>, Option<usize>)>> = edges
        .iter()
        .map(|e| {
            if e.from == OpId::ENTRY {
                vec![(None, None)]
            } else {
                Vec::new()
            }
        })
        .collect();
    // Consecutive barrier instructions: a composite barrier (POWER `eieio;
    // tlbsync; ptesync`) orders only once all its parts have run. A
    // barrier event of the IR interpreter is a whole kind already.
    let mut run: Vec<&str> = Vec::new();
    for (pos, ev) in trace.events.iter().enumerate() {
        if ev.kind == Kind::Barrier {
            let name = ev.insn.trim();
            let mut kinds: Vec<&barriers::BarrierKind> =
                barriers::find(table, name).into_iter().collect();
            run.push(name);
            kinds.extend(barriers::ending_run(table, &run));
            for k in kinds {
                for (i, e) in edges.iter().enumerate() {
                    if k.covers(e.from_class, e.to_class) {
                        pending[i].clear();
                    }
                }
            }
            continue;
        }
        run.clear();
        let key = ev.dev_id.zip(ev.instance);
        for (i, e) in edges.iter().enumerate() {
            if Some(e.to) == ev.op {
                let hit = pending[i].iter().find(|(p, _)| match (e.scope, p, key) {
                    (_, None, _) => true,
                    (Scope::AnyInstance, _, _) => true,
                    (Scope::SameInstance, Some(a), Some(b)) => *a == b,
                    (Scope::SameInstance, Some(_), None) => true,
                });
                if let Some((_, earlier)) = hit {
                    let describe =
                        |ev: &super::trace::Event| match (&ev.device, ev.instance, &ev.reg) {
                            (Some(d), Some(n), Some(r)) => {
                                format!("{:?} of {d}[{n}].{r} (`{}`)", ev.kind, ev.insn)
                            }
                            _ => format!("`{}`", ev.insn),
                        };
                    let first = match earlier {
                        Some(p) => format!(
                            "event {p}, the {}",
                            describe(&trace.events[*p]).to_lowercase()
                        ),
                        None => "the caller's earlier stores".to_string(),
                    };
                    report.failures.push(format!(
                        "{what}: event {pos}, the {}, is not ordered after {first}: no barrier ordering {:?} -> {:?} between them (required by line {})",
                        describe(ev).to_lowercase(),
                        e.from_class,
                        e.to_class,
                        prog.line_of(e.span)
                    ));
                    return;
                }
            }
            if Some(e.from) == ev.op {
                pending[i].push((key, Some(pos)));
            }
        }
    }
    for (i, e) in edges.iter().enumerate() {
        // Every return, error returns included (a poll that gave up).
        if e.to == OpId::EXIT && !pending[i].is_empty() {
            report.failures.push(format!(
                "{what}: returns with an invalidation not completed (no barrier ordering {:?} -> {:?}, line {})",
                e.from_class,
                e.to_class,
                prog.line_of(e.span)
            ));
            return;
        }
    }
}
