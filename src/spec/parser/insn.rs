//! CPU instructions named in a spec: invalidations and system-register
//! moves (statements), a granule's `via`, and barriers. Which words are
//! instructions and how their operands read is the registered ISAs'
//! business ([`crate::spec::syntax`]); this file reads the shapes.

use super::Parser;
use crate::spec::ast::*;
use crate::spec::diag::{Diag, Span};
use crate::spec::lexer::Tok;
use crate::spec::syntax::{self, ImmForm, Insn, Kind, Operands};

impl Parser<'_> {
    /// The statement instruction that starts here, if one does: its
    /// mnemonic's words (`sfence . vma`), not followed by what makes them
    /// a device, local or memory of that name (`sfence.vma = ...`,
    /// `tlbie.reg = ...`, `mtspr[0] = ...`).
    pub(super) fn insn_ahead(&self) -> Option<&'static Insn> {
        let (insn, n) = self.mnemonic_ahead()?;
        (!matches!(self.peek_at(n), Tok::Dot | Tok::Assign | Tok::LBracket)).then_some(insn)
    }

    /// The registered mnemonic spelled by the next tokens, and how many
    /// tokens it takes; a dotted one wins over its first word.
    fn mnemonic_ahead(&self) -> Option<(&'static Insn, usize)> {
        let dotted = syntax::dotted_insns().find_map(|i| {
            let words = i.mnemonic.split('.');
            let matched = words.enumerate().all(|(k, w)| {
                (k == 0 || self.peek_at(2 * k - 1) == &Tok::Dot)
                    && self.peek_at(2 * k) == &Tok::Ident(w)
            });
            matched.then(|| (i, 2 * i.mnemonic.split('.').count() - 1))
        });
        if dotted.is_some() {
            return dotted;
        }
        match *self.peek() {
            Tok::Ident(w) => syntax::insn(w).map(|i| (i, 1)),
            _ => None,
        }
    }

    /// An instruction's name: its mnemonic, and the words its shape folds
    /// into the name (an operation word, the zero register).
    fn insn_name(&mut self, insn: &Insn) -> Result<Ident, Diag> {
        let mut id = self.ident("an instruction")?;
        for _ in insn.mnemonic.split('.').skip(1) {
            self.expect(Tok::Dot)?;
            let part = self.ident("the rest of the instruction's name")?;
            id.name = format!("{}.{}", id.name, part.name);
            id.span = id.span.to(part.span);
        }
        match insn.operands {
            Operands::Operation { what, .. } => {
                let op = self.ident(what)?;
                id.name = format!("{} {}", id.name, op.name);
                id.span = id.span.to(op.span);
            }
            Operands::Line { zero } if self.on_same_line() && self.is_kw(zero) => {
                let z = self.bump();
                id.name.push(' ');
                id.name.push_str(zero);
                id.span = id.span.to(z);
                self.eat(&Tok::Comma);
            }
            _ => {}
        }
        Ok(id)
    }

    /// The operands after an instruction's name, as its shape reads them:
    /// the special-purpose register it moves, if any, and the values.
    fn insn_operands(&mut self, shape: Operands) -> Result<(Option<Ident>, Vec<Expr>), Diag> {
        let line_ends = |p: &Self| !p.on_same_line() || matches!(p.peek(), Tok::RBrace | Tok::Eof);
        let mut operands = Vec::new();
        let mut spr = None;
        match shape {
            Operands::List => operands = self.expr_list()?,
            Operands::Operation { max, .. } => {
                while operands.len() < max && self.eat(&Tok::Comma) {
                    operands.push(self.expr()?);
                }
            }
            Operands::Line { .. } => {
                if !line_ends(self) {
                    operands = self.expr_list()?;
                }
            }
            Operands::Optional => {
                if !line_ends(self) && !self.is_kw("after") {
                    operands = self.expr_list()?;
                }
            }
            Operands::Spr { what } => {
                spr = Some(self.ident(what)?);
                self.expect(Tok::Comma)?;
                operands.push(self.expr()?);
            }
            Operands::One => operands.push(self.expr()?),
            Operands::None => {}
        }
        Ok((spr, operands))
    }

    /// A statement instruction ([`Self::insn_ahead`] found it): a CPU
    /// invalidation, or a system-register move or TLB-entry access.
    pub(super) fn insn_stmt(&mut self, start: Span, insn: &Insn) -> Result<Stmt, Diag> {
        let name = self.insn_name(insn)?;
        let (spr, operands) = self.insn_operands(insn.operands)?;
        Ok(match insn.kind {
            Kind::Invalidate => {
                let after = self.after_invalidates()?;
                Stmt::Invalidate {
                    span: start.to(self.prev_span()),
                    name,
                    operands,
                    after,
                }
            }
            Kind::Sys => Stmt::Sys {
                span: start.to(self.prev_span()),
                name,
                spr,
                operands,
            },
        })
    }

    /// The instruction after a granule's `via`: an invalidation's name
    /// (with its operation word or zero register), with its immediate
    /// fields when numbers follow (`via tlbie 0, 1, 1`), or one word (a
    /// register or another instruction).
    pub(super) fn via_insn(&mut self) -> Result<Ident, Diag> {
        if let Some((insn, _)) = self.mnemonic_ahead() {
            if insn.kind == Kind::Invalidate {
                let name = self.insn_name(insn)?;
                return match syntax::imm_form(&name.name) {
                    Some(form)
                        if !form.fields.is_empty() && matches!(self.peek(), Tok::Int(..)) =>
                    {
                        self.imm_fields(name, form)
                    }
                    _ => Ok(name),
                };
            }
        }
        self.ident("a register or instruction")
    }

    /// The immediate fields after a `via` instruction, folded into its
    /// name as checking folds a statement's (`crate::spec::insn_imm`).
    fn imm_fields(&mut self, first: Ident, form: &ImmForm) -> Result<Ident, Diag> {
        let mut vals = Vec::new();
        for (i, (field, _)) in form.fields.iter().enumerate() {
            if i > 0 {
                self.expect(Tok::Comma)?;
            }
            let (v, _) = self.int(&field.to_uppercase())?;
            vals.push(v);
        }
        if let Some(((field, max), v)) =
            form.fields.iter().zip(&vals).find(|((_, max), v)| *v > max)
        {
            return Err(Diag::new(
                self.prev_span(),
                format!(
                    "`{}`'s {} is 0..={max}, got {v}",
                    first.name,
                    field.to_uppercase()
                ),
            )
            .label("out of range"));
        }
        Ok(Ident {
            name: crate::spec::insn_imm::name_with(&first.name, &vals),
            span: first.span.to(self.prev_span()),
        })
    }

    /// After `barrier`: the name, with the words that belong to it (`dsb
    /// ish`, `fence.i`, `fence rw,w`).
    pub(super) fn barrier_stmt(&mut self, start: Span) -> Result<Stmt, Diag> {
        let name = self.ident("a barrier instruction name")?;
        let full = if syntax::is_dotted_barrier(&name.name) {
            self.dotted_barrier(name)?
        } else {
            self.barrier_options(name)
        };
        Ok(Stmt::Barrier {
            span: start.to(full.span),
            name: full,
        })
    }

    /// A barrier whose name goes on with `.WORD`s, then a `PRED,SUCC`
    /// pair on its line if it takes one.
    fn dotted_barrier(&mut self, mut name: Ident) -> Result<Ident, Diag> {
        while self.peek() == &Tok::Dot && matches!(self.peek_at(1), Tok::Ident(_)) {
            self.bump();
            let part = self.ident("a barrier name")?;
            name.name = format!("{}.{}", name.name, part.name);
            name.span = name.span.to(part.span);
        }
        if let Some(sets) = syntax::set_barrier(&name.name) {
            if self.on_same_line() {
                let pred = self.ident(sets.pred)?;
                self.expect(Tok::Comma)?;
                let succ = self.ident(sets.succ)?;
                name.name = format!("{} {},{}", name.name, pred.name, succ.name);
                name.span = name.span.to(succ.span);
            }
        }
        Ok(name)
    }

    /// Barrier options are part of the name (`dsb ish`); a word followed
    /// by `.` or `=` starts the next statement instead.
    fn barrier_options(&mut self, mut full: Ident) -> Ident {
        while let Tok::Ident(s) = *self.peek() {
            if self.peek_at(1) == &Tok::Dot || self.peek_at(1) == &Tok::Assign {
                break;
            }
            if !syntax::is_barrier_option(s) {
                break;
            }
            let span = self.bump();
            full.name.push(' ');
            full.name.push_str(s);
            full.span = full.span.to(span);
        }
        full
    }

    /// `[after invalidates]` ending an invalidation: its span.
    fn after_invalidates(&mut self) -> Result<Option<Span>, Diag> {
        // `after invalidates`; a device named `after` on the next line
        // reads `after.reg = ...`, never `after invalidates`.
        if !(self.is_kw("after") && matches!(self.peek_at(1), Tok::Ident(_))) {
            return Ok(None);
        }
        let a = self.ident("`after`")?;
        let w = self.ident("`invalidates`")?;
        if w.name != "invalidates" {
            return Err(Diag::new(w.span, format!("`after {}` is not an ordering", w.name))
                .label("expected `invalidates`")
                .help("`INVALIDATION after invalidates` orders one invalidation after every earlier one; order stores with `order stores before invalidates`"));
        }
        Ok(Some(a.span.to(w.span)))
    }
}
