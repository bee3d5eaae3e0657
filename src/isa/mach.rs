//! Target-independent view of generated machine code: what emitters,
//! statistics, listings and the emulator need, whatever the architecture.

use crate::lir::Origin;
use serde::Serialize;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum InsnClass {
    Store,
    Load,
    Barrier,
    Invalidate,
    Other,
}

impl InsnClass {
    /// The class of an instruction from its target's predicates; barriers
    /// and invalidations first (a locked RMW is a barrier, not a store).
    pub fn of(barrier: bool, invalidate: bool, store: bool, load: bool) -> InsnClass {
        if barrier {
            InsnClass::Barrier
        } else if invalidate {
            InsnClass::Invalidate
        } else if store {
            InsnClass::Store
        } else if load {
            InsnClass::Load
        } else {
            InsnClass::Other
        }
    }
}

/// One line of a function body in the `.S` file.
#[derive(Clone, Debug)]
pub struct Line {
    /// A local label defined here (`.Lname_3:`), or an instruction.
    pub label: Option<String>,
    pub text: String,
    pub mnemonic: &'static str,
    pub class: InsnClass,
    /// Byte offset within the function (instructions only).
    pub offset: u32,
    pub origin: Origin,
}

/// A compiled sequence for one target.
#[derive(Clone, Debug)]
pub struct MachFunc {
    /// Global symbol (with the user's prefix).
    pub symbol: String,
    pub lines: Vec<Line>,
    pub bytes: Vec<u8>,
    /// Instructions needing an `.arch`/`.machine` beyond the baseline.
    pub needs_arch: Option<&'static str>,
}

impl MachFunc {
    pub fn insns(&self) -> impl Iterator<Item = &Line> {
        self.lines.iter().filter(|l| l.label.is_none())
    }
}

/// Local label name for label `n` of a function. The `.` keeps it apart
/// from every symbol: sequence names are C identifiers, and ELFv1's code
/// entry of `Ls_0` is `.Ls_0`, which `.L{symbol}_{n}` of `s` would be.
pub fn label_name(symbol: &str, n: u32) -> String {
    let mut digits = itoa::Buffer::new();
    let n = digits.format(n);
    let mut s = String::with_capacity(symbol.len() + n.len() + 3);
    s.push_str(".L");
    s.push_str(symbol);
    s.push('.');
    s.push_str(n);
    s
}

/// What the generic driver ([`super::codegen`]) needs to know of one
/// target instruction. Its text is not here: how an instruction prints
/// can depend on more than the instruction (a register style, the
/// assembler's own formatter), so it is [`super::codegen::Codegen::text`].
pub trait MachInsn {
    /// The label it defines, if it is one.
    fn label(&self) -> Option<u32>;
    fn mnemonic(&self) -> &'static str;
    fn class(&self) -> InsnClass;
}

/// `MachInsn` for a target's instruction enum from its inherent methods
/// (`mnemonic`, `is_barrier`, `is_invalidate`, `is_store`, `is_load`) and
/// its `Label` variant: the same adapter for every target.
#[macro_export]
macro_rules! mach_insn {
    ($insn:ty) => {
        impl $crate::isa::mach::MachInsn for $insn {
            fn label(&self) -> Option<u32> {
                match self {
                    Self::Label(l) => Some(*l),
                    _ => None,
                }
            }

            fn mnemonic(&self) -> &'static str {
                <$insn>::mnemonic(self)
            }

            fn class(&self) -> $crate::isa::mach::InsnClass {
                $crate::isa::mach::InsnClass::of(
                    self.is_barrier(),
                    self.is_invalidate(),
                    self.is_store(),
                    self.is_load(),
                )
            }
        }
    };
}

/// Where control goes after one decoded instruction: what the static
/// ordering proof (`verify::order_proof`) builds its control-flow graph
/// from. Each target reads it off capstone's decoding
/// ([`crate::isa::backend::Backend::capstone_flow`]), not off our own
/// instruction list, so the graph is the one the bytes have.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Flow {
    /// Falls through to the next instruction.
    Next,
    /// Always goes to this byte offset.
    Jump(u64),
    /// Goes to this offset or falls through.
    Branch(u64),
    /// Returns to the caller.
    Return,
    /// Returns or falls through (POWER `beqlr`).
    CondReturn,
    /// A call or an indirect jump: the proof cannot follow it.
    Unknown,
}

/// The branch target capstone prints as the last operand (`#0x14`,
/// `0x1c`, `-8`, `7`), as a number.
pub fn capstone_target(op_str: &str) -> Option<i64> {
    let last = op_str.rsplit(',').next()?.trim().trim_start_matches('#');
    let (neg, digits) = match last.strip_prefix('-') {
        Some(d) => (true, d),
        None => (false, last),
    };
    let v = match digits.strip_prefix("0x") {
        Some(h) => i64::from_str_radix(h, 16).ok()?,
        None => digits.parse::<i64>().ok()?,
    };
    Some(if neg { -v } else { v })
}

/// The flow of a branch whose target capstone prints as its last operand:
/// absolute, or relative to the branch at `at` (RISC-V); conditional or
/// not. No readable target: [`Flow::Unknown`].
pub fn branch_flow(op_str: &str, at: u64, relative: bool, conditional: bool) -> Flow {
    let Some(t) = capstone_target(op_str) else {
        return Flow::Unknown;
    };
    let to = if relative {
        at.wrapping_add(t as u64)
    } else {
        t as u64
    };
    if conditional {
        Flow::Branch(to)
    } else {
        Flow::Jump(to)
    }
}
