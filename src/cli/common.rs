//! What the verbs share: where output goes, how a failure is reported,
//! the code-generation options, and reading a spec.

use crate::codegen::{Options, Style};
use crate::passes;
use crate::spec::diag::{render, Diag, Span};
pub use crate::Target;
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
    /// The command line is wrong (a bad option value, a name the spec
    /// does not have, a count over its limit): exit 2, as clap's own.
    Usage,
}

impl Fail {
    pub fn code(self) -> u8 {
        match self {
            Fail::Reported => 1,
            Fail::Usage => 2,
        }
    }
}

/// Report a command-line mistake the spec reveals (exit 2).
pub fn usage(io: &mut Io, msg: impl std::fmt::Display) -> Fail {
    errln!(io, "error: {msg}");
    Fail::Usage
}

// Value parsers: clap reports their errors itself, with the option's name,
// and exits 2.

/// `NAME=VALUE` with a number (decimal, 0x hex, `_` separators, or a
/// negative decimal).
pub fn pair(s: &str) -> Result<(String, u64), String> {
    let (k, v) = s
        .split_once('=')
        .ok_or("expected NAME=VALUE (value decimal or 0x hex)")?;
    let k = k.trim();
    if k.is_empty() || !k.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
        return Err(format!("`{k}` is not a name (expected NAME=VALUE)"));
    }
    let v = parse_num(v)
        .ok_or_else(|| format!("`{}` is not a number (decimal or 0x hex)", v.trim()))?;
    Ok((k.to_string(), v))
}

/// `--feature NAME=on|off`.
pub fn feature_pair(s: &str) -> Result<(String, bool), String> {
    let (k, v) = s.split_once('=').ok_or("expected NAME=on or NAME=off")?;
    let k = k.trim();
    if k.is_empty() || !k.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
        return Err(format!(
            "`{k}` is not a feature name (expected NAME=on|off)"
        ));
    }
    let on = match v.trim() {
        "on" | "1" | "yes" => true,
        "off" | "0" | "no" => false,
        other => return Err(format!("`{other}` is not on or off")),
    };
    Ok((k.to_string(), on))
}

/// Every `--feature` must name a feature one of the specs declares, and
/// only once.
pub fn check_features(
    io: &mut Io,
    progs: &[&crate::ir::Program],
    fixed: &[(String, bool)],
) -> Result<(), Fail> {
    for (i, (k, _)) in fixed.iter().enumerate() {
        if fixed[..i].iter().any(|(p, _)| p == k) {
            return Err(usage(io, format!("--feature {k}=... given twice")));
        }
        if !progs
            .iter()
            .any(|p| p.features.iter().any(|f| &f.name == k))
        {
            let known: Vec<&str> = progs
                .iter()
                .flat_map(|p| p.features.iter().map(|f| f.name.as_str()))
                .collect();
            let what = if known.is_empty() {
                "the spec declares no `feature`".to_string()
            } else {
                format!("features: {}", known.join(", "))
            };
            return Err(usage(
                io,
                format!("--feature {k}=...: no feature named `{k}` ({what})"),
            ));
        }
        // Which sequences the setting changes: none is a mistake, and
        // the ones it leaves alone are said (issue 41: it was silent).
        let (mut testing, mut others) = (Vec::new(), Vec::new());
        for p in progs {
            let Some(fi) = p.features.iter().position(|f| &f.name == k) else {
                continue;
            };
            for seq in &p.seqs {
                if crate::features::used_features(seq)
                    .iter()
                    .any(|&(i, _)| i == fi)
                {
                    testing.push(seq.name.as_str());
                } else {
                    others.push(seq.name.as_str());
                }
            }
        }
        if testing.is_empty() {
            return Err(usage(
                io,
                format!("--feature {k}=...: no sequence tests `feature {k}`"),
            ));
        }
        if !others.is_empty() {
            errln!(
                io,
                "note: --feature {k}: {} do not test it (their code is the same either way); it specializes {}",
                others.join(", "),
                testing.join(", ")
            );
        }
    }
    Ok(())
}

/// A pass list as `--passes` takes it, and its text.
#[derive(Clone, Debug)]
pub struct PassList(pub Vec<passes::Pass>, pub String);

