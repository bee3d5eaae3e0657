//! One IR statement into LIR: `stmt` dispatches, one method per kind.

use super::*;
use crate::ir::{Access, Cond, Origin as IrOrigin};
use std::fmt::Write as _;

impl Builder<'_> {
    pub(super) fn stmt(&mut self, s: &Stmt) -> Result<(), Diag> {
        match s {
            Stmt::Each {
                dev, body, span, ..
            } => {
                self.set_origin(*span);
                self.origin.note = format!("each {}", self.prog.devices[*dev].name).into();
                self.each(*dev, body)?;
            }
            Stmt::Write { access, value } => self.write(access, value),
            Stmt::Poll { access, mask, wait } => self.device_poll(access, *mask, wait),
            Stmt::Read { access, local } => self.read(access, *local),
            Stmt::Barrier {
                name,
                origin,
                covers,
            } => self.barrier(name.kind(), origin, covers),
            Stmt::Range {
                local,
                start,
                size,
                step,
                body,
                span,
                fail_barrier,
            } => {
                self.set_origin(*span);
                self.range(*local, start, size, step, body, *fail_barrier)?;
            }
            Stmt::Invalidate {
                id,
                name,
                operands,
                span,
                ..
            } => self.invalidate(*id, name, operands, *span),
            Stmt::Mem { id, op, span } => {
                self.set_origin(*span);
                self.mem_op(*id, op)?;
            }
            Stmt::Sys { op, span } => self.sys(op, *span),
            Stmt::Assign { local, value, span } => self.assign(*local, value, *span),
            Stmt::While {
                cond,
                body,
                limit,
                fail,
                span,
                fail_barrier,
            } => {
                self.set_origin(*span);
                self.while_loop(cond, body, *limit, *fail, *fail_barrier)?;
            }
            Stmt::Cover { span, .. } => {
                return Err(Diag::new(
                    *span,
                    "internal error: cover reached lowering unexpanded",
                ));
            }
            Stmt::If {
                cond,
                then_,
                else_,
                why,
                ..
            } => match self.patched_cap(cond) {
                Some(cap) => self.patched_if(cap, then_, else_)?,
                None => self.if_else(cond, then_, else_, why.as_ref())?,
            },
            Stmt::Return { value, span } => {
                self.set_origin(*span);
                let op = self.operand(value);
                self.emit(Inst::Ret { value: op });
            }
        }
        Ok(())
    }

    /// The memory kind of a device register access.
    fn device_kind(access: &Access) -> MemKind {
        MemKind::Device {
            dev: access.dev,
            reg: access.reg,
            op: access.id,
        }
    }

    /// A load of the register `access` names into `dst`, byte-reversed
    /// where the register's order is not the target's.
    fn device_load(&mut self, access: &Access) -> impl Fn(VReg) -> Inst {
        let dev = &self.prog.devices[access.dev];
        let reg = &dev.regs[access.reg];
        let (offset, width) = (reg.offset, reg.width);
        let swap = self.swap(dev, access.reg);
        let base = self.base_of(access.dev);
        let kind = Self::device_kind(access);
        let index = self.index_of(swap, offset);
        move |dst| Inst::Load {
            dst,
            base,
            offset,
            width,
            swap,
            kind,
            index,
        }
    }

    fn write(&mut self, access: &Access, value: &Expr) {
        let v = self.expr(value);
        self.set_origin(access.span);
        let dev = &self.prog.devices[access.dev];
        let base = self.base_of(access.dev);
        let swap = self.swap(dev, access.reg);
        let reg = &dev.regs[access.reg];
        let (offset, width) = (reg.offset, reg.width);
        let index = self.index_of(swap, offset);
        self.emit_op(
            access.id,
            Inst::Store {
                src: v,
                base,
                offset,
                width,
                swap,
                kind: Self::device_kind(access),
                index,
            },
        );
    }

    /// A bounded poll of a device register.
    fn device_poll(&mut self, access: &Access, mask: u64, wait: &crate::ir::Wait) {
        self.set_origin(access.span);
        let width = self.prog.devices[access.dev].regs[access.reg].width;
        let load = self.device_load(access);
        let full = crate::ir::expr::field_mask(0, width);
        // A run-time value is computed once, before the loop.
        let want = self.operand(&wait.value);
        let mask = (mask & full != full).then_some(mask);
        self.poll_loop(access.id, &load, mask, wait, want);
    }

    fn read(&mut self, access: &Access, local: usize) {
        self.set_origin(access.span);
        let load = self.device_load(access);
        // A fresh register per read: the local is only ever read (field
        // extraction), never assigned.
        let dst = self.vreg();
        self.emit_op(access.id, load(dst));
        self.locals.insert(local, dst);
    }

    fn barrier(&mut self, name: Barrier, origin: &IrOrigin, covers: &[usize]) {
        self.origin = match origin {
            IrOrigin::Spec(span) => Origin {
                line: Some(self.prog.line_of(*span)),
                note: "barrier from the spec".into(),
                op: None,
            },
            IrOrigin::Pass(p) => {
                // Which required orderings it serves (`explain` has the
                // rest): the first three, and how many more.
                let mut note = format!("placed by {p}");
                for (k, &e) in covers.iter().enumerate() {
                    if k == 3 {
                        let _ = write!(note, "; and {} more (see `explain`)", covers.len() - 3);
                        break;
                    }
                    if let Some(edge) = self.edges.get(e) {
                        note.push_str(if k == 0 { ": e" } else { "; e" });
                        let _ = write!(note, "{e} ");
                        self.op_note(&mut note, edge.from);
                        note.push_str(" -> ");
                        self.op_note(&mut note, edge.to);
                        let _ = write!(note, ", required by line {}", self.prog.line_of(edge.span));
                    }
                }
                Origin {
                    line: None,
                    note: note.into(),
                    op: None,
                }
            }
        };
        self.emit(Inst::Barrier { name });
    }

    /// `write npu.ava (line 34)` into `out`.
    fn op_note(&self, out: &mut String, op: crate::ir::OpId) {
        use super::OpWhat;
        if op == crate::ir::OpId::ENTRY {
            out.push_str("the caller's earlier stores");
            return;
        }
        if op == crate::ir::OpId::EXIT {
            out.push_str("the return");
            return;
        }
        let _ = match self.note_ops.get(&op) {
            Some(OpWhat::Reg(k, d, r, line)) => {
                let d = &self.prog.devices[*d];
                write!(out, "{k} {}.{} (line {line})", d.name, d.regs[*r].name)
            }
            Some(OpWhat::Store(line)) => write!(out, "store to normal memory (line {line})"),
            Some(OpWhat::Invalidate(n, line)) => write!(out, "`{n}` (line {line})"),
            None => write!(out, "op{}", op.0),
        };
    }

    fn invalidate(
        &mut self,
        id: crate::ir::OpId,
        name: &str,
        operands: &[Expr],
        span: crate::spec::diag::Span,
    ) {
        let ops: Vec<VReg> = operands.iter().map(|o| self.expr(o)).collect();
        self.set_origin(span);
        // Traces attribute the executed instruction to `id`, so `verify`
        // checks the orderings that end or start at it.
        self.emit_op(
            id,
            Inst::Invalidate {
                name: self.invalidations.get(name).clone(),
                operands: ops,
            },
        );
    }

    /// A MAS register move or TLB-entry instruction, in program order.
    fn sys(&mut self, op: &crate::ir::SysOp, span: crate::spec::diag::Span) {
        use crate::ir::SysOp;
        let (kind, src) = match op {
            SysOp::MtSpr { spr, value } => (SysKind::MtSpr(spr.number), Some(self.expr(value))),
            SysOp::MfSpr { spr, .. } => (SysKind::MfSpr(spr.number), None),
            SysOp::TlbSearch { ea } => (SysKind::TlbSearch, Some(self.expr(ea))),
            SysOp::TlbRead => (SysKind::TlbRead, None),
            SysOp::MfMsr { .. } => (SysKind::MfMsr, None),
            SysOp::Wrteei(on) => (SysKind::Wrteei(*on), None),
            SysOp::Wrtee { value } => (SysKind::Wrtee, Some(self.expr(value))),
        };
        self.set_origin(span);
        // A fresh register per read, as for a device register's.
        let dst = match op {
            SysOp::MfSpr { local, .. } | SysOp::MfMsr { local } => {
                let d = self.vreg();
                self.locals.insert(*local, d);
                Some(d)
            }
            _ => None,
        };
        self.emit(Inst::Sys { op: kind, src, dst });
    }

    /// A local is one virtual register from its `let` on; an assignment
    /// copies into it (expressions that read locals are never cached, so
    /// nothing stale survives it).
    fn assign(&mut self, local: usize, value: &Expr, span: crate::spec::diag::Span) {
        let v = self.operand(value);
        self.set_origin(span);
        let dst = match self.locals.get(&local) {
            Some(d) => *d,
            None => {
                let d = self.vreg();
                self.locals.insert(local, d);
                d
            }
        };
        match v {
            Operand::Imm(c) => self.emit(Inst::Imm { dst, value: c }),
            Operand::Reg(src) if src == dst => {}
            Operand::Reg(src) => self.emit(Inst::Copy { dst, src }),
        }
    }

    /// The statements of a branch arm, in their own value scope.
    fn arm(&mut self, body: &[Stmt], saved: usize) -> Result<(), Diag> {
        for st in body {
            self.hoist_values(st);
            self.stmt(st)?;
        }
        self.unscope(saved);
        Ok(())
    }

    /// A dispatch on a patched feature: the kernel patches the `nop` into
    /// a branch to the arm with the feature; unpatched code runs the arm
    /// without.
    fn patched_if(&mut self, cap: String, then_: &[Stmt], else_: &[Stmt]) -> Result<(), Diag> {
        let (on, end) = (self.label(), self.label());
        self.emit(Inst::FeatureJump { cap, target: on });
        let saved = self.scope();
        self.arm(else_, saved)?;
        self.emit(Inst::Jump(end));
        self.emit(Inst::Label(on));
        self.arm(then_, saved)?;
        self.emit(Inst::Label(end));
        Ok(())
    }

    fn if_else(
        &mut self,
        cond: &Cond,
        then_: &[Stmt],
        else_: &[Stmt],
        why: Option<&std::sync::Arc<str>>,
    ) -> Result<(), Diag> {
        // A pass's branch (a cover's wrap check, its threshold) has no
        // spec line: its compare says why it is there instead.
        let saved_origin = why.map(|w| {
            std::mem::replace(
                &mut self.origin,
                crate::lir::Origin {
                    line: None,
                    note: w.clone(),
                    op: None,
                },
            )
        });
        let (else_l, end) = (self.label(), self.label());
        // With no else arm the branch skips straight to the end.
        let skip = if else_.is_empty() { end } else { else_l };
        self.branch_unless(cond, skip);
        if let Some(o) = saved_origin {
            self.origin = o;
        }
        let saved = self.scope();
        self.arm(then_, saved)?;
        if !else_.is_empty() {
            self.emit(Inst::Jump(end));
            self.emit(Inst::Label(else_l));
            self.arm(else_, saved)?;
        }
        self.emit(Inst::Label(end));
        Ok(())
    }
}
