//! The worlds `verify` runs each sequence in: representative instance
//! counts, parameters and device reads, the edges of covers and ranges,
//! every feature combination, and parameters that reach branch arms.

use super::interp::{self, World};
use crate::ir::{DevId, Expr, Instances, PollOp, Program, Queue, RegId, Seq, Stmt};

/// What a parameter is to the sequence, for choosing edge values.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Role {
    /// In the start of a `cover` or `range`.
    Start,
    /// In the size of a `cover` or `range` (and not in a start).
    Size,
    /// A run-time granule size of a `cover`.
    Granule,
    Other,
}

fn roles(prog: &Program, seq: &Seq) -> Vec<Role> {
    fn params(e: &Expr, out: &mut Vec<usize>) {
        match e {
            Expr::Param(i) => out.push(*i),
            _ => e.children().into_iter().for_each(|c| params(c, out)),
        }
    }
    let mut r = vec![Role::Other; seq.params.len()];
    let (mut starts, mut sizes) = (Vec::new(), Vec::new());
    crate::ir::walk(&seq.body, &mut |s| match s {
        Stmt::Cover {
            set, start, size, ..
        } => {
            params(start, &mut starts);
            params(size, &mut sizes);
            for e in &prog.granules[*set].entries {
                if let crate::ir::GSize::Param(p) = &e.size {
                    if let Some(i) = seq.params.iter().position(|x| x == p) {
                        r[i] = Role::Granule;
                    }
                }
            }
        }
        Stmt::Range { start, size, .. } => {
            params(start, &mut starts);
            params(size, &mut sizes);
        }
        _ => {}
    });
    for i in sizes {
        if r[i] == Role::Other {
            r[i] = Role::Size;
        }
    }
    for i in starts {
        if r[i] != Role::Granule {
            r[i] = Role::Start;
        }
    }
    r
}

/// Bytes of normal memory each pointer parameter needs: up to its
/// highest element the sequence touches, at least 16.
fn memory_sizes(seq: &Seq) -> Vec<(usize, usize)> {
    use crate::ir::MemOp;
    let mut top: Vec<(usize, usize)> = seq
        .ptrs
        .iter()
        .enumerate()
        .filter(|(_, p)| p.is_some())
        .map(|(i, _)| (i, 16))
        .collect();
    crate::ir::walk(&seq.body, &mut |s| {
        if let Stmt::Mem { op, .. } = s {
            let (ptr, end) = match op {
                MemOp::Load { mem, .. }
                | MemOp::Store { mem, .. }
                | MemOp::Acquire(crate::ir::Acquire { mem, .. })
                | MemOp::Release { mem, .. } => {
                    (mem.ptr, (mem.offset + u64::from(mem.width / 8)) as usize)
                }
                // A run-time offset may reach anywhere: a page of zeros
                // (the interpreter reports offsets past what it simulates).
                MemOp::LoadAt { ptr, .. }
                | MemOp::StoreAt { ptr, .. }
                | MemOp::Poll { ptr, .. } => (*ptr, 0x1000),
            };
            if let Some(t) = top.iter_mut().find(|(i, _)| *i == ptr) {
                t.1 = t.1.max(end);
            }
        }
    });
    top
}

/// A poll of a sequence: (device, register), mask, comparison, and the
/// value compared with.
type PollSpec = ((DevId, RegId), u64, PollOp, Expr);

/// What every world of one sequence is made from.
struct Maker<'a> {
    prog: &'a Program,
    seq: &'a Seq,
    /// Devices with a run-time instance count.
    dynamic: Vec<DevId>,
    polls: Vec<PollSpec>,
    /// Bytes of memory behind each pointer parameter.
    memory: Vec<(usize, usize)>,
    /// Command queues the sequence drives: (queue, ring parameter, log2n
    /// parameter).
    queues: Vec<(&'a Queue, usize, usize)>,
}

