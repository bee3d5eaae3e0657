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
//! This runner knows no architecture: each target says how its code runs
//! (unicorn mode, registers, ABI entry, the decoding of what traps) in its
//! `emu.rs`, as an [`EmuTarget`] its backend hands out
//! (`Backend::emu` in `crate::isa`).
//!
//! Workarounds for Unicorn 2.1 quirks that this module relies on (the
//! targets' own are in their `emu.rs`):
//! * Privileged instructions trap (POWER's `tlbie`, RISC-V's Svinval): the
//!   interrupt hook skips a faulting instruction if it is classified as a
//!   barrier or an invalidation (the event was already recorded by the code
//!   hook) or is a system instruction the target models, and turns any
//!   other interrupt into [`EmuError::Fault`].
//! * Write hooks see the value before the store happens and, for byte-reversed
//!   stores such as `stdbrx`, unswapped; so a store's bytes are read back from
//!   memory at the next hook (or when emulation ends), which is the byte order
//!   actually stored.
//! * Scripted loads: the read hook runs before the load, so it writes the
//!   scripted (or last stored) bytes into the MMIO window and lets the load
//!   pick them up.

use std::collections::BTreeMap;
use std::fmt;

use unicorn_engine::{uc_error, Arch as UcArch, HookType, MemType, Mode, Prot, Unicorn};

mod hooks;
mod layout;
mod state;

use hooks::{flush_stores, on_code, on_mem, skip_or_fault};
use layout::{layout, pages, Span};
pub use state::{State, Sys, Uc};

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
    /// The byte order of the code and data (the target's).
    pub big_endian: bool,
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
    /// Whether each Book III-E TLB lookup (`tlbsx`, `tlbre`) finds its
    /// entry, in order; the last repeats, and none means never (the
    /// emulator has no TLB).
    pub tlb_found: Vec<bool>,
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

