//! Statements: which one starts at the current token, and each one's
//! syntax (CPU instructions are in `insn`).

use super::Parser;
use crate::spec::ast::*;
use crate::spec::diag::{Diag, Span};
use crate::spec::lexer::Tok;

impl Parser<'_> {
    pub(super) fn stmt(&mut self) -> Result<Stmt, Diag> {
        let start = self.span();
        if self.eat_kw("each") {
            return self.each_stmt(start);
        }
        if self.eat_kw("poll") {
            return self.poll_stmt(start);
        }
        if self.is_kw("enqueue") && matches!(self.peek_at(1), Tok::Ident(_)) {
            return self.enqueue_stmt(start);
        }
        if self.is_kw("issue") && matches!(self.peek_at(1), Tok::Ident(_)) {
            return self.issue_stmt(start);
        }
        if self.is_kw("wait") && matches!(self.peek_at(1), Tok::Ident(_)) {
            return self.wait_stmt(start);
        }
        if self.eat_kw("barrier") {
            return self.barrier_stmt(start);
        }
        if self.eat_kw("range") {
            return self.range_stmt(start);
        }
        if self.eat_kw("cover") {
            return self.cover_stmt(start);
        }
        if self.eat_kw("acquire") {
            return self.acquire_stmt(start);
        }
        if self.eat_kw("release") {
            return self.release_stmt(start);
        }
        if matches!(self.peek(), Tok::Ident(_)) && self.peek_at(1) == &Tok::LBracket {
            return self.mem_write_stmt();
        }
        if self.eat_kw("order") {
            return self.order_stmt(start);
        }
        // `assume cpu < 255`; a device named `assume` still reads
        // `assume.reg = ...`.
        if self.is_kw("assume")
            && !matches!(self.peek_at(1), Tok::Dot | Tok::Assign | Tok::LBracket)
        {
            self.bump();
            let cond = self.expr()?;
            return Ok(Stmt::Assume {
                span: start.to(cond.span()),
                cond,
            });
        }
        if let Some(insn) = self.insn_ahead() {
            return self.insn_stmt(start, insn);
        }
        // `let x = ...`; a device named `let` still reads `let.reg = ...`.
        if self.is_kw("let") && matches!(self.peek_at(1), Tok::Ident(_)) {
            return self.let_stmt(start);
        }
        if self.is_kw("while") && self.peek_at(1) != &Tok::Dot && self.peek_at(1) != &Tok::Assign {
            return self.while_stmt(start);
        }
        // `x = ...` (one name): assignment to a local; `dev.reg = ...` is a
        // register write and `p[OFF] = ...` a store (both handled above or
        // below by their second token).
        if matches!(self.peek(), Tok::Ident(_)) && self.peek_at(1) == &Tok::Assign {
            return self.assign_stmt();
        }
        if self.is_kw("if") && self.peek_at(1) != &Tok::Dot {
            self.bump();
            return self.if_rest(start);
        }
        if self.eat_kw("return") {
            return self.return_stmt(start);
        }
        if matches!(self.peek(), Tok::Ident(_)) {
            return self.write_stmt();
        }
        Err(self
            .unexpected("a statement (`each`, `poll`, `barrier`, `return` or `dev.reg = value`)"))
    }

    /// After `each`.
    fn each_stmt(&mut self, start: Span) -> Result<Stmt, Diag> {
        let dev = self.ident("a device name")?;
        let body = self.block()?;
        Ok(Stmt::Each {
            dev,
            body,
            span: start.to(self.prev_span()),
        })
    }

    /// After `poll`.
    fn poll_stmt(&mut self, start: Span) -> Result<Stmt, Diag> {
        // `dev.reg[.field]`, or `p` / `p[OFF]` for memory.
        let target = if matches!(self.peek(), Tok::Ident(_)) && self.peek_at(1) != &Tok::Dot {
            PollTarget::Mem(self.mem()?)
        } else {
            PollTarget::Reg(self.path()?)
        };
        let op = if self.eat(&Tok::EqEq) {
            CmpOp::Eq
        } else if self.eat(&Tok::NotEq) {
            CmpOp::Ne
        } else {
            return Err(self.unexpected("`==` or `!=`"));
        };
        let value = self.expr()?;
        let (limit, fail) = self.limit_else("the poll bound (number of reads)")?;
        Ok(Stmt::Poll {
            target: Box::new(target),
            op,
            value: Box::new(value),
            limit,
            fail,
            span: start.to(self.prev_span()),
        })
    }

    /// After `enqueue`.
    fn enqueue_stmt(&mut self, start: Span) -> Result<Stmt, Diag> {
        self.bump();
        let queue = self.ident("a queue name")?;
        let record = self.ident("a record name")?;
        self.expect(Tok::LBrace)?;
        let fields = self.field_values()?;
        Ok(Stmt::Enqueue {
            queue,
            record,
            fields,
            span: start.to(self.prev_span()),
        })
    }

    /// After `issue`.
    fn issue_stmt(&mut self, start: Span) -> Result<Stmt, Diag> {
        self.bump();
        let queue = self.ident("a queue name")?;
        Ok(Stmt::Issue {
            queue,
            span: start.to(self.prev_span()),
        })
    }

    /// After `wait`.
    fn wait_stmt(&mut self, start: Span) -> Result<Stmt, Diag> {
        self.bump();
        let queue = self.ident("a queue name")?;
        let (limit, fail) = self.limit_else("the wait bound (reads of the consumer register)")?;
        Ok(Stmt::Wait {
            queue,
            limit,
            fail,
            span: start.to(self.prev_span()),
        })
    }

    /// After `range`.
    fn range_stmt(&mut self, kw: Span) -> Result<Stmt, Diag> {
        let var = self.ident("a loop variable name")?;
        self.expect_kw("in")?;
        let start = self.expr()?;
        self.expect(Tok::Comma)?;
        let size = self.expr()?;
        self.expect_kw("step")?;
        let step = self.expr()?;
        let body = self.block()?;
        Ok(Stmt::Range {
            var,
            start: Box::new(start),
            size: Box::new(size),
            step: Box::new(step),
            body,
            span: start_span(kw, self.prev_span()),
        })
    }

    /// After `cover`.
    fn cover_stmt(&mut self, start: Span) -> Result<Stmt, Diag> {
        let cstart = self.expr()?;
        self.expect(Tok::Comma)?;
        let size = self.expr()?;
        self.expect_kw("with")?;
        let set = self.ident("a granule set")?;
        let mode_id = self.ident("a cover mode (single, exact, auto)")?;
        let mode = match mode_id.name.as_str() {
            "single" => CoverMode::Single,
            "exact" => CoverMode::Exact,
            "auto" => CoverMode::Auto,
            "range" => CoverMode::Range,
            _ => {
                return Err(Diag::new(
                    mode_id.span,
                    format!("unknown cover mode `{}`", mode_id.name),
                )
                .label("expected single, exact or auto"))
            }
        };
        let body = self.block()?;
        Ok(Stmt::Cover {
            start: Box::new(cstart),
            size: Box::new(size),
            set,
            mode,
            mode_span: mode_id.span,
            body,
            span: start.to(self.prev_span()),
        })
    }

    /// After `acquire`.
    fn acquire_stmt(&mut self, start: Span) -> Result<Stmt, Diag> {
        let mem = self.mem()?;
        let value = if self.eat_kw("bit") {
            let (b, s) = self.int("a bit number")?;
            LockValue::Bit(b, s)
        } else {
            self.expect(Tok::Assign)?;
            LockValue::Owner(self.expr()?)
        };
        let held = if self.eat_kw("held") {
            Some(Box::new(self.expr()?))
        } else {
            None
        };
        let (limit, fail) = self.limit_else("the spin bound (number of reads)")?;
        Ok(Stmt::Acquire {
            mem: Box::new(mem),
            value: Box::new(value),
            held,
            limit,
            fail,
            span: start.to(self.prev_span()),
        })
    }

    /// After `release`.
    fn release_stmt(&mut self, start: Span) -> Result<Stmt, Diag> {
        let mem = self.mem()?;
        let value = if self.eat_kw("bit") {
            let (b, s) = self.int("a bit number")?;
            Some(LockValue::Bit(b, s))
        } else if self.eat(&Tok::Assign) {
            Some(LockValue::Owner(self.expr()?))
        } else {
            None
        };
        let cond = if self.eat_kw("if") {
            // `EXPR == 0`, parsed as one comparison.
            match self.expr()? {
                Expr::Bin {
                    op: BinOp::Rel(Rel::Eq),
                    lhs,
                    rhs,
                    ..
                } if matches!(*rhs, Expr::Int { value: 0, .. }) => Some(*lhs),
                other => {
                    return Err(
                        Diag::new(other.span(), "a conditional release tests `EXPR == 0`")
                            .label("expected `... == 0`"),
                    )
                }
            }
        } else {
            None
        };
        Ok(Stmt::Release {
            mem: Box::new(mem),
            value: value.map(Box::new),
            cond: cond.map(Box::new),
            span: start.to(self.prev_span()),
        })
    }

    /// `p[OFF] = value`: a store to normal memory.
    fn mem_write_stmt(&mut self) -> Result<Stmt, Diag> {
        let mem = self.mem()?;
        self.expect(Tok::Assign)?;
        let value = self.expr()?;
        Ok(Stmt::MemWrite {
            span: mem.span().to(value.span()),
            mem: Box::new(mem),
            value: Box::new(value),
        })
    }

    /// After `order`.
    fn order_stmt(&mut self, start: Span) -> Result<Stmt, Diag> {
        let before = self.ident("`stores` or `invalidates`")?;
        self.expect_kw("before")?;
        let after = self.ident("`invalidates` or `return`")?;
        Ok(Stmt::Order {
            span: start.to(after.span),
            before,
            after,
        })
    }

    /// After `let`.
    fn let_stmt(&mut self, start: Span) -> Result<Stmt, Diag> {
        self.bump();
        let name = self.ident("a local variable name")?;
        self.expect(Tok::Assign)?;
        let value = self.expr()?;
        Ok(Stmt::Let {
            span: start.to(value.span()),
            name,
            value,
        })
    }

    /// After `while`.
    fn while_stmt(&mut self, start: Span) -> Result<Stmt, Diag> {
        self.bump();
        let cond = self.expr()?;
        if !self.is_kw("limit") {
            return Err(self
                .unexpected("`limit N`")
                .help("a `while` runs at most N times: `while COND limit N { ... }`"));
        }
        self.bump();
        let (limit, limit_span) = self.int("the loop bound (number of iterations)")?;
        let fail = self.else_return()?;
        let body = self.block()?;
        Ok(Stmt::While {
            cond: Box::new(cond),
            limit,
            limit_span,
            fail,
            body,
            span: start.to(self.prev_span()),
        })
    }

    /// `x = value`: assignment to a local.
    fn assign_stmt(&mut self) -> Result<Stmt, Diag> {
        let name = self.ident("a local variable name")?;
        self.bump();
        let value = self.expr()?;
        Ok(Stmt::Assign {
            span: name.span.to(value.span()),
            name,
            value,
        })
    }

    /// After `return`.
    fn return_stmt(&mut self, start: Span) -> Result<Stmt, Diag> {
        let value = self.expr()?;
        Ok(Stmt::Return {
            span: start.to(value.span()),
            value,
        })
    }

    /// `dev.reg = value`: a register write.
    fn write_stmt(&mut self) -> Result<Stmt, Diag> {
        let target = self.path()?;
        self.expect(Tok::Assign)?;
        let value = self.expr()?;
        Ok(Stmt::Write {
            span: target.span.to(value.span()),
            target,
            value,
        })
    }

    /// After `if`: `COND { ... } [else if ... | else { ... }]`.
    fn if_rest(&mut self, start: Span) -> Result<Stmt, Diag> {
        let cond = self.expr()?;
        let then_ = self.block()?;
        let else_ = if self.eat_kw("else") {
            let at = self.span();
            if self.eat_kw("if") {
                let open = self.prev_span();
                self.enter(open)?;
                let nested = self.if_rest(at)?;
                self.depth -= 1;
                vec![nested]
            } else {
                self.block()?
            }
        } else {
            Vec::new()
        };
        Ok(Stmt::If {
            cond: Box::new(cond),
            then_,
            else_,
            rare: false,
            span: start.to(self.prev_span()),
        })
    }

    /// `[limit N] [else return EXPR]` after a poll, a wait or an acquire.
    #[allow(clippy::type_complexity)]
    fn limit_else(&mut self, what: &str) -> Result<(Option<(u64, Span)>, Option<Box<Expr>>), Diag> {
        let limit = if self.eat_kw("limit") {
            Some(self.int(what)?)
        } else {
            None
        };
        let fail = self.else_return()?;
        Ok((limit, fail))
    }

    /// `[else return EXPR]`: what a bounded loop returns when it runs out.
    fn else_return(&mut self) -> Result<Option<Box<Expr>>, Diag> {
        Ok(if self.eat_kw("else") {
            self.expect_kw("return")?;
            Some(Box::new(self.expr()?))
        } else {
            None
        })
    }
}

fn start_span(a: Span, b: Span) -> Span {
    a.to(b)
}
