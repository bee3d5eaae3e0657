//! Cover expansion: `cover START, SIZE with SET MODE { body }` becomes
//! branches and loops over instantiations of the body, one per operation
//! the mode can choose. Each instantiation binds `$addr`, `$bits` and
//! `$size`, and drops the writes that are dead for its operation (the
//! address register of a flush-all, the launch register of another op):
//! that is where "no AVA write for a whole-PID invalidate" comes from.
//!
//! Modes:
//! - `single`: the smallest size whose aligned block holds the whole
//!   range, else `all` (one operation);
//! - `exact`: a loop of smallest-granule operations over the range;
//! - `auto`: the loop while `size <= THRESHOLD * granule`, else `all`,
//!   with the threshold from the cost model (or pinned).
//!
//! Every mode first makes sure it can cover the request: an empty range
//! does nothing; a range whose end `start + size` reaches 2^64 is not a
//! range of addresses and takes the flush-all path (`-EINVAL` when the
//! set has no `all`); a run-time granule size that is not a power of two
//! (or so large that THRESHOLD granules pass 2^64) returns `-EINVAL`.
//! So a cover never invalidates less than it was asked.

use crate::ir::expr::{BinOp, Binding, Expr};
use crate::ir::Cmp;
use crate::ir::{Cond, CoverMode, GSize, Granule, GranuleSet, OpId, Program, Seq, Stmt, Via};
use crate::model;
use crate::spec::diag::{Diag, Span};

/// What the command line can change about covers.
#[derive(Clone, Debug, Default)]
pub struct CoverConfig {
    /// Force every cover to this mode (`diff --mode`).
    pub mode: Option<CoverMode>,
    /// `--set NAME=VALUE` thresholds.
    pub pins: Vec<(String, u64)>,
}

struct Ids {
    next_op: u32,
    next_group: u32,
    /// The parameters of the sequence being expanded: what a granule's
    /// `set FIELD = PARAM` names.
    params: Vec<String>,
    /// CPU invalidations a granule is issued through that an
    /// instantiation of the cover being expanded did not contain: that
    /// path would invalidate nothing.
    unserved: Vec<String>,
}

pub fn run(prog: &Program, cfg: &CoverConfig) -> Result<Program, Diag> {
    let mut out = prog.without_seqs();
    out.seqs = crate::par::map(&prog.seqs, |s| {
        let mut s = s.clone();
        resolve_thresholds(prog, &mut s, &cfg.pins);
        Ok::<_, std::convert::Infallible>(s)
    })
    .unwrap_or_else(|e| match e {});
    if !out.seqs.iter().any(|s| has_cover(&s.body)) {
        return Ok(out);
    }
    let mut ids = Ids {
        next_op: 0,
        next_group: 0,
        params: Vec::new(),
        unserved: Vec::new(),
    };
    for s in &prog.seqs {
        crate::ir::walk(&s.body, &mut |st| match st {
            Stmt::Write { access, .. } | Stmt::Poll { access, .. } | Stmt::Read { access, .. } => {
                ids.next_op = ids.next_op.max(access.id.0 + 1)
            }
            Stmt::Invalidate { id, .. } | Stmt::Mem { id, .. } => {
                ids.next_op = ids.next_op.max(id.0 + 1)
            }
            Stmt::Each { group, .. } => ids.next_group = ids.next_group.max(group + 1),
            _ => {}
        });
    }
    for seq in &mut out.seqs {
        if !has_cover(&seq.body) {
            continue;
        }
        let body = std::mem::take(&mut seq.body);
        ids.params.clone_from(&seq.params);
        seq.body = expand_block(prog, seq, body, cfg, &mut ids)?;
        seq.edges = crate::ir::order::required_edges(&prog.devices, &seq.body, &seq.orders);
    }
    Ok(out)
}

/// `threshold(SET)` -> its value under `pins` (checking made sure one
/// exists: costs, or a pin in the spec).
fn resolve_thresholds(prog: &Program, seq: &mut Seq, pins: &[(String, u64)]) {
    let mut bound = false;
    crate::ir::each_expr(&seq.body, &mut |e| bound |= e.uses_binding());
    if !bound {
        return;
    }
    let name = seq.name.clone();
    crate::ir::map_exprs(&mut seq.body, &mut |e| {
        if !e.uses_binding() {
            return e.clone();
        }
        e.bind(&|b| match b {
            Binding::Threshold(s) => Expr::Const(
                model::expr_threshold(prog, &name, s, pins).map_or(u64::MAX, |t| t.value),
            ),
            other => Expr::Binding(other),
        })
    });
}

