//! RISC-V barrier table: RVWMO and its FENCE instruction (unprivileged
//! spec, 2.7 "Memory Ordering Instructions" and chapter 17 "RVWMO Memory
//! Consistency Model"), the supervisor fences (privileged spec, 4.2.1
//! "Supervisor Memory-Management Fence Instruction") and Svinval
//! (privileged spec, chapter "Svinval Extension for Fine-Grained
//! Address-Translation Cache Invalidation").
//!
//! A FENCE orders the accesses of its predecessor set before those of its
//! successor set: I = device input (DevLoad), O = device output
//! (DevStore), R = memory reads (NormalLoad), W = memory writes
//! (NormalStore). Which set an access is in depends on the PMA of its
//! address (I/O or main memory), which is how a spec's device registers
//! and normal memory map to the classes. The table lists the fences
//! Linux's riscv barriers use (`asm/barrier.h`, `asm/io.h`,
//! `asm/fence.h`) and the two that order TLB maintenance.

use super::insn::{FenceSet, Insn};
use crate::ir::order::Class::{self, *};
use crate::isa::barriers::{
    all_access_and, device_access_and, insns, normal_access_and, BarrierKind,
};

/// `fence PRED,SUCC` with the sets as the table's names spell them.
const fn fence(pred: &str, succ: &str) -> Insn {
    match (FenceSet::parse(pred), FenceSet::parse(succ)) {
        (Some(pred), Some(succ)) => Insn::Fence { pred, succ },
        _ => panic!("not a fence set"),
    }
}

pub static TABLE: &[BarrierKind] = &[
    BarrierKind {
        name: "fence w,w",
        insns: insns![fence("w", "w")],
        cost: 2,
        orders: &[(NormalStore, NormalStore)],
        cite: "RISC-V unprivileged 2.7 FENCE; Linux smp_wmb",
    },
    BarrierKind {
        name: "fence r,r",
        insns: insns![fence("r", "r")],
        cost: 2,
        orders: &[(NormalLoad, NormalLoad)],
        cite: "RISC-V unprivileged 2.7 FENCE; Linux smp_rmb",
    },
    BarrierKind {
        name: "fence rw,w",
        insns: insns![fence("rw", "w")],
        cost: 2,
        // The release fence before a plain store (RISCV_RELEASE_BARRIER).
        orders: &[(NormalLoad, NormalStore), (NormalStore, NormalStore)],
        cite: "RISC-V unprivileged 2.7 FENCE; Linux RISCV_RELEASE_BARRIER",
    },
    BarrierKind {
        name: "fence r,rw",
        insns: insns![fence("r", "rw")],
        cost: 2,
        orders: &[(NormalLoad, NormalLoad), (NormalLoad, NormalStore)],
        cite: "RISC-V unprivileged 2.7 FENCE; Linux RISCV_ACQUIRE_BARRIER",
    },
    BarrierKind {
        name: "fence w,o",
        insns: insns![fence("w", "o")],
        cost: 2,
        // writel's __io_bw(): memory writes (a command in RAM) reach the
        // device before the register write that tells it to look.
        orders: &[(NormalStore, DevStore)],
        cite: "RISC-V unprivileged 2.7 FENCE; Linux __io_bw",
    },
    BarrierKind {
        name: "fence o,w",
        insns: insns![fence("o", "w")],
        cost: 2,
        // mmiowb(): device writes before the store that releases a lock.
        orders: &[(DevStore, NormalStore)],
        cite: "RISC-V unprivileged 2.7 FENCE; Linux mmiowb",
    },
    BarrierKind {
        name: "fence i,r",
        insns: insns![fence("i", "r")],
        cost: 2,
        // readl's __io_ar(): the device read before later memory reads.
        orders: &[(DevLoad, NormalLoad)],
        cite: "RISC-V unprivileged 2.7 FENCE; Linux __io_ar",
    },
    BarrierKind {
        name: "fence rw,rw",
        insns: insns![fence("rw", "rw")],
        cost: 3,
        orders: normal_access_and!(),
        cite: "RISC-V unprivileged 2.7 FENCE; Linux smp_mb",
    },
    BarrierKind {
        name: "fence io,io",
        insns: insns![fence("io", "io")],
        cost: 3,
        // Accesses to different device instances: an I/O region's strong
        // ordering holds within one channel only (privileged 3.6.5).
        orders: device_access_and!(),
        cite: "RISC-V unprivileged 2.7 FENCE; privileged 3.6.5",
    },
    BarrierKind {
        name: "fence ow,ow",
        insns: insns![fence("ow", "ow")],
        cost: 3,
        orders: &[
            (DevStore, DevStore),
            (DevStore, NormalStore),
            (NormalStore, DevStore),
            (NormalStore, NormalStore),
        ],
        cite: "RISC-V unprivileged 2.7 FENCE; Linux wmb",
    },
    BarrierKind {
        name: "fence ir,ir",
        insns: insns![fence("ir", "ir")],
        cost: 3,
        orders: &[
            (DevLoad, DevLoad),
            (DevLoad, NormalLoad),
            (NormalLoad, DevLoad),
            (NormalLoad, NormalLoad),
        ],
        cite: "RISC-V unprivileged 2.7 FENCE; Linux rmb",
    },
    BarrierKind {
        name: "fence r,iorw",
        insns: insns![fence("r", "iorw")],
        cost: 3,
        // Acquire that also holds back device accesses of the critical
        // section: a lock's load before everything after it.
        orders: &[
            (NormalLoad, DevLoad),
            (NormalLoad, DevStore),
            (NormalLoad, NormalLoad),
            (NormalLoad, NormalStore),
        ],
        cite: "RISC-V unprivileged 2.7 FENCE",
    },
    BarrierKind {
        name: "fence iorw,iorw",
        insns: insns![fence("iorw", "iorw")],
        cost: 4,
        orders: all_access_and!(),
        cite: "RISC-V unprivileged 2.7 FENCE; Linux mb",
    },
    BarrierKind {
        name: "sfence.w.inval",
        insns: insns![Insn::SfenceWInval],
        cost: 3,
        // Svinval: earlier stores (page-table updates) are ordered before
        // later SINVAL.VMA on this hart; nothing else.
        orders: &[(NormalStore, LocalInvalidate)],
        cite: "RISC-V privileged, Svinval: SFENCE.W.INVAL",
    },
    BarrierKind {
        name: "sfence.inval.ir",
        insns: insns![Insn::SfenceInvalIr],
        cost: 3,
        // Svinval: earlier SINVAL.VMA are ordered before later implicit
        // references to the page tables (the invalidation is complete
        // for this hart). One per batch, as Linux's
        // local_flush_tlb_range_threshold_asid issues it.
        orders: &[(LocalInvalidate, InvalidateCompletion)],
        cite: "RISC-V privileged, Svinval: SFENCE.INVAL.IR",
    },
    BarrierKind {
        name: "fence.i",
        insns: insns![Insn::FenceI],
        cost: 5,
        // Zifencei: later instruction fetches see earlier stores.
        orders: &[(NormalStore, ContextSync)],
        cite: "RISC-V unprivileged, Zifencei FENCE.I",
    },
];

