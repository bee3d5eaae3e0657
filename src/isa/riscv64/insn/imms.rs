//! The immediates the lowering builds, each valid when built (RISC-V
//! unprivileged ISA, 2.3 "Immediate Encoding Variants"): the fallible
//! `maybe_from` is where the lowering chooses a form, and the encoder
//! never masks an out-of-range value into a wrong instruction.

/// A signed 12-bit immediate (I- and S-type instructions).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Imm12(i16);

impl Imm12 {
    pub const ZERO: Imm12 = Imm12(0);

    pub fn maybe_from(v: i64) -> Option<Imm12> {
        (-2048..=2047).contains(&v).then_some(Imm12(v as i16))
    }

    pub fn value(self) -> i64 {
        i64::from(self.0)
    }

    /// The 12 bits as the encoding stores them.
    pub fn bits(self) -> u32 {
        (self.0 as u32) & 0xfff
    }
}

/// The upper-immediate of `lui`: 20 bits, placed at bit 12 and
/// sign-extended from bit 31 on RV64.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Imm20(u32);

impl Imm20 {
    /// From the signed value of bits 31..12 (-2^19 ..= 2^19 - 1).
    pub fn maybe_from(v: i64) -> Option<Imm20> {
        (-(1 << 19)..(1 << 19))
            .contains(&v)
            .then_some(Imm20((v as u32) & 0xfffff))
    }

    /// The field, 0..=0xfffff, as GNU as reads `lui`'s operand.
    pub fn bits(self) -> u32 {
        self.0
    }

    /// The register value `lui` writes.
    pub fn value(self) -> i64 {
        i64::from((self.0 << 12) as i32)
    }
}

/// A shift amount of a 64-bit shift, 0..=63.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Shamt(u8);

impl Shamt {
    pub fn maybe_from(v: u64) -> Option<Shamt> {
        (v < 64).then_some(Shamt(v as u8))
    }

    pub fn get(self) -> u32 {
        u32::from(self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn immediates_reject_out_of_range() {
        assert!(Imm12::maybe_from(2047).is_some());
        assert!(Imm12::maybe_from(2048).is_none());
        assert!(Imm12::maybe_from(-2048).is_some());
        assert!(Imm12::maybe_from(-2049).is_none());
        assert_eq!(Imm12::maybe_from(-1).unwrap().bits(), 0xfff);
        assert!(Imm20::maybe_from(-(1 << 19)).is_some());
        assert!(Imm20::maybe_from(1 << 19).is_none());
        assert_eq!(Imm20::maybe_from(-1).unwrap().value(), -4096);
        assert_eq!(Imm20::maybe_from(0x7ffff).unwrap().value(), 0x7fff_f000);
        assert!(Shamt::maybe_from(64).is_none());
    }
}
