//! `shootdown trace` against qemu-user. For every example, every target of
//! its `target` line and every sequence (the worlds `verify` uses: 0/1/3
//! instances, two parameter sets, polls ready on the third read; polls
//! that never get ready on a copy of the spec with poll limits lowered to
//! 4), the generated `.S` runs under qemu-user (natively on x86-64) inside
//! tests/harness/store_log.c, which logs every device access and trapped
//! invalidate; the same case runs through the trace API (what `shootdown
//! trace --json` prints). Both must make the same accesses in the same
//! order: kind, device, instance, register, width, value, instruction,
//! and return the same value with the same final normal memory. Barriers
//! are not data accesses and are not compared (docs/trace-oracle.md).
//! Each example runs as generated and as the naive lowering. Sequences
//! that drive a command queue are left out: store_log.c has no queue
//! consumer (nothing moves the consumer register or writes a completion
//! word), so it cannot follow `trace`'s simulated one; tests/queues_x86.rs
//! and tests/smmuv3_qemu.rs run them against consumers of their own.
#![cfg(feature = "emu")]

use crate::store_log;
use crate::support;

use shootdown::verify::worlds;
use store_log::cases::{lower_poll_limits, world, Claim, Extra};
use store_log::claims::{
    smmu_2m_range, smmu_sync_idle, tce_512_pages, tce_8_pages, tlb_16_pages, SMMU_ASID, TCE_DMA,
    TCE_PE, TLB_ASID, TLB_START,
};
use store_log::log::{first_divergence, from_harness};
use store_log::{run_cases, Case, Outcome};

#[derive(Default)]
struct Tally {
    cases: usize,
    accesses: usize,
    invalidates: usize,
    /// Pointer parameters whose final memory was compared.
    memories: usize,
    barriers: usize,
    failures: Vec<String>,
}

impl Tally {
    fn add(&mut self, outcomes: Vec<Outcome>, claims: &[Option<Claim>]) {
        for (o, claim) in outcomes.into_iter().zip(claims) {
            self.cases += 1;
            let observed = match o.observed {
                Ok(r) => r,
                Err(e) => {
                    self.failures.push(format!("{}: {e}", o.name));
                    continue;
                }
            };
            if let Some(d) = first_divergence(&o.expected, &observed) {
                self.failures.push(format!("{}: {d}", o.name));
                continue;
            }
            if let Some(Err(e)) = claim.map(|c| c(&observed)) {
                self.failures.push(format!("{}: claim: {e}", o.name));
            }
            self.accesses += observed.accesses.len();
            self.invalidates += observed
                .accesses
                .iter()
                .filter(|a| a.kind == "invalidate")
                .count();
            self.memories += observed.memory.len();
            self.barriers += o.barriers;
        }
    }
}

/// Every example is compared as generated (`--passes all`) and as the
/// naive lowering (`--passes none`, other code for the same spec); the
/// claims are about the generated code.
const PASSES: [&str; 2] = ["all", "none"];

