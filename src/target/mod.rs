//! Targets: per-architecture instruction sets, barrier tables, lowering
//! and ABI. Each target directory is cut like cranelift's `isa/<arch>`:
//! `insn` (encoding + text), `barriers` (memory-model table), `lower`
//! (LIR -> instructions), and the file templates live in `templates/`.

pub mod aarch64;
pub mod backend;
pub mod barriers;
pub mod hweight;
pub mod invalidation;
pub mod mach;
pub mod power;
pub mod riscv64;
pub mod scaffold;
pub mod style;
#[cfg(test)]
pub(crate) mod test_values;
pub mod x86_64;

use crate::ir::order::Class;
use crate::lir::regalloc::{Allocation, RegFile};
use crate::lir::Func;
pub use backend::Backend;
use mach::MachFunc;
use std::fmt;
use style::Style;

/// The most arguments a sequence may take (device bases and counts
/// included), on every target alike so that a spec does not build for one
/// and fail for another. Arguments past the argument registers are read
/// from the caller's stack; Linux-style POWER code names those slots with
/// the kernel's `STK_PARAM(R11)` .. `STK_PARAM(R31)` (`asm/ppc_asm.h`, the
/// idiom of `plpar_hcall9`), whose register names end at r31: arguments 1
/// to 29.
pub const MAX_ARGS: usize = 29;

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

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Target {
    Power64,
    Power64le,
    Aarch64,
    X86_64,
    Riscv64,
}

impl Target {
    pub const ALL: [Target; 5] = [
        Target::Power64,
        Target::Power64le,
        Target::Aarch64,
        Target::X86_64,
        Target::Riscv64,
    ];

    /// What a spec without a (known) `target` line is built for: the
    /// seeds' first architecture.
    pub const DEFAULT: Target = Target::Power64;

    /// The registration point: the one place that names each target's
    /// backend.
    pub fn backend(self) -> &'static dyn Backend {
        match self {
            Target::Power64 => &power::BE,
            Target::Power64le => &power::LE,
            Target::Aarch64 => &aarch64::BACKEND,
            Target::X86_64 => &x86_64::BACKEND,
            Target::Riscv64 => &riscv64::BACKEND,
        }
    }

    pub fn name(self) -> &'static str {
        self.backend().name()
    }

    pub fn from_name(s: &str) -> Option<Target> {
        Target::ALL.into_iter().find(|t| t.name() == s)
    }

    pub fn big_endian(self) -> bool {
        self.backend().big_endian()
    }

    /// GNU triple prefix of the cross toolchain that reads our `.S`.
    pub fn triple(self) -> &'static str {
        self.backend().triple()
    }

    /// Argument and allocatable registers of the target's ABI.
    pub fn regfile(self) -> &'static RegFile {
        self.backend().regfile()
    }

    /// Lower an allocated LIR function to this target's machine code.
    pub fn codegen(
        self,
        f: &Func,
        alloc: &Allocation,
        symbol: &str,
        style: Style,
        machine: Machine,
    ) -> Result<MachFunc, String> {
        self.backend().codegen(f, alloc, symbol, style, machine)
    }

    /// The CPU invalidation `name` with `n` register operands, checked
    /// for this target on `machine` (POWER's families differ) and typed
    /// for its lowering. The error says why the target cannot lower it.
    pub fn invalidation(
        self,
        m: Machine,
        name: &str,
        n: usize,
    ) -> Result<invalidation::Invalidation, String> {
        self.backend().invalidation(m, name, n)
    }

    /// The barrier table of this target on `machine` (POWER Book III-E
    /// has its own; other targets ignore it).
    pub fn table(self, m: Machine) -> &'static [barriers::BarrierKind] {
        self.backend().table(m)
    }

    pub fn barriers(self) -> &'static [barriers::BarrierKind] {
        self.table(Machine::Book3s)
    }

    /// Does the memory model order `from` before `to` without any barrier?
    /// `same_strong_device`: both accesses go to one device instance mapped
    /// with the strong (default) attributes.
    pub fn orders_implicitly(self, from: Class, to: Class, same_strong_device: bool) -> bool {
        self.backend()
            .orders_implicitly(from, to, same_strong_device)
    }
}

/// The cheapest barrier of `table` that orders every pair.
pub fn cheapest(
    table: &'static [barriers::BarrierKind],
    pairs: &[(Class, Class)],
) -> Option<barriers::Barrier> {
    table
        .iter()
        .filter(|b| pairs.iter().all(|&(a, c)| b.covers(a, c)))
        .min_by_key(|b| b.cost)
        .map(barriers::Barrier::of)
}

impl fmt::Display for Target {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}
