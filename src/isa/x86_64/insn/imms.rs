//! x86-64 immediates and address parts as operand types that are valid
//! when built.
//!
//! As for A64 (`aarch64/insn/imms.rs`): each field has a type holding only
//! the values its encoding can express; the fallible `maybe_from` is where
//! the lowering chooses a form ("fits a sign-extended imm32: `and $imm`,
//! else through the scratch register"), and `of::<N>()` is for constants
//! written in code, where a value out of range fails the build. The
//! encoder then has no operand range left to check.
//!
//! References are to the Intel 64 and IA-32 Architectures Software
//! Developer's Manual, "SDM" below.

/// A 32-bit field the processor sign-extends to 64 bits: the `imm32` of
/// the `REX.W + 81 /digit id` ALU forms, `REX.W + C7 /0 id` (`mov
/// r/m64, imm32`) and `REX.W + A9 id` (`test rax, imm32`) (SDM Vol. 2
/// instruction pages: "imm32 sign-extended to 64-bits"), and the `disp32`
/// of a ModRM/SIB address, which is sign-extended into the 64-bit
/// effective address (SDM Vol. 1 3.7.5.1, Vol. 2A 2.2.1.3). Whether the
/// shorter `imm8`/`disp8` form is used is the encoder's choice, as GNU
/// as makes it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Simm32(i32);

/// The displacement of a memory operand: a [`Simm32`].
pub type Disp32 = Simm32;

impl Simm32 {
    pub const ZERO: Simm32 = Simm32(0);

    /// The field whose sign extension is `v` (read as two's complement):
    /// `v` in `i32::MIN..=i32::MAX` as an `i64`.
    pub const fn maybe_from(v: u64) -> Option<Simm32> {
        let s = v as i64;
        if s >= i32::MIN as i64 && s <= i32::MAX as i64 {
            Some(Simm32(s as i32))
        } else {
            None
        }
    }

    /// A constant; out of the signed 32-bit range does not compile.
    pub const fn of<const V: i64>() -> Simm32 {
        const { unwrap(Simm32::maybe_from(V as u64)) }
    }

    pub const fn get(self) -> i32 {
        self.0
    }
}

/// Every `i32` is a field value.
impl From<i32> for Simm32 {
    fn from(v: i32) -> Simm32 {
        Simm32(v)
    }
}

/// A 6-bit count: the `imm8` of `REX.W + C1 /4 ib` (`shl r/m64, imm8`)
/// and `/5` (`shr`), which the processor masks to 6 bits with a 64-bit
/// operand (SDM Vol. 2B "SAL/SAR/SHL/SHR": "The count is masked to 6
/// bits"), and the bit offset of `REX.W + 0F BA /4 ib` (`bt r/m64,
/// imm8`), taken modulo 64 (SDM Vol. 2A "BT"). Holding only 0..=63 keeps
/// the text and what the processor does the same number.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Imm6(u8);

impl Imm6 {
    pub const fn maybe_from(v: u64) -> Option<Imm6> {
        if v < 64 {
            Some(Imm6(v as u8))
        } else {
            None
        }
    }

    /// A constant; 64 or more does not compile.
    pub const fn of<const V: u8>() -> Imm6 {
        const { unwrap(Imm6::maybe_from(V as u64)) }
    }

    pub const fn get(self) -> u8 {
        self.0
    }
}

/// The scale factor of a SIB index: SIB.ss is 2 bits, so 1, 2, 4 or 8
/// (SDM Vol. 2A 2.1.5, Table 2-3).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Scale(u8);

impl Scale {
    pub const fn maybe_from(factor: u8) -> Option<Scale> {
        match factor {
            1 | 2 | 4 | 8 => Some(Scale(factor)),
            _ => None,
        }
    }

    /// A constant; a factor other than 1, 2, 4 or 8 does not compile.
    pub const fn of<const FACTOR: u8>() -> Scale {
        const { unwrap(Scale::maybe_from(FACTOR)) }
    }

    /// The factor: 1, 2, 4 or 8.
    pub const fn get(self) -> u8 {
        self.0
    }
}

/// `Option::unwrap` for the `of` constructors' const blocks, with the
/// message the compile error shows.
const fn unwrap<T: Copy>(v: Option<T>) -> T {
    match v {
        Some(v) => v,
        None => panic!("immediate out of range for its field"),
    }
}

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
