//! Loops: bounded polls, `range` (counted or by remainder), `while` and
//! the walk over a device's instances.

use super::*;

impl Builder<'_> {
    /// A bounded poll of a register or of memory: `load` builds the read
    /// into a fresh register (attributed to IR operation `id`), `mask`
    /// selects the field, `want` is the wait's value computed before the
    /// loop; `limit` reads, then the failure return (after the
    /// completion barrier `passes::exits` gave it).
    pub(super) fn poll_loop(
        &mut self,
        id: crate::ir::OpId,
        load: &dyn Fn(VReg) -> Inst,
        mask: Option<u64>,
        p: &crate::ir::Wait,
        want: Operand,
    ) {
        let (top, done) = (self.label(), self.label());
        let cmp = match p.op {
            PollOp::Eq => Cmp::Eq,
            PollOp::Ne => Cmp::Ne,
        };
        let read_and_test = |b: &mut Self| {
            let v = b.vreg();
            b.emit_op(id, load(v));
            let t = match mask {
                None => v,
                Some(m) => b.bin_imm(BinOp::And, v, m),
            };
            b.branch(cmp, t, want, done);
        };
        // The first read comes before the counter, as gcc peels the
        // kernel's `readx_poll_timeout` loops: a device that is ready at
        // once (the common case) costs no counter, and each later read
        // one step fewer.
        read_and_test(self);
        if p.limit > 1 {
            let n = self.vreg();
            self.emit(Inst::Imm {
                dst: n,
                value: p.limit - 1,
            });
            self.emit(Inst::Label(top));
            read_and_test(self);
            self.count_down(n, Cmp::Ne, top);
        }
        for b in p.fail_barrier.iter() {
            self.exit_barrier(b);
        }
        self.emit(Inst::Ret {
            value: Operand::Imm(p.fail as u64),
        });
        self.emit(Inst::Label(done));
    }

    /// `n -= 1; if n CMP 0 goto target`: the step of a counted loop (a
    /// bounded poll, a counted range, a bounded spin).
    pub(super) fn count_down(&mut self, n: VReg, cmp: Cmp, target: LabelId) {
        self.update(BinOp::Sub, n, Operand::Imm(1));
        self.branch(cmp, n, Operand::Imm(0), target);
    }

    /// `n = limit; top: if !cond goto exit; if n == 0 goto fail; n--;
    /// body; goto top; fail: return code; exit:`.
    pub(super) fn while_loop(
        &mut self,
        cond: &crate::ir::Cond,
        body: &[Stmt],
        limit: u64,
        fail: i64,
        fail_barrier: crate::ir::ExitBarriers,
    ) -> Result<(), Diag> {
        let saved = self.origin.clone();
        let (top, fail_l, exit) = (self.label(), self.label(), self.label());
        let n = self.vreg();
        self.emit(Inst::Imm {
            dst: n,
            value: limit,
        });
        // Values first computed in the loop (the condition's included) are
        // not available after it: the failure path leaves from inside.
        let saved_values = self.scope();
        self.emit(Inst::Label(top));
        self.branch_unless(cond, exit);
        self.branch(Cmp::Eq, n, Operand::Imm(0), fail_l);
        self.update(BinOp::Sub, n, Operand::Imm(1));
        for s in body {
            self.stmt(s)?;
        }
        self.unscope(saved_values);
        self.origin = saved;
        self.emit(Inst::Jump(top));
        self.emit(Inst::Label(fail_l));
        for name in fail_barrier.iter() {
            self.exit_barrier(name);
        }
        self.emit(Inst::Ret {
            value: Operand::Imm(fail as u64),
        });
        self.emit(Inst::Label(exit));
        Ok(())
    }

    /// Walk the instance array with a pointer: `for (p = a; p != a + n; p++)`.
    pub(super) fn each(&mut self, dev: usize, body: &[Stmt]) -> Result<(), Diag> {
        let inst = self.prog.devices[dev].instances;
        if inst == Instances::Single {
            for s in body {
                self.stmt(s)?;
            }
            return Ok(());
        }
        let arr = self.arg_of(&ArgKind::DeviceArray(dev));
        let (top, exit) = (self.label(), self.label());
        let cur = self.vreg();
        let end = self.vreg();
        match inst {
            Instances::Dynamic { .. } => {
                let count = self.arg_of(&ArgKind::DeviceCount(dev));
                self.branch(Cmp::Eq, count, Operand::Imm(0), exit);
                self.emit(Inst::Bin {
                    op: BinOp::Shl,
                    dst: end,
                    a: count,
                    b: Operand::Imm(3),
                });
                self.update(BinOp::Add, end, Operand::Reg(arr));
            }
            Instances::Fixed(n) => {
                self.emit(Inst::Bin {
                    op: BinOp::Add,
                    dst: end,
                    a: arr,
                    b: Operand::Imm(n * 8),
                });
            }
            Instances::Single => unreachable!("handled above"),
        }
        self.emit(Inst::Copy { dst: cur, src: arr });
        self.emit(Inst::Label(top));
        let base = self.vreg();
        self.emit(Inst::Load {
            dst: base,
            base: cur,
            offset: 0,
            width: 64,
            swap: false,
            kind: MemKind::Normal,
            index: None,
        });
        let saved = self.origin.clone();
        self.bases.insert(dev, base);
        let saved_values = self.scope();
        for s in body {
            self.stmt(s)?;
        }
        self.unscope(saved_values);
        self.bases.remove(&dev);
        self.origin = saved;
        self.update(BinOp::Add, cur, Operand::Imm(8));
        self.branch(Cmp::Ne, cur, Operand::Reg(end), top);
        self.emit(Inst::Label(exit));
        Ok(())
    }
}
