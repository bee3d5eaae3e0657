//! The spec's meaning: an interpreter of the checked IR.
//!
//! It is the oracle the emulator traces are compared with: for the same
//! arguments and the same scripted device reads, the machine code must
//! perform the same accesses on every device instance, in the same order
//! per instance, with the same values, and return the same code.

mod consumer;
mod cover;
mod device;
mod eval;
mod memory;
mod stmt;
#[cfg(test)]
mod tests;

use crate::ir::{DevId, Instances, OpId, Program, RegId, Seq, Stmt};
use std::collections::HashMap;

pub use consumer::Consumer;
use cover::CoverCx;
pub use cover::{covers_range, Coverage};
pub(crate) use memory::ptr_base;
pub use memory::MAX_MEMORY;
#[cfg(feature = "emu")]
pub(crate) use memory::PTR_SPAN;

/// Inputs of one run.
#[derive(Clone, Debug, Default)]
pub struct World {
    /// Instance count of each multi-instance device the sequence uses.
    pub counts: HashMap<DevId, u64>,
    pub params: Vec<u64>,
    /// Successive values read from a register (per instance, last repeats).
    pub reads: HashMap<(DevId, RegId), Vec<u64>>,
    /// Cover mode override and pinned thresholds, as given to the compiler.
    pub cover: crate::passes::cover::CoverConfig,
    /// Normal memory behind each pointer parameter (by parameter index),
    /// in the target's byte order; missing bytes read as 0.
    pub memory: HashMap<usize, Vec<u8>>,
    /// Byte order of normal memory (the target's).
    pub big_endian: bool,
    /// Command-queue consumers that act at once (see [`Consumer`]).
    pub consumers: Vec<Consumer>,
    /// Whether each Book III-E TLB lookup (`tlbsx`, `tlbre`) finds its
    /// entry, in order; the last repeats, none means never (see
    /// `isa::power::book3e::tlb_lookup`).
    pub tlb_found: Vec<bool>,
}

impl World {
    pub fn count(&self, prog: &Program, dev: DevId) -> u64 {
        match prog.devices[dev].instances {
            Instances::Single => 1,
            Instances::Fixed(n) => n,
            Instances::Dynamic { .. } => self.counts.get(&dev).copied().unwrap_or(1),
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Access {
    Store {
        dev: DevId,
        inst: u64,
        reg: RegId,
        value: u64,
    },
    Load {
        dev: DevId,
        inst: u64,
        reg: RegId,
        value: u64,
    },
    Invalidate {
        name: String,
        operands: Vec<u64>,
    },
    /// An executed `Stmt::Barrier` (only in programs after the barrier
    /// passes; recorded under [`OpId::BARRIER`]), for counting.
    Barrier {
        name: String,
    },
}

/// -EINVAL: a run-time zero `range` step, a cover that cannot cover its
/// request (an unusable run-time granule size, or a range reaching 2^64
/// with no `all` to fall back to).
pub const EINVAL: i64 = -22;

/// The arms of [`Outcome::arms`].
pub const ARM_THEN: u8 = 0;
pub const ARM_ELSE: u8 = 1;
pub const ARM_ZERO_TRIP: u8 = 0;
pub const ARM_ENTERED: u8 = 1;
pub const ARM_LIMIT: u8 = 2;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Outcome {
    pub accesses: Vec<(OpId, Access)>,
    pub ret: i64,
    /// Covers executed (empty for an expanded program).
    pub covers: Vec<Coverage>,
    /// Normal memory after the run.
    pub memory: HashMap<usize, Vec<u8>>,
    /// Branch arms taken: (the statement's address in the interpreted
    /// sequence, arm), for `verify`'s coverage. An `if`: [`ARM_THEN`],
    /// [`ARM_ELSE`]; a `while`: [`ARM_ZERO_TRIP`], [`ARM_ENTERED`],
    /// [`ARM_LIMIT`] (ran into its limit); a device `poll`: [`ARM_LIMIT`]
    /// when it gave up.
    pub arms: std::collections::BTreeSet<(usize, u8)>,
    /// Flush-alls issued outside any cover: invalidations through the
    /// `via` of some set's `all` granule (`if n > threshold(SET) { ... }`
    /// written out), which the cost model prices like a cover's.
    pub loose_flushes: u64,
    /// Commands the simulated queue consumers took, in order: the record
    /// their fixed fields name (`?` for none) and their 64-bit words.
    pub commands: Vec<(String, Vec<u64>)>,
}

/// Runaway guard: specs with unbounded work cannot exist (polls and
/// ranges are bounded), but a huge range could take long.
const MAX_STEPS: u64 = 50_000_000;

#[derive(Debug, PartialEq, Eq)]
pub enum InterpError {
    TooLong,
    /// A computed offset past the simulated memory behind a pointer.
    OutOfMemory {
        ptr: usize,
        offset: u64,
    },
    /// An unbounded `acquire` of a lock held by someone else: in a
    /// single-threaded run nobody will release it.
    Deadlock,
    /// A doorbell published a queue entry the sequence had not (fully)
    /// written, or an index the consumer cannot reach.
    IncompleteEntry {
        offset: u64,
    },
    /// The parameters break an `assume` of the sequence: outside its
    /// contract the generated code does what it does, and the spec says
    /// nothing.
    Assumed {
        text: String,
    },
}

impl std::fmt::Display for InterpError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            InterpError::TooLong => write!(f, "too long to interpret"),
            InterpError::Deadlock => write!(f, "spins forever on a lock nobody releases"),
            InterpError::Assumed { text } => {
                write!(f, "the parameters break the sequence's `assume {text}`")
            }
            InterpError::IncompleteEntry { offset } => write!(
                f,
                "the doorbell publishes the queue entry at ring offset {offset:#x} before all its bytes were written"
            ),
            InterpError::OutOfMemory { ptr, offset } => write!(
                f,
                "offset {offset:#x} behind pointer parameter {ptr} is past the {MAX_MEMORY:#x} simulated bytes"
            ),
        }
    }
}

