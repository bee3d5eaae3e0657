//! `trace`: instance bounds, JSON operands, parameters left at zero, decoded
//! fields and queue records.

use super::*;

/// Counts are checked against the spec's `max` and the runner's limit
/// before anything is allocated: these used to grow to gigabytes.
#[cfg(feature = "emu")]
#[test]
fn trace_instances_are_bounded() {
    let atsd = "examples/npu2_atsd.inv";
    for n in ["7", "100000", "4294967296", "18446744073709551615"] {
        let r = sd(&["trace", atsd, "--seq", "invalidate_va", "--instances", n]);
        assert_eq!(r.code, Some(2), "{n}: {}", r.stderr);
        assert!(r.stderr.contains("at most 6"), "{n}: {}", r.stderr);
    }
    let dir = tempfile::tempdir().unwrap();
    let spec = tmp_spec(
        dir.path(),
        "big.inv",
        "target aarch64\ndevice d {\n instances dynamic max 100000\n reg a 0x0 u64 le\n}\n\
         seq s() { each d { d.a = 1 } }\n",
    );
    let s = spec.to_str().unwrap();
    let r = sd(&["trace", s, "--seq", "s", "--instances", "100000"]);
    assert_eq!(r.code, Some(2), "{}", r.stderr);
    assert!(
        r.stderr.contains("the emulator runs at most 256"),
        "{}",
        r.stderr
    );
    // At the limit it runs, and every instance gets its store.
    let r = sd(&["trace", s, "--seq", "s", "--instances", "256", "--json"]);
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    let v: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    let stores = v["events"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["kind"] == "store")
        .count();
    assert_eq!(stores, 256);
    // `cost`/`diff` take the maximum by default: bounded too.
    let r = sd(&["diff", s, "--seq", "s", "--arg", "x=1"]);
    assert_eq!(r.code, Some(2), "{}", r.stderr);
    assert!(r.stderr.contains("at most 4096"), "{}", r.stderr);
    let r = sd(&[
        "trace",
        s,
        "--seq",
        "s",
        "--instances",
        "3",
        "--read",
        "d.a=1",
    ]);
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    // A poll that never sees its value: a million reads were a million
    // events in memory (560 MB); the run stops at its instruction bound
    // and says how to script the register.
    let spec = tmp_spec(
        dir.path(),
        "poll.inv",
        "target aarch64\ndevice d {\n instances dynamic max 256\n reg a 0x0 u64 le\n}\n\
         seq s() { each d { poll d.a == 1 limit 1000000 else return -110 } }\n",
    );
    let p = spec.to_str().unwrap();
    let r = sd(&["trace", p, "--seq", "s", "--instances", "256"]);
    assert_eq!(r.code, Some(1), "{}", r.stderr);
    assert!(r.stderr.contains("--read"), "{}", r.stderr);
    let r = sd(&[
        "trace",
        p,
        "--seq",
        "s",
        "--instances",
        "256",
        "--read",
        "d.a=0,1",
        "--json",
    ]);
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    let v: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    let loads = v["events"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["kind"] == "load")
        .count();
    assert_eq!(loads, 2 * 256, "two reads per instance");
}

/// `trace --json` gives every register operand of an invalidation (issue
/// 41: only RB was there): a radix `tlbie` has RB and RS.
#[cfg(feature = "emu")]
#[test]
fn trace_json_has_every_invalidation_operand() {
    let events = crate::support::trace_events(&[
        "examples/radix_tlb.inv",
        "--seq",
        "flush_tlb_page",
        "--arg",
        "pid=1",
        "--arg",
        "va=0x10000",
        "--arg",
        "features=0",
    ]);
    let inv = events.iter().find(|e| e["kind"] == "invalidate").unwrap();
    // RB: the 64K page at 0x10000 with AP 5; RS: PID 1 in the upper word.
    assert_eq!(
        inv["operands"],
        serde_json::json!(["0x100a0", "0x100000000"])
    );
}

/// `trace` says which parameters it took as 0 (issue 37: a missing
/// `--arg` was silent).
#[cfg(feature = "emu")]
#[test]
fn trace_names_parameters_left_at_zero() {
    let r = sd(&[
        "trace",
        "examples/radix_tlb.inv",
        "--seq",
        "flush_tlb_page",
        "--arg",
        "pid=1",
    ]);
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    assert!(
        r.stderr
            .contains("note: `va`, `features` not given with --arg: 0"),
        "{}",
        r.stderr
    );
}

