//! A bounded, fixed-seed property test of the command line (the CI
//! companion of the `cli` fuzz target, docs/fuzzing.md): random command
//! lines over every verb, good and bad option values, the examples and
//! damaged copies of them, run in-process through
//! `shootdown::cli::main_with`. Properties: no panic; the exit code is 0,
//! 1 or 2; a failure says something on stderr; a failing run changes no
//! file; a successful `gen` run again changes no file.

use shootdown::cli::{main_with, Io};
use std::path::{Path, PathBuf};

struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    fn pick<'a>(&mut self, xs: &[&'a str]) -> &'a str {
        xs[self.below(xs.len())]
    }
    fn chance(&mut self, percent: u64) -> bool {
        self.next() % 100 < percent
    }
}

const EXAMPLES: [&str; 6] = [
    "npu2_atsd",
    "npu2_tce_kill",
    "arm_smmu",
    "arm64_tlb_range",
    "vtd_iotlb",
    "e6500_tcd_lock",
];

/// Every file under `dir` with its bytes and mtime (symbolic links by
/// target).
fn snapshot(dir: &Path) -> Vec<(PathBuf, Vec<u8>, Option<std::time::SystemTime>)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            let m = std::fs::symlink_metadata(&p).unwrap();
            if m.is_dir() {
                stack.push(p.clone());
                out.push((p, Vec::new(), None));
            } else if m.file_type().is_symlink() {
                let t = std::fs::read_link(&p).unwrap();
                out.push((p, t.to_string_lossy().as_bytes().to_vec(), None));
            } else {
                let b = std::fs::read(&p).unwrap();
                out.push((p, b, m.modified().ok()));
            }
        }
    }
    out.sort();
    out
}

/// A value for `opt`: usually a good one, sometimes a bad one.
fn value(rng: &mut Rng, opt: &str, seqs: &[String]) -> String {
    let bad = rng.chance(25);
    let s = match opt {
        "--target" => rng.pick(if bad {
            &["riscv", ""]
        } else {
            &["power64", "power64le", "aarch64", "x86_64"]
        }),
        "--passes" | "--passes-a" | "--passes-b" => rng.pick(if bad {
            &["", "nope", "fission,,"]
        } else {
            &["all", "none", "fission,place-barriers", "schedule,fuse"]
        }),
        "--style" => rng.pick(if bad {
            &["kernel"]
        } else {
            &["plain", "linux"]
        }),
        "--prefix" => rng.pick(if bad {
            &["1 bad;", "a-b"]
        } else {
            &["sd_", "", "X"]
        }),
        "--spdx" => rng.pick(if bad {
            &["MIT */ x", "a\nb"]
        } else {
            &["GPL-2.0-only", "MIT OR Apache-2.0"]
        }),
        "--set" => rng.pick(if bad {
            &["NOPE=5", "X", "A=zz"]
        } else {
            &["TCE_KILL_TCE_THRESHOLD=3"]
        }),
        "--mode" => rng.pick(&["single", "exact", "auto", "range"]),
        "--mode-a" | "--mode-b" => rng.pick(&["exact", "single", "all", "auto"]),
        "--stage" => rng.pick(&["ast", "ir", "opt", "lir", "asm", "bytes"]),
        "--seq" => {
            if bad || seqs.is_empty() {
                return "nope".into();
            }
            return seqs[rng.below(seqs.len())].clone();
        }
        "--instances" => rng.pick(if bad {
            &["7", "100000", "18446744073709551615", "x"]
        } else {
            &["0", "1", "3"]
        }),
        "--arg" => rng.pick(if bad {
            &["nope=1", "x", "pid=zz"]
        } else {
            &[
                "pid=1",
                "va=0x10000",
                "start=0x10000",
                "did=2",
                "addr=0x1000",
                "npages=8",
                "asid=3",
            ]
        }),
        "--read" => rng.pick(if bad {
            &["npu", "npu.nope=1", "x.y=1"]
        } else {
            &["npu.stat=1,0", "iotlb.iotlb=0"]
        }),
        "--sizes" => rng.pick(if bad {
            &["4Q", ","]
        } else {
            &["4K,64K", "8p", "2M,1G"]
        }),
        "--start" => rng.pick(if bad { &["x"] } else { &["0x10000", "1G"] }),
        "--cost" => rng.pick(if bad {
            &["bogus=5", "invalidate"]
        } else {
            &["invalidate=10", "all=5000"]
        }),
        _ => "",
    };
    s.to_string()
}

