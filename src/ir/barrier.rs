//! The shape of a per-target barrier table, and [`Barrier`], the handle
//! the IR and LIR hold for one of its entries. The tables themselves are
//! each target's (`crate::isa::<arch>::barriers`).
//!
//! Each target's table is the one source of what a barrier is: its name
//! (as the spec and the assembly spell it), what it orders, what it costs
//! and the machine instructions it lowers to. A barrier name is resolved
//! against the table once, where a spec's `barrier NAME` is checked
//! (`passes::barriers::resolve_spec_barriers`); everything after holds a
//! [`Barrier`] and lowers it without reading its name.

use std::any::Any;
use std::fmt;
use std::hash::{Hash, Hasher};

use crate::ir::order::Class;

/// The 16 load/store class pairs (every access before every access: the
/// device pairs and these 12 with normal memory), then `extra` pairs: the
/// `orders` of a full barrier (`sync`, `dsb sy`) and of those that are a
/// full barrier and more (`ptesync`, `msync`).
macro_rules! all_access_and {
    ($($extra:expr),* $(,)?) => {
        $crate::ir::barrier::device_access_and![
            (NormalStore, NormalStore), (NormalStore, NormalLoad),
            (NormalLoad, NormalStore), (NormalLoad, NormalLoad),
            (NormalStore, DevStore), (NormalStore, DevLoad),
            (NormalLoad, DevStore), (NormalLoad, DevLoad),
            (DevStore, NormalStore), (DevStore, NormalLoad),
            (DevLoad, NormalStore), (DevLoad, NormalLoad),
            $($extra),*
        ]
    };
}
pub(crate) use all_access_and;

/// The 4 pairs among normal-memory loads and stores, then `extra` pairs.
macro_rules! normal_access_and {
    ($($extra:expr),* $(,)?) => {{
        use $crate::ir::order::Class::*;
        &[
            (NormalStore, NormalStore), (NormalStore, NormalLoad),
            (NormalLoad, NormalStore), (NormalLoad, NormalLoad),
            $($extra),*
        ]
    }};
}
pub(crate) use normal_access_and;

/// The 4 pairs among device loads and stores, then `extra` pairs.
macro_rules! device_access_and {
    ($($extra:expr),* $(,)?) => {{
        use $crate::ir::order::Class::*;
        &[
            (DevStore, DevStore), (DevStore, DevLoad), (DevLoad, DevStore), (DevLoad, DevLoad),
            $($extra),*
        ]
    }};
}
pub(crate) use device_access_and;

/// One barrier instruction and the ordering it provides.
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
    /// The target's instructions, in order, as a `&'static [Insn]` of the
    /// table's own target (write it with [`insns!`]). Type-erased because
    /// the table's shape, the IR and the LIR are shared by all targets;
    /// [`BarrierKind::insns`] gives them back typed.
    pub insns: &'static (dyn Any + Send + Sync),
}

/// The `insns` of a [`BarrierKind`]: `insns![Insn::Eieio, Insn::Tlbsync]`.
macro_rules! insns {
    ($($insn:expr),+ $(,)?) => {
        &(&[$($insn),+] as &[_])
    };
}
pub(crate) use insns;

impl BarrierKind {
    pub fn covers(&self, from: Class, to: Class) -> bool {
        self.orders.contains(&(from, to))
    }

    /// The mnemonics it is made of, in order: one, or several for a
    /// barrier that only a sequence provides (POWER `eieio; tlbsync;
    /// ptesync`). What the checks match against disassembly.
    pub fn parts(&self) -> impl Iterator<Item = &'static str> {
        self.name.split("; ")
    }

    /// The machine instructions it lowers to, as the target's `Insn`
    /// type. Panics if `I` is not the type of the table's target: a
    /// barrier of one target lowered by another, which resolution against
    /// the target's own table rules out.
    pub fn insns<I: 'static>(&self) -> &'static [I] {
        match self.insns.downcast_ref::<&'static [I]>() {
            Some(insns) => insns,
            None => panic!("barrier `{}` lowered for another target", self.name),
        }
    }

    /// Emit [`BarrierKind::insns`].
    pub fn lower<I: Clone + 'static>(&self, e: &mut dyn FnMut(I)) {
        for insn in self.insns::<I>() {
            e(insn.clone());
        }
    }
}

/// A barrier of some target's table: the only way the IR and LIR name
/// one, so that a barrier past the spec check is known to exist and lowers
/// without a lookup. Compared and hashed by name, which is unique within
/// a table (the two POWER tables share `lwsync`, `isync` and `tlbsync`,
/// the same instructions).
#[derive(Clone, Copy)]
pub struct Barrier(&'static BarrierKind);

impl Barrier {
    /// The entry of `table` named `name` (as [`BarrierKind::name`]).
    pub fn find(table: &'static [BarrierKind], name: &str) -> Option<Barrier> {
        find(table, name).map(Barrier)
    }

    /// The entry of `table` named `name`, for the few barriers a
    /// backend names itself (the lock barriers); a typo panics on the
    /// first use, which every lock test makes.
    pub fn named(table: &'static [BarrierKind], name: &str) -> Barrier {
        Barrier::find(table, name)
            .unwrap_or_else(|| panic!("no barrier `{name}` in the target's table"))
    }

    pub fn of(kind: &'static BarrierKind) -> Barrier {
        Barrier(kind)
    }

    pub fn name(self) -> &'static str {
        self.0.name
    }
}

impl std::ops::Deref for Barrier {
    type Target = BarrierKind;
    fn deref(&self) -> &BarrierKind {
        self.0
    }
}

impl PartialEq for Barrier {
    fn eq(&self, other: &Barrier) -> bool {
        self.0.name == other.0.name
    }
}

impl Eq for Barrier {}

impl Hash for Barrier {
    fn hash<H: Hasher>(&self, h: &mut H) {
        self.0.name.hash(h)
    }
}

impl fmt::Display for Barrier {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.0.name)
    }
}

impl fmt::Debug for Barrier {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?}", self.0.name)
    }
}

/// The barriers that a run of consecutive barrier instructions ending at
/// its last element provides: every kind whose parts are the run's
/// suffix. Executed code is traced one instruction at a time, so a
/// composite barrier counts only when all its parts ran in order with no
/// other access between them.
pub fn ending_run<'a>(
    table: &'static [BarrierKind],
    run: &'a [&'a str],
) -> impl Iterator<Item = &'static BarrierKind> + 'a {
    table.iter().filter(move |k| {
        let parts: Vec<&str> = k.parts().collect();
        run.len() >= parts.len() && run[run.len() - parts.len()..] == parts[..]
    })
}

pub fn find(table: &'static [BarrierKind], name: &str) -> Option<&'static BarrierKind> {
    table.iter().find(|b| b.name == name)
}

/// Every entry of `table` lowers to instructions that print, joined by
/// `; `, as the entry's name: the name the spec, the listings and the
/// disassembly checks use is the code the lowering emits.
#[cfg(test)]
pub(crate) fn assert_lowers_as_named<I: Clone + 'static>(
    table: &'static [BarrierKind],
    text: impl Fn(&I) -> String,
) {
    for k in table {
        let printed: Vec<String> = k.insns::<I>().iter().map(&text).collect();
        assert_eq!(printed.join("; "), k.name);
    }
}
