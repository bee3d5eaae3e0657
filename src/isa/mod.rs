//! Targets: per-architecture instruction sets, barrier tables, lowering
//! and ABI. Each target directory is cut like cranelift's `isa/<arch>`:
//! `insn` (instructions, encoding, text), `lower` (LIR -> instructions),
//! and one file per role of [`backend`]: `barriers` (memory model),
//! `syntax` (what a spec may write), `emit` (what the one code generation
//! driver, [`codegen`], asks of the target; the file template), `oracles`
//! (what the checks read the code back with); the file templates live in
//! `templates/`. [`targets!`] is the registry.

pub mod assembler;
pub mod backend;
pub mod barriers;
pub mod codegen;
pub mod emit;
pub mod error;
pub mod file;
pub mod herd;
pub mod hweight;
mod imms;
pub mod lower_common;
pub use crate::lir::invalidation;
pub mod litmus;
pub mod mach;
pub mod scaffold;
pub mod style;
#[cfg(test)]
pub(crate) mod test_values;

use crate::ir::order::Class;
use crate::lir::regalloc::{Allocation, RegFile};
use crate::lir::Func;
pub use backend::Backend;
use mach::MachFunc;
use std::fmt;
use style::Style;

pub use crate::lir::builder::MAX_ARGS;

pub use crate::ir::Machine;

/// The role modules every ISA directory has (`SKELETON` in the tests
/// below), declared alike in each: what other modules use is public.
/// `lower_tests` is `lower`'s test module.
macro_rules! skeleton {
    () => {
        pub mod barriers;
        pub mod emit;
        #[cfg(feature = "emu")]
        mod emu;
        pub mod insn;
        pub mod litmus;
        pub mod lower;
        mod oracles;
        mod syntax;
    };
}
pub(crate) use skeleton;

/// A [`backend::Description`] with `fields` and what the ISA's skeleton
/// modules give every ISA alike: `lower::REGS`, the memory model in
/// `barriers` (`TABLE`, `implicit`) and `syntax::WORDS`.
macro_rules! description {
    ($($field:ident $(: $value:expr)?),* $(,)?) => {
        $crate::isa::backend::Description {
            regs: &lower::REGS,
            barriers: barriers::TABLE,
            implicit: barriers::implicit,
            words: &syntax::WORDS,
            $($field $(: $value)?),*
        }
    };
}
pub(crate) use description;

/// An ISA that serves one target: its backend type, named `NAME` with
/// the toolchain `TRIPLE`, the `BACKEND` the registry names, and its
/// [`description!`] with the other `fields`.
macro_rules! one_target {
    ($ty:ident: $name:literal, $triple:literal, $($field:ident: $value:expr),* $(,)?) => {
        pub struct $ty;

        pub static BACKEND: $ty = $ty;

        impl $crate::isa::backend::Described for $ty {
            fn description(&self) -> &$crate::isa::backend::Description {
                static DESCRIPTION: $crate::isa::backend::Description =
                    $crate::isa::description!(name: $name, triple: $triple, $($field: $value),*);
                &DESCRIPTION
            }
        }
    };
}
pub(crate) use one_target;

/// The registry of instruction sets: one line per instruction set names
/// its directory and, for each target it serves, the variant and the
/// backend. From it come the `pub mod`, the [`Target`] enum, its `ALL`
/// list (the order of lists and lookups), [`Target::backend`],
/// [`Target::codegen`] and the target's registration with the IR
/// (`ir::isa::ISAS`).
macro_rules! targets {
    ($($isa:ident { $($variant:ident => $backend:ident),+ $(,)? })+) => {
        $(pub mod $isa;)+
        targets!(@targets $($($variant => $isa::$backend),+),+);
    };
    (@targets $($variant:ident => $isa:ident :: $backend:ident),+) => {
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum Target {
            $($variant),+
        }

        impl Target {
            pub const ALL: [Target; [$(Target::$variant),+].len()] = [$(Target::$variant),+];

            /// The directory under `src/isa` of the target's instruction
            /// set.
            pub fn isa_dir(self) -> &'static str {
                match self {
                    $(Target::$variant => stringify!($isa)),+
                }
            }

            /// The target's backend: everything else asks it.
            pub fn backend(self) -> &'static dyn Backend {
                match self {
                    $(Target::$variant => &$isa::$backend),+
                }
            }

            /// Lower an allocated LIR function to this target's machine
            /// code: the one driver over the backend's
            /// [`codegen::Codegen`].
            pub fn codegen(
                self,
                f: &Func,
                alloc: &Allocation,
                symbol: &str,
                style: Style,
                machine: Machine,
            ) -> Result<MachFunc, error::CodegenError> {
                match self {
                    $(Target::$variant => codegen::run(&$isa::$backend, f, alloc, symbol, style, machine)),+
                }
            }
        }

        $(
            #[allow(non_upper_case_globals)]
            #[linkme::distributed_slice(crate::ir::isa::ISAS)]
            static $variant: &dyn crate::ir::isa::Isa = &FrontEnd(Target::$variant);
        )+
    };
}

