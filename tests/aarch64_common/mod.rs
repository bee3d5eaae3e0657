//! Shared instruction corpus for the oracle tests (GNU as and capstone).
#![allow(dead_code)]

use shootdown::isa::aarch64::insn::*;

pub mod capstone;
pub mod gnu_as;

pub const ALL_SIZES: [Size; 4] = [Size::B, Size::H, Size::W, Size::X];
pub const ALL_CONDS: [Cond; 12] = [
    Cond::Eq,
    Cond::Ne,
    Cond::Hs,
    Cond::Lo,
    Cond::Mi,
    Cond::Pl,
    Cond::Hi,
    Cond::Ls,
    Cond::Ge,
    Cond::Lt,
    Cond::Gt,
    Cond::Le,
];
pub const ALL_BARRIERS: [BarrierOpt; 11] = [
    BarrierOpt::Sy,
    BarrierOpt::St,
    BarrierOpt::Ld,
    BarrierOpt::Ish,
    BarrierOpt::Ishst,
    BarrierOpt::Ishld,
    BarrierOpt::Osh,
    BarrierOpt::Oshst,
    BarrierOpt::Oshld,
    BarrierOpt::Nsh,
    BarrierOpt::Nshst,
];
pub const ALL_TLBI: [TlbiOp; 20] = [
    TlbiOp::Vmalle1,
    TlbiOp::Vmalle1is,
    TlbiOp::Vmalle1os,
    TlbiOp::Vae1,
    TlbiOp::Vae1is,
    TlbiOp::Vae1os,
    TlbiOp::Vale1,
    TlbiOp::Vale1is,
    TlbiOp::Vale1os,
    TlbiOp::Aside1,
    TlbiOp::Aside1is,
    TlbiOp::Aside1os,
    TlbiOp::Vaae1is,
    TlbiOp::Vaale1is,
    TlbiOp::Rvae1is,
    TlbiOp::Rvale1is,
    TlbiOp::Rvae1os,
    TlbiOp::Rvale1os,
    TlbiOp::Rvaae1is,
    TlbiOp::Rvaale1is,
];

pub fn label_name(l: Label) -> String {
    format!(".Ltgt{l}")
}

/// The register a corpus entry names by its field number: 31 is XZR or
/// SP as the field's type says.
pub fn xr(n: u8) -> XReg {
    XReg::new(n).expect("x0..x30")
}

pub fn zr(n: u8) -> RegOrZr {
    RegOrZr::from_field(n).expect("a 5-bit field")
}

pub fn sp(n: u8) -> RegOrSp {
    RegOrSp::from_field(n).expect("a 5-bit field")
}

/// The immediates of a corpus entry, which are all in range.
pub fn wide(bits: u16, shift: u8) -> MoveWide {
    MoveWide::maybe_from(bits, shift).expect("shift 0, 16, 32 or 48")
}

pub fn logic(v: u64) -> ImmLogic {
    ImmLogic::maybe_from(v).expect("a bitmask immediate")
}

pub fn imm12(v: u16) -> Imm12 {
    Imm12::maybe_from(v.into()).expect("0..=4095")
}

pub fn shift(v: u8) -> ImmShift {
    ImmShift::maybe_from(v.into()).expect("0..=63")
}

pub fn bitfield(lsb: u8, width: u8) -> Bitfield {
    Bitfield::maybe_from(lsb.into(), width.into()).expect("inside the register")
}

pub fn scaled(bytes: u32, size: Size) -> UImm12Scaled {
    UImm12Scaled::maybe_from(bytes.into(), size).expect("an encodable offset")
}

/// Register triples chosen so that every field sees 0, 30 and 31 (XZR) and
/// no two fields share a value in most rows (catches swapped fields).
const TRIPLES: [(u8, u8, u8); 6] = [
    (0, 1, 2),
    (30, 29, 28),
    (31, 30, 0),
    (5, 31, 30),
    (17, 8, 31),
    (31, 31, 31),
];
/// Same, for forms where 31 would be SP (not allowed by the model).
const TRIPLES_NO31: [(u8, u8, u8); 3] = [(0, 1, 2), (30, 29, 28), (7, 30, 0)];

const LOGICAL_IMMS: [u64; 9] = [
    1,
    0xff,
    0x5555_5555_5555_5555,
    0x8000_0000_0000_0001,
    0xffff_ffff_ffff_fffe,
    0x0000_ffff_0000_ffff,
    0x00ff_00ff_00ff_00ff,
    0x7fff_ffff_ffff_ffff,
    0x0000_0000_ffff_f000,
];

const BITFIELDS: [(u8, u8); 7] = [
    (0, 1),
    (0, 64),
    (63, 1),
    (4, 8),
    (32, 32),
    (1, 63),
    (12, 40),
];

