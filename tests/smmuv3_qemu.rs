//! Outside oracle for SMMUv3 command-queue code: QEMU's SMMUv3 model
//! (qemu-system-aarch64 -M virt,iommu=smmuv3) decodes and executes the
//! commands a subject writes to a ring in RAM, driven by a bare-metal image
//! (tests/smmuv3_qemu/: start-up at EL1 with the MMU off, a PL011 console,
//! semihosting exit). scripts/smmuv3-qemu-test.sh builds the image with the
//! subject (the C stand-in tests/smmuv3_qemu/smmu_standin.c, or a `.S`
//! defining `sd_tlb_inv_range`, `sd_tlb_inv_asid`, `sd_sync`) and runs it
//! twice: the cases with QEMU's smmuv3 trace and an execution log of the
//! subject's code (`-singlestep -d exec,nochain -dfilter`), and a command
//! error that stops QEMU's queue (the subject must time out with -110).
//!
//! Checked here, independently of the image's own verdicts: per case, the
//! sequence of commands QEMU decoded (`smmuv3_cmdq_opcode`), the
//! invalidations it performed (`smmuv3_s1_range_inval`: asid, addr,
//! tg/num_pages, ttl, leaf; `smmuv3_cmdq_tlbi_nh_asid`) against the
//! requested range, no `smmuv3_cmdq_consume_error` outside the injected
//! one; from the execution log (mnemonics from GNU objdump), the dmb/dsb
//! executed in the subject per case, bounded by one per batch of 64
//! entries plus the sync and full-ring waits, and an outer-shareable store
//! barrier between the last store and every doorbell (CMDQ_PROD write).
//! Subjects: the stand-in (exact barrier counts asserted too) and the code
//! shootdown generates from examples/smmuv3_cmdq.inv. Negative controls:
//! five broken stand-ins must fail, each for its own reason. A missing tool
//! is a failure (scripts/install-deps.sh installs them). Seven builds of
//! the image, two QEMU runs each, about a second a build. See
//! docs/smmuv3-qemu.md.

use crate::qemu_system;
use crate::support::objdump_insn;

use qemu_system::{
    assert_control_fails, console_failures, exec_pc, field, generate, hex, missed_timeout,
    segments, untimed, Disassembly, Run,
};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

const ROOT: &str = env!("CARGO_MANIFEST_DIR");
const CMDQ_BATCH_ENTRIES: u64 = 64;
/// Range invalidation (generated code only): 1 page, 2M of 4K pages (one
/// command), 1000 pages (two: SCALE 3 NUM 29, SCALE 8 NUM 3), 33 pages of
/// 64K, 1G of 2M blocks walked at 4K.
const RIL_CASES: [&str; 5] = ["ril1", "ril2m", "ril1000", "ril64k", "rilblk"];
const CASES: [&str; 9] = [
    "page",
    "pages256",
    "pages1000",
    "unaligned",
    "block2m",
    "asid",
    "sync",
    "wrap",
    "smallring",
];
/// dmb/dsb executed by the C stand-in per case (one `dmb oshst` per
/// publish; see smmu_standin.c): 256 pages on a 256-entry ring publish at
/// 64, 128, 192, at the full-ring wait before the CMD_SYNC and with it;
/// 1000 pages publish every 64 (15) and at the end; 100 pages on a
/// 16-entry ring publish at each of 6 full-ring waits and at the end.
const STANDIN_BARRIERS: [(&str, u64); 9] = [
    ("page", 1),
    ("pages256", 5),
    ("pages1000", 16),
    ("unaligned", 1),
    ("block2m", 1),
    ("asid", 1),
    ("sync", 1),
    ("wrap", 1),
    ("smallring", 7),
];

