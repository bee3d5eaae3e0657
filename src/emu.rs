//! Execute generated invalidation sequences under the Unicorn CPU emulator and
//! record what they do to device registers.
//!
//! [`run`] maps the code at [`CODE_BASE`], puts the arguments where the ABI
//! passes them (argument registers, then the caller's stack), points the
//! return address at [`SENTINEL_ADDR`] and runs until the function returns
//! there.  Loads and stores that hit an
//! [`MmioRegion`] become [`Event`]s (in execution order, bytes in memory
//! order); executed instructions listed in [`Program::classes`] become
//! `Barrier`/`Invalidate` events.  RAM regions are plain memory whose final
//! contents are handed back.
//!
//! Workarounds for Unicorn 2.1 quirks that this module relies on:
//! * POWER: only the default CPU model works, with `ctl_set_tlb_type(VIRTUAL)`
//!   (identity translation); little-endian mode is MSR[LE].  `tlbie`,
//!   `tlbiel`, `tlbsync` and friends raise a PROGRAM interrupt: the interrupt
//!   hook skips a faulting instruction if it is classified as a barrier or an
//!   invalidation (the event was already recorded by the code hook) and turns
//!   any other interrupt into [`EmuError::Fault`].
//! * AArch64 runs at EL1.  Range TLBIs (`tlbi rvae1is, ...`) are unknown system
//!   instructions that would re-execute forever when skipped by the SYS hook,
//!   so the hook skips every TLBI (op0 = 1, CRn = 8) *and* moves pc past it.
//! * RISC-V runs in M-mode, where `sfence.vma` executes; unicorn's CPU has
//!   no Svinval, so `sinval.vma`, `sfence.w.inval` and `sfence.inval.ir`
//!   raise an illegal-instruction exception that the interrupt hook skips
//!   like POWER's `tlbie` (the code hook recorded the event).
//! * Write hooks see the value before the store happens and, for byte-reversed
//!   stores such as `stdbrx`, unswapped; so a store's bytes are read back from
//!   memory at the next hook (or when emulation ends), which is the byte order
//!   actually stored.
//! * Scripted loads: the read hook runs before the load, so it writes the
//!   scripted (or last stored) bytes into the MMIO window and lets the load
//!   pick them up.

use std::collections::{BTreeMap, HashMap};
use std::fmt;

use unicorn_engine::{
    uc_error, Arch as UcArch, Arm64Insn, HookType, MemType, Mode, Prot, RegisterARM64,
    RegisterARM64CP, RegisterPPC, RegisterRISCV, RegisterX86, TlbType, Unicorn,
};

/// Address the code is mapped at.
pub const CODE_BASE: u64 = 0x10000;
/// Return address: emulation stops when control reaches it.
pub const SENTINEL_ADDR: u64 = 0x8000;
/// Lowest address of the stack.
pub const STACK_BASE: u64 = 0x7f00_0000;
/// Size of the stack.
pub const STACK_SIZE: u64 = 0x10000;
/// Space kept free above the initial stack pointer (POWER backchain / LR save
/// area, and generally a red zone for the callee).
const STACK_RESERVE: u64 = 512;
/// Upper bound on the guest memory mapped for one run.
const MAX_MAPPED: u64 = 1 << 30;
/// No wall-clock limit: unicorn's timer stops emulations early when several
/// run at once in one process (seen here with parallel tests: "no return
/// after 71432 instructions"); the instruction count is the bound.
const WALL_TIMEOUT_US: u64 = 0;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Arch {
    Power64Be,
    Power64Le,
    Aarch64,
    X86_64,
    Riscv64,
}

/// A device instance's register window.
#[derive(Clone, Debug)]
pub struct MmioRegion {
    pub base: u64,
    pub size: u64,
    pub reads: Vec<ScriptedRead>,
    /// Command-queue consumers in this window.
    pub queues: Vec<QueueModel>,
}

/// A command queue's consumer as a device that acts at once: a store to
/// the producer register is also stored at the consumer register (it
/// reaches the producer index at once), and the entries between the two
/// are read from memory, decoded by the records' fixed fields, and each
/// record's completion write (`write u32 data at addr << 2`) is made.
#[derive(Clone, Debug)]
pub struct QueueModel {
    /// Offsets of the producer and consumer registers in the window and
    /// their width in bytes.
    pub prod: u64,
    pub cons: u64,
    pub len: u64,
    /// Register byte order.
    pub big_endian: bool,
    /// Where the ring is, its entry size, log2 of its entries, and whether
    /// indices count entries with a wrap bit (else byte offsets).
    pub ring: u64,
    pub entry: u64,
    pub log2n: u64,
    pub wrap: bool,
    pub records: Vec<crate::spec::queue::RecordLayout>,
}

