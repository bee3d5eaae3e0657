//! The whole pipeline on arbitrary bytes: spec text -> parse/check ->
//! every target with the optimizing and the naive pass lists, both output
//! styles -> assembly, listing (capstone), stats and header. Errors must be
//! diagnostics whose rendering works; anything else (panic, overflow,
//! hang, out-of-memory) is a finding. See docs/fuzzing.md.
#![no_main]

use libfuzzer_sys::fuzz_target;

// Shared with tests/fuzz_regressions.rs, which replays the findings.
#[path = "../../tests/support/fuzz_pipeline.rs"]
mod fuzz_pipeline;

fuzz_target!(|data: &[u8]| fuzz_pipeline::pipeline(data));
