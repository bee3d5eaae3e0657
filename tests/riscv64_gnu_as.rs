//! Oracle test: the text from `Insn::text` assembled by GNU as
//! (binutils-riscv64-linux-gnu 2.40) must be byte-identical to what
//! `assemble` produces. The assembler is required: missing, the test
//! fails.
//!
//! The source says what the generated files say: `.option norvc` (no
//! compressed forms: our encoder has none), `.option norelax` (local
//! branches resolved by the assembler, not left to the linker) and
//! `.option arch, +svinval` (binutils 2.40's rv64gc lacks Svinval).

use crate::encodings_table as table;
use crate::riscv64_common as common;
use crate::support;

use common::*;
use shootdown::isa::riscv64::encode::{branch_fits, encode, relax};
use shootdown::isa::riscv64::insn::*;
use shootdown::Target;
use std::collections::HashSet;
use std::process::Command;

/// Assembles `source` with GNU as (the oracle itself, not gcc) and
/// returns the raw .text bytes. Warnings fail: they mean the text is not
/// what we meant.
fn gas(source: &str) -> Vec<u8> {
    let dir = support::scratch("riscv64-gnu-as");
    let (src, obj) = (dir.join("in.S"), dir.join("in.o"));
    std::fs::write(&src, source).expect("write .S");
    let warnings = support::run(
        Command::new("riscv64-linux-gnu-as")
            .arg("-o")
            .arg(&obj)
            .arg(&src),
    );
    assert!(warnings.is_empty(), "GNU as warned:\n{warnings}");
    support::text_bytes(Target::Riscv64, &obj)
}

fn source_of(insns: &[Insn]) -> String {
    let mut s = String::from(".option norvc\n.option norelax\n.option arch, +svinval\n.text\n");
    for i in insns {
        if !matches!(i, Insn::Label(_)) {
            s.push('\t');
        }
        s.push_str(&i.text(&label_name));
        s.push('\n');
    }
    s
}

/// Compares word by word so a failure names the instruction, then checks
/// (or, blessing, writes) `section` of the encoding table `riscv64`.
fn check_against_gas(insns: &[Insn], section: &str) -> usize {
    let ours = assemble(insns).expect("assemble");
    let theirs = gas(&source_of(insns));
    let labels: Vec<bool> = insns.iter().map(|i| matches!(i, Insn::Label(_))).collect();
    table::check_fixed_width(
        "riscv64",
        section,
        texts(insns),
        &labels,
        (&ours.bytes, &ours.offsets),
        &theirs,
    )
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
fn all_forms_match_gnu_as() {
    let words = check_against_gas(&forms(), "forms");
    eprintln!("gnu_as: {words} instruction words byte-identical to GNU as");
    assert!(words > 450, "corpus unexpectedly small: {words}");
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
    check_against_gas(&f, "labels");
}

/// Branches at the exact ends of their reach agree with GNU as; one word
/// further is rejected by `assemble` and rewritten by `relax` into an
/// inverted branch over a `j`, which GNU as also assembles to our bytes.
#[test]
fn branch_range_limits_and_relaxation() {
    let f = branch_limits();
    check_against_gas(&f, "branch-limits");
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
    assert_eq!(a.bytes, gas(&source_of(&relaxed)));
    assert!(branch_fits(-4096) && !branch_fits(4096) && !branch_fits(3));
}
