//! Expressions into registers: the value cache, immediates, selects and
//! the built-in functions.

use super::*;

impl Builder<'_> {
    pub(super) fn expr(&mut self, e: &Expr) -> VReg {
        if let Expr::Param(i) = e {
            return self.arg_of(&ArgKind::Param(*i));
        }
        if let Expr::Local(l) = e {
            return self.locals[l];
        }
        if let Some(v) = self.values.get(e) {
            if !e.uses_locals() || self.local_value_fresh(e) {
                return *v;
            }
        }
        let v = match e {
            Expr::Local(_) => unreachable!("handled above"),
            // The cover pass replaces every binding before lowering; a
            // patched feature is only ever a dispatch condition (handled
            // at the `if`), whose unpatched value is 0.
            Expr::Binding(_) | Expr::Feature(_) => {
                let d = self.vreg();
                self.emit(Inst::Imm { dst: d, value: 0 });
                d
            }
            Expr::Const(c) => {
                let d = self.vreg();
                self.emit(Inst::Imm { dst: d, value: *c });
                d
            }
            Expr::Param(_) => unreachable!("handled above"),
            Expr::Not(a) => {
                let a = self.expr(a);
                let d = self.vreg();
                self.emit(Inst::Not { dst: d, src: a });
                d
            }
            Expr::Insert {
                value,
                shift,
                width,
            } => {
                let a = self.expr(value);
                let d = self.vreg();
                self.emit(Inst::Insert {
                    dst: d,
                    src: a,
                    shift: *shift,
                    width: *width,
                });
                d
            }
            // `x && y`, `x || y` of comparisons, where a comparison's
            // value costs a branch anyway: one branch chain setting 0 or 1.
            Expr::Bin(BinOp::And | BinOp::Or, ..) if e.is_truth() && !self.target.set_cmp() => {
                let d = self.vreg();
                let done = self.label();
                self.emit(Inst::Imm { dst: d, value: 0 });
                self.branch_on(e, false, done);
                self.emit(Inst::Imm { dst: d, value: 1 });
                self.emit(Inst::Label(done));
                d
            }
            Expr::Bin(op, a, b) => {
                // Immediate right operands where targets have such forms.
                let av = self.expr(a);
                let bo = match (op, b.as_const()) {
                    (_, Some(c)) => Operand::Imm(c),
                    _ => Operand::Reg(self.expr(b)),
                };
                let d = self.vreg();
                self.emit(Inst::Bin {
                    op: *op,
                    dst: d,
                    a: av,
                    b: bo,
                });
                match (op, bo) {
                    // A run-time amount of 64 or more shifts every bit out;
                    // the instructions take it modulo 64 (POWER: 128).
                    (BinOp::Shl | BinOp::Shr, Operand::Reg(n)) => {
                        let zero = self.constant(0);
                        self.select(Cmp::Geu, n, Operand::Imm(64), zero, d)
                    }
                    _ => d,
                }
            }
            Expr::Cmp(..) => self.truth_value(e),
            Expr::Call(f, args) => self.call(*f, args),
        };
        self.remember(e, v);
        v
    }

    /// A comparison's truth value, 1 or 0, in a register.
    fn truth_value(&mut self, e: &Expr) -> VReg {
        let c = crate::ir::Cond::of(e.clone());
        let a = self.expr(&c.a);
        let b = self.operand(&c.b);
        // 1 and 0 as immediates, not cached registers: a cached
        // constant stays live to the end of the function, and a
        // sequence with many conditions ran out of registers.
        let d = self.vreg();
        if self.target.set_cmp() {
            self.emit(Inst::SetCmp {
                cmp: c.cmp,
                dst: d,
                a,
                b,
            });
        } else {
            let done = self.label();
            self.emit(Inst::Imm { dst: d, value: 1 });
            self.branch(c.cmp, a, b, done);
            self.emit(Inst::Imm { dst: d, value: 0 });
            self.emit(Inst::Label(done));
        }
        d
    }

    /// Keeps `v` as `e`'s value in the cache (with the generation of the
    /// locals it reads, if any), for this scope.
    fn remember(&mut self, e: &Expr, v: VReg) {
        if self.cache {
            if e.uses_locals() {
                // Replaces a stale entry, maybe of an outer scope: logged
                // here, so that leaving this scope forgets it.
                let bindings = self.local_bindings(e);
                self.value_locals
                    .insert(e.clone(), (self.local_gen, bindings));
                self.values.insert(e.clone(), v);
                self.scope_log.push(e.clone());
            } else if self.values.insert(e.clone(), v).is_none() {
                self.scope_log.push(e.clone());
            }
        }
    }

    /// `e` in a register no one else holds (the caller changes it in
    /// place): not a parameter's or local's, and not one the value cache
    /// hands out again.
    pub(super) fn expr_owned(&mut self, e: &Expr) -> VReg {
        let cached = self.values.contains_key(e) && (!e.uses_locals() || self.local_value_fresh(e));
        let v = self.expr(e);
        if cached || matches!(e, Expr::Param(_) | Expr::Local(_)) {
            let d = self.vreg();
            self.emit(Inst::Copy { dst: d, src: v });
            d
        } else {
            self.values.remove(e);
            v
        }
    }

    /// Pointer parameter `ptr` plus a byte offset computed at run time.
    pub(super) fn address(&mut self, ptr: usize, index: &Expr) -> VReg {
        let base = self.arg_of(&ArgKind::Param(ptr));
        let i = self.expr(index);
        self.bin(BinOp::Add, base, Operand::Reg(i))
    }

    /// A constant in a register (shared through the value cache).
    pub(super) fn constant(&mut self, c: u64) -> VReg {
        self.expr(&Expr::Const(c))
    }

    /// An immediate where it is a constant, else a register.
    pub(super) fn operand(&mut self, e: &Expr) -> Operand {
        match e.as_const() {
            Some(c) => Operand::Imm(c),
            None => Operand::Reg(self.expr(e)),
        }
    }

    /// `a cmp b ? t : f` in a fresh register, by a branch around a copy
    /// (every target has these; none of the uses is in a hot loop).
    pub(super) fn select(&mut self, cmp: Cmp, a: VReg, b: Operand, t: VReg, f: VReg) -> VReg {
        let d = self.vreg();
        let done = self.label();
        self.emit(Inst::Copy { dst: d, src: t });
        self.branch(cmp, a, b, done);
        self.emit(Inst::Copy { dst: d, src: f });
        self.emit(Inst::Label(done));
        d
    }

    pub(super) fn un(&mut self, op: crate::lir::UnOp, src: VReg) -> VReg {
        let d = self.vreg();
        self.emit(Inst::Un { op, dst: d, src });
        d
    }

    /// `a op b` into a fresh register.
    pub(super) fn bin(&mut self, op: BinOp, a: VReg, b: Operand) -> VReg {
        let d = self.vreg();
        self.emit(Inst::Bin { op, dst: d, a, b });
        d
    }

    pub(super) fn bin_imm(&mut self, op: BinOp, a: VReg, c: u64) -> VReg {
        self.bin(op, a, Operand::Imm(c))
    }

    /// `reg = reg op b`: a counter or pointer stepped in place.
    pub(super) fn update(&mut self, op: BinOp, reg: VReg, b: Operand) {
        self.emit(Inst::Bin {
            op,
            dst: reg,
            a: reg,
            b,
        });
    }

    /// `c - a` for a constant `c`.
    pub(super) fn rsub(&mut self, c: u64, a: VReg) -> VReg {
        let k = self.constant(c);
        self.bin(BinOp::Sub, k, Operand::Reg(a))
    }

    /// Built-in functions from the three bit counts, arithmetic and
    /// selects; the definitions at 0 follow from clz(0) = ctz(0) = 64.
    pub(super) fn call(&mut self, f: crate::ir::expr::Func, args: &[Expr]) -> VReg {
        use crate::ir::expr::Func;
        use crate::lir::UnOp;
        let x = match (f, args) {
            // The condition as the branch's own comparison, not a 0/1
            // value tested again.
            (Func::Select, [c, t, e]) => {
                let c = crate::ir::Cond::of(c.clone());
                let (a, b) = (self.expr(&c.a), self.operand(&c.b));
                let (t, e) = (self.expr(t), self.expr(e));
                return self.select(c.cmp, a, b, t, e);
            }
            _ => self.expr(&args[0]),
        };
        match f {
            Func::Clz => self.un(UnOp::Clz, x),
            Func::Ctz => self.un(UnOp::Ctz, x),
            Func::Popcount => self.un(UnOp::Popcount, x),
            // 64 - clz(x): 0 for 0.
            Func::Fls => {
                let c = self.un(UnOp::Clz, x);
                self.rsub(64, c)
            }
            // 63 - clz(x): all ones for 0.
            Func::Ilog2 => {
                let c = self.un(UnOp::Clz, x);
                self.rsub(63, c)
            }
            // ctz(x) + 1, and 0 for 0.
            Func::Ffs => {
                let c = self.un(UnOp::Ctz, x);
                let c1 = self.bin_imm(BinOp::Add, c, 1);
                let zero = self.constant(0);
                self.select(Cmp::Eq, x, Operand::Imm(0), zero, c1)
            }
            // 1 << (64 - clz(x - 1)), 0 once the amount reaches 64.
            Func::RoundupPow2 => {
                let m = self.bin_imm(BinOp::Sub, x, 1);
                let c = self.un(UnOp::Clz, m);
                let n = self.rsub(64, c);
                let one = self.constant(1);
                let p = self.bin(BinOp::Shl, one, Operand::Reg(n));
                let zero = self.constant(0);
                self.select(Cmp::Geu, n, Operand::Imm(64), zero, p)
            }
            Func::Min | Func::Max => {
                let y = self.expr(&args[1]);
                let cmp = if f == Func::Min { Cmp::Ltu } else { Cmp::Geu };
                self.select(cmp, x, Operand::Reg(y), x, y)
            }
            // Checked to have three arguments: handled above.
            Func::Select => x,
        }
    }

    /// Address of a pointer parameter's element.
    pub(super) fn mem_addr(&mut self, m: &crate::ir::MemRef) -> VReg {
        let e = Expr::bin(BinOp::Add, Expr::Param(m.ptr), Expr::Const(m.offset));
        self.expr(&e)
    }
}
