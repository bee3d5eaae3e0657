//! The checked-in encoding tables (`tests/encodings/<table>.txt`): every
//! entry of the oracle corpora with our text and GNU as's bytes, so that an
//! encoder change shows in a plain `cargo test` (tests/encodings.rs) on a
//! machine without cross binutils. The GNU as tests are the oracle that
//! writes them (`SHOOTDOWN_BLESS_ENCODINGS=1`, or `scripts/encodings.sh`)
//! and, without that variable, require GNU as's bytes to equal them.
//!
//! Format: `[section]` headers in name order; one line per corpus entry,
//! in corpus order: the bytes in memory order (hex, a space between bytes,
//! none for a label), a tab, our text; a third field `*N` stands for N equal
//! consecutive entries (the long-branch fillers). `#` lines are comments.

#![allow(dead_code)] // each test binary uses a subset

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Mutex;

pub const BLESS_VAR: &str = "SHOOTDOWN_BLESS_ENCODINGS";

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entry {
    pub bytes: Vec<u8>,
    pub text: String,
}

pub type Table = BTreeMap<String, Vec<Entry>>;

/// Entry `i` = `texts[i]` and the bytes from `offsets[i]` to the next
/// entry's offset (the end of `bytes` for the last), clamped to `bytes`.
pub fn entries(texts: Vec<String>, bytes: &[u8], offsets: &[u32]) -> Vec<Entry> {
    assert_eq!(texts.len(), offsets.len());
    let end = |k: usize| {
        offsets
            .get(k)
            .map_or(bytes.len(), |&o| o as usize)
            .min(bytes.len())
    };
    texts
        .into_iter()
        .enumerate()
        .map(|(i, text)| Entry {
            bytes: bytes[end(i)..end(i + 1).max(end(i))].to_vec(),
            text,
        })
        .collect()
}

pub fn path(table: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/encodings")
        .join(format!("{table}.txt"))
}

pub fn hex(b: &[u8]) -> String {
    b.iter()
        .map(|x| format!("{x:02x}"))
        .collect::<Vec<_>>()
        .join(" ")
}

fn line(e: &Entry, width: usize, n: usize) -> String {
    assert!(
        !e.text.contains(['\t', '\n']) && !e.text.is_empty(),
        "table text must be one non-empty line without tabs: {:?}",
        e.text
    );
    let h = hex(&e.bytes);
    let mut s = format!("{h:<width$}\t{}", e.text);
    if n > 1 {
        s.push_str(&format!("\t*{n}"));
    }
    s
}

pub fn format(table: &str, t: &Table) -> String {
    let mut s = format!(
        "# Encoding table `{table}`: our text and GNU as's bytes for every entry of\n\
         # the oracle corpora. Written by the GNU as tests with {BLESS_VAR}=1\n\
         # (scripts/encodings.sh); checked without any toolchain by tests/encodings.rs.\n\
         # Do not edit by hand. Format: tests/support/encodings.rs.\n"
    );
    for (name, es) in t {
        s.push_str(&format!("\n[{name}]\n"));
        let width = es.iter().map(|e| e.bytes.len() * 3).max().unwrap_or(0);
        let width = width.saturating_sub(1);
        let mut i = 0;
        while i < es.len() {
            let mut n = 1;
            while i + n < es.len() && es[i + n] == es[i] {
                n += 1;
            }
            s.push_str(&line(&es[i], width, n));
            s.push('\n');
            i += n;
        }
    }
    s
}

pub fn parse(table: &str, src: &str) -> Table {
    let mut t = Table::new();
    let mut cur: Option<String> = None;
    for (k, l) in src.lines().enumerate() {
        let at = || format!("{table}.txt:{}", k + 1);
        if l.is_empty() || l.starts_with('#') {
            continue;
        }
        if let Some(name) = l.strip_prefix('[').and_then(|r| r.strip_suffix(']')) {
            assert!(
                t.insert(name.to_string(), Vec::new()).is_none(),
                "{}: section [{name}] twice",
                at()
            );
            cur = Some(name.to_string());
            continue;
        }
        let sec = cur
            .as_ref()
            .unwrap_or_else(|| panic!("{}: entry before any [section]", at()));
        let mut f = l.split('\t');
        let (h, text) = match (f.next(), f.next()) {
            (Some(h), Some(text)) => (h, text),
            _ => panic!("{}: expected `bytes<TAB>text`: {l:?}", at()),
        };
        let n = match f.next() {
            None => 1,
            Some(r) => r
                .strip_prefix('*')
                .and_then(|r| r.parse::<usize>().ok())
                .unwrap_or_else(|| panic!("{}: bad repeat {r:?}", at())),
        };
        let bytes = h
            .split_whitespace()
            .map(|b| u8::from_str_radix(b, 16).unwrap_or_else(|_| panic!("{}: bad hex", at())))
            .collect();
        let e = Entry {
            bytes,
            text: text.to_string(),
        };
        t.get_mut(sec).unwrap().extend(std::iter::repeat_n(e, n));
    }
    t
}

