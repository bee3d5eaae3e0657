//! x86-64 immediates and address parts as operand types that are valid
//! when built.
//!
//! The scheme is [`crate::isa::imms`]'s: `maybe_from` is where the
//! lowering chooses a form ("fits a sign-extended imm32: `and $imm`, else
//! through the scratch register"), and the encoder then has no operand
//! range left to check.
//!
//! References are to the Intel 64 and IA-32 Architectures Software
//! Developer's Manual, "SDM" below.

use crate::isa::imms::field;

field!(
    /// A 32-bit field the processor sign-extends to 64 bits: the `imm32` of
    /// the `REX.W + 81 /digit id` ALU forms, `REX.W + C7 /0 id` (`mov
    /// r/m64, imm32`) and `REX.W + A9 id` (`test rax, imm32`) (SDM Vol. 2
    /// instruction pages: "imm32 sign-extended to 64-bits"), and the `disp32`
    /// of a ModRM/SIB address, which is sign-extended into the 64-bit
    /// effective address (SDM Vol. 1 3.7.5.1, Vol. 2A 2.2.1.3). Whether the
    /// shorter `imm8`/`disp8` form is used is the encoder's choice, as GNU
    /// as makes it.
    ///
    /// `maybe_from(v)` is the field whose sign extension is `v` (read as
    /// two's complement): `v` in `i32::MIN..=i32::MAX` as an `i64`.
    Simm32: i32,
    from u64,
    valid |v| v as i64 >= i32::MIN as i64 && v as i64 <= i32::MAX as i64
);

/// The displacement of a memory operand: a [`Simm32`].
pub type Disp32 = Simm32;

impl Simm32 {
    pub const ZERO: Simm32 = Simm32(0);
}

/// Every `i32` is a field value.
impl From<i32> for Simm32 {
    fn from(v: i32) -> Simm32 {
        Simm32(v)
    }
}

field!(
    /// A 6-bit count: the `imm8` of `REX.W + C1 /4 ib` (`shl r/m64, imm8`)
    /// and `/5` (`shr`), which the processor masks to 6 bits with a 64-bit
    /// operand (SDM Vol. 2B "SAL/SAR/SHL/SHR": "The count is masked to 6
    /// bits"), and the bit offset of `REX.W + 0F BA /4 ib` (`bt r/m64,
    /// imm8`), taken modulo 64 (SDM Vol. 2A "BT"). Holding only 0..=63 keeps
    /// the text and what the processor does the same number.
    Imm6: u8,
    from u64,
    valid |v| v < 64
);

field!(
    /// The scale factor of a SIB index: SIB.ss is 2 bits, so 1, 2, 4 or 8
    /// (SDM Vol. 2A 2.1.5, Table 2-3).
    Scale: u8,
    from u8,
    valid |factor| matches!(factor, 1 | 2 | 4 | 8)
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_are_the_fields() {
        assert_eq!(
            Simm32::maybe_from(0x7fff_ffff).map(Simm32::get),
            Some(i32::MAX)
        );
        assert_eq!(Simm32::maybe_from(0x8000_0000), None);
        assert_eq!(Simm32::maybe_from(-1i64 as u64).map(Simm32::get), Some(-1));
        assert_eq!(Simm32::maybe_from(i32::MIN as i64 as u64 - 1), None);
        assert_eq!(Simm32::of::<-8>().get(), -8);
        assert_eq!(Imm6::maybe_from(63).map(Imm6::get), Some(63));
        assert_eq!(Imm6::maybe_from(64), None);
        assert_eq!(Scale::maybe_from(3), None);
        assert_eq!(
            [1, 2, 4, 8].map(|f| Scale::maybe_from(f).map(Scale::get)),
            [1, 2, 4, 8].map(Some)
        );
    }
}
