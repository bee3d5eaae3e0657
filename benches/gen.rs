//! Criterion benchmarks of the generator in-process (the whole-process
//! comparisons against GNU as and PeakRDL-cheader are scripts/bench.sh).
//!
//!     cargo bench --no-default-features --bench gen

use criterion::{black_box, criterion_group, criterion_main, BenchmarkId, Criterion};
use shootdown::{output, Options, Target};
use std::path::Path;

#[path = "../tests/support/synth.rs"]
mod synth;

fn examples() -> Vec<(String, String)> {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/examples");
    let mut v: Vec<(String, String)> = std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "inv"))
        .map(|p| {
            let src = std::fs::read_to_string(&p).unwrap();
            (
                format!("examples/{}", p.file_name().unwrap().to_string_lossy()),
                src,
            )
        })
        .collect();
    v.sort();
    v
}

/// The spec half of scripts/bench.py's 200-register map.
fn regs200() -> String {
    let mut s = String::from("target power64le\ndevice blk {\n");
    for i in 0..200 {
        s += &format!(
            "    reg r{i} {:#x} u64 le\n    field r{i}.en lsb0 0\n    field r{i}.mode lsb0 4..7\n    field r{i}.addr lsb0 12..51\n",
            i * 8
        );
    }
    s + "}\n"
}

/// scripts/synth-spec.py: N AVA/LAUNCH writes, 100 per sequence.
fn synth(n: usize) -> String {
    let mut s = String::from(
        "target power64le\ndevice npu {\n instances dynamic max 6\n reg launch 0x00 u64 be\n reg ava 0x08 u64 be\n reg stat 0x10 u64 be\n field launch.prs msb0 13\n field launch.ap msb0 15..17\n field launch.pid msb0 24..38\n require ava before launch\n}\n",
    );
    let (mut done, mut seq) = (0, 0);
    while done < n {
        let k = (n - done).min(100);
        s += &format!("seq s{seq}(pid: u64, va: u64) {{\n");
        for i in (0..k).step_by(2) {
            s += &format!("  each npu {{\n    npu.ava = va + {}\n", i * 4096);
            if i + 1 < k {
                s += "    npu.launch = { prs: 1, ap: 5, pid: pid }\n";
            }
            s += "  }\n";
        }
        s += "  each npu { poll npu.stat == 0 limit 100000 else return -110 }\n}\n";
        done += k;
        seq += 1;
    }
    s
}

fn bench(c: &mut Criterion) {
    let opts = Options::default();
    let out = Path::new("unused");
    let ex = examples();
    c.bench_function("gen all examples x 4 targets", |b| {
        b.iter(|| {
            for (name, src) in &ex {
                black_box(output::plan(name, src, &Target::ALL, out, &opts).unwrap());
            }
        })
    });
    let regs = regs200();
    c.bench_function("header 200 registers", |b| {
        b.iter(|| {
            let p = shootdown::load("regs200.inv", &regs).unwrap();
            black_box(shootdown::emit::header::render(&p, "regs200", &opts))
        })
    });
    let mut g = c.benchmark_group("scaling");
    g.sample_size(10);
    for n in [1_000, 10_000] {
        let src = synth(n);
        g.bench_with_input(BenchmarkId::from_parameter(n), &src, |b, src| {
            b.iter(|| {
                black_box(output::plan(
                    "synth.inv",
                    src,
                    &[Target::Power64le],
                    out,
                    &opts,
                ))
            })
        });
    }
    g.finish();
    // Issue 16: an 8 MiB spec (the input limit) of every shape checks in
    // about a second; `cargo bench --bench gen -- shape`.
    let mut g = c.benchmark_group("shape");
    g.sample_size(10);
    for shape in synth::SHAPES {
        for (label, bytes) in [("1MiB", 1usize << 20), ("8MiB", 8 << 20)] {
            let src = synth::shape(shape, bytes);
            g.bench_with_input(
                BenchmarkId::new(format!("check/{shape}"), label),
                &src,
                |b, src| b.iter(|| black_box(shootdown::load("s.inv", src).unwrap())),
            );
        }
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
