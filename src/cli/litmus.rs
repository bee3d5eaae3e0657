//! `shootdown litmus`: a sequence's run as herd7 litmus tests (issue 36,
//! docs/memory-model.md), optionally judged by herd7 at once.

use super::common::*;
use std::path::PathBuf;

#[derive(clap::Args)]
#[command(after_help = "Examples:
  shootdown litmus examples/arm64_tlb_range.inv --seq flush_tlb_page --arg asid=1 --arg addr=0x400000
  shootdown litmus examples/smmuv3_cmdq.inv --seq ... --out litmus/ --check")]
pub struct Args {
    #[command(flatten)]
    run: super::trace::Run,
    /// Write one `NAME.litmus` per test and an `@all` list into DIR
    /// (default: print the tests).
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
    /// Run herd7 on every test and print its verdicts; exit 1 unless there
    /// is a test and every forbidden outcome is `Never`.
    #[arg(long)]
    check: bool,
    /// herd7 for --check (default: $SHOOTDOWN_HERD7, else the build of
    /// scripts/build-herd7.sh under the current directory, else `herd7` on
    /// PATH).
    #[arg(long, value_name = "PATH")]
    herd7: Option<PathBuf>,
    /// The tests, what each checks and the orderings left out, as JSON.
    #[arg(long)]
    json: bool,
}

#[cfg(not(feature = "emu"))]
pub fn run(_: Args, io: &mut Io) -> Result<(), Fail> {
    errln!(
        io,
        "error: this shootdown was built without the `emu` feature (needs cmake and libclang): the tests are made from an emulator run"
    );
    Err(Fail::Reported)
}

#[cfg(feature = "emu")]
pub fn run(a: Args, io: &mut Io) -> Result<(), Fail> {
    use crate::litmus::herd::{Herd, Verdict};
    let ran = super::trace::prepare(&a.run, io)?;
    let x = crate::litmus::export(&ran.compiled, ran.seq, &ran.trace, &a.run.seq).map_err(|e| {
        errln!(io, "error: {e}");
        Fail::Reported
    })?;
    for s in &x.skipped {
        errln!(io, "note: e{} has no test: {}", s.edge, s.why);
    }
    if x.tests.is_empty() {
        errln!(
            io,
            "note: no required ordering of `{}` has a test herd7 can run (see the notes above)",
            a.run.seq
        );
    }
    if let Some(dir) = &a.out {
        write_dir(dir, &x, io)?;
    }
    let verdicts = match a.check {
        false => None,
        true => {
            let herd = match &a.herd7 {
                Some(p) => Herd::at(p),
                None => Herd::find(std::path::Path::new(".")).ok_or_else(|| {
                    usage(
                        io,
                        "--check: no herd7 (build it with scripts/build-herd7.sh, or give --herd7 PATH)"
                            .to_string(),
                    )
                })?,
            };
            let tmp = std::env::temp_dir().join(format!("shootdown-litmus-{}", std::process::id()));
            std::fs::create_dir_all(&tmp).map_err(|e| {
                errln!(io, "error: {}: {e}", tmp.display());
                Fail::Reported
            })?;
            let mut v = Vec::new();
            for t in &x.tests {
                match herd.run(t, &tmp) {
                    Ok(r) => v.push(r),
                    Err(e) => {
                        let _ = std::fs::remove_dir_all(&tmp);
                        errln!(io, "error: {e}");
                        return Err(Fail::Reported);
                    }
                }
            }
            let _ = std::fs::remove_dir_all(&tmp);
            Some(v)
        }
    };
    if a.json {
        #[derive(serde::Serialize)]
        struct Out<'a> {
            #[serde(flatten)]
            export: &'a crate::litmus::Export,
            #[serde(skip_serializing_if = "Option::is_none")]
            verdicts: Option<&'a Vec<Verdict>>,
        }
        let j = serde_json::to_string_pretty(&Out {
            export: &x,
            verdicts: verdicts.as_ref(),
        })
        .unwrap_or_default();
        outln!(io, "{j}");
    } else if let Some(v) = &verdicts {
        for (t, r) in x.tests.iter().zip(v) {
            outln!(io, "{:<9} {}  {}", r.to_string(), t.name, t.checks);
        }
    } else if a.out.is_none() {
        for (k, t) in x.tests.iter().enumerate() {
            if k > 0 {
                outln!(io, "");
            }
            out!(io, "{}", t.text);
        }
        if x.tests.len() > 1 {
            errln!(
                io,
                "note: {} tests; herd7 reads one per file: --out DIR writes them",
                x.tests.len()
            );
        }
    }
    match verdicts {
        Some(v) if v.iter().any(|r| *r != Verdict::Never) => {
            let bad = v.iter().filter(|r| **r != Verdict::Never).count();
            errln!(
                io,
                "FAIL: {bad} of {} forbidden outcomes are reachable under the architecture's model",
                v.len()
            );
            Err(Fail::Reported)
        }
        Some(v) if v.is_empty() => {
            errln!(
                io,
                "FAIL: nothing checked: no required ordering of `{}` has a test herd7 can run with these arguments",
                a.run.seq
            );
            Err(Fail::Reported)
        }
        Some(v) => {
            errln!(io, "PASS: {} tests, every forbidden outcome Never", v.len());
            Ok(())
        }
        None => Ok(()),
    }
}

#[cfg(feature = "emu")]
fn write_dir(dir: &std::path::Path, x: &crate::litmus::Export, io: &mut Io) -> Result<(), Fail> {
    let fail = |io: &mut Io, e: std::io::Error| {
        errln!(io, "error: {}: {e}", dir.display());
        Fail::Reported
    };
    std::fs::create_dir_all(dir).map_err(|e| fail(io, e))?;
    let mut list = String::new();
    for t in &x.tests {
        std::fs::write(dir.join(format!("{}.litmus", t.name)), &t.text).map_err(|e| fail(io, e))?;
        list.push_str(&format!("{}.litmus\n", t.name));
    }
    std::fs::write(dir.join("@all"), list).map_err(|e| fail(io, e))?;
    errln!(
        io,
        "wrote {} tests and @all to {}",
        x.tests.len(),
        dir.display()
    );
    Ok(())
}
