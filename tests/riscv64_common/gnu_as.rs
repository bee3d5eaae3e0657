//! riscv64's row of the GNU as driver (tests/gnu_as.rs), assembled as the
//! generated files are: `.option norvc` (no compressed forms: our encoder
//! has none), `.option norelax` (local branches resolved by the
//! assembler, not left to the linker) and `.option arch, +svinval`
//! (binutils 2.40's rv64gc lacks Svinval). Beside it, what the corpus must
//! cover, what `encode` and label offsets give, and branch relaxation
//! (whose result GNU as also assembles to our bytes).

use super::*;
use crate::gnu_as::{self, Corpus, Listing, Row};

use shootdown::isa::riscv64::insn::{branch_fits, encode, relax};
use shootdown::Target;
use std::collections::HashSet;

const PROLOGUE: &str = ".option norvc\n.option norelax\n.option arch, +svinval\n.text\n";

pub const ROW: Row = Row {
    flags: |_| Vec::new(),
    corpora: |_| {
        table_sections()
            .into_iter()
            .map(|(section, insns)| Corpus {
                section,
                flags: Vec::new(),
                prologue: PROLOGUE.into(),
                ours: listing(&insns),
                min: if section == "forms" { 451 } else { 0 },
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

/// Exhaustive on purpose: a new `Insn` variant breaks this match, which
/// forces the corpus to be extended.
fn variant_index(i: &Insn) -> usize {
    match i {
        Insn::Label(_) => 0,
        Insn::Lui { .. } => 1,
        Insn::Alu { .. } => 2,
        Insn::AluImm { .. } => 3,
        Insn::Shift { .. } => 4,
        Insn::Mv { .. } => 5,
        Insn::Load { .. } => 6,
        Insn::Store { .. } => 7,
        Insn::Branch { .. } => 8,
        Insn::J { .. } => 9,
        Insn::Ret => 10,
        Insn::Fence { .. } => 11,
        Insn::FenceI => 12,
        Insn::SfenceVma { .. } => 13,
        Insn::SinvalVma { .. } => 14,
        Insn::SfenceWInval => 15,
        Insn::SfenceInvalIr => 16,
        Insn::Lr { .. } => 17,
        Insn::Sc { .. } => 18,
    }
}
const VARIANTS: usize = 19;

#[test]
fn corpus_covers_every_variant_and_enum_value() {
    let f = forms();
    let seen: HashSet<usize> = f.iter().map(variant_index).collect();
    let missing: Vec<usize> = (0..VARIANTS).filter(|i| !seen.contains(i)).collect();
    assert!(missing.is_empty(), "variants missing: {missing:?}");
    for op in ALU_OPS {
        assert!(f
            .iter()
            .any(|i| matches!(i, Insn::Alu { op: o, .. } if *o == op)));
    }
    for op in IMM_OPS {
        assert!(f
            .iter()
            .any(|i| matches!(i, Insn::AluImm { op: o, .. } if *o == op)));
    }
    for w in WIDTHS {
        assert!(f
            .iter()
            .any(|i| matches!(i, Insn::Store { w: x, .. } if *x == w)));
        assert!(f
            .iter()
            .any(|i| matches!(i, Insn::Load { w: x, .. } if *x == w)));
    }
    for c in CONDS {
        assert!(f
            .iter()
            .any(|i| matches!(i, Insn::Branch { cond, .. } if *cond == c)));
    }
}

#[test]
fn encode_matches_assemble() {
    let f = forms();
    let a = assemble(&f).unwrap();
    for (i, insn) in f.iter().enumerate() {
        if matches!(insn, Insn::Label(_) | Insn::Branch { .. } | Insn::J { .. }) {
            continue;
        }
        let o = a.offsets[i] as usize;
        let w = u32::from_le_bytes(a.bytes[o..o + 4].try_into().unwrap());
        assert_eq!(encode(insn, 0), Some(w), "{}", insn.text(&label_name));
    }
}

#[test]
fn offsets_follow_labels() {
    let f = label_offsets();
    let a = assemble(&f).unwrap();
    assert_eq!(a.offsets, vec![0, 0, 4, 4, 4, 8]);
}

/// Branches at the exact ends of their reach agree with GNU as (the
/// section `branch-limits`); one word further is rejected by `assemble` and rewritten by `relax` into an
/// inverted branch over a `j`, which GNU as also assembles to our bytes.
#[test]
fn branch_range_limits_and_relaxation() {
    let f = branch_limits();
    let mut g = f.clone();
    g.insert(1, f[1].clone());
    assert_eq!(
        assemble(&g).err(),
        Some(EncodeError::BranchOutOfRange { index: 0 })
    );
    let relaxed: Vec<Insn> = relax(g.into_iter().map(|i| (i, ())).collect(), 100)
        .unwrap()
        .into_iter()
        .map(|(i, _)| i)
        .collect();
    assert!(matches!(
        relaxed[..3],
        [
            Insn::Branch {
                cond: BrCond::Eq,
                target: 100,
                ..
            },
            Insn::J { target: 1 },
            Insn::Label(100)
        ]
    ));
    let a = assemble(&relaxed).unwrap();
    let source = gnu_as::source(PROLOGUE, &listing(&relaxed));
    assert_eq!(a.bytes, gnu_as::text(Target::Riscv64, &[], &source));
    assert!(branch_fits(-4096) && !branch_fits(4096) && !branch_fits(3));
}
