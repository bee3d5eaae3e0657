//! What a sequence's `assume` facts say about its parameters, and which
//! run-time conditions they decide.
//!
//! A spec states what its caller guarantees (`assume cpu < 255`: the
//! kernel's lock byte holds the cpu number + 1 and no e6500 system has
//! 255 cpus; `assume (start & 0xfff) == 0`: the caller passes page-aligned
//! addresses). Checks made dead by such a fact are code the kernel's own
//! hand-written sequence does not have; the `assume` pass folds them.
//!
//! Each parameter is known as an unsigned interval and a set of bits
//! that are 0; expressions are evaluated over that abstraction, each
//! operation giving a set that holds every value the operation can
//! produce from values in its inputs' sets (wrapping as the IR's
//! [`BinOp::apply`] does). A condition is decided only when it holds, or
//! fails, for every value in those sets. `verify` runs the compiled code
//! and the spec's meaning on worlds within the facts only, and the
//! meaning rejects a run outside them.

use super::expr::{BinOp, Func};
use super::{Cmp, Cond, Expr};
use crate::spec::diag::Span;

/// One `assume COND` of a sequence: a precondition the caller guarantees
/// and the generated code does not check.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Assume {
    pub cond: Cond,
    /// The condition as written, for the header and the notes.
    pub text: String,
    pub span: Span,
}

/// What is known of a 64-bit value: it lies in `lo..=hi` (unsigned), and
/// every bit set in `zeros` is 0 in it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Known {
    pub lo: u64,
    pub hi: u64,
    pub zeros: u64,
}

const TOP: u128 = 1 << 64;

impl Known {
    pub const ANY: Known = Known {
        lo: 0,
        hi: u64::MAX,
        zeros: 0,
    };

    pub fn exact(c: u64) -> Known {
        Known {
            lo: c,
            hi: c,
            zeros: !c,
        }
    }

    /// `lo..=hi` with `zeros`, the interval narrowed to the largest value
    /// the zero bits allow. None when no value fits (facts that cannot
    /// all hold).
    fn new(lo: u64, hi: u64, zeros: u64) -> Option<Known> {
        let hi = hi.min(!zeros);
        (lo <= hi).then_some(Known { lo, hi, zeros })
    }

    /// The interval `lo..=hi` of exact (unbounded) results, wrapped to 64
    /// bits: itself when no result wraps, shifted down when all do, else
    /// every value.
    fn wrapped(lo: i128, hi: i128, zeros: u64) -> Known {
        let (lo, hi) = if lo >= 0 && hi < TOP as i128 {
            (lo, hi)
        } else if lo >= TOP as i128 && hi < 2 * TOP as i128 {
            (lo - TOP as i128, hi - TOP as i128)
        } else if lo < 0 && hi < 0 && lo >= -(TOP as i128) {
            (lo + TOP as i128, hi + TOP as i128)
        } else {
            (0, u64::MAX as i128)
        };
        Known::new(lo as u64, hi as u64, zeros).unwrap_or(Known::ANY)
    }

    pub fn contains(&self, v: u64) -> bool {
        self.lo <= v && v <= self.hi && v & self.zeros == 0
    }

    fn is_exact(&self) -> Option<u64> {
        (self.lo == self.hi).then_some(self.lo)
    }
}

/// The low bits both operands are known to have clear: what a sum,
/// difference or bitwise or keeps clear.
fn low_zeros(a: Known, b: Known) -> u64 {
    let n = a.zeros.trailing_ones().min(b.zeros.trailing_ones());
    low_mask(n)
}

fn low_mask(n: u32) -> u64 {
    if n >= 64 {
        u64::MAX
    } else {
        (1u64 << n) - 1
    }
}

/// The smallest all-ones value at least `x` (every value with no higher
/// bit than `x` has is at most it).
fn ones_up_to(x: u64) -> u64 {
    if x == 0 {
        0
    } else {
        u64::MAX >> x.leading_zeros()
    }
}

