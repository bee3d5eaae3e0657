//! RV64 integer registers: valid when built, so the encoder never masks
//! a bad number into a wrong instruction.

use std::fmt;

/// An integer register x0..x31. x0 reads as zero and ignores writes
/// (unprivileged spec, 2.1 "Programmers' Model for Base Integer ISA").
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Reg(u8);

/// ABI names, in register order (psABI "Integer Register Convention").
const NAMES: [&str; 32] = [
    "zero", "ra", "sp", "gp", "tp", "t0", "t1", "t2", "s0", "s1", "a0", "a1", "a2", "a3", "a4",
    "a5", "a6", "a7", "s2", "s3", "s4", "s5", "s6", "s7", "s8", "s9", "s10", "s11", "t3", "t4",
    "t5", "t6",
];

impl Reg {
    pub const ZERO: Reg = Reg(0);
    pub const RA: Reg = Reg(1);
    pub const SP: Reg = Reg(2);
    pub const A0: Reg = Reg(10);

    pub const fn new(n: u8) -> Option<Reg> {
        if n < 32 {
            Some(Reg(n))
        } else {
            None
        }
    }

    /// For the register file's tables, which hold numbers below 32 only.
    pub(crate) const fn of(n: u8) -> Reg {
        assert!(n < 32);
        Reg(n)
    }

    pub fn num(self) -> u32 {
        u32::from(self.0)
    }

    pub fn name(self) -> &'static str {
        NAMES[self.0 as usize]
    }

    pub fn from_name(s: &str) -> Option<Reg> {
        NAMES.iter().position(|n| *n == s).map(|i| Reg(i as u8))
    }
}

impl fmt::Display for Reg {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn registers_reject_out_of_range() {
        assert!(Reg::new(32).is_none());
        assert_eq!(Reg::new(10).unwrap().name(), "a0");
        assert_eq!(Reg::from_name("t6"), Reg::new(31));
    }
}
