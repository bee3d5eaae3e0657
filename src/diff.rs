//! `shootdown diff`: two strategies for one sequence side by side: the
//! unified diff of their `.S` text, their static counts and, for given
//! arguments, what each does when run (IR interpreter over the optimized
//! IR) and its modelled cost.

use crate::codegen::{compile, Options};
use crate::cost::{self, Dynamic, Error, Strategy};
use crate::emit::stats::{self, SeqStats};
use crate::ir::Program;
use crate::isa::Target;
use crate::passes::cover::CoverConfig;
use crate::passes::Pass;
use crate::verify::interp::World;
use std::collections::{BTreeMap, BTreeSet};

/// One side of the diff.
pub struct Side<'a> {
    /// 0 for the first spec, 1 for the second (for error reports).
    pub spec_index: usize,
    pub prog: &'a Program,
    pub passes: Vec<Pass>,
    /// As given (`none`, `all`, a list), for the header.
    pub passes_text: String,
    /// Forced cover strategy, if any.
    pub strategy: Option<Strategy>,
    /// Scripted register reads for the dynamic counts (`--read`).
    pub reads: std::collections::HashMap<(crate::ir::DevId, crate::ir::RegId), Vec<u64>>,
    /// The target this side is compiled for: `--a-target`/`--b-target`,
    /// else `--target`, else its own spec's first.
    pub target: Target,
    /// Thresholds pinned on this side (`--set` and `--a-set`/`--b-set`).
    pub pins: Vec<(String, u64)>,
    /// Features fixed on this side (`--a-feature`/`--b-feature`).
    pub features: Vec<(String, bool)>,
}

pub struct Request {
    pub seq: String,
    pub args: Vec<(String, u64)>,
    /// Instances of every dynamic set (default: its maximum).
    pub instances: Option<u64>,
    pub costs: Vec<(String, u64)>,
    /// Run both sides (when arguments were given).
    pub dynamic: bool,
    /// Compare the `.S` texts as emitted (else normalized: see
    /// [`crate::emit::normalize`]).
    pub raw: bool,
}

struct Done {
    label: String,
    text: String,
    stats: SeqStats,
    dynamic: Option<Dynamic>,
    costs_note: String,
}

fn side(s: &Side<'_>, req: &Request) -> Result<Done, Error> {
    let mut prog = cost::select_seq(s.prog, &req.seq)?;
    // `--cost` acts on the set itself, so `auto` code and the pricing agree.
    let (_, set) = cost::seq_costs(&prog, &prog.seqs[0]);
    if let Some(i) = set {
        cost::apply_costs(&mut prog.granules[i].costs, &req.costs)?;
    }
    let (mut costs, _) = cost::seq_costs(&prog, &prog.seqs[0]);
    if set.is_none() {
        cost::apply_costs(&mut costs, &req.costs)?;
    }
    let seq = &prog.seqs[0];
    let cfg = match s.strategy {
        Some(st) => st.config(&prog, seq, &s.pins),
        None => CoverConfig {
            mode: None,
            pins: s.pins.clone(),
        },
    };
    let mut opts = Options {
        passes: s.passes.clone(),
        cover: cfg.clone(),
        ..Options::default()
    };
    opts.features.fixed = s.features.clone();
    let resolved = crate::codegen::resolve(&prog, &opts);
    let c = compile(&resolved, s.target, &opts).map_err(|d| Error::Spec(s.spec_index, d))?;
    let text = crate::emit::asm::render(&c, &opts);
    let text = if req.raw {
        text
    } else {
        crate::emit::normalize::normalize(&text)
    };
    let st = stats::collect(&c).remove(0);
    let dynamic = if req.dynamic {
        let given = cost::params(seq, &req.args)?;
        let mut world = World {
            counts: cost::instance_counts(&prog, seq, req.instances),
            params: given.iter().map(|v| v.unwrap_or(0)).collect(),
            reads: s.reads.clone(),
            cover: cfg,
            ..World::default()
        };
        world.add_consumers(&prog, seq);
        Some(cost::measure(&prog, &c, &world, &costs).map_err(|e| Error::Usage(e.to_string()))?)
    } else {
        None
    };
    let mut label = format!(
        "{} --target {} --passes {}",
        prog.source_name, s.target, s.passes_text
    );
    if let Some(st) = s.strategy {
        label.push_str(&format!(" --mode {}", st.name()));
    }
    for (k, v) in &s.pins {
        label.push_str(&format!(" --set {k}={v}"));
    }
    for (k, on) in &s.features {
        label.push_str(&format!(
            " --feature {k}={}",
            if *on { "on" } else { "off" }
        ));
    }
    let costs_note = match set {
        Some(i) => format!(
            "set `{}`: invalidate {} ns, store {}, barrier {}, refill {}, all {}",
            prog.granules[i].name,
            costs.invalidate,
            costs.store,
            costs.barrier,
            costs.refill,
            costs.all
        ),
        None => format!(
            "no granule set: invalidate {} ns, store {}, barrier {}, refill {}, all {}",
            costs.invalidate, costs.store, costs.barrier, costs.refill, costs.all
        ),
    };
    Ok(Done {
        label,
        text,
        stats: st,
        dynamic,
        costs_note,
    })
}

