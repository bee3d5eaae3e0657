//! How a `cover` body's statements map to granules, and the bodies that
//! cannot be mapped unambiguously (README, "How a cover body maps to
//! granules").
//!
//! The cover pass copies the body once per operation it may issue. In the
//! copy for granule E, a write of a register (or a `tlbi` of a `via`
//! instruction) that another granule uses as its address or launch and E
//! does not is dropped; everything else is kept. So two granules that go
//! through the same launch register keep the same writes of it, and the
//! body must tell them apart by value: one write of that register per
//! copy, whose value differs between them (`$bits` with different
//! settings, or `$size`). Anything else would run every write of that
//! register in each branch (a kill-one and a kill-all both, per page), or
//! issue the same command for two operations (a kill-all that is a
//! kill-one of address 0): both are rejected here, naming the granules.

use super::expr::{Binding, Expr};
use super::{Device, GSize, Granule, GranuleSet, RegId, Stmt, Via};
use crate::spec::diag::{Diag, Span};

/// What launches an operation of a granule.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Channel {
    Reg(RegId),
    Insn(String),
}

/// The launch channels of a granule: its `via`, else the registers of its
/// `set` fields, else its address register.
fn launches(e: &Granule) -> Vec<Channel> {
    match &e.via {
        Some(Via::Reg(r)) => vec![Channel::Reg(*r)],
        Some(Via::Insn(n)) => vec![Channel::Insn(n.clone())],
        // Queue sets are chosen with `threshold(SET)`, never by a cover.
        Some(Via::Record(_)) => Vec::new(),
        None if !e.set_regs.is_empty() => e.set_regs.iter().map(|&r| Channel::Reg(r)).collect(),
        None => e.addr.map(Channel::Reg).into_iter().collect(),
    }
}

/// `64K`, `size granule`, `all`, `range`: how the spec names a granule.
pub fn granule_name(e: &Granule) -> String {
    match &e.size {
        GSize::Bytes(b) => {
            let units = [
                (1u64 << 40, "T"),
                (1 << 30, "G"),
                (1 << 20, "M"),
                (1 << 10, "K"),
            ];
            units
                .iter()
                .find(|(u, _)| b % u == 0 && *b >= *u)
                .map_or_else(|| format!("{b:#x}"), |(u, s)| format!("{}{s}", b / u))
        }
        GSize::Param(p) => format!("size {p}"),
        GSize::All => "all".into(),
        GSize::Range => "range".into(),
    }
}

fn uses(e: &Expr, f: &dyn Fn(Binding) -> bool) -> bool {
    match e {
        Expr::Binding(b) => f(*b),
        _ => e.children().into_iter().any(|c| uses(c, f)),
    }
}

/// Statements of `body` (at any depth) that write or execute `c`:
/// (span, value for a register write).
fn users<'a>(body: &'a [Stmt], c: &Channel, dev: Option<usize>) -> Vec<(Span, Option<&'a Expr>)> {
    let mut out = Vec::new();
    super::walk(body, &mut |s| match (s, c) {
        (Stmt::Write { access, value }, Channel::Reg(r))
            if access.reg == *r && dev.is_none_or(|d| d == access.dev) =>
        {
            out.push((access.span, Some(value)))
        }
        (Stmt::Invalidate { name, span, .. }, Channel::Insn(n)) if name == n => {
            out.push((*span, None))
        }
        _ => {}
    });
    out
}

/// Does a write of `value` to launch register `r` differ between the
/// copies for granules `a` and `b`?
fn tells_apart(value: &Expr, r: RegId, a: &Granule, b: &Granule) -> bool {
    let bits = a.bits_of(r) != b.bits_of(r)
        && uses(value, &|x| matches!(x, Binding::RegBits(_) | Binding::Bits));
    let size = uses(value, &|x| {
        matches!(x, Binding::Size | Binding::Num | Binding::Scale)
    });
    bits || size
}

pub fn check(devices: &[Device], set: &GranuleSet, body: &[Stmt]) -> Result<(), Diag> {
    let chan_name = |c: &Channel| match (c, set.dev) {
        (Channel::Reg(r), Some(d)) => {
            format!("`{}.{}`", devices[d].name, devices[d].regs[*r].name)
        }
        (Channel::Reg(r), None) => format!("register {r}"),
        (Channel::Insn(n), _) => format!("`{n}`"),
    };
    for (i, a) in set.entries.iter().enumerate() {
        for b in &set.entries[i + 1..] {
            let la = launches(a);
            for c in launches(b).iter().filter(|c| la.contains(c)) {
                let found = users(body, c, set.dev);
                let pair = format!("granules `{}` and `{}`", granule_name(a), granule_name(b));
                if let Some((second, _)) = found.get(1) {
                    return Err(Diag::new(
                        *second,
                        format!(
                            "{pair} both go through {}, and this cover body {} it {} times: the copy of the body for either operation would make every one of them",
                            chan_name(c),
                            if matches!(c, Channel::Reg(_)) { "writes" } else { "executes" },
                            found.len()
                        ),
                    )
                    .label("which granule is this for?")
                    .related(found[0].0, "first one")
                    .related(a.span, "one granule")
                    .related(b.span, "the other")
                    .help("write it once, and tell the operations apart by value: give each granule the `set` fields that select it and write `$bits`, or launch them through different registers"));
                }
                // The same command for two operations: the device cannot
                // tell them apart (e.g. a flush-all that is a kill of the
                // page at address 0). Granules with different address
                // registers differ by which one the copy writes.
                let Channel::Reg(r) = c else { continue };
                if a.addr != b.addr {
                    continue;
                }
                if let Some((span, _)) = found
                    .iter()
                    .find(|(_, v)| v.is_some_and(|v| !tells_apart(v, *r, a, b)))
                {
                    return Err(Diag::new(
                        *span,
                        format!(
                            "{pair} both launch through {} with the same value: the device cannot tell them apart",
                            chan_name(c)
                        ),
                    )
                    .label("same command for both")
                    .related(a.span, "one granule")
                    .related(b.span, "the other")
                    .help("give each granule the `set` fields that select its operation, and write `$bits` into this register"));
                }
            }
        }
    }
    Ok(())
}
