//! Modelled cost per request size and strategy (`shootdown cost`), and the
//! dynamic counts `shootdown diff` prints.
//!
//! Nothing here is measured. For one sequence and one `cover` in it, each
//! strategy the cover can use is compiled with that strategy forced
//! ([`Strategy::config`]), and the *optimized, expanded* IR (barriers
//! placed) is run in the IR interpreter for each request size. What it
//! does is counted ([`Counts`]: operations launched, MMIO stores, barriers
//! executed, over-invalidated granules, flush-alls) and priced by
//! [`super::cost`], the same formula the threshold derivation uses. The
//! crossovers, where the cheapest strategy changes, are found by bisection
//! on the model between table rows.
//!
//! Strategies:
//! - `exact`: a loop of smallest-granule operations over the range;
//! - `single`: one aligned op of the smallest covering size, else a
//!   flush-all (only for sets with constant sizes);
//! - `all`: one flush-all (`auto` with its threshold pinned to 0);
//! - `auto`: what the generated code picks (derived or pinned threshold).

use super::{Counts, Source, Threshold};
use crate::codegen::{compile, Compiled, Options};
use crate::ir::{Costs, CoverMode, DevId, Expr, GSize, Instances, Program, Seq, Stmt};
use crate::passes::cover::CoverConfig;
use crate::passes::Pass;
use crate::spec::diag::Diag;
use crate::target::Target;
use crate::verify::interp::{self, Access, World};
use serde::Serialize;
use std::collections::{BTreeMap, HashMap};

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Strategy {
    Exact,
    Single,
    All,
    Auto,
}

impl Strategy {
    /// In tie-break order: on equal cost the earlier one is "cheapest"
    /// (a loop up to and including the threshold, as `auto` does).
    pub const ALL: [Strategy; 4] = [
        Strategy::Exact,
        Strategy::Single,
        Strategy::All,
        Strategy::Auto,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Strategy::Exact => "exact",
            Strategy::Single => "single",
            Strategy::All => "all",
            Strategy::Auto => "auto",
        }
    }

    pub fn parse(s: &str) -> Option<Strategy> {
        Strategy::ALL.into_iter().find(|x| x.name() == s.trim())
    }

    /// The cover configuration forcing this strategy on every cover of
    /// `seq` (`user` pins come after, so `all` wins for its own names).
    pub fn config(self, prog: &Program, seq: &Seq, user: &[(String, u64)]) -> CoverConfig {
        let mut pins = Vec::new();
        if self == Strategy::All {
            crate::ir::walk(&seq.body, &mut |s| {
                if let Stmt::Cover { threshold, .. } = s {
                    pins.push((threshold.clone(), 0));
                }
            });
        }
        // `threshold(SET)` written out in an `if` (the spec makes the
        // choice, its covers keep their modes): `all` flushes at every
        // size, the loop strategies never do.
        let written = super::expr_threshold_names(prog, seq);
        for name in &written {
            let v = match self {
                Strategy::Auto => continue,
                Strategy::All => 0,
                Strategy::Exact | Strategy::Single => u64::MAX,
            };
            pins.push((name.clone(), v));
        }
        pins.extend(user.iter().cloned());
        if !written.is_empty() {
            return CoverConfig { mode: None, pins };
        }
        CoverConfig {
            mode: Some(match self {
                Strategy::Exact => CoverMode::Exact,
                Strategy::Single => CoverMode::Single,
                Strategy::All | Strategy::Auto => CoverMode::Auto,
            }),
            pins,
        }
    }
}

/// A failure: a spec error (rendered by the caller against the spec with
/// index `.0`: 0 for the first spec, 1 for the second) or a usage error.
#[derive(Debug)]
pub enum Error {
    Spec(usize, Diag),
    Usage(String),
}

/// The program reduced to sequence `name` (so forcing a mode on it cannot
/// fail because of another sequence).
pub fn select_seq(prog: &Program, name: &str) -> Result<Program, Error> {
    let Some(s) = prog.seqs.iter().find(|s| s.name == name) else {
        return Err(Error::Usage(format!(
            "{} has no sequence `{name}` (it has: {})",
            prog.source_name,
            seq_names(prog)
        )));
    };
    let mut p = prog.clone();
    p.seqs = vec![s.clone()];
    Ok(p)
}