/// The generated code's doorbells per case: Linux 6.1's. Where they
/// differ from the stand-in's (pages256: 256 TLBIs and a CMD_SYNC in a
/// 256-entry ring), Linux issues batches as the 65th, 129th and 193rd
/// command arrive and the last 64 with the CMD_SYNC (4 doorbells); the
/// stand-in, which writes into the ring as it goes, also publishes when
/// its cached CONS says the ring is full (5). Issue 41 (SMMUv3 batch
/// boundaries); tests/smmuv3_batches.rs has 64/65/128/256.
const GENERATED_BARRIERS: [(&str, u64); 9] = [
    ("page", 1),
    ("pages256", 4),
    ("pages1000", 16),
    ("unaligned", 1),
    ("block2m", 1),
    ("asid", 1),
    ("sync", 1),
    ("wrap", 1),
    ("smallring", 7),
];

/// The console's last line when the image's own checks all passed.
const DONE: &str = "smmuv3-qemu: done failures=0";

// ------------------------------------------------------------ running

fn run_oracle(tag: &str, subject: Option<&Path>, broken: u32) -> Run {
    qemu_system::run_oracle(
        "smmuv3-qemu-test.sh",
        &format!("smmuv3-qemu-{tag}"),
        subject,
        broken,
        disassembly,
    )
}

/// objdump -d lines: "    40081048:\td50332bf \tdmb\toshst"
fn disassembly(text: &str) -> Disassembly {
    let mut m = BTreeMap::new();
    for (pc, mnem, ops) in text.lines().filter_map(objdump_insn) {
        let ops = ops.map(|s| s.trim().to_string()).unwrap_or_default();
        m.insert(pc, (mnem.trim().to_string(), ops));
    }
    m
}

// ------------------------------------------------------------ the trace

#[derive(Debug, Clone, PartialEq, Eq)]
struct Inval {
    vmid: u64,
    asid: i64,
    addr: u64,
    tg: u64,
    num_pages: u64,
    ttl: u64,
    leaf: u64,
}

#[derive(Debug, Clone)]
enum Ev {
    Exec(u64),
    Marker(u32, u32),
    Doorbell(u64, u64),
    Opcode(String),
    Range(Inval),
    NhAsid(u64),
    NhAll,
    ConsumeError(String),
    Unhandled(String),
    GerrorToggle(String),
}

/// The QEMU log: exec lines (accel/tcg/cpu-exec.c log_cpu_exec) and trace
/// events (hw/arm/trace-events), in the order QEMU wrote them. An event
/// line may carry a "pid@secs:" prefix (-msg timestamp=on); it is dropped.
fn parse_log(text: &str) -> Vec<Ev> {
    let mut evs = Vec::new();
    for raw in text.lines() {
        let l = untimed(raw);
        if let Some(pc) = exec_pc(l) {
            evs.push(Ev::Exec(pc));
        } else if let Some(rest) = l.strip_prefix("smmuv3_write_mmio ") {
            // addr: 0x98 val:0x2 size: 0x4(0)
            let addr = hex(field(rest, "addr: "));
            let val = hex(field(rest, "val:"));
            let size = hex(field(rest, "size: ").split('(').next().unwrap());
            match addr {
                0xe00 if val >> 16 == 0x5d00 => {
                    evs.push(Ev::Marker(((val >> 8) & 0xff) as u32, (val & 0xff) as u32))
                }
                0x98 => evs.push(Ev::Doorbell(val, size)),
                _ => {}
            }
        } else if let Some(rest) = l.strip_prefix("smmuv3_cmdq_opcode <--- ") {
            evs.push(Ev::Opcode(rest.trim().to_string()));
        } else if let Some(rest) = l.strip_prefix("smmuv3_s1_range_inval ") {
            evs.push(Ev::Range(Inval {
                vmid: field(rest, "vmid=").parse().unwrap(),
                asid: field(rest, "asid=").parse().unwrap(),
                addr: hex(field(rest, "addr=")),
                tg: field(rest, "tg=").parse().unwrap(),
                num_pages: hex(field(rest, "num_pages=")),
                ttl: field(rest, "ttl=").parse().unwrap(),
                leaf: field(rest, "leaf=").parse().unwrap(),
            }));
        } else if let Some(rest) = l.strip_prefix("smmuv3_cmdq_tlbi_nh_asid ") {
            evs.push(Ev::NhAsid(field(rest, "asid=").parse().unwrap()));
        } else if l.trim_end() == "smmuv3_cmdq_tlbi_nh" {
            evs.push(Ev::NhAll);
        } else if let Some(rest) = l.strip_prefix("smmuv3_cmdq_consume_error ") {
            evs.push(Ev::ConsumeError(rest.trim().to_string()));
        } else if let Some(rest) = l.strip_prefix("smmuv3_unhandled_cmd ") {
            evs.push(Ev::Unhandled(rest.trim().to_string()));
        } else if let Some(rest) = l.strip_prefix("smmuv3_write_gerror ") {
            evs.push(Ev::GerrorToggle(rest.trim().to_string()));
        }
    }
    evs
}

