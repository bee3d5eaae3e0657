use super::*;

fn xr(n: u8) -> XReg {
    XReg::new(n).expect("x0..x30")
}

fn zr(n: u8) -> RegOrZr {
    RegOrZr::from_field(n).expect("a 5-bit field")
}

fn sp(n: u8) -> RegOrSp {
    RegOrSp::from_field(n).expect("a 5-bit field")
}

fn bad_at(index: usize) -> impl Fn(&Result<u32, EncodeError>) -> bool {
    move |r| matches!(r, Err(EncodeError::BadOperand { index: i, .. }) if *i == index)
}

#[test]
fn rejects_bad_move_wide_shift() {
    for shift in [1u8, 8, 15, 17, 47, 49, 64, 255] {
        for i in [
            Insn::Movz {
                rd: zr(0),
                imm: 1,
                shift,
            },
            Insn::Movk {
                rd: zr(0),
                imm: 1,
                shift,
            },
            Insn::Movn {
                rd: zr(0),
                imm: 1,
                shift,
            },
        ] {
            assert!(bad_at(0)(&encode_one(&i)), "{i:?}");
        }
    }
}

#[test]
fn rejects_bad_shift_and_bitfield() {
    let e = |i: Insn| encode_one(&i);
    assert!(bad_at(0)(&e(Insn::LslImm {
        rd: zr(0),
        rn: zr(1),
        sh: 64
    })));
    assert!(bad_at(0)(&e(Insn::LsrImm {
        rd: zr(0),
        rn: zr(1),
        sh: 200
    })));
    assert!(bad_at(0)(&e(Insn::Ubfx {
        rd: zr(0),
        rn: zr(1),
        lsb: 0,
        width: 0
    })));
    assert!(bad_at(0)(&e(Insn::Ubfx {
        rd: zr(0),
        rn: zr(1),
        lsb: 1,
        width: 64
    })));
    assert!(bad_at(0)(&e(Insn::Ubfiz {
        rd: zr(0),
        rn: zr(1),
        lsb: 64,
        width: 1
    })));
    assert!(bad_at(0)(&e(Insn::Ubfiz {
        rd: zr(0),
        rn: zr(1),
        lsb: 60,
        width: 5
    })));
    assert!(e(Insn::Ubfiz {
        rd: zr(0),
        rn: zr(1),
        lsb: 60,
        width: 4
    })
    .is_ok());
}

#[test]
fn rejects_unencodable_logical_immediates() {
    for imm in [
        0u64,
        u64::MAX,
        0b101,
        0x1234,
        0x8000_0000_0000_0002,
        0x0001_0002_0003_0004,
    ] {
        assert!(!logical_imm_encodable(imm), "{imm:#x}");
        assert!(bad_at(0)(&encode_one(&Insn::OrrImm {
            rd: xr(0),
            rn: zr(1),
            imm
        })));
        assert!(bad_at(0)(&encode_one(&Insn::AndImm {
            rd: xr(0),
            rn: zr(1),
            imm
        })));
    }
}

/// Independent reference: every value produced by the Arm ARM
/// `DecodeBitMasks` pseudocode (J1 shared pseudocode) over all N:immr:imms
/// is encodable (there are exactly 5334), and a sample of other values
/// is not.
#[test]
fn logical_immediate_matches_decode_bit_masks() {
    let mut valid = std::collections::HashSet::new();
    for n in 0..2u32 {
        for immr in 0..64u32 {
            for imms in 0..64u32 {
                let combined = (n << 6) | (!imms & 0x3f);
                if combined == 0 {
                    continue;
                }
                let len = 31 - combined.leading_zeros();
                if len < 1 {
                    continue;
                }
                let esize = 1u32 << len;
                let levels = esize - 1;
                let s = imms & levels;
                let r = immr & levels;
                if s == levels {
                    continue; // all-ones element is reserved
                }
                let welem: u64 = (1u64 << (s + 1)) - 1;
                let mask = if esize == 64 {
                    u64::MAX
                } else {
                    (1u64 << esize) - 1
                };
                let elem = ((welem >> r) | (welem << ((esize - r) % esize))) & mask;
                let mut v = 0u64;
                let mut k = 0;
                while k < 64 {
                    v |= elem << k;
                    k += esize;
                }
                valid.insert(v);
            }
        }
    }
    assert_eq!(valid.len(), 5334);
    for &v in &valid {
        assert!(logical_imm_encodable(v), "{v:#x}");
        assert!(encode_one(&Insn::OrrImm {
            rd: xr(1),
            rn: zr(2),
            imm: v
        })
        .is_ok());
    }
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    for _ in 0..100_000 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        assert_eq!(logical_imm_encodable(x), valid.contains(&x), "{x:#x}");
    }
}

