//! The command line as a hostile but fair user meets it (issue 16): exit
//! codes (2 for every bad usage, as the README says), counts checked
//! against their limits before anything is allocated, options that name
//! things the spec does not have, closed pipes, single-target verbs that
//! follow the spec's `target` line, and the numbers `cost`, `diff` and
//! `stats` report, each against an independent count.

use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_shootdown");
const ROOT: &str = env!("CARGO_MANIFEST_DIR");

struct Out {
    code: Option<i32>,
    stdout: String,
    stderr: String,
}

fn sd(args: &[&str]) -> Out {
    sd_in(Path::new(ROOT), args)
}

fn sd_in(cwd: &Path, args: &[&str]) -> Out {
    let t = Instant::now();
    let o = Command::new(BIN)
        .current_dir(cwd)
        .args(args)
        .output()
        .expect("run shootdown");
    let out = Out {
        code: o.status.code(),
        stdout: String::from_utf8_lossy(&o.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
    };
    assert!(
        !out.stderr.contains("panicked") && !out.stderr.contains("RUST_BACKTRACE"),
        "{args:?} panicked:\n{}",
        out.stderr
    );
    assert!(
        t.elapsed() < Duration::from_secs(30),
        "{args:?} took {:?}",
        t.elapsed()
    );
    out
}

fn tmp_spec(dir: &Path, name: &str, text: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

/// The README's promise, checked: `2 bad usage`.
#[test]
fn readme_says_bad_usage_exits_2() {
    let readme = std::fs::read_to_string(Path::new(ROOT).join("README.md")).unwrap();
    assert!(
        readme.contains("2 bad usage"),
        "README changed its exit codes"
    );
}

/// Every bad option value, and every option naming what the spec does not
/// have, exits 2 with a message that names the option.
#[test]
fn bad_usage_exits_2_and_names_the_option() {
    let out = tempfile::tempdir().unwrap();
    let o = out.path().to_str().unwrap();
    let atsd = "examples/npu2_atsd.inv";
    let tce = "examples/npu2_tce_kill.inv";
    let cases: &[(&[&str], &str)] = &[
        (&["gen", atsd, "--out", o, "--set", "FOO"], "--set"),
        (&["gen", atsd, "--out", o, "--set", "NOPE=5"], "NOPE"),
        (&["gen", atsd, "--out", o, "--set", "X=0xZZ"], "--set"),
        (&["gen", atsd, "--out", o, "--passes", ""], "--passes"),
        (
            &["gen", atsd, "--out", o, "--passes", "fission,,"],
            "--passes",
        ),
        (&["gen", atsd, "--out", o, "--passes", "nope"], "--passes"),
        (&["gen", atsd, "--out", o, "--prefix", "1 bad;"], "--prefix"),
        (&["gen", atsd, "--out", o, "--prefix", "a-b"], "--prefix"),
        (
            &["gen", atsd, "--out", o, "--spdx", "GPL */ evil\n#define X"],
            "--spdx",
        ),
        (&["gen", atsd, "--out", o, "--spdx", "MIT */"], "--spdx"),
        (&["gen", atsd, "--out", o, "--target", "riscv"], "--target"),
        (&["show", atsd, "--stage", "nope"], "--stage"),
        (&["show", atsd, "--set", "NOPE=1"], "NOPE"),
        (&["stats", atsd, "--passes", ""], "--passes"),
        (
            &["cost", tce, "--seq", "tce_kill", "--sizes", "4Q"],
            "--sizes",
        ),
        // 2^28 pages: refused up front (it ran for 30 s into 2.3 GB).
        (
            &["cost", tce, "--seq", "tce_kill", "--sizes", "1T"],
            "at most 262144 granules",
        ),
        (
            &["cost", atsd, "--seq", "invalidate_range", "--sizes", "1T"],
            "at most 262144 granules",
        ),
        (
            &["cost", tce, "--seq", "tce_kill", "--sizes", ","],
            "--sizes",
        ),
        (
            &["cost", tce, "--seq", "tce_kill", "--start", "x"],
            "--start",
        ),
        (
            &["cost", tce, "--seq", "tce_kill", "--cost", "invalidate"],
            "--cost",
        ),
        (
            &["cost", tce, "--seq", "tce_kill", "--cost", "bogus=5"],
            "--cost",
        ),
        (&["cost", tce, "--seq", "tce_kill", "--arg", "pe"], "--arg"),
        (
            &["cost", tce, "--seq", "tce_kill", "--arg", "nope=1"],
            "--arg",
        ),
        (
            &[
                "cost", tce, "--seq", "tce_kill", "--arg", "pe=1", "--arg", "pe=2",
            ],
            "--arg",
        ),
        (
            &["cost", tce, "--seq", "tce_kill", "--set", "NOPE=3"],
            "NOPE",
        ),
        (&["cost", tce, "--seq", "nope"], "nope"),
        (&["cost", tce], "--seq"),
        (
            &["cost", tce, "--seq", "tce_kill", "--passes", ""],
            "--passes",
        ),
        (
            &["diff", atsd, "--seq", "invalidate_va", "--a-passes", ""],
            "--a-passes",
        ),
        (
            &["diff", atsd, "--seq", "invalidate_va", "--read", "npu"],
            "--read",
        ),
        (
            &[
                "diff",
                atsd,
                "--seq",
                "invalidate_va",
                "--read",
                "npu.nope=1",
            ],
            "--read",
        ),
        (
            &[
                "diff",
                atsd,
                "--seq",
                "invalidate_va",
                "--read",
                "nope.stat=1",
            ],
            "--read",
        ),
        (
            &[
                "diff",
                atsd,
                "--seq",
                "invalidate_va",
                "--arg",
                "pid=1",
                "--arg",
                "pid=1",
            ],
            "--arg",
        ),
        (
            &["diff", atsd, "--seq", "invalidate_va", "--instances", "7"],
            "--instances",
        ),
        (
            &[
                "cost",
                atsd,
                "--seq",
                "invalidate_range",
                "--instances",
                "18446744073709551615",
            ],
            "--instances",
        ),
        (
            &["diff", atsd, "--seq", "invalidate_va", "--instances", "x"],
            "--instances",
        ),
        (&["nope"], "nope"),
        (&["gen"], "SPECS"),
    ];
    for (args, needle) in cases {
        let r = sd(args);
        assert_eq!(r.code, Some(2), "{args:?}: stderr:\n{}", r.stderr);
        assert!(
            r.stderr.contains(needle),
            "{args:?}: `{needle}` not in:\n{}",
            r.stderr
        );
        assert!(r.stdout.is_empty(), "{args:?}: stdout:\n{}", r.stdout);
    }
    assert!(
        std::fs::read_dir(out.path()).unwrap().next().is_none(),
        "a bad command line wrote files"
    );
}

/// Counts are checked against the spec's `max` and the runner's limit
/// before anything is allocated: these used to grow to gigabytes.
#[cfg(feature = "emu")]
#[test]
fn trace_instances_are_bounded() {
    let atsd = "examples/npu2_atsd.inv";
    for n in ["7", "100000", "4294967296", "18446744073709551615"] {
        let r = sd(&["trace", atsd, "--seq", "invalidate_va", "--instances", n]);
        assert_eq!(r.code, Some(2), "{n}: {}", r.stderr);
        assert!(r.stderr.contains("at most 6"), "{n}: {}", r.stderr);
    }
    let dir = tempfile::tempdir().unwrap();
    let spec = tmp_spec(
        dir.path(),
        "big.inv",
        "target aarch64\ndevice d {\n instances dynamic max 100000\n reg a 0x0 u64 le\n}\n\
         seq s() { each d { d.a = 1 } }\n",
    );
    let s = spec.to_str().unwrap();
    let r = sd(&["trace", s, "--seq", "s", "--instances", "100000"]);
    assert_eq!(r.code, Some(2), "{}", r.stderr);
    assert!(
        r.stderr.contains("the emulator runs at most 256"),
        "{}",
        r.stderr
    );
    // At the limit it runs, and every instance gets its store.
    let r = sd(&["trace", s, "--seq", "s", "--instances", "256", "--json"]);
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    let v: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    let stores = v["events"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["kind"] == "store")
        .count();
    assert_eq!(stores, 256);
    // `cost`/`diff` take the maximum by default: bounded too.
    let r = sd(&["diff", s, "--seq", "s", "--arg", "x=1"]);
    assert_eq!(r.code, Some(2), "{}", r.stderr);
    assert!(r.stderr.contains("at most 4096"), "{}", r.stderr);
    let r = sd(&[
        "trace",
        s,
        "--seq",
        "s",
        "--instances",
        "3",
        "--read",
        "d.a=1",
    ]);
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    // A poll that never sees its value: a million reads were a million
    // events in memory (560 MB); the run stops at its instruction bound
    // and says how to script the register.
    let spec = tmp_spec(
        dir.path(),
        "poll.inv",
        "target aarch64\ndevice d {\n instances dynamic max 256\n reg a 0x0 u64 le\n}\n\
         seq s() { each d { poll d.a == 1 limit 1000000 else return -110 } }\n",
    );
    let p = spec.to_str().unwrap();
    let r = sd(&["trace", p, "--seq", "s", "--instances", "256"]);
    assert_eq!(r.code, Some(1), "{}", r.stderr);
    assert!(r.stderr.contains("--read"), "{}", r.stderr);
    let r = sd(&[
        "trace",
        p,
        "--seq",
        "s",
        "--instances",
        "256",
        "--read",
        "d.a=0,1",
        "--json",
    ]);
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    let v: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    let loads = v["events"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["kind"] == "load")
        .count();
    assert_eq!(loads, 2 * 256, "two reads per instance");
}

/// `trace`, `cost`, `diff`, `show` and `stats` follow the spec's `target`
/// line as `gen` does (they used to default to power64 and fail).
#[test]
fn single_target_verbs_default_to_the_specs_first_target() {
    let dir = tempfile::tempdir().unwrap();
    let src = std::fs::read_to_string(Path::new(ROOT).join("examples/arm64_tlb_range.inv"))
        .unwrap()
        .replace("target aarch64", "target aarch64 // only");
    let spec = tmp_spec(dir.path(), "arm.inv", &src);
    let s = spec.to_str().unwrap();
    let r = sd(&["stats", s, "--json"]);
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    assert!(r.stdout.contains("\"target\": \"aarch64\""), "{}", r.stdout);
    let r = sd(&["show", s]);
    assert!(
        r.code == Some(0) && r.stdout.contains("tlbi"),
        "{}",
        r.stderr
    );
    let r = sd(&["cost", s, "--seq", "flush_tlb_range", "--sizes", "4K"]);
    assert!(
        r.code == Some(0) && r.stdout.contains("on aarch64"),
        "{}",
        r.stderr
    );
    let r = sd(&["diff", s, "--seq", "flush_tlb_page", "--arg", "addr=0x1000"]);
    assert!(
        r.code == Some(0) && r.stdout.contains("on aarch64"),
        "{}",
        r.stderr
    );
    #[cfg(feature = "emu")]
    {
        let r = sd(&[
            "trace",
            s,
            "--seq",
            "flush_tlb_page",
            "--arg",
            "addr=0x1000",
        ]);
        assert!(
            r.code == Some(0) && r.stdout.contains("tlbi"),
            "{}",
            r.stderr
        );
    }
    // --target still wins.
    let r = sd(&["stats", s, "--json", "--target", "power64"]);
    assert_eq!(r.code, Some(1), "tlbi is not a POWER instruction");
}

/// `cost` of `cover start, end - start` with a nonzero start: the same
/// table as the spec written `cover start, size` (an independent
/// formulation of the same requests).
#[test]
fn cost_with_a_nonzero_start_matches_the_size_formulation() {
    let dir = tempfile::tempdir().unwrap();
    let src =
        std::fs::read_to_string(Path::new(ROOT).join("examples/arm64_tlb_range.inv")).unwrap();
    let sized = src
        .replace(
            "seq flush_tlb_range(asid: u64, start: u64, end: u64)",
            "seq flush_tlb_range(asid: u64, start: u64, size: u64)",
        )
        .replacen(
            "cover start, end - start with tlb4k auto",
            "cover start, size with tlb4k auto",
            1,
        );
    assert_ne!(src, sized);
    let a = tmp_spec(dir.path(), "end.inv", &src);
    let b = tmp_spec(dir.path(), "size.inv", &sized);
    for start in ["0x10000", "0x7ff000", "0"] {
        let common = [
            "--seq",
            "flush_tlb_range",
            "--sizes",
            "4K,64K,1M,2M,4M,1G",
            "--json",
        ];
        let arg = format!("start={start}");
        let mut x = vec!["cost", a.to_str().unwrap(), "--arg", &arg];
        x.extend(common);
        let mut y = vec!["cost", b.to_str().unwrap(), "--arg", &arg];
        y.extend(common);
        let (ra, rb) = (sd(&x), sd(&y));
        assert_eq!(ra.code, Some(0), "{start}: {}", ra.stderr);
        assert_eq!(rb.code, Some(0), "{start}: {}", rb.stderr);
        let (ja, jb): (serde_json::Value, serde_json::Value) = (
            serde_json::from_str(&ra.stdout).unwrap(),
            serde_json::from_str(&rb.stdout).unwrap(),
        );
        assert_eq!(ja["rows"], jb["rows"], "start {start}");
        assert_eq!(ja["rows"].as_array().unwrap().len(), 6);
        assert_eq!(ja["rows"][0]["size"], 4096);
    }
}

/// VT-d page flush: one op (IVA carries the operand, IOTLB launches), and
/// with `--read` the self-clearing poll sees its bit cleared. The
/// emulator trace of the machine code is the independent count.
#[cfg(feature = "emu")]
#[test]
fn diff_counts_one_op_per_vtd_flush_and_scripts_reads() {
    let spec = "examples/vtd_iotlb.inv";
    let args = [
        "--seq",
        "iotlb_flush_page",
        "--target",
        "x86_64",
        "--arg",
        "did=1",
        "--arg",
        "addr=0x1000",
        "--arg",
        "am=0",
        "--arg",
        "cap=0",
        "--read",
        "iotlb.iotlb=0x8000000000000000,0x8000000000000000,0",
    ];
    let mut d = vec!["diff", spec];
    d.extend(args);
    let r = sd(&d);
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    let row = |name: &str| -> Vec<String> {
        let l = r
            .stdout
            .lines()
            .skip_while(|l| !l.starts_with("dynamic counts"))
            .find(|l| l.trim_start().starts_with(name))
            .unwrap_or_else(|| panic!("no `{name}` in\n{}", r.stdout));
        l.split_whitespace()
            .rev()
            .take(2)
            .map(String::from)
            .collect()
    };
    assert_eq!(row("ops (launches)"), ["1", "1"]);
    assert_eq!(row("return"), ["0", "0"]);
    let mut t = vec!["trace", spec, "--json"];
    t.extend(args);
    let tr = sd(&t);
    assert_eq!(tr.code, Some(0), "{}", tr.stderr);
    let v: serde_json::Value = serde_json::from_str(&tr.stdout).unwrap();
    let count = |k: &str| {
        v["events"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|e| e["kind"] == k)
            .count()
            .to_string()
    };
    assert_eq!(row("loads"), [count("load"), count("load")]);
    assert_eq!(row("stores"), [count("store"), count("store")]);
    assert_eq!(count("load"), "3");
    assert_eq!(v["return"], 0);
}

/// `stats --json` keeps a barrier's option: `dsb ish` and `dsb ishst` are
/// counted apart, as GNU objdump's disassembly of the assembled file
/// tells them apart.
#[test]
fn stats_barrier_kinds_keep_their_operands() {
    let r = sd(&[
        "stats",
        "examples/arm64_tlb_range.inv",
        "--target",
        "aarch64",
        "--json",
    ]);
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    let v: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let g = sd(&[
        "gen",
        "examples/arm64_tlb_range.inv",
        "--target",
        "aarch64",
        "--out",
        dir.path().to_str().unwrap(),
    ]);
    assert_eq!(g.code, Some(0), "{}", g.stderr);
    let obj = dir.path().join("x.o");
    let st = Command::new("aarch64-linux-gnu-gcc")
        .arg("-c")
        .arg(dir.path().join("arm64_tlb_range.aarch64.S"))
        .arg("-o")
        .arg(&obj)
        .status()
        .expect("aarch64-linux-gnu-gcc (./scripts/install-deps.sh)");
    assert!(st.success());
    let dis = Command::new("aarch64-linux-gnu-objdump")
        .arg("-d")
        .arg(&obj)
        .output()
        .expect("aarch64-linux-gnu-objdump");
    let dis = String::from_utf8_lossy(&dis.stdout);
    // objdump: per function `<name>:` then `addr: word \tmnemonic\toperands`.
    let mut by_fn: std::collections::BTreeMap<String, std::collections::BTreeMap<String, u64>> =
        Default::default();
    let mut cur = String::new();
    for l in dis.lines() {
        if let Some(name) = l.strip_suffix(">:").and_then(|l| l.split('<').nth(1)) {
            cur = name.to_string();
            by_fn.entry(cur.clone()).or_default();
            continue;
        }
        let f: Vec<&str> = l.split('\t').collect();
        if f.len() >= 3 {
            let m = f[2].trim();
            let kind = match m {
                "dsb" | "dmb" => format!("{m} {}", f.get(3).map_or("", |o| o.trim())),
                "isb" => "isb".to_string(),
                _ => continue,
            };
            *by_fn.get_mut(&cur).unwrap().entry(kind).or_default() += 1;
        }
    }
    let mut kinds = std::collections::BTreeSet::new();
    for s in v["sequences"].as_array().unwrap() {
        let name = s["name"].as_str().unwrap();
        let ours: std::collections::BTreeMap<String, u64> =
            serde_json::from_value(s["barriers"].clone()).unwrap();
        assert_eq!(ours, by_fn[name], "{name}");
        kinds.extend(ours.into_keys());
    }
    assert!(
        kinds.contains("dsb ish") && kinds.contains("dsb ishst"),
        "{kinds:?}"
    );
}

/// A closed pipe ends the program quietly (no "failed printing to
/// stdout" panic), on standard output and on standard error alike.
#[test]
fn closed_pipes_end_quietly() {
    let dir = tempfile::tempdir().unwrap();
    let mut big = String::from("device d {\n instances dynamic max 4\n reg a 0x0 u64 le\n}\n");
    for i in 0..2000 {
        big.push_str(&format!(
            "seq s{i}(x: u64) {{ each d {{ d.a = x + {i} }} }}\n"
        ));
    }
    let spec = tmp_spec(dir.path(), "big.inv", &big);
    // stdout: read one line, then close.
    let mut child = Command::new(BIN)
        .args(["show", spec.to_str().unwrap(), "--stage", "ast"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut first)
        .unwrap();
    let mut err = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut err)
        .unwrap();
    let status = child.wait().unwrap();
    assert_eq!(first.trim(), "{");
    assert!(err.is_empty(), "stderr: {err}");
    assert_eq!(status.code(), Some(0), "{status:?}");
    // stderr: `gen --check` lists 10,000 stale files; the reader leaves
    // after one line.
    let mut specs = Vec::new();
    for i in 0..2000 {
        specs.push(tmp_spec(
            dir.path(),
            &format!("t{i}.inv"),
            "target power64, power64le, aarch64, x86_64\ndevice d { reg a 0x0 u64 le }\n",
        ));
    }
    let mut child = Command::new(BIN)
        .arg("gen")
        .args(&specs)
        .args(["--check", "--out"])
        .arg(dir.path().join("out"))
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = String::new();
    BufReader::new(child.stderr.take().unwrap())
        .read_line(&mut first)
        .unwrap();
    let status = child.wait().unwrap();
    assert!(first.starts_with("stale: "), "{first}");
    assert_eq!(status.code(), Some(1), "stale outputs: exit 1, no panic");
}

/// Past the cap on arguments (29, every target alike): one diagnostic per
/// run, whatever the verb; at the cap, every verb works on x86-64 (which
/// passes 23 of them on the stack).
#[test]
fn argument_cap_reports_once_and_the_cap_itself_works() {
    let dir = tempfile::tempdir().unwrap();
    let seq = |n: usize| {
        let params: Vec<String> = (1..=n).map(|i| format!("a{i}: u64")).collect();
        let sum: Vec<String> = (1..=n).map(|i| format!("a{i}")).collect();
        format!(
            "target x86_64\ndevice d {{ reg a 0x0 u64 le }}\nseq s({}) {{ d.a = {} }}\n",
            params.join(", "),
            sum.join(" + ")
        )
    };
    // The device base is an argument too: 28 parameters make 29.
    let at_cap = tmp_spec(dir.path(), "cap.inv", &seq(28));
    let over = tmp_spec(dir.path(), "over.inv", &seq(29));
    for (spec, ok) in [(&at_cap, true), (&over, false)] {
        let s = spec.to_str().unwrap();
        let o = dir.path().join("o");
        for args in [
            vec!["gen", s, "--out", o.to_str().unwrap()],
            vec!["stats", s],
            vec!["show", s],
            vec!["verify", s],
        ] {
            let r = sd(&args);
            if ok {
                assert_eq!(r.code, Some(0), "{args:?}: {}", r.stderr);
                continue;
            }
            assert_eq!(r.code, Some(1), "{args:?}");
            assert_eq!(
                r.stderr.matches(": error: ").count(),
                1,
                "{args:?}:\n{}",
                r.stderr
            );
            assert!(
                r.stderr
                    .contains("takes 30 arguments; at most 29 are supported"),
                "{}",
                r.stderr
            );
        }
    }
}

/// A spec saved with CR-only line endings or a UTF-8 byte order mark
/// generates the same files as the plain one.
#[test]
fn cr_line_endings_and_byte_order_mark_are_plain_text() {
    let src = std::fs::read_to_string(Path::new(ROOT).join("examples/npu2_atsd.inv")).unwrap();
    let variants = [
        ("plain", src.clone()),
        ("cr", src.replace('\n', "\r")),
        ("crlf", src.replace('\n', "\r\n")),
        ("bom", format!("\u{feff}{src}")),
    ];
    let mut outputs = Vec::new();
    for (tag, text) in &variants {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join(tag)).unwrap();
        let spec = tmp_spec(&dir.path().join(tag), "npu2_atsd.inv", text);
        let out = dir.path().join("out");
        let r = sd(&[
            "gen",
            spec.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ]);
        assert_eq!(r.code, Some(0), "{tag}: {}", r.stderr);
        let mut files: Vec<(String, String)> = std::fs::read_dir(&out)
            .unwrap()
            .map(|e| {
                let p = e.unwrap().path();
                (
                    p.file_name().unwrap().to_string_lossy().into_owned(),
                    std::fs::read_to_string(&p).unwrap(),
                )
            })
            .collect();
        files.sort();
        outputs.push((tag, files));
    }
    for (tag, files) in &outputs[1..] {
        assert_eq!(files, &outputs[0].1, "{tag} differs from plain");
    }
    // An error in a CR-only spec is reported on its own line.
    let dir = tempfile::tempdir().unwrap();
    let spec = tmp_spec(
        dir.path(),
        "cr.inv",
        "device d {\r  reg a 0x0 u64 le\r}\rseq s() {\r  d.b = 1\r}\r",
    );
    let r = sd_in(dir.path(), &["gen", "cr.inv", "--out", "o"]);
    assert!(r.stderr.starts_with("cr.inv:5:5: error:"), "{}", r.stderr);
    let _ = spec;
}

/// `--spdx` takes an SPDX expression and nothing that could end the
/// comment it is written into.
#[test]
fn spdx_expressions_are_accepted_and_comment_injection_is_not() {
    let dir = tempfile::tempdir().unwrap();
    let o = dir.path().to_str().unwrap();
    let r = sd(&[
        "gen",
        "examples/npu2_tce_kill.inv",
        "--out",
        o,
        "--spdx",
        "GPL-2.0-only OR (MIT AND BSD-2-Clause)",
        "--target",
        "aarch64",
    ]);
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    let h = std::fs::read_to_string(dir.path().join("npu2_tce_kill.h")).unwrap();
    assert!(
        h.starts_with("/* SPDX-License-Identifier: GPL-2.0-only OR (MIT AND BSD-2-Clause) */\n")
    );
    for bad in ["GPL */ evil", "MIT\n#define X 1", "MIT // x", "x;y"] {
        let r = sd(&[
            "gen",
            "examples/npu2_tce_kill.inv",
            "--out",
            o,
            "--spdx",
            bad,
        ]);
        assert_eq!(r.code, Some(2), "{bad:?}: {}", r.stderr);
    }
}

/// `--out` naming a file says which path is in the way.
#[test]
fn out_naming_a_file_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("existing_file");
    std::fs::write(&f, "keep\n").unwrap();
    let r = sd(&[
        "gen",
        "examples/npu2_tce_kill.inv",
        "--out",
        f.to_str().unwrap(),
    ]);
    assert_eq!(r.code, Some(1));
    assert!(
        r.stderr
            .contains("existing_file` exists and is not a directory"),
        "{}",
        r.stderr
    );
    assert!(!r.stderr.contains("os error 17"), "{}", r.stderr);
    assert_eq!(std::fs::read_to_string(&f).unwrap(), "keep\n");
}

