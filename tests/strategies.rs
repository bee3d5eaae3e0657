//! Strategy choices, end to end in the emulator: the seeds' reference
//! cases (DESIGN.md) with the values the issues give.
#![cfg(feature = "emu")]

use crate::support;

use shootdown::isa::Target;
use shootdown::verify::interp::World;
use shootdown::verify::trace::{self, Kind, Trace};
use support::compile_spec;

fn run(spec: &str, target: Target, seq: &str, params: &[u64], instances: u64) -> Trace {
    let (c, _) = compile_spec(spec, target, "all");
    let i = c.opt.seqs.iter().position(|s| s.name == seq).unwrap();
    let mut w = World {
        params: params.to_vec(),
        ..World::default()
    };
    for &d in &c.opt.seqs[i].devices {
        w.counts.insert(d, instances);
    }
    let prog = c.opt.clone();
    trace::run(&prog, &c, i, &w, 10_000_000).unwrap()
}

fn stores(t: &Trace, reg: &str) -> Vec<u64> {
    t.events
        .iter()
        .filter(|e| e.kind == Kind::Store && e.reg.as_deref() == Some(reg))
        .map(|e| e.raw.unwrap())
        .collect()
}

fn barriers(t: &Trace) -> Vec<String> {
    t.events
        .iter()
        .filter(|e| e.kind == Kind::Barrier)
        .map(|e| e.insn.clone())
        .collect()
}

#[test]
fn npu_size_based_atsd() {
    const AP: u32 = 46;
    const PRS_PID1: u64 = (1 << 50) | (1 << 25);
    for target in [Target::Power64, Target::Power64le] {
        let spec = "examples/npu2_atsd.inv";
        // (start, size) -> AVA, AP
        for (start, size, ava, ap) in [
            (0x1000_0000u64, 0x1_0000u64, 0x1000_0000u64, 5u64),
            (0x1001_0000, 0x10_0000, 0x1000_0000, 1),
            (0x1010_0000, 0x40_0000, 0x0, 2),
        ] {
            let t = run(spec, target, "invalidate_range", &[1, start, size], 6);
            assert_eq!(
                stores(&t, "ava"),
                vec![ava; 6],
                "{target} {start:#x}+{size:#x}"
            );
            assert_eq!(stores(&t, "launch"), vec![PRS_PID1 | (ap << AP); 6]);
            assert_eq!(barriers(&t), vec!["eieio"]);
        }
        // Not inside any 1G block: the whole PID (IS), no AVA, no eieio.
        let t = run(
            spec,
            target,
            "invalidate_range",
            &[1, 0x3ff0_0000, 0x20_0000],
            6,
        );
        assert!(stores(&t, "ava").is_empty());
        assert_eq!(stores(&t, "launch"), vec![PRS_PID1 | (1 << 51); 6]);
        assert!(barriers(&t).is_empty());
        assert_eq!(t.events.iter().filter(|e| e.kind == Kind::Store).count(), 6);
    }
}

#[test]
fn tce_kill_threshold() {
    let spec = "examples/npu2_tce_kill.inv";
    for target in Target::ALL {
        let t = run(spec, target, "tce_kill", &[3, 0x8000_1000, 8, 0x1000], 1);
        let kills = stores(&t, "tce_kill");
        assert_eq!(kills.len(), 8, "{target}");
        assert!(kills.iter().all(|v| v >> 61 == 1), "KILL_ONE: {kills:x?}");
        assert_eq!(kills[7] & 0xffff_ffff, 0x8000_8000);
        let t = run(spec, target, "tce_kill", &[3, 0x8000_1000, 512, 0x1000], 1);
        // skiboot's NPU2_ATS_TCE_KILL_ALL alone: no PE (NPU2 cannot
        // kill one PE's TCEs).
        assert_eq!(
            stores(&t, "tce_kill"),
            vec![1 << 63],
            "{target}: one KILL_ALL"
        );
        assert!(
            kills.iter().all(|v| (v >> 56) & 0xf == 3),
            "KILL_ONE carries PE 3: {kills:x?}"
        );
    }
}

#[test]
fn smmu_range_and_walk() {
    let spec = "examples/arm_smmu.inv";
    for target in Target::ALL {
        // 2 MiB with a 4 KiB granule: 512 TLBIVA, one barrier before them
        // (none on x86, where UC stores are ordered), none between.
        let t = run(
            spec,
            target,
            "tlb_inv_range_s1",
            &[7, 0x20_0000, 0x20_0000, 0x1000],
            1,
        );
        let va = stores(&t, "tlbiva");
        assert_eq!(va.len(), 512, "{target}");
        assert_eq!(
            *va.last().unwrap(),
            (7 << 48) | ((0x40_0000 - 0x1000) >> 12)
        );
        let first_store = t.events.iter().position(|e| e.kind == Kind::Store).unwrap();
        let b = barriers(&t);
        assert_eq!(
            b.len(),
            usize::from(target != Target::X86_64),
            "{target}: {b:?}"
        );
        assert!(t.events[first_store..]
            .iter()
            .all(|e| e.kind != Kind::Barrier));
        // The walk flush: 16 calls of 2 MiB (512 granules each) exceed the
        // derived threshold, so each is one TLBIASID (16 in all, not 8192).
        let t = run(
            spec,
            target,
            "tlb_inv_walk_s1",
            &[7, 0x20_0000, 0x20_0000, 0x1000],
            1,
        );
        assert!(stores(&t, "tlbiva").is_empty(), "{target}");
        assert_eq!(stores(&t, "tlbiasid"), vec![7]);
        // A small walk stays per granule.
        let t = run(
            spec,
            target,
            "tlb_inv_walk_s1",
            &[7, 0x20_0000, 0x4000, 0x1000],
            1,
        );
        assert_eq!(stores(&t, "tlbiva").len(), 4);
        assert!(stores(&t, "tlbiasid").is_empty());
        // tlb_sync returns 0 once TLBSTATUS reads 0.
        let t = run(spec, target, "tlb_sync", &[], 1);
        assert_eq!(t.ret, 0);
    }
}

