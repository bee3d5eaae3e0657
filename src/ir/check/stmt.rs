//! Statements: each kind checked by a method of its own.

use super::seq::{stmt_span, too_wide, Place, SeqCx};
use super::{DEFAULT_POLL_FAIL, DEFAULT_WHILE_FAIL};
use crate::ir::expr::{field_mask, Expr};
use crate::ir::*;
use crate::spec::ast;
use crate::spec::diag::Diag;

impl SeqCx<'_> {
    pub(super) fn stmt(&mut self, s: &ast::Stmt) -> Result<Stmt, Diag> {
        self.allowed_in_cover(s)?;
        self.started |= !matches!(s, ast::Stmt::Assume { .. } | ast::Stmt::Order { .. });
        Ok(match s {
            // Rewritten by `spec::queue` before checking.
            ast::Stmt::Enqueue { span, .. }
            | ast::Stmt::Issue { span, .. }
            | ast::Stmt::Wait { span, .. } => {
                return Err(Diag::new(*span, "queue statement was not rewritten"))
            }
            ast::Stmt::Acquire {
                mem,
                value,
                held,
                limit,
                fail,
                span,
            } => self.acquire(mem, value, held, limit, fail, span)?,
            ast::Stmt::Release {
                mem,
                value,
                cond,
                span,
            } => self.release(mem, value, cond, span)?,
            ast::Stmt::MemWrite { mem, value, span } => self.mem_write(mem, value, span)?,
            ast::Stmt::Range {
                var,
                start,
                size,
                step,
                body,
                span,
            } => self.range(var, start, size, step, body, span)?,
            ast::Stmt::Let { name, value, span } => self.let_(name, value, span)?,
            ast::Stmt::Assign { name, value, span } => self.assign(name, value, span)?,
            ast::Stmt::While {
                cond,
                limit,
                limit_span,
                fail,
                body,
                span,
            } => self.while_(cond, limit, limit_span, fail, body, span)?,
            ast::Stmt::Invalidate {
                name,
                operands,
                after,
                span,
            } => self.invalidate(name, operands, after, span)?,
            ast::Stmt::Sys {
                name,
                spr,
                operands,
                span,
            } => self.sys(name, spr.as_ref(), operands, *span)?,
            ast::Stmt::Cover {
                start,
                size,
                set,
                mode,
                mode_span,
                body,
                span,
            } => {
                let si = self.cover_set(set, *mode, *mode_span)?;
                self.cover(si, *mode, start, size, body, *span)?
            }
            ast::Stmt::If {
                cond,
                then_,
                else_,
                rare,
                span,
            } => self.if_(cond, then_, else_, rare, span)?,
            ast::Stmt::Order {
                before,
                after,
                span,
            } => self.order(before, after, span)?,
            ast::Stmt::Assume { cond, span } => self.assume(cond, span)?,
            ast::Stmt::Each { dev, body, span } => self.each(dev, body, span)?,
            ast::Stmt::Write {
                target,
                value,
                span,
            } => self.write(target, value, span)?,
            ast::Stmt::Poll {
                target,
                op,
                value,
                limit,
                fail,
                span,
            } => self.poll(target, op, value, limit, fail, span)?,
            ast::Stmt::Barrier { name, span } => Stmt::Barrier {
                name: BarrierName::Spelled(name.name.clone()),
                origin: Origin::Spec(*span),
                covers: Vec::new(),
            },
            ast::Stmt::Return { value, span } => self.return_(value, span)?,
        })
    }

    pub(super) fn range(
        &mut self,
        var: &ast::Ident,
        start: &ast::Expr,
        size: &ast::Expr,
        step: &ast::Expr,
        body: &[ast::Stmt],
        span: &Span,
    ) -> Result<Stmt, Diag> {
        if self.params.contains(&var.name) || self.scope.iter().any(|&l| self.locals[l] == var.name)
        {
            return Err(
                Diag::new(var.span, format!("`{}` is already a name here", var.name))
                    .label("shadows a parameter or loop variable"),
            );
        }
        let (start, size, step) = (self.expr(start, None)?, self.expr(size, None)?, {
            let st = self.expr(step, None)?;
            if st.as_const() == Some(0) {
                return Err(
                    Diag::new(step.span(), "a range step of 0 never advances").label("zero step")
                );
            }
            st
        });
        let local = self.locals.len();
        self.locals.push(var.name.clone());
        self.scope.push(local);
        let body = self.block(body)?;
        self.scope.pop();
        Ok(Stmt::Range {
            local,
            start,
            size,
            step,
            body,
            span: *span,
            fail_barrier: crate::ir::ExitBarriers::NONE,
        })
    }

    pub(super) fn let_(
        &mut self,
        name: &ast::Ident,
        value: &ast::Expr,
        span: &Span,
    ) -> Result<Stmt, Diag> {
        if self.params.contains(&name.name)
            || self.scope.iter().any(|&l| self.locals[l] == name.name)
        {
            return Err(
                Diag::new(name.span, format!("`{}` is already a name here", name.name))
                    .label("shadows a parameter, loop variable or local")
                    .help("choose another name, or assign the existing local: `NAME = VALUE`"),
            );
        }
        // The value first: `let x = x` reads no `x`.
        let v = self.expr(value, None)?;
        let local = self.locals.len();
        self.locals.push(name.name.clone());
        self.scope.push(local);
        self.lets.push(local);
        Ok(Stmt::Assign {
            local,
            value: v,
            span: *span,
        })
    }

    pub(super) fn assign(
        &mut self,
        name: &ast::Ident,
        value: &ast::Expr,
        span: &Span,
    ) -> Result<Stmt, Diag> {
        let local = self.assignable(name)?;
        let v = self.expr(value, None)?;
        Ok(Stmt::Assign {
            local,
            value: v,
            span: *span,
        })
    }

    pub(super) fn while_(
        &mut self,
        cond: &ast::Expr,
        limit: &u64,
        limit_span: &Span,
        fail: &Option<Box<ast::Expr>>,
        body: &[ast::Stmt],
        span: &Span,
    ) -> Result<Stmt, Diag> {
        if *limit == 0 || *limit > u64::from(u32::MAX) {
            return Err(
                Diag::new(*limit_span, "while limit must be between 1 and 4294967295")
                    .label("iterations"),
            );
        }
        let before = self.pending.len();
        let c = self.expr(cond, None)?;
        if self.pending.len() != before {
            let what = match self.pending.last() {
                Some(Stmt::Sys { .. }) => "`mfspr`/`mfmsr` reads",
                Some(Stmt::Read { .. }) => "register reads",
                _ => "memory reads",
            };
            return Err(Diag::new(
                cond.span(),
                format!("{what} are not allowed in a `while` condition"),
            )
            .label("read once, not on every test")
            .help("read it into a local before the loop and again at the end of the body: `let v = p[OFF]`, `v = p[OFF]`"));
        }
        let fail = match fail {
            None => DEFAULT_WHILE_FAIL,
            Some(e) => self.negative_code(e, "the code a `while` returns past its limit")?,
        };
        let body = self.block(body)?;
        Ok(Stmt::While {
            cond: Cond::of(c),
            body,
            limit: *limit,
            fail,
            span: *span,
            fail_barrier: crate::ir::ExitBarriers::NONE,
        })
    }

    pub(super) fn invalidate(
        &mut self,
        name: &ast::Ident,
        operands: &[ast::Expr],
        after: &Option<Span>,
        span: &Span,
    ) -> Result<Stmt, Diag> {
        let ops = operands
            .iter()
            .map(|o| self.expr(o, None))
            .collect::<Result<Vec<_>, _>>()?;
        let spans: Vec<Span> = operands.iter().map(|o| o.span()).collect();
        let (name, ops) = crate::ir::insn_imm::fold(&name.name, ops, &spans, *span)?;
        Ok(Stmt::Invalidate {
            id: self.op_id(),
            name,
            operands: ops,
            after: *after,
            span: *span,
        })
    }

    /// `mtspr SPR, VALUE`, `tlbsx EA`, `tlbre`.
    fn sys(
        &mut self,
        name: &ast::Ident,
        spr: Option<&ast::Ident>,
        operands: &[ast::Expr],
        span: Span,
    ) -> Result<Stmt, Diag> {
        if !self.in_cover.is_empty() {
            return Err(Diag::new(
                span,
                format!("`{}` is not allowed in a `cover` body", name.name),
            )
            .label("inside a cover"));
        }
        // Each target on the `target` line must have the MAS registers.
        let probe = |cx: &Self| cx.book3e_insn(name);
        let op = match (name.name.as_str(), spr, operands) {
            ("mtspr", Some(r), [v]) => SysOp::MtSpr {
                spr: self.spr(r)?,
                value: self.expr(v, None)?,
            },
            ("tlbsx", None, [ea]) => {
                probe(self)?;
                SysOp::TlbSearch {
                    ea: self.expr(ea, None)?,
                }
            }
            ("tlbre", None, []) => {
                probe(self)?;
                SysOp::TlbRead
            }
            ("wrteei", None, [v]) => {
                probe(self)?;
                match self.expr(v, None)?.as_const() {
                    Some(b @ (0 | 1)) => SysOp::Wrteei(b == 1),
                    _ => {
                        return Err(Diag::new(v.span(), "`wrteei` takes 0 or 1")
                            .label("not 0 or 1")
                            .help("`wrteei 0` masks external interrupts, `wrteei 1` unmasks them; `wrtee SAVED` restores a saved MSR's EE"))
                    }
                }
            }
            ("wrtee", None, [v]) => {
                probe(self)?;
                SysOp::Wrtee {
                    value: self.expr(v, None)?,
                }
            }
            _ => return Err(Diag::new(span, format!("malformed `{}`", name.name)).label(
                "expected `mtspr SPR, VALUE`, `tlbsx EA`, `tlbre`, `wrteei 0|1` or `wrtee VALUE`",
            )),
        };
        Ok(Stmt::Sys { op, span })
    }

    /// `name` (`tlbsx`, `wrteei`, ...) needs Book III-E: the MAS registers
    /// on every target of the spec.
    pub(super) fn book3e_insn(&self, name: &ast::Ident) -> Result<(), Diag> {
        let probe = ast::Ident {
            name: "MAS0".into(),
            span: name.span,
        };
        self.spr(&probe).map(|_| ()).map_err(|d| {
            Diag::new(
                name.span,
                format!(
                    "`{}` is a Book III-E instruction (e500mc, e5500, e6500)",
                    name.name
                ),
            )
            .label("not on this spec's targets")
            .help(format!(
                "it needs `machine e6500` and only power64/power64le targets ({})",
                d.message
            ))
        })
    }

    /// The special-purpose register `r` names, on every target of the
    /// spec under its `machine`.
    pub(super) fn spr(&self, r: &ast::Ident) -> Result<crate::ir::Spr, Diag> {
        let mut found = None;
        for (t, _) in self.targets {
            let Some(isa) = crate::ir::isa::by_name(t) else {
                continue;
            };
            match isa.spr(self.machine, &r.name) {
                Ok(s) => found = Some(s),
                Err(e) => {
                    return Err(Diag::new(r.span, e.to_string()).label("no such register here"))
                }
            }
        }
        found.ok_or_else(|| {
            Diag::new(r.span, format!("`{}`: the spec has no target", r.name))
                .label("no target to read it on")
        })
    }

    pub(super) fn if_(
        &mut self,
        cond: &ast::Expr,
        then_: &[ast::Stmt],
        else_: &[ast::Stmt],
        rare: &bool,
        span: &Span,
    ) -> Result<Stmt, Diag> {
        if !self.in_cover.is_empty() {
            return Err(Diag::new(*span, "`if` is not allowed in a `cover` body")
                .label("inside a cover")
                .help("put the `if` around the `cover`, or choose with the cover's mode"));
        }
        let c = Cond::of(self.expr(cond, None)?);
        let tested = crate::ir::feature::cond_feature(&c, self.feature_word);
        self.arms.push(tested);
        let then_ = self.block(then_);
        self.arms.pop();
        let then_ = then_?;
        self.arms.push(tested.map(|(i, on)| (i, !on)));
        let else_ = self.block(else_);
        self.arms.pop();
        let else_ = else_?;
        Ok(Stmt::If {
            rare: *rare,
            span: Some(*span),
            why: None,
            cond: c,
            then_,
            else_,
        })
    }

    pub(super) fn order(
        &mut self,
        before: &ast::Ident,
        after: &ast::Ident,
        span: &Span,
    ) -> Result<Stmt, Diag> {
        let ok = matches!(
            (before.name.as_str(), after.name.as_str()),
            ("stores", "invalidates") | ("invalidates", "return") | ("invalidates", "invalidates")
        );
        if !ok {
            return Err(Diag::new(*span, "unknown ordering")
                .label("not supported")
                .help("write `order stores before invalidates`, `order invalidates before return` or `order invalidates before invalidates`"));
        }
        // An order in an `if feature X` arm belongs to the CPUs of that
        // arm; in a run-time `if` it would have to hold on some paths and
        // not others, which an ordering of the whole sequence cannot say.
        if self.arms.iter().any(Option::is_none) {
            return Err(Diag::new(*span, "`order` inside a run-time `if`")
                .label("applies to the whole sequence")
                .help("write it at the top of the sequence, or inside `if feature NAME` to order only the CPUs with (or without) that feature"));
        }
        self.orders
            .push((before.name.clone(), after.name.clone(), *span));
        self.order_guards
            .push(self.arms.iter().flatten().copied().collect());
        // Orders are declarations: they leave no statement behind.
        Ok(Stmt::Barrier {
            name: BarrierName::Spelled(String::new()),
            origin: Origin::Spec(*span),
            covers: Vec::new(),
        })
    }

    pub(super) fn each(
        &mut self,
        dev: &ast::Ident,
        body: &[ast::Stmt],
        span: &Span,
    ) -> Result<Stmt, Diag> {
        let id = self.device(dev)?;
        if self.in_each.contains(&id) {
            return Err(Diag::new(
                dev.span,
                format!("already inside `each {}`", dev.name),
            ));
        }
        self.in_each.push(id);
        let body = self.block(body)?;
        self.in_each.pop();
        self.used.push(id);
        let group = *self.next_group;
        *self.next_group += 1;
        Ok(Stmt::Each {
            dev: id,
            body,
            span: *span,
            group,
        })
    }

    pub(super) fn write(
        &mut self,
        target: &ast::Path,
        value: &ast::Expr,
        span: &Span,
    ) -> Result<Stmt, Diag> {
        let (dev, reg, field) = self.path(target)?;
        if field.is_some() {
            return Err(Diag::new(target.span, "a write sets the whole register")
                .label("field write")
                .help("write `dev.reg = { field: value }`; fields not named are written as 0"));
        }
        let width = self.devices[dev].regs[reg].width;
        let value = self.expr(value, Some((dev, reg)))?;
        if let Some(c) = too_wide(&value, width) {
            return Err(Diag::new(
                *span,
                format!("value {c:#x} does not fit the {width}-bit register"),
            ));
        }
        Ok(Stmt::Write {
            access: Access {
                id: self.op_id(),
                dev,
                reg,
                span: *span,
            },
            value,
        })
    }

    pub(super) fn poll(
        &mut self,
        target: &ast::PollTarget,
        op: &ast::CmpOp,
        value: &ast::Expr,
        limit: &Option<(u64, Span)>,
        fail: &Option<Box<ast::Expr>>,
        span: &Span,
    ) -> Result<Stmt, Diag> {
        let Some((limit, lspan)) = *limit else {
            return Err(Diag::new(*span, "unbounded poll")
                .label("no `limit`")
                .help("a poll must give up: add `limit N` (number of reads) and optionally `else return -CODE`"));
        };
        if limit == 0 || limit > u64::from(u32::MAX) {
            return Err(Diag::new(
                lspan,
                "poll limit must be between 1 and 4294967295",
            ));
        }
        let fail = match fail {
            None => DEFAULT_POLL_FAIL,
            Some(e) => {
                let v = self.expr(e, None)?;
                match v.as_const().map(|c| c as i64) {
                    Some(c) if c < 0 => c,
                    _ => {
                        return Err(Diag::new(
                            e.span(),
                            "a poll's failure code must be a negative constant",
                        )
                        .label("not a negative constant"))
                    }
                }
            }
        };
        let op = match op {
            ast::CmpOp::Eq => PollOp::Eq,
            ast::CmpOp::Ne => PollOp::Ne,
        };
        let wait = |value| crate::ir::Wait {
            op,
            value,
            limit,
            fail,
            fail_barrier: crate::ir::ExitBarriers::NONE,
        };
        let target = match target {
            ast::PollTarget::Reg(p) => p,
            ast::PollTarget::Mem(m) => {
                if !self.in_cover.is_empty() {
                    return Err(Diag::new(
                        *span,
                        "memory reads are not allowed in a `cover` body",
                    ));
                }
                let (ptr, width, index) = match self.place(m)? {
                    Place::Fixed(r) => (r.ptr, r.width, Expr::Const(r.offset)),
                    Place::At { ptr, width, index } => (ptr, width, index),
                };
                let v = self.poll_value(value, width, "element")?;
                return Ok(Stmt::Mem {
                    id: self.op_id(),
                    op: MemOp::Poll {
                        ptr,
                        width,
                        index,
                        wait: wait(Expr::insert(v, 0, width)),
                    },
                    span: *span,
                });
            }
        };
        let (dev, reg, field) = self.path(target)?;
        let d = &self.devices[dev];
        let (mask, shift, width) = match field {
            Some(f) => (d.fields[f].mask(), d.fields[f].shift, d.fields[f].width),
            None => (field_mask(0, d.regs[reg].width), 0, d.regs[reg].width),
        };
        let v = self.poll_value(value, width, "field")?;
        Ok(Stmt::Poll {
            access: Access {
                id: self.op_id(),
                dev,
                reg,
                span: *span,
            },
            mask,
            // A run-time value is truncated to the field, as the
            // masked register it is compared with.
            wait: wait(Expr::insert(v, shift, width)),
        })
    }

    /// A poll's right side: evaluated once, before the loop, so a memory
    /// read there would not be read again on each test (the trap a
    /// `while` condition rejects too). A constant must fit the `width`
    /// bits of the `unit` read.
    fn poll_value(&mut self, value: &ast::Expr, width: u32, unit: &str) -> Result<Expr, Diag> {
        let before = self.pending.len();
        let v = self.expr(value, None)?;
        if self.pending.len() != before {
            return Err(Diag::new(
                value.span(),
                "memory reads are not allowed on the right side of a `poll`",
            )
            .label("read once before the loop, not on every read of the register")
            .help("read it into a local first (`let v = p[OFF]`) if one read is meant"));
        }
        if let Some(c) = too_wide(&v, width) {
            return Err(Diag::new(
                value.span(),
                format!("{c:#x} does not fit the {width}-bit {unit}"),
            )
            .label("too large"));
        }
        Ok(v)
    }

    pub(super) fn return_(&mut self, value: &ast::Expr, span: &Span) -> Result<Stmt, Diag> {
        if self.void {
            return Err(Diag::new(*span, "a `-> void` sequence returns no value")
                .help("remove `-> void` to return `long`"));
        }
        let v = self.expr(value, None)?;
        Ok(Stmt::Return {
            value: v,
            span: *span,
        })
    }

    /// A `cover` body is copied once per granule and run once per
    /// operation: no state of its own, no locks, no memory stores.
    fn allowed_in_cover(&self, s: &ast::Stmt) -> Result<(), Diag> {
        if !self.in_cover.is_empty()
            && matches!(
                s,
                ast::Stmt::Let { .. } | ast::Stmt::Assign { .. } | ast::Stmt::While { .. }
            )
        {
            // The keyword, not the whole loop: one line to point at.
            let at = match s {
                ast::Stmt::While { span, .. } => Span::new(span.offset, "while".len()),
                _ => stmt_span(s),
            };
            return Err(Diag::new(
                at,
                "locals and `while` are not allowed in a `cover` body",
            )
            .label("inside a cover")
            .help("the body is copied once per granule and run once per operation: compute the value before the `cover`"));
        }
        if !self.in_cover.is_empty()
            && matches!(
                s,
                ast::Stmt::Acquire { .. } | ast::Stmt::Release { .. } | ast::Stmt::MemWrite { .. }
            )
        {
            return Err(Diag::new(
                stmt_span(s),
                "locks and memory stores are not allowed in a `cover` body",
            ));
        }
        Ok(())
    }

    /// The set a `cover` chooses from: declared, of instructions or
    /// register writes (not queue commands), with sizes the sequence knows
    /// and the entries its mode needs.
    fn cover_set(
        &self,
        set: &ast::Ident,
        mode: ast::CoverMode,
        mode_span: Span,
    ) -> Result<usize, Diag> {
        let si = self
            .granules
            .iter()
            .position(|g| g.name == set.name)
            .ok_or_else(|| Diag::undeclared(set.span, "granule set", &set.name))?;
        let g = &self.granules[si];
        if g.entries
            .iter()
            .any(|e| matches!(e.via, Some(Via::Record(_))))
        {
            return Err(Diag::new(
                set.span,
                format!(
                    "`{}` is a set of queue commands: a `cover` cannot choose among them",
                    set.name
                ),
            )
            .label("queue granule set")
            .help(format!(
                "branch on `threshold({})` and `enqueue` the commands in a `range` loop",
                set.name
            )));
        }
        for e in &g.entries {
            if let GSize::Param(p) = &e.size {
                if !self.params.contains(p) {
                    return Err(Diag::new(
                        e.span,
                        format!(
                            "granule size `{p}` is not a parameter of `{}`",
                            self.seq_name
                        ),
                    )
                    .related(set.span, "used here"));
                }
            }
            if let Some(p) = e
                .param_sets
                .iter()
                .find(|p| !self.params.contains(&p.param))
            {
                return Err(Diag::new(
                    p.span,
                    format!(
                        "granule field setting `{}` is not a parameter of `{}`",
                        p.param, self.seq_name
                    ),
                )
                .label("not a parameter")
                .related(set.span, "used here"));
            }
        }
        let has_all = g.entries.iter().any(|e| e.size == GSize::All);
        let sized = g
            .entries
            .iter()
            .filter(|e| matches!(e.size, GSize::Bytes(_) | GSize::Param(_)))
            .count();
        let has_range = g.entries.iter().any(|e| e.size == GSize::Range);
        let need = match mode {
            ast::CoverMode::Single => {
                if g.entries.iter().any(|e| matches!(e.size, GSize::Param(_))) {
                    Some("`single` needs constant sizes")
                } else if !has_all {
                    Some("`single` needs an `all` entry for ranges no size covers")
                } else {
                    None
                }
            }
            ast::CoverMode::Exact => (sized == 0).then_some("`exact` needs a sized entry"),
            ast::CoverMode::Range => {
                if sized == 0 || !has_range || !has_all {
                    Some("`range` needs a sized entry, a `range` entry and `all`")
                } else {
                    None
                }
            }
            ast::CoverMode::Auto => {
                if sized == 0 || !has_all {
                    Some("`auto` chooses between a loop of sized ops and `all`: it needs both")
                } else {
                    None
                }
            }
        };
        if let Some(msg) = need {
            return Err(Diag::new(mode_span, msg).related(g.span, "granule set"));
        }
        Ok(si)
    }

    fn cover(
        &mut self,
        si: usize,
        mode: ast::CoverMode,
        start: &ast::Expr,
        size: &ast::Expr,
        body: &[ast::Stmt],
        span: Span,
    ) -> Result<Stmt, Diag> {
        let g = &self.granules[si];
        let (start, size) = (self.expr(start, None)?, self.expr(size, None)?);
        self.in_cover.push(si);
        let body = self.block(body)?;
        self.in_cover.pop();
        crate::ir::cover_map::check(self.devices, g, &body)?;
        Ok(Stmt::Cover {
            set: si,
            mode,
            start,
            size,
            body,
            span,
            threshold: crate::ir::thresholds::threshold_name(&self.seq_name, &g.name),
        })
    }
}
