//! Bit fields as the spec declares them (shift and width, LSB0).

/// The mask of `width` bits from bit `shift`; 0 for an empty or
/// out-of-range field.
pub fn field_mask(shift: u32, width: u32) -> u64 {
    if width == 0 || shift >= 64 {
        return 0;
    }
    let ones = if width >= 64 {
        u64::MAX
    } else {
        (1u64 << width) - 1
    };
    ones << shift
}

/// `m` as one run of ones: (lowest bit, highest bit); None for 0 or a
/// mask of several runs.
pub fn ones_run(m: u64) -> Option<(u32, u32)> {
    if m == 0 {
        return None;
    }
    let (lo, hi) = (m.trailing_zeros(), 63 - m.leading_zeros());
    (m == field_mask(lo, hi - lo + 1)).then_some((lo, hi))
}
