//! What the lock passes and the lowering of `acquire`/`release` need to
//! know about a target's barriers and reservation windows.
//!
//! The passes themselves: `hoist_window`, `reuse_loads`,
//! `weaken_release`, `naive_barriers`.

use crate::ir::order::Class;
use crate::ir::{MemRef, ReleaseOrder, Seq};
use crate::isa::barriers::Barrier;
use crate::isa::{Machine, Target};

/// The cheapest barrier of `target`'s table that orders every pair.
pub fn cheapest(target: Target, machine: Machine, pairs: &[(Class, Class)]) -> Option<Barrier> {
    crate::isa::cheapest(target.table(machine), pairs)
}

/// The barrier (if any) a release of `order` needs before its store.
pub fn release_barrier(target: Target, machine: Machine, order: ReleaseOrder) -> Option<Barrier> {
    target.backend().release_barrier(machine, order)
}

/// The barrier after a lock is taken.
pub fn acquire_barrier(target: Target, machine: Machine) -> Option<Barrier> {
    target.backend().acquire_barrier(machine)
}

pub(super) fn window_name(target: Target, width: u32) -> String {
    target.backend().reservation_window(width)
}

pub(super) fn mem_text(seq: &Seq, m: &MemRef) -> String {
    format!(
        "{}[{:#x}]",
        seq.params.get(m.ptr).map(String::as_str).unwrap_or("?"),
        m.offset
    )
}
