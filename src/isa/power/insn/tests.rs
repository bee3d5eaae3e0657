//! Encoder and printer tests: spot words, operand checks, labels and
//! branch ranges, and that no operand value panics.

use super::*;

fn no_labels(_: Label) -> Option<u32> {
    None
}

fn bad(insn: Insn) {
    match assemble(&[Insn::Nop, insn.clone()], true) {
        Err(EncodeError::BadOperand { index: 1, .. }) => {}
        other => panic!("{insn:?}: expected BadOperand at 1, got {other:?}"),
    }
}

#[test]
fn known_words() {
    // Spot values from the ISA / objdump, independent of the external oracles.
    let w = |i: Insn| i.encode_word(0, &no_labels).unwrap();
    assert_eq!(w(Insn::Nop), 0x6000_0000);
    assert_eq!(w(Insn::Sync), 0x7c00_04ac);
    assert_eq!(w(Insn::Lwsync), 0x7c20_04ac);
    assert_eq!(w(Insn::Ptesync), 0x7c40_04ac);
    assert_eq!(w(Insn::Isync), 0x4c00_012c);
    assert_eq!(w(Insn::Eieio), 0x7c00_06ac);
    assert_eq!(w(Insn::Tlbsync), 0x7c00_046c);
    // Linux ppc-opcode.h: PPC_RAW_SLBIA(IH), PPC_RAW_CP_ABORT.
    assert_eq!(w(Insn::Slbia { ih: 3 }), 0x7c00_03e4 | 3 << 21);
    assert_eq!(w(Insn::CpAbort), 0x7c00_068c);
    assert_eq!(w(Insn::Blr), 0x4e80_0020);
    assert_eq!(w(Insn::Mtctr { rs: 0 }), 0x7c09_03a6);
    assert_eq!(w(Insn::Mfctr { rt: 0 }), 0x7c09_02a6);
    let t = Insn::Tlbie {
        rb: 4,
        rs: 5,
        ric: 0,
        prs: 1,
        r: 1,
    };
    assert_eq!(w(t), 0x7ca3_2264);
    // Book III-E, as GNU as -me6500 assembles them (and Linux
    // ppc-opcode.h PPC_RAW_TLBILX / PPC_RAW_TLBIVAX for the first four).
    let b3e = [
        (Insn::Tlbilx { t: 0, ra: 0, rb: 0 }, 0x7c00_0024),
        (Insn::Tlbilx { t: 1, ra: 0, rb: 0 }, 0x7c20_0024),
        (Insn::Tlbilx { t: 3, ra: 0, rb: 3 }, 0x7c60_1824),
        (Insn::Tlbivax { ra: 0, rb: 3 }, 0x7c00_1e24),
        (Insn::Tlbsx { ra: 0, rb: 3 }, 0x7c00_1f24),
        (Insn::Tlbre, 0x7c00_0764),
        (Insn::Tlbwe, 0x7c00_07a4),
        (Insn::Msync, 0x7c00_04ac),
        (Insn::Mbar { mo: 0 }, 0x7c00_06ac),
        (Insn::Mbar { mo: 1 }, 0x7c20_06ac),
        (
            Insn::Mtspr {
                spr: Spr::Mas(6),
                rs: 4,
            },
            0x7c96_9ba6,
        ),
        (
            Insn::Mfspr {
                rt: 4,
                spr: Spr::Mas(1),
            },
            0x7c91_9aa6,
        ),
        (Insn::Wrteei { e: false }, 0x7c00_0146),
        (Insn::Wrteei { e: true }, 0x7c00_8146),
        (Insn::Wrtee { rs: 10 }, 0x7d40_0106),
        (Insn::Mfmsr { rt: 10 }, 0x7d40_00a6),
    ];
    for (i, word) in b3e {
        assert_eq!(w(i.clone()), word, "{i:?}");
    }
    assert_eq!(w(Insn::Msync), w(Insn::Sync));
    assert_eq!(w(Insn::Mbar { mo: 0 }), w(Insn::Eieio));
    for n in 0..9 {
        let spr = Spr::Mas(n);
        assert_eq!(Spr::from_number(spr.number().unwrap()), Some(spr));
    }
    // cntlzd r3,r4 / cnttzd r3,r4 / popcntd r3,r4 (ISA v3.0B 3.3.13).
    assert_eq!(w(Insn::Cntlzd { ra: 3, rs: 4 }), 0x7c83_0074);
    assert_eq!(w(Insn::Cnttzd { ra: 3, rs: 4 }), 0x7c83_0474);
    assert_eq!(w(Insn::Popcntd { ra: 3, rs: 4 }), 0x7c83_03f4);
}

