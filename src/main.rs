//! The `shootdown` binary: standard output and error for [`shootdown::cli`].

use clap::Parser;
use std::io::Write;
use std::process::ExitCode;

// The pipeline makes many small short-lived allocations (IR, LIR, line
// text); glibc's malloc spent a quarter of a large `gen` in malloc/free.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    let cli = shootdown::cli::Cli::parse();
    let mut out = std::io::stdout();
    let mut err = std::io::stderr();
    let code = shootdown::cli::run(
        cli,
        &mut shootdown::cli::Io {
            out: &mut out,
            err: &mut err,
        },
    );
    let _ = out.flush();
    ExitCode::from(code)
}
