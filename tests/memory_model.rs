//! herd7, the simulator of the architectures' own memory models, as the
//! oracle for barriers (issue 36, docs/memory-model.md). qemu and unicorn
//! perform memory accesses in program order and cannot see a missing
//! barrier; herd7 can.
//!
//! 1. The herd7 we build from vendor/ agrees with Arm's aarch64-VMSA
//!    catalogue (its VMSA-kinds.txt), for every test it finishes in time.
//! 2. Every sequence of every example, on every target of its `target`
//!    line, for every world `verify` runs (arguments that reach each arm),
//!    exported by `shootdown litmus`: every forbidden outcome is `Never`.
//! 3. Barrier mutants (each placed barrier dropped, or weakened) of those
//!    sequences: a mutant the static proof rejects must make herd7 answer
//!    `Sometimes` unless the ordering it breaks is one herd7 cannot see
//!    (listed in docs/mutation.md with the reason).
#![cfg(feature = "emu")]

use shootdown::litmus::herd::{Herd, Verdict};
use shootdown::litmus::Test;
use shootdown::verify::{trace, worlds};
use shootdown::Target;
use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;
use std::sync::{Mutex, OnceLock};

/// herd7 built from the vendored source (cached under target/herd7).
pub fn herd() -> &'static Herd {
    static H: OnceLock<Herd> = OnceLock::new();
    H.get_or_init(|| {
        let out = Command::new("sh")
            .arg("scripts/build-herd7.sh")
            .output()
            .expect("sh scripts/build-herd7.sh");
        assert!(
            out.status.success(),
            "scripts/build-herd7.sh failed:\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let exe = String::from_utf8_lossy(&out.stdout).trim().to_string();
        Herd::at(Path::new(exe.lines().last().unwrap_or_default()))
    })
}

/// `f` of every item, on both cores, in order.
fn on_both_cores<T: Sync, R: Send>(items: &[T], f: impl Fn(&T) -> R + Sync) -> Vec<R> {
    let next = Mutex::new(0usize);
    let out: Mutex<Vec<Option<R>>> = Mutex::new((0..items.len()).map(|_| None).collect());
    std::thread::scope(|s| {
        for _ in 0..2 {
            s.spawn(|| loop {
                let k = {
                    let mut n = next.lock().unwrap();
                    *n += 1;
                    *n - 1
                };
                let Some(item) = items.get(k) else { break };
                let r = f(item);
                out.lock().unwrap()[k] = Some(r);
            });
        }
    });
    out.into_inner()
        .unwrap()
        .into_iter()
        .map(|r| r.expect("every item was run"))
        .collect()
}

/// Run `tests` through herd7 on both cores; the verdicts in order.
pub fn judge(tests: &[Test], tag: &str) -> Vec<Result<Verdict, String>> {
    let h = herd();
    let dir = crate::support::scratch(tag);
    // One directory per test: tests of different targets share names
    // (`iotlb_flush_page+e2+0+0` on x86_64 and riscv64), and two threads
    // writing one file would run herd7 on the other's test.
    let indexed: Vec<(usize, &Test)> = tests.iter().enumerate().collect();
    on_both_cores(&indexed, |(k, t)| {
        let d = dir.join(k.to_string());
        std::fs::create_dir_all(&d).map_err(|e| format!("{}: {e}", d.display()))?;
        h.run(t, &d)
    })
}

/// One compiled variant of an example: default, or one feature fixed on.
pub struct Variant {
    pub what: String,
    pub prog: shootdown::ir::Program,
    pub c: shootdown::codegen::Compiled,
}