/// `--help` and `--version` are not errors.
#[test]
fn help_and_version_exit_0() {
    for args in [
        &["--help"][..],
        &["--version"],
        &["gen", "--help"],
        &["man"],
    ] {
        let r = sd(args);
        assert_eq!(r.code, Some(0), "{args:?}: {}", r.stderr);
        assert!(!r.stdout.is_empty());
    }
}

/// `verify` fails when the worlds leave code unrun (issue 42: it used to
/// pass code it never ran), names the arm by spec line, and passes with
/// `--allow-unreached`, still listing it.
#[cfg(feature = "emu")]
#[test]
fn verify_fails_on_arms_its_worlds_cannot_reach() {
    let dir = tempfile::tempdir().unwrap();
    let spec = tmp_spec(
        dir.path(),
        "arm.inv",
        "target aarch64\ndevice d { reg a 0x0 u64 le }\nseq s(x: u64) {\n  if x * 3 == 0x1234567 {\n    d.a = 1\n  }\n  d.a = 2\n}\n",
    );
    let s = spec.to_str().unwrap();
    let r = sd(&["verify", s]);
    assert_eq!(r.code, Some(1), "{}", r.stdout);
    assert!(
        r.stdout.contains("UNRUN") && r.stdout.contains("`if` at line 4: then"),
        "{}",
        r.stdout
    );
    let r = sd(&["verify", s, "--allow-unreached"]);
    assert_eq!(r.code, Some(0), "{}", r.stdout);
    assert!(
        r.stdout.contains("unrun") && r.stdout.contains("line 4"),
        "{}",
        r.stdout
    );
}