/// Issue 37: `trace` decodes what it prints: register fields by name,
/// invalidation operands by field, normal memory by location, the spec
/// line and pc of each event, and a count summary.
#[test]
fn trace_decodes_fields_operands_locations_and_counts() {
    let r = sd(&[
        "trace",
        "examples/npu2_atsd.inv",
        "--target",
        "power64",
        "--seq",
        "invalidate_va",
        "--arg",
        "pid=1",
        "--arg",
        "va=0x10010000",
        "--read",
        "npu.stat=0",
    ]);
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    let launch = r
        .stdout
        .lines()
        .find(|l| l.contains("npu[0].launch"))
        .unwrap();
    assert!(
        launch.contains("{is: 0, prs: 1, ap: 5, pid: 1, no_flush: 0}"),
        "{launch}"
    );
    assert!(launch.contains("(line 35, pc 0x"), "{launch}");
    assert!(
        r.stdout.contains("counts: 1 barrier `eieio`, "),
        "{}",
        r.stdout
    );

    let r = sd(&[
        "trace",
        "examples/arm64_tlb_range.inv",
        "--seq",
        "flush_tlb_range_r",
        "--arg",
        "asid=1",
        "--arg",
        "start=0x400000",
        "--arg",
        "end=0x480000",
    ]);
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    assert!(
        r.stdout
            .contains("[va=0x400000 pages=128 (num=1 scale=1) tg=1 ttl=0 asid=0x1]"),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout.contains("1 invalidate `tlbi rvale1is`"),
        "{}",
        r.stdout
    );

    let r = sd(&[
        "trace",
        "examples/radix_tlb.inv",
        "--seq",
        "flush_tlb_page",
        "--arg",
        "pid=1",
        "--arg",
        "va=0x10000",
        "--arg",
        "features=0",
    ]);
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    assert!(
        r.stdout
            .contains("[epn=0x10000 is=0 ap=5 pid=0x1 lpid=0x0]"),
        "{}",
        r.stdout
    );

    // Command entries: normal memory by location.
    let r = sd(&[
        "trace",
        "examples/smmuv3_cmdq.inv",
        "--seq",
        "tlb_inv_asid",
        "--arg",
        "asid=1",
        "--arg",
        "cmdq_log2n=8",
    ]);
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    assert!(
        r.stdout.contains("store      cmdq_ring[0x10] = 0xfc02046"),
        "{}",
        r.stdout
    );
    assert!(r.stdout.contains("normal memory"), "{}", r.stdout);
}

/// `trace` names what a queue's ring store writes: the record its fixed
/// fields match and the fields of the word stored (the SMMUv3 opcodes and
/// CMD_SYNC fields as arm-smmu-v3.h defines them: CMDQ_OP_TLBI_NH_VA
/// 0x12, CMDQ_OP_CMD_SYNC 0x46 with CS=SEV (2), MSH=ISH (3),
/// MSIATTR=OIWB (0xf)).
#[cfg(feature = "emu")]
#[test]
fn trace_names_queue_records_and_their_fields() {
    let r = sd(&[
        "trace",
        "examples/smmuv3_cmdq.inv",
        "--seq",
        "tlb_inv_range",
        "--target",
        "aarch64",
        "--arg",
        "asid=7",
        "--arg",
        "iova=0x5000",
        "--arg",
        "size=0x2000",
        "--arg",
        "granule=0x1000",
        "--arg",
        "cmdq_log2n=8",
    ]);
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    let ring: Vec<&str> = r
        .stdout
        .lines()
        .filter(|l| l.contains("cmdq_ring["))
        .collect();
    assert_eq!(
        ring.len(),
        6,
        "two commands and the sync, two words each:\n{}",
        r.stdout
    );
    for (i, l) in ring.iter().enumerate() {
        let want = match i {
            0 | 2 => "[tlbi_nh_va word 0]",
            1 | 3 => "[tlbi_nh_va word 1]",
            4 => "[cmd_sync word 0]",
            _ => "[cmd_sync word 1]",
        };
        assert!(l.contains(want), "store {i}: {l}");
    }
    assert!(
        ring[0].contains("op: 0x12") && ring[0].contains("asid: 7"),
        "{}",
        ring[0]
    );
    assert!(
        ring[1].contains("addr: 5"),
        "the page of iova 0x5000: {}",
        ring[1]
    );
    assert!(ring[3].contains("addr: 6"), "{}", ring[3]);
    assert!(
        ring[4].contains("op: 0x46") && ring[4].contains("cs: 2") && ring[4].contains("msh: 3"),
        "{}",
        ring[4]
    );
}
