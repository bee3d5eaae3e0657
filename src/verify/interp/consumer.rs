//! The simulated command-queue consumer: which queues a world simulates,
//! and what happens when the sequence rings a producer doorbell.

use super::{ptr_base, InterpError, Machine, World, MAX_MEMORY};
use crate::ir::expr::field_mask;
use crate::ir::{DevId, MemRef, Program, RegId, Seq};
use crate::spec::queue::RecordLayout;

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

impl Machine<'_> {
    /// A write of a queue's producer register: the consumer takes every
    /// new entry (each must be complete) and catches up.
    pub(super) fn consume(
        &mut self,
        dev: DevId,
        inst: u64,
        reg: RegId,
        v: u64,
    ) -> Result<(), InterpError> {
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
}
