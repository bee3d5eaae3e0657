//! What `gen` does to the file system (issue 16): an output that is an
//! input, another output or the depfile is an error before anything is
//! written; a run that fails writes nothing (a directory in the way, an
//! unwritable depfile directory, as an unprivileged user); symbolic links
//! are written through, dangling ones refused; new files get the mode
//! `touch` gives under the caller's umask, replaced ones keep theirs; the
//! bytes do not depend on how the spec's path was spelled.

use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_shootdown");
const EXAMPLE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/npu2_tce_kill.inv");

struct Run {
    code: Option<i32>,
    stderr: String,
}

/// `shootdown ARGS` in `cwd` under `umask`.
fn sd(cwd: &Path, umask: &str, args: &[&str]) -> Run {
    let mut cmd = Command::new("sh");
    cmd.current_dir(cwd)
        .arg("-c")
        .arg(format!("umask {umask} && exec \"$0\" \"$@\""))
        .arg(BIN)
        .args(args);
    run(cmd)
}

fn run(mut cmd: Command) -> Run {
    let o = cmd.output().expect("run shootdown");
    let r = Run {
        code: o.status.code(),
        stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
    };
    assert!(!r.stderr.contains("panicked"), "{}", r.stderr);
    r
}

/// Every file under `dir` with its bytes, mode and mtime.
fn snapshot(dir: &Path) -> Vec<(PathBuf, Vec<u8>, u32, i64, i64)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in rd {
            let p = e.unwrap().path();
            let m = std::fs::symlink_metadata(&p).unwrap();
            if m.is_dir() {
                stack.push(p.clone());
                out.push((p, Vec::new(), m.mode(), 0, 0));
            } else if m.file_type().is_symlink() {
                let to = std::fs::read_link(&p).unwrap();
                out.push((p, to.to_string_lossy().as_bytes().to_vec(), m.mode(), 0, 0));
            } else {
                let b = std::fs::read(&p).unwrap();
                out.push((p, b, m.mode(), m.mtime(), m.mtime_nsec()));
            }
        }
    }
    out.sort();
    out
}

fn setup() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let spec = dir.path().join("k.inv");
    std::fs::copy(EXAMPLE, &spec).unwrap();
    (dir, spec)
}

/// The depfile, a spec, and two specs of one stem: clashes, nothing
/// written, the spec untouched, exit 2 (a command-line mistake).
#[test]
fn outputs_that_are_inputs_or_each_other_are_errors() {
    let (dir, _) = setup();
    let d = dir.path();
    std::fs::create_dir_all(d.join("x1")).unwrap();
    std::fs::create_dir_all(d.join("x2")).unwrap();
    std::fs::copy(EXAMPLE, d.join("x1/same.inv")).unwrap();
    std::fs::copy(EXAMPLE, d.join("x2/same.inv")).unwrap();
    std::fs::create_dir_all(d.join("o")).unwrap();
    std::fs::copy(EXAMPLE, d.join("o/x.h")).unwrap();
    std::os::unix::fs::symlink("../k.inv", d.join("o/k.h")).unwrap();
    let cases: &[(&[&str], &str)] = &[
        (
            &["gen", "k.inv", "--out", "out", "--depfile", "out/k.h"],
            "the depfile",
        ),
        (
            &[
                "gen",
                "k.inv",
                "--out",
                "out",
                "--depfile",
                "./out/../out/k.h",
            ],
            "the depfile",
        ),
        (
            &["gen", "k.inv", "--out", "out", "--depfile", "k.inv"],
            "the spec k.inv",
        ),
        (
            &[
                "gen",
                "../k.inv",
                "--out",
                ".",
                "--depfile",
                "../sub/../k.inv",
            ],
            "the spec ../k.inv",
        ),
        (&["gen", "o/x.h", "--out", "o"], "the header of o/x.h"),
        (
            &["gen", "x1/same.inv", "x2/same.inv", "--out", "out"],
            "same",
        ),
        (&["gen", "k.inv", "k.inv", "--out", "out"], "k.inv"),
        // A link to the spec at an output path.
        (&["gen", "k.inv", "--out", "o"], "the spec k.inv"),
    ];
    for (args, needle) in cases {
        // Spellings with `..` run from a subdirectory.
        let cwd = if args.contains(&"../k.inv") {
            std::fs::create_dir_all(d.join("sub")).unwrap();
            d.join("sub")
        } else {
            d.to_path_buf()
        };
        let before = snapshot(d);
        let r = sd(&cwd, "022", args);
        assert_eq!(r.code, Some(2), "{args:?}: {}", r.stderr);
        assert!(r.stderr.contains("would be both"), "{args:?}: {}", r.stderr);
        assert!(r.stderr.contains(needle), "{args:?}: {}", r.stderr);
        assert_eq!(snapshot(d), before, "{args:?} changed files");
    }
}

