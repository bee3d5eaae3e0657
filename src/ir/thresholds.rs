//! Thresholds as the spec and the header name them: one per sequence and
//! granule set, whether an `auto` cover or `threshold(SET)` reads it.

use super::expr::{Binding, Expr};
use super::Seq;

/// The name of a threshold: per sequence and granule set, the same for an
/// `auto` cover and for `threshold(SET)`.
pub fn threshold_name(seq: &str, set: &str) -> String {
    format!("{seq}_{set}_THRESHOLD").to_ascii_uppercase()
}

/// The granule sets a sequence reads with `threshold(SET)`.
pub fn expr_threshold_sets(seq: &Seq) -> Vec<usize> {
    fn collect(e: &Expr, out: &mut Vec<usize>) {
        if let Expr::Binding(Binding::Threshold(s)) = e {
            if !out.contains(s) {
                out.push(*s);
            }
        }
        e.children().into_iter().for_each(|c| collect(c, out));
    }
    let mut sets = Vec::new();
    let mut body = seq.body.clone();
    crate::ir::map_exprs(&mut body, &mut |e| {
        if e.uses_binding() {
            collect(e, &mut sets);
        }
        e.clone()
    });
    sets
}
