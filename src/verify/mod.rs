//! `shootdown verify`: every claim about the output checked against
//! something we did not write: GNU `as` (bytes), capstone (decoding), and
//! the unicorn emulator (what the code does), with the IR interpreter as
//! the meaning of the spec.

pub mod asm_check;
pub mod interp;
#[cfg(feature = "emu")]
pub mod order_check;
pub mod order_proof;
#[cfg(feature = "emu")]
pub mod trace;
mod worlds;

use crate::codegen::{self, Options};
use crate::ir::Program;
#[cfg(feature = "emu")]
use crate::ir::Stmt;
use crate::isa::Target;
use crate::spec::diag::Diag;
pub use worlds::worlds;

#[derive(Default, Debug)]
pub struct Report {
    /// What was checked and passed.
    pub passed: Vec<String>,
    pub failures: Vec<String>,
    /// Checks that could not run here, and why (a tool not installed).
    pub skipped: Vec<String>,
    /// Code the worlds did not run: branch arms, `while` limit exits and
    /// whole worlds too long to interpret. The static proof still covers
    /// their orderings, but not their meaning: `verify` fails on these
    /// unless the user allows them (`--allow-unreached`).
    pub unreached: Vec<String>,
}

impl Report {
    pub fn ok(&self) -> bool {
        self.failures.is_empty()
    }

    /// The check `what` failed, as `detail` says.
    pub fn fail(&mut self, what: &str, detail: impl std::fmt::Display) {
        self.failures.push(format!("{what}: {detail}"));
    }
}

/// Verify one spec for the given targets.
pub fn verify(name: &str, src: &str, targets: &[Target], opts: &Options) -> Result<Report, Diag> {
    let prog = codegen::load(name, src)?;
    // The meaning of the code under test: features fixed as `opts` says.
    let prog = codegen::resolve(&prog, opts).into_owned();
    verify_program(&prog, targets, opts)
}

/// [`verify`] of a checked program with its features resolved (`verify
/// --seq` passes one with a single sequence).
pub fn verify_program(prog: &Program, targets: &[Target], opts: &Options) -> Result<Report, Diag> {
    let mut report = Report::default();
    for &t in targets {
        let c = codegen::compile(prog, t, opts)?;
        let text = crate::emit::asm::render(&c, opts);
        asm_check::gnu_as(&c, &text, &mut report);
        asm_check::capstone(&c, &mut report);
        static_order(&c, &mut report);
        // A feature of another architecture's kernel is never set on
        // `t` (features::for_target): that is part of the meaning too.
        semantics(
            &crate::features::for_target(prog, t),
            &c,
            &opts.cover,
            &mut report,
        );
    }
    Ok(report)
}

/// The static proof: every required ordering on every path of the
/// machine code (see [`order_proof`]).
fn static_order(c: &codegen::Compiled, report: &mut Report) {
    let what = format!("{}: static ordering proof", c.target);
    match order_proof::prove(&c.opt, c) {
        Ok(v) if v.is_empty() => report.passed.push(format!(
            "{what}: every required ordering holds on every path of {} functions",
            c.funcs.len()
        )),
        Ok(v) => report
            .failures
            .extend(v.iter().map(|v| format!("{what}: {v}"))),
        Err(e) => report.fail(&what, e),
    }
}

