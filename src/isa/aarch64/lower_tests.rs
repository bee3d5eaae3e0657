use super::*;
use crate::isa::lower_common::testing::{
    check_materialize_bounds, check_materialize_random, BIN_OPS,
};
use crate::isa::test_values::{bit_count_operands, xorshift};

/// A tiny interpreter for the instructions `materialize` emits; the
/// encodings themselves are checked against GNU as elsewhere, and the
/// values end to end under qemu.
fn eval(seq: &[Insn]) -> u64 {
    let mut r = 0xdead_beef_dead_beefu64;
    for i in seq {
        r = match *i {
            Insn::Movz { imm, .. } => imm.value(),
            Insn::Movn { imm, .. } => !imm.value(),
            Insn::Movk { imm, .. } => (r & !(0xffffu64 << imm.shift())) | imm.value(),
            Insn::OrrImm {
                rn: RegOrZr::Zr,
                imm,
                ..
            } => imm.value(),
            ref other => panic!("unexpected {other:?}"),
        };
    }
    r
}

fn check(v: u64) -> Vec<Insn> {
    let mut seq = Vec::new();
    materialize(xreg(9), v, &mut |i| seq.push(i));
    assert_eq!(eval(&seq), v, "{v:#x}: {seq:?}");
    // Every instruction must also encode.
    super::super::insn::assemble(&seq).unwrap_or_else(|e| panic!("{v:#x}: {e}"));
    seq
}

#[test]
fn materialize_is_correct_and_short() {
    let one: &[u64] = &[
        0,
        1,
        u64::MAX,
        0xffff,
        0x1234,
        0xffff_ffff,
        0xffff_ffff_ffff_fffe,
        0xffff_ffff_ffff_1234,
        (-110i64) as u64,
        0x0000_00ff_fe00_0000,
        1 << 63,
    ];
    let two: &[u64] = &[
        0x12345,
        100_000,
        0x0005_4000_0000_0000,
        0x000c_0000_0200_0000,
        0x5555_5555_5555_1234,
    ];
    let bounds: [(usize, &[u64]); 4] = [
        (1, one),
        (2, two),
        (3, &[0x0005_4000_0200_0000]),
        (4, &[0x1234_5678_9abc_def0]),
    ];
    check_materialize_bounds(&bounds, check);
}

#[test]
fn materialize_random_values() {
    check_materialize_random(4, check);
}

#[test]
fn barriers_and_tlbis_map() {
    for op in TlbiOp::ALL {
        let n = op.name();
        let k = usize::from(op.takes_reg());
        let typed = |name: &str| *invalidation(name, k).unwrap().op::<TlbiOp>();
        assert_eq!(typed(&format!("tlbi {n}")), op);
        assert_eq!(typed(n), op);
        assert!(invalidation(&format!("tlbi {n}"), 1 - k).is_err());
        let rt = op.takes_reg().then_some(RegOrZr::X(xreg(1)));
        let text = Insn::Tlbi { op, rt }.text(&|l| l.to_string());
        assert!(text.starts_with(&format!("tlbi {n}")), "{text}");
    }
    assert!(invalidation("tlbi bogus", 0).is_err());
}

use crate::lir::{regalloc, ArgKind, MemKind};

/// Interpreter for the register-only instructions ALU lowering emits.
fn run_alu(seq: &[Insn], regs: &mut [u64; 32]) {
    for i in seq {
        // XZR is field 31, and reads as 0.
        let x = |r: RegOrZr| {
            if r == RegOrZr::Zr {
                0
            } else {
                regs[r.field() as usize]
            }
        };
        let (rd, v) = match *i {
            Insn::Movz { rd, imm } => (rd, imm.value()),
            Insn::Movn { rd, imm } => (rd, !imm.value()),
            Insn::Movk { rd, imm } => (rd, (x(rd) & !(0xffffu64 << imm.shift())) | imm.value()),
            Insn::OrrImm { rd, rn, imm } => (rd.into(), x(rn) | imm.value()),
            Insn::AndImm { rd, rn, imm } => (rd.into(), x(rn) & imm.value()),
            Insn::MovReg { rd, rm } => (rd, x(rm)),
            Insn::Mvn { rd, rm } => (rd, !x(rm)),
            Insn::Orr { rd, rn, rm } => (rd, x(rn) | x(rm)),
            Insn::And { rd, rn, rm } => (rd, x(rn) & x(rm)),
            Insn::Eor { rd, rn, rm } => (rd, x(rn) ^ x(rm)),
            Insn::Add { rd, rn, rm } => (rd, x(rn).wrapping_add(x(rm))),
            Insn::Sub { rd, rn, rm } => (rd, x(rn).wrapping_sub(x(rm))),
            Insn::Mul { rd, rn, rm } => (rd, x(rn).wrapping_mul(x(rm))),
            Insn::AddImm { rd, rn, imm, lsl12 } => (
                rd.into(),
                x(rn.into()).wrapping_add(u64::from(imm.get()) << (12 * u32::from(lsl12))),
            ),
            Insn::SubImm { rd, rn, imm, lsl12 } => (
                rd.into(),
                x(rn.into()).wrapping_sub(u64::from(imm.get()) << (12 * u32::from(lsl12))),
            ),
            Insn::LslImm { rd, rn, sh } => (rd, x(rn) << sh.get()),
            Insn::LsrImm { rd, rn, sh } => (rd, x(rn) >> sh.get()),
            Insn::LslReg { rd, rn, rm } => (rd, x(rn) << (x(rm) & 63)),
            Insn::LsrReg { rd, rn, rm } => (rd, x(rn) >> (x(rm) & 63)),
            Insn::Clz { rd, rn } => (rd, u64::from(x(rn).leading_zeros())),
            Insn::Rbit { rd, rn } => (rd, x(rn).reverse_bits()),
            Insn::Ubfiz { rd, rn, field } => (
                rd,
                (x(rn) & (u64::MAX >> (64 - field.width()))) << field.lsb().get(),
            ),
            ref other => panic!("unexpected {other:?}"),
        };
        let rd: RegOrZr = rd;
        assert_ne!(rd, RegOrZr::Zr);
        regs[rd.field() as usize] = v;
    }
}

