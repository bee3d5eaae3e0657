//! `granules NAME [on DEV] { ... }`: the sizes a `cover` can invalidate
//! (each with its register settings and instruction) and their costs.

use super::Parser;
use crate::spec::ast::*;
use crate::spec::diag::{Diag, Span};
use crate::spec::lexer::Tok;

impl Parser<'_> {
    pub(super) fn granules(&mut self) -> Result<Granules, Diag> {
        let start = self.expect_kw("granules")?;
        let name = self.ident("a granule set name")?;
        let dev = if self.eat_kw("on") {
            Some(self.ident("a device name")?)
        } else {
            None
        };
        self.expect(Tok::LBrace)?;
        let mut g = Granules {
            name,
            dev,
            entries: Vec::new(),
            costs: Vec::new(),
            span: start,
        };
        loop {
            self.skip_semis();
            if self.eat(&Tok::RBrace) {
                break;
            }
            let estart = self.span();
            if self.eat_kw("cost") {
                g.costs.push(self.granule_cost(estart)?);
                continue;
            }
            g.entries.push(self.granule(estart)?);
        }
        g.span = start.to(self.prev_span());
        Ok(g)
    }

    /// After `cost` (the entry starting at `estart`): `KIND N [ns|us|ms]`,
    /// the cost in nanoseconds.
    fn granule_cost(&mut self, estart: Span) -> Result<(Ident, u64), Diag> {
        let kind = self.ident("a cost kind (invalidate, store, barrier, refill, all)")?;
        let (v, _) = self.int("a cost")?;
        let mult = self
            .eat_one_of(&[("ns", 1), ("us", 1000), ("ms", 1_000_000)])
            .unwrap_or(1);
        let v = v
            .checked_mul(mult)
            .ok_or_else(|| Diag::new(estart.to(self.prev_span()), "cost too large"))?;
        Ok((kind, v))
    }

    /// One granule (starting at `estart`): its size, then any of
    /// `set REG.FIELD = E`, `addr REG` and `via INSTRUCTION`.
    fn granule(&mut self, estart: Span) -> Result<Granule, Diag> {
        let size = self.granule_size()?;
        let mut e = Granule {
            size,
            sets: Vec::new(),
            addr: None,
            via: None,
            span: estart,
        };
        loop {
            if self.eat_kw("set") {
                let reg = self.ident("a register")?;
                self.expect(Tok::Dot)?;
                let field = self.ident("a field")?;
                self.expect(Tok::Assign)?;
                let v = self.expr()?;
                e.sets.push((reg, field, v));
            } else if self.eat_kw("addr") {
                e.addr = Some(self.ident("the register holding the address")?);
            } else if self.eat_kw("via") {
                e.via = Some(self.via_insn()?);
            } else {
                break;
            }
        }
        e.span = estart.to(self.prev_span());
        Ok(e)
    }

    /// A granule's size: `N`, `all`, `range` or `size PARAM`.
    fn granule_size(&mut self) -> Result<GranuleSize, Diag> {
        Ok(match *self.peek() {
            Tok::Int(v) => {
                self.bump();
                GranuleSize::Bytes(v)
            }
            Tok::Ident("all") => {
                self.bump();
                GranuleSize::All
            }
            Tok::Ident("range") => {
                self.bump();
                GranuleSize::Range
            }
            Tok::Ident("size") => {
                self.bump();
                GranuleSize::Param(self.ident("a parameter giving the size")?)
            }
            _ => return Err(self.unexpected("a size (e.g. 64K), `size PARAM`, `all` or `cost`")),
        })
    }
}
