//! x86-64 in herd7's litmus syntax (`x86tso.cat`).

use crate::isa::herd::{Access, Herd};
use crate::isa::litmus::{Lowered, Side};

/// Accesses name their location (`movq $1,(x)`): no address registers.
pub static LITMUS: Herd = Herd {
    arch: "X86_64",
    regs: &[
        "rax", "rbx", "rcx", "rdx", "rsi", "rdi", "r8", "r9", "r10", "r11", "r12", "r13", "r14",
        "r15",
    ],
    access: Access::named(
        "movq ${val},({addr})",
        "movq %{val},({addr})",
        "movq ({addr}),%{dst}",
    ),
    full_fence: "mfence",
    barrier,
    vmsa: None,
};

fn barrier(text: &str, _from: Side, _to: Side) -> Lowered {
    match text.split_whitespace().next().unwrap_or("") {
        m @ ("mfence" | "sfence" | "lfence") => Lowered::Insns(vec![m.into()], None),
        _ => Lowered::Dropped("herd7's x86 model has no such instruction".into()),
    }
}
