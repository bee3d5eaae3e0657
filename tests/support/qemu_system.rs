//! What the bare-metal QEMU oracles (tests/smmuv3_qemu.rs,
//! tests/vtd_qemu.rs) share: running an image script, reading what it
//! wrote, and the parts of QEMU's log that do not depend on the device
//! (timestamps, exec lines, case markers).

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
