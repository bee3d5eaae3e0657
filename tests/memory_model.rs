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

/// Run `tests` through herd7 on both cores; the verdicts in order.
pub fn judge(tests: &[Test], tag: &str) -> Vec<Result<Verdict, String>> {
    let h = herd();
    let dir = crate::support::scratch(tag);
    let next = Mutex::new(0usize);
    let out: Mutex<Vec<Option<Result<Verdict, String>>>> = Mutex::new(vec![None; tests.len()]);
    std::thread::scope(|s| {
        for _ in 0..2 {
            s.spawn(|| loop {
                let k = {
                    let mut n = next.lock().unwrap();
                    *n += 1;
                    *n - 1
                };
                let Some(t) = tests.get(k) else { break };
                let r = h.run(t, &dir);
                out.lock().unwrap()[k] = Some(r);
            });
        }
    });
    out.into_inner()
        .unwrap()
        .into_iter()
        .map(|r| r.unwrap_or_else(|| Err("not run".into())))
        .collect()
}

fn examples() -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir("examples")
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "inv"))
        .map(|p| p.display().to_string())
        .collect();
    v.sort();
    v
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
    for path in examples() {
        for v in variants(&path) {
            let (tests, sk) = export_all(&v, &v.c);
            for (k, n) in sk {
                *skipped.entry(k).or_default() += n;
            }
            for t in dedup(tests) {
                all.push((v.what.clone(), t));
            }
        }
    }
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
    let next = Mutex::new(0usize);
    let bad = Mutex::new(Vec::new());
    std::thread::scope(|s| {
        for _ in 0..2 {
            s.spawn(|| loop {
                let k = {
                    let mut n = next.lock().unwrap();
                    *n += 1;
                    *n - 1
                };
                let Some(name) = run.get(k) else { break };
                let v = h.run_file(&root.join(format!("{name}.litmus")), Some("vmsa,fatal"));
                let want = &kinds[*name];
                let ok = matches!(
                    (want.as_str(), &v),
                    ("Forbidden", Ok(Verdict::Never))
                        | ("Allowed", Ok(Verdict::Sometimes | Verdict::Always))
                        | ("Required", Ok(Verdict::Always))
                );
                if !ok {
                    bad.lock()
                        .unwrap()
                        .push(format!("{name}: expected {want}, herd7 says {v:?}"));
                }
            });
        }
    });
    let bad = bad.into_inner().unwrap();
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
