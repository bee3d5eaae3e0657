//! The token cursor: looking at, stepping past and expecting tokens,
//! and the "expected X, found Y" diagnostic.

use super::Parser;
use crate::spec::ast::Ident;
use crate::spec::diag::{Diag, Span};
use crate::spec::lexer::{Tok, Token};

impl<'a> Parser<'a> {
    /// Token `i`, the end of file past the last.
    fn at(&self, i: usize) -> &Token<'a> {
        self.toks.get(i).unwrap_or(&self.eof)
    }
    pub(super) fn peek(&self) -> &Tok<'a> {
        &self.at(self.pos).tok
    }
    pub(super) fn peek_at(&self, n: usize) -> &Tok<'a> {
        &self.at(self.pos + n).tok
    }
    pub(super) fn span(&self) -> Span {
        self.at(self.pos).span
    }
    pub(super) fn prev_span(&self) -> Span {
        self.at(self.pos.saturating_sub(1)).span
    }
    /// Does the current token start on the line the previous one ended
    /// on? (Operands of a RISC-V instruction follow it on its line.)
    pub(super) fn on_same_line(&self) -> bool {
        let prev = self.prev_span();
        let gap = self.src.get(prev.offset + prev.len..self.span().offset);
        gap.is_some_and(|g| !g.contains(['\n', '\r']))
    }
    /// Step past the current token; its span (tokens are read in place
    /// through `peek`, never cloned: identifiers own their text).
    pub(super) fn bump(&mut self) -> Span {
        let span = self.span();
        if self.pos < self.toks.len() {
            self.pos += 1;
        }
        span
    }
    pub(super) fn eat(&mut self, t: &Tok<'_>) -> bool {
        if self.peek() == t {
            self.bump();
            true
        } else {
            false
        }
    }
    pub(super) fn is_kw(&self, kw: &str) -> bool {
        matches!(self.peek(), Tok::Ident(s) if *s == kw)
    }
    pub(super) fn eat_kw(&mut self, kw: &str) -> bool {
        if self.is_kw(kw) {
            self.bump();
            true
        } else {
            false
        }
    }
    pub(super) fn unexpected(&self, wanted: &str) -> Diag {
        Diag::new(
            self.span(),
            format!("expected {wanted}, found {}", self.peek().describe()),
        )
        .label(format!("expected {wanted}"))
    }
    pub(super) fn expect(&mut self, t: Tok<'_>) -> Result<Span, Diag> {
        if self.peek() == &t {
            Ok(self.bump())
        } else {
            Err(self.unexpected(&t.describe()))
        }
    }
    pub(super) fn expect_kw(&mut self, kw: &str) -> Result<Span, Diag> {
        if self.is_kw(kw) {
            Ok(self.bump())
        } else {
            Err(self.unexpected(&format!("`{kw}`")))
        }
    }
    pub(super) fn ident(&mut self, what: &str) -> Result<Ident, Diag> {
        match self.peek() {
            Tok::Ident(name) => {
                let name = name.to_string();
                let span = self.bump();
                Ok(Ident { name, span })
            }
            _ => Err(self.unexpected(what)),
        }
    }
    pub(super) fn int(&mut self, what: &str) -> Result<(u64, Span), Diag> {
        match *self.peek() {
            Tok::Int(v) => {
                let span = self.bump();
                Ok((v, span))
            }
            _ => Err(self.unexpected(what)),
        }
    }
    /// The value of whichever keyword of `choices` comes next (eaten).
    pub(super) fn eat_one_of<T: Copy>(&mut self, choices: &[(&str, T)]) -> Option<T> {
        choices
            .iter()
            .find(|(kw, _)| self.eat_kw(kw))
            .map(|&(_, v)| v)
    }

    pub(super) fn skip_semis(&mut self) {
        while self.eat(&Tok::Semi) {}
    }

    /// After a `(`: `item`s separated by `,` up to the `)`, which it eats.
    pub(super) fn paren_list<T>(
        &mut self,
        mut item: impl FnMut(&mut Self) -> Result<T, Diag>,
    ) -> Result<Vec<T>, Diag> {
        let mut items = Vec::new();
        if !self.eat(&Tok::RParen) {
            loop {
                items.push(item(self)?);
                if self.eat(&Tok::RParen) {
                    break;
                }
                self.expect(Tok::Comma)?;
            }
        }
        Ok(items)
    }
}
