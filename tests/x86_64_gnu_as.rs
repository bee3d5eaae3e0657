//! Oracle tests: the text produced by `assemble` is fed to GNU `as --64` and
//! the resulting .text bytes must equal the bytes produced by iced.  These
//! tests FAIL (not skip) when `as`/`objcopy`/`objdump` are missing.

use std::path::PathBuf;
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};

use shootdown::target::x86_64::insn::*;

const ALL_SIZES: [Size; 4] = [Size::B, Size::W, Size::D, Size::Q];
const ALL_CONDS: [Cond; 12] = [
    Cond::E,
    Cond::Ne,
    Cond::B,
    Cond::Ae,
    Cond::A,
    Cond::Be,
    Cond::L,
    Cond::Ge,
    Cond::G,
    Cond::Le,
    Cond::S,
    Cond::Ns,
];

fn name(l: Label) -> String {
    format!(".Lt{l}")
}

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

fn hex(b: &[u8]) -> String {
    b.iter()
        .map(|x| format!("{x:02x}"))
        .collect::<Vec<_>>()
        .join(" ")
}

/// Structural checks on `Assembled`, then byte-compare against GNU as.
fn check(insns: &[Insn]) -> (Assembled, String) {
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
    (a, dis)
}

// ---------------------------------------------------------------------------

#[test]
fn reg_reg_all_pairs() {
    let mut v = Vec::new();
    for rd in 0..16 {
        for rs in 0..16 {
            v.push(Insn::MovReg { rd, rs });
            v.push(Insn::Or { rd, rs });
            v.push(Insn::And { rd, rs });
            v.push(Insn::Xor { rd, rs });
            v.push(Insn::Add { rd, rs });
            v.push(Insn::Sub { rd, rs });
            v.push(Insn::Imul { rd, rs });
            v.push(Insn::CmpReg { ra: rd, rb: rs });
            v.push(Insn::Test { ra: rd, rb: rs });
            v.push(Insn::Bsr { rd, rs });
            v.push(Insn::Bsf { rd, rs });
            v.push(Insn::Cmove { rd, rs });
        }
    }
    check(&v);
}

#[test]
fn single_reg_ops() {
    let mut v = Vec::new();
    for rd in 0..16 {
        v.push(Insn::Bswap { size: Size::D, rd });
        v.push(Insn::Bswap { size: Size::Q, rd });
        v.push(Insn::Rol16 { rd });
        v.push(Insn::Not { rd });
        v.push(Insn::Neg { rd });
        v.push(Insn::ShlCl { rd });
        v.push(Insn::ShrCl { rd });
        for sh in [0, 1, 2, 7, 8, 31, 32, 63] {
            v.push(Insn::ShlImm { rd, sh });
            v.push(Insn::ShrImm { rd, sh });
        }
        v.push(Insn::Invlpg { base: rd });
        v.push(Insn::Clflush { base: rd });
    }
    check(&v);
}

#[test]
fn immediates() {
    let imms = [
        0,
        1,
        -1,
        2,
        127,
        128,
        -128,
        -129,
        255,
        256,
        0x1000,
        -4096,
        0x7fff_ffff,
        i32::MIN,
        i32::MIN + 1,
        0x1234_5678,
    ];
    let mut v = Vec::new();
    for rd in 0..16 {
        for imm in imms {
            v.push(Insn::OrImm { rd, imm });
            v.push(Insn::AndImm { rd, imm });
            v.push(Insn::AddImm { rd, imm });
            v.push(Insn::SubImm { rd, imm });
            v.push(Insn::XorImm { rd, imm });
            v.push(Insn::CmpImm { ra: rd, imm });
            v.push(Insn::TestImm { ra: rd, imm });
        }
    }
    check(&v);
}

