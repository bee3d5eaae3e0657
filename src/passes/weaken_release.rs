//! `weaken-release`: a release whose critical section (from the `acquire`
//! of the same lock in the same block) holds only normal-memory loads and
//! stores, where every load feeds a store of the section, needs only
//! store->store ordering before the releasing store: the loads are
//! performed before the stores that consume them (data dependency). The
//! target table then picks the cheapest barrier with that ordering
//! (POWER: `eieio` instead of `lwsync`).

use super::locks::{mem_text, release_barrier};
use super::Cx;
use crate::ir::expr::Expr;
use crate::ir::{MemOp, ReleaseOrder, Seq, Stmt};
use crate::spec::diag::Diag;

fn uses_local(e: &Expr, l: usize) -> bool {
    use crate::ir::expr::Expr as E;
    match e {
        E::Local(x) => *x == l,
        _ => e.children().into_iter().any(|c| uses_local(c, l)),
    }
}

pub fn run(cx: &Cx, seq: &mut Seq) -> Result<(), Diag> {
    let (prog, target) = (cx.prog, cx.target);
    let mut notes = Vec::new();
    let n = seq.body.len();
    for r in 0..n {
        let Stmt::Mem {
            id: _,
            op:
                MemOp::Release {
                    mem,
                    order: ReleaseOrder::Full,
                    ..
                },
            span,
        } = &seq.body[r]
        else {
            continue;
        };
        let (mem, span) = (*mem, *span);
        let Some(a) = (0..r).rev().find(
            |&i| matches!(&seq.body[i], Stmt::Mem { op: MemOp::Acquire(a), .. } if a.mem == mem),
        ) else {
            continue;
        };
        let section = &seq.body[a + 1..r];
        let only_mem = section.iter().all(|s| {
            matches!(
                s,
                Stmt::Mem {
                    op: MemOp::Load { .. } | MemOp::Store { .. },
                    ..
                }
            )
        });
        if !only_mem {
            continue;
        }
        let fed = section.iter().enumerate().all(|(i, s)| match s {
            Stmt::Mem {
                op: MemOp::Load { local, .. },
                ..
            } => section[i + 1..].iter().any(|t| {
                matches!(t, Stmt::Mem { op: MemOp::Store { value, .. }, .. } if uses_local(value, *local))
            }),
            _ => true,
        });
        if !fed {
            continue;
        }
        if let Stmt::Mem {
            op: MemOp::Release { order, .. },
            ..
        } = &mut seq.body[r]
        {
            *order = ReleaseOrder::StoresOnly;
        }
        let name =
            |order| release_barrier(target, prog.machine, order).map_or("none", |b| b.name());
        let before = name(ReleaseOrder::Full);
        let after = name(ReleaseOrder::StoresOnly);
        notes.push(format!(
            "weaken-release: release {} (line {}): every load of the critical section feeds one of its stores, so only store->store order is needed before the releasing store ({target}: {before} -> {after})",
            mem_text(seq, &mem),
            prog.line_of(span)
        ));
    }
    seq.notes.extend(notes);
    Ok(())
}
