//! What the bare-metal QEMU oracles (tests/smmuv3_qemu.rs,
//! tests/vtd_qemu.rs) share: running an image script, reading what its
//! QEMU runs wrote, the console's verdict, the parts of QEMU's log that do
//! not depend on the device (timestamps, exec lines, case markers),
//! generating the subject and checking a negative control.

#![allow(dead_code)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

/// Run `scripts/SCRIPT DIR [SUBJECT]` with `SD_BROKEN=broken` in a fresh
/// DIR under the test's scratch space; the wall time in seconds.
pub fn run_script(script: &str, tag: &str, subject: Option<&Path>, broken: u32) -> (PathBuf, f64) {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(tag);
    let _ = std::fs::remove_dir_all(&dir);
    let mut cmd = Command::new("sh");
    cmd.arg(format!("{}/scripts/{script}", env!("CARGO_MANIFEST_DIR")))
        .arg(&dir);
    if let Some(s) = subject {
        cmd.arg(s);
    }
    cmd.env("SD_BROKEN", broken.to_string());
    let t = Instant::now();
    let out = cmd
        .output()
        .unwrap_or_else(|e| panic!("cannot run scripts/{script}: {e}"));
    let secs = t.elapsed().as_secs_f64();
    assert!(
        out.status.success(),
        "scripts/{script} failed ({}; a missing tool? run scripts/install-deps.sh):\n{}{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (dir, secs)
}

/// pc -> (mnemonic, operands) of the subject's code, from GNU objdump.
pub type Disassembly = BTreeMap<u64, (String, String)>;

/// What one build of an oracle's image and its two QEMU runs left, each
/// QEMU file by run mode ("main": the cases; "timeout": the injected
/// queue error).
pub struct Run {
    pub dir: PathBuf,
    /// The run's exit status as the script wrote it (trimmed).
    pub status: BTreeMap<String, String>,
    pub console: BTreeMap<String, String>,
    pub stderr: BTreeMap<String, String>,
    pub log: BTreeMap<String, String>,
    pub dis: Disassembly,
    pub secs: f64,
}

/// Run `scripts/SCRIPT` (see [`run_script`]) into the scratch directory
/// `tag` and read what it wrote; `disassembly` parses the subject's
/// objdump listing (`subject.dis`), which must not be empty.
pub fn run_oracle(
    script: &str,
    tag: &str,
    subject: Option<&Path>,
    broken: u32,
    disassembly: fn(&str) -> Disassembly,
) -> Run {
    let (dir, secs) = run_script(script, tag, subject, broken);
    let read = |f: &str| read(&dir, f);
    let mut run = Run {
        dir: dir.clone(),
        status: BTreeMap::new(),
        console: BTreeMap::new(),
        stderr: BTreeMap::new(),
        log: BTreeMap::new(),
        dis: disassembly(&read("subject.dis")),
        secs,
    };
    for mode in ["main", "timeout"] {
        run.status
            .insert(mode.into(), read(&format!("status-{mode}")).trim().into());
        run.console
            .insert(mode.into(), read(&format!("console-{mode}.txt")));
        run.stderr
            .insert(mode.into(), read(&format!("stderr-{mode}.txt")));
        run.log
            .insert(mode.into(), read(&format!("qemu-{mode}.log")));
    }
    assert!(!run.dis.is_empty(), "no subject code in {}", dir.display());
    run
}

/// What the console of QEMU run `mode` shows went wrong, each failure
/// prefixed `MODE: `: a nonzero exit status, the harness's FAIL and
/// EXCEPTION lines, no closing `done` line.
pub fn console_failures(run: &Run, mode: &str, done: &str) -> Vec<String> {
    let con = &run.console[mode];
    let mut failures = Vec::new();
    if run.status[mode] != "0" {
        failures.push(format!("{mode}: run exited {}", run.status[mode]));
    }
    for l in con
        .lines()
        .filter(|l| l.contains("FAIL") || l.contains("EXCEPTION"))
    {
        failures.push(format!("{mode}: console: {l}"));
    }
    if !con.lines().any(|l| l == done) {
        failures.push(format!("{mode}: did not finish cleanly"));
    }
    failures
}

/// Unless the timeout run's console has the line `timeout CALL ... ret=-110`
/// (the subject's `function` gave up on the stopped queue), the failure.
pub fn missed_timeout(run: &Run, call: &str, function: &str) -> Option<String> {
    let con = &run.console["timeout"];
    let prefix = format!("timeout {call} ");
    let timed_out = con
        .lines()
        .any(|l| l.starts_with(&prefix) && l.ends_with(" ret=-110"));
    (!timed_out).then(|| format!("timeout: {function} did not return -110:\n{con}"))
}

/// `shootdown gen examples/SPEC.inv --target TARGET --prefix sd_` into a
/// fresh scratch directory `out`; the generated `.S`.
pub fn generate(spec: &str, target: &str, out: &str) -> PathBuf {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("examples/{spec}.inv"));
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(out);
    let _ = std::fs::remove_dir_all(&dir);
    let out = Command::new(env!("CARGO_BIN_EXE_shootdown"))
        .arg("gen")
        .arg(&path)
        .args(["--target", target, "--prefix", "sd_", "--out"])
        .arg(&dir)
        .output()
        .expect("run shootdown gen");
    assert!(
        out.status.success(),
        "shootdown gen {}: {}",
        path.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    dir.join(format!("{spec}.{target}.S"))
}

/// A negative control: the stand-in broken with `SD_BROKEN=broken` must
/// fail the oracle, and for the reason the breakage is about (a failure
/// containing `want`).
pub fn assert_control_fails(broken: u32, tag: &str, want: &str, failures: &[String]) {
    assert!(
        !failures.is_empty(),
        "SD_BROKEN={broken} ({tag}) passed the oracle"
    );
    assert!(
        failures.iter().any(|f| f.contains(want)),
        "SD_BROKEN={broken} ({tag}) failed, but not with `{want}`: {failures:#?}"
    );
}

/// A file the script wrote.
pub fn read(dir: &Path, f: &str) -> String {
    std::fs::read_to_string(dir.join(f))
        .unwrap_or_else(|e| panic!("{}: {e}", dir.join(f).display()))
}

pub fn hex(s: &str) -> u64 {
    let s = s.trim();
    u64::from_str_radix(s.strip_prefix("0x").unwrap_or(s), 16)
        .unwrap_or_else(|_| panic!("not hex: `{s}`"))
}

/// The value after `key` in a trace line, up to a space or comma.
pub fn field<'a>(l: &'a str, key: &str) -> &'a str {
    let i = l.find(key).unwrap_or_else(|| panic!("no `{key}` in `{l}`"));
    l[i + key.len()..]
        .split([' ', ','])
        .next()
        .unwrap_or_default()
}

