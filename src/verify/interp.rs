//! The spec's meaning: an interpreter of the checked IR.
//!
//! It is the oracle the emulator traces are compared with: for the same
//! arguments and the same scripted device reads, the machine code must
//! perform the same accesses on every device instance, in the same order
//! per instance, with the same values, and return the same code.

use crate::ir::expr::field_mask;
use crate::ir::expr::{Binding, Expr};
use crate::ir::{
    CoverMode, DevId, GSize, Granule, GranuleSet, Instances, LockValue, MemOp, MemRef, OpId,
    PollOp, Program, RegId, Seq, Stmt,
};
use crate::model;
use crate::spec::queue::RecordLayout;
use std::collections::HashMap;

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
}

/// A simulated command-queue consumer: when the producer register is
/// written it consumes every new entry at once (the consumer register
/// then reads the producer's value), after checking that every byte of
/// each consumed entry was stored by the sequence before the doorbell,
/// and makes the completion write of each record that has one.
#[derive(Clone, Debug)]
pub struct Consumer {
    pub dev: DevId,
    pub prod: RegId,
    pub cons: RegId,
    /// Pointer parameter of the ring, its entry size and log2 entries.
    pub ring: usize,
    pub entry: u64,
    pub log2n: u64,
    pub wrap: bool,
    /// Records of the queue's entry size: an entry is the first whose
    /// fixed fields match.
    pub records: Vec<RecordLayout>,
    /// (integer parameter, pointer parameter): `NAME: phys PTR`, where a
    /// completion write to the address NAME holds lands.
    pub phys: Vec<(usize, usize)>,
}

impl World {
    /// Simulated consumers (and zeroed rings) for the queues `seq` drives,
    /// with ring sizes from `self.params`; a consumer register the caller
    /// scripted stays scripted. A `phys PTR` parameter left 0 gets the
    /// address the emulator places PTR's memory at, so completion writes
    /// land without an `--arg`.
    pub fn add_consumers(&mut self, prog: &Program, seq: &Seq) {
        for q in &prog.queues {
            let Some((ring, l)) = Consumer::params(seq, q) else {
                continue;
            };
            let log2n = self.params.get(l).copied().unwrap_or(0);
            if log2n > 24 || self.reads.contains_key(&(q.dev, q.cons)) {
                continue;
            }
            let bytes = (q.entry << log2n).min(MAX_MEMORY) as usize;
            let mem = self.memory.entry(ring).or_default();
            if mem.len() < bytes {
                mem.resize(bytes, 0);
            }
            self.consumers
                .push(Consumer::new(prog, seq, q, ring, log2n));
        }
        if !self.consumers.is_empty() {
            for (i, j) in Consumer::phys_params(seq) {
                if self.params.get(i) == Some(&0) {
                    self.params[i] = ptr_base(j);
                }
            }
        }
    }
}

impl Consumer {
    pub fn new(prog: &Program, seq: &Seq, q: &crate::ir::Queue, ring: usize, log2n: u64) -> Self {
        Consumer {
            dev: q.dev,
            prod: q.prod,
            cons: q.cons,
            ring,
            entry: q.entry,
            log2n,
            wrap: q.index == crate::spec::ast::QueueIndex::Wrap,
            records: prog
                .records
                .iter()
                .filter(|r| r.size == q.entry)
                .cloned()
                .collect(),
            phys: Consumer::phys_params(seq),
        }
    }

    /// The parameters `Q_ring` and `Q_log2n` of queue `q` in `seq`.
    pub fn params(seq: &Seq, q: &crate::ir::Queue) -> Option<(usize, usize)> {
        let pos = |suffix: &str| {
            let n = format!("{}_{suffix}", q.name);
            seq.params.iter().position(|p| *p == n)
        };
        Some((pos("ring")?, pos("log2n")?))
    }

    pub fn phys_params(seq: &Seq) -> Vec<(usize, usize)> {
        seq.phys
            .iter()
            .enumerate()
            .filter_map(|(i, p)| p.map(|j| (i, j)))
            .collect()
    }

    /// The record an entry's words are (by its fixed fields).
    pub fn decode(&self, words: &[u64]) -> Option<&RecordLayout> {
        self.records.iter().find(|r| r.matches(words))
    }