/// Issue 41's reproducer: the worlds run the `while` into its limit (an
/// address range near 2^64), and that exit returns with the `ptesync`
/// after the last `tlbiel`, whatever else the sequence contains.
#[cfg(feature = "emu")]
#[test]
fn verify_runs_while_limit_exits_and_they_complete_invalidations() {
    let dir = tempfile::tempdir().unwrap();
    let spec = tmp_spec(dir.path(), "rl.inv", ISSUE41_RL);
    let s = spec.to_str().unwrap();
    let r = sd(&["verify", s]);
    assert!(!r.stdout.contains("limit exit"), "{}", r.stdout);
    assert!(!r.stdout.contains("FAIL"), "{}", r.stdout);
    let r = sd(&[
        "trace",
        s,
        "--seq",
        "rl",
        "--arg",
        "pid=1",
        "--arg",
        "start=0xffffffffffff0001",
        "--arg",
        "end=0xffffffffffffffff",
    ]);
    let lines: Vec<&str> = r.stdout.lines().collect();
    let ret = lines
        .iter()
        .position(|l| l.starts_with("return -22"))
        .unwrap();
    assert!(lines[ret - 1].contains("ptesync"), "{}", r.stdout);
    assert_eq!(
        lines
            .iter()
            .filter(|l| l.starts_with("invalidate") && l.contains("tlbiel"))
            .count(),
        512,
        "{}",
        r.stdout
    );
}

