//! A64 general registers as operand types that are valid when built.
//!
//! The 5-bit register fields of A64 give number 31 two meanings: the zero
//! register (XZR/WZR) in most forms, the stack pointer in others (Arm ARM
//! C1.2.5). The model gives each field the type of what it can name:
//! [`XReg`] (x0..x30) where 31 is not allowed at all, [`RegOrZr`] where 31
//! is the zero register and [`RegOrSp`] where it is the stack pointer. An
//! instruction that reads XZR thus cannot be handed SP, nor a number out
//! of range, and the encoder has nothing left to check.

use std::fmt;

/// One of x0..x30.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct XReg(u8);

/// Field value of XZR and of SP.
const N31: u8 = 31;

impl XReg {
    /// `x<n>`, if `n` names one (0..=30).
    pub const fn new(n: u8) -> Option<XReg> {
        if n < N31 {
            Some(XReg(n))
        } else {
            None
        }
    }

    /// The 5-bit register field.
    pub const fn field(self) -> u8 {
        self.0
    }
}

/// The field, as `dynasm!` takes a dynamic register.
impl From<XReg> for u8 {
    fn from(r: XReg) -> u8 {
        r.field()
    }
}

/// `x<n>` for constants: out of range is a compile error in a `const`
/// item (and a panic elsewhere, so runtime numbers go through
/// [`XReg::new`]).
pub const fn xreg(n: u8) -> XReg {
    match XReg::new(n) {
        Some(r) => r,
        None => panic!("x0..x30 only"),
    }
}

/// A register field in which number 31 is `$r31`, spelled `$text`: the
/// type, its field value both ways, and its 64-bit name.
macro_rules! reg_or_31 {
    ($(#[$doc:meta])* $ty:ident, $r31:ident, $text:literal) => {
        $(#[$doc])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum $ty {
            X(XReg),
            $r31,
        }

        impl $ty {
            /// The register a field value names in a form of this type.
            pub const fn from_field(n: u8) -> Option<$ty> {
                match XReg::new(n) {
                    Some(r) => Some($ty::X(r)),
                    None if n == N31 => Some($ty::$r31),
                    None => None,
                }
            }

            pub const fn field(self) -> u8 {
                match self {
                    $ty::X(r) => r.field(),
                    $ty::$r31 => N31,
                }
            }
        }

        impl From<XReg> for $ty {
            fn from(r: XReg) -> $ty {
                $ty::X(r)
            }
        }

        /// The field, as `dynasm!` takes a dynamic register.
        impl From<$ty> for u8 {
            fn from(r: $ty) -> u8 {
                r.field()
            }
        }

        impl fmt::Display for $ty {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                match self {
                    $ty::X(r) => r.fmt(f),
                    $ty::$r31 => f.write_str($text),
                }
            }
        }
    };
}

reg_or_31!(
    /// A register field in which number 31 is the zero register.
    RegOrZr,
    Zr,
    "xzr"
);
reg_or_31!(
    /// A register field in which number 31 is the stack pointer (the base
    /// of a load or store).
    RegOrSp,
    Sp,
    "sp"
);

impl RegOrZr {
    /// The 32-bit view (`w3`, `wzr`).
    pub fn w(self) -> String {
        match self {
            RegOrZr::X(r) => format!("w{}", r.0),
            RegOrZr::Zr => "wzr".to_string(),
        }
    }
}

/// The 64-bit name, as GNU as takes it.
impl fmt::Display for XReg {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "x{}", self.0)
    }
}
