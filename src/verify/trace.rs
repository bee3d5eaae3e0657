//! Run generated machine code in the emulator against simulated device
//! memory and attribute every event to a device, instance, register and
//! IR operation.

use super::interp::World;
use crate::codegen::Compiled;
use crate::emu::{self, MmioRegion, RamRegion, Request, ScriptedRead};
use crate::ir::expr::field_mask;
use crate::ir::{DevId, Instances, OpId, Program, RegId, Seq};
use crate::isa::mach::{InsnClass, Line, MachFunc};
use crate::lir::ArgKind;
use crate::spec::ast::Endian;
use serde::Serialize;
use std::collections::BTreeMap;

/// Where instance `inst` of device `dev` lives in the simulated machine:
/// each device has 2^36 bytes from 4 GiB up (below AArch64's 40-bit
/// physical addresses), each instance a power-of-two stride that holds
/// its highest register (offsets reach 4 GiB: 8 instances of such a
/// device fit, more than the worlds use).
pub fn mmio_base(dev: &crate::ir::Device, d: DevId, inst: u64) -> u64 {
    0x1_0000_0000 + ((d as u64) << 36) + inst * stride(dev)
}
fn stride(dev: &crate::ir::Device) -> u64 {
    dev.extent().next_power_of_two().max(WINDOW)
}
const ARRAY_BASE: u64 = 0x3000_0000;
/// Only the 64 KiB windows that hold registers are mapped: a register at
/// 4 GiB does not map 4 GiB of guest memory.
const WINDOW: u64 = 0x1_0000;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    Store,
    Load,
    Barrier,
    Invalidate,
}

#[derive(Clone, Debug, Serialize)]
pub struct Event {
    pub kind: Kind,
    pub device: Option<String>,
    pub instance: Option<u64>,
    pub reg: Option<String>,
    /// Normal memory behind a pointer parameter, `name[offset]`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub memory: Option<String>,
    pub value: Option<String>,
    pub insn: String,
    #[serde(skip)]
    pub dev_id: Option<DevId>,
    #[serde(skip)]
    pub reg_id: Option<RegId>,
    #[serde(skip)]
    pub raw: Option<u64>,
    #[serde(skip)]
    pub op: Option<OpId>,
    /// Invalidate operand values, every register operand in order (RB
    /// then RS for `tlbie`; the immediates RIC/PRS/R are in `insn`).
    #[serde(skip_serializing_if = "Vec::is_empty", serialize_with = "hex_list")]
    pub operands: Vec<u64>,
    /// Byte offset of the instruction in the function.
    pub pc: u32,
    /// Spec line of the operation it performs (none for a barrier a pass
    /// placed).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line: Option<usize>,
    /// A register value split into the register's fields, by name.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub fields: Vec<(String, u64)>,
    /// An invalidation's operands decoded (`va=0x400000 asid=1 ttl=0`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub decoded: Option<String>,
}

fn hex_list<S: serde::Serializer>(v: &[u64], s: S) -> Result<S::Ok, S::Error> {
    use serde::ser::SerializeSeq;
    let mut seq = s.serialize_seq(Some(v.len()))?;
    for x in v {
        seq.serialize_element(&format!("{x:#x}"))?;
    }
    seq.end()
}

#[derive(Clone, Debug, Serialize)]
pub struct Trace {
    pub events: Vec<Event>,
    #[serde(rename = "return")]
    pub ret: i64,
    #[serde(skip)]
    pub insns_executed: u64,
    /// Final normal memory behind each pointer parameter (by index).
    #[serde(skip)]
    pub memory: std::collections::HashMap<usize, Vec<u8>>,
}

use super::interp::{ptr_base, PTR_SPAN};

fn to_bytes(v: u64, bytes: u32, endian: Endian) -> Vec<u8> {
    let b = v.to_le_bytes();
    let mut out: Vec<u8> = b[..bytes as usize].to_vec();
    if endian == Endian::Big {
        out.reverse();
    }
    out
}

