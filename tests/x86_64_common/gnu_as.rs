//! x86-64's row of the GNU as driver (tests/gnu_as.rs): `as --64` on the
//! text `assemble` produced must give iced's bytes. Beside it, the shape of
//! `Assembled` (offsets, text per instruction), instruction lengths, branch
//! sizing as GNU as does it, objdump's mnemonics, encoder errors and the
//! instruction classes, checked on the same corpora.

use super::*;
use crate::gnu_as::{self, Corpus, Listing, Row};
use crate::support;

use shootdown::Target;
use std::process::Command;

const PROLOGUE: &str = "\t.text\n";

pub const ROW: Row = Row {
    flags: |_| vec!["--64"],
    corpora: |_| {
        table_sections()
            .into_iter()
            .map(|(section, insns)| Corpus {
                section,
                flags: Vec::new(),
                prologue: PROLOGUE.into(),
                ours: listing(&insns, &checked(&insns)),
                min: 0,
            })
            .collect()
    },
};

fn listing(insns: &[Insn], a: &Assembled) -> Listing {
    Listing {
        texts: texts(insns, a),
        labels: insns.iter().map(|i| matches!(i, Insn::Label(_))).collect(),
        bytes: a.bytes.clone(),
        offsets: a.offsets.clone(),
    }
}

/// `assemble`'s result after structural checks: an offset and a text per
/// entry, offsets monotone, a label's text empty, an instruction's naming
/// its mnemonic.
fn checked(insns: &[Insn]) -> Assembled {
    let a = assemble(insns, &name).unwrap_or_else(|e| panic!("assemble failed: {e}"));
    assert_eq!(a.offsets.len(), insns.len());
    assert_eq!(a.text.len(), insns.len());
    let mut prev = 0u32;
    for (i, insn) in insns.iter().enumerate() {
        assert!(a.offsets[i] >= prev, "offsets not monotone at {i}");
        prev = a.offsets[i];
        if let Insn::Label(_) = insn {
            assert_eq!(a.text[i], "");
        } else {
            assert!(!a.text[i].is_empty());
            assert!(
                a.text[i].contains(insn.mnemonic()),
                "text {:?} lacks mnemonic {:?}",
                a.text[i],
                insn.mnemonic()
            );
        }
    }
    assert!(prev as usize <= a.bytes.len());
    a
}

#[test]
fn mov_imm_boundaries() {
    let v = super::mov_imm_boundaries();
    let a = checked(&v);
    // Expected lengths per form: mov r32 (5/6), mov r64 simm32 (7), movabs (10).
    for (i, insn) in v.iter().enumerate() {
        let Insn::MovImm { rd, imm } = *insn else {
            unreachable!()
        };
        let len = a
            .offsets
            .get(i + 1)
            .copied()
            .unwrap_or(a.bytes.len() as u32)
            - a.offsets[i];
        let rex = u32::from(rd.num() >= 8);
        let want = if imm <= u32::MAX as u64 {
            5 + rex
        } else if i32::try_from(imm as i64).is_ok() {
            7
        } else {
            10
        };
        assert_eq!(len, want, "MovImm rd={rd:?} imm={imm:#x}: {}", a.text[i]);
    }
}

#[test]
fn branches_near_and_far() {
    let v = super::branches_near_and_far();
    let a = checked(&v);
    let end = v.len() - 1;
    assert_eq!(a.offsets[end] as usize, a.bytes.len());
    assert_eq!(a.offsets[end - 1] as usize, a.bytes.len());
}

/// Mutually dependent jumps: both fit in rel8 only if the other one is short.
/// GNU as (grow-from-short) picks short/short; iced's own branch optimiser
/// (shrink-from-long) stays at long/long.  Our relaxation must match as.
#[test]
fn mutually_dependent_branches() {
    for jcc in [false, true] {
        let v = mutually_dependent(jcc);
        let a = checked(&v);
        assert_eq!(a.bytes.len(), 64 + 2 + 60 + 2 + 65 + 1, "both jumps short");
    }
}

