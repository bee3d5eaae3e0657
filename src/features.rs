//! CPU features and errata: how code that tests `feature NAME` is
//! selected.
//!
//! A feature is fixed for the life of the machine, so a sequence that
//! tests features is compiled once per combination of the features it
//! tests (a *variant*: the sequence with each test replaced by 0 or 1,
//! its dead arms dropped), each variant through every pass on its own.
//! The function is then a dispatch on the features into the variants.
//! Barrier placement is therefore exactly as minimal, for every
//! combination, as for a spec written for that CPU alone; the cost is
//! code size (2^k bodies for k features, k at most [`MAX_PER_SEQ`]).
//!
//! How the dispatch tests a feature:
//! - at run time, from the feature word the caller passes as the last
//!   argument, `features` (bit i = the i-th `feature` declaration; the
//!   header names the bits): plain style, or a feature without a kernel
//!   capability;
//! - with the kernel's own boot-time patching, in `--style linux` for a
//!   feature declared `= CAPABILITY`: one patched branch per feature
//!   (arm64 `alternative_if CAP` / `alternative_else_nop_endif` around a
//!   `b`, POWER `BEGIN_FTR_SECTION` ... `ALT_FTR_SECTION_END_IFCLR`), so
//!   the unpatched path is a `nop` into the variant without the feature;
//! - not at all when `gen --feature NAME=on|off` fixes it.

use crate::ir::expr::Expr;
pub use crate::ir::feature::{cond_feature, patching_of, test_bit, Patching, CAPABILITY_HELP};
use crate::ir::feature::{feature_form, feature_of};
use crate::ir::{Cmp, Cond, Program, Seq, Stmt};
use crate::isa::style::Style;

/// Features one sequence may test (it is compiled 2^k times).
pub const MAX_PER_SEQ: usize = 4;

/// Keep the orders whose `if feature` arms can run where `value` gives
/// each feature's fixed value (None: tested at run time or patched).
fn scope_orders(seq: &mut Seq, value: impl Fn(usize) -> Option<bool>) {
    if seq.order_guards.iter().all(Vec::is_empty) {
        return;
    }
    let keep: Vec<bool> = seq
        .order_guards
        .iter()
        .map(|g| g.iter().all(|&(i, on)| value(i) != Some(!on)))
        .collect();
    let mut k = keep.iter();
    seq.orders.retain(|_| *k.next().unwrap_or(&true));
    let mut k = keep.iter();
    seq.order_guards.retain(|_| *k.next().unwrap_or(&true));
}

/// What the command line fixes and how the rest is tested.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Selection {
    /// `--feature NAME=on|off`, in the order given.
    pub fixed: Vec<(String, bool)>,
    /// `--feature-suffix`: a sequence specialized by `fixed` gets
    /// `_NAME` (on) or `_noNAME` (off) per fixed feature it tests.
    pub suffix: bool,
}

/// Apply the selection to a checked program: fixed features become
/// constants, features the kernel patches become [`Expr::Feature`], and
/// a sequence left with no run-time test loses its feature word.
/// Idempotent, so every entry point (header, code, verify) may call it.
pub fn resolve<'p>(
    prog: &'p Program,
    sel: &Selection,
    style: Style,
) -> std::borrow::Cow<'p, Program> {
    if prog.features.is_empty() {
        return std::borrow::Cow::Borrowed(prog);
    }
    let mut fixed: Vec<Option<bool>> = vec![None; prog.features.len()];
    // A name the spec does not declare may belong to another spec of the
    // same `gen` run; the command line checks that some spec has it.
    for (name, on) in &sel.fixed {
        if let Some(i) = prog.features.iter().position(|f| &f.name == name) {
            fixed[i] = Some(*on);
        }
    }
    let patched = |i: usize| style == Style::Linux && prog.features[i].cap.is_some();
    // Cloned at the first sequence that changes: a resolved program
    // resolves to itself without a copy.
    let mut out: Option<Program> = None;
    for (si, seq) in prog.seqs.iter().enumerate() {
        let Some(w) = seq.feature_word else {
            continue;
        };
        let needs = used_features(seq)
            .iter()
            .any(|&(i, is_patched)| fixed[i].is_some() || (!is_patched && patched(i)))
            || !uses_word(seq, w);
        if !needs {
            continue;
        }
        let out = out.get_or_insert_with(|| prog.clone());
        let devices = &out.devices;
        let seq = &mut out.seqs[si];
        let used = used_features(seq);
        let mut suffix = String::new();
        for &(i, _) in &used {
            if let (true, Some(on)) = (sel.suffix, fixed[i]) {
                suffix.push('_');
                if !on {
                    suffix.push_str("no");
                }
                suffix.push_str(&prog.features[i].name);
            }
        }
        let word = Some(w);
        crate::ir::map_exprs(&mut seq.body, &mut |e| {
            e.subst(&|x| {
                let i = feature_of(x, word)?;
                match fixed[i] {
                    Some(on) => Some(Expr::Const(u64::from(on))),
                    None if patched(i) => Some(Expr::Feature(i)),
                    None => None,
                }
            })
        });
        seq.body = fold_ifs(std::mem::take(&mut seq.body));
        if !uses_word(seq, w) {
            // Last parameter: nothing after it shifts.
            seq.params.truncate(w);
            seq.ptrs.truncate(w);
            seq.private.truncate(w);
            seq.ctypes.truncate(w);
            seq.feature_word = None;
        }
        seq.name.push_str(&suffix);
        scope_orders(seq, |i| fixed[i]);
        seq.edges = crate::ir::order::required_edges(devices, &seq.body, &seq.orders);
    }
    out.map_or(std::borrow::Cow::Borrowed(prog), std::borrow::Cow::Owned)
}

