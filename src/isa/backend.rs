//! What a target provides, as four role traits, each implemented in the
//! ISA's file that has the knowledge (every `src/isa/<arch>/` has the
//! same four): [`MemoryModel`] (`barriers.rs`: the barrier table, implicit
//! orders, what locks need; for the passes), [`SpecWords`] (`syntax.rs`:
//! which invalidations, registers and patching a spec may name; for the
//! checker), [`Lowering`] (`emit.rs`, beside the target's
//! [`Codegen`](super::codegen::Codegen) that the one code generation
//! driver runs: ABI details, the file template) and [`Oracles`]
//! (`oracles.rs`: what the checks need to read the code back:
//! disassembler, aliases, branch flow, litmus dialect, emulator). A
//! [`Backend`] is a type with all four, over one [`Description`] (data).
//! [`super::Target::backend`] is the one registration point; the rest of
//! the crate asks the backend instead of matching on targets.

use super::barriers::{Barrier, BarrierKind};
use super::invalidation::Invalidation;
use super::Machine;
use crate::ir::feature::Patching;
use crate::ir::order::Class;
use crate::ir::ReleaseOrder;
use crate::isa::file::FileView;
use crate::lir::regalloc::RegFile;

/// What a target is, as data: its names, its ABI's registers and its
/// memory model. The role methods that only read one of these are given
/// once, by the traits.
pub struct Description {
    /// `--target` name.
    pub name: &'static str,
    /// GNU triple prefix of the cross toolchain that reads our `.S`.
    pub triple: &'static str,
    /// Argument and allocatable registers of the target's ABI.
    pub regs: &'static RegFile,
    /// The barrier table (POWER: Book III-S's; [`Backend::table`] picks
    /// the table of a CPU family).
    pub barriers: &'static [BarrierKind],
    /// Does the memory model order `from` before `to` without any
    /// barrier? (See [`Backend::orders_implicitly`].)
    pub implicit: fn(from: Class, to: Class, same_strong_device: bool) -> bool,
    /// Does the target set a register from a comparison without a branch
    /// ([`crate::lir::Inst::SetCmp`]: aarch64 `cmp; cset`, riscv64
    /// `sltu`)?
    pub set_cmp: bool,
    /// Do conditional branches compare two registers at no cost beyond
    /// the branch (riscv64 `bne a, b`)? Then a counted loop ends on its
    /// address instead of counting its trips down (one instruction less
    /// per trip); elsewhere a count's `subs; b.ne` or `bdnz`-like
    /// decrement-and-test is as cheap as a compare.
    pub branch_compares_registers: bool,
    /// What a spec may name of the target (its `syntax.rs`).
    pub words: &'static Words,
}

/// What a spec may name of a target, as data: [`SpecWords`] answers from
/// it unless the target says more (POWER's CPU families and SPRs).
pub struct Words {
    /// How the names of this target's CPU invalidation instructions start,
    /// as a granule's `via NAME` folds them (`tlbi `, `sinval.vma`).
    pub via_insns: &'static [&'static str],
    /// The CPU invalidation `name` with `n` register operands on
    /// `machine`, checked and typed for the lowering.
    pub invalidation:
        fn(Machine, &str, usize) -> Result<Invalidation, crate::ir::isa::InvalidationError>,
    /// The ways of patching a feature at boot that this target's kernel
    /// has.
    pub patching: &'static [Patching],
}

/// The data every role reads: a target's names, registers and memory
/// model table.
pub trait Described: Sync {
    fn description(&self) -> &Description;

    /// `--target` name.
    fn name(&self) -> &'static str {
        self.description().name
    }
    /// GNU triple prefix of the cross toolchain that reads our `.S`.
    fn triple(&self) -> &'static str {
        self.description().triple
    }
}

/// The memory model, as the passes and lock lowering ask it (the ISA's
/// `barriers.rs`).
pub trait MemoryModel: Described {
    /// The barrier table on `machine`.
    fn table(&self, _machine: Machine) -> &'static [BarrierKind] {
        self.description().barriers
    }
    /// Does the memory model order `from` before `to` without any barrier?
    /// `same_strong_device`: both accesses go to one device instance mapped
    /// with the strong (default) attributes.
    fn orders_implicitly(&self, from: Class, to: Class, same_strong_device: bool) -> bool {
        (self.description().implicit)(from, to, same_strong_device)
    }
    /// The barrier (if any) a release of `order` needs before its store:
    /// by default the cheapest that orders what the critical section did
    /// before it, device accesses included for [`ReleaseOrder::Device`].
    fn release_barrier(&self, machine: Machine, order: ReleaseOrder) -> Option<Barrier> {
        use Class::*;
        let pairs: &[(Class, Class)] = match order {
            ReleaseOrder::Full => &[(NormalLoad, NormalStore), (NormalStore, NormalStore)],
            ReleaseOrder::StoresOnly => &[(NormalStore, NormalStore)],
            ReleaseOrder::Device => &[
                (NormalLoad, NormalStore),
                (NormalStore, NormalStore),
                (DevLoad, NormalStore),
                (DevStore, NormalStore),
            ],
        };
        super::cheapest(self.table(machine), pairs)
    }
    /// The barrier after a lock is taken.
    fn acquire_barrier(&self, machine: Machine) -> Option<Barrier>;
    /// What `naive-barriers` puts before a reload of a location already
    /// read: the cheapest load->load barrier, where the model needs one.
    fn reload_barrier(&self, machine: Machine) -> Option<Barrier> {
        super::cheapest(
            self.table(machine),
            &[(Class::NormalLoad, Class::NormalLoad)],
        )
    }
}

