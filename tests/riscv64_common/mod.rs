//! Shared instruction corpus for the riscv64 oracle tests (GNU as and
//! capstone) and its encoding table.
#![allow(dead_code)]

use shootdown::isa::riscv64::insn::*;

pub mod capstone;
pub mod gnu_as;

pub fn label_name(l: Label) -> String {
    format!(".Ltgt{l}")
}

fn reg(n: u8) -> Reg {
    Reg::new(n).unwrap()
}

/// Register triples chosen so that every field sees 0 (zero), 31 (t6)
/// and a distinct value in most rows (catches swapped fields).
pub const TRIPLES: [(u8, u8, u8); 6] = [
    (10, 11, 12),
    (31, 30, 29),
    (0, 31, 1),
    (5, 0, 31),
    (17, 8, 0),
    (31, 31, 31),
];

pub const ALU_OPS: [AluOp; 9] = [
    AluOp::Add,
    AluOp::Sub,
    AluOp::And,
    AluOp::Or,
    AluOp::Xor,
    AluOp::Sll,
    AluOp::Srl,
    AluOp::Mul,
    AluOp::Sltu,
];
pub const IMM_OPS: [ImmOp; 5] = [
    ImmOp::Addi,
    ImmOp::Addiw,
    ImmOp::Andi,
    ImmOp::Ori,
    ImmOp::Xori,
];
pub const WIDTHS: [Width; 4] = [Width::B, Width::H, Width::W, Width::D];
pub const CONDS: [BrCond; 6] = [
    BrCond::Eq,
    BrCond::Ne,
    BrCond::Lt,
    BrCond::Ge,
    BrCond::Ltu,
    BrCond::Geu,
];
const IMMS: [i64; 7] = [0, 1, -1, 2047, -2048, 0x555, -0x2aa];

fn nop() -> Insn {
    Insn::AluImm {
        op: ImmOp::Addi,
        rd: Reg::ZERO,
        rs1: Reg::ZERO,
        imm: Imm12::ZERO,
    }
}

fn arith(v: &mut Vec<Insn>) {
    for hi in [0i64, 1, 0x12345, 0x7ffff, -(1 << 19), -1] {
        for rd in [10u8, 31, 0] {
            v.push(Insn::Lui {
                rd: reg(rd),
                imm: Imm20::maybe_from(hi).unwrap(),
            });
        }
    }
    for op in ALU_OPS {
        for (d, a, b) in TRIPLES {
            v.push(Insn::Alu {
                op,
                rd: reg(d),
                rs1: reg(a),
                rs2: reg(b),
            });
        }
    }
    for op in IMM_OPS {
        for (k, imm) in IMMS.into_iter().enumerate() {
            let (d, a, _) = TRIPLES[k % TRIPLES.len()];
            v.push(Insn::AluImm {
                op,
                rd: reg(d),
                rs1: reg(a),
                imm: Imm12::maybe_from(imm).unwrap(),
            });
        }
    }
    for op in [ShiftOp::Slli, ShiftOp::Srli] {
        for (k, n) in [0u64, 1, 12, 31, 32, 63].into_iter().enumerate() {
            let (d, a, _) = TRIPLES[k % TRIPLES.len()];
            v.push(Insn::Shift {
                op,
                rd: reg(d),
                rs1: reg(a),
                sh: Shamt::maybe_from(n).unwrap(),
            });
        }
    }
    for (d, a, _) in TRIPLES {
        v.push(Insn::Mv {
            rd: reg(d),
            rs: reg(a),
        });
    }
}

fn memory(v: &mut Vec<Insn>) {
    for w in WIDTHS {
        for (k, off) in [0i64, 8, -8, 2047, -2048].into_iter().enumerate() {
            let (d, a, _) = TRIPLES[k];
            let off = Imm12::maybe_from(off).unwrap();
            v.push(Insn::Load {
                w,
                rd: reg(d),
                base: reg(a),
                off,
            });
            v.push(Insn::Store {
                w,
                src: reg(d),
                base: reg(a),
                off,
            });
        }
        v.push(Insn::Load {
            w,
            rd: reg(9),
            base: Reg::SP,
            off: Imm12::maybe_from(16).unwrap(),
        });
    }
    for w in [AmoWidth::W, AmoWidth::D] {
        for flag in [false, true] {
            for (d, a, b) in TRIPLES {
                v.push(Insn::Lr {
                    w,
                    aq: flag,
                    rd: reg(d),
                    base: reg(a),
                });
                v.push(Insn::Sc {
                    w,
                    rl: flag,
                    status: reg(d),
                    src: reg(b),
                    base: reg(a),
                });
            }
        }
    }
}

/// Every FENCE predecessor/successor pair, the supervisor fences in all
/// operand forms, and Svinval.
fn ordering(v: &mut Vec<Insn>) {
    for p in 1..16 {
        for s in 1..16 {
            v.push(Insn::Fence {
                pred: FenceSet::maybe_from(p).unwrap(),
                succ: FenceSet::maybe_from(s).unwrap(),
            });
        }
    }
    v.push(Insn::FenceI);
    for (a, b) in [(0u8, 0u8), (10, 0), (10, 11), (0, 11), (31, 27), (5, 31)] {
        let (rs1, rs2) = (reg(a), reg(b));
        v.push(Insn::SfenceVma { rs1, rs2 });
        v.push(Insn::SinvalVma { rs1, rs2 });
    }
    v.push(Insn::SfenceWInval);
    v.push(Insn::SfenceInvalIr);
}

pub fn forms() -> Vec<Insn> {
    let mut v = vec![Insn::Label(1), nop()];
    arith(&mut v);
    memory(&mut v);
    ordering(&mut v);
    for cond in CONDS {
        for (a, b, _) in TRIPLES {
            v.push(Insn::Branch {
                cond,
                rs1: reg(a),
                rs2: reg(b),
                target: 1,
            });
            v.push(Insn::Branch {
                cond,
                rs1: reg(b),
                rs2: reg(a),
                target: 2,
            });
        }
    }
    v.push(Insn::J { target: 1 });
    v.push(Insn::J { target: 2 });
    v.push(Insn::Label(2));
    v.push(Insn::Ret);
    v
}

/// Labels before, between and after instructions, two at one offset.
pub fn label_offsets() -> Vec<Insn> {
    vec![
        Insn::Label(7),
        nop(),
        Insn::Label(8),
        Insn::Label(9),
        Insn::J { target: 7 },
        Insn::Ret,
    ]
}

/// Conditional branches at the exact ends of their 4 KiB reach (B-type,
/// 13-bit signed offset): forward +4092, backward -4096.
pub fn branch_limits() -> Vec<Insn> {
    let bne = |target| Insn::Branch {
        cond: BrCond::Ne,
        rs1: reg(10),
        rs2: reg(11),
        target,
    };
    let mut f = vec![bne(1)];
    f.extend(std::iter::repeat_n(nop(), 1022));
    f.push(Insn::Label(1));
    f.push(Insn::Label(2));
    f.extend(std::iter::repeat_n(nop(), 1024));
    f.push(bne(2));
    f
}

pub fn texts(insns: &[Insn]) -> Vec<String> {
    insns.iter().map(|i| i.text(&label_name)).collect()
}

pub fn table_sections() -> Vec<(&'static str, Vec<Insn>)> {
    vec![
        ("forms", forms()),
        ("labels", label_offsets()),
        ("branch-limits", branch_limits()),
    ]
}
