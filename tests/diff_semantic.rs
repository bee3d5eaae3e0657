//! `shootdown diff` as a reviewer reads it (issue 37): a one-line spec
//! change shows only itself, each side takes its own options, and
//! `--summary` fits a whole spec in a few lines.

use crate::support::shootdown_ok as ok;

/// The changed lines of a unified diff (no headers).
fn changed(text: &str) -> Vec<&str> {
    text.lines()
        .filter(|l| {
            (l.starts_with('+') || l.starts_with('-'))
                && !l.starts_with("+++")
                && !l.starts_with("---")
        })
        .collect()
}

/// `examples/npu2_atsd.inv` with a comment line first (every spec line
/// number moves) and, if `edit`, its poll limit lowered.
fn edited(tag: &str, edit: bool) -> String {
    let src = std::fs::read_to_string("examples/npu2_atsd.inv").unwrap();
    let mut out = format!("// {tag}\n{src}");
    if edit {
        assert!(out.contains("limit 100000 else return -110"));
        out = out.replacen(
            "limit 100000 else return -110",
            "limit 1000 else return -110",
            1,
        );
    }
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"));
    let p = dir.join(format!("diff-{tag}-{}.inv", std::process::id()));
    std::fs::write(&p, out).unwrap();
    p.display().to_string()
}

#[test]
fn a_one_line_spec_change_shows_only_itself() {
    let moved = edited("moved", false);
    let base = [
        "diff",
        "examples/npu2_atsd.inv",
        &moved,
        "--seq",
        "invalidate_va",
        "--a-passes",
        "all",
    ];
    // Every line number moved, nothing else: no difference by default...
    let text = ok(&base);
    assert!(text.contains("(the .S texts are identical)"), "{text}");
    // ...while the raw text differs in every `/* N: */` comment.
    let mut raw = base.to_vec();
    raw.push("--raw");
    assert!(changed(&ok(&raw)).len() > 20);

    // The poll limit lowered: the comment and the constant, nothing else.
    let limit = edited("limit", true);
    let text = ok(&[
        "diff",
        "examples/npu2_atsd.inv",
        &limit,
        "--seq",
        "invalidate_va",
        "--a-passes",
        "all",
    ]);
    let c = changed(&text);
    assert_eq!(
        c,
        [
            // The poll's first read (unchanged) stands between its
            // comment and its counter, which holds the reads after it.
            "-\t/* poll npu.stat == 0 limit 100000 else return -110 */",
            "+\t/* poll npu.stat == 0 limit 1000 else return -110 */",
            "-\tlis %r12,1",
            "-\tori %r12,%r12,34463",
            "+\tli %r12,999",
        ],
        "{text}"
    );
}

#[test]
fn each_side_takes_its_own_threshold_feature_and_target() {
    // Derived vs Linux's 512: `--set` would apply to both sides.
    let text = ok(&[
        "diff",
        "examples/arm64_tlb_range.inv",
        "--seq",
        "flush_tlb_range",
        "--a-passes",
        "all",
        "--b-set",
        "FLUSH_TLB_RANGE_TLB4K_THRESHOLD=512",
    ]);
    assert!(text.contains("b: examples/arm64_tlb_range.inv --target aarch64 --passes all --set FLUSH_TLB_RANGE_TLB4K_THRESHOLD=512"), "{text}");
    assert!(!text.contains("(the .S texts are identical)"), "{text}");
    // The threshold in bytes: 501 pages (0x1f5000, movz + movk) against
    // 512 (0x200000, one movz).
    let c = changed(&text);
    // (Whichever register the allocation picked.)
    let has = |sign: &str, insn: &str, imm: &str| {
        c.iter()
            .any(|l| l.starts_with(&format!("{sign}\t{insn} x")) && l.ends_with(imm))
    };
    assert!(has("-", "movk", ", #0x1f, lsl #16"), "{text}");
    assert!(has("+", "movz", ", #0x20, lsl #16"), "{text}");

    let text = ok(&[
        "diff",
        "examples/arm64_tlb_range.inv",
        "--seq",
        "flush_tlb_page",
        "--a-passes",
        "all",
        "--b-feature",
        "repeat_tlbi=on",
    ]);
    assert!(text.contains("--feature repeat_tlbi=on"), "{text}");
    assert!(
        changed(&text)
            .iter()
            .any(|l| l.starts_with('-') && l.contains("tbz")),
        "the run-time test goes: {text}"
    );

    // One sequence across targets.
    let text = ok(&[
        "diff",
        "examples/npu2_atsd.inv",
        "--seq",
        "invalidate_va",
        "--a-target",
        "power64",
        "--b-target",
        "power64le",
        "--a-passes",
        "all",
    ]);
    assert!(text.contains("on power64 (a) and power64le (b)"), "{text}");
}

#[test]
fn summary_names_every_sequence_and_what_moved() {
    let text = ok(&["diff", "examples/npu2_atsd.inv", "--summary"]);
    let src = std::fs::read_to_string("examples/npu2_atsd.inv").unwrap();
    let seqs: Vec<&str> = src
        .lines()
        .filter_map(|l| l.strip_prefix("seq "))
        .map(|l| l.split('(').next().unwrap().trim())
        .collect();
    assert!(
        text.contains(&format!("{} sequences", seqs.len())),
        "{text}"
    );
    for s in &seqs {
        assert!(
            text.lines()
                .any(|l| l.trim_start().starts_with(&format!("{s} "))),
            "{s} missing:\n{text}"
        );
    }
    // naive vs all: the per-instance eieio of invalidate_va moves out of
    // the loop, a static count the summary shows as it is.
    assert!(
        text.contains("a: examples/npu2_atsd.inv --target power64 --passes none"),
        "{text}"
    );
    // The same options on both sides: every sequence the same.
    let same = ok(&[
        "diff",
        "examples/npu2_atsd.inv",
        "--summary",
        "--a-passes",
        "all",
    ]);
    assert!(
        same.contains(&format!("{} sequences, 0 differ", seqs.len())),
        "{same}"
    );
}
