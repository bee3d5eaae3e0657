//! Shared instruction corpus for the external-oracle tests (gnu_as, capstone).
#![allow(dead_code)] // each test binary uses a subset

use shootdown::isa::power::insn::{
    Cond, CrBit, CrField, Ds, Ih, Insn, Label, Mas, Mb5, Mb6, Mo, Reg, RegStyle, Ric, Sh5, Sh6,
    Spr, TlbilxT,
};

pub mod capstone;
pub mod gnu_as;

/// Register triples: edge registers 0 and 31 in every slot, plus mixed ones
/// so that swapped fields (e.g. RS vs RA in X-form logicals) are caught.
const R: [(u8, u8, u8); 5] = [(0, 0, 0), (31, 31, 31), (3, 4, 5), (31, 0, 17), (1, 31, 2)];

/// `r<n>`.
pub fn g(n: u8) -> Reg {
    Reg::maybe_from(u64::from(n)).expect("r0..r31")
}

/// Row `i` of [`R`] as registers.
fn regs(i: usize) -> (Reg, Reg, Reg) {
    let (a, b, c) = R[i];
    (g(a), g(b), g(c))
}

/// An immediate field built from a table's number (out of range is a
/// bug of the table).
fn f<T>(maybe_from: fn(u64) -> Option<T>, v: u8) -> T {
    maybe_from(u64::from(v)).expect("in range")
}

fn ds(d: i16) -> Ds {
    Ds::maybe_from(i64::from(d)).expect("a DS displacement")
}

fn bf(v: u8) -> CrField {
    f(CrField::maybe_from, v)
}
const S16: [i16; 5] = [0, -1, 32767, -32768, 1234];
const U16: [u16; 5] = [0, 0xffff, 0x8000, 1, 0x1234];
/// DS-form displacements (multiples of 4), including both extremes.
const DS: [i16; 5] = [0, -4, 32764, -32768, 8];
const BF: [u8; 5] = [0, 7, 1, 6, 3];
/// (sh, mb/me) pairs: 0, 63 and the 31/32 boundary where the split 6-bit
/// MD-form fields (sh5, mb5) flip.
const SH: [(u8, u8); 7] = [
    (0, 0),
    (63, 63),
    (1, 62),
    (32, 31),
    (31, 32),
    (17, 5),
    (0, 63),
];
const CONDS: [Cond; 6] = [Cond::Lt, Cond::Gt, Cond::Eq, Cond::Ne, Cond::Ge, Cond::Le];

/// Displacement from r1 of the parameter save area slot of argument
/// register `param` (r3 = the first argument) in ELFv1 and in ELFv2.
pub fn elfv1_param_slot(param: u8) -> Ds {
    ds(48 + 8 * (i16::from(param) - 3))
}
pub fn elfv2_param_slot(param: u8) -> Ds {
    ds(32 + 8 * (i16::from(param) - 3))
}

pub fn label_name(l: Label) -> String {
    format!(".L{l}")
}

/// Every `Insn` variant, several operand values each, plus forward and
/// backward branches of every kind.
pub fn corpus() -> Vec<Insn> {
    let mut v = vec![Insn::Label(0)];
    for i in 0..5 {
        v.extend(integer(i));
        v.extend(loads_and_stores(i));
        v.extend(reservations(i));
        v.extend(compares_and_tlb(i));
    }
    rotates(&mut v);
    stack_args_invalidations_and_barriers(&mut v);
    branches(&mut v);
    v
}

/// Row `i` of the operand tables: D-form immediates, X-form logicals and
/// arithmetic, counts, `mr`.
#[rustfmt::skip]
fn integer(i: usize) -> Vec<Insn> {
    use Insn::*;
    let (a, b, c) = regs(i);
    let (s, u) = (S16[i], U16[i]);
    vec![
        Li { rt: a, imm: s },
        Lis { rt: b, imm: s },
        Addi { rt: a, ra: b, imm: s },
        Addis { rt: b, ra: c, imm: s },
        Ori { ra: a, rs: b, imm: u },
        Oris { ra: b, rs: c, imm: u },
        Xori { ra: c, rs: a, imm: u },
        Xoris { ra: a, rs: c, imm: u },
        AndiDot { ra: b, rs: a, imm: u },
        AndisDot { ra: c, rs: b, imm: u },
        AddicDot { rt: c, ra: a, imm: s },
        Or { ra: a, rs: b, rb: c },
        And { ra: b, rs: c, rb: a },
        Xor { ra: c, rs: a, rb: b },
        Andc { ra: a, rs: c, rb: b },
        Nor { ra: b, rs: a, rb: c },
        Add { rt: a, ra: b, rb: c },
        Subf { rt: c, ra: b, rb: a },
        Neg { rt: b, ra: c },
        Mulld { rt: a, ra: c, rb: b },
        Sld { ra: a, rs: b, rb: c },
        Srd { ra: c, rs: a, rb: b },
        Cntlzd { ra: a, rs: b },
        Cnttzd { ra: b, rs: c },
        Popcntd { ra: c, rs: a },
        Mr { ra: a, rs: c },
    ]
}

