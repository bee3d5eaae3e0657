//! Operands other than registers and immediates: branch labels, branch
//! conditions and Book III-E special-purpose registers.

use super::imms::Mas;

/// Branch-target label identifier (defined by `Insn::Label`).
pub type Label = u32;

/// Condition tested by a conditional branch, against one CR field.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Cond {
    Lt,
    Gt,
    Eq,
    Ne,
    Ge,
    Le,
}

/// A Book III-E special-purpose register, by name.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Spr {
    /// MMU assist register MAS0..MAS8.
    Mas(Mas),
    /// MAS7 and MAS3 as one 64-bit register (SPR 372, Linux
    /// `SPRN_MAS7_MAS3`; Power ISA v2.06 Book III-E 6.10.3.8): MAS7 in the
    /// high word, MAS3 in the low word.
    Mas7Mas3,
}

/// SPR number of MAS7_MAS3.
const MAS7_MAS3_SPR: u16 = 0x174;

/// SPR numbers of MAS0..MAS8 (Linux 6.1
/// `arch/powerpc/include/asm/reg_booke.h`, `SPRN_MAS0`..`SPRN_MAS8`).
const MAS_SPR: [u16; 9] = [
    0x270, 0x271, 0x272, 0x273, 0x274, 0x153, 0x276, 0x3b0, 0x155,
];

impl Spr {
    /// The SPR number.
    pub fn number(self) -> u16 {
        match self {
            Spr::Mas(n) => MAS_SPR[usize::from(n.get())],
            Spr::Mas7Mas3 => MAS7_MAS3_SPR,
        }
    }

    /// The register with this SPR number.
    pub fn from_number(n: u16) -> Option<Spr> {
        if n == MAS7_MAS3_SPR {
            return Some(Spr::Mas7Mas3);
        }
        let i = MAS_SPR.iter().position(|&m| m == n)?;
        Mas::maybe_from(i as u64).map(Spr::Mas)
    }

    /// `MAS6`.
    pub fn name(self) -> String {
        match self {
            Spr::Mas(n) => format!("MAS{}", n.get()),
            Spr::Mas7Mas3 => "MAS7_MAS3".to_string(),
        }
    }
}

/// The register a spec names (`MAS1`, `mas7_mas3`), with its spelling.
pub fn spr_by_name(name: &str) -> Option<(Spr, &'static str)> {
    const NAMES: [&str; 9] = [
        "MAS0", "MAS1", "MAS2", "MAS3", "MAS4", "MAS5", "MAS6", "MAS7", "MAS8",
    ];
    let up = name.to_ascii_uppercase();
    if up == "MAS7_MAS3" {
        return Some((Spr::Mas7Mas3, "MAS7_MAS3"));
    }
    let i = NAMES.iter().position(|n| *n == up)?;
    Some((Spr::Mas(Mas::maybe_from(i as u64)?), NAMES[i]))
}

/// The 10-bit SPR field of mtspr/mfspr: its two 5-bit halves swapped
/// (Power ISA Book I 3.3.17), placed in bits 11-20.
pub fn spr_field(n: u16) -> u32 {
    let n = u32::from(n);
    ((n & 0x1f) << 5 | n >> 5) << 11
}