pub fn pass_list(s: &str) -> Result<PassList, String> {
    if s.trim().is_empty() {
        return Err("empty: give `all`, `none` or a comma-separated list of passes".into());
    }
    Ok(PassList(passes::parse_list(s)?, s.to_string()))
}

/// `--prefix`: what goes in front of C and assembler symbols must make
/// identifiers of them.
pub fn c_prefix(s: &str) -> Result<String, String> {
    let ok = s.len() <= 64
        && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        && !s.starts_with(|c: char| c.is_ascii_digit());
    if ok {
        Ok(s.to_string())
    } else {
        Err("a prefix is letters, digits and `_` (at most 64), not starting with a digit".into())
    }
}

/// `--spdx`: an SPDX license expression. It goes inside a `/* */` or `#`
/// comment of every output, so only the expression's own characters are
/// allowed (no `*/`, no line break).
pub fn spdx(s: &str) -> Result<String, String> {
    let ok = !s.trim().is_empty()
        && s.len() <= 200
        && s.chars().all(|c| {
            c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '+' | '(' | ')' | ' ' | ':')
        });
    if ok {
        Ok(s.trim().to_string())
    } else {
        Err("an SPDX expression is letters, digits, `.`, `-`, `+`, `:`, parentheses and spaces (e.g. GPL-2.0-only OR MIT)".into())
    }
}

/// `--read dev.reg=v1,v2,...`, the device and register still by name.
#[derive(Clone, Debug)]
pub struct ReadArg {
    pub dev: String,
    pub reg: String,
    pub values: Vec<u64>,
}

pub fn read_arg(s: &str) -> Result<ReadArg, String> {
    let bad = || "expected DEV.REG=V1,V2,... (values decimal or 0x hex)".to_string();
    let (path, vals) = s.split_once('=').ok_or_else(bad)?;
    let (dev, reg) = path.trim().split_once('.').ok_or_else(bad)?;
    let values: Option<Vec<u64>> = vals.split(',').map(parse_num).collect();
    let values = values.ok_or_else(bad)?;
    if values.len() > 1 << 16 {
        return Err("at most 65536 values".into());
    }
    Ok(ReadArg {
        dev: dev.to_string(),
        reg: reg.to_string(),
        values,
    })
}

/// The same name twice (`--arg x=1 --arg x=2`) is a mistake, not "the
/// last wins".
pub fn no_repeats(io: &mut Io, flag: &str, list: &[(String, u64)]) -> Result<(), Fail> {
    for (i, (k, _)) in list.iter().enumerate() {
        if list[..i].iter().any(|(x, _)| x == k) {
            return Err(usage(io, format!("{flag} {k}=...: `{k}` is given twice")));
        }
    }
    Ok(())
}

/// Scripted reads by device and register index.
pub fn resolve_reads(
    io: &mut Io,
    prog: &crate::ir::Program,
    reads: &[ReadArg],
) -> Result<std::collections::HashMap<(usize, usize), Vec<u64>>, Fail> {
    let mut out = std::collections::HashMap::new();
    for r in reads {
        let (dev, reg) = (&r.dev, &r.reg);
        let d = position_named(&prog.devices, dev, |d| &d.name).map_err(|names| {
            usage(
                io,
                format!("--read {dev}.{reg}: no device `{dev}` (devices: {names})"),
            )
        })?;
        let ri = position_named(&prog.devices[d].regs, reg, |x| &x.name).map_err(|names| {
            usage(
                io,
                format!("--read {dev}.{reg}: device `{dev}` has no register `{reg}` (registers: {names})"),
            )
        })?;
        if out.insert((d, ri), r.values.clone()).is_some() {
            return Err(usage(io, format!("--read {dev}.{reg}: given twice")));
        }
    }
    Ok(out)
}

