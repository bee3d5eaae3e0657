//! The kernel's own code as a second oracle for meaning (issue 12 section
//! 6, docs/trace-oracle.md). For every example and every target of its
//! `target` line, the generated code and a C transcription of the kernel
//! or firmware function it stands for (tests/reference/, gcc -O2 with the
//! kernel's accessors) run on the same inputs in tests/harness/store_log.c
//! under qemu-user; qemu's log of executed instructions gives the barriers
//! each side executed. Per case: the same device accesses per instance
//! (register, width, value, order), invalidates, return value and final
//! memory; every ordering the spec requires crossed, in the generated
//! code, by an executed barrier the target's table says orders it. Where
//! the generated code fences less than the kernel, the list printed must
//! be the one in docs/trace-oracle.md, which says why each is correct.
#![cfg(feature = "emu")]

use crate::refcmp;
use crate::support;

use refcmp::scenarios::builds;
use refcmp::{
    barrier_count, build_exe, call_reqs, cases, compile, difference, lower_poll_limits, merged,
    order_violations, run, weaker_than_kernel, Build, Limit, Scenario, Side, HIGH_LIMIT, LOW_LIMIT,
};
use shootdown::ir::Program;
use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

const DOC: &str = "docs/trace-oracle.md";
/// Examples whose code must execute the kernel's sequence exactly: the
/// same invalidations with the same operands and the same barriers in
/// the same order (not only accesses equal and barriers at least as
/// strong). Book III-E tlb_low.S is short straight-line code, and the
/// example places what it has.
const SAME_SEQUENCE: &[&str] = &["book3e_tlb"];

/// The invalidations (operation, operands) and barriers of a side, in
/// order.
fn inval_barrier_sequence(s: &refcmp::Side) -> Vec<String> {
    s.events
        .iter()
        .filter_map(|e| match e {
            refcmp::Ev::Inval { op, ops } => Some(format!("{op} {ops:x?}")),
            refcmp::Ev::Barrier(b) => Some(b.clone()),
            _ => None,
        })
        .collect()
}
const WEAKER: &str = "weaker-than-kernel";
const KERNEL: &str = "kernel-unordered";

/// The lines for one example of a marked block of docs/trace-oracle.md
/// (`<!-- NAME: begin -->` ... `<!-- NAME: end -->`).
fn documented(block: &str, stem: &str) -> BTreeSet<String> {
    let doc = std::fs::read_to_string(DOC).unwrap();
    let (begin, end) = (
        format!("<!-- {block}: begin -->"),
        format!("<!-- {block}: end -->"),
    );
    let block = doc
        .split_once(&begin)
        .and_then(|(_, r)| r.split_once(&end))
        .map(|(b, _)| b)
        .unwrap_or_else(|| panic!("{DOC}: no `{begin}` ... `{end}` block"));
    block
        .lines()
        .filter(|l| l.starts_with(&format!("{stem} ")))
        .map(str::to_string)
        .collect()
}

/// A violation without its event numbers (they vary with the case).
fn strip_events(v: &str) -> String {
    let mut out = String::new();
    let mut rest = v;
    while let Some(at) = rest.find("event ") {
        let digits = rest[at + 6..]
            .chars()
            .take_while(char::is_ascii_digit)
            .count();
        if digits == 0 {
            out += &rest[..at + 6];
            rest = &rest[at + 6..];
            continue;
        }
        let mut head = &rest[..at];
        let mut tail = &rest[at + 6 + digits..];
        if head.ends_with('(') && tail.starts_with(')') {
            head = &head[..head.len() - 1];
            tail = &tail[1..];
        }
        out += head;
        rest = tail;
    }
    out += rest;
    let out = out.split_whitespace().collect::<Vec<_>>().join(" ");
    out.replace(" :", ":").replace("( ", "(").trim().to_string()
}

/// Executed instructions of both sides over a set of cases.
#[derive(Default)]
struct Count {
    cases: usize,
    generated: usize,
    kernel: usize,
    /// Issue 40's lower bound: the instructions no implementation can
    /// leave out, counted from the generated run's events (each device
    /// or memory access, invalidation, barrier and return is at least one
    /// instruction) and one loop test per trip back to a loop's top (the
    /// exit test of each loop is not counted, nor any arithmetic, so it
    /// is still a loose bound).
    bound: usize,
}

