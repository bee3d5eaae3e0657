//! POWER in herd7's litmus syntax (`ppc.cat`).

use crate::isa::herd::{Access, Herd};
use crate::isa::litmus::{Lowered, Side};

pub static LITMUS: Herd = Herd {
    arch: "PPC",
    regs: &[
        "r3", "r4", "r5", "r6", "r7", "r8", "r9", "r10", "r11", "r12", "r14", "r15", "r16", "r17",
        "r18", "r19", "r20", "r21", "r22", "r23", "r24", "r25", "r26", "r27", "r28", "r29",
    ],
    access: Access::registers(
        "li {tmp},{val}",
        "std {val},0({addr})",
        "ld {dst},0({addr})",
    ),
    full_fence: "sync",
    barrier,
    vmsa: None,
};

/// Power ISA Book II 1.7.1: `lwsync` does not order accesses to
/// caching-inhibited storage; `eieio` orders stores to
/// caching-inhibited storage among themselves and stores to
/// cacheable storage among themselves, not one kind against the other.
/// herd7 cannot see the difference (device registers are memory
/// there), so such a barrier is left out where the test's pair mixes
/// the kinds or involves a device register.
fn barrier(text: &str, from: Side, to: Side) -> Lowered {
    let m = text.split_whitespace().next().unwrap_or("");
    let normal = from == Side::Normal && to == Side::Normal;
    match m {
        "sync" | "hwsync" => Lowered::Insns(vec!["sync".into()], None),
        "ptesync" => Lowered::Insns(
            vec!["sync".into()],
            Some("`ptesync` is written `sync`: herd7 has no ptesync; for memory accesses it orders as sync does (Power ISA Book III 5.9.2)".into()),
        ),
        "msync" => Lowered::Insns(
            vec!["sync".into()],
            Some("Book III-E `msync` is written `sync` (the same encoding)".into()),
        ),
        "lwsync" if normal => Lowered::Insns(vec!["lwsync".into()], None),
        "lwsync" => Lowered::Dropped("lwsync does not order caching-inhibited accesses".into()),
        "eieio" | "mbar" if from == to => Lowered::Insns(
            vec!["eieio".into()],
            (m == "mbar").then(|| "Book III-E `mbar` is written `eieio` (the same encoding)".into()),
        ),
        "eieio" | "mbar" => Lowered::Dropped(
            "does not order a cacheable access against a caching-inhibited one".into(),
        ),
        "isync" => Lowered::Insns(vec!["isync".into()], None),
        _ => Lowered::Dropped("herd7's PPC model has no such instruction".into()),
    }
}