fn row(out: &mut String, name: &str, a: impl ToString, b: impl ToString) {
    out.push_str(&format!(
        "  {name:<22} {:>12} {:>12}\n",
        a.to_string(),
        b.to_string()
    ));
}

/// Each key of either side's counts, in order, with its count on each
/// side (0 where a side has none).
fn by_key<'m, V: Copy + Default>(
    a: &'m BTreeMap<String, V>,
    b: &'m BTreeMap<String, V>,
) -> impl Iterator<Item = (&'m String, V, V)> {
    let keys: BTreeSet<&String> = a.keys().chain(b.keys()).collect();
    keys.into_iter().map(|k| {
        let count = |m: &BTreeMap<String, V>| m.get(k).copied().unwrap_or_default();
        (k, count(a), count(b))
    })
}

/// The whole report.
pub fn render(a: &Side<'_>, b: &Side<'_>, req: &Request) -> Result<String, Error> {
    let (da, db) = (side(a, req)?, side(b, req)?);
    let mut out = String::new();
    let on = if a.target == b.target {
        a.target.to_string()
    } else {
        format!("{} (a) and {} (b)", a.target, b.target)
    };
    out.push_str(&format!(
        "a: {}\nb: {}\nsequence `{}` on {on}{}\n\n",
        da.label,
        db.label,
        req.seq,
        if req.raw {
            ""
        } else {
            " (labels named after what they label, spec line numbers as _: --raw for the text as emitted)"
        }
    ));
    let diff = similar::TextDiff::from_lines(&da.text, &db.text);
    let unified = diff
        .unified_diff()
        .context_radius(3)
        .header("a", "b")
        .to_string();
    if unified.is_empty() {
        out.push_str("(the .S texts are identical)\n");
    } else {
        out.push_str(&unified);
    }
    out.push_str("\nstatic counts (emitted code):\n");
    row(&mut out, "", "a", "b");
    let (sa, sb) = (&da.stats, &db.stats);
    row(&mut out, "instructions", sa.instructions, sb.instructions);
    row(&mut out, "bytes", sa.bytes, sb.bytes);
    row(&mut out, "stores", sa.stores, sb.stores);
    row(&mut out, "loads", sa.loads, sb.loads);
    row(&mut out, "invalidates", sa.invalidates, sb.invalidates);
    for (k, x, y) in by_key(&sa.barriers, &sb.barriers) {
        row(&mut out, &format!("barrier {k}"), x, y);
    }
    if let (Some(ya), Some(yb)) = (&da.dynamic, &db.dynamic) {
        let args: Vec<String> = req
            .args
            .iter()
            .map(|(k, v)| format!("{k}={}", crate::emit::dec_or_hex(*v, 4096)))
            .collect();
        out.push_str(&format!(
            "\ndynamic counts (IR interpreter{}{}):\n",
            if args.is_empty() {
                String::new()
            } else {
                format!("; {}", args.join(" "))
            },
            match (
                req.instances,
                a.prog
                    .devices
                    .iter()
                    .any(|d| matches!(d.instances, crate::ir::Instances::Dynamic { .. }))
            ) {
                (_, false) => String::new(),
                (Some(n), true) => format!("; {n} instances"),
                (None, true) => "; maximum instances".to_string(),
            }
        ));
        row(&mut out, "", "a", "b");
        row(&mut out, "ops (launches)", ya.counts.ops, yb.counts.ops);
        row(&mut out, "stores", ya.counts.stores, yb.counts.stores);
        row(&mut out, "loads", ya.loads, yb.loads);
        row(&mut out, "invalidate insns", ya.invalidates, yb.invalidates);
        for (k, x, y) in by_key(&ya.commands, &yb.commands) {
            row(&mut out, &format!("command {k}"), x, y);
        }
        for (k, x, y) in by_key(&ya.barriers, &yb.barriers) {
            row(&mut out, &format!("barrier {k}"), x, y);
        }
        row(
            &mut out,
            "refilled granules",
            ya.counts.refill,
            yb.counts.refill,
        );
        row(&mut out, "flush-alls", ya.counts.flushes, yb.counts.flushes);
        row(&mut out, "return", ya.ret, yb.ret);
        row(&mut out, "MODELLED cost (ns)", ya.cost, yb.cost);
        out.push_str(&format!("  costs a: {}\n", da.costs_note));
        if db.costs_note != da.costs_note {
            out.push_str(&format!("  costs b: {}\n", db.costs_note));
        }
    }
    Ok(out)
}