/// The events of each case, by case id.
fn case_segments(evs: &[Ev]) -> BTreeMap<u32, Vec<Ev>> {
    segments(evs, |e| match e {
        Ev::Marker(id, p) => Some((*id, *p)),
        _ => None,
    })
}

impl Ev {
    fn opcode(&self) -> Option<String> {
        match self {
            Ev::Opcode(o) => Some(o.clone()),
            _ => None,
        }
    }

    fn range(&self) -> Option<Inval> {
        match self {
            Ev::Range(r) => Some(r.clone()),
            _ => None,
        }
    }

    fn nh_asid(&self) -> Option<u64> {
        match self {
            Ev::NhAsid(a) => Some(*a),
            _ => None,
        }
    }
}

// ------------------------------------------------------------ the console

#[derive(Debug, Clone)]
struct Case {
    name: String,
    id: u32,
    kind: String,
    log2n: u64,
    asid: u64,
    iova: u64,
    size: u64,
    granule: u64,
    /// Range invalidation: log2 of the leaf page size.
    tg: u64,
}

fn parse_case(l: &str) -> Case {
    let name = l["case ".len()..].split(' ').next().unwrap().to_string();
    Case {
        name,
        id: hex(field(l, " id=")) as u32,
        kind: field(l, " kind=").to_string(),
        log2n: hex(field(l, " log2n=")),
        asid: hex(field(l, " asid=")),
        iova: hex(field(l, " iova=")),
        size: hex(field(l, " size=")),
        granule: hex(field(l, " granule=")),
        tg: hex(field(l, " tg=")),
    }
}

// ------------------------------------------------------------ the oracle

#[derive(Debug, Default)]
struct CaseReport {
    name: String,
    commands: u64,
    doorbells: u64,
    insns: u64,
    barriers: BTreeMap<String, u64>,
    store_barriers: u64,
    bound: u64,
}

#[derive(Debug, Default)]
struct Verdict {
    cases: Vec<CaseReport>,
    failures: Vec<String>,
}

