//! AArch64 barrier table (Arm ARM DDI 0487, B2.3 "Definition of the Armv8
//! memory model", B2.8 "Memory types and attributes", C6.2 DMB/DSB/ISB,
//! D8.13 "TLB maintenance").

use super::insn::{BarrierOpt, Insn};
use crate::ir::order::Class::{self, *};
use crate::ir::{Machine, ReleaseOrder};
use crate::isa::backend::MemoryModel;
use crate::isa::barriers::{all_access_and, insns, normal_access_and, Barrier, BarrierKind};

const STORE_STORE: &[(Class, Class)] = &[
    (DevStore, DevStore),
    (NormalStore, NormalStore),
    (NormalStore, DevStore),
    (DevStore, NormalStore),
];

const ALL_ACCESS: &[(Class, Class)] = all_access_and!();

const NORMAL_ALL: &[(Class, Class)] = normal_access_and!();

pub static TABLE: &[BarrierKind] = &[
    BarrierKind {
        name: "dmb ishst",
        insns: insns![Insn::Dmb(BarrierOpt::Ishst)],
        cost: 2,
        // C6.2.81 DMB: ISHST orders stores before stores in the Inner
        // Shareable domain: other CPUs, not devices.
        orders: &[(NormalStore, NormalStore)],
        cite: "Arm ARM C6.2.81 DMB, B2.3.12",
    },
    BarrierKind {
        name: "dmb ish",
        insns: insns![Insn::Dmb(BarrierOpt::Ish)],
        cost: 3,
        orders: NORMAL_ALL,
        cite: "Arm ARM C6.2.81 DMB",
    },
    BarrierKind {
        name: "dmb oshst",
        insns: insns![Insn::Dmb(BarrierOpt::Oshst)],
        cost: 3,
        // Outer Shareable covers observers such as DMA masters and SMMUs:
        // Linux's dma_wmb()/__iowmb() before writel.
        orders: STORE_STORE,
        cite: "Arm ARM C6.2.81 DMB; Linux arch/arm64 __iowmb",
    },
    BarrierKind {
        name: "dmb osh",
        insns: insns![Insn::Dmb(BarrierOpt::Osh)],
        cost: 4,
        orders: ALL_ACCESS,
        cite: "Arm ARM C6.2.81 DMB",
    },
    BarrierKind {
        name: "dsb ishst",
        insns: insns![Insn::Dsb(BarrierOpt::Ishst)],
        cost: 5,
        // D8.13.5: a DSB is needed for page-table stores to be visible to
        // the table walk before a TLBI; ISHST suffices for stores.
        orders: &[(NormalStore, NormalStore), (NormalStore, TlbInvalidate)],
        cite: "Arm ARM C6.2.83 DSB, D8.13.5",
    },
    BarrierKind {
        name: "dsb ish",
        insns: insns![Insn::Dsb(BarrierOpt::Ish)],
        cost: 6,
        // D8.13.5: completion of TLBI ... IS is only guaranteed by a
        // following DSB in the Inner Shareable domain. Nothing weaker
        // orders a TLBI before a later one (DMB does not apply to TLB
        // maintenance), so `after invalidates` is a DSB too
        // (ARM64_WORKAROUND_REPEAT_TLBI: `tlbi; dsb ish; tlbi`).
        orders: normal_access_and![
            (NormalStore, TlbInvalidate),
            (TlbInvalidate, TlbInvalidate),
            (TlbInvalidate, InvalidateCompletion),
        ],
        cite: "Arm ARM C6.2.83 DSB, D8.13.5",
    },
    BarrierKind {
        name: "dsb oshst",
        insns: insns![Insn::Dsb(BarrierOpt::Oshst)],
        cost: 6,
        orders: STORE_STORE,
        cite: "Arm ARM C6.2.83 DSB",
    },
    BarrierKind {
        name: "dsb osh",
        insns: insns![Insn::Dsb(BarrierOpt::Osh)],
        cost: 7,
        orders: ALL_ACCESS,
        cite: "Arm ARM C6.2.83 DSB",
    },
    BarrierKind {
        name: "dsb st",
        insns: insns![Insn::Dsb(BarrierOpt::St)],
        cost: 8,
        orders: STORE_STORE,
        cite: "Arm ARM C6.2.83 DSB (full system)",
    },
    BarrierKind {
        name: "dsb sy",
        insns: insns![Insn::Dsb(BarrierOpt::Sy)],
        cost: 9,
        orders: all_access_and![
            (NormalStore, TlbInvalidate),
            (TlbInvalidate, TlbInvalidate),
            (TlbInvalidate, InvalidateCompletion),
        ],
        cite: "Arm ARM C6.2.83 DSB",
    },
    BarrierKind {
        name: "isb",
        insns: insns![Insn::Isb],
        cost: 4,
        // C6.2.112 ISB: context synchronization; after a completed TLBI the
        // new translations apply to later instruction fetch.
        orders: &[(InvalidateCompletion, ContextSync)],
        cite: "Arm ARM C6.2.112 ISB, D8.13.5",
    },
];

/// B2.8.2: Device-nGnRE/nGnRnE ("non-Reordering") accesses to the same
/// peripheral arrive in program order, so edges within one strongly mapped
/// device instance need no barrier. Device-GRE loses that.
pub fn implicit(from: Class, to: Class, same_strong_device: bool) -> bool {
    same_strong_device && matches!(from, DevStore | DevLoad) && matches!(to, DevStore | DevLoad)
}

/// `stlr` orders every earlier explicit access, Device memory included
/// (Arm ARM B2.3.7; Linux arm64 has no `mmiowb` for this reason), and
/// locks are taken with `ldaxr`: neither needs a barrier.
impl MemoryModel for super::Aarch64 {
    fn release_barrier(&self, _: Machine, _: ReleaseOrder) -> Option<Barrier> {
        None
    }

    fn acquire_barrier(&self, _: Machine) -> Option<Barrier> {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_lower_as_named() {
        crate::isa::barriers::assert_lowers_as_named(TABLE, |i: &Insn| i.text(&|l| l.to_string()));
    }
}
