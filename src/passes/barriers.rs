//! Barrier placement.
//!
//! The program is laid out as a line of *gaps* (points between statements
//! of a block). A barrier in gap `g` orders access `a` before access `b`
//! when `g` lies between them on the line and `g`'s block encloses `a` or
//! `b` (a barrier inside some unrelated loop may run zero times). A gap
//! inside loops costs the barrier's cost times the loops' instance weights;
//! a gap inside an `if` arm weighs one less than the code around the `if`
//! (fewer paths run it).
//!
//! `place_minimal` finds a set of (gap, barrier kind) of minimum total cost
//! such that every required edge not already ordered by the target is
//! crossed by a barrier that orders its classes (exact branch and bound;
//! with one barrier kind this is the classic minimum stabbing of
//! intervals). `place_naive` puts the cheapest sufficient barrier right
//! before the later access of each edge, as hand-written code does.

use crate::ir::order::Edge;
use crate::ir::{BarrierName, Instances, Mapping, OpId, Origin, Program, Seq, Stmt};
use crate::isa::barriers::{Barrier, BarrierKind};
use crate::isa::Target;
use crate::spec::ast::Scope;
use crate::spec::diag::Diag;
use rustc_hash::FxHashMap as HashMap;

#[derive(Clone, Debug)]
pub struct Gap {
    /// Path of statement indices from the sequence body to the block.
    pub block: Vec<usize>,
    /// Insert position within the block.
    pub index: usize,
    pub lin: usize,
    pub weight: u64,
}

#[derive(Default, Debug)]
pub struct Layout {
    pub gaps: Vec<Gap>,
    /// Linear position and enclosing block of each access.
    pub ops: HashMap<OpId, (usize, Vec<usize>)>,
    /// Barriers already in the body: position, block, mnemonic.
    pub existing: Vec<(usize, Vec<usize>, Barrier, Origin)>,
}

pub fn layout(prog: &Program, body: &[Stmt]) -> Layout {
    let mut l = Layout::default();
    // The caller's earlier stores happen before everything; the return
    // after everything (early returns of failed polls are error paths and
    // are not given completion barriers).
    l.ops.insert(OpId::ENTRY, (0, Vec::new()));
    let mut lin = 1;
    // Straight-line code weighs RANGE_WEIGHT, not 1, so that a rare arm
    // there (weight 1) is still cheaper than its surroundings; scaling
    // every cost alike changes no other choice.
    walk(
        prog,
        body,
        &mut Vec::new(),
        crate::ir::RANGE_WEIGHT,
        &mut lin,
        &mut l,
    );
    l.ops.insert(OpId::EXIT, (lin, Vec::new()));
    l
}

fn walk(
    prog: &Program,
    body: &[Stmt],
    path: &mut Vec<usize>,
    weight: u64,
    lin: &mut usize,
    l: &mut Layout,
) {
    for i in 0..=body.len() {
        l.gaps.push(Gap {
            block: path.clone(),
            index: i,
            lin: *lin,
            weight,
        });
        *lin += 1;
        let Some(s) = body.get(i) else { break };
        let here = *lin;
        *lin += 1;
        match s {
            Stmt::Write { access, .. } | Stmt::Poll { access, .. } | Stmt::Read { access, .. } => {
                l.ops.insert(access.id, (here, path.clone()));
            }
            Stmt::Invalidate { id, .. } | Stmt::Mem { id, .. } => {
                l.ops.insert(*id, (here, path.clone()));
            }
            Stmt::Barrier { name, origin, .. } => {
                l.existing
                    .push((here, path.clone(), name.kind(), origin.clone()))
            }
            Stmt::Each { dev, body, .. } => {
                path.push(i);
                let w = weight.saturating_mul(prog.devices[*dev].instances.weight());
                walk(prog, body, path, w, lin, l);
                path.pop();
            }
            // Paths into a branch name the statement, then the arm.
            Stmt::If {
                then_, else_, rare, ..
            } => {
                path.push(i);
                for (arm, b) in [then_, else_].into_iter().enumerate() {
                    path.push(arm);
                    // A rare arm runs about once per loop, not per iteration.
                    // Any arm runs on fewer paths than the code around the
                    // `if`: one less than its surroundings, so a barrier
                    // only one arm needs goes at the end of that arm, not
                    // after the join where every path would run it, while
                    // two arms that both need one still share the join.
                    let w = if *rare && arm == 0 {
                        (weight / crate::ir::RANGE_WEIGHT).max(1)
                    } else {
                        weight.saturating_sub(1).max(1)
                    };
                    walk(prog, b, path, w, lin, l);
                    path.pop();
                }
                path.pop();
            }
            Stmt::Cover { .. } => {}
            Stmt::Range { body, .. } => {
                path.push(i);
                walk(
                    prog,
                    body,
                    path,
                    weight.saturating_mul(crate::ir::RANGE_WEIGHT),
                    lin,
                    l,
                );
                path.pop();
            }
            // Costed like a range, or by its limit when that is smaller.
            Stmt::While { body, limit, .. } => {
                path.push(i);
                walk(
                    prog,
                    body,
                    path,
                    weight.saturating_mul((*limit).min(crate::ir::RANGE_WEIGHT)),
                    lin,
                    l,
                );
                path.pop();
            }
            Stmt::Return { .. } | Stmt::Assign { .. } | Stmt::Sys { .. } => {}
        }
    }
}

