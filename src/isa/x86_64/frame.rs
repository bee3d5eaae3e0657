//! Where the callee-saved registers a function borrows are pushed and
//! popped. Pushing them at entry and popping them before every `ret`
//! costs two instructions per register on every path, also on the many
//! paths that never touch them (arm_smmu's range flushes borrow rbx for
//! an unrolled loop only). Shrink-wrapping: the registers are saved only
//! where a path has touched one of them and will touch one again, plus
//! the instructions that touch them; a `push` goes on each edge into that
//! region, a `pop` on each edge out of it.
//!
//! Why that is exact, with `U` the instructions naming a saved register,
//! `A(i)`: some `U` is reachable from `i` (or `i` is in `U`), `B(i)`: some
//! `U` reaches `i` (or `i` is in `U`), saved at `i` iff `A(i) && B(i)`:
//! - Outside the region nothing writes the registers, so they hold the
//!   caller's values there, and every `ret` (where `A` is false) is
//!   outside.
//! - A `push` on an edge into the region saves the caller's values.
//! - A `pop` on an edge out of it, to `t`: either `A(t)` is false and
//!   nothing reads the registers again, or `B(t)` is false and no path to
//!   `t` wrote them, so they still held what the `pop` gives back.
//!
//! The stack offsets move inside the region, so a function that
//! addresses its stack (spill slots, arguments past the sixth) keeps the
//! entry/exit frame. An edge that can carry no code (a `jcc` to a label
//! other jumps reach too) gets a trampoline at the end of the function.

use std::collections::HashMap;

use super::insn::{Gpr, Insn, Label};
use crate::lir::Origin;

pub type Body = Vec<(Insn, Origin)>;

/// The registers an instruction names, implicit ones included (rsp for
/// `push`/`pop`, rcx for a shift by cl, rax for `cmpxchg` and `ret`):
/// what it reads or writes, as renaming reads it, and the stack pointer.
pub fn gprs(i: &Insn) -> Vec<Gpr> {
    let (uses, defs) = super::rename::uses_defs(i);
    let stack = matches!(i, Insn::Push { .. } | Insn::Pop { .. });
    (0..16)
        .filter_map(Gpr::new)
        .filter(|r| (uses | defs) >> r.num() & 1 == 1 || (stack && *r == Gpr::RSP))
        .collect()
}

/// The body with `saved` pushed where it must be: shrink-wrapped when
/// the body leaves the stack alone, else at entry and before every `ret`.
pub fn wrap(body: Body, saved: &[Gpr]) -> Body {
    if saved.is_empty() {
        return body;
    }
    shrink(&body, saved).unwrap_or_else(|| at_entry(body, saved))
}

/// Pushes first, pops before every `ret`.
pub fn at_entry(body: Body, saved: &[Gpr]) -> Body {
    let Some((_, first)) = body.first() else {
        return body;
    };
    let mut out: Body = pushes(saved, &plain(first));
    for (i, o) in body {
        if i == Insn::Ret {
            out.extend(pops(saved, &plain(&o)));
        }
        out.push((i, o));
    }
    out
}

/// An origin for an instruction the frame adds: the neighbour's line and
/// note, but no IR operation (nothing to attribute an event to).
fn plain(o: &Origin) -> Origin {
    Origin {
        op: None,
        ..o.clone()
    }
}

fn pushes(saved: &[Gpr], o: &Origin) -> Body {
    saved
        .iter()
        .map(|&rs| (Insn::Push { rs }, o.clone()))
        .collect()
}

fn pops(saved: &[Gpr], o: &Origin) -> Body {
    saved
        .iter()
        .rev()
        .map(|&rd| (Insn::Pop { rd }, o.clone()))
        .collect()
}

/// Successors and predecessors of each instruction (distinct ones).
pub struct Cfg {
    pub succ: Vec<Vec<usize>>,
    pub pred: Vec<Vec<usize>>,
}

/// The flow graph; None for a jump to a label the body lacks.
pub fn cfg(insns: &[&Insn]) -> Option<Cfg> {
    let n = insns.len();
    let at: HashMap<Label, usize> = (insns.iter().enumerate())
        .filter_map(|(k, i)| match i {
            Insn::Label(l) => Some((*l, k)),
            _ => None,
        })
        .collect();
    let mut succ = vec![Vec::new(); n];
    let mut pred = vec![Vec::new(); n];
    for (k, i) in insns.iter().enumerate() {
        let next = (k + 1 < n).then_some(k + 1);
        let s: Vec<usize> = match i {
            Insn::Jmp { target } => vec![*at.get(target)?],
            Insn::Jcc { target, .. } => next.into_iter().chain([*at.get(target)?]).collect(),
            Insn::Ret => vec![],
            _ => next.into_iter().collect(),
        };
        for &t in &s {
            if !succ[k].contains(&t) {
                succ[k].push(t);
                pred[t].push(k);
            }
        }
    }
    Some(Cfg { succ, pred })
}

