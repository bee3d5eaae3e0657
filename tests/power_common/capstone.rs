//! POWER's row of the capstone driver (tests/capstone.rs): decode each word
//! produced by `assemble()` and require that its mnemonic + operands mean the same as
//! our `Insn::text`, after both sides are normalised to base mnemonics
//! (capstone prints extended mnemonics such as `li`, `nop`, `sldi`, `crclr`,
//! omits `cr0`, names CR bits `cr1eq`, and prints immediates in hex).
//!
//! Documented capstone 0.14 (capstone 5.0.x) gaps, pinned below by asserting
//! exactly what capstone does instead:
//!  1. `tlbie` with RIC/PRS/R != 0 (the v3.0 radix forms): not decoded at all.
//!  2. `tlbie` with RIC=PRS=R=0: decoded in the old 2-operand form
//!     `tlbie RB,RS` (no space after the comma), and `RS` omitted when 0.
//!  3. `tlbiel`: decoded only when RS=0 and RIC=PRS=R=0 (as `tlbiel RB`);
//!     every other tlbiel (including RS != 0) is not decoded.
//!  4. Conditional branch with displacement 0 (branch to itself): the target
//!     operand is omitted (`beq cr7`, and `bne` with no operands for cr0).
//!  5. Book III-E `tlbilx` (every T): not decoded at all.
//!
//! Not gaps, only spelling (normalised): capstone prints Book E's `msync`
//! and `mbar` (MO 0) as `sync` and `eieio` (the same words), and the RA0
//! slot of `tlbivax`/`tlbsx` as `r0` where we print the literal `0`.

use super::*;
use crate::capstone::{Corpus, Entry, Expect, Row, Tally};

use ::capstone::prelude::*;
use shootdown::isa::power::insn::assemble;
use shootdown::Target;
use std::collections::HashMap;
use std::rc::Rc;

pub const ROW: Row = Row {
    disassembler: |t| {
        Capstone::new()
            .ppc()
            .mode(arch::ppc::ArchMode::Mode64)
            .endian(if t == Target::Power64 {
                ::capstone::Endian::Big
            } else {
                ::capstone::Endian::Little
            })
            .build()
            .expect("capstone init")
    },
    corpora: |t| {
        let big = t == Target::Power64;
        let b3e = book3e_corpus();
        let tlbilx = b3e
            .iter()
            .filter(|i| matches!(i, Insn::Tlbilx { .. }))
            .count();
        vec![
            // Guard against the gap list swallowing the corpus.
            capstone_corpus("corpus", &corpus(), big, |t: &Tally| {
                assert!(
                    t.compared > 350,
                    "too few normal comparisons: {}",
                    t.compared
                );
                assert!(t.pinned + t.not_decoded < 25);
            }),
            // Only tlbilx is a gap.
            capstone_corpus("book3e", &b3e, big, move |t: &Tally| {
                assert_eq!((t.pinned, t.not_decoded), (0, tlbilx));
                assert!(
                    t.compared > 40,
                    "too few normal comparisons: {}",
                    t.compared
                );
            }),
            capstone_corpus("branch limits", &long_branches(), big, |t: &Tally| {
                assert_eq!(t.pinned + t.not_decoded, 0);
            }),
        ]
    },
};