/// What RVWMO and SFENCE.VMA order with no barrier:
/// - one device instance mapped strongly ordered: its accesses stay in
///   program order (privileged 3.6.5, strongly ordered I/O regions; Linux's
///   readl/writel to one device rely on it);
/// - SFENCE.VMA (class `TlbInvalidate`, this hart only) orders the hart's
///   earlier stores to the page tables before its invalidation and is
///   complete when it retires: later implicit references, instruction
///   fetch included, use the new tables (privileged 4.2.1). So a plain
///   `sfence.vma` needs no barrier on either side; only Svinval's
///   SINVAL.VMA (class `LocalInvalidate`) does.
pub fn implicit(from: Class, to: Class, same_strong_device: bool) -> bool {
    match (from, to) {
        (DevStore | DevLoad, DevStore | DevLoad) => same_strong_device,
        (NormalStore, TlbInvalidate)
        | (TlbInvalidate, TlbInvalidate | InvalidateCompletion)
        | (InvalidateCompletion, ContextSync) => true,
        _ => false,
    }
}

// A release is a plain store after the default release barrier, the
// cheapest fence that orders what the critical section did before it
// (Linux's RISCV_RELEASE_BARRIER is `fence rw,w`; device accesses need
// I/O in the predecessor set).
impl crate::isa::backend::MemoryModel for super::Riscv64 {
    /// LR.aq orders the lock's load before later memory accesses, but
    /// not before device (I/O) accesses: `fence r,iorw` after the taken
    /// lock does.
    fn acquire_barrier(
        &self,
        _machine: crate::ir::Machine,
    ) -> Option<crate::isa::barriers::Barrier> {
        Some(crate::isa::barriers::Barrier::named(TABLE, "fence r,iorw"))
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
