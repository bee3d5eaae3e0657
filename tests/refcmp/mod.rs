//! The kernel reference comparison (docs/trace-oracle.md, "The kernel's own
//! code as a second oracle"). The generated code and a transcription of
//! the kernel (or firmware) function it stands for (tests/reference/*.c,
//! gcc -O2) run side by side in tests/harness/store_log.c under qemu-user
//! with `-singlestep -d exec,nochain`: the harness logs every device
//! access and trapped invalidate, qemu's log gives every executed
//! instruction of both codes, and GNU objdump names them. Per case both
//! must make the same device accesses per instance, the same invalidates
//! and return the same value with the same final memory; the generated
//! code must execute, between every two events the spec requires
//! ordered, a barrier the target's table says orders them.

#![allow(dead_code)]

pub mod scenarios;

use crate::support;
use shootdown::codegen::{Compiled, Options};
use shootdown::ir::order::Class;
use shootdown::ir::{Instances, Mapping, PollOp, Program, Stmt};
use shootdown::isa::barriers::{self, BarrierKind};
use shootdown::isa::Machine;
use shootdown::lir::ArgKind;
use shootdown::spec::ast::{Endian, Scope};
use shootdown::Target;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const STORE_LOG_C: &str = include_str!("../harness/store_log.c");
const KERNEL_H: &str = include_str!("../reference/kernel.h");

/// The reference transcription of an example.
/// What names an invalidation operation in a disassembly line, registers
/// left out: `tlbi vale1is, x9` -> `tlbi vale1is`; POWER `tlbie r11,r10,2,1,1`
/// -> `tlbie 2,1,1` (RIC, PRS, R are the operation; RB, RS its operands);
/// `slbia 3` as it is.
pub fn inval_key(text: &str) -> String {
    let mut parts = text.split(',').map(str::trim);
    let first = parts.next().unwrap_or("");
    let words: Vec<&str> = first.split_whitespace().collect();
    match words.first() {
        // RISC-V: the operands follow the mnemonic; the form is whether
        // rs1 is the zero register (every address), the values are compared
        // apart.
        Some(&m) if m == "sfence.vma" || m == "sinval.vma" => {
            let x0 = matches!(words.get(1), Some(&("zero" | "x0")));
            format!("{m}{}", if x0 { " x0" } else { "" })
        }
        Some(&m) if m == "tlbie" || m == "tlbiel" => {
            let imms: Vec<&str> = parts.skip(1).collect();
            format!("{m} {}", imms.join(","))
        }
        _ => words.join(" "),
    }
}

pub fn reference_c(stem: &str) -> &'static str {
    match stem {
        "npu2_atsd" => include_str!("../reference/npu2_atsd.c"),
        "npu2_tce_kill" => include_str!("../reference/npu2_tce_kill.c"),
        "arm_smmu" => include_str!("../reference/arm_smmu.c"),
        "arm64_tlb_range" => include_str!("../reference/arm64_tlb_range.c"),
        "vtd_iotlb" => include_str!("../reference/vtd_iotlb.c"),
        "e6500_tcd_lock" => include_str!("../reference/e6500_tcd_lock.c"),
        "book3e_tlb" => include_str!("../reference/book3e_tlb.c"),
        "radix_tlb" => include_str!("../reference/radix_tlb.c"),
        "riscv_tlb" => include_str!("../reference/riscv_tlb.c"),
        _ => panic!("no reference for {stem}"),
    }
}

/// One `#[test]` per example with a kernel reference ([`reference_c`]),
/// named after the example, each running `$check("STEM")`: the reference
/// and mutation comparisons cover the same examples.
macro_rules! test_each_reference {
    ($check:ident) => {
        $crate::refcmp::test_each_reference!(
            $check: npu2_atsd,
            npu2_tce_kill,
            arm_smmu,
            arm64_tlb_range,
            vtd_iotlb,
            e6500_tcd_lock,
            book3e_tlb,
            radix_tlb,
            riscv_tlb
        );
    };
    ($check:ident: $($stem:ident),+) => {
        $(
            #[test]
            fn $stem() {
                $check(stringify!($stem));
            }
        )+
    };
}
pub(crate) use test_each_reference;

// ------------------------------------------------------------ scenarios

