//! RISC-V in herd7's litmus syntax (`riscv.cat`).

use crate::isa::herd::{Access, Herd};
use crate::isa::litmus::{fence_sets, herd_set, Lowered, Side};

pub static LITMUS: Herd = Herd {
    arch: "RISCV",
    regs: &[
        "x5", "x6", "x7", "x8", "x9", "x10", "x11", "x12", "x13", "x14", "x15", "x16", "x17",
        "x18", "x19", "x20", "x21", "x22", "x23", "x24", "x25", "x26", "x27", "x28", "x29",
    ],
    access: Access::registers(
        "ori {tmp},x0,{val}",
        "sd {val},0({addr})",
        "ld {dst},0({addr})",
    ),
    full_fence: "fence rw,rw",
    barrier,
    vmsa: None,
};

/// A `fence` keeps the letters that order the test's two ends: `r`/`w`
/// for normal memory, `i`/`o` for a device register (which herd7,
/// treating memory and I/O alike, spells `r`/`w`). `fence w,o` thus
/// stays `fence w,w` between a memory store and a doorbell and is left
/// out between two memory stores (RISC-V ISA, "Memory Ordering
/// Instructions").
fn barrier(text: &str, from: Side, to: Side) -> Lowered {
    let mut w = text.split_whitespace();
    let m = w.next().unwrap_or("");
    let args = w.collect::<Vec<_>>().join("");
    match m {
        "fence" => {
            let (p, s) = if args.is_empty() {
                ("iorw".to_string(), "iorw".to_string())
            } else {
                match fence_sets(&args) {
                    Some(x) => x,
                    None => return Lowered::Dropped("unreadable fence operands".into()),
                }
            };
            let (hp, hs) = (herd_set(&p, from), herd_set(&s, to));
            if hp.is_empty() || hs.is_empty() {
                Lowered::Dropped("its access sets do not cover the two accesses checked".into())
            } else {
                Lowered::Insns(vec![format!("fence {hp},{hs}")], None)
            }
        }
        "fence.tso" if from == Side::Normal && to == Side::Normal => {
            Lowered::Insns(vec!["fence.tso".into()], None)
        }
        _ => Lowered::Dropped("herd7's RISC-V model has no such instruction".into()),
    }
}
