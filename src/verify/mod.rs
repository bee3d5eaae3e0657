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
    // The meaning of the code under test: features fixed as `opts` says.
    let prog = codegen::resolve(&prog, opts).into_owned();
    let mut report = Report::default();
    for &t in targets {
        let c = codegen::compile(&prog, t, opts)?;
        let text = crate::emit::asm::render(&c, opts);
        asm_check::gnu_as(&c, &text, &mut report);
        asm_check::capstone(&c, &mut report);
        // A feature of another architecture's kernel is never set on
        // `t` (features::for_target): that is part of the meaning too.
        semantics(&crate::features::for_target(&prog, t), &c, &mut report);
    }
    Ok(report)
}

/// What a parameter is to the sequence, for choosing edge values.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Role {
    /// In the start of a `cover` or `range`.
    Start,
    /// In the size of a `cover` or `range` (and not in a start).
    Size,
    /// A run-time granule size of a `cover`.
    Granule,
    Other,
}

fn roles(prog: &Program, seq: &crate::ir::Seq) -> Vec<Role> {
    fn params(e: &crate::ir::Expr, out: &mut Vec<usize>) {
        use crate::ir::Expr;
        match e {
            Expr::Param(i) => out.push(*i),
            _ => e.children().into_iter().for_each(|c| params(c, out)),
        }
    }
    let mut r = vec![Role::Other; seq.params.len()];
    let (mut starts, mut sizes) = (Vec::new(), Vec::new());
    crate::ir::walk(&seq.body, &mut |s| match s {
        Stmt::Cover {
            set, start, size, ..
        } => {
            params(start, &mut starts);
            params(size, &mut sizes);
            for e in &prog.granules[*set].entries {
                if let crate::ir::GSize::Param(p) = &e.size {
                    if let Some(i) = seq.params.iter().position(|x| x == p) {
                        r[i] = Role::Granule;
                    }
                }
            }
        }
        Stmt::Range { start, size, .. } => {
            params(start, &mut starts);
            params(size, &mut sizes);
        }
        _ => {}
    });
    for i in sizes {
        if r[i] == Role::Other {
            r[i] = Role::Size;
        }
    }
    for i in starts {
        if r[i] != Role::Granule {
            r[i] = Role::Start;
        }
    }
    r
}

/// Bytes of normal memory each pointer parameter needs: up to its
/// highest element the sequence touches, at least 16.
fn memory_sizes(seq: &crate::ir::Seq) -> Vec<(usize, usize)> {
    use crate::ir::MemOp;
    let mut top: Vec<(usize, usize)> = seq
        .ptrs
        .iter()
        .enumerate()
        .filter(|(_, p)| p.is_some())
        .map(|(i, _)| (i, 16))
        .collect();
    crate::ir::walk(&seq.body, &mut |s| {
        if let Stmt::Mem { op, .. } = s {
            let (ptr, end) = match op {
                MemOp::Load { mem, .. }
                | MemOp::Store { mem, .. }
                | MemOp::Acquire { mem, .. }
                | MemOp::Release { mem, .. } => {
                    (mem.ptr, (mem.offset + u64::from(mem.width / 8)) as usize)
                }
                // A run-time offset may reach anywhere: a page of zeros
                // (the interpreter reports offsets past what it simulates).
                MemOp::LoadAt { ptr, .. }
                | MemOp::StoreAt { ptr, .. }
                | MemOp::Poll { ptr, .. } => (*ptr, 0x1000),
            };
            if let Some(t) = top.iter_mut().find(|(i, _)| *i == ptr) {
                t.1 = t.1.max(end);
            }
        }
    });
    top
}

