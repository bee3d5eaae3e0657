//! Name resolution and semantic checks: AST -> IR.
//!
//! Everything a spec author can get wrong is caught here with a span, so
//! passes and backends may assume a well-formed program.

mod assume;
mod device;
mod expr;
mod granules;
mod mem;
mod seq;
mod stmt;

use super::*;
use crate::spec::ast;
use crate::spec::diag::Diag;
use device::{check_device, find_reg, Index};
use granules::{check_granules, check_queue_granules};
use rustc_hash::FxHashMap;
use seq::{let_decls, SeqCx};

/// Default code when a poll runs out of its bound: -ETIMEDOUT, as Linux
/// drivers return.
pub const DEFAULT_POLL_FAIL: i64 = -110;
/// What a `while` returns when it is still running at its limit (-EINVAL:
/// the bound the author proved did not hold, so the input was not one the
/// loop was written for).
pub const DEFAULT_WHILE_FAIL: i64 = -22;

pub fn check(source_name: &str, source_text: &str, spec: &ast::Spec) -> Result<Program, Diag> {
    check_with(source_name, source_text, spec, PARALLEL_FROM_SEQS)
}

/// [`check`], its sequences on every core from `parallel_from` of them.
fn check_with(
    source_name: &str,
    source_text: &str,
    spec: &ast::Spec,
    parallel_from: usize,
) -> Result<Program, Diag> {
    // Queue statements become plain ones first (see `spec::queue`); a
    // spec without queues or records is checked as written (no copy).
    let lowered;
    let spec = if spec.queues.is_empty() && spec.records.is_empty() {
        crate::spec::queue::no_queue_statements(spec)?;
        spec
    } else {
        let mut s = spec.clone();
        crate::spec::queue::lower(&mut s, &|t| {
            crate::ir::isa::by_name(t).map(|i| i.big_endian())
        })?;
        lowered = s;
        &lowered
    };
    let records = crate::spec::queue::check_records(spec)?;
    let targets = check_targets(spec)?;
    let (machine, machine_span) = check_machine(spec, &targets)?;
    let devices = check_devices(spec)?;
    let index = Index::new(&devices);
    let granules = check_granule_sets(spec, &devices)?;
    let thresholds = check_pinned_thresholds(spec)?;
    let features = check_features(spec)?;
    // An empty spec (or one of only comments and `target` lines) is an
    // error rather than a header with nothing in it: it is almost always a
    // wrong path or a truncated file, and a build should stop there. Said
    // after the declarations are checked, so that a wrong one among them
    // (an unknown TLBI in a granule set) is what the user hears first.
    if spec.devices.is_empty() && spec.seqs.is_empty() {
        return Err(Diag::new(
            crate::spec::diag::Span::new(0, 0),
            "spec declares no device and no sequence",
        )
        .label("nothing to generate")
        .help("a spec needs at least one `device` or `seq`"));
    }
    let decls = Decls {
        index: &index,
        devices: &devices,
        granules: &granules,
        thresholds: &thresholds,
        features: &features,
        machine,
        targets: &targets,
    };
    let mut seqs = check_seqs(&decls, &spec.seqs, parallel_from)?;
    assume_texts(&mut seqs, source_text);

    check_threshold_names(spec, &seqs)?;
    let queues = check_queues(spec, &devices, &index)?;
    Ok(Program {
        machine,
        machine_span,
        source_name: source_name.to_string(),
        source_text: source_text.to_string(),
        line_starts: Default::default(),
        targets,
        devices,
        granules,
        thresholds,
        features,
        queues,
        records,
        seqs,
    })
}

/// Each `assume`'s condition as written (`cpu < 255`, not the checked
/// `(cpu < 0xff)`): the header states it to the caller.
fn assume_texts(seqs: &mut [Seq], source_text: &str) {
    for a in seqs.iter_mut().flat_map(|s| &mut s.assumes) {
        let written = source_text
            .get(a.span.offset..a.span.offset + a.span.len)
            .and_then(|t| t.strip_prefix("assume"));
        if let Some(t) = written {
            a.text = t.split_whitespace().collect::<Vec<_>>().join(" ");
        }
    }
}

