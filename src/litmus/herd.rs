//! Running herd7 on a test and reading its verdict.

use super::Test;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Where herd7 is: `scripts/build-herd7.sh` builds it from the vendored
/// source into `target/herd7`; a herd7 on PATH also works.
#[derive(Clone, Debug)]
pub struct Herd {
    pub exe: PathBuf,
    /// Its `-set-libdir` (the `.cat` models), for a build tree.
    pub libdir: Option<PathBuf>,
}

/// herd7's answer for a test's `exists` clause.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    /// No execution the model allows reaches the outcome.
    Never,
    Sometimes,
    Always,
}

impl std::fmt::Display for Verdict {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Verdict::Never => "Never",
            Verdict::Sometimes => "Sometimes",
            Verdict::Always => "Always",
        })
    }
}

impl Herd {
    /// herd7 at `exe`; a build tree's `herd/libdir` is found from
    /// `_build/default/herd/herd.exe`.
    pub fn at(exe: &Path) -> Herd {
        let libdir = exe
            .ancestors()
            .nth(4)
            .map(|t| t.join("herd/libdir"))
            .filter(|l| l.join("aarch64.cat").is_file());
        Herd {
            exe: exe.to_path_buf(),
            libdir,
        }
    }

    /// `SHOOTDOWN_HERD7`, else the build `scripts/build-herd7.sh` makes
    /// under `root`, else `herd7` on PATH.
    pub fn find(root: &Path) -> Option<Herd> {
        if let Some(p) = std::env::var_os("SHOOTDOWN_HERD7") {
            return Some(Herd::at(Path::new(&p)));
        }
        let built = root.join("target/herd7/herdtools7-7.57/_build/default/herd/herd.exe");
        if built.is_file() {
            return Some(Herd::at(&built));
        }
        let on_path = std::env::var_os("PATH")?;
        std::env::split_paths(&on_path)
            .map(|d| d.join("herd7"))
            .find(|p| p.is_file())
            .map(|p| Herd::at(&p))
    }

    /// Write `t` into `dir` and run herd7 on it.
    pub fn run(&self, t: &Test, dir: &Path) -> Result<Verdict, String> {
        let file = dir.join(format!("{}.litmus", t.name));
        std::fs::write(&file, &t.text).map_err(|e| format!("{}: {e}", file.display()))?;
        self.run_file(&file, t.variant)
    }

    /// Run herd7 on the test in `file` (named on its first line), with
    /// `-variant variant` if given.
    pub fn run_file(&self, file: &Path, variant: Option<&str>) -> Result<Verdict, String> {
        let text = std::fs::read_to_string(file).map_err(|e| format!("{}: {e}", file.display()))?;
        let name = text
            .lines()
            .next()
            .and_then(|l| l.split_whitespace().nth(1))
            .unwrap_or_default()
            .to_string();
        let mut cmd = Command::new(&self.exe);
        if let Some(l) = &self.libdir {
            cmd.arg("-set-libdir").arg(l);
        }
        if let Some(v) = variant {
            cmd.arg("-variant").arg(v);
        }
        let out = cmd
            .arg(file)
            .output()
            .map_err(|e| format!("{}: {e}", self.exe.display()))?;
        let stdout = String::from_utf8_lossy(&out.stdout);
        parse(&stdout, &name).ok_or_else(|| {
            format!(
                "herd7 gave no verdict for {} (exit {}): {}{}",
                file.display(),
                out.status,
                stdout.trim(),
                String::from_utf8_lossy(&out.stderr).trim()
            )
        })
    }
}

/// The verdict in herd7's `Observation NAME Never|Sometimes|Always P N`.
pub fn parse(out: &str, name: &str) -> Option<Verdict> {
    out.lines().find_map(|l| {
        let mut w = l.split_whitespace();
        (w.next()? == "Observation" && w.next()? == name).then_some(())?;
        match w.next()? {
            "Never" => Some(Verdict::Never),
            "Sometimes" => Some(Verdict::Sometimes),
            "Always" => Some(Verdict::Always),
            _ => None,
        }
    })
}
