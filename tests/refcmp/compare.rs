//! Comparing the two sides' effects: device accesses per instance,
//! invalidates, return value and final memory.

use super::*;

/// A device access as the comparison states it.
pub(super) fn describe_access(
    prog: &Program,
    dev: usize,
    inst: u64,
    off: u64,
    width: u32,
    bytes: &[u8],
) -> (String, String) {
    let d = &prog.devices[dev];
    match d
        .regs
        .iter()
        .find(|r| r.offset == off && r.bytes() == width)
    {
        Some(r) => {
            let mut b = bytes.to_vec();
            if r.endian == Endian::Little {
                b.reverse();
            }
            let v = b.iter().fold(0u64, |v, x| (v << 8) | u64::from(*x));
            (format!("{}[{inst}].{}", d.name, r.name), format!("{v:#x}"))
        }
        None => (
            format!("{}[{inst}]+{off:#x}/{width}", d.name),
            format!("bytes {}", hex(bytes)),
        ),
    }
}

/// Per device instance, the accesses in order; per pointer argument, the
/// stores to its memory in order (loads of normal memory are not compared:
/// the kernel reads fields the example does not); then the invalidates.
pub(super) fn effects(prog: &Program, s: &Side) -> (BTreeMap<String, Vec<String>>, Vec<String>) {
    let mut per: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut inv = Vec::new();
    for e in &s.events {
        match e {
            Ev::Access {
                store,
                dev,
                inst,
                off,
                width,
                bytes,
            } => {
                let (place, v) = describe_access(prog, *dev, *inst, *off, *width, bytes);
                per.entry(format!("{}[{inst}]", prog.devices[*dev].name))
                    .or_default()
                    .push(format!(
                        "{} {place} w{width} {v}",
                        if *store { "store" } else { "load" }
                    ));
            }
            Ev::NAccess {
                store: true,
                ptr,
                off,
                width,
                bytes,
            } => per
                .entry(format!("memory of pointer argument {ptr}"))
                .or_default()
                .push(format!("store +{off:#x} w{width} bytes {}", hex(bytes))),
            Ev::Inval { op, ops } => inv.push(format!("{op} {ops:x?}")),
            _ => {}
        }
    }
    (per, inv)
}

/// None when both sides agree; else the first difference.
pub fn difference(prog: &Program, gen: &Side, refr: &Side) -> Option<String> {
    let (gp, gi) = effects(prog, gen);
    let (rp, ri) = effects(prog, refr);
    let mut msg = String::new();
    let keys: BTreeSet<&String> = gp.keys().chain(rp.keys()).collect();
    for k in keys {
        let (g, r) = (
            gp.get(k).cloned().unwrap_or_default(),
            rp.get(k).cloned().unwrap_or_default(),
        );
        if g != r {
            let at = (0..g.len().max(r.len()))
                .find(|&i| g.get(i) != r.get(i))
                .unwrap();
            let show = |v: &[String], i: usize| v.get(i).cloned().unwrap_or("(nothing)".into());
            let _ = writeln!(
                msg,
                "{k}: access {at} of {} generated / {} kernel: generated `{}`, kernel `{}`",
                g.len(),
                r.len(),
                show(&g, at),
                show(&r, at)
            );
            break;
        }
    }
    if gi != ri {
        let at = (0..gi.len().max(ri.len()))
            .find(|&i| gi.get(i) != ri.get(i))
            .unwrap();
        let _ = writeln!(
            msg,
            "invalidate {at} of {} generated / {} kernel: generated `{}`, kernel `{}`",
            gi.len(),
            ri.len(),
            gi.get(at).map_or("(nothing)", String::as_str),
            ri.get(at).map_or("(nothing)", String::as_str)
        );
    }
    if gen.ret != refr.ret {
        let _ = writeln!(msg, "return: generated {} kernel {}", gen.ret, refr.ret);
    }
    if gen.memory != refr.memory {
        let _ = writeln!(
            msg,
            "memory: generated {:02x?} kernel {:02x?}",
            gen.memory, refr.memory
        );
    }
    (!msg.is_empty()).then_some(msg)
}

// ------------------------------------------------------------- ordering