/// The `target` line: known names, each once.
fn check_targets(spec: &ast::Spec) -> Result<Vec<(String, Span)>, Diag> {
    let mut targets = Vec::new();
    for t in &spec.targets {
        if crate::ir::isa::by_name(&t.name).is_none() {
            let names: Vec<&str> = crate::ir::isa::all().iter().map(|i| i.name()).collect();
            return Err(Diag::new(t.span, format!("unknown target `{}`", t.name))
                .label("not a target")
                .help(format!("targets are {}", names.join(", "))));
        }
        if targets.iter().any(|(n, _)| n == &t.name) {
            return Err(Diag::new(
                t.span,
                format!("target `{}` listed twice", t.name),
            ));
        }
        targets.push((t.name.clone(), t.span));
    }
    Ok(targets)
}

/// `WHAT `NAME` defined twice`, at the second definition, pointing back
/// at the first.
fn defined_twice(what: &str, name: &ast::Ident, first: Span) -> Diag {
    Diag::new(name.span, format!("{what} `{}` defined twice", name.name))
        .related(first, "first defined here")
}

fn check_devices(spec: &ast::Spec) -> Result<Vec<Device>, Diag> {
    // Name lookups go through maps built as declarations are checked: a
    // spec may declare hundreds of thousands of devices, registers, fields
    // or sequences, and checking stays linear in its size.
    let mut devices: Vec<Device> = Vec::new();
    let mut device_ids: FxHashMap<&str, DevId> = FxHashMap::default();
    for d in &spec.devices {
        if let Some(prev) = device_ids.get(d.name.name.as_str()).map(|&i| &devices[i]) {
            return Err(defined_twice("device", &d.name, prev.span).label("second definition"));
        }
        if let Some(why) = crate::ir::c_names::reserved(&d.name.name) {
            return Err(Diag::new(
                d.name.span,
                format!("device `{}`: the name is {why}", d.name.name),
            )
            .label("reserved in C")
            .help(
                "prototypes name a device's base-address parameter after the device; rename it",
            ));
        }
        device_ids.insert(&d.name.name, devices.len());
        devices.push(check_device(d)?);
    }
    drop(device_ids);
    Ok(devices)
}

fn check_granule_sets(spec: &ast::Spec, devices: &[Device]) -> Result<Vec<GranuleSet>, Diag> {
    let mut granules: Vec<GranuleSet> = Vec::new();
    let mut granule_ids: FxHashMap<&str, usize> = FxHashMap::default();
    for g in &spec.granules {
        if let Some(prev) = granule_ids.get(g.name.name.as_str()).map(|&i| &granules[i]) {
            return Err(defined_twice("granule set", &g.name, prev.span));
        }
        granule_ids.insert(&g.name.name, granules.len());
        granules.push(
            match spec
                .queues
                .iter()
                .find(|q| Some(&q.name.name) == g.dev.as_ref().map(|d| &d.name))
            {
                Some(q) => check_queue_granules(spec, q, g)?,
                None => check_granules(devices, g)?,
            },
        );
    }
    Ok(granules)
}

/// `threshold NAME = V`: values pinned by the author, each once.
fn check_pinned_thresholds(spec: &ast::Spec) -> Result<Vec<(String, u64)>, Diag> {
    let mut thresholds: Vec<(String, u64)> = Vec::new();
    let mut threshold_names: rustc_hash::FxHashSet<&str> = Default::default();
    for (n, v) in &spec.thresholds {
        if !threshold_names.insert(n.name.as_str()) {
            return Err(Diag::new(
                n.span,
                format!("threshold `{}` pinned twice", n.name),
            ));
        }
        thresholds.push((n.name.clone(), *v));
    }
    Ok(thresholds)
}

/// What every sequence is checked against.
struct Decls<'a> {
    index: &'a Index<'a>,
    devices: &'a [Device],
    granules: &'a [GranuleSet],
    thresholds: &'a [(String, u64)],
    features: &'a [Feature],
    machine: crate::ir::Machine,
    /// The spec's `target` names (which ISAs an SPR name is asked of).
    targets: &'a [(String, Span)],
}

/// From this many sequences on, they are checked on every core.
const PARALLEL_FROM_SEQS: usize = 64;