const ISSUE41_RL: &str = "target power64
seq rl(pid: u64, start: u64, end: u64) {
    order stores before invalidates
    order invalidates before return
    if (end - start) >> 16 > 256 {
        tlbiel 1 << 10, pid << 32, 2, 1, 1
        barrier ptesync
        slbia 3
        barrier isync
    } else {
        let addr = start
        while addr < end limit 512 {
            tlbiel (addr & ~0xfff) | (5 << 5), pid << 32, 0, 1, 1
            addr = addr + 0x10000
        }
        barrier ptesync
    }
}
";

/// `--passes fuse,fuse` is bad usage (exit 2), naming the pass (issue 42).
#[test]
fn a_pass_named_twice_is_bad_usage() {
    let r = sd(&[
        "gen",
        "examples/npu2_atsd.inv",
        "--passes",
        "fuse,fuse",
        "--check",
    ]);
    assert_eq!(r.code, Some(2), "{}", r.stderr);
    assert!(r.stderr.contains("pass `fuse` named twice"), "{}", r.stderr);
}

/// `trace --json` gives every register operand of an invalidation (issue
/// 41: only RB was there): a radix `tlbie` has RB and RS.
#[cfg(feature = "emu")]
#[test]
fn trace_json_has_every_invalidation_operand() {
    let events = crate::support::trace_events(&[
        "examples/radix_tlb.inv",
        "--seq",
        "flush_tlb_page",
        "--arg",
        "pid=1",
        "--arg",
        "va=0x10000",
        "--arg",
        "features=0",
    ]);
    let inv = events.iter().find(|e| e["kind"] == "invalidate").unwrap();
    // RB: the 64K page at 0x10000 with AP 5; RS: PID 1 in the upper word.
    assert_eq!(
        inv["operands"],
        serde_json::json!(["0x100a0", "0x100000000"])
    );
}

