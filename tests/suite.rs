//! Every integration test but the kernel builds (tests/kernel.rs) and the
//! timing ratios (tests/scaling.rs), in one binary: one link of the crate
//! with unicorn and capstone instead of forty, and the test threads fill
//! both cores across files instead of waiting for each file's slowest
//! test. Each file below is one module (`cargo test --test suite MODULE::`
//! runs one); the helpers they share are compiled once, here.

// Shared helpers.
#[path = "support/encodings.rs"]
mod encodings_table;
#[path = "support/fuzz_pipeline.rs"]
mod fuzz_pipeline;
#[path = "support/qemu_system.rs"]
mod qemu_system;
mod refcmp;
mod store_log;
mod support;

// The tests, one module per file.
mod aarch64_codegen;
mod assume;
mod bad_input;
mod bit_polls;
mod builtins;
mod c_names;
mod capstone;
mod cli;
mod cli_props;
mod cost_diff;
mod diff_semantic;
mod e6500_kernel_counts;
mod e6500_qemu;
mod emu;
mod encodings;
mod explain;
mod explore;
mod features;
mod files;
mod fuzz_regressions;
mod gnu_as;
mod golden;
mod header;
mod lang;
mod locals;
mod locks;
mod meaning;
mod meaning_holes;
mod memory_model;
mod module_graph;
mod mutation;
mod order_proof;
mod order_scope;
mod ordering_props;
mod placement_exhaustive;
mod power_codegen;
mod power_qemu;
mod queues_x86;
mod random_specs;
mod ranges;
mod reference;
mod register_pressure;
mod smmuv3_batches;
mod smmuv3_qemu;
mod stack_args;
mod strategies;
mod trace_vs_qemu;
mod unrolled_ranges;
mod valid_specs;
mod verify;
mod vtd_qemu;
mod vtd_x86;
mod x86_64_codegen;