fn bin(op: BinOp, a: Known, b: Known) -> Known {
    let (alo, ahi, blo, bhi) = (a.lo as i128, a.hi as i128, b.lo as i128, b.hi as i128);
    match op {
        BinOp::Add => Known::wrapped(alo + blo, ahi + bhi, low_zeros(a, b)),
        BinOp::Sub => Known::wrapped(alo - bhi, ahi - blo, low_zeros(a, b)),
        BinOp::Mul => {
            let tz = a.zeros.trailing_ones() + b.zeros.trailing_ones();
            match (a.hi as u128).checked_mul(b.hi as u128) {
                Some(hi) if hi < TOP => {
                    Known::new(a.lo * b.lo, hi as u64, low_mask(tz)).unwrap_or(Known::ANY)
                }
                _ => Known::new(0, u64::MAX, low_mask(tz)).unwrap_or(Known::ANY),
            }
        }
        BinOp::And => Known::new(0, a.hi.min(b.hi), a.zeros | b.zeros).unwrap_or(Known::ANY),
        BinOp::Or => Known::new(
            a.lo.max(b.lo),
            ones_up_to(a.hi.max(b.hi)),
            a.zeros & b.zeros,
        )
        .unwrap_or(Known::ANY),
        BinOp::Xor => {
            Known::new(0, ones_up_to(a.hi.max(b.hi)), a.zeros & b.zeros).unwrap_or(Known::ANY)
        }
        BinOp::Shl | BinOp::Shr => match b.is_exact() {
            // BinOp::apply: 64 or more shifts every bit out.
            Some(k) if k >= 64 => Known::exact(0),
            Some(k) => shift(op, a, k as u32),
            None => Known::ANY,
        },
    }
}

fn shift(op: BinOp, a: Known, k: u32) -> Known {
    let r = if op == BinOp::Shl {
        let zeros = (a.zeros << k) | low_mask(k);
        if a.hi.leading_zeros() >= k {
            Known::new(a.lo << k, a.hi << k, zeros)
        } else {
            Known::new(0, u64::MAX, zeros)
        }
    } else {
        Known::new(a.lo >> k, a.hi >> k, (a.zeros >> k) | !(u64::MAX >> k))
    };
    r.unwrap_or(Known::ANY)
}

/// What `e` can be, given what each parameter can be (`params[i]`;
/// missing ones are unknown). Locals, covers' bindings and features are
/// unknown.
pub fn eval(e: &Expr, params: &[Known]) -> Known {
    match e {
        Expr::Const(c) => Known::exact(*c),
        Expr::Param(i) => params.get(*i).copied().unwrap_or(Known::ANY),
        Expr::Local(_) | Expr::Binding(_) | Expr::Feature(_) => Known::ANY,
        Expr::Bin(op, a, b) => bin(*op, eval(a, params), eval(b, params)),
        Expr::Not(a) => {
            let a = eval(a, params);
            Known::new(!a.hi, !a.lo, 0).unwrap_or(Known::ANY)
        }
        Expr::Insert {
            value,
            shift: s,
            width,
        } => {
            let masked = bin(
                BinOp::And,
                eval(value, params),
                Known::exact(low_mask(*width)),
            );
            if *s >= 64 {
                Known::exact(0)
            } else {
                shift(BinOp::Shl, masked, *s)
            }
        }
        Expr::Cmp(..) => Known {
            lo: 0,
            hi: 1,
            zeros: !1,
        },
        Expr::Call(f, args) => call(*f, args, params),
    }
}

