//! A library API for Cargo build scripts, in the spirit of the `cc` crate:
//! generate the `.S` and `.h` files of one or more specs into `OUT_DIR`
//! (written only when their bytes change), and tell Cargo to rerun the
//! build script when a spec changes.
//!
//! ```
//! # let out = tempfile::tempdir().unwrap();
//! # std::env::set_var("OUT_DIR", out.path());
//! // build.rs
//! let spec = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/npu2_atsd.inv");
//! let files = shootdown::Build::new()
//!     .spec(spec)
//!     .target(shootdown::Target::Aarch64)
//!     .prefix("sd_")
//!     .run()
//!     .expect("shootdown");
//! // prints `cargo:rerun-if-changed=.../examples/npu2_atsd.inv`
//! assert!(files.iter().any(|f| f.ends_with("npu2_atsd.aarch64.S")));
//! assert!(files.iter().any(|f| f.ends_with("npu2_atsd.h")));
//! // Hand the `.S` files to the `cc` crate, include the header from C.
//! ```

use crate::codegen::{Options, Style};
use crate::isa::Target;
use crate::output;
use crate::spec::diag::render;
use std::io::Write;
use std::path::{Path, PathBuf};

/// Why [`Build::run`] failed. `Display` gives the rendered diagnostic
/// (`file:line:col` and the underlined span) for spec errors.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("{path}: cannot read spec: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{0}")]
    Spec(String),
    /// Nothing was written, or (a rename failing part way) the message
    /// lists what was.
    #[error("{0}")]
    Write(String),
    #[error("no output directory: call .out_dir() or set OUT_DIR")]
    NoOutDir,
}

/// Builder for one generation run; see the module documentation.
#[derive(Clone, Debug, Default)]
pub struct Build {
    specs: Vec<PathBuf>,
    targets: Vec<Target>,
    out_dir: Option<PathBuf>,
    opts: Options,
    cargo_metadata: Option<bool>,
}

impl Build {
    pub fn new() -> Build {
        Build::default()
    }

    /// Add a spec file.
    pub fn spec(&mut self, path: impl AsRef<Path>) -> &mut Build {
        self.specs.push(path.as_ref().to_path_buf());
        self
    }

    /// Add a target; without any, each spec's `target` line (else power64).
    pub fn target(&mut self, t: Target) -> &mut Build {
        self.targets.push(t);
        self
    }

    /// Where to write; defaults to `$OUT_DIR`.
    pub fn out_dir(&mut self, dir: impl AsRef<Path>) -> &mut Build {
        self.out_dir = Some(dir.as_ref().to_path_buf());
        self
    }

    /// `Style::Plain` (default) or `Style::Linux`.
    pub fn style(&mut self, s: Style) -> &mut Build {
        self.opts.style = s;
        self
    }

    /// Prefix for every generated symbol.
    pub fn prefix(&mut self, p: &str) -> &mut Build {
        self.opts.prefix = p.to_string();
        self
    }

    /// SPDX identifier for the first line of every file.
    pub fn spdx(&mut self, id: &str) -> &mut Build {
        self.opts.spdx = Some(id.to_string());
        self
    }

    /// Replace all code generation options at once.
    pub fn options(&mut self, o: Options) -> &mut Build {
        self.opts = o;
        self
    }

    /// Print `cargo:rerun-if-changed=` lines (default: when `OUT_DIR` is
    /// set, i.e. inside a build script).
    pub fn cargo_metadata(&mut self, on: bool) -> &mut Build {
        self.cargo_metadata = Some(on);
        self
    }

    /// Generate everything; returns the paths of all outputs (written or
    /// already up to date). Nothing is written if any spec has errors.
    pub fn run(&self) -> Result<Vec<PathBuf>, Error> {
        let out_dir = match &self.out_dir {
            Some(d) => d.clone(),
            None => std::env::var_os("OUT_DIR")
                .map(PathBuf::from)
                .ok_or(Error::NoOutDir)?,
        };
        let meta = self
            .cargo_metadata
            .unwrap_or_else(|| std::env::var_os("OUT_DIR").is_some());
        let mut planned = Vec::new();
        let mut inputs = Vec::new();
        let mut stdout = std::io::stdout().lock();
        for spec in &self.specs {
            inputs.push((spec.clone(), format!("the spec {}", spec.display())));
            if meta {
                writeln!(stdout, "cargo:rerun-if-changed={}", spec.display()).ok();
            }
            let name = spec.display().to_string();
            let src = std::fs::read_to_string(spec).map_err(|source| Error::Read {
                path: spec.clone(),
                source,
            })?;
            let p = output::plan(&name, &src, &self.targets, &out_dir, &self.opts)
                .map_err(|d| Error::Spec(render(&name, &src, &d)))?;
            planned.extend(p);
        }
        output::write_all(&planned, &inputs).map_err(|e| Error::Write(e.to_string()))?;
        Ok(planned.into_iter().map(|p| p.path).collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spec_errors_write_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let spec = dir.path().join("bad.inv");
        std::fs::write(
            &spec,
            "device d { reg r 0x0 u64 be }\nseq s() { d.nope = 1 }\n",
        )
        .unwrap();
        let e = Build::new()
            .spec(&spec)
            .out_dir(dir.path().join("out"))
            .cargo_metadata(false)
            .run()
            .unwrap_err();
        assert!(matches!(e, Error::Spec(_)), "{e}");
        assert!(!dir.path().join("out").exists());
    }

    #[test]
    fn second_run_keeps_mtimes() {
        let dir = tempfile::tempdir().unwrap();
        let spec = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/npu2_atsd.inv");
        let mut b = Build::new();
        b.spec(spec).out_dir(dir.path()).cargo_metadata(false);
        let files = b.run().unwrap();
        let m1: Vec<_> = files
            .iter()
            .map(|f| std::fs::metadata(f).unwrap().modified().unwrap())
            .collect();
        std::thread::sleep(std::time::Duration::from_millis(20));
        let files2 = b.run().unwrap();
        let m2: Vec<_> = files2
            .iter()
            .map(|f| std::fs::metadata(f).unwrap().modified().unwrap())
            .collect();
        assert_eq!(files, files2);
        assert_eq!(m1, m2);
    }
}
