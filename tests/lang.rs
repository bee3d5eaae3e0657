//! The language's conditions and expressions against an oracle we did not
//! write: for each input, the register writes of our machine code (run in
//! the emulator) equal what a C mirror of the spec, compiled by the host
//! gcc, prints. Arms, precedence, comparisons as values, min/max, run-time
//! shifts of every size.
#![cfg(feature = "emu")]

#[path = "support/mod.rs"]
mod support;

use shootdown::target::Target;
use shootdown::verify::interp::World;
use shootdown::verify::trace::{self, Kind};
use std::process::Command;

fn inputs() -> Vec<[u64; 3]> {
    let edges = [
        0u64,
        1,
        2,
        3,
        4,
        7,
        15,
        16,
        17,
        31,
        32,
        33,
        63,
        64,
        65,
        1 << 63,
        u64::MAX,
    ];
    let mut out = Vec::new();
    for &n in &edges {
        for &lim in &[0u64, 1, 3, 4, 9, 32, 63, 64, 100, u64::MAX] {
            for &flag in &[0u64, 1, 5] {
                out.push([n, lim, flag]);
            }
        }
    }
    // Deterministic pseudo-random values too (xorshift).
    let mut x = 0x2545_f491_4f6c_dd1du64;
    for _ in 0..60 {
        let mut v = [0u64; 3];
        for s in &mut v {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            *s = if x & 1 == 0 { x >> (x % 64) } else { x % 80 };
        }
        out.push(v);
    }
    out
}

fn oracle(inputs: &[[u64; 3]]) -> Vec<String> {
    let dir = support::scratch("lang-choose");
    let exe = dir.join("choose");
    let st = Command::new("gcc")
        .args(["-O2", "-Wall", "-Wextra", "-Werror", "-o"])
        .arg(&exe)
        .arg("tests/lang/choose.c")
        .status()
        .expect("gcc");
    assert!(st.success());
    let args: Vec<String> = inputs.iter().flatten().map(|v| format!("{v:#x}")).collect();
    let out = Command::new(&exe).args(&args).output().unwrap();
    assert!(out.status.success());
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect()
}

#[test]
fn conditions_and_expressions_match_c() {
    let ins = inputs();
    let want = oracle(&ins);
    assert_eq!(want.len(), ins.len());
    for target in [
        Target::Aarch64,
        Target::Power64,
        Target::Power64le,
        Target::X86_64,
    ] {
        for passes in ["all", "none"] {
            let (c, _) = support::compile_spec("tests/lang/choose.inv", target, passes);
            let prog = c.opt.clone();
            for (i, v) in ins.iter().enumerate() {
                let w = World {
                    params: v.to_vec(),
                    ..Default::default()
                };
                let t = trace::run(&prog, &c, 0, &w, 100_000).unwrap();
                let mut line = format!("{:x} {:x} {:x}:", v[0], v[1], v[2]);
                for e in t.events.iter().filter(|e| e.kind == Kind::Store) {
                    line.push_str(&format!(
                        " {}={:x}",
                        e.reg.as_deref().unwrap_or("?"),
                        e.raw.unwrap_or(0)
                    ));
                }
                assert_eq!(line, want[i], "{target} --passes {passes}");
            }
        }
    }
}

/// Every arm of the chain is taken by some input: the comparison above
/// is not vacuous.
#[test]
fn inputs_reach_every_arm() {
    let want = oracle(&inputs());
    for shape in [" b=1 ", " a=", " b=2 "] {
        assert!(want.iter().any(|l| l.contains(shape)), "{shape}");
    }
    assert!(
        want.iter().any(|l| l.contains(" b=d ")),
        "the even arm with all three terms"
    );
}
