use super::*;
use crate::isa::lower_common::testing::BIN_OPS;
use crate::isa::test_values::bit_count_operands;
use crate::isa::x86_64::insn::BswapSize;

/// The interpreter's register file.
struct Regs([u64; 16]);

impl std::ops::Index<Gpr> for Regs {
    type Output = u64;
    fn index(&self, r: Gpr) -> &u64 {
        &self.0[usize::from(r.num())]
    }
}

impl std::ops::IndexMut<Gpr> for Regs {
    fn index_mut(&mut self, r: Gpr) -> &mut u64 {
        &mut self.0[usize::from(r.num())]
    }
}

/// A tiny interpreter for the register-only instructions the lowering
/// emits (encodings are checked against GNU as elsewhere, values end
/// to end in the native harness).
fn run(seq: &[Insn], regs: &mut Regs) {
    // ZF as the bit scans leave it (nothing else here reads flags).
    let mut zf = false;
    for i in seq {
        match *i {
            // `bsr` of 0 leaves the destination (AMD, and Linux's
            // `fls64()`); `bsf`'s is undefined for 0: poison it.
            Insn::Bsr { rd, rs } | Insn::Bsf { rd, rs } => {
                let x = regs[rs];
                zf = x == 0;
                regs[rd] = match (x, i) {
                    (0, Insn::Bsr { .. }) => regs[rd],
                    (0, _) => 0xdead_beef_dead_beef,
                    (_, Insn::Bsr { .. }) => 63 - u64::from(x.leading_zeros()),
                    _ => u64::from(x.trailing_zeros()),
                };
            }
            Insn::Cmove { rd, rs } => {
                if zf {
                    regs[rd] = regs[rs]
                }
            }
            Insn::XorImm { rd, imm } => regs[rd] ^= imm.get() as i64 as u64,
            Insn::ShlCl { rd } => regs[rd] <<= regs[RCX] & 63,
            Insn::Bts { rd, rn } => regs[rd] |= 1 << (regs[rn] & 63),
            Insn::ShrCl { rd } => regs[rd] >>= regs[RCX] & 63,
            Insn::MovImm { rd, imm } => regs[rd] = imm,
            Insn::MovReg { rd, rs } => regs[rd] = regs[rs],
            Insn::Lea {
                rd,
                base,
                index,
                disp,
            } => {
                let ix = index.map_or(0, |x| regs[x.reg()] * u64::from(x.scale().get()));
                regs[rd] = (regs[base].wrapping_add(ix)).wrapping_add(disp.get() as i64 as u64)
            }
            Insn::MovZx { size, rd, rs } => {
                let bits = match size {
                    Size::B => 8,
                    Size::W => 16,
                    Size::D => 32,
                    Size::Q => 64,
                };
                regs[rd] = regs[rs] & (u64::MAX >> (64 - bits))
            }
            Insn::And { rd, rs } => regs[rd] &= regs[rs],
            Insn::Or { rd, rs } => regs[rd] |= regs[rs],
            Insn::Xor { rd, rs } => regs[rd] ^= regs[rs],
            Insn::Add { rd, rs } => regs[rd] = regs[rd].wrapping_add(regs[rs]),
            Insn::Sub { rd, rs } => regs[rd] = regs[rd].wrapping_sub(regs[rs]),
            Insn::Imul { rd, rs } => regs[rd] = regs[rd].wrapping_mul(regs[rs]),
            Insn::AndImm { rd, imm } => regs[rd] &= imm.get() as i64 as u64,
            Insn::OrImm { rd, imm } => regs[rd] |= imm.get() as i64 as u64,
            Insn::AddImm { rd, imm } => regs[rd] = regs[rd].wrapping_add(imm.get() as i64 as u64),
            Insn::SubImm { rd, imm } => regs[rd] = regs[rd].wrapping_sub(imm.get() as i64 as u64),
            Insn::ShlImm { rd, sh } => regs[rd] <<= sh.get(),
            Insn::ShrImm { rd, sh } => regs[rd] >>= sh.get(),
            Insn::Not { rd } => regs[rd] = !regs[rd],
            Insn::Neg { rd } => regs[rd] = regs[rd].wrapping_neg(),
            ref other => panic!("unexpected {other:?}"),
        }
    }
}

