//! Does the oracle catch wrong code? (issue 12 section 7, docs/mutation.md)
//! Mutants of the generated `.S` of every example and target: each
//! barrier dropped, each barrier weakened, two adjacent device stores
//! swapped, an immediate changed, a device store narrowed. Each mutant is
//! assembled by GNU as and run through the kernel reference comparison of
//! tests/reference.rs (same accesses per instance, invalidates, return
//! value and memory as the kernel's code, or as the unmutated code where
//! the example documents a difference from the kernel) and its ordering
//! check on qemu's log of executed instructions. A mutant that changes
//! meaning must be caught; the ones that survive must be listed in
//! docs/mutation.md with why they are equivalent.
//!
//! All of it runs on the copy of each spec with poll limits lowered to 4
//! (so that polls that never get ready are cheap), with the example's own
//! thresholds. Immediates are sampled (every few in program order, a
//! fixed stride per file) to keep the test to a few minutes.
#![cfg(feature = "emu")]

use crate::refcmp;
use crate::support;

use refcmp::scenarios::builds;
use refcmp::{
    cases, compile, difference, gen_lines, link, lower_poll_limits, order_violations, prepare, run,
    Ev, Exe, Limit, Observed, Side, LOW_LIMIT,
};
use shootdown::isa::Machine;
use shootdown::Target;
use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

const DOC: &str = "docs/mutation.md";
const BEGIN: &str = "<!-- equivalent-mutants: begin -->";
const END: &str = "<!-- equivalent-mutants: end -->";
const HOLES_BEGIN: &str = "<!-- known-holes: begin -->";
const HOLES_END: &str = "<!-- known-holes: end -->";
/// At most this many immediate mutants per `.S` file.
const IMMEDIATES_PER_FILE: usize = 12;

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Kind {
    DropBarrier,
    WeakenBarrier,
    SwapStores,
    Immediate,
    NarrowStore,
    /// Book III-E: the interrupt mask around a MAS6 write and the
    /// invalidation that reads it broken (`wrteei 0` or `wrtee` dropped,
    /// `wrtee` moved before the invalidation).
    Unmask,
}

impl Kind {
    fn name(self) -> &'static str {
        match self {
            Kind::DropBarrier => "drop a barrier",
            Kind::WeakenBarrier => "weaken a barrier",
            Kind::SwapStores => "swap adjacent device stores",
            Kind::Immediate => "change an immediate",
            Kind::NarrowStore => "narrow a device store",
            Kind::Unmask => "unmask interrupts early (Book III-E)",
        }
    }
}

struct Mutant {
    kind: Kind,
    func: String,
    /// `before` -> `after` (what changed), for reports.
    what: String,
    /// The `.S` lines (1-based) it touches: reached if any of them ran.
    lines: Vec<usize>,
    asm: String,
}

fn is_insn(l: &str) -> bool {
    l.starts_with('\t') && !l.starts_with("\t.") && !l.starts_with("\t/*")
}

fn mnemonic(l: &str) -> &str {
    l.split_whitespace().next().unwrap_or("")
}

fn barrier(t: Target, l: &str) -> Option<String> {
    support::arch(t).barrier_of(Machine::Book3s, l)
}

fn is_branch(t: Target, l: &str) -> bool {
    (support::arch(t).is_branch)(mnemonic(l))
}

/// The same store one size narrower.
fn narrowed(t: Target, l: &str) -> Option<String> {
    let (indent, rest) = l.split_at(l.len() - l.trim_start().len());
    let (m, ops) = rest.split_once(char::is_whitespace)?;
    let n = (support::arch(t).narrowed)(m, ops.trim_start())?;
    Some(format!("{indent}{n}"))
}