/// A directory where the header goes: exit 1, and neither the new `.S`
/// files nor a changed old one are written (they used to be).
#[test]
fn a_failing_destination_writes_nothing() {
    let (dir, _) = setup();
    let d = dir.path();
    std::fs::create_dir_all(d.join("out/k.h")).unwrap();
    std::fs::write(d.join("out/k.power64.S"), "old\n").unwrap();
    let before = snapshot(d);
    let r = sd(d, "022", &["gen", "k.inv", "--out", "out"]);
    assert_eq!(r.code, Some(1), "{}", r.stderr);
    assert!(r.stderr.contains("out/k.h"), "{}", r.stderr);
    assert!(r.stderr.contains("directory is in the way"), "{}", r.stderr);
    assert_eq!(snapshot(d), before);
}

/// Symbolic links at output paths are written through (the link stays);
/// a link to nothing is refused before anything is written.
#[test]
fn symlinks_are_written_through_and_dangling_ones_refused() {
    let (dir, _) = setup();
    let d = dir.path();
    std::fs::create_dir_all(d.join("real")).unwrap();
    std::fs::create_dir_all(d.join("out")).unwrap();
    std::fs::write(d.join("real/kh"), "old\n").unwrap();
    std::fs::set_permissions(d.join("real/kh"), std::fs::Permissions::from_mode(0o640)).unwrap();
    std::os::unix::fs::symlink("../real/kh", d.join("out/k.h")).unwrap();
    let r = sd(d, "022", &["gen", "k.inv", "--out", "out"]);
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    let m = std::fs::symlink_metadata(d.join("out/k.h")).unwrap();
    assert!(m.file_type().is_symlink(), "the link was replaced");
    let h = std::fs::read_to_string(d.join("real/kh")).unwrap();
    assert!(h.contains("#define NPU_TCE_KILL_OFFSET"), "{h}");
    assert_eq!(
        std::fs::metadata(d.join("real/kh")).unwrap().mode() & 0o777,
        0o640
    );
    // Unchanged on a second run (filechk): the target keeps its mtime.
    let before = snapshot(d);
    let r = sd(d, "022", &["gen", "k.inv", "--out", "out"]);
    assert_eq!(r.code, Some(0));
    assert_eq!(snapshot(d), before);

    std::fs::create_dir_all(d.join("out2")).unwrap();
    std::os::unix::fs::symlink("nowhere/kh", d.join("out2/k.h")).unwrap();
    let before = snapshot(d);
    let r = sd(d, "022", &["gen", "k.inv", "--out", "out2"]);
    assert_eq!(r.code, Some(1), "{}", r.stderr);
    assert!(r.stderr.contains("does not exist"), "{}", r.stderr);
    assert_eq!(snapshot(d), before);
}

/// New outputs get 0666 less the umask, as `touch` would; a changed file
/// keeps its mode (they all used to become 0600).
#[test]
fn modes_follow_the_umask_and_existing_files_keep_theirs() {
    for (umask, want) in [
        ("022", 0o644),
        ("002", 0o664),
        ("077", 0o600),
        ("027", 0o640),
    ] {
        let (dir, _) = setup();
        let d = dir.path();
        let r = sd(
            d,
            umask,
            &["gen", "k.inv", "--out", "out", "--depfile", "out/k.d"],
        );
        assert_eq!(r.code, Some(0), "{}", r.stderr);
        // What touch gives under the same umask: the oracle.
        let t = Command::new("sh")
            .current_dir(d)
            .arg("-c")
            .arg(format!("umask {umask} && touch touched"))
            .status()
            .unwrap();
        assert!(t.success());
        let touched = std::fs::metadata(d.join("touched")).unwrap().mode() & 0o777;
        assert_eq!(touched, want);
        for e in std::fs::read_dir(d.join("out")).unwrap() {
            let p = e.unwrap().path();
            let mode = std::fs::metadata(&p).unwrap().mode() & 0o777;
            assert_eq!(mode, touched, "{} under umask {umask}", p.display());
        }
    }
    let (dir, _) = setup();
    let d = dir.path();
    std::fs::create_dir_all(d.join("out")).unwrap();
    for (f, mode) in [
        ("k.h", 0o664),
        ("k.power64.S", 0o755),
        ("k.aarch64.S", 0o600),
    ] {
        std::fs::write(d.join("out").join(f), "old\n").unwrap();
        std::fs::set_permissions(d.join("out").join(f), std::fs::Permissions::from_mode(mode))
            .unwrap();
    }
    let r = sd(d, "077", &["gen", "k.inv", "--out", "out"]);
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    for (f, mode) in [
        ("k.h", 0o664),
        ("k.power64.S", 0o755),
        ("k.aarch64.S", 0o600),
    ] {
        let p = d.join("out").join(f);
        assert_ne!(std::fs::read(&p).unwrap(), b"old\n", "{f} not rewritten");
        assert_eq!(std::fs::metadata(&p).unwrap().mode() & 0o777, mode, "{f}");
    }
}

