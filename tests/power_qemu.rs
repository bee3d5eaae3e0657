//! Oracle: qemu-user runs the generated POWER code, linked with a C
//! harness (tests/harness/npu2_atsd.c), for power64 (BE, ELFv1) and
//! power64le (ELFv2), optimized and `--passes none`. Then qemu's own
//! execution log (`-d in_asm,exec,nochain`, restricted with `-dfilter` to
//! the function's code) gives dynamic instruction counts; mnemonics come
//! from GNU objdump on the linked executable, so neither side uses our
//! encoder or our classification. A missing tool is a failure.

use crate::support;

use shootdown::Target;
use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;
use support::*;

const SPEC: &str = "examples/npu2_atsd.inv";
const HARNESS: &str = include_str!("harness/npu2_atsd.c");
const BARRIERS: [&str; 8] = [
    "eieio", "mbar", "sync", "hwsync", "lwsync", "ptesync", "isync", "msync",
];

fn build(target: Target, passes: &str, tag: &str) -> std::path::PathBuf {
    let (c, opts) = compile_spec(SPEC, target, passes);
    let asm = asm_text(&c, &opts);
    let hdr = header_text(SPEC, &opts);
    build_harness(target, &asm, &hdr, "npu2_atsd.h", HARNESS, tag)
}

// ---------------------------------------------------------------- harness

fn harness(target: Target, passes: &str) {
    let (c, opts) = compile_spec(SPEC, target, passes);
    let asm = asm_text(&c, &opts);
    let hdr = header_text(SPEC, &opts);
    let tag = format!("qemu-harness-{target}-{passes}");
    // run_harness panics (with the output) on a nonzero exit status.
    let out = run_harness(target, &asm, &hdr, "npu2_atsd.h", HARNESS, &tag);
    let fails: Vec<&str> = out.lines().filter(|l| l.starts_with("FAIL")).collect();
    assert!(fails.is_empty(), "{target} {passes}:\n{}", fails.join("\n"));
    let oks = out.lines().filter(|l| l.starts_with("ok ")).count();
    for must in [
        "ok va(n=0,pid=0x1,va=0x10010000) npu0 untouched",
        "ok va(n=1,pid=0x1,va=0x10010000) npu0 launch",
        "ok va(n=1,pid=0x1,va=0x10010000) npu1 untouched",
        "ok va(n=6,pid=0x1,va=0x10010000) npu5 launch",
        "ok va(n=6,pid=0x12345,va=0x10010000) npu5 launch",
        "ok va(n=6,pid=0x12345,va=0x10010000) expected launch: header macros == hand constant",
        "ok pid(n=6,pid=0x1) npu5 ava",
        "ok pid(n=2,pid=0x7fff) npu1 launch",
        "ok pid(n=2,pid=0x7fff) npu3 untouched",
        "ok guard control: polling npu4 faults",
        "ok va-timeout npus 4,5 not polled after npu3 timed out",
        "ok va-timeout returns -110 (-ETIMEDOUT)",
        "ok pid-timeout npus 4,5 not polled after npu3 timed out",
        "ok pid-timeout returns -110 (-ETIMEDOUT)",
        "PASSED: 0 failure(s)",
    ] {
        assert!(
            out.lines().any(|l| l == must),
            "{target} {passes}: missing `{must}` in:\n{out}"
        );
    }
    assert!(
        oks >= 240,
        "{target} {passes}: only {oks} checks ran:\n{out}"
    );
    eprintln!("{target} --passes {passes}: {oks} harness checks ok");
}

#[test]
fn qemu_harness_power64_all() {
    harness(Target::Power64, "all");
}
#[test]
fn qemu_harness_power64_none() {
    harness(Target::Power64, "none");
}
#[test]
fn qemu_harness_power64le_all() {
    harness(Target::Power64le, "all");
}
#[test]
fn qemu_harness_power64le_none() {
    harness(Target::Power64le, "none");
}

// ------------------------------------------------------- dynamic counts