/// What the kernel's __arm_smmu_tlb_inv_range() (no range invalidation)
/// and arm_smmu_cmdq_build_cmd() ask QEMU to do for a case, as QEMU's
/// smmuv3_s1_range_inval() reports it (tg = 0: one page, ttl 0).
fn expected(c: &Case) -> (Vec<String>, Vec<Inval>, Vec<u64>) {
    let mut ops = Vec::new();
    let mut ranges = Vec::new();
    let mut asids = Vec::new();
    match c.kind.as_str() {
        "range" => {
            let mut a = c.iova;
            while a < c.iova + c.size {
                ops.push("SMMU_CMD_TLBI_NH_VA".to_string());
                ranges.push(Inval {
                    vmid: 0,
                    asid: (c.asid & 0xffff) as i64,
                    addr: a & !0xfff,
                    tg: 0,
                    num_pages: 1,
                    ttl: 0,
                    leaf: 1,
                });
                a += c.granule;
            }
        }
        // The kernel's range commands (NUM x 2^SCALE pages each, TTL from
        // the granule's level), as QEMU splits each into aligned
        // power-of-two runs (smmuv3_s1_range_inval, dma_aligned_pow2_mask).
        "ril" => {
            let tg = c.tg;
            let mut rem = u64::from(63 - c.granule.leading_zeros()) - 3;
            let mut ttl = 4;
            while rem >= tg - 3 {
                rem -= tg - 3;
                ttl -= 1;
            }
            let (mut pages, mut addr) = (c.size >> tg, c.iova);
            while pages != 0 {
                let scale = pages.trailing_zeros();
                let n = ((pages >> scale) & 31) << scale;
                ops.push("SMMU_CMD_TLBI_NH_VA".to_string());
                let mut a = addr & !0xfff;
                let end = a + (n << tg) - 1;
                while a != end.wrapping_add(1) {
                    let mask = pow2_mask(a, end);
                    ranges.push(Inval {
                        vmid: 0,
                        asid: (c.asid & 0xffff) as i64,
                        addr: a,
                        tg: (tg - 10) >> 1,
                        num_pages: (mask + 1) >> tg,
                        ttl,
                        leaf: 1,
                    });
                    a = a.wrapping_add(mask.wrapping_add(1));
                }
                addr += n << tg;
                pages -= n;
            }
        }
        "asid" => {
            ops.push("SMMU_CMD_TLBI_NH_ASID".to_string());
            asids.push(c.asid & 0xffff);
        }
        "sync" => {}
        k => panic!("kind {k}"),
    }
    ops.push("SMMU_CMD_SYNC".to_string());
    (ops, ranges, asids)
}

/// QEMU's dma_aligned_pow2_mask(start, end, 64) (softmmu/dma-helpers.c):
/// the largest aligned power-of-two block at `start` within [start, end].
fn pow2_mask(start: u64, end: u64) -> u64 {
    let size = end - start;
    let align = if start == 0 {
        u64::MAX
    } else {
        (start & start.wrapping_neg()) - 1
    };
    if align <= size {
        align
    } else if size == u64::MAX {
        u64::MAX
    } else {
        (1u64 << (63 - (size + 1).leading_zeros())) - 1
    }
}

fn is_barrier(m: &str) -> bool {
    m == "dmb" || m == "dsb"
}
/// Orders earlier stores before later ones (everything but the *ld kinds).
fn orders_stores(ops: &str) -> bool {
    !ops.ends_with("ld")
}
/// ... for an observer outside the inner-shareable domain (the SMMU):
/// dma_wmb() is dmb oshst.
fn orders_stores_for_device(ops: &str) -> bool {
    matches!(ops, "oshst" | "osh" | "st" | "sy")
}

/// `WHAT differ: ...` where `got` (the events QEMU reported as `verb`)
/// is not `want`, with the first difference.
fn difference<T: std::fmt::Debug + PartialEq>(
    what: &str,
    verb: &str,
    got: &[T],
    want: &[T],
) -> Option<String> {
    let first = got.iter().zip(want).position(|(a, b)| a != b);
    (got != want).then(|| {
        format!(
            "{what} differ: {} {verb}, {} wanted, first difference at {first:?}: {:?} vs {:?}",
            got.len(),
            want.len(),
            first.map(|i| &got[i]),
            first.map(|i| &want[i])
        )
    })
}