fn call(f: Func, args: &[Expr], params: &[Known]) -> Known {
    let k: Vec<Known> = args.iter().map(|a| eval(a, params)).collect();
    match (f, k.as_slice()) {
        (Func::Min, [a, b]) => {
            Known::new(a.lo.min(b.lo), a.hi.min(b.hi), a.zeros & b.zeros).unwrap_or(Known::ANY)
        }
        (Func::Max, [a, b]) => {
            Known::new(a.lo.max(b.lo), a.hi.max(b.hi), a.zeros & b.zeros).unwrap_or(Known::ANY)
        }
        (Func::Select, [_, a, b]) => {
            Known::new(a.lo.min(b.lo), a.hi.max(b.hi), a.zeros & b.zeros).unwrap_or(Known::ANY)
        }
        (Func::Ffs | Func::Fls | Func::Ctz | Func::Clz | Func::Popcount, _) => {
            Known::new(0, 64, 0).unwrap_or(Known::ANY)
        }
        _ => Known::ANY,
    }
}

/// Whether `c` holds for every value the parameters can have (Some(true)),
/// for none (Some(false)), or depends (None).
pub fn decide(c: &Cond, params: &[Known]) -> Option<bool> {
    let (a, b) = (eval(&c.a, params), eval(&c.b, params));
    let eq = match (a.is_exact(), b.is_exact()) {
        (Some(x), Some(y)) => Some(x == y),
        _ if a.hi < b.lo || b.hi < a.lo => Some(false),
        (Some(x), None) if x & b.zeros != 0 => Some(false),
        (None, Some(y)) if y & a.zeros != 0 => Some(false),
        _ => None,
    };
    let lt = if a.hi < b.lo {
        Some(true)
    } else if a.lo >= b.hi {
        Some(false)
    } else {
        None
    };
    match c.cmp {
        Cmp::Eq => eq,
        Cmp::Ne => eq.map(|x| !x),
        Cmp::Ltu => lt,
        Cmp::Geu => lt.map(|x| !x),
    }
}

/// What the facts say of each of `n` parameters; Err with the fact that
/// leaves a parameter no value, or that is not of a shape this reads.
pub fn params_known(n: usize, assumes: &[Assume]) -> Result<Vec<Known>, Unusable> {
    let mut k = vec![Known::ANY; n];
    for a in assumes {
        let (p, known) = refine(&a.cond, &k).ok_or(Unusable::Shape(a.span))?;
        k[p] = known.ok_or(Unusable::Empty(a.span))?;
    }
    Ok(k)
}

/// `known` where `c` also holds: narrowed when `c` is of a shape
/// [`params_known`] reads, else as it was (a condition that leaves no
/// value is not used either: it is the caller's to fold).
pub fn assuming(known: &[Known], c: &Cond) -> Vec<Known> {
    let mut k = known.to_vec();
    if let Some((p, Some(n))) = refine(c, known) {
        k[p] = n;
    }
    k
}

/// Why an `assume` cannot be used.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unusable {
    /// Not a parameter compared with a constant, nor an alignment.
    Shape(Span),
    /// No value of the parameter satisfies it (with the facts before it).
    Empty(Span),
}

