//! The `shootdown` binary: standard output and error for [`shootdown::cli`].

use clap::Parser;
use std::io::{ErrorKind, Write};
use std::process::ExitCode;

// The pipeline makes many small short-lived allocations (IR, LIR, line
// text); glibc's malloc spent a quarter of a large `gen` in malloc/free.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Standard output or error as command-line tools treat them: when the
/// reader has gone (`shootdown show ... | head -1`), the rest is dropped
/// quietly and the run ends with the status it would have had; any other
/// write error is reported once at the end (exit 1).
struct Stream<W: Write> {
    inner: W,
    closed: bool,
    error: Option<std::io::Error>,
}

impl<W: Write> Stream<W> {
    fn new(inner: W) -> Self {
        Stream {
            inner,
            closed: false,
            error: None,
        }
    }
    fn failed(&mut self, e: std::io::Error) {
        if e.kind() == ErrorKind::BrokenPipe {
            self.closed = true;
        } else if self.error.is_none() {
            self.error = Some(e);
            self.closed = true;
        }
    }
}

impl<W: Write> Write for Stream<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if !self.closed {
            if let Err(e) = self.inner.write_all(buf) {
                self.failed(e);
            }
        }
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        if !self.closed {
            if let Err(e) = self.inner.flush() {
                self.failed(e);
            }
        }
        Ok(())
    }
}

fn main() -> ExitCode {
    let cli = shootdown::cli::Cli::parse();
    let mut out = Stream::new(std::io::stdout().lock());
    let mut err = Stream::new(std::io::stderr());
    let mut code = shootdown::cli::run(
        cli,
        &mut shootdown::cli::Io {
            out: &mut out,
            err: &mut err,
        },
    );
    let _ = out.flush();
    if let Some(e) = out.error.take() {
        let _ = writeln!(err, "error: cannot write to standard output: {e}");
        code = code.max(1);
    }
    ExitCode::from(code)
}
