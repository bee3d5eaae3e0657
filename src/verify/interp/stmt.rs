//! Statements: what each does, and the control flow (per-instance loops,
//! branches, `range` and `while` loops).

use super::{Access, Flow, InterpError, Machine, EINVAL};
use crate::ir::{Cond, DevId, OpId, Stmt, SysOp};

impl Machine<'_> {
    pub(super) fn stmt(&mut self, s: &Stmt) -> Result<Flow, InterpError> {
        self.tick()?;
        match s {
            Stmt::Mem { op, .. } => return self.mem_op(op),
            Stmt::Each { dev, body, .. } => return self.each(*dev, body),
            Stmt::Write { access, .. } if self.dead_write(access) => {}
            Stmt::Invalidate { name, .. } if self.dead_insn(name) => {}
            Stmt::Cover {
                set,
                mode,
                start,
                size,
                body,
                threshold,
                ..
            } => {
                return self.cover(&super::cover::CoverRun {
                    set_index: *set,
                    set: &self.prog.granules[*set],
                    mode: *mode,
                    start: self.eval(start),
                    size: self.eval(size),
                    threshold,
                    body,
                });
            }
            Stmt::If {
                cond,
                then_,
                else_,
                rare: _,
                span: _,
                why: _,
            } => {
                let taken = self.holds(cond);
                self.arms.insert((
                    s as *const Stmt as usize,
                    if taken {
                        super::ARM_THEN
                    } else {
                        super::ARM_ELSE
                    },
                ));
                return self.block(if taken { then_ } else { else_ });
            }
            Stmt::Write { access, value } => self.write_reg(access, value)?,
            Stmt::Poll { access, mask, wait } => {
                let want = self.eval(&wait.value);
                if !self.poll_reg(access, *mask, wait.op, want, wait.limit)? {
                    // Coverage: the failure exit ran.
                    self.arms
                        .insert((s as *const Stmt as usize, super::ARM_LIMIT));
                    self.fail_barrier(&wait.fail_barrier);
                    return Ok(Flow::Return(wait.fail));
                }
            }
            Stmt::Read { access, local } => self.read_reg(access, *local)?,
            Stmt::Barrier { name, .. } => self.out.push((
                OpId::BARRIER,
                Access::Barrier {
                    name: name.to_string(),
                },
            )),
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
                return self.range(*local, start, size, step, body, fail_barrier);
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
                let at = s as *const Stmt as usize;
                return self.while_loop(at, cond, body, *limit, *fail, fail_barrier);
            }
            Stmt::Invalidate {
                id, name, operands, ..
            } => self.invalidate(*id, name, operands),
            Stmt::Sys { op, .. } => self.sys(op),
        }
        Ok(Flow::Next)
    }

    /// A MAS register move, or a TLB lookup that finds its entry or not
    /// as the world says (the emulator's model; what a real TLB finds is
    /// checked under QEMU's e6500, tests/e6500_qemu.rs).
    fn sys(&mut self, op: &SysOp) {
        use crate::isa::power::book3e::{mas_read, mas_write, tlb_lookup};
        match op {
            SysOp::MtSpr { spr, value } => {
                let v = self.eval(value);
                mas_write(&mut self.sprs, usize::from(spr.number), v);
            }
            SysOp::MfSpr { spr, local } => {
                self.locals[*local] = mas_read(&self.sprs, usize::from(spr.number));
            }
            // The MSR is the caller's: the emulator reads it as 0 too.
            SysOp::MfMsr { local } => self.locals[*local] = 0,
            SysOp::TlbSearch { ea } => {
                let (ea, found) = (self.eval(ea), self.tlb_found());
                tlb_lookup(&mut self.sprs, found, Some(ea));
            }
            SysOp::TlbRead => {
                let found = self.tlb_found();
                tlb_lookup(&mut self.sprs, found, None);
            }
            SysOp::Wrteei(_) | SysOp::Wrtee { .. } => {}
        }
    }

    /// Does the next TLB lookup find its entry (`World::tlb_found`)?
    fn tlb_found(&mut self) -> bool {
        let f = &self.world.tlb_found;
        let found = f.get(self.lookups).or(f.last()).copied().unwrap_or(false);
        self.lookups += 1;
        found
    }

    /// `each DEV { body }`: the body once per instance, that instance in
    /// scope.
    fn each(&mut self, dev: DevId, body: &[Stmt]) -> Result<Flow, InterpError> {
        for i in 0..self.world.count(self.prog, dev) {
            self.inst.insert(dev, i);
            if let Flow::Return(v) = self.block(body)? {
                self.inst.remove(&dev);
                return Ok(Flow::Return(v));
            }
        }
        self.inst.remove(&dev);
        Ok(Flow::Next)
    }

    /// `range`: the body with `local` at each `step` from `start` while
    /// bytes of `size` remain (-EINVAL for a zero step).
    fn range(
        &mut self,
        local: usize,
        start: u64,
        size: u64,
        step: u64,
        body: &[Stmt],
        fail_barrier: &crate::ir::ExitBarriers,
    ) -> Result<Flow, InterpError> {
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
            self.locals[local] = addr;
            if let Flow::Return(v) = self.block(body)? {
                return Ok(Flow::Return(v));
            }
            if rem <= step {
                break;
            }
            rem -= step;
            addr = addr.wrapping_add(step);
        }
        Ok(Flow::Next)
    }

    /// `while`: the body while `cond` holds, at most `limit` times (then
    /// fail with `fail`). `at` is the statement's address, for coverage.
    fn while_loop(
        &mut self,
        at: usize,
        cond: &Cond,
        body: &[Stmt],
        limit: u64,
        fail: i64,
        fail_barrier: &crate::ir::ExitBarriers,
    ) -> Result<Flow, InterpError> {
        let mut runs = 0u64;
        loop {
            self.tick()?;
            let more = self.holds(cond);
            // Coverage: a loop never entered, entered, and run out.
            if more {
                self.arms.insert((at, super::ARM_ENTERED));
            } else if runs == 0 {
                self.arms.insert((at, super::ARM_ZERO_TRIP));
            }
            if !more {
                break;
            }
            if runs == limit {
                self.arms.insert((at, super::ARM_LIMIT));
                self.fail_barrier(fail_barrier);
                return Ok(Flow::Return(fail));
            }
            runs += 1;
            if let Flow::Return(v) = self.block(body)? {
                return Ok(Flow::Return(v));
            }
        }
        Ok(Flow::Next)
    }
}