fn has_cover(body: &[Stmt]) -> bool {
    let mut found = false;
    crate::ir::walk(body, &mut |s| found |= matches!(s, Stmt::Cover { .. }));
    found
}

fn expand_block(
    prog: &Program,
    seq: &mut Seq,
    body: Vec<Stmt>,
    cfg: &CoverConfig,
    ids: &mut Ids,
) -> Result<Vec<Stmt>, Diag> {
    let mut out = Vec::new();
    for s in body {
        match s {
            Stmt::Cover {
                set,
                mode,
                start,
                size,
                body,
                span,
                threshold,
            } => {
                let g = &prog.granules[set];
                let mode = cfg.mode.unwrap_or(mode);
                let c = Cover {
                    set: g,
                    start: &start,
                    size: &size,
                    body: &body,
                    span,
                };
                let expanded = match mode {
                    CoverMode::Single => single(seq, &c, ids),
                    CoverMode::Exact => exact(seq, &c, ids).map(|code| {
                        let e = model::loop_entry(g).and_then(|e| size_expr(seq, e));
                        match e {
                            Some(ge) => check_granule(&ge, 1 << 63, span, code),
                            None => code,
                        }
                    }),
                    CoverMode::Range => range_ops(seq, &c, ids),
                    CoverMode::Auto => {
                        let t = model::threshold(prog, g, &threshold, &body, &cfg.pins).ok_or_else(|| {
                            Diag::new(span, "`auto` needs costs to derive its threshold")
                                .related(g.span, "granule set")
                                .help(format!(
                                    "state `cost invalidate N ns` (and store, all) in the set, or pin `threshold {threshold} = N`"
                                ))
                        })?;
                        auto(seq, &c, t.value, ids)
                    }
                };
                let code = expanded.ok_or_else(|| {
                    Diag::new(span, "this granule set cannot serve the requested mode")
                        .related(g.span, "granule set")
                })?;
                out.extend(guard(&c, code, ids));
                if let Some(insn) = ids.unserved.first() {
                    return Err(unserved(g, insn, span));
                }
            }
            // Covers inside loops and branch arms are expanded too.
            other => out.push(other.try_map_blocks(&mut |b| expand_block(prog, seq, b, cfg, ids))?),
        }
    }
    Ok(out)
}

/// A cover whose body lacks the instruction of a granule its code can
/// take (the flush-all past the threshold or for a range that wraps past
/// 2^64): that path would invalidate nothing.
fn unserved(g: &GranuleSet, insn: &str, span: Span) -> Diag {
    let entry = g
        .entries
        .iter()
        .find(|e| matches!(&e.via, Some(Via::Insn(i)) if i == insn));
    let mut d = Diag::new(
        span,
        format!(
            "cover `{}`: its body has no `{insn}`, which the set issues {}; that path would invalidate nothing",
            g.name,
            match entry.map(|e| &e.size) {
                Some(GSize::All) => "to flush everything (past the threshold, and for a range that wraps past 2^64)",
                _ => "for one of its granules",
            }
        ),
    )
    .label("no statement for this granule")
    .help(format!(
        "write the `{insn}` statement in the body beside the others; each path keeps the statements of its own granule"
    ));
    if let Some(e) = entry {
        d = d.related(e.span, "the granule");
    }
    d
}

fn size_expr(seq: &Seq, e: &Granule) -> Option<Expr> {
    match &e.size {
        GSize::Bytes(b) => Some(Expr::Const(*b)),
        GSize::Param(p) => seq.params.iter().position(|x| x == p).map(Expr::Param),
        GSize::All | GSize::Range => None,
    }
}

/// `x & ~(g - 1)`
fn align_down(x: &Expr, g: &Expr) -> Expr {
    Expr::bin(
        BinOp::And,
        x.clone(),
        Expr::bit_not(Expr::bin(BinOp::Sub, g.clone(), Expr::Const(1))),
    )
}