impl<'a> Maker<'a> {
    fn new(prog: &'a Program, seq: &'a Seq) -> Self {
        let dynamic: Vec<DevId> = seq
            .devices
            .iter()
            .copied()
            .filter(|&d| matches!(prog.devices[d].instances, Instances::Dynamic { .. }))
            .collect();
        let mut polls = Vec::new();
        crate::ir::walk(&seq.body, &mut |s| {
            if let Stmt::Poll { access, mask, wait } = s {
                polls.push(((access.dev, access.reg), *mask, wait.op, wait.value.clone()));
            }
        });
        // Memory behind pointer parameters starts zeroed (a free lock: a lock
        // held by another owner would never be released in a single-threaded
        // run), as large as the sequence's highest offset.
        let memory = memory_sizes(seq);
        // Their rings are 2 to 32 entries (2 fills at once, so the
        // full-ring wait runs), and in the worlds where polls succeed the
        // consumer is simulated (it takes every entry at the doorbell, after
        // checking each was written), not scripted.
        let queues = prog
            .queues
            .iter()
            .filter(|q| q.dev < prog.devices.len())
            .filter_map(|q| {
                let (ring, log2n) = interp::Consumer::params(seq, q)?;
                Some((q, ring, log2n))
            })
            .collect();
        Maker {
            prog,
            seq,
            dynamic,
            polls,
            memory,
            queues,
        }
    }

    /// The busy and the ready register value of each poll under `params`
    /// (a run-time right-hand side depends on them).
    fn script(&self, params: &[u64]) -> Vec<((DevId, RegId), u64, u64)> {
        self.polls
            .iter()
            .map(|(key, mask, op, value)| {
                let v = value.eval(params);
                let low = mask & mask.wrapping_neg();
                let (busy, ready) = match op {
                    PollOp::Eq => (v ^ low, v),
                    PollOp::Ne => (v, v ^ low),
                };
                (*key, busy, ready)
            })
            .collect()
    }

    /// The world of `params` with `count` instances of each run-time set,
    /// polls ready on the third read (`ready`) or never.
    fn make(&self, params: &[u64], count: u64, ready: bool) -> World {
        self.make_stuck(params, count, &|_| !ready)
    }

    /// The world of `params` with `count` instances, where the polls of
    /// the registers `stuck` picks never get ready and the others are
    /// ready on the third read.
    fn make_stuck(
        &self,
        params: &[u64],
        count: u64,
        stuck: &dyn Fn((DevId, RegId)) -> bool,
    ) -> World {
        let (prog, seq) = (self.prog, self.seq);
        let mut params = params.to_vec();
        for &(_, _, l) in &self.queues {
            params[l] = 1 + params[l] % 5;
        }
        // Completion writes land in the memory the emulator gives PTR.
        for (i, j) in interp::Consumer::phys_params(seq) {
            params[i] = interp::ptr_base(j);
        }
        let mut w = World {
            params: params.clone(),
            ..World::default()
        };
        for &d in &self.dynamic {
            w.counts.insert(d, count);
        }
        for &(i, len) in &self.memory {
            w.memory.insert(i, vec![0; len]);
        }
        for (key, busy, r) in self.script(&params) {
            let reads = if stuck(key) {
                vec![busy]
            } else {
                vec![busy, busy, r]
            };
            w.reads.insert(key, reads);
        }
        for &(q, ring, l) in &self.queues {
            if stuck((q.dev, q.cons)) {
                continue;
            }
            w.reads.remove(&(q.dev, q.cons));
            w.consumers
                .push(interp::Consumer::new(prog, seq, q, ring, params[l]));
        }
        w
    }

    /// Instances of each run-time set in the feature and edge worlds.
    fn count(&self) -> u64 {
        if self.dynamic.is_empty() {
            1
        } else {
            3
        }
    }

