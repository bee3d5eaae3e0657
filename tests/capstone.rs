//! Oracle: capstone, one driver for every target. Each target's corpora
//! (the `*_common/capstone.rs` row its entry in tests/support/arch.rs
//! names) are our bytes with, per instruction,
//! what capstone must make of them: text that means ours (after the
//! row's normaliser for capstone's documented spellings), or a pinned gap
//! (exactly this text, or not decoded). Capstone decodes one instruction
//! at each of our offsets from there to the end, so a reading of the wrong
//! length shows as a mismatch, not a truncated decode.

use crate::support;
use ::capstone::Capstone;
use shootdown::Target;

/// Why capstone's mnemonic and operands do not mean ours (`None`: they
/// do).
pub type Means = Box<dyn Fn(&str, &str) -> Option<String>>;

/// What capstone must make of one instruction.
pub enum Expect {
    /// Text meaning ours, as the closure judges.
    Means(Means),
    /// A pinned spelling: exactly this mnemonic and (trimmed) operands.
    Exactly(String, String),
    /// A pinned gap: not decoded.
    NotDecoded,
}

/// One instruction: our text, where its bytes are, what capstone must say.
pub struct Entry {
    pub text: String,
    pub offset: usize,
    pub len: usize,
    pub expect: Expect,
}

/// How many instructions compared equal, matched a pinned spelling, or
/// were pinned as not decoded.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Tally {
    pub compared: usize,
    pub pinned: usize,
    pub not_decoded: usize,
}

pub struct Corpus {
    pub name: String,
    pub bytes: Vec<u8>,
    pub entries: Vec<Entry>,
    /// What the counts must be (guards against gaps swallowing a corpus).
    pub tally: Box<dyn Fn(&Tally)>,
}

/// What a target family gives the driver.
pub struct Row {
    /// Capstone set up for `target`.
    pub disassembler: fn(Target) -> Capstone,
    /// Every corpus of `target`.
    pub corpora: fn(Target) -> Vec<Corpus>,
}

/// The row serving `t`.
pub fn row(t: Target) -> &'static Row {
    support::arch(t).capstone
}

/// The first instruction capstone reads in `bytes` at `addr`: mnemonic,
/// operands and the bytes it took.
pub fn decode(cs: &Capstone, bytes: &[u8], addr: u64) -> Option<(String, String, Vec<u8>)> {
    let d = cs.disasm_count(bytes, addr, 1).ok()?;
    let i = d.iter().next()?;
    Some((
        i.mnemonic().unwrap_or("").to_string(),
        i.op_str().unwrap_or("").to_string(),
        i.bytes().to_vec(),
    ))
}

/// Decodes every entry of `c` and requires what it expects.
pub fn check(t: Target, c: &Corpus) -> Tally {
    let cs = (row(t).disassembler)(t);
    let mut tally = Tally::default();
    let mut failures = Vec::new();
    for (i, e) in c.entries.iter().enumerate() {
        let ours = &c.bytes[e.offset..e.offset + e.len];
        let got = decode(&cs, &c.bytes[e.offset..], e.offset as u64);
        let text = &e.text;
        match (&e.expect, got) {
            (Expect::NotDecoded, None) => tally.not_decoded += 1,
            (Expect::NotDecoded, Some((m, o, _))) => failures.push(format!(
                "  [{i}] `{text}`: gap expected not-decoded, capstone now prints `{m} {o}`; update the gap list"
            )),
            (_, None) => failures.push(format!("  [{i}] `{text}`: capstone cannot decode {ours:02x?}")),
            (_, Some((m, o, b))) if b != ours => failures.push(format!(
                "  [{i}] `{text}`: capstone reads {} bytes {b:02x?} as `{m} {o}`, ours are {ours:02x?}",
                b.len()
            )),
            (Expect::Exactly(wm, wo), Some((m, o, _))) => {
                if m == *wm && o.trim() == wo {
                    tally.pinned += 1;
                } else {
                    failures.push(format!(
                        "  [{i}] `{text}`: gap expected exactly `{wm} {wo}`, capstone prints `{m} {o}`"
                    ));
                }
            }
            (Expect::Means(same), Some((m, o, _))) => match same(&m, &o) {
                None => tally.compared += 1,
                Some(why) => failures.push(format!("  [{i}] `{text}` vs capstone `{m} {o}`: {why}")),
            },
        }
    }
    let n = failures.len();
    failures.truncate(40);
    assert!(
        n == 0,
        "{t} {}: {n} mismatches vs capstone:\n{}",
        c.name,
        failures.join("\n")
    );
    (c.tally)(&tally);
    tally
}

/// Every corpus of every target read back by capstone.
#[test]
fn every_corpus_round_trips_through_capstone() {
    for t in Target::ALL {
        for c in (row(t).corpora)(t) {
            let n = check(t, &c);
            eprintln!(
                "{t} {}: {} compared equal, {} pinned spellings, {} pinned as not decoded",
                c.name, n.compared, n.pinned, n.not_decoded
            );
        }
    }
}
