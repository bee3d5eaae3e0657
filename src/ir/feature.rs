//! How the IR spells a CPU feature test (`feature NAME`): a bit of the
//! feature word parameter, or (where the kernel patches code) a
//! [`Expr::Feature`], and which kernel patching a capability name asks for.
//! `crate::features` selects and dispatches the variants built from them.

use super::expr::{BinOp, Expr};
use super::Cmp;

/// How the kernel patches code for a capability, by its name's prefix.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Patching {
    /// arm64 `ARM64_*` cpucaps: `<asm/alternative.h>`.
    Arm64Alternative,
    /// POWER `CPU_FTR_*`: `BEGIN_FTR_SECTION` (`<asm/feature-fixups.h>`).
    PowerCpuFtr,
    /// POWER `MMU_FTR_*`: `BEGIN_MMU_FTR_SECTION`.
    PowerMmuFtr,
}

pub const CAPABILITY_HELP: &str =
    "capabilities are arm64 cpucaps (`ARM64_WORKAROUND_REPEAT_TLBI`, \
patched with `alternative_if`) or POWER `CPU_FTR_*` / `MMU_FTR_*` bits (patched with feature \
sections)";

pub fn patching_of(cap: &str) -> Option<Patching> {
    let rest = |p: &str| cap.strip_prefix(p).filter(|r| !r.is_empty());
    if rest("ARM64_").is_some() {
        Some(Patching::Arm64Alternative)
    } else if rest("CPU_FTR_").is_some() {
        Some(Patching::PowerCpuFtr)
    } else if rest("MMU_FTR_").is_some() {
        Some(Patching::PowerMmuFtr)
    } else {
        None
    }
}

/// `feature i` as read from the feature word, parameter `word`.
pub fn test_bit(word: usize, i: usize) -> Expr {
    Expr::bin(
        BinOp::And,
        Expr::bin(BinOp::Shr, Expr::Param(word), Expr::Const(i as u64)),
        Expr::Const(1),
    )
}

/// The feature `e` tests, if it is [`test_bit`] of `word` (or the patched
/// form, [`Expr::Feature`]).
pub(crate) fn feature_of(e: &Expr, word: Option<usize>) -> Option<usize> {
    feature_form(e, word).map(|(i, _)| i)
}

/// The feature `e` tests and whether the kernel patches the test.
pub(crate) fn feature_form(e: &Expr, word: Option<usize>) -> Option<(usize, bool)> {
    if let Expr::Feature(i) = e {
        return Some((*i, true));
    }
    let w = word?;
    let Expr::Bin(BinOp::And, x, one) = e else {
        return None;
    };
    if one.as_const() != Some(1) {
        return None;
    }
    match &**x {
        Expr::Param(p) if *p == w => Some((0, false)),
        Expr::Bin(BinOp::Shr, p, i) if **p == Expr::Param(w) => {
            i.as_const().map(|i| (i as usize, false))
        }
        _ => None,
    }
}

/// The feature an `if` condition tests and the value it has in the
/// then arm (`if feature X` -> (X, true)), or None for a run-time
/// condition.
pub fn cond_feature(c: &crate::ir::Cond, word: Option<usize>) -> Option<(usize, bool)> {
    let (form, other) = match (feature_form(&c.a, word), feature_form(&c.b, word)) {
        (Some((i, _)), None) => (i, &c.b),
        (None, Some((i, _))) => (i, &c.a),
        _ => return None,
    };
    match (c.cmp, other.as_const()) {
        (Cmp::Ne, Some(0)) => Some((form, true)),
        (Cmp::Eq, Some(0)) => Some((form, false)),
        (Cmp::Eq, Some(1)) => Some((form, true)),
        (Cmp::Ne, Some(1)) => Some((form, false)),
        _ => None,
    }
}
