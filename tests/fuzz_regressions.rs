//! Inputs that once crashed or hung the pipeline (found by the fuzzer,
//! the property tests or by hand; see docs/fuzzing.md), replayed through
//! exactly what `fuzz/fuzz_targets/pipeline.rs` does. Each must finish
//! quickly without a panic; errors must be renderable diagnostics.

use crate::fuzz_pipeline::pipeline;
use std::time::{Duration, Instant};

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
