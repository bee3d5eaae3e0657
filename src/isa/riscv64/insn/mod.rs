//! RV64 instructions we emit: the typed form and what kind of access it
//! is. Registers are in [`regs`], immediates in [`imms`], the GNU as text
//! in [`text`], machine code in [`encode`].

mod encode;
mod imms;
mod regs;
mod text;

pub use encode::{assemble, branch_fits, encode, relax, Assembled, EncodeError};
pub use imms::{Imm12, Imm20, Shamt};
pub use regs::Reg;

pub type Label = u32;

/// R-type operations (RV64I, and `mul` from M).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AluOp {
    Add,
    Sub,
    And,
    Or,
    Xor,
    Sll,
    Srl,
    Mul,
    /// Set if less than, unsigned (1 or 0).
    Sltu,
}

/// I-type operations with a sign-extended 12-bit immediate.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ImmOp {
    Addi,
    /// 32-bit add, result sign-extended (the second step of `lui`-based
    /// constants).
    Addiw,
    Andi,
    Ori,
    Xori,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ShiftOp {
    Slli,
    Srli,
}

/// Access width. Loads zero-extend (`lbu`, `lhu`, `lwu`, `ld`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Width {
    B,
    H,
    W,
    D,
}

impl Width {
    pub fn from_bits(bits: u32) -> Option<Width> {
        Some(match bits {
            8 => Width::B,
            16 => Width::H,
            32 => Width::W,
            64 => Width::D,
            _ => return None,
        })
    }

    pub fn bytes(self) -> u32 {
        match self {
            Width::B => 1,
            Width::H => 2,
            Width::W => 4,
            Width::D => 8,
        }
    }
}

/// Branch conditions of the B-type instructions we use.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BrCond {
    Eq,
    Ne,
    /// Signed: against `zero`, the sign bit (a one-bit test moved there).
    Lt,
    Ge,
    Ltu,
    Geu,
}

impl BrCond {
    pub fn inverse(self) -> BrCond {
        match self {
            BrCond::Eq => BrCond::Ne,
            BrCond::Ne => BrCond::Eq,
            BrCond::Lt => BrCond::Ge,
            BrCond::Ge => BrCond::Lt,
            BrCond::Ltu => BrCond::Geu,
            BrCond::Geu => BrCond::Ltu,
        }
    }
}

/// A FENCE's predecessor or successor set: device input (I), device
/// output (O), memory reads (R), memory writes (W) (unprivileged spec,
/// 2.7 "Memory Ordering Instructions"; bit order as in the encoding).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct FenceSet(u8);

impl FenceSet {
    pub const I: u8 = 8;
    pub const O: u8 = 4;
    pub const R: u8 = 2;
    pub const W: u8 = 1;

    /// A non-empty set: an empty one is a hint encoding, not a fence.
    pub const fn maybe_from(bits: u8) -> Option<FenceSet> {
        if bits != 0 && bits < 16 {
            Some(FenceSet(bits))
        } else {
            None
        }
    }

    /// The set as GNU as spells it (`iorw`, `rw`, `w`). Const so that the
    /// barrier table can write its fences the way it names them.
    pub const fn parse(s: &str) -> Option<FenceSet> {
        let s = s.as_bytes();
        let mut bits = 0u8;
        let mut last = 16u8;
        let mut i = 0;
        while i < s.len() {
            let b = match s[i] {
                b'i' => FenceSet::I,
                b'o' => FenceSet::O,
                b'r' => FenceSet::R,
                b'w' => FenceSet::W,
                _ => return None,
            };
            // In the order GNU as prints them, each letter once.
            if b >= last {
                return None;
            }
            last = b;
            bits |= b;
            i += 1;
        }
        FenceSet::maybe_from(bits)
    }

    pub fn bits(self) -> u32 {
        u32::from(self.0)
    }

    pub fn has(self, b: u8) -> bool {
        self.0 & b != 0
    }
}

/// LR/SC width (A extension: words and doublewords only).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AmoWidth {
    W,
    D,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Insn {
    Label(Label),
    Lui {
        rd: Reg,
        imm: Imm20,
    },
    Alu {
        op: AluOp,
        rd: Reg,
        rs1: Reg,
        rs2: Reg,
    },
    AluImm {
        op: ImmOp,
        rd: Reg,
        rs1: Reg,
        imm: Imm12,
    },
    Shift {
        op: ShiftOp,
        rd: Reg,
        rs1: Reg,
        sh: Shamt,
    },
    /// `addi rd, rs, 0`, printed as GNU as's `mv`.
    Mv {
        rd: Reg,
        rs: Reg,
    },
    Load {
        w: Width,
        rd: Reg,
        base: Reg,
        off: Imm12,
    },
    Store {
        w: Width,
        src: Reg,
        base: Reg,
        off: Imm12,
    },
    Branch {
        cond: BrCond,
        rs1: Reg,
        rs2: Reg,
        target: Label,
    },
    /// `jal zero, target`.
    J {
        target: Label,
    },
    /// `jalr zero, 0(ra)`.
    Ret,
    Fence {
        pred: FenceSet,
        succ: FenceSet,
    },
    /// Zifencei: later instruction fetches see earlier stores.
    FenceI,
    /// rs1 = zero: every address; rs2 = zero: every address space.
    SfenceVma {
        rs1: Reg,
        rs2: Reg,
    },
    /// Svinval: an invalidation ordered only by the two fences below.
    SinvalVma {
        rs1: Reg,
        rs2: Reg,
    },
    SfenceWInval,
    SfenceInvalIr,
    Lr {
        w: AmoWidth,
        aq: bool,
        rd: Reg,
        base: Reg,
    },
    Sc {
        w: AmoWidth,
        rl: bool,
        /// 0 when the store was made.
        status: Reg,
        src: Reg,
        base: Reg,
    },
}

impl Insn {
    /// Ordering instructions: the `fence` family and Svinval's two
    /// fences (they order, they invalidate nothing).
    pub fn is_barrier(&self) -> bool {
        matches!(
            self,
            Insn::Fence { .. } | Insn::FenceI | Insn::SfenceWInval | Insn::SfenceInvalIr
        )
    }

    pub fn is_invalidate(&self) -> bool {
        matches!(self, Insn::SfenceVma { .. } | Insn::SinvalVma { .. })
    }

    pub fn is_store(&self) -> bool {
        matches!(self, Insn::Store { .. } | Insn::Sc { .. })
    }

    pub fn is_load(&self) -> bool {
        matches!(self, Insn::Load { .. } | Insn::Lr { .. })
    }

    /// The register it writes, if any (x0 included: it ignores it).
    pub fn writes(&self) -> Option<Reg> {
        match self {
            Insn::Lui { rd, .. }
            | Insn::Alu { rd, .. }
            | Insn::AluImm { rd, .. }
            | Insn::Shift { rd, .. }
            | Insn::Mv { rd, .. }
            | Insn::Load { rd, .. }
            | Insn::Lr { rd, .. } => Some(*rd),
            Insn::Sc { status, .. } => Some(*status),
            _ => None,
        }
    }

    /// The extension GNU as must be told of (`.option arch, +svinval`):
    /// binutils 2.40's default rv64gc lacks Svinval.
    pub fn needs_arch(&self) -> Option<&'static str> {
        match self {
            Insn::SinvalVma { .. } | Insn::SfenceWInval | Insn::SfenceInvalIr => Some("svinval"),
            _ => None,
        }
    }
}
