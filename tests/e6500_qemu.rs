//! Oracle: QEMU's e6500 TLB model (`qemu-system-ppc64 -M ppce500 -cpu
//! e6500`, bare metal, tests/e6500_qemu/) runs the code shootdown generates
//! from examples/e6500_tlb_miss.inv: `tlbil_va_e500` (the e500 `__tlbil_va`
//! by search) and `tlb_miss_e6500` (the TLB work of Linux's
//! `tlb_miss_common_e6500`). tests/e6500_qemu/tlb_miss.c maps, reads and
//! searches TLB entries around each call and checks with `tlbre`, `tlbsx`
//! and loads through the MMU what the calls did to QEMU's TLB; run.sh
//! builds it with the harness and the generated `.S` (the cross gcc) and
//! boots it. The verdict here does not rest on the image's own PASS alone:
//! every check must have run (the exact `ok` count and the key lines), so
//! a program that stops checking early fails. A negative control feeds two
//! broken copies of the generated code and requires the checks about the
//! breakage to fail. A missing tool (powerpc64-linux-gnu-gcc,
//! qemu-system-ppc64) is a failure (scripts/install-deps.sh installs them).
//! About half a second a run. What QEMU does not model (MAS5/MAS8, IND on
//! a tlbsx miss, ISIZE/SAS in tlbilx): tests/e6500_qemu/README.md.

use crate::support;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

const ROOT: &str = env!("CARGO_MANIFEST_DIR");
const SPEC: &str = "examples/e6500_tlb_miss.inv";

/// `ok` lines tlb_miss.c prints when every check ran.
const OKS: usize = 97;
/// `info` lines: MAS1[IND] of each entry tlb_miss_e6500 wrote (QEMU does
/// not load MAS4[INDD] on a tlbsx miss; the architecture does).
const INFOS: usize = 7;
/// Data TLB misses the probes take on purpose (each prints an EXC line).
const DTLB_PROBES: usize = 3;

/// Lines (prefixes) that must be there: one or more per property.
const MUST: [&str; 31] = [
    // tlbil_va_e500
    "ok tlbil_va TLB1: tlbsx SPID 5 misses",
    "ok tlbil_va TLB1: tlbre TLB1[2] has V=0, the rest kept",
    "ok tlbil_va TLB1 after: TID 5 page: load 40000000 takes a data TLB miss",
    "ok tlbil_va TLB1 after: TID 5 next page survives",
    "ok tlbil_va TLB1 after: TID 6 same page survives",
    "ok tlbil_va TLB0: tlbsx SPID 5 misses",
    "ok tlbil_va TLB0 after: TID 6 (way 2) survives",
    "ok tlbil_va unmapped, EE 0: MSR unchanged",
    "ok tlbil_va unmapped/other TID: every other entry survives",
    "ok tlbil_va unmapped, EE 1: MSR[EE] back on",
    "ok tlbil_va mapped, EE 1: MSR[EE] back on",
    // tlb_miss_e6500
    "ok miss first: returns 0",
    "ok miss first: tcd = {0, 6, 8, 3}",
    "ok miss first: TLB1[5] valid, TSIZE 2M, no IPROT",
    "ok miss first: TLB1[5] MAS2 = ea & ~0x1fffff (c000000010200000)",
    "ok miss first: TLB1[5] MAS7_MAS3 = pte_page | 4 (123456004)",
    "ok miss first: TLB1[5] TID 0 TS 0",
    "ok miss first: tlbsx SPID 7 misses the victim's EA",
    "ok miss found: returns 1",
    "ok miss found: TLB1[6] (invalid) untouched",
    "ok miss victim: TLB1[6] invalidated by tlbilx, nothing else changed",
    "ok miss victim: direct TLB0 entry same EPN and TID survives",
    "ok miss victim: MAS6 restored after the tlbilx",
    "ok miss user: esel_next 7 wraps to esel_first 3",
    "ok miss user: TLB1[7] TID 2a TS 0",
    "ok miss user AS 1: TLB1[3] TID 2a TS 1",
    "ok miss invalid victim: TLB1[13] (the stale EPN and TID) survives",
    "ok miss nested: returns 2",
    "ok miss cpu 255: returns -22",
    "ok miss contended: waited in tlb_miss_e6500 until the interrupt released the lock",
    "ok miss contended: then took it",
];

