//! POWER barrier table (Power ISA v3.0B, Book II chapter 1.7 "Storage
//! Access Ordering" and chapter 4.6 "Memory Barrier Instructions"; Book III
//! 6.10 for tlbie/tlbsync/ptesync).

use super::insn::Insn;
use crate::ir::order::Class::{self, *};
use crate::isa::barriers::{all_access_and, device_access_and, insns, BarrierKind};

/// All load/store class pairs.
const ALL_ACCESS: &[(Class, Class)] = all_access_and!();

/// eieio's (Book III-E: `mbar` 0's): caching-inhibited guarded accesses
/// among themselves, cacheable stores among themselves.
pub(super) const EIEIO: &[(Class, Class)] = device_access_and![(NormalStore, NormalStore)];

/// lwsync's (sync L=1): cacheable accesses except store -> load.
pub(super) const LWSYNC: &[(Class, Class)] = &[
    (NormalStore, NormalStore),
    (NormalLoad, NormalLoad),
    (NormalLoad, NormalStore),
];

/// Every access pair (hwsync), page-table stores before an invalidation
/// and invalidations after one another, then `extra`: what `ptesync` and
/// the tlbsync sequence both order.
macro_rules! ptesync_and {
    ($($extra:expr),* $(,)?) => {
        all_access_and![
            (NormalStore, TlbInvalidate),
            (NormalStore, LocalInvalidate),
            (TlbInvalidate, TlbInvalidate),
            (TlbInvalidate, LocalInvalidate),
            (LocalInvalidate, TlbInvalidate),
            (LocalInvalidate, LocalInvalidate),
            $($extra),*
        ]
    };
}

/// isync's in both tables, then `extra`. Book II 4.6.1 / Book III 1.6:
/// context synchronizing; later instructions are fetched in the new
/// context.
macro_rules! isync_and {
    ($($extra:expr),* $(,)?) => {{
        use $crate::ir::order::Class::*;
        &[
            (InvalidateCompletion, ContextSync),
            (NormalLoad, ContextSync),
            $($extra),*
        ]
    }};
}
pub(super) use isync_and;