/// Representative worlds for a sequence: instance counts 0, 1 and 3 for
/// run-time sets; two parameter vectors; polls that succeed after two busy
/// reads, and one run where every poll stays busy. Then the edges: every
/// parameter 0, 1 or all ones; a cover or range from 0x10000 of size
/// 2^64 - 1, from an unaligned start 0xedd below 2^64 of size 0x3000 (both
/// wrap past 2^64), and from an unaligned start 0x1234 of size 0x2345
/// (run-time granule sizes stay 4 KiB in those three). Edge worlds the
/// spec's meaning cannot run in 200,000 steps (a `range` over 2^64 bytes)
/// are left out.
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
    // Memory behind pointer parameters starts zeroed (a free lock: a lock
    // held by another owner would never be released in a single-threaded
    // run), as large as the sequence's highest offset.
    let memory = memory_sizes(seq);
    // Command queues the sequence drives: (queue, ring parameter, log2n
    // parameter). Their rings are 2 to 32 entries (2 fills at once, so the
    // full-ring wait runs), and in the worlds where polls succeed the
    // consumer is simulated (it takes every entry at the doorbell, after
    // checking each was written), not scripted.
    let queues: Vec<(&crate::ir::Queue, usize, usize)> = prog
        .queues
        .iter()
        .filter(|q| q.dev < prog.devices.len())
        .filter_map(|q| {
            let (ring, log2n) = interp::Consumer::params(seq, q)?;
            Some((q, ring, log2n))
        })
        .collect();
    let make = |params: &[u64], count: u64, ready: bool| {
        let mut params = params.to_vec();
        for &(_, _, l) in &queues {
            params[l] = 1 + params[l] % 5;
        }
        // Completion writes land in the memory the emulator gives PTR.
        for (i, j) in interp::Consumer::phys_params(seq) {
            params[i] = interp::ptr_base(j);
        }
        let mut w = World {
            params: params.clone(),
            ..World::default()
        };
        for &d in &dynamic {
            w.counts.insert(d, count);
        }
        for &(i, len) in &memory {
            w.memory.insert(i, vec![0; len]);
        }
        for (key, busy, r) in script(&params) {
            let reads = if ready {
                vec![busy, busy, r]
            } else {
                vec![busy]
            };
            w.reads.insert(key, reads);
        }
        if ready {
            for &(q, ring, l) in &queues {
                w.reads.remove(&(q.dev, q.cons));
                w.consumers
                    .push(interp::Consumer::new(prog, seq, q, ring, params[l]));
            }
        }
        w
    };
    let mut out = Vec::new();
    let counts: &[u64] = if dynamic.is_empty() { &[1] } else { &[0, 1, 3] };
    for &count in counts {
        for (pname, params) in [("ascending", &params_up), ("descending", &params_down)] {
            out.push((
                format!(
                    "{count} instance{}, {pname} parameters, polls ready on the third read",
                    if count == 1 { "" } else { "s" }
                ),
                make(params, count, true),
            ));
        }
    }
    if !polls.is_empty() {
        out.push((
            "2 instances, polls never ready".to_string(),
            make(&params_up, 2, false),
        ));
    }
    // Every combination of the features the sequence tests: each is a
    // CPU the code must be right for (the feature word is a parameter).
    if let Some(w) = seq.feature_word {
        let used = crate::features::used_features(seq);
        let count = if dynamic.is_empty() { 1 } else { 3 };
        for combo in 0..(1u64 << used.len()) {
            let mut params = params_up.clone();
            params[w] = used
                .iter()
                .enumerate()
                .filter(|(j, _)| combo >> j & 1 == 1)
                .fold(0, |acc, (_, &(i, _))| acc | 1 << i);
            let on: Vec<&str> = used
                .iter()
                .filter(|&&(i, _)| params[w] >> i & 1 == 1)
                .map(|&(i, _)| prog.features[i].name.as_str())
                .collect();
            out.push((
                format!(
                    "{count} instance{}, features {{{}}}",
                    if count == 1 { "" } else { "s" },
                    on.join(", ")
                ),
                make(&params, count, true),
            ));
        }
    }
    let roles = roles(prog, seq);
    let edge = |start: u64, size: u64| -> Vec<u64> {
        roles
            .iter()
            .zip(&params_up)
            .map(|(r, up)| match r {
                Role::Start => start,
                Role::Size => size,
                Role::Granule => 0x1000,
                Role::Other => *up,
            })
            .collect()
    };
    let edges = [
        ("every parameter 0".to_string(), vec![0; n as usize]),
        ("every parameter 1".to_string(), vec![1; n as usize]),
        (
            "every parameter all ones".to_string(),
            vec![u64::MAX; n as usize],
        ),
        (
            "start 0x10000, size 2^64 - 1 (wraps)".to_string(),
            edge(0x1_0000, u64::MAX),
        ),
        (
            "start 2^64 - 0xedd, size 0x3000 (wraps)".to_string(),
            edge(0u64.wrapping_sub(0xedd), 0x3000),
        ),
        (
            "unaligned start 0x1234, size 0x2345".to_string(),
            edge(0x1234, 0x2345),
        ),
    ];
    let count = if dynamic.is_empty() { 1 } else { 3 };
    for (name, params) in edges {
        if out.iter().any(|(_, w)| w.params == params) {
            continue;
        }
        let w = make(&params, count, true);
        if interp::run_bounded(prog, seq, &w, 200_000).is_ok() {
            out.push((
                format!(
                    "{count} instance{}, {name}",
                    if count == 1 { "" } else { "s" }
                ),
                w,
            ));
        }
    }
    // Branch arms: parameters drawn (deterministically) from the values the
    // conditions compare against, one either side of each, and small
    // numbers, so both arms of most conditions are among the worlds.
    let mut pool: Vec<u64> = vec![0, 1, 2];
    let mut ifs = 0;
    crate::ir::walk(&seq.body, &mut |s| {
        if let Stmt::If { cond, .. } | Stmt::While { cond, .. } = s {
            ifs += 1;
            compared_constants(&cond.a, &mut pool);
            compared_constants(&cond.b, &mut pool);
            for e in [&cond.a, &cond.b] {
                if let Some(c) = e.as_const() {
                    pool.extend([c.wrapping_sub(1), c, c.wrapping_add(1)]);
                }
            }
        }
    });
    pool.sort_unstable();
    pool.dedup();
    // Coverage-guided: of up to 1024 candidate parameter vectors, keep
    // (at most 16) those whose interpretation reaches an arm no kept world
    // reached.
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    let mut reached = std::collections::BTreeSet::new();
    let mut kept = 0;
    for _ in 0..if ifs > 0 && n > 0 { 1024 } else { 0 } {
        if kept == 16 || reached.len() == 2 * ifs {
            break;
        }
        let params: Vec<u64> = (0..n)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                pool[(x % pool.len() as u64) as usize]
            })
            .collect();
        let w = make(&params, 1, true);
        let Ok(o) = interp::run_bounded(prog, seq, &w, 100_000) else {
            continue;
        };
        if o.arms.is_subset(&reached) {
            continue;
        }
        reached.extend(o.arms);
        kept += 1;
        out.push((format!("branch probe: parameters {params:x?}"), w));
    }
    out
}