#[cfg(feature = "emu")]
fn semantics(
    prog: &Program,
    c: &codegen::Compiled,
    cover: &crate::passes::cover::CoverConfig,
    report: &mut Report,
) {
    for (i, seq) in c.opt.seqs.iter().enumerate() {
        let mut arms = std::collections::BTreeSet::new();
        for (wname, mut w) in worlds(prog, i) {
            w.big_endian = c.target.big_endian();
            // The meaning with the thresholds and mode the code was
            // compiled with (`verify --set`, `--mode`).
            w.cover = cover.clone();
            let what = format!("{} {} ({wname})", c.target, seq.name);
            let expect = match interp::run_bounded(prog, &prog.seqs[i], &w, 5_000_000) {
                Ok(o) => {
                    arms.extend(o.arms.iter().copied());
                    o
                }
                // The spec itself rings a doorbell over an unwritten entry.
                Err(e @ interp::InterpError::IncompleteEntry { .. }) => {
                    report.fail(&what, e);
                    continue;
                }
                Err(e) => {
                    report.unreached.push(format!("{what}: world not run: {e}"));
                    continue;
                }
            };
            let trace = match trace::run(prog, c, i, &w, 50_000_000) {
                Ok(t) => t,
                Err(e) => {
                    report.fail(&what, format_args!("emulation failed: {e}"));
                    continue;
                }
            };
            let before = report.failures.len();
            for cv in expect.covers.iter().filter(|c| c.short) {
                report.failures.push(format!(
                    "{what}: cover with `{}` invalidates less than the {:#x} bytes it was asked",
                    prog.granules[cv.set].name, cv.requested
                ));
            }
            order_check::same_effects(&what, &expect, &trace, report);
            order_check::edges_crossed(&what, prog, &c.opt.seqs[i], c.target, &trace, report);
            if report.failures.len() == before {
                report.passed.push(format!(
                    "{what}: same accesses and return ({}) as the spec, every required ordering crossed by a barrier",
                    trace.ret
                ));
            }
        }
        arm_coverage(
            prog,
            i,
            &arms,
            &format!("{} {}", c.target, seq.name),
            report,
        );
    }
}

/// Report which arms of the spec's `if`s and `while`s the worlds reached:
/// a reached arm was checked against the spec, an unreached one was not.
/// Unreached arms are named by spec line (an `if` a pass made, by its
/// number).
#[cfg(feature = "emu")]
fn arm_coverage(
    prog: &Program,
    i: usize,
    taken: &std::collections::BTreeSet<(usize, u8)>,
    what: &str,
    report: &mut Report,
) {
    use interp::{ARM_ELSE, ARM_ENTERED, ARM_LIMIT, ARM_THEN, ARM_ZERO_TRIP};
    // The statements with arms: (address, keyword, arms, span).
    type Arms = &'static [(u8, &'static str)];
    const IF: Arms = &[(ARM_THEN, "then"), (ARM_ELSE, "else")];
    const WHILE: Arms = &[
        (ARM_ZERO_TRIP, "zero-trip"),
        (ARM_ENTERED, "entered"),
        (ARM_LIMIT, "limit exit"),
    ];
    const POLL: Arms = &[(ARM_LIMIT, "failure exit")];
    let mut stmts = Vec::new();
    let seq = &prog.seqs[i];
    // An `if` an `assume` decides has one arm no call can reach.
    let known = crate::ir::facts::params_known(seq.params.len(), &seq.assumes).ok();
    crate::ir::walk(&seq.body, &mut |s| {
        let at = s as *const Stmt as usize;
        match s {
            Stmt::If { cond, span, .. } => {
                match known
                    .as_ref()
                    .and_then(|k| crate::ir::facts::decide(cond, k))
                {
                    Some(true) => stmts.push((at, "if", &IF[..1], *span)),
                    Some(false) => stmts.push((at, "if", &IF[1..], *span)),
                    None => stmts.push((at, "if", IF, *span)),
                }
            }
            Stmt::While { span, .. } => stmts.push((at, "while", WHILE, Some(*span))),
            Stmt::Poll { access, .. } => stmts.push((at, "poll", POLL, Some(access.span))),
            _ => {}
        }
    });
    if stmts.is_empty() {
        return;
    }
    let mut missed = Vec::new();
    let mut total = 0;
    for (n, &(at, kw, arms, span)) in stmts.iter().enumerate() {
        let place = match span {
            Some(s) => format!("line {}", prog.line_of(s)),
            None => format!("#{} (made by a pass)", n + 1),
        };
        for &(arm, name) in arms {
            total += 1;
            if !taken.contains(&(at, arm)) {
                missed.push(format!("`{kw}` at {place}: {name}"));
            }
        }
    }
    if missed.is_empty() {
        report
            .passed
            .push(format!("{what}: the worlds reach all {total} branch arms"));
    } else {
        report.unreached.push(format!(
            "{what}: {} of {total} branch arms never reached by the worlds: {}",
            missed.len(),
            missed.join(", ")
        ));
    }
}

#[cfg(not(feature = "emu"))]
fn semantics(
    _prog: &Program,
    c: &codegen::Compiled,
    _cover: &crate::passes::cover::CoverConfig,
    report: &mut Report,
) {
    report.skipped.push(format!(
        "{}: emulator checks (built without the `emu` feature)",
        c.target
    ));
}