/// The cover being expanded: its set, its range and the body every
/// mode's code is made of copies of.
#[derive(Clone, Copy)]
struct Cover<'a> {
    set: &'a GranuleSet,
    start: &'a Expr,
    size: &'a Expr,
    body: &'a [Stmt],
    span: Span,
}

impl Cover<'_> {
    /// One copy of the body for `entry`, with bindings replaced, dead
    /// writes dropped, and fresh op ids (copies in different branches are
    /// different operations).
    fn instantiate(&self, entry: &Granule, addr: Expr, size: Expr, ids: &mut Ids) -> Vec<Stmt> {
        let no_range = (Expr::Const(0), Expr::Const(0));
        self.instantiate_range(entry, addr, size, no_range, ids)
    }

    /// As [`Cover::instantiate`], with `$num` and `$scale` bound (range
    /// operations).
    fn instantiate_range(
        &self,
        entry: &Granule,
        addr: Expr,
        size: Expr,
        (num, scale): (Expr, Expr),
        ids: &mut Ids,
    ) -> Vec<Stmt> {
        let set = self.set;
        let dead_regs = model::dropped_regs(set, entry);
        let dead_insns = model::dropped_insns(set, entry);
        let bits = entry.bits_expr(&ids.params, None);
        let params = ids.params.clone();
        let bind = |b: Binding| match b {
            Binding::Addr => addr.clone(),
            Binding::Bits => bits.clone(),
            Binding::RegBits(r) => entry.bits_expr(&params, Some(r)),
            Binding::Size => size.clone(),
            Binding::Num => num.clone(),
            Binding::Scale => scale.clone(),
            t @ Binding::Threshold(_) => Expr::Binding(t),
        };
        let copier = Copier {
            bind: &bind,
            dead_regs: &dead_regs,
            dead_insns: &dead_insns,
            dev: set.dev,
        };
        let copy = copier.block(self.body, ids);
        // A CPU granule's operation is its instruction: a copy without it
        // (the body names only another granule's) would invalidate nothing.
        if let Some(Via::Insn(insn)) = &entry.via {
            let mut issued = false;
            crate::ir::walk(&copy, &mut |s| {
                issued |= matches!(s, Stmt::Invalidate { name, .. } if name == insn)
            });
            if !issued && !ids.unserved.contains(insn) {
                ids.unserved.push(insn.clone());
            }
        }
        copy
    }
}

impl Ids {
    fn op(&mut self) -> OpId {
        let id = OpId(self.next_op);
        self.next_op += 1;
        id
    }
}

/// Copies a cover body for one operation of its set: bindings replaced,
/// the writes and invalidates dead for the operation dropped.
struct Copier<'a> {
    bind: &'a dyn Fn(Binding) -> Expr,
    /// Registers (of `dev`, or of any device) the operation does not write.
    dead_regs: &'a [usize],
    dead_insns: &'a [String],
    dev: Option<usize>,
}

impl Copier<'_> {
    fn block(&self, body: &[Stmt], ids: &mut Ids) -> Vec<Stmt> {
        body.iter().filter_map(|s| self.stmt(s, ids)).collect()
    }

    /// The copy of `s`, None when it is dead for the operation.
    fn stmt(&self, s: &Stmt, ids: &mut Ids) -> Option<Stmt> {
        let bind = self.bind;
        Some(match s {
            Stmt::Write { access, value } => {
                if self.dead_regs.contains(&access.reg)
                    && (self.dev.is_none() || self.dev == Some(access.dev))
                {
                    return None;
                }
                let mut a = access.clone();
                a.id = ids.op();
                Stmt::Write {
                    access: a,
                    value: value.bind(bind),
                }
            }
            Stmt::Poll { access, mask, wait } => {
                let mut a = access.clone();
                a.id = ids.op();
                Stmt::Poll {
                    access: a,
                    mask: *mask,
                    wait: crate::ir::Wait {
                        value: wait.value.bind(bind),
                        ..*wait
                    },
                }
            }
            Stmt::Invalidate {
                name,
                operands,
                after,
                span,
                ..
            } => {
                if self.dead_insns.contains(name) {
                    return None;
                }
                Stmt::Invalidate {
                    id: ids.op(),
                    name: name.clone(),
                    operands: operands.iter().map(|o| o.bind(bind)).collect(),
                    after: *after,
                    span: *span,
                }
            }
            Stmt::Each {
                dev: d, body, span, ..
            } => {
                let inner = self.block(body, ids);
                // A loop left empty by dead writes is dead too.
                if inner.is_empty() {
                    return None;
                }
                let group = ids.next_group;
                ids.next_group += 1;
                Stmt::Each {
                    dev: *d,
                    body: inner,
                    span: *span,
                    group,
                }
            }
            Stmt::Range {
                local,
                start,
                size,
                step,
                body,
                span,
                fail_barrier,
            } => Stmt::Range {
                local: *local,
                start: start.bind(bind),
                size: size.bind(bind),
                step: step.bind(bind),
                body: self.block(body, ids),
                span: *span,
                fail_barrier: *fail_barrier,
            },
            Stmt::Return { value, span } => Stmt::Return {
                value: value.bind(bind),
                span: *span,
            },
            other => other.clone(),
        })
    }
}

