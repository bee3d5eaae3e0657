//! POWER immediate fields as operand types that are valid when built
//! (the scheme is [`crate::isa::imms`]'s). Field names are the Power
//! ISA's (v3.0B Book I 1.6.28, "Instruction Fields").
//!
//! The 16-bit fields D, SI (signed) and UI (unsigned) stay `i16` and
//! `u16`: those types hold exactly the field's values already.

use crate::isa::imms::field;

/// An unsigned field of `$bits` bits.
macro_rules! unsigned_field {
    ($(#[$doc:meta])* $name:ident, $bits:expr) => {
        $crate::isa::imms::field!($(#[$doc])* $name: u8, from u64, valid |v| v < 1 << $bits);

        impl $name {
            /// The value, to place in an instruction word.
            pub const fn bits(self) -> u32 {
                self.0 as u32
            }
        }
    };
}
pub(super) use unsigned_field;

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

field!(
    /// DS: the displacement of the DS-form `ld`/`std`, a signed 16-bit
    /// byte offset whose low two bits are the XO, so a multiple of 4.
    Ds: i16,
    from i64,
    valid |v| v >= i16::MIN as i64 && v <= i16::MAX as i64 && v % 4 == 0
);
field!(
    /// T of Book III-E `tlbilx`: 0 (all of the LPID), 1 (the PID in
    /// MAS6[SPID]) or 3 (one address); 2 is reserved.
    TlbilxT: u8,
    from u64,
    valid |v| matches!(v, 0 | 1 | 3)
);
field!(
    /// Which MMU assist register, MAS0..MAS8 (Book III-E).
    Mas: u8,
    from u64,
    valid |v| v <= 8
);

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