/// Row `i`: DS/D-form and indexed loads and stores, byte-reversed too.
#[rustfmt::skip]
fn loads_and_stores(i: usize) -> Vec<Insn> {
    use Insn::*;
    let (a, b, c) = regs(i);
    let s = S16[i];
    vec![
        Std { rs: a, d: ds(DS[i]), ra: b },
        Ld { rt: c, d: ds(DS[i]), ra: a },
        Stw { rs: a, d: s, ra: c },
        Sth { rs: b, d: s, ra: a },
        Stb { rs: c, d: s, ra: b },
        Lwz { rt: a, d: s, ra: b },
        Lhz { rt: b, d: s, ra: c },
        Lbz { rt: c, d: s, ra: a },
        Stdx { rs: a, ra: b, rb: c },
        Stwx { rs: b, ra: c, rb: a },
        Sthx { rs: c, ra: a, rb: b },
        Stbx { rs: a, ra: c, rb: b },
        Ldx { rt: a, ra: b, rb: c },
        Lwzx { rt: b, ra: c, rb: a },
        Lhzx { rt: c, ra: a, rb: b },
        Lbzx { rt: a, ra: c, rb: b },
        Stdbrx { rs: a, ra: b, rb: c },
        Stwbrx { rs: b, ra: c, rb: a },
        Sthbrx { rs: c, ra: a, rb: b },
        Ldbrx { rt: a, ra: b, rb: c },
        Lwbrx { rt: b, ra: c, rb: a },
        Lhbrx { rt: c, ra: a, rb: b },
    ]
}

/// Row `i`: load-and-reserve (both EH hints) and store-conditional.
#[rustfmt::skip]
fn reservations(i: usize) -> Vec<Insn> {
    use Insn::*;
    let (a, b, c) = regs(i);
    vec![
        Lbarx { rt: a, ra: b, rb: c, eh: i % 2 == 1 },
        Lharx { rt: b, ra: c, rb: a, eh: i.is_multiple_of(2) },
        Lwarx { rt: c, ra: a, rb: b, eh: i % 2 == 1 },
        Ldarx { rt: a, ra: c, rb: b, eh: i.is_multiple_of(2) },
        Stbcx { rs: a, ra: b, rb: c },
        Sthcx { rs: b, ra: c, rb: a },
        Stwcx { rs: c, ra: a, rb: b },
        Stdcx { rs: a, ra: c, rb: b },
    ]
}

/// Row `i`: compares in every CR field, crxor, CTR moves, tlbie/tlbiel.
#[rustfmt::skip]
fn compares_and_tlb(i: usize) -> Vec<Insn> {
    use Insn::*;
    let (a, b, c) = regs(i);
    let (s, u) = (S16[i], U16[i]);
    vec![
        Cmpdi { bf: bf(BF[i]), ra: a, imm: s },
        Cmpldi { bf: bf(BF[i]), ra: b, imm: u },
        Cmpd { bf: bf(BF[i]), ra: a, rb: c },
        Cmpld { bf: bf(BF[i]), ra: c, rb: b },
        Cmpwi { bf: bf(BF[(i + 1) % 5]), ra: c, imm: s },
        Cmplwi { bf: bf(BF[(i + 2) % 5]), ra: a, imm: u },
        Cmpw { bf: bf(BF[(i + 3) % 5]), ra: b, rb: a },
        Cmplw { bf: bf(BF[(i + 4) % 5]), ra: a, rb: b },
        Crxor { bt: f(CrBit::maybe_from, a.get()), ba: f(CrBit::maybe_from, b.get()), bb: f(CrBit::maybe_from, c.get()) },
        Mtctr { rs: a },
        Mfctr { rt: b },
        Tlbie { rb: a, rs: b, ric: f(Ric::maybe_from, (i % 4) as u8), prs: i % 2 == 1, r: (i / 2) % 2 == 1 },
        Tlbiel { rb: c, rs: a, ric: f(Ric::maybe_from, ((i + 1) % 4) as u8), prs: (i + 1) % 2 == 1, r: i % 2 == 1 },
    ]
}