#[test]
fn rejects_misaligned_or_out_of_range_offsets() {
    let cases = [
        (Size::H, 1u32),
        (Size::W, 2),
        (Size::X, 4),
        (Size::X, 0x7f4),
        (Size::B, 4096),
        (Size::H, 8192),
        (Size::W, 16384),
        (Size::X, 32768),
        (Size::X, u32::MAX),
    ];
    for (size, off) in cases {
        assert!(bad_at(0)(&encode_one(&Insn::Str {
            size,
            rt: zr(1),
            rn: sp(0),
            off
        })));
        assert!(bad_at(0)(&encode_one(&Insn::Ldr {
            size,
            rt: zr(1),
            rn: sp(0),
            off
        })));
    }
    for (size, off) in [
        (Size::B, 4095u32),
        (Size::H, 8190),
        (Size::W, 16380),
        (Size::X, 32760),
    ] {
        assert!(encode_one(&Insn::Str {
            size,
            rt: zr(1),
            rn: sp(0),
            off
        })
        .is_ok());
    }
}

#[test]
fn rejects_bad_immediates_and_register_combinations() {
    // Register numbers out of range, and 31 where it would be SP, have no
    // value of the operand types (see `regs`).
    let e = |i: Insn| encode_one(&i);
    assert!(bad_at(0)(&e(Insn::AddImm {
        rd: xr(0),
        rn: xr(1),
        imm: 4096
    })));
    assert!(bad_at(0)(&e(Insn::CmpImm {
        rn: xr(1),
        imm: u16::MAX
    })));
    // CONSTRAINED UNPREDICTABLE exclusive status register.
    assert!(bad_at(0)(&e(Insn::Stxr {
        size: Size::X,
        rs: zr(1),
        rt: zr(1),
        rn: sp(0)
    })));
    assert!(bad_at(0)(&e(Insn::Stlxr {
        size: Size::W,
        rs: zr(0),
        rt: zr(1),
        rn: sp(0)
    })));
    assert!(bad_at(0)(&e(Insn::Stxr {
        size: Size::B,
        rs: zr(31),
        rt: zr(1),
        rn: sp(31)
    })));
    // TLBI register presence.
    assert!(bad_at(0)(&e(Insn::Tlbi {
        op: TlbiOp::Vae1is,
        rt: None
    })));
    assert!(bad_at(0)(&e(Insn::Tlbi {
        op: TlbiOp::Vmalle1is,
        rt: Some(zr(0))
    })));
    // Branches and labels are not single-word encodable.
    assert!(bad_at(0)(&e(Insn::B { target: 0 })));
    assert!(bad_at(0)(&e(Insn::Label(0))));
}

#[test]
fn label_errors() {
    assert_eq!(
        assemble(&[
            Insn::Nop,
            Insn::Cbz {
                rt: zr(0),
                target: 9
            }
        ]),
        Err(EncodeError::UndefinedLabel(9))
    );
    assert_eq!(
        assemble(&[Insn::Label(1), Insn::Nop, Insn::Label(1)]),
        Err(EncodeError::DuplicateLabel(1))
    );
    // Error indices refer to the instruction list.
    assert_eq!(
        assemble(&[
            Insn::Label(1),
            Insn::Nop,
            Insn::LslImm {
                rd: zr(0),
                rn: zr(0),
                sh: 70
            }
        ]),
        Err(EncodeError::BadOperand {
            index: 2,
            what: "shift amount must be 0..=63"
        })
    );
    assert!(assemble(&[]).unwrap().bytes.is_empty());
}

#[test]
fn b_range_limit() {
    // imm26: +-128 MiB.  Build the program lazily sized: 2^25 words.
    let mut v = vec![Insn::B { target: 0 }];
    v.extend(std::iter::repeat_n(Insn::Nop, (1 << 25) - 1));
    v.push(Insn::Label(0));
    assert_eq!(
        assemble(&v),
        Err(EncodeError::BranchOutOfRange { index: 0 })
    );
    v.remove(1);
    let a = assemble(&v).unwrap();
    // disp = 2^27 - 4 -> imm26 = 0x1ffffff
    assert_eq!(&a.bytes[0..4], &0x15ff_ffffu32.to_le_bytes());
}

