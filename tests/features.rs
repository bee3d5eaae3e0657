//! CPU features and errata (issue 13 §2): a sequence that tests features
//! is compiled once per combination of them and dispatches on the feature
//! word. For every target and every combination of the three features of
//! tests/features/features.inv, the emulator must see the function with
//! that feature word do exactly what the function generated for that CPU
//! alone (`gen --feature NAME=on|off`) does: the same device accesses,
//! memory stores, return value and the same barriers, so the dispatch
//! costs no barrier and placement stays as minimal as for a spec written
//! for that CPU. Bits of the word no feature names are ignored. `verify`
//! (the spec's meaning against the machine code, every `if` arm reached)
//! passes on the spec with the word at run time.
#![cfg(feature = "emu")]

use crate::support;

use shootdown::ir::Program;
use shootdown::isa::Target;
use shootdown::verify::interp::World;
use shootdown::verify::trace::{self, Kind, Trace};
use shootdown::Options;
use std::collections::HashMap;

const SPEC: &str = "tests/features/features.inv";
const FEATURES: [&str; 3] = ["double_go", "doorbell", "wait"];

fn load() -> Program {
    let src = std::fs::read_to_string(SPEC).unwrap();
    shootdown::load(SPEC, &src).unwrap_or_else(|d| panic!("{}", d.message))
}

fn fixed(combo: u64) -> Options {
    let mut o = support::options("all");
    o.features.fixed = FEATURES
        .iter()
        .enumerate()
        .map(|(i, f)| (f.to_string(), combo >> i & 1 == 1))
        .collect();
    o
}

/// What the code did, without register names (the two builds allocate
/// registers differently) but with every barrier's mnemonic.
fn effects(t: &Trace) -> Vec<String> {
    let mut v: Vec<String> = t
        .events
        .iter()
        .map(|e| match e.kind {
            Kind::Barrier => format!("barrier {}", e.insn),
            k => format!(
                "{k:?} {:?}[{:?}].{:?} {:?} = {:?}",
                e.device, e.instance, e.reg, e.memory, e.value
            ),
        })
        .collect();
    v.push(format!("return {}", t.ret));
    v
}

fn run(
    prog: &Program,
    opts: &Options,
    target: Target,
    params: Vec<u64>,
    count: u64,
    ready: bool,
) -> Trace {
    let prog = shootdown::codegen::resolve(prog, opts).into_owned();
    let c = shootdown::compile(&prog, target, opts).unwrap_or_else(|d| panic!("{}", d.message));
    let mut reads = HashMap::new();
    reads.insert((0, 3), vec![u64::from(!ready)]);
    let w = World {
        counts: HashMap::from([(0, count)]),
        params,
        reads,
        cover: Default::default(),
        memory: HashMap::from([(0, vec![0u8; 16])]),
        big_endian: target.big_endian(),
        consumers: Vec::new(),
        tlb_found: Vec::new(),
    };
    trace::run(&prog, &c, 0, &w, 1_000_000).unwrap_or_else(|e| panic!("{target}: {e}"))
}

#[test]
fn every_combination_runs_its_specialized_code() {
    let prog = load();
    assert_eq!(prog.seqs[0].params, ["slot", "va", "n", "features"]);
    let plain = support::options("all");
    let mut compared = 0;
    for target in Target::ALL {
        for combo in 0..8u64 {
            for (count, ready) in [(1, true), (3, true), (3, false), (0, true)] {
                let (va, n) = (0x1234_5000, 0x1_0000_0042);
                let want = effects(&run(
                    &prog,
                    &fixed(combo),
                    target,
                    vec![0, va, n],
                    count,
                    ready,
                ));
                for word in [combo, combo | !7] {
                    let got = effects(&run(
                        &prog,
                        &plain,
                        target,
                        vec![0, va, n, word],
                        count,
                        ready,
                    ));
                    assert_eq!(
                        got, want,
                        "{target}: feature word {word:#x}, {count} instances, poll ready {ready}"
                    );
                    compared += 1;
                }
            }
        }
    }
    assert_eq!(compared, Target::ALL.len() * 8 * 4 * 2);
}

/// The variants differ where the features say: the erratum writes `go`
/// twice, the doorbell needs a barrier before it (not on x86-64, whose
/// stores stay in order), the wait polls.
#[test]
fn the_features_change_the_code_as_declared() {
    let prog = load();
    let t = |target, combo, count| {
        run(
            &prog,
            &fixed(combo),
            target,
            vec![0, 0x5000, 7],
            count,
            true,
        )
    };
    for target in Target::ALL {
        let go = |tr: &Trace| {
            tr.events
                .iter()
                .filter(|e| e.reg.as_deref() == Some("go"))
                .count()
        };
        assert_eq!(go(&t(target, 0, 2)), 2, "{target}");
        assert_eq!(go(&t(target, 1, 2)), 4, "{target}");
        let polls = |tr: &Trace| {
            tr.events
                .iter()
                .filter(|e| e.reg.as_deref() == Some("st"))
                .count()
        };
        assert_eq!(polls(&t(target, 4, 2)), 2, "{target}: wait polls");
        assert_eq!(polls(&t(target, 5, 2)), 0, "{target}: not with the erratum");
        let with_bell = t(target, 2, 1);
        assert_eq!(with_bell.ret, 7, "{target}");
        let bell = with_bell
            .events
            .iter()
            .position(|e| e.reg.as_deref() == Some("bell"))
            .unwrap();
        let last_store = with_bell.events[..bell]
            .iter()
            .rposition(|e| e.memory.is_some() && e.kind == Kind::Store)
            .unwrap();
        let fenced = with_bell.events[last_store..bell]
            .iter()
            .any(|e| e.kind == Kind::Barrier);
        assert_eq!(
            fenced,
            target != Target::X86_64,
            "{target}: barrier before the doorbell"
        );
    }
}

#[test]
fn verify_passes_with_the_word_at_run_time() {
    let src = std::fs::read_to_string(SPEC).unwrap();
    let r = shootdown::verify::verify(SPEC, &src, &Target::ALL, &support::options("all"))
        .unwrap_or_else(|d| panic!("{}", d.message));
    assert!(r.ok(), "{:#?}", r.failures);
    assert!(
        !r.skipped.iter().any(|s| s.contains("never reached")),
        "{:#?}",
        r.skipped
    );
    assert!(r.passed.len() >= 4, "{:#?}", r.passed);
}
