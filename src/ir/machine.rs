//! The CPU family a spec names with `machine` (POWER only).

/// The CPU family a spec is written for on POWER (`machine NAME`):
/// Book III-S (POWER8/9/10, the default: radix `tlbie`, `ptesync`) or
/// Book III-E (`machine e6500`: e500mc, e5500 and e6500, software-managed
/// TLBs with `tlbilx`/`tlbivax`, `msync`/`mbar`). It selects the POWER
/// barrier table, the CPU invalidations a spec may use and the `.machine`
/// of the emitted file. Other targets have one family each.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Machine {
    #[default]
    Book3s,
    E6500,
}

impl Machine {
    /// The names `machine` accepts.
    pub const NAMES: [&'static str; 1] = ["e6500"];

    pub fn from_name(s: &str) -> Option<Machine> {
        match s {
            "e6500" => Some(Machine::E6500),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Machine::Book3s => "book3s",
            Machine::E6500 => "e6500",
        }
    }
}