fn check_example(stem: &str, extras: &[Extra]) {
    let path = format!("examples/{stem}.inv");
    let src = std::fs::read_to_string(&path).unwrap();
    let prog = shootdown::load(&path, &src).unwrap();
    let low = shootdown::load(&path, &lower_poll_limits(&src)).unwrap();
    let mut tally = Tally::default();
    // Sequences that take a queue's ring (see the module comment).
    let queued = |p: &shootdown::ir::Program, i: usize| {
        p.queues
            .iter()
            .any(|q| p.seqs[i].params.contains(&format!("{}_ring", q.name)))
    };
    for i in (0..prog.seqs.len()).filter(|&i| queued(&prog, i)) {
        eprintln!(
            "{stem}: {} drives a command queue: left to tests/queues_x86.rs",
            prog.seqs[i].name
        );
    }
    for target in shootdown::output::default_targets(&prog) {
        for passes in PASSES {
            let opts = support::options(passes);
            let what = format!("{stem} {target} --passes {passes}");
            let mut cases = Vec::new();
            let mut claims = Vec::new();
            for (i, s) in prog.seqs.iter().enumerate() {
                if queued(&prog, i) {
                    continue;
                }
                for (wname, mut w) in worlds(&prog, i) {
                    if wname.contains("never ready") {
                        continue;
                    }
                    w.big_endian = target.big_endian();
                    cases.push(Case {
                        seq: i,
                        name: format!("{what} {} ({wname})", s.name),
                        world: w,
                    });
                    claims.push(None);
                }
            }
            for x in extras {
                let i = prog.seqs.iter().position(|s| s.name == x.seq).unwrap();
                let mut w = world(&prog, i, x);
                w.big_endian = target.big_endian();
                cases.push(Case {
                    seq: i,
                    name: format!("{what} {} ({})", x.seq, x.what),
                    world: w,
                });
                claims.push(x.claim.filter(|_| passes == "all"));
            }
            let c = shootdown::compile(&prog, target, &opts).unwrap();
            let tag = format!("storelog-{stem}-{target}-{passes}");
            tally.add(run_cases(&prog, stem, &c, &opts, &cases, &tag), &claims);

            let cases: Vec<Case> = (0..low.seqs.len())
                .filter(|&i| !queued(&low, i))
                .flat_map(|i| {
                    worlds(&low, i)
                        .into_iter()
                        .filter(|(n, _)| n.contains("never ready"))
                        .map(move |(n, w)| (i, n, w))
                })
                .map(|(i, n, mut w)| {
                    w.big_endian = target.big_endian();
                    Case {
                        seq: i,
                        name: format!("{what} {} ({n}, poll limits 4)", low.seqs[i].name),
                        world: w,
                    }
                })
                .collect();
            if !cases.is_empty() {
                let c = shootdown::compile(&low, target, &opts).unwrap();
                let claims = vec![None; cases.len()];
                let tag = format!("storelog-{stem}-{target}-{passes}-limit4");
                tally.add(run_cases(&low, stem, &c, &opts, &cases, &tag), &claims);
            }
        }
    }
    eprintln!(
        "{stem}: {} cases, {} accesses compared ({} invalidates), {} final memories compared, {} barriers not compared",
        tally.cases, tally.accesses, tally.invalidates, tally.memories, tally.barriers
    );
    assert!(
        tally.failures.is_empty(),
        "{stem}: {} of {} cases disagree:\n{}",
        tally.failures.len(),
        tally.cases,
        tally.failures.join("\n")
    );
    assert!(
        tally.cases > 0 && tally.accesses + tally.memories > 0,
        "{stem}: nothing compared"
    );
}

// ------------------------------------------------------------------ tests

const PS_64K: u64 = 0x1_0000;

#[test]
fn npu2_atsd() {
    let e = |what, params| Extra {
        instances: 3,
        ..Extra::new("invalidate_range", what, params)
    };
    check_example(
        "npu2_atsd",
        &[
            e(
                "one 64K page",
                &[("pid", 5), ("start", 0x1000_0000), ("size", PS_64K)],
            ),
            e(
                "64K across a 64K boundary: 2M",
                &[("pid", 5), ("start", 0x1000_8000), ("size", PS_64K)],
            ),
            e(
                "1G block",
                &[("pid", 5), ("start", 0x4000_0000), ("size", 0x4000_0000)],
            ),
            e(
                "across a 1G boundary: all",
                &[("pid", 5), ("start", 0x7fff_0000), ("size", 0x2_0000)],
            ),
        ],
    );
}

#[test]
fn npu2_tce_kill() {
    let tce = |what, params, claim| Extra {
        claim: Some(claim),
        ..Extra::new("tce_kill", what, params)
    };
    check_example(
        "npu2_tce_kill",
        &[
            tce(
                "8 pages of 4K",
                &[
                    ("pe", TCE_PE),
                    ("dma_addr", TCE_DMA),
                    ("npages", 8),
                    ("tce_size", 0x1000),
                ],
                tce_8_pages,
            ),
            tce(
                "512 pages of 4K",
                &[
                    ("pe", TCE_PE),
                    ("dma_addr", TCE_DMA),
                    ("npages", 512),
                    ("tce_size", 0x1000),
                ],
                tce_512_pages,
            ),
        ],
    );
}

