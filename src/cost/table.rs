//! `shootdown cost`'s table: every strategy compiled, run at each request
//! size, the crossovers found by bisection, the threshold in force.

use super::measure::{measure, Dynamic, MeasureError};
use super::subject::{collect_params, subject, Subject};
use super::*;
use crate::codegen::{compile, Compiled, Options};
use crate::ir::{Expr, GSize, GranuleSet};
use crate::model::{Source, Threshold};
use crate::verify::interp::World;

/// The model for one sequence: compiled strategies and how to run them.
struct Model<'a> {
    prog: &'a Program,
    compiled: Vec<(Strategy, Compiled)>,
    world: World,
    size_param: usize,
    costs: Costs,
    cfgs: HashMap<Strategy, CoverConfig>,
}

impl Model<'_> {
    fn eval(&self, v: u64) -> Result<BTreeMap<Strategy, Dynamic>, Error> {
        self.try_eval(v)
            .map_err(|(s, e)| Error::Usage(format!("{s}: {e}")))
    }

    /// Errors name the strategy.
    fn try_eval(&self, v: u64) -> Result<BTreeMap<Strategy, Dynamic>, (String, MeasureError)> {
        let mut out = BTreeMap::new();
        for (s, c) in &self.compiled {
            let mut w = self.world.clone();
            w.params[self.size_param] = v;
            w.cover = self.cfgs[s].clone();
            let d =
                measure(self.prog, c, &w, &self.costs).map_err(|e| (s.name().to_string(), e))?;
            out.insert(*s, d);
        }
        Ok(out)
    }

    /// Cheapest of the non-auto strategies (ties in [`Strategy::ALL`]
    /// order).
    fn best(m: &BTreeMap<Strategy, Dynamic>) -> Strategy {
        let mut best: Option<(Strategy, u64)> = None;
        for s in Strategy::ALL {
            if s == Strategy::Auto {
                continue;
            }
            if let Some(d) = m.get(&s) {
                if best.is_none_or(|(_, c)| d.cost < c) {
                    best = Some((s, d.cost));
                }
            }
        }
        best.map_or(Strategy::Auto, |(s, _)| s)
    }
}

/// A `--with` sequence, compiled as the spec writes it (its own choices,
/// `--set` pins) and run at each request size of the table.
struct Beside {
    name: String,
    prog: Program,
    compiled: Compiled,
    world: World,
    size_param: usize,
}

impl Beside {
    /// `seq`'s parameter `p` is the request size; `with` must have one of
    /// the same name. Its other parameters come from `--arg`, else from
    /// `seq`'s of the same name, else 0 (noted).
    fn new(
        full: &Program,
        with: &str,
        seq: &Seq,
        p: usize,
        seq_params: &[u64],
        req: &Request,
        notes: &mut Vec<String>,
    ) -> Result<Beside, Error> {
        let mut prog = select_seq(full, with)?;
        for g in &mut prog.granules {
            apply_costs(&mut g.costs, &req.costs)?;
        }
        let ws = &prog.seqs[0];
        let size_name = &seq.params[p];
        let Some(size_param) = ws.params.iter().position(|x| x == size_name) else {
            return Err(Error::Usage(format!(
                "--with {with}: it has no parameter `{size_name}` (the request size of `{}`)",
                seq.name
            )));
        };
        let mut params = Vec::new();
        for n in &ws.params {
            let v = req
                .args
                .iter()
                .find(|(k, _)| k == n)
                .map(|(_, v)| *v)
                .or_else(|| {
                    let i = seq.params.iter().position(|x| x == n)?;
                    seq_params.get(i).copied()
                });
            params.push(v.unwrap_or_else(|| {
                if !n.ends_with("_ring") && !n.ends_with("_log2n") {
                    notes.push(format!(
                        "--with {with}: `{n}` = 0; give it with --arg {n}=N"
                    ));
                }
                0
            }));
        }
        // The ring of `seq`'s world: same queue parameters, same sizes.
        let opts = Options {
            passes: req.passes.clone(),
            cover: CoverConfig {
                mode: None,
                pins: req.pins.clone(),
            },
            ..Options::default()
        };
        let compiled = compile(&prog, req.target, &opts)
            .map_err(|d| Error::Usage(format!("--with {with}: {}", d.message)))?;
        let mut world = World {
            counts: instance_counts(&prog, ws, req.instances),
            params,
            reads: req.reads.clone(),
            cover: opts.cover.clone(),
            ..World::default()
        };
        world.add_consumers(&prog, ws);
        Ok(Beside {
            name: with.to_string(),
            prog,
            compiled,
            world,
            size_param,
        })
    }

