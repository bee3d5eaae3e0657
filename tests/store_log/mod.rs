//! The store-logging oracle (tests/harness/store_log.c) end to end: build
//! it with a compiled spec, run a batch of cases in one process under
//! qemu-user (natively on x86-64), and pair each case's observed accesses
//! with what `trace` reports for it.

pub mod cases;
pub mod claims;
pub mod driver;
pub mod log;

use crate::support;
use log::Run;
use shootdown::codegen::{Compiled, Options};
use shootdown::ir::Program;
use shootdown::verify::interp::World;
use shootdown::verify::trace;
use std::process::Stdio;

const STORE_LOG_C: &str = include_str!("../harness/store_log.c");

/// One run of one sequence.
pub struct Case {
    pub seq: usize,
    pub name: String,
    pub world: World,
}

pub struct Outcome {
    pub name: String,
    pub expected: Run,
    /// Barriers `trace` reported (not compared).
    pub barriers: usize,
    pub observed: Result<Run, String>,
    /// The harness's lines for this case (for perturbation checks).
    pub raw: Vec<String>,
}

/// Builds the harness for `c` and runs every case in it; pairs each with
/// what `trace` reports for the same code.
pub fn run_cases(
    prog: &Program,
    stem: &str,
    c: &Compiled,
    opts: &Options,
    cases: &[Case],
    tag: &str,
) -> Vec<Outcome> {
    let observed = observe(prog, stem, c, opts, cases, tag);
    cases
        .iter()
        .zip(observed)
        .map(|(k, (observed, raw))| {
            let (expected, barriers) = expect(prog, c, k);
            Outcome {
                name: k.name.clone(),
                expected,
                barriers,
                observed,
                raw,
            }
        })
        .collect()
}

/// `trace`'s side of a case: its accesses and the barriers left out.
pub fn expect(prog: &Program, c: &Compiled, k: &Case) -> (Run, usize) {
    let t = trace::run(prog, c, k.seq, &k.world, 100_000_000)
        .unwrap_or_else(|e| panic!("{}: trace failed: {e}", k.name));
    log::from_trace(prog, &t)
}

/// qemu's side: builds store_log.c with `c` and runs every case in one
/// process. Per case, the parsed log (or why there is none) and its lines.
pub fn observe(
    prog: &Program,
    stem: &str,
    c: &Compiled,
    opts: &Options,
    cases: &[Case],
    tag: &str,
) -> Vec<(Result<Run, String>, Vec<String>)> {
    let header_name = format!("{stem}.h");
    let harness_c = format!("{STORE_LOG_C}\n{}", driver::driver_c(c, &header_name));
    let exe = support::build_harness(
        c.target,
        &support::asm_text(c, opts),
        &shootdown::emit::header::render(prog, stem, opts),
        &header_name,
        &harness_c,
        tag,
    );
    let input: String = cases
        .iter()
        .map(|k| driver::directives(prog, c, k.seq, &k.world))
        .collect();
    let stdin_path = exe.with_file_name("cases.in");
    std::fs::write(&stdin_path, &input).unwrap();
    let out = support::harness_command(c.target, &exe, &[])
        .stdin(Stdio::from(std::fs::File::open(&stdin_path).unwrap()))
        .output()
        .unwrap_or_else(|e| {
            panic!("cannot run {exe:?} (install qemu-user: ./scripts/install-deps.sh): {e}")
        });
    let stdout = String::from_utf8_lossy(&out.stdout);
    let (done, partial) = log::split_cases(&stdout);
    let crash = format!(
        "harness exited with {}: {}\nstderr: {}",
        out.status,
        partial.join("\n"),
        String::from_utf8_lossy(&out.stderr)
    );
    cases
        .iter()
        .enumerate()
        .map(|(i, k)| match done.get(i) {
            Some(lines) => (
                log::from_harness(prog, c, k.seq, lines),
                lines.iter().map(|s| s.to_string()).collect(),
            ),
            None if i == done.len() && !out.status.success() => (Err(crash.clone()), Vec::new()),
            None if i == done.len() => (Err("harness printed no result".into()), Vec::new()),
            None => (
                Err("not run: the harness stopped at an earlier case".into()),
                Vec::new(),
            ),
        })
        .collect()
}
