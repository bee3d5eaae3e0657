//! The shape of a per-target barrier table.

use crate::ir::order::Class;

/// One barrier instruction and the ordering it provides.
#[derive(Debug)]
pub struct BarrierKind {
    /// Mnemonic with operands as written in assembly (`dsb ish`).
    pub name: &'static str,
    /// Relative cost, in units of the cheapest barrier on any target. Only
    /// the ratios matter to placement.
    pub cost: u32,
    /// (earlier, later) class pairs this barrier orders.
    pub orders: &'static [(Class, Class)],
    /// Where the architecture manual says so.
    pub cite: &'static str,
}

impl BarrierKind {
    pub fn covers(&self, from: Class, to: Class) -> bool {
        self.orders.contains(&(from, to))
    }
}

pub fn find(table: &'static [BarrierKind], name: &str) -> Option<&'static BarrierKind> {
    table.iter().find(|b| b.name == name)
}