pub fn load(table: &str) -> Table {
    let p = path(table);
    let src = std::fs::read_to_string(&p)
        .unwrap_or_else(|e| panic!("{}: {e}; regenerate with scripts/encodings.sh", p.display()));
    parse(table, &src)
}

/// Mismatches between the table's entries and `got`: how many, and a
/// line each for the first 40, naming the entry.
fn diff(want: &[Entry], got: &[Entry], who: &str) -> (usize, Vec<String>) {
    let show = |e: Option<&Entry>| {
        e.map_or("(none)".to_string(), |e| {
            format!("[{}] `{}`", hex(&e.bytes), e.text)
        })
    };
    let bad: Vec<usize> = (0..want.len().max(got.len()))
        .filter(|&i| want.get(i) != got.get(i))
        .collect();
    let lines = bad
        .iter()
        .take(40)
        .map(|&i| {
            format!(
                "  #{i}: table {} {who} {}",
                show(want.get(i)),
                show(got.get(i))
            )
        })
        .collect();
    (bad.len(), lines)
}

fn blessing() -> bool {
    std::env::var_os(BLESS_VAR).is_some_and(|v| !v.is_empty() && v != "0")
}

/// The oracle side: `gas` is our text with GNU as's bytes. With
/// `SHOOTDOWN_BLESS_ENCODINGS=1`, (re)write `section` of `table` from it;
/// otherwise require the table's section to equal it (a stale table fails).
pub fn oracle(table: &str, section: &str, gas: Vec<Entry>) {
    // The tests of one binary run in parallel and share the table files.
    static LOCK: Mutex<()> = Mutex::new(());
    if blessing() {
        let _g = LOCK.lock().unwrap_or_else(|e| e.into_inner());
        let p = path(table);
        let mut t = match std::fs::read_to_string(&p) {
            Ok(src) => parse(table, &src),
            Err(_) => Table::new(),
        };
        t.insert(section.to_string(), gas);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(&p, format(table, &t)).unwrap();
        eprintln!("{}: [{section}] written from GNU as", p.display());
        return;
    }
    let t = load(table);
    let want = t.get(section).unwrap_or_else(|| {
        panic!("{table}.txt has no [{section}]; regenerate with scripts/encodings.sh")
    });
    let (n, d) = diff(want, &gas, "GNU as");
    assert!(
        n == 0,
        "{table}.txt [{section}] is stale against GNU as in {n} entries \
         ({BLESS_VAR}=1 regenerates it):\n{}",
        d.join("\n")
    );
}

/// The plain side: `ours` maps every section name to our encoder's entries.
/// The table must have exactly these sections, each equal entry by entry.
pub fn check(table: &str, ours: Vec<(&str, Vec<Entry>)>) -> usize {
    let t = load(table);
    let names: Vec<&str> = ours.iter().map(|(n, _)| *n).collect();
    let mut sorted = names.clone();
    sorted.sort_unstable();
    let have: Vec<&str> = t.keys().map(String::as_str).collect();
    assert_eq!(
        have, sorted,
        "{table}.txt sections differ from the corpora (regenerate with scripts/encodings.sh)"
    );
    let mut failures = Vec::new();
    let mut n = 0;
    for (name, es) in &ours {
        let (k, d) = diff(&t[*name], es, "ours");
        if k > 0 {
            failures.push(format!("[{name}]: {k} differences\n{}", d.join("\n")));
        }
        n += es.len();
    }
    assert!(
        failures.is_empty(),
        "our encoder disagrees with {table}.txt (the bytes there are GNU as's):\n{}",
        failures.join("\n")
    );
    n
}
