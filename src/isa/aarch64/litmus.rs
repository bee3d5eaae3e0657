//! AArch64 in herd7's litmus syntax, and its TLBIs for the VMSA model.

use crate::isa::herd::{Access, Herd, Vmsa};
use crate::isa::litmus::{Lowered, Side, Tlbi, Unmodelled};

/// Barrier options herd7's AArch64 lexer knows (`DMB ISHST`, ...).
const OPTIONS: [&str; 12] = [
    "sy", "st", "ld", "ish", "ishst", "ishld", "nsh", "nshst", "nshld", "osh", "oshst", "oshld",
];

pub static LITMUS: Herd = Herd {
    arch: "AArch64",
    regs: &[
        "X1", "X2", "X3", "X4", "X5", "X6", "X7", "X8", "X9", "X10", "X11", "X12", "X13", "X14",
        "X15", "X16", "X17", "X18", "X19", "X20", "X21", "X22", "X23", "X24", "X25", "X26", "X27",
        "X28",
    ],
    access: Access::registers(
        "MOV {tmp},#{val}",
        "STR {val},[{addr}]",
        "LDR {dst},[{addr}]",
    ),
    full_fence: "DSB SY",
    barrier,
    vmsa: Some(Vmsa {
        tlbi,
        tlbi_insns,
        context_sync: "ISB",
    }),
};

/// DMB and DSB order normal memory and Device accesses alike (Arm ARM
/// B2.3); herd7 assumes one inner shareable domain, so `ISH` and `OSH`
/// read the same there (docs/memory-model.md).
fn barrier(text: &str, _from: Side, _to: Side) -> Lowered {
    let mut w = text.split_whitespace();
    let m = w.next().unwrap_or("");
    let opt = w.next().unwrap_or("sy").trim_end_matches(',');
    match m {
        "dmb" | "dsb" if OPTIONS.contains(&opt) => Lowered::Insns(
            vec![format!("{} {}", m.to_uppercase(), opt.to_uppercase())],
            None,
        ),
        "isb" => Lowered::Insns(vec!["ISB".into()], None),
        _ => Lowered::Dropped("herd7's AArch64 syntax has no such barrier".into()),
    }
}

/// A TLBI as herd7's VMSA model reads it.
fn tlbi(text: &str, operands: &[u64]) -> Result<Tlbi, Unmodelled> {
    let op = text
        .split_whitespace()
        .nth(1)
        .unwrap_or("")
        .trim_end_matches(',')
        .to_ascii_lowercase();
    let v = operands.first().copied().unwrap_or(0);
    // VA[55:12] in bits 43:0 (Arm ARM D8.13, TLBI VAE1IS and kin).
    let page = v & ((1 << 44) - 1);
    match op.as_str() {
        "vae1is" | "vale1is" | "vaae1is" | "vaale1is" | "vae1" | "vale1" | "vaae1"
        | "vaale1" => Ok(Tlbi::Pages {
            op: op.to_uppercase(),
            first: page,
            count: 1,
        }),
        // Range operands (4K granule): BaseADDR VA[48:12] in 36:0,
        // NUM 43:39, SCALE 45:44; (NUM+1) << (5*SCALE+1) pages.
        "rvae1is" | "rvale1is" | "rvaae1is" | "rvaale1is" => {
            let base = v & ((1 << 37) - 1);
            let num = (v >> 39) & 0x1f;
            let scale = (v >> 44) & 0x3;
            Ok(Tlbi::Pages {
                op: op[1..].to_uppercase(),
                first: base,
                count: (num + 1) << (5 * scale + 1),
            })
        }
        "vmalle1is" | "vmalle1" => Ok(Tlbi::All {
            op: op.to_uppercase(),
            note: None,
        }),
        "aside1is" | "aside1" => Ok(Tlbi::All {
            op: op.replace("aside1", "vmalle1").to_uppercase(),
            note: Some(format!(
                "`tlbi {op}` is written as `TLBI {}`: herd7's VMSA model has one address space, so every translation is of the invalidated ASID",
                op.replace("aside1", "vmalle1").to_uppercase()
            )),
        }),
        _ => Err(Unmodelled::NoVmsaOp { op }),
    }
}

fn tlbi_insns(op: &str, page: Option<&str>, tmp: &str) -> Vec<String> {
    match page {
        Some(p) => vec![format!("LSR {tmp},{p},#12"), format!("TLBI {op},{tmp}")],
        None => vec![format!("TLBI {op}")],
    }
}
