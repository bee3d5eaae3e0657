//! Passes over normal-memory accesses and reservation-loop locks (the
//! e6500 TLB-miss `tcd` lock):
//!
//! - `hoist-window`: loop-invariant work of an `acquire` (the owner value
//!   `cpu + 1`, clearing the `held` status, the spin budget) is done once
//!   before the load-reserve/store-conditional window, so the window holds
//!   only the load-reserve, one compare, one branch and the
//!   store-conditional (plus its retry branch). The naive code redoes it
//!   inside the window on every retry, widening it.
//! - `reuse-loads`: a second read of the same location with no store, lock
//!   operation, barrier, device access or poll in between reuses the
//!   register of the first (merging two such reads is always a legal
//!   execution; across a doorbell or a poll the device may have written
//!   the memory by DMA). Memory declared `ptr T private` is written by
//!   nobody else: only this CPU's stores and lock operations end reuse. This is the
//!   `esel_next` fix: the naive code reloads and needs a barrier to order
//!   the reload.
//! - `weaken-release`: a release whose critical section (from the
//!   `acquire` of the same lock in the same block) holds only
//!   normal-memory loads and stores, where every load feeds a store of the
//!   section, needs only store->store ordering before the releasing
//!   store: the loads are performed before the stores that consume them
//!   (data dependency). The target table then picks the cheapest barrier
//!   with that ordering (POWER: `eieio` instead of `lwsync`).
//!
//! Each pass appends what it did to `Seq::notes` (`show --stage opt`).

use crate::ir::expr::Expr;
use crate::ir::order::Class;
use crate::ir::{map_exprs, walk_mut, MemOp, MemRef, Origin, Program, ReleaseOrder, Seq, Stmt};
use crate::target::{Machine, Target};

/// The cheapest barrier of `target`'s table that orders every pair.
pub fn cheapest(
    target: Target,
    machine: Machine,
    pairs: &[(Class, Class)],
) -> Option<&'static str> {
    target
        .table(machine)
        .iter()
        .filter(|b| pairs.iter().all(|&(a, c)| b.covers(a, c)))
        .min_by_key(|b| b.cost)
        .map(|b| b.name)
}

/// The barrier (if any) a release of `order` needs before its store, on
/// targets that release with a plain store (POWER: `lwsync`, `sync` after
/// device accesses). AArch64 releases with `stlr`, which orders every
/// earlier explicit access, Device memory included (Arm ARM B2.3.7; Linux
/// arm64 has no `mmiowb` for this reason), and x86-64 stores are ordered
/// among themselves, UC included (TSO): none.
pub fn release_barrier(
    target: Target,
    machine: Machine,
    order: ReleaseOrder,
) -> Option<&'static str> {
    match target {
        Target::Power64 | Target::Power64le => {
            let pairs: &[(Class, Class)] = match order {
                ReleaseOrder::Full => &[
                    (Class::NormalLoad, Class::NormalStore),
                    (Class::NormalStore, Class::NormalStore),
                ],
                ReleaseOrder::StoresOnly => &[(Class::NormalStore, Class::NormalStore)],
                ReleaseOrder::Device => &[
                    (Class::NormalLoad, Class::NormalStore),
                    (Class::NormalStore, Class::NormalStore),
                    (Class::DevLoad, Class::NormalStore),
                    (Class::DevStore, Class::NormalStore),
                ],
            };
            cheapest(target, machine, pairs)
        }
        Target::Aarch64 | Target::X86_64 => None,
    }
}

/// The barrier after a lock is taken: POWER's `isync` after the
/// branch-dependent store-conditional (Book II B.2.1.1, "Acquire Lock");
/// AArch64 acquires with `ldaxr`, x86-64 with `lock cmpxchg`.
pub fn acquire_barrier(target: Target) -> Option<&'static str> {
    match target {
        Target::Power64 | Target::Power64le => Some("isync"),
        Target::Aarch64 | Target::X86_64 => None,
    }
}

fn window_name(target: Target, width: u32) -> String {
    let c = match width {
        8 => "b",
        16 => "h",
        32 => "w",
        _ => "d",
    };
    match target {
        Target::Power64 | Target::Power64le => format!("l{c}arx/st{c}cx."),
        Target::Aarch64 => {
            let a = match width {
                8 => "b",
                16 => "h",
                _ => "",
            };
            format!("ldaxr{a}/stxr{a}")
        }
        Target::X86_64 => "load/lock cmpxchg".into(),
    }
}

fn mem_text(seq: &Seq, m: &MemRef) -> String {
    format!(
        "{}[{:#x}]",
        seq.params.get(m.ptr).map(String::as_str).unwrap_or("?"),
        m.offset
    )
}