pub fn variants(path: &str) -> Vec<Variant> {
    let src = std::fs::read_to_string(path).unwrap();
    let prog = shootdown::load(path, &src).unwrap_or_else(|d| panic!("{path}: {}", d.message));
    let mut out = Vec::new();
    let mut sels: Vec<(String, Vec<(String, bool)>)> = vec![(String::new(), Vec::new())];
    for f in &prog.features {
        sels.push((format!(" {}=on", f.name), vec![(f.name.clone(), true)]));
    }
    // Every architecture herd7 models, not only the spec's `target` line:
    // a queue or a publication is the same protocol on each (issue 36
    // asks for aarch64, power64le, riscv64 and x86_64); a spec that does
    // not compile for one (a CPU invalidation it lacks) is left out there.
    let mut targets = shootdown::output::default_targets(&prog);
    let own = targets.clone();
    for t in [
        Target::Aarch64,
        Target::Power64le,
        Target::Riscv64,
        Target::X86_64,
    ] {
        if !targets.contains(&t) {
            targets.push(t);
        }
    }
    for t in targets {
        for (what, fixed) in &sels {
            let mut opts = crate::support::options("all");
            opts.features.fixed = fixed.clone();
            let p = shootdown::codegen::resolve(&prog, &opts).into_owned();
            // A feature fixed on may select code for another target (a
            // POWER-only erratum on aarch64): that variant does not exist.
            let c = match shootdown::compile(&p, t, &opts) {
                Ok(c) => c,
                Err(_) if !fixed.is_empty() || !own.contains(&t) => continue,
                Err(d) => panic!("{path} {t}: {}", d.message),
            };
            out.push(Variant {
                what: format!("{path} {t}{what}"),
                prog: p,
                c,
            });
        }
    }
    out
}

/// The litmus tests of every sequence of `v` for every world `verify`
/// runs, and the orderings left out (reason -> count).
pub fn export_all(
    v: &Variant,
    c: &shootdown::codegen::Compiled,
) -> (Vec<Test>, BTreeMap<String, usize>) {
    let mut tests = Vec::new();
    let mut skipped = BTreeMap::new();
    for (si, seq) in c.opt.seqs.iter().enumerate() {
        for (wname, mut w) in worlds(&v.prog, si) {
            w.big_endian = c.target.big_endian();
            let Ok(t) = trace::run(&v.prog, c, si, &w, 2_000_000) else {
                continue;
            };
            let x = shootdown::litmus::export(c, si, &t, &seq.name)
                .unwrap_or_else(|e| panic!("{} {} ({wname}): {e}", v.what, seq.name));
            for s in x.skipped {
                *skipped.entry(s.why).or_default() += 1;
            }
            tests.extend(x.tests);
        }
    }
    (tests, skipped)
}

/// Tests with the same body (the name and notes aside) are one test.
pub fn dedup(tests: Vec<Test>) -> Vec<Test> {
    let mut seen = std::collections::BTreeSet::new();
    let mut out = Vec::new();
    for (k, mut t) in tests.into_iter().enumerate() {
        let body: String = t
            .text
            .lines()
            .skip(1)
            .filter(|l| !l.starts_with("(*"))
            .collect::<Vec<_>>()
            .join("\n");
        if seen.insert((t.variant, body)) {
            // Names must be unique in one directory.
            let first = t.text.lines().next().unwrap_or_default().to_string();
            let name = format!("{}+{k}", t.name);
            t.text = t.text.replacen(
                &first,
                &format!("{} {name}", first.split(' ').next().unwrap_or_default()),
                1,
            );
            t.name = name;
            out.push(t);
        }
    }
    out
}