/// `[lo, hi)` of the code of `symbol` in the linked executable. ELFv2:
/// the symbol itself. ELFv1 (power64 BE): the symbol is the `.opd`
/// descriptor whose first doubleword is the code address.
fn code_range(target: Target, exe: &Path, symbol: &str) -> (u64, u64) {
    let nm = run(Command::new(tool(target, "nm")).arg("-S").arg(exe));
    let (value, size) = nm
        .lines()
        .find_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            (f.len() == 4 && f[3] == symbol).then(|| {
                (
                    u64::from_str_radix(f[0], 16).unwrap(),
                    u64::from_str_radix(f[1], 16).unwrap(),
                )
            })
        })
        .unwrap_or_else(|| panic!("{symbol} not in nm -S output:\n{nm}"));
    let entry = if target == Target::Power64 {
        let dump = run(Command::new(tool(target, "objdump"))
            .args(["-s", "-j", ".opd"])
            .arg(format!("--start-address={value:#x}"))
            .arg(format!("--stop-address={:#x}", value + 8))
            .arg(exe));
        // " 100cac70 00000000 10001a70  ........"
        let line = dump
            .lines()
            .find(|l| l.trim_start().starts_with(&format!("{value:x} ")))
            .unwrap_or_else(|| panic!("descriptor of {symbol} at {value:#x}:\n{dump}"));
        let w: Vec<&str> = line.split_whitespace().collect();
        u64::from_str_radix(&format!("{}{}", w[1], w[2]), 16).unwrap()
    } else {
        value
    };
    (entry, entry + size)
}

/// pc -> mnemonic, from GNU objdump.
fn disassemble(target: Target, exe: &Path, lo: u64, hi: u64) -> BTreeMap<u64, String> {
    let dis = run(Command::new(tool(target, "objdump"))
        .arg("-d")
        .arg(format!("--start-address={lo:#x}"))
        .arg(format!("--stop-address={hi:#x}"))
        .arg(exe));
    let mut m = BTreeMap::new();
    for (pc, mnem, _) in dis.lines().filter_map(objdump_insn) {
        let mnem = mnem.split_whitespace().next().unwrap_or("");
        m.insert(pc, mnem.to_string());
    }
    assert_eq!(
        m.len() as u64,
        (hi - lo) / 4,
        "objdump of [{lo:#x},{hi:#x}):\n{dis}"
    );
    m
}

struct Counts {
    /// mnemonic -> executions
    by_mnemonic: BTreeMap<String, u64>,
    /// pc -> executions
    by_pc: BTreeMap<u64, u64>,
    mnemonics: BTreeMap<u64, String>,
    tbs: u64,
}

impl Counts {
    fn get(&self, m: &str) -> u64 {
        self.by_mnemonic.get(m).copied().unwrap_or(0)
    }
    fn stores(&self) -> u64 {
        self.by_mnemonic
            .iter()
            .filter(|(m, _)| m.starts_with("st"))
            .map(|(_, n)| n)
            .sum()
    }
    fn total(&self) -> u64 {
        self.by_mnemonic.values().sum()
    }
}

/// Run `exe mode` under qemu with the exec log restricted to `symbol`'s
/// code and count executed instructions. With `nochain` every executed
/// translation block gets a `Trace` line; `in_asm` lists the guest pcs of
/// each block when it is translated.
fn exec_counts(target: Target, exe: &Path, mode: &str, symbol: &str) -> Counts {
    let (lo, hi) = code_range(target, exe, symbol);
    let mnemonics = disassemble(target, exe, lo, hi);
    let log = exe.with_file_name(format!("qemu-{mode}-{symbol}.log"));
    let filter = format!("{lo:#x}..{:#x}", hi - 1);
    let log_s = log.to_string_lossy().into_owned();
    let qargs = [
        "-d",
        "in_asm,exec,nochain",
        "-D",
        log_s.as_str(),
        "-dfilter",
        filter.as_str(),
    ];
    run(harness_command(target, exe, &qargs).arg(mode));
    let text = std::fs::read_to_string(&log).unwrap();

    // translation block start pc -> pcs of its instructions
    let mut blocks: BTreeMap<u64, Vec<u64>> = BTreeMap::new();
    let mut current: Option<Vec<u64>> = None;
    let mut by_pc: BTreeMap<u64, u64> = BTreeMap::new();
    let mut tbs = 0;
    let flush = |cur: &mut Option<Vec<u64>>, blocks: &mut BTreeMap<u64, Vec<u64>>| {
        if let Some(b) = cur.take() {
            if let Some(&first) = b.first() {
                blocks.insert(first, b);
            }
        }
    };
    for l in text.lines() {
        if l.starts_with("IN:") {
            flush(&mut current, &mut blocks);
            current = Some(Vec::new());
        } else if let (Some(b), Some(rest)) = (current.as_mut(), l.strip_prefix("0x")) {
            if let Some((a, _)) = rest.split_once(':') {
                b.push(u64::from_str_radix(a, 16).unwrap());
            }
        } else if l.starts_with("Trace ") {
            flush(&mut current, &mut blocks);
            // Trace 0: 0x7f.. [cs_base/pc/flags/cflags] name
            let inner = l.split_once('[').and_then(|(_, r)| r.split_once(']'));
            let pc = inner
                .and_then(|(f, _)| f.split('/').nth(1))
                .and_then(|p| u64::from_str_radix(p, 16).ok())
                .unwrap_or_else(|| panic!("cannot parse exec line `{l}`"));
            if !(lo..hi).contains(&pc) {
                continue;
            }
            tbs += 1;
            let b = blocks
                .get(&pc)
                .unwrap_or_else(|| panic!("block at {pc:#x} executed but never translated"));
            for &a in b {
                if (lo..hi).contains(&a) {
                    *by_pc.entry(a).or_default() += 1;
                }
            }
        }
    }
    assert!(
        tbs > 0,
        "no executed block in [{lo:#x},{hi:#x}) in {}",
        log.display()
    );
    let mut by_mnemonic = BTreeMap::new();
    for (pc, n) in &by_pc {
        let m = mnemonics
            .get(pc)
            .unwrap_or_else(|| panic!("executed pc {pc:#x} is not an instruction of {symbol}"));
        *by_mnemonic.entry(m.clone()).or_default() += n;
    }
    Counts {
        by_mnemonic,
        by_pc,
        mnemonics,
        tbs,
    }
}

