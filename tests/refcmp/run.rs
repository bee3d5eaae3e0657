//! Running a case under qemu-user and reading each side's events from the
//! harness log and qemu's instruction trace.

use super::*;

/// What one side of a case did, in execution order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Ev {
    /// A generated function starts (the caller's stores are before it).
    Entry,
    Access {
        store: bool,
        dev: usize,
        inst: u64,
        off: u64,
        width: u32,
        bytes: Vec<u8>,
    },
    Inval {
        op: String,
        ops: Vec<u64>,
    },
    Barrier(String),
    /// An access to normal memory behind a pointer argument (the
    /// harness logs those too: `lmem`); `ptr` is the argument's ordinal
    /// among the scenario's `Mem` arguments.
    NAccess {
        store: bool,
        ptr: usize,
        off: u64,
        width: u32,
        bytes: Vec<u8>,
    },
    /// A function returns.
    Ret,
}

#[derive(Clone, Debug, Default)]
pub struct Side {
    pub events: Vec<Ev>,
    /// The pc of each event (0 for entry and the reference's return).
    pub pcs: Vec<u64>,
    pub ret: i64,
    pub memory: BTreeMap<usize, Vec<u8>>,
    /// Instructions this side executed in its own code (qemu's exec log,
    /// one line per instruction under `-singlestep`): the generated
    /// function's section, or the kernel transcription's (gcc -O2). The
    /// harness's code around a call is in neither.
    pub insns: usize,
    /// Steps from an instruction of this side's code to an earlier one
    /// of it: a loop's trip back to its top, each behind a test the loop
    /// could not drop (issue 40's bound counts one per trip).
    pub back_edges: usize,
}

pub(super) fn num(s: &str) -> Result<u64, String> {
    u64::from_str_radix(s.trim_start_matches("0x"), 16).map_err(|_| format!("bad number `{s}`"))
}

pub(super) fn parse_hex(s: &str) -> Result<Vec<u8>, String> {
    if s == "-" {
        return Ok(Vec::new());
    }
    (0..s.len())
        .step_by(2)
        .map(|i| {
            s.get(i..i + 2)
                .and_then(|b| u8::from_str_radix(b, 16).ok())
                .ok_or_else(|| format!("bad hex `{s}`"))
        })
        .collect()
}

/// Reads qemu's exec log: the pcs executed in the logged sections, split
/// into calls at each execution of the marker.
pub(super) fn exec_calls(log: &str, exe: &Exe) -> Vec<Vec<u64>> {
    let mut calls: Vec<Vec<u64>> = Vec::new();
    for l in log.lines() {
        if !l.starts_with("Trace ") {
            continue;
        }
        let Some(pc) = l
            .split_once('[')
            .and_then(|(_, r)| r.split('/').nth(1))
            .and_then(|p| u64::from_str_radix(p, 16).ok())
        else {
            continue;
        };
        if pc == exe.mark {
            calls.push(Vec::new());
        } else if (exe.mark_range.0..exe.mark_range.1).contains(&pc) {
            continue;
        } else if let Some(c) = calls.last_mut() {
            c.push(pc);
        }
    }
    calls
}