#[test]
fn every_example_sequence_keeps_its_orderings_under_herd7() {
    let mut all = Vec::new();
    let mut per_arch: BTreeMap<String, usize> = BTreeMap::new();
    let mut skipped: BTreeMap<String, usize> = BTreeMap::new();
    // (variant, name) of every VMSA test before duplicates are merged.
    let mut vmsa = Vec::new();
    let mut unpublished = Vec::new();
    let mut published = 0usize;
    for path in crate::order_proof::examples() {
        for v in variants(&path) {
            let (tests, sk) = export_all(&v, &v.c);
            for (k, n) in sk {
                *skipped.entry(k).or_default() += n;
            }
            for t in tests.iter().filter(|t| t.variant == Some("vmsa")) {
                vmsa.push((v.what.clone(), t.name.clone()));
            }
            // Issue 36: every publication (the sequence's own normal
            // stores before a device access: queue entries before the
            // doorbell) has a test on every architecture.
            for seq in &v.c.opt.seqs {
                let publishes = seq.edges.iter().any(|e| {
                    e.from != shootdown::ir::OpId::ENTRY
                        && e.from_class == shootdown::ir::order::Class::NormalStore
                        && matches!(
                            e.to_class,
                            shootdown::ir::order::Class::DevStore
                                | shootdown::ir::order::Class::DevLoad
                        )
                });
                published += usize::from(publishes);
                if publishes
                    && !tests.iter().any(|t| {
                        t.variant.is_none() && t.name.starts_with(&format!("{}+e", seq.name))
                    })
                {
                    unpublished.push(format!("{} {}", v.what, seq.name));
                }
            }
            for t in dedup(tests) {
                all.push((v.what.clone(), t));
            }
        }
    }
    // Issue 36: every arm64 CPU TLB sequence, REPEAT_TLBI variant
    // included, has a VMSA shootdown test.
    for v in variants("examples/arm64_tlb_range.inv")
        .iter()
        .filter(|v| v.c.target == Target::Aarch64)
    {
        for seq in &v.c.opt.seqs {
            assert!(
                vmsa.iter()
                    .any(|(w, n)| *w == v.what && n.starts_with(&format!("{}+page", seq.name))),
                "{} {}: no VMSA test",
                v.what,
                seq.name
            );
        }
    }
    eprintln!("publishing sequences (variant x target): {published}");
    assert!(published >= 20, "too few publishing sequences: {published}");
    assert!(
        unpublished.is_empty(),
        "publishing sequences with no litmus test:\n{}",
        unpublished.join("\n")
    );
    let tests: Vec<Test> = all.iter().map(|(_, t)| t.clone()).collect();
    let verdicts = judge(&tests, "herd-examples");
    let mut bad = Vec::new();
    for ((what, t), r) in all.iter().zip(&verdicts) {
        *per_arch
            .entry(t.text.split(' ').next().unwrap_or_default().to_string())
            .or_default() += 1;
        match r {
            Ok(Verdict::Never) => {}
            Ok(v) => bad.push(format!(
                "{what}: {} is {v}: {}\n{}",
                t.name, t.checks, t.text
            )),
            Err(e) => bad.push(format!("{what}: {}: {e}", t.name)),
        }
    }
    eprintln!("herd7 tests per architecture: {per_arch:?}");
    for (why, n) in &skipped {
        eprintln!("orderings without a test ({n}): {why}");
    }
    assert!(!tests.is_empty());
    assert!(
        bad.is_empty(),
        "{} of {} tests fail:\n{}",
        bad.len(),
        tests.len(),
        bad.join("\n\n")
    );
}

#[test]
fn herd7_agrees_with_arms_vmsa_catalogue() {
    let h = herd();
    // build-herd7.sh unpacks the catalogue beside the herdtools7 tree.
    let root = h.exe.ancestors().nth(5).unwrap().join("aarch64-VMSA/tests");
    let read =
        |f: &str| std::fs::read_to_string(root.join(f)).unwrap_or_else(|e| panic!("{f}: {e}"));
    let kinds: BTreeMap<String, String> = read("VMSA-kinds.txt")
        .lines()
        .filter_map(|l| {
            let mut w = l.split_whitespace();
            Some((w.next()?.to_string(), w.next()?.to_string()))
        })
        .collect();
    let left_out: BTreeMap<String, String> =
        std::fs::read_to_string("tests/memory_model/vmsa-left-out.txt")
            .unwrap()
            .lines()
            .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
            .filter_map(|l| l.split_once(" | "))
            .map(|(n, why)| (n.trim().to_string(), why.trim().to_string()))
            .collect();
    let all: Vec<String> = ["@armv8-a", "@armv8-a+lse"]
        .iter()
        .flat_map(|f| read(f).lines().map(str::to_string).collect::<Vec<_>>())
        .filter(|l| l.ends_with(".litmus"))
        .map(|l| l.trim_end_matches(".litmus").to_string())
        .collect();
    assert_eq!(all.len(), 790, "the catalogue's test lists changed");
    for n in left_out.keys() {
        assert!(
            all.contains(n),
            "vmsa-left-out.txt names {n}, which the catalogue does not have"
        );
    }
    let run: Vec<&String> = all
        .iter()
        .filter(|n| !left_out.contains_key(*n) && kinds.contains_key(*n))
        .collect();
    let no_kind = all.iter().filter(|n| !kinds.contains_key(*n)).count();
    let bad: Vec<String> = on_both_cores(&run, |name| {
        let v = h.run_file(&root.join(format!("{name}.litmus")), Some("vmsa,fatal"));
        let want = &kinds[*name];
        let ok = matches!(
            (want.as_str(), &v),
            ("Forbidden", Ok(Verdict::Never))
                | ("Allowed", Ok(Verdict::Sometimes | Verdict::Always))
                | ("Required", Ok(Verdict::Always))
        );
        (!ok).then(|| format!("{name}: expected {want}, herd7 says {v:?}"))
    })
    .into_iter()
    .flatten()
    .collect();
    eprintln!(
        "aarch64-VMSA catalogue: {} run and compared, {} left out (tests/memory_model/vmsa-left-out.txt), {} with no expected result in VMSA-kinds.txt",
        run.len(),
        left_out.len(),
        no_kind
    );
    assert!(
        run.len() > 600,
        "too few catalogue tests run: {}",
        run.len()
    );
    assert!(
        bad.is_empty(),
        "herd7 disagrees with VMSA-kinds.txt:\n{}",
        bad.join("\n")
    );
}