/// The sequences, in order, numbering operations and loop groups across
/// them; on every core when there are `parallel_from` or more: then each
/// numbers its own from 0 and is shifted past the sequences before it,
/// which is the numbering checking in order gives. The error is the first in
/// source order, a second definition of a name where it stands.
fn check_seqs(d: &Decls, seqs: &[ast::Seq], parallel_from: usize) -> Result<Vec<Seq>, Diag> {
    use rayon::prelude::*;
    let parallel = seqs.len() >= parallel_from;
    let checked: Vec<Result<(Seq, u32, u32), Diag>> = if parallel {
        seqs.par_iter()
            .map(|s| {
                let (mut ops, mut groups) = (0u32, 0u32);
                check_seq(d, s, &mut ops, &mut groups).map(|q| (q, ops, groups))
            })
            .collect()
    } else {
        Vec::new()
    };
    let mut checked = checked.into_iter();
    let mut out: Vec<Seq> = Vec::with_capacity(seqs.len());
    let mut seq_ids: FxHashMap<&str, usize> = FxHashMap::default();
    let (mut next_op, mut next_group) = (0u32, 0u32);
    for s in seqs {
        if let Some(prev) = seq_ids.get(s.name.name.as_str()).map(|&i| &out[i]) {
            return Err(defined_twice("sequence", &s.name, prev.span).label("second definition"));
        }
        let seq = match checked.next() {
            Some(c) => {
                let (mut seq, ops, groups) = c?;
                shift_ids(&mut seq, next_op, next_group);
                next_op = next_op.wrapping_add(ops);
                next_group = next_group.wrapping_add(groups);
                seq
            }
            None => check_seq(d, s, &mut next_op, &mut next_group)?,
        };
        seq_ids.insert(&s.name.name, out.len());
        out.push(seq);
    }
    Ok(out)
}

/// Add `ops` to every operation id of `seq` (its edges' ends included,
/// but not the pseudo-operations) and `groups` to every loop group.
fn shift_ids(seq: &mut Seq, ops: u32, groups: u32) {
    if ops == 0 && groups == 0 {
        return;
    }
    let op = |id: &mut OpId| id.0 = id.0.wrapping_add(ops);
    crate::ir::walk_mut(&mut seq.body, &mut |st| match st {
        Stmt::Write { access, .. } | Stmt::Poll { access, .. } | Stmt::Read { access, .. } => {
            op(&mut access.id)
        }
        Stmt::Invalidate { id, .. } | Stmt::Mem { id, .. } => op(id),
        Stmt::Each { group, .. } => *group = group.wrapping_add(groups),
        _ => {}
    });
    for e in &mut seq.edges {
        for end in [&mut e.from, &mut e.to] {
            if ![OpId::BARRIER, OpId::ENTRY, OpId::EXIT].contains(end) {
                op(end);
            }
        }
    }
}

fn check_seq(
    d: &Decls,
    s: &ast::Seq,
    next_op: &mut u32,
    next_group: &mut u32,
) -> Result<Seq, Diag> {
    let mut p = check_params(s)?;
    let mut cx = SeqCx {
        machine: d.machine,
        targets: d.targets,
        index: d.index,
        devices: d.devices,
        granules: d.granules,
        thresholds: d.thresholds,
        seq_name: s.name.name.clone(),
        in_cover: Vec::new(),
        params: &p.names,
        locals: Vec::new(),
        scope: Vec::new(),
        orders: Vec::new(),
        order_guards: Vec::new(),
        arms: Vec::new(),
        in_each: Vec::new(),
        used: Vec::new(),
        next_op,
        next_group,
        ptrs: &p.ptrs,
        pending: Vec::new(),
        status: None,
        void: s.void,
        features: d.features,
        feature_word: None,
        lets: Vec::new(),
        declared: let_decls(&s.body),
        assumes: Vec::new(),
        started: false,
    };
    let body = cx.block(&s.body)?;
    let feature_word = cx.feature_word;
    let status = cx.status;
    let locals = std::mem::take(&mut cx.locals);
    let orders = std::mem::take(&mut cx.orders);
    let order_guards = std::mem::take(&mut cx.order_guards);
    let assumes = std::mem::take(&mut cx.assumes);
    let mut used = cx.used;
    used.sort_unstable();
    used.dedup();
    check_c_params(d.devices, &used, s)?;
    if let Some(w) = feature_word {
        // The feature word is the last argument (README, "CPU features
        // and errata"); `verify`, `trace --arg features=...` and the
        // header treat it as the parameter it is.
        if let Some(taken) = s.params.iter().find(|q| q.name.name == "features") {
            return Err(Diag::new(
                taken.name.span,
                "a sequence that tests `feature`s takes the feature word as its parameter `features`",
            )
            .label("name taken")
            .help("rename this parameter"));
        }
        debug_assert_eq!(w, p.names.len());
        p.names.push("features".to_string());
        p.ptrs.push(None);
        p.private.push(false);
        p.ctypes.push(Some("unsigned long"));
        p.phys.push(None);
    }
    let mut seq = Seq {
        name: s.name.name.clone(),
        span: s.name.span,
        params: p.names,
        devices: used,
        body,
        edges: Vec::new(),
        locals,
        orders,
        order_guards,
        edge_variants: Vec::new(),
        ptrs: p.ptrs,
        private: p.private,
        ctypes: p.ctypes,
        phys: p.phys,
        void: s.void,
        status,
        feature_word,
        notes: Vec::new(),
        assumes,
    };
    seq.edges = order::required_edges(d.devices, &seq.body, &seq.orders);
    Ok(seq)
}