fn from_bytes(b: &[u8], endian: Endian) -> u64 {
    let mut v = 0u64;
    match endian {
        Endian::Big => {
            for &x in b {
                v = (v << 8) | u64::from(x);
            }
        }
        Endian::Little => {
            for &x in b.iter().rev() {
                v = (v << 8) | u64::from(x);
            }
        }
    }
    v
}

/// Parse the operand values the emulator appends to invalidate text
/// (`... = 0x12` or `... = r4=0x1, r5=0x2`).
fn operand_values(text: &str) -> Vec<u64> {
    let Some((_, vals)) = text.split_once(" = ") else {
        return Vec::new();
    };
    vals.split(',')
        .filter_map(|p| {
            let p = p.trim();
            let hex = p.rsplit('=').next().unwrap_or(p).trim();
            u64::from_str_radix(hex.trim_start_matches("0x"), 16).ok()
        })
        .collect()
}

/// The simulated machine a run is given: device windows, RAM, the
/// arguments, and where each device instance and pointer's memory is.
#[derive(Default)]
struct Layout {
    mmio: Vec<MmioRegion>,
    ram: Vec<RamRegion>,
    args: Vec<u64>,
    /// (instance base, device, instance, stride)
    regions: Vec<(u64, DevId, u64, u64)>,
    /// (parameter, bytes given, index into `ram`)
    ptr_params: Vec<(usize, usize, usize)>,
}

impl Layout {
    /// Map every instance of the devices `seq` uses, window by window.
    fn map_devices(&mut self, prog: &Program, seq: &Seq, world: &World) {
        for &d in &seq.devices {
            let n = world.count(prog, d);
            for i in 0..n.max(1) {
                let dev = &prog.devices[d];
                let base = mmio_base(dev, d, i);
                let mut windows: Vec<u64> = dev.regs.iter().map(|r| r.offset / WINDOW).collect();
                windows.push(0);
                windows.sort_unstable();
                windows.dedup();
                for w in windows {
                    let lo = w * WINDOW;
                    self.mmio.push(MmioRegion {
                        base: base + lo,
                        size: WINDOW,
                        reads: scripted_reads(dev, d, world, w),
                        queues: queue_models(dev, d, world, w),
                    });
                }
                self.regions.push((base, d, i, stride(dev)));
            }
        }
    }

    /// The value of argument `a`, mapping the memory it points to.
    fn map_arg(
        &mut self,
        prog: &Program,
        c: &Compiled,
        seq: &Seq,
        world: &World,
        a: &ArgKind,
    ) -> u64 {
        match a {
            ArgKind::DeviceBase(d) => mmio_base(&prog.devices[*d], *d, 0),
            ArgKind::DeviceArray(d) => self.map_device_array(prog, c, world, *d),
            ArgKind::DeviceCount(d) => match prog.devices[*d].instances {
                Instances::Dynamic { .. } => world.count(prog, *d),
                _ => 0,
            },
            ArgKind::Param(i) if seq.ptrs.get(*i).is_some_and(Option::is_some) => {
                self.map_pointer(world, *i)
            }
            ArgKind::Param(i) => world.params.get(*i).copied().unwrap_or(0),
        }
    }

    /// The array of the instances' bases of device `d`, in RAM.
    fn map_device_array(&mut self, prog: &Program, c: &Compiled, world: &World, d: DevId) -> u64 {
        let n = world.count(prog, d);
        let base = ARRAY_BASE + (d as u64) * 0x1_0000;
        let mut bytes = Vec::new();
        for i in 0..n {
            let p = mmio_base(&prog.devices[d], d, i);
            bytes.extend_from_slice(&if c.target.big_endian() {
                p.to_be_bytes()
            } else {
                p.to_le_bytes()
            });
        }
        bytes.resize(bytes.len().max(8).next_multiple_of(0x1000), 0);
        self.ram.push(RamRegion {
            base,
            bytes,
            watch: false,
        });
        base
    }

    /// The memory behind pointer parameter `i`, in RAM.
    fn map_pointer(&mut self, world: &World, i: usize) -> u64 {
        let mut bytes = world.memory.get(&i).cloned().unwrap_or_default();
        self.ptr_params
            .push((i, bytes.len().max(1), self.ram.len()));
        // As much as the interpreter simulates (computed offsets
        // may reach anywhere in it).
        bytes.resize(PTR_SPAN as usize, 0);
        self.ram.push(RamRegion {
            base: ptr_base(i),
            bytes,
            watch: true,
        });
        ptr_base(i)
    }
}

