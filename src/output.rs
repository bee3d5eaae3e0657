//! Planning and writing generated files: everything is rendered in memory
//! first, so a failing spec leaves no file behind; then every destination
//! is checked (no output may be an input, another output or the depfile;
//! no directory or dangling link in the way) before anything is written;
//! then each changed file is written to a temporary file beside it, and
//! only when all of them are written are they renamed into place. An
//! output whose bytes did not change is not touched (Kbuild `filechk`
//! behaviour: it keeps its mtime).
//!
//! Symbolic links at an output path are written through: the link stays
//! and the file it points to gets the new content (as `cp` does); a link
//! to nothing is refused. New files get the mode `touch` would give them
//! (0666 less the umask), replaced files keep theirs.
//!
//! If a rename fails part way (the directory's permissions changed under
//! us, a full file system's metadata), the outputs renamed so far are
//! complete new files and the others keep their old content; the error
//! lists both, and no temporary file is left.

use crate::codegen::{self, Options};
use crate::ir::{self, Program};
use crate::isa::mach::MachFunc;
use crate::isa::Target;
use crate::passes;
use crate::spec::diag::Diag;
use std::io::Write;
use std::path::{Component, Path, PathBuf};

pub struct Planned {
    pub path: PathBuf,
    pub content: String,
    /// What the file is, for messages ("the header of x.inv").
    pub what: String,
}

/// The spec's default targets (`target ...` lines), else power64.
pub fn default_targets(prog: &crate::ir::Program) -> Vec<Target> {
    let t: Vec<Target> = prog
        .targets
        .iter()
        .filter_map(|(n, _)| Target::from_name(n))
        .collect();
    if t.is_empty() {
        vec![Target::DEFAULT]
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
    plan_program(&prog, targets, out_dir, opts)
}

/// Render every output of one loaded spec (named by `prog.source_name`).
pub fn plan_program(
    prog: &Program,
    targets: &[Target],
    out_dir: &Path,
    opts: &Options,
) -> Result<Vec<Planned>, Diag> {
    let prog = &*codegen::resolve(prog, opts);
    crate::ir::c_names::check(prog, &opts.prefix, opts.style == crate::Style::Linux)?;
    let name = &prog.source_name;
    let stem = stem(Path::new(name));
    let targets = if targets.is_empty() {
        default_targets(prog)
    } else {
        targets.to_vec()
    };
    // The header (serial, tens of milliseconds for a large spec) is
    // rendered while the sequences compile.
    let (asm, header) = crate::par::join(
        prog.seqs.len(),
        || {
            targets
                .iter()
                .map(|&t| {
                    Ok(Planned {
                        path: out_dir.join(format!("{stem}.{}.S", t.name())),
                        content: compile_to_asm(prog, t, opts)?,
                        what: format!("the {} assembly of {name}", t.name()),
                    })
                })
                .collect::<Result<Vec<_>, Diag>>()
        },
        || crate::emit::header::render(prog, &stem, opts),
    );
    let mut out = asm?;
    out.push(Planned {
        path: out_dir.join(format!("{stem}.h")),
        content: header,
        what: format!("the header of {name}"),
    });
    Ok(out)
}

/// Is the file on disk different from what we would write?
pub fn is_stale(p: &Planned) -> bool {
    std::fs::read(&p.path)
        .map(|b| b != p.content.as_bytes())
        .unwrap_or(true)
}

/// Why a set of outputs was not written.
#[derive(Debug)]
pub enum WriteError {
    /// Two files of the run are one file (an output is an input, another
    /// output or the depfile): a command-line mistake. Nothing written.
    Clash(String),
    /// A destination cannot be written (a directory or a dangling link in
    /// the way, a file system error). Nothing written.
    Dest(String),
    /// Some outputs were renamed into place before one failed.
    Partial(String),
}

impl std::fmt::Display for WriteError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            WriteError::Clash(m) | WriteError::Dest(m) | WriteError::Partial(m) => f.write_str(m),
        }
    }
}

/// `p` made absolute, its longest existing prefix resolved (symbolic
/// links, `..`), the rest normalised: two spellings of one file (and a
/// link and its target) give the same path.
pub fn identity(p: &Path) -> PathBuf {
    let abs = std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf());
    let comps: Vec<Component> = abs.components().collect();
    for i in (0..=comps.len()).rev() {
        let prefix: PathBuf = comps[..i].iter().collect();
        let base = if i == 0 {
            Some(PathBuf::new())
        } else {
            prefix.canonicalize().ok()
        };
        if let Some(mut r) = base {
            for c in &comps[i..] {
                match c {
                    Component::ParentDir => {
                        r.pop();
                    }
                    Component::CurDir => {}
                    c => r.push(c.as_os_str()),
                }
            }
            return r;
        }
    }
    abs
}