/// Every immediate operand of an instruction line, as (byte range, value
/// text).
fn immediates(t: Target, l: &str) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let b = l.as_bytes();
    let start = l.len() - l.trim_start().len();
    let ops_at = match l[start..].find(char::is_whitespace) {
        Some(i) => start + i,
        None => return out,
    };
    let a = support::arch(t);
    let mut i = ops_at;
    while i < b.len() {
        let prefix_ok = i > 0 && (a.imm_after)(b[i - 1]);
        let neg = b[i] == b'-';
        let digit_at = if neg { i + 1 } else { i };
        if prefix_ok && digit_at < b.len() && b[digit_at].is_ascii_digit() {
            let mut j = digit_at;
            while j < b.len() && (b[j].is_ascii_alphanumeric()) {
                j += 1;
            }
            let tok = &l[i..j];
            // x86: a displacement `0x8(%rdi)` counts, `%r8` does not
            let is_num = parse_int(tok).is_some();
            // POWER: not a CR field or register number before a comma
            // in compare/branch forms (`cmpdi 7,...`): only the last
            // operand or a displacement.
            let power_ok = !a.imm_last_only || j >= b.len() || b[j] == b'(';
            if is_num && power_ok {
                out.push((i, j));
            }
            i = j;
        } else {
            i += 1;
        }
    }
    out
}

fn parse_int(tok: &str) -> Option<i64> {
    let (neg, t) = match tok.strip_prefix('-') {
        Some(r) => (true, r),
        None => (false, tok),
    };
    let v = if let Some(h) = t.strip_prefix("0x") {
        i64::from_str_radix(h, 16).ok()?
    } else {
        t.parse::<i64>().ok()?
    };
    Some(if neg { -v } else { v })
}

/// The functions of a `.S` and their instruction lines (0-based indices).
fn functions(asm: &[&str], symbols: &[String]) -> Vec<(String, Vec<usize>)> {
    let mut out: Vec<(String, Vec<usize>)> = Vec::new();
    for (i, l) in asm.iter().enumerate() {
        if let Some(name) = l.strip_suffix(':') {
            let name = name.trim_start_matches('.');
            if symbols.iter().any(|s| s == name) && !l.starts_with(".L") {
                out.push((name.to_string(), Vec::new()));
                continue;
            }
        }
        if let Some(f) = out.last_mut() {
            f.1.push(i);
        }
    }
    out
}

