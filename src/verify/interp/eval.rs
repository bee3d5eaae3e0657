//! Expressions under the bindings in force: `$addr`, `$size`... inside a
//! cover instantiation, `threshold(SET)` anywhere.

use super::Machine;
use crate::ir::expr::{Binding, Expr};
use crate::ir::Cond;
use crate::model;

impl Machine<'_> {
    /// `threshold(SET)` as the cover pass resolves it.
    fn threshold_of(&self, set: usize) -> u64 {
        model::expr_threshold(self.prog, &self.seq.name, set, &self.world.cover.pins)
            .map_or(u64::MAX, |t| t.value)
    }

    pub(super) fn eval(&self, e: &crate::ir::Expr) -> u64 {
        match &self.cover {
            Some(c) if e.uses_binding() => {
                let (a, b, z, n, sc) = (c.addr, c.bits, c.size, c.num, c.scale);
                let reg_bits = &c.reg_bits;
                e.bind(&|x| match x {
                    Binding::Addr => Expr::Const(a),
                    Binding::Bits => Expr::Const(b),
                    Binding::RegBits(r) => Expr::Const(
                        reg_bits
                            .iter()
                            .find(|(x, _)| *x == r)
                            .map_or(0, |(_, v)| *v),
                    ),
                    Binding::Size => Expr::Const(z),
                    Binding::Num => Expr::Const(n),
                    Binding::Scale => Expr::Const(sc),
                    Binding::Threshold(s) => Expr::Const(self.threshold_of(s)),
                })
                .eval_with(&self.world.params, &self.locals)
            }
            _ if e.uses_binding() => e
                .bind(&|x| match x {
                    Binding::Threshold(s) => Expr::Const(self.threshold_of(s)),
                    other => Expr::Binding(other),
                })
                .eval_with(&self.world.params, &self.locals),
            _ => e.eval_with(&self.world.params, &self.locals),
        }
    }

    /// Does the condition hold?
    pub(super) fn holds(&self, cond: &Cond) -> bool {
        let (a, b) = (self.eval(&cond.a), self.eval(&cond.b));
        cond.cmp.holds(a, b)
    }
}
