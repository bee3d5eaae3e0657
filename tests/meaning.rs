//! Issue 12's holes in meaning, as regression tests: the sequence's own
//! normal-memory stores are ordered like the caller's, and every return
//! path completes what `order invalidates before return` asks. What the
//! code does is taken from the emulator running our bytes (`trace`), and
//! `verify` must reject code that breaks the orderings.
#![cfg(feature = "emu")]

use crate::support;

use shootdown::isa::Target;
use shootdown::verify::interp::World;
use shootdown::verify::trace::{self, Kind, Trace};
use support::compile_spec;

fn world(params: &[u64], mem: &[(usize, usize)]) -> World {
    let mut w = World {
        params: params.to_vec(),
        ..Default::default()
    };
    for &(p, bytes) in mem {
        w.memory.insert(p, vec![0; bytes]);
    }
    w
}

fn run(spec: &str, target: Target, passes: &str, seq: usize, w: &World) -> Trace {
    let (c, _) = compile_spec(spec, target, passes);
    trace::run(&c.opt.clone(), &c, seq, w, 1_000_000).unwrap()
}

/// A compact picture of a trace: `S:slot[0x0]`, `B:dmb oshst`,
/// `D:cmdq_prod`, `I:tlbi ...`, `L:st`.
fn shape(t: &Trace) -> Vec<String> {
    t.events
        .iter()
        .map(|e| match e.kind {
            Kind::Barrier => format!("B:{}", e.insn.trim()),
            Kind::Invalidate => "I".to_string(),
            Kind::Store | Kind::Load => {
                let k = if e.kind == Kind::Store { "S" } else { "L" };
                match (&e.memory, &e.reg) {
                    (Some(m), _) => format!("{k}:{m}"),
                    (_, Some(r)) => format!("{k}{r}"),
                    _ => format!("{k}?"),
                }
            }
        })
        .collect()
}

#[test]
fn each_batch_of_entries_is_visible_before_its_doorbell() {
    let spec = "tests/meaning/two_batches.inv";
    let w = world(&[0, 5, 0x1000, 0x2000, 2], &[(0, 32)]);
    for (target, barrier) in [
        (Target::Aarch64, Some("dmb oshst")),
        (Target::Power64, Some("sync")),
        (Target::Power64le, Some("sync")),
        // x86-64 stores are not reordered with other stores (TSO).
        (Target::X86_64, None),
    ] {
        for passes in ["all", "none"] {
            let t = run(spec, target, passes, 0, &w);
            let entries = |a: u64, b: u64| [format!("S:slot[{a:#x}]"), format!("S:slot[{b:#x}]")];
            let mut want: Vec<String> = Vec::new();
            for (a, b) in [(0, 8), (0x10, 0x18)] {
                want.extend(entries(a, b));
                want.extend(barrier.map(|b| format!("B:{b}")));
                want.push("Scmdq_prod".into());
            }
            assert_eq!(shape(&t), want, "{target} --passes {passes}");
            // The entries hold what the spec wrote, in the target's order.
            let vals: Vec<_> = t
                .events
                .iter()
                .filter_map(|e| e.memory.as_ref().map(|_| e.raw))
                .collect();
            assert_eq!(
                vals,
                [
                    Some(0x5_0000_0000_0012),
                    Some(0x1401),
                    Some(0x5_0000_0000_0012),
                    Some(0x2401)
                ],
                "{target}"
            );
        }
    }
}

