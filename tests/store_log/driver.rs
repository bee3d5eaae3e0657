//! What tests/harness/store_log.c is given: a C driver (one thunk per
//! sequence, type-checked against the generated header) and, per case, the
//! stdin directives that lay out devices, scripted reads, normal memory and
//! arguments the way `trace` does (src/verify/trace.rs).

use shootdown::codegen::Compiled;
use shootdown::ir::{Instances, Program};
use shootdown::lir::ArgKind;
use shootdown::spec::ast::Endian;
use shootdown::verify::interp::World;
use std::fmt::Write;

/// Whether the argument is passed as a pointer in C.
fn is_pointer(c: &Compiled, seq: usize, a: &ArgKind) -> bool {
    match a {
        ArgKind::DeviceBase(_) | ArgKind::DeviceArray(_) => true,
        ArgKind::DeviceCount(_) => false,
        ArgKind::Param(i) => c.opt.seqs[seq].ptrs.get(*i).is_some_and(Option::is_some),
    }
}

/// The driver appended to store_log.c.
pub fn driver_c(c: &Compiled, header_name: &str) -> String {
    let mut out = format!("#line 1 \"driver.c\"\n#include \"{header_name}\"\n\n");
    let mut table = String::new();
    for (i, (f, lir)) in c.funcs.iter().zip(&c.lir).enumerate() {
        let sym = &f.symbol;
        let typed: Vec<String> = lir
            .args
            .iter()
            .enumerate()
            .map(|(k, a)| {
                if is_pointer(c, i, a) {
                    format!("(void *)(uintptr_t)a[{k}]")
                } else {
                    format!("a[{k}]")
                }
            })
            .collect();
        let typed = typed.join(", ");
        let body = if c.opt.seqs[i].void {
            // The code leaves the return register as it was (as the
            // kernel's void functions do): the call reports 0.
            format!("\t{sym}({typed});\n\treturn 0;\n")
        } else {
            format!("\treturn {sym}({typed});\n")
        };
        let _ = write!(
            out,
            "static long sl_call_{i}(const uint64_t *a)\n{{\n\t(void)a;\n{body}}}\n\n"
        );
        let _ = writeln!(
            table,
            "\t{{ \"{sym}\", (void (*)(void)){sym}, sl_call_{i} }},"
        );
    }
    let _ = write!(
        out,
        "static const struct sl_seq sl_seqs[] = {{\n{table}}};\n\n\
         int main(void)\n{{\n\treturn sl_main(sl_seqs, (int)(sizeof sl_seqs / sizeof sl_seqs[0]));\n}}\n"
    );
    out
}

/// `v` as the `bytes` bytes a register of that byte order holds.
pub fn reg_bytes(v: u64, bytes: u32, endian: Endian) -> Vec<u8> {
    let mut b = v.to_le_bytes()[..bytes as usize].to_vec();
    if endian == Endian::Big {
        b.reverse();
    }
    b
}

pub fn hex(b: &[u8]) -> String {
    if b.is_empty() {
        return "-".into();
    }
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// Directives for one run of sequence `seq` in `world`, ending in `call`.
/// Like `trace`: every instance of a run-time set gets a window (at least
/// one, even for a count of 0); a fixed single instance is passed by base.
pub fn directives(prog: &Program, c: &Compiled, seq: usize, world: &World) -> String {
    let s = &c.opt.seqs[seq];
    let mut out = String::new();
    for &d in &s.devices {
        let dev = &prog.devices[d];
        let top = dev.extent();
        for inst in 0..world.count(prog, d).max(1) {
            let _ = writeln!(out, "win {d} {inst} {top}");
        }
        for (ri, r) in dev.regs.iter().enumerate() {
            if let Some(vals) = world.reads.get(&(d, ri)) {
                let mask = if r.width >= 64 {
                    u64::MAX
                } else {
                    (1u64 << r.width) - 1
                };
                let vals: Vec<String> = vals
                    .iter()
                    .map(|v| hex(&reg_bytes(v & mask, r.bytes(), r.endian)))
                    .collect();
                let _ = writeln!(out, "read {d} {:x} {}", r.offset, vals.join(","));
            }
        }
    }
    for (i, p) in s.ptrs.iter().enumerate() {
        if p.is_some() {
            let bytes = world.memory.get(&i).cloned().unwrap_or_default();
            let _ = writeln!(out, "mem {i} {}", hex(&bytes));
        }
    }
    for a in &c.lir[seq].args {
        let _ = match a {
            ArgKind::DeviceBase(d) => writeln!(out, "arg base {d}"),
            ArgKind::DeviceArray(d) => writeln!(out, "arg array {d} {}", world.count(prog, *d)),
            ArgKind::DeviceCount(d) => {
                let n = match prog.devices[*d].instances {
                    Instances::Dynamic { .. } => world.count(prog, *d),
                    _ => 0,
                };
                writeln!(out, "arg int {n:x}")
            }
            ArgKind::Param(i) if is_pointer(c, seq, a) => writeln!(out, "arg mem {i}"),
            ArgKind::Param(i) => {
                writeln!(
                    out,
                    "arg int {:x}",
                    world.params.get(*i).copied().unwrap_or(0)
                )
            }
        };
    }
    let _ = writeln!(out, "call {seq}");
    out
}
