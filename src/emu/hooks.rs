//! The hooks that turn execution into events: memory accesses to watched
//! regions, executed barriers and invalidations, modelled system
//! instructions, and traps that are skipped or become faults.

use unicorn_engine::MemType;

use super::state::Sys;
use super::{Event, EventKind, InsnClass, QueueModel, Uc};

/// Reads back the bytes of stores whose hooks ran before the store happened.
pub(super) fn flush_stores(uc: &mut Uc<'_>) {
    let pending = std::mem::take(&mut uc.get_data_mut().pending);
    for (idx, addr, size) in pending {
        let mut buf = vec![0u8; size];
        if uc.mem_read(addr, &mut buf).is_err() {
            continue;
        }
        let st = uc.get_data_mut();
        let big = st.big_endian;
        // (queue, consumer index before the doorbell)
        let mut rung: Vec<(QueueModel, u64, u64)> = Vec::new();
        for r in st.mmio.iter().filter(|r| r.contains(addr)) {
            for q in &r.queues {
                let p = r.base + q.prod;
                if addr < p + q.len && p < addr + size as u64 {
                    rung.push((q.clone(), r.base, r.reg(q.cons, q.len, q.big_endian)));
                }
            }
        }
        for (i, b) in buf.iter().enumerate() {
            let a = addr.wrapping_add(i as u64);
            if let Some(r) = st.mmio.iter_mut().find(|r| r.contains(a)) {
                let o = a - r.base;
                r.shadow.insert(o, *b);
                if let Some(q) = r
                    .queues
                    .iter()
                    .find(|q| (q.prod..q.prod + q.len).contains(&o))
                {
                    r.shadow.insert(q.cons + (o - q.prod), *b);
                }
            }
        }
        if let Some(ev) = st.events.get_mut(idx) {
            ev.bytes = buf;
        }
        let rung: Vec<(QueueModel, u64, u64)> = rung
            .into_iter()
            .map(|(q, base, from)| {
                let to = st
                    .mmio
                    .iter()
                    .find(|r| r.base == base)
                    .map_or(from, |r| r.reg(q.prod, q.len, q.big_endian));
                (q, from, to)
            })
            .collect();
        for (q, from, to) in rung {
            consume(uc, &q, from, to, big);
        }
    }
}

/// The entries a doorbell published, and their completion writes.
fn consume(uc: &mut Uc<'_>, q: &QueueModel, from: u64, to: u64, big: bool) {
    let Some(slots) = crate::spec::queue::ring_slots(from, to, q.log2n, q.entry, q.wrap) else {
        return;
    };
    for off in slots {
        let mut raw = vec![0u8; q.entry as usize];
        if uc.mem_read(q.ring + off, &mut raw).is_err() {
            continue;
        }
        let words: Vec<u64> = raw
            .chunks_exact(8)
            .map(|c| {
                let c: [u8; 8] = c.try_into().unwrap_or_default();
                if big {
                    u64::from_be_bytes(c)
                } else {
                    u64::from_le_bytes(c)
                }
            })
            .collect();
        let Some(rec) = q.records.iter().find(|r| r.matches(&words)) else {
            continue;
        };
        if let Some((addr, value, bytes)) = rec.completion(&words) {
            let b = if big {
                value.to_be_bytes()[8 - bytes as usize..].to_vec()
            } else {
                value.to_le_bytes()[..bytes as usize].to_vec()
            };
            // Memory the program does not have mapped is not written.
            let _ = uc.mem_write(addr, &b);
        }
    }
}

pub(super) fn on_mem(uc: &mut Uc<'_>, kind: MemType, addr: u64, size: usize) -> bool {
    flush_stores(uc);
    let pc = uc.get_data().last_pc;
    let pc_offset = uc.get_data().offset_of(pc);
    match kind {
        MemType::WRITE => {
            let st = uc.get_data_mut();
            st.events.push(Event {
                kind: EventKind::Store,
                addr,
                bytes: Vec::new(),
                pc_offset,
                text: String::new(),
            });
            let idx = st.events.len() - 1;
            st.pending.push((idx, addr, size));
        }
        MemType::READ => {
            let mut buf = vec![0u8; size];
            // Bytes outside every device window keep their memory contents.
            let _ = uc.mem_read(addr, &mut buf);
            let st = uc.get_data_mut();
            for (i, b) in buf.iter_mut().enumerate() {
                let a = addr.wrapping_add(i as u64);
                if let Some(r) = st.mmio.iter().find(|r| r.contains(a)) {
                    *b = r.shadow.get(&(a - r.base)).copied().unwrap_or(0);
                }
            }
            if let Some(r) = st.mmio.iter_mut().find(|r| r.contains(addr)) {
                if let Some((values, n)) = r.scripted.get_mut(&(addr - r.base)) {
                    if let Some(v) = values.get((*n).min(values.len().saturating_sub(1))) {
                        let k = v.len().min(buf.len());
                        buf[..k].copy_from_slice(&v[..k]);
                    }
                    *n += 1;
                }
            }
            st.events.push(Event {
                kind: EventKind::Load,
                addr,
                bytes: buf.clone(),
                pc_offset,
                text: String::new(),
            });
            let _ = uc.mem_write(addr, &buf);
        }
        _ => {}
    }
    true
}

