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

/// A register field in which number 31 is the zero register.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RegOrZr {
    X(XReg),
    Zr,
}

/// A register field in which number 31 is the stack pointer (the base of
/// a load or store).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RegOrSp {
    X(XReg),
    Sp,
}

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

/// `x<n>` for constants: out of range is a compile error in a `const`
/// item (and a panic elsewhere, so runtime numbers go through
/// [`XReg::new`]).
pub const fn xreg(n: u8) -> XReg {
    match XReg::new(n) {
        Some(r) => r,
        None => panic!("x0..x30 only"),
    }
}

impl RegOrZr {
    /// The register a field value names in a form where 31 is XZR.
    pub const fn from_field(n: u8) -> Option<RegOrZr> {
        match XReg::new(n) {
            Some(r) => Some(RegOrZr::X(r)),
            None if n == N31 => Some(RegOrZr::Zr),
            None => None,
        }
    }

    pub const fn field(self) -> u8 {
        match self {
            RegOrZr::X(r) => r.field(),
            RegOrZr::Zr => N31,
        }
    }

    /// The 32-bit view (`w3`, `wzr`).
    pub fn w(self) -> String {
        match self {
            RegOrZr::X(r) => format!("w{}", r.0),
            RegOrZr::Zr => "wzr".to_string(),
        }
    }
}

impl RegOrSp {
    /// The register a field value names in a form where 31 is SP.
    pub const fn from_field(n: u8) -> Option<RegOrSp> {
        match XReg::new(n) {
            Some(r) => Some(RegOrSp::X(r)),
            None if n == N31 => Some(RegOrSp::Sp),
            None => None,
        }
    }

    pub const fn field(self) -> u8 {
        match self {
            RegOrSp::X(r) => r.field(),
            RegOrSp::Sp => N31,
        }
    }
}

impl From<XReg> for RegOrZr {
    fn from(r: XReg) -> RegOrZr {
        RegOrZr::X(r)
    }
}

impl From<XReg> for RegOrSp {
    fn from(r: XReg) -> RegOrSp {
        RegOrSp::X(r)
    }
}

/// The 64-bit name, as GNU as takes it.
impl fmt::Display for XReg {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "x{}", self.0)
    }
}

impl fmt::Display for RegOrZr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RegOrZr::X(r) => r.fmt(f),
            RegOrZr::Zr => f.write_str("xzr"),
        }
    }
}

impl fmt::Display for RegOrSp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RegOrSp::X(r) => r.fmt(f),
            RegOrSp::Sp => f.write_str("sp"),
        }
    }
}