/// Byte-swapped stores past disp32 (offsets 2 GiB..4 GiB): the right
/// address and bytes, the source and the base intact afterwards.
#[test]
fn swapped_stores_beyond_disp32() {
    let (base, src) = (RDI, RSI);
    for offset in [
        0x8000_0000u64,
        0x8000_0008,
        0xffff_fff8,
        0x1_0000_0000,
        0x7fff_fff8,
    ] {
        for (width, want) in [
            (64, 0x0807_0605_0403_0201u64),
            (32, 0x0807_0605),
            (16, 0x0807),
        ] {
            let mut seq = Vec::new();
            let a = Access::new(base, offset, width, true).unwrap();
            store(src, &a, &mut |i| seq.push(i)).unwrap();
            let mut regs = Regs([0; 16]);
            regs[base] = 0x7f00_0000_0000;
            regs[src] = 0x0102_0304_0506_0708;
            let mut stored = Vec::new();
            for i in &seq {
                match *i {
                    Insn::Store {
                        base: b,
                        index,
                        disp,
                        src: s,
                        ..
                    } => {
                        let idx =
                            index.map_or(0, |ix| regs[ix.reg()] * u64::from(ix.scale().get()));
                        let addr = regs[b]
                            .wrapping_add(idx)
                            .wrapping_add(disp.get() as i64 as u64);
                        stored.push((addr, regs[s] & (u64::MAX >> (64 - width))));
                    }
                    Insn::Bswap {
                        size: BswapSize::Q,
                        rd,
                    } => regs[rd] = regs[rd].swap_bytes(),
                    Insn::Bswap {
                        size: BswapSize::D,
                        rd,
                    } => regs[rd] = (regs[rd] as u32).swap_bytes() as u64,
                    Insn::Rol16 { rd } => {
                        let v = regs[rd];
                        regs[rd] = (v & !0xffff) | ((v as u16).rotate_left(8) as u64)
                    }
                    ref other => run(std::slice::from_ref(other), &mut regs),
                }
            }
            assert_eq!(
                stored,
                [(0x7f00_0000_0000 + offset, want)],
                "{offset:#x} u{width}: {seq:?}"
            );
            assert_eq!(regs[base], 0x7f00_0000_0000, "base moved: {seq:?}");
            assert_eq!(regs[src], 0x0102_0304_0506_0708);
        }
    }
}

#[test]
fn two_address_bin_handles_every_aliasing() {
    let (a, b) = (0x1234_5678_9abc_def0u64, 0x0fed_cba9_8765_4321u64);
    for op in BIN_OPS {
        if matches!(op, BinOp::Shl | BinOp::Shr) {
            continue;
        }
        // (rd, ra, rb): distinct, rd==ra, rd==rb, ra==rb, all equal.
        for (rd, ra, rb) in [
            (RAX, RCX, RDX),
            (RCX, RCX, RDX),
            (RDX, RCX, RDX),
            (RAX, RCX, RCX),
            (RCX, RCX, RCX),
        ] {
            let mut regs = Regs([0; 16]);
            regs[ra] = a;
            regs[rb] = b;
            let want = op.apply(regs[ra], regs[rb]);
            let mut seq = Vec::new();
            bin(op, rd, ra, Src::Reg(rb), true, &mut |i| seq.push(i)).unwrap();
            run(&seq, &mut regs);
            assert_eq!(regs[rd], want, "{op:?} {rd:?},{ra:?},{rb:?}: {seq:?}");
            if rb != rd {
                assert_eq!(regs[rb], b, "{op:?} clobbered b: {seq:?}");
            }
        }
    }
}