#[test]
fn random_command_lines_keep_their_promises() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut rng = Rng(0x16c0_ffee_d00d);
    let mut codes = [0usize; 3];
    for case in 0..500 {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        let src = example_maybe_damaged(&mut rng, root);
        std::fs::write(d.join("s.inv"), &src).unwrap();
        std::fs::create_dir_all(d.join("out")).unwrap();
        let seqs: Vec<String> = shootdown::load("s.inv", &String::from_utf8_lossy(&src))
            .map(|p| p.seqs.iter().map(|s| s.name.clone()).collect())
            .unwrap_or_default();
        let spec = d.join("s.inv").display().to_string();
        let out = d.join("out").display().to_string();
        let verb = rng.pick(&["gen", "gen", "gen", "show", "stats", "cost", "diff"]);
        let args = command_line(&mut rng, verb, &spec, &out, &seqs);
        let code = run_and_check(case, d, verb, &args);
        codes[code as usize] += 1;
    }
    // The mix is worth testing: every outcome occurs.
    assert!(
        codes.iter().all(|&n| n >= 20),
        "exit codes 0/1/2: {codes:?}"
    );
}

/// A random example's text, one in five with a few random bytes.
fn example_maybe_damaged(rng: &mut Rng, root: &Path) -> Vec<u8> {
    let ex = EXAMPLES[rng.below(EXAMPLES.len())];
    let mut src = std::fs::read(root.join(format!("examples/{ex}.inv"))).unwrap();
    if rng.chance(20) && !src.is_empty() {
        // Damage: a few random bytes.
        for _ in 0..1 + rng.below(3) {
            let i = rng.below(src.len());
            let junk = b"}{.=;@0x\n\xff";
            src[i] = junk[rng.below(junk.len())];
        }
    }
    src
}

/// The options a command takes.
fn options(verb: &str) -> &'static [&'static str] {
    match verb {
        "gen" => &[
            "--target",
            "--passes",
            "--style",
            "--prefix",
            "--spdx",
            "--set",
            "--mode",
            "--check",
            "--depfile",
        ],
        "show" => &["--stage", "--target", "--passes", "--set", "--prefix"],
        "stats" => &["--target", "--passes", "--json", "--style"],
        "cost" => &[
            "--seq",
            "--target",
            "--sizes",
            "--start",
            "--arg",
            "--instances",
            "--read",
            "--cost",
            "--set",
            "--json",
        ],
        _ => &[
            "--seq",
            "--target",
            "--passes-a",
            "--passes-b",
            "--mode-a",
            "--mode-b",
            "--arg",
            "--instances",
            "--read",
            "--cost",
            "--set",
        ],
    }
}

/// `shootdown VERB SPEC` with up to three random options (and, mostly,
/// `--seq` for `cost` and `diff`).
fn command_line(rng: &mut Rng, verb: &str, spec: &str, out: &str, seqs: &[String]) -> Vec<String> {
    let mut args = vec!["shootdown".to_string(), verb.to_string(), spec.to_string()];
    if verb == "gen" {
        args.extend(["--out".into(), out.to_string()]);
    }
    if matches!(verb, "cost" | "diff") && rng.chance(90) {
        args.push("--seq".into());
        args.push(value(rng, "--seq", seqs));
    }
    let opts = options(verb);
    for _ in 0..rng.below(4) {
        let o = rng.pick(opts);
        args.push(o.to_string());
        match o {
            "--check" | "--json" => {}
            "--depfile" => args.push(if rng.chance(30) {
                spec.to_string()
            } else {
                format!("{out}/s.d")
            }),
            o => args.push(value(rng, o, seqs)),
        }
    }
    args
}

/// Run the command line: an exit code of at most 2, a failure says why
/// and writes nothing, and a second `gen` changes nothing. The exit code.
fn run_and_check(case: usize, d: &Path, verb: &str, args: &[String]) -> u8 {
    let before = snapshot(d);
    let (mut so, mut se) = (Vec::new(), Vec::new());
    let code = main_with(
        args.iter(),
        &mut Io {
            out: &mut so,
            err: &mut se,
        },
    );
    let stderr = String::from_utf8_lossy(&se);
    assert!(code <= 2, "case {case}: exit {code}: {args:?}\n{stderr}");
    if code != 0 {
        assert!(!se.is_empty(), "case {case}: silent exit {code}: {args:?}");
        assert_eq!(
            snapshot(d),
            before,
            "case {case}: failed run wrote: {args:?}\n{stderr}"
        );
    } else if verb == "gen" && !args.iter().any(|a| a == "--check") {
        let after = snapshot(d);
        let (mut so2, mut se2) = (Vec::new(), Vec::new());
        let again = main_with(
            args.iter(),
            &mut Io {
                out: &mut so2,
                err: &mut se2,
            },
        );
        assert_eq!(again, 0, "case {case}: {args:?}");
        assert_eq!(
            snapshot(d),
            after,
            "case {case}: a second run changed files: {args:?}"
        );
    }
    code
}
