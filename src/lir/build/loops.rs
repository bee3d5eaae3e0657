//! Loops: bounded polls, `range` (counted or by remainder), `while` and
//! the walk over a device's instances.

use super::*;

impl Builder<'_> {
    /// A bounded poll of a register or of memory: `load` builds the read
    /// into a fresh register (attributed to IR operation `id`), `mask`
    /// selects the field; `limit` reads, then the failure return (after
    /// the completion barrier `passes::exits` gave it).
    pub(super) fn poll_loop(
        &mut self,
        id: crate::ir::OpId,
        load: &dyn Fn(VReg) -> Inst,
        mask: Option<u64>,
        p: &Poll,
    ) {
        let (top, done) = (self.label(), self.label());
        let n = self.vreg();
        self.emit(Inst::Imm {
            dst: n,
            value: p.limit,
        });
        self.emit(Inst::Label(top));
        let v = self.vreg();
        self.emit_op(id, load(v));
        let t = match mask {
            None => v,
            Some(m) => self.bin_imm(BinOp::And, v, m),
        };
        let cmp = match p.op {
            PollOp::Eq => Cmp::Eq,
            PollOp::Ne => Cmp::Ne,
        };
        self.emit(Inst::Branch {
            cmp,
            a: t,
            b: p.want,
            target: done,
        });
        self.count_down(n, Cmp::Ne, top);
        if let Some(b) = p.fail_barrier {
            self.exit_barrier(b);
        }
        self.emit(Inst::Ret {
            value: Operand::Imm(p.fail as u64),
        });
        self.emit(Inst::Label(done));
    }

    /// `rem = size; a = start; do { body(a); if (rem <= step) break;
    /// rem -= step; a += step; }`: terminates for every size and step, and
    /// runs ceil(size / step) times.
    pub(super) fn range(
        &mut self,
        local: usize,
        start: &Expr,
        size: &Expr,
        step: &Expr,
        body: &[Stmt],
        fail_barrier: Option<Barrier>,
    ) -> Result<(), Diag> {
        let saved = self.origin.clone();
        // A constant power-of-two step (a page, a granule) counts the trips.
        let counted = step
            .as_const()
            .filter(|c| c.is_power_of_two())
            .map(u64::trailing_zeros);
        let size_v = self.expr(size);
        let step_v = match counted {
            Some(_) => None,
            None => Some(self.expr(step)),
        };
        let start_v = self.expr(start);
        let (top, exit) = (self.label(), self.label());
        self.emit(Inst::Branch {
            cmp: Cmp::Eq,
            a: size_v,
            b: Operand::Imm(0),
            target: exit,
        });
        let Some(step_v) = step_v else {
            let k = counted.unwrap_or_default();
            let lp = iv::Loop {
                local,
                stride: 1 << k,
            };
            return self.counted_range(lp, size_v, start_v, body, (top, exit), saved);
        };
        if step.as_const().is_none() {
            let ok = self.label();
            self.emit(Inst::Branch {
                cmp: Cmp::Ne,
                a: step_v,
                b: Operand::Imm(0),
                target: ok,
            });
            if let Some(name) = fail_barrier {
                self.exit_barrier(name);
            }
            self.emit(Inst::Ret {
                value: Operand::Imm(EINVAL as u64),
            });
            self.emit(Inst::Label(ok));
        }
        let rem = self.vreg();
        self.emit(Inst::Copy {
            dst: rem,
            src: size_v,
        });
        let addr = self.range_body(local, start_v, body, top, saved)?;
        // rem <= step  <=>  !(step < rem)
        let step_op = match step.as_const() {
            Some(c) => Operand::Imm(c),
            None => Operand::Reg(step_v),
        };
        self.emit(Inst::Branch {
            cmp: Cmp::Geu,
            a: step_v,
            b: Operand::Reg(rem),
            target: exit,
        });
        self.emit(Inst::Bin {
            op: BinOp::Sub,
            dst: rem,
            a: rem,
            b: step_op,
        });
        self.emit(Inst::Bin {
            op: BinOp::Add,
            dst: addr,
            a: addr,
            b: step_op,
        });
        self.emit(Inst::Jump(top));
        self.emit(Inst::Label(exit));
        Ok(())
    }

    /// A range with a constant power-of-two step: n = ceil(size / step) =
    /// (size >> k) + (size's low k bits != 0), which cannot overflow, and
    /// the loop bottom-tested on n (the kernel's `add; subs; b.ne`). The
    /// body's induction variables (see [`iv`]) are carried and
    /// incremented, not recomputed from the address; the address itself
    /// is kept only where the body still reads it.
    fn counted_range(
        &mut self,
        lp: iv::Loop,
        size_v: VReg,
        start_v: VReg,
        body: &[Stmt],
        (top, exit): (LabelId, LabelId),
        saved: Origin,
    ) -> Result<(), Diag> {
        let n = self.trip_count(size_v, lp.stride.trailing_zeros());
        let (body, ivs) = self.reduce_ivs(lp, body);
        let reads_addr = reads_local(&body, lp.local);
        let addr = reads_addr.then(|| {
            let addr = self.vreg();
            self.emit(Inst::Copy {
                dst: addr,
                src: start_v,
            });
            addr
        });
        let carried = self.start_ivs(lp, start_v, &ivs);
        // Increments are set before the loop, like every invariant.
        let incs: Vec<Operand> = carried.iter().map(|c| self.increment(c.2)).collect();
        let stride = addr.map(|_| self.increment(lp.stride));
        if let Some(addr) = addr {
            self.locals.insert(lp.local, addr);
        }
        self.emit(Inst::Label(top));
        let saved_values = self.scope();
        for s in &body {
            self.stmt(s)?;
        }
        // Values first computed inside the loop are not available after it.
        self.unscope(saved_values);
        self.origin = saved;
        for (&(id, reg, _), &inc) in carried.iter().zip(&incs) {
            self.add_to(reg, inc);
            self.locals.remove(&id);
        }
        if let (Some(addr), Some(stride)) = (addr, stride) {
            self.add_to(addr, stride);
            self.locals.remove(&lp.local);
        }
        self.count_down(n, Cmp::Ne, top);
        self.emit(Inst::Label(exit));
        Ok(())
    }

    /// The body with its induction variables replaced by fresh locals, and
    /// those variables: (local, expression, increment per trip).
    fn reduce_ivs(&mut self, lp: iv::Loop, body: &[Stmt]) -> (Vec<Stmt>, Vec<(usize, Expr, u64)>) {
        let mut body = body.to_vec();
        let mut ivs = Vec::new();
        let mut fresh = || {
            self.iv_locals += 1;
            usize::MAX - self.iv_locals
        };
        crate::ir::map_exprs(&mut body, &mut |e| lp.reduce(e, 64, &mut ivs, &mut fresh));
        (body, ivs)
    }

    /// Each induction variable's value on the first trip, in a register of
    /// its own bound to its local: (local, register, increment).
    fn start_ivs(
        &mut self,
        lp: iv::Loop,
        start_v: VReg,
        ivs: &[(usize, Expr, u64)],
    ) -> Vec<(usize, VReg, u64)> {
        let outer = self.locals.insert(lp.local, start_v);
        let carried = ivs
            .iter()
            // A fresh register each: an expression that reads a local is
            // never taken from the value cache, and none is the bare
            // address (whose register is `start_v`).
            .map(|(id, e, inc)| (*id, self.expr(e), *inc))
            .collect();
        match outer {
            Some(v) => self.locals.insert(lp.local, v),
            None => self.locals.remove(&lp.local),
        };
        for &(id, reg, _) in &carried {
            self.locals.insert(id, reg);
        }
        carried
    }

    /// A loop increment: an immediate only where every target encodes it
    /// in an add, else a register set before the loop (an immediate
    /// rebuilt on every trip costs more than it saves).
    fn increment(&mut self, inc: u64) -> Operand {
        match inc {
            0..=2047 => Operand::Imm(inc),
            _ => Operand::Reg(self.constant(inc)),
        }
    }

    fn add_to(&mut self, reg: VReg, inc: Operand) {
        self.emit(Inst::Bin {
            op: BinOp::Add,
            dst: reg,
            a: reg,
            b: inc,
        });
    }

    /// `n -= 1; if n CMP 0 goto target`: the step of a counted loop (a
    /// bounded poll, a counted range, a bounded spin).
    pub(super) fn count_down(&mut self, n: VReg, cmp: Cmp, target: LabelId) {
        self.emit(Inst::Bin {
            op: BinOp::Sub,
            dst: n,
            a: n,
            b: Operand::Imm(1),
        });
        self.emit(Inst::Branch {
            cmp,
            a: n,
            b: Operand::Imm(0),
            target,
        });
    }

    /// A range loop's head and body: the address local `local` starts at
    /// `start_v`, label `top`, the body's statements, and the scope and
    /// origin restored after it. Returns the address register.
    pub(super) fn range_body(
        &mut self,
        local: usize,
        start_v: VReg,
        body: &[Stmt],
        top: LabelId,
        saved: Origin,
    ) -> Result<VReg, Diag> {
        let addr = self.vreg();
        self.emit(Inst::Copy {
            dst: addr,
            src: start_v,
        });
        self.emit(Inst::Label(top));
        self.locals.insert(local, addr);
        let saved_values = self.scope();
        for s in body {
            self.stmt(s)?;
        }
        // Values first computed inside the loop are not available after it.
        self.unscope(saved_values);
        self.locals.remove(&local);
        self.origin = saved;
        Ok(addr)
    }

    /// The trips of a `range` with step `1 << k` over a nonzero `size`:
    /// `(size >> k) + ((size & (step - 1)) != 0)`, ceil(size / step)
    /// without the overflow of `(size + step - 1) >> k`.
    pub(super) fn trip_count(&mut self, size_v: VReg, k: u32) -> VReg {
        let n = self.vreg();
        self.emit(Inst::Bin {
            op: BinOp::Shr,
            dst: n,
            a: size_v,
            b: Operand::Imm(u64::from(k)),
        });
        if k > 0 {
            let (low, whole) = (self.vreg(), self.label());
            self.emit(Inst::Bin {
                op: BinOp::And,
                dst: low,
                a: size_v,
                b: Operand::Imm((1u64 << k) - 1),
            });
            self.emit(Inst::Branch {
                cmp: Cmp::Eq,
                a: low,
                b: Operand::Imm(0),
                target: whole,
            });
            self.emit(Inst::Bin {
                op: BinOp::Add,
                dst: n,
                a: n,
                b: Operand::Imm(1),
            });
            self.emit(Inst::Label(whole));
        }
        n
    }

    /// `n = limit; top: if !cond goto exit; if n == 0 goto fail; n--;
    /// body; goto top; fail: return code; exit:`.
    pub(super) fn while_loop(
        &mut self,
        cond: &crate::ir::Cond,
        body: &[Stmt],
        limit: u64,
        fail: i64,
        fail_barrier: Option<Barrier>,
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
        let a = self.expr(&cond.a);
        let b = self.operand(&cond.b);
        self.emit(Inst::Branch {
            cmp: cond.cmp.inverse(),
            a,
            b,
            target: exit,
        });
        self.emit(Inst::Branch {
            cmp: Cmp::Eq,
            a: n,
            b: Operand::Imm(0),
            target: fail_l,
        });
        self.emit(Inst::Bin {
            op: BinOp::Sub,
            dst: n,
            a: n,
            b: Operand::Imm(1),
        });
        for s in body {
            self.stmt(s)?;
        }
        self.unscope(saved_values);
        self.origin = saved;
        self.emit(Inst::Jump(top));
        self.emit(Inst::Label(fail_l));
        if let Some(name) = fail_barrier {
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
                self.emit(Inst::Branch {
                    cmp: Cmp::Eq,
                    a: count,
                    b: Operand::Imm(0),
                    target: exit,
                });
                self.emit(Inst::Bin {
                    op: BinOp::Shl,
                    dst: end,
                    a: count,
                    b: Operand::Imm(3),
                });
                self.emit(Inst::Bin {
                    op: BinOp::Add,
                    dst: end,
                    a: end,
                    b: Operand::Reg(arr),
                });
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
        self.emit(Inst::Bin {
            op: BinOp::Add,
            dst: cur,
            a: cur,
            b: Operand::Imm(8),
        });
        self.emit(Inst::Branch {
            cmp: Cmp::Ne,
            a: cur,
            b: Operand::Reg(end),
            target: top,
        });
        self.emit(Inst::Label(exit));
        Ok(())
    }
}

/// Does any expression of `body` read local `local`?
fn reads_local(body: &[Stmt], local: usize) -> bool {
    fn reads(e: &Expr, l: usize) -> bool {
        *e == Expr::Local(l) || e.children().into_iter().any(|c| reads(c, l))
    }
    let mut found = false;
    crate::ir::each_expr(body, &mut |e| found |= reads(e, local));
    found
}