fn single(seq: &mut Seq, c: &Cover, ids: &mut Ids) -> Option<Vec<Stmt>> {
    let all = model::all_entry(c.set)?;
    let sized = model::sized_entries(c.set);
    // x = start ^ (start + size - 1): the range fits an aligned block of
    // S bytes iff x < S.
    let last = Expr::bin(
        BinOp::Sub,
        Expr::bin(BinOp::Add, c.start.clone(), c.size.clone()),
        Expr::Const(1),
    );
    let x = Expr::bin(BinOp::Xor, c.start.clone(), last);
    let mut chain = c.instantiate(all, Expr::Const(0), Expr::Const(0), ids);
    for (b, e) in sized.into_iter().rev() {
        let g = Expr::Const(b);
        let then_ = c.instantiate(e, align_down(c.start, &g), g, ids);
        chain = vec![Stmt::If {
            rare: false,
            span: None,
            why: Some(format!("cover `{}` single: the smallest granule whose aligned block holds the range ({b:#x} bytes)", c.set.name).into()),
            cond: Cond {
                cmp: Cmp::Ltu,
                a: x.clone(),
                b: Expr::Const(b),
            },
            then_,
            else_: chain,
        }];
    }
    let _ = seq;
    Some(chain)
}

/// -EINVAL: what a cover returns when it cannot cover the request.
pub const EINVAL: i64 = -22;

/// What every mode's code runs inside: nothing for an empty range, the
/// flush-all (or -EINVAL without one) when `start + size` reaches 2^64.
fn guard(c: &Cover, code: Vec<Stmt>, ids: &mut Ids) -> Vec<Stmt> {
    // The flush-all, when the set has one and the body issues it; else
    // -EINVAL (a body with only the per-page statement serves a mode that
    // never takes the flush-all: the wrap is the one path that would).
    let before = ids.unserved.len();
    let flush = model::all_entry(c.set)
        .map(|all| c.instantiate(all, Expr::Const(0), Expr::Const(0), ids))
        .filter(|_| ids.unserved.len() == before);
    ids.unserved.truncate(before);
    let takes_all = flush.is_some();
    let flush = flush.unwrap_or_else(|| {
        vec![Stmt::Return {
            value: Expr::Const(EINVAL as u64),
            span: c.span,
        }]
    });
    vec![Stmt::If {
        rare: false,
        span: None,
        why: Some("cover: an empty range invalidates nothing".into()),
        cond: Cond {
            cmp: Cmp::Ne,
            a: c.size.clone(),
            b: Expr::Const(0),
        },
        // start + size >= 2^64  <=>  ~start < size
        then_: vec![Stmt::If {
            rare: false,
            span: None,
            why: Some(
                format!(
                    "cover `{}`: a range that wraps past 2^64 {}",
                    c.set.name,
                    if takes_all {
                        "takes the flush-all"
                    } else {
                        "returns -22"
                    }
                )
                .into(),
            ),
            cond: Cond {
                cmp: Cmp::Ltu,
                a: Expr::bit_not(c.start.clone()),
                b: c.size.clone(),
            },
            then_: flush,
            else_: code,
        }],
        else_: Vec::new(),
    }]
}

