//! The shootdown tests, for herd7's VMSA model (`-variant vmsa`): P0 is
//! the caller's page-table write (the page under test made invalid), the
//! sequence as it ran, then a flag store after the return; P1 reads the
//! flag, `DSB SY; ISB`, and loads from the page. Seeing the flag and not
//! faulting means P1 translated through the old entry after the sequence
//! returned: forbidden by `order stores before invalidates` (the write is
//! visible to the walkers before the TLBI) together with `order
//! invalidates before return` (the TLBI is complete before the flag).
//! One test per page the sequence invalidates (the first and last page of
//! each range operation), each TLBI of another page kept as a TLBI of a
//! page the test does not check.

use super::thread::{render_p0, Ctx, Regs, Step, Steps};
use super::{herd_name, render, Test};
use crate::ir::order::edge_names;
use crate::ir::{OpId, Seq};
use crate::isa::litmus::{Dialect, Side, Tlbi};
use std::cell::RefCell;
use std::collections::BTreeMap;

/// VMSA tests for the TLB edges `tlb` of `seq`; `Err` says why there are
/// none (the edges are then reported as skipped with it).
pub(super) fn tests(
    d: &dyn Dialect,
    seq: &Seq,
    s: &Steps,
    stem: &str,
    tlb: &[usize],
) -> Result<Vec<Test>, String> {
    // Only the TLBIs this run executed: an edge of an arm not taken has
    // no test here (the caller reports it).
    let ran = |id: OpId| {
        s.steps
            .iter()
            .any(|(st, op)| *op == Some(id) && matches!(st, Step::Invalidate { .. }))
    };
    let entry: Vec<usize> = tlb
        .iter()
        .copied()
        .filter(|&i| seq.edges[i].from == OpId::ENTRY && ran(seq.edges[i].to))
        .collect();
    let exit: Vec<usize> = tlb
        .iter()
        .copied()
        .filter(|&i| seq.edges[i].to == OpId::EXIT && ran(seq.edges[i].from))
        .collect();
    if !s
        .steps
        .iter()
        .any(|(st, _)| matches!(st, Step::Invalidate { .. }))
    {
        return Err("not reached with these arguments: no TLB invalidation ran".into());
    }
    if entry.is_empty() || exit.is_empty() {
        return Err("a VMSA test needs `order stores before invalidates` and `order invalidates before return`: without both, nothing says when another CPU must stop using the old entry".into());
    }
    let mut ops = Vec::new();
    for (step, _) in &s.steps {
        if let Step::Invalidate { text, operands } = step {
            ops.push(d.tlbi(text, operands).map_err(|e| e.to_string())?);
        }
    }
    if ops.is_empty() {
        return Err("not reached with these arguments: no TLB invalidation ran".into());
    }
    let mut pages: Vec<Option<u64>> = Vec::new();
    for op in &ops {
        if let Tlbi::Pages { first, count, .. } = op {
            for p in [*first, first + count - 1] {
                if !pages.contains(&Some(p)) {
                    pages.push(Some(p));
                }
            }
        }
    }
    // A page no by-address TLBI names, which only an all-pages TLBI
    // invalidates: REPEAT_TLBI's `tlbi vale1is, xzr` names page 0, so the
    // ASID-wide flush must be checked on some other page.
    if ops.iter().any(|o| matches!(o, Tlbi::All { .. })) {
        pages.push(None);
    }
    let mut edges: Vec<usize> = entry.iter().chain(&exit).copied().collect();
    edges.sort_unstable();
    let mut out = Vec::new();
    for (n, page) in pages.iter().enumerate() {
        out.push(page_test(d, seq, s, stem, n, *page, &edges)?);
    }
    Ok(out)
}

