//! Required orderings the generated code's executed barriers do not
//! provide.

use super::*;

/// `after`: the pcs of invalidations written `... after invalidates`
/// ([`after_invalidates_pcs`]; empty for the kernel's side).
pub fn order_violations(
    prog: &Program,
    t: Target,
    s: &Side,
    reqs: &[CallReq],
    insns: &BTreeMap<u64, String>,
    after: &BTreeSet<u64>,
) -> Vec<String> {
    let power = matches!(t, Target::Power64 | Target::Power64le);
    let mut out = Vec::new();
    let mut call: usize = 0;
    let mut started = false;
    let mut entry = 0;
    // (dev, inst, reg, class) -> latest position
    let mut latest: BTreeMap<(usize, u64, usize, Class), usize> = BTreeMap::new();
    let mut latest_store: Option<usize> = None;
    // The latest invalidation of each class (`tlbie`, `tlbiel`, `slbia`
    // complete differently).
    let mut latest_inval: BTreeMap<Class, usize> = BTreeMap::new();
    let mut taken: BTreeMap<(usize, u64), usize> = BTreeMap::new();
    let mut pending_acquire: Option<usize> = None;
    let barriers_in = |a: usize, b: usize| -> Vec<&str> {
        s.events[a + 1..b]
            .iter()
            .filter_map(|e| match e {
                Ev::Barrier(n) => Some(n.as_str()),
                _ => None,
            })
            .collect()
    };
    // A composite barrier (POWER `eieio; tlbsync; ptesync`) counts when its
    // parts ran in order with nothing else between them.
    // The target's own order of invalidations (RISC-V `sfence.vma` orders
    // the stores before it and is complete when it retires); no other
    // target orders an invalidation pair without a barrier.
    let implicit = |from: Class, to: Class| {
        (from.is_invalidation() || to.is_invalidation() || to == Class::InvalidateCompletion)
            && t.orders_implicitly(from, to, false)
    };
    let covered = |a: usize, b: usize, from: Class, to: Class| {
        if implicit(from, to) {
            return true;
        }
        let mut run: Vec<&str> = Vec::new();
        s.events[a + 1..b].iter().any(|e| match e {
            Ev::Barrier(n) => {
                run.push(n.as_str());
                table_kind(prog, t, n).is_some_and(|k| k.covers(from, to))
                    || barriers::ending_run(t.table(prog.machine), &run).any(|k| k.covers(from, to))
            }
            _ => {
                run.clear();
                false
            }
        })
    };
    let req = |call: usize| reqs.get(call).or(reqs.last()).cloned().unwrap_or_default();
    let has =
        |call: usize, a: &str, b: &str| req(call).orders.iter().any(|(x, y)| x == a && y == b);
    let name = |e: &Ev| match e {
        Ev::Access {
            store,
            dev,
            inst,
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
            format!(
                "{} {}[{inst}].{r}",
                if *store { "store" } else { "load" },
                d.name
            )
        }
        Ev::NAccess {
            store, ptr, off, ..
        } => format!(
            "{} of pointer argument {ptr} +{off:#x}",
            if *store {
                "normal store"
            } else {
                "normal load"
            }
        ),
        Ev::Inval { op, .. } => op.clone(),
        Ev::Entry => "entry (the caller's accesses)".into(),
        Ev::Ret => "return".into(),
        Ev::Barrier(b) => b.clone(),
    };
    let acquire_ok = |a: usize, b: usize| -> bool {
        let bs = barriers_in(a, b);
        match t {
            Target::X86_64 => true,
            _ if power => bs.iter().any(|n| ["isync", "lwsync", "sync"].contains(n)),
            _ => {
                // the exclusive load of the lock, just before its store
                let loaded_acquire = s.events[..a].iter().zip(&s.pcs).rev().find_map(|(e, pc)| {
                    matches!(e, Ev::NAccess { store: false, .. }).then(|| {
                        let m = mnemonic_at(insns, *pc);
                        m.starts_with("ldax") || m.starts_with("ldar")
                    })
                });
                loaded_acquire == Some(true)
                    || bs.iter().any(|n| {
                        table_kind(prog, t, n).is_some_and(|k| {
                            k.covers(Class::NormalLoad, Class::NormalLoad)
                                && k.covers(Class::NormalLoad, Class::NormalStore)
                        })
                    })
            }
        }
    };
    for (pos, e) in s.events.iter().enumerate() {
        if is_data(e) || *e == Ev::Ret {
            if let Some(a) = pending_acquire.take() {
                let intrinsic =
                    t == Target::X86_64 || (t == Target::Aarch64 && acquire_ok(a, a + 1));
                if !intrinsic && !acquire_ok(a, pos) {
                    out.push(format!(
                        "event {pos} ({}) after taking the lock (event {a}): no acquire barrier",
                        name(e)
                    ));
                }
            }
        }
        match e {
            Ev::Entry => {
                if started {
                    call += 1;
                }
                started = true;
                entry = pos;
                latest_store = Some(pos);
                latest_inval.clear();
                taken.clear();
            }
            Ev::NAccess {
                store: true,
                ptr,
                off,
                ..
            } => {
                let loc = (*ptr, *off);
                let r = req(call);
                if r.acquire.contains(&loc) && !taken.contains_key(&loc) {
                    taken.insert(loc, pos);
                    pending_acquire = Some(pos);
                } else if r.release.contains(&loc) {
                    let start = taken.get(&loc).copied().unwrap_or(entry);
                    let from_entry = start == entry && !taken.contains_key(&loc);
                    let last = (start + 1..pos)
                        .rev()
                        .find(|&i| is_data(&s.events[i]))
                        .unwrap_or(start);
                    let section = &s.events[start + 1..pos];
                    let device = section.iter().any(|e| matches!(e, Ev::Access { .. }));
                    let loads_fed = section.iter().enumerate().all(|(i, e)| {
                        !matches!(e, Ev::NAccess { store: false, .. })
                            || section[i + 1..]
                                .iter()
                                .any(|x| matches!(x, Ev::NAccess { store: true, .. }))
                    });
                    let bs = barriers_in(last, pos);
                    let ok = match t {
                        Target::X86_64 => true,
                        _ if power => bs.iter().any(|n| {
                            *n == "sync"
                                || (*n == "lwsync" && !device)
                                || (*n == "eieio" && !device && !from_entry && loads_fed)
                        }),
                        _ => {
                            let m = mnemonic_at(insns, s.pcs[pos]);
                            m.starts_with("stlr")
                                || m.starts_with("stlxr")
                                || bs.iter().any(|n| {
                                    table_kind(prog, t, n).is_some_and(|k| {
                                        k.covers(Class::NormalLoad, Class::NormalStore)
                                            && k.covers(Class::NormalStore, Class::NormalStore)
                                            && (!device
                                                || k.covers(Class::DevStore, Class::NormalStore))
                                    })
                                })
                        }
                    };
                    if !ok {
                        out.push(format!(
                            "event {pos} ({}) releases the lock after {} (event {last}) with no release barrier",
                            name(e),
                            name(&s.events[last])
                        ));
                    }
                }
                latest_store = Some(pos);
            }
            Ev::NAccess { .. } | Ev::Barrier(_) => {}
            Ev::Access {
                store,
                dev,
                inst,
                off,
                width,
                ..
            } => {
                let d = &prog.devices[*dev];
                let Some(r) = d
                    .regs
                    .iter()
                    .position(|r| r.offset == *off && r.bytes() == *width)
                else {
                    continue;
                };
                let cb = if *store {
                    Class::DevStore
                } else {
                    Class::DevLoad
                };
                for q in d.requires.iter().filter(|q| q.after == r) {
                    for ca in [Class::DevStore, Class::DevLoad] {
                        let a = latest
                            .iter()
                            .filter(|((dv, i, rg, c), _)| {
                                *dv == *dev
                                    && *rg == q.before
                                    && *c == ca
                                    && (q.scope == Scope::AnyInstance || *i == *inst)
                            })
                            .map(|(_, p)| *p)
                            .max();
                        let Some(a) = a else { continue };
                        let same_strong = d.mapping == Mapping::Strong
                            && (q.scope == Scope::SameInstance || d.instances == Instances::Single);
                        if !t.orders_implicitly(ca, cb, same_strong) && !covered(a, pos, ca, cb) {
                            out.push(format!(
                                "event {pos} ({}) after event {a} ({}): no barrier orders {ca:?} -> {cb:?}",
                                name(e),
                                name(&s.events[a])
                            ));
                        }
                    }
                }
                // `require stores before REG` orders them before writes
                // of REG (what starts the device's work), not its reads.
                if cb == Class::DevStore && d.after_stores.iter().any(|(reg, _)| *reg == r) {
                    if let Some(a) = latest_store {
                        if !t.orders_implicitly(Class::NormalStore, cb, false)
                            && !covered(a, pos, Class::NormalStore, cb)
                        {
                            out.push(format!(
                                "event {pos} ({}) after {} (event {a}): no barrier orders NormalStore -> {cb:?}",
                                name(e),
                                name(&s.events[a])
                            ));
                        }
                    }
                }
                latest.insert((*dev, *inst, r, cb), pos);
            }
            Ev::Inval { op, .. } => {
                let class = shootdown::ir::order::invalidate_class(op);
                if has(call, "stores", "invalidates") && class.reads_page_tables() {
                    if let Some(a) = latest_store {
                        if !covered(a, pos, Class::NormalStore, class) {
                            out.push(format!(
                                "event {pos} ({}) after {} (event {a}): no barrier orders NormalStore -> {class:?}",
                                name(e),
                                name(&s.events[a])
                            ));
                        }
                    }
                }
                if after.contains(&s.pcs[pos]) {
                    for (&c, &a) in &latest_inval {
                        if !covered(a, pos, c, class) {
                            out.push(format!(
                                "event {pos} ({}, written `after invalidates`) after {} (event {a}): no barrier orders {c:?} -> {class:?}",
                                name(e),
                                name(&s.events[a])
                            ));
                        }
                    }
                }
                if has(call, "invalidates", "invalidates") {
                    for (&c, &a) in &latest_inval {
                        if !covered(a, pos, c, Class::InvalidateCompletion) {
                            out.push(format!(
                                "event {pos} ({}) after {} (event {a}): the earlier invalidation is not complete ({c:?} -> InvalidateCompletion)",
                                name(e),
                                name(&s.events[a])
                            ));
                        }
                    }
                }
                latest_inval.insert(class, pos);
            }
            Ev::Ret => {
                if has(call, "invalidates", "return") {
                    for (&c, &a) in &latest_inval {
                        if !covered(a, pos, c, Class::InvalidateCompletion) {
                            out.push(format!(
                                "return (event {pos}) after {} (event {a}): no barrier completes it ({c:?} -> InvalidateCompletion)",
                                name(&s.events[a])
                            ));
                        }
                    }
                }
                let trailing = req(call).trailing;
                if !trailing.is_empty() {
                    let last = (entry..pos)
                        .rev()
                        .find(|&i| is_data(&s.events[i]))
                        .unwrap_or(entry);
                    let mut bs = barriers_in(last, pos).into_iter();
                    for want in &trailing {
                        let wk = table_kind(prog, t, want);
                        let found = bs.any(|n| {
                            n == want
                                || matches!((table_kind(prog, t, n), wk), (Some(k), Some(w))
                                    if w.orders.iter().all(|(a, b)| k.covers(*a, *b)))
                        });
                        if !found {
                            out.push(format!(
                                "return (event {pos}): the sequence ends with `barrier {want}`, not executed after its last access (event {last})"
                            ));
                            break;
                        }
                    }
                }
                latest_inval.clear();
            }
        }
    }
    out
}

// ---------------------------------------------------------- differences
