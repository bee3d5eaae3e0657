//! x86-64 barrier table (Intel SDM Vol. 3A 9.2.2 "Memory Ordering in P6
//! and More Recent Processor Families", 11.3 "Methods of Caching Available"
//! for UC/WC, and the SFENCE/LFENCE/MFENCE entries of Vol. 2).

use super::insn::Insn;
use crate::ir::order::Class::{self, *};
use crate::target::barriers::{all_access_and, insns, BarrierKind};

pub static TABLE: &[BarrierKind] = &[
    BarrierKind {
        name: "sfence",
        insns: insns![Insn::Sfence],
        cost: 3,
        // Needed only for weakly ordered (WC, non-temporal) stores.
        orders: &[
            (DevStore, DevStore),
            (NormalStore, DevStore),
            (DevStore, NormalStore),
            (NormalStore, NormalStore),
        ],
        cite: "Intel SDM Vol. 2B SFENCE; Vol. 3A 11.3.1 (WC)",
    },
    BarrierKind {
        name: "lfence",
        insns: insns![Insn::Lfence],
        cost: 3,
        orders: &[
            (DevLoad, DevLoad),
            (NormalLoad, DevLoad),
            (DevLoad, NormalLoad),
            (NormalLoad, NormalLoad),
        ],
        cite: "Intel SDM Vol. 2A LFENCE",
    },
    BarrierKind {
        name: "mfence",
        insns: insns![Insn::Mfence],
        cost: 10,
        orders: all_access_and!(),
        cite: "Intel SDM Vol. 2B MFENCE",
    },
];

/// SDM 9.2.2: stores are not reordered with other stores, loads not with
/// other loads, loads not with older stores... except a store followed by a
/// load of a different location (WB). UC accesses (11.3: "strong
/// ordering") are never reordered, and a UC access orders against all
/// earlier WB accesses. So under the strong (UC) mapping everything that
/// touches a device is ordered; only WB store -> WB load is not.
pub fn implicit(from: Class, to: Class, same_strong_device: bool) -> bool {
    match (from, to) {
        (NormalStore, NormalLoad) => false,
        (DevStore | DevLoad, DevStore | DevLoad) => same_strong_device,
        (NormalStore | NormalLoad, NormalStore | NormalLoad) => true,
        (NormalStore | NormalLoad, DevStore | DevLoad) => true,
        (DevStore | DevLoad, NormalStore | NormalLoad) => true,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_lower_as_named() {
        crate::target::barriers::assert_lowers_as_named(TABLE, |i: &Insn| i.mnemonic().to_string());
    }
}