/// The same spec named relatively, from another directory, through `..`
/// or absolutely gives the same bytes: `--check` finds nothing stale.
#[test]
fn outputs_do_not_depend_on_how_the_spec_path_is_spelled() {
    let (dir, spec) = setup();
    let d = dir.path();
    std::fs::create_dir_all(d.join("a/b")).unwrap();
    let r = sd(d, "022", &["gen", "k.inv", "--out", "out"]);
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    let out = d.join("out");
    let abs = spec.to_str().unwrap().to_string();
    for (cwd, name) in [
        (d.to_path_buf(), "./k.inv".to_string()),
        (d.join("a/b"), "../../k.inv".to_string()),
        (d.join("a"), abs.clone()),
        (d.join("a"), format!("{}/a/../k.inv", d.display())),
    ] {
        let r = sd(
            &cwd,
            "022",
            &["gen", &name, "--out", out.to_str().unwrap(), "--check"],
        );
        assert_eq!(
            r.code,
            Some(0),
            "{name} from {}: {}",
            cwd.display(),
            r.stderr
        );
    }
}

/// As an unprivileged user (root ignores permissions): a depfile in a
/// read-only directory makes the run fail before the outputs it could
/// write are written, and no temporary file is left.
#[test]
fn unwritable_depfile_directory_writes_nothing_as_an_unprivileged_user() {
    let (dir, _) = setup();
    let d = dir.path();
    std::fs::create_dir_all(d.join("ro")).unwrap();
    std::fs::write(d.join("ro/old.d"), "keep\n").unwrap();
    let root = effective_uid() == 0;
    if root {
        // Hand the tree to `nobody` and run as it.
        let st = Command::new("chown")
            .args(["-R", "65534:65534"])
            .arg(d)
            .status()
            .unwrap();
        assert!(st.success());
        std::fs::set_permissions(d, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    std::fs::set_permissions(d.join("ro"), std::fs::Permissions::from_mode(0o555)).unwrap();
    let before = snapshot(d);
    let mut cmd = if root {
        let mut c = Command::new("setpriv");
        c.args(["--reuid=65534", "--regid=65534", "--clear-groups", BIN]);
        c
    } else {
        Command::new(BIN)
    };
    cmd.current_dir(d)
        .args(["gen", "k.inv", "--out", "out", "--depfile", "ro/k.d"]);
    let r = run(cmd);
    assert_eq!(r.code, Some(1), "{}", r.stderr);
    assert!(r.stderr.contains("ro/k.d"), "{}", r.stderr);
    assert!(r.stderr.contains("nothing written"), "{}", r.stderr);
    assert_eq!(snapshot(d), before, "files changed");
    assert!(!d.join("out").exists(), "the output directory was created");
    // Control: with a writable depfile directory the same user succeeds.
    std::fs::set_permissions(d.join("ro"), std::fs::Permissions::from_mode(0o755)).unwrap();
    let mut cmd = if root {
        let mut c = Command::new("setpriv");
        c.args(["--reuid=65534", "--regid=65534", "--clear-groups", BIN]);
        c
    } else {
        Command::new(BIN)
    };
    cmd.current_dir(d)
        .args(["gen", "k.inv", "--out", "out", "--depfile", "ro/k.d"]);
    let r = run(cmd);
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    assert!(d.join("out/k.h").exists() && d.join("ro/k.d").exists());
}

/// The effective uid, from `id -u` (no libc dependency).
fn effective_uid() -> u32 {
    let o = Command::new("id").arg("-u").output().unwrap();
    String::from_utf8_lossy(&o.stdout).trim().parse().unwrap()
}