fn alloc_of(pairs: &[(u32, u8)]) -> Allocation {
    Allocation {
        reg: pairs.iter().map(|&(v, r)| (VReg(v), r)).collect(),
    }
}

fn lower_one(inst: Inst, alloc: &Allocation) -> Result<Vec<Insn>, LowerError> {
    let f = Func {
        name: "t".into(),
        args: vec![],
        insts: vec![(inst, Origin::default())],
        nvregs: 3,
        nlabels: 0,
        void: false,
    };
    Ok(lower(&f, alloc)?
        .insns
        .into_iter()
        .map(|(i, _)| i)
        .collect())
}

/// Bin/Not/Insert lowering against Rust's own arithmetic, for random
/// operands and immediates of every shape, with dst aliasing a source
/// or not. Scratch use must not clobber the sources.
#[test]
fn alu_lowering_matches_reference() {
    let mut rng = xorshift(0x2545_f491_4f6c_dd1d);
    let mut next = || rng.next_u64();
    for round in 0..3000 {
        let a = next();
        let raw = next();
        let imms = [
            raw,
            raw & 0xfff,
            raw.wrapping_neg() & 0xfff,
            (raw & 0xfff).wrapping_neg(),
            0,
            u64::MAX,
            1 << (raw & 63),
            0xff << (raw % 56),
            raw & 63,
            // ADD/SUB with `lsl #12`, and their negations.
            (raw & 0xfff) << 12,
            ((raw & 0xfff) << 12).wrapping_neg(),
        ];
        for (k, &imm) in imms.iter().enumerate() {
            for op in BIN_OPS {
                let imm = if matches!(op, BinOp::Shl | BinOp::Shr) {
                    imm & 63
                } else {
                    imm
                };
                for (dst_reg, b) in [(9, Operand::Imm(imm)), (3, Operand::Reg(VReg(2)))] {
                    // v0 = a in x3, v2 = imm in x4, dst v1.
                    let alloc = alloc_of(&[(0, 3), (1, dst_reg), (2, 4)]);
                    let seq = lower_one(
                        Inst::Bin {
                            op,
                            dst: VReg(1),
                            a: VReg(0),
                            b,
                        },
                        &alloc,
                    )
                    .unwrap();
                    let mut regs = [0u64; 32];
                    regs[3] = a;
                    regs[4] = imm;
                    run_alu(&seq, &mut regs);
                    assert_eq!(
                        regs[dst_reg as usize],
                        op.apply(a, imm),
                        "{op:?} {a:#x}, {imm:#x} ({round}/{k}): {seq:?}"
                    );
                    if dst_reg != 4 {
                        assert_eq!(regs[4], imm, "source clobbered: {seq:?}");
                    }
                    super::super::insn::assemble(&seq).unwrap();
                }
            }
        }
        let alloc = alloc_of(&[(0, 3), (1, 10)]);
        let seq = lower_one(
            Inst::Not {
                dst: VReg(1),
                src: VReg(0),
            },
            &alloc,
        )
        .unwrap();
        let mut regs = [0u64; 32];
        regs[3] = a;
        run_alu(&seq, &mut regs);
        assert_eq!(regs[10], !a);
        let (shift, width) = ((raw % 64) as u32, ((raw >> 8) % 65) as u32);
        let seq = lower_one(
            Inst::Insert {
                dst: VReg(1),
                src: VReg(0),
                shift,
                width,
            },
            &alloc,
        )
        .unwrap();
        super::super::insn::assemble(&seq).unwrap();
        let mut regs = [0u64; 32];
        regs[3] = a;
        run_alu(&seq, &mut regs);
        let mask = if width >= 64 {
            u64::MAX
        } else {
            (1u64 << width) - 1
        };
        assert_eq!(
            regs[10],
            (a & mask) << shift,
            "insert {a:#x} shift {shift} width {width}: {seq:?}"
        );
    }
}