/// Successive loads at `base + offset` return these raw bytes (the last one
/// repeats); unscripted loads return the bytes last stored there (0
/// initially).
#[derive(Clone, Debug)]
pub struct ScriptedRead {
    pub offset: u64,
    pub values: Vec<Vec<u8>>,
}

/// Normal memory, e.g. a pointer array of device bases, or a lock word.
#[derive(Clone, Debug)]
pub struct RamRegion {
    pub base: u64,
    pub bytes: Vec<u8>,
    /// Loads and stores here become events (memory behind a pointer
    /// parameter: command entries, page tables), unlike bookkeeping such
    /// as the array of device bases.
    pub watch: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InsnClass {
    Barrier,
    Invalidate,
    Other,
}

#[derive(Clone, Debug)]
pub struct Program {
    pub arch: Arch,
    pub code: Vec<u8>,
    /// code offset -> class + text, for attributing executed barrier /
    /// invalidate instructions.
    pub classes: BTreeMap<u32, (InsnClass, String)>,
}

#[derive(Clone, Debug)]
pub struct Request {
    pub program: Program,
    pub args: Vec<u64>,
    pub mmio: Vec<MmioRegion>,
    pub ram: Vec<RamRegion>,
    pub max_insns: u64,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum EventKind {
    Store,
    Load,
    Barrier,
    Invalidate,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Event {
    pub kind: EventKind,
    /// 0 for barriers and invalidations.
    pub addr: u64,
    /// As in memory after the store / as returned by the load, memory order.
    /// Empty for barriers and invalidations.
    pub bytes: Vec<u8>,
    pub pc_offset: u32,
    /// Barrier / Invalidate: the class text.  Invalidate also gets the values
    /// of its operand registers: `"tlbi vale1is, x1 = 0x1234"` for one
    /// register, `"tlbie 4,5 = r4=0x1000, r5=0x0"` for several.
    pub text: String,
}

#[derive(Clone, Debug)]
pub struct Outcome {
    pub events: Vec<Event>,
    pub ret: u64,
    pub insns_executed: u64,
    /// Final contents of the request's RAM regions, in the same order.
    pub ram: Vec<RamRegion>,
}

#[derive(Debug)]
pub enum EmuError {
    Unicorn(String),
    Timeout { insns: u64 },
    Fault { pc_offset: u32, what: String },
}

impl fmt::Display for EmuError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EmuError::Unicorn(s) => write!(f, "unicorn: {s}"),
            EmuError::Timeout { insns } => {
                write!(f, "no return after {insns} instructions")
            }
            EmuError::Fault { pc_offset, what } => {
                write!(f, "fault at code offset {pc_offset:#x}: {what}")
            }
        }
    }
}

impl std::error::Error for EmuError {}

fn uc_err(what: &str, e: uc_error) -> EmuError {
    EmuError::Unicorn(format!("{what}: {e:?}"))
}

/// Per-device state kept while emulating.
struct MmioState {
    base: u64,
    size: u64,
    /// Bytes last stored by the program, by offset (what an unscripted load
    /// returns; absent = 0).  Sparse so that big windows cost nothing.
    shadow: HashMap<u64, u8>,
    /// offset -> (values, how many already returned)
    scripted: HashMap<u64, (Vec<Vec<u8>>, usize)>,
    queues: Vec<QueueModel>,
}

impl MmioState {
    /// The register at `off`, `len` bytes, as last stored.
    fn reg(&self, off: u64, len: u64, big_endian: bool) -> u64 {
        (0..len).fold(0, |acc, i| {
            let b = u64::from(self.shadow.get(&(off + i)).copied().unwrap_or(0));
            let sh = if big_endian { 8 * (len - 1 - i) } else { 8 * i };
            acc | (b << sh)
        })
    }
}

impl MmioState {
    fn contains(&self, addr: u64) -> bool {
        addr >= self.base && addr - self.base < self.size
    }
}

struct State {
    arch: Arch,
    code: Vec<u8>,
    classes: BTreeMap<u32, (InsnClass, String)>,
    mmio: Vec<MmioState>,
    events: Vec<Event>,
    /// Stores whose bytes must still be read back: (event index, addr, size).
    pending: Vec<(usize, u64, usize)>,
    executed: u64,
    max_insns: u64,
    timed_out: bool,
    last_pc: u64,
    last_size: u32,
    fault: Option<(u64, String)>,
    unmapped: Option<String>,
    /// POWER Book III-E: the MAS registers as the code wrote them
    /// (`mtspr`), which `mfspr` reads back and `tlbilx`/`tlbivax` take
    /// their operation from (MAS6).
    mas: [u64; 9],
    /// `mfspr RT,MASn` ran natively (unicorn reads its own, unused SPR):
    /// RT is set to the modelled value before the next instruction.
    mas_read: Option<(usize, u64)>,
}

