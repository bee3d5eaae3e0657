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

mod input;
mod numbers;
mod selection;
mod trace;
mod usage;
mod verify;

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