/// A multiple of 4K below 16M is added or subtracted by one instruction
/// (`add x9, x3, #1, lsl #12`), past it the constant is built first.
#[test]
fn page_multiples_are_one_shifted_immediate() {
    let alloc = alloc_of(&[(0, 3), (1, 9)]);
    for (op, imm, len) in [
        (BinOp::Add, 0x1000, 1),
        (BinOp::Sub, 0x5000, 1),
        (BinOp::Add, 0x1000u64.wrapping_neg(), 1),
        (BinOp::Add, 0xfff000, 1),
        (BinOp::Add, 0x100_0000, 2),
        (BinOp::Add, 0x1800, 2),
    ] {
        let seq = lower_one(
            Inst::Bin {
                op,
                dst: VReg(1),
                a: VReg(0),
                b: Operand::Imm(imm),
            },
            &alloc,
        )
        .unwrap();
        assert_eq!(seq.len(), len, "{op:?} {imm:#x}: {seq:?}");
    }
}

#[test]
fn bit_counts_match_their_definitions() {
    let vals = bit_count_operands();
    for op in [UnOp::Clz, UnOp::Ctz, UnOp::Popcount] {
        for (rd, rs) in [(9u8, 3u8), (3, 3)] {
            let alloc = alloc_of(&[(0, rs), (1, rd)]);
            let seq = lower_one(
                Inst::Un {
                    op,
                    dst: VReg(1),
                    src: VReg(0),
                },
                &alloc,
            )
            .unwrap();
            super::super::insn::assemble(&seq).unwrap();
            for &v in &vals {
                let mut regs = [0u64; 32];
                regs[rs as usize] = v;
                run_alu(&seq, &mut regs);
                assert_eq!(regs[rd as usize], op.apply(v), "{op:?} {v:#x}: {seq:?}");
                if rd != rs {
                    assert_eq!(regs[rs as usize], v, "{op:?} clobbered the source");
                }
                for r in 0..32u8 {
                    if ![rd, rs, SCRATCH.field()].contains(&r) {
                        assert_eq!(regs[r as usize], 0, "{op:?} touched x{r}");
                    }
                }
            }
        }
    }
}

#[test]
fn memory_forms() {
    let alloc = alloc_of(&[(0, 3), (1, 9)]);
    let text = |i: Inst| -> Vec<String> {
        let seq = lower_one(i, &alloc).unwrap();
        super::super::insn::assemble(&seq).unwrap();
        seq.iter().map(|i| i.text(&|l| l.to_string())).collect()
    };
    let kind = MemKind::Normal;
    let st = |offset, width, swap| Inst::Store {
        src: VReg(1),
        base: VReg(0),
        offset,
        width,
        swap,
        kind,
        index: None,
    };
    let ld = |offset, width, swap| Inst::Load {
        dst: VReg(1),
        base: VReg(0),
        offset,
        width,
        swap,
        kind,
        index: None,
    };
    assert_eq!(text(st(8, 64, true)), ["rev x16, x9", "str x16, [x3, #8]"]);
    assert_eq!(text(st(4, 32, true)), ["rev w16, w9", "str w16, [x3, #4]"]);
    assert_eq!(
        text(st(2, 16, true)),
        ["rev16 w16, w9", "strh w16, [x3, #2]"]
    );
    assert_eq!(text(st(3, 8, true)), ["strb w9, [x3, #3]"]);
    assert_eq!(text(st(0, 64, false)), ["str x9, [x3]"]);
    assert_eq!(text(st(0x7ff8, 64, false)), ["str x9, [x3, #0x7ff8]"]);
    assert_eq!(
        text(st(0x8000, 64, false)),
        ["movz x17, #0x8000", "str x9, [x3, x17]"]
    );
    assert_eq!(
        text(st(6, 32, true)),
        ["rev w16, w9", "movz x17, #6", "str w16, [x3, x17]"]
    );
    assert_eq!(
        text(ld(0x10, 64, true)),
        ["ldr x9, [x3, #0x10]", "rev x9, x9"]
    );
    assert_eq!(text(ld(4, 32, true)), ["ldr w9, [x3, #4]", "rev w9, w9"]);
    assert_eq!(text(ld(2, 16, true)), ["ldrh w9, [x3, #2]", "rev16 w9, w9"]);
    assert_eq!(text(ld(1, 8, false)), ["ldrb w9, [x3, #1]"]);
    assert!(lower_one(st(0, 24, false), &alloc).is_err());
}

