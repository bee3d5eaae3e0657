//! Encoder and printer tests: spot words, labels and branch ranges, and
//! that every operand a field holds encodes.

use super::*;

fn no_labels(_: Label) -> Option<u32> {
    None
}

/// `r<n>` for the tests' tables.
fn g(n: u8) -> Reg {
    Reg::maybe_from(u64::from(n)).expect("r0..r31")
}

fn mas(n: u8) -> Spr {
    Spr::Mas(Mas::maybe_from(u64::from(n)).expect("MAS0..MAS8"))
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
    assert_eq!(w(Insn::Slbia { ih: Ih::of::<3>() }), 0x7c00_03e4 | 3 << 21);
    assert_eq!(w(Insn::CpAbort), 0x7c00_068c);
    assert_eq!(w(Insn::Blr), 0x4e80_0020);
    assert_eq!(w(Insn::Mtctr { rs: g(0) }), 0x7c09_03a6);
    assert_eq!(w(Insn::Mfctr { rt: g(0) }), 0x7c09_02a6);
    let t = Insn::Tlbie {
        rb: g(4),
        rs: g(5),
        ric: Ric::of::<0>(),
        prs: true,
        r: true,
    };
    assert_eq!(w(t), 0x7ca3_2264);
    // Book III-E, as GNU as -me6500 assembles them (and Linux
    // ppc-opcode.h PPC_RAW_TLBILX / PPC_RAW_TLBIVAX for the first four).
    let b3e = [
        (
            Insn::Tlbilx {
                t: TlbilxT::of::<0>(),
                ra: g(0),
                rb: g(0),
            },
            0x7c00_0024,
        ),
        (
            Insn::Tlbilx {
                t: TlbilxT::of::<1>(),
                ra: g(0),
                rb: g(0),
            },
            0x7c20_0024,
        ),
        (
            Insn::Tlbilx {
                t: TlbilxT::of::<3>(),
                ra: g(0),
                rb: g(3),
            },
            0x7c60_1824,
        ),
        (Insn::Tlbivax { ra: g(0), rb: g(3) }, 0x7c00_1e24),
        (Insn::Tlbsx { ra: g(0), rb: g(3) }, 0x7c00_1f24),
        (Insn::Tlbre, 0x7c00_0764),
        (Insn::Tlbwe, 0x7c00_07a4),
        (Insn::Msync, 0x7c00_04ac),
        (Insn::Mbar { mo: Mo::of::<0>() }, 0x7c00_06ac),
        (Insn::Mbar { mo: Mo::of::<1>() }, 0x7c20_06ac),
        (
            Insn::Mtspr {
                spr: mas(6),
                rs: g(4),
            },
            0x7c96_9ba6,
        ),
        (
            Insn::Mfspr {
                rt: g(4),
                spr: mas(1),
            },
            0x7c91_9aa6,
        ),
        (Insn::Wrteei { e: false }, 0x7c00_0146),
        (Insn::Wrteei { e: true }, 0x7c00_8146),
        (Insn::Wrtee { rs: g(10) }, 0x7d40_0106),
        (Insn::Mfmsr { rt: g(10) }, 0x7d40_00a6),
    ];
    for (i, word) in b3e {
        assert_eq!(w(i.clone()), word, "{i:?}");
    }
    assert_eq!(w(Insn::Msync), w(Insn::Sync));
    assert_eq!(w(Insn::Mbar { mo: Mo::of::<0>() }), w(Insn::Eieio));
    for n in 0..9 {
        let spr = mas(n);
        assert_eq!(Spr::from_number(spr.number()), Some(spr));
    }
    // cntlzd r3,r4 / cnttzd r3,r4 / popcntd r3,r4 (ISA v3.0B 3.3.13).
    assert_eq!(w(Insn::Cntlzd { ra: g(3), rs: g(4) }), 0x7c83_0074);
    assert_eq!(w(Insn::Cnttzd { ra: g(3), rs: g(4) }), 0x7c83_0474);
    assert_eq!(w(Insn::Popcntd { ra: g(3), rs: g(4) }), 0x7c83_03f4);
}

