//! Byte listings with an independent disassembly (capstone) next to our
//! own text, so a reader sees both what we meant and what the bytes say.

use crate::codegen::Compiled;
use crate::isa::Target;
use capstone::prelude::*;
use std::fmt::Write;

pub fn disassembler(target: Target) -> Result<Capstone, String> {
    target.backend().disassembler().map_err(|e| e.to_string())
}

/// Capstone's text for each instruction offset of `bytes` (None where it
/// cannot decode; it then resynchronises at the next instruction).
pub fn decode(
    target: Target,
    bytes: &[u8],
    offsets: &[u32],
) -> Result<Vec<Option<String>>, String> {
    let cs = disassembler(target)?;
    let mut out = Vec::new();
    for (i, &off) in offsets.iter().enumerate() {
        let end = offsets
            .get(i + 1)
            .map(|&e| e as usize)
            .unwrap_or(bytes.len());
        let chunk = bytes.get(off as usize..end).unwrap_or(&[]);
        let text = cs
            .disasm_count(chunk, u64::from(off), 1)
            .ok()
            .and_then(|insns| {
                insns.iter().next().map(|i| {
                    format!(
                        "{} {}",
                        i.mnemonic().unwrap_or(""),
                        i.op_str().unwrap_or("")
                    )
                    .trim()
                    .to_string()
                })
            });
        out.push(text);
    }
    Ok(out)
}

pub fn render(c: &Compiled) -> String {
    let mut out = String::new();
    for f in &c.funcs {
        let _ = writeln!(out, "{} ({} bytes):", f.symbol, f.bytes.len());
        let insns: Vec<_> = f.insns().collect();
        let offsets: Vec<u32> = insns.iter().map(|l| l.offset).collect();
        let decoded =
            decode(c.target, &f.bytes, &offsets).unwrap_or_else(|_| vec![None; offsets.len()]);
        for (l, d) in insns.iter().zip(decoded) {
            let end = (l.offset as usize + insn_len(c.target, f, l.offset)).min(f.bytes.len());
            let hex: Vec<String> = f.bytes[l.offset as usize..end]
                .iter()
                .map(|b| format!("{b:02x}"))
                .collect();
            let cs = d.unwrap_or_else(|| "(capstone cannot decode)".into());
            let _ = writeln!(
                out,
                "  {:04x}:  {:<24} {:<36} ; {}",
                l.offset,
                hex.join(" "),
                cs,
                l.text
            );
        }
        out.push('\n');
    }
    out
}

fn insn_len(target: Target, f: &crate::isa::mach::MachFunc, off: u32) -> usize {
    target.backend().fixed_insn_len().unwrap_or_else(|| {
        let next = f.insns().map(|l| l.offset).filter(|&o| o > off).min();
        next.map(|n| (n - off) as usize)
            .unwrap_or(f.bytes.len() - off as usize)
    })
}