fn mutants(
    t: Target,
    asm: &str,
    symbols: &[String],
    device_stores: &BTreeSet<usize>,
) -> Vec<Mutant> {
    let lines: Vec<&str> = asm.lines().collect();
    let with = |i: usize, new: Option<String>| -> String {
        let mut v: Vec<String> = lines.iter().map(|s| s.to_string()).collect();
        match new {
            Some(n) => v[i] = n,
            None => {
                v.remove(i);
            }
        }
        v.join("\n") + "\n"
    };
    let mut out = Vec::new();
    let mut imms = Vec::new();
    for (func, body) in functions(&lines, symbols) {
        let mut prev_store: Option<usize> = None;
        for &i in &body {
            let l = lines[i];
            if l.ends_with(':') {
                prev_store = None;
                continue;
            }
            if !is_insn(l) {
                continue;
            }
            if is_branch(t, l) {
                prev_store = None;
            }
            let text = l.trim();
            // POWER Book III-E's interrupt mask (no other target has it).
            if matches!(mnemonic(l), "wrteei" | "wrtee") {
                out.push(Mutant {
                    kind: Kind::Unmask,
                    func: func.clone(),
                    what: format!("`{text}` dropped"),
                    lines: vec![i + 1],
                    asm: with(i, None),
                });
                if mnemonic(l) == "wrtee" && i > 0 && is_insn(lines[i - 1]) {
                    let mut v: Vec<String> = lines.iter().map(|s| s.to_string()).collect();
                    v.swap(i - 1, i);
                    out.push(Mutant {
                        kind: Kind::Unmask,
                        func: func.clone(),
                        what: format!("`{text}` before `{}`", lines[i - 1].trim()),
                        lines: vec![i, i + 1],
                        asm: v.join("\n") + "\n",
                    });
                }
            }
            if let Some(b) = barrier(t, l) {
                out.push(Mutant {
                    kind: Kind::DropBarrier,
                    func: func.clone(),
                    what: format!("`{text}` dropped"),
                    lines: vec![i + 1],
                    asm: with(i, None),
                });
                if let Some(w) = support::arch(t).weaker(&b) {
                    out.push(Mutant {
                        kind: Kind::WeakenBarrier,
                        func: func.clone(),
                        what: format!("`{text}` -> `{w}`"),
                        lines: vec![i + 1],
                        asm: with(i, Some(format!("\t{w}"))),
                    });
                }
            }
            if device_stores.contains(&(i + 1)) {
                if let Some(n) = narrowed(t, l) {
                    out.push(Mutant {
                        kind: Kind::NarrowStore,
                        func: func.clone(),
                        what: format!("`{text}` -> `{}`", n.trim()),
                        lines: vec![i + 1],
                        asm: with(i, Some(n)),
                    });
                }
                // Two copies of one store (an unrolled loop's) swapped are
                // the same program, not a mutant.
                if let Some(p) = prev_store.filter(|&p| lines[p].trim() != l.trim()) {
                    let mut v: Vec<String> = lines.iter().map(|s| s.to_string()).collect();
                    v.swap(p, i);
                    out.push(Mutant {
                        kind: Kind::SwapStores,
                        func: func.clone(),
                        what: format!("`{}` <-> `{text}`", lines[p].trim()),
                        lines: vec![p + 1, i + 1],
                        asm: v.join("\n") + "\n",
                    });
                }
                prev_store = Some(i);
            }
            for (a, z) in immediates(t, l) {
                let tok = &l[a..z];
                let Some(v) = parse_int(tok) else { continue };
                let new = if tok.starts_with("0x") || tok.starts_with("-0x") {
                    if v + 1 < 0 {
                        format!("-{:#x}", -(v + 1))
                    } else {
                        format!("{:#x}", v + 1)
                    }
                } else {
                    (v + 1).to_string()
                };
                let n = format!("{}{new}{}", &l[..a], &l[z..]);
                imms.push(Mutant {
                    kind: Kind::Immediate,
                    func: func.clone(),
                    what: format!("`{text}` -> `{}`", n.trim()),
                    lines: vec![i + 1],
                    asm: with(i, Some(n)),
                });
            }
        }
    }
    // A fixed stride through the immediates, in program order.
    let stride = imms.len().div_ceil(IMMEDIATES_PER_FILE).max(1);
    out.extend(imms.into_iter().step_by(stride));
    out
}

#[derive(Default)]
struct Tally {
    total: usize,
    stillborn: usize,
    unreached: usize,
    effects: usize,
    ordering: usize,
    crash: usize,
    survived: usize,
}

/// Why a mutant's run is wrong, if it is.
fn verdict(
    prog: &shootdown::ir::Program,
    t: Target,
    build: &refcmp::Build,
    base: &BTreeMap<String, Side>,
    obs: &Observed,
    insns: &BTreeMap<u64, String>,
    after: &BTreeSet<u64>,
) -> Option<(&'static str, String)> {
    for (case, r) in &obs.cases {
        let sc = &build.scenarios[case.scenario];
        let input = &sc.inputs[case.input];
        let key = format!("{case:?}");
        let (g, r) = match r {
            Ok(x) => x,
            Err(e) => return Some(("crash", format!("{} ({}): {e}", sc.name, input.label))),
        };
        // Against the kernel, or the unmutated code where the example
        // documents a difference from the kernel.
        let want = if input.differs.is_some() || input.outside.is_some() {
            &base[&key]
        } else {
            r
        };
        if let Some(d) = difference(prog, g, want) {
            return Some((
                "effects",
                format!("{} ({}): {}", sc.name, input.label, d.trim()),
            ));
        }
        let v = order_violations(prog, t, g, &refcmp::call_reqs(prog, sc), insns, after);
        if let Some(v) = v.first() {
            return Some(("ordering", format!("{} ({}): {v}", sc.name, input.label)));
        }
    }
    None
}

