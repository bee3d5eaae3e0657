//! Outside oracle for VT-d queued-invalidation code: QEMU's intel-iommu
//! model (qemu-system-x86_64 -M q35 -device intel-iommu) fetches and
//! executes the descriptors a subject writes to the invalidation queue in
//! RAM, driven by a bare-metal x86-64 image (tests/vtd_qemu/: multiboot
//! entry, long mode with identity-mapped 2M pages, COM1 console,
//! isa-debug-exit). scripts/vtd-qemu-test.sh builds the image with the
//! subject (the C stand-in tests/vtd_qemu/vtd_standin.c, or a `.S`
//! defining `sd_qi_flush_iotlb` and `sd_qi_flush_context`) and runs it
//! twice: the cases with QEMU's vtd trace and an execution log of the
//! subject's code (`-singlestep -d exec,nochain -dfilter`), and an invalid
//! descriptor that stops QEMU's queue (the subject must time out with
//! -110).
//!
//! Checked here, independently of the image's own verdicts: per case and
//! call, the descriptors QEMU fetched (`vtd_inv_desc`: type, raw high and
//! low quadwords), the invalidations it performed
//! (`vtd_inv_desc_iotlb_pages` domain/addr/mask, `..._iotlb_domain`,
//! `..._cc_global/_domain/_devices`), the status writes of the wait
//! descriptors (`vtd_inv_desc_wait_sw` address and data) and the tail
//! writes (`vtd_reg_write addr 0x88`, 4 bytes), against what Linux 6.1's
//! qi_flush_iotlb / qi_flush_context / qi_submit_sync and
//! iommu_flush_iotlb_psi's PSI-or-DSI decision ask for (computed here in
//! Rust from the case's arguments); no error QEMU reported on stderr
//! (reserved bits, unknown types, a bad tail); from the execution log
//! (mnemonics from GNU objdump), the instructions the subject executed per
//! case and that none of them is a fence. For the generated code: its
//! whole per-case vtd trace equals the stand-in's (the status word's
//! address normalised). Every call goes through a trampoline that checks
//! the SysV callee-saved registers. Negative controls: six broken
//! stand-ins and one broken copy of the generated code must fail, each for
//! its own reason. A missing tool is a failure
//! (scripts/install-deps.sh installs them). See docs/vtd-qemu.md.

use crate::qemu_system;

use qemu_system::{
    assert_control_fails, console_failures, exec_pc, field, generate, hex, missed_timeout,
    segments, untimed, Disassembly, Run,
};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// The console's last line when the image's own checks all passed.
const DONE: &str = "vtd-qemu: done failures=0";
/// QEMU's smallest invalidation queue (2^(QS + 8) entries, QS = 0): one
/// 4K page of 16-byte descriptors.
const RING_BYTES: u64 = 256 * 16;
const CASES: [&str; 14] = [
    "page",
    "pages256",
    "pages1000",
    "unaligned",
    "dsi_big",
    "dsi_all",
    "dsi_nopsi",
    "nodrain",
    "ih",
    "ctx_global",
    "ctx_domain",
    "ctx_device",
    "ctx_devfm",
    "wrap",
];

// ------------------------------------------------------------ running

fn run_oracle(tag: &str, subject: Option<&Path>, broken: u32) -> Run {
    qemu_system::run_oracle(
        "vtd-qemu-test.sh",
        &format!("vtd-qemu-{tag}"),
        subject,
        broken,
        disassembly,
    )
}

/// objdump -d --no-show-raw-insn lines: "  100480:\tpush   %rbx"
fn disassembly(text: &str) -> Disassembly {
    let mut m = BTreeMap::new();
    for l in text.lines() {
        let Some((addr, rest)) = l.split_once(":\t") else {
            continue;
        };
        let Ok(pc) = u64::from_str_radix(addr.trim(), 16) else {
            continue;
        };
        let mut it = rest.trim().splitn(2, char::is_whitespace);
        let mnem = it.next().unwrap_or_default().to_string();
        let ops = it.next().unwrap_or_default().trim().to_string();
        m.insert(pc, (mnem, ops));
    }
    m
}