/// Every `Insn` variant, every TlbiOp/BarrierOpt/Size/Cond, edge registers,
/// max offsets/shifts, forward and backward branches.
pub fn forms() -> Vec<Insn> {
    let mut v = Vec::new();
    // Backward-branch targets come first.
    v.push(Insn::Label(1));
    v.push(Insn::Nop);

    moves(&mut v);
    logical_immediates(&mut v);
    for (rd, rn, rm) in TRIPLES {
        three_registers(&mut v, rd, rn, rm);
        two_registers(&mut v, rd, rn, rm);
        shifts_and_bitfields(&mut v, rd, rn);
    }
    arithmetic_immediates(&mut v);
    for size in ALL_SIZES {
        loads_and_stores(&mut v, size);
        exclusives(&mut v, size);
        atomics(&mut v, size);
    }
    barriers_and_tlbi(&mut v);
    branches(&mut v);
    v
}

/// MOVZ, MOVK, MOVN: every halfword position.
fn moves(v: &mut Vec<Insn>) {
    for rd in [0, 30, 31] {
        for imm in [0u16, 1, 0x1234, 0xffff] {
            for shift in [0u8, 16, 32, 48] {
                let (rd, imm) = (zr(rd), wide(imm, shift));
                v.push(Insn::Movz { rd, imm });
                v.push(Insn::Movk { rd, imm });
                v.push(Insn::Movn { rd, imm });
            }
        }
    }
}

/// ORR and AND (immediate).
fn logical_immediates(v: &mut Vec<Insn>) {
    for (rd, rn, _) in TRIPLES_NO31 {
        for imm in LOGICAL_IMMS.map(logic) {
            v.push(Insn::OrrImm {
                rd: xr(rd),
                rn: zr(rn),
                imm,
            });
            v.push(Insn::AndImm {
                rd: xr(rd),
                rn: zr(rn),
                imm,
            });
        }
    }
    // rn = 31 is XZR in logical (immediate).
    v.push(Insn::OrrImm {
        rd: xr(3),
        rn: zr(31),
        imm: logic(0xff00),
    });
    v.push(Insn::OrrImm {
        rd: xr(0),
        rn: zr(31),
        imm: logic(0xffff_ffff_ffff_fffe),
    });
    v.push(Insn::AndImm {
        rd: xr(30),
        rn: zr(31),
        imm: logic(0xf0f0_f0f0_f0f0_f0f0),
    });
}

/// The data-processing (register) forms with three registers.
fn three_registers(v: &mut Vec<Insn>, rd: u8, rn: u8, rm: u8) {
    v.push(Insn::MovReg {
        rd: zr(rd),
        rm: zr(rm),
    });
    v.push(Insn::Mvn {
        rd: zr(rd),
        rm: zr(rm),
    });
    v.push(Insn::Orr {
        rd: zr(rd),
        rn: zr(rn),
        rm: zr(rm),
    });
    v.push(Insn::And {
        rd: zr(rd),
        rn: zr(rn),
        rm: zr(rm),
    });
    v.push(Insn::Eor {
        rd: zr(rd),
        rn: zr(rn),
        rm: zr(rm),
    });
    v.push(Insn::Bic {
        rd: zr(rd),
        rn: zr(rn),
        rm: zr(rm),
    });
    v.push(Insn::Add {
        rd: zr(rd),
        rn: zr(rn),
        rm: zr(rm),
    });
    v.push(Insn::Sub {
        rd: zr(rd),
        rn: zr(rn),
        rm: zr(rm),
    });
    v.push(Insn::SubsReg {
        rd: zr(rd),
        rn: zr(rn),
        rm: zr(rm),
    });
    v.push(Insn::Mul {
        rd: zr(rd),
        rn: zr(rn),
        rm: zr(rm),
    });
    v.push(Insn::LslReg {
        rd: zr(rd),
        rn: zr(rn),
        rm: zr(rm),
    });
    v.push(Insn::LsrReg {
        rd: zr(rd),
        rn: zr(rn),
        rm: zr(rm),
    });
}

/// Byte and bit reversals, counts, CSET and CMP (register).
fn two_registers(v: &mut Vec<Insn>, rd: u8, rn: u8, rm: u8) {
    v.push(Insn::Rev {
        rd: zr(rd),
        rn: zr(rn),
    });
    v.push(Insn::Clz {
        rd: zr(rd),
        rn: zr(rn),
    });
    v.push(Insn::Rbit {
        rd: zr(rd),
        rn: zr(rn),
    });
    for cond in [Cond::Eq, Cond::Ne, Cond::Lo, Cond::Hs, Cond::Hi] {
        v.push(Insn::Cset { rd: zr(rd), cond });
    }
    v.push(Insn::Rev32W {
        rd: zr(rd),
        rn: zr(rn),
    });
    v.push(Insn::Rev16W {
        rd: zr(rd),
        rn: zr(rn),
    });
    v.push(Insn::CmpReg {
        rn: zr(rn),
        rm: zr(rm),
    });
}

