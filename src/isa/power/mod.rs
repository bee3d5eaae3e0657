//! POWER (ppc64 big-endian ELFv1 and little-endian ELFv2).

crate::isa::skeleton!();
pub mod book3e;
mod constants;
mod ctr;
mod peephole;
pub mod tlb;

use super::backend::{Described, Description};
use super::Target;

/// ppc64: `le` selects little-endian ELFv2, else big-endian ELFv1.
pub struct Power {
    pub le: bool,
    description: Description,
}

pub static BE: Power = Power {
    le: false,
    description: description("power64", "powerpc64-linux-gnu"),
};
pub static LE: Power = Power {
    le: true,
    description: description("power64le", "powerpc64le-linux-gnu"),
};

/// The two byte orders share registers and memory model.
const fn description(name: &'static str, triple: &'static str) -> Description {
    crate::isa::description!(
        name,
        triple,
        set_cmp: false,
        branch_compares_registers: false,
    )
}

impl Power {
    pub(crate) fn target(&self) -> Target {
        if self.le {
            Target::Power64le
        } else {
            Target::Power64
        }
    }
}

impl Described for Power {
    fn description(&self) -> &Description {
        &self.description
    }
}