/// What a barrier mutant is: the sequence, the barrier and the change.
struct Mutant {
    seq: usize,
    what: String,
    c: shootdown::codegen::Compiled,
}

/// Each barrier the passes placed, dropped (a same-size no-op) and
/// weakened (the next weaker barrier of tests/support/arch.rs, as the
/// text the trace records: the litmus export and the trace check read
/// the executed instruction's text).
fn mutants(c: &shootdown::codegen::Compiled, machine: shootdown::isa::Machine) -> Vec<Mutant> {
    let arch = crate::support::arch(c.target);
    let mut out = Vec::new();
    for (f, k, text) in crate::order_proof::placed(c) {
        out.push(Mutant {
            seq: f,
            what: format!("drop `{text}`"),
            c: crate::order_proof::without(c, f, k),
        });
        let Some(w) = arch
            .barrier_of(machine, &text)
            .and_then(|b| arch.weaker(&b))
        else {
            continue;
        };
        let mut m = c.clone();
        let func = &mut m.funcs[f];
        let line = (0..func.lines.len())
            .filter(|&i| func.lines[i].label.is_none())
            .nth(k)
            .unwrap();
        func.lines[line].text = w.to_string();
        out.push(Mutant {
            seq: f,
            what: format!("weaken `{text}` to `{w}`"),
            c: m,
        });
    }
    out
}

/// Why herd7 cannot see an ordering a mutant loses (from the trace
/// check's message), or None if it should.
fn invisible(target: Target, what: &str, lost: &str, repeat: bool) -> Option<&'static str> {
    let classes = lost.split("no barrier ordering ").nth(1).unwrap_or("");
    let (from, to) = classes.split_once(" -> ").unwrap_or(("", ""));
    let to = to.split([' ', ',', ')']).next().unwrap_or("");
    let dev = |c: &str| c.starts_with("Dev");
    if dev(from) && dev(to) {
        return Some("both ends are device registers: herd7's models have no device memory type");
    }
    if what.contains("osh")
        && !what.contains("ish` to `dmb ish")
        && what.replace("osh", "ish") != what
    {
        let w: Vec<&str> = what.split('`').collect();
        if w.len() >= 4 && w[1].replace("osh", "ish") == w[3] {
            return Some("outer vs inner shareable: herd7 assumes one inner shareable domain, so OSH and ISH read the same");
        }
    }
    let inval = ["LocalInvalidate", "EratInvalidate", "ContextSync"];
    if inval.contains(&from) || inval.contains(&to) {
        return Some(
            "a CPU-local invalidation or context synchronization: herd7 has no model of it",
        );
    }
    if (from == "TlbInvalidate" || to == "TlbInvalidate") && target != Target::Aarch64 {
        return Some("a TLB invalidation outside AArch64: herd7 has no model of it");
    }
    // `tlbi vale1is, 0 after invalidates`: TLBI -> TLBI, or (the DSB
    // that completes them) TLBI -> completion.
    if from == "TlbInvalidate" && matches!(to, "InvalidateCompletion" | "TlbInvalidate") && repeat {
        return Some("REPEAT_TLBI: the erratum's second TLBI (`tlbi vale1is, xzr`) or the DSB between the two: an earlier completed TLBI already covers every page, so the architecture's model needs neither (only the erratum does)");
    }
    None
}

#[derive(Default)]
struct Tally {
    lose: usize,
    killed: usize,
    explained: BTreeMap<&'static str, usize>,
    unexplained: Vec<String>,
    equivalent: usize,
}