/// LSL/LSR (immediate), UBFIZ and UBFX.
fn shifts_and_bitfields(v: &mut Vec<Insn>, rd: u8, rn: u8) {
    for sh in [0u8, 1, 31, 32, 63].map(shift) {
        v.push(Insn::LslImm {
            rd: zr(rd),
            rn: zr(rn),
            sh,
        });
        v.push(Insn::LsrImm {
            rd: zr(rd),
            rn: zr(rn),
            sh,
        });
    }
    for field in BITFIELDS.map(|(lsb, width)| bitfield(lsb, width)) {
        v.push(Insn::Ubfiz {
            rd: zr(rd),
            rn: zr(rn),
            field,
        });
        v.push(Insn::Ubfx {
            rd: zr(rd),
            rn: zr(rn),
            field,
        });
    }
}

/// ADD, SUB, SUBS and CMP (immediate), and the stack pointer's moves.
fn arithmetic_immediates(v: &mut Vec<Insn>) {
    for (rd, rn, _) in TRIPLES_NO31 {
        for imm in [0u16, 1, 9, 10, 0x7ff, 4095].map(imm12) {
            // Each also with `lsl #12` (imm << 12).
            for lsl12 in [false, true] {
                v.push(Insn::AddImm {
                    rd: xr(rd),
                    rn: xr(rn),
                    imm,
                    lsl12,
                });
                v.push(Insn::SubImm {
                    rd: xr(rd),
                    rn: xr(rn),
                    imm,
                    lsl12,
                });
            }
            v.push(Insn::SubsImm {
                rd: zr(rd),
                rn: xr(rn),
                imm,
            });
            v.push(Insn::CmpImm { rn: xr(rn), imm });
        }
    }
    // The callee-saved frame: sp moves by multiples of 16.
    for imm in [0u64, 16, 32, 0x50, 4080].map(|b| SpAdjust::maybe_from(b).expect("aligned")) {
        v.push(Insn::SpSub { imm });
        v.push(Insn::SpAdd { imm });
    }
    // SUBS (immediate) with Rd = XZR (the CMP encoding).
    v.push(Insn::SubsImm {
        rd: zr(31),
        rn: xr(4),
        imm: imm12(17),
    });
}

/// LDR and STR of one size: scaled immediate and register offsets.
fn loads_and_stores(v: &mut Vec<Insn>, size: Size) {
    let sz = match size {
        Size::B => 1u32,
        Size::H => 2,
        Size::W => 4,
        Size::X => 8,
    };
    for (rt, rn) in [(0u8, 1u8), (30, 31), (31, 30), (2, 0)] {
        for off in [0, sz, 9 * sz, 0x7f4 / sz * sz, 4095 * sz] {
            let (rt, rn, off) = (zr(rt), sp(rn), scaled(off, size));
            v.push(Insn::Str { rt, rn, off });
            v.push(Insn::Ldr { rt, rn, off });
        }
    }
    for (rt, rn, rm) in [(0u8, 1u8, 2u8), (30, 31, 29), (31, 30, 31), (4, 0, 30)] {
        for scaled in [false, true] {
            v.push(Insn::StrReg {
                size,
                rt: zr(rt),
                rn: sp(rn),
                rm: zr(rm),
                scaled,
            });
            v.push(Insn::LdrReg {
                size,
                rt: zr(rt),
                rn: sp(rn),
                rm: zr(rm),
                scaled,
            });
        }
    }
}

/// Exclusive and acquire/release loads and stores of one size.
fn exclusives(v: &mut Vec<Insn>, size: Size) {
    for (rt, rn) in [(0u8, 1u8), (30, 31), (31, 0)] {
        v.push(Insn::Ldxr {
            size,
            rt: zr(rt),
            rn: sp(rn),
        });
        v.push(Insn::Ldaxr {
            size,
            rt: zr(rt),
            rn: sp(rn),
        });
        v.push(Insn::Ldar {
            size,
            rt: zr(rt),
            rn: sp(rn),
        });
        v.push(Insn::Stlr {
            size,
            rt: zr(rt),
            rn: sp(rn),
        });
    }
    // Status register must differ from rt and (unless rn is SP) rn.
    for (rs, rt, rn) in [
        (2u8, 1u8, 0u8),
        (31, 30, 0),
        (0, 30, 31),
        (30, 31, 29),
        (31, 0, 30),
    ] {
        v.push(Insn::Stxr {
            size,
            rs: zr(rs),
            rt: zr(rt),
            rn: sp(rn),
        });
        v.push(Insn::Stlxr {
            size,
            rs: zr(rs),
            rt: zr(rt),
            rn: sp(rn),
        });
    }
}

