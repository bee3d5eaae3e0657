//! Granule sets: what one invalidate covers, through which register
//! settings or instruction, and what it costs.

use super::device::find_reg;
use crate::ir::*;
use crate::spec::ast;
use crate::spec::diag::{Diag, Span};

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
        check_new_size(&entries, &size, e.span)?;
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
            param_sets: Vec::new(),
            span: e.span,
        });
    }
    granule_set(g, None, entries)
}

/// What a granule's `set`s amount to.
struct Settings {
    /// The constant field bits of all registers together.
    bits: u64,
    /// The same per register.
    reg_bits: Vec<(RegId, u64)>,
    /// The registers set.
    set_regs: Vec<RegId>,
    /// The fields set to a parameter of the covering sequence.
    param_sets: Vec<ParamSet>,
}

pub(super) fn check_granules(devices: &[Device], g: &ast::Granules) -> Result<GranuleSet, Diag> {
    let dev = match &g.dev {
        None => None,
        Some(d) => Some(
            devices
                .iter()
                .position(|x| x.name == d.name)
                .ok_or_else(|| Diag::undeclared(d.span, "device", &d.name))?,
        ),
    };
    let regs = GranuleRegs { devices, dev };
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
        check_new_size(&entries, &size, e.span)?;
        let Settings {
            bits,
            reg_bits,
            set_regs,
            param_sets,
        } = regs.settings(&e.sets)?;
        let addr = e.addr.as_ref().map(|a| regs.reg(a)).transpose()?;
        if addr.is_some() && size == GSize::All {
            return Err(Diag::new(e.span, "`all` takes no address").label("remove `addr`"));
        }
        let via = match &e.via {
            None => None,
            Some(v) => Some(regs.via(v)?),
        };
        entries.push(Granule {
            size,
            bits,
            reg_bits,
            addr,
            via,
            set_regs,
            param_sets,
            span: e.span,
        });
    }
    granule_set(g, dev, entries)
}

/// A size not yet in `entries` (the entry at `span` has it).
fn check_new_size(entries: &[Granule], size: &GSize, span: Span) -> Result<(), Diag> {
    if entries.iter().any(|x| x.size == *size) {
        return Err(Diag::new(span, "granule size listed twice"));
    }
    Ok(())
}

/// The set of `entries` (one at least), with `g`'s name and costs.
fn granule_set(
    g: &ast::Granules,
    dev: Option<DevId>,
    entries: Vec<Granule>,
) -> Result<GranuleSet, Diag> {
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

/// The registers of a granule set's device (`on DEVICE`), if it has one.
struct GranuleRegs<'a> {
    devices: &'a [Device],
    dev: Option<DevId>,
}

impl GranuleRegs<'_> {
    fn reg(&self, id: &ast::Ident) -> Result<RegId, Diag> {
        let Some(d) = self.dev else {
            return Err(Diag::new(
                id.span,
                "register named in a granule set without `on DEVICE`",
            )
            .help("write `granules NAME on DEVICE { ... }`"));
        };
        find_reg(&self.devices[d].regs, &self.devices[d].name, id)
    }

    /// A granule's `set REG.FIELD = VALUE`s.
    fn settings(&self, sets: &[(ast::Ident, ast::Ident, ast::Expr)]) -> Result<Settings, Diag> {
        let mut bits = 0u64;
        let mut reg_bits: Vec<(RegId, u64)> = Vec::new();
        let mut set_regs = Vec::new();
        let mut param_sets = Vec::new();
        for (reg, field, value) in sets {
            let r = self.reg(reg)?;
            if !set_regs.contains(&r) {
                set_regs.push(r);
            }
            let d = self.dev.unwrap_or(0);
            let f = self.devices[d]
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
                ast::Expr::Name(p) => {
                    if !reg_bits.iter().any(|(x, _)| *x == r) {
                        reg_bits.push((r, 0));
                    }
                    param_sets.push(ParamSet {
                        reg: r,
                        shift: f.shift,
                        width: f.width,
                        param: p.name.clone(),
                        span: p.span,
                    });
                    continue;
                }
                other => {
                    return Err(Diag::new(
                        other.span(),
                        "a granule field setting is a number or a parameter name",
                    )
                    .label("not a number or a name")
                    .help("compute the value in the sequence and pass it as a parameter"))
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
        Ok(Settings {
            bits,
            reg_bits,
            set_regs,
            param_sets,
        })
    }

    /// What a granule's `via` launches it with: an instruction, or a
    /// write to a register of the device.
    fn via(&self, v: &ast::Ident) -> Result<Via, Diag> {
        let claims: Vec<&dyn crate::ir::isa::Isa> = crate::ir::isa::all()
            .iter()
            .copied()
            .filter(|i| i.via_insn(&v.name))
            .collect();
        if !claims.is_empty() {
            // The operation itself must be one some target can issue
            // (with its address operand or none), or the set is useless
            // and says so here, not only once a sequence covers with it.
            let mut why = String::new();
            for t in &claims {
                for n in [1, 0, 2] {
                    match t.check_invalidation(Machine::default(), &v.name, n) {
                        Ok(_) => return Ok(Via::Insn(v.name.clone())),
                        Err(e) if why.is_empty() => why = e.to_string(),
                        Err(_) => {}
                    }
                }
            }
            return Err(Diag::new(v.span, format!("`via {}`: {why}", v.name))
                .label("not an invalidation this target has"));
        }
        // An instruction no ISA issues by itself for a granule (`tlbie`
        // without its fields, `invlpg`): say so rather than look for a
        // register of that name.
        if crate::spec::syntax::insn(&v.name).is_some() {
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
        Ok(Via::Reg(self.reg(v)?))
    }
}

/// The `cost KIND N ns` lines of a granule set.
pub(super) fn check_costs(g: &ast::Granules) -> Result<Costs, Diag> {
    let mut costs = Costs::default();
    for (k, v) in &g.costs {
        let Some(slot) = costs.named(&k.name) else {
            return Err(Diag::new(k.span, format!("unknown cost `{}`", k.name))
                .help("costs are invalidate, store, barrier, refill, all"));
        };
        *slot = *v;
    }
    Ok(costs)
}