#[test]
fn arm_smmu() {
    let walk =
        |what, pages: &'static [(&'static str, u64)]| Extra::new("tlb_inv_walk_s1", what, pages);
    check_example(
        "arm_smmu",
        &[
            Extra {
                claim: Some(smmu_2m_range),
                ..Extra::new(
                    "tlb_inv_range_s1",
                    "2 MiB at 2 MiB, 4K granule",
                    &[
                        ("asid", SMMU_ASID),
                        ("iova", 0x20_0000),
                        ("size", 0x20_0000),
                        ("granule", 0x1000),
                    ],
                )
            },
            Extra {
                reads: &[("cb", "tlbstatus", &[0])],
                claim: Some(smmu_sync_idle),
                ..Extra::new("tlb_sync", "TLBSTATUS reads 0", &[])
            },
            walk(
                "8 granules: TLBIVA each",
                &[
                    ("asid", SMMU_ASID),
                    ("iova", 0x40_0000),
                    ("size", 0x8000),
                    ("granule", 0x1000),
                ],
            ),
            walk(
                "32M of 4K granules: TLBIASID",
                &[
                    ("asid", SMMU_ASID),
                    ("iova", 0x40_0000),
                    ("size", 0x200_0000),
                    ("granule", 0x1000),
                ],
            ),
        ],
    );
}