    /// Byte offsets of the entries between consumer index `from` and
    /// producer index `to` (None when `to` is not reachable from `from`).
    pub fn slots(&self, from: u64, to: u64) -> Option<Vec<u64>> {
        crate::spec::queue::ring_slots(from, to, self.log2n, self.entry, self.wrap)
    }
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

/// One executed `cover` of an unexpanded program: what was asked and what
/// the chosen operations covered (for the cost model's over-invalidation).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Coverage {
    /// Index of the granule set.
    pub set: usize,
    /// Requested bytes.
    pub requested: u64,
    /// Bytes covered by the sized operations run.
    pub covered: u64,
    /// Smallest granule of the set (the unit of refill).
    pub granule: u64,
    /// Flush-alls run.
    pub flushes: u64,
    /// Each sized operation run: (address, bytes).
    pub ops: Vec<(u64, u64)>,
    /// The cover ran to its end without a flush-all, and its operations
    /// leave part of `[start, start + size)` uncovered (a wrapping range
    /// counts as reaching past 2^64, which no sized operation covers).
    pub short: bool,
}

/// -EINVAL: a run-time zero `range` step, a cover that cannot cover its
/// request (an unusable run-time granule size, or a range reaching 2^64
/// with no `all` to fall back to).
pub const EINVAL: i64 = -22;

/// Do `ops` cover `[start, start + size)`? Computed in 128 bits, apart
/// from the cover code: the meaning's own check that a cover never
/// invalidates less than it was asked.
pub fn covers_range(start: u64, size: u64, ops: &[(u64, u64)]) -> bool {
    let end = u128::from(start) + u128::from(size);
    let mut ops: Vec<(u128, u128)> = ops
        .iter()
        .map(|&(a, n)| (u128::from(a), u128::from(a) + u128::from(n)))
        .collect();
    ops.sort_unstable();
    let mut reached = u128::from(start);
    for (lo, hi) in ops {
        if lo <= reached {
            reached = reached.max(hi);
        }
    }
    reached >= end
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Outcome {
    pub accesses: Vec<(OpId, Access)>,
    pub ret: i64,
    /// Covers executed (empty for an expanded program).
    pub covers: Vec<Coverage>,
    /// Normal memory after the run.
    pub memory: HashMap<usize, Vec<u8>>,
    /// Branch arms taken: (the `If` statement's address in the interpreted
    /// sequence, then-arm?), for `verify`'s coverage of both arms.
    pub arms: std::collections::BTreeSet<(usize, bool)>,
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
/// Bytes of simulated memory behind each pointer parameter (what `trace`
/// maps for it).
pub const MAX_MEMORY: u64 = 0x1_0000;

/// Where the memory behind pointer parameter `i` lives, in the
/// interpreter's world and the emulator's alike (so both report the same
/// addresses); here rather than in `trace` so that a build without the
/// emulator has it too.
pub(crate) fn ptr_base(i: usize) -> u64 {
    0x2000_0000 + (i as u64) * PTR_SPAN
}
/// Address space reserved for each pointer parameter's memory.
pub(crate) const PTR_SPAN: u64 = MAX_MEMORY;

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
}

impl std::fmt::Display for InterpError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            InterpError::TooLong => write!(f, "too long to interpret"),
            InterpError::Deadlock => write!(f, "spins forever on a lock nobody releases"),
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
    arms: std::collections::BTreeSet<(usize, bool)>,
    loose_flushes: u64,
    /// Bytes stored behind each pointer since they were last consumed.
    written: std::collections::HashSet<(usize, u64)>,
    /// Queue entries the consumers took, decoded: (record, words).
    commands: Vec<(String, Vec<u64>)>,
}