/// Every way rd, ra and the amount can share registers, rcx among
/// them or not, with and without a value living in rcx.
#[test]
fn shift_by_register_handles_rcx_in_every_role() {
    let (a, n, other) = (0x8123_4567_89ab_cdefu64, 0x47u64, 0x5a5a_0000_1111_2222u64);
    for shl in [true, false] {
        let op = if shl { BinOp::Shl } else { BinOp::Shr };
        let cands = [RCX, RAX, RDX, RSI];
        for rd in cands {
            for ra in cands {
                for rn in cands {
                    for rcx_live in [true, false] {
                        if !rcx_live && (ra == RCX || rn == RCX) {
                            continue;
                        }
                        let mut regs = Regs([0; 16]);
                        regs[RCX] = other;
                        regs[rn] = n;
                        regs[ra] = a;
                        let (va, vn) = (regs[ra], regs[rn]);
                        let mut seq = Vec::new();
                        bin(op, rd, ra, Src::Reg(rn), rcx_live, &mut |i| seq.push(i)).unwrap();
                        run(&seq, &mut regs);
                        let ctx = format!("{op:?} rd={rd:?} ra={ra:?} rn={rn:?} live={rcx_live}");
                        assert_eq!(regs[rd], op.apply(va, vn & 63), "{ctx}: {seq:?}");
                        for (r, v) in [(ra, va), (rn, vn)] {
                            if r != rd {
                                assert_eq!(regs[r], v, "{ctx} clobbered: {seq:?}");
                            }
                        }
                        let rcx_before = match (ra == RCX, rn == RCX) {
                            (true, _) => va,
                            (_, true) => vn,
                            _ => other,
                        };
                        if rcx_live && rd != RCX {
                            assert_eq!(regs[RCX], rcx_before, "{ctx}: rcx not restored: {seq:?}");
                        }
                        for r in [Gpr::RBX, Gpr::RBP, Gpr::R12, Gpr::R13, Gpr::R14, Gpr::R15] {
                            assert_eq!(regs[r], 0, "{ctx}: touched {r:?}");
                        }
                        assert!(seq.len() <= 5, "{ctx}: {seq:?}");
                    }
                }
            }
        }
    }
}

#[test]
fn bit_counts_match_their_definitions() {
    let vals = bit_count_operands();
    for op in [UnOp::Clz, UnOp::Ctz, UnOp::Popcount] {
        for (rd, rs) in [(RAX, RDX), (RDX, RDX), (R10, RCX)] {
            let mut seq = Vec::new();
            un(op, rd, rs, &mut |i| seq.push(i)).unwrap();
            super::super::insn::assemble(&seq, &|l| l.to_string()).unwrap();
            for &v in &vals {
                let mut regs = Regs([0; 16]);
                regs[rs] = v;
                run(&seq, &mut regs);
                assert_eq!(regs[rd], op.apply(v), "{op:?} {v:#x}: {seq:?}");
                if rd != rs {
                    assert_eq!(regs[rs], v, "{op:?} clobbered the source");
                }
                for r in Gpr::ALL {
                    if ![rd, rs, SCRATCH].contains(&r) {
                        assert_eq!(regs[r], 0, "{op:?} touched {r:?}");
                    }
                }
            }
        }
    }
}

#[test]
fn bin_immediates() {
    let a = 0x8123_4567_89ab_cdefu64;
    let imms = [
        0u64,
        1,
        8,
        63,
        0x7f,
        0x80,
        0x7fff_ffff,
        0x8000_0000,
        0xffff_ffff,
        u64::MAX,
        (-128i64) as u64,
        (i32::MIN as i64) as u64,
        0x0005_4000_0000_0000,
        1 << 40,
    ];
    for op in BIN_OPS {
        for &v in &imms {
            if matches!(op, BinOp::Shl | BinOp::Shr) && v >= 64 {
                continue;
            }
            for (rd, ra) in [(RAX, RCX), (RCX, RCX)] {
                let mut regs = Regs([0; 16]);
                regs[ra] = a;
                let mut seq = Vec::new();
                bin(op, rd, ra, Src::Imm(v), true, &mut |i| seq.push(i)).unwrap();
                run(&seq, &mut regs);
                assert_eq!(regs[rd], op.apply(a, v), "{op:?} {v:#x}: {seq:?}");
                for i in &seq {
                    if let Insn::AndImm { imm, .. }
                    | Insn::OrImm { imm, .. }
                    | Insn::AddImm { imm, .. }
                    | Insn::SubImm { imm, .. } = i
                    {
                        assert_eq!(imm.get() as i64 as u64, v);
                    }
                }
            }
        }
    }
}

#[test]
fn insert_matches_its_definition() {
    let x = 0xdead_beef_cafe_f00du64;
    for width in 1..=64u32 {
        for shift in 0..64u32 {
            for (rd, rs) in [(RAX, RCX), (RCX, RCX)] {
                let mut regs = Regs([0; 16]);
                regs[rs] = x;
                let mut seq = Vec::new();
                insert(rd, rs, shift, width, &mut |i| seq.push(i)).unwrap();
                run(&seq, &mut regs);
                let mask = if width >= 64 {
                    u64::MAX
                } else {
                    (1 << width) - 1
                };
                assert_eq!(
                    regs[rd],
                    (x & mask) << shift,
                    "shift {shift} width {width}: {seq:?}"
                );
                assert!(seq.len() <= 3, "{seq:?}");
                assert!(!seq
                    .iter()
                    .any(|i| matches!(i, Insn::MovImm { rd: SCRATCH, .. })));
            }
        }
    }
}

