//! Static counts per sequence (`shootdown stats --json`, DESIGN "Outputs").

use crate::codegen::Compiled;
use crate::isa::mach::InsnClass;
use serde::Serialize;
use std::collections::BTreeMap;

#[derive(Serialize, Debug, Clone, PartialEq, Eq)]
pub struct SeqStats {
    pub name: String,
    pub target: String,
    pub instructions: usize,
    pub bytes: usize,
    pub stores: usize,
    pub loads: usize,
    pub barriers: BTreeMap<String, usize>,
    pub invalidates: usize,
}

#[derive(Serialize, Debug)]
pub struct Stats {
    pub sequences: Vec<SeqStats>,
}

pub fn collect(c: &Compiled) -> Vec<SeqStats> {
    c.funcs
        .iter()
        .zip(&c.opt.seqs)
        .map(|(f, s)| {
            let mut st = SeqStats {
                name: s.name.clone(),
                target: c.target.name().to_string(),
                instructions: f.insns().count(),
                bytes: f.bytes.len(),
                stores: 0,
                loads: 0,
                barriers: BTreeMap::new(),
                invalidates: 0,
            };
            for l in f.insns() {
                match l.class {
                    InsnClass::Store => st.stores += 1,
                    InsnClass::Load => st.loads += 1,
                    InsnClass::Barrier => *st.barriers.entry(barrier_kind(l)).or_default() += 1,
                    InsnClass::Invalidate => st.invalidates += 1,
                    InsnClass::Other => {}
                }
            }
            st
        })
        .collect()
}

/// A barrier's kind as `stats` and `diff` count it: the mnemonic with its
/// option where the ISA's syntax has barrier options (AArch64's `dsb ish`
/// waits for TLBIs, `dsb ishst` only orders stores: different barriers);
/// register operands, as in a locked `cmpxchg`, are not part of the kind.
pub fn barrier_kind(l: &crate::isa::mach::Line) -> String {
    let mut words = l.text.split_whitespace();
    match (words.next(), words.next()) {
        (Some(m), Some(opt)) if m == l.mnemonic && crate::spec::syntax::is_barrier_option(opt) => {
            format!("{m} {opt}")
        }
        _ => l.mnemonic.to_string(),
    }
}

pub fn to_json(stats: Vec<SeqStats>) -> String {
    serde_json::to_string_pretty(&Stats { sequences: stats }).unwrap_or_default()
}

pub fn to_text(stats: &[SeqStats]) -> String {
    let mut out = String::new();
    for s in stats {
        let barriers: Vec<String> = s.barriers.iter().map(|(k, v)| format!("{v} {k}")).collect();
        out.push_str(&format!(
            "{:<24} {:<10} {:>4} insns {:>5} bytes {:>3} stores {:>3} loads {:>3} invalidates  barriers: {}\n",
            s.name,
            s.target,
            s.instructions,
            s.bytes,
            s.stores,
            s.loads,
            s.invalidates,
            if barriers.is_empty() { "none".into() } else { barriers.join(", ") }
        ));
    }
    out
}