/// A log line without its "pid@secs:" prefix (-msg timestamp=on).
pub fn untimed(raw: &str) -> &str {
    match raw.split_once(':') {
        Some((p, rest))
            if p.contains('@')
                && p.chars()
                    .all(|c| c.is_ascii_digit() || c == '@' || c == '.') =>
        {
            rest
        }
        _ => raw,
    }
}

/// The pc of an exec line (accel/tcg/cpu-exec.c log_cpu_exec): "Trace 0:
/// 0x7f.. [cs_base/pc/flags/cflags] symbol".
pub fn exec_pc(l: &str) -> Option<u64> {
    let rest = l.strip_prefix("Trace ")?;
    let inner = rest
        .split_once('[')
        .and_then(|(_, r)| r.split_once(']'))
        .map(|(f, _)| f)
        .unwrap_or_else(|| panic!("exec line `{l}`"));
    Some(hex(inner.split('/').nth(1).unwrap()))
}

/// Events between marker(id, 1) and marker(id, 2), by case id; `marker`
/// says which events are markers.
pub fn segments<E: Clone>(
    evs: &[E],
    marker: impl Fn(&E) -> Option<(u32, u32)>,
) -> BTreeMap<u32, Vec<E>> {
    let mut segs = BTreeMap::new();
    let mut cur: Option<(u32, Vec<E>)> = None;
    for e in evs {
        match marker(e) {
            Some((id, 1)) => {
                assert!(cur.is_none(), "marker {id} opens inside a case");
                cur = Some((id, Vec::new()));
            }
            Some((id, 2)) => {
                let (open, v) = cur.take().expect("case end without begin");
                assert_eq!(open, id, "case markers interleave");
                segs.insert(id, v);
            }
            Some((id, p)) => panic!("marker {id} phase {p}"),
            None => {
                if let Some((_, v)) = cur.as_mut() {
                    v.push(e.clone());
                }
            }
        }
    }
    assert!(cur.is_none(), "a case never ended");
    segs
}
