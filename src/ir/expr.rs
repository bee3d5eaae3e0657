//! Values written to registers: 64-bit expressions over parameters.
//!
//! Construction folds constants eagerly, so a field aggregate whose fields
//! are all constants is a single immediate by the time it reaches lowering.

use std::fmt;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BinOp {
    Or,
    Xor,
    And,
    Shl,
    Shr,
    Add,
    Sub,
    Mul,
}

impl BinOp {
    pub fn apply(self, a: u64, b: u64) -> u64 {
        match self {
            BinOp::Or => a | b,
            BinOp::Xor => a ^ b,
            BinOp::And => a & b,
            // Shifts of 64 or more give 0, as the hardware sequences we
            // lower to (sld/srd, lslv with a masked amount is different:
            // lowering only emits immediate shifts, checked < 64).
            BinOp::Shl => a.checked_shl(b as u32).filter(|_| b < 64).unwrap_or(0),
            BinOp::Shr => a.checked_shr(b as u32).filter(|_| b < 64).unwrap_or(0),
            BinOp::Add => a.wrapping_add(b),
            BinOp::Sub => a.wrapping_sub(b),
            BinOp::Mul => a.wrapping_mul(b),
        }
    }

    fn symbol(self) -> &'static str {
        match self {
            BinOp::Or => "|",
            BinOp::Xor => "^",
            BinOp::And => "&",
            BinOp::Shl => "<<",
            BinOp::Shr => ">>",
            BinOp::Add => "+",
            BinOp::Sub => "-",
            BinOp::Mul => "*",
        }
    }
}

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
}

pub fn field_mask(shift: u32, width: u32) -> u64 {
    if width == 0 || shift >= 64 {
        return 0;
    }
    let ones = if width >= 64 {
        u64::MAX
    } else {
        (1u64 << width) - 1
    };
    ones << shift
}

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
    /// oracle for emulator and qemu results.
    pub fn eval(&self, params: &[u64]) -> u64 {
        match self {
            Expr::Const(v) => *v,
            Expr::Param(i) => params.get(*i).copied().unwrap_or(0),
            Expr::Local(_) | Expr::Binding(_) => 0,
            Expr::Bin(op, a, b) => op.apply(a.eval(params), b.eval(params)),
            Expr::Not(a) => !a.eval(params),
            Expr::Insert {
                value,
                shift,
                width,
            } => (value.eval(params) << shift) & field_mask(*shift, *width),
        }
    }

    /// Does the value change from one loop iteration to the next?
    pub fn uses_locals(&self) -> bool {
        match self {
            Expr::Local(_) => true,
            Expr::Const(_) | Expr::Param(_) | Expr::Binding(_) => false,
            Expr::Bin(_, a, b) => a.uses_locals() || b.uses_locals(),
            Expr::Not(a) | Expr::Insert { value: a, .. } => a.uses_locals(),
        }
    }

    /// Evaluate with parameter and local values.
    pub fn eval_with(&self, params: &[u64], locals: &[u64]) -> u64 {
        match self {
            Expr::Const(v) => *v,
            Expr::Param(i) => params.get(*i).copied().unwrap_or(0),
            Expr::Local(i) => locals.get(*i).copied().unwrap_or(0),
            Expr::Binding(_) => 0,
            Expr::Bin(op, a, b) => {
                op.apply(a.eval_with(params, locals), b.eval_with(params, locals))
            }
            Expr::Not(a) => !a.eval_with(params, locals),
            Expr::Insert {
                value,
                shift,
                width,
            } => (value.eval_with(params, locals) << shift) & field_mask(*shift, *width),
        }
    }

    /// Replace cover bindings, refolding constants.
    pub fn bind(&self, f: &dyn Fn(Binding) -> Expr) -> Expr {
        match self {
            Expr::Binding(b) => f(*b),
            Expr::Const(_) | Expr::Param(_) | Expr::Local(_) => self.clone(),
            Expr::Bin(op, a, b) => Expr::bin(*op, a.bind(f), b.bind(f)),
            Expr::Not(a) => Expr::bit_not(a.bind(f)),
            Expr::Insert {
                value,
                shift,
                width,
            } => Expr::insert(value.bind(f), *shift, *width),
        }
    }

    pub fn uses_binding(&self) -> bool {
        match self {
            Expr::Binding(_) => true,
            Expr::Const(_) | Expr::Param(_) | Expr::Local(_) => false,
            Expr::Bin(_, a, b) => a.uses_binding() || b.uses_binding(),
            Expr::Not(a) | Expr::Insert { value: a, .. } => a.uses_binding(),
        }
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
            Expr::Binding(Binding::RegBits(_)) => f.write_str("$bits"),
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
