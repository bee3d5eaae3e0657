//! The context a sequence is checked in: names in scope, devices used,
//! pending reads, and the lookups statements and expressions share.

use super::device::{closest, find_reg, Index};
use crate::ir::expr::{Binding, Expr};
use crate::ir::*;
use crate::spec::ast;
use crate::spec::diag::Diag;

pub(super) struct SeqCx<'a> {
    pub(super) machine: crate::ir::Machine,
    pub(super) targets: &'a [(String, crate::spec::diag::Span)],
    pub(super) index: &'a Index<'a>,
    pub(super) devices: &'a [Device],
    pub(super) granules: &'a [GranuleSet],
    /// `threshold NAME = V` of the spec.
    pub(super) thresholds: &'a [(String, u64)],
    pub(super) seq_name: String,
    /// Granule sets of the `cover`s we are inside.
    pub(super) in_cover: Vec<usize>,
    pub(super) params: &'a [String],
    /// Loop variables: all declared (by index) and those in scope.
    pub(super) locals: Vec<String>,
    pub(super) scope: Vec<usize>,
    /// `order stores before invalidates`, `order invalidates before return`.
    pub(super) orders: Vec<(String, String, crate::spec::diag::Span)>,
    /// The `if feature` arms each order sits in (see `Seq::order_guards`).
    pub(super) order_guards: Vec<Vec<(usize, bool)>>,
    /// The `if` arms being checked, innermost last: the feature and the
    /// value it has in that arm for a feature test, None for a run-time
    /// condition.
    pub(super) arms: Vec<Option<(usize, bool)>>,
    pub(super) in_each: Vec<DevId>,
    pub(super) used: Vec<DevId>,
    pub(super) next_op: &'a mut u32,
    pub(super) next_group: &'a mut u32,
    /// Element width of each pointer parameter.
    pub(super) ptrs: &'a [Option<u32>],
    /// Loads of `p[OFF]` read by the statement being checked: they are
    /// placed right before it (one per read, as written).
    pub(super) pending: Vec<Stmt>,
    /// The `acquire ... held` status local.
    pub(super) status: Option<usize>,
    pub(super) void: bool,
    pub(super) features: &'a [Feature],
    /// Set at the first `feature NAME`: the index the feature word
    /// parameter will have (after the declared ones).
    pub(super) feature_word: Option<usize>,
    /// `let` locals (assignable; range variables and the status are not).
    pub(super) lets: Vec<usize>,
    /// Every `let` of the sequence by name, wherever it is: to tell "used
    /// before its `let`" from an unknown name.
    pub(super) declared: Vec<(String, Span)>,
    /// `assume COND`s, in order.
    pub(super) assumes: Vec<crate::ir::facts::Assume>,
    /// A statement other than `assume` or `order` was checked: an
    /// `assume` after it is not at the top of the sequence.
    pub(super) started: bool,
}