/// `insns` as one capstone corpus: each word's gap if it has one, else
/// our text and capstone's compared in canonical form.
fn capstone_corpus(
    name: &str,
    insns: &[Insn],
    big: bool,
    tally: impl Fn(&Tally) + 'static,
) -> Corpus {
    let a = assemble(insns, big).expect("corpus must assemble");
    let mut by_label = HashMap::new();
    let mut by_name = HashMap::new();
    for (i, insn) in insns.iter().enumerate() {
        if let Insn::Label(l) = insn {
            by_label.insert(*l, a.offsets[i]);
            by_name.insert(label_name(*l), a.offsets[i]);
        }
    }
    let by_name = Rc::new(by_name);
    let entries = insns
        .iter()
        .enumerate()
        .filter(|(_, insn)| !matches!(insn, Insn::Label(_)))
        .map(|(i, insn)| {
            let at = a.offsets[i];
            let ours = insn.text(RegStyle::Percent, &label_name);
            let expect = match known_gap(insn, at, &by_label) {
                Some(Gap::NotDecoded) => Expect::NotDecoded,
                Some(Gap::Exactly(m, o)) => Expect::Exactly(m, o),
                None => {
                    let (ours, by_name) = (ours.clone(), Rc::clone(&by_name));
                    Expect::Means(Box::new(move |gm: &str, go: &str| {
                        let (om, oo) = ours.split_once(' ').unwrap_or((ours.as_str(), ""));
                        let mine = canon(parse(om, oo, &by_name));
                        let theirs = canon(parse(gm, go, &by_name));
                        (mine != theirs).then(|| format!("{mine:?} != {theirs:?}"))
                    }))
                }
            };
            Entry {
                text: ours,
                offset: at as usize,
                len: 4,
                expect,
            }
        })
        .collect();
    Corpus {
        name: format!("{name} ({})", if big { "BE" } else { "LE" }),
        bytes: a.bytes,
        entries,
        tally: Box::new(tally),
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum Op {
    Gpr(u8),
    Num(i64),
    /// CR field (`crN`, or a plain number in a CR-field slot).
    CrField(u8),
    /// CR bit number 0..=31 (`crNlt`..`crNun`, or a plain number in crxor).
    CrBit(u8),
    /// `disp(base)`; base `None` is the literal `0` of an RA0 slot.
    Mem(i64, Option<u8>),
}

fn parse_num(s: &str) -> Option<i64> {
    let (neg, s) = match s.strip_prefix('-') {
        Some(r) => (true, r),
        None => (false, s),
    };
    let v = match s.strip_prefix("0x") {
        Some(h) => i64::from_str_radix(h, 16).ok()?,
        None => s.parse::<i64>().ok()?,
    };
    Some(if neg { -v } else { v })
}

fn parse_gpr(s: &str) -> Option<u8> {
    let n: u8 = s
        .strip_prefix('%')
        .unwrap_or(s)
        .strip_prefix('r')?
        .parse()
        .ok()?;
    (n < 32).then_some(n)
}

fn parse_op(s: &str, labels: &HashMap<String, u32>) -> Op {
    let s = s.trim();
    if let Some(a) = labels.get(s) {
        return Op::Num(i64::from(*a));
    }
    if let Some(r) = parse_gpr(s) {
        return Op::Gpr(r);
    }
    if let Some(rest) = s.strip_prefix("cr") {
        let field: u8 = rest[..1].parse().expect("cr field digit");
        let bit = match &rest[1..] {
            "" => return Op::CrField(field),
            "lt" => 0,
            "gt" => 1,
            "eq" => 2,
            "un" | "so" => 3,
            other => panic!("unknown CR bit suffix {other:?} in {s:?}"),
        };
        return Op::CrBit(field * 4 + bit);
    }
    if let Some((d, base)) = s.strip_suffix(')').and_then(|x| x.split_once('(')) {
        let disp = parse_num(d).unwrap_or_else(|| panic!("bad displacement in {s:?}"));
        let base = if base == "0" {
            None
        } else {
            Some(parse_gpr(base).unwrap_or_else(|| panic!("bad base in {s:?}")))
        };
        return Op::Mem(disp, base);
    }
    Op::Num(parse_num(s).unwrap_or_else(|| panic!("cannot parse operand {s:?}")))
}

fn parse(mnemonic: &str, ops: &str, labels: &HashMap<String, u32>) -> (String, Vec<Op>) {
    let ops = ops.trim();
    let v = if ops.is_empty() {
        vec![]
    } else {
        ops.split(',').map(|o| parse_op(o, labels)).collect()
    };
    (mnemonic.trim().to_string(), v)
}

fn num(o: &Op) -> i64 {
    match o {
        Op::Num(n) => *n,
        other => panic!("expected number, got {other:?}"),
    }
}

const COND_BRANCHES: [&str; 6] = ["blt", "bgt", "beq", "bne", "bge", "ble"];
const CMPS: [&str; 8] = [
    "cmpdi", "cmpldi", "cmpd", "cmpld", "cmpwi", "cmplwi", "cmpw", "cmplw",
];
/// Mnemonics whose last operand is a 16-bit D-form immediate: compared
/// modulo 2^16, because capstone and we may disagree on signedness
/// (e.g. `lis r3,-1` vs `lis r3,0xffff`) while the encoded field is identical.
const IMM16: [&str; 13] = [
    "addi", "addis", "ori", "oris", "xori", "xoris", "andi.", "cmpdi", "cmpldi", "cmpwi", "cmplwi",
    "li", "lis",
];

/// Rewrite extended mnemonics to base instructions with explicit operands,
/// so that both sides are compared in one canonical vocabulary.
fn canon((m, mut o): (String, Vec<Op>)) -> (String, Vec<Op>) {
    use Op::*;
    // D-form immediates and displacements modulo 2^16.
    // (Not a let-chain, so this also builds on edition 2021.)
    if let (true, Some(Num(n))) = (IMM16.contains(&m.as_str()), o.last_mut()) {
        *n &= 0xffff;
    }
    for op in o.iter_mut() {
        if let Mem(d, _) = op {
            *d &= 0xffff;
        }
    }
    let (m, o): (&str, Vec<Op>) = match m.as_str() {
        "li" => ("addi", vec![o[0].clone(), Num(0), o[1].clone()]),
        "lis" => ("addis", vec![o[0].clone(), Num(0), o[1].clone()]),
        "nop" => ("ori", vec![Gpr(0), Gpr(0), Num(0)]),
        "xnop" => ("xori", vec![Gpr(0), Gpr(0), Num(0)]),
        "mr" => ("or", vec![o[0].clone(), o[1].clone(), o[1].clone()]),
        "not" => ("nor", vec![o[0].clone(), o[1].clone(), o[1].clone()]),
        "sub" => ("subf", vec![o[0].clone(), o[2].clone(), o[1].clone()]),
        "hwsync" | "msync" => ("sync", o),
        "mbar" if o.is_empty() || o == [Num(0)] => ("eieio", vec![]),
        "tlbivax" | "tlbsx" if o.first() == Some(&Num(0)) => {
            let mut o = o;
            o[0] = Gpr(0);
            (m.as_str(), o)
        }
        "crclr" => ("crxor", vec![o[0].clone(), o[0].clone(), o[0].clone()]),
        "crxor" => (
            "crxor",
            o.into_iter()
                .map(|x| match x {
                    Num(b) => CrBit(b as u8),
                    x => x,
                })
                .collect(),
        ),
        x if CMPS.contains(&x) || COND_BRANCHES.contains(&x) => (x, cr_field_first(x, o)),
        x => match rotate64(x, &o).or_else(|| rotate32(x, &o)) {
            Some(r) => r,
            None => (x, o),
        },
    };
    (m.to_string(), o)
}

/// 64-bit rotate extended mnemonics (Power ISA v3.0B, C.8.2) as the base
/// instruction, or `None` for any other mnemonic.
fn rotate64(m: &str, o: &[Op]) -> Option<(&'static str, Vec<Op>)> {
    use Op::*;
    let n = |i: usize| num(&o[i]);
    Some(match m {
        "rotldi" => (
            "rldicl",
            vec![o[0].clone(), o[1].clone(), Num(n(2)), Num(0)],
        ),
        "rotrdi" => (
            "rldicl",
            vec![o[0].clone(), o[1].clone(), Num((64 - n(2)) & 63), Num(0)],
        ),
        "srdi" => (
            "rldicl",
            vec![o[0].clone(), o[1].clone(), Num((64 - n(2)) & 63), Num(n(2))],
        ),
        "clrldi" => (
            "rldicl",
            vec![o[0].clone(), o[1].clone(), Num(0), Num(n(2))],
        ),
        "extrdi" => {
            let (len, b) = (n(2), n(3));
            (
                "rldicl",
                vec![
                    o[0].clone(),
                    o[1].clone(),
                    Num((b + len) & 63),
                    Num(64 - len),
                ],
            )
        }
        "sldi" => (
            "rldicr",
            vec![o[0].clone(), o[1].clone(), Num(n(2)), Num(63 - n(2))],
        ),
        "clrrdi" => (
            "rldicr",
            vec![o[0].clone(), o[1].clone(), Num(0), Num(63 - n(2))],
        ),
        "extldi" => (
            "rldicr",
            vec![o[0].clone(), o[1].clone(), Num(n(3)), Num(n(2) - 1)],
        ),
        "insrdi" => {
            let (len, b) = (n(2), n(3));
            (
                "rldimi",
                vec![
                    o[0].clone(),
                    o[1].clone(),
                    Num((64 - (b + len)) & 63),
                    Num(b),
                ],
            )
        }
        "clrlsldi" => {
            let (b, sh) = (n(2), n(3));
            (
                "rldic",
                vec![o[0].clone(), o[1].clone(), Num(sh), Num(b - sh)],
            )
        }
        _ => return None,
    })
}

/// 32-bit rotate extended mnemonics (Power ISA v3.0B, C.8.1) as `rlwinm`,
/// or `None` for any other mnemonic.
fn rotate32(m: &str, o: &[Op]) -> Option<(&'static str, Vec<Op>)> {
    use Op::*;
    let n = |i: usize| num(&o[i]);
    Some(match m {
        "slwi" | "srwi" | "clrlwi" | "clrrwi" | "rotlwi" | "rotrwi" => {
            let k = n(2);
            let (sh, mb, me) = match m {
                "slwi" => (k, 0, 31 - k),
                "srwi" => ((32 - k) & 31, k, 31),
                "clrlwi" => (0, k, 31),
                "clrrwi" => (0, 0, 31 - k),
                "rotlwi" => (k, 0, 31),
                _ => ((32 - k) & 31, 0, 31),
            };
            (
                "rlwinm",
                vec![o[0].clone(), o[1].clone(), Num(sh), Num(mb), Num(me)],
            )
        }
        "extlwi" | "extrwi" | "clrlslwi" => {
            let (a, b) = (n(2), n(3));
            let (sh, mb, me) = match m {
                // extlwi ra,rs,n,b; extrwi ra,rs,n,b; clrlslwi ra,rs,b,n
                "extlwi" => (b, 0, a - 1),
                "extrwi" => ((b + a) & 31, 32 - a, 31),
                _ => (b, a - b, 31 - b),
            };
            (
                "rlwinm",
                vec![o[0].clone(), o[1].clone(), Num(sh), Num(mb), Num(me)],
            )
        }
        _ => return None,
    })
}

/// The operands of a compare or conditional branch `x` with the CR field
/// first.
fn cr_field_first(x: &str, o: Vec<Op>) -> Vec<Op> {
    use Op::*;
    // First operand is a CR field: we print a plain number, capstone
    // prints `crN` and omits it entirely for cr0.
    let mut o = o;
    match o.first() {
        Some(Num(f)) if o.len() == if CMPS.contains(&x) { 3 } else { 2 } => {
            o[0] = CrField(*f as u8)
        }
        Some(CrField(_)) => {}
        _ => o.insert(0, CrField(0)),
    }
    o
}

/// What capstone prints where it cannot be compared normally (see the
/// module docs). `None` = no gap, compare normally.
enum Gap {
    NotDecoded,
    Exactly(String, String),
}

fn known_gap(insn: &Insn, here: u32, labels: &HashMap<Label, u32>) -> Option<Gap> {
    match *insn {
        Insn::Tlbie {
            rb,
            rs,
            ric,
            prs,
            r,
        } => Some(if (ric.get(), prs, r) != (0, false, false) {
            Gap::NotDecoded
        } else if rs.get() == 0 {
            Gap::Exactly("tlbie".into(), format!("r{}", rb.get()))
        } else {
            Gap::Exactly("tlbie".into(), format!("r{},r{}", rb.get(), rs.get()))
        }),
        Insn::Tlbiel {
            rb,
            rs,
            ric,
            prs,
            r,
        } => Some(if (rs.get(), ric.get(), prs, r) == (0, 0, false, false) {
            Gap::Exactly("tlbiel".into(), format!("r{}", rb.get()))
        } else {
            Gap::NotDecoded
        }),
        Insn::Tlbilx { .. } => Some(Gap::NotDecoded),
        // GNU as and capstone spell the ISA's cp_abort differently.
        Insn::CpAbort => Some(Gap::Exactly("cp_abort".into(), String::new())),
        // capstone 0.14 knows only the operand-less POWER4 `slbia`.
        Insn::Slbia { ih } => Some(if ih.get() == 0 {
            Gap::Exactly("slbia".into(), String::new())
        } else {
            Gap::NotDecoded
        }),
        Insn::Bc { bf, target, .. } if labels.get(&target) == Some(&here) => {
            let ops = if bf.get() == 0 {
                String::new()
            } else {
                format!("cr{}", bf.get())
            };
            Some(Gap::Exactly(insn.mnemonic().into(), ops))
        }
        _ => None,
    }
}

/// The normaliser itself must not be vacuous: a wrong register, immediate,
/// CR field or target must make canonical forms differ.
#[test]
fn normaliser_distinguishes() {
    let l = HashMap::from([(".L1".to_string(), 8u32)]);
    let c = |m: &str, o: &str| canon(parse(m, o, &l));
    assert_eq!(c("li", "r3, -1"), c("addi", "%r3,0,65535"));
    assert_ne!(c("li", "r3, -1"), c("addi", "%r3,0,-2"));
    assert_eq!(c("sldi", "r4, r3, 0x20"), c("rldicr", "%r4,%r3,32,31"));
    assert_ne!(c("sldi", "r4, r3, 0x20"), c("rldicr", "%r4,%r3,32,32"));
    assert_eq!(c("cmpw", "r4, r3"), c("cmpw", "0,%r4,%r3"));
    assert_ne!(c("cmpw", "cr1, r4, r3"), c("cmpw", "0,%r4,%r3"));
    assert_eq!(c("crclr", "cr1eq"), c("crxor", "6,6,6"));
    assert_ne!(c("crxor", "cr0un, cr1lt, cr1gt"), c("crxor", "3,4,6"));
    assert_eq!(c("bne", "0x8"), c("bne", "0,.L1"));
    assert_ne!(c("bne", "cr1, 0x8"), c("bne", "0,.L1"));
    assert_ne!(c("bne", "0xc"), c("bne", "0,.L1"));
    assert_eq!(c("std", "r31, -0x8000(0)"), c("std", "%r31,-32768(0)"));
    assert_ne!(c("std", "r31, -0x8000(r0)"), c("std", "%r31,-32768(0)"));
    assert_eq!(c("eieio", ""), c("mbar", ""));
    assert_ne!(c("eieio", ""), c("mbar", "1"));
    assert_eq!(c("tlbivax", "r0, r3"), c("tlbivax", "0,%r3"));
    assert_ne!(c("tlbivax", "r0, r3"), c("tlbivax", "%r4,%r3"));
}
