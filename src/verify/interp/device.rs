//! Device registers and invalidate instructions: stores, loads and polls
//! of a register of the instance in scope (loads as the world scripts
//! them), and `invalidate`s; either may be dead for the cover operation
//! being run.

use super::{Access, InterpError, Machine};
use crate::ir;
use crate::ir::expr::{field_mask, Expr};
use crate::ir::{DevId, GSize, OpId, PollOp, RegId, Via};

impl Machine<'_> {
    /// A write the cover operation being run drops (its register is dead).
    pub(super) fn dead_write(&self, access: &ir::Access) -> bool {
        self.cover.as_ref().is_some_and(|c| {
            c.dead_regs.contains(&access.reg) && c.dev.is_none_or(|d| d == access.dev)
        })
    }

    /// An invalidate the cover operation being run drops.
    pub(super) fn dead_insn(&self, name: &str) -> bool {
        self.cover
            .as_ref()
            .is_some_and(|c| c.dead_insns.iter().any(|n| n == name))
    }

    /// The instance of `dev` in scope (0 outside an `each` over it).
    fn inst_of(&self, dev: DevId) -> u64 {
        self.inst.get(&dev).copied().unwrap_or(0)
    }

    /// A register's value: the world's script of reads (per instance,
    /// the last value repeats), else the value last stored.
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

    /// A store to a register (a queue's producer register first lets the
    /// simulated consumer take the new entries).
    pub(super) fn write_reg(
        &mut self,
        access: &ir::Access,
        value: &Expr,
    ) -> Result<(), InterpError> {
        let inst = self.inst_of(access.dev);
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
        Ok(())
    }

    /// One load of a register of instance `inst`, counted as a step.
    fn load_reg(&mut self, access: &ir::Access, inst: u64) -> Result<u64, InterpError> {
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
        Ok(v)
    }

    /// `local = dev.reg`.
    pub(super) fn read_reg(
        &mut self,
        access: &ir::Access,
        local: usize,
    ) -> Result<(), InterpError> {
        let inst = self.inst_of(access.dev);
        let v = self.load_reg(access, inst)?;
        self.locals[local] = v;
        Ok(())
    }

    /// Load the register up to `limit` times until its masked value
    /// compares with `want` as `op` asks; whether it did.
    pub(super) fn poll_reg(
        &mut self,
        access: &ir::Access,
        mask: u64,
        op: PollOp,
        want: u64,
        limit: u64,
    ) -> Result<bool, InterpError> {
        let inst = self.inst_of(access.dev);
        for _ in 0..limit {
            let v = self.load_reg(access, inst)?;
            let hit = (v & mask) == want;
            if hit == (op == PollOp::Eq) {
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// An `invalidate`; outside a cover, one through some set's flush-all
    /// counts as a loose flush.
    pub(super) fn invalidate(&mut self, id: OpId, name: &str, operands: &[Expr]) {
        let ops = operands.iter().map(|o| self.eval(o)).collect();
        if self.cover.is_none() && self.is_flush_all(name) {
            self.loose_flushes += 1;
        }
        self.out.push((
            id,
            Access::Invalidate {
                name: name.to_string(),
                operands: ops,
            },
        ));
    }

    /// Is `name` the instruction of some set's `all` granule?
    fn is_flush_all(&self, name: &str) -> bool {
        self.prog.granules.iter().any(|g| {
            g.entries
                .iter()
                .any(|e| e.size == GSize::All && matches!(&e.via, Some(Via::Insn(n)) if n == name))
        })
    }
}