pub fn seq_names(prog: &Program) -> String {
    prog.seqs
        .iter()
        .map(|s| s.name.as_str())
        .collect::<Vec<_>>()
        .join(", ")
}

/// Instance counts for the run: `instances` for every dynamic set the
/// sequence uses, else its maximum (what the threshold derivation
/// assumes).
pub fn instance_counts(prog: &Program, seq: &Seq, instances: Option<u64>) -> HashMap<DevId, u64> {
    seq.devices
        .iter()
        .filter_map(|&d| match prog.devices[d].instances {
            Instances::Dynamic { max } => Some((d, instances.unwrap_or(max))),
            _ => None,
        })
        .collect()
}

/// Parameter values by name; unknown names are a usage error.
pub fn params(seq: &Seq, args: &[(String, u64)]) -> Result<Vec<Option<u64>>, Error> {
    let mut out = vec![None; seq.params.len()];
    for (k, v) in args {
        let Some(i) = seq.params.iter().position(|p| p == k) else {
            return Err(Error::Usage(format!(
                "--arg {k}: `{}` has parameters {}",
                seq.name,
                if seq.params.is_empty() {
                    "none".to_string()
                } else {
                    seq.params.join(", ")
                }
            )));
        };
        out[i] = Some(*v);
    }
    Ok(out)
}

/// `--cost KIND=NS` overrides: invalidate (or op), store, barrier,
/// refill, all.
pub fn apply_costs(costs: &mut Costs, overrides: &[(String, u64)]) -> Result<(), Error> {
    for (k, v) in overrides {
        let slot = match k.as_str() {
            "invalidate" | "op" => &mut costs.invalidate,
            "store" => &mut costs.store,
            "barrier" => &mut costs.barrier,
            "refill" => &mut costs.refill,
            "all" => &mut costs.all,
            _ => {
                return Err(Error::Usage(format!(
                    "--cost {k}: costs are invalidate, store, barrier, refill, all"
                )))
            }
        };
        *slot = *v;
    }
    Ok(())
}

/// The costs a sequence is priced with: those of the granule set of its
/// first cover, else of the first set on a device it uses that states
/// any, else of the first set on such a device (costs may all be 0), else
/// none. Returns the set's index too.
pub fn seq_costs(prog: &Program, seq: &Seq) -> (Costs, Option<usize>) {
    let mut first = None;
    crate::ir::walk(&seq.body, &mut |s| {
        if let (Stmt::Cover { set, .. }, None) = (s, first) {
            first = Some(*set);
        }
    });
    let on_dev = |g: &crate::ir::GranuleSet| g.dev.is_some_and(|d| seq.devices.contains(&d));
    // Then a set the sequence reads with `threshold(SET)` (queue sets).
    let first = first.or_else(|| super::expr_threshold_sets(seq).into_iter().next());
    let set = first
        .or_else(|| {
            prog.granules
                .iter()
                .position(|g| on_dev(g) && g.costs != Costs::default())
        })
        .or_else(|| prog.granules.iter().position(on_dev));
    match set {
        Some(i) => (prog.granules[i].costs.clone(), Some(i)),
        None => (Costs::default(), None),
    }
}

/// Statements one interpreted run may execute. The interpreter keeps every
/// access of a run (about 80 bytes each): this bounds a run to ~300 MB and
/// a few seconds. A 1G request in 4K pages on six instances takes ~1M.
pub const MAX_STEPS: u64 = 4_000_000;

/// Smallest granules one request of `cost` may span (1G of 4K pages):
/// beyond, a table is refused up front rather than by the step bound.
pub const MAX_GRANULES: u64 = 1 << 18;

/// What one run did, counted and priced.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Dynamic {
    pub counts: Counts,
    /// Barriers executed, by mnemonic.
    pub barriers: BTreeMap<String, u64>,
    pub loads: u64,
    /// CPU invalidate instructions executed (also counted in `ops`).
    pub invalidates: u64,
    /// Queue commands the simulated consumer took, by record.
    pub commands: BTreeMap<String, u64>,
    #[serde(rename = "return")]
    pub ret: i64,
    /// Modelled cost (ns).
    pub cost: u64,
}