#[test]
fn barrier_mutants_that_lose_an_ordering_make_herd7_answer_sometimes() {
    let mut per_target: BTreeMap<Target, Tally> = BTreeMap::new();
    for path in crate::order_proof::examples() {
        for v in variants(&path)
            .into_iter()
            .filter(|v| !v.what.contains('='))
        {
            let machine = v.prog.machine;
            for m in mutants(&v.c, machine) {
                let t = per_target.entry(v.c.target).or_default();
                let seq = &m.c.opt.seqs[m.seq];
                // Does the mutant lose a required ordering on some world?
                // (The trace check against the target's barrier table, on
                // the runs the litmus tests are made from.)
                let mut lost = None;
                let mut repeat = false;
                let mut tests = Vec::new();
                for (_, mut w) in worlds(&v.prog, m.seq) {
                    w.big_endian = m.c.target.big_endian();
                    let Ok(tr) = trace::run(&v.prog, &m.c, m.seq, &w, 2_000_000) else {
                        continue;
                    };
                    let mut r = shootdown::verify::Report::default();
                    shootdown::verify::order_check::edges_crossed(
                        "", &v.prog, seq, m.c.target, &tr, &mut r,
                    );
                    if lost.is_none() {
                        lost = r.failures.into_iter().next();
                        // The REPEAT_TLBI workaround ran: a second TLBI of
                        // page 0 after the real one.
                        let inv: Vec<_> = tr
                            .events
                            .iter()
                            .filter(|e| e.kind == trace::Kind::Invalidate)
                            .collect();
                        repeat = lost.is_some()
                            && inv.len() >= 2
                            && inv.last().is_some_and(|e| e.operands.first() == Some(&0));
                    }
                    if let Ok(x) = shootdown::litmus::export(&m.c, m.seq, &tr, &seq.name) {
                        tests.extend(x.tests);
                    }
                }
                let Some(lost) = lost else {
                    t.equivalent += 1;
                    continue;
                };
                t.lose += 1;
                let tests = dedup(tests);
                let killed = judge(&tests, "herd-mutants")
                    .iter()
                    .any(|r| matches!(r, Ok(Verdict::Sometimes | Verdict::Always)));
                let label = format!("{} {}: {}", v.what, seq.name, m.what);
                if killed {
                    t.killed += 1;
                } else if let Some(why) = invisible(m.c.target, &m.what, &lost, repeat) {
                    *t.explained.entry(why).or_default() += 1;
                } else {
                    t.unexplained.push(format!("{label}:{lost}"));
                }
            }
        }
    }
    let mut unexplained = Vec::new();
    for (target, t) in &per_target {
        eprintln!(
            "{target}: {} mutants lose an ordering, herd7 kills {} ({:.0}%); {} lose none on the worlds run",
            t.lose,
            t.killed,
            100.0 * t.killed as f64 / t.lose.max(1) as f64,
            t.equivalent
        );
        for (why, n) in &t.explained {
            eprintln!("  survive ({n}): {why}");
        }
        unexplained.extend(t.unexplained.iter().cloned());
    }
    assert!(
        unexplained.is_empty(),
        "{} mutants lose an ordering herd7 models and survive:\n{}",
        unexplained.len(),
        unexplained.join("\n")
    );
}

/// The `litmus` verb as a user runs it: `--check` runs herd7 and exits 0
/// only when there are tests and every outcome is `Never`; a spec that no
/// longer asks for the completion before the return has nothing herd7 can
/// check, which fails rather than passing silently.
#[test]
fn litmus_check_passes_the_example_and_fails_when_nothing_is_checked() {
    let herd = herd().exe.display().to_string();
    let run = |spec: &str| {
        Command::new(env!("CARGO_BIN_EXE_shootdown"))
            .args([
                "litmus",
                spec,
                "--seq",
                "flush_tlb_page",
                "--arg",
                "asid=1",
                "--arg",
                "addr=0x400000",
                "--arg",
                "features=0",
                "--check",
                "--herd7",
                &herd,
            ])
            .output()
            .unwrap()
    };
    let o = run("examples/arm64_tlb_range.inv");
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        o.status.success(),
        "{out}{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(out.starts_with("Never     flush_tlb_page+page0"), "{out}");

    let src = std::fs::read_to_string("examples/arm64_tlb_range.inv").unwrap();
    let at = src.find("seq flush_tlb_page").unwrap();
    let cut = at
        + src[at..]
            .find("    order invalidates before return\n")
            .unwrap();
    let edited = format!(
        "{}{}",
        &src[..cut],
        &src[cut + "    order invalidates before return\n".len()..]
    );
    let p = crate::support::scratch("litmus-cli").join("new.inv");
    std::fs::write(&p, edited).unwrap();
    let o = run(p.to_str().unwrap());
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("FAIL: nothing checked"), "{err}");
    assert!(
        err.contains("without both, nothing says when another CPU must stop using the old entry"),
        "{err}"
    );
}
