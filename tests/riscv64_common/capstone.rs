//! riscv64's row of the capstone driver (tests/capstone.rs): capstone
//! (RISCV64; capstone-sys 0.18 bundles capstone 5,
//! LLVM's printer) decodes what `assemble` produced, and the result must
//! match `Insn::text` up to these documented spellings, each pinned in
//! `expected_capstone`:
//!
//! * immediates and offsets in hex above 9 (compared by value);
//! * branch and jump targets as the offset from the instruction (`j 4`,
//!   `bne a0, a1, -0x780`), not a label;
//! * a space after the comma of FENCE's sets; `fence iorw,iorw` is a bare
//!   `fence`;
//! * LLVM's aliases: `nop` (addi zero, zero, 0), `mv` (addi rd, rs, 0),
//!   `sext.w` (addiw rd, rs, 0), `beqz`/`bnez` (beq/bne rs, zero),
//!   `bltz`/`bgez` (blt/bge rs, zero), `bgtz`/`blez` (blt/bge zero, rs), `neg`
//!   (sub rd, zero, rs), `not` (xori rd, rs, -1).
//!
//! Gap: capstone 5 does not know Svinval. `sinval.vma`, `sfence.w.inval`
//! and `sfence.inval.ir` are not decoded (the backend's `capstone_gap`
//! lets `verify` accept that); their words are checked here field by field
//! against the Svinval chapter's encoding table instead, a route
//! independent of both our encoder's code and GNU as.

use super::*;
use crate::capstone::{Corpus, Entry, Expect, Row, Tally};

use ::capstone::Capstone;
use shootdown::isa::riscv64::insn::encode;
use shootdown::Target;

pub const ROW: Row = Row {
    disassembler: |_| cs(),
    corpora: |_| {
        vec![
            corpus("forms", &forms(), |t: &Tally| {
                assert!(t.compared > 450, "{}", t.compared);
                assert_eq!(
                    t.not_decoded, 8,
                    "6 sinval.vma, sfence.w.inval, sfence.inval.ir"
                );
            }),
            corpus("branch limits", &branch_limits(), |_: &Tally| {}),
        ]
    },
};

/// `insns` as a capstone corpus: Svinval words in the gap, every other
/// word read back as `expected_capstone` says.
fn corpus(name: &str, insns: &[Insn], tally: impl Fn(&Tally) + 'static) -> Corpus {
    let a = assemble(insns).unwrap();
    let labels: std::collections::HashMap<Label, u32> = insns
        .iter()
        .zip(&a.offsets)
        .filter_map(|(i, &o)| match i {
            Insn::Label(l) => Some((*l, o)),
            _ => None,
        })
        .collect();
    let entries = insns
        .iter()
        .enumerate()
        .filter(|(_, insn)| !matches!(insn, Insn::Label(_)))
        .map(|(k, insn)| {
            let o = a.offsets[k];
            let rel = match insn {
                Insn::Branch { target, .. } | Insn::J { target } => {
                    i64::from(labels[target]) - i64::from(o)
                }
                _ => 0,
            };
            let want = expected_capstone(insn, rel);
            let expect = if svinval(insn) {
                Expect::NotDecoded
            } else {
                Expect::Means(Box::new(move |m: &str, ops: &str| {
                    let got = format!("{m} {ops}");
                    (normalise(&got) != normalise(&want)).then(|| format!("expected `{want}`"))
                }))
            };
            Entry {
                text: insn.text(&label_name),
                offset: o as usize,
                len: 4,
                expect,
            }
        })
        .collect();
    Corpus {
        name: name.into(),
        bytes: a.bytes,
        entries,
        tally: Box::new(tally),
    }
}

/// The backend's own disassembler setup (what `verify` uses).
fn cs() -> Capstone {
    Target::Riscv64
        .backend()
        .disassembler()
        .expect("capstone init")
}

fn decode(cs: &Capstone, word: &[u8], addr: u64) -> Option<String> {
    let d = cs.disasm_count(word, addr, 1).ok()?;
    let i = d.iter().next()?;
    Some(format!(
        "{} {}",
        i.mnemonic().unwrap_or(""),
        i.op_str().unwrap_or("")
    ))
}

