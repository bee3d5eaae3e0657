//! The numbers `cost`, `diff` and `stats` report, each against an
//! independent count.

use super::*;

/// `cost` of `cover start, end - start` with a nonzero start: the same
/// table as the spec written `cover start, size` (an independent
/// formulation of the same requests).
#[test]
fn cost_with_a_nonzero_start_matches_the_size_formulation() {
    let dir = tempfile::tempdir().unwrap();
    let src =
        std::fs::read_to_string(Path::new(ROOT).join("examples/arm64_tlb_range.inv")).unwrap();
    let sized = src
        .replace(
            "seq flush_tlb_range(asid: u64, start: u64, end: u64)",
            "seq flush_tlb_range(asid: u64, start: u64, size: u64)",
        )
        .replacen(
            "cover start, end - start with tlb4k auto",
            "cover start, size with tlb4k auto",
            1,
        );
    assert_ne!(src, sized);
    let a = tmp_spec(dir.path(), "end.inv", &src);
    let b = tmp_spec(dir.path(), "size.inv", &sized);
    for start in ["0x10000", "0x7ff000", "0"] {
        let common = [
            "--seq",
            "flush_tlb_range",
            "--sizes",
            "4K,64K,1M,2M,4M,1G",
            "--json",
        ];
        let arg = format!("start={start}");
        let mut x = vec!["cost", a.to_str().unwrap(), "--arg", &arg];
        x.extend(common);
        let mut y = vec!["cost", b.to_str().unwrap(), "--arg", &arg];
        y.extend(common);
        let (ra, rb) = (sd(&x), sd(&y));
        assert_eq!(ra.code, Some(0), "{start}: {}", ra.stderr);
        assert_eq!(rb.code, Some(0), "{start}: {}", rb.stderr);
        let (ja, jb): (serde_json::Value, serde_json::Value) = (
            serde_json::from_str(&ra.stdout).unwrap(),
            serde_json::from_str(&rb.stdout).unwrap(),
        );
        assert_eq!(ja["rows"], jb["rows"], "start {start}");
        assert_eq!(ja["rows"].as_array().unwrap().len(), 6);
        assert_eq!(ja["rows"][0]["size"], 4096);
    }
}

/// VT-d page flush: one op (IVA carries the operand, IOTLB launches), and
/// with `--read` the self-clearing poll sees its bit cleared. The
/// emulator trace of the machine code is the independent count.
#[cfg(feature = "emu")]
#[test]
fn diff_counts_one_op_per_vtd_flush_and_scripts_reads() {
    let spec = "examples/vtd_iotlb.inv";
    let args = [
        "--seq",
        "iotlb_flush_page",
        "--target",
        "x86_64",
        "--arg",
        "did=1",
        "--arg",
        "addr=0x1000",
        "--arg",
        "am=0",
        "--arg",
        "cap=0",
        "--read",
        "iotlb.iotlb=0x8000000000000000,0x8000000000000000,0",
    ];
    let mut d = vec!["diff", spec];
    d.extend(args);
    let r = sd(&d);
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    let row = |name: &str| -> Vec<String> {
        let l = r
            .stdout
            .lines()
            .skip_while(|l| !l.starts_with("dynamic counts"))
            .find(|l| l.trim_start().starts_with(name))
            .unwrap_or_else(|| panic!("no `{name}` in\n{}", r.stdout));
        l.split_whitespace()
            .rev()
            .take(2)
            .map(String::from)
            .collect()
    };
    assert_eq!(row("ops (launches)"), ["1", "1"]);
    assert_eq!(row("return"), ["0", "0"]);
    let mut t = vec!["trace", spec, "--json"];
    t.extend(args);
    let tr = sd(&t);
    assert_eq!(tr.code, Some(0), "{}", tr.stderr);
    let v: serde_json::Value = serde_json::from_str(&tr.stdout).unwrap();
    let count = |k: &str| {
        v["events"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|e| e["kind"] == k)
            .count()
            .to_string()
    };
    assert_eq!(row("loads"), [count("load"), count("load")]);
    assert_eq!(row("stores"), [count("store"), count("store")]);
    assert_eq!(count("load"), "3");
    assert_eq!(v["return"], 0);
}