fn is_prefix(p: &[usize], of: &[usize]) -> bool {
    of.len() >= p.len() && &of[..p.len()] == p
}

/// Can a barrier at (`lin`, `block`) order edge `e`?
fn point_orders(l: &Layout, e: &Edge, lin: usize, block: &[usize]) -> bool {
    let (Some((la, pa)), Some((lb, pb))) = (l.ops.get(&e.from), l.ops.get(&e.to)) else {
        return false;
    };
    if la < lb {
        *la < lin && lin < *lb && (is_prefix(block, pa) || is_prefix(block, pb))
    } else {
        // Loop-carried edge: `from` is later in the body than `to`. The
        // barrier must sit in the shared loop, in a block that encloses
        // `from` and after it, or one that encloses `to` and before it:
        // then it runs between iteration i's `from` and iteration i+1's
        // `to` on every path. A barrier in some other block (the other arm
        // of an `if` holding `from`) is skipped by the paths that take
        // `from`'s arm (issue 42).
        let shared = common_prefix(pa, pb);
        !shared.is_empty()
            && is_prefix(shared, block)
            && ((lin > *la && is_prefix(block, pa)) || (lin < *lb && is_prefix(block, pb)))
    }
}

fn common_prefix<'a>(a: &'a [usize], b: &[usize]) -> &'a [usize] {
    let n = a.iter().zip(b).take_while(|(x, y)| x == y).count();
    &a[..n]
}

/// Edges the target does not already order for free, with the barrier
/// kinds that would order each.
fn needed(prog: &Program, seq: &Seq, target: Target) -> Result<Vec<(usize, Vec<usize>)>, Diag> {
    let table = target.table(prog.machine);
    let mut out = Vec::new();
    for (i, e) in seq.edges.iter().enumerate() {
        if ordered_by_target(prog, e, target) {
            continue;
        }
        let kinds: Vec<usize> = (0..table.len())
            .filter(|&k| table[k].covers(e.from_class, e.to_class))
            .collect();
        if kinds.is_empty() {
            return Err(no_barrier(e, target));
        }
        out.push((i, kinds));
    }
    Ok(out)
}

/// Does the target's memory model order this edge with no barrier? Both
/// ends on one strongly mapped device instance keep program order on
/// targets that promise per-peripheral order.
pub fn ordered_by_target(prog: &Program, e: &Edge, target: Target) -> bool {
    let same_strong = e.dev.is_some_and(|d| {
        prog.devices[d].mapping == Mapping::Strong
            && (e.scope == Scope::SameInstance || prog.devices[d].instances == Instances::Single)
    });
    target.orders_implicitly(e.from_class, e.to_class, same_strong)
}

fn no_barrier(e: &Edge, target: Target) -> Diag {
    Diag::new(
        e.span,
        format!(
            "{target} has no barrier that orders {:?} before {:?}",
            e.from_class, e.to_class
        ),
    )
    .label("required here")
}

/// Resolve the spec's `barrier NAME` statements against `target`'s table
/// (on the program's machine): the one place a barrier is looked up by
/// name. Reports the first name the table lacks, at its statement.
pub fn resolve_spec_barriers(prog: &Program, seq: &mut Seq, target: Target) -> Result<(), Diag> {
    let table = target.table(prog.machine);
    let mut err = None;
    crate::ir::walk_mut(&mut seq.body, &mut |s| {
        let Stmt::Barrier {
            name: name @ BarrierName::Spelled(_),
            origin,
            ..
        } = s
        else {
            return;
        };
        match Barrier::find(table, name.as_str()) {
            Some(b) => *name = BarrierName::Kind(b),
            None if err.is_none() => {
                let Origin::Spec(span) = origin else {
                    unreachable!("only the spec spells a barrier")
                };
                err = Some(unknown_barrier(prog, target, table, *span, name.as_str()));
            }
            None => {}
        }
    });
    err.map_or(Ok(()), Err)
}

