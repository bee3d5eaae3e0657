//! Bad input: every spec under `tests/bad/` (and a few generated ones:
//! a 10 MB spec, 10,000 nested blocks, a 200,000-term expression, a
//! 300-statement sequence) must make `shootdown gen` exit 1 with a
//! `file:line:col: error:` diagnostic and a caret at the span, write no file,
//! leave existing outputs untouched, and never panic. The diagnostics are
//! snapshot-tested (plain text, no colours) in `tests/snapshots/`.
//!
//! An empty spec (or one of only comments) is an error too: "spec declares
//! no device and no sequence" (see README).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_shootdown");

/// Run `gen NAME --out OUT` from `cwd`; returns (exit code, stderr).
fn gen(cwd: &Path, name: &str, out: &Path) -> (Option<i32>, String) {
    let t = Instant::now();
    let o = Command::new(BIN)
        .current_dir(cwd)
        .args(["gen", name, "--out"])
        .arg(out)
        .output()
        .expect("run shootdown");
    assert!(
        t.elapsed() < Duration::from_secs(20),
        "{name}: took {:?}",
        t.elapsed()
    );
    (
        o.status.code(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

fn files(dir: &Path) -> Vec<PathBuf> {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut v: Vec<PathBuf> = rd.map(|e| e.unwrap().path()).collect();
    v.sort();
    v
}

/// All the checks for one bad spec `name` (relative to `cwd`); returns the
/// diagnostic for the snapshot.
fn check_bad(cwd: &Path, name: &str) -> String {
    let stem = Path::new(name).file_stem().unwrap().to_string_lossy();
    // 1. A fresh output directory is not even created.
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("out");
    let (code, err) = gen(cwd, name, &out);
    assert_eq!(code, Some(1), "{name}: exit code, stderr:\n{err}");
    assert!(!out.exists(), "{name}: created {}", out.display());

    // 2. Existing outputs (and strangers) are neither modified nor removed,
    // and no temporary file is left behind.
    let out2 = tmp.path().join("out2");
    std::fs::create_dir(&out2).unwrap();
    let olds = [
        format!("{stem}.h"),
        format!("{stem}.power64.S"),
        format!("{stem}.aarch64.S"),
        "unrelated.txt".to_string(),
    ];
    for f in &olds {
        std::fs::write(out2.join(f), format!("old {f}\n")).unwrap();
    }
    let before: Vec<_> = files(&out2)
        .iter()
        .map(|p| std::fs::metadata(p).unwrap().modified().unwrap())
        .collect();
    let (code2, err2) = gen(cwd, name, &out2);
    assert_eq!(code2, Some(1), "{name}: exit code with existing outputs");
    assert_eq!(err, err2, "{name}: diagnostics differ between runs");
    let after = files(&out2);
    assert_eq!(after.len(), olds.len(), "{name}: files now {after:?}");
    for (p, t) in after.iter().zip(&before) {
        let f = p.file_name().unwrap().to_string_lossy();
        assert_eq!(
            std::fs::read_to_string(p).unwrap(),
            format!("old {f}\n"),
            "{name}: {f} modified"
        );
        assert_eq!(std::fs::metadata(p).unwrap().modified().unwrap(), *t);
    }

    // 3. The diagnostic: location header, caret/underline, no panic.
    let first = err.lines().next().unwrap_or("");
    let rest = first
        .strip_prefix(name)
        .and_then(|r| r.strip_prefix(':'))
        .unwrap_or_else(|| panic!("{name}: header is not `file:line:col: error:`:\n{err}"));
    let mut parts = rest.splitn(3, ':');
    let line = parts.next().unwrap();
    let col = parts.next().unwrap_or("");
    assert!(
        line.parse::<usize>().is_ok() && col.parse::<usize>().is_ok(),
        "{name}: line/col in `{first}`"
    );
    assert!(
        parts.next().unwrap_or("").starts_with(" error: "),
        "{name}: `{first}`"
    );
    assert!(
        err.contains('┬') || err.contains('▲') || err.contains('^'),
        "{name}: no caret:\n{err}"
    );
    for bad in [
        "panicked",
        "internal error",
        "RUST_BACKTRACE",
        "stack overflow",
    ] {
        assert!(!err.contains(bad), "{name}: `{bad}` in\n{err}");
    }
    // 4. The rendering has no colours (it is the plain `diag::render`).
    assert!(!err.contains('\u{1b}'), "{name}: escape codes in\n{err}");
    err
}

fn snapshot(name: &str, diag: &str) {
    let mut s = insta::Settings::clone_current();
    s.set_snapshot_path("snapshots");
    s.set_prepend_module_to_snapshot(false);
    // A few fixtures hold a NUL byte; keep the snapshot readable.
    let diag = diag.replace('\0', "\\0");
    // The list of registered targets is the registry's, not the fixture's:
    // a new target must not change snapshots (`unknown_target_lists_every_target`
    // checks the list itself).
    let diag = diag.replace(&every_target(), "[every target]");
    s.bind(|| insta::assert_snapshot!(format!("bad__{name}"), diag));
}

/// The registered targets as diagnostics list them.
fn every_target() -> String {
    let names: Vec<&str> = shootdown::Target::ALL.iter().map(|t| t.name()).collect();
    names.join(", ")
}

/// An unknown target's help names every registered target.
#[test]
fn unknown_target_lists_every_target() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let diag = check_bad(root, "tests/bad/unknown_target.inv");
    assert!(
        diag.contains(&format!("help: targets are {}", every_target())),
        "{diag}"
    );
}

#[test]
fn every_fixture_is_rejected_cleanly() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut names: Vec<String> = std::fs::read_dir(root.join("tests/bad"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".inv"))
        .collect();
    names.sort();
    assert!(names.len() >= 40, "fixtures: {names:?}");
    for n in &names {
        let rel = format!("tests/bad/{n}");
        let diag = check_bad(root, &rel);
        snapshot(n.trim_end_matches(".inv"), &diag);
    }
}

const DEV: &str = "device d {\n    instances dynamic max 4\n    reg a 0x0 u64 le\n}\n";

/// Write a generated spec into a fresh directory and check it there (the
/// relative name keeps the snapshot independent of the temp path).
fn generated(name: &str, text: &str) -> String {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join(name), text).unwrap();
    check_bad(dir.path(), name)
}

