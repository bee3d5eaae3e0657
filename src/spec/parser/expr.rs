//! Expressions (precedence climbing over C's operator levels, with
//! the nesting and size limits) and the operand forms statements share:
//! register paths, memory operands, expression lists, field values.

use super::{Parser, EXPR_NODES, MAX_EXPR_DEPTH};
use crate::spec::ast::*;
use crate::spec::diag::Diag;
use crate::spec::lexer::Tok;

impl Parser<'_> {
    pub(super) fn path(&mut self) -> Result<Path, Diag> {
        let first = self.ident("a device name")?;
        let mut span = first.span;
        let mut parts = vec![first];
        while self.eat(&Tok::Dot) {
            let p = self.ident("a register or field name")?;
            span = span.to(p.span);
            parts.push(p);
        }
        parts.shrink_to_fit();
        Ok(Path { parts, span })
    }

    /// `E, E, ...`: one expression or more, comma-separated.
    pub(super) fn expr_list(&mut self) -> Result<Vec<Expr>, Diag> {
        let mut v = vec![self.expr()?];
        while self.eat(&Tok::Comma) {
            v.push(self.expr()?);
        }
        Ok(v)
    }

    /// `f: e, ...}` after the `{` (a trailing comma allowed).
    pub(super) fn field_values(&mut self) -> Result<Vec<(Ident, Expr)>, Diag> {
        let mut fields = Vec::new();
        if self.eat(&Tok::RBrace) {
            return Ok(fields);
        }
        loop {
            let f = self.ident("a field name")?;
            self.expect(Tok::Colon)?;
            let v = self.expr()?;
            fields.push((f, v));
            if self.eat(&Tok::RBrace) {
                break;
            }
            self.expect(Tok::Comma)?;
            if self.eat(&Tok::RBrace) {
                break;
            }
        }
        Ok(fields)
    }

    /// `p` or `p[OFF]` (OFF a constant byte offset).
    pub(super) fn mem(&mut self) -> Result<Expr, Diag> {
        let ptr = self.ident("a pointer parameter")?;
        let mut span = ptr.span;
        let (offset, index) = if self.eat(&Tok::LBracket) {
            let e = self.expr()?;
            span = span.to(self.expect(Tok::RBracket)?);
            match e {
                Expr::Int { value, .. } => (value, None),
                other => (0, Some(Box::new(other))),
            }
        } else {
            (0, None)
        };
        Ok(Expr::Mem {
            ptr: Box::new(ptr),
            offset,
            index,
            span,
        })
    }

    /// Count one node of the current expression.
    fn node(&mut self) -> Result<(), Diag> {
        EXPR_NODES.count(self.span(), &mut self.expr_nodes)
    }

    pub(super) fn expr(&mut self) -> Result<Expr, Diag> {
        if self.expr_depth == 0 {
            self.expr_nodes = 0;
        }
        self.expr_depth += 1;
        if self.expr_depth > MAX_EXPR_DEPTH {
            return Err(Diag::new(self.span(), "expression nested too deeply"));
        }
        let r = self.binary(0);
        self.expr_depth -= 1;
        r
    }

    /// Operators binding at least as tightly as `min_level`, by
    /// precedence climbing; levels follow C: || && | ^ & (== !=)
    /// (< <= > >=) (<< >>) (+ -) (*), each left-associative. (One operator
    /// lookup per token: descending through every level tried each
    /// level's operators at every operand.)
    fn binary(&mut self, min_level: u8) -> Result<Expr, Diag> {
        let mut lhs = self.unary()?;
        while let Some((level, op)) = binop(self.peek()) {
            if level < min_level {
                break;
            }
            self.node()?;
            self.bump();
            let rhs = self.binary(level + 1)?;
            let span = lhs.span().to(rhs.span());
            lhs = Expr::Bin {
                op,
                lhs: Box::new(lhs),
                rhs: Box::new(rhs),
                span,
            };
        }
        Ok(lhs)
    }

    fn unary(&mut self) -> Result<Expr, Diag> {
        let start = self.span();
        if self.eat(&Tok::Minus) {
            let inner = self.unary_nested()?;
            return Ok(Expr::Neg {
                span: start.to(inner.span()),
                inner: Box::new(inner),
            });
        }
        if self.eat(&Tok::Tilde) {
            let inner = self.unary_nested()?;
            return Ok(Expr::Not {
                span: start.to(inner.span()),
                inner: Box::new(inner),
            });
        }
        if self.eat(&Tok::Bang) {
            let inner = self.unary_nested()?;
            return Ok(Expr::LogNot {
                span: start.to(inner.span()),
                inner: Box::new(inner),
            });
        }
        self.atom()
    }

    fn unary_nested(&mut self) -> Result<Expr, Diag> {
        self.expr_depth += 1;
        if self.expr_depth > MAX_EXPR_DEPTH {
            return Err(Diag::new(self.span(), "expression nested too deeply"));
        }
        let r = self.unary();
        self.expr_depth -= 1;
        r
    }

    fn atom(&mut self) -> Result<Expr, Diag> {
        self.node()?;
        let start = self.span();
        match *self.peek() {
            Tok::Int(value) => {
                self.bump();
                Ok(Expr::Int { value, span: start })
            }
            Tok::Ident(_) if self.peek_at(1) == &Tok::LBracket => self.mem(),
            Tok::Ident("feature") if matches!(self.peek_at(1), Tok::Ident(_)) => {
                self.bump();
                let name = self.ident("a feature name")?;
                Ok(Expr::Feature(Ident {
                    name: name.name,
                    span: start.to(name.span),
                }))
            }
            // `mfmsr`, `mfspr MAS1`: a register read that the ISA spells.
            Tok::Ident(w)
                if crate::spec::syntax::spr_read(w).is_some_and(|r| {
                    r.fixed.is_some() || matches!(self.peek_at(1), Tok::Ident(_))
                }) =>
            {
                let read = crate::spec::syntax::spr_read(w).expect("matched");
                match read.fixed {
                    Some(spr) => {
                        let span = self.bump();
                        Ok(Expr::MfSpr(Ident {
                            name: spr.into(),
                            span,
                        }))
                    }
                    None => {
                        self.bump();
                        let spr = self.ident(read.what)?;
                        Ok(Expr::MfSpr(Ident {
                            name: spr.name,
                            span: start.to(spr.span),
                        }))
                    }
                }
            }
            Tok::Ident(name) if self.peek_at(1) == &Tok::LParen => {
                self.bump();
                self.bump();
                let args = self.paren_list(Self::expr)?;
                Ok(Expr::Call {
                    func: Box::new(Ident {
                        name: name.to_string(),
                        span: start,
                    }),
                    args,
                    span: start.to(self.prev_span()),
                })
            }
            Tok::Ident(_) if self.peek_at(1) == &Tok::Dot => Ok(Expr::Reg(self.path()?)),
            Tok::Ident(name) => {
                self.bump();
                Ok(Expr::Name(Ident {
                    name: name.to_string(),
                    span: start,
                }))
            }
            Tok::Dollar(name) => {
                self.bump();
                Ok(Expr::Binding(Ident {
                    name: name.to_string(),
                    span: start,
                }))
            }
            Tok::LParen => {
                self.bump();
                let e = self.expr()?;
                self.expect(Tok::RParen)?;
                Ok(e)
            }
            Tok::LBrace => {
                self.bump();
                let fields = self.field_values()?;
                Ok(Expr::Aggregate {
                    fields,
                    span: start.to(self.prev_span()),
                })
            }
            _ => Err(self.unexpected("a value")),
        }
    }
}