/// A Book III-E system instruction the emulator models instead of
/// running: unicorn's POWER CPU is Book III-S, where they are illegal or
/// (MAS SPRs) unimplemented.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Sys {
    /// `mtspr MASn,RS`: (RS, n).
    Mtspr(usize, usize),
    /// `mfspr RT,MASn`: (RT, n).
    Mfspr(usize, usize),
    /// `mfmsr`, `wrtee`, `wrteei`, `tlbsx`, `tlbre`: no state kept.
    Other,
}

fn power_sys(w: u32) -> Option<Sys> {
    use crate::target::power::insn::Spr;
    if w >> 26 != 31 {
        return None;
    }
    let t = ((w >> 21) & 31) as usize;
    // The SPR field's halves are swapped in the word.
    let spr = || ((w >> 16) & 31 | ((w >> 11) & 31) << 5) as u16;
    let mas = || Spr::from_number(spr()).map(|Spr::Mas(n)| usize::from(n));
    Some(match (w >> 1) & 0x3ff {
        467 => Sys::Mtspr(t, mas()?),
        339 => Sys::Mfspr(t, mas()?),
        83 | 131 | 163 | 914 | 946 => Sys::Other,
        _ => return None,
    })
}

impl State {
    fn offset_of(&self, pc: u64) -> u32 {
        pc.checked_sub(CODE_BASE)
            .and_then(|o| u32::try_from(o).ok())
            .unwrap_or(u32::MAX)
    }

    fn class_at(&self, pc: u64) -> Option<&(InsnClass, String)> {
        let off = pc.checked_sub(CODE_BASE)?;
        if off >= self.code.len() as u64 {
            return None;
        }
        self.classes.get(&u32::try_from(off).ok()?)
    }

    /// Whether the instruction at `pc` may be skipped when it traps.
    fn skippable(&self, pc: u64) -> bool {
        matches!(
            self.class_at(pc),
            Some((InsnClass::Barrier | InsnClass::Invalidate, _))
        ) || self.sys_at(pc).is_some()
    }

    /// The Book III-E system instruction at `pc`, if any.
    fn sys_at(&self, pc: u64) -> Option<Sys> {
        match self.arch {
            Arch::Power64Be | Arch::Power64Le => power_sys(self.word_at(pc)?),
            _ => None,
        }
    }

    fn word_at(&self, pc: u64) -> Option<u32> {
        let off = usize::try_from(pc.checked_sub(CODE_BASE)?).ok()?;
        let b: [u8; 4] = self.code.get(off..off.checked_add(4)?)?.try_into().ok()?;
        Some(match self.arch {
            Arch::Power64Be => u32::from_be_bytes(b),
            _ => u32::from_le_bytes(b),
        })
    }
}

type Uc<'a> = Unicorn<'a, State>;

