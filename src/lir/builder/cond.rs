//! Conditions into branches: `&&`, `||` and `!` of comparisons are
//! branch chains, not 0/1 values combined with `and`/`or` and tested.
//!
//! Expressions are pure (register reads are placed before the statement
//! that uses them), so evaluating the right operand only when the left
//! one does not decide is the same value; it saves materializing each
//! comparison (x86-64 and POWER: `li 1; branch; li 0` each) and the
//! combining arithmetic. Values first computed in a right operand are
//! available only on the paths through it, so they leave the value cache
//! with it.

use super::*;

impl Builder<'_> {
    /// To `target` when `cmp(a, b)` does not hold, else on.
    pub(super) fn branch_unless(&mut self, cond: &crate::ir::Cond, target: LabelId) {
        match (cond.cmp, cond.b.as_const()) {
            (Cmp::Ne, Some(0)) if cond.a.is_truth() => self.branch_on(&cond.a, false, target),
            (Cmp::Eq, Some(0)) if cond.a.is_truth() => self.branch_on(&cond.a, true, target),
            _ => self.branch_cmp(cond.cmp.inverse(), &cond.a, &cond.b, target),
        }
    }

    /// To `target` when the truth value `e` (0 or 1) is `sense`, else on.
    pub(super) fn branch_on(&mut self, e: &Expr, sense: bool, target: LabelId) {
        match e {
            Expr::Bin(op @ (BinOp::And | BinOp::Or), x, y) if x.is_truth() && y.is_truth() => {
                // `x && y` is decided false by `x` alone, `x || y` true.
                let decided_by_x = *op == BinOp::Or;
                if sense == decided_by_x {
                    self.branch_on(x, sense, target);
                    self.scoped(|b| b.branch_on(y, sense, target));
                } else {
                    let on = self.label();
                    self.branch_on(x, decided_by_x, on);
                    self.scoped(|b| b.branch_on(y, sense, target));
                    self.emit(Inst::Label(on));
                }
            }
            Expr::Cmp(..) => {
                let c = crate::ir::Cond::of(e.clone());
                match (c.cmp, c.b.as_const()) {
                    // `!t` and `t != 0` of a truth value.
                    (Cmp::Eq, Some(0)) if c.a.is_truth() => self.branch_on(&c.a, !sense, target),
                    (Cmp::Ne, Some(0)) if c.a.is_truth() => self.branch_on(&c.a, sense, target),
                    _ => {
                        let cmp = if sense { c.cmp } else { c.cmp.inverse() };
                        self.branch_cmp(cmp, &c.a, &c.b, target);
                    }
                }
            }
            Expr::Const(c) => {
                if (*c != 0) == sense {
                    self.emit(Inst::Jump(target));
                }
            }
            _ => {
                let cmp = if sense { Cmp::Ne } else { Cmp::Eq };
                self.branch_cmp(cmp, e, &Expr::Const(0), target);
            }
        }
    }

    fn branch_cmp(&mut self, cmp: Cmp, a: &Expr, b: &Expr, target: LabelId) {
        let a = self.expr(a);
        let b = self.operand(b);
        self.branch(cmp, a, b, target);
    }

    /// To `target` when `cmp(a, b)` holds, else on: the operands already
    /// in hand.
    pub(super) fn branch(&mut self, cmp: Cmp, a: VReg, b: Operand, target: LabelId) {
        self.emit(Inst::Branch { cmp, a, b, target });
    }

    /// Values computed in `f` are forgotten after it: it runs on some
    /// paths only.
    fn scoped(&mut self, f: impl FnOnce(&mut Self)) {
        let saved = self.scope();
        f(self);
        self.unscope(saved);
    }
}
