//! What the hooks keep while emulating: the devices' registers, the
//! events so far, where execution is, and the modelled system registers.

use std::collections::{BTreeMap, HashMap};

use unicorn_engine::Unicorn;

use super::{EmuTarget, Event, InsnClass, MmioRegion, QueueModel, Request, CODE_BASE};

/// Per-device state kept while emulating.
pub(super) struct MmioState {
    pub(super) base: u64,
    pub(super) size: u64,
    /// Bytes last stored by the program, by offset (what an unscripted load
    /// returns; absent = 0).  Sparse so that big windows cost nothing.
    pub(super) shadow: HashMap<u64, u8>,
    /// offset -> (values, how many already returned)
    pub(super) scripted: HashMap<u64, (Vec<Vec<u8>>, usize)>,
    pub(super) queues: Vec<QueueModel>,
}

impl MmioState {
    /// The register at `off`, `len` bytes, as last stored.
    pub(super) fn reg(&self, off: u64, len: u64, big_endian: bool) -> u64 {
        (0..len).fold(0, |acc, i| {
            let b = u64::from(self.shadow.get(&(off + i)).copied().unwrap_or(0));
            let sh = if big_endian { 8 * (len - 1 - i) } else { 8 * i };
            acc | (b << sh)
        })
    }
}

impl MmioState {
    pub(super) fn contains(&self, addr: u64) -> bool {
        addr >= self.base && addr - self.base < self.size
    }
}

/// What the hooks keep while emulating (opaque outside the runner).
pub struct State {
    pub(super) target: &'static dyn EmuTarget,
    /// The program's byte order.
    pub(super) big_endian: bool,
    pub(super) code: Vec<u8>,
    pub(super) classes: BTreeMap<u32, (InsnClass, String)>,
    pub(super) mmio: Vec<MmioState>,
    pub(super) events: Vec<Event>,
    /// Stores whose bytes must still be read back: (event index, addr, size).
    pub(super) pending: Vec<(usize, u64, usize)>,
    pub(super) executed: u64,
    pub(super) max_insns: u64,
    pub(super) timed_out: bool,
    pub(super) last_pc: u64,
    pub(super) last_size: u32,
    pub(super) fault: Option<(u64, String)>,
    pub(super) unmapped: Option<String>,
    /// Modelled system registers (POWER Book III-E: the MAS registers)
    /// as the code wrote them (`mtspr`), which reads (`mfspr`) return and
    /// invalidations (`tlbilx`/`tlbivax`) take their operation from
    /// (MAS6); absent = 0.
    pub(super) sys_regs: HashMap<usize, u64>,
    /// A modelled register read ran natively (unicorn reads its own,
    /// unused SPR): (GPR, value) the GPR is set to before the next
    /// instruction.
    pub(super) sys_read: Option<(i32, u64)>,
    /// Whether each TLB lookup finds its entry (the last repeats; none:
    /// never), and how many ran.
    pub(super) tlb_found: Vec<bool>,
    pub(super) lookups: usize,
}

/// A system instruction the emulator models instead of running, with
/// unicorn's numbers of the GPRs it moves (POWER Book III-E on unicorn's
/// Book III-S CPU, where they are illegal or, MAS SPRs, unimplemented).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sys {
    /// Modelled register `reg` = `gpr` (`mtspr MASn,RS`).
    Write { gpr: i32, reg: usize },
    /// `gpr` = modelled register `reg` (`mfspr RT,MASn`).
    Read { gpr: i32, reg: usize },
    /// `tlbsx RA,RB` (`ea`: the GPRs of EA = (RA|0) + RB) or `tlbre`
    /// (None): the MAS registers as [`Request::tlb_found`] says.
    TlbLookup { ea: Option<(Option<i32>, i32)> },
    /// No state kept (`mfmsr`, `wrtee`, `wrteei`).
    Other,
}

impl State {
    pub(super) fn offset_of(&self, pc: u64) -> u32 {
        pc.checked_sub(CODE_BASE)
            .and_then(|o| u32::try_from(o).ok())
            .unwrap_or(u32::MAX)
    }

    pub(super) fn class_at(&self, pc: u64) -> Option<&(InsnClass, String)> {
        let off = pc.checked_sub(CODE_BASE)?;
        if off >= self.code.len() as u64 {
            return None;
        }
        self.classes.get(&u32::try_from(off).ok()?)
    }

    /// Whether the instruction at `pc` may be skipped when it traps.
    pub(super) fn skippable(&self, pc: u64) -> bool {
        matches!(
            self.class_at(pc),
            Some((InsnClass::Barrier | InsnClass::Invalidate, _))
        ) || self.sys_at(pc).is_some()
    }

    /// The modelled system instruction at `pc`, if any.
    pub(super) fn sys_at(&self, pc: u64) -> Option<Sys> {
        self.target.system_insn(self.word_at(pc)?)
    }

    /// The 4-byte instruction word at `pc`, in the target's byte order.
    pub(crate) fn word_at(&self, pc: u64) -> Option<u32> {
        let off = usize::try_from(pc.checked_sub(CODE_BASE)?).ok()?;
        let b: [u8; 4] = self.code.get(off..off.checked_add(4)?)?.try_into().ok()?;
        Some(if self.big_endian {
            u32::from_be_bytes(b)
        } else {
            u32::from_le_bytes(b)
        })
    }

    /// Modelled system register `n`.
    pub(crate) fn sys_reg(&self, n: usize) -> u64 {
        self.target.sys_read(&self.sys_regs, n)
    }

    /// The instruction executing (or last executed).
    pub(crate) fn last_pc(&self) -> u64 {
        self.last_pc
    }
}

/// The engine with the runner's state.
pub type Uc<'a> = Unicorn<'a, State>;

impl State {
    pub(super) fn new(req: &Request, target: &'static dyn EmuTarget) -> State {
        State {
            target,
            big_endian: req.program.big_endian,
            code: req.program.code.clone(),
            classes: req.program.classes.clone(),
            mmio: req
                .mmio
                .iter()
                .filter(|m| m.size > 0)
                .map(MmioState::new)
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
            sys_regs: HashMap::new(),
            sys_read: None,
            tlb_found: req.tlb_found.clone(),
            lookups: 0,
        }
    }
}

impl MmioState {
    pub(super) fn new(m: &MmioRegion) -> MmioState {
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
    }
}
