//! Population count where the target lowers it without a count
//! instruction (base AArch64 has none for general registers; x86-64's
//! `popcnt` needs a CPU feature we do not assume): one definition, the
//! kernel's generic `__sw_hweight64` (lib/hweight.c, the
//! `CONFIG_ARCH_HAS_FAST_MULTIPLIER` variant that arm64 and x86 select),
//! written over two registers so a lowering needs only its one scratch
//! register besides the destination.
//!
//! The kernel's first two lines need a third register on x86-64, where a
//! 64-bit mask must sit in a register of its own; they are rewritten with
//! `(w >> 1) & m == (w & (m << 1)) >> 1` and `w & !m == w - (w & m)`,
//! which compute the same values.

/// A register of the sequence: `D` starts as the input and ends as the
/// result; `S` is the lowering's scratch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Loc {
    D,
    S,
}

/// One step. A 64-bit constant is never combined with `S` into `S` (on
/// x86-64 the constant itself is loaded into `S`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    /// `dst = D & k`.
    And { dst: Loc, k: u64 },
    /// `dst = src >> n`.
    Shr { dst: Loc, src: Loc, n: u8 },
    /// `D = D - S`.
    Sub,
    /// `D = D + S`.
    Add,
    /// `D = D * k` (the constant goes through `S`).
    Mul(u64),
}

use Loc::{D, S};

pub const HWEIGHT64: [Step; 12] = [
    // w -= (w >> 1) & 0x5555555555555555
    Step::And {
        dst: S,
        k: 0xaaaa_aaaa_aaaa_aaaa,
    },
    Step::Shr {
        dst: S,
        src: S,
        n: 1,
    },
    Step::Sub,
    // w = (w & 0x3333333333333333) + ((w >> 2) & 0x3333333333333333)
    Step::And {
        dst: S,
        k: 0x3333_3333_3333_3333,
    },
    Step::Sub,
    Step::Shr {
        dst: D,
        src: D,
        n: 2,
    },
    Step::Add,
    // w = (w + (w >> 4)) & 0x0f0f0f0f0f0f0f0f
    Step::Shr {
        dst: S,
        src: D,
        n: 4,
    },
    Step::Add,
    Step::And {
        dst: D,
        k: 0x0f0f_0f0f_0f0f_0f0f,
    },
    // (w * 0x0101010101010101) >> 56
    Step::Mul(0x0101_0101_0101_0101),
    Step::Shr {
        dst: D,
        src: D,
        n: 56,
    },
];

/// What [`HWEIGHT64`] computes (for tests of the definition and of the
/// lowerings that follow it).
pub fn eval(x: u64) -> u64 {
    let mut r = [x, 0u64];
    let i = |l: Loc| l as usize;
    for s in HWEIGHT64 {
        match s {
            Step::And { dst, k } => r[i(dst)] = r[0] & k,
            Step::Shr { dst, src, n } => r[i(dst)] = r[i(src)] >> n,
            Step::Sub => r[0] = r[0].wrapping_sub(r[1]),
            Step::Add => r[0] = r[0].wrapping_add(r[1]),
            Step::Mul(k) => r[0] = r[0].wrapping_mul(k),
        }
    }
    r[0]
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The kernel's own lines, as written in lib/hweight.c.
    fn sw_hweight64(mut w: u64) -> u64 {
        w -= (w >> 1) & 0x5555_5555_5555_5555;
        w = (w & 0x3333_3333_3333_3333) + ((w >> 2) & 0x3333_3333_3333_3333);
        w = (w + (w >> 4)) & 0x0f0f_0f0f_0f0f_0f0f;
        w.wrapping_mul(0x0101_0101_0101_0101) >> 56
    }

    #[test]
    fn two_register_form_is_the_kernels_popcount() {
        let mut vals = vec![0, 1, 2, 3, u64::MAX, 1 << 63, (1 << 63) + 1, (1 << 63) - 1];
        for x in crate::isa::test_values::xorshift(0x9e37_79b9_7f4a_7c15).take(100_000) {
            vals.extend([x, x & (x >> 3), x | (x << 5)]);
        }
        for v in vals {
            assert_eq!(eval(v), u64::from(v.count_ones()), "{v:#x}");
            assert_eq!(eval(v), sw_hweight64(v), "{v:#x}");
        }
    }
}
