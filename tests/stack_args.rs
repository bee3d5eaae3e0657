//! Arguments past the argument registers (issue 13 §5), on every target:
//! `tests/stack_args/stack_args.inv` has a sequence of 11 arguments (a
//! device base and ten parameters) and one of 12 (a dynamic set's array
//! and count, then ten parameters), both more than x86-64's six and
//! AArch64's and POWER's eight argument registers.
//!
//! Oracles: the cross gcc compiles a C caller (tests/harness/stack_args.c)
//! that passes distinct values through the header's prototypes and checks
//! every stored value, run under qemu-user (natively on x86-64); the
//! emulator trace against values computed here from the parameters;
//! `verify` (GNU as byte equality, capstone, the spec's meaning) with and
//! without the passes; and the store-logging harness
//! (tests/harness/store_log.c, which also calls through the header's
//! prototypes) against the trace, access for access.
#![cfg(feature = "emu")]

#[allow(dead_code)]
use crate::store_log;
use crate::support;

use shootdown::verify::interp::World;
use shootdown::verify::trace::{self, Kind};
use shootdown::verify::{asm_check, verify, Report};
use shootdown::Target;
use std::collections::HashMap;
use store_log::log::first_divergence;
use store_log::{run_cases, Case};
use support::{asm_text, compile_spec, header_text, run_harness};

const SPEC: &str = "tests/stack_args/stack_args.inv";

fn spec_src() -> String {
    std::fs::read_to_string(SPEC).unwrap()
}

fn c_caller(target: Target, passes: &str) {
    let (c, opts) = compile_spec(SPEC, target, passes);
    let out = run_harness(
        target,
        &asm_text(&c, &opts),
        &header_text(SPEC, &opts),
        "stack_args.h",
        include_str!("harness/stack_args.c"),
        &format!("stack-args-{target}-{passes}"),
    );
    assert!(!out.contains("FAIL"), "{target} {passes}:\n{out}");
    // 12 checks per call of `ten`, 20 per call of `twelve`, two calls each.
    assert_eq!(
        out.lines().filter(|l| l.starts_with("ok ")).count(),
        64,
        "{target} {passes}:\n{out}"
    );
    assert!(out.contains("PASSED: 64 ok, 0 failure(s)"), "{out}");
}

#[test]
fn c_caller_power64() {
    for passes in ["all", "none"] {
        c_caller(Target::Power64, passes);
    }
}

#[test]
fn c_caller_power64le() {
    for passes in ["all", "none"] {
        c_caller(Target::Power64le, passes);
    }
}

#[test]
fn c_caller_aarch64() {
    for passes in ["all", "none"] {
        c_caller(Target::Aarch64, passes);
    }
}

#[test]
fn c_caller_x86_64_native() {
    for passes in ["all", "none"] {
        c_caller(Target::X86_64, passes);
    }
}

/// The spec really reads stack arguments in the shapes that matter: every
/// target loads from its stack slots, x86-64 does so after pushing a
/// callee-saved register (offsets shifted by the push), and POWER borrows
/// a non-volatile register (saved below r1, which must not move).
#[test]
fn the_code_reads_the_stack_slots_the_abis_name() {
    let expect: [(Target, &[&str]); 4] = [
        // ten's a7 is its ninth argument: 48 + 8 * 8 (ELFv1).
        (Target::Power64, &["112(%r1)", "std %r31,-8(%r1)"]),
        // 32 + 8 * 8 (ELFv2).
        (Target::Power64le, &["96(%r1)", "std %r31,-8(%r1)"]),
        (Target::Aarch64, &["[sp]", "[sp, #8]", "[sp, #0x18]"]),
        // Past one push: the seventh argument at 16(%rsp), not 8(%rsp).
        (Target::X86_64, &["push %rbx", "0x10(%rsp)"]),
    ];
    for (t, needles) in expect {
        let (c, opts) = compile_spec(SPEC, t, "all");
        let text = asm_text(&c, &opts);
        for n in needles {
            assert!(text.contains(n), "{t}: no `{n}` in\n{text}");
        }
    }
}

fn arg(i: u64) -> u64 {
    0xa5c3_0000_0000_0000 ^ ((i + 1) << 40) ^ ((0x10 + i) << 24) ^ (0x1000 + 0x111 * i)
}

