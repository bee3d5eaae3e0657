//! Immediate fields of CPU invalidation instructions.
//!
//! POWER `tlbie RB,RS,RIC,PRS,R` carries RIC, PRS and R in the
//! instruction word, not in registers, so they are constants of the spec
//! statement and part of what the instruction *is*: `tlbie` with RIC=2
//! (flush everything of a PID) and with RIC=0 (one page) are different
//! operations to the cover pass (which granule a statement serves) and to
//! the ordering model. Checking folds them into the IR name
//! (`tlbie ric=2 prs=1 r=1`), as AArch64's `tlbi vale1is` carries its
//! operation in the name; what stays in `operands` is what lives in
//! registers.

use super::diag::{Diag, Span};

/// What [`fold`] needs of an operand: its value if it is a constant (the
/// IR's expressions implement it).
pub trait Operand {
    fn as_const(&self) -> Option<u64>;
}

use super::syntax::{imm_form as form, ImmForm};

/// The IR name of `mnemonic` with immediate `values` (already checked).
pub fn name_with(mnemonic: &str, values: &[u64]) -> String {
    match form(mnemonic) {
        Some(ImmForm { fields, .. }) if !fields.is_empty() => {
            let parts: Vec<String> = fields
                .iter()
                .zip(values)
                .map(|((f, _), v)| format!("{f}={v}"))
                .collect();
            format!("{mnemonic} {}", parts.join(" "))
        }
        _ => mnemonic.to_string(),
    }
}

/// The immediate fields of an IR name: `tlbie ric=2 prs=1 r=1` ->
/// ("tlbie", [2, 1, 1]); a name without fields -> (name, []).
pub fn split(name: &str) -> (&str, Vec<u64>) {
    let mut words = name.split_whitespace();
    let m = words.next().unwrap_or("");
    if form(m).is_none() {
        return (name, Vec::new());
    }
    let vals = words
        .filter_map(|w| w.split_once('=').and_then(|(_, v)| v.parse().ok()))
        .collect();
    (m, vals)
}

/// Check a statement's immediates and fold them into its name: returns
/// the IR name and the register operands. `spans[i]` is operand i's span.
pub fn fold<E: Operand>(
    mnemonic: &str,
    operands: Vec<E>,
    spans: &[Span],
    stmt: Span,
) -> Result<(String, Vec<E>), Diag> {
    let Some(&ImmForm {
        regs: nregs,
        fields,
        ..
    }) = form(mnemonic)
    else {
        return Ok((mnemonic.to_string(), operands));
    };
    let want = nregs + fields.len();
    if operands.len() != want {
        let names: Vec<&str> = fields.iter().map(|f| f.0).collect();
        return Err(Diag::new(
            stmt,
            format!(
                "`{mnemonic}` takes {want} operands ({nregs} register value(s), then {}), got {}",
                names.join(", "),
                operands.len()
            ),
        )
        .label("wrong number of operands"));
    }
    let mut values = Vec::new();
    for (i, (f, max)) in fields.iter().enumerate() {
        let at = nregs + i;
        let span = spans.get(at).copied().unwrap_or(stmt);
        let Some(v) = operands[at].as_const() else {
            return Err(Diag::new(
                span,
                format!(
                    "`{mnemonic}`'s {} is a field of the instruction: it must be a constant",
                    f.to_uppercase()
                ),
            )
            .label("not a constant"));
        };
        if v > *max {
            return Err(Diag::new(
                span,
                format!("`{mnemonic}`'s {} is 0..={max}, got {v}", f.to_uppercase()),
            )
            .label("out of range"));
        }
        values.push(v);
    }
    let mut regs = operands;
    regs.truncate(nregs);
    Ok((name_with(mnemonic, &values), regs))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::Expr;

    #[test]
    fn names_round_trip() {
        let n = name_with("tlbie", &[2, 1, 1]);
        assert_eq!(n, "tlbie ric=2 prs=1 r=1");
        assert_eq!(split(&n), ("tlbie", vec![2, 1, 1]));
        assert_eq!(split("tlbi vale1is"), ("tlbi vale1is", vec![]));
        assert_eq!(name_with("slbia", &[3]), "slbia ih=3");
    }

    #[test]
    fn rejects_run_time_and_out_of_range_fields() {
        let s = Span::default();
        let ops = |ric: Expr| {
            vec![
                Expr::Const(0),
                Expr::Const(0),
                ric,
                Expr::Const(1),
                Expr::Const(1),
            ]
        };
        assert!(fold("tlbie", ops(Expr::Const(4)), &[], s).is_err());
        assert!(fold("tlbie", ops(Expr::Param(0)), &[], s).is_err());
        let (n, regs) = fold("tlbie", ops(Expr::Const(1)), &[], s).unwrap();
        assert_eq!((n.as_str(), regs.len()), ("tlbie ric=1 prs=1 r=1", 2));
        assert!(fold("tlbiel", vec![Expr::Const(0)], &[], s).is_err());
    }
}