fn check_case(run: &Run, c: &Case, evs: &[Ev], v: &mut Verdict) {
    let fail = |v: &mut Verdict, what: String| v.failures.push(format!("{}: {what}", c.name));
    let (want_ops, want_ranges, want_asids) = expected(c);
    let ops: Vec<String> = evs.iter().filter_map(Ev::opcode).collect();
    let ranges: Vec<Inval> = evs.iter().filter_map(Ev::range).collect();
    let asids: Vec<u64> = evs.iter().filter_map(Ev::nh_asid).collect();
    if let Some(d) = difference("decoded commands", "decoded", &ops, &want_ops) {
        fail(v, d);
    }
    if let Some(d) = difference("range invalidations", "done", &ranges, &want_ranges) {
        fail(v, d);
    }
    if asids != want_asids {
        fail(
            v,
            format!("ASID invalidations {asids:?}, wanted {want_asids:?}"),
        );
    }
    for e in evs {
        match e {
            Ev::ConsumeError(s) => fail(v, format!("smmuv3_cmdq_consume_error {s}")),
            Ev::Unhandled(s) => fail(v, format!("QEMU ignored a command: {s}")),
            Ev::NhAll => fail(v, "unexpected TLBI_NH_ALL".into()),
            Ev::GerrorToggle(s) => fail(v, format!("GERROR raised: {s}")),
            Ev::Doorbell(val, size) if *size != 4 => {
                fail(v, format!("CMDQ_PROD written with {size} bytes ({val:#x})"))
            }
            _ => {}
        }
    }

    // Barriers, from the execution log of the subject's code.
    let mut rep = CaseReport {
        name: c.name.clone(),
        commands: want_ops.len() as u64,
        ..Default::default()
    };
    let mut last_dev_barrier: Option<usize> = None;
    let mut last_exec: Option<(usize, u64)> = None;
    for (i, e) in evs.iter().enumerate() {
        match e {
            Ev::Exec(pc) => {
                let Some((m, ops)) = run.dis.get(pc) else {
                    fail(v, format!("executed {pc:#x} is not subject code"));
                    continue;
                };
                rep.insns += 1;
                if is_barrier(m) {
                    *rep.barriers.entry(format!("{m} {ops}")).or_default() += 1;
                    if orders_stores(ops) {
                        rep.store_barriers += 1;
                    }
                    if orders_stores_for_device(ops) {
                        last_dev_barrier = Some(i);
                    }
                }
                last_exec = Some((i, *pc));
            }
            Ev::Doorbell(val, _) => {
                rep.doorbells += 1;
                // The doorbell is the last instruction executed before
                // QEMU's write trace; the store before it must be ordered.
                let Some((di, dpc)) = last_exec else {
                    fail(v, format!("doorbell {val:#x} outside the subject's code"));
                    continue;
                };
                let (dm, _) = &run.dis[&dpc];
                let before = evs[..di]
                    .iter()
                    .enumerate()
                    .rev()
                    .find_map(|(j, e)| match e {
                        Ev::Exec(pc) if run.dis[pc].0.starts_with("st") => Some(j),
                        _ => None,
                    });
                let ordered = dm.starts_with("stlr")
                    || match (before, last_dev_barrier) {
                        (None, _) => true,
                        (Some(s), Some(b)) => b > s && b < di,
                        (Some(_), None) => false,
                    };
                if !ordered {
                    fail(
                        v,
                        format!(
                            "doorbell {val:#x} ({dm} at {dpc:#x}) without an outer-shareable store barrier after the last store"
                        ),
                    );
                }
            }
            _ => {}
        }
    }
    let tlbis = rep.commands - 1;
    let entries = rep.commands;
    rep.bound = tlbis.div_ceil(CMDQ_BATCH_ENTRIES) + 1 + entries.div_ceil(1 << c.log2n);
    if rep.store_barriers > rep.bound {
        fail(
            v,
            format!(
                "{} store barriers executed for {} commands, more than {} (one per batch of {CMDQ_BATCH_ENTRIES}, the sync, one per full-ring wait)",
                rep.store_barriers, entries, rep.bound
            ),
        );
    }
    if rep.doorbells == 0 {
        fail(v, "no CMDQ_PROD write".into());
    }
    if rep.insns == 0 {
        fail(v, "no subject instruction executed".into());
    }
    v.cases.push(rep);
}

