//! What the lock passes and the lowering of `acquire`/`release` need to
//! know about a target's barriers and reservation windows.
//!
//! The passes themselves: `hoist_window`, `reuse_loads`,
//! `weaken_release`, `naive_barriers`.

use crate::ir::order::Class;
use crate::ir::{MemRef, ReleaseOrder, Seq};
use crate::target::{Machine, Target};

/// The cheapest barrier of `target`'s table that orders every pair.
pub fn cheapest(
    target: Target,
    machine: Machine,
    pairs: &[(Class, Class)],
) -> Option<&'static str> {
    target
        .table(machine)
        .iter()
        .filter(|b| pairs.iter().all(|&(a, c)| b.covers(a, c)))
        .min_by_key(|b| b.cost)
        .map(|b| b.name)
}

/// The barrier (if any) a release of `order` needs before its store, on
/// targets that release with a plain store (POWER: `lwsync`, `sync` after
/// device accesses). AArch64 releases with `stlr`, which orders every
/// earlier explicit access, Device memory included (Arm ARM B2.3.7; Linux
/// arm64 has no `mmiowb` for this reason), and x86-64 stores are ordered
/// among themselves, UC included (TSO): none.
pub fn release_barrier(
    target: Target,
    machine: Machine,
    order: ReleaseOrder,
) -> Option<&'static str> {
    match target {
        Target::Power64 | Target::Power64le => {
            let pairs: &[(Class, Class)] = match order {
                ReleaseOrder::Full => &[
                    (Class::NormalLoad, Class::NormalStore),
                    (Class::NormalStore, Class::NormalStore),
                ],
                ReleaseOrder::StoresOnly => &[(Class::NormalStore, Class::NormalStore)],
                ReleaseOrder::Device => &[
                    (Class::NormalLoad, Class::NormalStore),
                    (Class::NormalStore, Class::NormalStore),
                    (Class::DevLoad, Class::NormalStore),
                    (Class::DevStore, Class::NormalStore),
                ],
            };
            cheapest(target, machine, pairs)
        }
        Target::Aarch64 | Target::X86_64 => None,
    }
}

/// The barrier after a lock is taken: POWER's `isync` after the
/// branch-dependent store-conditional (Book II B.2.1.1, "Acquire Lock");
/// AArch64 acquires with `ldaxr`, x86-64 with `lock cmpxchg`.
pub fn acquire_barrier(target: Target) -> Option<&'static str> {
    match target {
        Target::Power64 | Target::Power64le => Some("isync"),
        Target::Aarch64 | Target::X86_64 => None,
    }
}

pub(super) fn window_name(target: Target, width: u32) -> String {
    let c = match width {
        8 => "b",
        16 => "h",
        32 => "w",
        _ => "d",
    };
    match target {
        Target::Power64 | Target::Power64le => format!("l{c}arx/st{c}cx."),
        Target::Aarch64 => {
            let a = match width {
                8 => "b",
                16 => "h",
                _ => "",
            };
            format!("ldaxr{a}/stxr{a}")
        }
        Target::X86_64 => "load/lock cmpxchg".into(),
    }
}

pub(super) fn mem_text(seq: &Seq, m: &MemRef) -> String {
    format!(
        "{}[{:#x}]",
        seq.params.get(m.ptr).map(String::as_str).unwrap_or("?"),
        m.offset
    )
}
