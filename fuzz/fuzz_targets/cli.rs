//! The command line in-process (`shootdown::cli::main_with`): a spec text
//! and an argument vector from the input, run in a scratch directory that
//! also holds the awkward files of issue 16 (a symbolic link at an output
//! path, a dangling one, a directory where a header goes, a plain file
//! where `--out` points). Any exit code other than 0, 1 and 2, a panic, a
//! hang or running out of memory is a finding. See docs/fuzzing.md.
//!
//! Input: SPEC `\0` ARG `\x01` ARG `\x01` ... (lossy UTF-8). Arguments
//! that could leave the scratch directory (absolute, `..`, `~`) end the
//! run: we are after the tool, not the file system.
#![no_main]

use libfuzzer_sys::fuzz_target;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;

static RUNS: AtomicU64 = AtomicU64::new(0);

/// The scratch directory (the working directory of every run).
fn scratch() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let d = std::env::temp_dir().join(format!("shootdown-fuzz-cli-{}", std::process::id()));
        reset(&d);
        std::env::set_current_dir(&d).expect("cd scratch");
        d
    })
}

fn reset(d: &Path) {
    let _ = std::fs::remove_dir_all(d);
    std::fs::create_dir_all(d.join("out/s.h")).unwrap();
    std::fs::create_dir_all(d.join("real")).unwrap();
    std::fs::write(d.join("real/t.h"), "old\n").unwrap();
    std::fs::create_dir_all(d.join("o")).unwrap();
    std::os::unix::fs::symlink("../real/t.h", d.join("o/s.h")).unwrap();
    std::os::unix::fs::symlink("nowhere", d.join("o/s.aarch64.S")).unwrap();
    std::fs::write(d.join("file"), "a file\n").unwrap();
}

fuzz_target!(|data: &[u8]| {
    let dir = scratch();
    // Outputs pile up under random names: start afresh now and then.
    if RUNS.fetch_add(1, Ordering::Relaxed) % 5000 == 4999 {
        reset(dir);
    }
    let (spec, rest) = match data.iter().position(|&b| b == 0) {
        Some(i) => (&data[..i], &data[i + 1..]),
        None => (data, &[][..]),
    };
    let mut args: Vec<String> = vec!["shootdown".into()];
    if !rest.is_empty() {
        for a in rest.split(|&b| b == 1) {
            let a = String::from_utf8_lossy(a).into_owned();
            if a.starts_with('/') || a.starts_with('~') || a.contains("..") || a.contains('\0') {
                return;
            }
            args.push(a);
        }
    } else {
        args.extend(["gen", "s.inv", "--out", "out2"].map(String::from));
    }
    // `verify` runs cross assemblers per target (subprocesses: too slow
    // for a fuzzer); its checks are the library's, fuzzed via `stats`.
    if args.get(1).is_some_and(|v| v == "verify") {
        args[1] = "stats".into();
    }
    std::fs::write(dir.join("s.inv"), spec).unwrap();
    let mut out = Vec::new();
    let mut err = Vec::new();
    let code = shootdown::cli::main_with(
        args.iter(),
        &mut shootdown::cli::Io {
            out: &mut out,
            err: &mut err,
        },
    );
    assert!(code <= 2, "exit {code} for {args:?}");
    // Every failure says something; every diagnostic renders.
    if code != 0 {
        assert!(!err.is_empty() || !out.is_empty(), "silent exit {code} for {args:?}");
    }
});