/// The last value stored to each device register (device, instance,
/// register name).
fn device_stores(t: &trace::Trace) -> HashMap<(String, u64, String), u64> {
    t.events
        .iter()
        .filter(|e| e.kind == Kind::Store && e.device.is_some())
        .map(|e| {
            (
                (
                    e.device.clone().unwrap(),
                    e.instance.unwrap_or(0),
                    e.reg.clone().unwrap(),
                ),
                e.raw.unwrap(),
            )
        })
        .collect()
}

fn u64_at(mem: &[u8], off: usize, big: bool) -> u64 {
    let b: [u8; 8] = mem[off..off + 8].try_into().unwrap();
    if big {
        u64::from_be_bytes(b)
    } else {
        u64::from_le_bytes(b)
    }
}

/// `shootdown::verify::trace` runs the machine code with the arguments
/// where each ABI passes them; what it stores is checked against values
/// computed here from the parameters, not against the interpreter.
#[test]
fn emulator_trace_sees_every_parameter() {
    let src = spec_src();
    let prog = shootdown::load(SPEC, &src).unwrap();
    for t in Target::ALL {
        for passes in ["all", "none"] {
            let (c, _) = compile_spec(SPEC, t, passes);
            let big = t.big_endian();
            let seq = |name: &str| c.opt.seqs.iter().position(|s| s.name == name).unwrap();
            let a: Vec<u64> = (0..=9).map(arg).collect();

            // ten(out, a1..a9), d.stat reading a9: the poll is satisfied.
            let (d, stat) = (0, 5);
            let mut w = World {
                params: std::iter::once(0).chain(a[1..].iter().copied()).collect(),
                big_endian: big,
                ..World::default()
            };
            w.memory.insert(0, vec![0; 40]);
            w.reads.insert((d, stat), vec![a[9]]);
            let tr = trace::run(&prog, &c, seq("ten"), &w, 100_000).unwrap();
            assert_eq!(tr.ret, 0, "{t} {passes} ten");
            let st = device_stores(&tr);
            let reg = |r: &str| st.get(&("d".to_string(), 0, r.to_string())).copied();
            assert_eq!(reg("r1"), Some(a[1]), "{t} {passes}");
            assert_eq!(reg("r2"), Some(a[2]), "{t} {passes}");
            assert_eq!(reg("r3"), Some(a[3] & 0xffff_ffff), "{t} {passes}");
            assert_eq!(reg("r4"), Some(a[4]), "{t} {passes}");
            let mix = (a[1] ^ a[9]).wrapping_add(a[5] << 3).wrapping_sub(a[8]);
            assert_eq!(reg("mix"), Some(mix), "{t} {passes}");
            let mem = &tr.memory[&0];
            for (k, want) in a[5..=9].iter().enumerate() {
                assert_eq!(
                    u64_at(mem, 8 * k, big),
                    *want,
                    "{t} {passes} out[{}]",
                    8 * k
                );
            }
            // The poll compares with the ninth parameter: one off times out.
            w.reads.insert((d, stat), vec![a[9] ^ 1]);
            let tr = trace::run(&prog, &c, seq("ten"), &w, 100_000).unwrap();
            assert_eq!(tr.ret, -110, "{t} {passes} ten, stat never matches");

            // twelve(q[3], lk, b1..b9).
            let b: Vec<u64> = (20..=29).map(arg).collect();
            let q = 1;
            let mut w = World {
                params: std::iter::once(0).chain(b[1..].iter().copied()).collect(),
                big_endian: big,
                ..World::default()
            };
            w.counts.insert(q, 3);
            w.memory.insert(0, vec![0; 56]);
            let tr = trace::run(&prog, &c, seq("twelve"), &w, 100_000).unwrap();
            assert_eq!(tr.ret, 0, "{t} {passes} twelve");
            let st = device_stores(&tr);
            let sum = b[1..].iter().fold(0u64, |s, x| s.wrapping_add(*x));
            for i in 0..3 {
                let reg = |r: &str| st.get(&("q".to_string(), i, r.to_string())).copied();
                assert_eq!(reg("a"), Some(b[1]), "{t} {passes} q{i}");
                assert_eq!(reg("b"), Some(b[8]), "{t} {passes} q{i}");
                assert_eq!(reg("sum"), Some(sum), "{t} {passes} q{i}");
            }
            assert_eq!(st.len(), 9, "{t} {passes}: {st:?}");
            let mem = &tr.memory[&0];
            let want = [b[9], b[3], b[4] ^ b[5], b[6], b[7], b[2], b[5]];
            for (k, v) in want.iter().enumerate() {
                assert_eq!(u64_at(mem, 8 * k, big), *v, "{t} {passes} lk[{}]", 8 * k);
            }
        }
    }
}