/// `shootdown gen SPEC --target power64 --out DIR/gen`: the `.S` (the
/// `.h` next to it gives tlb_miss.c the prototypes).
fn generate(dir: &Path) -> PathBuf {
    let gen = dir.join("gen");
    let out = support::shootdown(&[
        "gen",
        SPEC,
        "--target",
        "power64",
        "--out",
        gen.to_str().unwrap(),
    ]);
    assert!(
        out.status.success(),
        "shootdown gen {SPEC}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    for f in ["e6500_tlb_miss.power64.S", "e6500_tlb_miss.h"] {
        assert!(
            gen.join(f).is_file(),
            "gen wrote no {f} in {}",
            gen.display()
        );
    }
    gen.join("e6500_tlb_miss.power64.S")
}

struct Run {
    success: bool,
    /// run.sh's stdout and stderr (the UART, qemu.log's summary, errors).
    output: String,
    uart: String,
    secs: f64,
}

/// `run.sh tests/e6500_qemu OUT tlb_miss.c SUBJECT`.
fn run(out: &Path, subject: &Path) -> Run {
    let h = Path::new(ROOT).join("tests/e6500_qemu");
    let t = Instant::now();
    let o = Command::new("sh")
        .arg(h.join("run.sh"))
        .arg(&h)
        .arg(out)
        .arg(h.join("tlb_miss.c"))
        .arg(subject)
        .output()
        .unwrap_or_else(|e| panic!("cannot run tests/e6500_qemu/run.sh: {e}"));
    let secs = t.elapsed().as_secs_f64();
    Run {
        success: o.status.success(),
        output: format!(
            "{}{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        ),
        uart: std::fs::read_to_string(out.join("uart.log")).unwrap_or_default(),
        secs,
    }
}

fn count(text: &str, prefix: &str) -> usize {
    text.lines().filter(|l| l.starts_with(prefix)).count()
}

#[test]
fn generated_tlb_code_passes_qemu_e6500() {
    let dir = support::scratch("e6500-qemu");
    let subject = generate(&dir);
    let r = run(&dir.join("run"), &subject);
    eprintln!(
        "e6500 qemu: {:.2} s (build and QEMU), {} ok",
        r.secs,
        count(&r.uart, "ok ")
    );
    assert!(
        r.success,
        "run.sh failed (a missing tool? run scripts/install-deps.sh):\n{}",
        r.output
    );
    let fails: Vec<&str> = r.uart.lines().filter(|l| l.contains("FAIL")).collect();
    assert!(fails.is_empty(), "{}\n{}", fails.join("\n"), r.uart);
    assert_eq!(
        r.uart.lines().rfind(|l| !l.is_empty()),
        Some("PASS"),
        "{}",
        r.uart
    );
    for must in MUST {
        assert!(
            r.uart.lines().any(|l| l.starts_with(must)),
            "missing `{must}` in:\n{}",
            r.uart
        );
    }
    assert_eq!(count(&r.uart, "ok "), OKS, "ok lines in:\n{}", r.uart);
    assert_eq!(count(&r.uart, "info "), INFOS, "info lines in:\n{}", r.uart);
    assert_eq!(
        count(&r.uart, "EXC 13 (data TLB miss)"),
        DTLB_PROBES,
        "interrupts in:\n{}",
        r.uart
    );
    assert_eq!(count(&r.uart, "EXC "), DTLB_PROBES, "{}", r.uart);
}

/// The generated text with the one line of function `func` that starts
/// with `insn` (after the tab) replaced by a nop.
fn nop_out(asm: &str, func: &str, insn: &str) -> String {
    let start = asm
        .find(&format!("\n.{func}:\n"))
        .unwrap_or_else(|| panic!("no .{func} in the generated code"));
    let end = start
        + asm[start..]
            .find(&format!("\t.size {func},"))
            .unwrap_or_else(|| panic!("no .size {func}"));
    let body = &asm[start..end];
    let hits: Vec<usize> = body
        .match_indices(&format!("\n\t{insn}"))
        .map(|(i, _)| i)
        .collect();
    assert_eq!(hits.len(), 1, "`{insn}` lines in {func}:\n{body}");
    let at = start + hits[0] + 1;
    let eol = at + asm[at..].find('\n').unwrap();
    format!("{}\tnop{}", &asm[..at], &asm[eol..])
}

/// The harness can fail: a broken copy of the generated code must fail
/// run.sh, on the checks about the breakage (a missing tool, a crash or a
/// hang is not that).
#[test]
fn broken_generated_code_fails_qemu_e6500() {
    let dir = support::scratch("e6500-qemu-broken");
    let asm = std::fs::read_to_string(generate(&dir)).unwrap();
    let cases = [
        // __tlbil_va that never writes the entry back: it stays valid.
        (
            "tlbil-no-tlbwe",
            nop_out(&asm, "tlbil_va_e500", "tlbwe"),
            vec![
                ") tlbil_va TLB1: tlbsx SPID 5 misses",
                ") tlbil_va TLB1: tlbre TLB1[2] has V=0",
                ") tlbil_va TLB0: tlbsx SPID 5 misses",
            ],
        ),
        // The A-008139 workaround without its tlbilx: the valid victim
        // is not invalidated when tlbsx then finds ea.
        (
            "miss-no-tlbilx",
            nop_out(&asm, "tlb_miss_e6500", "tlbilx"),
            vec![") miss victim: TLB1[6] invalidated by tlbilx"],
        ),
    ];
    // the generated header next to the broken copies, for tlb_miss.c's
    // #include (run.sh adds each file's directory to the include path)
    std::fs::copy(
        dir.join("gen/e6500_tlb_miss.h"),
        dir.join("e6500_tlb_miss.h"),
    )
    .unwrap();
    for (tag, text, wants) in cases {
        let s = dir.join(format!("{tag}.S"));
        std::fs::write(&s, text).unwrap();
        let r = run(&dir.join(tag), &s);
        eprintln!("e6500 qemu, {tag}: {:.2} s", r.secs);
        assert!(!r.success, "{tag}: run.sh passed:\n{}", r.output);
        assert!(
            r.uart.starts_with("e6500 harness:") && !r.output.contains("status 124"),
            "{tag}: the harness did not run to the end (a missing tool? run scripts/install-deps.sh):\n{}",
            r.output
        );
        for want in wants {
            assert!(
                r.uart
                    .lines()
                    .any(|l| l.starts_with("FAIL (line ") && l.contains(want)),
                "{tag}: no failed check `{want}` in:\n{}",
                r.uart
            );
        }
        assert!(
            r.uart
                .lines()
                .any(|l| l.starts_with("FAIL ") && l.contains("check(s) failed")),
            "{tag}: no final FAIL line:\n{}",
            r.uart
        );
    }
}

/// The harness itself against the kernel's own code: demo.c runs Linux
/// 6.1's e500 `__tlbil_va` (tlbil_va.S, transcribed from tlb_low.S) and
/// `tlbilx 3` on QEMU's e6500 and checks that each removes the entry it
/// names and nothing else, and that `tlbre` returns what `tlbwe` wrote.
/// What the generated code is checked with is thereby shown to see the
/// kernel's sequence work.
#[test]
fn the_harness_sees_the_kernels_own_tlbil_va_work() {
    let dir = support::scratch("e6500-qemu-demo");
    let h = Path::new(ROOT).join("tests/e6500_qemu");
    let o = Command::new("sh")
        .arg(h.join("run.sh"))
        .arg(&h)
        .arg(dir.join("run"))
        .output()
        .unwrap_or_else(|e| panic!("cannot run tests/e6500_qemu/run.sh: {e}"));
    let uart = std::fs::read_to_string(dir.join("run/uart.log")).unwrap_or_default();
    assert!(
        o.status.success(),
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(!uart.lines().any(|l| l.contains("FAIL")), "{uart}");
    for must in [
        "ok after test_tlbil_va: tlbsx misses",
        "ok after test_tlbil_va: load 40000000 takes a data TLB miss",
        "ok tlbre TLB1[7] returns what tlbwe wrote",
    ] {
        assert!(
            uart.lines().any(|l| l.starts_with(must)),
            "missing `{must}` in:\n{uart}"
        );
    }
    assert!(count(&uart, "ok ") >= 30, "{uart}");
}