/// Independent check of the mnemonics with objdump's disassembler.
#[test]
fn objdump_mnemonics() {
    let v = mnemonic_sample();
    let a = checked(&v);
    let obj = gnu_as::object(
        Target::X86_64,
        &[],
        &gnu_as::source(PROLOGUE, &listing(&v, &a)),
    );
    let dis = support::run(
        Command::new("objdump")
            .args(["-d", "--no-show-raw-insn", "-M", "att,suffix"])
            .arg(&obj),
    );
    // Parse "   1f:\tmnemonic operands" lines into offset -> first word(s).
    let mut at = std::collections::HashMap::new();
    for line in dis.lines() {
        let Some((off, rest)) = line.split_once(":\t") else {
            continue;
        };
        let Ok(off) = u32::from_str_radix(off.trim(), 16) else {
            continue;
        };
        let mut words = rest.split_whitespace();
        let mut m = words.next().unwrap_or("").to_string();
        if m == "lock" || m == "lock;" {
            m = words.next().unwrap_or("").to_string();
        }
        at.insert(off, m);
    }
    for (i, insn) in v.iter().enumerate() {
        if matches!(insn, Insn::Label(_)) {
            continue;
        }
        let got = at
            .get(&a.offsets[i])
            .unwrap_or_else(|| panic!("objdump has no insn at {:#x} ({insn:?})", a.offsets[i]));
        // objdump -M suffix prints the operand-size suffix; strip it when
        // our mnemonic is the suffix-less form.
        let want = insn.mnemonic();
        let ok = got == want
            || (got.len() == want.len() + 1
                && got.starts_with(want)
                && matches!(got.as_bytes()[want.len()], b'b' | b'w' | b'l' | b'q'));
        assert!(
            ok,
            "objdump says {got:?}, mnemonic() says {want:?} for {insn:?}"
        );
        if let Insn::LockCmpxchg { .. } = insn {
            assert!(a.text[i].starts_with("lock; "));
        }
    }
}

#[test]
fn errors() {
    let n = &name;
    assert_eq!(
        assemble(&[Insn::Jmp { target: 9 }], n),
        Err(EncodeError::UndefinedLabel(9))
    );
    assert_eq!(
        assemble(&[Insn::Label(3), Insn::Nop, Insn::Label(3)], n),
        Err(EncodeError::DuplicateLabel(3))
    );
    // Registers, counts, scales, index registers and bswap sizes out of
    // range cannot be built (`BswapSize` has no B or W), so the encoder
    // has no operand error left to give.
    assert_eq!(Gpr::new(16), None);
    assert_eq!(Imm6::maybe_from(64), None);
    assert_eq!(Scale::maybe_from(3), None);
    assert_eq!(Index::maybe_from(Gpr::RSP, Scale::of::<1>()), None);
    // Display / Error
    let e: Box<dyn std::error::Error> = Box::new(EncodeError::UndefinedLabel(1));
    assert!(!e.to_string().is_empty());
}

#[test]
fn empty_and_labels_only() {
    let a = assemble(&[], &name).unwrap();
    assert!(a.bytes.is_empty() && a.offsets.is_empty() && a.text.is_empty());
    let a = assemble(&[Insn::Label(1), Insn::Label(2)], &name).unwrap();
    assert!(a.bytes.is_empty());
    assert_eq!(a.offsets, vec![0, 0]);
    assert_eq!(a.text, vec![String::new(), String::new()]);
}

#[test]
fn classification() {
    let st = Insn::Store {
        size: Size::Q,
        base: Gpr::RAX,
        index: None,
        disp: Disp32::ZERO,
        src: Gpr::RCX,
    };
    let ld = Insn::Load {
        size: Size::Q,
        rd: Gpr::RAX,
        base: Gpr::RCX,
        index: None,
        disp: Disp32::ZERO,
    };
    let cx = Insn::LockCmpxchg {
        size: Size::Q,
        base: Gpr::RAX,
        disp: Disp32::ZERO,
        src: Gpr::RCX,
    };
    assert!(st.is_store() && !st.is_load() && !st.is_barrier());
    let si = Insn::store_imm(Size::B, Gpr::RDI, None, Disp32::ZERO, 0).unwrap();
    assert!(si.is_store() && !si.is_load() && !si.is_barrier());
    // A 64-bit store takes only a sign-extended imm32.
    assert!(Insn::store_imm(Size::Q, Gpr::RDI, None, Disp32::ZERO, 0xffff_ffff).is_none());
    assert!(ld.is_load() && !ld.is_store());
    assert!(cx.is_load() && cx.is_store() && cx.is_barrier());
    assert!(Insn::Mfence.is_barrier() && Insn::Sfence.is_barrier() && Insn::Lfence.is_barrier());
    assert!(Insn::Invlpg { base: Gpr::RAX }.is_invalidate());
    assert!(!Insn::Nop.is_invalidate() && !Insn::Pause.is_barrier());
    // Register-only computations: no memory access, no ordering.
    for i in [
        Insn::Bsr {
            rd: Gpr::RAX,
            rs: Gpr::RCX,
        },
        Insn::Bsf {
            rd: Gpr::RAX,
            rs: Gpr::RCX,
        },
        Insn::Cmove {
            rd: Gpr::RAX,
            rs: Gpr::R11,
        },
        Insn::XorImm {
            rd: Gpr::RAX,
            imm: Simm32::of::<63>(),
        },
        Insn::ShlCl { rd: Gpr::RDX },
    ] {
        assert!(
            !i.is_load() && !i.is_store() && !i.is_barrier() && !i.is_invalidate(),
            "{i:?}"
        );
    }
}