#[test]
fn swapped_store_keeps_the_source() {
    let mut seq = Vec::new();
    let a = Access::new(RDI, 8, 64, true).unwrap();
    store(RSI, &a, &mut |i| seq.push(i)).unwrap();
    assert_eq!(
        seq,
        vec![
            Insn::MovReg {
                rd: SCRATCH,
                rs: RSI
            },
            Insn::Bswap {
                size: BswapSize::Q,
                rd: SCRATCH
            },
            Insn::Store {
                size: Size::Q,
                base: RDI,
                index: None,
                disp: Disp32::from(8),
                src: SCRATCH
            },
        ]
    );
}

#[test]
fn test_is_left_out_only_after_a_flag_setting_op_on_the_same_register() {
    use crate::lir::VReg;
    let (n, m) = (VReg(0), VReg(1));
    let alloc = Allocation {
        reg: [(n, R8.num()), (m, R9.num())].into_iter().collect(),
    };
    let lower_of = |insts: Vec<Inst>| {
        let f = Func {
            name: "t".into(),
            args: vec![],
            insts: insts.into_iter().map(|i| (i, Origin::default())).collect(),
            nvregs: 2,
            nlabels: 1,
            void: false,
        };
        lower(&f, &alloc)
            .unwrap()
            .insns
            .into_iter()
            .map(|(i, _)| i)
            .collect::<Vec<_>>()
    };
    let dec = |v| Inst::Bin {
        op: BinOp::Sub,
        dst: v,
        a: v,
        b: Operand::Imm(1),
    };
    let br = |cmp, v| Inst::Branch {
        cmp,
        a: v,
        b: Operand::Imm(0),
        target: 0,
    };
    let has_test = |v: &[Insn]| v.iter().any(|i| matches!(i, Insn::Test { .. }));
    let l = Inst::Label(0);
    assert!(!has_test(&lower_of(vec![
        l.clone(),
        dec(n),
        br(Cmp::Ne, n)
    ])));
    assert!(has_test(&lower_of(vec![l.clone(), dec(m), br(Cmp::Ne, n)])));
    assert!(has_test(&lower_of(vec![dec(n), l.clone(), br(Cmp::Ne, n)])));
    assert!(has_test(&lower_of(vec![l, dec(n), br(Cmp::Ltu, n)])));
}

#[test]
fn pool_is_caller_saved_and_avoids_the_scratch() {
    for &p in REGS.pool.iter().chain(REGS.args) {
        assert!(![3, 4, 5, 11, 12, 13, 14, 15].contains(&p), "{p}");
    }
}

/// A register the allocator never saw is an error, never rax.
#[test]
fn unallocated_register_is_an_error() {
    let (f, alloc) = crate::isa::test_values::copy_from_unallocated(R8.num());
    let e = lower(&f, &alloc).err().expect("an error");
    assert_eq!(
        e,
        LowerError::NoRegister(crate::lir::regalloc::NoRegister(crate::lir::VReg(0)))
    );
}

/// `k - clz(x)` as one `bsr` (-1 for 0) plus `k - 63`, for k = 63 and
/// 64 (VT-d's ilog2 and roundup): every bit-count operand, and the
/// shortcut for a source known not to be 0 on the nonzero ones.
#[test]
fn bsr_plus_is_k_minus_clz() {
    use super::super::fuse::{bsr_plus, ClzFrom};
    for (k, add) in [(63u64, 0), (64, 1), (0, -63)] {
        for (rd, rs) in [(RAX, RDX), (RDX, RDX)] {
            for v in bit_count_operands() {
                for nonzero in [false, v != 0] {
                    let c = ClzFrom {
                        src: VReg(0),
                        add,
                        nonzero,
                    };
                    let mut seq = Vec::new();
                    bsr_plus(rd, rs, c, &mut |i| seq.push(i));
                    super::super::insn::assemble(&seq, &|l| l.to_string()).unwrap();
                    let mut regs = Regs([0; 16]);
                    regs[rs] = v;
                    run(&seq, &mut regs);
                    let want = k.wrapping_sub(UnOp::Clz.apply(v));
                    assert_eq!(regs[rd], want, "{k} - clz({v:#x}): {seq:?}");
                }
            }
        }
    }
}