/// The world's scripted reads of the registers of device `d` in window `w`.
fn scripted_reads(dev: &crate::ir::Device, d: DevId, world: &World, w: u64) -> Vec<ScriptedRead> {
    let lo = w * WINDOW;
    dev.regs
        .iter()
        .enumerate()
        .filter(|(_, r)| r.offset / WINDOW == w)
        .filter_map(|(ri, r)| {
            world.reads.get(&(d, ri)).map(|vals| ScriptedRead {
                offset: r.offset - lo,
                values: vals
                    .iter()
                    .map(|v| to_bytes(v & field_mask(0, r.width), r.bytes(), r.endian))
                    .collect(),
            })
        })
        .collect()
}

/// The interpreter's consumers, as the emulator's devices: those of
/// device `d` whose registers are in window `w`.
fn queue_models(dev: &crate::ir::Device, d: DevId, world: &World, w: u64) -> Vec<emu::QueueModel> {
    let lo = w * WINDOW;
    world
        .consumers
        .iter()
        .filter(|c| c.dev == d)
        .filter_map(|c| {
            let (p, q) = (&dev.regs[c.prod], &dev.regs[c.cons]);
            (p.offset / WINDOW == w && q.offset / WINDOW == w).then(|| emu::QueueModel {
                prod: p.offset - lo,
                cons: q.offset - lo,
                len: u64::from(p.bytes()),
                big_endian: p.endian == Endian::Big,
                ring: ptr_base(c.ring),
                entry: c.entry,
                log2n: c.log2n,
                wrap: c.wrap,
                records: c.records.clone(),
            })
        })
        .collect()
}

/// The barriers and invalidates of `f` by offset (for the emulator's
/// events).
fn insn_classes(f: &MachFunc) -> BTreeMap<u32, (emu::InsnClass, String)> {
    let mut classes = BTreeMap::new();
    for l in f.insns() {
        match l.class {
            InsnClass::Barrier => {
                classes.insert(l.offset, (emu::InsnClass::Barrier, l.text.clone()));
            }
            InsnClass::Invalidate => {
                classes.insert(l.offset, (emu::InsnClass::Invalidate, l.text.clone()));
            }
            _ => {}
        }
    }
    classes
}

pub fn run(
    prog: &Program,
    c: &Compiled,
    seq_index: usize,
    world: &World,
    max_insns: u64,
) -> Result<Trace, String> {
    let f = &c.funcs[seq_index];
    let lir = &c.lir[seq_index];
    let seq = &c.opt.seqs[seq_index];

    let mut layout = Layout::default();
    layout.map_devices(prog, seq, world);
    for a in &lir.args {
        let v = layout.map_arg(prog, c, seq, world, a);
        layout.args.push(v);
    }
    let by_offset: BTreeMap<u32, &Line> = f.insns().map(|l| (l.offset, l)).collect();
    let classes = insn_classes(f);
    let req = Request {
        program: emu::Program {
            big_endian: c.target.big_endian(),
            code: f.bytes.clone(),
            classes,
        },
        args: std::mem::take(&mut layout.args),
        mmio: std::mem::take(&mut layout.mmio),
        ram: std::mem::take(&mut layout.ram),
        max_insns,
        tlb_found: world.tlb_found.clone(),
    };
    let out = emu::run(c.target.backend().emu(), &req).map_err(|e| e.to_string())?;
    let events = out
        .events
        .iter()
        .map(|e| attribute(e, &by_offset, prog, c, seq, &layout))
        .collect::<Result<Vec<_>, _>>()?;
    let lines = op_lines(prog, seq);
    let mut events = events;
    for ev in &mut events {
        ev.line = ev.op.and_then(|o| lines.get(&o).copied());
    }
    name_ring_records(prog, seq, &layout, &out.events, &mut events);
    let memory = layout
        .ptr_params
        .iter()
        .filter_map(|&(p, len, ri)| {
            out.ram
                .get(ri)
                .map(|r| (p, r.bytes[..len.min(r.bytes.len())].to_vec()))
        })
        .collect();
    Ok(Trace {
        events,
        // A `-> void` function leaves the return register as it was:
        // nothing to report, as the spec's meaning says (0).
        ret: if seq.void { 0 } else { out.ret as i64 },
        insns_executed: out.insns_executed,
        memory,
    })
}

