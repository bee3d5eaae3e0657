//! Devices: registers, fields, instances and required orders; the name
//! index the sequences are resolved against.

use super::defined_twice;
use crate::ir::expr::field_mask;
use crate::ir::*;
use crate::spec::ast::{self, Numbering};
use crate::spec::diag::Diag;
use rustc_hash::FxHashMap;

pub(super) fn check_device(d: &ast::Device) -> Result<Device, Diag> {
    let instances = check_instances(d)?;
    let mapping = check_mapping(d)?;
    let regs = check_regs(d)?;
    let fields = check_fields(d, &regs)?;
    let mut requires = Vec::new();
    let mut after_stores = Vec::new();
    // `require stores before R`, unless the device has a register called
    // `stores`.
    let stores_is_a_reg = regs.iter().any(|g| g.name == "stores");
    for r in &d.requires {
        if r.before.name == "stores" && !stores_is_a_reg {
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

fn check_instances(d: &ast::Device) -> Result<Instances, Diag> {
    Ok(match d.instances {
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
    })
}

fn check_mapping(d: &ast::Device) -> Result<Mapping, Diag> {
    Ok(match &d.mapping {
        None => Mapping::Strong,
        Some(m) => match m.name.as_str() {
            "nGnRnE" | "nGnRE" | "strong" | "uncached" | "guarded" => Mapping::Strong,
            "nGRE" | "GRE" | "weak" | "wc" => Mapping::Weak,
            _ => {
                return Err(Diag::new(m.span, format!("unknown mapping `{}`", m.name))
                    .help("use nGnRnE, nGnRE (ordered per peripheral) or nGRE, GRE (reordering)"))
            }
        },
    })
}

/// Registers: each name once, aligned to its width, below 4 GiB, no two
/// overlapping.
fn check_regs(d: &ast::Device) -> Result<Vec<Reg>, Diag> {
    let mut regs: Vec<Reg> = Vec::new();
    let mut reg_ids: FxHashMap<&str, RegId> = FxHashMap::default();
    // Registers by offset: a new one can only overlap its neighbours.
    let mut by_offset: std::collections::BTreeMap<u64, RegId> = Default::default();
    for r in &d.regs {
        if let Some(prev) = reg_ids.get(r.name.name.as_str()).map(|&i| &regs[i]) {
            return Err(defined_twice("register", &r.name, prev.span));
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
    Ok(regs)
}

/// Fields: inside their register, MSB0 ranges written in order, each name
/// once per register, no two overlapping.
fn check_fields(d: &ast::Device, regs: &[Reg]) -> Result<Vec<Field>, Diag> {
    let reg_ids: FxHashMap<&str, RegId> = regs
        .iter()
        .enumerate()
        .map(|(i, r)| (r.name.as_str(), i))
        .collect();
    let mut fields: Vec<Field> = Vec::new();
    let mut field_ids: FxHashMap<(RegId, &str), FieldId> = FxHashMap::default();
    // Bits of each register taken by the fields so far.
    let mut taken = vec![0u64; regs.len()];
    for f in &d.fields {
        let reg = match reg_ids.get(f.reg.name.as_str()) {
            Some(&r) => r,
            None => find_reg(regs, &d.name.name, &f.reg)?,
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
    Ok(fields)
}

/// Name lookups of the checked devices (see `check`).
pub(super) struct Index<'a> {
    pub(super) devices: FxHashMap<&'a str, DevId>,
    pub(super) regs: Vec<FxHashMap<&'a str, RegId>>,
    pub(super) fields: Vec<FxHashMap<(RegId, &'a str), FieldId>>,
}

impl<'a> Index<'a> {
    pub(super) fn new(devices: &'a [Device]) -> Index<'a> {
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

pub(super) fn find_reg(regs: &[Reg], dev: &str, name: &ast::Ident) -> Result<RegId, Diag> {
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
pub(super) fn closest<'a>(
    name: &str,
    candidates: impl Iterator<Item = &'a str>,
) -> Option<&'a str> {
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
