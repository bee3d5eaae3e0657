//! Issue 12's reproducers (sections 2 to 5), each a regression test checked
//! by what the generated code does: run under qemu-user (natively on
//! x86-64) in tests/harness/store_log.c, which logs every device access,
//! and compared with `trace` (the unicorn emulator); values are the ones
//! the hardware documentation gives, written out here by hand. Where
//! nothing runs differently (a barrier, a reload), the generated code is
//! inspected. The spans of the rejected variants are snapshot-tested in
//! tests/bad/ (bits_*, cover_*, constant_*, lock_owner_zero,
//! void_runtime_owner, private_integer).
#![cfg(feature = "emu")]

#[allow(dead_code)]
use crate::store_log;
use crate::support;

use shootdown::codegen::Options;
use shootdown::ir::{MemOp, Program, Stmt};
use shootdown::passes::cover::CoverConfig;
use shootdown::spec::ast::CoverMode;
use shootdown::verify::interp::{self, World};
use shootdown::verify::{order_check, trace, Report};
use shootdown::Target;
use store_log::log::{first_divergence, Run};
use store_log::{run_cases, Case};

mod layouts;
mod loads_and_locks;
mod returns_and_worlds;
mod wrapping;

use wrapping::kernel_file;

fn load(stem: &str, src: &str) -> Program {
    shootdown::load(&format!("{stem}.inv"), src)
        .unwrap_or_else(|d| panic!("{stem}: {}", shootdown::spec::diag::render(stem, src, &d)))
}

/// A world from parameter names, instance count and initial memory.
fn world(
    prog: &Program,
    seq: &str,
    params: &[(&str, u64)],
    instances: u64,
    memory: &[(&str, &[u8])],
    target: Target,
) -> (usize, World) {
    let i = prog.seqs.iter().position(|s| s.name == seq).unwrap();
    let s = &prog.seqs[i];
    let mut w = World {
        params: vec![0; s.params.len()],
        big_endian: target.big_endian(),
        ..World::default()
    };
    for &d in &s.devices {
        w.counts.insert(d, instances);
    }
    for (name, v) in params {
        let p = s.params.iter().position(|p| p == name).unwrap();
        w.params[p] = *v;
    }
    for (name, bytes) in memory {
        let p = s.params.iter().position(|p| p == name).unwrap();
        w.memory.insert(p, bytes.to_vec());
    }
    (i, w)
}

/// Runs every case under qemu-user in store_log.c, checks that qemu and
/// `trace` agree on each, and returns what qemu saw.
fn qemu(
    prog: &Program,
    stem: &str,
    target: Target,
    opts: &Options,
    cases: Vec<(usize, World)>,
) -> Vec<Run> {
    let c = shootdown::compile(prog, target, opts).unwrap();
    let cases: Vec<Case> = cases
        .into_iter()
        .enumerate()
        .map(|(k, (seq, world))| Case {
            seq,
            name: format!("{stem} {target} case {k}"),
            world,
        })
        .collect();
    let tag = format!("holes-{stem}-{target}");
    run_cases(prog, stem, &c, opts, &cases, &tag)
        .into_iter()
        .map(|o| {
            let observed = o.observed.unwrap_or_else(|e| panic!("{}: {e}", o.name));
            if let Some(d) = first_divergence(&o.expected, &observed) {
                panic!("{}: qemu and trace differ: {d}", o.name);
            }
            observed
        })
        .collect()
}

/// (kind, place, value) of each access.
fn accesses(r: &Run) -> Vec<(String, String, String)> {
    r.accesses
        .iter()
        .map(|a| (a.kind.to_string(), a.place.clone(), a.value.clone()))
        .collect()
}

fn store(place: &str, value: u64) -> (String, String, String) {
    ("store".into(), place.into(), format!("{value:#x}"))
}

// ------------------------------------------------------------- section 2
