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
            let at = At {
                lines: &lines,
                func: &func,
                i,
            };
            at.unmask(&mut out);
            at.barrier(t, &mut out);
            if device_stores.contains(&(i + 1)) {
                at.device_store(t, prev_store, &mut out);
                prev_store = Some(i);
            }
            at.immediates(t, &mut imms);
        }
    }
    // A fixed stride through the immediates, in program order.
    let stride = imms.len().div_ceil(IMMEDIATES_PER_FILE).max(1);
    out.extend(imms.into_iter().step_by(stride));
    out
}

/// One instruction of the `.S` (line `i`, 0-based) and the mutants of it.
struct At<'a> {
    lines: &'a [&'a str],
    func: &'a str,
    i: usize,
}

impl At<'_> {
    fn line(&self) -> &str {
        self.lines[self.i]
    }

    fn text(&self) -> &str {
        self.line().trim()
    }

    /// The `.S` with this line replaced by `new`, or dropped.
    fn with(&self, new: Option<String>) -> String {
        let mut v: Vec<String> = self.lines.iter().map(|s| s.to_string()).collect();
        match new {
            Some(n) => v[self.i] = n,
            None => {
                v.remove(self.i);
            }
        }
        v.join("\n") + "\n"
    }

    /// The `.S` with this line and line `j` swapped.
    fn swapped(&self, j: usize) -> String {
        let mut v: Vec<String> = self.lines.iter().map(|s| s.to_string()).collect();
        v.swap(j, self.i);
        v.join("\n") + "\n"
    }

    fn mutant(&self, kind: Kind, what: String, lines: Vec<usize>, asm: String) -> Mutant {
        Mutant {
            kind,
            func: self.func.to_string(),
            what,
            lines,
            asm,
        }
    }

    /// POWER Book III-E's interrupt mask (no other target has it).
    fn unmask(&self, out: &mut Vec<Mutant>) {
        let (l, i, text) = (self.line(), self.i, self.text());
        if matches!(mnemonic(l), "wrteei" | "wrtee") {
            out.push(self.mutant(
                Kind::Unmask,
                format!("`{text}` dropped"),
                vec![i + 1],
                self.with(None),
            ));
            if mnemonic(l) == "wrtee" && i > 0 && is_insn(self.lines[i - 1]) {
                out.push(self.mutant(
                    Kind::Unmask,
                    format!("`{text}` before `{}`", self.lines[i - 1].trim()),
                    vec![i, i + 1],
                    self.swapped(i - 1),
                ));
            }
        }
    }

    /// A barrier dropped, and weakened where the target has a weaker one.
    fn barrier(&self, t: Target, out: &mut Vec<Mutant>) {
        let (l, i, text) = (self.line(), self.i, self.text());
        if let Some(b) = barrier(t, l) {
            out.push(self.mutant(
                Kind::DropBarrier,
                format!("`{text}` dropped"),
                vec![i + 1],
                self.with(None),
            ));
            if let Some(w) = support::arch(t).weaker(&b) {
                out.push(self.mutant(
                    Kind::WeakenBarrier,
                    format!("`{text}` -> `{w}`"),
                    vec![i + 1],
                    self.with(Some(format!("\t{w}"))),
                ));
            }
        }
    }

    /// A device store narrowed, and swapped with the previous one
    /// (`prev_store`) in the same straight-line run.
    fn device_store(&self, t: Target, prev_store: Option<usize>, out: &mut Vec<Mutant>) {
        let (l, i, text) = (self.line(), self.i, self.text());
        if let Some(n) = narrowed(t, l) {
            out.push(self.mutant(
                Kind::NarrowStore,
                format!("`{text}` -> `{}`", n.trim()),
                vec![i + 1],
                self.with(Some(n)),
            ));
        }
        // Two copies of one store (an unrolled loop's) swapped are
        // the same program, not a mutant.
        if let Some(p) = prev_store.filter(|&p| self.lines[p].trim() != l.trim()) {
            out.push(self.mutant(
                Kind::SwapStores,
                format!("`{}` <-> `{text}`", self.lines[p].trim()),
                vec![p + 1, i + 1],
                self.swapped(p),
            ));
        }
    }

    /// Each immediate operand plus one.
    fn immediates(&self, t: Target, imms: &mut Vec<Mutant>) {
        let (l, i, text) = (self.line(), self.i, self.text());
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
            imms.push(self.mutant(
                Kind::Immediate,
                format!("`{text}` -> `{}`", n.trim()),
                vec![i + 1],
                self.with(Some(n)),
            ));
        }
    }
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

/// The unmutated code's run of every case a mutant may run, and what
/// mutants are judged by.
struct Baseline {
    all: Vec<refcmp::Case>,
    /// A mutant runs a subset of the base's cases: ten times its time
    /// or sixteen times its log is a hang.
    budget: Limit,
    /// The `.S` lines the base executed.
    executed: BTreeSet<usize>,
    /// The `.S` lines of device stores.
    device_stores: BTreeSet<usize>,
    /// The base's generated side per case.
    sides: BTreeMap<String, Side>,
}

