//! Locals and `while` on every target: the machine code of
//! tests/locals/loop.inv under the emulator against the loop's meaning
//! computed here in plain Rust (every store in order, the early return
//! past the limit), for trip counts 0 through past the limit and values
//! that take the `if` arm and not.
#![cfg(feature = "emu")]

use crate::support;

use shootdown::isa::Target;
use shootdown::verify::interp::World;
use shootdown::verify::trace::{self, Kind};
use support::compile_spec;

const SPEC: &str = "tests/locals/loop.inv";

/// (register, value) stores and the return value, by hand.
fn meaning(n: u64, x: u64) -> (Vec<(String, u64)>, i64) {
    let mut out = Vec::new();
    let (mut i, mut acc) = (0u64, x);
    while i < n {
        if i == 10 {
            return (out, -7);
        }
        out.push(("a".to_string(), acc));
        acc = acc.wrapping_mul(3).wrapping_add(i);
        if acc > 1000 {
            acc >>= 4;
        }
        out.push(("b".to_string(), i));
        i += 1;
    }
    out.push(("a".to_string(), acc));
    (out, i as i64)
}

#[test]
fn while_and_locals_mean_the_same_on_every_target() {
    let mut runs = 0;
    for target in Target::ALL {
        for passes in ["all", "none"] {
            let (c, _) = compile_spec(SPEC, target, passes);
            for n in [0u64, 1, 2, 5, 9, 10, 11, 12, u64::MAX] {
                for x in [0u64, 1, 400, 1000, u64::MAX] {
                    let w = World {
                        params: vec![n, x],
                        big_endian: target.big_endian(),
                        ..Default::default()
                    };
                    let t = trace::run(&c.opt, &c, 0, &w, 100_000)
                        .unwrap_or_else(|e| panic!("{target} {passes}: {e}"));
                    let got: Vec<(String, u64)> = t
                        .events
                        .iter()
                        .filter(|e| e.kind == Kind::Store)
                        .map(|e| (e.reg.clone().unwrap_or_default(), e.raw.unwrap_or(0)))
                        .collect();
                    let (want, ret) = meaning(n, x);
                    assert_eq!(
                        (got, t.ret),
                        (want, ret),
                        "{target} --passes {passes}, n={n} x={x}"
                    );
                    runs += 1;
                }
            }
        }
    }
    assert_eq!(runs, Target::ALL.len() * 2 * 9 * 5);
}

/// The spec's own check: `verify` compares the emulator with the
/// interpreter in its worlds and reaches both the entered and the
/// never-entered loop.
#[test]
fn verify_passes_and_reaches_both_loop_arms() {
    let src = std::fs::read_to_string(SPEC).unwrap();
    for passes in ["all", "none"] {
        let r =
            shootdown::verify::verify(SPEC, &src, &Target::ALL, &support::options(passes)).unwrap();
        assert!(r.ok(), "--passes {passes}: {:#?}", r.failures);
        assert!(
            r.passed
                .iter()
                .any(|p| p.contains("reach all") && p.contains("branch arms")),
            "{:#?}\n{:#?}",
            r.passed,
            r.skipped
        );
    }
}