/// The emulator's event `e` as a trace event: the instruction and IR
/// operation it came from, and the register or pointer memory it touched.
/// The spec line of each operation of `seq` that makes an event.
fn op_lines(prog: &Program, seq: &Seq) -> rustc_hash::FxHashMap<OpId, usize> {
    use crate::ir::Stmt;
    let mut out = rustc_hash::FxHashMap::default();
    crate::ir::walk(&seq.body, &mut |s| {
        let (id, span) = match s {
            Stmt::Write { access, .. } | Stmt::Poll { access, .. } | Stmt::Read { access, .. } => {
                (access.id, access.span)
            }
            Stmt::Mem { id, span, .. } | Stmt::Invalidate { id, span, .. } => (*id, *span),
            _ => return,
        };
        out.insert(id, prog.line_of(span));
    });
    out
}

fn attribute(
    e: &emu::Event,
    by_offset: &BTreeMap<u32, &Line>,
    prog: &Program,
    c: &Compiled,
    seq: &Seq,
    layout: &Layout,
) -> Result<Event, String> {
    let line = by_offset.get(&e.pc_offset);
    let insn = line.map(|l| l.text.clone()).unwrap_or_default();
    let op = line.and_then(|l| l.origin.op);
    let kind = match e.kind {
        emu::EventKind::Store => Kind::Store,
        emu::EventKind::Load => Kind::Load,
        emu::EventKind::Barrier => Kind::Barrier,
        emu::EventKind::Invalidate => Kind::Invalidate,
    };
    let mut ev = Event {
        kind,
        device: None,
        instance: None,
        reg: None,
        memory: None,
        value: None,
        insn,
        dev_id: None,
        reg_id: None,
        raw: None,
        op,
        operands: Vec::new(),
        pc: e.pc_offset,
        line: None,
        fields: Vec::new(),
        decoded: None,
    };
    match (kind, ptr_param_at(layout, e.addr)) {
        (Kind::Store | Kind::Load, Some(p)) => memory_access(&mut ev, e, c, seq, p),
        (Kind::Store | Kind::Load, None) => register_access(&mut ev, e, prog, &layout.regions)?,
        (Kind::Invalidate, _) => {
            ev.operands = operand_values(&e.text);
            ev.value = ev.operands.first().map(|v| format!("{v:#x}"));
            ev.decoded = c
                .target
                .backend()
                .decode_invalidation(&ev.insn, &ev.operands);
        }
        (Kind::Barrier, _) => {}
    }
    Ok(ev)
}

/// The pointer parameter whose memory holds `addr`, if any.
fn ptr_param_at(layout: &Layout, addr: u64) -> Option<usize> {
    layout
        .ptr_params
        .iter()
        .find(|&&(p, _, _)| addr >= ptr_base(p) && addr - ptr_base(p) < PTR_SPAN)
        .map(|&(p, _, _)| p)
}

