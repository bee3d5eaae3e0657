//! Inputs that once crashed or hung the pipeline (found by the fuzzer,
//! the property tests or by hand; see docs/fuzzing.md), replayed through
//! exactly what `fuzz/fuzz_targets/pipeline.rs` does. Each must finish
//! quickly without a panic; errors must be renderable diagnostics.

use shootdown::codegen::{Options, Style};
use shootdown::spec::diag::render;
use shootdown::{passes, Target};
use std::time::{Duration, Instant};

const TARGETS: [Target; Target::ALL.len()] = Target::ALL;

/// The fuzz target's body.
fn pipeline(data: &[u8]) {
    let src = String::from_utf8_lossy(data);
    let name = "fuzz.inv";
    let prog = match shootdown::load(name, &src) {
        Ok(p) => p,
        Err(d) => {
            let _ = render(name, &src, &d);
            return;
        }
    };
    let naive = Options {
        passes: passes::parse_list("none").unwrap(),
        ..Options::default()
    };
    let linux = Options {
        style: Style::Linux,
        prefix: "fz_".into(),
        spdx: Some("GPL-2.0-only".into()),
        ..Options::default()
    };
    for opts in [Options::default(), naive, linux] {
        let _ = shootdown::emit::header::render(&prog, "fuzz", &opts);
        for t in TARGETS {
            match shootdown::compile(&prog, t, &opts) {
                Ok(c) => {
                    let _ = shootdown::emit::asm::render(&c, &opts);
                    let _ = shootdown::emit::stats::collect(&c);
                    if opts.style == Style::Plain {
                        let _ = shootdown::emit::listing::render(&c);
                    }
                }
                Err(d) => {
                    let _ = render(name, &src, &d);
                }
            }
        }
    }
}

#[test]
fn crashers_stay_fixed() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fuzz_crashers");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    assert!(!files.is_empty());
    for f in files {
        let data = std::fs::read(&f).unwrap();
        let t = Instant::now();
        pipeline(&data);
        assert!(
            t.elapsed() < Duration::from_secs(20),
            "{}: {:?}",
            f.display(),
            t.elapsed()
        );
    }
}
