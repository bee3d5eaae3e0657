//! Induction variables of a `range` (strength reduction).
//!
//! In a loop whose address `a` advances by a stride `s` (a constant, or a
//! run-time value such as a granule), an expression E(a) whose next value
//! is always E(a) + c, modulo the bits its consumer reads, is carried in a
//! register and incremented by `c` per trip instead of being recomputed
//! from `a`: the kernel's `addr = __TLBI_VADDR(start, asid); addr +=
//! stride`. `c` is an expression of the stride, computed once before the
//! loop. Which expressions qualify is decided per occurrence, from its own
//! context:
//!
//! - `c` is exact modulo 2^d, where `d` is how many low bits the
//!   consumer demands (`& 0xfff_ffff_ffff` demands 44 of its operand);
//! - `(a + c) >> k = (a >> k) + (c >> k)` only modulo 2^(64-k) (a carry out
//!   of bit 63 is lost on the left and kept on the right), so `a >> 12`
//!   is carried only where at most 52 bits of it are read;
//! - `x | K` is `x + K` when K's bits are below bits of x known to be zero
//!   in every trip (`(a & ~0xfff) | 0xa0`), and `x | y` reads only x's
//!   bits below y's known-zero low bits.
//!
//! Without [`Facts`], every rewrite holds for every start, size, stride
//! and wrap past 2^64. The facts are what a versioned loop checks at run
//! time before it takes the reduced body (see `loops.rs`): the stride's
//! low bits are zero (`>> 12` of a 4K-multiple granule), and the range
//! neither wraps nor reaches 2^bound (`(a >> 12) | (asid << 48)` is
//! `(a >> 12) + (asid << 48)` while a < 2^60; `(a >> 12) & 0xfff_ffff_ffff`
//! is `a >> 12` while a < 2^56). A caller outside them runs the loop
//! that recomputes every value. `verify`'s wrap worlds, the reference
//! comparison with the kernel's C under qemu and the booted kernels check
//! the generated loops.

use crate::ir::expr::{BinOp, Expr};
use crate::spec::bits::ones_run;

/// What holds in every trip of the loop being reduced.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct Facts {
    /// Low bits of the stride that are zero.
    pub stride_low: u32,
    /// Every address is below 2^bound and the range does not wrap past
    /// 2^64 (64: only the latter).
    pub bound: Option<u32>,
}

/// The loop being reduced: its address local, stride and facts.
#[derive(Clone, Copy)]
pub(super) struct Loop<'a> {
    pub local: usize,
    pub stride: &'a Expr,
    pub facts: Facts,
}

fn neg(c: Expr) -> Expr {
    Expr::bin(BinOp::Sub, Expr::Const(0), c)
}