fn baseline(
    prog: &shootdown::ir::Program,
    stem: &str,
    target: Target,
    build: &refcmp::Build,
    base_exe: &Exe,
) -> Baseline {
    let all = mutation_cases(prog, build);
    let started = Instant::now();
    let base = run(
        prog,
        base_exe,
        build,
        &all,
        Limit::generous(Duration::from_secs(600)),
    )
    .unwrap();
    let base_log = std::fs::metadata(base_exe.path.with_extension("log")).map_or(0, |m| m.len());
    let budget = Limit {
        time: started.elapsed() * 10 + Duration::from_secs(10),
        log_bytes: base_log * 16 + (16 << 20),
    };
    let lines = gen_lines(base_exe);
    let executed: BTreeSet<usize> = base
        .executed
        .iter()
        .filter_map(|pc| lines.get(pc))
        .copied()
        .collect();
    let mut device_stores = BTreeSet::new();
    let mut sides = BTreeMap::new();
    for (case, r) in &base.cases {
        let (g, r) = r
            .as_ref()
            .unwrap_or_else(|e| panic!("{stem} {target} baseline: {e}"));
        let input = &build.scenarios[case.scenario].inputs[case.input];
        if input.differs.is_none() && input.outside.is_none() {
            assert!(
                difference(prog, g, r).is_none(),
                "{stem} {target}: baseline differs from the kernel in {case:?}"
            );
        }
        for (e, pc) in g.events.iter().zip(&g.pcs) {
            if let Ev::Access { store: true, .. } = e {
                device_stores.extend(lines.get(pc));
            }
        }
        sides.insert(format!("{case:?}"), g.clone());
    }
    Baseline {
        all,
        budget,
        executed,
        device_stores,
        sides,
    }
}

/// What became of one mutant.
enum Fate {
    Unreached,
    Stillborn,
    Crash,
    Effects,
    Ordering,
    Survived,
}

/// Assemble mutant `n`, run the scenarios that call its function, and
/// judge the run.
fn fate(
    prog: &shootdown::ir::Program,
    target: Target,
    build: &refcmp::Build,
    prep: &refcmp::Prepared,
    base: &Baseline,
    n: usize,
    m: &Mutant,
) -> Fate {
    if !m.lines.iter().any(|l| base.executed.contains(l)) {
        return Fate::Unreached;
    }
    let Ok(exe) = link(prep, &m.asm, &format!("m{n}")) else {
        return Fate::Stillborn;
    };
    // Only the scenarios that call the mutated function.
    let mine: Vec<refcmp::Case> = base
        .all
        .iter()
        .filter(|k| {
            build.scenarios[k.scenario]
                .calls
                .iter()
                .any(|c| c.seq == m.func)
        })
        .cloned()
        .collect();
    let Ok(obs) = run(prog, &exe, build, &mine, base.budget) else {
        discard(&exe);
        return Fate::Crash;
    };
    let after = refcmp::after_invalidates_pcs(prog, &exe, &m.asm);
    let fate = match verdict(prog, target, build, &base.sides, &obs, &exe.insns, &after) {
        Some(("crash", _)) => Fate::Crash,
        Some(("effects", _)) => Fate::Effects,
        Some(("ordering", _)) => Fate::Ordering,
        Some(_) => unreachable!(),
        None => Fate::Survived,
    };
    discard(&exe);
    fate
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
        let base_exe: Exe = link(&prep, &asm, "base").unwrap();
        let base = baseline(&prog, stem, target, &build, &base_exe);
        let symbols: Vec<String> = c.funcs.iter().map(|f| f.symbol.clone()).collect();
        let ms = mutants(target, &asm, &symbols, &base.device_stores);
        for (n, m) in ms.iter().enumerate() {
            let t = tally.entry(m.kind).or_default();
            t.total += 1;
            let id = format!("{stem} {target} {}: {}", m.func, m.what);
            match fate(&prog, target, &build, &prep, &base, n, m) {
                Fate::Unreached => {
                    t.unreached += 1;
                    unreached.push(id);
                }
                Fate::Stillborn => t.stillborn += 1,
                Fate::Crash => t.crash += 1,
                Fate::Effects => t.effects += 1,
                Fate::Ordering => t.ordering += 1,
                Fate::Survived => {
                    t.survived += 1;
                    survivors.push(id);
                }
            }
        }
    }
    eprintln!("{stem}: mutants per kind (killed by effects / ordering / crash or hang; survived; not reached; did not assemble), {:.0?}:", t0.elapsed());
    report(stem, &tally, &unreached, &survivors);
}

/// The tally per kind, and the survivors against docs/mutation.md's list.
fn report(stem: &str, tally: &BTreeMap<Kind, Tally>, unreached: &[String], survivors: &[String]) {
    for (k, t) in tally {
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
    for u in unreached {
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
    for s in survivors {
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