/// Constants compared with something in `e` (and one either side).
fn compared_constants(e: &crate::ir::Expr, out: &mut Vec<u64>) {
    use crate::ir::Expr;
    match e {
        Expr::Cmp(_, a, b) => {
            for x in [a, b] {
                if let Some(c) = x.as_const() {
                    out.extend([c.wrapping_sub(1), c, c.wrapping_add(1)]);
                }
                compared_constants(x, out);
            }
        }
        _ => e
            .children()
            .into_iter()
            .for_each(|c| compared_constants(c, out)),
    }
}

#[cfg(feature = "emu")]
fn semantics(prog: &Program, c: &codegen::Compiled, report: &mut Report) {
    for (i, seq) in c.opt.seqs.iter().enumerate() {
        let mut arms = std::collections::BTreeSet::new();
        for (wname, mut w) in worlds(prog, i) {
            w.big_endian = c.target.big_endian();
            let what = format!("{} {} ({wname})", c.target, seq.name);
            let expect = match interp::run_bounded(prog, &prog.seqs[i], &w, 5_000_000) {
                Ok(o) => {
                    arms.extend(o.arms.iter().copied());
                    o
                }
                // The spec itself rings a doorbell over an unwritten entry.
                Err(e @ interp::InterpError::IncompleteEntry { .. }) => {
                    report.failures.push(format!("{what}: {e}"));
                    continue;
                }
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

/// Report which arms of the spec's `if`s the worlds reached: a reached arm
/// was checked against the spec, an unreached one was not (a skip, not a
/// failure: some conditions need arguments no generic world has).
#[cfg(feature = "emu")]
fn arm_coverage(
    prog: &Program,
    i: usize,
    taken: &std::collections::BTreeSet<(usize, bool)>,
    what: &str,
    report: &mut Report,
) {
    let mut ifs = Vec::new();
    crate::ir::walk(&prog.seqs[i].body, &mut |s| {
        if matches!(s, Stmt::If { .. } | Stmt::While { .. }) {
            ifs.push((s as *const Stmt as usize, matches!(s, Stmt::While { .. })));
        }
    });
    if ifs.is_empty() {
        return;
    }
    let mut missed = Vec::new();
    for (n, &(at, is_while)) in ifs.iter().enumerate() {
        // A `while` records `true` for a loop never entered, `false` for
        // every other test of its condition.
        let (kw, arms) = if is_while {
            ("while", [(true, "zero-trip"), (false, "entered")])
        } else {
            ("if", [(true, "then"), (false, "else")])
        };
        for (arm, name) in arms {
            if !taken.contains(&(at, arm)) {
                missed.push(format!("`{kw}` #{} {name} arm", n + 1));
            }
        }
    }
    let total = 2 * ifs.len();
    if missed.is_empty() {
        report
            .passed
            .push(format!("{what}: the worlds reach all {total} branch arms"));
    } else {
        report.skipped.push(format!(
            "{what}: {} of {total} branch arms never reached by the worlds: {}",
            missed.len(),
            missed.join(", ")
        ));
    }
}

#[cfg(not(feature = "emu"))]
fn semantics(_prog: &Program, c: &codegen::Compiled, report: &mut Report) {
    report.skipped.push(format!(
        "{}: emulator checks (built without the `emu` feature)",
        c.target
    ));
}