/// The parameter `c` constrains and what it then is (None: no value).
/// Shapes: `P cmp C`, `C cmp P`, `P & M == 0`.
fn refine(c: &Cond, k: &[Known]) -> Option<(usize, Option<Known>)> {
    let param = |e: &Expr| match e {
        Expr::Param(i) if *i < k.len() => Some(*i),
        _ => None,
    };
    if let (Expr::Bin(BinOp::And, x, m), Cmp::Eq, Some(0)) = (&c.a, c.cmp, c.b.as_const()) {
        let (p, m) = match (param(x), m.as_const(), param(m), x.as_const()) {
            (Some(p), Some(m), _, _) | (_, _, Some(p), Some(m)) => (p, m),
            _ => return None,
        };
        let old = k[p];
        return Some((p, Known::new(old.lo, old.hi, old.zeros | m)));
    }
    // Normalised to `P cmp C`, with `C cmp P` turned around.
    let (p, cmp, v) = match (param(&c.a), c.b.as_const(), param(&c.b), c.a.as_const()) {
        (Some(p), Some(v), _, _) => (p, Some(c.cmp), v),
        (_, _, Some(p), Some(v)) => (p, None, v),
        _ => return None,
    };
    let old = k[p];
    let (lo, hi) = match (cmp, c.cmp) {
        (_, Cmp::Eq) => (old.lo.max(v), old.hi.min(v)),
        (_, Cmp::Ne) if v == old.lo => (old.lo.checked_add(1)?, old.hi),
        (_, Cmp::Ne) if v == old.hi => (old.lo, old.hi.checked_sub(1)?),
        (_, Cmp::Ne) => (old.lo, old.hi),
        // P < v, P >= v
        (Some(_), Cmp::Ltu) => match v.checked_sub(1) {
            Some(h) => (old.lo, old.hi.min(h)),
            None => return Some((p, None)),
        },
        (Some(_), Cmp::Geu) => (old.lo.max(v), old.hi),
        // v < P, v >= P
        (None, Cmp::Ltu) => match v.checked_add(1) {
            Some(l) => (old.lo.max(l), old.hi),
            None => return Some((p, None)),
        },
        (None, Cmp::Geu) => (old.lo, old.hi.min(v)),
    };
    Some((p, Known::new(lo, hi, old.zeros)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::expr::Rel;
    use proptest::prelude::*;

    fn p(i: usize) -> Expr {
        Expr::Param(i)
    }
    fn c(v: u64) -> Expr {
        Expr::Const(v)
    }
    fn b(op: BinOp, x: Expr, y: Expr) -> Expr {
        Expr::Bin(op, Box::new(x), Box::new(y))
    }
    fn assume(e: Expr) -> Assume {
        Assume {
            cond: Cond::of(e),
            text: String::new(),
            span: Span::new(0, 0),
        }
    }
    fn cmp(r: Rel, x: Expr, y: Expr) -> Expr {
        Expr::Cmp(r, Box::new(x), Box::new(y))
    }

    /// e6500's lock: with cpu < 255 the owner cpu + 1 fits the byte, so
    /// the checker's `cpu + 1 + ~0 >= 255` never holds.
    #[test]
    fn the_owner_check_is_dead_below_255_cpus() {
        let k = params_known(2, &[assume(cmp(Rel::Lt, p(1), c(255)))]).unwrap();
        let check = Cond {
            cmp: Cmp::Geu,
            a: b(BinOp::Add, b(BinOp::Add, p(1), c(1)), c(u64::MAX)),
            b: c(255),
        };
        assert_eq!(decide(&check, &k), Some(false));
        // Without the fact, it depends.
        assert_eq!(decide(&check, &[Known::ANY; 2]), None);
    }

    /// Alignment: `(start & 0xfff) == 0` decides `((start + 0x3000) & 0xfff) != 0`.
    #[test]
    fn an_alignment_decides_the_partial_page_test() {
        let k = params_known(
            1,
            &[assume(cmp(Rel::Eq, b(BinOp::And, p(0), c(0xfff)), c(0)))],
        )
        .unwrap();
        let partial = Cond {
            cmp: Cmp::Ne,
            a: b(BinOp::And, b(BinOp::Add, p(0), c(0x3000)), c(0xfff)),
            b: c(0),
        };
        assert_eq!(decide(&partial, &k), Some(false));
    }

    #[test]
    fn facts_no_value_satisfies_are_refused() {
        for e in [cmp(Rel::Lt, p(0), c(0)), cmp(Rel::Gt, p(0), c(u64::MAX))] {
            assert!(matches!(
                params_known(1, &[assume(e)]),
                Err(Unusable::Empty(_))
            ));
        }
        let both = [
            assume(cmp(Rel::Lt, p(0), c(5))),
            assume(cmp(Rel::Ge, p(0), c(9))),
        ];
        assert!(matches!(params_known(1, &both), Err(Unusable::Empty(_))));
        let two_params = assume(cmp(Rel::Lt, p(0), p(1)));
        assert!(matches!(
            params_known(2, &[two_params]),
            Err(Unusable::Shape(_))
        ));
    }

    fn arb_expr() -> impl Strategy<Value = Expr> {
        let leaf = prop_oneof![
            (0usize..2).prop_map(Expr::Param),
            prop_oneof![
                Just(0u64),
                Just(1),
                Just(0xfff),
                Just(255),
                Just(u64::MAX),
                any::<u64>()
            ]
            .prop_map(Expr::Const),
        ];
        leaf.prop_recursive(4, 24, 2, |inner| {
            prop_oneof![
                (
                    prop_oneof![
                        Just(BinOp::Add),
                        Just(BinOp::Sub),
                        Just(BinOp::Mul),
                        Just(BinOp::And),
                        Just(BinOp::Or),
                        Just(BinOp::Xor),
                    ],
                    inner.clone(),
                    inner.clone()
                )
                    .prop_map(|(op, x, y)| b(op, x, y)),
                (
                    prop_oneof![Just(BinOp::Shl), Just(BinOp::Shr)],
                    inner.clone(),
                    0u64..70
                )
                    .prop_map(|(op, x, k)| b(op, x, c(k))),
                inner.clone().prop_map(|x| Expr::Not(Box::new(x))),
                (inner.clone(), 0u32..64, 1u32..65).prop_map(|(x, shift, width)| Expr::Insert {
                    value: Box::new(x),
                    shift,
                    width,
                }),
                (inner.clone(), inner.clone()).prop_map(|(x, y)| Expr::Call(Func::Min, vec![x, y])),
                (inner.clone(), inner.clone()).prop_map(|(x, y)| Expr::Call(Func::Max, vec![x, y])),
                (inner.clone(), inner.clone(), inner)
                    .prop_map(|(c, x, y)| Expr::Call(Func::Select, vec![c, x, y])),
            ]
        })
    }

    /// A parameter value inside `k`, picked by `seed`: the ends, and
    /// values in between with the zero bits cleared.
    fn pick(k: Known, seed: u64) -> Option<u64> {
        let mid = k.lo.wrapping_add(seed % (k.hi - k.lo).saturating_add(1)) & !k.zeros;
        [k.lo, k.hi, mid, k.lo & !k.zeros, k.hi & !k.zeros]
            .into_iter()
            .nth((seed % 5) as usize)
            .filter(|v| k.contains(*v))
    }

    proptest! {
        /// Soundness: every value an expression takes on parameters within
        /// the facts lies in what `eval` says, and a decided condition
        /// comes out as decided.
        #[test]
        fn eval_holds_every_value(
            e in arb_expr(),
            rhs in arb_expr(),
            lo in prop_oneof![Just(0u64), any::<u64>()],
            width in prop_oneof![Just(0u64), Just(255), Just(0xffff), any::<u64>()],
            align in 0u32..16,
            seeds in any::<[u64; 2]>(),
        ) {
            let k0 = Known::new(lo, lo.saturating_add(width), low_mask(align));
            let Some(k0) = k0 else { return Ok(()); };
            let ks = [k0, Known::ANY];
            let Some(v0) = pick(k0, seeds[0]) else { return Ok(()); };
            let vals = [v0, seeds[1]];
            let got = e.eval_with(&vals, &[]);
            prop_assert!(eval(&e, &ks).contains(got), "{e:?} = {got:#x} on {vals:x?}, outside {:?}", eval(&e, &ks));
            for cmp in [Cmp::Eq, Cmp::Ne, Cmp::Ltu, Cmp::Geu] {
                let cond = Cond { cmp, a: e.clone(), b: rhs.clone() };
                if let Some(d) = decide(&cond, &ks) {
                    prop_assert_eq!(cond.eval(&vals, &[]), d, "{:?} on {:x?}", cond, vals);
                }
            }
        }
    }
}