/// A `--feature-suffix` clash names the sequence that was renamed (issue
/// 42: it said "sequence `s_a` and sequence `s_a`").
#[test]
fn feature_suffix_clash_names_the_renamed_sequence() {
    let dir = tempfile::tempdir().unwrap();
    let spec = tmp_spec(
        dir.path(),
        "fs.inv",
        "target aarch64\nfeature a\ndevice d { reg x 0x0 u64 le }\nseq s(v: u64) {\n if feature a { d.x = v }\n}\nseq s_a(v: u64) { d.x = v }\n",
    );
    let o = dir.path().join("o");
    let r = sd(&[
        "gen",
        spec.to_str().unwrap(),
        "--feature",
        "a=on",
        "--feature-suffix",
        "--out",
        o.to_str().unwrap(),
    ]);
    assert_eq!(r.code, Some(1), "{}", r.stderr);
    assert!(
        r.stderr
            .contains("sequence `s` (named `s_a` by --feature-suffix) and for sequence `s_a`"),
        "{}",
        r.stderr
    );
}

/// `diff SPEC SPEC2` compiles each spec for its own first target unless
/// `--target` is given (issue 42: SPEC2 was compiled for SPEC's), and
/// says which.
#[test]
fn diff_compiles_each_spec_for_its_own_target() {
    let dir = tempfile::tempdir().unwrap();
    let src = std::fs::read_to_string(Path::new(ROOT).join("examples/npu2_tce_kill.inv")).unwrap();
    let arm = src.replacen(
        "target power64, power64le, aarch64, x86_64",
        "target aarch64",
        1,
    );
    assert_ne!(arm, src);
    let b = tmp_spec(dir.path(), "arm.inv", &arm);
    let r = sd(&[
        "diff",
        "examples/npu2_tce_kill.inv",
        b.to_str().unwrap(),
        "--seq",
        "tce_kill",
    ]);
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    assert!(
        r.stdout.contains("on power64 (a) and aarch64 (b)"),
        "{}",
        r.stdout
    );
    let r = sd(&[
        "diff",
        "examples/npu2_tce_kill.inv",
        b.to_str().unwrap(),
        "--seq",
        "tce_kill",
        "--target",
        "aarch64",
    ]);
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    assert!(
        r.stdout.contains("sequence `tce_kill` on aarch64 ("),
        "{}",
        r.stdout
    );
}