pub static TABLE: &[BarrierKind] = &[
    BarrierKind {
        name: "eieio",
        insns: insns![Insn::Eieio],
        cost: 1,
        // Book II 4.6.2 (eieio): orders loads and stores to storage that is
        // both Caching Inhibited and Guarded, and stores to Memory Coherence
        // Required storage that is neither Write Through nor CI, each set
        // among itself. It does not order a cacheable store before a CI
        // store: that needs sync.
        orders: EIEIO,
        cite: "Power ISA v3.0B Book II 4.6.2 eieio",
    },
    BarrierKind {
        name: "lwsync",
        insns: insns![Insn::Lwsync],
        cost: 2,
        // Book II 4.6.3: lightweight sync orders cacheable accesses except
        // store -> load; it does not apply to Caching Inhibited storage.
        orders: LWSYNC,
        cite: "Power ISA v3.0B Book II 4.6.3 sync L=1 (lwsync)",
    },
    BarrierKind {
        name: "sync",
        insns: insns![Insn::Sync],
        cost: 8,
        // Book II 4.6.3: heavyweight sync orders all storage accesses of
        // all kinds, including cacheable before CI.
        orders: ALL_ACCESS,
        cite: "Power ISA v3.0B Book II 4.6.3 sync L=0 (hwsync)",
    },
    BarrierKind {
        name: "ptesync",
        insns: insns![Insn::Ptesync],
        cost: 9,
        // Book III 6.10: ptesync is hwsync plus: page table stores are
        // visible to the table walk before later tlbie/tlbiel, and a
        // preceding tlbiel is complete after it (Book III 6.10.1.1; Linux
        // ppc_after_tlbiel_barrier). A tlbie is not: that takes tlbsync.
        // A later tlbie(l) is issued after an earlier one has been
        // performed: how Linux orders the POWER9 errata fixups' repeated
        // tlbie (radix_tlb.c fixup_tlbie_va: `ptesync` between the two;
        // "powerpc/mm: Fixup tlbie vs store ordering issue on POWER9"),
        // which `after invalidates` asks for.
        orders: ptesync_and![
            (LocalInvalidate, InvalidateCompletion),
            (InvalidateCompletion, NormalLoad),
            (InvalidateCompletion, DevStore),
            (InvalidateCompletion, ContextSync),
        ],
        cite: "Power ISA v3.0B Book II 4.6.3 sync L=2 (ptesync), Book III 6.10.1",
    },
    BarrierKind {
        name: "eieio; tlbsync; ptesync",
        insns: insns![Insn::Eieio, Insn::Tlbsync, Insn::Ptesync],
        cost: 20,
        // Book III 6.10.1: a tlbie is complete on all processors once a
        // tlbsync issued after it (eieio orders the tlbie before the
        // tlbsync) is followed by a ptesync. The three are one barrier:
        // none completes a tlbie alone, and Linux always writes them
        // together (radix_tlb.c: "eieio; tlbsync; ptesync").
        orders: ptesync_and![
            (TlbInvalidate, InvalidateCompletion),
            (LocalInvalidate, InvalidateCompletion),
            (InvalidateCompletion, NormalLoad),
            (InvalidateCompletion, DevStore),
            (InvalidateCompletion, ContextSync),
        ],
        cite: "Power ISA v3.0B Book III 6.10.1 tlbsync; Linux radix_tlb.c",
    },
    BarrierKind {
        name: "tlbsync",
        insns: insns![Insn::Tlbsync],
        cost: 10,
        // Alone it completes nothing a spec can rely on (see above); it
        // stays spellable for `barrier tlbsync` in hand-ordered code.
        orders: &[],
        cite: "Power ISA v3.0B Book III 6.10.1 tlbsync",
    },
    BarrierKind {
        name: "cp_abort",
        insns: insns![Insn::CpAbort],
        cost: 1,
        // Not an ordering: clears the copy-paste buffer, which Linux does
        // after tlbiel on ISA 3.1 CPUs (ppc_after_tlbiel_barrier). Only
        // ever written by a spec (`barrier cp_abort`), never placed.
        orders: &[],
        cite: "Power ISA v3.1 Book II 4.4 cp_abort",
    },
    BarrierKind {
        name: "isync",
        insns: insns![Insn::Isync],
        cost: 3,
        // Book III 5.9.3.3: an slbia's ERAT invalidation takes effect
        // at the next context-synchronizing instruction (Linux: "slbia;
        // isync").
        orders: isync_and![(EratInvalidate, InvalidateCompletion)],
        cite: "Power ISA v3.0B Book II 4.6.1 isync, Book III 5.9.3.3",
    },
];

/// POWER orders nothing between different addresses for free: even CI
/// stores to one device need eieio unless the mapping is Guarded and the
/// device's spec says so, and device specs state what they need.
pub fn implicit(_from: Class, _to: Class, _same_strong_device: bool) -> bool {
    false
}

/// Book III-S's table, or Book III-E's on e6500. A release is a plain
/// store after the default release barrier: `lwsync` (`sync` after device
/// accesses).
impl crate::isa::backend::MemoryModel for super::Power {
    fn table(&self, machine: crate::ir::Machine) -> &'static [BarrierKind] {
        match machine {
            crate::ir::Machine::E6500 => super::book3e::TABLE,
            crate::ir::Machine::Book3s => TABLE,
        }
    }

    /// `isync` after the branch-dependent store-conditional (Book II
    /// B.2.1.1, "Acquire Lock").
    fn acquire_barrier(
        &self,
        machine: crate::ir::Machine,
    ) -> Option<crate::isa::barriers::Barrier> {
        Some(crate::isa::barriers::Barrier::named(
            self.table(machine),
            "isync",
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::isa::barriers::assert_lowers_as_named;
    use crate::isa::power::insn::RegStyle;

    #[test]
    fn entries_lower_as_named() {
        // The assembly spells `cp_abort` without the underscore (GNU as
        // knows both; see the backend's capstone aliases).
        let text = |i: &Insn| match i.text(RegStyle::Bare, &|l| l.to_string()) {
            t if t == "cpabort" => "cp_abort".to_string(),
            t => t,
        };
        assert_lowers_as_named(TABLE, text);
        assert_lowers_as_named(crate::isa::power::book3e::TABLE, text);
    }
}