/// Run sequence 0 of `c.opt` (optimized and expanded, barriers placed) in
/// the interpreter and count what it does; over-invalidation and
/// flush-alls come from running the unexpanded `prog` (sequence 0) with
/// the same forced cover configuration (`world.cover`). The two runs
/// must agree on the stores and invalidates performed: that checks the
/// cover expansion against the interpreter's own cover semantics.
pub fn measure(
    prog: &Program,
    c: &Compiled,
    world: &World,
    costs: &Costs,
) -> Result<Dynamic, MeasureError> {
    let too_long = |_| MeasureError::TooLong;
    let run = interp::run_bounded(&c.opt, &c.opt.seqs[0], world, MAX_STEPS).map_err(too_long)?;
    let spec = interp::run_bounded(prog, &prog.seqs[0], world, MAX_STEPS).map_err(too_long)?;
    let mut d = Dynamic {
        ret: run.ret,
        ..Dynamic::default()
    };
    let mut spec_stores = 0;
    let mut spec_invs = 0;
    for (_, a) in &spec.accesses {
        match a {
            Access::Store { .. } => spec_stores += 1,
            Access::Invalidate { .. } => spec_invs += 1,
            _ => {}
        }
    }
    // A store launches an operation when a granule set on its device says
    // so; on a device without one, when no `require REG before ...` names
    // its register: registers that must precede others carry operands
    // (VT-d's IVA before IOTLB: one page flush is one op, not two).
    let launch = |dev: DevId, reg: crate::ir::RegId| {
        // A queue's doorbell publishes commands; they are counted below.
        if c.opt.queues.iter().any(|q| q.dev == dev && q.prod == reg) {
            return false;
        }
        let mut sets = c
            .opt
            .granules
            .iter()
            .filter(|g| g.dev == Some(dev))
            .peekable();
        if sets.peek().is_none() {
            !c.opt.devices[dev].requires.iter().any(|r| r.before == reg)
        } else {
            sets.any(|g| super::is_launch(g, dev, reg))
        }
    };
    for (_, a) in &run.accesses {
        match a {
            Access::Store { dev, reg, .. } => {
                d.counts.stores += 1;
                if launch(*dev, *reg) {
                    d.counts.ops += 1;
                }
            }
            Access::Load { .. } => d.loads += 1,
            Access::Invalidate { .. } => {
                d.invalidates += 1;
                d.counts.ops += 1;
            }
            Access::Barrier { name } => {
                d.counts.barriers += 1;
                *d.barriers.entry(name.clone()).or_default() += 1;
            }
        }
    }
    if (spec_stores, spec_invs, spec.ret) != (d.counts.stores, d.invalidates, run.ret) {
        return Err(MeasureError::Disagree(format!(
            "{} stores, {} invalidates, return {} vs {spec_stores}, {spec_invs}, {}",
            d.counts.stores, d.invalidates, run.ret, spec.ret
        )));
    }
    for cv in &spec.covers {
        d.counts.refill += cv
            .covered
            .saturating_sub(cv.requested)
            .checked_div(cv.granule)
            .unwrap_or(0);
        d.counts.flushes += cv.flushes;
    }
    d.counts.flushes += spec.loose_flushes;
    // Queue commands (what the simulated consumer took): each is an
    // operation of the set that names its record, a flush-all when that
    // is the set's `all` command.
    if run.commands.len() != spec.commands.len() {
        return Err(MeasureError::Disagree(format!(
            "{} queue commands vs {}",
            run.commands.len(),
            spec.commands.len()
        )));
    }
    for (name, _) in &run.commands {
        let entry = c
            .opt
            .granules
            .iter()
            .flat_map(|g| &g.entries)
            .find(|e| matches!(&e.via, Some(crate::ir::Via::Record(r)) if r == name));
        if let Some(e) = entry {
            d.counts.ops += 1;
            if e.size == GSize::All {
                d.counts.flushes += 1;
            }
        }
        *d.commands.entry(name.clone()).or_default() += 1;
    }
    d.cost = super::cost(costs, &d.counts);
    Ok(d)
}

/// Why a run could not be measured.
#[derive(Debug)]
pub enum MeasureError {
    /// More than [`MAX_STEPS`] interpreter steps.
    TooLong,
    /// The optimized IR and the spec did different things (a compiler bug).
    Disagree(String),
}