/// The 64-bit MD-form rotates over the sh/mb pairs, and rlwinm.
#[rustfmt::skip]
fn rotates(v: &mut Vec<Insn>) {
    use Insn::*;
    for (i, &(sh, m)) in SH.iter().enumerate() {
        let (a, b, _) = regs(i % 5);
        let (sh, m) = (f(Sh6::maybe_from, sh), f(Mb6::maybe_from, m));
        v.extend([
            Rldicl { ra: a, rs: b, sh, mb: m },
            Rldicr { ra: b, rs: a, sh, me: m },
            Rldic { ra: a, rs: b, sh, mb: m },
            Rldimi { ra: b, rs: a, sh, mb: m },
        ]);
    }
    // rlwinm: the kernel's slwi/clrlwi forms and a wrapping mask.
    for (i, &(sh, mb, me)) in [(16, 0, 15), (0, 1, 31), (0, 2, 17), (31, 31, 0), (5, 27, 31)]
        .iter()
        .enumerate()
    {
        let (a, b, _) = regs(i % 5);
        let (sh, mb, me) = (f(Sh5::maybe_from, sh), f(Mb5::maybe_from, mb), f(Mb5::maybe_from, me));
        v.push(Rlwinm { ra: a, rs: b, sh, mb, me });
    }
}

/// Stack arguments, the radix-invalidate shapes, slbia, and the barriers.
#[rustfmt::skip]
fn stack_args_invalidations_and_barriers(v: &mut Vec<Insn>) {
    use Insn::*;
    // Stack arguments (the ninth to the 29th), at ELFv1 displacements: the
    // bare-style check expands `STK_PARAM(Rn)` with the ELFv1 definition.
    for (rt, param) in [(11, 11), (0, 12), (31, 20), (3, 31)] {
        v.push(LdArg { rt: g(rt), d: elfv1_param_slot(param), param });
    }
    // The usual radix-invalidate shapes, and crclr.
    v.extend([
        Tlbie { rb: g(4), rs: g(5), ric: Ric::of::<0>(), prs: true, r: true },
        Tlbie { rb: g(4), rs: g(0), ric: Ric::of::<2>(), prs: true, r: true },
        Tlbiel { rb: g(6), rs: g(0), ric: Ric::of::<1>(), prs: false, r: true },
        Tlbie { rb: g(3), rs: g(4), ric: Ric::of::<0>(), prs: false, r: false },
        Tlbiel { rb: g(7), rs: g(8), ric: Ric::of::<0>(), prs: false, r: false },
        Tlbiel { rb: g(7), rs: g(0), ric: Ric::of::<0>(), prs: false, r: false },
        Crxor { bt: CrBit::of::<6>(), ba: CrBit::of::<6>(), bb: CrBit::of::<6>() },
        Slbia { ih: Ih::of::<3>() },
        Slbia { ih: Ih::of::<7>() },
        Slbia { ih: Ih::of::<0>() },
        CpAbort,
    ]);
    v.extend([Eieio, Sync, Lwsync, Ptesync, Isync, Tlbsync, Nop, Blr]);
}

/// Branches: backward to .L0, forward to .L1, and to an adjacent label.
#[rustfmt::skip]
fn branches(v: &mut Vec<Insn>) {
    use Insn::*;
    v.extend([B { target: 0 }, B { target: 1 }, Bdnz { target: 0 }, Bdnz { target: 1 }]);
    for (i, &cond) in CONDS.iter().enumerate() {
        v.push(Bc { cond, bf: bf(BF[i % 5]), target: 0 });
        v.push(Bc { cond, bf: bf(7 - BF[i % 5]), target: 1 });
    }
    v.extend([
        Label(2),
        Bc { cond: Cond::Eq, bf: bf(7), target: 2 },
        B { target: 2 },
        Nop,
    ]);
    // Zero displacement (branch to self) for each branch kind.
    v.extend([Label(4), B { target: 4 }, Label(5), Bdnz { target: 5 }]);
    v.extend([Label(6), Bc { cond: Cond::Ne, bf: bf(0), target: 6 }]);
    v.extend([Bdnz { target: 3 }, Label(3), Label(1), Blr]);
}

