//! Oracle: GNU as, one driver for every target. Each target's corpora
//! (the `*_common/gnu_as.rs` row its entry in tests/support/arch.rs
//! names: the instructions, our text and bytes for them, the assembler
//! flags and source prologue) are printed with our
//! text, assembled by GNU (cross) as, and the `.text` bytes must equal our
//! encoder's, instruction by instruction (a failure names the
//! instruction), then as a whole; then each corpus's section of the
//! encoding table `tests/encodings/<target>.txt` is checked (or, with
//! `SHOOTDOWN_BLESS_ENCODINGS=1`, written) with GNU as's bytes.
//!
//! The assembler is required: missing, the test fails (it does not skip).
//! Warnings fail too: they mean the text is not what we meant.

use crate::encodings_table as table;
use crate::support;

use shootdown::Target;
use std::path::PathBuf;
use std::process::Command;

/// Our side of one corpus: every entry's text (`name:` for a label), which
/// entries are labels, our bytes and each entry's offset in them.
pub struct Listing {
    pub texts: Vec<String>,
    pub labels: Vec<bool>,
    pub bytes: Vec<u8>,
    pub offsets: Vec<u32>,
}

/// One program for GNU as.
pub struct Corpus {
    /// Its section of the encoding table.
    pub section: &'static str,
    /// Assembler flags beyond the row's.
    pub flags: Vec<&'static str>,
    /// What precedes the instructions (directives, `#define`s, `.text`).
    pub prologue: String,
    pub ours: Listing,
    /// The least number of instructions it must hold (0: no minimum).
    pub min: usize,
}

/// What a target family gives the driver.
pub struct Row {
    /// Flags every assembly of `target` takes.
    pub flags: fn(Target) -> Vec<&'static str>,
    /// Every corpus of `target`.
    pub corpora: fn(Target) -> Vec<Corpus>,
}

/// The row serving `t`.
pub fn row(t: Target) -> &'static Row {
    support::arch(t).gnu_as
}

/// The assembly text of `ours` after `prologue`: labels at the margin,
/// instructions indented.
pub fn source(prologue: &str, ours: &Listing) -> String {
    let mut s = String::from(prologue);
    for (t, &label) in ours.texts.iter().zip(&ours.labels) {
        if !label {
            s.push('\t');
        }
        s.push_str(t);
        s.push('\n');
    }
    s
}

/// Assembles `source` with `t`'s GNU as (the row's flags, then `flags`)
/// and returns the object. A source holding `#define`s goes through the C
/// preprocessor first, as a kernel `.S` does. Warnings fail.
pub fn object(t: Target, flags: &[&str], source: &str) -> PathBuf {
    let dir = support::scratch(&format!("{}-gnu-as", t.name()));
    let (src, obj) = (dir.join("in.S"), dir.join("in.o"));
    let source = if source.contains("#define") {
        let pre = dir.join("pre.S");
        std::fs::write(&pre, source).expect("write .S");
        support::run(
            Command::new("cpp")
                .args(["-P", "-undef", "-x", "assembler-with-cpp"])
                .arg("-o")
                .arg(&src)
                .arg(&pre),
        );
        std::fs::read_to_string(&src).unwrap()
    } else {
        source.to_string()
    };
    std::fs::write(&src, source).expect("write .S");
    let warnings = support::run(
        Command::new(support::tool(t, "as"))
            .args((row(t).flags)(t))
            .args(flags)
            .arg("-o")
            .arg(&obj)
            .arg(&src),
    );
    assert!(warnings.is_empty(), "GNU as warned:\n{warnings}");
    obj
}

/// GNU as's `.text` bytes for `source` (see [`object`]).
pub fn text(t: Target, flags: &[&str], source: &str) -> Vec<u8> {
    support::text_bytes(t, &object(t, flags, source))
}

/// Our bytes against GNU as's for `c`, entry by entry so a failure names
/// the instruction, then the whole; then the table section. Returns the
/// number of instructions compared.
pub fn check(t: Target, c: &Corpus) -> usize {
    let ours = &c.ours;
    let theirs = text(t, &c.flags, &source(&c.prologue, ours));
    let end = |k: usize| {
        ours.offsets
            .get(k + 1)
            .map_or(ours.bytes.len(), |&o| o as usize)
    };
    let mut diffs = Vec::new();
    let mut n = 0;
    for (i, text) in ours
        .texts
        .iter()
        .enumerate()
        .filter(|&(i, _)| !ours.labels[i])
    {
        n += 1;
        let (s, e) = (ours.offsets[i] as usize, end(i));
        let (a, b) = (&ours.bytes[s..e], theirs.get(s..e));
        if b != Some(a) {
            diffs.push(format!(
                "  [{i}] {s:#06x} {text:<40} ours={} gas={}",
                table::hex(a),
                b.map_or("(too short)".into(), table::hex)
            ));
        }
    }
    let (name, section) = (t.name(), c.section);
    assert!(
        diffs.is_empty(),
        "{name} [{section}]: {} mismatches vs GNU as:\n{}",
        diffs.len(),
        diffs[..diffs.len().min(40)].join("\n")
    );
    assert_eq!(ours.bytes.len(), theirs.len(), "{name} [{section}]: length");
    assert_eq!(ours.bytes, theirs, "{name} [{section}]: bytes");
    assert!(
        n >= c.min,
        "{name} [{section}]: corpus unexpectedly small: {n}"
    );
    table::oracle(
        name,
        section,
        table::entries(ours.texts.clone(), &theirs, &ours.offsets),
    );
    n
}

/// Every corpus of every target byte-identical to GNU as.
#[test]
fn every_corpus_matches_gnu_as() {
    for t in Target::ALL {
        for c in (row(t).corpora)(t) {
            let n = check(t, &c);
            eprintln!(
                "{t} [{}]: {n} instructions byte-identical to GNU as",
                c.section
            );
        }
    }
}
