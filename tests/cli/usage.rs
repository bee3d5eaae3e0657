//! Bad usage (exit 2, naming the option), the argument cap, help and
//! version, `--out` naming a file, and closed pipes.

use super::*;

/// The README's promise, checked: `2 bad usage`.
#[test]
fn readme_says_bad_usage_exits_2() {
    let readme = std::fs::read_to_string(Path::new(ROOT).join("README.md")).unwrap();
    assert!(
        readme.contains("2 bad usage"),
        "README changed its exit codes"
    );
}

const ATSD: &str = "examples/npu2_atsd.inv";
const TCE: &str = "examples/npu2_tce_kill.inv";

/// `show` and `stats`: a bad stage, pin or pass list.
const SHOW_AND_STATS: &[(&[&str], &str)] = &[
    (&["show", ATSD, "--stage", "nope"], "--stage"),
    (&["show", ATSD, "--set", "NOPE=1"], "NOPE"),
    (&["stats", ATSD, "--passes", ""], "--passes"),
];

/// `cost`: bad sizes (too many granules too), start, cost model,
/// arguments, pins, sequence, passes.
const COST: &[(&[&str], &str)] = &[
    (
        &["cost", TCE, "--seq", "tce_kill", "--sizes", "4Q"],
        "--sizes",
    ),
    // 2^28 pages: refused up front (it ran for 30 s into 2.3 GB).
    (
        &["cost", TCE, "--seq", "tce_kill", "--sizes", "1T"],
        "at most 262144 granules",
    ),
    (
        &["cost", ATSD, "--seq", "invalidate_range", "--sizes", "1T"],
        "at most 262144 granules",
    ),
    (
        &["cost", TCE, "--seq", "tce_kill", "--sizes", ","],
        "--sizes",
    ),
    (
        &["cost", TCE, "--seq", "tce_kill", "--start", "x"],
        "--start",
    ),
    (
        &["cost", TCE, "--seq", "tce_kill", "--cost", "invalidate"],
        "--cost",
    ),
    (
        &["cost", TCE, "--seq", "tce_kill", "--cost", "bogus=5"],
        "--cost",
    ),
    (&["cost", TCE, "--seq", "tce_kill", "--arg", "pe"], "--arg"),
    (
        &["cost", TCE, "--seq", "tce_kill", "--arg", "nope=1"],
        "--arg",
    ),
    (
        &[
            "cost", TCE, "--seq", "tce_kill", "--arg", "pe=1", "--arg", "pe=2",
        ],
        "--arg",
    ),
    (
        &["cost", TCE, "--seq", "tce_kill", "--set", "NOPE=3"],
        "NOPE",
    ),
    (&["cost", TCE, "--seq", "nope"], "nope"),
    (&["cost", TCE], "--seq"),
    (
        &["cost", TCE, "--seq", "tce_kill", "--passes", ""],
        "--passes",
    ),
];

/// `diff`: bad passes, reads and arguments.
const DIFF: &[(&[&str], &str)] = &[
    (
        &["diff", ATSD, "--seq", "invalidate_va", "--a-passes", ""],
        "--a-passes",
    ),
    (
        &["diff", ATSD, "--seq", "invalidate_va", "--read", "npu"],
        "--read",
    ),
    (
        &[
            "diff",
            ATSD,
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
            ATSD,
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
            ATSD,
            "--seq",
            "invalidate_va",
            "--arg",
            "pid=1",
            "--arg",
            "pid=1",
        ],
        "--arg",
    ),
];

/// `--instances` past a set's maximum, or not a number.
const INSTANCES: &[(&[&str], &str)] = &[
    (
        &["diff", ATSD, "--seq", "invalidate_va", "--instances", "7"],
        "--instances",
    ),
    (
        &[
            "cost",
            ATSD,
            "--seq",
            "invalidate_range",
            "--instances",
            "18446744073709551615",
        ],
        "--instances",
    ),
    (
        &["diff", ATSD, "--seq", "invalidate_va", "--instances", "x"],
        "--instances",
    ),
];

/// No command, or no spec.
const COMMAND_LINE: &[(&[&str], &str)] = &[(&["nope"], "nope"), (&["gen"], "SPECS")];

/// Every bad option value, and every option naming what the spec does not
/// have, exits 2 with a message that names the option.
#[test]
fn bad_usage_exits_2_and_names_the_option() {
    let out = tempfile::tempdir().unwrap();
    let o = out.path().to_str().unwrap();
    let gen: &[(&[&str], &str)] = &[
        (&["gen", ATSD, "--out", o, "--set", "FOO"], "--set"),
        (&["gen", ATSD, "--out", o, "--set", "NOPE=5"], "NOPE"),
        (&["gen", ATSD, "--out", o, "--set", "X=0xZZ"], "--set"),
        (&["gen", ATSD, "--out", o, "--passes", ""], "--passes"),
        (
            &["gen", ATSD, "--out", o, "--passes", "fission,,"],
            "--passes",
        ),
        (&["gen", ATSD, "--out", o, "--passes", "nope"], "--passes"),
        (&["gen", ATSD, "--out", o, "--prefix", "1 bad;"], "--prefix"),
        (&["gen", ATSD, "--out", o, "--prefix", "a-b"], "--prefix"),
        (
            &["gen", ATSD, "--out", o, "--spdx", "GPL */ evil\n#define X"],
            "--spdx",
        ),
        (&["gen", ATSD, "--out", o, "--spdx", "MIT */"], "--spdx"),
        (&["gen", ATSD, "--out", o, "--target", "riscv"], "--target"),
    ];
    let cases = [gen, SHOW_AND_STATS, COST, DIFF, INSTANCES, COMMAND_LINE];
    for (args, needle) in cases.into_iter().flatten() {
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