/// Where a planned file really goes: through symbolic links; an error
/// when something other than a regular file (or nothing) is there, or
/// when what should be its directory is not one.
fn destination(p: &Planned) -> Result<PathBuf, WriteError> {
    let path = &p.path;
    let shown = path.display();
    let dest = match std::fs::symlink_metadata(path) {
        Ok(m) if m.file_type().is_symlink() => path.canonicalize().map_err(|_| {
            let to = std::fs::read_link(path)
                .map(|t| t.display().to_string())
                .unwrap_or_default();
            WriteError::Dest(format!(
                "{shown}: error: cannot write {}: it is a symbolic link to `{to}`, which does not exist (not written through)",
                p.what
            ))
        })?,
        _ => path.clone(),
    };
    match std::fs::metadata(&dest) {
        Ok(m) if m.is_dir() => {
            return Err(WriteError::Dest(format!(
                "{shown}: error: cannot write {}: a directory is in the way",
                p.what
            )))
        }
        Ok(m) if !m.is_file() => {
            return Err(WriteError::Dest(format!(
                "{shown}: error: cannot write {}: it exists and is not a regular file",
                p.what
            )))
        }
        _ => {}
    }
    // The nearest existing ancestor must be a directory (`--out FILE`).
    let mut dir = dest.parent();
    while let Some(d) = dir.filter(|d| !d.as_os_str().is_empty()) {
        match std::fs::metadata(d) {
            Ok(m) if m.is_dir() => break,
            Ok(_) => {
                return Err(WriteError::Dest(format!(
                    "{shown}: error: cannot write {}: `{}` exists and is not a directory",
                    p.what,
                    d.display()
                )))
            }
            Err(_) => dir = d.parent(),
        }
    }
    Ok(dest)
}

/// Check a run's outputs against each other and against its inputs
/// (`(path, what)`): every destination distinct, none an input, each
/// writable as far as can be told without writing. Returns the
/// destinations (symbolic links resolved), in order.
pub fn check(files: &[Planned], inputs: &[(PathBuf, String)]) -> Result<Vec<PathBuf>, WriteError> {
    let mut seen: rustc_hash::FxHashMap<PathBuf, (String, PathBuf)> = Default::default();
    for (path, what) in inputs {
        seen.entry(identity(path))
            .or_insert((what.clone(), path.clone()));
    }
    let mut dests = Vec::with_capacity(files.len());
    for p in files {
        let id = identity(&p.path);
        if let Some((what, path)) = seen.get(&id) {
            let at = if *path == p.path {
                format!("`{}`", path.display())
            } else {
                format!("`{}` and `{}`, one file,", path.display(), p.path.display())
            };
            return Err(WriteError::Clash(format!(
                "error: {at} would be both {what} and {}: nothing written",
                p.what
            )));
        }
        seen.insert(id, (p.what.clone(), p.path.clone()));
    }
    for p in files {
        dests.push(destination(p)?);
    }
    Ok(dests)
}

/// Check, then write every file whose content changed (see the module
/// documentation); returns how many were written.
pub fn write_all(files: &[Planned], inputs: &[(PathBuf, String)]) -> Result<usize, WriteError> {
    let dests = check(files, inputs)?;
    let mut created: Vec<PathBuf> = Vec::new();
    let mut temps = Vec::new();
    let undo = |created: &[PathBuf]| {
        for d in created.iter().rev() {
            let _ = std::fs::remove_dir(d);
        }
    };
    for (p, dest) in files.iter().zip(&dests) {
        if std::fs::read(dest).is_ok_and(|b| b == p.content.as_bytes()) {
            continue;
        }
        match temp_for(p, dest, &mut created) {
            Ok(t) => temps.push((t, dest, p)),
            Err(e) => {
                drop(temps);
                undo(&created);
                return Err(WriteError::Dest(format!(
                    "{}: error: cannot write {}: {e} (nothing written)",
                    p.path.display(),
                    p.what
                )));
            }
        }
    }
    let n = temps.len();
    let mut done: Vec<&Path> = Vec::new();
    let mut temps = temps.into_iter();
    while let Some((t, dest, p)) = temps.next() {
        if let Err(e) = t.persist(dest) {
            let left: Vec<String> = std::iter::once(p)
                .chain(temps.map(|(_, _, p)| p))
                .map(|p| p.path.display().to_string())
                .collect();
            return Err(WriteError::Partial(format!(
                "{}: error: cannot rename into place: {}; updated: {}; unchanged: {}",
                p.path.display(),
                e.error,
                if done.is_empty() {
                    "none".to_string()
                } else {
                    done.iter()
                        .map(|d| d.display().to_string())
                        .collect::<Vec<_>>()
                        .join(", ")
                },
                left.join(", ")
            )));
        }
        done.push(&p.path);
    }
    Ok(n)
}

