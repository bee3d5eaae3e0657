//! What a table sweeps: the request of a sequence's first `cover`, or of
//! its first `threshold(SET)` comparison.

use crate::ir::{CoverMode, Expr, GSize, Program, Seq, Stmt};

pub(super) fn collect_params(e: &Expr, out: &mut Vec<usize>) {
    match e {
        Expr::Param(i) => {
            if !out.contains(i) {
                out.push(*i)
            }
        }
        _ => e
            .children()
            .into_iter()
            .for_each(|c| collect_params(c, out)),
    }
}

pub(super) struct Cover<'a> {
    pub(super) set: usize,
    pub(super) start: &'a Expr,
    pub(super) size: &'a Expr,
    pub(super) threshold: &'a str,
    pub(super) body: &'a [Stmt],
    pub(super) mode: CoverMode,
}

fn first_cover(seq: &Seq) -> Option<Cover<'_>> {
    let mut found = None;
    crate::ir::walk(&seq.body, &mut |s| {
        if let (
            Stmt::Cover {
                set,
                start,
                size,
                threshold,
                body,
                mode,
                ..
            },
            None,
        ) = (s, &found)
        {
            found = Some(Cover {
                set: *set,
                start,
                size,
                threshold,
                body,
                mode: *mode,
            });
        }
    });
    found
}

/// What a table sweeps: the request (start and size in bytes) of the
/// sequence's first `cover`, or, in a sequence without one, of its first
/// `if X > threshold(SET)`: there `X` counts the set's smallest granules
/// (`(size >> 12) > threshold(s1cmd)`), so the request is `size`.
pub(super) struct Subject<'a> {
    pub(super) set: usize,
    pub(super) start: Expr,
    pub(super) size: Expr,
    pub(super) cover: Option<Cover<'a>>,
    pub(super) text: String,
}

pub(super) fn subject<'a>(prog: &Program, seq: &'a Seq) -> Option<Subject<'a>> {
    if let Some(c) = first_cover(seq) {
        let set = &prog.granules[c.set];
        let text = format!(
            "cover {}, {} with {} {}",
            c.start.display(&seq.params),
            c.size.display(&seq.params),
            set.name,
            match c.mode {
                CoverMode::Single => "single",
                CoverMode::Exact => "exact",
                CoverMode::Auto => "auto",
                CoverMode::Range => "range",
            }
        );
        return Some(Subject {
            set: c.set,
            start: c.start.clone(),
            size: c.size.clone(),
            text,
            cover: Some(c),
        });
    }
    let mut found = None;
    crate::ir::walk(&seq.body, &mut |s| {
        let (Stmt::If { cond, .. }, None) = (s, &found) else {
            return;
        };
        let set_of = |e: &Expr| match e {
            Expr::Binding(crate::ir::expr::Binding::Threshold(t)) => Some(*t),
            _ => None,
        };
        let (set, x, cmp_side_b) = match (set_of(&cond.a), set_of(&cond.b)) {
            (_, Some(t)) => (t, &cond.a, true),
            (Some(t), None) => (t, &cond.b, false),
            (None, None) => return,
        };
        let Some(g) = prog.granules.get(set).and_then(crate::model::loop_entry) else {
            return;
        };
        let GSize::Bytes(granule) = g.size else {
            return;
        };
        // Granules back to bytes: `bytes >> log2(granule)` is `bytes`.
        let bytes = match x {
            Expr::Bin(crate::ir::expr::BinOp::Shr, y, k) if matches!(**k, Expr::Const(k) if 1u64.checked_shl(k as u32) == Some(granule)) => {
                (**y).clone()
            }
            _ => Expr::Bin(
                crate::ir::expr::BinOp::Mul,
                Box::new(x.clone()),
                Box::new(Expr::Const(granule)),
            ),
        };
        let start = match &bytes {
            Expr::Bin(crate::ir::expr::BinOp::Sub, _, b) if matches!(**b, Expr::Param(_)) => {
                (**b).clone()
            }
            _ => Expr::Const(0),
        };
        // `X > T` is held as `T < X`: print it the way it was written.
        use crate::ir::Cmp;
        let rel = match (cmp_side_b, cond.cmp) {
            (_, Cmp::Eq) => "==",
            (_, Cmp::Ne) => "!=",
            (true, Cmp::Ltu) => "<",
            (true, Cmp::Geu) => ">=",
            (false, Cmp::Ltu) => ">",
            (false, Cmp::Geu) => "<=",
        };
        let text = format!(
            "if {} {rel} threshold({})",
            x.display(&seq.params),
            prog.granules[set].name
        );
        found = Some(Subject {
            set,
            start,
            size: bytes,
            cover: None,
            text,
        });
    });
    found
}