#[test]
fn trace_json_names_normal_memory() {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_shootdown"))
        .args([
            "trace",
            "tests/meaning/two_batches.inv",
            "--target",
            "aarch64",
            "--seq",
            "two_batches",
            "--arg",
            "asid=5",
            "--arg",
            "va0=0x1000",
            "--json",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let ev = v["events"].as_array().unwrap();
    assert_eq!(ev[0]["kind"], "store");
    assert_eq!(ev[0]["memory"], "slot[0x0]");
    assert_eq!(ev[0]["value"], "0x5000000000012");
    assert_eq!(ev[1]["memory"], "slot[0x8]");
    assert_eq!(ev[1]["value"], "0x1401");
    // Device events keep the DESIGN shape, with no `memory` key.
    assert_eq!(ev[3]["reg"], "cmdq_prod");
    assert!(ev[3].get("memory").is_none());
}

#[test]
fn each_cleared_pte_is_visible_before_its_tlbi() {
    let w = world(&[0, 0x40_0000], &[(0, 16)]);
    for passes in ["all", "none"] {
        let t = run("tests/meaning/pte_tlbi.inv", Target::Aarch64, passes, 0, &w);
        assert_eq!(
            shape(&t),
            [
                "S:pte[0x0]",
                "B:dsb ishst",
                "I",
                "S:pte[0x8]",
                "B:dsb ishst",
                "I",
                "B:dsb ish"
            ],
            "--passes {passes}"
        );
    }
}

#[test]
fn a_store_in_a_loop_keeps_its_barrier_in_the_loop() {
    let w = world(&[0, 3], &[(0, 8)]);
    for target in [Target::Aarch64, Target::Power64le] {
        let b = if target == Target::Aarch64 {
            "B:dmb oshst"
        } else {
            "B:sync"
        };
        let t = run("tests/meaning/store_in_loop.inv", target, "all", 0, &w);
        let one = ["S:p[0x0]", b, "Sgo"];
        assert_eq!(shape(&t), one.repeat(3), "{target}");
        // Loop-carried: each doorbell after the first follows the previous
        // iteration's store, so a barrier precedes every doorbell.
        let t = run("tests/meaning/store_in_loop.inv", target, "all", 1, &w);
        let one = [b, "Sgo", "S:p[0x0]"];
        assert_eq!(shape(&t), one.repeat(3), "{target} carried");
    }
}

#[test]
fn a_poll_timeout_completes_the_invalidation() {
    let spec = "tests/meaning/poll_timeout.inv";
    let mut never = world(&[0x40_0000], &[]);
    never.reads.insert((0, 0), vec![1]);
    let mut ready = world(&[0x40_0000], &[]);
    ready.reads.insert((0, 0), vec![0]);
    for passes in ["all", "none"] {
        let t = run(spec, Target::Aarch64, passes, 0, &never);
        assert_eq!(t.ret, -110);
        assert_eq!(
            shape(&t),
            ["I", "Lst", "Lst", "Lst", "B:dsb ish"],
            "--passes {passes}"
        );
        let t = run(spec, Target::Aarch64, passes, 0, &ready);
        assert_eq!(t.ret, 0);
        assert_eq!(shape(&t), ["I", "Lst", "B:dsb ish"], "--passes {passes}");
        // Already complete before the poll: no second barrier on timeout.
        let t = run(spec, Target::Aarch64, passes, 1, &never);
        assert_eq!(t.ret, -110);
        assert_eq!(
            shape(&t),
            ["I", "B:dsb ish", "Lst", "Lst", "Lst"],
            "--passes {passes}"
        );
    }
}

#[test]
fn verify_passes_the_reproducers() {
    for spec in [
        "tests/meaning/two_batches.inv",
        "tests/meaning/pte_tlbi.inv",
        "tests/meaning/store_in_loop.inv",
        "tests/meaning/poll_timeout.inv",
    ] {
        let src = std::fs::read_to_string(spec).unwrap();
        let prog = shootdown::load(spec, &src).unwrap();
        let targets = shootdown::output::default_targets(&prog);
        for passes in ["all", "none"] {
            let r =
                shootdown::verify::verify(spec, &src, &targets, &support::options(passes)).unwrap();
            assert!(r.ok(), "{spec} --passes {passes}: {:#?}", r.failures);
        }
    }
}

/// Can fail: without barrier placement, `verify` sees the sequence's own
/// entries reach the doorbell unordered, and a timeout return with the
/// TLBI incomplete.
#[test]
fn verify_rejects_the_holes() {
    let cases = [
        (
            "tests/meaning/two_batches.inv",
            Target::Aarch64,
            "NormalStore -> DevStore",
        ),
        (
            "tests/meaning/two_batches.inv",
            Target::Power64le,
            "NormalStore -> DevStore",
        ),
        (
            "tests/meaning/pte_tlbi.inv",
            Target::Aarch64,
            "NormalStore -> TlbInvalidate",
        ),
        (
            "tests/meaning/store_in_loop.inv",
            Target::Aarch64,
            "NormalStore -> DevStore",
        ),
        (
            "tests/meaning/poll_timeout.inv",
            Target::Aarch64,
            "returns with an invalidation not completed",
        ),
    ];
    for (spec, target, what) in cases {
        let src = std::fs::read_to_string(spec).unwrap();
        let r = shootdown::verify::verify(spec, &src, &[target], &support::options("fission,fuse"))
            .unwrap();
        assert!(
            r.failures.iter().any(|f| f.contains(what)),
            "{spec} {target}: expected a failure naming `{what}`: {:#?}",
            r.failures
        );
    }
}
