//! The binary operators of the spec language and their meaning on 64-bit
//! values: the syntax tree writes them, the IR evaluates and folds them.

use serde::Serialize;

/// Arithmetic (wrapping) and bitwise operators.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
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

    pub fn symbol(self) -> &'static str {
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

/// Unsigned comparisons.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
pub enum Rel {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
}

impl Rel {
    pub fn holds(self, a: u64, b: u64) -> bool {
        match self {
            Rel::Eq => a == b,
            Rel::Ne => a != b,
            Rel::Lt => a < b,
            Rel::Le => a <= b,
            Rel::Gt => a > b,
            Rel::Ge => a >= b,
        }
    }

    pub fn symbol(self) -> &'static str {
        match self {
            Rel::Eq => "==",
            Rel::Ne => "!=",
            Rel::Lt => "<",
            Rel::Le => "<=",
            Rel::Gt => ">",
            Rel::Ge => ">=",
        }
    }
}
