//! Granule sets: what one invalidate covers, through which register
//! settings or instruction, and what it costs.

use super::device::find_reg;
use crate::ir::*;
use crate::spec::ast;
use crate::spec::diag::Diag;

/// `granules NAME on QUEUE { 4K via RECORD ... all via RECORD }`: what one
/// command covers and costs, for `threshold(NAME)` (a cover cannot choose
/// among commands: its body maps register writes and instructions).
pub(super) fn check_queue_granules(
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

pub(super) fn check_granules(devices: &[Device], g: &ast::Granules) -> Result<GranuleSet, Diag> {
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
pub(super) fn check_costs(g: &ast::Granules) -> Result<Costs, Diag> {
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