/// One call's events: the harness lines (accesses with absolute pcs) laid
/// on the executed pcs.
pub(super) fn side(
    exe: &Exe,
    lines: &[&str],
    pcs: &[u64],
    generated: bool,
) -> Result<Side, String> {
    let t = exe.target;
    let mut logged: Vec<(u64, Ev)> = Vec::new();
    let mut s = Side::default();
    let mut ret = None;
    for line in lines {
        let f: Vec<&str> = line.split_whitespace().collect();
        match f.as_slice() {
            [kind @ ("store" | "load"), dev, inst, off, width, bytes, pc] => logged.push((
                num(pc)?,
                Ev::Access {
                    store: *kind == "store",
                    dev: num(dev)? as usize,
                    inst: num(inst)?,
                    off: num(off)?,
                    width: width.parse().map_err(|_| format!("bad width `{line}`"))?,
                    bytes: parse_hex(bytes)?,
                },
            )),
            [kind @ ("nstore" | "nload"), ptr, off, width, bytes, pc] => logged.push((
                num(pc)?,
                Ev::NAccess {
                    store: *kind == "nstore",
                    ptr: num(ptr)? as usize,
                    off: num(off)?,
                    width: width.parse().map_err(|_| format!("bad width `{line}`"))?,
                    bytes: parse_hex(bytes)?,
                },
            )),
            ["inval", pc, _word, ops @ ..] => {
                let pc = num(pc)?;
                let text = exe.insns.get(&pc).cloned().unwrap_or_default();
                let op = inval_key(&text);
                logged.push((
                    pc,
                    Ev::Inval {
                        op,
                        ops: ops.iter().map(|o| num(o)).collect::<Result<_, _>>()?,
                    },
                ));
            }
            ["mem", p, bytes] => {
                s.memory.insert(num(p)? as usize, parse_hex(bytes)?);
            }
            ["ret", v] => ret = Some(v.parse::<i64>().map_err(|_| format!("bad `{line}`"))?),
            _ => return Err(format!("unexpected harness line `{line}`")),
        }
    }
    s.ret = ret.ok_or("no `ret` line")?;
    let own = if generated { exe.gen } else { exe.refr };
    let mine = |pc: &u64| (own.0..own.1).contains(pc);
    s.insns = pcs.iter().filter(|pc| mine(pc)).count();
    s.back_edges = loop_trips(pcs, mine);
    let in_gen = |pc: u64| (exe.gen.0..exe.gen.1).contains(&pc);
    let mut k = 0;
    let mut need_entry = true;
    let mut prev: Option<u64> = None;
    for &pc in pcs {
        // x86-64: the harness single-steps a faulting access in place
        // (EFLAGS.TF), so qemu runs its pc twice in a row.
        if t == Target::X86_64 && prev == Some(pc) && k > 0 && logged[k - 1].0 == pc {
            prev = None;
            continue;
        }
        prev = Some(pc);
        if need_entry {
            s.events.push(Ev::Entry);
            s.pcs.push(0);
            need_entry = false;
        }
        if k < logged.len() && logged[k].0 == pc {
            s.events.push(logged[k].1.clone());
            s.pcs.push(pc);
            k += 1;
            continue;
        }
        let text = exe.insns.get(&pc).map(String::as_str).unwrap_or("");
        let ev = if let Some(b) = support::arch(t).barrier_of(exe.machine, text) {
            Ev::Barrier(b)
        } else if generated && in_gen(pc) && support::arch(t).is_return(text) {
            need_entry = true;
            Ev::Ret
        } else {
            continue;
        };
        s.events.push(ev);
        s.pcs.push(pc);
    }
    if k != logged.len() {
        return Err(format!(
            "{} of {} logged accesses not found in qemu's exec log (next at pc {:#x})",
            logged.len() - k,
            logged.len(),
            logged[k].0
        ));
    }
    if !generated {
        if need_entry {
            s.events.push(Ev::Entry);
            s.pcs.push(0);
        }
        s.events.push(Ev::Ret);
        s.pcs.push(0);
    }
    Ok(s)
}

/// The generated and the kernel side of a case, or why there are none.
pub type Sides = Result<(Side, Side), String>;

/// Both sides of every case.
pub struct Observed {
    pub cases: Vec<(Case, Sides)>,
    /// Every pc of the generated code that ran, in any case.
    pub executed: BTreeSet<u64>,
}

/// How long a harness may run, and how large its exec log may grow, before
/// it is taken for a hang: a mutant may loop forever, and qemu's
/// single-step log of a hang grows by tens of megabytes a second (half a
/// gigabyte per hung mutant filled CI's disk).
#[derive(Clone, Copy, Debug)]
pub struct Limit {
    pub time: Duration,
    pub log_bytes: u64,
}

impl Limit {
    /// For code believed correct: generous, only a guard.
    pub fn generous(time: Duration) -> Limit {
        Limit {
            time,
            log_bytes: 2 << 30,
        }
    }
}

