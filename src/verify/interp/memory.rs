//! Normal memory behind pointer parameters: where it lives, byte order,
//! and the memory operations (loads, stores, polls, locks) on it.

use super::{Flow, InterpError, Machine};
use crate::ir::expr::field_mask;
use crate::ir::expr::Expr;
use crate::ir::{LockValue, MemOp, MemRef, PollOp};

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

/// Bit position of byte `i` of an access `n` bytes wide.
fn byte_shift(big_endian: bool, i: u64, n: u64) -> u64 {
    if big_endian {
        8 * (n - 1 - i)
    } else {
        8 * i
    }
}

impl Machine<'_> {
    /// The location `index` bytes into pointer parameter `ptr`'s memory;
    /// beyond what the simulated memory holds is an error, not a silent 0.
    fn at(&self, ptr: usize, width: u32, index: &Expr) -> Result<MemRef, InterpError> {
        let offset = self.eval(index);
        if offset.saturating_add(u64::from(width / 8)) > MAX_MEMORY {
            return Err(InterpError::OutOfMemory { ptr, offset });
        }
        Ok(MemRef { ptr, offset, width })
    }

    pub(super) fn mem_read(&self, m: &MemRef) -> u64 {
        let bytes = self.memory.get(&m.ptr);
        let n = u64::from(m.width / 8);
        (0..n).fold(0u64, |acc, i| {
            let b = bytes
                .and_then(|v| v.get((m.offset + i) as usize))
                .copied()
                .unwrap_or(0);
            acc | (u64::from(b) << byte_shift(self.world.big_endian, i, n))
        })
    }

    pub(super) fn mem_write(&mut self, m: &MemRef, value: u64) {
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
            bytes[(m.offset + i) as usize] = (value >> byte_shift(big, i, n)) as u8;
        }
    }

    pub(super) fn mem_op(&mut self, op: &MemOp) -> Result<Flow, InterpError> {
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
                wait,
            } => {
                // Nothing else writes memory in a single-threaded run: the
                // first read decides, the rest of the bound only counts.
                let m = self.at(*ptr, *width, index)?;
                let want = self.eval(&wait.value) & mask(*width);
                let hit = (self.mem_read(&m) == want) == (wait.op == PollOp::Eq);
                self.tick()?;
                if !hit {
                    for _ in 1..wait.limit {
                        self.tick()?;
                    }
                    self.fail_barrier(&wait.fail_barrier);
                    return Ok(Flow::Return(wait.fail));
                }
            }
            MemOp::Acquire(a) => return self.acquire(a),
            MemOp::Release {
                mem, value, cond, ..
            } => return self.release(mem, value, cond.as_ref()),
        }
        Ok(Flow::Next)
    }

    /// `acquire`: take the lock if it is free (or report it already ours);
    /// a taken lock fails a bounded spin and deadlocks an unbounded one.
    fn acquire(&mut self, a: &crate::ir::Acquire) -> Result<Flow, InterpError> {
        let cur = self.mem_read(&a.mem);
        if let Some(l) = a.status {
            self.locals[l] = 0;
        }
        let (free, new) = match &a.value {
            LockValue::Owner(e) => (cur == 0, self.eval(e) & field_mask(0, a.mem.width)),
            LockValue::Bit(b) => (cur & (1 << b) == 0, cur | (1 << b)),
        };
        if free {
            self.mem_write(&a.mem, new);
        } else if a.held.is_some() && matches!(a.value, LockValue::Owner(_)) && cur == new {
            if let (Some(l), Some(code)) = (a.status, a.held) {
                self.locals[l] = code;
            }
        } else {
            // Single-threaded: nobody releases it while we spin.
            return match a.limit {
                Some((_, code)) => {
                    self.fail_barrier(&a.fail_barrier);
                    Ok(Flow::Return(code))
                }
                None => Err(InterpError::Deadlock),
            };
        }
        Ok(Flow::Next)
    }

    /// `release` (unless its condition says the lock was not taken).
    fn release(
        &mut self,
        mem: &MemRef,
        value: &LockValue,
        cond: Option<&Expr>,
    ) -> Result<Flow, InterpError> {
        if let Some(c) = cond {
            if self.eval(c) != 0 {
                return Ok(Flow::Next);
            }
        }
        let new = match value {
            LockValue::Owner(e) => self.eval(e) & field_mask(0, mem.width),
            LockValue::Bit(b) => self.mem_read(mem) & !(1u64 << b),
        };
        self.mem_write(mem, new);
        Ok(Flow::Next)
    }
}