/// Every `--set NAME` must be a threshold of the spec: a typo would leave
/// the real one at its derived value.
pub fn check_pins(
    io: &mut Io,
    prog: &crate::ir::Program,
    pins: &[(String, u64)],
) -> Result<(), Fail> {
    no_repeats(io, "--set", pins)?;
    let mut names = Vec::new();
    let mut read = Vec::new();
    for s in &prog.seqs {
        crate::ir::walk(&s.body, &mut |st| {
            if let crate::ir::Stmt::Cover { threshold, .. } = st {
                names.push(threshold.as_str());
            }
        });
        // `threshold(SET)` read in an expression.
        read.extend(crate::model::expr_threshold_names(prog, s));
    }
    names.extend(read.iter().map(String::as_str));
    names.sort_unstable();
    names.dedup();
    for (k, _) in pins {
        if names.binary_search(&k.as_str()).is_err() {
            let known = if names.is_empty() {
                "the spec has no `cover`, so no threshold".to_string()
            } else {
                format!(
                    "thresholds: {}",
                    names.iter().take(8).copied().collect::<Vec<_>>().join(", ")
                )
            };
            return Err(usage(
                io,
                format!("--set {k}=...: no threshold named `{k}` ({known})"),
            ));
        }
    }
    Ok(())
}

/// The target a single-target verb uses: `--target`, else the first of
/// the spec's `target` line, else power64 (as `gen` chooses).
pub fn target_for(t: Option<Target>, src: &str) -> Target {
    if let Some(t) = t {
        return t;
    }
    crate::spec::parser::parse(&crate::spec::diag::unix_breaks(src))
        .ok()
        .and_then(|s| s.targets.iter().find_map(|t| Target::from_name(&t.name)))
        .unwrap_or(Target::DEFAULT)
}

/// Run-time instance counts for `cost`, `diff` and `trace`: `--instances`
/// (or each set's maximum) for every dynamic set the sequence uses,
/// checked before anything is allocated. `limit` is what the runner
/// handles (the emulator maps a 64 KiB window per instance).
pub fn instance_counts(
    io: &mut Io,
    prog: &crate::ir::Program,
    seq: &crate::ir::Seq,
    instances: Option<u64>,
    limit: u64,
    runner: &str,
) -> Result<std::collections::HashMap<usize, u64>, Fail> {
    use crate::ir::Instances;
    let mut out = std::collections::HashMap::new();
    let mut dynamic = false;
    for &d in &seq.devices {
        let dev = &prog.devices[d];
        let n = match dev.instances {
            Instances::Single => 1,
            Instances::Fixed(n) => n,
            Instances::Dynamic { max } => {
                dynamic = true;
                let n = instances.unwrap_or(max);
                if n > max {
                    return Err(usage(
                        io,
                        format!("--instances {n}: device `{}` has at most {max} (`instances dynamic max {max}`)", dev.name),
                    ));
                }
                out.insert(d, n);
                n
            }
        };
        if n > limit {
            return Err(usage(
                io,
                format!(
                    "{} instances of device `{}`: {runner} runs at most {limit}{}",
                    n,
                    dev.name,
                    if instances.is_none() {
                        " (give a smaller --instances)"
                    } else {
                        ""
                    }
                ),
            ));
        }
    }
    if let (Some(n), false) = (instances, dynamic) {
        return Err(usage(
            io,
            format!(
                "--instances {n}: sequence `{}` uses no run-time (`dynamic`) device set",
                seq.name
            ),
        ));
    }
    Ok(out)
}

/// `--target`: the registered targets, by name.
impl ValueEnum for Target {
    fn value_variants<'a>() -> &'a [Self] {
        &Target::ALL
    }