impl std::fmt::Display for MeasureError {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        match self {
            MeasureError::TooLong => write!(
                f,
                "the run takes more than {MAX_STEPS} interpreter steps: give smaller --sizes or --instances"
            ),
            MeasureError::Disagree(m) => write!(f, "the generated IR and the spec disagree: {m}"),
        }
    }
}

/// One entry of `--sizes`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SizeSpec {
    Bytes(u64),
    /// A number of smallest granules (`8p`).
    Granules(u64),
}

/// `--sizes 4K,64K,2M,1G,8p,512p`: bytes (decimal, 0x hex, K/M/G/T
/// suffixes, powers of 1024) or, with a `p` suffix, a number of smallest
/// granules ("pages").
pub fn parse_sizes(s: &str) -> Result<Vec<SizeSpec>, String> {
    s.split(',')
        .filter(|p| !p.trim().is_empty())
        .map(|p| {
            let p = p.trim();
            let bad = || format!("--sizes: `{p}` is not a size (e.g. 4K, 2M, 0x1000, 8p)");
            if let Some(n) = p.strip_suffix('p').or_else(|| p.strip_suffix("pages")) {
                return n
                    .trim()
                    .parse::<u64>()
                    .map(SizeSpec::Granules)
                    .map_err(|_| bad());
            }
            parse_bytes(p).map(SizeSpec::Bytes).ok_or_else(bad)
        })
        .collect()
}

/// `64K` -> 65536; also plain decimal and 0x hex.
pub fn parse_bytes(s: &str) -> Option<u64> {
    let s = s.trim();
    if let Some(h) = s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        return u64::from_str_radix(&h.replace('_', ""), 16).ok();
    }
    let (num, shift) = match s.chars().last()? {
        'K' | 'k' => (&s[..s.len() - 1], 10),
        'M' | 'm' => (&s[..s.len() - 1], 20),
        'G' | 'g' => (&s[..s.len() - 1], 30),
        'T' | 't' => (&s[..s.len() - 1], 40),
        _ => (s, 0),
    };
    let n: u64 = num.replace('_', "").parse().ok()?;
    n.checked_mul(1u64 << shift)
}

/// `65536` -> `64K`, `528384` -> `516K`; bytes when not a multiple of 1K.
pub fn human(b: u64) -> String {
    for (shift, unit) in [(40, "T"), (30, "G"), (20, "M"), (10, "K")] {
        if b >= 1 << shift && b.is_multiple_of(1 << shift) {
            return format!("{}{unit}", b >> shift);
        }
    }
    b.to_string()
}

/// What `shootdown cost` is asked.
#[derive(Clone, Debug)]
pub struct Request {
    pub target: Target,
    pub passes: Vec<Pass>,
    /// Parameter values (`--arg`); the cover's size is solved for its one
    /// remaining parameter, its start set to `start`.
    pub args: Vec<(String, u64)>,
    pub sizes: Option<Vec<SizeSpec>>,
    pub start: Option<u64>,
    pub instances: Option<u64>,
    /// Scripted register reads (`--read`), e.g. a status bit the device
    /// clears, so that polls see it.
    pub reads: HashMap<(DevId, crate::ir::RegId), Vec<u64>>,
    pub pins: Vec<(String, u64)>,
    pub costs: Vec<(String, u64)>,
    /// Other sequences of the spec priced beside the strategies (`--with`),
    /// given the same request and the arguments of the same names.
    pub with: Vec<String>,
}

#[derive(Clone, Debug, Serialize)]
pub struct Row {
    /// Request size in bytes.
    pub size: u64,
    /// In smallest granules (rounded up).
    pub granules: u64,
    /// Modelled cost (ns) per strategy; null where it cannot be used.
    pub cost: BTreeMap<Strategy, Option<u64>>,
    /// Counts per strategy.
    pub counts: BTreeMap<Strategy, Option<Counts>>,
    /// The cheapest of exact, single and all (ties: that order).
    pub cheapest: Strategy,
    /// What the generated `auto` code does at this size (exact or all).
    pub auto: Option<Strategy>,
    /// Modelled cost (ns) of each `--with` sequence at this size.
    pub with: BTreeMap<String, u64>,
}

