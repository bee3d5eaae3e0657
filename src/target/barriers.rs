//! The shape of a per-target barrier table.

use crate::ir::order::Class;

/// The 16 load/store class pairs (every access before every access), then
/// `extra` pairs: the `orders` of a full barrier (`sync`, `dsb sy`) and of
/// those that are a full barrier and more (`ptesync`, `msync`).
macro_rules! all_access_and {
    ($($extra:expr),* $(,)?) => {{
        use $crate::ir::order::Class::*;
        &[
            (DevStore, DevStore), (DevStore, DevLoad), (DevLoad, DevStore), (DevLoad, DevLoad),
            (NormalStore, NormalStore), (NormalStore, NormalLoad),
            (NormalLoad, NormalStore), (NormalLoad, NormalLoad),
            (NormalStore, DevStore), (NormalStore, DevLoad),
            (NormalLoad, DevStore), (NormalLoad, DevLoad),
            (DevStore, NormalStore), (DevStore, NormalLoad),
            (DevLoad, NormalStore), (DevLoad, NormalLoad),
            $($extra),*
        ]
    }};
}
pub(crate) use all_access_and;

/// One barrier instruction and the ordering it provides.
#[derive(Debug)]
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
}

impl BarrierKind {
    pub fn covers(&self, from: Class, to: Class) -> bool {
        self.orders.contains(&(from, to))
    }

    /// The instructions it is made of, in order: one, or several for a
    /// barrier that only a sequence provides (POWER `eieio; tlbsync;
    /// ptesync`).
    pub fn parts(&self) -> impl Iterator<Item = &'static str> {
        self.name.split("; ")
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