/// A run-time granule size `g` is usable when it is a power of two no
/// larger than `max_pow2` (itself a power of two): in one comparison,
/// `g - 1 < (g ^ (g - 1)) & (2 * max_pow2 - 1)`. For a power of two,
/// `g ^ (g - 1)` is `2g - 1`, which the mask keeps whole exactly when
/// `g <= max_pow2`; with two or more bits set it is below `g`; for 0 it
/// is all ones, and `g - 1` wraps to all ones too.
fn granule_ok(g: &Expr, max_pow2: u64) -> Cond {
    let m1 = Expr::bin(BinOp::Sub, g.clone(), Expr::Const(1));
    let low = Expr::bin(BinOp::Xor, g.clone(), m1.clone());
    Cond {
        cmp: Cmp::Ltu,
        a: m1,
        b: Expr::bin(
            BinOp::And,
            low,
            Expr::Const(max_pow2.wrapping_mul(2).wrapping_sub(1)),
        ),
    }
}

/// The largest power of two `g` with `t * g` below 2^64 (t > 0).
pub fn max_granule(t: u64) -> u64 {
    match u64::MAX / t.max(1) {
        0 => 0,
        q => 1 << (63 - q.leading_zeros()),
    }
}

/// The granule-sized loop over the range, from the aligned start (the
/// guard has ruled out an empty or wrapping range).
fn exact(seq: &mut Seq, c: &Cover, ids: &mut Ids) -> Option<Vec<Stmt>> {
    let e = model::loop_entry(c.set)?;
    let g = size_expr(seq, e)?;
    let local = seq.locals.len();
    seq.locals.push(format!("{}_addr", c.set.name));
    let misalign = Expr::bin(
        BinOp::And,
        c.start.clone(),
        Expr::bin(BinOp::Sub, g.clone(), Expr::Const(1)),
    );
    let body = c.instantiate(e, Expr::Local(local), g.clone(), ids);
    let range = Stmt::Range {
        local,
        start: align_down(c.start, &g),
        size: Expr::bin(BinOp::Add, c.size.clone(), misalign),
        step: g.clone(),
        body,
        span: c.span,
        fail_barrier: crate::ir::ExitBarriers::NONE,
    };
    Some(vec![range])
}

/// `code` when the loop granule is usable, else -EINVAL (run-time
/// granule sizes only: aligning needs a power of two).
fn check_granule(g: &Expr, max_pow2: u64, span: Span, code: Vec<Stmt>) -> Vec<Stmt> {
    if g.as_const().is_some() {
        return code;
    }
    vec![Stmt::If {
        rare: false,
        span: None,
        why: Some("cover: a run-time granule size must be a usable power of two, else -22".into()),
        cond: granule_ok(g, max_pow2),
        then_: code,
        else_: vec![Stmt::Return {
            value: Expr::Const(EINVAL as u64),
            span,
        }],
    }]
}

fn auto(seq: &mut Seq, c: &Cover, t: u64, ids: &mut Ids) -> Option<Vec<Stmt>> {
    let e = model::loop_entry(c.set)?;
    let g = size_expr(seq, e)?;
    let all = model::all_entry(c.set)?;
    let looped = exact(seq, c, ids)?;
    let flush = c.instantiate(all, Expr::Const(0), Expr::Const(0), ids);
    let limit = match &g {
        // Saturate: a pinned threshold must not wrap into a small limit.
        Expr::Const(b) => Expr::Const(t.saturating_mul(*b)),
        // `check_granule` rejects a run-time granule for which this wraps.
        g => Expr::bin(BinOp::Mul, Expr::Const(t), g.clone()),
    };
    let code = vec![Stmt::If {
        rare: false,
        span: None,
        why: Some(format!("cover `{}` auto: up to {t} granules (its threshold) the loop, past it the flush-all", c.set.name).into()),
        cond: Cond {
            cmp: Cmp::Geu,
            a: limit,
            b: c.size.clone(),
        },
        then_: looped,
        else_: flush,
    }];
    Some(check_granule(&g, max_granule(t), c.span, code))
}

/// Granules one range operation can reach at most: (31 + 1) << (5*3 + 1)
/// (Linux MAX_TLBI_RANGE_PAGES).
pub const MAX_RANGE_GRANULES: u64 = 32 << 16;

