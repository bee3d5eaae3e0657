//! Induction variables of a counted `range` (strength reduction).
//!
//! In a loop whose address `a` advances by a constant stride `s`, an
//! expression E(a) whose next value is always E(a) + c, modulo the bits
//! its consumer reads, is carried in a register and incremented by `c` per
//! trip instead of being recomputed from `a`: the kernel's
//! `addr = __TLBI_VADDR(start, asid); addr += stride`. Which expressions
//! qualify is decided per occurrence, from its own context:
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
//! Nothing here trusts a stated fact about the caller: every rewrite holds
//! for every start, size and wrap past 2^64. `verify`'s wrap worlds, the
//! reference comparison with the kernel's C under qemu and the booted
//! kernels check the generated loops.

use crate::ir::expr::{field_mask, BinOp, Expr};

/// The loop being reduced: its address local and constant stride.
#[derive(Clone, Copy)]
pub(super) struct Loop {
    pub local: usize,
    pub stride: u64,
}

/// Low bits of `e` known to be zero in every trip.
fn known_zero_low(e: &Expr) -> u32 {
    match e {
        Expr::Const(c) => c.trailing_zeros(),
        Expr::Bin(BinOp::And, a, b) => known_zero_low(a).max(known_zero_low(b)),
        Expr::Bin(BinOp::Or | BinOp::Xor | BinOp::Add | BinOp::Sub, a, b) => {
            known_zero_low(a).min(known_zero_low(b))
        }
        Expr::Bin(BinOp::Shl, a, b) => match b.as_const() {
            Some(k) if k < 64 => (known_zero_low(a) + k as u32).min(64),
            _ => 0,
        },
        Expr::Bin(BinOp::Mul, a, b) => (known_zero_low(a) + known_zero_low(b)).min(64),
        Expr::Insert { value, shift, .. } => (known_zero_low(value) + shift).min(64),
        _ => 0,
    }
}

/// `m` as a run of ones: (lowest bit, highest bit).
fn ones_run(m: u64) -> Option<(u32, u32)> {
    if m == 0 {
        return None;
    }
    let (lo, hi) = (m.trailing_zeros(), 63 - m.leading_zeros());
    (m == field_mask(lo, hi - lo + 1)).then_some((lo, hi))
}

impl Loop {
    /// The per-trip increment `c` of `e` such that, for every address
    /// `a`, `e(a + stride) = e(a) + c` modulo 2^d; None when there is none.
    pub(super) fn step(self, e: &Expr, d: u32) -> Option<u64> {
        if d == 0 {
            return Some(0);
        }
        match e {
            Expr::Local(l) if *l == self.local => Some(self.stride),
            _ if !e.uses_locals() => Some(0),
            Expr::Bin(op, a, b) => self.bin_step(*op, a, b, d),
            Expr::Not(a) => Some(self.step(a, d)?.wrapping_neg()),
            // (value & mask(width)) << shift
            Expr::Insert {
                value,
                shift,
                width,
            } => {
                let inner = d.saturating_sub(*shift);
                if inner > *width {
                    return None;
                }
                Some(self.step(value, inner)? << shift)
            }
            _ => None,
        }
    }

