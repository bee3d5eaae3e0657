//! POWER's row of the GNU as driver (tests/gnu_as.rs), for big- and
//! little-endian and both register styles: `%rN` names with the CPU from
//! `-mpower9`/`-me6500`, bare `rN` names with `-mregnames` and a
//! `.machine` line (both paths are supported), Linux-style stack argument
//! loads under the kernel's ELFv2 `STK_PARAM`, and branches at the ends of
//! their reach. `--fatal-warnings`: e.g. "invalid register expression" for
//! %r0 in an RA0 slot is only a warning, but it means our text is not what
//! a human would accept in review.

use super::*;
use crate::gnu_as::{Corpus, Listing, Row};

use shootdown::isa::power::insn::assemble;
use shootdown::Target;

pub const ROW: Row = Row {
    flags: |t| {
        let endian = if t == Target::Power64 {
            "-mbig"
        } else {
            "-mlittle"
        };
        vec!["-a64", endian, "--fatal-warnings"]
    },
    corpora,
};

fn listing(insns: &[Insn], style: RegStyle, big: bool) -> Listing {
    let a = assemble(insns, big).expect("corpus must assemble");
    Listing {
        texts: texts(insns, style),
        labels: insns.iter().map(|i| matches!(i, Insn::Label(_))).collect(),
        bytes: a.bytes,
        offsets: a.offsets,
    }
}

/// The sections of `table_sections` with their flags and prologues: the
/// percent style selects the CPU by flag, the bare style by `.machine`
/// under the kernel's `STK_PARAM` (ELFv1, or ELFv2 for `stk`).
fn corpora(t: Target) -> Vec<Corpus> {
    let big = t == Target::Power64;
    table_sections()
        .into_iter()
        .map(|(section, insns, style)| {
            let book3e = section.starts_with("b3e");
            let (flags, prologue) = match style {
                RegStyle::Percent => (
                    vec![if book3e { "-me6500" } else { "-mpower9" }],
                    String::new(),
                ),
                RegStyle::Bare if book3e => (vec!["-mregnames"], "\t.machine e6500\n".into()),
                RegStyle::Bare => (
                    vec!["-mregnames"],
                    format!("{}\t.machine power9\n", kernel_stk_param(section == "stk")),
                ),
            };
            Corpus {
                section,
                flags,
                prologue: prologue + "\t.text\n",
                ours: listing(&insns, style, big),
                min: 0,
            }
        })
        .collect()
}

/// The kernel's names for the parameter save area (Linux 6.1,
/// `arch/powerpc/include/asm/ppc_asm.h` and the `__REG_Rn` numbers of
/// `asm/ppc-opcode.h`), which Linux-style code uses for stack arguments:
/// `elfv2` picks the `CONFIG_PPC64_ELF_ABI_V2` definition.
fn kernel_stk_param(elfv2: bool) -> String {
    let mut s = String::new();
    for n in 0..32 {
        s.push_str(&format!("#define __REG_R{n} {n}\n"));
    }
    s.push_str(if elfv2 {
        "#define __STK_PARAM(i) (32 + ((i)-3)*8)\n"
    } else {
        "#define __STK_PARAM(i) (48 + ((i)-3)*8)\n"
    });
    s.push_str("#define STK_PARAM(i) __STK_PARAM(__REG_##i)\n");
    s
}