#[test]
fn out_of_range_registers() {
    bad(Insn::Li { rt: 32, imm: 0 });
    bad(Insn::Addi {
        rt: 1,
        ra: 255,
        imm: 0,
    });
    bad(Insn::Or {
        ra: 1,
        rs: 2,
        rb: 32,
    });
    bad(Insn::Mr { ra: 40, rs: 2 });
    bad(Insn::Stdcx {
        rs: 1,
        ra: 2,
        rb: 99,
    });
    bad(Insn::Lwarx {
        rt: 32,
        ra: 0,
        rb: 1,
        eh: true,
    });
    bad(Insn::Mtctr { rs: 32 });
}

#[test]
fn out_of_range_fields() {
    bad(Insn::Cmpdi {
        bf: 8,
        ra: 3,
        imm: 0,
    });
    bad(Insn::Cmplw {
        bf: 255,
        ra: 3,
        rb: 4,
    });
    bad(Insn::Rldicl {
        ra: 3,
        rs: 4,
        sh: 64,
        mb: 0,
    });
    bad(Insn::Rldicr {
        ra: 3,
        rs: 4,
        sh: 0,
        me: 64,
    });
    bad(Insn::Rldimi {
        ra: 3,
        rs: 4,
        sh: 0,
        mb: 200,
    });
    bad(Insn::Std { rs: 3, d: 6, ra: 1 });
    bad(Insn::Ld {
        rt: 3,
        d: -2,
        ra: 1,
    });
    bad(Insn::Crxor {
        bt: 32,
        ba: 0,
        bb: 0,
    });
    bad(Insn::Tlbie {
        rb: 1,
        rs: 2,
        ric: 4,
        prs: 0,
        r: 0,
    });
    bad(Insn::Tlbie {
        rb: 1,
        rs: 2,
        ric: 0,
        prs: 2,
        r: 0,
    });
    bad(Insn::Tlbiel {
        rb: 1,
        rs: 2,
        ric: 0,
        prs: 0,
        r: 2,
    });
    // Bc: bf checked even though the target resolves.
    match assemble(
        &[
            Insn::Label(1),
            Insn::Bc {
                cond: Cond::Eq,
                bf: 8,
                target: 1,
            },
        ],
        true,
    ) {
        Err(EncodeError::BadOperand { index: 1, .. }) => {}
        other => panic!("got {other:?}"),
    }
}

#[test]
fn out_of_range_book3e_operands() {
    bad(Insn::Tlbilx { t: 2, ra: 0, rb: 3 });
    bad(Insn::Tlbilx { t: 4, ra: 0, rb: 3 });
    bad(Insn::Tlbilx {
        t: 3,
        ra: 32,
        rb: 3,
    });
    bad(Insn::Tlbivax { ra: 0, rb: 32 });
    bad(Insn::Tlbsx { ra: 33, rb: 1 });
    bad(Insn::Mbar { mo: 32 });
    bad(Insn::Mtspr {
        spr: Spr::Mas(9),
        rs: 4,
    });
    bad(Insn::Mfspr {
        rt: 32,
        spr: Spr::Mas(0),
    });
    bad(Insn::Wrtee { rs: 32 });
    bad(Insn::Mfmsr { rt: 40 });
}

#[test]
fn edge_operands_encode() {
    assert!(assemble(
        &[Insn::Std {
            rs: 31,
            d: -32768,
            ra: 31
        }],
        true
    )
    .is_ok());
    assert!(assemble(
        &[Insn::Rldimi {
            ra: 0,
            rs: 31,
            sh: 63,
            mb: 63
        }],
        false
    )
    .is_ok());
}