/// Runs `cases` of `build` in one qemu process, within `limit`.
pub fn run(
    prog: &Program,
    exe: &Exe,
    build: &Build,
    cases: &[Case],
    limit: Limit,
) -> Result<Observed, String> {
    let input = harness_input(prog, build, cases);
    let (status, stdout, log) = run_harness(exe, &input, limit)?;
    let mut done: Vec<Vec<&str>> = Vec::new();
    let mut cur = Vec::new();
    for l in stdout.lines() {
        if l == "end" {
            done.push(std::mem::take(&mut cur));
        } else {
            cur.push(l);
        }
    }
    let calls = exec_calls(&log, exe);
    let crash = format!("harness exited with {status}: {}", cur.join("\n"));
    let mut out = Vec::new();
    for (i, k) in cases.iter().enumerate() {
        let r = match (done.get(2 * i), done.get(2 * i + 1)) {
            (Some(g), Some(r)) => {
                let pcs = |j: usize| calls.get(j).map(Vec::as_slice).unwrap_or(&[]);
                side(exe, g, pcs(2 * i), true)
                    .map_err(|e| format!("generated: {e}"))
                    .and_then(|g| {
                        side(exe, r, pcs(2 * i + 1), false)
                            .map(|r| (g, r))
                            .map_err(|e| format!("reference: {e}"))
                    })
            }
            _ if 2 * i + 1 >= done.len() && !status.success() => Err(crash.clone()),
            _ => Err("no result (the harness stopped earlier)".into()),
        };
        out.push((k.clone(), r));
    }
    let executed = calls
        .iter()
        .flatten()
        .copied()
        .filter(|pc| (exe.gen.0..exe.gen.1).contains(pc))
        .collect();
    Ok(Observed {
        cases: out,
        executed,
    })
}

/// The harness's standard input: per case the generated call's
/// directives, then the kernel's (or, outside its domain, a no-op).
fn harness_input(prog: &Program, build: &Build, cases: &[Case]) -> String {
    cases
        .iter()
        .flat_map(|k| {
            let sc = &build.scenarios[k.scenario];
            let kernel = if sc.inputs[k.input].outside.is_some() {
                2 * build.scenarios.len()
            } else {
                2 * k.scenario + 1
            };
            [
                directives(prog, sc, k, 2 * k.scenario),
                directives(prog, sc, k, kernel),
            ]
        })
        .collect()
}

/// The harness under qemu-user with its exec log, killed past `limit`:
/// its exit status, standard output and exec log.
fn run_harness(
    exe: &Exe,
    input: &str,
    limit: Limit,
) -> Result<(std::process::ExitStatus, String, String), String> {
    let stdin_path = exe.path.with_extension("in");
    std::fs::write(&stdin_path, input).unwrap();
    let log = exe.path.with_extension("log");
    let _ = std::fs::remove_file(&log);
    let filter = format!(
        "{:#x}..{:#x},{:#x}..{:#x},{:#x}..{:#x}",
        exe.gen.0,
        exe.gen.1 - 1,
        exe.refr.0,
        exe.refr.1 - 1,
        exe.mark_range.0,
        exe.mark_range.1 - 1
    );
    // qemu-user even on the host's architecture: its exec log is the count.
    let qemu = support::arch(exe.target).qemu;
    let out_path = exe.path.with_extension("out");
    let mut child = Command::new(qemu)
        .args([
            "-singlestep",
            "-d",
            "exec,nochain",
            "-dfilter",
            &filter,
            "-D",
        ])
        .arg(&log)
        .arg(&exe.path)
        .stdin(Stdio::from(std::fs::File::open(&stdin_path).unwrap()))
        .stdout(Stdio::from(std::fs::File::create(&out_path).unwrap()))
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| format!("cannot run {qemu} (install qemu-user): {e}"))?;
    let start = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if start.elapsed() > limit.time {
            let _ = child.kill();
            let _ = child.wait();
            return Err(format!(
                "the harness ran longer than {:?} (a hang)",
                limit.time
            ));
        }
        if std::fs::metadata(&log).map_or(0, |m| m.len()) > limit.log_bytes {
            let _ = child.kill();
            let _ = child.wait();
            let _ = std::fs::remove_file(&log);
            return Err(format!(
                "the exec log grew past {} bytes (a hang)",
                limit.log_bytes
            ));
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    let stdout = std::fs::read_to_string(&out_path).unwrap_or_default();
    let log = std::fs::read_to_string(&log).unwrap_or_default();
    Ok((status, stdout, log))
}

// -------------------------------------------------------------- compare

/// Trips back to a loop's top in a run of `pcs`: jumps backwards, within
/// the function (`mine`), to an instruction that already ran. A jump back
/// from out-of-line code to the join it skipped to (a path's own copy of
/// a block, a contended spin's return) is not a loop trip.
fn loop_trips(pcs: &[u64], mine: impl Fn(&u64) -> bool) -> usize {
    let mut ran = std::collections::HashSet::new();
    let mut trips = 0;
    for w in pcs.windows(2) {
        ran.insert(w[0]);
        if mine(&w[0]) && mine(&w[1]) && w[1] < w[0] && ran.contains(&w[1]) {
            trips += 1;
        }
    }
    trips
}
