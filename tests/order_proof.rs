//! The static ordering proof (`verify::order_proof`, issue 42): it passes
//! every example on every target under both pass sets, and it fails code
//! with any barrier the passes placed turned into a no-op (the proof has
//! no tolerance for a missing barrier on any path, reached or not).

use crate::support;
use shootdown::codegen::{Compiled, Options};
use shootdown::isa::mach::InsnClass;
use shootdown::verify::order_proof::{prove, Violation};
use shootdown::Target;

pub fn examples() -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir("examples")
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "inv"))
        .map(|p| p.display().to_string())
        .collect();
    v.sort();
    v
}

fn options(passes: &str) -> Options {
    Options {
        passes: shootdown::passes::parse_list(passes).unwrap(),
        ..Options::default()
    }
}

/// Every (spec, target) of the examples' `target` lines, compiled.
fn compiled(passes: &str) -> Vec<(String, Compiled)> {
    let mut out = Vec::new();
    for path in examples() {
        let src = std::fs::read_to_string(&path).unwrap();
        let prog = shootdown::load(&path, &src).unwrap();
        for (name, _) in &prog.targets {
            let t = Target::from_name(name).unwrap();
            let c = shootdown::compile(&prog, t, &options(passes))
                .unwrap_or_else(|d| panic!("{path} {t}: {}", d.message));
            out.push((path.clone(), c));
        }
    }
    out
}

pub fn compile_src(src: &str, target: Target, passes: &str) -> Compiled {
    let prog = shootdown::load("test.inv", src).unwrap_or_else(|d| panic!("{}", d.message));
    shootdown::compile(&prog, target, &options(passes))
        .unwrap_or_else(|d| panic!("{target}: {}", d.message))
}

fn nop(target: Target, len: usize) -> Vec<u8> {
    support::arch(target)
        .nop
        .iter()
        .copied()
        .cycle()
        .take(len)
        .collect()
}

/// `c` with instruction `k` of function `f` (a barrier) turned into
/// no-ops of the same size.
pub fn without(c: &Compiled, f: usize, k: usize) -> Compiled {
    let mut m = c.clone();
    let func = &mut m.funcs[f];
    let idx: Vec<usize> = (0..func.lines.len())
        .filter(|&i| func.lines[i].label.is_none())
        .collect();
    let line = idx[k];
    let start = func.lines[line].offset as usize;
    let end = idx
        .get(k + 1)
        .map_or(func.bytes.len(), |&n| func.lines[n].offset as usize);
    func.bytes.splice(start..end, nop(c.target, end - start));
    func.lines[line].text = "nop".into();
    func.lines[line].mnemonic = "nop";
    func.lines[line].class = InsnClass::Other;
    m
}

/// The barriers the passes placed: (function, instruction index, text).
pub fn placed(c: &Compiled) -> Vec<(usize, usize, String)> {
    let mut out = Vec::new();
    for (f, func) in c.funcs.iter().enumerate() {
        for (k, l) in func.insns().enumerate() {
            if l.class == InsnClass::Barrier
                && (l.origin.note.starts_with("placed by place-barriers")
                    || l.origin.note.starts_with("placed by naive-barriers")
                    || l.origin.note.starts_with("placed by complete-exits"))
            {
                out.push((f, k, l.text.clone()));
            }
        }
    }
    out
}

fn proof(c: &Compiled) -> Vec<Violation> {
    prove(&c.opt, c).unwrap_or_else(|e| panic!("{}: {e}", c.target))
}

#[test]
fn every_example_is_proved_on_every_path() {
    let mut n = 0;
    for passes in ["all", "none"] {
        for (path, c) in compiled(passes) {
            let v = proof(&c);
            assert!(
                v.is_empty(),
                "{path} {} --passes {passes}:\n{}",
                c.target,
                v.iter()
                    .map(|v| v.to_string())
                    .collect::<Vec<_>>()
                    .join("\n")
            );
            n += c.funcs.len();
        }
    }
    eprintln!("static ordering proof: {n} functions proved");
    assert!(n > 100, "only {n} functions");
}

/// Placement is minimal: each barrier it placed serves some requirement
/// on some path, so without it the proof must find a violation. The
/// naive placement may place a barrier that another already serves
/// (reported, not required).
#[test]
fn every_placed_barrier_is_needed_by_the_proof() {
    let (mut tried, mut caught) = (0, 0);
    let mut missed = Vec::new();
    for (path, c) in compiled("all") {
        for (f, k, text) in placed(&c) {
            tried += 1;
            if proof(&without(&c, f, k)).is_empty() {
                missed.push(format!(
                    "{path} {} {} #{k} `{text}`",
                    c.target, c.funcs[f].symbol
                ));
            } else {
                caught += 1;
            }
        }
    }
    eprintln!("static ordering proof: {caught} of {tried} placed barriers' removal caught");
    assert!(tried > 50, "only {tried} barriers");
    assert!(
        missed.is_empty(),
        "removal not caught:\n{}",
        missed.join("\n")
    );
}

/// Issue 42's reproducers, and the same shapes on every weakly ordered
/// instruction set (POWER, RISC-V): a
/// store and the invalidation it must precede in the two arms of one `if`
/// inside a loop (they meet on consecutive iterations), and a barrier
/// that must sit in the arm holding the store.
pub fn issue42_specs() -> Vec<(Target, String)> {
    let mut out = Vec::new();
    let weak = support::one_per_isa()
        .into_iter()
        .filter(|&t| support::arch(t).weakly_ordered);
    for t in weak {
        let inv = support::arch(t).page_invalidate.replace("{va}", "y");
        out.push((
            t,
            format!(
                "target {t}\nseq s(p: ptr u64, y: u64) {{\n  order stores before invalidates\n  let i = 2\n  \
                 while i > 0 limit 2 else return -7 {{\n    if i == 2 {{ p[0] = y }} else {{ {inv} }}\n    i = i - 1\n  }}\n}}\n"
            ),
        ));
        out.push((
            t,
            format!(
                "target {t}\nseq s(p: ptr u64, y: u64, n: u64) {{\n order stores before invalidates\n let j = n\n \
                 while j > 0 limit 2 {{ {inv}\n  j = j - 1 }}\n let i = n\n while i > 0 limit 4 {{\n  {inv}\n  \
                 if (y & 1) != 0 {{ p[104] = i }}\n  i = i - 1\n }}\n}}\n"
            ),
        ));
    }
    out
}

#[test]
fn issue42_reproducers_are_proved_and_their_barriers_needed() {
    for (t, src) in issue42_specs() {
        for passes in ["all", "none"] {
            let c = compile_src(&src, t, passes);
            let v = proof(&c);
            assert!(v.is_empty(), "{t} {passes}: {v:?}\n{src}");
            let p = placed(&c);
            assert!(!p.is_empty(), "{t} {passes}: no barrier placed\n{src}");
            for (f, k, text) in p {
                if passes == "all" {
                    let v = proof(&without(&c, f, k));
                    assert!(
                        !v.is_empty(),
                        "{t}: without `{text}` #{k} the proof passes\n{src}"
                    );
                }
            }
        }
    }
}
