//! POWER immediate fields as operand types that are valid when built.
//!
//! As in `isa::aarch64::insn::imms`: each field of the model whose values
//! are not exactly those of a Rust integer has a type holding only what
//! its encoding can express. `maybe_from` is where the lowering chooses a
//! form or reports a value it cannot place; `of::<N>()` is for constants
//! written in code, where a value out of range fails the build (its const
//! block is evaluated when `of` is instantiated). The encoder then only
//! places bits. Field names are the Power ISA's (v3.0B Book I 1.6.28,
//! "Instruction Fields").
//!
//! The 16-bit fields D, SI (signed) and UI (unsigned) stay `i16` and
//! `u16`: those types hold exactly the field's values already.

/// An unsigned field of `$bits` bits.
macro_rules! unsigned_field {
    ($(#[$doc:meta])* $name:ident, $bits:expr) => {
        $(#[$doc])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub struct $name(u8);

        impl $name {
            pub const fn maybe_from(v: u64) -> Option<$name> {
                if v < 1 << $bits {
                    Some($name(v as u8))
                } else {
                    None
                }
            }

            /// A constant; out of range does not compile.
            pub const fn of<const V: u8>() -> $name {
                const { unwrap($name::maybe_from(V as u64)) }
            }

            pub const fn get(self) -> u8 {
                self.0
            }

            /// The value, to place in an instruction word.
            pub const fn bits(self) -> u32 {
                self.0 as u32
            }
        }
    };
}

unsigned_field!(
    /// BF: a condition register field, cr0..cr7, of a compare or (as
    /// BI / 4) of a conditional branch.
    CrField,
    3
);
unsigned_field!(
    /// BT, BA, BB: a condition register bit, 0..=31, of the XL-form CR
    /// logical instructions (`crxor`).
    CrBit,
    5
);
unsigned_field!(
    /// sh: the 6-bit rotate amount of the MD-form rotates (`rldicl`,
    /// `rldicr`, `rldic`, `rldimi`), stored split as sh0:4 and sh5.
    Sh6,
    6
);
unsigned_field!(
    /// mb, me: the 6-bit mask bound of the MD-form rotates, stored as
    /// mb5 || mb0:4.
    Mb6,
    6
);
unsigned_field!(
    /// SH: the rotate amount of the M-form `rlwinm`, 0..=31.
    Sh5,
    5
);
unsigned_field!(
    /// MB, ME: the word mask bounds of the M-form `rlwinm`, 0..=31.
    Mb5,
    5
);
unsigned_field!(
    /// RIC: what `tlbie`/`tlbiel` invalidate (v3.0: TLB, PWC, all, or
    /// the process- or partition-scoped entries' table caches), 0..=3.
    Ric,
    2
);
unsigned_field!(
    /// IH: the invalidation hint of `slbia`, 0..=7.
    Ih,
    3
);
unsigned_field!(
    /// MO: the ordering of Book III-E `mbar`, 0..=31 (0 is `eieio`'s).
    Mo,
    5
);

impl Mb6 {
    /// me = 63 - sh: the mask of `sldi` (`rldicr ra,rs,sh,63-sh`), which
    /// keeps the bits the shift left filled.
    pub const fn sldi_end(sh: Sh6) -> Mb6 {
        Mb6(63 - sh.0)
    }
}

/// DS: the displacement of the DS-form `ld`/`std`, a signed 16-bit byte
/// offset whose low two bits are the XO, so a multiple of 4.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Ds(i16);

impl Ds {
    pub const fn maybe_from(v: i64) -> Option<Ds> {
        if v >= i16::MIN as i64 && v <= i16::MAX as i64 && v % 4 == 0 {
            Some(Ds(v as i16))
        } else {
            None
        }
    }

    /// A constant; not a multiple of 4, or beyond 16 bits, does not
    /// compile.
    pub const fn of<const V: i16>() -> Ds {
        const { unwrap(Ds::maybe_from(V as i64)) }
    }

    /// The byte offset.
    pub const fn get(self) -> i16 {
        self.0
    }
}

/// T of Book III-E `tlbilx`: 0 (all of the LPID), 1 (the PID in
/// MAS6[SPID]) or 3 (one address); 2 is reserved.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct TlbilxT(u8);

impl TlbilxT {
    pub const fn maybe_from(v: u64) -> Option<TlbilxT> {
        match v {
            0 | 1 | 3 => Some(TlbilxT(v as u8)),
            _ => None,
        }
    }

    /// A constant; 2 or above 3 does not compile.
    pub const fn of<const V: u8>() -> TlbilxT {
        const { unwrap(TlbilxT::maybe_from(V as u64)) }
    }

    pub const fn get(self) -> u8 {
        self.0
    }
}

/// Which MMU assist register, MAS0..MAS8 (Book III-E).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Mas(u8);

impl Mas {
    pub const fn maybe_from(v: u64) -> Option<Mas> {
        if v <= 8 {
            Some(Mas(v as u8))
        } else {
            None
        }
    }

    /// A constant; above 8 does not compile.
    pub const fn of<const V: u8>() -> Mas {
        const { unwrap(Mas::maybe_from(V as u64)) }
    }

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
    fn ranges() {
        assert_eq!(CrField::maybe_from(7).map(CrField::get), Some(7));
        assert_eq!(CrField::maybe_from(8), None);
        assert_eq!(CrBit::maybe_from(32), None);
        assert_eq!(Sh6::maybe_from(63).map(Sh6::get), Some(63));
        assert_eq!(Sh6::maybe_from(64), None);
        assert_eq!(Mb5::maybe_from(32), None);
        assert_eq!(Ric::maybe_from(4), None);
        assert_eq!(Ih::maybe_from(8), None);
        assert_eq!(Mo::maybe_from(32), None);
        assert_eq!(Mb6::sldi_end(Sh6::of::<5>()), Mb6::of::<58>());
        assert_eq!(Ds::maybe_from(-32768).map(Ds::get), Some(-32768));
        assert_eq!(Ds::maybe_from(32764).map(Ds::get), Some(32764));
        for bad in [6, -2, 32768, -32772] {
            assert_eq!(Ds::maybe_from(bad), None, "{bad}");
        }
        assert_eq!(TlbilxT::maybe_from(2), None);
        assert_eq!(TlbilxT::maybe_from(4), None);
        assert_eq!(Mas::maybe_from(9), None);
    }
}
