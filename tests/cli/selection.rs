//! Which target and which sequences a verb works on: the spec's first
//! target, `--seq`, and feature-suffixed names.

use super::*;

/// `trace`, `cost`, `diff`, `show` and `stats` follow the spec's `target`
/// line as `gen` does (they used to default to power64 and fail).
#[test]
fn single_target_verbs_default_to_the_specs_first_target() {
    let dir = tempfile::tempdir().unwrap();
    let src = std::fs::read_to_string(Path::new(ROOT).join("examples/arm64_tlb_range.inv"))
        .unwrap()
        .replace("target aarch64", "target aarch64 // only");
    let spec = tmp_spec(dir.path(), "arm.inv", &src);
    let s = spec.to_str().unwrap();
    let r = sd(&["stats", s, "--json"]);
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    assert!(r.stdout.contains("\"target\": \"aarch64\""), "{}", r.stdout);
    let r = sd(&["show", s]);
    assert!(
        r.code == Some(0) && r.stdout.contains("tlbi"),
        "{}",
        r.stderr
    );
    let r = sd(&["cost", s, "--seq", "flush_tlb_range", "--sizes", "4K"]);
    assert!(
        r.code == Some(0) && r.stdout.contains("on aarch64"),
        "{}",
        r.stderr
    );
    let r = sd(&["diff", s, "--seq", "flush_tlb_page", "--arg", "addr=0x1000"]);
    assert!(
        r.code == Some(0) && r.stdout.contains("on aarch64"),
        "{}",
        r.stderr
    );
    #[cfg(feature = "emu")]
    {
        let r = sd(&[
            "trace",
            s,
            "--seq",
            "flush_tlb_page",
            "--arg",
            "addr=0x1000",
        ]);
        assert!(
            r.code == Some(0) && r.stdout.contains("tlbi"),
            "{}",
            r.stderr
        );
    }
    // --target still wins.
    let r = sd(&["stats", s, "--json", "--target", "power64"]);
    assert_eq!(r.code, Some(1), "tlbi is not a POWER instruction");
}

/// A `--feature-suffix` clash names the sequence that was renamed (issue
/// 42: it said "sequence `s_a` and sequence `s_a`").
#[test]
fn feature_suffix_clash_names_the_renamed_sequence() {
    let dir = tempfile::tempdir().unwrap();
    let spec = tmp_spec(
        dir.path(),
        "fs.inv",
        "target aarch64\nfeature a\ndevice d { reg x 0x0 u64 le }\nseq s(v: u64) {\n if feature a { d.x = v }\n}\nseq s_a(v: u64) { d.x = v }\n",
    );
    let o = dir.path().join("o");
    let r = sd(&[
        "gen",
        spec.to_str().unwrap(),
        "--feature",
        "a=on",
        "--feature-suffix",
        "--out",
        o.to_str().unwrap(),
    ]);
    assert_eq!(r.code, Some(1), "{}", r.stderr);
    assert!(
        r.stderr
            .contains("sequence `s` (named `s_a` by --feature-suffix) and for sequence `s_a`"),
        "{}",
        r.stderr
    );
}

/// Issue 37: `--seq` on `stats`, `verify` and `show` as on the other verbs: only
/// that sequence, and a usage error naming the sequences for a wrong one.
#[test]
fn stats_verify_and_show_take_one_sequence() {
    let atsd = "examples/npu2_atsd.inv";
    let r = sd(&["stats", atsd, "--seq", "invalidate_pid"]);
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    assert_eq!(r.stdout.lines().count(), 1, "{}", r.stdout);
    assert!(r.stdout.starts_with("invalidate_pid "), "{}", r.stdout);
    let all = sd(&["verify", atsd]);
    let one = sd(&["verify", atsd, "--seq", "invalidate_va"]);
    assert_eq!(one.code, Some(0), "{}", one.stdout);
    let passed = |o: &str| -> usize {
        let l = o.lines().last().unwrap();
        l.split(": ")
            .nth(1)
            .unwrap()
            .split(' ')
            .next()
            .unwrap()
            .parse()
            .unwrap()
    };
    assert!(
        passed(&one.stdout) < passed(&all.stdout),
        "{}\n{}",
        one.stdout,
        all.stdout
    );
    let r = sd(&["show", atsd, "--seq", "invalidate_pid"]);
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    assert_eq!(r.stdout.matches(".globl").count(), 1, "{}", r.stdout);
    assert!(r.stdout.contains(".globl invalidate_pid"), "{}", r.stdout);
    for verb in ["stats", "verify", "show"] {
        let r = sd(&[verb, atsd, "--seq", "nope"]);
        assert_eq!(r.code, Some(2), "{verb}: {}", r.stderr);
        assert!(
            r.stderr.contains("it has: invalidate_va, invalidate_pid"),
            "{}",
            r.stderr
        );
    }
}

/// `gen --seq`: one sequence's function and prototype, the same bytes as
/// in the whole file; an unknown name is bad usage that writes nothing.
#[test]
fn gen_seq_writes_one_sequence() {
    let dir = tempfile::tempdir().unwrap();
    let (one, all) = (dir.path().join("one"), dir.path().join("all"));
    let spec = "examples/radix_tlb.inv";
    let r = sd(&[
        "gen",
        spec,
        "--seq",
        "flush_tlb_pid",
        "--out",
        one.to_str().unwrap(),
    ]);
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    let r = sd(&["gen", spec, "--out", all.to_str().unwrap()]);
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    let read = |d: &Path, f: &str| std::fs::read_to_string(d.join(f)).unwrap();
    let s = read(&one, "radix_tlb.power64le.S");
    let globals: Vec<&str> = s.lines().filter(|l| l.contains(".globl")).collect();
    assert_eq!(globals, ["\t.globl flush_tlb_pid"], "{s}");
    // The function's text is the one the whole file has.
    let body = |t: &str| {
        let from = t.find("flush_tlb_pid:").unwrap();
        let to = from + t[from..].find(".size flush_tlb_pid").unwrap();
        t[from..to].to_string()
    };
    assert_eq!(body(&s), body(&read(&all, "radix_tlb.power64le.S")));
    let h = read(&one, "radix_tlb.h");
    let protos: Vec<&str> = h.lines().filter(|l| l.starts_with("long ")).collect();
    assert_eq!(protos.len(), 1, "{h}");
    assert!(protos[0].starts_with("long flush_tlb_pid("), "{h}");

    let none = dir.path().join("none");
    let r = sd(&[
        "gen",
        spec,
        "--seq",
        "nope",
        "--out",
        none.to_str().unwrap(),
    ]);
    assert_eq!(r.code, Some(2), "{}", r.stderr);
    assert!(
        r.stderr.contains("flush_tlb_pid"),
        "lists the sequences: {}",
        r.stderr
    );
    assert!(!none.exists());
}