/// Stores into a queue's ring (`Q_ring`, see `spec::queue`) named as the
/// record they write: the entry's words so far are matched against each
/// record of the entry's size by its fixed fields (the opcode), and the
/// store gets that record's fields in the word it writes
/// (`cmd_tlbi_nh_va word 1 {addr: 0x1000, ...}`).
fn name_ring_records(
    prog: &Program,
    seq: &Seq,
    layout: &Layout,
    raw: &[emu::Event],
    events: &mut [Event],
) {
    let rings: Vec<(usize, u64)> = prog
        .queues
        .iter()
        .filter_map(|q| {
            let name = format!("{}_ring", q.name);
            Some((seq.params.iter().position(|x| *x == name)?, q.entry))
        })
        .collect();
    if rings.is_empty() {
        return;
    }
    let mut entries: rustc_hash::FxHashMap<(usize, u64), Vec<u64>> = Default::default();
    for (ev, e) in events.iter_mut().zip(raw) {
        let (Kind::Store, Some(v)) = (ev.kind, ev.raw) else {
            continue;
        };
        let Some(&(p, entry)) =
            ptr_param_at(layout, e.addr).and_then(|p| rings.iter().find(|&&(r, _)| r == p))
        else {
            continue;
        };
        let off = e.addr - ptr_base(p);
        if e.bytes.len() != 8 || !off.is_multiple_of(8) {
            continue;
        }
        let (slot, word) = (off / entry, (off % entry / 8) as u32);
        let words = entries
            .entry((p, slot))
            .or_insert_with(|| vec![0; (entry / 8) as usize]);
        if let Some(w) = words.get_mut(word as usize) {
            *w = v;
        }
        let Some(r) = prog
            .records
            .iter()
            .find(|r| r.size == entry && r.matches(words))
        else {
            continue;
        };
        ev.fields = r
            .fields
            .iter()
            .enumerate()
            .filter(|(_, f)| f.word == word)
            .map(|(i, f)| (f.name.clone(), r.get(i, words)))
            .collect();
        ev.decoded = Some(format!("{} word {word}", r.name));
    }
}

/// An access to the memory behind pointer parameter `p`: `name[offset]`
/// and the value, in the target's byte order.
fn memory_access(ev: &mut Event, e: &emu::Event, c: &Compiled, seq: &Seq, p: usize) {
    let endian = if c.target.big_endian() {
        Endian::Big
    } else {
        Endian::Little
    };
    let v = from_bytes(&e.bytes, endian);
    ev.memory = Some(format!(
        "{}[{:#x}]",
        seq.params.get(p).map_or("?", String::as_str),
        e.addr - ptr_base(p)
    ));
    ev.value = Some(format!("{v:#x}"));
    ev.raw = Some(v);
}

/// An access to a device register: which device, instance and register,
/// and the value in the register's byte order.
fn register_access(
    ev: &mut Event,
    e: &emu::Event,
    prog: &Program,
    regions: &[(u64, DevId, u64, u64)],
) -> Result<(), String> {
    let (base, d, i, _) = regions
        .iter()
        .copied()
        .find(|(b, _, _, n)| e.addr >= *b && e.addr < *b + n)
        .ok_or_else(|| format!("access to {:#x} outside every device", e.addr))?;
    let dev = &prog.devices[d];
    let off = e.addr - base;
    let ri = dev
        .regs
        .iter()
        .position(|r| r.offset == off && r.bytes() as usize == e.bytes.len())
        .ok_or_else(|| {
            format!(
                "{}-byte access at offset {off:#x} of `{}` matches no register",
                e.bytes.len(),
                dev.name
            )
        })?;
    let v = from_bytes(&e.bytes, dev.regs[ri].endian);
    ev.device = Some(dev.name.clone());
    ev.instance = Some(i);
    ev.reg = Some(dev.regs[ri].name.clone());
    ev.value = Some(format!("{v:#x}"));
    ev.dev_id = Some(d);
    ev.reg_id = Some(ri);
    ev.fields = dev
        .fields
        .iter()
        .filter(|f| f.reg == ri)
        .map(|f| (f.name.clone(), (v & f.mask()) >> f.shift))
        .collect();
    ev.raw = Some(v);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn byte_order_round_trips() {
        for e in [Endian::Big, Endian::Little] {
            for w in [1, 2, 4, 8] {
                let v = 0x0102_0304_0506_0708u64 & field_mask(0, w * 8);
                assert_eq!(from_bytes(&to_bytes(v, w, e), e), v);
            }
        }
        assert_eq!(to_bytes(0x0102, 2, Endian::Big), vec![1, 2]);
    }

    #[test]
    fn parses_operand_values() {
        assert_eq!(operand_values("tlbi vale1is, x1 = 0x1234"), vec![0x1234]);
        assert_eq!(
            operand_values("tlbie 4,5 = r4=0x1000, r5=0x22"),
            vec![0x1000, 0x22]
        );
        assert!(operand_values("eieio").is_empty());
    }
}