const COUNTS_DIR: &str = "tests/codegen_counts";

/// Issue 17's anchor and its regression pin. The table (ours vs the
/// kernel's C at gcc -O2, both counted from the same qemu exec log on the
/// same inputs) goes to target/codegen-counts/STEM.txt, which
/// scripts/codegen-vs-gcc.sh collects; our counts must equal the pinned
/// tests/codegen_counts/STEM.txt, so generated code never grows (or
/// shrinks) silently. Rewrite the pins with SHOOTDOWN_BLESS_COUNTS=1 after
/// an intended codegen change and review the diff. The kernel's side is
/// in the table only: it depends on the cross gcc's version.
fn check_counts(stem: &str, counts: &BTreeMap<String, Count>) {
    let mut table = format!(
        "# {stem}: executed instructions, summed over the cases that agree with the kernel\n\
         # target [pins] scenario: cases, generated, kernel (gcc -O2), generated/kernel, bound, generated/bound\n"
    );
    let mut pins = format!(
        "# {stem}: executed instructions of the generated code per target and scenario,\n\
         # summed over tests/reference.rs's agreeing cases (SHOOTDOWN_BLESS_COUNTS=1 rewrites)\n"
    );
    for (k, c) in counts {
        table += &format!(
            "{k}: {} {} {} {:.2} {} {:.2}\n",
            c.cases,
            c.generated,
            c.kernel,
            c.generated as f64 / c.kernel.max(1) as f64,
            c.bound,
            c.generated as f64 / c.bound.max(1) as f64
        );
        pins += &format!("{k}: {} {}\n", c.cases, c.generated);
    }
    let out = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("target/codegen-counts");
    std::fs::create_dir_all(&out).unwrap();
    std::fs::write(out.join(format!("{stem}.txt")), &table).unwrap();
    eprint!("{table}");
    let pinned = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join(COUNTS_DIR)
        .join(format!("{stem}.txt"));
    if std::env::var_os("SHOOTDOWN_BLESS_COUNTS").is_some() {
        std::fs::create_dir_all(pinned.parent().unwrap()).unwrap();
        std::fs::write(&pinned, &pins).unwrap();
        return;
    }
    let want = std::fs::read_to_string(&pinned).unwrap_or_default();
    if want != pins {
        let diff = similar::TextDiff::from_lines(&want, &pins)
            .unified_diff()
            .header("pinned", "now")
            .to_string();
        panic!(
            "{stem}: the generated code's executed instruction counts changed \
             ({COUNTS_DIR}/{stem}.txt; rewrite with SHOOTDOWN_BLESS_COUNTS=1 if intended):\n{diff}"
        );
    }
}

fn check_example(stem: &str) {
    let path = format!("examples/{stem}.inv");
    let src = std::fs::read_to_string(&path).unwrap();
    let prog = shootdown::load(&path, &src).unwrap();
    let low = shootdown::load(&path, &lower_poll_limits(&src)).unwrap();
    let mut tally = Tally::default();
    for target in shootdown::output::default_targets(&prog) {
        for (bi, build) in builds(stem, &src).iter().enumerate() {
            for (never, p) in [(false, &prog), (true, &low)] {
                tally.check_build(stem, target, bi, build, never, p);
            }
        }
    }
    tally.finish(stem);
}

/// One compilation of an example run against the kernel's code.
struct BuildRun<'a> {
    stem: &'a str,
    target: shootdown::Target,
    /// The build's `--set` pins, as printed (` [--set N=V ...]` or empty).
    pins: String,
    /// Which poll limits: as generated, or lowered to 4.
    what: &'static str,
    never: bool,
    p: &'a Program,
    exe: &'a refcmp::Exe,
    after: &'a BTreeSet<u64>,
}

/// What the cases of an example found.
#[derive(Default)]
struct Tally {
    failures: Vec<String>,
    weaker: BTreeMap<String, BTreeSet<&'static str>>,
    kernel_unordered: BTreeSet<String>,
    ncases: usize,
    naccess: usize,
    ndiffer: usize,
    noutside: usize,
    gbar: usize,
    rbar: usize,
    /// Executed instructions per (target, pins, sequence scenario), summed
    /// over the cases that agree with the kernel, as generated (not the
    /// lowered poll limits).
    counts: BTreeMap<String, Count>,
}

