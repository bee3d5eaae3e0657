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
    let cx = Ctx {
        prog,
        t,
        s,
        reqs,
        insns,
        after,
        power: matches!(t, Target::Power64 | Target::Power64le),
    };
    let mut w = Walk::new(cx);
    for (pos, e) in s.events.iter().enumerate() {
        w.event(pos, e);
    }
    w.out
}

/// What the walk reads: the program, the side's events and the spec's
/// requirements.
struct Ctx<'a> {
    prog: &'a Program,
    t: Target,
    s: &'a Side,
    reqs: &'a [CallReq],
    insns: &'a BTreeMap<u64, String>,
    after: &'a BTreeSet<u64>,
    power: bool,
}

impl<'a> Ctx<'a> {
    fn barriers_in(&self, a: usize, b: usize) -> Vec<&'a str> {
        self.s.events[a + 1..b]
            .iter()
            .filter_map(|e| match e {
                Ev::Barrier(n) => Some(n.as_str()),
                _ => None,
            })
            .collect()
    }

    /// The target's own order of invalidations (RISC-V `sfence.vma` orders
    /// the stores before it and is complete when it retires); no other
    /// target orders an invalidation pair without a barrier.
    fn implicit(&self, from: Class, to: Class) -> bool {
        (from.is_invalidation() || to.is_invalidation() || to == Class::InvalidateCompletion)
            && self.t.orders_implicitly(from, to, false)
    }

    /// Whether a barrier between events `a` and `b` orders `from` before
    /// `to`. A composite barrier (POWER `eieio; tlbsync; ptesync`) counts
    /// when its parts ran in order with nothing else between them.
    fn covered(&self, a: usize, b: usize, from: Class, to: Class) -> bool {
        if self.implicit(from, to) {
            return true;
        }
        let (prog, t) = (self.prog, self.t);
        let mut run: Vec<&str> = Vec::new();
        self.s.events[a + 1..b].iter().any(|e| match e {
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
    }

    fn req(&self, call: usize) -> CallReq {
        self.reqs
            .get(call)
            .or(self.reqs.last())
            .cloned()
            .unwrap_or_default()
    }

    fn has(&self, call: usize, a: &str, b: &str) -> bool {
        self.req(call).orders.iter().any(|(x, y)| x == a && y == b)
    }

    fn name(&self, e: &Ev) -> String {
        match e {
            Ev::Access {
                store,
                dev,
                inst,
                off,
                width,
                ..
            } => {
                let d = &self.prog.devices[*dev];
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
        }
    }

    /// Whether the lock taken at event `a` is acquired by event `b`.
    fn acquire_ok(&self, a: usize, b: usize) -> bool {
        let (prog, t, s) = (self.prog, self.t, self.s);
        let bs = self.barriers_in(a, b);
        match t {
            Target::X86_64 => true,
            _ if self.power => bs.iter().any(|n| ["isync", "lwsync", "sync"].contains(n)),
            _ => {
                // the exclusive load of the lock, just before its store
                let loaded_acquire = s.events[..a].iter().zip(&s.pcs).rev().find_map(|(e, pc)| {
                    matches!(e, Ev::NAccess { store: false, .. }).then(|| {
                        let m = mnemonic_at(self.insns, *pc);
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
    }

    /// Whether the store at `pos` releases the lock with the barriers
    /// since event `last`: `device` if the critical section accessed a
    /// device, `from_entry` if it began at the call's entry, `loads_fed`
    /// if each of its loads is followed by a store.
    fn release_ok(
        &self,
        last: usize,
        pos: usize,
        device: bool,
        from_entry: bool,
        loads_fed: bool,
    ) -> bool {
        let (prog, t) = (self.prog, self.t);
        let bs = self.barriers_in(last, pos);
        match t {
            Target::X86_64 => true,
            _ if self.power => bs.iter().any(|n| {
                *n == "sync"
                    || (*n == "lwsync" && !device)
                    || (*n == "eieio" && !device && !from_entry && loads_fed)
            }),
            _ => {
                let m = mnemonic_at(self.insns, self.s.pcs[pos]);
                m.starts_with("stlr")
                    || m.starts_with("stlxr")
                    || bs.iter().any(|n| {
                        table_kind(prog, t, n).is_some_and(|k| {
                            k.covers(Class::NormalLoad, Class::NormalStore)
                                && k.covers(Class::NormalStore, Class::NormalStore)
                                && (!device || k.covers(Class::DevStore, Class::NormalStore))
                        })
                    })
            }
        }
    }
}

/// The walk over one side's events: where each call starts, the latest
/// access of each kind, the locks taken, and the violations found.
struct Walk<'a> {
    cx: Ctx<'a>,
    out: Vec<String>,
    call: usize,
    started: bool,
    entry: usize,
    /// (dev, inst, reg, class) -> latest position
    latest: BTreeMap<(usize, u64, usize, Class), usize>,
    latest_store: Option<usize>,
    /// The latest invalidation of each class (`tlbie`, `tlbiel`, `slbia`
    /// complete differently).
    latest_inval: BTreeMap<Class, usize>,
    taken: BTreeMap<(usize, u64), usize>,
    pending_acquire: Option<usize>,
}

impl<'a> Walk<'a> {
    fn new(cx: Ctx<'a>) -> Self {
        Walk {
            cx,
            out: Vec::new(),
            call: 0,
            started: false,
            entry: 0,
            latest: BTreeMap::new(),
            latest_store: None,
            latest_inval: BTreeMap::new(),
            taken: BTreeMap::new(),
            pending_acquire: None,
        }
    }

    fn event(&mut self, pos: usize, e: &Ev) {
        if is_data(e) || *e == Ev::Ret {
            self.check_acquire(pos, e);
        }
        match e {
            Ev::Entry => {
                if self.started {
                    self.call += 1;
                }
                self.started = true;
                self.entry = pos;
                self.latest_store = Some(pos);
                self.latest_inval.clear();
                self.taken.clear();
            }
            Ev::NAccess {
                store: true,
                ptr,
                off,
                ..
            } => {
                self.normal_store(pos, e, (*ptr, *off));
                self.latest_store = Some(pos);
            }
            Ev::NAccess { .. } | Ev::Barrier(_) => {}
            Ev::Access { .. } => self.device_access(pos, e),
            Ev::Inval { op, .. } => self.invalidation(pos, e, op),
            Ev::Ret => self.ret(pos),
        }
    }

    /// The first data access or return after taking a lock: an acquire
    /// barrier between.
    fn check_acquire(&mut self, pos: usize, e: &Ev) {
        let t = self.cx.t;
        if let Some(a) = self.pending_acquire.take() {
            let intrinsic =
                t == Target::X86_64 || (t == Target::Aarch64 && self.cx.acquire_ok(a, a + 1));
            if !intrinsic && !self.cx.acquire_ok(a, pos) {
                self.out.push(format!(
                    "event {pos} ({}) after taking the lock (event {a}): no acquire barrier",
                    self.cx.name(e)
                ));
            }
        }
    }

    /// A store to normal memory: it takes a lock the call acquires, or
    /// releases one with a release barrier.
    fn normal_store(&mut self, pos: usize, e: &Ev, loc: (usize, u64)) {
        let s = self.cx.s;
        let r = self.cx.req(self.call);
        if r.acquire.contains(&loc) && !self.taken.contains_key(&loc) {
            self.taken.insert(loc, pos);
            self.pending_acquire = Some(pos);
        } else if r.release.contains(&loc) {
            let start = self.taken.get(&loc).copied().unwrap_or(self.entry);
            let from_entry = start == self.entry && !self.taken.contains_key(&loc);
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
            if !self.cx.release_ok(last, pos, device, from_entry, loads_fed) {
                self.out.push(format!(
                    "event {pos} ({}) releases the lock after {} (event {last}) with no release barrier",
                    self.cx.name(e),
                    self.cx.name(&s.events[last])
                ));
            }
        }
    }

    /// A device register access: the device's `require`s, and `require
    /// stores before REG`.
    fn device_access(&mut self, pos: usize, e: &Ev) {
        let &Ev::Access {
            store,
            dev,
            inst,
            off,
            width,
            ..
        } = e
        else {
            return;
        };
        let cx = &self.cx;
        let (t, s) = (cx.t, cx.s);
        let d = &cx.prog.devices[dev];
        let Some(r) = d
            .regs
            .iter()
            .position(|r| r.offset == off && r.bytes() == width)
        else {
            return;
        };
        let cb = if store {
            Class::DevStore
        } else {
            Class::DevLoad
        };
        for q in d.requires.iter().filter(|q| q.after == r) {
            for ca in [Class::DevStore, Class::DevLoad] {
                let a = self
                    .latest
                    .iter()
                    .filter(|((dv, i, rg, c), _)| {
                        *dv == dev
                            && *rg == q.before
                            && *c == ca
                            && (q.scope == Scope::AnyInstance || *i == inst)
                    })
                    .map(|(_, p)| *p)
                    .max();
                let Some(a) = a else { continue };
                let same_strong = d.mapping == Mapping::Strong
                    && (q.scope == Scope::SameInstance || d.instances == Instances::Single);
                if !t.orders_implicitly(ca, cb, same_strong) && !cx.covered(a, pos, ca, cb) {
                    self.out.push(format!(
                        "event {pos} ({}) after event {a} ({}): no barrier orders {ca:?} -> {cb:?}",
                        cx.name(e),
                        cx.name(&s.events[a])
                    ));
                }
            }
        }
        // `require stores before REG` orders them before writes
        // of REG (what starts the device's work), not its reads.
        if cb == Class::DevStore && d.after_stores.iter().any(|(reg, _)| *reg == r) {
            if let Some(a) = self.latest_store {
                if !t.orders_implicitly(Class::NormalStore, cb, false)
                    && !cx.covered(a, pos, Class::NormalStore, cb)
                {
                    self.out.push(format!(
                        "event {pos} ({}) after {} (event {a}): no barrier orders NormalStore -> {cb:?}",
                        cx.name(e),
                        cx.name(&s.events[a])
                    ));
                }
            }
        }
        self.latest.insert((dev, inst, r, cb), pos);
    }

    /// An invalidation: after the stores it reads, after earlier
    /// invalidations where written `after invalidates`, and once they
    /// are complete where the call orders invalidations.
    fn invalidation(&mut self, pos: usize, e: &Ev, op: &str) {
        let cx = &self.cx;
        let s = cx.s;
        let class = shootdown::ir::order::invalidate_class(op);
        if cx.has(self.call, "stores", "invalidates") && class.reads_page_tables() {
            if let Some(a) = self.latest_store {
                if !cx.covered(a, pos, Class::NormalStore, class) {
                    self.out.push(format!(
                        "event {pos} ({}) after {} (event {a}): no barrier orders NormalStore -> {class:?}",
                        cx.name(e),
                        cx.name(&s.events[a])
                    ));
                }
            }
        }
        if cx.after.contains(&s.pcs[pos]) {
            for (&c, &a) in &self.latest_inval {
                if !cx.covered(a, pos, c, class) {
                    self.out.push(format!(
                        "event {pos} ({}, written `after invalidates`) after {} (event {a}): no barrier orders {c:?} -> {class:?}",
                        cx.name(e),
                        cx.name(&s.events[a])
                    ));
                }
            }
        }
        if cx.has(self.call, "invalidates", "invalidates") {
            for (&c, &a) in &self.latest_inval {
                if !cx.covered(a, pos, c, Class::InvalidateCompletion) {
                    self.out.push(format!(
                        "event {pos} ({}) after {} (event {a}): the earlier invalidation is not complete ({c:?} -> InvalidateCompletion)",
                        cx.name(e),
                        cx.name(&s.events[a])
                    ));
                }
            }
        }
        self.latest_inval.insert(class, pos);
    }

    /// A return: invalidations complete where the call asks, and the
    /// trailing `barrier`s executed after the last access.
    fn ret(&mut self, pos: usize) {
        let cx = &self.cx;
        let (prog, t, s) = (cx.prog, cx.t, cx.s);
        if cx.has(self.call, "invalidates", "return") {
            for (&c, &a) in &self.latest_inval {
                if !cx.covered(a, pos, c, Class::InvalidateCompletion) {
                    self.out.push(format!(
                        "return (event {pos}) after {} (event {a}): no barrier completes it ({c:?} -> InvalidateCompletion)",
                        cx.name(&s.events[a])
                    ));
                }
            }
        }
        let trailing = cx.req(self.call).trailing;
        if !trailing.is_empty() {
            let entry = self.entry;
            let last = (entry..pos)
                .rev()
                .find(|&i| is_data(&s.events[i]))
                .unwrap_or(entry);
            let mut bs = cx.barriers_in(last, pos).into_iter();
            for want in &trailing {
                let wk = table_kind(prog, t, want);
                let found = bs.any(|n| {
                    n == want
                        || matches!((table_kind(prog, t, n), wk), (Some(k), Some(w))
                            if w.orders.iter().all(|(a, b)| k.covers(*a, *b)))
                });
                if !found {
                    self.out.push(format!(
                        "return (event {pos}): the sequence ends with `barrier {want}`, not executed after its last access (event {last})"
                    ));
                    break;
                }
            }
        }
        self.latest_inval.clear();
    }
}