/// `hoist-window`.
pub fn hoist_window(prog: &Program, seq: &mut Seq, target: Target) {
    let mut notes = Vec::new();
    let params = seq.params.clone();
    let snapshot = seq.clone();
    walk_mut(&mut seq.body, &mut |s| {
        if let Stmt::Mem {
            id: _,
            op:
                MemOp::Acquire {
                    mem,
                    value,
                    held,
                    hoisted,
                    ..
                },
            span,
        } = s
        {
            if *hoisted {
                return;
            }
            *hoisted = true;
            let mut what = Vec::new();
            if let crate::ir::LockValue::Owner(e) = value {
                if e.as_const().is_none() {
                    what.push(format!("owner value `{}`", e.display(&params)));
                }
            }
            if held.is_some() {
                what.push("clearing the held status".to_string());
            }
            if what.is_empty() {
                what.push("nothing to move".into());
            }
            notes.push(format!(
                "hoist-window: acquire {} (line {}): {} before the {} window; inside: load-reserve, compare, branch, store-conditional",
                mem_text(&snapshot, mem),
                prog.line_of(*span),
                what.join(" and "),
                window_name(target, mem.width)
            ));
        }
    });
    seq.notes.extend(notes);
}

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
    let mut found = false;
    crate::ir::walk(std::slice::from_ref(s), &mut |x| {
        found |= matches!(
            x,
            Stmt::Mem {
                // A store at a computed offset may overwrite anything
                // behind its pointer; a memory poll waits for a device
                // to write.
                op: MemOp::Store { .. }
                    | MemOp::StoreAt { .. }
                    | MemOp::Poll { .. }
                    | MemOp::Acquire { .. }
                    | MemOp::Release { .. },
                ..
            } | Stmt::Barrier { .. }
                | Stmt::Write { .. }
                | Stmt::Poll { .. }
                | Stmt::Read { .. }
        )
    });
    found
}

/// Does `s` overwrite memory a `private` load may come from? Only this
/// CPU's own stores and lock operations on it do.
fn blocks_private(s: &Stmt) -> bool {
    let mut found = false;
    crate::ir::walk(std::slice::from_ref(s), &mut |x| {
        found |= matches!(
            x,
            Stmt::Mem {
                op: MemOp::Store { .. } | MemOp::Acquire { .. } | MemOp::Release { .. },
                ..
            }
        )
    });
    found
}

/// `reuse-loads`: within each straight-line block.
pub fn reuse_loads(prog: &Program, seq: &mut Seq) {
    let mut renames: Vec<(usize, usize, String)> = Vec::new();
    let params = seq.params.clone();
    let private = seq.private.clone();
    reuse_block(prog, &params, &private, &mut seq.body, &mut renames);
    for (from, to, note) in renames {
        map_exprs(&mut seq.body, &mut |e| subst(e, from, to));
        seq.notes.push(note);
    }
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

fn uses_local(e: &Expr, l: usize) -> bool {
    use crate::ir::expr::Expr as E;
    match e {
        E::Local(x) => *x == l,
        _ => e.children().into_iter().any(|c| uses_local(c, l)),
    }
}

/// `weaken-release`.
pub fn weaken_release(prog: &Program, seq: &mut Seq, target: Target) {
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
        let Some(a) = (0..r).rev().find(|&i| {
            matches!(&seq.body[i], Stmt::Mem { op: MemOp::Acquire { mem: m, .. }, .. } if *m == mem)
        }) else {
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
        let before = release_barrier(target, prog.machine, ReleaseOrder::Full).unwrap_or("none");
        let after =
            release_barrier(target, prog.machine, ReleaseOrder::StoresOnly).unwrap_or("none");
        notes.push(format!(
            "weaken-release: release {} (line {}): every load of the critical section feeds one of its stores, so only store->store order is needed before the releasing store ({target}: {before} -> {after})",
            mem_text(seq, &mem),
            prog.line_of(span)
        ));
    }
    seq.notes.extend(notes);
}

/// Part of `naive-barriers`: a reload of a location already read in the
/// same block gets a barrier ordering it after the first read (the
/// pre-patch fix for two reads of `esel_next` returning different values:
/// "add memory barriers"). Only emitted where the target has one.
pub fn naive_reload_barriers(seq: &mut Seq, target: Target, machine: Machine) {
    let Some(name) = (match target {
        Target::X86_64 => None,
        t => cheapest(t, machine, &[(Class::NormalLoad, Class::NormalLoad)]),
    }) else {
        return;
    };
    naive_block(&mut seq.body, name);
}

fn naive_block(body: &mut Vec<Stmt>, name: &'static str) {
    let mut seen: Vec<MemRef> = Vec::new();
    let mut out = Vec::with_capacity(body.len());
    for mut s in std::mem::take(body) {
        match &mut s {
            Stmt::Mem {
                op: MemOp::Load { mem, .. },
                ..
            } => {
                if seen.contains(mem) {
                    out.push(Stmt::Barrier {
                        name: name.to_string(),
                        origin: Origin::Pass("naive-barriers"),
                        covers: Vec::new(),
                    });
                } else {
                    seen.push(*mem);
                }
            }
            Stmt::Each { body, .. } | Stmt::Range { body, .. } | Stmt::While { body, .. } => {
                naive_block(body, name)
            }
            Stmt::If { then_, else_, .. } => {
                naive_block(then_, name);
                naive_block(else_, name);
            }
            _ => {}
        }
        out.push(s);
    }
    *body = out;
}