#[test]
fn mov_imm_boundaries() {
    let imms: [u64; 16] = [
        0,
        1,
        0x7f,
        0x80,
        0x7fff_ffff,
        0x8000_0000,
        u32::MAX as u64,
        u32::MAX as u64 + 1,
        i32::MIN as i64 as u64,
        (i32::MIN as i64 - 1) as u64,
        -1i64 as u64,
        u64::MAX - 1,
        0x1234_5678_9abc_def0,
        i64::MIN as u64,
        i64::MAX as u64,
        0xffff_ffff_0000_0000,
    ];
    let mut v = Vec::new();
    for rd in 0..16 {
        for imm in imms {
            v.push(Insn::MovImm { rd, imm });
        }
    }
    let (a, _) = check(&v);
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

const DISPS: [i32; 11] = [
    0,
    1,
    8,
    -8,
    127,
    128,
    -128,
    -129,
    0x1234_5678,
    i32::MIN,
    i32::MAX,
];

fn indexes() -> Vec<Option<(Reg, u8)>> {
    vec![
        None,
        Some((0, 1)),
        Some((1, 2)),
        Some((5, 4)),
        Some((8, 8)),
        Some((12, 1)),
        Some((13, 2)),
        Some((15, 8)),
    ]
}

#[test]
fn loads_and_stores() {
    let mut v = Vec::new();
    for size in ALL_SIZES {
        for base in 0..16 {
            for index in indexes() {
                for disp in DISPS {
                    let r = (base as u32 + 3 + disp.unsigned_abs()) as u8 % 16;
                    v.push(Insn::Store {
                        size,
                        base,
                        index,
                        disp,
                        src: r,
                    });
                    v.push(Insn::Load {
                        size,
                        rd: r,
                        base,
                        index,
                        disp,
                    });
                }
            }
        }
        // Every data register with every size (byte regs spl..dil need REX).
        for r in 0..16 {
            v.push(Insn::Store {
                size,
                base: 7,
                index: None,
                disp: 4,
                src: r,
            });
            v.push(Insn::Load {
                size,
                rd: r,
                base: 6,
                index: Some((2, 4)),
                disp: -4,
            });
        }
    }
    check(&v);
}

#[test]
fn atomics_fences_misc() {
    let mut v = vec![
        Insn::Ret,
        Insn::Pause,
        Insn::Nop,
        Insn::Sfence,
        Insn::Lfence,
        Insn::Mfence,
    ];
    for size in ALL_SIZES {
        for base in 0..16 {
            for disp in DISPS {
                for src in [0, 1, 4, 5, 6, 7, 8, 12, 13, 15] {
                    v.push(Insn::LockCmpxchg {
                        size,
                        base,
                        disp,
                        src,
                    });
                    v.push(Insn::Xchg {
                        size,
                        base,
                        disp,
                        src,
                    });
                }
            }
        }
    }
    check(&v);
}

fn nops(v: &mut Vec<Insn>, n: usize) {
    v.extend(std::iter::repeat_n(Insn::Nop, n));
}

#[test]
fn branches_near_and_far() {
    let mut v = Vec::new();
    let mut l = 0;
    // Forward and backward, all conditions, padding around the rel8 limit.
    for (k, pad) in [
        0usize, 1, 100, 120, 121, 122, 123, 124, 125, 126, 127, 128, 129, 130, 131, 200, 1000,
    ]
    .into_iter()
    .enumerate()
    {
        let cond = ALL_CONDS[k % ALL_CONDS.len()];
        // forward jcc + forward jmp to the same label
        l += 1;
        v.push(Insn::Jcc { cond, target: l });
        nops(&mut v, pad);
        v.push(Insn::Label(l));
        l += 1;
        v.push(Insn::Jmp { target: l });
        nops(&mut v, pad);
        v.push(Insn::Label(l));
        // backward jcc + backward jmp
        l += 1;
        v.push(Insn::Label(l));
        nops(&mut v, pad);
        v.push(Insn::Jcc { cond, target: l });
        l += 1;
        v.push(Insn::Label(l));
        nops(&mut v, pad);
        v.push(Insn::Jmp { target: l });
    }
    // Every condition, both directions, short and long.
    for cond in ALL_CONDS {
        l += 1;
        v.push(Insn::Label(l));
        v.push(Insn::Jcc { cond, target: l });
        nops(&mut v, 300);
        v.push(Insn::Jcc { cond, target: l });
        l += 1;
        v.push(Insn::Jcc { cond, target: l });
        nops(&mut v, 300);
        v.push(Insn::Label(l));
    }
    // Jump to self, several labels at one spot, label at the very end.
    l += 1;
    v.push(Insn::Label(l));
    v.push(Insn::Jmp { target: l });
    v.push(Insn::Label(l + 1));
    v.push(Insn::Label(l + 2));
    v.push(Insn::Jcc {
        cond: Cond::E,
        target: l + 1,
    });
    v.push(Insn::Jcc {
        cond: Cond::Ne,
        target: l + 2,
    });
    v.push(Insn::Jmp { target: l + 3 });
    v.push(Insn::Label(l + 3));
    v.push(Insn::Label(l + 4));
    let (a, _) = check(&v);
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
        let jump = |target| {
            if jcc {
                Insn::Jcc {
                    cond: Cond::Ne,
                    target,
                }
            } else {
                Insn::Jmp { target }
            }
        };
        let mut v = vec![Insn::Label(1)];
        nops(&mut v, 64); // a
        v.push(jump(2)); // A: forward over B
        nops(&mut v, 60); // b
        v.push(jump(1)); // B: backward over A  (-(64+2+60+2) = -128)
        nops(&mut v, 65); // c: A disp = 60 + 2 + 65 = 127
        v.push(Insn::Label(2));
        v.push(Insn::Ret);
        let (a, _) = check(&v);
        assert_eq!(a.bytes.len(), 64 + 2 + 60 + 2 + 65 + 1, "both jumps short");
    }
}

