//! Expressions: names, fields, bindings (`$addr`, `$bits`), builtins.

use super::device::closest;
use super::seq::{Place, SeqCx};
use crate::ir::expr::{field_mask, BinOp, Binding, Expr, Func, Rel};
use crate::ir::*;
use crate::spec::ast;
use crate::spec::diag::Diag;

impl SeqCx<'_> {
    /// What `$bits` means here: in a write to a register, the granule's
    /// settings of that register's fields; elsewhere all its settings,
    /// which is only meaningful when they live in one register.
    pub(super) fn bits_binding(
        &self,
        span: crate::spec::diag::Span,
        reg: Option<(DevId, RegId)>,
    ) -> Result<Binding, Diag> {
        let set = &self.granules[*self.in_cover.last().unwrap_or(&0)];
        let mut regs: Vec<RegId> = Vec::new();
        for e in &set.entries {
            for &r in &e.set_regs {
                if !regs.contains(&r) {
                    regs.push(r);
                }
            }
        }
        let name = |r: RegId| match set.dev {
            Some(d) => format!("{}.{}", self.devices[d].name, self.devices[d].regs[r].name),
            None => format!("register {r}"),
        };
        match reg {
            Some((dev, r)) if set.dev == Some(dev) && regs.contains(&r) => {
                Ok(Binding::RegBits(r))
            }
            Some((dev, r)) => {
                let written = format!(
                    "{}.{}",
                    self.devices[dev].name, self.devices[dev].regs[r].name
                );
                let mut d = Diag::new(
                    span,
                    format!(
                        "no granule of `{}` sets a field of `{written}`: `$bits` would always be 0 here",
                        set.name
                    ),
                )
                .label("nothing to bind")
                .related(set.span, "granule set");
                d = match regs.as_slice() {
                    [] => d.help("the set's granules `set` no fields; remove `$bits`"),
                    rs => d.help(format!(
                        "`$bits` in a write to a register is that register's settings; the set's are in {}",
                        rs.iter().map(|&r| format!("`{}`", name(r))).collect::<Vec<_>>().join(", ")
                    )),
                };
                Err(d)
            }
            None if regs.len() > 1 => Err(Diag::new(
                span,
                format!(
                    "`$bits` is ambiguous here: the granules of `{}` set fields of {}",
                    set.name,
                    regs.iter().map(|&r| format!("`{}`", name(r))).collect::<Vec<_>>().join(" and ")
                ),
            )
            .label("which register's settings?")
            .related(set.span, "granule set")
            .help("use `$bits` directly in writes to those registers: each write gets its own register's settings")),
            None => Ok(Binding::Bits),
        }
    }

    /// `reg` is the register a field aggregate refers to.
    pub(super) fn expr(
        &mut self,
        e: &ast::Expr,
        reg: Option<(DevId, RegId)>,
    ) -> Result<Expr, Diag> {
        Ok(match e {
            ast::Expr::Int { value, .. } => Expr::Const(*value),
            ast::Expr::Reg(p) => self.reg_read(p)?,
            ast::Expr::Mem { span, .. } => self.mem_read(e, *span)?,
            ast::Expr::Name(n)
                if self
                    .ptrs
                    .get(
                        self.params
                            .iter()
                            .position(|p| p == &n.name)
                            .unwrap_or(usize::MAX),
                    )
                    .copied()
                    .flatten()
                    .is_some()
                    && !self.scope.iter().any(|&l| self.locals[l] == n.name) =>
            {
                return Err(Diag::new(
                    n.span,
                    format!("`{}` is a pointer: read it as `{}[OFFSET]`", n.name, n.name),
                ));
            }
            ast::Expr::Name(n) => match self.params.iter().position(|p| p == &n.name) {
                _ if self.scope.iter().any(|&l| self.locals[l] == n.name) => {
                    let l = *self
                        .scope
                        .iter()
                        .rev()
                        .find(|&&l| self.locals[l] == n.name)
                        .unwrap_or(&0);
                    Expr::Local(l)
                }
                Some(i) => Expr::Param(i),
                None => return Err(self.undefined(n)),
            },
            ast::Expr::Feature(n) => self.feature(n)?,
            ast::Expr::MfSpr(r) => self.mfspr(r)?,
            ast::Expr::Binding(b) => self.binding(b, reg)?,
            ast::Expr::Neg { inner, .. } => {
                Expr::bin(BinOp::Sub, Expr::Const(0), self.expr(inner, reg)?)
            }
            ast::Expr::Not { inner, .. } => Expr::bit_not(self.expr(inner, reg)?),
            ast::Expr::LogNot { inner, .. } => {
                Expr::cmp(Rel::Eq, self.expr(inner, None)?, Expr::Const(0))
            }
            ast::Expr::Call { func, args, span } if func.name == "threshold" => {
                self.threshold_of(args, *span)?
            }
            ast::Expr::Call { func, args, span } => self.call(func, args, *span)?,
            ast::Expr::Bin { op, lhs, rhs, .. } => match op {
                ast::BinOp::Arith(op) => self.arith(e, *op, lhs, rhs, reg)?,
                ast::BinOp::Rel(rel) => {
                    Expr::cmp(*rel, self.expr(lhs, None)?, self.expr(rhs, None)?)
                }
                ast::BinOp::Logic(logic) => {
                    let op = match logic {
                        ast::Logic::LogAnd => BinOp::And,
                        ast::Logic::LogOr => BinOp::Or,
                    };
                    let (a, b) = (self.expr(lhs, None)?, self.expr(rhs, None)?);
                    Expr::bin(op, a.truth(), b.truth())
                }
            },
            ast::Expr::Aggregate { fields, span } => self.aggregate(fields, *span, reg)?,
        })
    }

    /// A register read: a local the read is placed before the statement in.
    fn reg_read(&mut self, p: &ast::Path) -> Result<Expr, Diag> {
        if !self.in_cover.is_empty() {
            return Err(
                Diag::new(p.span, "register reads are not allowed in a `cover` body")
                    .label("read it before the `cover`"),
            );
        }
        let (dev, reg, field) = self.path(p)?;
        let l = self.locals.len();
        let d = &self.devices[dev];
        self.locals.push(format!("{}.{}", d.name, d.regs[reg].name));
        let (shift, width) = match field {
            Some(f) => (d.fields[f].shift, d.fields[f].width),
            None => (0, d.regs[reg].width),
        };
        let id = self.op_id();
        self.pending.push(Stmt::Read {
            access: Access {
                id,
                dev,
                reg,
                span: p.span,
            },
            local: l,
        });
        let mut v = Expr::Local(l);
        if shift != 0 {
            v = Expr::Bin(
                BinOp::Shr,
                Box::new(v),
                Box::new(Expr::Const(u64::from(shift))),
            );
        }
        if width < d.regs[reg].width {
            v = Expr::Bin(
                BinOp::And,
                Box::new(v),
                Box::new(Expr::Const(crate::ir::expr::field_mask(0, width))),
            );
        }
        Ok(v)
    }

    /// `mfspr SPR`: a read placed before the statement, like a register's.
    fn mfspr(&mut self, r: &ast::Ident) -> Result<Expr, Diag> {
        if !self.in_cover.is_empty() {
            return Err(
                Diag::new(r.span, "`mfspr` is not allowed in a `cover` body")
                    .label("read it before the `cover`"),
            );
        }
        let local = self.locals.len();
        // `mfmsr` is parsed as a read of `MSR`.
        let op = if r.name == "MSR" {
            self.book3e_insn(&ast::Ident {
                name: "mfmsr".into(),
                span: r.span,
            })?;
            self.locals.push("mfmsr".into());
            crate::ir::SysOp::MfMsr { local }
        } else {
            let spr = self.spr(r)?;
            self.locals.push(format!("mfspr {}", spr.name));
            crate::ir::SysOp::MfSpr { spr, local }
        };
        self.pending.push(Stmt::Sys { op, span: r.span });
        Ok(Expr::Local(local))
    }

    /// A normal-memory read `p[OFF]`, likewise placed before its statement.
    fn mem_read(&mut self, e: &ast::Expr, span: Span) -> Result<Expr, Diag> {
        if !self.in_cover.is_empty() {
            return Err(Diag::new(
                span,
                "memory reads are not allowed in a `cover` body",
            ));
        }
        let place = self.place(e)?;
        let l = self.locals.len();
        let op = match place {
            Place::Fixed(mem) => {
                self.locals
                    .push(format!("{}[{}]", self.params[mem.ptr], mem.offset));
                MemOp::Load { local: l, mem }
            }
            Place::At { ptr, width, index } => {
                self.locals.push(format!("{}[...]", self.params[ptr]));
                MemOp::LoadAt {
                    local: l,
                    ptr,
                    width,
                    index,
                }
            }
        };
        let id = self.op_id();
        self.pending.push(Stmt::Mem { id, op, span });
        Ok(Expr::Local(l))
    }

    /// `feature NAME`: a bit of the feature word, the last parameter.
    fn feature(&mut self, n: &ast::Ident) -> Result<Expr, Diag> {
        let Some(i) = self.features.iter().position(|f| f.name == n.name) else {
            let mut d = Diag::undeclared(n.span, "feature", &n.name).help(
                "declare it at the top level: `feature NAME` or `feature NAME = KERNEL_CAPABILITY`",
            );
            if let Some(s) = closest(&n.name, self.features.iter().map(|f| f.name.as_str())) {
                d = d.help(format!("did you mean `{s}`?"));
            }
            return Err(d);
        };
        let w = *self.feature_word.get_or_insert(self.params.len());
        Ok(crate::ir::feature::test_bit(w, i))
    }

    /// `$addr`, `$bits`, ...: what a `cover` binds for its body.
    fn binding(&mut self, b: &ast::Ident, reg: Option<(DevId, RegId)>) -> Result<Expr, Diag> {
        if self.in_cover.is_empty() {
            return Err(Diag::new(
                b.span,
                format!("`${}` is only bound inside a `cover` body", b.name),
            )
            .label("not bound here"));
        }
        Ok(Expr::Binding(match b.name.as_str() {
            "addr" => Binding::Addr,
            "bits" => self.bits_binding(b.span, reg)?,
            "size" => Binding::Size,
            "num" => Binding::Num,
            "scale" => Binding::Scale,
            _ => {
                return Err(
                    Diag::new(b.span, format!("unknown binding `${}`", b.name)).help(
                        "a cover binds $addr, $bits, $size (and $num, $scale for range operations)",
                    ),
                )
            }
        }))
    }

    /// A built-in function call with its arity checked.
    fn call(&mut self, func: &ast::Ident, args: &[ast::Expr], span: Span) -> Result<Expr, Diag> {
        let Some(f) = Func::ALL.into_iter().find(|f| f.name() == func.name) else {
            let mut d = Diag::new(func.span, format!("unknown function `{}`", func.name))
                .label("not a built-in");
            d = d.help(format!(
                "built-ins: {}",
                Func::ALL.map(|f| f.name()).join(", ")
            ));
            return Err(d);
        };
        if args.len() != f.arity() {
            return Err(Diag::new(
                span,
                format!(
                    "`{}` takes {} argument{}, not {}",
                    f.name(),
                    f.arity(),
                    if f.arity() == 1 { "" } else { "s" },
                    args.len()
                ),
            ));
        }
        let args = args
            .iter()
            .map(|a| self.expr(a, None))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Expr::call(f, args))
    }

    /// Arithmetic and bit operators; constant overflow and oversized
    /// constant shifts are errors.
    fn arith(
        &mut self,
        e: &ast::Expr,
        op: BinOp,
        lhs: &ast::Expr,
        rhs: &ast::Expr,
        reg: Option<(DevId, RegId)>,
    ) -> Result<Expr, Diag> {
        let (a, b) = (self.expr(lhs, reg)?, self.expr(rhs, reg)?);
        // A constant that overflows 64 bits is an error, as an
        // oversized literal is (run-time values wrap: that is
        // what the machine does).
        if let (Some(x), Some(y)) = (a.as_const(), b.as_const()) {
            let exact = match op {
                BinOp::Add => x.checked_add(y),
                BinOp::Sub => x.checked_sub(y),
                BinOp::Mul => x.checked_mul(y),
                _ => Some(0),
            };
            if exact.is_none() {
                let what = match op {
                    BinOp::Sub => "is below 0",
                    _ => "does not fit 64 bits",
                };
                return Err(Diag::new(
                    e.span(),
                    format!(
                        "constant {x:#x} {} {y:#x} {what}",
                        match op {
                            BinOp::Add => "+",
                            BinOp::Sub => "-",
                            _ => "*",
                        }
                    ),
                )
                .label("overflows")
                .help("write the value you mean; constants are unsigned 64-bit"));
            }
        }
        // A constant amount of 64 or more is a mistake; a run-time
        // one shifts every bit out (the value is 0), see README.
        if matches!(op, BinOp::Shl | BinOp::Shr) && b.as_const().is_some_and(|s| s >= 64) {
            return Err(Diag::new(rhs.span(), "shift amount must be below 64").label("too large"));
        }
        Ok(Expr::bin(op, a, b))
    }

    /// `{ field: value, ... }` as the value of a write to `reg`.
    fn aggregate(
        &mut self,
        fields: &[(ast::Ident, ast::Expr)],
        span: Span,
        reg: Option<(DevId, RegId)>,
    ) -> Result<Expr, Diag> {
        let Some((dev, r)) = reg else {
            return Err(Diag::new(
                span,
                "a field aggregate is only allowed as the value of a register write",
            ));
        };
        let mut acc = Expr::Const(0);
        let mut seen: Vec<(FieldId, crate::spec::diag::Span)> = Vec::new();
        for (name, value) in fields {
            let f = self.field(dev, r, name)?;
            if let Some((_, prev)) = seen.iter().find(|(x, _)| *x == f) {
                return Err(
                    Diag::new(name.span, format!("field `{}` set twice", name.name))
                        .related(*prev, "first set here"),
                );
            }
            seen.push((f, name.span));
            if matches!(value, ast::Expr::Aggregate { .. }) {
                return Err(Diag::new(
                    value.span(),
                    "fields hold numbers, not aggregates",
                ));
            }
            let v = self.expr(value, None)?;
            let fd = &self.devices[dev].fields[f];
            if let Some(c) = v.as_const() {
                if fd.width < 64 && c >> fd.width != 0 {
                    return Err(Diag::new(
                        value.span(),
                        format!(
                            "value {c:#x} does not fit the {}-bit field `{}` (max {:#x})",
                            fd.width,
                            fd.name,
                            field_mask(0, fd.width)
                        ),
                    )
                    .label("too large"));
                }
            }
            acc = Expr::bin(BinOp::Or, acc, Expr::insert(v, fd.shift, fd.width));
        }
        Ok(acc)
    }
}