    fn eval(&self, v: u64, costs: &Costs) -> Result<Dynamic, (String, MeasureError)> {
        let mut w = self.world.clone();
        w.params[self.size_param] = v;
        measure(&self.prog, &self.compiled, &w, costs).map_err(|e| (self.name.clone(), e))
    }
}

/// How request sizes map to the parameter the table solves for: size =
/// c0 + k * v (`n * 4K`, or `end - start` with `start` fixed).
struct Sweep {
    /// The solved parameter.
    p: usize,
    c0: u64,
    k: u64,
    /// Smallest granule (bytes).
    granule: u64,
    /// Parameter values of the rows, ascending.
    values: Vec<u64>,
    /// Every parameter's value (the solved one set per run).
    params: Vec<u64>,
    /// The request's start address.
    start: u64,
}

impl Sweep {
    fn size_of(&self, v: u64) -> u64 {
        request_size(self.c0, self.k, v)
    }
}

/// Build the cost table of sequence `seq` of `prog` (a loaded spec).
pub fn table(prog: &Program, seq_name: &str, req: &Request) -> Result<Table, Error> {
    let full = prog;
    let mut prog = select_seq(prog, seq_name)?;
    // `--cost` overrides act on the cover's set itself, so the compiled
    // `auto` code, the threshold and the table use the same numbers.
    if let Some(set) = subject(&prog, &prog.seqs[0]).map(|c| c.set) {
        apply_costs(&mut prog.granules[set].costs, &req.costs)?;
    }
    let prog = prog;
    let seq = &prog.seqs[0];
    let Some(cover) = subject(&prog, seq) else {
        return Err(Error::Usage(format!(
            "`{seq_name}` has no `cover` and no `threshold(SET)` comparison: `shootdown cost` \
             tabulates the strategies of one of those; compare fixed arguments with `shootdown diff --arg ...`"
        )));
    };
    let set = &prog.granules[cover.set];
    let costs = set.costs.clone();
    let mut notes = Vec::new();
    let sweep = solve(full, seq, &cover, req, &mut notes)?;
    let counts = instance_counts(&prog, seq, req.instances);
    let mut world = World {
        counts: counts.clone(),
        params: sweep.params.clone(),
        reads: req.reads.clone(),
        ..World::default()
    };
    world.add_consumers(&prog, seq);
    let (compiled, cfgs) = compile_all(&prog, &cover, req, &mut notes)?;
    if costs == Costs::default() {
        notes.push(format!(
            "`{}` states no costs: every cost is 0 ns; pass --cost invalidate=N,... to model one",
            set.name
        ));
    }
    let model = Model {
        prog: &prog,
        compiled,
        world,
        size_param: sweep.p,
        costs: costs.clone(),
        cfgs,
    };
    let besides = req
        .with
        .iter()
        .map(|w| Beside::new(full, w, seq, sweep.p, &sweep.params, req, &mut notes))
        .collect::<Result<Vec<_>, _>>()?;
    let (rows, bests) = tabulate(&model, &besides, &sweep, req, &mut notes)?;
    let crossovers = crossovers(&model, &sweep, &bests)?;
    let threshold = threshold_view(&prog, &cover, req, &sweep, &crossovers, &counts, &mut notes);
    let (p, k, c0, granule) = (sweep.p, sweep.k, sweep.c0, sweep.granule);
    Ok(Table {
        spec: prog.source_name.clone(),
        seq: seq.name.clone(),
        target: req.target.name().to_string(),
        set: set.name.clone(),
        cover: cover.text.clone(),
        size_param: seq.params[p].clone(),
        size_step: k,
        size_base: (c0 as i64).wrapping_neg(),
        granule,
        start: sweep.start,
        params: seq
            .params
            .iter()
            .zip(&sweep.params)
            .enumerate()
            .filter(|(i, _)| *i != p)
            .map(|(_, (n, v))| (n.clone(), *v))
            .collect(),
        instances: counts
            .iter()
            .map(|(d, n)| (prog.devices[*d].name.clone(), *n))
            .collect(),
        costs: CostsView {
            invalidate: costs.invalidate,
            store: costs.store,
            barrier: costs.barrier,
            refill: costs.refill,
            all: costs.all,
        },
        strategies: model.compiled.iter().map(|(s, _)| *s).collect(),
        with: req.with.clone(),
        rows,
        crossovers,
        threshold,
        notes,
    })
}