/// Branches at the exact limits of the 14-bit (bc) and 26-bit-relative
/// reach actually used: bc +0x7ffc and -0x8000, b across 64 KiB.
pub fn long_branches() -> Vec<Insn> {
    use Insn::*;
    let mut v = vec![
        Label(10),
        Bc {
            cond: Cond::Ne,
            bf: bf(0),
            target: 11,
        },
    ];
    // bc at offset 4 -> label at 4 + 0x7ffc = 0x8000: 0x7ffc/4 - 1 filler words.
    v.extend(std::iter::repeat_n(Nop, 0x7ffc / 4 - 1));
    v.push(Label(11));
    // bc at 0x8000 back to .L10 at 0: displacement -0x8000.
    v.push(Bc {
        cond: Cond::Le,
        bf: bf(5),
        target: 10,
    });
    v.push(B { target: 12 });
    v.extend(std::iter::repeat_n(Nop, 0x4000));
    v.push(Label(12));
    v.push(B { target: 10 });
    v.push(Bdnz { target: 12 });
    v
}

/// Book III-E (e500mc/e5500/e6500) instructions: assembled with
/// `-me6500` (or `.machine e6500`), which the Book3S corpus is not.
/// Every T of tlbilx, RA0 slots with 0 and a register, every MAS
/// register both ways, both wrteei values.
#[rustfmt::skip]
pub fn book3e_corpus() -> Vec<Insn> {
    use Insn::*;
    let mut v = Vec::new();
    let t = |n| f(TlbilxT::maybe_from, n);
    for i in 0..R.len() {
        let (a, b, c) = regs(i);
        v.extend([
            Tlbilx { t: t([0, 1, 3][i % 3]), ra: a, rb: b },
            Tlbilx { t: t(3), ra: c, rb: a },
            Tlbivax { ra: a, rb: b },
            Tlbivax { ra: b, rb: c },
            Tlbsx { ra: c, rb: a },
            Mbar { mo: f(Mo::maybe_from, [0, 1, 31, 2, 16][i]) },
            Wrtee { rs: a },
            Mfmsr { rt: b },
        ]);
    }
    for n in 0..9u8 {
        let (a, b, _) = regs(usize::from(n) % 5);
        let spr = Spr::Mas(f(Mas::maybe_from, n));
        v.extend([Mtspr { spr, rs: b }, Mfspr { rt: a, spr }]);
    }
    // The kernel's shapes (tlb_low.S, CONFIG_PPC_BOOK3E_64).
    let (r0, r3) = (g(0), g(3));
    v.extend([
        Mfmsr { rt: g(10) },
        Wrteei { e: false },
        Mtspr { spr: Spr::Mas(Mas::of::<6>()), rs: g(4) },
        Tlbilx { t: t(3), ra: r0, rb: r3 },
        Tlbilx { t: t(1), ra: r0, rb: r0 },
        Tlbilx { t: t(0), ra: r0, rb: r0 },
        Tlbivax { ra: r0, rb: r3 },
        Msync,
        Isync,
        Mbar { mo: Mo::of::<0>() },
        Tlbsync,
        Msync,
        Wrtee { rs: g(10) },
        Wrteei { e: true },
        Tlbsx { ra: r0, rb: r3 },
        Tlbre,
        Tlbwe,
        Lwsync,
        Blr,
    ]);
    v
}

/// Linux-style stack argument loads (the ninth to the 29th argument) at
/// the ELFv2 displacements, checked under the kernel's ELFv2 `STK_PARAM`.
pub fn stk_param_elfv2() -> Vec<Insn> {
    (11..=31)
        .map(|param| Insn::LdArg {
            rt: g(9),
            d: elfv2_param_slot(param),
            param,
        })
        .collect()
}

/// Our text for every entry (`.Ln:` for a label).
pub fn texts(insns: &[Insn], style: RegStyle) -> Vec<String> {
    insns.iter().map(|i| i.text(style, &label_name)).collect()
}

/// The sections of the encoding tables `power64` and `power64le`: the
/// corpus and text style of each GNU as check (its tag without `-be`/`-le`).
pub fn table_sections() -> Vec<(&'static str, Vec<Insn>, RegStyle)> {
    vec![
        ("pct", corpus(), RegStyle::Percent),
        ("bare", corpus(), RegStyle::Bare),
        ("stk", stk_param_elfv2(), RegStyle::Bare),
        ("b3e-pct", book3e_corpus(), RegStyle::Percent),
        ("b3e-bare", book3e_corpus(), RegStyle::Bare),
        ("long", long_branches(), RegStyle::Percent),
    ]
}