    /// Instance counts 0, 1 and 3 for run-time sets, ascending and
    /// descending parameters; one run where every poll stays busy.
    fn common(&self, up: &[u64], down: &[u64], out: &mut Vec<(String, World)>) {
        let counts: &[u64] = if self.dynamic.is_empty() {
            &[1]
        } else {
            &[0, 1, 3]
        };
        for &count in counts {
            for (pname, params) in [("ascending", up), ("descending", down)] {
                out.push((
                    format!(
                        "{}, {pname} parameters, polls ready on the third read",
                        instances(count)
                    ),
                    self.make(params, count, true),
                ));
            }
        }
        if !self.polls.is_empty() {
            out.push((
                "2 instances, polls never ready".to_string(),
                self.make(up, 2, false),
            ));
        }
        // Every poll's failure exit, not only the first poll's: the polls
        // of one register never ready, the others ready on the third read
        // (issue 42: `verify` reports each exit it did not run).
        let mut keys: Vec<(DevId, RegId)> = self.polls.iter().map(|p| p.0).collect();
        keys.sort_unstable();
        keys.dedup();
        if keys.len() > 1 {
            for &k in keys.iter().take(8) {
                let (dev, reg) = k;
                let d = &self.prog.devices[dev];
                out.push((
                    format!(
                        "2 instances, polls of {}.{} never ready",
                        d.name, d.regs[reg].name
                    ),
                    self.make_stuck(up, 2, &|x| x == k),
                ));
            }
        }
    }

    /// Every combination of the features the sequence tests: each is a
    /// CPU the code must be right for (the feature word is a parameter).
    fn features(&self, up: &[u64], out: &mut Vec<(String, World)>) {
        let Some(w) = self.seq.feature_word else {
            return;
        };
        let used = crate::features::used_features(self.seq);
        let count = self.count();
        for combo in 0..(1u64 << used.len()) {
            let mut params = up.to_vec();
            params[w] = used
                .iter()
                .enumerate()
                .filter(|(j, _)| combo >> j & 1 == 1)
                .fold(0, |acc, (_, &(i, _))| acc | 1 << i);
            let on: Vec<&str> = used
                .iter()
                .filter(|&&(i, _)| params[w] >> i & 1 == 1)
                .map(|&(i, _)| self.prog.features[i].name.as_str())
                .collect();
            out.push((
                format!("{}, features {{{}}}", instances(count), on.join(", ")),
                self.make(&params, count, true),
            ));
        }
    }

    /// Every parameter 0, 1 or all ones, and covers and ranges over the
    /// edge ranges (those the meaning cannot run in 200,000 steps left
    /// out), unless an earlier world has the same parameters.
    fn edges(&self, up: &[u64], out: &mut Vec<(String, World)>) {
        let n = up.len();
        let roles = roles(self.prog, self.seq);
        let edge = |start: u64, size: u64| -> Vec<u64> {
            roles
                .iter()
                .zip(up)
                .map(|(r, up)| match r {
                    Role::Start => start,
                    Role::Size => size,
                    Role::Granule => 0x1000,
                    Role::Other => *up,
                })
                .collect()
        };
        let edges = [
            ("every parameter 0".to_string(), vec![0; n]),
            ("every parameter 1".to_string(), vec![1; n]),
            ("every parameter all ones".to_string(), vec![u64::MAX; n]),
            (
                "start 0x10000, size 2^64 - 1 (wraps)".to_string(),
                edge(0x1_0000, u64::MAX),
            ),
            (
                "start 2^64 - 0xedd, size 0x3000 (wraps)".to_string(),
                edge(0u64.wrapping_sub(0xedd), 0x3000),
            ),
            (
                "unaligned start 0x1234, size 0x2345".to_string(),
                edge(0x1234, 0x2345),
            ),
            // A few granules, below any threshold: the page loop itself,
            // with an unrolled body and a remainder, where a size is a
            // count of granules (`npages * tce_size`) or bytes. Then the
            // same across 2^48 and 2^56, where reduced loops that carry
            // an address-derived operand switch to the loop that
            // recomputes it (a wrong carried step passed every other
            // world).
            ("start 0x7000, size 5".to_string(), edge(0x7000, 5)),
            (
                "start 0x7000, size 0x5000".to_string(),
                edge(0x7000, 0x5000),
            ),
            (
                "start 2^56 - 0x2000, size 5".to_string(),
                edge((1 << 56) - 0x2000, 5),
            ),
            (
                "start 2^48 - 0x2000, size 0x5000".to_string(),
                edge((1 << 48) - 0x2000, 0x5000),
            ),
            (
                "start 2^56 - 0x2000, size 0x5000".to_string(),
                edge((1 << 56) - 0x2000, 0x5000),
            ),
        ];
        let count = self.count();
        for (name, params) in edges {
            if out.iter().any(|(_, w)| w.params == params) {
                continue;
            }
            let w = self.make(&params, count, true);
            if interp::run_bounded(self.prog, self.seq, &w, 200_000).is_ok() {
                out.push((format!("{}, {name}", instances(count)), w));
            }
        }
    }

