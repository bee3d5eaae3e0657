//! Values written to registers: 64-bit expressions over parameters.
//!
//! Construction folds constants eagerly, so a field aggregate whose fields
//! are all constants is a single immediate by the time it reaches lowering.

use std::fmt;

pub use crate::spec::ops::{BinOp, Rel};

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Expr {
    Const(u64),
    /// A sequence parameter by index.
    Param(usize),
    /// A loop variable (of a `range` loop) by index into the sequence's
    /// locals.
    Local(usize),
    /// `$addr`, `$bits`, `$size` in a `cover` body (replaced when the
    /// cover pass instantiates the body).
    Binding(Binding),
    Bin(BinOp, Box<Expr>, Box<Expr>),
    Not(Box<Expr>),
    /// `(value & mask(width)) << shift`: a run-time value placed in a field.
    Insert {
        value: Box<Expr>,
        shift: u32,
        width: u32,
    },
    /// An unsigned comparison as a value: 1 when it holds, else 0.
    Cmp(Rel, Box<Expr>, Box<Expr>),
    /// A built-in function of one or two values.
    Call(Func, Vec<Expr>),
    /// Feature `i` as the kernel's boot-time patching selects it (only in
    /// the branch that picks a sequence's variant; see
    /// [`crate::features`]). Unpatched code takes the path without it,
    /// so its value before patching is 0.
    Feature(usize),
}

/// Built-in functions on 64-bit unsigned values. Each is defined at every
/// input, 0 included, as the kernel's 64-bit helper of the same meaning
/// computes it (README, "Expressions").
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Func {
    /// 1 + index of the lowest set bit; 0 for 0 (`__ffs64(x) + 1`, C `ffsll`).
    Ffs,
    /// 1 + index of the highest set bit; 0 for 0 (`fls64`).
    Fls,
    /// Trailing zero bits; 64 for 0 (`__ffs64` where defined).
    Ctz,
    /// Leading zero bits; 64 for 0.
    Clz,
    /// Index of the highest set bit; all ones (-1) for 0 (`fls64(x) - 1`,
    /// as `ilog2()` computes it at run time).
    Ilog2,
    /// The smallest power of two >= x: `1 << fls64(x - 1)`, so 0 for 0 and
    /// for x > 2^63 (the shift passes 63), 1 for 1 (`roundup_pow_of_two`).
    RoundupPow2,
    /// Set bits (`hweight64`).
    Popcount,
    /// Unsigned minimum and maximum of two values.
    Min,
    Max,
    /// `select(c, a, b)`: `a` when `c` is nonzero, else `b` (C's `c ? a :
    /// b`; the operands are values, read before, so both are computed).
    Select,
}