fn unknown_barrier(
    prog: &Program,
    target: Target,
    table: &'static [BarrierKind],
    span: crate::spec::diag::Span,
    name: &str,
) -> Diag {
    Diag::new(
        span,
        match prog.machine_span {
            Some(_) => format!(
                "{target} (`machine {}`) has no barrier `{name}`",
                prog.machine.name()
            ),
            None => format!("{target} has no barrier `{name}`"),
        },
    )
    .label("not a barrier on this target")
    .help(format!(
        "{target} barriers: {}",
        table
            .iter()
            // A composite (`eieio; tlbsync; ptesync`) is placed, never
            // spelled.
            .filter(|b| b.parts().count() == 1)
            .map(|b| b.name)
            .collect::<Vec<_>>()
            .join(", ")
    ))
}

fn satisfied_by_existing(l: &Layout, e: &Edge) -> bool {
    l.existing.iter().any(|(lin, block, b, _)| {
        b.covers(e.from_class, e.to_class) && point_orders(l, e, *lin, block)
    })
}

/// A chosen barrier: gap index into the layout, kind index into the table.
type Choice = (usize, usize);

/// `place-barriers`: placement orders the normal return; the exits pass
/// completes the early ones (see `exits`).
pub fn run(cx: &super::Cx, seq: &mut Seq) -> Result<(), Diag> {
    place_minimal(cx.prog, seq, cx.target)?;
    super::exits::run(seq, cx.target, cx.prog.machine);
    Ok(())
}

/// The required edges that need a barrier and no barrier already in
/// `seq` (laid out as `l`) meets, each with its candidate kinds.
fn unmet(
    prog: &Program,
    seq: &Seq,
    target: Target,
    l: &Layout,
) -> Result<Vec<(usize, Vec<usize>)>, Diag> {
    Ok(needed(prog, seq, target)?
        .into_iter()
        .filter(|(e, _)| !satisfied_by_existing(l, &seq.edges[*e]))
        .collect())
}

pub fn place_minimal(prog: &Program, seq: &mut Seq, target: Target) -> Result<(), Diag> {
    let table = target.table(prog.machine);
    let l = layout(prog, &seq.body);
    let needed = unmet(prog, seq, target, &l)?;
    if needed.is_empty() {
        return Ok(());
    }
    let problem = Problem::build(&l, seq, table, &needed);
    if let Some(i) = problem.cands.iter().position(|c| c.is_empty()) {
        return Err(Diag::new(
            seq.edges[needed[i].0].span,
            "no position orders this requirement",
        )
        .label("the later access may run before the earlier one"));
    }
    let chosen = problem.solve();
    insert(seq, &l, &chosen, table, &problem, &needed, "place-barriers");
    Ok(())
}

/// Cost of a minimal placement for the body as it stands (None when some
/// requirement cannot be ordered in this emission order), in barrier-cost
/// units per execution of the sequence (the layout weighs straight-line
/// code RANGE_WEIGHT so that rare arms can weigh less; that scale is
/// divided out, a rare arm's share rounded up).
pub fn min_cost(prog: &Program, seq: &Seq, target: Target) -> Option<u64> {
    let mut budget = SOLVE_WORK;
    min_cost_within(prog, seq, target, &mut budget)
}

/// [`min_cost`] spending at most `budget` (see [`Problem::solve_within`]).
pub fn min_cost_within(prog: &Program, seq: &Seq, target: Target, budget: &mut u64) -> Option<u64> {
    let table = target.table(prog.machine);
    let l = layout(prog, &seq.body);
    let needed: Vec<(usize, Vec<usize>)> = needed(prog, seq, target)
        .ok()?
        .into_iter()
        .filter(|(e, _)| !satisfied_by_existing(&l, &seq.edges[*e]))
        .collect();
    if needed.is_empty() {
        return Some(0);
    }
    let problem = Problem::build(&l, seq, table, &needed);
    if problem.cands.iter().any(|c| c.is_empty()) {
        return None;
    }
    Some(
        problem
            .total(&problem.solve_within(budget))
            .div_ceil(crate::ir::RANGE_WEIGHT),
    )
}