/// The fixed parameters (`--arg`, a granule parameter's default, the
/// start) and the one left to solve the request size for.
fn solved_param(
    full: &Program,
    seq: &Seq,
    cover: &Subject,
    req: &Request,
    notes: &mut Vec<String>,
) -> Result<(Vec<Option<u64>>, usize), Error> {
    let set = &full.granules[cover.set];
    // Arguments only a `--with` sequence has are its own.
    let own: Vec<(String, u64)> = req
        .args
        .iter()
        .filter(|(k, _)| {
            seq.params.contains(k)
                || !req.with.iter().any(|w| {
                    full.seqs
                        .iter()
                        .any(|s| s.name == *w && s.params.contains(k))
                })
        })
        .cloned()
        .collect();
    let mut fixed = params(seq, &own)?;

    // The loop granule: a parameter defaults to 4K.
    let loop_entry = crate::model::loop_entry(set);
    if let Some(GSize::Param(p)) = loop_entry.map(|e| &e.size) {
        if let Some(i) = seq.params.iter().position(|x| x == p) {
            if fixed[i].is_none() {
                fixed[i] = Some(4096);
                notes.push(format!(
                    "granule parameter `{p}` = 4096 (4K); set it with --arg {p}=N"
                ));
            }
        }
    }
    // Solve the size for its one free parameter: size = k * v.
    let mut free = Vec::new();
    collect_params(&cover.size, &mut free);
    free.retain(|i| fixed[*i].is_none());
    // `cover start, end - start`: the start is fixed (--start, else 1G)
    // and the size solved for `end`.
    if let (Expr::Param(si), 2) = (&cover.start, free.len()) {
        if free.contains(si) {
            let v = req.start.unwrap_or(1 << 30);
            fixed[*si] = Some(v);
            free.retain(|i| i != si);
            if req.start.is_none() {
                notes.push(format!(
                    "start `{}` = {v:#x} (1G); set it with --start or --arg {}=N",
                    seq.params[*si], seq.params[*si]
                ));
            }
        }
    }
    let cover_text = &cover.text;
    let [p] = free[..] else {
        return Err(Error::Usage(format!(
            "the request size `{}` of `{cover_text}` must have exactly one parameter not given by --arg (it has {})",
            cover.size.display(&seq.params),
            if free.is_empty() {
                "none".to_string()
            } else {
                free.iter()
                    .map(|i| seq.params[*i].as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            }
        )));
    };
    Ok((fixed, p))
}

/// Solve the request size for its one parameter not given by `--arg`,
/// and choose the sizes of the rows.
fn solve(
    full: &Program,
    seq: &Seq,
    cover: &Subject,
    req: &Request,
    notes: &mut Vec<String>,
) -> Result<Sweep, Error> {
    let set = &full.granules[cover.set];
    let (fixed, p) = solved_param(full, seq, cover, req, notes)?;
    let (c0, k) = size_steps(seq, cover, &fixed, p)?;
    let granule = smallest_granule(set, seq, &fixed, k);
    let sizes = row_sizes(req, granule, k)?;
    // Request sizes in units of the solved parameter (rounded up).
    let mut values: Vec<u64> = sizes.iter().map(|&s| value_for(c0, k, s)).collect();
    values.sort_unstable();
    values.dedup();
    let max_size = request_size(c0, k, values.last().copied().unwrap_or(1));
    // Start: aligned beyond every request, so `single` sees aligned ranges.
    let start = req.start.unwrap_or_else(|| {
        (1u64 << 30).max(max_size.checked_next_power_of_two().unwrap_or(1 << 63))
    });
    let world_params = start_params(seq, cover, &fixed, p, start, notes);
    let real_start = {
        let mut ps = world_params.clone();
        ps[p] = 1;
        cover.start.eval(&ps)
    };
    Ok(Sweep {
        p,
        c0,
        k,
        granule,
        values,
        params: world_params,
        start: real_start,
    })
}

/// The request size as `c0 + k * v` in the solved parameter `p` (the
/// others fixed, 0 when not): `n * 4K`, but also `end - start` with
/// `start` given (c0 = -start), so any fixed arguments work.
fn size_steps(
    seq: &Seq,
    cover: &Subject,
    fixed: &[Option<u64>],
    p: usize,
) -> Result<(u64, u64), Error> {
    let base: Vec<u64> = fixed.iter().map(|v| v.unwrap_or(0)).collect();
    let size_at = |v: u64| {
        let mut ps = base.clone();
        ps[p] = v;
        cover.size.eval(&ps)
    };
    let c0 = size_at(0);
    let k = size_at(1).wrapping_sub(c0);
    let affine = |v: u64| c0.wrapping_add(k.wrapping_mul(v));
    if k == 0
        || k > 1 << 62
        || c0 as i64 == i64::MIN
        || size_at(2) != affine(2)
        || size_at(1 << 20) != affine(1 << 20)
    {
        return Err(Error::Usage(format!(
            "the request size `{}` does not grow in steps with `{}`: give the other parameters with --arg",
            cover.size.display(&seq.params),
            seq.params[p]
        )));
    }
    Ok((c0, k))
}

/// The smallest value of the parameter giving at least `bytes` (and at
/// least one byte) when size = c0 + k * value.
fn value_for(c0: u64, k: u64, bytes: u64) -> u64 {
    let (c, kk) = (c0 as i64 as i128, k as i128);
    let want = (bytes as i128).max(1);
    let v = (want - c + kk - 1).div_euclid(kk).max(0);
    v.min(u64::MAX as i128) as u64
}

/// The size c0 + k * v (within 0 ..= 2^64 - 1).
fn request_size(c0: u64, k: u64, v: u64) -> u64 {
    let (c, k) = (c0 as i64 as i128, k as i128);
    (c + k * v as i128).clamp(0, u64::MAX as i128) as u64
}

/// The set's smallest granule in bytes: the loop granule's (a parameter's
/// as fixed, else the size step `k`), else the smallest constant one.
fn smallest_granule(set: &GranuleSet, seq: &Seq, fixed: &[Option<u64>], k: u64) -> u64 {
    match crate::model::loop_entry(set).map(|e| &e.size) {
        Some(GSize::Bytes(b)) => *b,
        Some(GSize::Param(n)) => seq
            .params
            .iter()
            .position(|x| x == n)
            .and_then(|i| fixed[i])
            .unwrap_or(k),
        _ => set
            .entries
            .iter()
            .filter_map(|e| match e.size {
                GSize::Bytes(b) => Some(b),
                _ => None,
            })
            .min()
            .unwrap_or(k),
    }
    .max(1)
}

/// The request sizes of the rows: `--sizes`, else powers of two from a
/// granule (or size step) up to 1 GiB; none over [`MAX_GRANULES`].
fn row_sizes(req: &Request, granule: u64, k: u64) -> Result<Vec<u64>, Error> {
    let unit = granule.max(k);
    let top = unit.max(1 << 30);
    let sizes: Vec<u64> = match &req.sizes {
        Some(list) => list
            .iter()
            .map(|s| match *s {
                SizeSpec::Bytes(b) => b,
                SizeSpec::Granules(n) => n.saturating_mul(granule),
            })
            .collect(),
        None => {
            let mut v = Vec::new();
            let mut s = unit.checked_next_power_of_two();
            while let Some(x) = s.filter(|&x| x <= top) {
                v.push(x);
                s = x.checked_mul(2);
            }
            v
        }
    };
    if let Some(&big) = sizes.iter().find(|&&b| b / granule > MAX_GRANULES) {
        return Err(Error::Usage(format!(
            "--sizes: {} is {} granules of {}; `cost` models requests of at most {MAX_GRANULES} granules",
            human(big),
            big / granule,
            human(granule)
        )));
    }
    Ok(sizes)
}

/// Every parameter's value for the runs (the solved one `p` set per
/// run): the fixed ones, 0 for the rest, and `start` for a cover start
/// that is one parameter.
fn start_params(
    seq: &Seq,
    cover: &Subject,
    fixed: &[Option<u64>],
    p: usize,
    start: u64,
    notes: &mut Vec<String>,
) -> Vec<u64> {
    let mut start_free = Vec::new();
    collect_params(&cover.start, &mut start_free);
    start_free.retain(|i| fixed[*i].is_none() && *i != p);
    let mut world_params: Vec<u64> = fixed.iter().map(|v| v.unwrap_or(0)).collect();
    match (&cover.start, &start_free[..]) {
        (Expr::Param(i), [_]) => world_params[*i] = start,
        (_, []) => {}
        (_, _) => notes.push(format!(
            "start `{}` is not one parameter: its parameters are 0 unless given with --arg",
            cover.start.display(&seq.params)
        )),
    }
    world_params
}

/// Compile each strategy the cover can use (`single` only over constant
/// sizes of a real cover).
#[allow(clippy::type_complexity)]
fn compile_all(
    prog: &Program,
    cover: &Subject,
    req: &Request,
    notes: &mut Vec<String>,
) -> Result<(Vec<(Strategy, Compiled)>, HashMap<Strategy, CoverConfig>), Error> {
    let seq = &prog.seqs[0];
    let set = &prog.granules[cover.set];
    let cover_text = &cover.text;
    // Compile each strategy the cover can use.
    let mut compiled = Vec::new();
    let mut cfgs = HashMap::new();
    let has_const = set
        .entries
        .iter()
        .any(|e| matches!(e.size, GSize::Bytes(_)));
    for s in Strategy::ALL {
        if s == Strategy::Single && cover.cover.is_none() {
            notes.push(format!(
                "single: `{cover_text}` is not a cover: only the loop, the flush-all and the choice between them"
            ));
            continue;
        }
        if s == Strategy::Single && !has_const {
            notes.push(format!(
                "single: `{}` has no constant sizes (its loop size is a parameter)",
                set.name
            ));
            continue;
        }
        let cfg = s.config(prog, seq, &req.pins);
        let opts = Options {
            passes: req.passes.clone(),
            cover: cfg.clone(),
            ..Options::default()
        };
        match compile(prog, req.target, &opts) {
            Ok(c) => {
                compiled.push((s, c));
                cfgs.insert(s, cfg);
            }
            Err(d) => notes.push(format!("{}: not available: {}", s.name(), d.message)),
        }
    }
    if compiled.iter().all(|(s, _)| *s == Strategy::Auto) {
        return Err(Error::Usage(format!(
            "no strategy of `{cover_text}` can be compiled"
        )));
    }
    Ok((compiled, cfgs))
}

/// One row per size (until the step bound, for default sizes), the
/// cheapest strategy of each, and notes where `auto` is not the cheapest
/// or a `--with` sequence beats every strategy.
fn tabulate(
    model: &Model,
    besides: &[Beside],
    sweep: &Sweep,
    req: &Request,
    notes: &mut Vec<String>,
) -> Result<(Vec<Row>, Vec<Strategy>), Error> {
    let granule = sweep.granule;
    let costs = &model.costs;
    let mut rows = Vec::new();
    let mut bests = Vec::new();
    for &v in &sweep.values {
        // Default sizes run to 1G; a loop of queue commands (a dozen
        // interpreter steps each) stops short of that.
        let m = model.try_eval(v).and_then(|m| {
            let with = besides
                .iter()
                .map(|b| b.eval(v, costs).map(|d| (b.name.clone(), d.cost)))
                .collect::<Result<BTreeMap<_, _>, _>>()?;
            Ok((m, with))
        });
        let (m, with) = match m {
            Ok(m) => m,
            Err((_, MeasureError::TooLong)) if req.sizes.is_none() && !rows.is_empty() => {
                notes.push(format!(
                    "sizes from {} take more than {MAX_STEPS} interpreter steps: not tabulated (give --sizes)",
                    human(sweep.size_of(v))
                ));
                break;
            }
            Err((s, e)) => return Err(Error::Usage(format!("{s}: {e}"))),
        };
        let cheapest = Model::best(&m);
        bests.push(cheapest);
        let auto = m.get(&Strategy::Auto).map(|a| {
            if a.counts.flushes > 0 {
                Strategy::All
            } else {
                Strategy::Exact
            }
        });
        let size = sweep.size_of(v);
        if let (Some(a), Some(b)) = (m.get(&Strategy::Auto), m.get(&cheapest)) {
            let best_of_two = [Strategy::Exact, Strategy::All]
                .iter()
                .filter_map(|s| m.get(s).map(|d| d.cost))
                .min();
            if best_of_two.is_some_and(|c| a.cost > c) {
                notes.push(format!(
                    "at {}: auto costs {} ns, more than the cheaper of exact and all",
                    human(size),
                    a.cost
                ));
            } else if a.cost > b.cost {
                notes.push(format!(
                    "at {}: {} ({} ns) beats auto ({} ns): auto only chooses between exact and all",
                    human(size),
                    cheapest.name(),
                    b.cost,
                    a.cost
                ));
            }
        }
        rows.push(Row {
            size,
            granules: size.div_ceil(granule),
            cost: Strategy::ALL
                .iter()
                .map(|s| (*s, m.get(s).map(|d| d.cost)))
                .collect(),
            counts: Strategy::ALL
                .iter()
                .map(|s| (*s, m.get(s).map(|d| d.counts.clone())))
                .collect(),
            cheapest,
            auto,
            with,
        });
    }
    for b in besides {
        let wins: Vec<u64> = rows
            .iter()
            .filter(|r| {
                let w = r.with[&b.name];
                r.cost.values().flatten().all(|&c| w < c)
            })
            .map(|r| r.size)
            .collect();
        if let (Some(first), Some(last)) = (wins.first(), wins.last()) {
            notes.push(format!(
                "{} is cheaper than every strategy at {} of {} sizes ({} to {})",
                b.name,
                wins.len(),
                rows.len(),
                human(*first),
                human(*last)
            ));
        }
    }

    Ok((rows, bests))
}

/// Bisection on the model between rows whose cheapest strategy differs
/// (and again in the rest of the interval).
fn crossovers(model: &Model, sweep: &Sweep, bests: &[Strategy]) -> Result<Vec<Crossover>, Error> {
    let values = &sweep.values[..bests.len()];
    let (granule, size_of) = (sweep.granule, |v| sweep.size_of(v));
    let mut crossovers = Vec::new();
    for i in 1..values.len() {
        let (mut lo, hi) = (values[i - 1], values[i]);
        let mut lo_best = bests[i - 1];
        let hi_best = bests[i];
        while lo_best != hi_best {
            let (mut a, mut b) = (lo, hi);
            while b - a > 1 {
                let mid = a + (b - a) / 2;
                if Model::best(&model.eval(mid)?) == lo_best {
                    a = mid;
                } else {
                    b = mid;
                }
            }
            let (ma, mb) = (model.eval(a)?, model.eval(b)?);
            let to = Model::best(&mb);
            crossovers.push(Crossover {
                from: lo_best,
                to,
                last: size_of(a),
                first: size_of(b),
                last_granules: size_of(a).div_ceil(granule),
                at_last: [ma[&lo_best].cost, ma[&to].cost],
                at_first: [mb[&lo_best].cost, mb[&to].cost],
            });
            lo = b;
            lo_best = to;
        }
    }

    Ok(crossovers)
}

/// The threshold in force (a `threshold(SET)` the spec reads, else the
/// cover's), and notes on how it relates to the exact -> all crossover.
fn threshold_view(
    prog: &Program,
    cover: &Subject,
    req: &Request,
    sweep: &Sweep,
    crossovers: &[Crossover],
    counts: &HashMap<DevId, u64>,
    notes: &mut Vec<String>,
) -> Option<ThresholdView> {
    let seq = &prog.seqs[0];
    let set = &prog.granules[cover.set];
    let granule = sweep.granule;
    // A threshold the spec reads with `threshold(SET)` is the one in force.
    let written = crate::model::expr_threshold_sets(seq).contains(&cover.set);
    let threshold = match (&cover.cover, written) {
        (Some(c), false) => crate::model::threshold(prog, set, c.threshold, c.body, &req.pins),
        _ => crate::model::expr_threshold(prog, &seq.name, cover.set, &req.pins),
    }
    .map(|t: Threshold| {
        let (source, per_op, all) = match t.source {
            Source::Derived { per_op, all } => ("derived", Some(per_op), Some(all)),
            Source::Spec => ("spec", None, None),
            Source::Cli => ("cli", None, None),
        };
        ThresholdView {
            bytes: t.value.saturating_mul(granule),
            name: t.name,
            value: t.value,
            source,
            per_op,
            all,
        }
    });
    let auto = cover
        .cover
        .as_ref()
        .is_none_or(|c| c.mode == CoverMode::Auto);
    if let (Some(t), false) = (&threshold, auto || written) {
        notes.push(format!(
            "the spec's cover is not `auto`: {} is what `auto` (the auto column) would use",
            t.name
        ));
    }
    if let Some(t) = &threshold {
        let x = crossovers
            .iter()
            .find(|c| c.from == Strategy::Exact && c.to == Strategy::All);
        match x {
            Some(c) if c.last_granules == t.value => notes.push(format!(
                "the exact -> all crossover ({} granules) is the threshold {} = {}",
                c.last_granules, t.name, t.value
            )),
            Some(c) => notes.push(format!(
                "the exact -> all crossover ({} granules) differs from the threshold {} = {} ({}): \
                 the threshold assumes {} and counts no per-op barriers",
                c.last_granules,
                t.name,
                t.value,
                t.source,
                if counts.is_empty() {
                    "these instance counts".to_string()
                } else {
                    "the maximum instance count".to_string()
                }
            )),
            None => {}
        }
    }
    threshold
}
