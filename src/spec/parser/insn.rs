//! CPU instructions named in a spec: invalidations (statements and a
//! granule's `via`) and barriers, with the target-specific words that
//! become part of the instruction's name (`tlbi vale1is`, `tlbie 2,1,1`,
//! `sfence.vma x0`, `fence rw,w`, `dsb ish`).

use super::Parser;
use crate::spec::ast::*;
use crate::spec::diag::{Diag, Span};
use crate::spec::lexer::Tok;

impl Parser<'_> {
    /// `sfence.vma` / `sinval.vma` (RISC-V): the name, unless the words
    /// are a device access (`sfence.vma = ...`, `sfence.vma.f = ...`).
    pub(super) fn riscv_invalidate_ahead(&self) -> bool {
        matches!(self.peek(), Tok::Ident("sfence" | "sinval"))
            && self.peek_at(1) == &Tok::Dot
            && self.peek_at(2) == &Tok::Ident("vma")
            && !matches!(self.peek_at(3), Tok::Dot | Tok::Assign)
    }
    /// `sfence.vma` or `sinval.vma`, then ` x0` when its first operand is
    /// the zero register (every address of one ASID): the name an
    /// invalidation and a granule's `via` share.
    fn riscv_invalidate_name(&mut self) -> Result<Ident, Diag> {
        let mut id = self.ident("`sfence` or `sinval`")?;
        self.expect(Tok::Dot)?;
        let vma = self.ident("`vma`")?;
        id.name = format!("{}.vma", id.name);
        id.span = id.span.to(vma.span);
        if self.on_same_line() && self.is_kw("x0") {
            let x0 = self.bump();
            id.name.push_str(" x0");
            id.span = id.span.to(x0);
            self.eat(&Tok::Comma);
        }
        Ok(id)
    }
    /// A RISC-V barrier: `fence PRED,SUCC`, `fence.i`, `sfence.w.inval`,
    /// `sfence.inval.ir` (dotted names and comma-separated sets that the
    /// word-by-word barrier names of other targets do not have).
    fn riscv_barrier(&mut self, mut name: Ident) -> Result<Ident, Diag> {
        while self.peek() == &Tok::Dot && matches!(self.peek_at(1), Tok::Ident(_)) {
            self.bump();
            let part = self.ident("a barrier name")?;
            name.name = format!("{}.{}", name.name, part.name);
            name.span = name.span.to(part.span);
        }
        if name.name == "fence" && self.on_same_line() {
            let pred = self.ident("a FENCE predecessor set (`rw`, `w`, `iorw`...)")?;
            self.expect(Tok::Comma)?;
            let succ = self.ident("a FENCE successor set")?;
            name.name = format!("fence {},{}", pred.name, succ.name);
            name.span = name.span.to(succ.span);
        }
        Ok(name)
    }

    /// `KW OP`: an instruction whose second word names the operation
    /// (`tlbi vale1is`, `tlbilx va`); `what` describes that word.
    fn with_operation_word(&mut self, kw: &Ident, what: &str) -> Result<Ident, Diag> {
        let op = self.ident(what)?;
        Ok(Ident {
            name: format!("{} {}", kw.name, op.name),
            span: kw.span.to(op.span),
        })
    }

    /// The instruction after a granule's `via`: a RISC-V invalidation,
    /// `tlbi OP`, `tlbie`/`tlbiel` with its RIC, PRS and R, or one word
    /// (a register or another instruction).
    pub(super) fn via_insn(&mut self) -> Result<Ident, Diag> {
        if matches!(self.peek(), Tok::Ident("sfence" | "sinval")) && self.peek_at(1) == &Tok::Dot {
            return self.riscv_invalidate_name();
        }
        let first = self.ident("a register or instruction")?;
        if first.name == "tlbi" {
            return self.with_operation_word(&first, "a TLBI operation");
        }
        if matches!(first.name.as_str(), "tlbie" | "tlbiel") && matches!(self.peek(), Tok::Int(..))
        {
            return self.tlbie_fields(first);
        }
        Ok(first)
    }

    /// `RIC, PRS, R` after a `via tlbie`/`via tlbiel`: the fields that
    /// make the operation, folded into its name as checking folds a
    /// statement's (`crate::spec::insn_imm`).
    fn tlbie_fields(&mut self, first: Ident) -> Result<Ident, Diag> {
        let mut vals = Vec::new();
        for (i, what) in ["RIC", "PRS", "R"].iter().enumerate() {
            if i > 0 {
                self.expect(Tok::Comma)?;
            }
            let (v, _) = self.int(what)?;
            vals.push(v);
        }
        let limits = [3, 1, 1];
        if let Some(i) = (0..3).find(|&i| vals[i] > limits[i]) {
            return Err(Diag::new(
                self.prev_span(),
                format!(
                    "`{}`'s {} is 0..={}, got {}",
                    first.name,
                    ["RIC", "PRS", "R"][i],
                    limits[i],
                    vals[i]
                ),
            )
            .label("out of range"));
        }
        Ok(Ident {
            name: crate::spec::insn_imm::name_with(&first.name, &vals),
            span: first.span.to(self.prev_span()),
        })
    }

    /// After `barrier`.
    pub(super) fn barrier_stmt(&mut self, start: Span) -> Result<Stmt, Diag> {
        let name = self.ident("a barrier instruction name")?;
        if matches!(name.name.as_str(), "fence" | "sfence") {
            let full = self.riscv_barrier(name)?;
            return Ok(Stmt::Barrier {
                span: start.to(full.span),
                name: full,
            });
        }
        // Barrier operands such as `dsb ish` are part of the name.
        let mut full = name.clone();
        while let Tok::Ident(s) = *self.peek() {
            if self.peek_at(1) == &Tok::Dot || self.peek_at(1) == &Tok::Assign {
                break;
            }
            if !is_barrier_operand(s) {
                break;
            }
            let span = self.bump();
            full.name.push(' ');
            full.name.push_str(s);
            full.span = full.span.to(span);
        }
        Ok(Stmt::Barrier {
            span: start.to(full.span),
            name: full,
        })
    }

    /// A CPU invalidation instruction with its operands (`riscv`: a
    /// RISC-V `sfence.vma`/`sinval.vma`, whose operands end with its line).
    pub(super) fn invalidate_stmt(&mut self, start: Span, riscv: bool) -> Result<Stmt, Diag> {
        let kw = if riscv {
            self.riscv_invalidate_name()?
        } else {
            self.ident("an invalidation instruction")?
        };
        let mut name = kw.clone();
        let mut operands = Vec::new();
        if riscv {
            // Operands on the instruction's line, as in GNU as.
            if self.on_same_line() && !matches!(self.peek(), Tok::RBrace | Tok::Eof) {
                operands = self.expr_list()?;
            }
        } else if kw.name == "tlbi" || kw.name == "tlbilx" {
            name = if kw.name == "tlbi" {
                self.with_operation_word(&kw, "a TLBI operation (e.g. vale1is)")?
            } else {
                self.with_operation_word(&kw, "what tlbilx invalidates: `all`, `pid` or `va`")?
            };
            if self.eat(&Tok::Comma) {
                operands.push(self.expr()?);
                // `tlbilx va, EA, MAS6`
                while kw.name == "tlbilx" && self.eat(&Tok::Comma) {
                    operands.push(self.expr()?);
                }
            }
        } else if kw.name == "tlbwe" {
            // No operands: the entry is in MAS0-MAS3 and MAS7.
            if self.on_same_line()
                && !matches!(self.peek(), Tok::RBrace | Tok::Eof)
                && !self.is_kw("after")
            {
                operands = self.expr_list()?;
            }
        } else {
            operands = self.expr_list()?;
        }
        let after = self.after_invalidates()?;
        Ok(Stmt::Invalidate {
            span: start.to(self.prev_span()),
            name,
            operands,
            after,
        })
    }

    /// A Book III-E TLB-entry, MAS or MSR[EE] instruction: `mtspr SPR,
    /// VALUE`, `tlbsx EA`, `tlbre`, `wrteei 0|1`, `wrtee VALUE` (`tlbwe`
    /// is an invalidation: it replaces an entry).
    pub(super) fn sys_stmt(&mut self, start: Span) -> Result<Stmt, Diag> {
        let name = self.ident("`mtspr`, `tlbsx`, `tlbre`, `wrteei` or `wrtee`")?;
        let mut spr = None;
        let mut operands = Vec::new();
        match name.name.as_str() {
            "mtspr" => {
                spr = Some(self.ident("a special-purpose register (`MAS1`)")?);
                self.expect(Tok::Comma)?;
                operands.push(self.expr()?);
            }
            "tlbsx" | "wrtee" | "wrteei" => operands.push(self.expr()?),
            _ => {}
        }
        Ok(Stmt::Sys {
            span: start.to(self.prev_span()),
            name,
            spr,
            operands,
        })
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

/// Statements that issue a CPU invalidation instruction.
pub(super) fn is_invalidate_kw(s: &str) -> bool {
    matches!(
        s,
        "tlbi" | "tlbie" | "tlbiel" | "slbia" | "tlbilx" | "tlbivax" | "tlbwe" | "invlpg"
    )
}

/// Statements that move a special-purpose register or use the TLB-entry
/// registers without invalidating (Book III-E).
pub(super) fn is_sys_kw(s: &str) -> bool {
    matches!(s, "mtspr" | "tlbsx" | "tlbre" | "wrteei" | "wrtee")
}

/// Words that continue a `barrier` statement (`barrier dsb ish`).
fn is_barrier_operand(s: &str) -> bool {
    matches!(
        s,
        "sy" | "st"
            | "ld"
            | "ish"
            | "ishst"
            | "ishld"
            | "osh"
            | "oshst"
            | "oshld"
            | "nsh"
            | "nshst"
            | "nshld"
    )
}