/// The content of `p` in a temporary file beside `dest`, with the mode the
/// file will have: `dest`'s if it exists, else 0666 less the umask.
fn temp_for(
    p: &Planned,
    dest: &Path,
    created: &mut Vec<PathBuf>,
) -> std::io::Result<tempfile::NamedTempFile> {
    let dir = dest
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    if !dir.is_dir() {
        let mut missing = Vec::new();
        let mut d = Some(dir);
        while let Some(x) = d.filter(|x| !x.as_os_str().is_empty() && !x.exists()) {
            missing.push(x.to_path_buf());
            d = x.parent();
        }
        std::fs::create_dir_all(dir)?;
        created.extend(missing.into_iter().rev());
    }
    let name = dest
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let prefix = format!(".{name}.");
    let mut b = tempfile::Builder::new();
    b.prefix(&prefix).suffix(".tmp");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        b.permissions(std::fs::Permissions::from_mode(0o666));
    }
    let mut tmp = b.tempfile_in(dir)?;
    // No fsync: outputs are regenerable build products (as Kbuild's own);
    // the rename alone keeps readers from seeing a partial file, and an
    // fsync per file made `gen` of the examples cost ~0.1 s on a busy disk.
    tmp.write_all(p.content.as_bytes())?;
    if let Ok(m) = std::fs::metadata(dest) {
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = m.permissions().mode() & 0o7777;
            tmp.as_file()
                .set_permissions(std::fs::Permissions::from_mode(mode))?;
        }
        #[cfg(not(unix))]
        tmp.as_file().set_permissions(m.permissions())?;
    }
    Ok(tmp)
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

/// [`codegen::compile`] and [`crate::emit::asm::render`] in one, for `gen`: each
/// function is rendered to text as soon as it is made and its LIR and
/// machine lines dropped, so a large spec never holds them all at once.
/// The text is the same as rendering a [`Compiled`].
pub fn compile_to_asm(prog: &Program, target: Target, opts: &Options) -> Result<String, Diag> {
    codegen::check_machine(prog, target)?;
    let prog = &*codegen::resolve(prog, opts);
    let prog = &*crate::features::for_target(prog, target);
    let opt = passes::run(prog, target, &opts.passes, &opts.cover)?;
    let views = crate::par::map(&opt.seqs, |seq| {
        let (_, m) = codegen::compile_seq(&opt, seq, target, opts)?;
        // Without a placement pass the user asked for no barriers.
        let placed = opts
            .passes
            .iter()
            .any(|p| matches!(p, passes::Pass::PlaceBarriers | passes::Pass::NaiveBarriers));
        if cfg!(debug_assertions) && placed {
            debug_prove(&opt, seq, &m, target)?;
        }
        Ok::<_, Diag>((crate::emit::asm::view(&m), m.needs_arch))
    })?;
    drop(opt);
    Ok(crate::emit::asm::render_views(
        target,
        &prog.source_name,
        views,
        opts,
    ))
}

/// The debug check of `gen`: the static ordering proof
/// (`verify::order_proof`) on every function before it is written, so a
/// placement bug stops a debug build's `gen` instead of shipping code
/// that only `verify` would reject. Release builds leave it to `verify`
/// (its cost is small but not nothing on 100k-operation specs).
fn debug_prove(opt: &Program, seq: &ir::Seq, m: &MachFunc, target: Target) -> Result<(), Diag> {
    let v = crate::verify::order_proof::prove_func(opt, seq, m, target).map_err(|e| {
        Diag::new(
            seq.span,
            format!("internal error: the ordering proof cannot run: {e}"),
        )
    })?;
    match v.first() {
        None => Ok(()),
        Some(v) => Err(Diag::new(
            seq.span,
            format!("internal error: {target} code breaks a required ordering: {v}"),
        )
        .help("please report this spec; `shootdown verify` shows every violation")),
    }
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