#[test]
fn edge_operands_encode() {
    let std = Insn::Std {
        rs: g(31),
        d: Ds::of::<-32768>(),
        ra: g(31),
    };
    assert_eq!(std.encode_word(0, &no_labels), Ok(0xfbff_8000));
    let rldimi = Insn::Rldimi {
        ra: g(0),
        rs: g(31),
        sh: Sh6::of::<63>(),
        mb: Mb6::of::<63>(),
    };
    assert!(assemble(&[rldimi], false).is_ok());
}

/// Every variant, with registers `a`, `b`, `c` and the fields built from
/// `d` (each field's value `d` wrapped into its range).
#[rustfmt::skip]
fn every_shape(a: Reg, b: Reg, c: Reg, d: u8) -> Vec<Insn> {
    use Insn::*;
    let (i, u, e) = (i16::from(d) * 3 - 2, u16::from(d), d % 2 == 1);
    let v = u64::from(d);
    let (sh, mb) = (Sh6::maybe_from(v % 64).unwrap(), Mb6::maybe_from(63 - v % 64).unwrap());
    let w = |x: u64| Mb5::maybe_from(x % 32).unwrap();
    let (sh5, bf) = (Sh5::maybe_from(v % 32).unwrap(), CrField::maybe_from(v % 8).unwrap());
    let bit = |x: Reg| CrBit::maybe_from(u64::from(x.get())).unwrap();
    let ds = Ds::maybe_from(i64::from(i) * 4).unwrap();
    let t = TlbilxT::maybe_from([0, 1, 3][usize::from(d) % 3]).unwrap();
    let ric = Ric::maybe_from(v % 4).unwrap();
    let spr = mas(d % 9);
    vec![
        Li { rt: a, imm: i }, Lis { rt: a, imm: i }, Addi { rt: a, ra: b, imm: i }, Addis { rt: a, ra: b, imm: i },
        Ori { ra: a, rs: b, imm: u }, Oris { ra: a, rs: b, imm: u }, Xori { ra: a, rs: b, imm: u },
        Xoris { ra: a, rs: b, imm: u }, AndiDot { ra: a, rs: b, imm: u }, AndisDot { ra: a, rs: b, imm: u }, AddicDot { rt: a, ra: b, imm: i },
        Or { ra: a, rs: b, rb: c }, And { ra: a, rs: b, rb: c }, Xor { ra: a, rs: b, rb: c },
        Andc { ra: a, rs: b, rb: c }, Nor { ra: a, rs: b, rb: c }, Add { rt: a, ra: b, rb: c },
        Subf { rt: a, ra: b, rb: c }, Neg { rt: a, ra: b }, Mulld { rt: a, ra: b, rb: c },
        Sld { ra: a, rs: b, rb: c }, Srd { ra: a, rs: b, rb: c },
        Cntlzd { ra: a, rs: b }, Cnttzd { ra: b, rs: c }, Popcntd { ra: c, rs: a },
        Rldicl { ra: a, rs: b, sh, mb }, Rldicr { ra: a, rs: b, sh, me: mb },
        Rldic { ra: a, rs: b, sh, mb }, Rldimi { ra: a, rs: b, sh, mb }, Rlwinm { ra: a, rs: b, sh: sh5, mb: w(v), me: w(v + 7) }, Mr { ra: a, rs: b },
        Std { rs: a, d: ds, ra: b }, Stw { rs: a, d: i, ra: b }, Sth { rs: a, d: i, ra: b }, Stb { rs: a, d: i, ra: b },
        Ld { rt: a, d: ds, ra: b }, LdArg { rt: a, d: ds, param: d }, Lwz { rt: a, d: i, ra: b }, Lhz { rt: a, d: i, ra: b }, Lbz { rt: a, d: i, ra: b },
        Stdx { rs: a, ra: b, rb: c }, Stwx { rs: a, ra: b, rb: c }, Sthx { rs: a, ra: b, rb: c }, Stbx { rs: a, ra: b, rb: c },
        Ldx { rt: a, ra: b, rb: c }, Lwzx { rt: a, ra: b, rb: c }, Lhzx { rt: a, ra: b, rb: c }, Lbzx { rt: a, ra: b, rb: c },
        Stdbrx { rs: a, ra: b, rb: c }, Stwbrx { rs: a, ra: b, rb: c }, Sthbrx { rs: a, ra: b, rb: c },
        Ldbrx { rt: a, ra: b, rb: c }, Lwbrx { rt: a, ra: b, rb: c }, Lhbrx { rt: a, ra: b, rb: c },
        Lbarx { rt: a, ra: b, rb: c, eh: e }, Lharx { rt: a, ra: b, rb: c, eh: e },
        Lwarx { rt: a, ra: b, rb: c, eh: e }, Ldarx { rt: a, ra: b, rb: c, eh: e },
        Stbcx { rs: a, ra: b, rb: c }, Sthcx { rs: a, ra: b, rb: c }, Stwcx { rs: a, ra: b, rb: c }, Stdcx { rs: a, ra: b, rb: c },
        Cmpdi { bf, ra: a, imm: i }, Cmpldi { bf, ra: a, imm: u }, Cmpd { bf, ra: a, rb: b }, Cmpld { bf, ra: a, rb: b },
        Cmpwi { bf, ra: a, imm: i }, Cmplwi { bf, ra: a, imm: u }, Cmpw { bf, ra: a, rb: b }, Cmplw { bf, ra: a, rb: b },
        Crxor { bt: bit(a), ba: bit(b), bb: bit(c) },
        B { target: 0 }, Bc { cond: Cond::Le, bf, target: 0 }, Bdnz { target: 0 },
        Blr, Mtctr { rs: a }, Mfctr { rt: b }, Eieio, Sync, Lwsync, Ptesync, Isync, Tlbsync, Nop,
        Tlbilx { t, ra: a, rb: b }, Tlbivax { ra: a, rb: c }, Tlbsx { ra: b, rb: c }, Tlbre, Tlbwe,
        Msync, Mbar { mo: Mo::maybe_from(v % 32).unwrap() }, Mtspr { spr, rs: a }, Mfspr { rt: b, spr },
        Wrteei { e }, Wrtee { rs: a }, Mfmsr { rt: c },
        Tlbie { rb: a, rs: b, ric, prs: e, r: !e }, Tlbiel { rb: b, rs: a, ric, prs: !e, r: e },
        Slbia { ih: Ih::maybe_from(v % 8).unwrap() }, CpAbort,
    ]
}