fn page_test(
    d: &dyn Dialect,
    seq: &Seq,
    s: &Steps,
    stem: &str,
    n: usize,
    page: Option<u64>,
    edges: &[usize],
) -> Result<Test, String> {
    let mut init = Vec::new();
    let what = match page {
        Some(p) => format!("page {:#x} (VA {:#x})", p, p << 12),
        None => "a page only the all-pages TLBIs invalidate".to_string(),
    };
    let mut notes = vec![format!(
        "{} on aarch64: the caller's page-table write for {what} (location x), the sequence as it ran, then a flag; forbidden: another CPU sees the flag and still translates x through the old entry. Run with herd7 -variant vmsa",
        seq.name
    )];
    let mut regs = Regs::new(d);
    let pte_val = regs.take()?;
    let pte_at = regs.take()?;
    let x = regs.take()?;
    init.push(format!("0:{pte_val}=(oa:PA(x),valid:0)"));
    init.push(format!("0:{pte_at}=PTE(x)"));
    init.push(format!("0:{x}=x"));
    let y: RefCell<Option<&'static str>> = RefCell::new(None);
    let tmp: RefCell<Option<&'static str>> = RefCell::new(None);
    let extra: RefCell<Vec<String>> = RefCell::new(Vec::new());
    let note = |n: String| {
        let mut e = extra.borrow_mut();
        if !e.contains(&n) {
            e.push(n);
        }
    };
    let f = |text: &str,
             operands: &[u64],
             regs: &mut Regs,
             init: &mut Vec<String>|
     -> Result<Vec<String>, String> {
        let t = match *tmp.borrow() {
            Some(t) => t,
            None => regs.take()?,
        };
        *tmp.borrow_mut() = Some(t);
        match d.tlbi(text, operands).map_err(|e| e.to_string())? {
            Tlbi::Pages { op, first, count } => {
                let mine = page.is_some_and(|p| (first..first + count).contains(&p));
                let reg = if mine {
                    x
                } else {
                    let have = *y.borrow();
                    match have {
                        Some(r) => r,
                        None => {
                            let r = regs.take()?;
                            init.push(format!("0:{r}=y"));
                            *y.borrow_mut() = Some(r);
                            r
                        }
                    }
                };
                if count > 1 {
                    note(format!(
                        "a range TLBI is written as `TLBI {op}` of the page it covers that the test checks (or of y): herd7 7.57 has no range TLBI; the architecture defines one as invalidating each page in its range"
                    ));
                }
                Ok(d.tlbi_insns(&op, Some(reg), t))
            }
            Tlbi::All { op, note: n } => {
                if let Some(n) = n {
                    note(n);
                }
                Ok(d.tlbi_insns(&op, None, t))
            }
        }
    };
    let flag_step = s
        .steps
        .iter()
        .position(|(_, op)| *op == Some(OpId::EXIT))
        .into_iter()
        .collect();
    let ctx = Ctx {
        d,
        from: Side::Normal,
        to: Side::Normal,
        watch: Vec::new(),
        keep: flag_step,
        tlbi: Some(&f),
    };
    let mut addr = BTreeMap::new();
    let mut p0 = d.store_reg(pte_val, pte_at);
    let body = render_p0(&ctx, s, &mut regs, &mut addr, &mut init, &mut notes)?;
    p0.extend(body.insns);
    drop(ctx);
    notes.extend(extra.into_inner());
    let flag = flag_value(s)?;
    let (p1, rf) = observer(d, &mut init)?;
    let name = herd_name(&format!("{stem}+page{n}"));
    let exists = format!("1:{rf}={flag} /\\ ~fault(P1:L0,x)");
    Ok(Test {
        name: name.clone(),
        variant: Some("vmsa"),
        edges: edges.to_vec(),
        checks: format!(
            "{}: after the return, no CPU translates {what} through the entry the caller's write replaced",
            edge_names(edges)
        ),
        text: render(d, &name, &notes, &init, &[p0, p1], &exists),
    })
}

/// The value of the flag: the store to `done` render_p0 wrote last.
fn flag_value(s: &Steps) -> Result<u64, String> {
    let done = s
        .locs
        .iter()
        .position(|l| l.name == "done")
        .ok_or("no flag")?;
    s.stores_at(done)
        .last()
        .map(|(_, v)| v)
        .ok_or_else(|| "no flag store".into())
}

/// P1, the other CPU: it reads the flag (into the register returned),
/// then `DSB SY; ISB`, then loads from x at `L0` (where herd7 sees a
/// fault or not).
fn observer(
    d: &dyn Dialect,
    init: &mut Vec<String>,
) -> Result<(Vec<String>, &'static str), String> {
    let mut r1 = Regs::new(d);
    let a_done = r1.take()?;
    let a_x = r1.take()?;
    let rf = r1.take()?;
    let rd = r1.take()?;
    init.push(format!("1:{a_done}=done"));
    init.push(format!("1:{a_x}=x"));
    let mut p1 = d.load(rf, a_done);
    p1.extend(d.full_fence());
    p1.extend(d.context_sync());
    p1.push("L0:".into());
    p1.extend(d.load(rd, a_x));
    Ok((p1, rf))
}
