//! `assume COND`: what the caller guarantees of the parameters.

use super::seq::SeqCx;
use crate::ir::facts::{self, Assume, Unusable};
use crate::ir::*;
use crate::spec::ast;
use crate::spec::diag::Diag;

impl SeqCx<'_> {
    pub(super) fn assume(&mut self, cond: &ast::Expr, span: &Span) -> Result<Stmt, Diag> {
        if self.started {
            return Err(Diag::new(*span, "`assume` after the sequence's first statement")
                .label("not at the top")
                .help("write each `assume` at the top of the sequence: it is a precondition of the whole call"));
        }
        let before = self.pending.len();
        let e = self.expr(cond, None)?;
        if self.pending.len() != before || !only_params(&e) {
            return Err(
                Diag::new(*span, "`assume` reads only parameters and constants")
                    .label("reads something else")
                    .help("e.g. `assume cpu < 255` or `assume (start & 0xfff) == 0`"),
            );
        }
        let text = e.display(self.params).to_string();
        self.assumes.push(Assume {
            cond: Cond::of(e),
            text,
            span: *span,
        });
        match facts::params_known(self.params.len(), &self.assumes) {
            Ok(_) => {}
            Err(Unusable::Shape(_)) => {
                return Err(Diag::new(*span, "`assume` of a shape shootdown cannot use")
                    .label("not a parameter against a constant")
                    .help("write one parameter compared with a constant (`cpu < 255`, `size >= 4096`, `asid != 0`) or an alignment (`(start & 0xfff) == 0`), one `assume` each"))
            }
            Err(Unusable::Empty(_)) => {
                return Err(Diag::new(*span, "no value of the parameter satisfies this `assume`")
                    .label("never holds")
                    .help("with the `assume`s before it, no call could meet it"))
            }
        }
        // A declaration: it leaves no statement behind.
        Ok(Stmt::Barrier {
            name: BarrierName::Spelled(String::new()),
            origin: Origin::Spec(*span),
            covers: Vec::new(),
        })
    }
}

fn only_params(e: &Expr) -> bool {
    match e {
        Expr::Param(_) | Expr::Const(_) => true,
        Expr::Bin(..) | Expr::Cmp(..) | Expr::Not(_) => e.children().into_iter().all(only_params),
        _ => false,
    }
}
