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

/// The text, labels spelled `L<n>`.
fn text(i: &Insn) -> String {
    i.text(&|l| format!("L{l}"))
}

fn scaled(bytes: u64, size: Size) -> UImm12Scaled {
    UImm12Scaled::maybe_from(bytes, size).expect("an encodable offset")
}

/// Constants checked when compiled (`of`), usable in `const` items.
const MAX_SHIFT: ImmShift = ImmShift::of::<63>();
const TOP_BYTE: Bitfield = Bitfield::of::<56, 8>();
const BYTE_MASK: ImmLogic = ImmLogic::of::<0xff>();

#[test]
fn imm12_is_0_to_4095() {
    for v in 0..=8191u64 {
        let imm = Imm12::maybe_from(v);
        assert_eq!(imm.is_some(), v <= 4095, "{v}");
        if let Some(imm) = imm {
            assert_eq!(u64::from(imm.get()), v);
        }
    }
    assert_eq!(Imm12::maybe_from(u64::MAX), None);
    assert_eq!(Imm12::of::<4095>().get(), 4095);
}

#[test]
fn sp_adjust_is_a_multiple_of_16_below_4096() {
    for v in 0..=8191u64 {
        let adj = SpAdjust::maybe_from(v);
        assert_eq!(adj.is_some(), v <= 4095 && v % 16 == 0, "{v}");
        if let Some(adj) = adj {
            assert_eq!(u64::from(adj.bytes()), v);
        }
    }
    assert_eq!(SpAdjust::of::<4080>().bytes(), 4080);
}

#[test]
fn move_wide_shift_is_0_16_32_or_48() {
    for shift in 0..=255u8 {
        let imm = MoveWide::maybe_from(0xabcd, shift);
        assert_eq!(imm.is_some(), matches!(shift, 0 | 16 | 32 | 48), "{shift}");
        if let Some(imm) = imm {
            assert_eq!((imm.bits(), imm.shift()), (0xabcd, shift));
            assert_eq!(imm.value(), 0xabcd << shift);
            assert_eq!(imm.inverted().bits(), 0x5432);
        }
    }
    let v = 0x1234_5678_9abc_def0u64;
    let chunks = MoveWide::halfwords(v);
    assert_eq!(chunks.iter().fold(0, |acc, c| acc | c.value()), v);
    assert_eq!(chunks.map(|c| c.shift()), [0, 16, 32, 48]);
    assert_eq!(MoveWide::of::<0, 48>().shift(), 48);
    assert_eq!(MoveWide::ZERO.value(), 0);
}

#[test]
fn shift_and_bitfield_stay_inside_the_register() {
    for v in 0..=255u64 {
        assert_eq!(
            ImmShift::maybe_from(v).map(|s| s.get().into()),
            (v < 64).then_some(v)
        );
    }
    for lsb in 0..=70u32 {
        for width in 0..=70u32 {
            let field = Bitfield::maybe_from(lsb, width);
            let inside = lsb < 64 && width >= 1 && width <= 64 - lsb;
            assert_eq!(field.is_some(), inside, "{lsb}, {width}");
            if let Some(f) = field {
                assert_eq!(
                    (u32::from(f.lsb().get()), u32::from(f.width())),
                    (lsb, width)
                );
                assert_eq!(f.reaches_top(), lsb + width == 64);
            }
        }
    }
    assert_eq!(MAX_SHIFT.get(), 63);
    assert!(TOP_BYTE.reaches_top());
    assert!(encode_one(&Insn::Ubfiz {
        rd: zr(0),
        rn: zr(1),
        field: Bitfield::of::<60, 4>(),
    })
    .is_ok());
}

#[test]
fn unencodable_logical_immediates_have_no_value() {
    for imm in [
        0u64,
        u64::MAX,
        0b101,
        0x1234,
        0x8000_0000_0000_0002,
        0x0001_0002_0003_0004,
    ] {
        assert_eq!(ImmLogic::maybe_from(imm), None, "{imm:#x}");
    }
    assert_eq!(BYTE_MASK.value(), 0xff);
}