/// What the runner needs to know about a target's CPU and ABI. Each target
/// implements it in its `emu.rs` (its backend hands it out); the byte
/// order of code and data comes with the [`Program`].
pub trait EmuTarget: Sync {
    /// Unicorn's architecture and mode.
    fn unicorn_mode(&self) -> (UcArch, Mode);
    /// Sets up the engine just opened, before memory is mapped.
    fn configure(&self, _uc: &mut Uc<'_>) -> Result<(), EmuError> {
        Ok(())
    }
    /// The program counter (read by number: `pc_read` fails for some
    /// modes).
    fn pc_reg(&self) -> i32;
    /// The register the result is returned in.
    fn ret_reg(&self) -> i32;
    /// The instruction at [`SENTINEL_ADDR`], which stops the emulation
    /// when the function returns there.
    fn stop_insn(&self) -> Vec<u8>;
    /// Puts `args` where the ABI passes them (registers, then the stack
    /// from `sp`), points the stack pointer at `sp` and the return address
    /// at [`SENTINEL_ADDR`].
    fn enter(&self, uc: &mut Uc<'_>, args: &[u64], sp: u64) -> Result<(), EmuError>;
    /// Hooks of this target's own, added after the runner's.
    fn add_hooks(&self, _uc: &mut Uc<'_>) -> Result<(), EmuError> {
        Ok(())
    }
    /// The system instruction `word` if the emulator models it instead of
    /// running it (it would trap or misbehave on unicorn's CPU).
    fn system_insn(&self, _word: u32) -> Option<Sys> {
        None
    }
    /// A write of `v` to modelled system register `reg` (as
    /// [`EmuTarget::system_insn`] numbers it).
    fn sys_write(&self, regs: &mut std::collections::HashMap<usize, u64>, reg: usize, v: u64) {
        regs.insert(reg, v);
    }
    /// A TLB lookup (`ea` Some: a search for EA; None: a read of the
    /// entry the registers name) that does or does not find its entry.
    fn tlb_lookup(
        &self,
        _regs: &mut std::collections::HashMap<usize, u64>,
        _found: bool,
        _ea: Option<u64>,
    ) {
    }
    /// A read of modelled system register `reg` (never written: 0).
    fn sys_read(&self, regs: &std::collections::HashMap<usize, u64>, reg: usize) -> u64 {
        regs.get(&reg).copied().unwrap_or(0)
    }
    /// Operand registers (name, value) of the invalidation instruction at
    /// `pc` whose class text is `text`, read before it executes.
    fn invalidate_operands(&self, uc: &Uc<'_>, pc: u64, text: &str) -> Vec<(String, u64)>;
}

pub(crate) fn uc_err(what: &str, e: uc_error) -> EmuError {
    EmuError::Unicorn(format!("{what}: {e:?}"))
}

/// Write stack argument `v` at `addr`, which must lie in the stack's
/// reserve above the initial stack pointer.
pub(crate) fn stack_arg(
    uc: &mut Uc<'_>,
    addr: u64,
    v: u64,
    big_endian: bool,
) -> Result<(), EmuError> {
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

/// Writes register `r` (unicorn's number).
pub(crate) fn write_reg(uc: &mut Uc<'_>, r: i32, v: u64) -> Result<(), EmuError> {
    uc.reg_write(r, v).map_err(|e| uc_err("register write", e))
}

/// The engine for `state`'s target.
fn open(state: State) -> Result<Uc<'static>, EmuError> {
    let target = state.target;
    let (uc_arch, mode) = target.unicorn_mode();
    let mut uc = Unicorn::new_with_data(uc_arch, mode, state).map_err(|e| uc_err("open", e))?;
    target.configure(&mut uc)?;
    Ok(uc)
}

/// Maps the spans and writes the code, the stop instruction at the
/// return sentinel and the RAM regions' contents.
fn load(uc: &mut Uc<'_>, req: &Request, spans: &[Span]) -> Result<(), EmuError> {
    let page = u64::from(uc.ctl_get_page_size().unwrap_or(0x1000))
        .max(0x1000)
        .next_power_of_two();
    for (lo, hi) in pages(spans, page)? {
        uc.mem_map(lo, hi - lo, Prot::ALL)
            .map_err(|e| uc_err(&format!("map {lo:#x}..{hi:#x}"), e))?;
    }
    uc.mem_write(CODE_BASE, &req.program.code)
        .map_err(|e| uc_err("write code", e))?;
    let stop_insn = uc.get_data().target.stop_insn();
    uc.mem_write(SENTINEL_ADDR, &stop_insn)
        .map_err(|e| uc_err("write sentinel", e))?;
    for r in &req.ram {
        uc.mem_write(r.base, &r.bytes)
            .map_err(|e| uc_err(&format!("write ram at {:#x}", r.base), e))?;
    }
    Ok(())
}

/// Records the loads and stores in `base..base + len` as events.
fn watch(uc: &mut Uc<'_>, base: u64, len: u64) -> Result<(), EmuError> {
    uc.add_mem_hook(
        HookType::MEM_READ | HookType::MEM_WRITE,
        base,
        base + len - 1,
        |uc, kind, addr, size, _value| on_mem(uc, kind, addr, size),
    )
    .map_err(|e| uc_err("memory hook", e))?;
    Ok(())
}

/// The code, memory, unmapped-access, interrupt and invalid-instruction
/// hooks, then the target's own.
fn add_hooks(uc: &mut Uc<'_>, req: &Request) -> Result<(), EmuError> {
    uc.add_code_hook(1, 0, on_code)
        .map_err(|e| uc_err("code hook", e))?;
    for m in req.mmio.iter().filter(|m| m.size > 0) {
        watch(uc, m.base, m.size)?;
    }
    for r in req.ram.iter().filter(|r| r.watch && !r.bytes.is_empty()) {
        watch(uc, r.base, r.bytes.len() as u64)?;
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
    let target = uc.get_data().target;
    target.add_hooks(uc)
}

/// Whether the emulation ended by returning to the sentinel: else the
/// fault or timeout that stopped it.
fn check_returned(uc: &Uc<'_>, res: Result<(), uc_error>) -> Result<(), EmuError> {
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
        .reg_read(st.target.pc_reg())
        .map_err(|e| uc_err("read pc", e))?;
    if pc != SENTINEL_ADDR {
        return Err(EmuError::Timeout { insns: st.executed });
    }
    Ok(())
}

/// The result, the events and the RAM regions' final contents.
fn outcome(uc: &Uc<'_>, req: &Request) -> Result<Outcome, EmuError> {
    let ret = uc
        .reg_read(uc.get_data().target.ret_reg())
        .map_err(|e| uc_err("read result", e))?;
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

/// Runs `req.program` on `target` until it returns, faults or exceeds
/// `req.max_insns`.
pub fn run(target: &'static dyn EmuTarget, req: &Request) -> Result<Outcome, EmuError> {
    let spans = layout(req)?;
    let mut uc = open(State::new(req, target))?;
    load(&mut uc, req, &spans)?;
    let sp = STACK_BASE + STACK_SIZE - STACK_RESERVE;
    target.enter(&mut uc, &req.args, sp)?;
    add_hooks(&mut uc, req)?;
    let res = uc.emu_start(CODE_BASE, SENTINEL_ADDR, WALL_TIMEOUT_US, 0);
    flush_stores(&mut uc);
    check_returned(&uc, res)?;
    outcome(&uc, req)
}