/// Reads back the bytes of stores whose hooks ran before the store happened.
fn flush_stores(uc: &mut Uc<'_>) {
    let pending = std::mem::take(&mut uc.get_data_mut().pending);
    for (idx, addr, size) in pending {
        let mut buf = vec![0u8; size];
        if uc.mem_read(addr, &mut buf).is_err() {
            continue;
        }
        let st = uc.get_data_mut();
        let big = st.arch == Arch::Power64Be;
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

fn on_mem(uc: &mut Uc<'_>, kind: MemType, addr: u64, size: usize) -> bool {
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

const PPC_GPRS: [RegisterPPC; 32] = [
    RegisterPPC::R0,
    RegisterPPC::R1,
    RegisterPPC::R2,
    RegisterPPC::R3,
    RegisterPPC::R4,
    RegisterPPC::R5,
    RegisterPPC::R6,
    RegisterPPC::R7,
    RegisterPPC::R8,
    RegisterPPC::R9,
    RegisterPPC::R10,
    RegisterPPC::R11,
    RegisterPPC::R12,
    RegisterPPC::R13,
    RegisterPPC::R14,
    RegisterPPC::R15,
    RegisterPPC::R16,
    RegisterPPC::R17,
    RegisterPPC::R18,
    RegisterPPC::R19,
    RegisterPPC::R20,
    RegisterPPC::R21,
    RegisterPPC::R22,
    RegisterPPC::R23,
    RegisterPPC::R24,
    RegisterPPC::R25,
    RegisterPPC::R26,
    RegisterPPC::R27,
    RegisterPPC::R28,
    RegisterPPC::R29,
    RegisterPPC::R30,
    RegisterPPC::R31,
];

const A64_GPRS: [RegisterARM64; 31] = [
    RegisterARM64::X0,
    RegisterARM64::X1,
    RegisterARM64::X2,
    RegisterARM64::X3,
    RegisterARM64::X4,
    RegisterARM64::X5,
    RegisterARM64::X6,
    RegisterARM64::X7,
    RegisterARM64::X8,
    RegisterARM64::X9,
    RegisterARM64::X10,
    RegisterARM64::X11,
    RegisterARM64::X12,
    RegisterARM64::X13,
    RegisterARM64::X14,
    RegisterARM64::X15,
    RegisterARM64::X16,
    RegisterARM64::X17,
    RegisterARM64::X18,
    RegisterARM64::X19,
    RegisterARM64::X20,
    RegisterARM64::X21,
    RegisterARM64::X22,
    RegisterARM64::X23,
    RegisterARM64::X24,
    RegisterARM64::X25,
    RegisterARM64::X26,
    RegisterARM64::X27,
    RegisterARM64::X28,
    RegisterARM64::X29,
    RegisterARM64::X30,
];

const X86_GPRS: [(&str, RegisterX86); 16] = [
    ("rax", RegisterX86::RAX),
    ("rbx", RegisterX86::RBX),
    ("rcx", RegisterX86::RCX),
    ("rdx", RegisterX86::RDX),
    ("rsi", RegisterX86::RSI),
    ("rdi", RegisterX86::RDI),
    ("rbp", RegisterX86::RBP),
    ("rsp", RegisterX86::RSP),
    ("r8", RegisterX86::R8),
    ("r9", RegisterX86::R9),
    ("r10", RegisterX86::R10),
    ("r11", RegisterX86::R11),
    ("r12", RegisterX86::R12),
    ("r13", RegisterX86::R13),
    ("r14", RegisterX86::R14),
    ("r15", RegisterX86::R15),
];

/// Operand registers (name, value) of the invalidation instruction at `pc`,
/// read before it executes.
fn invalidate_operands(uc: &Uc<'_>, pc: u64, text: &str) -> Vec<(String, u64)> {
    let st = uc.get_data();
    let mut out = Vec::new();
    match st.arch {
        Arch::Aarch64 => {
            // SYS #op1, Cn, Cm, #op2, Xt (TLBI is an alias): 0xd508_0000 | ...
            if let Some(w) = st.word_at(pc) {
                if w & 0xfff8_0000 == 0xd508_0000 {
                    let rt = (w & 31) as usize;
                    if let Some(r) = A64_GPRS.get(rt) {
                        out.push((format!("x{rt}"), uc.reg_read(*r).unwrap_or(0)));
                    } else if (w >> 5) & 7 != 0 {
                        // Every EL1 TLBI but VMALLE1* (op2 0) reads Xt:
                        // register 31 is XZR there.
                        out.push(("xzr".to_string(), 0));
                    }
                }
            }
        }
        Arch::Power64Be | Arch::Power64Le => {
            if let Some(w) = st.word_at(pc) {
                let ra = ((w >> 16) & 31) as usize;
                let rb = ((w >> 11) & 31) as usize;
                let gpr = |r: usize| uc.reg_read(PPC_GPRS[r]).unwrap_or(0);
                // EA = (RA|0) + RB.
                let ea = || (if ra == 0 { 0 } else { gpr(ra) }).wrapping_add(gpr(rb));
                let mas6 = || ("mas6".to_string(), st.mas[6]);
                match (w >> 26, (w >> 1) & 0x3ff, (w >> 21) & 3) {
                    // Book III-E tlbilx T=0 (nothing), T=1 (MAS6), T=3
                    // and tlbivax (EA, MAS6): the spec's operands.
                    (31, 18, 1) => out.push(mas6()),
                    (31, 18, 3) | (31, 786, _) => {
                        out.push(("ea".to_string(), ea()));
                        out.push(mas6());
                    }
                    _ => {}
                }
                if w >> 26 == 31 {
                    let rs = ((w >> 21) & 31) as usize;
                    let regs: &[usize] = match (w >> 1) & 0x3ff {
                        306 | 274 | 466 => &[rb, rs], // tlbie, tlbiel, slbieg
                        434 => &[rb],                 // slbie
                        _ => &[],
                    };
                    for &r in regs {
                        out.push((format!("r{r}"), uc.reg_read(PPC_GPRS[r]).unwrap_or(0)));
                    }
                }
            }
        }
        Arch::Riscv64 => {
            // SFENCE.VMA / SINVAL.VMA rs1, rs2: the registers that are
            // not x0, which are the spec's operands (x0 is in the name).
            if let Some(w) = st.word_at(pc) {
                if w & 0x7f == 0x73 && matches!(w >> 25, 0x09 | 0x0b) {
                    for r in [(w >> 15) & 31, (w >> 20) & 31] {
                        if r != 0 {
                            let v = uc.reg_read(rv_gpr(r)).unwrap_or(0);
                            out.push((format!("x{r}"), v));
                        }
                    }
                }
            }
        }
        Arch::X86_64 => {
            let lower = text.to_ascii_lowercase();
            for tok in lower.split(|c: char| !c.is_ascii_alphanumeric()) {
                if let Some((name, r)) = X86_GPRS.iter().find(|(n, _)| *n == tok) {
                    if !out.iter().any(|(n, _)| n == name) {
                        out.push(((*name).to_string(), uc.reg_read(*r).unwrap_or(0)));
                    }
                }
            }
        }
    }
    out
}

fn on_code(uc: &mut Uc<'_>, addr: u64, size: u32) {
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
    if let Some((rt, v)) = uc.get_data_mut().mas_read.take() {
        let _ = uc.reg_write(PPC_GPRS[rt], v);
    }
    // Before it runs (or traps): the value it writes to a MAS register,
    // or the one it reads.
    match uc.get_data().sys_at(addr) {
        Some(Sys::Mtspr(rs, n)) => {
            let v = uc.reg_read(PPC_GPRS[rs]).unwrap_or(0);
            uc.get_data_mut().mas[n] = v;
        }
        Some(Sys::Mfspr(rt, n)) => {
            let st = uc.get_data_mut();
            st.mas_read = Some((rt, st.mas[n]));
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
            let ops = invalidate_operands(uc, addr, &text);
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

fn pc_reg(arch: Arch) -> i32 {
    match arch {
        Arch::Power64Be | Arch::Power64Le => RegisterPPC::PC.into(),
        Arch::Aarch64 => RegisterARM64::PC.into(),
        Arch::X86_64 => RegisterX86::RIP.into(),
        Arch::Riscv64 => RegisterRISCV::PC.into(),
    }
}

/// Unicorn's number of RISC-V integer register `n` (X0..X31 are
/// consecutive).
fn rv_gpr(n: u32) -> i32 {
    i32::from(RegisterRISCV::X0) + n as i32
}

/// Skips the trapping instruction at `last_pc` if it is a classified barrier
/// or invalidation; otherwise records a fault and stops.  Returns whether the
/// instruction was skipped.
fn skip_or_fault(uc: &mut Uc<'_>, what: String) -> bool {
    flush_stores(uc);
    let st = uc.get_data();
    let (pc, size, arch) = (st.last_pc, st.last_size, st.arch);
    if st.skippable(pc) {
        if let Some(Sys::Mfspr(rt, n)) = st.sys_at(pc) {
            let v = st.mas[n];
            let _ = uc.reg_write(PPC_GPRS[rt], v);
        }
        let _ = uc.reg_write(pc_reg(arch), pc.wrapping_add(u64::from(size.max(1))));
        true
    } else {
        if uc.get_data().fault.is_none() {
            uc.get_data_mut().fault = Some((pc, what));
        }
        let _ = uc.emu_stop();
        false
    }
}

/// Write stack argument `v` at `addr`, which must lie in the stack's
/// reserve above the initial stack pointer.
fn stack_arg(uc: &mut Uc<'_>, addr: u64, v: u64, big_endian: bool) -> Result<(), EmuError> {
    if addr + 8 > STACK_BASE + STACK_SIZE {
        return Err(EmuError::Unicorn(format!(
            "stack argument at {addr:#x} is past the stack's end"
        )));
    }
    let bytes = if big_endian {
        v.to_be_bytes()
    } else {
        v.to_le_bytes()
    };
    uc.mem_write(addr, &bytes)
        .map_err(|e| uc_err("stack argument", e))
}

/// A mapped span: (start, length) with a label for overlap diagnostics.
struct Span {
    start: u64,
    len: u64,
    what: String,
}

fn layout(req: &Request) -> Result<Vec<Span>, EmuError> {
    let code_len = (req.program.code.len() as u64).max(4);
    let mut spans = vec![
        Span {
            start: CODE_BASE,
            len: code_len,
            what: "code".into(),
        },
        Span {
            start: SENTINEL_ADDR,
            len: 16,
            what: "return sentinel".into(),
        },
        Span {
            start: STACK_BASE,
            len: STACK_SIZE,
            what: "stack".into(),
        },
    ];
    for (i, m) in req.mmio.iter().enumerate() {
        spans.push(Span {
            start: m.base,
            len: m.size,
            what: format!("mmio[{i}]"),
        });
    }
    for (i, r) in req.ram.iter().enumerate() {
        spans.push(Span {
            start: r.base,
            len: r.bytes.len() as u64,
            what: format!("ram[{i}]"),
        });
    }
    spans.retain(|s| s.len > 0);
    for s in &spans {
        if s.start.checked_add(s.len).is_none() {
            return Err(EmuError::Unicorn(format!(
                "{} at {:#x} (+{:#x}) wraps around the address space",
                s.what, s.start, s.len
            )));
        }
    }
    for (i, a) in spans.iter().enumerate() {
        for b in &spans[i + 1..] {
            if a.start < b.start + b.len && b.start < a.start + a.len {
                return Err(EmuError::Unicorn(format!(
                    "{} at {:#x} overlaps {} at {:#x}",
                    a.what, a.start, b.what, b.start
                )));
            }
        }
    }
    Ok(spans)
}

/// Page-aligned, merged intervals covering all spans.
fn pages(spans: &[Span], page: u64) -> Result<Vec<(u64, u64)>, EmuError> {
    let mut iv: Vec<(u64, u64)> = Vec::new();
    for s in spans {
        let lo = s.start & !(page - 1);
        let hi = (s.start + s.len)
            .checked_add(page - 1)
            .map(|x| x & !(page - 1))
            .ok_or_else(|| EmuError::Unicorn(format!("{} too close to 2^64", s.what)))?;
        iv.push((lo, hi));
    }
    iv.sort_unstable();
    let mut merged: Vec<(u64, u64)> = Vec::new();
    for (lo, hi) in iv {
        match merged.last_mut() {
            Some(last) if lo <= last.1 => last.1 = last.1.max(hi),
            _ => merged.push((lo, hi)),
        }
    }
    let total: u64 = merged.iter().map(|(lo, hi)| hi - lo).sum();
    if total > MAX_MAPPED {
        return Err(EmuError::Unicorn(format!(
            "regions need {total:#x} bytes of guest memory, more than {MAX_MAPPED:#x}"
        )));
    }
    Ok(merged)
}

/// Runs `req.program` until it returns, faults or exceeds `req.max_insns`.
pub fn run(req: &Request) -> Result<Outcome, EmuError> {
    let arch = req.program.arch;
    let spans = layout(req)?;

    let state = State {
        arch,
        code: req.program.code.clone(),
        classes: req.program.classes.clone(),
        mmio: req
            .mmio
            .iter()
            .filter(|m| m.size > 0)
            .map(|m| {
                let mut scripted: HashMap<u64, (Vec<Vec<u8>>, usize)> = HashMap::new();
                for s in &m.reads {
                    if !s.values.is_empty() {
                        scripted
                            .entry(s.offset)
                            .or_default()
                            .0
                            .extend(s.values.iter().cloned());
                    }
                }
                MmioState {
                    base: m.base,
                    size: m.size,
                    shadow: HashMap::new(),
                    scripted,
                    queues: m.queues.clone(),
                }
            })
            .collect(),
        events: Vec::new(),
        pending: Vec::new(),
        executed: 0,
        max_insns: req.max_insns,
        timed_out: false,
        last_pc: CODE_BASE,
        last_size: 0,
        fault: None,
        unmapped: None,
        mas: [0; 9],
        mas_read: None,
    };

    let (uc_arch, mode) = match arch {
        Arch::Power64Be | Arch::Power64Le => (UcArch::PPC, Mode::PPC64 | Mode::BIG_ENDIAN),
        Arch::Aarch64 => (UcArch::ARM64, Mode::ARM),
        Arch::X86_64 => (UcArch::X86, Mode::MODE_64),
        Arch::Riscv64 => (UcArch::RISCV, Mode::RISCV64),
    };
    let mut uc = Unicorn::new_with_data(uc_arch, mode, state).map_err(|e| uc_err("open", e))?;
    if matches!(arch, Arch::Power64Be | Arch::Power64Le) {
        uc.ctl_set_tlb_type(TlbType::VIRTUAL)
            .map_err(|e| uc_err("set tlb type", e))?;
    }

    // Memory.
    let page = u64::from(uc.ctl_get_page_size().unwrap_or(0x1000))
        .max(0x1000)
        .next_power_of_two();
    for (lo, hi) in pages(&spans, page)? {
        uc.mem_map(lo, hi - lo, Prot::ALL)
            .map_err(|e| uc_err(&format!("map {lo:#x}..{hi:#x}"), e))?;
    }
    uc.mem_write(CODE_BASE, &req.program.code)
        .map_err(|e| uc_err("write code", e))?;
    let stop_insn: Vec<u8> = match arch {
        Arch::Power64Be => 0x7fe0_0008u32.to_be_bytes().to_vec(), // trap
        Arch::Power64Le => 0x7fe0_0008u32.to_le_bytes().to_vec(),
        Arch::Aarch64 => 0xd420_0000u32.to_le_bytes().to_vec(), // brk #0
        Arch::X86_64 => vec![0xf4],                             // hlt
        Arch::Riscv64 => 0x0010_0073u32.to_le_bytes().to_vec(), // ebreak
    };
    uc.mem_write(SENTINEL_ADDR, &stop_insn)
        .map_err(|e| uc_err("write sentinel", e))?;
    for r in &req.ram {
        uc.mem_write(r.base, &r.bytes)
            .map_err(|e| uc_err(&format!("write ram at {:#x}", r.base), e))?;
    }

    // Registers.
    let sp = STACK_BASE + STACK_SIZE - STACK_RESERVE;
    let reg = |uc: &mut Uc<'_>, r: i32, v: u64| -> Result<(), EmuError> {
        uc.reg_write(r, v).map_err(|e| uc_err("register write", e))
    };
    match arch {
        Arch::Power64Be | Arch::Power64Le => {
            // Past r10, each argument is in its doubleword of the
            // parameter save area, after the 48-byte (ELFv1) or 32-byte
            // (ELFv2) frame header (see target::power::lower).
            let area = if arch == Arch::Power64Le { 32 } else { 48 };
            for (i, a) in req.args.iter().enumerate() {
                match PPC_GPRS.get(3 + i).filter(|_| i < 8) {
                    Some(r) => reg(&mut uc, (*r).into(), *a)?,
                    None => stack_arg(
                        &mut uc,
                        sp + area + 8 * i as u64,
                        *a,
                        arch == Arch::Power64Be,
                    )?,
                }
            }
            reg(&mut uc, RegisterPPC::R1.into(), sp)?;
            uc.mem_write(sp, &0u64.to_be_bytes())
                .map_err(|e| uc_err("backchain", e))?;
            reg(&mut uc, RegisterPPC::R12.into(), CODE_BASE)?;
            reg(&mut uc, RegisterPPC::LR.into(), SENTINEL_ADDR)?;
            if arch == Arch::Power64Le {
                let msr = uc
                    .reg_read(RegisterPPC::MSR)
                    .map_err(|e| uc_err("read msr", e))?;
                reg(&mut uc, RegisterPPC::MSR.into(), msr | 1)?;
            }
        }
        Arch::Aarch64 => {
            // AAPCS64: past x7, 8-byte slots from sp up.
            for (i, a) in req.args.iter().enumerate() {
                match A64_GPRS.get(i).filter(|_| i < 8) {
                    Some(r) => reg(&mut uc, (*r).into(), *a)?,
                    None => stack_arg(&mut uc, sp + 8 * (i as u64 - 8), *a, false)?,
                }
            }
            reg(&mut uc, RegisterARM64::SP.into(), sp)?;
            reg(&mut uc, RegisterARM64::X30.into(), SENTINEL_ADDR)?;
        }
        Arch::Riscv64 => {
            // psABI: past a7, 8-byte slots from sp up.
            for (i, a) in req.args.iter().enumerate() {
                if i < 8 {
                    reg(&mut uc, rv_gpr(10 + i as u32), *a)?;
                } else {
                    stack_arg(&mut uc, sp + 8 * (i as u64 - 8), *a, false)?;
                }
            }
            reg(&mut uc, RegisterRISCV::SP.into(), sp)?;
            reg(&mut uc, RegisterRISCV::RA.into(), SENTINEL_ADDR)?;
        }
        Arch::X86_64 => {
            const ARGS: [RegisterX86; 6] = [
                RegisterX86::RDI,
                RegisterX86::RSI,
                RegisterX86::RDX,
                RegisterX86::RCX,
                RegisterX86::R8,
                RegisterX86::R9,
            ];
            // SysV: past r9, 8-byte slots above the return address.
            for (i, a) in req.args.iter().enumerate() {
                match ARGS.get(i) {
                    Some(r) => reg(&mut uc, (*r).into(), *a)?,
                    None => stack_arg(&mut uc, sp + 8 * (i - ARGS.len()) as u64, *a, false)?,
                }
            }
            let rsp = sp - 8;
            uc.mem_write(rsp, &SENTINEL_ADDR.to_le_bytes())
                .map_err(|e| uc_err("push return address", e))?;
            reg(&mut uc, RegisterX86::RSP.into(), rsp)?;
        }
    }

    // Hooks.
    uc.add_code_hook(1, 0, on_code)
        .map_err(|e| uc_err("code hook", e))?;
    for m in req.mmio.iter().filter(|m| m.size > 0) {
        uc.add_mem_hook(
            HookType::MEM_READ | HookType::MEM_WRITE,
            m.base,
            m.base + m.size - 1,
            |uc, kind, addr, size, _value| on_mem(uc, kind, addr, size),
        )
        .map_err(|e| uc_err("memory hook", e))?;
    }
    for r in req.ram.iter().filter(|r| r.watch && !r.bytes.is_empty()) {
        uc.add_mem_hook(
            HookType::MEM_READ | HookType::MEM_WRITE,
            r.base,
            r.base + r.bytes.len() as u64 - 1,
            |uc, kind, addr, size, _value| on_mem(uc, kind, addr, size),
        )
        .map_err(|e| uc_err("memory hook", e))?;
    }
    uc.add_mem_hook(HookType::MEM_UNMAPPED, 1, 0, |uc, kind, addr, size, _| {
        flush_stores(uc);
        let what = match kind {
            MemType::READ_UNMAPPED => "load from",
            MemType::WRITE_UNMAPPED => "store to",
            MemType::FETCH_UNMAPPED => "fetch from",
            _ => "access to",
        };
        uc.get_data_mut().unmapped =
            Some(format!("{what} unmapped address {addr:#x} ({size} bytes)"));
        false
    })
    .map_err(|e| uc_err("unmapped hook", e))?;
    uc.add_intr_hook(|uc, intno| {
        skip_or_fault(uc, format!("interrupt {intno}"));
    })
    .map_err(|e| uc_err("interrupt hook", e))?;
    uc.add_insn_invalid_hook(|uc| skip_or_fault(uc, "invalid instruction".into()))
        .map_err(|e| uc_err("invalid-instruction hook", e))?;
    if arch == Arch::Aarch64 {
        uc.add_insn_sys_hook_arm64(
            Arm64Insn::UC_ARM64_INS_SYS,
            1,
            0,
            |uc, _rt, cp: &RegisterARM64CP| {
                if cp.op0 == 1 && cp.crn == 8 {
                    // TLBI: nothing to do for an emulator without a TLB model.
                    // pc must be moved by hand: for unknown encodings (range
                    // TLBIs) the translator ends the block after the skipped
                    // instruction without advancing pc.
                    let pc_reg = pc_reg(Arch::Aarch64);
                    let pc = uc.reg_read(pc_reg).unwrap_or(uc.get_data().last_pc);
                    let _ = uc.reg_write(pc_reg, pc.wrapping_add(4));
                    true
                } else {
                    false
                }
            },
        )
        .map_err(|e| uc_err("sys hook", e))?;
    }

    let res = uc.emu_start(CODE_BASE, SENTINEL_ADDR, WALL_TIMEOUT_US, 0);
    flush_stores(&mut uc);

    let st = uc.get_data();
    let fault_at = |pc: u64, what: String| EmuError::Fault {
        pc_offset: st.offset_of(pc),
        what,
    };
    if let Some((pc, what)) = &st.fault {
        return Err(fault_at(*pc, what.clone()));
    }
    if st.timed_out {
        return Err(EmuError::Timeout { insns: st.executed });
    }
    if let Err(e) = res {
        let what = match (e, &st.unmapped) {
            (
                uc_error::READ_UNMAPPED | uc_error::WRITE_UNMAPPED | uc_error::FETCH_UNMAPPED,
                Some(u),
            ) => u.clone(),
            (uc_error::INSN_INVALID, _) => "invalid instruction".to_string(),
            (e, _) => format!("{e:?}"),
        };
        return Err(fault_at(st.last_pc, what));
    }
    // Not `pc_read`: it fails with MODE for PPC64 | BIG_ENDIAN.
    let pc = uc
        .reg_read(pc_reg(arch))
        .map_err(|e| uc_err("read pc", e))?;
    if pc != SENTINEL_ADDR {
        return Err(EmuError::Timeout { insns: st.executed });
    }

    let ret_reg: i32 = match arch {
        Arch::Power64Be | Arch::Power64Le => RegisterPPC::R3.into(),
        Arch::Aarch64 => RegisterARM64::X0.into(),
        Arch::X86_64 => RegisterX86::RAX.into(),
        Arch::Riscv64 => RegisterRISCV::A0.into(),
    };
    let ret = uc.reg_read(ret_reg).map_err(|e| uc_err("read result", e))?;
    let mut ram = Vec::with_capacity(req.ram.len());
    for r in &req.ram {
        let mut bytes = vec![0u8; r.bytes.len()];
        uc.mem_read(r.base, &mut bytes)
            .map_err(|e| uc_err("read ram", e))?;
        ram.push(RamRegion {
            base: r.base,
            bytes,
            watch: r.watch,
        });
    }
    let st = uc.get_data();
    Ok(Outcome {
        events: st.events.clone(),
        ret,
        insns_executed: st.executed,
        ram,
    })
}
