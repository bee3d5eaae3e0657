//! What the fuzz target `pipeline` (fuzz/fuzz_targets/pipeline.rs) does
//! with its input, in one file that the target and the replay of its old
//! findings (tests/fuzz_regressions.rs) both compile: the whole pipeline
//! on arbitrary bytes, spec text -> parse/check -> every target with the
//! optimizing and the naive pass lists, both output styles -> assembly,
//! listing (capstone), stats and header. Errors must be diagnostics whose
//! rendering works.

use shootdown::codegen::{Options, Style};
use shootdown::spec::diag::render;
use shootdown::{passes, Target};

const TARGETS: [Target; Target::ALL.len()] = Target::ALL;

/// The fuzz target's body.
pub fn pipeline(data: &[u8]) {
    // Invalid UTF-8 is rejected by the CLI before the library; fuzz the
    // library on the lossy text so every input reaches the parser.
    let src = String::from_utf8_lossy(data);
    let name = "fuzz.inv";
    let prog = match shootdown::load(name, &src) {
        Ok(p) => p,
        Err(d) => {
            let _ = render(name, &src, &d);
            return;
        }
    };
    let naive = Options {
        passes: passes::parse_list("none").unwrap(),
        ..Options::default()
    };
    let linux = Options {
        style: Style::Linux,
        prefix: "fz_".into(),
        spdx: Some("GPL-2.0-only".into()),
        ..Options::default()
    };
    for opts in [Options::default(), naive, linux] {
        let _ = shootdown::emit::header::render(&prog, "fuzz", &opts);
        for t in TARGETS {
            match shootdown::compile(&prog, t, &opts) {
                Ok(c) => {
                    let _ = shootdown::emit::asm::render(&c, &opts);
                    let _ = shootdown::emit::stats::collect(&c);
                    if opts.style == Style::Plain {
                        let _ = shootdown::emit::listing::render(&c);
                    }
                }
                Err(d) => {
                    let _ = render(name, &src, &d);
                }
            }
        }
    }
}
