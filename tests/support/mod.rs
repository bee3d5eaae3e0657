//! Shared helpers for the oracle tests: generate code through the library,
//! assemble it with the GNU cross toolchain, build C harnesses and run them
//! under qemu-user (or natively on x86-64). Missing tools are failures.

#![allow(dead_code)]

use shootdown::codegen::{Compiled, Options, Style};
use shootdown::passes;
use shootdown::Target;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};

pub mod arch;
pub use arch::{arch, one_per_isa, Release};

/// One instruction line of `objdump -d` with raw bytes
/// ("    40081048:\td50332bf \tdmb\toshst"): its address, the mnemonic
/// field and the operand field (if any); `None` for any other line.
pub fn objdump_insn(l: &str) -> Option<(u64, &str, Option<&str>)> {
    let parts: Vec<&str> = l.split('\t').collect();
    if parts.len() < 3 {
        return None;
    }
    let addr = parts[0].trim().strip_suffix(':')?;
    let pc = u64::from_str_radix(addr, 16).ok()?;
    Some((pc, parts[2], parts.get(3).copied()))
}

/// A fresh scratch directory under target/ (kept for post-mortems).
pub fn scratch(tag: &str) -> PathBuf {
    static N: AtomicUsize = AtomicUsize::new(0);
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!(
        "{tag}-{}-{}",
        std::process::id(),
        N.fetch_add(1, Ordering::SeqCst)
    ));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

pub fn options(passes: &str) -> Options {
    Options {
        passes: passes::parse_list(passes).unwrap(),
        style: Style::Plain,
        prefix: String::new(),
        spdx: None,
        cover: Default::default(),
        features: Default::default(),
    }
}

pub fn compile_spec(path: &str, target: Target, passes: &str) -> (Compiled, Options) {
    let src = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let prog = shootdown::load(path, &src).unwrap_or_else(|d| panic!("{path}: {}", d.message));
    let opts = options(passes);
    let c = shootdown::compile(&prog, target, &opts)
        .unwrap_or_else(|d| panic!("{path} for {target}: {}", d.message));
    (c, opts)
}

pub fn asm_text(c: &Compiled, opts: &Options) -> String {
    shootdown::emit::asm::render(c, opts)
}

pub fn header_text(path: &str, opts: &Options) -> String {
    let src = std::fs::read_to_string(path).unwrap();
    let prog = shootdown::load(path, &src).unwrap();
    let stem = Path::new(path)
        .file_stem()
        .unwrap()
        .to_string_lossy()
        .into_owned();
    shootdown::emit::header::render(&prog, &stem, opts)
}

pub fn gcc(target: Target) -> String {
    tool(target, "gcc")
}

/// A binutils or gcc program for `target`: the host's own on the host's
/// architecture, else the cross one.
pub fn tool(target: Target, name: &str) -> String {
    if arch(target).native {
        name.into()
    } else {
        format!("{}-{name}", target.triple())
    }
}

/// Run a command; panic with its output if it cannot start or fails.
pub fn run(cmd: &mut Command) -> String {
    let out = cmd.output().unwrap_or_else(|e| {
        panic!("cannot run {cmd:?} (install it: ./scripts/install-deps.sh): {e}")
    });
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(
        out.status.success(),
        "{cmd:?} failed ({}):\nstdout:\n{stdout}\nstderr:\n{stderr}",
        out.status
    );
    stdout + &stderr
}

/// Assemble `.S` text with plain `<triple>-gcc -c`; returns the object path.
pub fn assemble(target: Target, asm: &str, dir: &Path, stem: &str) -> PathBuf {
    let s = dir.join(format!("{stem}.S"));
    let o = dir.join(format!("{stem}.o"));
    std::fs::write(&s, asm).unwrap();
    run(Command::new(gcc(target))
        .arg("-c")
        .arg(&s)
        .arg("-o")
        .arg(&o));
    o
}

/// The `.text` section of an object file.
pub fn text_bytes(target: Target, obj: &Path) -> Vec<u8> {
    let bin = obj.with_extension("text.bin");
    run(Command::new(tool(target, "objcopy"))
        .args(["-O", "binary", "-j", ".text"])
        .arg(obj)
        .arg(&bin));
    std::fs::read(bin).unwrap()
}

/// The qemu-user binary that runs `target` code (None: native).
pub fn qemu(target: Target) -> Option<&'static str> {
    let a = arch(target);
    (!a.native).then_some(a.qemu)
}

/// Build a static executable from a C harness, the header and the `.S`;
/// returns its path (in a fresh scratch directory).
pub fn build_harness(
    target: Target,
    asm: &str,
    header: &str,
    header_name: &str,
    harness_c: &str,
    tag: &str,
) -> PathBuf {
    let dir = scratch(tag);
    std::fs::write(dir.join(header_name), header).unwrap();
    let s = dir.join("gen.S");
    std::fs::write(&s, asm).unwrap();
    let c = dir.join("harness.c");
    std::fs::write(&c, harness_c).unwrap();
    let exe = dir.join("harness");
    run(Command::new(gcc(target))
        .args([
            "-std=c11", "-O1", "-Wall", "-Wextra", "-Werror", "-static", "-I",
        ])
        .arg(&dir)
        .arg(&c)
        .arg(&s)
        .arg("-o")
        .arg(&exe));
    exe
}

/// A command that runs `exe` (under qemu-user for foreign targets), with
/// `qemu_args` before the executable when qemu is used.
pub fn harness_command(target: Target, exe: &Path, qemu_args: &[&str]) -> Command {
    match qemu(target) {
        Some(q) => {
            let mut c = Command::new(q);
            c.args(qemu_args).arg(exe);
            c
        }
        None => Command::new(exe),
    }
}

/// Build a static executable from a C harness, the header and the `.S`,
/// then run it (under qemu-user for foreign targets). Returns stdout.
pub fn run_harness(
    target: Target,
    asm: &str,
    header: &str,
    header_name: &str,
    harness_c: &str,
    tag: &str,
) -> String {
    let exe = build_harness(target, asm, header, header_name, harness_c, tag);
    run(&mut harness_command(target, &exe, &[]))
}

/// `shootdown trace ARGS... --json` from the repository root: its events.
/// Panics with stderr if the run fails.
pub fn trace_events(args: &[&str]) -> Vec<serde_json::Value> {
    let out = Command::new(env!("CARGO_BIN_EXE_shootdown"))
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .arg("trace")
        .args(args)
        .arg("--json")
        .output()
        .expect("run shootdown");
    assert!(
        out.status.success(),
        "trace {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("trace JSON");
    match v["events"].take() {
        serde_json::Value::Array(e) => e,
        other => panic!("trace {args:?}: events {other}"),
    }
}

/// xorshift64: a fixed seed gives reproducible inputs and failures.
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    /// True `pct` times in 100.
    pub fn chance(&mut self, pct: u64) -> bool {
        self.below(100) < pct
    }
}

/// `shootdown ARGS`'s standard output; panics with its standard error
/// when it fails.
pub fn shootdown_ok(args: &[&str]) -> String {
    let o = shootdown(args);
    assert!(
        o.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8(o.stdout).unwrap()
}

/// Run the shootdown binary from the repository root.
pub fn shootdown(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_shootdown"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("run shootdown")
}
