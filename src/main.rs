//! Command line: argument parsing and exit codes only; the work is in the
//! library.

use clap::{Parser, Subcommand, ValueEnum};
use shootdown::codegen::{Options, Style};
use shootdown::emit::show::Stage;
use shootdown::output;
use shootdown::passes;
use shootdown::spec::diag::{render, Diag, Span};
use shootdown::Target;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

const AFTER_HELP: &str = "\
Examples:
  shootdown gen examples/npu2_atsd.inv --out build/
  shootdown gen examples/npu2_atsd.inv --style linux --prefix sd_ --spdx GPL-2.0 \\
      --target aarch64 --out build/ --depfile build/npu2_atsd.d
  shootdown show examples/npu2_atsd.inv --stage opt

Exit codes: 0 success; 1 a spec has errors, or --check found stale outputs,
or an output could not be written; 2 bad command-line usage.";

const GEN_HELP: &str = "\
Examples:
  shootdown gen examples/npu2_atsd.inv --target power64le --out build/
  shootdown gen examples/*.inv --out generated --check
  shootdown gen examples/npu2_atsd.inv --style linux --prefix sd_ --spdx GPL-2.0 \\
      --target aarch64 --out build/ --depfile build/npu2_atsd.d

Files are written through a temporary file and a rename, and only when
their bytes change (an unchanged output keeps its mtime). Output bytes
depend only on the spec and the options.

Exit codes: 0 success (with --check: nothing stale); 1 a spec has errors,
--check found stale outputs (listed on stderr), or a file could not be
written; 2 bad command-line usage.";

#[derive(Parser)]
#[command(name = "shootdown", version, about = "Generate optimized invalidation sequences (TLB, IOMMU, device TLB) from a spec", after_help = AFTER_HELP)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Clone, Copy, ValueEnum)]
enum TargetArg {
    Power64,
    Power64le,
    Aarch64,
    #[value(name = "x86_64")]
    X86_64,
}

impl From<TargetArg> for Target {
    fn from(t: TargetArg) -> Target {
        match t {
            TargetArg::Power64 => Target::Power64,
            TargetArg::Power64le => Target::Power64le,
            TargetArg::Aarch64 => Target::Aarch64,
            TargetArg::X86_64 => Target::X86_64,
        }
    }
}

#[derive(Clone, Copy, ValueEnum)]
enum StyleArg {
    Plain,
    Linux,
}

#[derive(Clone, Copy, ValueEnum)]
enum StageArg {
    Ast,
    Ir,
    Opt,
    Lir,
    Asm,
    Bytes,
}

#[derive(clap::Args)]
struct CodeOpts {
    /// Passes to run: `all` (default), `none` (naive lowering: one barrier
    /// at each required edge, in program order), or a comma-separated list
    /// of fission, place-barriers, fuse, naive-barriers.
    #[arg(long, default_value = "all")]
    passes: String,
    /// Output style: plain GNU as (default) or Linux kernel macros.
    #[arg(long, value_enum, default_value = "plain")]
    style: StyleArg,
    /// Prefix for every generated symbol.
    #[arg(long, default_value = "")]
    prefix: String,
    /// SPDX license identifier to put in generated files.
    #[arg(long)]
    spdx: Option<String>,
    /// Pin a strategy threshold, `NAME=VALUE` (names are in the header).
    #[arg(long = "set", value_name = "NAME=VALUE")]
    sets: Vec<String>,
    /// Force every `cover` to one mode: single, exact or auto.
    #[arg(long)]
    mode: Option<ModeArg>,
}

#[derive(Clone, Copy, ValueEnum)]
enum ModeArg {
    Single,
    Exact,
    Auto,
}

#[derive(Subcommand)]
enum Cmd {
    /// Generate `<stem>.<target>.S` per target and `<stem>.h` per spec.
    #[command(after_help = GEN_HELP)]
    Gen {
        #[arg(required = true)]
        specs: Vec<PathBuf>,
        /// Targets (default: the spec's `target` line, else power64).
        #[arg(long, value_enum)]
        target: Vec<TargetArg>,
        #[arg(long, default_value = "generated")]
        out: PathBuf,
        /// Write nothing; exit 1 and list the files that would change.
        #[arg(long)]
        check: bool,
        /// Also write a make-style dependency file: every output depends
        /// on its spec (one `output: spec` line per output).
        #[arg(long, value_name = "FILE")]
        depfile: Option<PathBuf>,
        #[command(flatten)]
        code: CodeOpts,
    },
    /// Print a shell completion script.
    #[command(after_help = "\
Examples:
  shootdown completions bash > /etc/bash_completion.d/shootdown
  shootdown completions zsh > ~/.zfunc/_shootdown")]
    Completions {
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// Print the man page (roff) for shootdown(1).
    #[command(after_help = "\
Example:
  shootdown man > shootdown.1 && man ./shootdown.1")]
    Man,
    /// Print one stage of the pipeline for a spec.
    #[command(
        after_help = "Example:\n  shootdown show examples/npu2_atsd.inv --stage opt --passes none"
    )]
    Show {
        spec: PathBuf,
        #[arg(long, value_enum, default_value = "asm")]
        stage: StageArg,
        #[arg(long, value_enum, default_value = "power64")]
        target: TargetArg,
        #[command(flatten)]
        code: CodeOpts,
    },
    /// Run a sequence's machine code in the emulator against simulated
    /// devices and print every store, load, barrier and invalidate.
    #[command(
        after_help = "Example:\n  shootdown trace examples/npu2_atsd.inv --target power64 --seq invalidate_va \\\n      --instances 6 --arg pid=1 --arg va=0x10010000 --read npu.stat=1,1,0 --json"
    )]
    Trace {
        spec: PathBuf,
        #[arg(long, value_enum, default_value = "power64")]
        target: TargetArg,
        #[arg(long)]
        seq: String,
        /// Instances of every run-time device set.
        #[arg(long, default_value_t = 1)]
        instances: u64,
        /// A parameter value, `name=value` (decimal or 0x hex).
        #[arg(long = "arg")]
        args: Vec<String>,
        /// Scripted reads of a register, `dev.reg=v1,v2,...` (the last
        /// value repeats); other registers read back what was stored.
        #[arg(long = "read")]
        reads: Vec<String>,
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        code: CodeOpts,
    },
    /// Check the output against GNU as, capstone and the emulator (every
    /// required ordering crossed by a barrier, same effects as the spec).
    #[command(
        after_help = "Example:\n  shootdown verify examples/*.inv --target power64 --target power64le"
    )]
    Verify {
        #[arg(required = true)]
        specs: Vec<PathBuf>,
        /// Targets (default: each spec's `target` line).
        #[arg(long, value_enum)]
        target: Vec<TargetArg>,
        #[command(flatten)]
        code: CodeOpts,
    },
    /// Static counts per sequence: instructions, bytes, stores, loads,
    /// barriers by kind, invalidates.
    #[command(
        after_help = "Example:\n  shootdown stats examples/npu2_atsd.inv --target power64 --json"
    )]
    Stats {
        spec: PathBuf,
        #[arg(long, value_enum, default_value = "power64")]
        target: TargetArg,
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        code: CodeOpts,
    },
}

/// A failure already reported to stderr.
struct Reported;

fn options(c: &CodeOpts) -> Result<Options, Reported> {
    let passes = passes::parse_list(&c.passes).map_err(|e| {
        eprintln!("error: --passes: {e}");
        Reported
    })?;
    let mut pins = Vec::new();
    for s in &c.sets {
        match s
            .split_once('=')
            .and_then(|(n, v)| Some((n.trim().to_string(), parse_num(v)?)))
        {
            Some(p) => pins.push(p),
            None => {
                eprintln!("error: --set {s}: expected NAME=VALUE");
                return Err(Reported);
            }
        }
    }
    Ok(Options {
        passes,
        style: match c.style {
            StyleArg::Plain => Style::Plain,
            StyleArg::Linux => Style::Linux,
        },
        prefix: c.prefix.clone(),
        spdx: c.spdx.clone(),
        cover: shootdown::passes::cover::CoverConfig {
            mode: c.mode.map(|m| match m {
                ModeArg::Single => shootdown::ir::CoverMode::Single,
                ModeArg::Exact => shootdown::ir::CoverMode::Exact,
                ModeArg::Auto => shootdown::ir::CoverMode::Auto,
            }),
            pins,
        },
    })
}

/// Read a spec; unreadable or non-UTF-8 files are diagnostics too.
fn read_spec(path: &Path) -> Result<String, Reported> {
    let name = path.display().to_string();
    let bytes = std::fs::read(path).map_err(|e| {
        eprintln!("{name}: error: cannot read spec: {e}");
        Reported
    })?;
    match String::from_utf8(bytes) {
        Ok(s) => Ok(s),
        Err(e) => {
            let off = e.utf8_error().valid_up_to();
            let lossy = String::from_utf8_lossy(e.as_bytes()).into_owned();
            // Point at the first bad byte in the lossy text.
            let at = String::from_utf8_lossy(&e.as_bytes()[..off]).len();
            let d =
                Diag::new(Span::new(at, 1), "spec is not valid UTF-8").label("invalid byte here");
            eprint!("{}", render(&name, &lossy, &d));
            Err(Reported)
        }
    }
}

fn report(name: &str, src: &str, d: &Diag) -> Reported {
    eprint!("{}", render(name, src, d));
    Reported
}

fn run(cli: Cli) -> Result<(), Reported> {
    match cli.cmd {
        Cmd::Gen {
            specs,
            target,
            out,
            check,
            depfile,
            code,
        } => {
            let opts = options(&code)?;
            let targets: Vec<Target> = target.into_iter().map(Target::from).collect();
            let mut planned = Vec::new();
            let mut deps = Vec::new();
            let mut failed = false;
            for spec in &specs {
                let name = spec.display().to_string();
                let Ok(src) = read_spec(spec) else {
                    failed = true;
                    continue;
                };
                match output::plan(&name, &src, &targets, &out, &opts) {
                    Ok(p) => {
                        deps.push((spec.clone(), p.iter().map(|p| p.path.clone()).collect()));
                        planned.extend(p)
                    }
                    Err(d) => {
                        report(&name, &src, &d);
                        failed = true;
                    }
                }
            }
            if failed {
                return Err(Reported);
            }
            if check {
                let stale: Vec<_> = planned.iter().filter(|p| output::is_stale(p)).collect();
                for p in &stale {
                    eprintln!("stale: {}", p.path.display());
                }
                return if stale.is_empty() {
                    Ok(())
                } else {
                    Err(Reported)
                };
            }
            if let Some(d) = depfile {
                planned.push(output::Planned {
                    content: output::depfile(&deps),
                    path: d,
                });
            }
            for p in &planned {
                if let Err(e) = output::write(p) {
                    eprintln!("{}: error: cannot write: {e}", p.path.display());
                    return Err(Reported);
                }
            }
            Ok(())
        }
        Cmd::Completions { shell } => {
            let mut cmd = <Cli as clap::CommandFactory>::command();
            clap_complete::generate(shell, &mut cmd, "shootdown", &mut std::io::stdout());
            Ok(())
        }
        Cmd::Man => {
            let cmd = <Cli as clap::CommandFactory>::command();
            let mut out = Vec::new();
            clap_mangen::Man::new(cmd).render(&mut out).map_err(|e| {
                eprintln!("error: {e}");
                Reported
            })?;
            use std::io::Write;
            std::io::stdout().write_all(&out).map_err(|_| Reported)?;
            Ok(())
        }
        Cmd::Show {
            spec,
            stage,
            target,
            code,
        } => {
            let opts = options(&code)?;
            let name = spec.display().to_string();
            let src = read_spec(&spec)?;
            let stage = match stage {
                StageArg::Ast => Stage::Ast,
                StageArg::Ir => Stage::Ir,
                StageArg::Opt => Stage::Opt,
                StageArg::Lir => Stage::Lir,
                StageArg::Asm => Stage::Asm,
                StageArg::Bytes => Stage::Bytes,
            };
            let text = shootdown::emit::show::render(&name, &src, stage, target.into(), &opts)
                .map_err(|d| report(&name, &src, &d))?;
            print!("{text}");
            Ok(())
        }
        #[cfg(feature = "emu")]
        Cmd::Trace {
            spec,
            target,
            seq,
            instances,
            args,
            reads,
            json,
            code,
        } => {
            let opts = options(&code)?;
            trace_cmd(
                &spec,
                target.into(),
                &seq,
                instances,
                &args,
                &reads,
                json,
                &opts,
            )
        }
        #[cfg(not(feature = "emu"))]
        Cmd::Trace { .. } => {
            eprintln!("error: this shootdown was built without the `emu` feature (needs cmake and libclang)");
            Err(Reported)
        }
        Cmd::Verify {
            specs,
            target,
            code,
        } => {
            let opts = options(&code)?;
            let mut ok = true;
            for spec in &specs {
                let name = spec.display().to_string();
                let src = read_spec(spec)?;
                let targets: Vec<Target> = if target.is_empty() {
                    match shootdown::load(&name, &src) {
                        Ok(p) => output::default_targets(&p),
                        Err(d) => return Err(report(&name, &src, &d)),
                    }
                } else {
                    target.iter().map(|&t| t.into()).collect()
                };
                let r = shootdown::verify::verify(&name, &src, &targets, &opts)
                    .map_err(|d| report(&name, &src, &d))?;
                for p in &r.passed {
                    println!("ok    {name}: {p}");
                }
                for s in &r.skipped {
                    println!("skip  {name}: {s}");
                }
                for f in &r.failures {
                    println!("FAIL  {name}: {f}");
                }
                ok &= r.ok();
            }
            if ok {
                Ok(())
            } else {
                Err(Reported)
            }
        }
        Cmd::Stats {
            spec,
            target,
            json,
            code,
        } => {
            let opts = options(&code)?;
            let name = spec.display().to_string();
            let src = read_spec(&spec)?;
            let prog = shootdown::load(&name, &src).map_err(|d| report(&name, &src, &d))?;
            let c = shootdown::compile(&prog, target.into(), &opts)
                .map_err(|d| report(&name, &src, &d))?;
            let stats = shootdown::emit::stats::collect(&c);
            if json {
                println!("{}", shootdown::emit::stats::to_json(stats));
            } else {
                print!("{}", shootdown::emit::stats::to_text(&stats));
            }
            Ok(())
        }
    }
}

fn parse_num(s: &str) -> Option<u64> {
    let s = s.trim();
    if let Some(h) = s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        u64::from_str_radix(&h.replace('_', ""), 16).ok()
    } else if let Some(n) = s.strip_prefix('-') {
        n.parse::<u64>().ok().map(|v| v.wrapping_neg())
    } else {
        s.replace('_', "").parse().ok()
    }
}

#[cfg(feature = "emu")]
#[allow(clippy::too_many_arguments)]
fn trace_cmd(
    spec: &Path,
    target: Target,
    seq: &str,
    instances: u64,
    args: &[String],
    reads: &[String],
    json: bool,
    opts: &Options,
) -> Result<(), Reported> {
    use shootdown::verify::{interp::World, trace};
    let name = spec.display().to_string();
    let src = read_spec(spec)?;
    let prog = shootdown::load(&name, &src).map_err(|d| report(&name, &src, &d))?;
    let Some(si) = prog.seqs.iter().position(|s| s.name == seq) else {
        eprintln!(
            "error: {name} has no sequence `{seq}` (it has: {})",
            prog.seqs
                .iter()
                .map(|s| s.name.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        );
        return Err(Reported);
    };
    let s = &prog.seqs[si];
    let mut w = World {
        params: vec![0; s.params.len()],
        ..World::default()
    };
    for &d in &s.devices {
        w.counts.insert(d, instances);
    }
    for a in args {
        let Some((k, v)) = a.split_once('=') else {
            eprintln!("error: --arg {a}: expected name=value");
            return Err(Reported);
        };
        let (Some(i), Some(v)) = (s.params.iter().position(|p| p == k.trim()), parse_num(v)) else {
            eprintln!(
                "error: --arg {a}: `{seq}` parameters are {}; values are numbers",
                s.params.join(", ")
            );
            return Err(Reported);
        };
        w.params[i] = v;
    }
    for r in reads {
        let parsed = r.split_once('=').and_then(|(path, vals)| {
            let (dn, rn) = path.split_once('.')?;
            let d = prog.devices.iter().position(|d| d.name == dn)?;
            let reg = prog.devices[d].regs.iter().position(|x| x.name == rn)?;
            let vals: Option<Vec<u64>> = vals.split(',').map(parse_num).collect();
            Some(((d, reg), vals?))
        });
        let Some((key, vals)) = parsed else {
            eprintln!("error: --read {r}: expected dev.reg=v1,v2,...");
            return Err(Reported);
        };
        w.reads.insert(key, vals);
    }
    let c = shootdown::compile(&prog, target, opts).map_err(|d| report(&name, &src, &d))?;
    let t = trace::run(&prog, &c, si, &w, 100_000_000).map_err(|e| {
        eprintln!("error: emulation failed: {e}");
        Reported
    })?;
    if json {
        println!("{}", serde_json::to_string_pretty(&t).unwrap_or_default());
    } else {
        for e in &t.events {
            let kind = format!("{:?}", e.kind).to_lowercase();
            match (&e.device, e.instance, &e.reg, &e.value) {
                (Some(d), Some(i), Some(r), Some(v)) => {
                    println!("{kind:<10} {d}[{i}].{r} = {v:<20} {}", e.insn)
                }
                (_, _, _, Some(v)) => println!("{kind:<10} {:<30} operand {v}", e.insn),
                _ => println!("{kind:<10} {}", e.insn),
            }
        }
        println!(
            "return {} ({} instructions executed)",
            t.ret, t.insns_executed
        );
    }
    Ok(())
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(Reported) => ExitCode::from(1),
    }
}
