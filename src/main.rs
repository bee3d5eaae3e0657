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

// The pipeline makes many small short-lived allocations (IR, LIR, line
// text); glibc's malloc spent a quarter of a large `gen` in malloc/free.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

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
    Range,
}

#[derive(Clone, Copy, ValueEnum)]
enum StrategyArg {
    Exact,
    Single,
    All,
    Auto,
}

impl From<StrategyArg> for shootdown::model::cost::Strategy {
    fn from(s: StrategyArg) -> Self {
        use shootdown::model::cost::Strategy;
        match s {
            StrategyArg::Exact => Strategy::Exact,
            StrategyArg::Single => Strategy::Single,
            StrategyArg::All => Strategy::All,
            StrategyArg::Auto => Strategy::Auto,
        }
    }
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
    /// Modelled cost per request size of each strategy a sequence's
    /// `cover` can use (exact, single, all, auto), the crossovers and the
    /// derived threshold. Modelled, not measured.
    #[command(
        after_help = "Sizes: bytes (4K, 2M, 0x1000, 4096) or smallest granules with a `p` suffix (8p);\n\
default: powers of two from the smallest granule to 1G.\n\
Example:\n  shootdown cost examples/npu2_tce_kill.inv --seq tce_kill --svg tce.svg"
    )]
    Cost {
        spec: PathBuf,
        /// The sequence (must contain a `cover`).
        #[arg(long)]
        seq: Option<String>,
        #[arg(long, value_enum, default_value = "power64")]
        target: TargetArg,
        /// Request sizes, comma-separated.
        #[arg(long)]
        sizes: Option<String>,
        /// Start address of every request (default: 1G, or the largest
        /// request rounded up to a power of two: aligned).
        #[arg(long)]
        start: Option<String>,
        /// Other parameter values, `name=value` (the cover's size is solved
        /// for its one remaining parameter; a granule-size parameter
        /// defaults to 4096).
        #[arg(long = "arg")]
        args: Vec<String>,
        /// Instances of every run-time device set (default: its maximum,
        /// as the threshold derivation assumes).
        #[arg(long)]
        instances: Option<u64>,
        /// Override a cost of the cover's set, `KIND=NS` (invalidate,
        /// store, barrier, refill, all).
        #[arg(long = "cost", value_name = "KIND=NS")]
        costs: Vec<String>,
        /// Passes for every strategy (default all).
        #[arg(long, default_value = "all")]
        passes: String,
        /// Pin a threshold, `NAME=VALUE`, for `auto`.
        #[arg(long = "set", value_name = "NAME=VALUE")]
        sets: Vec<String>,
        /// Also draw the table as an SVG plot.
        #[arg(long)]
        svg: Option<PathBuf>,
        #[arg(long)]
        json: bool,
    },
    /// Two strategies side by side: the diff of their .S text, static
    /// counts and, with --arg, dynamic counts and modelled cost. Defaults:
    /// a = --passes none (naive), b = --passes all.
    #[command(
        after_help = "Example:\n  shootdown diff examples/npu2_atsd.inv --seq invalidate_va --instances 6 \\\n      --arg pid=1 --arg va=0x10010000"
    )]
    Diff {
        spec: PathBuf,
        /// A second spec for side b (default: the same).
        spec2: Option<PathBuf>,
        #[arg(long)]
        seq: Option<String>,
        #[arg(long, value_enum, default_value = "power64")]
        target: TargetArg,
        #[arg(long, default_value = "none")]
        passes_a: String,
        #[arg(long, default_value = "all")]
        passes_b: String,
        /// Force the covers of side a to a strategy.
        #[arg(long, value_enum)]
        mode_a: Option<StrategyArg>,
        #[arg(long, value_enum)]
        mode_b: Option<StrategyArg>,
        /// A parameter value, `name=value`; any --arg turns on the dynamic
        /// counts (missing parameters are 0).
        #[arg(long = "arg")]
        args: Vec<String>,
        /// Instances of every run-time device set (default: its maximum).
        #[arg(long)]
        instances: Option<u64>,
        #[arg(long = "cost", value_name = "KIND=NS")]
        costs: Vec<String>,
        #[arg(long = "set", value_name = "NAME=VALUE")]
        sets: Vec<String>,
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
                ModeArg::Range => shootdown::ir::CoverMode::Range,
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
        Cmd::Cost {
            spec,
            seq,
            target,
            sizes,
            start,
            args,
            instances,
            costs,
            passes: pass_list,
            sets,
            svg,
            json,
        } => {
            use shootdown::model::cost;
            let name = spec.display().to_string();
            let src = read_spec(&spec)?;
            let seq = need_seq(&name, &src, seq)?;
            let prog = shootdown::load(&name, &src).map_err(|d| report(&name, &src, &d))?;
            let sizes = sizes
                .map(|s| cost::parse_sizes(&s))
                .transpose()
                .map_err(|e| {
                    eprintln!("error: {e}");
                    Reported
                })?;
            let start = match start {
                Some(s) => Some(cost::parse_bytes(&s).ok_or_else(|| {
                    eprintln!("error: --start {s}: not an address");
                    Reported
                })?),
                None => None,
            };
            let req = cost::Request {
                target: target.into(),
                passes: parse_passes("--passes", &pass_list)?,
                args: pairs("--arg", &args)?,
                sizes,
                start,
                instances,
                pins: pairs("--set", &sets)?,
                costs: pairs("--cost", &costs)?,
            };
            let table =
                cost::table(&prog, &seq, &req).map_err(|e| cost_error(&[(&name, &src)], e))?;
            if let Some(path) = &svg {
                let text = shootdown::model::plot::svg(&table).map_err(|e| {
                    eprintln!("error: {e}");
                    Reported
                })?;
                std::fs::write(path, text).map_err(|e| {
                    eprintln!("{}: error: cannot write: {e}", path.display());
                    Reported
                })?;
            }
            if json {
                println!("{}", table.to_json());
            } else {
                print!("{}", table.to_text());
            }
            Ok(())
        }
        Cmd::Diff {
            spec,
            spec2,
            seq,
            target,
            passes_a,
            passes_b,
            mode_a,
            mode_b,
            args,
            instances,
            costs,
            sets,
        } => {
            use shootdown::emit::diff;
            let name = spec.display().to_string();
            let src = read_spec(&spec)?;
            let seq = need_seq(&name, &src, seq)?;
            let (name2, src2) = match &spec2 {
                Some(p) => (p.display().to_string(), read_spec(p)?),
                None => (name.clone(), src.clone()),
            };
            let prog = shootdown::load(&name, &src).map_err(|d| report(&name, &src, &d))?;
            let prog2 = shootdown::load(&name2, &src2).map_err(|d| report(&name2, &src2, &d))?;
            let args = pairs("--arg", &args)?;
            let req = diff::Request {
                target: target.into(),
                seq,
                dynamic: !args.is_empty(),
                args,
                instances,
                pins: pairs("--set", &sets)?,
                costs: pairs("--cost", &costs)?,
            };
            let a = diff::Side {
                spec_index: 0,
                prog: &prog,
                passes: parse_passes("--passes-a", &passes_a)?,
                passes_text: passes_a.clone(),
                strategy: mode_a.map(Into::into),
            };
            let b = diff::Side {
                spec_index: 1,
                prog: &prog2,
                passes: parse_passes("--passes-b", &passes_b)?,
                passes_text: passes_b.clone(),
                strategy: mode_b.map(Into::into),
            };
            let text = diff::render(&a, &b, &req)
                .map_err(|e| cost_error(&[(&name, &src), (&name2, &src2)], e))?;
            print!("{text}");
            Ok(())
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

/// `name=value` pairs (`--arg`, `--set`, `--cost`).
fn pairs(flag: &str, list: &[String]) -> Result<Vec<(String, u64)>, Reported> {
    list.iter()
        .map(|a| {
            a.split_once('=')
                .and_then(|(k, v)| Some((k.trim().to_string(), parse_num(v)?)))
                .ok_or_else(|| {
                    eprintln!("error: {flag} {a}: expected name=value (value decimal or 0x hex)");
                    Reported
                })
        })
        .collect()
}

fn need_seq(name: &str, src: &str, seq: Option<String>) -> Result<String, Reported> {
    match seq {
        Some(s) => Ok(s),
        None => {
            let list = shootdown::load(name, src)
                .map(|p| shootdown::model::cost::seq_names(&p))
                .unwrap_or_default();
            eprintln!("error: --seq NAME is required: which sequence of {name}? (it has: {list})");
            Err(Reported)
        }
    }
}

fn cost_error(names: &[(&str, &str)], e: shootdown::model::cost::Error) -> Reported {
    match e {
        shootdown::model::cost::Error::Spec(i, d) => {
            let (n, s) = names[i.min(names.len() - 1)];
            report(n, s, &d)
        }
        shootdown::model::cost::Error::Usage(m) => {
            eprintln!("error: {m}");
            Reported
        }
    }
}

fn parse_passes(flag: &str, s: &str) -> Result<Vec<passes::Pass>, Reported> {
    passes::parse_list(s).map_err(|e| {
        eprintln!("error: {flag}: {e}");
        Reported
    })
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
    w.big_endian = target.big_endian();
    for (i, p) in s.ptrs.iter().enumerate() {
        if p.is_some() {
            w.memory.insert(i, vec![0; 16]);
        }
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
