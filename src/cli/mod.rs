//! The command line: one file per verb. Each verb parses its own options
//! (clap; its `Args` carry its help's examples), reads the spec, calls the
//! library and writes what it has to say to [`Io`]; `main.rs` only wires
//! standard output and error to [`run`].
//! Keeping the command line in the library lets the fuzz target drive it
//! in-process, with the same parsing and the same checks as the binary.

mod common;
mod cost;
mod diff;
mod explain;
mod explore;
mod gen;
mod litmus;
mod misc;
mod show;
mod stats;
mod trace;
mod verify;

pub use common::{Fail, Io};

use clap::{Parser, Subcommand};

const AFTER_HELP: &str = "\
Examples:
  shootdown gen examples/npu2_atsd.inv --out build/
  shootdown gen examples/npu2_atsd.inv --style linux --prefix sd_ --spdx GPL-2.0 \\
      --target aarch64 --out build/ --depfile build/npu2_atsd.d
  shootdown show examples/npu2_atsd.inv --stage opt

Exit codes: 0 success; 1 a spec has errors, or --check found stale outputs,
or an output could not be written; 2 bad command-line usage.";

#[derive(Parser)]
#[command(name = "shootdown", version, about = "Generate optimized invalidation sequences (TLB, IOMMU, device TLB) from a spec", after_help = AFTER_HELP)]
pub struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Generate `<stem>.<target>.S` per target and `<stem>.h` per spec.
    Gen(gen::Args),
    /// Print a shell completion script.
    Completions(misc::CompletionsArgs),
    /// Print the man page (roff) for shootdown(1).
    #[command(after_help = "\
Example:
  shootdown man > shootdown.1 && man ./shootdown.1")]
    Man,
    /// Print one stage of the pipeline for a spec.
    Show(show::Args),
    /// Run a sequence's machine code in the emulator against simulated
    /// devices and print every store, load, barrier and invalidate.
    Trace(trace::Args),
    /// Check the output against GNU as, capstone and the emulator (every
    /// required ordering crossed by a barrier, same effects as the spec).
    Verify(verify::Args),
    /// Modelled cost per request size of each strategy a sequence's
    /// `cover` can use (exact, single, all, auto), the crossovers and the
    /// derived threshold. Modelled, not measured.
    Cost(cost::Args),
    /// Two strategies side by side: the diff of their .S text, static
    /// counts and, with --arg, dynamic counts and modelled cost. Defaults:
    /// a = --passes none (naive), b = --passes all.
    Diff(diff::Args),
    /// Static counts per sequence: instructions, bytes, stores, loads,
    /// barriers by kind, invalidates.
    Stats(stats::Args),
    /// Every required ordering of each sequence and how the code meets it:
    /// the barrier that orders it (and who placed it), or why none is
    /// needed on this target; the barriers each early exit runs.
    Explain(explain::Args),
    /// The spec and its generated code as one static HTML page: spec lines
    /// and their instructions in one colour, barrier provenance, the
    /// ordering graph and the cost plot of each sequence.
    Explore(explore::Args),
    /// A sequence's run as herd7 litmus tests: the instructions it
    /// executed for the given arguments, and an observer thread per
    /// required ordering whose forbidden outcome herd7 must answer `Never`
    /// under the architecture's memory model (Arm's VMSA model for TLBIs).
    Litmus(litmus::Args),
}

/// Run one parsed command line; returns the exit code.
pub fn run(cli: Cli, io: &mut Io) -> u8 {
    let r = match cli.cmd {
        Cmd::Gen(a) => gen::run(a, io),
        Cmd::Completions(a) => misc::completions(a, io),
        Cmd::Man => misc::man(io),
        Cmd::Show(a) => show::run(a, io),
        Cmd::Trace(a) => trace::run(a, io),
        Cmd::Verify(a) => verify::run(a, io),
        Cmd::Cost(a) => cost::run(a, io),
        Cmd::Diff(a) => diff::run(a, io),
        Cmd::Stats(a) => stats::run(a, io),
        Cmd::Explain(a) => explain::run(a, io),
        Cmd::Explore(a) => explore::run(a, io),
        Cmd::Litmus(a) => litmus::run(a, io),
    };
    match r {
        Ok(()) => 0,
        Err(f) => f.code(),
    }
}

/// Parse `args` (the first is the program name) and run them: what the
/// binary does, with clap's own messages written to `io` too. For the fuzz
/// target and tests, which drive the command line in-process.
pub fn main_with<I, T>(args: I, io: &mut Io) -> u8
where
    I: IntoIterator<Item = T>,
    T: Into<std::ffi::OsString> + Clone,
{
    match <Cli as clap::Parser>::try_parse_from(args) {
        Ok(cli) => run(cli, io),
        Err(e) => {
            let text = e.render().to_string();
            let _ = if e.use_stderr() {
                io.err.write_all(text.as_bytes())
            } else {
                io.out.write_all(text.as_bytes())
            };
            u8::try_from(e.exit_code()).unwrap_or(2)
        }
    }
}

pub(crate) fn command() -> clap::Command {
    <Cli as clap::CommandFactory>::command()
}

#[cfg(test)]
mod tests {
    /// clap checks the derive's consistency only when asked (a mismatch
    /// between an option's parser and its field panics at run time).
    #[test]
    fn command_line_definition_is_consistent() {
        super::command().debug_assert();
    }
}