impl Loop<'_> {
    /// Low bits of `e` known to be zero in every trip.
    fn known_zero_low(self, e: &Expr) -> u32 {
        let kz = |x: &Expr| self.known_zero_low(x);
        if e == self.stride {
            return match e {
                Expr::Const(c) => c.trailing_zeros(),
                _ => self.facts.stride_low,
            };
        }
        match e {
            Expr::Const(c) => c.trailing_zeros(),
            Expr::Bin(BinOp::And, a, b) => kz(a).max(kz(b)),
            Expr::Bin(BinOp::Or | BinOp::Xor | BinOp::Add | BinOp::Sub, a, b) => kz(a).min(kz(b)),
            Expr::Bin(BinOp::Shl, a, b) => match b.as_const() {
                Some(k) if k < 64 => (kz(a) + k as u32).min(64),
                _ => 0,
            },
            // Only the zeros above the shift stay.
            Expr::Bin(BinOp::Shr, a, b) => match b.as_const() {
                Some(k) if k < 64 && kz(a) >= 64 => 64,
                Some(k) if k < 64 => kz(a).saturating_sub(k as u32),
                _ => 0,
            },
            Expr::Bin(BinOp::Mul, a, b) => (kz(a) + kz(b)).min(64),
            Expr::Insert { value, shift, .. } => (kz(value) + shift).min(64),
            _ => 0,
        }
    }

    /// How many low bits of `e` can be set in any trip (64: unknown).
    fn high_bits(self, e: &Expr) -> u32 {
        let hb = |x: &Expr| self.high_bits(x);
        match e {
            Expr::Local(l) if *l == self.local => self.facts.bound.unwrap_or(64),
            Expr::Const(c) => 64 - c.leading_zeros(),
            Expr::Bin(BinOp::And, a, b) => hb(a).min(hb(b)),
            Expr::Bin(BinOp::Or | BinOp::Xor, a, b) => hb(a).max(hb(b)),
            Expr::Bin(BinOp::Shr, a, b) => match b.as_const() {
                Some(k) if k < 64 => hb(a).saturating_sub(k as u32),
                _ => 64,
            },
            Expr::Bin(BinOp::Shl, a, b) => match b.as_const() {
                Some(k) if k < 64 => (hb(a) + k as u32).min(64),
                _ => 64,
            },
            Expr::Insert {
                value,
                shift,
                width,
            } => (hb(value).min(*width) + shift).min(64),
            _ => 64,
        }
    }

    /// Is `x` the address, in a loop known not to wrap?
    fn never_wraps(self, x: &Expr) -> bool {
        *x == Expr::Local(self.local) && self.facts.bound.is_some()
    }

    /// The per-trip increment `c` of `e` such that, for every pair of
    /// consecutive trips, `e(a + stride) = e(a) + c` modulo 2^d; None when
    /// there is none.
    pub(super) fn step(self, e: &Expr, d: u32) -> Option<Expr> {
        if d == 0 {
            return Some(Expr::Const(0));
        }
        match e {
            Expr::Local(l) if *l == self.local => Some(self.stride.clone()),
            _ if !e.uses_locals() => Some(Expr::Const(0)),
            Expr::Bin(op, a, b) => self.bin_step(*op, a, b, d),
            Expr::Not(a) => Some(neg(self.step(a, d)?)),
            // (value & mask(width)) << shift: the mask changes nothing
            // where the value always fits.
            Expr::Insert {
                value,
                shift,
                width,
            } => {
                let inner = d.saturating_sub(*shift);
                if inner > *width && self.high_bits(value) > *width {
                    return None;
                }
                let c = self.step(value, inner)?;
                Some(Expr::bin(BinOp::Shl, c, Expr::Const(u64::from(*shift))))
            }
            _ => None,
        }
    }

    fn bin_step(self, op: BinOp, a: &Expr, b: &Expr, d: u32) -> Option<Expr> {
        let k = b.as_const();
        match op {
            BinOp::Add | BinOp::Sub => Some(Expr::bin(op, self.step(a, d)?, self.step(b, d)?)),
            BinOp::Mul => match (a.as_const(), k) {
                (_, Some(k)) => Some(Expr::bin(BinOp::Mul, self.step(a, d)?, Expr::Const(k))),
                (Some(k), _) => Some(Expr::bin(BinOp::Mul, self.step(b, d)?, Expr::Const(k))),
                _ => None,
            },
            BinOp::Shl => match k? {
                k if k >= 64 => Some(Expr::Const(0)),
                k => {
                    let c = self.step(a, d.saturating_sub(k as u32))?;
                    Some(Expr::bin(BinOp::Shl, c, Expr::Const(k)))
                }
            },
            // Exact modulo 2^(64 - k), or in full where the operand never
            // wraps; and only for an increment that is a multiple of 2^k.
            BinOp::Shr => match k? {
                k if k >= 64 => Some(Expr::Const(0)),
                k if d + k as u32 <= 64 || self.never_wraps(a) => {
                    let c = self.step(a, 64)?;
                    (self.known_zero_low(&c) >= k as u32)
                        .then(|| Expr::bin(BinOp::Shr, c, Expr::Const(k)))
                }
                _ => None,
            },
            BinOp::And => self.and_step(a, b, d),
            BinOp::Or | BinOp::Xor => {
                // One side invariant; the other side's trips are reduced.
                let (x, y) = if !b.uses_locals() {
                    (a, b)
                } else if !a.uses_locals() {
                    (b, a)
                } else {
                    return None;
                };
                let ky = self.known_zero_low(y);
                // y's bits lie above every bit the consumer reads, or
                // above every bit x can have: `|` is `+`.
                if ky >= d || self.high_bits(x) <= ky {
                    return self.step(x, d);
                }
                // y's bits lie below bits x always has clear: `|` is `+`.
                let kx = self.known_zero_low(x);
                match y.as_const() {
                    Some(c) if kx >= 64 || c >> kx == 0 => self.step(x, d),
                    _ => None,
                }
            }
        }
    }

    /// x & M, M a run of ones from bit j to bit h: exact modulo 2^(h+1)
    /// for an increment that is a multiple of 2^j; no mask at all where x
    /// never has bits outside the run.
    fn and_step(self, a: &Expr, b: &Expr, d: u32) -> Option<Expr> {
        let (x, m) = match (a.as_const(), b.as_const()) {
            (_, Some(m)) => (a, m),
            (Some(m), _) => (b, m),
            _ => return None,
        };
        if m == 0 {
            return Some(Expr::Const(0));
        }
        let Some((lo, hi)) = ones_run(m) else {
            // Not one run (`addr & ~PE_MASK`): the mask is no mask below
            // its lowest clear bit, so only where the consumer reads no
            // more, or x never reaches it.
            let z = m.trailing_ones();
            return (z > 0 && (d <= z || self.high_bits(x) <= z))
                .then(|| self.step(x, d))
                .flatten();
        };
        if self.known_zero_low(x) >= lo && self.high_bits(x) <= hi + 1 {
            return self.step(x, d);
        }
        if hi < 63 && d > hi + 1 {
            return None;
        }
        let c = self.step(x, d)?;
        (self.known_zero_low(&c) >= lo).then_some(c)
    }

    /// How many low bits of each operand of `e` its value depends on, when
    /// `d` of its bits are read (64: the operand is read in full).
    fn demanded(e: &Expr, d: u32) -> Vec<(&Expr, u32)> {
        fn full(es: Vec<&Expr>) -> Vec<(&Expr, u32)> {
            es.into_iter().map(|c| (c, 64)).collect()
        }
        match e {
            Expr::Bin(op, a, b) => {
                let (ka, kb) = (a.as_const(), b.as_const());
                match op {
                    BinOp::Add | BinOp::Sub | BinOp::Mul | BinOp::Or | BinOp::Xor => {
                        vec![(a, d), (b, d)]
                    }
                    BinOp::And => match (ka, kb) {
                        (_, Some(m)) => vec![(a, d.min(64 - m.leading_zeros()))],
                        (Some(m), _) => vec![(b, d.min(64 - m.leading_zeros()))],
                        _ => vec![(a, d), (b, d)],
                    },
                    BinOp::Shl => match kb {
                        Some(k) if k >= 64 => Vec::new(),
                        Some(k) => vec![(a, d.saturating_sub(k as u32))],
                        None => full(vec![a, b]),
                    },
                    BinOp::Shr => match kb {
                        Some(k) if k < 64 => vec![(a, (d + k as u32).min(64))],
                        _ => full(vec![a, b]),
                    },
                }
            }
            Expr::Not(a) => vec![(a, d)],
            Expr::Insert {
                value,
                shift,
                width,
            } => vec![(value, d.saturating_sub(*shift).min(*width))],
            _ => full(e.children()),
        }
    }

    /// `e` with every largest subexpression that is an induction variable
    /// (and not the address itself) replaced by `Local(id)`; `ivs` holds
    /// each variable once: (id, expression, increment). `d`: the bits of
    /// `e` its consumer reads.
    pub(super) fn reduce(
        self,
        e: &Expr,
        d: u32,
        ivs: &mut Vec<(usize, Expr, Expr)>,
        fresh: &mut dyn FnMut() -> usize,
    ) -> Expr {
        if !e.uses_locals() || matches!(e, Expr::Local(_)) || d == 0 {
            return e.clone();
        }
        if let Some(c) = self.step(e, d) {
            // The same expression read to fewer bits may have claimed an
            // increment exact only there: share a register only when the
            // increments agree.
            let id = match ivs.iter().find(|(_, x, inc)| x == e && *inc == c) {
                Some((id, _, _)) => *id,
                None => {
                    let id = fresh();
                    ivs.push((id, e.clone(), c));
                    id
                }
            };
            return Expr::Local(id);
        }
        let kids: Vec<(*const Expr, Expr)> = Self::demanded(e, d)
            .into_iter()
            .map(|(c, dc)| (c as *const Expr, self.reduce(c, dc, ivs, fresh)))
            .collect();
        let next = |orig: &Expr| {
            kids.iter()
                .find(|(p, _)| std::ptr::eq(*p, orig))
                .map_or_else(|| orig.clone(), |(_, r)| r.clone())
        };
        match e {
            Expr::Bin(op, a, b) => Expr::Bin(*op, Box::new(next(a)), Box::new(next(b))),
            Expr::Not(a) => Expr::Not(Box::new(next(a))),
            Expr::Insert {
                value,
                shift,
                width,
            } => Expr::Insert {
                value: Box::new(next(value)),
                shift: *shift,
                width: *width,
            },
            Expr::Cmp(rel, a, b) => Expr::Cmp(*rel, Box::new(next(a)), Box::new(next(b))),
            Expr::Call(f, args) => Expr::Call(*f, args.iter().map(next).collect()),
            _ => e.clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const A: usize = 0;
    const PAGE: Expr = Expr::Const(4096);
    /// A run-time stride: parameter 1.
    const GRANULE: Expr = Expr::Param(1);

    fn lp(stride: &Expr, stride_low: u32, bound: Option<u32>) -> Loop<'_> {
        Loop {
            local: A,
            stride,
            facts: Facts { stride_low, bound },
        }
    }
    fn a() -> Expr {
        Expr::Local(A)
    }
    fn bin(op: BinOp, x: Expr, y: Expr) -> Expr {
        Expr::Bin(op, Box::new(x), Box::new(y))
    }
    fn c(v: u64) -> Expr {
        Expr::Const(v)
    }

    /// Brute-force check of a claimed step: over strides with the low
    /// zero bits the loop assumes, and addresses near the carries, wraps
    /// and bounds that break the naive rewrite, every pair of consecutive
    /// trips the facts allow.
    fn holds(l: Loop, e: &Expr, d: u32, inc: &Expr) -> bool {
        let mask = if d >= 64 { u64::MAX } else { (1 << d) - 1 };
        let strides: Vec<u64> = match l.stride.as_const() {
            Some(s) => vec![s],
            None => [1u64, 3, 0x201, 1 << 20, 0xffff]
                .iter()
                .map(|m| m << l.facts.stride_low)
                .collect(),
        };
        let mut starts = vec![
            0,
            0x1000,
            0xfff,
            0x0000_ffff_ffff_f000,
            0x000f_ffff_ffff_f000,
            0xffff_ffff_ffff_f000,
            0xffff_ffff_ffff_e123,
            0x8000_0000_0000_0000 - 0x1000,
            0x1234_5678_9abc_d000,
        ];
        for b in [48, 52, 56, 60, 63] {
            starts.extend([(1u64 << b) - 0x1000, (1u64 << b) - 0x2000 - 5, 1u64 << b]);
        }
        strides.iter().all(|&v| {
            let params = [7, v];
            let c = inc.eval_with(&params, &[]);
            starts.iter().all(|&s| {
                let next = s.wrapping_add(v);
                let allowed = match l.facts.bound {
                    None => true,
                    Some(b) => next > s && (b == 64 || next < 1 << b),
                };
                !allowed || {
                    let (now, then) = (e.eval_with(&params, &[s]), e.eval_with(&params, &[next]));
                    then & mask == now.wrapping_add(c) & mask
                }
            })
        })
    }

    fn cases() -> Vec<Expr> {
        let asid = bin(BinOp::Shl, Expr::Param(0), c(48));
        let sh = bin(BinOp::Shr, a(), c(12));
        vec![
            a(),
            sh.clone(),
            bin(BinOp::And, sh.clone(), c(0xfff_ffff_ffff)),
            bin(BinOp::Or, bin(BinOp::And, a(), c(!0xfff)), c(0xa0)),
            bin(BinOp::Or, bin(BinOp::And, a(), c(!0xfff)), c(0x1a0)),
            bin(
                BinOp::Or,
                bin(BinOp::And, sh.clone(), c(0xfff_ffff_ffff)),
                asid.clone(),
            ),
            bin(BinOp::Or, sh.clone(), asid.clone()),
            bin(BinOp::Add, bin(BinOp::Shl, a(), c(3)), Expr::Param(0)),
            Expr::Not(Box::new(a())),
            Expr::Insert {
                value: Box::new(sh.clone()),
                shift: 8,
                width: 20,
            },
            Expr::Insert {
                value: Box::new(sh),
                shift: 8,
                width: 52,
            },
            // Masks that are not one run of ones (skiboot's SETFIELD of a
            // PE number into a DMA address).
            bin(BinOp::And, a(), c(!0x0f00_0000_0000_0000)),
            bin(BinOp::And, a(), c(0x00ff_0000_ffff_ffff)),
            bin(BinOp::And, a(), c(0xffff_0000_0000_f000)),
        ]
    }

    #[test]
    fn every_claimed_step_holds_on_carries_wraps_and_bounds() {
        let loops = [
            lp(&PAGE, 12, None),
            lp(&PAGE, 12, Some(64)),
            lp(&PAGE, 12, Some(56)),
            lp(&GRANULE, 0, None),
            lp(&GRANULE, 12, None),
            lp(&GRANULE, 12, Some(64)),
            lp(&GRANULE, 12, Some(60)),
            lp(&GRANULE, 12, Some(48)),
        ];
        let mut claimed = 0;
        for l in loops {
            for e in &cases() {
                for d in [64, 52, 44, 20, 12] {
                    if let Some(inc) = l.step(e, d) {
                        claimed += 1;
                        assert!(
                            holds(l, e, d, &inc),
                            "{e:?} at {d} bits with {:?}: step {inc:?} is wrong",
                            l.facts
                        );
                    }
                }
            }
        }
        // The rewrite must not be vacuous: most of these are reducible.
        assert!(claimed >= 250, "{claimed}");
    }

    #[test]
    fn a_mask_of_several_runs_is_no_mask_only_below_its_first_gap() {
        let pe = bin(BinOp::And, a(), c(!0x0f00_0000_0000_0000));
        assert_eq!(lp(&PAGE, 12, None).step(&pe, 64), None);
        assert_eq!(lp(&PAGE, 12, None).step(&pe, 56), Some(c(4096)));
        assert_eq!(lp(&PAGE, 12, Some(56)).step(&pe, 64), Some(c(4096)));
        assert_eq!(lp(&PAGE, 12, Some(57)).step(&pe, 64), None);
    }

    #[test]
    fn shifted_address_is_carried_only_where_its_top_bits_are_not_read() {
        let l = lp(&PAGE, 12, None);
        let sh = bin(BinOp::Shr, a(), c(12));
        assert_eq!(l.step(&sh, 64), None, "a carry past bit 63 is lost");
        assert_eq!(l.step(&sh, 52), Some(c(1)));
        assert_eq!(lp(&PAGE, 12, Some(64)).step(&sh, 64), Some(c(1)), "no wrap");
        let tlbi = bin(
            BinOp::Or,
            bin(BinOp::And, sh.clone(), c(0xfff_ffff_ffff)),
            bin(BinOp::Shl, Expr::Param(0), c(48)),
        );
        // The field wraps within 44 bits where the carried sum would not.
        assert_eq!(l.step(&tlbi, 64), None);
        let (mut ivs, mut n) = (Vec::new(), 100);
        let r = l.reduce(&tlbi, 64, &mut ivs, &mut || {
            n += 1;
            n
        });
        assert_eq!(ivs, vec![(101, sh, c(1))]);
        assert_eq!(
            r,
            bin(
                BinOp::Or,
                bin(BinOp::And, Expr::Local(101), c(0xfff_ffff_ffff)),
                bin(BinOp::Shl, Expr::Param(0), c(48)),
            )
        );
        // Below 2^56 the mask is no mask: the whole operand is carried.
        assert_eq!(lp(&PAGE, 12, Some(56)).step(&tlbi, 64), Some(c(1)));
        assert_eq!(lp(&PAGE, 12, Some(57)).step(&tlbi, 64), None);
    }

    #[test]
    fn a_run_time_granule_is_carried_shifted_when_its_low_bits_are_zero() {
        let smmu = bin(
            BinOp::Or,
            bin(BinOp::Shr, a(), c(12)),
            bin(BinOp::Shl, Expr::Param(0), c(48)),
        );
        assert_eq!(lp(&GRANULE, 0, Some(60)).step(&smmu, 64), None);
        assert_eq!(lp(&GRANULE, 12, Some(61)).step(&smmu, 64), None);
        assert_eq!(
            lp(&GRANULE, 12, Some(60)).step(&smmu, 64),
            Some(bin(BinOp::Shr, GRANULE, c(12)))
        );
    }

    #[test]
    fn a_page_aligned_operand_is_carried_whole() {
        let l = lp(&PAGE, 12, None);
        let op = bin(BinOp::Or, bin(BinOp::And, a(), c(!0xfff)), c(0xa0));
        assert_eq!(l.step(&op, 64), Some(c(4096)));
        // 0x1000 | K: K overlaps the bits that change.
        let bad = bin(BinOp::Or, bin(BinOp::And, a(), c(!0xfff)), c(0x1000));
        assert_eq!(l.step(&bad, 64), None);
    }
}