/// What a spec may name on this target, as checking asks it (the ISA's
/// `syntax.rs`, beside how the spec spells it).
pub trait SpecWords: Described {
    /// Does this target have CPU families (`machine NAME`)?
    fn has_machines(&self) -> bool {
        false
    }
    /// The CPU invalidation `name` with `n` register operands, checked
    /// and parsed into this target's typed operation on `machine`; the
    /// error says why the target cannot lower it.
    fn invalidation(
        &self,
        machine: Machine,
        name: &str,
        n: usize,
    ) -> Result<Invalidation, crate::ir::isa::InvalidationError> {
        (self.description().words.invalidation)(machine, name, n)
    }
    /// The ordering class of this target's CPU invalidation `mnemonic`
    /// (the IR name's first word) where it is not the default
    /// [`Class::TlbInvalidate`] (broadcast, complete after the target's
    /// completion barrier): a CPU-local or ERAT invalidation.
    fn invalidate_class(&self, _mnemonic: &str) -> Option<Class> {
        None
    }
    /// Does the granule `via NAME` (as the parser folds it: `tlbi
    /// vale1is`, `tlbie ric=0 prs=1 r=1`) name one of this target's CPU
    /// invalidation instructions?
    fn via_insn(&self, name: &str) -> bool {
        let via = self.description().words.via_insns;
        via.iter().any(|p| name.starts_with(p))
    }
    /// The special-purpose register `name` a spec may move with
    /// `mtspr`/`mfspr` (and `tlbsx`/`tlbre` may be used) on `machine`.
    fn spr(&self, _machine: Machine, _name: &str) -> Result<crate::ir::Spr, crate::ir::SprError> {
        Err(crate::ir::SprError::NoSprs {
            target: self.description().name,
        })
    }
    /// Is a feature patched this way (`cap`) one this target's kernel
    /// patches at boot?
    fn patches(&self, p: Patching) -> bool {
        self.description().words.patching.contains(&p)
    }
}

/// The ABI details around code generation (the ISA's `emit.rs`, beside
/// its [`Codegen`](super::codegen::Codegen), which the one driver runs).
pub trait Lowering: Described {
    fn big_endian(&self) -> bool {
        false
    }
    /// Do byte-reversed loads and stores take only base + index (no
    /// displacement)?
    fn swap_is_indexed(&self) -> bool {
        false
    }
    /// Does a counted loop's bottom test cost one instruction (POWER's
    /// `bdnz` on the count register, `isa::power::ctr`)?
    fn counts_on_a_register(&self) -> bool {
        false
    }
    /// Argument and allocatable registers of the target's ABI.
    fn regfile(&self) -> &'static RegFile {
        self.description().regs
    }
    /// The `.S` file around the functions.
    fn render_file(&self, v: &FileView) -> Result<String, askama::Error>;
    /// How a reservation window of `width` bits is written, for notes.
    fn reservation_window(&self, width: u32) -> String;
    /// Symbol of a function's first instruction in the object file.
    fn code_symbol(&self, symbol: &str) -> String {
        symbol.to_string()
    }
}

/// What the checks need to read this target's code back with tools we
/// did not write (the ISA's `oracles.rs`).
pub trait Oracles: Described {
    /// Capstone set up for this target's code.
    fn disassembler(&self) -> capstone::CsResult<capstone::Capstone>;
    /// Instruction length when fixed.
    fn fixed_insn_len(&self) -> Option<usize> {
        Some(4)
    }
    /// Our mnemonic and the aliases capstone may print for it.
    fn capstone_aliases(&self) -> &'static [(&'static str, &'static [&'static str])] {
        &[]
    }
    /// Does capstone print AT&T size suffixes (`movq` for our `mov`)?
    fn capstone_size_suffixes(&self) -> bool {
        false
    }
    /// Where control goes after an instruction capstone decoded as
    /// `mnemonic op_str` at byte offset `at` (this target's branch
    /// spellings: capstone's instruction groups differ between
    /// architectures, RISC-V `j` is a "call" there).
    fn capstone_flow(&self, mnemonic: &str, op_str: &str, at: u64) -> super::mach::Flow;
    /// Instructions capstone 0.14 does not decode (pinned in tests).
    fn capstone_gap(&self, _mnemonic: &str) -> bool {
        false
    }
    /// The operands of this target's CPU invalidation `insn` (as the
    /// trace prints it) decoded by field, for `trace`:
    /// `va=0x400000 asid=0x1 ttl=0`.
    fn decode_invalidation(&self, _insn: &str, _operands: &[u64]) -> Option<String> {
        None
    }
    /// How herd7's litmus tests spell this target's accesses and barriers
    /// (its `litmus.rs`; docs/memory-model.md).
    fn litmus(&self) -> &'static dyn crate::isa::litmus::Dialect;
    /// How the emulator runs this target's code (its `emu.rs`).
    #[cfg(feature = "emu")]
    fn emu(&self) -> &dyn crate::emu::EmuTarget;
}

/// A target: all four roles.
pub trait Backend: MemoryModel + SpecWords + Lowering + Oracles {}

impl<T: MemoryModel + SpecWords + Lowering + Oracles> Backend for T {}
