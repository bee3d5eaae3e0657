//! Targets: per-architecture instruction sets, barrier tables, lowering
//! and ABI. Each target directory is cut like cranelift's `isa/<arch>`:
//! `insn` (encoding + text), `barriers` (memory-model table), `lower`
//! (LIR -> instructions), and the file templates live in `templates/`.

pub mod aarch64;
pub mod barriers;
pub mod hweight;
pub mod mach;
pub mod power;
pub mod x86_64;

use crate::codegen::Style;
use crate::ir::order::Class;
use crate::lir::regalloc::{Allocation, RegFile};
use crate::lir::Func;
use mach::MachFunc;
use std::fmt;

/// The most arguments a sequence may take (device bases and counts
/// included), on every target alike so that a spec does not build for one
/// and fail for another. Arguments past the argument registers are read
/// from the caller's stack; Linux-style POWER code names those slots with
/// the kernel's `STK_PARAM(R11)` .. `STK_PARAM(R31)` (`asm/ppc_asm.h`, the
/// idiom of `plpar_hcall9`), whose register names end at r31: arguments 1
/// to 29.
pub const MAX_ARGS: usize = 29;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Target {
    Power64,
    Power64le,
    Aarch64,
    X86_64,
}

impl Target {
    pub const ALL: [Target; 4] = [
        Target::Power64,
        Target::Power64le,
        Target::Aarch64,
        Target::X86_64,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Target::Power64 => "power64",
            Target::Power64le => "power64le",
            Target::Aarch64 => "aarch64",
            Target::X86_64 => "x86_64",
        }
    }

    pub fn from_name(s: &str) -> Option<Target> {
        Target::ALL.into_iter().find(|t| t.name() == s)
    }

    pub fn big_endian(self) -> bool {
        self == Target::Power64
    }

    /// GNU triple prefix of the cross toolchain that reads our `.S`.
    pub fn triple(self) -> &'static str {
        match self {
            Target::Power64 => "powerpc64-linux-gnu",
            Target::Power64le => "powerpc64le-linux-gnu",
            Target::Aarch64 => "aarch64-linux-gnu",
            Target::X86_64 => "x86_64-linux-gnu",
        }
    }

    /// Argument and allocatable registers of the target's ABI.
    pub fn regfile(self) -> &'static RegFile {
        match self {
            Target::Power64 | Target::Power64le => &power::lower::REGS,
            Target::Aarch64 => &aarch64::lower::REGS,
            Target::X86_64 => &x86_64::lower::REGS,
        }
    }

    /// Lower an allocated LIR function to this target's machine code.
    pub fn codegen(
        self,
        f: &Func,
        alloc: &Allocation,
        symbol: &str,
        style: Style,
    ) -> Result<MachFunc, String> {
        match self {
            Target::Power64 | Target::Power64le => {
                power::emit::codegen(f, alloc, self, symbol, style)
            }
            Target::Aarch64 => aarch64::emit::codegen(f, alloc, symbol, style),
            Target::X86_64 => x86_64::emit::codegen(f, alloc, symbol, style),
        }
    }

    /// Can this target lower the CPU invalidation `name` with `n` register
    /// operands? The error says why not.
    pub fn check_invalidate(self, name: &str, n: usize) -> Result<(), String> {
        match self {
            Target::Power64 | Target::Power64le => power::tlb::check_invalidate(name, n),
            Target::Aarch64 => aarch64::lower::check_invalidate(name, n),
            Target::X86_64 => x86_64::lower::check_invalidate(name, n),
        }
    }

    pub fn barriers(self) -> &'static [barriers::BarrierKind] {
        match self {
            Target::Power64 | Target::Power64le => power::barriers::TABLE,
            Target::Aarch64 => aarch64::barriers::TABLE,
            Target::X86_64 => x86_64::barriers::TABLE,
        }
    }

    /// Does the memory model order `from` before `to` without any barrier?
    /// `same_strong_device`: both accesses go to one device instance mapped
    /// with the strong (default) attributes.
    pub fn orders_implicitly(self, from: Class, to: Class, same_strong_device: bool) -> bool {
        match self {
            Target::Power64 | Target::Power64le => {
                power::barriers::implicit(from, to, same_strong_device)
            }
            Target::Aarch64 => aarch64::barriers::implicit(from, to, same_strong_device),
            Target::X86_64 => x86_64::barriers::implicit(from, to, same_strong_device),
        }
    }
}

impl fmt::Display for Target {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}
