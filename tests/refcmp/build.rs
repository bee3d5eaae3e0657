//! Building the harness: cross gcc, linking the generated `.S` beside the
//! reference, and objdump's view of the result.

use super::*;

/// A built harness: where each code lives and what objdump calls each
/// instruction there.
pub struct Exe {
    pub path: PathBuf,
    pub target: Target,
    /// The spec's POWER family: Book III-E code is disassembled as e6500.
    pub machine: Machine,
    pub gen: (u64, u64),
    pub refr: (u64, u64),
    pub mark: u64,
    pub(super) mark_range: (u64, u64),
    /// pc -> instruction text (`dsb ish`, `str x9, [x0, #1536]`).
    pub insns: BTreeMap<u64, String>,
}

/// `[lo, hi)` of an output section of the executable.
pub(super) fn section(t: Target, exe: &Path, name: &str) -> (u64, u64) {
    let out = support::run(
        Command::new(support::tool(t, "readelf"))
            .arg("-SW")
            .arg(exe),
    );
    for l in out.lines() {
        // "  [ 9] .sl_gen  PROGBITS  0000000000495410 095410 0000ae ..."
        let Some((_, rest)) = l.split_once(']') else {
            continue;
        };
        let f: Vec<&str> = rest.split_whitespace().collect();
        if f.len() > 4 && f[0] == name {
            let addr = u64::from_str_radix(f[2], 16).unwrap();
            let size = u64::from_str_radix(f[4], 16).unwrap();
            return (addr, addr + size);
        }
    }
    panic!("no section {name} in {}:\n{out}", exe.display());
}

/// pc -> instruction text, from GNU objdump.
pub(super) fn disassemble(
    t: Target,
    m: Machine,
    exe: &Path,
    sections: &[&str],
) -> BTreeMap<u64, String> {
    let mut cmd = Command::new(support::tool(t, "objdump"));
    cmd.arg("-d").arg("--no-show-raw-insn");
    if m == Machine::E6500 {
        // tlbilx and mbar by name (the default CPU prints eieio for mbar).
        cmd.arg("-Me6500");
    }
    for s in sections {
        cmd.arg("-j").arg(s);
    }
    let out = support::run(cmd.arg(exe));
    let mut m = BTreeMap::new();
    for l in out.lines() {
        let Some((addr, text)) = l.split_once(":\t") else {
            continue;
        };
        let Ok(pc) = u64::from_str_radix(addr.trim(), 16) else {
            continue;
        };
        let text = text.split('#').next().unwrap_or(text);
        let text = text.split("<").next().unwrap_or(text);
        let norm: Vec<&str> = text.split_whitespace().collect();
        m.insert(pc, norm.join(" "));
    }
    m
}

/// The parts of a harness that do not depend on the generated code:
/// the driver (store_log.c and the scenario thunks, compiled against the
/// header) and the reference code, as objects.
pub struct Prepared {
    pub dir: PathBuf,
    pub target: Target,
    pub machine: Machine,
    harness_o: PathBuf,
    ref_o: PathBuf,
}