/// Operands are valid when built: every one a field holds encodes and
/// prints, the edges included.
#[test]
fn every_operand_encodes() {
    let regs = [0, 1, 3, 4, 7, 8, 31].map(g);
    let here = |_: Label| Some(0);
    for &a in &regs {
        for &b in &regs {
            for c in [g(0), g(17), g(31)] {
                for d in [0u8, 1, 3, 7, 8, 31, 32, 63, 64, 127, 255] {
                    for insn in every_shape(a, b, c, d) {
                        assert!(!insn.text(RegStyle::Bare, &|l| format!("L{l}")).is_empty());
                        assert!(insn.encode_word(0, &here).is_ok(), "{insn:?}");
                    }
                }
            }
        }
    }
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
        bf: CrField::of::<0>(),
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
            bf: CrField::of::<7>(),
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
        rs: g(1),
        ra: g(2),
        rb: g(3)
    }
    .is_store());
    assert!(Insn::Ldarx {
        rt: g(1),
        ra: g(2),
        rb: g(3),
        eh: false
    }
    .is_load());
    assert!(!Insn::Li { rt: g(1), imm: 0 }.is_load());
    assert!(Insn::Ptesync.is_barrier());
    assert!(Insn::Tlbiel {
        rb: g(1),
        rs: g(0),
        ric: Ric::of::<0>(),
        prs: false,
        r: false
    }
    .is_invalidate());
    assert_eq!(Insn::Label(3).mnemonic(), "");
    for i in [
        Insn::Cntlzd { ra: g(3), rs: g(4) },
        Insn::Cnttzd { ra: g(3), rs: g(4) },
        Insn::Popcntd { ra: g(3), rs: g(4) },
    ] {
        assert!(!i.is_load() && !i.is_store() && !i.is_barrier() && !i.is_invalidate());
    }
}