/// Every poll's failure exit is run by some world (the polls of one
/// register never ready, the rest ready), and one the worlds cannot run
/// (a limit of 2^32 - 1 reads) is named by line and fails `verify`.
#[cfg(feature = "emu")]
#[test]
fn verify_runs_each_polls_failure_exit_or_names_it() {
    let dir = tempfile::tempdir().unwrap();
    let two = tmp_spec(
        dir.path(),
        "two.inv",
        "target aarch64\ndevice d {\n  reg a 0x0 u64 le\n  reg s 0x8 u64 le\n  reg t 0x10 u64 le\n}\nseq s(x: u64) {\n  d.a = x\n  poll d.s == 0 limit 10 else return -1\n  d.a = x + 1\n  poll d.t == 0 limit 10 else return -2\n}\n",
    );
    let r = sd(&["verify", two.to_str().unwrap()]);
    assert_eq!(r.code, Some(0), "{}", r.stdout);
    assert!(!r.stdout.contains("failure exit"), "{}", r.stdout);
    let huge = tmp_spec(
        dir.path(),
        "huge.inv",
        "target aarch64\ndevice d {\n  reg a 0x0 u64 le\n  reg s 0x8 u64 le\n}\nseq s(x: u64) {\n  d.a = x\n  poll d.s == 0 limit 4294967295 else return -1\n}\n",
    );
    let r = sd(&["verify", huge.to_str().unwrap()]);
    assert_eq!(r.code, Some(1), "{}", r.stdout);
    assert!(
        r.stdout.contains("`poll` at line 8: failure exit"),
        "{}",
        r.stdout
    );
}

