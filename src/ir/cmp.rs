//! The comparisons of conditions, shared by the IR and the LIR's branches.

/// Branch conditions on 64-bit values.
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
        match self {
            Cmp::Eq => a == b,
            Cmp::Ne => a != b,
            Cmp::Ltu => a < b,
            Cmp::Geu => a >= b,
        }
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