pub fn place_naive(prog: &Program, seq: &mut Seq, target: Target) -> Result<(), Diag> {
    let table = target.table(prog.machine);
    let l = layout(prog, &seq.body);
    let needed = unmet(prog, seq, target, &l)?;
    let problem = Problem::build(&l, seq, table, &needed);
    let mut chosen: Vec<Choice> = Vec::new();
    for (ni, (ei, kinds)) in needed.iter().enumerate() {
        let e = &seq.edges[*ei];
        let Some((lb, pb)) = l.ops.get(&e.to) else {
            continue;
        };
        // The gap just before the later access, in its own block.
        let Some(g) = l
            .gaps
            .iter()
            .position(|g| g.block == *pb && g.lin + 1 == *lb)
        else {
            continue;
        };
        if chosen
            .iter()
            .any(|&(cg, ck)| cg == g && table[ck].covers(e.from_class, e.to_class))
        {
            continue;
        }
        let k = *kinds
            .iter()
            .min_by_key(|&&k| table[k].cost)
            .unwrap_or(&kinds[0]);
        if !problem.gap_orders(g, ni) {
            return Err(Diag::new(
                e.span,
                "naive placement cannot order this requirement",
            ));
        }
        chosen.push((g, k));
    }
    insert(seq, &l, &chosen, table, &problem, &needed, "naive-barriers");
    Ok(())
}

/// Work one exact solve may spend (units: edges examined; ~0.1 s). Past
/// it the best placement found so far stands: valid, perhaps not minimal.
pub const SOLVE_WORK: u64 = 30_000_000;

/// A barrier's cost: its kind's cost times its gap's instance weight.
fn choice_cost(gap_weight: &[u64], kind_cost: &[u64], (g, k): Choice) -> u64 {
    gap_weight[g].saturating_mul(kind_cost[k])
}

/// The covering problem: for each needed edge, the (gap, kind) choices.
/// Sparse throughout: an edge's valid gaps are the few between its ends,
/// and a sequence has hundreds of gaps, so nothing is sized edges x gaps
/// except the small bit sets of the lower bound.
pub struct Problem {
    /// cands[n] = choices covering needed edge n.
    pub cands: Vec<Vec<Choice>>,
    /// Gaps where a barrier orders needed edge n, ascending.
    valid: Vec<Vec<usize>>,
    kinds_of: Vec<Vec<usize>>,
    /// Instance weight of each gap and cost of each barrier kind.
    gap_weight: Vec<u64>,
    kind_cost: Vec<u64>,
    /// The needed edges each choice covers (the branch and bound updates
    /// coverage through these, not by scanning every edge).
    covered_by: HashMap<Choice, Vec<usize>>,
    /// valid[n] as a bit set over gaps, for the packing lower bound.
    bits: Vec<Vec<u64>>,
    /// Edges by the position of their last valid gap (interval order).
    by_end: Vec<usize>,
    /// Cheapest choice of each edge.
    min_cost: Vec<u64>,
}