/// Independent check of the mnemonics with objdump's disassembler.
#[test]
fn objdump_mnemonics() {
    let mut v = vec![Insn::Label(1)];
    for (i, cond) in ALL_CONDS.into_iter().enumerate() {
        v.push(Insn::Jcc { cond, target: 1 });
        v.push(Insn::MovImm {
            rd: i as u8,
            imm: [
                0,
                u32::MAX as u64,
                i32::MIN as i64 as u64,
                u64::MAX,
                1 << 40,
            ][i % 5],
        });
    }
    for size in ALL_SIZES {
        v.push(Insn::Load {
            size,
            rd: 1,
            base: 12,
            index: Some((13, 8)),
            disp: -1,
        });
        v.push(Insn::Store {
            size,
            base: 13,
            index: None,
            disp: 0,
            src: 6,
        });
        v.push(Insn::LockCmpxchg {
            size,
            base: 4,
            disp: 8,
            src: 9,
        });
        v.push(Insn::Xchg {
            size,
            base: 5,
            disp: 0,
            src: 2,
        });
    }
    v.extend([
        Insn::Bswap {
            size: Size::D,
            rd: 3,
        },
        Insn::Bswap {
            size: Size::Q,
            rd: 11,
        },
        Insn::Rol16 { rd: 2 },
        Insn::Or { rd: 1, rs: 2 },
        Insn::And { rd: 1, rs: 2 },
        Insn::Xor { rd: 1, rs: 2 },
        Insn::Add { rd: 1, rs: 2 },
        Insn::Sub { rd: 1, rs: 2 },
        Insn::Imul { rd: 1, rs: 2 },
        Insn::OrImm { rd: 0, imm: 0x100 },
        Insn::AndImm { rd: 3, imm: -8 },
        Insn::AddImm { rd: 3, imm: 1 },
        Insn::SubImm { rd: 3, imm: 1000 },
        Insn::XorImm { rd: 0, imm: 63 },
        Insn::XorImm {
            rd: 11,
            imm: 0x1000,
        },
        Insn::Bsr { rd: 1, rs: 11 },
        Insn::Bsf { rd: 11, rs: 2 },
        Insn::Cmove { rd: 7, rs: 11 },
        Insn::ShlImm { rd: 4, sh: 1 },
        Insn::ShrImm { rd: 4, sh: 12 },
        Insn::ShlCl { rd: 5 },
        Insn::ShrCl { rd: 5 },
        Insn::Not { rd: 6 },
        Insn::Neg { rd: 6 },
        Insn::CmpReg { ra: 1, rb: 2 },
        Insn::CmpImm { ra: 1, imm: 5 },
        Insn::Test { ra: 1, rb: 2 },
        Insn::TestImm { ra: 0, imm: 1 },
        Insn::Pause,
        Insn::Nop,
        Insn::Sfence,
        Insn::Lfence,
        Insn::Mfence,
        Insn::Invlpg { base: 13 },
        Insn::Clflush { base: 12 },
        Insn::Jmp { target: 2 },
        Insn::Ret,
        Insn::Label(2),
    ]);
    let (a, dis) = check(&v);
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
