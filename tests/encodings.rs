//! The encoding tables without any toolchain: encode every entry of
//! `tests/encodings/<table>.txt` with our encoders and require the bytes
//! and the printed text to equal the table's. The tables are GNU as's
//! bytes for the oracle corpora (written by the GNU as tests with
//! `SHOOTDOWN_BLESS_ENCODINGS=1`, `scripts/encodings.sh`), so an encoder
//! change fails here even where cross binutils are missing.

use crate::encodings_table as table;
use crate::gnu_as;

use shootdown::Target;

/// Every target's table: the sections are the GNU as corpora of its row
/// (tests/support/arch.rs), with our bytes.
#[test]
fn every_target_matches_its_table() {
    for t in Target::ALL {
        let ours = (gnu_as::row(t).corpora)(t)
            .into_iter()
            .map(|c| {
                let e = table::entries(c.ours.texts, &c.ours.bytes, &c.ours.offsets);
                (c.section, e)
            })
            .collect();
        let n = table::check(t.name(), ours);
        eprintln!("{t}: {n} entries equal to the table");
    }
}

/// The table format round-trips, repeats included.
#[test]
fn table_format_round_trips() {
    let e = |b: &[u8], t: &str| table::Entry {
        bytes: b.to_vec(),
        text: t.to_string(),
    };
    let mut t = table::Table::new();
    t.insert(
        "b".into(),
        vec![
            e(&[], ".L1:"),
            e(&[0x90], "nop"),
            e(&[0x90], "nop"),
            e(&[0xc3], "ret"),
        ],
    );
    t.insert("a".into(), vec![e(&[0x48, 0x89, 0xc8], "mov %rcx,%rax")]);
    let s = table::format("t", &t);
    assert!(s.contains("90\tnop\t*2\n"), "{s}");
    assert_eq!(table::parse("t", &s), t);
}
