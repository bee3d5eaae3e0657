//! x86-64 barrier table (Intel SDM Vol. 3A 9.2.2 "Memory Ordering in P6
//! and More Recent Processor Families", 11.3 "Methods of Caching Available"
//! for UC/WC, and the SFENCE/LFENCE/MFENCE entries of Vol. 2).

use super::insn::Insn;
use crate::ir::order::Class::{self, *};
use crate::ir::{Machine, ReleaseOrder};
use crate::isa::backend::MemoryModel;
use crate::isa::barriers::{all_access_and, insns, Barrier, BarrierKind};

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
///
/// SDM Vol. 3A 9.3 "Serializing Instructions": `invlpg` is a privileged
/// serializing instruction. Everything before it completes, buffered
/// stores drained to memory, before it executes, and nothing after it
/// starts before it completes: it is ordered after every earlier access
/// (page-table stores included) and complete before every later one and
/// the return, with no barrier (issue 42: a spec shared with aarch64 can
/// state its `order`s for x86-64 too).
pub fn implicit(from: Class, to: Class, same_strong_device: bool) -> bool {
    if to.is_invalidation() || from.is_invalidation() {
        return true;
    }
    match (from, to) {
        (NormalStore, NormalLoad) => false,
        (DevStore | DevLoad, DevStore | DevLoad) => same_strong_device,
        (NormalStore | NormalLoad, NormalStore | NormalLoad) => true,
        (NormalStore | NormalLoad, DevStore | DevLoad) => true,
        (DevStore | DevLoad, NormalStore | NormalLoad) => true,
        _ => false,
    }
}

/// TSO: stores are ordered among themselves, UC included, so a release
/// needs no barrier; loads stay in order, so a reload needs none; locks
/// are taken with `lock cmpxchg`, a full barrier itself.
impl MemoryModel for super::X86_64 {
    fn release_barrier(&self, _: Machine, _: ReleaseOrder) -> Option<Barrier> {
        None
    }

    fn acquire_barrier(&self, _: Machine) -> Option<Barrier> {
        None
    }

    fn reload_barrier(&self, _: Machine) -> Option<Barrier> {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_lower_as_named() {
        crate::isa::barriers::assert_lowers_as_named(TABLE, |i: &Insn| i.mnemonic().to_string());
    }
}