fn verdict(run: &Run) -> Verdict {
    let mut v = Verdict {
        failures: console_failures(run, "main", DONE),
        ..Verdict::default()
    };
    let main = &run.console["main"];
    let cases: Vec<Case> = main
        .lines()
        .filter(|l| l.starts_with("case "))
        .map(parse_case)
        .collect();
    let names: Vec<&str> = cases.iter().map(|c| c.name.as_str()).collect();
    // The range-invalidation cases run only for a subject that has
    // `sd_tlb_inv_range_ril`.
    let ril = names.len() > CASES.len();
    let want: Vec<&str> = CASES
        .iter()
        .chain(if ril { RIL_CASES.iter() } else { [].iter() })
        .copied()
        .collect();
    assert_eq!(names, want, "cases on the console:\n{main}");
    let evs = parse_log(&run.log["main"]);
    for e in &evs {
        if let Ev::ConsumeError(s) = e {
            v.failures.push(format!("smmuv3_cmdq_consume_error {s}"));
        }
    }
    let segs = case_segments(&evs);
    for c in &cases {
        match segs.get(&c.id) {
            Some(s) => check_case(run, c, s, &mut v),
            None => v.failures.push(format!("{}: no trace segment", c.name)),
        }
    }
    check_timeout(run, &mut v);
    v
}

/// The timeout run: an illegal command (opcode 0) stops QEMU's queue, the
/// subject's sd_sync must return -110 without QEMU decoding anything; after
/// the harness replaced the bad entry by a CMD_SYNC and acknowledged
/// GERROR, both syncs run; then a fresh queue works.
fn check_timeout(run: &Run, v: &mut Verdict) {
    v.failures.extend(console_failures(run, "timeout", DONE));
    v.failures.extend(missed_timeout(run, "sync", "sd_sync"));
    let mut fail = |what: String| v.failures.push(format!("timeout: {what}"));
    let evs = parse_log(&run.log["timeout"]);
    let segs = case_segments(&evs);
    let ops = |id: u32| -> Vec<String> {
        segs.get(&id)
            .map(|s| s.iter().filter_map(Ev::opcode).collect())
            .unwrap_or_default()
    };
    let errors: Vec<(Option<u32>, String)> = {
        let mut cur = None;
        let mut out = Vec::new();
        for e in &evs {
            match e {
                Ev::Marker(id, 1) => cur = Some(*id),
                Ev::Marker(_, _) => cur = None,
                Ev::ConsumeError(s) => out.push((cur, s.clone())),
                _ => {}
            }
        }
        out
    };
    let want_err = vec![(
        Some(0x40),
        "Error on INVALID command execution: 1".to_string(),
    )];
    if errors != want_err {
        fail(format!("consume errors {errors:?}, wanted {want_err:?}"));
    }
    if ops(0x40) != ["INVALID"] {
        fail(format!("injected: decoded {:?}", ops(0x40)));
    }
    if !ops(0x41).is_empty() {
        fail(format!(
            "QEMU decoded {:?} while CMDQ_ERR was active",
            ops(0x41)
        ));
    }
    let db41 = segs
        .get(&0x41)
        .map(|s| s.iter().filter(|e| matches!(e, Ev::Doorbell(..))).count())
        .unwrap_or(0);
    if db41 == 0 {
        fail("sd_sync wrote no CMDQ_PROD".into());
    }
    if ops(0x42) != ["SMMU_CMD_SYNC", "SMMU_CMD_SYNC"] {
        fail(format!("recovery: decoded {:?}", ops(0x42)));
    }
    if ops(0x43) != ["SMMU_CMD_TLBI_NH_VA", "SMMU_CMD_SYNC"] {
        fail(format!("after recovery: decoded {:?}", ops(0x43)));
    }
}

fn report(tag: &str, run: &Run, v: &Verdict) {
    eprintln!(
        "smmuv3-qemu {tag}: build + 2 QEMU runs {:.2}s ({})",
        run.secs,
        run.dir.display()
    );
    for c in &v.cases {
        eprintln!(
            "  {:<10} commands {:>4}  doorbells {:>3}  subject insns {:>6}  store barriers {:>3} (bound {:>2})  {:?}",
            c.name, c.commands, c.doorbells, c.insns, c.store_barriers, c.bound, c.barriers
        );
    }
    for f in &v.failures {
        eprintln!("  FAIL {f}");
    }
}