/// A sequence's parameters, in order, with what the C side and the
/// passes need of each.
struct Params {
    names: Vec<String>,
    /// Element width of a pointer parameter.
    ptrs: Vec<Option<u32>>,
    private: Vec<bool>,
    /// The C type when it is not `unsigned long long`.
    ctypes: Vec<Option<&'static str>>,
    /// `phys PTR`: the pointer parameter this is the physical address of.
    phys: Vec<Option<usize>>,
}

fn check_params(s: &ast::Seq) -> Result<Params, Diag> {
    let mut params: Vec<String> = Vec::new();
    let mut ptrs: Vec<Option<u32>> = Vec::new();
    let mut private: Vec<bool> = Vec::new();
    let mut ctypes: Vec<Option<&'static str>> = Vec::new();
    for p in &s.params {
        ctypes.push(match p.ty.name.as_str() {
            "ulong" => Some("unsigned long"),
            "long" => Some("long"),
            _ => None,
        });
        match (p.ty.name.as_str(), &p.elem) {
            ("u64" | "ulong" | "long" | "phys", None) => ptrs.push(None),
            ("ptr", Some(e)) => ptrs.push(Some(match e.name.as_str() {
                "u8" => 8,
                "u16" => 16,
                "u32" => 32,
                "u64" => 64,
                _ => {
                    return Err(Diag::new(e.span, format!("unsupported pointer type `ptr {}`", e.name))
                        .label("expected u8, u16, u32 or u64"))
                }
            })),
            _ => {
                return Err(Diag::new(
                    p.ty.span,
                    format!("unsupported parameter type `{}`", p.ty.name),
                )
                .label("parameters are 64-bit integers or pointers to normal memory")
                .help("write `u64` (C `unsigned long long`), `ulong`, `long`, `ptr u8` (u16, u32, u64) or `phys PTR`"))
            }
        }
        if let (Some(sp), None) = (p.private, &p.elem) {
            return Err(Diag::new(sp, "only pointer parameters can be `private`")
                .label("not a pointer")
                .help("write `NAME: ptr u64 private` for memory only this CPU touches"));
        }
        private.push(p.private.is_some());
        if params.contains(&p.name.name) {
            return Err(Diag::new(
                p.name.span,
                format!("parameter `{}` given twice", p.name.name),
            ));
        }
        params.push(p.name.name.clone());
    }
    // `phys PTR`: PTR must be a pointer parameter of this sequence.
    let mut phys: Vec<Option<usize>> = vec![None; params.len()];
    for (i, p) in s.params.iter().enumerate() {
        let Some(of) = &p.phys else { continue };
        match params.iter().position(|n| *n == of.name) {
            Some(j) if ptrs[j].is_some() => phys[i] = Some(j),
            Some(_) => {
                return Err(
                    Diag::new(of.span, format!("`{}` is not a pointer parameter", of.name))
                        .label("not a pointer")
                        .help(
                            "`phys PTR` names the `ptr` parameter whose physical address this is",
                        ),
                )
            }
            None => {
                return Err(Diag::new(of.span, format!("no parameter `{}`", of.name))
                    .label("unknown parameter"))
            }
        }
    }
    Ok(Params {
        names: params,
        ptrs,
        private,
        ctypes,
        phys,
    })
}