// ------------------------------------------------------------ the trace

#[derive(Debug, Clone, PartialEq, Eq)]
enum Ev {
    Exec(u64),
    Marker(u32, u32),
    /// vtd_reg_write addr 0x88: value, size
    Tail(u64, u64),
    /// vtd_inv_desc: type name, high, low
    Desc(String, u64, u64),
    Pages {
        did: u64,
        addr: u64,
        mask: u64,
    },
    Domain(u64),
    Global,
    CcGlobal,
    CcDomain(u64),
    CcDevices {
        sid: u64,
        fm: u64,
    },
    WaitSw {
        addr: u64,
        data: u64,
    },
    /// any other vtd_* line (compared between subjects, not interpreted)
    Other(String),
}

/// The QEMU log: exec lines (accel/tcg/cpu-exec.c log_cpu_exec) and trace
/// events (hw/i386/trace-events), in the order QEMU wrote them. An event
/// line may carry a "pid@secs:" prefix (-msg timestamp=on); it is dropped.
fn parse_log(text: &str) -> Vec<Ev> {
    let mut evs = Vec::new();
    for raw in text.lines() {
        let l = untimed(raw);
        let l = l.trim_end();
        if let Some(pc) = exec_pc(l) {
            evs.push(Ev::Exec(pc));
        } else if let Some(rest) = l.strip_prefix("vtd_reg_write ") {
            // addr 0x88 size 0x4 value 0x20
            let addr = hex(field(rest, "addr "));
            let size = hex(field(rest, "size "));
            let val = hex(field(rest, "value "));
            match addr {
                0x4 if val >> 16 == 0x5d00 => {
                    evs.push(Ev::Marker(((val >> 8) & 0xff) as u32, (val & 0xff) as u32))
                }
                0x88 => evs.push(Ev::Tail(val, size)),
                _ => evs.push(Ev::Other(l.to_string())),
            }
        } else if let Some(rest) = l.strip_prefix("vtd_inv_desc invalidate desc type ") {
            // iotlb high 0x10000000 low 0x100f2
            let kind = rest.split(' ').next().unwrap().to_string();
            evs.push(Ev::Desc(
                kind,
                hex(field(rest, "high ")),
                hex(field(rest, "low ")),
            ));
        } else if let Some(rest) = l.strip_prefix("vtd_inv_desc_iotlb_pages ") {
            evs.push(Ev::Pages {
                did: hex(field(rest, "domain ")),
                addr: hex(field(rest, "addr ")),
                mask: hex(field(rest, "mask ")),
            });
        } else if let Some(rest) = l.strip_prefix("vtd_inv_desc_iotlb_domain ") {
            evs.push(Ev::Domain(hex(field(rest, "domain "))));
        } else if l.starts_with("vtd_inv_desc_iotlb_global") {
            evs.push(Ev::Global);
        } else if l.starts_with("vtd_inv_desc_cc_global") {
            evs.push(Ev::CcGlobal);
        } else if let Some(rest) = l.strip_prefix("vtd_inv_desc_cc_domain ") {
            evs.push(Ev::CcDomain(hex(field(rest, "domain "))));
        } else if let Some(rest) = l.strip_prefix("vtd_inv_desc_cc_devices ") {
            evs.push(Ev::CcDevices {
                sid: hex(field(rest, "sid ")),
                fm: hex(field(rest, "fmask ")),
            });
        } else if let Some(rest) = l.strip_prefix("vtd_inv_desc_wait_sw ") {
            evs.push(Ev::WaitSw {
                addr: hex(field(rest, "addr ")),
                data: hex(field(rest, "data ")),
            });
        } else if l.starts_with("vtd_") {
            evs.push(Ev::Other(l.to_string()));
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

// ------------------------------------------------------------ the console

#[derive(Debug, Clone)]
struct Case {
    name: String,
    id: u32,
    kind: String,
    did: u64,
    start: u64,
    end: u64,
    cap: u64,
    ih: u64,
    sid: u64,
    fm: u64,
    gran: u64,
    calls: u64,
    iqt0: u64,
    status_phys: u64,
}

fn parse_case(l: &str) -> Case {
    let name = l["case ".len()..].split(' ').next().unwrap().to_string();
    Case {
        name,
        id: hex(field(l, " id=")) as u32,
        kind: field(l, " kind=").to_string(),
        did: hex(field(l, " did=")),
        start: hex(field(l, " start=")),
        end: hex(field(l, " end=")),
        cap: hex(field(l, " cap=")),
        ih: hex(field(l, " ih=")),
        sid: hex(field(l, " sid=")),
        fm: hex(field(l, " fm=")),
        gran: hex(field(l, " gran=")),
        calls: hex(field(l, " calls=")),
        iqt0: hex(field(l, " iqt0=")),
        status_phys: hex(field(l, " status_phys=")),
    }
}

// ------------------------------------------------------------ the oracle

/// What Linux 6.1 asks the IOMMU to do for one qi_flush_iotlb call of the
/// spec's interface ([start, end], end inclusive): iommu_flush_iotlb_psi's
/// mask (ilog2 of the page count rounded up to a power of two; for a start
/// not aligned to it, the lowest bit above it that the first and last pfn
/// share), DSI without PSI or past MAMV or for everything
/// (intel_flush_iotlb_all), qi_flush_iotlb's descriptor (DR/DW from CAP).
/// The address is aligned down to the mask as 6.11's
/// calculate_psi_aligned_address does (6.1 passes pfn << 12; the bits
/// below the mask are ignored by the hardware and by QEMU). Returns the
/// descriptor (high, low) and QEMU's invalidation event.
fn expect_iotlb(did: u64, start: u64, end: u64, cap: u64, ih: u64) -> (u64, u64, Ev) {
    let psi_ok = (cap >> 39) & 1 == 1;
    let mamv = (cap >> 48) & 0x3f;
    let (dr, dw) = ((cap >> 55) & 1, (cap >> 54) & 1);
    let mut psi = None;
    if !(start == 0 && end == u64::MAX) {
        let pages = ((start & 0xfff) + (end - start + 1) + 0xfff) >> 12;
        let aligned = pages.next_power_of_two();
        let mut mask = u64::from(aligned.trailing_zeros());
        let pfn = start >> 12;
        if (aligned - 1) & pfn != 0 {
            let shared = !(pfn ^ (pfn + pages - 1)) & !(aligned - 1);
            mask = if shared != 0 {
                u64::from(shared.trailing_zeros())
            } else {
                64
            };
        }
        if psi_ok && mask <= mamv {
            psi = Some(((pfn << 12) & !((0x1000u64 << mask) - 1), mask));
        }
    }
    let gran = if psi.is_some() { 3 } else { 2 };
    let lo = (did << 16) | (dr << 7) | (dw << 6) | (gran << 4) | 2;
    match psi {
        Some((addr, mask)) => (addr | (ih << 6) | mask, lo, Ev::Pages { did, addr, mask }),
        None => (0, lo, Ev::Domain(did)),
    }
}

/// qi_flush_context's descriptor and what QEMU does with it
/// (vtd_process_context_cache_desc: a domain flush is a global one).
fn expect_ctx(c: &Case) -> (u64, Vec<Ev>) {
    let lo = (c.fm << 48) | (c.sid << 32) | (c.did << 16) | (c.gran << 4) | 1;
    let evs = match c.gran {
        1 => vec![Ev::CcGlobal],
        2 => vec![Ev::CcDomain(c.did), Ev::CcGlobal],
        3 => vec![Ev::CcDevices {
            sid: c.sid,
            fm: c.fm,
        }],
        g => panic!("gran {g}"),
    };
    (lo, evs)
}

/// qi_submit_sync's wait descriptor and QEMU's status write.
fn expect_wait(status_phys: u64) -> Vec<Ev> {
    vec![
        Ev::Desc("wait".into(), status_phys, (2 << 32) | (1 << 5) | 5),
        Ev::WaitSw {
            addr: status_phys,
            data: 2,
        },
    ]
}

/// The events of a case, call by call, as Linux would have QEMU see them.
fn expected(c: &Case) -> Vec<Ev> {
    let mut evs = Vec::new();
    let mut tail = c.iqt0;
    for i in 0..c.calls {
        tail = (tail + 32) % RING_BYTES;
        evs.push(Ev::Tail(tail, 4));
        match c.kind.as_str() {
            "iotlb" | "wrap" => {
                let (s, e) = (c.start + i * 0x1000, c.end.wrapping_add(i * 0x1000));
                let (hi, lo, inv) = expect_iotlb(c.did, s, e, c.cap, c.ih);
                evs.push(Ev::Desc("iotlb".into(), hi, lo));
                evs.push(inv);
            }
            "ctx" => {
                let (lo, inv) = expect_ctx(c);
                evs.push(Ev::Desc("context-cache".into(), 0, lo));
                evs.extend(inv);
            }
            k => panic!("kind {k}"),
        }
        evs.extend(expect_wait(c.status_phys));
    }
    evs
}

/// The events the expectation speaks about (not Exec, not Other).
fn interpreted(evs: &[Ev]) -> Vec<Ev> {
    evs.iter()
        .filter(|e| !matches!(e, Ev::Exec(_) | Ev::Other(_)))
        .cloned()
        .collect()
}

#[derive(Debug, Default)]
struct CaseReport {
    name: String,
    descs: u64,
    tails: u64,
    insns: u64,
    fences: u64,
    /// the case's vtd trace, status address normalised
    trace: Vec<String>,
}

#[derive(Debug, Default)]
struct Verdict {
    cases: Vec<CaseReport>,
    failures: Vec<String>,
}

/// x86 instructions that order memory: fences and locked read-modify-writes.
fn is_fence(mnem: &str) -> bool {
    matches!(mnem, "mfence" | "sfence" | "lfence")
        || mnem.starts_with("lock")
        || mnem.starts_with("xchg")
}

/// A trace line with the run's status address replaced (the stand-in and
/// the generated image place the status word differently).
fn normalise(e: &Ev, status_phys: u64) -> Option<String> {
    let s = match e {
        Ev::Exec(_) => return None,
        Ev::Desc(k, hi, lo) if *hi == status_phys => format!("Desc({k:?}, STATUS, {lo:#x})"),
        Ev::WaitSw { addr, data } if *addr == status_phys => format!("WaitSw(STATUS, {data:#x})"),
        e => format!("{e:x?}"),
    };
    Some(s)
}

/// Selects the events one comparison is about.
type EvFilter = fn(&Ev) -> bool;

fn check_case(run: &Run, c: &Case, seg: &[Ev], v: &mut Verdict) {
    let mut rep = CaseReport {
        name: c.name.clone(),
        ..Default::default()
    };
    let fail = |v: &mut Verdict, what: String| v.failures.push(format!("{}: {what}", c.name));
    let got = interpreted(seg);
    let want = expected(c);
    let before = v.failures.len();
    let pick =
        |evs: &[Ev], f: EvFilter| -> Vec<Ev> { evs.iter().filter(|e| f(e)).cloned().collect() };
    let checks: [(&str, EvFilter); 4] = [
        ("descriptors", |e| matches!(e, Ev::Desc(..))),
        ("invalidations", |e| {
            matches!(
                e,
                Ev::Pages { .. }
                    | Ev::Domain(_)
                    | Ev::Global
                    | Ev::CcGlobal
                    | Ev::CcDomain(_)
                    | Ev::CcDevices { .. }
            )
        }),
        ("status writes", |e| matches!(e, Ev::WaitSw { .. })),
        ("tail writes", |e| matches!(e, Ev::Tail(..))),
    ];
    for (what, f) in checks {
        let (g, w) = (pick(&got, f), pick(&want, f));
        if g != w {
            let i = g.iter().zip(&w).take_while(|(a, b)| a == b).count();
            fail(
                v,
                format!(
                    "{what} differ: {} seen, {} expected; first difference at {i}: seen {:x?}, expected {:x?}",
                    g.len(),
                    w.len(),
                    g.get(i),
                    w.get(i)
                ),
            );
        }
    }
    if got != want && v.failures.len() == before {
        fail(v, "events out of order".into());
    }
    rep.descs = got.iter().filter(|e| matches!(e, Ev::Desc(..))).count() as u64;
    rep.tails = got.iter().filter(|e| matches!(e, Ev::Tail(..))).count() as u64;
    for e in seg {
        match e {
            Ev::Exec(pc) => {
                rep.insns += 1;
                match run.dis.get(pc) {
                    Some((m, _)) if is_fence(m) => rep.fences += 1,
                    Some(_) => {}
                    None => fail(v, format!("executed {pc:#x}, not an instruction start")),
                }
            }
            Ev::Other(s)
                if !s.starts_with("vtd_inv_qi_") && !s.starts_with("vtd_inv_desc_cc_device ") =>
            {
                fail(v, format!("unexpected trace line `{s}`"))
            }
            _ => {}
        }
        if let Some(s) = normalise(e, c.status_phys) {
            rep.trace.push(s);
        }
    }
    if rep.fences != 0 {
        fail(
            v,
            format!("{} fences executed (x86-64 needs none)", rep.fences),
        );
    }
    v.cases.push(rep);
}

/// QEMU's own complaints (error_report_once on stderr): reserved bits,
/// unknown descriptor types, a bad tail, a failed status write.
fn qemu_errors(stderr: &str) -> Vec<String> {
    stderr
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| l.to_string())
        .collect()
}

fn verdict(run: &Run, execlog: bool) -> Verdict {
    let mut v = Verdict {
        failures: console_failures(run, "main", DONE),
        ..Verdict::default()
    };
    for e in qemu_errors(&run.stderr["main"]) {
        v.failures.push(format!("qemu reported: {e}"));
    }
    let main = &run.console["main"];
    let cases: Vec<Case> = main
        .lines()
        .filter(|l| l.starts_with("case "))
        .map(parse_case)
        .collect();
    let names: Vec<&str> = cases.iter().map(|c| c.name.as_str()).collect();
    if names != CASES {
        v.failures.push(format!("cases on the console: {names:?}"));
    }
    let evs = parse_log(&run.log["main"]);
    let segs = case_segments(&evs);
    for c in &cases {
        match segs.get(&c.id) {
            Some(s) => check_case(run, c, s, &mut v),
            None => v.failures.push(format!("{}: no trace segment", c.name)),
        }
    }
    if execlog {
        for c in &v.cases {
            if c.insns == 0 {
                v.failures
                    .push(format!("{}: no subject instruction executed", c.name));
            }
        }
    }
    check_timeout(run, &mut v);
    v
}

/// The timeout run: an invalid descriptor (type 0) stops QEMU's queue
/// (FSTS.IQE); the subject's qi_flush_context must return -110 while QEMU
/// fetches nothing; after the harness copied the call's wait descriptor
/// over the bad one and cleared IQE (the kernel's qi_check_fault), the
/// next call's tail write makes QEMU run the copied wait, the timed-out
/// call's two descriptors and the new call's two.
fn check_timeout(run: &Run, v: &mut Verdict) {
    v.failures.extend(console_failures(run, "timeout", DONE));
    v.failures
        .extend(missed_timeout(run, "call", "qi_flush_context"));
    let mut fail = |what: String| v.failures.push(format!("timeout: {what}"));
    let errs = qemu_errors(&run.stderr["timeout"]);
    let want_err =
        "qemu-system-x86_64: vtd_process_inv_desc: invalid inv desc: hi=0, lo=0 (unknown type)";
    if errs.iter().filter(|e| *e == want_err).count() != 1
        || errs
            .iter()
            .any(|e| e != want_err && !e.ends_with("Interrupt Mask set, irq is not generated"))
    {
        fail(format!("QEMU's errors {errs:?}, wanted `{want_err}`"));
    }
    let Some(after) = run.console["timeout"]
        .lines()
        .find(|l| l.starts_with("case after-timeout"))
        .map(parse_case)
    else {
        fail("no after-timeout case".into());
        return;
    };
    let sp = after.status_phys;
    let evs = parse_log(&run.log["timeout"]);
    let segs = case_segments(&evs);
    let descs = |id: u32| -> Vec<Ev> {
        segs.get(&id)
            .map(|s| {
                s.iter()
                    .filter(|e| matches!(e, Ev::Desc(..)))
                    .cloned()
                    .collect()
            })
            .unwrap_or_default()
    };
    for id in [0x40, 0x41, 0x42] {
        if !descs(id).is_empty() {
            fail(format!(
                "segment {id:#x}: QEMU fetched {:x?} while IQE was set",
                descs(id)
            ));
        }
    }
    let tails41 = segs
        .get(&0x41)
        .map(|s| s.iter().filter(|e| matches!(e, Ev::Tail(..))).count())
        .unwrap_or(0);
    if tails41 != 1 {
        fail(format!("the timed-out call wrote IQT {tails41} times"));
    }
    let wait = Ev::Desc("wait".into(), sp, (2 << 32) | (1 << 5) | 5);
    let (hi, lo, _) = expect_iotlb(0x32, 0x7000_0000, 0x7000_0fff, after.cap, 0);
    let want = vec![
        wait.clone(),
        Ev::Desc("context-cache".into(), 0, (0x31 << 16) | (1 << 4) | 1),
        wait.clone(),
        Ev::Desc("iotlb".into(), hi, lo),
        wait,
    ];
    if descs(0x43) != want {
        fail(format!(
            "after recovery: fetched {:x?}, wanted {want:x?}",
            descs(0x43)
        ));
    }
}

fn report(tag: &str, run: &Run, v: &Verdict) {
    eprintln!(
        "vtd-qemu {tag}: build + 2 QEMU runs {:.2}s ({})",
        run.secs,
        run.dir.display()
    );
    for c in &v.cases {
        eprintln!(
            "  {:<11} descriptors {:>4}  tail writes {:>3}  subject insns {:>6}  fences {}",
            c.name, c.descs, c.tails, c.insns, c.fences
        );
    }
    for f in &v.failures {
        eprintln!("  FAIL {f}");
    }
}

// ------------------------------------------------------------ tests

fn standin() -> &'static (Run, Verdict) {
    static S: OnceLock<(Run, Verdict)> = OnceLock::new();
    S.get_or_init(|| {
        let run = run_oracle("standin", None, 0);
        let v = verdict(&run, true);
        report("stand-in", &run, &v);
        (run, v)
    })
}

#[test]
fn standin_passes_qemu_vtd_oracle() {
    let (_, v) = standin();
    assert!(v.failures.is_empty(), "{:#?}", v.failures);
    // 140 calls of two descriptors through a 256-entry ring: IQT wraps.
    let c = v.cases.iter().find(|c| c.name == "wrap").unwrap();
    assert_eq!((c.descs, c.tails), (280, 140));
}

/// A deliberately broken stand-in must fail the oracle, for the reason
/// the breakage is about.
fn control(broken: u32, tag: &str, want: &str) {
    let run = run_oracle(tag, None, broken);
    let v = verdict(&run, false);
    report(tag, &run, &v);
    assert_control_fails(broken, tag, want, &v.failures);
}

#[test]
fn control_no_wait_descriptor_fails() {
    control(1, "ctl-nowait", "page: status writes differ");
}

#[test]
fn control_mask_too_large_fails() {
    control(2, "ctl-mask", "page: invalidations differ");
}

#[test]
fn control_tail_before_descriptor_fails() {
    control(3, "ctl-early-tail", "qemu reported");
}

#[test]
fn control_no_drain_bits_fails() {
    control(4, "ctl-nodrain", "page: descriptors differ");
}

#[test]
fn control_reserved_bit_fails() {
    control(5, "ctl-reserved", "reserved bits unzero");
}

#[test]
fn control_status_address_off_fails() {
    control(6, "ctl-status", "page: status writes differ");
}

/// The code shootdown generates from examples/vtd_qi.inv (`--prefix sd_`:
/// sd_qi_flush_iotlb, sd_qi_flush_context), generated once.
fn generated() -> &'static Path {
    static G: OnceLock<PathBuf> = OnceLock::new();
    G.get_or_init(|| generate("vtd_qi", "x86_64", "vtd-qemu-gen"))
}

