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
Exit codes: 0 success; 1 a spec has errors, or --check found stale outputs,
or an output could not be written; 2 bad command-line usage.";

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
}

#[derive(Subcommand)]
enum Cmd {
    /// Generate `<stem>.<target>.S` per target and `<stem>.h` per spec.
    #[command(
        after_help = "Example:\n  shootdown gen examples/npu2_atsd.inv --target power64le --out build/"
    )]
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
        #[command(flatten)]
        code: CodeOpts,
    },
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
    Ok(Options {
        passes,
        style: match c.style {
            StyleArg::Plain => Style::Plain,
            StyleArg::Linux => Style::Linux,
        },
        prefix: c.prefix.clone(),
        spdx: c.spdx.clone(),
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
            code,
        } => {
            let opts = options(&code)?;
            let targets: Vec<Target> = target.into_iter().map(Target::from).collect();
            let mut planned = Vec::new();
            let mut failed = false;
            for spec in &specs {
                let name = spec.display().to_string();
                let Ok(src) = read_spec(spec) else {
                    failed = true;
                    continue;
                };
                match output::plan(&name, &src, &targets, &out, &opts) {
                    Ok(p) => planned.extend(p),
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
            for p in &planned {
                if let Err(e) = output::write(p) {
                    eprintln!("{}: error: cannot write: {e}", p.path.display());
                    return Err(Reported);
                }
            }
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

fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(Reported) => ExitCode::from(1),
    }
}
