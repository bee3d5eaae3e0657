//! The encoding tables without any toolchain: encode every entry of
//! `tests/encodings/<table>.txt` with our encoders and require the bytes
//! and the printed text to equal the table's. The tables are GNU as's
//! bytes for the oracle corpora (written by the GNU as tests with
//! `SHOOTDOWN_BLESS_ENCODINGS=1`, `scripts/encodings.sh`), so an encoder
//! change fails here even where cross binutils are missing.

use crate::aarch64_common as aarch64;
use crate::encodings_table as table;
use crate::power_common as power;
use crate::riscv64_common as riscv64;
use crate::x86_64_common as x86_64;

use shootdown::isa::aarch64::insn as a64;
use shootdown::isa::power::insn as ppc;
use shootdown::isa::riscv64::insn as rv;
use shootdown::isa::x86_64::insn as x86;

fn power_table(file: &str, big: bool) {
    let ours = power::table_sections()
        .into_iter()
        .map(|(name, insns, style)| {
            let a = ppc::assemble(&insns, big).expect("corpus must assemble");
            let e = table::entries(power::texts(&insns, style), &a.bytes, &a.offsets);
            (name, e)
        })
        .collect();
    let n = table::check(file, ours);
    eprintln!("{file}: {n} entries equal to the table");
}

#[test]
fn power64_matches_table() {
    power_table("power64", true);
}

#[test]
fn power64le_matches_table() {
    power_table("power64le", false);
}

#[test]
fn aarch64_matches_table() {
    let ours = aarch64::table_sections()
        .into_iter()
        .map(|(name, insns)| {
            let a = a64::assemble(&insns).expect("corpus must assemble");
            let e = table::entries(aarch64::texts(&insns), &a.bytes, &a.offsets);
            (name, e)
        })
        .collect();
    let n = table::check("aarch64", ours);
    eprintln!("aarch64: {n} entries equal to the table");
}

#[test]
fn x86_64_matches_table() {
    let ours = x86_64::table_sections()
        .into_iter()
        .map(|(name, insns)| {
            let a = x86::assemble(&insns, &x86_64::name).expect("corpus must assemble");
            let e = table::entries(x86_64::texts(&insns, &a), &a.bytes, &a.offsets);
            (name, e)
        })
        .collect();
    let n = table::check("x86_64", ours);
    eprintln!("x86_64: {n} entries equal to the table");
}

#[test]
fn riscv64_matches_table() {
    let ours = riscv64::table_sections()
        .into_iter()
        .map(|(name, insns)| {
            let a = rv::assemble(&insns).expect("corpus must assemble");
            let e = table::entries(riscv64::texts(&insns), &a.bytes, &a.offsets);
            (name, e)
        })
        .collect();
    let n = table::check("riscv64", ours);
    eprintln!("riscv64: {n} entries equal to the table");
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