impl SeqCx<'_> {
    /// `threshold(SET)`: the set must have a granule to loop with, a
    /// flush-all, both through instructions, and costs or a pinned value.
    pub(super) fn threshold_of(&self, args: &[ast::Expr], span: Span) -> Result<Expr, Diag> {
        let [ast::Expr::Name(set)] = args else {
            return Err(Diag::new(span, "`threshold` takes one granule set name")
                .label("e.g. `threshold(radix64k)`"));
        };
        let Some(i) = self.granules.iter().position(|g| g.name == set.name) else {
            return Err(
                Diag::new(set.span, format!("no granule set `{}`", set.name))
                    .label("not a granule set"),
            );
        };
        let g = &self.granules[i];
        let insn = |e: Option<&Granule>| {
            e.is_some_and(|e| matches!(e.via, Some(Via::Insn(_) | Via::Record(_))))
        };
        if !insn(crate::ir::loop_entry(g)) || !insn(crate::ir::all_entry(g)) {
            return Err(Diag::new(
                set.span,
                format!("`threshold({})` needs a sized granule and an `all` granule, each `via` an instruction", set.name),
            )
            .label("no such pair in this set")
            .related(g.span, "granule set"));
        }
        let name = crate::ir::thresholds::threshold_name(&self.seq_name, &g.name);
        let pinned = self.thresholds.iter().any(|(n, _)| *n == name);
        if g.costs.invalidate == 0 && !pinned {
            return Err(Diag::new(
                span,
                format!("`threshold({})` needs costs to derive it from", set.name),
            )
            .label("no `cost invalidate` in the set")
            .related(g.span, "granule set")
            .help(format!("state `cost invalidate N ns` and `cost all N ns` in the set, or pin `threshold {name} = N`")));
        }
        Ok(Expr::Binding(Binding::Threshold(i)))
    }

    pub(super) fn block(&mut self, body: &[ast::Stmt]) -> Result<Vec<Stmt>, Diag> {
        let mark = self.scope.len();
        let r = self.block_inner(body);
        // A `let` is visible to the end of its block.
        let lets = &self.lets;
        let mut i = mark;
        while i < self.scope.len() {
            if lets.contains(&self.scope[i]) {
                self.scope.remove(i);
            } else {
                i += 1;
            }
        }
        r
    }

    pub(super) fn block_inner(&mut self, body: &[ast::Stmt]) -> Result<Vec<Stmt>, Diag> {
        let mut out = Vec::new();
        for (i, s) in body.iter().enumerate() {
            if always_returns(s) {
                if let Some(next) = body.get(i + 1) {
                    let what = if matches!(s, ast::Stmt::Return { .. }) {
                        "statement after `return` is never executed"
                    } else {
                        "statement after an `if` whose arms all return is never executed"
                    };
                    return Err(Diag::new(stmt_span(next), what)
                        .label("unreachable")
                        .related(stmt_span(s), "every path returns here"));
                }
            }
            let saved = std::mem::take(&mut self.pending);
            let st = self.stmt(s)?;
            let loads = std::mem::replace(&mut self.pending, saved);
            out.extend(loads);
            if matches!(&st, Stmt::Barrier { name, .. } if name.as_str().is_empty()) {
                continue;
            }
            out.push(st);
        }
        out.shrink_to_fit();
        Ok(out)
    }

    pub(super) fn device(&self, name: &ast::Ident) -> Result<DevId, Diag> {
        self.index
            .devices
            .get(name.name.as_str())
            .copied()
            .ok_or_else(|| {
                let mut d = Diag::undeclared(name.span, "device", &name.name);
                if let Some(s) = closest(&name.name, self.devices.iter().map(|d| d.name.as_str())) {
                    d = d.help(format!("did you mean `{s}`?"));
                }
                d
            })
    }

    pub(super) fn op_id(&mut self) -> OpId {
        let id = OpId(*self.next_op);
        *self.next_op += 1;
        id
    }

    /// Resolve `dev.reg[.field]` where `dev` must be addressable here.
    pub(super) fn path(&mut self, p: &ast::Path) -> Result<(DevId, RegId, Option<FieldId>), Diag> {
        if p.parts.len() < 2 {
            return Err(Diag::new(p.span, "expected `device.register`").label("incomplete path"));
        }
        if p.parts.len() > 3 {
            return Err(Diag::new(
                p.span,
                "expected `device.register` or `device.register.field`",
            ));
        }
        let dev = self.device(&p.parts[0])?;
        let d = &self.devices[dev];
        if d.instances != Instances::Single && !self.in_each.contains(&dev) {
            return Err(Diag::new(
                p.parts[0].span,
                format!(
                    "device `{}` has several instances; access it inside `each {}`",
                    d.name, d.name
                ),
            )
            .label("which instance?"));
        }
        let reg = match self.index.regs[dev].get(p.parts[1].name.as_str()) {
            Some(&r) => r,
            None => find_reg(&d.regs, &d.name, &p.parts[1])?,
        };
        let field = match p.parts.get(2) {
            None => None,
            Some(f) => Some(self.field(dev, reg, f)?),
        };
        self.used.push(dev);
        Ok((dev, reg, field))
    }

    pub(super) fn field(&self, dev: DevId, reg: RegId, f: &ast::Ident) -> Result<FieldId, Diag> {
        let d = &self.devices[dev];
        self.index.fields[dev]
            .get(&(reg, f.name.as_str()))
            .copied()
            .ok_or_else(|| {
                let mut diag = Diag::new(
                    f.span,
                    format!(
                        "register `{}.{}` has no field `{}`",
                        d.name, d.regs[reg].name, f.name
                    ),
                )
                .label("unknown field");
                let names = d
                    .fields
                    .iter()
                    .filter(|x| x.reg == reg)
                    .map(|x| x.name.as_str());
                if let Some(s) = closest(&f.name, names) {
                    diag = diag.help(format!("did you mean `{s}`?"));
                }
                diag
            })
    }

    /// Resolve `p[OFF]` to a memory reference.
    /// A lock word or other location at a constant offset.
    pub(super) fn mem_ref(&self, e: &ast::Expr) -> Result<MemRef, Diag> {
        let ast::Expr::Mem {
            ptr,
            offset,
            index,
            span,
        } = e
        else {
            return Err(Diag::new(
                e.span(),
                "expected a pointer parameter (`p` or `p[OFFSET]`)",
            ));
        };
        if let Some(ix) = index {
            return Err(Diag::new(ix.span(), "a lock word needs a constant offset")
                .label("computed at run time"));
        }
        let (i, width) = self.ptr_param(ptr)?;
        self.fixed(i, width, *offset, *span)
    }

    /// A location at a constant or a run-time byte offset.
    pub(super) fn place(&mut self, e: &ast::Expr) -> Result<Place, Diag> {
        let ast::Expr::Mem {
            ptr,
            index: Some(ix),
            span,
            ..
        } = e
        else {
            return Ok(Place::Fixed(self.mem_ref(e)?));
        };
        let (i, width) = self.ptr_param(ptr)?;
        let v = self.expr(ix, None)?;
        Ok(match v.as_const() {
            Some(c) => Place::Fixed(self.fixed(i, width, c, *span)?),
            None => Place::At {
                ptr: i,
                width,
                index: v,
            },
        })
    }

    /// Pointer parameter `ptr`: its index and element width.
    pub(super) fn ptr_param(&self, ptr: &ast::Ident) -> Result<(usize, u32), Diag> {
        let i = self
            .params
            .iter()
            .position(|p| p == &ptr.name)
            .ok_or_else(|| {
                Diag::new(ptr.span, format!("unknown name `{}`", ptr.name)).label("not a parameter")
            })?;
        let Some(width) = self.ptrs[i] else {
            return Err(Diag::new(
                ptr.span,
                format!("`{}` is an integer, not a pointer", ptr.name),
            )
            .help(format!(
                "declare it as `{}: ptr u8` (u16, u32, u64)",
                ptr.name
            )));
        };
        Ok((i, width))
    }

    pub(super) fn fixed(
        &self,
        i: usize,
        width: u32,
        offset: u64,
        span: Span,
    ) -> Result<MemRef, Diag> {
        let offset = &offset;
        let span = &span;
        if !offset.is_multiple_of(u64::from(width / 8)) || *offset > 0x7ff0 {
            return Err(Diag::new(
                *span,
                format!("offset {offset:#x} is not aligned to the {width}-bit element (or beyond 0x7ff0)"),
            ));
        }
        Ok(MemRef {
            ptr: i,
            offset: *offset,
            width,
        })
    }

    pub(super) fn lock_value(&mut self, v: &ast::LockValue, width: u32) -> Result<LockValue, Diag> {
        Ok(match v {
            ast::LockValue::Bit(b, s) => {
                if *b >= u64::from(width) {
                    return Err(Diag::new(
                        *s,
                        format!("bit {b} is outside the {width}-bit lock"),
                    ));
                }
                LockValue::Bit(*b as u32)
            }
            ast::LockValue::Owner(e) => {
                let before = self.pending.len();
                let v = self.expr(e, None)?;
                if self.pending.len() != before {
                    return Err(Diag::new(e.span(), "a lock value cannot read memory")
                        .help("read it into a store first, or pass it as a parameter"));
                }
                if let Some(c) = too_wide(&v, width) {
                    return Err(Diag::new(
                        e.span(),
                        format!("{c:#x} does not fit the {width}-bit lock"),
                    ));
                }
                LockValue::Owner(v)
            }
        })
    }

    pub(super) fn negative_code(&mut self, e: &ast::Expr, what: &str) -> Result<i64, Diag> {
        let v = self.expr(e, None)?;
        match v.as_const().map(|c| c as i64) {
            Some(c) if c < 0 => Ok(c),
            _ => Err(
                Diag::new(e.span(), format!("{what} must be a negative constant"))
                    .label("not a negative constant"),
            ),
        }
    }

    /// A `let` local in scope by that name, else why not.
    pub(super) fn assignable(&self, name: &ast::Ident) -> Result<usize, Diag> {
        let found = self
            .scope
            .iter()
            .rev()
            .find(|&&l| self.locals[l] == name.name)
            .copied();
        match found {
            Some(l) if self.lets.contains(&l) => Ok(l),
            Some(_) => Err(
                Diag::new(name.span, format!("cannot assign to `{}`", name.name))
                    .label("a loop variable or lock status, not a `let` local")
                    .help("copy it into a local: `let v = ...`"),
            ),
            None if self.params.contains(&name.name) => Err(Diag::new(
                name.span,
                format!("cannot assign to parameter `{}`", name.name),
            )
            .label("parameters are read-only")
            .help(format!(
                "copy it into a local first: `let {0}_left = {0}`",
                name.name
            ))),
            None if self.index.devices.contains_key(name.name.as_str()) => Err(Diag::new(
                name.span,
                format!("`{}` is a device, not a local", name.name),
            )
            .label("write one of its registers")
            .help(format!("write `{}.REG = VALUE`", name.name))),
            None => Err(self.undefined(name)),
        }
    }

    /// An unknown name: unknown, or a `let` used outside its block or
    /// before it.
    pub(super) fn undefined(&self, n: &ast::Ident) -> Diag {
        if let Some((_, at)) = self.declared.iter().find(|(d, _)| *d == n.name) {
            return Diag::new(n.span, format!("`{}` is not defined here", n.name))
                .label("used before its `let`, or outside the block of its `let`")
                .related(*at, "declared here");
        }
        let mut d =
            Diag::new(n.span, format!("unknown name `{}`", n.name)).label("not a parameter");
        if let Some(s) = closest(&n.name, self.params.iter().map(String::as_str)) {
            d = d.help(format!("did you mean `{s}`?"));
        }
        d
    }
}

