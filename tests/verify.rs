//! `verify` and `trace` end to end: the emulator (unicorn) runs our bytes;
//! the IR interpreter gives the spec's meaning.
#![cfg(feature = "emu")]

use crate::support;

use shootdown::isa::Target;
use shootdown::verify::interp::World;
use shootdown::verify::trace::{self, Kind};
use support::compile_spec;

fn npu_world(n: u64) -> World {
    let mut w = World::default();
    w.counts.insert(0, n);
    w.params = vec![1, 0x1001_0000];
    w
}

fn counts(t: &trace::Trace) -> (usize, Vec<String>) {
    let stores = t.events.iter().filter(|e| e.kind == Kind::Store).count();
    let barriers = t
        .events
        .iter()
        .filter(|e| e.kind == Kind::Barrier)
        .map(|e| e.insn.clone())
        .collect();
    (stores, barriers)
}

#[test]
fn npu_atsd_dynamic_counts_match_the_seed() {
    for target in [Target::Power64, Target::Power64le] {
        let (c, _) = compile_spec("examples/npu2_atsd.inv", target, "all");
        let prog = c.opt.clone();
        // invalidate_va, 6 NPUs: 12 stores and exactly one eieio.
        let t = trace::run(&prog, &c, 0, &npu_world(6), 1_000_000).unwrap();
        assert_eq!(counts(&t), (12, vec!["eieio".to_string()]), "{target}");
        assert_eq!(t.ret, 0);
        // Every AVA store precedes the eieio, every LAUNCH follows it.
        let eieio = t
            .events
            .iter()
            .position(|e| e.kind == Kind::Barrier)
            .unwrap();
        for (i, e) in t
            .events
            .iter()
            .enumerate()
            .filter(|(_, e)| e.kind == Kind::Store)
        {
            let reg = e.reg.as_deref().unwrap();
            assert_eq!(reg == "ava", i < eieio, "{target}: {reg} at {i}");
            let v = e.raw.unwrap();
            assert_eq!(
                v,
                if reg == "ava" {
                    0x1001_0000
                } else {
                    0x0005_4000_0200_0000
                }
            );
        }
        // invalidate_pid: 6 LAUNCH stores, no barrier, value IS|PRS|PID.
        let mut w = npu_world(6);
        w.params = vec![1];
        let t = trace::run(&prog, &c, 1, &w, 1_000_000).unwrap();
        assert_eq!(counts(&t), (6, vec![]), "{target}");
        assert!(t
            .events
            .iter()
            .filter(|e| e.kind == Kind::Store)
            .all(|e| e.raw == Some(0x000c_0000_0200_0000) && e.reg.as_deref() == Some("launch")));
        // 1 and 0 NPUs.
        let t = trace::run(&prog, &c, 0, &npu_world(1), 1_000_000).unwrap();
        assert_eq!(counts(&t), (2, vec!["eieio".to_string()]));
        let t = trace::run(&prog, &c, 0, &npu_world(0), 1_000_000).unwrap();
        assert_eq!(t.events.iter().filter(|e| e.kind == Kind::Store).count(), 0);
        assert_eq!(t.ret, 0);
    }
}

#[test]
fn naive_lowering_is_the_pre_patch_code() {
    for target in [Target::Power64, Target::Power64le] {
        let (c, _) = compile_spec("examples/npu2_atsd.inv", target, "none");
        let t = trace::run(&c.opt.clone(), &c, 0, &npu_world(6), 1_000_000).unwrap();
        let (stores, barriers) = counts(&t);
        assert_eq!(stores, 12);
        assert_eq!(barriers, vec!["eieio".to_string(); 6], "{target}");
        // ava, eieio, launch per NPU.
        let kinds: Vec<Kind> = t.events.iter().take(3).map(|e| e.kind).collect();
        assert_eq!(kinds, vec![Kind::Store, Kind::Barrier, Kind::Store]);
    }
}

