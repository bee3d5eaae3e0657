//! The language's conditions and expressions against an oracle we did not
//! write: for each input, the register writes of our machine code (run in
//! the emulator) equal what a C mirror of the spec, compiled by the host
//! gcc, prints. Arms, precedence, comparisons as values, min/max, run-time
//! shifts of every size.
#![cfg(feature = "emu")]

use crate::support;

use shootdown::isa::Target;
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

/// `verify` explores both arms of every `if`: its coverage-guided worlds
/// reach all six arms of the chain, and each is checked against the spec.
#[test]
fn verify_reaches_every_arm() {
    let spec = "tests/lang/choose.inv";
    let src = std::fs::read_to_string(spec).unwrap();
    let prog = shootdown::load(spec, &src).unwrap();
    let targets = shootdown::output::default_targets(&prog);
    let r = shootdown::verify::verify(spec, &src, &targets, &support::options("all")).unwrap();
    assert!(r.ok(), "{:#?}", r.failures);
    assert!(r.skipped.is_empty(), "{:#?}", r.skipped);
    assert_eq!(
        r.passed
            .iter()
            .filter(|p| p.contains("reach all 6 branch arms"))
            .count(),
        4
    );
}

/// Computed offsets and memory polls: the entries land in the slot
/// `(prod & mask) * 16` says, before the doorbell, and the polls compare
/// with run-time values.
#[test]
fn ring_slots_and_memory_polls() {
    for target in [
        Target::Aarch64,
        Target::Power64,
        Target::Power64le,
        Target::X86_64,
    ] {
        let (c, _) = support::compile_spec("tests/lang/ring.inv", target, "all");
        let prog = c.opt.clone();
        for prod in [0u64, 3, 15, 16, 17] {
            let mut w = World {
                params: vec![0, prod, 15, 0x12, 0xabc],
                ..Default::default()
            };
            w.memory.insert(0, vec![0; 256]);
            let cons = (prod + 1) & 15;
            w.reads.insert((0, 1), vec![cons]);
            let t = trace::run(&prog, &c, 0, &w, 100_000).unwrap();
            let slot = (prod & 15) * 16;
            let got: Vec<String> = t
                .events
                .iter()
                .map(|e| match (&e.memory, &e.reg) {
                    (Some(m), _) => format!("{m}={:#x}", e.raw.unwrap_or(0)),
                    (_, Some(r)) => format!("{r}={:#x}", e.raw.unwrap_or(0)),
                    _ => e.insn.clone(),
                })
                .collect();
            let barrier = match target {
                Target::Aarch64 => Some("dmb oshst"),
                Target::X86_64 => None,
                _ => Some("sync"),
            };
            let mut want = vec![
                format!("ring[{slot:#x}]=0x12"),
                format!("ring[{:#x}]=0xabc", slot + 8),
            ];
            want.extend(barrier.map(String::from));
            want.push(format!("prod={:#x}", (prod + 1) & 0xfffff));
            want.push(format!("cons={cons:#x}"));
            assert_eq!(got, want, "{target} prod {prod}");
            assert_eq!(t.ret, 0);
        }
        // The memory word: ready at once, or never (-110), or the second
        // poll on word 0 that stays 0 (-5).
        for (word4, word0, ret) in [(7u32, 1u32, 0i64), (6, 1, -110), (7, 0, -5)] {
            let mut mem = vec![0u8; 16];
            let (b4, b0) = if target.big_endian() {
                (word4.to_be_bytes(), word0.to_be_bytes())
            } else {
                (word4.to_le_bytes(), word0.to_le_bytes())
            };
            mem[4..8].copy_from_slice(&b4);
            mem[0..4].copy_from_slice(&b0);
            let mut w = World {
                params: vec![0, 7],
                ..Default::default()
            };
            w.memory.insert(0, mem);
            let t = trace::run(&prog, &c, 1, &w, 100_000).unwrap();
            assert_eq!(t.ret, ret, "{target} {word4} {word0}");
        }
    }
}
