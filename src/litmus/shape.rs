//! One test per ordered pair of accesses a required ordering covers: the
//! sequence's thread P0 as it ran, and an observer P1 that tries to see
//! the two accesses the other way round, with the strongest fence between
//! its own two accesses. If P0 keeps `a` before `b`, the outcome is
//! forbidden; herd7 answering `Never` proves P0's barriers enough under
//! the architecture's model.
//!
//! | `a` -> `b`     | P1                      | forbidden                          |
//! |----------------|-------------------------|------------------------------------|
//! | store -> store | load b; fence; load a   | P1 sees `b`, not `a`  (MP)         |
//! | store -> load  | store b; fence; load a  | `b` misses P1's store, P1 misses `a` (SB) |
//! | load -> store  | load b; fence; store a  | P1 sees `b`, `a` read P1's store (LB) |
//! | load -> load   | store a; fence; store b | `b` read P1's store, `a` did not   |

use super::thread::{render_p0, Ctx, Regs, Step, Steps};
use super::{herd_name, is_boundary, render, Test};
use crate::codegen::Compiled;
use crate::ir::order::{Class, Edge};
use crate::ir::OpId;
use crate::isa::litmus::{Dialect, Side};
use std::collections::BTreeMap;

/// Values the observer stores: above every store value of P0.
const THEIRS: u64 = 900;

fn side(c: Class) -> Option<Side> {
    match c {
        Class::NormalStore | Class::NormalLoad => Some(Side::Normal),
        Class::DevStore | Class::DevLoad => Some(Side::Device),
        _ => None,
    }
}

fn is_store(c: Class) -> bool {
    matches!(c, Class::NormalStore | Class::DevStore)
}

/// Steps of operation `id` (the caller's store for ENTRY, the store to
/// `done` for EXIT).
fn steps_of(s: &Steps, id: OpId) -> Vec<usize> {
    s.steps
        .iter()
        .enumerate()
        .filter(|(_, (st, op))| {
            *op == Some(id) && matches!(st, Step::Store { .. } | Step::Load { .. })
        })
        .map(|(k, _)| k)
        .collect()
}

/// The pairs to check: for each `b`, the nearest `a` before it, and for
/// each `a`, the nearest `b` after it: fewest barriers between, so the
/// strictest. A barrier between a nearest pair also lies between every
/// farther one.
fn pairs(a: &[usize], b: &[usize]) -> Vec<(usize, usize)> {
    let mut out = std::collections::BTreeSet::new();
    for &y in b {
        if let Some(&x) = a.iter().rev().find(|&&x| x < y) {
            out.insert((x, y));
        }
    }
    for &x in a {
        if let Some(&y) = b.iter().find(|&&y| y > x) {
            out.insert((x, y));
        }
    }
    out.into_iter().collect()
}

pub(super) fn edge_tests(
    d: &dyn Dialect,
    c: &Compiled,
    seq: &str,
    e: &Edge,
    i: usize,
    s: &Steps,
    stem: &str,
) -> Result<Vec<Test>, String> {
    let (Some(fs), Some(ts)) = (side(e.from_class), side(e.to_class)) else {
        return Err(format!(
            "{:?} before {:?}: not an order between memory accesses (invalidations are checked by the VMSA tests, on aarch64 only)",
            e.from_class, e.to_class
        ));
    };
    if fs == Side::Device && ts == Side::Device {
        return Err(
            "both ends are device registers: their order comes from the device memory type (Arm Device-nGnRE, POWER caching-inhibited, x86 UC), which herd7's models do not have"
                .into(),
        );
    }
    let a = steps_of(s, e.from);
    let b = steps_of(s, e.to);
    let ps = pairs(&a, &b);
    if ps.is_empty() {
        return Err(
            "not reached with these arguments: no access of one end, or none after the other"
                .into(),
        );
    }
    let cx = EdgeCx {
        d,
        c,
        seq,
        e,
        i,
        s,
        stem,
        fs,
        ts,
    };
    ps.iter()
        .enumerate()
        .map(|(n, &(x, y))| pair_test(&cx, n, x, y))
        .collect()
}

/// One required ordering being exported: what every pair test of it
/// shares.
struct EdgeCx<'a> {
    d: &'a dyn Dialect,
    c: &'a Compiled,
    seq: &'a str,
    e: &'a Edge,
    /// Its index in the sequence's orderings (`e<i>`).
    i: usize,
    s: &'a Steps,
    stem: &'a str,
    /// The kinds of access at its two ends.
    fs: Side,
    ts: Side,
}