#[test]
fn display_and_predicates() {
    let e = EncodeError::BadOperand {
        index: 3,
        what: "x",
    };
    assert_eq!(e.to_string(), "instruction 3: bad operand: x");
    let _: &dyn std::error::Error = &e;
    assert!(Insn::Dsb(BarrierOpt::Ish).is_barrier());
    assert!(!Insn::Ldar {
        size: Size::X,
        rt: zr(0),
        rn: sp(1)
    }
    .is_barrier());
    let cas = Insn::Casa {
        size: Size::X,
        rs: zr(0),
        rt: zr(1),
        rn: sp(2),
    };
    assert!(cas.is_load() && cas.is_store());
    assert_eq!(cas.needs_arch(), Some("armv8.1-a"));
    let t = Insn::Tlbi {
        op: TlbiOp::Rvale1is,
        rt: Some(zr(1)),
    };
    assert!(t.is_invalidate() && !t.is_store());
    assert_eq!(t.needs_arch(), Some("armv8.4-a"));
    assert_eq!(
        Insn::Tlbi {
            op: TlbiOp::Vale1is,
            rt: Some(zr(1))
        }
        .needs_arch(),
        None
    );
    assert_eq!(
        Insn::Tlbi {
            op: TlbiOp::Vmalle1os,
            rt: None
        }
        .needs_arch(),
        Some("armv8.4-a")
    );
    assert_eq!(t.text(&|l| format!("L{l}")), "tlbi rvale1is, x1");
    let clz = Insn::Clz {
        rd: zr(31),
        rn: zr(2),
    };
    let rbit = Insn::Rbit {
        rd: zr(1),
        rn: zr(31),
    };
    for i in [&clz, &rbit] {
        assert!(!i.is_load() && !i.is_store() && !i.is_barrier() && !i.is_invalidate());
        assert_eq!(i.needs_arch(), None);
    }
    assert_eq!(clz.text(&|l| format!("L{l}")), "clz xzr, x2");
    assert_eq!(rbit.text(&|l| format!("L{l}")), "rbit x1, xzr");
    // Arm ARM C6.2 "CLZ" (sf=1: 0xdac01000), "RBIT" (0xdac00000).
    assert_eq!(
        encode_one(&Insn::Clz {
            rd: zr(0),
            rn: zr(1)
        }),
        Ok(0xdac0_1020)
    );
    assert_eq!(
        encode_one(&Insn::Rbit {
            rd: zr(0),
            rn: zr(1)
        }),
        Ok(0xdac0_0020)
    );
    assert_eq!(
        Insn::Str {
            size: Size::W,
            rt: zr(2),
            rn: sp(0),
            off: 0x7f4
        }
        .text(&|l| format!("L{l}")),
        "str w2, [x0, #0x7f4]"
    );
    assert_eq!(
        Insn::Str {
            size: Size::X,
            rt: zr(2),
            rn: sp(0),
            off: 8
        }
        .text(&|l| format!("L{l}")),
        "str x2, [x0, #8]"
    );
    assert_eq!(
        Insn::Stlxr {
            size: Size::H,
            rs: zr(1),
            rt: zr(2),
            rn: sp(3)
        }
        .mnemonic(),
        "stlxrh"
    );
    assert_eq!(
        Insn::BCond {
            cond: Cond::Lo,
            target: 0
        }
        .mnemonic(),
        "b.lo"
    );
}

/// Random operands (including out-of-range immediates) never panic.
#[test]
fn never_panics_on_random_operands() {
    let mut s = 0x1234_5678_9abc_def1u64;
    let mut next = move || {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        s
    };
    for _ in 0..20_000 {
        let r = next();
        // Register fields: 0..=31, and 0..=30 where 31 is not allowed.
        let field = |shift: u32| ((r >> shift) & 0x1f) as u8;
        let (a, b, c) = (field(0), field(6), field(12));
        let imm16 = (r >> 20) as u16;
        let size = [Size::B, Size::H, Size::W, Size::X][(r >> 40) as usize % 4];
        let off = (next() % 40_000) as u32;
        let u8v = (r >> 48) as u8;
        let insns = [
            Insn::Movz {
                rd: zr(a),
                imm: imm16,
                shift: u8v,
            },
            Insn::OrrImm {
                rd: xr(a % 31),
                rn: zr(b),
                imm: next(),
            },
            Insn::AndImm {
                rd: xr(a % 31),
                rn: zr(b),
                imm: next() >> (r % 64),
            },
            Insn::AddImm {
                rd: xr(a % 31),
                rn: xr(b % 31),
                imm: imm16,
            },
            Insn::SubsImm {
                rd: zr(a),
                rn: xr(b % 31),
                imm: imm16,
            },
            Insn::LslImm {
                rd: zr(a),
                rn: zr(b),
                sh: u8v,
            },
            Insn::Ubfiz {
                rd: zr(a),
                rn: zr(b),
                lsb: u8v,
                width: (r >> 56) as u8,
            },
            Insn::Ubfx {
                rd: zr(a),
                rn: zr(b),
                lsb: u8v % 70,
                width: (r >> 56) as u8 % 70,
            },
            Insn::Str {
                size,
                rt: zr(a),
                rn: sp(b),
                off,
            },
            Insn::Ldr {
                size,
                rt: zr(a),
                rn: sp(b),
                off,
            },
            Insn::LdrReg {
                size,
                rt: zr(a),
                rn: sp(b),
                rm: zr(c),
                scaled: r & 1 == 1,
            },
            Insn::Stxr {
                size,
                rs: zr(a),
                rt: zr(b),
                rn: sp(c),
            },
            Insn::Casa {
                size,
                rs: zr(a),
                rt: zr(b),
                rn: sp(c),
            },
            Insn::CmpImm {
                rn: xr(a % 31),
                imm: imm16,
            },
            Insn::Clz {
                rd: zr(a),
                rn: zr(b),
            },
            Insn::Rbit {
                rd: zr(c),
                rn: zr(a),
            },
            Insn::Tlbi {
                op: TlbiOp::Vae1is,
                rt: (r & 2 != 0).then(|| zr(a)),
            },
            Insn::Cbz {
                rt: zr(a),
                target: u32::from(u8v % 4),
            },
            Insn::Label(u32::from(u8v % 3)),
        ];
        for i in &insns {
            let _ = encode_one(i);
            let _ = i.text(&|l| format!("L{l}"));
        }
        let _ = assemble(&insns);
    }
}
