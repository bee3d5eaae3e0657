//! Spec text as files arrive: CR line endings, a byte order mark, SPDX
//! expressions.

use super::*;

/// A spec saved with CR-only line endings or a UTF-8 byte order mark
/// generates the same files as the plain one.
#[test]
fn cr_line_endings_and_byte_order_mark_are_plain_text() {
    let src = std::fs::read_to_string(Path::new(ROOT).join("examples/npu2_atsd.inv")).unwrap();
    let variants = [
        ("plain", src.clone()),
        ("cr", src.replace('\n', "\r")),
        ("crlf", src.replace('\n', "\r\n")),
        ("bom", format!("\u{feff}{src}")),
    ];
    let mut outputs = Vec::new();
    for (tag, text) in &variants {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join(tag)).unwrap();
        let spec = tmp_spec(&dir.path().join(tag), "npu2_atsd.inv", text);
        let out = dir.path().join("out");
        let r = sd(&[
            "gen",
            spec.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ]);
        assert_eq!(r.code, Some(0), "{tag}: {}", r.stderr);
        let mut files: Vec<(String, String)> = std::fs::read_dir(&out)
            .unwrap()
            .map(|e| {
                let p = e.unwrap().path();
                (
                    p.file_name().unwrap().to_string_lossy().into_owned(),
                    std::fs::read_to_string(&p).unwrap(),
                )
            })
            .collect();
        files.sort();
        outputs.push((tag, files));
    }
    for (tag, files) in &outputs[1..] {
        assert_eq!(files, &outputs[0].1, "{tag} differs from plain");
    }
    // An error in a CR-only spec is reported on its own line.
    let dir = tempfile::tempdir().unwrap();
    let spec = tmp_spec(
        dir.path(),
        "cr.inv",
        "device d {\r  reg a 0x0 u64 le\r}\rseq s() {\r  d.b = 1\r}\r",
    );
    let r = sd_in(dir.path(), &["gen", "cr.inv", "--out", "o"]);
    assert!(r.stderr.starts_with("cr.inv:5:5: error:"), "{}", r.stderr);
    let _ = spec;
}

/// `--spdx` takes an SPDX expression and nothing that could end the
/// comment it is written into.
#[test]
fn spdx_expressions_are_accepted_and_comment_injection_is_not() {
    let dir = tempfile::tempdir().unwrap();
    let o = dir.path().to_str().unwrap();
    let r = sd(&[
        "gen",
        "examples/npu2_tce_kill.inv",
        "--out",
        o,
        "--spdx",
        "GPL-2.0-only OR (MIT AND BSD-2-Clause)",
        "--target",
        "aarch64",
    ]);
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    let h = std::fs::read_to_string(dir.path().join("npu2_tce_kill.h")).unwrap();
    assert!(
        h.starts_with("/* SPDX-License-Identifier: GPL-2.0-only OR (MIT AND BSD-2-Clause) */\n")
    );
    for bad in ["GPL */ evil", "MIT\n#define X 1", "MIT // x", "x;y"] {
        let r = sd(&[
            "gen",
            "examples/npu2_tce_kill.inv",
            "--out",
            o,
            "--spdx",
            bad,
        ]);
        assert_eq!(r.code, Some(2), "{bad:?}: {}", r.stderr);
    }
}