impl Problem {
    fn build(
        l: &Layout,
        seq: &Seq,
        table: &[BarrierKind],
        needed: &[(usize, Vec<usize>)],
    ) -> Problem {
        let gap_weight: Vec<u64> = l.gaps.iter().map(|g| g.weight).collect();
        let kind_cost: Vec<u64> = table.iter().map(|k| u64::from(k.cost)).collect();
        let cost = |c: Choice| choice_cost(&gap_weight, &kind_cost, c);
        let mut cands = Vec::with_capacity(needed.len());
        let mut valid = Vec::with_capacity(needed.len());
        // Edges each gap orders: the inverted index behind `covered_by`.
        let mut at_gap: Vec<Vec<usize>> = vec![Vec::new(); l.gaps.len()];
        for (n, (ei, kinds)) in needed.iter().enumerate() {
            let e = &seq.edges[*ei];
            // Gaps are in line order: a forward edge can only be crossed
            // between its ends, so only that window is examined.
            let window = match (l.ops.get(&e.from), l.ops.get(&e.to)) {
                (Some((la, _)), Some((lb, _))) if la < lb => {
                    l.gaps.partition_point(|g| g.lin <= *la)
                        ..l.gaps.partition_point(|g| g.lin < *lb)
                }
                _ => 0..l.gaps.len(),
            };
            let v: Vec<usize> = window
                .filter(|&gi| point_orders(l, e, l.gaps[gi].lin, &l.gaps[gi].block))
                .collect();
            for &g in &v {
                at_gap[g].push(n);
            }
            let mut c: Vec<Choice> = v
                .iter()
                .flat_map(|&g| kinds.iter().map(move |&k| (g, k)))
                .collect();
            // Cheapest first; among equals prefer the latest gap, next to
            // the access that needs the ordering.
            c.sort_by_key(|&(g, k)| (cost((g, k)), std::cmp::Reverse(l.gaps[g].lin), k));
            cands.push(c);
            valid.push(v);
        }
        let kinds_of: Vec<Vec<usize>> = needed.iter().map(|(_, k)| k.clone()).collect();
        let mut covered_by: HashMap<Choice, Vec<usize>> = HashMap::default();
        for c in cands.iter().flatten() {
            covered_by.entry(*c).or_insert_with(|| {
                at_gap[c.0]
                    .iter()
                    .copied()
                    .filter(|&m| kinds_of[m].contains(&c.1))
                    .collect()
            });
        }
        let words = l.gaps.len().div_ceil(64);
        let bits: Vec<Vec<u64>> = valid
            .iter()
            .map(|v| {
                let mut b = vec![0u64; words];
                for &g in v {
                    b[g / 64] |= 1 << (g % 64);
                }
                b
            })
            .collect();
        let mut by_end: Vec<usize> = (0..valid.len()).collect();
        by_end.sort_by_key(|&n| valid[n].last().copied());
        let min_cost = cands
            .iter()
            .map(|c| c.iter().map(|&x| cost(x)).min().unwrap_or(0))
            .collect();
        Problem {
            cands,
            valid,
            kinds_of,
            gap_weight,
            kind_cost,
            covered_by,
            bits,
            by_end,
            min_cost,
        }
    }

    fn cost(&self, c: Choice) -> u64 {
        choice_cost(&self.gap_weight, &self.kind_cost, c)
    }

    /// A lower bound on the cost of covering the uncovered edges: edges
    /// whose valid gaps are pairwise disjoint need pairwise distinct
    /// barriers, so the sum of their cheapest choices is a bound (packed
    /// greedily in interval order, which is optimal for plain intervals).
    fn lower_bound(&self, covered: &[u32]) -> u64 {
        let words = self.bits.first().map_or(0, Vec::len);
        let mut used = vec![0u64; words];
        let mut lb = 0u64;
        for &n in &self.by_end {
            if covered[n] != 0 {
                continue;
            }
            let b = &self.bits[n];
            if b.iter().zip(&used).all(|(x, u)| x & u == 0) {
                for (u, x) in used.iter_mut().zip(b) {
                    *u |= x;
                }
                lb = lb.saturating_add(self.min_cost[n]);
            }
        }
        lb
    }

    fn gap_orders(&self, g: usize, n: usize) -> bool {
        self.valid[n].binary_search(&g).is_ok()
    }

    pub fn covers(&self, c: Choice, n: usize) -> bool {
        self.gap_orders(c.0, n) && self.kinds_of[n].contains(&c.1)
    }

    pub fn total(&self, chosen: &[Choice]) -> u64 {
        chosen.iter().map(|&c| self.cost(c)).sum()
    }

    /// Exact minimum-cost cover by branch and bound, seeded with a greedy
    /// solution. Bounded work: beyond the node budget the best found so far
    /// is returned (never observed on real specs; reported by `show`).
    pub fn solve(&self) -> Vec<Choice> {
        let mut budget = SOLVE_WORK;
        self.solve_within(&mut budget)
    }

    /// [`Problem::solve`] spending at most `budget` units of work (one unit
    /// per edge examined), so many solves can share one budget.
    pub fn solve_within(&self, budget: &mut u64) -> Vec<Choice> {
        let greedy = self.greedy();
        let mut best = (self.total(&greedy), greedy);
        let mut chosen = Vec::new();
        let mut covered = vec![0u32; self.cands.len()];
        self.bb(&mut chosen, &mut covered, 0, &mut best, budget);
        let mut sol = best.1;
        sol.sort();
        sol
    }

    fn greedy(&self) -> Vec<Choice> {
        let mut chosen: Vec<Choice> = Vec::new();
        for n in 0..self.cands.len() {
            if chosen.iter().any(|&c| self.covers(c, n)) {
                continue;
            }
            if let Some(&c) = self.cands[n].first() {
                chosen.push(c);
            }
        }
        chosen
    }