#[derive(Clone, Debug, Serialize)]
pub struct Crossover {
    pub from: Strategy,
    pub to: Strategy,
    /// Largest request size (bytes) at which `from` is still the cheapest.
    pub last: u64,
    /// Smallest request size at which `to` is.
    pub first: u64,
    /// `last` in smallest granules.
    pub last_granules: u64,
    /// Costs of `from` and `to` at `last`, and at `first`.
    pub at_last: [u64; 2],
    pub at_first: [u64; 2],
}

#[derive(Clone, Debug, Serialize)]
pub struct ThresholdView {
    pub name: String,
    /// Largest number of granules `auto` handles with the loop.
    pub value: u64,
    /// derived, spec or cli.
    pub source: &'static str,
    pub per_op: Option<u64>,
    pub all: Option<u64>,
    /// `value` granules in bytes.
    pub bytes: u64,
}

#[derive(Clone, Debug, Serialize)]
pub struct CostsView {
    pub invalidate: u64,
    pub store: u64,
    pub barrier: u64,
    pub refill: u64,
    pub all: u64,
}

#[derive(Clone, Debug, Serialize)]
pub struct Table {
    pub spec: String,
    pub seq: String,
    pub target: String,
    pub set: String,
    /// The cover as the spec writes it.
    pub cover: String,
    /// The parameter solved for the request size, and bytes per unit of it.
    pub size_param: String,
    pub size_step: u64,
    /// The request size is `size_step * param - size_base` (`end - start`
    /// with start given: size_base = start).
    pub size_base: i64,
    /// Smallest granule (bytes): the unit of `granules` and of refill.
    pub granule: u64,
    pub start: u64,
    pub params: BTreeMap<String, u64>,
    pub instances: BTreeMap<String, u64>,
    pub costs: CostsView,
    pub strategies: Vec<Strategy>,
    /// The `--with` sequences, in column order.
    pub with: Vec<String>,
    pub rows: Vec<Row>,
    pub crossovers: Vec<Crossover>,
    pub threshold: Option<ThresholdView>,
    pub notes: Vec<String>,
}

fn collect_params(e: &Expr, out: &mut Vec<usize>) {
    match e {
        Expr::Param(i) => {
            if !out.contains(i) {
                out.push(*i)
            }
        }
        _ => e
            .children()
            .into_iter()
            .for_each(|c| collect_params(c, out)),
    }
}

struct Cover<'a> {
    set: usize,
    start: &'a Expr,
    size: &'a Expr,
    threshold: &'a str,
    body: &'a [Stmt],
    mode: CoverMode,
}

fn first_cover(seq: &Seq) -> Option<Cover<'_>> {
    let mut found = None;
    crate::ir::walk(&seq.body, &mut |s| {
        if let (
            Stmt::Cover {
                set,
                start,
                size,
                threshold,
                body,
                mode,
                ..
            },
            None,
        ) = (s, &found)
        {
            found = Some(Cover {
                set: *set,
                start,
                size,
                threshold,
                body,
                mode: *mode,
            });
        }
    });
    found
}

/// What a table sweeps: the request (start and size in bytes) of the
/// sequence's first `cover`, or, in a sequence without one, of its first
/// `if X > threshold(SET)`: there `X` counts the set's smallest granules
/// (`(size >> 12) > threshold(s1cmd)`), so the request is `size`.
struct Subject<'a> {
    set: usize,
    start: Expr,
    size: Expr,
    cover: Option<Cover<'a>>,
    text: String,
}

