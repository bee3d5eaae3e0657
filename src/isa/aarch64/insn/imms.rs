//! A64 immediates as operand types that are valid when built (the
//! scheme is [`crate::isa::imms`]'s): `maybe_from` is where the lowering
//! chooses an instruction form ("fits in 12 bits: `add #imm`, else
//! materialise"). The encoder then has no immediate left to check, and
//! the helpers `dynasm!` generates for dynamic immediates (which panic
//! out of range) never see a bad one.

use super::Size;
use crate::isa::imms::{field, unwrap};

field!(
    /// Unsigned 12-bit immediate of ADD/SUB/SUBS/CMP (immediate), no shift
    /// (Arm ARM C6.2 "ADD (immediate)": `sh == 0`).
    Imm12: u16,
    from u64,
    valid |v| v <= 4095
);

/// The 16-bit immediate of MOVZ/MOVN/MOVK with its shift, which is one of
/// 0, 16, 32 and 48 in 64-bit form (Arm ARM C6.2 "MOVZ": `hw`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct MoveWide {
    bits: u16,
    /// Which 16-bit chunk: the shift is `16 * hw`.
    hw: u8,
}

impl MoveWide {
    /// `#0` unshifted: `movz xd, #0` is 0, `movn xd, #0` all ones.
    pub const ZERO: MoveWide = MoveWide { bits: 0, hw: 0 };

    /// `bits` shifted left by `shift` bits.
    pub const fn maybe_from(bits: u16, shift: u8) -> Option<MoveWide> {
        match shift {
            0 | 16 | 32 | 48 => Some(MoveWide {
                bits,
                hw: shift / 16,
            }),
            _ => None,
        }
    }

    /// A constant; a shift other than 0, 16, 32 or 48 does not compile.
    pub const fn of<const BITS: u16, const SHIFT: u8>() -> MoveWide {
        const { unwrap(MoveWide::maybe_from(BITS, SHIFT)) }
    }

    /// The four 16-bit chunks of `v`, lowest first, each at its shift:
    /// `movk` of all four writes `v`.
    pub const fn halfwords(v: u64) -> [MoveWide; 4] {
        let mut chunks = [MoveWide::ZERO; 4];
        let mut hw = 0;
        while hw < 4 {
            chunks[hw] = MoveWide {
                bits: (v >> (16 * hw)) as u16,
                hw: hw as u8,
            };
            hw += 1;
        }
        chunks
    }

    /// The same chunk with its 16 bits inverted: `movn` of it writes what
    /// `movz` of `self` would, inverted.
    pub const fn inverted(self) -> MoveWide {
        MoveWide {
            bits: !self.bits,
            hw: self.hw,
        }
    }

    pub const fn bits(self) -> u16 {
        self.bits
    }

    /// The left shift in bits: 0, 16, 32 or 48.
    pub const fn shift(self) -> u8 {
        16 * self.hw
    }

    /// What `movz` writes: the bits at their shift.
    pub const fn value(self) -> u64 {
        (self.bits as u64) << self.shift()
    }
}

/// A 64-bit "bitmask immediate" of the logical (immediate) instructions
/// (Arm ARM C3.4.2, pseudocode `DecodeBitMasks`): an element of 2, 4, 8,
/// 16, 32 or 64 bits holding one rotated run of ones, replicated. 0 and
/// all ones are not encodable. The constructor finds the N:immr:imms
/// fields once, so the encoder only places them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ImmLogic {
    value: u64,
    /// Set for a 64-bit element.
    n: bool,
    /// Right rotation of the run within the element.
    immr: u8,
    /// Element size (high bits) and run length - 1 (low bits).
    imms: u8,
}

impl ImmLogic {
    pub const fn maybe_from(value: u64) -> Option<ImmLogic> {
        // The smallest element `value` is a replication of: halve while
        // both halves agree.
        let mut size = 64u32;
        while size > 2 {
            let half = size / 2;
            let mask = (1u64 << half) - 1;
            if value & mask != (value >> half) & mask {
                break;
            }
            size = half;
        }
        let mask = if size == 64 {
            u64::MAX
        } else {
            (1u64 << size) - 1
        };
        let elem = value & mask;
        let ones = elem.count_ones();
        if ones == 0 || ones == size {
            return None;
        }
        // Where the run starts: after the low zeros, or, when the run
        // wraps around bit 0, where its high part starts.
        let start = if elem & 1 == 0 {
            elem.trailing_zeros()
        } else {
            let high_ones = (elem << (64 - size)).leading_ones();
            (size - high_ones) % size
        };
        let run = (1u64 << ones) - 1;
        if elem != rotate_left(run, start, size) {
            return None;
        }
        Some(ImmLogic {
            value,
            n: size == 64,
            // Rotating right by size - start is rotating left by start.
            immr: ((size - start) % size) as u8,
            // The element size is the bits above the highest clear bit:
            // 0xxxxx for 32, 10xxxx for 16, ..., 11110x for 2 (64 is N).
            imms: ((!(2 * size - 1) | (ones - 1)) & 0x3f) as u8,
        })
    }