#[test]
fn ten_megabyte_spec() {
    let mut s = String::from(DEV);
    let mut i = 0;
    while s.len() < 10 << 20 {
        s.push_str(&format!(
            "seq s{i}(x: u64) {{ each d {{ d.a = x + {i} }} }}\n"
        ));
        i += 1;
    }
    snapshot("huge_spec", &generated("huge.inv", &s));
}

#[test]
fn ten_thousand_nested_blocks() {
    let s = format!(
        "{DEV}seq s() {{\n{}d.a = 1\n{}}}\n",
        "each d {\n".repeat(10_000),
        "}\n".repeat(10_000)
    );
    snapshot("deep_blocks", &generated("deep.inv", &s));
}

#[test]
fn ten_thousand_nested_parentheses() {
    let s = format!(
        "{DEV}seq s() {{\n each d {{ d.a = {}1{} }}\n}}\n",
        "(".repeat(10_000),
        ")".repeat(10_000)
    );
    snapshot("deep_parens", &generated("parens.inv", &s));
}

/// A flat `x + x + ...` chain nests as deeply as parentheses: this one
/// overflowed the stack before expressions were bounded.
#[test]
fn two_hundred_thousand_term_expression() {
    let s = format!(
        "{DEV}seq s(x: u64) {{\n each d {{ d.a = {} }}\n}}\n",
        vec!["x"; 200_000].join(" + ")
    );
    snapshot("long_expr", &generated("long.inv", &s));
}

/// Large sequences made the barrier search run for minutes; they are now
/// bounded at the parser.
#[test]
fn oversized_sequence() {
    let s = format!(
        "device d {{\n    instances dynamic max 4\n    reg a 0x0 u64 le\n    reg b 0x8 u64 le\n    require a before b\n}}\nseq s() {{\n{}}}\n",
        "    each d { d.a = 1 }\n    each d { d.b = 2 }\n".repeat(150)
    );
    snapshot("big_seq", &generated("bigseq.inv", &s));
}

/// One good and one bad spec in one run: nothing is written for either.
#[test]
fn a_bad_spec_stops_the_good_ones_too() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("out");
    let o = Command::new(BIN)
        .current_dir(root)
        .args([
            "gen",
            "examples/npu2_atsd.inv",
            "tests/bad/unknown_register.inv",
            "--out",
        ])
        .arg(&out)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    assert!(files(&out).is_empty(), "{:?}", files(&out));
}

/// A spec with only a device is valid: a header and empty `.S` files.
#[test]
fn device_only_spec_is_valid() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("regs.inv"), DEV).unwrap();
    let out = dir.path().join("out");
    let o = Command::new(BIN)
        .current_dir(dir.path())
        .args(["gen", "regs.inv", "--out"])
        .arg(&out)
        .output()
        .unwrap();
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert_eq!(files(&out).len(), 2);
}

/// miette pads with a `u16` width: a column past 65535 panicked
/// ("Formatting argument out of range"). Such lines show as a window.
#[test]
fn error_past_column_65535() {
    let s = format!("{}@\n", " ".repeat(70_000));
    let d = generated("wide.inv", &s);
    assert!(d.starts_with("wide.inv:1:70001: error:"), "{d}");
    snapshot("wide_line", &d);
    let s = format!(
        "device d {{ reg a 0x0 u64 le }}\nseq s() {{ d.a = 1{}d.b = 2 }}\n",
        " ".repeat(70_000)
    );
    let d = generated("wide2.inv", &s);
    assert!(
        d.starts_with("wide2.inv:2:70020: error: device `d` has no register `b`"),
        "{d}"
    );
    snapshot("wide_line_unknown_register", &d);
}

/// A 100,000-character name is an error at the name (it used to be
/// quoted whole in the message, and its column overflowed miette).
#[test]
fn hundred_thousand_character_name() {
    let s = format!(
        "device d {{ reg a 0x0 u64 le }}\nseq s() {{ d.{} = 1 }}\n",
        "a".repeat(100_000)
    );
    let d = generated("longname.inv", &s);
    assert!(d.len() < 2000, "{d}");
    snapshot("long_name", &d);
}
