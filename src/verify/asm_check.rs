//! Our bytes against GNU `as`, and against capstone's decoding.

use super::Report;
use crate::codegen::Compiled;
use crate::isa::Target;
use std::process::Command;

/// The cross compiler driver that assembles our `.S` (plain, no flags).
pub fn gcc(target: Target) -> String {
    format!("{}-gcc", target.triple())
}

fn tool(target: Target, name: &str) -> String {
    format!("{}-{name}", target.triple())
}

/// Symbol of a function's first instruction in the object file.
fn code_symbol(target: Target, symbol: &str) -> String {
    target.backend().code_symbol(symbol)
}

pub fn gnu_as(c: &Compiled, text: &str, report: &mut Report) {
    let t = c.target;
    let what = format!("{t}: GNU as byte equality");
    let dir = match tempfile::tempdir() {
        Ok(d) => d,
        Err(e) => {
            report.fail(
                &what,
                format_args!("cannot make a temporary directory: {e}"),
            );
            return;
        }
    };
    let s = dir.path().join("gen.S");
    let o = dir.path().join("gen.o");
    let bin = dir.path().join("text.bin");
    if std::fs::write(&s, text).is_err() {
        report.fail(&what, format_args!("cannot write {}", s.display()));
        return;
    }
    let run = |cmd: &mut Command| -> Result<String, String> {
        let out = cmd
            .output()
            .map_err(|e| format!("cannot run {:?}: {e}", cmd.get_program()))?;
        if !out.status.success() {
            return Err(format!(
                "{:?} failed: {}",
                cmd.get_program(),
                String::from_utf8_lossy(&out.stderr)
            ));
        }
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    };
    if Command::new(gcc(t)).arg("--version").output().is_err() {
        report.skipped.push(format!(
            "{what}: {} is not installed (./scripts/install-deps.sh)",
            gcc(t)
        ));
        return;
    }
    // `-L` keeps local symbols: an ELFv1 sequence named `L` or `Lfoo` has
    // its code at `.L`/`.Lfoo`, which GNU as treats as local and drops.
    let steps = run(Command::new(gcc(t))
        .args(["-c", "-Wa,-L"])
        .arg(&s)
        .arg("-o")
        .arg(&o))
    .and_then(|_| {
        run(Command::new(tool(t, "objcopy"))
            .args(["-O", "binary", "-j", ".text"])
            .arg(&o)
            .arg(&bin))
    })
    .and_then(|_| run(Command::new(tool(t, "nm")).arg(&o)));
    let nm = match steps {
        Ok(nm) => nm,
        Err(e) => {
            report.fail(&what, e);
            return;
        }
    };
    let text_bytes = std::fs::read(&bin).unwrap_or_default();
    let mut all = true;
    for f in &c.funcs {
        let sym = code_symbol(t, &f.symbol);
        let addr = nm.lines().find_map(|l| {
            let mut it = l.split_whitespace();
            let (a, _k, n) = (it.next()?, it.next()?, it.next()?);
            (n == sym)
                .then(|| u64::from_str_radix(a, 16).ok())
                .flatten()
        });
        let Some(addr) = addr else {
            report.fail(&what, format_args!("symbol {sym} not in the object"));
            all = false;
            continue;
        };
        let got = text_bytes.get(addr as usize..addr as usize + f.bytes.len());
        if got != Some(f.bytes.as_slice()) {
            let first = got
                .map(|g| {
                    g.iter()
                        .zip(&f.bytes)
                        .position(|(a, b)| a != b)
                        .unwrap_or(0)
                })
                .unwrap_or(0);
            report.failures.push(format!(
                "{what}: {}: GNU as and shootdown disagree at byte {first:#x} of the function",
                f.symbol
            ));
            all = false;
        }
    }
    if all {
        report.passed.push(format!(
            "{what}: {} functions assembled by {} to exactly our bytes",
            c.funcs.len(),
            gcc(t)
        ));
    }
}

/// Mnemonics capstone prints for our canonical forms (aliases).
fn same_mnemonic(target: Target, ours: &str, theirs: &str) -> bool {
    if ours == theirs {
        return true;
    }
    let aliases = target.backend().capstone_aliases();
    if aliases
        .iter()
        .any(|(o, t)| *o == ours && t.contains(&theirs))
    {
        return true;
    }
    // AT&T size suffixes: capstone prints `movq` for our `mov`.
    target.backend().capstone_size_suffixes()
        && theirs.len() == ours.len() + 1
        && theirs.starts_with(ours)
        && theirs.ends_with(['b', 'w', 'l', 'q'])
}

/// Documented capstone 0.14 gaps (tests/power_capstone.rs pins them):
/// radix `tlbie`/`tlbiel` with nonzero RIC/PRS/R, `slbia` with an IH
/// operand and Book III-E `tlbilx` are not decoded.
fn known_gap(target: Target, mnemonic: &str) -> bool {
    target.backend().capstone_gap(mnemonic)
}

pub fn capstone(c: &Compiled, report: &mut Report) {
    let t = c.target;
    let what = format!("{t}: capstone round trip");
    let mut n = 0;
    let mut failures = Vec::new();
    for f in &c.funcs {
        let insns: Vec<_> = f.insns().collect();
        let offsets: Vec<u32> = insns.iter().map(|l| l.offset).collect();
        let decoded = match crate::emit::listing::decode(t, &f.bytes, &offsets) {
            Ok(d) => d,
            Err(e) => {
                report.fail(&what, e);
                return;
            }
        };
        for (l, d) in insns.iter().zip(decoded) {
            n += 1;
            match d {
                None if known_gap(t, l.mnemonic) => {}
                None => failures.push(format!(
                    "{}+{:#x}: capstone cannot decode `{}`",
                    f.symbol, l.offset, l.text
                )),
                Some(d) => {
                    let theirs = d.split_whitespace().next().unwrap_or("");
                    // `lock; cmpxchg` (our text) and `lock cmpxchgb` (capstone).
                    let ours = l
                        .text
                        .split_whitespace()
                        .next()
                        .unwrap_or("")
                        .trim_end_matches(';');
                    if !same_mnemonic(t, ours, theirs) && !same_mnemonic(t, l.mnemonic, theirs) {
                        failures.push(format!(
                            "{}+{:#x}: we wrote `{}`, capstone reads `{d}`",
                            f.symbol, l.offset, l.text
                        ));
                    }
                }
            }
        }
    }
    if failures.is_empty() {
        report
            .passed
            .push(format!("{what}: {n} instructions decode to what we wrote"));
    } else {
        report
            .failures
            .extend(failures.into_iter().map(|f| format!("{what}: {f}")));
    }
}