fn barriers_other_than(c: &Counts, keep: &str) -> Vec<(String, u64)> {
    BARRIERS
        .iter()
        .filter(|b| **b != keep)
        .filter(|b| c.get(b) > 0)
        .map(|b| (b.to_string(), c.get(b)))
        .collect()
}

fn report(target: Target, passes: &str, what: &str, c: &Counts) {
    eprintln!(
        "{target} --passes {passes} {what}: {} insns in {} blocks, stores {}, eieio {}: {:?}",
        c.total(),
        c.tbs,
        c.stores(),
        c.get("eieio"),
        c.by_mnemonic
    );
}

fn counts(target: Target) {
    // optimized
    let exe = build(target, "all", &format!("qemu-counts-{target}-all"));
    let va = exec_counts(target, &exe, "count-va", "invalidate_va");
    report(target, "all", "invalidate_va x6", &va);
    assert_eq!(va.stores(), 12, "{target}: stores in invalidate_va x6");
    assert_eq!(va.get("eieio"), 1, "{target}: eieio in invalidate_va x6");
    assert_eq!(barriers_other_than(&va, "eieio"), vec![], "{target}");

    let pid = exec_counts(target, &exe, "count-pid", "invalidate_pid");
    report(target, "all", "invalidate_pid x6", &pid);
    assert_eq!(pid.stores(), 6, "{target}: stores in invalidate_pid x6");
    assert_eq!(
        barriers_other_than(&pid, ""),
        vec![],
        "{target}: invalidate_pid"
    );

    // STAT busy on NPU 3: NPUs 0..2 polled once each, NPU 3 exactly 100000
    // times (the bound), NPUs 4, 5 never. Each poll's first read comes
    // before its counter (NPUs 0..3 once each), so the loop's load, the
    // busiest, runs NPU 3's other 99999 reads.
    let t = exec_counts(target, &exe, "count-timeout", "invalidate_va");
    report(target, "all", "invalidate_va x6, npu3 busy", &t);
    let (poll_pc, polls) = t
        .by_pc
        .iter()
        .filter(|(pc, _)| t.mnemonics[pc].starts_with('l'))
        .max_by_key(|(_, n)| **n)
        .map(|(pc, n)| (*pc, *n))
        .unwrap();
    assert_eq!(
        polls, 99_999,
        "{target}: executions of the poll load ({} at {poll_pc:#x})",
        t.mnemonics[&poll_pc]
    );
    assert_eq!(t.stores(), 12, "{target}: stores before the timeout");

    // naive (pre-patch) lowering
    let exe = build(target, "none", &format!("qemu-counts-{target}-none"));
    let va = exec_counts(target, &exe, "count-va", "invalidate_va");
    report(target, "none", "invalidate_va x6", &va);
    assert_eq!(va.stores(), 12, "{target} none: stores");
    assert_eq!(
        va.get("eieio"),
        6,
        "{target} none: eieio in invalidate_va x6"
    );
    assert_eq!(barriers_other_than(&va, "eieio"), vec![], "{target} none");
    let pid = exec_counts(target, &exe, "count-pid", "invalidate_pid");
    report(target, "none", "invalidate_pid x6", &pid);
    assert_eq!(pid.stores(), 6, "{target} none: stores in invalidate_pid");
}

#[test]
fn qemu_exec_counts_power64() {
    counts(Target::Power64);
}

#[test]
fn qemu_exec_counts_power64le() {
    counts(Target::Power64le);
}