    fn bb(
        &self,
        chosen: &mut Vec<Choice>,
        covered: &mut [u32],
        cost: u64,
        best: &mut (u64, Vec<Choice>),
        budget: &mut u64,
    ) {
        // Work is counted per edge examined, not per node: a node costs
        // O(edges) and a child O(edges) more, and with hundreds of edges a
        // node budget alone ran for minutes (found by fuzzing).
        let work = self.cands.len() as u64;
        if *budget < work {
            *budget = 0;
            return;
        }
        *budget -= work;
        // The uncovered edge with the fewest choices branches least.
        let next = (0..self.cands.len())
            .filter(|&n| covered[n] == 0)
            .min_by_key(|&n| self.cands[n].len());
        let Some(n) = next else {
            if cost < best.0 {
                *best = (cost, chosen.clone());
            }
            return;
        };
        if cost.saturating_add(self.lower_bound(covered)) >= best.0 {
            return;
        }
        for &c in &self.cands[n] {
            let cc = self.cost(c);
            if cost + cc >= best.0 {
                continue;
            }
            if *budget < 2 * work {
                *budget = 0;
                return;
            }
            *budget -= 2 * work;
            chosen.push(c);
            for &m in &self.covered_by[&c] {
                covered[m] += 1;
            }
            self.bb(chosen, covered, cost + cc, best, budget);
            for &m in &self.covered_by[&c] {
                covered[m] -= 1;
            }
            chosen.pop();
        }
    }
}

fn insert(
    seq: &mut Seq,
    l: &Layout,
    chosen: &[Choice],
    table: &'static [BarrierKind],
    problem: &Problem,
    needed: &[(usize, Vec<usize>)],
    pass: &'static str,
) {
    // Insert from the last gap backwards so earlier indices stay valid.
    let mut order: Vec<Choice> = chosen.to_vec();
    order.sort_by_key(|&(g, k)| (std::cmp::Reverse(l.gaps[g].lin), std::cmp::Reverse(k)));
    for (g, k) in order {
        let covers: Vec<usize> = (0..needed.len())
            .filter(|&n| problem.covers((g, k), n))
            .map(|n| needed[n].0)
            .collect();
        let gap = &l.gaps[g];
        let block = block_mut(&mut seq.body, &gap.block);
        block.insert(
            gap.index,
            Stmt::Barrier {
                name: BarrierName::Kind(Barrier::of(&table[k])),
                origin: Origin::Pass(pass),
                covers,
            },
        );
    }
}

fn block_mut<'a>(body: &'a mut Vec<Stmt>, path: &[usize]) -> &'a mut Vec<Stmt> {
    match path.split_first() {
        None => body,
        Some((&i, rest)) => match &mut body[i] {
            Stmt::Each { body, .. } | Stmt::Range { body, .. } | Stmt::While { body, .. } => {
                block_mut(body, rest)
            }
            Stmt::If { then_, else_, .. } => match rest.split_first() {
                Some((0, rest)) => block_mut(then_, rest),
                Some((_, rest)) => block_mut(else_, rest),
                None => unreachable!("branch paths name an arm"),
            },
            _ => unreachable!("gap paths only go through loops"),
        },
    }
}

/// The barriers already in the body that cross edge `e` (position order):
/// for `explain`, the spec's own barriers and those an earlier pass kept.
pub fn existing_crossing(prog: &Program, seq: &Seq, e: &Edge) -> Vec<(Barrier, Origin)> {
    let l = layout(prog, &seq.body);
    l.existing
        .iter()
        .filter(|(lin, block, b, _)| {
            b.covers(e.from_class, e.to_class) && point_orders(&l, e, *lin, block)
        })
        .map(|(_, _, b, o)| (*b, o.clone()))
        .collect()
}

/// Every needed edge crossed by a barrier ordering its classes? Used by
/// tests and `verify` on the optimized IR.
pub fn unsatisfied_edges(prog: &Program, seq: &Seq, target: Target) -> Vec<usize> {
    let l = layout(prog, &seq.body);
    match needed(prog, seq, target) {
        Ok(n) => n
            .into_iter()
            .filter(|(e, _)| !satisfied_by_existing(&l, &seq.edges[*e]))
            .map(|(e, _)| e)
            .collect(),
        Err(_) => (0..seq.edges.len()).collect(),
    }
}