    /// Branch arms: parameters drawn (deterministically) from the values
    /// the conditions compare against, one either side of each, and small
    /// numbers, so both arms of most conditions are among the worlds.
    fn branch_probes(&self, out: &mut Vec<(String, World)>) {
        let n = self.seq.params.len();
        // Besides small numbers, the top of the address space and the
        // sign bit: a range or `while` over addresses near 2^64 is what
        // runs a loop into its limit (issue 42).
        let mut pool: Vec<u64> = vec![0, 1, 2, 1 << 32, 1 << 63, u64::MAX - 0xffff, u64::MAX];
        let mut arms = 0;
        crate::ir::walk(&self.seq.body, &mut |s| {
            if let Stmt::If { cond, .. } | Stmt::While { cond, .. } = s {
                arms += if matches!(s, Stmt::While { .. }) {
                    3
                } else {
                    2
                };
                compared_constants(&cond.a, &mut pool);
                compared_constants(&cond.b, &mut pool);
                for e in [&cond.a, &cond.b] {
                    if let Some(c) = e.as_const() {
                        pool.extend([c.wrapping_sub(1), c, c.wrapping_add(1)]);
                    }
                }
            }
        });
        pool.sort_unstable();
        pool.dedup();
        // Coverage-guided: of up to 1024 candidate parameter vectors, keep
        // (at most 16) those whose interpretation reaches an arm no kept world
        // reached.
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let mut reached = std::collections::BTreeSet::new();
        let mut kept = 0;
        for _ in 0..if arms > 0 && n > 0 { 1024 } else { 0 } {
            if kept == 16 || reached.len() == arms {
                break;
            }
            let params: Vec<u64> = (0..n)
                .map(|_| {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    pool[(x % pool.len() as u64) as usize]
                })
                .collect();
            let w = self.make(&params, 1, true);
            let Ok(o) = interp::run_bounded(self.prog, self.seq, &w, 100_000) else {
                continue;
            };
            if o.arms.is_subset(&reached) {
                continue;
            }
            reached.extend(o.arms);
            kept += 1;
            out.push((format!("branch probe: parameters {params:x?}"), w));
        }
    }
}

/// `1 instance`, `3 instances`.
fn instances(count: u64) -> String {
    format!("{count} instance{}", if count == 1 { "" } else { "s" })
}