/// Every variant with arbitrary u8 operands: `assemble`, `encode_word`
/// and `text` must return (Ok or Err), never panic.
#[rustfmt::skip]
fn every_shape(a: u8, b: u8, c: u8, d: u8) -> Vec<Insn> {
    use Insn::*;
    let (i, u, e) = (i16::from(d) * 3 - 2, u16::from(d), d % 2 == 1);
    vec![
        Li { rt: a, imm: i }, Lis { rt: a, imm: i }, Addi { rt: a, ra: b, imm: i }, Addis { rt: a, ra: b, imm: i },
        Ori { ra: a, rs: b, imm: u }, Oris { ra: a, rs: b, imm: u }, Xori { ra: a, rs: b, imm: u },
        Xoris { ra: a, rs: b, imm: u }, AndiDot { ra: a, rs: b, imm: u }, AndisDot { ra: a, rs: b, imm: u }, AddicDot { rt: a, ra: b, imm: i },
        Or { ra: a, rs: b, rb: c }, And { ra: a, rs: b, rb: c }, Xor { ra: a, rs: b, rb: c },
        Andc { ra: a, rs: b, rb: c }, Nor { ra: a, rs: b, rb: c }, Add { rt: a, ra: b, rb: c },
        Subf { rt: a, ra: b, rb: c }, Neg { rt: a, ra: b }, Mulld { rt: a, ra: b, rb: c },
        Sld { ra: a, rs: b, rb: c }, Srd { ra: a, rs: b, rb: c },
        Cntlzd { ra: a, rs: b }, Cnttzd { ra: b, rs: c }, Popcntd { ra: c, rs: a },
        Rldicl { ra: a, rs: b, sh: c, mb: d }, Rldicr { ra: a, rs: b, sh: c, me: d },
        Rldic { ra: a, rs: b, sh: c, mb: d }, Rldimi { ra: a, rs: b, sh: c, mb: d }, Rlwinm { ra: a, rs: b, sh: c % 32, mb: d % 32, me: c % 32 }, Mr { ra: a, rs: b },
        Std { rs: a, d: i, ra: b }, Stw { rs: a, d: i, ra: b }, Sth { rs: a, d: i, ra: b }, Stb { rs: a, d: i, ra: b },
        Ld { rt: a, d: i, ra: b }, LdArg { rt: a, d: i, param: c }, Lwz { rt: a, d: i, ra: b }, Lhz { rt: a, d: i, ra: b }, Lbz { rt: a, d: i, ra: b },
        Stdx { rs: a, ra: b, rb: c }, Stwx { rs: a, ra: b, rb: c }, Sthx { rs: a, ra: b, rb: c }, Stbx { rs: a, ra: b, rb: c },
        Ldx { rt: a, ra: b, rb: c }, Lwzx { rt: a, ra: b, rb: c }, Lhzx { rt: a, ra: b, rb: c }, Lbzx { rt: a, ra: b, rb: c },
        Stdbrx { rs: a, ra: b, rb: c }, Stwbrx { rs: a, ra: b, rb: c }, Sthbrx { rs: a, ra: b, rb: c },
        Ldbrx { rt: a, ra: b, rb: c }, Lwbrx { rt: a, ra: b, rb: c }, Lhbrx { rt: a, ra: b, rb: c },
        Lbarx { rt: a, ra: b, rb: c, eh: e }, Lharx { rt: a, ra: b, rb: c, eh: e },
        Lwarx { rt: a, ra: b, rb: c, eh: e }, Ldarx { rt: a, ra: b, rb: c, eh: e },
        Stbcx { rs: a, ra: b, rb: c }, Sthcx { rs: a, ra: b, rb: c }, Stwcx { rs: a, ra: b, rb: c }, Stdcx { rs: a, ra: b, rb: c },
        Cmpdi { bf: d, ra: a, imm: i }, Cmpldi { bf: d, ra: a, imm: u }, Cmpd { bf: d, ra: a, rb: b }, Cmpld { bf: d, ra: a, rb: b },
        Cmpwi { bf: d, ra: a, imm: i }, Cmplwi { bf: d, ra: a, imm: u }, Cmpw { bf: d, ra: a, rb: b }, Cmplw { bf: d, ra: a, rb: b },
        Crxor { bt: a, ba: b, bb: c },
        B { target: u32::from(a) }, Bc { cond: Cond::Le, bf: d, target: u32::from(b) }, Bdnz { target: u32::from(c) },
        Blr, Mtctr { rs: a }, Mfctr { rt: b }, Eieio, Sync, Lwsync, Ptesync, Isync, Tlbsync, Nop,
        Tlbilx { t: d, ra: a, rb: b }, Tlbivax { ra: a, rb: c }, Tlbsx { ra: b, rb: c }, Tlbre, Tlbwe,
        Msync, Mbar { mo: c }, Mtspr { spr: Spr::Mas(d), rs: a }, Mfspr { rt: b, spr: Spr::Mas(c) },
        Wrteei { e }, Wrtee { rs: a }, Mfmsr { rt: c },
        Tlbie { rb: a, rs: b, ric: c, prs: d, r: a }, Tlbiel { rb: b, rs: a, ric: d, prs: c, r: b },
        Slbia { ih: c }, CpAbort,
        Label(u32::from(d)),
    ]
}