    /// A constant; a value that is not a bitmask immediate does not
    /// compile.
    pub const fn of<const V: u64>() -> ImmLogic {
        const { unwrap(ImmLogic::maybe_from(V)) }
    }

    pub const fn value(self) -> u64 {
        self.value
    }

    /// The N, immr and imms fields, as the encoding stores them.
    pub const fn fields(self) -> (u32, u32, u32) {
        (self.n as u32, self.immr as u32, self.imms as u32)
    }
}

/// `x` rotated left by `by` (< `size`) within its low `size` bits.
const fn rotate_left(x: u64, by: u32, size: u32) -> u64 {
    if by == 0 {
        return x;
    }
    let mask = if size == 64 {
        u64::MAX
    } else {
        (1u64 << size) - 1
    };
    ((x << by) | (x >> (size - by))) & mask
}

field!(
    /// The amount of an immediate shift of a 64-bit register, 0..=63.
    ImmShift: u8,
    from u64,
    valid |v| v < 64
);

/// The field of UBFIZ/UBFX (UBFM aliases): `width` bits at `lsb`, inside
/// the 64-bit register: lsb < 64 and 1 <= width <= 64 - lsb (Arm ARM C6.2
/// "UBFIZ", "UBFX").
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Bitfield {
    lsb: ImmShift,
    width: u8,
}

impl Bitfield {
    pub const fn maybe_from(lsb: u32, width: u32) -> Option<Bitfield> {
        match ImmShift::maybe_from(lsb as u64) {
            Some(l) if width >= 1 && width <= 64 - lsb => Some(Bitfield {
                lsb: l,
                width: width as u8,
            }),
            _ => None,
        }
    }

    /// A constant; a field outside the register does not compile.
    pub const fn of<const LSB: u32, const WIDTH: u32>() -> Bitfield {
        const { unwrap(Bitfield::maybe_from(LSB, WIDTH)) }
    }

    pub const fn lsb(self) -> ImmShift {
        self.lsb
    }

    pub const fn width(self) -> u8 {
        self.width
    }

    /// The field ends at bit 63.
    pub const fn reaches_top(self) -> bool {
        self.lsb.get() + self.width == 64
    }
}

/// The offset of a load or store in its unsigned-offset form: imm12 in
/// units of the access size, so the byte offset is a multiple of the
/// size and at most 4095 * size (Arm ARM C6.2 "STR (immediate)", unsigned
/// offset variant). The size is the access's: the instruction takes it
/// from here, so the two cannot disagree.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct UImm12Scaled {
    units: Imm12,
    size: Size,
}

impl UImm12Scaled {
    /// `[base]`.
    pub const fn zero(size: Size) -> UImm12Scaled {
        UImm12Scaled {
            units: Imm12(0),
            size,
        }
    }

    /// `bytes` past the base, for an access of `size`.
    pub const fn maybe_from(bytes: u64, size: Size) -> Option<UImm12Scaled> {
        let unit = size.bytes() as u64;
        if !bytes.is_multiple_of(unit) {
            return None;
        }
        match Imm12::maybe_from(bytes / unit) {
            Some(units) => Some(UImm12Scaled { units, size }),
            None => None,
        }
    }

    /// The access size the offset is scaled by.
    pub const fn size(self) -> Size {
        self.size
    }

    /// The offset in bytes.
    pub const fn bytes(self) -> u32 {
        self.units.get() as u32 * self.size.bytes()
    }
}

/// How far `sub sp, sp, #imm` / `add sp, sp, #imm` move the stack
/// pointer: an arithmetic immediate that keeps sp 16-byte aligned
/// (AAPCS64 6.4.5.1), so a multiple of 16 up to 4080.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct SpAdjust(Imm12);

impl SpAdjust {
    pub const fn maybe_from(bytes: u64) -> Option<SpAdjust> {
        match Imm12::maybe_from(bytes) {
            Some(imm) if bytes.is_multiple_of(16) => Some(SpAdjust(imm)),
            _ => None,
        }
    }

    /// A constant; not a multiple of 16 or above 4080 does not compile.
    pub const fn of<const BYTES: u16>() -> SpAdjust {
        const { unwrap(SpAdjust::maybe_from(BYTES as u64)) }
    }

    pub const fn bytes(self) -> u16 {
        self.0.get()
    }
}
