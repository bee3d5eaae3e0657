//! x86-64 in herd7's litmus syntax (`x86tso.cat`).

use crate::isa::litmus::{Dialect, Lowered, Side};

pub struct Litmus;

const REGS: [&str; 14] = [
    "rax", "rbx", "rcx", "rdx", "rsi", "rdi", "r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15",
];

impl Dialect for Litmus {
    fn arch(&self) -> &'static str {
        "X86_64"
    }
    fn regs(&self) -> &'static [&'static str] {
        &REGS
    }
    fn addr_in_reg(&self) -> bool {
        false
    }
    fn store(&self, val: u64, _tmp: &str, addr: &str) -> Vec<String> {
        vec![format!("movq ${val},({addr})")]
    }
    fn store_reg(&self, val: &str, addr: &str) -> Vec<String> {
        vec![format!("movq %{val},({addr})")]
    }
    fn load(&self, dst: &str, addr: &str) -> Vec<String> {
        vec![format!("movq ({addr}),%{dst}")]
    }
    fn full_fence(&self) -> Vec<String> {
        vec!["mfence".into()]
    }
    fn barrier(&self, text: &str, _from: Side, _to: Side) -> Lowered {
        match text.split_whitespace().next().unwrap_or("") {
            m @ ("mfence" | "sfence" | "lfence") => Lowered::Insns(vec![m.into()], None),
            _ => Lowered::Dropped("herd7's x86 model has no such instruction".into()),
        }
    }
}
