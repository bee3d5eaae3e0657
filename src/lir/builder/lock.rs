//! Lowering of locks: the reservation window of `acquire` (load-reserve,
//! test, store-conditional), its out-of-line spin, and `release`.

use super::*;
use crate::ir::{Acquire, LockValue, MemRef, OpId, ReleaseOrder};

/// The labels and registers an acquire's slow path shares with its
/// reservation window.
struct SpinPath {
    busy: LabelId,
    spin: LabelId,
    retry: LabelId,
    done: LabelId,
    held: LabelId,
    fail: LabelId,
    loaded: VReg,
    owner: Option<VReg>,
    counter: Option<VReg>,
    status: Option<VReg>,
    addr: VReg,
    bit: Option<u32>,
}

impl Builder<'_> {
    pub(super) fn acquire(&mut self, id: OpId, a: &Acquire) {
        let Acquire {
            mem,
            value,
            status,
            limit,
            hoisted,
            ..
        } = a;
        let (status, limit, hoisted) = (*status, *limit, *hoisted);
        let width = mem.width;
        let addr = self.mem_addr(mem);
        let (retry, busy, done) = (self.label(), self.label(), self.label());
        let status_v = status.map(|l| {
            let v = self.vreg();
            self.locals.insert(l, v);
            v
        });
        let mut owner = None;
        if hoisted {
            owner = self.hoisted_invariants(value, status_v);
        }
        let counter = limit.map(|(n, _)| {
            let v = self.vreg();
            self.emit(Inst::Imm { dst: v, value: n });
            v
        });
        // The naive window recomputes the owner, but a stack
        // argument it reads is loaded before the window: another
        // load between load-reserve and store-conditional may
        // lose the reservation (Arm ARM B2.9.5 leaves it
        // IMPLEMENTATION DEFINED), retrying forever.
        let restore = match value {
            LockValue::Owner(e) if !hoisted => Some(self.preload_args(e)),
            _ => None,
        };
        self.emit(Inst::Label(retry));
        let loaded = self.load_reserve(addr, width, true);
        if !hoisted {
            owner = self.window_invariants(value, status_v);
        }
        if let Some(saved) = restore {
            self.arg_override = saved;
        }
        let new = self.take_if_free(value, loaded, owner, busy);
        self.emit_op(
            id,
            Inst::StoreCond {
                src: new,
                base: addr,
                width,
                expected: loaded,
                release: false,
                retry,
            },
        );
        if let Some(b) = self.target.acquire_barrier(self.prog.machine) {
            self.emit(Inst::Barrier { name: b });
        }
        self.emit(Inst::Label(done));
        let path = SpinPath {
            busy,
            spin: self.label(),
            retry,
            done,
            held: self.label(),
            fail: self.label(),
            loaded,
            owner,
            counter,
            status: status_v,
            addr,
            bit: match value {
                LockValue::Bit(b) => Some(*b),
                LockValue::Owner(_) => None,
            },
        };
        self.cold(&mut |b| b.acquire_slow_path(a, &path));
    }

    /// Loop-invariant work hoisted out of the reservation window: the
    /// owner value (returned) and clearing the status.
    fn hoisted_invariants(&mut self, value: &LockValue, status: Option<VReg>) -> Option<VReg> {
        let owner = match value {
            LockValue::Owner(e) => Some(self.expr(e)),
            LockValue::Bit(_) => None,
        };
        if let Some(sv) = status {
            self.emit(Inst::Imm { dst: sv, value: 0 });
        }
        owner
    }

    /// The naive window: invariant work redone on each retry (clearing
    /// the status, the owner value, returned).
    fn window_invariants(&mut self, value: &LockValue, status: Option<VReg>) -> Option<VReg> {
        if let Some(sv) = status {
            self.emit(Inst::Imm { dst: sv, value: 0 });
        }
        match value {
            LockValue::Owner(e) => Some(self.fresh_expr(e)),
            LockValue::Bit(_) => None,
        }
    }

    /// Inside the window: branch to `busy` unless the `loaded` lock word
    /// is free; the word that takes it.
    fn take_if_free(
        &mut self,
        value: &LockValue,
        loaded: VReg,
        owner: Option<VReg>,
        busy: LabelId,
    ) -> VReg {
        match value {
            LockValue::Owner(_) => {
                self.branch(Cmp::Ne, loaded, Operand::Imm(0), busy);
                owner.unwrap_or(loaded)
            }
            LockValue::Bit(b) => {
                let t = self.lock_bit(loaded, *b);
                self.branch(Cmp::Ne, t, Operand::Imm(0), busy);
                self.bin_imm(BinOp::Or, loaded, 1 << b)
            }
        }
    }

    /// `v & (1 << bit)`: the lock bit of lock word `v`.
    fn lock_bit(&mut self, v: VReg, bit: u32) -> VReg {
        self.bin_imm(BinOp::And, v, 1 << bit)
    }

    /// Out of line: the lock is taken. Detect recursion (`held`), count
    /// down a bounded spin, spin with plain loads until it looks free,
    /// then retry the reservation window.
    fn acquire_slow_path(&mut self, a: &Acquire, p: &SpinPath) {
        self.emit(Inst::Label(p.busy));
        if let (Some(_), Some(o)) = (a.held, p.owner) {
            // Already ours (a nested handler): do not take it.
            self.branch(Cmp::Eq, p.loaded, Operand::Reg(o), p.held);
        }
        self.emit(Inst::Label(p.spin));
        if let Some(n) = p.counter {
            self.count_down(n, Cmp::Eq, p.fail);
        }
        self.emit(Inst::SpinHint);
        // Spin with plain loads: no reservation traffic while
        // the lock is held.
        let s = self.vreg();
        self.emit(Inst::Load {
            dst: s,
            base: p.addr,
            offset: 0,
            width: a.mem.width,
            swap: false,
            kind: MemKind::Normal,
            index: None,
        });
        let t = match p.bit {
            Some(k) => self.lock_bit(s, k),
            None => s,
        };
        self.branch(Cmp::Ne, t, Operand::Imm(0), p.spin);
        self.emit(Inst::Jump(p.retry));
        if let (Some(code), Some(sv)) = (a.held, p.status) {
            self.emit(Inst::Label(p.held));
            self.emit(Inst::Imm {
                dst: sv,
                value: code,
            });
            self.emit(Inst::Jump(p.done));
        }
        if let Some((_, code)) = a.limit {
            self.emit(Inst::Label(p.fail));
            for name in a.fail_barrier.iter() {
                self.exit_barrier(name);
            }
            self.emit(Inst::Ret {
                value: Operand::Imm(code as u64),
            });
        }
    }

    pub(super) fn release(
        &mut self,
        id: OpId,
        mem: &MemRef,
        value: &LockValue,
        cond: Option<&Expr>,
        order: ReleaseOrder,
    ) {
        let width = mem.width;
        let addr = self.mem_addr(mem);
        let skip = self.label();
        if let Some(c) = cond {
            let c = self.expr(c);
            self.branch(Cmp::Ne, c, Operand::Imm(0), skip);
        }
        let barrier = self.target.release_barrier(self.prog.machine, order);
        match value {
            LockValue::Owner(e) => {
                let v = self.expr(e);
                if let Some(b) = barrier {
                    self.emit(Inst::Barrier { name: b });
                }
                self.emit_op(
                    id,
                    Inst::StoreRelease {
                        src: v,
                        base: addr,
                        width,
                    },
                );
            }
            LockValue::Bit(k) => {
                if let Some(b) = barrier {
                    self.emit(Inst::Barrier { name: b });
                }
                let retry = self.label();
                self.emit(Inst::Label(retry));
                let l = self.load_reserve(addr, width, false);
                let n = self.bin_imm(
                    BinOp::And,
                    l,
                    !(1u64 << k) & crate::ir::expr::field_mask(0, width),
                );
                self.emit_op(
                    id,
                    Inst::StoreCond {
                        src: n,
                        base: addr,
                        width,
                        expected: l,
                        release: true,
                        retry,
                    },
                );
            }
        }
        self.emit(Inst::Label(skip));
    }

    /// The load-reserve that opens a reservation window, into a fresh
    /// register.
    fn load_reserve(&mut self, base: VReg, width: u32, acquire: bool) -> VReg {
        let dst = self.vreg();
        self.emit(Inst::LoadReserve {
            dst,
            base,
            width,
            acquire,
        });
        dst
    }
}
