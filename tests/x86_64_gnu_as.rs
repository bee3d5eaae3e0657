//! Oracle tests: the text produced by `assemble` is fed to GNU `as --64` and
//! the resulting .text bytes must equal the bytes produced by iced.  These
//! tests FAIL (not skip) when `as`/`objcopy`/`objdump` are missing.

use crate::encodings_table as table;
use crate::x86_64_common as common;

use std::path::PathBuf;
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};

use shootdown::isa::x86_64::insn::*;

use common::*;
use table::hex;

fn workdir() -> PathBuf {
    static N: AtomicUsize = AtomicUsize::new(0);
    let d = std::env::temp_dir().join(format!(
        "x86-insn-test-{}-{}",
        std::process::id(),
        N.fetch_add(1, Ordering::SeqCst)
    ));
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn run(cmd: &mut Command) -> String {
    let out = cmd
        .output()
        .unwrap_or_else(|e| panic!("cannot run {cmd:?} (is binutils installed?): {e}"));
    assert!(
        out.status.success(),
        "{cmd:?} failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn source(insns: &[Insn], a: &Assembled) -> String {
    let mut s = String::from("\t.text\n");
    for (i, insn) in insns.iter().enumerate() {
        match insn {
            Insn::Label(l) => s.push_str(&format!("{}:\n", name(*l))),
            _ => s.push_str(&format!("\t{}\n", a.text[i])),
        }
    }
    s
}

/// Assemble with GNU as; returns (.text bytes, `objdump -d` listing).
fn gnu_as(src: &str) -> (Vec<u8>, String) {
    let d = workdir();
    let s = d.join("t.s");
    let o = d.join("t.o");
    let b = d.join("t.bin");
    std::fs::write(&s, src).unwrap();
    run(Command::new("as").arg("--64").arg("-o").arg(&o).arg(&s));
    run(Command::new("objcopy")
        .args(["-O", "binary", "-j", ".text"])
        .arg(&o)
        .arg(&b));
    let bytes = std::fs::read(&b).unwrap();
    let dis = run(Command::new("objdump")
        .args(["-d", "--no-show-raw-insn", "-M", "att,suffix"])
        .arg(&o));
    let _ = std::fs::remove_dir_all(&d);
    (bytes, dis)
}

/// Structural checks on `Assembled`, then byte-compare against GNU as.
fn check(insns: &[Insn], section: &str) -> (Assembled, String) {
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
    let src = source(insns, &a);
    let (gas, dis) = gnu_as(&src);
    if gas != a.bytes {
        // Localise the first differing instruction for a readable failure.
        let first = gas
            .iter()
            .zip(&a.bytes)
            .position(|(x, y)| x != y)
            .unwrap_or(gas.len().min(a.bytes.len()));
        let mut msg = format!(
            "byte mismatch (iced {} bytes, gas {} bytes), first diff at {first:#x}\n",
            a.bytes.len(),
            gas.len()
        );
        for (i, insn) in insns.iter().enumerate() {
            let start = a.offsets[i] as usize;
            let end = a.offsets.get(i + 1).map_or(a.bytes.len(), |&o| o as usize);
            if end > first.saturating_sub(16) && start <= first + 16 {
                msg.push_str(&format!(
                    "  [{i}] {start:#06x} {:<40} iced: {:<30} gas: {}  ({insn:?})\n",
                    a.text[i],
                    hex(&a.bytes[start..end]),
                    hex(&gas[start.min(gas.len())..end.min(gas.len())]),
                ));
            }
        }
        panic!("{msg}");
    }
    table::oracle(
        "x86_64",
        section,
        table::entries(texts(insns, &a), &gas, &a.offsets),
    );
    (a, dis)
}

// ---------------------------------------------------------------------------

#[test]
fn reg_reg_all_pairs() {
    check(&common::reg_reg_all_pairs(), "reg-reg");
}

#[test]
fn single_reg_ops() {
    check(&common::single_reg_ops(), "single-reg");
}

#[test]
fn immediates() {
    check(&common::immediates(), "imm");
}

#[test]
fn mov_imm_boundaries() {
    let v = common::mov_imm_boundaries();
    let (a, _) = check(&v, "mov-imm");
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
        let rex = u32::from(rd >= 8);
        let want = if imm <= u32::MAX as u64 {
            5 + rex
        } else if i32::try_from(imm as i64).is_ok() {
            7
        } else {
            10
        };
        assert_eq!(len, want, "MovImm rd={rd} imm={imm:#x}: {}", a.text[i]);
    }
}

#[test]
fn loads_and_stores() {
    check(&common::loads_and_stores(), "mem");
}

#[test]
fn atomics_fences_misc() {
    check(&common::atomics_fences_misc(), "atomics");
}

#[test]
fn branches_near_and_far() {
    let v = common::branches_near_and_far();
    let (a, _) = check(&v, "branches");
    let end = v.len() - 1;
    assert_eq!(a.offsets[end] as usize, a.bytes.len());
    assert_eq!(a.offsets[end - 1] as usize, a.bytes.len());
}

/// Mutually dependent jumps: both fit in rel8 only if the other one is short.
/// GNU as (grow-from-short) picks short/short; iced's own branch optimiser
/// (shrink-from-long) stays at long/long.  Our relaxation must match as.
#[test]
fn mutually_dependent_branches() {
    for (jcc, section) in [(false, "mutual-jmp"), (true, "mutual-jcc")] {
        let v = common::mutually_dependent(jcc);
        let (a, _) = check(&v, section);
        assert_eq!(a.bytes.len(), 64 + 2 + 60 + 2 + 65 + 1, "both jumps short");
    }
}

/// Independent check of the mnemonics with objdump's disassembler.
#[test]
fn objdump_mnemonics() {
    let v = common::mnemonic_sample();
    let (a, dis) = check(&v, "mnemonics");
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
    let bad = |insn: Insn| match assemble(&[Insn::Nop, insn], n) {
        Err(EncodeError::BadOperand { index: 1, .. }) => {}
        other => panic!("expected BadOperand at 1, got {other:?}"),
    };
    bad(Insn::MovReg { rd: 16, rs: 0 });
    bad(Insn::MovImm { rd: 255, imm: 0 });
    bad(Insn::Bswap {
        size: Size::B,
        rd: 0,
    });
    bad(Insn::Bswap {
        size: Size::W,
        rd: 0,
    });
    bad(Insn::ShlImm { rd: 0, sh: 64 });
    bad(Insn::ShrImm { rd: 0, sh: 255 });
    bad(Insn::Store {
        size: Size::Q,
        base: 0,
        index: Some((4, 1)),
        disp: 0,
        src: 1,
    });
    bad(Insn::Load {
        size: Size::Q,
        rd: 0,
        base: 0,
        index: Some((1, 3)),
        disp: 0,
    });
    bad(Insn::Load {
        size: Size::Q,
        rd: 0,
        base: 0,
        index: Some((16, 1)),
        disp: 0,
    });
    bad(Insn::Invlpg { base: 16 });
    bad(Insn::Bsr { rd: 16, rs: 0 });
    bad(Insn::Cmove { rd: 0, rs: 99 });
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
        base: 0,
        index: None,
        disp: 0,
        src: 1,
    };
    let ld = Insn::Load {
        size: Size::Q,
        rd: 0,
        base: 1,
        index: None,
        disp: 0,
    };
    let cx = Insn::LockCmpxchg {
        size: Size::Q,
        base: 0,
        disp: 0,
        src: 1,
    };
    assert!(st.is_store() && !st.is_load() && !st.is_barrier());
    assert!(ld.is_load() && !ld.is_store());
    assert!(cx.is_load() && cx.is_store() && cx.is_barrier());
    assert!(Insn::Mfence.is_barrier() && Insn::Sfence.is_barrier() && Insn::Lfence.is_barrier());
    assert!(Insn::Invlpg { base: 0 }.is_invalidate());
    assert!(!Insn::Nop.is_invalidate() && !Insn::Pause.is_barrier());
    // Register-only computations: no memory access, no ordering.
    for i in [
        Insn::Bsr { rd: 0, rs: 1 },
        Insn::Bsf { rd: 0, rs: 1 },
        Insn::Cmove { rd: 0, rs: 11 },
        Insn::XorImm { rd: 0, imm: 63 },
        Insn::ShlCl { rd: 2 },
    ] {
        assert!(
            !i.is_load() && !i.is_store() && !i.is_barrier() && !i.is_invalidate(),
            "{i:?}"
        );
    }
}