#[test]
fn invalidates_barriers_branches() {
    let alloc = alloc_of(&[(0, 3), (1, 9)]);
    let text = |i: Inst| -> Vec<String> {
        lower_one(i, &alloc)
            .unwrap()
            .iter()
            .map(|i| i.text(&|l| format!(".L{l}")))
            .collect()
    };
    let inv = |name: &str, operands: Vec<VReg>| Inst::Invalidate {
        name: invalidation(name, operands.len()).unwrap(),
        operands,
    };
    assert_eq!(
        text(inv("tlbi vale1is", vec![VReg(0)])),
        ["tlbi vale1is, x3"]
    );
    assert_eq!(text(inv("tlbi vmalle1is", vec![])), ["tlbi vmalle1is"]);
    assert!(invalidation("tlbi vale1is", 0).is_err());
    assert!(invalidation("tlbi vmalle1is", 1).is_err());
    assert!(invalidation("tlbie", 1).is_err());
    assert_eq!(
        text(Inst::Barrier {
            name: crate::isa::barriers::Barrier::named(super::super::barriers::TABLE, "dsb ish")
        }),
        ["dsb ish"]
    );
    let br = |cmp, b| Inst::Branch {
        cmp,
        a: VReg(0),
        b,
        target: 7,
    };
    assert_eq!(text(br(Cmp::Eq, Operand::Imm(0))), ["cbz x3, .L7"]);
    assert_eq!(text(br(Cmp::Ne, Operand::Imm(0))), ["cbnz x3, .L7"]);
    assert_eq!(
        text(br(Cmp::Ltu, Operand::Imm(4095))),
        ["cmp x3, #0xfff", "b.lo .L7"]
    );
    assert_eq!(
        text(br(Cmp::Geu, Operand::Reg(VReg(1)))),
        ["cmp x3, x9", "b.hs .L7"]
    );
    assert_eq!(
        text(br(Cmp::Eq, Operand::Imm(4096))),
        ["movz x16, #0x1000", "cmp x3, x16", "b.eq .L7"]
    );
    assert_eq!(
        text(Inst::Ret {
            value: Operand::Imm((-110i64) as u64)
        }),
        ["movn x0, #0x6d", "ret"]
    );
    assert_eq!(
        text(Inst::Ret {
            value: Operand::Reg(VReg(1))
        }),
        ["mov x0, x9", "ret"]
    );
}

/// A whole function through regalloc and codegen: range TLBIs raise
/// the `.arch` level.
#[test]
fn needs_arch_from_instructions() {
    let f = |name: &str| Func {
        name: "t".into(),
        args: vec![ArgKind::Param(0)],
        insts: vec![
            (
                Inst::Arg {
                    dst: VReg(0),
                    index: 0,
                },
                Origin::default(),
            ),
            (
                Inst::Invalidate {
                    name: invalidation(name, 1).unwrap(),
                    operands: vec![VReg(0)],
                },
                Origin::default(),
            ),
            (
                Inst::Ret {
                    value: Operand::Imm(0),
                },
                Origin::default(),
            ),
        ],
        nvregs: 1,
        nlabels: 0,
        void: false,
    };
    for (name, arch) in [
        ("tlbi vale1is", None),
        ("tlbi rvae1is", Some("armv8.4-a")),
        ("tlbi vae1os", Some("armv8.4-a")),
    ] {
        let func = f(name);
        let alloc = regalloc::allocate(&func, &REGS).unwrap();
        let m = crate::isa::Target::Aarch64
            .codegen(
                &func,
                &alloc,
                "t",
                crate::isa::style::Style::Plain,
                crate::isa::Machine::Book3s,
            )
            .unwrap();
        assert_eq!(m.needs_arch, arch, "{name}");
        assert_eq!(m.bytes.len(), 4 * 3);
    }
}

#[test]
fn pool_avoids_reserved_registers() {
    for r in REGS.pool.iter().chain(REGS.args) {
        assert!(
            *r <= 15 && *r != SCRATCH.field() && *r != SCRATCH_OFF.field(),
            "x{r}"
        );
    }
}

/// A register the allocator never saw is an error, never x0.
#[test]
fn unallocated_register_is_an_error() {
    let copy = Inst::Copy {
        dst: VReg(1),
        src: VReg(0),
    };
    let e = lower_one(copy, &alloc_of(&[(1, 9)])).unwrap_err();
    assert_eq!(
        e,
        LowerError::NoRegister(crate::lir::regalloc::NoRegister(VReg(0)))
    );
}