/// Resolve each queue's device and registers (for the header and the
/// simulated consumer; the statements were rewritten already).
fn check_queues(spec: &ast::Spec, devices: &[Device], index: &Index) -> Result<Vec<Queue>, Diag> {
    spec.queues
        .iter()
        .map(|q| {
            let dev = *index
                .devices
                .get(q.dev.name.as_str())
                .ok_or_else(|| Diag::undeclared(q.dev.span, "device", &q.dev.name))?;
            let d = &devices[dev];
            // By the index (a scan of the registers per queue made 8 MiB
            // of queues quadratic: issue 42); the scan gives the message.
            let reg = |n: &ast::Ident| match index.regs[dev].get(n.name.as_str()) {
                Some(&r) => Ok(r),
                None => find_reg(&d.regs, &d.name, n),
            };
            let prod = reg(&q.prod)?;
            let cons = reg(&q.cons[0])?;
            let cons_mask = match q.cons.get(1) {
                None => crate::ir::expr::field_mask(0, d.regs[cons].width),
                Some(f) => d
                    .fields
                    .iter()
                    .find(|x| x.reg == cons && x.name == f.name)
                    .map(|x| x.mask())
                    .ok_or_else(|| {
                        Diag::new(
                            f.span,
                            format!(
                                "register `{}.{}` has no field `{}`",
                                d.name, d.regs[cons].name, f.name
                            ),
                        )
                        .label("unknown field")
                    })?,
            };
            if d.instances != Instances::Single {
                return Err(
                    Diag::new(q.dev.span, "a queue's device must have one instance")
                        .label("several instances"),
                );
            }
            Ok(Queue {
                name: q.name.name.clone(),
                dev,
                prod,
                cons,
                cons_mask,
                entry: q.entry,
                index: q.index,
                batch: q.batch.map(|b| b.0),
                span: q.name.span,
            })
        })
        .collect()
}

/// At most 64: each is one bit of the feature word.
fn check_features(spec: &ast::Spec) -> Result<Vec<Feature>, Diag> {
    let mut out: Vec<Feature> = Vec::new();
    for f in &spec.features {
        if let Some(prev) = out.iter().find(|p| p.name == f.name.name) {
            return Err(Diag::new(
                f.name.span,
                format!("feature `{}` declared twice", f.name.name),
            )
            .label("second declaration")
            .related(prev.span, "first declared here"));
        }
        if out.len() == 64 {
            return Err(Diag::new(f.name.span, "more than 64 features")
                .label("the 65th")
                .help("each feature is one bit of a 64-bit feature word"));
        }
        if let Some(c) = &f.cap {
            if crate::ir::feature::patching_of(&c.name).is_none() {
                return Err(Diag::new(
                    c.span,
                    format!(
                        "`{}` is not a kernel capability shootdown can patch",
                        c.name
                    ),
                )
                .label("unknown kind of capability")
                .help(crate::ir::feature::CAPABILITY_HELP));
            }
        }
        out.push(Feature {
            name: f.name.name.clone(),
            span: f.name.span,
            cap: f.cap.as_ref().map(|c| c.name.clone()),
        });
    }
    Ok(out)
}

/// The C prototype's parameters: each device's base (and `DEV_count` for
/// a run-time set), then the sequence's own; all distinct, none reserved.
fn check_c_params(devices: &[Device], used: &[DevId], s: &ast::Seq) -> Result<(), Diag> {
    for p in &s.params {
        let n = p.name.name.as_str();
        if let Some(why) = crate::ir::c_names::reserved(n) {
            return Err(
                Diag::new(p.name.span, format!("parameter `{n}`: the name is {why}"))
                    .label("reserved in C")
                    .help("rename the parameter"),
            );
        }
        for &d in used {
            let dev = &devices[d];
            let count = matches!(dev.instances, Instances::Dynamic { .. })
                .then(|| format!("{}_count", dev.name));
            if dev.name == n || count.as_deref() == Some(n) {
                return Err(Diag::new(
                    p.name.span,
                    format!(
                        "parameter `{n}` has the name of the C parameter for device `{}`",
                        dev.name
                    ),
                )
                .label("duplicate prototype parameter")
                .related(dev.span, format!("device `{}`", dev.name))
                .help("the prototype passes each device the sequence uses as `DEV` (and `DEV_count`); rename the parameter"));
            }
        }
    }
    Ok(())
}