    fn to_possible_value(&self) -> Option<clap::builder::PossibleValue> {
        Some(clap::builder::PossibleValue::new(self.name()))
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

impl From<StrategyArg> for crate::cost::Strategy {
    fn from(s: StrategyArg) -> Self {
        use crate::cost::Strategy;
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
    /// of pass names.
    #[arg(long, default_value = "all", value_parser = pass_list)]
    pub passes: PassList,
    /// Output style: plain GNU as (default) or Linux kernel macros.
    #[arg(long, value_enum, default_value = "plain")]
    style: StyleArg,
    /// Prefix for every generated name (letters, digits, `_`): symbols
    /// and inline helpers as given, macros and the include guard in upper
    /// case.
    #[arg(long, default_value = "", value_parser = c_prefix)]
    prefix: String,
    /// SPDX license expression to put in generated files.
    #[arg(long, value_parser = spdx)]
    spdx: Option<String>,
    /// Pin a strategy threshold, `NAME=VALUE` (names are in the header).
    #[arg(long = "set", value_name = "NAME=VALUE", value_parser = pair)]
    pub sets: Vec<(String, u64)>,
    /// Force every `cover` to one mode: single, exact or auto.
    #[arg(long)]
    mode: Option<ModeArg>,
    /// Fix a CPU feature at generation time, `NAME=on` or `NAME=off`:
    /// code specialized for it, with no run-time test (repeatable).
    #[arg(long = "feature", value_name = "NAME=on|off", value_parser = feature_pair)]
    pub features: Vec<(String, bool)>,
    /// Name each sequence specialized by `--feature` after it: `_NAME`
    /// (on) or `_noNAME` (off) per fixed feature it tests.
    #[arg(long)]
    feature_suffix: bool,
}

pub fn options(c: &CodeOpts) -> Options {
    Options {
        passes: c.passes.0.clone(),
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
            pins: c.sets.clone(),
        },
        features: crate::features::Selection {
            fixed: c.features.clone(),
            suffix: c.feature_suffix,
        },
    }
}

/// Load a spec and check the options that name things in it.
/// `prog` with only the sequence `--seq` names (all when None); a usage
/// error listing the sequences when it has none of that name.
pub fn only_seq(
    io: &mut Io,
    prog: crate::ir::Program,
    seq: Option<&str>,
) -> Result<crate::ir::Program, Fail> {
    match seq {
        None => Ok(prog),
        Some(s) => crate::cost::select_seq(&prog, s).map_err(|e| match e {
            crate::cost::Error::Usage(m) => usage(io, format!("--seq {s}: {m}")),
            crate::cost::Error::Spec(_, d) => usage(io, d.message),
        }),
    }
}

/// Read and load the spec at `path` as `load_checked` does: its name
/// for diagnostics, its text and its program.
pub fn load_spec(
    io: &mut Io,
    path: &Path,
    opts: &Options,
) -> Result<(String, String, crate::ir::Program), Fail> {
    let name = path.display().to_string();
    let src = read_spec(path, io)?;
    let prog = load_checked(io, &name, &src, opts)?;
    Ok((name, src, prog))
}

/// A usage error when `prog` has no sequence `seq` names (none named is
/// fine).
pub fn known_seq(io: &mut Io, prog: &crate::ir::Program, seq: Option<&str>) -> Result<(), Fail> {
    let Some(s) = seq else { return Ok(()) };
    match position_named(&prog.seqs, s, |x| &x.name) {
        Ok(_) => Ok(()),
        Err(names) => Err(usage(
            io,
            format!("--seq {s}: no such sequence (sequences: {names})"),
        )),
    }
}

/// Where the item called `name` is in `items`, else (for the message
/// naming what there is) all their names, comma-separated.
fn position_named<T>(
    items: &[T],
    name: &str,
    name_of: impl Fn(&T) -> &String,
) -> Result<usize, String> {
    items
        .iter()
        .position(|x| name_of(x) == name)
        .ok_or_else(|| {
            let names: Vec<&str> = items.iter().map(|x| name_of(x).as_str()).collect();
            names.join(", ")
        })
}

pub fn load_checked(
    io: &mut Io,
    name: &str,
    src: &str,
    opts: &Options,
) -> Result<crate::ir::Program, Fail> {
    let prog = crate::load(name, src).map_err(|d| report(io, name, src, &d))?;
    check_pins(io, &prog, &opts.cover.pins)?;
    check_features(io, &[&prog], &opts.features.fixed)?;
    // Callers use the program as the options select its features (the
    // interpreter, `trace --arg`, the header all see the same parameters).
    let prog = crate::codegen::resolve(&prog, opts).into_owned();
    Ok(prog)
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

pub fn need_seq(io: &mut Io, name: &str, src: &str, seq: Option<String>) -> Result<String, Fail> {
    match seq {
        Some(s) => Ok(s),
        None => {
            let list = crate::load(name, src)
                .map(|p| crate::cost::seq_names(&p))
                .unwrap_or_default();
            Err(usage(
                io,
                format!("--seq NAME is required: which sequence of {name}? (it has: {list})"),
            ))
        }
    }
}

pub fn cost_error(io: &mut Io, names: &[(&str, &str)], e: crate::cost::Error) -> Fail {
    match e {
        crate::cost::Error::Spec(i, d) => {
            let (n, s) = names[i.min(names.len() - 1)];
            report(io, n, s, &d)
        }
        crate::cost::Error::Usage(m) => usage(io, m),
    }
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