// ------------------------------------------------------------ tests

#[test]
fn standin_passes_qemu_smmuv3_oracle() {
    let run = run_oracle("standin", None, 0);
    let v = verdict(&run);
    report("stand-in", &run, &v);
    assert!(v.failures.is_empty(), "{:#?}", v.failures);
    for (name, n) in STANDIN_BARRIERS {
        let c = v.cases.iter().find(|c| c.name == name).unwrap();
        assert_eq!(c.store_barriers, n, "{name}: store barriers");
        assert_eq!(
            c.barriers.get("dmb oshst").copied().unwrap_or(0),
            n,
            "{name}: {:?}",
            c.barriers
        );
        assert_eq!(c.barriers.len(), 1, "{name}: {:?}", c.barriers);
    }
    // 1000 pages take 1001 entries through a 256-entry ring: PROD wraps.
    let c = v.cases.iter().find(|c| c.name == "pages1000").unwrap();
    assert_eq!(c.commands, 1001);
    assert_eq!(c.doorbells, 16);
}

/// A deliberately broken stand-in must fail the oracle, for the reason
/// the breakage is about.
fn control(broken: u32, tag: &str, want: &str) {
    let run = run_oracle(tag, None, broken);
    let v = verdict(&run);
    report(tag, &run, &v);
    assert_control_fails(broken, tag, want, &v.failures);
}

#[test]
fn control_wrong_opcode_fails() {
    control(1, "ctl-opcode", "decoded commands differ");
}

#[test]
fn control_addr_off_by_one_page_fails() {
    control(2, "ctl-addr", "range invalidations differ");
}

#[test]
fn control_missing_barrier_fails() {
    control(
        3,
        "ctl-nobarrier",
        "without an outer-shareable store barrier",
    );
}

#[test]
fn control_barrier_per_entry_fails() {
    control(4, "ctl-perentry", "store barriers executed");
}

#[test]
fn control_short_range_fails() {
    control(5, "ctl-short", "range invalidations differ");
}

/// The code shootdown generates from examples/smmuv3_cmdq.inv
/// (`--prefix sd_`: sd_tlb_inv_range, sd_tlb_inv_asid, sd_sync). With
/// SMMUV3_QEMU_SUBJECT=file.S the oracle runs that file instead.
#[test]
fn generated_cmdq_code_passes_qemu_smmuv3_oracle() {
    let subject = match std::env::var_os("SMMUV3_QEMU_SUBJECT") {
        Some(s) => PathBuf::from(s),
        None => {
            let spec = Path::new(ROOT).join("examples/smmuv3_cmdq.inv");
            assert!(
                spec.exists(),
                "{} is missing (it comes with the spec language's command-queue support)",
                spec.display()
            );
            generate("smmuv3_cmdq", "aarch64", "smmuv3-qemu-gen")
        }
    };
    let run = run_oracle("generated", Some(&subject), 0);
    let v = verdict(&run);
    report(&format!("generated ({})", subject.display()), &run, &v);
    assert!(v.failures.is_empty(), "{:#?}", v.failures);
    // Range invalidation ran (the stand-in has none).
    for name in RIL_CASES {
        assert!(
            v.cases.iter().any(|c| c.name == name),
            "case {name} did not run"
        );
    }
    // The kernel's batching: one `dmb oshst` per doorbell, in every
    // case; as many doorbells as Linux 6.1 rings (GENERATED_BARRIERS).
    for (name, n) in GENERATED_BARRIERS {
        let c = v.cases.iter().find(|c| c.name == name).unwrap();
        assert_eq!(
            c.store_barriers, n,
            "{name}: store barriers {:?}",
            c.barriers
        );
        assert_eq!(
            c.store_barriers, c.doorbells,
            "{name}: one barrier per doorbell"
        );
    }
}
