//! Modelled cost per request size and strategy (`shootdown cost`), and the
//! dynamic counts `shootdown diff` prints.
//!
//! Nothing here is measured. For one sequence and one `cover` in it, each
//! strategy the cover can use is compiled with that strategy forced
//! ([`Strategy::config`]), and the *optimized, expanded* IR (barriers
//! placed) is run in the IR interpreter for each request size. What it
//! does is counted ([`Counts`]: operations launched, MMIO stores, barriers
//! executed, over-invalidated granules, flush-alls) and priced by
//! [`crate::model::cost`], the same formula the threshold derivation uses. The
//! crossovers, where the cheapest strategy changes, are found by bisection
//! on the model between table rows.
//!
//! Strategies:
//! - `exact`: a loop of smallest-granule operations over the range;
//! - `single`: one aligned op of the smallest covering size, else a
//!   flush-all (only for sets with constant sizes);
//! - `all`: one flush-all (`auto` with its threshold pinned to 0);
//! - `auto`: what the generated code picks (derived or pinned threshold).

mod measure;
pub mod plot;
mod subject;
mod table;
mod text;

pub use measure::{measure, Dynamic, MeasureError};
pub use table::table;

use crate::ir::{Costs, CoverMode, DevId, Instances, Program, Seq, Stmt};
use crate::isa::Target;
use crate::model::Counts;
use crate::passes::cover::CoverConfig;
use crate::passes::Pass;
use crate::spec::diag::Diag;
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
        let written = crate::model::expr_threshold_names(prog, seq);
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
        let Some(slot) = costs.named(k) else {
            return Err(Error::Usage(format!(
                "--cost {k}: costs are invalidate, store, barrier, refill, all"
            )));
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
    let first = first.or_else(|| {
        crate::ir::thresholds::expr_threshold_sets(seq)
            .into_iter()
            .next()
    });
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