/// One element of a scenario's argument vector (what both the generated
/// calls and the reference entry point receive).
#[derive(Clone, Copy, Debug)]
pub enum Arg {
    /// The base (one instance) or the array of bases (a run-time set) of
    /// a device.
    Dev(&'static str),
    /// The instance count of a run-time set.
    Count(&'static str),
    /// An integer input.
    Int(&'static str),
    /// A pointer to normal memory (the input's bytes).
    Mem(&'static str),
}

/// A generated-code argument: a scenario input or a constant.
#[derive(Clone, Copy, Debug)]
pub enum Val {
    A(&'static str),
    K(u64),
}

/// One call of a generated sequence; parameters not bound take the
/// scenario input of the same name.
pub struct Call {
    pub seq: &'static str,
    pub bind: &'static [(&'static str, Val)],
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Poll {
    /// Ready on the first read.
    Early,
    /// Ready on the third read.
    Late,
    /// Never ready (run on the build with poll limits lowered to 4).
    Never,
}

#[derive(Clone, Debug)]
pub struct Input {
    pub label: String,
    pub ints: Vec<(&'static str, u64)>,
    pub mem: Vec<(&'static str, Vec<u8>)>,
    /// Successive values loads of a byte of normal memory see (the last
    /// repeats), as another CPU would make them: (argument, offset,
    /// values). Loads that reserve (lbarx, ldaxrb) see memory as it is.
    pub mem_reads: Vec<(&'static str, u64, Vec<u8>)>,
    /// The example deliberately does something else than the kernel here:
    /// the comparison must find the difference (and prints it).
    pub differs: Option<&'static str>,
    /// Outside what the kernel function accepts (it would loop forever,
    /// or its callers never pass it): the kernel code does not run; the
    /// generated code still runs (the ordering check, and the mutation
    /// test compares it with the unmutated code).
    pub outside: Option<&'static str>,
}

impl Input {
    pub fn new(label: impl Into<String>, ints: &[(&'static str, u64)]) -> Self {
        Input {
            label: label.into(),
            ints: ints.to_vec(),
            mem: Vec::new(),
            mem_reads: Vec::new(),
            differs: None,
            outside: None,
        }
    }
    pub fn mem(mut self, name: &'static str, bytes: &[u8]) -> Self {
        self.mem.retain(|(n, _)| *n != name);
        self.mem.push((name, bytes.to_vec()));
        self
    }
    pub fn mem_reads(mut self, name: &'static str, off: u64, values: &[u8]) -> Self {
        self.mem_reads.push((name, off, values.to_vec()));
        self
    }
    pub fn differs(mut self, why: &'static str) -> Self {
        self.differs = Some(why);
        self
    }
    pub fn outside(mut self, why: &'static str) -> Self {
        self.outside = Some(why);
        self
    }
}

/// A kernel function and the generated calls that stand for it.
pub struct Scenario {
    pub name: &'static str,
    /// The kernel function, with file and version.
    pub kernel: &'static str,
    pub ref_fn: &'static str,
    pub args: &'static [Arg],
    pub calls: &'static [Call],
    pub inputs: Vec<Input>,
}

/// The scenarios of one compilation of an example: its `--set` pins
/// (the kernel's choice where the example derives its own) say which.
pub struct Build {
    pub pins: Vec<(&'static str, u64)>,
    /// Why this build pins what it pins.
    pub why: &'static str,
    pub scenarios: Vec<Scenario>,
}

// ---------------------------------------------------------------- cases

/// One run of a scenario: which input, how many instances of run-time
/// sets, how polls answer.
#[derive(Clone, Debug)]
pub struct Case {
    pub scenario: usize,
    pub input: usize,
    pub count: u64,
    pub poll: Poll,
}

/// Devices a scenario's calls touch, in program order.
fn scenario_devices(prog: &Program, sc: &Scenario) -> Vec<usize> {
    let mut out = BTreeSet::new();
    for call in sc.calls {
        out.extend(seq_of(prog, call.seq).1.devices.iter().copied());
    }
    out.into_iter().collect()
}

pub fn seq_of<'a>(prog: &'a Program, name: &str) -> (usize, &'a shootdown::ir::Seq) {
    prog.seqs
        .iter()
        .enumerate()
        .find(|(_, s)| s.name == name)
        .unwrap_or_else(|| panic!("no sequence `{name}`"))
}

fn dev_index(prog: &Program, name: &str) -> usize {
    prog.devices
        .iter()
        .position(|d| d.name == name)
        .unwrap_or_else(|| panic!("no device `{name}`"))
}

/// Whether any call of the scenario polls.
pub fn polls(prog: &Program, sc: &Scenario) -> bool {
    !poll_regs(prog, sc).is_empty()
}

/// (device, register, busy value, ready value) of every poll of the calls.
fn poll_regs(prog: &Program, sc: &Scenario) -> Vec<(usize, usize, u64, u64)> {
    let mut out = Vec::new();
    for call in sc.calls {
        shootdown::ir::walk(&seq_of(prog, call.seq).1.body, &mut |s| {
            if let Stmt::Poll {
                access,
                mask,
                op,
                value,
                ..
            } = s
            {
                // The examples' polls compare with constants (a run-time
                // value would need the call's arguments here).
                let value = value
                    .as_const()
                    .unwrap_or_else(|| panic!("{}: poll with a run-time value", call.seq));
                let low = *mask & mask.wrapping_neg();
                let (busy, ready) = match op {
                    PollOp::Eq => (value ^ low, value),
                    PollOp::Ne => (value, value ^ low),
                };
                let k = (access.dev, access.reg, busy, ready);
                if !out.contains(&k) {
                    out.push(k);
                }
            }
        });
    }
    out
}

fn reg_bytes(v: u64, bytes: u32, endian: Endian) -> Vec<u8> {
    let mut b = v.to_le_bytes()[..bytes as usize].to_vec();
    if endian == Endian::Big {
        b.reverse();
    }
    b
}

fn hex(b: &[u8]) -> String {
    if b.is_empty() {
        return "-".into();
    }
    b.iter().map(|x| format!("{x:02x}")).collect()
}

fn input_int(sc: &Scenario, input: &Input, name: &str) -> u64 {
    input
        .ints
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, v)| *v)
        .unwrap_or_else(|| panic!("{}: input `{}` has no `{name}`", sc.name, input.label))
}

/// The harness directives of one side of a case (`call` index `call`).
fn directives(prog: &Program, sc: &Scenario, case: &Case, call: usize) -> String {
    let input = &sc.inputs[case.input];
    let mut out = String::new();
    for d in scenario_devices(prog, sc) {
        let dev = &prog.devices[d];
        let n = match dev.instances {
            Instances::Dynamic { .. } => case.count.max(1),
            Instances::Fixed(k) => k,
            Instances::Single => 1,
        };
        for inst in 0..n {
            let _ = writeln!(out, "win {d} {inst} {}", dev.extent());
        }
    }
    for (d, r, busy, ready) in poll_regs(prog, sc) {
        let reg = &prog.devices[d].regs[r];
        let vals: &[u64] = match case.poll {
            Poll::Early => &[ready],
            Poll::Late => &[busy, busy, ready],
            Poll::Never => &[busy],
        };
        let vals: Vec<String> = vals
            .iter()
            .map(|v| hex(&reg_bytes(*v, reg.bytes(), reg.endian)))
            .collect();
        let _ = writeln!(out, "read {d} {:x} {}", reg.offset, vals.join(","));
    }
    let mut mems = 0;
    for a in sc.args {
        if let Arg::Mem(name) = a {
            let bytes = input
                .mem
                .iter()
                .find(|(n, _)| n == name)
                .map(|(_, b)| b.clone())
                .unwrap_or_else(|| vec![0; 16]);
            let _ = writeln!(out, "lmem {mems} {}", hex(&bytes));
            for (_, off, vals) in input.mem_reads.iter().filter(|(n, _, _)| n == name) {
                let vals: Vec<String> = vals.iter().map(|v| format!("{v:02x}")).collect();
                // store_log.c: the window of `lmem P` is device -1 - P
                let _ = writeln!(out, "read {} {off:x} {}", -1 - mems as i64, vals.join(","));
            }
            mems += 1;
        }
    }
    let mut mems = 0;
    for a in sc.args {
        let _ = match a {
            Arg::Dev(name) => {
                let d = dev_index(prog, name);
                match prog.devices[d].instances {
                    Instances::Dynamic { .. } => {
                        writeln!(out, "arg array {d} {}", case.count)
                    }
                    Instances::Fixed(k) => writeln!(out, "arg array {d} {k}"),
                    Instances::Single => writeln!(out, "arg base {d}"),
                }
            }
            Arg::Count(_) => writeln!(out, "arg int {:x}", case.count),
            Arg::Int(name) => writeln!(out, "arg int {:x}", input_int(sc, input, name)),
            Arg::Mem(_) => {
                mems += 1;
                writeln!(out, "arg mem {}", mems - 1)
            }
        };
    }
    let _ = writeln!(out, "call {call}");
    out
}

fn arg_slot(sc: &Scenario, f: impl Fn(&Arg) -> bool) -> Option<usize> {
    sc.args.iter().position(f)
}

/// The C driver: a marker function in its own section (its first
/// instruction in qemu's log starts a case), and per scenario a thunk
/// making the generated calls and one calling the reference.
fn driver_c(prog: &Program, c: &Compiled, header: &str, build: &Build) -> String {
    let mut out = format!(
        "#line 1 \"refdriver.c\"\n#include \"{header}\"\n\n\
         __attribute__((noinline, noipa, section(\".sl_mark\"))) void sl_mark(void)\n\
         {{\n\t__asm__ __volatile__(\"\" ::: \"memory\");\n}}\n\n"
    );
    let mut table = String::new();
    for (k, sc) in build.scenarios.iter().enumerate() {
        let _ = writeln!(out, "long {}(const uint64_t *a);", sc.ref_fn);
        let mut body = String::from("\tlong r = 0;\n\tsl_mark();\n");
        for call in sc.calls {
            let (i, seq) = seq_of(prog, call.seq);
            let lir = &c.lir[i];
            let args: Vec<String> = lir
                .args
                .iter()
                .map(|a| match a {
                    ArgKind::DeviceBase(d) | ArgKind::DeviceArray(d) => {
                        let name = prog.devices[*d].name.as_str();
                        let k = arg_slot(sc, |x| matches!(x, Arg::Dev(n) if *n == name))
                            .unwrap_or_else(|| panic!("{}: no Dev({name}) argument", sc.name));
                        format!("(void *)(uintptr_t)a[{k}]")
                    }
                    ArgKind::DeviceCount(d) => {
                        let name = prog.devices[*d].name.as_str();
                        let k = arg_slot(sc, |x| matches!(x, Arg::Count(n) if *n == name))
                            .unwrap_or_else(|| panic!("{}: no Count({name}) argument", sc.name));
                        format!("a[{k}]")
                    }
                    ArgKind::Param(p) => {
                        let pname = seq.params[*p].as_str();
                        let val = call
                            .bind
                            .iter()
                            .find(|(n, _)| *n == pname)
                            .map(|(_, v)| *v)
                            // Lazily: a bound parameter need not be an argument.
                            .unwrap_or_else(|| {
                                Val::A(
                                    sc.args
                                        .iter()
                                        .find_map(|x| match x {
                                            Arg::Int(n) | Arg::Mem(n) if *n == pname => Some(*n),
                                            _ => None,
                                        })
                                        .unwrap_or_else(|| {
                                            panic!("{}: `{pname}` of {} unbound", sc.name, call.seq)
                                        }),
                                )
                            });
                        let ptr = c.opt.seqs[i].ptrs.get(*p).is_some_and(Option::is_some);
                        let v = match val {
                            Val::K(v) => format!("{v:#x}ULL"),
                            Val::A(n) => {
                                let k = arg_slot(
                                    sc,
                                    |x| matches!(x, Arg::Int(m) | Arg::Mem(m) if *m == n),
                                )
                                .unwrap_or_else(|| panic!("{}: no argument `{n}`", sc.name));
                                format!("a[{k}]")
                            }
                        };
                        if ptr {
                            format!("(void *)(uintptr_t){v}")
                        } else {
                            v
                        }
                    }
                })
                .collect();
            let sym = &c.funcs[i].symbol;
            if c.opt.seqs[i].void {
                // As tests/store_log/driver.rs: the code clears the return
                // register; read it through a `long` view.
                let params = if args.is_empty() {
                    "void".to_string()
                } else {
                    vec!["uint64_t"; args.len()].join(", ")
                };
                let raw: Vec<String> = args
                    .iter()
                    .map(|a| format!("(uint64_t)(uintptr_t)({a})"))
                    .collect();
                let _ = write!(
                    body,
                    "\t{{\n\t\tlong (*f)({params}) = (long (*)({params}))(void (*)(void)){sym};\n\
                     \t\tif (0)\n\t\t\t{sym}({});\n\t\tr = f({});\n\t}}\n",
                    args.join(", "),
                    raw.join(", ")
                );
            } else {
                let _ = writeln!(body, "\tr = {sym}({});", args.join(", "));
            }
            // Only 0 goes on to the next call: a call that succeeds with
            // another value (an invalidate returning 1) must show.
            body += "\tif (r != 0)\n\t\treturn r;\n";
        }
        body += "\treturn r;\n";
        let _ = write!(
            out,
            "static long sc_gen_{k}(const uint64_t *a)\n{{\n\t(void)a;\n{body}}}\n\n\
             static long sc_ref_{k}(const uint64_t *a)\n{{\n\tsl_mark();\n\treturn {}(a);\n}}\n\n",
            sc.ref_fn
        );
        let _ = writeln!(
            table,
            "\t{{ \"{0} generated\", 0, sc_gen_{k} }},\n\t{{ \"{0} reference\", 0, sc_ref_{k} }},",
            sc.name
        );
    }
    // The "kernel side" of inputs outside the kernel's domain.
    out +=
        "static long sc_skip(const uint64_t *a)\n{\n\t(void)a;\n\tsl_mark();\n\treturn 0;\n}\n\n";
    table += "\t{ \"no kernel run\", 0, sc_skip },\n";
    let _ = write!(
        out,
        "static const struct sl_seq sl_seqs[] = {{\n{table}}};\n\n\
         int main(void)\n{{\n\treturn sl_main(sl_seqs, (int)(sizeof sl_seqs / sizeof sl_seqs[0]));\n}}\n"
    );
    out
}

// ---------------------------------------------------------------- build

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
    mark_range: (u64, u64),
    /// pc -> instruction text (`dsb ish`, `str x9, [x0, #1536]`).
    pub insns: BTreeMap<u64, String>,
}

/// `[lo, hi)` of an output section of the executable.
fn section(t: Target, exe: &Path, name: &str) -> (u64, u64) {
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
fn disassemble(t: Target, m: Machine, exe: &Path, sections: &[&str]) -> BTreeMap<u64, String> {
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

fn quiet(cmd: &mut Command) -> Result<(), String> {
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

/// What one side of a case did, in execution order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Ev {
    /// A generated function starts (the caller's stores are before it).
    Entry,
    Access {
        store: bool,
        dev: usize,
        inst: u64,
        off: u64,
        width: u32,
        bytes: Vec<u8>,
    },
    Inval {
        op: String,
        ops: Vec<u64>,
    },
    Barrier(String),
    /// An access to normal memory behind a pointer argument (the
    /// harness logs those too: `lmem`); `ptr` is the argument's ordinal
    /// among the scenario's `Mem` arguments.
    NAccess {
        store: bool,
        ptr: usize,
        off: u64,
        width: u32,
        bytes: Vec<u8>,
    },
    /// A function returns.
    Ret,
}

#[derive(Clone, Debug, Default)]
pub struct Side {
    pub events: Vec<Ev>,
    /// The pc of each event (0 for entry and the reference's return).
    pub pcs: Vec<u64>,
    pub ret: i64,
    pub memory: BTreeMap<usize, Vec<u8>>,
    /// Instructions this side executed in its own code (qemu's exec log,
    /// one line per instruction under `-singlestep`): the generated
    /// function's section, or the kernel transcription's (gcc -O2). The
    /// harness's code around a call is in neither.
    pub insns: usize,
}

fn num(s: &str) -> Result<u64, String> {
    u64::from_str_radix(s.trim_start_matches("0x"), 16).map_err(|_| format!("bad number `{s}`"))
}

fn parse_hex(s: &str) -> Result<Vec<u8>, String> {
    if s == "-" {
        return Ok(Vec::new());
    }
    (0..s.len())
        .step_by(2)
        .map(|i| {
            s.get(i..i + 2)
                .and_then(|b| u8::from_str_radix(b, 16).ok())
                .ok_or_else(|| format!("bad hex `{s}`"))
        })
        .collect()
}

/// Reads qemu's exec log: the pcs executed in the logged sections, split
/// into calls at each execution of the marker.
fn exec_calls(log: &str, exe: &Exe) -> Vec<Vec<u64>> {
    let mut calls: Vec<Vec<u64>> = Vec::new();
    for l in log.lines() {
        if !l.starts_with("Trace ") {
            continue;
        }
        let Some(pc) = l
            .split_once('[')
            .and_then(|(_, r)| r.split('/').nth(1))
            .and_then(|p| u64::from_str_radix(p, 16).ok())
        else {
            continue;
        };
        if pc == exe.mark {
            calls.push(Vec::new());
        } else if (exe.mark_range.0..exe.mark_range.1).contains(&pc) {
            continue;
        } else if let Some(c) = calls.last_mut() {
            c.push(pc);
        }
    }
    calls
}

/// One call's events: the harness lines (accesses with absolute pcs) laid
/// on the executed pcs.
fn side(exe: &Exe, lines: &[&str], pcs: &[u64], generated: bool) -> Result<Side, String> {
    let t = exe.target;
    let mut logged: Vec<(u64, Ev)> = Vec::new();
    let mut s = Side::default();
    let mut ret = None;
    for line in lines {
        let f: Vec<&str> = line.split_whitespace().collect();
        match f.as_slice() {
            [kind @ ("store" | "load"), dev, inst, off, width, bytes, pc] => logged.push((
                num(pc)?,
                Ev::Access {
                    store: *kind == "store",
                    dev: num(dev)? as usize,
                    inst: num(inst)?,
                    off: num(off)?,
                    width: width.parse().map_err(|_| format!("bad width `{line}`"))?,
                    bytes: parse_hex(bytes)?,
                },
            )),
            [kind @ ("nstore" | "nload"), ptr, off, width, bytes, pc] => logged.push((
                num(pc)?,
                Ev::NAccess {
                    store: *kind == "nstore",
                    ptr: num(ptr)? as usize,
                    off: num(off)?,
                    width: width.parse().map_err(|_| format!("bad width `{line}`"))?,
                    bytes: parse_hex(bytes)?,
                },
            )),
            ["inval", pc, _word, ops @ ..] => {
                let pc = num(pc)?;
                let text = exe.insns.get(&pc).cloned().unwrap_or_default();
                let op = inval_key(&text);
                logged.push((
                    pc,
                    Ev::Inval {
                        op,
                        ops: ops.iter().map(|o| num(o)).collect::<Result<_, _>>()?,
                    },
                ));
            }
            ["mem", p, bytes] => {
                s.memory.insert(num(p)? as usize, parse_hex(bytes)?);
            }
            ["ret", v] => ret = Some(v.parse::<i64>().map_err(|_| format!("bad `{line}`"))?),
            _ => return Err(format!("unexpected harness line `{line}`")),
        }
    }
    s.ret = ret.ok_or("no `ret` line")?;
    let own = if generated { exe.gen } else { exe.refr };
    s.insns = pcs.iter().filter(|pc| (own.0..own.1).contains(*pc)).count();
    let in_gen = |pc: u64| (exe.gen.0..exe.gen.1).contains(&pc);
    let mut k = 0;
    let mut need_entry = true;
    let mut prev: Option<u64> = None;
    for &pc in pcs {
        // x86-64: the harness single-steps a faulting access in place
        // (EFLAGS.TF), so qemu runs its pc twice in a row.
        if t == Target::X86_64 && prev == Some(pc) && k > 0 && logged[k - 1].0 == pc {
            prev = None;
            continue;
        }
        prev = Some(pc);
        if need_entry {
            s.events.push(Ev::Entry);
            s.pcs.push(0);
            need_entry = false;
        }
        if k < logged.len() && logged[k].0 == pc {
            s.events.push(logged[k].1.clone());
            s.pcs.push(pc);
            k += 1;
            continue;
        }
        let text = exe.insns.get(&pc).map(String::as_str).unwrap_or("");
        let ev = if let Some(b) = support::arch(t).barrier_of(exe.machine, text) {
            Ev::Barrier(b)
        } else if generated && in_gen(pc) && support::arch(t).is_return(text) {
            need_entry = true;
            Ev::Ret
        } else {
            continue;
        };
        s.events.push(ev);
        s.pcs.push(pc);
    }
    if k != logged.len() {
        return Err(format!(
            "{} of {} logged accesses not found in qemu's exec log (next at pc {:#x})",
            logged.len() - k,
            logged.len(),
            logged[k].0
        ));
    }
    if !generated {
        if need_entry {
            s.events.push(Ev::Entry);
            s.pcs.push(0);
        }
        s.events.push(Ev::Ret);
        s.pcs.push(0);
    }
    Ok(s)
}

/// The generated and the kernel side of a case, or why there are none.
pub type Sides = Result<(Side, Side), String>;

/// Both sides of every case.
pub struct Observed {
    pub cases: Vec<(Case, Sides)>,
    /// Every pc of the generated code that ran, in any case.
    pub executed: BTreeSet<u64>,
}

/// How long a harness may run, and how large its exec log may grow, before
/// it is taken for a hang: a mutant may loop forever, and qemu's
/// single-step log of a hang grows by tens of megabytes a second (half a
/// gigabyte per hung mutant filled CI's disk).
#[derive(Clone, Copy, Debug)]
pub struct Limit {
    pub time: Duration,
    pub log_bytes: u64,
}

impl Limit {
    /// For code believed correct: generous, only a guard.
    pub fn generous(time: Duration) -> Limit {
        Limit {
            time,
            log_bytes: 2 << 30,
        }
    }
}

/// Runs `cases` of `build` in one qemu process, within `limit`.
pub fn run(
    prog: &Program,
    exe: &Exe,
    build: &Build,
    cases: &[Case],
    limit: Limit,
) -> Result<Observed, String> {
    let t = exe.target;
    let input: String = cases
        .iter()
        .flat_map(|k| {
            let sc = &build.scenarios[k.scenario];
            let kernel = if sc.inputs[k.input].outside.is_some() {
                2 * build.scenarios.len()
            } else {
                2 * k.scenario + 1
            };
            [
                directives(prog, sc, k, 2 * k.scenario),
                directives(prog, sc, k, kernel),
            ]
        })
        .collect();
    let stdin_path = exe.path.with_extension("in");
    std::fs::write(&stdin_path, &input).unwrap();
    let log = exe.path.with_extension("log");
    let _ = std::fs::remove_file(&log);
    let filter = format!(
        "{:#x}..{:#x},{:#x}..{:#x},{:#x}..{:#x}",
        exe.gen.0,
        exe.gen.1 - 1,
        exe.refr.0,
        exe.refr.1 - 1,
        exe.mark_range.0,
        exe.mark_range.1 - 1
    );
    // qemu-user even on the host's architecture: its exec log is the count.
    let qemu = support::arch(t).qemu;
    let out_path = exe.path.with_extension("out");
    let mut child = Command::new(qemu)
        .args([
            "-singlestep",
            "-d",
            "exec,nochain",
            "-dfilter",
            &filter,
            "-D",
        ])
        .arg(&log)
        .arg(&exe.path)
        .stdin(Stdio::from(std::fs::File::open(&stdin_path).unwrap()))
        .stdout(Stdio::from(std::fs::File::create(&out_path).unwrap()))
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| format!("cannot run {qemu} (install qemu-user): {e}"))?;
    let start = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if start.elapsed() > limit.time {
            let _ = child.kill();
            let _ = child.wait();
            return Err(format!(
                "the harness ran longer than {:?} (a hang)",
                limit.time
            ));
        }
        if std::fs::metadata(&log).map_or(0, |m| m.len()) > limit.log_bytes {
            let _ = child.kill();
            let _ = child.wait();
            let _ = std::fs::remove_file(&log);
            return Err(format!(
                "the exec log grew past {} bytes (a hang)",
                limit.log_bytes
            ));
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    let stdout = std::fs::read_to_string(&out_path).unwrap_or_default();
    let log = std::fs::read_to_string(&log).unwrap_or_default();
    let mut done: Vec<Vec<&str>> = Vec::new();
    let mut cur = Vec::new();
    for l in stdout.lines() {
        if l == "end" {
            done.push(std::mem::take(&mut cur));
        } else {
            cur.push(l);
        }
    }
    let calls = exec_calls(&log, exe);
    let crash = format!("harness exited with {status}: {}", cur.join("\n"));
    let mut out = Vec::new();
    for (i, k) in cases.iter().enumerate() {
        let r = match (done.get(2 * i), done.get(2 * i + 1)) {
            (Some(g), Some(r)) => {
                let pcs = |j: usize| calls.get(j).map(Vec::as_slice).unwrap_or(&[]);
                side(exe, g, pcs(2 * i), true)
                    .map_err(|e| format!("generated: {e}"))
                    .and_then(|g| {
                        side(exe, r, pcs(2 * i + 1), false)
                            .map(|r| (g, r))
                            .map_err(|e| format!("reference: {e}"))
                    })
            }
            _ if 2 * i + 1 >= done.len() && !status.success() => Err(crash.clone()),
            _ => Err("no result (the harness stopped earlier)".into()),
        };
        out.push((k.clone(), r));
    }
    let executed = calls
        .iter()
        .flatten()
        .copied()
        .filter(|pc| (exe.gen.0..exe.gen.1).contains(pc))
        .collect();
    Ok(Observed {
        cases: out,
        executed,
    })
}

// -------------------------------------------------------------- compare

/// A device access as the comparison states it.
fn describe_access(
    prog: &Program,
    dev: usize,
    inst: u64,
    off: u64,
    width: u32,
    bytes: &[u8],
) -> (String, String) {
    let d = &prog.devices[dev];
    match d
        .regs
        .iter()
        .find(|r| r.offset == off && r.bytes() == width)
    {
        Some(r) => {
            let mut b = bytes.to_vec();
            if r.endian == Endian::Little {
                b.reverse();
            }
            let v = b.iter().fold(0u64, |v, x| (v << 8) | u64::from(*x));
            (format!("{}[{inst}].{}", d.name, r.name), format!("{v:#x}"))
        }
        None => (
            format!("{}[{inst}]+{off:#x}/{width}", d.name),
            format!("bytes {}", hex(bytes)),
        ),
    }
}

/// Per device instance, the accesses in order; per pointer argument, the
/// stores to its memory in order (loads of normal memory are not compared:
/// the kernel reads fields the example does not); then the invalidates.
fn effects(prog: &Program, s: &Side) -> (BTreeMap<String, Vec<String>>, Vec<String>) {
    let mut per: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut inv = Vec::new();
    for e in &s.events {
        match e {
            Ev::Access {
                store,
                dev,
                inst,
                off,
                width,
                bytes,
            } => {
                let (place, v) = describe_access(prog, *dev, *inst, *off, *width, bytes);
                per.entry(format!("{}[{inst}]", prog.devices[*dev].name))
                    .or_default()
                    .push(format!(
                        "{} {place} w{width} {v}",
                        if *store { "store" } else { "load" }
                    ));
            }
            Ev::NAccess {
                store: true,
                ptr,
                off,
                width,
                bytes,
            } => per
                .entry(format!("memory of pointer argument {ptr}"))
                .or_default()
                .push(format!("store +{off:#x} w{width} bytes {}", hex(bytes))),
            Ev::Inval { op, ops } => inv.push(format!("{op} {ops:x?}")),
            _ => {}
        }
    }
    (per, inv)
}

/// None when both sides agree; else the first difference.
pub fn difference(prog: &Program, gen: &Side, refr: &Side) -> Option<String> {
    let (gp, gi) = effects(prog, gen);
    let (rp, ri) = effects(prog, refr);
    let mut msg = String::new();
    let keys: BTreeSet<&String> = gp.keys().chain(rp.keys()).collect();
    for k in keys {
        let (g, r) = (
            gp.get(k).cloned().unwrap_or_default(),
            rp.get(k).cloned().unwrap_or_default(),
        );
        if g != r {
            let at = (0..g.len().max(r.len()))
                .find(|&i| g.get(i) != r.get(i))
                .unwrap();
            let show = |v: &[String], i: usize| v.get(i).cloned().unwrap_or("(nothing)".into());
            let _ = writeln!(
                msg,
                "{k}: access {at} of {} generated / {} kernel: generated `{}`, kernel `{}`",
                g.len(),
                r.len(),
                show(&g, at),
                show(&r, at)
            );
            break;
        }
    }
    if gi != ri {
        let at = (0..gi.len().max(ri.len()))
            .find(|&i| gi.get(i) != ri.get(i))
            .unwrap();
        let _ = writeln!(
            msg,
            "invalidate {at} of {} generated / {} kernel: generated `{}`, kernel `{}`",
            gi.len(),
            ri.len(),
            gi.get(at).map_or("(nothing)", String::as_str),
            ri.get(at).map_or("(nothing)", String::as_str)
        );
    }
    if gen.ret != refr.ret {
        let _ = writeln!(msg, "return: generated {} kernel {}", gen.ret, refr.ret);
    }
    if gen.memory != refr.memory {
        let _ = writeln!(
            msg,
            "memory: generated {:02x?} kernel {:02x?}",
            gen.memory, refr.memory
        );
    }
    (!msg.is_empty()).then_some(msg)
}

// ------------------------------------------------------------- ordering

fn table_kind(prog: &Program, t: Target, name: &str) -> Option<&'static BarrierKind> {
    barriers::find(t.table(prog.machine), name)
}

/// What the spec asks of one call besides its devices' `require`s: its
/// `order` lines, the locations of its `acquire`s and `release`s (as (Mem
/// argument ordinal, byte offset)), and the `barrier` statements it ends
/// with.
#[derive(Clone, Debug, Default)]
pub struct CallReq {
    pub orders: Vec<(String, String)>,
    pub acquire: Vec<(usize, u64)>,
    pub release: Vec<(usize, u64)>,
    pub trailing: Vec<String>,
}

/// The requirements of each call of a scenario.
pub fn call_reqs(prog: &Program, sc: &Scenario) -> Vec<CallReq> {
    use shootdown::ir::{MemOp, Origin};
    sc.calls
        .iter()
        .map(|call| {
            let (_, seq) = seq_of(prog, call.seq);
            let ordinal = |param: usize| -> usize {
                let pname = seq.params[param].as_str();
                let arg = call
                    .bind
                    .iter()
                    .find(|(n, _)| *n == pname)
                    .and_then(|(_, v)| match v {
                        Val::A(a) => Some(*a),
                        Val::K(_) => None,
                    })
                    .unwrap_or(pname);
                sc.args
                    .iter()
                    .filter(|a| matches!(a, Arg::Mem(_)))
                    .position(|a| matches!(a, Arg::Mem(n) if *n == arg))
                    .unwrap_or_else(|| panic!("{}: `{pname}` is no Mem argument", sc.name))
            };
            let mut r = CallReq {
                orders: seq
                    .orders
                    .iter()
                    .map(|(a, b, _)| (a.clone(), b.clone()))
                    .collect(),
                ..CallReq::default()
            };
            shootdown::ir::walk(&seq.body, &mut |st| {
                if let Stmt::Mem { op, .. } = st {
                    match op {
                        MemOp::Acquire { mem, .. } => {
                            r.acquire.push((ordinal(mem.ptr), mem.offset))
                        }
                        MemOp::Release { mem, .. } => {
                            r.release.push((ordinal(mem.ptr), mem.offset))
                        }
                        _ => {}
                    }
                }
            });
            for st in seq.body.iter().rev() {
                match st {
                    Stmt::Barrier {
                        name,
                        origin: Origin::Spec(_),
                        ..
                    } => r.trailing.insert(0, name.to_string()),
                    _ => break,
                }
            }
            r
        })
        .collect()
}

/// The requirements of a kernel function standing for several calls.
pub fn merged(reqs: &[CallReq]) -> CallReq {
    let mut m = CallReq::default();
    for r in reqs {
        m.orders.extend(r.orders.iter().cloned());
        m.acquire.extend(r.acquire.iter().copied());
        m.release.extend(r.release.iter().copied());
    }
    m.trailing = reqs.last().map(|r| r.trailing.clone()).unwrap_or_default();
    m
}

fn is_data(e: &Ev) -> bool {
    matches!(e, Ev::Access { .. } | Ev::NAccess { .. } | Ev::Inval { .. })
}

fn mnemonic_at(insns: &BTreeMap<u64, String>, pc: u64) -> &str {
    insns
        .get(&pc)
        .and_then(|t| t.split_whitespace().next())
        .unwrap_or("")
}

/// The spec's requirements, checked on one side's executed events:
/// - `require A before B` (per instance or across instances) and
///   `require stores before R` (the caller's stores, i.e. function entry,
///   and the function's own normal-memory stores), `order stores before
///   invalidates`, `order invalidates before invalidates`, `order
///   invalidates before return` (on every return):
///   between the latest earlier event of each required kind and the later
///   one, an executed barrier whose table entry orders their classes,
///   unless the target orders them without one;
/// - `acquire`: after the store that takes the lock, before the next
///   access or the return, an acquire barrier (POWER isync, lwsync or
///   sync; AArch64 a load-acquire exclusive or a dmb that orders loads;
///   x86-64 the locked instruction itself);
/// - `release`: between the last access since the lock was taken (or the
///   caller's, from entry) and the releasing store, a release barrier
///   (POWER lwsync or sync, sync when a device was accessed, eieio when
///   only stores, and loads each followed by a store, precede it within
///   the section; AArch64 a store-release or a dmb that orders loads and
///   stores before stores; x86-64 none);
/// - barrier statements that end a sequence: after its last access, each
///   executed, or one that orders everything it does.
///
/// `reqs` has one entry per call (a generated function starts at each
/// `Entry`).
/// The pcs of the generated invalidations the spec writes `... after
/// invalidates`: each instruction belongs to the nearest `/* LINE: ... */`
/// statement comment above it in the `.S` (addr2line gives each pc's `.S`
/// line), and LINE is the spec line of such an invalidation. Read from the
/// spec's text and the executed code, not from the ordering graph.
pub fn after_invalidates_pcs(prog: &Program, exe: &Exe, asm: &str) -> BTreeSet<u64> {
    let mut spec_lines = BTreeSet::new();
    for seq in &prog.seqs {
        shootdown::ir::walk(&seq.body, &mut |s| {
            if let Stmt::Invalidate {
                after: Some(_),
                span,
                ..
            } = s
            {
                spec_lines.insert(prog.line_of(*span));
            }
        });
    }
    if spec_lines.is_empty() {
        return BTreeSet::new();
    }
    let text: Vec<&str> = asm.lines().collect();
    let stmt_line = |l: usize| {
        text[..l.saturating_sub(1).min(text.len())]
            .iter()
            .rev()
            .find_map(|t| {
                let (n, _) = t.trim().strip_prefix("/* ")?.split_once(':')?;
                n.parse::<usize>().ok()
            })
    };
    gen_lines(exe)
        .into_iter()
        .filter(|(_, l)| stmt_line(*l).is_some_and(|n| spec_lines.contains(&n)))
        .map(|(pc, _)| pc)
        .collect()
}

/// `after`: the pcs of invalidations written `... after invalidates`
/// ([`after_invalidates_pcs`]; empty for the kernel's side).
pub fn order_violations(
    prog: &Program,
    t: Target,
    s: &Side,
    reqs: &[CallReq],
    insns: &BTreeMap<u64, String>,
    after: &BTreeSet<u64>,
) -> Vec<String> {
    let power = matches!(t, Target::Power64 | Target::Power64le);
    let mut out = Vec::new();
    let mut call: usize = 0;
    let mut started = false;
    let mut entry = 0;
    // (dev, inst, reg, class) -> latest position
    let mut latest: BTreeMap<(usize, u64, usize, Class), usize> = BTreeMap::new();
    let mut latest_store: Option<usize> = None;
    // The latest invalidation of each class (`tlbie`, `tlbiel`, `slbia`
    // complete differently).
    let mut latest_inval: BTreeMap<Class, usize> = BTreeMap::new();
    let mut taken: BTreeMap<(usize, u64), usize> = BTreeMap::new();
    let mut pending_acquire: Option<usize> = None;
    let barriers_in = |a: usize, b: usize| -> Vec<&str> {
        s.events[a + 1..b]
            .iter()
            .filter_map(|e| match e {
                Ev::Barrier(n) => Some(n.as_str()),
                _ => None,
            })
            .collect()
    };
    // A composite barrier (POWER `eieio; tlbsync; ptesync`) counts when its
    // parts ran in order with nothing else between them.
    // The target's own order of invalidations (RISC-V `sfence.vma` orders
    // the stores before it and is complete when it retires); no other
    // target orders an invalidation pair without a barrier.
    let implicit = |from: Class, to: Class| {
        (from.is_invalidation() || to.is_invalidation() || to == Class::InvalidateCompletion)
            && t.orders_implicitly(from, to, false)
    };
    let covered = |a: usize, b: usize, from: Class, to: Class| {
        if implicit(from, to) {
            return true;
        }
        let mut run: Vec<&str> = Vec::new();
        s.events[a + 1..b].iter().any(|e| match e {
            Ev::Barrier(n) => {
                run.push(n.as_str());
                table_kind(prog, t, n).is_some_and(|k| k.covers(from, to))
                    || barriers::ending_run(t.table(prog.machine), &run).any(|k| k.covers(from, to))
            }
            _ => {
                run.clear();
                false
            }
        })
    };
    let req = |call: usize| reqs.get(call).or(reqs.last()).cloned().unwrap_or_default();
    let has =
        |call: usize, a: &str, b: &str| req(call).orders.iter().any(|(x, y)| x == a && y == b);
    let name = |e: &Ev| match e {
        Ev::Access {
            store,
            dev,
            inst,
            off,
            width,
            ..
        } => {
            let d = &prog.devices[*dev];
            let r = d
                .regs
                .iter()
                .find(|r| r.offset == *off && r.bytes() == *width)
                .map_or("?", |r| r.name.as_str());
            format!(
                "{} {}[{inst}].{r}",
                if *store { "store" } else { "load" },
                d.name
            )
        }
        Ev::NAccess {
            store, ptr, off, ..
        } => format!(
            "{} of pointer argument {ptr} +{off:#x}",
            if *store {
                "normal store"
            } else {
                "normal load"
            }
        ),
        Ev::Inval { op, .. } => op.clone(),
        Ev::Entry => "entry (the caller's accesses)".into(),
        Ev::Ret => "return".into(),
        Ev::Barrier(b) => b.clone(),
    };
    let acquire_ok = |a: usize, b: usize| -> bool {
        let bs = barriers_in(a, b);
        match t {
            Target::X86_64 => true,
            _ if power => bs.iter().any(|n| ["isync", "lwsync", "sync"].contains(n)),
            _ => {
                // the exclusive load of the lock, just before its store
                let loaded_acquire = s.events[..a].iter().zip(&s.pcs).rev().find_map(|(e, pc)| {
                    matches!(e, Ev::NAccess { store: false, .. }).then(|| {
                        let m = mnemonic_at(insns, *pc);
                        m.starts_with("ldax") || m.starts_with("ldar")
                    })
                });
                loaded_acquire == Some(true)
                    || bs.iter().any(|n| {
                        table_kind(prog, t, n).is_some_and(|k| {
                            k.covers(Class::NormalLoad, Class::NormalLoad)
                                && k.covers(Class::NormalLoad, Class::NormalStore)
                        })
                    })
            }
        }
    };
    for (pos, e) in s.events.iter().enumerate() {
        if is_data(e) || *e == Ev::Ret {
            if let Some(a) = pending_acquire.take() {
                let intrinsic =
                    t == Target::X86_64 || (t == Target::Aarch64 && acquire_ok(a, a + 1));
                if !intrinsic && !acquire_ok(a, pos) {
                    out.push(format!(
                        "event {pos} ({}) after taking the lock (event {a}): no acquire barrier",
                        name(e)
                    ));
                }
            }
        }
        match e {
            Ev::Entry => {
                if started {
                    call += 1;
                }
                started = true;
                entry = pos;
                latest_store = Some(pos);
                latest_inval.clear();
                taken.clear();
            }
            Ev::NAccess {
                store: true,
                ptr,
                off,
                ..
            } => {
                let loc = (*ptr, *off);
                let r = req(call);
                if r.acquire.contains(&loc) && !taken.contains_key(&loc) {
                    taken.insert(loc, pos);
                    pending_acquire = Some(pos);
                } else if r.release.contains(&loc) {
                    let start = taken.get(&loc).copied().unwrap_or(entry);
                    let from_entry = start == entry && !taken.contains_key(&loc);
                    let last = (start + 1..pos)
                        .rev()
                        .find(|&i| is_data(&s.events[i]))
                        .unwrap_or(start);
                    let section = &s.events[start + 1..pos];
                    let device = section.iter().any(|e| matches!(e, Ev::Access { .. }));
                    let loads_fed = section.iter().enumerate().all(|(i, e)| {
                        !matches!(e, Ev::NAccess { store: false, .. })
                            || section[i + 1..]
                                .iter()
                                .any(|x| matches!(x, Ev::NAccess { store: true, .. }))
                    });
                    let bs = barriers_in(last, pos);
                    let ok = match t {
                        Target::X86_64 => true,
                        _ if power => bs.iter().any(|n| {
                            *n == "sync"
                                || (*n == "lwsync" && !device)
                                || (*n == "eieio" && !device && !from_entry && loads_fed)
                        }),
                        _ => {
                            let m = mnemonic_at(insns, s.pcs[pos]);
                            m.starts_with("stlr")
                                || m.starts_with("stlxr")
                                || bs.iter().any(|n| {
                                    table_kind(prog, t, n).is_some_and(|k| {
                                        k.covers(Class::NormalLoad, Class::NormalStore)
                                            && k.covers(Class::NormalStore, Class::NormalStore)
                                            && (!device
                                                || k.covers(Class::DevStore, Class::NormalStore))
                                    })
                                })
                        }
                    };
                    if !ok {
                        out.push(format!(
                            "event {pos} ({}) releases the lock after {} (event {last}) with no release barrier",
                            name(e),
                            name(&s.events[last])
                        ));
                    }
                }
                latest_store = Some(pos);
            }
            Ev::NAccess { .. } | Ev::Barrier(_) => {}
            Ev::Access {
                store,
                dev,
                inst,
                off,
                width,
                ..
            } => {
                let d = &prog.devices[*dev];
                let Some(r) = d
                    .regs
                    .iter()
                    .position(|r| r.offset == *off && r.bytes() == *width)
                else {
                    continue;
                };
                let cb = if *store {
                    Class::DevStore
                } else {
                    Class::DevLoad
                };
                for q in d.requires.iter().filter(|q| q.after == r) {
                    for ca in [Class::DevStore, Class::DevLoad] {
                        let a = latest
                            .iter()
                            .filter(|((dv, i, rg, c), _)| {
                                *dv == *dev
                                    && *rg == q.before
                                    && *c == ca
                                    && (q.scope == Scope::AnyInstance || *i == *inst)
                            })
                            .map(|(_, p)| *p)
                            .max();
                        let Some(a) = a else { continue };
                        let same_strong = d.mapping == Mapping::Strong
                            && (q.scope == Scope::SameInstance || d.instances == Instances::Single);
                        if !t.orders_implicitly(ca, cb, same_strong) && !covered(a, pos, ca, cb) {
                            out.push(format!(
                                "event {pos} ({}) after event {a} ({}): no barrier orders {ca:?} -> {cb:?}",
                                name(e),
                                name(&s.events[a])
                            ));
                        }
                    }
                }
                // `require stores before REG` orders them before writes
                // of REG (what starts the device's work), not its reads.
                if cb == Class::DevStore && d.after_stores.iter().any(|(reg, _)| *reg == r) {
                    if let Some(a) = latest_store {
                        if !t.orders_implicitly(Class::NormalStore, cb, false)
                            && !covered(a, pos, Class::NormalStore, cb)
                        {
                            out.push(format!(
                                "event {pos} ({}) after {} (event {a}): no barrier orders NormalStore -> {cb:?}",
                                name(e),
                                name(&s.events[a])
                            ));
                        }
                    }
                }
                latest.insert((*dev, *inst, r, cb), pos);
            }
            Ev::Inval { op, .. } => {
                let class = shootdown::ir::order::invalidate_class(op);
                if has(call, "stores", "invalidates") && class.reads_page_tables() {
                    if let Some(a) = latest_store {
                        if !covered(a, pos, Class::NormalStore, class) {
                            out.push(format!(
                                "event {pos} ({}) after {} (event {a}): no barrier orders NormalStore -> {class:?}",
                                name(e),
                                name(&s.events[a])
                            ));
                        }
                    }
                }
                if after.contains(&s.pcs[pos]) {
                    for (&c, &a) in &latest_inval {
                        if !covered(a, pos, c, class) {
                            out.push(format!(
                                "event {pos} ({}, written `after invalidates`) after {} (event {a}): no barrier orders {c:?} -> {class:?}",
                                name(e),
                                name(&s.events[a])
                            ));
                        }
                    }
                }
                if has(call, "invalidates", "invalidates") {
                    for (&c, &a) in &latest_inval {
                        if !covered(a, pos, c, Class::InvalidateCompletion) {
                            out.push(format!(
                                "event {pos} ({}) after {} (event {a}): the earlier invalidation is not complete ({c:?} -> InvalidateCompletion)",
                                name(e),
                                name(&s.events[a])
                            ));
                        }
                    }
                }
                latest_inval.insert(class, pos);
            }
            Ev::Ret => {
                if has(call, "invalidates", "return") {
                    for (&c, &a) in &latest_inval {
                        if !covered(a, pos, c, Class::InvalidateCompletion) {
                            out.push(format!(
                                "return (event {pos}) after {} (event {a}): no barrier completes it ({c:?} -> InvalidateCompletion)",
                                name(&s.events[a])
                            ));
                        }
                    }
                }
                let trailing = req(call).trailing;
                if !trailing.is_empty() {
                    let last = (entry..pos)
                        .rev()
                        .find(|&i| is_data(&s.events[i]))
                        .unwrap_or(entry);
                    let mut bs = barriers_in(last, pos).into_iter();
                    for want in &trailing {
                        let wk = table_kind(prog, t, want);
                        let found = bs.any(|n| {
                            n == want
                                || matches!((table_kind(prog, t, n), wk), (Some(k), Some(w))
                                    if w.orders.iter().all(|(a, b)| k.covers(*a, *b)))
                        });
                        if !found {
                            out.push(format!(
                                "return (event {pos}): the sequence ends with `barrier {want}`, not executed after its last access (event {last})"
                            ));
                            break;
                        }
                    }
                }
                latest_inval.clear();
            }
        }
    }
    out
}

// ---------------------------------------------------------- differences

/// What an event is, without its values: `store cb.tlbiva`.
fn anchor_kind(prog: &Program, e: &Ev) -> String {
    match e {
        Ev::Access {
            store,
            dev,
            off,
            width,
            ..
        } => {
            let d = &prog.devices[*dev];
            let r = d
                .regs
                .iter()
                .find(|r| r.offset == *off && r.bytes() == *width)
                .map_or("?", |r| r.name.as_str());
            format!("{} {}.{r}", if *store { "store" } else { "load" }, d.name)
        }
        Ev::Inval { op, .. } => op.clone(),
        Ev::NAccess { ptr, off, .. } => format!("normal store *(ptr{ptr} + {off:#x})"),
        Ev::Entry => "entry".into(),
        Ev::Ret => "return".into(),
        _ => String::new(),
    }
}

/// Anchors (device accesses and invalidates) with their identity across
/// both sides: kind, place, value and occurrence; `None` for the call's
/// start and end.
fn anchors(prog: &Program, s: &Side) -> Vec<(usize, String)> {
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    let mut out = Vec::new();
    for (i, e) in s.events.iter().enumerate() {
        let id = match e {
            Ev::Access {
                store,
                dev,
                inst,
                off,
                width,
                bytes,
            } => {
                let (p, v) = describe_access(prog, *dev, *inst, *off, *width, bytes);
                format!("{store} {p} {v}")
            }
            Ev::Inval { op, ops } => format!("{op} {ops:x?}"),
            Ev::NAccess {
                store: true,
                ptr,
                off,
                width,
                bytes,
            } => format!("nstore {ptr} {off:#x} {width} {}", hex(bytes)),
            _ => continue,
        };
        let n = seen.entry(id.clone()).or_default();
        *n += 1;
        out.push((i, format!("{id} #{n}")));
    }
    out
}

/// Where the kernel code executes a barrier and the generated code, between
/// the same two events, executes none that is at least as strong (orders
/// every class pair the kernel's orders, at no lower cost in the table;
/// a barrier our table does not know counts as stronger than anything).
/// One line per kind of place.
pub fn weaker_than_kernel(prog: &Program, t: Target, gen: &Side, refr: &Side) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let ga = anchors(prog, gen);
    let ra = anchors(prog, refr);
    let gpos: BTreeMap<&str, usize> = ga.iter().map(|(i, id)| (id.as_str(), *i)).collect();
    let strong_enough = |g: &str, r: &str| -> bool {
        if g == r {
            return true;
        }
        match (table_kind(prog, t, g), table_kind(prog, t, r)) {
            (Some(gk), Some(rk)) => {
                rk.orders.iter().all(|(a, b)| gk.covers(*a, *b)) && gk.cost >= rk.cost
            }
            _ => false,
        }
    };
    for (i, e) in refr.events.iter().enumerate() {
        let Ev::Barrier(b) = e else { continue };
        // the anchors around it on the kernel's side
        let before = ra.iter().rev().find(|(p, _)| *p < i);
        let after = ra.iter().find(|(p, _)| *p > i);
        let (glo, ghi) = (
            match before {
                Some((_, id)) => gpos.get(id.as_str()).copied(),
                None => Some(0),
            },
            match after {
                Some((_, id)) => gpos.get(id.as_str()).copied(),
                None => Some(gen.events.len()),
            },
        );
        let (Some(glo), Some(ghi)) = (glo, ghi) else {
            continue;
        };
        let gb: Vec<&str> = if glo < ghi {
            gen.events[glo..ghi]
                .iter()
                .filter_map(|e| match e {
                    Ev::Barrier(n) => Some(n.as_str()),
                    _ => None,
                })
                .collect()
        } else {
            Vec::new()
        };
        if gb.iter().any(|g| strong_enough(g, b)) {
            continue;
        }
        let a = before.map_or("entry".to_string(), |(p, _)| {
            anchor_kind(prog, &refr.events[*p])
        });
        let z = after.map_or("return".to_string(), |(p, _)| {
            anchor_kind(prog, &refr.events[*p])
        });
        // (Where the generated code makes the two accesses in the other
        // order, nothing is between them either.)
        let g = if gb.is_empty() {
            "none".to_string()
        } else {
            let mut v: Vec<&str> = gb.clone();
            v.dedup();
            v.join(", ")
        };
        out.insert(format!("kernel `{b}` between {a} and {z}, generated {g}"));
    }
    out
}

/// The number of barriers each side executed.
pub fn barrier_count(s: &Side) -> usize {
    s.events
        .iter()
        .filter(|e| matches!(e, Ev::Barrier(_)))
        .count()
}

/// Compiles `prog` for `t` with the build's pins.
pub fn compile(prog: &Program, t: Target, pins: &[(&'static str, u64)]) -> (Compiled, Options) {
    let mut opts = support::options("all");
    opts.cover.pins = pins.iter().map(|(n, v)| (n.to_string(), *v)).collect();
    let c = shootdown::compile(prog, t, &opts).unwrap_or_else(|d| panic!("{t}: {}", d.message));
    (c, opts)
}

/// The cases of a build. `never`: only the runs whose polls never get
/// ready (for the build with poll limits lowered to 4); else each input at
/// each instance count (0, 1, 3, 6 for run-time sets) with polls ready at
/// once and, where something polls, ready on the third read (at 3
/// instances of run-time sets).
pub fn cases(prog: &Program, build: &Build, never: bool) -> Vec<Case> {
    let mut out = Vec::new();
    for (si, sc) in build.scenarios.iter().enumerate() {
        let dynamic = scenario_devices(prog, sc)
            .iter()
            .any(|&d| matches!(prog.devices[d].instances, Instances::Dynamic { .. }));
        let counts: &[u64] = if dynamic { &[0, 1, 3, 6] } else { &[1] };
        let busy_count = if dynamic { 3 } else { 1 };
        let polls = polls(prog, sc);
        for ii in 0..sc.inputs.len() {
            let case = |count, poll| Case {
                scenario: si,
                input: ii,
                count,
                poll,
            };
            if never {
                if polls {
                    out.push(case(busy_count, Poll::Never));
                }
                continue;
            }
            for &count in counts {
                out.push(case(count, Poll::Early));
            }
            if polls {
                out.push(case(busy_count, Poll::Late));
            }
        }
    }
    out
}

/// The spec with every poll limit lowered to 4 (as tests/store_log does):
/// a never-ready poll then costs 4 logged reads, not up to a million.
pub fn lower_poll_limits(src: &str) -> String {
    src.lines()
        .map(|l| match (l.contains("poll "), l.find("limit ")) {
            (true, Some(at)) => {
                let rest = &l[at + 6..];
                let digits =
                    rest.len() - rest.trim_start_matches(|c: char| c.is_ascii_digit()).len();
                format!("{}limit 4{}", &l[..at], &rest[digits..])
            }
            _ => l.to_string(),
        })
        .collect::<Vec<_>>()
        .join("\n")
}

pub const LOW_LIMIT: u64 = 4;
/// The reference's poll bound in builds whose polls never time out: far
/// beyond any read count a case makes.
pub const HIGH_LIMIT: u64 = 1 << 40;