#[test]
fn poll_timeout_returns_the_spec_code() {
    let (c, _) = compile_spec("examples/npu2_atsd.inv", Target::Power64le, "all");
    let mut w = npu_world(3);
    w.reads.insert((0, 2), vec![1]);
    let t = trace::run(&c.opt.clone(), &c, 0, &w, 10_000_000).unwrap();
    assert_eq!(t.ret, -110);
    // The bound is 100000 reads of the first NPU, then no further NPU.
    let loads: Vec<_> = t.events.iter().filter(|e| e.kind == Kind::Load).collect();
    assert_eq!(loads.len(), 100_000);
    assert!(loads.iter().all(|e| e.instance == Some(0)));
}

/// Every example, listed from the directory: a list written out once had
/// six of fourteen, and radix_tlb's wrapping ranges (compiled to -EINVAL,
/// interpreted as an empty flush-all) failed `verify` unnoticed.
#[test]
fn verify_passes_on_every_example() {
    let mut specs: Vec<String> = std::fs::read_dir("examples")
        .unwrap()
        .map(|e| e.unwrap().path().display().to_string())
        .filter(|p| p.ends_with(".inv"))
        .collect();
    specs.sort();
    assert!(specs.len() >= 14, "{specs:?}");
    for spec in &specs {
        let spec = spec.as_str();
        let src = std::fs::read_to_string(spec).unwrap();
        let prog = shootdown::load(spec, &src).unwrap();
        let targets = shootdown::output::default_targets(&prog);
        let r = shootdown::verify::verify(spec, &src, &targets, &support::options("all")).unwrap();
        assert!(r.ok(), "{spec}: {:#?}", r.failures);
        assert!(r.passed.len() > 4, "{spec}: {:#?}", r.passed);
        assert!(r.skipped.is_empty(), "{spec}: {:#?}", r.skipped);
    }
}

#[test]
fn verify_fails_without_barrier_placement() {
    let spec = "examples/npu2_atsd.inv";
    let src = std::fs::read_to_string(spec).unwrap();
    let r = shootdown::verify::verify(
        spec,
        &src,
        &[Target::Power64],
        &support::options("fission,fuse"),
    )
    .unwrap();
    assert!(!r.ok());
    assert!(
        r.failures.iter().any(|f| f.contains("npu[0].launch")
            && f.contains("no barrier ordering DevStore -> DevStore")),
        "{:#?}",
        r.failures
    );
}