/// Guard: the corpus really contains every variant (so "matches gas"
/// means "every variant matches gas"). Adding a variant to `Insn` without
/// extending the corpus fails to compile here (exhaustive match).
#[test]
fn corpus_covers_every_variant() {
    let mut seen = std::collections::HashSet::new();
    for i in corpus().into_iter().chain(book3e_corpus()) {
        let id: u32 = match i {
            Insn::Li { .. } => 0,
            Insn::Lis { .. } => 1,
            Insn::Addi { .. } => 2,
            Insn::Addis { .. } => 3,
            Insn::Ori { .. } => 4,
            Insn::Oris { .. } => 5,
            Insn::Xori { .. } => 6,
            Insn::Xoris { .. } => 7,
            Insn::AndiDot { .. } => 8,
            Insn::Or { .. } => 9,
            Insn::And { .. } => 10,
            Insn::Xor { .. } => 11,
            Insn::Andc { .. } => 12,
            Insn::Nor { .. } => 13,
            Insn::Add { .. } => 14,
            Insn::Subf { .. } => 15,
            Insn::Neg { .. } => 16,
            Insn::Mulld { .. } => 17,
            Insn::Sld { .. } => 18,
            Insn::Srd { .. } => 19,
            Insn::Rldicl { .. } => 20,
            Insn::Rldicr { .. } => 21,
            Insn::Rldic { .. } => 22,
            Insn::Rldimi { .. } => 23,
            Insn::Mr { .. } => 24,
            Insn::Std { .. } => 25,
            Insn::Stw { .. } => 26,
            Insn::Sth { .. } => 27,
            Insn::Stb { .. } => 28,
            Insn::Ld { .. } => 29,
            Insn::Lwz { .. } => 30,
            Insn::Lhz { .. } => 31,
            Insn::Lbz { .. } => 32,
            Insn::Stdx { .. } => 33,
            Insn::Stwx { .. } => 34,
            Insn::Sthx { .. } => 35,
            Insn::Stbx { .. } => 36,
            Insn::Ldx { .. } => 37,
            Insn::Lwzx { .. } => 38,
            Insn::Lhzx { .. } => 39,
            Insn::Lbzx { .. } => 40,
            Insn::Stdbrx { .. } => 41,
            Insn::Stwbrx { .. } => 42,
            Insn::Sthbrx { .. } => 43,
            Insn::Ldbrx { .. } => 44,
            Insn::Lwbrx { .. } => 45,
            Insn::Lhbrx { .. } => 46,
            Insn::Lbarx { .. } => 47,
            Insn::Lharx { .. } => 48,
            Insn::Lwarx { .. } => 49,
            Insn::Ldarx { .. } => 50,
            Insn::Stbcx { .. } => 51,
            Insn::Sthcx { .. } => 52,
            Insn::Stwcx { .. } => 53,
            Insn::Stdcx { .. } => 54,
            Insn::Cmpdi { .. } => 55,
            Insn::Cmpldi { .. } => 56,
            Insn::Cmpd { .. } => 57,
            Insn::Cmpld { .. } => 58,
            Insn::Cmpwi { .. } => 59,
            Insn::Cmplwi { .. } => 60,
            Insn::Cmpw { .. } => 61,
            Insn::Cmplw { .. } => 62,
            Insn::Crxor { .. } => 63,
            Insn::B { .. } => 64,
            Insn::Bc { .. } => 65,
            Insn::Bdnz { .. } => 66,
            Insn::Blr => 67,
            Insn::Mtctr { .. } => 68,
            Insn::Mfctr { .. } => 69,
            Insn::Tlbilx { .. } => 100,
            Insn::Tlbivax { .. } => 101,
            Insn::Tlbsx { .. } => 102,
            Insn::Tlbre => 103,
            Insn::Tlbwe => 104,
            Insn::Msync => 105,
            Insn::Mbar { .. } => 106,
            Insn::Mtspr { .. } => 107,
            Insn::Mfspr { .. } => 108,
            Insn::Wrteei { .. } => 109,
            Insn::Wrtee { .. } => 110,
            Insn::Mfmsr { .. } => 111,
            Insn::Eieio => 70,
            Insn::Sync => 71,
            Insn::Lwsync => 72,
            Insn::Ptesync => 73,
            Insn::Isync => 74,
            Insn::Tlbsync => 75,
            Insn::Nop => 76,
            Insn::Tlbie { .. } => 77,
            Insn::Tlbiel { .. } => 78,
            Insn::Label(_) => 79,
            Insn::Cntlzd { .. } => 80,
            Insn::Cnttzd { .. } => 81,
            Insn::Popcntd { .. } => 82,
            Insn::LdArg { .. } => 83,
            Insn::Slbia { .. } => 84,
            Insn::CpAbort => 85,
            Insn::AddicDot { .. } => 86,
            Insn::AndisDot { .. } => 87,
            Insn::Rlwinm { .. } => 88,
            // Kernel feature-section macros, not plain GNU as: the Kbuild
            // test assembles them against the kernel's own headers.
            Insn::FtrB { .. } => panic!("FtrB is not in the plain-as corpus"),
        };
        seen.insert(id);
    }
    // 89 Book3S variants and 12 Book III-E ones.
    assert_eq!(seen.len(), 89 + 12, "corpus misses some variants");
}