/// `stats --json` keeps a barrier's option: `dsb ish` and `dsb ishst` are
/// counted apart, as GNU objdump's disassembly of the assembled file
/// tells them apart.
#[test]
fn stats_barrier_kinds_keep_their_operands() {
    let r = sd(&[
        "stats",
        "examples/arm64_tlb_range.inv",
        "--target",
        "aarch64",
        "--json",
    ]);
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    let v: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let g = sd(&[
        "gen",
        "examples/arm64_tlb_range.inv",
        "--target",
        "aarch64",
        "--out",
        dir.path().to_str().unwrap(),
    ]);
    assert_eq!(g.code, Some(0), "{}", g.stderr);
    let obj = dir.path().join("x.o");
    let st = Command::new("aarch64-linux-gnu-gcc")
        .arg("-c")
        .arg(dir.path().join("arm64_tlb_range.aarch64.S"))
        .arg("-o")
        .arg(&obj)
        .status()
        .expect("aarch64-linux-gnu-gcc (./scripts/install-deps.sh)");
    assert!(st.success());
    let dis = Command::new("aarch64-linux-gnu-objdump")
        .arg("-d")
        .arg(&obj)
        .output()
        .expect("aarch64-linux-gnu-objdump");
    let dis = String::from_utf8_lossy(&dis.stdout);
    // objdump: per function `<name>:` then `addr: word \tmnemonic\toperands`.
    let mut by_fn: std::collections::BTreeMap<String, std::collections::BTreeMap<String, u64>> =
        Default::default();
    let mut cur = String::new();
    for l in dis.lines() {
        if let Some(name) = l.strip_suffix(">:").and_then(|l| l.split('<').nth(1)) {
            cur = name.to_string();
            by_fn.entry(cur.clone()).or_default();
            continue;
        }
        let f: Vec<&str> = l.split('\t').collect();
        if f.len() >= 3 {
            let m = f[2].trim();
            let kind = match m {
                "dsb" | "dmb" => format!("{m} {}", f.get(3).map_or("", |o| o.trim())),
                "isb" => "isb".to_string(),
                _ => continue,
            };
            *by_fn.get_mut(&cur).unwrap().entry(kind).or_default() += 1;
        }
    }
    let mut kinds = std::collections::BTreeSet::new();
    for s in v["sequences"].as_array().unwrap() {
        let name = s["name"].as_str().unwrap();
        let ours: std::collections::BTreeMap<String, u64> =
            serde_json::from_value(s["barriers"].clone()).unwrap();
        assert_eq!(ours, by_fn[name], "{name}");
        kinds.extend(ours.into_keys());
    }
    assert!(
        kinds.contains("dsb ish") && kinds.contains("dsb ishst"),
        "{kinds:?}"
    );
}

/// `diff SPEC SPEC2` compiles each spec for its own first target unless
/// `--target` is given (issue 42: SPEC2 was compiled for SPEC's), and
/// says which.
#[test]
fn diff_compiles_each_spec_for_its_own_target() {
    let dir = tempfile::tempdir().unwrap();
    let src = std::fs::read_to_string(Path::new(ROOT).join("examples/npu2_tce_kill.inv")).unwrap();
    let arm = src.replacen(
        "target power64, power64le, aarch64, x86_64",
        "target aarch64",
        1,
    );
    assert_ne!(arm, src);
    let b = tmp_spec(dir.path(), "arm.inv", &arm);
    let r = sd(&[
        "diff",
        "examples/npu2_tce_kill.inv",
        b.to_str().unwrap(),
        "--seq",
        "tce_kill",
    ]);
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    assert!(
        r.stdout.contains("on power64 (a) and aarch64 (b)"),
        "{}",
        r.stdout
    );
    let r = sd(&[
        "diff",
        "examples/npu2_tce_kill.inv",
        b.to_str().unwrap(),
        "--seq",
        "tce_kill",
        "--target",
        "aarch64",
    ]);
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    assert!(
        r.stdout.contains("sequence `tce_kill` on aarch64 ("),
        "{}",
        r.stdout
    );
}

/// A loop that runs too long for `diff`'s dynamic counts says what `diff`
/// can change (issue 42: it suggested `--sizes`, which `diff` lacks).
#[test]
fn diff_runaway_loop_names_diffs_own_options() {
    let dir = tempfile::tempdir().unwrap();
    let spec = tmp_spec(
        dir.path(),
        "run.inv",
        "target aarch64\ndevice d { reg a 0x0 u64 le }\nseq s(n: u64) {\n  let i = 0\n  while i < n limit 4294967295 {\n    d.a = i\n    i = i + 1\n  }\n}\n",
    );
    let r = sd(&[
        "diff",
        spec.to_str().unwrap(),
        "--seq",
        "s",
        "--arg",
        "n=0xffffffff",
    ]);
    // The arguments ask for too much: bad usage, as for `cost`.
    assert_eq!(r.code, Some(2), "{}", r.stderr);
    assert!(
        r.stderr
            .contains("`diff` fewer --instances or other --arg values"),
        "{}",
        r.stderr
    );
}