/// The first `assume` of `seq` that `params` break.
pub fn broken_assume<'s>(seq: &'s Seq, params: &[u64]) -> Option<&'s crate::ir::facts::Assume> {
    seq.assumes.iter().find(|a| !a.cond.eval(params, &[]))
}

pub fn run(prog: &Program, seq: &Seq, world: &World) -> Result<Outcome, InterpError> {
    run_bounded(prog, seq, world, MAX_STEPS)
}

/// As [`run`], giving up after `max_steps` statements.
pub fn run_bounded(
    prog: &Program,
    seq: &Seq,
    world: &World,
    max_steps: u64,
) -> Result<Outcome, InterpError> {
    if let Some(a) = broken_assume(seq, &world.params) {
        return Err(InterpError::Assumed {
            text: a.text.clone(),
        });
    }
    let mut m = Machine {
        max_steps,
        prog,
        world,
        out: Vec::new(),
        regs: HashMap::new(),
        cursors: HashMap::new(),
        locals: vec![0; seq.locals.len()],
        inst: HashMap::new(),
        steps: 0,
        cover: None,
        range_op: None,
        covers: Vec::new(),
        seq,
        memory: world.memory.clone(),
        arms: Default::default(),
        loose_flushes: 0,
        written: Default::default(),
        commands: Vec::new(),
        sprs: HashMap::new(),
        lookups: 0,
    };
    let ret = match m.block(&seq.body)? {
        Flow::Next => match seq.status {
            Some(l) => m.locals.get(l).copied().unwrap_or(0) as i64,
            None => 0,
        },
        Flow::Return(v) => v,
    };
    // `-> void`: nothing to report, whichever way it ended.
    let ret = if seq.void { 0 } else { ret };
    Ok(Outcome {
        accesses: m.out,
        ret,
        covers: m.covers,
        memory: m.memory,
        arms: m.arms,
        loose_flushes: m.loose_flushes,
        commands: m.commands,
    })
}

enum Flow {
    Next,
    Return(i64),
}

struct Machine<'a> {
    prog: &'a Program,
    world: &'a World,
    out: Vec<(OpId, Access)>,
    /// Register contents: (dev, inst, reg) -> last stored value.
    regs: HashMap<(DevId, u64, RegId), u64>,
    cursors: HashMap<(DevId, u64, RegId), usize>,
    locals: Vec<u64>,
    /// Current instance of each device in scope.
    inst: HashMap<DevId, u64>,
    steps: u64,
    max_steps: u64,
    /// Inside a cover instantiation: its bindings and dead registers.
    cover: Option<CoverCx>,
    /// NUM and SCALE for the next range-operation instance.
    range_op: Option<(u64, u64)>,
    covers: Vec<Coverage>,
    seq: &'a Seq,
    memory: HashMap<usize, Vec<u8>>,
    arms: std::collections::BTreeSet<(usize, u8)>,
    loose_flushes: u64,
    /// Bytes stored behind each pointer since they were last consumed.
    written: std::collections::HashSet<(usize, u64)>,
    /// Queue entries the consumers took, decoded: (record, words).
    commands: Vec<(String, Vec<u64>)>,
    /// Special-purpose registers by number (Book III-E MAS).
    sprs: HashMap<usize, u64>,
    /// TLB lookups run so far.
    lookups: usize,
}

impl Machine<'_> {
    fn tick(&mut self) -> Result<(), InterpError> {
        self.steps += 1;
        if self.steps > self.max_steps {
            return Err(InterpError::TooLong);
        }
        Ok(())
    }

    /// A failure return runs the barrier the exits pass gave it.
    fn fail_barrier(&mut self, b: &crate::ir::ExitBarriers) {
        for b in b.iter() {
            self.out.push((
                OpId::BARRIER,
                Access::Barrier {
                    name: b.name().to_string(),
                },
            ));
        }
    }

    fn block(&mut self, body: &[Stmt]) -> Result<Flow, InterpError> {
        for s in body {
            if let Flow::Return(v) = self.stmt(s)? {
                return Ok(Flow::Return(v));
            }
        }
        Ok(Flow::Next)
    }
}
