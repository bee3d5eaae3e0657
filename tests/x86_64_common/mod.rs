//! Shared instruction corpora for the x86-64 oracle tests (GNU as,
//! capstone) and the encoding table: every `Insn` variant, every register
//! in every slot, immediate and displacement boundaries, and branches
//! around the rel8/rel32 limit.
#![allow(dead_code)] // each test binary uses a subset

use shootdown::isa::x86_64::insn::*;

pub mod capstone;
pub mod gnu_as;

pub const ALL_SIZES: [Size; 4] = [Size::B, Size::W, Size::D, Size::Q];
pub const ALL_CONDS: [Cond; 12] = [
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

pub fn name(l: Label) -> String {
    format!(".Lt{l}")
}

/// Our text for every entry: `assemble`'s, and `name:` for a label.
pub fn texts(insns: &[Insn], a: &Assembled) -> Vec<String> {
    insns
        .iter()
        .zip(&a.text)
        .map(|(i, t)| match i {
            Insn::Label(l) => format!("{}:", name(*l)),
            _ => t.clone(),
        })
        .collect()
}

/// Every register-register form over all 16 x 16 register pairs.
pub fn reg_reg_all_pairs() -> Vec<Insn> {
    let mut v = Vec::new();
    for rd in Gpr::ALL {
        for rs in Gpr::ALL {
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
            v.push(Insn::Bts { rd, rn: rs });
            for size in [Size::B, Size::W, Size::D, Size::Q] {
                v.push(Insn::MovZx { size, rd, rs });
            }
        }
        // Every bit `bt` can test (imm8), on every register.
        for bit in (0..64).filter_map(Imm6::maybe_from) {
            v.push(Insn::Bt { ra: rd, bit });
        }
    }
    v
}

/// Every one-register form on all 16 registers (push/pop included).
pub fn single_reg_ops() -> Vec<Insn> {
    let mut v = Vec::new();
    for rd in Gpr::ALL {
        v.push(Insn::Bswap {
            size: BswapSize::D,
            rd,
        });
        v.push(Insn::Bswap {
            size: BswapSize::Q,
            rd,
        });
        v.push(Insn::Rol16 { rd });
        v.push(Insn::Not { rd });
        v.push(Insn::Neg { rd });
        v.push(Insn::ShlCl { rd });
        v.push(Insn::ShrCl { rd });
        for sh in [0, 1, 2, 7, 8, 31, 32, 63].map(|n| Imm6::maybe_from(n).unwrap()) {
            v.push(Insn::ShlImm { rd, sh });
            v.push(Insn::ShrImm { rd, sh });
        }
        v.push(Insn::Invlpg { base: rd });
        v.push(Insn::Clflush { base: rd });
        v.push(Insn::Push { rs: rd });
        v.push(Insn::Pop { rd });
    }
    v
}

/// Every ALU-immediate form on all 16 registers at the imm8/imm32 edges.
pub fn immediates() -> Vec<Insn> {
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
    ]
    .map(Simm32::from);
    let mut v = Vec::new();
    for rd in Gpr::ALL {
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
    v
}

/// `mov` immediates at the edges of the mov r32 / mov simm32 / movabs forms.
pub fn mov_imm_boundaries() -> Vec<Insn> {
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
    for rd in Gpr::ALL {
        for imm in imms {
            v.push(Insn::MovImm { rd, imm });
        }
    }
    v
}

const DISP_VALUES: [i32; 11] = [
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

/// Displacements at the disp8/disp32 edges.
pub fn disps() -> [Disp32; 11] {
    DISP_VALUES.map(Disp32::from)
}

fn indexes() -> Vec<Option<Index>> {
    vec![
        None,
        Some(Index::of::<0, 1>()),
        Some(Index::of::<1, 2>()),
        Some(Index::of::<5, 4>()),
        Some(Index::of::<8, 8>()),
        Some(Index::of::<12, 1>()),
        Some(Index::of::<13, 2>()),
        Some(Index::of::<15, 8>()),
    ]
}

/// Loads and stores: every size, base, index/scale and displacement class.
pub fn loads_and_stores() -> Vec<Insn> {
    let mut v = Vec::new();
    for size in ALL_SIZES {
        for base in Gpr::ALL {
            for index in indexes() {
                for disp in disps() {
                    let r = Gpr::ALL
                        [((u32::from(base.num()) + 3 + disp.get().unsigned_abs()) % 16) as usize];
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
        for r in Gpr::ALL {
            v.push(Insn::Store {
                size,
                base: Gpr::RDI,
                index: None,
                disp: Disp32::from(4),
                src: r,
            });
            v.push(Insn::Load {
                size,
                rd: r,
                base: Gpr::RSI,
                index: Some(Index::of::<2, 4>()),
                disp: Disp32::from(-4),
            });
        }
    }
    v
}

/// Constants stored (`movb`/`movw`/`movl`/`movq $imm, mem`): every size,
/// base, index/scale and disp class, and the imm8/imm16/imm32 edges
/// (truncated to the size).
pub fn stored_constants() -> Vec<Insn> {
    let mut v = Vec::new();
    for size in ALL_SIZES {
        for base in Gpr::ALL {
            for index in indexes() {
                for disp in disps() {
                    let value =
                        [0, 1, u64::MAX, 0x7f, 0x80, 0xffff_ffff][usize::from(base.num()) % 6];
                    v.extend(Insn::store_imm(size, base, index, disp, value));
                }
            }
        }
        for value in [
            0u64,
            1,
            0x7f,
            0x80,
            0xff,
            0x100,
            0x7fff,
            0x8000,
            0xffff,
            0x1_0000,
            0x7fff_ffff,
            0x8000_0000,
            0xffff_ffff,
            u64::MAX,
            i32::MIN as i64 as u64,
            0x1234_5678_9abc_def0,
        ] {
            v.extend(Insn::store_imm(
                size,
                Gpr::RDI,
                None,
                Disp32::from(0x7f0),
                value,
            ));
        }
    }
    v
}

/// `lea`: every destination with every base, and every base with every
/// index/scale and disp class.
pub fn leas() -> Vec<Insn> {
    let mut v = Vec::new();
    for rd in Gpr::ALL {
        for base in Gpr::ALL {
            for disp in [0, 8, -1, 0x1000].map(Disp32::from) {
                v.push(Insn::Lea {
                    rd,
                    base,
                    index: None,
                    disp,
                });
            }
        }
    }
    for base in Gpr::ALL {
        for index in indexes() {
            for disp in disps() {
                let rd = Gpr::ALL
                    [((u32::from(base.num()) + 5 + disp.get().unsigned_abs()) % 16) as usize];
                v.push(Insn::Lea {
                    rd,
                    base,
                    index,
                    disp,
                });
            }
        }
    }
    v
}

/// Fences, ret, pause, nop; lock cmpxchg and xchg at every size, base,
/// displacement class and a spread of sources.
pub fn atomics_fences_misc() -> Vec<Insn> {
    let mut v = vec![
        Insn::Ret,
        Insn::Pause,
        Insn::Nop,
        Insn::Sfence,
        Insn::Lfence,
        Insn::Mfence,
    ];
    for size in ALL_SIZES {
        for base in Gpr::ALL {
            for disp in disps() {
                for src in [0, 1, 4, 5, 6, 7, 8, 12, 13, 15].map(|n| Gpr::ALL[n]) {
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
    v
}

pub fn nops(v: &mut Vec<Insn>, n: usize) {
    v.extend(std::iter::repeat_n(Insn::Nop, n));
}

/// Forward and backward jcc/jmp around the rel8 limit, every condition
/// both ways short and long, jump to self, labels at one spot and at the end.
pub fn branches_near_and_far() -> Vec<Insn> {
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
    v
}

/// Mutually dependent jumps: both fit in rel8 only if the other one is
/// short (GNU as picks short/short). `jcc` picks jne over jmp.
pub fn mutually_dependent(jcc: bool) -> Vec<Insn> {
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
    v
}

/// One load, store, `lock cmpxchg` and `xchg` of each size.
fn sized_accesses() -> Vec<Insn> {
    let [_, rcx, rdx, _, rsp, rbp, rsi, _, _, r9, _, _, r12, r13, _, _] = Gpr::ALL;
    let mut v = Vec::new();
    for size in ALL_SIZES {
        v.push(Insn::Load {
            size,
            rd: rcx,
            base: r12,
            index: Some(Index::of::<13, 8>()),
            disp: Disp32::from(-1),
        });
        v.push(Insn::Store {
            size,
            base: r13,
            index: None,
            disp: Disp32::ZERO,
            src: rsi,
        });
        v.push(Insn::LockCmpxchg {
            size,
            base: rsp,
            disp: Disp32::from(8),
            src: r9,
        });
        v.push(Insn::Xchg {
            size,
            base: rbp,
            disp: Disp32::ZERO,
            src: rdx,
        });
    }
    v
}

/// One of each variant and size, for the objdump mnemonic check.
pub fn mnemonic_sample() -> Vec<Insn> {
    let [rax, rcx, rdx, rbx, rsp, rbp, rsi, rdi, _, r9, r10, r11, r12, r13, _, _] = Gpr::ALL;
    let mut v = vec![Insn::Label(1)];
    for (i, cond) in ALL_CONDS.into_iter().enumerate() {
        v.push(Insn::Jcc { cond, target: 1 });
        v.push(Insn::MovImm {
            rd: Gpr::ALL[i],
            imm: [
                0,
                u32::MAX as u64,
                i32::MIN as i64 as u64,
                u64::MAX,
                1 << 40,
            ][i % 5],
        });
    }
    v.extend(sized_accesses());
    v.extend([
        Insn::Bswap {
            size: BswapSize::D,
            rd: rbx,
        },
        Insn::Bswap {
            size: BswapSize::Q,
            rd: r11,
        },
        Insn::Rol16 { rd: rdx },
        Insn::Or { rd: rcx, rs: rdx },
        Insn::And { rd: rcx, rs: rdx },
        Insn::Xor { rd: rcx, rs: rdx },
        Insn::Add { rd: rcx, rs: rdx },
        Insn::Sub { rd: rcx, rs: rdx },
        Insn::Imul { rd: rcx, rs: rdx },
        Insn::OrImm {
            rd: rax,
            imm: Simm32::of::<0x100>(),
        },
        Insn::AndImm {
            rd: rbx,
            imm: Simm32::of::<-8>(),
        },
        Insn::AddImm {
            rd: rbx,
            imm: Simm32::of::<1>(),
        },
        Insn::SubImm {
            rd: rbx,
            imm: Simm32::of::<1000>(),
        },
        Insn::XorImm {
            rd: rax,
            imm: Simm32::of::<63>(),
        },
        Insn::XorImm {
            rd: r11,
            imm: Simm32::of::<0x1000>(),
        },
        Insn::Bsr { rd: rcx, rs: r11 },
        Insn::Bsf { rd: r11, rs: rdx },
        Insn::Cmove { rd: rdi, rs: r11 },
        Insn::ShlImm {
            rd: rsp,
            sh: Imm6::of::<1>(),
        },
        Insn::ShrImm {
            rd: rsp,
            sh: Imm6::of::<12>(),
        },
        Insn::ShlCl { rd: rbp },
        Insn::ShrCl { rd: rbp },
        Insn::Not { rd: rsi },
        Insn::Neg { rd: rsi },
        Insn::CmpReg { ra: rcx, rb: rdx },
        Insn::CmpImm {
            ra: rcx,
            imm: Simm32::of::<5>(),
        },
        Insn::Test { ra: rcx, rb: rdx },
        Insn::TestImm {
            ra: rax,
            imm: Simm32::of::<1>(),
        },
        Insn::Bt {
            ra: r9,
            bit: Imm6::of::<47>(),
        },
        Insn::Bts { rd: r11, rn: rcx },
        Insn::MovZx {
            size: Size::W,
            rd: rsi,
            rs: rsi,
        },
        Insn::MovZx {
            size: Size::B,
            rd: r10,
            rs: rsi,
        },
        Insn::Pause,
        Insn::Nop,
        Insn::Sfence,
        Insn::Lfence,
        Insn::Mfence,
        Insn::Invlpg { base: r13 },
        Insn::Clflush { base: r12 },
        Insn::Push { rs: rbx },
        Insn::Pop { rd: r12 },
        Insn::Jmp { target: 2 },
        Insn::Ret,
        Insn::Label(2),
    ]);
    v
}

/// The sections of the encoding table `x86_64`: the corpus of each GNU as
/// check, by the name that check passes.
pub fn table_sections() -> Vec<(&'static str, Vec<Insn>)> {
    vec![
        ("reg-reg", reg_reg_all_pairs()),
        ("single-reg", single_reg_ops()),
        ("imm", immediates()),
        ("mov-imm", mov_imm_boundaries()),
        ("mem", loads_and_stores()),
        ("atomics", atomics_fences_misc()),
        ("branches", branches_near_and_far()),
        ("mutual-jmp", mutually_dependent(false)),
        ("mutual-jcc", mutually_dependent(true)),
        ("mnemonics", mnemonic_sample()),
        ("store-imm", stored_constants()),
        ("lea", leas()),
    ]
}