impl Func {
    pub const ALL: [Func; 10] = [
        Func::Ffs,
        Func::Fls,
        Func::Ctz,
        Func::Clz,
        Func::Ilog2,
        Func::RoundupPow2,
        Func::Popcount,
        Func::Min,
        Func::Max,
        Func::Select,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Func::Ffs => "ffs",
            Func::Fls => "fls",
            Func::Ctz => "ctz",
            Func::Clz => "clz",
            Func::Ilog2 => "ilog2",
            Func::RoundupPow2 => "roundup_pow2",
            Func::Popcount => "popcount",
            Func::Min => "min",
            Func::Max => "max",
            Func::Select => "select",
        }
    }

    pub fn arity(self) -> usize {
        match self {
            Func::Min | Func::Max => 2,
            Func::Select => 3,
            _ => 1,
        }
    }

    /// The meaning (the interpreter's and constant folding's), of the
    /// arguments in order (missing ones are 0).
    pub fn apply(self, args: &[u64]) -> u64 {
        let arg = |i: usize| args.get(i).copied().unwrap_or(0);
        let (a, b) = (arg(0), arg(1));
        let fls = |x: u64| 64 - u64::from(x.leading_zeros());
        match self {
            Func::Ffs => {
                if a == 0 {
                    0
                } else {
                    u64::from(a.trailing_zeros()) + 1
                }
            }
            Func::Fls => fls(a),
            Func::Ctz => u64::from(a.trailing_zeros()),
            Func::Clz => u64::from(a.leading_zeros()),
            Func::Ilog2 => fls(a).wrapping_sub(1),
            Func::RoundupPow2 => BinOp::Shl.apply(1, fls(a.wrapping_sub(1))),
            Func::Popcount => u64::from(a.count_ones()),
            Func::Min => a.min(b),
            Func::Max => a.max(b),
            Func::Select => {
                if a != 0 {
                    b
                } else {
                    arg(2)
                }
            }
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Binding {
    Addr,
    /// `$bits` where no register gives it a meaning: every setting of the
    /// granule (allowed only when they all live in one register).
    Bits,
    /// `$bits` in a write to this register: the granule's settings of
    /// this register's fields only.
    RegBits(usize),
    Size,
    /// Range operations: NUM and SCALE of (NUM + 1) << (5 * SCALE + 1).
    Num,
    Scale,
    /// `threshold(SET)`: the number of granules of granule set `.0` up
    /// to which one operation per granule costs less than its flush-all
    /// (derived from the set's costs, or pinned). Anywhere in a sequence;
    /// the cover pass (and the interpreter) resolve it with the pins in
    /// force, so `--set` and `cost`'s strategies move it like an `auto`
    /// cover's threshold.
    Threshold(usize),
}

pub use crate::spec::bits::field_mask;

impl Expr {
    pub fn as_const(&self) -> Option<u64> {
        match self {
            Expr::Const(v) => Some(*v),
            _ => None,
        }
    }

    /// Build a binary node, folding constants and identities.
    pub fn bin(op: BinOp, a: Expr, b: Expr) -> Expr {
        let assoc = matches!(
            op,
            BinOp::Or | BinOp::And | BinOp::Xor | BinOp::Add | BinOp::Mul
        );
        // Constants to the right of commutative operators...
        let (a, b) = if assoc && a.as_const().is_some() && b.as_const().is_none() {
            (b, a)
        } else {
            (a, b)
        };
        // A constant inside the right operand moves out, x op (y op c) =
        // (x op y) op c, so that it meets the others: the page count
        // `((start & 0xfff) + (end - start + 1) + 0xfff) >> 12` adds one
        // 0x1000, not 1 and 0xfff (exact: these operators associate
        // and commute modulo 2^64).
        if let (true, None, Expr::Bin(op1, y, c1)) = (assoc, a.as_const(), &b) {
            if *op1 == op && c1.as_const().is_some() && y.as_const().is_none() {
                return Expr::bin(op, Expr::bin(op, a, (**y).clone()), (**c1).clone());
            }
        }
        // ...and folded together: (x op c1) op c2 = x op (c1 op c2).
        if let (true, Expr::Bin(op1, x, c1), Some(c2)) = (assoc, &a, b.as_const()) {
            if *op1 == op {
                if let Some(c1) = c1.as_const() {
                    return Expr::bin(op, (**x).clone(), Expr::Const(op.apply(c1, c2)));
                }
            }
        }
        match (op, a.as_const(), b.as_const()) {
            (_, Some(x), Some(y)) => Expr::Const(op.apply(x, y)),
            // x * 2^k = x << k: every target has the shift.
            (BinOp::Mul, None, Some(c)) if c.is_power_of_two() && c > 1 => {
                Expr::bin(BinOp::Shl, a, Expr::Const(u64::from(c.trailing_zeros())))
            }
            (BinOp::Or | BinOp::Xor | BinOp::Add, Some(0), _) => b,
            (
                BinOp::Or | BinOp::Xor | BinOp::Add | BinOp::Sub | BinOp::Shl | BinOp::Shr,
                _,
                Some(0),
            ) => a,
            (BinOp::And | BinOp::Mul, Some(0), _) | (BinOp::And | BinOp::Mul, _, Some(0)) => {
                Expr::Const(0)
            }
            (BinOp::And, _, Some(u64::MAX)) | (BinOp::Mul, _, Some(1)) => a,
            (BinOp::And, Some(u64::MAX), _) | (BinOp::Mul, Some(1), _) => b,
            _ => Expr::Bin(op, Box::new(a), Box::new(b)),
        }
    }

    /// A comparison as a value, folded when both sides are constants.
    pub fn cmp(rel: Rel, a: Expr, b: Expr) -> Expr {
        match (a.as_const(), b.as_const()) {
            (Some(x), Some(y)) => Expr::Const(u64::from(rel.holds(x, y))),
            _ => Expr::Cmp(rel, Box::new(a), Box::new(b)),
        }
    }

    /// Is the value always 0 or 1?
    pub fn is_truth(&self) -> bool {
        match self {
            Expr::Cmp(..) => true,
            Expr::Const(c) => *c <= 1,
            Expr::Bin(BinOp::And | BinOp::Or, a, b) => a.is_truth() && b.is_truth(),
            _ => false,
        }
    }

    /// `x != 0` as 0 or 1 (x itself when it already is).
    pub fn truth(self) -> Expr {
        if self.is_truth() {
            self
        } else {
            Expr::cmp(Rel::Ne, self, Expr::Const(0))
        }
    }

    /// A built-in call, folded when its arguments are constants.
    pub fn call(f: Func, args: Vec<Expr>) -> Expr {
        let consts: Vec<u64> = args.iter().filter_map(Expr::as_const).collect();
        if consts.len() == args.len() {
            return Expr::Const(f.apply(&consts));
        }
        Expr::Call(f, args)
    }

    pub fn bit_not(a: Expr) -> Expr {
        match a {
            Expr::Const(v) => Expr::Const(!v),
            Expr::Not(inner) => *inner,
            other => Expr::Not(Box::new(other)),
        }
    }

    pub fn insert(value: Expr, shift: u32, width: u32) -> Expr {
        match value {
            Expr::Const(v) => Expr::Const((v << shift.min(63)) & field_mask(shift, width)),
            other if width == 0 => {
                let _ = other;
                Expr::Const(0)
            }
            other => Expr::Insert {
                value: Box::new(other),
                shift,
                width,
            },
        }
    }

    /// Evaluate with parameter values: the spec's meaning, used as the
    /// oracle for emulator and qemu results. Locals, bindings and
    /// features are 0 here.
    pub fn eval(&self, params: &[u64]) -> u64 {
        self.eval_with(params, &[])
    }

    /// The operands of this node (none for leaves): for traversals that
    /// only look, so a new node kind is handled in one place.
    pub fn children(&self) -> Vec<&Expr> {
        match self {
            Expr::Const(_)
            | Expr::Param(_)
            | Expr::Local(_)
            | Expr::Binding(_)
            | Expr::Feature(_) => Vec::new(),
            Expr::Bin(_, a, b) | Expr::Cmp(_, a, b) => vec![a, b],
            Expr::Not(a) | Expr::Insert { value: a, .. } => vec![a],
            Expr::Call(_, args) => args.iter().collect(),
        }
    }

    /// Does this node or any below it satisfy `p`?
    pub fn any_node(&self, p: &dyn Fn(&Expr) -> bool) -> bool {
        p(self) || self.children().into_iter().any(|c| c.any_node(p))
    }

    /// Does the value change from one loop iteration to the next?
    pub fn uses_locals(&self) -> bool {
        self.any_node(&|e| matches!(e, Expr::Local(_)))
    }

    /// Evaluate with parameter and local values.
    pub fn eval_with(&self, params: &[u64], locals: &[u64]) -> u64 {
        match self {
            Expr::Const(v) => *v,
            Expr::Param(i) => params.get(*i).copied().unwrap_or(0),
            Expr::Local(i) => locals.get(*i).copied().unwrap_or(0),
            Expr::Binding(_) | Expr::Feature(_) => 0,
            Expr::Bin(op, a, b) => {
                op.apply(a.eval_with(params, locals), b.eval_with(params, locals))
            }
            Expr::Not(a) => !a.eval_with(params, locals),
            Expr::Insert {
                value,
                shift,
                width,
            } => (value.eval_with(params, locals) << shift) & field_mask(*shift, *width),
            Expr::Cmp(rel, a, b) => {
                u64::from(rel.holds(a.eval_with(params, locals), b.eval_with(params, locals)))
            }
            Expr::Call(f, args) => {
                let v: Vec<u64> = args.iter().map(|a| a.eval_with(params, locals)).collect();
                f.apply(&v)
            }
        }
    }

    /// Replace cover bindings, refolding constants.
    pub fn bind(&self, f: &dyn Fn(Binding) -> Expr) -> Expr {
        self.subst(&|e| match e {
            Expr::Binding(b) => Some(f(*b)),
            _ => None,
        })
    }

    /// Rebuild with `f` applied where it returns a replacement (checked
    /// before descending), refolding constants on the way up.
    pub fn subst(&self, f: &dyn Fn(&Expr) -> Option<Expr>) -> Expr {
        if let Some(e) = f(self) {
            return e;
        }
        match self {
            Expr::Const(_)
            | Expr::Param(_)
            | Expr::Local(_)
            | Expr::Binding(_)
            | Expr::Feature(_) => self.clone(),
            Expr::Bin(op, a, b) => Expr::bin(*op, a.subst(f), b.subst(f)),
            Expr::Not(a) => Expr::bit_not(a.subst(f)),
            Expr::Insert {
                value,
                shift,
                width,
            } => Expr::insert(value.subst(f), *shift, *width),
            Expr::Cmp(rel, a, b) => Expr::cmp(*rel, a.subst(f), b.subst(f)),
            Expr::Call(func, args) => Expr::call(*func, args.iter().map(|a| a.subst(f)).collect()),
        }
    }

    pub fn uses_binding(&self) -> bool {
        self.any_node(&|e| matches!(e, Expr::Binding(_)))
    }

    pub fn display<'a>(&'a self, params: &'a [String]) -> ExprDisplay<'a> {
        ExprDisplay { e: self, params }
    }
}

pub struct ExprDisplay<'a> {
    e: &'a Expr,
    params: &'a [String],
}

impl fmt::Display for ExprDisplay<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.e {
            Expr::Const(v) => write!(f, "{v:#x}"),
            Expr::Param(i) => match self.params.get(*i) {
                Some(n) => f.write_str(n),
                None => write!(f, "arg{i}"),
            },
            Expr::Local(i) => write!(f, "local{i}"),
            Expr::Feature(i) => write!(f, "patched_feature{i}"),
            Expr::Binding(Binding::RegBits(_)) => f.write_str("$bits"),
            Expr::Binding(Binding::Threshold(s)) => write!(f, "threshold(set{s})"),
            Expr::Binding(b) => write!(f, "${}", format!("{b:?}").to_lowercase()),
            Expr::Bin(op, a, b) => write!(
                f,
                "({} {} {})",
                a.display(self.params),
                op.symbol(),
                b.display(self.params)
            ),
            Expr::Not(a) => write!(f, "~{}", a.display(self.params)),
            Expr::Insert {
                value,
                shift,
                width,
            } => write!(
                f,
                "insert({}, shift {shift}, width {width})",
                value.display(self.params)
            ),
            Expr::Cmp(rel, a, b) => write!(
                f,
                "({} {} {})",
                a.display(self.params),
                rel.symbol(),
                b.display(self.params)
            ),
            Expr::Call(func, args) => {
                write!(f, "{}(", func.name())?;
                for (i, a) in args.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{}", a.display(self.params))?;
                }
                f.write_str(")")
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn folds_aggregates_of_constants() {
        let e = Expr::bin(
            BinOp::Or,
            Expr::insert(Expr::Const(1), 50, 1),
            Expr::insert(Expr::Const(5), 46, 3),
        );
        assert_eq!(e, Expr::Const(0x0005_4000_0000_0000));
    }

    #[test]
    fn insert_masks_runtime_values() {
        let e = Expr::insert(Expr::Param(0), 25, 15);
        assert_eq!(e.eval(&[1]), 0x200_0000);
        assert_eq!(e.eval(&[u64::MAX]), field_mask(25, 15));
    }

    #[test]
    fn shifts_past_width_are_zero() {
        assert_eq!(BinOp::Shl.apply(1, 64), 0);
        assert_eq!(BinOp::Shr.apply(1, 200), 0);
        assert_eq!(field_mask(0, 64), u64::MAX);
        assert_eq!(field_mask(63, 1), 1 << 63);
    }
}
