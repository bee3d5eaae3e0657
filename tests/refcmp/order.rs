//! Ordering requirements per call, the invalidations written `after
//! invalidates`, and the barriers the kernel executes that we do not.

use super::*;

pub(super) fn table_kind(prog: &Program, t: Target, name: &str) -> Option<&'static BarrierKind> {
    barriers::find(t.table(prog.machine), name)
}

/// What the spec asks of one call besides its devices' `require`s: its
/// `order` lines, the locations of its `acquire`s and `release`s (as (Mem
/// argument ordinal, byte offset)), and the `barrier` statements it ends
/// with.
#[derive(Clone, Debug, Default)]
pub struct CallReq {
    pub orders: Vec<(String, String)>,
    pub acquire: Vec<(usize, u64)>,
    pub release: Vec<(usize, u64)>,
    pub trailing: Vec<String>,
}

/// The requirements of each call of a scenario.
pub fn call_reqs(prog: &Program, sc: &Scenario) -> Vec<CallReq> {
    use shootdown::ir::{MemOp, Origin};
    sc.calls
        .iter()
        .map(|call| {
            let (_, seq) = seq_of(prog, call.seq);
            let ordinal = |param: usize| -> usize {
                let pname = seq.params[param].as_str();
                let arg = call
                    .bind
                    .iter()
                    .find(|(n, _)| *n == pname)
                    .and_then(|(_, v)| match v {
                        Val::A(a) => Some(*a),
                        Val::K(_) => None,
                    })
                    .unwrap_or(pname);
                sc.args
                    .iter()
                    .filter(|a| matches!(a, Arg::Mem(_)))
                    .position(|a| matches!(a, Arg::Mem(n) if *n == arg))
                    .unwrap_or_else(|| panic!("{}: `{pname}` is no Mem argument", sc.name))
            };
            let mut r = CallReq {
                orders: seq
                    .orders
                    .iter()
                    .map(|(a, b, _)| (a.clone(), b.clone()))
                    .collect(),
                ..CallReq::default()
            };
            shootdown::ir::walk(&seq.body, &mut |st| {
                if let Stmt::Mem { op, .. } = st {
                    match op {
                        MemOp::Acquire(a) => r.acquire.push((ordinal(a.mem.ptr), a.mem.offset)),
                        MemOp::Release { mem, .. } => {
                            r.release.push((ordinal(mem.ptr), mem.offset))
                        }
                        _ => {}
                    }
                }
            });
            for st in seq.body.iter().rev() {
                match st {
                    Stmt::Barrier {
                        name,
                        origin: Origin::Spec(_),
                        ..
                    } => r.trailing.insert(0, name.to_string()),
                    _ => break,
                }
            }
            r
        })
        .collect()
}

/// The requirements of a kernel function standing for several calls.
pub fn merged(reqs: &[CallReq]) -> CallReq {
    let mut m = CallReq::default();
    for r in reqs {
        m.orders.extend(r.orders.iter().cloned());
        m.acquire.extend(r.acquire.iter().copied());
        m.release.extend(r.release.iter().copied());
    }
    m.trailing = reqs.last().map(|r| r.trailing.clone()).unwrap_or_default();
    m
}

pub(super) fn is_data(e: &Ev) -> bool {
    matches!(e, Ev::Access { .. } | Ev::NAccess { .. } | Ev::Inval { .. })
}

pub(super) fn mnemonic_at(insns: &BTreeMap<u64, String>, pc: u64) -> &str {
    insns
        .get(&pc)
        .and_then(|t| t.split_whitespace().next())
        .unwrap_or("")
}

/// The spec's requirements, checked on one side's executed events:
/// - `require A before B` (per instance or across instances) and
///   `require stores before R` (the caller's stores, i.e. function entry,
///   and the function's own normal-memory stores), `order stores before
///   invalidates`, `order invalidates before invalidates`, `order
///   invalidates before return` (on every return):
///   between the latest earlier event of each required kind and the later
///   one, an executed barrier whose table entry orders their classes,
///   unless the target orders them without one;
/// - `acquire`: after the store that takes the lock, before the next
///   access or the return, an acquire barrier (POWER isync, lwsync or
///   sync; AArch64 a load-acquire exclusive or a dmb that orders loads;
///   x86-64 the locked instruction itself);
/// - `release`: between the last access since the lock was taken (or the
///   caller's, from entry) and the releasing store, a release barrier
///   (POWER lwsync or sync, sync when a device was accessed, eieio when
///   only stores, and loads each followed by a store, precede it within
///   the section; AArch64 a store-release or a dmb that orders loads and
///   stores before stores; x86-64 none);
/// - barrier statements that end a sequence: after its last access, each
///   executed, or one that orders everything it does.
///
/// `reqs` has one entry per call (a generated function starts at each
/// `Entry`).
/// The pcs of the generated invalidations the spec writes `... after
/// invalidates`: each instruction belongs to the nearest `/* LINE: ... */`
/// statement comment above it in the `.S` (addr2line gives each pc's `.S`
/// line), and LINE is the spec line of such an invalidation. Read from the
/// spec's text and the executed code, not from the ordering graph.
pub fn after_invalidates_pcs(prog: &Program, exe: &Exe, asm: &str) -> BTreeSet<u64> {
    let mut spec_lines = BTreeSet::new();
    for seq in &prog.seqs {
        shootdown::ir::walk(&seq.body, &mut |s| {
            if let Stmt::Invalidate {
                after: Some(_),
                span,
                ..
            } = s
            {
                spec_lines.insert(prog.line_of(*span));
            }
        });
    }
    if spec_lines.is_empty() {
        return BTreeSet::new();
    }
    let text: Vec<&str> = asm.lines().collect();
    let stmt_line = |l: usize| {
        text[..l.saturating_sub(1).min(text.len())]
            .iter()
            .rev()
            .find_map(|t| {
                let (n, _) = t.trim().strip_prefix("/* ")?.split_once(':')?;
                n.parse::<usize>().ok()
            })
    };
    gen_lines(exe)
        .into_iter()
        .filter(|(_, l)| stmt_line(*l).is_some_and(|n| spec_lines.contains(&n)))
        .map(|(pc, _)| pc)
        .collect()
}

