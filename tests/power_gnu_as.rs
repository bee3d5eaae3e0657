//! Oracle: GNU as. Print the corpus with `Insn::text`, assemble it with the
//! cross binutils, extract `.text` and require byte equality with
//! `assemble()`, for big- and little-endian and for both register styles.
//! A missing assembler is a test FAILURE, not a skip: silently skipping
//! would let an encoder regression through.

use crate::encodings_table as table;
use crate::power_common as common;

use shootdown::isa::power::insn::{assemble, Insn, RegStyle};
use std::path::PathBuf;
use std::process::Command;

struct Toolchain {
    as_: &'static str,
    objcopy: &'static str,
    endian_flag: &'static str,
}

const BE: Toolchain = Toolchain {
    as_: "powerpc64-linux-gnu-as",
    objcopy: "powerpc64-linux-gnu-objcopy",
    endian_flag: "-mbig",
};
const LE: Toolchain = Toolchain {
    as_: "powerpc64le-linux-gnu-as",
    objcopy: "powerpc64le-linux-gnu-objcopy",
    endian_flag: "-mlittle",
};

fn scratch_path(tag: &str, ext: &str) -> PathBuf {
    std::env::temp_dir().join(format!(
        "shootdown-power-{}-{tag}.{ext}",
        std::process::id()
    ))
}