/// Range operations, as Linux `__flush_tlb_range_op` issues them with
/// FEAT_TLBIRANGE: for `pages` granules from the aligned start, one single
/// op when the count is odd, then for SCALE = 0..=3 one range op of
/// (NUM + 1) << (5 * SCALE + 1) granules where that 5-bit digit of the
/// count is nonzero. The loop over SCALE has four fixed steps, so it is
/// unrolled here into straight-line code; beyond the reach of range ops,
/// `all`.
fn range_ops(seq: &mut Seq, c: &Cover, ids: &mut Ids) -> Option<Vec<Stmt>> {
    let set = c.set;
    let single_e = model::loop_entry(set)?;
    let range_e = set.entries.iter().find(|e| e.size == GSize::Range)?;
    let all = model::all_entry(set)?;
    let g = size_expr(seq, single_e)?;
    let base = align_down(c.start, &g);
    let misalign = Expr::bin(
        BinOp::And,
        c.start.clone(),
        Expr::bin(BinOp::Sub, g.clone(), Expr::Const(1)),
    );
    let span = Expr::bin(BinOp::Add, c.size.clone(), misalign);
    // pages = ceil(span / g); g is a power of two and span > 0 (the guard
    // rules out empty and wrapping ranges): ((span - 1) >> log2(g)) + 1,
    // which does not overflow where (span + g - 1) >> log2(g) would.
    let pages = match g {
        Expr::Const(b) => Expr::bin(
            BinOp::Add,
            Expr::bin(
                BinOp::Shr,
                Expr::bin(BinOp::Sub, span, Expr::Const(1)),
                Expr::Const(u64::from(b.trailing_zeros())),
            ),
            Expr::Const(1),
        ),
        _ => return None,
    };
    let times_g = |e: Expr| Expr::bin(BinOp::Mul, e, g.clone());
    let mut code = Vec::new();
    // Odd count: one single op at the start.
    let odd = Expr::bin(BinOp::And, pages.clone(), Expr::Const(1));
    code.push(Stmt::If {
        rare: false,
        span: None,
        why: Some(
            format!(
                "cover `{}` range: an odd granule count takes one single op first",
                set.name
            )
            .into(),
        ),
        cond: Cond {
            cmp: Cmp::Ne,
            a: odd.clone(),
            b: Expr::Const(0),
        },
        then_: c.instantiate(single_e, base.clone(), g.clone(), ids),
        else_: Vec::new(),
    });
    let mut addr = Expr::bin(BinOp::Add, base, times_g(odd.clone()));
    let rest = Expr::bin(BinOp::Sub, pages.clone(), odd);
    for scale in 0..=3u64 {
        let shift = 5 * scale + 1;
        let digit = Expr::bin(
            BinOp::And,
            Expr::bin(BinOp::Shr, rest.clone(), Expr::Const(shift)),
            Expr::Const(31),
        );
        let num = Expr::bin(BinOp::Sub, digit.clone(), Expr::Const(1));
        let granules = Expr::bin(BinOp::Shl, digit.clone(), Expr::Const(shift));
        code.push(Stmt::If {
            rare: false,
            span: None,
            why: Some(format!("cover `{}` range: the range op of scale {scale}, if this digit of the count is not 0", set.name).into()),
            cond: Cond {
                cmp: Cmp::Ne,
                a: digit,
                b: Expr::Const(0),
            },
            then_: c.instantiate_range(
                range_e,
                addr.clone(),
                times_g(granules.clone()),
                (num, Expr::Const(scale)),
                ids,
            ),
            else_: Vec::new(),
        });
        addr = Expr::bin(BinOp::Add, addr, times_g(granules));
    }
    let flush = c.instantiate(all, Expr::Const(0), Expr::Const(0), ids);
    Some(vec![Stmt::If {
        rare: false,
        span: None,
        why: Some(format!("cover `{}` range: at most {MAX_RANGE_GRANULES} granules by range ops, past it the flush-all", set.name).into()),
        cond: Cond {
            cmp: Cmp::Ltu,
            a: pages,
            b: Expr::Const(MAX_RANGE_GRANULES),
        },
        then_: code,
        else_: flush,
    }])
}