impl Tally {
    /// Compile, build and run every case of `build` (`never`: only the
    /// polls that never get ready, on `p` with its poll limits lowered).
    fn check_build(
        &mut self,
        stem: &str,
        target: shootdown::Target,
        bi: usize,
        build: &Build,
        never: bool,
        p: &Program,
    ) {
        let cases = cases(p, build, never);
        if cases.is_empty() {
            return;
        }
        if !never {
            eprintln!("{stem} {target} {:?}: {}", build.pins, build.why);
        }
        let (c, opts) = compile(p, target, &build.pins);
        let asm = support::asm_text(&c, &opts);
        let (limit, what) = if never {
            (LOW_LIMIT, "poll limits 4")
        } else {
            (HIGH_LIMIT, "as generated")
        };
        let tag = format!("ref-{stem}-{target}-{bi}-{}", u8::from(never));
        let exe = build_exe(p, stem, &c, &opts, build, &asm, limit, &tag)
            .unwrap_or_else(|e| panic!("{stem} {target}: {e}"));
        let after = refcmp::after_invalidates_pcs(p, &exe, &asm);
        let obs = run(
            p,
            &exe,
            build,
            &cases,
            Limit::generous(Duration::from_secs(600)),
        )
        .unwrap_or_else(|e| panic!("{stem} {target}: {e}"));
        let pins: Vec<String> = build
            .pins
            .iter()
            .map(|(n, v)| format!("--set {n}={v}"))
            .collect();
        let pins = if pins.is_empty() {
            String::new()
        } else {
            format!(" [{}]", pins.join(" "))
        };
        let br = BuildRun {
            stem,
            target,
            pins,
            what,
            never,
            p,
            exe: &exe,
            after: &after,
        };
        for (case, r) in obs.cases {
            self.check_case(&br, build, &case, r);
        }
    }

    /// One case: the effects compared (or the documented difference
    /// found), then the orderings of both sides.
    fn check_case(&mut self, br: &BuildRun, build: &Build, case: &refcmp::Case, r: refcmp::Sides) {
        let (stem, target, what) = (br.stem, br.target, br.what);
        let sc = &build.scenarios[case.scenario];
        let input = &sc.inputs[case.input];
        let name = format!(
            "{stem} {target}{} {} ({}; {} instance(s), polls {:?}, {what}) vs {}",
            br.pins, sc.name, input.label, case.count, case.poll, sc.kernel
        );
        self.ncases += 1;
        let (g, r) = match r {
            Ok(x) => x,
            Err(e) => {
                self.failures.push(format!("{name}: {e}"));
                return;
            }
        };
        if let Some(why) = input.outside {
            self.noutside += 1;
            eprintln!("not run against the kernel, {name}: {why}");
        }
        if !self.compare(br, sc, input, case, &name, &g, &r) {
            return;
        }
        self.check_orderings(br, sc, input, &name, &g, &r);
    }