/// What an event is, without its values: `store cb.tlbiva`.
pub(super) fn anchor_kind(prog: &Program, e: &Ev) -> String {
    match e {
        Ev::Access {
            store,
            dev,
            off,
            width,
            ..
        } => {
            let d = &prog.devices[*dev];
            let r = d
                .regs
                .iter()
                .find(|r| r.offset == *off && r.bytes() == *width)
                .map_or("?", |r| r.name.as_str());
            format!("{} {}.{r}", if *store { "store" } else { "load" }, d.name)
        }
        Ev::Inval { op, .. } => op.clone(),
        Ev::NAccess { ptr, off, .. } => format!("normal store *(ptr{ptr} + {off:#x})"),
        Ev::Entry => "entry".into(),
        Ev::Ret => "return".into(),
        _ => String::new(),
    }
}

/// Anchors (device accesses and invalidates) with their identity across
/// both sides: kind, place, value and occurrence; `None` for the call's
/// start and end.
pub(super) fn anchors(prog: &Program, s: &Side) -> Vec<(usize, String)> {
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    let mut out = Vec::new();
    for (i, e) in s.events.iter().enumerate() {
        let id = match e {
            Ev::Access {
                store,
                dev,
                inst,
                off,
                width,
                bytes,
            } => {
                let (p, v) = describe_access(prog, *dev, *inst, *off, *width, bytes);
                format!("{store} {p} {v}")
            }
            Ev::Inval { op, ops } => format!("{op} {ops:x?}"),
            Ev::NAccess {
                store: true,
                ptr,
                off,
                width,
                bytes,
            } => format!("nstore {ptr} {off:#x} {width} {}", hex(bytes)),
            _ => continue,
        };
        let n = seen.entry(id.clone()).or_default();
        *n += 1;
        out.push((i, format!("{id} #{n}")));
    }
    out
}

/// Where the kernel code executes a barrier and the generated code, between
/// the same two events, executes none that is at least as strong (orders
/// every class pair the kernel's orders, at no lower cost in the table;
/// a barrier our table does not know counts as stronger than anything).
/// One line per kind of place.
pub fn weaker_than_kernel(prog: &Program, t: Target, gen: &Side, refr: &Side) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let ga = anchors(prog, gen);
    let ra = anchors(prog, refr);
    let gpos: BTreeMap<&str, usize> = ga.iter().map(|(i, id)| (id.as_str(), *i)).collect();
    let strong_enough = |g: &str, r: &str| -> bool {
        if g == r {
            return true;
        }
        match (table_kind(prog, t, g), table_kind(prog, t, r)) {
            (Some(gk), Some(rk)) => {
                rk.orders.iter().all(|(a, b)| gk.covers(*a, *b)) && gk.cost >= rk.cost
            }
            _ => false,
        }
    };
    for (i, e) in refr.events.iter().enumerate() {
        let Ev::Barrier(b) = e else { continue };
        // the anchors around it on the kernel's side
        let before = ra.iter().rev().find(|(p, _)| *p < i);
        let after = ra.iter().find(|(p, _)| *p > i);
        let (glo, ghi) = (
            match before {
                Some((_, id)) => gpos.get(id.as_str()).copied(),
                None => Some(0),
            },
            match after {
                Some((_, id)) => gpos.get(id.as_str()).copied(),
                None => Some(gen.events.len()),
            },
        );
        let (Some(glo), Some(ghi)) = (glo, ghi) else {
            continue;
        };
        let gb: Vec<&str> = if glo < ghi {
            gen.events[glo..ghi]
                .iter()
                .filter_map(|e| match e {
                    Ev::Barrier(n) => Some(n.as_str()),
                    _ => None,
                })
                .collect()
        } else {
            Vec::new()
        };
        if gb.iter().any(|g| strong_enough(g, b)) {
            continue;
        }
        let a = before.map_or("entry".to_string(), |(p, _)| {
            anchor_kind(prog, &refr.events[*p])
        });
        let z = after.map_or("return".to_string(), |(p, _)| {
            anchor_kind(prog, &refr.events[*p])
        });
        // (Where the generated code makes the two accesses in the other
        // order, nothing is between them either.)
        let g = if gb.is_empty() {
            "none".to_string()
        } else {
            let mut v: Vec<&str> = gb.clone();
            v.dedup();
            v.join(", ")
        };
        out.insert(format!("kernel `{b}` between {a} and {z}, generated {g}"));
    }
    out
}

/// The number of barriers each side executed.
pub fn barrier_count(s: &Side) -> usize {
    s.events
        .iter()
        .filter(|e| matches!(e, Ev::Barrier(_)))
        .count()
}
