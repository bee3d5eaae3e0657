//! `verify`: unreachable arms, `while ... limit` exits, polls' failure
//! exits, the summary's verbose and strict forms.

use super::*;

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