    fn bin_step(self, op: BinOp, a: &Expr, b: &Expr, d: u32) -> Option<u64> {
        let k = b.as_const();
        match op {
            BinOp::Add => Some(self.step(a, d)?.wrapping_add(self.step(b, d)?)),
            BinOp::Sub => Some(self.step(a, d)?.wrapping_sub(self.step(b, d)?)),
            BinOp::Mul => match (a.as_const(), k) {
                (_, Some(k)) => Some(self.step(a, d)?.wrapping_mul(k)),
                (Some(k), _) => Some(self.step(b, d)?.wrapping_mul(k)),
                _ => None,
            },
            BinOp::Shl => match k? {
                k if k >= 64 => Some(0),
                k => Some(self.step(a, d.saturating_sub(k as u32))? << k),
            },
            // Exact modulo 2^(64 - k), and only for an increment that is
            // a multiple of 2^k.
            BinOp::Shr => match k? {
                k if k >= 64 => Some(0),
                k if d + k as u32 <= 64 => {
                    let c = self.step(a, 64)?;
                    (c.trailing_zeros() >= k as u32).then(|| c >> k)
                }
                _ => None,
            },
            // x & M, M a run of ones from bit j to bit h: exact modulo
            // 2^(h+1) for an increment that is a multiple of 2^j.
            BinOp::And => {
                let (x, m) = match (a.as_const(), k) {
                    (_, Some(m)) => (a, m),
                    (Some(m), _) => (b, m),
                    _ => return None,
                };
                let Some((lo, hi)) = ones_run(m) else {
                    return Some(0);
                };
                if hi < 63 && d > hi + 1 {
                    return None;
                }
                let c = self.step(x, d)?;
                (c.trailing_zeros() >= lo).then_some(c)
            }
            BinOp::Or | BinOp::Xor => {
                // One side invariant; the other side's trips are reduced.
                let (x, y) = if !b.uses_locals() {
                    (a, b)
                } else if !a.uses_locals() {
                    (b, a)
                } else {
                    return None;
                };
                // y's bits lie above every bit the consumer reads.
                if known_zero_low(y) >= d {
                    return self.step(x, d);
                }
                // y's bits lie below bits x always has clear: `|` is `+`.
                let kx = known_zero_low(x);
                match y.as_const() {
                    Some(c) if kx >= 64 || c >> kx == 0 => self.step(x, d),
                    _ => None,
                }
            }
        }
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
        ivs: &mut Vec<(usize, Expr, u64)>,
        fresh: &mut dyn FnMut() -> usize,
    ) -> Expr {
        if !e.uses_locals() || matches!(e, Expr::Local(_)) || d == 0 {
            return e.clone();
        }
        if let Some(c) = self.step(e, d) {
            let id = match ivs.iter().find(|(_, x, _)| x == e) {
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
    const L: Loop = Loop {
        local: A,
        stride: 4096,
    };

    fn a() -> Expr {
        Expr::Local(A)
    }
    fn bin(op: BinOp, x: Expr, y: Expr) -> Expr {
        Expr::Bin(op, Box::new(x), Box::new(y))
    }
    fn c(v: u64) -> Expr {
        Expr::Const(v)
    }

    /// Brute-force check of a claimed step over addresses near the
    /// carries and wraps that break the naive rewrite.
    fn holds(e: &Expr, d: u32, step: u64) -> bool {
        let mask = if d >= 64 { u64::MAX } else { (1 << d) - 1 };
        let starts = [
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
        starts.iter().all(|&s| {
            let (now, next) = (
                e.eval_with(&[7], &[s]),
                e.eval_with(&[7], &[s.wrapping_add(L.stride)]),
            );
            next & mask == now.wrapping_add(step) & mask
        })
    }

    #[test]
    fn every_claimed_step_holds_on_carries_and_wraps() {
        let asid = bin(BinOp::Shl, Expr::Param(0), c(48));
        let cases = [
            a(),
            bin(BinOp::Shr, a(), c(12)),
            bin(BinOp::And, bin(BinOp::Shr, a(), c(12)), c(0xfff_ffff_ffff)),
            bin(BinOp::Or, bin(BinOp::And, a(), c(!0xfff)), c(0xa0)),
            bin(BinOp::Or, bin(BinOp::And, a(), c(!0xfff)), c(0x1a0)),
            bin(
                BinOp::Or,
                bin(BinOp::And, bin(BinOp::Shr, a(), c(12)), c(0xfff_ffff_ffff)),
                asid.clone(),
            ),
            bin(BinOp::Add, bin(BinOp::Shl, a(), c(3)), Expr::Param(0)),
            Expr::Not(Box::new(a())),
            Expr::Insert {
                value: Box::new(bin(BinOp::Shr, a(), c(12))),
                shift: 8,
                width: 20,
            },
        ];
        let mut claimed = 0;
        for e in &cases {
            for d in [64, 52, 44, 20, 12] {
                if let Some(s) = L.step(e, d) {
                    claimed += 1;
                    assert!(holds(e, d, s), "{e:?} at {d} bits: step {s:#x} is wrong");
                }
            }
        }
        // The rewrite must not be vacuous: most of these are reducible.
        assert!(claimed >= 20, "{claimed}");
    }

    #[test]
    fn shifted_address_is_carried_only_where_its_top_bits_are_not_read() {
        let sh = bin(BinOp::Shr, a(), c(12));
        assert_eq!(L.step(&sh, 64), None, "a carry past bit 63 is lost");
        assert_eq!(L.step(&sh, 52), Some(1));
        let tlbi = bin(
            BinOp::Or,
            bin(BinOp::And, sh.clone(), c(0xfff_ffff_ffff)),
            bin(BinOp::Shl, Expr::Param(0), c(48)),
        );
        // The field wraps within 44 bits where the carried sum would not.
        assert_eq!(L.step(&tlbi, 64), None);
        let (mut ivs, mut n) = (Vec::new(), 100);
        let r = L.reduce(&tlbi, 64, &mut ivs, &mut || {
            n += 1;
            n
        });
        assert_eq!(ivs, vec![(101, sh, 1)]);
        assert_eq!(
            r,
            bin(
                BinOp::Or,
                bin(BinOp::And, Expr::Local(101), c(0xfff_ffff_ffff)),
                bin(BinOp::Shl, Expr::Param(0), c(48)),
            )
        );
    }

    #[test]
    fn a_page_aligned_operand_is_carried_whole() {
        let op = bin(BinOp::Or, bin(BinOp::And, a(), c(!0xfff)), c(0xa0));
        assert_eq!(L.step(&op, 64), Some(4096));
        // 0x1000 | K: K overlaps the bits that change.
        let bad = bin(BinOp::Or, bin(BinOp::And, a(), c(!0xfff)), c(0x1000));
        assert_eq!(L.step(&bad, 64), None);
    }
}