#[test]
fn never_panics() {
    let vals = [0u8, 1, 3, 4, 7, 8, 31, 32, 63, 64, 127, 128, 255];
    let any = |_: Label| Some(u32::MAX - 3);
    let mut errs = 0;
    for &a in &vals {
        for &b in &vals {
            for &c in &vals {
                for &d in &vals {
                    let shapes = every_shape(a, b, c, d);
                    for (k, insn) in shapes.iter().enumerate() {
                        let _ = insn.text(RegStyle::Bare, &|l| format!("L{l}"));
                        let _ = insn.encode_word(0, &any);
                        if assemble(std::slice::from_ref(insn), k % 2 == 0).is_err() {
                            errs += 1;
                        }
                    }
                    let _ = assemble(&shapes, true);
                }
            }
        }
    }
    assert!(errs > 0);
}

#[test]
fn label_errors() {
    assert_eq!(
        assemble(&[Insn::B { target: 7 }], true),
        Err(EncodeError::UndefinedLabel(7))
    );
    assert_eq!(
        assemble(&[Insn::Bdnz { target: 3 }, Insn::Label(4)], false),
        Err(EncodeError::UndefinedLabel(3))
    );
    assert_eq!(
        assemble(&[Insn::Label(1), Insn::Nop, Insn::Label(1)], true),
        Err(EncodeError::DuplicateLabel(1))
    );
    assert!(matches!(
        Insn::Label(0).encode_word(0, &no_labels),
        Err(EncodeError::BadOperand { .. })
    ));
}

#[test]
fn branch_ranges() {
    // bc reaches +-32 KiB: target 0x7ffc ok, 0x8000 not; -0x8000 ok.
    let at = |a: u32| move |_: Label| Some(a);
    let bc = Insn::Bc {
        cond: Cond::Ne,
        bf: 0,
        target: 0,
    };
    assert!(bc.encode_word(0, &at(0x7ffc)).is_ok());
    assert_eq!(
        bc.encode_word(0, &at(0x8000)),
        Err(EncodeError::BranchOutOfRange { index: 0 })
    );
    assert!(bc.encode_word(0x8000, &at(0)).is_ok());
    assert!(bc.encode_word(0x8004, &at(0)).is_err());
    // b reaches +-32 MiB.
    let b = Insn::B { target: 0 };
    assert!(b.encode_word(0, &at(0x01ff_fffc)).is_ok());
    assert!(b.encode_word(0, &at(0x0200_0000)).is_err());
    assert_eq!(
        b.encode_word(0x0200_0000, &at(0)).unwrap(),
        0x4a00_0000 // LI = -2^23 words: sign bit of the 24-bit field set
    );
    // Misaligned target from a custom resolver: error, not panic.
    assert!(b.encode_word(0, &at(2)).is_err());
    // Extreme addresses do not overflow.
    assert!(b.encode_word(u32::MAX, &at(0)).is_err());
    // Out-of-range inside assemble reports the slice index.
    let mut prog = vec![
        Insn::Nop,
        Insn::Bc {
            cond: Cond::Eq,
            bf: 7,
            target: 9,
        },
    ];
    prog.extend(std::iter::repeat_n(Insn::Nop, 0x2000));
    prog.push(Insn::Label(9));
    assert_eq!(
        assemble(&prog, true),
        Err(EncodeError::BranchOutOfRange { index: 1 })
    );
}

#[test]
fn offsets_and_classes() {
    let prog = [
        Insn::Label(0),
        Insn::Nop,
        Insn::Label(1),
        Insn::Label(2),
        Insn::Sync,
    ];
    let a = assemble(&prog, false).unwrap();
    assert_eq!(a.offsets, vec![0, 0, 4, 4, 4]);
    assert_eq!(a.bytes, vec![0, 0, 0, 0x60, 0xac, 0x04, 0, 0x7c]);
    assert!(Insn::Stwcx {
        rs: 1,
        ra: 2,
        rb: 3
    }
    .is_store());
    assert!(Insn::Ldarx {
        rt: 1,
        ra: 2,
        rb: 3,
        eh: false
    }
    .is_load());
    assert!(!Insn::Li { rt: 1, imm: 0 }.is_load());
    assert!(Insn::Ptesync.is_barrier());
    assert!(Insn::Tlbiel {
        rb: 1,
        rs: 0,
        ric: 0,
        prs: 0,
        r: 0
    }
    .is_invalidate());
    assert_eq!(Insn::Label(3).mnemonic(), "");
    for i in [
        Insn::Cntlzd { ra: 3, rs: 4 },
        Insn::Cnttzd { ra: 3, rs: 4 },
        Insn::Popcntd { ra: 3, rs: 4 },
    ] {
        assert!(!i.is_load() && !i.is_store() && !i.is_barrier() && !i.is_invalidate());
    }
}
