//! AArch64's row of the GNU as driver (tests/gnu_as.rs): the corpora of
//! `table_sections` under `.arch armv8.4-a`, and what the corpus must
//! cover, what `encode_one` and label offsets give, and where branches stop
//! reaching, checked without the assembler.

use super::*;
use crate::gnu_as::{Corpus, Listing, Row};

use std::collections::HashSet;

pub const ROW: Row = Row {
    flags: |_| Vec::new(),
    corpora: |_| {
        table_sections()
            .into_iter()
            .map(|(section, insns)| Corpus {
                section,
                flags: Vec::new(),
                prologue: ".arch armv8.4-a\n.text\n".into(),
                ours: listing(&insns),
                min: if section == "forms" { 901 } else { 0 },
            })
            .collect()
    },
};

fn listing(insns: &[Insn]) -> Listing {
    let a = assemble(insns).expect("assemble");
    Listing {
        texts: texts(insns),
        labels: insns.iter().map(|i| matches!(i, Insn::Label(_))).collect(),
        bytes: a.bytes,
        offsets: a.offsets,
    }
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
        Insn::Mvn { .. } => 58,
    }
}
const VARIANTS: usize = 59;

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
}

/// Conditional branches at the exact ends of their +-1 MiB range (imm19),
/// forward and backward (checked against GNU as as the section
/// `branch-limits`); one step further is rejected with the index of the
/// branch.
#[test]
fn cond_branch_range_limits() {
    let f = cond_branch_limits();
    let a = assemble(&f).unwrap();
    assert_eq!(a.offsets[0], 0);

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