/// Features whose capability belongs to another architecture are absent
/// on `target` (an arm64 erratum never affects a POWER CPU, a POWER MMU
/// feature bit is never set on arm64): every test of one becomes 0 and
/// its arm is dropped, so one spec can name the capabilities of several
/// kernels and use another architecture's instructions in their arms.
/// That holds for the kernel-patched test and for the run-time bit of the
/// plain style's feature word alike; the word stays in the prototype (the
/// header is shared by every target), and on `target` the bit is ignored.
pub fn for_target(prog: &Program, target: crate::isa::Target) -> std::borrow::Cow<'_, Program> {
    let foreign = |i: usize| {
        let Some(p) = prog.features[i].cap.as_deref().and_then(patching_of) else {
            return false;
        };
        let native = target.backend().patches(p);
        !native
    };
    // A spec without features has nothing to patch (and walking every
    // sequence of a large one to find that out is not free).
    if prog.features.is_empty() {
        return std::borrow::Cow::Borrowed(prog);
    }
    let mut out: Option<Program> = None;
    for (si, seq) in prog.seqs.iter().enumerate() {
        if !used_features(seq).iter().any(|&(i, _)| foreign(i)) {
            continue;
        }
        let out = out.get_or_insert_with(|| prog.clone());
        let devices = &out.devices;
        let seq = &mut out.seqs[si];
        let word = seq.feature_word;
        crate::ir::map_exprs(&mut seq.body, &mut |e| {
            e.subst(&|x| match feature_of(x, word) {
                Some(i) if foreign(i) => Some(Expr::Const(0)),
                _ => None,
            })
        });
        seq.body = fold_ifs(std::mem::take(&mut seq.body));
        scope_orders(seq, |i| foreign(i).then_some(false));
        seq.edges = crate::ir::order::required_edges(devices, &seq.body, &seq.orders);
    }
    out.map_or(std::borrow::Cow::Borrowed(prog), std::borrow::Cow::Owned)
}

fn visit(e: &Expr, word: Option<usize>, out: &mut Vec<(usize, bool)>) {
    if let Some(f) = feature_form(e, word) {
        out.push(f);
        return;
    }
    for c in e.children() {
        visit(c, word, out);
    }
}

/// Features the sequence still tests, sorted, each with whether the
/// kernel patches the test (else it reads the feature word).
pub fn used_features(seq: &Seq) -> Vec<(usize, bool)> {
    let mut out = Vec::new();
    crate::ir::each_expr(&seq.body, &mut |e| visit(e, seq.feature_word, &mut out));
    out.sort_unstable();
    out.dedup_by_key(|f| f.0);
    out
}

fn uses_word(seq: &Seq, w: usize) -> bool {
    let mut found = false;
    fn param(e: &Expr, w: usize, found: &mut bool) {
        if *e == Expr::Param(w) {
            *found = true;
        }
        for c in e.children() {
            param(c, w, found);
        }
    }
    crate::ir::each_expr(&seq.body, &mut |e| param(e, w, &mut found));
    found
}

/// Drop the dead arm of every `if` whose condition is now constant.
pub fn fold_ifs(body: Vec<Stmt>) -> Vec<Stmt> {
    let mut out = Vec::with_capacity(body.len());
    for s in body {
        match s {
            Stmt::If {
                cond, then_, else_, ..
            } if cond.a.as_const().is_some() && cond.b.as_const().is_some() => {
                let holds = cond.cmp.holds(
                    cond.a.as_const().unwrap_or(0),
                    cond.b.as_const().unwrap_or(0),
                );
                out.extend(fold_ifs(if holds { then_ } else { else_ }));
            }
            other => out.push(other.map_blocks(&mut fold_ifs)),
        }
    }
    out
}

/// The sequence with each feature of `fixed` at its value.
fn specialize(prog: &Program, seq: &Seq, fixed: &[(usize, bool)]) -> Seq {
    let mut v = seq.clone();
    v.body = variant_body(seq, fixed);
    v.edges = crate::ir::order::required_edges(&prog.devices, &v.body, &v.orders);
    v
}