#[derive(Clone)]
struct CoverCx {
    num: u64,
    scale: u64,
    addr: u64,
    bits: u64,
    reg_bits: Vec<(RegId, u64)>,
    size: u64,
    dev: Option<DevId>,
    dead_regs: Vec<RegId>,
    dead_insns: Vec<String>,
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
    fn fail_barrier(&mut self, b: &Option<String>) {
        if let Some(name) = b {
            self.out
                .push((OpId::BARRIER, Access::Barrier { name: name.clone() }));
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

    /// `threshold(SET)` as the cover pass resolves it.
    fn threshold_of(&self, set: usize) -> u64 {
        model::expr_threshold(self.prog, &self.seq.name, set, &self.world.cover.pins)
            .map_or(u64::MAX, |t| t.value)
    }

    fn eval(&self, e: &crate::ir::Expr) -> u64 {
        match &self.cover {
            Some(c) if e.uses_binding() => {
                let (a, b, z, n, sc) = (c.addr, c.bits, c.size, c.num, c.scale);
                let reg_bits = &c.reg_bits;
                e.bind(&|x| match x {
                    Binding::Addr => Expr::Const(a),
                    Binding::Bits => Expr::Const(b),
                    Binding::RegBits(r) => Expr::Const(
                        reg_bits
                            .iter()
                            .find(|(x, _)| *x == r)
                            .map_or(0, |(_, v)| *v),
                    ),
                    Binding::Size => Expr::Const(z),
                    Binding::Num => Expr::Const(n),
                    Binding::Scale => Expr::Const(sc),
                    Binding::Threshold(s) => Expr::Const(self.threshold_of(s)),
                })
                .eval_with(&self.world.params, &self.locals)
            }
            _ if e.uses_binding() => e
                .bind(&|x| match x {
                    Binding::Threshold(s) => Expr::Const(self.threshold_of(s)),
                    other => Expr::Binding(other),
                })
                .eval_with(&self.world.params, &self.locals),
            _ => e.eval_with(&self.world.params, &self.locals),
        }
    }

    /// Run a cover body for one chosen operation.
    fn instance(
        &mut self,
        set: &GranuleSet,
        entry: &Granule,
        addr: u64,
        size: u64,
        body: &[Stmt],
    ) -> Result<Flow, InterpError> {
        if let Some(c) = self.covers.last_mut() {
            if entry.size == GSize::All {
                c.flushes += 1;
            } else {
                c.covered = c.covered.saturating_add(size);
                c.ops.push((addr, size));
            }
        }
        let (num, scale) = self.range_op.take().unwrap_or((0, 0));
        let saved = self.cover.replace(CoverCx {
            num,
            scale,
            addr,
            bits: entry.bits,
            reg_bits: entry.reg_bits.clone(),
            size,
            dev: set.dev,
            dead_regs: model::dropped_regs(set, entry),
            dead_insns: model::dropped_insns(set, entry),
        });
        let r = self.block(body);
        self.cover = saved;
        r
    }

    #[allow(clippy::too_many_arguments)]
    fn cover(
        &mut self,
        set_index: usize,
        set: &GranuleSet,
        mode: CoverMode,
        start: u64,
        size: u64,
        threshold: &str,
        body: &[Stmt],
    ) -> Result<Flow, InterpError> {
        let n = self.covers.len();
        let r = self.cover_ops(set_index, set, mode, start, size, threshold, body);
        if let (Ok(Flow::Next), Some(c)) = (&r, self.covers.get_mut(n)) {
            c.short = c.flushes == 0 && !covers_range(start, size, &c.ops);
        }
        r
    }

    #[allow(clippy::too_many_arguments)]
    fn cover_ops(
        &mut self,
        set_index: usize,
        set: &GranuleSet,
        mode: CoverMode,
        start: u64,
        size: u64,
        threshold: &str,
        body: &[Stmt],
    ) -> Result<Flow, InterpError> {
        if size == 0 {
            return Ok(Flow::Next);
        }
        let mode = self.world.cover.mode.unwrap_or(mode);
        let all = model::all_entry(set);
        let granule = |m: &Self, e: &Granule| match &e.size {
            GSize::Bytes(b) => *b,
            GSize::Param(p) => m
                .seq
                .params
                .iter()
                .position(|x| x == p)
                .and_then(|i| m.world.params.get(i).copied())
                .unwrap_or(0),
            GSize::All | GSize::Range => 0,
        };
        let unit = model::loop_entry(set).map_or(0, |e| granule(self, e));
        self.covers.push(Coverage {
            set: set_index,
            requested: size,
            covered: 0,
            granule: unit,
            flushes: 0,
            ops: Vec::new(),
            short: false,
        });
        // A range reaching 2^64 is not a range of addresses: flush all.
        if size > !start {
            return match all {
                Some(a) => self.instance(set, a, 0, 0, body),
                None => Ok(Flow::Return(EINVAL)),
            };
        }
        // A run-time granule size must be a power of two (to align to
        // it) and, for `auto`, small enough that THRESHOLD granules do
        // not pass 2^64.
        let t = match mode {
            CoverMode::Auto => Some(
                model::threshold(self.prog, set, threshold, body, &self.world.cover.pins)
                    .map(|t| t.value)
                    .unwrap_or(0),
            ),
            _ => None,
        };
        if matches!(mode, CoverMode::Exact | CoverMode::Auto) {
            if let Some(e) = model::loop_entry(set).filter(|e| matches!(e.size, GSize::Param(_))) {
                let g = granule(self, e);
                let max = t.map_or(1 << 63, crate::passes::cover::max_granule);
                if !g.is_power_of_two() || g > max {
                    return Ok(Flow::Return(EINVAL));
                }
            }
        }
        let exact = |m: &mut Self| -> Result<Flow, InterpError> {
            let Some(e) = model::loop_entry(set) else {
                return Ok(Flow::Next);
            };
            let g = granule(m, e);
            if g == 0 {
                return Ok(Flow::Return(EINVAL));
            }
            let base = start & !(g - 1);
            let span = size + (start & (g - 1));
            let n = span.div_ceil(g);
            for k in 0..n {
                m.tick()?;
                if let Flow::Return(v) = m.instance(set, e, base.wrapping_add(k * g), g, body)? {
                    return Ok(Flow::Return(v));
                }
            }
            Ok(Flow::Next)
        };
        match mode {
            CoverMode::Single => {
                let x = start ^ start.wrapping_add(size).wrapping_sub(1);
                let mut sized: Vec<(u64, &Granule)> = set
                    .entries
                    .iter()
                    .filter_map(|e| match e.size {
                        GSize::Bytes(b) => Some((b, e)),
                        _ => None,
                    })
                    .collect();
                sized.sort_by_key(|(b, _)| *b);
                for (b, e) in sized {
                    if x < b {
                        return self.instance(set, e, start & !(b - 1), b, body);
                    }
                }
                match all {
                    Some(a) => self.instance(set, a, 0, 0, body),
                    None => Ok(Flow::Next),
                }
            }
            CoverMode::Exact => exact(self),
            // Linux __flush_tlb_range_op with FEAT_TLBIRANGE, as a loop.
            CoverMode::Range => {
                let (Some(single), Some(range), Some(all)) = (
                    model::loop_entry(set),
                    set.entries.iter().find(|e| e.size == GSize::Range),
                    all,
                ) else {
                    return Ok(Flow::Next);
                };
                let g = granule(self, single);
                if g == 0 {
                    return Ok(Flow::Next);
                }
                let mut addr = start & !(g - 1);
                let mut pages = (size + (start & (g - 1))).div_ceil(g);
                if pages >= crate::passes::cover::MAX_RANGE_GRANULES {
                    return self.instance(set, all, 0, 0, body);
                }
                let mut scale = 0u64;
                while pages > 0 {
                    self.tick()?;
                    if pages % 2 == 1 {
                        if let Flow::Return(v) = self.instance(set, single, addr, g, body)? {
                            return Ok(Flow::Return(v));
                        }
                        addr = addr.wrapping_add(g);
                        pages -= 1;
                        continue;
                    }
                    let num = ((pages >> (5 * scale + 1)) & 31) as i64 - 1;
                    if num >= 0 {
                        let n = ((num as u64) + 1) << (5 * scale + 1);
                        self.range_op = Some((num as u64, scale));
                        if let Flow::Return(v) = self.instance(set, range, addr, n * g, body)? {
                            return Ok(Flow::Return(v));
                        }
                        addr = addr.wrapping_add(n * g);
                        pages -= n;
                    }
                    scale += 1;
                }
                Ok(Flow::Next)
            }
            CoverMode::Auto => {
                let t = t.unwrap_or(0);
                let g = model::loop_entry(set)
                    .map(|e| granule(self, e))
                    .unwrap_or(0);
                if size <= t.saturating_mul(g) {
                    exact(self)
                } else {
                    match all {
                        Some(a) => self.instance(set, a, 0, 0, body),
                        None => Ok(Flow::Next),
                    }
                }
            }
        }
    }

    /// A write of a queue's producer register: the consumer takes every
    /// new entry (each must be complete) and catches up.
    fn consume(&mut self, dev: DevId, inst: u64, reg: RegId, v: u64) -> Result<(), InterpError> {
        let world = self.world;
        for c in world
            .consumers
            .iter()
            .filter(|c| c.dev == dev && c.prod == reg)
        {
            let from = self.regs.get(&(dev, inst, c.cons)).copied().unwrap_or(0);
            let slots = c
                .slots(from, v)
                .ok_or(InterpError::IncompleteEntry { offset: v })?;
            for off in slots {
                for b in off..off + c.entry {
                    if !self.written.remove(&(c.ring, b)) {
                        return Err(InterpError::IncompleteEntry { offset: off });
                    }
                }
                let words: Vec<u64> = (0..c.entry / 8)
                    .map(|w| {
                        self.mem_read(&MemRef {
                            ptr: c.ring,
                            offset: off + 8 * w,
                            width: 64,
                        })
                    })
                    .collect();
                let rec = c.decode(&words);
                let name = rec.map_or("?", |r| r.name.as_str()).to_string();
                if let Some((addr, value, bytes)) = rec.and_then(|r| r.completion(&words)) {
                    self.complete(c, addr, value, bytes);
                }
                self.commands.push((name, words));
            }
            self.regs.insert((dev, inst, c.cons), v);
        }
        Ok(())
    }

    /// A consumer's completion write: into the memory of the pointer
    /// whose `phys` parameter covers `addr`; elsewhere it is lost (memory
    /// the sequence cannot see).
    fn complete(&mut self, c: &Consumer, addr: u64, value: u64, bytes: u32) {
        for &(i, ptr) in &c.phys {
            let base = self.world.params.get(i).copied().unwrap_or(0);
            let Some(offset) = addr.checked_sub(base) else {
                continue;
            };
            if offset.saturating_add(u64::from(bytes)) <= MAX_MEMORY {
                let m = MemRef {
                    ptr,
                    offset,
                    width: 8 * bytes,
                };
                self.mem_write(&m, value & field_mask(0, 8 * bytes));
                return;
            }
        }
    }

    fn read(&mut self, dev: DevId, inst: u64, reg: RegId) -> u64 {
        let key = (dev, inst, reg);
        match self.world.reads.get(&(dev, reg)) {
            Some(script) if !script.is_empty() => {
                let c = self.cursors.entry(key).or_insert(0);
                let v = script[(*c).min(script.len() - 1)];
                *c += 1;
                v
            }
            _ => self.regs.get(&key).copied().unwrap_or(0),
        }
    }

    /// Bit position of byte `i` of an access `n` bytes wide.
    fn byte_shift(&self, i: u64, n: u64) -> u64 {
        if self.world.big_endian {
            8 * (n - 1 - i)
        } else {
            8 * i
        }
    }

    /// The location `index` bytes into pointer parameter `ptr`'s memory;
    /// beyond what the simulated memory holds is an error, not a silent 0.
    fn at(&self, ptr: usize, width: u32, index: &Expr) -> Result<MemRef, InterpError> {
        let offset = self.eval(index);
        if offset.saturating_add(u64::from(width / 8)) > MAX_MEMORY {
            return Err(InterpError::OutOfMemory { ptr, offset });
        }
        Ok(MemRef { ptr, offset, width })
    }

    fn mem_read(&self, m: &MemRef) -> u64 {
        let bytes = self.memory.get(&m.ptr);
        let n = u64::from(m.width / 8);
        (0..n).fold(0u64, |acc, i| {
            let b = bytes
                .and_then(|v| v.get((m.offset + i) as usize))
                .copied()
                .unwrap_or(0);
            acc | (u64::from(b) << self.byte_shift(i, n))
        })
    }

    fn mem_write(&mut self, m: &MemRef, value: u64) {
        if !self.world.consumers.is_empty() {
            for i in 0..u64::from(m.width / 8) {
                self.written.insert((m.ptr, m.offset + i));
            }
        }
        let bytes = self.memory.entry(m.ptr).or_default();
        let end = (m.offset + u64::from(m.width / 8)) as usize;
        if bytes.len() < end {
            bytes.resize(end, 0);
        }
        let n = u64::from(m.width / 8);
        let big = self.world.big_endian;
        for i in 0..n {
            let sh = if big { 8 * (n - 1 - i) } else { 8 * i };
            bytes[(m.offset + i) as usize] = (value >> sh) as u8;
        }
    }

    fn mem_op(&mut self, op: &MemOp) -> Result<Flow, InterpError> {
        let mask = |w: u32| field_mask(0, w);
        match op {
            MemOp::Load { local, mem } => {
                let v = self.mem_read(mem);
                self.locals[*local] = v;
            }
            MemOp::Store { mem, value } => {
                let v = self.eval(value) & mask(mem.width);
                self.mem_write(mem, v);
            }
            MemOp::LoadAt {
                local,
                ptr,
                width,
                index,
            } => {
                let m = self.at(*ptr, *width, index)?;
                self.locals[*local] = self.mem_read(&m);
            }
            MemOp::StoreAt {
                ptr,
                width,
                index,
                value,
            } => {
                let m = self.at(*ptr, *width, index)?;
                let v = self.eval(value) & mask(*width);
                self.mem_write(&m, v);
            }
            MemOp::Poll {
                ptr,
                width,
                index,
                op,
                value,
                limit,
                fail,
                fail_barrier,
            } => {
                // Nothing else writes memory in a single-threaded run: the
                // first read decides, the rest of the bound only counts.
                let m = self.at(*ptr, *width, index)?;
                let want = self.eval(value) & mask(*width);
                let hit = (self.mem_read(&m) == want) == (*op == PollOp::Eq);
                self.tick()?;
                if !hit {
                    for _ in 1..*limit {
                        self.tick()?;
                    }
                    self.fail_barrier(fail_barrier);
                    return Ok(Flow::Return(*fail));
                }
            }
            MemOp::Acquire {
                mem,
                value,
                held,
                status,
                limit,
                fail_barrier,
                ..
            } => {
                let cur = self.mem_read(mem);
                if let Some(l) = status {
                    self.locals[*l] = 0;
                }
                let (free, new) = match value {
                    LockValue::Owner(e) => (cur == 0, self.eval(e) & mask(mem.width)),
                    LockValue::Bit(b) => (cur & (1 << b) == 0, cur | (1 << b)),
                };
                if free {
                    self.mem_write(mem, new);
                } else if held.is_some() && matches!(value, LockValue::Owner(_)) && cur == new {
                    if let (Some(l), Some(code)) = (status, held) {
                        self.locals[*l] = *code;
                    }
                } else {
                    // Single-threaded: nobody releases it while we spin.
                    return match limit {
                        Some((_, code)) => {
                            self.fail_barrier(fail_barrier);
                            Ok(Flow::Return(*code))
                        }
                        None => Err(InterpError::Deadlock),
                    };
                }
            }
            MemOp::Release {
                mem, value, cond, ..
            } => {
                if let Some(c) = cond {
                    if self.eval(c) != 0 {
                        return Ok(Flow::Next);
                    }
                }
                let new = match value {
                    LockValue::Owner(e) => self.eval(e) & mask(mem.width),
                    LockValue::Bit(b) => self.mem_read(mem) & !(1u64 << b),
                };
                self.mem_write(mem, new);
            }
        }
        Ok(Flow::Next)
    }

    fn stmt(&mut self, s: &Stmt) -> Result<Flow, InterpError> {
        self.tick()?;
        match s {
            Stmt::Mem { op, .. } => return self.mem_op(op),
            Stmt::Each { dev, body, .. } => {
                for i in 0..self.world.count(self.prog, *dev) {
                    self.inst.insert(*dev, i);
                    if let Flow::Return(v) = self.block(body)? {
                        self.inst.remove(dev);
                        return Ok(Flow::Return(v));
                    }
                }
                self.inst.remove(dev);
            }
            Stmt::Write { access, .. }
                if self.cover.as_ref().is_some_and(|c| {
                    c.dead_regs.contains(&access.reg) && c.dev.is_none_or(|d| d == access.dev)
                }) => {}
            Stmt::Invalidate { name, .. }
                if self
                    .cover
                    .as_ref()
                    .is_some_and(|c| c.dead_insns.contains(name)) => {}
            Stmt::Cover {
                set,
                mode,
                start,
                size,
                body,
                threshold,
                ..
            } => {
                let (start, size) = (self.eval(start), self.eval(size));
                let index = *set;
                let set = &self.prog.granules[index];
                return self.cover(index, set, *mode, start, size, threshold, body);
            }
            Stmt::If {
                cond,
                then_,
                else_,
                rare: _,
            } => {
                let (a, b) = (self.eval(&cond.a), self.eval(&cond.b));
                let taken = cond.cmp.holds(a, b);
                self.arms.insert((s as *const Stmt as usize, taken));
                return self.block(if taken { then_ } else { else_ });
            }
            Stmt::Write { access, value } => {
                let inst = self.inst.get(&access.dev).copied().unwrap_or(0);
                let width = self.prog.devices[access.dev].regs[access.reg].width;
                let v = self.eval(value) & field_mask(0, width);
                self.consume(access.dev, inst, access.reg, v)?;
                self.regs.insert((access.dev, inst, access.reg), v);
                self.out.push((
                    access.id,
                    Access::Store {
                        dev: access.dev,
                        inst,
                        reg: access.reg,
                        value: v,
                    },
                ));
            }
            Stmt::Poll {
                access,
                mask,
                op,
                value,
                limit,
                fail,
                fail_barrier,
            } => {
                let inst = self.inst.get(&access.dev).copied().unwrap_or(0);
                let want = self.eval(value);
                let mut done = false;
                for _ in 0..*limit {
                    self.tick()?;
                    let v = self.read(access.dev, inst, access.reg);
                    self.out.push((
                        access.id,
                        Access::Load {
                            dev: access.dev,
                            inst,
                            reg: access.reg,
                            value: v,
                        },
                    ));
                    let hit = (v & mask) == want;
                    if hit == (*op == PollOp::Eq) {
                        done = true;
                        break;
                    }
                }
                if !done {
                    self.fail_barrier(fail_barrier);
                    return Ok(Flow::Return(*fail));
                }
            }
            Stmt::Read { access, local } => {
                let inst = self.inst.get(&access.dev).copied().unwrap_or(0);
                self.tick()?;
                let v = self.read(access.dev, inst, access.reg);
                self.out.push((
                    access.id,
                    Access::Load {
                        dev: access.dev,
                        inst,
                        reg: access.reg,
                        value: v,
                    },
                ));
                self.locals[*local] = v;
            }
            Stmt::Barrier { name, .. } => self
                .out
                .push((OpId::BARRIER, Access::Barrier { name: name.clone() })),
            Stmt::Return { value, .. } => {
                return Ok(Flow::Return(
                    value.eval_with(&self.world.params, &self.locals) as i64,
                ));
            }
            Stmt::Range {
                local,
                start,
                size,
                step,
                body,
                fail_barrier,
                ..
            } => {
                let (start, size, step) = (self.eval(start), self.eval(size), self.eval(step));
                if size == 0 {
                    return Ok(Flow::Next);
                }
                if step == 0 {
                    self.fail_barrier(fail_barrier);
                    return Ok(Flow::Return(EINVAL));
                }
                let (mut rem, mut addr) = (size, start);
                loop {
                    self.tick()?;
                    self.locals[*local] = addr;
                    if let Flow::Return(v) = self.block(body)? {
                        return Ok(Flow::Return(v));
                    }
                    if rem <= step {
                        break;
                    }
                    rem -= step;
                    addr = addr.wrapping_add(step);
                }
            }
            Stmt::Assign { local, value, .. } => {
                self.locals[*local] = self.eval(value);
            }
            Stmt::While {
                cond,
                body,
                limit,
                fail,
                fail_barrier,
                ..
            } => {
                let mut runs = 0u64;
                loop {
                    self.tick()?;
                    let (a, b) = (self.eval(&cond.a), self.eval(&cond.b));
                    let more = cond.cmp.holds(a, b);
                    // Coverage: a loop never entered, entered, and run out.
                    self.arms
                        .insert((s as *const Stmt as usize, runs == 0 && !more));
                    if !more {
                        break;
                    }
                    if runs == *limit {
                        self.fail_barrier(fail_barrier);
                        return Ok(Flow::Return(*fail));
                    }
                    runs += 1;
                    if let Flow::Return(v) = self.block(body)? {
                        return Ok(Flow::Return(v));
                    }
                }
            }
            Stmt::Invalidate {
                id, name, operands, ..
            } => {
                let ops = operands.iter().map(|o| self.eval(o)).collect();
                if self.cover.is_none()
                    && self.prog.granules.iter().any(|g| {
                        g.entries.iter().any(|e| {
                            e.size == crate::ir::GSize::All
                                && matches!(&e.via, Some(crate::ir::Via::Insn(n)) if n == name)
                        })
                    })
                {
                    self.loose_flushes += 1;
                }
                self.out.push((
                    *id,
                    Access::Invalidate {
                        name: name.clone(),
                        operands: ops,
                    },
                ));
            }
        }
        Ok(Flow::Next)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn coverage_is_exact_and_does_not_wrap() {
        assert!(covers_range(
            0x1800,
            0x1000,
            &[(0x1000, 0x1000), (0x2000, 0x1000)]
        ));
        assert!(!covers_range(0x1800, 0x1000, &[(0x1000, 0x1000)]));
        assert!(!covers_range(0x1800, 0x1000, &[(0x2000, 0x1000)]));
        // start + size reaches past 2^64: no sized op covers the top.
        assert!(!covers_range(0x1_0000, u64::MAX, &[(0, 0x2_0000)]));
        assert!(!covers_range(
            u64::MAX - 0xfff,
            0x2000,
            &[(u64::MAX - 0xfff, 0x1000), (0, 0x1000)]
        ));
        // Ending exactly at 2^64 is covered by the top page.
        assert!(covers_range(
            u64::MAX - 0xfff,
            0x1000,
            &[(u64::MAX - 0xfff, 0x1000)]
        ));
    }

    /// The issue's reproducer: `cover ... single` asked for 2^64 - 1 bytes
    /// from 0x10000 issues the flush-all (not one 64K ATSD at 0).
    #[test]
    fn wrapping_single_cover_flushes_all() {
        let src = std::fs::read_to_string("examples/npu2_atsd.inv").unwrap();
        let prog = crate::load("npu2_atsd.inv", &src).unwrap();
        let i = prog
            .seqs
            .iter()
            .position(|s| s.name == "invalidate_range")
            .unwrap();
        let mut w = World::default();
        w.counts.insert(0, 1);
        w.params = vec![1, 0x1_0000, u64::MAX];
        let o = run(&prog, &prog.seqs[i], &w).unwrap();
        assert_eq!(o.covers.len(), 1);
        assert_eq!((o.covers[0].flushes, o.covers[0].short), (1, false));
    }

    #[test]
    fn npu_values_match_the_issue() {
        let src = std::fs::read_to_string("examples/npu2_atsd.inv").unwrap();
        let prog = crate::load("npu2_atsd.inv", &src).unwrap();
        let seq = &prog.seqs[0];
        let mut w = World::default();
        w.counts.insert(0, 6);
        w.params = vec![1, 0x1001_0000];
        let o = run(&prog, seq, &w).unwrap();
        let stores: Vec<u64> = o
            .accesses
            .iter()
            .filter_map(|(_, a)| match a {
                Access::Store { value, .. } => Some(*value),
                _ => None,
            })
            .collect();
        assert_eq!(stores.len(), 12);
        assert_eq!(stores[0], 0x1001_0000);
        assert_eq!(stores[1], 0x0005_4000_0200_0000);
        assert_eq!(o.ret, 0);
        // A STAT that never clears: the poll gives up with -110.
        w.reads.insert((0, 2), vec![1]);
        assert_eq!(run(&prog, seq, &w).unwrap().ret, -110);
    }
}