/// `seed[i]`, or some `j` with `seed[j]` reaches `i` along `edges`
/// (`edges[i]`: where `i` leads).
fn reach(edges: &[Vec<usize>], seed: &[bool]) -> Vec<bool> {
    let mut on = seed.to_vec();
    let mut work: Vec<usize> = (0..on.len()).filter(|&i| on[i]).collect();
    while let Some(i) = work.pop() {
        for &j in &edges[i] {
            if !on[j] {
                on[j] = true;
                work.push(j);
            }
        }
    }
    on
}

/// The instructions where the registers are saved: touched before and
/// touched again (see the module comment). None when the body addresses
/// the stack or pushes itself.
pub fn region(insns: &[&Insn], g: &Cfg, saved: &[Gpr]) -> Option<Vec<bool>> {
    let names = insns.iter().map(|i| gprs(i)).collect::<Vec<_>>();
    if names.iter().flatten().any(|&r| r == Gpr::RSP) {
        return None;
    }
    let used: Vec<bool> = (names.iter())
        .map(|ns| ns.iter().any(|r| saved.contains(r)))
        .collect();
    let touched = reach(&g.succ, &used);
    let again = reach(&g.pred, &used);
    Some((0..insns.len()).map(|i| touched[i] && again[i]).collect())
}

/// Code on the edges around one instruction: before it (the edge out of
/// a `jmp`, or of a `jcc` whose two ways meet), after its label (the one
/// edge into a label), and after it (its fall-through edge, which only
/// falling out of it reaches).
#[derive(Default, Clone)]
struct Around {
    before: Vec<Insn>,
    into: Vec<Insn>,
    after: Vec<Insn>,
}

fn shrink(body: &Body, saved: &[Gpr]) -> Option<Body> {
    let insns: Vec<&Insn> = body.iter().map(|(i, _)| i).collect();
    let g = cfg(&insns)?;
    let on = region(&insns, &g, saved)?;
    let n = insns.len();
    let change = |to: bool| -> Vec<Insn> {
        let o = Origin::default();
        let seq = if to {
            pushes(saved, &o)
        } else {
            pops(saved, &o)
        };
        seq.into_iter().map(|(i, _)| i).collect()
    };
    let mut around = vec![Around::default(); n];
    let mut fresh = 1
        + (insns.iter())
            .filter_map(|i| match i {
                Insn::Label(l) => Some(*l),
                _ => None,
            })
            .max()
            .unwrap_or(0);
    let mut retarget: HashMap<usize, Label> = HashMap::new();
    let mut tail: Vec<Insn> = Vec::new();
    for s in 0..n {
        for &t in &g.succ[s] {
            if on[s] == on[t] {
                continue;
            }
            let seq = change(on[t]);
            let jump = matches!(insns[s], Insn::Jmp { .. } | Insn::Jcc { .. });
            if jump && g.succ[s].len() == 1 {
                around[s].before = seq;
            } else if t == s + 1 && !matches!(insns[s], Insn::Jmp { .. }) {
                around[s].after = seq;
            } else if g.pred[t].len() + usize::from(t == 0) == 1 {
                around[t].into = seq;
            } else {
                // A jcc to a label other edges reach: a trampoline.
                let Insn::Label(l) = insns[t] else {
                    return None;
                };
                tail.push(Insn::Label(fresh));
                tail.extend(seq);
                tail.push(Insn::Jmp { target: *l });
                retarget.insert(s, fresh);
                fresh += 1;
            }
        }
    }
    if !tail.is_empty() && !matches!(insns.last(), Some(Insn::Ret | Insn::Jmp { .. })) {
        return None;
    }
    let mut out = Body::new();
    if on.first() == Some(&true) {
        out.extend(change(true).into_iter().map(|i| (i, plain(&body[0].1))));
    }
    for (k, (insn, o)) in body.iter().enumerate() {
        let a = &around[k];
        let p = plain(o);
        let mut insn = insn.clone();
        if let (Insn::Jcc { target, .. }, Some(&l)) = (&mut insn, retarget.get(&k)) {
            *target = l;
        }
        out.extend(a.before.iter().map(|i| (i.clone(), p.clone())));
        out.push((insn, o.clone()));
        out.extend((a.into.iter().chain(&a.after)).map(|i| (i.clone(), p.clone())));
    }
    let last = plain(&body.last()?.1);
    out.extend(tail.into_iter().map(|i| (i, last.clone())));
    Some(out)
}

#[cfg(test)]
#[path = "frame_tests.rs"]
mod tests;
