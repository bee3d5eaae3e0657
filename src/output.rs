//! Planning and writing generated files: everything is rendered in memory
//! first, so a failing spec leaves no file behind; each file is written
//! through a temporary file and a rename, and only when its content
//! changed (Kbuild `filechk` behaviour: unchanged outputs keep their mtime).

use crate::codegen::{self, Options};
use crate::spec::diag::Diag;
use crate::target::Target;
use std::io::Write;
use std::path::{Path, PathBuf};

pub struct Planned {
    pub path: PathBuf,
    pub content: String,
}

/// The spec's default targets (`target ...` lines), else power64.
pub fn default_targets(prog: &crate::ir::Program) -> Vec<Target> {
    let t: Vec<Target> = prog
        .targets
        .iter()
        .filter_map(|(n, _)| Target::from_name(n))
        .collect();
    if t.is_empty() {
        vec![Target::Power64]
    } else {
        t
    }
}

pub fn stem(spec_path: &Path) -> String {
    spec_path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "spec".into())
}

/// Render every output of one spec.
pub fn plan(
    name: &str,
    src: &str,
    targets: &[Target],
    out_dir: &Path,
    opts: &Options,
) -> Result<Vec<Planned>, Diag> {
    let prog = codegen::load(name, src)?;
    crate::emit::names::check(&prog, opts)?;
    let stem = stem(Path::new(name));
    let targets = if targets.is_empty() {
        default_targets(&prog)
    } else {
        targets.to_vec()
    };
    let mut out = Vec::new();
    for t in targets {
        out.push(Planned {
            path: out_dir.join(format!("{stem}.{}.S", t.name())),
            content: codegen::compile_to_asm(&prog, t, opts)?,
        });
    }
    out.push(Planned {
        path: out_dir.join(format!("{stem}.h")),
        content: crate::emit::header::render(&prog, &stem, opts),
    });
    Ok(out)
}

/// Is the file on disk different from what we would write?
pub fn is_stale(p: &Planned) -> bool {
    std::fs::read(&p.path)
        .map(|b| b != p.content.as_bytes())
        .unwrap_or(true)
}

/// Write if changed; returns whether the file was written.
pub fn write(p: &Planned) -> std::io::Result<bool> {
    if !is_stale(p) {
        return Ok(false);
    }
    let dir = p
        .path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir)?;
    let mut tmp = tempfile::NamedTempFile::new_in(dir)?;
    // No fsync: outputs are regenerable build products (as Kbuild's own);
    // the rename alone keeps readers from seeing a partial file, and an
    // fsync per file made `gen` of the examples cost ~0.1 s on a busy disk.
    tmp.write_all(p.content.as_bytes())?;
    tmp.persist(&p.path).map_err(|e| e.error)?;
    Ok(true)
}

/// Escape a path for a make rule (spaces, `#`, `$`).
fn make_escape(p: &Path) -> String {
    let mut out = String::new();
    for c in p.display().to_string().chars() {
        match c {
            ' ' => out.push_str("\\ "),
            '#' => out.push_str("\\#"),
            '$' => out.push_str("$$"),
            c => out.push(c),
        }
    }
    out
}

/// A make-style dependency file: one `output: spec` line per output (one
/// target per line, as Kbuild's fixdep and ninja's `deps = gcc` read it),
/// then an empty rule per spec so a deleted spec is not a make error.
/// Specs have no include mechanism, so the spec is the only input.
pub fn depfile(deps: &[(PathBuf, Vec<PathBuf>)]) -> String {
    let mut s = String::new();
    for (spec, outs) in deps {
        for o in outs {
            s.push_str(&format!("{}: {}\n", make_escape(o), make_escape(spec)));
        }
    }
    for (spec, _) in deps {
        s.push_str(&format!("\n{}:\n", make_escape(spec)));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn depfile_names_the_spec_for_every_output() {
        let d = depfile(&[(
            PathBuf::from("a b.inv"),
            vec![PathBuf::from("out/a.power64.S"), PathBuf::from("out/a.h")],
        )]);
        assert_eq!(
            d,
            "out/a.power64.S: a\\ b.inv\nout/a.h: a\\ b.inv\n\na\\ b.inv:\n"
        );
    }
}