/// Independent reference: every bitmask immediate built from its
/// definition (an element of 2..64 bits holding a run of 1..size-1 ones,
/// rotated right by 0..size-1 and replicated), with the fields the Arm
/// ARM gives it (C4.1.92 "Logical (immediate)": imms holds the element
/// size above a 0 and the run length - 1 below). There are exactly 5334;
/// the constructor must find each with these fields, and nothing else.
#[test]
fn logical_immediates_match_brute_force_enumeration() {
    let mut valid = std::collections::HashMap::new();
    for (size, n, size_bits) in [
        (2u32, 0u32, 0b11_1100u32),
        (4, 0, 0b11_1000),
        (8, 0, 0b11_0000),
        (16, 0, 0b10_0000),
        (32, 0, 0b00_0000),
        (64, 1, 0b00_0000),
    ] {
        let mask = u64::MAX >> (64 - size);
        for ones in 1..size {
            let run = (1u64 << ones) - 1;
            for r in 0..size {
                let elem = ((run >> r) | (run << ((size - r) % size))) & mask;
                let value = (0..64 / size).fold(0, |v, k| v | (elem << (k * size)));
                let fields = (n, r, size_bits | (ones - 1));
                assert_eq!(valid.insert(value, fields), None, "{value:#x} twice");
            }
        }
    }
    assert_eq!(valid.len(), 5334);
    for (&v, &fields) in &valid {
        let imm = ImmLogic::maybe_from(v).unwrap_or_else(|| panic!("{v:#x} rejected"));
        assert_eq!((imm.value(), imm.fields()), (v, fields), "{v:#x}");
        assert!(encode_one(&Insn::OrrImm {
            rd: xr(1),
            rn: zr(2),
            imm
        })
        .is_ok());
        // One bit off a bitmask immediate is usually none.
        for bit in 0..64 {
            let w = v ^ (1 << bit);
            assert_eq!(ImmLogic::maybe_from(w).is_some(), valid.contains_key(&w));
        }
    }
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    for _ in 0..100_000 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        assert_eq!(
            ImmLogic::maybe_from(x).is_some(),
            valid.contains_key(&x),
            "{x:#x}"
        );
    }
}

#[test]
fn scaled_offsets_are_aligned_and_in_range() {
    for size in [Size::B, Size::H, Size::W, Size::X] {
        let unit = u64::from(size.bytes());
        for bytes in (0..=4100 * unit).chain([u64::MAX - unit + 1, u64::MAX]) {
            let off = UImm12Scaled::maybe_from(bytes, size);
            let fits = bytes % unit == 0 && bytes / unit <= 4095;
            assert_eq!(off.is_some(), fits, "{size:?} {bytes}");
            if let Some(off) = off {
                assert_eq!((u64::from(off.bytes()), off.size()), (bytes, size));
            }
        }
        let top = scaled(4095 * unit, size);
        assert!(encode_one(&Insn::Str {
            rt: zr(1),
            rn: sp(0),
            off: top
        })
        .is_ok());
        assert_eq!(UImm12Scaled::zero(size).bytes(), 0);
    }
}

#[test]
fn rejects_bad_immediates_and_register_combinations() {
    // Register numbers out of range, 31 where it would be SP, and
    // immediates out of range have no value of the operand types (see
    // `regs` and `imms`).
    // CONSTRAINED UNPREDICTABLE exclusive status register: rs == rt,
    // rs == rn, and wzr status with an sp base (GNU as warns).
    let stxr = |size, rs, rn| Insn::Stxr {
        size,
        rs: zr(rs),
        rt: zr(1),
        rn: sp(rn),
    };
    let stlxr = Insn::Stlxr {
        size: Size::W,
        rs: zr(0),
        rt: zr(1),
        rn: sp(0),
    };
    let rejected = [
        stxr(Size::X, 1, 0),
        stlxr,
        stxr(Size::B, 31, 31),
        // TLBI register presence.
        Insn::Tlbi {
            op: TlbiOp::Vae1is,
            rt: None,
        },
        Insn::Tlbi {
            op: TlbiOp::Vmalle1is,
            rt: Some(zr(0)),
        },
        // Branches and labels are not single-word encodable.
        Insn::B { target: 0 },
        Insn::Label(0),
    ];
    for i in &rejected {
        assert!(bad_at(0)(&encode_one(i)), "{i:?}");
    }
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
            Insn::Stxr {
                size: Size::X,
                rs: zr(1),
                rt: zr(1),
                rn: sp(0)
            }
        ]),
        Err(EncodeError::BadOperand {
            index: 2,
            what: "exclusive status register overlaps rt or rn"
        })
    );
    assert!(assemble(&[]).unwrap().bytes.is_empty());
}