/// The generated code with every `pop %r12` replaced by `add $8,%rsp`: the
/// stack stays balanced and the return values right, but r12 (which the
/// code uses) comes back clobbered. The harness calls every subject
/// through sd_call_checked (start.S), which must notice.
#[test]
fn control_generated_clobbering_r12_fails() {
    let text = std::fs::read_to_string(generated()).unwrap();
    let n = text.matches("\tpop %r12\n").count();
    assert!(n > 0, "no `pop %r12` in the generated code");
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("vtd-qemu-gen-r12");
    std::fs::create_dir_all(&dir).unwrap();
    let mutant = dir.join("vtd_qi_r12.S");
    std::fs::write(&mutant, text.replace("\tpop %r12\n", "\tadd $8,%rsp\n")).unwrap();
    let run = run_oracle("ctl-r12", Some(&mutant), 0);
    let v = verdict(&run, true);
    report("ctl-r12", &run, &v);
    assert!(
        v.failures.iter().any(|f| f.contains("FAIL:callee-saved")),
        "r12 clobbered ({n} epilogues), but not caught: {:#?}",
        v.failures
    );
}

/// The generated code against the oracle. With VTD_QEMU_SUBJECT=file.S the
/// oracle runs that file instead.
#[test]
fn generated_qi_code_passes_qemu_vtd_oracle() {
    let subject = match std::env::var_os("VTD_QEMU_SUBJECT") {
        Some(s) => PathBuf::from(s),
        None => generated().to_path_buf(),
    };
    let run = run_oracle("generated", Some(&subject), 0);
    let v = verdict(&run, true);
    report(&format!("generated ({})", subject.display()), &run, &v);
    assert!(v.failures.is_empty(), "{:#?}", v.failures);
    // What QEMU saw, case by case, is what it saw from the stand-in.
    let (_, sv) = standin();
    assert!(
        sv.failures.is_empty(),
        "the stand-in fails: {:#?}",
        sv.failures
    );
    for (g, s) in v.cases.iter().zip(&sv.cases) {
        assert_eq!(g.name, s.name);
        if g.trace != s.trace {
            let i = g
                .trace
                .iter()
                .zip(&s.trace)
                .take_while(|(a, b)| a == b)
                .count();
            panic!(
                "{}: QEMU's trace differs from the stand-in's at line {i} of {}/{}: generated {:?}, stand-in {:?}",
                g.name,
                g.trace.len(),
                s.trace.len(),
                g.trace.get(i),
                s.trace.get(i)
            );
        }
    }
}