/// Representative worlds for a sequence: instance counts 0, 1 and 3 for
/// run-time sets; two parameter vectors; polls that succeed after two busy
/// reads, and one run where every poll stays busy. Then the edges: every
/// parameter 0, 1 or all ones; a cover or range from 0x10000 of size
/// 2^64 - 1, from an unaligned start 0xedd below 2^64 of size 0x3000 (both
/// wrap past 2^64), from an unaligned start 0x1234 of size 0x2345, and
/// a few granules (a size of 5 or 0x5000) from 0x7000 and across 2^48
/// and 2^56 (run-time granule sizes stay 4 KiB in these). Edge worlds the
/// spec's meaning cannot run in 200,000 steps (a `range` over 2^64 bytes)
/// are left out.
pub fn worlds(prog: &Program, seq_index: usize) -> Vec<(String, World)> {
    let seq = &prog.seqs[seq_index];
    let maker = Maker::new(prog, seq);
    let n = seq.params.len() as u64;
    let params_up: Vec<u64> = (0..n).map(|i| (i + 1) << 12).collect();
    let params_down: Vec<u64> = (0..n)
        .map(|i| ((n - i) << 12) | 0x0123_0000_0000_0000)
        .collect();
    let mut out = Vec::new();
    maker.common(&params_up, &params_down, &mut out);
    maker.features(&params_up, &mut out);
    maker.edges(&params_up, &mut out);
    maker.branch_probes(&mut out);
    tlb_lookups(seq, &mut out);
    within_assumes(seq, out)
}

/// The worlds inside the sequence's `assume`s: a parameter outside what
/// they allow is moved to the nearest value they do (the world is named
/// so), and a world that still breaks one is left out. Outside the
/// contract the spec says nothing, and the generated code need not
/// agree with anything.
fn within_assumes(seq: &Seq, worlds: Vec<(String, World)>) -> Vec<(String, World)> {
    let Ok(known) = crate::ir::facts::params_known(seq.params.len(), &seq.assumes) else {
        return worlds;
    };
    worlds
        .into_iter()
        .filter_map(|(mut name, mut w)| {
            if interp::broken_assume(seq, &w.params).is_some() {
                for (v, k) in w.params.iter_mut().zip(&known) {
                    if !k.contains(*v) {
                        *v = (*v & !k.zeros).clamp(k.lo, k.hi);
                    }
                }
                name.push_str(" (parameters moved within its `assume`s)");
            }
            interp::broken_assume(seq, &w.params)
                .is_none()
                .then_some((name, w))
        })
        .collect()
}

/// A sequence that looks TLB entries up (`tlbsx`, `tlbre`) runs every
/// world with no lookup finding its entry (the default), and again with
/// each of the first three lookups finding or not (`World::tlb_found`):
/// the arms that test MAS1.V after each are then reached.
fn tlb_lookups(seq: &Seq, out: &mut Vec<(String, World)>) {
    let mut lookups = 0;
    crate::ir::walk(&seq.body, &mut |s| {
        if let Stmt::Sys {
            op: crate::ir::SysOp::TlbSearch { .. } | crate::ir::SysOp::TlbRead,
            ..
        } = s
        {
            lookups += 1;
        }
    });
    if lookups == 0 {
        return;
    }
    let n = lookups.min(3);
    let base: Vec<(String, World)> = out.clone();
    for mask in 1u32..(1 << n) {
        let found: Vec<bool> = (0..n).map(|i| mask >> i & 1 == 1).collect();
        let what: Vec<&str> = found
            .iter()
            .map(|&f| if f { "found" } else { "missed" })
            .collect();
        for (name, w) in &base {
            let mut w = w.clone();
            // The last repeats: past the n-th, lookups miss.
            w.tlb_found = found.iter().copied().chain([false]).collect();
            out.push((format!("{name}; TLB lookups {}", what.join(", ")), w));
        }
    }
}

/// Constants compared with something in `e` (and one either side).
fn compared_constants(e: &Expr, out: &mut Vec<u64>) {
    match e {
        Expr::Cmp(_, a, b) => {
            for x in [a, b] {
                if let Some(c) = x.as_const() {
                    out.extend([c.wrapping_sub(1), c, c.wrapping_add(1)]);
                }
                compared_constants(x, out);
            }
        }
        _ => e
            .children()
            .into_iter()
            .for_each(|c| compared_constants(c, out)),
    }
}