/// A loop that runs too long for `diff`'s dynamic counts says what `diff`
/// can change (issue 42: it suggested `--sizes`, which `diff` lacks).
#[test]
fn diff_runaway_loop_names_diffs_own_options() {
    let dir = tempfile::tempdir().unwrap();
    let spec = tmp_spec(
        dir.path(),
        "run.inv",
        "target aarch64\ndevice d { reg a 0x0 u64 le }\nseq s(n: u64) {\n  let i = 0\n  while i < n limit 4294967295 {\n    d.a = i\n    i = i + 1\n  }\n}\n",
    );
    let r = sd(&[
        "diff",
        spec.to_str().unwrap(),
        "--seq",
        "s",
        "--arg",
        "n=0xffffffff",
    ]);
    // The arguments ask for too much: bad usage, as for `cost`.
    assert_eq!(r.code, Some(2), "{}", r.stderr);
    assert!(
        r.stderr
            .contains("`diff` fewer --instances or other --arg values"),
        "{}",
        r.stderr
    );
}

/// `trace` says which parameters it took as 0 (issue 37: a missing
/// `--arg` was silent).
#[cfg(feature = "emu")]
#[test]
fn trace_names_parameters_left_at_zero() {
    let r = sd(&[
        "trace",
        "examples/radix_tlb.inv",
        "--seq",
        "flush_tlb_page",
        "--arg",
        "pid=1",
    ]);
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    assert!(
        r.stderr
            .contains("note: `va`, `features` not given with --arg: 0"),
        "{}",
        r.stderr
    );
}

/// `verify` prints one summary line per spec (every passed check with
/// `-v`), and `--strict` fails a check that could not run: here the
/// cross assembler, hidden from PATH (issue 37).
#[test]
fn verify_summary_verbose_and_strict() {
    let r = sd(&[
        "verify",
        "examples/npu2_tce_kill.inv",
        "--target",
        "aarch64",
    ]);
    assert_eq!(r.code, Some(0), "{}", r.stdout);
    assert!(
        r.stdout.starts_with("PASS  examples/npu2_tce_kill.inv: "),
        "{}",
        r.stdout
    );
    assert!(!r.stdout.contains("ok    "), "{}", r.stdout);
    let r = sd(&[
        "verify",
        "examples/npu2_tce_kill.inv",
        "--target",
        "aarch64",
        "-v",
    ]);
    assert!(
        r.stdout
            .contains("ok    examples/npu2_tce_kill.inv: aarch64: static ordering proof"),
        "{}",
        r.stdout
    );
    // No cross toolchain on PATH: GNU as is skipped, which --strict fails.
    let dir = tempfile::tempdir().unwrap();
    let run = |strict: bool| {
        let mut c = Command::new(BIN);
        c.current_dir(ROOT).env("PATH", dir.path()).args([
            "verify",
            "examples/npu2_tce_kill.inv",
            "--target",
            "aarch64",
        ]);
        if strict {
            c.arg("--strict");
        }
        let o = c.output().unwrap();
        (
            o.status.code(),
            String::from_utf8_lossy(&o.stdout).into_owned(),
        )
    };
    let (code, out) = run(false);
    assert_eq!(code, Some(0), "{out}");
    assert!(
        out.contains("skip  ") && out.contains("is not installed"),
        "{out}"
    );
    let (code, out) = run(true);
    assert_eq!(code, Some(1), "{out}");
    assert!(out.contains("SKIP  "), "{out}");
}

/// Issue 37: `trace` decodes what it prints: register fields by name,
/// invalidation operands by field, normal memory by location, the spec
/// line and pc of each event, and a count summary.
#[test]
fn trace_decodes_fields_operands_locations_and_counts() {
    let r = sd(&[
        "trace",
        "examples/npu2_atsd.inv",
        "--target",
        "power64",
        "--seq",
        "invalidate_va",
        "--arg",
        "pid=1",
        "--arg",
        "va=0x10010000",
        "--read",
        "npu.stat=0",
    ]);
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    let launch = r
        .stdout
        .lines()
        .find(|l| l.contains("npu[0].launch"))
        .unwrap();
    assert!(
        launch.contains("{is: 0, prs: 1, ap: 5, pid: 1, no_flush: 0}"),
        "{launch}"
    );
    assert!(launch.contains("(line 35, pc 0x"), "{launch}");
    assert!(
        r.stdout.contains("counts: 1 barrier `eieio`, "),
        "{}",
        r.stdout
    );

    let r = sd(&[
        "trace",
        "examples/arm64_tlb_range.inv",
        "--seq",
        "flush_tlb_range_r",
        "--arg",
        "asid=1",
        "--arg",
        "start=0x400000",
        "--arg",
        "end=0x480000",
    ]);
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    assert!(
        r.stdout
            .contains("[va=0x400000 pages=128 (num=1 scale=1) tg=1 ttl=0 asid=0x1]"),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout.contains("1 invalidate `tlbi rvale1is`"),
        "{}",
        r.stdout
    );

    let r = sd(&[
        "trace",
        "examples/radix_tlb.inv",
        "--seq",
        "flush_tlb_page",
        "--arg",
        "pid=1",
        "--arg",
        "va=0x10000",
        "--arg",
        "features=0",
    ]);
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    assert!(
        r.stdout
            .contains("[epn=0x10000 is=0 ap=5 pid=0x1 lpid=0x0]"),
        "{}",
        r.stdout
    );

    // Command entries: normal memory by location.
    let r = sd(&[
        "trace",
        "examples/smmuv3_cmdq.inv",
        "--seq",
        "tlb_inv_asid",
        "--arg",
        "asid=1",
        "--arg",
        "cmdq_log2n=8",
    ]);
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    assert!(
        r.stdout.contains("store      cmdq_ring[0x10] = 0xfc02046"),
        "{}",
        r.stdout
    );
    assert!(r.stdout.contains("normal memory"), "{}", r.stdout);
}