/// The cases a mutant runs: every input once (1 and 3 instances of
/// run-time sets, polls ready at once), and the first input of each
/// scenario also with 0 and 6 instances and with polls ready late and
/// never.
fn mutation_cases(prog: &shootdown::ir::Program, build: &refcmp::Build) -> Vec<refcmp::Case> {
    let all = [cases(prog, build, false), cases(prog, build, true)].concat();
    let dynamic: BTreeSet<usize> = all
        .iter()
        .filter(|k| k.count == 3)
        .map(|k| k.scenario)
        .collect();
    all.into_iter()
        .filter(|k| {
            k.input == 0
                || (k.poll == refcmp::Poll::Early
                    && (k.count == 1 || (k.count == 3 && dynamic.contains(&k.scenario))))
        })
        .collect()
}

fn documented() -> BTreeSet<String> {
    let doc = std::fs::read_to_string(DOC).unwrap_or_default();
    // Equivalent mutants, and the known holes: mutants that change what
    // the code does and that the oracle cannot see, listed (and said so)
    // so that any new one fails.
    [(BEGIN, END), (HOLES_BEGIN, HOLES_END)]
        .iter()
        .filter_map(|(b, e)| doc.split_once(b).and_then(|(_, r)| r.split_once(e)))
        .flat_map(|(block, _)| {
            block
                .lines()
                .map(str::trim)
                .filter(|l| !l.is_empty() && !l.starts_with("```"))
                .map(str::to_string)
                .collect::<Vec<_>>()
        })
        .collect()
}

/// The targets whose code is mutated: every target of the example's
/// `target` line with `SHOOTDOWN_MUTATION=all` (how docs/mutation.md's
/// figures were measured), else its first one, which keeps the suite in
/// CI's time budget (each target is a full run of the example's cases per
/// mutant; the oracle is the same on all of them).
fn mutation_targets(prog: &shootdown::ir::Program) -> Vec<Target> {
    let all = shootdown::output::default_targets(prog);
    if std::env::var("SHOOTDOWN_MUTATION").as_deref() == Ok("all") {
        all
    } else {
        all.into_iter().take(1).collect()
    }
}

/// A mutant's files go once it is judged: a hung one's exec log alone can
/// be hundreds of megabytes, and CI's disk is not ours.
fn discard(exe: &Exe) {
    for ext in ["log", "in", "out"] {
        let _ = std::fs::remove_file(exe.path.with_extension(ext));
    }
    let _ = std::fs::remove_file(&exe.path);
}