/// `verify` on the spec for all four targets, optimized and naive: GNU as
/// byte equality, capstone, and the emulator against the spec's meaning
/// in every world it builds (edge values, instance counts 0/1/3).
#[test]
fn verify_passes_on_every_target() {
    let src = spec_src();
    for passes in ["all", "none"] {
        let opts = support::options(passes);
        let r = verify(SPEC, &src, &Target::ALL, &opts).unwrap_or_else(|d| panic!("{}", d.message));
        assert!(r.ok(), "{passes}: {:?}", r.failures);
        assert!(r.skipped.is_empty(), "{passes}: {:?}", r.skipped);
        for t in Target::ALL {
            let gas = format!("{t}: GNU as byte equality");
            assert!(
                r.passed.iter().any(|p| p.contains(&gas)),
                "{passes}: no `{gas}` in {:?}",
                r.passed
            );
            let runs = r
                .passed
                .iter()
                .filter(|p| {
                    p.contains(&format!("{t} ten (")) || p.contains(&format!("{t} twelve ("))
                })
                .count();
            assert!(
                runs >= 8,
                "{passes} {t}: {runs} emulator runs: {:?}",
                r.passed
            );
        }
    }
}

/// The generated file, as `gen` writes it, assembles with plain
/// `<triple>-gcc -c` to exactly the bytes shootdown encoded.
#[test]
fn gnu_as_assembles_the_file_to_our_bytes() {
    for t in Target::ALL {
        let (c, opts) = compile_spec(SPEC, t, "all");
        let mut report = Report::default();
        asm_check::gnu_as(&c, &asm_text(&c, &opts), &mut report);
        assert!(report.ok() && report.skipped.is_empty(), "{t}: {report:?}");
        assert_eq!(report.passed.len(), 1, "{t}: {report:?}");
    }
}

/// qemu-user (natively on x86-64) runs the code in the store-logging
/// harness in the worlds `verify` uses; every device access, the return
/// value and the final memory must be what the trace reports. (The naive
/// lowering is left to the C caller tests: this one builds a harness per
/// target and is the slowest here.)
#[test]
fn store_log_harness_agrees_with_the_trace() {
    let src = spec_src();
    let prog = shootdown::load(SPEC, &src).unwrap();
    for t in Target::ALL {
        for passes in ["all"] {
            let opts = support::options(passes);
            let mut cases = Vec::new();
            for (i, s) in prog.seqs.iter().enumerate() {
                for (wname, mut w) in shootdown::verify::worlds(&prog, i) {
                    if wname.contains("never ready") {
                        continue;
                    }
                    w.big_endian = t.big_endian();
                    cases.push(Case {
                        seq: i,
                        name: format!("{t} {passes} {} ({wname})", s.name),
                        world: w,
                    });
                }
            }
            let c = shootdown::compile(&prog, t, &opts).unwrap();
            let tag = format!("storelog-stack-args-{t}-{passes}");
            let outcomes = run_cases(&prog, "stack_args", &c, &opts, &cases, &tag);
            assert!(
                outcomes.len() >= 8,
                "{t} {passes}: {} cases",
                outcomes.len()
            );
            let mut accesses = 0;
            for o in outcomes {
                let observed = o.observed.unwrap_or_else(|e| panic!("{}: {e}", o.name));
                if let Some(d) = first_divergence(&o.expected, &observed) {
                    panic!("{}: {d}", o.name);
                }
                accesses += observed.accesses.len();
            }
            // At least ten's and twelve's stores in their first worlds.
            assert!(accesses >= 20, "{t} {passes}: {accesses} accesses");
        }
    }
}