/// clz and ctz of a value known not to be 0: the scan alone.
#[test]
fn scans_of_nonzero_values() {
    use super::super::fuse::scan_nonzero;
    for op in [UnOp::Clz, UnOp::Ctz] {
        for v in bit_count_operands().into_iter().filter(|&v| v != 0) {
            let mut seq = Vec::new();
            scan_nonzero(op, RAX, RDX, &mut |i| seq.push(i)).unwrap();
            let mut regs = Regs([0; 16]);
            regs[RDX] = v;
            run(&seq, &mut regs);
            assert_eq!(regs[RAX], op.apply(v), "{op:?} {v:#x}: {seq:?}");
        }
    }
    assert!(scan_nonzero(UnOp::Popcount, RAX, RDX, &mut |_| ()).is_none());
}

/// A constant shifted by a register, the result and the count each in
/// rcx or not, rcx busy or free: the value, rcx kept when busy, and at
/// most three instructions when rcx is free and not the result.
#[test]
fn constant_shifted_by_register() {
    use super::super::fuse::shift_by_reg;
    let (k, n, other) = (0x1000u64, 0x2du64, 0x5a5a_0000_1111_2222u64);
    for shl in [true, false] {
        for rd in [RCX, RAX, RDX] {
            for rn in [RCX, RAX, RDX] {
                for busy in [true, false] {
                    let mut regs = Regs([0; 16]);
                    regs[RCX] = other;
                    regs[rn] = n;
                    let mut seq = Vec::new();
                    shift_by_reg(shl, rd, Src::Imm(k), rn, busy, &mut |i| seq.push(i));
                    run(&seq, &mut regs);
                    let want = if shl { k << (n & 63) } else { k >> (n & 63) };
                    let ctx = format!("shl={shl} rd={rd:?} rn={rn:?} busy={busy}: {seq:?}");
                    assert_eq!(regs[rd], want, "{ctx}");
                    if rn != rd {
                        assert_eq!(regs[rn], n, "{ctx}");
                    }
                    if busy && rd != RCX && rn != RCX {
                        assert_eq!(regs[RCX], other, "{ctx}");
                    }
                    if !busy && rd != RCX {
                        assert!(seq.len() <= 3, "{ctx}");
                    }
                }
            }
        }
    }
}

/// An add or subtract of a constant or a register into a third register
/// is one `lea`; `lea` sets no flags, so a test of its result against 0
/// still gets its `test`.
#[test]
fn adds_into_another_register_are_one_lea() {
    for (op, b, want) in [
        (BinOp::Add, Src::Imm(8), 0x1008u64),
        (BinOp::Sub, Src::Imm(1), 0xfff),
        (BinOp::Sub, Src::Imm(0x8000_0000), 0xffff_ffff_8000_1000),
        (BinOp::Add, Src::Reg(RDX), 0x1003),
    ] {
        let mut seq = Vec::new();
        bin(op, RAX, RSI, b, false, &mut |i| seq.push(i)).unwrap();
        assert!(
            matches!(seq[..], [Insn::Lea { .. }]),
            "{op:?} {b:?}: {seq:?}"
        );
        let mut regs = Regs([0; 16]);
        regs[RSI] = 0x1000;
        regs[RDX] = 3;
        run(&seq, &mut regs);
        assert_eq!(regs[RAX], want, "{op:?} {b:?}: {seq:?}");
        let mut out = Vec::new();
        branch(Cmp::Eq, RAX, Src::Imm(0), 1, seq.last(), &mut |i| {
            out.push(i)
        });
        assert!(matches!(out[0], Insn::Test { .. }), "{out:?}");
    }
    // Past imm32 the constant goes through the scratch register.
    let mut seq = Vec::new();
    bin(BinOp::Add, RAX, RSI, Src::Imm(1 << 40), false, &mut |i| {
        seq.push(i)
    })
    .unwrap();
    assert!(
        !seq.iter().any(|i| matches!(i, Insn::Lea { .. })),
        "{seq:?}"
    );
}
