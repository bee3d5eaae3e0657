//! `shootdown verify`: every claim about the output checked against
//! something we did not write: GNU `as` (bytes), capstone (decoding), and
//! the unicorn emulator (what the code does), with the IR interpreter as
//! the meaning of the spec.

pub mod asm_check;
pub mod interp;
#[cfg(feature = "emu")]
pub mod order_check;
#[cfg(feature = "emu")]
pub mod trace;

use crate::codegen::{self, Options};
use crate::ir::{Instances, PollOp, Program, Stmt};
use crate::spec::diag::Diag;
use crate::target::Target;
use interp::World;

#[derive(Default, Debug)]
pub struct Report {
    /// What was checked and passed.
    pub passed: Vec<String>,
    pub failures: Vec<String>,
    /// Checks that could not run here, and why.
    pub skipped: Vec<String>,
}

impl Report {
    pub fn ok(&self) -> bool {
        self.failures.is_empty()
    }
}

/// Verify one spec for the given targets.
pub fn verify(name: &str, src: &str, targets: &[Target], opts: &Options) -> Result<Report, Diag> {
    let prog = codegen::load(name, src)?;
    let mut report = Report::default();
    for &t in targets {
        let c = codegen::compile(&prog, t, opts)?;
        let text = crate::emit::asm::render(&c, opts);
        asm_check::gnu_as(&c, &text, &mut report);
        asm_check::capstone(&c, &mut report);
        semantics(&prog, &c, &mut report);
    }
    Ok(report)
}

/// Representative worlds for a sequence: instance counts 0, 1 and 3 for
/// run-time sets; two parameter vectors; polls that succeed after two busy
/// reads, and one run where every poll stays busy.
pub fn worlds(prog: &Program, seq_index: usize) -> Vec<(String, World)> {
    let seq = &prog.seqs[seq_index];
    let dynamic: Vec<usize> = seq
        .devices
        .iter()
        .copied()
        .filter(|&d| matches!(prog.devices[d].instances, Instances::Dynamic { .. }))
        .collect();
    let n = seq.params.len() as u64;
    let params_up: Vec<u64> = (0..n).map(|i| (i + 1) << 12).collect();
    let params_down: Vec<u64> = (0..n)
        .map(|i| ((n - i) << 12) | 0x0123_0000_0000_0000)
        .collect();
    let mut polls = Vec::new();
    crate::ir::walk(&seq.body, &mut |s| {
        if let Stmt::Poll {
            access,
            mask,
            op,
            value,
            ..
        } = s
        {
            polls.push(((access.dev, access.reg), *mask, *op, value.clone()));
        }
    });
    // The busy and the ready register value of each poll under `params`
    // (a run-time right-hand side depends on them).
    let script = |params: &[u64]| -> Vec<((usize, usize), u64, u64)> {
        polls
            .iter()
            .map(|(key, mask, op, value)| {
                let v = value.eval(params);
                let low = mask & mask.wrapping_neg();
                let (busy, ready) = match op {
                    PollOp::Eq => (v ^ low, v),
                    PollOp::Ne => (v, v ^ low),
                };
                (*key, busy, ready)
            })
            .collect()
    };
    let mut out = Vec::new();
    let counts: &[u64] = if dynamic.is_empty() { &[1] } else { &[0, 1, 3] };
    for &count in counts {
        for (pname, params) in [("ascending", &params_up), ("descending", &params_down)] {
            let mut w = World {
                params: params.clone(),
                ..World::default()
            };
            for &d in &dynamic {
                w.counts.insert(d, count);
            }
            // Memory behind pointer parameters starts zeroed (a free lock:
            // a lock held by another owner would never be released in a
            // single-threaded run).
            for (i, p) in seq.ptrs.iter().enumerate() {
                if p.is_some() {
                    w.memory.insert(i, vec![0; 16]);
                }
            }
            for (key, busy, ready) in script(params) {
                w.reads.insert(key, vec![busy, busy, ready]);
            }
            out.push((
                format!(
                    "{count} instance{}, {pname} parameters, polls ready on the third read",
                    if count == 1 { "" } else { "s" }
                ),
                w,
            ));
        }
    }
    if !polls.is_empty() {
        let mut w = World {
            params: params_up.clone(),
            ..World::default()
        };
        for &d in &dynamic {
            w.counts.insert(d, 2);
        }
        for (key, busy, _) in script(&params_up) {
            w.reads.insert(key, vec![busy]);
        }
        out.push(("2 instances, polls never ready".to_string(), w));
    }
    out
}

#[cfg(feature = "emu")]
fn semantics(prog: &Program, c: &codegen::Compiled, report: &mut Report) {
    for (i, seq) in c.opt.seqs.iter().enumerate() {
        for (wname, mut w) in worlds(prog, i) {
            w.big_endian = c.target.big_endian();
            let what = format!("{} {} ({wname})", c.target, seq.name);
            let expect = match interp::run_bounded(prog, &prog.seqs[i], &w, 5_000_000) {
                Ok(o) => o,
                Err(e) => {
                    report.skipped.push(format!("{what}: {e}"));
                    continue;
                }
            };
            let trace = match trace::run(prog, c, i, &w, 50_000_000) {
                Ok(t) => t,
                Err(e) => {
                    report
                        .failures
                        .push(format!("{what}: emulation failed: {e}"));
                    continue;
                }
            };
            let before = report.failures.len();
            order_check::same_effects(&what, &expect, &trace, report);
            order_check::edges_crossed(&what, prog, &c.opt.seqs[i], c.target, &trace, report);
            if report.failures.len() == before {
                report.passed.push(format!(
                    "{what}: same accesses and return ({}) as the spec, every required ordering crossed by a barrier",
                    trace.ret
                ));
            }
        }
    }
}

#[cfg(not(feature = "emu"))]
fn semantics(_prog: &Program, c: &codegen::Compiled, report: &mut Report) {
    report.skipped.push(format!(
        "{}: emulator checks (built without the `emu` feature)",
        c.target
    ));
}