fn run(cmd: &mut Command, what: &str) {
    let out = cmd.output().unwrap_or_else(|e| {
        panic!(
            "cannot run {what} ({e}); install binutils-powerpc64-linux-gnu and \
             binutils-powerpc64le-linux-gnu — this test must not be skipped"
        )
    });
    assert!(
        out.status.success(),
        "{what} failed: {:?}\nstderr:\n{}",
        cmd,
        String::from_utf8_lossy(&out.stderr)
    );
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

/// Assemble `source` and return the raw `.text` bytes. A source holding
/// `#define`s goes through the C preprocessor first, as a kernel `.S` does.
fn gas(tc: &Toolchain, source: &str, extra: &[&str], tag: &str) -> Vec<u8> {
    let s = scratch_path(tag, "S");
    let o = scratch_path(tag, "o");
    let bin = scratch_path(tag, "bin");
    let source = if source.contains("#define") {
        let pre = scratch_path(tag, "pre.S");
        std::fs::write(&pre, source).unwrap();
        let out = Command::new("cpp")
            .args(["-P", "-undef", "-x", "assembler-with-cpp"])
            .arg(&pre)
            .output()
            .expect("run cpp");
        assert!(
            out.status.success(),
            "cpp: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let _ = std::fs::remove_file(pre);
        String::from_utf8(out.stdout).unwrap()
    } else {
        source.to_string()
    };
    std::fs::write(&s, source).unwrap();
    // --fatal-warnings: e.g. "invalid register expression" for %r0 in an
    // RA0 slot is only a warning, but it means our text is not what a
    // human would accept in review.
    run(
        Command::new(tc.as_)
            .args(["-a64", tc.endian_flag, "--fatal-warnings"])
            .args(extra)
            .arg("-o")
            .arg(&o)
            .arg(&s),
        tc.as_,
    );
    run(
        Command::new(tc.objcopy)
            .args(["-O", "binary", "-j", ".text"])
            .arg(&o)
            .arg(&bin),
        tc.objcopy,
    );
    let bytes = std::fs::read(&bin).unwrap();
    for p in [s, o, bin] {
        let _ = std::fs::remove_file(p);
    }
    bytes
}

fn source(insns: &[Insn], style: RegStyle, prologue: &str) -> String {
    let mut s = String::from(prologue);
    s.push_str("\t.text\n");
    for i in insns {
        let t = i.text(style, &common::label_name);
        if matches!(i, Insn::Label(_)) {
            s.push_str(&t);
        } else {
            s.push('\t');
            s.push_str(&t);
        }
        s.push('\n');
    }
    s
}

/// Compare word by word so a failure names the instruction and both words.
/// Returns the number of instruction words checked.
fn check(
    insns: &[Insn],
    tc: &Toolchain,
    style: RegStyle,
    extra: &[&str],
    prologue: &str,
    tag: &str,
) -> usize {
    let big = tc.endian_flag == "-mbig";
    let ours = assemble(insns, big).expect("corpus must assemble");
    let theirs = gas(tc, &source(insns, style, prologue), extra, tag);
    let word = |b: &[u8], at: usize| {
        let w: [u8; 4] = b[at..at + 4].try_into().unwrap();
        if big {
            u32::from_be_bytes(w)
        } else {
            u32::from_le_bytes(w)
        }
    };
    let mut mismatches = Vec::new();
    for (i, insn) in insns.iter().enumerate() {
        if matches!(insn, Insn::Label(_)) {
            continue;
        }
        let at = ours.offsets[i] as usize;
        if at + 4 > theirs.len() {
            mismatches.push(format!("#{i} {insn:?}: gas output too short"));
            continue;
        }
        let (a, b) = (word(&ours.bytes, at), word(&theirs, at));
        if a != b {
            mismatches.push(format!(
                "#{i} `{}`: ours {a:#010x} gas {b:#010x}",
                insn.text(style, &common::label_name)
            ));
        }
    }
    assert!(
        mismatches.is_empty(),
        "{tag}: {} mismatches:\n{}",
        mismatches.len(),
        mismatches.join("\n")
    );
    assert_eq!(ours.bytes.len(), theirs.len(), "{tag}: length differs");
    assert_eq!(ours.bytes, theirs, "{tag}: bytes differ");
    // The checked-in table: written from GNU as's bytes when blessing,
    // else required to equal them.
    let (section, file) = match tag.rsplit_once('-') {
        Some((s, "be")) => (s, "power64"),
        Some((s, "le")) => (s, "power64le"),
        _ => panic!("tag {tag} must end in -be or -le"),
    };
    table::oracle(
        file,
        section,
        table::entries(common::texts(insns, style), &theirs, &ours.offsets),
    );
    ours.bytes.len() / 4
}

#[test]
fn percent_style_matches_gas_be_and_le() {
    let c = common::corpus();
    for (tc, tag) in [(&BE, "pct-be"), (&LE, "pct-le")] {
        let n = check(&c, tc, RegStyle::Percent, &["-mpower9"], "", tag);
        eprintln!("{tag}: {n} instruction words byte-identical to GNU as");
    }
}

/// Bare `rN` names need -mregnames; here the CPU is selected with a
/// `.machine power9` line instead of -mpower9 (both paths are supported).
#[test]
fn bare_style_matches_gas_with_mregnames() {
    let c = common::corpus();
    for (tc, tag) in [(&BE, "bare-be"), (&LE, "bare-le")] {
        let prologue = format!("{}\t.machine power9\n", kernel_stk_param(false));
        let n = check(&c, tc, RegStyle::Bare, &["-mregnames"], &prologue, tag);
        eprintln!("{tag}: {n} instruction words byte-identical to GNU as");
    }
}

/// Linux-style stack argument loads under the kernel's ELFv2 definition of
/// `STK_PARAM` (power64le kernels, and big-endian ones built for ELFv2)
/// give the ELFv2 displacements the plain style encodes for power64le.
#[test]
fn kernel_stk_param_elfv2_matches_our_displacements() {
    let c = common::stk_param_elfv2();
    let prologue = format!("{}\t.machine power9\n", kernel_stk_param(true));
    for (tc, tag) in [(&LE, "stk-le"), (&BE, "stk-be")] {
        check(&c, tc, RegStyle::Bare, &["-mregnames"], &prologue, tag);
    }
}

/// Book III-E: the CPU from `-me6500` (percent style) or `.machine e6500`
/// (bare style, as the generated files select it).
#[test]
fn book3e_matches_gas_be_and_le() {
    let c = common::book3e_corpus();
    for (tc, tag) in [(&BE, "b3e-pct-be"), (&LE, "b3e-pct-le")] {
        let n = check(&c, tc, RegStyle::Percent, &["-me6500"], "", tag);
        eprintln!("{tag}: {n} instruction words byte-identical to GNU as");
    }
    for (tc, tag) in [(&BE, "b3e-bare-be"), (&LE, "b3e-bare-le")] {
        let n = check(
            &c,
            tc,
            RegStyle::Bare,
            &["-mregnames"],
            "\t.machine e6500\n",
            tag,
        );
        eprintln!("{tag}: {n} instruction words byte-identical to GNU as");
    }
}

#[test]
fn branch_limits_match_gas() {
    let c = common::long_branches();
    for (tc, tag) in [(&BE, "long-be"), (&LE, "long-le")] {
        check(&c, tc, RegStyle::Percent, &["-mpower9"], "", tag);
    }
}

/// Guard: the corpus really contains every variant (so "matches gas"
/// means "every variant matches gas"). Adding a variant to `Insn` without
/// extending the corpus fails to compile here (exhaustive match).
#[test]
fn corpus_covers_every_variant() {
    let mut seen = std::collections::HashSet::new();
    for i in common::corpus().into_iter().chain(common::book3e_corpus()) {
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