const fn user_pages(n: u64) -> [(&'static str, u64); 3] {
    [
        ("asid", TLB_ASID),
        ("start", TLB_START),
        ("end", TLB_START + n * 0x1000),
    ]
}

#[test]
fn arm64_tlb_range() {
    const P16: [(&str, u64); 3] = user_pages(16);
    const P600: [(&str, u64); 3] = user_pages(600);
    const P37: [(&str, u64); 3] = user_pages(37);
    const P4099: [(&str, u64); 3] = user_pages(4099);
    const K5: [(&str, u64); 2] = [
        ("start", 0xffff_8000_1000_0000),
        ("end", 0xffff_8000_1000_5000),
    ];
    check_example(
        "arm64_tlb_range",
        &[
            Extra {
                claim: Some(tlb_16_pages),
                ..Extra::new("flush_tlb_range", "16 pages", &P16)
            },
            Extra::new("flush_tlb_range", "600 pages: past the threshold", &P600),
            Extra::new(
                "flush_tlb_range_r",
                "37 pages: one page, then range ops",
                &P37,
            ),
            Extra::new("flush_tlb_range_r", "4099 pages", &P4099),
            Extra::new("flush_tlb_kernel_range", "5 kernel pages", &K5),
            Extra::new("flush_tlb_range_nl", "600 pages: past the threshold", &P600),
            Extra::new("flush_tlb_range_r_nl", "37 pages", &P37),
        ],
    );
}

/// Linux riscv's local range flush: per page up to the derived thresholds
/// (64 pages with sfence.vma, 119 with Svinval), the whole ASID past them.
/// qemu-riscv64 raises SIGILL for sfence.vma and sinval.vma in user mode:
/// the harness logs their operands and skips them.
#[test]
fn riscv_tlb() {
    const fn range(pages: u64, svinval: u64) -> [(&'static str, u64); 4] {
        [
            ("asid", 0x2a),
            ("start", 0x3f_8000_0000),
            ("size", pages * 0x1000),
            ("features", svinval),
        ]
    }
    const P16: [(&str, u64); 4] = range(16, 0);
    const P16S: [(&str, u64); 4] = range(16, 1);
    const P100: [(&str, u64); 4] = range(100, 0);
    const P100S: [(&str, u64); 4] = range(100, 1);
    const P600S: [(&str, u64); 4] = range(600, 1);
    check_example(
        "riscv_tlb",
        &[
            Extra::new("flush_tlb_range", "16 pages", &P16),
            Extra::new("flush_tlb_range", "16 pages, Svinval", &P16S),
            Extra::new("flush_tlb_range", "100 pages: the whole ASID", &P100),
            Extra::new("flush_tlb_range", "100 pages, Svinval: per page", &P100S),
            Extra::new("flush_tlb_range", "600 pages, Svinval", &P600S),
        ],
    );
}

#[test]
fn vtd_iotlb() {
    check_example("vtd_iotlb", &[]);
}

#[test]
fn amd_iommu() {
    check_example("amd_iommu", &[]);
}

#[test]
fn arm_smmu_v3() {
    check_example("arm_smmu_v3", &[]);
}

/// Book III-E: the harness models MAS6 and MSR[EE] (tlbilx/tlbivax are
/// logged with EA and MAS6, and must read a MAS6 written with interrupts
/// masked); kernel-shaped operands besides the generic worlds.
#[test]
fn book3e_tlb() {
    const VA: &[(&str, u64)] = &[
        ("address", 0x1000_3000),
        ("pid", 0x2a5),
        ("tsize", 2),
        ("ind", 0),
    ];
    const VA_IND: &[(&str, u64)] = &[
        ("address", 0xc000_0000_0123_4000),
        ("pid", 0xffff_ffff),
        ("tsize", 0x1f),
        ("ind", 3),
    ];
    check_example(
        "book3e_tlb",
        &[
            Extra::new("tlbil_va", "4K page of pid 0x2a5", VA),
            Extra::new("tlbil_va", "indirect, every pid bit", VA_IND),
            Extra::new("tlbivax_bcast", "4K page of pid 0x2a5", VA),
            Extra::new("tlbivax_bcast", "indirect, every pid bit", VA_IND),
            Extra::new("tlbil_pid", "pid 0x2a5", &[("pid", 0x2a5)]),
        ],
    );
}

#[test]
fn e6500_tcd_lock() {
    // The generic worlds start with every lock free; here it is already
    // held by this cpu (5 + 1), and esel_next reaches esel_max (struct
    // tlb_core_data: lock, esel_next, esel_max, esel_first).
    let held = |seq, what, params| Extra {
        memory: &[("lock", &[6, 0, 0, 0])],
        ..Extra::new(seq, what, params)
    };
    check_example(
        "e6500_tcd_lock",
        &[
            held("tcd_lock", "held by this cpu", &[("cpu", 5)]),
            held("tcd_unlock", "nested holder", &[("token", 1)]),
            held("tcd_unlock", "owner", &[("token", 0)]),
            Extra {
                memory: &[("tcd", &[0, 3, 4, 1])],
                ..Extra::new(
                    "tcd_next_esel",
                    "esel_next 3 reaches esel_max 4: esel_first 1",
                    &[("cpu", 1)],
                )
            },
            Extra {
                memory: &[("tcd", &[0, 1, 4, 1])],
                ..Extra::new("tcd_next_esel", "esel_next 1 advances to 2", &[("cpu", 1)])
            },
        ],
    );
}

/// The comparison must see a changed log: take a real qemu log (natively
/// run x86-64 code, 4 TLBIVA stores) and perturb it.
#[test]
fn perturbed_logs_are_caught() {
    let path = "examples/arm_smmu.inv";
    let (c, opts) = support::compile_spec(path, shootdown::Target::X86_64, "all");
    let prog = shootdown::load(path, &std::fs::read_to_string(path).unwrap()).unwrap();
    let seq = prog
        .seqs
        .iter()
        .position(|s| s.name == "tlb_inv_range_s1")
        .unwrap();
    let x = Extra::new(
        "tlb_inv_range_s1",
        "",
        &[
            ("asid", 7),
            ("iova", 0x10_0000),
            ("size", 0x4000),
            ("granule", 0x1000),
        ],
    );
    let case = Case {
        seq,
        name: "perturb".into(),
        world: world(&prog, seq, &x),
    };
    let o = run_cases(&prog, "arm_smmu", &c, &opts, &[case], "storelog-perturb").remove(0);
    let parse = |lines: &[String]| {
        let l: Vec<&str> = lines.iter().map(String::as_str).collect();
        from_harness(&prog, &c, seq, &l).unwrap()
    };
    assert_eq!(parse(&o.raw), o.expected, "the unperturbed log agrees");
    let stores: Vec<usize> = (0..o.raw.len())
        .filter(|&i| o.raw[i].starts_with("store"))
        .collect();
    assert_eq!(stores.len(), 4, "{:#?}", o.raw);
    let field = |l: &str, k: usize| l.split(' ').nth(k).unwrap().to_string();
    let with_field = |l: &str, k: usize, v: &str| {
        let mut f: Vec<String> = l.split(' ').map(String::from).collect();
        f[k] = v.to_string();
        f.join(" ")
    };

    let mut swapped = o.raw.clone();
    let (a, b) = (field(&o.raw[stores[1]], 5), field(&o.raw[stores[2]], 5));
    swapped[stores[1]] = with_field(&o.raw[stores[1]], 5, &b);
    swapped[stores[2]] = with_field(&o.raw[stores[2]], 5, &a);
    let mut dropped = o.raw.clone();
    dropped.remove(stores[2]);
    let mut narrow = o.raw.clone();
    narrow[stores[0]] = with_field(&o.raw[stores[0]], 4, "4");
    let mut other_instance = o.raw.clone();
    other_instance[stores[3]] = with_field(&o.raw[stores[3]], 2, "1");
    let mut ret = o.raw.clone();
    *ret.iter_mut().find(|l| l.starts_with("ret")).unwrap() = "ret -110".into();

    for (what, log, at) in [
        ("two values swapped", swapped, Some(1)),
        ("a store dropped", dropped, Some(2)),
        ("a 4-byte store", narrow, Some(0)),
        ("another instance", other_instance, Some(3)),
        ("another return value", ret, None),
    ] {
        let d = first_divergence(&o.expected, &parse(&log))
            .unwrap_or_else(|| panic!("{what}: not detected"));
        eprintln!("{what}:\n{d}");
        match at {
            Some(i) => assert!(
                d.starts_with(&format!("first divergence at access {i} ")),
                "{what}: {d}"
            ),
            None => assert!(d.contains("return: trace 0 qemu -110"), "{what}: {d}"),
        }
    }
}

/// End to end: qemu running the naive lowering (`--passes none`: ava,
/// eieio, launch per NPU) must disagree with `trace` of the optimized code
/// (all AVAs, one eieio, all LAUNCHes) at the second NPU's AVA store.
#[test]
fn other_code_is_caught() {
    let path = "examples/npu2_atsd.inv";
    let prog = shootdown::load(path, &std::fs::read_to_string(path).unwrap()).unwrap();
    let t = shootdown::Target::Power64le;
    let (naive, opts) = support::compile_spec(path, t, "none");
    let (optimized, _) = support::compile_spec(path, t, "all");
    let (_, mut w) = worlds(&prog, 0)
        .into_iter()
        .find(|(n, _)| n.starts_with("3 instances"))
        .unwrap();
    w.big_endian = t.big_endian();
    let case = Case {
        seq: 0,
        name: "naive".into(),
        world: w.clone(),
    };
    let (observed, _) =
        store_log::observe(&prog, "npu2_atsd", &naive, &opts, &[case], "storelog-naive").remove(0);
    let case = Case {
        seq: 0,
        name: "optimized".into(),
        world: w,
    };
    let (expected, _) = store_log::expect(&prog, &optimized, &case);
    let d = first_divergence(&expected, &observed.unwrap()).expect("naive code not told apart");
    assert!(
        d.starts_with("first divergence at access 1 ") && d.contains("npu[1].ava"),
        "{d}"
    );
}