#[test]
fn trace_cli_prints_the_design_json_shape() {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_shootdown"))
        .args([
            "trace",
            "examples/npu2_atsd.inv",
            "--target",
            "power64",
            "--seq",
            "invalidate_va",
            "--instances",
            "2",
            "--arg",
            "pid=1",
            "--arg",
            "va=0x10010000",
            "--read",
            "npu.stat=1,0",
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
    assert_eq!(ev[0]["device"], "npu");
    assert_eq!(ev[0]["instance"], 0);
    assert_eq!(ev[0]["reg"], "ava");
    assert_eq!(ev[0]["value"], "0x10010000");
    assert!(ev[0]["insn"].as_str().unwrap().starts_with("std"));
    assert_eq!(ev[2]["kind"], "barrier");
    assert_eq!(v["return"], 0);
    // Two reads of each STAT (busy, then ready).
    assert_eq!(ev.iter().filter(|e| e["kind"] == "load").count(), 4);
}

/// Book III-E (`machine e6500`): a batch of invalidations gets one
/// barrier before it (page-table stores, `msync`) and one completion after
/// it (`msync; isync` for this CPU's tlbilx, `mbar; tlbsync; msync` for
/// broadcast tlbivax), never one per page, and no Book III-S barrier.
#[test]
fn book3e_batches_get_one_barrier_each() {
    const SPEC: &str = "machine e6500
target power64, power64le
seq local(pte: ptr u64, start: u64, size: u64, mas6: u64) -> void {
    order stores before invalidates
    order invalidates before return
    pte[0] = 0
    range a in start, size step 4K { tlbilx va, a, mas6 }
}
seq bcast(pte: ptr u64, start: u64, size: u64, mas6: u64) -> void {
    order stores before invalidates
    order invalidates before return
    pte[0] = 0
    range a in start, size step 4K { tlbivax a, mas6 }
}
seq both(pte: ptr u64, start: u64, size: u64, mas6: u64) -> void {
    order stores before invalidates
    order invalidates before return
    pte[0] = 0
    range a in start, size step 4K {
        tlbilx va, a, mas6
        tlbivax a, mas6
    }
}
";
    let prog = shootdown::load("book3e_batch.inv", SPEC).unwrap();
    for target in [Target::Power64, Target::Power64le] {
        let c = shootdown::compile(&prog, target, &support::options("all")).unwrap();
        for (i, (inv, after)) in [
            (vec!["tlbilx"], vec!["msync", "isync"]),
            (vec!["tlbivax"], vec!["mbar", "tlbsync", "msync"]),
            (
                vec!["tlbilx", "tlbivax"],
                vec!["msync", "isync", "mbar", "tlbsync", "msync"],
            ),
        ]
        .into_iter()
        .enumerate()
        {
            let w = World {
                params: vec![0, 0x1000_0000, 16 << 12, 0x2a5_0100],
                memory: [(0, vec![0xff; 8])].into_iter().collect(),
                big_endian: target.big_endian(),
                ..Default::default()
            };
            let t = trace::run(&c.opt, &c, i, &w, 1_000_000).unwrap();
            let name = &c.opt.seqs[i].name;
            let mut want: Vec<String> = vec!["store".into(), "msync".into()];
            for p in 0..16u64 {
                for m in &inv {
                    want.push(format!("{m} {:#x}", 0x1000_0000 + (p << 12)));
                }
            }
            want.extend(after.iter().map(|s| s.to_string()));
            let got: Vec<String> = t
                .events
                .iter()
                .map(|e| match e.kind {
                    Kind::Store => "store".to_string(),
                    Kind::Barrier => e.insn.clone(),
                    Kind::Invalidate => format!(
                        "{} {:#x}",
                        e.insn.split_whitespace().next().unwrap_or(""),
                        e.operands[0]
                    ),
                    Kind::Load => "load".to_string(),
                })
                .collect();
            assert_eq!(got, want, "{target} {name}");
            assert!(t
                .events
                .iter()
                .filter(|e| e.kind == Kind::Invalidate)
                .all(|e| e.operands.last() == Some(&0x2a5_0100)));
        }
    }
}

/// Book III-E code is ISA 2.06: `ctz` without `cnttzd` (which GNU as
/// `.machine e6500` rejects), checked by `verify` (GNU as, capstone, and
/// the emulator against the meaning at 0, 1, all ones and more).
#[test]
fn book3e_builtins_assemble_and_agree() {
    const SPEC: &str = "machine e6500
target power64, power64le
seq bits(x: u64) {
    return ctz(x) | (clz(x) << 8) | (popcount(x) << 16) | (ctz(x << 7) << 24)
}
";
    let targets = [Target::Power64, Target::Power64le];
    let r = shootdown::verify::verify("b3e_bits.inv", SPEC, &targets, &support::options("all"))
        .unwrap();
    assert!(r.ok(), "{:#?}", r.failures);
    assert!(
        r.passed.iter().any(|p| p.contains("GNU as")),
        "{:#?}",
        r.passed
    );
    assert!(r.skipped.is_empty(), "{:#?}", r.skipped);
}

/// The simulated queue consumer: a doorbell over an entry whose second
/// word was never written fails `verify`; writing both words passes, and
/// so does the SMMUv3 example (whose consumer worlds return 0, not the
/// poll's -110).
#[test]
fn queue_consumer_rejects_incomplete_entries() {
    let spec = |body: &str| {
        format!(
            "target aarch64
device d {{
    reg prod 0x98 u32 le
    reg cons 0x9c u32 le
    require stores before prod
}}
queue q on d {{
    entry 16 le
    prod prod
    cons cons
    index wrap
    full limit 10
}}
seq one(q_ring: ptr u64, q_log2n: u64) {{
{body}
    d.prod = 1
}}
"
        )
    };
    let run = |src: &str| {
        shootdown::verify::verify("q.inv", src, &[Target::Aarch64], &support::options("all"))
            .unwrap()
    };
    let half = run(&spec("    q_ring[0] = 1"));
    assert!(!half.ok());
    assert!(
        half.failures
            .iter()
            .any(|f| f.contains("publishes the queue entry at ring offset 0x0")),
        "{:#?}",
        half.failures
    );
    let whole = run(&spec("    q_ring[0] = 1\n    q_ring[8] = 2"));
    assert!(whole.ok(), "{:#?}", whole.failures);
    let src = std::fs::read_to_string("examples/smmuv3_cmdq.inv").unwrap();
    let r = shootdown::verify::verify(
        "examples/smmuv3_cmdq.inv",
        &src,
        &[Target::Aarch64],
        &support::options("all"),
    )
    .unwrap();
    assert!(r.ok(), "{:#?}", r.failures);
    assert!(
        r.passed
            .iter()
            .any(|p| p.contains("tlb_inv_range (1 instance, ascending") && p.contains("return (0)")),
        "{:#?}",
        r.passed
    );
}

/// A record's completion write (`write u32 data at addr << 2 when sw`)
/// lands in the memory of the pointer whose `phys` parameter the address
/// is, in the interpreter and in the emulated machine code alike: the
/// status poll then sees it and the sequence returns 0 in every world on
/// both targets. With the enabling field clear no write happens and the
/// poll runs out (-110), so the write is what makes it return 0.
#[test]
fn queue_completion_write_lands_in_the_phys_pointer() {
    let spec = |target: &str, sw: u64| {
        format!(
            "target {target}
device d {{
    reg prod 0x88 u32 le
    reg cons 0x80 u32 le
    require stores before prod
}}
record wait 16 {{
    field type lsb0 0..3 = 5
    field sw   lsb0 5
    field data lsb0 32..63
    field addr lsb0 66..127
    write u32 data at addr << 2 when sw
}}
queue q on d {{
    entry 16 le
    prod prod
    cons cons
    index bytes
    full limit 10
}}
seq done(status: ptr u32, status_phys: phys status, tag: u64) {{
    status[4] = 1
    enqueue q wait {{ sw: {sw}, data: tag | 1, addr: (status_phys + 4) >> 2 }}
    issue q
    poll status[4] == tag | 1 limit 50 else return -110
    return 0
}}
"
        )
    };
    for target in [Target::X86_64, Target::Aarch64] {
        for (sw, ret) in [(1, "return (0)"), (0, "return (-110)")] {
            let src = spec(target.name(), sw);
            let r = shootdown::verify::verify("w.inv", &src, &[target], &support::options("all"))
                .unwrap();
            assert!(r.ok(), "{target:?} sw {sw}: {:#?}", r.failures);
            let worlds: Vec<&String> = r
                .passed
                .iter()
                .filter(|p| p.contains("polls ready"))
                .collect();
            assert!(!worlds.is_empty(), "{:#?}", r.passed);
            for p in worlds {
                assert!(p.contains(ret), "{target:?} sw {sw}: {p}");
            }
        }
    }
}

/// `INVALIDATION after invalidates` asks for one barrier that orders the
/// earlier invalidations before that one, not for completion and not
/// between the earlier ones: after a loop of N tlbie, one `ptesync` on
/// POWER (the kernel's errata fixup), `dsb ish` on AArch64 (nothing weaker
/// orders TLBIs); `verify` checks the placement against the trace, and
/// without the clause there is no such barrier.
#[test]
fn after_invalidates_orders_one_invalidation_after_the_earlier_ones() {
    let spec = |target: &str, inv: &str, clause: &str| {
        let last = inv.replace('p', "va");
        format!(
            "target {target}
seq s(va: u64, n: u64) {{
    order stores before invalidates
    order invalidates before return
    range p in va, n << 16 step 0x10000 {{
        {inv}
    }}
    {last} {clause}
}}
"
        )
    };
    let code = |target: Target, src: &str| {
        let opts = support::options("all");
        let report = shootdown::verify::verify("a.inv", src, &[target], &opts).unwrap();
        assert!(report.ok(), "{src}\n{:?}", report.failures);
        let prog = shootdown::load("a.inv", src).unwrap();
        let c = shootdown::codegen::compile(&prog, target, &opts).unwrap();
        let text = shootdown::emit::asm::render(&c, &opts);
        text.lines()
            .map(|l| l.trim().to_string())
            .filter(|l| !l.is_empty() && !l.starts_with("/*"))
            .collect::<Vec<String>>()
    };
    let power = "tlbie p & ~0xfff, 0, 0, 1, 1";
    let with = code(
        Target::Power64le,
        &spec("power64le", power, "after invalidates"),
    );
    let without = code(Target::Power64le, &spec("power64le", power, ""));
    let n = |l: &[String], m: &str| l.iter().filter(|x| x.as_str() == m).count();
    // Before the loop (stores before invalidates), before the last tlbie
    // (the clause), and in the trailing completion.
    assert_eq!(n(&with, "ptesync"), 3, "{with:#?}");
    assert_eq!(n(&without, "ptesync"), 2, "{without:#?}");
    assert_eq!(n(&with, "tlbsync"), 1, "{with:#?}");
    let i = with.iter().rposition(|l| l.starts_with("tlbie")).unwrap();
    assert_eq!(with[i - 1], "ptesync", "{with:#?}");

    let arm = "tlbi vae1is, p >> 12";
    let with = code(Target::Aarch64, &spec("aarch64", arm, "after invalidates"));
    let without = code(Target::Aarch64, &spec("aarch64", arm, ""));
    assert_eq!(n(&with, "dsb ish"), n(&without, "dsb ish") + 1, "{with:#?}");
    let i = with.iter().rposition(|l| l.starts_with("tlbi")).unwrap();
    assert_eq!(with[i - 1], "dsb ish", "{with:#?}");
}

/// A poll of a one-bit field is a bit branch, tested differently by bit
/// position on each target (x86-64 `test $imm32` / `bt` / the sign;
/// POWER `andi.` / a rotate to the sign; riscv64 `andi` / a shift to the
/// sign; aarch64 by mask). `verify` runs each under the emulator against
/// the spec's meaning with the polled bit busy then done, or never done:
/// a test of the wrong bit leaves the loop on the first read or never.
#[test]
fn one_bit_polls_agree_at_every_bit_position() {
    let bits = [0u32, 5, 10, 11, 15, 16, 30, 31, 32, 47, 62, 63];
    let mut spec = String::from("device d {\n    reg st 0x0 u64 le\n");
    for b in bits {
        spec += &format!("    field st.b{b} lsb0 {b}\n");
    }
    spec += "}\n";
    for b in bits {
        spec += &format!(
            "seq clear_{b}() {{\n    poll d.st.b{b} == 0 limit 5 else return -110\n}}\n\
             seq set_{b}() {{\n    poll d.st.b{b} == 1 limit 5 else return -16\n}}\n\
             seq ne_{b}() {{\n    poll d.st.b{b} != 0 limit 5 else return -5\n}}\n"
        );
    }
    let r = shootdown::verify::verify("bits.inv", &spec, &Target::ALL, &support::options("all"))
        .unwrap();
    assert!(r.ok(), "{:#?}", r.failures);
    assert!(r.skipped.is_empty(), "{:#?}", r.skipped);
    assert!(
        r.passed.len() >= Target::ALL.len() * bits.len() * 3,
        "{:#?}",
        r.passed
    );
}