/// A normal-memory location: a constant offset, or one computed at run
/// time.
pub(super) enum Place {
    Fixed(MemRef),
    At { ptr: usize, width: u32, index: Expr },
}

impl Place {
    pub(super) fn width(&self) -> u32 {
        match self {
            Place::Fixed(m) => m.width,
            Place::At { width, .. } => *width,
        }
    }
}

/// Does every path through `s` end in a `return`? A `return`, or an
/// `if` with an `else` whose arms both do.
fn always_returns(s: &ast::Stmt) -> bool {
    match s {
        ast::Stmt::Return { .. } => true,
        ast::Stmt::If { then_, else_, .. } => {
            !else_.is_empty()
                && then_.iter().any(always_returns)
                && else_.iter().any(always_returns)
        }
        _ => false,
    }
}

/// `v`'s value when it is a constant too large for `width` bits (a
/// register, an element, a lock, a field).
pub(super) fn too_wide(v: &Expr, width: u32) -> Option<u64> {
    v.as_const().filter(|c| width < 64 && c >> width != 0)
}

pub(super) fn stmt_span(s: &ast::Stmt) -> crate::spec::diag::Span {
    match s {
        ast::Stmt::Each { span, .. }
        | ast::Stmt::Write { span, .. }
        | ast::Stmt::Poll { span, .. }
        | ast::Stmt::Barrier { span, .. }
        | ast::Stmt::Return { span, .. }
        | ast::Stmt::Range { span, .. }
        | ast::Stmt::Invalidate { span, .. }
        | ast::Stmt::Sys { span, .. }
        | ast::Stmt::Order { span, .. }
        | ast::Stmt::Assume { span, .. }
        | ast::Stmt::If { span, .. }
        | ast::Stmt::Acquire { span, .. }
        | ast::Stmt::Release { span, .. }
        | ast::Stmt::MemWrite { span, .. }
        | ast::Stmt::Cover { span, .. }
        | ast::Stmt::Let { span, .. }
        | ast::Stmt::Assign { span, .. }
        | ast::Stmt::While { span, .. }
        | ast::Stmt::Enqueue { span, .. }
        | ast::Stmt::Issue { span, .. }
        | ast::Stmt::Wait { span, .. } => *span,
    }
}

/// Every `let` in a body, nested blocks included, in source order.
pub(super) fn let_decls(body: &[ast::Stmt]) -> Vec<(String, Span)> {
    fn go(body: &[ast::Stmt], out: &mut Vec<(String, Span)>) {
        for s in body {
            match s {
                ast::Stmt::Let { name, .. } => out.push((name.name.clone(), name.span)),
                ast::Stmt::Each { body, .. }
                | ast::Stmt::Range { body, .. }
                | ast::Stmt::Cover { body, .. }
                | ast::Stmt::While { body, .. } => go(body, out),
                ast::Stmt::If { then_, else_, .. } => {
                    go(then_, out);
                    go(else_, out);
                }
                _ => {}
            }
        }
    }
    let mut out = Vec::new();
    go(body, &mut out);
    out
}