pub(super) fn quiet(cmd: &mut Command) -> Result<(), String> {
    let o = cmd
        .output()
        .map_err(|e| format!("cannot run {cmd:?} (./scripts/install-deps.sh): {e}"))?;
    if o.status.success() {
        Ok(())
    } else {
        Err(format!(
            "{cmd:?} failed:\n{}{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        ))
    }
}

/// Compiles the driver for `c`'s header and the reference code of `stem`
/// (`poll_limit`: REF_POLL_LIMIT).
pub fn prepare(
    prog: &Program,
    stem: &str,
    c: &Compiled,
    opts: &Options,
    build: &Build,
    poll_limit: u64,
    tag: &str,
) -> Result<Prepared, String> {
    let t = c.target;
    let dir = support::scratch(tag);
    let header = format!("{stem}.h");
    std::fs::write(
        dir.join(&header),
        shootdown::emit::header::render(prog, stem, opts),
    )
    .unwrap();
    std::fs::write(dir.join("kernel.h"), KERNEL_H).unwrap();
    std::fs::write(dir.join("ref.c"), reference_c(stem)).unwrap();
    let harness = format!("{STORE_LOG_C}\n{}", driver_c(prog, c, &header, build));
    std::fs::write(dir.join("harness.c"), harness).unwrap();
    let gcc = support::gcc(t);
    let harness_o = dir.join("driver.o");
    quiet(
        Command::new(&gcc)
            .args(["-std=gnu11", "-O1", "-Wall", "-Wextra", "-Werror", "-I"])
            .arg(&dir)
            .arg("-c")
            .arg(dir.join("harness.c"))
            .arg("-o")
            .arg(&harness_o),
    )?;
    let ref_o = dir.join("ref.o");
    quiet(
        Command::new(&gcc)
            .args([
                "-std=gnu11",
                "-O2",
                "-Wall",
                "-Wextra",
                "-Werror",
                "-fno-reorder-blocks-and-partition",
                "-fno-stack-protector",
            ])
            .args(support::arch(t).gcc_flags)
            .arg(format!("-DREF_POLL_LIMIT={poll_limit}"))
            .arg("-c")
            .arg(dir.join("ref.c"))
            .arg("-o")
            .arg(&ref_o),
    )?;
    // Each code in a section of its own: qemu's log is restricted to them.
    quiet(
        Command::new(support::tool(t, "objcopy"))
            .args(["--rename-section", ".text=.sl_ref"])
            .arg(&ref_o),
    )?;
    Ok(Prepared {
        dir,
        target: t,
        machine: prog.machine,
        harness_o,
        ref_o,
    })
}

/// Links the prepared parts with generated code `asm` (assembled by GNU as
/// with line information: addr2line maps pcs back to `.S` lines).
pub fn link(p: &Prepared, asm: &str, name: &str) -> Result<Exe, String> {
    let t = p.target;
    let s = p.dir.join(format!("{name}.S"));
    let o = p.dir.join(format!("{name}.o"));
    std::fs::write(&s, asm).unwrap();
    let gcc = support::gcc(t);
    quiet(
        Command::new(&gcc)
            .arg("-c")
            .arg("-g")
            .arg(&s)
            .arg("-o")
            .arg(&o),
    )?;
    quiet(
        Command::new(support::tool(t, "objcopy"))
            .args(["--rename-section", ".text=.sl_gen"])
            .arg(&o),
    )?;
    let exe = p.dir.join(name);
    quiet(
        Command::new(&gcc)
            .arg("-static")
            .arg(&p.harness_o)
            .arg(&o)
            .arg(&p.ref_o)
            .arg("-o")
            .arg(&exe),
    )?;
    let gen = section(t, &exe, ".sl_gen");
    let refr = section(t, &exe, ".sl_ref");
    let mark_range = section(t, &exe, ".sl_mark");
    let insns = disassemble(t, p.machine, &exe, &[".sl_gen", ".sl_ref"]);
    Ok(Exe {
        path: exe,
        target: t,
        machine: p.machine,
        gen,
        refr,
        mark: mark_range.0,
        mark_range,
        insns,
    })
}

/// `prepare` and `link` in one.
#[allow(clippy::too_many_arguments)]
pub fn build_exe(
    prog: &Program,
    stem: &str,
    c: &Compiled,
    opts: &Options,
    build: &Build,
    asm: &str,
    poll_limit: u64,
    tag: &str,
) -> Result<Exe, String> {
    let p = prepare(prog, stem, c, opts, build, poll_limit, tag)?;
    link(&p, asm, "harness")
}

/// The `.S` line (1-based) of each pc of the generated code, from the
/// line information GNU as wrote (addr2line).
pub fn gen_lines(exe: &Exe) -> BTreeMap<u64, usize> {
    let pcs: Vec<u64> = exe
        .insns
        .keys()
        .copied()
        .filter(|pc| (exe.gen.0..exe.gen.1).contains(pc))
        .collect();
    let out = support::run(
        Command::new(support::tool(exe.target, "addr2line"))
            .arg("-e")
            .arg(&exe.path)
            .args(pcs.iter().map(|pc| format!("{pc:#x}"))),
    );
    pcs.iter()
        .zip(out.lines())
        .filter_map(|(pc, l)| {
            let line = l.rsplit(':').next()?.split_whitespace().next()?;
            line.parse().ok().map(|n| (*pc, n))
        })
        .collect()
}

// ------------------------------------------------------------------ run
