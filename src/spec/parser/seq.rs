//! `seq NAME(PARAMS) [-> long|void] { ... }` and the blocks of
//! statements, with the nesting and statement-count limits.

use super::{Parser, MAX_DEPTH, SEQ_STMTS};
use crate::spec::ast::*;
use crate::spec::diag::{Diag, Span};
use crate::spec::lexer::Tok;

impl Parser<'_> {
    pub(super) fn seq(&mut self) -> Result<Seq, Diag> {
        let start = self.expect_kw("seq")?;
        let name = self.ident("a sequence name")?;
        self.expect(Tok::LParen)?;
        let params = self.params()?;
        let void = self.return_type()?;
        self.stmts = 0;
        let body = self.block()?;
        Ok(Seq {
            name,
            params,
            void,
            body,
            span: start.to(self.prev_span()),
        })
    }

    /// After the `(`: `NAME: TYPE [private], ...)`.
    fn params(&mut self) -> Result<Vec<Param>, Diag> {
        let mut params = self.paren_list(Self::param)?;
        params.shrink_to_fit();
        Ok(params)
    }

    /// `NAME: u64|ptr ELEM|phys PTR [private]`.
    fn param(&mut self) -> Result<Param, Diag> {
        let pname = self.ident("a parameter name")?;
        self.expect(Tok::Colon)?;
        let ty = self.ident("a parameter type (u64, ptr u8|u16|u32|u64 or phys PTR)")?;
        let elem = if ty.name == "ptr" {
            Some(self.ident("the pointed-to type (u8, u16, u32, u64)")?)
        } else {
            None
        };
        let phys = if ty.name == "phys" {
            Some(self.ident("the pointer parameter whose physical address this is")?)
        } else {
            None
        };
        let private = self.is_kw("private").then(|| self.bump());
        Ok(Param {
            name: pname,
            ty,
            elem,
            private,
            phys,
        })
    }

    /// `[-> long|void]`: whether the sequence returns nothing.
    fn return_type(&mut self) -> Result<bool, Diag> {
        if !self.eat(&Tok::Minus) {
            return Ok(false);
        }
        self.expect(Tok::Gt)?;
        let t = self.ident("a return type (`long` or `void`)")?;
        match t.name.as_str() {
            "void" => Ok(true),
            "long" => Ok(false),
            _ => {
                Err(Diag::new(t.span, "sequences return `long` or `void`")
                    .label("unknown return type"))
            }
        }
    }

    /// Count one more level of nesting (at `span`), within the limit.
    pub(super) fn enter(&mut self, span: Span) -> Result<(), Diag> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(
                Diag::new(span, format!("blocks nested deeper than {MAX_DEPTH}"))
                    .label("too deep")
                    .help("hardware sequences need a few levels at most; flatten the spec"),
            );
        }
        Ok(())
    }

    pub(super) fn block(&mut self) -> Result<Vec<Stmt>, Diag> {
        let open = self.expect(Tok::LBrace)?;
        self.enter(open)?;
        let mut body = Vec::new();
        loop {
            self.skip_semis();
            if self.eat(&Tok::RBrace) {
                break;
            }
            if *self.peek() == Tok::Eof {
                return Err(Diag::new(open, "unclosed `{`").label("this block is never closed"));
            }
            SEQ_STMTS.count(self.span(), &mut self.stmts)?;
            body.push(self.stmt()?);
        }
        self.depth -= 1;
        // Most blocks hold one or two statements; a Vec grows to four
        // (300 bytes each): a large spec's AST was mostly spare capacity.
        body.shrink_to_fit();
        Ok(body)
    }
}