/// A binary operator token's precedence level (higher binds tighter,
/// C's order) and operator.
fn binop(t: &Tok) -> Option<(u8, BinOp)> {
    Some(match t {
        Tok::OrOr => (0, BinOp::Logic(Logic::LogOr)),
        Tok::AndAnd => (1, BinOp::Logic(Logic::LogAnd)),
        Tok::Pipe => (2, BinOp::Arith(ArithOp::Or)),
        Tok::Caret => (3, BinOp::Arith(ArithOp::Xor)),
        Tok::Amp => (4, BinOp::Arith(ArithOp::And)),
        Tok::EqEq => (5, BinOp::Rel(Rel::Eq)),
        Tok::NotEq => (5, BinOp::Rel(Rel::Ne)),
        Tok::Lt => (6, BinOp::Rel(Rel::Lt)),
        Tok::Le => (6, BinOp::Rel(Rel::Le)),
        Tok::Gt => (6, BinOp::Rel(Rel::Gt)),
        Tok::Ge => (6, BinOp::Rel(Rel::Ge)),
        Tok::Shl => (7, BinOp::Arith(ArithOp::Shl)),
        Tok::Shr => (7, BinOp::Arith(ArithOp::Shr)),
        Tok::Plus => (8, BinOp::Arith(ArithOp::Add)),
        Tok::Minus => (8, BinOp::Arith(ArithOp::Sub)),
        Tok::Star => (9, BinOp::Arith(ArithOp::Mul)),
        _ => return None,
    })
}
