//! `reuse-loads`: a second read of the same location with no store, lock
//! operation, barrier, device access or poll in between reuses the
//! register of the first (merging two such reads is always a legal
//! execution; across a doorbell or a poll the device may have written the
//! memory by DMA). Memory declared `ptr T private` is written by nobody
//! else: only this CPU's stores and lock operations end reuse. This is the
//! `esel_next` fix: the naive code reloads and needs a barrier to order
//! the reload.

use super::Cx;
use crate::ir::expr::Expr;
use crate::ir::{map_exprs, MemOp, MemRef, Program, Seq, Stmt};
use crate::spec::diag::Diag;

fn subst(e: &Expr, from: usize, to: usize) -> Expr {
    use crate::ir::expr::Expr as E;
    match e {
        E::Local(l) if *l == from => E::Local(to),
        E::Const(_) | E::Param(_) | E::Local(_) | E::Binding(_) | E::Feature(_) => e.clone(),
        E::Bin(op, a, b) => Expr::bin(*op, subst(a, from, to), subst(b, from, to)),
        E::Not(a) => Expr::bit_not(subst(a, from, to)),
        E::Insert {
            value,
            shift,
            width,
        } => Expr::insert(subst(value, from, to), *shift, *width),
        E::Cmp(rel, a, b) => Expr::cmp(*rel, subst(a, from, to), subst(b, from, to)),
        E::Call(f, args) => Expr::call(*f, args.iter().map(|a| subst(a, from, to)).collect()),
    }
}

fn overlaps(a: &MemRef, b: &MemRef) -> bool {
    let (a0, a1) = (a.offset, a.offset + u64::from(a.width / 8));
    let (b0, b1) = (b.offset, b.offset + u64::from(b.width / 8));
    a0 < b1 && b0 < a1
}

/// Does `s` (or a statement inside it) end the reuse of a load of shared
/// memory across it? Memory a device may write by DMA, or another CPU
/// under a lock, can change across a device access (a doorbell), a poll
/// (waiting for the device to finish), a barrier or a lock operation, so
/// a later read must reload. Stores through a pointer are handled by the
/// caller (they forget only what they overwrite).
fn blocks_reuse(s: &Stmt) -> bool {
    any_inside(s, &|x| {
        // A store at a computed offset may overwrite anything behind its
        // pointer; a memory poll waits for a device to write.
        cpu_writes(x)
            || matches!(
                x,
                Stmt::Mem {
                    op: MemOp::Poll { .. },
                    ..
                } | Stmt::Barrier { .. }
                    | Stmt::Write { .. }
                    | Stmt::Poll { .. }
                    | Stmt::Read { .. }
            )
    })
}

/// Does `s` overwrite memory a `private` load may come from? Only this
/// CPU's own stores and lock operations on it do, a store at a computed
/// offset (`p[x * 8] = v`) included: it may hit any element (issue 42).
fn blocks_private(s: &Stmt) -> bool {
    any_inside(s, &cpu_writes)
}

/// Is `x` this CPU's store or lock operation?
fn cpu_writes(x: &Stmt) -> bool {
    matches!(
        x,
        Stmt::Mem {
            op: MemOp::Store { .. }
                | MemOp::StoreAt { .. }
                | MemOp::Acquire(_)
                | MemOp::Release { .. },
            ..
        }
    )
}

/// Does `pred` hold for `s` or a statement inside it?
fn any_inside(s: &Stmt, pred: &dyn Fn(&Stmt) -> bool) -> bool {
    let mut found = false;
    crate::ir::walk(std::slice::from_ref(s), &mut |x| found |= pred(x));
    found
}

/// Within each straight-line block.
pub fn run(cx: &Cx, seq: &mut Seq) -> Result<(), Diag> {
    let prog = cx.prog;
    let mut renames: Vec<(usize, usize, String)> = Vec::new();
    let params = seq.params.clone();
    let private = seq.private.clone();
    reuse_block(prog, &params, &private, &mut seq.body, &mut renames);
    for (from, to, note) in renames {
        map_exprs(&mut seq.body, &mut |e| subst(e, from, to));
        seq.notes.push(note);
    }
    Ok(())
}

fn reuse_block(
    prog: &Program,
    params: &[String],
    private: &[bool],
    body: &mut Vec<Stmt>,
    renames: &mut Vec<(usize, usize, String)>,
) {
    // What survives `s`: loads of `private` memory unless `s` stores.
    let forget = |avail: &mut Vec<(MemRef, usize, usize)>, s: &Stmt| {
        if blocks_private(s) {
            avail.clear();
        } else if blocks_reuse(s) {
            avail.retain(|(m, _, _)| private.get(m.ptr).copied().unwrap_or(false));
        }
    };
    // Available loads: (location, local, line).
    let mut avail: Vec<(MemRef, usize, usize)> = Vec::new();
    let mut out = Vec::with_capacity(body.len());
    for mut s in std::mem::take(body) {
        match &mut s {
            Stmt::Mem {
                op: MemOp::Load { local, mem },
                span,
                ..
            } => {
                let line = prog.line_of(*span);
                if let Some((_, first, first_line)) = avail.iter().find(|(m, _, _)| m == mem) {
                    renames.push((
                        *local,
                        *first,
                        format!(
                            "reuse-loads: {}[{:#x}] read at line {line} reuses the value loaded at line {first_line} (no store, lock operation, barrier or device access between): no reload, no barrier to order it",
                            params.get(mem.ptr).map(String::as_str).unwrap_or("?"),
                            mem.offset
                        ),
                    ));
                    continue;
                }
                avail.push((*mem, *local, line));
            }
            Stmt::Mem {
                op: MemOp::Store { mem, .. },
                ..
            } => {
                // Distinct pointer parameters do not alias (a rule of the
                // spec language; the C prototype says `__restrict`): forget
                // what this store may overwrite.
                let m = *mem;
                avail.retain(|(a, _, _)| a.ptr != m.ptr || !overlaps(a, &m));
            }
            // A computed offset may overwrite any element behind its
            // pointer, and nothing behind another (no aliasing, as above).
            Stmt::Mem {
                op: MemOp::StoreAt { ptr, .. },
                ..
            } => {
                let p = *ptr;
                avail.retain(|(a, _, _)| a.ptr != p);
            }
            Stmt::Each { .. } | Stmt::Range { .. } | Stmt::Cover { .. } | Stmt::While { .. } => {
                forget(&mut avail, &s);
                // A body starts with nothing available: an earlier
                // iteration's loads are not reused across the back edge.
                if let Stmt::Each { body, .. }
                | Stmt::Range { body, .. }
                | Stmt::Cover { body, .. }
                | Stmt::While { body, .. } = &mut s
                {
                    reuse_block(prog, params, private, body, renames);
                }
            }
            Stmt::If { .. } => {
                forget(&mut avail, &s);
                if let Stmt::If { then_, else_, .. } = &mut s {
                    reuse_block(prog, params, private, then_, renames);
                    reuse_block(prog, params, private, else_, renames);
                }
            }
            _ => forget(&mut avail, &s),
        }
        out.push(s);
    }
    *body = out;
}