    /// The generated side's effects against the kernel's; false where the
    /// case failed (and nothing more of it is checked).
    #[allow(clippy::too_many_arguments)]
    fn compare(
        &mut self,
        br: &BuildRun,
        sc: &Scenario,
        input: &refcmp::Input,
        case: &refcmp::Case,
        name: &str,
        g: &Side,
        r: &Side,
    ) -> bool {
        let (stem, target, p) = (br.stem, br.target, br.p);
        // With no instance there is nothing to differ in.
        let untouched = untouched(g);
        // A generated run that touches nothing with instances
        // present (a -22 before any write) still has to differ.
        let silent = untouched && case.count == 0;
        let differs = input.differs.filter(|_| !silent);
        let d = if input.outside.is_some() {
            None
        } else {
            difference(p, g, r)
        };
        match (differs, d) {
            (None, Some(d)) => {
                self.failures.push(format!("{name}:\n{d}"));
                return false;
            }
            (Some(why), None) => {
                self.failures.push(format!(
                    "{name}: expected to differ from the kernel ({why}), but agrees"
                ));
                return false;
            }
            (Some(why), Some(d)) => {
                self.ndiffer += 1;
                eprintln!("as documented, {name} differs: {why}:\n  {}", d.trim());
            }
            (None, None)
                if SAME_SEQUENCE.contains(&stem)
                    && inval_barrier_sequence(g) != inval_barrier_sequence(r) =>
            {
                self.failures.push(format!(
                    "{name}: not the kernel's sequence:\n  generated {:?}\n  kernel    {:?}",
                    inval_barrier_sequence(g),
                    inval_barrier_sequence(r)
                ));
                return false;
            }
            (None, None) => {
                if !br.never && input.outside.is_none() {
                    let c = self
                        .counts
                        .entry(format!("{target}{} {}", br.pins, sc.name))
                        .or_default();
                    c.cases += 1;
                    c.generated += g.insns;
                    c.kernel += r.insns;
                    c.bound += g
                        .events
                        .iter()
                        .filter(|e| !matches!(e, refcmp::Ev::Entry))
                        .count()
                        + g.back_edges;
                }
                self.naccess += g
                    .events
                    .iter()
                    .filter(|e| matches!(e, refcmp::Ev::Access { .. } | refcmp::Ev::Inval { .. }))
                    .count();
                // Without an access, no ordering matters.
                if !untouched && input.outside.is_none() {
                    for w in weaker_than_kernel(p, target, g, r) {
                        self.weaker
                            .entry(format!("{stem} {target}: {w}"))
                            .or_default()
                            .insert(sc.name);
                    }
                }
            }
        }
        true
    }

    /// Every required ordering crossed by the generated code; the ones
    /// the kernel's code misses, collected; both sides' barriers counted.
    fn check_orderings(
        &mut self,
        br: &BuildRun,
        sc: &Scenario,
        input: &refcmp::Input,
        name: &str,
        g: &Side,
        r: &Side,
    ) {
        let (stem, target, p, exe) = (br.stem, br.target, br.p, br.exe);
        let reqs = call_reqs(p, sc);
        let v = order_violations(p, target, g, &reqs, &exe.insns, br.after);
        if !v.is_empty() {
            self.failures.push(format!(
                "{name}: the generated code misses a required ordering:\n  {}",
                v.join("\n  ")
            ));
        }
        let kernel_ran = input.outside.is_none();
        for v in order_violations(
            p,
            target,
            r,
            &[merged(&reqs)],
            &exe.insns,
            &Default::default(),
        )
        .into_iter()
        .filter(|_| kernel_ran)
        {
            self.kernel_unordered.insert(format!(
                "{stem} {target} {}: {}",
                sc.name,
                strip_events(&v)
            ));
        }
        self.gbar += barrier_count(g);
        self.rbar += barrier_count(r);
    }

    /// Print the tally, check the count pins, and fail on any failure or
    /// on a difference from the documented lists.
    fn finish(self, stem: &str) {
        let ncases = self.ncases;
        eprintln!(
            "{stem}: {ncases} cases against the kernel's code, {} accesses and invalidates \
             compared, {} documented differences seen, {} outside the kernel's domain; \
             barriers executed: generated {}, kernel {}",
            self.naccess, self.ndiffer, self.noutside, self.gbar, self.rbar
        );
        for k in &self.kernel_unordered {
            eprintln!("the kernel's code crosses no barrier our table accepts: {k}");
        }
        check_counts(stem, &self.counts);
        eprintln!("where the generated code fences less than the kernel:");
        for (w, scenarios) in &self.weaker {
            let s: Vec<&str> = scenarios.iter().copied().collect();
            eprintln!("{w}\n    in: {}", s.join(" | "));
        }
        let weaker: BTreeSet<String> = self.weaker.into_keys().collect();
        let failures = self.failures;
        assert!(
            failures.is_empty(),
            "{stem}: {} of {ncases} cases fail:\n{}",
            failures.len(),
            failures.join("\n")
        );
        assert!(ncases > 0, "{stem}: nothing compared");
        check_documented(stem, &weaker, &self.kernel_unordered);
    }
}

/// A generated run with no device access, invalidation or memory.
fn untouched(g: &Side) -> bool {
    g.memory.is_empty()
        && !g
            .events
            .iter()
            .any(|e| matches!(e, refcmp::Ev::Access { .. } | refcmp::Ev::Inval { .. }))
}

