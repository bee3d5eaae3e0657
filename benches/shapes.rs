//! Time and peak memory of checking and generating an 8 MiB spec of each
//! shape (issue 16, docs/performance.md), each shape in a fresh process
//! so its peak is its own:
//!
//!     cargo bench --no-default-features --bench shapes
//!
//! Peak memory is the process's high-water mark (VmHWM) less what it was
//! with the spec text generated, before parsing.

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[path = "../tests/support/synth.rs"]
mod synth;

use std::time::Instant;

fn hwm_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1)?.parse().ok())
        })
        .unwrap_or(0)
}

fn one(shape: &str, bytes: usize, what: &str) {
    let src = synth::shape(shape, bytes);
    let base = hwm_kib();
    let t = Instant::now();
    if what == "check" {
        let p = shootdown::load("s.inv", &src).expect("valid");
        let dt = t.elapsed();
        println!(
            "{shape:<10} {:>5.2} MiB  check {:>8.1} ms  peak +{:>5} MiB  ({} devices, {} sequences)",
            src.len() as f64 / (1 << 20) as f64,
            dt.as_secs_f64() * 1e3,
            (hwm_kib() - base) / 1024,
            p.devices.len(),
            p.seqs.len()
        );
    } else {
        let out = shootdown::output::plan(
            "s.inv",
            &src,
            &[shootdown::Target::Aarch64],
            std::path::Path::new("o"),
            &shootdown::Options::default(),
        )
        .expect("valid");
        let dt = t.elapsed();
        let written: usize = out.iter().map(|p| p.content.len()).sum();
        println!(
            "{shape:<10} {:>5.2} MiB  gen   {:>8.1} ms  peak +{:>5} MiB  ({:.1} MiB of .S and .h)",
            src.len() as f64 / (1 << 20) as f64,
            dt.as_secs_f64() * 1e3,
            (hwm_kib() - base) / 1024,
            written as f64 / (1 << 20) as f64
        );
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if let (Some(shape), Some(bytes), Some(what)) = (args.get(2), args.get(3), args.get(4)) {
        if args[1] == "--child" {
            one(shape, bytes.parse().unwrap(), what);
            return;
        }
    }
    let me = std::env::current_exe().unwrap();
    for what in ["check", "gen"] {
        for shape in synth::SHAPES {
            for bytes in [1usize << 20, 8 << 20] {
                let st = std::process::Command::new(&me)
                    .args(["--child", shape, &bytes.to_string(), what])
                    .status()
                    .unwrap();
                assert!(st.success(), "{shape} {bytes} {what}");
            }
        }
    }
}
