//! VT-d queued invalidation (examples/vtd_qi.inv) and the AMD IOMMU command
//! buffer (examples/amd_iommu.inv) natively on x86-64, against a fake
//! IOMMU: a consumer thread (tests/queues_x86/consumer.h) that watches the
//! tail register in plain memory, takes each new entry, checks it word for
//! word against the command a C transcription of the kernel's own encoder
//! builds for the same arguments (qi_flush_iotlb / qi_flush_context /
//! qi_submit_sync's wait descriptor; build_inv_iommu_pages /
//! build_inv_address / build_completion_wait), moves the head register and
//! performs the completion store (status word, semaphore) after a scripted
//! delay. Cases: one page, 2M, ranges that fall back to DSI / all pages,
//! unaligned ranges, ring wrap, a full ring the producer must wait on, 100
//! calls on a ring of 8, a slow IOMMU, and two timeouts (nothing consumed:
//! the status poll runs out; the ring stays full: the wait for space runs
//! out), each returning -110. Negative control: the same harness with the
//! oracle's DID (domain id) off by one must fail. Both pass lists (`all`
//! and the naive `none`) are run; neither may place a fence (the kernel
//! writes the tail with writel() after memcpy(), no wmb(): x86 keeps
//! stores in order).

use crate::support;

use shootdown::isa::Target;
use std::path::PathBuf;
use std::process::Command;
use support::{asm_text, compile_spec, header_text, run, scratch};

const CONSUMER: &str = include_str!("queues_x86/consumer.h");

struct Example {
    spec: &'static str,
    stem: &'static str,
    harness: &'static str,
    /// `ok` lines of a passing run.
    oks: usize,
}

const VTD: Example = Example {
    spec: "examples/vtd_qi.inv",
    stem: "vtd_qi",
    harness: include_str!("queues_x86/vtd_qi.c"),
    oks: 13 * 4 + 3 + 5 + 1 + 3 + 2,
};

const AMD: Example = Example {
    spec: "examples/amd_iommu.inv",
    stem: "amd_iommu",
    harness: include_str!("queues_x86/amd_iommu.c"),
    oks: 10 * 4 + 7 * 3 + 1 + 5 + 1 + 2 + 2,
};

/// Build the harness with the generated `.S` and header; `defines` are
/// extra `-D` flags.
fn build(ex: &Example, passes: &str, defines: &[&str], tag: &str) -> PathBuf {
    let (c, opts) = compile_spec(ex.spec, Target::X86_64, passes);
    let dir = scratch(tag);
    std::fs::write(
        dir.join(format!("{}.h", ex.stem)),
        header_text(ex.spec, &opts),
    )
    .unwrap();
    std::fs::write(dir.join("consumer.h"), CONSUMER).unwrap();
    std::fs::write(dir.join("gen.S"), asm_text(&c, &opts)).unwrap();
    std::fs::write(dir.join("harness.c"), ex.harness).unwrap();
    let exe = dir.join("harness");
    run(Command::new("gcc")
        .args(["-std=c11", "-O2", "-Wall", "-Wextra", "-Werror", "-pthread"])
        .args(defines)
        .arg("-I")
        .arg(&dir)
        .arg(dir.join("harness.c"))
        .arg(dir.join("gen.S"))
        .arg("-o")
        .arg(&exe));
    exe
}

fn run_cases(ex: &Example, passes: &str) {
    let exe = build(ex, passes, &[], &format!("qx-{}-{passes}", ex.stem));
    let t = std::time::Instant::now();
    let out = run(&mut Command::new(&exe));
    println!(
        "{} ({passes}): {:.2} s\n{out}",
        ex.stem,
        t.elapsed().as_secs_f64()
    );
    assert!(
        !out.contains("FAIL") && out.contains("PASSED"),
        "{} {passes}:\n{out}",
        ex.stem
    );
    let oks = out.lines().filter(|l| l.starts_with("ok ")).count();
    assert_eq!(oks, ex.oks, "{} {passes}: {oks} checks:\n{out}", ex.stem);
}

/// With the oracle broken in one field the consumer must reject the
/// command (and the call must then time out: a wrong wait stores nothing).
fn negative(ex: &Example) {
    let exe = build(ex, "all", &["-DQX_BREAK"], &format!("qx-{}-neg", ex.stem));
    let out = Command::new(&exe).arg("neg").output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        !out.status.success(),
        "{}: broken oracle passed:\n{text}",
        ex.stem
    );
    assert!(
        text.contains("the kernel's is") && text.contains("FAIL"),
        "{}: broken oracle failed for another reason:\n{text}",
        ex.stem
    );
    // Only the first command is wrong; the completion wait behind it is
    // the kernel's, so the IOMMU stores and the call succeeds.
    assert_eq!(
        text.matches("the kernel's is").count(),
        1,
        "{}:\n{text}",
        ex.stem
    );
}

#[test]
fn vtd_qi_against_consumer() {
    run_cases(&VTD, "all");
    run_cases(&VTD, "none");
}

#[test]
fn amd_iommu_against_consumer() {
    run_cases(&AMD, "all");
    run_cases(&AMD, "none");
}

#[test]
fn negative_controls() {
    negative(&VTD);
    negative(&AMD);
}

/// x86-64 keeps stores (to write-back and uncached memory alike) in
/// order: `require stores before` the tail costs no fence, as the kernel's
/// memcpy() + writel() has none.
#[test]
fn no_fence() {
    for ex in [&VTD, &AMD] {
        for passes in ["all", "none"] {
            let (c, _) = compile_spec(ex.spec, Target::X86_64, passes);
            for s in shootdown::emit::stats::collect(&c) {
                assert!(
                    s.barriers.is_empty(),
                    "{} {passes}: {:?}",
                    s.name,
                    s.barriers
                );
            }
        }
    }
}