/// CASA and SWPA of one size.
fn atomics(v: &mut Vec<Insn>, size: Size) {
    for (rs, rt, rn) in [
        (2u8, 1u8, 0u8),
        (31, 30, 0),
        (0, 31, 31),
        (30, 0, 29),
        (5, 5, 6),
    ] {
        v.push(Insn::Casa {
            size,
            rs: zr(rs),
            rt: zr(rt),
            rn: sp(rn),
        });
        v.push(Insn::Swpa {
            size,
            rs: zr(rs),
            rt: zr(rt),
            rn: sp(rn),
        });
    }
}

/// DMB, DSB, ISB, RET and every TLBI.
fn barriers_and_tlbi(v: &mut Vec<Insn>) {
    for o in ALL_BARRIERS {
        v.push(Insn::Dmb(o));
        v.push(Insn::Dsb(o));
    }
    v.push(Insn::Isb);
    v.push(Insn::Ret);
    for op in ALL_TLBI {
        match op {
            TlbiOp::Vmalle1 | TlbiOp::Vmalle1is | TlbiOp::Vmalle1os => {
                v.push(Insn::Tlbi { op, rt: None })
            }
            _ => {
                for r in [0, 30, 31] {
                    v.push(Insn::Tlbi {
                        op,
                        rt: Some(zr(r)),
                    });
                }
            }
        }
    }
}

/// Branches: backward to label 1, forward to label 2 (defined at the end),
/// and to labels in the middle of the stream.
fn branches(v: &mut Vec<Insn>) {
    for target in [1, 2] {
        for cond in ALL_CONDS {
            v.push(Insn::BCond { cond, target });
        }
        for rt in [0, 30, 31] {
            v.push(Insn::Cbz { rt: zr(rt), target });
            v.push(Insn::Cbnz { rt: zr(rt), target });
            // Bits in the W form (b5 = 0) and the X form, at each end.
            for b in [0, 5, 31, 32, 47, 63] {
                let bit = ImmShift::maybe_from(b).unwrap();
                v.push(Insn::Tbz {
                    rt: zr(rt),
                    bit,
                    target,
                });
                v.push(Insn::Tbnz {
                    rt: zr(rt),
                    bit,
                    target,
                });
            }
        }
        v.push(Insn::B { target });
    }
    v.push(Insn::Label(3));
    v.push(Insn::B { target: 3 }); // branch to itself (displacement 0)
    v.push(Insn::Label(4));
    v.push(Insn::Label(5)); // two labels at one offset
    v.push(Insn::Cbz {
        rt: zr(1),
        target: 4,
    });
    v.push(Insn::BCond {
        cond: Cond::Ne,
        target: 5,
    });
    v.push(Insn::B { target: 6 });
    v.push(Insn::Label(6));
    v.push(Insn::Nop);
    v.push(Insn::Label(2));
    v.push(Insn::Ret);
}

/// Labels before, between and after instructions, two at one offset.
pub fn label_offsets() -> Vec<Insn> {
    vec![
        Insn::Label(7),
        Insn::Nop,
        Insn::Label(8),
        Insn::Label(9),
        Insn::B { target: 7 },
        Insn::Ret,
    ]
}

/// Conditional branches at the exact ends of their +-1 MiB range (imm19),
/// forward (cbz, disp 2^20 - 4) and backward (b.ne, disp -2^20).
pub fn cond_branch_limits() -> Vec<Insn> {
    let pad = (1usize << 18) - 1; // words between branch and target: disp = 2^20 - 4
    let mut f = vec![Insn::Cbz {
        rt: zr(3),
        target: 1,
    }];
    f.extend(std::iter::repeat_n(Insn::Nop, pad - 1));
    f.push(Insn::Label(1));
    f.push(Insn::Label(2)); // backward target at offset 2^20 - 4
    f.push(Insn::Nop);
    // backward displacement -2^20: branch at offset (2^20 - 4) + 2^20
    f.extend(std::iter::repeat_n(Insn::Nop, (1 << 18) - 1));
    f.push(Insn::BCond {
        cond: Cond::Ne,
        target: 2,
    });
    f
}

/// Our text for every entry (`name:` for a label).
pub fn texts(insns: &[Insn]) -> Vec<String> {
    insns.iter().map(|i| i.text(&label_name)).collect()
}

/// The sections of the encoding table `aarch64`: the corpus of each GNU as
/// check, by the name that check passes.
pub fn table_sections() -> Vec<(&'static str, Vec<Insn>)> {
    vec![
        ("forms", forms()),
        ("labels", label_offsets()),
        ("branch-limits", cond_branch_limits()),
    ]
}