/// `branch` (to label 0) over nops to the first word past its
/// `imm_bits`-bit word displacement: out of range; with one nop fewer it
/// reaches, and its word is returned.
fn word_at_reach_limit(branch: Insn, imm_bits: u32) -> [u8; 4] {
    let mut v = vec![branch];
    v.extend(std::iter::repeat_n(Insn::Nop, (1 << (imm_bits - 1)) - 1));
    v.push(Insn::Label(0));
    assert_eq!(
        assemble(&v),
        Err(EncodeError::BranchOutOfRange { index: 0 })
    );
    v.remove(1);
    let a = assemble(&v).unwrap();
    a.bytes[0..4].try_into().unwrap()
}

#[test]
fn b_range_limit() {
    // imm26: +-128 MiB, 2^25 words; disp = 2^27 - 4 -> imm26 = 0x1ffffff.
    let w = word_at_reach_limit(Insn::B { target: 0 }, 26);
    assert_eq!(w, 0x15ff_ffffu32.to_le_bytes());
}

/// TBZ's imm14: the last word it reaches forward and the first it does
/// not; the bit number splits into b5 (bit 31) and b40 (bits 19..23).
#[test]
fn tbz_range_limit_and_bit_fields() {
    let bit = ImmShift::maybe_from(47).unwrap();
    let tbnz = Insn::Tbnz {
        rt: zr(3),
        bit,
        target: 0,
    };
    // tbnz: b5=1 011011 1 b40=01111 imm14=0x1fff Rt=3
    let want = (1u32 << 31) | (0b011011 << 25) | (1 << 24) | (15 << 19) | (0x1fff << 5) | 3;
    assert_eq!(word_at_reach_limit(tbnz, 14), want.to_le_bytes());
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
    assert_eq!(text(&t), "tlbi rvale1is, x1");
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
    assert_eq!(text(&clz), "clz xzr, x2");
    assert_eq!(text(&rbit), "rbit x1, xzr");
    // Arm ARM C6.2 "CLZ" (sf=1: 0xdac01000), "RBIT" (0xdac00000); 31 is
    // XZR in either field.
    assert_eq!(encode_one(&clz), Ok(0xdac0_105f));
    assert_eq!(encode_one(&rbit), Ok(0xdac0_03e1));
    for (off, want) in [
        (scaled(0x7f4, Size::W), "str w2, [x0, #0x7f4]"),
        (scaled(8, Size::X), "str x2, [x0, #8]"),
    ] {
        let str = Insn::Str {
            rt: zr(2),
            rn: sp(0),
            off,
        };
        assert_eq!(text(&str), want);
    }
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

/// Random operands never panic, and every immediate form the
/// constructors let through encodes.
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
        let (rd, rn) = (xr(a % 31), xr(b % 31));
        let imm16 = (r >> 20) as u16;
        let size = [Size::B, Size::H, Size::W, Size::X][(r >> 40) as usize % 4];
        let u8v = (r >> 48) as u8;
        let imm12 = Imm12::maybe_from(imm16.into());
        let sh = ImmShift::maybe_from(u8v.into());
        let bits = Bitfield::maybe_from(u32::from(u8v % 70), u32::from((r >> 56) as u8 % 70));
        let off = UImm12Scaled::maybe_from(next() % 40_000, size);
        let (rt, base) = (zr(a), sp(b));
        let typed: Vec<Insn> = [
            MoveWide::maybe_from(imm16, u8v).map(|imm| Insn::Movz { rd: zr(a), imm }),
            ImmLogic::maybe_from(next() >> (r % 64)).map(|imm| Insn::AndImm { rd, rn: zr(b), imm }),
            imm12.map(|imm| Insn::AddImm {
                rd,
                rn,
                imm,
                lsl12: false,
            }),
            imm12.map(|imm| Insn::SubImm {
                rd,
                rn,
                imm,
                lsl12: true,
            }),
            imm12.map(|imm| Insn::SubsImm { rd: zr(a), rn, imm }),
            imm12.map(|imm| Insn::CmpImm { rn, imm }),
            sh.map(|sh| Insn::LslImm {
                rd: zr(a),
                rn: zr(b),
                sh,
            }),
            bits.map(|field| Insn::Ubfx {
                rd: zr(a),
                rn: zr(b),
                field,
            }),
            off.map(|off| Insn::Str { rt, rn: base, off }),
            off.map(|off| Insn::Ldr { rt, rn: base, off }),
        ]
        .into_iter()
        .flatten()
        .collect();
        for i in &typed {
            assert!(encode_one(i).is_ok(), "{i:?}");
        }
        let others = [
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
        for i in typed.iter().chain(&others) {
            let _ = encode_one(i);
            let _ = text(i);
        }
        let _ = assemble(&[typed, others.to_vec()].concat());
    }
}
