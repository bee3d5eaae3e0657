//! Compiling an example for a target and the cases each build runs.

use super::*;

/// Compiles `prog` for `t` with the build's pins.
pub fn compile(prog: &Program, t: Target, pins: &[(&'static str, u64)]) -> (Compiled, Options) {
    let mut opts = support::options("all");
    opts.cover.pins = pins.iter().map(|(n, v)| (n.to_string(), *v)).collect();
    let c = shootdown::compile(prog, t, &opts).unwrap_or_else(|d| panic!("{t}: {}", d.message));
    (c, opts)
}

/// The cases of a build. `never`: only the runs whose polls never get
/// ready (for the build with poll limits lowered to 4); else each input at
/// each instance count (0, 1, 3, 6 for run-time sets) with polls ready at
/// once and, where something polls, ready on the third read (at 3
/// instances of run-time sets).
pub fn cases(prog: &Program, build: &Build, never: bool) -> Vec<Case> {
    let mut out = Vec::new();
    for (si, sc) in build.scenarios.iter().enumerate() {
        let dynamic = scenario_devices(prog, sc)
            .iter()
            .any(|&d| matches!(prog.devices[d].instances, Instances::Dynamic { .. }));
        let counts: &[u64] = if dynamic { &[0, 1, 3, 6] } else { &[1] };
        let busy_count = if dynamic { 3 } else { 1 };
        let polls = polls(prog, sc);
        for ii in 0..sc.inputs.len() {
            let case = |count, poll| Case {
                scenario: si,
                input: ii,
                count,
                poll,
            };
            if never {
                if polls {
                    out.push(case(busy_count, Poll::Never));
                }
                continue;
            }
            for &count in counts {
                out.push(case(count, Poll::Early));
            }
            if polls {
                out.push(case(busy_count, Poll::Late));
            }
        }
    }
    out
}

/// The spec with every poll limit lowered to 4 (as tests/store_log does):
/// a never-ready poll then costs 4 logged reads, not up to a million.
pub fn lower_poll_limits(src: &str) -> String {
    src.lines()
        .map(|l| match (l.contains("poll "), l.find("limit ")) {
            (true, Some(at)) => {
                let rest = &l[at + 6..];
                let digits =
                    rest.len() - rest.trim_start_matches(|c: char| c.is_ascii_digit()).len();
                format!("{}limit 4{}", &l[..at], &rest[digits..])
            }
            _ => l.to_string(),
        })
        .collect::<Vec<_>>()
        .join("\n")
}

pub const LOW_LIMIT: u64 = 4;
/// The reference's poll bound in builds whose polls never time out: far
/// beyond any read count a case makes.
pub const HIGH_LIMIT: u64 = 1 << 40;
