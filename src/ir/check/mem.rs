//! Locks and normal-memory stores: `acquire`, `release`, `p[OFF] = V`.

use super::seq::{too_wide, Place, SeqCx};
use crate::ir::expr::{field_mask, BinOp, Expr};
use crate::ir::*;
use crate::spec::ast;
use crate::spec::diag::Diag;

impl SeqCx<'_> {
    pub(super) fn acquire(
        &mut self,
        mem: &ast::Expr,
        value: &ast::LockValue,
        held: &Option<Box<ast::Expr>>,
        limit: &Option<(u64, Span)>,
        fail: &Option<Box<ast::Expr>>,
        span: &Span,
    ) -> Result<Stmt, Diag> {
        let m = self.mem_ref(mem)?;
        let value = self.lock_value(value, m.width)?;
        let held = self.held_code(held, &value)?;
        let limit = self.spin_limit(limit, fail)?;
        if self.void && (held.is_some() || limit.is_some()) {
            return Err(Diag::new(
                *span,
                "a `-> void` sequence cannot report `held` or a spin failure",
            ));
        }
        if let LockValue::Owner(o) = &value {
            // Taken means nonzero, and the lock stores the owner
            // in `width` bits: an owner outside 1..2^width - 1
            // would store 0 (a free lock) or another owner's
            // value. Constants are checked here, run-time owners
            // before the acquire (-EINVAL).
            let fits = field_mask(0, m.width);
            match o.as_const() {
                Some(0) => {
                    return Err(Diag::new(
                        *span,
                        "an owner of 0 would leave the lock free",
                    )
                    .label("owner 0"))
                }
                Some(_) => {}
                None if self.void => {
                    return Err(Diag::new(
                        *span,
                        format!(
                            "a `-> void` sequence cannot report a run-time owner that does not fit the {}-bit lock (or is 0)",
                            m.width
                        ),
                    )
                    .help("remove `-> void`: the sequence then returns -22 for such an owner"))
                }
                None => self.pending.push(Stmt::If { rare: false, span: None, why: None,
                    // owner - 1 >= 2^width - 1, as owner + ~0 so
                    // that `cpu + 1` folds to `cpu`.
                    cond: Cond {
                        cmp: Cmp::Geu,
                        a: Expr::bin(BinOp::Add, o.clone(), Expr::Const(u64::MAX)),
                        b: Expr::Const(fits),
                    },
                    then_: vec![Stmt::Return {
                        value: Expr::Const(crate::passes::cover::EINVAL as u64),
                        span: *span,
                    }],
                    else_: Vec::new(),
                }),
            }
        }
        let status = held.map(|_| {
            let l = self.locals.len();
            self.locals.push("status".into());
            self.scope.push(l);
            self.status = Some(l);
            l
        });
        Ok(Stmt::Mem {
            id: self.op_id(),
            op: MemOp::Acquire(Acquire {
                mem: m,
                value,
                held,
                status,
                limit,
                fail_barrier: crate::ir::ExitBarriers::NONE,
                hoisted: false,
            }),
            span: *span,
        })
    }

    pub(super) fn release(
        &mut self,
        mem: &ast::Expr,
        value: &Option<Box<ast::LockValue>>,
        cond: &Option<Box<ast::Expr>>,
        span: &Span,
    ) -> Result<Stmt, Diag> {
        let m = self.mem_ref(mem)?;
        let value = match value {
            None => LockValue::Owner(Expr::Const(0)),
            Some(v) => self.lock_value(v, m.width)?,
        };
        let cond = cond.as_ref().map(|c| self.expr(c, None)).transpose()?;
        Ok(Stmt::Mem {
            id: self.op_id(),
            op: MemOp::Release {
                mem: m,
                value,
                cond,
                // Device accesses earlier in program order must be
                // ordered before the releasing store too.
                order: if self.used.is_empty() {
                    ReleaseOrder::Full
                } else {
                    ReleaseOrder::Device
                },
            },
            span: *span,
        })
    }

    pub(super) fn mem_write(
        &mut self,
        mem: &ast::Expr,
        value: &ast::Expr,
        span: &Span,
    ) -> Result<Stmt, Diag> {
        let place = self.place(mem)?;
        let width = place.width();
        let v = self.expr(value, None)?;
        if let Some(c) = too_wide(&v, width) {
            return Err(Diag::new(
                value.span(),
                format!("{c:#x} does not fit the {width}-bit element"),
            ));
        }
        let op = match place {
            Place::Fixed(m) => MemOp::Store { mem: m, value: v },
            Place::At { ptr, width, index } => MemOp::StoreAt {
                ptr,
                width,
                index,
                value: v,
            },
        };
        Ok(Stmt::Mem {
            id: self.op_id(),
            op,
            span: *span,
        })
    }

    /// `held CODE`: the positive code an acquire returns when this CPU
    /// already owns the lock (one per sequence; owner locks only).
    fn held_code(
        &mut self,
        held: &Option<Box<ast::Expr>>,
        value: &LockValue,
    ) -> Result<Option<u64>, Diag> {
        Ok(match held {
            None => None,
            Some(h) => {
                if matches!(value, LockValue::Bit(_)) {
                    return Err(Diag::new(
                        h.span(),
                        "a bit lock has no owner to detect recursion with",
                    ));
                }
                if self.status.is_some() {
                    return Err(Diag::new(
                        h.span(),
                        "only one `acquire ... held` per sequence",
                    ));
                }
                match self.expr(h, None)?.as_const() {
                    Some(c) if c != 0 && (c as i64) > 0 && c <= 0x7fff => Some(c),
                    _ => {
                        return Err(Diag::new(
                            h.span(),
                            "the `held` code is a positive constant (at most 0x7fff)",
                        )
                        .help("0 means `taken`; negative codes are failures"))
                    }
                }
            }
        })
    }

    /// `limit N [else return CODE]` of a spinning acquire (-EBUSY unless
    /// given).
    fn spin_limit(
        &mut self,
        limit: &Option<(u64, Span)>,
        fail: &Option<Box<ast::Expr>>,
    ) -> Result<Option<(u64, i64)>, Diag> {
        Ok(match (limit, fail) {
            (None, None) => None,
            (None, Some(f)) => return Err(Diag::new(f.span(), "`else return` needs a `limit`")),
            (Some((n, ls)), f) => {
                if *n == 0 || *n > 0x7fff_ffff {
                    return Err(Diag::new(
                        *ls,
                        "spin limit must be between 1 and 2147483647",
                    ));
                }
                let code = match f {
                    None => -16, // -EBUSY
                    Some(f) => self.negative_code(f, "a spin's failure code")?,
                };
                Some((*n, code))
            }
        })
    }
}