/// Issue 37: `--seq` on `stats`, `verify` and `show` as on the other verbs: only
/// that sequence, and a usage error naming the sequences for a wrong one.
#[test]
fn stats_verify_and_show_take_one_sequence() {
    let atsd = "examples/npu2_atsd.inv";
    let r = sd(&["stats", atsd, "--seq", "invalidate_pid"]);
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    assert_eq!(r.stdout.lines().count(), 1, "{}", r.stdout);
    assert!(r.stdout.starts_with("invalidate_pid "), "{}", r.stdout);
    let all = sd(&["verify", atsd]);
    let one = sd(&["verify", atsd, "--seq", "invalidate_va"]);
    assert_eq!(one.code, Some(0), "{}", one.stdout);
    let passed = |o: &str| -> usize {
        let l = o.lines().last().unwrap();
        l.split(": ")
            .nth(1)
            .unwrap()
            .split(' ')
            .next()
            .unwrap()
            .parse()
            .unwrap()
    };
    assert!(
        passed(&one.stdout) < passed(&all.stdout),
        "{}\n{}",
        one.stdout,
        all.stdout
    );
    let r = sd(&["show", atsd, "--seq", "invalidate_pid"]);
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    assert_eq!(r.stdout.matches(".globl").count(), 1, "{}", r.stdout);
    assert!(r.stdout.contains(".globl invalidate_pid"), "{}", r.stdout);
    for verb in ["stats", "verify", "show"] {
        let r = sd(&[verb, atsd, "--seq", "nope"]);
        assert_eq!(r.code, Some(2), "{verb}: {}", r.stderr);
        assert!(
            r.stderr.contains("it has: invalidate_va, invalidate_pid"),
            "{}",
            r.stderr
        );
    }
}

/// `gen --seq`: one sequence's function and prototype, the same bytes as
/// in the whole file; an unknown name is bad usage that writes nothing.
#[test]
fn gen_seq_writes_one_sequence() {
    let dir = tempfile::tempdir().unwrap();
    let (one, all) = (dir.path().join("one"), dir.path().join("all"));
    let spec = "examples/radix_tlb.inv";
    let r = sd(&[
        "gen",
        spec,
        "--seq",
        "flush_tlb_pid",
        "--out",
        one.to_str().unwrap(),
    ]);
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    let r = sd(&["gen", spec, "--out", all.to_str().unwrap()]);
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    let read = |d: &Path, f: &str| std::fs::read_to_string(d.join(f)).unwrap();
    let s = read(&one, "radix_tlb.power64le.S");
    let globals: Vec<&str> = s.lines().filter(|l| l.contains(".globl")).collect();
    assert_eq!(globals, ["\t.globl flush_tlb_pid"], "{s}");
    // The function's text is the one the whole file has.
    let body = |t: &str| {
        let from = t.find("flush_tlb_pid:").unwrap();
        let to = from + t[from..].find(".size flush_tlb_pid").unwrap();
        t[from..to].to_string()
    };
    assert_eq!(body(&s), body(&read(&all, "radix_tlb.power64le.S")));
    let h = read(&one, "radix_tlb.h");
    let protos: Vec<&str> = h.lines().filter(|l| l.starts_with("long ")).collect();
    assert_eq!(protos.len(), 1, "{h}");
    assert!(protos[0].starts_with("long flush_tlb_pid("), "{h}");

    let none = dir.path().join("none");
    let r = sd(&[
        "gen",
        spec,
        "--seq",
        "nope",
        "--out",
        none.to_str().unwrap(),
    ]);
    assert_eq!(r.code, Some(2), "{}", r.stderr);
    assert!(
        r.stderr.contains("flush_tlb_pid"),
        "lists the sequences: {}",
        r.stderr
    );
    assert!(!none.exists());
}

/// `trace` names what a queue's ring store writes: the record its fixed
/// fields match and the fields of the word stored (the SMMUv3 opcodes and
/// CMD_SYNC fields as arm-smmu-v3.h defines them: CMDQ_OP_TLBI_NH_VA
/// 0x12, CMDQ_OP_CMD_SYNC 0x46 with CS=SEV (2), MSH=ISH (3),
/// MSIATTR=OIWB (0xf)).
#[cfg(feature = "emu")]
#[test]
fn trace_names_queue_records_and_their_fields() {
    let r = sd(&[
        "trace",
        "examples/smmuv3_cmdq.inv",
        "--seq",
        "tlb_inv_range",
        "--target",
        "aarch64",
        "--arg",
        "asid=7",
        "--arg",
        "iova=0x5000",
        "--arg",
        "size=0x2000",
        "--arg",
        "granule=0x1000",
        "--arg",
        "cmdq_log2n=8",
    ]);
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    let ring: Vec<&str> = r
        .stdout
        .lines()
        .filter(|l| l.contains("cmdq_ring["))
        .collect();
    assert_eq!(
        ring.len(),
        6,
        "two commands and the sync, two words each:\n{}",
        r.stdout
    );
    for (i, l) in ring.iter().enumerate() {
        let want = match i {
            0 | 2 => "[tlbi_nh_va word 0]",
            1 | 3 => "[tlbi_nh_va word 1]",
            4 => "[cmd_sync word 0]",
            _ => "[cmd_sync word 1]",
        };
        assert!(l.contains(want), "store {i}: {l}");
    }
    assert!(
        ring[0].contains("op: 0x12") && ring[0].contains("asid: 7"),
        "{}",
        ring[0]
    );
    assert!(
        ring[1].contains("addr: 5"),
        "the page of iova 0x5000: {}",
        ring[1]
    );
    assert!(ring[3].contains("addr: 6"), "{}", ring[3]);
    assert!(
        ring[4].contains("op: 0x46") && ring[4].contains("cs: 2") && ring[4].contains("msh: 3"),
        "{}",
        ring[4]
    );
}
