//! Oracle test: the text from `Insn::text` assembled by GNU as must be
//! byte-identical to what `assemble` produces.  The assembler is required:
//! if it is missing the test fails (it does not skip).
//! `AARCH64_AS` / `AARCH64_OBJCOPY` override the tool names.

use crate::aarch64_common as common;
use crate::encodings_table as table;

use std::collections::HashSet;
use std::path::PathBuf;
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};

use common::*;
use shootdown::isa::aarch64::insn::*;

fn tool(var: &str, default: &str) -> String {
    std::env::var(var).unwrap_or_else(|_| default.to_string())
}

fn scratch_path(stem: &str, ext: &str) -> PathBuf {
    static N: AtomicUsize = AtomicUsize::new(0);
    let n = N.fetch_add(1, Ordering::SeqCst);
    std::env::temp_dir().join(format!(
        "shootdown-aarch64-{}-{stem}-{n}.{ext}",
        std::process::id()
    ))
}

/// Assembles `source` with GNU as and returns the raw .text bytes.
fn gas(source: &str) -> Vec<u8> {
    let src = scratch_path("in", "S");
    let obj = scratch_path("out", "o");
    let bin = scratch_path("out", "bin");
    std::fs::write(&src, source).expect("write .S");
    let as_ = tool("AARCH64_AS", "aarch64-linux-gnu-as");
    let out = Command::new(&as_)
        .arg("-o")
        .arg(&obj)
        .arg(&src)
        .output()
        .unwrap_or_else(|e| {
            panic!("cannot run {as_} (required oracle, install binutils-aarch64-linux-gnu): {e}")
        });
    assert!(
        out.status.success(),
        "{as_} failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // Warnings (e.g. "unpredictable") mean the text is not what we meant.
    assert!(
        out.stderr.is_empty(),
        "{as_} warned:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let objcopy = tool("AARCH64_OBJCOPY", "aarch64-linux-gnu-objcopy");
    let st = Command::new(&objcopy)
        .args(["-O", "binary", "-j", ".text"])
        .arg(&obj)
        .arg(&bin)
        .status()
        .unwrap_or_else(|e| panic!("cannot run {objcopy}: {e}"));
    assert!(st.success(), "{objcopy} failed");
    let bytes = std::fs::read(&bin).expect("read objcopy output");
    for p in [src, obj, bin] {
        let _ = std::fs::remove_file(p);
    }
    bytes
}

fn source_of(insns: &[Insn]) -> String {
    let mut s = String::from(".arch armv8.4-a\n.text\n");
    for i in insns {
        let t = i.text(&label_name);
        if matches!(i, Insn::Label(_)) {
            s.push_str(&t);
        } else {
            s.push('\t');
            s.push_str(&t);
        }
        s.push('\n');
    }
    s
}

/// Compares word by word so a failure names the instruction, then checks
/// (or, blessing, writes) `section` of the encoding table `aarch64`.
fn check_against_gas(insns: &[Insn], section: &str) -> usize {
    let ours = assemble(insns).expect("assemble");
    let theirs = gas(&source_of(insns));
    let labels: Vec<bool> = insns.iter().map(|i| matches!(i, Insn::Label(_))).collect();
    table::check_fixed_width(
        "aarch64",
        section,
        texts(insns),
        &labels,
        (&ours.bytes, &ours.offsets),
        &theirs,
    )
}

/// Exhaustive on purpose: adding an `Insn` variant breaks this match, which
/// forces the corpus (and this count) to be updated.
fn variant_index(i: &Insn) -> usize {
    match i {
        Insn::Movz { .. } => 0,
        Insn::Movk { .. } => 1,
        Insn::Movn { .. } => 2,
        Insn::OrrImm { .. } => 3,
        Insn::MovReg { .. } => 4,
        Insn::Orr { .. } => 5,
        Insn::And { .. } => 6,
        Insn::Eor { .. } => 7,
        Insn::Bic { .. } => 8,
        Insn::AndImm { .. } => 9,
        Insn::Add { .. } => 10,
        Insn::Sub { .. } => 11,
        Insn::AddImm { .. } => 12,
        Insn::SubImm { .. } => 13,
        Insn::SubsImm { .. } => 14,
        Insn::Mul { .. } => 15,
        Insn::LslImm { .. } => 16,
        Insn::LsrImm { .. } => 17,
        Insn::LslReg { .. } => 18,
        Insn::LsrReg { .. } => 19,
        Insn::Ubfiz { .. } => 20,
        Insn::Ubfx { .. } => 21,
        Insn::Rev { .. } => 22,
        Insn::Rev32W { .. } => 23,
        Insn::Rev16W { .. } => 24,
        Insn::Str { .. } => 25,
        Insn::Ldr { .. } => 26,
        Insn::StrReg { .. } => 27,
        Insn::LdrReg { .. } => 28,
        Insn::Ldxr { .. } => 29,
        Insn::Ldaxr { .. } => 30,
        Insn::Stxr { .. } => 31,
        Insn::Stlxr { .. } => 32,
        Insn::Ldar { .. } => 33,
        Insn::Stlr { .. } => 34,
        Insn::Casa { .. } => 35,
        Insn::Swpa { .. } => 36,
        Insn::CmpReg { .. } => 37,
        Insn::CmpImm { .. } => 38,
        Insn::Cbz { .. } => 39,
        Insn::Cbnz { .. } => 40,
        Insn::BCond { .. } => 41,
        Insn::B { .. } => 42,
        // The kernel's `alternative_if` macros, not plain GNU as: the
        // Kbuild test assembles it against the kernel's own headers.
        Insn::AltB { .. } => panic!("AltB is not in the plain-as corpus"),
        Insn::Ret => 43,
        Insn::Dmb(_) => 44,
        Insn::Dsb(_) => 45,
        Insn::Isb => 46,
        Insn::Nop => 47,
        Insn::Tlbi { .. } => 48,
        Insn::Label(_) => 49,
        Insn::Clz { .. } => 50,
        Insn::Rbit { .. } => 51,
        Insn::SpSub { .. } => 52,
        Insn::SpAdd { .. } => 53,
        Insn::SubsReg { .. } => 54,
        Insn::Tbz { .. } => 55,
        Insn::Tbnz { .. } => 56,
        Insn::Cset { .. } => 57,
    }
}
const VARIANTS: usize = 58;

#[test]
fn corpus_covers_every_variant_and_enum_value() {
    let f = forms();
    let seen: HashSet<usize> = f.iter().map(variant_index).collect();
    let missing: Vec<usize> = (0..VARIANTS).filter(|i| !seen.contains(i)).collect();
    assert!(
        missing.is_empty(),
        "variants missing from corpus: {missing:?}"
    );
    for op in ALL_TLBI {
        assert!(f
            .iter()
            .any(|i| matches!(i, Insn::Tlbi { op: o, .. } if *o == op)));
    }
    for o in ALL_BARRIERS {
        assert!(f.contains(&Insn::Dmb(o)) && f.contains(&Insn::Dsb(o)));
    }
    for c in ALL_CONDS {
        assert!(f
            .iter()
            .any(|i| matches!(i, Insn::BCond { cond, .. } if *cond == c)));
    }
    for s in ALL_SIZES {
        for probe in [
            |i: &Insn, s| matches!(i, Insn::Str { off, .. } if off.size() == s),
            |i: &Insn, s| matches!(i, Insn::LdrReg { size, .. } if *size == s),
            |i: &Insn, s| matches!(i, Insn::Stlxr { size, .. } if *size == s),
            |i: &Insn, s| matches!(i, Insn::Swpa { size, .. } if *size == s),
        ] {
            assert!(f.iter().any(|i| probe(i, s)));
        }
    }
}

#[test]
fn all_forms_match_gnu_as() {
    let f = forms();
    let words = check_against_gas(&f, "forms");
    eprintln!("gnu_as: {words} instruction words byte-identical to GNU as");
    assert!(words > 900, "corpus unexpectedly small: {words}");
}

#[test]
fn encode_one_matches_assemble() {
    let f = forms();
    let a = assemble(&f).unwrap();
    let mut n = 0;
    for (i, insn) in f.iter().enumerate() {
        match insn {
            Insn::Label(_)
            | Insn::B { .. }
            | Insn::BCond { .. }
            | Insn::Cbz { .. }
            | Insn::Cbnz { .. }
            | Insn::Tbz { .. }
            | Insn::Tbnz { .. } => assert!(encode_one(insn).is_err()),
            _ => {
                let o = a.offsets[i] as usize;
                let w = u32::from_le_bytes(a.bytes[o..o + 4].try_into().unwrap());
                assert_eq!(encode_one(insn), Ok(w), "{}", insn.text(&label_name));
                n += 1;
            }
        }
    }
    assert!(n > 900);
}

#[test]
fn offsets_follow_labels() {
    let f = label_offsets();
    let a = assemble(&f).unwrap();
    assert_eq!(a.offsets, vec![0, 0, 4, 4, 4, 8]);
    assert_eq!(a.bytes.len(), 12);
    check_against_gas(&f, "labels");
}

/// Conditional branches at the exact ends of their +-1 MiB range (imm19),
/// forward and backward, checked against GNU as; one step further is
/// rejected with the index of the branch.
#[test]
fn cond_branch_range_limits() {
    let f = cond_branch_limits();
    let a = assemble(&f).unwrap();
    assert_eq!(a.offsets[0], 0);
    check_against_gas(&f, "branch-limits");

    // One word further in each direction.
    let mut g = f.clone();
    g.insert(1, Insn::Nop);
    assert_eq!(
        assemble(&g),
        Err(EncodeError::BranchOutOfRange { index: 0 })
    );
    let mut h = f.clone();
    let last = h.len() - 1;
    h.insert(last, Insn::Nop);
    assert_eq!(
        assemble(&h),
        Err(EncodeError::BranchOutOfRange { index: last + 1 })
    );
}