/// A `threshold NAME = V` line must name a cover's threshold: a typo
/// would otherwise leave the real threshold at its derived value.
fn check_threshold_names(spec: &ast::Spec, seqs: &[Seq]) -> Result<(), Diag> {
    if spec.thresholds.is_empty() {
        return Ok(());
    }
    let mut names = Vec::new();
    let mut read: Vec<String> = Vec::new();
    for s in seqs {
        walk(&s.body, &mut |st| {
            if let Stmt::Cover { threshold, .. } = st {
                names.push(threshold.as_str());
            }
        });
        for g in crate::ir::thresholds::expr_threshold_sets(s) {
            read.push(crate::ir::thresholds::threshold_name(
                &s.name,
                &spec.granules[g].name.name,
            ));
        }
    }
    names.extend(read.iter().map(String::as_str));
    names.sort_unstable();
    names.dedup();
    for (n, _) in &spec.thresholds {
        if names.binary_search(&n.name.as_str()).is_err() {
            let known = if names.is_empty() {
                "this spec has no `cover`, so no threshold".to_string()
            } else {
                let more = if names.len() > 8 { ", ..." } else { "" };
                format!(
                    "thresholds are named SEQ_SET_THRESHOLD: {}{more}",
                    names[..names.len().min(8)].join(", ")
                )
            };
            return Err(Diag::new(
                n.span,
                format!("no `cover` has a threshold named `{}`", n.name),
            )
            .label("unknown threshold")
            .help(known));
        }
    }
    Ok(())
}

/// `machine NAME`: at most once, a known name, and only with POWER
/// targets on the `target` line (the family is a POWER one).
fn check_machine(
    spec: &ast::Spec,
    targets: &[(String, Span)],
) -> Result<(Machine, Option<Span>), Diag> {
    let Some(first) = spec.machines.first() else {
        return Ok((Machine::default(), None));
    };
    if let Some(second) = spec.machines.get(1) {
        return Err(Diag::new(second.span, "`machine` given twice")
            .label("second `machine`")
            .related(first.span, "first given here"));
    }
    let Some(m) = Machine::from_name(&first.name) else {
        return Err(
            Diag::new(first.span, format!("unknown machine `{}`", first.name))
                .label("not a machine")
                .help(format!(
                    "machines are {} (Book III-E POWER); without `machine`, POWER is Book III-S (POWER9)",
                    Machine::NAMES.join(", ")
                )),
        );
    };
    let has_machines = |t: &str| crate::ir::isa::by_name(t).is_some_and(|i| i.has_machines());
    if let Some((t, span)) = targets.iter().find(|(t, _)| !has_machines(t)) {
        return Err(Diag::new(*span, format!("`machine {}` is a POWER CPU; `{t}` is not POWER", first.name))
            .label("not a POWER target")
            .help("list only power64 and power64le with `machine`, or put the other target's sequences in a spec of their own"));
    }
    Ok((m, Some(first.span)))
}

#[cfg(test)]
mod parallel_tests {
    use super::*;

    /// Every example and a spec of many sequences: checked on every core,
    /// the program (operation ids, loop groups, edges) is the one a check
    /// in order gives, and so is the error of a broken spec.
    #[test]
    fn checking_on_every_core_is_checking_in_order() {
        let mut specs = crate::spec::examples();
        // Many sequences of loops, polls and covers (ids and groups in each).
        let mut many = String::from(
            "target aarch64\ndevice d {\n instances dynamic max 4\n reg a 0x0 u64 le\n reg s 0x8 u64 le\n require a before s\n}\n",
        );
        for i in 0..10 {
            many += &format!(
                "seq s{i}(x: u64) {{\n each d {{ d.a = x + {i}\n d.s = 1 }}\n each d {{ poll d.s == 0 limit 10 else return -1 }}\n}}\n"
            );
        }
        specs.push(("many".into(), many.clone()));
        // The second error in source order must not win.
        let broken = many
            .replace("d.a = x + 3", "d.nope = 1")
            .replace("d.a = x + 7", "d.zz = 1");
        specs.push(("broken".into(), broken));
        for (name, src) in &specs {
            let spec = crate::spec::parser::parse(src).unwrap();
            let serial = check_with(name, src, &spec, usize::MAX);
            let parallel = check_with(name, src, &spec, 1);
            assert_eq!(format!("{serial:?}"), format!("{parallel:?}"), "{name}");
        }
    }
}
