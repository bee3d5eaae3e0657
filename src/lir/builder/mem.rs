//! Normal-memory operations and the dispatch of lock operations.

use super::*;
use crate::ir::{MemOp, OpId};

/// A plain (not byte-reversed) access to normal memory at `base + offset`.
fn normal_load(dst: VReg, base: VReg, offset: u64, width: u32) -> Inst {
    Inst::Load {
        dst,
        base,
        offset,
        width,
        swap: false,
        kind: MemKind::Normal,
        index: None,
    }
}

fn normal_store(src: VReg, base: VReg, offset: u64, width: u32) -> Inst {
    Inst::Store {
        src,
        base,
        offset,
        width,
        swap: false,
        kind: MemKind::Normal,
        index: None,
    }
}

impl Builder<'_> {
    /// Lower a normal-memory or lock operation; the instructions that
    /// access the memory carry IR operation `id`, so traces attribute them.
    pub(super) fn mem_op(&mut self, id: OpId, op: &MemOp) -> Result<(), Diag> {
        match op {
            MemOp::Load { local, mem } => {
                let base = self.arg_of(&ArgKind::Param(mem.ptr));
                self.load_into(id, *local, base, mem.offset, mem.width);
            }
            MemOp::Store { mem, value } => {
                let v = self.expr(value);
                let base = self.arg_of(&ArgKind::Param(mem.ptr));
                self.emit_op(id, normal_store(v, base, mem.offset, mem.width));
            }
            MemOp::LoadAt {
                local,
                ptr,
                width,
                index,
            } => {
                let addr = self.address(*ptr, index);
                self.load_into(id, *local, addr, 0, *width);
            }
            MemOp::StoreAt {
                ptr,
                width,
                index,
                value,
            } => {
                let v = self.expr(value);
                let addr = self.address(*ptr, index);
                self.emit_op(id, normal_store(v, addr, 0, *width));
            }
            MemOp::Poll {
                ptr,
                width,
                index,
                wait,
            } => {
                let addr = self.address(*ptr, index);
                let want = self.operand(&wait.value);
                let width = *width;
                let load = |dst| normal_load(dst, addr, 0, width);
                self.poll_loop(id, &load, None, wait, want);
            }
            MemOp::Acquire(a) => self.acquire(id, a),
            MemOp::Release {
                mem,
                value,
                cond,
                order,
            } => self.release(id, mem, value, cond.as_ref(), *order),
        }
        Ok(())
    }

    /// A memory read into a fresh register that becomes local `local`.
    fn load_into(&mut self, id: OpId, local: usize, base: VReg, offset: u64, width: u32) {
        let v = self.vreg();
        self.emit_op(id, normal_load(v, base, offset, width));
        self.locals.insert(local, v);
    }
}