fn subject<'a>(prog: &Program, seq: &'a Seq) -> Option<Subject<'a>> {
    if let Some(c) = first_cover(seq) {
        let set = &prog.granules[c.set];
        let text = format!(
            "cover {}, {} with {} {}",
            c.start.display(&seq.params),
            c.size.display(&seq.params),
            set.name,
            match c.mode {
                CoverMode::Single => "single",
                CoverMode::Exact => "exact",
                CoverMode::Auto => "auto",
                CoverMode::Range => "range",
            }
        );
        return Some(Subject {
            set: c.set,
            start: c.start.clone(),
            size: c.size.clone(),
            text,
            cover: Some(c),
        });
    }
    let mut found = None;
    crate::ir::walk(&seq.body, &mut |s| {
        let (Stmt::If { cond, .. }, None) = (s, &found) else {
            return;
        };
        let set_of = |e: &Expr| match e {
            Expr::Binding(crate::ir::expr::Binding::Threshold(t)) => Some(*t),
            _ => None,
        };
        let (set, x, cmp_side_b) = match (set_of(&cond.a), set_of(&cond.b)) {
            (_, Some(t)) => (t, &cond.a, true),
            (Some(t), None) => (t, &cond.b, false),
            (None, None) => return,
        };
        let Some(g) = prog.granules.get(set).and_then(super::loop_entry) else {
            return;
        };
        let GSize::Bytes(granule) = g.size else {
            return;
        };
        // Granules back to bytes: `bytes >> log2(granule)` is `bytes`.
        let bytes = match x {
            Expr::Bin(crate::ir::expr::BinOp::Shr, y, k) if matches!(**k, Expr::Const(k) if 1u64.checked_shl(k as u32) == Some(granule)) => {
                (**y).clone()
            }
            _ => Expr::Bin(
                crate::ir::expr::BinOp::Mul,
                Box::new(x.clone()),
                Box::new(Expr::Const(granule)),
            ),
        };
        let start = match &bytes {
            Expr::Bin(crate::ir::expr::BinOp::Sub, _, b) if matches!(**b, Expr::Param(_)) => {
                (**b).clone()
            }
            _ => Expr::Const(0),
        };
        // `X > T` is held as `T < X`: print it the way it was written.
        use crate::lir::Cmp;
        let rel = match (cmp_side_b, cond.cmp) {
            (_, Cmp::Eq) => "==",
            (_, Cmp::Ne) => "!=",
            (true, Cmp::Ltu) => "<",
            (true, Cmp::Geu) => ">=",
            (false, Cmp::Ltu) => ">",
            (false, Cmp::Geu) => "<=",
        };
        let text = format!(
            "if {} {rel} threshold({})",
            x.display(&seq.params),
            prog.granules[set].name
        );
        found = Some(Subject {
            set,
            start,
            size: bytes,
            cover: None,
            text,
        });
    });
    found
}

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
    let loop_entry = super::loop_entry(set);
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
    let cover_text = cover.text.clone();
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
    let base: Vec<u64> = fixed.iter().map(|v| v.unwrap_or(0)).collect();
    let size_at = |v: u64| {
        let mut ps = base.clone();
        ps[p] = v;
        cover.size.eval(&ps)
    };
    // size = c + k * v: `n * 4K`, but also `end - start` with `start`
    // given (c = -start), so any fixed arguments work.
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
    let (c, kk) = (c0 as i64 as i128, k as i128);
    // The smallest value of the parameter giving at least `bytes` (and at
    // least one byte).
    let value_for = |bytes: u64| -> u64 {
        let want = (bytes as i128).max(1);
        let v = (want - c + kk - 1).div_euclid(kk).max(0);
        v.min(u64::MAX as i128) as u64
    };
    let size_of = |v: u64| (c + kk * v as i128).clamp(0, u64::MAX as i128) as u64;
    let granule = match loop_entry.map(|e| &e.size) {
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
    .max(1);
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
    // Request sizes in units of the solved parameter (rounded up).
    let mut values: Vec<u64> = sizes.iter().map(|&s| value_for(s)).collect();
    values.sort_unstable();
    values.dedup();
    let max_size = size_of(values.last().copied().unwrap_or(1));
    // Start: aligned beyond every request, so `single` sees aligned ranges.
    let start = req.start.unwrap_or_else(|| {
        (1u64 << 30).max(max_size.checked_next_power_of_two().unwrap_or(1 << 63))
    });
    let mut start_free = Vec::new();
    collect_params(&cover.start, &mut start_free);
    start_free.retain(|i| fixed[*i].is_none() && *i != p);
    let mut world_params = base.clone();
    match (&cover.start, &start_free[..]) {
        (Expr::Param(i), [_]) => world_params[*i] = start,
        (_, []) => {}
        (_, _) => notes.push(format!(
            "start `{}` is not one parameter: its parameters are 0 unless given with --arg",
            cover.start.display(&seq.params)
        )),
    }
    let real_start = {
        let mut ps = world_params.clone();
        ps[p] = 1;
        cover.start.eval(&ps)
    };

    let counts = instance_counts(&prog, seq, req.instances);
    let mut world = World {
        counts: counts.clone(),
        params: world_params.clone(),
        reads: req.reads.clone(),
        ..World::default()
    };
    world.add_consumers(&prog, seq);

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
        let cfg = s.config(&prog, seq, &req.pins);
        let opts = Options {
            passes: req.passes.clone(),
            cover: cfg.clone(),
            ..Options::default()
        };
        match compile(&prog, req.target, &opts) {
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
        size_param: p,
        costs: costs.clone(),
        cfgs,
    };
    let besides = req
        .with
        .iter()
        .map(|w| Beside::new(full, w, seq, p, &world_params, req, &mut notes))
        .collect::<Result<Vec<_>, _>>()?;

    let mut rows = Vec::new();
    let mut bests = Vec::new();
    for &v in &values {
        // Default sizes run to 1G; a loop of queue commands (a dozen
        // interpreter steps each) stops short of that.
        let m = model.try_eval(v).and_then(|m| {
            let with = besides
                .iter()
                .map(|b| b.eval(v, &costs).map(|d| (b.name.clone(), d.cost)))
                .collect::<Result<BTreeMap<_, _>, _>>()?;
            Ok((m, with))
        });
        let (m, with) = match m {
            Ok(m) => m,
            Err((_, MeasureError::TooLong)) if req.sizes.is_none() && !rows.is_empty() => {
                notes.push(format!(
                    "sizes from {} take more than {MAX_STEPS} interpreter steps: not tabulated (give --sizes)",
                    human(size_of(v))
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
        let size = size_of(v);
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
    for b in &besides {
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

    values.truncate(rows.len());
    // Crossovers: bisection on the model between rows whose cheapest
    // strategy differs (and again in the rest of the interval).
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

    // A threshold the spec reads with `threshold(SET)` is the one in force.
    let written = super::expr_threshold_sets(seq).contains(&cover.set);
    let threshold = match (&cover.cover, written) {
        (Some(c), false) => super::threshold(&prog, set, c.threshold, c.body, &req.pins),
        _ => super::expr_threshold(&prog, &seq.name, cover.set, &req.pins),
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
    Ok(Table {
        spec: prog.source_name.clone(),
        seq: seq.name.clone(),
        target: req.target.name().to_string(),
        set: set.name.clone(),
        cover: cover_text,
        size_param: seq.params[p].clone(),
        size_step: k,
        size_base: (c0 as i64).wrapping_neg(),
        granule,
        start: real_start,
        params: seq
            .params
            .iter()
            .zip(&world_params)
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

impl Table {
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).unwrap_or_default()
    }

    pub fn to_text(&self) -> String {
        let mut o = String::new();
        o.push_str(&format!(
            "MODELLED cost (ns, not measured) of `{}` in {} on {}\n{}   [{} = {}; start {:#x}; granule {}]\n",
            self.seq,
            self.spec,
            self.target,
            self.cover,
            self.size_param,
            match (self.size_base, self.size_step) {
                (0, k) => format!("request / {k}"),
                (b, 1) => format!("{:#x} + request", b.unsigned_abs()),
                (b, k) => format!("({:#x} + request) / {k}", b.unsigned_abs()),
            },
            self.start,
            human(self.granule)
        ));
        let c = &self.costs;
        o.push_str(&format!(
            "costs: invalidate {} ns/op, store {} ns, barrier {} ns, refill {} ns/granule, all {} ns/flush",
            c.invalidate, c.store, c.barrier, c.refill, c.all
        ));
        if !self.instances.is_empty() {
            let inst: Vec<String> = self
                .instances
                .iter()
                .map(|(d, n)| format!("{d} x{n}"))
                .collect();
            o.push_str(&format!("; instances {}", inst.join(", ")));
        }
        o.push_str("\n\n");
        o.push_str(&format!("{:>8} {:>9}", "size", "granules"));
        for s in &self.strategies {
            o.push_str(&format!(" {:>12}", s.name()));
        }
        for w in &self.with {
            o.push_str(&format!(" {w:>12}"));
        }
        o.push_str("  cheapest\n");
        for r in &self.rows {
            o.push_str(&format!("{:>8} {:>9}", human(r.size), r.granules));
            for s in &self.strategies {
                let cell = match (r.cost.get(s).copied().flatten(), s) {
                    (Some(v), Strategy::Auto) => format!(
                        "{v}{}",
                        match r.auto {
                            Some(Strategy::All) => "a",
                            Some(_) => "e",
                            None => "",
                        }
                    ),
                    (Some(v), _) => v.to_string(),
                    (None, _) => "-".into(),
                };
                o.push_str(&format!(" {cell:>12}"));
            }
            for w in &self.with {
                o.push_str(&format!(" {:>12}", r.with[w]));
            }
            o.push_str(&format!("  {}\n", r.cheapest.name()));
        }
        if self.strategies.contains(&Strategy::Auto) {
            o.push_str("(auto: e = runs the exact loop, a = flushes all)\n");
        }
        o.push_str("\ncrossovers (bisection on the model):\n");
        if self.crossovers.is_empty() {
            o.push_str("  none in this range\n");
        }
        for x in &self.crossovers {
            let (f, t) = (x.from.name(), x.to.name());
            o.push_str(&format!(
                "  {f} -> {t}: {f} cheapest up to {} ({} granules; {f} {} ns, {t} {} ns{}), {t} from {} ({f} {} ns, {t} {} ns)\n",
                human(x.last),
                x.last_granules,
                x.at_last[0],
                x.at_last[1],
                if x.at_last[0] == x.at_last[1] {
                    ": a tie goes to the first, as `auto` does"
                } else {
                    ""
                },
                human(x.first),
                x.at_first[0],
                x.at_first[1]
            ));
        }
        match &self.threshold {
            Some(t) => {
                o.push_str(&format!(
                    "threshold: {} = {} granules ({}), {}",
                    t.name,
                    t.value,
                    human(t.bytes),
                    t.source
                ));
                if let (Some(p), Some(a)) = (t.per_op, t.all) {
                    o.push_str(&format!(": floor({a} ns all / {p} ns per op)"));
                }
                o.push('\n');
            }
            None => o.push_str("threshold: none (the cover is not `auto`, or states no costs)\n"),
        }
        for n in &self.notes {
            o.push_str(&format!("note: {n}\n"));
        }
        o
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_parse_and_print() {
        assert_eq!(
            parse_sizes("4K, 2M,1G,0x1000,4096,8p").unwrap(),
            vec![
                SizeSpec::Bytes(4096),
                SizeSpec::Bytes(2 << 20),
                SizeSpec::Bytes(1 << 30),
                SizeSpec::Bytes(4096),
                SizeSpec::Bytes(4096),
                SizeSpec::Granules(8)
            ]
        );
        assert!(parse_sizes("4Q").is_err());
        assert_eq!(human(528384), "516K");
        assert_eq!(human(1 << 30), "1G");
        assert_eq!(human(1691649), "1691649");
    }

    /// One loop operation counted by running the generated IR costs what
    /// the threshold derivation says it costs.
    #[test]
    fn dynamic_op_cost_is_the_static_one() {
        let src = std::fs::read_to_string("examples/npu2_tce_kill.inv").unwrap();
        let prog = crate::load("npu2_tce_kill.inv", &src).unwrap();
        let req = Request {
            target: Target::Power64,
            passes: crate::passes::parse_list("all").unwrap(),
            args: Vec::new(),
            sizes: Some(vec![SizeSpec::Granules(1), SizeSpec::Granules(2)]),
            start: None,
            instances: None,
            reads: HashMap::new(),
            pins: Vec::new(),
            costs: Vec::new(),
            with: Vec::new(),
        };
        let t = table(&prog, "tce_kill", &req).unwrap();
        let th = t.threshold.as_ref().unwrap();
        let exact = |r: &Row| r.cost[&Strategy::Exact].unwrap();
        assert_eq!(exact(&t.rows[1]) - exact(&t.rows[0]), th.per_op.unwrap());
        assert_eq!(t.rows[0].cost[&Strategy::All], th.all);
    }
}
