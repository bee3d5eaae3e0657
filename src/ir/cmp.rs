//! The comparisons of conditions, shared by the IR and the LIR's branches.

use crate::ir::expr::Rel;

/// Branch conditions on 64-bit values: the relations a branch tests
/// directly.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cmp {
    Eq,
    Ne,
    /// Unsigned less than.
    Ltu,
    /// Unsigned greater or equal.
    Geu,
}

impl Cmp {
    /// Does `a cmp b` hold?
    pub fn holds(self, a: u64, b: u64) -> bool {
        Rel::from(self).holds(a, b)
    }

    /// The condition that holds exactly when this one does not.
    pub fn inverse(self) -> Cmp {
        match self {
            Cmp::Eq => Cmp::Ne,
            Cmp::Ne => Cmp::Eq,
            Cmp::Ltu => Cmp::Geu,
            Cmp::Geu => Cmp::Ltu,
        }
    }
}

/// The relation a branch condition tests.
impl From<Cmp> for Rel {
    fn from(c: Cmp) -> Rel {
        match c {
            Cmp::Eq => Rel::Eq,
            Cmp::Ne => Rel::Ne,
            Cmp::Ltu => Rel::Lt,
            Cmp::Geu => Rel::Ge,
        }
    }
}