#[test]
fn arm64_flush_tlb_range() {
    let spec = "examples/arm64_tlb_range.inv";
    let t = run(
        spec,
        Target::Aarch64,
        "flush_tlb_range",
        &[5, 0x40_0000, 0x41_0000],
        1,
    );
    let kinds: Vec<String> = t
        .events
        .iter()
        .map(|e| match e.kind {
            Kind::Barrier => e.insn.clone(),
            _ => e.insn.split(',').next().unwrap().to_string(),
        })
        .collect();
    let mut want = vec!["dsb ishst".to_string()];
    want.extend(std::iter::repeat_n("tlbi vale1is".to_string(), 16));
    want.push("dsb ish".to_string());
    assert_eq!(kinds, want);
    let ops: Vec<u64> = t
        .events
        .iter()
        .filter(|e| e.kind == Kind::Invalidate)
        .map(|e| e.operands[0])
        .collect();
    assert_eq!(ops[0], (5 << 48) | 0x400);
    assert_eq!(ops[15], (5 << 48) | 0x40f);
    // Far past the threshold: one ASIDE1IS.
    let t = run(
        spec,
        Target::Aarch64,
        "flush_tlb_range",
        &[5, 0x40_0000, 0x4000_0000],
        1,
    );
    let inv: Vec<&str> = t
        .events
        .iter()
        .filter(|e| e.kind == Kind::Invalidate)
        .map(|e| e.insn.as_str())
        .collect();
    assert_eq!(inv.len(), 1);
    assert!(inv[0].starts_with("tlbi aside1is"));
    assert_eq!(barriers(&t), vec!["dsb ishst", "dsb ish"]);
}

#[test]
fn arm64_flush_tlb_range_with_range_ops() {
    let spec = "examples/arm64_tlb_range.inv";
    let ops = |pages: u64| -> Vec<(String, u64)> {
        let t = run(
            spec,
            Target::Aarch64,
            "flush_tlb_range_r",
            &[5, 0x40_0000, 0x40_0000 + pages * 4096],
            1,
        );
        assert_eq!(barriers(&t), vec!["dsb ishst", "dsb ish"], "{pages} pages");
        t.events
            .iter()
            .filter(|e| e.kind == Kind::Invalidate)
            .map(|e| (e.insn.split(',').next().unwrap().to_string(), e.operands[0]))
            .collect()
    };
    // 16 pages: one RVALE1IS, NUM = 7, SCALE = 0, TG = 1 (4K), ASID 5.
    assert_eq!(
        ops(16),
        vec![(
            "tlbi rvale1is".to_string(),
            (5 << 48) | (1 << 46) | (7 << 39) | 0x400
        )]
    );
    // 17 pages: one VALE1IS for the odd page, then 16 from the next page.
    let o = ops(17);
    assert_eq!(o[0], ("tlbi vale1is".to_string(), (5 << 48) | 0x400));
    assert_eq!(o[1].1 & 0x1f_ffff_ffff, 0x401);
    // Past the range operations' reach (2M pages): one ASIDE1IS.
    let o = ops(1 << 21);
    assert_eq!(o, vec![("tlbi aside1is".to_string(), 5 << 48)]);
    // Pages covered add up for an awkward count.
    let covered: u64 = ops(3000)
        .iter()
        .map(|(n, v)| {
            if n == "tlbi vale1is" {
                1
            } else {
                let (num, scale) = ((v >> 39) & 31, (v >> 44) & 3);
                (num + 1) << (5 * scale + 1)
            }
        })
        .sum();
    assert_eq!(covered, 3000);
}

#[test]
fn vtd_iotlb_flush_waits_for_ivt() {
    let spec = "examples/vtd_iotlb.inv";
    for target in [Target::X86_64, Target::Aarch64, Target::Power64le] {
        let (c, _) = compile_spec(spec, target, "all");
        let mut w = World {
            params: vec![0x1234, 0x7f00_0020_0000, 9, 1 << 54],
            ..World::default()
        };
        // IOTLB reads busy twice, then IVT clear.
        w.reads.insert((0, 1), vec![1 << 63, 1 << 63, 0]);
        let t = trace::run(&c.opt.clone(), &c, 0, &w, 1_000_000).unwrap();
        assert_eq!(t.ret, 0, "{target}");
        assert_eq!(stores(&t, "iva"), vec![0x7f00_0020_0009]);
        assert_eq!(
            stores(&t, "iotlb"),
            vec![(1 << 63) | (3 << 60) | (0x1234 << 32) | (1 << 48)]
        );
        assert_eq!(t.events.iter().filter(|e| e.kind == Kind::Load).count(), 3);
        // One barrier orders IVA and the caller's page-table stores before
        // the command write (the polls of IOTLB start nothing: a store
        // barrier is enough on AArch64, as the kernel's writeq).
        let fences = barriers(&t);
        match target {
            Target::Power64le => assert_eq!(fences, vec!["sync"]),
            Target::Aarch64 => assert_eq!(fences, vec!["dmb oshst"]),
            _ => assert!(fences.is_empty(), "{target}: {fences:?}"),
        }
    }
}