/// What capstone prints for `insn`; `rel` is a branch's offset.
fn expected_capstone(insn: &Insn, rel: i64) -> String {
    let z = Reg::ZERO;
    match insn {
        Insn::AluImm {
            op: ImmOp::Addi,
            rd,
            rs1,
            imm,
        } if imm.value() == 0 => {
            if *rd == z && *rs1 == z {
                "nop".into()
            } else {
                format!("mv {rd}, {rs1}")
            }
        }
        Insn::AluImm {
            op: ImmOp::Addiw,
            rd,
            rs1,
            imm,
        } if imm.value() == 0 => format!("sext.w {rd}, {rs1}"),
        Insn::AluImm {
            op: ImmOp::Xori,
            rd,
            rs1,
            imm,
        } if imm.value() == -1 => format!("not {rd}, {rs1}"),
        Insn::Alu {
            op: AluOp::Sub,
            rd,
            rs1,
            rs2,
        } if *rs1 == z => format!("neg {rd}, {rs2}"),
        Insn::Alu {
            op: AluOp::Sltu,
            rd,
            rs1,
            rs2,
        } if *rs1 == z => format!("snez {rd}, {rs2}"),
        Insn::Branch {
            cond: c @ (BrCond::Eq | BrCond::Ne),
            rs1,
            rs2,
            ..
        } if *rs2 == z => {
            let m = if *c == BrCond::Eq { "beqz" } else { "bnez" };
            format!("{m} {rs1}, {rel}")
        }
        Insn::Branch {
            cond: c @ (BrCond::Lt | BrCond::Ge),
            rs1,
            rs2,
            ..
        } if *rs2 == z => {
            let m = if *c == BrCond::Lt { "bltz" } else { "bgez" };
            format!("{m} {rs1}, {rel}")
        }
        Insn::Branch {
            cond: c @ (BrCond::Lt | BrCond::Ge),
            rs1,
            rs2,
            ..
        } if *rs1 == z => {
            let m = if *c == BrCond::Lt { "bgtz" } else { "blez" };
            format!("{m} {rs2}, {rel}")
        }
        Insn::Fence { pred, succ } if pred.bits() == 15 && succ.bits() == 15 => "fence".into(),
        Insn::Fence { pred, succ } => format!("fence {pred}, {succ}"),
        _ => insn.text(&|_| rel.to_string()),
    }
}

/// Collapses blanks and rewrites hex or decimal numbers (signed, also
/// before `(reg)`) as decimal, so spellings compare by value.
fn normalise(s: &str) -> String {
    let s = s.split_whitespace().collect::<Vec<_>>().join(" ");
    let (m, ops) = s.split_once(' ').unwrap_or((&s, ""));
    let mut out = format!("{m} ");
    for (i, tok) in ops.split(", ").enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        let (num, rest) = match tok.find('(') {
            Some(p) => tok.split_at(p),
            None => (tok, ""),
        };
        let (neg, mag) = match num.strip_prefix('-') {
            Some(m) => (true, m),
            None => (false, num),
        };
        let v = match mag.strip_prefix("0x") {
            Some(h) => i64::from_str_radix(h, 16).ok(),
            None if !mag.is_empty() && mag.bytes().all(|b| b.is_ascii_digit()) => mag.parse().ok(),
            None => None,
        };
        match v {
            Some(v) => out.push_str(&format!("{}{rest}", if neg { -v } else { v })),
            None => out.push_str(tok),
        }
    }
    out.trim_end().to_string()
}

fn svinval(insn: &Insn) -> bool {
    matches!(
        insn,
        Insn::SinvalVma { .. } | Insn::SfenceWInval | Insn::SfenceInvalIr
    )
}

/// The gap is real (a newer capstone that decodes Svinval should make the
/// backend drop it), and the backend declares exactly it.
#[test]
fn svinval_gap_is_pinned() {
    let cs = cs();
    let b = Target::Riscv64.backend();
    for i in [
        Insn::SinvalVma {
            rs1: Reg::A0,
            rs2: Reg::ZERO,
        },
        Insn::SfenceWInval,
        Insn::SfenceInvalIr,
    ] {
        let w = encode(&i, 0).unwrap().to_le_bytes();
        assert_eq!(decode(&cs, &w, 0), None, "{}", i.mnemonic());
        assert!(b.capstone_gap(i.mnemonic()));
    }
    assert!(!b.capstone_gap("sfence.vma"));
}

/// The Svinval chapter's encodings (SYSTEM opcode 1110011, funct3 000,
/// rd 00000): SINVAL.VMA funct7 0001011 with rs2, rs1; SFENCE.W.INVAL
/// funct7 0001100 rs2 00000 rs1 00000; SFENCE.INVAL.IR funct7 0001100
/// rs2 00001 rs1 00000. Fields read back from our words one by one.
#[test]
fn svinval_words_match_the_spec_fields() {
    let fields = |w: u32| {
        (
            w >> 25,
            (w >> 20) & 31,
            (w >> 15) & 31,
            (w >> 12) & 7,
            (w >> 7) & 31,
            w & 0x7f,
        )
    };
    for (rs1, rs2) in [(10u8, 11u8), (0, 31), (31, 0)] {
        let i = Insn::SinvalVma {
            rs1: Reg::new(rs1).unwrap(),
            rs2: Reg::new(rs2).unwrap(),
        };
        assert_eq!(
            fields(encode(&i, 0).unwrap()),
            (0b000_1011, u32::from(rs2), u32::from(rs1), 0, 0, 0b111_0011)
        );
    }
    assert_eq!(
        fields(encode(&Insn::SfenceWInval, 0).unwrap()),
        (0b000_1100, 0, 0, 0, 0, 0b111_0011)
    );
    assert_eq!(
        fields(encode(&Insn::SfenceInvalIr, 0).unwrap()),
        (0b000_1100, 1, 0, 0, 0, 0b111_0011)
    );
}

#[test]
fn normaliser_compares_by_value() {
    assert_eq!(normalise("lbu t0, 0x7ff(zero)"), "lbu t0, 2047(zero)");
    assert_eq!(normalise("addi a7, s0, -0x800"), "addi a7, s0, -2048");
    assert_ne!(normalise("addi a0, a1, 0x10"), normalise("addi a0, a1, 10"));
}