/// One line per sequence of both specs: did the code change, and how do
/// the static counts move (`diff --summary`, for a patch review).
pub fn summary(a: &Side<'_>, b: &Side<'_>, req: &Request) -> Result<String, Error> {
    let mut out = String::new();
    let mut names: Vec<&str> = a.prog.seqs.iter().map(|s| s.name.as_str()).collect();
    for s in &b.prog.seqs {
        if !names.contains(&s.name.as_str()) {
            names.push(&s.name);
        }
    }
    let mut rows = Vec::new();
    let mut first = None;
    for n in names {
        let r = Request {
            seq: n.to_string(),
            args: Vec::new(),
            instances: None,
            costs: req.costs.clone(),
            dynamic: false,
            raw: req.raw,
        };
        let in_a = a.prog.seqs.iter().any(|s| s.name == n);
        let in_b = b.prog.seqs.iter().any(|s| s.name == n);
        if !(in_a && in_b) {
            rows.push((
                n.to_string(),
                if in_a { "only in a" } else { "only in b" }.to_string(),
                String::new(),
            ));
            continue;
        }
        let (da, db) = (side(a, &r)?, side(b, &r)?);
        first.get_or_insert_with(|| (da.label.clone(), db.label.clone()));
        let (sa, sb) = (&da.stats, &db.stats);
        let mut moved = Vec::new();
        let mut num = |what: &str, x: usize, y: usize| {
            if x != y {
                moved.push(format!("{what} {x} -> {y}"));
            }
        };
        num("instructions", sa.instructions, sb.instructions);
        num("stores", sa.stores, sb.stores);
        num("loads", sa.loads, sb.loads);
        num("invalidates", sa.invalidates, sb.invalidates);
        for (k, x, y) in by_key(&sa.barriers, &sb.barriers) {
            if x != y {
                moved.push(format!("`{k}` {x} -> {y}"));
            }
        }
        let state = if da.text == db.text {
            "same"
        } else {
            "changed"
        };
        rows.push((n.to_string(), state.to_string(), moved.join(", ")));
    }
    if let Some((la, lb)) = first {
        out.push_str(&format!("a: {la}\nb: {lb}\n"));
    }
    let changed = rows.iter().filter(|r| r.1 != "same").count();
    out.push_str(&format!(
        "{} sequences, {changed} differ{}\n",
        rows.len(),
        if req.raw {
            ""
        } else {
            " (labels and spec line numbers normalized)"
        }
    ));
    let w = rows.iter().map(|r| r.0.len()).max().unwrap_or(0);
    for (n, state, moved) in rows {
        out.push_str(format!("  {n:<w$}  {state:<9} {moved}").trim_end());
        out.push('\n');
    }
    Ok(out)
}
