//! What the verbs share: where output goes, how a failure is reported,
//! the code-generation options, and reading a spec.

use crate::codegen::{Options, Style};
use crate::passes;
use crate::spec::diag::{render, Diag, Span};
use crate::Target;
use clap::ValueEnum;
use std::io::Write;
use std::path::Path;

/// Standard output and error of one run (the binary's, or buffers).
pub struct Io<'a> {
    pub out: &'a mut dyn Write,
    pub err: &'a mut dyn Write,
}

/// Print to [`Io::out`]; write errors are the writer's business (the
/// binary's writer ends quietly on a closed pipe, see `main.rs`).
macro_rules! out {
    ($io:expr, $($t:tt)*) => {{ let _ = write!($io.out, $($t)*); }};
}
macro_rules! outln {
    ($io:expr, $($t:tt)*) => {{ let _ = writeln!($io.out, $($t)*); }};
}
macro_rules! errln {
    ($io:expr, $($t:tt)*) => {{ let _ = writeln!($io.err, $($t)*); }};
}
pub(crate) use {errln, out, outln};

/// A failure, already reported on [`Io::err`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fail {
    /// A spec error, stale outputs under `--check`, a file that could not
    /// be read or written, a failed check: exit 1.
    Reported,
}

impl Fail {
    pub fn code(self) -> u8 {
        match self {
            Fail::Reported => 1,
        }
    }
}

#[derive(Clone, Copy, ValueEnum)]
pub enum TargetArg {
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
pub enum StyleArg {
    Plain,
    Linux,
}

#[derive(Clone, Copy, ValueEnum)]
pub enum ModeArg {
    Single,
    Exact,
    Auto,
    Range,
}

#[derive(Clone, Copy, ValueEnum)]
pub enum StrategyArg {
    Exact,
    Single,
    All,
    Auto,
}

impl From<StrategyArg> for crate::model::cost::Strategy {
    fn from(s: StrategyArg) -> Self {
        use crate::model::cost::Strategy;
        match s {
            StrategyArg::Exact => Strategy::Exact,
            StrategyArg::Single => Strategy::Single,
            StrategyArg::All => Strategy::All,
            StrategyArg::Auto => Strategy::Auto,
        }
    }
}

#[derive(clap::Args)]
pub struct CodeOpts {
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

pub fn options(c: &CodeOpts, io: &mut Io) -> Result<Options, Fail> {
    let passes = passes::parse_list(&c.passes).map_err(|e| {
        errln!(io, "error: --passes: {e}");
        Fail::Reported
    })?;
    let mut pins = Vec::new();
    for s in &c.sets {
        match s
            .split_once('=')
            .and_then(|(n, v)| Some((n.trim().to_string(), parse_num(v)?)))
        {
            Some(p) => pins.push(p),
            None => {
                errln!(io, "error: --set {s}: expected NAME=VALUE");
                return Err(Fail::Reported);
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
        cover: crate::passes::cover::CoverConfig {
            mode: c.mode.map(|m| match m {
                ModeArg::Single => crate::ir::CoverMode::Single,
                ModeArg::Exact => crate::ir::CoverMode::Exact,
                ModeArg::Auto => crate::ir::CoverMode::Auto,
                ModeArg::Range => crate::ir::CoverMode::Range,
            }),
            pins,
        },
    })
}

/// Read a spec; unreadable or non-UTF-8 files are diagnostics too.
pub fn read_spec(path: &Path, io: &mut Io) -> Result<String, Fail> {
    let name = path.display().to_string();
    let bytes = std::fs::read(path).map_err(|e| {
        errln!(io, "{name}: error: cannot read spec: {e}");
        Fail::Reported
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
            let _ = write!(io.err, "{}", render(&name, &lossy, &d));
            Err(Fail::Reported)
        }
    }
}

pub fn report(io: &mut Io, name: &str, src: &str, d: &Diag) -> Fail {
    let _ = write!(io.err, "{}", render(name, src, d));
    Fail::Reported
}

/// `name=value` pairs (`--arg`, `--set`, `--cost`).
pub fn pairs(io: &mut Io, flag: &str, list: &[String]) -> Result<Vec<(String, u64)>, Fail> {
    let mut out = Vec::new();
    for a in list {
        match a
            .split_once('=')
            .and_then(|(k, v)| Some((k.trim().to_string(), parse_num(v)?)))
        {
            Some(p) => out.push(p),
            None => {
                errln!(
                    io,
                    "error: {flag} {a}: expected name=value (value decimal or 0x hex)"
                );
                return Err(Fail::Reported);
            }
        }
    }
    Ok(out)
}

pub fn need_seq(io: &mut Io, name: &str, src: &str, seq: Option<String>) -> Result<String, Fail> {
    match seq {
        Some(s) => Ok(s),
        None => {
            let list = crate::load(name, src)
                .map(|p| crate::model::cost::seq_names(&p))
                .unwrap_or_default();
            errln!(
                io,
                "error: --seq NAME is required: which sequence of {name}? (it has: {list})"
            );
            Err(Fail::Reported)
        }
    }
}

pub fn cost_error(io: &mut Io, names: &[(&str, &str)], e: crate::model::cost::Error) -> Fail {
    match e {
        crate::model::cost::Error::Spec(i, d) => {
            let (n, s) = names[i.min(names.len() - 1)];
            report(io, n, s, &d)
        }
        crate::model::cost::Error::Usage(m) => {
            errln!(io, "error: {m}");
            Fail::Reported
        }
    }
}

pub fn parse_passes(io: &mut Io, flag: &str, s: &str) -> Result<Vec<passes::Pass>, Fail> {
    passes::parse_list(s).map_err(|e| {
        errln!(io, "error: {flag}: {e}");
        Fail::Reported
    })
}

pub fn parse_num(s: &str) -> Option<u64> {
    let s = s.trim();
    if let Some(h) = s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        u64::from_str_radix(&h.replace('_', ""), 16).ok()
    } else if let Some(n) = s.strip_prefix('-') {
        n.parse::<u64>().ok().map(|v| v.wrapping_neg())
    } else {
        s.replace('_', "").parse().ok()
    }
}