fn check_example(stem: &str) {
    let t0 = Instant::now();
    let path = format!("examples/{stem}.inv");
    let src = std::fs::read_to_string(&path).unwrap();
    let prog = shootdown::load(&path, &lower_poll_limits(&src)).unwrap();
    let build = builds(stem, &src).remove(0);
    let mut tally: BTreeMap<Kind, Tally> = BTreeMap::new();
    let mut survivors = Vec::new();
    let mut unreached = Vec::new();
    for target in mutation_targets(&prog) {
        let (c, opts) = compile(&prog, target, &build.pins);
        let asm = support::asm_text(&c, &opts);
        let tag = format!("mut-{stem}-{target}");
        let prep = prepare(&prog, stem, &c, &opts, &build, LOW_LIMIT, &tag)
            .unwrap_or_else(|e| panic!("{stem} {target}: {e}"));
        let all = mutation_cases(&prog, &build);
        let base_exe: Exe = link(&prep, &asm, "base").unwrap();
        let started = Instant::now();
        let base = run(
            &prog,
            &base_exe,
            &build,
            &all,
            Limit::generous(Duration::from_secs(600)),
        )
        .unwrap();
        // A mutant runs a subset of the base's cases: ten times its time
        // or sixteen times its log is a hang.
        let base_log =
            std::fs::metadata(base_exe.path.with_extension("log")).map_or(0, |m| m.len());
        let budget = Limit {
            time: started.elapsed() * 10 + Duration::from_secs(10),
            log_bytes: base_log * 16 + (16 << 20),
        };
        let lines = gen_lines(&base_exe);
        let executed: BTreeSet<usize> = base
            .executed
            .iter()
            .filter_map(|pc| lines.get(pc))
            .copied()
            .collect();
        let mut device_stores = BTreeSet::new();
        let mut base_sides = BTreeMap::new();
        for (case, r) in &base.cases {
            let (g, r) = r
                .as_ref()
                .unwrap_or_else(|e| panic!("{stem} {target} baseline: {e}"));
            let input = &build.scenarios[case.scenario].inputs[case.input];
            if input.differs.is_none() && input.outside.is_none() {
                assert!(
                    difference(&prog, g, r).is_none(),
                    "{stem} {target}: baseline differs from the kernel in {case:?}"
                );
            }
            for (e, pc) in g.events.iter().zip(&g.pcs) {
                if let Ev::Access { store: true, .. } = e {
                    device_stores.extend(lines.get(pc));
                }
            }
            base_sides.insert(format!("{case:?}"), g.clone());
        }
        let symbols: Vec<String> = c.funcs.iter().map(|f| f.symbol.clone()).collect();
        let ms = mutants(target, &asm, &symbols, &device_stores);
        for (n, m) in ms.iter().enumerate() {
            let t = tally.entry(m.kind).or_default();
            t.total += 1;
            let id = format!("{stem} {target} {}: {}", m.func, m.what);
            if !m.lines.iter().any(|l| executed.contains(l)) {
                t.unreached += 1;
                unreached.push(id);
                continue;
            }
            let exe = match link(&prep, &m.asm, &format!("m{n}")) {
                Ok(e) => e,
                Err(_) => {
                    t.stillborn += 1;
                    continue;
                }
            };
            // Only the scenarios that call the mutated function.
            let mine: Vec<refcmp::Case> = all
                .iter()
                .filter(|k| {
                    build.scenarios[k.scenario]
                        .calls
                        .iter()
                        .any(|c| c.seq == m.func)
                })
                .cloned()
                .collect();
            let obs = match run(&prog, &exe, &build, &mine, budget) {
                Ok(o) => o,
                Err(_) => {
                    t.crash += 1;
                    discard(&exe);
                    continue;
                }
            };
            let after = refcmp::after_invalidates_pcs(&prog, &exe, &m.asm);
            match verdict(&prog, target, &build, &base_sides, &obs, &exe.insns, &after) {
                Some(("crash", _)) => t.crash += 1,
                Some(("effects", _)) => t.effects += 1,
                Some(("ordering", _)) => t.ordering += 1,
                Some(_) => unreachable!(),
                None => {
                    t.survived += 1;
                    survivors.push(id);
                }
            }
            discard(&exe);
        }
    }
    eprintln!("{stem}: mutants per kind (killed by effects / ordering / crash or hang; survived; not reached; did not assemble), {:.0?}:", t0.elapsed());
    for (k, t) in &tally {
        eprintln!(
            "MUTATION {stem} | {} | {} | {} | {} | {} | {} | {} | {}",
            k.name(),
            t.total,
            t.effects,
            t.ordering,
            t.crash,
            t.survived,
            t.unreached,
            t.stillborn
        );
    }
    for u in &unreached {
        eprintln!("not reached by any case: {u}");
    }
    let doc = documented();
    for d in doc
        .iter()
        .filter(|d| d.starts_with(&format!("{stem} ")) && !survivors.contains(d))
    {
        eprintln!("listed as equivalent in {DOC}, not generated or killed now: {d}");
    }
    let unexplained: Vec<&String> = survivors.iter().filter(|s| !doc.contains(*s)).collect();
    for s in &survivors {
        eprintln!("survived: {s}");
    }
    assert!(
        unexplained.is_empty(),
        "{stem}: mutants survived that {DOC} does not explain as equivalent:\n{}",
        unexplained
            .iter()
            .map(|s| s.as_str())
            .collect::<Vec<_>>()
            .join("\n")
    );
}

refcmp::test_each_reference!(check_example);