/// The sequence's variants, one per combination of the features it
/// tests, each optimized by `optimize`, joined under a dispatch on the
/// features. A sequence that tests none is optimized as it is.
pub fn split_optimize(
    prog: &Program,
    seq: &mut Seq,
    optimize: &dyn Fn(&mut Seq) -> Result<(), crate::spec::diag::Diag>,
) -> Result<(), crate::spec::diag::Diag> {
    if prog.features.is_empty() {
        return optimize(seq);
    }
    let forms = used_features(seq);
    let used: Vec<usize> = forms.iter().map(|f| f.0).collect();
    if used.is_empty() {
        return optimize(seq);
    }
    if used.len() > MAX_PER_SEQ {
        return Err(crate::spec::diag::Diag::new(
            seq.span,
            format!(
                "`{}` tests {} features; a sequence may test at most {MAX_PER_SEQ}",
                seq.name,
                used.len()
            ),
        )
        .label("compiled once per combination of its features")
        .help("split the sequence, or fix some with `--feature NAME=on|off`"));
    }
    let mut variants = Vec::with_capacity(1 << used.len());
    let mut notes = Vec::new();
    // Each variant's required orderings, one after the other; barriers
    // name theirs by index, so a variant's are shifted past the earlier
    // variants'.
    let mut edges = Vec::new();
    let mut edge_variants = Vec::new();
    for combo in 0..(1u32 << used.len()) {
        let fixed: Vec<(usize, bool)> = used
            .iter()
            .enumerate()
            .map(|(j, &i)| (i, combo >> j & 1 == 1))
            .collect();
        let mut v = specialize(prog, seq, &fixed);
        v.notes.clear();
        optimize(&mut v)?;
        let shift = edges.len();
        edge_variants.extend(std::iter::repeat_n(fixed, v.edges.len()));
        edges.append(&mut v.edges);
        crate::ir::walk_mut(&mut v.body, &mut |s| {
            if let Stmt::Barrier { covers, .. } = s {
                covers.iter_mut().for_each(|c| *c += shift);
            }
        });
        let label: Vec<String> = used
            .iter()
            .enumerate()
            .map(|(j, &i)| {
                let on = if combo >> j & 1 == 1 { "on" } else { "off" };
                format!("{}={on}", prog.features[i].name)
            })
            .collect();
        notes.push(format!(
            "features: variant {} ({} statements)",
            label.join(" "),
            v.body.len()
        ));
        notes.extend(
            v.notes
                .iter()
                .map(|n| format!("  [{}] {n}", label.join(" "))),
        );
        variants.push(v.body);
    }
    seq.body = dispatch(seq.feature_word, &forms, variants);
    seq.notes.extend(notes);
    seq.edges = edges;
    seq.edge_variants = edge_variants;
    Ok(())
}

/// The body of the variant where each feature of `fixed` has its value:
/// the dispatch's tests replaced by them and the arms not taken dropped
/// (what one variant of a split sequence runs).
pub fn variant_body(seq: &Seq, fixed: &[(usize, bool)]) -> Vec<Stmt> {
    let word = seq.feature_word;
    let mut body = seq.body.clone();
    crate::ir::map_exprs(&mut body, &mut |e| {
        e.subst(&|x| {
            let i = feature_of(x, word)?;
            let &(_, on) = fixed.iter().find(|(f, _)| *f == i)?;
            Some(Expr::Const(u64::from(on)))
        })
    });
    fold_ifs(body)
}

/// `if feature used[0] { .. } else { .. }` nested over every feature,
/// the variant of combination c at the leaf c.
fn dispatch(word: Option<usize>, used: &[(usize, bool)], variants: Vec<Vec<Stmt>>) -> Vec<Stmt> {
    fn go(
        word: Option<usize>,
        used: &[(usize, bool)],
        j: usize,
        combo: u32,
        variants: &mut [Option<Vec<Stmt>>],
    ) -> Vec<Stmt> {
        if j == used.len() {
            return variants[combo as usize].take().unwrap_or_default();
        }
        let test = match (used[j], word) {
            ((i, false), Some(w)) => test_bit(w, i),
            ((i, _), _) => Expr::Feature(i),
        };
        let on = go(word, used, j + 1, combo | 1 << j, variants);
        let off = go(word, used, j + 1, combo, variants);
        // A feature that only matters when another is off (`if feature a
        // {..} else if feature b {..}`) need not be tested where it does
        // not change the code.
        if format!("{on:?}") == format!("{off:?}") {
            return on;
        }
        vec![Stmt::If {
            rare: false,
            span: None,
            why: None,
            cond: Cond {
                cmp: Cmp::Ne,
                a: test,
                b: Expr::Const(0),
            },
            then_: on,
            else_: off,
        }]
    }
    let mut slots: Vec<Option<Vec<Stmt>>> = variants.into_iter().map(Some).collect();
    go(word, used, 0, 0, &mut slots)
}