/// What was seen where the generated code fences less than the kernel,
/// and where the kernel's code misses an ordering, are what
/// docs/trace-oracle.md lists.
fn check_documented(stem: &str, weaker: &BTreeSet<String>, kernel_unordered: &BTreeSet<String>) {
    for (block, seen, what) in [
        (
            WEAKER,
            weaker,
            "where the generated code fences less than the kernel",
        ),
        (
            KERNEL,
            kernel_unordered,
            "where the kernel's code misses an ordering of our model",
        ),
    ] {
        let doc = documented(block, stem);
        let new: Vec<&String> = seen.difference(&doc).collect();
        let stale: Vec<&String> = doc.difference(seen).collect();
        assert!(
            new.is_empty() && stale.is_empty(),
            "{DOC} lists {what} (block `{block}`); for {stem}\n\
             not listed there:\n{}\nlisted but not seen:\n{}",
            new.iter()
                .map(|s| s.as_str())
                .collect::<Vec<_>>()
                .join("\n"),
            stale
                .iter()
                .map(|s| s.as_str())
                .collect::<Vec<_>>()
                .join("\n")
        );
    }
}

refcmp::test_each_reference!(check_example);

/// Issue 14's count, on both sides: 16 pages of 64K through the global
/// range flush execute 16 `tlbie`, 2 `ptesync`, 1 `eieio`, 1 `tlbsync`
/// (qemu's log of executed instructions; tlbie and tlbsync trapped), as
/// the kernel's `_tlbie_va_range` does; 1000 pages one PID flush.
#[test]
fn radix_range_counts() {
    use refcmp::Ev;
    let stem = "radix_tlb";
    let path = format!("examples/{stem}.inv");
    let src = std::fs::read_to_string(&path).unwrap();
    let prog = shootdown::load(&path, &src).unwrap();
    let build = builds(stem, &src).remove(0);
    let want = |label: &str| -> Option<[usize; 5]> {
        match label {
            "16 pages, features 0" => Some([16, 2, 1, 1, 0]),
            "1000 pages, features 0" => Some([1, 2, 1, 1, 1]),
            _ => None,
        }
    };
    for target in [shootdown::Target::Power64, shootdown::Target::Power64le] {
        let (c, opts) = compile(&prog, target, &build.pins);
        let asm = support::asm_text(&c, &opts);
        let exe = build_exe(
            &prog,
            stem,
            &c,
            &opts,
            &build,
            &asm,
            HIGH_LIMIT,
            &format!("radix-counts-{target}"),
        )
        .unwrap();
        let picked: Vec<_> = cases(&prog, &build, false)
            .into_iter()
            .filter(|k| {
                let sc = &build.scenarios[k.scenario];
                sc.name == "flush_tlb_range" && want(&sc.inputs[k.input].label).is_some()
            })
            .collect();
        assert_eq!(picked.len(), 2, "{target}: the two cases");
        let obs = run(
            &prog,
            &exe,
            &build,
            &picked,
            Limit::generous(Duration::from_secs(120)),
        )
        .unwrap();
        for (case, r) in obs.cases {
            let label = &build.scenarios[case.scenario].inputs[case.input].label;
            let (gen, kernel) = r.unwrap();
            for (who, side) in [("generated", &gen), ("kernel", &kernel)] {
                let count = |f: &dyn Fn(&Ev) -> bool| side.events.iter().filter(|e| f(e)).count();
                let got = [
                    count(&|e| matches!(e, Ev::Inval { op, .. } if op.starts_with("tlbie "))),
                    count(&|e| matches!(e, Ev::Barrier(n) if n == "ptesync")),
                    count(&|e| matches!(e, Ev::Barrier(n) if n == "eieio")),
                    count(&|e| matches!(e, Ev::Barrier(n) if n == "tlbsync")),
                    count(&|e| matches!(e, Ev::Inval { op, .. } if op == "tlbie 2,1,1")),
                ];
                assert_eq!(
                    Some(got),
                    want(label),
                    "{target} {label}, {who}: [tlbie, ptesync, eieio, tlbsync, PID flushes]"
                );
            }
        }
    }
}
