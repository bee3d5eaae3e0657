//! Name resolution and semantic checks: AST -> IR.
//!
//! Everything a spec author can get wrong is caught here with a span, so
//! passes and backends may assume a well-formed program.

use super::expr::{field_mask, BinOp, Binding, Expr, Func, Rel};
use super::*;
use crate::spec::ast::{self, Numbering};
use crate::spec::diag::Diag;
use crate::target::Machine;
use rustc_hash::FxHashMap;

/// Default code when a poll runs out of its bound: -ETIMEDOUT, as Linux
/// drivers return.
pub const DEFAULT_POLL_FAIL: i64 = -110;
/// What a `while` returns when it is still running at its limit (-EINVAL:
/// the bound the author proved did not hold, so the input was not one the
/// loop was written for).
pub const DEFAULT_WHILE_FAIL: i64 = -22;

pub fn check(source_name: &str, source_text: &str, spec: &ast::Spec) -> Result<Program, Diag> {
    // Queue statements become plain ones first (see `spec::queue`); a
    // spec without queues or records is checked as written (no copy).
    let lowered;
    let spec = if spec.queues.is_empty() && spec.records.is_empty() {
        crate::spec::queue::no_queue_statements(spec)?;
        spec
    } else {
        let mut s = spec.clone();
        crate::spec::queue::lower(&mut s)?;
        lowered = s;
        &lowered
    };
    let records = crate::spec::queue::check_records(spec)?;
    // An empty spec (or one of only comments and `target` lines) is an
    // error rather than a header with nothing in it: it is almost always a
    // wrong path or a truncated file, and a build should stop there.
    if spec.devices.is_empty() && spec.seqs.is_empty() {
        return Err(Diag::new(
            crate::spec::diag::Span::new(0, 0),
            "spec declares no device and no sequence",
        )
        .label("nothing to generate")
        .help("a spec needs at least one `device` or `seq`"));
    }
    let mut targets = Vec::new();
    for t in &spec.targets {
        if crate::target::Target::from_name(&t.name).is_none() {
            let names: Vec<&str> = crate::target::Target::ALL
                .iter()
                .map(|t| t.name())
                .collect();
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
    let (machine, machine_span) = check_machine(spec, &targets)?;

    // Name lookups go through maps built as declarations are checked: a
    // spec may declare hundreds of thousands of devices, registers, fields
    // or sequences, and checking stays linear in its size.
    let mut devices: Vec<Device> = Vec::new();
    let mut device_ids: FxHashMap<&str, DevId> = FxHashMap::default();
    for d in &spec.devices {
        if let Some(prev) = device_ids.get(d.name.name.as_str()).map(|&i| &devices[i]) {
            return Err(Diag::new(
                d.name.span,
                format!("device `{}` defined twice", d.name.name),
            )
            .label("second definition")
            .related(prev.span, "first defined here"));
        }
        if let Some(why) = crate::emit::names::reserved(&d.name.name) {
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
    let index = Index::new(&devices);

    let mut granules: Vec<GranuleSet> = Vec::new();
    let mut granule_ids: FxHashMap<&str, usize> = FxHashMap::default();
    for g in &spec.granules {
        if let Some(prev) = granule_ids.get(g.name.name.as_str()).map(|&i| &granules[i]) {
            return Err(Diag::new(
                g.name.span,
                format!("granule set `{}` defined twice", g.name.name),
            )
            .related(prev.span, "first defined here"));
        }
        granule_ids.insert(&g.name.name, granules.len());
        granules.push(
            match spec
                .queues
                .iter()
                .find(|q| Some(&q.name.name) == g.dev.as_ref().map(|d| &d.name))
            {
                Some(q) => check_queue_granules(spec, q, g)?,
                None => check_granules(&devices, g)?,
            },
        );
    }
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

    let features = check_features(spec)?;

    let mut seqs: Vec<Seq> = Vec::new();
    let mut seq_ids: FxHashMap<&str, usize> = FxHashMap::default();
    let mut next_op = 0u32;
    let mut next_group = 0u32;
    for s in &spec.seqs {
        if let Some(prev) = seq_ids.get(s.name.name.as_str()).map(|&i| &seqs[i]) {
            return Err(Diag::new(
                s.name.span,
                format!("sequence `{}` defined twice", s.name.name),
            )
            .label("second definition")
            .related(prev.span, "first defined here"));
        }
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
                    return Err(Diag::new(
                        of.span,
                        format!("`{}` is not a pointer parameter", of.name),
                    )
                    .label("not a pointer")
                    .help("`phys PTR` names the `ptr` parameter whose physical address this is"))
                }
                None => {
                    return Err(Diag::new(of.span, format!("no parameter `{}`", of.name))
                        .label("unknown parameter"))
                }
            }
        }
        let mut cx = SeqCx {
            index: &index,
            devices: &devices,
            granules: &granules,
            thresholds: &thresholds,
            seq_name: s.name.name.clone(),
            in_cover: Vec::new(),
            params: &params,
            locals: Vec::new(),
            scope: Vec::new(),
            orders: Vec::new(),
            in_each: Vec::new(),
            used: Vec::new(),
            next_op: &mut next_op,
            next_group: &mut next_group,
            ptrs: &ptrs,
            pending: Vec::new(),
            status: None,
            void: s.void,
            features: &features,
            feature_word: None,
            lets: Vec::new(),
            declared: let_decls(&s.body),
        };
        let body = cx.block(&s.body)?;
        let feature_word = cx.feature_word;
        let status = cx.status;
        let locals = std::mem::take(&mut cx.locals);
        let orders = std::mem::take(&mut cx.orders);
        let mut used = cx.used;
        used.sort_unstable();
        used.dedup();
        check_c_params(&devices, &used, s)?;
        if let Some(w) = feature_word {
            // The feature word is the last argument (README, "CPU features
            // and errata"); `verify`, `trace --arg features=...` and the
            // header treat it as the parameter it is.
            if let Some(p) = s.params.iter().find(|p| p.name.name == "features") {
                return Err(Diag::new(
                    p.name.span,
                    "a sequence that tests `feature`s takes the feature word as its parameter `features`",
                )
                .label("name taken")
                .help("rename this parameter"));
            }
            debug_assert_eq!(w, params.len());
            params.push("features".to_string());
            ptrs.push(None);
            private.push(false);
            ctypes.push(Some("unsigned long"));
            phys.push(None);
        }
        let mut seq = Seq {
            name: s.name.name.clone(),
            span: s.name.span,
            params,
            devices: used,
            body,
            edges: Vec::new(),
            locals,
            orders,
            ptrs,
            private,
            ctypes,
            phys,
            void: s.void,
            status,
            feature_word,
            notes: Vec::new(),
        };
        seq.edges = order::required_edges(&devices, &seq.body, &seq.orders);
        seq_ids.insert(&s.name.name, seqs.len());
        seqs.push(seq);
    }

    check_threshold_names(spec, &seqs)?;
    let queues = check_queues(spec, &devices)?;
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

/// Resolve each queue's device and registers (for the header and the
/// simulated consumer; the statements were rewritten already).
fn check_queues(spec: &ast::Spec, devices: &[Device]) -> Result<Vec<Queue>, Diag> {
    spec.queues
        .iter()
        .map(|q| {
            let dev = devices
                .iter()
                .position(|d| d.name == q.dev.name)
                .ok_or_else(|| {
                    Diag::new(q.dev.span, format!("unknown device `{}`", q.dev.name))
                        .label("not declared")
                })?;
            let d = &devices[dev];
            let reg = |n: &ast::Ident| find_reg(&d.regs, &d.name, n);
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
            if crate::features::patching_of(&c.name).is_none() {
                return Err(Diag::new(
                    c.span,
                    format!(
                        "`{}` is not a kernel capability shootdown can patch",
                        c.name
                    ),
                )
                .label("unknown kind of capability")
                .help(crate::features::CAPABILITY_HELP));
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
        if let Some(why) = crate::emit::names::reserved(n) {
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
        for g in crate::model::expr_threshold_sets(s) {
            read.push(crate::model::threshold_name(
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

/// `granules NAME on QUEUE { 4K via RECORD ... all via RECORD }`: what one
/// command covers and costs, for `threshold(NAME)` (a cover cannot choose
/// among commands: its body maps register writes and instructions).
fn check_queue_granules(
    spec: &ast::Spec,
    q: &ast::Queue,
    g: &ast::Granules,
) -> Result<GranuleSet, Diag> {
    let mut entries: Vec<Granule> = Vec::new();
    for e in &g.entries {
        let size = match &e.size {
            ast::GranuleSize::Bytes(b) if b.is_power_of_two() => GSize::Bytes(*b),
            ast::GranuleSize::Param(p) => GSize::Param(p.name.clone()),
            ast::GranuleSize::All => GSize::All,
            _ => {
                return Err(Diag::new(
                    e.span,
                    "a queue granule is a power-of-two size, `size PARAM` or `all`",
                ))
            }
        };
        if entries.iter().any(|x| x.size == size) {
            return Err(Diag::new(e.span, "granule size listed twice"));
        }
        if !e.sets.is_empty() || e.addr.is_some() {
            return Err(Diag::new(e.span, "a queue granule names its command only")
                .help("write `SIZE via RECORD`; the command's fields are set by `enqueue`"));
        }
        let Some(v) = &e.via else {
            return Err(Diag::new(e.span, "a queue granule needs `via RECORD`"));
        };
        let Some(r) = spec.records.iter().find(|r| r.name.name == v.name) else {
            return Err(Diag::new(v.span, format!("no record `{}`", v.name))
                .label("not a record")
                .related(q.name.span, format!("queue `{}`", q.name.name)));
        };
        if r.size != q.entry {
            return Err(Diag::new(
                v.span,
                format!(
                    "record `{}` is {} bytes, queue `{}` takes {}",
                    r.name.name, r.size, q.name.name, q.entry
                ),
            ));
        }
        entries.push(Granule {
            size,
            bits: 0,
            reg_bits: Vec::new(),
            addr: None,
            via: Some(Via::Record(v.name.clone())),
            set_regs: Vec::new(),
            span: e.span,
        });
    }
    if entries.is_empty() {
        return Err(Diag::new(g.span, "a granule set needs at least one entry"));
    }
    Ok(GranuleSet {
        name: g.name.name.clone(),
        span: g.name.span,
        dev: None,
        entries,
        costs: check_costs(g)?,
    })
}

fn check_granules(devices: &[Device], g: &ast::Granules) -> Result<GranuleSet, Diag> {
    let dev = match &g.dev {
        None => None,
        Some(d) => Some(
            devices
                .iter()
                .position(|x| x.name == d.name)
                .ok_or_else(|| {
                    Diag::new(d.span, format!("unknown device `{}`", d.name)).label("not declared")
                })?,
        ),
    };
    let reg_of = |id: &ast::Ident| -> Result<RegId, Diag> {
        let Some(d) = dev else {
            return Err(Diag::new(
                id.span,
                "register named in a granule set without `on DEVICE`",
            )
            .help("write `granules NAME on DEVICE { ... }`"));
        };
        find_reg(&devices[d].regs, &devices[d].name, id)
    };
    let mut entries: Vec<Granule> = Vec::new();
    for e in &g.entries {
        let size = match &e.size {
            ast::GranuleSize::Bytes(b) => {
                if *b == 0 || !b.is_power_of_two() {
                    return Err(Diag::new(e.span, "granule sizes are powers of two")
                        .label("not a power of two"));
                }
                GSize::Bytes(*b)
            }
            ast::GranuleSize::Param(p) => GSize::Param(p.name.clone()),
            ast::GranuleSize::All => GSize::All,
            ast::GranuleSize::Range => GSize::Range,
        };
        if entries.iter().any(|x| x.size == size) {
            return Err(Diag::new(e.span, "granule size listed twice"));
        }
        let mut bits = 0u64;
        let mut reg_bits: Vec<(RegId, u64)> = Vec::new();
        let mut set_regs = Vec::new();
        for (reg, field, value) in &e.sets {
            let r = reg_of(reg)?;
            if !set_regs.contains(&r) {
                set_regs.push(r);
            }
            let d = dev.unwrap_or(0);
            let f = devices[d]
                .fields
                .iter()
                .find(|f| f.reg == r && f.name == field.name)
                .ok_or_else(|| {
                    Diag::new(
                        field.span,
                        format!("register `{}` has no field `{}`", reg.name, field.name),
                    )
                    .label("unknown field")
                })?;
            let v = match value {
                ast::Expr::Int { value, .. } => *value,
                other => {
                    return Err(
                        Diag::new(other.span(), "granule field settings are constants")
                            .label("not a number"),
                    )
                }
            };
            if f.width < 64 && v >> f.width != 0 {
                return Err(Diag::new(
                    value.span(),
                    format!("{v:#x} does not fit the {}-bit field `{}`", f.width, f.name),
                )
                .label("too large"));
            }
            bits |= (v << f.shift) & f.mask();
            match reg_bits.iter_mut().find(|(x, _)| *x == r) {
                Some((_, b)) => *b |= (v << f.shift) & f.mask(),
                None => reg_bits.push((r, (v << f.shift) & f.mask())),
            }
        }
        let addr = e.addr.as_ref().map(reg_of).transpose()?;
        if addr.is_some() && size == GSize::All {
            return Err(Diag::new(e.span, "`all` takes no address").label("remove `addr`"));
        }
        let via = match &e.via {
            None => None,
            Some(v) if v.name.starts_with("tlbi ") => Some(Via::Insn(v.name.clone())),
            // RISC-V `sfence.vma` / `sinval.vma`, ` x0` for a whole ASID.
            Some(v) if v.name.starts_with("sfence.vma") || v.name.starts_with("sinval.vma") => {
                Some(Via::Insn(v.name.clone()))
            }
            // `via tlbie 2, 1, 1`: the parser has folded RIC, PRS, R.
            Some(v) if v.name.starts_with("tlbie ") || v.name.starts_with("tlbiel ") => {
                Some(Via::Insn(v.name.clone()))
            }
            Some(v) if matches!(v.name.as_str(), "tlbie" | "tlbiel" | "invlpg") => {
                return Err(Diag::new(
                    v.span,
                    format!("`via {}`: a granule set launches through a device register, `tlbi OP` or `tlbie RIC, PRS, R`", v.name),
                )
                .label("not supported as `via`")
                .help(format!(
                    "issue `{}` from the sequence (inside the `cover`), or launch through a register of `granules NAME on DEVICE`",
                    v.name
                )));
            }
            Some(v) => Some(Via::Reg(reg_of(v)?)),
        };
        entries.push(Granule {
            size,
            bits,
            reg_bits,
            addr,
            via,
            set_regs,
            span: e.span,
        });
    }
    if entries.is_empty() {
        return Err(Diag::new(g.span, "a granule set needs at least one entry"));
    }
    Ok(GranuleSet {
        name: g.name.name.clone(),
        span: g.name.span,
        dev,
        entries,
        costs: check_costs(g)?,
    })
}

/// The `cost KIND N ns` lines of a granule set.
fn check_costs(g: &ast::Granules) -> Result<Costs, Diag> {
    let mut costs = Costs::default();
    for (k, v) in &g.costs {
        let slot = match k.name.as_str() {
            "invalidate" | "op" => &mut costs.invalidate,
            "store" => &mut costs.store,
            "barrier" => &mut costs.barrier,
            "refill" => &mut costs.refill,
            "all" => &mut costs.all,
            _ => {
                return Err(Diag::new(k.span, format!("unknown cost `{}`", k.name))
                    .help("costs are invalidate, store, barrier, refill, all"))
            }
        };
        *slot = *v;
    }
    Ok(costs)
}

fn check_device(d: &ast::Device) -> Result<Device, Diag> {
    let instances = match d.instances {
        None => Instances::Single,
        Some(ast::Instances::Fixed { count, span }) => match count {
            0 => return Err(Diag::new(span, "a device needs at least one instance")),
            1 => Instances::Single,
            n if n > 4096 => {
                return Err(Diag::new(span, "more than 4096 fixed instances")
                    .help("use `instances dynamic max N`"))
            }
            n => Instances::Fixed(n),
        },
        Some(ast::Instances::Dynamic { max, span }) => {
            if max == 0 || max > 1 << 20 {
                return Err(Diag::new(
                    span,
                    "dynamic instance maximum must be between 1 and 1048576",
                ));
            }
            Instances::Dynamic { max }
        }
    };
    let mapping = match &d.mapping {
        None => Mapping::Strong,
        Some(m) => match m.name.as_str() {
            "nGnRnE" | "nGnRE" | "strong" | "uncached" | "guarded" => Mapping::Strong,
            "nGRE" | "GRE" | "weak" | "wc" => Mapping::Weak,
            _ => {
                return Err(Diag::new(m.span, format!("unknown mapping `{}`", m.name))
                    .help("use nGnRnE, nGnRE (ordered per peripheral) or nGRE, GRE (reordering)"))
            }
        },
    };

    let mut regs: Vec<Reg> = Vec::new();
    let mut reg_ids: FxHashMap<&str, RegId> = FxHashMap::default();
    // Registers by offset: a new one can only overlap its neighbours.
    let mut by_offset: std::collections::BTreeMap<u64, RegId> = Default::default();
    for r in &d.regs {
        if let Some(prev) = reg_ids.get(r.name.name.as_str()).map(|&i| &regs[i]) {
            return Err(Diag::new(
                r.name.span,
                format!("register `{}` defined twice", r.name.name),
            )
            .related(prev.span, "first defined here"));
        }
        let bytes = u64::from(r.width / 8);
        if r.offset % bytes != 0 {
            return Err(Diag::new(
                r.offset_span,
                format!(
                    "register `{}` at {:#x} is not aligned to its width ({} bytes)",
                    r.name.name, r.offset, bytes
                ),
            )
            .label("misaligned offset"));
        }
        if r.offset > 1 << 32 {
            return Err(Diag::new(r.offset_span, "register offset beyond 4 GiB"));
        }
        let (a0, a1) = (r.offset, r.offset + bytes);
        let neighbours = by_offset
            .range(..=a0)
            .next_back()
            .into_iter()
            .chain(by_offset.range(a0..).next());
        for (_, &pi) in neighbours {
            let p = &regs[pi];
            let (b0, b1) = (p.offset, p.offset + u64::from(p.bytes()));
            if a0 < b1 && b0 < a1 {
                return Err(Diag::new(
                    r.span,
                    format!("register `{}` overlaps register `{}`", r.name.name, p.name),
                )
                .label(format!("bytes {a0:#x}..{a1:#x}"))
                .related(p.span, format!("bytes {b0:#x}..{b1:#x}")));
            }
        }
        reg_ids.insert(&r.name.name, regs.len());
        by_offset.insert(a0, regs.len());
        regs.push(Reg {
            name: r.name.name.clone(),
            span: r.name.span,
            offset: r.offset,
            width: r.width,
            endian: r.endian,
        });
    }

    let mut fields: Vec<Field> = Vec::new();
    let mut field_ids: FxHashMap<(RegId, &str), FieldId> = FxHashMap::default();
    // Bits of each register taken by the fields so far.
    let mut taken = vec![0u64; regs.len()];
    for f in &d.fields {
        let reg = match reg_ids.get(f.reg.name.as_str()) {
            Some(&r) => r,
            None => find_reg(&regs, &d.name.name, &f.reg)?,
        };
        let width_bits = u64::from(regs[reg].width);
        let (lo_written, hi_written) = (f.first.min(f.last), f.first.max(f.last));
        if hi_written >= width_bits {
            return Err(Diag::new(
                f.bits_span,
                format!(
                    "bit {hi_written} is outside the {width_bits}-bit register `{}`",
                    regs[reg].name
                ),
            )
            .label("too wide")
            .help(format!(
                "bits of a {width_bits}-bit register are numbered 0..{}",
                width_bits - 1
            )));
        }
        if f.numbering == Numbering::Msb0 && f.first > f.last {
            return Err(Diag::new(
                f.bits_span,
                "MSB0 bit ranges are written first..last with first <= last",
            )
            .help("IBM numbering counts bit 0 as the most significant"));
        }
        let width = (hi_written - lo_written + 1) as u32;
        let shift = match f.numbering {
            Numbering::Msb0 => (width_bits - 1 - hi_written) as u32,
            Numbering::Lsb0 => lo_written as u32,
        };
        if let Some(prev) = field_ids
            .get(&(reg, f.name.name.as_str()))
            .map(|&i| &fields[i])
        {
            return Err(Diag::new(
                f.name.span,
                format!("field `{}.{}` defined twice", regs[reg].name, f.name.name),
            )
            .related(prev.span, "first defined here"));
        }
        let mask = field_mask(shift, width);
        let clash = (taken[reg] & mask != 0)
            .then(|| fields.iter().find(|p| p.reg == reg && p.mask() & mask != 0))
            .flatten();
        if let Some(prev) = clash {
            return Err(Diag::new(
                f.bits_span,
                format!(
                    "field `{}` overlaps field `{}` in register `{}`",
                    f.name.name, prev.name, regs[reg].name
                ),
            )
            .label(format!("mask {mask:#x}"))
            .related(prev.span, format!("mask {:#x}", prev.mask())));
        }
        taken[reg] |= mask;
        field_ids.insert((reg, &f.name.name), fields.len());
        fields.push(Field {
            reg,
            name: f.name.name.clone(),
            span: f.name.span,
            shift,
            width,
            numbering: f.numbering,
            first: f.first,
            last: f.last,
        });
    }

    let mut requires = Vec::new();
    let mut after_stores = Vec::new();
    for r in &d.requires {
        if r.before.name == "stores" && !reg_ids.contains_key("stores") {
            let after = find_reg(&regs, &d.name.name, &r.after)?;
            after_stores.push((after, r.span));
            continue;
        }
        let before = find_reg(&regs, &d.name.name, &r.before)?;
        let after = find_reg(&regs, &d.name.name, &r.after)?;
        requires.push(Require {
            before,
            after,
            scope: r.scope,
            span: r.span,
        });
    }

    Ok(Device {
        name: d.name.name.clone(),
        span: d.name.span,
        instances,
        mapping,
        regs,
        fields,
        requires,
        after_stores,
    })
}

/// Name lookups of the checked devices (see `check`).
struct Index<'a> {
    devices: FxHashMap<&'a str, DevId>,
    regs: Vec<FxHashMap<&'a str, RegId>>,
    fields: Vec<FxHashMap<(RegId, &'a str), FieldId>>,
}

impl<'a> Index<'a> {
    fn new(devices: &'a [Device]) -> Index<'a> {
        Index {
            devices: devices
                .iter()
                .enumerate()
                .map(|(i, d)| (d.name.as_str(), i))
                .collect(),
            regs: devices
                .iter()
                .map(|d| {
                    d.regs
                        .iter()
                        .enumerate()
                        .map(|(i, r)| (r.name.as_str(), i))
                        .collect()
                })
                .collect(),
            fields: devices
                .iter()
                .map(|d| {
                    d.fields
                        .iter()
                        .enumerate()
                        .map(|(i, f)| ((f.reg, f.name.as_str()), i))
                        .collect()
                })
                .collect(),
        }
    }
}

fn find_reg(regs: &[Reg], dev: &str, name: &ast::Ident) -> Result<RegId, Diag> {
    regs.iter()
        .position(|r| r.name == name.name)
        .ok_or_else(|| {
            let mut d = Diag::new(
                name.span,
                format!("device `{dev}` has no register `{}`", name.name),
            )
            .label("unknown register");
            if let Some(s) = closest(&name.name, regs.iter().map(|r| r.name.as_str())) {
                d = d.help(format!("did you mean `{s}`?"));
            }
            d
        })
}

/// A spelling suggestion: the candidate within edit distance 2.
fn closest<'a>(name: &str, candidates: impl Iterator<Item = &'a str>) -> Option<&'a str> {
    fn dist(a: &str, b: &str) -> usize {
        let b: Vec<char> = b.chars().collect();
        let mut prev: Vec<usize> = (0..=b.len()).collect();
        for (i, ca) in a.chars().enumerate() {
            let mut cur = vec![i + 1];
            for (j, cb) in b.iter().enumerate() {
                let sub = prev[j] + usize::from(ca != *cb);
                cur.push(sub.min(prev[j + 1] + 1).min(cur[j] + 1));
            }
            prev = cur;
        }
        prev[b.len()]
    }
    candidates
        .map(|c| (dist(name, c), c))
        .filter(|(d, _)| *d <= 2)
        .min_by_key(|(d, _)| *d)
        .map(|(_, c)| c)
}

struct SeqCx<'a> {
    index: &'a Index<'a>,
    devices: &'a [Device],
    granules: &'a [GranuleSet],
    /// `threshold NAME = V` of the spec.
    thresholds: &'a [(String, u64)],
    seq_name: String,
    /// Granule sets of the `cover`s we are inside.
    in_cover: Vec<usize>,
    params: &'a [String],
    /// Loop variables: all declared (by index) and those in scope.
    locals: Vec<String>,
    scope: Vec<usize>,
    /// `order stores before invalidates`, `order invalidates before return`.
    orders: Vec<(String, String, crate::spec::diag::Span)>,
    in_each: Vec<DevId>,
    used: Vec<DevId>,
    next_op: &'a mut u32,
    next_group: &'a mut u32,
    /// Element width of each pointer parameter.
    ptrs: &'a [Option<u32>],
    /// Loads of `p[OFF]` read by the statement being checked: they are
    /// placed right before it (one per read, as written).
    pending: Vec<Stmt>,
    /// The `acquire ... held` status local.
    status: Option<usize>,
    void: bool,
    features: &'a [Feature],
    /// Set at the first `feature NAME`: the index the feature word
    /// parameter will have (after the declared ones).
    feature_word: Option<usize>,
    /// `let` locals (assignable; range variables and the status are not).
    lets: Vec<usize>,
    /// Every `let` of the sequence by name, wherever it is: to tell "used
    /// before its `let`" from an unknown name.
    declared: Vec<(String, Span)>,
}

impl SeqCx<'_> {
    /// `threshold(SET)`: the set must have a granule to loop with, a
    /// flush-all, both through instructions, and costs or a pinned value.
    fn threshold_of(&self, args: &[ast::Expr], span: Span) -> Result<Expr, Diag> {
        let [ast::Expr::Name(set)] = args else {
            return Err(Diag::new(span, "`threshold` takes one granule set name")
                .label("e.g. `threshold(radix64k)`"));
        };
        let Some(i) = self.granules.iter().position(|g| g.name == set.name) else {
            return Err(
                Diag::new(set.span, format!("no granule set `{}`", set.name))
                    .label("not a granule set"),
            );
        };
        let g = &self.granules[i];
        let insn = |e: Option<&Granule>| {
            e.is_some_and(|e| matches!(e.via, Some(Via::Insn(_) | Via::Record(_))))
        };
        if !insn(crate::model::loop_entry(g)) || !insn(crate::model::all_entry(g)) {
            return Err(Diag::new(
                set.span,
                format!("`threshold({})` needs a sized granule and an `all` granule, each `via` an instruction", set.name),
            )
            .label("no such pair in this set")
            .related(g.span, "granule set"));
        }
        let name = crate::model::threshold_name(&self.seq_name, &g.name);
        let pinned = self.thresholds.iter().any(|(n, _)| *n == name);
        if g.costs.invalidate == 0 && !pinned {
            return Err(Diag::new(
                span,
                format!("`threshold({})` needs costs to derive it from", set.name),
            )
            .label("no `cost invalidate` in the set")
            .related(g.span, "granule set")
            .help(format!("state `cost invalidate N ns` and `cost all N ns` in the set, or pin `threshold {name} = N`")));
        }
        Ok(Expr::Binding(Binding::Threshold(i)))
    }

    fn block(&mut self, body: &[ast::Stmt]) -> Result<Vec<Stmt>, Diag> {
        let mark = self.scope.len();
        let r = self.block_inner(body);
        // A `let` is visible to the end of its block.
        let lets = &self.lets;
        let mut i = mark;
        while i < self.scope.len() {
            if lets.contains(&self.scope[i]) {
                self.scope.remove(i);
            } else {
                i += 1;
            }
        }
        r
    }

    fn block_inner(&mut self, body: &[ast::Stmt]) -> Result<Vec<Stmt>, Diag> {
        let mut out = Vec::new();
        for (i, s) in body.iter().enumerate() {
            if let ast::Stmt::Return { span, .. } = s {
                if let Some(next) = body.get(i + 1) {
                    let _ = span;
                    return Err(Diag::new(
                        stmt_span(next),
                        "statement after `return` is never executed",
                    )
                    .label("unreachable"));
                }
            }
            let saved = std::mem::take(&mut self.pending);
            let st = self.stmt(s)?;
            let loads = std::mem::replace(&mut self.pending, saved);
            out.extend(loads);
            if matches!(&st, Stmt::Barrier { name, .. } if name.is_empty()) {
                continue;
            }
            out.push(st);
        }
        out.shrink_to_fit();
        Ok(out)
    }

    fn device(&self, name: &ast::Ident) -> Result<DevId, Diag> {
        self.index
            .devices
            .get(name.name.as_str())
            .copied()
            .ok_or_else(|| {
                let mut d = Diag::new(name.span, format!("unknown device `{}`", name.name))
                    .label("not declared");
                if let Some(s) = closest(&name.name, self.devices.iter().map(|d| d.name.as_str())) {
                    d = d.help(format!("did you mean `{s}`?"));
                }
                d
            })
    }

    fn op_id(&mut self) -> OpId {
        let id = OpId(*self.next_op);
        *self.next_op += 1;
        id
    }

    /// Resolve `dev.reg[.field]` where `dev` must be addressable here.
    fn path(&mut self, p: &ast::Path) -> Result<(DevId, RegId, Option<FieldId>), Diag> {
        if p.parts.len() < 2 {
            return Err(Diag::new(p.span, "expected `device.register`").label("incomplete path"));
        }
        if p.parts.len() > 3 {
            return Err(Diag::new(
                p.span,
                "expected `device.register` or `device.register.field`",
            ));
        }
        let dev = self.device(&p.parts[0])?;
        let d = &self.devices[dev];
        if d.instances != Instances::Single && !self.in_each.contains(&dev) {
            return Err(Diag::new(
                p.parts[0].span,
                format!(
                    "device `{}` has several instances; access it inside `each {}`",
                    d.name, d.name
                ),
            )
            .label("which instance?"));
        }
        let reg = match self.index.regs[dev].get(p.parts[1].name.as_str()) {
            Some(&r) => r,
            None => find_reg(&d.regs, &d.name, &p.parts[1])?,
        };
        let field = match p.parts.get(2) {
            None => None,
            Some(f) => Some(self.field(dev, reg, f)?),
        };
        self.used.push(dev);
        Ok((dev, reg, field))
    }

    fn field(&self, dev: DevId, reg: RegId, f: &ast::Ident) -> Result<FieldId, Diag> {
        let d = &self.devices[dev];
        self.index.fields[dev]
            .get(&(reg, f.name.as_str()))
            .copied()
            .ok_or_else(|| {
                let mut diag = Diag::new(
                    f.span,
                    format!(
                        "register `{}.{}` has no field `{}`",
                        d.name, d.regs[reg].name, f.name
                    ),
                )
                .label("unknown field");
                let names = d
                    .fields
                    .iter()
                    .filter(|x| x.reg == reg)
                    .map(|x| x.name.as_str());
                if let Some(s) = closest(&f.name, names) {
                    diag = diag.help(format!("did you mean `{s}`?"));
                }
                diag
            })
    }

    /// Resolve `p[OFF]` to a memory reference.
    /// A lock word or other location at a constant offset.
    fn mem_ref(&self, e: &ast::Expr) -> Result<MemRef, Diag> {
        let ast::Expr::Mem {
            ptr,
            offset,
            index,
            span,
        } = e
        else {
            return Err(Diag::new(
                e.span(),
                "expected a pointer parameter (`p` or `p[OFFSET]`)",
            ));
        };
        if let Some(ix) = index {
            return Err(Diag::new(ix.span(), "a lock word needs a constant offset")
                .label("computed at run time"));
        }
        let (i, width) = self.ptr_param(ptr)?;
        self.fixed(i, width, *offset, *span)
    }

    /// A location at a constant or a run-time byte offset.
    fn place(&mut self, e: &ast::Expr) -> Result<Place, Diag> {
        let ast::Expr::Mem {
            ptr,
            index: Some(ix),
            span,
            ..
        } = e
        else {
            return Ok(Place::Fixed(self.mem_ref(e)?));
        };
        let (i, width) = self.ptr_param(ptr)?;
        let v = self.expr(ix, None)?;
        Ok(match v.as_const() {
            Some(c) => Place::Fixed(self.fixed(i, width, c, *span)?),
            None => Place::At {
                ptr: i,
                width,
                index: v,
            },
        })
    }

    /// Pointer parameter `ptr`: its index and element width.
    fn ptr_param(&self, ptr: &ast::Ident) -> Result<(usize, u32), Diag> {
        let i = self
            .params
            .iter()
            .position(|p| p == &ptr.name)
            .ok_or_else(|| {
                Diag::new(ptr.span, format!("unknown name `{}`", ptr.name)).label("not a parameter")
            })?;
        let Some(width) = self.ptrs[i] else {
            return Err(Diag::new(
                ptr.span,
                format!("`{}` is an integer, not a pointer", ptr.name),
            )
            .help(format!(
                "declare it as `{}: ptr u8` (u16, u32, u64)",
                ptr.name
            )));
        };
        Ok((i, width))
    }

    fn fixed(&self, i: usize, width: u32, offset: u64, span: Span) -> Result<MemRef, Diag> {
        let offset = &offset;
        let span = &span;
        if !offset.is_multiple_of(u64::from(width / 8)) || *offset > 0x7ff0 {
            return Err(Diag::new(
                *span,
                format!("offset {offset:#x} is not aligned to the {width}-bit element (or beyond 0x7ff0)"),
            ));
        }
        Ok(MemRef {
            ptr: i,
            offset: *offset,
            width,
        })
    }

    fn lock_value(&mut self, v: &ast::LockValue, width: u32) -> Result<LockValue, Diag> {
        Ok(match v {
            ast::LockValue::Bit(b, s) => {
                if *b >= u64::from(width) {
                    return Err(Diag::new(
                        *s,
                        format!("bit {b} is outside the {width}-bit lock"),
                    ));
                }
                LockValue::Bit(*b as u32)
            }
            ast::LockValue::Owner(e) => {
                let before = self.pending.len();
                let v = self.expr(e, None)?;
                if self.pending.len() != before {
                    return Err(Diag::new(e.span(), "a lock value cannot read memory")
                        .help("read it into a store first, or pass it as a parameter"));
                }
                if let Some(c) = v.as_const() {
                    if width < 64 && c >> width != 0 {
                        return Err(Diag::new(
                            e.span(),
                            format!("{c:#x} does not fit the {width}-bit lock"),
                        ));
                    }
                }
                LockValue::Owner(v)
            }
        })
    }

    fn negative_code(&mut self, e: &ast::Expr, what: &str) -> Result<i64, Diag> {
        let v = self.expr(e, None)?;
        match v.as_const().map(|c| c as i64) {
            Some(c) if c < 0 => Ok(c),
            _ => Err(
                Diag::new(e.span(), format!("{what} must be a negative constant"))
                    .label("not a negative constant"),
            ),
        }
    }

    /// A `let` local in scope by that name, else why not.
    fn assignable(&self, name: &ast::Ident) -> Result<usize, Diag> {
        let found = self
            .scope
            .iter()
            .rev()
            .find(|&&l| self.locals[l] == name.name)
            .copied();
        match found {
            Some(l) if self.lets.contains(&l) => Ok(l),
            Some(_) => Err(
                Diag::new(name.span, format!("cannot assign to `{}`", name.name))
                    .label("a loop variable or lock status, not a `let` local")
                    .help("copy it into a local: `let v = ...`"),
            ),
            None if self.params.contains(&name.name) => Err(Diag::new(
                name.span,
                format!("cannot assign to parameter `{}`", name.name),
            )
            .label("parameters are read-only")
            .help(format!(
                "copy it into a local first: `let {0}_left = {0}`",
                name.name
            ))),
            None if self.index.devices.contains_key(name.name.as_str()) => Err(Diag::new(
                name.span,
                format!("`{}` is a device, not a local", name.name),
            )
            .label("write one of its registers")
            .help(format!("write `{}.REG = VALUE`", name.name))),
            None => Err(self.undefined(name)),
        }
    }

    /// An unknown name: unknown, or a `let` used outside its block or
    /// before it.
    fn undefined(&self, n: &ast::Ident) -> Diag {
        if let Some((_, at)) = self.declared.iter().find(|(d, _)| *d == n.name) {
            return Diag::new(n.span, format!("`{}` is not defined here", n.name))
                .label("used before its `let`, or outside the block of its `let`")
                .related(*at, "declared here");
        }
        let mut d =
            Diag::new(n.span, format!("unknown name `{}`", n.name)).label("not a parameter");
        if let Some(s) = closest(&n.name, self.params.iter().map(String::as_str)) {
            d = d.help(format!("did you mean `{s}`?"));
        }
        d
    }

    fn stmt(&mut self, s: &ast::Stmt) -> Result<Stmt, Diag> {
        if !self.in_cover.is_empty()
            && matches!(
                s,
                ast::Stmt::Let { .. } | ast::Stmt::Assign { .. } | ast::Stmt::While { .. }
            )
        {
            // The keyword, not the whole loop: one line to point at.
            let at = match s {
                ast::Stmt::While { span, .. } => Span::new(span.offset, "while".len()),
                _ => stmt_span(s),
            };
            return Err(Diag::new(
                at,
                "locals and `while` are not allowed in a `cover` body",
            )
            .label("inside a cover")
            .help("the body is copied once per granule and run once per operation: compute the value before the `cover`"));
        }
        if !self.in_cover.is_empty()
            && matches!(
                s,
                ast::Stmt::Acquire { .. } | ast::Stmt::Release { .. } | ast::Stmt::MemWrite { .. }
            )
        {
            return Err(Diag::new(
                stmt_span(s),
                "locks and memory stores are not allowed in a `cover` body",
            ));
        }
        Ok(match s {
            // Rewritten by `spec::queue` before checking.
            ast::Stmt::Enqueue { span, .. }
            | ast::Stmt::Issue { span, .. }
            | ast::Stmt::Wait { span, .. } => {
                return Err(Diag::new(*span, "queue statement was not rewritten"))
            }
            ast::Stmt::Acquire {
                mem,
                value,
                held,
                limit,
                fail,
                span,
            } => {
                let m = self.mem_ref(mem)?;
                let value = self.lock_value(value, m.width)?;
                let held = match held {
                    None => None,
                    Some(h) => {
                        if matches!(value, LockValue::Bit(_)) {
                            return Err(Diag::new(
                                h.span(),
                                "a bit lock has no owner to detect recursion with",
                            ));
                        }
                        if self.status.is_some() {
                            return Err(Diag::new(
                                h.span(),
                                "only one `acquire ... held` per sequence",
                            ));
                        }
                        match self.expr(h, None)?.as_const() {
                            Some(c) if c != 0 && (c as i64) > 0 && c <= 0x7fff => Some(c),
                            _ => {
                                return Err(Diag::new(
                                    h.span(),
                                    "the `held` code is a positive constant (at most 0x7fff)",
                                )
                                .help("0 means `taken`; negative codes are failures"))
                            }
                        }
                    }
                };
                let limit = match (limit, fail) {
                    (None, None) => None,
                    (None, Some(f)) => {
                        return Err(Diag::new(f.span(), "`else return` needs a `limit`"))
                    }
                    (Some((n, ls)), f) => {
                        if *n == 0 || *n > 0x7fff_ffff {
                            return Err(Diag::new(
                                *ls,
                                "spin limit must be between 1 and 2147483647",
                            ));
                        }
                        let code = match f {
                            None => -16, // -EBUSY
                            Some(f) => self.negative_code(f, "a spin's failure code")?,
                        };
                        Some((*n, code))
                    }
                };
                if self.void && (held.is_some() || limit.is_some()) {
                    return Err(Diag::new(
                        *span,
                        "a `-> void` sequence cannot report `held` or a spin failure",
                    ));
                }
                if let LockValue::Owner(o) = &value {
                    // Taken means nonzero, and the lock stores the owner
                    // in `width` bits: an owner outside 1..2^width - 1
                    // would store 0 (a free lock) or another owner's
                    // value. Constants are checked here, run-time owners
                    // before the acquire (-EINVAL).
                    let fits = field_mask(0, m.width);
                    match o.as_const() {
                        Some(0) => {
                            return Err(Diag::new(
                                stmt_span(s),
                                "an owner of 0 would leave the lock free",
                            )
                            .label("owner 0"))
                        }
                        Some(_) => {}
                        None if self.void => {
                            return Err(Diag::new(
                                *span,
                                format!(
                                    "a `-> void` sequence cannot report a run-time owner that does not fit the {}-bit lock (or is 0)",
                                    m.width
                                ),
                            )
                            .help("remove `-> void`: the sequence then returns -22 for such an owner"))
                        }
                        None => self.pending.push(Stmt::If { rare: false,
                            // owner - 1 >= 2^width - 1, as owner + ~0 so
                            // that `cpu + 1` folds to `cpu`.
                            cond: Cond {
                                cmp: crate::lir::Cmp::Geu,
                                a: Expr::bin(BinOp::Add, o.clone(), Expr::Const(u64::MAX)),
                                b: Expr::Const(fits),
                            },
                            then_: vec![Stmt::Return {
                                value: Expr::Const(crate::passes::cover::EINVAL as u64),
                                span: *span,
                            }],
                            else_: Vec::new(),
                        }),
                    }
                }
                let status = held.map(|_| {
                    let l = self.locals.len();
                    self.locals.push("status".into());
                    self.scope.push(l);
                    self.status = Some(l);
                    l
                });
                Stmt::Mem {
                    id: self.op_id(),
                    op: MemOp::Acquire {
                        mem: m,
                        value,
                        held,
                        status,
                        limit,
                        fail_barrier: None,
                        hoisted: false,
                    },
                    span: *span,
                }
            }
            ast::Stmt::Release {
                mem,
                value,
                cond,
                span,
            } => {
                let m = self.mem_ref(mem)?;
                let value = match value {
                    None => LockValue::Owner(Expr::Const(0)),
                    Some(v) => self.lock_value(v, m.width)?,
                };
                let cond = cond.as_ref().map(|c| self.expr(c, None)).transpose()?;
                Stmt::Mem {
                    id: self.op_id(),
                    op: MemOp::Release {
                        mem: m,
                        value,
                        cond,
                        // Device accesses earlier in program order must be
                        // ordered before the releasing store too.
                        order: if self.used.is_empty() {
                            ReleaseOrder::Full
                        } else {
                            ReleaseOrder::Device
                        },
                    },
                    span: *span,
                }
            }
            ast::Stmt::MemWrite { mem, value, span } => {
                let place = self.place(mem)?;
                let width = place.width();
                let v = self.expr(value, None)?;
                if let Some(c) = v.as_const() {
                    if width < 64 && c >> width != 0 {
                        return Err(Diag::new(
                            value.span(),
                            format!("{c:#x} does not fit the {width}-bit element"),
                        ));
                    }
                }
                let op = match place {
                    Place::Fixed(m) => MemOp::Store { mem: m, value: v },
                    Place::At { ptr, width, index } => MemOp::StoreAt {
                        ptr,
                        width,
                        index,
                        value: v,
                    },
                };
                Stmt::Mem {
                    id: self.op_id(),
                    op,
                    span: *span,
                }
            }
            ast::Stmt::Range {
                var,
                start,
                size,
                step,
                body,
                span,
            } => {
                if self.params.contains(&var.name)
                    || self.scope.iter().any(|&l| self.locals[l] == var.name)
                {
                    return Err(Diag::new(
                        var.span,
                        format!("`{}` is already a name here", var.name),
                    )
                    .label("shadows a parameter or loop variable"));
                }
                let (start, size, step) = (self.expr(start, None)?, self.expr(size, None)?, {
                    let st = self.expr(step, None)?;
                    if st.as_const() == Some(0) {
                        return Err(Diag::new(step.span(), "a range step of 0 never advances")
                            .label("zero step"));
                    }
                    st
                });
                let local = self.locals.len();
                self.locals.push(var.name.clone());
                self.scope.push(local);
                let body = self.block(body)?;
                self.scope.pop();
                Stmt::Range {
                    local,
                    start,
                    size,
                    step,
                    body,
                    span: *span,
                    fail_barrier: None,
                }
            }
            ast::Stmt::Let { name, value, span } => {
                if self.params.contains(&name.name)
                    || self.scope.iter().any(|&l| self.locals[l] == name.name)
                {
                    return Err(Diag::new(
                        name.span,
                        format!("`{}` is already a name here", name.name),
                    )
                    .label("shadows a parameter, loop variable or local")
                    .help("choose another name, or assign the existing local: `NAME = VALUE`"));
                }
                // The value first: `let x = x` reads no `x`.
                let v = self.expr(value, None)?;
                let local = self.locals.len();
                self.locals.push(name.name.clone());
                self.scope.push(local);
                self.lets.push(local);
                Stmt::Assign {
                    local,
                    value: v,
                    span: *span,
                }
            }
            ast::Stmt::Assign { name, value, span } => {
                let local = self.assignable(name)?;
                let v = self.expr(value, None)?;
                Stmt::Assign {
                    local,
                    value: v,
                    span: *span,
                }
            }
            ast::Stmt::While {
                cond,
                limit,
                limit_span,
                fail,
                body,
                span,
            } => {
                if *limit == 0 || *limit > u64::from(u32::MAX) {
                    return Err(Diag::new(
                        *limit_span,
                        "while limit must be between 1 and 4294967295",
                    )
                    .label("iterations"));
                }
                let before = self.pending.len();
                let c = self.expr(cond, None)?;
                if self.pending.len() != before {
                    return Err(Diag::new(
                        cond.span(),
                        "memory reads are not allowed in a `while` condition",
                    )
                    .label("read once, not on every test")
                    .help("read it into a local before the loop and again at the end of the body: `let v = p[OFF]`, `v = p[OFF]`"));
                }
                let fail = match fail {
                    None => DEFAULT_WHILE_FAIL,
                    Some(e) => {
                        self.negative_code(e, "the code a `while` returns past its limit")?
                    }
                };
                let body = self.block(body)?;
                Stmt::While {
                    cond: Cond::of(c),
                    body,
                    limit: *limit,
                    fail,
                    span: *span,
                    fail_barrier: None,
                }
            }
            ast::Stmt::Invalidate {
                name,
                operands,
                after,
                span,
            } => {
                let ops = operands
                    .iter()
                    .map(|o| self.expr(o, None))
                    .collect::<Result<Vec<_>, _>>()?;
                let spans: Vec<Span> = operands.iter().map(|o| o.span()).collect();
                let (name, ops) = super::insn_imm::fold(&name.name, ops, &spans, *span)?;
                Stmt::Invalidate {
                    id: self.op_id(),
                    name,
                    operands: ops,
                    after: *after,
                    span: *span,
                }
            }
            ast::Stmt::Cover {
                start,
                size,
                set,
                mode,
                mode_span,
                body,
                span,
            } => {
                let si = self
                    .granules
                    .iter()
                    .position(|g| g.name == set.name)
                    .ok_or_else(|| {
                        Diag::new(set.span, format!("unknown granule set `{}`", set.name))
                            .label("not declared")
                    })?;
                let g = &self.granules[si];
                if g.entries
                    .iter()
                    .any(|e| matches!(e.via, Some(Via::Record(_))))
                {
                    return Err(Diag::new(
                        set.span,
                        format!(
                            "`{}` is a set of queue commands: a `cover` cannot choose among them",
                            set.name
                        ),
                    )
                    .label("queue granule set")
                    .help(format!(
                        "branch on `threshold({})` and `enqueue` the commands in a `range` loop",
                        set.name
                    )));
                }
                for e in &g.entries {
                    if let GSize::Param(p) = &e.size {
                        if !self.params.contains(p) {
                            return Err(Diag::new(
                                e.span,
                                format!(
                                    "granule size `{p}` is not a parameter of `{}`",
                                    self.seq_name
                                ),
                            )
                            .related(set.span, "used here"));
                        }
                    }
                }
                let has_all = g.entries.iter().any(|e| e.size == GSize::All);
                let sized = g
                    .entries
                    .iter()
                    .filter(|e| matches!(e.size, GSize::Bytes(_) | GSize::Param(_)))
                    .count();
                let has_range = g.entries.iter().any(|e| e.size == GSize::Range);
                let need = match mode {
                    ast::CoverMode::Single => {
                        if g.entries.iter().any(|e| matches!(e.size, GSize::Param(_))) {
                            Some("`single` needs constant sizes")
                        } else if !has_all {
                            Some("`single` needs an `all` entry for ranges no size covers")
                        } else {
                            None
                        }
                    }
                    ast::CoverMode::Exact => (sized == 0).then_some("`exact` needs a sized entry"),
                    ast::CoverMode::Range => {
                        if sized == 0 || !has_range || !has_all {
                            Some("`range` needs a sized entry, a `range` entry and `all`")
                        } else {
                            None
                        }
                    }
                    ast::CoverMode::Auto => {
                        if sized == 0 || !has_all {
                            Some("`auto` chooses between a loop of sized ops and `all`: it needs both")
                        } else {
                            None
                        }
                    }
                };
                if let Some(msg) = need {
                    return Err(Diag::new(*mode_span, msg).related(g.span, "granule set"));
                }
                let (start, size) = (self.expr(start, None)?, self.expr(size, None)?);
                self.in_cover.push(si);
                let body = self.block(body)?;
                self.in_cover.pop();
                super::cover_map::check(self.devices, g, &body)?;
                Stmt::Cover {
                    set: si,
                    mode: *mode,
                    start,
                    size,
                    body,
                    span: *span,
                    threshold: crate::model::threshold_name(&self.seq_name, &g.name),
                }
            }
            ast::Stmt::If {
                cond,
                then_,
                else_,
                rare,
                span,
            } => {
                if !self.in_cover.is_empty() {
                    return Err(Diag::new(*span, "`if` is not allowed in a `cover` body")
                        .label("inside a cover")
                        .help("put the `if` around the `cover`, or choose with the cover's mode"));
                }
                let c = self.expr(cond, None)?;
                let then_ = self.block(then_)?;
                let else_ = self.block(else_)?;
                Stmt::If {
                    rare: *rare,
                    cond: Cond::of(c),
                    then_,
                    else_,
                }
            }
            ast::Stmt::Order {
                before,
                after,
                span,
            } => {
                let ok = matches!(
                    (before.name.as_str(), after.name.as_str()),
                    ("stores", "invalidates")
                        | ("invalidates", "return")
                        | ("invalidates", "invalidates")
                );
                if !ok {
                    return Err(Diag::new(*span, "unknown ordering")
                        .label("not supported")
                        .help("write `order stores before invalidates`, `order invalidates before return` or `order invalidates before invalidates`"));
                }
                self.orders
                    .push((before.name.clone(), after.name.clone(), *span));
                // Orders are declarations: they leave no statement behind.
                return Ok(Stmt::Barrier {
                    name: String::new(),
                    origin: Origin::Spec(*span),
                    covers: Vec::new(),
                });
            }
            ast::Stmt::Each { dev, body, span } => {
                let id = self.device(dev)?;
                if self.in_each.contains(&id) {
                    return Err(Diag::new(
                        dev.span,
                        format!("already inside `each {}`", dev.name),
                    ));
                }
                self.in_each.push(id);
                let body = self.block(body)?;
                self.in_each.pop();
                self.used.push(id);
                let group = *self.next_group;
                *self.next_group += 1;
                Stmt::Each {
                    dev: id,
                    body,
                    span: *span,
                    group,
                }
            }
            ast::Stmt::Write {
                target,
                value,
                span,
            } => {
                let (dev, reg, field) = self.path(target)?;
                if field.is_some() {
                    return Err(Diag::new(target.span, "a write sets the whole register")
                        .label("field write")
                        .help(
                            "write `dev.reg = { field: value }`; fields not named are written as 0",
                        ));
                }
                let width = self.devices[dev].regs[reg].width;
                let value = self.expr(value, Some((dev, reg)))?;
                if let Some(c) = value.as_const() {
                    if width < 64 && c >> width != 0 {
                        return Err(Diag::new(
                            *span,
                            format!("value {c:#x} does not fit the {width}-bit register"),
                        ));
                    }
                }
                Stmt::Write {
                    access: Access {
                        id: self.op_id(),
                        dev,
                        reg,
                        span: *span,
                    },
                    value,
                }
            }
            ast::Stmt::Poll {
                target,
                op,
                value,
                limit,
                fail,
                span,
            } => {
                let Some((limit, lspan)) = *limit else {
                    return Err(Diag::new(*span, "unbounded poll")
                        .label("no `limit`")
                        .help("a poll must give up: add `limit N` (number of reads) and optionally `else return -CODE`"));
                };
                if limit == 0 || limit > u64::from(u32::MAX) {
                    return Err(Diag::new(
                        lspan,
                        "poll limit must be between 1 and 4294967295",
                    ));
                }
                let fail = match fail {
                    None => DEFAULT_POLL_FAIL,
                    Some(e) => {
                        let v = self.expr(e, None)?;
                        match v.as_const().map(|c| c as i64) {
                            Some(c) if c < 0 => c,
                            _ => {
                                return Err(Diag::new(
                                    e.span(),
                                    "a poll's failure code must be a negative constant",
                                )
                                .label("not a negative constant"))
                            }
                        }
                    }
                };
                let op = match op {
                    ast::CmpOp::Eq => PollOp::Eq,
                    ast::CmpOp::Ne => PollOp::Ne,
                };
                let target = match target {
                    ast::PollTarget::Reg(p) => p,
                    ast::PollTarget::Mem(m) => {
                        if !self.in_cover.is_empty() {
                            return Err(Diag::new(
                                *span,
                                "memory reads are not allowed in a `cover` body",
                            ));
                        }
                        let (ptr, width, index) = match self.place(m)? {
                            Place::Fixed(r) => (r.ptr, r.width, Expr::Const(r.offset)),
                            Place::At { ptr, width, index } => (ptr, width, index),
                        };
                        let v = self.expr(value, None)?;
                        if let Some(c) = v.as_const() {
                            if width < 64 && c >> width != 0 {
                                return Err(Diag::new(
                                    value.span(),
                                    format!("{c:#x} does not fit the {width}-bit element"),
                                )
                                .label("too large"));
                            }
                        }
                        return Ok(Stmt::Mem {
                            id: self.op_id(),
                            op: MemOp::Poll {
                                ptr,
                                width,
                                index,
                                op,
                                value: Expr::insert(v, 0, width),
                                limit,
                                fail,
                                fail_barrier: None,
                            },
                            span: *span,
                        });
                    }
                };
                let (dev, reg, field) = self.path(target)?;
                let d = &self.devices[dev];
                let (mask, shift, width) = match field {
                    Some(f) => (d.fields[f].mask(), d.fields[f].shift, d.fields[f].width),
                    None => (field_mask(0, d.regs[reg].width), 0, d.regs[reg].width),
                };
                let v = self.expr(value, None)?;
                if let Some(c) = v.as_const() {
                    if width < 64 && c >> width != 0 {
                        return Err(Diag::new(
                            value.span(),
                            format!("{c:#x} does not fit the {width}-bit field"),
                        )
                        .label("too large"));
                    }
                }
                Stmt::Poll {
                    access: Access {
                        id: self.op_id(),
                        dev,
                        reg,
                        span: *span,
                    },
                    mask,
                    op,
                    // A run-time value is truncated to the field, as the
                    // masked register it is compared with.
                    value: Expr::insert(v, shift, width),
                    limit,
                    fail,
                    fail_barrier: None,
                }
            }
            ast::Stmt::Barrier { name, span } => Stmt::Barrier {
                name: name.name.clone(),
                origin: Origin::Spec(*span),
                covers: Vec::new(),
            },
            ast::Stmt::Return { value, span } => {
                if self.void {
                    return Err(Diag::new(*span, "a `-> void` sequence returns no value")
                        .help("remove `-> void` to return `long`"));
                }
                let v = self.expr(value, None)?;
                Stmt::Return {
                    value: v,
                    span: *span,
                }
            }
        })
    }

    /// What `$bits` means here: in a write to a register, the granule's
    /// settings of that register's fields; elsewhere all its settings,
    /// which is only meaningful when they live in one register.
    fn bits_binding(
        &self,
        span: crate::spec::diag::Span,
        reg: Option<(DevId, RegId)>,
    ) -> Result<super::expr::Binding, Diag> {
        let set = &self.granules[*self.in_cover.last().unwrap_or(&0)];
        let mut regs: Vec<RegId> = Vec::new();
        for e in &set.entries {
            for &r in &e.set_regs {
                if !regs.contains(&r) {
                    regs.push(r);
                }
            }
        }
        let name = |r: RegId| match set.dev {
            Some(d) => format!("{}.{}", self.devices[d].name, self.devices[d].regs[r].name),
            None => format!("register {r}"),
        };
        match reg {
            Some((dev, r)) if set.dev == Some(dev) && regs.contains(&r) => {
                Ok(super::expr::Binding::RegBits(r))
            }
            Some((dev, r)) => {
                let written = format!(
                    "{}.{}",
                    self.devices[dev].name, self.devices[dev].regs[r].name
                );
                let mut d = Diag::new(
                    span,
                    format!(
                        "no granule of `{}` sets a field of `{written}`: `$bits` would always be 0 here",
                        set.name
                    ),
                )
                .label("nothing to bind")
                .related(set.span, "granule set");
                d = match regs.as_slice() {
                    [] => d.help("the set's granules `set` no fields; remove `$bits`"),
                    rs => d.help(format!(
                        "`$bits` in a write to a register is that register's settings; the set's are in {}",
                        rs.iter().map(|&r| format!("`{}`", name(r))).collect::<Vec<_>>().join(", ")
                    )),
                };
                Err(d)
            }
            None if regs.len() > 1 => Err(Diag::new(
                span,
                format!(
                    "`$bits` is ambiguous here: the granules of `{}` set fields of {}",
                    set.name,
                    regs.iter().map(|&r| format!("`{}`", name(r))).collect::<Vec<_>>().join(" and ")
                ),
            )
            .label("which register's settings?")
            .related(set.span, "granule set")
            .help("use `$bits` directly in writes to those registers: each write gets its own register's settings")),
            None => Ok(super::expr::Binding::Bits),
        }
    }

    /// `reg` is the register a field aggregate refers to.
    fn expr(&mut self, e: &ast::Expr, reg: Option<(DevId, RegId)>) -> Result<Expr, Diag> {
        Ok(match e {
            ast::Expr::Int { value, .. } => Expr::Const(*value),
            ast::Expr::Reg(p) => {
                if !self.in_cover.is_empty() {
                    return Err(Diag::new(
                        p.span,
                        "register reads are not allowed in a `cover` body",
                    )
                    .label("read it before the `cover`"));
                }
                let (dev, reg, field) = self.path(p)?;
                let l = self.locals.len();
                let d = &self.devices[dev];
                self.locals.push(format!("{}.{}", d.name, d.regs[reg].name));
                let (shift, width) = match field {
                    Some(f) => (d.fields[f].shift, d.fields[f].width),
                    None => (0, d.regs[reg].width),
                };
                let id = self.op_id();
                self.pending.push(Stmt::Read {
                    access: Access {
                        id,
                        dev,
                        reg,
                        span: p.span,
                    },
                    local: l,
                });
                let mut v = Expr::Local(l);
                if shift != 0 {
                    v = Expr::Bin(
                        BinOp::Shr,
                        Box::new(v),
                        Box::new(Expr::Const(u64::from(shift))),
                    );
                }
                if width < d.regs[reg].width {
                    v = Expr::Bin(
                        BinOp::And,
                        Box::new(v),
                        Box::new(Expr::Const(crate::ir::expr::field_mask(0, width))),
                    );
                }
                v
            }
            ast::Expr::Mem { span, .. } => {
                if !self.in_cover.is_empty() {
                    return Err(Diag::new(
                        *span,
                        "memory reads are not allowed in a `cover` body",
                    ));
                }
                let place = self.place(e)?;
                let l = self.locals.len();
                let op = match place {
                    Place::Fixed(mem) => {
                        self.locals
                            .push(format!("{}[{}]", self.params[mem.ptr], mem.offset));
                        MemOp::Load { local: l, mem }
                    }
                    Place::At { ptr, width, index } => {
                        self.locals.push(format!("{}[...]", self.params[ptr]));
                        MemOp::LoadAt {
                            local: l,
                            ptr,
                            width,
                            index,
                        }
                    }
                };
                let id = self.op_id();
                self.pending.push(Stmt::Mem {
                    id,
                    op,
                    span: *span,
                });
                Expr::Local(l)
            }
            ast::Expr::Name(n)
                if self
                    .ptrs
                    .get(
                        self.params
                            .iter()
                            .position(|p| p == &n.name)
                            .unwrap_or(usize::MAX),
                    )
                    .copied()
                    .flatten()
                    .is_some()
                    && !self.scope.iter().any(|&l| self.locals[l] == n.name) =>
            {
                return Err(Diag::new(
                    n.span,
                    format!("`{}` is a pointer: read it as `{}[OFFSET]`", n.name, n.name),
                ));
            }
            ast::Expr::Name(n) => match self.params.iter().position(|p| p == &n.name) {
                _ if self.scope.iter().any(|&l| self.locals[l] == n.name) => {
                    let l = *self
                        .scope
                        .iter()
                        .rev()
                        .find(|&&l| self.locals[l] == n.name)
                        .unwrap_or(&0);
                    Expr::Local(l)
                }
                Some(i) => Expr::Param(i),
                None => return Err(self.undefined(n)),
            },
            ast::Expr::Feature(n) => {
                let Some(i) = self.features.iter().position(|f| f.name == n.name) else {
                    let mut d = Diag::new(n.span, format!("unknown feature `{}`", n.name))
                        .label("not declared")
                        .help("declare it at the top level: `feature NAME` or `feature NAME = KERNEL_CAPABILITY`");
                    if let Some(s) = closest(&n.name, self.features.iter().map(|f| f.name.as_str()))
                    {
                        d = d.help(format!("did you mean `{s}`?"));
                    }
                    return Err(d);
                };
                let w = *self.feature_word.get_or_insert(self.params.len());
                crate::features::test_bit(w, i)
            }
            ast::Expr::Binding(b) => {
                if self.in_cover.is_empty() {
                    return Err(Diag::new(
                        b.span,
                        format!("`${}` is only bound inside a `cover` body", b.name),
                    )
                    .label("not bound here"));
                }
                Expr::Binding(match b.name.as_str() {
                    "addr" => super::expr::Binding::Addr,
                    "bits" => self.bits_binding(b.span, reg)?,
                    "size" => super::expr::Binding::Size,
                    "num" => super::expr::Binding::Num,
                    "scale" => super::expr::Binding::Scale,
                    _ => return Err(Diag::new(b.span, format!("unknown binding `${}`", b.name))
                        .help(
                        "a cover binds $addr, $bits, $size (and $num, $scale for range operations)",
                    )),
                })
            }
            ast::Expr::Neg { inner, .. } => {
                Expr::bin(BinOp::Sub, Expr::Const(0), self.expr(inner, reg)?)
            }
            ast::Expr::Not { inner, .. } => Expr::bit_not(self.expr(inner, reg)?),
            ast::Expr::LogNot { inner, .. } => {
                Expr::cmp(Rel::Eq, self.expr(inner, None)?, Expr::Const(0))
            }
            ast::Expr::Call { func, args, span } if func.name == "threshold" => {
                self.threshold_of(args, *span)?
            }
            ast::Expr::Call { func, args, span } => {
                let Some(f) = Func::ALL.into_iter().find(|f| f.name() == func.name) else {
                    let mut d = Diag::new(func.span, format!("unknown function `{}`", func.name))
                        .label("not a built-in");
                    d = d.help(format!(
                        "built-ins: {}",
                        Func::ALL.map(|f| f.name()).join(", ")
                    ));
                    return Err(d);
                };
                if args.len() != f.arity() {
                    return Err(Diag::new(
                        *span,
                        format!(
                            "`{}` takes {} argument{}, not {}",
                            f.name(),
                            f.arity(),
                            if f.arity() == 1 { "" } else { "s" },
                            args.len()
                        ),
                    ));
                }
                let args = args
                    .iter()
                    .map(|a| self.expr(a, None))
                    .collect::<Result<Vec<_>, _>>()?;
                Expr::call(f, args)
            }
            ast::Expr::Bin {
                op:
                    op @ (ast::BinOp::Eq
                    | ast::BinOp::Ne
                    | ast::BinOp::Lt
                    | ast::BinOp::Le
                    | ast::BinOp::Gt
                    | ast::BinOp::Ge
                    | ast::BinOp::LogAnd
                    | ast::BinOp::LogOr),
                lhs,
                rhs,
                ..
            } => {
                let (a, b) = (self.expr(lhs, None)?, self.expr(rhs, None)?);
                let rel = match op {
                    ast::BinOp::Eq => Rel::Eq,
                    ast::BinOp::Ne => Rel::Ne,
                    ast::BinOp::Lt => Rel::Lt,
                    ast::BinOp::Le => Rel::Le,
                    ast::BinOp::Gt => Rel::Gt,
                    ast::BinOp::Ge => Rel::Ge,
                    ast::BinOp::LogAnd => return Ok(Expr::bin(BinOp::And, a.truth(), b.truth())),
                    _ => return Ok(Expr::bin(BinOp::Or, a.truth(), b.truth())),
                };
                Expr::cmp(rel, a, b)
            }
            ast::Expr::Bin { op, lhs, rhs, .. } => {
                let op = match op {
                    ast::BinOp::Or => BinOp::Or,
                    ast::BinOp::Xor => BinOp::Xor,
                    ast::BinOp::And => BinOp::And,
                    ast::BinOp::Shl => BinOp::Shl,
                    ast::BinOp::Shr => BinOp::Shr,
                    ast::BinOp::Add => BinOp::Add,
                    ast::BinOp::Sub => BinOp::Sub,
                    _ => BinOp::Mul,
                };
                let (a, b) = (self.expr(lhs, reg)?, self.expr(rhs, reg)?);
                // A constant that overflows 64 bits is an error, as an
                // oversized literal is (run-time values wrap: that is
                // what the machine does).
                if let (Some(x), Some(y)) = (a.as_const(), b.as_const()) {
                    let exact = match op {
                        BinOp::Add => x.checked_add(y),
                        BinOp::Sub => x.checked_sub(y),
                        BinOp::Mul => x.checked_mul(y),
                        _ => Some(0),
                    };
                    if exact.is_none() {
                        let what = match op {
                            BinOp::Sub => "is below 0",
                            _ => "does not fit 64 bits",
                        };
                        return Err(Diag::new(
                            e.span(),
                            format!(
                                "constant {x:#x} {} {y:#x} {what}",
                                match op {
                                    BinOp::Add => "+",
                                    BinOp::Sub => "-",
                                    _ => "*",
                                }
                            ),
                        )
                        .label("overflows")
                        .help("write the value you mean; constants are unsigned 64-bit"));
                    }
                }
                // A constant amount of 64 or more is a mistake; a run-time
                // one shifts every bit out (the value is 0), see README.
                if matches!(op, BinOp::Shl | BinOp::Shr) && b.as_const().is_some_and(|s| s >= 64) {
                    return Err(
                        Diag::new(rhs.span(), "shift amount must be below 64").label("too large")
                    );
                }
                Expr::bin(op, a, b)
            }
            ast::Expr::Aggregate { fields, span } => {
                let Some((dev, r)) = reg else {
                    return Err(Diag::new(
                        *span,
                        "a field aggregate is only allowed as the value of a register write",
                    ));
                };
                let mut acc = Expr::Const(0);
                let mut seen: Vec<(FieldId, crate::spec::diag::Span)> = Vec::new();
                for (name, value) in fields {
                    let f = self.field(dev, r, name)?;
                    if let Some((_, prev)) = seen.iter().find(|(x, _)| *x == f) {
                        return Err(Diag::new(
                            name.span,
                            format!("field `{}` set twice", name.name),
                        )
                        .related(*prev, "first set here"));
                    }
                    seen.push((f, name.span));
                    if matches!(value, ast::Expr::Aggregate { .. }) {
                        return Err(Diag::new(
                            value.span(),
                            "fields hold numbers, not aggregates",
                        ));
                    }
                    let v = self.expr(value, None)?;
                    let fd = &self.devices[dev].fields[f];
                    if let Some(c) = v.as_const() {
                        if fd.width < 64 && c >> fd.width != 0 {
                            return Err(Diag::new(
                                value.span(),
                                format!(
                                    "value {c:#x} does not fit the {}-bit field `{}` (max {:#x})",
                                    fd.width,
                                    fd.name,
                                    field_mask(0, fd.width)
                                ),
                            )
                            .label("too large"));
                        }
                    }
                    acc = Expr::bin(BinOp::Or, acc, Expr::insert(v, fd.shift, fd.width));
                }
                acc
            }
        })
    }
}

/// A normal-memory location: a constant offset, or one computed at run
/// time.
enum Place {
    Fixed(MemRef),
    At { ptr: usize, width: u32, index: Expr },
}

impl Place {
    fn width(&self) -> u32 {
        match self {
            Place::Fixed(m) => m.width,
            Place::At { width, .. } => *width,
        }
    }
}

fn stmt_span(s: &ast::Stmt) -> crate::spec::diag::Span {
    match s {
        ast::Stmt::Each { span, .. }
        | ast::Stmt::Write { span, .. }
        | ast::Stmt::Poll { span, .. }
        | ast::Stmt::Barrier { span, .. }
        | ast::Stmt::Return { span, .. }
        | ast::Stmt::Range { span, .. }
        | ast::Stmt::Invalidate { span, .. }
        | ast::Stmt::Order { span, .. }
        | ast::Stmt::If { span, .. }
        | ast::Stmt::Acquire { span, .. }
        | ast::Stmt::Release { span, .. }
        | ast::Stmt::MemWrite { span, .. }
        | ast::Stmt::Cover { span, .. }
        | ast::Stmt::Let { span, .. }
        | ast::Stmt::Assign { span, .. }
        | ast::Stmt::While { span, .. }
        | ast::Stmt::Enqueue { span, .. }
        | ast::Stmt::Issue { span, .. }
        | ast::Stmt::Wait { span, .. } => *span,
    }
}

/// Every `let` in a body, nested blocks included, in source order.
fn let_decls(body: &[ast::Stmt]) -> Vec<(String, Span)> {
    fn go(body: &[ast::Stmt], out: &mut Vec<(String, Span)>) {
        for s in body {
            match s {
                ast::Stmt::Let { name, .. } => out.push((name.name.clone(), name.span)),
                ast::Stmt::Each { body, .. }
                | ast::Stmt::Range { body, .. }
                | ast::Stmt::Cover { body, .. }
                | ast::Stmt::While { body, .. } => go(body, out),
                ast::Stmt::If { then_, else_, .. } => {
                    go(then_, out);
                    go(else_, out);
                }
                _ => {}
            }
        }
    }
    let mut out = Vec::new();
    go(body, &mut out);
    out
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
    if let Some((t, span)) = targets.iter().find(|(t, _)| !t.starts_with("power")) {
        return Err(Diag::new(*span, format!("`machine {}` is a POWER CPU; `{t}` is not POWER", first.name))
            .label("not a POWER target")
            .help("list only power64 and power64le with `machine`, or put the other target's sequences in a spec of their own"));
    }
    Ok((m, Some(first.span)))
}