pub(super) fn on_code(uc: &mut Uc<'_>, addr: u64, size: u32) {
    flush_stores(uc);
    let st = uc.get_data_mut();
    if st.executed >= st.max_insns {
        st.timed_out = true;
        let _ = uc.emu_stop();
        return;
    }
    st.executed += 1;
    st.last_pc = addr;
    st.last_size = size;
    if let Some((gpr, v)) = uc.get_data_mut().sys_read.take() {
        let _ = uc.reg_write(gpr, v);
    }
    // Before it runs (or traps): the value it writes to a modelled
    // register, or the one it reads.
    match uc.get_data().sys_at(addr) {
        Some(Sys::Write { gpr, reg }) => {
            let v = uc.reg_read(gpr).unwrap_or(0);
            let st = uc.get_data_mut();
            let target = st.target;
            target.sys_write(&mut st.sys_regs, reg, v);
        }
        Some(Sys::Read { gpr, reg }) => {
            let st = uc.get_data_mut();
            st.sys_read = Some((gpr, st.sys_reg(reg)));
        }
        Some(Sys::TlbLookup { ea }) => {
            let ea = ea.map(|(ra, rb)| {
                let base = ra.map_or(0, |r| uc.reg_read(r).unwrap_or(0));
                base.wrapping_add(uc.reg_read(rb).unwrap_or(0))
            });
            let st = uc.get_data_mut();
            let found = st
                .tlb_found
                .get(st.lookups)
                .or(st.tlb_found.last())
                .copied()
                .unwrap_or(false);
            st.lookups += 1;
            let target = st.target;
            target.tlb_lookup(&mut st.sys_regs, found, ea);
        }
        _ => {}
    }
    let Some((class, text)) = uc.get_data().class_at(addr).cloned() else {
        return;
    };
    let pc_offset = uc.get_data().offset_of(addr);
    let (kind, text) = match class {
        InsnClass::Other => return,
        InsnClass::Barrier => (EventKind::Barrier, text),
        InsnClass::Invalidate => {
            let ops = uc.get_data().target.invalidate_operands(uc, addr, &text);
            let text = match ops.as_slice() {
                [] => text,
                [(_, v)] => format!("{text} = {v:#x}"),
                many => {
                    let vals: Vec<String> =
                        many.iter().map(|(n, v)| format!("{n}={v:#x}")).collect();
                    format!("{text} = {}", vals.join(", "))
                }
            };
            (EventKind::Invalidate, text)
        }
    };
    uc.get_data_mut().events.push(Event {
        kind,
        addr: 0,
        bytes: Vec::new(),
        pc_offset,
        text,
    });
}

/// Skips the trapping instruction at `last_pc` if it is a classified barrier
/// or invalidation; otherwise records a fault and stops.  Returns whether the
/// instruction was skipped.
pub(super) fn skip_or_fault(uc: &mut Uc<'_>, what: String) -> bool {
    flush_stores(uc);
    let st = uc.get_data();
    let (pc, size, target) = (st.last_pc, st.last_size, st.target);
    if st.skippable(pc) {
        if let Some(Sys::Read { gpr, reg }) = st.sys_at(pc) {
            let v = st.sys_reg(reg);
            let _ = uc.reg_write(gpr, v);
        }
        let _ = uc.reg_write(target.pc_reg(), pc.wrapping_add(u64::from(size.max(1))));
        true
    } else {
        if uc.get_data().fault.is_none() {
            uc.get_data_mut().fault = Some((pc, what));
        }
        let _ = uc.emu_stop();
        false
    }
}