/// The test of pair `n`: step `x` (the earlier end) and step `y`.
fn pair_test(cx: &EdgeCx<'_>, n: usize, x: usize, y: usize) -> Result<Test, String> {
    let EdgeCx {
        d,
        c,
        seq,
        e,
        i,
        s,
        stem,
        fs,
        ts,
    } = *cx;
    let la = s.loc_of(x).ok_or("no location")?;
    let lb = s.loc_of(y).ok_or("no location")?;
    let (sa, sb) = (is_store(e.from_class), is_store(e.to_class));
    if la == lb {
        return Err(
            "both ends are the same location: coherence orders them on every architecture".into(),
        );
    }
    // The observer's store must be the only other writer of a location P0
    // loads: else "P0 read something else" is not "P0 read too early".
    for (load, l) in [(!sa, la), (!sb, lb)] {
        if load && s.stores_at(l).next().is_some() {
            return Err(format!(
                "P0 also stores `{}`, which the ordered load reads: no observer outcome tells the two apart",
                s.locs[l].name
            ));
        }
    }
    let mut init = Vec::new();
    let mut notes = vec![format!(
        "{seq} on {}: required ordering e{i} (spec line {}): {} before {}",
        c.target,
        c.opt.line_of(e.span),
        describe(s, x, e.from),
        describe(s, y, e.to)
    )];
    let ctx = Ctx {
        d,
        from: fs,
        to: ts,
        watch: [(!sa).then_some(x), (!sb).then_some(y)]
            .into_iter()
            .flatten()
            .collect(),
        keep: vec![x, y],
        tlbi: None,
    };
    let mut regs0 = Regs::new(d);
    let mut addr0 = BTreeMap::new();
    let p0 = render_p0(&ctx, s, &mut regs0, &mut addr0, &mut init, &mut notes)?;

    let (p1, exists, checks) = observer(d, s, &p0.watched, (x, la, sa), (y, lb, sb), &mut init)?;
    let name = herd_name(&format!("{stem}+e{i}+{n}"));
    let text = render(d, &name, &notes, &init, &[p0.insns, p1], &exists);
    Ok(Test {
        name,
        variant: None,
        edges: vec![i],
        checks: format!(
            "e{i} ({} before {}): forbidden is {checks}",
            describe(s, x, e.from),
            describe(s, y, e.to)
        ),
        text,
    })
}

/// The observer thread (P1) of the test of one ordered pair and the
/// outcome the ordering forbids, by the kinds of its two ends: `(step,
/// location, is a store)` of the earlier end and of the later one. P0's
/// loads are named by `watched`; `init` gains P1's address registers.
fn observer(
    d: &dyn Dialect,
    s: &Steps,
    watched: &BTreeMap<usize, &'static str>,
    (x, la, sa): (usize, usize, bool),
    (y, lb, sb): (usize, usize, bool),
    init: &mut Vec<String>,
) -> Result<(Vec<String>, String, &'static str), String> {
    let mut regs1 = Regs::new(d);
    let mut p1 = Vec::new();
    let at = |loc: usize, regs: &mut Regs, init: &mut Vec<String>| -> Result<String, String> {
        if !d.addr_in_reg() {
            return Ok(s.locs[loc].name.clone());
        }
        let r = regs.take()?;
        init.push(format!("1:{r}={}", s.locs[loc].name));
        Ok(r.to_string())
    };
    let ab = at(lb, &mut regs1, init)?;
    let aa = at(la, &mut regs1, init)?;
    let tmp = regs1.take()?;
    let r1 = regs1.take()?;
    let r2 = regs1.take()?;
    // Values at `l` that mean "this store or a later one" / "before it".
    let from_on = |l: usize, k: usize| -> Vec<u64> {
        s.stores_at(l)
            .filter(|&(j, _)| j >= k)
            .map(|(_, v)| v)
            .collect()
    };
    let before = |l: usize, k: usize| -> Vec<u64> {
        std::iter::once(0)
            .chain(s.stores_at(l).filter(|&(j, _)| j < k).map(|(_, v)| v))
            .collect()
    };
    let any = |reg: String, vals: Vec<u64>| -> String {
        let v: Vec<String> = vals.iter().map(|v| format!("{reg}={v}")).collect();
        if v.len() == 1 {
            v[0].clone()
        } else {
            format!("({})", v.join(" \\/ "))
        }
    };
    let r0 = |k: usize| format!("0:{}", watched[&k]);
    let (exists, checks) = match (sa, sb) {
        (true, true) => {
            p1.extend(d.load(r1, &ab));
            p1.extend(d.full_fence());
            p1.extend(d.load(r2, &aa));
            (
                format!("{} /\\ {}", any(format!("1:{r1}"), from_on(lb, y)), any(format!("1:{r2}"), before(la, x))),
                "an observer that sees the second store and then, after a full fence, misses the first",
            )
        }
        (true, false) => {
            p1.extend(d.store(THEIRS, tmp, &ab));
            p1.extend(d.full_fence());
            p1.extend(d.load(r2, &aa));
            (
                format!("{}=0 /\\ {}", r0(y), any(format!("1:{r2}"), before(la, x))),
                "P0's load misses an observer's store while the observer, after a full fence, misses P0's earlier store",
            )
        }
        (false, true) => {
            p1.extend(d.load(r1, &ab));
            p1.extend(d.full_fence());
            p1.extend(d.store(THEIRS, tmp, &aa));
            (
                format!("{} /\\ {}={THEIRS}", any(format!("1:{r1}"), from_on(lb, y)), r0(x)),
                "an observer sees P0's store and then, after a full fence, writes the location P0 read earlier: P0's load may not read that write",
            )
        }
        (false, false) => {
            p1.extend(d.store(THEIRS, tmp, &aa));
            p1.extend(d.full_fence());
            p1.extend(d.store(THEIRS + 1, tmp, &ab));
            (
                format!("{}={} /\\ {}=0", r0(y), THEIRS + 1, r0(x)),
                "P0's second load sees an observer's second store while its first load misses the observer's first",
            )
        }
    };
    Ok((p1, exists, checks))
}

fn describe(s: &Steps, k: usize, op: OpId) -> String {
    let what = match s.steps[k].0 {
        Step::Store { .. } => "store to",
        _ => "load of",
    };
    let loc = s.loc_of(k).map_or("?", |l| s.locs[l].name.as_str());
    if is_boundary(op) {
        if op == OpId::ENTRY {
            "the caller's store (`caller`)".to_string()
        } else {
            "the return (`done`)".to_string()
        }
    } else {
        format!("{what} `{loc}`")
    }
}