targets! {
    power { Power64 => BE, Power64le => LE }
    aarch64 { Aarch64 => BACKEND }
    x86_64 { X86_64 => BACKEND }
    riscv64 { Riscv64 => BACKEND }
}

impl Target {
    /// What a spec without a (known) `target` line is built for: the
    /// seeds' first architecture.
    pub const DEFAULT: Target = Target::Power64;

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

    /// The CPU invalidation `name` with `n` register operands, checked
    /// for this target on `machine` (POWER's families differ) and typed
    /// for its lowering. The error says why the target cannot lower it.
    pub fn invalidation(
        self,
        m: Machine,
        name: &str,
        n: usize,
    ) -> Result<invalidation::Invalidation, crate::ir::isa::InvalidationError> {
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

/// A target as the IR asks about it ([`crate::ir::isa`]).
struct FrontEnd(Target);

impl crate::ir::isa::Isa for FrontEnd {
    fn name(&self) -> &'static str {
        self.0.name()
    }
    fn rank(&self) -> usize {
        Target::ALL
            .iter()
            .position(|t| *t == self.0)
            .unwrap_or(usize::MAX)
    }
    fn big_endian(&self) -> bool {
        self.0.big_endian()
    }
    fn has_machines(&self) -> bool {
        self.0.backend().has_machines()
    }
    fn via_insn(&self, name: &str) -> bool {
        self.0.backend().via_insn(name)
    }
    fn check_invalidation(
        &self,
        machine: Machine,
        name: &str,
        n: usize,
    ) -> Result<(), crate::ir::isa::InvalidationError> {
        self.0.backend().invalidation(machine, name, n).map(|_| ())
    }
    fn invalidate_class(&self, mnemonic: &str) -> Option<Class> {
        self.0.backend().invalidate_class(mnemonic)
    }
    fn spr(&self, machine: Machine, name: &str) -> Result<crate::ir::Spr, crate::ir::SprError> {
        self.0.backend().spr(machine, name)
    }
}

/// What building a target's LIR asks of it.
impl crate::lir::builder::BuildTarget for Target {
    fn regfile(&self) -> &'static RegFile {
        Target::regfile(*self)
    }
    fn big_endian(&self) -> bool {
        Target::big_endian(*self)
    }
    fn swap_is_indexed(&self) -> bool {
        self.backend().swap_is_indexed()
    }
    fn acquire_barrier(&self, m: Machine) -> Option<barriers::Barrier> {
        self.backend().acquire_barrier(m)
    }
    fn release_barrier(
        &self,
        m: Machine,
        order: crate::ir::ReleaseOrder,
    ) -> Option<barriers::Barrier> {
        self.backend().release_barrier(m, order)
    }
    fn set_cmp(&self) -> bool {
        self.backend().description().set_cmp
    }
    fn branch_compares_registers(&self) -> bool {
        self.backend().description().branch_compares_registers
    }
    fn counts_on_a_register(&self) -> bool {
        self.backend().counts_on_a_register()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every target is registered with the IR once, in `ALL`'s order.
    #[test]
    fn every_target_is_an_isa_of_the_ir() {
        let names: Vec<&str> = crate::ir::isa::all().iter().map(|i| i.name()).collect();
        assert_eq!(names, Target::ALL.map(Target::name));
        for t in Target::ALL {
            let isa = crate::ir::isa::by_name(t.name()).unwrap();
            assert_eq!(isa.big_endian(), t.big_endian());
            assert_eq!(isa.has_machines(), t.backend().has_machines());
        }
    }

    /// The files every instruction set has, one job each (an ISA may have
    /// more: `mem.rs`, `decode.rs`, POWER's `book3e.rs`...), so that a
    /// reader finds the same thing in the same place in every directory.
    const SKELETON: [&str; 14] = [
        "mod.rs",
        "barriers.rs",
        "emit.rs",
        "emu.rs",
        "litmus.rs",
        "lower.rs",
        "lower_tests.rs",
        "oracles.rs",
        "syntax.rs",
        "insn/mod.rs",
        "insn/regs.rs",
        "insn/imms.rs",
        "insn/encode.rs",
        "insn/text.rs",
    ];

    /// Every ISA directory has the skeleton, and every directory under
    /// `src/isa` is a registered ISA's.
    #[test]
    fn every_isa_directory_has_the_skeleton() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src/isa");
        let mut dirs: Vec<String> = std::fs::read_dir(&root)
            .unwrap()
            .map(|e| e.unwrap())
            .filter(|e| e.file_type().unwrap().is_dir())
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        dirs.sort();
        let mut isas: Vec<&str> = Target::ALL.iter().map(|t| t.isa_dir()).collect();
        isas.sort();
        isas.dedup();
        assert_eq!(dirs, isas, "directories under src/isa vs registered ISAs");
        for d in &dirs {
            for f in SKELETON {
                assert!(root.join(d).join(f).is_file(), "src/isa/{d}/{f} is missing");
            }
        }
    }
}
